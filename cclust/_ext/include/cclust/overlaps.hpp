// Cluster overlaps of an ensemble, partition by partition, without the one-hot or B^T B.
//
// G = B^T B (B the n x sum K_i one-hot) holds in cell (c, c') the objects in both cluster c
// and cluster c'. Its block (i, i') is the contingency table of partitions i and i'; G is
// symmetric, so the blocks i' >= i carry all of it. For each partition i (in order) the objects
// are grouped by their cluster c in i, and one cluster's objects are tallied against every
// partition i' >= i into a histogram of sum_{i' >= i} K_i' counts: that histogram is row c of
// those blocks. Read at the objects' own labels it gives, per object x,
//
//     row_sq[x] += w_i (w_i |c| + 2 sum_{i' > i} w_i' G[c, c_i'(x)])
//
// which summed over i is sum_{i, i'} w_i w_i' G[c_i(x), c_i'(x)] = sum_j A_xj^2 for the
// co-association A of the weighted partitions, and row_sum[x] += w_i |c| (sum_j A_xj).
// The cells going from 0 to 1 while it is tallied are the entries of G (each cell of an
// off-diagonal block twice, as G holds it and its mirror image).
//
// Memory: one histogram per thread and an index of the objects (8 bytes each); time: two
// reads (one without the sums) of sum_i (r - i) labels per object, into a histogram small
// enough for the cache.
// Threads take clusters; each object belongs to one cluster of partition i and its sums are
// added in partition order, so every result is bitwise the same for any thread count.
//
// The same pass also gives the cells themselves (cluster_overlap_table): the cells a cluster's
// histogram touched are its row of the blocks i' >= i, kept per cluster (in cell order, its
// values summed over the cluster's objects in object order), then mirrored into the rows of the
// later partitions' clusters and every row sorted by column: G in both triangles, as the CSR
// MCLA's meta-graph (Strehl & Ghosh 2002) and WOMC's object-weighted one (Ren et al. 2017,
// eq. 5) are made from, without the one-hot B. Memory: the rows of the blocks i' >= i (12 bytes
// a cell) beside the CSR the caller allocated, and a float64 histogram per thread with weights.
#pragma once

#include <cstdint>

namespace cclust {

// labels: n x r codes of `label_bytes` bytes (4: int32, -1 missing; 2 / 1: uint16 / uint8, the
// largest value missing), row-major. offsets: r + 1 cluster offsets. Only the objects
// 0, stride, 2 stride, ... are read (stride >= 1; a subset gives a lower bound of the entries).
// weights (r), row_sum and row_sq (n, zeroed by the caller) may all be null: then only
// the entries are counted. The sums assume no missing label (objects missing from partition
// i get nothing from it). Throws std::invalid_argument on a label out of range.
int64_t cluster_overlaps(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                         const int64_t* offsets, int64_t stride, const double* weights,
                         double* row_sum, double* row_sq, int n_threads);

// G = B^T diag(w) B in both triangles, rows and columns permuted by `rank`, as a CSR.
//   object_weights  IN   n float64, or null: w = 1 (G counts objects)
//   rank            IN   sum K_i: the row and column of one-hot column (cluster) c is rank[c],
//                        a permutation of 0..sum K_i - 1
//   capacity        IN   entries indices and data hold: at least those of G (cluster_overlaps
//                        counts them, stride 1); an upper bound is enough (the cells past the
//                        entries are never written, so never made resident)
//   indptr          OUT  sum K_i + 1
//   indices         OUT  capacity, the first `entries` increasing within each row
//   data            OUT  capacity, the first `entries` set
struct OverlapTable {
    const double* object_weights;
    const int64_t* rank;
    int64_t capacity;
    int64_t* indptr;
    int32_t* indices;
    double* data;
};

// Returns the entries of G. Throws std::invalid_argument on a label out of range, a rank out of
// range or repeated, or a table of more entries than capacity (before writing any of them).
int64_t cluster_overlap_table(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                           const int64_t* offsets, const OverlapTable& table, int n_threads);

}  // namespace cclust
