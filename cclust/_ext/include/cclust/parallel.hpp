// Thread helpers shared by every core: OpenMP when compiled in, a serial shim otherwise.
//
// Work is always cut into fixed-size chunks that do not depend on the thread count; floating
// partial results are kept per chunk and reduced in chunk order, so every result is bitwise the
// same for any number of threads.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace cclust {

constexpr int64_t kChunk = 4096;  // objects per chunk; fixed so reductions never depend on threads

inline int64_t n_chunks(int64_t n) { return (n + kChunk - 1) / kChunk; }

inline bool openmp_enabled() {
#if defined(_OPENMP)
    return true;
#else
    return false;
#endif
}

inline int max_threads() {
#if defined(_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
}

inline int thread_id() {
#if defined(_OPENMP)
    return omp_get_thread_num();
#else
    return 0;
#endif
}

// Runs body(c, start, stop) for every chunk c of [0, n): objects start..stop-1, the chunks split
// statically over n_threads threads. The chunks, not the threads, define the work, so anything a
// body writes per chunk is the same for any thread count.
template <class Body>
void for_each_chunk(int64_t n, int n_threads, Body&& body) {
    const int64_t chunks = n_chunks(n);
    (void)n_threads;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(n_threads < 1 ? 1 : n_threads)
#endif
    for (int64_t c = 0; c < chunks; ++c) body(c, c * kChunk, std::min(n, (c + 1) * kChunk));
}

// for_each_chunk with per-thread state: each thread calls make_state() once, before its first
// chunk, and passes what it returns (a value or a reference) to every body(state, c, start, stop)
// it runs. For scratch buffers, and for per-thread tallies of integers (exact in any order).
template <class MakeState, class Body>
void for_each_chunk_with(int64_t n, int n_threads, MakeState&& make_state, Body&& body) {
    const int64_t chunks = n_chunks(n);
    (void)n_threads;
#if defined(_OPENMP)
#pragma omp parallel num_threads(n_threads < 1 ? 1 : n_threads)
#endif
    {
        auto&& state = make_state();
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
        for (int64_t c = 0; c < chunks; ++c) body(state, c, c * kChunk, std::min(n, (c + 1) * kChunk));
    }
}

// The lowest index any thread reports: the object a validation error names, so the message is the
// same for any thread count. Report at most once per chunk (its first bad object): report() takes
// a lock, which only the error path pays.
class FirstBad {
  public:
    void report(int64_t index) {
#if defined(_OPENMP)
#pragma omp critical(cclust_first_bad)
#endif
        {
            if (index_ < 0 || index < index_) index_ = index;
        }
    }
    bool found() const { return index_ >= 0; }
    int64_t index() const { return index_; }

  private:
    int64_t index_ = -1;
};

}  // namespace cclust
