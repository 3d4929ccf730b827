# Declarations of the pure C++ cores (include/cclust/*.hpp). Every function is `except +` so a
# C++ exception becomes a Python exception, and `nogil` so wrappers can release the GIL.
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp cimport bool as cbool


cdef extern from "cclust/parallel.hpp" namespace "cclust" nogil:
    const int64_t kChunk
    cbool openmp_enabled()
    int max_threads()


cdef extern from "cclust/contingency.hpp" namespace "cclust" nogil:
    void contingency_pair(const int64_t* a, const int64_t* b, int64_t n, int64_t ka,
                          int64_t kb, int64_t* out, int n_threads) except +
    void label_range(const int64_t* labels, int64_t n, int64_t* low, int64_t* high) except +
    int64_t relabel_dense(const int64_t* labels, int64_t n, int64_t max_value,
                          int64_t* out, cbool* identity, int n_threads) except +


cdef extern from "cclust/overlaps.hpp" namespace "cclust" nogil:
    int64_t cluster_overlaps(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                             const int64_t* offsets, int64_t stride, const double* weights,
                             double* row_sum, double* row_sq, int n_threads) except +

    cdef cppclass OverlapTable:
        const double* object_weights
        const int64_t* rank
        int64_t capacity
        int64_t* indptr
        int32_t* indices
        double* data

    int64_t cluster_overlap_table(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                                  const int64_t* offsets, const OverlapTable& table, int n_threads) except +


cdef extern from "cclust/kmeans.hpp" namespace "cclust" nogil:
    cdef cppclass MixedRows:
        int64_t n
        const double* X
        int64_t d
        double dense_weight
        const void* labels
        int32_t label_bytes
        int64_t r
        const int64_t* offsets
        const double* weights
        int32_t distance
        double p
        const double* object_weights
        const double* row_scale

    cdef enum LloydStop:
        kStopMaxIter
        kStopStable
        kStopTol
        kStopRose

    cdef cppclass LloydResult:
        int64_t n_iter
        cbool converged
        double objective
        int64_t n_trace
        int32_t stop

    LloydResult lloyd(const MixedRows& rows, int32_t n_clusters, int32_t* assignment,
                      int64_t max_iter, double tol, int n_threads, double* objective_trace,
                      double* dense_centers, double* cat_centers) except +
    double assign(const MixedRows& rows, int32_t n_clusters, const double* dense_centers,
                  const double* cat_centers, int32_t* assignment, double* costs,
                  int n_threads) except +
    double objective(const MixedRows& rows, int32_t n_clusters, const double* dense_centers,
                     const double* cat_centers, const int32_t* assignment, double* costs,
                     int n_threads) except +
    void centroids(const MixedRows& rows, int32_t n_clusters, const int32_t* assignment,
                   double* dense_centers, double* cat_centers, int n_threads) except +
    void kmeanspp(const MixedRows& rows, int32_t n_clusters, int64_t first,
                  const double* uniforms, int64_t n_trials, int n_threads,
                  int64_t* seeds) except +
    cbool kmeans_simd_supported(int32_t variant)
    int32_t kmeans_simd_variant()
    void kmeans_force_simd(int32_t variant) except +
    void kmeans_group_rows(cbool on)
    int32_t lloyd_verdict(int64_t it, double objective, double previous_objective,
                          int64_t changed, int64_t max_iter, double tol)
    void tally(const MixedRows& rows, int32_t n_clusters, const int32_t* assignment,
               int64_t* counts, int64_t* sizes, int n_threads) except +
    void centres_from_tally(const int64_t* offsets, int64_t r, int32_t n_clusters,
                            const int64_t* counts, double* cat_centers) except +
    double lloyd_pass(const MixedRows& rows, int32_t n_clusters, const double* cat_centers,
                      const int32_t* assignment, int32_t* best, double* best_cost,
                      double* chunk_objective, int64_t* moved, int64_t* delta_counts,
                      int64_t* delta_sizes, int n_threads) except +
    int64_t costliest_movable(const int32_t* assignment, const double* costs, int64_t n,
                              const int64_t* sizes, double* cost)
    void reseed(int32_t* labels, const double* costs, int64_t n, int64_t* sizes,
                int64_t n_clusters) except +
    void candidate_costs(const MixedRows& rows, int64_t n_candidates,
                         const int32_t* candidate_labels, const double* closest, double* dist,
                         double* chunk_potentials, int n_threads) except +
    double running_sum(const double* values, int64_t n, double start, double* cum)
    int64_t first_above(const double* cum, int64_t n, double target)
    int64_t last_positive(const double* values, int64_t n)



# -- voting: lookup passes of IVC/IPVC/IPC, relabel-and-vote, EM; include/cclust/voting.hpp --
from libc.stdint cimport uint8_t

cdef extern from "cclust/voting.hpp" namespace "cclust" nogil:
    void vote_scores(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                     const int64_t* offsets, const double* table, int32_t n_clusters, double* out,
                     int n_threads) except +
    void vote_argmax(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                     const int64_t* offsets, const double* table, int32_t n_clusters,
                     const uint8_t* allowed, int32_t* assignment, double* best,
                     int n_threads) except +
    void vote_argmax_sparse(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                            const int64_t* offsets, const int64_t* indptr, const int32_t* indices,
                            const double* values, int32_t n_clusters, const uint8_t* allowed,
                            int32_t* assignment, double* best, int n_threads) except +
    void mode_argmax(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                     const int32_t* modes, int32_t n_clusters, const uint8_t* allowed,
                     int32_t* assignment, int32_t* matches, int n_threads) except +
    void first_appearance(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                          const int64_t* offsets, void* out) except +
    void label_sums(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                    const int64_t* offsets, const double* values, int32_t n_columns, double* out,
                    int n_threads) except +


# -- addremadd: least-squares consensus, include/cclust/addremadd.hpp --
from libc.stdint cimport uint8_t

cdef extern from "cclust/addremadd.hpp" namespace "cclust" nogil:
    int64_t addremadd_cluster(const float* similarity, int64_t n, int64_t seed, double tol,
                              int64_t max_steps, uint8_t* membership, double* contribution,
                              double* lambda_, double* trace, int64_t max_trace,
                              int64_t* n_trace) except +
    int64_t addremadd_partition(const float* similarity, int64_t n, double tol, int64_t max_steps,
                                int n_threads, int32_t* labels, double* contributions,
                                double* lambdas, int64_t* seeds, int64_t* n_updates) except +
    int64_t addremadd_partition_groups(const float* similarity, int64_t n_groups,
                                       const int64_t* group_of, int64_t n, double tol,
                                       int64_t max_steps, int n_threads, int32_t* labels,
                                       double* contributions, double* lambdas, int64_t* seeds,
                                       int64_t* n_updates) except +
    int64_t addremadd_partition_plain(const float* similarity, int64_t n, double tol,
                                      int64_t max_steps, int n_threads, int32_t* labels,
                                      double* contributions, double* lambdas, int64_t* seeds,
                                      int64_t* n_updates) except +
    int64_t ls_agglomerate(const double* gains, int64_t n, int64_t target_k, int32_t* labels,
                           int64_t* merges, double* merge_gains) except +


# -- GKCC's candidate runs of one greedy step, include/cclust/kmeans.hpp --
cdef extern from "cclust/kmeans.hpp" namespace "cclust" nogil:
    void candidate_runs(const MixedRows& rows, int32_t n_shared, const double* shared_dense,
                        const double* shared_cat, int64_t n_candidates, const double* seed_dense,
                        const double* seed_cat, int64_t max_iter, double tol, int n_threads,
                        int64_t memo_bytes, int64_t seed_batch, void* labels, int32_t label_bytes,
                        double* objectives, int64_t* n_iter, int64_t* stats) except +


# -- dense rows held in row blocks (the transfer-cut k-means of a row-block executor), kmeans.hpp --
cdef extern from "cclust/kmeans.hpp" namespace "cclust" nogil:
    double dense_block_pass(const MixedRows& rows, int32_t n_clusters, const double* dense_centers,
                            const int32_t* assignment, int32_t* best, double* best_cost,
                            double* chunk_objective, int64_t* moved, double* chunk_sums,
                            int64_t* sizes, int n_threads) except +
    void dense_block_sums(const MixedRows& rows, int32_t n_clusters, const int32_t* assignment,
                          double* chunk_sums, int64_t* sizes, int n_threads) except +
    void dense_candidate_costs(const MixedRows& rows, int64_t n_candidates, const double* candidates,
                               const double* closest, double* dist, double* chunk_potentials,
                               int n_threads) except +


cdef extern from "cclust/distances.hpp" namespace "cclust" nogil:
    double pair_distance_sum(const double* X, int64_t m, int64_t d, double power, int n_threads) except +
    int64_t consensus_pairs_in(const int32_t* L, int64_t n, int64_t H, double low, double high,
                               int n_threads) except +
