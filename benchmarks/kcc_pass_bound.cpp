// The lookup-add bound of a KCC Lloyd pass on this machine (built and run by
// benchmarks/bench_kcc_pass.py; not part of cclust).
//
// It reads a label matrix in the engine's layout (int32, n x r, row-major; label l of partition i
// is table row slot_of[i] + l, with slot_of[i] = offsets[i] + i + 1 as in cclust/lookup.hpp) and
// runs a pass that does nothing but the lookup-adds and the argmin: for every object, the sum over
// partitions of its table rows (K values each, padded to whole vectors), then the index of the
// smallest sum. No tally, no objective, no validation. Objects are processed in blocks of B, the
// partitions of a block in order, so B independent accumulator chains hide the add latency; the
// vector width W (doubles) and B are template parameters and every pair is timed, so the bound is
// the fastest of them.
//
//   kcc_pass_bound LABELS N R K OFFSETS THREADS REPEATS [COL_BLOCK]
//
// LABELS: raw int32 file (n x r); OFFSETS: raw int64 file (r + 1). COL_BLOCK > 0 also times a
// partition-blocked pass (the partitions in groups of COL_BLOCK, a group's table rows reused by a
// sub-block of objects before the next group: the cache blocking of the table).
// Prints one line per (W, B): "W B seconds ns_per_lookup_add checksum".
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

template <int W>
struct V {
    typedef double T __attribute__((vector_size(W * sizeof(double)), aligned(8)));
};

template <int W, int NV, int B>
void block_pass(const int32_t* labels, int64_t n, int64_t r, const int64_t* slot_of,
                const double* table, int64_t kc, int32_t* best, int threads) {
    typedef typename V<W>::T vec;
    constexpr int64_t stride = int64_t{W} * NV;
    const int64_t blocks = (n + B - 1) / B;
#pragma omp parallel for schedule(static, 64) num_threads(threads)
    for (int64_t blk = 0; blk < blocks; ++blk) {
        const int64_t x0 = blk * B;
        const int64_t nb = std::min<int64_t>(B, n - x0);
        vec acc[B][NV];
        for (int b = 0; b < B; ++b)
            for (int q = 0; q < NV; ++q) acc[b][q] = vec{} ;
        const int32_t* lab[B];
        for (int b = 0; b < B; ++b) lab[b] = labels + (x0 + (b < nb ? b : 0)) * r;
        for (int64_t i = 0; i < r; ++i) {
            const int64_t s = slot_of[i];
            for (int b = 0; b < B; ++b) {
                const vec* t = reinterpret_cast<const vec*>(table + (s + lab[b][i]) * stride);
                for (int q = 0; q < NV; ++q) acc[b][q] += t[q];
            }
        }
        for (int b = 0; b < nb; ++b) {
            double a[stride];
            std::memcpy(a, acc[b], sizeof a);
            int64_t k = 0;
            for (int64_t j = 1; j < kc; ++j)
                if (a[j] < a[k]) k = j;
            best[x0 + b] = static_cast<int32_t>(k);
        }
    }
}

// The same pass with the partitions in groups of `cb` (cache blocking of the table): a sub-block
// of objects keeps its partial sums in memory between groups.
template <int W, int NV>
void column_blocked_pass(const int32_t* labels, int64_t n, int64_t r, const int64_t* slot_of,
                         const double* table, int64_t kc, int32_t* best, int threads, int64_t cb) {
    typedef typename V<W>::T vec;
    constexpr int64_t stride = int64_t{W} * NV;
    constexpr int64_t sub = 256;
    const int64_t subs = (n + sub - 1) / sub;
#pragma omp parallel num_threads(threads)
    {
        std::vector<double> buffer(static_cast<size_t>(sub * stride));
        vec* part = reinterpret_cast<vec*>(buffer.data());
#pragma omp for schedule(static)
        for (int64_t sb = 0; sb < subs; ++sb) {
            const int64_t x0 = sb * sub, x1 = std::min(n, x0 + sub);
            std::fill(buffer.begin(), buffer.end(), 0.0);
            for (int64_t i0 = 0; i0 < r; i0 += cb) {
                const int64_t i1 = std::min(r, i0 + cb);
                for (int64_t x = x0; x < x1; ++x) {
                    vec acc[NV];
                    for (int q = 0; q < NV; ++q) acc[q] = part[(x - x0) * NV + q];
                    const int32_t* lab = labels + x * r;
                    for (int64_t i = i0; i < i1; ++i) {
                        const vec* t = reinterpret_cast<const vec*>(table + (slot_of[i] + lab[i]) * stride);
                        for (int q = 0; q < NV; ++q) acc[q] += t[q];
                    }
                    for (int q = 0; q < NV; ++q) part[(x - x0) * NV + q] = acc[q];
                }
            }
            for (int64_t x = x0; x < x1; ++x) {
                double a[stride];
                std::memcpy(a, &part[(x - x0) * NV], sizeof a);
                int64_t k = 0;
                for (int64_t j = 1; j < kc; ++j)
                    if (a[j] < a[k]) k = j;
                best[x] = static_cast<int32_t>(k);
            }
        }
    }
}

struct Problem {
    std::vector<int32_t> labels;
    std::vector<int64_t> slot_of;
    int64_t n, r, kc, slots;
};

// Wall seconds, or with one thread the CPU seconds of this thread (the time it waited for a core
// on a loaded machine left out), as bench_kcc_pass.py measures the engine.
bool g_thread_clock = false;

double now() {
    if (g_thread_clock) {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
double best_seconds(int repeats, F&& f) {
    double best = 1e300;
    for (int t = 0; t < repeats; ++t) {
        const double a = now();
        f();
        best = std::min(best, now() - a);
    }
    return best;
}

template <int W, int NV>
void run_width(const Problem& p, int threads, int repeats, int64_t cb) {
    constexpr int64_t stride = int64_t{W} * NV;
    if (p.kc > stride || p.kc <= stride - W) return;  // only the smallest padding for this W
    std::vector<double> table(static_cast<size_t>(p.slots * stride), 0.0);
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int64_t s = 0; s < p.slots; ++s)
        for (int64_t k = 0; k < p.kc; ++k) table[static_cast<size_t>(s * stride + k)] = u(gen);
    std::vector<int32_t> best(static_cast<size_t>(p.n));
    const double adds = static_cast<double>(p.n) * static_cast<double>(p.r) * static_cast<double>(p.kc);
    auto report = [&](int b, double s) {
        int64_t sum = 0;
        for (int32_t v : best) sum += v;
        std::printf("%d %d %.9f %.6f %lld\n", W, b, s, s * 1e9 / adds, static_cast<long long>(sum));
    };
#define BOUND_B(B)                                                                                   \
    report(B, best_seconds(repeats, [&] {                                                           \
               block_pass<W, NV, B>(p.labels.data(), p.n, p.r, p.slot_of.data(), table.data(), p.kc, \
                                    best.data(), threads);                                          \
           }));
    BOUND_B(1)
    BOUND_B(2)
    BOUND_B(4)
    if (NV <= 4) BOUND_B(8)
#undef BOUND_B
    if (cb > 0) {
        report(-static_cast<int>(cb), best_seconds(repeats, [&] {
                   column_blocked_pass<W, NV>(p.labels.data(), p.n, p.r, p.slot_of.data(),
                                              table.data(), p.kc, best.data(), threads, cb);
               }));
    }
}

int main(int argc, char** argv) {
    if (argc < 8) {
        std::fprintf(stderr, "usage: %s LABELS N R K OFFSETS THREADS REPEATS [COL_BLOCK]\n", argv[0]);
        return 2;
    }
    Problem p;
    p.n = std::atoll(argv[2]);
    p.r = std::atoll(argv[3]);
    p.kc = std::atoll(argv[4]);
    const int threads = std::atoi(argv[6]);
    g_thread_clock = threads == 1;
    const int repeats = std::atoi(argv[7]);
    const int64_t cb = argc > 8 ? std::atoll(argv[8]) : 0;
    p.labels.resize(static_cast<size_t>(p.n * p.r));
    std::vector<int64_t> offsets(static_cast<size_t>(p.r + 1));
    FILE* f = std::fopen(argv[1], "rb");
    if (!f || std::fread(p.labels.data(), sizeof(int32_t), p.labels.size(), f) != p.labels.size()) return 3;
    std::fclose(f);
    f = std::fopen(argv[5], "rb");
    if (!f || std::fread(offsets.data(), sizeof(int64_t), offsets.size(), f) != offsets.size()) return 3;
    std::fclose(f);
    p.slot_of.resize(static_cast<size_t>(p.r));
    for (int64_t i = 0; i < p.r; ++i) p.slot_of[static_cast<size_t>(i)] = offsets[static_cast<size_t>(i)] + i + 1;
    p.slots = offsets[static_cast<size_t>(p.r)] + p.r;
    // Missing labels (-1) read the partition's zero slot, as in the engine.
    run_width<2, 5>(p, threads, repeats, cb);
    run_width<2, 13>(p, threads, repeats, cb);
    run_width<4, 3>(p, threads, repeats, cb);
    run_width<4, 7>(p, threads, repeats, cb);
#if defined(__AVX512F__)
    run_width<8, 2>(p, threads, repeats, cb);
    run_width<8, 4>(p, threads, repeats, cb);
#endif
    return 0;
}
