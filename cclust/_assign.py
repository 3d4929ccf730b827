"""Labels for objects outside a fit: the one place the assignment rules live.

:func:`cclust.predict`, :meth:`cclust.ConsensusClustering.predict` and the sketch route of
:func:`cclust.select_k` (``propagation=``) all call :func:`assign`. Two rules:

``"centroid"``
    The cluster whose centroid (the mean of its fitted members, in the features) is nearest in
    squared Euclidean distance, as a k-means step assigns an object; a tie goes to the lowest
    cluster. One pass of the compiled k-means engine.
``"knn"``
    A majority vote of the ``n_neighbors`` fitted objects nearest in Euclidean distance (exact
    neighbours, no approximation). Neighbours at equal distance are taken in the order of the
    fitted objects (the lower row first), so the set of neighbours is always the same; a tie of
    votes goes to the tied cluster that holds the nearest of the neighbours.

No supervised classifier is offered (SC3 trains a support vector machine on its consensus labels
for the cells outside its sample; Kiselev et al. 2017): scikit-learn is an optional dependency of
cclust, and both rules here need NumPy and SciPy alone. Train one yourself on ``labels`` if you
want it.

Neighbours come from SciPy's k-d tree in few dimensions (at most :data:`KD_TREE_MAX_FEATURES`)
and otherwise from squared distances by matrix products, a block of new objects at a time so
that the distance block never exceeds :data:`DISTANCE_BLOCK_ELEMENTS` floats.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.errors import ValidationError
from cclust.result import ConsensusResult

METHODS = ("centroid", "knn")

#: The rule used when none is given (chosen on held-out data: docs/benchmarks.md, "Predict on held-out
#: objects").
DEFAULT_METHOD = "centroid"

#: Neighbours voting in the "knn" rule when none is given.
DEFAULT_NEIGHBORS = 15

#: Features up to which neighbours are searched in a k-d tree; above it a tree prunes little
#: and the blocked matrix products are faster.
KD_TREE_MAX_FEATURES = 8

#: Floats in one block of distances (new objects x fitted objects): 32 MiB.
DISTANCE_BLOCK_ELEMENTS = 2**22


def check_method(method, name="method"):
    if not isinstance(method, str) or method not in METHODS:
        raise ValidationError(f"{name} must be one of {list(METHODS)}, got {method!r}.")
    return method


def check_neighbors(n_neighbors, n_fitted, name="n_neighbors"):
    """``n_neighbors`` as an int in [1, n_fitted] (None: the default, capped at n_fitted)."""
    from cclust.validation import check_int

    if n_neighbors is None:
        return min(DEFAULT_NEIGHBORS, n_fitted)
    value = check_int(n_neighbors, name, low=1)
    if value > n_fitted:
        raise ValidationError(f"{name}={value} is more than the {n_fitted} fitted objects that can vote; give "
                              f"{name} <= {n_fitted}.")
    return value


def assign(X, labels, X_new, method, n_neighbors, n_threads):
    """Labels of the rows of ``X_new`` by ``method``, given the fitted rows ``X`` and their ``labels``.

    Assumes validated input: ``X`` and ``X_new`` C-contiguous finite float64 with the same
    columns, ``labels`` integers (any values; the result is of the same values) of length
    ``X.shape[0]``, ``n_neighbors`` in ``[1, X.shape[0]]`` (read by "knn" only).
    """
    values, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(-1).astype(np.int64)
    if method == "centroid":
        return values[nearest_centroid(X, codes, X_new, n_threads)].astype(np.int64)
    return values[knn_vote(X, codes, X_new, n_neighbors, n_threads)].astype(np.int64)


def centroids(X, labels):
    """(K, d) means of the rows of X in each cluster ``0..K-1``."""
    k = int(labels.max()) + 1
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, labels, X)
    return sums / np.bincount(labels, minlength=k)[:, None]


def nearest_centroid(X, labels, X_new, n_threads):
    """The cluster of the nearest centroid for every row of ``X_new`` (int64)."""
    from cclust import _engine

    centres = centroids(X, labels)
    assigned, _ = _engine.assign(_engine.MixedSpace.dense(X_new), centres, np.empty((centres.shape[0], 0)),
                                 n_threads)
    return assigned


def knn_vote(X, labels, X_new, n_neighbors, n_threads):
    """The majority label of the ``n_neighbors`` nearest rows of ``X`` for every row of ``X_new``."""
    neighbours = nearest_neighbours(X, X_new, n_neighbors, n_threads)
    return _vote(labels[neighbours], int(labels.max()) + 1)


def nearest_neighbours(X, X_new, k, n_threads):
    """(m, k) int64 indices of the k rows of X nearest each row of X_new, nearest first; at equal
    distance the lower index comes first and is the one kept at the k-th place."""
    if X.shape[1] <= KD_TREE_MAX_FEATURES and k < X.shape[0]:
        return _tree_neighbours(X, X_new, k, n_threads)
    return _blocked_neighbours(X, X_new, k)


def _tree_neighbours(X, X_new, k, n_threads):
    from scipy.spatial import cKDTree

    tree = cKDTree(X)
    found = np.empty((X_new.shape[0], k), dtype=np.int64)
    rows = max(1, DISTANCE_BLOCK_ELEMENTS // (k + 1))
    for start in range(0, X_new.shape[0], rows):
        block = X_new[start:start + rows]
        # k + 1 neighbours tell whether the k-th place is shared: a row where it is (its k-th and
        # (k+1)-th distances equal) is redone by the blocked route, whose rule for ties is exact
        distances, near = tree.query(block, k=k + 1, workers=n_threads)
        near = near.astype(np.int64)
        tied = np.flatnonzero(distances[:, k - 1] == distances[:, k])
        order = np.lexsort((near[:, :k], distances[:, :k]), axis=1)
        near = np.take_along_axis(near[:, :k], order, axis=1)
        if tied.size:
            near[tied] = _blocked_neighbours(X, block[tied], k)
        found[start:start + block.shape[0]] = near
    return found


def _blocked_neighbours(X, X_new, k):
    m, n = X_new.shape[0], X.shape[0]
    squared = np.einsum("ij,ij->i", X, X)
    found = np.empty((m, k), dtype=np.int64)
    rows = max(1, DISTANCE_BLOCK_ELEMENTS // n)
    for start in range(0, m, rows):
        block = X_new[start:start + rows]
        dist = block @ X.T
        dist *= -2.0
        dist += squared
        dist += np.einsum("ij,ij->i", block, block)[:, None]
        np.maximum(dist, 0.0, out=dist)
        found[start:start + rows] = _k_smallest(dist, k)
    return found


def _k_smallest(dist, k):
    """Per row, the columns of the k smallest values, smallest first, ties by the lower column."""
    b, n = dist.shape
    if k >= n:
        columns = np.broadcast_to(np.arange(n, dtype=np.int64), (b, n))
        return _by_value_then_column(dist, columns)
    # the k + 1 smallest of each row, in no order; sorted by (value, column) their first k are the
    # answer unless the k-th and (k + 1)-th values are equal, where a lower column of the same
    # value may have been left out: those rows are redone over every column
    candidates = _by_value_then_column(dist, np.argpartition(dist, k, axis=1)[:, :k + 1])
    values = np.take_along_axis(dist, candidates[:, k - 1:], axis=1)
    shared = np.flatnonzero(values[:, 0] == values[:, 1])
    found = candidates[:, :k]
    if shared.size:
        part = dist[shared]
        kth = values[shared, :1]
        below, at = part < kth, part == kth
        room = k - below.sum(axis=1, keepdims=True)         # places left for the columns at the k-th value
        keep = below | (at & (np.cumsum(at, axis=1) <= room))
        found[shared] = _by_value_then_column(part, np.nonzero(keep)[1].reshape(shared.size, k))
    return found


def _by_value_then_column(dist, columns):
    """``columns`` of each row of ``dist`` reordered by their value, then by column."""
    columns = np.sort(columns, axis=1)
    order = np.argsort(np.take_along_axis(dist, columns, axis=1), axis=1, kind="stable")
    return np.take_along_axis(columns, order, axis=1).astype(np.int64)


def _vote(neighbour_labels, n_clusters):
    """Per row of (m, k) labels ordered nearest first: the label with most votes, ties to the
    tied label met first."""
    m, k = neighbour_labels.shape
    winners = np.empty(m, dtype=np.int64)
    rows = max(1, DISTANCE_BLOCK_ELEMENTS // max(n_clusters, k))
    for start in range(0, m, rows):
        block = neighbour_labels[start:start + rows]
        b = block.shape[0]
        counts = np.bincount((np.arange(b)[:, None] * n_clusters + block).ravel(),
                             minlength=b * n_clusters).reshape(b, n_clusters)
        votes = np.take_along_axis(counts, block, axis=1)
        first_top = np.argmax(votes == votes.max(axis=1, keepdims=True), axis=1)
        winners[start:start + b] = block[np.arange(b), first_top]
    return winners


def predict(result_or_labels: ConsensusResult | npt.ArrayLike, X: npt.ArrayLike, X_new: npt.ArrayLike, *,
            method: str = DEFAULT_METHOD, n_neighbors: int | None = None,
            n_jobs: int | None = None) -> npt.NDArray[np.int64]:
    """Consensus clusters of new objects, from the features of the objects that were clustered.

    A consensus partition labels the objects it was fitted on; ``predict`` places others in it
    by one of two rules:

    * ``"centroid"`` (default): the cluster whose centroid -- the mean of its members in ``X``
      -- is nearest in squared Euclidean distance, as a k-means step assigns an object. A tie
      goes to the lowest cluster.
    * ``"knn"``: a majority vote of the ``n_neighbors`` objects of ``X`` nearest in Euclidean
      distance (exact neighbours: a k-d tree in up to 8 features, blocked distance products
      otherwise). Neighbours at equal distance are taken in row order of ``X`` (the lower row
      first); a tie of votes goes to the tied cluster holding the nearest neighbour.

    The centroid rule suits the compact, convex clusters a k-means-based consensus finds; the
    vote follows clusters of any shape but costs a neighbour search over ``X``. The default was
    chosen on held-out objects (the benchmarks page of the documentation, "Predict on held-out
    objects"). SC3 (Kiselev et al. 2017) trains a support vector machine on the consensus labels instead;
    no classifier is offered here, because scikit-learn is an optional dependency of cclust.

    Parameters
    ----------
    result_or_labels : cclust.ConsensusResult or array-like of shape (n_samples,)
        The consensus partition of the rows of ``X``: a result, or its labels (any integers;
        the predicted labels are of the same values).
    X : array-like of shape (n_samples, n_features)
        The features of the objects that were clustered, in the same row order as the labels.
    X_new : array-like of shape (n_new, n_features)
        The features of the objects to place, the same columns as ``X``.
    method : {"centroid", "knn"}, default="centroid"
        The rule (above).
    n_neighbors : int, default=None
        Objects that vote with ``method="knn"``, in ``[1, n_samples]``; None: 15 (or
        ``n_samples`` if fewer). Only with ``"knn"``.
    n_jobs : int or None, default=None
        Threads (None: every core, as elsewhere in cclust; -1 every core whatever the
        environment says). The labels do not depend on it.

    Returns
    -------
    labels : ndarray of shape (n_new,), int64
        The cluster of every row of ``X_new``.

    Raises
    ------
    cclust.errors.ValidationError
        When ``X_new`` has other columns than ``X``, an array holds NaN or infinity, the labels
        do not match the rows of ``X``, or an argument is out of range.

    Examples
    --------
    >>> import numpy as np, cclust
    >>> X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0], [5.2, 5.0]])
    >>> cclust.predict([0, 0, 1, 1], X, [[0.1, 0.3], [4.0, 4.5]]).tolist()
    [0, 1]
    >>> cclust.predict([0, 0, 1, 1], X, [[0.1, 0.3]], method="knn", n_neighbors=3).tolist()
    [0]
    """
    from cclust.validation import check_n_jobs

    X = features(X, "X")
    X_new = features(X_new, "X_new")
    check_same_features(X_new.shape[1], X.shape[1], "X_new", "X (the clustered objects)")
    labels = _check_labels(result_or_labels, X.shape[0])
    method = check_method(method)
    if method != "knn" and n_neighbors is not None:
        raise ValidationError(f"n_neighbors={n_neighbors!r} is the vote of method='knn'; method={method!r} uses "
                              "no neighbours: drop n_neighbors or pass method='knn'.")
    k = check_neighbors(n_neighbors, X.shape[0])
    threads = check_n_jobs(n_jobs, "n_jobs")
    return assign(X, labels, X_new, method, k, threads)


def features(X: Any, name: str) -> np.ndarray:
    """X as a C-contiguous finite float64 2-D array; an object array of numbers is converted."""
    from cclust.validation import check_array_2d

    if not hasattr(X, "__dask_graph__"):
        try:
            X = np.asarray(X)
        except Exception:  # ragged lists and the like: check_array_2d says what is wrong
            pass
        if getattr(X, "dtype", None) is not None and X.dtype.kind == "O":
            try:
                X = X.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise ValidationError(f"{name} must hold numbers only: {exc}") from None
    return check_array_2d(X, name)


def check_same_features(got, expected, name, fitted):
    if got != expected:
        raise ValidationError(f"{name} has {got} features, but {fitted} has {expected}: give {name} the columns "
                              "the clustered objects were described by, in the same order.")


def _check_labels(result_or_labels, n):
    """The labels of a result or array as int64, one per row of X, or a clear error."""
    labels = getattr(result_or_labels, "labels", result_or_labels)
    try:
        labels = np.asarray(labels)
    except Exception as exc:  # ragged lists and the like
        raise ValidationError(f"result_or_labels must be a ConsensusResult or a 1-D array of labels: {exc}") from None
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValidationError(f"result_or_labels must hold one label per row of X ({n}), got an array of shape "
                              f"{labels.shape}.")
    if labels.dtype.kind not in "iub" and not (labels.dtype.kind == "f" and np.isfinite(labels).all()
                                               and np.array_equal(labels, np.round(labels))):
        raise ValidationError(f"result_or_labels must be integer cluster labels, got dtype {labels.dtype}.")
    return labels.astype(np.int64)
