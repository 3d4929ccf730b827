// The Engine every k-means entry point runs: the lookup table of the centres, the Lloyd, cost and
// k-means++ candidate passes over fixed chunks, the tallies, and the grouping of identical label
// rows.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cclust/kmeans_internal.hpp"

namespace cclust {
namespace kmeans_detail {

namespace {

// -log2 of a zero share is infinite; the constant keeps a label the centre has never seen finite
// (about 52 bits), as the KCC reference implementations do.
constexpr double kUhSmoothing = 2.2e-16;

// Objects per call of a lookup kernel (their costs stay in L1; more when the partitions go in
// groups, so each group's rows of the table serve more objects), and the table's alignment slack.
constexpr int64_t kBlockRows = 32;
constexpr int64_t kGroupedBlockRows = 256;
constexpr int64_t kTableAlign = 64 / sizeof(Lanes);

inline Lanes* aligned_lanes(Lanes* p) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    return reinterpret_cast<Lanes*>((a + 63) / 64 * 64);
}

// The mismatch kernel where it gives the candidate table's sums: no dense block, unweighted rows
// and one weight (the same double) for every partition.
MismatchRows equal_weight_mismatch(const MixedRows& rows, const Shape& sh) {
    if (sh.d != 0 || sh.r == 0 || weighted(rows)) return nullptr;
    for (int64_t i = 1; i < sh.r; ++i) {
        if (std::memcmp(&rows.weights[i], &rows.weights[0], sizeof(double)) != 0) return nullptr;
    }
    return mismatch_kernel(current_variant(), rows.label_bytes);
}

int team_size(int n_threads, int64_t chunks) {
    int64_t t = n_threads < 1 ? 1 : n_threads;
    t = std::min<int64_t>(t, std::max<int64_t>(chunks, 1));
    return static_cast<int>(t);
}

// Costs of object x against kc centres into acc[0..kLane kq): the dense part against `dense`
// (kc x d), then, partition by partition in order, the table row of each label. The table has
// kq Lanes per label slot (entry k = weighted cost of that label under centre k). Labels must
// have been validated. Entries kc.. come out 0.
template <int KQ, class T>
inline void object_costs(const MixedRows& rows, const T* labels, int64_t x, int64_t kc, int64_t kq_runtime,
                         const int64_t* __restrict slot_of, const double* __restrict dense,
                         const Lanes* __restrict table, double* __restrict acc,
                         Lanes* lane_scratch) {
    const int64_t kq = KQ > 0 ? KQ : kq_runtime;
    const int64_t kp = kLane * kq;
    const int64_t d = rows.d;
    if (d > 0) {
        const double* xr = rows.X + x * d;
        for (int64_t k = 0; k < kc; ++k) acc[k] = rows.dense_weight * squared_distance(xr, dense + k * d, d);
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
    add_label_rows<KQ>(labels + x * r, r, slot_of, table, kq, sum);
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

// A 64-bit hash of a row of label codes, `bytes` long (four independent lanes of 64-bit
// words); grouping always compares the rows themselves, so collisions cost time, never
// correctness.
inline uint64_t row_hash(const uint8_t* row, int64_t bytes) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
    uint64_t h[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                     0x082EFA98EC4E6C89ull ^ static_cast<uint64_t>(bytes)};
    int64_t i = 0;
    for (; i + 32 <= bytes; i += 32) {
        for (int q = 0; q < 4; ++q) {
            uint64_t w;
            std::memcpy(&w, row + i + 8 * q, sizeof w);
            h[q] = (h[q] ^ w) * kMul;
            h[q] ^= h[q] >> 29;
        }
    }
    for (; i < bytes; ++i) h[0] = ((h[0] ^ row[i]) * kMul) ^ (h[0] >> 31);
    uint64_t out = h[0];
    for (int q = 1; q < 4; ++q) out = ((out ^ h[q]) * kMul) ^ (out >> 27);
    return out;
}

// Groups the first `count` rows: group[x] = the rank (by first appearance) of x's row among the
// distinct rows, first[g] = the first object of group g. Returns the number of distinct rows, or
// -1 as soon as there would be more than `limit`.
int64_t group_rows(const uint8_t* labels, int64_t row_bytes, const uint64_t* hash, int64_t count,
                   int64_t limit, int64_t* group, std::vector<int64_t>& first) {
    size_t cap = 16;
    while (cap < 2 * static_cast<size_t>(count)) cap <<= 1;
    std::vector<int64_t> slot(cap, -1);
    first.clear();
    const auto bytes = static_cast<size_t>(row_bytes);
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
            if (hash[y] == hash[x] && std::memcmp(labels + y * row_bytes, labels + x * row_bytes, bytes) == 0) {
                group[x] = g;
                break;
            }
            p = (p + 1) & (cap - 1);
        }
    }
    return static_cast<int64_t>(first.size());
}

}  // namespace

Engine::Engine(const MixedRows& rows, const Shape& sh, int64_t kc, int n_threads)
    : rows_(rows), sh_(sh), slots_(rows.offsets, sh.r),
      lookup_(sh.d == 0 && sh.r > 0 ? lookup_kernel(current_variant(), rows.label_bytes) : nullptr), kc_(kc),
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
      scaled_(rows.row_scale != nullptr), mismatch_(equal_weight_mismatch(rows, sh)) {}

// Groups objects with identical label rows (see row_hash) when that pays: afterwards every
// pass computes the costs of the distinct rows only. Labels must have been validated. For
// engines that run several passes over the same rows (lloyd, kmeanspp).
void Engine::group_identical_rows() {
    const int64_t n = sh_.n, r = sh_.r;
    if (lookup_ == nullptr || n < kDedupMinRows || !grouping_on.load(std::memory_order_relaxed)) return;
    const auto* labels = static_cast<const uint8_t*>(rows_.labels);
    const int64_t rb = r * rows_.label_bytes;  // bytes per row of codes
    std::vector<uint64_t> hash(static_cast<size_t>(n));
    std::vector<int64_t> group(static_cast<size_t>(n)), first;
    const int64_t sample = std::min(n, kDedupSample);
    for (int64_t x = 0; x < sample; ++x) hash[static_cast<size_t>(x)] = row_hash(labels + x * rb, rb);
    if (group_rows(labels, rb, hash.data(), sample, sample / kDedupMaxShare, group.data(), first) < 0) {
        return;
    }
    for_each_chunk(n - sample, nt_, [&](int64_t, int64_t start, int64_t stop) {
        for (int64_t x = sample + start; x < sample + stop; ++x) {
            hash[static_cast<size_t>(x)] = row_hash(labels + x * rb, rb);
        }
    });
    const int64_t m = group_rows(labels, rb, hash.data(), n, n / kDedupMaxShare, group.data(), first);
    if (m < 0) return;
    group_.swap(group);
    distinct_labels_.resize(static_cast<size_t>(m * rb));
    for (int64_t g = 0; g < m; ++g) {
        const int64_t x = first[static_cast<size_t>(g)];
        std::memcpy(distinct_labels_.data() + g * rb, labels + x * rb, static_cast<size_t>(rb));
    }
    distinct_costs_.assign(static_cast<size_t>(m * kp_), 0.0);
}

// Throws on the first row (lowest index, whatever the thread count) with a bad label.
void Engine::check_labels() {
    if (sh_.r == 0) return;
    FirstBad bad;
    with_label_codes(rows_.labels, rows_.label_bytes, [&](const auto* labels) {
        for_each_chunk(sh_.n, nt_, [&](int64_t, int64_t start, int64_t stop) {
            for (int64_t x = start; x < stop; ++x) {
                if (row_has_bad_label(labels + x * sh_.r, slots_.size.data(), sh_.r)) {
                    bad.report(x);
                    return;
                }
            }
        });
    });
    if (bad.found()) bad_partition_label(rows_, bad.index());
}

// Fold the categorical centres (kc x width) into the lookup table.
void Engine::build_table(const double* cat) {
    mismatch_on_ = false;
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
void Engine::build_candidate_table(const int32_t* candidate_labels) {
    mismatch_on_ = mismatch_ != nullptr;
    if (mismatch_on_) {
        // Each candidate's codes in the label matrix's layout, the missing code (every bit set in
        // each layout) past r; and the sums of m equal entries, added in turn as a lookup adds them.
        const int64_t r = sh_.r, padded = mismatch_padded(r, rows_.label_bytes);
        const auto bytes = static_cast<size_t>(rows_.label_bytes);
        candidate_codes_.assign(static_cast<size_t>(kc_ * padded) * bytes, 0xFF);
        for (int64_t t = 0; t < kc_; ++t) {
            for (int64_t i = 0; i < r; ++i) {
                const int32_t label = candidate_labels[t * r + i];
                if (label < 0) continue;
                uint8_t* code = candidate_codes_.data() + static_cast<size_t>(t * padded + i) * bytes;
                if (bytes == 1) {
                    *code = static_cast<uint8_t>(label);
                } else if (bytes == 2) {
                    const auto v = static_cast<uint16_t>(label);
                    std::memcpy(code, &v, sizeof v);
                } else {
                    std::memcpy(code, &label, sizeof label);
                }
            }
        }
        const double v = 2.0 * rows_.weights[0];
        mismatch_sums_.assign(static_cast<size_t>(r + 1), 0.0);
        for (int64_t m = 1; m <= r; ++m) {
            mismatch_sums_[static_cast<size_t>(m)] = mismatch_sums_[static_cast<size_t>(m - 1)] + v;
        }
        return;
    }
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
void Engine::count(const int32_t* assignment) {
    ensure_tally();
    zero_thread_tally();
    const int64_t d = sh_.d, r = sh_.r, width = slots_.count;
    const int64_t* slot_of = slots_.of.data();
    FirstBad bad_row;
    with_label_codes(rows_.labels, rows_.label_bytes, [&](const auto* labels) {
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
                    const auto* lab = labels + x * r;
                    if (row_has_bad_label(lab, slots_.size.data(), r)) {
                        if (bad < 0) bad = x;
                        continue;
                    }
                    if (!weighted_) {  // weighted rows are tallied per chunk by weigh_chunk
                        int64_t* row = counts + k * width;
                        for (int64_t i = 0; i < r; ++i) row[slot_of[i] + label_code(lab[i])] += 1;
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
    });
    if (bad_row.found()) bad_partition_label(rows_, bad_row.index());
}

// One Lloyd pass: the cost of every object to its current centre (summed per chunk), its
// best centre, and the change of the tally from the current to the best labels (added by
// reduce(tally, true)). Requires count() of the current labels before the first pass.
// Fusing the tally here saves a separate contingency pass over the n x r label matrix.
double Engine::lloyd_pass(const double* dense, const int32_t* labels, int32_t* best,
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
double Engine::cost_pass(const double* dense, const int32_t* given, int32_t* best, double* costs) {
    distinct_costs();
    dispatch_lanes(kq_, [&](auto tag) {
        cost_pass_impl<decltype(tag)::value>(dense, given, best, costs);
    });
    return chunk_sum(0);
}

// k-means++: dist[t][x] = min(closest[x], D^2(x, candidate t)) (closest null = +inf) and
// potentials[t] = sum over x of dist[t][x] in chunk order.
void Engine::candidate_pass(const double* dense, const double* closest, double* dist,
                    double* potentials) {
    distinct_costs();
    dispatch_lanes(kq_, [&](auto tag) {
        candidate_pass_impl<decltype(tag)::value>(dense, closest, dist);
    });
    for (int64_t t = 0; t < kc_; ++t) potentials[t] = chunk_sum(t);
}

// Every chunk's partials of the first `lanes` centres of the last pass, chunk-major
// (out: chunks x lanes).
void Engine::copy_chunk_values(int64_t lanes, double* out) const {
    for (int64_t c = 0; c < chunks_; ++c) {
        for (int64_t t = 0; t < lanes; ++t) out[c * lanes + t] = chunk_value(c, t);
    }
}

// Per-thread counts (of count()) or their changes (of lloyd_pass(), with `update`) into out.
// Integer counts are exact in any order; feature sums are added chunk by chunk in order.
void Engine::reduce(Tally& out, bool update) const {
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

inline Engine::Column Engine::column(int64_t k, int64_t i) {
    return Column{table_base_ + slots_.of[static_cast<size_t>(i)] * kq_ + k / kLane, kq_,
                  k % kLane};
}

// The lookup sums of every distinct row (grouped engines only), before a pass reads them.
void Engine::distinct_costs() {
    if (group_.empty()) return;
    const int64_t r = sh_.r, kp = kp_;
    const auto m = static_cast<int64_t>(distinct_costs_.size()) / kp;
    const int64_t rows = kGroupedBlockRows;
    const int64_t blocks = (m + rows - 1) / rows;
    const uint8_t* labels = distinct_labels_.data();
    const int64_t rb = r * rows_.label_bytes;
    double* out = distinct_costs_.data();
    (void)nt_;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(team_size(nt_, blocks))
#endif
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t g0 = b * rows, g1 = std::min(m, g0 + rows);
        row_costs(labels + g0 * rb, g1 - g0, out + g0 * kp);
    }
}

inline void Engine::row_costs(const uint8_t* labels, int64_t count, double* out) const {
    const int64_t r = sh_.r;
    if (mismatch_on_) {
        mismatch_(labels, r, count, candidate_codes_.data(), mismatch_padded(r, rows_.label_bytes), kc_,
                  mismatch_sums_.data(), kp_, out);
    } else {
        lookup_(labels, r, count, slots_.of.data(), reinterpret_cast<const double*>(table_base_), kp_,
                group_of_, out);
    }
}

void Engine::clear_table() {
    for (Lanes& row : table_) std::memset(&row, 0, sizeof(Lanes));
}

void Engine::ensure_tally() {
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

inline double Engine::object_weight(int64_t x) const {
    return rows_.object_weights != nullptr ? rows_.object_weights[x] : 1.0;
}

// Chunk c's weighted tally (label counts by w_x s_x, masses, dense sums by w_x) of the
// labels in `assignment` (-1: the row of objects in no cluster), recomputed from scratch.
// Labels are valid here (count() checks the chunk first; a Lloyd pass follows a count()).
void Engine::weigh_chunk(int64_t c, int64_t start, int64_t stop, const int32_t* assignment) {
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
            double* row = counts + k * width;
            with_label_codes(rows_.labels, rows_.label_bytes, [&](const auto* labels) {
                const auto* lab = labels + x * r;
                for (int64_t i = 0; i < r; ++i) row[slot_of[i] + label_code(lab[i])] += ws;
            });
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
void Engine::build_scaled_table(const double* cat) {
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
    with_label_codes(rows_.labels, rows_.label_bytes, [&](const auto* labels) {
        for (int64_t x = 0; x < sh_.n; ++x) {
            const auto* lab = labels + x * sh_.r;
            double labelled = 0.0;
            for (int64_t i = 0; i < sh_.r; ++i) {
                if (label_code(lab[i]) >= 0) labelled += rows_.weights[i];
            }
            const double s = rows_.row_scale[x];
            row_norm_[static_cast<size_t>(x)] = s * s * labelled;
        }
    });
}

// Scaled rows: the table gave sum_i -2 w_i m[L[x,i]] per centre; complete the costs.
inline void Engine::finish_costs(int64_t x, double* acc) const {
    if (!scaled_) return;
    const double s = rows_.row_scale[x], q = row_norm_[static_cast<size_t>(x)];
    for (int64_t k = 0; k < kc_; ++k) acc[k] = s * acc[k] + centre_norm_[static_cast<size_t>(k)] + q;
}

void Engine::zero_thread_tally() {
    std::fill(thread_counts_.begin(), thread_counts_.end(), 0);
    std::fill(thread_sizes_.begin(), thread_sizes_.end(), 0);
}

inline void Engine::add_row(int64_t x, double* sums) const {
    const double* xr = rows_.X + x * sh_.d;
    for (int64_t j = 0; j < sh_.d; ++j) sums[j] += xr[j];
}

inline double Engine::chunk_sum(int64_t lane) const {
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
void Engine::each_cost(int64_t start, int64_t stop, int tid, const double* dense, Each&& each) {
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
        for (int64_t x0 = start; x0 < stop; x0 += call_rows_) {
            const int64_t count = std::min(call_rows_, stop - x0);
            row_costs(static_cast<const uint8_t*>(rows_.labels) + x0 * r * rows_.label_bytes, count, block);
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
    with_label_codes(rows_.labels, rows_.label_bytes, [&](const auto* labels) {
        for (int64_t x = start; x < stop; ++x) {
            object_costs<KQ>(rows_, labels, x, kc_, kq, slot_of, dense, table, acc, lanes);
            finish_costs(x, acc);
            each(x, acc);
        }
    });
}

template <int KQ>
void Engine::lloyd_pass_impl(const double* dense, const int32_t* labels, int32_t* best,
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
            int64_t* from = counts + cur * width;
            int64_t* to = counts + b * width;
            with_label_codes(rows_.labels, rows_.label_bytes, [&](const auto* labels) {
                const auto* lab = labels + x * r;
                for (int64_t i = 0; i < r; ++i) {
                    const int64_t slot = slot_of[i] + label_code(lab[i]);
                    from[slot] -= 1;
                    to[slot] += 1;
                }
            });
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
void Engine::cost_pass_impl(const double* dense, const int32_t* given, int32_t* best, double* costs) {
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
void Engine::candidate_pass_impl(const double* dense, const double* closest, double* dist) {
    const int64_t n = sh_.n, kc = kc_;
    if (sh_.r == 0 && !weighted_) {
        // Dense rows only (the k-means generators' seeding): each cost through the operations of
        // squared_distance in the same order (times dense_weight, as object_costs gives it), by
        // the variant's tiles of rows and candidates (dense_costs_kernel) or, without vector
        // extensions, four candidates at a time, each in its own register.
        const int64_t d = sh_.d;
        const double weight = rows_.dense_weight;
        const DenseCosts kernel = dense_costs_kernel(current_variant());
        if (kernel != nullptr) {
            // the candidates by feature (d x kt, zeros past kc) for the variant's kernel, which
            // sums the same squares in the same order for a block of rows at a time
            const int64_t kt = (kc + 7) / 8 * 8;
            std::vector<double> by_feature(static_cast<size_t>(d * kt), 0.0);
            for (int64_t t = 0; t < kc; ++t) {
                for (int64_t j = 0; j < d; ++j) by_feature[static_cast<size_t>(j * kt + t)] = dense[t * d + j];
            }
            for_each_chunk_with(
                sh_.n, nt_, [&]() { return std::vector<double>(static_cast<size_t>(kDenseCostRows * kt)); },
                [&](std::vector<double>& block, int64_t c, int64_t start, int64_t stop) {
                    double* potential = chunk_value_.data() + c * kc;
                    std::fill(potential, potential + kc, 0.0);
                    for (int64_t x0 = start; x0 < stop; x0 += kDenseCostRows) {
                        const int64_t count = std::min(kDenseCostRows, stop - x0);
                        kernel(rows_.X + x0 * d, count, d, by_feature.data(), kt, block.data());
                        for (int64_t b = 0; b < count; ++b) {
                            const int64_t x = x0 + b;
                            const double* acc = block.data() + b * kt;
                            for (int64_t t = 0; t < kc; ++t) {
                                const double cost = weight * acc[t];
                                const double v = closest != nullptr ? std::min(closest[x], cost) : cost;
                                dist[t * n + x] = v;
                                potential[t] += v;
                            }
                        }
                    }
                });
            return;
        }
        for_each_chunk(sh_.n, nt_, [&](int64_t c, int64_t start, int64_t stop) {
            double* potential = chunk_value_.data() + c * kc;
            std::fill(potential, potential + kc, 0.0);
            double* acc = scratch_.data() + thread_id() * kp_;
            for (int64_t x = start; x < stop; ++x) {
                const double* __restrict xr = rows_.X + x * d;
                int64_t t = 0;
                for (; t + 4 <= kc; t += 4) {
                    const double* __restrict c0 = dense + t * d;
                    const double* __restrict c1 = c0 + d;
                    const double* __restrict c2 = c1 + d;
                    const double* __restrict c3 = c2 + d;
                    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
                    for (int64_t j = 0; j < d; ++j) {
                        const double v = xr[j];
                        const double e0 = v - c0[j], e1 = v - c1[j], e2 = v - c2[j], e3 = v - c3[j];
                        s0 += e0 * e0;
                        s1 += e1 * e1;
                        s2 += e2 * e2;
                        s3 += e3 * e3;
                    }
                    acc[t] = s0, acc[t + 1] = s1, acc[t + 2] = s2, acc[t + 3] = s3;
                }
                for (; t < kc; ++t) acc[t] = squared_distance(xr, dense + t * d, d);
                for (t = 0; t < kc; ++t) {
                    const double cost = weight * acc[t];
                    const double v = closest != nullptr ? std::min(closest[x], cost) : cost;
                    dist[t * n + x] = v;
                    potential[t] += v;
                }
            }
        });
        return;
    }
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

}  // namespace kmeans_detail

using namespace kmeans_detail;

void kmeans_group_rows(bool on) { grouping_on.store(on, std::memory_order_relaxed); }

}  // namespace cclust
