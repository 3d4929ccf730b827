# Declarations of the pure C++ cores (include/cclust/*.hpp). Every function is `except +` so a
# C++ exception becomes a Python exception, and `nogil` so wrappers can release the GIL.
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp cimport bool as cbool


cdef extern from "cclust/parallel.hpp" namespace "cclust" nogil:
    cbool openmp_enabled()
    int max_threads()


cdef extern from "cclust/contingency.hpp" namespace "cclust" nogil:
    void contingency_ensemble(const int32_t* ensemble, int64_t n, int64_t r,
                              const int64_t* offsets, const int32_t* labels,
                              int32_t n_clusters, int64_t* out, int n_threads) except +
    void contingency_pair(const int64_t* a, const int64_t* b, int64_t n, int64_t ka,
                          int64_t kb, int64_t* out, int n_threads) except +
    int64_t relabel_dense(const int64_t* labels, int64_t n, int64_t max_value,
                          int64_t* out, int n_threads) except +
