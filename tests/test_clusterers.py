"""The estimator generator, its presets, PAM and heterogeneous ensembles (cclust.clusterers)."""
import itertools
import math
import pickle
import warnings

import numpy as np
import pytest

import cclust
from cclust.clusterers import KMedoids, dbscan_eps
from cclust.datasets import load_iris
from cclust.errors import UnknownNameError, ValidationError

sklearn = pytest.importorskip("sklearn")
from sklearn import cluster, mixture  # noqa: E402


@pytest.fixture(scope="module")
def iris():
    X, _ = load_iris()
    return X


# -- PAM against a slow reference ------------------------------------------------------------------

def _cost(D, medoids):
    return D[list(medoids)].min(axis=0).sum()


def _pam_reference(D, k):
    """BUILD and SWAP as Kaufman & Rousseeuw describe them, one candidate at a time."""
    n = D.shape[0]
    medoids = [min(range(n), key=lambda c: (D[c].sum(), c))]
    while len(medoids) < k:
        best, best_gain = None, -1.0
        for c in range(n):
            if c in medoids:
                continue
            gain = sum(max(0.0, D[medoids, j].min() - D[c, j]) for j in range(n))
            if gain > best_gain:
                best, best_gain = c, gain
        medoids.append(best)
    while True:
        current = _cost(D, medoids)
        best, best_change = None, 0.0
        for h in range(n):  # the same order as the vectorised argmin: h first, then i
            if h in medoids:
                continue
            for i in range(k):
                trial = medoids[:i] + [h] + medoids[i + 1:]
                change = _cost(D, trial) - current
                if change < best_change - 1e-12 * max(1.0, current):
                    best, best_change = (h, i), change
        if best is None:
            return sorted(medoids), medoids
        medoids[best[1]] = best[0]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_pam_matches_reference(seed, k):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(14, 2)) + np.repeat(rng.normal(scale=4, size=(3, 2)), [5, 5, 4], axis=0)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    model = KMedoids(k).fit(X)
    _, expected = _pam_reference(D, k)
    assert model.medoid_indices_.tolist() == expected
    assert model.labels_.tolist() == D[expected].argmin(axis=0).tolist()
    assert model.inertia_ == pytest.approx(_cost(D, expected))


@pytest.mark.parametrize("seed", range(5))
def test_pam_is_a_swap_optimum_and_global_on_tiny_inputs(seed):
    rng = np.random.default_rng(100 + seed)
    X = rng.normal(size=(8, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    model = KMedoids(3).fit(X)
    cost = _cost(D, model.medoid_indices_)
    # no single exchange improves (brute force over every swap)
    for i, h in itertools.product(range(3), range(8)):
        trial = list(model.medoid_indices_)
        trial[i] = h
        assert _cost(D, trial) >= cost - 1e-9
    # and, on 8 objects, it is within PAM's usual reach of the optimum over all 56 medoid sets
    best = min(_cost(D, m) for m in itertools.combinations(range(8), 3))
    assert cost <= best * 1.1


def test_pam_precomputed_and_bad_input():
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    D = np.abs(X - X.T)
    assert KMedoids(2, metric="precomputed").fit(D).medoid_indices_.tolist() == [1, 4]
    with pytest.raises(ValidationError, match="n_clusters"):
        KMedoids(7).fit(X)
    with pytest.raises(ValidationError, match="square"):
        KMedoids(2, metric="precomputed").fit(X)


# -- presets reproduce the scikit-learn estimator ----------------------------------------------------

def _draws(random_state, r, n, d, k_range, p_item, p_feature):
    """What each partition draws, in the documented order."""
    for seq in np.random.SeedSequence(random_state).spawn(r):
        rng = np.random.default_rng(seq)
        k = int(rng.integers(k_range[0], k_range[1] + 1))
        size, m = math.floor(p_item * n), max(1, math.floor(p_feature * d))
        objects = np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)
        features = np.sort(rng.choice(d, size=m, replace=False)) if m < d else np.arange(d)
        yield k, objects, features, int(rng.integers(2**31 - 1))


PRESETS = {
    "hierarchical": (lambda k, s: cluster.AgglomerativeClustering(k, linkage="average"), {}),
    "hierarchical-ward": (lambda k, s: cluster.AgglomerativeClustering(k, linkage="ward"), {"linkage": "ward"}),
    "hierarchical-complete": (lambda k, s: cluster.AgglomerativeClustering(k, linkage="complete"),
                              {"linkage": "complete"}),
    "pam": (lambda k, s: KMedoids(k), {}),
    "spectral": (lambda k, s: cluster.SpectralClustering(k, random_state=s), {}),
    "gmm": (lambda k, s: mixture.GaussianMixture(k, random_state=s), {}),
    "hdbscan": (lambda k, s: cluster.HDBSCAN(copy=True), {}),
    "dbscan": (lambda k, s: cluster.DBSCAN(eps=0.4), {"eps": 0.4}),
    "affinity-propagation": (lambda k, s: cluster.AffinityPropagation(random_state=s, damping=0.9),
                             {"damping": 0.9}),
    "birch": (lambda k, s: cluster.Birch(n_clusters=k), {}),
    "minibatch-kmeans": (lambda k, s: cluster.MiniBatchKMeans(k, random_state=s), {}),
}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_preset_reproduces_scikit_learn(iris, preset):
    make, params = PRESETS[preset]
    name = preset.split("-")[0] if preset.startswith("hierarchical") else preset
    r, k_range, p_item, p_feature = 4, (2, 4), 0.8, 0.75
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        E = cclust.generate(name, iris, 3, n_partitions=r, k_range=k_range, p_item=p_item, p_feature=p_feature,
                            random_state=7, **params)
        columns = []
        for k, objects, features, seed in _draws(7, r, *iris.shape, k_range, p_item, p_feature):
            column = np.full(iris.shape[0], -1)
            # the generator hands the clusterer a C-ordered copy; the layout moves BLAS rounding
            column[objects] = make(k, seed).fit_predict(np.ascontiguousarray(iris[objects][:, features]))
            columns.append(column)
    expected = cclust.Ensemble(np.column_stack(columns))
    np.testing.assert_array_equal(E.labels, expected.labels)
    assert (E.labels == -1).sum(axis=0).min() >= iris.shape[0] - math.floor(p_item * iris.shape[0])


def test_dbscan_default_eps_is_the_median_neighbour_distance(iris):
    E = cclust.generate("dbscan", iris, 3, n_partitions=1, random_state=0)
    expected = cluster.DBSCAN(eps=dbscan_eps(iris, 5)).fit_predict(iris)
    np.testing.assert_array_equal(E.labels[:, 0], cclust.Ensemble(expected).labels[:, 0])
    assert (expected == -1).any()  # noise became missing labels


def test_estimator_object_and_function(iris):
    E = cclust.generate("estimator", iris, 3, estimator=cluster.KMeans(n_init=1), n_partitions=3, k_range=(2, 5),
                        random_state=1)
    ks = [k for k, *_ in _draws(1, 3, *iris.shape, (2, 5), 1.0, 1.0)]
    assert E.n_clusters.tolist() == ks
    assert E.provenance == ("KMeans",) * 3

    calls = []

    def halves(X, k, random_state):
        calls.append((X.shape, k, type(random_state)))
        return np.arange(X.shape[0]) * k // X.shape[0]

    E = cclust.generate("estimator", iris, 3, estimator=halves, n_partitions=2, p_item=0.5, random_state=0)
    assert calls == [((75, 4), 3, int)] * 2
    assert E.provenance == ("halves", "halves") and E.n_clusters.tolist() == [3, 3]


def test_estimator_with_fit_and_labels_only(iris):
    class FitOnly:
        def __init__(self, n_clusters=2):
            self.n_clusters = n_clusters

        def get_params(self, deep=True):
            return {"n_clusters": self.n_clusters}

        def set_params(self, **p):
            self.__dict__.update(p)
            return self

        def fit(self, X):
            self.labels_ = np.arange(X.shape[0]) % self.n_clusters
            return self

    E = cclust.generate("estimator", iris, 4, estimator=FitOnly(), n_partitions=2, random_state=0)
    assert E.n_clusters.tolist() == [4, 4] and E.provenance == ("FitOnly", "FitOnly")


def test_estimator_results_do_not_depend_on_n_jobs(iris):
    kwargs = dict(n_partitions=6, k_range=(2, 5), p_item=0.7, p_feature=0.5, random_state=3)
    for name in ("gmm", "pam"):
        assert cclust.generate(name, iris, 3, n_jobs=1, **kwargs) == cclust.generate(name, iris, 3, n_jobs=2, **kwargs)


# -- bad input ----------------------------------------------------------------------------------------

class _Returns:
    def __init__(self, labels):
        self.labels = labels

    def fit_predict(self, X):
        return self.labels(X)


BAD_ESTIMATORS = [
    ("no-fit", object(), r"estimator: estimator must have fit_predict, or fit and labels_"),
    ("class", cluster.KMeans, r"estimator: estimator must be an instance.*KMeans\(\)"),
    ("unknown-preset", "kmedoid", r"estimator: estimator 'kmedoid' is not a preset"),
    ("too-few-labels", _Returns(lambda X: np.zeros(X.shape[0] - 1, dtype=int)),
     r"estimator: estimator \(the estimator _Returns\) returned labels of shape \(149,\) for 150 objects"),
    ("2-d-labels", _Returns(lambda X: np.zeros((X.shape[0], 2), dtype=int)), r"returned labels of shape \(150, 2\)"),
    ("float-labels", _Returns(lambda X: np.arange(X.shape[0]) % 3 + 0.5), r"estimator: estimator .* returned floats"),
    ("whole-float-labels", _Returns(lambda X: (np.arange(X.shape[0]) % 3).astype(float)), r"returned floats"),
    ("string-labels", _Returns(lambda X: np.array(["a", "b", "c"] * 50)), r"estimator: estimator .* returned strings"),
    ("below-minus-one", _Returns(lambda X: np.arange(X.shape[0]) % 3 - 2), r"returned the label -2"),
    ("all-noise", _Returns(lambda X: -np.ones(X.shape[0], dtype=int)), r"labelled every object as noise"),
    ("fit-without-labels", type("Fits", (), {"fit": lambda self, X: self})(), r"has fit but neither fit_predict"),
]


@pytest.mark.parametrize("estimator, message", [c[1:] for c in BAD_ESTIMATORS], ids=[c[0] for c in BAD_ESTIMATORS])
def test_bad_estimator(iris, estimator, message):
    with pytest.raises(ValidationError, match=message):
        cclust.generate("estimator", iris, 3, estimator=estimator, n_partitions=2, random_state=0)


def test_function_returning_bad_labels_is_named(iris):
    with pytest.raises(ValidationError, match=r"estimator: estimator \(the function short\) returned labels"):
        def short(X, k, random_state):
            return np.zeros(3, dtype=int)

        cclust.generate("estimator", iris, 3, estimator=short, n_partitions=1, random_state=0)


def _two_clusters(X, k, random_state):
    return (np.arange(X.shape[0]) % 2).astype(np.int64)


def test_fewer_clusters_than_asked(iris):
    with pytest.raises(ValidationError, match=r"estimator: .* returned 2 clusters where n_clusters = 3 was asked.*"
                                              r"fewer_clusters="):
        cclust.generate("estimator", iris, 3, estimator=_two_clusters, n_partitions=2, random_state=0)
    with pytest.warns(UserWarning, match=r"estimator: in 2 of 2 partitions .* found fewer clusters than asked "
                                         r"\(e.g. 2 for K_i = 3\)"):
        E = cclust.generate("estimator", iris, 3, estimator=_two_clusters, n_partitions=2, random_state=0,
                            fewer_clusters="warn")
    assert E.n_clusters.tolist() == [2, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = cclust.generate("estimator", iris, 3, estimator=_two_clusters, n_partitions=2, random_state=0,
                               fewer_clusters="keep")
    assert kept == E
    with pytest.raises(ValidationError, match=r"estimator: fewer_clusters must be one of"):
        cclust.generate("estimator", iris, 3, estimator=_two_clusters, fewer_clusters="drop")


def test_algorithms_that_find_k_are_not_held_to_it(iris):
    E = cclust.generate("hdbscan", iris, 8, n_partitions=2, random_state=0)
    assert E.n_clusters.max() < 8


@pytest.mark.parametrize("name", ["estimator", "gmm", "hierarchical"])
@pytest.mark.parametrize("argument", ["p_item", "p_feature"])
@pytest.mark.parametrize("value", [0, -0.1, 1.5, float("nan"), "0.5"])
def test_bad_fractions(iris, name, argument, value):
    with pytest.raises(ValidationError, match=rf"{name}: {argument} must be"):
        cclust.generate(name, iris, 3, n_partitions=2, random_state=0, **{argument: value})


def test_p_item_too_small_for_k(iris):
    with pytest.raises(ValidationError, match=r"pam: p_item=0.02 keeps 3 of the 150 objects, fewer than K_i = 4"):
        cclust.generate("pam", iris, 3, k_range=(3, 4), p_item=0.02, random_state=0)


def test_preset_parameters(iris):
    with pytest.raises(ValidationError, match=r"gmm: a parameter is not one of the gmm estimator's"):
        cclust.generate("gmm", iris, 3, n_partitions=1, covariance="diag")
    with pytest.raises(ValidationError, match=r"estimator_params only apply to a preset"):
        cclust.generate("estimator", iris, 3, estimator=cluster.KMeans(), estimator_params={"n_init": 2})
    E = cclust.generate("estimator", iris, 3, estimator="hierarchical", estimator_params={"linkage": "ward"},
                        n_partitions=1)
    assert E.provenance == ("hierarchical-ward",)


def test_user_X_is_not_written(iris):
    class Writes:
        def fit_predict(self, X):
            X[:] = 0
            return np.arange(X.shape[0]) % 2

    X = iris.copy()
    cclust.generate("estimator", X, 2, estimator=Writes(), n_partitions=1)
    np.testing.assert_array_equal(X, iris)


# -- heterogeneous ensembles and provenance ----------------------------------------------------------

def test_heterogeneous_concatenates_with_provenance(iris):
    spec = {"kmeans": 3, "hierarchical": {"n_partitions": 2, "linkage": "ward"}, "gmm": 2}
    E = cclust.generate("heterogeneous", iris, 3, generators=spec, random_state=0)
    assert E.provenance == ("kmeans",) * 3 + ("hierarchical-ward",) * 2 + ("gmm",) * 2
    seeds = np.random.SeedSequence(0).spawn(3)
    parts = [cclust.generate("kmeans", iris, 3, n_partitions=3, random_state=seeds[0]),
             cclust.generate("hierarchical", iris, 3, n_partitions=2, linkage="ward", random_state=seeds[1]),
             cclust.generate("gmm", iris, 3, n_partitions=2, random_state=seeds[2])]
    np.testing.assert_array_equal(E.labels, np.column_stack([p.labels for p in parts]))
    assert E == cclust.generate("heterogeneous", iris, 3, generators=spec, random_state=0, n_jobs=2)


def test_heterogeneous_spellings(iris):
    a = cclust.generate("heterogeneous", iris, 3, generators=["kmeans:2", "pam:1"], random_state=0)
    b = cclust.generate("heterogeneous", iris, 3, generators=[("kmeans", 2), ("pam", 1, {})], random_state=0)
    c = cclust.generate("heterogeneous", iris, 3, generators=["kmeans", "pam"], n_partitions=3, random_state=0)
    assert a == b == c and a.provenance == ("kmeans", "kmeans", "pam")
    d = cclust.generate("heterogeneous", iris, 3, generators=[("hierarchical", 1, {"linkage": "ward"}),
                                                               ("hierarchical", 1, {"linkage": "complete"})])
    assert d.provenance == ("hierarchical-ward", "hierarchical-complete")


@pytest.mark.parametrize("generators, n_partitions, error, message", [
    ({"kmeans": 2, "pam": 2}, 5, ValidationError, r"heterogeneous: n_partitions=5 differs from the sum"),
    ({"kmeans": 0}, None, ValidationError, r"heterogeneous: generators: the count of 'kmeans' must be a positive int"),
    (["kmeans:2", "pam"], None, ValidationError, r"give a count for every generator or for none"),
    ([], None, ValidationError, r"must name at least one generator"),
    (["kmeans", "pam", "gmm"], 2, ValidationError, r"n_partitions=2 is fewer than the 3 generators"),
    ({"kmean": 2}, None, UnknownNameError, r"kmeans"),
    ({"heterogeneous": 2}, None, ValidationError, r"cannot include 'heterogeneous'"),
    ({"kmeans": {"n_partitions": 2, "linkage": "ward"}}, None, ValidationError, r"linkage=\.\.\. is not a parameter"),
    ([3], None, ValidationError, r"entries must be names"),
])
def test_heterogeneous_bad_spec(iris, generators, n_partitions, error, message):
    with pytest.raises(error, match=message):
        cclust.generate("heterogeneous", iris, 3, generators=generators, n_partitions=n_partitions)


def test_provenance_survives_take_weights_pickle(iris):
    E = cclust.generate("heterogeneous", iris, 3, generators={"kmeans": 2, "pam": 1, "gmm": 1}, random_state=0)
    assert E.take(partitions=[3, 0]).provenance == ("gmm", "kmeans")
    assert E.take(partitions=np.array([False, False, True, True])).provenance == ("pam", "gmm")
    assert E.take(objects=np.arange(10)).provenance == E.provenance
    W = E.with_weights([1, 2, 3, 4])
    assert W.provenance == E.provenance and W.weights.tolist() == [0.1, 0.2, 0.3, 0.4]
    assert pickle.loads(pickle.dumps(W)) == W and pickle.loads(pickle.dumps(W)).provenance == E.provenance
    assert cclust.Ensemble(E) == E
    assert cclust.Ensemble(E.labels) != E  # provenance is part of the value
    assert cclust.Ensemble(E, provenance="x").provenance == ("x",) * 4
    old = E.__getstate__()
    del old["provenance"]  # a pickle from before provenance existed
    restored = cclust.Ensemble.__new__(cclust.Ensemble)
    restored.__setstate__(old)
    assert restored.provenance is None


@pytest.mark.parametrize("provenance, message", [
    (["a", "b"], r"provenance must name what made each of the 3 partitions, got 2"),
    (["a", "b", 3], r"provenance must hold strings, got 3"),
    (5, r"provenance must be a string or a sequence"),
])
def test_bad_provenance(provenance, message):
    with pytest.raises(ValidationError, match=message):
        cclust.Ensemble(np.zeros((4, 3), dtype=int), provenance=provenance)
