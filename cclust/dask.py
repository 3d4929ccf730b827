"""Dask backend: basic partitions as Dask tasks and KCC over an ensemble chunked by objects.

Users with millions of objects outgrow one machine's memory long before KCC's O(n r K) passes
outgrow its cores. This module runs the two linear-in-n steps on Dask (a
``dask.distributed`` cluster, or Dask's local scheduler when no client is given):

* :func:`generate_partitions` (used by every generator with ``backend="dask"`` or
  ``client=``): each basic partition is one Dask task drawing from the same
  ``SeedSequence`` child as the threaded path, so the ensemble is identical for any backend.
* :class:`DaskEnsemble`: the ``(n, r)`` int32 label matrix as a ``dask.array`` chunked along
  the objects only (every chunk holds all r partitions), with the per-partition facts KCC needs
  (``n_clusters``, ``offsets``, ``weights``, ``cluster_sizes``) computed once, in one pass.
  Chunks are kept at a multiple of 4096 rows, the compiled engine's own chunk, so that sums
  computed chunk by chunk add up in exactly the engine's order. ``compute()`` gives the
  in-memory :class:`~cclust.Ensemble`.
* :func:`kcc`: KCC (Wu et al. 2015) with every pass mapped over the row chunks. Each chunk runs
  the compiled engine's own per-block kernels -- the Lloyd pass of ``lloyd`` (best labels, ties
  kept at the current cluster, per-4096-object objective partials, moved count, tally change),
  the tally, the reseed pick and the k-means++ (Arthur & Vassilvitskii 2007) candidate pass and
  draw of ``kmeanspp`` -- and the client adds the partials in chunk order, builds the centres
  from the tally and applies the stop rule with the engine's own ``centres_from_tally`` and
  ``lloyd_verdict``. Seeding uses the same random numbers as the in-memory path
  (``cclust._engine``). Labels, objective, trace and n_iter are therefore those of
  :func:`cclust.consensus_functions.kcc.kcc` for the same seed, by construction; parameter checks,
  restarts and the result are shared with it (``cclust.consensus_functions._kcc_run``).

* :func:`uspec_ensemble`, :func:`tcut` and :func:`usenc`: U-SPEC generation and the
  transfer-cut consensus of U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020) per row block, the
  representatives and the small column side global (see the section before them); the labels
  do not depend on the chunking.

Nothing ever gathers the label matrix: the client holds K x sum K_i tables and n-vectors of
int32 labels are kept chunked on the workers between passes. When the ensemble's graph
generates its labels (rather than holding persisted chunks), each pass regenerates them, so
memory stays at a few chunks per worker; call :meth:`DaskEnsemble.persist` when the labels fit
in the cluster's memory and passes should not recompute them.

Generation needs every object for every partition (k-means over all of X), so a dask-array X
is gathered once into one task and must fit in one worker's memory; a NumPy X is scattered to
the cluster once.
"""
import itertools
import operator
from dataclasses import dataclass

import numpy as np

from cclust import _engine
from cclust._progress import progress
from cclust.consensus_functions._kcc_run import best_restart, finish, prepare
from cclust.validation import check_array_2d, check_int
from cclust.ensemble import Ensemble, _check_provenance, _encode_column
from cclust.errors import ValidationError

__all__ = ["DaskEnsemble", "check_dask_X", "from_array", "from_blocks", "generate_partitions", "kcc", "tcut",
           "usenc", "uspec_ensemble"]

#: rows of the compiled engine's chunks; Dask chunks are multiples of it (see module doc)
BLOCK = _engine._CHUNK
#: default bytes of labels per Dask chunk
_TARGET_CHUNK_BYTES = 64 * 2**20


def _import_dask():
    try:
        import dask
        import dask.array as da
    except ImportError:  # pragma: no cover - the extra is installed in every test environment
        raise ImportError("the Dask backend needs dask: pip install 'cclust[dask]'") from None
    return dask, da


def _is_dask_array(x):
    return type(x).__module__.startswith("dask.array") and hasattr(x, "chunks")


def _check_known_chunks(x, name):
    if any(np.isnan(c) for dim in x.chunks for c in dim):
        raise ValidationError(
            f"{name} is a dask array with unknown chunk sizes (nan in {name}.chunks); call "
            f"{name}.compute_chunk_sizes() first (or {name} = {name}.compute_chunk_sizes())."
        )


def check_dask_X(X):
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

def _aligned(a, dtype=None):
    """``a`` C-contiguous and aligned: an array unpickled on a worker may start at any byte of
    its message, and the compiled kernels read their inputs as typed (aligned) memory."""
    return np.require(a, dtype=dtype, requirements=["C", "A"])


def _checked_X(X):
    return check_array_2d(np.asarray(X), "X")


def _one_column(one_partition, X, seq, j):
    labels = one_partition(_aligned(X), np.random.default_rng(seq))
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
    return _aligned(block, np.int32)


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


_kernel = _engine._kernel


def _rows_args(block, params):
    """The compiled kernels' leading "rows" arguments for a label block (no dense block)."""
    offsets, weights, family, p = params
    return (np.empty((block.shape[0], 0)), 0.0, block, _aligned(offsets, np.int64),
            _aligned(weights, np.float64), family, p)


def _fold(parts):
    """Left-to-right sum from 0.0 of a list of arrays of per-chunk partials, in chunk order:
    the order in which the compiled passes add their chunks, so the sum is theirs bit for bit."""
    total = 0.0
    for part in parts:
        for v in part.tolist():
            total += v
    return total


def _task_tally(block, labels, n_clusters, r, j, params):
    """The block's tally of ``labels``: (counts, sizes) with a last row for label -1."""
    block = _check_block(block, r, j)
    return _kernel().tally(*_rows_args(block, params), _aligned(labels, np.int32), n_clusters, 1)


def _task_assign(block, centres, r, j, params):
    """Nearest centre per object, with the block's tally of those labels (saves a pass)."""
    block = _check_block(block, r, j)
    kernel = _kernel()
    args = _rows_args(block, params)
    k = centres.shape[0]
    labels, _, _ = kernel.assign(*args, np.empty((k, 0)), _aligned(centres, np.float64), 1)
    return labels, kernel.tally(*args, labels, k, 1)


def _task_costs(block, labels, centres, r, j, params):
    """Each object's cost to the centre of its label."""
    block = _check_block(block, r, j)
    k = centres.shape[0]
    costs, _ = _kernel().objective(*_rows_args(block, params), np.empty((k, 0)),
                                   _aligned(centres, np.float64), _aligned(labels, np.int32), 1)
    return costs


def _task_lloyd_pass(block, labels, centres, r, j, params):
    """One Lloyd pass over the block: the compiled lloyd's own pass, as
    (best labels, their costs, (chunk objectives, moved, count changes, size changes))."""
    block = _check_block(block, r, j)
    best, cost, chunk_objective, moved, delta_counts, delta_sizes, _ = _kernel().lloyd_pass(
        *_rows_args(block, params), _aligned(centres, np.float64), _aligned(labels, np.int32), 1)
    return best, cost, (chunk_objective, moved, delta_counts, delta_sizes)


def _with_overrides(labels, overrides, start):
    """``labels`` of a block whose first object is ``start``, with objects moved by a reseed."""
    out = labels.copy()
    for x, k in overrides.items():
        out[x - start] = k
    return out


def _task_reseed_pick(labels, costs, sizes, overrides, start):
    """The block's reseed pick (global index, cost, label), or None when no object may move."""
    labels = _aligned(_with_overrides(labels, overrides, start), np.int32)
    local, cost = _kernel().costliest_movable(labels, _aligned(costs, np.float64), _aligned(sizes, np.int64))
    if local < 0:
        return None
    return local + start, cost, int(labels[local])


def _task_label_rows(block, local, r, j):
    block = _check_block(block, r, j)
    return block[np.asarray(local, dtype=np.int64)].copy()


def _task_candidate_costs(block, closest, candidates, r, j, params):
    """k-means++ D^2 to each candidate (label rows), capped by ``closest`` (None: not capped),
    and the per-chunk potentials: the compiled kmeanspp's own candidate pass."""
    block = _check_block(block, r, j)
    closest = None if closest is None else _aligned(closest, np.float64)
    return _kernel().candidate_costs(*_rows_args(block, params), _aligned(candidates, np.int32), closest, 1)


def _task_candidate_row(costs, t):
    """D^2 of the block's objects to candidate ``t`` (a row of _task_candidate_costs' first
    item), copied so that the other candidates' rows can be freed."""
    return costs[0][t].copy()


def _task_running_end(closest, start):
    """The k-means++ running sum of D^2 after this block, continuing from ``start``."""
    return _kernel().draw_positions(_aligned(closest, np.float64), start, np.empty(0))[0]


def _task_draw(closest, start, targets):
    """Block positions of the draws ``targets`` on the running sum continued from ``start``."""
    return _kernel().draw_positions(_aligned(closest, np.float64), start,
                                    np.asarray(targets, dtype=np.float64))[1].tolist()


def _task_last_positive(closest):
    return _kernel().draw_positions(_aligned(closest, np.float64), 0.0, np.empty(0))[2]


def _task_zero_at(closest, local):
    out = closest.copy()
    out[local] = 0.0
    return out


def _task_concat(*parts):
    return np.concatenate(parts)


# -- the client side ------------------------------------------------------------------------

def _resolve_client(client):
    """The given client, else the default dask.distributed client if one exists, else None
    (Dask's local scheduler)."""
    if client is not None:
        return client
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client has been created
        return None


class _Runner:
    """persist/compute on the given client, else the default client, else the local scheduler."""

    def __init__(self, client):
        self.client = _resolve_client(client)
        self.dask, _ = _import_dask()

    def delayed(self, fn):
        return self.dask.delayed(fn, pure=True)

    def _waves(self, objs):
        """Chunk maps go to a cluster in waves of ~2 tasks per worker thread: given all at
        once, the scheduler may run every chunk's (label-generating) producer before the
        consumers and hold all n x r labels at the same time (measured at n = 1e7, r = 100:
        4.1 GiB peak over client and workers at once, 1.05 GiB in waves)."""
        objs = list(objs)
        try:
            size = max(2, 2 * sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a client that cannot say: one wave
            size = len(objs)
        return [objs[i:i + size] for i in range(0, len(objs), size)]

    def persist(self, objs):
        if not objs:
            return []
        if self.client is not None:
            from distributed import as_completed, futures_of

            out = []
            for wave in self._waves(objs):
                done = self.client.persist(wave)
                for future in as_completed(futures_of(done), loop=self.client.loop):
                    if future.status == "error":
                        future.result()  # raises the worker's exception here, not later
                out.extend(done)
            return out
        return list(self.dask.persist(*objs))

    def compute(self, objs):
        if not objs:
            return []
        if self.client is not None:
            out = []
            for wave in self._waves(objs):
                out.extend(self.client.compute(wave, sync=True))
            return out
        return list(self.dask.compute(*objs))


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

    def __init__(self, labels, weights=None, *, chunks=None, client=None, provenance=None):
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
    def chunk_starts(self):
        """First row of every chunk, and n at the end."""
        return np.concatenate(([0], np.cumsum(self._labels.chunks[0]))).astype(np.int64)

    def blocks(self):
        """One Delayed per row chunk, in order."""
        return self._labels.to_delayed().ravel().tolist()

    def with_weights(self, weights):
        """The same partitions with other weights."""
        if weights is None:
            return self
        out = DaskEnsemble._from_parts(self._labels, self._n_clusters, self._cluster_sizes,
                                       self._has_missing, Ensemble._check_weights(weights, self.n_partitions))
        out._keep, out._client = self._keep, self._client
        out._raw_weights = np.array(weights, dtype=np.float64, copy=True)
        out._provenance = self._provenance
        return out

    def persist(self, client=None):
        """The same ensemble with its label chunks computed and kept in (cluster) memory."""
        client = _resolve_client(client or self._client)
        labels = client.persist(self._labels) if client is not None else self._labels.persist()
        out = DaskEnsemble._from_parts(labels, self._n_clusters, self._cluster_sizes,
                                       self._has_missing, self._weights)
        out._client, out._raw_weights, out._provenance = client, self._raw_weights, self._provenance
        return out

    def compute(self, client=None):
        """The in-memory :class:`cclust.Ensemble` (gathers the n x r labels)."""
        client = _resolve_client(client or self._client)
        labels = client.compute(self._labels, sync=True) if client is not None else self._labels.compute()
        return Ensemble(np.asarray(labels), weights=self._raw_weights, provenance=self._provenance)

    def __repr__(self):
        missing = ", with missing labels" if self._has_missing else ""
        return (f"DaskEnsemble(n_samples={self.n_samples}, n_partitions={self.n_partitions}, "
                f"K_i in [{self._n_clusters.min()}, {self._n_clusters.max()}], "
                f"{len(self._labels.chunks[0])} chunks{missing})")


def from_array(labels, weights=None, *, chunks=None, client=None, provenance=None):
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


def from_blocks(blocks, weights=None, *, client=None, provenance=None):
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


def generate_partitions(one_partition, X, seqs, *, client=None, chunks=None, verbose=0,
                        desc="partitions", provenance=None):
    """A DaskEnsemble whose column j is ``one_partition(X, default_rng(seqs[j]))``, one task each.

    The threaded path (cclust.generators._generate) feeds the same seeds to the same function,
    and both relabel each column with the same rule, so the ensembles are identical.
    """
    dask, da = _import_dask()
    runner = _Runner(client)
    client = runner.client
    n, r = int(X.shape[0]), len(seqs)
    if _is_dask_array(X):
        X_arg = dask.delayed(_checked_X, pure=False)(X)  # one task gathers X (must fit on a worker)
    elif client is not None:
        X_arg = client.scatter(X)
    else:
        X_arg = X
    columns = [dask.delayed(_one_column, pure=True)(one_partition, X_arg, seq, j)
               for j, seq in enumerate(seqs)]
    with progress(total=r, desc=desc, verbose=verbose) as bar:
        if client is not None:
            from distributed import as_completed, futures_of

            columns = client.persist(columns)
            # The array graph built below names these keys but does not hold the futures, so
            # the ensemble keeps them (else the cluster forgets the columns).
            keep = futures_of(columns)
            for _ in as_completed(keep, loop=client.loop):
                bar.update(1)
        else:
            from dask.callbacks import Callback

            keys = {c.key for c in columns}

            class _Bar(Callback):
                def _posttask(self, key, result, dsk, state, id):
                    if key in keys:
                        bar.update(1)

            with _Bar():
                columns = runner.persist(columns)
            keep = None
    stats = runner.compute([runner.delayed(_column_stats)(c) for c in columns])
    n_clusters = np.array([s[0].shape[0] for s in stats], dtype=np.int64)
    sizes = np.concatenate([s[0] for s in stats])
    rows = _chunk_rows(chunks, n, r)
    starts = list(range(0, n, rows)) + [n]
    parts = [da.from_delayed(runner.delayed(_row_block)(columns, a, b), shape=(b - a, r), dtype=np.int32)
             for a, b in itertools.pairwise(starts)]
    E = DaskEnsemble._from_parts(da.concatenate(parts, axis=0), n_clusters, sizes,
                                 any(s[1] for s in stats), np.full(r, 1.0 / r))
    E._keep, E._client = keep, client
    E._provenance = _check_provenance(provenance, r)
    return E


# -- KCC ------------------------------------------------------------------------------------

def _seed_centres(seed_labels, offsets, cluster_sizes):
    """Centres of K seed objects from their label rows, without a pass over the data: the tally
    of "seed k alone in cluster k, every other object in no cluster" (its last row is the
    partition sizes minus the seeds' labels), turned into centres by the engine's rule, so a seed
    missing from a partition gets that partition's distribution as the in-memory path gives it."""
    k, width = seed_labels.shape[0], int(offsets[-1])
    counts = np.zeros((k + 1, width), dtype=np.int64)
    for i in range(seed_labels.shape[1]):
        labelled = seed_labels[:, i] >= 0
        np.add.at(counts, (np.flatnonzero(labelled), offsets[i] + seed_labels[labelled, i]), 1)
    counts[k] = cluster_sizes - counts[:k].sum(axis=0)
    return _kernel().centres_from_tally(offsets, counts)


@dataclass(frozen=True)
class _BlockRun:
    """A Lloyd run of the block executor (labels as a list of blocks) and its contingency table."""

    run: _engine.LloydRun
    table: np.ndarray

    @property
    def n_iter(self):
        return self.run.n_iter


class _BlockExecutor:
    """The passes of one KCC run mapped over a DaskEnsemble's row blocks.

    Every method runs the compiled engine's own per-block kernels (kmeans.hpp: lloyd_pass,
    tally, centres_from_tally, costliest_movable, candidate_costs, the k-means++ draw) and adds
    their per-chunk partials in chunk order, so each step gives what the in-memory ``lloyd`` and
    ``kmeanspp`` compute for the whole array.
    """

    def __init__(self, ensemble, params, runner):
        self.ensemble, self.params, self.runner = ensemble, params, runner
        self.blocks = ensemble.blocks()
        self.starts = ensemble.chunk_starts
        self.n_partitions = ensemble.n_partitions
        self.delayed = runner.delayed

    def map(self, fn, *per_block, shared=()):
        """fn(block_j, *per_block_j, *shared, r, j, params) for every block, as Delayed."""
        return [self.delayed(fn)(b, *(p[j] for p in per_block), *shared, self.n_partitions, j, self.params)
                for j, b in enumerate(self.blocks)]

    def part(self, objs, i):
        """Item ``i`` of each Delayed tuple in ``objs``."""
        return [self.delayed(operator.getitem)(o, i) for o in objs]

    _candidate_costs = staticmethod(_task_candidate_costs)

    def candidate_rows(self, index):
        """Label rows of the objects ``index`` (global), in that order, as int32 (len, r)."""
        index = np.asarray(index, dtype=np.int64)
        block = np.searchsorted(self.starts, index, side="right") - 1
        jobs = [self.delayed(_task_label_rows)(self.blocks[c], [int(x - self.starts[c])], self.n_partitions, int(c))
                for x, c in zip(index.tolist(), block.tolist())]
        return np.ascontiguousarray(np.concatenate(self.runner.compute(jobs), axis=0), dtype=np.int32)

    def tally(self, labels, n_clusters):
        parts = self.runner.compute(self.map(_task_tally, labels, shared=(n_clusters,)))
        return sum(p[0] for p in parts), sum(p[1] for p in parts)

    def centres(self, counts):
        return _kernel().centres_from_tally(self.ensemble.offsets, counts)

    def labels_from_seeds(self, seeds):
        """Every object's nearest seed (the in-memory labels_from_seeds), and their tally."""
        centres = _seed_centres(self.candidate_rows(seeds), self.ensemble.offsets, self.ensemble.cluster_sizes)
        out = self.runner.persist(self.map(_task_assign, shared=(self.delayed(centres),)))
        parts = self.runner.compute(self.part(out, 1))
        tally = (sum(p[0] for p in parts), sum(p[1] for p in parts))
        return self.runner.persist(self.part(out, 0)), tally

    def kmeanspp(self, n_clusters, first, uniforms):
        """The compiled kmeanspp, step by step over the blocks (same draws, same sums)."""
        runner, delayed = self.runner, self.delayed
        n_trials = uniforms.shape[1]
        first_costs = self.map(self._candidate_costs, shared=(None, self.candidate_rows([first])))
        closest = runner.persist([delayed(_task_candidate_row)(c, 0) for c in first_costs])
        seeds, chosen = [first], {first}
        for s in range(1, n_clusters):
            ends, running = [], 0.0
            for c in closest:  # one running sum over every object, block after block
                running = delayed(_task_running_end)(c, running)
                ends.append(running)
            ends = runner.compute(ends)
            total = ends[-1]
            seed = -1
            if total > 0.0:
                targets = [float(u) * total for u in uniforms[s - 1]]
                where = np.searchsorted(ends, targets, side="right").tolist()
                candidates = [None] * n_trials
                jobs, slots = [], []
                for j in sorted(set(where)):
                    if j >= len(closest):
                        continue
                    trials = [t for t in range(n_trials) if where[t] == j]
                    start = ends[j - 1] if j > 0 else 0.0
                    jobs.append(delayed(_task_draw)(closest[j], start, [targets[t] for t in trials]))
                    slots.append((j, trials))
                for (j, trials), local in zip(slots, runner.compute(jobs)):
                    for t, x in zip(trials, local):
                        candidates[t] = int(self.starts[j] + x)
                if any(c is None for c in candidates):  # u * total rounded up to total
                    lasts = runner.compute([delayed(_task_last_positive)(c) for c in closest])
                    last = next((int(self.starts[j] + x) for j, x in reversed(list(enumerate(lasts)))
                                 if x >= 0), 0)
                    candidates = [last if c is None else c for c in candidates]
                rows = self.candidate_rows(candidates)
                costs = runner.persist(self.map(self._candidate_costs, closest, shared=(rows,)))
                win = 0
                if n_trials > 1:  # one candidate wins without its potential (a round trip saved)
                    chunk_potentials = np.concatenate(runner.compute(self.part(costs, 1)), axis=0)
                    potentials = [_fold([chunk_potentials[:, t]]) for t in range(n_trials)]
                    for t in range(1, n_trials):
                        if potentials[t] < potentials[win]:
                            win = t
                seed = candidates[win]
                if seed not in chosen:
                    closest = runner.persist([delayed(_task_candidate_row)(c, win) for c in costs])
                else:
                    seed = -1
            if seed < 0:
                seed = 0
                while seed in chosen:
                    seed += 1
                j = int(np.searchsorted(self.starts, seed, side="right") - 1)
                closest[j] = runner.persist([delayed(_task_zero_at)(closest[j], seed - int(self.starts[j]))])[0]
            seeds.append(seed)
            chosen.add(seed)
        return np.array(seeds, dtype=np.int64)

    def reseed(self, labels, costs, sizes, n_clusters):
        """The compiled lloyd's reseed: each empty cluster, in increasing index, takes the
        costliest object whose cluster keeps a member. Each block's pick and the choice among
        the blocks' picks are the engine's costliest_movable, so ties go to the lowest index."""
        kernel = _kernel()
        overrides = {}
        sizes = np.ascontiguousarray(sizes[:n_clusters])
        bounds = list(itertools.pairwise(self.starts.tolist()))

        def block_overrides(a, b):
            return {x: k for x, k in overrides.items() if a <= x < b}

        for empty in range(n_clusters):
            if sizes[empty] != 0:
                continue
            jobs = [self.delayed(_task_reseed_pick)(labels[j], costs[j], sizes.copy(), block_overrides(a, b), a)
                    for j, (a, b) in enumerate(bounds)]
            picks = [p for p in self.runner.compute(jobs) if p is not None]
            winner = -1
            if picks:
                winner, _ = kernel.costliest_movable(np.array([p[2] for p in picks], dtype=np.int32),
                                                     np.array([p[1] for p in picks]), sizes)
            if winner < 0:
                raise ValidationError("cannot re-seed an empty cluster: n_clusters exceeds n_samples.")
            index, _, label = picks[winner]
            sizes[label] -= 1
            sizes[empty] = 1
            overrides[index] = empty
        out = list(labels)
        for j, (a, b) in enumerate(bounds):
            moved = block_overrides(a, b)
            if moved:
                out[j] = self.runner.persist([self.delayed(_with_overrides)(labels[j], moved, a)])[0]
        return out

    def lloyd(self, labels, n_clusters, max_iter, tol, tally=None):
        """The compiled lloyd with every pass mapped over the blocks; ``tally`` is the tally of
        ``labels`` when known. Returns the run (labels as blocks) and its labels' counts."""
        runner, delayed, kernel = self.runner, self.delayed, _kernel()
        counts, sizes = self.tally(labels, n_clusters) if tally is None else tally
        centres = self.centres(counts)
        if (sizes[:n_clusters] == 0).any():
            costs = runner.persist(self.map(_task_costs, labels, shared=(delayed(centres),)))
            labels = self.reseed(labels, costs, sizes, n_clusters)
            counts, sizes = self.tally(labels, n_clusters)
            centres = self.centres(counts)
        trace = []
        objective = previous_objective = 0.0
        previous_labels, previous_centres, previous_counts = labels, centres, counts
        converged = True
        it = 0
        while True:
            passes = runner.persist(self.map(_task_lloyd_pass, labels, shared=(delayed(centres),)))
            summaries = runner.compute(self.part(passes, 2))
            objective = _fold([s[0] for s in summaries])
            moved = sum(s[1] for s in summaries)
            verdict = kernel.lloyd_verdict(it, objective, previous_objective, moved, max_iter, tol)
            if verdict == kernel.STOP_ROSE:
                labels, centres, objective, counts = (previous_labels, previous_centres,
                                                      previous_objective, previous_counts)
                break
            trace.append(objective)
            if verdict >= 0:
                converged = verdict != kernel.STOP_MAX_ITER
                break
            previous_labels, previous_centres, previous_objective, previous_counts = (
                labels, centres, objective, counts)
            labels = runner.persist(self.part(passes, 0))
            counts = counts + sum(s[2] for s in summaries)
            sizes = sizes + sum(s[3] for s in summaries)
            if (sizes[:n_clusters] == 0).any():
                labels = self.reseed(labels, runner.persist(self.part(passes, 1)), sizes, n_clusters)
                counts, sizes = self.tally(labels, n_clusters)
            centres = self.centres(counts)
            it += 1
        run = _engine.LloydRun(labels, objective, np.array(trace), len(trace) - 1, converged,
                               np.empty((n_clusters, 0)), centres)
        return _BlockRun(run, counts[:n_clusters])

    def gather(self, labels):
        return np.concatenate(self.runner.compute([self.delayed(_task_concat)(x) for x in labels])).astype(np.int64)


def kcc(ensemble, n_clusters, *, utility="uh", p=None, weights=None, init="k-means++", n_init=10,
        max_iter=100, tol=1e-6, kmeanspp_trials=None, random_state=None, n_threads=None,
        verbose=0, client=None, chunks=None):
    """KCC on a :class:`DaskEnsemble`: each Lloyd pass is one map over the row chunks.

    Parameters are those of :func:`cclust.consensus_functions.kcc.kcc` (which calls this function for a
    DaskEnsemble or ``backend="dask"``); the result is identical to the in-memory one for the
    same ``random_state`` and ``init``.

    Parameters
    ----------
    ensemble : DaskEnsemble, Ensemble or array-like
        In-memory input is chunked with :func:`from_array` (``chunks`` rows per chunk).
    n_clusters, utility, p, weights, init, n_init, max_iter, tol, kmeanspp_trials, random_state
        As :func:`cclust.consensus_functions.kcc.kcc`.
    n_threads : int, default=None
        Ignored: each chunk task runs the kernels on one thread and the chunks are the
        parallelism (results do not depend on it anyway).
    verbose : int, default=0
        Progress bar over the restarts.
    client : dask.distributed.Client, default=None
        Cluster to run on; None uses Dask's default (a global client, else the local scheduler).
    chunks : int, default=None
        Rows per chunk when the ensemble is not a DaskEnsemble yet.

    Returns
    -------
    ConsensusResult
        As :func:`cclust.consensus_functions.kcc.kcc`, with ``extras["backend"] = "dask"``.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.dask import from_array, kcc as dask_kcc
    >>> X, y = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=10, random_state=0)
    >>> a = dask_kcc(from_array(E), 3, utility="uc", n_init=2, random_state=0)
    >>> b = cclust.consensus("kcc", E, 3, utility="uc", n_init=2, random_state=0)
    >>> bool((a.labels == b.labels).all())
    True
    """
    if not isinstance(ensemble, DaskEnsemble):
        ensemble = from_array(ensemble, chunks=chunks, client=client)
    client = client or ensemble._client
    if weights is not None:
        ensemble = ensemble.with_weights(weights)
    setup = prepare(ensemble, n_clusters, utility, p, init, n_init, max_iter, tol, kmeanspp_trials,
                    random_state, init_labels=_init_labels)
    util, K = setup.utility, setup.n_clusters
    params = (np.ascontiguousarray(ensemble.offsets, dtype=np.int64),
              np.ascontiguousarray(util.effective_weights(ensemble), dtype=np.float64),
              util.code, util.exponent)
    executor = _BlockExecutor(ensemble, params, _Runner(client))
    n = ensemble.n_samples
    offset = None if ensemble.has_missing else util.gamma_offset(ensemble)

    def one_restart(restart):
        if setup.starts is None:
            if init == "random":
                seeds = _engine.random_seeds(setup.rng, n, K)
            else:
                first, uniforms = _engine.kmeanspp_draws(setup.rng, n, K, setup.kmeanspp_trials)
                seeds = executor.kmeanspp(K, first, uniforms)
            start, tally = executor.labels_from_seeds(seeds)
        else:
            labels0 = setup.starts[restart]
            start = [np.ascontiguousarray(labels0[a:b], dtype=np.int32)
                     for a, b in itertools.pairwise(executor.starts)]
            tally = None
        result = executor.lloyd(start, K, setup.max_iter, setup.tol, tally)
        if offset is None:
            return result, float(ensemble.weights @ util.partition_utilities(ensemble, result.table))
        return result, offset - result.run.objective / n

    best, gammas, iterations = best_restart(setup.n_init, one_restart, verbose)
    run = best.run
    labels = executor.gather(run.labels)
    return finish(ensemble, util, labels, K, best.table, run.objective, run.trace, run.n_iter,
                  run.converged, gammas, iterations, setup.max_iter, extras={"backend": "dask"})


def _init_labels(init, n):
    """init labels as a NumPy vector (a dask array is computed: n int32 fit on the client)."""
    if _is_dask_array(init):
        _check_known_chunks(init, "init")
        init = init.compute()
    return init


# -- U-SPEC, U-SENC and the transfer cut on row blocks (Huang, Wang, Wu, Lai & Kwoh 2020) -------
#
# The representatives, the rep-cluster index and the column side of the transfer cut (p x p,
# or sum K_i x sum K_i) are global and small; the neighbour search, the affinity rows, the
# transfer of the eigenvectors and the k-means passes run per row block. Every float that adds
# over objects is added in the objects' order, independently of the blocks: the column-side sums
# by one compiled pass continued from block to block (a chain of tasks), sigma, the k-means
# objective and the centre sums as partials per 4096-object sub-block (global positions; chunks
# are multiples of 4096) folded in order on the client, the k-means++ running sum continued from
# block to block. So labels are the same for any chunking. The k-means passes are the engine's
# compiled kernels (kmeans.cpp: dense_block_pass, dense_block_sums, dense_candidate_costs), each
# 4096-object chunk computed as the whole-array engine computes it, so the k-means is the
# in-memory one bit for bit.

def _sub_block_sums(values):
    """The sums of ``values`` per 4096-object sub-block of a block (which starts on a multiple of
    4096), each one NumPy sum of that sub-block alone: the same floats for any blocks."""
    return [float(values[a:a + BLOCK].sum()) for a in range(0, values.shape[0], BLOCK)]


def _fold_sub_blocks(parts):
    """Left-to-right sum from zero of the sub-block partials of every block, in order."""
    return _fold([np.asarray(part, dtype=np.float64) for part in parts])


def _task_uspec_rows(X, index, k):
    from cclust.uspec import nearest_in_index

    neighbors, distances = nearest_in_index(_aligned(np.asarray(X), np.float64), index, k, n_threads=1)
    return (neighbors, distances, _sub_block_sums(distances.sum(axis=1)),
            np.bincount(neighbors.reshape(-1), minlength=index.R.shape[0]))


def _task_affinity_block(rows, sigma, rank, n_columns):
    from cclust.uspec import _affinities, _affinity_rows

    neighbors, distances = rows[0], rows[1]
    return _affinity_rows(neighbors, _affinities(distances, sigma), rank, n_columns)


def _task_label_graph(block, offsets, weights, r, j):
    """The object-cluster rows (eq. 18-19, weights w_i, a missing label no edge) of a label block."""
    import scipy.sparse as sp

    block = _check_block(block, r, j)
    present = block >= 0
    cols = (block + offsets[:-1][None, :].astype(np.int32))[present]
    vals = np.broadcast_to(weights, block.shape)[present]
    indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
    return sp.csr_matrix((vals, cols, indptr), shape=(block.shape[0], int(offsets[-1])))


def _task_cross_sums(B, sums):
    from cclust._ext import _uspec

    W, col_degree = sums[0].copy(), sums[1].copy()
    _uspec.cross_sums(_aligned(B.indptr, np.int64), _aligned(B.indices, np.int64), _aligned(B.data, np.float64),
                      W, col_degree)
    return W, col_degree


def _task_transfer(B, ncut_vectors):
    from cclust.graph import _transfer_rows

    degree = np.asarray(B.sum(axis=1)).reshape(-1)
    degree[degree == 0] = 1e-10
    return _transfer_rows(B, ncut_vectors, degree)


def _task_rows_at(E, local):
    return E[np.asarray(local, dtype=np.int64)].copy()


def _task_dense_candidate_costs(E, closest, candidates):
    """k-means++ D^2 of the block's rows to each candidate row, capped by ``closest`` (None: not
    capped), and the per-chunk potentials: the compiled kmeanspp's own candidate pass."""
    closest = None if closest is None else _aligned(closest, np.float64)
    return _kernel().dense_candidate_costs(_aligned(E, np.float64), _aligned(candidates, np.float64), closest, 1)


def _task_dense_pass(E, labels, centres):
    """The compiled pass over a block: lloyd's from ``labels``, or assign's when None (see
    ``dense_block_pass``): (best, best cost, chunk objectives, moved, chunk sums, sizes)."""
    labels = None if labels is None else _aligned(labels, np.int32)
    return _kernel().dense_block_pass(_aligned(E, np.float64), _aligned(centres, np.float64), labels, 1)


def _task_dense_summary(result):
    """What the client needs of a pass: (chunk objectives, moved, chunk sums, sizes)."""
    return result[2:]


def _task_dense_sums(E, labels, n_clusters):
    """(None, 0, chunk sums, sizes) of the labels: a pass's summary without its objective."""
    return (None, 0) + _kernel().dense_block_sums(_aligned(E, np.float64), _aligned(labels, np.int32), n_clusters, 1)


def _task_dense_costs(E, labels, centres):
    """Each row's cost to the centre of its label (the compiled objective pass)."""
    k = centres.shape[0]
    n = E.shape[0]
    costs, _ = _kernel().objective(_aligned(E, np.float64), 1.0, np.empty((n, 0), dtype=np.int32),
                                   np.zeros(1, dtype=np.int64), np.empty(0), 0, 0.0, _aligned(centres, np.float64),
                                   np.empty((k, 0)), _aligned(labels, np.int32), 1)
    return costs


def _task_first_rows(labels, start, n_clusters):
    first = np.full(n_clusters, np.iinfo(np.int64).max)
    values, at = np.unique(labels, return_index=True)
    first[values] = at + start
    return first


def _task_renumber(labels, rank):
    return rank[labels].astype(np.int32)


class _DenseBlocks(_BlockExecutor):
    """The dense k-means of the in-memory transfer cut (``cclust._engine``: k-means++ with one
    candidate, ``labels_from_seeds``, ``lloyd`` with tol = 0) on the rows of a persisted matrix
    kept as row blocks (first rows multiples of 4096). Every block runs the engine's compiled
    kernels (``dense_candidate_costs``, ``dense_block_pass``, ``objective``); the client adds their
    per-chunk partials in chunk order (the centre sums, the objective) and takes the engine's
    decisions with the KCC executor's k-means++ draw, reseed and the engine's ``lloyd_verdict``,
    so labels and objective are those of the in-memory k-means, for any blocks."""

    def __init__(self, blocks, starts, runner):
        self.blocks, self.starts, self.runner, self.delayed = blocks, starts, runner, runner.delayed
        self.n = int(starts[-1])

    def map(self, fn, *per_block, shared=()):
        """fn(block_j, *per_block_j, *shared) for every block, as Delayed."""
        return [self.delayed(fn)(b, *(p[j] for p in per_block), *shared) for j, b in enumerate(self.blocks)]

    _candidate_costs = staticmethod(_task_dense_candidate_costs)
    _own_costs = staticmethod(_task_dense_costs)

    def candidate_rows(self, index):
        """Rows of the objects ``index`` (global), in that order, as float64 (len, d)."""
        index = np.asarray(index, dtype=np.int64)
        block = np.searchsorted(self.starts, index, side="right") - 1
        jobs = [self.delayed(_task_rows_at)(self.blocks[c], [int(x - self.starts[c])])
                for x, c in zip(index.tolist(), block.tolist())]
        return np.ascontiguousarray(np.concatenate(self.runner.compute(jobs), axis=0), dtype=np.float64)

    def _summed(self, summaries):
        """(chunk objectives, moved, chunk sums, sizes) of every block -> the centre sums added
        chunk by chunk in order from zero (as lloyd adds them) and the sizes."""
        sums = np.zeros(summaries[0][2].shape[1:])
        for s in summaries:
            for part in s[2]:
                sums += part
        return sums, sum(s[3] for s in summaries)

    def passes(self, centres, labels=None):
        """The compiled pass of every block against ``centres``: lloyd's from ``labels``, assign's
        when None. Returns (the persisted passes, objective, moved, centre sums, sizes)."""
        labels = [None] * len(self.blocks) if labels is None else labels
        passes = self.runner.persist(self.map(_task_dense_pass, labels, shared=(self.delayed(centres),)))
        summaries = self.runner.compute([self.delayed(_task_dense_summary)(p) for p in passes])
        return (passes, _fold([s[0] for s in summaries]), sum(s[1] for s in summaries)) + self._summed(summaries)

    def recount(self, labels, n_clusters):
        """The centre sums and sizes of the labels ``labels`` (after a reseed)."""
        return self._summed(self.runner.compute(self.map(_task_dense_sums, labels, shared=(n_clusters,))))

    def lloyd(self, start, n_clusters, max_iter):
        """The engine's lloyd (tol = 0) from the labels ``start`` = (label blocks, centre sums,
        sizes). Returns (labels as blocks, objective)."""
        kernel, runner, delayed = _kernel(), self.runner, self.delayed
        labels, sums, sizes = start

        def centres_of(sums, sizes):  # lloyd's centres; an empty cluster's (zeros) is never read
            return sums / np.maximum(sizes, 1)[:, None]

        centres = centres_of(sums, sizes)
        if (sizes == 0).any():
            costs = runner.persist(self.map(self._own_costs, labels, shared=(delayed(centres),)))
            labels = self.reseed(labels, costs, sizes.copy(), n_clusters)
            centres = centres_of(*self.recount(labels, n_clusters))
        objective = previous_objective = 0.0
        previous = (labels, centres)
        it = 0
        while True:
            passes, objective, moved, sums, sizes = self.passes(centres, labels)
            verdict = kernel.lloyd_verdict(it, objective, previous_objective, moved, max_iter, 0.0)
            if verdict == kernel.STOP_ROSE:
                labels, centres = previous
                objective = previous_objective
                break
            if verdict >= 0:
                break
            previous, previous_objective = (labels, centres), objective
            labels = runner.persist(self.part(passes, 0))
            if (sizes == 0).any():
                labels = self.reseed(labels, runner.persist(self.part(passes, 1)), sizes.copy(), n_clusters)
                sums, sizes = self.recount(labels, n_clusters)
            centres = centres_of(sums, sizes)
            it += 1
        return labels, objective

    def kmeans(self, n_clusters, rng, n_init, max_iter):
        """``n_init`` runs of k-means++ then Lloyd (the draws of :func:`cclust.graph.tcut`'s
        runs), the lowest objective kept (the first on ties). Returns (labels, objective)."""
        best = None
        for _ in range(n_init):
            first, uniforms = _engine.kmeanspp_draws(rng, self.n, n_clusters, 1)
            seeds = self.kmeanspp(n_clusters, first, uniforms)
            passes, _, _, sums, sizes = self.passes(self.candidate_rows(seeds))
            run = self.lloyd((self.runner.persist(self.part(passes, 0)), sums, sizes), n_clusters, max_iter)
            if best is None or run[1] < best[1]:
                best = run
        return best

    def numbered(self, labels, n_clusters):
        """The labels renumbered by their first object (as :func:`cclust.graph.tcut` numbers
        its parts), as blocks."""
        firsts = self.runner.compute([self.delayed(_task_first_rows)(lab, int(a), n_clusters)
                                      for lab, a in zip(labels, self.starts[:-1])])
        first = np.min(firsts, axis=0)
        used = np.flatnonzero(first < np.iinfo(np.int64).max)
        rank = np.full(n_clusters, -1, dtype=np.int64)
        rank[used[np.argsort(first[used], kind="stable")]] = np.arange(used.shape[0])
        return self.runner.persist([self.delayed(_task_renumber)(lab, rank) for lab in labels])


class _InMemoryRunner:
    """The runner interface of the block executors (``delayed``, ``persist``, ``compute``) run
    at once in this process: an executor over in-memory blocks, no Dask."""

    @staticmethod
    def delayed(fn):
        return fn

    @staticmethod
    def persist(objs):
        return list(objs)

    compute = persist


#: Rows of one BLAS product of :class:`_BlasDenseBlocks` (x centres of float64: 8 MiB at 1,000
#: centres; fewer rows, down to 16, when there are more centres).
_BLAS_ROWS = 1024


class _BlasDenseBlocks(_DenseBlocks):
    """:class:`_DenseBlocks`'s k-means (``lloyd``: the engine's centre sums, reseed of empty
    clusters and stopping rule ``lloyd_verdict``) on in-memory row blocks, with an assignment
    step by BLAS products instead of the compiled per-pair sums: the squared distances as
    ``||x||^2 + ||c||^2 - 2 x.c`` (``||x||^2`` left out: it is the same for every centre of a
    row), one matrix product per ``_BLAS_ROWS`` rows, the lowest index
    among the minima, a tie with the current cluster keeping it. A row whose second-best centre
    lies within the products' rounding of the best (about d eps (||x||^2 + ||c||^2)) is decided
    on the engine's exact costs (``dense_candidate_costs``: sums of (x - c)^2) among those near
    centres, by the same rules, so near ties (a point on two equal centres, duplicates) go the
    engine's way. The objective and every cost the reseed reads are exact per-object costs
    (sums of (x - c)^2, not products), the centre sums and sizes the engine's
    (``dense_block_sums``). The products run on one BLAS thread
    (:func:`cclust.graph.one_blas_thread`), the row pieces on ``n_threads`` Python threads,
    each piece alone: the result does not depend on either thread count. It is a Lloyd k-means
    under the engine's rules, not the engine's run bit for bit: the exact costs are NumPy's
    sums (another order of addition than the engine's), so the objective and a tie decided by
    the last bit can differ."""

    def __init__(self, X, n_threads=1):
        X = _aligned(X, np.float64)
        super().__init__([X], np.array([0, X.shape[0]], dtype=np.int64), _InMemoryRunner())
        self.n_threads = max(1, int(n_threads))
        self.norms = np.einsum("ij,ij->i", X, X)

    def _nearest(self, X, centres, labels):
        """(best, moved) of the rows of X: the BLAS assignment (see the class)."""
        from concurrent.futures import ThreadPoolExecutor

        from cclust.graph import one_blas_thread

        n = X.shape[0]
        step = max(16, min(_BLAS_ROWS, (_BLAS_ROWS * 1000) // max(1, centres.shape[0])))
        centre_norms = np.einsum("ij,ij->i", centres, centres)
        largest = float(centre_norms.max())
        best = np.empty(n, dtype=np.int32)
        minus_twice = np.ascontiguousarray(-2.0 * centres.T)  # exact: a power of two
        kernel = _kernel()
        # |computed - exact| of ||c||^2 - 2 x.c is below about (d + 2) eps (||x||^2 + ||c||^2)
        # (the classical bound of a floating-point sum, for each sum); a centre within the sum of
        # two such bounds, and more, of the best one is a near tie
        slack = 4.0 * (X.shape[1] + 8) * np.finfo(np.float64).eps

        def piece(a):
            # ||x - c||^2 less ||x||^2 (the same for every centre of a row, so not added)
            b = min(n, a + step)
            D = X[a:b] @ minus_twice
            D += centre_norms[None, :]
            rows = np.arange(b - a)
            b_rows = np.argmin(D, axis=1)  # the first minimum: the lowest index
            if labels is not None:
                own = labels[a:b]
                b_rows = np.where(D[rows, own] <= D[rows, b_rows], own, b_rows)  # ties keep it
            low = D[rows, b_rows]
            x2 = self.norms[a:b]
            if centres.shape[0] > 1:
                D[rows, b_rows] = np.inf
                second = D.min(axis=1)
                D[rows, b_rows] = low
                unsure = np.flatnonzero(second - low <= slack * (2.0 * x2 + centre_norms[b_rows] + largest))
            else:
                unsure = np.empty(0, dtype=np.int64)
            if unsure.size:  # near ties within the products' rounding: decided on exact costs
                u = b_rows[unsure]
                near = D[unsure] - low[unsure, None] <= slack * (2.0 * x2[unsure, None] + centre_norms[None, :]
                                                                   + centre_norms[u][:, None])
                exact = kernel.dense_candidate_costs(np.ascontiguousarray(X[a + unsure]), centres, None, 1)[0].T
                exact = np.where(near, exact, np.inf)
                pick = np.argmin(exact, axis=1)
                if labels is not None:
                    r, mine = np.arange(unsure.size), own[unsure]
                    pick = np.where(exact[r, mine] == exact[r, pick], mine, pick)
                b_rows[unsure] = pick
            best[a:b] = b_rows

        starts = range(0, n, step)
        with one_blas_thread():
            if self.n_threads == 1 or n <= step:
                for a in starts:
                    piece(a)
            else:
                with ThreadPoolExecutor(self.n_threads) as pool:
                    list(pool.map(piece, starts))
        moved = 0 if labels is None else int(np.count_nonzero(best != labels))
        return best, moved

    @staticmethod
    def _own_costs(X, labels, centres):
        """Each row's exact cost to the centre of its label, the sum of (x - c)^2 (NumPy, per
        row piece; the compiled ``objective`` pass costs seconds here for milliseconds of work)."""
        out = np.empty(X.shape[0])
        for a in range(0, X.shape[0], _BLAS_ROWS):
            diff = X[a:a + _BLAS_ROWS] - centres[labels[a:a + _BLAS_ROWS]]
            out[a:a + _BLAS_ROWS] = np.einsum("ij,ij->i", diff, diff)
        return out

    def _pass(self, X, labels, centres):
        """:func:`_task_dense_pass`'s tuple (best, best cost, chunk objectives, moved, chunk sums,
        sizes) with the BLAS assignment; the chunk objectives are the exact costs of ``labels``
        summed per chunk in object order (zeros for an assign pass)."""
        k = centres.shape[0]
        n_chunks = -(-X.shape[0] // BLOCK)
        if labels is None:
            chunk_objective = np.zeros(n_chunks)
        else:
            labels = _aligned(labels, np.int32)
            own = self._own_costs(X, labels, centres)
            chunk_objective = np.array([_fold([own[a:a + BLOCK]]) for a in range(0, X.shape[0], BLOCK)])
        best, moved = self._nearest(X, centres, labels)
        chunk_sums, sizes = _kernel().dense_block_sums(X, best, k, 1)
        if labels is None:
            best_cost = self._own_costs(X, best, centres)
        else:  # a row that kept its label keeps its cost: recompute the moved rows only
            best_cost = own
            changed = np.flatnonzero(best != labels)
            best_cost[changed] = self._own_costs(X[changed], best[changed], centres)
        return best, best_cost, chunk_objective, moved, chunk_sums, sizes

    def passes(self, centres, labels=None):
        centres = _aligned(centres, np.float64)
        labels = [None] * len(self.blocks) if labels is None else labels
        passes = [self._pass(E, lab, centres) for E, lab in zip(self.blocks, labels)]
        summaries = [_task_dense_summary(p) for p in passes]
        return (passes, _fold([s[0] for s in summaries]), sum(s[1] for s in summaries)) + self._summed(summaries)

    def run(self, seeds, n_clusters, max_iter):
        """k-means from the rows ``seeds`` (the engine's assign then lloyd, tol = 0, with the
        BLAS assignment). Returns (labels int64 (n,), centres (n_clusters, d), objective)."""
        passes, _, _, sums, sizes = self.passes(self.blocks[0][np.asarray(seeds, dtype=np.int64)])
        labels, objective = self.lloyd(([passes[0][0]], sums, sizes), n_clusters, max_iter)
        sums, sizes = self.recount(labels, n_clusters)
        return labels[0].astype(np.int64), sums / np.maximum(sizes, 1)[:, None], objective


def _block_cut(graph_blocks, n_columns, starts, n_clusters, rng, n_init, max_iter, runner):
    """The transfer cut (Li, Wu & Chang 2012; :func:`cclust.graph.tcut`) of a bipartite graph
    whose rows are the persisted CSR ``graph_blocks``: the column-side sums chained over the
    blocks, the dense leading eigenvectors, the transferred rows per block, k-means on them.
    Returns (labels as blocks numbered by first object, eigenvalues, objective)."""
    from cclust.graph import _dense_leading_eigenvectors

    delayed = runner.delayed
    sums = (np.zeros((n_columns, n_columns)), np.zeros(n_columns))
    for B in graph_blocks:
        sums = delayed(_task_cross_sums)(B, sums)
    W, col_degree = runner.compute([sums])[0]
    n_vectors = min(n_clusters, n_columns)
    inv_sqrt = 1.0 / np.sqrt(np.where(col_degree > 0, col_degree, 1.0))
    values, vectors = _dense_leading_eigenvectors(W, inv_sqrt, n_vectors)
    ncut_vectors = delayed(vectors * inv_sqrt[:, None])
    embedding = runner.persist([delayed(_task_transfer)(B, ncut_vectors) for B in graph_blocks])
    blocks = _DenseBlocks(embedding, starts, runner)
    labels, objective = blocks.kmeans(n_clusters, rng, n_init, max_iter)
    labels = blocks.numbered(labels, n_clusters)
    del embedding, blocks
    return labels, values, objective


def _row_starts(n, chunks, width):
    rows = _chunk_rows(chunks, n, width)
    return np.array(list(range(0, n, rows)) + [n], dtype=np.int64)


def _uspec_blocks(X, starts, p, k, k_i, rng, n_init, max_iter, runner):
    """One U-SPEC clusterer of X on row blocks (the draws of :func:`cclust.uspec` in the same
    order): hybrid representatives and the rep-cluster index in memory, then the neighbour
    search, sigma, the affinity rows and the transfer cut per block. Labels as blocks."""
    from cclust.graph import one_blas_thread
    from cclust.uspec import _column_rank, hybrid_representatives, representative_index

    delayed = runner.delayed
    with one_blas_thread():
        R = hybrid_representatives(X, p, rng)
    k = min(k, R.shape[0])
    index = delayed(representative_index(R, k, rng))
    rows = runner.persist([delayed(_task_uspec_rows)(X[a:b], index, k) for a, b in itertools.pairwise(starts)])
    parts = runner.compute([delayed(operator.itemgetter(2, 3))(r) for r in rows])
    sigma = _fold_sub_blocks([q[0] for q in parts]) / (int(starts[-1]) * k)
    columns, rank = _column_rank(sum(q[1] for q in parts))
    graph = runner.persist([delayed(_task_affinity_block)(r, sigma, rank, columns.shape[0]) for r in rows])
    del rows
    k_i = min(k_i, columns.shape[0])
    labels, _, _ = _block_cut(graph, columns.shape[0], starts, k_i, rng, n_init, max_iter, runner)
    return labels


def uspec_ensemble(X, n_clusters, *, n_partitions=20, k_range=None, n_representatives=None, n_neighbors=5,
                   n_init=1, max_iter=5, random_state=None, client=None, chunks=None, verbose=0):
    """U-SENC's ensemble of U-SPEC clusterers (Huang, Wang, Wu, Lai & Kwoh 2020) on row blocks.

    Parameters and draws are those of :func:`cclust.uspec.uspec_ensemble` (partition i from the
    i-th child seed); per clusterer the representatives and the rep-cluster index are built in
    memory (O(p^2)), the neighbour search (compiled), the affinity rows, the transferred
    eigenvectors and the k-means passes of the transfer cut run per row block, and the column
    side (p x p) is summed over the blocks in object order. Memory: X, the blocks' n x K graph
    and n x K_i embedding of one clusterer at a time, and the n x m labels, never more. The
    labels do not depend on ``chunks``. The k-means of the transfer cut is the in-memory engine's
    bit for bit (its compiled kernels per block, partials added in chunk order); sigma and the
    column-side sums are added in another order than in memory, so the two paths agree up to
    that rounding (the same labels on the tested sets).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_clusters, n_partitions, k_range, n_representatives, n_neighbors, n_init, max_iter, random_state
        As :func:`cclust.uspec.uspec_ensemble`.
    client : dask.distributed.Client, default=None
        None uses Dask's default (a global client, else the local scheduler).
    chunks : int, default=None
        Rows per block (rounded up to a multiple of 4096); None: about 64 MiB of labels.
    verbose : int, default=0
        1 draws a progress bar over the partitions.

    Returns
    -------
    DaskEnsemble of shape (n_samples, n_partitions)

    Examples
    --------
    >>> from cclust.datasets import make_moons
    >>> from cclust.dask import uspec_ensemble
    >>> X, y = make_moons(3000, random_state=0)
    >>> uspec_ensemble(X, 2, n_partitions=3, random_state=0, chunks=4096).shape
    (3000, 3)
    """
    from cclust.uspec import _check_ensemble
    from cclust.validation import spawn_seed_sequences

    dask, da = _import_dask()
    X = check_array_2d(X, "X")
    starts = _row_starts(X.shape[0], chunks, check_int(n_partitions, "n_partitions", low=1))
    # the client holds p x p; each task a block's n_b x K graph (the blocks live on the workers)
    X, n_clusters, n_partitions, p, k, (low, high), n_init, max_iter = _check_ensemble(
        X, n_clusters, n_partitions, k_range, n_representatives, n_neighbors, n_init, max_iter,
        memory_rows=int(starts[1] - starts[0]))
    runner = _Runner(client)
    columns = []
    with progress(total=n_partitions, desc="uspec partitions (dask)", verbose=verbose) as bar:
        for seq in spawn_seed_sequences(random_state, n_partitions):
            rng = np.random.default_rng(seq)
            k_i = int(rng.integers(low, high + 1))
            columns.append(_uspec_blocks(X, starts, p, k, k_i, rng, n_init, max_iter, runner))
            bar.update(1)
    blocks = [da.from_delayed(runner.delayed(np.column_stack)([c[j] for c in columns]),
                              shape=(int(b - a), n_partitions), dtype=np.int32)
              for j, (a, b) in enumerate(itertools.pairwise(starts))]
    return DaskEnsemble(da.concatenate(blocks, axis=0), chunks=int(starts[1] - starts[0]), client=runner.client)


def tcut(ensemble, n_clusters, *, n_init=3, max_iter=100, random_state=None, client=None, chunks=None):
    """The transfer-cut consensus (Huang et al. 2020, sec. 3.2.2) of a :class:`DaskEnsemble`.

    As :func:`cclust.consensus_functions.ultra_scalable.tcut`, per row block: the
    object-cluster rows (eq. 18-19, partition weights on the edges, a missing label no edge),
    the cluster-side sums chained over the blocks in object order, the dense eigenproblem of the
    ``sum K_i`` clusters, the transferred rows and k-means (k-means++, ``n_init`` runs of at most
    ``max_iter`` passes) per block. Identical label rows are not merged (the same cut; the
    in-memory function merges them), and the cluster side is always solved dense. The labels do
    not depend on the chunking.

    Returns
    -------
    ConsensusResult
        labels gathered on the client (n int64); ``extras``: ``eigenvalues``, ``backend="dask"``.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.dask import from_array, tcut as dask_tcut
    >>> X, y = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=10, random_state=0)
    >>> dask_tcut(from_array(E), 3, random_state=0).n_clusters
    3
    """
    from cclust.result import ConsensusResult
    from cclust.validation import check_random_state

    if not isinstance(ensemble, DaskEnsemble):
        ensemble = from_array(ensemble, chunks=chunks, client=client)
    n = ensemble.n_samples
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, n))
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    width = int(ensemble.offsets[-1])
    if n_clusters > width:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of clusters in the ensemble ({width}): "
            "the transfer cut needs as many eigenvectors of the cluster graph.")
    runner = _Runner(client or ensemble._client)
    r = ensemble.n_partitions
    graph = runner.persist([runner.delayed(_task_label_graph)(b, ensemble.offsets, ensemble.weights, r, j)
                            for j, b in enumerate(ensemble.blocks())])
    labels, values, objective = _block_cut(graph, width, ensemble.chunk_starts, n_clusters,
                                           check_random_state(random_state), n_init, max_iter, runner)
    gathered = np.concatenate(runner.compute(labels)).astype(np.int64)
    return ConsensusResult.from_labels(
        gathered, objective=float(objective),
        objective_name="within-cluster sum of squares of the transfer-cut embedding (lower is better)",
        method="tcut", extras={"eigenvalues": values, "backend": "dask"})


def usenc(X, n_clusters, *, n_partitions=20, k_range=None, n_representatives=None, n_neighbors=5, n_init=3,
          max_iter=100, random_state=None, client=None, chunks=None, verbose=0):
    """U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020) on row blocks: :func:`uspec_ensemble` then
    :func:`tcut`, with the draws of :func:`cclust.consensus_functions.ultra_scalable.usenc`
    (an int ``random_state`` seeds both steps). Returns a ConsensusResult as :func:`tcut`,
    ``extras["n_generated"]`` = m.

    Examples
    --------
    >>> from cclust.datasets import make_moons
    >>> from cclust.dask import usenc
    >>> from cclust.metrics import ari
    >>> X, y = make_moons(3000, random_state=0)
    >>> ari(usenc(X, 2, n_partitions=3, random_state=0).labels, y) > 0.95
    True
    """
    from cclust.result import ConsensusResult
    from cclust.validation import check_random_state

    rng = check_random_state(random_state) if not isinstance(random_state, (int, np.integer)) else random_state
    ensemble = uspec_ensemble(X, n_clusters, n_partitions=n_partitions, k_range=k_range,
                              n_representatives=n_representatives, n_neighbors=n_neighbors, random_state=rng,
                              client=client, chunks=chunks, verbose=verbose)
    result = tcut(ensemble, n_clusters, n_init=n_init, max_iter=max_iter, random_state=rng, client=client)
    return ConsensusResult.from_labels(result.labels, objective=result.objective,
                                       objective_name=result.objective_name, method="usenc",
                                       extras=dict(result.extras, n_generated=ensemble.n_partitions))
