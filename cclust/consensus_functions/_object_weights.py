"""Object weights and soft memberships of weighted-object ensemble clustering (Ren, Domeniconi,
Zhang & Yu 2017), what the four WOEC consensus functions of :mod:`cclust.consensus_functions.woec`
share: the one-shot object weights (sec. 3.2, eq. 1-4), the weighted centres, widths and
memberships of every base clustering (eq. 6-9), and the checks of their arguments. The public
names are read through :mod:`cclust.consensus_functions.woec`.
"""
import numpy as np

from cclust.ensemble import as_ensemble
from cclust.errors import ValidationError
from cclust.graph._meta import cluster_overlaps
from cclust.validation import check_array_2d, check_float, memory_budget

#: The smoothing term e of Ren et al. (2017, eq. 4).
DEFAULT_SMOOTHING = 0.01

def _check_smoothing(smoothing):
    return check_float(smoothing, "smoothing", low=0, low_open=True)


def object_weights(ensemble, *, smoothing=DEFAULT_SMOOTHING, max_bytes=None):
    """One-shot object weights of Ren et al. (2017, sec. 3.2): how hard each object is to cluster.

    With A the co-association (eq. 1, ``A_ii = 1``), ``confusion(x_i, x_j) = A_ij (1 - A_ij)``
    (eq. 2), ``w'_i = 4/n sum_j confusion(x_i, x_j)`` (eq. 3) and ``w_i = (w'_i + e) / (1 + e)``
    (eq. 4), so ``w_i`` lies in (0, 1]; large weights mark objects the partitions disagree about.

    Without missing labels no n x n matrix is formed: ``sum_j A_ij = sum_r w_r |C_r(x_i)|`` and
    ``sum_j A_ij^2 = sum_{r, r'} w_r w_r' |C_r(x_i) & C_r'(x_i)|`` (C_r(x) the cluster of x in
    partition r), which one compiled pass accumulates partition by partition from each
    cluster's overlaps with the later partitions (:func:`cclust.graph._meta.cluster_overlaps`):
    O(n r^2) time, O(n + sum K_i) memory. With missing labels A is normalised per pair, so its
    rows are computed in chunks from the sparse one-hot (O(n^2 r) time, O(n) memory beyond a
    chunk of rows).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    smoothing : float, default=0.01
        e of eq. 4 (> 0).
    max_bytes : int, default=None
        Accepted for compatibility; no route forms an n x n matrix any more.

    Returns
    -------
    weights : ndarray of shape (n_samples,), float64, in (0, 1]

    Examples
    --------
    >>> from cclust.consensus_functions.woec import object_weights
    >>> w = object_weights([[0, 0, 1, 1], [0, 0, 1, 1], [0, 1, 1, 1]])
    >>> bool(w[1] > w[0])
    True
    """
    ensemble = as_ensemble(ensemble)
    smoothing = _check_smoothing(smoothing)
    n = ensemble.n_samples
    if max_bytes is not None:
        memory_budget(max_bytes)                        # validates the argument
    if ensemble.has_missing:
        B = ensemble.one_hot()
        BwT = ensemble.one_hot(weighted=True).T.tocsr()
        M = ensemble.labelled.astype(np.float64)
        MwT = (M * ensemble.weights).T
        confusion = np.empty(n)
        # Rows of A in chunks of about 2^22 entries: O(n) memory whatever n.
        rows = max(1, 2**22 // n)
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            num = (B[start:stop] @ BwT).toarray()
            den = M[start:stop] @ MwT
            with np.errstate(invalid="ignore", divide="ignore"):
                A = np.where(den > 0, np.minimum(num / np.where(den > 0, den, 1.0), 1.0), 0.0)
            A[np.arange(stop - start), np.arange(start, stop)] = 1.0
            confusion[start:stop] = (A * (1.0 - A)).sum(axis=1)
    else:
        _, row_sum, row_sq = cluster_overlaps(ensemble, sums=True)
        confusion = np.maximum(row_sum - row_sq, 0.0)
    return _from_confusion(confusion, n, smoothing)


def _from_confusion(confusion, n, smoothing):
    """Eq. 3-4 of Ren et al. (2017) from ``sum_j A_ij (1 - A_ij)``."""
    raw = 4.0 / n * confusion
    return (raw + smoothing) / (1.0 + smoothing)


def _weights_and_entries(ensemble, smoothing):
    """The object weights of an ensemble without missing labels and the entries of its
    meta-graph, from one pass (what WOMC needs of it)."""
    entries, row_sum, row_sq = cluster_overlaps(ensemble, sums=True)
    return _from_confusion(np.maximum(row_sum - row_sq, 0.0), ensemble.n_samples, smoothing), entries


def _resolve_object_weights(ensemble, weights, smoothing, max_bytes):
    if weights is None:
        return object_weights(ensemble, smoothing=smoothing, max_bytes=max_bytes)
    w = np.array(weights, dtype=np.float64, copy=True).reshape(-1)
    if w.shape[0] != ensemble.n_samples:
        raise ValidationError(
            f"object_weights must have one entry per object ({ensemble.n_samples}), got {w.shape[0]}."
        )
    if not np.isfinite(w).all() or (w <= 0).any():
        raise ValidationError("object_weights must be finite and positive.")
    return w


def _check_X(X, ensemble):
    if X is None:
        raise ValidationError("X is required: pass the (n_samples, n_features) data the ensemble was built from.")
    X = check_array_2d(X, "X")
    if X.shape[0] != ensemble.n_samples:
        raise ValidationError(
            f"X has {X.shape[0]} rows but the ensemble labels {ensemble.n_samples} objects; pass the "
            "data the ensemble was built from."
        )
    return X


def memberships(X, ensemble, object_weights, *, t=None):
    """Soft memberships of Ren et al. (2017, eq. 6-9) for every base clustering.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    ensemble : Ensemble
    object_weights : ndarray of shape (n_samples,)
    t : float, default=None
        Width of eq. 7 for every clustering; None: per clustering, the mean squared distance
        between its objects and the weighted centres of their own clusters (see the module
        docstring).

    Returns
    -------
    P : ndarray of shape (n_samples, sum K_i), float64
        Block ``offsets[r]:offsets[r+1]`` holds P(C_l^r | x_i) (eq. 8); each block's rows sum to one.
    ts : ndarray of shape (n_partitions,)
        The t used for each clustering.
    """
    model = _MembershipModel(X, ensemble, object_weights, t)
    return model.rows(slice(None)), model.ts


#: Entries of the dense membership rows computed at once by the row-chunked passes (8 MiB).
_MEMBERSHIP_BLOCK = 2**20


class _MembershipModel:
    """Weighted centres (Ren et al. 2017, eq. 6) and widths t (eq. 7) of every base clustering, from which
    any rows of the memberships (eq. 8) are computed: O(n + sum K_i d) memory, so the n x
    sum K_i memberships never need to exist at once.

    Every row is computed by the same operations whatever rows are asked with it, so a row
    has the same bits in any chunk (what lets WOHB compare and hash rows chunk by chunk).
    """

    def __init__(self, X, ensemble, object_weights, t, partitions=None):
        """``partitions``: the indices of the base clusterings to model (None: all of them); a
        model of some only gives their :meth:`block` (the same bits as the full model's)."""
        self.X = X
        self.ensemble = ensemble
        self.sq_norms = np.einsum("ij,ij->i", X, X)
        n = ensemble.n_samples
        w = np.asarray(object_weights, dtype=np.float64)
        self.centres = [None] * ensemble.n_partitions
        self.ts = np.full(ensemble.n_partitions, np.nan)
        for r in (range(ensemble.n_partitions) if partitions is None else partitions):
            labels = ensemble.labels[:, r]
            k = int(ensemble.n_clusters[r])
            present = labels >= 0
            mass = np.bincount(labels[present], weights=w[present], minlength=k)
            centres = np.zeros((k, X.shape[1]))
            np.add.at(centres, labels[present], w[present, None] * X[present])
            centres /= mass[:, None]                                     # eq. 6
            self.centres[r] = (centres, np.einsum("ij,ij->i", centres, centres))
            if t is None:
                own = []
                for rows in self.chunks(n, k):
                    d2 = self._sq_distances(rows, r)
                    mine = present[rows]
                    own.append(d2[np.flatnonzero(mine), labels[rows][mine]])
                t_r = float(np.concatenate(own).mean())
                if t_r <= 0:
                    t_r = 1.0
            else:
                t_r = t
            self.ts[r] = t_r

    @staticmethod
    def chunks(n, width):
        """Row slices covering 0..n whose dense blocks of ``width`` columns hold about
        :data:`_MEMBERSHIP_BLOCK` entries."""
        step = max(1, _MEMBERSHIP_BLOCK // max(1, int(width)))
        return [slice(start, min(n, start + step)) for start in range(0, n, step)]

    def _sq_distances(self, rows, r):
        centres, c2 = self.centres[r]
        d2 = self.sq_norms[rows][:, None] - 2.0 * self.X[rows] @ centres.T + c2[None, :]
        np.maximum(d2, 0.0, out=d2)
        return d2

    def block(self, rows, r):
        """Memberships of the objects ``rows`` in the clusters of base clustering ``r``."""
        d2 = self._sq_distances(rows, r)
        logits = -(d2 - d2.min(axis=1, keepdims=True)) / self.ts[r]    # eq. 7, shifted for stability
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)                        # eq. 8

    def rows(self, rows):
        """Memberships of the objects ``rows`` (a slice or indices), blocks in partition order."""
        offsets = self.ensemble.offsets
        P = np.empty((self.sq_norms[rows].shape[0], int(offsets[-1])))
        for r in range(self.ensemble.n_partitions):
            P[:, offsets[r]:offsets[r + 1]] = self.block(rows, r)
        return P


def _check_t(t):
    return None if t is None else check_float(t, "t", low=0, low_open=True)
