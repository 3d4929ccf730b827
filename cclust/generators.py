"""Basic-partition generators: k-means run many times with randomised parameters or data.

Every generator has the signature ``gen(X, n_clusters, *, n_partitions=100, random_state=None,
n_jobs=None, **params) -> Ensemble``. Partition j draws all its randomness from the j-th child
of one ``numpy.random.SeedSequence``, so the ensemble is the same for any ``n_jobs``. The
k-means runs are the compiled mixed-rows engine with a dense block only (the same Lloyd passes,
empty-cluster rule and convergence test as KCC), one initialisation each (RPS; Wu et al. 2015).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import numpy.typing as npt

from cclust import _engine
from cclust._progress import progress
from cclust.validation import (check_array_2d, check_float, check_int, check_k_range, check_n_jobs,
                               check_partition_request, spawn_seed_sequences)
from cclust.ensemble import Ensemble
from cclust.validation import RandomStateLike
from cclust.errors import ValidationError

if TYPE_CHECKING:
    from cclust.dask import DaskEnsemble
    from cclust.soft import SoftEnsemble

_INITS = ("k-means++", "random")


def _check_common(X, n_clusters, n_partitions, init, max_iter):
    X = _check_X(X)
    n = X.shape[0]
    # a dask array's values are read per task, not here
    n_clusters, n_partitions = check_partition_request(X, n_clusters, n_partitions,
                                                       distinct_rows=not _is_dask_array(X))
    if init not in _INITS:
        raise ValidationError(f"init must be one of {list(_INITS)}, got {init!r}.")
    check_int(max_iter, "max_iter", low=1)
    return X, n, n_clusters, n_partitions


def _kmeans_labels(X, k, rng, init, max_iter, tol, n_threads=1, kmeanspp_trials=None):
    """One k-means run (one initialisation) on X; returns int64 labels and the centres. The
    engine's results do not depend on ``n_threads``; generators run partitions in parallel, each
    on one thread.

    The run is the engine's bounded dense Lloyd (:func:`cclust._engine.dense_lloyd`), which
    gives the labels of ``labels_from_seeds`` + ``lloyd`` bit for bit and skips the distances
    that Hamerly's (2010) bounds show cannot change an assignment: 2-4 times faster at K_i in
    the tens to hundreds, no slower at small K_i (benchmarks/bench_default_pipeline.py)."""
    space = _engine.MixedSpace.dense(X)
    seeds = _engine.seed_objects(space, k, init, rng, n_threads, n_trials=kmeanspp_trials)
    run = _engine.dense_lloyd(space.X, seeds, max_iter, n_threads, tol=tol)
    return run.labels, run.dense_centers


def _kmeans_on_rows(X, rows, k, rng, init, max_iter, tol, kmeanspp_trials=None):
    """k-means on the rows ``X[rows]`` (repeats allowed), then every object of X to its nearest
    centre (:func:`cclust._engine.nearest_dense`: the engine's assignment, bit for bit, faster)."""
    _, centres = _kmeans_labels(np.ascontiguousarray(X[rows]), k, rng, init, max_iter, tol,
                                kmeanspp_trials=kmeanspp_trials)
    return _engine.nearest_dense(X, centres)


def seeded_ensemble(one_partition: Callable[[Any, np.random.Generator], Any], X: Any,
                    random_state: RandomStateLike, n_partitions: int, n_jobs: int | None, *, verbose: int = 0,
                    desc: str = "partitions", backend: str | None = None, client: Any = None,
                    chunks: int | None = None) -> Ensemble | DaskEnsemble:
    """Ensemble of ``one_partition(X, rng)`` over per-partition generators: the seeding every
    generator shares (the k-means family here, ``cclust.clusterers``, U-SPEC).

    Partition j always gets the j-th child seed and results are collected in order, so the
    ensemble does not depend on the number of threads (the engine releases the GIL) nor on the
    backend: with ``backend="dask"`` each partition is one Dask task drawing from the same child
    seed (see :func:`cclust.dask.generate_partitions`).
    """
    seqs = spawn_seed_sequences(random_state, n_partitions)
    if _wants_dask(X, backend, client):
        from cclust import dask as cdask

        return cdask.generate_partitions(one_partition, X, seqs, client=client, chunks=chunks,
                                         verbose=verbose, desc=desc)
    if chunks is not None:
        raise ValidationError("chunks only applies to backend='dask' (or a client / dask array X); "
                              f"got chunks={chunks!r} with the threaded backend.")
    return Ensemble._from_codes(np.column_stack(_per_partition(one_partition, X, seqs, n_jobs, verbose, desc)))


def _per_partition(one_partition, X, seqs, n_jobs, verbose, desc):
    """``[one_partition(X, rng_j)]`` for the child seeds, in order, on ``n_jobs`` threads."""
    workers = min(check_n_jobs(n_jobs, "n_jobs"), len(seqs))
    with progress(total=len(seqs), desc=desc, verbose=verbose) as bar:
        def run(seq):
            out = one_partition(X, np.random.default_rng(seq))
            bar.update(1)  # thread-safe (see cclust._progress)
            return out

        if workers <= 1:
            return [run(seq) for seq in seqs]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(run, seqs))


_BACKENDS = (None, "threads", "dask")


def _is_dask_array(X):
    return type(X).__module__.startswith("dask.array") and hasattr(X, "chunks")


def _wants_dask(X, backend, client):
    if backend not in _BACKENDS:
        raise ValidationError(f"backend must be one of {list(_BACKENDS)}, got {backend!r}.")
    if backend == "threads" and (client is not None or _is_dask_array(X)):
        raise ValidationError("backend='threads' cannot use a Dask client or a dask array X; "
                              "pass backend='dask' (or None) instead.")
    return backend == "dask" or client is not None or _is_dask_array(X)


def _check_X(X):
    """check_array_2d, except that a dask array is checked for shape now and values per task."""
    if _is_dask_array(X):
        from cclust import dask as cdask

        return cdask.check_dask_X(X)
    return check_array_2d(X, "X")


#: Above this many objects :func:`kmeans`'s ``fit_rows="auto"`` fits each partition on FIT_ROWS
#: objects drawn at random, the rest assigned to the nearest centre (docs/benchmarks.md, "select_k's
#: default at scale, and SC3s"). No shared real data set is this large.
FIT_ROWS_FROM = 20000
FIT_ROWS = 10000


def _check_fit_rows(fit_rows: int | str | None, n: int, high: int) -> int | None:
    """``fit_rows`` of :func:`kmeans` as an int or None, "auto" resolved for n objects and the
    largest K_i ``high``."""
    if isinstance(fit_rows, str):
        if fit_rows != "auto":
            raise ValidationError(f"fit_rows must be an int >= 1, 'auto' or None, got {fit_rows!r}.")
        return FIT_ROWS if n > FIT_ROWS_FROM and high <= FIT_ROWS else None
    return check_int(fit_rows, "fit_rows", low=1, allow_none=True)


#: Top of the default K_i range of :func:`kmeans`: ceil(sqrt(n)), at most this (Liu et al. 2017).
K_RANGE_CAP = 50

#: :func:`kmeans` parameters for k-means run to convergence from a greedy k-means++ start (its
#: default before it became 5 iterations), for callers that use it as the clusterer at K rather
#: than as a source of basic partitions.
CONVERGED_KMEANS = {"max_iter": 100, "kmeanspp_trials": None}


def kmeans(X: Any, n_clusters: int, *, n_partitions: int = 100, k_range: tuple[int, int] | None = None,
           init: str = "k-means++", max_iter: int = 5, tol: float = 1e-4, kmeanspp_trials: int | None = None,
           fit_rows: int | str | None = "auto", random_state: RandomStateLike = None, n_jobs: int | None = None,
           verbose: int = 0, backend: str | None = None, client: Any = None,
           chunks: int | None = None) -> Ensemble | DaskEnsemble:
    """Random-parameter selection (RPS): k-means with a random number of clusters per partition.

    Each partition runs k-means once (``n_init=1``, as in Wu et al. 2015 and Li & Liu 2018, sec. 5) with K_i
    drawn uniformly from ``k_range``, from a k-means++ start (Arthur & Vassilvitskii 2007), for at
    most ``max_iter`` Lloyd iterations.

    A basic partition needs diversity more than a converged k-means, so the defaults are the
    cheap ones: 5 Lloyd iterations (as U-SENC's own generation, Huang et al. 2020) and K_i up
    to ``min(ceil(sqrt(n)), 50)`` (the range of Liu et al. 2017). At n = 50000 they cut the
    cost of the partitions more than 10 times with the same consensus quality
    (docs/benchmarks.md, the section on the default pipeline); below n = 2500 the range
    is the KCC authors' ``[K, sqrt(n)]``. ``max_iter=100`` (and ``k_range=(K, ceil(sqrt(n)))``
    above n = 2,500) gives the former defaults' ensembles exactly.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        K of the consensus the ensemble is meant for; sets the default ``k_range``.
    n_partitions : int, default=100
    k_range : (int, int), default=None
        Inclusive range of K_i. Default ``(K, max(K, min(ceil(sqrt(n)), 50)))``: the KCC
        authors' ``[K, sqrt(n)]`` capped at 50 as in Liu et al. (2017); Wu et al.'s (2015)
        experiments use ``(2, 2K)``.
    init : {"k-means++", "random"}, default="k-means++"
    max_iter : int, default=5
        Lloyd iterations per partition at most (100 was the default before; a run also stops
        when its labels no longer change or by ``tol``).
    tol : float, default=1e-4
        Relative objective improvement below which a run stops.
    kmeanspp_trials : int or None, default=None
        Candidates drawn per centre by ``init="k-means++"``, the one lowering the potential most
        being kept (as in :func:`cclust.consensus_functions.kcc.kcc`). None: scikit-learn's
        greedy variant (2 + log K_i candidates, each a pass over X); 1: Arthur & Vassilvitskii's
        (2007) k-means++, 3 times cheaper, but on dermatology (K_i in [2, 2K]) its partitions
        lower KCC's ARI from 0.89 to 0.81 (10 seeds).
    fit_rows : int, "auto" or None, default="auto"
        Fit each partition's k-means on at most this many objects, drawn uniformly without
        replacement (a new draw per partition), then give every object to the nearest of its
        centres, as :func:`subsample` does. The seeding and the Lloyd iterations then cost
        ``fit_rows`` objects instead of n, and one nearest-centre pass covers the rest. None (or
        a value of at least n): fit on every object. ``"auto"``: every object up to
        ``FIT_ROWS_FROM`` = 20000 objects, a sample of ``FIT_ROWS`` = 10000 above (or every
        object when the largest K_i exceeds 10000): at 100000 objects that cuts the ensemble's
        time several times with the same consensus ARI on the blobs of docs/benchmarks.md
        ("select_k's default at scale, and SC3s"). Below 20000 objects ``"auto"`` is None, so
        the ensembles there are those of every earlier version; ``fit_rows=None`` gives the
        former ensembles above it too. :class:`cclust.ConsensusClustering`, :func:`cclust.select_k`
        and ``cclust run`` all use this default.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Partitions computed in parallel threads; None uses every core
        (:func:`cclust.validation.default_threads`), -1 every core whatever the environment says. The ensemble is
        identical for any value.
    verbose : int, default=0
        1 draws a progress bar over the partitions (only on a terminal; see
        :mod:`cclust._progress`), 2 also leaves it on screen when done.
    backend : {None, "threads", "dask"}, default=None
        ``"dask"`` computes each partition as one Dask task (see
        :func:`cclust.dask.generate_partitions`) and returns a
        :class:`cclust.dask.DaskEnsemble`; None picks Dask when ``client`` is given or ``X`` is
        a ``dask.array.Array``, threads otherwise. The partitions are identical either way.
    client : dask.distributed.Client, default=None
        Cluster to run the Dask tasks on (implies ``backend="dask"``); None uses the default
        client if one exists, else Dask's local scheduler.
    chunks : int, default=None
        Rows per chunk of the returned DaskEnsemble (rounded up to a multiple of 4096); Dask
        backend only.

    Returns
    -------
    Ensemble of shape (n_samples, n_partitions)
        A :class:`cclust.dask.DaskEnsemble` (rows chunked) on the Dask backend; its
        ``compute()`` is the Ensemble the threaded backend returns for the same seed.

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> kmeans(X, 3, n_partitions=10, random_state=0).shape
    (150, 10)
    """
    X, n, n_clusters, n_partitions = _check_common(X, n_clusters, n_partitions, init, max_iter)
    low, high = check_k_range(k_range, (n_clusters, max(n_clusters, min(math.ceil(math.sqrt(n)), K_RANGE_CAP))), n)
    tol = check_float(tol, "tol", low=0)
    kmeanspp_trials = check_int(kmeanspp_trials, "kmeanspp_trials", low=1, allow_none=True)
    fit_rows = _check_fit_rows(fit_rows, n, high)
    if fit_rows is not None and fit_rows < high:
        raise ValidationError(f"fit_rows={fit_rows} objects cannot hold the {high} clusters of the largest K_i; "
                              f"give fit_rows >= {high}, or None to fit on every object.")
    if fit_rows is not None and fit_rows >= n:
        fit_rows = None

    def one_partition(X, rng):
        k = int(rng.integers(low, high + 1))
        if fit_rows is None:
            return _kmeans_labels(X, k, rng, init, max_iter, tol, kmeanspp_trials=kmeanspp_trials)[0]
        rows = np.sort(rng.choice(X.shape[0], size=fit_rows, replace=False))
        return _kmeans_on_rows(X, rows, k, rng, init, max_iter, tol, kmeanspp_trials)

    return seeded_ensemble(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                            desc="kmeans partitions", backend=backend, client=client, chunks=chunks)


def _fraction(fraction, name="fraction"):
    return check_float(fraction, name, low=0, high=1, low_open=True)


def subspace(X: Any, n_clusters: int, *, n_partitions: int = 100, fraction: float = 0.7,
             k_range: tuple[int, int] | None = None, init: str = "random", max_iter: int = 100, tol: float = 1e-4,
             random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0,
             backend: str | None = None, client: Any = None, chunks: int | None = None) -> Ensemble | DaskEnsemble:
    """Random feature selection (RFS): k-means on a random ``fraction`` of the features.

    Ren et al. (2017, sec. 4.3) use 70% of the features and randomly chosen initial centres; K_i is drawn
    from ``k_range`` (default ``(K, K)``: Ren et al. 2017 cluster with the consensus K).
    Parameters as :func:`kmeans`, plus ``fraction`` in (0, 1] (at least one feature is kept).
    """
    X, n, n_clusters, n_partitions = _check_common(X, n_clusters, n_partitions, init, max_iter)
    low, high = check_k_range(k_range, (n_clusters, n_clusters), n)
    fraction = _fraction(fraction)
    tol = check_float(tol, "tol", low=0)
    d = X.shape[1]
    m = max(1, int(round(fraction * d)))

    def one_partition(X, rng):
        k = int(rng.integers(low, high + 1))
        features = np.sort(rng.choice(d, size=m, replace=False))
        return _kmeans_labels(np.ascontiguousarray(X[:, features]), k, rng, init, max_iter, tol)[0]

    return seeded_ensemble(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                            desc="subspace partitions", backend=backend, client=client, chunks=chunks)


def subsample(X: Any, n_clusters: int, *, n_partitions: int = 100, fraction: float = 0.7,
              k_range: tuple[int, int] | None = None, init: str = "random", max_iter: int = 100, tol: float = 1e-4,
              random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0,
              backend: str | None = None, client: Any = None, chunks: int | None = None) -> Ensemble | DaskEnsemble:
    """k-means on a random ``fraction`` of the objects, the rest assigned to the nearest centre.

    Ren et al. (2017, sec. 4.3) use 70% of the objects and randomly chosen initial centres; K_i is drawn
    from ``k_range`` (default ``(K, K)``). Parameters as :func:`kmeans`, plus ``fraction`` in
    (0, 1] (the sample keeps at least K_i objects).
    """
    X, n, n_clusters, n_partitions = _check_common(X, n_clusters, n_partitions, init, max_iter)
    low, high = check_k_range(k_range, (n_clusters, n_clusters), n)
    fraction = _fraction(fraction)
    tol = check_float(tol, "tol", low=0)

    def one_partition(X, rng):
        k = int(rng.integers(low, high + 1))
        size = min(n, max(k, int(round(fraction * n))))
        sample = np.sort(rng.choice(n, size=size, replace=False))
        return _kmeans_on_rows(X, sample, k, rng, init, max_iter, tol)

    return seeded_ensemble(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                            desc="subsample partitions", backend=backend, client=client, chunks=chunks)


def projection(X: Any, n_clusters: int, *, n_partitions: int = 100, n_components: int | None = None,
               k_range: tuple[int, int] | None = None, init: str = "k-means++", max_iter: int = 100, tol: float = 1e-4,
               random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0,
               backend: str | None = None, client: Any = None, chunks: int | None = None) -> Ensemble | DaskEnsemble:
    """k-means on random Gaussian projections of X (Fern & Brodley, ICML 2003).

    Each partition projects X onto ``n_components`` directions with i.i.d. N(0, 1/n_components)
    entries and runs k-means there. Default ``n_components = ceil(d / 2)`` (at least 1);
    K_i from ``k_range`` (default ``(K, K)``).
    """
    X, n, n_clusters, n_partitions = _check_common(X, n_clusters, n_partitions, init, max_iter)
    low, high = check_k_range(k_range, (n_clusters, n_clusters), n)
    d = X.shape[1]
    n_components = check_int(max(1, math.ceil(d / 2)) if n_components is None else n_components,
                             "n_components", low=1)
    tol = check_float(tol, "tol", low=0)

    def one_partition(X, rng):
        k = int(rng.integers(low, high + 1))
        R = rng.standard_normal((d, n_components)) / math.sqrt(n_components)
        return _kmeans_labels(np.ascontiguousarray(X @ R), k, rng, init, max_iter, tol)[0]

    return seeded_ensemble(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                            desc="projection partitions", backend=backend, client=client, chunks=chunks)


def boot(X: Any, n_clusters: int, *, n_partitions: int = 100, resample: bool = False,
         k_range: tuple[int, int] | None = None, init: str = "random", max_iter: int = 100, tol: float = 1e-4,
         random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0, backend: str | None = None,
         client: Any = None, chunks: int | None = None) -> Ensemble | DaskEnsemble:
    """clue's ``cl_boot``: k-means from different starts, or on bootstrap samples (Hornik 2005).

    ``resample=False`` (clue's default) runs k-means on the whole data once per partition, each
    run from its own random start. ``resample=True`` draws a bootstrap sample (n objects with
    replacement) per partition, runs k-means on it and gives every object of X to its nearest
    centre, as clue's ``cl_predict`` does for a k-means fit. K_i is drawn from ``k_range``
    (default ``(K, K)``: clue's single k).

    clue calls R's ``kmeans``, whose default is the Hartigan-Wong algorithm from k distinct
    random rows; here each run is the compiled Lloyd engine of :func:`kmeans` (one start,
    ``init="random"`` picks k distinct objects, as R does). A bootstrap sample with fewer than
    K_i distinct points yields fewer clusters.

    Parameters as :func:`kmeans`, plus:

    resample : bool, default=False
        Bootstrap samples (True) or the whole data with a new start (False).

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> boot(X, 3, n_partitions=5, resample=True, random_state=0).shape
    (150, 5)
    """
    X, n, n_clusters, n_partitions = _check_common(X, n_clusters, n_partitions, init, max_iter)
    low, high = check_k_range(k_range, (n_clusters, n_clusters), n)
    tol = check_float(tol, "tol", low=0)
    if not isinstance(resample, (bool, np.bool_)):
        raise ValidationError(f"resample must be True or False, got {resample!r}.")

    def one_partition(X, rng):
        k = int(rng.integers(low, high + 1))
        if not resample:
            return _kmeans_labels(X, k, rng, init, max_iter, tol)[0]
        return _kmeans_on_rows(X, rng.integers(0, n, size=n), k, rng, init, max_iter, tol)

    return seeded_ensemble(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                            desc="bootstrap partitions" if resample else "restarted k-means partitions",
                            backend=backend, client=client, chunks=chunks)


def _bagged_votes(X, k, rng, n_bootstrap, init, max_iter, tol):
    """Votes (n, k) of BagClust1: bootstrap partitions matched to a reference partition of all of X."""
    n = X.shape[0]
    reference = _kmeans_labels(X, k, rng, init, max_iter, tol)[0]
    boots = [_kmeans_on_rows(X, rng.integers(0, n, size=n), k, rng, init, max_iter, tol)
             for _ in range(n_bootstrap)]
    return _matched_votes(reference, np.column_stack(boots), k)


def _matched_votes(reference, partitions, k):
    """votes[o, i]: partitions (columns) putting object o in the cluster matched to reference cluster i.

    Each partition's clusters are matched one-to-one to the reference's (labels 0..k-1) so that
    the most objects agree; clusters beyond the reference's k cannot occur (k-means with k).
    """
    from cclust.matching import match_clusters

    n = reference.shape[0]
    ensemble = Ensemble(partitions)
    table = np.asarray(ensemble.contingency(reference, k))  # one compiled pass: k x sum K_b
    offsets = np.asarray(ensemble.offsets)
    votes = np.zeros(n * k, dtype=np.int64)
    base = np.arange(n, dtype=np.int64) * k
    for b in range(ensemble.n_partitions):
        permutation = match_clusters(table[:, offsets[b]:offsets[b + 1]])
        to_reference = np.empty_like(permutation)
        to_reference[permutation] = np.arange(permutation.shape[0])
        votes += np.bincount(base + to_reference[ensemble.labels[:, b]], minlength=n * k)
    return votes.reshape(n, k)


def _check_bagging(X, n_clusters, n_bootstrap, init, max_iter, tol):
    X, n, n_clusters, _ = _check_common(X, n_clusters, 1, init, max_iter)
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", low=1)
    return X, n_clusters, n_bootstrap, check_float(tol, "tol", low=0)


def bagged_memberships(X: Any, n_clusters: int, *, n_bootstrap: int = 10, init: str = "random",
                       max_iter: int = 100, tol: float = 1e-4,
                       random_state: RandomStateLike = None) -> npt.NDArray[np.float64]:
    """Bagged clustering BagClust1 (Dudoit & Fridlyand 2003) as clue's ``cl_bag`` computes it: a soft partition.

    A reference partition of all of X by k-means; ``n_bootstrap`` k-means partitions of
    bootstrap samples, every object given to its nearest centre (:func:`boot` with
    ``resample=True``); each bootstrap partition's clusters matched one-to-one to the
    reference's so that the most objects agree (:func:`cclust.matching.match_clusters` on their
    contingency table, which is clue's largest ``trace(M_ref^T M_b P)``); the memberships are
    the fraction of bootstrap partitions that put each object in each (matched) cluster
    (Hornik 2005, ``cl_bag(method = "DFBC1")``). Its hard partition, each object in its
    cluster of most votes, is Dudoit & Fridlyand's plurality vote.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        k of the reference and of every bootstrap k-means.
    n_bootstrap : int, default=10
        B, the number of bootstrap partitions (clue has no default; 10 is cclust's).
    init, max_iter, tol : as :func:`kmeans`
    random_state : int, Generator or None

    Returns
    -------
    memberships : ndarray of shape (n_samples, n_clusters)
        Rows sum to 1; column i is the reference's cluster i.

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> float(bagged_memberships(X, 3, n_bootstrap=5, random_state=0).sum(axis=1).min())
    1.0
    """
    from cclust.validation import check_random_state

    X, n_clusters, n_bootstrap, tol = _check_bagging(X, n_clusters, n_bootstrap, init, max_iter, tol)
    votes = _bagged_votes(X, n_clusters, check_random_state(random_state), n_bootstrap, init, max_iter, tol)
    return votes / float(n_bootstrap)


def bag(X: Any, n_clusters: int, *, n_partitions: int = 100, n_bootstrap: int = 10, init: str = "random",
        max_iter: int = 100, tol: float = 1e-4, memberships: bool = False, random_state: RandomStateLike = None,
        n_jobs: int | None = None, verbose: int = 0, backend: str | None = None, client: Any = None,
        chunks: int | None = None) -> Ensemble | SoftEnsemble | DaskEnsemble:
    """Bagged k-means partitions: each partition is one BagClust1 result (Dudoit & Fridlyand 2003; clue's ``cl_bag``).

    clue's ``cl_bag`` maps data to one partition, like a clustering algorithm: it is a base
    clusterer made more stable by bagging, not a way of fusing a given ensemble (its reference
    partition is a fresh clustering of the data, which a consensus function does not have).
    So cclust offers it as a generator whose every partition is one bagged clustering: the
    hard partition of :func:`bagged_memberships` (each object in the matched cluster most
    bootstrap partitions give it; ties to the lowest cluster number, where clue's
    ``max.col`` breaks them at random). ``n_partitions=1`` is clue's ``cl_bag(X, B, k)``
    hardened. To fuse bootstrap partitions with another consensus function instead, generate
    them with :func:`boot` (``resample=True``), as clue's documentation suggests.

    Parameters as :func:`kmeans` (each partition uses K clusters), plus:

    n_bootstrap : int, default=10
        B, bootstrap partitions per bagged partition; each partition costs B + 1 k-means runs.
    memberships : bool, default=False
        True: a :class:`cclust.soft.SoftEnsemble` whose partition j is clue's soft ``cl_bag``
        result, the matched vote fractions (:func:`bagged_memberships`, column i the reference's
        cluster i), from the same seeds, so that its ``harden()`` is the default Ensemble;
        threads only (no Dask backend).

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> bag(X, 3, n_partitions=4, n_bootstrap=5, random_state=0).shape
    (150, 4)
    >>> bag(X, 3, n_partitions=4, n_bootstrap=5, memberships=True, random_state=0).memberships[0].shape
    (150, 3)
    """
    X, n_clusters, n_bootstrap, tol = _check_bagging(X, n_clusters, n_bootstrap, init, max_iter, tol)
    n_partitions = check_int(n_partitions, "n_partitions", low=1)
    if not isinstance(memberships, (bool, np.bool_)):
        raise ValidationError(f"memberships must be True or False, got {memberships!r}.")
    if memberships:
        from cclust.soft import SoftEnsemble

        if _wants_dask(X, backend, client) or chunks is not None:
            raise ValidationError("memberships=True runs on threads only: backend='dask', client and chunks "
                                  "make hard partitions.")

        def one_matrix(X, rng):
            return _bagged_votes(X, n_clusters, rng, n_bootstrap, init, max_iter, tol) / float(n_bootstrap)

        mats = _per_partition(one_matrix, X, spawn_seed_sequences(random_state, n_partitions), n_jobs, verbose,
                              "bagged partitions")
        return SoftEnsemble(mats, provenance="bag")

    def one_partition(X, rng):
        return np.argmax(_bagged_votes(X, n_clusters, rng, n_bootstrap, init, max_iter, tol), axis=1)

    return seeded_ensemble(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                            desc="bagged partitions", backend=backend, client=client, chunks=chunks)
