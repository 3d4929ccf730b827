"""Property tests: every consensus method on random and degenerate ensembles, and the metrics'
symmetry, bounds and known values.

Examples come from :mod:`cclust.testing.strategies` under the derandomized ``cclust-ci``
hypothesis profile (the same examples every run); ``CCLUST_HYPOTHESIS_PROFILE=cclust-dev``
draws fresh ones, ten times as many.

A consensus method may refuse an input, but only with a ``cclust.errors.ValidationError`` whose
message names the offending argument; otherwise it must return a valid result honouring
``n_clusters`` (or, for the voting family, say in ``extras["fewer_clusters"]`` why it could not).
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import cclust
from cclust import ConsensusResult, Ensemble
from cclust.errors import ConvergenceWarning, ValidationError
from cclust.registry import method_info
from cclust.testing import same_partition
from cclust.testing.strategies import (
    DEGENERATE_SHAPES,
    degenerate_ensembles,
    ensembles,
    labellings,
    profile,
)

PROFILE = profile()
CONSENSUS = sorted(cclust.available(kind="consensus"))

# Words one of which a refusal must contain: the argument (or the input's property) at fault.
ARGUMENT_WORDS = ("n_clusters", "ensemble", "X", "missing", "weights", "label")


def features(n):
    """Data for methods that need X: a fixed draw, so examples are reproducible."""
    return np.random.default_rng(n).normal(size=(n, 2))


def run_consensus(name, ensemble, k, *, random_state=0):
    """Call a registered consensus method and return its result, or the ValidationError it
    raised (None: refused in the allowed way); fail the test on anything else."""
    fn = cclust.get(name)
    info = method_info(fn)
    kwargs = {"X": features(ensemble.n_samples)} if info.requires_X else {}
    with warnings.catch_warnings():
        # Tiny degenerate inputs may stop an iterative method at its limit; that is reported
        # by a warning on purpose. Any other warning still fails the test (filterwarnings=error).
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            return fn(ensemble, k, random_state=random_state, **kwargs)
        except ValidationError as exc:
            message = str(exc)
            assert any(word in message for word in ARGUMENT_WORDS), (
                f"{name} refused ensemble of shape {ensemble.labels.shape}, n_clusters={k} with a "
                f"message naming no argument: {message}")
            return exc


def assert_valid(name, ensemble, k, outcome):
    info = method_info(cclust.get(name))
    if isinstance(outcome, ValidationError):
        return
    if ensemble.has_missing and not info.handles_missing:
        pytest.fail(f"{name} declares handles_missing=False but returned a result for missing labels")
    assert isinstance(outcome, ConsensusResult)
    labels = outcome.labels
    n = ensemble.n_samples
    assert labels.dtype == np.int64 and labels.shape == (n,), (name, labels.dtype, labels.shape)
    used = np.unique(labels)
    assert used.tolist() == list(range(outcome.n_clusters)), (name, used, outcome.n_clusters)
    if outcome.n_clusters != k:
        if info.chooses_n_clusters and (outcome.extras or {}).get("note"):
            return  # e.g. best: no member has k clusters, the closest were used, and it says so
        note = (outcome.extras or {}).get("fewer_clusters", "")
        assert outcome.n_clusters < k and note, (
            f"{name} asked for n_clusters={k} returned {outcome.n_clusters} clusters without saying why")


@pytest.mark.parametrize("name", CONSENSUS)
@settings(PROFILE, max_examples=max(1, PROFILE.max_examples // 2))
@given(data=st.data())
def test_consensus_on_random_ensembles(name, data):
    ensemble = data.draw(st.one_of(ensembles(min_n=1, max_n=14, max_partitions=4, max_k=4, missing=True,
                                             weights=True), degenerate_ensembles()), label="ensemble")
    k = data.draw(st.integers(1, min(ensemble.n_samples + 1, 5)), label="n_clusters")
    assert_valid(name, ensemble, k, run_consensus(name, ensemble, k))


DEGENERATE = {
    "one-object": np.array([[0, 0, 0]]),
    "two-objects": np.array([[0, 1], [1, 1]]),
    "one-partition": np.array([[0], [0], [1], [1], [2], [2]]),
    "all-in-one-cluster": np.zeros((6, 3), dtype=np.int64),
    "every-object-alone": np.tile(np.arange(6)[:, None], (1, 3)),
    "two-identical-objects": np.array([[0, 1], [0, 1]]),
    "mostly-missing": np.array([[0, -1, -1], [-1, 1, -1], [-1, -1, 0], [1, 0, 1]]),
}


@pytest.mark.parametrize("case", DEGENERATE)
@pytest.mark.parametrize("name", CONSENSUS)
def test_consensus_on_degenerate_ensembles(name, case):
    ensemble = Ensemble(DEGENERATE[case])
    for k in sorted({1, 2, ensemble.n_samples}):
        assert_valid(name, ensemble, k, run_consensus(name, ensemble, k))


@settings(PROFILE, max_examples=3 * PROFILE.max_examples)
@given(degenerate_ensembles())
def test_degenerate_strategy_draws_valid_ensembles(ensemble):
    assert isinstance(ensemble, Ensemble)
    assert ((ensemble.labels >= 0).sum(axis=0) >= 1).all()
    assert ((ensemble.labels >= 0).sum(axis=1) >= 1).all()
    assert len(DEGENERATE_SHAPES) == 7


@pytest.mark.parametrize("name", CONSENSUS)
def test_every_object_alone_comes_back_when_asked_for(name):
    # Three partitions agree that all six objects are apart: K = 6 has one right answer.
    ensemble = Ensemble(DEGENERATE["every-object-alone"])
    outcome = run_consensus(name, ensemble, 6)
    assert_valid(name, ensemble, 6, outcome)
    if not isinstance(outcome, ValidationError) and outcome.n_clusters == 6:
        assert same_partition(outcome.labels, np.arange(6))


# -- metrics ---------------------------------------------------------------------------------


@st.composite
def labelling_pairs(draw, max_n=30, max_k=6):
    n = draw(st.integers(1, max_n))
    return draw(labellings(n, max_k=max_k)), draw(labellings(n, max_k=max_k))


SYMMETRIC = ("ari", "rand", "nmi", "ami", "vi", "van-dongen")


def _entropy(labels):
    _, counts = np.unique(labels, return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


@settings(PROFILE, max_examples=4 * PROFILE.max_examples)
@given(labelling_pairs())
def test_metric_symmetry_bounds_and_references(pair):
    a, b = pair
    n = a.shape[0]
    value = {name: cclust.get(name)(a, b) for name in SYMMETRIC + ("accuracy",)}
    for name in SYMMETRIC:
        assert cclust.get(name)(b, a) == pytest.approx(value[name], abs=1e-12), name
    assert -1.0 <= value["ari"] <= 1.0
    assert 0.0 <= value["rand"] <= 1.0
    assert 0.0 <= value["nmi"] <= 1.0 + 1e-12
    assert value["ami"] <= 1.0 + 1e-12
    assert 0.0 <= value["vi"] <= math.log(n) + 1e-12
    assert 0.0 <= value["van-dongen"] < 1.0
    assert 0.0 < value["accuracy"] <= 1.0
    # Independent references: scikit-learn, and VI from the entropies.
    assert value["ari"] == pytest.approx(skm.adjusted_rand_score(a, b), abs=1e-12)
    assert value["rand"] == pytest.approx(skm.rand_score(a, b), abs=1e-12)
    mi = skm.mutual_info_score(a, b)
    assert value["vi"] == pytest.approx(_entropy(a) + _entropy(b) - 2 * mi, abs=1e-10)
    if np.unique(a).size > 1 and np.unique(b).size > 1:
        assert value["nmi"] == pytest.approx(
            skm.normalized_mutual_info_score(a, b, average_method="geometric"), abs=1e-10)
        assert value["ami"] == pytest.approx(
            skm.adjusted_mutual_info_score(a, b, average_method="arithmetic"), abs=1e-8)


@settings(PROFILE, max_examples=2 * PROFILE.max_examples)
@given(labellings(24, max_k=6), st.randoms(use_true_random=False))
def test_metric_known_values_on_identical_and_renamed_labellings(a, random):
    names = list(np.unique(a))
    shuffled = names[:]
    random.shuffle(shuffled)
    renamed = np.array([100 + shuffled.index(v) for v in a])
    for b in (a.copy(), renamed):
        assert cclust.get("ari")(a, b) == pytest.approx(1.0)
        assert cclust.get("rand")(a, b) == pytest.approx(1.0)
        assert cclust.get("vi")(a, b) == pytest.approx(0.0, abs=1e-12)
        assert cclust.get("van-dongen")(a, b) == pytest.approx(0.0, abs=1e-12)
        assert cclust.get("accuracy")(a, b) == pytest.approx(1.0)
        if len(names) > 1:
            assert cclust.get("nmi")(a, b) == pytest.approx(1.0)
            assert cclust.get("ami")(a, b) == pytest.approx(1.0)


def test_metric_known_values_by_hand():
    a = np.array([0, 0, 1, 1, 2, 2])
    b = np.array([0, 0, 0, 1, 1, 1])
    # Pairs: together in both 2, in a 3, in b 6, of 15: Rand = (2 + (15 - 3 - 6 + 2)) / 15.
    assert cclust.get("rand")(a, b) == pytest.approx(10 / 15)
    expected_ari = (2 - 3 * 6 / 15) / ((3 + 6) / 2 - 3 * 6 / 15)
    assert cclust.get("ari")(a, b) == pytest.approx(expected_ari)
    # VI = H(a|b) + H(b|a): H(a) = log 3, H(b) = log 2, MI = log 3 - (2/3) log 2... by counting:
    mi = skm.mutual_info_score(a, b)
    assert cclust.get("vi")(a, b) == pytest.approx(math.log(3) + math.log(2) - 2 * mi)
    # Accuracy (purity of b's clusters w.r.t. a): majorities 2 + 2 of 6.
    assert cclust.get("accuracy")(a, b) == pytest.approx(4 / 6)
    # One object: every comparison is perfect agreement.
    assert cclust.get("ari")([0], [3]) == pytest.approx(1.0)
    assert cclust.get("vi")([0], [3]) == pytest.approx(0.0)


@settings(PROFILE, max_examples=2 * PROFILE.max_examples)
@given(ensembles(min_n=2, max_n=20, max_partitions=5, max_k=4))
def test_consensus_score_is_the_weighted_mean_agreement(ensemble):
    labels = ensemble.labels[:, 0]
    score = cclust.get("consensus-score")(labels, ensemble, metric="ari")
    per = [cclust.get("ari")(labels, ensemble.labels[:, j]) for j in range(ensemble.n_partitions)]
    assert score == pytest.approx(float(np.dot(ensemble.weights, per)), abs=1e-12)
