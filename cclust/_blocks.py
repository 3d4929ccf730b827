"""Row-block executors' common ground: the runner interface, exact sums in chunk order, and the
k-means++ draw and empty-cluster reseed of the compiled engine taken step by step over row blocks.

An executor holds its rows as a list of blocks whose first rows are multiples of the engine's
4096-object chunk (``BLOCK``), and runs the engine's per-block kernels on each block through a
runner (``delayed``, ``persist``, ``compute``): Dask's (:mod:`cclust.dask`) or
:class:`InMemoryRunner`, which runs every task at once in this process. The client adds the
blocks' per-chunk partials in chunk order (:func:`fold`), the order in which the whole-array
kernels add their chunks, so every sum, draw and decision is the in-memory engine's bit for bit.
"""
import itertools
import operator

import numpy as np

from cclust import _engine
from cclust.errors import ValidationError

__all__ = ["BLOCK", "InMemoryRunner", "RowBlocks", "aligned", "fold"]

#: rows of the compiled engine's chunks; row blocks start on multiples of it
BLOCK = _engine._CHUNK

_kernel = _engine._kernel


def aligned(a, dtype=None):
    """``a`` C-contiguous and aligned: an array unpickled on a worker may start at any byte of
    its message, and the compiled kernels read their inputs as typed (aligned) memory."""
    return np.require(a, dtype=dtype, requirements=["C", "A"])


def fold(parts):
    """Left-to-right sum from 0.0 of a list of arrays of per-chunk partials, in chunk order:
    the order in which the compiled passes add their chunks, so the sum is theirs bit for bit."""
    total = 0.0
    for part in parts:
        for v in part.tolist():
            total += v
    return total


def _with_overrides(labels, overrides, start):
    """``labels`` of a block whose first object is ``start``, with objects moved by a reseed."""
    out = labels.copy()
    for x, k in overrides.items():
        out[x - start] = k
    return out


def _task_reseed_pick(labels, costs, sizes, overrides, start):
    """The block's reseed pick (global index, cost, label), or None when no object may move."""
    labels = aligned(_with_overrides(labels, overrides, start), np.int32)
    local, cost = _kernel().costliest_movable(labels, aligned(costs, np.float64), aligned(sizes, np.int64))
    if local < 0:
        return None
    return local + start, cost, int(labels[local])


def _task_candidate_row(costs, t):
    """D^2 of the block's objects to candidate ``t`` (a row of _task_candidate_costs' first
    item), copied so that the other candidates' rows can be freed."""
    return costs[0][t].copy()


def _task_running_end(closest, start):
    """The k-means++ running sum of D^2 after this block, continuing from ``start``."""
    return _kernel().draw_positions(aligned(closest, np.float64), start, np.empty(0))[0]


def _task_draw(closest, start, targets):
    """Block positions of the draws ``targets`` on the running sum continued from ``start``."""
    return _kernel().draw_positions(aligned(closest, np.float64), start,
                                    np.asarray(targets, dtype=np.float64))[1].tolist()


def _task_last_positive(closest):
    return _kernel().draw_positions(aligned(closest, np.float64), 0.0, np.empty(0))[2]


def _task_zero_at(closest, local):
    out = closest.copy()
    out[local] = 0.0
    return out


class InMemoryRunner:
    """The runner interface of the block executors (``delayed``, ``persist``, ``compute``) run
    at once in this process: an executor over in-memory blocks, no Dask."""

    @staticmethod
    def delayed(fn):
        return fn

    @staticmethod
    def persist(objs):
        return list(objs)

    compute = persist




class RowBlocks:
    """What every row-block executor shares: item access on its tasks' tuples, and the
    compiled engine's k-means++ and empty-cluster reseed over the blocks. A subclass sets
    ``blocks``, ``starts`` (first row of every block, n at the end), ``runner``, ``delayed`` and
    defines ``map``, ``candidate_rows`` and ``_candidate_costs`` (the block's candidate pass)."""

    def part(self, objs, i):
        """Item ``i`` of each Delayed tuple in ``objs``."""
        return [self.delayed(operator.getitem)(o, i) for o in objs]


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
                    potentials = [fold([chunk_potentials[:, t]]) for t in range(n_trials)]
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
