"""The figures of :func:`cclust.select_k`: Monti et al.'s consensus CDF and delta area, the PAC of
Senbabaoglu et al., the reference null, per-cluster stability, the four-panel summary, and at
one K Monti et al.'s consensus heatmap and ConsensusClusterPlus's tracking plot.
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from cclust.errors import ValidationError
from cclust.plotting._common import (
    _MAX_LEGEND_CLUSTERS,
    _axes,
    _cluster_colors,
    _colormap,
    _labels,
    _matplotlib,
)
from cclust.plotting._consensus_matrix import _matrix_input, _stratified_sample
from cclust.validation import check_int, check_random_state

# The results are SelectKResult, annotated Any: the selection package imports these figures,
# and an import of it here (even for the type checker alone) would close an import cycle.
if TYPE_CHECKING:
    from cclust.validation import RandomStateLike


#: Marks the selected K in every select_k panel.
_BEST_COLOUR = "tab:red"


# -- select_k ---------------------------------------------------------------------------------
def _selection_fields(result, *names):
    """The named fields of a SelectKResult as arrays, after checking their shapes."""
    missing = [name for name in ("k_values",) + names if not hasattr(result, name)]
    if missing:
        raise ValidationError(
            f"result must be the SelectKResult returned by cclust.select_k; "
            f"{type(result).__name__} has no field {missing[0]!r}."
        )
    k_values = np.asarray(result.k_values)
    if k_values.ndim != 1 or k_values.size == 0 or k_values.dtype.kind not in "iu":
        raise ValidationError(f"result.k_values must be a non-empty 1-D array of ints, got {k_values!r}.")
    m = k_values.shape[0]
    out = {"k_values": k_values.astype(np.int64)}
    for name in names:
        try:
            value = np.asarray(getattr(result, name), dtype=np.float64)
        except (TypeError, ValueError):
            raise ValidationError(
                f"result.{name} must be an array of numbers, got {getattr(result, name)!r}."
            ) from None
        out[name] = value
        if name == "cdf_grid":
            if value.ndim != 1 or value.size < 2:
                raise ValidationError(f"result.cdf_grid must be 1-D with at least 2 points, got shape {value.shape}.")
        elif name == "cdf":
            continue
        elif value.shape != (m,):
            raise ValidationError(f"result.{name} must have one value per K ({m}), got shape {value.shape}.")
    if "cdf" in names:
        g = np.asarray(result.cdf_grid).shape[0]
        if out["cdf"].shape != (m, g):
            raise ValidationError(
                f"result.cdf must have shape (len(k_values), len(cdf_grid)) = ({m}, {g}), got {out['cdf'].shape}."
            )
    return out


def _best_k(result, k_values):
    best = getattr(result, "best_k", None)
    if best is None or not isinstance(best, numbers.Integral) or best not in k_values:
        return None
    return int(best)


def _k_curve(ax, k_values, values, best, color, ylabel, title):
    ax.plot(k_values, values, marker="o", color=color, linewidth=1.5, markersize=5)
    if best is not None:
        at = int(np.flatnonzero(k_values == best)[0])
        ax.axvline(best, color=_BEST_COLOUR, linestyle="--", linewidth=1.0, alpha=0.7)
        if np.isfinite(values[at]):
            ax.plot([best], [values[at]], marker="*", color=_BEST_COLOUR, markersize=15, linestyle="none",
                    label=f"best K = {best}")
            ax.legend(loc="best", fontsize="small")
    ax.set_xticks(k_values)
    ax.set_xlabel("K (number of clusters)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    return ax


def plot_consensus_cdf(result: Any, *, ax: Any = None) -> Any:
    """Empirical CDF of the consensus-matrix entries, one curve per K (Monti et al. 2003).

    A K that fits the data gives a consensus matrix of (nearly) only 0s and 1s, so a CDF flat
    between a jump at 0 and one at 1; ambiguous K values rise across the middle. The selected K
    (``result.best_k``) is drawn thick, in the colour that marks it in the other panels.

    Parameters
    ----------
    result : SelectKResult
        The result of :func:`cclust.select_k` (uses ``k_values``, ``cdf_grid``, ``cdf``, ``best_k``).
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on (``ax`` itself when given); its Figure is ``ax.figure``.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from cclust.plotting import plot_consensus_cdf
    >>> grid = np.linspace(0, 1, 11)
    >>> res = SimpleNamespace(k_values=np.array([2, 3]), cdf_grid=grid, best_k=3,
    ...                       cdf=np.vstack([np.minimum(1, 0.4 + grid), np.full(11, 0.7)]))
    >>> ax = plot_consensus_cdf(res)
    >>> len(ax.get_lines())
    2
    """
    f = _selection_fields(result, "cdf_grid", "cdf")
    k_values, grid, cdf = f["k_values"], f["cdf_grid"], f["cdf"]
    best = _best_k(result, k_values)
    ax = _axes(ax, (5.0, 4.0))
    mpl = _matplotlib()
    colors = mpl.colormaps["viridis"](np.linspace(0.0, 0.9, k_values.shape[0]))
    for i, k in enumerate(k_values.tolist()):
        is_best = k == best
        ax.step(grid, cdf[i], where="post", color=_BEST_COLOUR if is_best else colors[i],
                linewidth=2.8 if is_best else 1.2,
                zorder=3 if is_best else 2, label=f"K = {k}" + (" (best)" if is_best else ""))
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("consensus index")
    ax.set_ylabel("CDF")
    ax.set_title("Consensus CDF")
    ax.legend(loc="lower right", fontsize="small", ncols=2 if k_values.shape[0] > 6 else 1)
    ax.grid(True, alpha=0.3)
    return ax


def plot_delta_area(result: Any, *, ax: Any = None) -> Any:
    """Relative increase of the area under the consensus CDF against K (Monti et al. 2003).

    Monti et al. read the K after which the area stops growing markedly as the number of
    clusters; the selected K (``result.best_k``) is marked.

    Parameters
    ----------
    result : SelectKResult
        The result of :func:`cclust.select_k` (uses ``k_values``, ``delta_area``, ``best_k``).
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on (``ax`` itself when given); its Figure is ``ax.figure``.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from cclust.plotting import plot_delta_area
    >>> res = SimpleNamespace(k_values=np.array([2, 3, 4]), delta_area=np.array([0.6, 0.3, 0.02]),
    ...                       best_k=3)
    >>> plot_delta_area(res).get_xlabel()
    'K (number of clusters)'
    """
    f = _selection_fields(result, "delta_area")
    ax = _axes(ax, (5.0, 4.0))
    return _k_curve(ax, f["k_values"], f["delta_area"], _best_k(result, f["k_values"]), "tab:blue",
                    "relative change in area under CDF", "Delta area")


def plot_pac(result: Any, *, ax: Any = None) -> Any:
    """Proportion of ambiguous clustering per K (Senbabaoglu et al. 2014); lower is better.

    Parameters
    ----------
    result : SelectKResult
        The result of :func:`cclust.select_k` (uses ``k_values``, ``pac``, ``best_k``).
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on (``ax`` itself when given); its Figure is ``ax.figure``.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from cclust.plotting import plot_pac
    >>> res = SimpleNamespace(k_values=np.array([2, 3, 4]), pac=np.array([0.2, 0.01, 0.15]), best_k=3)
    >>> plot_pac(res).get_title()
    'PAC (lower is better)'
    """
    f = _selection_fields(result, "pac")
    ax = _axes(ax, (5.0, 4.0))
    ax = _k_curve(ax, f["k_values"], f["pac"], _best_k(result, f["k_values"]), "tab:green",
                  "proportion of ambiguous clustering", "PAC (lower is better)")
    se = getattr(result, "pac_se", None)
    if se is not None and np.any(np.asarray(se) > 0):
        # the sparse route's estimate from sampled pairs: one standard error either side
        ax.errorbar(f["k_values"], f["pac"], yerr=np.asarray(se, dtype=float), fmt="none", ecolor="tab:green",
                    capsize=3, label="± one standard error (sampled pairs)")
        ax.legend(loc="best", fontsize="small")
    return ax


def _plot_objective(result, ax):
    f = _selection_fields(result, "objective")
    name = str(getattr(result, "objective_name", "") or "objective")
    method = str(getattr(result, "method", "") or "")
    values = f["objective"]
    if not np.isfinite(values).any():
        ax.text(0.5, 0.5, "no consensus criterion reported", ha="center", va="center",
                transform=ax.transAxes, color="0.4")
        ax.set_title("Consensus criterion")
        ax.set_xticks([])
        ax.set_yticks([])
        return ax
    title = f"Consensus criterion of {method}" if method else "Consensus criterion"
    return _k_curve(ax, f["k_values"], values, _best_k(result, f["k_values"]), "tab:purple", name, title)


def plot_reference_null(result: Any, *, ax: Any = None) -> Any:
    """The data's PAC against its reference null per K (John et al. 2020), with p-values.

    The references' PACs are drawn as their mean and a band of one standard deviation, the
    data's PAC as a line; each K is labelled with its p-value (the evidence against "no more
    stable than data without clusters"). With no K significant the title says that the data
    show no evidence of cluster structure (K = 1).

    Parameters
    ----------
    result : SelectKResult
        The result of :func:`cclust.select_k` with a reference null (uses ``k_values``,
        ``pac``, ``pac_reference``, ``p_value``, ``alpha``, ``best_k``).
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.

    Returns
    -------
    ax : matplotlib Axes
    """
    from cclust._reference import format_p

    f = _selection_fields(result, "pac")
    reference = getattr(result, "pac_reference", None)
    if reference is None:
        raise ValidationError("result has no reference null (select_k(..., null=None)); nothing to plot.")
    ax = _axes(ax, (5.0, 3.75))
    k_values = f["k_values"]
    reference = np.asarray(reference, dtype=np.float64)
    mean = reference.mean(axis=0)
    sd = reference.std(axis=0, ddof=1) if reference.shape[0] > 1 else np.zeros_like(mean)
    ax.fill_between(k_values, mean - sd, mean + sd, color="0.8", label="reference PAC (mean ± sd)")
    ax.plot(k_values, mean, color="0.45", linewidth=1.2)
    ax.plot(k_values, f["pac"], marker="o", color="tab:red", linewidth=1.5, markersize=5, label="data's PAC")
    p_values = np.asarray(result.p_value, dtype=np.float64)
    for k, pac, p in zip(k_values, f["pac"], p_values):
        text = format_p(p)
        ax.annotate(f"p {text}" if text.startswith("<") else f"p = {text}", (k, pac), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize="x-small")
    best = getattr(result, "best_k", None)
    if best == 1:
        title = "Reference null: no evidence of cluster structure (K = 1)"
    else:
        title = "PAC of the data and of its reference null"
        if best in k_values:
            ax.axvline(best, color=_BEST_COLOUR, linestyle="--", linewidth=1.0, alpha=0.7)
    ax.set_xticks(k_values)
    ax.set_xlabel("K (number of clusters)")
    ax.set_ylabel("PAC (lower is more stable)")
    ax.set_title(title)
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    return ax


def plot_cluster_stability(result: Any, k: int | None = None, *, ax: Any = None) -> Any:
    """Per cluster at one K: its cluster consensus (Monti et al. 2003, ConsensusClusterPlus's
    cluster-consensus plot) beside its mean Jaccard over the resamples (Hennig 2007), with
    Hennig's readings (below 0.6 not stable, above 0.85 highly stable) as lines.

    Parameters
    ----------
    result : SelectKResult
        The result of :func:`cclust.select_k` (uses ``cluster_table``).
    k : int, default=None
        The K (default ``best_k``; when that is 1, "no clusters", the smallest K tried).
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from cclust import select_k
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.2, (20, 2)) for c in (0, 3, 6)])
    >>> ax = plot_cluster_stability(select_k(X, [2, 3], n_resamples=10, random_state=0))
    >>> ax.get_title()
    'Clusters at K = 3: consensus and stability'
    """
    if not callable(getattr(result, "cluster_table", None)):
        raise ValidationError(f"result must be the SelectKResult returned by cclust.select_k, got "
                              f"{type(result).__name__}.")
    if k is None:
        k = result.best_k if result.best_k != 1 else int(np.asarray(result.k_values)[0])
    table = result.cluster_table(k)
    ax = _axes(ax, (max(6.0, 2.5 + 0.6 * len(table["cluster"])), 4.5))
    clusters = np.asarray(table["cluster"])
    width = 0.38
    ax.bar(clusters - width / 2, table["cluster_consensus"], width, color="tab:blue",
           label="cluster consensus (Monti et al. 2003)")
    ax.bar(clusters + width / 2, table["mean_jaccard"], width, color="tab:orange",
           label="mean Jaccard (Hennig 2007)")
    ax.axhline(0.6, color="0.4", linestyle=":", linewidth=1.0)
    ax.axhline(0.85, color="0.4", linestyle="--", linewidth=1.0)
    ax.text(1.0, 0.6, " not stable below", transform=ax.get_yaxis_transform(), va="center",
            fontsize="x-small", color="0.3")
    ax.text(1.0, 0.85, " highly stable above", transform=ax.get_yaxis_transform(), va="center",
            fontsize="x-small", color="0.3")
    ax.set_xticks(clusters)
    ax.set_xticklabels([f"{c}\n(n={size})" for c, size in zip(table["cluster"], table["size"])])
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("cluster (size)")
    ax.set_ylabel("score (1 = always together)")
    ax.set_title(f"Clusters at K = {k}: consensus and stability")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), fontsize="small", ncol=2, frameon=False)
    return ax


def plot_select_k(result: Any) -> Any:
    """The views of :func:`cclust.select_k` on one Figure, the selected K highlighted.

    Panels: consensus CDF (:func:`plot_consensus_cdf`), delta area (:func:`plot_delta_area`),
    PAC (:func:`plot_pac`) and a fourth panel when there is something to show: with a
    reference null the data's PAC against the references' (:func:`plot_reference_null`), else
    the consensus method's own criterion per K when it reported one (a 2 x 2 grid; three panels
    in a row with neither, as for ``method="monti", null=None``); the title gives the selected
    K, the rule that chose it and why.

    Parameters
    ----------
    result : SelectKResult
        The result of :func:`cclust.select_k`.

    Returns
    -------
    figure : matplotlib Figure
        A new Figure (no pyplot involved) with four Axes in ``figure.axes`` (three without a
        criterion).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from cclust.plotting import plot_select_k
    >>> grid = np.linspace(0, 1, 11)
    >>> res = SimpleNamespace(
    ...     k_values=np.array([2, 3]), cdf_grid=grid, best_k=3, criterion="pac",
    ...     cdf=np.vstack([np.minimum(1, 0.4 + grid), np.full(11, 0.7)]),
    ...     delta_area=np.array([0.5, 0.2]), pac=np.array([0.3, 0.0]),
    ...     objective=np.array([1.2, 1.9]), objective_name="utility (higher is better)",
    ...     method="kcc", reason="K = 3 has the lowest PAC (0).")
    >>> fig = plot_select_k(res)
    >>> len(fig.axes)
    4
    """
    f = _selection_fields(result, "cdf_grid", "cdf", "delta_area", "pac", "objective")
    mpl = _matplotlib()
    has_reference = getattr(result, "pac_reference", None) is not None
    if has_reference or np.isfinite(np.asarray(f["objective"], dtype=float)).any():
        figure = mpl.figure.Figure(figsize=(10.0, 7.5), layout="constrained")
        axes = figure.subplots(2, 2).ravel()
        if has_reference:
            plot_reference_null(result, ax=axes[3])
        else:
            _plot_objective(result, axes[3])
    else:  # neither a reference nor a criterion: three panels, no empty fourth
        figure = mpl.figure.Figure(figsize=(13.5, 4.2), layout="constrained")
        axes = figure.subplots(1, 3)
    plot_consensus_cdf(result, ax=axes[0])
    plot_delta_area(result, ax=axes[1])
    plot_pac(result, ax=axes[2])
    best = _best_k(result, f["k_values"])
    title = f"Selected K = {best}" if best is not None else "Choosing K"
    criterion = getattr(result, "criterion", None)
    if best is not None and criterion:
        title += f" (criterion: {criterion})"
    reason = getattr(result, "reason", "")
    if reason:
        import textwrap

        title += "\n" + textwrap.fill(str(reason), 110)
    figure.suptitle(title)
    return figure


# -- Monti et al.'s consensus heatmap and ConsensusClusterPlus's tracking plot ------------------
def _result_k(result, k):
    """(K, its labels) of a SelectKResult, K defaulting to ``result.best_k``."""
    if not hasattr(result, "labels") or not hasattr(result, "k_values"):
        raise ValidationError(f"result must be the SelectKResult returned by cclust.select_k, got {type(result).__name__}.")
    k = result.best_k if k is None else k
    if k not in result.labels:
        raise ValidationError(f"k must be one of the K tried {sorted(result.labels)}, got {k!r}.")
    return int(k), np.asarray(result.labels[k], dtype=np.int64)


def plot_consensus_heatmap(result: Any, k: int | None = None, *, cmap: Any = "Blues", max_objects: int = 1000,
                           random_state: RandomStateLike = 0) -> Any:
    """Monti et al.'s consensus heatmap at one K: dendrogram, cluster colour bar and matrix.

    The objects are ordered by the leaves of the average-linkage tree of ``1 - M`` (the tree
    whose cut gives :func:`cclust.select_k`'s labels), drawn above the matrix, with a bar giving
    each object's cluster; a stable K shows dark blocks on the diagonal, as in Monti et al.
    (2003, fig. 2) and ConsensusClusterPlus (Wilkerson & Hayes 2010).

    Parameters
    ----------
    result : SelectKResult
        From ``select_k(..., keep_matrices=True)``.
    k : int, default=None
        The K to draw; None: ``result.best_k``.
    cmap : str or matplotlib Colormap, default="Blues"
    max_objects : int, default=1000
        Above this many objects a stratified subsample (every cluster in proportion, each at
        least once) is drawn and the title says so.
    random_state : int, Generator or None, default=0
        Seed of the subsample.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from cclust import select_k
    >>> from cclust.plotting import plot_consensus_heatmap
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.3, (15, 2)) for c in (0, 3)])
    >>> fig = plot_consensus_heatmap(select_k(X, [2, 3], n_resamples=10, keep_matrices=True, random_state=0))
    >>> fig.axes[2].get_title()
    'Consensus matrix at K = 2 (30 objects)'
    """
    from scipy.cluster.hierarchy import dendrogram, linkage
    from scipy.spatial.distance import squareform

    k, labels = _result_k(result, k)
    matrices = getattr(result, "consensus_matrices", None)
    if not matrices or k not in matrices or matrices[k] is None:
        raise ValidationError("the heatmap needs the consensus matrices: call select_k(..., keep_matrices=True).")
    max_objects = check_int(max_objects, "max_objects", low=2)
    _, n, getter = _matrix_input(matrices[k])
    codes, n_clusters, _ = _labels(labels, n)
    idx = None
    if n > max_objects:
        idx = _stratified_sample(codes, n_clusters, max_objects, check_random_state(random_state))
        codes = codes[idx]
    A = getter(idx)
    D = np.clip(1.0 - (A + A.T) / 2.0, 0.0, 1.0)
    np.fill_diagonal(D, 0.0)
    mpl = _matplotlib()
    figure = mpl.figure.Figure(figsize=(5.6, 6.4), layout="constrained")
    grid = figure.add_gridspec(3, 2, height_ratios=(1.2, 0.18, 4.2), width_ratios=(20, 1))
    tree_ax = figure.add_subplot(grid[0, 0])
    bar_ax = figure.add_subplot(grid[1, 0])
    heat_ax = figure.add_subplot(grid[2, 0])
    if A.shape[0] >= 2:
        Z = linkage(squareform(D, checks=False), method="average")
        order = dendrogram(Z, ax=tree_ax, no_labels=True, color_threshold=0, above_threshold_color="0.3")["leaves"]
    else:
        order = [0]
    tree_ax.set_axis_off()
    colours = _cluster_colors(n_clusters)
    bar_ax.imshow(colours[codes[order]][None, :, :], aspect="auto", interpolation="nearest")
    bar_ax.set_xticks([])
    bar_ax.set_yticks([0], ["cluster"])
    image = heat_ax.imshow(A[np.ix_(order, order)], cmap=_colormap(cmap), vmin=0.0, vmax=1.0,
                           interpolation="nearest", aspect="auto")
    heat_ax.set_xticks([])
    heat_ax.set_yticks([])
    heat_ax.set_xlabel("objects (consensus-tree order)")
    title = f"Consensus matrix at K = {k} ({n} objects)"
    if idx is not None:
        title += f"\n(stratified subsample of {A.shape[0]})"
    heat_ax.set_title(title)
    figure.colorbar(image, cax=figure.add_subplot(grid[2, 1]), label="consensus")
    handles = [mpl.patches.Patch(color=colours[c], label=str(c)) for c in range(min(n_clusters, _MAX_LEGEND_CLUSTERS))]
    tree_ax.legend(handles=handles, title="cluster", loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7,
                   title_fontsize=7, frameon=False)
    return figure


def plot_tracking(result: Any, *, ax: Any = None) -> Any:
    """ConsensusClusterPlus's tracking plot: every object's cluster at every K tried.

    One row per K, one column per object; the colour is the object's cluster at that K. Objects
    are sorted by their clusters at the smallest K, then the next, and so on, and each cluster
    takes the colour of the cluster of the previous K it shares most objects with (a new colour
    when that one is already taken), so a cluster that splits keeps its colour in its larger
    part. Objects that change colour often between K are the unstable ones (Wilkerson & Hayes
    2010).

    Parameters
    ----------
    result : SelectKResult
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from cclust import select_k
    >>> from cclust.plotting import plot_tracking
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.3, (15, 2)) for c in (0, 3)])
    >>> ax = plot_tracking(select_k(X, [2, 3, 4], n_resamples=10, random_state=0))
    >>> ax.get_ylabel()
    'K'
    """
    if not hasattr(result, "labels") or not hasattr(result, "k_values"):
        raise ValidationError(f"result must be the SelectKResult returned by cclust.select_k, got {type(result).__name__}.")
    ks = [int(k) for k in np.asarray(result.k_values).tolist()]
    rows = np.array([np.asarray(result.labels[k], dtype=np.int64) for k in ks])
    order = np.lexsort(rows[::-1])
    colour_of: list[dict[int, int]] = []  # per K: cluster -> colour index
    next_colour = 0
    for r, k in enumerate(ks):
        mapping = {}
        if r == 0:
            for c in range(k):
                mapping[c] = c
            next_colour = k
        else:
            previous = rows[r - 1]
            taken = set()
            sizes = np.bincount(rows[r], minlength=k)
            for c in np.argsort(-sizes, kind="stable"):
                members = rows[r] == c
                overlap = np.bincount(previous[members], minlength=int(previous.max()) + 1)
                best = colour_of[-1].get(int(np.argmax(overlap))) if members.any() else None
                if best is None or best in taken:
                    best, next_colour = next_colour, next_colour + 1
                taken.add(best)
                mapping[int(c)] = best
        colour_of.append(mapping)
    colours = _cluster_colors(max(next_colour, 1))
    image = np.empty((len(ks), rows.shape[1], 3))
    for r in range(len(ks)):
        lookup = np.array([colour_of[r].get(c, 0) for c in range(int(rows[r].max()) + 1)])
        image[r] = colours[lookup[rows[r][order]]]
    ax = _axes(ax, (6.4, 0.45 * len(ks) + 1.4))
    ax.imshow(image, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(ks)), [str(k) for k in ks])
    ax.set_ylabel("K")
    ax.set_xticks([])
    ax.set_xlabel(f"objects ({rows.shape[1]}, sorted by their clusters across K)")
    ax.set_title("Tracking plot: each object's cluster at each K")
    return ax
