#include "cclust/overlaps.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cclust/lookup.hpp"
#include "cclust/parallel.hpp"

namespace cclust {

namespace {

// The rows of the blocks i' >= i of G, one per cluster (one-hot column order), as
// overlaps_typed<true> leaves them: the output columns (ranks) of the touched cells, in the order
// they were first touched, and their values, in one buffer of `capacity` cells allocated once
// (no allocation per cluster in the threads). A cluster's row starts at start[g] and holds
// length[g] cells; the rows lie in the order the threads claimed them, which only their
// placement depends on.
struct BlockRows {
    const double* object_weights = nullptr;  // n, or null
    const int64_t* rank = nullptr;           // sum K_i
    int64_t capacity = 0;
    // Left uninitialised: the cells past those the rows use are never touched, so a capacity
    // from an upper bound of the entries costs no resident memory.
    std::unique_ptr<int32_t[]> columns;  // capacity
    std::unique_ptr<double[]> values;    // capacity
    std::vector<int64_t> start;    // sum K_i
    std::vector<int64_t> length;   // sum K_i
    int64_t used = 0;              // claimed under `omp atomic capture`
    bool overflow = false;         // more cells than capacity: nothing written past it
};

// kTable: also keep every cluster's touched cells and their values in `rows`.
template <bool kTable, class T>
int64_t overlaps_typed(const T* labels, int64_t n, int64_t r, const int64_t* offsets, int64_t stride,
                       const double* weights, double* row_sum, double* row_sq, BlockRows* rows,
                       int n_threads) {
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
            // kTable: the cells touched by the current cluster and, with object weights, their sums.
            std::vector<int64_t> touched;
            std::vector<double> mass(kTable && rows->object_weights != nullptr ? static_cast<size_t>(width) : 0, 0.0);
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
                    if (kTable && tally[l0] == 0) touched.push_back(l0);
                    local += tally[l0]++ == 0;
                    int64_t fresh = 0;
                    for (int64_t j = i + 1; j < r; ++j) {
                        const int64_t l = label_code(row[j]);
                        if (l >= 0) {
                            const bool first_time = tally[base[j] + l]++ == 0;
                            fresh += first_time;
                            if (kTable && first_time) touched.push_back(base[j] + l);
                        }
                    }
                    local += 2 * fresh;
                }
                found += local;
                if (kTable && !mass.empty()) {
                    // sum of w over the objects in c and in each cell's cluster, in object order
                    for (const int64_t* x = begin; x != end; ++x) {
                        const T* row = labels + *x * r;
                        const double w = rows->object_weights[*x];
                        for (int64_t j = i; j < r; ++j) {
                            const int64_t l = label_code(row[j]);
                            if (l >= 0) mass[base[j] + l] += w;
                        }
                    }
                }
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
                if (kTable) {
                    // The cluster's row of the blocks i' >= i, read and cleared cell by cell.
                    const int64_t g = offsets[i] + c;
                    const int64_t cells = static_cast<int64_t>(touched.size());
                    int64_t at;
#if defined(_OPENMP)
#pragma omp atomic capture
#endif
                    {
                        at = rows->used;
                        rows->used += cells;
                    }
                    const bool fits = at + cells <= rows->capacity;
                    if (!fits) rows->overflow = true;  // only ever set to true: a benign race
                    rows->start[g] = at;
                    rows->length[g] = fits ? cells : 0;
                    int32_t* cols = fits ? rows->columns.get() + at : nullptr;
                    double* vals = fits ? rows->values.get() + at : nullptr;
                    for (int64_t t = 0; t < cells; ++t) {
                        const int64_t cell = touched[t];
                        if (fits) {
                            cols[t] = static_cast<int32_t>(rows->rank[offsets[i] + cell]);
                            vals[t] = mass.empty() ? static_cast<double>(tally[cell]) : mass[cell];
                        }
                        tally[cell] = 0;
                        if (!mass.empty()) mass[cell] = 0.0;
                    }
                    touched.clear();
                // Clear the cells the cluster touched: one by one, or the whole histogram when
                // the cluster touched more labels than the histogram has cells.
                } else if ((end - begin) * (r - i) > width) {
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
        return overlaps_typed<false>(typed, n, r, offsets, stride, weights, row_sum, row_sq, nullptr, n_threads);
    });
}

int64_t cluster_overlap_table(const void* labels, int32_t label_bytes, int64_t n, int64_t r,
                           const int64_t* offsets, const OverlapTable& table, int n_threads) {
    if (n > std::numeric_limits<int32_t>::max()) {
        throw std::invalid_argument("more objects than a 32-bit cell count holds");
    }
    const int64_t n_c = r > 0 ? offsets[r] : 0;
    if (n_c > std::numeric_limits<int32_t>::max()) {
        throw std::invalid_argument("more clusters than a 32-bit column index holds");
    }
    {
        std::vector<char> seen(static_cast<size_t>(n_c), 0);
        for (int64_t c = 0; c < n_c; ++c) {
            const int64_t q = table.rank[c];
            if (q < 0 || q >= n_c || seen[q]) {
                throw std::invalid_argument("rank must be a permutation of the clusters 0.." + std::to_string(n_c - 1));
            }
            seen[q] = 1;
        }
    }
    // The blocks i' >= i hold every cell of G once and its mirror image off them: each
    // non-empty cluster's own cell once, every other cell counted twice in the entries, so
    // (capacity + sum K_i) / 2 bounds their cells (a bound costs nothing resident: the cells
    // past those written are never touched).
    BlockRows rows;
    rows.object_weights = table.object_weights;
    rows.rank = table.rank;
    rows.capacity = std::max<int64_t>(0, (table.capacity + n_c) / 2);
    rows.columns.reset(new int32_t[static_cast<size_t>(rows.capacity)]);
    rows.values.reset(new double[static_cast<size_t>(rows.capacity)]);
    rows.start.assign(static_cast<size_t>(n_c), 0);
    rows.length.assign(static_cast<size_t>(n_c), 0);
    int64_t counted = 0;
    if (n > 0 && r > 0) {
        with_label_codes(labels, label_bytes, [&](auto typed) {
            counted = overlaps_typed<true>(typed, n, r, offsets, 1, nullptr, nullptr, nullptr, &rows, n_threads);
        });
    }
    if (counted > table.capacity || rows.overflow) {
        throw std::invalid_argument("the overlap table has " + std::to_string(counted) +
                                    " entries, the output holds " + std::to_string(table.capacity));
    }
    // Row lengths: each cluster's own row of the blocks i' >= i, and the mirror image of every
    // cell off the diagonal (the only cell of block (i, i) in row c is c itself).
    int64_t* indptr = table.indptr;
    std::fill(indptr, indptr + n_c + 1, 0);
    for (int64_t g = 0; g < n_c; ++g) {
        const int32_t own = static_cast<int32_t>(table.rank[g]);
        indptr[own + 1] += rows.length[g];
        const int32_t* cols = rows.columns.get() + rows.start[g];
        for (int64_t t = 0; t < rows.length[g]; ++t) {
            if (cols[t] != own) ++indptr[cols[t] + 1];
        }
    }
    for (int64_t q = 0; q < n_c; ++q) indptr[q + 1] += indptr[q];
    std::vector<int64_t> cursor(indptr, indptr + n_c);
    for (int64_t g = 0; g < n_c; ++g) {
        const int32_t own = static_cast<int32_t>(table.rank[g]);
        const int32_t* cols = rows.columns.get() + rows.start[g];
        const double* vals = rows.values.get() + rows.start[g];
        for (int64_t t = 0; t < rows.length[g]; ++t) {
            table.indices[cursor[own]] = cols[t];
            table.data[cursor[own]++] = vals[t];
            if (cols[t] != own) {
                table.indices[cursor[cols[t]]] = own;
                table.data[cursor[cols[t]]++] = vals[t];
            }
        }
    }
    rows.columns.reset();
    rows.values.reset();
    // Every row sorted by column: its columns are distinct, so the result is one whatever the
    // order its cells came in.
    const int threads = n_threads < 1 ? 1 : n_threads;
    (void)threads;
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
#endif
    {
        std::vector<std::pair<int32_t, double>> cells;
#if defined(_OPENMP)
#pragma omp for schedule(dynamic, 64)
#endif
        for (int64_t q = 0; q < n_c; ++q) {
            const int64_t lo = indptr[q];
            const int64_t hi = indptr[q + 1];
            cells.resize(static_cast<size_t>(hi - lo));
            for (int64_t e = lo; e < hi; ++e) cells[e - lo] = {table.indices[e], table.data[e]};
            std::sort(cells.begin(), cells.end(),
                      [](const std::pair<int32_t, double>& a, const std::pair<int32_t, double>& b) {
                          return a.first < b.first;
                      });
            for (int64_t e = lo; e < hi; ++e) {
                table.indices[e] = cells[e - lo].first;
                table.data[e] = cells[e - lo].second;
            }
        }
    }
    return counted;
}

}  // namespace cclust
