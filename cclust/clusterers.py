"""Any clusterer as a basic-partition generator, the presets by name, and heterogeneous ensembles.

The generators here run a clustering algorithm once per partition, as Monti et al. (2003) and
ConsensusClusterPlus (Wilkerson & Hayes 2010) do with their "inner" clusterer and diceR (Chiu &
Talhouk 2018) with each of its algorithms:

* :func:`estimator` takes any scikit-learn compatible clusterer (an object with ``fit_predict``,
  or ``fit`` and ``labels_``) or a function ``f(X, k, random_state) -> labels``;
* the presets (:func:`hierarchical`, :func:`pam`, :func:`spectral`, :func:`gmm`,
  :func:`hdbscan`, :func:`dbscan`, :func:`affinity_propagation`, :func:`birch`,
  :func:`minibatch_kmeans`) are :func:`estimator` with the algorithm chosen by name, each
  registered under the literature's name;
* :func:`heterogeneous` concatenates the ensembles of several generators, recording in
  :attr:`cclust.Ensemble.provenance` which algorithm made each partition.

What partition j does, in this order, with the generator drawn from its own child of the seed
(so the ensemble is the same for any ``n_jobs``): draw K_j uniformly from ``k_range``; if
``p_item < 1``, sample ``floor(p_item * n)`` objects without replacement (the others get the
missing label -1, as in ConsensusClusterPlus); if ``p_feature < 1``, sample
``max(1, floor(p_feature * d))`` features; draw the seed ``s = integers(2**31 - 1)``; clone the
clusterer, set its K parameter (``n_clusters`` or ``n_components``) to K_j and its
``random_state`` to ``s`` where it has them, and cluster the sample. Labels below 0 (the noise
of DBSCAN and HDBSCAN) become missing labels.

:class:`KMedoids` is the PAM of Kaufman & Rousseeuw (1990), BUILD then SWAP, vectorised over
the dissimilarity matrix; it is the ``pam`` preset. Every other preset is scikit-learn's
estimator (``pip install 'cclust[sklearn]'``).
"""
import copy
import math
import numbers
import threading
import warnings

import numpy as np

from cclust.ensemble import Ensemble
from cclust.errors import MissingDependencyError, ValidationError
from cclust.validation import (check_array_2d, check_distinct_rows, check_float, check_int, check_k_range,
                               require_memory, spawn_seed_sequences)

__all__ = ["KMedoids", "PRESETS", "estimator", "heterogeneous", "hierarchical", "pam", "spectral", "gmm",
           "hdbscan", "dbscan", "affinity_propagation", "birch", "minibatch_kmeans"]

_FEWER = ("error", "warn", "keep")
_SEED_HIGH = 2**31 - 1


# -- PAM ----------------------------------------------------------------------------------------

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

    def __init__(self, n_clusters=8, *, metric="euclidean", max_iter=300, max_bytes=None):
        self.n_clusters = n_clusters
        self.metric = metric
        self.max_iter = max_iter
        self.max_bytes = max_bytes

    def get_params(self, deep=True):
        return {"n_clusters": self.n_clusters, "metric": self.metric, "max_iter": self.max_iter,
                "max_bytes": self.max_bytes}

    def set_params(self, **params):
        for key, value in params.items():
            if key not in self.get_params():
                raise ValidationError(f"KMedoids has no parameter {key!r}; its parameters are "
                                      f"{sorted(self.get_params())}.")
            setattr(self, key, value)
        return self

    def __repr__(self):
        return f"KMedoids(n_clusters={self.n_clusters!r}, metric={self.metric!r}, max_iter={self.max_iter!r})"

    def fit(self, X, y=None):
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

    def fit_predict(self, X, y=None):
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


# -- one clusterer, run once per partition ----------------------------------------------------------

def _sklearn(cls_name, generator):
    try:
        import sklearn.cluster as cluster
        import sklearn.mixture as mixture
    except ImportError:
        raise MissingDependencyError(f"the {generator} generator needs scikit-learn, which cannot be imported: "
                                     "pip install 'cclust[sklearn]'.") from None
    return getattr(mixture if cls_name == "GaussianMixture" else cluster, cls_name)


class _AutoParams:
    """A scikit-learn estimator whose size parameter, when None, is chosen from each partition's sample.

    ``n_clusters`` is only a hint of scale here: DBSCAN and HDBSCAN find K themselves and are
    never held to it.
    """

    _defaults = {}

    def __init__(self, n_clusters=2, **params):
        self.n_clusters, self.params = n_clusters, {**self._defaults, **params}

    def get_params(self, deep=True):
        return {"n_clusters": self.n_clusters, **self.params}

    def set_params(self, **params):
        for key, value in params.items():
            if key == "n_clusters":
                self.n_clusters = value
            else:
                self.params[key] = value
        return self


class _DBSCANAuto(_AutoParams):
    """DBSCAN whose ``eps`` (when None) is the median distance to the ``min_samples``-th neighbour."""

    _defaults = {"eps": None, "min_samples": 5}

    def fit_predict(self, X, y=None):
        params = dict(self.params)
        if params["eps"] is None:
            params["eps"] = dbscan_eps(X, params["min_samples"])
        return _sklearn("DBSCAN", "dbscan")(**params).fit_predict(X)


class _HDBSCANAuto(_AutoParams):
    """HDBSCAN whose ``min_cluster_size`` (when None) is ``min(5, max(2, m // K))`` for m objects."""

    _defaults = {"min_cluster_size": None, "copy": True}

    def fit_predict(self, X, y=None):
        params = dict(self.params)
        if params["min_cluster_size"] is None:
            params["min_cluster_size"] = min(5, max(2, X.shape[0] // max(1, int(self.n_clusters))))
        return _sklearn("HDBSCAN", "hdbscan")(**params).fit_predict(X)


def dbscan_eps(X, min_samples=5):
    """The ``eps`` the ``dbscan`` preset uses when none is given.

    The median, over the objects, of the distance to their ``min_samples``-th nearest
    neighbour (the object itself counted, as DBSCAN counts it), so that about half of the
    objects are core points.
    """
    from scipy.spatial import cKDTree

    X = np.asarray(X, dtype=np.float64)
    k = min(int(min_samples), X.shape[0])
    dist, _ = cKDTree(X).query(X, k=k)
    dist = dist.reshape(X.shape[0], -1)[:, -1]
    eps = float(np.median(dist))
    return eps if eps > 0 else float(dist.max()) or 1.0


#: preset name -> (one-line description, a factory of the unfitted estimator from its parameters,
#: the provenance from its parameters or None for the name).
#: hdbscan, dbscan and affinity-propagation find K themselves (_FINDS_K): never held to K_j.
PRESETS = {
    "hierarchical": (
        "Agglomerative hierarchical clustering cut at K (linkage average, complete, single or ward)",
        lambda **p: _sklearn("AgglomerativeClustering", "hierarchical")(**{"linkage": "average", **p}),
        lambda p: f"hierarchical-{p.get('linkage', 'average')}"),
    "pam": ("k-medoids by PAM, BUILD + SWAP (Kaufman & Rousseeuw 1990)", lambda **p: KMedoids(**p), None),
    "spectral": ("Spectral clustering (Ng et al. 2001), scikit-learn's SpectralClustering",
                 lambda **p: _sklearn("SpectralClustering", "spectral")(**p), None),
    "gmm": ("Gaussian mixture by EM, each object to its most probable component",
            lambda **p: _sklearn("GaussianMixture", "gmm")(**p), None),
    "hdbscan": ("HDBSCAN (Campello et al. 2013): finds K itself, noise points are missing labels",
                lambda **p: _HDBSCANAuto(**p), None),
    "dbscan": ("DBSCAN (Ester et al. 1996): finds K itself, noise points are missing labels",
               lambda **p: _DBSCANAuto(**p), None),
    "affinity-propagation": ("Affinity propagation (Frey & Dueck 2007): finds K itself",
                             lambda **p: _sklearn("AffinityPropagation", "affinity-propagation")(**p), None),
    "birch": ("BIRCH (Zhang et al. 1996): CF-tree leaves clustered into K",
              lambda **p: _sklearn("Birch", "birch")(**p), None),
    "minibatch-kmeans": ("Mini-batch k-means (Sculley 2010), scikit-learn's MiniBatchKMeans",
                         lambda **p: _sklearn("MiniBatchKMeans", "minibatch-kmeans")(**p), None),
}

_FINDS_K = ("hdbscan", "dbscan", "affinity-propagation")
_K_PARAMS = ("n_clusters", "n_components")


def _params_of(est):
    if hasattr(est, "get_params"):
        try:
            return est.get_params(deep=False)
        except TypeError:
            return est.get_params()
    return {}


class _Clusterer:
    """What one partition runs: a cloned estimator or a function, checked and named."""

    def __init__(self, spec, params, generator, max_bytes=None):
        self.generator = generator
        self.preset = spec if isinstance(spec, str) else None
        finds_k = isinstance(spec, str) and spec in _FINDS_K
        if spec == "pam":  # PAM checks its own matrix at fit time against the same budget
            params = dict(params, max_bytes=max_bytes)
        if isinstance(spec, str):
            if spec not in PRESETS:
                raise ValidationError(f"{generator}: estimator {spec!r} is not a preset; give one of "
                                      f"{sorted(PRESETS)}, a scikit-learn clusterer or a function f(X, k, random_state).")
            _, factory, label = PRESETS[spec]
            try:
                spec_obj = factory(**params)
            except TypeError as exc:
                raise ValidationError(f"{generator}: a parameter is not one of the {spec} estimator's: {exc}") from None
            self.provenance = label(params) if label else spec
            spec = spec_obj
        elif params:
            raise ValidationError(f"{generator}: estimator_params only apply to a preset given by name; set them on "
                                  f"the estimator object instead (got {sorted(params)}).")
        if isinstance(spec, type):
            raise ValidationError(f"{generator}: estimator must be an instance, got the class {spec.__name__}; "
                                  f"pass {spec.__name__}().")
        self.spec = spec
        self.is_estimator = hasattr(spec, "fit_predict") or hasattr(spec, "fit")
        if not self.is_estimator and not callable(spec):
            raise ValidationError(f"{generator}: estimator must have fit_predict, or fit and labels_ (a scikit-learn "
                                  f"clusterer), or be a function f(X, k, random_state) -> labels; got "
                                  f"{type(spec).__name__}.")
        if not hasattr(self, "provenance"):
            self.provenance = type(spec).__name__ if self.is_estimator else getattr(spec, "__name__", "function")
        self.what = (f"the estimator {self.provenance}" if self.is_estimator
                     else f"the function {self.provenance}")
        names = _params_of(spec) if self.is_estimator else {}
        self.k_param = next((p for p in _K_PARAMS if p in names), None)
        if self.is_estimator and self.k_param is None and hasattr(spec, "n_clusters") and not hasattr(spec, "get_params"):
            self.k_param = "n_clusters"
        self.seeded = "random_state" in names
        #: whether K is set per partition (False: the algorithm finds K itself)
        self.takes_k = not finds_k and (self.k_param is not None or not self.is_estimator)

    def _clone(self):
        try:
            from sklearn.base import clone
        except ImportError:
            clone = None
        if clone is not None and hasattr(self.spec, "get_params"):
            try:
                return clone(self.spec)
            except (TypeError, RuntimeError):
                pass
        return copy.deepcopy(self.spec)

    def labels(self, Xs, k, seed):
        if not self.is_estimator:
            labels = self.spec(Xs, k, seed)
        else:
            est = self._clone()
            update = {}
            if self.k_param is not None:
                update[self.k_param] = k
            if self.seeded:
                update["random_state"] = seed
            if update:
                if hasattr(est, "set_params"):
                    est.set_params(**update)
                else:
                    for key, value in update.items():
                        setattr(est, key, value)
            if hasattr(est, "fit_predict"):
                labels = est.fit_predict(Xs)
            else:
                fitted = est.fit(Xs)
                labels = getattr(fitted if fitted is not None else est, "labels_", None)
                if labels is None:
                    labels = getattr(est, "labels_", None)
                if labels is None:
                    raise ValidationError(f"{self.generator}: estimator {type(est).__name__} has fit but neither "
                                          "fit_predict nor, after fit, labels_; give a clusterer that sets labels_.")
        return self._check(labels, Xs.shape[0])

    def _check(self, labels, m):
        where = f"{self.generator}: estimator ({self.what})"
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.shape[0] != m:
            raise ValidationError(f"{where} returned labels of shape {labels.shape} for {m} objects; it must "
                                  f"return one label per object, shape ({m},).")
        if labels.dtype.kind not in "iu":
            kind = {"f": "floats", "U": "strings", "S": "strings", "O": "objects", "b": "booleans",
                    "c": "complex numbers"}.get(labels.dtype.kind, str(labels.dtype))
            raise ValidationError(f"{where} returned {kind} (dtype {labels.dtype}); labels must be integers "
                                  "0..K-1, with -1 for noise.")
        if m and labels.min() < -1:
            raise ValidationError(f"{where} returned the label {int(labels.min())}; labels must be integers "
                                  "0..K-1, with -1 for noise.")
        return labels.astype(np.int64, copy=False)


#: the scikit-learn classes whose memory grows past O(m) on m objects, by the preset that wraps them
_QUADRATIC_CLASSES = {"AgglomerativeClustering": "hierarchical", "SpectralClustering": "spectral",
                      "AffinityPropagation": "affinity-propagation", "HDBSCAN": "hdbscan",
                      "GaussianMixture": "gmm", "KMedoids": "pam"}


def _largest_bytes(clusterer, m, d, k):
    """(bytes, what) of the largest array the clusterer builds on a sample of ``m`` objects and ``d``
    features at K = ``k``, for those whose size grows past O(m d); None for the others.

    hierarchical: SciPy's condensed distance matrix, m (m - 1) / 2 doubles (every linkage, ward
    included, without a connectivity graph). spectral: the dense m x m affinity and its Laplacian
    (RBF or any kernel; the nearest-neighbour affinities are sparse). affinity-propagation: the
    similarity, responsibility, availability and work matrices, 4 m^2 doubles. hdbscan: an m x m
    distance matrix for the brute-force or precomputed routes (the tree routes stay linear). pam:
    the dissimilarity matrix and its work arrays, 4 m^2 doubles. gmm: the responsibilities and the
    K full d x d covariances. dbscan, birch and mini-batch k-means are linear in m for their
    defaults and are not asked.
    """
    name = clusterer.preset
    params = _params_of(clusterer.spec) if clusterer.is_estimator else {}
    if name is None or name == "estimator":
        name = _QUADRATIC_CLASSES.get(type(clusterer.spec).__name__)
    if name == "hdbscan" and isinstance(clusterer.spec, _AutoParams):
        params = clusterer.spec.params
    square = m * m * 8
    if name == "hierarchical":
        if params.get("connectivity") is not None:
            return None
        return m * (m - 1) // 2 * 8, f"hierarchical clustering's condensed distance matrix of {m} objects"
    if name == "spectral":
        if params.get("affinity", "rbf") in ("nearest_neighbors", "precomputed_nearest_neighbors"):
            return None
        return 2 * square, f"spectral clustering's dense affinity matrix and Laplacian of {m} objects"
    if name == "affinity-propagation":
        return 4 * square, f"affinity propagation's four {m} x {m} matrices"
    if name == "hdbscan":
        if params.get("algorithm", "auto") != "brute" and params.get("metric", "euclidean") != "precomputed":
            return None
        return square, f"HDBSCAN's {m} x {m} distance matrix"
    if name == "pam":
        return 4 * square, f"PAM's dissimilarity matrix of {m} objects"
    if name == "gmm":
        covariances = {"full": k * d * d, "tied": d * d, "diag": k * d, "spherical": k}
        size = covariances.get(params.get("covariance_type", "full"), k * d * d)
        return (2 * m * k + 2 * size) * 8, f"the Gaussian mixture's responsibilities and covariances ({m} objects, " \
                                           f"K = {k}, {d} features)"
    return None


def _one_inner_thread():
    """Limit OpenMP and BLAS to one thread per partition while the partitions run in parallel.

    The parallelism is over partitions (``n_jobs``). Besides, scikit-learn's wheels bring their
    own OpenMP runtime: after cclust's compiled passes have run in a thread, scikit-learn's
    OpenMP loops in that thread were measured 20-90x slower on 2 cores (mini-batch k-means,
    20 partitions of wine: 1.0 s before, 19 s after a KCC run) until limited to one thread.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # no scikit-learn, so no second runtime
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def _check_p(value, name, generator):
    try:
        return check_float(value, name, low=0, high=1, low_open=True)
    except ValidationError as exc:
        raise ValidationError(f"{generator}: {exc}") from None


def _generate_with(clusterer, X, n_clusters, *, n_partitions, k_range, p_item, p_feature, fewer_clusters,
                   random_state, n_jobs, verbose, max_bytes=None):
    from cclust.generators import _generate

    generator = clusterer.generator
    X = check_array_2d(X, "X")
    n, d = X.shape
    if n < 2:
        raise ValidationError(f"X must have at least 2 rows to be clustered, got {n}.")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=n)
    check_distinct_rows(X, n_clusters)
    n_partitions = check_int(n_partitions, "n_partitions", low=1)
    low, high = check_k_range(k_range, (n_clusters, n_clusters), n)
    p_item = _check_p(p_item, "p_item", generator)
    p_feature = _check_p(p_feature, "p_feature", generator)
    if fewer_clusters not in _FEWER:
        raise ValidationError(f"{generator}: fewer_clusters must be one of {list(_FEWER)}, got {fewer_clusters!r}.")
    size = n if p_item == 1 else math.floor(p_item * n)
    if size < max(2, high if clusterer.takes_k else 2):
        raise ValidationError(f"{generator}: p_item={p_item} keeps {size} of the {n} objects, fewer than K_i = {high} "
                              "(or 2); raise p_item.")
    m = d if p_feature == 1 else max(1, math.floor(p_feature * d))
    largest = _largest_bytes(clusterer, size, m, high)
    if largest is not None:  # before any partition: a refusal, not a failed allocation 80 frames deep
        need, what = largest
        require_memory(need, what, "use the kmeans or minibatch-kmeans generator, or cluster a sample of the objects in each "
                       "partition (p_item < 1)", max_bytes)
    fewer = []
    lock = threading.Lock()

    def one_partition(X, rng):
        k = int(rng.integers(low, high + 1))
        objects = np.sort(rng.choice(n, size=size, replace=False)) if size < n else None
        features = np.sort(rng.choice(d, size=m, replace=False)) if m < d else None
        seed = int(rng.integers(_SEED_HIGH))
        Xs = X if objects is None else X[objects]
        Xs = Xs if features is None else Xs[:, features]
        # a fresh array each time: an estimator that writes into its input cannot reach the user's X
        labels = clusterer.labels(np.array(Xs, order="C", copy=True), k, seed)
        found = np.unique(labels[labels >= 0]).shape[0]
        if found == 0:
            raise ValidationError(f"{generator}: estimator ({clusterer.what}) labelled every object as noise "
                                  "(-1) in a partition, so that partition says nothing; loosen its parameters "
                                  "(e.g. a larger eps or a smaller min_cluster_size).")
        if clusterer.takes_k and found < k:
            if fewer_clusters == "error":
                raise ValidationError(f"{generator}: estimator ({clusterer.what}) returned {found} clusters where "
                                      f"n_clusters = {k} was asked (k_range {low}..{high}); pass "
                                      "fewer_clusters='warn' (or 'keep') to keep such partitions as they are.")
            with lock:
                fewer.append((k, found))
        if objects is None:
            return labels
        out = np.full(n, -1, dtype=np.int64)
        out[objects] = labels
        return out

    with _one_inner_thread():
        ensemble = _generate(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                             desc=f"{generator} partitions")
    if fewer and fewer_clusters == "warn":
        k, found = min(fewer)
        warnings.warn(f"{generator}: in {len(fewer)} of {n_partitions} partitions {clusterer.what} found fewer "
                      f"clusters than asked (e.g. {found} for K_i = {k}); they are kept as they are.",
                      UserWarning, stacklevel=3)
    return Ensemble(ensemble, provenance=clusterer.provenance)


_COMMON_DOC = """
    n_partitions : int, default=100
    k_range : (int, int), default=None
        Inclusive range K_j is drawn from for partition j; default ``(K, K)``, the K asked
        for (as ConsensusClusterPlus clusters at each K). Ignored by algorithms that find K
        themselves.
    p_item : float in (0, 1], default=1.0
        Fraction of the objects each partition clusters (ConsensusClusterPlus's ``pItem``):
        ``floor(p_item * n)`` drawn without replacement; the others get the missing label -1.
    p_feature : float in (0, 1], default=1.0
        Fraction of the features each partition uses (``pFeature``): ``max(1, floor(p_feature * d))``.
    fewer_clusters : {"error", "warn", "keep"}, default="error"
        What to do when an algorithm whose K is a parameter returns fewer clusters than asked
        (a Gaussian mixture with an empty component, say): raise, keep the partition with a
        warning that counts them, or keep it silently.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Partitions computed in parallel threads; None uses every core
        (:func:`cclust.validation.default_threads`), -1 every core whatever the environment says. The ensemble is
        identical for any value.
    verbose : int, default=0
        1 draws a progress bar over the partitions (on a terminal only).
    max_bytes : int, default=None
        Memory budget of one partition's largest array, asked before any partition runs
        (:func:`cclust.validation.require_memory`; None: ``CCLUST_MEMORY_BUDGET`` or 2 GiB). It
        applies to the clusterers whose memory grows past O(m) on a sample of m objects:
        hierarchical (m (m - 1) / 2 distances), spectral with a dense affinity, affinity
        propagation, pam, HDBSCAN's brute-force route, and the Gaussian mixture's K d x d
        covariances; an estimator object of those scikit-learn classes is asked the same.
"""


def _doc(text):
    return text.replace("    {common}\n", _COMMON_DOC.lstrip("\n"))


def estimator(X, n_clusters, *, estimator="hierarchical", estimator_params=None, n_partitions=100, k_range=None,
              p_item=1.0, p_feature=1.0, fewer_clusters="error", random_state=None, n_jobs=None, verbose=0,
              max_bytes=None):
    return _generate_with(_Clusterer(estimator, dict(estimator_params or {}), "estimator", max_bytes), X, n_clusters,
                          n_partitions=n_partitions, k_range=k_range, p_item=p_item, p_feature=p_feature,
                          fewer_clusters=fewer_clusters, random_state=random_state, n_jobs=n_jobs, verbose=verbose,
                          max_bytes=max_bytes)


estimator.__doc__ = _doc("""Any clusterer, once per partition: a scikit-learn estimator, a preset or a function.

    The resampling protocol of Monti et al. (2003) as ConsensusClusterPlus runs it (Wilkerson &
    Hayes 2010): each partition clusters a sample of the objects (``p_item``) and/or of the
    features (``p_feature``) with the inner clusterer at K_j; objects out of the sample are
    missing from that partition. Partition j draws, from its own child of the seed and in this
    order, K_j, the objects, the features and the estimator's seed (see :mod:`cclust.clusterers`).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        K; sets the default ``k_range``.
    estimator : str, estimator or callable, default="hierarchical"
        A preset name (``hierarchical``, ``pam``, ``spectral``, ``gmm``, ``hdbscan``,
        ``dbscan``, ``affinity-propagation``, ``birch``, ``minibatch-kmeans``; the default is
        ConsensusClusterPlus's inner clusterer, average-linkage hierarchical clustering); an
        object with ``fit_predict``, or ``fit`` and ``labels_``, cloned for each partition
        (``sklearn.base.clone`` when scikit-learn is installed), its ``n_clusters`` or
        ``n_components`` set to K_j and its ``random_state`` to the partition's seed; or a
        function ``f(X, k, random_state) -> labels`` (``random_state`` an int). Labels must be
        integers; -1 (noise) becomes a missing label. Algorithms without a K parameter (DBSCAN,
        HDBSCAN, affinity propagation) find K themselves: K_i is whatever they find.
    estimator_params : dict, default=None
        Parameters of a preset's estimator (e.g. ``{"linkage": "ward"}``).
    {common}
    Returns
    -------
    Ensemble of shape (n_samples, n_partitions)
        With ``provenance`` the preset's name (``hierarchical-average`` for the default), the
        estimator's class name or the function's name.

    Raises
    ------
    ValidationError
        For an estimator without ``fit``/``fit_predict``, labels of the wrong length, float or
        string labels, fewer clusters than asked (unless ``fewer_clusters`` says otherwise), a
        partition of noise only, or ``p_item``/``p_feature`` outside (0, 1].

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, _ = load_iris()
    >>> E = cclust.generate("estimator", X, 3, estimator="pam", n_partitions=4, p_item=0.8, random_state=0)
    >>> E.shape, E.provenance[0], int((E.labels == -1).sum(axis=0)[0])
    ((150, 4), 'pam', 30)
    """)


def _preset_call(name, X, n_clusters, params, options):
    return _generate_with(_Clusterer(name, params, name, options.get("max_bytes")), X, n_clusters, **options)


def hierarchical(X, n_clusters, *, linkage="average", metric="euclidean", n_partitions=100, k_range=None,
                 p_item=1.0, p_feature=1.0, fewer_clusters="error", random_state=None, n_jobs=None, verbose=0,
                 max_bytes=None, **params):
    """Agglomerative hierarchical clustering cut at K_j, once per partition.

    scikit-learn's ``AgglomerativeClustering``; ``linkage="average"`` is ConsensusClusterPlus's
    default inner clusterer (Wilkerson & Hayes 2010), ``"complete"``, ``"single"`` and
    ``"ward"`` (Euclidean only) are the others. Deterministic for a given sample: with
    ``p_item = p_feature = 1`` every partition is the same unless ``k_range`` varies K.
    Parameters as :func:`estimator`; further keywords go to ``AgglomerativeClustering``.
    Provenance: ``hierarchical-<linkage>``.
    """
    return _preset_call("hierarchical", X, n_clusters, dict(params, linkage=linkage, metric=metric), dict(
        n_partitions=n_partitions, k_range=k_range, p_item=p_item, p_feature=p_feature,
        fewer_clusters=fewer_clusters, random_state=random_state, n_jobs=n_jobs, verbose=verbose,
        max_bytes=max_bytes))


def _make_preset(name, doc):
    def preset(X, n_clusters, *, n_partitions=100, k_range=None, p_item=1.0, p_feature=1.0, fewer_clusters="error",
               random_state=None, n_jobs=None, verbose=0, max_bytes=None, **params):
        return _preset_call(name, X, n_clusters, params, dict(
            n_partitions=n_partitions, k_range=k_range, p_item=p_item, p_feature=p_feature,
            fewer_clusters=fewer_clusters, random_state=random_state, n_jobs=n_jobs, verbose=verbose,
            max_bytes=max_bytes))

    preset.__name__ = preset.__qualname__ = name.replace("-", "_")
    preset.__doc__ = doc + ("\n\n    Parameters as :func:`estimator` (``max_bytes`` included); further keywords go to "
                            "the estimator.\n")
    return preset


pam = _make_preset("pam", """k-medoids by PAM (Kaufman & Rousseeuw 1990), once per partition.

    :class:`KMedoids` (BUILD + SWAP on Euclidean distances; ``metric=`` takes any of
    ``scipy.spatial.distance.cdist``'s). PAM is deterministic, so partitions differ only
    through ``k_range``, ``p_item`` and ``p_feature``: ConsensusClusterPlus's ``pam`` with
    ``pItem = 0.8`` is ``pam(X, K, p_item=0.8)``.""")
spectral = _make_preset("spectral", """Spectral clustering (Ng et al. 2001), once per partition.

    scikit-learn's ``SpectralClustering`` (RBF affinity by default), seeded per partition.""")
gmm = _make_preset("gmm", """Gaussian mixture, once per partition: each object to its most probable component.

    scikit-learn's ``GaussianMixture`` with ``n_components = K_j``, seeded per partition (EM from
    a k-means start). A component can end up with no object: see ``fewer_clusters``.""")
hdbscan = _make_preset("hdbscan", """HDBSCAN (Campello et al. 2013), once per partition; noise points are missing labels.

    scikit-learn's ``HDBSCAN``. It finds K itself, so it is never held to K_j; its noise points
    (label -1) are missing from that partition. ``min_cluster_size=None`` (the default) is
    scikit-learn's 5, lowered to ``max(2, m // K_j)`` for a sample of m < 5 K_j objects, where
    clusters of 5 could not all exist.""")
dbscan = _make_preset("dbscan", """DBSCAN (Ester et al. 1996), once per partition; noise points are missing labels.

    scikit-learn's ``DBSCAN``. It finds K itself (``n_clusters`` and ``k_range`` are not used).
    ``eps=None`` (the default) takes, in each partition's sample, the median distance of the
    objects to their ``min_samples``-th nearest neighbour (:func:`dbscan_eps`), so that about
    half are core points; give ``eps`` to fix it.""")
affinity_propagation = _make_preset("affinity-propagation", """Affinity propagation (Frey & Dueck 2007), once per partition.

    scikit-learn's ``AffinityPropagation``, seeded per partition. It finds K itself (through
    ``preference``); ``n_clusters`` and ``k_range`` are not used. A run that does not converge
    labels every object -1 and is refused: raise ``max_iter`` or ``damping``.""")
birch = _make_preset("birch", """BIRCH (Zhang et al. 1996), once per partition: CF-tree subclusters grouped into K_j.

    scikit-learn's ``Birch`` (``threshold=0.5``: scale X first). Deterministic for a given
    sample.""")
minibatch_kmeans = _make_preset("minibatch-kmeans", """Mini-batch k-means (Sculley 2010), once per partition.

    scikit-learn's ``MiniBatchKMeans`` with its defaults, seeded per partition.""")


# -- heterogeneous ensembles ---------------------------------------------------------------------

#: The algorithms of a heterogeneous ensemble when none are named.
DEFAULT_GENERATORS = ("kmeans", "hierarchical", "pam", "gmm")


def _spec_entries(generators, n_partitions):
    """[(name, count, params)] from the accepted spellings of ``generators``."""
    entries, default = _parsed_entries(generators)
    counted = [e for e in entries if e[1] is not None]
    if counted:
        total = sum(e[1] for e in entries)
        if n_partitions is not None and check_int(n_partitions, "n_partitions", low=1) != total:
            raise ValidationError(f"heterogeneous: n_partitions={n_partitions} differs from the sum of the counts in "
                                  f"generators ({total}); leave n_partitions out or make them agree.")
    else:
        total = check_int(100 if n_partitions is None else n_partitions, "n_partitions", low=1)
        if total < len(entries) and not default:
            raise ValidationError(f"heterogeneous: n_partitions={total} is fewer than the {len(entries)} generators.")
        share, extra = divmod(total, len(entries))
        for i, e in enumerate(entries):
            e[1] = share + (i < extra)
        entries = [e for e in entries if e[1] > 0]  # the default's last ones, when n_partitions < 4
    return entries


def _parsed_entries(generators):
    """([name, count or None, params] per generator, whether they are the default set), checked:
    a count for every generator or for none."""
    where = "heterogeneous: generators"
    default = generators is None
    if default:
        generators = DEFAULT_GENERATORS
    if isinstance(generators, str):
        generators = [generators]
    if hasattr(generators, "items"):
        items = list(generators.items())
    else:
        items = []
        for entry in generators:
            if isinstance(entry, str):
                name, sep, count = entry.partition(":")
                items.append((name.strip(), int(count) if sep and count.strip().isdigit() else
                              (count if sep else None)))
            elif isinstance(entry, (tuple, list)) and 1 <= len(entry) <= 3:
                items.append(tuple(entry) if len(entry) > 1 else (entry[0], None))
            else:
                raise ValidationError(f"{where} entries must be names, 'name:count' strings or (name, count[, params]) "
                                      f"tuples, got {entry!r}.")
    if not items:
        raise ValidationError(f"{where} must name at least one generator, got none.")
    entries = []
    for item in items:
        name, count = item[0], item[1]
        params = dict(item[2]) if len(item) > 2 and item[2] else {}
        if isinstance(count, dict):
            params = dict(count)
            count = params.pop("n_partitions", None)
        if not isinstance(name, str):
            raise ValidationError(f"{where}: a generator must be given by its registered name, got {name!r}.")
        if count is not None and (isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1):
            raise ValidationError(f"{where}: the count of {name!r} must be a positive int, got {count!r}.")
        entries.append([name, None if count is None else int(count), params])
    counted = [e for e in entries if e[1] is not None]
    if counted and len(counted) != len(entries):
        raise ValidationError(f"{where}: give a count for every generator or for none, got "
                              f"{[(e[0], e[1]) for e in entries]}.")
    return entries, default


def heterogeneous(X, n_clusters, *, generators=None, n_partitions=None, random_state=None, n_jobs=None, verbose=0):
    """Several generators in one ensemble: their partitions side by side, each column's maker recorded.

    The heterogeneous ensembles of diceR (Chiu & Talhouk 2018), where each algorithm
    contributes its own partitions. Generator i runs with the i-th child of the seed, so the
    ensemble is the same for any ``n_jobs``, and its columns follow in the order given.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        K, passed to every generator.
    generators : dict, sequence or None, default=None
        Which generators, how many partitions each and with what parameters, any of:
        ``{"kmeans": 50, "hierarchical": 25, "gmm": 25}`` (name -> count),
        ``{"hierarchical": {"n_partitions": 25, "linkage": "ward"}, ...}`` (name -> parameters),
        ``["kmeans:50", "pam:50"]``, ``[("hierarchical", 25, {"linkage": "ward"}),
        ("hierarchical", 25, {"linkage": "complete"})]`` (repeats allowed), or names without
        counts (``["kmeans", "gmm"]``), which share ``n_partitions`` evenly (the first get one
        more when it does not divide). Any registered generator name works, the presets of
        :func:`estimator` included. Default: ``kmeans``, ``hierarchical``, ``pam`` and ``gmm``
        sharing ``n_partitions`` (with fewer than 4 partitions, the first ones only).
    n_partitions : int, default=None
        Total partitions; with counts it must be None or their sum; without counts, None
        means 100.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Passed to each generator (partitions in parallel threads); results do not depend on it.
    verbose : int, default=0

    Returns
    -------
    Ensemble
        ``provenance`` holds, per partition, the provenance its generator recorded (e.g.
        ``hierarchical-ward``) or else the generator's name.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, _ = load_iris()
    >>> E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 2, "pam": 1, "gmm": 1},
    ...                     random_state=0)
    >>> E.provenance
    ('kmeans', 'kmeans', 'pam', 'gmm')
    """
    from cclust.base import accepts
    from cclust.registry import get
    from cclust.validation import check_n_jobs

    entries = _spec_entries(generators, n_partitions)
    check_n_jobs(n_jobs, "n_jobs")
    fns = []
    for name, _, params in entries:
        if name == "heterogeneous":
            raise ValidationError("heterogeneous: generators cannot include 'heterogeneous' itself.")
        fn = get(name, kind="generator")
        for key in params:
            if key in ("n_partitions", "random_state", "n_jobs") or not accepts(fn, key):
                raise ValidationError(f"heterogeneous: generators: {key}=... is not a parameter of {name!r} that "
                                      "can be set here.")
        fns.append(fn)
    X = check_array_2d(X, "X")
    seeds = spawn_seed_sequences(random_state, len(entries))
    labels, provenance = [], []
    for (name, count, params), fn, seed in zip(entries, fns, seeds):
        if verbose and accepts(fn, "verbose", var_keyword=False):
            params = dict(params, verbose=verbose)
        part = fn(X, n_clusters, n_partitions=count, random_state=seed, n_jobs=n_jobs, **params)
        labels.append(np.asarray(part.labels))
        provenance += list(part.provenance) if getattr(part, "provenance", None) else [name] * part.n_partitions
    return Ensemble(np.column_stack(labels), provenance=provenance)
