"""The one Python Lloyd driver: the compiled engine's Lloyd loop, k-means++ draw and empty-cluster
reseed (``kmeans.hpp``), written once over executors that hold the rows, and the best of several
restarts.

The compiled engine runs these loops itself on an in-memory array. Three executors hold their
rows elsewhere and take the engine's decisions here, pass by pass, with the engine's own
kernels: the Dask KCC blocks (:mod:`cclust.dask`), the dense blocks of the transfer cut and its
BLAS variant (:mod:`cclust._dense_blocks`), and the soft memberships of KCC on a SoftEnsemble
(:mod:`cclust.consensus_functions._kcc_soft`). Each sum is added in the engine's order and each
stop, tie and reseed decision is the engine's function, so an executor's run is the engine's.

The executor interface of :func:`lloyd`:

* ``tally(labels, n_clusters) -> state``: what the centres are made of (counts, sums, ...);
* ``sizes(state)``: the n_clusters cluster sizes of that state;
* ``centres(state)``: the centres;
* ``costs(labels, centres)``: each object's cost to the centre of its label;
* ``step(labels, centres, state) -> Pass``: one Lloyd pass (best labels, ties kept at the
  current cluster; their objective, moved count and state);
* ``reseed(labels, costs, sizes, n_clusters)``: the engine's empty-cluster rule.

:func:`kmeanspp` and :func:`reseed` run on row-block executors (:class:`cclust._blocks.RowBlocks`
with ``map``, ``candidate_rows``, ``candidate_costs``, ``starts`` and a runner).
"""
import enum
import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from cclust import _engine
from cclust._blocks import aligned, fold
from cclust._progress import progress
from cclust.errors import ValidationError

__all__ = ["Pass", "Run", "Verdict", "best_of_restarts", "kmeanspp", "lloyd", "reseed"]

_kernel = _engine._kernel


class Verdict(enum.IntEnum):
    """What the engine's stop rule (``lloyd_verdict`` in kmeans.hpp) decides after a pass."""

    #: no reason to stop: update the labels and run another pass
    GO_ON = -1
    #: max_iter label updates were made (the run has not converged)
    MAX_ITER = 0
    #: no label changed
    STABLE = 1
    #: the objective fell by less than tol times its previous value
    TOL = 2
    #: the pass would raise the objective: the previous labels and centres are kept
    ROSE = 3


def verdict(it, objective, previous_objective, moved, max_iter, tol):
    """The engine's stop rule after pass ``it``, as a :class:`Verdict`."""
    return Verdict(_kernel().lloyd_verdict(it, objective, previous_objective, moved, max_iter, tol))


@dataclass(frozen=True)
class Pass:
    """One Lloyd pass of an executor: the objective of the current labels, how many objects
    change cluster, the state of the new labels, and the new labels and their costs, asked for
    only when the loop goes on (a row-block executor keeps them on its workers until then)."""

    objective: float
    moved: int
    state: object
    labels: Callable[[], object]
    costs: Callable[[], object]


@dataclass(frozen=True)
class Run:
    """A Lloyd run: the final labels (in the executor's form), centres and state, objective,
    the objective of every pass kept, and whether it stopped before max_iter."""

    labels: object
    centres: object
    state: object
    objective: float
    trace: np.ndarray
    converged: bool

    @property
    def n_iter(self):
        return self.trace.shape[0] - 1


def lloyd(executor, labels, n_clusters, *, max_iter, tol, state=None):
    """The compiled engine's Lloyd loop over ``executor`` from ``labels`` (``state``: their tally
    when known). An empty cluster is reseeded before the first pass and after any pass that
    empties one; a pass that would raise the objective is undone and ends the run."""
    state = executor.tally(labels, n_clusters) if state is None else state
    centres = executor.centres(state)
    if not executor.sizes(state).all():
        labels = executor.reseed(labels, executor.costs(labels, centres), executor.sizes(state), n_clusters)
        state = executor.tally(labels, n_clusters)
        centres = executor.centres(state)
    trace = []
    objective = previous_objective = 0.0
    previous = (labels, centres, state)
    it = 0
    while True:
        step = executor.step(labels, centres, state)
        objective = step.objective
        decision = verdict(it, objective, previous_objective, step.moved, max_iter, tol)
        if decision is Verdict.ROSE:
            (labels, centres, state), objective = previous, previous_objective
            break
        trace.append(objective)
        if decision is not Verdict.GO_ON:
            break
        previous, previous_objective = (labels, centres, state), objective
        labels, state = step.labels(), step.state
        if not executor.sizes(state).all():
            labels = executor.reseed(labels, step.costs(), executor.sizes(state), n_clusters)
            state = executor.tally(labels, n_clusters)
        centres = executor.centres(state)
        it += 1
    return Run(labels, centres, state, objective, np.array(trace), decision is not Verdict.MAX_ITER)


def best_of_restarts(run, n_init, *, score=lambda result: result.objective, higher_is_better=False,
                     verbose=0, desc="restarts"):
    """``run(i)`` for i < n_init; the result of the best ``score`` is kept, the first on ties
    (a later restart replaces it only when strictly better). Returns ``(best, scores)`` with the
    scores of every restart in order."""
    best = best_score = None
    scores = []
    with progress(total=n_init, desc=desc, verbose=verbose) as bar:
        for i in range(n_init):
            result = run(i)
            value = score(result)
            scores.append(value)
            if best is None or (value > best_score if higher_is_better else value < best_score):
                best, best_score = result, value
            # a restart that lost is freed before the next one runs, not held through it
            result = None
            bar.update(1)
    return best, scores


# -- k-means++ and the reseed on row blocks -----------------------------------------------------
# Tasks at module level, so that worker processes unpickle them by reference.

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
    """D^2 of the block's objects to candidate ``t`` (a row of the candidate pass's first item),
    copied so that the other candidates' rows can be freed."""
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


def kmeanspp(executor, n_clusters, first, uniforms):
    """The compiled kmeanspp, step by step over the executor's blocks, from the draws of
    :func:`cclust._engine.kmeanspp_draws`: the same running sums, candidates, potentials and
    seeds. ``executor.candidate_costs(block, closest, candidate_rows)`` is the block's candidate
    pass: ``(D^2 capped by closest (None: not capped), per-chunk potentials)``."""
    runner, delayed, starts = executor.runner, executor.delayed, executor.starts
    n_trials = uniforms.shape[1]
    first_costs = executor.map(executor.candidate_costs, shared=(None, executor.candidate_rows([first])))
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
                    candidates[t] = int(starts[j] + x)
            if any(c is None for c in candidates):  # u * total rounded up to total
                lasts = runner.compute([delayed(_task_last_positive)(c) for c in closest])
                last = next((int(starts[j] + x) for j, x in reversed(list(enumerate(lasts))) if x >= 0), 0)
                candidates = [last if c is None else c for c in candidates]
            rows = executor.candidate_rows(candidates)
            costs = runner.persist(executor.map(executor.candidate_costs, closest, shared=(rows,)))
            win = 0
            if n_trials > 1:  # one candidate wins without its potential (a round trip saved)
                chunk_potentials = np.concatenate(runner.compute(executor.part(costs, 1)), axis=0)
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
            j = int(np.searchsorted(starts, seed, side="right") - 1)
            closest[j] = runner.persist([delayed(_task_zero_at)(closest[j], seed - int(starts[j]))])[0]
        seeds.append(seed)
        chosen.add(seed)
    return np.array(seeds, dtype=np.int64)


def reseed(executor, labels, costs, sizes, n_clusters):
    """The compiled lloyd's reseed over the executor's blocks (``labels`` and ``costs`` as
    blocks): each empty cluster, in increasing index, takes the costliest object whose cluster
    keeps a member. Each block's pick and the choice among the blocks' picks are the engine's
    costliest_movable, so ties go to the lowest index. Returns the labels as blocks."""
    kernel, runner, delayed = _kernel(), executor.runner, executor.delayed
    overrides = {}
    sizes = np.array(sizes[:n_clusters], dtype=np.int64)  # a copy: the caller's sizes stay as they are
    bounds = list(itertools.pairwise(executor.starts.tolist()))

    def block_overrides(a, b):
        return {x: k for x, k in overrides.items() if a <= x < b}

    for empty in range(n_clusters):
        if sizes[empty] != 0:
            continue
        jobs = [delayed(_task_reseed_pick)(labels[j], costs[j], sizes.copy(), block_overrides(a, b), a)
                for j, (a, b) in enumerate(bounds)]
        picks = [p for p in runner.compute(jobs) if p is not None]
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
            out[j] = runner.persist([delayed(_with_overrides)(labels[j], moved, a)])[0]
    return out
