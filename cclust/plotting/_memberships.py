"""Soft partitions (Hornik 2005): membership matrices, objects sorted by their hard label.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.ensemble import Ensemble
from cclust.errors import ValidationError
from cclust.plotting._common import _MAX_TICKED_CLUSTERS, _UNIT_TOLERANCE, _axes, _colormap, _labels
from cclust.plotting._consensus_matrix import _stratified_sample
from cclust.validation import RandomStateLike, check_array_2d, check_int, check_random_state


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


def plot_memberships(data: Any, labels: npt.ArrayLike | None = None, *, partition: int | None = None, ax: Any = None,
                     cmap: Any = "Blues", max_objects: int = 2000, random_state: RandomStateLike = 0) -> Any:
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
