"""The one METIS call (:func:`partition_graph`) and the only place where similarities become
integer edge weights (:func:`integer_edge_weights`); the functions every cut shares (filling empty
parts, random tie-breaking, the sparse nearest-neighbour graph)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.validation import RandomStateLike
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.validation import address_space_left, check_random_state, format_bytes, require_address_space, require_memory
from cclust.graph._checks import _idx_bytes, metis_bytes


#: Integer edge weight METIS receives for the heaviest edge of a graph; the others are scaled in
#: proportion and rounded (see the module docstring).
EDGE_WEIGHT_RESOLUTION = 10_000

#: Rows of the similarity computed at once by the sparse (nearest-neighbour) routes.
_CHUNK_ROWS = 256

# -- the METIS call ------------------------------------------------------------------------------

def integer_edge_weights(values: npt.ArrayLike, resolution: float = EDGE_WEIGHT_RESOLUTION) -> npt.NDArray[np.int64]:
    """Scale positive similarities so the largest is ``resolution`` and round them to integers.

    This is the one place where cclust turns similarities into METIS's integer weights.
    """
    values = np.asarray(values, dtype=np.float64)
    top = values.max() if values.size else 0.0
    if top <= 0:
        return np.zeros(values.shape, dtype=np.int64)
    return np.rint(values * (resolution / top)).astype(np.int64)


def partition_graph(similarity: Any, n_parts: int, *, random_state: RandomStateLike = None,
                    ufactor: int | None = None, symmetric: bool = False,
                    vertex_weights: npt.ArrayLike | None = None,
                    resolution: float = EDGE_WEIGHT_RESOLUTION) -> tuple[npt.NDArray[np.int64], float]:
    """Partition a weighted undirected graph into ``n_parts`` with METIS (PyMetis).

    Parameters
    ----------
    similarity : sparse matrix or ndarray of shape (n_vertices, n_vertices)
        Non-negative symmetric edge weights; the diagonal is ignored.
    n_parts : int
    random_state : int, Generator or None
        Source of METIS's seed.
    ufactor : int, default=None
        METIS balance tolerance in thousandths (None: METIS's default).
    symmetric : bool, default=False
        The caller guarantees a symmetric CSR matrix without diagonal (the bipartite graphs):
        skip the symmetrising pass.
    vertex_weights : array-like of int, default=None
        Positive integer weight of each vertex, counted by the balance constraint (None: all
        1). A vertex standing for m merged identical vertices has weight m.
    resolution : float, default=EDGE_WEIGHT_RESOLUTION
        Integer weight of the heaviest edge. A graph of merged vertices passes
        ``EDGE_WEIGHT_RESOLUTION`` times (its heaviest edge / the unmerged graph's heaviest
        edge), so that an edge of a vertex merging m identical ones weighs about m times the
        unmerged integer weight (exactly, when all partition weights are equal).

    Returns
    -------
    parts : ndarray of shape (n_vertices,), int64
        The part of each vertex (some parts may be empty).
    cut : float
        Weight of the edges cut, in the units of ``similarity``.
    """
    rng = check_random_state(random_state)
    if symmetric:
        S = sp.csr_matrix(similarity, dtype=np.float64)
        if S.nnz and S.data.min() < 0:
            raise ValidationError("similarity must be non-negative to be cut by METIS.")
        return _metis(S, n_parts, rng, ufactor, vertex_weights, resolution)
    if isinstance(similarity, np.ndarray):
        negative = similarity < 0
        if negative.sum() > np.count_nonzero(np.diagonal(negative)):
            raise ValidationError("similarity must be non-negative to be cut by METIS.")
        del negative
        return _metis(symmetric_graph(similarity), n_parts, rng, ufactor, vertex_weights, resolution)
    C = sp.coo_matrix(similarity)
    off = (C.row != C.col) & (C.data != 0)
    row, col, data = C.row[off], C.col[off], C.data[off].astype(np.float64)
    if data.size and data.min() < 0:
        raise ValidationError("similarity must be non-negative to be cut by METIS.")
    # (S + S^T) / 2 without the diagonal, in one COO -> CSR conversion (duplicates summed).
    S = sp.csr_matrix((np.concatenate([data, data]) * 0.5,
                       (np.concatenate([row, col]), np.concatenate([col, row]))), shape=C.shape)
    del C, row, col, data
    return _metis(S, n_parts, rng, ufactor, vertex_weights, resolution)


def csr_of_blocks(block: Callable[[int, int], npt.NDArray[Any]], n_rows: int, n_columns: int,
                  entry_bytes: int = 0, held: int = 0, what: str | None = None, alternative: str = "",
                  max_bytes: int | None = None, block_entries: int = 2**22) -> sp.csr_matrix:
    """The non-zero entries of a dense matrix given by its row blocks (``block(a, b)``: rows
    a..b-1, float64), as a CSR matrix with sorted indices, without coordinate arrays of every
    entry: one pass counts each row's entries, a second writes them. With ``what``, the budget
    is asked between the two for ``held + entry_bytes`` per entry counted (what the caller holds
    beside, and what each entry will cost), before the CSR is allocated. A block holds about
    ``block_entries`` cells (its non-zeros' coordinates, 24 bytes each, are the temporaries)."""
    step = max(1, block_entries // max(1, n_columns))
    per_row = np.zeros(n_rows, dtype=np.int64)
    for a in range(0, n_rows, step):
        b = min(n_rows, a + step)
        per_row[a:b] = np.count_nonzero(block(a, b), axis=1)
    nnz = int(per_row.sum())
    if what is not None:
        require_memory(held + entry_bytes * nnz, f"{what} ({nnz} non-zero entries)", alternative, max_bytes)
    index = np.int32 if max(nnz, n_rows, n_columns) < np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(n_rows + 1, dtype=index)
    np.cumsum(per_row, out=indptr[1:])
    del per_row
    indices = np.empty(nnz, dtype=index)
    data = np.empty(nnz, dtype=np.float64)
    for a in range(0, n_rows, step):
        b = min(n_rows, a + step)
        values = block(a, b)
        rows, cols = np.nonzero(values)        # row-major: each row's columns in increasing order
        indices[indptr[a]:indptr[b]] = cols
        data[indptr[a]:indptr[b]] = values[rows, cols]
    graph = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_columns))
    graph.has_sorted_indices = True
    return graph


def symmetric_graph(similarity: npt.NDArray[np.floating[Any]], *, what: str | None = None, alternative: str = "",
                    max_bytes: int | None = None) -> sp.csr_matrix:
    """The graph :func:`partition_graph` cuts for a dense square ``similarity``, made once.

    ``(S + S^T) / 2`` in float64 without the diagonal, as a CSR matrix with sorted indices and
    only the entries that are not 0 (each entry ``0.5 S[i, j] + 0.5 S[j, i]``), read from the
    dense matrix by row blocks (:func:`csr_of_blocks`) instead of through coordinate arrays of
    every pair, sorted and summed. Pass the result with ``symmetric=True``: a caller that cuts
    one similarity several times (several balance tolerances, the sizes' estimate) builds the
    graph once. With ``what``, the memory budget is asked, once the entries are counted and
    before the graph is allocated, for the similarity (held) and
    :data:`cclust.graph.DENSE_GRAPH_ENTRY_BYTES` an entry (the graph and METIS's arrays).
    """
    from cclust.graph._checks import DENSE_GRAPH_ENTRY_BYTES

    S = np.asarray(similarity)
    n = S.shape[0]
    if S.ndim != 2 or S.shape[1] != n:
        raise ValidationError(f"similarity must be a square matrix, got shape {S.shape}.")

    def block(a, b):
        values = np.multiply(S[a:b], 0.5, dtype=np.float64)
        values += np.multiply(S[:, a:b].T, 0.5, dtype=np.float64)
        values[np.arange(b - a), np.arange(a, b)] = 0.0
        return values

    return csr_of_blocks(block, n, n, DENSE_GRAPH_ENTRY_BYTES, S.nbytes,
                         None if what is None else f"the METIS graph of the dense {what} of {n} objects",
                         alternative, max_bytes)


def _metis(S, n_parts, rng, ufactor, vertex_weights=None, resolution=EDGE_WEIGHT_RESOLUTION):
    """METIS on a symmetric diagonal-free float CSR: integer weights, seed, ufactor."""
    import pymetis

    n = S.shape[0]
    seed = int(rng.integers(0, 2**31 - 1))
    if n_parts <= 1 or n <= n_parts:
        parts = np.zeros(n, dtype=np.int64) if n_parts <= 1 else np.arange(n, dtype=np.int64)
        return parts, _cut(S, parts)
    if not S.has_sorted_indices:
        S = S.sorted_indices()  # a copy: the caller's matrix is never reordered in place
    idx = np.int64 if _idx_bytes() == 8 else np.int32
    # METIS's arrays straight from S: at n = 1e6 the kNN graph has ~6e7 entries, so every
    # intermediate CSR copy costs gigabytes. Edges whose weight rounds to 0 are dropped.
    weights = integer_edge_weights(S.data, resolution)
    keep = weights != 0
    if keep.all():
        xadj = np.ascontiguousarray(S.indptr, dtype=idx)
        adjncy = np.ascontiguousarray(S.indices, dtype=idx)
        eweights = weights.astype(idx, copy=False)
    else:
        kept_before = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
        xadj = np.ascontiguousarray(kept_before[S.indptr], dtype=idx)
        adjncy = np.ascontiguousarray(S.indices[keep], dtype=idx)
        eweights = np.ascontiguousarray(weights[keep], dtype=idx)
        del kept_before
    del weights, keep
    require_address_space(metis_bytes(n, int(xadj[-1])), f"METIS on a graph of {n} vertices and {int(xadj[-1])} "
                          "edge entries", "use a method with a smaller graph (kcc, or a sparse route)")
    options = pymetis.Options(seed=seed)
    if ufactor is not None:
        options.ufactor = int(ufactor)
    vweights = None if vertex_weights is None else np.ascontiguousarray(vertex_weights, dtype=idx)
    try:
        if hasattr(pymetis, "CSRAdjacency"):
            result = pymetis.part_graph(int(n_parts), adjacency=pymetis.CSRAdjacency(xadj, adjncy),
                                        eweights=eweights, vweights=vweights, options=options)
        else:  # PyMetis < 2025.2
            result = pymetis.part_graph(int(n_parts), xadj=xadj, adjncy=adjncy, eweights=eweights,
                                        vweights=vweights, options=options)
    except RuntimeError as exc:
        # METIS's own allocation failure reaches Python as "Caught an unknown exception!"; the
        # inputs were checked above, so under an address-space limit it is the memory
        left = address_space_left()
        if left is None:
            raise
        raise MemoryBudgetError(
            f"METIS failed on a graph of {n} vertices and {int(xadj[-1])} edge entries with "
            f"{format_bytes(left)} of address space left under the process's limit (RLIMIT_AS, ulimit -v): "
            f"{exc}; raise the limit, or use a method with a smaller graph (kcc, or a sparse route).") from exc
    del xadj, adjncy, eweights
    parts = np.asarray(result[1], dtype=np.int64)
    return parts, _cut(S, parts)


def _cut(S, parts):
    """Weight of the edges of the symmetric, diagonal-free CSR ``S`` joining different parts."""
    parts = parts.astype(np.int32, copy=False)  # half the bytes to gather; parts < n_parts
    own = np.repeat(parts, np.diff(S.indptr))
    return float(S.data[own != parts[S.indices]].sum() / 2.0)


# -- functions shared with woec.py ---------------------------------------------------------------

def honour_n_clusters(labels: npt.ArrayLike, affinity: npt.NDArray[np.floating[Any]],
                      n_clusters: int) -> tuple[npt.NDArray[np.int64], int]:
    """Fill parts a partitioner left without objects, so exactly ``n_clusters`` are used.

    For each empty part m (in order) the objects with the largest ``affinity[x, m] -
    affinity[x, label(x)]`` (ties kept together) move to m, never emptying the part they leave.
    Ren et al. (2017, sec. 3.3.1) accept fewer clusters than asked; cclust honours ``n_clusters`` instead and
    reports how many objects moved.
    """
    labels = np.array(labels, dtype=np.int64, copy=True)
    n = labels.shape[0]
    counts = np.bincount(labels, minlength=n_clusters)
    moved = 0
    for m in np.flatnonzero(counts == 0):
        gain = affinity[:, m] - affinity[np.arange(n), labels]
        gain = np.where(counts[labels] > 1, gain, -np.inf)
        best = gain.max()
        chosen = np.flatnonzero(gain >= best - 1e-12 * max(1.0, abs(best)))
        for x in chosen:
            if counts[labels[x]] > 1:
                counts[labels[x]] -= 1
                labels[x] = m
                counts[m] += 1
                moved += 1
    return labels, moved


def argmax_random_ties(scores: npt.NDArray[np.floating[Any]], rng: np.random.Generator) -> npt.NDArray[np.intp]:
    """Row-wise argmax, exact ties broken at random (Ren et al. 2017, sec. 3.3.1: "Ties are broken randomly")."""
    top = scores.max(axis=1, keepdims=True)
    tied = scores >= top - 1e-12 * np.maximum(1.0, np.abs(top))
    priority = np.where(tied, rng.random(scores.shape), -1.0)
    return priority.argmax(axis=1)


def top_neighbor_graph(block: Callable[[int, int], npt.ArrayLike], n: int, n_neighbors: int, *,
                       chunk_rows: int = _CHUNK_ROWS) -> Any:
    """Sparse symmetric graph keeping each object's ``n_neighbors`` strongest similarities.

    ``block(start, stop)`` returns the dense rows ``start:stop`` of the similarity. An edge is
    kept if either end counts the other among its strongest (union), with its exact weight.
    """
    rows, cols, vals = [], [], []
    k = n_neighbors
    for start in range(0, n, chunk_rows):
        stop = min(n, start + chunk_rows)
        S = np.array(block(start, stop), dtype=np.float32, copy=True)
        local = np.arange(stop - start)
        S[local, start + local] = -np.inf
        idx = np.argpartition(-S, k - 1, axis=1)[:, :k] if k < n - 1 else np.argsort(-S, axis=1)[:, :n - 1]
        rows.append(np.repeat(np.arange(start, stop), idx.shape[1]))
        cols.append(idx.reshape(-1))
        vals.append(np.take_along_axis(S, idx, axis=1).reshape(-1))
    G = sp.csr_matrix((np.concatenate(vals).astype(np.float64), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, n))
    G.data = np.maximum(G.data, 0.0)
    return G.maximum(G.T).tocsr()
