"""The Dask ensemble: basic partitions as a dask array chunked by objects, built from an array,
from row blocks, or by generating each partition as one Dask task (see :mod:`cclust.dask`)."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust._blocks import BLOCK, aligned
from cclust._progress import progress
from cclust.dask._runner import _import_dask, _resolve_client, _Runner, recovering
from cclust.ensemble import Ensemble, _check_provenance, _encode_column
from cclust.errors import ValidationError
from cclust.validation import check_array_2d, check_int

#: default bytes of labels per Dask chunk
_TARGET_CHUNK_BYTES = 64 * 2**20


def _is_dask_array(x):
    return type(x).__module__.startswith("dask.array") and hasattr(x, "chunks")


def _check_known_chunks(x, name):
    if any(np.isnan(c) for dim in x.chunks for c in dim):
        raise ValidationError(
            f"{name} is a dask array with unknown chunk sizes (nan in {name}.chunks); call "
            f"{name}.compute_chunk_sizes() first (or {name} = {name}.compute_chunk_sizes())."
        )


def check_dask_X(X: Any) -> Any:
    """Check a dask-array X's shape and dtype now; its values are checked in the task using it."""
    _check_known_chunks(X, "X")
    if X.ndim != 2:
        raise ValidationError(f"X must be 2-D (n_samples, n_features), got a dask array of shape {X.shape}.")
    if X.dtype.kind not in "fiub":
        raise ValidationError(f"X must hold numbers, got a dask array of dtype {X.dtype}.")
    return X


def _chunk_rows(chunks, n, r):
    """Rows per chunk: ``chunks`` rounded up to a multiple of BLOCK, or ~64 MiB of labels."""
    if chunks is None:
        rows = _TARGET_CHUNK_BYTES // (4 * max(r, 1))
    else:
        rows = check_int(chunks, "chunks", low=1)
    rows = -(-rows // BLOCK) * BLOCK
    return int(min(rows, max(n, 1)) if n <= rows else rows)


# -- tasks (module level so that worker processes unpickle them by reference) ------------------

def _checked_X(X):
    return check_array_2d(np.asarray(X), "X")


def _one_column(one_partition, X, seq, j):
    labels = one_partition(aligned(X), np.random.default_rng(seq))
    codes, _ = _encode_column(np.asarray(labels), j, -1)
    return codes


def _column_stats(codes):
    present = codes[codes >= 0]
    return np.bincount(present).astype(np.int64), bool(present.shape[0] < codes.shape[0])


def _row_block(columns, start, stop):
    return np.ascontiguousarray(np.column_stack([c[start:stop] for c in columns]), dtype=np.int32)


def _check_block(block, r, j, rows=None):
    """The label chunk j as int32 C-contiguous, after checking it holds all r partitions."""
    block = np.asarray(block)
    if block.ndim != 2 or block.shape[1] != r:
        raise ValidationError(
            f"chunk {j} of the ensemble has shape {block.shape} but the ensemble has r = {r} "
            "partitions; every row chunk must hold all partitions (chunk along rows only)."
        )
    if rows is not None and block.shape[0] != rows:
        raise ValidationError(f"chunk {j} of the ensemble has {block.shape[0]} rows, its metadata says {rows}.")
    if block.dtype.kind not in "iu":
        raise ValidationError(f"chunk {j} of the ensemble has dtype {block.dtype}; labels must be integers.")
    return aligned(block, np.int32)


def _block_stats(block, r, j):
    """Per partition: bincount of the labels >= 0, the smallest label, and whether any is -1."""
    block = _check_block(block, r, j)
    counts = []
    for i in range(r):
        col = block[:, i]
        present = col[col >= 0]
        counts.append(np.bincount(present).astype(np.int64))
    low = block.min(axis=0) if block.shape[0] else np.zeros(r, dtype=np.int32)
    return counts, low.astype(np.int64)


class DaskEnsemble:
    """Basic partitions of n objects as a dask array chunked by objects (the Dask Ensemble).

    Parameters
    ----------
    labels : dask.array.Array of shape (n_samples, n_partitions), integer
        Partition i in column i, labelled ``0..K_i-1`` with every label in use, ``-1`` for an
        object missing from it (relabel with :class:`cclust.Ensemble` first otherwise). Chunk
        sizes must be known. Rechunked to whole partitions per chunk and a multiple of 4096
        rows (see the module doc).
    weights : array-like of shape (n_partitions,), default=None
        Non-negative partition weights, normalised to sum to one. Equal if None.
    chunks : int, default=None
        Rows per chunk (rounded up to a multiple of 4096); None keeps the input's first chunk
        size rounded the same way.
    client : dask.distributed.Client, default=None
        Where the one validating pass runs; None uses Dask's default.
    provenance : str or sequence of str, default=None
        What made each partition, as :attr:`cclust.Ensemble.provenance` (e.g. the algorithms
        of a heterogeneous ensemble); kept by :meth:`with_weights`, :meth:`persist` and
        :meth:`compute`.

    Attributes
    ----------
    labels : dask.array.Array of int32, chunked along rows only
    n_clusters, offsets, weights, cluster_sizes, has_missing, provenance : as :class:`cclust.Ensemble`

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from cclust.dask import DaskEnsemble
    >>> L = da.from_array(np.array([[0, 1], [0, 0], [1, -1]]), chunks=(2, 2))
    >>> E = DaskEnsemble(L)
    >>> E.n_clusters.tolist(), E.has_missing
    ([2, 2], True)
    >>> E.compute().labels.tolist()
    [[0, 1], [0, 0], [1, -1]]
    """

    def __init__(self, labels: Any, weights: npt.ArrayLike | None = None, *, chunks: int | None = None,
                 client: Any = None, provenance: str | Sequence[str] | None = None) -> None:
        if not _is_dask_array(labels):
            raise ValidationError(
                f"labels must be a dask.array.Array, got {type(labels).__name__}; use "
                "cclust.dask.from_array(labels) for an in-memory array or Ensemble."
            )
        _check_known_chunks(labels, "labels")
        if labels.ndim != 2:
            raise ValidationError(f"labels must be 2-D (n_samples, n_partitions), got shape {labels.shape}.")
        if labels.dtype.kind not in "iu":
            raise ValidationError(f"labels must hold integers (0..K_i-1, -1 for missing), got dtype {labels.dtype}.")
        n, r = (int(v) for v in labels.shape)
        if n == 0 or r == 0:
            raise ValidationError(f"labels must hold at least one object and one partition, got shape {labels.shape}.")
        rows = _chunk_rows(chunks if chunks is not None else labels.chunks[0][0], n, r)
        labels = labels.astype(np.int32).rechunk((rows, r))
        runner = _Runner(client)
        blocks = labels.to_delayed().ravel().tolist()
        stats = runner.compute([runner.delayed(_block_stats)(b, r, j) for j, b in enumerate(blocks)])
        sizes, low = [], np.min([s[1] for s in stats], axis=0)
        for i in range(r):
            width = max(s[0][i].shape[0] for s in stats)
            total = np.zeros(width, dtype=np.int64)
            for s in stats:
                total[: s[0][i].shape[0]] += s[0][i]
            if low[i] < -1:
                raise ValidationError(f"labels[:, {i}] holds {low[i]}; labels must be 0..K_i-1 or -1 for missing.")
            if width == 0:
                raise ValidationError(f"labels[:, {i}] labels no object (every entry is missing); drop that partition.")
            if (total == 0).any():
                gap = int(np.flatnonzero(total == 0)[0])
                raise ValidationError(
                    f"labels[:, {i}] never uses label {gap} of 0..{width - 1}; a DaskEnsemble needs labels "
                    "relabelled to 0..K_i-1 (pass them through cclust.Ensemble, or relabel per partition)."
                )
            sizes.append(total)
        self._init(labels, np.array([s.shape[0] for s in sizes], dtype=np.int64), np.concatenate(sizes),
                   bool((low < 0).any()), Ensemble._check_weights(weights, r))
        self._client = runner.client
        self._raw_weights = None if weights is None else np.array(weights, dtype=np.float64, copy=True)
        self._provenance = _check_provenance(provenance, r)

    @classmethod
    def _from_parts(cls, labels, n_clusters, cluster_sizes, has_missing, weights):
        self = cls.__new__(cls)
        self._init(labels, n_clusters, cluster_sizes, has_missing, weights)
        return self

    def _init(self, labels, n_clusters, cluster_sizes, has_missing, weights):
        for a in (n_clusters, cluster_sizes, weights):
            a.setflags(write=False)
        self._labels = labels
        self._n_clusters = n_clusters
        self._cluster_sizes = cluster_sizes
        self._has_missing = has_missing
        self._weights = weights
        offsets = np.zeros(n_clusters.shape[0] + 1, dtype=np.int64)
        np.cumsum(n_clusters, out=offsets[1:])
        offsets.setflags(write=False)
        self._offsets = offsets
        self._keep = None  # futures the label graph depends on (see generate_partitions)
        self._client = None  # the client the chunks live on, if any
        # The weights as given (None: equal), so compute() normalises them exactly once, as
        # Ensemble(labels, weights) does, and gives bit-identical weights.
        self._raw_weights = None
        self._provenance = None  # tuple of str, one per partition, or None
        self._source = None  # what generated the labels, to make them again (see _Generation)
        self._persisted = False

    labels = property(lambda self: self._labels)
    provenance = property(lambda self: self._provenance)
    n_clusters = property(lambda self: self._n_clusters)
    offsets = property(lambda self: self._offsets)
    weights = property(lambda self: self._weights)
    cluster_sizes = property(lambda self: self._cluster_sizes)
    has_missing = property(lambda self: self._has_missing)
    n_samples = property(lambda self: int(self._labels.shape[0]))
    n_partitions = property(lambda self: int(self._labels.shape[1]))
    shape = property(lambda self: (self.n_samples, self.n_partitions))

    @property
    def chunk_starts(self) -> npt.NDArray[np.int64]:
        """First row of every chunk, and n at the end."""
        return np.concatenate(([0], np.cumsum(self._labels.chunks[0]))).astype(np.int64)

    def blocks(self) -> list[Any]:
        """One Delayed per row chunk, in order."""
        return self._labels.to_delayed().ravel().tolist()

    def with_weights(self, weights: npt.ArrayLike | None) -> DaskEnsemble:
        """The same partitions with other weights."""
        if weights is None:
            return self
        out = DaskEnsemble._from_parts(self._labels, self._n_clusters, self._cluster_sizes,
                                       self._has_missing, Ensemble._check_weights(weights, self.n_partitions))
        out._keep, out._client = self._keep, self._client
        out._source, out._persisted = self._source, self._persisted
        out._raw_weights = np.array(weights, dtype=np.float64, copy=True)
        out._provenance = self._provenance
        return out

    def persist(self, client: Any = None) -> DaskEnsemble:
        """The same ensemble with its label chunks computed and kept in (cluster) memory."""
        client = _resolve_client(client or self._client)
        labels = client.persist(self._labels) if client is not None else self._labels.persist()
        out = DaskEnsemble._from_parts(labels, self._n_clusters, self._cluster_sizes,
                                       self._has_missing, self._weights)
        out._client, out._raw_weights, out._provenance = client, self._raw_weights, self._provenance
        out._source, out._persisted = self._source, client is not None
        return out

    def compute(self, client: Any = None) -> Ensemble:
        """The in-memory :class:`cclust.Ensemble` (gathers the n x r labels)."""
        client = _resolve_client(client or self._client)
        if client is None:
            labels = self._labels.compute()
        else:
            labels = recovering(lambda: client.compute(self._labels, sync=True), ensemble=self,
                                what="DaskEnsemble.compute")
        return Ensemble(np.asarray(labels), weights=self._raw_weights, provenance=self._provenance)

    def _can_regenerate(self):
        """Whether the labels can be made again from their source after Dask lost them."""
        return self._source is not None

    def _regenerate(self):
        """Make the labels again from their source (the same labels, new keys) in place: the
        ensemble's value does not change, only the cluster data behind it."""
        runner = _Runner(self._client)
        columns, keep = self._source.columns(runner)
        labels = self._source.labels(runner, columns).rechunk(self._labels.chunks)
        if self._persisted:
            labels = runner.client.persist(labels)
        self._labels, self._keep = labels, keep

    def __repr__(self) -> str:
        missing = ", with missing labels" if self._has_missing else ""
        return (f"DaskEnsemble(n_samples={self.n_samples}, n_partitions={self.n_partitions}, "
                f"K_i in [{self._n_clusters.min()}, {self._n_clusters.max()}], "
                f"{len(self._labels.chunks[0])} chunks{missing})")


def from_array(labels: Any, weights: npt.ArrayLike | None = None, *, chunks: int | None = None,
               client: Any = None, provenance: str | Sequence[str] | None = None) -> DaskEnsemble:
    """A DaskEnsemble from an Ensemble, an array-like of labels or a dask array.

    In-memory input goes through :class:`cclust.Ensemble` first (relabelling, validation). An
    Ensemble's provenance is kept unless ``provenance`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.dask import from_array
    >>> from_array(np.array([[0, 5], [0, 7], [1, 7]])).n_clusters.tolist()
    [2, 2]
    """
    _, da = _import_dask()
    if _is_dask_array(labels):
        return DaskEnsemble(labels, weights, chunks=chunks, client=client, provenance=provenance)
    E = labels if isinstance(labels, Ensemble) and weights is None else Ensemble(labels, weights)
    provenance = E.provenance if provenance is None else _check_provenance(provenance, E.n_partitions)
    rows = _chunk_rows(chunks, E.n_samples, E.n_partitions)
    dlabels = da.from_array(np.array(E.labels), chunks=(rows, E.n_partitions))
    D = DaskEnsemble._from_parts(dlabels, E.n_clusters.copy(), E.cluster_sizes.copy(),
                                 E.has_missing, E.weights.copy())
    equal = np.array_equal(E.weights, np.full(E.n_partitions, 1.0 / E.n_partitions))
    D._raw_weights = None if equal else E.weights.copy()
    D._provenance = provenance
    return D


def from_blocks(blocks: Sequence[Any], weights: npt.ArrayLike | None = None, *, client: Any = None,
                provenance: str | Sequence[str] | None = None) -> DaskEnsemble:
    """A DaskEnsemble from row chunks (NumPy or dask arrays) in order; they must agree in r."""
    _, da = _import_dask()
    blocks = list(blocks)
    if not blocks:
        raise ValidationError("blocks must hold at least one chunk of labels, got none.")
    parts = []
    for j, b in enumerate(blocks):
        b = b if _is_dask_array(b) else da.from_array(np.asarray(b))
        if b.ndim != 2:
            raise ValidationError(f"blocks[{j}] must be 2-D (rows, n_partitions), got shape {b.shape}.")
        parts.append(b)
    widths = [int(b.shape[1]) for b in parts]
    if len(set(widths)) > 1:
        bad = next(j for j, w in enumerate(widths) if w != widths[0])
        raise ValidationError(
            f"blocks disagree in r (the number of partitions): blocks[0] has {widths[0]} columns, "
            f"blocks[{bad}] has {widths[bad]}; every chunk must hold the same partitions."
        )
    return DaskEnsemble(da.concatenate(parts, axis=0), weights, client=client, provenance=provenance)


class _Generation:
    """What a generated ensemble is made from (the function, X, the seeds, the chunking), kept
    so that the ensemble can make its labels again when Dask lost them.

    A NumPy X goes to the cluster by ``client.scatter``: data without lineage, which the
    scheduler forgets when the worker holding it dies, and with X every column that worker held
    (the columns' tasks need X). The scheduler recomputes everything else from the graph. So the
    ensemble keeps the X future while it lives, and keeps this source to scatter X again under a
    new key and make new columns (:func:`cclust.dask._runner.recovering`): the same seeds give
    the same labels. X is kept by reference, not copied; its hash, taken when it is first
    scattered, tells whether the caller changed it since (then nothing is made from it).
    """

    def __init__(self, one_partition, X, seqs, client, chunks):
        self.one_partition, self.X, self.seqs, self.client = one_partition, X, seqs, client
        self.n, self.r = int(X.shape[0]), len(seqs)
        self.rows = _chunk_rows(chunks, self.n, self.r)
        self.token = None

    def _x(self, dask):
        """X as the columns' tasks take it, and the futures to keep."""
        if _is_dask_array(self.X):
            return dask.delayed(_checked_X, pure=False)(self.X), []  # one task gathers X (must fit on a worker)
        if self.client is None:
            return self.X, []
        from dask.base import tokenize

        token = tokenize(self.X)
        if self.token is None:
            self.token, key = token, f"ndarray-{token}"  # the key of client.scatter(X): ensembles of one X share it
        elif token != self.token:
            from cclust.errors import LostDataError

            raise LostDataError(
                "X changed after the ensemble was generated from it, so the label columns a lost Dask "
                "worker held cannot be made again; keep X unchanged while its ensemble is in use (or "
                "generate from a copy, or from a dask array X)."
            )
        else:
            import uuid

            key = f"ndarray-{token}-{uuid.uuid4().hex}"  # a new key: the lost one is cancelled on this client
        future = self.client.scatter({key: self.X})[key]
        return future, [future]

    def columns(self, runner, bar=None):
        """The columns persisted (one task each), and the futures the ensemble must keep."""
        dask, _ = _import_dask()
        X_arg, keep = self._x(dask)
        columns = [dask.delayed(_one_column, pure=True)(self.one_partition, X_arg, seq, j)
                   for j, seq in enumerate(self.seqs)]
        if self.client is not None:
            from distributed import as_completed, futures_of

            columns = self.client.persist(columns)
            # The array graph built from them names these keys but does not hold the futures,
            # so the ensemble keeps them (else the cluster forgets the columns), and X's.
            keep.extend(futures_of(columns))
            for _ in as_completed(futures_of(columns), loop=self.client.loop):
                if bar is not None:
                    bar.update(1)
            return columns, keep
        from dask.callbacks import Callback

        keys = {c.key for c in columns}

        class _Bar(Callback):
            def _posttask(self, key, result, dsk, state, id):
                if key in keys and bar is not None:
                    bar.update(1)

        with _Bar():
            columns = runner.persist(columns)
        return columns, None

    def labels(self, runner, columns):
        """The (n, r) label matrix as a dask array of row chunks cut from the columns."""
        _, da = _import_dask()
        starts = list(range(0, self.n, self.rows)) + [self.n]
        parts = [da.from_delayed(runner.delayed(_row_block)(columns, a, b), shape=(b - a, self.r), dtype=np.int32)
                 for a, b in itertools.pairwise(starts)]
        return da.concatenate(parts, axis=0)

    # -- what :func:`cclust.dask._runner.recovering` asks of the generation itself

    def _can_regenerate(self):
        return True

    def _regenerate(self):
        pass  # columns() scatters X under a new key from the second time on


def generate_partitions(one_partition: Callable[[Any, np.random.Generator], Any], X: Any,
                        seqs: Sequence[np.random.SeedSequence], *, client: Any = None, chunks: int | None = None,
                        verbose: int = 0, desc: str = "partitions",
                        provenance: str | Sequence[str] | None = None) -> DaskEnsemble:
    """A DaskEnsemble whose column j is ``one_partition(X, default_rng(seqs[j]))``, one task each.

    The threaded path (cclust.generators.seeded_ensemble) feeds the same seeds to the same function,
    and both relabel each column with the same rule, so the ensembles are identical. Columns a
    lost worker held are made again (see :class:`_Generation`).
    """
    runner = _Runner(client)
    source = _Generation(one_partition, X, seqs, runner.client, chunks)
    r = source.r
    with progress(total=r, desc=desc, verbose=verbose) as bar:
        first = [bar]

        def make():
            columns, keep = source.columns(runner, first.pop() if first else None)
            return columns, keep, runner.compute([runner.delayed(_column_stats)(c) for c in columns])

        columns, keep, stats = recovering(make, ensemble=source, what="generating the partitions")
    n_clusters = np.array([s[0].shape[0] for s in stats], dtype=np.int64)
    sizes = np.concatenate([s[0] for s in stats])
    E = DaskEnsemble._from_parts(source.labels(runner, columns), n_clusters, sizes,
                                 any(s[1] for s in stats), np.full(r, 1.0 / r))
    E._keep, E._client, E._source = keep, runner.client, source
    E._provenance = _check_provenance(provenance, r)
    return E
