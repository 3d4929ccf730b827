// Thread helpers shared by every core: OpenMP when compiled in, a serial shim otherwise.
//
// Work is always cut into fixed-size chunks that do not depend on the thread count; floating
// partial results are kept per chunk and reduced in chunk order, so every result is bitwise the
// same for any number of threads.
#pragma once

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

}  // namespace cclust
