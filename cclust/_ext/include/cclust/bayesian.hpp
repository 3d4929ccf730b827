// The variational E-step of Bayesian cluster ensembles (Wang, Shan & Banerjee 2009, 2011) over
// distinct label rows. Pure C++: no Python.h.
#pragma once

#include <cstdint>

namespace cclust {

struct BceEStep {
    double log_z;       // sum_x count_x sum_j times_j log Z_xj over observed labels
    int64_t n_updates;  // the largest number of gamma updates any row needed
};

// psi(x) for x > 0 (recurrence up to x >= 10, then the asymptotic series).
double digamma(double x);

// Iterates, for every row x independently, gamma_x <- alpha + E_x * sum_j beta[slot_xj] times_j / Z_xj
// with E_xk = exp(psi(gamma_xk) - psi(sum_k gamma_xk)) and Z_xj = sum_k E_xk beta[slot_xj, k],
// until sum_k |new - old| < tol * sum_k new (the update that passes the test is kept) or max_iter
// updates; then adds the row's expected label counts for the final gamma.
//
//   labels       IN    m x r label codes of label_bytes each (lookup.hpp's label_code: int32
//                      with -1, or uint16 / uint8 with the type's largest value, for missing),
//                      read in place; label l of partition j is beta's row offsets[j] + l
//   offsets      IN    r + 1, offsets[r] = W
//   counts       IN    m, multiplicity of each row
//   times        IN    r, how many times each partition's label counts
//   alpha        IN    K
//   beta         IN    W x K, row-major
//   gamma        INOUT m x K, the start on entry, the final gamma on return
//   label_counts OUT   W x K, sum_x count_x times_j E_xk / Z_xj over the labels of slot s (zeroed here)
//
// Rows are cut into fixed chunks whose partial counts and log Z are added in chunk order, so the
// result is bitwise the same for any n_threads.
// A label outside 0..K_j - 1 (K_j = offsets[j + 1] - offsets[j]) throws std::invalid_argument.
BceEStep bce_e_step(const void* labels, int32_t label_bytes, const int64_t* offsets, int64_t m, int64_t r,
                    const double* counts, const double* times, const double* alpha, int32_t K, const double* beta,
                    double* gamma, double tol, int64_t max_iter, double* label_counts, int n_threads);

}  // namespace cclust
