"""ConsensusClustering's resampling: subsample, feature_subsample, item_weights/sample_weight and
feature_weights (ConsensusClusterPlus's pItem, pFeature, weightsItem and weightsFeature; Monti et
al. 2003; Wilkerson & Hayes 2010), drawn by the same functions as select_k."""
import numpy as np
import pytest

import cclust
from cclust import ConsensusClustering, _monti
from cclust._pipeline import child_seeds, generate_ensemble
from cclust.datasets import load_iris
from cclust.errors import ValidationError


@pytest.fixture(scope="module")
def iris():
    return load_iris()


def _reference(X, k, r, seed, subsample, feature_subsample=1.0, item_weights=None, feature_weights=None,
               generator="kmeans"):
    """The resampled ensemble built step by step from its definition."""
    generator_seed = child_seeds(seed, 2)[0]
    streams = [np.random.default_rng(np.random.SeedSequence(generator_seed, spawn_key=(i,))) for i in range(3)]
    n, d = X.shape
    samples = _monti.draw_resamples(n, r, subsample, streams[0], item_weights)
    columns = _monti.draw_features(d, r, feature_subsample, streams[1], feature_weights)
    seeds = streams[2].integers(0, 2**32, size=r, dtype=np.uint64).tolist()
    L = np.full((n, r), -1)
    for h in range(r):
        rows = X[samples[h]] if columns is None else X[samples[h]][:, columns[h]]
        L[samples[h], h] = generate_ensemble(generator, np.ascontiguousarray(rows), k, 1, {}, int(seeds[h]), None,
                                             0).labels[:, 0]
    return L


def test_resampled_ensemble_matches_its_definition(iris):
    X, y = iris
    model = ConsensusClustering("kcc", n_clusters=3, n_partitions=8, subsample=0.8, feature_subsample=0.5,
                                random_state=4).fit(X)
    L = model.ensemble_.labels
    assert ((L == -1).sum(axis=0) == 150 - 120).all()
    ref = _reference(X, 3, 8, 4, 0.8, 0.5)
    assert cclust.Ensemble(ref) == cclust.Ensemble(L)
    assert model.ensemble_.provenance == ("kmeans",) * 8
    from cclust.metrics import ari
    assert ari(y, model.labels_) > 0.5


def test_item_weights_and_sample_weight(iris):
    X, _ = iris
    w = np.ones(150)
    w[:50] = 0.0
    a = ConsensusClustering("kcc", n_clusters=3, n_partitions=6, subsample=0.5, item_weights=w, random_state=0).fit(X)
    b = ConsensusClustering("kcc", n_clusters=3, n_partitions=6, subsample=0.5, random_state=0).fit(X, sample_weight=w)
    np.testing.assert_array_equal(a.ensemble_.labels, b.ensemble_.labels)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert (a.ensemble_.labels[:50] == -1).all()            # weight 0: never drawn
    assert (a.ensemble_.labels[50:] != -1).sum() == 6 * 75  # the 75 drawn each time come from the rest
    ref = _reference(X, 3, 6, 0, 0.5, item_weights=w)
    assert cclust.Ensemble(ref) == cclust.Ensemble(a.ensemble_.labels)
    # weights only change the draws: with every object drawn, ones are the same fit as None
    plain = ConsensusClustering("kcc", n_clusters=3, n_partitions=6, random_state=0).fit(X)
    ones = ConsensusClustering("kcc", n_clusters=3, n_partitions=6, random_state=0).fit(X, sample_weight=np.ones(150))
    np.testing.assert_array_equal(plain.labels_, ones.labels_)


def test_feature_weights_pick_the_features(iris):
    X, _ = iris
    model = ConsensusClustering("kcc", n_clusters=3, n_partitions=5, feature_subsample=0.5,
                                feature_weights=[1, 0, 1, 0], random_state=2).fit(X)
    # only features 0 and 2 can be drawn, two of them each time: every partition uses both
    ref = _reference(X, 3, 5, 2, 1.0, 0.5, feature_weights=np.array([1, 0, 1, 0.0]))
    assert cclust.Ensemble(ref) == cclust.Ensemble(model.ensemble_.labels)


def test_resampling_is_deterministic_for_any_n_jobs(iris):
    X, _ = iris
    runs = [ConsensusClustering("kcc", n_clusters=3, n_partitions=6, subsample=0.7, random_state=1, n_jobs=j).fit(X)
            for j in (1, 2)]
    np.testing.assert_array_equal(runs[0].ensemble_.labels, runs[1].ensemble_.labels)
    np.testing.assert_array_equal(runs[0].labels_, runs[1].labels_)


@pytest.mark.parametrize("params, fit_kwargs, words", [
    ({"subsample": 0.0}, {}, "subsample"),
    ({"subsample": 1.5}, {}, "subsample"),
    ({"feature_subsample": 0.1}, {}, "feature_subsample"),
    ({"subsample": 0.8, "item_weights": np.ones(10)}, {}, "item_weights"),
    ({"subsample": 0.8, "item_weights": -np.ones(150)}, {}, "item_weights"),
    ({"subsample": 0.8, "item_weights": np.r_[np.nan, np.ones(149)]}, {}, "item_weights"),
    ({"subsample": 0.8, "item_weights": np.r_[np.ones(100), np.zeros(50)]}, {}, "item_weights has 100 positive"),
    ({"subsample": 0.8}, {"sample_weight": np.ones(149)}, "sample_weight"),
    ({}, {"sample_weight": np.zeros(150)}, "sample_weight are all zero"),
    ({"item_weights": np.ones(150)}, {"sample_weight": np.ones(150)}, "sample_weight and item_weights"),
    ({"feature_subsample": 0.5, "feature_weights": [1, 0, 0, 0]}, {}, "feature_weights"),
    ({"feature_weights": [1, 1]}, {}, "feature_weights"),
    ({"subsample": 0.8, "generator": "heterogeneous"}, {}, "heterogeneous"),
    ({"subsample": 0.01}, {}, "subsample=0.01 keeps 1"),
], ids=["subsample-zero", "subsample-above-one", "no-feature", "weights-length", "weights-negative", "weights-nan",
        "too-few-positive", "sample-weight-length", "all-zero", "both", "feature-too-few", "feature-length",
        "heterogeneous", "too-small-sample"])
def test_bad_resampling_input(iris, params, fit_kwargs, words):
    X, _ = iris
    model = ConsensusClustering("kcc", n_clusters=3, n_partitions=4, random_state=0, **params)
    with pytest.raises(ValidationError, match=words):
        model.fit(X, **fit_kwargs)


def test_resampling_refused_with_a_ready_ensemble(iris):
    X, _ = iris
    E = cclust.generate("kmeans", X, 3, n_partitions=4, random_state=0)
    with pytest.raises(ValidationError, match="fit\\(ensemble=...\\)"):
        ConsensusClustering("kcc", n_clusters=3, subsample=0.8).fit(X, ensemble=E)
