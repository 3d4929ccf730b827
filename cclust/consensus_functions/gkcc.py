"""Greedy optimisation of K-means-based consensus clustering (GKCC; Li & Liu, Tsinghua Sci.
Tech. 23(2), 2018).

GKCC couples basic-partition generation and KCC fusion (Li & Liu 2018, sec. 4, Algorithm 1). It starts
from the data centroid; for k = 2..K it samples nu objects, runs K-means in the current space
from the previous k-1 centres plus each sampled object, keeps all nu partitions as basic
partitions, appends their one-hot blocks to the space (Li & Liu 2018, eq. 3) and starts the next step
from the centres of the winner (lowest K-means objective) recomputed by K-means in the
augmented space. The nu (K-1) partitions are the ensemble; the consensus is KCC on it,
initialised from the last winner. nu = ceil(log(1 - delta) / log(1 - p)) (Li & Liu 2018, Lemma 1: 59 for
p = 0.05, delta = 0.95).

Everything runs on the compiled mixed-rows engine (``cclust._engine``): the augmented space is
a dense block (X) plus categorical blocks (the generated partitions) with the Uc distance, so
the one-hot blocks are never expanded. ``greedy`` is the generation phase on its own (a
generator), ``gkcc`` the whole method (a consensus function taking ``X``).

The nu candidate runs of a step are one compiled call (``_engine.candidate_runs``): candidates in
parallel, one thread each; the costs to the k-1 shared centres computed once, those to the
seed centres a few candidates at a time as they start (``_engine.CANDIDATE_SEED_BATCH``); a cost
reused while its centre is unchanged, skipped when a lower bound (Elkan 2003, with slack for
rounding) proves it above the object's own cost, and a pass taken from a memo when another
candidate already ran it from the same labels. Each candidate's labels, objective and n_iter are bit for bit those of
``assign`` + ``lloyd`` per candidate, the path it replaced (kept as ``_STEP = "reference"`` for the
tests and ``benchmarks/bench_gkcc_steps.py``).
"""
from __future__ import annotations

import math
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from cclust import _engine
from cclust._codes import compact_dtype, labels_from_codes, to_compact
from cclust.validation import check_array_2d, check_float, check_int, check_n_jobs, check_random_state, require_memory
from cclust.ensemble import Ensemble, as_ensemble
from cclust.errors import ValidationError
from cclust.base import declare
from cclust.result import ConsensusResult
from cclust.base import FAMILIES
from cclust.utilities import resolve
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike
from cclust.base import Utility

_SCALINGS = ("raw", "balanced")
_FUSIONS = ("partitions", "augmented")
_P_DEFAULT = 0.05
#: How a step's candidates run: "batched" (one compiled call per step, _engine.candidate_runs) or
#: "reference" (one assign + lloyd call per candidate, the path it replaced; bit-identical).
_STEP = "batched"
_DELTA_DEFAULT = 0.95


def n_candidates(p=_P_DEFAULT, delta=_DELTA_DEFAULT):
    """nu of Li & Liu (2018, Lemma 1): objects to sample so that, with probability at least ``delta``, the
    best of them is in the top ``p`` of all objects, ``ceil(log(1 - delta) / log(1 - p))``.

    >>> n_candidates(0.05, 0.95)
    59
    """
    p = check_float(p, "p", low=0, high=1, low_open=True, high_open=True)
    delta = check_float(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    # Round before the ceiling so that an exact ratio (e.g. p = delta) is not pushed up by
    # floating-point noise in the logarithms.
    return max(1, math.ceil(round(math.log(1.0 - delta) / math.log(1.0 - p), 9)))


def _step_counts(n_clusters, n_partitions, p, delta):
    """Candidates per step (k = 2..K) and whether the count was asked for explicitly."""
    steps = n_clusters - 1
    if n_partitions is None:
        nu = n_candidates(_P_DEFAULT if p is None else p, _DELTA_DEFAULT if delta is None else delta)
        return [nu] * steps, False
    if p is not None or delta is not None:
        raise ValidationError(
            "pass either n_partitions or (p, delta), not both: n_partitions fixes the number of "
            "candidates per step, which Lemma 1 would otherwise derive from p and delta."
        )
    n_partitions = check_int(n_partitions, "n_partitions", low=steps)
    base, extra = divmod(n_partitions, steps)
    return [base + (1 if s < extra else 0) for s in range(steps)], True


def generation_bytes(n_samples, n_given, counts, *, code_bytes=1, n_jobs=1):
    """Bytes GKCC's generation and fusion hold at their peak for ``n_samples`` objects,
    ``n_given`` given partitions, ``counts`` candidates per step, label codes of ``code_bytes``
    (1 while every partition has at most 127 clusters) and ``n_jobs`` threads.

    The larger of two moments. In the last step: the codes of every partition, given and
    generated, once (the one buffer the steps widen in place; the step's new labels are its
    last columns), the float64 seed costs of the candidates starting together (a batch of
    ``CANDIDATE_SEED_BATCH`` of :mod:`cclust._engine` per thread, no more than the widest step
    has), the float64 costs to the shared centres and the int64 winners (8 bytes per object and
    step each), each
    running candidate's bounds and labels (8 K + 28 bytes per object, one candidate per
    thread), and the memo of passes the candidates share (16 bytes per object and pass, about
    four passes per candidate of the widest step, at most ``CANDIDATE_MEMO_BYTES`` of
    :mod:`cclust._engine`). At the fusion: the codes, a copy of the generated ones (when
    partitions were given) and the winners. Measured against the peak RSS of the defaults
    (K = 8, 413 candidates, 100 given partitions, two threads): 1.02 of it at 10^5 objects
    (212 MiB against 207) and 0.99 at 10^6 (975 MiB against 984;
    ``benchmarks/bench_memory_scale.py``)."""
    n = int(n_samples)
    steps = len(counts)
    generated = int(sum(counts))
    widest = max(counts, default=0)
    running = max(1, min(int(n_jobs), widest))
    codes = int(code_bytes) * (int(n_given) + generated)
    seeds = min(widest, _engine.CANDIDATE_SEED_BATCH * running)
    step = codes + 8 * seeds + 16 * steps + running * (8 * (steps + 1) + 28) + 8
    memo = min(_engine.CANDIDATE_MEMO_BYTES, 16 * n * 4 * widest)
    fusion = codes + (int(code_bytes) * generated if n_given else 0) + 8 * steps + 40
    return max(n * step + memo, n * fusion)


def _check_choice(value, name, choices):
    if value not in choices:
        raise ValidationError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def _distinct_order(row_ids, rng):
    """Objects in a random order with later copies of an already-listed row dropped."""
    order = rng.permutation(row_ids.shape[0])
    _, first = np.unique(row_ids[order], return_index=True)
    return order[np.sort(first)]


#: Rows of the label codes moved or converted at once (a few MB of temporaries).
_BLOCK_ROWS = 1 << 15


class _Space:
    """The augmented space of a step: X (dense) plus the partitions generated so far.

    The label codes of the given and every generated partition are held once, in one buffer
    of the compact dtype of their clusters (uint8 up to 127), sized for the last step: the
    first ``n r`` codes are the C-contiguous (n, r) matrix of the r partitions so far, which
    the engine reads in place, and :meth:`add` widens it in place, so no step holds a second
    copy of the labels.
    """

    def __init__(self, X, given, scaling, n_generated, n_clusters):
        self.X = X
        self.scaling = scaling
        if scaling == "balanced":
            spread = float(((X - X.mean(axis=0)) ** 2).sum(axis=1).mean())
            self.dense_weight = 1.0 / spread if spread > 0 else 1.0
        else:
            self.dense_weight = 1.0
        n = X.shape[0]
        self.n = n
        self.sizes = [] if given is None else [int(k) for k in given.n_clusters]
        self.raw_weights = [] if given is None else list(given.weights * given.n_partitions)
        self.r = len(self.sizes)
        self.dtype = compact_dtype(max(self.sizes + [n_clusters]))
        self._buffer = np.empty(n * (self.r + int(n_generated)), dtype=self.dtype)
        if given is not None:
            codes, to = given.compact_labels(), self.codes()
            for start in range(0, n, _BLOCK_ROWS):
                block = codes[start:start + _BLOCK_ROWS]
                to[start:start + _BLOCK_ROWS] = block if block.dtype == self.dtype else \
                    to_compact(labels_from_codes(block), self.dtype)

    def codes(self):
        """The (n, r) codes of the partitions so far: a view of the buffer, valid until the next
        :meth:`add`."""
        return self._buffer[:self.n * self.r].reshape(self.n, self.r)

    def add(self, labels, k):
        """Append the rows of ``labels`` ((m, n) codes of this space's dtype) as m partitions of
        k clusters. Row x of the codes moves from x r to x (r + m) codes into the buffer, the
        last rows first and a block of rows at a time, so no row is overwritten before it moved."""
        m = labels.shape[0]
        n, r, wide = self.n, self.r, self.r + labels.shape[0]
        for stop in range(n, 0, -_BLOCK_ROWS):
            start = max(0, stop - _BLOCK_ROWS)
            to = self._buffer[start * wide:stop * wide].reshape(stop - start, wide)
            if r:
                to[:, :r] = self._buffer[start * r:stop * r].reshape(stop - start, r).copy()
            to[:, r:] = labels[:, start:stop].T
        self.r = wide
        self.sizes.extend([k] * m)
        self.raw_weights.extend([1.0] * m)

    def engine(self):
        r = self.r
        labels = self.codes() if r else np.empty((self.n, 0), dtype=np.int32)
        offsets = np.zeros(r + 1, dtype=np.int64)
        np.cumsum(np.asarray(self.sizes, dtype=np.int64), out=offsets[1:])
        weights = np.asarray(self.raw_weights, dtype=np.float64)
        if self.scaling == "balanced" and r:
            weights = weights / weights.sum()
        return _engine.MixedSpace(self.X, self.dense_weight, labels, offsets,
                                  np.ascontiguousarray(weights), FAMILIES["uc"], 0.0)


def _kernel():
    from cclust._ext import _kmeans

    return _kmeans


def _candidate_run(space, dense_c, cat_c, max_iter, tol, n_threads):
    """K-means in ``space`` from the given centres: assign to them, then Lloyd passes."""
    start, _ = _engine.assign(space, dense_c, cat_c, n_threads)
    return _engine.lloyd(space, start, dense_c.shape[0], max_iter=max_iter, tol=tol, n_threads=n_threads)


def _row_ids(X, given):
    """Ids of the distinct objects: equal exactly when two rows of X are equal and every given
    partition labels both alike (or neither). The groups of identical label rows come from the
    given ensemble (:meth:`cclust.ensemble.Ensemble.distinct_rows`), so no float copy of its
    labels is made."""
    groups = None if given is None else given.distinct_rows()
    if given is not None and groups is None:       # every label row differs: every object too
        return np.arange(X.shape[0])
    keys = X if given is None else np.column_stack([X, groups[1].astype(np.float64)])
    _, row_ids = np.unique(keys, axis=0, return_inverse=True)
    return row_ids.reshape(-1)


def _check_every_cluster_used(labels, k):
    """The candidates' K-means leaves no cluster empty (the engine's reseed rule); the
    ensembles are built on that, so it is checked rather than assumed."""
    for row in labels:
        if np.bincount(row, minlength=k).min() == 0:
            raise RuntimeError(f"a generated partition of {k} clusters left one empty; please report this input.")


def _greedy(X, given, n_clusters, counts, strict, scaling, max_iter, tol, rng, n_jobs):
    """The generation phase of Algorithm 1; returns a dict of everything a caller reports."""
    n = X.shape[0]
    row_ids = _row_ids(X, given)
    distinct = int(row_ids.max()) + 1
    if distinct < n_clusters:
        raise ValidationError(
            f"X has only {distinct} distinct objects, fewer than n_clusters={n_clusters}; "
            "ask for at most that many clusters."
        )
    if max(counts) > distinct:
        if strict:
            raise ValidationError(
                f"n_partitions asks for {max(counts)} candidates in a step but X has only {distinct} "
                f"distinct objects to sample them from; ask for at most {distinct * (n_clusters - 1)} "
                "partitions."
            )
        counts = [min(c, distinct) for c in counts]

    space = _Space(X, given, scaling, sum(counts), n_clusters)
    workers = check_n_jobs(n_jobs, "n_jobs")
    kernel = _kernel()
    current = space.engine()
    dense_c, cat_c = kernel.centroids(*current._args(), np.zeros(n, dtype=np.int32), 1, workers)
    winners = np.empty((n_clusters - 1, n), dtype=np.int64)
    candidates, objectives, winner_objectives, iterations = [], [], [], []
    step_seconds = []
    pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 and _STEP != "batched" else None
    try:
        for step, k in enumerate(range(2, n_clusters + 1)):
            t0 = time.perf_counter()
            chosen = _distinct_order(row_ids, rng)[:counts[step]]
            marks = np.full(n, -1, dtype=np.int32)
            marks[chosen] = np.arange(chosen.shape[0], dtype=np.int32)
            seed_dense, seed_cat = kernel.centroids(*current._args(), marks, chosen.shape[0], workers)

            def run(j, current=current, dense_c=dense_c, cat_c=cat_c, seed_dense=seed_dense,
                    seed_cat=seed_cat, threads=1 if pool is not None else workers):
                return _candidate_run(current, np.vstack([dense_c, seed_dense[j:j + 1]]),
                                      np.vstack([cat_c, seed_cat[j:j + 1]]), max_iter, tol, threads)

            if _STEP == "batched":
                labels, objs, n_iter = _engine.candidate_runs(current, dense_c, cat_c, seed_dense, seed_cat,
                                                              max_iter=max_iter, tol=tol, n_threads=workers,
                                                              label_dtype=space.dtype)
            else:  # the reference: one assign + lloyd call per candidate
                indices = range(chosen.shape[0])
                runs = list(pool.map(run, indices)) if pool is not None else [run(j) for j in indices]
                objs = np.array([r.objective for r in runs])
                n_iter = np.array([r.n_iter for r in runs], dtype=np.int64)
                labels = np.array([r.labels for r in runs]).astype(space.dtype)
            t1 = time.perf_counter()
            _check_every_cluster_used(labels, k)
            best = int(np.argmin(objs))  # ties: the first sampled
            candidates.append(chosen.astype(np.int64))
            objectives.append(objs)
            iterations.append(n_iter)
            winners[step] = labels[best]
            winner_objectives.append(float(objs[best]))
            del current         # the codes it reads are about to move
            space.add(labels, k)
            del labels
            current = space.engine()
            if k < n_clusters:
                refined = _engine.lloyd(current, winners[step], k, max_iter=max_iter, tol=tol,
                                        n_threads=workers)
                dense_c, cat_c = refined.dense_centers, refined.cat_centers
            step_seconds.append((t1 - t0, time.perf_counter() - t1))
    finally:
        if pool is not None:
            pool.shutdown()
    return {
        "codes": space,
        "n_candidates": np.array(counts, dtype=np.int64),
        "space": current,
        "candidates": candidates,
        "candidate_objectives": objectives,
        "candidate_n_iter": iterations,
        "winners": winners,
        "winner_objectives": np.array(winner_objectives),
        "step_seconds": np.array(step_seconds),
    }


def _check_X(X: npt.ArrayLike, n_clusters: object, name: str = "X") -> tuple[np.ndarray, int]:
    X = check_array_2d(X, name)
    n = X.shape[0]
    if n < 2:
        raise ValidationError(f"{name} must have at least 2 rows to be clustered, got {n}.")
    return X, check_int(n_clusters, "n_clusters", low=2, high=n)


def greedy(X, n_clusters, *, n_partitions=None, p=None, delta=None, scaling="raw", max_iter=100,
           tol=1e-6, random_state=None, n_jobs=None):
    """Greedy basic-partition generation with nu-sampling: the first phase of GKCC (Li & Liu 2018, Alg. 1).

    For k = 2..K: sample nu distinct objects, run K-means (squared Euclidean in the augmented
    space) from the k-1 centres of the previous step plus each sampled object, keep the nu
    partitions, append their one-hot blocks to the space and take the centres of the winner
    (lowest objective) after K-means in the augmented space as the next step's k centres.
    Li & Liu (2018, sec. 5, Table 5) feed these partitions to KCC in place of RPS.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        K, in [2, n_samples]: the partitions have 2, 3, ..., K clusters.
    n_partitions : int, default=None
        None: the natural count nu (K - 1), nu from ``p`` and ``delta`` (Li & Liu 2018, Lemma 1; 59 per
        step by default). An int (at least K - 1) fixes the total instead and spreads it over
        the K - 1 steps as evenly as possible (earlier steps take the remainder); it cannot be
        combined with ``p``/``delta``.
    p, delta : float in (0, 1), default=None (0.05 and 0.95)
        Lemma 1: nu = ceil(log(1 - delta) / log(1 - p)) candidates per step.
    scaling : {"raw", "balanced"}, default="raw"
        How X and the one-hot blocks are weighed against each other in the augmented space.
        ``"raw"`` is Li & Liu's (2018) literal concatenation [X S_b]: X as given, every partition adding
        ||b_i(x) - m_i||^2 (at most 2) to a squared distance. ``"balanced"`` divides X by its
        root mean squared distance to the data centroid and gives the partitions weights
        summing to one, so features and partitions count alike whatever the units of X. See
        :func:`gkcc` for the measurements behind the default.
    max_iter : int, default=100
        Lloyd passes per K-means run.
    tol : float, default=1e-6
        A run stops when its labels no longer change or its objective falls by less than
        ``tol`` relatively.
    random_state : int, Generator or None
        Drives the sampling only; K-means itself is deterministic.
    n_jobs : int, default=None
        Threads over the candidates of a step (None: every core,
        :func:`cclust.validation.default_threads`; -1: every core whatever the environment says). The ensemble is identical
        for any value.

    Returns
    -------
    Ensemble of shape (n_samples, nu (K - 1)) with equal weights; column ``j`` belongs to step
    ``k = 2 + j // nu`` (for the natural count).

    Notes
    -----
    Candidates are distinct objects (rows of X) sampled without replacement. If X has fewer
    distinct objects than nu, every step takes all of them and the natural count shrinks to
    (distinct objects) x (K - 1) partitions (``gkcc`` reports the per-step count in
    ``extras["n_candidates"]``); an explicit ``n_partitions`` that cannot be met this way
    raises ``ValidationError``. This is said here and in the result rather than by a warning:
    small inputs such as the conformance kit's 36 objects would warn on every default call.

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> greedy(X, 3, random_state=0).shape
    (150, 118)
    >>> greedy(X, 3, n_partitions=10, random_state=0).shape
    (150, 10)
    """
    X, n_clusters = _check_X(X, n_clusters)
    counts, strict = _step_counts(n_clusters, n_partitions, p, delta)
    scaling = _check_choice(scaling, "scaling", _SCALINGS)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    rng = check_random_state(random_state)
    out = _greedy(X, None, n_clusters, counts, strict, scaling, max_iter, tol, rng, n_jobs)
    return Ensemble._of_codes(out["codes"].codes(), out["codes"].sizes)


@declare(requires_X=True, handles_missing=True)
def gkcc(ensemble: EnsembleLike | None, n_clusters: int, *, X: npt.ArrayLike | None = None,
         n_partitions: int | None = None, p: float | None = None, delta: float | None = None, scaling: str = "raw",
         fusion: str = "partitions", utility: str | Utility = "uc", max_iter: int = 100, tol: float = 1e-6,
         random_state: RandomStateLike = None, n_jobs: int | None = None,
         max_bytes: int | None = None) -> ConsensusResult:
    """Greedy optimisation of K-means-based consensus clustering (GKCC; Li & Liu 2018, Algorithm 1).

    Generates nu (K - 1) basic partitions greedily (see :func:`greedy`) and fuses them by KCC
    initialised from the winner of the last step (k = K), so no random initialisation is left.

    Parameters
    ----------
    ensemble : Ensemble, array-like of shape (n_samples, n_partitions) or None
        Basic partitions already at hand, or None for Li & Liu's (2018) Algorithm 1 exactly (X alone).
        Given partitions join the space from the start (their one-hot blocks beside X, missing
        labels charged nothing) and the final fusion beside the generated ones, each weighing
        as much as one generated partition on average (their relative weights kept).
    n_clusters : int
        K, in [2, n_samples].
    X : array-like of shape (n_samples, n_features)
        The original features (required).
    n_partitions, p, delta, scaling, max_iter, tol
        As in :func:`greedy`.
    fusion : {"partitions", "augmented"}, default="partitions"
        Where the final K-means runs. ``"partitions"``: KCC on the binary matrix B of the
        partitions alone (Li & Liu 2018, Algorithm 1, "Build the binary matrix B of Pi; run K-means ...",
        and the objective that Fig. 3 of Li & Liu (2018) compares). ``"augmented"``: the last augmented space
        [X B] (the other reading of "Run K-means on X" in Algorithm 1).
    utility : str or Utility, default="uc"
        KCC utility of the ``"partitions"`` fusion; Li & Liu (2018) run plain K-means on B, i.e. ``"uc"``.
        The generation always uses the squared Euclidean distance (Uc) of the augmented space.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Threads over the candidates of a step and of the compiled passes; the result is
        identical for any value.
    max_bytes : int, default=None
        Memory budget (:func:`cclust.validation.require_memory`; None: ``CCLUST_MEMORY_BUDGET``
        or 2 GiB). The generated partitions (nu (K - 1) of them, 413 by default at K = 8) are
        held beside the given ones as one buffer of compact label codes (one byte a label while
        every partition has at most 127 clusters); with the seed costs of a step, the
        candidates' bounds and the memo of their shared passes they take about
        ``generation_bytes`` of this module, asked before anything is generated: about 1.0 GB
        at 10^6 objects, 100 given partitions, K = 8 and two threads.

    Returns
    -------
    ConsensusResult
        ``objective`` is Gamma, the consensus utility of the labels on the fused partitions
        (higher is better). ``extras``: ``ensemble`` (the generated partitions, an Ensemble),
        ``winners`` ((K-1, n) labels of each step's winner), ``winner_objectives`` and
        ``candidate_objectives`` (K-means objectives in each step's space), ``candidates``
        (sampled objects per step), ``n_candidates`` (how many per step: nu, or fewer when X
        has fewer distinct objects), ``candidate_n_iter`` (Lloyd label updates per candidate),
        ``kmeans_objective`` and ``objective_trace`` of the final K-means, ``utility``,
        ``scaling``, ``fusion`` and ``phase_seconds`` (wall time of the candidates and of the
        refinement per step, and of the fusion).

    Notes
    -----
    Choices where Algorithm 1 is open, measured with ``benchmarks/reproduce_gkcc.py`` on the
    shared UCI sets (docs/reproduction.md):

    * Scaling of X against the one-hot blocks. Li & Liu (2018) concatenate them as they are (``"raw"``),
      which makes the balance depend on the units of X (on pendigits, features up to 100, X
      weighs more; on iris the 59 partitions of a step outweigh X). The scale-free
      ``"balanced"`` alternative was measured against it: over the 10 shared sets (5 seeds on
      the 8 small ones, 1 on pendigits and satimage) raw/balanced gave mean Rn 0.409/0.378
      and NMI 0.476/0.460 (raw ahead on 8 sets, level on 2; satimage 0.541/0.345), so the
      paper's literal reading is the default.
    * Space of the final K-means: the partitions (B), as Fig. 3 of Li & Liu (2018) (objective of K-means on
      B) reads it. ``"augmented"`` ([X B]) gave identical results on 4 of the 10 sets and a
      lower mean Rn (0.402 against 0.409 with raw scaling; wine and breast_tissue drop,
      pendigits gains), so it is kept only for comparison.
    * The next step's centres are those of K-means run in the augmented space from the
      winner's labels (Algorithm 1's "Run K-means on X with the initial partition ... return the
      new centers"), not merely the winner's centroids.
    * Candidates are distinct objects (rows of X), sampled without replacement; with fewer
      distinct objects than nu every one is used (``extras["n_candidates"]`` says so).

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> from cclust.metrics import ari
    >>> X, y = load_iris()
    >>> res = gkcc(None, 3, X=X, random_state=0)
    >>> res.extras["ensemble"].shape
    (150, 118)
    >>> round(ari(y, res.labels), 2) > 0.5
    True
    """
    if X is None:
        raise ValidationError("gkcc needs the original features: pass X= (array of shape (n_samples, n_features)).")
    X, n_clusters = _check_X(X, n_clusters)
    n = X.shape[0]
    if ensemble is not None:
        ensemble = as_ensemble(ensemble)
        if ensemble.n_samples != n:
            raise ValidationError(
                f"ensemble and X must describe the same objects: got {ensemble.n_samples} and {n} rows."
            )
    counts, strict = _step_counts(n_clusters, n_partitions, p, delta)
    scaling = _check_choice(scaling, "scaling", _SCALINGS)
    fusion = _check_choice(fusion, "fusion", _FUSIONS)
    r_given = 0 if ensemble is None else ensemble.n_partitions
    n_threads = check_n_jobs(n_jobs, "n_jobs")
    widest_k = max([n_clusters] + ([] if ensemble is None else ensemble.n_clusters.tolist()))
    require_memory(generation_bytes(n, r_given, counts, code_bytes=compact_dtype(widest_k).itemsize,
                                    n_jobs=n_threads),
                   f"gkcc's {sum(counts)} generated partitions of {n} objects beside {r_given} given ones",
                   "generate fewer candidates (n_partitions=, or a larger p), or fuse the given partitions "
                   "with kcc", max_bytes)
    util = resolve(utility)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    rng = check_random_state(random_state)

    out = _greedy(X, ensemble, n_clusters, counts, strict, scaling, max_iter, tol, rng, n_threads)
    codes = out.pop("codes")
    augmented = out.pop("space")    # the generation's space: X and the same codes
    # The fused partitions are the space's own codes, the given ones first (no copy).
    if ensemble is None:
        fused = Ensemble._of_codes(codes.codes(), codes.sizes)
    else:
        weights = np.concatenate([np.asarray(ensemble.weights) * r_given, np.ones(codes.r - r_given)])
        fused = Ensemble._of_codes(codes.codes(), codes.sizes, weights)
    start = out["winners"][-1]

    t0 = time.perf_counter()
    if fusion == "partitions":
        del augmented
        space = _engine.MixedSpace.categorical(fused, util)
    else:
        space = augmented
    run = _engine.lloyd(space, start, n_clusters, max_iter=max_iter, tol=tol, n_threads=n_threads)
    gamma = util.consensus_value(fused, run.labels, n_clusters, n_jobs=n_threads)
    fusion_seconds = time.perf_counter() - t0
    # The generated partitions alone: the fused ensemble itself, or a copy of their codes.
    generated = fused if ensemble is None else \
        Ensemble._of_codes(fused.compact_labels()[:, r_given:], codes.sizes[r_given:])
    del fused, codes
    if not run.converged:
        from cclust.errors import ConvergenceWarning

        warnings.warn(f"gkcc's final K-means stopped at max_iter={max_iter} before converging; raise max_iter.",
                      ConvergenceWarning, stacklevel=2)
    return ConsensusResult.from_labels(
        run.labels,
        objective=gamma,
        objective_name="Gamma (consensus utility, higher is better)",
        n_iter=run.n_iter,
        converged=run.converged,
        method="gkcc",
        extras={
            "ensemble": generated,
            "winners": out["winners"],
            "winner_objectives": out["winner_objectives"],
            "candidate_objectives": out["candidate_objectives"],
            "candidates": out["candidates"],
            "n_candidates": out["n_candidates"],
            "candidate_n_iter": out["candidate_n_iter"],
            "kmeans_objective": run.objective,
            "objective_trace": run.trace,
            "utility": util.name if util.p is None else f"{util.name}(p={util.p:g})",
            "scaling": scaling,
            "fusion": fusion,
            "phase_seconds": {"candidates": out["step_seconds"][:, 0],
                              "refinement": out["step_seconds"][:, 1],
                              "fusion": fusion_seconds},
        },
    )
