import numpy as np
import pytest
import reference_kcc
from factories import FakeTerminal

import cclust
from cclust import Ensemble
from cclust.consensus_functions.kcc import kcc
from cclust.datasets import load_iris
from cclust.errors import UnknownNameError, ValidationError

UTILITIES = [
    ("uc", "uc", False, None), ("uh", "uh", False, None), ("ucos", "ucos", False, None),
    ("ulp", "ulp", False, 5.0), ("nuc", "uc", True, None), ("nuh", "uh", True, None),
    ("nucos", "ucos", True, None), ("nulp", "ulp", True, 8.0),
]
UTILITY_IDS = [u[0] for u in UTILITIES]


def noisy_ensemble(rng, n=60, r=8, k=3, missing=0.0, noise=0.25):
    truth = np.repeat(np.arange(k), n // k)
    cols = []
    for _ in range(r):
        ki = int(rng.integers(2, 6))
        col = (truth + rng.integers(0, 2, size=n) * (rng.random(n) < noise)) % ki
        if missing:
            col = np.where(rng.random(n) < missing, -1, col)
            col[:ki] = np.arange(ki)  # keep every label in use
        cols.append(col)
    return Ensemble(np.column_stack(cols), missing=-1), truth


@pytest.mark.parametrize("missing", [0.0, 0.3], ids=["complete", "missing30"])
@pytest.mark.parametrize("weighted", [False, True], ids=["equal", "weighted"])
@pytest.mark.parametrize("name, family, normalized, p", UTILITIES, ids=UTILITY_IDS)
def test_matches_brute_force_kcc_from_same_start(name, family, normalized, p, weighted, missing):
    # one random draw per cell of the grid (its 32 cells already draw 32 inputs)
    rng = np.random.default_rng([UTILITY_IDS.index(name), weighted, missing > 0])
    E, _ = noisy_ensemble(rng, missing=missing)
    w = rng.random(E.n_partitions) + 0.2 if weighted else None
    E = E.with_weights(w)
    start = rng.integers(0, 3, size=E.n_samples)
    start[:3] = [0, 1, 2]
    res = kcc(E, 3, utility=name, p=p, init=start, n_jobs=1)
    ref_labels, ref_objective, ref_trace = reference_kcc.kcc_from(
        np.asarray(E.labels), E.weights, start, 3, family, normalized, p)
    ours = cclust.ConsensusResult.from_labels(ref_labels)
    assert np.array_equal(res.labels, ours.labels)
    assert res.extras["kmeans_objective"] == pytest.approx(ref_objective, rel=1e-9)
    assert np.allclose(res.extras["objective_trace"], ref_trace, rtol=1e-9)
    expected_gamma = reference_kcc.gamma(np.asarray(E.labels), E.weights, res.labels, family, normalized, p)
    assert res.objective == pytest.approx(expected_gamma, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name, family, normalized, p", UTILITIES, ids=UTILITY_IDS)
def test_objective_never_increases_and_threads_agree(name, family, normalized, p):
    rng = np.random.default_rng(5)
    E, _ = noisy_ensemble(rng, n=12000, r=20, k=4, missing=0.1, noise=0.4)
    one = kcc(E, 4, utility=name, p=p, n_init=3, random_state=3, n_jobs=1)
    two = kcc(E, 4, utility=name, p=p, n_init=3, random_state=3, n_jobs=2)
    assert np.array_equal(one.labels, two.labels)
    assert one.objective == two.objective
    assert np.array_equal(one.extras["objective_trace"], two.extras["objective_trace"])
    trace = one.extras["objective_trace"]
    assert (np.diff(trace) <= 1e-9 * np.abs(trace[:-1])).all()


def test_best_restart_is_kept_and_kmeans_plus_plus_works(rng):
    E, truth = noisy_ensemble(rng, n=90, r=15)
    res = kcc(E, 3, utility="uc", n_init=8, random_state=0)
    assert res.objective == pytest.approx(res.extras["objectives"].max())
    for trials in (None, 1, 3):
        plus = kcc(E, 3, utility="uc", init="k-means++", n_init=8, kmeanspp_trials=trials, random_state=0)
        assert plus.n_clusters == 3
        assert cclust.get("ari")(truth, plus.labels) > 0.8


def test_identical_partitions_come_back():
    truth = np.array([0, 0, 1, 1, 2, 2, 2, 1, 0, 2])
    E = Ensemble(np.column_stack([truth] * 5))
    for utility in ("uc", "uh", "nucos"):
        res = kcc(E, 3, utility=utility, random_state=0)
        assert cclust.get("ari")(truth, res.labels) == 1.0
        assert res.extras["partition_utilities"] == pytest.approx(np.full(5, res.extras["partition_utilities"][0]))


def test_iris_reaches_the_paper_for_every_utility():
    """Becerra Tomé, Tables 4/5: Rn ~0.73 on iris for every utility (100 RPS partitions, K_i in [2, 2K])."""
    X, y = load_iris()
    E = cclust.generate("kmeans", X, 3, n_partitions=100, k_range=(2, 6), random_state=0)
    ari = cclust.get("ari")
    for name, _, _, p in UTILITIES:
        res = cclust.consensus("kcc", E, 3, utility=name, p=p, random_state=0)
        assert ari(y, res.labels) > 0.6, name


def test_same_seed_same_labels():
    X, _ = load_iris()
    E = cclust.generate("kmeans", X, 3, n_partitions=30, random_state=1)
    a = kcc(E, 3, random_state=7)
    b = kcc(E, 3, random_state=7)
    assert np.array_equal(a.labels, b.labels)
    c = kcc(E, 3, random_state=np.random.default_rng(7))
    assert c.n_clusters == 3


class TestBadInput:
    E = Ensemble(np.array([[0, 1], [0, 1], [1, 0], [1, 1], [2, 0]]))

    @pytest.mark.parametrize("k", [1, 0, 6, 2.5], ids=["one", "zero", "above-n", "float"])
    def test_n_clusters(self, k):
        with pytest.raises(ValidationError, match="n_clusters"):
            kcc(self.E, k)

    def test_unknown_utility_lists_registered(self):
        with pytest.raises(UnknownNameError, match=r"unknown utility name 'ux'.*nuc, nucos, nuh, nulp, uc"):
            kcc(self.E, 2, utility="ux")

    @pytest.mark.parametrize("p", [None, 1.0, 0.5, float("nan")], ids=["missing", "one", "half", "nan"])
    def test_ulp_needs_p_above_one(self, p):
        with pytest.raises(ValidationError, match="p"):
            kcc(self.E, 2, utility="ulp", p=p)

    def test_p_for_other_utilities(self):
        with pytest.raises(ValidationError, match="takes no p"):
            kcc(self.E, 2, utility="uc", p=3)

    @pytest.mark.parametrize(
        "init, match",
        [([0, 1, 0], r"shape \(5,\)"), ([0, 1, 0, 1, 2], r"0\.\.1"), ([0, 1, 0, 1, -1], r"0\.\.1"),
         ("kmeans++", "init must be one of"), (np.array([0.5, 1, 0, 1, 0]), "integer")],
        ids=["wrong-length", "too-large", "negative", "unknown-string", "float-labels"],
    )
    def test_init(self, init, match):
        with pytest.raises(ValidationError, match=match):
            kcc(self.E, 2, init=init)

    def test_entirely_missing_partition(self):
        with pytest.raises(ValidationError, match=r"labels\[:, 1\] labels no object"):
            kcc(np.array([[0, -1], [1, -1], [1, -1]]), 2)

    @pytest.mark.parametrize("weights, match", [([1, -1], "non-negative"), ([1, np.nan], "NaN"), ([0, 0], "all zero")],
                             ids=["negative", "nan", "zero-sum"])
    def test_weights(self, weights, match):
        with pytest.raises(ValidationError, match=match):
            kcc(self.E.with_weights(weights), 2)

    @pytest.mark.parametrize("kw, match", [({"n_init": 0}, "n_init"), ({"max_iter": 0}, "max_iter"),
                                           ({"init": "k-means++", "kmeanspp_trials": 0}, "kmeanspp_trials"),
                                           ({"tol": -1.0}, "tol"), ({"n_jobs": 0}, "n_jobs")],
                             ids=["n_init", "max_iter", "kmeanspp_trials", "tol", "n_jobs"])
    def test_numeric_parameters(self, kw, match):
        with pytest.raises(ValidationError, match=match):
            kcc(self.E, 2, **kw)

    def test_does_not_mutate_the_callers_array(self):
        M = np.array([[0, 1], [0, 1], [1, 0], [1, 1], [2, 0]])
        before = M.copy()
        start = np.array([0, 0, 1, 1, 1])
        kcc(M, 2, init=start)
        assert np.array_equal(M, before) and start.tolist() == [0, 0, 1, 1, 1]


@pytest.mark.parametrize("name, family, normalized, p", UTILITIES, ids=UTILITY_IDS)
def test_gamma_offset_identity_on_complete_ensembles(rng, name, family, normalized, p):
    """Gamma = offset - objective / n for every utility (Bregman identity), so ranking restarts
    by it equals ranking by Gamma; the exact Gamma comes from the contingency tables."""
    E, _ = noisy_ensemble(rng, n=90, r=10)
    res = kcc(E, 3, utility=name, p=p, n_init=4, random_state=1, n_jobs=1)
    util = cclust.utilities.resolve(name, p)
    estimate = util.gamma_offset(E) - res.extras["kmeans_objective"] / E.n_samples
    assert estimate == pytest.approx(res.objective, rel=1e-9, abs=1e-12)
    exact = reference_kcc.gamma(np.asarray(E.labels), E.weights, res.labels, family, normalized, p)
    assert res.objective == pytest.approx(exact, rel=1e-9, abs=1e-12)


def test_verbose_draws_a_bar_over_restarts_and_changes_nothing(monkeypatch, capsys):
    E, _ = noisy_ensemble(np.random.default_rng(0))
    quiet = kcc(E, 3, n_init=4, random_state=0)
    assert capsys.readouterr().err == ""
    term = FakeTerminal()
    monkeypatch.setattr("sys.stderr", term)
    loud = kcc(E, 3, n_init=4, random_state=0, verbose=2)  # 2: bar left on screen
    text = term.getvalue()
    assert "kcc restarts" in text and "4/4" in text
    assert np.array_equal(loud.labels, quiet.labels) and loud.objective == quiet.objective


def test_bad_backend_is_refused():
    E, _ = noisy_ensemble(np.random.default_rng(0))
    with pytest.raises(ValidationError, match="backend must be one of"):
        kcc(E, 3, backend="ray")
    with pytest.raises(ValidationError, match="chunks only applies"):
        kcc(E, 3, chunks=4096)
