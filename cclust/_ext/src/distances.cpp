#include "cclust/distances.hpp"

#include <cmath>
#include <vector>

#include "cclust/parallel.hpp"

namespace cclust {

double pair_distance_sum(const double* X, int64_t m, int64_t d, double power, int n_threads) {
    if (m < 2) return 0.0;
    // The features in columns (d x m), so the distances of row i to the rows after it are built
    // one feature at a time over contiguous memory.
    std::vector<double> columns(static_cast<size_t>(m * d));
    for (int64_t i = 0; i < m; ++i)
        for (int64_t k = 0; k < d; ++k) columns[static_cast<size_t>(k * m + i)] = X[i * d + k];
    std::vector<double> row_sums(static_cast<size_t>(m), 0.0);
    const bool root = power == 1.0;
    const double half_power = 0.5 * power;
    (void)n_threads;
#if defined(_OPENMP)
#pragma omp parallel num_threads(n_threads < 1 ? 1 : n_threads)
#endif
    {
        std::vector<double> squares(static_cast<size_t>(m));
#if defined(_OPENMP)
#pragma omp for schedule(dynamic, 16)
#endif
        for (int64_t i = 0; i < m - 1; ++i) {
            const int64_t count = m - i - 1;
            double* sq = squares.data();
            for (int64_t j = 0; j < count; ++j) sq[j] = 0.0;
            for (int64_t k = 0; k < d; ++k) {
                const double* column = columns.data() + k * m + i + 1;
                const double xi = columns[static_cast<size_t>(k * m + i)];
                for (int64_t j = 0; j < count; ++j) {
                    const double diff = column[j] - xi;
                    sq[j] += diff * diff;
                }
            }
            double sum = 0.0;
            if (root) {
                for (int64_t j = 0; j < count; ++j) sum += std::sqrt(sq[j]);
            } else {
                for (int64_t j = 0; j < count; ++j) sum += std::pow(sq[j], half_power);
            }
            row_sums[static_cast<size_t>(i)] = sum;
        }
    }
    double total = 0.0;
    for (int64_t i = 0; i < m; ++i) total += row_sums[static_cast<size_t>(i)];
    return total;
}

}  // namespace cclust
