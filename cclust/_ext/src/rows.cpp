// Argument checks of the k-means entry points: every pointer, size, weight and label that a
// kernel reads is checked here (or by Engine::count / check_labels) before a pass runs.
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "cclust/kmeans_internal.hpp"

namespace cclust::kmeans_detail {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

std::string str(int64_t v) { return std::to_string(v); }
std::string str(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

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
        if (rows.label_bytes != 1 && rows.label_bytes != 2 && rows.label_bytes != 4) {
            fail("label_bytes must be 1, 2 or 4, got " + str(int64_t{rows.label_bytes}));
        }
        if (rows.offsets[0] != 0) fail("offsets[0] must be 0, got " + str(rows.offsets[0]));
        for (int64_t i = 0; i < rows.r; ++i) {
            const int64_t k_i = rows.offsets[i + 1] - rows.offsets[i];
            // Labels are int32, so a wider block could never be addressed.
            if (k_i < 0 || k_i > std::numeric_limits<int32_t>::max()) {
                fail("offsets must be non-decreasing with steps below 2^31; offsets[" +
                     str(i + 1) + "] - offsets[" + str(i) + "] = " + str(k_i));
            }
            if (k_i > code_cluster_limit(rows.label_bytes)) {
                fail("partition " + str(i) + " has " + str(k_i) + " clusters, more than codes of " +
                     str(int64_t{rows.label_bytes}) + " byte(s) hold (" +
                     str(code_cluster_limit(rows.label_bytes)) + "): pass wider label codes");
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
        int64_t stored = 0;
        const int64_t l = with_label_codes(rows.labels, rows.label_bytes, [&](const auto* labels) {
            stored = stored_code(labels[x * rows.r + i]);
            return label_code(labels[x * rows.r + i]);
        });
        const int64_t k_i = rows.offsets[i + 1] - rows.offsets[i];
        if (l < -1 || l >= k_i) {
            fail("label " + str(stored) + " of partition " + str(i) + " at row " + str(x) +
                 " is outside 0.." + str(k_i - 1) + " (or -1 for missing)");
        }
    }
    fail("bad label at row " + str(x));
}

Shape validate_categorical(const MixedRows& rows, const char* what) {
    const Shape sh = validate_rows(rows);
    if (sh.d != 0) fail(std::string(what) + " takes categorical rows only (d = 0), got d = " + str(sh.d));
    return sh;
}

Shape validate_dense(const MixedRows& rows, const char* what) {
    const Shape sh = validate_rows(rows);
    if (sh.r != 0) fail(std::string(what) + " takes dense rows only (r = 0), got r = " + str(sh.r));
    require_unweighted(rows, what);
    return sh;
}

}  // namespace cclust::kmeans_detail
