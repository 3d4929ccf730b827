// Dense k-means with exact bounds (Hamerly 2010), for U-SPEC's representatives: the labels,
// centres and objective of the Engine's assign + lloyd, bit for bit, with most costs skipped.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "cclust/kmeans_internal.hpp"

namespace cclust {

using namespace kmeans_detail;

namespace {

// The engine's dense cost of one object to one centre: a sum of squared differences in feature
// order from +0 (times dense_weight 1, which changes no bit).
inline double dense_cost(const double* __restrict xr, const double* __restrict c, int64_t d) {
    double s = 0.0;
    for (int64_t j = 0; j < d; ++j) {
        const double t = xr[j] - c[j];
        s += t * t;
    }
    return s;
}

// dense_cost of four objects, each to its own centre, computed side by side: every sum goes
// through the same operations in the same order as dense_cost (so the same bits), but the four
// chains of dependent additions overlap instead of waiting on each other. Each pass prices
// every object at its own centre, and one chain per object left that pricing bound by the
// latency of the additions at the small K of select_k's resamples.
inline void dense_costs_of_four(const double* __restrict x0, const double* __restrict x1,
                                const double* __restrict x2, const double* __restrict x3,
                                const double* __restrict c0, const double* __restrict c1,
                                const double* __restrict c2, const double* __restrict c3, int64_t d,
                                double* __restrict out) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (int64_t j = 0; j < d; ++j) {
        const double t0 = x0[j] - c0[j], t1 = x1[j] - c1[j], t2 = x2[j] - c2[j], t3 = x3[j] - c3[j];
        s0 += t0 * t0;
        s1 += t1 * t1;
        s2 += t2 * t2;
        s3 += t3 * t3;
    }
    out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
}

// acc[c] = dense_cost(xr, centre c) for every centre, the centres stored by feature (ct[j * kt +
// c], kt >= k); each acc[c] goes through the same operations in the same order as dense_cost, and
// the loop over centres vectorises.
inline void dense_costs_by_feature(const double* __restrict xr, const double* __restrict ct, int64_t k,
                                   int64_t kt, int64_t d, double* __restrict acc) {
    for (int64_t c = 0; c < k; ++c) acc[c] = 0.0;
    for (int64_t j = 0; j < d; ++j) {
        const double v = xr[j];
        const double* __restrict col = ct + j * kt;
        for (int64_t c = 0; c < k; ++c) {
            const double t = v - col[c];
            acc[c] += t * t;
        }
    }
}

class BoundedDenseLloyd {
public:
    BoundedDenseLloyd(const double* X, int64_t n, int64_t d, int64_t k, int n_threads)
        : X_(X), n_(n), d_(d), k_(k), nt_(n_threads), chunks_(n_chunks(n)),
          rel_(64.0 * std::numeric_limits<double>::epsilon() * static_cast<double>(d + 16)),
          abs2_(static_cast<double>(d + 16) * std::numeric_limits<double>::min()),
          kt_((k + 7) / 8 * 8), kernel_(dense_costs_kernel(current_variant())),
          ct_(static_cast<size_t>(kt_ * d), 0.0), lower_(static_cast<size_t>(n), 0.0),
          half_gap_(static_cast<size_t>(k), 0.0), chunk_sums_(static_cast<size_t>(chunks_ * k * d)),
          chunk_value_(static_cast<size_t>(chunks_), 0.0), chunk_moved_(static_cast<size_t>(chunks_), 0),
          chunk_full_(static_cast<size_t>(chunks_), 0), chunk_bounded_(static_cast<size_t>(chunks_), 0),
          sizes_(static_cast<size_t>(k), 0), cur_(static_cast<size_t>(k * d)), prev_(cur_.size()) {}

    LloydResult run(const int64_t* seeds, int64_t max_iter, double tol, int32_t* out_labels, double* out_centres,
                    int64_t* stats) {
        const int64_t n = n_, d = d_, k = k_;
        LloydState s(n);
        for (int64_t c = 0; c < k; ++c) std::copy(X_ + seeds[c] * d, X_ + (seeds[c] + 1) * d, cur_.data() + c * d);
        seed_pass(cur_.data(), s.labels.data());  // assign's labels, and every object's bound
        prev_.swap(cur_);
        count_sizes(s.labels.data());
        centres_of(s.labels.data(), cur_.data());
        bool bounds_valid = true;
        if (std::find(sizes_.begin(), sizes_.end(), 0) != sizes_.end()) {  // lloyd's start: reseed
            for (int64_t x = 0; x < n; ++x) {
                s.best_cost[static_cast<size_t>(x)] = dense_cost(X_ + x * d, cur_.data() + s.labels[static_cast<size_t>(x)] * d, d);
            }
            reseed(s.labels.data(), s.best_cost.data(), n, sizes_.data(), k);
            centres_of(s.labels.data(), cur_.data());
            bounds_valid = false;
        }
        moved_bounds(prev_.data(), cur_.data(), s.labels.data(), bounds_valid);

        LloydResult result;
        result.stop = lloyd_loop(*this, s, max_iter, tol, nullptr);
        std::copy(s.labels.begin(), s.labels.end(), out_labels);
        std::copy(cur_.begin(), cur_.end(), out_centres);
        result.objective = s.objective;
        result.n_trace = s.n_trace;
        result.n_iter = result.n_trace - 1;
        result.converged = result.stop != kStopMaxIter;
        stats[0] = full_;
        stats[1] = bounded_;
        return result;
    }

    // The pass policy of lloyd_loop.
    double pass(const int32_t* labels, int32_t* best, double* best_cost, int64_t* changed) {
        return bounded_pass(cur_.data(), labels, best, best_cost, changed);
    }

    void keep() { cur_.swap(prev_); }
    void restore() { cur_.swap(prev_); }

    void update(int32_t* labels, const double* best_cost) {
        count_sizes(labels);
        bool bounds_valid = true;
        if (std::find(sizes_.begin(), sizes_.end(), 0) != sizes_.end()) {
            reseed(labels, best_cost, n_, sizes_.data(), k_);
            bounds_valid = false;  // a re-seeded object's bound was to its old cluster
        }
        centres_of(labels, cur_.data());
        moved_bounds(prev_.data(), cur_.data(), labels, bounds_valid);
    }

private:
    // A certified upper bound of the Euclidean distance whose computed square is s, and a
    // certified lower bound (the computed square is within rel * s + abs2 of the exact one).
    double upper(double s) const { return std::sqrt(s + abs2_) * (1.0 + rel_); }
    double lower(double s) const { return std::sqrt(std::max(0.0, s - abs2_)) * (1.0 - rel_); }

    // The centres by feature (d x kt, zeros past k), as dense_costs_by_feature and the variant's
    // kernel read them.
    void by_feature(const double* centres) {
        for (int64_t c = 0; c < k_; ++c) {
            for (int64_t j = 0; j < d_; ++j) ct_[static_cast<size_t>(j * kt_ + c)] = centres[c * d_ + j];
        }
    }

    // A thread's scratch: the costs of a block of rows (kDenseCostRows x kt), and for the bounded
    // pass the rows whose costs it needs (copied side by side) and their indices.
    struct Scratch {
        std::vector<double> acc, rows;
        std::vector<int64_t> index;
    };

    template <class Body>
    void chunks_with_scratch(Body&& body) {
        for_each_chunk_with(
            n_, nt_,
            [&]() {
                return Scratch{std::vector<double>(static_cast<size_t>(kDenseCostRows * kt_)),
                               std::vector<double>(static_cast<size_t>(kDenseCostRows * d_)),
                               std::vector<int64_t>(static_cast<size_t>(kDenseCostRows))};
            },
            [&](Scratch& scratch, int64_t c, int64_t start, int64_t stop) { body(scratch, c, start, stop); });
    }

    // The costs of `count` (<= kDenseCostRows) rows side by side from xr to every centre into acc
    // (count x kt): the variant's kernel, or dense_costs_by_feature row by row without one.
    void costs_of_rows(const double* xr, int64_t count, double* acc) const {
        if (kernel_ != nullptr) {
            kernel_(xr, count, d_, ct_.data(), kt_, acc);
            return;
        }
        for (int64_t b = 0; b < count; ++b) dense_costs_by_feature(xr + b * d_, ct_.data(), k_, kt_, d_, acc + b * kt_);
    }

    // `assign` to the seed rows: lowest index among the minima; each bound is the second cost.
    void seed_pass(const double* centres, int32_t* labels) {
        by_feature(centres);
        const int64_t d = d_, kt = kt_;
        chunks_with_scratch([&](Scratch& scratch, int64_t, int64_t start, int64_t stop) {
            double* acc = scratch.acc.data();
            for (int64_t x0 = start; x0 < stop; x0 += kDenseCostRows) {
                const int64_t count = std::min(kDenseCostRows, stop - x0);
                costs_of_rows(X_ + x0 * d, count, acc);
                for (int64_t b = 0; b < count; ++b) {
                    double rest;
                    const int64_t best = lowest_two(acc + b * kt, &rest);
                    labels[x0 + b] = static_cast<int32_t>(best);
                    lower_[static_cast<size_t>(x0 + b)] = lower_of_rest(rest);
                }
            }
        });
        full_ += n_;
    }

    // In one pass over the costs: the lowest index among the minima, and the smallest cost of
    // every other centre (infinite when there is none), which second_lower bounds. With a tie
    // for the minimum that cost is the minimum itself, so it is also the smallest cost of every
    // centre but any other minimum (the current cluster, kept on a tie).
    int64_t lowest_two(const double* acc, double* rest) const {
        int64_t b = 0;
        double first = acc[0], second = std::numeric_limits<double>::infinity();
        for (int64_t c = 1; c < k_; ++c) {
            const double v = acc[c];
            if (v < first) {
                second = first;
                first = v, b = c;
            } else if (v < second) {
                second = v;
            }
        }
        *rest = second;
        return b;
    }

    // second_lower's bound from the smallest cost of the other centres.
    double lower_of_rest(double rest) const { return std::isinf(rest) ? rest : lower(rest); }

    // Lower bound of the distance to every centre but b (infinite when there is none).
    double second_lower(const double* acc, int64_t b) const {
        double s = std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < k_; ++c) {
            if (c != b && acc[c] < s) s = acc[c];
        }
        return lower_of_rest(s);
    }

    // One Lloyd pass as the engine's: the objective of the current labels (per chunk, in order),
    // every object's best centre (ties keep the current one) and its cost there.
    double bounded_pass(const double* centres, const int32_t* labels, int32_t* best, double* best_cost,
                        int64_t* changed) {
        by_feature(centres);
        const int64_t d = d_, kt = kt_;
        chunks_with_scratch([&](Scratch& scratch, int64_t c, int64_t start, int64_t stop) {
            double objective = 0.0;
            int64_t moved = 0, full = 0, queued = 0;
            // The objects whose bounds do not settle them wait in the scratch (their rows copied
            // side by side) until a block of them is full; each one's outcome depends on its own
            // costs only, so the order they are decided in changes nothing.
            auto decide_queued = [&]() {
                double* acc = scratch.acc.data();
                costs_of_rows(scratch.rows.data(), queued, acc);
                for (int64_t t = 0; t < queued; ++t) {
                    const int64_t x = scratch.index[static_cast<size_t>(t)];
                    const double* costs = acc + t * kt;
                    const int64_t a = labels[x];
                    double rest;
                    int64_t b = lowest_two(costs, &rest);
                    if (costs[a] == costs[b]) b = a;  // ties keep the current cluster
                    best[x] = static_cast<int32_t>(b);
                    best_cost[x] = costs[b];
                    lower_[static_cast<size_t>(x)] = lower_of_rest(rest);
                    moved += b != a;
                }
                queued = 0;
            };
            double owns[4], reaches[4];
            for (int64_t x = start; x < stop; ++x) {
                const double* xr = X_ + x * d;
                const int64_t a = labels[x];
                const int64_t slot = (x - start) % 4;
                if (slot == 0) {  // the own costs and their reaches of this object and the next three
                    if (stop - x >= 4) {
                        dense_costs_of_four(xr, xr + d, xr + 2 * d, xr + 3 * d, centres + a * d,
                                            centres + labels[x + 1] * d, centres + labels[x + 2] * d,
                                            centres + labels[x + 3] * d, d, owns);
                        for (int t = 0; t < 4; ++t) reaches[t] = upper(owns[t]);  // independent roots overlap
                    } else {
                        for (int64_t t = 0; t < stop - x; ++t) {
                            owns[t] = dense_cost(xr + t * d, centres + labels[x + t] * d, d);
                            reaches[t] = upper(owns[t]);
                        }
                    }
                }
                const double own = owns[slot];
                objective += own;
                const double reach = reaches[slot];
                if (reach < lower_[static_cast<size_t>(x)] || reach < half_gap_[static_cast<size_t>(a)]) {
                    best[x] = static_cast<int32_t>(a);
                    best_cost[x] = own;
                    continue;
                }
                full += 1;
                scratch.index[static_cast<size_t>(queued)] = x;
                std::copy(xr, xr + d, scratch.rows.data() + queued * d);
                if (++queued == kDenseCostRows) decide_queued();
            }
            if (queued > 0) decide_queued();
            chunk_value_[static_cast<size_t>(c)] = objective;
            chunk_moved_[static_cast<size_t>(c)] = moved;
            chunk_full_[static_cast<size_t>(c)] = full;
            chunk_bounded_[static_cast<size_t>(c)] = (stop - start) - full;
        });
        double total = 0.0;
        int64_t moved = 0;
        for (int64_t c = 0; c < chunks_; ++c) {
            total += chunk_value_[static_cast<size_t>(c)];
            moved += chunk_moved_[static_cast<size_t>(c)];
            full_ += chunk_full_[static_cast<size_t>(c)];
            bounded_ += chunk_bounded_[static_cast<size_t>(c)];
        }
        *changed = moved;
        return total;
    }

    void count_sizes(const int32_t* labels) {
        std::fill(sizes_.begin(), sizes_.end(), 0);
        for (int64_t x = 0; x < n_; ++x) sizes_[static_cast<size_t>(labels[x])] += 1;
    }

    // The engine's centroids: feature sums per chunk (objects in order, from +0), added chunk by
    // chunk in order from +0, divided by the member count (sizes_, counted by the caller;
    // reseed keeps it current).
    void centres_of(const int32_t* labels, double* centres) {
        const int64_t k = k_, d = d_;
        for_each_chunk(n_, nt_, [&](int64_t c, int64_t start, int64_t stop) {
            double* sums = chunk_sums_.data() + c * k * d;
            std::fill(sums, sums + k * d, 0.0);
            for (int64_t x = start; x < stop; ++x) {
                const double* xr = X_ + x * d;
                double* s = sums + labels[x] * d;
                for (int64_t j = 0; j < d; ++j) s[j] += xr[j];
            }
        });
        std::vector<double> total(static_cast<size_t>(k * d), 0.0);
        for (int64_t c = 0; c < chunks_; ++c) {
            const double* sums = chunk_sums_.data() + c * k * d;
            for (int64_t e = 0; e < k * d; ++e) total[static_cast<size_t>(e)] += sums[e];
        }
        for (int64_t c = 0; c < k; ++c) {
            const int64_t size = sizes_[static_cast<size_t>(c)];
            // Every cluster has a member here (reseed ran); an empty one would keep 0, never read.
            for (int64_t j = 0; j < d; ++j) {
                centres[c * d + j] = size > 0 ? total[static_cast<size_t>(c * d + j)] / static_cast<double>(size) : 0.0;
            }
        }
    }

    // After the centres moved from `before` to `after`: each bound less the largest move of the
    // centres other than the object's own (Hamerly 2010), and half of every centre's distance to
    // its nearest other centre, both with the rounding slack. `valid` false: every bound 0.
    void moved_bounds(const double* before, const double* after, const int32_t* labels, bool valid) {
        const int64_t k = k_, d = d_;
        double first = 0.0, second = 0.0;
        int64_t first_at = -1;
        for (int64_t c = 0; c < k; ++c) {
            const double move = upper(dense_cost(after + c * d, before + c * d, d));
            if (move > first) {
                second = first;
                first = move, first_at = c;
            } else if (move > second) {
                second = move;
            }
        }
        for (int64_t x = 0; x < n_; ++x) {
            double& bound = lower_[static_cast<size_t>(x)];
            if (!valid) {
                bound = 0.0;
                continue;
            }
            const double move = labels[x] == first_at ? second : first;
            bound = bound - move - rel_ * (bound + move);
        }
        by_feature(after);
        std::vector<double> acc(static_cast<size_t>(k));
        for (int64_t c = 0; c < k; ++c) {
            dense_costs_by_feature(after + c * d, ct_.data(), k, kt_, d, acc.data());
            const double gap = second_lower(acc.data(), c);
            half_gap_[static_cast<size_t>(c)] = std::isinf(gap) ? gap : 0.5 * gap * (1.0 - rel_);
        }
    }

    const double* X_;
    const int64_t n_, d_, k_;
    const int nt_;
    const int64_t chunks_;
    const double rel_, abs2_;
    const int64_t kt_;          // k rounded up to 8: the width of ct_
    const DenseCosts kernel_;   // the variant's costs of a block of rows, or null
    std::vector<double> ct_, lower_, half_gap_, chunk_sums_, chunk_value_;
    std::vector<int64_t> chunk_moved_, chunk_full_, chunk_bounded_, sizes_;
    int64_t full_ = 0, bounded_ = 0;
    std::vector<double> cur_, prev_;  // k x d: the current centres, the previous ones
};

}  // namespace

LloydResult dense_lloyd_bounded(const double* X, int64_t n, int64_t d, int32_t n_clusters, const int64_t* seeds,
                                int64_t max_iter, double tol, int n_threads, int32_t* assignment, double* centers,
                                int64_t* stats) {
    if (n < 1 || d < 1) fail("dense_lloyd_bounded: needs n >= 1 objects and d >= 1 features");
    check_n_clusters(n_clusters, n, true);
    if (max_iter < 0) fail("max_iter must be >= 0, got " + str(max_iter));
    if (!(tol >= 0.0 && std::isfinite(tol))) fail("tol must be finite and >= 0, got " + str(tol));
    std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
    for (int64_t c = 0; c < n_clusters; ++c) {
        if (seeds[c] < 0 || seeds[c] >= n) fail("dense_lloyd_bounded: seed index out of range");
        if (seen[static_cast<size_t>(seeds[c])]++) fail("dense_lloyd_bounded: seeds must be distinct");
    }
    for (int64_t e = 0; e < n * d; ++e) {
        if (!std::isfinite(X[e])) fail("dense_lloyd_bounded: X must be finite");
    }
    BoundedDenseLloyd run(X, n, d, n_clusters, n_threads);
    return run.run(seeds, max_iter, tol, assignment, centers, stats);
}

}  // namespace cclust
