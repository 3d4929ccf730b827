"""The starts of the median partitions (SE, HE, SM, HM, GV1): the default (the KCC consensus
and two random starts) reaches what 20 random starts reach where one random start does not, and
``init="random", n_init=1`` is R clue's single random start, the former default, exactly."""
import numpy as np
import pytest

import cclust
from cclust.consensus_functions import _median as mc
from cclust.errors import ValidationError
from cclust.metrics import ari
from cclust.soft import SoftEnsemble
from cclust.testing import easy_ensemble

METHODS = ("se", "he", "sm", "hm", "gv1")

#: Labels and objective of every method with its former default (one random start; DWH one
#: random order) and random_state=0 on ``easy_ensemble(240, 4, ratio=3, n_partitions=20, seed=0)``,
#: recorded before the default start changed.
FORMER_DEFAULT = {
    "se": ("001100101110111001110010010010100011100111010101111011001011000000100100010110101010101111101000011011011011010111111001222222222222222222222222222222222222222211111111111111111111111111111111111111113333333333333333333333333333333333333333", 180.745),
    "he": ("001100101110111000010010010010100011100111010101110011001011000000100100000110101010101111101100011011011010010111111001222222222222222222222222222222222222222211111111111111111111111111111111111111113333333333333333333333333333333333333333", 238.70000000000002),
    "sm": ("001200101120111000210010010010200021200111220101212011001011000000100100020110102010202111101000012011021010010111221001222222222222222222222222222222222222222211111111111111111111111111111111111111113333333333333333333333333333333333333333", 244.1),
    "hm": ("001100101110111000010010010010100011100111010101110011001011000000100100010110101010101111101000011011011010010111111001222222222222222222222222222222222222222211111111111111111111111111111111111111113333333333333333333333333333333333333333", 238.70000000000002),
    "gv1": ("000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000111111111111111111111111111111111111111102220222200222202222020020022220222200223333333333333333333333333333333333333333", 70.45312500000007),
    "dwh": ("000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000111111111111111111111111111111111111111122222222222222222222222222222222222222223333333333333333333333333333333333333333", 188.24),
}

#: The parameters that give the former default.
CLUE_START = {"init": "random", "n_init": 1}


@pytest.mark.parametrize("name", sorted(FORMER_DEFAULT))
def test_clue_start_reproduces_the_former_default(name):
    _, _, E = easy_ensemble(240, 4, ratio=3, n_partitions=20, seed=0)
    params = {"n_init": 1} if name == "dwh" else CLUE_START
    result = cclust.get(name)(E, 4, random_state=0, **params)
    labels, objective = FORMER_DEFAULT[name]
    assert "".join(map(str, result.labels)) == labels
    assert result.objective == pytest.approx(objective, rel=1e-9)


@pytest.mark.parametrize("name", METHODS)
def test_default_start_reaches_the_best_of_twenty_random_starts(name):
    """Seed 3 of a small easy ensemble: one random start stops at a worse fixed point (for the
    hard methods one that merges blobs), the default reaches the criterion of 20 random starts."""
    _, y, E = easy_ensemble(300, 4, ratio=3, k_range=(4, 8), n_partitions=20, seed=3)
    fn = cclust.get(name)
    one = fn(E, 4, random_state=3, **CLUE_START).objective
    twenty = fn(E, 4, random_state=3, init="random", n_init=20).objective
    default = fn(E, 4, random_state=3)
    assert one > twenty * (1 + 1e-6)
    assert default.objective <= twenty * (1 + 1e-9)
    assert ari(y, default.labels) == pytest.approx(1.0)


@pytest.mark.parametrize("name", METHODS)
def test_kcc_start_is_the_first_of_the_starts(name):
    """The random starts are the same under both rules: ``init="kcc"`` only replaces the first."""
    _, _, E = easy_ensemble(300, 4, ratio=3, k_range=(4, 8), n_partitions=20, seed=3)
    fn = cclust.get(name)
    kcc = fn(E, 4, random_state=5, init="kcc", n_init=3).extras["objectives"]
    rnd = fn(E, 4, random_state=5, init="random", n_init=3).extras["objectives"]
    assert kcc[1:] == pytest.approx(rnd[1:], rel=1e-12)
    assert len(kcc) == 3


@pytest.mark.parametrize("name", METHODS)
def test_default_is_deterministic_and_accepts_soft_and_one_cluster(name):
    _, _, E = easy_ensemble(300, 4, ratio=3, k_range=(4, 8), n_partitions=20, seed=3)
    fn = cclust.get(name)
    a, b = fn(E, 4, random_state=7), fn(E, 4, random_state=7)
    np.testing.assert_array_equal(a.labels, b.labels)
    rng = np.random.default_rng(0)
    blurred = []
    for j in range(6):       # soft partitions: each hard one mixed with noise
        U = np.eye(int(E.n_clusters[j]))[E.labels[:, j]] + 0.2 * rng.random((E.n_samples, int(E.n_clusters[j])))
        blurred.append(U / U.sum(axis=1, keepdims=True))
    soft = fn(SoftEnsemble(blurred), 4, random_state=0)
    assert soft.n_clusters == 4 and len(soft.extras["objectives"]) == 3
    assert fn(E, 1, random_state=0).n_clusters == 1


@pytest.mark.parametrize("name", METHODS)
def test_unknown_start_rule_is_refused(name):
    with pytest.raises(ValidationError, match=r"init must be one of \['kcc', 'random'\]"):
        cclust.get(name)(np.array([[0, 1], [0, 1], [1, 0]]), 2, init="kmeans")


def test_start_rules_are_listed():
    assert mc.INITS == ("kcc", "random")
