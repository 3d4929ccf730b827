"""Identical-row merging: a 64-bit hash mix, the groups of identical rows of a sparse matrix and
the cap on how many objects one merged vertex may stand for."""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

#: ``(first, inverse, counts)`` of groups of identical rows: the first row of every group, the
#: group of every row and the group sizes.
Groups = tuple[npt.NDArray[np.integer[Any]], npt.NDArray[np.integer[Any]], npt.NDArray[np.integer[Any]]]


def mix64(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64's finaliser on uint64 arrays: every input bit affects every output bit."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def identical_rows(M: Any) -> Groups | None:
    """Groups of identical rows of a CSR matrix with sorted indices, or None if all differ.

    Returns ``(first, inverse, counts)``: the first row of every group, in increasing order,
    the group of every row (``M[first][inverse]`` equals ``M``) and the group sizes. Rows are
    grouped by a 64-bit hash of their (column, value) entries, then every row is compared
    entry by entry with its group's first row; a hash collision (never seen, but possible)
    makes the function give up and return None, so a merge is always exact.
    """
    n, n_c = M.shape
    nnz = np.diff(M.indptr)
    if n < 2:
        return None
    keys = np.random.default_rng(0x5DEECE66D).integers(1, 2**63 - 1, size=n_c, dtype=np.int64).view(np.uint64)
    # One value per column (HBGF: the partition's weight) lets one gather hash every entry.
    col_value = np.zeros(n_c)
    col_value[M.indices] = M.data
    per_column = bool(np.array_equal(col_value[M.indices], M.data))
    if per_column:
        entry = mix64(keys ^ mix64(col_value.view(np.uint64)))[M.indices]
    else:
        entry = mix64(keys[M.indices] ^ mix64(np.ascontiguousarray(M.data, dtype=np.float64).view(np.uint64)))
    row_hash = np.zeros(n, dtype=np.uint64)
    full = nnz > 0
    if entry.size:
        row_hash[full] = np.add.reduceat(entry, M.indptr[:-1][full])
    _, first, inverse, counts = np.unique(row_hash, return_index=True, return_inverse=True, return_counts=True)
    if first.shape[0] == n:
        return None
    # Number the groups by first occurrence, so the merged graph keeps the objects' order.
    rank = np.empty_like(first)
    by_first = np.argsort(first, kind="stable")
    rank[by_first] = np.arange(first.shape[0])
    first, counts, inverse = first[by_first], counts[by_first], rank[inverse.reshape(-1)]
    rep = first[inverse]
    if not np.array_equal(nnz, nnz[rep]):
        return None
    row = np.repeat(np.arange(n), nnz)
    mirror = M.indptr[rep[row]] + (np.arange(M.indices.shape[0]) - M.indptr[row])
    if not np.array_equal(M.indices, M.indices[mirror]):
        return None
    if not per_column and not np.array_equal(M.data, M.data[mirror]):
        return None
    return first, inverse, counts


#: A merged vertex of identical objects weighs at most n / (MERGE_CAP_DIVISOR * n_clusters):
#: METIS balances the parts by vertex weight, and vertices heavy next to a part make a balanced
#: cut unreachable (one vertex of about 3000 identical objects in a 4800-object, 2-part problem
#: gave parts of 1,504 and 3,296 objects instead of about 2,400 each). With 64, parts stay within
#: METIS's own tolerance on such data; 8 to 32 still left them 4-12% off balance.
MERGE_CAP_DIVISOR = 64


def cap_groups(groups: Groups | None, cap: int) -> Groups | None:
    """Split groups of :func:`identical_rows` larger than ``cap`` into chunks of at most ``cap``.

    ``groups`` is ``(first, inverse, counts)`` or None (returned as is). Objects are assigned to
    the chunks of their group in object order, so the result is deterministic.
    """
    if groups is None:
        return None
    first, inverse, counts = groups
    if counts.max() <= cap:
        return groups
    n = inverse.shape[0]
    by_group = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(n, dtype=np.int64)
    rank[by_group] = np.arange(n) - np.repeat(starts, counts)
    key = inverse.astype(np.int64) * (int(counts.max()) // cap + 1) + rank // cap
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return first, inverse.reshape(-1), counts

def merge_cap(n: int, n_clusters: int) -> int:
    """Most objects one merged vertex may stand for: ``n / (MERGE_CAP_DIVISOR * n_clusters)``, at
    least 1, so that METIS can still balance the parts (see :func:`bipartite_partition`)."""
    return max(1, n // (MERGE_CAP_DIVISOR * n_clusters))
