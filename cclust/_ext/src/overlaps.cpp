#include "cclust/overlaps.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cclust/lookup.hpp"
#include "cclust/parallel.hpp"

namespace cclust {

namespace {

template <class T>
int64_t overlaps_typed(const T* labels, int64_t n, int64_t r, const int64_t* offsets, int64_t stride,
                       const double* weights, double* row_sum, double* row_sq, int n_threads) {
    const int64_t m = (n + stride - 1) / stride;  // objects read: 0, stride, 2 stride, ...
    // Every label in range before any histogram is indexed by one.
    std::vector<uint32_t> size(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) size[i] = static_cast<uint32_t>(offsets[i + 1] - offsets[i]);
    FirstBad bad;
    for_each_chunk(m, n_threads, [&](int64_t, int64_t start, int64_t stop) {
        for (int64_t s = start; s < stop; ++s) {
            if (row_has_bad_label(labels + s * stride * r, size.data(), r)) {
                bad.report(s * stride);
                return;
            }
        }
    });
    if (bad.found()) {
        throw std::invalid_argument("a label of object " + std::to_string(bad.index()) +
                                    " lies outside its partition's clusters");
    }
    const bool sums = row_sq != nullptr;
    std::vector<double> twice_of(static_cast<size_t>(r), 0.0);
    if (sums) {
        for (int64_t j = 0; j < r; ++j) twice_of[j] = 2.0 * weights[j];
    }
    const double* twice = twice_of.data();
    std::vector<int64_t> members(static_cast<size_t>(m));
    std::vector<int64_t> first;
    int64_t entries = 0;
    const int threads = n_threads < 1 ? 1 : n_threads;
    for (int64_t i = 0; i < r; ++i) {
        const int64_t k = offsets[i + 1] - offsets[i];
        const int64_t width = offsets[r] - offsets[i];  // the clusters of partitions i..r-1
        // The objects grouped by their cluster in partition i (a counting sort; missing: none).
        first.assign(static_cast<size_t>(k + 1), 0);
        for (int64_t s = 0; s < m; ++s) {
            const int64_t l = label_code(labels[s * stride * r + i]);
            if (l >= 0) ++first[l + 1];
        }
        for (int64_t c = 0; c < k; ++c) first[c + 1] += first[c];
        {
            std::vector<int64_t> next(first.begin(), first.end() - 1);
            for (int64_t s = 0; s < m; ++s) {
                const int64_t l = label_code(labels[s * stride * r + i]);
                if (l >= 0) members[next[l]++] = s * stride;
            }
        }
        const double w_i = sums ? weights[i] : 0.0;
        // base[j]: where partition j's clusters start in the histogram of partitions i..r-1.
        std::vector<int64_t> base_of(static_cast<size_t>(r));
        for (int64_t j = i; j < r; ++j) base_of[j] = offsets[j] - offsets[i];
        const int64_t* base = base_of.data();
        int64_t found = 0;
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads) reduction(+ : found)
#endif
        {
            std::vector<int32_t> tally(static_cast<size_t>(width), 0);
#if defined(_OPENMP)
#pragma omp for schedule(dynamic, 1)
#endif
            for (int64_t c = 0; c < k; ++c) {
                const int64_t* begin = members.data() + first[c];
                const int64_t* end = members.data() + first[c + 1];
                if (begin == end) continue;
                // A cell going from 0 to 1 is a non-zero cell seen for the first time: each
                // one counted once (twice off the diagonal block, for its mirror image).
                int64_t local = 0;
                for (const int64_t* x = begin; x != end; ++x) {
                    const T* row = labels + *x * r;
                    const int64_t l0 = label_code(row[i]);
                    local += tally[l0]++ == 0;
                    int64_t fresh = 0;
                    for (int64_t j = i + 1; j < r; ++j) {
                        const int64_t l = label_code(row[j]);
                        if (l >= 0) fresh += tally[base[j] + l]++ == 0;
                    }
                    local += 2 * fresh;
                }
                found += local;
                if (sums) {
                    const double own = static_cast<double>(end - begin);  // G[c, c] = |c|
                    for (const int64_t* x = begin; x != end; ++x) {
                        const T* row = labels + *x * r;
                        double acc = w_i * own;
                        for (int64_t j = i + 1; j < r; ++j) {
                            const int64_t l = label_code(row[j]);
                            if (l >= 0) acc += twice[j] * static_cast<double>(tally[base[j] + l]);
                        }
                        row_sum[*x] += w_i * own;
                        row_sq[*x] += w_i * acc;
                    }
                }
                // Clear the cells the cluster touched: one by one, or the whole histogram when
                // the cluster touched more labels than the histogram has cells.
                if ((end - begin) * (r - i) > width) {
                    std::fill(tally.begin(), tally.end(), 0);
                } else {
                    for (const int64_t* x = begin; x != end; ++x) {
                        const T* row = labels + *x * r;
                        for (int64_t j = i; j < r; ++j) {
                            const int64_t l = label_code(row[j]);
                            if (l >= 0) tally[base[j] + l] = 0;
                        }
                    }
                }
            }
        }
        entries += found;
    }
    return entries;
}

}  // namespace

int64_t cluster_overlaps(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                         const int64_t* offsets, int64_t stride, const double* weights,
                         double* row_sum, double* row_sq, int n_threads) {
    if (stride < 1) throw std::invalid_argument("stride must be at least 1");
    if (n > std::numeric_limits<int32_t>::max()) {
        throw std::invalid_argument("more objects than a 32-bit cell count holds");
    }
    if ((row_sq == nullptr) != (row_sum == nullptr) || (row_sq != nullptr && weights == nullptr)) {
        throw std::invalid_argument("row_sum, row_sq and weights go together");
    }
    if (n == 0 || r == 0) return 0;
    return with_label_codes(labels, label_bytes, [&](auto typed) {
        return overlaps_typed(typed, n, r, offsets, stride, weights, row_sum, row_sq, n_threads);
    });
}

}  // namespace cclust
