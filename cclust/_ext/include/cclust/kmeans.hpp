// One Lloyd-style K-means engine over "mixed rows": an optional dense block (real features,
// squared Euclidean) and optional categorical blocks (basic partitions). It serves KCC
// (Wu et al., "K-means-based consensus clustering", Table 1 and the centroid update eq. 4),
// plain k-means on X (r == 0) and mixed spaces (both blocks).
//
// Categorical blocks are never expanded to one-hot. Partition i's labels occupy the columns
// offsets[i]..offsets[i+1]-1 of a one-hot space of width offsets[r]; a centre's block i is a
// distribution m_{k,i} over those K_i columns, and the distance of object x (label l) to it is a
// lookup at l:
//
//   kUc    1 - 2 m[l] + ||m||_2^2          (= ||e_l - m||^2)
//   kUh    -log2(m[l] + 2.2e-16)           (= KL(e_l || m), smoothed so an unseen label is finite)
//   kUcos  1 - m[l] / ||m||_2              (= 1 - cos(e_l, m); 1 when m == 0)
//   kUlp   1 - (m[l] / ||m||_p)^(p-1)      (p > 1; 1 when m == 0)
//
// each multiplied by the partition's weight and summed over the partitions where x is labelled,
// plus dense_weight * ||X[x] - c_k||^2 when d > 0. For all four the mean is the minimiser of the
// cluster's cost, which is why a Lloyd step never raises the objective (up to round-off and the
// UH smoothing).
//
// Centroids: the dense part is the mean of the members' rows; block i is the distribution of
// partition i's labels among the members labelled in i (counts / labelled members, eq. 4). A
// cluster with no member labelled in i gets P_i, partition i's label distribution over every
// object labelled in i (all zeros if no object is): no member is charged for that block, and P_i
// is what the block of the whole data set would be. A cluster with no member at all (only
// possible from `centroids`) gets the centre of the whole data set.
//
// Cost: every pass folds the centres' blocks into a lookup table with one contiguous row of K
// costs per label, so an object costs r row-adds of K doubles (O(n r K) per pass, never
// O(n K sum K_i)), plus O(n d K) for the dense block. Labels are checked once per call.
//
// Weighted objects: with object_weights w_x, a cluster's centre is the w-weighted mean of its
// members (dense sums and label counts weighted; block i of a categorical centre is the weighted
// distribution of partition i's labels among the members labelled in i) and the objective is
// sum_x w_x cost(x); assignments still go to the cheapest centre, and an empty cluster still
// takes the object costliest to its own centre (unweighted cost). With row_scale s_x (squared
// Euclidean kUc, no dense block) object x is the scaled one-hot row s_x b_x: block i of a centre
// is sum w_x s_x e_{L[x,i]} / sum w_x over all members, and the cost of x is
// sum_i w_i (s_x^2 [x labelled in i] - 2 s_x m[L[x,i]] + ||m||^2) — the weighted K-means on
// D^{-1} B with weights D that Liu et al. (2017) prove equivalent to spectral clustering of the
// co-association. Without weights or scales every result is bitwise the unweighted one.
// kmeanspp and the block kernels (lloyd_pass, candidate_costs) take unweighted rows only.
//
// Every function writes into caller-allocated memory, is bitwise deterministic for any thread
// count (fixed chunks of kChunk objects, floating partials reduced in chunk order) and throws
// std::invalid_argument (never crashes) on bad sizes, parameters or labels.
#pragma once

#include <cstdint>

namespace cclust {

// The k-means engine's cost of a dense row x against a centre c: the sum over features, in
// order, of (x_j - c_j)^2. nearest_centres (distances.cpp) decides near ties with this same
// function, so its labels are the engine's bit for bit; U-SPEC's nearest representatives
// (uspec.cpp) rank by it too.
inline double squared_distance(const double* x, const double* c, int64_t d) {
    double s = 0.0;
    for (int64_t j = 0; j < d; ++j) {
        const double t = x[j] - c[j];
        s += t * t;
    }
    return s;
}

// Point-to-centroid distance of the categorical blocks (Table 1 of the KCC paper).
enum Distance : int32_t { kUc = 0, kUh = 1, kUcos = 2, kUlp = 3 };

// A view of the objects; nothing is owned or copied.
struct MixedRows {
    int64_t n = 0;                     // objects
    const double* X = nullptr;         // IN n x d row-major; may be null when d == 0
    int64_t d = 0;                     // dense features (0 = no dense block)
    double dense_weight = 1.0;         // multiplies the squared Euclidean part; >= 0
    // IN n x r row-major label codes, label_bytes each: int32 0..K_i-1 or -1 = missing (4), or
    // uint16 (2) / uint8 (1) 0..K_i-1 with the type's largest value = missing (lookup.hpp).
    const void* labels = nullptr;
    int32_t label_bytes = 4;           // 4, 2 or 1
    int64_t r = 0;                     // basic partitions (0 = no categorical block)
    const int64_t* offsets = nullptr;  // IN r + 1, offsets[0] == 0, non-decreasing
    const double* weights = nullptr;   // IN r, effective weights (already normalised), >= 0
    int32_t distance = kUc;            // a Distance code
    double p = 2.0;                    // exponent of kUlp, > 1
    // Object weights and row scales (see "Weighted objects" above); null = all 1.
    const double* object_weights = nullptr;  // IN n, finite and > 0
    const double* row_scale = nullptr;       // IN n, finite and > 0; kUc and d == 0 only
};

// Why `lloyd` stopped.
enum LloydStop : int32_t {
    kStopMaxIter = 0,  // max_iter label updates were made (converged == false)
    kStopStable = 1,   // no label changed
    kStopTol = 2,      // the objective fell by less than tol * |previous|
    kStopRose = 3,     // a step would have raised the objective; it was undone
};

struct LloydResult {
    int64_t n_iter = 0;      // accepted label updates (= n_trace - 1)
    bool converged = false;  // stop != kStopMaxIter
    double objective = 0.0;  // cost of the returned labels under the returned centres
    int64_t n_trace = 0;     // entries written to objective_trace
    int32_t stop = kStopMaxIter;
};

// Lloyd iterations from the labelling in `assignment`. Each pass computes the centroids of the
// current labels, the objective of those labels (appended to the trace) and every object's best
// cluster (ties keep the current cluster if it is among the minima, else the lowest index).
// Stops when no label changes, when (previous - current) < tol * |previous|, or after max_iter
// updates. A step that raises the objective at all is undone and ends the run, so the trace is
// non-increasing and the returned labels are the best seen.
//
// Empty clusters are re-seeded deterministically: each empty cluster, in increasing index, takes
// the object with the highest cost to its centre (ties: lowest index) among objects whose cluster
// has more than one member, so no cluster is emptied in turn and K <= n non-empty clusters always
// result. Empty clusters in the initial labelling are re-seeded (by the cost to the centroids of
// that labelling) before the first objective is recorded; after an update they are re-seeded by
// the cost each object had to its new cluster's (old) centre, which keeps the objective
// non-increasing.
//
// On return assignment, dense_centers, cat_centers and the result's objective agree: the centres
// are the centroids of the labels and the objective is the labels' cost under them.
LloydResult lloyd(const MixedRows& rows, int32_t n_clusters,
                  int32_t* assignment,       // INOUT n, initial labels 0..n_clusters-1
                  int64_t max_iter, double tol, int n_threads,
                  double* objective_trace,   // OUT max_iter + 1 (n_trace written)
                  double* dense_centers,     // OUT n_clusters x d (may be null when d == 0)
                  double* cat_centers);      // OUT n_clusters x offsets[r] (null when width 0)

// One assignment step against given centres: each object goes to its cheapest centre (ties:
// lowest index). cat_centers holds, per centre and partition, a non-negative vector read as
// m_{k,i}. Returns the objective (sum of the costs, in chunk order).
double assign(const MixedRows& rows, int32_t n_clusters,
              const double* dense_centers,  // IN n_clusters x d
              const double* cat_centers,    // IN n_clusters x offsets[r]
              int32_t* assignment,          // OUT n
              double* costs,                // OUT n, may be null
              int n_threads);

// Cost of a given labelling under given centres: costs[x] = cost of x to centre assignment[x].
// Returns their sum (in chunk order), i.e. the same number `lloyd` reports for those labels.
double objective(const MixedRows& rows, int32_t n_clusters,
                 const double* dense_centers,  // IN n_clusters x d
                 const double* cat_centers,    // IN n_clusters x offsets[r]
                 const int32_t* assignment,    // IN n, 0..n_clusters-1
                 double* costs,                // OUT n, may be null
                 int n_threads);

// Centroids of a labelling, exactly as `lloyd` computes them. assignment may hold -1 for
// objects that belong to no cluster (they still count towards P_i and the whole-data centre),
// so the centres of seed objects are centroids(assignment = k at seed k, -1 elsewhere).
void centroids(const MixedRows& rows, int32_t n_clusters,
               const int32_t* assignment,  // IN n, 0..n_clusters-1 or -1
               double* dense_centers,      // OUT n_clusters x d
               double* cat_centers,        // OUT n_clusters x offsets[r]
               int n_threads);

// Greedy k-means++ (Arthur & Vassilvitskii; greedy variant as in scikit-learn) with
//   D^2(x, y) = dense_weight ||X[x] - X[y]||^2 + sum_i w_i 2 [L[x,i] != L[y,i]]  (both labelled),
// the weighted squared Euclidean distance between the (never built) one-hot rows. seeds[0] =
// first. At step s (1..K-1), with D^2 to the closest seed so far and its running sum cum (in
// object order), trial t draws the first object with cum > uniforms[s-1][t] * cum[n-1] (so an
// object at D^2 = 0, a chosen seed in particular, is never drawn); the trial whose seed lowers the
// total potential most wins (ties: lowest trial). If every object is at D^2 = 0 (fewer than K
// distinct rows) the lowest-index object not yet chosen is taken. Seeds are distinct; randomness
// comes only from `uniforms`. The label part of D^2 is summed over i in order from +0; with no
// dense block and one weight w for every partition it is the sum of m terms 2 w, m the number
// of partitions where the labels differ, and is computed by counting m (vector compares of the
// label codes), the same double (here and in candidate_costs).
void kmeanspp(const MixedRows& rows, int32_t n_clusters, int64_t first,
              const double* uniforms,  // IN (n_clusters - 1) x n_trials, each in [0, 1)
              int64_t n_trials, int n_threads,
              int64_t* seeds);         // OUT n_clusters

// ---- Instruction-set variants of the lookup kernel -----------------------------------------
//
// The categorical lookup-adds of every pass (no dense block) run in one of these variants,
// chosen at run time: the widest the CPU supports, unless the environment variable
// CCLUST_KMEANS_SIMD (baseline, avx2, avx512; read once) or kmeans_force_simd says otherwise.
// Each object's sum is added partition by partition in order in every variant (vector lanes are
// independent sums, and the build has no contraction to fused multiply-adds), so every result is
// bitwise the same in all of them; the baseline is the SSE2 code every x86-64 (and any other
// target) runs.
enum SimdVariant : int32_t { kSimdBaseline = 0, kSimdAvx2 = 1, kSimdAvx512 = 2 };

// True when this build and this CPU can run the variant.
bool kmeans_simd_supported(int32_t variant);

// The variant engines constructed from now on use.
int32_t kmeans_simd_variant();

// Force a supported variant (throws std::invalid_argument otherwise), or -1 to go back to the
// automatic choice. Process-wide; meant for tests and benchmarks.
void kmeans_force_simd(int32_t variant);

// Whether engines constructed from now on may group objects with identical label rows (on by
// default; the results are the same either way). Process-wide; for tests and benchmarks.
void kmeans_group_rows(bool on);

// ---- The pieces `lloyd` and `kmeanspp` are made of -----------------------------------------
//
// The functions below are what the two drivers above call between passes, exported so that an
// executor holding the objects in row blocks (cclust.dask) runs the very same code per block and
// gets the same numbers. Per-chunk partials are those of kChunk-object chunks counted from the
// block's first row: a block starting at a multiple of kChunk of the whole data set has exactly
// the chunks of the whole array, and adding its partials after the earlier blocks' (from 0.0, in
// order) gives the whole array's sums bit for bit.

// What `lloyd` decides after a pass: -1 to go on, else the LloydStop that ends the run. `it` is
// the pass (0 = the first), `changed` the objects the pass would move.
int32_t lloyd_verdict(int64_t it, double objective, double previous_objective, int64_t changed,
                      int64_t max_iter, double tol);

// The tally of a labelling: per cluster k < n_clusters, and a last row n_clusters for objects
// assigned to no cluster (-1), the members (sizes) and the members' label counts in the one-hot
// columns of every partition (counts; missing labels are not counted). Validates the labels.
void tally(const MixedRows& rows, int32_t n_clusters,
           const int32_t* assignment,  // IN n, -1..n_clusters-1
           int64_t* counts,            // OUT (n_clusters + 1) x offsets[r]
           int64_t* sizes,             // OUT n_clusters + 1
           int n_threads);

// Categorical centroids from a tally (rows n_clusters + 1 as `tally` writes them): block i of
// centre k is counts / labelled members, or P_i (partition i over every object of the tally)
// when the centre has no member labelled in i. Exactly what `lloyd` and `centroids` compute.
void centres_from_tally(const int64_t* offsets, int64_t r, int32_t n_clusters,
                        const int64_t* counts,  // IN (n_clusters + 1) x offsets[r]
                        double* cat_centers);   // OUT n_clusters x offsets[r]

// One pass of `lloyd` over the rows (no dense block: d must be 0): each object's best centre
// (ties keep the current one), its cost there, the current labelling's cost per chunk, the number
// of objects that move and the change of the tally (counts and sizes, rows as in `tally`) when
// they do. Returns the sum of the chunk costs, in chunk order. Validates the labels.
double lloyd_pass(const MixedRows& rows, int32_t n_clusters,
                  const double* cat_centers,  // IN n_clusters x offsets[r]
                  const int32_t* assignment,  // IN n, 0..n_clusters-1
                  int32_t* best,              // OUT n
                  double* best_cost,          // OUT n
                  double* chunk_objective,    // OUT n_chunks(n)
                  int64_t* moved,             // OUT 1
                  int64_t* delta_counts,      // OUT (n_clusters + 1) x offsets[r]
                  int64_t* delta_sizes,       // OUT n_clusters + 1
                  int n_threads);

// The reseed pick of `lloyd`: the object of highest cost (ties: lowest index, a NaN cost never
// preferred) whose cluster has at least two members (sizes indexed by assignment). Returns its
// index, or -1 when no object qualifies; *cost gets its cost.
int64_t costliest_movable(const int32_t* assignment,  // IN n
                          const double* costs,        // IN n
                          int64_t n,
                          const int64_t* sizes,       // IN n_clusters
                          double* cost);              // OUT 1

// The empty-cluster rule of `lloyd`, for any iterative method: each empty cluster (sizes[k] ==
// 0), in increasing index, takes the costliest_movable object; labels and sizes are updated in
// place. Throws if no object can move (n_clusters > n).
void reseed(int32_t* labels,       // INOUT n
            const double* costs,   // IN n, each object's cost to its own cluster
            int64_t n,
            int64_t* sizes,        // INOUT n_clusters, members per cluster of `labels`
            int64_t n_clusters);

// One k-means++ candidate pass (no dense block: d must be 0): dist[t][x] = min(closest[x],
// D^2(x, candidate t)) with D^2 as in `kmeanspp` (closest null: D^2 itself), and each chunk's sum
// of dist[t]. A candidate is given by its labels (-1 = missing), so it may lie in another block.
void candidate_costs(const MixedRows& rows, int64_t n_candidates,
                     const int32_t* candidate_labels,  // IN n_candidates x r
                     const double* closest,            // IN n, or null
                     double* dist,                     // OUT n_candidates x n
                     double* chunk_potentials,         // OUT n_chunks(n) x n_candidates
                     int n_threads);

// The k-means++ draw: cum[x] = start + values[0] + ... + values[x], added left to right (so a
// block continues where the previous one ended); returns the last sum (start when n == 0).
double running_sum(const double* values, int64_t n, double start, double* cum);

// The first x with cum[x] > target, or n when there is none.
int64_t first_above(const double* cum, int64_t n, double target);

// The last x with values[x] > 0, or -1 when there is none.
int64_t last_positive(const double* values, int64_t n);

// ---- GKCC's candidate runs of one greedy step (src/gkcc_candidates.cpp) ----------------------

// The nu K-means runs of one greedy step of GKCC (Li & Liu 2018, Algorithm 1) in one call:
// candidate j starts from the n_shared centres shared by every candidate plus its own seed
// centre (row j of seed_dense / seed_cat), is assigned to those n_shared + 1 centres exactly as
// `assign` does, and then runs `lloyd` from that labelling. Every candidate's labels, objective
// and n_iter are bit for bit those of that assign + lloyd pair; the candidates run one thread
// each, spread over n_threads, and the result does not depend on n_threads.
//
// Exact savings: the costs to the shared centres are computed once for all candidates; a cost
// whose centre did not change is reused; a cost that a lower bound (Elkan 2003, with slack for
// rounding) proves to exceed the object's cost to its own centre is not computed; a pass from
// labels another candidate's pass already started from is taken from a memo of at most
// memo_bytes. The seed centres' cost columns are computed seed_batch candidates at a time (when
// the first of them starts) and dropped once those candidates have read them, so at most one
// batch of columns per thread is held, not one column per candidate (the labels do not depend on
// seed_batch). Unweighted rows and the squared Euclidean distance (uc) only. The rows' label
// codes are read in place in any of their widths; the candidates' labels are written as codes
// of label_bytes each (1, 2 or 4: uint8, uint16 or int32), which must hold n_shared + 1
// clusters (at most 127 or 32767 in the narrow layouts; lookup.hpp's label_code).
//
// stats (OUT 5): costs computed (the starting columns included), costs skipped by a bound,
// Lloyd passes, passes taken from the memo, and n x (n_shared + 1) (the costs of a full pass).
void candidate_runs(const MixedRows& rows, int32_t n_shared,
                    const double* shared_dense,  // IN n_shared x d
                    const double* shared_cat,    // IN n_shared x offsets[r]
                    int64_t n_candidates,
                    const double* seed_dense,    // IN n_candidates x d
                    const double* seed_cat,      // IN n_candidates x offsets[r]
                    int64_t max_iter, double tol, int n_threads, int64_t memo_bytes,
                    int64_t seed_batch,          // >= 1
                    void* labels,                // OUT n_candidates x n, label_bytes each
                    int32_t label_bytes,         // 1, 2 or 4
                    double* objectives,          // OUT n_candidates
                    int64_t* n_iter,             // OUT n_candidates
                    int64_t* stats);             // OUT 5

// ---- Dense rows held in row blocks: the k-means of a row-block executor (src/blocks.cpp) ------
// For an executor that holds the rows of a dense k-means (d > 0, r = 0, unweighted) in blocks
// whose first objects are multiples of kChunk: each chunk's floats are those the whole-array
// `assign`, `lloyd` and `kmeanspp` compute for it, so partials added in chunk order over the blocks
// give their sums bit for bit, whatever the blocks.

// One pass over the block against the dense centres: with `assignment` (0..n_clusters-1) it is a
// pass of `lloyd` (best centre, ties keep the current one; chunk_objective = the current
// labelling's cost per chunk; moved = objects whose best centre is another), with `assignment` null
// it is `assign` (best = the cheapest centre, ties to the lowest index; chunk_objective = the
// best costs per chunk; moved = 0). Then, per chunk, the sums of the rows of each `best` cluster
// from zero in object order (what `lloyd` adds chunk by chunk into the centres) and the members
// per cluster. Returns the sum of chunk_objective in chunk order.
double dense_block_pass(const MixedRows& rows, int32_t n_clusters,
                        const double* dense_centers,  // IN n_clusters x d
                        const int32_t* assignment,    // IN n, or null
                        int32_t* best,                // OUT n
                        double* best_cost,            // OUT n
                        double* chunk_objective,      // OUT n_chunks(n)
                        int64_t* moved,               // OUT 1
                        double* chunk_sums,           // OUT n_chunks(n) x n_clusters x d
                        int64_t* sizes,               // OUT n_clusters
                        int n_threads);

// The per-chunk sums and the members per cluster of `dense_block_pass`, for a given labelling
// (after a reseed) without a pass.
void dense_block_sums(const MixedRows& rows, int32_t n_clusters,
                      const int32_t* assignment,  // IN n, 0..n_clusters-1
                      double* chunk_sums,         // OUT n_chunks(n) x n_clusters x d
                      int64_t* sizes,             // OUT n_clusters
                      int n_threads);

// The k-means++ candidate pass of `kmeanspp` for dense rows: dist[t][x] = min(closest[x], D^2(x,
// candidate t)) (closest null: D^2 itself) and each chunk's sum of dist[t]. The candidates are
// given as rows, so they may lie in another block.
void dense_candidate_costs(const MixedRows& rows, int64_t n_candidates,
                           const double* candidates,  // IN n_candidates x d
                           const double* closest,     // IN n, or null
                           double* dist,              // OUT n_candidates x n
                           double* chunk_potentials,  // OUT n_chunks(n) x n_candidates
                           int n_threads);

// ---- Dense k-means with exact bounds: U-SPEC's representatives (src/dense_bounded.cpp) -------

// Plain k-means on dense, unweighted rows (X, n x d): the objects assigned to the nearest of the
// seed rows X[seeds[0..n_clusters)] as `assign` does (lowest index among the minima), then
// `lloyd` from that labelling with max_iter and tol. Labels, centres, objective, n_iter and the
// stop are bit for bit those of that assign + lloyd pair (dense_weight 1, no partitions), for
// any n_threads.
//
// Exact savings (Hamerly 2010, with slack for rounding): each object keeps a lower bound on its
// Euclidean distance to every centre but its own, lowered by the largest move of those centres
// after each update; its cost to its own centre is computed every pass (the objective needs it),
// and when that distance, raised by the rounding slack, is below the bound or below half the
// distance from its centre to the nearest other centre, no other centre can be the minimum nor
// tie with it, so no other cost is computed. Otherwise every cost is computed (centres stored by
// feature, so the K costs of an object vectorise; each cost is the same sum of squared
// differences in feature order as the engine's). Costs computed in floating point are within
// rel * cost + abs of the exact ones (rel = 64 eps (d + 16)); the bounds and tests carry that
// slack.
//
// stats (OUT 2): objects whose costs were all computed, and objects a bound settled, over all
// passes (the assignment to the seeds counted as computed).
LloydResult dense_lloyd_bounded(const double* X, int64_t n, int64_t d, int32_t n_clusters,
                                const int64_t* seeds,  // IN n_clusters, distinct, in [0, n)
                                int64_t max_iter, double tol, int n_threads,
                                int32_t* assignment,   // OUT n
                                double* centers,       // OUT n_clusters x d
                                int64_t* stats);       // OUT 2

}  // namespace cclust
