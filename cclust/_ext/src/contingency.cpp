#include "cclust/contingency.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cclust/parallel.hpp"

namespace cclust {

namespace {

// Integer tallies over the objects, one table of `size` counts per thread: count(table, x) adds
// object x to its thread's table and returns false for an object it cannot count (reported to
// the returned FirstBad). The tables are summed into out; integer sums are exact in any order, so
// a table per thread (not per chunk) is enough.
template <class Count>
FirstBad tally_objects(int64_t n, int n_threads, int64_t size, int64_t* out, Count&& count) {
    if (n_threads < 1) n_threads = 1;
    std::vector<std::vector<int64_t>> tables(static_cast<size_t>(n_threads));
    FirstBad bad;
    for_each_chunk_with(
        n, n_threads,
        [&]() -> std::vector<int64_t>& {
            std::vector<int64_t>& table = tables[static_cast<size_t>(thread_id())];
            table.assign(static_cast<size_t>(size), 0);
            return table;
        },
        [&](std::vector<int64_t>& table, int64_t, int64_t start, int64_t stop) {
            int64_t first_bad = -1;
            for (int64_t x = start; x < stop; ++x) {
                if (!count(table.data(), x) && first_bad < 0) first_bad = x;
            }
            if (first_bad >= 0) bad.report(first_bad);
        });
    std::fill(out, out + size, int64_t{0});
    for (const auto& table : tables) {
        if (table.empty()) continue;  // a thread the team did not start (or a serial build)
        for (int64_t c = 0; c < size; ++c) out[c] += table[static_cast<size_t>(c)];
    }
    return bad;
}

[[noreturn]] void bad_label(const char* what, int64_t row, int64_t value, int64_t bound) {
    throw std::invalid_argument(std::string(what) + " label " + std::to_string(value) +
                                " at row " + std::to_string(row) + " is outside 0.." +
                                std::to_string(bound - 1) + " (or -1 for missing)");
}

}  // namespace

void contingency_pair(const int64_t* a, const int64_t* b, int64_t n, int64_t ka, int64_t kb,
                      int64_t* out, int n_threads) {
    if (n_threads < 1) n_threads = 1;
    // Threads pay only when each gets a large share of objects and the per-thread tables are
    // small beside n (measured: below ~2^20 objects a thread, the second thread made it slower).
    if (n < (int64_t{1} << 20) * n_threads || ka * kb * n_threads * 8 > n) n_threads = 1;
    const FirstBad bad = tally_objects(n, n_threads, ka * kb, out, [&](int64_t* table, int64_t x) {
        const int64_t i = a[x], j = b[x];
        if (i == -1 || j == -1) return true;
        if (i < 0 || i >= ka || j < 0 || j >= kb) return false;
        table[i * kb + j] += 1;
        return true;
    });
    if (bad.found()) {
        const int64_t row = bad.index();
        const bool first = a[row] < -1 || a[row] >= ka;
        bad_label(first ? "first" : "second", row, first ? a[row] : b[row], first ? ka : kb);
    }
}

void label_range(const int64_t* labels, int64_t n, int64_t* low, int64_t* high) {
    int64_t lo = labels[0], hi = labels[0];
    for (int64_t x = 1; x < n; ++x) {
        lo = std::min(lo, labels[x]);
        hi = std::max(hi, labels[x]);
    }
    *low = lo;
    *high = hi;
}

int64_t relabel_dense(const int64_t* labels, int64_t n, int64_t max_value, int64_t* out,
                      bool* identity, int n_threads) {
    if (n_threads < 1) n_threads = 1;
    std::vector<int64_t> code(static_cast<size_t>(max_value + 1), 0);
    for (int64_t x = 0; x < n; ++x) {
        const int64_t v = labels[x];
        if (v < 0 || v > max_value) {
            throw std::invalid_argument("label " + std::to_string(v) + " at row " +
                                        std::to_string(x) + " is outside 0.." +
                                        std::to_string(max_value));
        }
        code[static_cast<size_t>(v)] = 1;
    }
    int64_t k = 0;
    for (auto& c : code) {
        if (c) c = k++;
    }
    *identity = (k == max_value + 1);
    if (*identity) return k;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(n_threads) if (n > (int64_t{1} << 20))
#endif
    for (int64_t x = 0; x < n; ++x) out[x] = code[static_cast<size_t>(labels[x])];
    return k;
}

}  // namespace cclust
