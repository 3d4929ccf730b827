"""Choosing the number of clusters: Monti et al.'s resampling consensus matrix, its CDF, the
delta-area curve, PAC, and item and cluster consensus.

For every K, ``n_resamples`` random subsamples of the objects are clustered at K (by one k-means
or hierarchical clustering each, Monti et al.'s protocol as ConsensusClusterPlus runs it, or by
a consensus function over generated partitions), and the consensus matrix ``M_K(i, j)`` (Monti
et al. 2003, eq. 2-3) counts how often i and j were put in the same cluster among the resamples
that drew both. A stable K gives entries near 0 and 1; the empirical CDF of the entries, the area
under it, the relative growth of that area (delta area) and the proportion of ambiguous entries
(PAC, Şenbabaoğlu et al. 2014) summarise how far from 0/1 the entries are. The passes live in
:mod:`cclust._monti`.
"""
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, fields

import numpy as np

from cclust._progress import progress
from cclust.validation import check_distinct_rows, check_float, check_int, check_n_threads
from cclust.errors import ValidationError
from cclust._pipeline import (
    RESERVED_GENERATOR,
    RESERVED_METHOD,
    call_method,
    check_name,
    check_params_dict,
    child_seeds,
    generate_ensemble,
    object_index,
    validate_X,
)

__all__ = ["CRITERIA", "ClusterStability", "GapResult", "SelectKResult", "cluster_stability", "gap_statistic",
           "select_k"]

#: The rules select_k can recommend K by ("rcsi" needs a reference null; "gap" the features).
CRITERIA = ("rcsi", "pac", "delta_area", "objective", "gap")

#: Reference data sets of the default null: measured in docs/benchmarks.md ("select_k's
#: reference null") to keep the default within 3x the plain protocol's time.
DEFAULT_REFERENCES = 10

#: Resamples per K of the Monti protocol: with the reference null (every reference data set
#: runs the same protocol), and without it (ConsensusClusterPlus's plain protocol).
RESAMPLES_WITH_NULL, RESAMPLES_PLAIN = 10, 100

#: k-means runs per resample with the reference null (the best of them kept): measured in
#: docs/benchmarks.md ("select_k's reference null") for the power on blobs; the plain protocol
#: keeps ConsensusClusterPlus's one run.
INNER_STARTS_WITH_NULL = 3



@dataclass(frozen=True, eq=False)
class SelectKResult:
    """What :func:`select_k` measured for every K, and the K it recommends.

    Attributes
    ----------
    k_values : ndarray of shape (m,), int64
        The K tried, increasing.
    cdf_grid : ndarray of shape (g,), float64
        Points in [0, 1] (0 and 1 included, increasing) at which ``cdf`` is given.
    cdf : ndarray of shape (m, g), float64
        ``cdf[k, j]`` is the fraction of consensus-matrix entries (pairs i < j sampled together
        at least once) that are ``<= cdf_grid[j]``.
    area : ndarray of shape (m,)
        Area under the CDF, A(K) (Monti et al. 2003), on ``cdf_grid``.
    delta_area : ndarray of shape (m,)
        Relative increase of the area: ``A(K)`` for the first K, then
        ``(A(K) - A(K_prev)) / A(K_prev)``.
    pac : ndarray of shape (m,)
        Proportion of ambiguous clustering ``CDF(u2) - CDF(u1)`` (Senbabaoglu et al. 2014).
    pac_se, area_se : ndarray of shape (m,) or None
        Standard errors of ``pac`` and ``area``: 0 where they are exact (the dense route, or the
        sparse route when it read every pair), else those of estimates from the sparse route's
        random pairs (``select_k``'s ``pair_tolerance``). None in results made without them.
    n_pairs : int
        The object pairs the CDF, area and PAC were read from: every pair ``n(n - 1)/2`` when
        exact, else the sparse route's random sample.
    sketch : ndarray of int64 or None
        With ``select_k(..., sketch=s)``: the objects the protocol ran on (the first sketch).
        Everything but ``labels`` and ``item_consensus`` (NaN outside the sketch) is then about
        them: cluster sizes, consensus matrices, stability.
    sketch_method : str or None
    sketch_propagation : str or None
        With a sketch: how the other objects were labelled, ``"centroid"`` or ``"knn"``.
    sketch_best_k : tuple of int or None
        With ``n_sketches >= 2``: the K each sketch chose.
    sketch_agreement : dict or None
        With ``n_sketches >= 2``: K -> mean adjusted Rand index between the sketches' labels of
        every object (1: the sample does not matter).
    objective : ndarray of shape (m,)
        The method's own criterion of a fit on all the data at each K.
    objective_name : str
        What ``objective`` is (and whether higher or lower is better).
    best_k : int
        The recommended K.
    criterion : str
        The rule that picked it: ``"rcsi"``, ``"pac"``, ``"delta_area"``, ``"objective"`` or
        ``"gap"``.
    reason : str
        One sentence saying why.
    method : str
        The consensus method.
    consensus_matrices : dict or None
        K -> consensus matrix, when ``keep_matrices=True``: (n, n) float64 (0 for pairs never
        drawn together, 1 on the diagonal of objects ever drawn) on the dense route; the sparse
        graph of each object's strongest entries (scipy CSR) on the sparse route.
    labels : dict
        K -> int64 labels: the average-linkage clusters of the consensus matrix (default), or the
        consensus method's fit on all the data (``labels_from="fit"``); when ``best_k`` is 1, also
        ``labels[1]``, every object in one cluster.
    item_consensus : dict
        K -> (n, K) float64: ``[i, c]`` is the mean consensus of object i with the members
        (other than i) of cluster c of ``labels[K]`` (ConsensusClusterPlus's item consensus;
        NaN where the cluster has no other member).
    cluster_consensus : dict
        K -> (K,) float64: the mean consensus over the pairs of members of each cluster of
        ``labels[K]`` (NaN for a cluster of one).
    cluster_stability : dict
        K -> :class:`ClusterStability` of the clusters of ``labels[K]`` (Hennig 2007): in every
        resample, each cluster's best Jaccard similarity with a cluster of the resample's own
        clustering at K, on the resample's objects; its mean (below 0.6: not stable; above
        0.85: highly stable) and the resamples in which the cluster dissolved (<= 0.5) or was
        recovered (> 0.75). This is fpc's ``clusterboot`` with subsetting, its resamples and
        clusterer those of the protocol, so it costs no clustering: where cluster consensus
        says how often a cluster's members stay together, the Jaccard also counts the objects
        that join them.
    inner : str or None
        The Monti protocol's clusterer (``"kmeans"``, ``"hierarchical"``), None for a consensus
        method.
    route : str
        ``"dense"`` (exact n x n matrices) or ``"sparse"`` (estimated; see :func:`select_k`).
    n_resamples : int
        Resamples per K.
    warnings : tuple of str
        What to be wary of; so far one case: ``best_k`` is the largest K tried, or the smallest
        when it is above 2, so the best K may lie outside the range (widen ``k_range``).
    null : str or None
        The reference distribution (``"gaussian"``, ``"uniform"``), None without a reference.
    n_references : int
        Reference data sets (B), 0 without a reference.
    pac_reference : ndarray of shape (B, m) or None
        PAC of every reference data set at every K.
    rcsi, rcsi_se : ndarray of shape (m,) or None
        The relative cluster stability index ``mean_b log PAC_b - log PAC`` (John et al. 2020)
        and its standard error: how much more stable the data's clusters are than those of data
        without clusters of the same shape (0: no more stable).
    p_value : ndarray of shape (m,) or None
        The evidence against "no cluster structure" at each K, the one ``best_k`` is decided by:
        the predictive p-value (the chance that one more reference data set is at least as
        stable, predicted from the B references with Student's t on the logit scale; see
        :func:`cclust._reference.predictive_p`), else, where the references' PACs have no
        spread, the Monte Carlo p-value.
    p_value_monte_carlo : ndarray of shape (m,) or None
        ``(1 + #{b : PAC_b < PAC}) / (B + 1)``; never below ``1 / (B + 1)``.
    p_value_beta : ndarray of shape (m,) or None
        M3C's p-value (a beta distribution fitted to the references' PACs, taken as exact), for
        comparison with M3C; NaN where no beta distribution fits. With few references its far
        tail overstates the evidence (exactly 0 for a PAC of 0), so no decision uses it.
    alpha : float
        The significance level of the decision (Bonferroni over the K tried).
    gap : GapResult or None
        With ``criterion="gap"``: the gap statistic's table for K = 1..max(k_range).
    index : pandas.Index or None
        The row labels of ``data`` when it is a pandas DataFrame (None otherwise): the objects
        of ``labels`` and ``item_consensus``, in order; :meth:`labels_series` keys labels by it.
    """

    k_values: np.ndarray
    cdf_grid: np.ndarray
    cdf: np.ndarray
    area: np.ndarray
    delta_area: np.ndarray
    pac: np.ndarray
    objective: np.ndarray
    objective_name: str
    best_k: int
    criterion: str
    reason: str
    method: str
    consensus_matrices: dict | None
    labels: dict
    warnings: tuple = ()
    item_consensus: dict = None
    cluster_consensus: dict = None
    inner: str = None
    route: str = "dense"
    n_resamples: int = 0
    null: str = None
    n_references: int = 0
    pac_reference: np.ndarray = None
    rcsi: np.ndarray = None
    rcsi_se: np.ndarray = None
    p_value: np.ndarray = None
    p_value_monte_carlo: np.ndarray = None
    p_value_beta: np.ndarray = None
    alpha: float = 0.05
    index: object = None
    cluster_stability: dict = None
    gap: "GapResult" = None
    pac_se: np.ndarray = None
    area_se: np.ndarray = None
    n_pairs: int = 0
    sketch: np.ndarray = None
    sketch_method: str = None
    sketch_propagation: str = None
    sketch_best_k: tuple = None
    sketch_agreement: dict = None

    @property
    def has_objective(self):
        """Whether the consensus method reported a criterion for some K (method="monti" has
        none): without one, :meth:`as_table`, :meth:`summary` and the figures leave it out."""
        return bool(np.isfinite(np.asarray(self.objective, dtype=float)).any())

    def labels_series(self, k=None):
        """The labels at ``k`` (default ``best_k``) as a pandas Series indexed by :attr:`index`
        (a RangeIndex when ``data`` had none), named ``"cluster"``.

        Examples
        --------
        >>> import pandas as pd
        >>> from cclust.datasets import load_iris
        >>> X, _ = load_iris()
        >>> df = pd.DataFrame(X[::10], index=[f"plant{i}" for i in range(15)])
        >>> result = select_k(df, [2, 3], n_resamples=5, random_state=0)
        >>> result.labels_series().index[:2].tolist()
        ['plant0', 'plant1']
        """
        import pandas as pd

        k = self.best_k if k is None else k
        if k not in self.labels:
            raise ValidationError(f"k must be one of the K tried ({sorted(self.labels)}), got {k!r}.")
        return pd.Series(self.labels[k], index=self.index, name="cluster")

    def as_table(self):
        """The per-K numbers as a dict of equal-length lists (``pandas.DataFrame(...)``-ready);
        ``objective`` only when the method reported one.

        Examples
        --------
        >>> import numpy as np
        >>> from cclust.selection import select_k
        >>> rng = np.random.default_rng(0)
        >>> X = np.vstack([rng.normal(c, 0.1, (15, 2)) for c in (0, 3)])
        >>> table = select_k(X, [2, 3], n_resamples=5, random_state=0, null=None).as_table()
        >>> sorted(table), table["k"]
        (['area', 'delta_area', 'k', 'pac'], [2, 3])
        >>> sorted(select_k(X, [2, 3], n_resamples=5, n_references=3, random_state=0).as_table())
        ... # doctest: +NORMALIZE_WHITESPACE
        ['area', 'delta_area', 'k', 'p_value', 'p_value_beta', 'p_value_monte_carlo', 'pac',
         'pac_reference_mean', 'pac_reference_sd', 'rcsi', 'rcsi_se']
        """
        table = {
            "k": self.k_values.tolist(),
            "area": self.area.tolist(),
            "delta_area": self.delta_area.tolist(),
            "pac": self.pac.tolist(),
        }
        if self._estimated():
            table.update(area_se=self.area_se.tolist(), pac_se=self.pac_se.tolist())
        if self.null is not None:
            table.update(pac_reference_mean=self.pac_reference.mean(axis=0).tolist(),
                         pac_reference_sd=_sd(self.pac_reference).tolist(), rcsi=self.rcsi.tolist(),
                         rcsi_se=self.rcsi_se.tolist(), p_value=self.p_value.tolist(),
                         p_value_monte_carlo=self.p_value_monte_carlo.tolist(),
                         p_value_beta=self.p_value_beta.tolist())
        if self.gap is not None:
            rows = self.k_values - 1
            table.update(gap=self.gap.gap[rows].tolist(), gap_se=self.gap.se_sim[rows].tolist())
        if self.has_objective:
            table["objective"] = self.objective.tolist()
        return table

    def to_dict(self):
        """Every field as plain Python values (lists, floats, str), e.g. for JSON."""
        def plain(value):
            if isinstance(value, np.ndarray):
                return value.tolist()
            if isinstance(value, dict):  # K -> array (a sparse kNN graph is left out: too large)
                return {int(k): v.tolist() if isinstance(v, np.ndarray) else v.to_dict()
                        if isinstance(v, ClusterStability) else float(v) for k, v in value.items()
                        if isinstance(v, (np.ndarray, ClusterStability, float))}
            if isinstance(value, tuple):
                return list(value)
            if hasattr(value, "tolist"):  # a pandas Index
                return value.tolist()
            if isinstance(value, GapResult):
                return {key: v for key, v in value.to_dict().items() if key != "labels"}
            return value

        return {field.name: plain(getattr(self, field.name)) for field in fields(self)
                if field.name != "index" or self.index is not None}

    def summary(self):
        """A text table (K, area, delta area, PAC, and the objective when the method reported
        one) with the recommendation.

        Examples
        --------
        >>> import numpy as np
        >>> from cclust.selection import select_k
        >>> rng = np.random.default_rng(0)
        >>> X = np.vstack([rng.normal(c, 0.1, (15, 2)) for c in ((0, 0), (3, 0), (0, 3))])
        >>> print(select_k(X, [2, 3], n_resamples=5, random_state=0).summary())
        ... # doctest: +NORMALIZE_WHITESPACE, +ELLIPSIS
        select_k with monti (kmeans), 5 resamples, ... reference null: 10 uniform data sets ...
          K    area  delta area     PAC    reference PAC           RCSI    p-value
          2  ...
          3  ...
        best K = 3 (rcsi): ...
        """
        how = f"monti ({self.inner})" if self.method == "monti" else self.method
        has_objective = self.has_objective
        head = f"select_k with {how}, {self.n_resamples} resamples, {self.route} consensus matrix"
        if self.null is not None:
            head += f"; reference null: {self.n_references} {self.null} data sets of the same shape"
        if self.sketch is not None:
            rule = ("a vote of their nearest sketch objects" if self.sketch_propagation == "knn"
                    else "the nearest consensus centroid")
            head += (f"; run on a {self.sketch_method} sketch of {self.sketch.shape[0]} of the {len(self.labels[self.best_k])} "
                     f"objects, the others labelled by {rule}")
        if has_objective:
            head += f"; objective = {self.objective_name or 'n/a'}"
        estimated = self._estimated()
        if estimated:
            head += f"; area and PAC estimated from {self.n_pairs} random object pairs (± one standard error)"
        columns = f"{'K':>3}  {'area':>6}  {'delta area':>10}  {'PAC':>6}"
        if estimated:
            columns = f"{'K':>3}  {'area':>15}  {'delta area':>10}  {'PAC':>15}"
        if self.null is not None:
            columns += f"  {'reference PAC':>15}  {'RCSI':>13}  {'p-value':>9}"
        if self.gap is not None:
            columns += f"  {'gap':>17}"
        if has_objective:
            columns += f"  {'objective':>9}"
        lines = [head, columns]
        if self.null is not None:
            mean, sd = self.pac_reference.mean(axis=0), _sd(self.pac_reference)
        for i, k in enumerate(self.k_values.tolist()):
            mark = "  <-" if k == self.best_k else ""
            line = f"{k:>3}  {self.area[i]:>6.4f}  {self.delta_area[i]:>10.4f}  {self.pac[i]:>6.4f}"
            if estimated:
                area = f"{self.area[i]:.4f} ± {self.area_se[i]:.4f}"
                pac = f"{self.pac[i]:.4f} ± {self.pac_se[i]:.4f}"
                line = f"{k:>3}  {area:>15}  {self.delta_area[i]:>10.4f}  {pac:>15}"
            if self.null is not None:
                ref = f"{mean[i]:.4f} ± {sd[i]:.4f}"
                rc = f"{self.rcsi[i]:.3f} ± {self.rcsi_se[i]:.3f}"
                line += f"  {ref:>15}  {rc:>13}  {format_p(self.p_value[i]):>9}"
            if self.gap is not None:
                gap = f"{self.gap.gap[k - 1]:.4f} ± {self.gap.se_sim[k - 1]:.4f}"
                line += f"  {gap:>17}"
            if has_objective:
                line += f"  {self.objective[i]:>9.4g}"
            lines.append(line + mark)
        lines.append(f"best K = {self.best_k} ({self.criterion}): {self.reason}")
        if self.sketch_best_k is not None:
            agreement = ", ".join(f"K={k}: {v:.3f}" for k, v in self.sketch_agreement.items())
            lines.append(f"{len(self.sketch_best_k)} sketches chose K = {', '.join(map(str, self.sketch_best_k))}; "
                         f"agreement of their labels (mean adjusted Rand index) {agreement}")
        lines.extend(f"warning: {text}" for text in self.warnings)
        if self.best_k in (self.cluster_stability or {}):
            lines.extend(self._cluster_lines(self.best_k))
        return "\n".join(lines)

    def _estimated(self):
        """Whether area and PAC are estimates (the sparse route from a sample of the pairs)."""
        return self.pac_se is not None and bool(np.any(np.asarray(self.pac_se) > 0)
                                                or np.any(np.asarray(self.area_se) > 0))

    def cluster_table(self, k=None):
        """Per cluster of ``labels[k]`` (default ``best_k``): its size, cluster consensus
        (Monti et al. 2003), and mean Jaccard, dissolved and recovered counts over the resamples
        (Hennig 2007; see ``cluster_stability``), as a dict of equal-length lists.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> X = np.vstack([rng.normal(c, 0.1, (15, 2)) for c in ((0, 0), (3, 0), (0, 3))])
        >>> select_k(X, [2, 3], n_resamples=5, random_state=0).cluster_table()["mean_jaccard"]
        [1.0, 1.0, 1.0]
        """
        k = self.best_k if k is None else k
        if k not in (self.cluster_stability or {}):
            raise ValidationError(f"k must be one of the K tried ({self.k_values.tolist()}), got {k!r}.")
        stability = self.cluster_stability[k].to_dict()
        return {"k": [int(k)] * len(stability["size"]), "cluster": list(range(len(stability["size"]))),
                "size": stability["size"], "cluster_consensus": self.cluster_consensus[k].tolist(),
                "mean_jaccard": stability["mean_jaccard"], "dissolved": stability["dissolved"],
                "recovered": stability["recovered"]}

    def _cluster_lines(self, k):
        table = self.cluster_table(k)
        stability = self.cluster_stability[k]
        lines = [f"clusters at K = {k}: cluster consensus (mean consensus of the pairs of members, Monti et al. "
                 f"2003) and stability (mean Jaccard over the {stability.n_resamples} resamples, Hennig 2007: below "
                 "0.6 not stable, above 0.85 highly stable)",
                 f"{'cluster':>9}  {'size':>6}  {'consensus':>9}  {'Jaccard':>7}  {'dissolved':>9}  {'recovered':>9}"]
        for c in table["cluster"]:
            lines.append(f"{c:>9}  {table['size'][c]:>6}  {table['cluster_consensus'][c]:>9.3f}  "
                         f"{table['mean_jaccard'][c]:>7.3f}  {table['dissolved'][c]:>9}  {table['recovered'][c]:>9}")
        return lines

    def __repr__(self):
        return (f"SelectKResult(method={self.method!r}, k_values={self.k_values.tolist()}, "
                f"best_k={self.best_k}, criterion={self.criterion!r})")


def _sd(values):
    values = np.asarray(values, dtype=np.float64)
    return values.std(axis=0, ddof=1) if values.shape[0] > 1 else np.full(values.shape[1:], np.nan)


def format_p(p):
    """A p-value as text, never as exactly 0: below what double precision resolves it reads
    ``< 1e-300``, the value otherwise, with two significant digits.

    Examples
    --------
    >>> format_p(0.0312), format_p(0.0), format_p(3e-9)
    ('0.031', '< 1e-300', '3e-09')
    """
    if not np.isfinite(p):
        return "n/a"
    if p <= 1e-300:
        return "< 1e-300"
    return f"{p:.2g}"


def _inner_algorithm(inner, inner_params, method, default_starts=1):
    """``(algorithm, init, n_init)`` named by select_k's ``inner_params`` (None: Lloyd, its own
    init, ``default_starts`` runs per resample)."""
    from cclust import _monti

    if inner_params is None:
        return "lloyd", None, default_starts
    if not isinstance(inner_params, dict):
        raise ValidationError(f"inner_params must be a dict or None, got {type(inner_params).__name__}.")
    if method != "monti" or inner != "kmeans":
        raise ValidationError(
            f"inner_params sets the k-means inner clusterer of method='monti', inner='kmeans'; got "
            f"method={method!r}, inner={inner!r}.")
    unknown = sorted(set(inner_params) - {"algorithm", "init", "n_init"})
    if unknown:
        raise ValidationError(f"inner_params has unknown key(s) {unknown}; the k-means inner clusterer takes "
                              "'algorithm', 'init' and 'n_init'.")
    algorithm = inner_params.get("algorithm", "lloyd")
    if algorithm not in _monti.KMEANS_ALGORITHMS:
        raise ValidationError(f"inner_params['algorithm'] must be one of {list(_monti.KMEANS_ALGORITHMS)}, "
                              f"got {algorithm!r}.")
    init = inner_params.get("init")
    if init is not None and init not in _monti.KMEANS_INITS:
        raise ValidationError(f"inner_params['init'] must be one of {list(_monti.KMEANS_INITS)}, got {init!r}.")
    if algorithm == "hartigan-wong":
        n_init = check_int(inner_params.get("n_init", 1), "inner_params['n_init']", low=1, high=1)
    else:
        n_init = check_int(inner_params.get("n_init", default_starts), "inner_params['n_init']", low=1)
    return algorithm, init, n_init


def select_k(data, k_range=range(2, 9), *, method="monti", inner="kmeans", inner_params=None, generator="kmeans",
             n_partitions=50, n_resamples=None, subsample=0.8, method_params=None, generator_params=None,
             feature_subsample=1.0, item_weights=None, feature_weights=None, criterion=None,
             pac_interval=(0.1, 0.9), labels_from="consensus", matrix="auto", pair_tolerance=None, null="auto",
             n_references=None,
             alpha=0.05, gap_rule="Tibs2001SEmax", distance="euclidean", inner_linkage="average",
             final_linkage="average", sketch=None, sketch_method="geometric", n_sketches=1, propagation="centroid",
             random_state=None, n_jobs=None, verbose=0, keep_matrices=False, max_bytes=None, missing_features="error",
             layer=None, use_rep=None, key_added="cclust", copy=False):
    """Recommend a number of clusters by resampling consensus (Monti et al. 2003) judged against
    a reference null (John et al. 2020): K = 1, "no cluster structure", is a possible answer.

    By default this is Monti et al.'s protocol as ConsensusClusterPlus runs it (Wilkerson &
    Hayes 2010): ``n_resamples`` times, a random ``subsample`` fraction of the objects is drawn
    (``floor(subsample * n)`` of them, without replacement; the same draws for every K) and
    clustered at exactly K by the ``inner`` clusterer. The consensus matrix

        M_K(i, j) = #(resamples putting i and j in one cluster) / #(resamples drawing both)

    (Monti et al. 2003, eq. 3; 0 for a pair never drawn together, as in ConsensusClusterPlus) is
    summarised by:

    * the empirical CDF of its entries ``M_K(i, j)`` over all pairs i < j, on the grid
      0, 0.01, ..., 1 (ConsensusClusterPlus's 100-bin histogram);
    * the area under the CDF, ``A(K) = sum_{j=1}^{100} 0.01 CDF(j / 100)`` (Monti et al.'s
      ``sum_i (x_i - x_{i-1}) CDF(x_i)`` on that grid, ConsensusClusterPlus's ``areaK``);
    * the delta area: ``A(K_1)`` for the smallest K tried, then ``(A(K) - A(K_prev)) /
      A(K_prev)``, as ConsensusClusterPlus plots it;
    * PAC, the proportion of ambiguous clustering ``CDF(u2) - CDF(u1)`` for ``pac_interval =
      (u1, u2)``, the share of entries in ``(u1, u2]`` (Şenbabaoğlu et al. 2014), computed from
      the entries themselves;
    * item and cluster consensus (ConsensusClusterPlus's ``calcICL``; Monti et al. 2003, sec.
      3.3): for the final clusters at K, ``m(k)`` is the mean of M over the pairs of members of
      cluster k, and ``m_i(k)`` the mean of ``M(i, j)`` over the members j != i of cluster k.

    The labels at each K come from the consensus matrix: the average-linkage tree of ``1 - M``
    cut at K (ConsensusClusterPlus's ``finalLinkage="average"``), clusters numbered in order of
    their first object.

    With ``method`` set to a registered consensus function (e.g. ``"kcc"``), each resample is
    instead clustered by generating ``n_partitions`` basic partitions of it with ``generator``
    and fusing them at K (when ``data`` is an Ensemble, its rows are taken instead); the same
    consensus matrix and summaries follow, and the method's own criterion of one fit on all the
    data is reported as ``objective``.

    **Past the memory budget** (``matrix="auto"``), nothing of size n x n is formed (memory
    linear in n): the CDF, area and PAC are estimated from ``0.25 / pair_tolerance^2`` random
    pairs (10^6 by default) whose consensus entries are computed exactly from the resamples'
    labels, so that their standard errors (``pac_se``, ``area_se``) are at most
    ``pair_tolerance``; when that is as many pairs as there are, every pair is read once and the
    values are exact (standard error 0). The labels are the average-linkage clusters of the
    exact consensus matrix of 2000 random landmark objects, every other object joining the
    landmark cluster it was clustered with most often. Item and cluster consensus are pooled
    ratios (the co-clustering counts summed over a cluster's members, over their co-sampling
    counts), read from contingency tables of each resample's labels against the clusters for
    every object; ConsensusClusterPlus's (the dense route's) mean of the ratios equals them when
    every pair was drawn together equally often (``subsample=1``). With ``keep_matrices`` each
    K's consensus matrix is the sparse graph of each object's 30 strongest entries
    (:meth:`cclust.Ensemble.knn_coassociation`). docs/guide/monti.rst compares the two routes.

    Every K uses the same resamples, and the seeds of K's runs depend only on ``random_state``
    and K, so a K gets the same numbers whatever else ``k_range`` holds.

    **Sketch, choose, propagate** (``sketch=s``, for 10^5 objects and more): the whole protocol
    runs on ``s`` objects (by default the geometric sketch of Hie et al. 2019, which keeps rare
    regions of the principal subspace; ``sketch_method="uniform"``: a simple random sample),
    and every other object then joins the consensus cluster whose centroid is nearest
    (``propagation="knn"``: the cluster most of its 15 nearest sketch objects are in; the rules of
    :func:`cclust.predict`). With
    ``n_sketches >= 2`` that many independent sketches are run: the result is the first one's,
    with the K each chose (``sketch_best_k``) and, per K, the mean adjusted Rand index between
    the sketches' labels of all the objects (``sketch_agreement``), which says how much the
    answer depends on the sample.

    **The reference null** (``null="uniform"``, the default of the Monti protocol). PAC falls with K on data without
    any cluster, so the lowest PAC favours the largest K tried (Şenbabaoğlu et al. 2014). As in
    M3C (John et al. 2020), ``n_references`` reference data sets of X's size are drawn that keep
    X's mean and principal axes and the spread along each (:mod:`cclust._reference`) but hold no
    clusters, and each runs through exactly the same protocol (the same resample draws, its own
    clustering seeds). Per K the result reports the references' PACs, the relative cluster
    stability index ``RCSI = mean_b log PAC_b - log PAC`` with its standard error, and a p-value
    for "no more stable than data without clusters": the chance that one more reference data set
    has a PAC at most the data's, predicted from the B references with Student's t on the logit
    scale (:func:`cclust._reference.predictive_p`), or the Monte Carlo p-value
    ``(1 + #{b: PAC_b < PAC}) / (B + 1)`` where the references' PACs have no spread. M3C fits a
    beta distribution to the references' PACs instead and takes it as exact, which with ten
    references puts p-values below 1e-3 several times as often as it should and gives exactly 0
    to a PAC of 0 (``p_value_beta`` keeps M3C's value for comparison; docs/benchmarks.md).
    ``best_k`` is the K of largest RCSI among those whose p-value is below
    ``alpha / m`` (m the number of K tried; Bonferroni, since the K are tried together); when
    none is, ``best_k`` is 1: the data give no evidence of cluster structure. M3C itself picks
    the largest RCSI and reports p-values unadjusted; the adjustment keeps the chance of a false
    "structure" near ``alpha`` whatever the range of K. ``null=None`` is ConsensusClusterPlus's
    plain protocol, PAC's lowest K (``criterion="pac"``) and 100 resamples.

    **An AnnData** (``pip install 'cclust[scverse]'``) as ``data`` gives its features
    (``adata.X``, ``layer`` or ``use_rep``) and receives the answer, as scanpy's tools write
    theirs: the labels at the recommended K in ``adata.obs[f"{key_added}_k{best_k}"]``
    (categorical, categories ``"0".."K-1"``), each object's item consensus with its own cluster
    in ``adata.obs[f"{key_added}_k{best_k}_item_consensus"]``, and the per-K statistics, the
    recommendation, its reason, the printed summary and the parameters in
    ``adata.uns[f"{key_added}_select_k"]``. Nothing else of it changes. Like scanpy's tools it
    then returns None (``copy=False``, the AnnData is written into) or the modified copy
    (``copy=True``); the :class:`SelectKResult` itself comes from ``select_k(features)``.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features), DataFrame, AnnData, or cclust.Ensemble
        The objects, or ready basic partitions of them (with a consensus ``method`` only).
    k_range : iterable of int, default=range(2, 9)
        The K to try, each in ``[1, n_samples]``; sorted and de-duplicated. K = 1 (no clusters)
        needs no run: with a reference null it is the answer when no K >= 2 is significant,
        whether or not ``k_range`` holds it; without one it cannot be recommended (its consensus
        is trivially perfect), so ``k_range`` may hold 1 only with a ``null``.
    method : str, default="monti"
        ``"monti"``: each resample is clustered once by ``inner`` (Monti et al.'s protocol).
        Or a registered consensus function, which fuses ``n_partitions`` partitions of each
        resample. With an Ensemble, methods needing the features (``requires_X``) cannot be used.
    inner : {"kmeans", "hierarchical"}, default="kmeans"
        The clusterer of the Monti protocol: one k-means run at exactly K (k-means++ seeding,
        Lloyd iterations; the registered ``kmeans`` generator with ``k_range=(K, K)``), or the
        average-linkage tree of the resample's Euclidean distances cut at K.
    distance : str, default="euclidean"
        The distance between objects of ``inner="hierarchical"`` (ConsensusClusterPlus's
        ``distance``): ``"euclidean"``, ``"pearson"`` and ``"spearman"`` (1 - the correlation of
        two objects across the features), ``"maximum"``, ``"manhattan"``, ``"canberra"``,
        ``"binary"``, ``"minkowski"`` (R's ``dist``, p = 2). ConsensusClusterPlus's default run
        is ``inner="hierarchical", distance="pearson"`` on the columns of a features x samples
        matrix (pass its transpose, or ``cclust select-k --samples-in-columns``). k-means is
        Euclidean only, as in ConsensusClusterPlus.
    inner_linkage, final_linkage : str, default="average"
        The linkage of the inner hierarchical clustering and of the final clusters cut from the
        consensus matrix (ConsensusClusterPlus's ``innerLinkage`` and ``finalLinkage``):
        ``"average"``, ``"complete"``, ``"single"``, ``"mcquitty"`` or ``"ward.D2"``.
    inner_params : dict or None
        Settings of the ``inner="kmeans"`` clusterer: ``{"algorithm": "lloyd"}`` (the default)
        or ``{"algorithm": "hartigan-wong"}``, the algorithm of Hartigan & Wong (1979, AS 136)
        that R's ``kmeans`` and so ConsensusClusterPlus's ``clusterAlg="km"`` run: k random
        objects as the starting centres, optimal-transfer and quick-transfer stages, at most
        10 passes (ConsensusClusterPlus's ``iter.max``). From the same start its labels are R's.
        ``"init"``: ``"random"`` (k random objects) or ``"k-means++"`` (Arthur & Vassilvitskii
        2007); the default is each algorithm's own (k-means++ for Lloyd, random objects for
        Hartigan-Wong, as R). ``"n_init"``: Lloyd runs per resample, each from the next
        start of the resample's stream, the one of lowest within sum of squares kept; default
        3 with a reference null (data and references alike), 1 without (ConsensusClusterPlus's
        one run). One run now and then lands in a local optimum (two blobs merged, another
        split), which makes the true K look less stable than a coarser K whose clusters never
        split: on Gaussian blobs the reference null found the true K in 17 of 24 cases with one
        run, 23 with two and 24 with three (docs/benchmarks.md). Hartigan-Wong runs once.
        The default stays Lloyd: Hartigan-Wong from random objects
        reproduces ConsensusClusterPlus's curves (its K on yeast), including its failure on
        well-separated blobs, where random starts put two centres in one blob;
        docs/guide/monti.rst has the measurements.
    generator : str, default="kmeans"
        A registered generator (consensus methods only; unused for an Ensemble and for a method
        that makes its own partitions of the features, such as ``usenc``).
    n_partitions : int, default=50
        Basic partitions generated per run (consensus methods only).
    n_resamples : int, default=None
        Resamples per K (Monti et al.'s H). None: 100 for the Monti protocol without a null, 10
        with one (each reference data set runs as many, each resample the best of three k-means
        runs; see ``n_references``), 50 for a consensus
        method (each of its resamples costs ``n_partitions`` clusterings and a fusion). 100 keeps
        the sampling noise of an entry of M near 0.06 (about 64 draws of each pair); PAC's
        window is 0.8 wide, so more resamples move it little. ConsensusClusterPlus's default is
        10 (noise near 0.2) and its vignette uses 1,000.
    subsample : float in (0, 1], default=0.8
        Fraction of the objects drawn in each resample (ConsensusClusterPlus's ``pItem``); it must
        keep at least max(k_range) objects.
    feature_subsample : float in (0, 1], default=1.0
        Fraction of the features each resample clusters on (ConsensusClusterPlus's
        ``pFeature``): ``floor(feature_subsample * n_features)`` of them, at least one, drawn
        without replacement per resample (the same draws for every K). Not with an Ensemble as
        ``data``.
    item_weights : array-like of shape (n_samples,), default=None
        Sampling weights of the objects (ConsensusClusterPlus's ``weightsItem``): each resample
        is R's ``sample(n, floor(subsample * n), replace = FALSE, prob = item_weights)``, i.e.
        successive sampling: every next object is drawn with probability proportional to its
        weight among the objects not drawn yet. Non-negative and finite, with at least
        ``floor(subsample * n)`` positive; only the ratios matter. A weight of 0 keeps an object
        out of every resample (its consensus entries stay 0). None: uniform.
    feature_weights : array-like of shape (n_features,), default=None
        Sampling weights of the features (``weightsFeature``), drawn the same way; like
        ConsensusClusterPlus, they matter only when ``feature_subsample < 1``.
    method_params : dict or None
        Extra keyword arguments of the consensus method.
    generator_params : dict, callable or None
        Extra keyword arguments of the generator, the same for every K; or a function of K
        returning them, for settings that depend on the K tested (e.g. ``lambda k: {"k_range":
        (k, 2 * k)}``). A fixed ``k_range`` in a dict is refused: it would make every K tested
        fuse the same kind of partitions.
    criterion : {"rcsi", "pac", "delta_area", "objective", "gap"}, default=None
        How ``best_k`` is chosen. None: ``"rcsi"`` with a ``null``, ``"pac"`` without. ``"rcsi"``:
        the largest RCSI among the significant K, else K = 1 (above); ``"pac"``: the lowest PAC
        (ties go to the smaller K); ``"delta_area"``: the largest delta area among the K after
        the first (the K after which adding a cluster gains most stability); ``"objective"``:
        the best objective of a consensus method (its name says "higher is better" or "lower is
        better"; many objectives drift with K, so prefer "pac"); ``"gap"``: the gap statistic
        (Tibshirani, Walther & Hastie 2001) of k-means on the features, computed by
        :func:`gap_statistic` for K = 1..max(k_range) with ``n_references`` reference data sets
        of the shape ``null`` names (``"uniform"`` unless ``"gaussian"`` is given) and
        ``d_power=2``, the paper's pooled within-cluster sum of squares, and ``gap_rule`` applied
        to K = 1 and the K tried; K = 1 is a possible answer. The result's ``gap`` holds the
        table.
    gap_rule : str, default="Tibs2001SEmax"
        The rule of ``criterion="gap"`` (R's ``cluster::maxSE``): ``"Tibs2001SEmax"``, the
        paper's smallest K with ``gap(K) >= gap(K+1) - s(K+1)``, or ``"firstSEmax"`` (clusGap's
        default), ``"globalSEmax"``, ``"firstmax"``, ``"globalmax"``.
    pac_interval : (float, float), default=(0.1, 0.9)
        ``(u1, u2)`` with ``0 <= u1 < u2 <= 1``.
    labels_from : {"consensus", "fit"}, default="consensus"
        Where ``labels[K]`` come from: the consensus matrix (above), or, with a consensus method,
        its one fit on all the data (the fit whose objective is reported).
    matrix : {"auto", "dense", "sparse"}, default="auto"
        ``"dense"``: the exact n x n route (refused past ``max_bytes``); ``"sparse"``: the
        estimated route above; ``"auto"``: dense when it fits the budget, which with the default
        budget (2 GiB), 10 resamples and K = 2..8 is up to 13,191 objects, the sparse route above
        (the result's ``route`` and its summary's first line say which ran).
    pair_tolerance : float in (0, 0.5), optional
        The sparse route's bound on the standard error of PAC and of the area (default 0.0005,
        10^6 pairs): ``0.25 / pair_tolerance^2`` pairs are drawn. Only with the sparse route.
    sketch : int, optional
        Run on this many objects and label the others from them (above; ``propagation``).
        Needs the features (not an Ensemble) and ``method="monti"``.
    sketch_method : {"geometric", "uniform"}, default="geometric"
    n_sketches : int, default=1
        Independent sketches whose agreement is reported (``sketch`` only).
    propagation : {"centroid", "knn"}, default="centroid"
        How the objects outside the sketch are labelled (``sketch`` only): the nearest
        consensus centroid, or a vote of the 15 nearest sketch objects (exact neighbours, ties
        broken as :func:`cclust.predict` breaks them).
    null : {"auto", "gaussian", "uniform"} or None, default="auto"
        The reference distribution ("auto": ``"uniform"`` for the Monti protocol, None for a
        consensus method, whose every reference run generates and fuses ``n_partitions``
        partitions per resample and K, and None with ``criterion="gap"``, which has its own
        reference): independent normal scores with the spread of each of X's
        principal components (M3C's reference, a Gaussian with X's covariance), or uniform scores
        over each component's range (Tibshirani, Walther & Hastie 2001's reference (b)), rotated
        back onto X's axes. None: no reference (ConsensusClusterPlus's plain protocol). Needs
        the features X (not an Ensemble); with a consensus method the references run through
        the same generator and method. The uniform reference is the default because it
        is the better calibrated of the two on data without clusters: on 24 small null data sets
        of four shapes (isotropic, correlated, uniform box, elongated; n 60-110, d 2-5), 10
        references and 25 resamples answered K = 1 on 23 with it and on 21 with the Gaussian,
        which mistakes a uniform box for clusters (docs/benchmarks.md; measured with one
        k-means run per resample).
    n_references : int, default=None
        Reference data sets B (at least 2), of the null and of the gap statistic. None: 10,
        which with 10 resamples of the data and of each reference, three k-means runs each,
        keeps the default near 3x the plain protocol's 100 resamples of one run (CPU 3.4x at
        n = 300 and at a thousand objects, 2.5x at three thousand); the predictive p-value
        reaches below ``1 / (B + 1)`` as far as B references support. More references make the
        p-values steadier (M3C runs 25 to 100). This default answered K = 1 on 38 of 40 small data
        sets without clusters (n 60-300) and on 55 of the 58 checked of 100 larger ones (n 100 to
        five thousand, d 2-50), and found the true K on 55 of 56 blob data sets (K = 2..8); one
        run per resample found 42 of the 56 with M3C's beta p-value (docs/benchmarks.md).
    alpha : float in (0, 1), default=0.05
        Significance level of the reference null's decision (Bonferroni over the K tried).
    random_state : int, numpy.random.Generator or None, default=None
        Same value, same result, for any ``n_jobs``.
    n_jobs : int or None, default=None
        Threads (labels do not depend on it).
    verbose : int, default=0
        A progress bar over the K (on a terminal only).
    keep_matrices : bool, default=False
        Return every consensus matrix: (n, n) float64 each on the dense route, the sparse kNN
        consensus graph on the sparse route.
    max_bytes : int, optional
        Memory budget; default ``cclust.validation.memory_budget()`` (``CCLUST_MEMORY_BUDGET``).
        The dense route's estimate counts the co-sampling and co-clustering counts (float32
        n x n each), the condensed distances ``1 - M`` and average linkage's copy of them
        (float64, n(n - 1)/2 each), and a float64 n x n per K kept.
    missing_features : {"error", "mean"}, default="error"
        NaN cells of ``data`` (features): refused, naming the first one's row and column (by
        label for a DataFrame), or filled with their column's mean, as the command line's
        ``--missing-features mean`` does. Infinite values are always refused.
    layer : str, optional
        AnnData ``data`` only: the features are ``data.layers[layer]`` instead of ``data.X``.
    use_rep : str, optional
        AnnData ``data`` only: the features are ``data.obsm[use_rep]`` (e.g. ``"X_pca"``).
    key_added : str, default="cclust"
        AnnData ``data`` only: the prefix of the ``obs`` and ``uns`` keys written.
    copy : bool, default=False
        AnnData ``data`` only: write into a copy and return it, leaving ``data`` as it was.

    Returns
    -------
    SelectKResult
        Or, for an AnnData ``data``, None (``copy=False``) or the modified copy.

    Raises
    ------
    ValidationError
        Bad ``k_range``, ``subsample``, ``n_resamples``, ``criterion``, ``pac_interval``,
        ``inner``, ``labels_from``, ``matrix`` or ``generator_params``.
    MemoryBudgetError
        ``matrix="dense"`` (or ``"sparse"``) past the budget.

    References
    ----------
    S. Monti, P. Tamayo, J. Mesirov, T. Golub. Consensus clustering: a resampling-based method
    for class discovery and visualization of gene expression microarray data. Machine Learning
    52:91-118, 2003.
    M. D. Wilkerson, D. N. Hayes. ConsensusClusterPlus: a class discovery tool with confidence
    assessments and item tracking. Bioinformatics 26(12):1572-1573, 2010.
    C. R. John, D. Watson, D. Russ, K. Goldmann, M. Ehrenstein, C. Pitzalis, M. Lewis, M. Barnes.
    M3C: Monte Carlo reference-based consensus clustering. Scientific Reports 10:1816, 2020.
    R. Tibshirani, G. Walther, T. Hastie. Estimating the number of clusters in a data set via
    the gap statistic. Journal of the Royal Statistical Society B 63(2):411-423, 2001.
    Y. Şenbabaoğlu, G. Michailidis, J. Z. Li. Critical limitations of consensus clustering in
    class discovery. Scientific Reports 4:6207, 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust import select_k
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.2, (20, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    >>> result = select_k(X, range(2, 6), random_state=0)
    >>> result.best_k, result.criterion
    (3, 'rcsi')
    >>> result.cluster_consensus[3].round(2).tolist()
    [1.0, 1.0, 1.0]
    """
    from cclust.interop import _anndata

    if _anndata.is_anndata(data):
        return _select_k_on_anndata(dict(locals()))
    _anndata.check_array_options(data, "data", layer=layer is not None, use_rep=use_rep is not None,
                                 key_added=key_added != "cclust", copy=copy is not False)
    if sketch is not None:
        arguments = dict(locals())
        for name in ("_anndata", "layer", "use_rep", "key_added", "copy"):
            arguments.pop(name)
        return _select_k_on_sketches(arguments)
    if n_sketches != 1:
        raise ValidationError(f"n_sketches={n_sketches!r} compares sketches, but no sketch is given; pass sketch=s "
                              "(the objects per sketch) or drop n_sketches.")
    if propagation != "centroid":
        raise ValidationError(f"propagation={propagation!r} labels the objects outside a sketch, but no sketch is "
                              "given; pass sketch=s (the objects to run on) or drop propagation.")
    from cclust.ensemble import Ensemble
    from cclust.validation import memory_budget, require_memory
    from cclust.registry import get
    from cclust.base import method_info
    from cclust import _monti

    from cclust import _reference

    monti = method == "monti"
    null = resolve_null(null, method, criterion)
    if null is not None and null not in _reference.NULLS:
        raise ValidationError(f"null must be one of {list(_reference.NULLS) + ['auto']} or None, got {null!r}.")
    if criterion is None:
        criterion = "rcsi" if null is not None else "pac"
    if criterion == "gap":
        if gap_rule not in _reference.GAP_RULES:
            raise ValidationError(f"gap_rule must be one of {list(_reference.GAP_RULES)}, got {gap_rule!r}.")
        if isinstance(data, Ensemble):
            raise ValidationError("criterion='gap' clusters the features by k-means, but data is an Ensemble; pass "
                                  "the features X as data, or choose criterion='pac'.")
    if criterion == "rcsi" and null is None:
        raise ValidationError("criterion='rcsi' compares the data with a reference null; pass null='gaussian' "
                              "(or 'uniform'), or choose criterion='pac'.")
    if null is not None or criterion == "gap":
        n_references = _reference_count(n_references)
    if null is not None:
        alpha = check_float(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    if inner not in _monti.INNER:
        raise ValidationError(f"inner must be one of {list(_monti.INNER)}, got {inner!r}.")
    algorithm, init, n_init = _inner_algorithm(inner, inner_params, method,
                                               INNER_STARTS_WITH_NULL if null is not None else 1)
    if distance not in _monti.DISTANCES:
        raise ValidationError(f"distance must be one of {list(_monti.DISTANCES)}, got {distance!r}.")
    if distance != "euclidean" and (not monti or inner != "hierarchical"):
        raise ValidationError(f"distance={distance!r} is the distance of the hierarchical inner clusterer; pass "
                              "method='monti', inner='hierarchical' (k-means is Euclidean only).")
    for name, value in (("inner_linkage", inner_linkage), ("final_linkage", final_linkage)):
        if value not in _monti.LINKAGES:
            raise ValidationError(f"{name} must be one of {list(_monti.LINKAGES)}, got {value!r}.")
    if labels_from not in ("consensus", "fit"):
        raise ValidationError(f"labels_from must be 'consensus' or 'fit', got {labels_from!r}.")
    if matrix not in ("auto", "dense", "sparse"):
        raise ValidationError(f"matrix must be one of ['auto', 'dense', 'sparse'], got {matrix!r}.")
    if monti:
        fn = info = None
        if labels_from == "fit":
            raise ValidationError(
                "labels_from='fit' takes the labels of a consensus method's fit on all the data; with "
                "method='monti' there is none: use labels_from='consensus' or a method such as 'kcc'.")
        if criterion == "objective":
            raise ValidationError(
                "criterion='objective' reads a consensus method's own criterion; method='monti' has none: "
                "use criterion='pac' or 'delta_area', or a method such as 'kcc'.")
    else:
        fn = get(check_name(method, "method"), kind="consensus")
        info = method_info(fn)
    method_params = check_params_dict(method_params, "method_params", RESERVED_METHOD, "select_k")
    params_for_k = _per_k_params(generator_params)
    if isinstance(data, Ensemble):
        if monti:
            raise ValidationError(
                "method='monti' clusters the objects' features, but data is an Ensemble; pass the "
                "features X as data, or choose a consensus method (e.g. method='kcc') to resample the "
                "Ensemble's rows.")
        if null is not None:
            raise ValidationError(
                f"null={null!r} draws reference data sets like the features, but data is an Ensemble; pass the "
                "features X as data, or null=None (the plain protocol).")
        ensemble, X = data, None
        if info.requires_X:
            raise ValidationError(
                f"method {method!r} needs the original features, but data is an Ensemble; pass the "
                "features X as data, or choose a method that uses the partitions alone (e.g. kcc)."
            )
        n = ensemble.n_samples
        if n < 2:
            raise ValidationError(f"data has n_samples={n}; choosing K needs at least 2 objects.")
    else:
        ensemble = None
        X, _ = validate_X(data, "data", missing_features)
        n = X.shape[0]
        generator = check_name(generator, "generator")
        get(generator, kind="generator")  # fail early on an unknown name
    n_partitions = check_int(n_partitions, "n_partitions", low=1)
    k_values = _check_k_range(k_range, n, one_allowed=null is not None or criterion == "gap")
    if X is not None:
        check_distinct_rows(X, max(k_values), "data", "max(k_range)")
    if n_resamples is None:
        n_resamples = (RESAMPLES_PLAIN if null is None else RESAMPLES_WITH_NULL) if monti else 50
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    subsample = check_float(subsample, "subsample", low=0, high=1, low_open=True)
    feature_subsample = check_float(feature_subsample, "feature_subsample", low=0, high=1, low_open=True)
    if X is None and (feature_subsample < 1 or feature_weights is not None):
        raise ValidationError("feature_subsample and feature_weights resample the features, but data is an "
                              "Ensemble; pass the features X as data.")
    size = _monti.sample_size(n, subsample)
    item_weights = _check_sampling_weights(item_weights, "item_weights", n, size, "objects", "subsample")
    if X is not None:
        d = X.shape[1]
        if _monti.sample_size(d, feature_subsample) < 1:
            raise ValidationError(f"feature_subsample={feature_subsample} keeps none of the {d} features; "
                                  f"give at least 1/{d}.")
        feature_weights = _check_sampling_weights(feature_weights, "feature_weights", d,
                                                  _monti.sample_size(d, feature_subsample), "features",
                                                  "feature_subsample")
    if size < max(2, int(k_values[-1])):
        raise ValidationError(
            f"subsample={subsample} keeps {size} of the {n} objects, fewer than the "
            f"{max(2, int(k_values[-1]))} needed for K={int(k_values[-1])}; raise subsample or "
            "lower the largest K in k_range."
        )
    if criterion not in CRITERIA:
        raise ValidationError(f"criterion must be one of {list(CRITERIA)}, got {criterion!r}.")
    low, high = _check_interval(pac_interval)
    verbose = check_int(verbose, "verbose", low=0)
    threads = check_n_threads(n_jobs, "n_jobs")
    if not isinstance(keep_matrices, (bool, np.bool_)):
        raise ValidationError(f"keep_matrices must be True or False, got {keep_matrices!r}.")

    if pair_tolerance is None:
        tolerance = _monti.PAIR_TOLERANCE
    else:
        tolerance = check_float(pair_tolerance, "pair_tolerance", low=0, low_open=True, high=0.5, high_open=True)
        if matrix == "dense":
            raise ValidationError("pair_tolerance applies to the sparse route's sampled pairs; the dense route "
                                  "(matrix='dense') reads every pair exactly. Drop pair_tolerance or pass "
                                  "matrix='sparse'.")
    ks = k_values.tolist()
    dense_need = _monti.dense_bytes(n, n_resamples, ks, keep_matrices)
    what = f"select_k's consensus matrices of {n} objects ({len(ks)} K, {n_resamples} resamples)"
    if matrix == "dense" or (matrix == "auto" and dense_need <= memory_budget(max_bytes)):
        require_memory(dense_need, what, "pass matrix='sparse' (estimated CDF and PAC, landmark labels; "
                       "linear memory), or fewer objects", max_bytes)
        route = "dense"
    else:
        require_memory(_monti.sparse_bytes(n, n_resamples, ks, tolerance), what + " on the sparse route",
                       "lower n_resamples or the largest K", max_bytes)
        route = "sparse"

    root = child_seeds(random_state, 1)[0]
    draw = np.random.default_rng(np.random.SeedSequence(root, spawn_key=(0,)))
    samples = _monti.draw_resamples(n, n_resamples, subsample, draw, item_weights)
    features = None
    if X is not None:
        # its own stream, so that the objects drawn do not depend on the feature settings
        features = _monti.draw_features(X.shape[1], n_resamples, feature_subsample,
                                        np.random.default_rng(np.random.SeedSequence(root, spawn_key=(2,))),
                                        feature_weights)

    objective = np.full(len(ks), np.nan)
    objective_name = ""
    fit_labels = {}
    with progress(total=len(ks), desc=f"select_k ({method})", verbose=verbose) as bar:
        if monti:
            runs = _monti.inner_labels(X, samples, ks, inner, root, threads, features, algorithm, init, distance,
                                       inner_linkage, n_init)
        else:
            runs = {}
            for row, k in enumerate(ks):
                runs[k], full = _fused_runs(fn, k, samples, n, X, ensemble, generator, n_partitions,
                                            params_for_k(k), method_params, root, n_jobs, features)
                fit_labels[k] = np.array(full.labels, dtype=np.int64)
                objective[row] = full.objective
                objective_name = objective_name or full.objective_name

        pick = np.random.default_rng(np.random.SeedSequence(root, spawn_key=(1,)))
        if route == "dense":
            sampled = _monti.sampled_counts(runs[ks[0]])
        else:
            landmarks = np.sort(pick.choice(n, size=min(n, _monti.LANDMARKS), replace=False))
            sampled = _monti.sampled_counts(runs[ks[0]][landmarks])
            pairs = _monti.draw_pairs(n, tolerance, pick)
            exact = pairs[0].shape[0] == n * (n - 1) // 2
        cdf = np.empty((len(ks), _monti.GRID.shape[0]))
        pac = np.empty(len(ks))
        pac_se = np.zeros(len(ks))
        area_se = np.zeros(len(ks))
        labels, items, clusters, stability = {}, {}, {}, {}
        matrices = {} if keep_matrices else None
        for row, k in enumerate(ks):
            if route == "dense":
                one = _monti.dense_consensus(runs[k], k, sampled, (low, high), keep_matrices, final_linkage)
            else:
                one = _monti.sparse_consensus(runs[k], k, (low, high), pairs, exact, landmarks, sampled,
                                              keep_matrices, root, threads, final_linkage)
            cdf[row], pac[row], pac_se[row], area_se[row] = one.cdf, one.pac, one.pac_se, one.area_se
            labels[k] = fit_labels[k] if labels_from == "fit" else one.labels
            stability[k] = ClusterStability.from_jaccard(
                labels[k], _monti.resample_jaccard(runs.pop(k), labels[k], int(labels[k].max()) + 1), "subset",
                size)
            items[k], clusters[k] = one.item, one.cluster
            if keep_matrices:
                matrices[k] = one.matrix
            bar.update(1)

    area = consensus_area(_monti.GRID, cdf)
    delta = delta_area(area)
    reference = {}
    if null is not None:
        shape = _reference.ReferenceShape(X)
        reference_pacs = np.empty((n_references, len(ks)))
        with progress(total=n_references, desc="select_k (reference null)", verbose=verbose) as bar:
            for b in range(n_references):
                seq = np.random.SeedSequence(root, spawn_key=(3, b))
                draw_seed, run_seed = seq.spawn(2)
                Xb = shape.draw(null, np.random.default_rng(draw_seed))
                run_root = int(run_seed.generate_state(1)[0])
                if monti:
                    runs_b = _monti.inner_labels(Xb, samples, ks, inner, run_root, threads, features, algorithm,
                                                 init, distance, inner_linkage, n_init)
                else:
                    runs_b = {k: _fused_runs(fn, k, samples, n, Xb, None, generator, n_partitions, params_for_k(k),
                                             method_params, run_root, n_jobs, features, full_fit=False)[0]
                              for k in ks}
                for row, k in enumerate(ks):
                    reference_pacs[b, row] = _monti.pac_only(
                        runs_b.pop(k), k, (low, high), sampled=sampled if route == "dense" else None,
                        pairs=pairs if route == "sparse" else None)
                bar.update(1)
        rcsi, rcsi_se = _reference.rcsi(pac, reference_pacs)
        p_mc = _reference.monte_carlo_p(pac, reference_pacs)
        p_predicted = _reference.predictive_p(pac, reference_pacs)
        reference = dict(null=null, n_references=n_references, pac_reference=reference_pacs, rcsi=rcsi,
                         rcsi_se=rcsi_se, p_value=np.where(np.isfinite(p_predicted), p_predicted, p_mc),
                         p_value_monte_carlo=p_mc, p_value_beta=_reference.beta_p(pac, reference_pacs),
                         alpha=float(alpha))
    gap = None
    if criterion == "gap":
        seed = int(np.random.SeedSequence(root, spawn_key=(4,)).generate_state(1)[0])
        gap = gap_statistic(X, max(2, ks[-1]), n_references=n_references, d_power=2, reference=null or "uniform",
                            rule=gap_rule, random_state=seed, n_jobs=n_jobs)
        best_k, reason = _recommend_gap(ks, gap)
    elif criterion == "rcsi":
        best_k, reason = _recommend_rcsi(k_values, pac, reference["rcsi"], reference["p_value"], alpha, null,
                                         n_references)
    else:
        best_k, reason = _recommend(criterion, k_values, pac, delta, objective, objective_name,
                                    (low, high))
    edge = _edge_warning(k_values, best_k) if best_k != 1 else ""
    if best_k == 1:
        labels[1] = np.zeros(n, dtype=np.int64)  # the answer "no clusters": every object in one
    return SelectKResult(
        k_values=k_values, cdf_grid=_monti.GRID.copy(), cdf=cdf, area=area, delta_area=delta, pac=pac,
        objective=objective, objective_name=objective_name, best_k=int(best_k),
        criterion=criterion, reason=reason, method=method, consensus_matrices=matrices,
        labels=labels, warnings=(edge,) if edge else (), item_consensus=items,
        cluster_consensus=clusters, cluster_stability=stability, inner=inner if monti else None, route=route,
        pac_se=pac_se, area_se=area_se, n_pairs=int(pairs[0].shape[0]) if route == "sparse" else n * (n - 1) // 2,
        n_resamples=n_resamples, index=object_index(data) if ensemble is None else None, gap=gap, **reference)


def _select_k_on_anndata(arguments):
    """select_k on the features of an AnnData, the answer written into it (see :func:`select_k`)."""
    from cclust.interop import _anndata

    arguments.pop("_anndata")
    adata = arguments.pop("data")
    layer, use_rep = arguments.pop("layer"), arguments.pop("use_rep")
    key = _anndata.check_key(arguments.pop("key_added"))
    copy = _anndata.check_copy(arguments.pop("copy"))
    _anndata.check_target(adata, "data", copy)
    values, where = _anndata.features(adata, layer, use_rep, "data", arguments["max_bytes"])
    X, _ = validate_X(values, where, arguments["missing_features"])
    result = select_k(X, **arguments)
    params = {"subsample": arguments["subsample"], "feature_subsample": arguments["feature_subsample"],
              "pac_interval": np.asarray(arguments["pac_interval"], dtype=np.float64),
              "random_state": arguments["random_state"], "layer": layer, "use_rep": use_rep,
              "method_params": arguments["method_params"], "generator": arguments["generator"],
              "n_partitions": arguments["n_partitions"]}
    target = adata.copy() if copy else adata
    _anndata.write_select_k(target, key, result, params)
    return target if copy else None


def _select_k_on_sketches(arguments):
    """select_k on ``n_sketches`` sketches of the objects (see :func:`select_k`): the first
    sketch's result with every object's labels, and the agreement between the sketches."""
    from dataclasses import replace

    from cclust import _assign, _monti, _sketch
    from cclust.ensemble import Ensemble
    from cclust.metrics import ari

    data = arguments.pop("data")
    size, how = arguments.pop("sketch"), arguments.pop("sketch_method")
    count = check_int(arguments.pop("n_sketches"), "n_sketches", low=1)
    rule = _assign.check_method(arguments.pop("propagation"), "propagation")
    if isinstance(data, Ensemble):
        raise ValidationError("sketch labels the objects outside the sketch by their features, but data is an "
                              "Ensemble; pass the features X as data, or drop sketch.")
    if arguments["method"] != "monti":
        raise ValidationError("sketch runs the Monti protocol on the sketch and labels the other objects from "
                              "its consensus clusters; pass method='monti', or drop sketch.")
    X, _ = validate_X(data, "data", arguments["missing_features"])
    n = X.shape[0]
    k_values = _check_k_range(arguments["k_range"], n, one_allowed=True)
    subsample = check_float(arguments["subsample"], "subsample", low=0, high=1, low_open=True)
    needed = max(2, int(k_values[-1]))
    smallest = next((s for s in range(needed, n + 1) if _monti.sample_size(s, subsample) >= needed), n)
    size = _sketch.check_sketch(size, how, n, smallest)
    weights = arguments.pop("item_weights")
    threads = check_n_threads(arguments["n_jobs"], "n_jobs")
    root = child_seeds(arguments.pop("random_state"), 1)[0]
    results, everyone = [], []
    for t in range(count):
        draw, run = np.random.SeedSequence(root, spawn_key=(5, t)).spawn(2)
        chosen = _sketch.draw_sketch(X, size, how, np.random.default_rng(draw))
        part = select_k(X[chosen], random_state=int(run.generate_state(1)[0]),
                        item_weights=None if weights is None else np.asarray(weights)[chosen], **arguments)
        labels = {k: _sketch.propagate(X, chosen, lab, threads, rule) for k, lab in part.labels.items()}
        results.append((chosen, part))
        everyone.append(labels)
    chosen, first = results[0]
    items = {}
    for k, item in first.item_consensus.items():
        items[k] = np.full((n, item.shape[1]), np.nan)
        items[k][chosen] = item
    agreement = best_ks = None
    if count > 1:
        best_ks = tuple(part.best_k for _, part in results)
        agreement = {k: float(np.mean([ari(everyone[a][k], everyone[b][k]) for a in range(count)
                                       for b in range(a + 1, count)]))
                     for k in first.k_values.tolist()}
    return replace(first, labels=everyone[0], item_consensus=items, index=object_index(data), sketch=chosen,
                   sketch_method=how, sketch_propagation=rule, sketch_best_k=best_ks, sketch_agreement=agreement)


def resolve_null(null, method, criterion):
    """The reference distribution ``null="auto"`` stands for: ``"uniform"`` for the Monti
    protocol, None for a consensus method (each reference run would generate and fuse
    partitions) and with ``criterion="gap"`` (the gap statistic has its own reference); any
    other value unchanged."""
    if isinstance(null, str) and null == "auto":
        return "uniform" if method == "monti" and criterion != "gap" else None
    return null


def _reference_count(n_references):
    if n_references is None:
        return DEFAULT_REFERENCES
    return check_int(n_references, "n_references", low=2)


def _recommend_rcsi(k_values, pac, rcsi, p_value, alpha, null, n_references):
    """The K of largest RCSI among the K significant after Bonferroni, else 1 (see select_k).

    Where several significant K have a PAC of 0 (every consensus entry at most the lower or
    above the upper end of the PAC window: each of those partitions is reproduced by every
    resample), RCSI only compares the references' PACs, since a PAC of 0 counts as 1e-4; the
    finest of those perfectly stable K is taken, which splits none of the others' clusters.
    """
    ks = k_values.tolist()
    m = len(ks)
    level = alpha / m
    significant = np.flatnonzero(p_value < level)
    smallest = int(np.nanargmin(p_value))
    adjusted = f"alpha = {alpha:g} over {m} K tried, so p < {level:.3g}" if m > 1 else f"p < alpha = {alpha:g}"
    if significant.size == 0:
        return 1, (f"no evidence of cluster structure: at no K is the data's PAC lower than in {n_references} "
                   f"{null} reference data sets of the same shape beyond chance ({adjusted}; the smallest p-value "
                   f"is {format_p(p_value[smallest])}, at K={ks[smallest]}).")
    perfect = significant[np.asarray(pac)[significant] <= 0.0]
    if perfect.size > 1:
        i = int(perfect[-1])
        return ks[i], (f"K={ks[i]} is the largest of the K whose consensus is perfectly stable (PAC = 0: "
                       f"K={', '.join(str(ks[j]) for j in perfect)}) and significantly more stable than in "
                       f"{n_references} {null} reference data sets ({adjusted}; K={ks[i]}: "
                       f"{_p_phrase(p_value[i])}); the finest of them splits none of the others' clusters.")
    i = int(significant[np.argmax(rcsi[significant])])
    return ks[i], (f"K={ks[i]} has the largest relative cluster stability index, RCSI = {rcsi[i]:.3f}, among the "
                   f"K whose PAC is significantly lower than in {n_references} {null} reference data sets "
                   f"({adjusted}; K={ks[i]}: {_p_phrase(p_value[i])}).")


def _recommend_gap(ks, gap):
    """The K that ``gap.rule`` picks from K = 1 and the K tried (clusGap's ``maxSE`` on that
    sequence: on K = 1, 2, ..., max(k_range) it is clusGap's own choice)."""
    from cclust import _reference

    sequence = [1] + [k for k in ks if k != 1]
    rows = np.asarray(sequence) - 1
    i = _reference.max_se(gap.gap[rows], gap.se_sim[rows], gap.rule, gap.se_factor)
    best = sequence[i]
    where = (f"gap statistic (Tibshirani, Walther & Hastie 2001) against {gap.n_references} {gap.reference} reference "
             f"data sets, rule {gap.rule}")
    if best == 1:
        return 1, (f"no evidence of cluster structure: the {where}, picks K = 1 (gap {gap.gap[0]:.4f}, SE "
                   f"{gap.se_sim[0]:.4f}; K={sequence[1]}: {gap.gap[sequence[1] - 1]:.4f}, SE "
                   f"{gap.se_sim[sequence[1] - 1]:.4f}): the data are no more clustered than the references.")
    return best, (f"K={best} by the {where}: gap {gap.gap[best - 1]:.4f} (SE {gap.se_sim[best - 1]:.4f}).")


def _p_phrase(p):
    text = format_p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _per_k_params(generator_params):
    """``generator_params`` as a function of K (see :func:`select_k`)."""
    if callable(generator_params):
        def params(k):
            value = generator_params(k)
            return check_params_dict(value, f"generator_params({k})", RESERVED_GENERATOR, "select_k")
        return params
    fixed = check_params_dict(generator_params, "generator_params", RESERVED_GENERATOR, "select_k")
    if "k_range" in fixed:
        raise ValidationError(
            f"generator_params must not fix k_range={fixed['k_range']!r}: select_k would pass the same "
            "k_range to the generator at every K tested. Give generator_params as a function of K, "
            "e.g. generator_params=lambda k: {'k_range': (k, 2 * k)}, or leave k_range to the "
            "generator's default (which follows K).")
    return lambda k: fixed


def _check_sampling_weights(weights, name, length, draws, what, fraction):
    """CCP's weightsItem/weightsFeature: None, or a finite non-negative vector of ``length``
    with at least ``draws`` positive entries (R's ``sample`` needs as many to draw from)."""
    if weights is None:
        return None
    try:
        w = np.array(weights, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValidationError(f"{name} must be an array of {length} non-negative numbers, got {weights!r}.") from None
    if w.ndim != 1 or w.shape[0] != length:
        raise ValidationError(f"{name} must have one weight per {what[:-1]} ({length}), got shape {w.shape}.")
    if not np.isfinite(w).all():
        bad = int(np.flatnonzero(~np.isfinite(w))[0])
        raise ValidationError(f"{name} must be finite, got {w[bad]!r} at index {bad}.")
    if (w < 0).any():
        bad = int(np.flatnonzero(w < 0)[0])
        raise ValidationError(f"{name} must be non-negative, got {w[bad]!r} at index {bad}.")
    positive = int((w > 0).sum())
    if positive < draws:
        raise ValidationError(f"{name} has {positive} positive weights, but each resample draws {draws} {what} "
                              f"without replacement; give more positive weights or lower {fraction}.")
    return w


def _fused_runs(fn, k, samples, n, X, ensemble, generator, n_partitions, generator_params, method_params,
                root, n_jobs, feature_draws=None, full_fit=True):
    """The consensus method's labels of every resample at K ((n, H) int32, -1 = not drawn) and
    its fit on all the data; seeds from (random_state, K) only.

    A resample is a small problem (50 k-means runs and one fusion of a few hundred objects take
    milliseconds), so starting threads inside each generator and method call costs more than it
    gains: the resamples run in parallel instead, each generating and fusing on one thread. The
    generator and the method give the same result for any thread count (their contract), and
    every resample keeps its own seeds and its own column, so the labels are the same for any
    ``n_jobs``. The fit on all the data keeps ``n_jobs``. A method that makes its own partitions
    of the features (``generates_ensemble``, e.g. usenc) is given none: ``generator`` is unused.
    """
    from cclust import _monti
    from cclust.base import method_info

    own_partitions = X is not None and method_info(fn).generates_ensemble
    seeds = np.random.SeedSequence(root, spawn_key=(k,)).generate_state(
        2 * (len(samples) + 1), dtype=np.uint32).tolist()

    def fuse(gen_seed, method_seed, idx, columns, jobs):
        features = None if X is None else (X if idx is None else np.ascontiguousarray(
            _monti.resample_rows(X, idx, columns)))
        if ensemble is not None:
            part = ensemble if idx is None else ensemble.take(idx)
        elif own_partitions:  # the method makes its own partitions of the features (usenc)
            part = None
        else:
            part = generate_ensemble(generator, features, k, n_partitions, generator_params, gen_seed,
                                     jobs, 0)
        return call_method(fn, part, k, method_params, method_seed, features, jobs, 0)

    def one_resample(h):
        columns = None if feature_draws is None else feature_draws[h]
        return fuse(seeds[2 * h], seeds[2 * h + 1], samples[h], columns, 1).labels

    workers = min(check_n_threads(n_jobs, "n_jobs"), len(samples))
    out = np.full((n, len(samples)), -1, dtype=np.int32)
    if workers <= 1:
        fused = map(one_resample, range(len(samples)))
    else:
        pool = ThreadPoolExecutor(max_workers=workers)
        fused = pool.map(one_resample, range(len(samples)))
    try:
        for h, labels in enumerate(fused):
            out[samples[h], h] = labels
    finally:
        if workers > 1:
            pool.shutdown(cancel_futures=True)
    return out, fuse(seeds[-2], seeds[-1], None, None, n_jobs) if full_fit else None


def _edge_warning(k_values, best_k):
    """A sentence when ``best_k`` is at an end of the K tried that could be widened, else "".

    The largest K tried always counts as an edge; the smallest only above 2 (K = 1 is not
    tried, so K = 2 at the bottom of the range is a real answer).

    Examples
    --------
    >>> _edge_warning([2, 3, 4, 5, 6, 7, 8], 8)
    'K=8 is the largest K tried, so a larger K may be better still; widen the range (e.g. up to 11) to check.'
    >>> _edge_warning([2, 3, 4], 2)
    ''
    """
    ks = sorted(int(k) for k in k_values)
    if len(ks) < 2:
        return ""
    if best_k == ks[-1]:
        wider = ks[-1] + max(2, (ks[-1] - ks[0] + 1) // 2)
        return (f"K={best_k} is the largest K tried, so a larger K may be better still; widen the range "
                f"(e.g. up to {wider}) to check.")
    if best_k == ks[0] and ks[0] > 2:
        return (f"K={best_k} is the smallest K tried, so a smaller K may be better still; widen the range "
                f"(e.g. down to {max(2, ks[0] - max(2, (ks[-1] - ks[0] + 1) // 2))}) to check.")
    return ""


def consensus_area(grid, cdf):
    """Monti et al.'s area under the CDF, ``sum_{i>=2} (x_i - x_{i-1}) CDF(x_i)``, per row.

    Examples
    --------
    >>> import numpy as np
    >>> consensus_area(np.array([0.0, 0.5, 1.0]), np.array([[0.5, 0.5, 1.0]]))
    array([0.75])
    """
    cdf = np.atleast_2d(cdf)
    return (np.diff(grid)[None, :] * cdf[:, 1:]).sum(axis=1)


def delta_area(area):
    """Relative area increase: ``area[0]``, then ``(area[i] - area[i-1]) / area[i-1]``.

    Examples
    --------
    >>> delta_area([0.5, 0.75, 0.75]).tolist()
    [0.5, 0.5, 0.0]
    """
    area = np.asarray(area, dtype=np.float64)
    out = np.empty_like(area)
    if area.shape[0]:
        out[0] = area[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[1:] = (area[1:] - area[:-1]) / area[:-1]
    return out


def _check_k_range(k_range, n, one_allowed=False):
    """The K >= 2 to run, sorted; K = 1 is accepted (and needs no run) when ``one_allowed``."""
    if isinstance(k_range, (str, bytes)) or not isinstance(k_range, Iterable):
        raise ValidationError(f"k_range must be an iterable of ints such as range(2, 9), got {k_range!r}.")
    values = [check_int(k, "k_range entries") for k in k_range]
    if not values:
        raise ValidationError("k_range must hold at least one K, got an empty range.")
    bad = [k for k in values if not 1 <= k <= n]
    if bad:
        raise ValidationError(f"k_range must hold ints in [1, n_samples={n}], got {bad[0]}.")
    if 1 in values and not one_allowed:
        raise ValidationError(
            "k_range holds 1, but K = 1 (no clusters) can only be recommended against a reference null: "
            "its consensus is trivially perfect. Pass null='uniform' or criterion='gap', or start k_range at 2.")
    values = sorted(set(values) - {1})
    if not values:
        raise ValidationError("k_range must hold at least one K >= 2 to compare with K = 1, got only 1.")
    return np.array(values, dtype=np.int64)


def _check_interval(pac_interval):
    try:
        low, high = pac_interval
    except (TypeError, ValueError):
        raise ValidationError(f"pac_interval must be a pair (u1, u2), got {pac_interval!r}.") from None
    low = check_float(low, "pac_interval[0]", low=0, high=1)
    high = check_float(high, "pac_interval[1]", low=0, high=1)
    if not low < high:
        raise ValidationError(f"pac_interval must satisfy 0 <= u1 < u2 <= 1, got {pac_interval!r}.")
    return low, high


def _first_best(values, better):
    """Index of the best finite value (smallest K on ties), or None if none is finite."""
    finite = np.isfinite(values)
    if not finite.any():
        return None
    target = values[finite].min() if better == "lower" else values[finite].max()
    tol = 1e-12 * max(1.0, abs(target))
    return int(np.flatnonzero(finite & (np.abs(values - target) <= tol))[0])


def _objective_direction(name):
    match = re.search(r"\b(higher|larger|lower|smaller) is better", name or "")
    if not match:
        return None
    return "higher" if match.group(1) in ("higher", "larger") else "lower"


def _recommend(criterion, k_values, pac, delta, objective, objective_name, interval):
    ks = k_values.tolist()
    if criterion == "pac":
        i = _first_best(pac, "lower")
        if i is None:
            raise ValidationError("PAC is undefined for every K; no pair of objects was sampled together.")
        ties = [k for k, p in zip(ks, pac) if k != ks[i] and abs(p - pac[i]) <= 1e-12 * max(1.0, abs(pac[i]))]
        tie = f", tied with K={', '.join(map(str, ties))} (the smaller K is taken)" if ties else ""
        return ks[i], (f"K={ks[i]} has the lowest proportion of ambiguous clustering, PAC={pac[i]:.4f} "
                       f"(share of consensus entries in ({interval[0]:g}, {interval[1]:g}]){tie}, among "
                       f"K in {ks}.")
    if criterion == "delta_area":
        if len(ks) < 2:
            raise ValidationError(
                "criterion='delta_area' compares successive K and needs at least two K in k_range, "
                f"got {ks}; use criterion='pac' or widen k_range."
            )
        i = _first_best(delta[1:], "higher")
        if i is None:
            raise ValidationError("delta area is undefined for every K (the area under the CDF is zero).")
        i += 1
        return ks[i], (f"going from K={ks[i - 1]} to K={ks[i]} increases the area under the consensus "
                       f"CDF the most (delta area {delta[i]:.4f}), among K in {ks}.")
    direction = _objective_direction(objective_name)
    if direction is None:
        raise ValidationError(
            f"criterion='objective' needs to know whether the method's objective is better higher or "
            f"lower, but its name {objective_name!r} does not say; use criterion='pac' or 'delta_area'."
        )
    i = _first_best(objective, direction)
    if i is None:
        raise ValidationError("the method's objective is NaN for every K; use criterion='pac'.")
    return ks[i], (f"K={ks[i]} has the {'highest' if direction == 'higher' else 'lowest'} "
                   f"{objective_name} = {objective[i]:.6g} on the full data, among K in {ks}.")


@dataclass(frozen=True, eq=False)
class GapResult:
    """What :func:`gap_statistic` measured for K = 1..k_max, and the K its rule picks.

    Attributes
    ----------
    k_values : ndarray of shape (m,), int64
        1, 2, ..., k_max.
    log_w, e_log_w, gap, se_sim : ndarray of shape (m,)
        clusGap's table: ``log W_K`` of the data, its mean over the references, the gap
        ``E.logW - logW`` and the simulation error ``sqrt(1 + 1/B) sd_b(log W_K^b)``.
    best_k : int
        The K the rule picks (1: no evidence of cluster structure).
    rule, se_factor, n_references, reference, d_power :
        The settings.
    labels : dict
        K -> int64 labels of the data's clustering at K.
    reason : str
        One sentence saying why.
    """

    k_values: np.ndarray
    log_w: np.ndarray
    e_log_w: np.ndarray
    gap: np.ndarray
    se_sim: np.ndarray
    best_k: int
    rule: str
    se_factor: float
    n_references: int
    reference: str
    d_power: float
    labels: dict
    reason: str

    def as_table(self):
        """clusGap's ``Tab`` as a dict of equal-length lists (``k``, ``log_w``, ``e_log_w``,
        ``gap``, ``se_sim``)."""
        return {"k": self.k_values.tolist(), "log_w": self.log_w.tolist(), "e_log_w": self.e_log_w.tolist(),
                "gap": self.gap.tolist(), "se_sim": self.se_sim.tolist()}

    def to_dict(self):
        """Every field as plain Python values, e.g. for JSON."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(self.as_table())
        out.pop("k_values")
        out["labels"] = {int(k): v.tolist() for k, v in self.labels.items()}
        return out

    def summary(self):
        """A text table (K, log W, E log W, gap, SE) with the choice and its reason."""
        lines = [f"gap statistic (Tibshirani, Walther & Hastie 2001), {self.n_references} {self.reference} "
                 f"reference data sets, d_power = {self.d_power:g}, rule {self.rule} (SE factor {self.se_factor:g})",
                 f"{'K':>3}  {'log W':>9}  {'E log W':>9}  {'gap':>8}  {'SE':>7}"]
        for i, k in enumerate(self.k_values.tolist()):
            mark = "  <-" if k == self.best_k else ""
            lines.append(f"{k:>3}  {self.log_w[i]:>9.4f}  {self.e_log_w[i]:>9.4f}  {self.gap[i]:>8.4f}  "
                         f"{self.se_sim[i]:>7.4f}{mark}")
        lines.append(f"best K = {self.best_k} ({self.rule}): {self.reason}")
        return "\n".join(lines)


def gap_statistic(data, k_max=8, *, n_references=100, d_power=1, reference="uniform", rule="firstSEmax",
                  se_factor=1.0, n_init=10, random_state=None, n_jobs=None):
    """The gap statistic of Tibshirani, Walther & Hastie (2001) as R's ``cluster::clusGap`` computes
    it, with k-means as the clusterer, and the number of clusters by clusGap's rules.

    For K = 1..``k_max`` the data are clustered by k-means (the best of ``n_init`` k-means++
    starts by the within sum of squares; K = 1 is one cluster) and ``W_K = 0.5 sum_r sum_{i<j in
    C_r} d(i, j)^d_power / n_r`` is computed (clusGap's ``W.k``); ``n_references`` reference data
    sets without clusters get the same. ``gap(K) = mean_b log W_K^b - log W_K`` and
    ``SE(K) = sqrt(1 + 1/B) sd_b(log W_K^b)``; :func:`cclust._reference.max_se` then applies the
    rule (``"firstSEmax"``, R's default; ``"Tibs2001SEmax"``, the paper's "smallest K with
    gap(K) >= gap(K+1) - s(K+1)"; ``"globalSEmax"``, ``"firstmax"``, ``"globalmax"``). K = 1 is
    a possible answer: the data are then no more clustered than the references.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features)
    k_max : int, default=8
        The largest K (clusGap's ``K.max``), at least 2.
    n_references : int, default=100
        Reference data sets B (clusGap's ``B``), at least 2.
    d_power : float, default=1
        Power of the distances in ``W_K`` (clusGap's ``d.power``; 2 is Tibshirani et al.'s
        pooled within-cluster sum of squares, computed without pairs).
    reference : {"uniform", "original", "gaussian"}, default="uniform"
        ``"uniform"``: uniform over the range of each principal component, rotated back
        (clusGap's ``spaceH0 = "scaledPCA"``); ``"original"``: uniform over the range of each
        feature (``spaceH0 = "original"``); ``"gaussian"``: normal scores with each component's
        spread (M3C's reference).
    rule : str, default="firstSEmax"
    se_factor : float, default=1.0
        clusGap's ``SE.factor``.
    n_init : int, default=10
        k-means++ starts per K (R users pass ``nstart`` to ``kmeans`` for the same reason).
    random_state : int, numpy.random.Generator or None
    n_jobs : int or None
        Threads: each data set (the data and every reference) at each K is one task, and the
        tasks run side by side, one per thread; results do not depend on it.

    Returns
    -------
    GapResult

    References
    ----------
    R. Tibshirani, G. Walther, T. Hastie. Estimating the number of clusters in a data set via the
    gap statistic. Journal of the Royal Statistical Society B 63(2):411-423, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.3, (30, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    >>> res = gap_statistic(X, 5, n_references=20, random_state=0)
    >>> res.best_k, res.rule
    (3, 'firstSEmax')
    """
    from cclust import _reference
    from cclust.generators import _best_kmeans_labels

    X, _ = validate_X(data, "data")
    n = X.shape[0]
    if n < 3:
        raise ValidationError(f"data has n_samples={n}; the gap statistic needs at least 3 objects.")
    k_max = check_int(k_max, "k_max", low=2, high=n)
    n_references = check_int(n_references, "n_references", low=2)
    d_power = check_float(d_power, "d_power", low=0, low_open=True)
    se_factor = check_float(se_factor, "se_factor", low=0)
    n_init = check_int(n_init, "n_init", low=1)
    if rule not in _reference.GAP_RULES:
        raise ValidationError(f"rule must be one of {list(_reference.GAP_RULES)}, got {rule!r}.")
    if reference not in ("uniform", "original", "gaussian"):
        raise ValidationError(f"reference must be one of ['uniform', 'original', 'gaussian'], got {reference!r}.")
    threads = check_n_threads(n_jobs, "n_jobs")
    root = child_seeds(random_state, 1)[0]

    def log_w_at(Y, seed, k, n_threads):
        """log W_K of Y at one K and its labels, the best of n_init k-means++ starts."""
        if k == 1:
            labels = np.zeros(Y.shape[0], dtype=np.int64)
        else:
            starts = [np.random.default_rng(s) for s in np.random.SeedSequence(seed, spawn_key=(k,)).spawn(n_init)]
            labels = np.asarray(_best_kmeans_labels(Y, k, starts, "k-means++", 100, 1e-4, n_threads)[0],
                                dtype=np.int64)
        return np.log(_reference.within_dispersion(Y, labels, d_power, n_threads)), labels

    shape = _reference.ReferenceShape(X)
    data_seed = np.random.SeedSequence(root, spawn_key=(0,)).generate_state(1)[0]

    def reference_of(b):
        """Reference b and its k-means seed, from its own seeds: the same whichever thread draws it."""
        draw, run = np.random.SeedSequence(root, spawn_key=(1, b)).spawn(2)
        return shape.draw(reference, np.random.default_rng(draw)), run.generate_state(1)[0]

    draws = _reference.SharedDraws(reference_of, k_max)

    def task(b_k, n_threads=1):
        """log W_K (and the labels) of one data set at one K: b = -1 is the data, 0..B-1 the references."""
        b, k = b_k
        if b < 0:
            return log_w_at(X, data_seed, k, n_threads)
        Y, seed = draws.get(b)
        try:
            return log_w_at(Y, seed, k, n_threads)
        finally:
            draws.done(b)

    # every (data set, K) is independent and takes its randomness from its own seeds, so the
    # tasks run one per thread (k-means and the distance sums release the GIL) in any order
    # and give the same numbers; a data set is drawn once and dropped after its last K
    tasks = [(b, k) for b in range(-1, n_references) for k in range(1, k_max + 1)]
    workers = min(threads, len(tasks))
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(task, tasks))
    else:
        results = [task(t) for t in tasks]
    log_w = np.array([results[k][0] for k in range(k_max)])
    labels = {k: results[k - 1][1] for k in range(1, k_max + 1)}
    logs = np.array([r[0] for r in results[k_max:]]).reshape(n_references, k_max)
    e_log_w = logs.mean(axis=0)
    se_sim = np.sqrt(1.0 + 1.0 / n_references) * logs.std(axis=0, ddof=1)
    gap = e_log_w - log_w
    best = _reference.max_se(gap, se_sim, rule, se_factor) + 1
    if best == 1:
        reason = (f"clusGap's {rule} rule picks K = 1 (gap {gap[0]:.4f}, SE {se_sim[0]:.4f}): the data are no more "
                  f"clustered than the {reference} references, no evidence of cluster structure.")
    else:
        reason = (f"K={best} by clusGap's {rule} rule: gap {gap[best - 1]:.4f} (SE {se_sim[best - 1]:.4f}) against "
                  f"{gap[best - 2]:.4f} at K={best - 1}.")
    return GapResult(k_values=np.arange(1, k_max + 1, dtype=np.int64), log_w=log_w, e_log_w=e_log_w, gap=gap,
                     se_sim=se_sim, best_k=int(best), rule=rule, se_factor=float(se_factor),
                     n_references=n_references, reference=reference, d_power=float(d_power), labels=labels,
                     reason=reason)


#: The resampling schemes of :func:`cluster_stability` (fpc's clusterboot ``bootmethod``).
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
    subset_size: int = None

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


def cluster_stability(data, n_clusters, *, labels=None, clusterer="kmeans", scheme="boot", n_resamples=100,
                      subset_size=None, clusterer_params=None, random_state=None, n_jobs=None):
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

    threads = 1 if callable(clusterer) and n_jobs is None else min(check_n_threads(n_jobs, "n_jobs"), n_resamples)
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
