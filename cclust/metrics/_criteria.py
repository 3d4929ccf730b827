"""Internal criteria of a labelling on the data X: the k-means objective, compactness and the
silhouette (the multi-view scores and the evaluation of a heterogeneous ensemble use it).
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.validation import check_array_2d, check_same_length, label_vector
from cclust.errors import ValidationError
from cclust.base import declare


# -- criteria on the data ----------------------------------------------------------------------

def _features_and_codes(X: npt.ArrayLike, labels: npt.ArrayLike) -> tuple[np.ndarray, npt.NDArray[np.int64], int]:
    X = check_array_2d(X, "X")
    codes, k = label_vector(labels, "labels")
    check_same_length(X, codes, "X", "labels")
    return X, codes, k


_ROW_CHUNK = 1 << 16

#: Distances :func:`silhouette` holds at once (8 MiB of float64: bounded memory for any n).
SILHOUETTE_BLOCK_ELEMENTS = 2**20


def silhouette(X, labels):
    """Mean silhouette width of a labelling of the rows of X, Euclidean distance (Rousseeuw 1987).

    ``s(i) = (b(i) - a(i)) / max(a(i), b(i))``, with a(i) the mean distance of object i to the
    other members of its cluster and b(i) the smallest mean distance to the members of another
    cluster; s(i) = 0 for an object alone in its cluster (as scikit-learn's
    ``silhouette_score``). The distances are computed in row blocks of bounded memory.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    labels : array-like of shape (n_samples,)

    Returns
    -------
    float
        In [-1, 1]; NaN when there are fewer than 2 clusters or as many clusters as objects.

    Examples
    --------
    >>> round(silhouette([[0.0], [1.0], [9.0], [10.0]], [0, 0, 1, 1]), 4)
    0.8885
    """
    from scipy.spatial.distance import cdist

    X = check_array_2d(X, "X")
    codes, k = label_vector(labels, "labels")
    n = X.shape[0]
    if codes.shape[0] != n:
        raise ValidationError(f"labels must label the {n} rows of X, got {codes.shape[0]} labels.")
    if not 2 <= k <= n - 1:
        return float("nan")
    sizes = np.bincount(codes, minlength=k).astype(np.float64)
    one_hot = np.zeros((n, k))
    one_hot[np.arange(n), codes] = 1.0
    total = 0.0
    step = max(1, SILHOUETTE_BLOCK_ELEMENTS // n)
    for start in range(0, n, step):
        stop = min(n, start + step)
        sums = cdist(X[start:stop], X) @ one_hot            # (b, k): summed distances to each cluster
        own = codes[start:stop]
        rows = np.arange(stop - start)
        own_size = sizes[own]
        with np.errstate(invalid="ignore", divide="ignore"):
            a = sums[rows, own] / (own_size - 1)
            means = sums / sizes[None, :]
        means[rows, own] = np.inf
        b = means.min(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            s = (b - a) / np.maximum(a, b)
        s[(own_size == 1) | ~np.isfinite(s)] = 0.0
        total += float(s.sum())
    return total / n


def _cluster_sse(X, codes, k):
    """Per-cluster sizes and sums of squared distances to the cluster mean (one O(n d) pass)."""
    n = X.shape[0]
    sizes = np.bincount(codes, minlength=k)
    indicator = sp.csr_array((np.ones(n), codes, np.arange(n + 1)), shape=(n, k)).T.tocsr()
    means = (indicator @ X) / sizes[:, None]
    sse = np.zeros(k)
    for start in range(0, n, _ROW_CHUNK):
        stop = min(n, start + _ROW_CHUNK)
        residual = X[start:stop] - means[codes[start:stop]]
        sse += np.bincount(codes[start:stop], weights=np.einsum("ij,ij->i", residual, residual),
                           minlength=k)
    return sizes, sse


@declare(requires_X=True, higher_is_better=False)
def kmeans_objective(X: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """The K-means objective: the sum of squared Euclidean distances to the cluster means.

    ``sum_k sum_{x in C_k} ||x - m_k||^2``, the criterion K-means minimises and the
    "objective function of K-means" reported by Li & Liu (2018), section 5 (their
    figure 3 plots it divided by n^2). Computed in one O(n d) pass with the deviations from
    each mean taken explicitly (no ``||x||^2 - n ||m||^2`` cancellation).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the labelling partitions; finite.
    labels : array-like of shape (n_samples,)
        Cluster labels.

    Returns
    -------
    objective : float
        Non-negative; lower is better.

    Examples
    --------
    >>> from cclust.metrics import kmeans_objective
    >>> kmeans_objective([[0.0], [2.0], [10.0], [10.0]], [0, 0, 1, 1])
    2.0
    """
    X, codes, k = _features_and_codes(X, labels)
    return float(_cluster_sse(X, codes, k)[1].sum())


_COMPACTNESS_METRICS = ("euclidean", "sqeuclidean")
_PAIR_BLOCK = 1 << 22


def _pairwise_distance_sum(points):
    """Sum of Euclidean distances over unordered pairs, in row blocks of bounded memory."""
    from scipy.spatial.distance import cdist

    m = points.shape[0]
    block = max(1, _PAIR_BLOCK // m)
    total = 0.0
    for start in range(0, m - 1, block):
        distances = cdist(points[start:start + block], points[start:])
        total += float(np.triu(distances, 1).sum())
    return total


@declare(requires_X=True, higher_is_better=False)
def compactness(X: npt.ArrayLike, labels: npt.ArrayLike, *, metric: str = "euclidean") -> float:
    """Compactness: the size-weighted average distance between objects of the same cluster.

    Nguyen & Caruana (2007), eq. 11:
    ``(1/n) sum_k n_k (sum_{i<j in C_k} d(x_i, x_j)) / (n_k (n_k - 1) / 2)``. A cluster of one
    object has no pairs and contributes 0.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the labelling partitions; finite.
    labels : array-like of shape (n_samples,)
        Cluster labels.
    metric : {"euclidean", "sqeuclidean"}, default="euclidean"
        The distance d. "euclidean" (the paper's choice) costs O(sum_k n_k^2 d) time and
        O(4M) floats of memory; "sqeuclidean" is computed in O(n d) from the identity
        ``sum_{i<j} ||x_i - x_j||^2 = n_k sum_i ||x_i - m_k||^2``.

    Returns
    -------
    compactness : float
        Non-negative; lower is better.

    Examples
    --------
    >>> from cclust.metrics import compactness
    >>> X = [[0.0, 0.0], [3.0, 4.0], [10.0, 0.0], [10.0, 1.0], [10.0, 3.0]]
    >>> compactness(X, [0, 0, 1, 1, 1])
    3.2
    """
    if not isinstance(metric, str) or metric not in _COMPACTNESS_METRICS:
        raise ValidationError(f"metric must be one of {list(_COMPACTNESS_METRICS)}, got {metric!r}.")
    X, codes, k = _features_and_codes(X, labels)
    n = X.shape[0]
    if metric == "sqeuclidean":
        sizes, sse = _cluster_sse(X, codes, k)
        pairs = sizes > 1
        return float(2.0 * np.sum(sizes[pairs] * sse[pairs] / (sizes[pairs] - 1)) / n)
    order = np.argsort(codes, kind="stable")
    bounds = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=k), out=bounds[1:])
    total = 0.0
    for c in range(k):
        size = int(bounds[c + 1] - bounds[c])
        if size > 1:
            # n_k * S_k / (n_k (n_k - 1) / 2) = 2 S_k / (n_k - 1)
            total += 2.0 * _pairwise_distance_sum(X[order[bounds[c]:bounds[c + 1]]]) / (size - 1)
    return total / n
