"""KCC on a :class:`~cclust.dask.DaskEnsemble`: every pass of the compiled engine's Lloyd driver
and k-means++ mapped over the row chunks, partials added in chunk order (see :mod:`cclust.dask`)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust import _engine, _lloyd
from cclust._blocks import RowBlocks, aligned, fold
from cclust.consensus_functions._kcc_run import best_restart, finish, prepare
from cclust.dask._ensemble import DaskEnsemble, _check_block, _check_known_chunks, _is_dask_array, from_array
from cclust.dask._runner import _Runner, recovering
from cclust.base import Utility
from cclust.result import ConsensusResult
from cclust.validation import RandomStateLike, renamed_threads

_kernel = _engine._kernel


# -- tasks (module level so that worker processes unpickle them by reference) ------------------

def _rows_args(block, params):
    """The compiled kernels' leading "rows" arguments for a label block (no dense block)."""
    offsets, weights, family, p = params
    return (np.empty((block.shape[0], 0)), 0.0, block, aligned(offsets, np.int64),
            aligned(weights, np.float64), family, p)


def _task_tally(block, labels, n_clusters, r, j, params):
    """The block's tally of ``labels``: (counts, sizes) with a last row for label -1."""
    block = _check_block(block, r, j)
    return _kernel().tally(*_rows_args(block, params), aligned(labels, np.int32), n_clusters, 1)


def _task_assign(block, centres, r, j, params):
    """Nearest centre per object, with the block's tally of those labels (saves a pass)."""
    block = _check_block(block, r, j)
    kernel = _kernel()
    args = _rows_args(block, params)
    k = centres.shape[0]
    labels, _, _ = kernel.assign(*args, np.empty((k, 0)), aligned(centres, np.float64), 1)
    return labels, kernel.tally(*args, labels, k, 1)


def _task_costs(block, labels, centres, r, j, params):
    """Each object's cost to the centre of its label."""
    block = _check_block(block, r, j)
    k = centres.shape[0]
    costs, _ = _kernel().objective(*_rows_args(block, params), np.empty((k, 0)),
                                   aligned(centres, np.float64), aligned(labels, np.int32), 1)
    return costs


def _task_lloyd_pass(block, labels, centres, r, j, params):
    """One Lloyd pass over the block: the compiled lloyd's own pass, as
    (best labels, their costs, (chunk objectives, moved, count changes, size changes))."""
    block = _check_block(block, r, j)
    best, cost, chunk_objective, moved, delta_counts, delta_sizes, _ = _kernel().lloyd_pass(
        *_rows_args(block, params), aligned(centres, np.float64), aligned(labels, np.int32), 1)
    return best, cost, (chunk_objective, moved, delta_counts, delta_sizes)


def _task_label_rows(block, local, r, j):
    block = _check_block(block, r, j)
    return block[np.asarray(local, dtype=np.int64)].copy()


def _task_candidate_costs(block, closest, candidates, r, j, params):
    """k-means++ D^2 to each candidate (label rows), capped by ``closest`` (None: not capped),
    and the per-chunk potentials: the compiled kmeanspp's own candidate pass."""
    block = _check_block(block, r, j)
    closest = None if closest is None else aligned(closest, np.float64)
    return _kernel().candidate_costs(*_rows_args(block, params), aligned(candidates, np.int32), closest, 1)


def _task_concat(*parts):
    return np.concatenate(parts)


# -- the client side ------------------------------------------------------------------------

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


class _BlockExecutor(RowBlocks):
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

    candidate_costs = staticmethod(_task_candidate_costs)

    def candidate_rows(self, index):
        """Label rows of the objects ``index`` (global), in that order, as int32 (len, r)."""
        index = np.asarray(index, dtype=np.int64)
        block = np.searchsorted(self.starts, index, side="right") - 1
        jobs = [self.delayed(_task_label_rows)(self.blocks[c], [int(x - self.starts[c])], self.n_partitions, int(c))
                for x, c in zip(index.tolist(), block.tolist())]
        return np.ascontiguousarray(np.concatenate(self.runner.compute(jobs), axis=0), dtype=np.int32)

    # -- the executor interface of cclust._lloyd.lloyd: state = (counts, sizes), the tally with
    # its last row for label -1

    def tally(self, labels, n_clusters):
        parts = self.runner.compute(self.map(_task_tally, labels, shared=(n_clusters,)))
        return sum(p[0] for p in parts), sum(p[1] for p in parts)

    def centres(self, state):
        return _kernel().centres_from_tally(self.ensemble.offsets, state[0])

    @staticmethod
    def sizes(state):
        return state[1][:-1]

    def costs(self, labels, centres):
        return self.runner.persist(self.map(_task_costs, labels, shared=(self.delayed(centres),)))

    def step(self, labels, centres, state):
        runner = self.runner
        passes = runner.persist(self.map(_task_lloyd_pass, labels, shared=(self.delayed(centres),)))
        summaries = runner.compute(self.part(passes, 2))
        counts = state[0] + sum(s[2] for s in summaries)
        sizes = state[1] + sum(s[3] for s in summaries)
        return _lloyd.Pass(fold([s[0] for s in summaries]), sum(s[1] for s in summaries), (counts, sizes),
                           labels=lambda: runner.persist(self.part(passes, 0)),
                           costs=lambda: runner.persist(self.part(passes, 1)))

    def reseed(self, labels, costs, sizes, n_clusters):
        return _lloyd.reseed(self, labels, costs, sizes, n_clusters)

    def labels_from_seeds(self, seeds):
        """Every object's nearest seed (the in-memory labels_from_seeds), and their tally."""
        centres = _seed_centres(self.candidate_rows(seeds), self.ensemble.offsets, self.ensemble.cluster_sizes)
        out = self.runner.persist(self.map(_task_assign, shared=(self.delayed(centres),)))
        parts = self.runner.compute(self.part(out, 1))
        tally = (sum(p[0] for p in parts), sum(p[1] for p in parts))
        return self.runner.persist(self.part(out, 0)), tally

    def lloyd(self, labels, n_clusters, max_iter, tol, tally=None):
        """The compiled lloyd with every pass mapped over the blocks (:func:`cclust._lloyd.lloyd`);
        ``tally`` is the tally of ``labels`` when known. Returns the run (labels as blocks) and
        its labels' counts."""
        run = _lloyd.lloyd(self, labels, n_clusters, max_iter=max_iter, tol=tol, state=tally)
        counts = run.state[0]
        return _BlockRun(_engine.LloydRun(run.labels, run.objective, run.trace, run.n_iter, run.converged,
                                          np.empty((n_clusters, 0)), run.centres), counts[:n_clusters])

    def gather(self, labels):
        return np.concatenate(self.runner.compute([self.delayed(_task_concat)(x) for x in labels])).astype(np.int64)


@weights_on_the_ensemble
@renamed_threads
def kcc(ensemble: Any, n_clusters: int, *, utility: str | Utility = "uh", p: float | None = None,
        init: str | npt.ArrayLike = "k-means++", n_init: int = 10,
        max_iter: int = 100, tol: float = 1e-6, kmeanspp_trials: int | None = None,
        random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0, client: Any = None,
        chunks: int | None = None) -> ConsensusResult:
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
    n_jobs : int, default=None
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
    setup = prepare(ensemble, n_clusters, utility, p, init, n_init, max_iter, tol, kmeanspp_trials,
                    random_state, init_labels=_init_labels)
    util, K = setup.utility, setup.n_clusters
    params = (np.ascontiguousarray(ensemble.offsets, dtype=np.int64),
              np.ascontiguousarray(util.effective_weights(ensemble), dtype=np.float64),
              util.code, util.exponent)
    runner = _Runner(client)
    n = ensemble.n_samples
    offset = None if ensemble.has_missing else util.gamma_offset(ensemble)

    def run():
        executor = _BlockExecutor(ensemble, params, runner)

        def one_restart(restart):
            if setup.starts is None:
                if init == "random":
                    seeds = _engine.random_seeds(setup.rng, n, K)
                else:
                    first, uniforms = _engine.kmeanspp_draws(setup.rng, n, K, setup.kmeanspp_trials)
                    seeds = _lloyd.kmeanspp(executor, K, first, uniforms)
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
        return best, gammas, iterations, executor.gather(best.run.labels)

    # a lost worker's blocks are recomputed by Dask from the graph; labels it cannot recompute
    # (generated from a scattered X) are made again and the restarts run again from the same draws
    best, gammas, iterations, labels = recovering(run, ensemble=ensemble, rng=setup.rng, what="kcc")
    kept = best.run
    return finish(ensemble, util, labels, K, best.table, kept.objective, kept.trace, kept.n_iter,
                  kept.converged, gammas, iterations, setup.max_iter, extras={"backend": "dask"})


def _init_labels(init, n):
    """init labels as a NumPy vector (a dask array is computed: n int32 fit on the client)."""
    if _is_dask_array(init):
        _check_known_chunks(init, "init")
        init = init.compute()
    return init
