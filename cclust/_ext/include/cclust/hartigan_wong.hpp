// k-means by the algorithm of Hartigan & Wong (1979, Applied Statistics algorithm AS 136):
// optimal-transfer and quick-transfer stages, the semantics of R's
// kmeans(x, centers, iter.max, algorithm = "Hartigan-Wong") (R's double-precision AS 136 with
// its bound on quick-transfer steps), so that from the same starting centres the labels are
// the same as R's.
#pragma once

#include <cstdint>

namespace cclust {

// Status codes (R's ifault): 0 converged; 1 an empty cluster after the first assignment;
// 2 max_iter optimal-transfer passes without convergence (the labels are still usable: R
// warns); 3 k outside [2, m - 1]; 4 more than max_qtran quick-transfer steps (usable, R warns).
enum HartiganWongStatus : int32_t {
    HW_CONVERGED = 0, HW_EMPTY_CLUSTER = 1, HW_MAX_ITER = 2, HW_BAD_K = 3, HW_MAX_QTRAN = 4
};

// x: m x n row-major objects. centres: k x n row-major, IN the starting centres, OUT the means
// of the final clusters. labels: OUT m, 0-based. wss: OUT k within-cluster sums of squares.
// n_iter: OUT the optimal-transfer passes run (max_iter + 1 when not converged, as R reports).
// Returns a HartiganWongStatus. Single-threaded; the arithmetic follows AS 136's order exactly
// (this file must be built without contracted multiply-adds, -ffp-contract=off).
int32_t hartigan_wong(const double* x, int64_t m, int64_t n, double* centres, int32_t k,
                      int32_t max_iter, int64_t max_qtran, int32_t* labels, double* wss,
                      int32_t* n_iter);

}  // namespace cclust
