"""Choosing the resolution of graph clustering by how stable its clusters are under subsampling
(``cclust.choose_resolution`` is :func:`choose_resolution`).

Leiden and Louvain do not take a number of clusters but a resolution, and the usual practice is
to try several and look (clustree draws how clusters split as the resolution grows; Zappia &
Oshlack 2018). chooseR (Patterson-Cross, Levine & Menon 2021) turns the look into a rule,
which this module implements:

1. At every resolution of the grid, cluster all the objects once: the clusters to be judged.
2. Draw ``n_resamples`` subsamples of ``floor(subsample * n)`` objects without replacement
   (80 % by default, as chooseR) and cluster each at every resolution.
3. For every pair of objects, the co-clustering frequency: of the subsamples that drew both,
   the share that put them in one cluster. ``1 - frequency`` is a distance between objects.
4. Each object's silhouette (Rousseeuw 1987) under that distance against the full-data
   clusters; a cluster's stability is the mean silhouette of its members (chooseR's robustness
   score): near 1, its members are always clustered together and never with anyone else; near
   0 or below, the subsamples split it or merge it with a neighbour.
5. Per resolution, the median of its clusters' stabilities and a 95 % percentile bootstrap
   interval of that median (the clusters resampled with replacement).
6. The recommendation: the highest resolution whose median is at least the lower bound of the
   interval of the resolution with the highest median. Finer clusterings are preferred as long
   as they are not clearly less stable than the most stable one.

Choices where the papers are silent, or where this module departs from chooseR's scripts:

* chooseR reruns the whole pipeline (PCA, neighbours) on each subsample. Here the graph is
  rebuilt from the subsample's features when the graph is built from features, and is the
  subgraph induced by the subsample when a graph is given (an AnnData's
  ``obsp["connectivities"]`` or ``graph=``): scanpy's graph is not recomputed.
* A pair that no subsample drew together has no frequency and is left out of the means (with
  20 resamples at 80 % this happens to a given pair with probability ``0.36^20``, about 1e-9).
* An object alone in its cluster has silhouette 0 (Rousseeuw's convention). A resolution that
  gives one cluster has no silhouette (there is no other cluster): its stability is NaN and
  it is never recommended.
* The bootstrap interval uses :data:`N_BOOTSTRAP` draws seeded from ``random_state``; with two
  or three clusters at a resolution it is crude (few distinct medians), which the summary
  shows as a wide interval.
* The co-clustering frequencies are computed a block of rows at a time (never an n x n array
  in memory), but every pair of objects is visited: time grows as n^2 (and as the number of
  subsamples and resolutions), as it does in chooseR. For tens of thousands of objects, run it
  on a random subset of them.
* Every clustering (full data and subsamples, every resolution) is one run of the
  ``leiden`` or ``louvain`` generator with its own seed from ``random_state``; subsamples are
  drawn in order from one generator. The result is therefore the same for any ``n_jobs``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.errors import ValidationError
from cclust.validation import RandomStateLike

__all__ = ["ResolutionChoice", "choose_resolution"]

#: Community-detection generators whose clusters are set by a resolution.
METHODS = ("leiden", "louvain")

#: The grid when none is given: from coarse to fine around leidenalg's and scanpy's 1.0.
DEFAULT_RESOLUTIONS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)

#: Bootstrap draws of the clusters for the interval of each resolution's median stability.
N_BOOTSTRAP = 10000

#: Confidence of that interval.
CONFIDENCE = 0.95

#: Bytes of the temporaries of one row block of the co-clustering frequencies (about four
#: float64 arrays of block x n).
_BLOCK_BYTES = 64 * 2**20


@dataclass
class ResolutionChoice:
    """What :func:`choose_resolution` found: the stability of every resolution's clusters and
    the recommended resolution.

    Attributes
    ----------
    resolutions : ndarray of shape (n_resolutions,)
        The grid, in increasing order.
    n_clusters : ndarray of shape (n_resolutions,), int64
        Clusters of the full data at each resolution.
    labels : list of ndarray of shape (n_samples,), int64
        The full-data clustering at each resolution (codes 0..K-1).
    cluster_stability : list of ndarray of shape (K,)
        Per resolution, each cluster's stability: the mean co-clustering silhouette of its
        members (chooseR's robustness score, in [-1, 1]).
    object_stability : list of ndarray of shape (n_samples,)
        Per resolution, each object's co-clustering silhouette.
    median, ci_low, ci_high : ndarray of shape (n_resolutions,)
        The median of the clusters' stabilities and its 95 % bootstrap interval (NaN at a
        resolution with one cluster).
    recommended : float or None
        The highest resolution whose median is at least the lower bound of the interval of the
        most stable resolution (None when every resolution gave one cluster).
    most_stable : float or None
        The resolution with the highest median.
    threshold : float
        The lower bound of the most stable resolution's interval: the bar the recommended
        resolution cleared.
    method, n_resamples, subsample, subsample_size
        How the stabilities were measured.
    """

    resolutions: np.ndarray
    n_clusters: np.ndarray
    labels: list[npt.NDArray[np.int64]]
    cluster_stability: list
    object_stability: list
    median: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    recommended: float | None = None
    most_stable: float | None = None
    threshold: float = float("nan")
    method: str = "leiden"
    n_resamples: int = 0
    subsample: float = 0.8
    subsample_size: int = 0
    warnings: list = field(default_factory=list)

    def _index(self, resolution: float) -> int:
        where = np.flatnonzero(np.isclose(self.resolutions, resolution, rtol=0, atol=1e-12))
        if where.size == 0:
            raise ValidationError(f"resolution {resolution!r} is not in the grid "
                                  f"{[float(r) for r in self.resolutions]}; pass one of them.")
        return int(where[0])

    @property
    def best_labels(self) -> npt.NDArray[np.int64] | None:
        """The full-data clustering at the recommended resolution (None when there is none)."""
        if self.recommended is None:
            return None
        return self.labels[self._index(self.recommended)]

    def labels_at(self, resolution: float) -> npt.NDArray[np.int64]:
        """The full-data clustering at ``resolution`` (one of the grid)."""
        return self.labels[self._index(resolution)]

    def table(self, as_frame: bool | None = None) -> Any:
        """One row per resolution: ``resolution``, ``n_clusters``, ``median``, ``ci_low``,
        ``ci_high``, ``mean``, ``min`` (of the clusters' stabilities), ``recommended`` (bool) and
        ``cluster_stability`` (the per-cluster values, a tuple in cluster order). A pandas
        DataFrame when pandas is installed (or ``as_frame=True``), else a dict of lists."""
        rows = {"resolution": [float(r) for r in self.resolutions],
                "n_clusters": [int(k) for k in self.n_clusters],
                "median": self.median.tolist(), "ci_low": self.ci_low.tolist(), "ci_high": self.ci_high.tolist(),
                "mean": [float(np.mean(s)) if s.size else float("nan") for s in self.cluster_stability],
                "min": [float(np.min(s)) if s.size else float("nan") for s in self.cluster_stability],
                "recommended": [self.recommended is not None and bool(np.isclose(r, self.recommended, rtol=0,
                                                                                  atol=1e-12))
                                for r in self.resolutions],
                "cluster_stability": [tuple(float(v) for v in s) for s in self.cluster_stability]}
        if as_frame is None:
            try:
                import pandas  # noqa: F401
                as_frame = True
            except ImportError:
                as_frame = False
        if as_frame:
            import pandas as pd

            return pd.DataFrame(rows)
        return rows

    def summary(self) -> str:
        """The table and the recommendation in words, with how sure it is."""
        lines = [f"Resolution by cluster stability (chooseR; Patterson-Cross, Levine & Menon 2021): {self.method} "
                 f"on {self.n_resamples} subsamples of {self.subsample_size} objects ({self.subsample:.0%}).",
                 "A cluster's stability is the mean silhouette of its members under the distance 1 - (share of "
                 "the subsamples holding both objects that clustered them together): 1 = always together and apart "
                 "from the rest.",
                 f"{'resolution':>10}  {'clusters':>8}  {'median':>6}  {'95% interval':>15}  {'lowest cluster':>14}"]
        for i, r in enumerate(self.resolutions):
            scores = self.cluster_stability[i]
            low = f"{scores.min():.3f}" if scores.size and np.isfinite(self.median[i]) else "-"
            interval = (f"[{self.ci_low[i]:.3f}, {self.ci_high[i]:.3f}]" if np.isfinite(self.median[i])
                        else "one cluster")
            median = f"{self.median[i]:.3f}" if np.isfinite(self.median[i]) else "-"
            mark = "  <- recommended" if self.recommended is not None and i == self._index(self.recommended) else ""
            lines.append(f"{r:>10g}  {int(self.n_clusters[i]):>8}  {median:>6}  {interval:>15}  {low:>14}{mark}")
        if self.recommended is None:
            lines.append("No resolution can be recommended: every resolution gave one cluster; try higher "
                         "resolutions.")
        else:
            # a recommended resolution implies a most stable one (_recommend sets both)
            i, j = self._index(self.recommended), self._index(cast(float, self.most_stable))
            if i == j:
                lines.append(f"Recommended resolution {self.recommended:g} ({int(self.n_clusters[i])} clusters): the "
                             f"most stable (median {self.median[i]:.3f}), and no higher resolution reaches the lower "
                             f"bound {self.threshold:.3f} of its interval.")
            else:
                lines.append(f"Recommended resolution {self.recommended:g} ({int(self.n_clusters[i])} clusters): the "
                             f"highest whose median ({self.median[i]:.3f}) reaches the lower bound "
                             f"{self.threshold:.3f} of the interval of the most stable resolution, "
                             f"{self.most_stable:g} (median {self.median[j]:.3f}).")
            width = self.ci_high[i] - self.ci_low[i]
            lines.append(f"How sure: its median's 95% interval is [{self.ci_low[i]:.3f}, {self.ci_high[i]:.3f}] "
                         f"(width {width:.3f}); its clusters' stabilities range from "
                         f"{self.cluster_stability[i].min():.3f} to {self.cluster_stability[i].max():.3f}.")
        lines.extend(self.warnings)
        return "\n".join(lines)


def choose_resolution(data: Any, resolutions: Sequence[float] | None = None, *, n_resamples: int = 100,
                      subsample: float = 0.8, method: str = "leiden", n_neighbors: int | None = None, graph: Any = None,
                      layer: str | None = None, use_rep: str | None = None, key_added: str | None = None,
                      random_state: RandomStateLike = None, n_jobs: int | None = None) -> ResolutionChoice:
    """Recommend a Leiden (or Louvain) resolution by the stability of its clusters under
    subsampling, by chooseR's rule (Patterson-Cross, Levine & Menon 2021).

    Every resolution of the grid clusters the full data and ``n_resamples`` subsamples; each
    full-data cluster is scored by the co-clustering silhouette of its members, each resolution
    by the median score of its clusters with a bootstrap interval, and the highest resolution
    whose median reaches the lower bound of the most stable resolution's interval is
    recommended. The steps and the choices made are in :mod:`cclust.resolution`.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features) or anndata.AnnData
        The features the kNN graph is built from. An AnnData gives ``X``, a layer (``layer``)
        or an ``obsm`` entry (``use_rep="X_pca"``), and its ``obsp["connectivities"]`` (scanpy's
        neighbourhood graph) as the graph when it holds one and ``graph`` is None.
    resolutions : sequence of float > 0, default=(0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
        The grid (sorted; no value twice).
    n_resamples : int >= 2, default=100
        Subsamples (chooseR's 100).
    subsample : float in (0, 1), default=0.8
        Share of the objects drawn, without replacement, into each subsample.
    method : {"leiden", "louvain"}, default="leiden"
        The generator that clusters (:func:`cclust.graph_generators.leiden`, ``louvain``);
        needs ``pip install 'cclust[graph]'``.
    n_neighbors : int, optional
        Neighbours of the kNN graph built from the features (the generator's default: 15).
    graph : None, "knn" or sparse matrix of shape (n_samples, n_samples), default=None
        A symmetric weight matrix to cluster instead of building one (subsamples cluster the
        subgraph it induces); "knn" builds one from the features even when an AnnData holds
        ``obsp["connectivities"]``.
    layer, use_rep : str, optional
        AnnData ``data`` only: which features (see :func:`cclust.select_k`).
    key_added : str, optional
        AnnData ``data`` only: write the labels at the recommended resolution into
        ``data.obs[key_added]`` (categorical ``"0".."K-1"``, as scanpy writes ``leiden``) and
        the table and the recommendation into ``data.uns[key_added]``. By default nothing is
        written into the AnnData. ``data`` must not be a view.
    random_state : int, numpy.random.Generator or None
        Same value, same result, for any ``n_jobs``.
    n_jobs : int, optional
        Threads clustering subsamples side by side (None: every core); the result is the same
        for any value.

    Returns
    -------
    ResolutionChoice
        ``summary()``, ``table()``, ``recommended``, ``best_labels``;
        :func:`cclust.plotting.plot_resolution` draws it.

    References
    ----------
    R. B. Patterson-Cross, A. J. Levine, V. Menon. Selecting single cell clustering parameter
    values using subsampling-based robustness metrics. BMC Bioinformatics 22:39, 2021.
    L. Zappia, A. Oshlack. Clustering trees: a visualization for evaluating clusterings at
    multiple resolutions. GigaScience 7(7), 2018.
    P. J. Rousseeuw. Silhouettes: a graphical aid to the interpretation and validation of
    cluster analysis. Journal of Computational and Applied Mathematics 20:53-65, 1987.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.3, (40, 2)) for c in ((0, 0), (6, 0), (0, 6))])
    >>> res = choose_resolution(X, (0.05, 0.5, 5.0), n_resamples=5, random_state=0)
    >>> res.recommended, int(res.best_labels.max()) + 1
    (0.5, 3)
    """
    from cclust._pipeline import validate_X
    from cclust.interop import _anndata
    from cclust.registry import get
    from cclust.validation import check_float, check_int, check_n_jobs, spawn_seed_sequences

    is_adata = _anndata.is_anndata(data)
    if is_adata:
        values, where = _anndata.features(data, layer, use_rep, "data")
        X, _ = validate_X(values, where)
        if key_added is not None:
            _anndata.check_key(key_added)
            _anndata.check_target(data, "data", copy=False, offers_copy=False)
        if graph is None and "connectivities" in data.obsp:
            graph = data.obsp["connectivities"]
    else:
        _anndata.check_array_options(data, "data", layer=layer is not None, use_rep=use_rep is not None,
                                     key_added=key_added is not None)
        X, _ = validate_X(data, "data")
    n = X.shape[0]
    grid = _check_resolutions(resolutions)
    n_resamples = check_int(n_resamples, "n_resamples", low=2)
    subsample = check_float(subsample, "subsample", low=0, high=1, low_open=True, high_open=True)
    size = int(np.floor(subsample * n))
    if size < 3:
        raise ValidationError(f"subsample={subsample:g} of the {n} objects draws {size}; each subsample needs at "
                              "least 3 objects: raise subsample or pass more objects.")
    if method not in METHODS:
        raise ValidationError(f"method must be one of {list(METHODS)}, got {method!r}.")
    if n_neighbors is not None:
        n_neighbors = check_int(n_neighbors, "n_neighbors", low=1, high=size - 1)
    generator = get(method, kind="generator")
    matrix = None
    if graph is not None and not (isinstance(graph, str) and graph == "knn"):
        from cclust.graph_generators import check_graph

        matrix = check_graph(graph, n)

    def cluster(rows, seed):
        """(len(rows), n_resolutions) labels of the objects ``rows`` at every resolution."""
        sub = None if matrix is None else matrix[rows][:, rows]
        ensemble = generator(np.ascontiguousarray(X[rows]), None, n_partitions=len(grid), resolutions=grid,
                             n_neighbors=n_neighbors, graph=sub, random_state=seed, n_jobs=1)
        return np.asarray(ensemble.labels, dtype=np.int64)

    seeds = spawn_seed_sequences(random_state, n_resamples + 3)
    full = cluster(np.arange(n), seeds[0])
    draw = np.random.default_rng(seeds[1])
    samples = [np.sort(draw.choice(n, size=size, replace=False)) for _ in range(n_resamples)]
    sub_labels = np.full((len(grid), n, n_resamples), -1, dtype=np.int32)

    def one(b):
        sub_labels[:, samples[b], b] = cluster(samples[b], seeds[b + 3]).T

    # subsamples side by side, each clustered in one thread: every subsample has its own seed
    # and its own column, so the result does not depend on the number of threads
    threads = min(check_n_jobs(n_jobs, "n_jobs"), n_resamples)
    if threads > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(n_resamples)))
    else:
        for b in range(n_resamples):
            one(b)
    boot = np.random.default_rng(seeds[2])
    labels, clusters, objects = [], [], []
    median, low, high = (np.full(len(grid), np.nan) for _ in range(3))
    for i in range(len(grid)):
        codes, k = _codes(full[:, i])
        silhouette = coclustering_silhouette(sub_labels[i], codes, k)
        scores = np.array([silhouette[codes == c].mean() for c in range(k)]) if k > 1 else np.full(1, np.nan)
        labels.append(codes)
        objects.append(silhouette)
        clusters.append(scores)
        if k > 1:
            median[i], low[i], high[i] = _median_interval(scores, boot)
    result = ResolutionChoice(resolutions=np.asarray(grid), n_clusters=np.array([int(c.max()) + 1 for c in labels]),
                              labels=labels, cluster_stability=clusters, object_stability=objects, median=median,
                              ci_low=low, ci_high=high, method=method, n_resamples=n_resamples,
                              subsample=subsample, subsample_size=size)
    _recommend(result)
    if is_adata and key_added is not None:
        if result.recommended is None:
            raise ValidationError(f"no resolution can be written to data.obs[{key_added!r}]: every resolution of "
                                  f"{list(grid)} gave one cluster; try higher resolutions.")
        best = result.labels_at(result.recommended)
        stats = {"recommended": result.recommended, "most_stable": result.most_stable,
                 "threshold": result.threshold, "method": method, "n_resamples": n_resamples,
                 "subsample": subsample, "summary": result.summary(),
                 **{key: np.asarray(value, dtype=np.float64) for key, value in result.table(as_frame=False).items()
                    if key not in ("cluster_stability", "recommended")},
                 "cluster_stability": np.asarray(result.cluster_stability[result._index(result.recommended)])}
        _anndata.write_results(data, key_added, best, int(best.max()) + 1, stats)
    return result


def _check_resolutions(resolutions):
    from cclust.validation import check_float

    if resolutions is None:
        return DEFAULT_RESOLUTIONS
    if np.isscalar(resolutions):
        values = [resolutions]
    else:
        try:
            values = list(resolutions)
        except TypeError:
            raise ValidationError(f"resolutions must be a sequence of numbers > 0, got {resolutions!r}.") from None
    if not values:
        raise ValidationError("resolutions must hold at least one resolution > 0, got an empty sequence; pass e.g. "
                              "resolutions=(0.25, 0.5, 1.0).")
    grid = sorted(check_float(v, "resolutions", low=0, low_open=True) for v in values)
    repeated = [a for a, b in zip(grid, grid[1:]) if a == b]
    if repeated:
        raise ValidationError(f"resolutions holds {repeated[0]:g} more than once; give each resolution once.")
    return tuple(grid)


def _codes(column):
    """Codes 0..K-1 in order of first appearance, and K."""
    _, first, inverse = np.unique(column, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    codes = order[inverse.reshape(-1)].astype(np.int64)
    return codes, int(first.shape[0])


def coclustering_silhouette(L: npt.NDArray[np.integer[Any]], labels: npt.NDArray[np.integer[Any]], k: int,
                            block_bytes: int = _BLOCK_BYTES) -> npt.NDArray[np.float64]:
    """Each object's silhouette (Rousseeuw 1987) against the clusters ``labels`` under the
    distance ``1 - f_ij``, f_ij the co-clustering frequency of i and j in the resamples ``L``.

    Parameters
    ----------
    L : ndarray of shape (n_samples, n_resamples), int
        Each resample's labels, -1 for an object it did not draw.
    labels : ndarray of shape (n_samples,), int64
        The clusters judged, codes 0..k-1.
    k : int
    block_bytes : int
        Temporaries of one row block (the n x n frequencies are never held whole).

    Returns
    -------
    ndarray of shape (n_samples,)
        ``(b - a) / max(a, b)`` with a the mean distance to the other members of the object's
        own cluster and b the smallest mean distance to another cluster's members; pairs no
        resample drew together are left out of the means; 0 for an object alone in its cluster
        (or with a = b = 0); NaN when k = 1 or the object was never drawn.
    """
    n, n_resamples = L.shape
    drawn = L >= 0
    # one-hot of every resample's clusters side by side: (n, sum of their K), a row per object
    widths = np.where(drawn.any(axis=0), L.max(axis=0) + 1, 0)
    offsets = np.concatenate(([0], np.cumsum(widths)[:-1]))
    rows, cols = np.nonzero(drawn)
    onehot = sp.csr_matrix((np.ones(rows.shape[0]), (rows, L[rows, cols] + offsets[cols])),
                           shape=(n, int(widths.sum())))
    sampled = drawn.astype(np.float64)
    members = sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, k))
    sizes = np.bincount(labels, minlength=k)
    out = np.full(n, np.nan)
    if k < 2:
        return out
    step = max(1, block_bytes // (32 * n))
    for start in range(0, n, step):
        block = np.arange(start, min(start + step, n))
        together = (onehot[block] @ onehot.T).toarray()
        # counts of resamples drawing both: integers, exact in float64 whatever the summation order
        both = sampled[block] @ sampled.T
        valid = both > 0
        valid[np.arange(block.shape[0]), block] = False
        distance = np.zeros_like(together)
        np.divide(together, both, out=distance, where=valid)
        distance = np.where(valid, 1.0 - distance, 0.0)
        # sparse products: sums in a fixed order, the same for any thread count
        totals = (members.T @ distance.T).T
        counts = (members.T @ valid.astype(np.float64).T).T
        with np.errstate(invalid="ignore", divide="ignore"):
            means = totals / counts
        own = labels[block]
        a = means[np.arange(block.shape[0]), own]
        means[np.arange(block.shape[0]), own] = np.inf
        means[counts == 0] = np.inf
        b = means.min(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            top = np.maximum(a, b)
            s = np.where(top > 0, (b - a) / np.where(top > 0, top, 1.0), 0.0)
        s[sizes[own] == 1] = 0.0
        s[~np.isfinite(a) & (sizes[own] > 1)] = np.nan
        s[~np.isfinite(b)] = np.nan
        out[block] = s
    return out


def _median_interval(scores, rng):
    """The median of ``scores`` and its percentile bootstrap interval (:data:`N_BOOTSTRAP`
    draws of the scores with replacement)."""
    scores = np.asarray(scores, dtype=np.float64)
    scores = scores[np.isfinite(scores)]
    draws = scores[rng.integers(0, scores.shape[0], size=(N_BOOTSTRAP, scores.shape[0]))]
    medians = np.median(draws, axis=1)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(medians, [tail, 1.0 - tail])
    return float(np.median(scores)), float(low), float(high)


def _recommend(result):
    """chooseR's rule on a filled result: the highest resolution whose median reaches the lower
    bound of the interval of the resolution with the highest median."""
    median = result.median
    if not np.isfinite(median).any():
        return
    # the highest median; among equal medians the highest resolution
    best = int(np.flatnonzero(median == np.nanmax(median))[-1])
    threshold = result.ci_low[best]
    passing = np.flatnonzero(np.isfinite(median) & (median >= threshold))
    chosen = int(passing[-1])
    result.most_stable = float(result.resolutions[best])
    result.recommended = float(result.resolutions[chosen])
    result.threshold = float(threshold)
    if chosen == len(median) - 1 and len(median) > 1:
        result.warnings.append("The recommended resolution is the highest of the grid: higher resolutions may be as "
                               "stable; extend the grid upwards to check.")
