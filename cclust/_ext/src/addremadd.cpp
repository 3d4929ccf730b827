#include "cclust/addremadd.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
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

// ---------------------------------------------------------------------------------------------
// AddRemAdd on groups of identical rows.
//
// Objects whose rows of A are identical (e.g. objects every basic partition labels alike: their
// co-association rows are equal) form a group. When every sum the run forms is exact in float64
// (sums_are_exact), the sum s_i of an outsider depends only on its group, t_g = sum_{j in S}
// A[g, g(j)], and that of a member is t_g - A[g, g]: each step then costs O(groups), not
// O(objects). Ties between objects are broken by object index exactly as run_one does: within
// a group the outsider picked is always its lowest outsider and the member removed its lowest
// member, so each group keeps the positions of those two (lo_out, lo_in). The run therefore
// makes exactly run_one's decisions, object for object.
//
// Exactness: if every element of A is an integer multiple of 2^-q and n max|A| 2^q <= 2^52,
// every partial sum of at most n elements (either sign) is an integer multiple of 2^-q below
// 2^52 2^-q in magnitude, so float64 represents it exactly and no addition or subtraction rounds:
// run_one's incremental s_i equal the exact sums, whatever order they were added in.
//
// Seeds of one group: runs from two seeds of group g0 start from the same group counts, and
// their decisions can differ only where a tie between g0 and another group is broken by the
// objects' indices (or an add and a removal tie and one of them is in g0). A run that meets no
// such tie ("tie_with_seed_group" false) makes the same group-level decisions from every seed
// of g0, so every seed of g0 reaches the same f; the lowest seed then wins any tie among them,
// and the others need not be run. Otherwise each seed of g0 is run on its own.
// ---------------------------------------------------------------------------------------------

bool sums_are_exact(const float* values, int64_t len, int64_t n_terms) {
    int q = -1000;  // the largest q: every value is an integer multiple of 2^-q
    uint32_t max_bits = 0;
    for (int64_t i = 0; i < len; ++i) {
        uint32_t bits;
        std::memcpy(&bits, values + i, sizeof bits);
        bits &= 0x7fffffffu;
        if (bits == 0) continue;
        const uint32_t exponent = bits >> 23, fraction = bits & 0x7fffffu;
        if (exponent == 255) return false;  // inf or NaN
        // Normal: (2^23 + fraction) 2^(exponent - 150); subnormal: fraction 2^-149.
        uint32_t mant = exponent ? (fraction | 0x800000u) : fraction;
        int lowest = exponent ? static_cast<int>(exponent) - 150 : -149;
        while ((mant & 1u) == 0) {
            mant >>= 1;
            ++lowest;
        }
        q = std::max(q, -lowest);
        max_bits = std::max(max_bits, bits);  // the order of non-negative finite floats
    }
    if (max_bits == 0) return true;
    float max_abs;
    std::memcpy(&max_abs, &max_bits, sizeof max_abs);
    // n max|A| 2^q <= 2^52 (one bit of margin for the rounding of the product itself).
    return std::ldexp(static_cast<double>(n_terms) * static_cast<double>(max_abs), q) <= std::ldexp(1.0, 52);
}

// The groups still holding objects: gm groups, the gm x gm matrix of their similarities, and
// their objects in increasing index order (positions start[g]..start[g+1]-1 of `object`).
struct Groups {
    int64_t gm = 0;
    std::vector<float> M;
    std::vector<double> diag;
    std::vector<int64_t> start;
    std::vector<int64_t> object;
    std::vector<int64_t> group_at;  // group of each position
};

struct GroupScratch {
    std::vector<double> t;
    std::vector<double> bias_out, bias_in;
    std::vector<int64_t> count, lo_out, lo_in;
    std::vector<uint8_t> in;       // per position
    std::vector<int64_t> dirty;    // positions set in `in` during the run
    void resize(int64_t g, int64_t n) {
        t.resize(g);
        bias_out.resize(g);
        bias_in.resize(g);
        count.resize(g);
        lo_out.resize(g);
        lo_in.resize(g);
        if (static_cast<int64_t>(in.size()) < n) in.assign(n, 0);
    }
};

struct GroupRunResult {
    RunResult run;
    bool tie_with_seed_group = false;
};

// AddRemAdd from the object at position seed_pos; decisions, f and lambda are run_one's on the
// full matrix. `touched` receives object indices as run_one's; `members` (optional) the objects
// of the final cluster.
GroupRunResult run_grouped(const Groups& gr, int64_t seed_pos, double tol, int64_t max_steps,
                           GroupScratch& b, std::vector<int32_t>* touched,
                           std::vector<int64_t>* members) {
    const int64_t gm = gr.gm;
    const float* M = gr.M.data();
    const double* diag = gr.diag.data();
    const int64_t* start = gr.start.data();
    const int64_t* object = gr.object.data();
    const int64_t g0 = gr.group_at[seed_pos];
    double* t = b.t.data();
    int64_t* count = b.count.data();
    int64_t* lo_out = b.lo_out.data();
    int64_t* lo_in = b.lo_in.data();
    uint8_t* in = b.in.data();
    b.dirty.clear();

    const float* row = M + g0 * gm;
    for (int64_t g = 0; g < gm; ++g) {
        t[g] = static_cast<double>(row[g]);
        count[g] = 0;
        lo_out[g] = start[g];
        lo_in[g] = start[g + 1];  // none
    }
    in[seed_pos] = 1;
    b.dirty.push_back(seed_pos);
    count[g0] = 1;
    lo_in[g0] = seed_pos;
    while (lo_out[g0] < start[g0 + 1] && in[lo_out[g0]]) ++lo_out[g0];

    GroupRunResult res;
    int64_t size = 1;
    double sigma = 0.0, f = 0.0;
    if (touched != nullptr) {
        touched->clear();
        touched->push_back(static_cast<int32_t>(object[seed_pos]));
    }
    // The best outsider and member (positions; -1 for none) and their groups, as run_one's
    // scan finds them: the largest (smallest) sum, ties to the lowest object index.
    // A tie broken by index between the seed's group and another only matters to the group
    // counts if that candidate is toggled (the gains depend on the sums alone).
    int64_t out_best = -1, in_best = -1, g_out = -1, g_in = -1;
    bool out_tie_g0 = false, in_tie_g0 = false;
    // Branch-free keys: a group without outsiders (members) gets -inf (+inf) through `bias_out`
    // (`bias_in`), so the extreme values are plain vectorised reductions; adding 0 is exact.
    // A second pass breaks ties by object index, as run_one's scan does.
    double* bias_out = b.bias_out.data();
    double* bias_in = b.bias_in.data();
    for (int64_t g = 0; g < gm; ++g) {
        bias_out[g] = count[g] < start[g + 1] - start[g] ? 0.0 : -INFINITY;
        bias_in[g] = count[g] > 0 ? 0.0 : INFINITY;
    }
    auto set_bias = [&](int64_t g) {
        bias_out[g] = count[g] < start[g + 1] - start[g] ? 0.0 : -INFINITY;
        bias_in[g] = count[g] > 0 ? 0.0 : INFINITY;
    };
    auto scan = [&](bool members_too) {
        out_best = in_best = g_out = g_in = -1;
        double out_s = -INFINITY, in_s = INFINITY;
#if defined(_OPENMP) && _OPENMP >= 201307  // OpenMP 4.0 (not MSVC's 2.0)
#pragma omp simd reduction(max : out_s) reduction(min : in_s)
#endif
        for (int64_t g = 0; g < gm; ++g) {
            const double o = t[g] + bias_out[g];
            const double w = (t[g] - diag[g]) + bias_in[g];
            out_s = o > out_s ? o : out_s;
            in_s = w < in_s ? w : in_s;
        }
        if (!members_too) in_s = INFINITY;
        int64_t out_ties = 0, in_ties = 0;
        bool out_g0 = false, in_g0 = false;
        const bool want_out = out_s > -INFINITY, want_in = in_s < INFINITY;
        for (int64_t g = 0; g < gm; ++g) {
            if (want_out && t[g] + bias_out[g] == out_s) {
                ++out_ties;
                out_g0 = out_g0 || g == g0;
                if (g_out < 0 || object[lo_out[g]] < object[lo_out[g_out]]) g_out = g;
            }
            if (want_in && (t[g] - diag[g]) + bias_in[g] == in_s) {
                ++in_ties;
                in_g0 = in_g0 || g == g0;
                if (g_in < 0 || object[lo_in[g]] < object[lo_in[g_in]]) g_in = g;
            }
        }
        out_tie_g0 = out_g0 && out_ties > 1;
        in_tie_g0 = in_g0 && in_ties > 1;
        if (g_out >= 0) out_best = lo_out[g_out];
        if (g_in >= 0) in_best = lo_in[g_in];
    };
    scan(false);  // the seed is the only member and cannot be removed
    RunResult& r = res.run;
    while (r.steps < max_steps) {
        if (touched != nullptr) {
            if (out_best >= 0) touched->push_back(static_cast<int32_t>(object[out_best]));
            if (in_best >= 0) touched->push_back(static_cast<int32_t>(object[in_best]));
        }
        const double s_out = out_best >= 0 ? t[g_out] : 0.0;
        const double s_in = in_best >= 0 ? t[g_in] - diag[g_in] : 0.0;
        double gain_add = -INFINITY, gain_rem = -INFINITY;
        if (out_best >= 0) gain_add = (sigma + 2.0 * s_out) / static_cast<double>(size) - f;
        if (in_best >= 0 && size >= 2) gain_rem = contribution_of(sigma - 2.0 * s_in, size - 1) - f;
        if (gain_add == gain_rem && std::isfinite(gain_add) && (g_out == g0 || g_in == g0))
            res.tie_with_seed_group = true;
        bool add;
        if (gain_add > gain_rem ||
            (gain_add == gain_rem && out_best >= 0 && (in_best < 0 || object[out_best] < object[in_best]))) {
            add = true;
            if (!(gain_add > tol)) break;
        } else {
            add = false;
            if (!(gain_rem > tol)) break;
            if (in_best < 0) break;
        }
        if (add ? out_tie_g0 : in_tie_g0) res.tie_with_seed_group = true;
        if (add) {
            const int64_t g = g_out, p = out_best;
            sigma = sigma + 2.0 * s_out;
            ++size;
            in[p] = 1;
            b.dirty.push_back(p);
            ++count[g];
            lo_in[g] = std::min(lo_in[g], p);
            int64_t q = p + 1;
            while (q < start[g + 1] && in[q]) ++q;
            lo_out[g] = q;
            set_bias(g);
            row = M + g * gm;
            for (int64_t h = 0; h < gm; ++h) t[h] += static_cast<double>(row[h]);
        } else {
            const int64_t g = g_in, p = in_best;
            sigma = sigma - 2.0 * s_in;
            --size;
            in[p] = 0;
            --count[g];
            lo_out[g] = std::min(lo_out[g], p);
            int64_t q = p + 1;
            while (q < start[g + 1] && !in[q]) ++q;
            lo_in[g] = q;
            set_bias(g);
            row = M + g * gm;
            for (int64_t h = 0; h < gm; ++h) t[h] -= static_cast<double>(row[h]);
        }
        f = contribution_of(sigma, size);
        ++r.steps;
        scan(true);
    }
    r.contribution = f;
    r.size = size;
    r.lambda = size >= 2 ? sigma / (static_cast<double>(size) * static_cast<double>(size - 1)) : 0.0;
    if (members != nullptr) members->clear();
    for (int64_t p : b.dirty) {
        if (in[p] && members != nullptr) members->push_back(object[p]);
        in[p] = 0;
    }
    if (members != nullptr) {
        std::sort(members->begin(), members->end());
        members->erase(std::unique(members->begin(), members->end()), members->end());
    }
    return res;
}

// Repeated extraction on groups: `similarity` is the G x G matrix of the groups (symmetric),
// group_of[i] the group of object i. Same outputs as addremadd_partition; *n_updates counts
// group-level updates (one per group per toggle).
int64_t grouped_partition(const float* similarity, int64_t n_groups, const int64_t* group_of, int64_t n,
                          double tol, int64_t max_steps, int n_threads, int32_t* labels,
                          double* contributions, double* lambdas, int64_t* seeds, int64_t* n_updates) {
    if (n_threads < 1) n_threads = 1;
    Groups gr;
    gr.gm = n_groups;
    gr.M.assign(similarity, similarity + n_groups * n_groups);
    std::vector<int64_t> group_id(static_cast<size_t>(n_groups));  // original id of each group
    for (int64_t g = 0; g < n_groups; ++g) group_id[g] = g;
    std::vector<uint8_t> alive(static_cast<size_t>(n), 1);
    // Objects (increasing index) of each group still alive.
    auto rebuild = [&]() {
        std::vector<int64_t> compact(static_cast<size_t>(n_groups), -1);
        for (int64_t g = 0; g < gr.gm; ++g) compact[group_id[g]] = g;
        gr.start.assign(gr.gm + 1, 0);
        for (int64_t i = 0; i < n; ++i)
            if (alive[i]) ++gr.start[compact[group_of[i]] + 1];
        for (int64_t g = 0; g < gr.gm; ++g) gr.start[g + 1] += gr.start[g];
        std::vector<int64_t> fill(gr.start.begin(), gr.start.end() - 1);
        gr.object.resize(gr.start[gr.gm]);
        gr.group_at.resize(gr.start[gr.gm]);
        for (int64_t i = 0; i < n; ++i) {
            if (!alive[i]) continue;
            const int64_t g = compact[group_of[i]];
            gr.group_at[fill[g]] = g;
            gr.object[fill[g]++] = i;
        }
        gr.diag.resize(gr.gm);
        for (int64_t g = 0; g < gr.gm; ++g) gr.diag[g] = static_cast<double>(gr.M[g * gr.gm + g]);
    };
    rebuild();

    std::vector<GroupScratch> scratch(static_cast<size_t>(n_threads));
    std::vector<double> f(static_cast<size_t>(n));
    std::vector<int64_t> steps(static_cast<size_t>(n));
    std::vector<uint8_t> tie(static_cast<size_t>(n), 1);
    std::vector<std::vector<int32_t>> touched(static_cast<size_t>(n));
    std::vector<uint8_t> stale(static_cast<size_t>(n), 1);
    std::vector<uint8_t> gone(static_cast<size_t>(n), 0);
    std::vector<int64_t> jobs;  // positions to run
    std::vector<int64_t> members;
    int64_t k = 0, updates = 0;

    auto run_jobs = [&]() {
        int failed = 0;
        const int64_t n_jobs = static_cast<int64_t>(jobs.size());
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads) reduction(|| : failed)
#endif
        for (int64_t j = 0; j < n_jobs; ++j) {
            try {
                GroupScratch& b = scratch[thread_id()];
                b.resize(gr.gm, static_cast<int64_t>(gr.object.size()));
                const int64_t p = jobs[j];
                const int64_t seed = gr.object[p];
                GroupRunResult r = run_grouped(gr, p, tol, max_steps, b, &touched[seed], nullptr);
                f[seed] = r.run.contribution;
                steps[seed] = r.run.steps;
                tie[seed] = r.tie_with_seed_group;
                stale[seed] = 0;
            } catch (...) {
                failed = 1;
            }
        }
        if (failed) throw std::bad_alloc();
        for (int64_t p : jobs) updates += steps[gr.object[p]] * gr.gm;
    };

    while (gr.gm > 0) {
        // The lowest object of each group first; the other objects of a group only where that
        // run met a tie with its own group.
        jobs.clear();
        for (int64_t g = 0; g < gr.gm; ++g)
            if (stale[gr.object[gr.start[g]]]) jobs.push_back(gr.start[g]);
        run_jobs();
        jobs.clear();
        for (int64_t g = 0; g < gr.gm; ++g) {
            if (!tie[gr.object[gr.start[g]]]) continue;
            for (int64_t p = gr.start[g] + 1; p < gr.start[g + 1]; ++p)
                if (stale[gr.object[p]]) jobs.push_back(p);
        }
        run_jobs();
        // Serial reduction in object order: the largest f, ties to the lowest seed.
        int64_t best = -1, best_pos = -1;
        double best_f = 0.0;
        {
            for (int64_t g = 0; g < gr.gm; ++g) {
                const int64_t first = gr.object[gr.start[g]];
                for (int64_t p = gr.start[g]; p < gr.start[g + 1]; ++p) {
                    const int64_t o = gr.object[p];
                    const double fo = tie[first] ? f[o] : f[first];
                    if (best < 0 || fo > best_f || (fo == best_f && o < best)) {
                        best = o;
                        best_pos = p;
                        best_f = fo;
                    }
                }
            }
        }
        if (!(best_f > 0.0)) {
            // As addremadd_partition: every remaining object alone, lowest index first.
            for (int64_t i = 0; i < n; ++i) {
                if (!alive[i]) continue;
                labels[i] = static_cast<int32_t>(k);
                contributions[k] = 0.0;
                lambdas[k] = 0.0;
                seeds[k] = i;
                ++k;
            }
            break;
        }
        GroupScratch& b = scratch[0];
        b.resize(gr.gm, static_cast<int64_t>(gr.object.size()));
        GroupRunResult r = run_grouped(gr, best_pos, tol, max_steps, b, nullptr, &members);
        contributions[k] = r.run.contribution;
        lambdas[k] = r.run.lambda;
        seeds[k] = best;
        for (int64_t o : members) {
            labels[o] = static_cast<int32_t>(k);
            alive[o] = 0;
            gone[o] = 1;
        }
        ++k;
        for (int64_t i = 0; i < n; ++i) {
            if (!alive[i] || stale[i]) continue;
            uint8_t redo = 0;
            for (int32_t q : touched[i]) redo |= gone[q];
            stale[i] = redo;
        }
        for (int64_t o : members) gone[o] = 0;
        // Drop the groups left empty; compact M in place (every destination precedes its source).
        std::vector<uint8_t> keep(static_cast<size_t>(gr.gm), 0);
        for (size_t p = 0; p < gr.object.size(); ++p)
            if (alive[gr.object[p]]) keep[gr.group_at[p]] = 1;
        int64_t kept = 0;
        for (int64_t g = 0; g < gr.gm; ++g) kept += keep[g];
        if (kept == 0) break;
        if (kept < gr.gm) {
            int64_t gr_row = 0;
            for (int64_t g = 0; g < gr.gm; ++g) {
                if (!keep[g]) continue;
                const float* src = gr.M.data() + g * gr.gm;
                float* dst = gr.M.data() + gr_row * kept;
                int64_t c = 0;
                for (int64_t h = 0; h < gr.gm; ++h)
                    if (keep[h]) dst[c++] = src[h];
                group_id[gr_row] = group_id[g];
                ++gr_row;
            }
            gr.gm = kept;
            gr.M.resize(static_cast<size_t>(kept) * static_cast<size_t>(kept));
        }
        rebuild();
    }
    if (n_updates != nullptr) *n_updates = updates;
    return k;
}

// Groups of identical rows of the n x n matrix, numbered in order of their lowest object:
// returns the number of groups and fills group_of. Rows are bucketed by a hash of their bits
// and compared exactly, so a collision only costs a comparison.
int64_t identical_rows(const float* A, int64_t n, std::vector<int64_t>& group_of) {
    std::vector<uint64_t> hash(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        uint64_t h = 1469598103934665603ull;
        const uint32_t* row = reinterpret_cast<const uint32_t*>(A + i * n);
        for (int64_t j = 0; j < n; ++j) h = (h ^ row[j]) * 1099511628211ull;
        hash[i] = h;
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return hash[a] != hash[b] ? hash[a] < hash[b] : a < b;
    });
    group_of.assign(static_cast<size_t>(n), -1);
    std::vector<int64_t> first_of_group;  // lowest object of each group found so far
    for (int64_t x = 0; x < n;) {
        int64_t y = x;
        while (y < n && hash[order[y]] == hash[order[x]]) ++y;
        for (int64_t a = x; a < y; ++a) {  // objects with one hash, increasing index
            const int64_t i = order[a];
            if (group_of[i] >= 0) continue;
            const int64_t g = static_cast<int64_t>(first_of_group.size());
            first_of_group.push_back(i);
            group_of[i] = g;
            for (int64_t c = a + 1; c < y; ++c) {
                const int64_t j = order[c];
                if (group_of[j] < 0 && std::memcmp(A + i * n, A + j * n, sizeof(float) * n) == 0) group_of[j] = g;
            }
        }
        x = y;
    }
    // Renumber by lowest object.
    const int64_t G = static_cast<int64_t>(first_of_group.size());
    std::vector<int64_t> by_first(static_cast<size_t>(G));
    for (int64_t g = 0; g < G; ++g) by_first[g] = g;
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return first_of_group[a] < first_of_group[b]; });
    std::vector<int64_t> rank(static_cast<size_t>(G));
    for (int64_t r = 0; r < G; ++r) rank[by_first[r]] = r;
    for (int64_t i = 0; i < n; ++i) group_of[i] = rank[group_of[i]];
    return G;
}

bool is_symmetric(const float* A, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < n; ++j)
            if (!(A[i * n + j] == A[j * n + i])) return false;
    return true;
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

namespace {
int64_t plain_partition(const float* similarity, int64_t n, double tol, int64_t max_steps,
                        int n_threads, int32_t* labels, double* contributions,
                        double* lambdas, int64_t* seeds, int64_t* n_updates);
}  // namespace

int64_t addremadd_partition(const float* similarity, int64_t n, double tol, int64_t max_steps,
                            int n_threads, int32_t* labels, double* contributions,
                            double* lambdas, int64_t* seeds, int64_t* n_updates) {
    check_common(similarity, n, "addremadd_partition");
    check_tol(tol, max_steps);
    if (n_threads < 1) n_threads = 1;
    // Exact sums and a symmetric matrix: the same decisions on groups of identical rows.
    if (sums_are_exact(similarity, n * n, n) && is_symmetric(similarity, n)) {
        std::vector<int64_t> group_of;
        const int64_t G = identical_rows(similarity, n, group_of);
        std::vector<int64_t> first(static_cast<size_t>(G), -1);
        for (int64_t i = n - 1; i >= 0; --i) first[group_of[i]] = i;
        std::vector<float> MG(static_cast<size_t>(G) * static_cast<size_t>(G));
        for (int64_t g = 0; g < G; ++g)
            for (int64_t h = 0; h < G; ++h) MG[g * G + h] = similarity[first[g] * n + first[h]];
        return grouped_partition(MG.data(), G, group_of.data(), n, tol, max_steps, n_threads, labels,
                                 contributions, lambdas, seeds, n_updates);
    }
    return plain_partition(similarity, n, tol, max_steps, n_threads, labels, contributions, lambdas,
                           seeds, n_updates);
}

int64_t addremadd_partition_groups(const float* similarity, int64_t n_groups, const int64_t* group_of,
                                   int64_t n, double tol, int64_t max_steps, int n_threads, int32_t* labels,
                                   double* contributions, double* lambdas, int64_t* seeds,
                                   int64_t* n_updates) {
    check_common(similarity, n_groups, "addremadd_partition_groups");
    check_tol(tol, max_steps);
    if (n < n_groups) throw std::invalid_argument("addremadd_partition_groups: fewer objects than groups");
    std::vector<uint8_t> used(static_cast<size_t>(n_groups), 0);
    for (int64_t i = 0; i < n; ++i) {
        if (group_of[i] < 0 || group_of[i] >= n_groups)
            throw std::invalid_argument("addremadd_partition_groups: group_of[" + std::to_string(i) +
                                        "] is outside 0.." + std::to_string(n_groups - 1));
        used[group_of[i]] = 1;
    }
    for (int64_t g = 0; g < n_groups; ++g)
        if (!used[g]) throw std::invalid_argument("addremadd_partition_groups: group " + std::to_string(g) + " is empty");
    if (!sums_are_exact(similarity, n_groups * n_groups, n) || !is_symmetric(similarity, n_groups)) return -1;
    return grouped_partition(similarity, n_groups, group_of, n, tol, max_steps, n_threads, labels,
                             contributions, lambdas, seeds, n_updates);
}

// The extraction without grouping, for any similarity (tests compare it with the grouped one).
int64_t addremadd_partition_plain(const float* similarity, int64_t n, double tol, int64_t max_steps,
                                  int n_threads, int32_t* labels, double* contributions,
                                  double* lambdas, int64_t* seeds, int64_t* n_updates) {
    check_common(similarity, n, "addremadd_partition_plain");
    check_tol(tol, max_steps);
    return plain_partition(similarity, n, tol, max_steps, n_threads < 1 ? 1 : n_threads, labels, contributions,
                           lambdas, seeds, n_updates);
}

namespace {

// The plain extraction on the full matrix (any similarity).
int64_t plain_partition(const float* similarity, int64_t n, double tol, int64_t max_steps,
                        int n_threads, int32_t* labels, double* contributions,
                        double* lambdas, int64_t* seeds, int64_t* n_updates) {

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

// The best partner of cluster a among the active clusters b > a: the largest gain, ties to the
// lowest b (-1 if none).
inline int64_t best_partner(const double* G, int64_t n, int64_t a, const uint8_t* active) {
    const double* row = G + a * n;
    int64_t best = -1;
    double value = 0.0;
    for (int64_t b = a + 1; b < n; ++b) {
        if (active[b] && (best < 0 || row[b] > value)) {
            best = b;
            value = row[b];
        }
    }
    return best;
}

}  // namespace

// The pair chosen at each step is the largest gain over the active pairs, ties to the
// lexicographically smallest (r, t): Mirkin & Shestakov's rule with the reference's order. Each
// active cluster a keeps its best partner b > a (the largest gain, ties to the lowest b), so the
// pair is found by one O(n) pass over those (ties to the lowest a); a merge of r and t changes
// only the gains with r (and removes t), so only the clusters whose partner was r or t, or that
// now prefer r, are looked at again. Typically O(n^2) in all, with no priority queue.
int64_t ls_agglomerate(const double* gains, int64_t n, int64_t target_k, int32_t* labels,
                       int64_t* merges, double* merge_gains) {
    check_common(gains, n, "ls_agglomerate");
    if (target_k < 0 || target_k > n)
        throw std::invalid_argument("ls_agglomerate: target_k must lie in 0.." + std::to_string(n) +
                                    ", got " + std::to_string(target_k));
    for (int64_t i = 0; i < n * n; ++i) {
        if (!std::isfinite(gains[i])) throw std::invalid_argument("ls_agglomerate: gains must be finite");
    }
    std::vector<double> Gm(gains, gains + n * n);
    double* G = Gm.data();
    std::vector<uint8_t> active(static_cast<size_t>(n), 1);
    std::vector<int64_t> parent(static_cast<size_t>(n));
    std::vector<int64_t> partner(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        parent[i] = i;
        partner[i] = best_partner(G, n, i, active.data());
    }
    int64_t clusters = n;
    int64_t n_merges = 0;
    while (clusters > 1) {
        if (target_k > 0 && clusters <= target_k) break;
        int64_t r = -1;
        double best = 0.0;
        for (int64_t a = 0; a < n; ++a) {
            if (!active[a] || partner[a] < 0) continue;
            const double v = G[a * n + partner[a]];
            if (r < 0 || v > best) {
                r = a;
                best = v;
            }
        }
        if (r < 0) break;
        if (target_k == 0 && !(best > 0.0)) break;
        const int64_t t = partner[r];
        active[t] = 0;
        parent[t] = r;
        merges[2 * n_merges] = r;
        merges[2 * n_merges + 1] = t;
        merge_gains[n_merges] = best;
        ++n_merges;
        --clusters;
        // The gain of the merged cluster against any other is the sum of its parts' gains.
        double* row_r = G + r * n;
        const double* row_t = G + t * n;
        for (int64_t o = 0; o < n; ++o) {
            if (!active[o] || o == r) continue;
            const double g = row_r[o] + row_t[o];
            row_r[o] = g;
            G[o * n + r] = g;
        }
        partner[r] = best_partner(G, n, r, active.data());
        for (int64_t o = 0; o < r; ++o) {
            if (!active[o]) continue;
            if (partner[o] == r || partner[o] == t) {
                partner[o] = best_partner(G, n, o, active.data());
            } else {
                const double g = G[o * n + r];
                const double cur = partner[o] >= 0 ? G[o * n + partner[o]] : 0.0;
                if (partner[o] < 0 || g > cur || (g == cur && r < partner[o])) partner[o] = r;
            }
        }
        for (int64_t o = r + 1; o < t; ++o) {
            if (active[o] && partner[o] == t) partner[o] = best_partner(G, n, o, active.data());
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
