// GKCC's candidate runs of one greedy step (Li & Liu 2018): each candidate's assign + Lloyd run,
// with the costs no pass needs left out (bounds of Elkan 2003) and passes shared through a memo.
// Results are bit for bit those of the Engine's assign and lloyd.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "cclust/kmeans_internal.hpp"

namespace cclust {

using namespace kmeans_detail;

namespace {

// The cost columns of m centres (out: m x n) by the engine's own kernel: a k-means++ candidate
// pass with no previous distances writes exactly object_costs' values.
void cost_columns(const MixedRows& rows, const Shape& sh, int64_t m, const double* dense,
                  const double* cat, double* out, int n_threads) {
    Engine engine(rows, sh, m, n_threads);
    std::vector<double> potentials(static_cast<size_t>(m));
    engine.build_table(cat);
    engine.candidate_pass(dense, nullptr, out, potentials.data());
}

// The seed centres' cost columns of a step, `batch` candidates' at a time: a batch is computed
// (one engine pass, by the thread that first asks for one of its columns, while any other thread
// asking waits) and dropped once each of its candidates has read its column, which a run does only
// for its first assignment. Candidates start in increasing order, so a batch still held is the one
// of the next candidate to start or holds a candidate some thread is reading: at most one batch
// per thread, instead of a column per candidate (472 MB at 10^6 objects and 59 candidates). The
// columns are those of one pass over every seed: a cost is a function of its object and centre
// alone (cost_columns); kLane = 2 centres share a lane, so batches of an even size cost the
// lookups of one pass over all seeds.
class SeedColumns {
public:
    SeedColumns(const MixedRows& rows, const Shape& sh, int64_t n_candidates, int64_t batch,
                const double* seed_dense, const double* seed_cat)
        : rows_(rows), sh_(sh), n_candidates_(n_candidates), batch_(std::max<int64_t>(1, batch)),
          seed_dense_(seed_dense), seed_cat_(seed_cat),
          batches_(static_cast<size_t>((n_candidates + batch_ - 1) / batch_)) {
        for (size_t b = 0; b < batches_.size(); ++b) {
            batches_[b].left = std::min(batch_, n_candidates_ - static_cast<int64_t>(b) * batch_);
        }
    }

    // Candidate c's column (n costs), valid until release(c).
    const double* acquire(int64_t c) {
        const int64_t b = c / batch_;
        Batch& batch = batches_[static_cast<size_t>(b)];
        std::lock_guard<std::mutex> lock(batch.mutex);
        if (!batch.ready) {
            const int64_t first = b * batch_, m = batch.left;
            batch.costs.resize(static_cast<size_t>(m * sh_.n));
            cost_columns(rows_, sh_, m, seed_dense_ + first * sh_.d, seed_cat_ + first * sh_.width,
                         batch.costs.data(), 1);
            batch.ready = true;
        }
        return batch.costs.data() + (c - b * batch_) * sh_.n;
    }

    void release(int64_t c) {
        Batch& batch = batches_[static_cast<size_t>(c / batch_)];
        std::lock_guard<std::mutex> lock(batch.mutex);
        if (--batch.left == 0) std::vector<double>().swap(batch.costs);
    }

private:
    struct Batch {
        std::mutex mutex;
        std::vector<double> costs;  // m x n
        int64_t left = 0;           // candidates that have not read their column yet
        bool ready = false;
    };

    const MixedRows& rows_;
    const Shape& sh_;
    const int64_t n_candidates_, batch_;
    const double* seed_dense_;
    const double* seed_cat_;
    std::vector<Batch> batches_;
};

bool same_bits(const double* a, const double* b, int64_t count) {
    return count == 0 || std::memcmp(a, b, static_cast<size_t>(count) * sizeof(double)) == 0;
}

// The passes of one greedy step, shared by its candidates: a pass is a function of the labels
// it starts from (the centres are their centroids), and candidates often reach the same labels,
// so a pass found here is not run again. Entries are compared in full; the oldest go first
// once `budget` bytes are held (only the time depends on what is kept).
class PassMemo {
public:
    struct Entry {
        std::vector<int32_t> labels;  // the key: the labels the pass started from
        uint64_t hash;
        double objective;
        int64_t changed;
        std::vector<int32_t> best;
        std::vector<double> best_cost;
    };

    explicit PassMemo(int64_t budget) : budget_(budget) {}

    static uint64_t hash(const int32_t* labels, int64_t n) {
        uint64_t h = 1469598103934665603ull;
        for (int64_t x = 0; x < n; ++x) {
            h = (h ^ static_cast<uint32_t>(labels[x])) * 1099511628211ull;
        }
        return h ^ (h >> 31);
    }

    std::shared_ptr<const Entry> find(const int32_t* labels, int64_t n, uint64_t h) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto range = index_.equal_range(h);
        for (auto it = range.first; it != range.second; ++it) {
            const Entry& e = **it->second;
            if (std::memcmp(e.labels.data(), labels, static_cast<size_t>(n) * sizeof(int32_t)) == 0) {
                return *it->second;
            }
        }
        return nullptr;
    }

    void insert(std::shared_ptr<const Entry> entry) {
        const auto size = static_cast<int64_t>(entry->labels.size() * 16);
        std::lock_guard<std::mutex> lock(mutex_);
        if (size > budget_) return;
        entries_.push_back(std::move(entry));
        index_.emplace(entries_.back()->hash, std::prev(entries_.end()));
        bytes_ += size;
        while (bytes_ > budget_) {
            auto oldest = entries_.begin();
            auto range = index_.equal_range((*oldest)->hash);
            for (auto it = range.first; it != range.second; ++it) {
                if (it->second == oldest) {
                    index_.erase(it);
                    break;
                }
            }
            bytes_ -= static_cast<int64_t>((*oldest)->labels.size() * 16);
            entries_.pop_front();
        }
    }

private:
    const int64_t budget_;
    int64_t bytes_ = 0;
    std::list<std::shared_ptr<const Entry>> entries_;
    std::unordered_multimap<uint64_t, std::list<std::shared_ptr<const Entry>>::iterator> index_;
    std::mutex mutex_;
};

// Labels 0..k-1 as codes of `bytes` each (1, 2 or 4; the caller checked that k fits).
void write_codes(const int32_t* labels, int64_t n, void* out, int32_t bytes) {
    switch (bytes) {
        case 1:
            std::transform(labels, labels + n, static_cast<uint8_t*>(out), [](int32_t l) { return static_cast<uint8_t>(l); });
            break;
        case 2:
            std::transform(labels, labels + n, static_cast<uint16_t*>(out), [](int32_t l) { return static_cast<uint16_t>(l); });
            break;
        default:
            std::copy(labels, labels + n, static_cast<int32_t*>(out));
    }
}

struct RunCounters {
    int64_t evaluated = 0, skipped = 0, passes = 0, reused_passes = 0;
};

// One candidate: the labels of `assign` to k centres whose cost columns are given, then `lloyd`
// from there. Costs are the engine's bits (one centre's cost is the same sequence of IEEE
// operations whether computed alone or in a lane with others: the dense sum, then the table
// entries of the partitions in order), but only those the pass needs are computed:
//
// * the cost of x to its own cluster is reused when that centre did not change (bitwise) since
//   the pass that computed it;
// * the cost to another centre j is skipped when a lower bound proves it exceeds the cost to the
//   own centre (Elkan 2003): sqrt(D) is a Euclidean distance in the augmented space (missing
//   labels drop their block, which only shortens a centre's move), so a bound at one centre,
//   less how far the centre moved, bounds it at the next. Computed costs differ from exact
//   ones by at most rel * cost + abs (rounding of at most r + d + max K_i + 16 operations per
//   cost, with a factor 64 to spare); the bounds and the test carry that slack, so a skipped
//   centre is one whose computed cost is strictly above the own one: neither the minimum nor a
//   tie, and the labels, best costs and objective are bit for bit those of a full pass.
//
// The partitions' labels are read in place in the rows' own code width (Code: uint8_t,
// uint16_t or int32_t, lookup.hpp's layouts), so the step needs no int32 copy of them.
template <class Code>
class CandidateRun {
public:
    CandidateRun(const MixedRows& rows, const Shape& sh, const Slots& slots, int64_t k, PassMemo& memo)
        : rows_(rows), codes_(static_cast<const Code*>(rows.labels)), sh_(sh), slots_(slots), k_(k), n_(sh.n),
          chunks_(n_chunks(sh.n)), memo_(memo),
          acc_(static_cast<size_t>(k)), table_(static_cast<size_t>(k * slots.count)),
          own_(static_cast<size_t>(kBlock)), value_(static_cast<size_t>(kBlock * k)),
          pair_x_(static_cast<size_t>(kBlock * k)), pair_j_(static_cast<size_t>(kBlock * k)),
          lb_(static_cast<size_t>(sh.n * k)), moved_by_(static_cast<size_t>(k)),
          changed_centre_(static_cast<size_t>(k)) {
        int64_t max_k = 0;
        double weight = 0.0;
        for (int64_t i = 0; i < sh.r; ++i) {
            max_k = std::max<int64_t>(max_k, slots.size[static_cast<size_t>(i)]);
            weight += rows.weights[i];
        }
        constexpr double eps = std::numeric_limits<double>::epsilon();
        rel_ = 64.0 * eps * static_cast<double>(sh.r + sh.d + max_k + 16);
        abs_ = rel_ * (4.0 * weight + std::numeric_limits<double>::min());
        move_rel_ = 64.0 * eps * static_cast<double>(sh.d + sh.width + 16);
    }

    // `read` is called once the columns are read (they are not used afterwards).
    template <class Read>
    void run(const double* const* columns, Read&& read, const double* start_dense, const double* start_cat,
             int64_t max_iter, double tol, void* out_labels, int32_t out_bytes, double* out_objective,
             int64_t* out_n_iter, RunCounters& counters) {
        const int64_t n = n_, k = k_, d = sh_.d, width = sh_.width, slots = slots_.count;
        LloydState s(n);
        for (int64_t x = 0; x < n; ++x) {  // cost_pass without `given`: lowest index of the minima
            for (int64_t j = 0; j < k; ++j) {
                acc_[static_cast<size_t>(j)] = columns[j][x];
                lb_[static_cast<size_t>(x * k + j)] = lower(columns[j][x]);
            }
            s.labels[static_cast<size_t>(x)] = static_cast<int32_t>(argmin(acc_.data(), k));
        }
        read();
        ref_ = Centres{std::vector<double>(start_dense, start_dense + k * d),
                       std::vector<double>(start_cat, start_cat + k * width)};
        last_ = ref_;
        cur_ = Centres{std::vector<double>(static_cast<size_t>(k * d)),
                       std::vector<double>(static_cast<size_t>(k * width))};
        chunk_sums_.assign(static_cast<size_t>(chunks_ * (k + 1) * d), 0.0);
        delta_counts_.assign(static_cast<size_t>((k + 1) * slots), 0);
        delta_sizes_.assign(static_cast<size_t>(k + 1), 0);
        own_known_ = false;
        counters_ = &counters;

        recount(s.labels.data());
        centres_from_tally(rows_, sh_, slots_, k, tally_, cur_.dense.data(), cur_.cat.data());
        if (any_empty(tally_, k)) {
            build_tables(cur_);
            std::vector<int64_t> xs(static_cast<size_t>(n));
            for (int64_t x = 0; x < n; ++x) xs[static_cast<size_t>(x)] = x;
            costs(xs.data(), s.labels.data(), n, cur_, s.best_cost.data());
            counters.evaluated += n;
            reseed(s.labels.data(), s.best_cost.data(), n, tally_.sizes.data(), k);
            recount(s.labels.data());
            centres_from_tally(rows_, sh_, slots_, k, tally_, cur_.dense.data(), cur_.cat.data());
        }

        lloyd_loop(*this, s, max_iter, tol, nullptr);
        write_codes(s.labels.data(), n, out_labels, out_bytes);
        *out_objective = s.objective;
        *out_n_iter = s.n_trace - 1;
    }

    // The pass policy of lloyd_loop: a pass another candidate already ran from these labels is
    // taken from the memo, else it is computed with the bounds and entered in the memo.
    double pass(const int32_t* labels, int32_t* best, double* best_cost, int64_t* changed) {
        const int64_t n = n_;
        counters_->passes += 1;
        double obj = 0.0;
        const uint64_t h = PassMemo::hash(labels, n);
        if (auto seen = memo_.find(labels, n, h)) {
            counters_->reused_passes += 1;
            obj = seen->objective;
            *changed = seen->changed;
            std::copy(seen->best.begin(), seen->best.end(), best);
            std::copy(seen->best_cost.begin(), seen->best_cost.end(), best_cost);
            moves_of(labels, best);
        } else {
            move_bounds(ref_, last_, cur_);
            build_tables(cur_);
            obj = bounded_pass(labels, best, best_cost, own_known_, cur_, changed, *counters_);
            ref_ = cur_;  // every bound now refers to these centres
            auto entry = std::make_shared<PassMemo::Entry>();
            entry->labels.assign(labels, labels + n);
            entry->hash = h;
            entry->objective = obj;
            entry->changed = *changed;
            entry->best.assign(best, best + n);
            entry->best_cost.assign(best_cost, best_cost + n);
            memo_.insert(std::move(entry));
        }
        last_ = cur_;
        return obj;
    }

    // The labels only are kept or put back: the objective and the labels are the run's result.
    void keep() { own_known_ = true; }
    void restore() {}

    void update(int32_t* labels, const double* best_cost) {
        apply_deltas();
        if (any_empty(tally_, k_)) {
            reseed(labels, best_cost, n_, tally_.sizes.data(), k_);
            recount(labels);
            own_known_ = false;  // reseeded objects changed cluster
        }
        centres_from_tally(rows_, sh_, slots_, k_, tally_, cur_.dense.data(), cur_.cat.data());
    }

private:
    // A lower bound of sqrt(D) from a computed cost: D >= (cost - abs) / (1 + rel).
    double lower(double computed) const {
        const double v = (computed * (1.0 - 2.0 * rel_) - abs_);
        return v > 0.0 ? std::sqrt(v) * (1.0 - rel_) : 0.0;
    }

    // Which centres differ from the last pass's (bitwise), and how far each moved from ref, the
    // centres of the bounds (rounded up); the bounds are lowered by that.
    void move_bounds(const Centres& ref, const Centres& last, const Centres& cur) {
        const int64_t k = k_, d = sh_.d, width = sh_.width;
        bool any = false;
        for (int64_t j = 0; j < k; ++j) {
            const double* a = cur.dense.data() + j * d;
            const double* b = ref.dense.data() + j * d;
            const double* ma = cur.cat.data() + j * width;
            const double* mb = ref.cat.data() + j * width;
            changed_centre_[static_cast<size_t>(j)] =
                same_bits(a, last.dense.data() + j * d, d) && same_bits(ma, last.cat.data() + j * width, width) ? 0 : 1;
            double move = 0.0;
            if (!(same_bits(a, b, d) && same_bits(ma, mb, width))) {
                double s = 0.0;
                for (int64_t e = 0; e < d; ++e) s += (a[e] - b[e]) * (a[e] - b[e]);
                s *= rows_.dense_weight;
                for (int64_t i = 0; i < sh_.r; ++i) {
                    double t = 0.0;
                    for (int64_t e = rows_.offsets[i]; e < rows_.offsets[i + 1]; ++e) t += (ma[e] - mb[e]) * (ma[e] - mb[e]);
                    s += rows_.weights[i] * t;
                }
                move = std::sqrt(s) * (1.0 + move_rel_) + std::numeric_limits<double>::min();
                any = true;
            }
            moved_by_[static_cast<size_t>(j)] = move;
        }
        if (!any) return;
        for (int64_t x = 0; x < n_; ++x) {
            double* lb = lb_.data() + x * k;
            for (int64_t j = 0; j < k; ++j) {
                const double v = (lb[j] - moved_by_[static_cast<size_t>(j)]) * (1.0 - 4.0 * std::numeric_limits<double>::epsilon());
                lb[j] = v > 0.0 ? v : 0.0;
            }
        }
    }

    // Engine::build_table for the squared Euclidean distance (uc), one slot row per centre.
    void build_tables(const Centres& c) {
        const int64_t* off = rows_.offsets;
        std::fill(table_.begin(), table_.end(), 0.0);
        for (int64_t k = 0; k < k_; ++k) {
            double* t_k = table_.data() + k * slots_.count;
            for (int64_t i = 0; i < sh_.r; ++i) {
                const double* m = c.cat.data() + k * sh_.width + off[i];
                const int64_t k_i = off[i + 1] - off[i];
                const double w = rows_.weights[i];
                double* t = t_k + slots_.of[static_cast<size_t>(i)];
                double n2 = 0.0;
                for (int64_t l = 0; l < k_i; ++l) n2 += m[l] * m[l];
                for (int64_t l = 0; l < k_i; ++l) t[l] = w * (1.0 - 2.0 * m[l] + n2);
            }
        }
    }

    // out[q] = object_costs' value for object xs[q] and centre js[q] (the weighted dense sum, then
    // the table entries of the partitions in order), kBatch costs at a time: their chains are
    // interleaved, so no add waits for the one before it in another chain (one chain alone runs
    // at the latency of an add), and each chain performs exactly the operations of one cost.
    // Labels are read in place, in the rows' code width: label l (-1 for missing) of partition i
    // is the table's slot of[i] + l (lookup.hpp's Slots and label_code).
    static constexpr int64_t kBatch = 8;

    void costs(const int64_t* xs, const int32_t* js, int64_t count, const Centres& c, double* out) const {
        const int64_t* base = slots_.of.data();
        const int64_t d = sh_.d, r = sh_.r, slots = slots_.count;
        for (int64_t q0 = 0; q0 < count; q0 += kBatch) {
            const int64_t* bx = xs + q0;
            const int32_t* bj = js + q0;
            const int64_t m = std::min(kBatch, count - q0);
            const Code* lab[kBatch];
            const double* tab[kBatch];
            double acc[kBatch];
            for (int64_t b = 0; b < kBatch; ++b) {
                const int64_t q = b < m ? b : m - 1;  // the tail repeats its last cost
                lab[b] = codes_ + bx[q] * r;
                tab[b] = table_.data() + bj[q] * slots;
                acc[b] = 0.0;
            }
            if (d > 0) {
                double s[kBatch];
                for (int64_t b = 0; b < kBatch; ++b) s[b] = 0.0;
                for (int64_t e = 0; e < d; ++e) {
                    for (int64_t b = 0; b < kBatch; ++b) {
                        const int64_t q = b < m ? b : m - 1;
                        const double t = rows_.X[bx[q] * d + e] - c.dense[static_cast<size_t>(bj[q] * d + e)];
                        s[b] += t * t;
                    }
                }
                for (int64_t b = 0; b < kBatch; ++b) acc[b] = rows_.dense_weight * s[b];
            }
            for (int64_t i = 0; i < r; ++i) {
                const int64_t si = base[i];
                for (int64_t b = 0; b < kBatch; ++b) acc[b] += tab[b][si + label_code(lab[b][i])];
            }
            for (int64_t b = 0; b < m; ++b) out[q0 + b] = acc[b];
        }
    }

    // Engine::lloyd_pass_impl with costs computed only where needed (see the class comment):
    // the same per-chunk objective (from 0.0, objects in order), best labels with the same tie
    // rule, moves tallied as deltas, and the dense sums of a chunk with a move summed again.
    // Per block of kBlock objects (so their label rows are still cached for the second phase):
    // the own costs that changed, then the other costs no bound excludes (both in batches), then
    // the decisions in object order.
    static constexpr int64_t kBlock = 256;

    double bounded_pass(const int32_t* labels, int32_t* best, double* best_cost, bool own_known,
                        const Centres& c, int64_t* changed, RunCounters& counters) {
        const int64_t k = k_, d = sh_.d;
        std::fill(delta_counts_.begin(), delta_counts_.end(), 0);
        std::fill(delta_sizes_.begin(), delta_sizes_.end(), 0);
        double total = 0.0;
        int64_t moved_total = 0, evaluated = 0, skipped = 0;
        for (int64_t ch = 0; ch < chunks_; ++ch) {
            const int64_t chunk_stop = std::min(n_, (ch + 1) * kChunk);
            double objective = 0.0;
            int64_t moved = 0;
            for (int64_t start = ch * kChunk; start < chunk_stop; start += kBlock) {
                const int64_t stop = std::min(chunk_stop, start + kBlock);
                int64_t count = 0;
                for (int64_t x = start; x < stop; ++x) {
                    const int32_t cur = labels[x];
                    if (own_known && !changed_centre_[static_cast<size_t>(cur)]) {
                        own_[static_cast<size_t>(x - start)] = best_cost[x];
                    } else {
                        pair_x_[static_cast<size_t>(count)] = x;
                        pair_j_[static_cast<size_t>(count)] = cur;
                        count += 1;
                    }
                }
                costs(pair_x_.data(), pair_j_.data(), count, c, value_.data());
                evaluated += count;
                for (int64_t q = 0; q < count; ++q) {
                    const int64_t x = pair_x_[static_cast<size_t>(q)];
                    const double v = value_[static_cast<size_t>(q)];
                    own_[static_cast<size_t>(x - start)] = v;
                    lb_[static_cast<size_t>(x * k + labels[x])] = lower(v);
                }
                count = 0;
                for (int64_t x = start; x < stop; ++x) {
                    const int64_t cur = labels[x];
                    const double* lb = lb_.data() + x * k;
                    const double bar = own_[static_cast<size_t>(x - start)] * (1.0 + 2.0 * rel_) + abs_;
                    for (int64_t j = 0; j < k; ++j) {
                        if (j == cur) continue;
                        if (lb[j] * lb[j] * (1.0 - 2.0 * rel_) > bar) continue;
                        pair_x_[static_cast<size_t>(count)] = x;
                        pair_j_[static_cast<size_t>(count)] = static_cast<int32_t>(j);
                        count += 1;
                    }
                }
                costs(pair_x_.data(), pair_j_.data(), count, c, value_.data());
                evaluated += count;
                skipped += (stop - start) * (k - 1) - count;
                int64_t q = 0;
                for (int64_t x = start; x < stop; ++x) {
                    const int64_t cur = labels[x];
                    const double own = own_[static_cast<size_t>(x - start)];
                    double* lb = lb_.data() + x * k;
                    int64_t b = cur;
                    double bv = own;
                    for (; q < count && pair_x_[static_cast<size_t>(q)] == x; ++q) {
                        const int64_t j = pair_j_[static_cast<size_t>(q)];
                        const double v = value_[static_cast<size_t>(q)];
                        lb[j] = lower(v);
                        // j ascending: argmin's lowest index among the minima; a tie with own keeps cur.
                        if (v < bv) {
                            b = j;
                            bv = v;
                        }
                    }
                    objective += own;
                    best[x] = static_cast<int32_t>(b);
                    best_cost[x] = bv;
                    if (b == cur) continue;
                    moved += 1;
                    tally_move(x, cur, b);
                }
            }
            if (moved > 0 && d > 0) chunk_dense_sums(ch, best);
            total += objective;
            moved_total += moved;
        }
        counters.evaluated += evaluated;
        counters.skipped += skipped;
        *changed = moved_total;
        return total;
    }

    // The tally changes of a pass taken from the memo: its moves, and the dense sums of every
    // chunk with a move summed again (what the pass itself would have left).
    void moves_of(const int32_t* labels, const int32_t* best) {
        std::fill(delta_counts_.begin(), delta_counts_.end(), 0);
        std::fill(delta_sizes_.begin(), delta_sizes_.end(), 0);
        for (int64_t ch = 0; ch < chunks_; ++ch) {
            const int64_t stop = std::min(n_, (ch + 1) * kChunk);
            bool moved = false;
            for (int64_t x = ch * kChunk; x < stop; ++x) {
                if (best[x] == labels[x]) continue;
                moved = true;
                tally_move(x, labels[x], best[x]);
            }
            if (moved && sh_.d > 0) chunk_dense_sums(ch, best);
        }
    }

    // Object x moves from cluster `from` to `to`: the change of sizes and label counts.
    void tally_move(int64_t x, int64_t from, int64_t to) {
        const int64_t r = sh_.r, slots = slots_.count;
        const int64_t* slot_of = slots_.of.data();
        delta_sizes_[static_cast<size_t>(from)] -= 1;
        delta_sizes_[static_cast<size_t>(to)] += 1;
        const Code* lab = codes_ + x * r;
        int64_t* row_from = delta_counts_.data() + from * slots;
        int64_t* row_to = delta_counts_.data() + to * slots;
        for (int64_t i = 0; i < r; ++i) {
            const int64_t slot = slot_of[i] + label_code(lab[i]);
            row_from[slot] -= 1;
            row_to[slot] += 1;
        }
    }

    void chunk_dense_sums(int64_t c, const int32_t* assignment) {
        const int64_t d = sh_.d;
        double* sums = chunk_sums_.data() + c * (k_ + 1) * d;
        std::fill(sums, sums + (k_ + 1) * d, 0.0);
        const int64_t stop = std::min(n_, (c + 1) * kChunk);
        for (int64_t x = c * kChunk; x < stop; ++x) {
            const double* xr = rows_.X + x * d;
            double* to = sums + assignment[x] * d;
            for (int64_t j = 0; j < d; ++j) to[j] += xr[j];
        }
    }

    // The tally from scratch (Engine::count then reduce): integer counts, and dense sums per
    // chunk added in chunk order.
    void recount(const int32_t* labels) {
        const int64_t k = k_, r = sh_.r, slots = slots_.count;
        const int64_t* slot_of = slots_.of.data();
        tally_.counts.assign(static_cast<size_t>((k + 1) * slots), 0);
        tally_.sizes.assign(static_cast<size_t>(k + 1), 0);
        for (int64_t x = 0; x < n_; ++x) {
            const int64_t l = labels[x];
            tally_.sizes[static_cast<size_t>(l)] += 1;
            int64_t* row = tally_.counts.data() + l * slots;
            const Code* lab = codes_ + x * r;
            for (int64_t i = 0; i < r; ++i) row[slot_of[i] + label_code(lab[i])] += 1;
        }
        if (sh_.d > 0) {
            for (int64_t c = 0; c < chunks_; ++c) chunk_dense_sums(c, labels);
        }
        reduce_sums();
    }

    // Engine::reduce(tally, true): the pass's count changes added, the dense sums again.
    void apply_deltas() {
        for (size_t e = 0; e < delta_counts_.size(); ++e) tally_.counts[e] += delta_counts_[e];
        for (size_t e = 0; e < delta_sizes_.size(); ++e) tally_.sizes[e] += delta_sizes_[e];
        reduce_sums();
    }

    void reduce_sums() {
        const int64_t per_chunk = (k_ + 1) * sh_.d;
        tally_.sums.assign(static_cast<size_t>(per_chunk), 0.0);
        for (int64_t c = 0; c < chunks_; ++c) {
            const double* sums = chunk_sums_.data() + c * per_chunk;
            for (int64_t e = 0; e < per_chunk; ++e) tally_.sums[static_cast<size_t>(e)] += sums[e];
        }
    }

    const MixedRows& rows_;
    const Code* codes_;                  // n x r label codes, the rows' own
    const Shape& sh_;
    const Slots& slots_;
    const int64_t k_, n_, chunks_;
    PassMemo& memo_;
    std::vector<double> acc_;
    std::vector<double> table_;          // k x slots: the uc cost of each label under each centre
    std::vector<double> own_, value_;    // per chunk: own costs; costs of the queued pairs
    std::vector<int64_t> pair_x_;        // per chunk: the queued (object, centre) pairs
    std::vector<int32_t> pair_j_;
    std::vector<double> lb_;             // n x k: lower bounds of sqrt(D) to ref's centres
    std::vector<double> moved_by_;       // k
    std::vector<char> changed_centre_;   // k
    double rel_ = 0.0, abs_ = 0.0, move_rel_ = 0.0;
    Tally tally_;
    std::vector<double> chunk_sums_;
    std::vector<int64_t> delta_counts_, delta_sizes_;
    // ref_: the centres the bounds refer to; last_: the centres of the last pass, to which
    // best_cost holds each object's cost when own_known_; cur_: the centres of the next pass.
    Centres ref_, last_, cur_;
    bool own_known_ = false;
    RunCounters* counters_ = nullptr;
};

// The candidates of a step over rows whose codes are of type Code (see candidate_runs).
template <class Code>
void run_candidates(const MixedRows& rows, const Shape& sh, const Slots& slots, int32_t n_shared,
                    const double* shared, SeedColumns& seeds, const double* shared_dense,
                    const double* shared_cat, int64_t n_candidates, const double* seed_dense,
                    const double* seed_cat, int64_t max_iter, double tol, int n_threads, PassMemo& memo,
                    void* labels, int32_t label_bytes, double* objectives, int64_t* n_iter,
                    std::vector<RunCounters>& counters) {
    const int64_t n = sh.n, d = sh.d, width = sh.width, k = int64_t{n_shared} + 1;
    const int team = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(n_threads, n_candidates)));
    std::exception_ptr error;
    std::mutex error_mutex;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
#endif
    for (int64_t c = 0; c < n_candidates; ++c) {
        try {
            std::vector<const double*> columns(static_cast<size_t>(k));
            std::vector<double> start_dense(static_cast<size_t>(k * d)), start_cat(static_cast<size_t>(k * width));
            for (int64_t j = 0; j < n_shared; ++j) columns[static_cast<size_t>(j)] = shared + j * n;
            columns[static_cast<size_t>(n_shared)] = seeds.acquire(c);
            if (d > 0) {
                std::copy(shared_dense, shared_dense + n_shared * d, start_dense.begin());
                std::copy(seed_dense + c * d, seed_dense + (c + 1) * d, start_dense.begin() + n_shared * d);
            }
            if (width > 0) {
                std::copy(shared_cat, shared_cat + n_shared * width, start_cat.begin());
                std::copy(seed_cat + c * width, seed_cat + (c + 1) * width, start_cat.begin() + n_shared * width);
            }
            CandidateRun<Code> run(rows, sh, slots, k, memo);
            run.run(columns.data(), [&seeds, c]() { seeds.release(c); }, start_dense.data(), start_cat.data(),
                    max_iter, tol,
                    static_cast<uint8_t*>(labels) + c * n * label_bytes, label_bytes, objectives + c, n_iter + c,
                    counters[static_cast<size_t>(c)]);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    }
    (void)team;
    if (error) std::rethrow_exception(error);
}

}  // namespace

void candidate_runs(const MixedRows& rows, int32_t n_shared, const double* shared_dense,
                    const double* shared_cat, int64_t n_candidates, const double* seed_dense,
                    const double* seed_cat, int64_t max_iter, double tol, int n_threads,
                    int64_t memo_bytes, int64_t seed_batch, void* labels, int32_t label_bytes,
                    double* objectives, int64_t* n_iter, int64_t* stats) {
    const Shape sh = validate_rows(rows);
    require_unweighted(rows, "candidate_runs");
    if (rows.distance != kUc) fail("candidate_runs takes the squared Euclidean distance (uc) only");
    if (n_shared < 0) fail("n_shared must be >= 0, got " + str(int64_t{n_shared}));
    if (n_candidates < 0) fail("n_candidates must be >= 0, got " + str(n_candidates));
    const int64_t k = int64_t{n_shared} + 1;
    if (k > sh.n) fail("n_shared + 1 must be <= n (" + str(sh.n) + "), got " + str(k));
    if (label_bytes != 1 && label_bytes != 2 && label_bytes != 4) {
        fail("label_bytes must be 1, 2 or 4, got " + str(int64_t{label_bytes}));
    }
    const int64_t code_limit = code_cluster_limit(label_bytes);
    if (k > code_limit) {
        fail("n_shared + 1 = " + str(k) + " clusters do not fit in codes of " + str(int64_t{label_bytes}) +
             " byte(s): at most " + str(code_limit));
    }
    if (max_iter < 0) fail("max_iter must be >= 0, got " + str(max_iter));
    if (seed_batch < 1) fail("seed_batch must be >= 1, got " + str(seed_batch));
    if (!(tol >= 0.0 && std::isfinite(tol))) fail("tol must be finite and >= 0, got " + str(tol));
    if (stats == nullptr) fail("stats is null");
    if (n_candidates > 0 && (labels == nullptr || objectives == nullptr || n_iter == nullptr)) {
        fail("labels, objectives or n_iter is null");
    }
    if (n_shared > 0) check_centers(sh, n_shared, shared_dense, shared_cat);
    if (n_candidates > 0) check_centers(sh, n_candidates, seed_dense, seed_cat);
    for (int i = 0; i < 5; ++i) stats[i] = 0;
    if (n_candidates == 0) return;
    const int64_t n = sh.n;
    const Slots slots(rows.offsets, sh.r);
    {
        Engine engine(rows, sh, 1, n_threads);
        engine.check_labels();
    }
    // The costs to the shared centres are the same for every candidate: computed once.
    std::vector<double> shared(static_cast<size_t>(n_shared * n));
    if (n_shared > 0) cost_columns(rows, sh, n_shared, shared_dense, shared_cat, shared.data(), n_threads);
    SeedColumns seeds(rows, sh, n_candidates, seed_batch, seed_dense, seed_cat);

    PassMemo memo(memo_bytes);
    std::vector<RunCounters> counters(static_cast<size_t>(n_candidates));
    with_label_codes(rows.labels, rows.label_bytes, [&](const auto* codes) {
        using Code = std::remove_cv_t<std::remove_pointer_t<decltype(codes)>>;
        run_candidates<Code>(rows, sh, slots, n_shared, shared.data(), seeds, shared_dense, shared_cat,
                             n_candidates, seed_dense, seed_cat, max_iter, tol, n_threads, memo, labels,
                             label_bytes, objectives, n_iter, counters);
    });
    stats[0] = n * (n_shared + n_candidates);
    for (const RunCounters& rc : counters) {
        stats[0] += rc.evaluated;
        stats[1] += rc.skipped;
        stats[2] += rc.passes;
        stats[3] += rc.reused_passes;
    }
    stats[4] = n * k;  // costs a full pass computes, for the ratio
}

}  // namespace cclust
