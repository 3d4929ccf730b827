// Hartigan & Wong (1979), algorithm AS 136: see include/cclust/hartigan_wong.hpp.
//
// State per object i: first[i] its cluster, second[i] the cluster it would most likely move to,
// cost[i] = |x_i - c_first|^2 * n / (n - 1) (the decrease of the within sum of squares if i
// left its cluster of size n). Per cluster l: size[l], the factors
// leave[l] = size / (size - 1) (a huge constant for a singleton) and join[l] = size / (size + 1)
// (the increase if an object joined: |x - c_l|^2 * join[l]), updated[l] (the step at which l
// last changed: an optimal-transfer step i, or in the quick-transfer stage that step + m),
// live[l] (l is in the live set for objects before live[l]) and moved[l] (changed in the last
// quick-transfer stage). Steps and object positions are 1-based as in AS 136 so that the
// comparisons with updated[] and live[] are the paper's.
#include "cclust/hartigan_wong.hpp"

#include <limits>
#include <utility>
#include <vector>

namespace cclust {

namespace {

// AS 136's "very large number", 1.0E30, is a single-precision constant in the Fortran code:
// its double value is the one R uses.
const double kBig = static_cast<double>(1.0e30f);

class HartiganWong {
  public:
    HartiganWong(const double* x, int64_t m, int64_t n, double* c, int32_t k, int64_t max_qtran)
        : x_(x), m_(m), n_(n), c_(c), k_(k), max_qtran_(max_qtran), first_(m), second_(m), cost_(m),
          size_(k), leave_(k), join_(k), updated_(k), live_(k), moved_(k) {}

    int32_t run(int32_t max_iter, int32_t* labels, double* wss, int32_t* n_iter) {
        if (k_ <= 1 || k_ >= m_) return HW_BAD_K;
        initial_assignment();
        if (!initial_centres()) return HW_EMPTY_CLUSTER;
        int32_t status = HW_MAX_ITER;
        int32_t pass = 1;
        since_change_ = 0;
        for (; pass <= max_iter; ++pass) {
            optimal_transfer();
            if (since_change_ == m_) { status = HW_CONVERGED; break; }
            if (!quick_transfer()) { status = HW_MAX_QTRAN; break; }
            if (k_ == 2) { status = HW_CONVERGED; break; }
            for (int32_t l = 0; l < k_; ++l) updated_[l] = 0;
        }
        *n_iter = pass;  // max_iter + 1 when the loop ran out
        finish(labels, wss);
        return status;
    }

  private:
    const double* row(int64_t i) const { return x_ + i * n_; }
    double* centre(int32_t l) const { return c_ + static_cast<int64_t>(l) * n_; }

    // Squared distance from object i to centre l, summed feature by feature; the sum stops as
    // soon as it reaches bound (partial sums only grow), returning that partial sum.
    double partial_sq_dist(int64_t i, int32_t l, double bound) const {
        const double* a = row(i);
        const double* b = centre(l);
        double s = 0.0;
        for (int64_t j = 0; j < n_; ++j) {
            const double t = a[j] - b[j];
            s += t * t;
            if (s >= bound) break;
        }
        return s;
    }

    double sq_dist(int64_t i, int32_t l) const {
        return partial_sq_dist(i, l, std::numeric_limits<double>::infinity());
    }

    // True when the squared distance from i to l is below bound; *out is then that distance.
    bool below(int64_t i, int32_t l, double bound, double* out) const {
        *out = partial_sq_dist(i, l, bound);
        return *out < bound;
    }

    // Each object to its closest centre, the runner-up as its second (ties keep the lower index).
    void initial_assignment() {
        for (int64_t i = 0; i < m_; ++i) {
            double best = sq_dist(i, 0), next = sq_dist(i, 1);
            int32_t b = 0, s = 1;
            if (best > next) { std::swap(best, next); std::swap(b, s); }
            for (int32_t l = 2; l < k_; ++l) {
                double dist;
                if (!below(i, l, next, &dist)) continue;
                if (dist >= best) {
                    next = dist;
                    s = l;
                } else {
                    next = best;
                    s = b;
                    best = dist;
                    b = l;
                }
            }
            first_[i] = b;
            second_[i] = s;
        }
    }

    bool initial_centres() {
        for (int32_t l = 0; l < k_; ++l) {
            size_[l] = 0;
            for (int64_t j = 0; j < n_; ++j) centre(l)[j] = 0.0;
        }
        for (int64_t i = 0; i < m_; ++i) {
            const int32_t l = first_[i];
            size_[l] += 1;
            for (int64_t j = 0; j < n_; ++j) centre(l)[j] += row(i)[j];
        }
        for (int32_t l = 0; l < k_; ++l) {
            if (size_[l] == 0) return false;
            const double count = static_cast<double>(size_[l]);
            for (int64_t j = 0; j < n_; ++j) centre(l)[j] /= count;
            join_[l] = count / (count + 1.0);
            leave_[l] = count > 1.0 ? count / (count - 1.0) : kBig;
            moved_[l] = 1;
            updated_[l] = -1;
        }
        return true;
    }

    // Move object i from l1 to l2: running means and the two clusters' factors.
    void move(int64_t i, int32_t l1, int32_t l2) {
        const double n1 = static_cast<double>(size_[l1]);
        const double n1_after = n1 - 1.0;
        const double n2 = static_cast<double>(size_[l2]);
        const double n2_after = n2 + 1.0;
        double* c1 = centre(l1);
        double* c2 = centre(l2);
        const double* a = row(i);
        for (int64_t j = 0; j < n_; ++j) {
            c1[j] = (c1[j] * n1 - a[j]) / n1_after;
            c2[j] = (c2[j] * n2 + a[j]) / n2_after;
        }
        size_[l1] -= 1;
        size_[l2] += 1;
        join_[l1] = n1_after / n1;
        leave_[l1] = n1_after > 1.0 ? n1_after / (n1_after - 1.0) : kBig;
        leave_[l2] = n2_after / n2;
        join_[l2] = n2_after / (n2_after + 1.0);
        first_[i] = l2;
        second_[i] = l1;
    }

    // One pass over the objects: each moves to the cluster that lowers the within sum of squares
    // most, among the live clusters (all clusters while its own is live). Stops early once m
    // steps in a row moved nothing (since_change_ counts them across passes).
    void optimal_transfer() {
        for (int32_t l = 0; l < k_; ++l)
            if (moved_[l] == 1) live_[l] = m_ + 1;
        for (int64_t i = 0; i < m_; ++i) {
            const int64_t step = i + 1;
            since_change_ += 1;
            const int32_t l1 = first_[i];
            if (size_[l1] != 1) {
                if (updated_[l1] != 0) cost_[i] = sq_dist(i, l1) * leave_[l1];
                const int32_t old_second = second_[i];
                int32_t l2 = old_second;
                double r2 = sq_dist(i, l2) * join_[l2];
                for (int32_t l = 0; l < k_; ++l) {
                    if ((step >= live_[l1] && step >= live_[l]) || l == l1 || l == old_second) continue;
                    double dist;
                    if (!below(i, l, r2 / join_[l], &dist)) continue;
                    r2 = dist * join_[l];
                    l2 = l;
                }
                if (r2 >= cost_[i]) {
                    second_[i] = l2;
                } else {
                    since_change_ = 0;
                    live_[l1] = m_ + step;
                    live_[l2] = m_ + step;
                    updated_[l1] = step;
                    updated_[l2] = step;
                    move(i, l1, l2);
                }
            }
            if (since_change_ == m_) return;
        }
        for (int32_t l = 0; l < k_; ++l) {
            moved_[l] = 0;
            live_[l] -= m_;
        }
    }

    // Swap objects between their first and second clusters while that helps, until m steps in a
    // row change nothing. False when max_qtran steps were used up (R's bound).
    bool quick_transfer() {
        int64_t quiet = 0, step = 0;
        for (;;) {
            for (int64_t i = 0; i < m_; ++i) {
                quiet += 1;
                step += 1;
                if (step >= max_qtran_) return false;
                const int32_t l1 = first_[i];
                const int32_t l2 = second_[i];
                if (size_[l1] != 1) {
                    if (step <= updated_[l1]) cost_[i] = sq_dist(i, l1) * leave_[l1];
                    double dist;
                    if ((step < updated_[l1] || step < updated_[l2]) &&
                        below(i, l2, cost_[i] / join_[l2], &dist)) {
                        quiet = 0;
                        since_change_ = 0;
                        moved_[l1] = 1;
                        moved_[l2] = 1;
                        updated_[l1] = step + m_;
                        updated_[l2] = step + m_;
                        move(i, l1, l2);
                    }
                }
                if (quiet == m_) return true;
            }
        }
    }

    // Final centres (plain means), labels and within-cluster sums of squares, summed in
    // AS 136's order (feature by feature).
    void finish(int32_t* labels, double* wss) {
        for (int32_t l = 0; l < k_; ++l) {
            wss[l] = 0.0;
            for (int64_t j = 0; j < n_; ++j) centre(l)[j] = 0.0;
        }
        for (int64_t i = 0; i < m_; ++i) {
            double* c = centre(first_[i]);
            for (int64_t j = 0; j < n_; ++j) c[j] += row(i)[j];
        }
        for (int64_t j = 0; j < n_; ++j) {
            for (int32_t l = 0; l < k_; ++l) centre(l)[j] /= static_cast<double>(size_[l]);
            for (int64_t i = 0; i < m_; ++i) {
                const double t = row(i)[j] - centre(first_[i])[j];
                wss[first_[i]] += t * t;
            }
        }
        for (int64_t i = 0; i < m_; ++i) labels[i] = first_[i];
    }

    const double* x_;
    int64_t m_, n_;
    double* c_;
    int32_t k_;
    int64_t max_qtran_;
    int64_t since_change_ = 0;
    std::vector<int32_t> first_, second_;
    std::vector<double> cost_;
    std::vector<int64_t> size_;
    std::vector<double> leave_, join_;
    std::vector<int64_t> updated_, live_;
    std::vector<int32_t> moved_;
};

}  // namespace

int32_t hartigan_wong(const double* x, int64_t m, int64_t n, double* centres, int32_t k,
                      int32_t max_iter, int64_t max_qtran, int32_t* labels, double* wss,
                      int32_t* n_iter) {
    *n_iter = 0;
    HartiganWong state(x, m, n, centres, k > 0 ? k : 0, max_qtran);
    return state.run(max_iter, labels, wss, n_iter);
}

}  // namespace cclust
