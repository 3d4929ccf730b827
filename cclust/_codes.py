"""Label codes in the narrowest integer type (:meth:`cclust.ensemble.Ensemble.compact_labels`).

uint8 holds partitions of up to 127 clusters and uint16 up to 32,767, each keeping its largest
value for a missing label; int32 (-1 = missing) holds the rest. The compiled passes read all
three layouts (``label_code`` in the C++ header lookup.hpp): a narrow code read as a signed
number is its label, and the missing code reads as -1, so each label costs one sign-extending
load. (Up to 255 and 65,535 clusters, as before, the missing code had to be wrapped to -1 by an
add and a second extension per label read, about a fifth of the instructions of GKCC's
candidate costs.) Shared by the Ensemble and the
engine's driver, which must not import each other.
"""
import numpy as np

#: Rows converted at once between layouts (a few MB of temporaries).
_BLOCK_ROWS = 1 << 15


def compact_dtype(n_clusters):
    """The narrowest label dtype for partitions of ``n_clusters`` clusters: uint8 up to 127
    clusters, uint16 up to 32,767, else int32 (the labels of the unsigned types stay below their
    signed counterparts' top); the unsigned types keep their largest value for a missing
    label."""
    top = int(np.max(n_clusters)) if np.size(n_clusters) else 0
    if top <= np.iinfo(np.int8).max:
        return np.dtype(np.uint8)
    if top <= np.iinfo(np.int16).max:
        return np.dtype(np.uint16)
    return np.dtype(np.int32)


def missing_mask(codes):
    """Where a label matrix in any of the three layouts (or signed labels with -1) marks a
    missing label."""
    if np.issubdtype(codes.dtype, np.signedinteger):
        return codes < 0
    return codes == np.iinfo(codes.dtype).max


def to_compact(matrix, dtype):
    """``matrix`` (int32 labels with -1, non-negative integer labels, or codes already of
    ``dtype``) as C-contiguous codes of ``dtype``, written row block by row block (a -1 wraps to
    the type's largest value)."""
    if matrix.dtype == dtype:
        return np.ascontiguousarray(matrix)
    out = np.empty(matrix.shape, dtype=dtype)
    for start in range(0, matrix.shape[0], _BLOCK_ROWS):
        out[start:start + _BLOCK_ROWS] = matrix[start:start + _BLOCK_ROWS].astype(dtype)
    return out


def labels_from_codes(codes):
    """The int32 labels (-1 = missing) of codes in any of the three layouts (a new array unless
    they already are int32)."""
    codes = np.asarray(codes)
    if codes.dtype == np.int32:
        return codes
    missing = np.iinfo(codes.dtype).max
    out = np.empty(codes.shape, dtype=np.int32)
    for start in range(0, codes.shape[0], _BLOCK_ROWS):
        block, to = codes[start:start + _BLOCK_ROWS], out[start:start + _BLOCK_ROWS]
        to[:] = block
        to[block == missing] = -1
    return out
