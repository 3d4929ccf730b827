"""select_k's item and feature sampling weights and feature subsampling (ConsensusClusterPlus's
weightsItem, weightsFeature and pFeature; Wilkerson & Hayes 2010)."""
import numpy as np
import pytest

from cclust import Ensemble, select_k
from cclust import _monti
from cclust.errors import ValidationError

import reference_sampling as ref


def _blobs(seed=0, noise=2):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, 0.3, (15, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    return np.hstack([X, rng.normal(0, 3, (X.shape[0], noise))])


@pytest.mark.parametrize("weights, size", [([1, 2, 3, 4], 2), ([5, 1, 1, 0.5, 3], 3), ([1, 0, 2, 1], 3)],
                         ids=["n4-size2", "n5-size3", "a-zero-weight"])
def test_weighted_draws_follow_r_sample_without_replacement(weights, size):
    exact = ref.subset_probabilities(weights, size)
    draws = 40_000
    rng = np.random.default_rng(7)
    p_item = size / len(weights) + 1e-9
    samples = _monti.draw_resamples(len(weights), draws, p_item, rng, np.array(weights, dtype=float))
    counts = {}
    for s in samples:
        counts[tuple(s.tolist())] = counts.get(tuple(s.tolist()), 0) + 1
    assert set(counts) <= {key for key, p in exact.items() if p > 0}
    for key, p in exact.items():
        sd = np.sqrt(p * (1 - p) / draws)
        assert abs(counts.get(key, 0) / draws - p) <= 5 * sd + 1e-12, (key, counts.get(key, 0) / draws, p)


def test_the_exact_reference_is_not_inclusion_proportional_to_weight():
    # the test above can fail: successive sampling differs from, e.g., drawing each pair with
    # probability proportional to the product of the weights
    exact = ref.subset_probabilities([1, 2, 3, 4], 2)
    product = {key: (key[0] + 1) * (key[1] + 1) / 35 for key in exact}
    assert max(abs(exact[key] - product[key]) for key in exact) > 0.01


def test_a_small_weight_item_is_rarely_sampled():
    rng = np.random.default_rng(0)
    weights = np.ones(50)
    weights[0] = 1e-3
    samples = _monti.draw_resamples(50, 500, 0.8, rng, weights)
    assert sum(0 in s for s in samples) <= 5            # about 0.2 % of 500 expected
    assert all(len(s) == 40 for s in samples)
    uniform = _monti.draw_resamples(50, 500, 0.8, np.random.default_rng(0))
    assert sum(0 in s for s in uniform) > 300             # 80 % without weights


def test_zero_weight_item_is_never_drawn_in_select_k():
    X = _blobs(noise=0)
    w = np.ones(X.shape[0])
    w[3] = 0.0
    result = select_k(X, [2, 3], item_weights=w, n_resamples=20, random_state=0, keep_matrices=True)
    for k in (2, 3):
        row = np.delete(result.consensus_matrices[k][3], 3)
        assert np.all(row == 0)
    assert result.best_k == 3


@pytest.mark.parametrize("method", ["monti", "kcc"])
def test_feature_weights_that_exclude_features_equal_dropping_them(method):
    X = _blobs(noise=2)
    small = dict(n_resamples=6, random_state=3, keep_matrices=True)
    if method == "kcc":
        small.update(method="kcc", n_partitions=4)
    weighted = select_k(X, [2, 3, 4], feature_subsample=0.5, feature_weights=[1, 1, 0, 0], **small)
    dropped = select_k(X[:, :2], [2, 3, 4], **small)
    for k in (2, 3, 4):
        assert np.array_equal(weighted.consensus_matrices[k], dropped.consensus_matrices[k])
    assert np.array_equal(weighted.pac, dropped.pac)
    # and the weights are used: all features kept differs
    every = select_k(X, [2, 3, 4], **small)
    assert not all(np.array_equal(every.consensus_matrices[k], dropped.consensus_matrices[k]) for k in (2, 3, 4))


def test_feature_subsample_draws_and_is_deterministic():
    X = _blobs(noise=2)
    a = select_k(X, [2, 3], feature_subsample=0.5, n_resamples=8, random_state=1)
    b = select_k(X, [2, 3], feature_subsample=0.5, n_resamples=8, random_state=1, n_jobs=2)
    assert np.array_equal(a.pac, b.pac)
    draws = _monti.draw_features(4, 50, 0.5, np.random.default_rng(0))
    assert all(len(f) == 2 for f in draws) and len({tuple(f.tolist()) for f in draws}) > 1
    assert _monti.draw_features(4, 5, 1.0, np.random.default_rng(0), np.array([1.0, 0, 0, 1])) is None
    # the objects drawn do not depend on the feature settings
    c = select_k(X, [2, 3], n_resamples=8, random_state=1, feature_weights=np.ones(4))
    d = select_k(X, [2, 3], n_resamples=8, random_state=1)
    assert np.array_equal(c.pac, d.pac)


@pytest.mark.parametrize("kwargs, match", [
    ({"item_weights": -np.ones(45)}, "item_weights must be non-negative"),
    ({"item_weights": np.r_[np.ones(44), np.nan]}, "item_weights must be finite"),
    ({"item_weights": np.ones(44)}, r"item_weights must have one weight per object \(45\)"),
    ({"item_weights": np.ones((45, 1))}, "item_weights must have one weight"),
    ({"item_weights": np.r_[np.ones(10), np.zeros(35)]}, "item_weights has 10 positive weights.*subsample"),
    ({"item_weights": ["a"] * 45}, "item_weights must be an array"),
    ({"feature_weights": [1, 1, -1, 1], "feature_subsample": 0.5}, "feature_weights must be non-negative"),
    ({"feature_weights": [1, np.inf, 1, 1]}, "feature_weights must be finite"),
    ({"feature_weights": [1, 1, 1]}, r"feature_weights must have one weight per feature \(4\)"),
    ({"feature_weights": [1, 0, 0, 0], "feature_subsample": 0.5}, "feature_weights has 1 positive"),
    ({"feature_subsample": 0.0}, "feature_subsample"),
    ({"feature_subsample": 1.5}, "feature_subsample"),
    ({"feature_subsample": 0.1}, "feature_subsample=0.1 keeps none"),
])
def test_bad_weights(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        select_k(_blobs(noise=2), [2, 3], n_resamples=2, **kwargs)


def test_feature_resampling_refused_for_an_ensemble():
    E = Ensemble(np.random.default_rng(0).integers(0, 3, (30, 5)))
    with pytest.raises(ValidationError, match="feature_subsample and feature_weights"):
        select_k(E, [2, 3], method="kcc", feature_subsample=0.5)
    with pytest.raises(ValidationError, match="item_weights must have one weight"):
        select_k(E, [2, 3], method="kcc", item_weights=[1, 2])
