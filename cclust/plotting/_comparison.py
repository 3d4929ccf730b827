"""Charts that compare methods: a score per consensus method, and the rank matrix of
:func:`cclust.evaluation.evaluate`.
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from cclust.errors import ValidationError
from cclust.plotting._common import _axes, _colormap

if TYPE_CHECKING:
    from cclust.evaluation import EvaluationResult, MultiKEvaluation


# -- method comparison ------------------------------------------------------------------------
def _table_rows(table):
    """The table as {method: {key: value}}; a DataFrame's index are the methods."""
    if hasattr(table, "to_dict") and hasattr(table, "index") and hasattr(table, "columns"):
        return {str(method): dict(row) for method, row in table.to_dict(orient="index").items()}
    if not hasattr(table, "items"):
        raise ValidationError(
            f"table must be a mapping method -> {{metric: score}} or a pandas DataFrame indexed by method, "
            f"got {type(table).__name__}."
        )
    rows = {}
    for method, row in table.items():
        if hasattr(row, "items"):
            rows[str(method)] = dict(row)
        elif isinstance(row, numbers.Real) or row is None:
            rows[str(method)] = {None: row}    # a bare score: the metric itself
        else:
            raise ValidationError(
                f"table[{method!r}] must be a mapping of scores (e.g. {{'ARI': 0.7}}) or a number, "
                f"got {type(row).__name__}."
            )
    if not rows:
        raise ValidationError("table is empty; it needs at least one method.")
    return rows


def _score(value, method, key):
    if value is None:
        return np.nan
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValidationError(f"table[{method!r}][{key!r}] must be a number, got {value!r}.")
    value = float(value)
    if np.isinf(value):
        raise ValidationError(f"table[{method!r}][{key!r}] is infinite; use NaN or leave it out if unknown.")
    return value


def plot_method_comparison(table: Any, *, metric: str = "ARI", ax: Any = None) -> Any:
    """Horizontal bar chart of one score per consensus method, sorted by the score.

    Parameters
    ----------
    table : mapping or pandas DataFrame
        ``{method: {metric: score, ...}}`` (a bare number instead of the inner mapping is that
        method's score), or a DataFrame indexed by method with one column per metric. When a
        ``f"{metric}_std"`` entry exists it is drawn as an error bar. Methods without a value
        for ``metric`` (missing or NaN) are left out and named under the axis.
    metric : str, default="ARI"
        The key to plot; matched exactly, else case-insensitively.
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on (``ax`` itself when given); its Figure is ``ax.figure``.

    Examples
    --------
    >>> from cclust.plotting import plot_method_comparison
    >>> table = {"kcc": {"ARI": 0.73, "ARI_std": 0.05}, "hbgf": {"ARI": 0.71}, "eac": {"ARI": 0.56}}
    >>> ax = plot_method_comparison(table)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['kcc', 'hbgf', 'eac']
    """
    rows = _table_rows(table)
    if not isinstance(metric, str):
        raise ValidationError(f"metric must be a str naming a column of table, got {metric!r}.")
    keys: list[Any] = []
    for row in rows.values():
        keys.extend(k for k in row if k is not None and k not in keys)
    key = metric
    if metric not in keys:
        folded = [k for k in keys if isinstance(k, str) and k.lower() == metric.lower()]
        if len(folded) == 1:
            key = folded[0]
        elif not all(None in row for row in rows.values()):
            shown = [k for k in keys if not (isinstance(k, str) and k.endswith("_std"))]
            raise ValidationError(f"metric must be one of the table's scores {shown}, got {metric!r}.")
    scores: Any
    errors: Any
    methods, scores, errors, skipped = [], [], [], []
    for method, row in rows.items():
        value = _score(row.get(key, row.get(None)), method, key)
        if np.isnan(value):
            skipped.append(method)
            continue
        std = _score(row.get(f"{key}_std"), method, f"{key}_std")
        if std < 0:
            raise ValidationError(f"table[{method!r}][{key + '_std'!r}] must be >= 0, got {std}.")
        methods.append(method)
        scores.append(value)
        errors.append(std)
    if not methods:
        raise ValidationError(f"no method in table has a value for {key!r}.")
    scores = np.asarray(scores)
    errors = np.asarray(errors)
    has_errors = bool(np.isfinite(errors).any())
    order = np.lexsort((np.arange(len(methods)), -scores))

    ax = _axes(ax, (5.6, 0.9 + 0.32 * len(methods)))
    positions = np.arange(len(methods))
    ax.barh(positions, scores[order], color="tab:blue",
                   xerr=np.nan_to_num(errors[order]) if has_errors else None,
                   error_kw={"ecolor": "0.25", "capsize": 3, "linewidth": 1.0})
    # Value labels past the end of the error bar (to the left for negative scores, e.g. ARI < 0).
    for y, (value, err) in enumerate(zip(scores[order], np.nan_to_num(errors[order]))):
        right = value >= 0
        ax.annotate(f"{value:.3g}", xy=(value + err if right else value - err, y),
                    xytext=(3 if right else -3, 0), textcoords="offset points",
                    ha="left" if right else "right", va="center", fontsize="small")
    ax.set_yticks(positions, [methods[i] for i in order])
    ax.invert_yaxis()    # highest score on top
    ax.margins(x=0.15)
    ax.axvline(0.0, color="0.3", linewidth=0.8)
    xlabel = str(key if key is not None else metric)
    if has_errors:
        xlabel += " (error bars: ± std)"
    if skipped:
        xlabel += f"\nno value: {', '.join(skipped)}"
    ax.set_xlabel(xlabel)
    ax.set_title(f"Methods by {key if key is not None else metric}")
    ax.grid(True, axis="x", alpha=0.3)
    return ax


def plot_evaluation(result: EvaluationResult | MultiKEvaluation, *, ax: Any = None,
                    cmap: Any = "RdYlGn_r") -> Any:
    """The ranks of :func:`cclust.evaluation.evaluate`: algorithms by validity index.

    One row per algorithm, best (aggregated order) at the top; one column per index used for
    ranking. The colour is the algorithm's rank on that index (1 = best), the text its value,
    so it shows where the indices agree and which one an algorithm's place rests on (diceR's
    rank matrix; Chiu & Talhouk 2018). For an evaluation over several K (a
    :class:`~cclust.evaluation.MultiKEvaluation`) the rows are the (algorithm, K) combinations
    in their joint order, the K that trimming uses marked with ``*``, and the title names the
    best K by the indices and the chosen K.

    Parameters
    ----------
    result : EvaluationResult or MultiKEvaluation
    ax : matplotlib Axes, default=None
    cmap : str or Colormap, default="RdYlGn_r"

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from cclust import Ensemble
    >>> from cclust.evaluation import evaluate
    >>> from cclust.plotting import plot_evaluation
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    >>> E = Ensemble(np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 0], [1, 1, 1]]),
    ...              provenance=["good", "good", "noisy"])
    >>> ax = plot_evaluation(evaluate(X, E, 2))
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['1. good', '2. noisy']
    """
    from cclust.evaluation import EvaluationResult, MultiKEvaluation

    if isinstance(result, MultiKEvaluation):
        rows = [result.combinations.index(c) for c in result.order]
        indices = {name: np.concatenate([result.per_k[k].indices[name] for k in result.k_values])
                   for name in result.ranked_indices}
        labels = [f"{p + 1}. {a} (K={k}){' *' if k in result.chosen_k else ''}"
                  for p, (a, k) in enumerate(result.order)]
        title = (f"(algorithm, K) ranked jointly: best K by the indices = {result.best_k}; "
                 f"* K used for trimming ({result.k_rule})")
    elif isinstance(result, EvaluationResult):
        rows = [result.algorithms.index(a) for a in result.order]
        indices = result.indices
        labels = [f"{p + 1}. {result.order[p]}" for p in range(len(rows))]
        title = f"Algorithms at K = {result.n_clusters}: rank on each index (colour), value (text)"
    else:
        raise ValidationError(f"result must be the EvaluationResult or MultiKEvaluation of "
                              f"cclust.evaluation.evaluate, got {type(result).__name__}.")
    colormap = _colormap(cmap)
    names = list(result.ranked_indices)
    m = len(rows)
    ranks = result.ranks[rows] if names else np.zeros((m, 0))
    ax = _axes(ax, (1.6 * max(len(names), 1) + 2.8, 0.5 * m + 1.6))
    ax.imshow(ranks, aspect="auto", cmap=colormap, vmin=1, vmax=max(m, 2), interpolation="nearest")
    for i, a in enumerate(rows):
        for j, name in enumerate(names):
            ax.text(j, i, f"{indices[name][a]:.3g}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(names)), [n.replace("_", " ") for n in names], rotation=30, ha="right")
    ax.set_yticks(range(m), labels)
    ax.set_title(title)
    return ax
