"""What every figure shares: the lazy matplotlib import, pyplot-free axes, colour maps and
cluster colours, and the check of a label vector.
"""
import numpy as np

from cclust.errors import ValidationError
from cclust.validation import label_vector


_INSTALL_HINT = "pip install 'cclust[plot]'"

#: Cluster ticks on the heatmap are readable up to about this many clusters.
_MAX_TICKED_CLUSTERS = 30

#: Clusters listed in a scatter legend; beyond this the legend hides the data.
_MAX_LEGEND_CLUSTERS = 12


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
