"""Graphs of objects and clusters (HBGF, Fern & Brodley 2004): the bipartite METIS cut with
identical objects merged, the one-hot matrix in the canonical cluster order, and the affinities
and checks that the bipartite methods share."""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust._codes import missing_mask
from cclust.ensemble import Ensemble
from cclust.graph._checks import canonical_cluster_order
from cclust.graph._metis import EDGE_WEIGHT_RESOLUTION, honour_n_clusters, partition_graph
from cclust.graph._merge import Groups, cap_groups, identical_rows, merge_cap
from cclust.validation import RandomStateLike, require_memory

#: Peak bytes per adjacency entry of a bipartite METIS call (both directions of every edge):
#: the transposed copy, the assembled graph, METIS's integer inputs and METIS's own coarser
#: graphs. Measured: METIS alone 52 bytes an entry at 2 * 10^4 objects x 100 partitions (a
#: Python allocation profile), the whole call's resident-set peak 96 at 10^5 objects x 100
#: partitions of 8 to 317 clusters (``benchmarks/bench_memory_scale.py``).
BIPARTITE_BYTES_PER_ENTRY = 96

#: What a refusal of METIS's bipartite graph advises: the transfer cut of the same object-cluster
#: graph (tcut: Fern & Brodley 2004 cut it spectrally as well as with METIS; Li, Wu & Chang
#: 2012's transfer cut reads the label codes, 124 MiB at 10^6 objects x 100 partitions) or KCC.
_BIPARTITE_ADVICE = ("use tcut (the same object-cluster graph cut spectrally, in memory linear in n r) or kcc (no "
                     "graph), or fuse fewer partitions or objects (ensemble.take(...))")


def bipartite_bytes(n_edges: int) -> int:
    """Peak bytes of METIS on a bipartite graph of ``n_edges`` object-cluster edges (each an
    entry in both directions): :data:`BIPARTITE_BYTES_PER_ENTRY` an adjacency entry. What
    :func:`partition_bipartite_groups` asks of the memory budget, and what the size estimate
    (:func:`cclust.graph.estimate_clusters`) weighs before it chooses its fine cut."""
    return BIPARTITE_BYTES_PER_ENTRY * 2 * int(n_edges)


def bipartite_partition(M: Any, n_clusters: int, *, random_state: RandomStateLike, ufactor: int | None,
                        object_weights: npt.ArrayLike | None = None, max_bytes: int | None = None
                        ) -> tuple[npt.NDArray[np.int64], float, int]:
    """Partition the bipartite graph [[0, M], [M.T, 0]] of objects and clusters (HBGF, WOHB).

    Objects with identical rows of ``M`` (the same clusters with the same weights) become one
    vertex of weight m (their number) whose edges weigh m times theirs: the cut and the
    balance of any partition keeping them together are those of the unmerged graph, and the
    graph METIS coarsens shrinks (letter: 20000 objects, 13912 distinct; birch1: 100000,
    15,904). Merged objects always share a part, as the HBGF cut already favours. A group is
    merged into vertices of at most ``n / (MERGE_CAP_DIVISOR * n_clusters)`` objects each, so
    that METIS can still balance the parts as it does on the unmerged graph.

    ``object_weights`` (int, one per object; None: all 1) are the objects' vertex weights, e.g.
    :func:`size_weights`; a merged vertex weighs the sum of its objects', a cluster the mean
    of its members' (1 when all weigh 1). METIS's memory is asked of the budget ``max_bytes``
    (:func:`partition_bipartite_groups`).

    Returns the objects' labels (every one of the ``n_clusters`` used), the cut and the number
    of objects moved to fill parts that held only cluster vertices.
    """
    n = M.shape[0]
    M = sp.csr_matrix(M, dtype=np.float64)
    M.sort_indices()
    groups = cap_groups(identical_rows(M), merge_cap(n, n_clusters))
    G = M if groups is None else _scale_rows(M[groups[0]], groups[2])  # row selection keeps sorted indices
    labels, cluster_part, cut = partition_bipartite_groups(G, groups, M.data.max() if M.nnz else None, n_clusters,
                                                     random_state=random_state, ufactor=ufactor,
                                                     object_weights=object_weights, max_bytes=max_bytes)
    moved = 0
    if has_empty_part(labels, n_clusters):
        labels, moved = honour_n_clusters(labels, bipartite_affinity(M, cluster_part, n_clusters), n_clusters)
    return labels, cut, moved

def _scale_rows(G, counts):
    """Multiply every entry of CSR row g by ``counts[g]`` (the merged objects' edges)."""
    G.data = G.data * np.repeat(counts.astype(np.float64), np.diff(G.indptr))
    return G


def partition_bipartite_groups(G: Any, groups: Groups | None, top: float | None, n_clusters: int, *,
                               random_state: RandomStateLike, ufactor: int | None,
                               object_weights: npt.ArrayLike | None = None, max_bytes: int | None = None
                               ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], float]:
    """METIS on [[0, G], [G^T, 0]], G's rows being objects merged by ``groups`` (see
    :func:`bipartite_partition`) and its columns clusters.

    ``G`` is CSR with sorted indices; ``top`` is the heaviest edge of the unmerged graph;
    ``object_weights`` the (unmerged) objects' vertex weights or None (all 1); ``max_bytes``
    the memory budget (:func:`cclust.validation.memory_budget`) the call's
    :func:`bipartite_bytes` must fit.
    Returns the part of every object (unmerged), the part of every cluster and the cut.
    """
    m, n_c = G.shape
    require_memory(bipartite_bytes(G.nnz),
                   f"METIS on the bipartite graph of {m} objects and {n_c} clusters ({2 * G.nnz} edge entries)",
                   _BIPARTITE_ADVICE, max_bytes)
    row_weights: npt.NDArray[np.integer[Any]] | None
    if groups is None:
        resolution = EDGE_WEIGHT_RESOLUTION
        row_weights = None if object_weights is None else np.asarray(object_weights, dtype=np.int64)
    else:
        row_weights = (groups[2] if object_weights is None else
                       np.bincount(groups[1], weights=object_weights, minlength=m).astype(np.int64))
        # The unmerged graph's scale (heaviest single edge -> EDGE_WEIGHT_RESOLUTION), so that
        # a merged edge weighs about m times the unmerged integer weight.
        resolution = EDGE_WEIGHT_RESOLUTION * (G.data.max() / top) if top is not None else EDGE_WEIGHT_RESOLUTION
    if row_weights is None:
        vertex_weights = None
    elif object_weights is None:
        vertex_weights = np.concatenate([row_weights, np.ones(n_c, dtype=np.int64)])
    else:
        # A cluster weighs the mean of its objects' weights, each object counted by its edge
        # (its membership, WOHB): 1 when every object weighs 1. G's rows of merged objects
        # carry their count in the edges already, so the rows' mean weights are averaged.
        mean_weight = row_weights / (1.0 if groups is None else groups[2].astype(np.float64))
        edge_sum = G.T @ np.ones(m)
        mass = G.T @ mean_weight
        cluster_weights = np.maximum(1, np.rint(mass / np.where(edge_sum > 0, edge_sum, 1.0))).astype(np.int64)
        vertex_weights = np.concatenate([row_weights, cluster_weights])
    Gc = G.tocsc()  # SciPy's transpose visits the rows in order: every column comes out sorted
    Gc.sort_indices()
    # [[0, G], [G^T, 0]] assembled directly in CSR: object rows then cluster rows.
    nnz = G.nnz
    index = np.int32 if 2 * nnz + m + n_c < np.iinfo(np.int32).max else np.int64
    data = np.concatenate([G.data, Gc.data])
    indices = np.concatenate([G.indices, Gc.indices]).astype(index, copy=False)
    indices[:nnz] += m
    indptr = np.concatenate([G.indptr, Gc.indptr[1:]]).astype(index, copy=False)
    indptr[m + 1:] += nnz
    W = sp.csr_matrix((data, indices, indptr), shape=(m + n_c, m + n_c))
    W.has_sorted_indices = True
    parts, cut = partition_graph(W, n_clusters, random_state=random_state, ufactor=ufactor, symmetric=True,
                                 vertex_weights=vertex_weights, resolution=resolution)
    return (parts[:m] if groups is None else parts[:m][groups[1]]), parts[m:], cut


def bipartite_affinity(rows: Any, cluster_part: npt.NDArray[np.integer[Any]], n_clusters: int) -> npt.NDArray[np.float64]:
    """Weight of each row's clusters lying in each part: what :func:`honour_n_clusters` weighs
    when a part of the bipartite graph holds only clusters. Dense (rows x n_clusters), so
    formed only then."""
    n_c = cluster_part.shape[0]
    member = sp.csr_matrix((np.ones(n_c), (np.arange(n_c), cluster_part)), shape=(n_c, n_clusters))
    return np.asarray((rows @ member).todense())


def has_empty_part(labels: npt.NDArray[np.integer[Any]], n_clusters: int) -> bool:
    """Whether one of the parts ``0..n_clusters-1`` holds no object."""
    return bool(np.bincount(labels, minlength=n_clusters).min() == 0)


#: Rows of the label matrix read at once when a one-hot is written from it.
_ROW_BLOCK = 1 << 14


def one_hot_in_order(ensemble: Ensemble, order: npt.NDArray[np.integer[Any]],
                     rows: npt.NDArray[np.integer[Any]] | None = None,
                     values: npt.ArrayLike | None = None) -> Any:
    """``ensemble.one_hot()[rows][:, order]`` with sorted indices, built from the labels.

    Column j is cluster ``order[j]``; each row lists its clusters' positions in ``order``,
    sorted, so no sparse matrix is permuted and re-sorted. ``rows`` selects objects (all by
    default); ``values[j]`` is the entry of every object in column j (1.0 by default).
    """
    L = ensemble.labels
    n_rows = L.shape[0] if rows is None else rows.shape[0]
    r = L.shape[1]
    n_c = int(ensemble.offsets[-1])
    index_dtype = np.int32 if max(n_rows * r, n_c) < np.iinfo(np.int32).max else np.int64
    rank = np.empty(n_c + 1, dtype=index_dtype)
    rank[order] = np.arange(n_c, dtype=index_dtype)
    rank[n_c] = n_c  # a missing label's rank: sorts after every cluster's, then dropped
    starts = ensemble.offsets[:-1]   # int64: the block's positions index ``rank`` without a cast
    values = None if values is None else np.asarray(values, dtype=np.float64)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    if ensemble.has_missing:
        for lo in range(0, n_rows, _ROW_BLOCK):
            hi = min(n_rows, lo + _ROW_BLOCK)
            block = L[lo:hi] if rows is None else L[rows[lo:hi]]
            indptr[lo + 1:hi + 1] = (block >= 0).sum(axis=1)
        np.cumsum(indptr, out=indptr)
    else:
        indptr[1:] = np.arange(r, n_rows * r + 1, r)
    nnz = int(indptr[-1])
    indices = np.empty(nnz, dtype=index_dtype)
    data = np.ones(nnz) if values is None else np.empty(nnz)
    # Row blocks: the ranks of one block at a time are sorted and copied out, so nothing of n x r
    # is allocated besides the matrix itself.
    for lo in range(0, n_rows, _ROW_BLOCK):
        hi = min(n_rows, lo + _ROW_BLOCK)
        block = L[lo:hi] if rows is None else L[rows[lo:hi]]
        R = block + starts
        if ensemble.has_missing:
            R[block < 0] = n_c
        R = rank[R]
        R.sort(axis=1)
        R = R[R < n_c] if ensemble.has_missing else R.reshape(-1)
        indices[indptr[lo]:indptr[hi]] = R
        if values is not None:
            data[indptr[lo]:indptr[hi]] = values[R]
    B = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_c))
    B.has_sorted_indices = True
    return B


def hbgf_graph_edges(ensemble: Ensemble, n_clusters: int) -> tuple[Groups | None, int, int]:
    """The size of HBGF's merged bipartite graph (:func:`hbgf_graph`) before any of it is formed.

    Counted from the stored label codes: the groups of identically labelled objects
    (:meth:`cclust.Ensemble.distinct_rows`, cached on the ensemble) capped as :func:`cap_groups`
    caps them, and the labels of one object per group. Returns ``(groups, rows, edges)``: the
    capped groups (None when every row stays its own), the number of object rows and the
    object-cluster edges (:func:`bipartite_bytes` of them is what METIS needs).
    """
    groups = cap_groups(ensemble.distinct_rows(), merge_cap(ensemble.n_samples, n_clusters))
    codes = ensemble.compact_labels()
    rows = codes.shape[0] if groups is None else int(groups[0].shape[0])
    if not ensemble.has_missing:
        return groups, rows, rows * codes.shape[1]
    labelled = 0
    for lo in range(0, rows, _ROW_BLOCK):   # blocks bound the boolean copy
        hi = min(rows, lo + _ROW_BLOCK)
        block = codes[lo:hi] if groups is None else codes[groups[0][lo:hi]]
        labelled += block.size - int(np.count_nonzero(missing_mask(block)))
    return groups, rows, labelled


def require_hbgf_graph(ensemble: Ensemble, n_clusters: int, max_bytes: int | None = None) -> Groups | None:
    """Refuse HBGF's bipartite METIS cut past the memory budget before its graph (or the int32
    label matrix it is written from) exists: :func:`partition_bipartite_groups`'s figure on the
    count of :func:`hbgf_graph_edges`. Returns the capped groups."""
    groups, rows, edges = hbgf_graph_edges(ensemble, n_clusters)
    require_memory(bipartite_bytes(edges),
                   f"METIS on the bipartite graph of {rows} objects and {int(ensemble.offsets[-1])} clusters "
                   f"({2 * edges} edge entries)", _BIPARTITE_ADVICE, max_bytes)
    return groups


def hbgf_graph(ensemble: Ensemble, n_clusters: int, max_bytes: int | None = None
               ) -> tuple[Any, Groups | None, npt.NDArray[np.float64]]:
    """HBGF's merged bipartite graph straight from the label matrix.

    Equal to ``bipartite_partition``'s on ``ensemble.one_hot(weighted=True)[:, order]`` (same
    rows, columns, values and index order, so METIS gets the same input), without forming,
    permuting and re-sorting the one-hot: the rows of distinct objects are their clusters'
    canonical ranks, sorted.

    Returns ``(G, groups, weight_by_rank)``: G is the CSR of the (merged) objects' rows, its
    entries scaled by the group sizes; ``groups`` as :func:`cap_groups` returns it; and the
    partition weight of every column of G. Refused past ``max_bytes`` (the memory budget) before
    anything is formed (:func:`require_hbgf_graph`).
    """
    groups = require_hbgf_graph(ensemble, n_clusters, max_bytes)
    order = canonical_cluster_order(ensemble)
    weight_by_rank = np.repeat(ensemble.weights, ensemble.n_clusters)[order]
    G = one_hot_in_order(ensemble, order, rows=None if groups is None else groups[0], values=weight_by_rank)
    return (G if groups is None else _scale_rows(G, groups[2])), groups, weight_by_rank
