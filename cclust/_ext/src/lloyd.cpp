// The stopping rule, the in-memory Lloyd driver (lloyd: the Engine's passes in lloyd_loop), assign,
// objective, centroids and k-means++ seeding (Arthur & Vassilvitskii 2007, greedy trials).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cclust/kmeans_internal.hpp"

namespace cclust {

using namespace kmeans_detail;

int32_t lloyd_verdict(int64_t it, double objective, double previous_objective, int64_t changed,
                      int64_t max_iter, double tol) {
    // Any rise (only round-off or the UH smoothing can cause one, the mean being optimal) is
    // undone, so the trace never rises and the best labels seen are returned.
    if (it > 0 && objective > previous_objective) return kStopRose;
    if (it > 0 && (previous_objective - objective) < tol * std::fabs(previous_objective)) {
        return kStopTol;
    }
    if (changed == 0) return kStopStable;
    if (it == max_iter) return kStopMaxIter;
    return -1;
}

double running_sum(const double* values, int64_t n, double start, double* cum) {
    double running = start;
    for (int64_t x = 0; x < n; ++x) {
        running += values[x];
        cum[x] = running;
    }
    return running;
}

int64_t first_above(const double* cum, int64_t n, double target) {
    return std::upper_bound(cum, cum + n, target) - cum;
}

int64_t last_positive(const double* values, int64_t n) {
    int64_t x = n - 1;
    while (x >= 0 && !(values[x] > 0.0)) --x;
    return x;
}

namespace {

// lloyd's pass policy for lloyd_loop: the Engine's pass over the table of the current centres,
// which also tallies the moves; the update adds them, re-seeds empty clusters and recomputes the
// centres.
class EnginePasses {
public:
    EnginePasses(const MixedRows& rows, const Shape& sh, Engine& engine, Tally& tally, int64_t k)
        : rows_(rows), sh_(sh), engine_(engine), tally_(tally), k_(k),
          cur_{std::vector<double>(static_cast<size_t>(k * sh.d)),
               std::vector<double>(static_cast<size_t>(k * sh.width))},
          prev_(cur_) {}

    const Centres& current() const { return cur_; }

    double pass(const int32_t* labels, int32_t* best, double* best_cost, int64_t* changed) {
        engine_.build_table(cur_.cat.data());
        return engine_.lloyd_pass(cur_.dense.data(), labels, best, best_cost, changed);
    }

    void keep() { cur_.swap(prev_); }
    void restore() { cur_.swap(prev_); }

    void update(int32_t* labels, const double* best_cost) {
        engine_.reduce(tally_, true);  // the pass tallied the moves to the new labels
        if (any_empty(tally_, k_)) {
            reseed(labels, best_cost, sh_.n, tally_.sizes.data(), k_);
            engine_.count(labels);
            engine_.reduce(tally_, false);
        }
        centres();
    }

    void centres() {
        centres_from_tally(rows_, sh_, engine_.slots(), k_, tally_, cur_.dense.data(), cur_.cat.data());
    }

private:
    const MixedRows& rows_;
    const Shape& sh_;
    Engine& engine_;
    Tally& tally_;
    const int64_t k_;
    Centres cur_, prev_;  // the centres of the next pass, and of the pass before
};

}  // namespace

LloydResult lloyd(const MixedRows& rows, int32_t n_clusters, int32_t* assignment,
                  int64_t max_iter, double tol, int n_threads, double* objective_trace,
                  double* dense_centers, double* cat_centers) {
    const Shape sh = validate_rows(rows);
    check_n_clusters(n_clusters, sh.n, true);
    if (max_iter < 0) fail("max_iter must be >= 0, got " + str(max_iter));
    if (!(tol >= 0.0 && std::isfinite(tol))) fail("tol must be finite and >= 0, got " + str(tol));
    if (objective_trace == nullptr) fail("objective_trace is null");
    if (sh.d > 0 && dense_centers == nullptr) fail("dense_centers is null but d = " + str(sh.d));
    if (sh.width > 0 && cat_centers == nullptr) fail("cat_centers is null but offsets[r] > 0");
    check_assignment(assignment, sh.n, n_clusters, false);

    const int64_t n = sh.n, k_count = n_clusters;
    Engine engine(rows, sh, k_count, n_threads);
    LloydState s(n);
    std::copy(assignment, assignment + n, s.labels.begin());
    Tally tally;
    EnginePasses passes(rows, sh, engine, tally, k_count);

    engine.count(s.labels.data());  // also validates every partition label, once per call
    engine.group_identical_rows();
    engine.reduce(tally, false);
    passes.centres();
    if (any_empty(tally, k_count)) {
        engine.build_table(passes.current().cat.data());
        engine.cost_pass(passes.current().dense.data(), s.labels.data(), nullptr, s.best_cost.data());
        reseed(s.labels.data(), s.best_cost.data(), n, tally.sizes.data(), k_count);
        engine.count(s.labels.data());
        engine.reduce(tally, false);
        passes.centres();
    }

    LloydResult result;
    result.stop = lloyd_loop(passes, s, max_iter, tol, objective_trace);
    std::copy(s.labels.begin(), s.labels.end(), assignment);
    std::copy(passes.current().dense.begin(), passes.current().dense.end(), dense_centers);
    std::copy(passes.current().cat.begin(), passes.current().cat.end(), cat_centers);
    result.objective = s.objective;
    result.n_trace = s.n_trace;
    result.n_iter = result.n_trace - 1;
    result.converged = result.stop != kStopMaxIter;
    return result;
}

double assign(const MixedRows& rows, int32_t n_clusters, const double* dense_centers,
              const double* cat_centers, int32_t* assignment, double* costs, int n_threads) {
    const Shape sh = validate_rows(rows);
    check_n_clusters(n_clusters, sh.n, false);
    check_centers(sh, n_clusters, dense_centers, cat_centers);
    if (sh.n > 0 && assignment == nullptr) fail("assignment is null");
    Engine engine(rows, sh, n_clusters, n_threads);
    engine.check_labels();
    engine.build_table(cat_centers);
    return engine.cost_pass(dense_centers, nullptr, assignment, costs);
}

double objective(const MixedRows& rows, int32_t n_clusters, const double* dense_centers,
                 const double* cat_centers, const int32_t* assignment, double* costs,
                 int n_threads) {
    const Shape sh = validate_rows(rows);
    check_n_clusters(n_clusters, sh.n, false);
    check_centers(sh, n_clusters, dense_centers, cat_centers);
    check_assignment(assignment, sh.n, n_clusters, false);
    Engine engine(rows, sh, n_clusters, n_threads);
    engine.check_labels();
    engine.build_table(cat_centers);
    return engine.cost_pass(dense_centers, assignment, nullptr, costs);
}

void centroids(const MixedRows& rows, int32_t n_clusters, const int32_t* assignment,
               double* dense_centers, double* cat_centers, int n_threads) {
    const Shape sh = validate_rows(rows);
    if (sh.d > 0 && dense_centers == nullptr) fail("dense_centers is null but d = " + str(sh.d));
    if (sh.width > 0 && cat_centers == nullptr) fail("cat_centers is null but offsets[r] > 0");
    const Tally tally = tally_of(rows, sh, n_clusters, assignment, n_threads);
    centres_from_tally(rows, sh, Slots(rows.offsets, sh.r), n_clusters, tally, dense_centers, cat_centers);
}

void kmeanspp(const MixedRows& rows, int32_t n_clusters, int64_t first, const double* uniforms,
              int64_t n_trials, int n_threads, int64_t* seeds) {
    const Shape sh = validate_rows(rows);
    require_unweighted(rows, "kmeanspp");
    check_n_clusters(n_clusters, sh.n, true);
    const int64_t n = sh.n, d = sh.d, k_count = n_clusters;
    if (first < 0 || first >= n) fail("first must be in 0.." + str(n - 1) + ", got " + str(first));
    if (n_trials < 1) fail("n_trials must be >= 1, got " + str(n_trials));
    if (seeds == nullptr) fail("seeds is null");
    if (k_count > 1 && uniforms == nullptr) fail("uniforms is null");
    for (int64_t e = 0; e < (k_count - 1) * n_trials; ++e) {
        if (!(uniforms[e] >= 0.0 && uniforms[e] < 1.0)) {
            fail("uniforms must lie in [0, 1), got " + str(uniforms[e]) + " at flat index " +
                 str(e));
        }
    }
    const auto un = static_cast<size_t>(n);
    std::vector<char> chosen(un, 0);
    std::vector<double> closest(un), cum(un), potentials(static_cast<size_t>(n_trials));
    std::vector<double> dist(static_cast<size_t>(n_trials) * un);
    std::vector<double> dense(static_cast<size_t>(n_trials * d));
    std::vector<int64_t> candidates(static_cast<size_t>(n_trials));
    std::vector<int32_t> candidate_labels(static_cast<size_t>(n_trials * sh.r));

    auto gather = [&](Engine& engine, int64_t count) {
        for (int64_t t = 0; t < count; ++t) {
            const int64_t c = candidates[static_cast<size_t>(t)];
            if (sh.r > 0) {
                with_label_codes(rows.labels, rows.label_bytes, [&](const auto* labels) {
                    for (int64_t i = 0; i < sh.r; ++i) {
                        candidate_labels[static_cast<size_t>(t * sh.r + i)] =
                            static_cast<int32_t>(label_code(labels[c * sh.r + i]));
                    }
                });
            }
            if (d > 0) std::copy(rows.X + c * d, rows.X + (c + 1) * d, dense.begin() + t * d);
        }
        if (sh.r > 0) engine.build_candidate_table(candidate_labels.data());
    };

    {
        Engine engine(rows, sh, 1, n_threads);
        engine.check_labels();
        candidates[0] = first;
        gather(engine, 1);
        engine.candidate_pass(dense.data(), nullptr, closest.data(), potentials.data());
    }
    seeds[0] = first;
    chosen[static_cast<size_t>(first)] = 1;

    Engine engine(rows, sh, n_trials, n_threads);
    if (k_count > 1) engine.group_identical_rows();  // labels checked by the first engine
    for (int64_t s = 1; s < k_count; ++s) {
        // A running sum in object order, so the draw is the same on any machine and thread count.
        const double total = running_sum(closest.data(), n, 0.0, cum.data());
        int64_t seed = -1;
        if (total > 0.0) {
            const int64_t last = std::max<int64_t>(last_positive(closest.data(), n), 0);
            for (int64_t t = 0; t < n_trials; ++t) {
                const double target = uniforms[(s - 1) * n_trials + t] * total;
                int64_t x = first_above(cum.data(), n, target);
                if (x >= n) x = last;  // u * total rounded up to total
                candidates[static_cast<size_t>(t)] = x;
            }
            gather(engine, n_trials);
            engine.candidate_pass(dense.data(), closest.data(), dist.data(), potentials.data());
            int64_t win = 0;
            for (int64_t t = 1; t < n_trials; ++t) {
                if (potentials[static_cast<size_t>(t)] < potentials[static_cast<size_t>(win)]) {
                    win = t;
                }
            }
            seed = candidates[static_cast<size_t>(win)];
            if (!chosen[static_cast<size_t>(seed)]) {
                std::copy(dist.begin() + win * n, dist.begin() + (win + 1) * n, closest.begin());
            } else {
                seed = -1;  // only reachable with non-finite features; fall back below
            }
        }
        if (seed < 0) {
            // Every object coincides with a seed: no draw can separate them, take the next index.
            seed = 0;
            while (chosen[static_cast<size_t>(seed)]) ++seed;
            closest[static_cast<size_t>(seed)] = 0.0;
        }
        seeds[s] = seed;
        chosen[static_cast<size_t>(seed)] = 1;
    }
}

}  // namespace cclust
