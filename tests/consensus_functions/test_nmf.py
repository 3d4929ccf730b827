"""Consensus NMF (Li, Ding & Jordan 2007) and the best-of selection (Strehl & Ghosh 2002)."""
import numpy as np
import pytest

import reference_nmf as ref
import cclust
from cclust import Ensemble
from cclust.consensus_functions.nmf import CoassociationOperator, nmf
from cclust.consensus_functions.best_of import best_of
from cclust.datasets import load_iris
from cclust.errors import UnknownNameError, ValidationError
from cclust.metrics import ari, consensus_score
from reference_voting import coassociation
from factories import noisy_refinements


def random_ensemble(seed, n=None, r=None, missing=False):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 30)) if n is None else n
    r = int(rng.integers(2, 7)) if r is None else r
    L = np.column_stack([rng.integers(0, int(rng.integers(2, 5)), n) for _ in range(r)])
    if missing:
        L[rng.random(L.shape) < 0.2] = -1
    return L


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("orthogonal", [False, True])
def test_fast_path_matches_dense_reference(seed, orthogonal):
    L = random_ensemble(seed)
    w = np.random.default_rng(seed + 100).random(L.shape[1]) + 0.1
    k = 2 + seed % 3
    res = nmf(cclust.Ensemble(L, weights=w), k, random_state=seed, n_init=3, max_iter=50, tol=1e-6,
              orthogonal=orthogonal, init="random")
    runs = ref.nmf_factorize(L, w, k, seed, 3, 50, 1e-6, orthogonal)
    finals = [t[-1] for _, _, t in runs]
    np.testing.assert_allclose(res.extras["objectives"], finals, rtol=1e-9, atol=1e-12)
    H, S, trace = runs[int(np.argmin(finals))]
    np.testing.assert_allclose(res.extras["objective_trace"], trace, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.extras["H"], H, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(res.extras["S"], S, rtol=1e-8, atol=1e-12)
    assert ari(res.labels, np.argmax(H, axis=1)) == 1.0


@pytest.mark.parametrize("seed", range(6))
def test_operator_products_and_norm(seed):
    L = random_ensemble(seed)
    E = Ensemble(L, weights=np.arange(1, L.shape[1] + 1))
    M = coassociation(L, E.weights)
    op = CoassociationOperator(E)
    H = np.random.default_rng(seed).random((L.shape[0], 3))
    np.testing.assert_allclose(op.matmul(H), M @ H, rtol=1e-12)
    assert op.sq_norm == pytest.approx(float(np.sum(M ** 2)), rel=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_objective_never_increases(seed):
    L = random_ensemble(seed, n=60, r=8)
    res = nmf(L, 3, random_state=seed, n_init=2, max_iter=200, tol=0.0, orthogonal=False)
    trace = res.extras["objective_trace"]
    assert trace.shape[0] == res.n_iter + 1
    assert np.all(np.diff(trace) <= 1e-12 * trace[0])
    assert res.objective == trace[-1] == res.extras["objectives"].min()


def test_default_is_the_papers_orthogonal_rule_and_survives_a_rise_in_j():
    """Li, Ding & Jordan (2007): H <- H * sqrt(M H S / (H H^T M H S)) by default. J can rise
    under it; the loop must go on past a rise (it once stopped there, after one update)."""
    rises = 0
    for seed in range(8):
        L = random_ensemble(seed, n=60, r=8)
        a = nmf(L, 3, random_state=seed, n_init=1, max_iter=60, tol=1e-9)
        b = nmf(L, 3, random_state=seed, n_init=1, max_iter=60, tol=1e-9, orthogonal=True)
        np.testing.assert_array_equal(a.extras["H"], b.extras["H"])
        trace = a.extras["objective_trace"]
        if (np.diff(trace) > 0).any():
            rises += 1
            assert a.n_iter > int(np.argmax(np.diff(trace) > 0)) + 1
    assert rises > 0


@pytest.mark.parametrize("seed", range(4))
def test_kmeans_start_then_reference_updates(seed):
    from cclust.consensus_functions import nmf as module

    L = random_ensemble(seed, n=40, r=6)
    res = nmf(L, 3, random_state=seed, n_init=2, max_iter=40, tol=0.0)
    # the fast code's starts: per restart, the random draws, then a KCC(uc) seed from the same stream
    rng = np.random.default_rng(seed)
    starts = []
    for _ in range(2):
        _, S = module.initial_factors(rng, 40, 3)
        H = module.kmeans_start(Ensemble(L).canonical(), 3, rng)
        assert np.all(np.sort(H, axis=1)[:, :-1] == 0.2) and np.all(H.max(axis=1) == 1.2)
        starts.append((H, S))
    runs = ref.nmf_factorize(L, np.ones(L.shape[1]), 3, seed, 2, 40, 0.0, starts=starts)
    finals = [t[-1] for _, _, t in runs]
    np.testing.assert_allclose(res.extras["objectives"], finals, rtol=1e-9)
    np.testing.assert_allclose(res.extras["H"], runs[int(np.argmin(finals))][0], rtol=1e-8, atol=1e-12)


def test_toy_two_blocks():
    L = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 1], [1, 1, 1], [1, 1, 1], [1, 1, 0]])
    res = nmf(L, 2, random_state=0)
    assert res.labels.tolist() == [0, 0, 0, 1, 1, 1]
    # A perfect block ensemble is reproduced exactly: J reaches ~0.
    res = nmf(np.array([[0, 0], [0, 0], [1, 1], [1, 1]]), 2, random_state=1)
    assert res.labels.tolist() == [0, 0, 1, 1]
    assert res.objective < 1e-6


def test_iris_quality_and_determinism():
    X, y = load_iris()
    E = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0)
    a = cclust.consensus("nmf", E, 3, random_state=5)
    b = cclust.consensus("nmf", E, 3, random_state=5)
    assert np.array_equal(a.labels, b.labels)
    assert ari(a.labels, y) > 0.5


def test_input_not_mutated():
    L = random_ensemble(3)
    before = L.copy()
    nmf(L, 2, random_state=0)
    assert np.array_equal(L, before)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_init": 0}, "n_init"), ({"max_iter": 0}, "max_iter"), ({"tol": -1.0}, "tol"),
    ({"tol": float("nan")}, "tol"), ({"init": "nope"}, "init"), ({"init": None}, "init"), ({"orthogonal": "yes"}, "orthogonal"), ({"n_init": 1.5}, "n_init"),
])
def test_nmf_bad_parameters(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        nmf(random_ensemble(0), 2, **kwargs)


def test_nmf_bad_n_clusters_and_missing():
    L = random_ensemble(1)
    with pytest.raises(ValidationError, match="n_clusters"):
        nmf(L, 1)
    with pytest.raises(ValidationError, match="n_clusters"):
        nmf(np.zeros((5, 2), dtype=int), 2)
    with pytest.raises(ValidationError, match="missing labels"):
        nmf(random_ensemble(1, missing=True), 2)


# ---------------------------------------------------------------- best-of

def test_best_of_picks_highest_score_and_reports_all():
    X, y = load_iris()
    E = cclust.generate("kmeans", X, 3, n_partitions=10, random_state=1)
    res = best_of(E, 3, methods=("kcc", "hbgf", "mcla", "nmf"), random_state=3)
    scores = res.extras["scores"]
    assert set(scores) == {"kcc", "hbgf", "mcla", "nmf"}
    for name in scores:   # each candidate called through the registry with the same seed
        alone = cclust.consensus(name, E, 3, random_state=3)
        assert scores[name] == pytest.approx(consensus_score(alone.labels, E, "nmi"), abs=1e-12)
    winner = res.extras["winner"]
    assert scores[winner] == max(scores.values()) == res.objective
    assert ari(res.labels, cclust.consensus(winner, E, 3, random_state=3).labels) == 1.0


def test_best_of_lower_is_better_metric():
    E = Ensemble(random_ensemble(4, n=40, r=6))
    res = best_of(E, 3, metric="vi", random_state=0)
    assert res.objective == min(res.extras["scores"].values())


def test_best_of_keeps_its_former_module_path():
    from cclust.consensus_functions import selection

    assert selection.best_of is best_of
    assert cclust.get("best-of") is best_of


def test_best_of_records_failures_and_skips():
    E = Ensemble(random_ensemble(5, n=30, r=5, missing=True))
    res = best_of(E, 2, methods=("nmf", "kcc", "wokmeans"), random_state=0)
    assert res.extras["winner"] == "kcc"
    assert "missing labels" in res.extras["failures"]["nmf"]
    assert "X=" in res.extras["skipped"]["wokmeans"]
    assert np.isnan(res.extras["scores"]["nmf"]) and np.isnan(res.extras["scores"]["wokmeans"])
    X = np.random.default_rng(0).normal(size=(30, 2))
    res = best_of(E, 2, methods=("kcc", "wokmeans"), X=X, random_state=0)
    assert np.isfinite(res.extras["scores"]["wokmeans"])


@pytest.mark.parametrize("kwargs, err, match", [
    ({"methods": ()}, ValidationError, "at least one"),
    ({"methods": "kcc"}, ValidationError, "methods"),
    ({"methods": ("kcc", "kcc")}, ValidationError, "repeated"),
    ({"methods": ("best-of",)}, ValidationError, "best-of"),
    ({"methods": ("no-such-method",)}, UnknownNameError, "no-such-method"),
    ({"metric": "nope"}, ValidationError, "metric"),
    ({"params": {"hbgf": {"x": 1}}, "methods": ("kcc",)}, ValidationError, "params"),
    ({"methods": ("nmf",), "n_clusters": 1}, ValidationError, "every candidate"),
])
def test_best_of_bad_input(kwargs, err, match):
    kwargs = dict(kwargs)
    k = kwargs.pop("n_clusters", 2)
    with pytest.raises(err, match=match):
        best_of(random_ensemble(2, n=20), k, **kwargs)


def test_memory_figure_is_within_half_again_of_the_measured_peak():
    """nmf asks for its factors (n x K arrays) before making any: the figure against the peak RSS
    the call adds, at two sizes. The products with the co-association read the stored label
    codes, so no one-hot matrix (48 bytes a label before) is held."""
    from cclust.testing import peak_memory

    problems = [(np.zeros((n, 1)), noisy_refinements(n, 50)[1]) for n in (20000, 40000)]
    peaks = peak_memory(problems, [("nmf", {"n_init": 2, "max_iter": 3})], n_clusters=8,
                        env={"CCLUST_MEMORY_BUDGET": str(2**40)})
    for (_, E), peak in zip(problems, peaks):
        assert "bytes" in peak["nmf"], peak
        if peak["nmf"]["source"] != "rss":
            pytest.skip("the resident-set high-water mark cannot be reset here")
        figure = peak["nmf"]["asked"]
        assert figure / 1.5 <= peak["nmf"]["bytes"] <= 1.5 * figure, (E.n_samples, peak)


def test_refuses_before_its_factors_and_never_forms_the_one_hot(monkeypatch):
    from cclust.errors import MemoryBudgetError

    E = noisy_refinements(2000, 10)[1]
    with pytest.raises(MemoryBudgetError, match=r"nmf's factors for 2000 objects and 8 clusters .* max_bytes="):
        nmf(E, 8, n_init=1, max_iter=2, random_state=0, max_bytes=10_000)
    # max_bytes, not the environment's budget, is what the call is checked against
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "100000")   # under the factors' 1.28 MB
    assert nmf(E, 8, n_init=1, max_iter=2, random_state=0, max_bytes=2**30).labels.shape == (2000,)
    assert not any(key[0] == "one_hot" for key in E.canonical()._cache if isinstance(key, tuple))


def test_the_kcc_start_under_its_former_name_warns_and_gives_the_same_result():
    """init="kcc" is the start that was called "kmeans" (the K-means of the one-hot rows, which
    the median methods call their KCC start); "kmeans" still works for one release, with a
    FutureWarning naming the caller's line."""
    import warnings

    L = random_ensemble(3, n=24, r=5)
    new = nmf(L, 3, init="kcc", n_init=2, random_state=0)
    assert np.array_equal(nmf(L, 3, n_init=2, random_state=0).labels, new.labels)   # the default
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = nmf(L, 3, init="kmeans", n_init=2, random_state=0)
    assert [w.category for w in caught] == [FutureWarning] and 'init="kcc"' in str(caught[0].message)
    assert caught[0].filename == __file__
    assert np.array_equal(old.labels, new.labels) and old.objective == new.objective
    with pytest.raises(ValidationError, match="init must be one of"):
        nmf(L, 3, init="k-means++")
