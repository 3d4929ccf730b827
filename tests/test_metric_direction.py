"""Metrics declare their direction (cclust.base.declare(higher_is_better=...)), and best / best-of
maximise or minimise by it, for built-in and registered (plugin) metrics alike."""
import numpy as np
import pytest

import cclust
import cclust.metrics as cm
from cclust import Ensemble
from cclust.base import declare, method_info
from cclust.consensus_functions.pairwise import best
from cclust.consensus_functions.best_of import best_of
from cclust.errors import ValidationError


def _pair_disagreement(labels_a, labels_b):
    """Fraction of object pairs that one labelling puts together and the other apart (1 - Rand)."""
    a, b = np.asarray(labels_a), np.asarray(labels_b)
    upper = np.triu_indices(a.shape[0], 1)
    return float(np.mean((a[:, None] == a[None, :])[upper] != (b[:, None] == b[None, :])[upper]))


@declare(higher_is_better=False)
def pair_disagreement(labels_a, labels_b):
    """Pair disagreement, declared lower-is-better."""
    return _pair_disagreement(labels_a, labels_b)


def pair_disagreement_undeclared(labels_a, labels_b):
    """The same distance, declaring no direction."""
    return _pair_disagreement(labels_a, labels_b)


@pytest.fixture
def registered():
    """The two test metrics in the registry, as a plugin would register them."""
    cclust.register("test-pair-disagreement", pair_disagreement, kind="metric")
    cclust.register("test-undeclared-distance", pair_disagreement_undeclared, kind="metric")
    try:
        yield
    finally:
        cclust.registry.unregister("test-pair-disagreement")
        cclust.registry.unregister("test-undeclared-distance")


def _ensemble(seed=0, n=40, r=9):
    rng = np.random.default_rng(seed)
    truth = np.repeat([0, 1, 2], [14, 13, 13])
    labels = np.empty((n, r), dtype=np.int64)
    for j in range(r):
        noisy = rng.random(n) < 0.1 * j          # members from faithful to noisy
        labels[:, j] = np.where(noisy, rng.integers(0, 3, n), truth)
    return Ensemble(labels)


def test_every_builtin_metric_declares_its_direction():
    builtins = [name for name, row in cclust.available(kind="metric").items() if row.provider == "cclust"]
    undeclared = [name for name in builtins if method_info(cclust.get(name, kind="metric")).higher_is_better is None]
    assert undeclared == ["consensus-score"]      # its direction is that of its metric argument
    with pytest.raises(ValidationError, match="takes its direction from the metric it averages"):
        cm.higher_is_better("consensus-score")
    assert cm.higher_is_better("nmi") and cm.higher_is_better("jaccard")
    assert not cm.higher_is_better("vi") and not cm.higher_is_better("kmeans-objective")
    assert not cm.higher_is_better(cm.cssd)
    table_names = [name for name in cclust.available(kind="metric") if name in cm._consensus._TABLE_METRICS]
    assert set(cm.DISSIMILARITIES) == {name for name in table_names if not cm.higher_is_better(name)}


@pytest.mark.parametrize("value", ["yes", 1, 0.0])
def test_declare_refuses_a_direction_that_is_not_a_bool(value):
    with pytest.raises(ValidationError, match="higher_is_better must be True"):
        declare(higher_is_better=value)


def test_consensus_score_reads_a_registered_metric_on_the_labelled_objects(registered):
    E = _ensemble()
    labels = np.asarray(E.labels).copy()
    labels[np.random.default_rng(1).random(labels.shape) < 0.2] = -1   # objects missing from partitions
    E = Ensemble(labels)
    consensus = np.asarray(_ensemble().labels)[:, 0]
    by_plugin = cm.consensus_score(consensus, E, metric="test-pair-disagreement")
    assert by_plugin == pytest.approx(cm.consensus_score(consensus, E, metric="boorman-arabie-d"), abs=1e-12)


def test_best_minimises_a_registered_lower_is_better_metric(registered):
    E = _ensemble()
    res = best(E, None, metric="test-pair-disagreement")
    scores = res.extras["scores"]
    assert res.extras["member"] == int(np.nanargmin(scores))
    assert int(np.nanargmax(scores)) != res.extras["member"]        # maximising would pick another
    builtin = best(E, None, metric="boorman-arabie-d")             # the same distance, built in
    assert res.extras["member"] == builtin.extras["member"]
    np.testing.assert_allclose(scores, builtin.extras["scores"], atol=1e-12)
    assert "lower is better" in res.objective_name


def test_best_minimises_a_builtin_distance_passed_as_a_function():
    E = _ensemble()
    assert best(E, None, metric=cm.vi).extras["member"] == best(E, None, metric="vi").extras["member"]


def test_best_of_minimises_a_registered_lower_is_better_metric(registered):
    E = _ensemble()
    res = best_of(E, 3, metric="test-pair-disagreement", random_state=0)
    scores = res.extras["scores"]
    assert scores[res.extras["winner"]] == min(scores.values())
    builtin = best_of(E, 3, metric="boorman-arabie-d", random_state=0)
    assert res.extras["winner"] == builtin.extras["winner"]
    assert scores == pytest.approx(builtin.extras["scores"], abs=1e-12)
    assert "lower is better" in res.objective_name


@pytest.mark.parametrize("method", ["best", "best-of"])
def test_a_registered_metric_without_a_direction_is_refused(registered, method):
    E = _ensemble()
    with pytest.raises(ValidationError) as info:
        cclust.consensus(method, E, 3, metric="test-undeclared-distance")
    message = str(info.value)
    assert "'test-undeclared-distance' does not declare whether higher or lower" in message
    assert "declare(higher_is_better=False)" in message


def test_the_conformance_kit_catches_a_wrong_declared_direction():
    from cclust.testing import check_metric_self_agreement

    @declare(higher_is_better=True)
    def misdeclared(labels_a, labels_b):
        return _pair_disagreement(labels_a, labels_b)

    with pytest.raises(AssertionError, match="declares higher_is_better=True"):
        check_metric_self_agreement(misdeclared)
    check_metric_self_agreement(pair_disagreement)

