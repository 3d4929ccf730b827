"""Per-cluster stability under resampling (Hennig 2007) as R's ``fpc::clusterboot`` computes it:
cluster_stability and ClusterStability."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.validation import RandomStateLike, check_int, check_n_jobs
from cclust.errors import ValidationError
from cclust._pipeline import RESERVED_GENERATOR, check_name, check_params_dict, child_seeds, validate_X


STABILITY_SCHEMES = ("boot", "subset")


@dataclass(frozen=True, eq=False)
class ClusterStability:
    """Per-cluster stability under resampling (Hennig 2007), from :func:`cluster_stability`.

    Attributes
    ----------
    labels : ndarray of shape (n_samples,), int64
        The clustering whose clusters are judged, 0..K-1.
    jaccard : ndarray of shape (n_resamples, K)
        For every resample and cluster, the largest Jaccard similarity of the cluster (on the
        resample's objects) with a cluster of the resample's own clustering; NaN when the
        resample drew no member of the cluster.
    mean_jaccard : ndarray of shape (K,)
        fpc's ``bootmean``: the mean over the resamples (NaN ones left out). Hennig's reading:
        below 0.6 a cluster is not stable, 0.6-0.75 it shows a pattern, above 0.85 it is highly
        stable.
    dissolved, recovered : ndarray of shape (K,), int64
        fpc's ``bootbrd`` and ``bootrecover``: resamples with a Jaccard of at most 0.5, and above
        0.75.
    scheme : str
    n_resamples : int
    subset_size : int or None
        Objects per ``"subset"`` resample (None for ``"boot"``).
    """

    labels: np.ndarray
    jaccard: np.ndarray
    mean_jaccard: np.ndarray
    dissolved: np.ndarray
    recovered: np.ndarray
    scheme: str
    n_resamples: int
    subset_size: int | None = None

    @classmethod
    def from_jaccard(cls, labels, jaccard, scheme, subset_size=None):
        """The summaries of a (resamples, K) table of best Jaccard values (NaN: the resample
        drew no member of the cluster)."""
        jaccard = np.asarray(jaccard, dtype=np.float64)
        finite = np.isfinite(jaccard)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(finite.any(axis=0), np.nansum(jaccard, axis=0) / finite.sum(axis=0), np.nan)
        return cls(labels=np.asarray(labels, dtype=np.int64), jaccard=jaccard, mean_jaccard=mean,
                   dissolved=(jaccard <= 0.5).sum(axis=0).astype(np.int64),
                   recovered=(jaccard > 0.75).sum(axis=0).astype(np.int64), scheme=scheme,
                   n_resamples=int(jaccard.shape[0]), subset_size=subset_size)

    def to_dict(self):
        """Per cluster: size, mean Jaccard, dissolved and recovered counts (plain lists), and
        the scheme."""
        sizes = np.bincount(self.labels, minlength=self.mean_jaccard.shape[0])
        return {"size": sizes.tolist(), "mean_jaccard": self.mean_jaccard.tolist(),
                "dissolved": self.dissolved.tolist(), "recovered": self.recovered.tolist(),
                "scheme": self.scheme, "n_resamples": self.n_resamples, "subset_size": self.subset_size}

    def summary(self):
        """One line per cluster: size, mean Jaccard, dissolved and recovered counts."""
        sizes = np.bincount(self.labels, minlength=self.mean_jaccard.shape[0])
        lines = [f"cluster stability (Hennig 2007), {self.n_resamples} {self.scheme} resamples",
                 f"{'cluster':>7}  {'size':>6}  {'mean Jaccard':>12}  {'dissolved':>9}  {'recovered':>9}"]
        for c, (size, mean) in enumerate(zip(sizes.tolist(), self.mean_jaccard.tolist())):
            lines.append(f"{c:>7}  {size:>6}  {mean:>12.3f}  {int(self.dissolved[c]):>9}  {int(self.recovered[c]):>9}")
        return "\n".join(lines)


def cluster_stability(data: Any, n_clusters: int, *, labels: npt.ArrayLike | None = None,
                      clusterer: str | Callable[..., Any] = "kmeans", scheme: str = "boot", n_resamples: int = 100,
                      subset_size: int | None = None, clusterer_params: Mapping[str, Any] | None = None,
                      random_state: RandomStateLike = None, n_jobs: int | None = None) -> ClusterStability:
    """How stable each cluster is under resampling: the clusterwise Jaccard bootstrap of Hennig
    (2007), as R's ``fpc::clusterboot`` computes it.

    The data are clustered (or ``labels`` are taken as given); then ``n_resamples`` times a
    resample of the objects is drawn (``"boot"``: n objects with replacement; ``"subset"``:
    ``subset_size`` objects without, ``floor(n / 2)`` by default, fpc's ``subtuning``) and
    clustered by the same clusterer at the same K. Each original cluster C is compared with every
    cluster D of the resample's clustering on the resample's draws (a draw of an object twice
    counts twice, as fpc does): ``|C ∩ D| / |C ∪ D|``, and the largest value is kept. Its mean
    over the resamples is the cluster's stability; fpc's counts of resamples in which the cluster
    dissolved (Jaccard <= 0.5) or was recovered (> 0.75) come with it.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features)
    n_clusters : int
        K of the clusterer, on the data and on every resample.
    labels : array-like of shape (n_samples,), optional
        The clustering to judge (e.g. a consensus result's labels); default: the clusterer's on
        the data.
    clusterer : str or callable, default="kmeans"
        A registered generator run for one partition at exactly K (``k_range=(K, K)``; for
        ``"kmeans"`` also ``max_iter=100, kmeanspp_trials=None`` unless ``clusterer_params`` says
        otherwise: k-means run to convergence from a greedy k-means++ start), or a function
        ``f(X, k, random_state) -> labels``.
    scheme : {"boot", "subset"}, default="boot"
    n_resamples : int, default=100
        fpc's ``B``.
    subset_size : int, optional
        Objects per ``"subset"`` resample (default ``floor(n / 2)``).
    clusterer_params : dict, optional
        Extra keyword arguments of a registered generator.
    random_state : int, numpy.random.Generator or None
        Same value, same result, for any ``n_jobs``.
    n_jobs : int, optional
        Threads clustering resamples side by side (each resample has its own seed and the draws
        are made in order, so the result does not depend on it). None: every core for a
        registered clusterer, one thread for a function (which may not be safe to call from
        several threads; pass ``n_jobs`` to run it on more).

    Returns
    -------
    ClusterStability

    References
    ----------
    C. Hennig. Cluster-wise assessment of cluster stability. Computational Statistics & Data
    Analysis 52(1):258-271, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.3, (30, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    >>> res = cluster_stability(X, 3, n_resamples=20, random_state=0)
    >>> bool((res.mean_jaccard > 0.95).all()), res.dissolved.tolist()
    (True, [0, 0, 0])
    """
    from cclust import _monti
    from cclust.registry import get
    from cclust.validation import label_vector

    X, _ = validate_X(data, "data")
    n = X.shape[0]
    k = check_int(n_clusters, "n_clusters", low=1, high=n)
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    if scheme not in STABILITY_SCHEMES:
        raise ValidationError(f"scheme must be one of {list(STABILITY_SCHEMES)}, got {scheme!r}.")
    size = n // 2 if subset_size is None else check_int(subset_size, "subset_size", low=k, high=n)
    if scheme == "subset" and size < k:
        raise ValidationError(f"subset resamples of floor(n / 2) = {size} objects cannot hold {k} clusters; "
                              "pass subset_size or use scheme='boot'.")
    params = check_params_dict(clusterer_params, "clusterer_params", RESERVED_GENERATOR, "cluster_stability")
    if callable(clusterer):
        def run(Y, seed):
            return np.asarray(clusterer(Y, k, seed))
    else:
        generator = get(check_name(clusterer, "clusterer"), kind="generator")
        if clusterer == "kmeans":
            from cclust.generators import CONVERGED_KMEANS

            # The clusterer judged is k-means at K run to convergence (fpc's kmeansCBI), not the
            # generator's cheap basic partitions (5 Lloyd iterations by default).
            params = {**CONVERGED_KMEANS, **params}

        def run(Y, seed):
            return generator(Y, k, n_partitions=1, k_range=(k, k), random_state=seed, **params).labels[:, 0]
    seeds = child_seeds(random_state, n_resamples + 2)
    if labels is None:
        labels = run(X, seeds[0])
    labels, n_labels = label_vector(labels, "labels")
    if labels.shape[0] != n:
        raise ValidationError(f"labels has {labels.shape[0]} entries but data has {n} objects.")
    draw = np.random.default_rng(seeds[1])
    jaccard = np.full((n_resamples, n_labels), np.nan)

    def one(b, idx):
        theirs = label_vector(run(np.ascontiguousarray(X[idx]), seeds[b + 2]), "the clusterer's labels")[0]
        jaccard[b] = _monti.best_jaccard(labels[idx], theirs, n_labels)

    threads = 1 if callable(clusterer) and n_jobs is None else min(check_n_jobs(n_jobs, "n_jobs"), n_resamples)
    # the draws are made in resample order, a batch at a time (a few resamples' indices in memory)
    batch = 4 * threads
    with ThreadPoolExecutor(threads) if threads > 1 else nullcontext() as pool:
        for start in range(0, n_resamples, batch):
            draws = [(b, draw.integers(0, n, size=n) if scheme == "boot"
                      else np.sort(draw.choice(n, size=size, replace=False)))
                     for b in range(start, min(start + batch, n_resamples))]
            if pool is None:
                for b, idx in draws:
                    one(b, idx)
            else:
                list(pool.map(lambda item: one(*item), draws))
    return ClusterStability.from_jaccard(labels, jaccard, scheme, size if scheme == "subset" else None)
