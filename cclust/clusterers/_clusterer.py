"""One clusterer run once per partition: a scikit-learn estimator, a preset or a function, checked,
named, cloned and seeded per partition, with the memory its largest array needs asked first."""
from __future__ import annotations

import copy
import math
import threading
import warnings

import numpy as np
import numpy.typing as npt

from cclust.clusterers._kmedoids import KMedoids
from cclust.ensemble import Ensemble
from cclust.errors import MissingDependencyError, ValidationError
from cclust.validation import (check_array_2d, check_float, check_k_range, check_partition_request, one_thread_pools,
                               require_memory)

_FEWER = ("error", "warn", "keep")
_SEED_HIGH = 2**31 - 1


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

    _defaults: dict[str, object] = {}

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


def dbscan_eps(X: npt.ArrayLike, min_samples: int = 5) -> float:
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
    return one_thread_pools()


def _check_p(value, name, generator):
    try:
        return check_float(value, name, low=0, high=1, low_open=True)
    except ValidationError as exc:
        raise ValidationError(f"{generator}: {exc}") from None


def _generate_with(clusterer, X, n_clusters, *, n_partitions, k_range, p_item, p_feature, fewer_clusters,
                   random_state, n_jobs, verbose, max_bytes=None):
    from cclust.generators import seeded_ensemble

    generator = clusterer.generator
    X = check_array_2d(X, "X")
    n, d = X.shape
    n_clusters, n_partitions = check_partition_request(X, n_clusters, n_partitions)
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
        ensemble = seeded_ensemble(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                                    desc=f"{generator} partitions")
    if fewer and fewer_clusters == "warn":
        k, found = min(fewer)
        warnings.warn(f"{generator}: in {len(fewer)} of {n_partitions} partitions {clusterer.what} found fewer "
                      f"clusters than asked (e.g. {found} for K_i = {k}); they are kept as they are.",
                      UserWarning, stacklevel=3)
    return Ensemble(ensemble, provenance=clusterer.provenance)
