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
       threads=st.sampled_from([1, 2]), memo=st.sampled_from([None, 0]), seed_batch=st.sampled_from([None, 1, 3]))
def test_batched_equals_one_candidate_at_a_time(seed, n, d, r, k, nu, missing, dense_weight, weighted,
                                                max_iter, tol, threads, memo, seed_batch):
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
                                                        tol=tol, n_threads=threads, memo_bytes=memo,
                                                        seed_batch=seed_batch)
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


@pytest.mark.parametrize("threads", [1, 2])
def test_seed_batches_give_the_same_runs(threads):
    """The seed centres' costs computed a few candidates at a time (batches that end inside the
    candidates, one candidate, all at once): the same labels, objectives and n_iter."""
    from cclust._ext import _kmeans

    rng = np.random.default_rng(5)
    space = _space(rng, 300, 2, 4, True, 1.0, False)
    dense, cat = _centres(space, rng, 3)
    marks = np.full(300, -1, dtype=np.int32)
    marks[rng.choice(300, size=11, replace=False)] = np.arange(11, dtype=np.int32)
    seed_dense, seed_cat = _kmeans.centroids(*space._args(), marks, 11, 1)
    runs = [_engine.candidate_runs(space, dense, cat, seed_dense, seed_cat, max_iter=100, tol=0.0,
                                   n_threads=threads, seed_batch=b, stats=True) for b in (11, 1, 2, 4, 100)]
    for labels, objectives, n_iter, stats in runs[1:]:
        assert np.array_equal(labels, runs[0][0])
        assert objectives.tobytes() == runs[0][1].tobytes()
        assert np.array_equal(n_iter, runs[0][2])
        if threads == 1:    # with two threads which pass comes from the memo depends on timing
            assert np.array_equal(stats, runs[0][3])


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
    with pytest.raises(ValueError, match="seed_batch must be >= 1, got 0"):
        _engine.candidate_runs(space, dense, cat, X[2:3], np.zeros((1, 0)), max_iter=5, tol=0.0, n_threads=1,
                               seed_batch=0)
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


def _as_codes(labels, dtype):
    """int32 labels (-1 = missing) as compact codes of ``dtype`` (the type's largest value = missing)."""
    return np.ascontiguousarray(np.where(labels < 0, np.iinfo(dtype).max, labels).astype(dtype))


@pytest.mark.parametrize("width", [np.uint8, np.uint16], ids=["uint8", "uint16"])
@pytest.mark.parametrize("out", [np.uint8, np.uint16, np.int32], ids=["to-uint8", "to-uint16", "to-int32"])
@pytest.mark.parametrize("seed", range(4))
def test_batched_reads_and_writes_compact_codes(seed, width, out):
    """The candidate runs read the space's codes in place in any width and write their labels in
    the asked width: the same labels, objectives and n_iter as on the int32 labels."""
    rng = np.random.default_rng(seed)
    space = _space(rng, 60, 2, 5, True, 1.0, True)
    if width is np.uint16:      # one partition too wide for a byte: no one-byte copy is possible
        wide = rng.integers(0, 300, size=60).astype(np.int32)
        labels = np.column_stack([space.labels, wide])
        offsets = np.append(space.offsets, space.offsets[-1] + 300)
        space = _engine.MixedSpace(space.X, 1.0, np.ascontiguousarray(labels), offsets,
                                   np.append(space.weights, 0.7), FAMILIES["uc"], 0.0)
    compact = _engine.MixedSpace(space.X, space.dense_weight, _as_codes(space.labels, width), space.offsets,
                                 space.weights, space.family, space.p)
    dense, cat = _centres(space, rng, 3)
    from cclust._ext import _kmeans

    marks = np.full(60, -1, dtype=np.int32)
    marks[rng.choice(60, size=5, replace=False)] = np.arange(5, dtype=np.int32)
    seed_dense, seed_cat = _kmeans.centroids(*space._args(), marks, 5, 1)
    expected = _engine.candidate_runs(space, dense, cat, seed_dense, seed_cat, max_iter=100, tol=0.0, n_threads=2)
    got = _engine.candidate_runs(compact, dense, cat, seed_dense, seed_cat, max_iter=100, tol=0.0, n_threads=2,
                                 label_dtype=out)
    assert got[0].dtype == out
    assert np.array_equal(got[0].astype(np.int32), expected[0])
    assert got[1].tobytes() == expected[1].tobytes()
    assert np.array_equal(got[2], expected[2])


def test_batched_refuses_clusters_its_codes_cannot_hold():
    X = np.arange(600, dtype=float).reshape(300, 2)
    space = _engine.MixedSpace.dense(X)
    k = 255     # 255 shared centres plus a seed: 256 clusters, one more than uint8 codes hold
    with pytest.raises(ValueError, match="do not fit in codes of 1 byte"):
        _engine.candidate_runs(space, X[:k], np.zeros((k, 0)), X[k:k + 1], np.zeros((1, 0)), max_iter=1, tol=0.0,
                               n_threads=1, label_dtype=np.uint8)
    labels = _engine.candidate_runs(space, X[:k], np.zeros((k, 0)), X[k:k + 1], np.zeros((1, 0)), max_iter=1,
                                    tol=0.0, n_threads=1, label_dtype=np.uint16)[0]
    assert labels.dtype == np.uint16 and labels.max() == k


def _int32_generation(X, given, K, counts, rng):
    """GKCC's generation as it was written before the compact codes: every step's space stacks
    int32 columns afresh (the given ones from ``Ensemble.labels``), distinct objects by a float
    copy of the given labels, candidates by ``assign`` + ``lloyd`` (raw scaling)."""
    from cclust._ext import _kmeans

    n = X.shape[0]
    keys = X if given is None else np.hstack([X, given.labels.astype(np.float64)])
    row_ids = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)
    columns = [] if given is None else [given.labels[:, j].copy() for j in range(given.n_partitions)]
    sizes = [] if given is None else given.n_clusters.tolist()
    weights = [] if given is None else list(given.weights * given.n_partitions)

    def space():
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        labels = np.column_stack(columns).astype(np.int32) if columns else np.empty((n, 0), dtype=np.int32)
        return _engine.MixedSpace(X, 1.0, np.ascontiguousarray(labels), offsets, np.array(weights, dtype=float),
                                  FAMILIES["uc"], 0.0)

    current = space()
    dense_c, cat_c = _kmeans.centroids(*current._args(), np.zeros(n, dtype=np.int32), 1, 1)
    generated, winners = [], []
    for step, k in enumerate(range(2, K + 1)):
        chosen = gkcc_module._distinct_order(row_ids, rng)[:counts[step]]
        marks = np.full(n, -1, dtype=np.int32)
        marks[chosen] = np.arange(chosen.shape[0], dtype=np.int32)
        seed_dense, seed_cat = _kmeans.centroids(*current._args(), marks, chosen.shape[0], 1)
        runs = [gkcc_module._candidate_run(current, np.vstack([dense_c, seed_dense[j:j + 1]]),
                                           np.vstack([cat_c, seed_cat[j:j + 1]]), 100, 1e-6, 1)
                for j in range(chosen.shape[0])]
        best = int(np.argmin([r.objective for r in runs]))
        step_columns = [r.labels.astype(np.int32) for r in runs]
        generated.extend(step_columns)
        winners.append(step_columns[best])
        columns.extend(step_columns)
        sizes.extend([k] * len(runs))
        weights.extend([1.0] * len(runs))
        current = space()
        if k < K:
            refined = _engine.lloyd(current, step_columns[best], k, max_iter=100, tol=1e-6, n_threads=1)
            dense_c, cat_c = refined.dense_centers, refined.cat_centers
    return np.column_stack(generated), np.vstack(winners)


@pytest.mark.parametrize("block_rows", [None, 7], ids=["one-block", "blocks-of-7"])
@pytest.mark.parametrize("given_kind", ["none", "narrow", "missing", "wide"])
def test_gkcc_on_compact_codes_equals_an_int32_generation(monkeypatch, given_kind, block_rows):
    """The whole of gkcc (one code buffer widened in place, block by block, given codes converted
    to its width, distinct objects from the given ensemble's identical rows) against the int32
    generation."""
    if block_rows is not None:
        monkeypatch.setattr(gkcc_module, "_BLOCK_ROWS", block_rows)
    from cclust import ConsensusResult, Ensemble
    from cclust.utilities import resolve

    rng = np.random.default_rng(7)
    group = rng.integers(0, 25, size=400)       # 25 distinct points, each repeated about 16 times
    X = rng.normal(size=(25, 2))[group]
    given = None
    if given_kind != "none":         # labels that mostly keep the repeated rows alike
        cols = [group % 4, group // 7, (group % 3 + (np.arange(400) < 20)) % 3]
        if given_kind == "missing":
            cols[0] = np.where(rng.random(400) < 0.05, -1, cols[0])
        if given_kind == "wide":     # 300 clusters: the buffer holds uint16 codes
            cols.append(np.where(np.arange(400) < 300, np.arange(400), group))
        given = Ensemble(np.column_stack(cols), weights=rng.random(len(cols)) + 0.1)
    res = gkcc(given, 5, X=X, n_partitions=40, random_state=3, n_jobs=2)
    counts = res.extras["n_candidates"].tolist()
    generated, winners = _int32_generation(X, given, 5, counts, np.random.default_rng(3))
    assert np.array_equal(res.extras["ensemble"].labels, generated)
    assert np.array_equal(res.extras["winners"], winners)
    fused = Ensemble(generated) if given is None else Ensemble(
        np.hstack([given.labels, generated]),
        weights=np.concatenate([given.weights * given.n_partitions, np.ones(generated.shape[1])]))
    util = resolve("uc")
    run = _engine.lloyd(_engine.MixedSpace.categorical(fused, util), winners[-1], 5, max_iter=100, tol=1e-6,
                        n_threads=1)
    assert np.array_equal(res.labels, ConsensusResult.from_labels(run.labels).labels)
    assert res.objective == util.consensus_value(fused, run.labels, 5)
