"""SelectKResult, what select_k measured for every K and the K it recommends."""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from cclust.errors import ValidationError
from cclust.selection._gap import GapResult
from cclust._reference import format_p
from cclust.selection._stability import ClusterStability


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
        With ``select_k(..., sketch=s)``: the objects the protocol ran on (the first sketch),
        increasing. Everything but ``labels`` and ``item_consensus`` (NaN outside the sketch) is
        then about them: cluster sizes, consensus matrices, stability.
    sketch_item_consensus : dict or None
        With a sketch: K -> (s, K) float64, the item consensus of the sketch objects only, row
        ``j`` for object ``sketch[j]`` (the rows of ``item_consensus`` that are not NaN). This is
        what the result stores; ``item_consensus`` builds the (n, K) tables from it when read.
    sketch_method : str or None
    sketch_propagation : str or None
        With a sketch: how the other objects were labelled, ``"centroid"`` or ``"knn"``.
    sketch_best_k : tuple of int or None
        With ``n_sketches >= 2``: the K each sketch chose; with a reference null, every sketch's
        PACs are judged against the first sketch's reference data sets, so these K differ by the
        objects drawn only.
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
        K -> labels ``0..K-1``: the average-linkage clusters of the consensus matrix (default), or
        the consensus method's fit on all the data (``labels_from="fit"``); when ``best_k`` is 1,
        also ``labels[1]``, every object in one cluster. int64, except with a sketch: there the
        narrowest unsigned integer type that holds K (uint8 up to K = 255, one byte per object
        and K), since they cover every object; convert with ``labels[K].astype(np.int64)`` before
        arithmetic that may go below 0 or above 255.
    item_consensus : dict
        K -> (n, K) float64: ``[i, c]`` is the mean consensus of object i with the members
        (other than i) of cluster c of ``labels[K]`` (ConsensusClusterPlus's item consensus;
        NaN where the cluster has no other member). With a sketch, a read-only mapping that
        builds each table, NaN outside the sketch, from ``sketch_item_consensus`` when it is
        read (a new array at every read; n x K x 8 bytes each).
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
    item_consensus: dict = field(default_factory=dict)
    cluster_consensus: dict = field(default_factory=dict)
    inner: str | None = None
    route: str = "dense"
    n_resamples: int = 0
    null: str | None = None
    n_references: int = 0
    pac_reference: np.ndarray | None = None
    rcsi: np.ndarray | None = None
    rcsi_se: np.ndarray | None = None
    p_value: np.ndarray | None = None
    p_value_monte_carlo: np.ndarray | None = None
    p_value_beta: np.ndarray | None = None
    alpha: float = 0.05
    index: object = None
    cluster_stability: dict = field(default_factory=dict)
    gap: GapResult | None = None
    pac_se: np.ndarray | None = None
    area_se: np.ndarray | None = None
    n_pairs: int = 0
    sketch: np.ndarray | None = None
    sketch_method: str | None = None
    sketch_propagation: str | None = None
    sketch_best_k: tuple | None = None
    sketch_agreement: dict | None = None
    sketch_item_consensus: dict | None = None

    @property
    def has_objective(self) -> bool:
        """Whether the consensus method reported a criterion for some K (method="monti" has
        none): without one, :meth:`as_table`, :meth:`summary` and the figures leave it out."""
        return bool(np.isfinite(np.asarray(self.objective, dtype=float)).any())

    def labels_series(self, k: int | None = None) -> Any:
        """The labels at ``k`` (default ``best_k``) as a pandas Series indexed by :attr:`index`
        (a RangeIndex when ``data`` had none), named ``"cluster"``.

        Examples
        --------
        >>> import pandas as pd
        >>> from cclust.datasets import load_iris
        >>> from cclust.selection import select_k
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

    def as_table(self) -> dict[str, list]:
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
            table.update(area_se=np.asarray(self.area_se).tolist(), pac_se=np.asarray(self.pac_se).tolist())
        if self.null is not None:
            reference, rcsi, rcsi_se, p_value, p_monte_carlo, p_beta = self._null_columns()
            table.update(pac_reference_mean=reference.mean(axis=0).tolist(), pac_reference_sd=_sd(reference).tolist(),
                         rcsi=rcsi.tolist(), rcsi_se=rcsi_se.tolist(), p_value=p_value.tolist(),
                         p_value_monte_carlo=p_monte_carlo.tolist(), p_value_beta=p_beta.tolist())
        if self.gap is not None:
            rows = self.k_values - 1
            table.update(gap=self.gap.gap[rows].tolist(), gap_se=self.gap.se_sim[rows].tolist())
        if self.has_objective:
            table["objective"] = self.objective.tolist()
        return table

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain Python values (lists, floats, str), e.g. for JSON."""
        def plain(value):
            if isinstance(value, np.ndarray):
                return value.tolist()
            if isinstance(value, Mapping):  # K -> array (a sparse kNN graph is left out: too large)
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

    def to_html(self, path: str | os.PathLike[str] | None = None, *, k: int | None = None) -> str:
        """This result as one self-contained HTML page (inline CSS, figures as embedded PNG; no
        script, font or image loaded from anywhere, so it opens offline): the choice of K with its
        reference null, per-cluster stability, the consensus heatmap and the tracking plot (when
        select_k kept the matrices: ``keep_matrices=True``) and item consensus, at ``k`` (default
        the best K; the smallest K above 1, for inspection only, when that is 1). Needs
        matplotlib (``pip install "cclust[plot]"``). :func:`cclust.report.build_report` (``cclust
        report``) adds the data, an ensemble, the method comparison, markers and a replayable
        manifest.

        Returns the page as a string when ``path`` is None; otherwise writes it there (a path
        ending in ``.html``) and returns the path.

        Examples
        --------
        >>> import numpy as np
        >>> from cclust.selection import select_k
        >>> rng = np.random.default_rng(0)
        >>> X = np.vstack([rng.normal(c, 0.1, (15, 2)) for c in ((0, 0), (3, 0), (0, 3))])
        >>> page = select_k(X, [2, 3], n_resamples=5, random_state=0).to_html()  # doctest: +SKIP
        >>> page.startswith("<!DOCTYPE html>")  # doctest: +SKIP
        True
        """
        from cclust.selection._html import page

        if path is not None:
            path = os.fspath(path)
            if not path.endswith(".html"):
                raise ValidationError(f"path={path!r} should end in .html (the page is one HTML file).")
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise ValidationError(f"path={path!r}: the folder {folder!r} does not exist; create it first.")
        text = page(self, k)
        if path is None:
            return text
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path

    def summary(self) -> str:
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
            reference, rcsi, rcsi_se, p_value = self._null_columns()[:4]
            mean, sd = reference.mean(axis=0), _sd(reference)
        area_se, pac_se = np.asarray(self.area_se), np.asarray(self.pac_se)
        for i, k in enumerate(self.k_values.tolist()):
            mark = "  <-" if k == self.best_k else ""
            line = f"{k:>3}  {self.area[i]:>6.4f}  {self.delta_area[i]:>10.4f}  {self.pac[i]:>6.4f}"
            if estimated:
                area = f"{self.area[i]:.4f} ± {area_se[i]:.4f}"
                pac = f"{self.pac[i]:.4f} ± {pac_se[i]:.4f}"
                line = f"{k:>3}  {area:>15}  {self.delta_area[i]:>10.4f}  {pac:>15}"
            if self.null is not None:
                ref = f"{mean[i]:.4f} ± {sd[i]:.4f}"
                rc = f"{rcsi[i]:.3f} ± {rcsi_se[i]:.3f}"
                line += f"  {ref:>15}  {rc:>13}  {format_p(p_value[i]):>9}"
            if self.gap is not None:
                gap = f"{self.gap.gap[k - 1]:.4f} ± {self.gap.se_sim[k - 1]:.4f}"
                line += f"  {gap:>17}"
            if has_objective:
                line += f"  {self.objective[i]:>9.4g}"
            lines.append(line + mark)
        lines.append(f"best K = {self.best_k} ({self.criterion}): {self.reason}")
        if self.sketch_best_k is not None:
            agreement = ", ".join(f"K={k}: {v:.3f}" for k, v in (self.sketch_agreement or {}).items())
            against = " (each against the first sketch's reference data sets)" if self.null is not None else ""
            lines.append(f"{len(self.sketch_best_k)} sketches chose K = {', '.join(map(str, self.sketch_best_k))}"
                         f"{against}; agreement of their labels (mean adjusted Rand index) {agreement}")
        lines.extend(f"warning: {text}" for text in self.warnings)
        if self.best_k in (self.cluster_stability or {}):
            lines.extend(self._cluster_lines(self.best_k))
        return "\n".join(lines)

    def _null_columns(self) -> tuple[np.ndarray, ...]:
        """The reference PACs, RCSI, its standard error and the three p-values, which select_k sets
        together with ``null``."""
        return tuple(np.asarray(column) for column in (self.pac_reference, self.rcsi, self.rcsi_se, self.p_value,
                                                       self.p_value_monte_carlo, self.p_value_beta))

    def _estimated(self):
        """Whether area and PAC are estimates (the sparse route from a sample of the pairs)."""
        return self.pac_se is not None and bool(np.any(np.asarray(self.pac_se) > 0)
                                                or np.any(np.asarray(self.area_se) > 0))

    def cluster_table(self, k: int | None = None) -> dict[str, list]:
        """Per cluster of ``labels[k]`` (default ``best_k``): its size, cluster consensus
        (Monti et al. 2003), and mean Jaccard, dissolved and recovered counts over the resamples
        (Hennig 2007; see ``cluster_stability``), as a dict of equal-length lists.

        Examples
        --------
        >>> import numpy as np
        >>> from cclust.selection import select_k
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


class SketchItemConsensus(Mapping):
    """K -> (n, K) item consensus of every object, NaN outside the sketch, built when read from
    the sketch objects' rows (``SelectKResult.item_consensus`` on the sketch route)."""

    def __init__(self, n, sketch, tables):
        self._n, self._sketch, self._tables = int(n), sketch, tables

    def __getitem__(self, k):
        table = self._tables[k]
        dense = np.full((self._n, table.shape[1]), np.nan)
        dense[self._sketch] = table
        return dense

    def __iter__(self):
        return iter(self._tables)

    def __len__(self):
        return len(self._tables)

    def __repr__(self):
        return (f"SketchItemConsensus(K={list(self._tables)}, {self._n} objects, "
                f"{len(self._sketch)} in the sketch)")


def _sd(values):
    values = np.asarray(values, dtype=np.float64)
    return values.std(axis=0, ddof=1) if values.shape[0] > 1 else np.full(values.shape[1:], np.nan)


