"""How sure the ensemble is of each object (:func:`object_confidence`), drawn on a 2-D embedding.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cclust.errors import ValidationError
from cclust.plotting._common import _MAX_LEGEND_CLUSTERS, _axes, _cluster_colors, _labels, _matplotlib
from cclust.ensemble import as_ensemble
from cclust.validation import check_array_2d

if TYPE_CHECKING:
    from cclust.ensemble import Ensemble, EnsembleLike
    from cclust.soft import SoftEnsemble
    from cclust.result import ConsensusResult


#: Largest scatter for which the legend looks for the emptiest corner.
_BEST_LEGEND_POINTS = 1000

#: Cluster-overlap tables of object_confidence up to this many cells are built dense.
_DENSE_TABLE_CELLS = 1 << 22


# -- per-object confidence --------------------------------------------------------------------
def object_confidence(ensemble: EnsembleLike, labels: npt.ArrayLike) -> npt.NDArray[np.float64]:
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


def _hard_ensemble(ensemble: EnsembleLike | SoftEnsemble, what: str) -> Ensemble:
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


def plot_confidence(X: npt.ArrayLike, labels: npt.ArrayLike, confidence: npt.ArrayLike | None = None, *,
                    ensemble: EnsembleLike | None = None, result: ConsensusResult | None = None,
                    ax: Any = None, embedding: str | npt.ArrayLike = "pca") -> Any:
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
    axis_names: tuple[str, ...]
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
