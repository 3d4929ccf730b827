"""The consensus matrix as a heatmap, objects ordered so that clusters show as blocks on the
diagonal.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cclust.ensemble import Ensemble
from cclust.errors import ValidationError
from cclust.plotting._common import _MAX_TICKED_CLUSTERS, _UNIT_TOLERANCE, _axes, _colormap, _labels
from cclust.validation import check_int, check_random_state

if TYPE_CHECKING:
    from cclust.validation import RandomStateLike


#: Heatmap colour of a pair never compared (NaN in a consensus matrix of select_k).
_NO_DATA_COLOUR = "0.75"


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


def plot_consensus_matrix(data: Any, labels: npt.ArrayLike | None = None, *, ax: Any = None, cmap: Any = "Blues",
                          max_objects: int = 2000, random_state: RandomStateLike = 0) -> Any:
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
