#include "cclust/voting.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cclust/lookup.hpp"
#include "cclust/parallel.hpp"

namespace cclust {

namespace {

void check_sizes(int64_t n, int64_t r, const int64_t* offsets, int32_t n_clusters) {
    if (n < 0 || r < 0) throw std::invalid_argument("n and r must be non-negative");
    if (n_clusters < 1) throw std::invalid_argument("n_clusters must be at least 1");
    for (int64_t j = 0; j < r; ++j) {
        if (offsets[j + 1] < offsets[j]) throw std::invalid_argument("offsets must be non-decreasing");
    }
}

void check_allowed(const uint8_t* allowed, int32_t n_clusters) {
    if (std::none_of(allowed, allowed + n_clusters, [](uint8_t a) { return a != 0; })) {
        throw std::invalid_argument("no cluster is allowed");
    }
}

[[noreturn]] void bad_label(int64_t x, int64_t j, int64_t value, int64_t bound) {
    throw std::invalid_argument("label " + std::to_string(value) + " of object " + std::to_string(x) +
                                " in partition " + std::to_string(j) + " is outside 0.." +
                                std::to_string(bound - 1) + " (or -1 for missing)");
}

// Throws for the lowest object any thread flagged, naming its first bad label.
template <class T>
void throw_if_bad(const FirstBad& bad, const T* labels, int64_t r, const Slots& slots) {
    if (!bad.found()) return;
    const int64_t x = bad.index();
    const int64_t j = first_bad_label(labels + x * r, slots.size.data(), r);
    bad_label(x, j, stored_code(labels[x * r + j]), slots.size[static_cast<size_t>(j)]);
}

// Best allowed cluster (lowest index on ties) of one object's scores.
inline void pick(const double* acc, int32_t n_clusters, const uint8_t* allowed, int32_t* arg_out,
                 double* best_out) {
    int32_t arg = -1;
    double top = 0.0;
    for (int32_t k = 0; k < n_clusters; ++k) {
        if (allowed[k] && (arg < 0 || acc[k] > top)) {
            arg = k;
            top = acc[k];
        }
    }
    *arg_out = arg;
    *best_out = top;
}

// score(x, .) of every object through the dense lookup (lookup.hpp), handed to
// use(x, acc) on the thread that computed it; rows with a bad label are reported to `bad` and
// skipped (use(x, nullptr)).
template <class T, class Use>
void dense_pass(const T* labels, int64_t n, int64_t r, const int64_t* offsets, const double* table,
                int32_t n_clusters, const Slots& slots, FirstBad& bad, int n_threads, Use&& use) {
    const int64_t kq = lanes_for(n_clusters);
    const std::vector<Lanes> lanes = slot_table(table, offsets, r, n_clusters, slots);
    struct Scratch {
        std::vector<double> acc;
        std::vector<Lanes> lanes;
    };
    dispatch_lanes(kq, [&](auto tag) {
        constexpr int KQ = decltype(tag)::value;
        for_each_chunk_with(
            n, n_threads,
            [&] {
                return Scratch{std::vector<double>(static_cast<size_t>(kLane * kq)),
                               std::vector<Lanes>(static_cast<size_t>(kq))};
            },
            [&](Scratch& s, int64_t, int64_t start, int64_t stop) {
                int64_t first_bad = -1;
                for (int64_t x = start; x < stop; ++x) {
                    const T* lab = labels + x * r;
                    if (row_has_bad_label(lab, slots.size.data(), r)) {
                        if (first_bad < 0) first_bad = x;
                        use(x, nullptr);
                        continue;
                    }
                    label_row_sums<KQ>(lab, r, slots.of.data(), lanes.data(), kq, s.acc.data(), s.lanes.data());
                    use(x, s.acc.data());
                }
                if (first_bad >= 0) bad.report(first_bad);
            });
    });
}

}  // namespace

void vote_scores(const void* codes, int32_t label_bytes, int64_t n, int64_t r, const int64_t* offsets,
                 const double* table, int32_t n_clusters, double* out, int n_threads) {
    check_sizes(n, r, offsets, n_clusters);
    const Slots slots(offsets, r);
    FirstBad bad;
    with_label_codes(codes, label_bytes, [&](const auto* labels) {
        dense_pass(labels, n, r, offsets, table, n_clusters, slots, bad, n_threads, [&](int64_t x, const double* acc) {
            if (acc != nullptr) std::copy(acc, acc + n_clusters, out + x * n_clusters);
        });
        throw_if_bad(bad, labels, r, slots);
    });
}

void vote_argmax(const void* codes, int32_t label_bytes, int64_t n, int64_t r, const int64_t* offsets,
                 const double* table, int32_t n_clusters, const uint8_t* allowed,
                 int32_t* assignment, double* best, int n_threads) {
    check_sizes(n, r, offsets, n_clusters);
    check_allowed(allowed, n_clusters);
    const Slots slots(offsets, r);
    FirstBad bad;
    with_label_codes(codes, label_bytes, [&](const auto* labels) {
        dense_pass(labels, n, r, offsets, table, n_clusters, slots, bad, n_threads, [&](int64_t x, const double* acc) {
            if (acc == nullptr) {
                assignment[x] = -1;
                best[x] = 0.0;
                return;
            }
            pick(acc, n_clusters, allowed, assignment + x, best + x);
        });
        throw_if_bad(bad, labels, r, slots);
    });
}

void vote_argmax_sparse(const void* codes, int32_t label_bytes, int64_t n, int64_t r, const int64_t* offsets,
                        const int64_t* indptr, const int32_t* indices, const double* values,
                        int32_t n_clusters, const uint8_t* allowed, int32_t* assignment,
                        double* best, int n_threads) {
    check_sizes(n, r, offsets, n_clusters);
    check_allowed(allowed, n_clusters);
    const int64_t width = offsets[r];
    for (int64_t row = 0; row < width; ++row) {
        if (indptr[row + 1] < indptr[row]) throw std::invalid_argument("indptr must be non-decreasing");
    }
    for (int64_t e = 0; e < indptr[width]; ++e) {
        if (indices[e] < 0 || indices[e] >= n_clusters) {
            throw std::invalid_argument("sparse table column " + std::to_string(indices[e]) +
                                        " is outside 0.." + std::to_string(n_clusters - 1));
        }
    }
    const Slots slots(offsets, r);
    FirstBad bad;
    with_label_codes(codes, label_bytes, [&](const auto* labels) {
    for_each_chunk_with(
        n, n_threads, [&] { return std::vector<double>(static_cast<size_t>(n_clusters)); },
        [&](std::vector<double>& acc, int64_t, int64_t start, int64_t stop) {
            int64_t first_bad = -1;
            for (int64_t x = start; x < stop; ++x) {
                const auto* lab = labels + x * r;
                if (row_has_bad_label(lab, slots.size.data(), r)) {
                    if (first_bad < 0) first_bad = x;
                    assignment[x] = -1;
                    best[x] = 0.0;
                    continue;
                }
                std::fill(acc.begin(), acc.end(), 0.0);
                add_label_rows_csr(lab, r, offsets, indptr, indices, values, acc.data());
                pick(acc.data(), n_clusters, allowed, assignment + x, best + x);
            }
            if (first_bad >= 0) bad.report(first_bad);
        });
    throw_if_bad(bad, labels, r, slots);
    });
}

void mode_argmax(const void* codes, int32_t label_bytes, int64_t n, int64_t r, const int32_t* modes,
                 int32_t n_clusters, const uint8_t* allowed, int32_t* assignment, int32_t* matches,
                 int n_threads) {
    if (n < 0 || r < 0) throw std::invalid_argument("n and r must be non-negative");
    if (n_clusters < 1) throw std::invalid_argument("n_clusters must be at least 1");
    check_allowed(allowed, n_clusters);
    with_label_codes(codes, label_bytes, [&](const auto* labels) {
    for_each_chunk(n, n_threads, [&](int64_t, int64_t start, int64_t stop) {
        for (int64_t x = start; x < stop; ++x) {
            const auto* lab = labels + x * r;
            int32_t arg = -1;
            int32_t top = -1;
            for (int32_t k = 0; k < n_clusters; ++k) {
                if (!allowed[k]) continue;
                const int32_t* mode = modes + static_cast<int64_t>(k) * r;
                int32_t count = 0;
                // Compared as int32, as the modes are: a 64-bit compare would halve the lanes
                // the loop vectorises to (and quarter them against uint8 codes).
                for (int64_t j = 0; j < r; ++j) {
                    count += (static_cast<int32_t>(label_code(lab[j])) == mode[j]) ? 1 : 0;
                }
                if (count > top) {
                    top = count;
                    arg = k;
                }
            }
            assignment[x] = arg;
            matches[x] = top;
        }
    });
    });
}

void first_appearance(const void* codes, int32_t label_bytes, int64_t n, int64_t r, const int64_t* offsets,
                      void* out) {
    check_sizes(n, r, offsets, 1);
    std::vector<int32_t> rank(static_cast<size_t>(offsets[r]), -1);
    std::vector<int32_t> next(static_cast<size_t>(r), 0);
    with_label_codes(codes, label_bytes, [&](const auto* labels) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(labels)>>;
        T* written = static_cast<T*>(out);
        for (int64_t x = 0; x < n; ++x) {
            const T* lab = labels + x * r;
            T* dst = written + x * r;
            for (int64_t j = 0; j < r; ++j) {
                const int64_t l = label_code(lab[j]);
                if (l < 0) {
                    if (l != -1) bad_label(x, j, stored_code(lab[j]), offsets[j + 1] - offsets[j]);
                    dst[j] = lab[j];  // the missing code of the layout
                    continue;
                }
                if (l >= offsets[j + 1] - offsets[j]) bad_label(x, j, stored_code(lab[j]), offsets[j + 1] - offsets[j]);
                int32_t& slot = rank[static_cast<size_t>(offsets[j] + l)];
                if (slot < 0) slot = next[static_cast<size_t>(j)]++;
                dst[j] = static_cast<T>(slot);
            }
        }
    });
}


void label_sums(const void* codes, int32_t label_bytes, int64_t n, int64_t r, const int64_t* offsets,
                const double* values, int32_t n_columns, double* out, int n_threads) {
    check_sizes(n, r, offsets, n_columns);
    const Slots slots(offsets, r);
    std::fill(out, out + offsets[r] * n_columns, 0.0);
    if (r == 0 || n == 0) return;
    // A block of partitions per task: the rows of its partitions are written by one thread
    // only, each summed over the objects in increasing order, so the sums do not depend on
    // the blocks or the threads. Each block streams the whole label matrix, so there are as few
    // blocks as threads (one pass over the codes per thread: with blocks of 8 partitions, a
    // one-column sum over 100 partitions read the codes 13 times and took twice SciPy's sparse
    // product), unless a block's output rows would outgrow a core's cache (kBlockBytes).
    constexpr double kBlockBytes = 256.0 * 1024.0;
    const int64_t threads = n_threads < 1 ? 1 : n_threads;
    const double row_bytes = static_cast<double>(offsets[r]) / static_cast<double>(r) *
                             static_cast<double>(n_columns) * sizeof(double);
    const int64_t by_cache = std::max<int64_t>(1, static_cast<int64_t>(kBlockBytes / std::max(row_bytes, 1.0)));
    const int64_t per_block = std::max<int64_t>(1, std::min<int64_t>((r + threads - 1) / threads, by_cache));
    const int64_t blocks = (r + per_block - 1) / per_block;
    with_label_codes(codes, label_bytes, [&](const auto* labels) {
        FirstBad bad;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(static_cast<int>(threads))
#endif
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t first = b * per_block;
            const int64_t last = std::min(r, first + per_block);
            int64_t first_bad = -1;
            const uint32_t* size = slots.size.data();
            if (n_columns == 1) {  // one value an object (the transfer cut's products): no inner loop
                for (int64_t x = 0; x < n; ++x) {
                    const auto* lab = labels + x * r;
                    const double v = values[x];
                    for (int64_t j = first; j < last; ++j) {
                        const uint32_t code = shifted_code(lab[j]);  // 0: missing; l + 1: label l
                        if (code - 1u >= size[j]) {                  // missing (wraps) or out of range
                            if (code != 0 && first_bad < 0) first_bad = x;
                            continue;
                        }
                        out[offsets[j] + code - 1] += v;
                    }
                }
            } else {
                for (int64_t x = 0; x < n; ++x) {
                    const auto* lab = labels + x * r;
                    const double* v = values + x * n_columns;
                    for (int64_t j = first; j < last; ++j) {
                        const uint32_t code = shifted_code(lab[j]);
                        if (code - 1u >= size[j]) {
                            if (code != 0 && first_bad < 0) first_bad = x;
                            continue;
                        }
                        double* dst = out + (offsets[j] + code - 1) * n_columns;
                        for (int32_t k = 0; k < n_columns; ++k) dst[k] += v[k];
                    }
                }
            }
            if (first_bad >= 0) bad.report(first_bad);
        }
        throw_if_bad(bad, labels, r, slots);
    });
}

}  // namespace cclust
