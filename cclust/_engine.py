"""Private driver over the compiled mixed-rows K-means engine (cclust._ext._kmeans).

A ``MixedSpace`` describes the rows the engine clusters: an optional dense block (real
features, squared Euclidean, times ``dense_weight``) and optional categorical blocks (basic
partitions, never expanded to one-hot) with per-partition weights and a KCC distance family.
KCC, the k-means generators, GKCC, voting's seeding and WOEC's k-means run through the
functions here, so seeding, empty clusters, convergence and restarts behave the same
everywhere. Callers validate; this module assumes clean arrays.

The Lloyd loop (undo on a rise, the tolerance test, reseeding of empty clusters) and k-means++
(Arthur & Vassilvitskii 2007) run inside the compiled ``lloyd`` and ``kmeanspp``: a loop in
Python would add about 6-50 us per pass, which is 40% of the k-means generator's time on small
data (benchmarks/bench_driver_overhead.py). The compiled module also exports the pieces those
two are made of (one Lloyd pass with its per-chunk partials and tally change, a tally, centres
from a tally, the reseed pick, a k-means++ candidate pass and draw, the stop rule), which
:mod:`cclust.dask` maps over row blocks; this module's :func:`random_seeds` and
:func:`kmeanspp_draws` give both paths the same random numbers.
"""
from dataclasses import dataclass

import numpy as np

from cclust._codes import labels_from_codes


@dataclass(frozen=True)
class MixedSpace:
    X: np.ndarray          # (n, d) float64 C-contiguous; (n, 0) when there is no dense block
    dense_weight: float
    labels: np.ndarray     # (n, r) C-contiguous codes: int32 (-1 = missing), or uint16 / uint8 (the
                           # type's largest value = missing, Ensemble.compact_labels); (n, 0) when none
    offsets: np.ndarray    # (r + 1,) int64
    weights: np.ndarray    # (r,) float64, the effective per-partition weights
    family: int = 0        # distance code (cclust.utilities.FAMILIES)
    p: float = 0.0
    object_weights: np.ndarray | None = None  # (n,) float64 > 0: weighted centres and objective
    row_scale: np.ndarray | None = None       # (n,) float64 > 0: object x is s_x times its one-hot row

    @property
    def n(self):
        return self.X.shape[0] if self.X.shape[1] else self.labels.shape[0]

    @classmethod
    def dense(cls, X):
        n = X.shape[0]
        return cls(np.ascontiguousarray(X, dtype=np.float64), 1.0, np.empty((n, 0), dtype=np.int32),
                   np.zeros(1, dtype=np.int64), np.empty(0), 0, 0.0)

    @classmethod
    def categorical(cls, ensemble, utility, X=None, dense_weight=0.0):
        n = ensemble.n_samples
        X = np.empty((n, 0)) if X is None else np.ascontiguousarray(X, dtype=np.float64)
        return cls(X, float(dense_weight), ensemble.compact_labels(),
                   np.ascontiguousarray(ensemble.offsets, dtype=np.int64),
                   np.ascontiguousarray(utility.effective_weights(ensemble), dtype=np.float64),
                   utility.code, utility.exponent)

    def _args(self):
        return (self.X, self.dense_weight, self.labels, self.offsets, self.weights, self.family, self.p)

    def _weighting(self):
        """The keywords of the kernels that take weighted objects (lloyd, assign, centroids)."""
        return {"object_weights": self.object_weights, "row_scale": self.row_scale}

    def with_weights(self, object_weights=None, row_scale=None):
        """The same rows with object weights and/or row scales (see the engine's header)."""
        def as_vector(v):
            return None if v is None else np.ascontiguousarray(v, dtype=np.float64)
        return MixedSpace(*self._args(), as_vector(object_weights), as_vector(row_scale))


@dataclass(frozen=True)
class LloydRun:
    labels: np.ndarray
    objective: float
    trace: np.ndarray
    n_iter: int
    converged: bool
    dense_centers: np.ndarray
    cat_centers: np.ndarray


def _kernel():
    from cclust._ext import _kmeans

    return _kmeans


_CHUNK = 4096  # the engine's kChunk (_kmeans.CHUNK; kept here so importing this module loads no extension)


def useful_threads(n_samples, n_threads):
    """Threads worth starting: the engine splits work in chunks of 4096 objects, so a problem of
    fewer than two chunks runs on one thread and pays for no parallel region at all."""
    return max(1, min(int(n_threads), -(-int(n_samples) // _CHUNK)))


def seed_objects(space, n_clusters, init, rng, n_threads, n_trials=None):
    """K distinct object indices: uniformly at random, or by k-means++ D^2 sampling.

    ``n_trials`` candidates are drawn per centre and the one lowering the potential most is
    kept: 1 is Arthur & Vassilvitskii's k-means++; None means scikit-learn's greedy variant,
    ``2 + log(K)``. Every random number comes from ``rng`` (NumPy), so the seeds are the same
    on any machine. k-means++ reads the unweighted rows: object weights and row scales play no
    part in the seeding.
    """
    n = space.n
    n_threads = useful_threads(n, n_threads)
    if init == "random":
        return random_seeds(rng, n, n_clusters)
    first, uniforms = kmeanspp_draws(rng, n, n_clusters, n_trials)
    return _kernel().kmeanspp(*space._args(), n_clusters, first, uniforms, n_threads)


def random_seeds(rng, n, n_clusters):
    """K distinct objects drawn uniformly, sorted (random init; shared with cclust.dask)."""
    return np.sort(rng.choice(n, size=n_clusters, replace=False)).astype(np.int64)


def kmeanspp_draws(rng, n, n_clusters, n_trials=None):
    """The random numbers of one k-means++ seeding: the first seed and the (K - 1, n_trials)
    uniforms. Shared with the Dask path (cclust.dask) so both draw exactly the same."""
    if n_trials is None:
        n_trials = 2 + int(np.log(n_clusters))
    first = int(rng.integers(n))
    uniforms = np.ascontiguousarray(rng.random((max(n_clusters - 1, 0), n_trials)))
    return first, uniforms


def labels_from_seeds(space, seeds, n_threads):
    """Assign every object to the nearest seed object, each seed being its cluster's centroid.

    A seed's centroid is its own row: its features and the one-hot of its labels. A seed
    missing from a partition gets that partition's overall label distribution as its centroid
    block (the engine's rule for a cluster with no labelled member), which needs a counting
    pass; complete seeds do not.
    """
    kernel = _kernel()
    n_threads = useful_threads(space.n, n_threads)
    seed_labels = labels_from_codes(space.labels[seeds])
    if (seed_labels < 0).any():
        marks = np.full(space.n, -1, dtype=np.int32)
        marks[seeds] = np.arange(seeds.shape[0], dtype=np.int32)
        dense_centers, cat_centers = kernel.centroids(*space._args(), marks, seeds.shape[0], n_threads,
                                                      **space._weighting())
    else:
        dense_centers = np.ascontiguousarray(space.X[seeds])
        cat_centers = np.zeros((seeds.shape[0], int(space.offsets[-1])))
        rows = np.repeat(np.arange(seeds.shape[0]), seed_labels.shape[1])
        cat_centers[rows, (space.offsets[:-1][None, :] + seed_labels).reshape(-1)] = 1.0
        if space.row_scale is not None:
            cat_centers *= space.row_scale[seeds][:, None]
    labels, _, _ = kernel.assign(*space._args(), dense_centers, cat_centers, n_threads, **space._weighting())
    return labels


def lloyd(space, initial_labels, n_clusters, *, max_iter, tol, n_threads):
    """Lloyd passes from ``initial_labels`` until stable (see the engine's rules)."""
    n_threads = useful_threads(space.n, n_threads)
    labels, trace, n_iter, converged, objective, dense_c, cat_c = _kernel().lloyd(
        *space._args(), np.ascontiguousarray(initial_labels, dtype=np.int32), n_clusters,
        max_iter, tol, n_threads, **space._weighting())
    return LloydRun(labels.astype(np.int64), float(objective), trace, int(n_iter), bool(converged),
                    dense_c, cat_c)


def dense_lloyd(X, seeds, max_iter, n_threads, tol=0.0):
    """:func:`labels_from_seeds` then :func:`lloyd` (same ``tol``) on dense, unweighted rows, bit
    for bit (labels, centres, objective, n_iter), by the engine's bounded dense Lloyd
    (``dense_lloyd_bounded``: the bounds of Hamerly 2010 with a rounding slack skip the costs
    that cannot change an assignment). The transfer cut's, U-SPEC's and the k-means
    generators' k-means."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    labels, n_iter, converged, objective, centres, _ = _kernel().dense_lloyd_bounded(
        X, np.ascontiguousarray(seeds, dtype=np.int64), max_iter, float(tol),
        useful_threads(X.shape[0], n_threads))
    return LloydRun(labels.astype(np.int64), objective, None, n_iter, converged, centres,
                    np.empty((centres.shape[0], 0)))


def assign(space, dense_centers, cat_centers, n_threads):
    """Nearest-centre labels and the objective for given centres."""
    n_threads = useful_threads(space.n, n_threads)
    labels, _, objective = _kernel().assign(*space._args(), np.ascontiguousarray(dense_centers),
                                            np.ascontiguousarray(cat_centers), n_threads,
                                            **space._weighting())
    return labels.astype(np.int64), float(objective)


def label_table(labels, offsets, assignment, n_clusters, n_threads):
    """(n_clusters, offsets[-1]) int64 counts of ``assignment`` (-1 = skip an object) against every
    label of every partition: the engine's own tally, so K-means passes, the voting methods and
    :meth:`cclust.ensemble.Ensemble.contingency` count the table with one kernel. Callers
    validate ``assignment``; partition labels are checked by the kernel."""
    n, r = labels.shape
    counts, _ = _kernel().tally(np.empty((n, 0)), 0.0, labels, offsets, np.ones(r), 0, 0.0,
                                assignment, int(n_clusters), useful_threads(n, n_threads))
    return counts[:-1]


def label_table_bytes(n_samples, n_partitions, n_labels, n_clusters, n_threads):
    """Bytes :func:`label_table` holds at its peak for ``n_labels`` = sum K_i: the engine's
    (n_clusters + 1) x (sum K_i + r) int64 tally (a slot for every label and one per partition
    for a missing label) once per thread it starts and once reduced, and the returned table of
    about that size. Measured: (2 + threads) such tables, also with hundreds of clusters."""
    table = (int(n_clusters) + 1) * (int(n_labels) + int(n_partitions)) * 8
    return (2 + useful_threads(n_samples, n_threads)) * table


def reseed(labels, costs, n_clusters):
    """The engine's empty-cluster rule, for iterative methods whose passes are not the engine's
    (IVC, IPVC, IPC, relabel-and-vote, em-mixture's start): each empty cluster, in increasing
    index, takes the object costliest to its own cluster (``costs``; ties: lowest index) among
    objects whose cluster keeps another member. The compiled ``lloyd`` runs the same function."""
    if np.bincount(labels, minlength=n_clusters).all():
        return labels
    return _kernel().reseed(np.ascontiguousarray(labels, dtype=np.int32),
                            np.ascontiguousarray(costs, dtype=np.float64), n_clusters).astype(np.int64)


# ==== GKCC's candidate runs of one greedy step ==================================================

#: Memory for the passes one GKCC step shares between its candidates (16 bytes per object and
#: pass; when it is full the oldest pass is dropped, which only costs time).
CANDIDATE_MEMO_BYTES = 128 * 2 ** 20
#: Candidates whose seed centres' cost columns (8 bytes per object each) one engine pass computes
#: together; a batch is dropped once its candidates have read their columns, so a step holds at
#: most one batch per thread instead of a column per candidate. Two centres share a lane of the
#: lookups (kLane), so an even batch costs the lookups of one pass over every seed.
CANDIDATE_SEED_BATCH = 4


def candidate_runs(space, shared_dense, shared_cat, seed_dense, seed_cat, *, max_iter, tol, n_threads,
                   memo_bytes=None, stats=False, label_dtype=np.int32, seed_batch=None):
    """K-means runs from the shared centres plus one seed centre each (GKCC's candidates of a
    step): candidate j is ``assign`` to ``[shared; seed j]`` followed by ``lloyd``, bit for bit,
    in one compiled call (candidates in parallel, one thread each; only the costs a pass needs are
    computed and a pass that another candidate already ran is looked up, see kmeans.hpp; the seed
    centres' costs are computed ``seed_batch`` candidates at a time, ``CANDIDATE_SEED_BATCH`` by
    default, which changes nothing in the result). Squared
    Euclidean rows (uc) only. The space's label codes are read in place, whatever their width.
    Returns ``(labels (n_candidates, n), objectives, n_iter)``, the labels as codes of
    ``label_dtype`` (uint8, uint16 or int32, wide enough for the shared centres plus one) and,
    with ``stats``, the counters (costs computed, costs skipped by a bound, passes, passes from
    the memo, costs of one full pass)."""
    if space.object_weights is not None or space.row_scale is not None:
        raise ValueError("candidate_runs takes unweighted rows only")
    labels, objectives, n_iter, counters = _kernel().candidate_runs(
        *space._args(), np.ascontiguousarray(shared_dense), np.ascontiguousarray(shared_cat),
        np.ascontiguousarray(seed_dense), np.ascontiguousarray(seed_cat), int(max_iter), float(tol),
        int(n_threads), int(CANDIDATE_MEMO_BYTES if memo_bytes is None else memo_bytes), label_dtype,
        int(CANDIDATE_SEED_BATCH if seed_batch is None else seed_batch))
    return (labels, objectives, n_iter, counters) if stats else (labels, objectives, n_iter)


def nearest_dense(X, centres, n_threads=1):
    """Each row's nearest centre (int64 labels): ``assign(MixedSpace.dense(X), centres, ...)``'s
    labels bit for bit, faster.

    The compiled ``nearest_centres`` (cclust._ext._distances) ranks the centres of a row by
    ``||c||^2 - 2 x.c`` accumulated feature by feature for many centres at once, instead of the
    engine's sums of ``(x - c)^2`` one centre at a time, and decides a row whose second-nearest
    centre lies within that ranking's rounding of the nearest on the engine's own sums (lowest
    index first among equal costs), so near ties go the engine's way. The same for any
    ``n_threads``.
    """
    from cclust._ext import _distances

    X = np.ascontiguousarray(X, dtype=np.float64)
    centres = np.ascontiguousarray(centres, dtype=np.float64)
    labels = _distances.nearest_centres(X, centres, useful_threads(X.shape[0], n_threads))
    return labels.astype(np.int64)
