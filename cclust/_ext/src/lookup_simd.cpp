// The categorical lookup kernel compiled once per instruction-set variant (baseline, AVX2,
// AVX-512), and the choice among them (CCLUST_KMEANS_SIMD, kmeans_force_simd).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "cclust/kmeans_internal.hpp"

#if (defined(__GNUC__) || defined(__clang__)) && !defined(CCLUST_NO_SIMD_VARIANTS) && \
    (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

namespace cclust {
namespace kmeans_detail {

// ---- The categorical lookup kernel in instruction-set variants (see kmeans.hpp) ------------
//
// out[j * stride + k] = sum over partitions i, in order, of table[(slot_of[i] + L[j, i]) * stride
// + k] for the `count` objects whose label rows start at `labels`: the lookup-adds of a pass
// with no dense block, written once over vectors of W doubles and compiled once per variant
// (always inlined into a function with that variant's target). Objects go in blocks of B whose
// partitions are walked together, so B independent chains of adds hide the add latency; each
// object's own sum is still added in partition order, from +0, as object_costs adds it, so the
// variants and object_costs agree bit for bit. The table's rows (`stride` doubles) are padded
// with zeros to whole vectors of the variant.

#if (defined(__GNUC__) || defined(__clang__)) && !defined(CCLUST_NO_SIMD_VARIANTS)
#define CCLUST_VECTOR_KERNEL 1
#if defined(__x86_64__) || defined(__i386__)
#define CCLUST_X86_VARIANTS 1
#endif
#endif

// Cache blocking: a table larger than four times this (a 1 MiB L2) is walked in groups of
// partitions whose rows take about this much, each group for all objects of a call before the
// next. Measured on an AMD EPYC (1 MiB L2 per core; benchmarks/bench_kcc_pass.py): K = 26 and
// r = 1000 (a 2.7 MB table) 6-7% faster; r = 100 (0.27 MB) 9% slower when split, so not split.
// The environment variable CCLUST_KMEANS_TABLE_GROUP_BYTES (read once; 0 = never) overrides it,
// for benchmarks.
constexpr int64_t kTableGroupBytes = 256 * 1024;

int64_t table_group_bytes() {
    static const int64_t bytes = [] {
        const char* env = std::getenv("CCLUST_KMEANS_TABLE_GROUP_BYTES");
        if (env == nullptr || *env == '\0') return kTableGroupBytes;
        const long long v = std::atoll(env);
        return v > 0 ? static_cast<int64_t>(v) : std::numeric_limits<int64_t>::max();
    }();
    return bytes;
}

#if defined(CCLUST_VECTOR_KERNEL)
#define CCLUST_INLINE inline __attribute__((always_inline))

template <int W>
struct SimdVec {
    typedef double T __attribute__((vector_size(W * sizeof(double)), aligned(sizeof(double))));
};

// Partitions i0..i1-1 of B objects, continuing the sums in `out` unless i0 == 0 (a partial sum
// stored and loaded again is the same double, so groups change no bit).
template <int W, int NV, int B, class T>
CCLUST_INLINE void lookup_block(const T* __restrict labels, int64_t r, int64_t i0,
                                int64_t i1, const int64_t* __restrict slot_of,
                                const double* __restrict table, double* __restrict out) {
    typedef typename SimdVec<W>::T Vec;
    constexpr int64_t stride = int64_t{W} * NV;
    Vec acc[B][NV];
    for (int b = 0; b < B; ++b) {
        if (i0 == 0) {
            for (int q = 0; q < NV; ++q) acc[b][q] = Vec{};
        } else {
            std::memcpy(acc[b], out + b * stride, sizeof acc[b]);
        }
    }
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t s = slot_of[i];
        for (int b = 0; b < B; ++b) {
            const Vec* t = reinterpret_cast<const Vec*>(table + (s + label_code(labels[b * r + i])) * stride);
            for (int q = 0; q < NV; ++q) acc[b][q] += t[q];
        }
    }
    for (int b = 0; b < B; ++b) std::memcpy(out + b * stride, acc[b], sizeof acc[b]);
}

template <int W, int NV, int B, class T>
CCLUST_INLINE void lookup_rows_fixed(const T* labels, int64_t r, int64_t count,
                                     const int64_t* slot_of, const double* table, int64_t group,
                                     double* out) {
    constexpr int64_t stride = int64_t{W} * NV;
    for (int64_t i0 = 0; i0 < r; i0 += group) {
        const int64_t i1 = std::min(r, i0 + group);
        int64_t j = 0;
        for (; j + B <= count; j += B) {
            lookup_block<W, NV, B>(labels + j * r, r, i0, i1, slot_of, table, out + j * stride);
        }
        for (; j < count; ++j) {
            lookup_block<W, NV, 1>(labels + j * r, r, i0, i1, slot_of, table, out + j * stride);
        }
    }
}

// Any stride (wide tables): one object at a time, the sums in `out`.
template <class T>
CCLUST_INLINE void lookup_rows_any(const T* __restrict labels, int64_t r, int64_t count,
                                   const int64_t* __restrict slot_of,
                                   const double* __restrict table, int64_t stride, int64_t group,
                                   double* __restrict out) {
    for (int64_t k = 0; k < count * stride; ++k) out[k] = 0.0;
    for (int64_t i0 = 0; i0 < r; i0 += group) {
        const int64_t i1 = std::min(r, i0 + group);
        for (int64_t j = 0; j < count; ++j) {
            double* o = out + j * stride;
            const T* lab = labels + j * r;
            for (int64_t i = i0; i < i1; ++i) {
                const double* t = table + (slot_of[i] + label_code(lab[i])) * stride;
                for (int64_t k = 0; k < stride; ++k) o[k] += t[k];
            }
        }
    }
}

// Objects per block: as many accumulator vectors as leave room in `regs` registers, at most 8.
constexpr int block_for(int regs, int nv) {
    return regs / nv < 1 ? 1 : (regs / nv > 8 ? 8 : regs / nv);
}

template <int W, int REGS, class T>
CCLUST_INLINE void lookup_rows(const T* labels, int64_t r, int64_t count,
                               const int64_t* slot_of, const double* table, int64_t stride,
                               int64_t group, double* out) {
#define CCLUST_LOOKUP_CASE(NV)                                                                  \
    case NV:                                                                                    \
        lookup_rows_fixed<W, NV, block_for(REGS, NV)>(labels, r, count, slot_of, table, group,  \
                                                      out);                                     \
        return;
    switch (stride / W) {
        CCLUST_LOOKUP_CASE(1)
        CCLUST_LOOKUP_CASE(2)
        CCLUST_LOOKUP_CASE(3)
        CCLUST_LOOKUP_CASE(4)
        CCLUST_LOOKUP_CASE(5)
        CCLUST_LOOKUP_CASE(6)
        CCLUST_LOOKUP_CASE(7)
        CCLUST_LOOKUP_CASE(8)
        default:
            break;
    }
#undef CCLUST_LOOKUP_CASE
    lookup_rows_any(labels, r, count, slot_of, table, stride, group, out);
}

// Baseline: 2-double vectors (SSE2 on x86-64), 16 registers.
template <class T>
void lookup_rows_baseline(const void* codes, int64_t r, int64_t count,
                          const int64_t* slot_of, const double* table, int64_t stride,
                          int64_t group, double* out) {
    const T* labels = static_cast<const T*>(codes);
#define CCLUST_LOOKUP_CASE(NV)                                                                 \
    case NV:                                                                                   \
        lookup_rows_fixed<2, NV, 1>(labels, r, count, slot_of, table, group, out);             \
        return;
    switch (stride / 2) {  // up to 32 clusters in 2-double vectors
        CCLUST_LOOKUP_CASE(9)
        CCLUST_LOOKUP_CASE(10)
        CCLUST_LOOKUP_CASE(11)
        CCLUST_LOOKUP_CASE(12)
        CCLUST_LOOKUP_CASE(13)
        CCLUST_LOOKUP_CASE(14)
        CCLUST_LOOKUP_CASE(15)
        CCLUST_LOOKUP_CASE(16)
        default:
            break;
    }
#undef CCLUST_LOOKUP_CASE
    lookup_rows<2, 12>(labels, r, count, slot_of, table, stride, group, out);
}

#if defined(CCLUST_X86_VARIANTS)
// AVX2: 4-double vectors, 16 registers.
template <class T>
__attribute__((target("avx2"))) void lookup_rows_avx2(const void* codes, int64_t r,
                                                      int64_t count, const int64_t* slot_of,
                                                      const double* table, int64_t stride,
                                                      int64_t group, double* out) {
    const T* labels = static_cast<const T*>(codes);
    lookup_rows<4, 12>(labels, r, count, slot_of, table, stride, group, out);
}

// AVX-512: 8-double vectors (4-double ones where 8 would only add padding, see row_width), 32
// registers.
template <class T>
__attribute__((target("avx512f,avx512vl"))) void lookup_rows_avx512(
    const void* codes, int64_t r, int64_t count, const int64_t* slot_of, const double* table,
    int64_t stride, int64_t group, double* out) {
    const T* labels = static_cast<const T*>(codes);
    if (stride % 8 == 0) {
        lookup_rows<8, 32>(labels, r, count, slot_of, table, stride, group, out);
    } else {
        lookup_rows<4, 24>(labels, r, count, slot_of, table, stride, group, out);
    }
}
#endif
#endif  // CCLUST_VECTOR_KERNEL

// Partitions per group of the lookup kernel: all of them unless the table (slots x kp doubles)
// outgrows 4 x table_group_bytes(), else as many as take about that much on average (>= 8).
int64_t partition_group(const Slots& slots, int64_t r, int64_t kp) {
    const double bytes = static_cast<double>(slots.count) * static_cast<double>(kp) * sizeof(double);
    const auto budget = static_cast<double>(table_group_bytes());
    if (r == 0 || bytes <= 4 * budget) return std::max<int64_t>(r, 1);
    const auto per = static_cast<int64_t>(budget / (bytes / static_cast<double>(r)));
    return std::max<int64_t>(per, 8);
}

// Doubles per table row of `kc` centres in a variant: kc rounded up to whole vectors. AVX-512
// takes 8-double vectors only where they pad at most 1/7 more than 4-double ones: measured on an
// AMD EPYC (benchmarks/kcc_pass_bound.cpp), 16 padded columns for K = 10 cost 30% more than 12,
// while 32 for K = 26 in blocks of 8 objects were 11% faster than 28 at 10^6 objects.
int64_t row_width(int32_t variant, int64_t kc) {
    const int64_t four = (kc + 3) / 4 * 4, eight = (kc + 7) / 8 * 8;
    if (variant == kSimdAvx512) return 7 * eight <= 8 * four ? eight : four;
    if (variant == kSimdAvx2) return four;
    return (kc + kLane - 1) / kLane * kLane;
}

bool cpu_supports(int32_t variant) {
    switch (variant) {
        case kSimdBaseline:
            return true;
#if defined(CCLUST_X86_VARIANTS)
        case kSimdAvx2:
            return __builtin_cpu_supports("avx2");
        case kSimdAvx512:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#endif
        default:
            return false;
    }
}

int32_t best_supported() {
    for (int32_t v = kSimdAvx512; v > kSimdBaseline; --v) {
        if (cpu_supports(v)) return v;
    }
    return kSimdBaseline;
}

// CCLUST_KMEANS_SIMD, read once: a supported variant's name, else the widest supported.
int32_t automatic_variant() {
    static const int32_t chosen = [] {
        const char* env = std::getenv("CCLUST_KMEANS_SIMD");
        const std::string name = env != nullptr ? env : "";
        const int32_t asked = name == "baseline" ? kSimdBaseline
                              : name == "avx2"   ? kSimdAvx2
                              : name == "avx512" ? kSimdAvx512
                                                 : -1;
        return asked >= 0 && cpu_supports(asked) ? asked : best_supported();
    }();
    return chosen;
}

std::atomic<int32_t> forced_variant{-1};

int32_t current_variant() {
    const int32_t forced = forced_variant.load(std::memory_order_relaxed);
    return forced >= 0 ? forced : automatic_variant();
}

#if defined(CCLUST_VECTOR_KERNEL)
template <class T>
LookupRows typed_lookup_kernel(int32_t variant) {
#if defined(CCLUST_X86_VARIANTS)
    if (variant == kSimdAvx512) return lookup_rows_avx512<T>;
    if (variant == kSimdAvx2) return lookup_rows_avx2<T>;
#endif
    (void)variant;
    return lookup_rows_baseline<T>;
}
#endif

#if defined(CCLUST_X86_VARIANTS)
// ---- k-means++ candidate costs by label mismatches (see MismatchRows) ------------------------
//
// For each object and candidate, a vector of codes at a time: the lanes where both codes are
// labelled (not the all-ones missing code) and differ are counted, and sums[count] is the cost.
// The candidates' rows are padded with the missing code to whole 64-byte vectors, so their loads
// stay inside the row and the lanes past r count nothing; an object's last vector is loaded with
// a mask (AVX-512) or from a copy (AVX2), so no load reads past the object's row. Integer
// counts, so every variant and every order gives the same costs.

#define CCLUST_AVX512BW __attribute__((target("avx512f,avx512vl,avx512bw,popcnt"), always_inline)) inline
#define CCLUST_AVX2 __attribute__((target("avx2,popcnt"), always_inline)) inline

// The lanes of `valid` loaded from p, the others zero (masked: no fault past the row).
template <class T>
CCLUST_AVX512BW __m512i masked_load_avx512(uint64_t valid, const T* p) {
    if constexpr (sizeof(T) == 1) return _mm512_maskz_loadu_epi8(valid, p);
    else if constexpr (sizeof(T) == 2) return _mm512_maskz_loadu_epi16(static_cast<__mmask32>(valid), p);
    else return _mm512_maskz_loadu_epi32(static_cast<__mmask16>(valid), p);
}

// The lanes of `within` where a and b differ, one bit per lane.
template <class T>
CCLUST_AVX512BW uint64_t differ_avx512(uint64_t within, __m512i a, __m512i b) {
    if constexpr (sizeof(T) == 1) return _mm512_mask_cmpneq_epu8_mask(within, a, b);
    else if constexpr (sizeof(T) == 2) return _mm512_mask_cmpneq_epu16_mask(static_cast<__mmask32>(within), a, b);
    else return _mm512_mask_cmpneq_epi32_mask(static_cast<__mmask16>(within), a, b);
}

// The lanes where a and b are equal, sizeof(T) bits per lane.
template <class T>
CCLUST_AVX2 uint32_t same_avx2(__m256i a, __m256i b) {
    if constexpr (sizeof(T) == 1) return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b)));
    else if constexpr (sizeof(T) == 2) return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi16(a, b)));
    else return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi32(a, b)));
}

template <class T>
__attribute__((target("avx512f,avx512vl,avx512bw,popcnt"))) void mismatch_rows_avx512(
    const void* codes, int64_t r, int64_t count, const void* candidates, int64_t padded, int64_t kc,
    const double* sums, int64_t stride, double* out) {
    constexpr int64_t kLanes = 64 / static_cast<int64_t>(sizeof(T));
    const T* labels = static_cast<const T*>(codes);
    const T* cand = static_cast<const T*>(candidates);
    const __m512i missing = _mm512_set1_epi32(-1);
    for (int64_t j = 0; j < count; ++j) {
        const T* lab = labels + j * r;
        double* o = out + j * stride;
        for (int64_t t = 0; t < kc; ++t) {
            const T* c = cand + t * padded;
            int64_t m = 0;
            for (int64_t i = 0; i < r; i += kLanes) {
                const int64_t left = r - i;
                const uint64_t valid = left >= kLanes ? (kLanes == 64 ? ~uint64_t{0} : (uint64_t{1} << kLanes) - 1)
                                                      : (uint64_t{1} << left) - 1;
                const __m512i a = masked_load_avx512<T>(valid, lab + i);
                const __m512i b = _mm512_loadu_si512(c + i);
                const uint64_t both = differ_avx512<T>(differ_avx512<T>(valid, a, missing), b, missing);
                m += static_cast<int64_t>(_mm_popcnt_u64(differ_avx512<T>(both, a, b)));
            }
            o[t] = sums[m];
        }
        for (int64_t t = kc; t < stride; ++t) o[t] = 0.0;
    }
}

template <class T>
__attribute__((target("avx2,popcnt"))) void mismatch_rows_avx2(const void* codes, int64_t r, int64_t count,
                                                                const void* candidates, int64_t padded,
                                                                int64_t kc, const double* sums,
                                                                int64_t stride, double* out) {
    constexpr int64_t kLanes = 32 / static_cast<int64_t>(sizeof(T));
    const T* labels = static_cast<const T*>(codes);
    const T* cand = static_cast<const T*>(candidates);
    const __m256i missing = _mm256_set1_epi32(-1);
    const int64_t full = r / kLanes * kLanes;
    alignas(32) T tail[kLanes];
    for (int64_t j = 0; j < count; ++j) {
        const T* lab = labels + j * r;
        double* o = out + j * stride;
        std::memset(tail, 0xFF, sizeof tail);
        std::memcpy(tail, lab + full, static_cast<size_t>(r - full) * sizeof(T));
        for (int64_t t = 0; t < kc; ++t) {
            const T* c = cand + t * padded;
            int64_t m = 0;
            for (int64_t i = 0; i < r; i += kLanes) {
                const __m256i a = i < full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lab + i))
                                           : _mm256_load_si256(reinterpret_cast<const __m256i*>(tail));
                const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + i));
                m += _mm_popcnt_u32(~(same_avx2<T>(a, b) | same_avx2<T>(a, missing) | same_avx2<T>(b, missing)));
            }
            o[t] = sums[m / static_cast<int64_t>(sizeof(T))];
        }
        for (int64_t t = kc; t < stride; ++t) o[t] = 0.0;
    }
}
#undef CCLUST_AVX512BW
#undef CCLUST_AVX2
#endif  // CCLUST_X86_VARIANTS

int64_t mismatch_padded(int64_t r, int32_t label_bytes) {
    const int64_t lanes = 64 / label_bytes;
    return (r + lanes - 1) / lanes * lanes;
}

MismatchRows mismatch_kernel(int32_t variant, int32_t label_bytes) {
#if defined(CCLUST_X86_VARIANTS)
    // AVX-512's byte and word compares need AVX512BW, which the lookup kernel's variant does not.
    if (variant == kSimdAvx512 && __builtin_cpu_supports("avx512bw")) {
        if (label_bytes == 1) return mismatch_rows_avx512<uint8_t>;
        if (label_bytes == 2) return mismatch_rows_avx512<uint16_t>;
        return mismatch_rows_avx512<int32_t>;
    }
    if (variant == kSimdAvx512 || variant == kSimdAvx2) {
        if (label_bytes == 1) return mismatch_rows_avx2<uint8_t>;
        if (label_bytes == 2) return mismatch_rows_avx2<uint16_t>;
        return mismatch_rows_avx2<int32_t>;
    }
#endif
    (void)variant;
    (void)label_bytes;
    return nullptr;
}

#if defined(CCLUST_VECTOR_KERNEL)
// ---- Dense costs of k-means++ candidates in instruction-set variants ---------------------------
//
// A tile of B rows by NV vectors of W candidates holds its B x NV sums of squares in registers
// across the features: each lane computes (x_j - c_j), squares it and adds it to its sum from 0,
// feature by feature, as squared_distance does, so every variant gives its bits; each load of
// the candidates serves B rows, and the B x NV chains of adds hide the add latency.
template <int W, int NV, int B>
CCLUST_INLINE void dense_cost_tile(const double* __restrict xr, int64_t d, const double* __restrict ct,
                                   int64_t kt, int64_t t0, double* __restrict out) {
    typedef typename SimdVec<W>::T Vec;
    Vec acc[B][NV];
    for (int b = 0; b < B; ++b) {
        for (int q = 0; q < NV; ++q) acc[b][q] = Vec{};
    }
    for (int64_t j = 0; j < d; ++j) {
        const Vec* col = reinterpret_cast<const Vec*>(ct + j * kt + t0);
        Vec c[NV];
        for (int q = 0; q < NV; ++q) c[q] = col[q];
        for (int b = 0; b < B; ++b) {
            const double xj = xr[b * d + j];
            for (int q = 0; q < NV; ++q) {
                const Vec e = xj - c[q];
                acc[b][q] += e * e;
            }
        }
    }
    for (int b = 0; b < B; ++b) {
        Vec* o = reinterpret_cast<Vec*>(out + b * kt + t0);
        for (int q = 0; q < NV; ++q) o[q] = acc[b][q];
    }
}

// The tiles of NV candidate vectors from t0 for `count` rows: B rows at a time, the rows left in
// tiles of B / 2 rows, and so on.
template <int W, int NV, int B>
CCLUST_INLINE void dense_cost_column(const double* xr, int64_t count, int64_t d, const double* ct, int64_t kt,
                                     int64_t t0, double* out) {
    int64_t i = 0;
    for (; i + B <= count; i += B) dense_cost_tile<W, NV, B>(xr + i * d, d, ct, kt, t0, out + i * kt);
    if constexpr (B > 1) {
        if (i < count) dense_cost_column<W, NV, B / 2>(xr + i * d, count - i, d, ct, kt, t0, out + i * kt);
    }
}

// The candidate vectors in as few tiles of at most NV_MAX vectors as hold them, of nearly equal
// widths, each over as many rows as keep its ACC sums in registers (block_for).
template <int W, int NV_MAX, int ACC>
CCLUST_INLINE void dense_costs(const double* xr, int64_t count, int64_t d, const double* ct, int64_t kt,
                               double* out) {
    int64_t left = kt / W, tiles = (left + NV_MAX - 1) / NV_MAX;
    for (int64_t t0 = 0; left > 0; --tiles) {
        const int64_t nv = (left + tiles - 1) / tiles;
        switch (nv) {
            case 1: dense_cost_column<W, 1, block_for(ACC, 1)>(xr, count, d, ct, kt, t0, out); break;
            case 2: dense_cost_column<W, 2, block_for(ACC, 2)>(xr, count, d, ct, kt, t0, out); break;
            case 3: dense_cost_column<W, 3, block_for(ACC, 3)>(xr, count, d, ct, kt, t0, out); break;
            default: dense_cost_column<W, 4, block_for(ACC, 4)>(xr, count, d, ct, kt, t0, out); break;
        }
        t0 += nv * W;
        left -= nv;
    }
}

// Baseline: 2-double vectors, 16 registers (sums, candidate vectors and two temporaries each).
void dense_costs_baseline(const double* X, int64_t count, int64_t d, const double* ct, int64_t kt, double* out) {
    dense_costs<2, 4, 8>(X, count, d, ct, kt, out);
}

#if defined(CCLUST_X86_VARIANTS)
__attribute__((target("avx2"))) void dense_costs_avx2(const double* X, int64_t count, int64_t d,
                                                      const double* ct, int64_t kt, double* out) {
    dense_costs<4, 3, 9>(X, count, d, ct, kt, out);
}

__attribute__((target("avx512f"))) void dense_costs_avx512(const double* X, int64_t count, int64_t d,
                                                           const double* ct, int64_t kt, double* out) {
    dense_costs<8, 4, 24>(X, count, d, ct, kt, out);
}
#endif
#endif  // CCLUST_VECTOR_KERNEL

DenseCosts dense_costs_kernel(int32_t variant) {
#if defined(CCLUST_VECTOR_KERNEL)
#if defined(CCLUST_X86_VARIANTS)
    if (variant == kSimdAvx512) return dense_costs_avx512;
    if (variant == kSimdAvx2) return dense_costs_avx2;
#endif
    (void)variant;
    return dense_costs_baseline;
#else
    (void)variant;
    return nullptr;
#endif
}

// The variant's kernel for label codes of `label_bytes`, or null where only object_costs runs
// (no vector extension).
LookupRows lookup_kernel(int32_t variant, int32_t label_bytes) {
#if defined(CCLUST_VECTOR_KERNEL)
    if (label_bytes == 1) return typed_lookup_kernel<uint8_t>(variant);
    if (label_bytes == 2) return typed_lookup_kernel<uint16_t>(variant);
    return typed_lookup_kernel<int32_t>(variant);
#else
    (void)variant;
    (void)label_bytes;
    return nullptr;
#endif
}

}  // namespace kmeans_detail

using namespace kmeans_detail;

bool kmeans_simd_supported(int32_t variant) {
    return cpu_supports(variant) && (variant == kSimdBaseline || lookup_kernel(variant, 4) != nullptr);
}

int32_t kmeans_simd_variant() { return current_variant(); }

void kmeans_force_simd(int32_t variant) {
    if (variant != -1 && !kmeans_simd_supported(variant)) {
        fail("SIMD variant " + str(int64_t{variant}) + " is not supported by this build and CPU");
    }
    forced_variant.store(variant, std::memory_order_relaxed);
}

}  // namespace cclust
