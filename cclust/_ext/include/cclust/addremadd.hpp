// Least-squares consensus cores (Mirkin & Shestakov).
//
// * AddRemAdd(j) (Mirkin & Shestakov, sec. 3.1): one-cluster extraction on a dense similarity A with the
//   incremental updates of the summed similarities s_i = sum_{j in S, j != i} a_ij. The cluster
//   criterion is the additive-clustering contribution f(S) = lambda |S|, lambda the average
//   off-diagonal similarity within S (f = 0 for a singleton); each step toggles the object whose
//   membership change increases f most (adding i increases f by exactly 2 a(i, S) - lambda,
//   the paper's "a(i, S) > lambda / 2" rule), and stops when no toggle increases f by more
//   than `tol`.
// * The ensemble-consensus partition: AddRemAdd from every remaining object (in parallel over
//   seeds, reduced deterministically: largest f, ties to the lowest seed), the winning
//   cluster removed, repeated until no object is left. When every running sum is exact in
//   float64 and the matrix is symmetric, objects with identical rows are run as groups: an
//   object's sum then depends only on its group and membership, so the decisions (ties to
//   the lowest object included) are those of the object-by-object run at O(groups) per step.
// * The combined-consensus agglomeration (Mirkin & Shestakov, sec. 3.2): greedy merging of the pair of
//   clusters with the largest summed gain; each cluster keeps its best partner among the later
//   clusters, with sum-of-parts updates.
//
// Every output is caller-allocated. Results are bitwise identical for any thread count.
#pragma once

#include <cstdint>

namespace cclust {

// One AddRemAdd(seed) run on the dense row-major n x n similarity (diagonal ignored).
//   similarity  IN   n * n floats, row-major (symmetry is assumed, not checked)
//   membership  OUT  n bytes, 1 for members of the cluster S(seed)
//   trace       OUT  up to max_trace values of f after each step (f of the seed first); may be
//                    null when max_trace == 0
// Returns the number of toggles; *contribution and *lambda receive f(S) and lambda.
int64_t addremadd_cluster(const float* similarity, int64_t n, int64_t seed, double tol,
                          int64_t max_steps, uint8_t* membership, double* contribution,
                          double* lambda, double* trace, int64_t max_trace,
                          int64_t* n_trace);

// The ensemble-consensus partition by repeated AddRemAdd extraction.
//   labels         OUT  n ints, cluster k is the k-th extracted cluster
//   contributions  OUT  n doubles, f of cluster k in slot k (first *n_clusters used)
//   lambdas        OUT  n doubles, lambda of cluster k
//   seeds          OUT  n int64, the seed object whose run gave cluster k
// Returns the number of clusters; *n_updates receives the number of similarity-row updates
// done (one per toggled object per element of the row).
int64_t addremadd_partition(const float* similarity, int64_t n, double tol, int64_t max_steps,
                            int n_threads, int32_t* labels, double* contributions,
                            double* lambdas, int64_t* seeds, int64_t* n_updates);

// The extraction on a G x G similarity of groups of identical rows (group_of: n entries in
// 0..G-1, every group used): the labels, cluster for cluster, of addremadd_partition on the
// n x n matrix those groups expand to. Returns -1 (nothing written) when the sums are not exact
// in float64 or the matrix is not symmetric, for the caller to expand the matrix instead.
int64_t addremadd_partition_groups(const float* similarity, int64_t n_groups, const int64_t* group_of,
                                   int64_t n, double tol, int64_t max_steps, int n_threads, int32_t* labels,
                                   double* contributions, double* lambdas, int64_t* seeds,
                                   int64_t* n_updates);

// The object-by-object extraction for any similarity (what the grouped route is tested against).
int64_t addremadd_partition_plain(const float* similarity, int64_t n, double tol, int64_t max_steps,
                                  int n_threads, int32_t* labels, double* contributions,
                                  double* lambdas, int64_t* seeds, int64_t* n_updates);

// Greedy agglomeration on the gains g_ij (Mirkin & Shestakov, sec. 3.2; g = p_ij - p-bar, diagonal ignored).
// Merges the pair with the largest gain while it is positive (target_k == 0), or while more
// than target_k clusters remain (target_k >= 1, negative gains allowed). Ties go to the pair
// (r, t), r < t, smallest in lexicographic order, clusters being named by their lowest member.
//   gains        IN   n * n doubles, row-major, symmetric
//   labels       OUT  n ints, the lowest member's index of each object's cluster
//   merges       OUT  (n - 1) x 2 int64: the (r, t) merged at each step, t absorbed into r
//   merge_gains  OUT  n - 1 doubles: the gain of each merge
// Returns the number of merges.
int64_t ls_agglomerate(const double* gains, int64_t n, int64_t target_k, int32_t* labels,
                       int64_t* merges, double* merge_gains);

}  // namespace cclust
