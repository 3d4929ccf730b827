// Centroids from tallies (eq. 4 of Wu et al. 2015 for the categorical blocks, means for the dense
// block), the empty-cluster rule (reseed), and the public tally and centres_from_tally.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "cclust/kmeans_internal.hpp"

namespace cclust {
namespace kmeans_detail {

namespace {

// Categorical centroids from label counts laid out with partition i's label l in column
// first_col[i] + l of rows of `stride` entries (n_clusters + 1 rows, the last for objects in no
// cluster); see kmeans.hpp for the fallback of a block with no labelled member.
// Count is int64_t (members) or double (weighted members); integer sums are exact.
template <class Count>
void categorical_centres(const int64_t* offsets, int64_t r, int64_t n_clusters,
                         const Count* counts, const int64_t* first_col, int64_t stride,
                         double* cat) {
    const int64_t width = offsets[r];
    std::vector<Count> whole(static_cast<size_t>(stride), 0);
    for (int64_t k = 0; k <= n_clusters; ++k) {
        for (int64_t e = 0; e < stride; ++e) whole[static_cast<size_t>(e)] += counts[k * stride + e];
    }
    for (int64_t i = 0; i < r; ++i) {
        const int64_t first = first_col[i];
        const int64_t k_i = offsets[i + 1] - offsets[i];
        Count whole_total = 0;
        for (int64_t l = 0; l < k_i; ++l) whole_total += whole[static_cast<size_t>(first + l)];
        for (int64_t k = 0; k < n_clusters; ++k) {
            const Count* row = counts + k * stride + first;
            Count total = 0;
            for (int64_t l = 0; l < k_i; ++l) total += row[l];
            double* m = cat + k * width + offsets[i];
            for (int64_t l = 0; l < k_i; ++l) {
                double v = 0.0;
                if (total > 0) {
                    v = static_cast<double>(row[l]) / static_cast<double>(total);
                } else if (whole_total > 0) {
                    v = static_cast<double>(whole[static_cast<size_t>(first + l)]) /
                        static_cast<double>(whole_total);
                }
                m[l] = v;
            }
        }
    }
}

// Scaled rows: block i of centre k is sum w_x s_x e_{L[x,i]} / sum w_x over the members; a
// cluster with no member gets the whole data set's.
void scaled_centres(const MixedRows& rows, const Shape& sh, const Slots& slots,
                    int64_t n_clusters, const Tally& tally, double* cat) {
    const int64_t stride = slots.count;
    std::vector<double> whole(static_cast<size_t>(stride), 0.0);
    double whole_mass = 0.0;
    for (int64_t k = 0; k <= n_clusters; ++k) {
        for (int64_t e = 0; e < stride; ++e) {
            whole[static_cast<size_t>(e)] += tally.wcounts[static_cast<size_t>(k * stride + e)];
        }
        whole_mass += tally.mass[static_cast<size_t>(k)];
    }
    for (int64_t k = 0; k < n_clusters; ++k) {
        const double mass = tally.mass[static_cast<size_t>(k)];
        const double* row = mass > 0.0 ? tally.wcounts.data() + k * stride : whole.data();
        const double total = mass > 0.0 ? mass : whole_mass;
        for (int64_t i = 0; i < sh.r; ++i) {
            const int64_t first = slots.of[static_cast<size_t>(i)];
            double* m = cat + k * sh.width + rows.offsets[i];
            for (int64_t l = 0; l < rows.offsets[i + 1] - rows.offsets[i]; ++l) {
                m[l] = row[first + l] / total;
            }
        }
    }
}

}  // namespace

// Centroids from a tally (see kmeans.hpp for the fallbacks of empty blocks and clusters).
void centres_from_tally(const MixedRows& rows, const Shape& sh, const Slots& slots,
                        int64_t n_clusters, const Tally& tally, double* dense, double* cat) {
    const int64_t d = sh.d, rows_k = n_clusters + 1;
    const bool by_mass = weighted(rows);
    if (d > 0) {
        // The denominators: members, or their summed weights (exact integers without weights).
        auto size_of = [&](int64_t k) {
            return by_mass ? tally.mass[static_cast<size_t>(k)]
                           : static_cast<double>(tally.sizes[static_cast<size_t>(k)]);
        };
        std::vector<double> whole(static_cast<size_t>(d), 0.0);
        double total = 0.0;
        int64_t members = 0;
        for (int64_t k = 0; k < rows_k; ++k) {
            for (int64_t j = 0; j < d; ++j) {
                whole[static_cast<size_t>(j)] += tally.sums[static_cast<size_t>(k * d + j)];
            }
            members += tally.sizes[static_cast<size_t>(k)];
            if (by_mass) total += size_of(k);
        }
        if (!by_mass) total = static_cast<double>(members);
        for (int64_t k = 0; k < n_clusters; ++k) {
            const bool has_members = tally.sizes[static_cast<size_t>(k)] > 0;
            const double size = size_of(k);
            for (int64_t j = 0; j < d; ++j) {
                double v = 0.0;
                if (has_members) {
                    v = tally.sums[static_cast<size_t>(k * d + j)] / size;
                } else if (members > 0) {
                    v = whole[static_cast<size_t>(j)] / total;
                }
                dense[k * d + j] = v;
            }
        }
    }
    if (sh.r == 0) return;
    if (rows.row_scale != nullptr) {
        scaled_centres(rows, sh, slots, n_clusters, tally, cat);
    } else if (by_mass) {
        categorical_centres(rows.offsets, sh.r, n_clusters, tally.wcounts.data(), slots.of.data(),
                            slots.count, cat);
    } else {
        categorical_centres(rows.offsets, sh.r, n_clusters, tally.counts.data(), slots.of.data(),
                            slots.count, cat);
    }
}

// The engine's tally (label slots, see Slots) in the one-hot columns of the public functions.
void tally_to_columns(const MixedRows& rows, const Shape& sh, const Slots& slots,
                      int64_t n_clusters, const Tally& tally, int64_t* counts, int64_t* sizes) {
    for (int64_t k = 0; k <= n_clusters; ++k) {
        for (int64_t i = 0; i < sh.r; ++i) {
            const int64_t* from = tally.counts.data() + k * slots.count + slots.of[static_cast<size_t>(i)];
            int64_t* to = counts + k * sh.width + rows.offsets[i];
            std::copy(from, from + (rows.offsets[i + 1] - rows.offsets[i]), to);
        }
        sizes[k] = tally.sizes[static_cast<size_t>(k)];
    }
}

// The tally of a labelling in which -1 means "in no cluster" (checked here, with the labels).
Tally tally_of(const MixedRows& rows, const Shape& sh, int32_t n_clusters,
               const int32_t* assignment, int n_threads) {
    check_n_clusters(n_clusters, sh.n, false);
    check_assignment(assignment, sh.n, n_clusters, true);
    Engine engine(rows, sh, n_clusters, n_threads);
    Tally out;
    engine.count(assignment);
    engine.reduce(out, false);
    return out;
}

bool any_empty(const Tally& tally, int64_t n_clusters) {
    for (int64_t k = 0; k < n_clusters; ++k) {
        if (tally.sizes[static_cast<size_t>(k)] == 0) return true;
    }
    return false;
}

}  // namespace kmeans_detail

using namespace kmeans_detail;

void reseed(int32_t* labels, const double* costs, int64_t n, int64_t* sizes, int64_t n_clusters) {
    for (int64_t e = 0; e < n_clusters; ++e) {
        if (sizes[e] != 0) continue;
        const int64_t pick = costliest_movable(labels, costs, n, sizes, nullptr);
        if (pick < 0) fail("cannot re-seed an empty cluster: n_clusters exceeds n");
        sizes[labels[pick]] -= 1;
        sizes[e] = 1;
        labels[pick] = static_cast<int32_t>(e);
    }
}

int64_t costliest_movable(const int32_t* assignment, const double* costs, int64_t n,
                          const int64_t* sizes, double* cost) {
    int64_t pick = -1;
    double pick_cost = 0.0;
    for (int64_t x = 0; x < n; ++x) {
        if (sizes[assignment[x]] < 2) continue;
        const double v = costs[x];
        // Written so a NaN cost is never preferred and never leaves pick unset.
        if (pick < 0 || v > pick_cost) {
            pick = x;
            pick_cost = v;
        }
    }
    if (cost != nullptr) *cost = pick_cost;
    return pick;
}

void tally(const MixedRows& rows, int32_t n_clusters, const int32_t* assignment, int64_t* counts,
           int64_t* sizes, int n_threads) {
    const Shape sh = validate_rows(rows);
    require_unweighted(rows, "tally");
    if (sizes == nullptr) fail("sizes is null");
    if (sh.width > 0 && counts == nullptr) fail("counts is null but offsets[r] > 0");
    const Tally out = tally_of(rows, sh, n_clusters, assignment, n_threads);
    tally_to_columns(rows, sh, Slots(rows.offsets, sh.r), n_clusters, out, counts, sizes);
}

void centres_from_tally(const int64_t* offsets, int64_t r, int32_t n_clusters,
                        const int64_t* counts, double* cat_centers) {
    if (r < 0) fail("r must be >= 0, got " + str(r));
    if (n_clusters < 1) fail("n_clusters must be >= 1, got " + str(int64_t{n_clusters}));
    if (offsets == nullptr) fail("offsets is null");
    if (offsets[0] != 0) fail("offsets[0] must be 0, got " + str(offsets[0]));
    for (int64_t i = 0; i < r; ++i) {
        if (offsets[i + 1] < offsets[i]) {
            fail("offsets must be non-decreasing; offsets[" + str(i + 1) + "] = " +
                 str(offsets[i + 1]) + " < offsets[" + str(i) + "] = " + str(offsets[i]));
        }
    }
    if (r == 0 || offsets[r] == 0) return;
    if (counts == nullptr || cat_centers == nullptr) fail("counts or cat_centers is null");
    categorical_centres(offsets, r, n_clusters, counts, offsets, offsets[r], cat_centers);
}

}  // namespace cclust
