import math

import numpy as np
import pytest

import cclust
from cclust import ConsensusResult, Ensemble
from cclust.consensus_functions.gkcc import gkcc, greedy, n_candidates
from cclust.datasets import load_iris
from cclust.errors import ValidationError
from cclust.metrics import ari
from cclust.registry import method_info
from cclust.testing import check_generator
import reference_gkcc

def four_blobs(seed=0, size=15):
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0, 0], [4, 0, 0], [0, 4, 0], [3, 3, 3]], dtype=float)
    X = np.vstack([rng.normal(c, 1.0, size=(size, 3)) for c in centres])
    return X, np.repeat(np.arange(4), size)


def canonical(labels):
    return ConsensusResult.from_labels(labels).labels


@pytest.mark.parametrize("fusion", ["partitions", "augmented"])
@pytest.mark.parametrize("scaling", ["balanced", "raw"])
def test_matches_reference_generation_and_fusion(seed, scaling, fusion):
    X, _ = four_blobs(seed)
    res = gkcc(None, 4, X=X, n_partitions=9, random_state=seed, tol=0, max_iter=1000,
               scaling=scaling, fusion=fusion, n_jobs=1)
    partitions, winners, objectives, Z = reference_gkcc.greedy_generation(
        X, 4, res.extras["candidates"], scaling)
    E = res.extras["ensemble"]
    assert E.shape == (60, 9)
    assert E.n_clusters.tolist() == [2, 2, 2, 3, 3, 3, 4, 4, 4]
    for j, expected in enumerate(partitions):
        assert np.array_equal(canonical(E.labels[:, j]), canonical(expected)), f"partition {j}"
    for ours, ref in zip(res.extras["candidate_objectives"], objectives):
        assert np.allclose(ours, ref, rtol=1e-9)
    for ours, ref in zip(res.extras["winners"], winners):
        assert np.array_equal(ours, ref)
    if fusion == "partitions":
        final, objective = reference_gkcc.fuse_partitions(partitions, winners[-1], 4)
    else:
        final, objective, _ = reference_gkcc.kmeans_from_labels(Z, winners[-1], 4)
    assert np.array_equal(res.labels, canonical(final))
    assert res.extras["kmeans_objective"] == pytest.approx(objective, rel=1e-9)


def test_one_greedy_step_on_a_tiny_dataset():
    # Two steps on 8 points: the step k = 3 runs in [X, one-hot of the three k = 2 partitions].
    X = np.array([[0.0, 0.1], [0.3, 0.0], [0.1, 0.4], [5.0, 5.2], [5.3, 4.9], [4.8, 5.1],
                  [9.0, 0.2], [9.4, 0.1]])
    ens = greedy(X, 3, n_partitions=6, random_state=3, tol=0, n_jobs=1)
    res = gkcc(None, 3, X=X, n_partitions=6, random_state=3, tol=0, n_jobs=1)
    partitions, _, _, _ = reference_gkcc.greedy_generation(X, 3, res.extras["candidates"])
    assert [len(c) for c in res.extras["candidates"]] == [3, 3]
    for j in range(6):
        assert np.array_equal(canonical(ens.labels[:, j]), canonical(partitions[j]))
    assert ens == res.extras["ensemble"]


# The consensus kit runs once per method, in tests/test_registry.py (its n_clusters check asks
# for 2, K and K + 1 clusters); the generator's kit here with fewer partitions.
def test_conformance_kit_generator():
    check_generator("greedy", n_clusters=4, n_partitions=3)


def test_registered():
    assert cclust.get("gkcc") is gkcc
    assert cclust.get("greedy", kind="generator") is greedy
    assert method_info(gkcc).requires_X


def test_threads_give_identical_results():
    X, _ = four_blobs(1, size=60)
    one = gkcc(None, 4, X=X, random_state=7, n_jobs=1)
    two = gkcc(None, 4, X=X, random_state=7, n_jobs=2)
    assert np.array_equal(one.labels, two.labels)
    assert one.objective == two.objective
    assert one.extras["ensemble"] == two.extras["ensemble"]
    assert np.array_equal(one.extras["winner_objectives"], two.extras["winner_objectives"])
    for a, b in zip(one.extras["candidate_objectives"], two.extras["candidate_objectives"]):
        assert np.array_equal(a, b)
    assert greedy(X, 4, random_state=7, n_jobs=2) == one.extras["ensemble"]


def test_natural_count_and_step_structure():
    X, y = load_iris()
    res = gkcc(None, 3, X=X, random_state=0)
    E = res.extras["ensemble"]
    assert E.shape == (150, 2 * 59)
    assert E.n_clusters.tolist() == [2] * 59 + [3] * 59
    assert res.extras["winners"].shape == (2, 150)
    assert res.extras["n_candidates"].tolist() == [59, 59]
    for step, (objs, cands) in enumerate(zip(res.extras["candidate_objectives"], res.extras["candidates"])):
        assert objs.shape == (59,) and cands.shape == (59,)
        assert np.unique(X[cands], axis=0).shape[0] == 59  # distinct objects
        best = int(np.argmin(objs))
        assert res.extras["winner_objectives"][step] == objs[best]
        assert np.array_equal(res.extras["winners"][step], E.labels[:, 59 * step + best])
    assert ari(y, res.labels) > 0.6
    assert res.n_clusters == 3 and res.method == "gkcc"


def test_gkcc_fusion_is_kcc_from_the_last_winner():
    X, _ = four_blobs(2)
    res = gkcc(None, 4, X=X, n_partitions=12, random_state=0)
    kcc = cclust.get("kcc")(res.extras["ensemble"], 4, utility="uc", init=res.extras["winners"][-1], tol=1e-6)
    assert np.array_equal(res.labels, kcc.labels)
    assert res.objective == pytest.approx(kcc.objective, rel=1e-12)


@pytest.mark.parametrize("p, delta, expected", [(0.05, 0.95, 59), (0.1, 0.9, 22), (0.5, 0.5, 1), (0.01, 0.99, 459)])
def test_lemma_1_candidate_count(p, delta, expected):
    assert n_candidates(p, delta) == expected
    assert expected == max(1, math.ceil(round(math.log(1 - delta) / math.log(1 - p), 9)))


def test_p_and_delta_set_the_candidates_per_step():
    X, _ = four_blobs(0)
    assert greedy(X, 3, p=0.1, delta=0.9, random_state=0).shape == (60, 2 * 22)


def test_explicit_n_partitions_spread_over_steps():
    X, _ = four_blobs(0)
    E = greedy(X, 4, n_partitions=7, random_state=0)
    assert E.n_clusters.tolist() == [2, 2, 2, 3, 3, 4, 4]


def test_random_state_changes_only_the_sampling():
    X, _ = four_blobs(3)
    a = gkcc(None, 4, X=X, n_partitions=9, random_state=0)
    b = gkcc(None, 4, X=X, n_partitions=9, random_state=np.random.default_rng(0))
    assert np.array_equal(a.labels, b.labels)
    c = gkcc(None, 4, X=X, n_partitions=9, random_state=1)
    assert any(not np.array_equal(u, v) for u, v in zip(a.extras["candidates"], c.extras["candidates"]))


def test_given_partitions_join_space_and_fusion(rng):
    X, y = four_blobs(4)
    given = Ensemble(np.column_stack([y, np.where(rng.random(60) < 0.2, -1, y)]))
    res = gkcc(given, 4, X=X, n_partitions=6, random_state=0)
    assert res.extras["ensemble"].shape == (60, 6)  # the generated partitions only
    alone = gkcc(None, 4, X=X, n_partitions=6, random_state=0)
    assert ari(y, res.labels) > max(0.9, ari(y, alone.labels))
    # the candidates are sampled alike, but the given partitions change the space
    assert all(np.array_equal(u, v) for u, v in zip(res.extras["candidates"], alone.extras["candidates"]))
    assert not np.array_equal(res.extras["candidate_objectives"][0], alone.extras["candidate_objectives"][0])


def test_duplicate_rows_are_sampled_once():
    X, _ = four_blobs(5)
    X = np.vstack([X, X[:10], X[:10]])
    res = gkcc(None, 3, X=X, n_partitions=40, random_state=0)
    for cands in res.extras["candidates"]:
        assert np.unique(X[cands], axis=0).shape[0] == cands.shape[0] == 20


def test_fewer_distinct_objects_than_candidates_samples_all_and_says_so():
    X = np.repeat(np.arange(12, dtype=float).reshape(6, 2), 3, axis=0)  # 18 rows, 6 distinct
    E = greedy(X, 3, random_state=0)
    assert E.shape == (18, 12)
    res = gkcc(None, 3, X=X, random_state=0)
    assert res.extras["n_candidates"].tolist() == [6, 6]
    for cands in res.extras["candidates"]:
        assert sorted(np.unique(X[cands], axis=0)[:, 0].tolist()) == [0, 2, 4, 6, 8, 10]
    with pytest.raises(ValidationError, match="only 6 distinct objects to sample"):
        greedy(X, 3, n_partitions=14, random_state=0)
    with pytest.raises(ValidationError, match="fewer than n_clusters=7"):
        gkcc(None, 7, X=X, random_state=0)


def test_inputs_not_mutated():
    X, y = four_blobs(0)
    X.setflags(write=False)
    labels = np.column_stack([y, y])
    keep = (X.copy(), labels.copy())
    gkcc(labels, 4, X=X, n_partitions=6, random_state=0)
    greedy(X, 4, n_partitions=6, random_state=0)
    assert np.array_equal(X, keep[0]) and np.array_equal(labels, keep[1])


BAD = [
    (dict(n_clusters=1), "n_clusters must be an int in the range \\[2, 60\\]"),
    (dict(n_clusters=61), "n_clusters must be an int in the range \\[2, 60\\]"),
    (dict(X=np.zeros(60)), "X must be 2-D"),
    (dict(X=np.zeros((60, 2, 2))), "X must be 2-D"),
    (dict(X="nan"), "X contains NaN or infinity"),
    (dict(X="inf"), "X contains NaN or infinity"),
    (dict(p=0.0), "p must be a finite number in \\(0, 1\\)"),
    (dict(p=1.0), "p must be a finite number in \\(0, 1\\)"),
    (dict(p=float("nan")), "p must be a finite number in \\(0, 1\\)"),
    (dict(delta=0.0), "delta must be a finite number in \\(0, 1\\)"),
    (dict(delta=1.5), "delta must be a finite number in \\(0, 1\\)"),
    (dict(n_partitions=10, p=0.1), "pass either n_partitions or \\(p, delta\\)"),
    (dict(n_partitions=2), "n_partitions must be an int in the range \\[3, inf\\]"),
    (dict(scaling="standard"), "scaling must be one of \\['raw', 'balanced'\\]"),
    (dict(max_iter=0), "max_iter must be an int"),
]


def _call(fn, overrides):
    X, _ = four_blobs(0)
    kwargs = dict(overrides)
    n_clusters = kwargs.pop("n_clusters", 4)
    if isinstance(kwargs.get("X"), str):
        X = X.copy()
        X[3, 1] = np.nan if kwargs["X"] == "nan" else np.inf
        kwargs["X"] = X
    X = kwargs.pop("X", X)
    if fn is greedy:
        return greedy(X, n_clusters, random_state=0, **kwargs)
    return gkcc(None, n_clusters, X=X, random_state=0, **kwargs)


@pytest.mark.parametrize("fn", [gkcc, greedy], ids=["gkcc", "greedy"])
@pytest.mark.parametrize("overrides, match", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input(fn, overrides, match):
    with pytest.raises(ValidationError, match=match):
        _call(fn, overrides)


def test_gkcc_specific_bad_input():
    X, y = four_blobs(0)
    with pytest.raises(ValidationError, match="pass X="):
        gkcc(None, 4)
    with pytest.raises(ValidationError, match="same objects: got 59 and 60"):
        gkcc(np.column_stack([y[:59]]), 4, X=X)
    with pytest.raises(ValidationError, match="fusion must be one of"):
        gkcc(None, 4, X=X, fusion="dense")
    with pytest.raises(Exception, match="uq"):
        gkcc(None, 4, X=X, utility="uq")
