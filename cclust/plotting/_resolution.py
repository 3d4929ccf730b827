"""The resolution plot: each resolution's cluster stabilities, their median and its interval,
and the recommended resolution (:func:`cclust.choose_resolution`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from cclust.errors import ValidationError
from cclust.plotting._common import _axes

if TYPE_CHECKING:
    from cclust.resolution import ResolutionChoice


def plot_resolution(result: ResolutionChoice, *, ax: Any = None) -> Any:
    """Stability per resolution of a :func:`cclust.choose_resolution` result.

    One column per resolution of the grid (labelled with the resolution and its number of
    clusters): a grey dot per cluster (its stability, the mean co-clustering silhouette of its
    members), the median with its 95 % bootstrap interval, a dashed line at the lower bound of
    the most stable resolution's interval (the bar of chooseR's rule; Patterson-Cross, Levine &
    Menon 2021) and the recommended resolution marked with a red star and a shaded column. A
    resolution that gave one cluster has no stability and shows no point.

    Parameters
    ----------
    result : ResolutionChoice
        What :func:`cclust.choose_resolution` returned.
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new Figure.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> import cclust
    >>> from cclust.plotting import plot_resolution
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.3, (30, 2)) for c in ((0, 0), (6, 0))])
    >>> res = cclust.choose_resolution(X, (0.1, 1.0), n_resamples=4, random_state=0)
    >>> plot_resolution(res).get_xlabel()
    'resolution (clusters)'
    """
    needed = ("resolutions", "n_clusters", "cluster_stability", "median", "ci_low", "ci_high", "recommended",
              "threshold")
    if not all(hasattr(result, name) for name in needed):
        raise ValidationError(f"result must be what cclust.choose_resolution returns (a ResolutionChoice), got "
                              f"{type(result).__name__}.")
    grid = np.asarray(result.resolutions, dtype=np.float64)
    positions = np.arange(grid.shape[0])
    ax = _axes(ax, (max(4.5, 0.8 * grid.shape[0] + 2.0), 3.8))
    label: str | None = "a cluster's stability"
    for x, scores in zip(positions, result.cluster_stability):
        scores = np.asarray(scores, dtype=np.float64)
        scores = scores[np.isfinite(scores)]
        if scores.size:
            # spread the dots over a fixed width by their rank: no randomness in a figure
            offsets = np.linspace(-0.18, 0.18, scores.size) if scores.size > 1 else np.zeros(1)
            ax.scatter(x + offsets, np.sort(scores), s=14, color="0.55", alpha=0.8, zorder=2, label=label)
            label = None
    finite = np.isfinite(result.median)
    ax.errorbar(positions[finite], result.median[finite],
                yerr=[result.median[finite] - result.ci_low[finite], result.ci_high[finite] - result.median[finite]],
                fmt="o-", color="C0", capsize=4, zorder=3, label="median, 95% interval")
    if result.recommended is not None:
        best = int(np.flatnonzero(np.isclose(grid, result.recommended, rtol=0, atol=1e-12))[0])
        ax.axvspan(best - 0.4, best + 0.4, color="C3", alpha=0.08, zorder=0)
        ax.scatter([best], [result.median[best]], marker="*", s=220, color="C3", zorder=4,
                   label=f"recommended: {result.recommended:g}")
        ax.axhline(result.threshold, color="C3", linestyle="--", linewidth=1, zorder=1,
                   label="lower bound of the most stable")
    ax.set_xticks(positions, [f"{r:g}\n({int(k)})" for r, k in zip(grid, result.n_clusters)])
    ax.set_xlim(-0.6, grid.shape[0] - 0.4)
    ax.set_xlabel("resolution (clusters)")
    ax.set_ylabel("cluster stability (co-clustering silhouette)")
    ax.set_title("Stability of the clusters by resolution")
    ax.legend(loc="lower left", fontsize="small")
    return ax
