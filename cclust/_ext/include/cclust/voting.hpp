// Lookup passes of the voting consensus family (IVC, IPVC, IPC, relabel-and-vote, EM mixture).
//
// Every method of the family scores object x against cluster k as a sum over partitions of a
// per-(cluster, partition, label) quantity read at x's label:
//     score(x, k) = sum_j table[(offsets[j] + y_xj) * n_clusters + k]   (y_xj = -1 skipped)
// The table is stored transposed (one row of n_clusters values per (partition, label)), so a
// pass is O(n r K) contiguous reads and never forms the n x n co-association matrix. Each
// object's score is summed in partition order by one thread, so results are bitwise the same
// for any thread count. Outputs are caller-allocated; bad labels throw std::invalid_argument.
// Labels come as codes of label_bytes each (lookup.hpp's label_code): int32 with -1 = missing
// (4), or uint16 (2) / uint8 (1) with the type's largest value = missing.
#pragma once

#include <cstdint>

namespace cclust {

// Every score: out[x * n_clusters + k] = score(x, k).
void vote_scores(const void* labels,      // IN  n x r, row-major codes, missing allowed
                 int32_t label_bytes,
                 int64_t n, int64_t r,
                 const int64_t* offsets,  // IN  r + 1
                 const double* table,     // IN  offsets[r] x n_clusters, row-major
                 int32_t n_clusters,
                 double* out,             // OUT n x n_clusters
                 int n_threads);

// The best cluster of each object: assignment[x] = argmax_k score(x, k) among clusters with
// allowed[k] != 0 (lowest k on ties), best[x] = that score. Throws if no cluster is allowed.
void vote_argmax(const void* labels,      // IN  n x r codes
                 int32_t label_bytes,
                 int64_t n, int64_t r,
                 const int64_t* offsets,  // IN  r + 1
                 const double* table,     // IN  offsets[r] x n_clusters
                 int32_t n_clusters,
                 const uint8_t* allowed,  // IN  n_clusters
                 int32_t* assignment,     // OUT n
                 double* best,            // OUT n
                 int n_threads);

// vote_argmax with the table in CSR form: row (offsets[j] + l) holds the clusters
// indices[indptr[row]:indptr[row + 1]] with values values[...]; absent entries are zero. For
// sparse tables (IVC's modes, relabel-and-vote's matches: about one cluster per label) a pass is
// O(n (r + K)) instead of O(n r K). Each object's scores are summed in partition order, so the
// results are bitwise those of vote_argmax on the same table made dense.
void vote_argmax_sparse(const void* labels,      // IN  n x r codes
                        int32_t label_bytes,
                        int64_t n, int64_t r,
                        const int64_t* offsets,  // IN  r + 1
                        const int64_t* indptr,   // IN  offsets[r] + 1
                        const int32_t* indices,  // IN  indptr[offsets[r]], values in 0..n_clusters-1
                        const double* values,    // IN  indptr[offsets[r]]
                        int32_t n_clusters,
                        const uint8_t* allowed,  // IN  n_clusters
                        int32_t* assignment,     // OUT n
                        double* best,            // OUT n
                        int n_threads);

// IVC's assignment with equal partition weights: the cluster whose mode vector agrees with
// object x on the most partitions, assignment[x] = argmax_k #{j : labels[x, j] == modes[k, j]}
// among allowed clusters (lowest k on ties), matches[x] = that count. A mode of -2 (a cluster
// with no labelled member in partition j) matches nothing, nor does a missing label (-1).
// Integer counts vectorise over partitions, so a pass is O(n K r) simple compares.
void mode_argmax(const void* labels,      // IN  n x r codes
                 int32_t label_bytes,
                 int64_t n, int64_t r,
                 const int32_t* modes,    // IN  n_clusters x r
                 int32_t n_clusters,
                 const uint8_t* allowed,  // IN  n_clusters
                 int32_t* assignment,     // OUT n
                 int32_t* matches,        // OUT n
                 int n_threads);

// Renumber every partition's clusters in order of first appearance (object 0 first):
// out[x, j] = rank of labels[x, j] among partition j's labels by first appearance; a missing
// label stays missing. The result no longer depends on how the clusters of each partition were
// named. `out` holds codes of the same width as `labels` (ranks are below K_j, so they fit).
void first_appearance(const void* labels,      // IN  n x r codes, values in 0..K_j-1 or missing
                      int32_t label_bytes,
                      int64_t n, int64_t r,
                      const int64_t* offsets,  // IN  r + 1
                      void* out);              // OUT n x r codes of label_bytes

// The transpose of vote_scores: out[(offsets[j] + l) * n_columns + k] = sum of
// values[x * n_columns + k] over the objects x with label l in partition j (missing labels add
// nothing), every entry summed over the objects in increasing order: bitwise B^T V for the
// one-hot matrix B of the labels, for any thread count. Bad labels throw as in vote_scores.
void label_sums(const void* labels,      // IN  n x r codes, missing allowed
                int32_t label_bytes,
                int64_t n, int64_t r,
                const int64_t* offsets,  // IN  r + 1
                const double* values,    // IN  n x n_columns, row-major
                int32_t n_columns,
                double* out,             // OUT offsets[r] x n_columns
                int n_threads);

}  // namespace cclust
