"""k-medoids by PAM (Kaufman & Rousseeuw 1990), BUILD then SWAP, vectorised over the
dissimilarity matrix: the ``pam`` preset's estimator."""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.errors import ValidationError
from cclust.validation import check_array_2d, check_int, require_memory


class KMedoids:
    """k-medoids by PAM (Partitioning Around Medoids; Kaufman & Rousseeuw 1990): BUILD + SWAP.

    BUILD picks the object with the smallest total dissimilarity, then, K - 1 times, the object
    that lowers the total dissimilarity to the nearest medoid most. SWAP then exchanges the
    medoid/non-medoid pair that lowers it most, until no exchange does. Each SWAP step
    evaluates all K (n - K) exchanges at once from the nearest and second-nearest medoid
    distances (O(n^2 K) time, O(n^2) memory). Deterministic: ties go to the lowest index.

    Parameters
    ----------
    n_clusters : int, default=8
    metric : str, default="euclidean"
        Any metric of :func:`scipy.spatial.distance.cdist`, or ``"precomputed"`` (X is then
        the n x n dissimilarity matrix).
    max_iter : int, default=300
        Most SWAP steps.
    max_bytes : int, default=None
        Memory budget of the n x n dissimilarity matrix and its work arrays
        (:func:`cclust.validation.require_memory`; None: ``CCLUST_MEMORY_BUDGET`` or 2 GiB).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,), int64
    medoid_indices_ : ndarray of shape (n_clusters,), int64
    inertia_ : float
        Sum of each object's dissimilarity to its medoid.
    n_iter_ : int
        SWAP steps taken.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> KMedoids(2).fit(X).medoid_indices_.tolist()
    [1, 4]
    """

    def __init__(self, n_clusters: int = 8, *, metric: str = "euclidean", max_iter: int = 300,
                 max_bytes: int | None = None) -> None:
        self.n_clusters = n_clusters
        self.metric = metric
        self.max_iter = max_iter
        self.max_bytes = max_bytes

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"n_clusters": self.n_clusters, "metric": self.metric, "max_iter": self.max_iter,
                "max_bytes": self.max_bytes}

    def set_params(self, **params: Any) -> KMedoids:
        for key, value in params.items():
            if key not in self.get_params():
                raise ValidationError(f"KMedoids has no parameter {key!r}; its parameters are "
                                      f"{sorted(self.get_params())}.")
            setattr(self, key, value)
        return self

    def __repr__(self):
        return f"KMedoids(n_clusters={self.n_clusters!r}, metric={self.metric!r}, max_iter={self.max_iter!r})"

    def fit(self, X: npt.ArrayLike, y: Any = None) -> KMedoids:
        if self.metric == "precomputed":
            D = check_array_2d(X, "X")
            if D.shape[0] != D.shape[1]:
                raise ValidationError(f"X must be a square dissimilarity matrix with metric='precomputed', "
                                      f"got shape {D.shape}.")
        else:
            X = check_array_2d(X, "X")
            require_memory(X.shape[0] ** 2 * 8 * 4, f"PAM's dissimilarity matrix of {X.shape[0]} objects",
                           "use minibatch-kmeans, or cluster a sample (p_item)", self.max_bytes)
            from scipy.spatial.distance import cdist

            D = cdist(X, X, metric=self.metric)
        n = D.shape[0]
        k = check_int(self.n_clusters, "n_clusters", low=1, high=n)
        max_iter = check_int(self.max_iter, "max_iter", low=0)
        medoids = _pam_build(D, k)
        medoids, self.n_iter_ = _pam_swap(D, medoids, max_iter)
        near = D[medoids].argmin(axis=0)
        self.medoid_indices_ = medoids
        self.labels_ = near.astype(np.int64)
        self.inertia_ = float(D[medoids[near], np.arange(n)].sum())
        return self

    def fit_predict(self, X: npt.ArrayLike, y: Any = None) -> npt.NDArray[np.int64]:
        return self.fit(X).labels_


def _pam_build(D, k):
    """PAM's BUILD: greedy medoids, each lowering the total dissimilarity most."""
    medoids = [int(np.argmin(D.sum(axis=1)))]
    nearest = D[medoids[0]].copy()
    for _ in range(1, k):
        # gain of candidate c: sum_j max(0, nearest_j - D[c, j]); a medoid gains 0
        gain = np.maximum(nearest[None, :] - D, 0.0).sum(axis=1)
        gain[medoids] = -1.0
        c = int(np.argmax(gain))
        medoids.append(c)
        np.minimum(nearest, D[c], out=nearest)
    return np.array(medoids, dtype=np.int64)


def _pam_swap(D, medoids, max_iter):
    """PAM's SWAP: the best medoid/non-medoid exchange while one lowers the total dissimilarity."""
    n, k = D.shape[0], medoids.shape[0]
    medoids = medoids.copy()
    cols = np.arange(n)
    for it in range(max_iter):
        if k == n:
            return medoids, it
        Dm = D[medoids]                      # (k, n)
        order = np.argsort(Dm, axis=0, kind="stable")
        near = order[0]
        d_near = Dm[near, cols]
        d_second = Dm[order[1], cols] if k > 1 else np.full(n, np.inf)
        # Change of the total when medoid i leaves and object h enters, for every (h, i):
        # objects whose nearest medoid is not i go to h if it is closer (A); those of i go to
        # the nearer of h and their second medoid (B). total = sum_j A[h, j] + sum_{j in i} (B - A).
        A = np.minimum(D - d_near[None, :], 0.0)
        B = np.minimum(D, d_second[None, :]) - d_near[None, :]
        owner = np.zeros((n, k))
        owner[cols, near] = 1.0
        change = A.sum(axis=1)[:, None] + (B - A) @ owner          # (n, k)
        change[medoids, :] = np.inf
        h, i = np.unravel_index(int(np.argmin(change)), change.shape)
        # a relative tolerance: a swap that only moves rounding is not an improvement
        if not change[h, i] < -1e-12 * max(1.0, float(d_near.sum())):
            return medoids, it
        medoids[i] = h
    return medoids, max_iter
