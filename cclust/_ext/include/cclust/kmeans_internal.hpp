// The pieces that the sources of the _kmeans module share; not an API (kmeans.hpp is one).
//
//   src/rows.cpp             argument checks of the entry points
//   src/lookup_simd.cpp      the categorical lookup kernel in instruction-set variants, dispatch
//   src/engine.cpp           identical label rows and the Engine: tables, passes, tallies
//   src/centres.cpp          centroids from tallies, the empty-cluster rule, tally and
//                            centres_from_tally
//   src/lloyd.cpp            the stopping rule, lloyd, assign, objective, centroids, kmeanspp
//   src/blocks.cpp           the per-block kernels of an executor that holds rows in blocks
//   src/gkcc_candidates.cpp  GKCC's candidate runs of one greedy step
//   src/dense_bounded.cpp    dense k-means with exact bounds
//
// Every driver of Lloyd passes runs lloyd_loop (below) over its own pass, so their stops,
// undone rises and traces agree by construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cclust/kmeans.hpp"
#include "cclust/lookup.hpp"
#include "cclust/parallel.hpp"

namespace cclust::kmeans_detail {

// ---- Argument checks (rows.cpp) --------------------------------------------------------------

[[noreturn]] void fail(const std::string& what);
std::string str(int64_t v);
std::string str(double v);

struct Shape {
    int64_t n, d, r, width;  // width = offsets[r], the one-hot columns
};

Shape validate_rows(const MixedRows& rows);
// The block kernels of an executor that holds partitions only (d = 0) or dense rows only
// (r = 0, unweighted).
Shape validate_categorical(const MixedRows& rows, const char* what);
Shape validate_dense(const MixedRows& rows, const char* what);
bool weighted(const MixedRows& rows);
void require_unweighted(const MixedRows& rows, const char* what);
void check_n_clusters(int32_t n_clusters, int64_t n, bool at_most_n);
void check_assignment(const int32_t* assignment, int64_t n, int32_t n_clusters, bool allow_unassigned);
void check_centers(const Shape& sh, int64_t n_clusters, const double* dense, const double* cat);
[[noreturn]] void bad_partition_label(const MixedRows& rows, int64_t x);

// ---- The lookup kernel's variants (lookup_simd.cpp) ------------------------------------------

// out[j * stride + k] = sum over partitions i, in order, of table[(slot_of[i] + L[j, i]) * stride
// + k] for `count` objects, partitions walked in groups of `group`.
typedef void (*LookupRows)(const void* labels, int64_t r, int64_t count,
                           const int64_t* slot_of, const double* table, int64_t stride,
                           int64_t group, double* out);

int32_t current_variant();
// The variant's kernel for label codes of `label_bytes` (4, 2 or 1), or null where only
// object_costs runs (no vector extension).
LookupRows lookup_kernel(int32_t variant, int32_t label_bytes);
// Doubles per table row of `kc` centres in a variant.
int64_t row_width(int32_t variant, int64_t kc);
// Partitions per group of the lookup kernel for a table of slots x kp doubles.
int64_t partition_group(const Slots& slots, int64_t r, int64_t kp);

// The k-means++ candidate costs of `count` objects when every partition has the same weight w:
// out[j * stride + t] = sums[m], m the number of partitions in which object j (a row of r codes,
// label_bytes each, from `labels`) and candidate t (a row of `padded` codes in `candidates`,
// mismatch_padded(r), the codes past r missing) are both labelled and differ. Each entry of the
// candidate table is 0 or 2 w (Engine::build_candidate_table), and adding +0 to a sum that
// starts at +0 changes no bit, so with sums[m] = m times 2 w added in turn from +0 these are the
// lookup sums bit for bit. Entries kc..stride-1 are 0. Null where the variant has no such
// kernel (the table's lookups run instead).
typedef void (*MismatchRows)(const void* labels, int64_t r, int64_t count, const void* candidates,
                             int64_t padded, int64_t kc, const double* sums, int64_t stride, double* out);
MismatchRows mismatch_kernel(int32_t variant, int32_t label_bytes);
// Codes per candidate row of a MismatchRows kernel: r rounded up to whole 64-byte vectors.
int64_t mismatch_padded(int64_t r, int32_t label_bytes);

// out[b * kt + t] = squared_distance(X + b * d, candidate t) for `count` rows of X (row-major,
// d features) and the candidates by feature in ct (d x kt, kt a multiple of 8): the sums of
// squared_distance lane for lane, so the same bits. Null where no vector extension is built.
typedef void (*DenseCosts)(const double* X, int64_t count, int64_t d, const double* ct, int64_t kt,
                           double* out);
DenseCosts dense_costs_kernel(int32_t variant);
// Rows per call of a DenseCosts kernel in candidate_pass.
constexpr int64_t kDenseCostRows = 24;

// ---- The engine (engine.cpp) -----------------------------------------------------------------

// Lowest index among the minima of acc[0..kc).
inline int64_t argmin(const double* acc, int64_t kc) {
    int64_t b = 0;
    double bv = acc[0];
    for (int64_t k = 1; k < kc; ++k) {
        if (acc[k] < bv) {
            bv = acc[k];
            b = k;
        }
    }
    return b;
}

// Members, labels and feature sums per cluster; row n_clusters collects objects assigned to no
// cluster (assignment -1) so P_i and the whole-data centre always cover every object.
struct Tally {
    std::vector<int64_t> counts;  // (K + 1) x slots; zero for weighted rows (see wcounts)
    std::vector<int64_t> sizes;   // K + 1
    std::vector<double> sums;     // (K + 1) x d (weighted sums with object weights)
    // Weighted rows only: label counts weighted by w_x s_x (slots layout) and cluster masses.
    std::vector<double> wcounts;  // (K + 1) x slots
    std::vector<double> mass;     // K + 1
};

struct Centres {
    std::vector<double> dense;  // K x d
    std::vector<double> cat;    // K x width
    void swap(Centres& other) {
        dense.swap(other.dense);
        cat.swap(other.cat);
    }
};

// Buffers and passes shared by every entry point, sized once per call so no pass allocates and
// nothing inside a parallel region can throw. Partition labels are validated by count() or
// check_labels() before any other pass reads them.
class Engine {
public:
    Engine(const MixedRows& rows, const Shape& sh, int64_t kc, int n_threads);

    const Slots& slots() const { return slots_; }

    // Groups objects with identical label rows (see row_hash) when that pays: afterwards every
    // pass computes the costs of the distinct rows only. Labels must have been validated. For
    // engines that run several passes over the same rows (lloyd, kmeanspp).
    void group_identical_rows();

    // Throws on the first row (lowest index, whatever the thread count) with a bad label.
    void check_labels();

    // Fold the categorical centres (kc x width) into the lookup table.
    void build_table(const double* cat);

    // k-means++ candidates as centres, given by their labels (kc x r): entry (label l, candidate
    // t) is the weighted squared distance 2 w_i [l != label of t] between one-hot blocks, 0
    // where t is unlabelled. When every w_i is the same double and the variant has a
    // MismatchRows kernel, the passes count label mismatches instead of looking the table up
    // (the same sums, see MismatchRows), until the next build_table.
    void build_candidate_table(const int32_t* candidate_labels);

    // Counts, sizes and feature sums of a labelling (per thread / per chunk, see reduce), and
    // the validation of every partition label.
    void count(const int32_t* assignment);

    // One Lloyd pass: the cost of every object to its current centre (summed per chunk), its
    // best centre, and the change of the tally from the current to the best labels (added by
    // reduce(tally, true)). Requires count() of the current labels before the first pass.
    // Fusing the tally here saves a separate contingency pass over the n x r label matrix.
    double lloyd_pass(const double* dense, const int32_t* labels, int32_t* best,
                      double* best_cost, int64_t* changed);

    // Costs against given centres: to `given[x]` when given, else to the cheapest centre (written
    // to best[x]). Returns the sum of the costs, in chunk order.
    double cost_pass(const double* dense, const int32_t* given, int32_t* best, double* costs);

    // k-means++: dist[t][x] = min(closest[x], D^2(x, candidate t)) (closest null = +inf) and
    // potentials[t] = sum over x of dist[t][x] in chunk order.
    void candidate_pass(const double* dense, const double* closest, double* dist,
                        double* potentials);

    // The partial of centre (or candidate) t in chunk c of the last pass.
    double chunk_value(int64_t c, int64_t t) const {
        return chunk_value_[static_cast<size_t>(c * kc_ + t)];
    }

    // Every chunk's partials of the first `lanes` centres of the last pass, chunk-major
    // (out: chunks x lanes).
    void copy_chunk_values(int64_t lanes, double* out) const;

    int64_t chunks() const { return chunks_; }

    // Per-thread counts (of count()) or their changes (of lloyd_pass(), with `update`) into out.
    // Integer counts are exact in any order; feature sums are added chunk by chunk in order.
    void reduce(Tally& out, bool update) const;

private:
    // Entries (centre k, labels 0..K_i-1 of partition i) of the table, indexed by label.
    struct Column {
        Lanes* base;
        int64_t stride;
        int64_t lane;
        double& operator[](int64_t l) const { return base[l * stride].v[lane]; }
    };

    Column column(int64_t k, int64_t i);

    // The lookup sums of every distinct row (grouped engines only), before a pass reads them.
    void distinct_costs();

    // The lookup sums of `count` rows of codes (out: count x kp): the variant's lookup kernel
    // over the table, or its mismatch kernel over the candidates' codes.
    void row_costs(const uint8_t* labels, int64_t count, double* out) const;

    void clear_table();

    void ensure_tally();

    double object_weight(int64_t x) const;

    // Chunk c's weighted tally (label counts by w_x s_x, masses, dense sums by w_x) of the
    // labels in `assignment` (-1: the row of objects in no cluster), recomputed from scratch.
    // Labels are valid here (count() checks the chunk first; a Lloyd pass follows a count()).
    void weigh_chunk(int64_t c, int64_t start, int64_t stop, const int32_t* assignment);

    // Squared Euclidean table of scaled rows: entry -2 w_i m[l]; the centre's constant
    // sum_i w_i ||m_i||^2 and the object's s_x^2 sum_i w_i [labelled] are added per object.
    void build_scaled_table(const double* cat);

    // Scaled rows: the table gave sum_i -2 w_i m[L[x,i]] per centre; complete the costs.
    void finish_costs(int64_t x, double* acc) const;

    void zero_thread_tally();

    void add_row(int64_t x, double* sums) const;

    double chunk_sum(int64_t lane) const;

    // Calls each(x, acc) for x = start..stop-1 in order, acc holding the object's costs to the
    // kc centres (finished for scaled rows): object by object through object_costs, or, with no
    // dense block, kBlockRows objects at a time through the variant's lookup kernel (the same
    // sums, bit for bit).
    template <int KQ, class Each>
    void each_cost(int64_t start, int64_t stop, int tid, const double* dense, Each&& each);

    template <int KQ>
    void lloyd_pass_impl(const double* dense, const int32_t* labels, int32_t* best,
                         double* best_cost);

    template <int KQ>
    void cost_pass_impl(const double* dense, const int32_t* given, int32_t* best, double* costs);

    template <int KQ>
    void candidate_pass_impl(const double* dense, const double* closest, double* dist);

    const MixedRows& rows_;
    const Shape sh_;
    const Slots slots_;
    const LookupRows lookup_;  // the variant's kernel when there is no dense block, else null
    const int64_t kc_;      // centres compared per pass (clusters or k-means++ trials)
    const int64_t kq_;      // Lanes per table row
    const int64_t kp_;      // kc_ padded to whole Lanes
    const int64_t chunks_;
    const int nt_;
    std::vector<Lanes> table_;         // slots x kq (+ alignment); missing slots stay zero
    Lanes* const table_base_;          // its first row, on a cache-line boundary
    std::vector<double> chunk_value_;  // chunks x kc: objective (lane 0) or potentials
    std::vector<int64_t> chunk_count_;
    const int64_t group_of_;           // partitions per group of the lookup kernel (r: one group)
    const int64_t call_rows_;          // objects per call of the lookup kernel
    std::vector<double> scratch_;      // nt x kp (kernel: nt x call_rows_ x kp), per thread costs
    std::vector<Lanes> lane_scratch_;  // nt x kq, accumulators for the any-count fallback
    std::vector<int64_t> thread_counts_;  // nt x (kc + 1) x slots
    std::vector<int64_t> thread_sizes_;   // nt x (kc + 1)
    std::vector<double> chunk_sums_;      // chunks x (kc + 1) x d
    const bool weighted_;                 // object weights or row scales given
    const bool scaled_;                   // row scales given
    std::vector<double> chunk_wcounts_;   // weighted: chunks x (kc + 1) x slots
    std::vector<double> chunk_mass_;      // weighted: chunks x (kc + 1)
    std::vector<double> centre_norm_;     // scaled: kc, sum_i w_i ||m_{k,i}||^2
    std::vector<double> row_norm_;        // scaled: n, s_x^2 sum of w_i over labelled i
    std::vector<int64_t> group_;          // grouped: n, each object's distinct row; else empty
    std::vector<uint8_t> distinct_labels_;  // grouped: m x r codes (label_bytes each), the distinct rows
    std::vector<double> distinct_costs_;  // grouped: m x kp, their lookup sums in the last pass
    // Candidates counted by mismatches (build_candidate_table): the kernel where it applies
    // (no dense block, unweighted rows, every w_i the same double), whether the current
    // centres are candidates, their codes (kc x mismatch_padded) and sums[m] (m = 0..r).
    const MismatchRows mismatch_;
    bool mismatch_on_ = false;
    std::vector<uint8_t> candidate_codes_;
    std::vector<double> mismatch_sums_;
};

// ---- Centroids and tallies (centres.cpp) -----------------------------------------------------

// Centroids from a tally (see kmeans.hpp for the fallbacks of empty blocks and clusters).
void centres_from_tally(const MixedRows& rows, const Shape& sh, const Slots& slots,
                        int64_t n_clusters, const Tally& tally, double* dense, double* cat);
// The engine's tally (label slots, see Slots) in the one-hot columns of the public functions.
void tally_to_columns(const MixedRows& rows, const Shape& sh, const Slots& slots,
                      int64_t n_clusters, const Tally& tally, int64_t* counts, int64_t* sizes);
// The tally of a labelling in which -1 means "in no cluster" (checked here, with the labels).
Tally tally_of(const MixedRows& rows, const Shape& sh, int32_t n_clusters,
               const int32_t* assignment, int n_threads);
bool any_empty(const Tally& tally, int64_t n_clusters);

// ---- The Lloyd loop --------------------------------------------------------------------------

// The labels and costs a Lloyd loop works on: `labels` holds the start before the loop and the
// result after it; n_trace counts the passes that entered the trace.
struct LloydState {
    explicit LloydState(int64_t n)
        : labels(static_cast<size_t>(n)), best(static_cast<size_t>(n)),
          prev_labels(static_cast<size_t>(n)), best_cost(static_cast<size_t>(n)) {}
    std::vector<int32_t> labels, best, prev_labels;
    std::vector<double> best_cost;
    double objective = 0.0;
    int64_t n_trace = 0;
};

// Lloyd passes until lloyd_verdict stops them; returns the stop (kStop*). A pass policy P gives
//
//   double pass(const int32_t* labels, int32_t* best, double* best_cost, int64_t* changed)
//       the objective of `labels` at the current centres, each object's best centre (ties keep
//       its current one) and its cost there, and how many objects would move;
//   void keep()     the pass's centres become the previous ones (the update overwrites the
//                   current ones);
//   void restore()  the previous centres become the current ones again (a rise is undone);
//   void update(int32_t* labels, const double* best_cost)
//       the tally of the new labels, the empty-cluster rule (reseed, which may move labels) and
//       the new centres.
//
// A rise of the objective puts the previous labels and centres back and stops with kStopRose,
// the risen pass left out of the trace (trace[i] = objective of pass i when trace is given).
template <class P>
int32_t lloyd_loop(P& policy, LloydState& s, int64_t max_iter, double tol, double* trace) {
    double prev_objective = 0.0;
    for (int64_t it = 0;; ++it) {
        int64_t changed = 0;
        s.objective = policy.pass(s.labels.data(), s.best.data(), s.best_cost.data(), &changed);
        const int32_t verdict = lloyd_verdict(it, s.objective, prev_objective, changed, max_iter, tol);
        if (verdict == kStopRose) {
            s.labels.swap(s.prev_labels);
            policy.restore();
            s.objective = prev_objective;
            return verdict;
        }
        if (trace != nullptr) trace[s.n_trace] = s.objective;
        s.n_trace += 1;
        if (verdict >= 0) return verdict;
        s.prev_labels.swap(s.labels);
        s.labels.swap(s.best);
        policy.keep();
        prev_objective = s.objective;
        policy.update(s.labels.data(), s.best_cost.data());
    }
}

}  // namespace cclust::kmeans_detail
