#include "cclust/addremadd.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

#include "cclust/parallel.hpp"

namespace cclust {

namespace {

void check_common(const void* matrix, int64_t n, const char* what) {
    if (n < 1) throw std::invalid_argument(std::string(what) + ": n must be >= 1, got " + std::to_string(n));
    if (matrix == nullptr) throw std::invalid_argument(std::string(what) + ": the matrix pointer is null");
}

void check_tol(double tol, int64_t max_steps) {
    if (!(tol >= 0.0) || !std::isfinite(tol))
        throw std::invalid_argument("addremadd: tol must be a finite number >= 0");
    if (max_steps < 1) throw std::invalid_argument("addremadd: max_steps must be >= 1");
}

// f(S) = lambda |S| = Sigma / (|S| - 1), 0 for a singleton (Sigma: off-diagonal sum over S x S).
inline double contribution_of(double sigma, int64_t size) {
    return size >= 2 ? sigma / static_cast<double>(size - 1) : 0.0;
}

struct RunResult {
    double contribution = 0.0;
    double lambda = 0.0;
    int64_t steps = 0;
    int64_t size = 1;
};

// AddRemAdd(seed) on the m x m row-major matrix M. s[i] holds sum_{j in S, j != i} M[i, j], so
// a(i, S) = s[i] / |S| for an outsider and s[i] / (|S| - 1) for a member. Step 2 of Mirkin & Shestakov (sec. 3.1)
// picks the outsider with the largest a(i, S) (the largest s[i]) and the member with the
// smallest; of the two toggles the one increasing f more is made if it increases f by more
// than tol (ties: the lower index). Each update pass also finds the next candidates.
// If `touched` is given it receives every object the run looked at as a candidate (the seed,
// and the best outsider and member before each decision): a run whose touched objects all
// survive the removal of another cluster repeats itself exactly on the smaller matrix.
RunResult run_one(const float* M, int64_t m, int64_t seed, double tol, int64_t max_steps,
                  double* s, uint8_t* in, double* trace, int64_t max_trace, int64_t* n_trace,
                  std::vector<int32_t>* touched = nullptr) {
    const float* row = M + seed * m;
    for (int64_t i = 0; i < m; ++i) {
        s[i] = static_cast<double>(row[i]);
        in[i] = 0;
    }
    s[seed] = 0.0;
    in[seed] = 1;
    int64_t size = 1;
    double sigma = 0.0;
    double f = 0.0;
    int64_t traced = 0;
    if (max_trace > 0) trace[traced++] = f;

    // Candidates for the first step: the best outsider (the seed is the only member and cannot
    // be removed).
    int64_t out_best = -1, in_best = -1;
    for (int64_t i = 0; i < m; ++i) {
        if (!in[i] && (out_best < 0 || s[i] > s[out_best])) out_best = i;
    }
    RunResult res;
    if (touched != nullptr) {
        touched->clear();
        touched->push_back(static_cast<int32_t>(seed));
    }
    while (res.steps < max_steps) {
        if (touched != nullptr) {
            if (out_best >= 0) touched->push_back(static_cast<int32_t>(out_best));
            if (in_best >= 0) touched->push_back(static_cast<int32_t>(in_best));
        }
        double gain_add = -INFINITY, gain_rem = -INFINITY;
        if (out_best >= 0) gain_add = (sigma + 2.0 * s[out_best]) / static_cast<double>(size) - f;
        if (in_best >= 0 && size >= 2) {
            gain_rem = contribution_of(sigma - 2.0 * s[in_best], size - 1) - f;
        }
        int64_t pick;
        bool add;
        if (gain_add > gain_rem || (gain_add == gain_rem && out_best >= 0 && (in_best < 0 || out_best < in_best))) {
            pick = out_best;
            add = true;
            if (!(gain_add > tol)) break;
        } else {
            pick = in_best;
            add = false;
            if (!(gain_rem > tol)) break;
        }
        if (pick < 0) break;
        if (add) {
            sigma = sigma + 2.0 * s[pick];
            ++size;
            in[pick] = 1;
        } else {
            sigma = sigma - 2.0 * s[pick];
            --size;
            in[pick] = 0;
        }
        f = contribution_of(sigma, size);
        ++res.steps;
        if (traced < max_trace) trace[traced++] = f;

        // The update of a(i, S) (Mirkin & Shestakov, sec. 3.1) on the sums, fused with the next step's search.
        row = M + pick * m;
        out_best = -1;
        in_best = -1;
        // The picked object's own sum does not change (the diagonal is left out): it is saved
        // and put back, so the update loop stays branch-free (and vectorises).
        const double s_pick = s[pick];
        if (add) {
            for (int64_t i = 0; i < m; ++i) s[i] += static_cast<double>(row[i]);
        } else {
            for (int64_t i = 0; i < m; ++i) s[i] -= static_cast<double>(row[i]);
        }
        s[pick] = s_pick;
        double out_s = -INFINITY, in_s = INFINITY;
        for (int64_t i = 0; i < m; ++i) {
            const double v = s[i];
            if (in[i]) {
                if (v < in_s || in_best < 0) {
                    in_s = v;
                    in_best = i;
                }
            } else if (v > out_s || out_best < 0) {
                out_s = v;
                out_best = i;
            }
        }
    }
    res.contribution = f;
    res.size = size;
    res.lambda = size >= 2 ? sigma / (static_cast<double>(size) * static_cast<double>(size - 1)) : 0.0;
    if (n_trace != nullptr) *n_trace = traced;
    return res;
}

}  // namespace

int64_t addremadd_cluster(const float* similarity, int64_t n, int64_t seed, double tol,
                          int64_t max_steps, uint8_t* membership, double* contribution,
                          double* lambda, double* trace, int64_t max_trace,
                          int64_t* n_trace) {
    check_common(similarity, n, "addremadd_cluster");
    check_tol(tol, max_steps);
    if (seed < 0 || seed >= n)
        throw std::invalid_argument("addremadd_cluster: seed " + std::to_string(seed) +
                                    " is outside 0.." + std::to_string(n - 1));
    if (max_trace > 0 && trace == nullptr)
        throw std::invalid_argument("addremadd_cluster: trace is null but max_trace > 0");
    std::vector<double> s(static_cast<size_t>(n));
    RunResult res = run_one(similarity, n, seed, tol, max_steps, s.data(), membership, trace,
                            max_trace, n_trace);
    *contribution = res.contribution;
    *lambda = res.lambda;
    return res.steps;
}

int64_t addremadd_partition(const float* similarity, int64_t n, double tol, int64_t max_steps,
                            int n_threads, int32_t* labels, double* contributions,
                            double* lambdas, int64_t* seeds, int64_t* n_updates) {
    check_common(similarity, n, "addremadd_partition");
    check_tol(tol, max_steps);
    if (n_threads < 1) n_threads = 1;

    std::vector<int64_t> remaining(static_cast<size_t>(n));  // original index of each row of M
    for (int64_t i = 0; i < n; ++i) remaining[i] = i;
    std::vector<float> work;  // the compacted matrix once objects have been removed
    const float* M = similarity;
    int64_t m = n;
    int64_t k = 0;
    int64_t updates = 0;

    std::vector<std::vector<double>> sums(static_cast<size_t>(n_threads), std::vector<double>(n));
    std::vector<std::vector<uint8_t>> flags(static_cast<size_t>(n_threads), std::vector<uint8_t>(n));
    // Per object (original index): its run's f and steps, and the objects that run touched.
    std::vector<double> f(static_cast<size_t>(n));
    std::vector<int64_t> steps(static_cast<size_t>(n));
    std::vector<std::vector<int32_t>> touched(static_cast<size_t>(n));
    std::vector<uint8_t> stale(static_cast<size_t>(n), 1);  // must the seed's run be redone?
    std::vector<uint8_t> gone(static_cast<size_t>(n), 0);   // removed in the last extraction

    while (m > 0) {
        // Every remaining object as a seed; each run is independent, so scheduling cannot change
        // its result, and the reduction below is serial. A run none of whose touched objects was
        // just removed would repeat itself exactly, so its cached result is kept.
        int failed = 0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads) reduction(|| : failed)
#endif
        for (int64_t p = 0; p < m; ++p) {
            const int64_t seed = remaining[p];
            if (!stale[seed]) continue;
            try {
                const int t = thread_id();
                std::vector<int32_t>& list = touched[seed];
                RunResult r = run_one(M, m, p, tol, max_steps, sums[t].data(), flags[t].data(),
                                      nullptr, 0, nullptr, &list);
                for (auto& q : list) q = static_cast<int32_t>(remaining[q]);
                f[seed] = r.contribution;
                steps[seed] = r.steps;
            } catch (...) {
                failed = 1;
            }
        }
        if (failed) throw std::bad_alloc();
        int64_t best = 0;
        for (int64_t p = 0; p < m; ++p) {
            const int64_t seed = remaining[p];
            if (stale[seed]) updates += steps[seed] * m;
            if (f[seed] > f[remaining[best]]) best = p;
        }
        if (!(f[remaining[best]] > 0.0)) {
            // No seed could add anything: every remaining pair has similarity <= tol / 2, so
            // each object is extracted alone, lowest index first.
            for (int64_t p = 0; p < m; ++p) {
                labels[remaining[p]] = static_cast<int32_t>(k);
                contributions[k] = 0.0;
                lambdas[k] = 0.0;
                seeds[k] = remaining[p];
                ++k;
            }
            break;
        }
        RunResult r = run_one(M, m, best, tol, max_steps, sums[0].data(), flags[0].data(),
                              nullptr, 0, nullptr);
        uint8_t* in = flags[0].data();
        contributions[k] = r.contribution;
        lambdas[k] = r.lambda;
        seeds[k] = remaining[best];
        int64_t kept = 0;
        for (int64_t p = 0; p < m; ++p) {
            if (in[p]) {
                labels[remaining[p]] = static_cast<int32_t>(k);
                gone[remaining[p]] = 1;
            } else {
                remaining[kept++] = remaining[p];
            }
        }
        for (int64_t p = 0; p < kept; ++p) {
            const int64_t seed = remaining[p];
            uint8_t redo = 0;
            for (int32_t q : touched[seed]) redo |= gone[q];
            stale[seed] = redo;
        }
        ++k;
        if (kept == 0) break;
        // Compact the rows and columns of the objects left. In place once `work` holds M: the
        // destination of every element precedes its source, so nothing is read after being
        // overwritten.
        if (work.empty()) work.resize(static_cast<size_t>(kept) * static_cast<size_t>(kept));
        float* dst = work.data();
        int64_t pr = 0;
        for (int64_t p = 0; p < m; ++p) {
            if (in[p]) continue;
            const float* src_row = M + p * m;
            float* dst_row = dst + pr * kept;
            int64_t qc = 0;
            for (int64_t q = 0; q < m; ++q) {
                if (!in[q]) dst_row[qc++] = src_row[q];
            }
            ++pr;
        }
        M = work.data();
        m = kept;
    }
    if (n_updates != nullptr) *n_updates = updates;
    return k;
}

namespace {

struct Candidate {
    double gain;
    int64_t a, b;        // a < b, the clusters' names (their lowest members)
    uint64_t va, vb;     // versions of a and b when pushed
};

// Max-heap order: larger gain first, then the lexicographically smaller pair.
struct LowerPriority {
    bool operator()(const Candidate& x, const Candidate& y) const {
        if (x.gain != y.gain) return x.gain < y.gain;
        if (x.a != y.a) return x.a > y.a;
        return x.b > y.b;
    }
};

}  // namespace

int64_t ls_agglomerate(const double* gains, int64_t n, int64_t target_k, int32_t* labels,
                       int64_t* merges, double* merge_gains) {
    check_common(gains, n, "ls_agglomerate");
    if (target_k < 0 || target_k > n)
        throw std::invalid_argument("ls_agglomerate: target_k must lie in 0.." + std::to_string(n) +
                                    ", got " + std::to_string(target_k));
    for (int64_t i = 0; i < n * n; ++i) {
        if (!std::isfinite(gains[i])) throw std::invalid_argument("ls_agglomerate: gains must be finite");
    }
    std::vector<double> G(gains, gains + n * n);
    std::vector<uint8_t> active(static_cast<size_t>(n), 1);
    std::vector<uint64_t> version(static_cast<size_t>(n), 0);
    std::vector<int64_t> parent(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) parent[i] = i;

    std::priority_queue<Candidate, std::vector<Candidate>, LowerPriority> heap;
    // Only positive gains can be chosen while we stop at the first non-positive one; a pair's
    // gain changes only when one of its clusters merges, and that merge pushes it again.
    bool push_all = false;
    auto fill = [&](bool all) {
        for (int64_t a = 0; a < n; ++a) {
            if (!active[a]) continue;
            const double* row = G.data() + a * n;
            for (int64_t b = a + 1; b < n; ++b) {
                if (active[b] && (all || row[b] > 0.0)) heap.push({row[b], a, b, version[a], version[b]});
            }
        }
    };
    fill(false);

    int64_t clusters = n;
    int64_t n_merges = 0;
    while (clusters > 1) {
        if (target_k > 0 && clusters <= target_k) break;
        if (heap.empty()) {
            if (target_k > 0 && !push_all) {
                push_all = true;  // cut at K below the positive-gain stop: negative gains too
                fill(true);
                continue;
            }
            break;
        }
        Candidate c = heap.top();
        heap.pop();
        if (!active[c.a] || !active[c.b] || version[c.a] != c.va || version[c.b] != c.vb) continue;
        if (!push_all && !(c.gain > 0.0)) break;
        const int64_t r = c.a, t = c.b;
        active[t] = 0;
        parent[t] = r;
        ++version[r];
        merges[2 * n_merges] = r;
        merges[2 * n_merges + 1] = t;
        merge_gains[n_merges] = c.gain;
        ++n_merges;
        --clusters;
        // The gain of the merged cluster against any other is the sum of its parts' gains.
        double* row_r = G.data() + r * n;
        const double* row_t = G.data() + t * n;
        for (int64_t o = 0; o < n; ++o) {
            if (!active[o] || o == r) continue;
            const double g = row_r[o] + row_t[o];
            row_r[o] = g;
            G[o * n + r] = g;
            if (push_all || g > 0.0) {
                if (o < r) heap.push({g, o, r, version[o], version[r]});
                else heap.push({g, r, o, version[r], version[o]});
            }
        }
    }
    for (int64_t i = 0; i < n; ++i) {
        int64_t root = i;
        while (parent[root] != root) root = parent[root];
        labels[i] = static_cast<int32_t>(root);
    }
    return n_merges;
}

}  // namespace cclust
