"""cclust.predict, ConsensusClustering.predict and select_k's propagation from a sketch: the
assignment rules of cclust._assign against literal loops, and their bad input."""
import numpy as np
import pytest

import cclust
from cclust import ConsensusClustering, _assign, _sketch
from cclust.datasets import load_iris
from cclust.errors import NotFittedError, ValidationError


# -- slow, literal references --------------------------------------------------------------------
def reference_centroid(X, labels, X_new):
    """Every new row to the cluster whose mean is nearest (the first cluster on a tie)."""
    values = sorted(set(labels.tolist()))
    centres = [[sum(X[i][f] for i in range(len(X)) if labels[i] == c) / sum(1 for v in labels if v == c)
                for f in range(X.shape[1])] for c in values]
    out = []
    for x in X_new:
        best, best_d = None, None
        for c, centre in zip(values, centres):
            d = sum((x[f] - centre[f]) ** 2 for f in range(len(x)))
            if best_d is None or d < best_d:
                best, best_d = c, d
        out.append(best)
    return np.array(out)


def reference_knn(X, labels, X_new, k):
    """The k rows nearest (equal distances: the lower row first), majority vote, a tied vote to
    the tied label of the nearest neighbour."""
    out = []
    for x in X_new:
        ranked = sorted((sum((x[f] - X[i][f]) ** 2 for f in range(len(x))), i) for i in range(len(X)))
        voters = [labels[i] for _, i in ranked[:k]]
        counts = {}
        for v in voters:
            counts[v] = counts.get(v, 0) + 1
        top = max(counts.values())
        out.append(next(v for v in voters if counts[v] == top))
    return np.array(out)


def random_case(seed, n=70, m=25, d=3, k=4, grid=None):
    rng = np.random.default_rng(seed)
    if grid:   # few distinct values: many equal distances, to exercise the tie rules
        X, X_new = rng.integers(0, grid, (n, d)).astype(float), rng.integers(0, grid, (m, d)).astype(float)
    else:
        X, X_new = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    labels = rng.permutation(np.arange(n) % k)
    return X, labels, X_new


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("d", [2, 12], ids=["kd-tree", "blocked"])
def test_centroid_equals_the_reference(seed, d):
    X, labels, X_new = random_case(seed, d=d)
    got = cclust.predict(labels, X, X_new, method="centroid", n_jobs=1)
    np.testing.assert_array_equal(got, reference_centroid(X, labels, X_new))


@pytest.mark.parametrize("grid", [None, 3], ids=["continuous", "ties"])
@pytest.mark.parametrize("d", [2, 12], ids=["kd-tree", "blocked"])
@pytest.mark.parametrize("k", [1, 2, 6, 15, 70])
def test_knn_vote_equals_the_reference(k, d, grid):
    X, labels, X_new = random_case(k + d, d=d, grid=grid)
    got = cclust.predict(labels, X, X_new, method="knn", n_neighbors=k, n_jobs=1)
    np.testing.assert_array_equal(got, reference_knn(X, labels, X_new, k))


@pytest.mark.parametrize("d", [2, 12], ids=["kd-tree", "blocked"])
def test_blocks_of_distances_give_the_same_neighbours(monkeypatch, d):
    X, labels, X_new = random_case(7, n=90, m=40, d=d, grid=4)
    whole = cclust.predict(labels, X, X_new, method="knn", n_neighbors=9)
    monkeypatch.setattr(_assign, "DISTANCE_BLOCK_ELEMENTS", 90 * 3)      # three new rows per block
    np.testing.assert_array_equal(cclust.predict(labels, X, X_new, method="knn", n_neighbors=9), whole)
    np.testing.assert_array_equal(whole, reference_knn(X, labels, X_new, 9))


def test_tied_votes_go_to_the_nearest_neighbours_cluster():
    X = np.array([[0.0], [1.0], [-2.0], [3.0]])
    # from 0.4: neighbours 0 (label 5), 1 (label 7), 2 (7), 3 (5) -> two votes each with k=2 and 4
    labels = np.array([5, 7, 7, 5])
    assert cclust.predict(labels, X, [[0.4]], method="knn", n_neighbors=2).tolist() == [5]
    assert cclust.predict(labels, X, [[0.6]], method="knn", n_neighbors=2).tolist() == [7]
    assert cclust.predict(labels, X, [[0.6]], method="knn", n_neighbors=4).tolist() == [7]
    # equal distances: the lower row is the nearer neighbour
    assert cclust.predict([1, 0], [[-1.0], [1.0]], [[0.0]], method="knn", n_neighbors=1).tolist() == [1]
    assert cclust.predict([0, 1], [[-1.0], [1.0]], [[0.0]], method="knn", n_neighbors=1).tolist() == [0]
    # a centroid tie: the lower cluster
    assert cclust.predict([1, 0], [[-1.0], [1.0]], [[0.0]], method="centroid").tolist() == [0]


def blobs(seed=0, per=40):
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0, 0], [10, 0, 0], [0, 10, 0], [0, 0, 10]], dtype=float)
    X = np.vstack([rng.normal(c, 0.5, (per, 3)) for c in centres])
    return X, np.repeat(np.arange(4), per)


@pytest.mark.parametrize("method", ["centroid", "knn"])
def test_the_fitted_objects_get_their_fit_labels_on_separated_blobs(method):
    X, _ = blobs()
    model = ConsensusClustering(n_clusters=4, n_partitions=10, random_state=0).fit(X)
    np.testing.assert_array_equal(model.predict(X, method=method), model.labels_)
    np.testing.assert_array_equal(cclust.predict(model.result_, X, X, method=method), model.labels_)


def test_labels_keep_their_values_and_results_are_accepted():
    X, y = blobs(1)
    new, _ = blobs(2)
    named = np.array([10, 20, 30, 40])[y]
    got = cclust.predict(named, X, new)
    assert got.dtype == np.int64 and set(got.tolist()) == {10, 20, 30, 40}
    np.testing.assert_array_equal(got, np.array([10, 20, 30, 40])[y])
    result = cclust.ConsensusResult.from_labels(y)
    np.testing.assert_array_equal(cclust.predict(result, X, new, method="knn"), y)


def test_predict_is_deterministic_and_does_not_touch_its_input():
    X, labels, X_new = random_case(3, n=200, m=60, d=5)
    before = (X.copy(), labels.copy(), X_new.copy())
    first = cclust.predict(labels, X, X_new, method="knn", n_neighbors=7, n_jobs=1)
    again = cclust.predict(labels, X, X_new, method="knn", n_neighbors=7, n_jobs=2)
    np.testing.assert_array_equal(first, again)
    for a, b in zip((X, labels, X_new), before):
        np.testing.assert_array_equal(a, b)
    X_read = X_new.copy()
    X_read.flags.writeable = False
    np.testing.assert_array_equal(cclust.predict(labels, X, X_read, method="knn", n_neighbors=7), first)


def test_the_estimator_predicts_new_objects_deterministically():
    X, y = load_iris()
    train, test = np.arange(0, 150, 2), np.arange(1, 150, 2)
    fits = [ConsensusClustering(n_clusters=3, n_partitions=10, random_state=3).fit(X[train]) for _ in range(2)]
    for method in ("centroid", "knn"):
        a, b = (model.predict(X[test], method=method) for model in fits)
        np.testing.assert_array_equal(a, b)
        assert cclust.get("ari")(a, y[test]) > 0.5
    # the model kept its own copy of X: changing the caller's array moves nothing
    data = X[train].copy()
    model = ConsensusClustering(n_clusters=3, n_partitions=10, random_state=3).fit(data)
    before = model.predict(X[test], method="knn")
    data[:] = 0.0
    np.testing.assert_array_equal(model.predict(X[test], method="knn"), before)


def test_an_object_array_of_numbers_is_read_as_numbers():
    X, y = blobs()
    model = ConsensusClustering(n_clusters=4, n_partitions=5, random_state=0).fit(X)
    np.testing.assert_array_equal(model.predict(X.astype(object)), model.labels_)
    np.testing.assert_array_equal(cclust.predict(y, X.astype(object), X[:7].astype(object)), y[:7])
    with pytest.raises(ValidationError, match="X_new must hold numbers only"):
        cclust.predict(y, X, np.array([["a", 1.0, 2.0]], dtype=object))


# -- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, words", [
    ({"X_new": np.zeros((3, 2))}, ["X_new has 2 features", "X (the clustered objects) has 4"]),
    ({"X_new": np.array([[0.0, np.nan, 0.0, 0.0]])}, ["X_new contains NaN", "row 0, column 1"]),
    ({"X_new": np.zeros(4)}, ["X_new must be 2-D"]),
    ({"method": "svm"}, ["method must be one of", "'centroid'", "'knn'", "'svm'"]),
    ({"method": "knn", "n_neighbors": 0}, ["n_neighbors", "0"]),
    ({"method": "knn", "n_neighbors": 151}, ["n_neighbors=151", "150 fitted objects"]),
    ({"method": "knn", "n_neighbors": 2.5}, ["n_neighbors must be an int"]),
    ({"n_neighbors": 5}, ["n_neighbors=5", "method='knn'"]),
    ({"labels": np.zeros(149, dtype=int)}, ["result_or_labels", "one label per row of X (150)"]),
    ({"labels": np.full(150, 0.5)}, ["result_or_labels must be integer"]),
    ({"n_jobs": 0}, ["n_jobs"]),
], ids=["n_features", "nan", "1-d", "method", "k=0", "k>n", "k float", "k without knn", "n labels",
        "float labels", "n_jobs"])
def test_bad_input_names_the_argument(kwargs, words):
    X, y = load_iris()
    args = {"labels": y, "X_new": X[:5], **kwargs}
    with pytest.raises(ValidationError) as info:
        cclust.predict(args.pop("labels"), X, args.pop("X_new"), **args)
    for word in words:
        assert word in str(info.value)


def test_the_estimator_refuses_before_fit_and_without_features():
    X, _ = load_iris()
    model = ConsensusClustering(n_clusters=3, n_partitions=5, random_state=0)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        model.predict(X)
    sklearn = pytest.importorskip("sklearn")
    with pytest.raises(sklearn.exceptions.NotFittedError):
        model.predict(X)
    ensemble = cclust.generate("kmeans", X, 3, n_partitions=5, random_state=0)
    model.fit(ensemble=ensemble)
    with pytest.raises(ValidationError, match=r"fitted on an ensemble alone.*fit\(X, ensemble=\.\.\.\)"):
        model.predict(X)
    model.fit(X)
    with pytest.raises(ValidationError, match="X has 2 features, but ConsensusClustering is expecting 4"):
        model.predict(X[:, :2])
    with pytest.raises(ValidationError, match="X contains NaN"):
        model.predict(np.where(np.eye(150, 4) > 0, np.nan, X))
    with pytest.raises(ValidationError, match="method must be one of"):
        model.predict(X, method="svm")


def test_the_estimator_fills_nan_with_the_fitted_means_when_told_to():
    X, _ = blobs()
    model = ConsensusClustering(n_clusters=4, n_partitions=5, random_state=0, missing_features="mean").fit(X)
    row = X[:1].copy()
    row[0, 2] = np.nan
    filled = row.copy()
    filled[0, 2] = X[:, 2].mean()
    assert model.predict(row).tolist() == model.predict(filled).tolist()
    assert np.isnan(row[0, 2])


def test_the_estimator_checks_column_names():
    pd = pytest.importorskip("pandas")
    X, _ = blobs()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = ConsensusClustering(n_clusters=4, n_partitions=5, random_state=0).fit(frame)
    np.testing.assert_array_equal(model.predict(frame), model.labels_)
    with pytest.raises(ValidationError, match="same order"):
        model.predict(frame[["c", "b", "a"]])
    with pytest.raises(ValidationError, match="unseen at fit time:\n- z"):
        model.predict(frame.rename(columns={"c": "z"}))


# -- the sketch route ------------------------------------------------------------------------------
def test_sketch_propagation_by_vote_labels_the_others_by_the_vote():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(c, 1.0, (300, 2)) for c in ((0, 0), (7, 0), (0, 7))])
    common = dict(n_resamples=10, null=None, sketch=90, sketch_method="uniform", random_state=2)
    by_centroid = cclust.select_k(X, [2, 3], **common)
    by_vote = cclust.select_k(X, [2, 3], propagation="knn", **common)
    sketch = by_vote.sketch
    np.testing.assert_array_equal(sketch, by_centroid.sketch)
    outside = np.setdiff1d(np.arange(X.shape[0]), sketch)
    for k in (2, 3):
        np.testing.assert_array_equal(by_vote.labels[k][sketch], by_centroid.labels[k][sketch])
        expected = reference_knn(X[sketch], by_vote.labels[k][sketch], X[outside], _assign.DEFAULT_NEIGHBORS)
        np.testing.assert_array_equal(by_vote.labels[k][outside], expected)
    assert by_vote.sketch_propagation == "knn" and by_centroid.sketch_propagation == "centroid"
    assert "a vote of their nearest sketch objects" in by_vote.summary()
    assert "nearest consensus centroid" in by_centroid.summary()


def test_sketch_propagation_by_centroid_calls_the_shared_rule():
    X, labels, _ = random_case(5, n=60, d=3)
    sketch = np.array([1, 4, 9, 20, 33, 41, 50, 55])
    sketch_labels = np.array([0, 1, 0, 2, 1, 2, 0, 1])
    got = _sketch.propagate(X, sketch, sketch_labels, 1)
    expected = reference_centroid(X[sketch], sketch_labels, X)
    expected[sketch] = sketch_labels
    np.testing.assert_array_equal(got, expected)


def test_propagation_needs_a_sketch_and_a_known_rule():
    X, _ = blobs()
    with pytest.raises(ValidationError, match="propagation='knn'.*no sketch"):
        cclust.select_k(X, [2, 3], propagation="knn")
    with pytest.raises(ValidationError, match="propagation must be one of"):
        cclust.select_k(X, [2, 3], sketch=50, propagation="svm")
