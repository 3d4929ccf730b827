#include "cclust/uspec.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include <cmath>

#include "cclust/kmeans.hpp"  // squared_distance
#include "cclust/parallel.hpp"

namespace cclust {

void nearest_representatives(const double* X, int64_t n, int64_t d, const double* R, int64_t p,
                             const double* centres, int64_t z, const int64_t* member_start,
                             const int64_t* members, const int64_t* neighborhood, int64_t width,
                             int64_t k, int64_t* neighbors, double* distances, int n_threads) {
    if (n < 0 || d < 1 || p < 1 || z < 1 || width < 1 || width > p || k < 1 || k > width)
        throw std::invalid_argument("nearest_representatives: inconsistent sizes");
    for (int64_t c = 0; c < z; ++c) {
        if (member_start[c] >= member_start[c + 1])
            throw std::invalid_argument("nearest_representatives: a rep-cluster has no member");
    }
    for (int64_t i = 0; i < member_start[z]; ++i) {
        if (members[i] < 0 || members[i] >= p)
            throw std::invalid_argument("nearest_representatives: member index out of range");
    }
    for (int64_t i = 0; i < p * width; ++i) {
        if (neighborhood[i] < 0 || neighborhood[i] >= p)
            throw std::invalid_argument("nearest_representatives: neighborhood index out of range");
    }
    using Pair = std::pair<double, int64_t>;  // (squared distance, representative): the order
    for_each_chunk_with(
        n, n_threads, [&]() { return std::vector<Pair>(static_cast<size_t>(width)); },
        [&](std::vector<Pair>& scratch, int64_t, int64_t start, int64_t stop) {
            for (int64_t x = start; x < stop; ++x) {
                const double* row = X + x * d;
                int64_t best_c = 0;
                double best = squared_distance(row, centres, d);
                for (int64_t c = 1; c < z; ++c) {
                    const double s = squared_distance(row, centres + c * d, d);
                    if (s < best) best = s, best_c = c;
                }
                int64_t l = members[member_start[best_c]];
                best = squared_distance(row, R + l * d, d);
                for (int64_t i = member_start[best_c] + 1; i < member_start[best_c + 1]; ++i) {
                    const double s = squared_distance(row, R + members[i] * d, d);
                    if (s < best) best = s, l = members[i];
                }
                const int64_t* candidates = neighborhood + l * width;
                for (int64_t i = 0; i < width; ++i) {
                    scratch[static_cast<size_t>(i)] =
                        Pair(squared_distance(row, R + candidates[i] * d, d), candidates[i]);
                }
                std::partial_sort(scratch.begin(), scratch.begin() + k, scratch.begin() + width);
                for (int64_t i = 0; i < k; ++i) {
                    neighbors[x * k + i] = scratch[static_cast<size_t>(i)].second;
                    distances[x * k + i] = std::sqrt(scratch[static_cast<size_t>(i)].first);
                }
            }
        });
}

void cross_sums(const int64_t* indptr, const int64_t* indices, const double* values,
                const double* row_scale, int64_t n_rows, int64_t p, double* W, double* col_degree,
                double* row_degree) {
    if (n_rows < 0 || p < 1) throw std::invalid_argument("cross_sums: inconsistent sizes");
    if (indptr[0] != 0) throw std::invalid_argument("cross_sums: indptr must start at 0");
    for (int64_t x = 0; x < n_rows; ++x) {
        if (indptr[x + 1] < indptr[x]) throw std::invalid_argument("cross_sums: indptr must not decrease");
    }
    for (int64_t e = 0; e < indptr[n_rows]; ++e) {
        if (indices[e] < 0 || indices[e] >= p) throw std::invalid_argument("cross_sums: column index out of range");
    }
    for (int64_t x = 0; x < n_rows; ++x) {
        double d = 0.0;
        for (int64_t e = indptr[x]; e < indptr[x + 1]; ++e) d += values[e];
        if (d == 0.0) d = 1e-10;
        row_degree[x] = d;
        const double scale = row_scale == nullptr ? 1.0 / d : row_scale[x];
        for (int64_t e = indptr[x]; e < indptr[x + 1]; ++e) {
            const int64_t a = indices[e];
            const double va = values[e] * scale;
            col_degree[a] += values[e];
            double* row = W + a * p;
            for (int64_t f = indptr[x]; f < indptr[x + 1]; ++f) row[indices[f]] += va * values[f];
        }
    }
}

}  // namespace cclust
