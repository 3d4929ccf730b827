// The per-block kernels of an executor that holds the rows in blocks whose first objects are
// multiples of kChunk (cclust's Dask executor): thin wrappers over the Engine, so every float is
// computed by the code that `assign`, `lloyd` and `kmeanspp` run, chunk by chunk.
#include <algorithm>
#include <exception>
#include <mutex>
#include <vector>

#include "cclust/kmeans_internal.hpp"

namespace cclust {

using namespace kmeans_detail;

double lloyd_pass(const MixedRows& rows, int32_t n_clusters, const double* cat_centers,
                  const int32_t* assignment, int32_t* best, double* best_cost,
                  double* chunk_objective, int64_t* moved, int64_t* delta_counts,
                  int64_t* delta_sizes, int n_threads) {
    const Shape sh = validate_categorical(rows, "lloyd_pass");
    require_unweighted(rows, "lloyd_pass");
    check_n_clusters(n_clusters, sh.n, false);
    check_centers(sh, n_clusters, nullptr, cat_centers);
    check_assignment(assignment, sh.n, n_clusters, false);
    if (sh.n > 0 && (best == nullptr || best_cost == nullptr || chunk_objective == nullptr)) {
        fail("best, best_cost or chunk_objective is null");
    }
    if (moved == nullptr || delta_sizes == nullptr) fail("moved or delta_sizes is null");
    if (sh.width > 0 && delta_counts == nullptr) fail("delta_counts is null but offsets[r] > 0");
    Engine engine(rows, sh, n_clusters, n_threads);
    engine.check_labels();
    engine.build_table(cat_centers);
    const double total = engine.lloyd_pass(nullptr, assignment, best, best_cost, moved);
    for (int64_t c = 0; c < engine.chunks(); ++c) chunk_objective[c] = engine.chunk_value(c, 0);
    Tally delta;
    engine.reduce(delta, false);  // from zero: the pass's changes alone
    tally_to_columns(rows, sh, engine.slots(), n_clusters, delta, delta_counts, delta_sizes);
    return total;
}

void candidate_costs(const MixedRows& rows, int64_t n_candidates, const int32_t* candidate_labels,
                     const double* closest, double* dist, double* chunk_potentials,
                     int n_threads) {
    const Shape sh = validate_categorical(rows, "candidate_costs");
    require_unweighted(rows, "candidate_costs");
    if (n_candidates < 1) fail("n_candidates must be >= 1, got " + str(n_candidates));
    if (sh.n > 0 && (dist == nullptr || chunk_potentials == nullptr)) {
        fail("dist or chunk_potentials is null");
    }
    if (candidate_labels == nullptr) fail("candidate_labels is null");
    Engine engine(rows, sh, n_candidates, n_threads);
    engine.check_labels();
    const Slots& slots = engine.slots();
    for (int64_t t = 0; t < n_candidates; ++t) {
        if (row_has_bad_label(candidate_labels + t * sh.r, slots.size.data(), sh.r)) {
            fail("candidate " + str(t) + " has a label outside 0..K_i-1 (or -1 for missing)");
        }
    }
    engine.build_candidate_table(candidate_labels);
    std::vector<double> potentials(static_cast<size_t>(n_candidates));
    engine.candidate_pass(nullptr, closest, dist, potentials.data());
    engine.copy_chunk_values(n_candidates, chunk_potentials);
}

namespace {

// body(engine, c, start) for every chunk c of the rows, each with an engine of its own over that
// chunk alone (k centres, one thread): a one-chunk engine computes what the whole-array engine
// computes for that chunk. Chunks spread over n_threads; the first exception is rethrown.
template <class Body>
void each_chunk_engine(const MixedRows& rows, int64_t k, int n_threads, Body&& body) {
    std::exception_ptr error;
    std::mutex error_mutex;
    for_each_chunk(rows.n, n_threads, [&](int64_t c, int64_t start, int64_t stop) {
        try {
            MixedRows part = rows;
            part.n = stop - start;
            part.X = rows.X + start * rows.d;
            Engine engine(part, Shape{part.n, rows.d, 0, 0}, k, 1);
            body(engine, c, start);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    });
    if (error) std::rethrow_exception(error);
}

// The chunk's row sums per cluster of `labels` (from zero, in object order: what `lloyd` adds
// chunk by chunk into its centres) and its members per cluster, by the engine's count().
void chunk_tally(Engine& engine, const int32_t* labels, int64_t k, int64_t d, double* sums,
                 int64_t* sizes) {
    engine.count(labels);
    Tally tally;
    engine.reduce(tally, false);
    std::copy(tally.sums.begin(), tally.sums.begin() + k * d, sums);
    std::copy(tally.sizes.begin(), tally.sizes.begin() + k, sizes);
}

void add_chunk_sizes(const std::vector<int64_t>& chunk_sizes, int64_t k, int64_t* sizes) {
    std::fill(sizes, sizes + k, int64_t{0});
    for (size_t e = 0; e < chunk_sizes.size(); ++e) sizes[static_cast<int64_t>(e) % k] += chunk_sizes[e];
}

}  // namespace

double dense_block_pass(const MixedRows& rows, int32_t n_clusters, const double* dense_centers,
                        const int32_t* assignment, int32_t* best, double* best_cost,
                        double* chunk_objective, int64_t* moved, double* chunk_sums,
                        int64_t* sizes, int n_threads) {
    const Shape sh = validate_dense(rows, "dense_block_pass");
    check_n_clusters(n_clusters, sh.n, false);
    check_centers(sh, n_clusters, dense_centers, nullptr);
    if (assignment != nullptr) check_assignment(assignment, sh.n, n_clusters, false);
    if (sh.n > 0 && (best == nullptr || best_cost == nullptr || chunk_objective == nullptr ||
                     chunk_sums == nullptr)) {
        fail("best, best_cost, chunk_objective or chunk_sums is null");
    }
    if (moved == nullptr || sizes == nullptr) fail("moved or sizes is null");
    const int64_t chunks = n_chunks(sh.n), d = sh.d, k = n_clusters;
    std::vector<int64_t> chunk_moved(static_cast<size_t>(chunks), 0);
    std::vector<int64_t> chunk_sizes(static_cast<size_t>(chunks * k), 0);
    each_chunk_engine(rows, k, n_threads, [&](Engine& engine, int64_t c, int64_t start) {
        engine.build_table(nullptr);  // no categorical block: an empty table, as lloyd builds it
        int64_t m = 0;
        chunk_objective[c] = assignment != nullptr
            ? engine.lloyd_pass(dense_centers, assignment + start, best + start, best_cost + start, &m)
            : engine.cost_pass(dense_centers, nullptr, best + start, best_cost + start);
        chunk_moved[static_cast<size_t>(c)] = m;
        chunk_tally(engine, best + start, k, d, chunk_sums + c * k * d, chunk_sizes.data() + c * k);
    });
    add_chunk_sizes(chunk_sizes, k, sizes);
    *moved = 0;
    double objective = 0.0;
    for (int64_t c = 0; c < chunks; ++c) {
        *moved += chunk_moved[static_cast<size_t>(c)];
        objective += chunk_objective[c];
    }
    return objective;
}

void dense_block_sums(const MixedRows& rows, int32_t n_clusters, const int32_t* assignment,
                      double* chunk_sums, int64_t* sizes, int n_threads) {
    const Shape sh = validate_dense(rows, "dense_block_sums");
    check_n_clusters(n_clusters, sh.n, false);
    check_assignment(assignment, sh.n, n_clusters, false);
    if (sh.n > 0 && chunk_sums == nullptr) fail("chunk_sums is null");
    if (sizes == nullptr) fail("sizes is null");
    const int64_t d = sh.d, k = n_clusters;
    std::vector<int64_t> chunk_sizes(static_cast<size_t>(n_chunks(sh.n) * k), 0);
    each_chunk_engine(rows, k, n_threads, [&](Engine& engine, int64_t c, int64_t start) {
        chunk_tally(engine, assignment + start, k, d, chunk_sums + c * k * d, chunk_sizes.data() + c * k);
    });
    add_chunk_sizes(chunk_sizes, k, sizes);
}

void dense_candidate_costs(const MixedRows& rows, int64_t n_candidates, const double* candidates,
                           const double* closest, double* dist, double* chunk_potentials,
                           int n_threads) {
    const Shape sh = validate_dense(rows, "dense_candidate_costs");
    if (n_candidates < 1) fail("n_candidates must be >= 1, got " + str(n_candidates));
    check_centers(sh, n_candidates, candidates, nullptr);
    if (sh.n > 0 && (dist == nullptr || chunk_potentials == nullptr)) fail("dist or chunk_potentials is null");
    Engine engine(rows, sh, n_candidates, n_threads);
    std::vector<double> potentials(static_cast<size_t>(n_candidates));
    engine.candidate_pass(candidates, closest, dist, potentials.data());
    engine.copy_chunk_values(n_candidates, chunk_potentials);
}

}  // namespace cclust
