"""KCC on soft partitions (kcc given a SoftEnsemble): hard special case, literal reference, rules."""
import numpy as np
import pytest
import reference_kcc_soft as ref
from factories import random_memberships

import cclust
from cclust import Ensemble
from cclust.base import method_info
from cclust.consensus_functions.kcc import kcc
from cclust.datasets import load_iris
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.soft import SoftEnsemble

UTILITIES = [
    ("uc", "uc", False, None), ("uh", "uh", False, None), ("ucos", "ucos", False, None),
    ("ulp", "ulp", False, 5.0), ("nuc", "uc", True, None), ("nuh", "uh", True, None),
    ("nucos", "ucos", True, None), ("nulp", "ulp", True, 8.0),
]
UTILITY_IDS = [u[0] for u in UTILITIES]


def _same(a, b):
    assert np.array_equal(a.labels, b.labels)
    assert a.objective == b.objective
    assert np.array_equal(a.extras["objectives"], b.extras["objectives"])
    assert np.array_equal(a.extras["objective_trace"], b.extras["objective_trace"])
    assert a.n_iter == b.n_iter and a.converged == b.converged
    assert np.array_equal(a.extras["partition_utilities"], b.extras["partition_utilities"])


@pytest.mark.parametrize("init", ["k-means++", "random"])
@pytest.mark.parametrize("name, family, normalized, p", UTILITIES, ids=UTILITY_IDS)
def test_hard_partitions_as_soft_give_hard_kcc_bit_for_bit(name, family, normalized, p, init):
    X, _ = load_iris()
    E = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0)
    S = SoftEnsemble(E)
    # one seed: its n_init starts already differ; the next test varies the seeds, labels and starts
    _same(kcc(E, 3, utility=name, p=p, init=init, random_state=0),
          kcc(S, 3, utility=name, p=p, init=init, random_state=0))


@pytest.mark.parametrize("name, family, normalized, p", UTILITIES, ids=UTILITY_IDS)
def test_hard_special_case_on_random_labels_weights_and_given_starts(name, family, normalized, p):
    # Random labels: many exact ties between centres, which the soft route must break as the
    # hard engine does; unequal weights; a given start with empty clusters (the reseed rule).
    rng = np.random.default_rng(7)
    for trial in range(6):
        n, r, k = int(rng.integers(20, 200)), int(rng.integers(2, 10)), int(rng.integers(2, 7))
        L = np.column_stack([rng.integers(0, rng.integers(2, 8), n) for _ in range(r)])
        E = Ensemble(L, weights=rng.random(r) if trial % 2 else None)
        S = SoftEnsemble(E)
        kw = dict(utility=name, p=p, random_state=trial, n_init=3, init=["k-means++", "random"][trial % 2])
        _same(kcc(E, k, **kw), kcc(S, k, **kw))
        start = np.zeros(n, dtype=np.int64)   # every cluster but 0 empty: reseeded
        _same(kcc(E, k, utility=name, p=p, init=start), kcc(S, k, utility=name, p=p, init=start))


@pytest.mark.parametrize("weighted", [False, True], ids=["equal", "weighted"])
@pytest.mark.parametrize("name, family, normalized, p", UTILITIES, ids=UTILITY_IDS)
def test_matches_literal_bregman_kmeans_from_the_same_start(name, family, normalized, p, weighted):
    rng = np.random.default_rng(3)
    n, k = 30, 3
    mats = random_memberships(n, [2, 3, 4, 3], seed=11, power=3)
    weights = rng.random(4) if weighted else None
    S = SoftEnsemble(mats, weights=weights)
    start = np.arange(n) % k
    res = kcc(S, k, utility=name, p=p, init=start, max_iter=50)
    U, offsets = S.stacked(), S.offsets
    w = ref.effective_weights(U, offsets, S.weights, family, normalized, p)
    labels, objective, trace = ref.lloyd(U, offsets, w, family, start, k, p, max_iter=50)
    np.testing.assert_array_equal(res.labels, cclust.ConsensusResult.from_labels(labels).labels)
    assert res.extras["kmeans_objective"] == pytest.approx(objective, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(res.extras["objective_trace"], trace, rtol=1e-9, atol=1e-12)
    assert res.objective == pytest.approx(ref.gamma(U, offsets, S.weights, family, normalized, labels, p),
                                          rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name, family, normalized, p", UTILITIES, ids=UTILITY_IDS)
def test_objective_never_increases_and_gamma_identity(name, family, normalized, p):
    S = SoftEnsemble(random_memberships(120, [3, 4, 5, 3, 6, 2], seed=5, power=2))
    for seed in range(4):
        res = kcc(S, 4, utility=name, p=p, random_state=seed, n_init=2, tol=0.0)
        trace = res.extras["objective_trace"]
        assert (np.diff(trace) <= 0).all()
        # Gamma = sum_i w'_i (mean mu(x_i) - mu(P_i)) - objective / n on Bregman distances
        # (uh: up to the smoothing eps), the identity the restarts are ranked by.
        kept = int(np.argmax(res.extras["objectives"]))
        assert res.extras["objectives"][kept] == pytest.approx(res.objective, rel=1e-9, abs=1e-12)


def test_hand_computed_toy_case():
    U = np.array([[1.0, 0.0], [0.9, 0.1], [0.1, 0.9], [0.0, 1.0]])
    res = kcc(SoftEnsemble([U]), 2, utility="uc", random_state=0)
    assert res.labels.tolist() == [0, 0, 1, 1]
    # centres (0.95, 0.05) and (0.05, 0.95): each object 2 * 0.05^2 away
    assert res.extras["kmeans_objective"] == pytest.approx(0.02, rel=1e-12)
    # U_c = sum_k p_k ||P_k||^2 - ||P||^2 = (0.95^2 + 0.05^2) - 0.5
    assert res.objective == pytest.approx(0.905 - 0.5, rel=1e-12)
    np.testing.assert_allclose(res.extras["centers"], [[0.95, 0.05], [0.05, 0.95]])


def test_soft_input_changes_the_answer_where_memberships_say_so():
    # Object 2 leans to the first group by a hair in two partitions (0.51) and belongs to the
    # second outright in the third: hardened, it has two votes of three for the first group;
    # by its memberships it is far closer to the second.
    U1 = np.array([[0.95, 0.05], [0.9, 0.1], [0.51, 0.49], [0.1, 0.9], [0.05, 0.95]])
    U2 = np.array([[0.95, 0.05], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.05, 0.95]])
    S = SoftEnsemble([U1, U1, U2])
    assert kcc(S, 2, utility="uc", random_state=0).labels.tolist() == [0, 0, 1, 1, 1]
    assert kcc(S.harden(), 2, utility="uc", random_state=0).labels.tolist() == [0, 0, 0, 1, 1]


def test_registry_routes_soft_input_and_declares_it():
    assert method_info(kcc).accepts_soft
    S = SoftEnsemble(random_memberships(40, [3, 3, 4], seed=2))
    a = cclust.consensus("kcc", S, 3, random_state=0)
    b = kcc(S, 3, random_state=0)
    assert np.array_equal(a.labels, b.labels) and a.objective == b.objective
    assert "centers" in a.extras and a.extras["centers"].shape == (3, 10)


def test_weights_argument_and_determinism():
    """The deprecated ``weights=`` gives what the weighted SoftEnsemble gives."""
    S = SoftEnsemble(random_memberships(50, [2, 3, 4, 5], seed=4))
    w = [1.0, 2.0, 0.5, 1.0]
    with pytest.warns(FutureWarning, match="partition weights belong to the ensemble"):
        a = kcc(S, 3, weights=w, random_state=1)
    b = kcc(S.with_weights(w), 3, random_state=1)
    assert np.array_equal(a.labels, b.labels) and a.objective == b.objective
    c = kcc(S.with_weights(w), 3, random_state=1)
    assert np.array_equal(a.labels, c.labels)
    assert kcc(S.with_weights(w), 3, random_state=np.random.default_rng(5)).n_clusters == 3


def test_bad_input_names_the_argument():
    S = SoftEnsemble(random_memberships(30, [2, 3], seed=1))
    with pytest.raises(ValidationError, match="runs in memory only"):
        kcc(S, 2, backend="dask")
    with pytest.raises(ValidationError, match="runs in memory only"):
        kcc(S, 2, chunks=10)
    with pytest.raises(ValidationError, match="n_clusters"):
        kcc(S, 31)
    with pytest.raises(ValidationError, match="utility 'ulp' needs p"):
        kcc(S, 2, utility="ulp")
    with pytest.raises(ValidationError, match="init"):
        kcc(S, 2, init="forgy")
    with pytest.raises(ValidationError, match="n_jobs"):
        kcc(S, 2, n_jobs=0)
    with pytest.raises(MemoryBudgetError, match="max_bytes"):
        kcc(S, 2, max_bytes=1000)


def test_no_mutation_of_the_soft_ensemble():
    mats = random_memberships(30, [2, 3], seed=9)
    S = SoftEnsemble(mats)
    before = S.stacked().copy()
    kcc(S, 3, random_state=0)
    assert np.array_equal(S.stacked(), before) and not S.stacked().flags.writeable
