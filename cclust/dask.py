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
* :func:`kcc`: each Lloyd pass maps the compiled kernels over the row chunks (nearest centre,
  cost to the current centre, the contingency counts of the objects that moved), sums the
  per-chunk counts and objective parts in chunk order and updates the centroids on the client
  with the engine's own rules (counts / labelled members, the whole partition's distribution
  for a block with no labelled member, re-seeding of empty clusters, ties keep the current
  cluster, the tolerance test, an objective rise undoes the step). Random and k-means++ seeding
  use the same random numbers as the in-memory path. Labels, objective, trace and n_iter are
  therefore identical to :func:`cclust.consensus_functions.kcc.kcc` for the same seed.

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

import numpy as np

from cclust import _engine
from cclust._progress import progress
from cclust.validation import check_array_2d, check_int
from cclust.ensemble import Ensemble, _encode_column
from cclust.errors import ValidationError

__all__ = ["DaskEnsemble", "check_dask_X", "from_array", "from_blocks", "generate_partitions", "kcc"]

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

def _checked_X(X):
    return check_array_2d(np.asarray(X), "X")


def _one_column(one_partition, X, seq, j):
    labels = one_partition(X, np.random.default_rng(seq))
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
    return np.ascontiguousarray(block, dtype=np.int32)


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


def _space(block, params):
    offsets, weights, family, p = params
    return _engine.MixedSpace(np.empty((block.shape[0], 0)), 0.0, block, offsets, weights, family, p)


def _block_sums(values):
    """Sums of consecutive BLOCK-sized runs, each added left to right from 0.0 (the engine's
    per-chunk partials); np.cumsum is a sequential left fold, unlike np.sum's pairwise sum."""
    m = values.shape[0]
    full = m // BLOCK
    out = np.empty(full + (1 if m % BLOCK else 0))
    if full:
        out[:full] = np.cumsum(values[: full * BLOCK].reshape(full, BLOCK), axis=1)[:, -1]
    if m % BLOCK:
        out[full] = np.cumsum(values[full * BLOCK:])[-1]
    return out


def _fold(parts):
    """Left-to-right sum from 0.0 of a list of arrays of partials (the engine's chunk order)."""
    total = 0.0
    for part in parts:
        for v in part.tolist():
            total += v
    return total


def _table(block, labels, n_clusters, offsets):
    from cclust._ext import _contingency

    return _contingency.ensemble_table(block, offsets, np.ascontiguousarray(labels, dtype=np.int32),
                                       n_clusters, 1)


def _t_count(block, labels, n_clusters, r, j, params):
    block = _check_block(block, r, j)
    return _table(block, labels, n_clusters, params[0]), np.bincount(labels, minlength=n_clusters)


def _t_assign(block, cat, r, j, params):
    """Nearest seed per object, with the chunk's counts of those labels (saves a pass)."""
    block = _check_block(block, r, j)
    k = cat.shape[0]
    labels, _, _ = _engine._kernel().assign(*_space(block, params)._args(), np.empty((k, 0)), cat, 1)
    return labels, (_table(block, labels, k, params[0]), np.bincount(labels, minlength=k))


def _t_costs(block, labels, cat, r, j, params):
    block = _check_block(block, r, j)
    k = cat.shape[0]
    costs, _ = _engine._kernel().objective(*_space(block, params)._args(), np.empty((k, 0)), cat,
                                           labels, 1)
    return costs


def _t_pass(block, labels, cat, r, j, params):
    """One Lloyd pass over a chunk (see lloyd_pass in kmeans.cpp): best labels with ties kept
    at the current cluster, the cost of each best label, and the small summary the client
    needs (objective partials, moves, count and size changes)."""
    block = _check_block(block, r, j)
    k = cat.shape[0]
    kernel = _engine._kernel()
    args = _space(block, params)._args()
    dense = np.empty((k, 0))
    current, _ = kernel.objective(*args, dense, cat, labels, 1)
    best, best_cost, _ = kernel.assign(*args, dense, cat, 1)
    # Both kernels add the same table rows in the same order, so equal means a tie.
    keep = current == best_cost
    best = np.where(keep, labels, best).astype(np.int32)
    moved = np.flatnonzero(best != labels)
    width = int(params[0][-1])
    if moved.shape[0]:
        sub = np.ascontiguousarray(block[moved])
        delta = _table(sub, best[moved], k, params[0]) - _table(sub, labels[moved], k, params[0])
        dsizes = (np.bincount(best[moved], minlength=k) - np.bincount(labels[moved], minlength=k))
    else:
        delta = np.zeros((k, width), dtype=np.int64)
        dsizes = np.zeros(k, dtype=np.int64)
    return best, best_cost, (_block_sums(current), int(moved.shape[0]), delta, dsizes)


def _first(x):
    return x[0]


def _second(x):
    return x[1]


def _third(x):
    return x[2]


def _t_reseed_pick(labels, costs, sizes, overrides, start):
    """The first costliest object (global index, cost, label) whose cluster keeps a member."""
    eff = labels.copy()
    for x, k in overrides.items():
        eff[x - start] = k
    eligible = np.flatnonzero(sizes[eff] >= 2)
    if eligible.shape[0] == 0:
        return None
    local = eligible[int(np.argmax(costs[eligible]))]
    return float(costs[local]), int(local) + start, int(eff[local])


def _t_override(labels, overrides, start):
    out = labels.copy()
    for x, k in overrides.items():
        out[x - start] = k
    return out


def _t_rows(block, local, r, j):
    block = _check_block(block, r, j)
    return block[np.asarray(local, dtype=np.int64)].copy()


def _candidate_d2(block, row, params):
    """k-means++ D^2 of every object to the object whose labels are ``row`` (see kmeanspp in
    kmeans.cpp): Uc against the candidate's one-hot gives 2 w_i per differing label and 0 for
    an equal one; a weight of 0 where the candidate is unlabelled gives the kernel's 0 there."""
    offsets, weights, _, _ = params
    labelled = row >= 0
    masked = np.where(labelled, weights, 0.0)
    cat = np.zeros((1, int(offsets[-1])))
    cat[0, offsets[:-1][labelled] + row[labelled]] = 1.0
    space = _space(block, (offsets, masked, 0, 0.0))
    _, costs, _ = _engine._kernel().assign(*space._args(), np.empty((1, 0)), cat, 1)
    return costs


def _t_d2_first(block, row, r, j, params):
    return _candidate_d2(_check_block(block, r, j), row, params)


def _t_cum_end(closest, prefix):
    return float(np.cumsum(np.concatenate(([prefix], closest)))[-1])


def _t_locate(closest, prefix, targets):
    cum = np.cumsum(np.concatenate(([prefix], closest)))[1:]
    return [int(np.searchsorted(cum, t, side="right")) for t in targets]


def _t_last_positive(closest):
    hits = np.flatnonzero(closest > 0.0)
    return int(hits[-1]) if hits.shape[0] else -1


def _t_potentials(block, closest, rows, r, j, params):
    block = _check_block(block, r, j)
    return [_block_sums(np.minimum(closest, _candidate_d2(block, row, params))) for row in rows]


def _t_closest_update(block, closest, row, r, j, params):
    block = _check_block(block, r, j)
    return np.minimum(closest, _candidate_d2(block, row, params))


def _t_zero_at(closest, local):
    out = closest.copy()
    out[local] = 0.0
    return out


def _t_concat(*parts):
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

    Attributes
    ----------
    labels : dask.array.Array of int32, chunked along rows only
    n_clusters, offsets, weights, cluster_sizes, has_missing : as :class:`cclust.Ensemble`

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

    def __init__(self, labels, weights=None, *, chunks=None, client=None):
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

    labels = property(lambda self: self._labels)
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
        return out

    def persist(self, client=None):
        """The same ensemble with its label chunks computed and kept in (cluster) memory."""
        client = _resolve_client(client or self._client)
        labels = client.persist(self._labels) if client is not None else self._labels.persist()
        out = DaskEnsemble._from_parts(labels, self._n_clusters, self._cluster_sizes,
                                       self._has_missing, self._weights)
        out._client, out._raw_weights = client, self._raw_weights
        return out

    def compute(self, client=None):
        """The in-memory :class:`cclust.Ensemble` (gathers the n x r labels)."""
        client = _resolve_client(client or self._client)
        labels = client.compute(self._labels, sync=True) if client is not None else self._labels.compute()
        return Ensemble(np.asarray(labels), weights=self._raw_weights)

    def __repr__(self):
        missing = ", with missing labels" if self._has_missing else ""
        return (f"DaskEnsemble(n_samples={self.n_samples}, n_partitions={self.n_partitions}, "
                f"K_i in [{self._n_clusters.min()}, {self._n_clusters.max()}], "
                f"{len(self._labels.chunks[0])} chunks{missing})")


def from_array(labels, weights=None, *, chunks=None, client=None):
    """A DaskEnsemble from an Ensemble, an array-like of labels or a dask array.

    In-memory input goes through :class:`cclust.Ensemble` first (relabelling, validation).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.dask import from_array
    >>> from_array(np.array([[0, 5], [0, 7], [1, 7]])).n_clusters.tolist()
    [2, 2]
    """
    _, da = _import_dask()
    if _is_dask_array(labels):
        return DaskEnsemble(labels, weights, chunks=chunks, client=client)
    E = labels if isinstance(labels, Ensemble) and weights is None else Ensemble(labels, weights)
    rows = _chunk_rows(chunks, E.n_samples, E.n_partitions)
    dlabels = da.from_array(np.array(E.labels), chunks=(rows, E.n_partitions))
    D = DaskEnsemble._from_parts(dlabels, E.n_clusters.copy(), E.cluster_sizes.copy(),
                                 E.has_missing, E.weights.copy())
    equal = np.array_equal(E.weights, np.full(E.n_partitions, 1.0 / E.n_partitions))
    D._raw_weights = None if equal else E.weights.copy()
    return D


def from_blocks(blocks, weights=None, *, client=None):
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
    return DaskEnsemble(da.concatenate(parts, axis=0), weights, client=client)


def generate_partitions(one_partition, X, seqs, *, client=None, chunks=None, verbose=0,
                        desc="partitions"):
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
    return E


# -- KCC ------------------------------------------------------------------------------------

class _Run:
    def __init__(self, labels, objective, trace, n_iter, converged):
        self.labels, self.objective, self.trace = labels, objective, trace
        self.n_iter, self.converged = n_iter, converged


def _centres(counts, offsets, n_clusters):
    """centres_from_tally of kmeans.cpp for a labelling of every object (d = 0)."""
    cat = np.zeros((n_clusters, int(offsets[-1])))
    for i in range(offsets.shape[0] - 1):
        a, b = int(offsets[i]), int(offsets[i + 1])
        block = counts[:, a:b]
        totals = block.sum(axis=1)
        whole = block.sum(axis=0)
        whole_total = int(whole.sum())
        filled = totals > 0
        cat[filled, a:b] = block[filled].astype(np.float64) / totals[filled, None].astype(np.float64)
        if whole_total > 0 and not filled.all():
            cat[~filled, a:b] = whole.astype(np.float64) / float(whole_total)
    return cat


class _Driver:
    """Chunk maps of one KCC run: the ensemble's blocks, the compiled-space parameters, a runner."""

    def __init__(self, ensemble, params, runner):
        self.E, self.params, self.run = ensemble, params, runner
        self.blocks = ensemble.blocks()
        self.starts = ensemble.chunk_starts
        self.r = ensemble.n_partitions
        self.d = runner.delayed

    def map(self, fn, *per_chunk, shared=()):
        """fn(block_j, *per_chunk_j, *shared, r, j, params) for every chunk, as Delayed."""
        return [self.d(fn)(b, *(p[j] for p in per_chunk), *shared, self.r, j, self.params)
                for j, b in enumerate(self.blocks)]

    def rows(self, index):
        """Label rows of the objects ``index`` (global), in that order."""
        index = np.asarray(index, dtype=np.int64)
        chunk = np.searchsorted(self.starts, index, side="right") - 1
        jobs = [self.d(_t_rows)(self.blocks[c], [int(x - self.starts[c])], self.r, int(c))
                for x, c in zip(index.tolist(), chunk.tolist())]
        return np.concatenate(self.run.compute(jobs), axis=0)

    def count(self, labels, n_clusters):
        parts = self.run.compute(self.map(_t_count, labels, shared=(n_clusters,)))
        return sum(p[0] for p in parts), sum(p[1] for p in parts).astype(np.int64)

    def labels_from_seeds(self, seeds):
        seed_labels = self.rows(seeds)
        offsets = self.E.offsets
        cat = np.zeros((seeds.shape[0], int(offsets[-1])))
        for k in range(seeds.shape[0]):
            for i in range(self.r):
                a, b = int(offsets[i]), int(offsets[i + 1])
                if seed_labels[k, i] >= 0:
                    cat[k, a + seed_labels[k, i]] = 1.0
                else:  # the engine's block for a cluster with no labelled member: P_i
                    whole = self.E.cluster_sizes[a:b]
                    cat[k, a:b] = whole.astype(np.float64) / float(whole.sum())
        out = self.run.persist(self.map(_t_assign, shared=(self.d(cat),)))
        parts = self.run.compute([self.d(_second)(o) for o in out])
        tally = (sum(p[0] for p in parts), sum(p[1] for p in parts).astype(np.int64))
        return self.run.persist([self.d(_first)(o) for o in out]), tally

    def kmeanspp(self, n_clusters, first, uniforms):
        """kmeanspp of kmeans.cpp, chunk by chunk (every sum in the engine's order)."""
        run, d = self.run, self.d
        n_trials = uniforms.shape[1]
        first_row = self.rows([first])[0]
        closest = run.persist(self.map(_t_d2_first, shared=(first_row,)))
        seeds, chosen = [first], {first}
        for s in range(1, n_clusters):
            ends, prefix = [], 0.0
            for c in closest:  # the running sum is one left fold over every object
                prefix = d(_t_cum_end)(c, prefix)
                ends.append(prefix)
            ends = run.compute(ends)
            total = ends[-1]
            seed = -1
            if total > 0.0:
                targets = [float(u) * total for u in uniforms[s - 1]]
                where = [int(np.searchsorted(ends, t, side="right")) for t in targets]
                candidates = [None] * n_trials
                jobs, slots = [], []
                for j in sorted(set(where)):
                    if j >= len(closest):
                        continue
                    idx = [t for t in range(n_trials) if where[t] == j]
                    prefix_j = ends[j - 1] if j > 0 else 0.0
                    jobs.append(d(_t_locate)(closest[j], prefix_j, [targets[t] for t in idx]))
                    slots.append((j, idx))
                for (j, idx), local in zip(slots, run.compute(jobs)):
                    for t, x in zip(idx, local):
                        candidates[t] = int(self.starts[j] + x)
                if any(c is None for c in candidates):  # u * total rounded up to total
                    lasts = run.compute([d(_t_last_positive)(c) for c in closest])
                    last = next(int(self.starts[j] + x) for j, x in reversed(list(enumerate(lasts)))
                                if x >= 0)
                    candidates = [last if c is None else c for c in candidates]
                rows = self.rows(candidates)
                parts = run.compute(self.map(_t_potentials, closest, shared=(rows,)))
                potentials = [_fold([p[t] for p in parts]) for t in range(n_trials)]
                win = 0
                for t in range(1, n_trials):
                    if potentials[t] < potentials[win]:
                        win = t
                seed = candidates[win]
                if seed not in chosen:
                    closest = run.persist(self.map(_t_closest_update, closest, shared=(rows[win],)))
                else:
                    seed = -1
            if seed < 0:
                seed = 0
                while seed in chosen:
                    seed += 1
                j = int(np.searchsorted(self.starts, seed, side="right") - 1)
                closest[j] = run.persist([d(_t_zero_at)(closest[j], seed - int(self.starts[j]))])[0]
            seeds.append(seed)
            chosen.add(seed)
        return np.array(seeds, dtype=np.int64)

    def reseed(self, labels, costs, sizes, n_clusters):
        """reseed of kmeans.cpp: each empty cluster takes the costliest movable object."""
        overrides = {}
        sizes = sizes.copy()
        for e in range(n_clusters):
            if sizes[e] != 0:
                continue
            jobs = []
            for j in range(len(labels)):
                a, b = int(self.starts[j]), int(self.starts[j + 1])
                local = {x: k for x, k in overrides.items() if a <= x < b}
                jobs.append(self.d(_t_reseed_pick)(labels[j], costs[j], sizes.copy(), local, a))
            pick = None
            for found in self.run.compute(jobs):
                if found is not None and (pick is None or found[0] > pick[0]):
                    pick = found
            if pick is None:
                raise ValidationError("cannot re-seed an empty cluster: n_clusters exceeds n_samples.")
            sizes[pick[2]] -= 1
            sizes[e] = 1
            overrides[pick[1]] = e
        out = list(labels)
        for j in range(len(labels)):
            a, b = int(self.starts[j]), int(self.starts[j + 1])
            local = {x: k for x, k in overrides.items() if a <= x < b}
            if local:
                out[j] = self.run.persist([self.d(_t_override)(labels[j], local, a)])[0]
        return out

    def lloyd(self, labels, n_clusters, max_iter, tol, tally=None):
        """lloyd of kmeans.cpp with every pass mapped over the chunks; ``tally`` is the counts
        and sizes of ``labels`` when known. Returns the run and the counts of its labels."""
        run, d, offsets = self.run, self.d, self.E.offsets
        counts, sizes = self.count(labels, n_clusters) if tally is None else tally
        cur = _centres(counts, offsets, n_clusters)
        if (sizes == 0).any():
            costs = run.persist(self.map(_t_costs, labels, shared=(d(cur),)))
            labels = self.reseed(labels, costs, sizes, n_clusters)
            counts, sizes = self.count(labels, n_clusters)
            cur = _centres(counts, offsets, n_clusters)
        trace = []
        obj = prev_obj = 0.0
        prev_labels, prev, prev_counts = labels, cur, counts
        converged = True
        it = 0
        while True:
            out = run.persist(self.map(_t_pass, labels, shared=(d(cur),)))
            summary = run.compute([d(_third)(o) for o in out])
            obj = _fold([s[0] for s in summary])
            changed = sum(s[1] for s in summary)
            if it > 0 and obj > prev_obj:  # a rise is undone (see kmeans.cpp)
                labels, cur, obj, counts = prev_labels, prev, prev_obj, prev_counts
                break
            trace.append(obj)
            if it > 0 and (prev_obj - obj) < tol * abs(prev_obj):
                break
            if changed == 0:
                break
            if it == max_iter:
                converged = False
                break
            best = run.persist([d(_first)(o) for o in out])
            prev_labels, labels, prev, prev_obj, prev_counts = labels, best, cur, obj, counts
            counts = counts + sum(s[2] for s in summary)
            sizes = sizes + sum(s[3] for s in summary)
            if (sizes == 0).any():
                costs = run.persist([d(_second)(o) for o in out])
                labels = self.reseed(labels, costs, sizes, n_clusters)
                counts, sizes = self.count(labels, n_clusters)
            cur = _centres(counts, offsets, n_clusters)
            it += 1
        result = _Run(labels, obj, np.array(trace), len(trace) - 1, converged)
        result.table = counts
        return result

    def gather(self, labels):
        return np.concatenate(self.run.compute([self.d(_t_concat)(x) for x in labels])).astype(np.int64)


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
    from cclust.consensus_functions import kcc as kcc_module

    if not isinstance(ensemble, DaskEnsemble):
        ensemble = from_array(ensemble, chunks=chunks, client=client)
    client = client or ensemble._client
    if weights is not None:
        ensemble = ensemble.with_weights(weights)
    setup = kcc_module._prepare(ensemble, n_clusters, utility, p, init, n_init, max_iter, tol,
                                kmeanspp_trials, random_state, init_labels=_init_labels)
    util, K = setup.utility, setup.n_clusters
    params = (np.ascontiguousarray(ensemble.offsets, dtype=np.int64),
              np.ascontiguousarray(util.effective_weights(ensemble), dtype=np.float64),
              util.code, util.exponent)
    driver = _Driver(ensemble, params, _Runner(client))
    n = ensemble.n_samples
    offset = None if ensemble.has_missing else util.gamma_offset(ensemble)

    def one_restart(restart):
        if setup.starts is None:
            if init == "random":
                seeds = _engine.random_seeds(setup.rng, n, K)
            else:
                first, uniforms = _engine.kmeanspp_draws(setup.rng, n, K, setup.kmeanspp_trials)
                seeds = driver.kmeanspp(K, first, uniforms)
            start, tally = driver.labels_from_seeds(seeds)
        else:
            labels0 = setup.starts[restart]
            start = [np.ascontiguousarray(labels0[a:b], dtype=np.int32)
                     for a, b in itertools.pairwise(driver.starts)]
            tally = None
        result = driver.lloyd(start, K, setup.max_iter, setup.tol, tally)
        if offset is None:
            return result, float(ensemble.weights @ util.partition_utilities(ensemble, result.table))
        return result, offset - result.objective / n

    best, gammas, iterations = kcc_module.best_restart(setup.n_init, one_restart, verbose)
    labels = driver.gather(best.labels)
    return kcc_module._finish(ensemble, util, labels, K, best.table, best.objective, best.trace,
                              best.n_iter, best.converged, gammas, iterations, setup.max_iter,
                              extras={"backend": "dask"})


def _init_labels(init, n):
    """init labels as a NumPy vector (a dask array is computed: n int32 fit on the client)."""
    if _is_dask_array(init):
        _check_known_chunks(init, "init")
        init = init.compute()
    return init
