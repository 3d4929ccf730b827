#include "cclust/distances.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(CCLUST_NO_SIMD_VARIANTS)
#define CCLUST_DISTANCES_AVX2 1
#include <immintrin.h>
#endif

#include "cclust/kmeans.hpp"
#include "cclust/parallel.hpp"

namespace cclust {

namespace {

double finish_root_sum(const double* columns, int64_t m, int64_t d, int64_t from, const double* xi,
                       int64_t body, const double* lanes);

// An n x width row-major matrix stored by column (width x n).
template <class T>
std::vector<T> by_column(const T* rows, int64_t n, int64_t width) {
    std::vector<T> columns(static_cast<size_t>(n * width));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < width; ++c) columns[static_cast<size_t>(c * n + i)] = rows[i * width + c];
    return columns;
}

// sum over j in [from, m) of ||x_i - x_j|| from the features in columns (columns[k * m + j]), in
// one fixed order whatever the instruction set: each squared distance summed over the features
// in order from +0, then four running sums of the roots over j - from = 0, 1, 2, 3 (mod 4) for
// the first 4 * floor(count / 4) terms, added as (s0 + s1) + (s2 + s3), then the last terms one
// by one. With SSE2, two lanes compute two distances at once, the squares held in registers
// across the features (IEEE square roots are correctly rounded, so every lane gives the scalar
// value).
double row_root_sum(const double* columns, int64_t m, int64_t d, int64_t from, const double* xi) {
    const int64_t count = m - from;
    const int64_t body = count - count % 4;
    double lanes[4] = {0.0, 0.0, 0.0, 0.0};
#if defined(__SSE2__)
    __m128d run_low = _mm_setzero_pd(), run_high = _mm_setzero_pd();
    for (int64_t j = 0; j < body; j += 4) {
        __m128d low = _mm_setzero_pd(), high = _mm_setzero_pd();
        for (int64_t k = 0; k < d; ++k) {
            const double* column = columns + k * m + from + j;
            const __m128d x = _mm_set1_pd(xi[k]);
            const __m128d a = _mm_sub_pd(_mm_loadu_pd(column), x);
            const __m128d b = _mm_sub_pd(_mm_loadu_pd(column + 2), x);
            low = _mm_add_pd(low, _mm_mul_pd(a, a));
            high = _mm_add_pd(high, _mm_mul_pd(b, b));
        }
        run_low = _mm_add_pd(run_low, _mm_sqrt_pd(low));
        run_high = _mm_add_pd(run_high, _mm_sqrt_pd(high));
    }
    _mm_storeu_pd(lanes, run_low);
    _mm_storeu_pd(lanes + 2, run_high);
#else
    for (int64_t j = 0; j < body; j += 4) {
        for (int lane = 0; lane < 4; ++lane) {
            double sq = 0.0;
            for (int64_t k = 0; k < d; ++k) {
                const double diff = columns[k * m + from + j + lane] - xi[k];
                sq += diff * diff;
            }
            lanes[lane] += std::sqrt(sq);
        }
    }
#endif
    return finish_root_sum(columns, m, d, from, xi, body, lanes);
}

// The terms after the four-lane body, one by one, after the lanes' sum.
double finish_root_sum(const double* columns, int64_t m, int64_t d, int64_t from, const double* xi,
                       int64_t body, const double* lanes) {
    const int64_t count = m - from;
    double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (int64_t j = body; j < count; ++j) {
        double sq = 0.0;
        for (int64_t k = 0; k < d; ++k) {
            const double diff = columns[k * m + from + j] - xi[k];
            sq += diff * diff;
        }
        sum += std::sqrt(sq);
    }
    return sum;
}

#if defined(CCLUST_DISTANCES_AVX2)
// row_root_sum with the four lanes in one AVX2 vector: the same operations on each lane in the
// same order (no fused multiply-add: the build turns contraction off), so the same bits, and
// four square roots at a time, which doubles their throughput on the CPUs that have it.
__attribute__((target("avx2"))) double row_root_sum_avx2(const double* columns, int64_t m, int64_t d,
                                                         int64_t from, const double* xi) {
    const int64_t count = m - from;
    const int64_t body = count - count % 4;
    double lanes[4];
    __m256d run = _mm256_setzero_pd();
    for (int64_t j = 0; j < body; j += 4) {
        __m256d sq = _mm256_setzero_pd();
        for (int64_t k = 0; k < d; ++k) {
            const __m256d a = _mm256_sub_pd(_mm256_loadu_pd(columns + k * m + from + j), _mm256_set1_pd(xi[k]));
            sq = _mm256_add_pd(sq, _mm256_mul_pd(a, a));
        }
        run = _mm256_add_pd(run, _mm256_sqrt_pd(sq));
    }
    _mm256_storeu_pd(lanes, run);
    return finish_root_sum(columns, m, d, from, xi, body, lanes);
}

bool use_avx2() {
    static const bool supported = __builtin_cpu_supports("avx2");
    return supported;
}
#endif

double root_sum(const double* columns, int64_t m, int64_t d, int64_t from, const double* xi) {
#if defined(CCLUST_DISTANCES_AVX2)
    if (use_avx2()) return row_root_sum_avx2(columns, m, d, from, xi);
#endif
    return row_root_sum(columns, m, d, from, xi);
}

}  // namespace

double pair_distance_sum(const double* X, int64_t m, int64_t d, double power, int n_threads) {
    if (m < 2) return 0.0;
    // The features in columns (d x m), so the distances of row i to the rows after it are built
    // one feature at a time over contiguous memory.
    const std::vector<double> columns = by_column(X, m, d);
    std::vector<double> row_sums(static_cast<size_t>(m), 0.0);
    const bool root = power == 1.0;
    const double half_power = 0.5 * power;
    (void)n_threads;
#if defined(_OPENMP)
#pragma omp parallel num_threads(n_threads < 1 ? 1 : n_threads)
#endif
    {
        std::vector<double> squares(static_cast<size_t>(m)), xi(static_cast<size_t>(d));
#if defined(_OPENMP)
#pragma omp for schedule(dynamic, 16)
#endif
        for (int64_t i = 0; i < m - 1; ++i) {
            for (int64_t k = 0; k < d; ++k) xi[static_cast<size_t>(k)] = columns[static_cast<size_t>(k * m + i)];
            double sum = 0.0;
            if (root) {
                sum = root_sum(columns.data(), m, d, i + 1, xi.data());
            } else {
                const int64_t count = m - i - 1;
                double* sq = squares.data();
                for (int64_t j = 0; j < count; ++j) sq[j] = 0.0;
                for (int64_t k = 0; k < d; ++k) {
                    const double* column = columns.data() + k * m + i + 1;
                    for (int64_t j = 0; j < count; ++j) {
                        const double diff = column[j] - xi[static_cast<size_t>(k)];
                        sq[j] += diff * diff;
                    }
                }
                for (int64_t j = 0; j < count; ++j) sum += std::pow(sq[j], half_power);
            }
            row_sums[static_cast<size_t>(i)] = sum;
        }
    }
    double total = 0.0;
    for (int64_t i = 0; i < m; ++i) total += row_sums[static_cast<size_t>(i)];
    return total;
}

namespace {

// The pairs i < j whose counts (together, sampled) over the resamples pass ``inside``, from the
// labels by resample (``columns``, H x n, -1 = not drawn): one object's pairs with the objects
// after it are counted one resample at a time over contiguous memory. Count is wide enough for
// H; with bytes for labels and counts one SSE2 instruction advances 16 pairs instead of 4.
template <typename Label, typename Count, typename Inside>
int64_t count_pairs_in(const std::vector<Label>& columns, int64_t n, int64_t H, Inside inside, int n_threads) {
    int64_t total = 0;
    (void)n_threads;
#if defined(_OPENMP)
#pragma omp parallel num_threads(n_threads < 1 ? 1 : n_threads) reduction(+ : total)
#endif
    {
        std::vector<Count> sampled(static_cast<size_t>(n)), together(static_cast<size_t>(n));
#if defined(_OPENMP)
#pragma omp for schedule(dynamic, 16)
#endif
        for (int64_t i = 0; i < n - 1; ++i) {
            const int64_t count = n - i - 1;
            Count* __restrict smp = sampled.data();
            Count* __restrict tog = together.data();
            std::fill(smp, smp + count, static_cast<Count>(0));
            std::fill(tog, tog + count, static_cast<Count>(0));
            for (int64_t h = 0; h < H; ++h) {
                const Label a = columns[static_cast<size_t>(h * n + i)];
                if (a < 0) continue;  // i not drawn in h: no pair with i was drawn together in h
                const Label* __restrict other = columns.data() + h * n + i + 1;
                for (int64_t j = 0; j < count; ++j) {
                    smp[j] = static_cast<Count>(smp[j] + (other[j] >= 0));
                    tog[j] = static_cast<Count>(tog[j] + (other[j] == a));
                }
            }
            int64_t in_row = 0;
            for (int64_t j = 0; j < count; ++j) in_row += inside(tog[j], smp[j]);
            total += in_row;
        }
    }
    return total;
}

}  // namespace

int64_t consensus_pairs_in(const int32_t* L, int64_t n, int64_t H, double low, double high, int n_threads) {
    if (n < 2 || H < 1) return 0;
    if (H <= 255 && *std::max_element(L, L + n * H) < 127) {
        // labels below 127 and at most 255 resamples: labels and counts as bytes (the count loop
        // is most of the reference null's consensus time), and each pair's test read from a table
        // over the (together, sampled) counts, filled by the same double division and comparisons
        // as the general test below: the same pairs are counted
        std::vector<int8_t> columns(static_cast<size_t>(n * H));
        for (int64_t i = 0; i < n; ++i)
            for (int64_t h = 0; h < H; ++h) {
                const int32_t label = L[i * H + h];
                columns[static_cast<size_t>(h * n + i)] = static_cast<int8_t>(label < 0 ? -1 : label);
            }
        const int64_t width = H + 1;
        std::vector<uint8_t> table(static_cast<size_t>(width * width));
        for (int64_t tog = 0; tog <= H; ++tog)
            for (int64_t smp = 0; smp <= H; ++smp) {
                const double value = smp > 0 ? static_cast<double>(tog) / static_cast<double>(smp) : 0.0;
                table[static_cast<size_t>(tog * width + smp)] = value > low && value <= high;
            }
        const uint8_t* cells = table.data();
        return count_pairs_in<int8_t, uint8_t>(
            columns, n, H, [cells, width](uint8_t tog, uint8_t smp) { return cells[tog * width + smp]; }, n_threads);
    }
    return count_pairs_in<int32_t, int32_t>(
        by_column(L, n, H), n, H,
        [low, high](int32_t tog, int32_t smp) {
            const double value = smp > 0 ? static_cast<double>(tog) / static_cast<double>(smp) : 0.0;
            return value > low && value <= high;
        },
        n_threads);
}

// ---- The nearest-centre pass ---------------------------------------------------------------
//
// A row's ranking sum for centre c is ||c||^2 + sum over features j, in order, of x_j (-2 c_j):
// one running sum from ||c||^2, each product rounded and then added (no multiply-add is fused:
// -ffp-contract=off), so the same bits on every target and in every variant below. The kernel is
// written once over vectors of W doubles (GCC's vector extensions, always inlined into a function
// compiled for that instruction set, as lookup_simd.cpp does): a tile of B rows by NV vectors of
// centres holds its B x NV sums in registers across the features, so each load of the centres
// serves B rows and the B x NV independent chains of adds hide the add latency.

#if (defined(__GNUC__) || defined(__clang__)) && !defined(CCLUST_NO_SIMD_VARIANTS)
#define CCLUST_RANKING_VECTORS 1
#define CCLUST_RANKING_INLINE inline __attribute__((always_inline))

template <int W>
struct RankingVec {
    typedef double T __attribute__((vector_size(W * sizeof(double)), aligned(sizeof(double))));
};

// out[b * kp + c] for c in [c0, c0 + W NV): the ranking sums of rows xr + b d (b < B) against
// those centres (ct: -2 c by feature, d x kp; cn: ||c||^2).
template <int W, int NV, int B>
CCLUST_RANKING_INLINE void ranking_tile(const double* __restrict xr, int64_t d, const double* __restrict ct,
                                        const double* __restrict cn, int64_t kp, int64_t c0,
                                        double* __restrict out) {
    typedef typename RankingVec<W>::T Vec;
    // vectors read and written one at a time (an array copied as a whole goes through the stack)
    Vec acc[B][NV];
    for (int q = 0; q < NV; ++q) {
        const Vec base = *reinterpret_cast<const Vec*>(cn + c0 + q * W);
        for (int b = 0; b < B; ++b) acc[b][q] = base;
    }
    for (int64_t j = 0; j < d; ++j) {
        const Vec* col = reinterpret_cast<const Vec*>(ct + j * kp + c0);
        Vec c[NV];
        for (int q = 0; q < NV; ++q) c[q] = col[q];
        for (int b = 0; b < B; ++b) {
            const double xj = xr[b * d + j];
            for (int q = 0; q < NV; ++q) acc[b][q] += xj * c[q];
        }
    }
    for (int b = 0; b < B; ++b) {
        Vec* o = reinterpret_cast<Vec*>(out + b * kp + c0);
        for (int q = 0; q < NV; ++q) o[q] = acc[b][q];
    }
}

// The tiles of NV centre vectors from c0 for `count` rows: B rows at a time, the rows left in
// tiles of B / 2 rows, and so on.
template <int W, int NV, int B>
CCLUST_RANKING_INLINE void ranking_column(const double* __restrict xr, int64_t count, int64_t d,
                                          const double* __restrict ct, const double* __restrict cn, int64_t kp,
                                          int64_t c0, double* __restrict out) {
    int64_t i = 0;
    for (; i + B <= count; i += B) ranking_tile<W, NV, B>(xr + i * d, d, ct, cn, kp, c0, out + i * kp);
    if constexpr (B > 1) {
        if (i < count) ranking_column<W, NV, B / 2>(xr + i * d, count - i, d, ct, cn, kp, c0, out + i * kp);
    }
}

// Rows per tile for NV centre vectors: as many as keep ACC sums in registers, at most 8.
constexpr int rows_for(int acc, int nv) {
    return acc / nv < 1 ? 1 : (acc / nv > 8 ? 8 : acc / nv);
}

// The ranking sums of `count` rows against all kp centres (kp a multiple of 8): the centre
// vectors split into as few tiles of at most NV_MAX vectors as hold them, of nearly equal widths
// (a narrow last tile would leave too few chains of adds), each tile over as many rows as keep
// its ACC sums in registers.
template <int W, int NV_MAX, int ACC>
CCLUST_RANKING_INLINE void ranking_all(const double* __restrict xr, int64_t count, int64_t d,
                                       const double* __restrict ct, const double* __restrict cn, int64_t kp,
                                       double* __restrict out) {
    int64_t left = kp / W, tiles = (left + NV_MAX - 1) / NV_MAX;
    for (int64_t c0 = 0; left > 0; --tiles) {
        const int64_t nv = (left + tiles - 1) / tiles;
        switch (nv) {
            case 1: ranking_column<W, 1, rows_for(ACC, 1)>(xr, count, d, ct, cn, kp, c0, out); break;
            case 2: ranking_column<W, 2, rows_for(ACC, 2)>(xr, count, d, ct, cn, kp, c0, out); break;
            case 3: ranking_column<W, 3, rows_for(ACC, 3)>(xr, count, d, ct, cn, kp, c0, out); break;
            default: ranking_column<W, 4, rows_for(ACC, 4)>(xr, count, d, ct, cn, kp, c0, out); break;
        }
        c0 += nv * W;
        left -= nv;
    }
}

// A row's lowest ranking sum `low` (at `best`, the lowest index among equal sums) and the lowest
// of its other sums, `second`: what the scan over its centres in nearest_centres finds; best = -1
// when a sum is NaN, which that scan then decides itself.
struct RankingPick {
    double low, second;
    int64_t best;
    double norm;  // ||x||^2, summed as squared_norm sums it
};

// The pick of one row from its sums (kp of them; the padding centres past k carry +inf norms, so
// their sums are +inf or NaN): each lane keeps its two lowest sums, then the lanes' pairs are
// merged; equal values compare equal, so `low` and `second` are the scan's, and best is the
// first index holding `low`.
template <int W>
CCLUST_RANKING_INLINE RankingPick pick_of(const double* __restrict acc, int64_t k, int64_t kp) {
    typedef typename RankingVec<W>::T Vec;
    const double inf = std::numeric_limits<double>::infinity();
    const Vec mark = Vec{} + 1.0;
    Vec one = Vec{} + inf, two = one, nan = Vec{};
    for (int64_t c = 0; c < kp; c += W) {
        const Vec v = *reinterpret_cast<const Vec*>(acc + c);
        nan = v != v ? mark : nan;                 // a NaN lane anywhere (1 marks it)
        const Vec larger = v < one ? one : v;
        one = v < one ? v : one;
        two = larger < two ? larger : two;
    }
    RankingPick pick{inf, inf, -1, 0.0};
    bool any_nan = false;
    for (int w = 0; w < W; ++w) any_nan |= nan[w] != 0.0;
    if (any_nan) return pick;  // a NaN sum, maybe in the padding: the scan decides
    // the two lowest of the lanes' pairs, without branches: of {a <= b} and {low <= second}, the
    // lowest is min(a, low) and the next min(max(a, low), b, second)
    for (int w = 0; w < W; ++w) {
        const double a = one[w], b = two[w];
        const double larger = a < pick.low ? pick.low : a;
        const double next = b < pick.second ? b : pick.second;
        pick.second = larger < next ? larger : next;
        pick.low = a < pick.low ? a : pick.low;
    }
    int64_t c = 0;
    while (c < k && !(acc[c] == pick.low)) ++c;
    pick.best = c < k ? c : -1;
    return pick;
}

// Rows per call of a ranking variant: the scratch holds this many rows' sums.
constexpr int64_t kRankingRows = 24;

// The ranking sums of `count` (<= kRankingRows) consecutive rows from xr into out (count x kp)
// and their picks:
// tiles of B rows, then the rows left one at a time.
template <int W, int NV_MAX, int ACC>
CCLUST_RANKING_INLINE void ranking_block_rows(const double* xr, int64_t count, int64_t d, const double* ct,
                                              const double* cn, int64_t kp, int64_t k, double* out,
                                              RankingPick* picks) {
    ranking_all<W, NV_MAX, ACC>(xr, count, d, ct, cn, kp, out);
    int64_t i = 0;
    for (; i < count; ++i) picks[i] = pick_of<W>(out + i * kp, k, kp);
    // the rows' squared norms side by side (one running sum each, in feature order, as
    // squared_norm: the same bits, without waiting on one sum's latency at every feature)
    double norms[kRankingRows] = {};
    for (int64_t j = 0; j < d; ++j) {
        for (i = 0; i < count; ++i) norms[i] += xr[i * d + j] * xr[i * d + j];
    }
    for (i = 0; i < count; ++i) picks[i].norm = norms[i];
}

typedef void (*RankingKernel)(const double*, int64_t, int64_t, const double*, const double*, int64_t, int64_t,
                              double*, RankingPick*);

// Baseline: 2-double vectors (SSE2 on x86-64), 16 registers: tiles of up to 8 centres and 8 sums.
void ranking_baseline(const double* xr, int64_t count, int64_t d, const double* ct, const double* cn,
                      int64_t kp, int64_t k, double* out, RankingPick* picks) {
    ranking_block_rows<2, 4, 8>(xr, count, d, ct, cn, kp, k, out, picks);
}

#if defined(__x86_64__) || defined(__i386__)
// AVX2: 4-double vectors, 16 registers: tiles of up to 12 centres and 9 sums (3 rows x 12 centres).
__attribute__((target("avx2"))) void ranking_avx2(const double* xr, int64_t count, int64_t d, const double* ct,
                                                  const double* cn, int64_t kp, int64_t k, double* out,
                                                  RankingPick* picks) {
    ranking_block_rows<4, 3, 9>(xr, count, d, ct, cn, kp, k, out, picks);
}

// AVX-512: 8-double vectors, 32 registers: tiles of up to 32 centres and 24 sums (6 rows x 32
// centres, 8 x 24, 8 x 16 or 8 x 8).
__attribute__((target("avx512f"))) void ranking_avx512(const double* xr, int64_t count, int64_t d,
                                                       const double* ct, const double* cn, int64_t kp,
                                                       int64_t k, double* out, RankingPick* picks) {
    ranking_block_rows<8, 4, 24>(xr, count, d, ct, cn, kp, k, out, picks);
}
#endif

// The variant kernel: `variant` as kmeans.hpp numbers them (0 baseline, 1 AVX2, 2 AVX-512), or
// -1 for CCLUST_KMEANS_SIMD (read once) if the CPU supports it, else the widest it supports.
// A variant the CPU lacks falls back to the next narrower one.
RankingKernel ranking_kernel(int variant) {
#if defined(__x86_64__) || defined(__i386__)
    static const int automatic = [] {
        const bool avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2");
        const char* env = std::getenv("CCLUST_KMEANS_SIMD");
        const std::string name = env != nullptr ? env : "";
        if (name == "baseline") return 0;
        if (name == "avx2" && avx2) return 1;
        return avx512 ? 2 : (avx2 ? 1 : 0);
    }();
    if (variant < 0) variant = automatic;
    if (variant >= 2 && __builtin_cpu_supports("avx512f")) return ranking_avx512;
    if (variant >= 1 && __builtin_cpu_supports("avx2")) return ranking_avx2;
#else
    (void)variant;
#endif
    return ranking_baseline;
}
#endif  // CCLUST_RANKING_VECTORS

static double squared_norm(const double* __restrict xr, int64_t d) {
    double xn = 0.0;
    for (int64_t j = 0; j < d; ++j) xn += xr[j] * xr[j];
    return xn;
}

#if !defined(CCLUST_RANKING_VECTORS)
// acc[c0 .. c0 + W) of ranking_costs: W centres' sums held in registers across the features
// (the kernel without vector extensions).
// acc[c0 .. c0 + W) of ranking_costs: W centres' sums held in registers across the features.
template <int W>
__attribute__((always_inline)) inline void ranking_block(const double* __restrict xr, int64_t d,
                                                         const double* __restrict ct,
                                                         const double* __restrict cn, int64_t kp, int64_t c0,
                                                         double* __restrict acc) {
    double a[W];
    for (int u = 0; u < W; ++u) a[u] = cn[c0 + u];
    for (int64_t j = 0; j < d; ++j) {
        const double xj = xr[j];
        const double* col = ct + j * kp + c0;
        for (int u = 0; u < W; ++u) a[u] += xj * col[u];
    }
    for (int u = 0; u < W; ++u) acc[c0 + u] = a[u];
}

// ranking_block for two rows at once: each row's sums are the one-row block's, operation for
// operation, but the two independent chains of additions keep the adder busy where one row's
// chain waits on its own latency, and each load of the centres serves both rows.
template <int W>
__attribute__((always_inline)) inline void ranking_block2(const double* __restrict xr, const double* __restrict yr,
                                                          int64_t d, const double* __restrict ct,
                                                          const double* __restrict cn, int64_t kp, int64_t c0,
                                                          double* __restrict acc, double* __restrict bcc) {
    double a[W], b[W];
    for (int u = 0; u < W; ++u) a[u] = b[u] = cn[c0 + u];
    for (int64_t j = 0; j < d; ++j) {
        const double xj = xr[j], yj = yr[j];
        const double* col = ct + j * kp + c0;
        for (int u = 0; u < W; ++u) {
            a[u] += xj * col[u];
            b[u] += yj * col[u];
        }
    }
    for (int u = 0; u < W; ++u) {
        acc[c0 + u] = a[u];
        bcc[c0 + u] = b[u];
    }
}

// acc[c] = ||c||^2 - 2 x.c for the kp centres (kp a multiple of 8; ct: -2 c by feature, d x kp;
// cn: ||c||^2), sixteen or eight centres at a time held in registers across the features;
// returns ||x||^2. The rounding differs from the engine's sums (nearest_centres bounds it) but
// not between instruction sets: no multiply-add is fused (-ffp-contract=off) and each value is
// one running sum in feature order.
#if defined(CCLUST_DISTANCES_AVX2)
__attribute__((target_clones("avx2", "default")))
#endif
static double ranking_costs(const double* __restrict xr, int64_t d, const double* __restrict ct,
                            const double* __restrict cn, int64_t kp, double* __restrict acc) {
    int64_t c0 = 0;
    for (; c0 + 16 <= kp; c0 += 16) ranking_block<16>(xr, d, ct, cn, kp, c0, acc);
    if (c0 < kp) ranking_block<8>(xr, d, ct, cn, kp, c0, acc);  // the last eight
    return squared_norm(xr, d);
}

// ranking_costs of the rows xr and yr into acc and bcc, eight centres of both rows at a time; the
// same values bit for bit. (Sixteen centres of two rows, 32 sums, spill out of AVX2's registers.)
#if defined(CCLUST_DISTANCES_AVX2)
__attribute__((target_clones("avx2", "default")))
#endif
static void ranking_costs2(const double* __restrict xr, const double* __restrict yr, int64_t d,
                           const double* __restrict ct, const double* __restrict cn, int64_t kp,
                           double* __restrict acc, double* __restrict bcc) {
    for (int64_t c0 = 0; c0 < kp; c0 += 8) ranking_block2<8>(xr, yr, d, ct, cn, kp, c0, acc, bcc);
}
#endif  // !CCLUST_RANKING_VECTORS

void nearest_centres(const double* X, int64_t n, int64_t d, const double* centres, int64_t k,
                     int32_t* labels, int n_threads, int variant) {
    if (n <= 0) return;
    if (k <= 1 || d <= 0) {
        std::fill(labels, labels + n, 0);
        return;
    }
    // -2 c by feature (d x kp, kp = k rounded up to eight; zeros past k): exact, a power of two;
    // the centres' squared norms (+inf past k, so that no padding sum is the lowest)
    const int64_t kp = (k + 7) / 8 * 8;
    std::vector<double> minus_twice(static_cast<size_t>(d * kp), 0.0);
    std::vector<double> norms(static_cast<size_t>(kp), std::numeric_limits<double>::infinity());
    double largest = 0.0;
    for (int64_t c = 0; c < k; ++c) {
        const double* cr = centres + c * d;
        double s = 0.0;
        for (int64_t j = 0; j < d; ++j) {
            minus_twice[static_cast<size_t>(j * kp + c)] = -2.0 * cr[j];
            s += cr[j] * cr[j];
        }
        norms[static_cast<size_t>(c)] = s;
        largest = std::max(largest, s);
    }
    // A computed ||c||^2 - 2 x.c is within about (d + 1) eps (||x||^2 + 2 ||c||^2) of its exact
    // value, and the engine's sum of squares within d eps 2 (||x||^2 + ||c||^2) of its own: a
    // second-best centre within twice the sum of both bounds, and more, is a near tie.
    const double slack = 16.0 * static_cast<double>(d + 2) * 2.220446049250313e-16;
    const double* ct = minus_twice.data();
    const double* cn = norms.data();
    // The label of row i from its ranking sums (kp of them from acc) and, where a vector kernel
    // made it, its pick.
    auto choose = [&](int64_t i, const double* acc, const RankingPick* pick) {
        const double* xr = X + i * d;
        const double xn = pick != nullptr ? pick->norm : squared_norm(xr, d);
        int64_t best = 0;
        double low = acc[0], second = std::numeric_limits<double>::infinity();
        if (pick != nullptr && pick->best >= 0) {
            best = pick->best;
            low = pick->low;
            second = pick->second;
        } else {
            for (int64_t c = 1; c < k; ++c) {
                const double v = acc[c];
                if (v < low) {
                    second = low;
                    low = v;
                    best = c;
                } else if (v < second) {
                    second = v;
                }
            }
        }
        // not "<=": a NaN gap (infinite features) is decided exactly too
        if (!(second - low > slack * (xn + cn[best] + largest))) {
            // the engine's costs (object_costs in engine.cpp), by its own function
            double bv = 0.0;
            for (int64_t c = 0; c < k; ++c) {
                const double s = squared_distance(xr, centres + c * d, d);
                if (c == 0 || s < bv) {
                    bv = s;
                    best = c;
                }
            }
        }
        labels[i] = static_cast<int32_t>(best);
    };
#if defined(CCLUST_RANKING_VECTORS)
    const RankingKernel ranking = ranking_kernel(variant);
    for_each_chunk_with(
        n, n_threads, [&]() { return std::vector<double>(static_cast<size_t>(kRankingRows * kp)); },
        [&](std::vector<double>& scratch, int64_t, int64_t start, int64_t stop) {
            RankingPick picks[kRankingRows];
            for (int64_t i = start; i < stop; i += kRankingRows) {
                const int64_t count = std::min(kRankingRows, stop - i);
                ranking(X + i * d, count, d, ct, cn, kp, k, scratch.data(), picks);
                for (int64_t t = 0; t < count; ++t) choose(i + t, scratch.data() + t * kp, picks + t);
            }
        });
#else
    (void)variant;
    for_each_chunk_with(
        n, n_threads, [&]() { return std::vector<double>(static_cast<size_t>(2 * kp)); },
        [&](std::vector<double>& scratch, int64_t, int64_t start, int64_t stop) {
            // rows in pairs: the second row of a pair reads the sums made with the first
            for (int64_t i = start; i < stop; i += 2) {
                if (i + 1 < stop) {
                    ranking_costs2(X + i * d, X + (i + 1) * d, d, ct, cn, kp, scratch.data(),
                                   scratch.data() + kp);
                    choose(i, scratch.data(), nullptr);
                    choose(i + 1, scratch.data() + kp, nullptr);
                } else {
                    ranking_costs(X + i * d, d, ct, cn, kp, scratch.data());
                    choose(i, scratch.data(), nullptr);
                }
            }
        });
#endif
}

}  // namespace cclust
