"""select_k on a dask array: the sketch drawn from the row chunks, every object's labels
propagated chunk by chunk (:func:`cclust.select_k` runs the protocol on the sketch in memory).

On the workers, one task per row chunk (chunks are re-cut to multiples of 4096 rows, the
compiled engine's own chunk, with every feature in one chunk): the check for NaN and infinity,
the column sums and scatter matrices of the principal axes, and the grid cubes of the geometric
sketch (Hie et al. 2019) at each side its bisection tries; then the rows of the sketch; last,
in one pass, every object's consensus cluster at every K from each sketch, by the rules of
:func:`cclust.predict`, of which only the first sketch's labels (one byte per object and K up
to K = 255) and, per K, the sketches' contingency tables (their agreement) come back. With a
``dask.distributed`` client the protocol's k-means runs on the sketch are tasks on the workers
too (one per K and resample; :data:`cclust._monti.MAP_RUNS`). On the client: the sums added in a fixed order of 4096-row sub-blocks (so the principal axes, and so
the sketch, are the in-memory ones bit for bit, whatever the chunks), and the draws of the
sketch, which need one integer per object (its cube) for the geometric sketch. Every task is
built from X's graph: the scheduler computes a lost worker's part again, with the same result.
"""
import contextlib

import numpy as np

from cclust import _assign, _monti, _sketch
from cclust._blocks import BLOCK, aligned
from cclust._pipeline import nonfinite_error
from cclust.dask._ensemble import _check_known_chunks, _is_dask_array
from cclust.dask._runner import _Runner
from cclust.errors import ValidationError


def gather(data):
    """A dask array's values in one NumPy array (on the default client, or Dask's local scheduler)."""
    return np.asarray(_Runner(None).compute([data])[0])


def check_dask_data(data):
    """A dask array of numbers, 2-D, with known chunks and at least 2 rows and 1 column."""
    if not _is_dask_array(data):
        if hasattr(data, "__dask_graph__"):
            raise ValidationError(f"data must be a dask array, got a {type(data).__name__}; convert it with "
                                  "data.to_dask_array(lengths=True).")
        raise ValidationError(f"data must be a dask array here, got {type(data).__name__}.")
    _check_known_chunks(data, "data")
    if data.ndim != 2:
        raise ValidationError(f"data must be 2-D (n_samples, n_features), got a dask array of shape {data.shape}; "
                              "reshape a single feature with X.reshape(-1, 1).")
    if data.dtype.kind not in "biuf":
        raise ValidationError(f"data must hold real numbers, got a dask array of dtype {data.dtype}.")
    if data.shape[0] < 2 or data.shape[1] < 1:
        raise ValidationError(f"data has shape {data.shape}; choosing K needs at least 2 objects and 1 feature.")


# -- tasks (module level so that worker processes unpickle them by reference) ------------------

def _float_block(block):
    return aligned(np.asarray(block, dtype=np.float64), np.float64)


def _task_check(block, start):
    """The block's column sums per 4096-row sub-block; or, when it holds NaN or infinity, the
    first bad cell (global row) of each kind and the NaN count."""
    block = _float_block(block)
    if np.isfinite(block).all():
        return _sketch.block_sums(block), None
    infinite, holes = np.isinf(block), np.isnan(block)
    first = {}
    for kind, mask in (("inf", infinite), ("nan", holes)):
        if mask.any():
            row, column = np.argwhere(mask)[0]
            first[kind] = (start + int(row), int(column))
    return None, (first, int(holes.sum()))


def _task_scatter(block, mean):
    return _sketch.block_scatter(_float_block(block), mean)


def _task_score_range(block, mean, axes):
    scores = _sketch.block_scores(_float_block(block), mean, axes)
    return scores.min(axis=0), scores.max(axis=0)


def _task_cubes(block, mean, axes, low, side):
    return _sketch.grid_cells(_sketch.block_scores(_float_block(block), mean, axes) - low, side)


def _task_enough(block, mean, axes, low, side, size):
    """The distinct cubes of the block, or None when they alone are ``size`` or more."""
    cubes = np.unique(_task_cubes(block, mean, axes, low, side), axis=0)
    return None if cubes.shape[0] >= size else cubes


def _task_cells(block, mean, axes, low, side):
    """The block's distinct cubes, the first row of each in the block, and each row's cube."""
    cubes, first, inverse = np.unique(_task_cubes(block, mean, axes, low, side), axis=0, return_index=True,
                                      return_inverse=True)
    return cubes, first.astype(np.int64), inverse.reshape(-1).astype(np.min_scalar_type(max(cubes.shape[0] - 1, 0)))


def _task_take(block, rows):
    return _float_block(block)[rows]


def _task_label(block, start, fits, sizes, rule, n_neighbors):
    """The block's labels at every K from the first sketch, and the sketches' pair contingency
    tables over its rows (:func:`cclust._sketch.label_rows`)."""
    return _sketch.label_rows(_float_block(block), start, fits, sizes, rule, n_neighbors, 1)


class DaskRows:
    """The sketch route's rows (``n``, ``draw``, ``take``, ``label``; the interface of
    :class:`cclust.selection._select_k.InMemoryRows`) over the row chunks of a dask array."""

    #: The sketches' protocols run one after the other (their runs are the scheduler's to spread).
    concurrent = False

    def __init__(self, data, missing_features, runner=None):
        if missing_features != "error":
            raise ValidationError(
                f"missing_features={missing_features!r} fills NaN with the column means of every object, which a "
                "sketch of a dask array does not gather; impute X chunk by chunk first (e.g. "
                "X = dask.array.where(dask.array.isnan(X), column_means, X)), or pass sketch=None to gather it.")
        self.runner = runner or _Runner(None)
        self._cubes = self._taken = None   # the geometric sketch's cubes, the last rows taken
        self.n, self.d = (int(v) for v in data.shape)
        rows = data.chunks[0]
        if len(data.chunks[1]) != 1 or any(c % BLOCK for c in rows[:-1]):
            step = min(self.n, -(-max(rows) // BLOCK) * BLOCK)
            data = data.rechunk({0: step, 1: -1})
        self.blocks = list(data.to_delayed().ravel())
        self.starts = np.concatenate([[0], np.cumsum(data.chunks[0])]).astype(np.int64)
        checked = self._map(_task_check, self._with_starts())
        bad = [flaw for _, flaw in checked if flaw is not None]
        if bad:
            infinite = [first["inf"] for first, _ in bad if "inf" in first]
            row, column = infinite[0] if infinite else next(first["nan"] for first, _ in bad if "nan" in first)
            raise nonfinite_error("data", f"row {row}, column {column}", bool(infinite), sum(c for _, c in bad))
        self.sums = [part for sums, _ in checked for part in sums]

    def _with_starts(self):
        return [(block, int(start)) for block, start in zip(self.blocks, self.starts[:-1])]

    def _map(self, fn, args_per_block, *shared):
        """``fn(*args, *shared)`` on every block, in block order; shared values go into the graph once."""
        delayed = self.runner.dask.delayed
        shared = [delayed(value, pure=True) if isinstance(value, (np.ndarray, dict, list)) else value
                  for value in shared]
        task = self.runner.delayed(fn)
        return self.runner.compute([task(*(args if isinstance(args, tuple) else (args,)), *shared)
                                    for args in args_per_block])

    def running(self):
        """While the protocol runs on a sketch: with a ``dask.distributed`` client, its k-means
        runs (every (K, resample) of the data and of each reference data set) are tasks on the
        workers; on Dask's local scheduler they stay on this process's ``n_jobs`` threads."""
        if self.runner.client is None:
            return contextlib.nullcontext()
        return _runs_on(self.runner.client)

    def draw(self, size, how, rng):
        if how == "uniform":
            return _sketch.uniform_sketch(self.n, size, rng)
        # the cubes depend on the data and the size alone: every sketch of this size reuses them
        if self._cubes is None or self._cubes[0] != size:
            self._cubes = (size, _sketch.geometric_cells(_ChunkGrid(self), size))
        return _sketch.round_robin(self._cubes[1], size, rng)

    def take(self, chosen):
        if self._taken is not None and np.array_equal(self._taken[0], chosen):
            return self._taken[1]
        parts = self._map(_task_take, [(block, chosen[(chosen >= a) & (chosen < b)] - a)
                                       for block, a, b in zip(self.blocks, self.starts[:-1], self.starts[1:])])
        self._taken = (chosen, np.ascontiguousarray(np.concatenate(parts)))
        return self._taken[1]

    def label(self, fits, sizes, rule, n_threads):
        """Every object's labels at each K from the first sketch, and the sketches' contingency
        tables, in one pass over the chunks; the tables are added in chunk order (exact integers)."""
        neighbours = _assign.check_neighbors(None, fits[0][1].shape[0])
        parts = self._map(_task_label, self._with_starts(), fits, sizes, rule, neighbours)
        labels = {}
        for k in parts[0][0]:
            labels[k] = np.empty(self.n, dtype=parts[0][0][k].dtype)
            for (part, _), a, b in zip(parts, self.starts[:-1], self.starts[1:]):
                labels[k][a:b] = part[k]
        tables = {k: [sum(part[1][k][pair] for part in parts) for pair in range(len(parts[0][1][k]))]
                  for k in sizes}
        return labels, tables


@contextlib.contextmanager
def _runs_on(client):
    """:data:`cclust._monti.MAP_RUNS` set to one task per run on ``client``'s workers, X sent once;
    each run is seeded by its (K, resample), so the labels are those of the threads."""
    def map_runs(fn, X, runs):
        import dask

        shared = dask.delayed(X, pure=True)
        task = dask.delayed(fn, pure=True)
        return client.compute([task(shared, *run) for run in runs], sync=True)

    token = _monti.MAP_RUNS.set(map_runs)
    try:
        yield
    finally:
        _monti.MAP_RUNS.reset(token)


class _ChunkGrid:
    """:class:`cclust._sketch.PrincipalGrid` over the chunks: the same axes, span and cubes."""

    def __init__(self, rows):
        self.rows = rows
        self.mean, self.axes = _sketch.principal_axes(
            rows.sums, lambda mean: [part for parts in rows._map(_task_scatter, rows.blocks, mean) for part in parts],
            rows.n)
        ranges = rows._map(_task_score_range, rows.blocks, self.mean, self.axes)
        self.low = np.min([low for low, _ in ranges], axis=0)
        high = np.max([high for _, high in ranges], axis=0)
        # the largest shifted score: rounding is monotone, so max(s - low) is max(s) - low
        self.span = float((high - self.low).max())

    def enough(self, side, size):
        parts = self.rows._map(_task_enough, self.rows.blocks, self.mean, self.axes, self.low, side, size)
        if any(part is None for part in parts):
            return True
        return np.unique(np.concatenate(parts), axis=0).shape[0] >= size

    def cells(self, side):
        """Each object's cube, numbered in order of its first object (as in memory)."""
        parts = self.rows._map(_task_cells, self.rows.blocks, self.mean, self.axes, self.low, side)
        cubes = np.concatenate([c for c, _, _ in parts])
        first = np.concatenate([f + start for (_, f, _), start in zip(parts, self.rows.starts[:-1])])
        _, which = np.unique(cubes, axis=0, return_inverse=True)
        which = which.reshape(-1)
        earliest = np.full(int(which.max()) + 1, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(earliest, which, first)
        number = np.empty_like(earliest)
        number[np.argsort(earliest, kind="stable")] = np.arange(earliest.shape[0])
        offsets = np.concatenate([[0], np.cumsum([c.shape[0] for c, _, _ in parts])])
        # each object's cube, in the narrowest type that numbers the cubes (it is kept while
        # the sketches are drawn): four bytes per object up to 2^31 cubes
        out = np.empty(self.rows.n, dtype=np.min_scalar_type(max(number.shape[0] - 1, 0)))
        for i, (_, _, inverse) in enumerate(parts):
            out[self.rows.starts[i]:self.rows.starts[i + 1]] = number[which[offsets[i] + inverse]]
        return out
