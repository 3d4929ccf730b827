// The cluster and object similarities of WEAC and GP-MGLA (Huang, Lai & Wang 2015). Pure C++: no
// Python.h.
#pragma once

#include <cstdint>

namespace cclust {

// SACT before normalisation: out[a, b] = sum_k w[k] min(J[k, a], J[k, b]) over the clusters k
// linked to both, k ascending. J is a symmetric sparse matrix in CSR form with sorted column
// indices (the Jaccard similarity with 1 on the diagonal), so row a's links are the k to visit.
//
//   indptr, indices, data  IN   CSR of J (n_c rows)
//   weight                 IN   n_c, the crowd weight of each cluster's partition
//   out                    OUT  n_c x n_c, overwritten
//
// One row per task; every entry adds its terms in ascending k, the order of a loop over k, so
// the result is the same for any n_threads.
void sact_sums(const int64_t* indptr, const int32_t* indices, const double* data, int64_t n_c,
               const double* weight, double* out, int n_threads);

// The weighted co-association of m label rows: out[x, y] = sum_j share[j] [L[x, j] == L[y, j]],
// partitions added in order j = 0..r-1, where row x is row rows[x] of the stored label codes.
//
//   labels       IN   n x r codes of `label_bytes` bytes (4: int32, -1 missing; 2 / 1: uint16 /
//                     uint8, the largest value missing), row-major, read in place; complete: a
//                     missing or out-of-range label of a row read throws std::invalid_argument
//   rows         IN   m row numbers in 0..n-1
//   sizes        IN   r, clusters per partition
//   share        IN   r
//   out          OUT  m x m, overwritten
void weighted_coassociation_rows(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                                 const int64_t* rows, int64_t m, const int64_t* sizes, const double* share,
                                 double* out, int n_threads);

}  // namespace cclust
