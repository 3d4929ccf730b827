// Sums of pairwise Euclidean distances among the rows of a dense matrix (the gap statistic's
// within-cluster dispersion W_K, Tibshirani, Walther & Hastie 2001), with no m x m array.
#pragma once

#include <cstdint>

namespace cclust {

// sum over i < j of ||x_i - x_j||^power, each unordered pair once. X is m x d, row-major. The
// sum is taken row by row (row i's pairs with the rows after it) and the row sums are added in
// row order, so the result is bitwise the same for any number of threads.
double pair_distance_sum(const double* X, int64_t m, int64_t d, double power, int n_threads);

}  // namespace cclust
