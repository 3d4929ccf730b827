"""The transfer cut (Li, Wu & Chang 2012) of a bipartite graph, :func:`tcut`, and the control of
BLAS threads around it (:func:`blas_team`, :func:`one_blas_thread`)."""
from __future__ import annotations

from typing import Any, ContextManager

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.errors import ValidationError
from cclust.graph._merge import Groups
from cclust.validation import (RandomStateLike, available_cores, busy_elsewhere, check_int, check_random_state,
                               one_thread_pools, renamed_threads, require_memory)
from cclust.graph._metis import honour_n_clusters
from cclust.graph._bipartite import has_empty_part


#: :func:`tcut` decomposes the column graph densely (LAPACK) up to this many columns when forming
#: it costs little (at most ``TCUT_DENSE_MAX ** 2 * 50`` multiply-adds); beyond, ARPACK finds
#: the leading eigenvectors through products with B, without forming the column graph.
TCUT_DENSE_MAX = 2000


#: Bytes the transfer cut of an ensemble's object-cluster graph holds at its peak, measured on
#: ensembles of 10 to 100 noisy partitions of 8 to 40 clusters, 2 * 10^4 and 4 * 10^4 objects
#: (every label row distinct), K = 8: per edge of the graph 10 on the dense route (the CSR matrix
#: and its row degrees; measured 9.9) and 14 on the Lanczos route of a sparse matrix (B, read
#: through its transpose's view, and the products' vectors; with the per-object term below,
#: 1.26 and 1.14 times the figure at 10^5 x 100 and 2 * 10^5 x 60, K = 8); per pair of columns 27 on the dense
#: route (the column graph, its scaled and symmetrised copies: 26.7 measured); per object and
#: cluster 32 (the embedding, its per-object copy and k-means' n x K buffers, float64). An
#: ensemble's graph on the Lanczos route is its label codes (:class:`LabelGraph`): no edge is
#: stored, only the codes of the distinct rows when they are fewer than the objects; per object
#: :data:`TCUT_LABEL_OBJECT_BYTES` (degrees, the products' vectors, k-means' per-object arrays)
#: and 8 an object (or row) and cluster for the embedding and its per-object copy. Measured with
#: 60 and 100 partitions of 10^5 and 2 * 10^5 objects, K = 8 and 24: 129 bytes an object at
#: K = 8 and 237 at K = 24 (64 + 7 K), about 3 MB besides.
TCUT_EDGE_BYTES_DENSE = 10
TCUT_EDGE_BYTES_LANCZOS = 14
TCUT_COLUMN_PAIR_BYTES = 27
TCUT_OBJECT_CLUSTER_BYTES = 32
TCUT_LABEL_OBJECT_BYTES = 64


def dense_route(n_rows: int, n_edges: int, n_columns: int) -> bool:
    """Whether :func:`tcut` decomposes the column graph densely (LAPACK) for a graph of
    ``n_rows`` rows, ``n_edges`` entries and ``n_columns`` columns: up to
    :data:`TCUT_DENSE_MAX` columns when forming it is cheap (its cost, the sum of the squared
    row lengths, estimated from the mean row), or when there are fewer rows than columns (the
    smaller row graph is decomposed instead); else Lanczos on products with the graph."""
    per_row = n_edges / max(n_rows, 1)
    return n_columns <= TCUT_DENSE_MAX and (n_rows < n_columns or
                                            n_rows * per_row * per_row <= 50.0 * TCUT_DENSE_MAX ** 2)


def forms_column_graph(n_columns: int, squared_row_entries: float) -> bool:
    """Whether :func:`tcut` forms and decomposes the column graph of a sparse matrix of
    ``n_columns`` columns whose rows' entry counts squared sum to ``squared_row_entries`` (the
    multiply-adds of forming it): up to :data:`TCUT_DENSE_MAX` columns and ``50 *
    TCUT_DENSE_MAX ** 2`` multiply-adds. Otherwise Lanczos runs on products with the matrix (or
    the smaller row graph is decomposed, when there are fewer rows than columns)."""
    return n_columns <= TCUT_DENSE_MAX and float(squared_row_entries) <= 50.0 * TCUT_DENSE_MAX ** 2


def transfer_cut_bytes(n_objects: int, n_rows: int, n_edges: int, n_columns: int, n_clusters: int,
                       code_bytes: int | None = None, dense: bool | None = None) -> int:
    """Bytes :func:`tcut` of an ensemble's object-cluster graph holds at its peak, the graph
    included: ``n_rows`` rows (distinct label rows) for ``n_objects`` objects, ``n_edges``
    entries, ``n_columns`` clusters, K = ``n_clusters``. The route is ``dense`` when the
    caller knows it (None: :func:`dense_route`'s estimate from the mean row).
    ``code_bytes`` (the width of one label code) when the graph is an ensemble's labels,
    which the Lanczos route reads as they are stored (:class:`LabelGraph`) instead of a sparse
    matrix (see the constants' note for the terms)."""
    k = min(n_clusters, n_columns)
    if dense_route(n_rows, n_edges, n_columns) if dense is None else dense:
        graph = TCUT_EDGE_BYTES_DENSE * n_edges + TCUT_COLUMN_PAIR_BYTES * n_columns * n_columns
    elif code_bytes is None:
        graph = TCUT_EDGE_BYTES_LANCZOS * n_edges
    else:
        grouped = n_rows < n_objects   # the distinct rows' codes and the embedding's per-object copy
        return int((code_bytes * n_edges if grouped else 0) + TCUT_LABEL_OBJECT_BYTES * n_objects
                   + 8 * k * (n_rows + (n_objects if grouped else 0)))
    return int(graph + TCUT_OBJECT_CLUSTER_BYTES * n_objects * k)


def require_transfer_cut(ensemble: Any, n_clusters: int, what: str, max_bytes: int | None = None,
                         held: int = 0) -> None:
    """Ask the memory budget for the transfer cut of ``ensemble``'s object-cluster graph
    (:func:`transfer_cut_bytes`) and ``held`` bytes the caller made before (a canonical copy
    of the codes, say), before the graph is made."""
    n_rows = ensemble.n_distinct_rows
    n_columns = int(ensemble.offsets[-1])
    need = held + transfer_cut_bytes(ensemble.n_samples, n_rows, n_rows * ensemble.n_partitions, n_columns,
                                     n_clusters, code_bytes=ensemble.compact_labels().dtype.itemsize)
    require_memory(need, f"{what}'s transfer cut of {n_rows} distinct label rows x {n_columns} clusters",
                   "use kcc (memory linear in n r, no graph), or fuse fewer partitions", max_bytes)


class LabelGraph:
    """An ensemble's object-cluster graph read from its label codes, for :func:`tcut`'s
    Lanczos route: ``B[x, offsets[j] + codes[x, j]] = column_values[offsets[j] + codes[x, j]]``
    (a missing code is no edge), its products with vectors made by the compiled lookup passes
    (:func:`cclust._ext._voting.scores` for ``B V``, :func:`cclust._ext._voting.label_sums`
    for ``B^T V``) without forming B: the graph costs no memory beyond the codes, where the
    sparse matrix holds 12 bytes an edge. ``B V`` adds each row's entries in partition order,
    as SciPy adds a CSR row whose columns are in partition order, so with the columns in that
    order it is bitwise the sparse product; ``B^T v`` scales the sums by the column values
    after summing (the sparse product scales each term).

    ``extra_rows``, a sparse matrix of the same columns, is stacked under the codes' rows (the
    cluster rows of GP-MGLA's graph, Huang, Lai & Wang 2015): its rows of ``B V`` are its own
    sparse product (so, with the codes' rows, bitwise the product of the stacked CSR), and its
    part of ``B^T y`` is added to the codes' after them.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_partitions)
        Label codes as :meth:`cclust.Ensemble.compact_labels` stores them (read in place).
    offsets : ndarray of shape (n_partitions + 1,)
        The first column of each partition's clusters.
    column_values : ndarray of shape (offsets[-1],)
        The entry of every object in each column.
    n_threads : int
        Threads of the passes; the products do not depend on it.
    extra_rows : sparse matrix of shape (n_extra, offsets[-1]), default=None
        Rows below the codes' rows, non-negative.
    """

    def __init__(self, codes: npt.NDArray[Any], offsets: npt.NDArray[np.integer[Any]],
                 column_values: npt.ArrayLike, n_threads: int = 1, extra_rows: Any = None) -> None:
        self.codes = codes
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.column_values = np.ascontiguousarray(column_values, dtype=np.float64)
        n_columns = int(self.offsets[-1])
        if self.column_values.shape != (n_columns,):
            raise ValidationError(f"column_values must hold one value per cluster ({n_columns}), "
                                  f"got shape {self.column_values.shape}.")
        if extra_rows is not None:
            extra_rows = sp.csr_matrix(extra_rows, dtype=np.float64)
            if extra_rows.shape[1] != n_columns:
                raise ValidationError(f"extra_rows must have one column per cluster ({n_columns}), "
                                      f"got shape {extra_rows.shape}.")
        self.extra_rows = extra_rows
        self.n_threads = n_threads
        self.n_code_rows = int(codes.shape[0])
        self.shape = (self.n_code_rows + (0 if extra_rows is None else extra_rows.shape[0]), n_columns)

    @classmethod
    def of(cls, ensemble: Any, column_values: npt.ArrayLike | None = None, n_threads: int = 1) -> LabelGraph:
        """The graph of every object of ``ensemble`` (its stored codes, read in place), each
        entry ``column_values`` of its column (partition order; None: 1, the one-hot ``B``):
        ``B V`` and ``B^T y`` for any method that reads the ensemble through its one-hot."""
        values = np.ones(int(ensemble.offsets[-1])) if column_values is None else column_values
        return cls(ensemble.compact_labels(), ensemble.offsets, values, n_threads)

    def entries(self) -> tuple[npt.NDArray[np.float64], ...]:
        """The values the graph's entries take: the column values and the extra rows' entries."""
        return (self.column_values,) + (() if self.extra_rows is None else (self.extra_rows.data,))

    def matmat(self, V: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``B V`` for V of shape (n_columns, k)."""
        from cclust._ext import _voting

        top = _voting.scores(self.codes, self.offsets, np.ascontiguousarray(self.column_values[:, None] * V),
                             self.n_threads)
        if self.extra_rows is None:
            return top
        return np.concatenate([top, np.asarray(self.extra_rows @ V).reshape(-1, top.shape[1])])

    def matvec(self, v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``B v`` for v of shape (n_columns,)."""
        return self.matmat(v[:, None]).reshape(-1)

    def rmatvec(self, y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``B^T y`` for y of shape (n_rows,)."""
        from cclust._ext import _voting

        y = np.ascontiguousarray(y, dtype=np.float64)
        sums = _voting.label_sums(self.codes, self.offsets, y[:self.n_code_rows, None], self.n_threads)
        out = sums.reshape(-1) * self.column_values
        if self.extra_rows is not None:
            out += self.extra_rows.T @ y[self.n_code_rows:]
        return out

    def tocsr(self) -> Any:
        """B as a CSR matrix (columns in partition order), for checks on small graphs."""
        from cclust._codes import missing_mask

        L = np.asarray(self.codes)
        present = ~missing_mask(L)
        rows, parts = np.nonzero(present)
        columns = self.offsets[parts] + L[rows, parts].astype(np.int64)
        top = sp.csr_matrix((self.column_values[columns], (rows, columns)), shape=(self.n_code_rows, self.shape[1]))
        return top if self.extra_rows is None else sp.vstack([top, self.extra_rows], format="csr")


def ensemble_label_graph(ensemble: Any, column_values: npt.ArrayLike, n_threads: int = 1) -> LabelGraph | None:
    """The :class:`LabelGraph` of ``ensemble``'s distinct label rows (:meth:`cclust.Ensemble.distinct_rows`)
    when :func:`tcut` would take the Lanczos route on its object-cluster graph, else None (the
    caller forms the sparse matrix, whose dense route costs little). ``column_values`` in
    partition order (the ensemble's ``offsets``)."""
    groups = ensemble.distinct_rows()
    n_rows = ensemble.n_samples if groups is None else int(groups[0].shape[0])
    if dense_route(n_rows, n_rows * ensemble.n_partitions, int(ensemble.offsets[-1])):
        return None
    codes = ensemble.compact_labels()
    return LabelGraph(codes if groups is None else codes[groups[0]], ensemble.offsets, column_values, n_threads)


class TransferCut:
    """What :func:`tcut` returns.

    Attributes
    ----------
    labels : ndarray of shape (n_objects,), int64
        The part of every object (every row of B, or every object of ``groups``), 0..K-1, every
        part used, numbered in order of their first object.
    embedding : ndarray of shape (n_rows, min(K, n_columns))
        The row-normalised transferred eigenvectors, one row per row of B (per group).
    eigenvalues : ndarray of shape (min(K, n_columns),)
        The leading eigenvalues of the normalised column graph, in decreasing order.
    objective : float
        Within-cluster sum of squares of the k-means run kept (over the objects).
    n_iter : int
        Lloyd iterations of the k-means run kept.
    n_moved : int
        Objects moved into parts that k-means left empty (possible when K exceeds the number
        of distinct embedded rows).
    """

    __slots__ = ("labels", "embedding", "eigenvalues", "objective", "n_iter", "n_moved")

    def __init__(self, labels: npt.NDArray[np.int64], embedding: npt.NDArray[np.float64],
                 eigenvalues: npt.NDArray[np.float64], objective: float, n_iter: int, n_moved: int = 0) -> None:
        self.labels, self.embedding, self.eigenvalues = labels, embedding, eigenvalues
        self.objective, self.n_iter, self.n_moved = objective, n_iter, n_moved


#: Below this many rows (and columns) of a dense BLAS product, its thread team costs CPU and saves
#: no wall time (see :func:`blas_team`).
BLAS_TEAM_FROM = 1024


def blas_team(size: int, threshold: int = BLAS_TEAM_FROM) -> ContextManager[Any]:
    """The BLAS thread setting for dense products on ``size`` x ``size`` matrices: one thread
    (:func:`one_blas_thread`) below ``threshold``, BLAS's own team from it on. OpenBLAS's
    second thread spins between calls: on two idle cores PTA's products at 805 microclusters
    took the same wall time with the team and twice the CPU time (0.23 s against 0.13 s);
    at 1,483 the team saved a sixth of the wall time. When the other cores are busy
    (:func:`cclust.validation.busy_elsewhere`) it is one thread at any size."""
    from contextlib import nullcontext

    # a team on a machine whose other cores are busy only adds a spinning thread
    busy = available_cores() - busy_elsewhere() < 2
    return nullcontext() if size >= threshold and not busy else one_blas_thread()


def one_blas_thread() -> ContextManager[Any]:
    """A context in which BLAS/LAPACK run on one thread (threadpoolctl, scikit-learn's
    dependency, when installed; else nothing changes), for the small dense eigenproblems of the
    spectral cuts. OpenBLAS's thread team spins for its share of the cores: on this two-core
    machine under a load of 6-12 the eigendecomposition of 871 clusters took 12.6 s with the
    team and 0.73 s on one thread (Huang et al. 2021's ECPCS cluster graph); on an idle machine
    the team would save at most a factor of two."""
    return one_thread_pools("blas")


def _column_graph(B, row_scale):
    """The dense column graph ``B^T diag(row_scale) B`` of a CSR matrix, summed one row after
    the other in row order by a compiled pass (``cclust._ext._uspec.cross_sums``; a tenth of
    the time of SciPy's sparse product at a million rows), so that the Dask path, which
    continues the same pass from row block to row block, adds the same floats in the same order."""
    from cclust._ext import _uspec

    n_cols = B.shape[1]
    W = np.zeros((n_cols, n_cols))
    _uspec.cross_sums(np.ascontiguousarray(B.indptr, dtype=np.int64), np.ascontiguousarray(B.indices, dtype=np.int64),
                      np.ascontiguousarray(B.data, dtype=np.float64), W, np.zeros(n_cols),
                      np.ascontiguousarray(row_scale, dtype=np.float64))
    return W


def dense_leading_eigenvectors(W, inv_sqrt, n_vectors):
    """The ``n_vectors`` leading eigenpairs of ``D^-1/2 W D^-1/2`` (``inv_sqrt`` = D^-1/2 as a
    vector) for a dense column graph W, largest first (symmetrised against rounding)."""
    import scipy.linalg

    n_cols = W.shape[0]
    W = inv_sqrt[:, None] * W * inv_sqrt[None, :]
    W = (W + W.T) / 2.0
    with one_blas_thread():
        try:
            values, vectors = scipy.linalg.eigh(W, subset_by_index=(n_cols - n_vectors, n_cols - 1))
        except np.linalg.LinAlgError:  # MRRR can fail on the repeated eigenvalues of agreeing partitions
            values, vectors = np.linalg.eigh(W)
            values, vectors = values[n_cols - n_vectors:], vectors[:, n_cols - n_vectors:]
    return values[::-1], vectors[:, ::-1]


def _dense_leading_eigenvectors_by_rows(B, row_scale, inv_sqrt, n_vectors):
    """The leading eigenpairs of ``A^T A`` (``A = diag(row_scale)^1/2 B D^-1/2``) from the
    smaller ``A A^T`` when B has fewer rows than columns: ``A^T A v = l v`` with ``v = A^T u /
    sqrt(l)`` for every eigenpair ``(l, u)`` of ``A A^T`` with ``l > 0``. None when a wanted
    eigenvalue is not clearly positive (then the column graph is used)."""
    import scipy.linalg

    A = B.toarray() * np.sqrt(row_scale)[:, None] * inv_sqrt[None, :]
    G = A @ A.T
    G = (G + G.T) / 2.0
    n_rows = G.shape[0]
    with one_blas_thread():
        try:
            values, vectors = scipy.linalg.eigh(G, subset_by_index=(n_rows - n_vectors, n_rows - 1))
        except np.linalg.LinAlgError:
            return None
    if values[0] <= 1e-8 * max(values[-1], 1e-300):
        return None
    vectors = (A.T @ vectors) / np.sqrt(values)[None, :]
    return values[::-1], vectors[:, ::-1]


def _leading_eigenvectors(B, row_scale, col_degree, n_vectors):
    """The ``n_vectors`` leading eigenpairs of ``D^-1/2 B^T diag(row_scale) B D^-1/2`` (D the
    diagonal of ``col_degree``), largest first: dense when the column graph is small and cheap
    to form, else ARPACK on products with B."""
    n_cols = B.shape[1]
    inv_sqrt = 1.0 / np.sqrt(np.where(col_degree > 0, col_degree, 1.0))
    row_nnz = np.diff(B.indptr).astype(np.float64)
    n_rows = B.shape[0]
    if n_vectors < n_rows < n_cols <= TCUT_DENSE_MAX:
        found = _dense_leading_eigenvectors_by_rows(B, row_scale, inv_sqrt, n_vectors)
        if found is not None:
            return found
    if forms_column_graph(n_cols, row_nnz @ row_nnz):
        return dense_leading_eigenvectors(_column_graph(B, row_scale), inv_sqrt, n_vectors)
    # B.T is a view (CSC) of B's arrays; its products add each column's terms in row order, as
    # a CSR copy of the transpose would, bit for bit, without the copy's 12 bytes an edge.
    return _lanczos_eigenvectors(lambda u: B @ u, lambda y: B.T @ y, row_scale, col_degree, inv_sqrt, n_vectors)


def _lanczos_eigenvectors(b_times, bt_times, row_scale, col_degree, inv_sqrt, n_vectors):
    """The ``n_vectors`` leading eigenpairs of ``D^-1/2 B^T diag(row_scale) B D^-1/2`` by ARPACK
    (Lanczos) on products with B (``b_times``) and its transpose (``bt_times``), largest first."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    n_cols = col_degree.shape[0]

    def matvec(v):
        v = np.asarray(v).reshape(-1)
        return inv_sqrt * bt_times(row_scale * b_times(inv_sqrt * v))

    operator = LinearOperator((n_cols, n_cols), matvec=matvec, dtype=np.float64)
    # A fixed start vector (the leading eigenvector of a connected graph): ARPACK is then
    # deterministic, and invariant to the order of the columns.
    v0 = np.sqrt(np.maximum(col_degree, 0.0)) + 1e-3
    values, vectors = eigsh(operator, k=n_vectors, which="LA", v0=v0 / np.linalg.norm(v0), tol=0.0)
    order = np.argsort(-values, kind="stable")
    return values[order], vectors[:, order]


def _row_block(B, start, stop):
    """Rows ``start:stop`` of the CSR matrix B, built from slices of B's arrays (any copy is
    NumPy's, whose failed allocation is a MemoryError). SciPy's own row slicing collects the
    entries in C++ vectors, and their failed allocation under an address-space limit ended
    the process (SIGSEGV, SciPy 1.17)."""
    stop = min(stop, B.shape[0])
    lo, hi = B.indptr[start], B.indptr[stop]
    return sp.csr_matrix((B.data[lo:hi], B.indices[lo:hi], B.indptr[start:stop + 1] - lo),
                         shape=(stop - start, B.shape[1]))


def transfer_rows(B: Any, ncut_vectors: npt.NDArray[np.float64], row_degree: npt.NDArray[np.float64]
                  ) -> npt.NDArray[np.float64]:
    """Step 2-3 of :func:`tcut` for the rows of B: ``diag(1/d_x) B V``, each row normalised to
    unit length (plus 1e-10). Computed in blocks of 32,768 rows (every row's floats are those of
    the whole-matrix expression: each row is reduced alone), so that no n x K temporary beyond
    the result is formed; a row block of B gives the same rows as the whole of B. B may be a
    :class:`LabelGraph`, whose product is formed whole (n x K, the result) and scaled in place."""
    step = 1 << 15
    if isinstance(B, LabelGraph):
        out = B.matmat(ncut_vectors)
        for start in range(0, out.shape[0], step):
            part = out[start:start + step]
            part /= row_degree[start:start + step, None]
            part /= np.sqrt((part * part).sum(axis=1))[:, None] + 1e-10
        return out
    n = B.shape[0]
    B = sp.csr_matrix(B)
    out = np.empty((n, ncut_vectors.shape[1]))
    for start in range(0, n, step):
        part = (_row_block(B, start, start + step) @ ncut_vectors) / row_degree[start:start + step, None]
        part /= np.sqrt((part * part).sum(axis=1))[:, None] + 1e-10
        out[start:start + step] = part
    return out


@renamed_threads
def tcut(B: Any, n_clusters: int, *, groups: Groups | None = None, random_state: RandomStateLike = None,
         n_init: int = 3, max_iter: int = 100, n_jobs: int | None = None) -> TransferCut:
    """Transfer cut (Tcut; Li, Wu & Chang 2012) of the bipartite graph [[0, B], [B^T, 0]].

    The spectral (normalised-cut) partition of a bipartite graph of objects (rows of B) and
    clusters or other features (columns), computed on the small side only (Li et al. 2012,
    sec. 3-4): with ``d_x`` the weighted degree of object x and ``W = B^T diag(1/d_x) B`` the
    column graph that the transfer induces,

    1. the K leading eigenvectors of ``D^-1/2 W D^-1/2`` (D the degrees of W), scaled by
       ``D^-1/2``, are the normalised-cut eigenvectors on the columns;
    2. they are transferred to the objects, ``diag(1/d_x) B`` times them;
    3. each object's row is normalised to unit length (plus 1e-10) and k-means with K
       clusters (k-means++ seeding, ``n_init`` runs, at most ``max_iter`` Lloyd iterations,
       the run of lowest within-cluster sum of squares kept) gives the parts.

    The cost is that of the column side: a dense eigen-decomposition up to
    :data:`TCUT_DENSE_MAX` columns, else Lanczos (ARPACK) on products with B, never an
    object x object matrix; k-means on an n x K embedding. Objects without any edge (``d_x =
    0``) get ``d_x = 1e-10``, as in the authors' code.

    Parameters
    ----------
    B : sparse matrix or ndarray of shape (n_rows, n_columns)
        Non-negative cross-affinities; every column needs a positive sum. (cclust's tcut,
        LWGP and GP-MGLA consensus functions pass their ensemble's label codes instead, as a
        :class:`LabelGraph`, where the Lanczos route is taken, so that no n x sum K_i graph is
        formed; that graph always takes the Lanczos route.)
    n_clusters : int
        K, in [1, n_objects]. ``min(K, n_columns)`` eigenvectors are used; parts k-means
        leaves empty (K above the number of distinct embedded rows) are filled with the objects
        closest to their centres, as :func:`honour_n_clusters` does.
    groups : tuple or None, default=None
        ``(first, inverse, counts)`` as :func:`identical_label_rows` returns it when the rows
        of B stand for groups of identical objects (row g for ``counts[g]`` of them): the
        column graph counts row g ``counts[g]`` times and the parts are returned per object
        (``labels[x]`` is the part of row ``inverse[x]``). Exactly the cut of the unmerged graph.
    random_state : int, Generator or None
        Seeds k-means.
    n_init : int, default=3
    max_iter : int, default=100
    n_jobs : int, default=None
        Threads of the k-means passes; the labels do not depend on it.

    Returns
    -------
    TransferCut
        ``labels`` of the objects, the ``embedding`` of the rows, the ``eigenvalues``, the
        k-means ``objective`` and ``n_iter``.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.graph import tcut
    >>> B = np.array([[1, 0, 1, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 1, 0, 1.0]])
    >>> tcut(B, 2, random_state=0).labels.tolist() in ([0, 0, 1, 1], [1, 1, 0, 0])
    True
    """
    from cclust import _engine
    from cclust._lloyd import best_of_restarts
    from cclust.validation import check_n_jobs

    labelled = isinstance(B, LabelGraph)
    if not labelled:
        B = sp.csr_matrix(B, dtype=np.float64)
    n_rows, n_cols = B.shape
    for entries in B.entries() if labelled else (B.data,):
        if entries.size and (entries.min() < 0 or not np.isfinite(entries).all()):
            raise ValidationError("B must hold finite non-negative affinities to be cut by tcut.")
    n_objects = n_rows if groups is None else int(np.asarray(groups[1]).shape[0])
    n_clusters = check_int(n_clusters, "n_clusters", low=1, high=max(1, n_objects))
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    rng = check_random_state(random_state)
    n_jobs = check_n_jobs(n_jobs)
    counts = np.ones(n_rows) if groups is None else np.asarray(groups[2], dtype=np.float64)
    if counts.shape[0] != n_rows:
        raise ValidationError(f"groups describe {counts.shape[0]} rows, but B has {n_rows}.")
    n_vectors = min(n_clusters, n_cols)
    if labelled:
        row_degree = B.matvec(np.ones(n_cols))
        row_degree[row_degree == 0] = 1e-10
        col_degree = B.rmatvec(counts)         # W 1 = B^T diag(c / d) B 1 = B^T c
        inv_sqrt = 1.0 / np.sqrt(np.where(col_degree > 0, col_degree, 1.0))
        values, vectors = _lanczos_eigenvectors(B.matvec, B.rmatvec, counts / row_degree, col_degree, inv_sqrt,
                                                n_vectors)
    else:
        row_degree = np.asarray(B.sum(axis=1)).reshape(-1)
        row_degree[row_degree == 0] = 1e-10
        col_degree = B.T @ (counts * 1.0)
        values, vectors = _leading_eigenvectors(B, counts / row_degree, col_degree, n_vectors)
    ncut_vectors = vectors / np.sqrt(np.where(col_degree > 0, col_degree, 1.0))[:, None]
    embedding = transfer_rows(B, ncut_vectors, row_degree)
    X = embedding if groups is None else embedding[groups[1]]
    space = _engine.MixedSpace.dense(X)

    def one_run(_):
        seeds = _engine.seed_objects(space, n_clusters, "k-means++", rng, n_jobs, n_trials=1)
        return _engine.dense_lloyd(X, seeds, max_iter, n_jobs)  # = labels_from_seeds + lloyd, bit for bit

    best, _ = best_of_restarts(one_run, n_init)
    labels, moved = best.labels, 0
    if has_empty_part(labels, n_clusters):
        closeness = -((X[:, None, :] - best.dense_centers[None, :, :]) ** 2).sum(axis=2)
        labels, moved = honour_n_clusters(labels, closeness, n_clusters)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty_like(first)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    labels = rank[inverse.reshape(-1)].astype(np.int64)  # parts numbered by their first object
    return TransferCut(labels, embedding, values, float(best.objective), best.n_iter, moved)
