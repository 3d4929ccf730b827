#include "cclust/crowd_agreement.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cclust/lookup.hpp"
#include "cclust/parallel.hpp"

namespace cclust {

namespace {

// Fills the n x width matrix `out` row by row: row i is zeroed, then body(i, row) adds into it.
// Rows are independent tasks handed out dynamically (their costs differ widely), so nothing in
// the result depends on n_threads.
template <class Body>
void fill_rows(int64_t n, int64_t width, double* out, int n_threads, Body&& body) {
    const int threads = n_threads < 1 ? 1 : n_threads;
    (void)threads;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
#endif
    for (int64_t i = 0; i < n; ++i) {
        double* row = out + i * width;
        std::fill(row, row + width, 0.0);
        body(i, row);
    }
}

}  // namespace

void sact_sums(const int64_t* indptr, const int32_t* indices, const double* data, int64_t n_c,
               const double* weight, double* out, int n_threads) {
    if (n_c < 0) throw std::invalid_argument("n_c must be non-negative");
    for (int64_t a = 0; a < n_c; ++a) {
        if (indptr[a + 1] < indptr[a]) throw std::invalid_argument("indptr must be non-decreasing");
        for (int64_t p = indptr[a]; p < indptr[a + 1]; ++p) {
            if (indices[p] < 0 || indices[p] >= n_c || (p > indptr[a] && indices[p] <= indices[p - 1])) {
                throw std::invalid_argument("row " + std::to_string(a) +
                                            " of the Jaccard matrix has unsorted or out-of-range columns");
            }
        }
    }
    // A row costs the sum of its neighbours' degrees.
    fill_rows(n_c, n_c, out, n_threads, [&](int64_t a, double* row) {
        for (int64_t p = indptr[a]; p < indptr[a + 1]; ++p) {
            const int64_t k = indices[p];
            // J is symmetric with identically computed entries, so J[k, a] is J[a, k] = data[p].
            const double to_a = data[p];
            const double w = weight[k];
            for (int64_t q = indptr[k]; q < indptr[k + 1]; ++q) {
                const double to_b = data[q];
                row[indices[q]] += w * (to_a < to_b ? to_a : to_b);
            }
        }
    });
}

namespace {

template <class T>
void weighted_coassociation_typed(const T* codes, int64_t n, int64_t r, const int64_t* rows, int64_t m,
                                  const int64_t* sizes, const double* share, double* out, int n_threads) {
    // Members of every cluster, in increasing row order: offsets per partition, then per cluster.
    std::vector<int64_t> first(static_cast<size_t>(r) + 1, 0);
    for (int64_t j = 0; j < r; ++j) {
        if (sizes[j] < 1) throw std::invalid_argument("every partition needs at least one cluster");
        first[static_cast<size_t>(j) + 1] = first[static_cast<size_t>(j)] + sizes[j];
    }
    for (int64_t x = 0; x < m; ++x) {
        if (rows[x] < 0 || rows[x] >= n) {
            throw std::invalid_argument("row " + std::to_string(rows[x]) + " is outside 0.." + std::to_string(n - 1));
        }
    }
    const auto label = [&](int64_t x, int64_t j) { return label_code(codes[rows[x] * r + j]); };
    const int64_t n_clusters = first[static_cast<size_t>(r)];
    std::vector<int64_t> start(static_cast<size_t>(n_clusters) + 1, 0);
    for (int64_t x = 0; x < m; ++x) {
        for (int64_t j = 0; j < r; ++j) {
            const int64_t l = label(x, j);
            if (l < 0 || l >= sizes[j]) {
                throw std::invalid_argument("label " + std::to_string(stored_code(codes[rows[x] * r + j])) +
                                            " of row " + std::to_string(rows[x]) +
                                            " in partition " + std::to_string(j) + " is outside 0.." +
                                            std::to_string(sizes[j] - 1));
            }
            ++start[static_cast<size_t>(first[static_cast<size_t>(j)] + l) + 1];
        }
    }
    for (int64_t c = 0; c < n_clusters; ++c) start[static_cast<size_t>(c) + 1] += start[static_cast<size_t>(c)];
    std::vector<int64_t> members(static_cast<size_t>(m * r));
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int64_t x = 0; x < m; ++x) {
        for (int64_t j = 0; j < r; ++j) {
            const int64_t c = first[static_cast<size_t>(j)] + label(x, j);
            members[static_cast<size_t>(fill[static_cast<size_t>(c)]++)] = x;
        }
    }
    fill_rows(m, m, out, n_threads, [&](int64_t x, double* row) {
        for (int64_t j = 0; j < r; ++j) {
            const int64_t c = first[static_cast<size_t>(j)] + label(x, j);
            const double s = share[j];
            for (int64_t p = start[static_cast<size_t>(c)]; p < start[static_cast<size_t>(c) + 1]; ++p) {
                row[members[static_cast<size_t>(p)]] += s;
            }
        }
    });
}

}  // namespace

void weighted_coassociation_rows(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                                 const int64_t* rows, int64_t m, const int64_t* sizes, const double* share,
                                 double* out, int n_threads) {
    if (n < 0 || m < 0 || r < 0) throw std::invalid_argument("n, m and r must be non-negative");
    with_label_codes(labels, label_bytes, [&](const auto* codes) {
        weighted_coassociation_typed(codes, n, r, rows, m, sizes, share, out, n_threads);
    });
}

}  // namespace cclust
