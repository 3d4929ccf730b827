"""The markers dot plot: each cluster's best features, their score and AUROC in every cluster."""
from __future__ import annotations

from typing import Any

import numpy as np

from cclust.errors import ValidationError
from cclust.plotting._common import _axes, _colormap, _matplotlib

_MARKER_COLUMNS = ("cluster", "feature", "score", "auroc")


def plot_markers(table: Any, n_top: int = 3, *, cmap: Any = "RdBu_r", ax: Any = None) -> Any:
    """Dot plot of the table of :func:`cclust.markers`: the ``n_top`` best features of each
    cluster (columns, grouped by the cluster they mark) against every cluster (rows). The
    colour is the test's score (z or t; red: higher in the cluster than in the rest, blue:
    lower), the dot's area grows with how well the feature separates the cluster from the rest,
    ``|AUROC - 0.5|`` (largest at AUROC 0 or 1).

    Parameters
    ----------
    table : pandas.DataFrame or dict
        What :func:`cclust.markers` returned (every cluster and feature: not cut by ``n_top``).
    n_top : int, default=3
        Features per cluster, by rank in the table.
    cmap : str or Colormap, default="RdBu_r"
        A diverging colour map, centred on a score of 0.
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> import cclust
    >>> from cclust.plotting import plot_markers
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4))
    >>> X[:30, 2] += 3.0
    >>> table = cclust.markers(X, np.repeat([0, 1], 30), as_frame=False)
    >>> [t.get_text() for t in plot_markers(table, n_top=1).get_xticklabels()]
    ['2', '0']
    """
    from cclust.validation import check_int

    n_top = check_int(n_top, "n_top", low=1)
    columns = _table_columns(table)
    clusters = list(dict.fromkeys(columns["cluster"]))
    chosen: list[Any] = []
    for c in clusters:
        ranked = [f for k, f in zip(columns["cluster"], columns["feature"]) if k == c]
        chosen.extend(f for f in ranked[:n_top] if f not in chosen)
    where = {(k, f): i for i, (k, f) in enumerate(zip(columns["cluster"], columns["feature"]))}
    missing = [(k, f) for k in clusters for f in chosen if (k, f) not in where]
    if missing:
        raise ValidationError(f"table has no row for cluster {missing[0][0]!r} and feature {missing[0][1]!r}: pass "
                              "the whole table of cclust.markers (not one cut by n_top), so that every chosen "
                              "feature is scored in every cluster.")
    score = np.array([[columns["score"][where[k, f]] for f in chosen] for k in clusters], dtype=np.float64)
    auroc = np.array([[columns["auroc"][where[k, f]] for f in chosen] for k in clusters], dtype=np.float64)
    mpl = _matplotlib()
    ax = _axes(ax, (max(4.0, 0.5 * len(chosen) + 2.0), max(2.5, 0.45 * len(clusters) + 1.5)))
    finite = np.abs(score[np.isfinite(score)])
    bound = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    rows, cols = np.meshgrid(np.arange(len(clusters)), np.arange(len(chosen)), indexing="ij")
    dots = ax.scatter(cols.ravel(), rows.ravel(), s=20 + 600 * np.abs(auroc.ravel() - 0.5) * 2,
                      c=np.clip(np.nan_to_num(score.ravel()), -bound, bound), cmap=_colormap(cmap),
                      norm=mpl.colors.Normalize(-bound, bound), edgecolors="0.3", linewidths=0.5)
    ax.set_xticks(np.arange(len(chosen)), [str(f) for f in chosen], rotation=90 if len(chosen) > 8 else 0)
    ax.set_yticks(np.arange(len(clusters)), [str(c) for c in clusters])
    ax.set_xlim(-0.7, len(chosen) - 0.3)
    ax.set_ylim(len(clusters) - 0.5, -0.5)
    ax.set_xlabel(f"the {n_top} best-ranked features of each cluster")
    ax.set_ylabel("cluster")
    ax.set_title("Markers: score (colour), |AUROC - 0.5| (size)")
    ax.figure.colorbar(dots, ax=ax, label="score (> 0: higher in the cluster)")
    return ax


def _table_columns(table):
    """The columns the dot plot reads, as lists, from a DataFrame or a dict of lists."""
    try:
        columns = {name: list(table[name]) for name in _MARKER_COLUMNS}
    except (KeyError, TypeError, IndexError):
        raise ValidationError(f"table must be what cclust.markers returns (a DataFrame or a dict with the columns "
                              f"{list(_MARKER_COLUMNS)}), got {type(table).__name__}.") from None
    if not columns["cluster"]:
        raise ValidationError("table has no rows; pass the table cclust.markers returned.")
    return columns
