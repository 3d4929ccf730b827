"""Quality on easy data: does a consensus function, with its defaults, find the obvious answer?

The other consensus checks test the contract; this one tests the result. Its data are
well-separated Gaussian blobs (:func:`easy_blobs`), balanced or with one cluster several times
larger than the others, and its ensembles are k-means partitions from ``cclust.generate``, as
a user's first test would be. The blobs are so far apart that every reasonable consensus of
those partitions is the blobs themselves.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from cclust.testing._common import Failure, resolve
from cclust.testing._data import adjusted_rand
import numpy.typing as npt

__all__ = ["check_consensus_recovers_easy_structure", "easy_blobs", "easy_ensemble"]

#: Distance between any two blob centres, in units of the blobs' standard deviation.
SEPARATION = 10.0

#: Seed offset of the easy data (the method under test gets ``random_state=seed``).
EASY_DATA_SEED = 51_966


def _check_positive_int(value, name, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")
    return int(value)


def blob_sizes(n_samples, n_clusters, ratio=1):
    """Sizes of ``n_clusters`` blobs of ``n_samples`` objects: the first ``ratio`` times as large
    as each of the others (which are equal), the remainder of the division going to the first."""
    n_samples = _check_positive_int(n_samples, "n_samples", 2)
    n_clusters = _check_positive_int(n_clusters, "n_clusters", 2)
    ratio = _check_positive_int(ratio, "ratio", 1)
    small = n_samples // (ratio + n_clusters - 1)
    if small < 1:
        raise ValueError(f"n_samples={n_samples} is too small for {n_clusters} blobs with ratio={ratio}.")
    sizes = np.full(n_clusters, small, dtype=np.int64)
    sizes[0] = n_samples - small * (n_clusters - 1)
    return sizes


def easy_blobs(n_samples: int, n_clusters: int, *, ratio: int = 1,
               seed: int = 0) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Well-separated Gaussian blobs: the obvious answer of a clustering problem.

    Blob k is centred on ``SEPARATION / sqrt(2)`` times the k-th unit vector of
    ``n_clusters`` dimensions, so every two centres are ``SEPARATION`` (10) standard deviations
    apart; the points have unit standard deviation in every dimension.

    Parameters
    ----------
    n_samples : int
        Number of objects.
    n_clusters : int
        Number of blobs (and of dimensions), at least 2.
    ratio : int, default=1
        The first blob holds ``ratio`` times as many objects as each other blob (1: balanced).
    seed : int, default=0
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n_samples, n_clusters), float64
    y : ndarray of shape (n_samples,), int64
        The blob of each object, blobs in order (blob 0 is the large one).

    Examples
    --------
    >>> from cclust.testing import easy_blobs
    >>> X, y = easy_blobs(3000, 4, ratio=3)
    >>> [int((y == k).sum()) for k in range(4)]
    [1500, 500, 500, 500]
    """
    sizes = blob_sizes(n_samples, n_clusters, ratio)
    rng = np.random.default_rng([EASY_DATA_SEED, int(seed)])
    y = np.repeat(np.arange(n_clusters, dtype=np.int64), sizes)
    centres = np.eye(n_clusters) * (SEPARATION / np.sqrt(2.0))
    X = centres[y] + rng.standard_normal((y.shape[0], n_clusters))
    return X, y


@lru_cache(maxsize=48)
def easy_ensemble(n_samples, n_clusters, *, ratio=1, k_range=None, n_partitions=30, seed=0):
    """(X, y, ensemble) of :func:`easy_blobs` and ``cclust.generate("kmeans", ...)`` on it.

    ``k_range`` None is K_i in ``[K, ceil(sqrt(n))]`` (the KCC authors' range); ``"K"`` means
    K_i = K for every partition; a pair is passed on. Every partition is k-means run to
    convergence from a greedy k-means++ start (``max_iter=100, kmeanspp_trials=None``), so
    the kit's verdicts do not move when the generator's cheaper defaults do. Results are cached
    (ensembles and the arrays returned are read-only), so that many methods can be checked on
    one ensemble.
    """
    from cclust import generate
    from cclust.generators import CONVERGED_KMEANS

    X, y = easy_blobs(n_samples, n_clusters, ratio=ratio, seed=seed)
    kr = ((n_clusters, n_clusters) if k_range == "K"
          else (n_clusters, max(n_clusters, math.ceil(math.sqrt(n_samples)))) if k_range is None else k_range)
    ensemble = generate("kmeans", X, n_clusters, n_partitions=n_partitions, k_range=kr, random_state=seed,
                        **CONVERGED_KMEANS)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y, ensemble


def check_consensus_recovers_easy_structure(fn_or_name: str | Callable[..., Any], *, n_samples: int = 2000,
                                            n_clusters: int = 3, ratio: int = 1,
                                            k_range: str | tuple[int, int] | None = None, n_partitions: int = 30,
                                            seeds: Sequence[int] = (0, 1, 2, 3, 4), min_ari: float = 0.95,
                                            min_passes: int | None = None, X_required: bool | None = None,
                                            params: Mapping[str, Any] | None = None) -> list[float]:
    """With its default parameters, the function recovers well-separated blobs.

    For each seed s of ``seeds``: the blobs of :func:`easy_blobs` (``n_samples`` objects,
    ``n_clusters`` blobs, the first ``ratio`` times larger), an ensemble of ``n_partitions``
    k-means partitions (:func:`easy_ensemble`: ``cclust.generate("kmeans", X, n_clusters,
    k_range=k_range, random_state=s)``, run to convergence), and the function called with ``n_clusters`` and ``random_state=s``
    (and ``X=`` if it requires X). The adjusted Rand index of its labels against the blobs must
    reach ``min_ari`` for at least ``min_passes`` seeds. Seeds stop being run as soon as the
    outcome is decided (enough passes, or too many failures).

    Parameters
    ----------
    fn_or_name : callable or str
        The consensus function, or its registered name.
    n_samples : int, default=2000
    n_clusters : int, default=3
        Number of blobs, and the K asked for.
    ratio : int, default=1
        Size of the first blob relative to each other one (5: one cluster five times larger).
    k_range : None, "K" or (int, int), default=None
        K_i of the partitions: None is [K, ceil(sqrt(n))] (the KCC authors' range),
        ``"K"`` is K_i = K.
    n_partitions : int, default=30
    seeds : sequence of int, default=(0, 1, 2, 3, 4)
    min_ari : float, default=0.95
    min_passes : int, default=None
        Seeds that must reach ``min_ari``; None means all but one (4 of 5).
    X_required : bool, default=None
        Whether to pass the blob features as ``X=``; None reads ``method_info(fn).requires_X``.
    params : mapping, default=None
        Extra keyword arguments for the function (the check is about defaults: use this only
        to show what a non-default setting achieves).

    Returns
    -------
    list of float
        The ARI of every seed run.

    Raises
    ------
    AssertionError
        Naming the check, the function and the data, with the ARI and cluster sizes of every
        seed run, if fewer than ``min_passes`` seeds reach ``min_ari`` (or a call raises).

    Examples
    --------
    >>> from cclust.testing import check_consensus_recovers_easy_structure
    >>> check_consensus_recovers_easy_structure("kcc", n_clusters=3, ratio=5)  # doctest: +SKIP
    """
    from cclust.base import method_info

    fn, label = resolve(fn_or_name, "consensus")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed.")
    min_passes = max(1, len(seeds) - 1) if min_passes is None else _check_positive_int(min_passes, "min_passes", 1)
    if min_passes > len(seeds):
        raise ValueError(f"min_passes={min_passes} exceeds the {len(seeds)} seeds given.")
    requires_X = method_info(fn).requires_X if X_required is None else bool(X_required)
    what = (f"n_samples={n_samples}, n_clusters={n_clusters}, ratio={ratio}, k_range={k_range!r}, "
            f"n_partitions={n_partitions}")
    fail = Failure("check_consensus_recovers_easy_structure", label)
    scores, notes = [], []
    passes = failures = 0
    for seed in seeds:
        X, y, ensemble = easy_ensemble(n_samples, n_clusters, ratio=ratio, k_range=k_range,
                                       n_partitions=n_partitions, seed=seed)
        kwargs = dict(params or {})
        kwargs["random_state"] = seed
        if requires_X:
            kwargs["X"] = X.copy()
        result = fail.call(fn, ensemble, n_clusters, what=f"on easy blobs ({what}, seed {seed})", **kwargs)
        labels = np.asarray(result.labels)
        score = adjusted_rand(y, labels)
        scores.append(score)
        sizes = np.sort(np.bincount(np.unique(labels, return_inverse=True)[1].reshape(-1)))[::-1]
        notes.append(f"seed {seed}: ARI {score:.3f}, sizes {sizes.tolist()}")
        if score >= min_ari:
            passes += 1
        else:
            failures += 1
        if passes >= min_passes or failures > len(seeds) - min_passes:
            break
    if passes < min_passes:
        truth = np.bincount(easy_blobs(n_samples, n_clusters, ratio=ratio, seed=seeds[0])[1]).tolist()
        raise fail(f"ARI >= {min_ari} in {passes} of the seeds run, {min_passes} of {len(seeds)} needed, on "
                   f"well-separated blobs ({what}; true sizes {truth}): " + "; ".join(notes) + ".")
    return scores
