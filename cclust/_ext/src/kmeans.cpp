#include "cclust/kmeans.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cclust/lookup.hpp"
#include "cclust/parallel.hpp"

namespace cclust {

namespace {

// -log2 of a zero share is infinite; the constant keeps a label the centre has never seen finite
// (about 52 bits), as the KCC reference implementations do.
constexpr double kUhSmoothing = 2.2e-16;

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

std::string str(int64_t v) { return std::to_string(v); }
std::string str(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

struct Shape {
    int64_t n, d, r, width;  // width = offsets[r], the one-hot columns
};

Shape validate_rows(const MixedRows& rows) {
    if (rows.n < 0) fail("n must be >= 0, got " + str(rows.n));
    if (rows.d < 0) fail("d must be >= 0, got " + str(rows.d));
    if (rows.r < 0) fail("r must be >= 0, got " + str(rows.r));
    if (rows.d == 0 && rows.r == 0) {
        fail("rows need a dense block (d > 0) or a categorical block (r > 0); both are empty");
    }
    if (rows.d > 0) {
        if (rows.n > 0 && rows.X == nullptr) fail("X is null but d = " + str(rows.d));
        if (!(std::isfinite(rows.dense_weight) && rows.dense_weight >= 0.0)) {
            fail("dense_weight must be finite and >= 0, got " + str(rows.dense_weight));
        }
    }
    int64_t width = 0;
    if (rows.r > 0) {
        if (rows.offsets == nullptr) fail("offsets is null but r = " + str(rows.r));
        if (rows.weights == nullptr) fail("weights is null but r = " + str(rows.r));
        if (rows.n > 0 && rows.labels == nullptr) fail("labels is null but r = " + str(rows.r));
        if (rows.offsets[0] != 0) fail("offsets[0] must be 0, got " + str(rows.offsets[0]));
        for (int64_t i = 0; i < rows.r; ++i) {
            const int64_t k_i = rows.offsets[i + 1] - rows.offsets[i];
            // Labels are int32, so a wider block could never be addressed.
            if (k_i < 0 || k_i > std::numeric_limits<int32_t>::max()) {
                fail("offsets must be non-decreasing with steps below 2^31; offsets[" +
                     str(i + 1) + "] - offsets[" + str(i) + "] = " + str(k_i));
            }
            const double w = rows.weights[i];
            if (!(std::isfinite(w) && w >= 0.0)) {
                fail("weights must be finite and >= 0; weights[" + str(i) + "] = " + str(w));
            }
        }
        width = rows.offsets[rows.r];
    }
    if (rows.distance < kUc || rows.distance > kUlp) {
        fail("distance must be 0 (uc), 1 (uh), 2 (ucos) or 3 (ulp), got " +
             str(static_cast<int64_t>(rows.distance)));
    }
    if (rows.distance == kUlp && !(std::isfinite(rows.p) && rows.p > 1.0)) {
        fail("p must be finite and > 1 for ulp, got " + str(rows.p));
    }
    auto check_positive = [&](const double* v, const char* what) {
        for (int64_t x = 0; x < rows.n; ++x) {
            if (!(std::isfinite(v[x]) && v[x] > 0.0)) {
                fail(std::string(what) + " must be finite and > 0; " + what + "[" + str(x) +
                     "] = " + str(v[x]));
            }
        }
    };
    if (rows.object_weights != nullptr) check_positive(rows.object_weights, "object_weights");
    if (rows.row_scale != nullptr) {
        if (rows.distance != kUc || rows.d != 0) {
            fail("row_scale needs the squared Euclidean distance (uc) and no dense block");
        }
        check_positive(rows.row_scale, "row_scale");
    }
    return Shape{rows.n, rows.d, rows.r, width};
}

bool weighted(const MixedRows& rows) {
    return rows.object_weights != nullptr || rows.row_scale != nullptr;
}

void require_unweighted(const MixedRows& rows, const char* what) {
    if (weighted(rows)) fail(std::string(what) + " takes unweighted rows only (no object_weights or row_scale)");
}

void check_n_clusters(int32_t n_clusters, int64_t n, bool at_most_n) {
    if (n_clusters < 1) fail("n_clusters must be >= 1, got " + str(int64_t{n_clusters}));
    if (at_most_n && n_clusters > n) {
        fail("n_clusters must be <= n (" + str(n) + "), got " + str(int64_t{n_clusters}));
    }
}

// Serial: n int32 reads cost nothing next to a pass, and the first bad row is reported exactly.
void check_assignment(const int32_t* assignment, int64_t n, int32_t n_clusters,
                      bool allow_unassigned) {
    if (n > 0 && assignment == nullptr) fail("assignment is null");
    const int32_t low = allow_unassigned ? -1 : 0;
    for (int64_t x = 0; x < n; ++x) {
        const int32_t k = assignment[x];
        if (k < low || k >= n_clusters) {
            fail("assignment " + str(int64_t{k}) + " at row " + str(x) + " is outside " +
                 str(int64_t{low}) + ".." + str(int64_t{n_clusters} - 1));
        }
    }
}

void check_centers(const Shape& sh, int64_t n_clusters, const double* dense, const double* cat) {
    if (sh.d > 0) {
        if (dense == nullptr) fail("dense_centers is null but d = " + str(sh.d));
        for (int64_t e = 0; e < n_clusters * sh.d; ++e) {
            if (!std::isfinite(dense[e])) fail("dense_centers must be finite");
        }
    }
    if (sh.width > 0) {
        if (cat == nullptr) fail("cat_centers is null but offsets[r] = " + str(sh.width));
        for (int64_t e = 0; e < n_clusters * sh.width; ++e) {
            // Shares are read as probabilities: log2 and norms need them finite and >= 0.
            if (!(std::isfinite(cat[e]) && cat[e] >= 0.0)) {
                fail("cat_centers must be finite and >= 0, got " + str(cat[e]) + " at flat index " +
                     str(e));
            }
        }
    }
}

[[noreturn]] void bad_partition_label(const MixedRows& rows, int64_t x) {
    for (int64_t i = 0; i < rows.r; ++i) {
        const int64_t l = rows.labels[x * rows.r + i];
        const int64_t k_i = rows.offsets[i + 1] - rows.offsets[i];
        if (l < -1 || l >= k_i) {
            fail("label " + str(l) + " of partition " + str(i) + " at row " + str(x) +
                 " is outside 0.." + str(k_i - 1) + " (or -1 for missing)");
        }
    }
    fail("bad label at row " + str(x));
}

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

typedef void (*LookupRows)(const int32_t* labels, int64_t r, int64_t count,
                           const int64_t* slot_of, const double* table, int64_t stride,
                           int64_t group, double* out);

// Objects per call of a lookup kernel (their costs stay in L1; more when the partitions go in
// groups, so each group's rows of the table serve more objects), and the table's alignment slack.
constexpr int64_t kBlockRows = 32;
constexpr int64_t kGroupedBlockRows = 256;
constexpr int64_t kTableAlign = 64 / sizeof(Lanes);
// Cache blocking: a table larger than four times this (a 1 MiB L2) is walked in groups of
// partitions whose rows take about this much, each group for all objects of a call before the
// next. Measured on an AMD EPYC (1 MiB L2 per core; benchmarks/bench_kcc_pass.py): K = 26 and
// r = 1,000 (a 2.7 MB table) 6-7% faster; r = 100 (0.27 MB) 9% slower when split, so not split.
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

inline Lanes* aligned_lanes(Lanes* p) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    return reinterpret_cast<Lanes*>((a + 63) / 64 * 64);
}

#if defined(CCLUST_VECTOR_KERNEL)
#define CCLUST_INLINE inline __attribute__((always_inline))

template <int W>
struct SimdVec {
    typedef double T __attribute__((vector_size(W * sizeof(double)), aligned(sizeof(double))));
};

// Partitions i0..i1-1 of B objects, continuing the sums in `out` unless i0 == 0 (a partial sum
// stored and loaded again is the same double, so groups change no bit).
template <int W, int NV, int B>
CCLUST_INLINE void lookup_block(const int32_t* __restrict labels, int64_t r, int64_t i0,
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
            const Vec* t = reinterpret_cast<const Vec*>(table + (s + labels[b * r + i]) * stride);
            for (int q = 0; q < NV; ++q) acc[b][q] += t[q];
        }
    }
    for (int b = 0; b < B; ++b) std::memcpy(out + b * stride, acc[b], sizeof acc[b]);
}

template <int W, int NV, int B>
CCLUST_INLINE void lookup_rows_fixed(const int32_t* labels, int64_t r, int64_t count,
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
CCLUST_INLINE void lookup_rows_any(const int32_t* __restrict labels, int64_t r, int64_t count,
                                   const int64_t* __restrict slot_of,
                                   const double* __restrict table, int64_t stride, int64_t group,
                                   double* __restrict out) {
    for (int64_t k = 0; k < count * stride; ++k) out[k] = 0.0;
    for (int64_t i0 = 0; i0 < r; i0 += group) {
        const int64_t i1 = std::min(r, i0 + group);
        for (int64_t j = 0; j < count; ++j) {
            double* o = out + j * stride;
            const int32_t* lab = labels + j * r;
            for (int64_t i = i0; i < i1; ++i) {
                const double* t = table + (slot_of[i] + lab[i]) * stride;
                for (int64_t k = 0; k < stride; ++k) o[k] += t[k];
            }
        }
    }
}

// Objects per block: as many accumulator vectors as leave room in `regs` registers, at most 8.
constexpr int block_for(int regs, int nv) {
    return regs / nv < 1 ? 1 : (regs / nv > 8 ? 8 : regs / nv);
}

template <int W, int REGS>
CCLUST_INLINE void lookup_rows(const int32_t* labels, int64_t r, int64_t count,
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
void lookup_rows_baseline(const int32_t* labels, int64_t r, int64_t count,
                          const int64_t* slot_of, const double* table, int64_t stride,
                          int64_t group, double* out) {
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
__attribute__((target("avx2"))) void lookup_rows_avx2(const int32_t* labels, int64_t r,
                                                      int64_t count, const int64_t* slot_of,
                                                      const double* table, int64_t stride,
                                                      int64_t group, double* out) {
    lookup_rows<4, 12>(labels, r, count, slot_of, table, stride, group, out);
}

// AVX-512: 8-double vectors (4-double ones where 8 would only add padding, see row_width), 32
// registers.
__attribute__((target("avx512f,avx512vl"))) void lookup_rows_avx512(
    const int32_t* labels, int64_t r, int64_t count, const int64_t* slot_of, const double* table,
    int64_t stride, int64_t group, double* out) {
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

// The variant's kernel, or null where only object_costs runs (no vector extension).
LookupRows lookup_kernel(int32_t variant) {
#if defined(CCLUST_VECTOR_KERNEL)
#if defined(CCLUST_X86_VARIANTS)
    if (variant == kSimdAvx512) return lookup_rows_avx512;
    if (variant == kSimdAvx2) return lookup_rows_avx2;
#endif
    (void)variant;
    return lookup_rows_baseline;
#else
    (void)variant;
    return nullptr;
#endif
}

// Costs of object x against kc centres into acc[0..kLane kq): the dense part against `dense`
// (kc x d), then, partition by partition in order, the table row of each label. The table has
// kq Lanes per label slot (entry k = weighted cost of that label under centre k). Labels must
// have been validated. Entries kc.. come out 0.
template <int KQ>
inline void object_costs(const MixedRows& rows, int64_t x, int64_t kc, int64_t kq_runtime,
                         const int64_t* __restrict slot_of, const double* __restrict dense,
                         const Lanes* __restrict table, double* __restrict acc,
                         Lanes* lane_scratch) {
    const int64_t kq = KQ > 0 ? KQ : kq_runtime;
    const int64_t kp = kLane * kq;
    const int64_t d = rows.d;
    if (d > 0) {
        const double* xr = rows.X + x * d;
        for (int64_t k = 0; k < kc; ++k) {
            const double* c = dense + k * d;
            double s = 0.0;
            for (int64_t j = 0; j < d; ++j) {
                const double t = xr[j] - c[j];
                s += t * t;
            }
            acc[k] = rows.dense_weight * s;
        }
        for (int64_t k = kc; k < kp; ++k) acc[k] = 0.0;
    } else {
        for (int64_t k = 0; k < kp; ++k) acc[k] = 0.0;
    }
    const int64_t r = rows.r;
    if (r == 0) return;
    const auto bytes = static_cast<size_t>(kq) * sizeof(Lanes);
    LaneBuffer<KQ> buffer;
    Lanes* sum = buffer.get(lane_scratch);
    std::memcpy(sum, acc, bytes);
    add_label_rows<KQ>(rows.labels + x * r, r, slot_of, table, kq, sum);
    std::memcpy(acc, sum, bytes);
}

// ---- Identical label rows --------------------------------------------------------------------
//
// Objects whose label rows are identical have identical costs to every centre, so a pass with no
// dense block can compute each distinct row's costs once and hand them to all its objects: the
// same numbers, bit for bit, in the same object order. Grouping costs a hash of every row and a
// probe per object (about one table-less pass), so it is tried only on a sample first and kept
// only when it removes at least half the lookups.

std::atomic<bool> grouping_on{true};     // kmeans_group_rows

constexpr int64_t kDedupMinRows = 1024;    // below this a pass costs less than grouping
constexpr int64_t kDedupSample = 8192;     // first rows whose distinct share decides the attempt
constexpr int64_t kDedupMaxShare = 2;      // keep the groups when distinct rows <= n / this

// A 64-bit hash of a row of labels (four independent lanes of 64-bit words); grouping always
// compares the rows themselves, so collisions cost time, never correctness.
inline uint64_t row_hash(const int32_t* lab, int64_t r) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
    uint64_t h[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                     0x082EFA98EC4E6C89ull ^ static_cast<uint64_t>(r)};
    int64_t i = 0;
    for (; i + 8 <= r; i += 8) {
        for (int q = 0; q < 4; ++q) {
            uint64_t w;
            std::memcpy(&w, lab + i + 2 * q, sizeof w);
            h[q] = (h[q] ^ w) * kMul;
            h[q] ^= h[q] >> 29;
        }
    }
    for (; i < r; ++i) h[0] = ((h[0] ^ static_cast<uint32_t>(lab[i])) * kMul) ^ (h[0] >> 31);
    uint64_t out = h[0];
    for (int q = 1; q < 4; ++q) out = ((out ^ h[q]) * kMul) ^ (out >> 27);
    return out;
}

// Groups the first `count` rows: group[x] = the rank (by first appearance) of x's row among the
// distinct rows, first[g] = the first object of group g. Returns the number of distinct rows, or
// -1 as soon as there would be more than `limit`.
int64_t group_rows(const int32_t* labels, int64_t r, const uint64_t* hash, int64_t count,
                   int64_t limit, int64_t* group, std::vector<int64_t>& first) {
    size_t cap = 16;
    while (cap < 2 * static_cast<size_t>(count)) cap <<= 1;
    std::vector<int64_t> slot(cap, -1);
    first.clear();
    const auto bytes = static_cast<size_t>(r) * sizeof(int32_t);
    for (int64_t x = 0; x < count; ++x) {
        size_t p = static_cast<size_t>(hash[x]) & (cap - 1);
        for (;;) {
            const int64_t g = slot[p];
            if (g < 0) {
                const auto m = static_cast<int64_t>(first.size());
                if (m >= limit) return -1;
                slot[p] = m;
                group[x] = m;
                first.push_back(x);
                break;
            }
            const int64_t y = first[static_cast<size_t>(g)];
            if (hash[y] == hash[x] && std::memcmp(labels + y * r, labels + x * r, bytes) == 0) {
                group[x] = g;
                break;
            }
            p = (p + 1) & (cap - 1);
        }
    }
    return static_cast<int64_t>(first.size());
}

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

int team_size(int n_threads, int64_t chunks) {
    int64_t t = n_threads < 1 ? 1 : n_threads;
    t = std::min<int64_t>(t, std::max<int64_t>(chunks, 1));
    return static_cast<int>(t);
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
    Engine(const MixedRows& rows, const Shape& sh, int64_t kc, int n_threads)
        : rows_(rows), sh_(sh), slots_(rows.offsets, sh.r),
          lookup_(sh.d == 0 && sh.r > 0 ? lookup_kernel(current_variant()) : nullptr), kc_(kc),
          kq_(lookup_ != nullptr ? lanes_for(row_width(current_variant(), kc)) : lanes_for(kc)),
          kp_(kLane * kq_), chunks_(n_chunks(sh.n)), nt_(team_size(n_threads, chunks_)),
          table_(static_cast<size_t>(slots_.count * kq_ + kTableAlign)),
          table_base_(aligned_lanes(table_.data())),
          chunk_value_(static_cast<size_t>(chunks_ * kc), 0.0),
          chunk_count_(static_cast<size_t>(chunks_), 0),
          group_of_(partition_group(slots_, sh.r, kp_)),
          call_rows_(group_of_ < sh.r ? kGroupedBlockRows : kBlockRows),
          scratch_(static_cast<size_t>(nt_ * (lookup_ != nullptr ? call_rows_ : 1) * kp_), 0.0),
          lane_scratch_(static_cast<size_t>(nt_ * kq_)), weighted_(weighted(rows)),
          scaled_(rows.row_scale != nullptr) {}

    const Slots& slots() const { return slots_; }

    // Groups objects with identical label rows (see row_hash) when that pays: afterwards every
    // pass computes the costs of the distinct rows only. Labels must have been validated. For
    // engines that run several passes over the same rows (lloyd, kmeanspp).
    void group_identical_rows() {
        const int64_t n = sh_.n, r = sh_.r;
        if (lookup_ == nullptr || n < kDedupMinRows || !grouping_on.load(std::memory_order_relaxed)) return;
        const int32_t* labels = rows_.labels;
        std::vector<uint64_t> hash(static_cast<size_t>(n));
        std::vector<int64_t> group(static_cast<size_t>(n)), first;
        const int64_t sample = std::min(n, kDedupSample);
        for (int64_t x = 0; x < sample; ++x) hash[static_cast<size_t>(x)] = row_hash(labels + x * r, r);
        if (group_rows(labels, r, hash.data(), sample, sample / kDedupMaxShare, group.data(), first) < 0) {
            return;
        }
        for_each_chunk(n - sample, nt_, [&](int64_t, int64_t start, int64_t stop) {
            for (int64_t x = sample + start; x < sample + stop; ++x) {
                hash[static_cast<size_t>(x)] = row_hash(labels + x * r, r);
            }
        });
        const int64_t m = group_rows(labels, r, hash.data(), n, n / kDedupMaxShare, group.data(), first);
        if (m < 0) return;
        group_.swap(group);
        distinct_labels_.resize(static_cast<size_t>(m * r));
        for (int64_t g = 0; g < m; ++g) {
            const int64_t x = first[static_cast<size_t>(g)];
            std::memcpy(distinct_labels_.data() + g * r, labels + x * r, static_cast<size_t>(r) * sizeof(int32_t));
        }
        distinct_costs_.assign(static_cast<size_t>(m * kp_), 0.0);
    }

    // Throws on the first row (lowest index, whatever the thread count) with a bad label.
    void check_labels() {
        if (sh_.r == 0) return;
        FirstBad bad;
        for_each_chunk(sh_.n, nt_, [&](int64_t, int64_t start, int64_t stop) {
            for (int64_t x = start; x < stop; ++x) {
                if (row_has_bad_label(rows_.labels + x * sh_.r, slots_.size.data(), sh_.r)) {
                    bad.report(x);
                    return;
                }
            }
        });
        if (bad.found()) bad_partition_label(rows_, bad.index());
    }

    // Fold the categorical centres (kc x width) into the lookup table.
    void build_table(const double* cat) {
        clear_table();
        if (scaled_) {
            build_scaled_table(cat);
            return;
        }
        const int64_t* off = rows_.offsets;
        const double p = rows_.p;
        for (int64_t k = 0; k < kc_; ++k) {
            for (int64_t i = 0; i < sh_.r; ++i) {
                const double* m = cat + k * sh_.width + off[i];
                const int64_t k_i = off[i + 1] - off[i];
                const double w = rows_.weights[i];
                const Column t = column(k, i);
                switch (rows_.distance) {
                    case kUc: {
                        double n2 = 0.0;
                        for (int64_t l = 0; l < k_i; ++l) n2 += m[l] * m[l];
                        for (int64_t l = 0; l < k_i; ++l) t[l] = w * (1.0 - 2.0 * m[l] + n2);
                        break;
                    }
                    case kUh:
                        for (int64_t l = 0; l < k_i; ++l) {
                            t[l] = w * (-std::log2(m[l] + kUhSmoothing));
                        }
                        break;
                    case kUcos: {
                        double n2 = 0.0;
                        for (int64_t l = 0; l < k_i; ++l) n2 += m[l] * m[l];
                        const double norm = std::sqrt(n2);
                        // A zero block has no direction: treat it as orthogonal to every label.
                        for (int64_t l = 0; l < k_i; ++l) {
                            t[l] = w * (norm > 0.0 ? 1.0 - m[l] / norm : 1.0);
                        }
                        break;
                    }
                    default: {  // kUlp
                        double sp = 0.0;
                        for (int64_t l = 0; l < k_i; ++l) sp += std::pow(m[l], p);
                        const double norm = std::pow(sp, 1.0 / p);
                        for (int64_t l = 0; l < k_i; ++l) {
                            t[l] = w * (norm > 0.0 ? 1.0 - std::pow(m[l] / norm, p - 1.0) : 1.0);
                        }
                        break;
                    }
                }
            }
        }
    }

    // k-means++ candidates as centres, given by their labels (kc x r): entry (label l, candidate
    // t) is the weighted squared distance 2 w_i [l != label of t] between one-hot blocks, 0
    // where t is unlabelled.
    void build_candidate_table(const int32_t* candidate_labels) {
        clear_table();
        for (int64_t t = 0; t < kc_; ++t) {
            const int32_t* lab = candidate_labels + t * sh_.r;
            for (int64_t i = 0; i < sh_.r; ++i) {
                const int64_t ly = lab[i];
                if (ly < 0) continue;
                const double v = 2.0 * rows_.weights[i];
                const Column col = column(t, i);
                const auto k_i = static_cast<int64_t>(slots_.size[static_cast<size_t>(i)]);
                for (int64_t l = 0; l < k_i; ++l) {
                    if (l != ly) col[l] = v;
                }
            }
        }
    }

    // Counts, sizes and feature sums of a labelling (per thread / per chunk, see reduce), and
    // the validation of every partition label.
    void count(const int32_t* assignment) {
        ensure_tally();
        zero_thread_tally();
        const int64_t d = sh_.d, r = sh_.r, width = slots_.count;
        const int64_t* slot_of = slots_.of.data();
        FirstBad bad_row;
        for_each_chunk(sh_.n, nt_, [&](int64_t c, int64_t start, int64_t stop) {
            const int tid = thread_id();
            int64_t* counts = thread_counts_.data() + tid * (kc_ + 1) * width;
            int64_t* sizes = thread_sizes_.data() + tid * (kc_ + 1);
            double* sums = chunk_sums_.data() + c * (kc_ + 1) * d;
            std::fill(sums, sums + (kc_ + 1) * d, 0.0);
            int64_t bad = -1;
            for (int64_t x = start; x < stop; ++x) {
                const int64_t k = assignment[x] < 0 ? kc_ : assignment[x];
                sizes[k] += 1;
                if (r > 0) {
                    const int32_t* lab = rows_.labels + x * r;
                    if (row_has_bad_label(lab, slots_.size.data(), r)) {
                        if (bad < 0) bad = x;
                        continue;
                    }
                    if (!weighted_) {  // weighted rows are tallied per chunk by weigh_chunk
                        int64_t* row = counts + k * width;
                        for (int64_t i = 0; i < r; ++i) row[slot_of[i] + lab[i]] += 1;
                    }
                }
                if (d > 0 && !weighted_) add_row(x, sums + k * d);
            }
            if (bad >= 0) {
                bad_row.report(bad);
                return;
            }
            if (weighted_) weigh_chunk(c, start, stop, assignment);
        });
        if (bad_row.found()) bad_partition_label(rows_, bad_row.index());
    }

    // One Lloyd pass: the cost of every object to its current centre (summed per chunk), its
    // best centre, and the change of the tally from the current to the best labels (added by
    // reduce(tally, true)). Requires count() of the current labels before the first pass.
    // Fusing the tally here saves a separate contingency pass over the n x r label matrix.
    double lloyd_pass(const double* dense, const int32_t* labels, int32_t* best,
                      double* best_cost, int64_t* changed) {
        ensure_tally();
        zero_thread_tally();
        distinct_costs();
        dispatch_lanes(kq_, [&](auto tag) {
            lloyd_pass_impl<decltype(tag)::value>(dense, labels, best, best_cost);
        });
        *changed = 0;
        for (const int64_t v : chunk_count_) *changed += v;
        return chunk_sum(0);
    }

    // Costs against given centres: to `given[x]` when given, else to the cheapest centre (written
    // to best[x]). Returns the sum of the costs, in chunk order.
    double cost_pass(const double* dense, const int32_t* given, int32_t* best, double* costs) {
        distinct_costs();
        dispatch_lanes(kq_, [&](auto tag) {
            cost_pass_impl<decltype(tag)::value>(dense, given, best, costs);
        });
        return chunk_sum(0);
    }

    // k-means++: dist[t][x] = min(closest[x], D^2(x, candidate t)) (closest null = +inf) and
    // potentials[t] = sum over x of dist[t][x] in chunk order.
    void candidate_pass(const double* dense, const double* closest, double* dist,
                        double* potentials) {
        distinct_costs();
        dispatch_lanes(kq_, [&](auto tag) {
            candidate_pass_impl<decltype(tag)::value>(dense, closest, dist);
        });
        for (int64_t t = 0; t < kc_; ++t) potentials[t] = chunk_sum(t);
    }

    // The partial of centre (or candidate) t in chunk c of the last pass.
    double chunk_value(int64_t c, int64_t t) const {
        return chunk_value_[static_cast<size_t>(c * kc_ + t)];
    }

    // Every chunk's partials of the first `lanes` centres of the last pass, chunk-major
    // (out: chunks x lanes).
    void copy_chunk_values(int64_t lanes, double* out) const {
        for (int64_t c = 0; c < chunks_; ++c) {
            for (int64_t t = 0; t < lanes; ++t) out[c * lanes + t] = chunk_value(c, t);
        }
    }

    int64_t chunks() const { return chunks_; }

    // Per-thread counts (of count()) or their changes (of lloyd_pass(), with `update`) into out.
    // Integer counts are exact in any order; feature sums are added chunk by chunk in order.
    void reduce(Tally& out, bool update) const {
        const int64_t width = slots_.count, d = sh_.d, rows_k = kc_ + 1;
        if (!update) {
            out.counts.assign(static_cast<size_t>(rows_k * width), 0);
            out.sizes.assign(static_cast<size_t>(rows_k), 0);
        }
        out.sums.assign(static_cast<size_t>(rows_k * d), 0.0);
        for (int t = 0; t < nt_; ++t) {
            const int64_t* counts = thread_counts_.data() + t * rows_k * width;
            for (int64_t e = 0; e < rows_k * width; ++e) {
                out.counts[static_cast<size_t>(e)] += counts[e];
            }
            const int64_t* sizes = thread_sizes_.data() + t * rows_k;
            for (int64_t k = 0; k < rows_k; ++k) out.sizes[static_cast<size_t>(k)] += sizes[k];
        }
        for (int64_t c = 0; c < chunks_; ++c) {
            const double* sums = chunk_sums_.data() + c * rows_k * d;
            for (int64_t e = 0; e < rows_k * d; ++e) out.sums[static_cast<size_t>(e)] += sums[e];
        }
        if (!weighted_) return;
        out.wcounts.assign(static_cast<size_t>(rows_k * width), 0.0);
        out.mass.assign(static_cast<size_t>(rows_k), 0.0);
        for (int64_t c = 0; c < chunks_; ++c) {
            const double* counts = chunk_wcounts_.data() + c * rows_k * width;
            for (int64_t e = 0; e < rows_k * width; ++e) out.wcounts[static_cast<size_t>(e)] += counts[e];
            const double* mass = chunk_mass_.data() + c * rows_k;
            for (int64_t k = 0; k < rows_k; ++k) out.mass[static_cast<size_t>(k)] += mass[k];
        }
    }

private:
    // Entries (centre k, labels 0..K_i-1 of partition i) of the table, indexed by label.
    struct Column {
        Lanes* base;
        int64_t stride;
        int64_t lane;
        double& operator[](int64_t l) const { return base[l * stride].v[lane]; }
    };

    Column column(int64_t k, int64_t i) {
        return Column{table_base_ + slots_.of[static_cast<size_t>(i)] * kq_ + k / kLane, kq_,
                      k % kLane};
    }

    // The lookup sums of every distinct row (grouped engines only), before a pass reads them.
    void distinct_costs() {
        if (group_.empty()) return;
        const int64_t r = sh_.r, kp = kp_;
        const auto m = static_cast<int64_t>(distinct_costs_.size()) / kp;
        const int64_t rows = kGroupedBlockRows;
        const int64_t blocks = (m + rows - 1) / rows;
        const int64_t* slot_of = slots_.of.data();
        const double* table = reinterpret_cast<const double*>(table_base_);
        const int32_t* labels = distinct_labels_.data();
        double* out = distinct_costs_.data();
        const LookupRows lookup = lookup_;
        (void)nt_;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(team_size(nt_, blocks))
#endif
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t g0 = b * rows, g1 = std::min(m, g0 + rows);
            lookup(labels + g0 * r, r, g1 - g0, slot_of, table, kp, group_of_, out + g0 * kp);
        }
    }

    void clear_table() {
        for (Lanes& row : table_) std::memset(&row, 0, sizeof(Lanes));
    }

    void ensure_tally() {
        if (!thread_sizes_.empty()) return;
        const int64_t rows_k = kc_ + 1;
        thread_counts_.assign(static_cast<size_t>(nt_ * rows_k * slots_.count), 0);
        thread_sizes_.assign(static_cast<size_t>(nt_ * rows_k), 0);
        chunk_sums_.assign(static_cast<size_t>(chunks_ * rows_k * sh_.d), 0.0);
        if (weighted_) {
            chunk_wcounts_.assign(static_cast<size_t>(chunks_ * rows_k * slots_.count), 0.0);
            chunk_mass_.assign(static_cast<size_t>(chunks_ * rows_k), 0.0);
        }
    }

    double object_weight(int64_t x) const {
        return rows_.object_weights != nullptr ? rows_.object_weights[x] : 1.0;
    }

    // Chunk c's weighted tally (label counts by w_x s_x, masses, dense sums by w_x) of the
    // labels in `assignment` (-1: the row of objects in no cluster), recomputed from scratch.
    // Labels are valid here (count() checks the chunk first; a Lloyd pass follows a count()).
    void weigh_chunk(int64_t c, int64_t start, int64_t stop, const int32_t* assignment) {
        const int64_t d = sh_.d, r = sh_.r, width = slots_.count, rows_k = kc_ + 1;
        const int64_t* slot_of = slots_.of.data();
        double* counts = chunk_wcounts_.data() + c * rows_k * width;
        double* mass = chunk_mass_.data() + c * rows_k;
        double* sums = chunk_sums_.data() + c * rows_k * d;
        std::fill(counts, counts + rows_k * width, 0.0);
        std::fill(mass, mass + rows_k, 0.0);
        std::fill(sums, sums + rows_k * d, 0.0);
        for (int64_t x = start; x < stop; ++x) {
            const int64_t k = assignment[x] < 0 ? kc_ : assignment[x];
            const double w = object_weight(x);
            mass[k] += w;
            if (r > 0) {
                const double ws = rows_.row_scale != nullptr ? w * rows_.row_scale[x] : w;
                const int32_t* lab = rows_.labels + x * r;
                double* row = counts + k * width;
                for (int64_t i = 0; i < r; ++i) row[slot_of[i] + lab[i]] += ws;
            }
            if (d > 0) {
                const double* xr = rows_.X + x * d;
                double* to = sums + k * d;
                for (int64_t j = 0; j < d; ++j) to[j] += w * xr[j];
            }
        }
    }

    // Squared Euclidean table of scaled rows: entry -2 w_i m[l]; the centre's constant
    // sum_i w_i ||m_i||^2 and the object's s_x^2 sum_i w_i [labelled] are added per object.
    void build_scaled_table(const double* cat) {
        const int64_t* off = rows_.offsets;
        centre_norm_.assign(static_cast<size_t>(kc_), 0.0);
        for (int64_t k = 0; k < kc_; ++k) {
            double norm = 0.0;
            for (int64_t i = 0; i < sh_.r; ++i) {
                const double* m = cat + k * sh_.width + off[i];
                const int64_t k_i = off[i + 1] - off[i];
                const double w = rows_.weights[i];
                const Column t = column(k, i);
                double n2 = 0.0;
                for (int64_t l = 0; l < k_i; ++l) {
                    n2 += m[l] * m[l];
                    t[l] = -2.0 * w * m[l];
                }
                norm += w * n2;
            }
            centre_norm_[static_cast<size_t>(k)] = norm;
        }
        if (!row_norm_.empty()) return;
        row_norm_.resize(static_cast<size_t>(sh_.n));
        for (int64_t x = 0; x < sh_.n; ++x) {
            const int32_t* lab = rows_.labels + x * sh_.r;
            double labelled = 0.0;
            for (int64_t i = 0; i < sh_.r; ++i) {
                if (lab[i] >= 0) labelled += rows_.weights[i];
            }
            const double s = rows_.row_scale[x];
            row_norm_[static_cast<size_t>(x)] = s * s * labelled;
        }
    }

    // Scaled rows: the table gave sum_i -2 w_i m[L[x,i]] per centre; complete the costs.
    void finish_costs(int64_t x, double* acc) const {
        if (!scaled_) return;
        const double s = rows_.row_scale[x], q = row_norm_[static_cast<size_t>(x)];
        for (int64_t k = 0; k < kc_; ++k) acc[k] = s * acc[k] + centre_norm_[static_cast<size_t>(k)] + q;
    }

    void zero_thread_tally() {
        std::fill(thread_counts_.begin(), thread_counts_.end(), 0);
        std::fill(thread_sizes_.begin(), thread_sizes_.end(), 0);
    }

    void add_row(int64_t x, double* sums) const {
        const double* xr = rows_.X + x * sh_.d;
        for (int64_t j = 0; j < sh_.d; ++j) sums[j] += xr[j];
    }

    double chunk_sum(int64_t lane) const {
        double total = 0.0;
        for (int64_t c = 0; c < chunks_; ++c) {
            total += chunk_value_[static_cast<size_t>(c * kc_ + lane)];
        }
        return total;
    }

    // Calls each(x, acc) for x = start..stop-1 in order, acc holding the object's costs to the
    // kc centres (finished for scaled rows): object by object through object_costs, or, with no
    // dense block, kBlockRows objects at a time through the variant's lookup kernel (the same
    // sums, bit for bit).
    template <int KQ, class Each>
    void each_cost(int64_t start, int64_t stop, int tid, const double* dense, Each&& each) {
        const int64_t kq = kq_, kp = kp_, r = sh_.r;
        const int64_t* slot_of = slots_.of.data();
        const Lanes* table = table_base_;
        if (!group_.empty()) {  // the costs of each object's distinct row (distinct_costs)
            double* acc = scratch_.data() + tid * call_rows_ * kp;
            const auto bytes = static_cast<size_t>(kp) * sizeof(double);
            for (int64_t x = start; x < stop; ++x) {
                const double* row = distinct_costs_.data() + group_[static_cast<size_t>(x)] * kp;
                if (scaled_) {
                    std::memcpy(acc, row, bytes);
                    finish_costs(x, acc);
                    each(x, static_cast<const double*>(acc));
                } else {
                    each(x, row);
                }
            }
            return;
        }
        if (lookup_ != nullptr) {
            double* block = scratch_.data() + tid * call_rows_ * kp;
            const double* flat = reinterpret_cast<const double*>(table);
            for (int64_t x0 = start; x0 < stop; x0 += call_rows_) {
                const int64_t count = std::min(call_rows_, stop - x0);
                lookup_(rows_.labels + x0 * r, r, count, slot_of, flat, kp, group_of_, block);
                for (int64_t j = 0; j < count; ++j) {
                    double* acc = block + j * kp;
                    finish_costs(x0 + j, acc);
                    each(x0 + j, acc);
                }
            }
            return;
        }
        double* acc = scratch_.data() + tid * kp;
        Lanes* lanes = lane_scratch_.data() + tid * kq;
        for (int64_t x = start; x < stop; ++x) {
            object_costs<KQ>(rows_, x, kc_, kq, slot_of, dense, table, acc, lanes);
            finish_costs(x, acc);
            each(x, acc);
        }
    }

    template <int KQ>
    void lloyd_pass_impl(const double* dense, const int32_t* labels, int32_t* best,
                         double* best_cost) {
        const int64_t d = sh_.d, r = sh_.r, width = slots_.count, kc = kc_;
        const int64_t* slot_of = slots_.of.data();
        for_each_chunk(sh_.n, nt_, [&](int64_t c, int64_t start, int64_t stop) {
            const int tid = thread_id();
            int64_t* counts = thread_counts_.data() + tid * (kc + 1) * width;
            int64_t* sizes = thread_sizes_.data() + tid * (kc + 1);
            double objective = 0.0;
            int64_t moved = 0;
            each_cost<KQ>(start, stop, tid, dense, [&](int64_t x, const double* acc) {
                const int64_t cur = labels[x];
                int64_t b = argmin(acc, kc);
                if (acc[cur] == acc[b]) b = cur;  // ties keep the current cluster: no churn
                objective += weighted_ ? object_weight(x) * acc[cur] : acc[cur];
                best[x] = static_cast<int32_t>(b);
                best_cost[x] = acc[b];
                if (b == cur) return;
                // Only a move changes the counts; late passes move few objects, so this costs
                // far less than recounting the n x r matrix.
                moved += 1;
                sizes[cur] -= 1;
                sizes[b] += 1;
                if (weighted_) return;  // weigh_chunk recounts the chunk below
                const int32_t* lab = rows_.labels + x * r;
                int64_t* from = counts + cur * width;
                int64_t* to = counts + b * width;
                for (int64_t i = 0; i < r; ++i) {
                    from[slot_of[i] + lab[i]] -= 1;
                    to[slot_of[i] + lab[i]] += 1;
                }
            });
            // Feature sums are floating, so they are not updated by differences: a chunk with a
            // move is summed again from scratch, which gives exactly what a full recount would.
            if (moved > 0 && weighted_) {
                weigh_chunk(c, start, stop, best);
            } else if (moved > 0 && d > 0) {
                double* sums = chunk_sums_.data() + c * (kc + 1) * d;
                std::fill(sums, sums + (kc + 1) * d, 0.0);
                for (int64_t x = start; x < stop; ++x) add_row(x, sums + best[x] * d);
            }
            chunk_value_[static_cast<size_t>(c * kc)] = objective;
            chunk_count_[static_cast<size_t>(c)] = moved;
        });
    }

    template <int KQ>
    void cost_pass_impl(const double* dense, const int32_t* given, int32_t* best, double* costs) {
        const int64_t kc = kc_;
        for_each_chunk(sh_.n, nt_, [&](int64_t c, int64_t start, int64_t stop) {
            double total = 0.0;
            each_cost<KQ>(start, stop, thread_id(), dense, [&](int64_t x, const double* acc) {
                double cost;
                if (given != nullptr) {
                    cost = acc[given[x]];
                } else {
                    const int64_t b = argmin(acc, kc);
                    best[x] = static_cast<int32_t>(b);
                    cost = acc[b];
                }
                if (costs != nullptr) costs[x] = cost;
                total += weighted_ ? object_weight(x) * cost : cost;
            });
            chunk_value_[static_cast<size_t>(c * kc)] = total;
        });
    }

    template <int KQ>
    void candidate_pass_impl(const double* dense, const double* closest, double* dist) {
        const int64_t n = sh_.n, kc = kc_;
        for_each_chunk(sh_.n, nt_, [&](int64_t c, int64_t start, int64_t stop) {
            double* potential = chunk_value_.data() + c * kc;
            std::fill(potential, potential + kc, 0.0);
            each_cost<KQ>(start, stop, thread_id(), dense, [&](int64_t x, const double* acc) {
                for (int64_t t = 0; t < kc; ++t) {
                    const double v = closest != nullptr ? std::min(closest[x], acc[t]) : acc[t];
                    dist[t * n + x] = v;
                    potential[t] += v;
                }
            });
        });
    }

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
    std::vector<int32_t> distinct_labels_;  // grouped: m x r, the distinct rows
    std::vector<double> distinct_costs_;  // grouped: m x kp, their lookup sums in the last pass
};

// Categorical centroids from label counts laid out with partition i's label l in column
// first_col[i] + l of rows of `stride` entries (n_clusters + 1 rows, the last for objects in no
// cluster); see the header for the fallback of a block with no labelled member.
// Count is int64_t (members) or double (weighted members); integer sums are exact.
template <class Count>
void categorical_centres(const int64_t* offsets, int64_t r, int64_t n_clusters,
                         const Count* counts, const int64_t* first_col, int64_t stride,
                         double* cat) {
    const int64_t width = offsets[r];
    std::vector<Count> whole(static_cast<size_t>(stride), 0);
    for (int64_t k = 0; k <= n_clusters; ++k) {
        for (int64_t e = 0; e < stride; ++e) whole[static_cast<size_t>(e)] += counts[k * stride + e];
    }
    for (int64_t i = 0; i < r; ++i) {
        const int64_t first = first_col[i];
        const int64_t k_i = offsets[i + 1] - offsets[i];
        Count whole_total = 0;
        for (int64_t l = 0; l < k_i; ++l) whole_total += whole[static_cast<size_t>(first + l)];
        for (int64_t k = 0; k < n_clusters; ++k) {
            const Count* row = counts + k * stride + first;
            Count total = 0;
            for (int64_t l = 0; l < k_i; ++l) total += row[l];
            double* m = cat + k * width + offsets[i];
            for (int64_t l = 0; l < k_i; ++l) {
                double v = 0.0;
                if (total > 0) {
                    v = static_cast<double>(row[l]) / static_cast<double>(total);
                } else if (whole_total > 0) {
                    v = static_cast<double>(whole[static_cast<size_t>(first + l)]) /
                        static_cast<double>(whole_total);
                }
                m[l] = v;
            }
        }
    }
}

// Scaled rows: block i of centre k is sum w_x s_x e_{L[x,i]} / sum w_x over the members; a
// cluster with no member gets the whole data set's.
void scaled_centres(const MixedRows& rows, const Shape& sh, const Slots& slots,
                    int64_t n_clusters, const Tally& tally, double* cat) {
    const int64_t stride = slots.count;
    std::vector<double> whole(static_cast<size_t>(stride), 0.0);
    double whole_mass = 0.0;
    for (int64_t k = 0; k <= n_clusters; ++k) {
        for (int64_t e = 0; e < stride; ++e) {
            whole[static_cast<size_t>(e)] += tally.wcounts[static_cast<size_t>(k * stride + e)];
        }
        whole_mass += tally.mass[static_cast<size_t>(k)];
    }
    for (int64_t k = 0; k < n_clusters; ++k) {
        const double mass = tally.mass[static_cast<size_t>(k)];
        const double* row = mass > 0.0 ? tally.wcounts.data() + k * stride : whole.data();
        const double total = mass > 0.0 ? mass : whole_mass;
        for (int64_t i = 0; i < sh.r; ++i) {
            const int64_t first = slots.of[static_cast<size_t>(i)];
            double* m = cat + k * sh.width + rows.offsets[i];
            for (int64_t l = 0; l < rows.offsets[i + 1] - rows.offsets[i]; ++l) {
                m[l] = row[first + l] / total;
            }
        }
    }
}

// Centroids from a tally (see the header for the fallbacks of empty blocks and clusters).
void centres_from_tally(const MixedRows& rows, const Shape& sh, const Slots& slots,
                        int64_t n_clusters, const Tally& tally, double* dense, double* cat) {
    const int64_t d = sh.d, rows_k = n_clusters + 1;
    const bool by_mass = weighted(rows);
    if (d > 0) {
        // The denominators: members, or their summed weights (exact integers without weights).
        auto size_of = [&](int64_t k) {
            return by_mass ? tally.mass[static_cast<size_t>(k)]
                           : static_cast<double>(tally.sizes[static_cast<size_t>(k)]);
        };
        std::vector<double> whole(static_cast<size_t>(d), 0.0);
        double total = 0.0;
        int64_t members = 0;
        for (int64_t k = 0; k < rows_k; ++k) {
            for (int64_t j = 0; j < d; ++j) {
                whole[static_cast<size_t>(j)] += tally.sums[static_cast<size_t>(k * d + j)];
            }
            members += tally.sizes[static_cast<size_t>(k)];
            if (by_mass) total += size_of(k);
        }
        if (!by_mass) total = static_cast<double>(members);
        for (int64_t k = 0; k < n_clusters; ++k) {
            const bool has_members = tally.sizes[static_cast<size_t>(k)] > 0;
            const double size = size_of(k);
            for (int64_t j = 0; j < d; ++j) {
                double v = 0.0;
                if (has_members) {
                    v = tally.sums[static_cast<size_t>(k * d + j)] / size;
                } else if (members > 0) {
                    v = whole[static_cast<size_t>(j)] / total;
                }
                dense[k * d + j] = v;
            }
        }
    }
    if (sh.r == 0) return;
    if (rows.row_scale != nullptr) {
        scaled_centres(rows, sh, slots, n_clusters, tally, cat);
    } else if (by_mass) {
        categorical_centres(rows.offsets, sh.r, n_clusters, tally.wcounts.data(), slots.of.data(),
                            slots.count, cat);
    } else {
        categorical_centres(rows.offsets, sh.r, n_clusters, tally.counts.data(), slots.of.data(),
                            slots.count, cat);
    }
}

// The engine's tally (label slots, see Slots) in the one-hot columns of the public functions.
void tally_to_columns(const MixedRows& rows, const Shape& sh, const Slots& slots,
                      int64_t n_clusters, const Tally& tally, int64_t* counts, int64_t* sizes) {
    for (int64_t k = 0; k <= n_clusters; ++k) {
        for (int64_t i = 0; i < sh.r; ++i) {
            const int64_t* from = tally.counts.data() + k * slots.count + slots.of[static_cast<size_t>(i)];
            int64_t* to = counts + k * sh.width + rows.offsets[i];
            std::copy(from, from + (rows.offsets[i + 1] - rows.offsets[i]), to);
        }
        sizes[k] = tally.sizes[static_cast<size_t>(k)];
    }
}

// The tally of a labelling in which -1 means "in no cluster" (checked here, with the labels).
Tally tally_of(const MixedRows& rows, const Shape& sh, int32_t n_clusters,
               const int32_t* assignment, int n_threads) {
    check_n_clusters(n_clusters, sh.n, false);
    check_assignment(assignment, sh.n, n_clusters, true);
    Engine engine(rows, sh, n_clusters, n_threads);
    Tally out;
    engine.count(assignment);
    engine.reduce(out, false);
    return out;
}

bool any_empty(const Tally& tally, int64_t n_clusters) {
    for (int64_t k = 0; k < n_clusters; ++k) {
        if (tally.sizes[static_cast<size_t>(k)] == 0) return true;
    }
    return false;
}

}  // namespace

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

namespace {

// The end of a Lloyd pass, shared by the drivers that keep the previous centres: the stopping
// rule (lloyd_verdict) on the pass's objective `obj`. A rise puts the previous labels and
// centres back (obj = prev_obj) and returns kStopRose. Otherwise the pass counts in the trace
// (trace[n_trace] = obj when `trace` is given) and a stop is returned; or -1, after `labels`
// took the pass's `best`, `prev_labels` and `prev` the old labels and centres, and prev_obj obj.
template <class CentreSet>
int32_t settle_pass(int64_t it, double& obj, double& prev_obj, int64_t changed, int64_t max_iter, double tol,
                    std::vector<int32_t>& labels, std::vector<int32_t>& prev_labels, std::vector<int32_t>& best,
                    CentreSet& cur, CentreSet& prev, int64_t& n_trace, double* trace) {
    const int32_t verdict = lloyd_verdict(it, obj, prev_obj, changed, max_iter, tol);
    if (verdict == kStopRose) {
        labels.swap(prev_labels);
        cur.swap(prev);
        obj = prev_obj;
        return verdict;
    }
    if (trace != nullptr) trace[n_trace] = obj;
    n_trace += 1;
    if (verdict >= 0) return verdict;
    prev_labels.swap(labels);
    labels.swap(best);
    cur.swap(prev);
    prev_obj = obj;
    return -1;
}

}  // namespace

bool kmeans_simd_supported(int32_t variant) {
    return cpu_supports(variant) && (variant == kSimdBaseline || lookup_kernel(variant) != nullptr);
}

int32_t kmeans_simd_variant() { return current_variant(); }

void kmeans_group_rows(bool on) { grouping_on.store(on, std::memory_order_relaxed); }

void kmeans_force_simd(int32_t variant) {
    if (variant != -1 && !kmeans_simd_supported(variant)) {
        fail("SIMD variant " + str(int64_t{variant}) + " is not supported by this build and CPU");
    }
    forced_variant.store(variant, std::memory_order_relaxed);
}

void reseed(int32_t* labels, const double* costs, int64_t n, int64_t* sizes, int64_t n_clusters) {
    for (int64_t e = 0; e < n_clusters; ++e) {
        if (sizes[e] != 0) continue;
        const int64_t pick = costliest_movable(labels, costs, n, sizes, nullptr);
        if (pick < 0) fail("cannot re-seed an empty cluster: n_clusters exceeds n");
        sizes[labels[pick]] -= 1;
        sizes[e] = 1;
        labels[pick] = static_cast<int32_t>(e);
    }
}

int64_t costliest_movable(const int32_t* assignment, const double* costs, int64_t n,
                          const int64_t* sizes, double* cost) {
    int64_t pick = -1;
    double pick_cost = 0.0;
    for (int64_t x = 0; x < n; ++x) {
        if (sizes[assignment[x]] < 2) continue;
        const double v = costs[x];
        // Written so a NaN cost is never preferred and never leaves pick unset.
        if (pick < 0 || v > pick_cost) {
            pick = x;
            pick_cost = v;
        }
    }
    if (cost != nullptr) *cost = pick_cost;
    return pick;
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
    const auto un = static_cast<size_t>(n);
    Engine engine(rows, sh, k_count, n_threads);
    std::vector<int32_t> labels(assignment, assignment + n), best(un), prev_labels(un);
    std::vector<double> best_cost(un);
    Centres cur{std::vector<double>(static_cast<size_t>(k_count * sh.d)),
                std::vector<double>(static_cast<size_t>(k_count * sh.width))};
    Centres prev = cur;
    Tally tally;

    engine.count(labels.data());  // also validates every partition label, once per call
    engine.group_identical_rows();
    engine.reduce(tally, false);
    centres_from_tally(rows, sh, engine.slots(), k_count, tally, cur.dense.data(),
                       cur.cat.data());
    if (any_empty(tally, k_count)) {
        engine.build_table(cur.cat.data());
        engine.cost_pass(cur.dense.data(), labels.data(), nullptr, best_cost.data());
        reseed(labels.data(), best_cost.data(), n, tally.sizes.data(), k_count);
        engine.count(labels.data());
        engine.reduce(tally, false);
        centres_from_tally(rows, sh, engine.slots(), k_count, tally, cur.dense.data(),
                           cur.cat.data());
    }

    LloydResult result;
    double obj = 0.0, prev_obj = 0.0;
    for (int64_t it = 0;; ++it) {
        engine.build_table(cur.cat.data());
        int64_t changed = 0;
        obj = engine.lloyd_pass(cur.dense.data(), labels.data(), best.data(), best_cost.data(),
                                &changed);
        const int32_t verdict = settle_pass(it, obj, prev_obj, changed, max_iter, tol, labels, prev_labels, best,
                                            cur, prev, result.n_trace, objective_trace);
        if (verdict >= 0) {
            result.stop = verdict;
            break;
        }
        engine.reduce(tally, true);  // the pass tallied the moves to the new labels
        if (any_empty(tally, k_count)) {
            reseed(labels.data(), best_cost.data(), n, tally.sizes.data(), k_count);
            engine.count(labels.data());
            engine.reduce(tally, false);
        }
        centres_from_tally(rows, sh, engine.slots(), k_count, tally, cur.dense.data(),
                           cur.cat.data());
    }

    std::copy(labels.begin(), labels.end(), assignment);
    std::copy(cur.dense.begin(), cur.dense.end(), dense_centers);
    std::copy(cur.cat.begin(), cur.cat.end(), cat_centers);
    result.objective = obj;
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
                std::copy(rows.labels + c * sh.r, rows.labels + (c + 1) * sh.r,
                          candidate_labels.begin() + t * sh.r);
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

void tally(const MixedRows& rows, int32_t n_clusters, const int32_t* assignment, int64_t* counts,
           int64_t* sizes, int n_threads) {
    const Shape sh = validate_rows(rows);
    require_unweighted(rows, "tally");
    if (sizes == nullptr) fail("sizes is null");
    if (sh.width > 0 && counts == nullptr) fail("counts is null but offsets[r] > 0");
    const Tally out = tally_of(rows, sh, n_clusters, assignment, n_threads);
    tally_to_columns(rows, sh, Slots(rows.offsets, sh.r), n_clusters, out, counts, sizes);
}

void centres_from_tally(const int64_t* offsets, int64_t r, int32_t n_clusters,
                        const int64_t* counts, double* cat_centers) {
    if (r < 0) fail("r must be >= 0, got " + str(r));
    if (n_clusters < 1) fail("n_clusters must be >= 1, got " + str(int64_t{n_clusters}));
    if (offsets == nullptr) fail("offsets is null");
    if (offsets[0] != 0) fail("offsets[0] must be 0, got " + str(offsets[0]));
    for (int64_t i = 0; i < r; ++i) {
        if (offsets[i + 1] < offsets[i]) {
            fail("offsets must be non-decreasing; offsets[" + str(i + 1) + "] = " +
                 str(offsets[i + 1]) + " < offsets[" + str(i) + "] = " + str(offsets[i]));
        }
    }
    if (r == 0 || offsets[r] == 0) return;
    if (counts == nullptr || cat_centers == nullptr) fail("counts or cat_centers is null");
    categorical_centres(offsets, r, n_clusters, counts, offsets, offsets[r], cat_centers);
}

namespace {

// The block kernels read no dense block: the executor that uses them holds partitions only.
Shape validate_categorical(const MixedRows& rows, const char* what) {
    const Shape sh = validate_rows(rows);
    if (sh.d != 0) fail(std::string(what) + " takes categorical rows only (d = 0), got d = " + str(sh.d));
    return sh;
}

}  // namespace

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

}  // namespace cclust

// ==== GKCC's candidate runs (issue 22) =========================================================
// A new section: it calls the engine above (Engine::build_table and Engine::candidate_pass for
// the starting costs, centres_from_tally, reseed, lloyd_verdict) and changes none of it.
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace cclust {

namespace {

// The cost columns of m centres (out: m x n) by the engine's own kernel: a k-means++ candidate
// pass with no previous distances writes exactly object_costs' values.
void cost_columns(const MixedRows& rows, const Shape& sh, int64_t m, const double* dense,
                  const double* cat, double* out, int n_threads) {
    Engine engine(rows, sh, m, n_threads);
    std::vector<double> potentials(static_cast<size_t>(m));
    engine.build_table(cat);
    engine.candidate_pass(dense, nullptr, out, potentials.data());
}

bool same_bits(const double* a, const double* b, int64_t count) {
    return count == 0 || std::memcmp(a, b, static_cast<size_t>(count) * sizeof(double)) == 0;
}

// The passes of one greedy step, shared by its candidates: a pass is a function of the labels
// it starts from (the centres are their centroids), and candidates often reach the same labels,
// so a pass found here is not run again. Entries are compared in full; the oldest go first
// once `budget` bytes are held (only the time depends on what is kept).
class PassMemo {
public:
    struct Entry {
        std::vector<int32_t> labels;  // the key: the labels the pass started from
        uint64_t hash;
        double objective;
        int64_t changed;
        std::vector<int32_t> best;
        std::vector<double> best_cost;
    };

    explicit PassMemo(int64_t budget) : budget_(budget) {}

    static uint64_t hash(const int32_t* labels, int64_t n) {
        uint64_t h = 1469598103934665603ull;
        for (int64_t x = 0; x < n; ++x) {
            h = (h ^ static_cast<uint32_t>(labels[x])) * 1099511628211ull;
        }
        return h ^ (h >> 31);
    }

    std::shared_ptr<const Entry> find(const int32_t* labels, int64_t n, uint64_t h) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto range = index_.equal_range(h);
        for (auto it = range.first; it != range.second; ++it) {
            const Entry& e = **it->second;
            if (std::memcmp(e.labels.data(), labels, static_cast<size_t>(n) * sizeof(int32_t)) == 0) {
                return *it->second;
            }
        }
        return nullptr;
    }

    void insert(std::shared_ptr<const Entry> entry) {
        const auto size = static_cast<int64_t>(entry->labels.size() * 16);
        std::lock_guard<std::mutex> lock(mutex_);
        if (size > budget_) return;
        entries_.push_back(std::move(entry));
        index_.emplace(entries_.back()->hash, std::prev(entries_.end()));
        bytes_ += size;
        while (bytes_ > budget_) {
            auto oldest = entries_.begin();
            auto range = index_.equal_range((*oldest)->hash);
            for (auto it = range.first; it != range.second; ++it) {
                if (it->second == oldest) {
                    index_.erase(it);
                    break;
                }
            }
            bytes_ -= static_cast<int64_t>((*oldest)->labels.size() * 16);
            entries_.pop_front();
        }
    }

private:
    const int64_t budget_;
    int64_t bytes_ = 0;
    std::list<std::shared_ptr<const Entry>> entries_;
    std::unordered_multimap<uint64_t, std::list<std::shared_ptr<const Entry>>::iterator> index_;
    std::mutex mutex_;
};

struct RunCounters {
    int64_t evaluated = 0, skipped = 0, passes = 0, reused_passes = 0;
};

// One candidate: the labels of `assign` to k centres whose cost columns are given, then `lloyd`
// from there. Costs are the engine's bits (one centre's cost is the same sequence of IEEE
// operations whether computed alone or in a lane with others: the dense sum, then the table
// entries of the partitions in order), but only those the pass needs are computed:
//
// * the cost of x to its own cluster is reused when that centre did not change (bitwise) since
//   the pass that computed it;
// * the cost to another centre j is skipped when a lower bound proves it exceeds the cost to the
//   own centre (Elkan 2003): sqrt(D) is a Euclidean distance in the augmented space (missing
//   labels drop their block, which only shortens a centre's move), so a bound at one centre,
//   less how far the centre moved, bounds it at the next. Computed costs differ from exact
//   ones by at most rel * cost + abs (rounding of at most r + d + max K_i + 16 operations per
//   cost, with a factor 64 to spare); the bounds and the test carry that slack, so a skipped
//   centre is one whose computed cost is strictly above the own one: neither the minimum nor a
//   tie, and the labels, best costs and objective are bit for bit those of a full pass.
class CandidateRun {
public:
    CandidateRun(const MixedRows& rows, const Shape& sh, const Slots& slots, int64_t k, PassMemo& memo,
                 const uint8_t* small)
        : rows_(rows), sh_(sh), slots_(slots), k_(k), n_(sh.n), chunks_(n_chunks(sh.n)), memo_(memo),
          acc_(static_cast<size_t>(k)), table_(static_cast<size_t>(k * slots.count)),
          own_(static_cast<size_t>(kBlock)), value_(static_cast<size_t>(kBlock * k)),
          pair_x_(static_cast<size_t>(kBlock * k)), pair_j_(static_cast<size_t>(kBlock * k)),
          small_(small), small_base_(static_cast<size_t>(sh.r)),
          lb_(static_cast<size_t>(sh.n * k)), moved_by_(static_cast<size_t>(k)),
          changed_centre_(static_cast<size_t>(k)) {
        int64_t max_k = 0;
        double weight = 0.0;
        for (int64_t i = 0; i < sh.r; ++i) {
            max_k = std::max<int64_t>(max_k, slots.size[static_cast<size_t>(i)]);
            weight += rows.weights[i];
        }
        constexpr double eps = std::numeric_limits<double>::epsilon();
        rel_ = 64.0 * eps * static_cast<double>(sh.r + sh.d + max_k + 16);
        abs_ = rel_ * (4.0 * weight + std::numeric_limits<double>::min());
        move_rel_ = 64.0 * eps * static_cast<double>(sh.d + sh.width + 16);
        for (int64_t i = 0; i < sh.r; ++i) small_base_[static_cast<size_t>(i)] = slots.of[static_cast<size_t>(i)] - 1;
    }

    void run(const double* const* columns, const double* start_dense, const double* start_cat,
             int64_t max_iter, double tol, int32_t* out_labels, double* out_objective,
             int64_t* out_n_iter, RunCounters& counters) {
        const int64_t n = n_, k = k_, d = sh_.d, width = sh_.width, slots = slots_.count;
        const auto un = static_cast<size_t>(n);
        std::vector<int32_t> labels(un), best(un), prev_labels(un);
        std::vector<double> best_cost(un);
        for (int64_t x = 0; x < n; ++x) {  // cost_pass without `given`: lowest index of the minima
            for (int64_t j = 0; j < k; ++j) {
                acc_[static_cast<size_t>(j)] = columns[j][x];
                lb_[static_cast<size_t>(x * k + j)] = lower(columns[j][x]);
            }
            labels[static_cast<size_t>(x)] = static_cast<int32_t>(argmin(acc_.data(), k));
        }
        // ref: the centres the bounds refer to; last: the centres of the last pass, to which
        // best_cost holds each object's cost when own_known.
        Centres ref{std::vector<double>(start_dense, start_dense + k * d),
                    std::vector<double>(start_cat, start_cat + k * width)};
        Centres last = ref;
        Centres cur{std::vector<double>(static_cast<size_t>(k * d)),
                    std::vector<double>(static_cast<size_t>(k * width))};
        chunk_sums_.assign(static_cast<size_t>(chunks_ * (k + 1) * d), 0.0);
        delta_counts_.assign(static_cast<size_t>((k + 1) * slots), 0);
        delta_sizes_.assign(static_cast<size_t>(k + 1), 0);
        bool own_known = false;

        recount(labels.data());
        centres_from_tally(rows_, sh_, slots_, k, tally_, cur.dense.data(), cur.cat.data());
        if (any_empty(tally_, k)) {
            build_tables(cur);
            std::vector<int64_t> xs(un);
            for (int64_t x = 0; x < n; ++x) xs[static_cast<size_t>(x)] = x;
            costs(xs.data(), labels.data(), n, cur, best_cost.data());
            counters.evaluated += n;
            reseed(labels.data(), best_cost.data(), n, tally_.sizes.data(), k);
            recount(labels.data());
            centres_from_tally(rows_, sh_, slots_, k, tally_, cur.dense.data(), cur.cat.data());
        }

        double obj = 0.0, prev_obj = 0.0;
        int64_t n_trace = 0;
        for (int64_t it = 0;; ++it) {
            counters.passes += 1;
            int64_t changed = 0;
            const uint64_t h = PassMemo::hash(labels.data(), n);
            if (auto seen = memo_.find(labels.data(), n, h)) {
                counters.reused_passes += 1;
                obj = seen->objective;
                changed = seen->changed;
                std::copy(seen->best.begin(), seen->best.end(), best.begin());
                std::copy(seen->best_cost.begin(), seen->best_cost.end(), best_cost.begin());
                moves_of(labels.data(), best.data());
            } else {
                move_bounds(ref, last, cur);
                build_tables(cur);
                obj = pass(labels.data(), best.data(), best_cost.data(), own_known, cur, &changed, counters);
                ref = cur;  // every bound now refers to these centres
                auto entry = std::make_shared<PassMemo::Entry>();
                entry->labels = labels;
                entry->hash = h;
                entry->objective = obj;
                entry->changed = changed;
                entry->best = best;
                entry->best_cost = best_cost;
                memo_.insert(std::move(entry));
            }
            last = cur;
            const int32_t verdict = lloyd_verdict(it, obj, prev_obj, changed, max_iter, tol);
            if (verdict == kStopRose) {
                labels.swap(prev_labels);
                obj = prev_obj;
                break;
            }
            n_trace += 1;
            if (verdict >= 0) break;
            prev_labels.swap(labels);
            labels.swap(best);
            own_known = true;
            prev_obj = obj;
            apply_deltas();
            if (any_empty(tally_, k)) {
                reseed(labels.data(), best_cost.data(), n, tally_.sizes.data(), k);
                recount(labels.data());
                own_known = false;  // reseeded objects changed cluster
            }
            centres_from_tally(rows_, sh_, slots_, k, tally_, cur.dense.data(), cur.cat.data());
        }
        std::copy(labels.begin(), labels.end(), out_labels);
        *out_objective = obj;
        *out_n_iter = n_trace - 1;
    }

private:
    // A lower bound of sqrt(D) from a computed cost: D >= (cost - abs) / (1 + rel).
    double lower(double computed) const {
        const double v = (computed * (1.0 - 2.0 * rel_) - abs_);
        return v > 0.0 ? std::sqrt(v) * (1.0 - rel_) : 0.0;
    }

    // Which centres differ from the last pass's (bitwise), and how far each moved from ref, the
    // centres of the bounds (rounded up); the bounds are lowered by that.
    void move_bounds(const Centres& ref, const Centres& last, const Centres& cur) {
        const int64_t k = k_, d = sh_.d, width = sh_.width;
        bool any = false;
        for (int64_t j = 0; j < k; ++j) {
            const double* a = cur.dense.data() + j * d;
            const double* b = ref.dense.data() + j * d;
            const double* ma = cur.cat.data() + j * width;
            const double* mb = ref.cat.data() + j * width;
            changed_centre_[static_cast<size_t>(j)] =
                same_bits(a, last.dense.data() + j * d, d) && same_bits(ma, last.cat.data() + j * width, width) ? 0 : 1;
            double move = 0.0;
            if (!(same_bits(a, b, d) && same_bits(ma, mb, width))) {
                double s = 0.0;
                for (int64_t e = 0; e < d; ++e) s += (a[e] - b[e]) * (a[e] - b[e]);
                s *= rows_.dense_weight;
                for (int64_t i = 0; i < sh_.r; ++i) {
                    double t = 0.0;
                    for (int64_t e = rows_.offsets[i]; e < rows_.offsets[i + 1]; ++e) t += (ma[e] - mb[e]) * (ma[e] - mb[e]);
                    s += rows_.weights[i] * t;
                }
                move = std::sqrt(s) * (1.0 + move_rel_) + std::numeric_limits<double>::min();
                any = true;
            }
            moved_by_[static_cast<size_t>(j)] = move;
        }
        if (!any) return;
        for (int64_t x = 0; x < n_; ++x) {
            double* lb = lb_.data() + x * k;
            for (int64_t j = 0; j < k; ++j) {
                const double v = (lb[j] - moved_by_[static_cast<size_t>(j)]) * (1.0 - 4.0 * std::numeric_limits<double>::epsilon());
                lb[j] = v > 0.0 ? v : 0.0;
            }
        }
    }

    // Engine::build_table for the squared Euclidean distance (uc), one slot row per centre.
    void build_tables(const Centres& c) {
        const int64_t* off = rows_.offsets;
        std::fill(table_.begin(), table_.end(), 0.0);
        for (int64_t k = 0; k < k_; ++k) {
            double* t_k = table_.data() + k * slots_.count;
            for (int64_t i = 0; i < sh_.r; ++i) {
                const double* m = c.cat.data() + k * sh_.width + off[i];
                const int64_t k_i = off[i + 1] - off[i];
                const double w = rows_.weights[i];
                double* t = t_k + slots_.of[static_cast<size_t>(i)];
                double n2 = 0.0;
                for (int64_t l = 0; l < k_i; ++l) n2 += m[l] * m[l];
                for (int64_t l = 0; l < k_i; ++l) t[l] = w * (1.0 - 2.0 * m[l] + n2);
            }
        }
    }

    // out[q] = object_costs' value for object xs[q] and centre js[q] (the weighted dense sum, then
    // the table entries of the partitions in order), kBatch costs at a time: their chains are
    // interleaved, so no add waits for the one before it in another chain (one chain alone runs
    // at the latency of an add), and each chain performs exactly the operations of one cost.
    // Labels are read from the step's one-byte copy (label + 1) when there is one: a label row is
    // streamed from memory once per cost, so a quarter of the bytes is most of the time saved.
    static constexpr int64_t kBatch = 8;

    void costs(const int64_t* xs, const int32_t* js, int64_t count, const Centres& c, double* out) const {
        if (small_ != nullptr) {
            costs_with(small_, small_base_.data(), xs, js, count, c, out);
        } else {
            costs_with(rows_.labels, slots_.of.data(), xs, js, count, c, out);
        }
    }

    template <class Label>
    void costs_with(const Label* labels, const int64_t* base, const int64_t* xs, const int32_t* js,
                    int64_t count, const Centres& c, double* out) const {
        const int64_t d = sh_.d, r = sh_.r, slots = slots_.count;
        for (int64_t q0 = 0; q0 < count; q0 += kBatch) {
            const int64_t* bx = xs + q0;
            const int32_t* bj = js + q0;
            const int64_t m = std::min(kBatch, count - q0);
            const Label* lab[kBatch];
            const double* tab[kBatch];
            double acc[kBatch];
            for (int64_t b = 0; b < kBatch; ++b) {
                const int64_t q = b < m ? b : m - 1;  // the tail repeats its last cost
                lab[b] = labels + bx[q] * r;
                tab[b] = table_.data() + bj[q] * slots;
                acc[b] = 0.0;
            }
            if (d > 0) {
                double s[kBatch];
                for (int64_t b = 0; b < kBatch; ++b) s[b] = 0.0;
                for (int64_t e = 0; e < d; ++e) {
                    for (int64_t b = 0; b < kBatch; ++b) {
                        const int64_t q = b < m ? b : m - 1;
                        const double t = rows_.X[bx[q] * d + e] - c.dense[static_cast<size_t>(bj[q] * d + e)];
                        s[b] += t * t;
                    }
                }
                for (int64_t b = 0; b < kBatch; ++b) acc[b] = rows_.dense_weight * s[b];
            }
            for (int64_t i = 0; i < r; ++i) {
                const int64_t si = base[i];
                for (int64_t b = 0; b < kBatch; ++b) acc[b] += tab[b][si + lab[b][i]];
            }
            for (int64_t b = 0; b < m; ++b) out[q0 + b] = acc[b];
        }
    }

    // Engine::lloyd_pass_impl with costs computed only where needed (see the class comment):
    // the same per-chunk objective (from 0.0, objects in order), best labels with the same tie
    // rule, moves tallied as deltas, and the dense sums of a chunk with a move summed again.
    // Per block of kBlock objects (so their label rows are still cached for the second phase):
    // the own costs that changed, then the other costs no bound excludes (both in batches), then
    // the decisions in object order.
    static constexpr int64_t kBlock = 256;

    double pass(const int32_t* labels, int32_t* best, double* best_cost, bool own_known,
                const Centres& c, int64_t* changed, RunCounters& counters) {
        const int64_t k = k_, d = sh_.d;
        std::fill(delta_counts_.begin(), delta_counts_.end(), 0);
        std::fill(delta_sizes_.begin(), delta_sizes_.end(), 0);
        double total = 0.0;
        int64_t moved_total = 0, evaluated = 0, skipped = 0;
        for (int64_t ch = 0; ch < chunks_; ++ch) {
            const int64_t chunk_stop = std::min(n_, (ch + 1) * kChunk);
            double objective = 0.0;
            int64_t moved = 0;
            for (int64_t start = ch * kChunk; start < chunk_stop; start += kBlock) {
                const int64_t stop = std::min(chunk_stop, start + kBlock);
                int64_t count = 0;
                for (int64_t x = start; x < stop; ++x) {
                    const int32_t cur = labels[x];
                    if (own_known && !changed_centre_[static_cast<size_t>(cur)]) {
                        own_[static_cast<size_t>(x - start)] = best_cost[x];
                    } else {
                        pair_x_[static_cast<size_t>(count)] = x;
                        pair_j_[static_cast<size_t>(count)] = cur;
                        count += 1;
                    }
                }
                costs(pair_x_.data(), pair_j_.data(), count, c, value_.data());
                evaluated += count;
                for (int64_t q = 0; q < count; ++q) {
                    const int64_t x = pair_x_[static_cast<size_t>(q)];
                    const double v = value_[static_cast<size_t>(q)];
                    own_[static_cast<size_t>(x - start)] = v;
                    lb_[static_cast<size_t>(x * k + labels[x])] = lower(v);
                }
                count = 0;
                for (int64_t x = start; x < stop; ++x) {
                    const int64_t cur = labels[x];
                    const double* lb = lb_.data() + x * k;
                    const double bar = own_[static_cast<size_t>(x - start)] * (1.0 + 2.0 * rel_) + abs_;
                    for (int64_t j = 0; j < k; ++j) {
                        if (j == cur) continue;
                        if (lb[j] * lb[j] * (1.0 - 2.0 * rel_) > bar) continue;
                        pair_x_[static_cast<size_t>(count)] = x;
                        pair_j_[static_cast<size_t>(count)] = static_cast<int32_t>(j);
                        count += 1;
                    }
                }
                costs(pair_x_.data(), pair_j_.data(), count, c, value_.data());
                evaluated += count;
                skipped += (stop - start) * (k - 1) - count;
                int64_t q = 0;
                for (int64_t x = start; x < stop; ++x) {
                    const int64_t cur = labels[x];
                    const double own = own_[static_cast<size_t>(x - start)];
                    double* lb = lb_.data() + x * k;
                    int64_t b = cur;
                    double bv = own;
                    for (; q < count && pair_x_[static_cast<size_t>(q)] == x; ++q) {
                        const int64_t j = pair_j_[static_cast<size_t>(q)];
                        const double v = value_[static_cast<size_t>(q)];
                        lb[j] = lower(v);
                        // j ascending: argmin's lowest index among the minima; a tie with own keeps cur.
                        if (v < bv) {
                            b = j;
                            bv = v;
                        }
                    }
                    objective += own;
                    best[x] = static_cast<int32_t>(b);
                    best_cost[x] = bv;
                    if (b == cur) continue;
                    moved += 1;
                    tally_move(x, cur, b);
                }
            }
            if (moved > 0 && d > 0) chunk_dense_sums(ch, best);
            total += objective;
            moved_total += moved;
        }
        counters.evaluated += evaluated;
        counters.skipped += skipped;
        *changed = moved_total;
        return total;
    }

    // The tally changes of a pass taken from the memo: its moves, and the dense sums of every
    // chunk with a move summed again (what the pass itself would have left).
    void moves_of(const int32_t* labels, const int32_t* best) {
        std::fill(delta_counts_.begin(), delta_counts_.end(), 0);
        std::fill(delta_sizes_.begin(), delta_sizes_.end(), 0);
        for (int64_t ch = 0; ch < chunks_; ++ch) {
            const int64_t stop = std::min(n_, (ch + 1) * kChunk);
            bool moved = false;
            for (int64_t x = ch * kChunk; x < stop; ++x) {
                if (best[x] == labels[x]) continue;
                moved = true;
                tally_move(x, labels[x], best[x]);
            }
            if (moved && sh_.d > 0) chunk_dense_sums(ch, best);
        }
    }

    // Object x moves from cluster `from` to `to`: the change of sizes and label counts.
    void tally_move(int64_t x, int64_t from, int64_t to) {
        const int64_t r = sh_.r, slots = slots_.count;
        const int64_t* slot_of = slots_.of.data();
        delta_sizes_[static_cast<size_t>(from)] -= 1;
        delta_sizes_[static_cast<size_t>(to)] += 1;
        const int32_t* lab = rows_.labels + x * r;
        int64_t* row_from = delta_counts_.data() + from * slots;
        int64_t* row_to = delta_counts_.data() + to * slots;
        for (int64_t i = 0; i < r; ++i) {
            row_from[slot_of[i] + lab[i]] -= 1;
            row_to[slot_of[i] + lab[i]] += 1;
        }
    }

    void chunk_dense_sums(int64_t c, const int32_t* assignment) {
        const int64_t d = sh_.d;
        double* sums = chunk_sums_.data() + c * (k_ + 1) * d;
        std::fill(sums, sums + (k_ + 1) * d, 0.0);
        const int64_t stop = std::min(n_, (c + 1) * kChunk);
        for (int64_t x = c * kChunk; x < stop; ++x) {
            const double* xr = rows_.X + x * d;
            double* to = sums + assignment[x] * d;
            for (int64_t j = 0; j < d; ++j) to[j] += xr[j];
        }
    }

    // The tally from scratch (Engine::count then reduce): integer counts, and dense sums per
    // chunk added in chunk order.
    void recount(const int32_t* labels) {
        const int64_t k = k_, r = sh_.r, slots = slots_.count;
        const int64_t* slot_of = slots_.of.data();
        tally_.counts.assign(static_cast<size_t>((k + 1) * slots), 0);
        tally_.sizes.assign(static_cast<size_t>(k + 1), 0);
        for (int64_t x = 0; x < n_; ++x) {
            const int64_t l = labels[x];
            tally_.sizes[static_cast<size_t>(l)] += 1;
            int64_t* row = tally_.counts.data() + l * slots;
            const int32_t* lab = rows_.labels + x * r;
            for (int64_t i = 0; i < r; ++i) row[slot_of[i] + lab[i]] += 1;
        }
        if (sh_.d > 0) {
            for (int64_t c = 0; c < chunks_; ++c) chunk_dense_sums(c, labels);
        }
        reduce_sums();
    }

    // Engine::reduce(tally, true): the pass's count changes added, the dense sums again.
    void apply_deltas() {
        for (size_t e = 0; e < delta_counts_.size(); ++e) tally_.counts[e] += delta_counts_[e];
        for (size_t e = 0; e < delta_sizes_.size(); ++e) tally_.sizes[e] += delta_sizes_[e];
        reduce_sums();
    }

    void reduce_sums() {
        const int64_t per_chunk = (k_ + 1) * sh_.d;
        tally_.sums.assign(static_cast<size_t>(per_chunk), 0.0);
        for (int64_t c = 0; c < chunks_; ++c) {
            const double* sums = chunk_sums_.data() + c * per_chunk;
            for (int64_t e = 0; e < per_chunk; ++e) tally_.sums[static_cast<size_t>(e)] += sums[e];
        }
    }

    const MixedRows& rows_;
    const Shape& sh_;
    const Slots& slots_;
    const int64_t k_, n_, chunks_;
    PassMemo& memo_;
    std::vector<double> acc_;
    std::vector<double> table_;          // k x slots: the uc cost of each label under each centre
    std::vector<double> own_, value_;    // per chunk: own costs; costs of the queued pairs
    std::vector<int64_t> pair_x_;        // per chunk: the queued (object, centre) pairs
    std::vector<int32_t> pair_j_;
    const uint8_t* small_;               // n x r labels + 1, or null (some K_i above 254)
    std::vector<int64_t> small_base_;    // r: the slot of label -1, for small_
    std::vector<double> lb_;             // n x k: lower bounds of sqrt(D) to ref's centres
    std::vector<double> moved_by_;       // k
    std::vector<char> changed_centre_;   // k
    double rel_ = 0.0, abs_ = 0.0, move_rel_ = 0.0;
    Tally tally_;
    std::vector<double> chunk_sums_;
    std::vector<int64_t> delta_counts_, delta_sizes_;
};

}  // namespace

void candidate_runs(const MixedRows& rows, int32_t n_shared, const double* shared_dense,
                    const double* shared_cat, int64_t n_candidates, const double* seed_dense,
                    const double* seed_cat, int64_t max_iter, double tol, int n_threads,
                    int64_t memo_bytes, int32_t* labels, double* objectives, int64_t* n_iter,
                    int64_t* stats) {
    const Shape sh = validate_rows(rows);
    require_unweighted(rows, "candidate_runs");
    if (rows.distance != kUc) fail("candidate_runs takes the squared Euclidean distance (uc) only");
    if (n_shared < 0) fail("n_shared must be >= 0, got " + str(int64_t{n_shared}));
    if (n_candidates < 0) fail("n_candidates must be >= 0, got " + str(n_candidates));
    const int64_t k = int64_t{n_shared} + 1;
    if (k > sh.n) fail("n_shared + 1 must be <= n (" + str(sh.n) + "), got " + str(k));
    if (max_iter < 0) fail("max_iter must be >= 0, got " + str(max_iter));
    if (!(tol >= 0.0 && std::isfinite(tol))) fail("tol must be finite and >= 0, got " + str(tol));
    if (stats == nullptr) fail("stats is null");
    if (n_candidates > 0 && (labels == nullptr || objectives == nullptr || n_iter == nullptr)) {
        fail("labels, objectives or n_iter is null");
    }
    if (n_shared > 0) check_centers(sh, n_shared, shared_dense, shared_cat);
    if (n_candidates > 0) check_centers(sh, n_candidates, seed_dense, seed_cat);
    for (int i = 0; i < 5; ++i) stats[i] = 0;
    if (n_candidates == 0) return;
    const int64_t n = sh.n, d = sh.d, width = sh.width;
    const Slots slots(rows.offsets, sh.r);
    {
        Engine engine(rows, sh, 1, n_threads);
        engine.check_labels();
    }
    // The costs to the shared centres are the same for every candidate: computed once.
    std::vector<double> shared(static_cast<size_t>(n_shared * n));
    if (n_shared > 0) cost_columns(rows, sh, n_shared, shared_dense, shared_cat, shared.data(), n_threads);
    std::vector<double> seeds(static_cast<size_t>(n_candidates * n));
    cost_columns(rows, sh, n_candidates, seed_dense, seed_cat, seeds.data(), n_threads);

    PassMemo memo(memo_bytes);
    // One byte per label (label + 1) when every partition has at most 254 clusters.
    std::vector<uint8_t> small;
    bool fits = true;
    for (int64_t i = 0; i < sh.r; ++i) fits = fits && slots.size[static_cast<size_t>(i)] <= 254;
    if (fits && sh.r > 0) {
        small.resize(static_cast<size_t>(n * sh.r));
        for (int64_t e = 0; e < n * sh.r; ++e) small[static_cast<size_t>(e)] = static_cast<uint8_t>(rows.labels[e] + 1);
    }
    const int team = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(n_threads, n_candidates)));
    std::vector<RunCounters> counters(static_cast<size_t>(n_candidates));
    std::exception_ptr error;
    std::mutex error_mutex;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
#endif
    for (int64_t c = 0; c < n_candidates; ++c) {
        try {
            std::vector<const double*> columns(static_cast<size_t>(k));
            std::vector<double> start_dense(static_cast<size_t>(k * d)), start_cat(static_cast<size_t>(k * width));
            for (int64_t j = 0; j < n_shared; ++j) columns[static_cast<size_t>(j)] = shared.data() + j * n;
            columns[static_cast<size_t>(n_shared)] = seeds.data() + c * n;
            if (d > 0) {
                std::copy(shared_dense, shared_dense + n_shared * d, start_dense.begin());
                std::copy(seed_dense + c * d, seed_dense + (c + 1) * d, start_dense.begin() + n_shared * d);
            }
            if (width > 0) {
                std::copy(shared_cat, shared_cat + n_shared * width, start_cat.begin());
                std::copy(seed_cat + c * width, seed_cat + (c + 1) * width, start_cat.begin() + n_shared * width);
            }
            CandidateRun run(rows, sh, slots, k, memo, small.empty() ? nullptr : small.data());
            run.run(columns.data(), start_dense.data(), start_cat.data(), max_iter, tol, labels + c * n,
                    objectives + c, n_iter + c, counters[static_cast<size_t>(c)]);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    }
    (void)team;
    if (error) std::rethrow_exception(error);
    stats[0] = n * (n_shared + n_candidates);
    for (const RunCounters& rc : counters) {
        stats[0] += rc.evaluated;
        stats[1] += rc.skipped;
        stats[2] += rc.passes;
        stats[3] += rc.reused_passes;
    }
    stats[4] = n * k;  // costs a full pass computes, for the ratio
}

}  // namespace cclust

// ==== Dense rows held in row blocks (issue 18: the k-means of cclust.dask's transfer cut) =======
// A new section: thin wrappers over the Engine above (build_table, cost_pass, lloyd_pass, count,
// reduce, candidate_pass) for an executor that holds dense rows in blocks starting on chunk
// boundaries. Nothing above is changed; every float is computed by the code `assign`, `lloyd` and
// `kmeanspp` run.
namespace cclust {

namespace {

Shape validate_dense(const MixedRows& rows, const char* what) {
    const Shape sh = validate_rows(rows);
    if (sh.r != 0) fail(std::string(what) + " takes dense rows only (r = 0), got r = " + str(sh.r));
    require_unweighted(rows, what);
    return sh;
}

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

// ==== Dense k-means with exact bounds (issue 18; added after the kernels above, which it leaves
// alone). See dense_lloyd_bounded in kmeans.hpp. ====
namespace cclust {

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

// acc[c] = dense_cost(xr, centre c) for every centre, the centres stored by feature (ct[j * k +
// c]); each acc[c] goes through the same operations in the same order as dense_cost, and the
// loop over centres vectorises.
inline void dense_costs_by_feature(const double* __restrict xr, const double* __restrict ct, int64_t k,
                                   int64_t d, double* __restrict acc) {
    for (int64_t c = 0; c < k; ++c) acc[c] = 0.0;
    for (int64_t j = 0; j < d; ++j) {
        const double v = xr[j];
        const double* __restrict col = ct + j * k;
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
          ct_(static_cast<size_t>(k * d)), lower_(static_cast<size_t>(n), 0.0),
          half_gap_(static_cast<size_t>(k), 0.0), chunk_sums_(static_cast<size_t>(chunks_ * k * d)),
          chunk_value_(static_cast<size_t>(chunks_), 0.0), chunk_moved_(static_cast<size_t>(chunks_), 0),
          chunk_full_(static_cast<size_t>(chunks_), 0), chunk_bounded_(static_cast<size_t>(chunks_), 0),
          sizes_(static_cast<size_t>(k), 0) {}

    LloydResult run(const int64_t* seeds, int64_t max_iter, double tol, int32_t* out_labels, double* out_centres,
                    int64_t* stats) {
        const int64_t n = n_, d = d_, k = k_;
        const auto un = static_cast<size_t>(n);
        std::vector<int32_t> labels(un), best(un), prev_labels(un);
        std::vector<double> best_cost(un);
        std::vector<double> cur(static_cast<size_t>(k * d)), prev(cur.size());
        for (int64_t c = 0; c < k; ++c) std::copy(X_ + seeds[c] * d, X_ + (seeds[c] + 1) * d, cur.data() + c * d);
        seed_pass(cur.data(), labels.data());  // assign's labels, and every object's bound
        prev.swap(cur);
        count_sizes(labels.data());
        centres_of(labels.data(), cur.data());
        bool bounds_valid = true;
        if (std::find(sizes_.begin(), sizes_.end(), 0) != sizes_.end()) {  // lloyd's start: reseed
            for (int64_t x = 0; x < n; ++x) best_cost[static_cast<size_t>(x)] = dense_cost(X_ + x * d, cur.data() + labels[static_cast<size_t>(x)] * d, d);
            reseed(labels.data(), best_cost.data(), n, sizes_.data(), k);
            centres_of(labels.data(), cur.data());
            bounds_valid = false;
        }
        moved_bounds(prev.data(), cur.data(), labels.data(), bounds_valid);

        LloydResult result;
        double obj = 0.0, prev_obj = 0.0;
        for (int64_t it = 0;; ++it) {
            int64_t changed = 0;
            obj = pass(cur.data(), labels.data(), best.data(), best_cost.data(), &changed);
            const int32_t verdict = settle_pass(it, obj, prev_obj, changed, max_iter, tol, labels, prev_labels,
                                                best, cur, prev, result.n_trace, nullptr);
            if (verdict >= 0) {
                result.stop = verdict;
                break;
            }
            count_sizes(labels.data());
            bounds_valid = true;
            if (std::find(sizes_.begin(), sizes_.end(), 0) != sizes_.end()) {
                reseed(labels.data(), best_cost.data(), n, sizes_.data(), k);
                bounds_valid = false;  // a re-seeded object's bound was to its old cluster
            }
            centres_of(labels.data(), cur.data());
            moved_bounds(prev.data(), cur.data(), labels.data(), bounds_valid);
        }
        std::copy(labels.begin(), labels.end(), out_labels);
        std::copy(cur.begin(), cur.end(), out_centres);
        result.objective = obj;
        result.n_iter = result.n_trace - 1;
        result.converged = result.stop != kStopMaxIter;
        stats[0] = full_;
        stats[1] = bounded_;
        return result;
    }

private:
    // A certified upper bound of the Euclidean distance whose computed square is s, and a
    // certified lower bound (the computed square is within rel * s + abs2 of the exact one).
    double upper(double s) const { return std::sqrt(s + abs2_) * (1.0 + rel_); }
    double lower(double s) const { return std::sqrt(std::max(0.0, s - abs2_)) * (1.0 - rel_); }

    void by_feature(const double* centres) {
        for (int64_t c = 0; c < k_; ++c) {
            for (int64_t j = 0; j < d_; ++j) ct_[static_cast<size_t>(j * k_ + c)] = centres[c * d_ + j];
        }
    }

    template <class Body>
    void chunks_with_scratch(Body&& body) {
        for_each_chunk_with(
            n_, nt_, [&]() { return std::vector<double>(static_cast<size_t>(k_)); },
            [&](std::vector<double>& acc, int64_t c, int64_t start, int64_t stop) { body(acc.data(), c, start, stop); });
    }

    // `assign` to the seed rows: lowest index among the minima; each bound is the second cost.
    void seed_pass(const double* centres, int32_t* labels) {
        by_feature(centres);
        const int64_t k = k_, d = d_;
        chunks_with_scratch([&](double* acc, int64_t, int64_t start, int64_t stop) {
            for (int64_t x = start; x < stop; ++x) {
                dense_costs_by_feature(X_ + x * d, ct_.data(), k, d, acc);
                const int64_t b = lowest_min(acc);
                labels[x] = static_cast<int32_t>(b);
                lower_[static_cast<size_t>(x)] = second_lower(acc, b);
            }
        });
        full_ += n_;
    }

    int64_t lowest_min(const double* acc) const {
        int64_t b = 0;
        double bv = acc[0];
        for (int64_t c = 1; c < k_; ++c) {
            if (acc[c] < bv) bv = acc[c], b = c;
        }
        return b;
    }

    // Lower bound of the distance to every centre but b (infinite when there is none).
    double second_lower(const double* acc, int64_t b) const {
        double s = std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < k_; ++c) {
            if (c != b && acc[c] < s) s = acc[c];
        }
        return std::isinf(s) ? s : lower(s);
    }

    // One Lloyd pass as the engine's: the objective of the current labels (per chunk, in order),
    // every object's best centre (ties keep the current one) and its cost there.
    double pass(const double* centres, const int32_t* labels, int32_t* best, double* best_cost, int64_t* changed) {
        by_feature(centres);
        const int64_t k = k_, d = d_;
        chunks_with_scratch([&](double* acc, int64_t c, int64_t start, int64_t stop) {
            double objective = 0.0;
            int64_t moved = 0, full = 0;
            for (int64_t x = start; x < stop; ++x) {
                const double* xr = X_ + x * d;
                const int64_t a = labels[x];
                const double own = dense_cost(xr, centres + a * d, d);
                objective += own;
                const double reach = upper(own);
                double& bound = lower_[static_cast<size_t>(x)];
                if (reach < bound || reach < half_gap_[static_cast<size_t>(a)]) {
                    best[x] = static_cast<int32_t>(a);
                    best_cost[x] = own;
                    continue;
                }
                full += 1;
                dense_costs_by_feature(xr, ct_.data(), k, d, acc);
                int64_t b = lowest_min(acc);
                if (acc[a] == acc[b]) b = a;  // ties keep the current cluster
                best[x] = static_cast<int32_t>(b);
                best_cost[x] = acc[b];
                bound = second_lower(acc, b);
                moved += b != a;
            }
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
            dense_costs_by_feature(after + c * d, ct_.data(), k, d, acc.data());
            const double gap = second_lower(acc.data(), c);
            half_gap_[static_cast<size_t>(c)] = std::isinf(gap) ? gap : 0.5 * gap * (1.0 - rel_);
        }
    }

    const double* X_;
    const int64_t n_, d_, k_;
    const int nt_;
    const int64_t chunks_;
    const double rel_, abs2_;
    std::vector<double> ct_, lower_, half_gap_, chunk_sums_, chunk_value_;
    std::vector<int64_t> chunk_moved_, chunk_full_, chunk_bounded_, sizes_;
    int64_t full_ = 0, bounded_ = 0;
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
