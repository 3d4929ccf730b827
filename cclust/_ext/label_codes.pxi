# Included by the modules whose kernels read an ensemble's stored label codes in place
# (_contingency, _kmeans, _voting, _crowd_agreement): one reading of the three layouts, compiled into each.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t

cdef extern from "cclust/lookup.hpp" namespace "cclust" nogil:
    int64_t code_cluster_limit(int32_t label_bytes)


cdef class _Codes:
    """A label matrix of any of the three code widths (C-contiguous (n, r) int32 with -1 missing,
    or uint16 / uint8 with the type's largest value missing and at most 32767 / 127 clusters a
    partition): its address, width and shape.
    Holds the array, so the address stays valid as long as this object."""
    cdef const void* ptr
    cdef int32_t width
    cdef int64_t n, r
    cdef object array

    def __cinit__(self, labels):
        cdef const uint8_t[:, ::1] c8
        cdef const uint16_t[:, ::1] c16
        cdef const int32_t[:, ::1] c32
        dtype = getattr(labels, "dtype", None)
        self.array = labels
        self.ptr = NULL
        if dtype == np.uint8:
            c8 = labels
            self.width, self.n, self.r = 1, c8.shape[0], c8.shape[1]
            if c8.shape[0] > 0 and c8.shape[1] > 0:
                self.ptr = &c8[0, 0]
        elif dtype == np.uint16:
            c16 = labels
            self.width, self.n, self.r = 2, c16.shape[0], c16.shape[1]
            if c16.shape[0] > 0 and c16.shape[1] > 0:
                self.ptr = &c16[0, 0]
        elif dtype == np.int32:
            c32 = labels
            self.width, self.n, self.r = 4, c32.shape[0], c32.shape[1]
            if c32.shape[0] > 0 and c32.shape[1] > 0:
                self.ptr = &c32[0, 0]
        else:
            raise ValueError(f"labels must be an int32, uint16 or uint8 array, got {type(labels).__name__} "
                             f"of dtype {dtype}")

    def check_offsets(self, offsets):
        """Raise ValueError unless ``offsets`` has one entry per partition and one more."""
        if offsets.shape[0] != self.r + 1:
            raise ValueError(f"offsets has {offsets.shape[0]} entries, expected {self.r + 1}")
        limit = code_cluster_limit(self.width)           # lookup.hpp's label_code
        sizes = np.diff(np.asarray(offsets))
        if sizes.size and sizes.max() > limit:
            j = int(np.argmax(sizes))
            raise ValueError(f"partition {j} has {int(sizes[j])} clusters, more than codes of {self.width} "
                             f"byte(s) hold ({limit}): pass wider label codes")
