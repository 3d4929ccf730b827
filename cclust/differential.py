"""Which features drive each cluster: one-versus-rest tests of every feature in every cluster
(``cclust.markers`` is :func:`markers`).

:func:`markers` compares, for each cluster and feature, the cluster's objects with all the
others, by the Wilcoxon rank-sum test (Mann & Whitney 1947; the normal approximation with the
variance corrected for ties) or Welch's t-test (Welch 1947), and adjusts each cluster's p-values
over the features for the false discovery rate (Benjamini & Hochberg 1995). This is the ranking
single-cell practitioners read after clustering (scanpy's ``rank_genes_groups`` with
``method="wilcoxon"`` or ``"t-test"``, Seurat's ``FindAllMarkers``); the statistics equal
SciPy's ``mannwhitneyu`` (asymptotic, no continuity correction) and ``ttest_ind``
(``equal_var=False``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cclust.errors import ValidationError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["markers", "benjamini_hochberg"]

METHODS = ("wilcoxon", "t-test")

#: The columns of the table, in order.
COLUMNS = ("cluster", "feature", "score", "auroc", "p_value", "p_value_adjusted")


def markers(X: npt.ArrayLike, labels: npt.ArrayLike, *, method: str = "wilcoxon",
            feature_names: Sequence[str] | None = None, n_top: int | None = None, as_frame: bool | None = None,
            max_bytes: int | None = None) -> pd.DataFrame | dict[str, Any]:
    """Rank the features of every cluster against the other objects.

    For each cluster c and feature f, the values of f on c's members are compared with its
    values on every other object:

    * ``method="wilcoxon"``: the Wilcoxon rank-sum (Mann-Whitney) test. Every feature is ranked
      over all the objects (ties get their average rank); the score is the z-statistic
      ``(R_c - n_c (n + 1) / 2) / sigma`` of c's rank sum R_c, where ``sigma^2 = n_c n_r / 12
      ((n + 1) - sum_t (t^3 - t) / (n (n - 1)))`` carries the tie correction (t: the sizes of
      the groups of tied values); two-sided p-value from the normal distribution, no continuity
      correction (scanpy's default and SciPy's ``mannwhitneyu(..., use_continuity=False,
      method="asymptotic")``). A feature constant over all the objects has score 0 and p = 1.
    * ``method="t-test"``: Welch's t-test (unequal variances); the score is the t statistic,
      the p-value two-sided from Student's t with Welch-Satterthwaite degrees of freedom
      (SciPy's ``ttest_ind(..., equal_var=False)``). A feature with no variance in either group
      has score 0 and p = 1 unless the two means differ (then score +-inf, p = 0).

    ``auroc`` is, for both methods, the area under the ROC curve of the feature as a classifier
    of c against the rest: ``U_c / (n_c n_r)`` with ties counted one half (0.5: no
    separation; 1: every member above every other object). The p-values of each cluster are
    adjusted over its features by Benjamini & Hochberg's (1995) step-up rule.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The features (a pandas DataFrame's column names become the feature names).
    labels : array-like of shape (n_samples,)
        Cluster labels, at least two clusters; any hashable values (sorted for the order of
        the clusters in the table).
    method : {"wilcoxon", "t-test"}, default="wilcoxon"
    feature_names : sequence of str, optional
        Names of the features (default: the DataFrame's columns, else "0", "1", ...).
    n_top : int, optional
        Keep the ``n_top`` best-ranked features of each cluster (by score, highest first).
    as_frame : bool, optional
        Return a pandas DataFrame (default when pandas is installed) or a dict of lists.
    max_bytes : int, optional
        Memory budget (``cclust.validation.memory_budget()`` by default): the Wilcoxon test
        holds the ranks of every feature (float64, n x d) with one column block of temporaries.

    Returns
    -------
    pandas.DataFrame or dict
        One row per cluster and feature, columns ``cluster``, ``feature``, ``score``,
        ``auroc``, ``p_value``, ``p_value_adjusted``, sorted by cluster and then by score
        (highest first; ties by the feature's position).

    References
    ----------
    H. B. Mann, D. R. Whitney. On a test of whether one of two random variables is
    stochastically larger than the other. Annals of Mathematical Statistics 18(1):50-60, 1947.
    B. L. Welch. The generalization of "Student's" problem when several different population
    variances are involved. Biometrika 34(1-2):28-35, 1947.
    Y. Benjamini, Y. Hochberg. Controlling the false discovery rate: a practical and powerful
    approach to multiple testing. Journal of the Royal Statistical Society B 57(1):289-300, 1995.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> X[:30, 1] += 3.0                      # feature 1 marks the first cluster
    >>> labels = np.repeat([0, 1], 30)
    >>> table = markers(X, labels, as_frame=False)
    >>> table["feature"][0], round(table["auroc"][0], 2)
    ('1', 1.0)
    """
    from cclust._pipeline import validate_X
    from cclust.validation import check_int, require_memory

    if method not in METHODS:
        raise ValidationError(f"method must be one of {list(METHODS)}, got {method!r}.")
    X, columns = validate_X(X, "X")
    n, d = X.shape
    names = _feature_names(feature_names, columns, d)
    codes, clusters = _cluster_codes(labels, n)
    if n_top is not None:
        n_top = check_int(n_top, "n_top", low=1)
    if as_frame is None:
        try:
            import pandas  # noqa: F401
            as_frame = True
        except ImportError:
            as_frame = False
    k = len(clusters)
    if method == "wilcoxon":
        require_memory(8 * n * d * 2, f"the ranks of {d} features of {n} objects",
                       "test fewer features at a time (a subset of X's columns)", max_bytes)
        score, auroc, p = _wilcoxon(X, codes, k)
    else:
        score, auroc, p = _welch(X, codes, k)
    adjusted = np.vstack([benjamini_hochberg(row) for row in p])
    table: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for c in range(k):
        order = np.lexsort((np.arange(d), -np.nan_to_num(score[c], nan=-np.inf)))
        if n_top is not None:
            order = order[:n_top]
        table["cluster"].extend([clusters[c]] * order.shape[0])
        table["feature"].extend(names[j] for j in order)
        table["score"].extend(score[c, order].tolist())
        table["auroc"].extend(auroc[c, order].tolist())
        table["p_value"].extend(p[c, order].tolist())
        table["p_value_adjusted"].extend(adjusted[c, order].tolist())
    if as_frame:
        import pandas as pd

        return pd.DataFrame(table, columns=list(COLUMNS))
    return table


def benjamini_hochberg(p: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Benjamini & Hochberg's (1995) adjusted p-values (the step-up rule, capped at 1), in the
    order of ``p``; equal to SciPy's ``false_discovery_control(p, method="bh")``."""
    p = np.asarray(p, dtype=np.float64)
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    return out


def _feature_names(feature_names, columns, d):
    if feature_names is None:
        return list(columns) if columns is not None else [str(j) for j in range(d)]
    names = [str(name) for name in feature_names]
    if len(names) != d:
        raise ValidationError(f"feature_names has {len(names)} names for the {d} features of X; give one per "
                              "column.")
    return names


def _cluster_codes(labels, n):
    """Codes 0..k-1 of ``labels`` (in sorted order of the values) and the values themselves."""
    values = np.asarray(labels)
    if values.ndim != 1 or values.shape[0] != n:
        raise ValidationError(f"labels must be one label per object of X: a 1-D array of length {n}, got shape "
                              f"{values.shape}.")
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValidationError("labels holds NaN; give every object a cluster (or drop the unlabelled objects "
                              "from X and labels).")
    clusters, codes = np.unique(values, return_inverse=True)
    if clusters.shape[0] < 2:
        raise ValidationError(f"labels holds {clusters.shape[0]} cluster; markers compare a cluster with the rest, "
                              "so at least two clusters are needed.")
    return codes.reshape(-1), clusters.tolist()


def _u_statistics(X, codes, k):
    """Mann-Whitney U of every cluster against the rest for every feature, (k, d), from the ranks
    over all the objects (ties: average ranks), with the cluster sizes and the rest's sizes."""
    from scipy.stats import rankdata

    n = X.shape[0]
    ranks = rankdata(X, axis=0, method="average")
    sizes = np.bincount(codes, minlength=k).astype(np.float64)
    rank_sums = np.zeros((k, X.shape[1]))
    np.add.at(rank_sums, codes, ranks)
    return rank_sums - sizes[:, None] * (sizes[:, None] + 1) / 2.0, sizes[:, None], (n - sizes)[:, None]


def _wilcoxon(X, codes, k):
    """(k, d) z-scores, AUROCs and two-sided p-values of the rank-sum test, one cluster against
    the rest."""
    from scipy.stats import norm

    n, d = X.shape
    u, n1, n0 = _u_statistics(X, codes, k)
    # tie correction per feature: sum over the groups of tied values of t^3 - t
    ties = np.empty(d)
    for j in range(d):
        _, counts = np.unique(X[:, j], return_counts=True)
        counts = counts.astype(np.float64)
        ties[j] = float((counts ** 3 - counts).sum())
    variance = n1 * n0 / 12.0 * ((n + 1) - ties[None, :] / (n * (n - 1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(variance > 0, (u - n1 * n0 / 2.0) / np.sqrt(np.where(variance > 0, variance, 1.0)), 0.0)
    p = np.minimum(2.0 * norm.sf(np.abs(z)), 1.0)
    return z, u / (n1 * n0), p


def _welch(X, codes, k):
    """(k, d) Welch t statistics, AUROCs (from the rank sums) and two-sided p-values."""
    from scipy.stats import t as student

    score = np.empty((k, X.shape[1]))
    p = np.empty_like(score)
    for c in range(k):
        member = codes == c
        n1, n0 = int(member.sum()), int((~member).sum())
        if n1 < 2 or n0 < 2:
            raise ValidationError(f"cluster {c} has {n1} object(s) and the rest {n0}: Welch's t-test needs at "
                                  "least two on each side; use method='wilcoxon' or merge small clusters.")
        inside, outside = X[member], X[~member]
        var1, var0 = inside.var(axis=0, ddof=1) / n1, outside.var(axis=0, ddof=1) / n0
        se2 = var1 + var0
        diff = inside.mean(axis=0) - outside.mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            tstat = np.where(se2 > 0, diff / np.sqrt(np.where(se2 > 0, se2, 1.0)),
                             np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
            dof = np.where(se2 > 0, se2 ** 2 / (var1 ** 2 / (n1 - 1) + var0 ** 2 / (n0 - 1)), 1.0)
        score[c] = tstat
        p[c] = np.where(np.isfinite(tstat), np.minimum(2.0 * student.sf(np.abs(tstat), dof), 1.0),
                        np.where(diff == 0, 1.0, 0.0))
    u, n1, n0 = _u_statistics(X, codes, k)
    return score, u / (n1 * n0), p
