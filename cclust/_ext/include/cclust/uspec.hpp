// U-SPEC's approximate K nearest representatives (Huang, Wang, Wu, Lai & Kwoh 2020, sec. 3.1.2)
// and the transfer of eigenvectors to the objects (Li, Wu & Chang 2012).
//
// Every object is handled on its own, so the result is bitwise the same for any thread count.
#pragma once

#include <cstdint>

namespace cclust {

// Coarse to fine, per object x (row of X, n x d, row-major):
//   1. the nearest rep-cluster centre c (centres: z x d);
//   2. the nearest representative l among the members of c (members[member_start[c] ..
//      member_start[c + 1]), representative indices into R, p x d);
//   3. the k nearest among the `width` candidates neighborhood[l * width ..] (l itself first).
// Distances are sums of squared differences in feature order; ties go to the lower centre index
// (step 1), the earlier member (step 2) and the lower representative index (step 3).
// Writes neighbors (n x k, nearest first) and their Euclidean distances (n x k).
void nearest_representatives(const double* X, int64_t n, int64_t d,
                             const double* R, int64_t p,
                             const double* centres, int64_t z,
                             const int64_t* member_start, const int64_t* members,
                             const int64_t* neighborhood, int64_t width, int64_t k,
                             int64_t* neighbors,  // OUT n x k
                             double* distances,   // OUT n x k
                             int n_threads);

// The transfer cut's column-side sums of the CSR rows (indptr, indices, values) of a bipartite
// graph with p columns, added to W (p x p, row-major) and col_degree (p) one row after the other,
// in row order: row x, of degree d_x (the sum of its values, 1e-10 when 0, written to
// row_degree[x]), adds (v_a s_x) v_b to W[a, b] and v_a to col_degree[a], with s_x = 1 / d_x,
// or row_scale[x] when row_scale is not null. Calling it on
// consecutive row blocks, each continuing the previous call's sums, gives the same floats as one
// call on all rows, however the rows are split (one thread; the work is O(nnz^2 / n)).
void cross_sums(const int64_t* indptr, const int64_t* indices, const double* values,
                const double* row_scale,  // IN n_rows, or null
                int64_t n_rows, int64_t p,
                double* W,           // IN/OUT p x p
                double* col_degree,  // IN/OUT p
                double* row_degree);  // OUT n_rows

}  // namespace cclust
