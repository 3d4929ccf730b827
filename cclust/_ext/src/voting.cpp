#include "cclust/voting.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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

// Accumulate score(x, .) into acc (n_clusters values); returns the first bad column or -1.
inline int64_t accumulate(const int32_t* lab, int64_t r, const int64_t* offsets,
                          const double* table, int32_t n_clusters, double* acc) {
    std::fill(acc, acc + n_clusters, 0.0);
    for (int64_t j = 0; j < r; ++j) {
        const int32_t l = lab[j];
        if (l < 0) {
            if (l != -1) return j;
            continue;
        }
        const int64_t row = offsets[j] + l;
        if (row >= offsets[j + 1]) return j;
        const double* t = table + row * n_clusters;
        for (int32_t k = 0; k < n_clusters; ++k) acc[k] += t[k];
    }
    return -1;
}

[[noreturn]] void bad_label(int64_t x, int64_t j, int32_t value, int64_t bound) {
    throw std::invalid_argument("label " + std::to_string(value) + " of object " + std::to_string(x) +
                                " in partition " + std::to_string(j) + " is outside 0.." +
                                std::to_string(bound - 1) + " (or -1 for missing)");
}

}  // namespace

void vote_scores(const int32_t* labels, int64_t n, int64_t r, const int64_t* offsets,
                 const double* table, int32_t n_clusters, double* out, int n_threads) {
    check_sizes(n, r, offsets, n_clusters);
    if (n_threads < 1) n_threads = 1;
    const int64_t chunks = n_chunks(n);
    int64_t bad_x = -1;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(n_threads)
#endif
    for (int64_t c = 0; c < chunks; ++c) {
        const int64_t stop = std::min(n, (c + 1) * kChunk);
        for (int64_t x = c * kChunk; x < stop; ++x) {
            if (accumulate(labels + x * r, r, offsets, table, n_clusters, out + x * n_clusters) >= 0) {
#if defined(_OPENMP)
#pragma omp critical
#endif
                if (bad_x < 0 || x < bad_x) bad_x = x;
            }
        }
    }
    if (bad_x >= 0) {
        std::vector<double> acc(static_cast<size_t>(n_clusters));
        const int64_t j = accumulate(labels + bad_x * r, r, offsets, table, n_clusters, acc.data());
        bad_label(bad_x, j, labels[bad_x * r + j], offsets[j + 1] - offsets[j]);
    }
}

namespace {

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

}  // namespace

void vote_argmax_sparse(const int32_t* labels, int64_t n, int64_t r, const int64_t* offsets,
                        const int64_t* indptr, const int32_t* indices, const double* values,
                        int32_t n_clusters, const uint8_t* allowed, int32_t* assignment,
                        double* best, int n_threads) {
    check_sizes(n, r, offsets, n_clusters);
    if (std::none_of(allowed, allowed + n_clusters, [](uint8_t a) { return a != 0; })) {
        throw std::invalid_argument("no cluster is allowed");
    }
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
    if (n_threads < 1) n_threads = 1;
    const int64_t chunks = n_chunks(n);
    int64_t bad_x = -1;
    int64_t bad_j = -1;
#if defined(_OPENMP)
#pragma omp parallel num_threads(n_threads)
#endif
    {
        std::vector<double> acc(static_cast<size_t>(n_clusters));
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
        for (int64_t c = 0; c < chunks; ++c) {
            const int64_t stop = std::min(n, (c + 1) * kChunk);
            for (int64_t x = c * kChunk; x < stop; ++x) {
                const int32_t* lab = labels + x * r;
                std::fill(acc.begin(), acc.end(), 0.0);
                int64_t bad = -1;
                for (int64_t j = 0; j < r; ++j) {
                    const int32_t l = lab[j];
                    if (l < 0) {
                        if (l != -1) { bad = j; break; }
                        continue;
                    }
                    const int64_t row = offsets[j] + l;
                    if (row >= offsets[j + 1]) { bad = j; break; }
                    for (int64_t e = indptr[row]; e < indptr[row + 1]; ++e) acc[indices[e]] += values[e];
                }
                if (bad >= 0) {
#if defined(_OPENMP)
#pragma omp critical
#endif
                    if (bad_x < 0 || x < bad_x) { bad_x = x; bad_j = bad; }
                    assignment[x] = -1;
                    best[x] = 0.0;
                    continue;
                }
                pick(acc.data(), n_clusters, allowed, assignment + x, best + x);
            }
        }
    }
    if (bad_x >= 0) bad_label(bad_x, bad_j, labels[bad_x * r + bad_j], offsets[bad_j + 1] - offsets[bad_j]);
}

void vote_argmax(const int32_t* labels, int64_t n, int64_t r, const int64_t* offsets,
                 const double* table, int32_t n_clusters, const uint8_t* allowed,
                 int32_t* assignment, double* best, int n_threads) {
    check_sizes(n, r, offsets, n_clusters);
    if (std::none_of(allowed, allowed + n_clusters, [](uint8_t a) { return a != 0; })) {
        throw std::invalid_argument("no cluster is allowed");
    }
    if (n_threads < 1) n_threads = 1;
    const int64_t chunks = n_chunks(n);
    int64_t bad_x = -1;
#if defined(_OPENMP)
#pragma omp parallel num_threads(n_threads)
#endif
    {
        std::vector<double> acc(static_cast<size_t>(n_clusters));
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
        for (int64_t c = 0; c < chunks; ++c) {
            const int64_t stop = std::min(n, (c + 1) * kChunk);
            for (int64_t x = c * kChunk; x < stop; ++x) {
                if (accumulate(labels + x * r, r, offsets, table, n_clusters, acc.data()) >= 0) {
#if defined(_OPENMP)
#pragma omp critical
#endif
                    if (bad_x < 0 || x < bad_x) bad_x = x;
                    assignment[x] = -1;
                    best[x] = 0.0;
                    continue;
                }
                pick(acc.data(), n_clusters, allowed, assignment + x, best + x);
            }
        }
    }
    if (bad_x >= 0) {
        std::vector<double> acc(static_cast<size_t>(n_clusters));
        const int64_t j = accumulate(labels + bad_x * r, r, offsets, table, n_clusters, acc.data());
        bad_label(bad_x, j, labels[bad_x * r + j], offsets[j + 1] - offsets[j]);
    }
}

void mode_argmax(const int32_t* labels, int64_t n, int64_t r, const int32_t* modes,
                 int32_t n_clusters, const uint8_t* allowed, int32_t* assignment, int32_t* matches,
                 int n_threads) {
    if (n < 0 || r < 0) throw std::invalid_argument("n and r must be non-negative");
    if (n_clusters < 1) throw std::invalid_argument("n_clusters must be at least 1");
    if (std::none_of(allowed, allowed + n_clusters, [](uint8_t a) { return a != 0; })) {
        throw std::invalid_argument("no cluster is allowed");
    }
    if (n_threads < 1) n_threads = 1;
    const int64_t chunks = n_chunks(n);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(n_threads)
#endif
    for (int64_t c = 0; c < chunks; ++c) {
        const int64_t stop = std::min(n, (c + 1) * kChunk);
        for (int64_t x = c * kChunk; x < stop; ++x) {
            const int32_t* lab = labels + x * r;
            int32_t arg = -1;
            int32_t top = -1;
            for (int32_t k = 0; k < n_clusters; ++k) {
                if (!allowed[k]) continue;
                const int32_t* mode = modes + static_cast<int64_t>(k) * r;
                int32_t count = 0;
                for (int64_t j = 0; j < r; ++j) count += (lab[j] == mode[j]) ? 1 : 0;
                if (count > top) {
                    top = count;
                    arg = k;
                }
            }
            assignment[x] = arg;
            matches[x] = top;
        }
    }
}

void first_appearance(const int32_t* labels, int64_t n, int64_t r, const int64_t* offsets,
                      int32_t* out) {
    check_sizes(n, r, offsets, 1);
    std::vector<int32_t> rank(static_cast<size_t>(offsets[r]), -1);
    std::vector<int32_t> next(static_cast<size_t>(r), 0);
    for (int64_t x = 0; x < n; ++x) {
        const int32_t* lab = labels + x * r;
        int32_t* dst = out + x * r;
        for (int64_t j = 0; j < r; ++j) {
            const int32_t l = lab[j];
            if (l < 0) {
                if (l != -1) bad_label(x, j, l, offsets[j + 1] - offsets[j]);
                dst[j] = -1;
                continue;
            }
            if (l >= offsets[j + 1] - offsets[j]) bad_label(x, j, l, offsets[j + 1] - offsets[j]);
            int32_t& slot = rank[static_cast<size_t>(offsets[j] + l)];
            if (slot < 0) slot = next[static_cast<size_t>(j)]++;
            dst[j] = slot;
        }
    }
}

}  // namespace cclust
