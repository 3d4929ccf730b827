// Sums of pairwise Euclidean distances among the rows of a dense matrix (the gap statistic's
// within-cluster dispersion W_K, Tibshirani, Walther & Hastie 2001), with no m x m array.
#pragma once

#include <cstdint>

namespace cclust {

// sum over i < j of ||x_i - x_j||^power, each unordered pair once. X is m x d, row-major. The
// sum is taken row by row (row i's pairs with the rows after it) and the row sums are added in
// row order, so the result is bitwise the same for any number of threads.
double pair_distance_sum(const double* X, int64_t m, int64_t d, double power, int n_threads);

// The number of pairs i < j whose consensus entry lies in (low, high], from the resampling
// labels alone (Monti et al. 2003's consensus matrix, ConsensusClusterPlus's PAC): L is n x H,
// row-major, L[i * H + h] the cluster of object i in resample h or -1 where it was not drawn.
// The entry of a pair is together / sampled (the resamples that drew both, and of them those
// that put both in one cluster) as a double, 0 when no resample drew both; with no n x n array.
// An integer count, so the same for any number of threads.
int64_t consensus_pairs_in(const int32_t* L, int64_t n, int64_t H, double low, double high, int n_threads);

// Each row's nearest centre (labels[i] in 0..k-1), exactly as the k-means engine's assignment
// decides it: the lowest cost sum over features, in order, of (x_j - c_j)^2, the lowest index
// among equal costs. X is n x d and centres k x d, row-major. The centres are ranked by
// ||c||^2 - 2 x.c, accumulated feature by feature for all centres at once (several times fewer
// operations than the sums of squares), and a row whose second-best centre lies within those
// sums' rounding of the best is decided on the engine's sums of squares over every centre. Each
// row alone, so the same for any number of threads. The ranking sums are computed in vectors of
// the instruction set `variant` names (0 baseline, 1 AVX2, 2 AVX-512, as kmeans.hpp's
// SimdVariant; -1: CCLUST_KMEANS_SIMD or the widest the CPU has; one the CPU lacks falls back
// to a narrower one), the same bits in each, so the labels never depend on it.
void nearest_centres(const double* X, int64_t n, int64_t d, const double* centres, int64_t k,
                     int32_t* labels, int n_threads, int variant = -1);

}  // namespace cclust
