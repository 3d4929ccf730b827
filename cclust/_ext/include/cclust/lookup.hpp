// The label lookup every pass over basic partitions is built on.
//
// KCC's K-means passes (Wu et al. 2015), the voting family's scores (Nguyen & Caruana 2007:
// IVC, IPVC, IPC; relabel-and-vote; the EM mixture of Topchy et al. 2004) and any later method
// that scores an object against K clusters partition by partition share one shape:
//
//     score(x, k) = sum_i table[slot of (i, label of x in i)][k]
//
// so a pass is O(n r K) contiguous reads of a small (label slot x K) table and never forms the
// one-hot matrix or the n x n co-association. This header holds that lookup once: the slot
// layout, the validity check of a row of labels, the row sums over a dense table (in SIMD lanes)
// and over a CSR table (for tables with about one non-zero per label). Each object's sum is added
// in partition order by one thread, so every caller's result is bitwise the same for any thread
// count.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace cclust {

// Lanes of two doubles: whole-register adds (the 16-byte register every x86-64 and arm64 target
// has: wider generic vectors are lowered through memory on such targets); elsewhere a loop the
// compiler may vectorise. Each lane is an independent sum, so the result does not depend on the
// width used.
constexpr int64_t kLane = 2;

struct alignas(kLane * sizeof(double)) Lanes {
#if defined(__GNUC__) || defined(__clang__)
    typedef double Vec __attribute__((vector_size(kLane * sizeof(double))));
    Vec v;
    void add(const Lanes& o) { v += o.v; }
#else
    double v[kLane];
    void add(const Lanes& o) {
        for (int64_t j = 0; j < kLane; ++j) v[j] += o.v[j];
    }
#endif
};

inline int64_t lanes_for(int64_t k) { return (k + kLane - 1) / kLane; }

// Fixed lane counts (up to 32 clusters) are instantiated so the accumulator stays in registers;
// 0 = any count.
template <class F>
void dispatch_lanes(int64_t kq, F&& f) {
    switch (kq) {
        case 1: f(std::integral_constant<int, 1>()); return;
        case 2: f(std::integral_constant<int, 2>()); return;
        case 3: f(std::integral_constant<int, 3>()); return;
        case 4: f(std::integral_constant<int, 4>()); return;
        case 5: f(std::integral_constant<int, 5>()); return;
        case 6: f(std::integral_constant<int, 6>()); return;
        case 7: f(std::integral_constant<int, 7>()); return;
        case 8: f(std::integral_constant<int, 8>()); return;
        case 9: f(std::integral_constant<int, 9>()); return;
        case 10: f(std::integral_constant<int, 10>()); return;
        case 11: f(std::integral_constant<int, 11>()); return;
        case 12: f(std::integral_constant<int, 12>()); return;
        case 13: f(std::integral_constant<int, 13>()); return;
        case 14: f(std::integral_constant<int, 14>()); return;
        case 15: f(std::integral_constant<int, 15>()); return;
        case 16: f(std::integral_constant<int, 16>()); return;
        default: f(std::integral_constant<int, 0>()); return;
    }
}

template <int KQ>
struct LaneBuffer {
    Lanes v[static_cast<size_t>(KQ)];
    Lanes* get(Lanes*) { return v; }
};

template <>
struct LaneBuffer<0> {
    Lanes* get(Lanes* scratch) { return scratch; }  // per-thread, allocated outside the region
};

// Label slots: partition i owns the slots of[i] - 1 .. of[i] + K_i - 1, the first one for
// "missing". Label l (-1 included) of partition i is slot of[i] + l, so tables and counts are
// indexed without a branch on the (random, often 30%) missing pattern; the missing slot of a
// table is all zero (adding +0 changes no sum that starts at +0) and its counts are never read.
struct Slots {
    std::vector<int64_t> of;     // r: offsets[i] + i + 1
    std::vector<uint32_t> size;  // r: K_i (< 2^31, checked by the caller)
    int64_t count = 0;           // offsets[r] + r

    Slots(const int64_t* offsets, int64_t r) : of(static_cast<size_t>(r)), size(static_cast<size_t>(r)) {
        for (int64_t i = 0; i < r; ++i) {
            of[static_cast<size_t>(i)] = offsets[i] + i + 1;
            size[static_cast<size_t>(i)] = static_cast<uint32_t>(offsets[i + 1] - offsets[i]);
        }
        count = r > 0 ? offsets[r] + r : 0;
    }
};

// Label codes in any of the three layouts an ensemble's labels come in: int32 with -1 for a
// missing label, or uint16 / uint8 whose largest value (0xFFFF / 0xFF) marks a missing label.
// The narrow layouts hold labels below their signed type's top (uint8: 0..126, uint16:
// 0..32766; cclust._codes.compact_dtype), so a code read as signed is its label and the missing
// code reads as -1: label_code is one sign-extending load in every layout, as int32's is. (Read
// as unsigned, the missing code needed an add and a second extension per label, which made
// GKCC's candidate costs about a fifth more instructions.)
inline int64_t label_code(int32_t v) { return v; }
inline int64_t label_code(uint16_t v) { return static_cast<int16_t>(v); }
inline int64_t label_code(uint8_t v) { return static_cast<int8_t>(v); }

// label_code + 1 as an unsigned 32-bit value: 0 for missing, l + 1 for label l. A label below
// -1 wraps to a huge value, and a narrow code past its signed top reads either as such a label
// (uint8 128..254, uint16 32768..65534) or as the label 127 / 32767, not below any K_i its
// layout holds; so one compare against K_i finds every bad label.
template <class T>
inline uint32_t shifted_code(T v) { return static_cast<uint32_t>(label_code(v) + 1); }

// The label a code was written as, for error messages: -1 for the missing code, and a bad
// narrow code as the number stored rather than its signed reading.
template <class T>
inline int64_t stored_code(T v) { return label_code(v) == -1 ? -1 : static_cast<int64_t>(v); }

// The most clusters a partition can have in codes of label_bytes each (see label_code).
inline int64_t code_cluster_limit(int32_t label_bytes) {
    return label_bytes == 1 ? 127 : label_bytes == 2 ? 32767 : int64_t{2147483647};
}

// Calls f with the label matrix typed by its code width in bytes (4, 2 or 1; see label_code).
template <class F>
decltype(auto) with_label_codes(const void* labels, int32_t label_bytes, F&& f) {
    switch (label_bytes) {
        case 1: return f(static_cast<const uint8_t*>(labels));
        case 2: return f(static_cast<const uint16_t*>(labels));
        default: return f(static_cast<const int32_t*>(labels));
    }
}

// True when some label of the row is neither missing nor in 0..K_i-1. One unsigned compare per
// label (missing wraps to 0) and no early exit, so the loop vectorises and streams at memory speed.
template <class T>
inline bool row_has_bad_label(const T* __restrict lab, const uint32_t* __restrict size, int64_t r) {
    uint32_t bad = 0;
    for (int64_t i = 0; i < r; ++i) {
        bad |= static_cast<uint32_t>(shifted_code(lab[i]) > size[i]);
    }
    return bad != 0;
}

// The first bad column of a row that row_has_bad_label flagged (for the error message).
template <class T>
inline int64_t first_bad_label(const T* lab, const uint32_t* size, int64_t r) {
    for (int64_t i = 0; i < r; ++i) {
        if (shifted_code(lab[i]) > size[i]) return i;
    }
    return -1;
}

// sum[0..kq) += the table rows of a row of validated labels, partition by partition in order.
// The table holds kq Lanes per label slot (Slots layout, missing slots all zero).
template <int KQ, class T>
inline void add_label_rows(const T* __restrict lab, int64_t r, const int64_t* __restrict slot_of,
                           const Lanes* __restrict table, int64_t kq_runtime, Lanes* __restrict sum) {
    const int64_t kq = KQ > 0 ? KQ : kq_runtime;
    for (int64_t i = 0; i < r; ++i) {
        const Lanes* t = table + (slot_of[i] + label_code(lab[i])) * kq;
        for (int64_t q = 0; q < kq; ++q) sum[q].add(t[q]);
    }
}

// acc[k] = sum over partitions (in order) of the table rows of a row of labels, with the table
// folded into kq Lanes per slot. acc must hold kLane * kq doubles; entries past the table's
// width come out 0. `scratch` (kq Lanes) is used when KQ == 0.
template <int KQ, class T>
inline void label_row_sums(const T* lab, int64_t r, const int64_t* slot_of, const Lanes* table,
                           int64_t kq_runtime, double* acc, Lanes* scratch) {
    const int64_t kq = KQ > 0 ? KQ : kq_runtime;
    LaneBuffer<KQ> buffer;
    Lanes* sum = buffer.get(scratch);
    std::memset(static_cast<void*>(sum), 0, static_cast<size_t>(kq) * sizeof(Lanes));
    add_label_rows<KQ>(lab, r, slot_of, table, kq, sum);
    std::memcpy(acc, sum, static_cast<size_t>(kq) * sizeof(Lanes));
}

// A (label x K) table given in the offsets layout (row offsets[i] + l for label l of partition
// i, K values each) copied into the Slots layout of kq Lanes per slot, zero-padded.
inline std::vector<Lanes> slot_table(const double* table, const int64_t* offsets, int64_t r, int64_t k,
                                     const Slots& slots) {
    const int64_t kq = lanes_for(k);
    std::vector<Lanes> out(static_cast<size_t>(slots.count * kq));
    std::memset(static_cast<void*>(out.data()), 0, out.size() * sizeof(Lanes));
    for (int64_t i = 0; i < r; ++i) {
        for (int64_t l = 0; l < offsets[i + 1] - offsets[i]; ++l) {
            double* dst = reinterpret_cast<double*>(out.data() + (slots.of[static_cast<size_t>(i)] + l) * kq);
            std::memcpy(dst, table + (offsets[i] + l) * k, static_cast<size_t>(k) * sizeof(double));
        }
    }
    return out;
}

// acc[0..K) += the CSR table rows of a row of validated labels, partition by partition in order;
// missing labels add nothing. Row offsets[i] + l holds the columns indices[indptr[row] ..
// indptr[row + 1]) with their values. The same sums, bitwise, as the dense table with zeros.
template <class T>
inline void add_label_rows_csr(const T* lab, int64_t r, const int64_t* offsets, const int64_t* indptr,
                               const int32_t* indices, const double* values, double* acc) {
    for (int64_t i = 0; i < r; ++i) {
        const int64_t l = label_code(lab[i]);
        if (l < 0) continue;
        const int64_t row = offsets[i] + l;
        for (int64_t e = indptr[row]; e < indptr[row + 1]; ++e) acc[indices[e]] += values[e];
    }
}

}  // namespace cclust
