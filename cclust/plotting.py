"""Figures of consensus clusterings (optional dependency: matplotlib, ``pip install 'cclust[plot]'``).

* :func:`plot_consensus_matrix` — the co-association (or any consensus) matrix as a heatmap,
  objects ordered by their consensus label so that clusters show as blocks on the diagonal.
* :func:`plot_consensus_cdf`, :func:`plot_delta_area`, :func:`plot_pac` and :func:`plot_select_k`
  — Monti et al.'s consensus CDF and delta-area curves and the PAC of Senbabaoglu et al. for the
  result of :func:`cclust.select_k`.
* :func:`plot_cluster_stability` — per cluster at one K, ConsensusClusterPlus's cluster
  consensus beside the mean Jaccard of Hennig (2007), with its readings.
* :func:`plot_consensus_heatmap` and :func:`plot_tracking` — Monti et al.'s consensus heatmap at
  one K with its dendrogram and cluster colour bar, and ConsensusClusterPlus's tracking plot of
  every object's cluster across K.
* :func:`plot_confidence` — how sure the ensemble is of each object, on a 2-D embedding, with
  :func:`object_confidence` (the fraction of partitions agreeing with the consensus).
* :func:`plot_method_comparison` — a bar chart of a score per consensus method.
* :func:`plot_memberships` — soft partitions (Hornik 2005): a membership matrix (objects x
  clusters, objects sorted by their hard label) of a soft result (``extras["membership"]``), of
  one partition of a :class:`cclust.soft.SoftEnsemble` or of all of them side by side.
  :func:`plot_consensus_matrix` draws a SoftEnsemble's expected co-membership; the plots built
  on hard labels (:func:`object_confidence`, :func:`plot_confidence`) refuse fractional
  memberships and say which plot to use instead.

Notes
-----
* matplotlib is imported inside the functions, so ``import cclust.plotting`` costs nothing and
  works without it; a call without it raises ``ImportError`` saying what to install.
* No pyplot: a function given ``ax=None`` builds a ``matplotlib.figure.Figure`` of its own, so
  nothing here selects a backend, opens a window or touches pyplot's current figure. Save with
  ``ax.figure.savefig(path)``; in a notebook, display ``ax.figure``.
* Each function returns the Axes it drew on (the Figure for the multi-panel
  :func:`plot_select_k`), so callers can restyle it.
"""
import numbers

import numpy as np

from cclust.validation import check_array_2d, check_int, check_random_state, label_vector
from cclust.ensemble import Ensemble, as_ensemble
from cclust.errors import ValidationError

__all__ = [
    "object_confidence",
    "plot_confidence",
    "plot_consensus_cdf",
    "plot_consensus_heatmap",
    "plot_consensus_matrix",
    "plot_delta_area",
    "plot_evaluation",
    "plot_memberships",
    "plot_method_comparison",
    "plot_pac",
    "plot_select_k",
    "plot_cluster_stability",
    "plot_reference_null",
    "plot_tracking",
]

_INSTALL_HINT = "pip install 'cclust[plot]'"

#: Cluster ticks on the heatmap are readable up to about this many clusters.
_MAX_TICKED_CLUSTERS = 30

#: Clusters listed in a scatter legend; beyond this the legend hides the data.
_MAX_LEGEND_CLUSTERS = 12

#: Largest scatter for which the legend looks for the emptiest corner.
_BEST_LEGEND_POINTS = 1000

#: Cluster-overlap tables of object_confidence up to this many cells are built dense.
_DENSE_TABLE_CELLS = 1 << 22

#: Marks the selected K in every select_k panel.
_BEST_COLOUR = "tab:red"

#: Heatmap colour of a pair never compared (NaN in a consensus matrix of select_k).
_NO_DATA_COLOUR = "0.75"

#: Values a co-association may exceed [0, 1] by through rounding (sums of weights).
_UNIT_TOLERANCE = 1e-8


# -- shared helpers ---------------------------------------------------------------------------
def _matplotlib():
    """Import matplotlib on first use, or say how to install it."""
    try:
        import matplotlib
        import matplotlib.axes
        import matplotlib.cm
        import matplotlib.colors
        import matplotlib.figure
    except ImportError as exc:
        raise ImportError(
            f"cclust.plotting needs matplotlib, which could not be imported ({exc}); "
            f"install it with: {_INSTALL_HINT}"
        ) from exc
    return matplotlib


def _axes(ax, figsize):
    """``ax`` after checking it, or the Axes of a new pyplot-free Figure."""
    mpl = _matplotlib()
    if ax is None:
        figure = mpl.figure.Figure(figsize=figsize, layout="constrained")
        return figure.add_subplot()
    if not isinstance(ax, mpl.axes.Axes):
        raise ValidationError(
            f"ax must be a matplotlib Axes or None (to draw on a new Figure), got {type(ax).__name__}."
        )
    return ax


def _colormap(cmap, name="cmap"):
    mpl = _matplotlib()
    if isinstance(cmap, mpl.colors.Colormap):
        return cmap
    if isinstance(cmap, str):
        try:
            return mpl.colormaps[cmap]
        except KeyError:
            pass
    raise ValidationError(
        f"{name} must be a matplotlib colormap or the name of one (e.g. 'Blues', 'viridis', 'Greys'), "
        f"got {cmap!r}."
    )


def _cluster_colors(n_clusters):
    """One distinct RGB colour per cluster: qualitative maps while they last."""
    mpl = _matplotlib()
    if n_clusters <= 10:
        return np.asarray(mpl.colormaps["tab10"].colors)[:n_clusters]
    if n_clusters <= 20:
        return np.asarray(mpl.colormaps["tab20"].colors)[:n_clusters]
    return mpl.colormaps["turbo"](np.linspace(0.05, 0.95, n_clusters))[:, :3]


def _labels(labels, n, name="labels"):
    """int64 codes 0..K-1 (sorted order of the values), K, and the values themselves."""
    array = np.asarray(labels)
    if array.ndim != 1:
        raise ValidationError(f"{name} must be 1-D (n_samples,), got an array of shape {array.shape}.")
    if array.shape[0] != n:
        raise ValidationError(f"{name} must have one entry per object ({n}), got {array.shape[0]}.")
    codes, k = label_vector(array, name)
    # label_vector may hand back the caller's array: copy before any use that could write.
    codes = np.array(codes, dtype=np.int64, copy=True)
    values = np.unique(array)
    return codes, k, values


# -- consensus matrix -------------------------------------------------------------------------
def _stratified_sample(codes, n_clusters, size, rng):
    """``size`` sorted object indices, each cluster represented in proportion to its size.

    Quotas are rounded by largest remainder (ties to the lower cluster code); when ``size`` is
    at least the number of clusters every cluster keeps one object at least, so a small cluster
    never vanishes from the picture.
    """
    n = codes.shape[0]
    sizes = np.bincount(codes, minlength=n_clusters)
    exact = sizes * (size / n)
    quota = np.floor(exact).astype(np.int64)
    short = size - int(quota.sum())
    if short:
        by_remainder = np.lexsort((np.arange(n_clusters), -(exact - quota)))
        quota[by_remainder[:short]] += 1
    if size >= n_clusters:
        for c in np.flatnonzero(quota == 0):
            donor = int(np.argmax(quota))
            quota[donor] -= 1
            quota[c] += 1
    members = np.argsort(codes, kind="stable")
    starts = np.concatenate(([0], np.cumsum(sizes)))
    chosen = [rng.choice(members[starts[c]:starts[c + 1]], size=int(quota[c]), replace=False)
              for c in range(n_clusters)]
    return np.sort(np.concatenate(chosen))


def _matrix_input(data):
    """(kind, n, getter): getter(idx or None) returns the dense float64 submatrix."""
    if isinstance(data, Ensemble):
        ensemble = data

        def getter(idx):
            if idx is None:
                return np.array(ensemble.coassociation(), dtype=np.float64)
            sub = ensemble.labels[idx]
            # A partition labelling none of the sampled objects adds to no pair: drop it, since
            # an Ensemble refuses a partition without objects.
            keep = np.flatnonzero((sub >= 0).any(axis=0))
            if keep.size == 0:
                return np.zeros((idx.shape[0], idx.shape[0]))
            return np.array(ensemble.take(idx, keep).coassociation(), dtype=np.float64)

        return "co-association", ensemble.n_samples, getter

    from cclust.soft import is_soft_ensemble

    if is_soft_ensemble(data):
        soft = data

        def soft_getter(idx):
            sub = soft if idx is None else soft.take(idx)
            return np.array(sub.coassociation(), dtype=np.float64)

        return "expected co-membership", soft.n_samples, soft_getter

    import scipy.sparse as sp

    if sp.issparse(data):
        matrix = sp.csr_matrix(data)
        values = matrix.data
    else:
        try:
            matrix = np.asarray(data)
        except Exception as exc:
            raise ValidationError(f"data must be an Ensemble or a square (n, n) matrix: {exc}") from None
        if matrix.dtype.kind not in "biuf":
            raise ValidationError(
                f"data must be an Ensemble or a square (n, n) matrix of numbers, got dtype {matrix.dtype}."
            )
        values = matrix
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise ValidationError(
            f"data must be an Ensemble or a square (n, n) co-association/consensus matrix, got shape "
            f"{matrix.shape}; to plot basic partitions of shape (n_samples, n_partitions), pass "
            "Ensemble(labels)."
        )
    if np.isinf(values).any():
        raise ValidationError(
            "data contains infinity; a consensus matrix holds fractions in [0, 1] (NaN marks a pair never "
            "compared)."
        )
    known = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    if known.size and (known.min() < -_UNIT_TOLERANCE or known.max() > 1 + _UNIT_TOLERANCE):
        raise ValidationError(
            f"data must hold fractions in [0, 1] (a co-association or consensus matrix), got values in "
            f"[{known.min():.4g}, {known.max():.4g}]."
        )

    def getter(idx):
        sub = matrix if idx is None else matrix[idx][:, idx]
        sub = sub.toarray() if sp.issparse(sub) else sub
        # Always a fresh float64 array: the caller's matrix is never written to.
        return np.clip(np.array(sub, dtype=np.float64), 0.0, 1.0)

    return "consensus", matrix.shape[0], getter


def _block_order(A, codes, n_clusters):
    """Objects by cluster code; within a cluster, in the leaf order of an average-linkage tree.

    The tree order keeps a cluster's own sub-blocks contiguous (sorting by a per-object score
    such as mean co-association would interleave two equally cohesive sub-blocks).
    """
    order = []
    for c in range(n_clusters):
        members = np.flatnonzero(codes == c)
        if members.size:
            order.append(members[_linkage_order(A[np.ix_(members, members)])])
    return np.concatenate(order)


def _linkage_order(A):
    """Leaf order of average linkage on 1 - A: similar objects end up adjacent."""
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    if A.shape[0] < 3:
        return np.arange(A.shape[0])
    A = np.nan_to_num(A, nan=0.0)    # a pair never compared gives no evidence of similarity
    D = 1.0 - (A + A.T) / 2.0
    np.fill_diagonal(D, 0.0)
    # Rounded so that matrices equal up to float noise (a co-association computed two ways)
    # break the linkage's many ties the same way and give the same picture.
    D = np.round(np.clip(D, 0.0, 1.0), 9)
    return leaves_list(linkage(squareform(D, checks=False), method="average"))


def plot_consensus_matrix(data, labels=None, *, ax=None, cmap="Blues", max_objects=2000, random_state=0):
    """Heatmap of a co-association or consensus matrix, ordered by the consensus labels.

    Objects are sorted by consensus label (clusters in the sorted order of the label values)
    and, within a cluster, by the leaves of an average-linkage tree on ``1 - data`` so that any
    structure inside a cluster shows as contiguous sub-blocks; lines mark the cluster
    boundaries. A good consensus shows dark square blocks on the diagonal on a light
    background; pale rows inside a block are objects the ensemble is unsure of.

    Parameters
    ----------
    data : Ensemble, SoftEnsemble, ndarray of shape (n_samples, n_samples) or scipy sparse matrix
        An Ensemble (its weighted co-association :meth:`cclust.Ensemble.coassociation` is drawn), a
        :class:`cclust.soft.SoftEnsemble` (its expected co-membership ``sum_i w_i U_i U_i^T``,
        :meth:`cclust.soft.SoftEnsemble.coassociation`, whose diagonal is below 1 for fuzzy rows) or a
        square matrix of fractions in [0, 1], such as a co-association or a consensus matrix of
        Monti et al. kept by :func:`cclust.select_k` (``keep_matrices=True``), whose NaN entries
        (pairs never sampled together) are drawn grey and count as dissimilar when ordering.
    labels : array-like of shape (n_samples,), default=None
        Consensus labels giving the order and the blocks. None orders the objects by the leaves
        of an average-linkage tree on ``1 - data`` and draws no boundaries.
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure (no pyplot involved).
    cmap : str or matplotlib Colormap, default="Blues"
        Colours of the values 0 (first) to 1 (last); a sequential map reads best.
    max_objects : int, default=2000
        Above this many objects a stratified subsample of ``max_objects`` objects is drawn
        (every cluster in proportion to its size, each at least once) and the title says so;
        only the subsample's co-association is computed.
    random_state : int, numpy Generator or None, default=0
        Seed of the subsample; the default makes the picture reproducible.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on (``ax`` itself when given); its Figure is ``ax.figure``.

    Examples
    --------
    >>> from cclust import Ensemble
    >>> from cclust.plotting import plot_consensus_matrix
    >>> E = Ensemble([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]])
    >>> ax = plot_consensus_matrix(E, labels=[0, 0, 0, 1, 1, 1])
    >>> ax.get_title()
    'Co-association of 6 objects, 2 clusters'
    >>> import io
    >>> ax.figure.savefig(io.BytesIO(), format="png", dpi=50)
    """
    max_objects = check_int(max_objects, "max_objects", low=2)
    kind, n, getter = _matrix_input(data)
    if labels is not None:
        codes, n_clusters, values = _labels(labels, n)
    else:
        codes, n_clusters, values = np.zeros(n, dtype=np.int64), 1, None
    cmap = _colormap(cmap)
    ax = _axes(ax, (5.2, 4.4))

    if n > max_objects:
        rng = check_random_state(random_state)
        idx = _stratified_sample(codes, n_clusters, max_objects, rng)
        codes = codes[idx]
    else:
        idx = None
    A = getter(idx)
    m = A.shape[0]
    order = _block_order(A, codes, n_clusters) if labels is not None else _linkage_order(A)
    A = A[np.ix_(order, order)]

    image = ax.imshow(np.ma.masked_invalid(A), cmap=cmap.with_extremes(bad=_NO_DATA_COLOUR), vmin=0.0, vmax=1.0,
                      interpolation="nearest", aspect="equal")
    ax.figure.colorbar(image, ax=ax, label=kind, shrink=0.9)
    title = f"{kind.capitalize()} of {n} objects"
    if labels is not None:
        sizes = np.bincount(codes, minlength=n_clusters)
        bounds = np.cumsum(sizes)[:-1] - 0.5
        for b in bounds:
            ax.axhline(b, color="black", linewidth=0.8)
            ax.axvline(b, color="black", linewidth=0.8)
        title += f", {n_clusters} clusters"
        centres = np.cumsum(sizes) - sizes / 2.0 - 0.5
        present = sizes > 0
        if n_clusters <= _MAX_TICKED_CLUSTERS:
            names = [str(v) for v in values[present]]
            ax.set_xticks(centres[present], names)
            ax.set_yticks(centres[present], names)
            ax.set_xlabel("consensus cluster")
            ax.set_ylabel("consensus cluster")
        else:
            ax.set_xticks([])
            ax.set_yticks([])
    else:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("objects (average-linkage order)")
    if idx is not None:
        title += f"\n(stratified subsample of {m} of {n} objects)"
    ax.set_title(title)
    return ax


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


def plot_consensus_cdf(result, *, ax=None):
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


def plot_delta_area(result, *, ax=None):
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


def plot_pac(result, *, ax=None):
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
    return _k_curve(ax, f["k_values"], f["pac"], _best_k(result, f["k_values"]), "tab:green",
                    "proportion of ambiguous clustering", "PAC (lower is better)")


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


def plot_reference_null(result, *, ax=None):
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
    from cclust.selection import format_p

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


def plot_cluster_stability(result, k=None, *, ax=None):
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


def plot_select_k(result):
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
    ...     method="kcc", reason="K = 3 has the lowest PAC (0.000).")
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


# -- per-object confidence --------------------------------------------------------------------
def object_confidence(ensemble, labels):
    """Weighted fraction of the partitions that agree with the consensus about each object.

    "Agreeing" is defined by majority matching: each cluster of partition pi_i is mapped to the
    consensus cluster it shares the most objects with (counting only objects pi_i labels), and
    pi_i agrees about object x when x's cluster in pi_i maps to x's consensus label. A cluster
    that shares its largest count with t consensus clusters counts as agreeing by 1/t for the
    objects of each of them (the expected agreement under a random tie-break), so the
    confidence does not depend on how the clusters are numbered. The confidence of x is
    ``sum_i w_i agree_i(x) / sum_i w_i [pi_i labels x]`` with ``w_i`` the ensemble's partition
    weights (equal weights: the plain fraction of partitions); partitions missing x are left
    out, and an object no partition labels gets NaN.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        The basic partitions (anything :class:`cclust.Ensemble` accepts).
    labels : array-like of shape (n_samples,)
        Consensus labels.

    Returns
    -------
    confidence : ndarray of shape (n_samples,)
        float64 in [0, 1]; NaN for an object that no partition labels.

    Examples
    --------
    >>> from cclust.plotting import object_confidence
    >>> object_confidence([[0, 0, 1, 1], [0, 0, 1, 1], [0, 1, 1, 1]], [0, 0, 1, 1]).tolist()
    [1.0, 0.6666666666666666, 1.0, 1.0]
    """
    ensemble = _hard_ensemble(ensemble, "object_confidence")
    n = ensemble.n_samples
    codes, n_clusters, _ = _labels(labels, n)
    L = ensemble.labels
    present = L >= 0
    # Global cluster ids: partition i's clusters occupy offsets[i]:offsets[i+1].
    global_ids = (L + ensemble.offsets[:-1][None, :].astype(np.int64))[present]
    object_codes = np.broadcast_to(codes[:, None], L.shape)[present]
    agree = np.zeros(L.shape)
    agree[present] = _agreement(global_ids, object_codes, int(ensemble.offsets[-1]), n_clusters)
    w = ensemble.weights
    labelled_weight = present @ w
    agree_weight = agree @ w
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = np.where(labelled_weight > 0, agree_weight / np.where(labelled_weight > 0, labelled_weight, 1.0),
                              np.nan)
    # Weighted sums of ones can overshoot 1 by an ulp.
    return np.minimum(confidence, 1.0)


def _hard_ensemble(ensemble, what):
    """``as_ensemble(ensemble)``, refusing a SoftEnsemble with fractional memberships in words
    that name the plot and the ones that draw soft partitions."""
    from cclust.soft import is_soft_ensemble

    if is_soft_ensemble(ensemble) and not ensemble.is_hard:
        raise ValidationError(
            f"ensemble: {what} counts the partitions whose cluster agrees with the consensus, which needs hard "
            "labels, and this SoftEnsemble has fractional memberships. Draw soft partitions with "
            "plot_memberships (memberships sorted by cluster) or plot_consensus_matrix (expected co-membership), "
            "or pass ensemble.harden() (each object's most likely cluster).")
    return as_ensemble(ensemble)


def _agreement(cluster_ids, codes, n_ensemble_clusters, n_clusters):
    """agree_i(x) of :func:`object_confidence` for each (object, partition) entry listed.

    ``cluster_ids`` are the entries' ensemble clusters (0..n_ensemble_clusters-1) and ``codes``
    the objects' consensus labels. The overlap table is dense when small, else only its
    non-zero cells are formed (sorted keys), so many clusters on both sides stay O(n r).
    """
    keys = cluster_ids * n_clusters + codes
    if n_ensemble_clusters * n_clusters <= max(_DENSE_TABLE_CELLS, keys.shape[0]):
        table = np.bincount(keys, minlength=n_ensemble_clusters * n_clusters).reshape(-1, n_clusters)
        is_best = table == table.max(axis=1, keepdims=True)
        share = is_best / is_best.sum(axis=1, keepdims=True)
        return share[cluster_ids, codes]
    cells, cell_of_entry, counts = np.unique(keys, return_inverse=True, return_counts=True)
    cluster_of_cell = cells // n_clusters
    largest = np.zeros(n_ensemble_clusters, dtype=counts.dtype)
    np.maximum.at(largest, cluster_of_cell, counts)
    is_best = counts == largest[cluster_of_cell]
    n_best = np.bincount(cluster_of_cell[is_best], minlength=n_ensemble_clusters)
    share = np.where(is_best, 1.0 / np.maximum(n_best[cluster_of_cell], 1), 0.0)
    return share[cell_of_entry.reshape(-1)]


def _pca_2d(X):
    """First two principal-component scores (NumPy SVD) and the variance share of each."""
    centred = X - X.mean(axis=0)
    U, S, Vt = np.linalg.svd(centred, full_matrices=False)
    # Fix each axis's sign (largest loading positive) so the picture does not flip between runs.
    signs = np.sign(Vt[np.arange(Vt.shape[0]), np.abs(Vt).argmax(axis=1)])
    signs[signs == 0] = 1.0
    scores = U * S * signs
    variance = S ** 2
    share = variance / variance.sum() if variance.sum() > 0 else np.zeros_like(variance)
    if scores.shape[1] < 2:
        scores = np.column_stack([scores, np.zeros(X.shape[0])])
        share = np.concatenate([share, [0.0]])
    return scores[:, :2], share[:2]


def _confidence_source(n, confidence, ensemble, result, codes_source):
    """(values, colour-bar label, title, higher_is_surer) from whichever single source was given."""
    given = [name for name, v in (("confidence", confidence), ("ensemble", ensemble), ("result", result))
             if v is not None]
    if not given:
        raise ValidationError(
            "pass one of confidence= (an array, one value per object), ensemble= (the basic partitions: "
            "the fraction agreeing with the consensus is shown) or result= (a WOEC result with "
            "extras['object_weights'], or one whose extras hold the 'ensemble')."
        )
    if len(given) > 1:
        raise ValidationError(f"pass only one of confidence=, ensemble= or result=, got {' and '.join(given)}.")
    if confidence is not None:
        values = np.array(confidence, dtype=np.float64, copy=True) if np.ndim(confidence) else None
        if values is None or values.ndim != 1 or values.shape[0] != n:
            raise ValidationError(
                f"confidence must be 1-D with one value per object ({n}), got shape {np.shape(confidence)}."
            )
        if np.isinf(values).any():
            raise ValidationError("confidence contains infinity; use finite values (NaN marks an unknown object).")
        return values, "confidence", "Per-object confidence", True
    if ensemble is not None:
        return (object_confidence(ensemble, codes_source), "fraction of partitions agreeing",
                "Confidence: fraction of partitions agreeing", True)
    extras = getattr(result, "extras", None)
    if extras is None:
        raise ValidationError(f"result must be a ConsensusResult, got {type(result).__name__}.")
    if "object_weights" in extras:
        values = np.array(extras["object_weights"], dtype=np.float64, copy=True).reshape(-1)
        if values.shape[0] != n:
            raise ValidationError(
                f"result.extras['object_weights'] has {values.shape[0]} values but labels has {n} objects."
            )
        # WOEC weights (Ren et al. 2017, eq. 4) grow with the ensemble's disagreement: high = uncertain.
        return values, "WOEC object weight (high = uncertain)", "Confidence: WOEC object weights", False
    if "ensemble" in extras:
        return (object_confidence(extras["ensemble"], codes_source), "fraction of partitions agreeing",
                "Confidence: fraction of partitions agreeing", True)
    method = getattr(result, "method", "") or "this method"
    raise ValidationError(
        f"result (from {method}) holds neither extras['object_weights'] (WOEC methods: womc, wosp, wohb, "
        "wokmeans) nor extras['ensemble']; pass ensemble= to show the fraction of partitions agreeing."
    )


def plot_confidence(X, labels, confidence=None, *, ensemble=None, result=None, ax=None, embedding="pca"):
    """Per-object confidence of a consensus clustering on a 2-D embedding.

    Each object is a dot coloured by its consensus label; its fill fades and its edge colour
    moves along the colour bar as the ensemble grows less sure of it, and the least sure objects
    are drawn on top. The confidence comes from exactly one of:

    * ``confidence`` — any values, higher meaning surer (NaN: unknown, drawn hollow grey);
    * ``ensemble`` — :func:`object_confidence`: the weighted fraction of partitions agreeing
      with the consensus about the object (majority matching of clusters, see there);
    * ``result`` — a WOEC result's ``extras["object_weights"]`` (Ren et al. 2017, eq. 4; high weights mark
      objects the partitions disagree about, so the scale is reversed: faded = heavy), or, for a
      result carrying its ensemble (``extras["ensemble"]``, e.g. gkcc), the agreeing fraction.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or None
        The data. Two columns are drawn as they are; more are projected on their first two
        principal components (NumPy SVD, signs fixed so the picture is reproducible). May be None
        when ``embedding`` is an array.
    labels : array-like of shape (n_samples,)
        Consensus labels.
    confidence : array-like of shape (n_samples,), default=None
        Per-object confidence, higher meaning surer.
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions), default=None
        Basic partitions, to show :func:`object_confidence`.
    result : ConsensusResult, default=None
        A result holding ``extras["object_weights"]`` (WOEC) or ``extras["ensemble"]``.
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.
    embedding : "pca" or array-like of shape (n_samples, 2), default="pca"
        "pca" as described under ``X``; an array is used as the 2-D coordinates.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on (``ax`` itself when given); its Figure is ``ax.figure``.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.plotting import plot_confidence
    >>> X = np.array([[0, 0], [0, 1], [5, 5], [5, 6]])
    >>> ax = plot_confidence(X, [0, 0, 1, 1], ensemble=[[0, 0, 1, 1], [0, 1, 1, 1]])
    >>> ax.get_title()
    'Confidence: fraction of partitions agreeing'
    """
    if isinstance(embedding, str):
        if embedding != "pca":
            raise ValidationError(f"embedding must be 'pca' or an array of shape (n_samples, 2), got {embedding!r}.")
        if X is None:
            raise ValidationError("X is None: pass the data, or the 2-D coordinates as embedding=.")
        X = check_array_2d(X, "X")
        if X.shape[1] == 2:
            coords, axis_names = X, ("X[:, 0]", "X[:, 1]")
        else:
            coords, share = _pca_2d(X)
            axis_names = tuple(f"PC {i + 1} ({100 * s:.0f}% of variance)" for i, s in enumerate(share))
    else:
        coords = check_array_2d(embedding, "embedding")
        if coords.shape[1] != 2:
            raise ValidationError(f"embedding must have 2 columns (x, y), got shape {coords.shape}.")
        if X is not None:
            X = check_array_2d(X, "X")
            if X.shape[0] != coords.shape[0]:
                raise ValidationError(
                    f"X and embedding must hold the same objects: got {X.shape[0]} and {coords.shape[0]} rows."
                )
        axis_names = ("embedding 1", "embedding 2")
    n = coords.shape[0]
    codes, n_clusters, values = _labels(labels, n)
    if ensemble is not None:
        ensemble = _hard_ensemble(ensemble, "plot_confidence")
        if ensemble.n_samples != n:
            raise ValidationError(f"ensemble labels {ensemble.n_samples} objects but X has {n}.")
    conf, conf_label, title, higher_is_surer = _confidence_source(n, confidence, ensemble, result, codes)

    ax = _axes(ax, (5.6, 4.4))
    mpl = _matplotlib()
    known = np.isfinite(conf)
    if known.any():
        low, high = float(conf[known].min()), float(conf[known].max())
    else:
        low, high = 0.0, 1.0
    if higher_is_surer and 0.0 <= low and high <= 1.0:
        # Fractions: a fixed scale keeps plots comparable. WOEC weights keep their own range,
        # as they rarely get near 1 (that needs A_ij = 1/2 for every pair).
        low, high = 0.0, 1.0
    elif low == high:
        low, high = low - 0.5, high + 0.5
    norm = mpl.colors.Normalize(vmin=low, vmax=high)
    cmap = mpl.colormaps["viridis" if higher_is_surer else "viridis_r"]
    surety = np.clip(norm(np.where(known, conf, low)), 0.0, 1.0)
    if not higher_is_surer:
        surety = 1.0 - surety

    base = _cluster_colors(n_clusters)
    faces = np.empty((n, 4))
    faces[:, :3] = base[codes]
    faces[:, 3] = np.where(known, 0.15 + 0.85 * surety, 0.0)
    edges = cmap(norm(np.where(known, conf, low)))
    edges[~known] = mpl.colors.to_rgba("0.6")
    # Surest first, so the doubtful objects (the interesting ones) end up on top.
    order = np.lexsort((np.arange(n), -np.where(known, surety, -1.0)))
    size = float(np.clip(6000.0 / n, 10.0, 60.0))
    ax.scatter(coords[order, 0], coords[order, 1], s=size, c=faces[order], edgecolors=edges[order],
               linewidths=1.1)
    mappable = mpl.cm.ScalarMappable(norm=norm, cmap=cmap)
    ax.figure.colorbar(mappable, ax=ax, label=conf_label, shrink=0.9)
    if n_clusters <= _MAX_LEGEND_CLUSTERS:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], marker="o", linestyle="none", markerfacecolor=base[c], markeredgecolor="none",
                          markersize=7, label=str(values[c])) for c in range(n_clusters)]
        # matplotlib's "best" placement scans every point: slow (and warns) on large data.
        ax.legend(handles=handles, title="cluster", loc="best" if n <= _BEST_LEGEND_POINTS else "upper right",
                  fontsize="small", framealpha=0.8)
    ax.set_xlabel(axis_names[0])
    ax.set_ylabel(axis_names[1])
    ax.set_title(title)
    return ax


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


def plot_method_comparison(table, *, metric="ARI", ax=None):
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
    keys = []
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


# -- Monti et al.'s consensus heatmap and ConsensusClusterPlus's tracking plot ------------------
def _result_k(result, k):
    """(K, its labels) of a SelectKResult, K defaulting to ``result.best_k``."""
    if not hasattr(result, "labels") or not hasattr(result, "k_values"):
        raise ValidationError(f"result must be the SelectKResult returned by cclust.select_k, got {type(result).__name__}.")
    k = result.best_k if k is None else k
    if k not in result.labels:
        raise ValidationError(f"k must be one of the K tried {sorted(result.labels)}, got {k!r}.")
    return int(k), np.asarray(result.labels[k], dtype=np.int64)


def plot_consensus_heatmap(result, k=None, *, cmap="Blues", max_objects=1000, random_state=0):
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


def plot_tracking(result, *, ax=None):
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
    colour_of = []                     # per K: cluster -> colour index
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


def plot_evaluation(result, *, ax=None, cmap="RdYlGn_r"):
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


# -- soft partitions --------------------------------------------------------------------------
def _membership_input(data, partition):
    """(matrix (n, m), column groups [(start, stop, title)], default labels, what) of ``data``."""
    from cclust.result import ConsensusResult
    from cclust.soft import is_soft_ensemble

    if isinstance(data, ConsensusResult):
        if "membership" not in data.extras:
            raise ValidationError(
                f"data: this {data.method or 'consensus'} result holds no extras['membership'] (a soft consensus "
                "such as se, dwh, gv1 or sm keeps one); plot its hard labels with plot_consensus_matrix, or pass "
                "a membership matrix.")
        U = np.asarray(data.extras["membership"], dtype=np.float64)
        if U.ndim != 2 or U.shape[0] != data.labels.shape[0]:
            raise ValidationError(f"data: extras['membership'] must be (n_samples, K), got shape {U.shape}.")
        return U, [(0, U.shape[1], None)], data.labels, f"{data.method or 'consensus'} memberships"
    if is_soft_ensemble(data):
        if partition is None:
            groups = [(int(data.offsets[i]), int(data.offsets[i + 1]), f"{i}") for i in range(data.n_partitions)]
            U = data.stacked()
            return U, groups, data.memberships[0].argmax(axis=1), f"{data.n_partitions} soft partitions"
        partition = check_int(partition, "partition", low=0, high=data.n_partitions - 1)
        U = data.memberships[partition]
        return U, [(0, U.shape[1], None)], U.argmax(axis=1), f"partition {partition}"
    if isinstance(data, Ensemble):
        raise ValidationError(
            "data: an Ensemble holds hard labels (0/1 memberships); plot its co-association with "
            "plot_consensus_matrix, or pass SoftEnsemble(ensemble) to draw it as membership matrices.")
    U = check_array_2d(data, "data")
    if U.shape[1] < 2:
        raise ValidationError(f"data must be an (n_samples, K) membership matrix with K >= 2, got shape {U.shape}.")
    if (U < -_UNIT_TOLERANCE).any() or (U > 1 + _UNIT_TOLERANCE).any():
        raise ValidationError(
            f"data must hold memberships in [0, 1], got values in [{U.min():.4g}, {U.max():.4g}].")
    if partition is not None:
        raise ValidationError("partition only applies to a SoftEnsemble.")
    return np.asarray(U, dtype=np.float64), [(0, U.shape[1], None)], U.argmax(axis=1), "memberships"


def plot_memberships(data, labels=None, *, partition=None, ax=None, cmap="Blues", max_objects=2000,
                     random_state=0):
    """Heatmap of soft memberships: objects (rows, sorted by hard label) x clusters (columns).

    A soft partition (Hornik 2005) gives each object a row of memberships summing to one. Rows
    are ordered by ``labels`` (by default each object's most likely cluster: of the result, of
    the chosen partition, or of the ensemble's first partition), and within a label by
    decreasing membership in the cluster that label names where there is one, so a crisp
    partition shows as a staircase of dark blocks and an uncertain object as a row of
    similar shades. Lines separate the labels (rows) and, for a whole SoftEnsemble, the
    partitions (columns).

    Parameters
    ----------
    data : ConsensusResult, SoftEnsemble or array-like of shape (n_samples, K)
        A soft consensus result (its ``extras["membership"]``, kept by se, dwh, gv1, sm, ...), a
        :class:`cclust.soft.SoftEnsemble` (every partition side by side, or ``partition``'s), or
        one membership matrix with entries in [0, 1].
    labels : array-like of shape (n_samples,), default=None
        Hard labels giving the row order and blocks (e.g. a consensus result's labels).
    partition : int, default=None
        For a SoftEnsemble: draw only this partition.
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure (no pyplot involved).
    cmap : str or matplotlib Colormap, default="Blues"
        Colours of memberships 0 (first) to 1 (last).
    max_objects : int, default=2000
        Above this many objects a stratified subsample (every label in proportion to its size)
        is drawn and the title says so.
    random_state : int, numpy Generator or None, default=0
        Seed of the subsample.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.plotting import plot_memberships
    >>> U = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.1, 0.9]])
    >>> ax = plot_memberships(U)
    >>> ax.get_title()
    'Memberships of 4 objects, 2 clusters'
    """
    max_objects = check_int(max_objects, "max_objects", low=2)
    U, groups, default_labels, what = _membership_input(data, partition)
    n = U.shape[0]
    codes, n_labels, values = _labels(default_labels if labels is None else labels, n)
    cmap = _colormap(cmap)
    ax = _axes(ax, (5.2, 4.4))
    idx = np.arange(n)
    if n > max_objects:
        idx = _stratified_sample(codes, n_labels, max_objects, check_random_state(random_state))
    sub, sub_codes = U[idx], codes[idx]
    # Within a label, the most decided objects first: membership in the column the label names
    # (the first group's column of that index), or the row's largest membership.
    first = groups[0]
    own = np.where(sub_codes < first[1] - first[0], sub[np.arange(idx.shape[0]), np.minimum(sub_codes, first[1] - 1)],
                   sub.max(axis=1))
    order = np.lexsort((-own, sub_codes))
    image = ax.imshow(sub[order], cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest", aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="membership", shrink=0.9)
    sizes = np.bincount(sub_codes, minlength=n_labels)
    for b in np.cumsum(sizes)[:-1] - 0.5:
        ax.axhline(b, color="black", linewidth=0.8)
    if len(groups) > 1:
        for start, _, _ in groups[1:]:
            ax.axvline(start - 0.5, color="black", linewidth=0.8)
        ax.set_xticks([(a + b - 1) / 2.0 for a, b, _ in groups] if len(groups) <= _MAX_TICKED_CLUSTERS else [],
                      [t for _, _, t in groups] if len(groups) <= _MAX_TICKED_CLUSTERS else [])
        ax.set_xlabel("partition (its clusters side by side)")
    else:
        k = U.shape[1]
        ax.set_xticks(np.arange(k) if k <= _MAX_TICKED_CLUSTERS else [])
        ax.set_xlabel("cluster")
    centres = np.cumsum(sizes) - sizes / 2.0 - 0.5
    present = sizes > 0
    if n_labels <= _MAX_TICKED_CLUSTERS:
        ax.set_yticks(centres[present], [str(v) for v in values[present]])
    else:
        ax.set_yticks([])
    ax.set_ylabel("objects by hard label")
    title = (f"{what[0].upper() + what[1:]} of {n} objects, " if what != "memberships" else f"Memberships of {n} objects, ")
    title += f"{n_labels} clusters"
    if idx.shape[0] < n:
        title += f"\n(stratified subsample of {idx.shape[0]} of {n} objects)"
    ax.set_title(title)
    return ax
