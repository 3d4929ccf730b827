"""The dense k-means of the transfer cut on row blocks, and the same k-means in memory with a
BLAS assignment step.

:class:`DenseBlocks` runs the engine's dense k-means (k-means++ with one candidate,
``labels_from_seeds``, ``lloyd`` with tol = 0) on a matrix kept as row blocks, through a runner
(:mod:`cclust._blocks`): the Dask transfer cut gives it Dask's runner, and its labels and
objective are the in-memory engine's for any blocks. :class:`BlasDenseBlocks` is the same loop
on one in-memory block with the assignment by BLAS products; U-SPEC's hybrid representative
selection uses it from 32 features on (:mod:`cclust._spectral`).
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cclust import _engine, _lloyd
from cclust.graph import one_blas_thread
from cclust._blocks import BLOCK, InMemoryRunner, RowBlocks, aligned, fold

__all__ = ["BlasDenseBlocks", "DenseBlocks"]

_kernel = _engine._kernel


def _task_rows_at(E, local):
    return E[np.asarray(local, dtype=np.int64)].copy()


def _task_dense_candidate_costs(E, closest, candidates):
    """k-means++ D^2 of the block's rows to each candidate row, capped by ``closest`` (None: not
    capped), and the per-chunk potentials: the compiled kmeanspp's own candidate pass."""
    closest = None if closest is None else aligned(closest, np.float64)
    return _kernel().dense_candidate_costs(aligned(E, np.float64), aligned(candidates, np.float64), closest, 1)


def _task_dense_pass(E, labels, centres):
    """The compiled pass over a block: lloyd's from ``labels``, or assign's when None (see
    ``dense_block_pass``): (best, best cost, chunk objectives, moved, chunk sums, sizes)."""
    labels = None if labels is None else aligned(labels, np.int32)
    return _kernel().dense_block_pass(aligned(E, np.float64), aligned(centres, np.float64), labels, 1)


def _task_dense_summary(result):
    """What the client needs of a pass: (chunk objectives, moved, chunk sums, sizes)."""
    return result[2:]


def _task_dense_sums(E, labels, n_clusters):
    """(None, 0, chunk sums, sizes) of the labels: a pass's summary without its objective."""
    return (None, 0) + _kernel().dense_block_sums(aligned(E, np.float64), aligned(labels, np.int32), n_clusters, 1)


def _task_dense_costs(E, labels, centres):
    """Each row's cost to the centre of its label (the compiled objective pass)."""
    k = centres.shape[0]
    n = E.shape[0]
    costs, _ = _kernel().objective(aligned(E, np.float64), 1.0, np.empty((n, 0), dtype=np.int32),
                                   np.zeros(1, dtype=np.int64), np.empty(0), 0, 0.0, aligned(centres, np.float64),
                                   np.empty((k, 0)), aligned(labels, np.int32), 1)
    return costs


def _task_first_rows(labels, start, n_clusters):
    first = np.full(n_clusters, np.iinfo(np.int64).max)
    values, at = np.unique(labels, return_index=True)
    first[values] = at + start
    return first


def _task_renumber(labels, rank):
    return rank[labels].astype(np.int32)


class DenseBlocks(RowBlocks):
    """The dense k-means of the in-memory transfer cut (``cclust._engine``: k-means++ with one
    candidate, ``labels_from_seeds``, ``lloyd`` with tol = 0) on the rows of a persisted matrix
    kept as row blocks (first rows multiples of 4096). Every block runs the engine's compiled
    kernels (``dense_candidate_costs``, ``dense_block_pass``, ``objective``); the client adds their
    per-chunk partials in chunk order (the centre sums, the objective) and takes the engine's
    decisions with the row blocks' k-means++ draw, reseed and the engine's ``lloyd_verdict``,
    so labels and objective are those of the in-memory k-means, for any blocks."""

    def __init__(self, blocks, starts, runner):
        self.blocks, self.starts, self.runner, self.delayed = blocks, starts, runner, runner.delayed
        self.n = int(starts[-1])

    def map(self, fn, *per_block, shared=()):
        """fn(block_j, *per_block_j, *shared) for every block, as Delayed."""
        return [self.delayed(fn)(b, *(p[j] for p in per_block), *shared) for j, b in enumerate(self.blocks)]

    candidate_costs = staticmethod(_task_dense_candidate_costs)
    own_costs = staticmethod(_task_dense_costs)

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
        return (passes, fold([s[0] for s in summaries]), sum(s[1] for s in summaries)) + self._summed(summaries)

    def recount(self, labels, n_clusters):
        """The centre sums and sizes of the labels ``labels`` (after a reseed)."""
        return self._summed(self.runner.compute(self.map(_task_dense_sums, labels, shared=(n_clusters,))))

    # -- the executor interface of cclust._lloyd.lloyd: state = (centre sums, sizes)

    tally = recount

    @staticmethod
    def sizes(state):
        return state[1]

    @staticmethod
    def centres(state):  # lloyd's centres; an empty cluster's (zeros) is never read
        sums, sizes = state
        return sums / np.maximum(sizes, 1)[:, None]

    def costs(self, labels, centres):
        return self.runner.persist(self.map(self.own_costs, labels, shared=(self.delayed(centres),)))

    def step(self, labels, centres, state):
        passes, objective, moved, sums, sizes = self.passes(centres, labels)
        return _lloyd.Pass(objective, moved, (sums, sizes),
                           labels=lambda: self.runner.persist(self.part(passes, 0)),
                           costs=lambda: self.runner.persist(self.part(passes, 1)))

    def reseed(self, labels, costs, sizes, n_clusters):
        return _lloyd.reseed(self, labels, costs, sizes, n_clusters)

    def lloyd(self, start, n_clusters, max_iter):
        """The engine's lloyd (tol = 0) from the labels ``start`` = (label blocks, centre sums,
        sizes). Returns (labels as blocks, objective)."""
        labels, sums, sizes = start
        run = _lloyd.lloyd(self, labels, n_clusters, max_iter=max_iter, tol=0.0, state=(sums, sizes))
        return run.labels, run.objective

    def kmeans(self, n_clusters, rng, n_init, max_iter):
        """``n_init`` runs of k-means++ then Lloyd (the draws of :func:`cclust.graph.tcut`'s
        runs), the lowest objective kept (the first on ties). Returns (labels, objective)."""
        def one_run(_):
            first, uniforms = _engine.kmeanspp_draws(rng, self.n, n_clusters, 1)
            seeds = _lloyd.kmeanspp(self, n_clusters, first, uniforms)
            passes, _, _, sums, sizes = self.passes(self.candidate_rows(seeds))
            return self.lloyd((self.runner.persist(self.part(passes, 0)), sums, sizes), n_clusters, max_iter)

        return _lloyd.best_of_restarts(one_run, n_init, score=lambda run: run[1])[0]

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


_BLAS_ROWS = 1024


class BlasDenseBlocks(DenseBlocks):
    """:class:`DenseBlocks`'s k-means (``lloyd``: the engine's centre sums, reseed of empty
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
        X = aligned(X, np.float64)
        super().__init__([X], np.array([0, X.shape[0]], dtype=np.int64), InMemoryRunner())
        self.n_threads = max(1, int(n_threads))
        self.norms = np.einsum("ij,ij->i", X, X)

    def _nearest(self, X, centres, labels):
        """(best, moved) of the rows of X: the BLAS assignment (see the class)."""
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
    def own_costs(X, labels, centres):
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
            labels = aligned(labels, np.int32)
            own = self.own_costs(X, labels, centres)
            chunk_objective = np.array([fold([own[a:a + BLOCK]]) for a in range(0, X.shape[0], BLOCK)])
        best, moved = self._nearest(X, centres, labels)
        chunk_sums, sizes = _kernel().dense_block_sums(X, best, k, 1)
        if labels is None:
            best_cost = self.own_costs(X, best, centres)
        else:  # a row that kept its label keeps its cost: recompute the moved rows only
            best_cost = own
            changed = np.flatnonzero(best != labels)
            best_cost[changed] = self.own_costs(X[changed], best[changed], centres)
        return best, best_cost, chunk_objective, moved, chunk_sums, sizes

    def passes(self, centres, labels=None):
        centres = aligned(centres, np.float64)
        labels = [None] * len(self.blocks) if labels is None else labels
        passes = [self._pass(E, lab, centres) for E, lab in zip(self.blocks, labels)]
        summaries = [_task_dense_summary(p) for p in passes]
        return (passes, fold([s[0] for s in summaries]), sum(s[1] for s in summaries)) + self._summed(summaries)

    def run(self, seeds, n_clusters, max_iter):
        """k-means from the rows ``seeds`` (the engine's assign then lloyd, tol = 0, with the
        BLAS assignment). Returns (labels int64 (n,), centres (n_clusters, d), objective)."""
        passes, _, _, sums, sizes = self.passes(self.blocks[0][np.asarray(seeds, dtype=np.int64)])
        labels, objective = self.lloyd(([passes[0][0]], sums, sizes), n_clusters, max_iter)
        sums, sizes = self.recount(labels, n_clusters)
        return labels[0].astype(np.int64), sums / np.maximum(sizes, 1)[:, None], objective
