"""GKCC's batched candidate runs (issue 22) against the one-candidate-at-a-time path they replaced.

``_engine.candidate_runs`` runs every candidate of a greedy step (Li & Liu 2018, Algorithm 1) in
one compiled call, skipping costs that bounds prove irrelevant and passes another candidate
already ran; each candidate must still be bit for bit ``assign`` + ``lloyd`` (the reference,
``gkcc._candidate_run``). Inputs on small integer grids make exact ties between costs common.
"""
import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

from cclust import _engine
from cclust.base import FAMILIES
from cclust.consensus_functions import gkcc as gkcc_module
from cclust.consensus_functions.gkcc import gkcc


def _space(rng, n, d, r, missing, dense_weight, weighted):
    X = rng.integers(0, 3, size=(n, d)).astype(np.float64)
    sizes = rng.integers(1, 4, size=r)
    labels = np.column_stack([rng.integers(0, s, size=n) for s in sizes]) if r else np.empty((n, 0), int)
    if missing and r:
        labels = np.where(rng.random(labels.shape) < 0.2, -1, labels)
    offsets = np.zeros(r + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    weights = rng.random(r) + 0.5 if weighted else np.ones(r)
    return _engine.MixedSpace(X, dense_weight, np.ascontiguousarray(labels, dtype=np.int32), offsets,
                              np.ascontiguousarray(weights), FAMILIES["uc"], 0.0)


def _centres(space, rng, k, n_threads=1):
    """Centroids of k random groups (as gkcc's refined centres) and, as seeds, of single objects,
    some of them a copy of a shared centre (its candidate starts with an empty cluster)."""
    from cclust._ext import _kmeans

    n = space.n
    groups = rng.integers(0, k, size=n).astype(np.int32)
    groups[:k] = np.arange(k)
    dense, cat = _kmeans.centroids(*space._args(), groups, k, n_threads)
    return dense, cat


def _reference(space, dense, cat, seed_dense, seed_cat, max_iter, tol):
    runs = [gkcc_module._candidate_run(space, np.vstack([dense, seed_dense[j:j + 1]]),
                                       np.vstack([cat, seed_cat[j:j + 1]]), max_iter, tol, 1)
            for j in range(seed_dense.shape[0])]
    return (np.array([r.labels for r in runs]), np.array([r.objective for r in runs]),
            np.array([r.n_iter for r in runs]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(6, 70), d=st.integers(0, 3), r=st.integers(0, 6),
       k=st.integers(1, 5), nu=st.integers(1, 7), missing=st.booleans(),
       dense_weight=st.sampled_from([1.0, 0.3, 2.5]), weighted=st.booleans(),
       max_iter=st.sampled_from([1, 2, 100]), tol=st.sampled_from([0.0, 1e-6, 0.05]),
       threads=st.sampled_from([1, 2]), memo=st.sampled_from([None, 0]))
def test_batched_equals_one_candidate_at_a_time(seed, n, d, r, k, nu, missing, dense_weight, weighted,
                                                max_iter, tol, threads, memo):
    if d == 0 and r == 0:
        d = 1
    rng = np.random.default_rng(seed)
    space = _space(rng, n, d, r, missing, dense_weight, weighted)
    k = min(k, n - 1)
    dense, cat = _centres(space, rng, k)
    from cclust._ext import _kmeans

    marks = np.full(n, -1, dtype=np.int32)
    chosen = rng.choice(n, size=min(nu, n), replace=False)
    marks[chosen] = np.arange(chosen.shape[0], dtype=np.int32)
    seed_dense, seed_cat = _kmeans.centroids(*space._args(), marks, chosen.shape[0], 1)
    if chosen.shape[0] > 1:  # a seed equal to a shared centre: its cluster starts empty
        seed_dense[0], seed_cat[0] = dense[0], cat[0]
    labels, objectives, n_iter = _engine.candidate_runs(space, dense, cat, seed_dense, seed_cat, max_iter=max_iter,
                                                        tol=tol, n_threads=threads, memo_bytes=memo)
    ref_labels, ref_objectives, ref_n_iter = _reference(space, dense, cat, seed_dense, seed_cat, max_iter, tol)
    assert np.array_equal(labels, ref_labels)
    assert objectives.tobytes() == ref_objectives.tobytes()  # bit for bit
    assert np.array_equal(n_iter, ref_n_iter)


def test_stats_count_skipped_costs_and_memo_passes():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.3, size=(80, 2)) for c in ([0, 0], [5, 0], [0, 5], [5, 5])])
    space = _engine.MixedSpace.dense(X)
    dense, cat = _centres(space, rng, 3)
    seed_dense = np.repeat(X[:1], 6, axis=0)  # six identical seeds: five passes runs from the memo
    seed_cat = np.zeros((6, 0))
    labels, objectives, n_iter, stats = _engine.candidate_runs(space, dense, cat, seed_dense, seed_cat, max_iter=100,
                                                               tol=0.0, n_threads=1, stats=True)
    computed, skipped, passes, from_memo, full = stats.tolist()
    assert full == X.shape[0] * 4
    assert passes == (n_iter + 1).sum()
    assert from_memo == passes - (n_iter[0] + 1)  # every candidate after the first is a replay
    assert skipped > 0 and computed < passes * full
    assert (labels == labels[0]).all() and (objectives == objectives[0]).all()
    none = _engine.candidate_runs(space, dense, cat, seed_dense, seed_cat, max_iter=100, tol=0.0, n_threads=1,
                                  memo_bytes=0, stats=True)[3]
    assert none[3] == 0 and none[2] == passes


def test_refuses_what_it_does_not_model():
    X = np.arange(12, dtype=float).reshape(6, 2)
    space = _engine.MixedSpace.dense(X)
    dense, cat = X[:2].copy(), np.zeros((2, 0))
    with pytest.raises(ValueError, match="unweighted rows only"):
        _engine.candidate_runs(space.with_weights(np.ones(6)), dense, cat, X[2:3], np.zeros((1, 0)), max_iter=5,
                               tol=0.0, n_threads=1)
    uh = _engine.MixedSpace(X, 1.0, np.zeros((6, 1), dtype=np.int32), np.array([0, 1]), np.ones(1), FAMILIES["uh"],
                            0.0)
    with pytest.raises(ValueError, match="squared Euclidean distance"):
        _engine.candidate_runs(uh, dense, np.ones((2, 1)), X[2:3], np.ones((1, 1)), max_iter=5, tol=0.0,
                               n_threads=1)
    with pytest.raises(ValueError, match="must be <= n"):
        _engine.candidate_runs(space, np.repeat(dense, 3, axis=0), np.zeros((6, 0)), X[:1], np.zeros((1, 0)),
                               max_iter=5, tol=0.0, n_threads=1)
    with pytest.raises(ValueError, match="dense_centers must be finite"):
        _engine.candidate_runs(space, dense, cat, np.full((1, 2), np.nan), np.zeros((1, 0)), max_iter=5, tol=0.0,
                               n_threads=1)


def _grid(seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 4, size=(90, 2)).astype(float)  # many duplicate rows and tied costs


@pytest.mark.parametrize("scaling", ["raw", "balanced"])
@pytest.mark.parametrize("data", ["grid", "blobs"])
def test_gkcc_batched_equals_reference_path(monkeypatch, scaling, data):
    if data == "grid":
        X = _grid(3)
    else:
        rng = np.random.default_rng(1)
        X = np.vstack([rng.normal(c, 1.0, size=(40, 3)) for c in ([0, 0, 0], [4, 0, 0], [0, 4, 0], [3, 3, 3])])
    given = np.column_stack([np.arange(X.shape[0]) % 3, np.where(np.arange(X.shape[0]) % 5 == 0, -1, 1)])
    for ens in (None, given):
        results = {}
        for step in ("reference", "batched"):
            monkeypatch.setattr(gkcc_module, "_STEP", step)
            results[step] = [gkcc(ens, 4, X=X, n_partitions=15, scaling=scaling, random_state=s, n_jobs=j)
                             for s, j in ((0, 1), (1, 2))]
        for ref, new in zip(results["reference"], results["batched"]):
            assert np.array_equal(ref.labels, new.labels)
            assert ref.objective == new.objective
            assert ref.extras["ensemble"] == new.extras["ensemble"]
            assert np.array_equal(ref.extras["winners"], new.extras["winners"])
            for a, b in zip(ref.extras["candidate_objectives"], new.extras["candidate_objectives"]):
                assert a.tobytes() == b.tobytes()
            for a, b in zip(ref.extras["candidate_n_iter"], new.extras["candidate_n_iter"]):
                assert np.array_equal(a, b)
