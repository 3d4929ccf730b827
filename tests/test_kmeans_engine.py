"""The compiled K-means engine (cclust._ext._kmeans) against the NumPy reference and by hand."""
import numpy as np
import pytest

from cclust._ext import _kmeans as km
from reference_kmeans import UC, UCOS, UH, ULP
from reference_kmeans import assign as ref_assign
from reference_kmeans import centroids as ref_centroids
from reference_kmeans import kmeanspp as ref_kmeanspp
from reference_kmeans import lloyd as ref_lloyd


def make_rows(rng, n, *, r=0, d=0, n_groups=4, k_max=6, missing=0.0, distance=UC, p=2.0,
              dense_weight=1.0):
    """Rows with some cluster structure: each partition is a noisy relabelling of hidden groups,
    X is Gaussian blobs around the same groups."""
    groups = rng.integers(0, n_groups, n)
    ks = rng.integers(2, k_max + 1, r)
    offsets = np.concatenate([[0], np.cumsum(ks)]).astype(np.int64)
    labels = np.empty((n, r), dtype=np.int32)
    for i, k_i in enumerate(ks):
        image = rng.integers(0, k_i, n_groups)
        noise = rng.random(n) < 0.4
        labels[:, i] = np.where(noise, rng.integers(0, k_i, n), image[groups])
    labels[rng.random((n, r)) < missing] = -1
    weights = rng.random(r) + 0.1
    weights /= weights.sum() if r else 1.0
    X = np.ascontiguousarray(rng.normal(size=(n_groups, d))[groups] * 2 + rng.normal(size=(n, d)))
    return (X, dense_weight, labels, offsets, weights, distance, p)


def bitwise_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


CASES = {
    "uc": dict(r=6, distance=UC),
    "uh": dict(r=6, distance=UH),
    "ucos": dict(r=6, distance=UCOS),
    "ulp-p2": dict(r=6, distance=ULP, p=2.0),
    "ulp-p5": dict(r=6, distance=ULP, p=5.0),
    "ulp-p8": dict(r=6, distance=ULP, p=8.0),
    "uc-complete": dict(r=6, distance=UC, missing=0.0),
    "dense-only": dict(d=3),
    "mixed-uc": dict(r=5, d=2, distance=UC, dense_weight=0.3),
    "mixed-uh": dict(r=5, d=2, distance=UH, dense_weight=0.3),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_lloyd_matches_reference(case, rng):
    rows = make_rows(rng, 120, **{"missing": 0.3, **CASES[case]})
    n_clusters = 4
    init = rng.integers(0, n_clusters, 120).astype(np.int32)
    got = km.lloyd(*rows, init, n_clusters, 50, 0.0, 1)
    want = ref_lloyd(*rows, init, n_clusters, 50, 0.0)
    labels, trace, n_iter, converged, objective, dense, cat = got
    np.testing.assert_array_equal(labels, want[0])
    np.testing.assert_allclose(trace, want[1], rtol=1e-9, atol=0)
    assert (n_iter, converged) == (want[2], want[3])
    assert objective == pytest.approx(want[4], rel=1e-9)
    np.testing.assert_allclose(dense, want[5], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cat, want[6], rtol=1e-12, atol=0)
    assert np.all(np.diff(trace) <= 0)
    assert trace[-1] == objective
    assert n_iter == len(trace) - 1


@pytest.mark.parametrize("tol", [1e-3, 0.05], ids=["tol1e-3", "tol5e-2"])
def test_lloyd_tolerance_stop_matches_reference(tol, rng):
    rows = make_rows(rng, 150, r=8, missing=0.2)
    init = rng.integers(0, 5, 150).astype(np.int32)
    got = km.lloyd(*rows, init, 5, 50, tol, 1)
    want = ref_lloyd(*rows, init, 5, 50, tol)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-9)
    assert got[2:4] == want[2:4]


def test_lloyd_max_iter_stops_unconverged(rng):
    rows = make_rows(rng, 300, r=10, n_groups=8, missing=0.2)
    init = rng.integers(0, 8, 300).astype(np.int32)
    full = km.lloyd(*rows, init, 8, 100, 0.0, 1)
    assert full[2] >= 2, "the data must need a few iterations for this check"
    labels, trace, n_iter, converged, objective, _, _ = km.lloyd(*rows, init, 8, 1, 0.0, 1)
    assert (n_iter, converged, len(trace)) == (1, False, 2)
    np.testing.assert_array_equal(trace, full[1][:2])
    zero = km.lloyd(*rows, init, 8, 0, 0.0, 1)
    assert (zero[2], zero[3]) == (0, False)
    np.testing.assert_array_equal(zero[0], init)


def test_lloyd_result_is_self_consistent(rng):
    """Returned centres are the centroids of the returned labels; objective is their cost."""
    rows = make_rows(rng, 500, r=7, d=2, missing=0.3, distance=UCOS, dense_weight=0.5)
    init = rng.integers(0, 5, 500).astype(np.int32)
    labels, trace, _, _, objective, dense, cat = km.lloyd(*rows, init, 5, 100, 1e-4, 2)
    dense2, cat2 = km.centroids(*rows, labels, 5, 1)
    assert bitwise_equal(dense, dense2) and bitwise_equal(cat, cat2)
    costs, total = km.objective(*rows, dense, cat, labels, 1)
    assert total == objective
    assert np.all(np.bincount(labels, minlength=5) > 0)


def test_single_cluster_and_thread_counts_below_one(rng):
    rows = make_rows(rng, 50, r=3, d=2, missing=0.2)
    out = km.lloyd(*rows, np.zeros(50, dtype=np.int32), 1, 10, 0.0, 0)
    assert (out[2], out[3]) == (0, True)
    np.testing.assert_array_equal(out[0], 0)
    np.testing.assert_allclose(out[5][0], rows[0].mean(axis=0), rtol=1e-12)
    assert km.kmeanspp(*rows, 1, 7, np.empty((0, 3)), -4).tolist() == [7]


def test_lloyd_does_not_write_its_inputs(rng):
    rows = make_rows(rng, 100, r=4, d=2, missing=0.2)
    init = rng.integers(0, 3, 100).astype(np.int32)
    before = [np.copy(a) for a in (rows[0], rows[2], rows[3], rows[4], init)]
    km.lloyd(*rows, init, 3, 20, 0.0, 1)
    for old, new in zip(before, (rows[0], rows[2], rows[3], rows[4], init)):
        assert bitwise_equal(old, new)


def test_read_only_inputs_are_accepted(rng):
    rows = make_rows(rng, 60, r=3, d=2)
    for a in (rows[0], rows[2], rows[3], rows[4]):
        a.flags.writeable = False
    init = rng.integers(0, 3, 60).astype(np.int32)
    init.flags.writeable = False
    km.lloyd(*rows, init, 3, 20, 0.0, 1)


@pytest.mark.parametrize("distance", [UC, UH, UCOS, ULP], ids=["uc", "uh", "ucos", "ulp"])
def test_identical_for_any_thread_count(distance, rng):
    n = 20_000  # five chunks of kChunk = 4096
    rows = make_rows(rng, n, r=12, d=3, n_groups=6, missing=0.2, distance=distance, p=3.0,
                     dense_weight=0.2)
    init = rng.integers(0, 6, n).astype(np.int32)
    one = km.lloyd(*rows, init, 6, 30, 0.0, 1)
    two = km.lloyd(*rows, init, 6, 30, 0.0, 2)
    three = km.lloyd(*rows, init, 6, 30, 0.0, 3)
    for a, b, c in zip(one, two, three):
        if isinstance(a, np.ndarray):
            assert bitwise_equal(a, b) and bitwise_equal(a, c)
        else:
            assert a == b == c
    assert np.all(np.diff(one[1]) <= 0)
    dense, cat = one[5], one[6]
    assign_one = km.assign(*rows, dense, cat, 1)
    assign_two = km.assign(*rows, dense, cat, 2)
    assert all(bitwise_equal(a, b) for a, b in zip(assign_one[:2], assign_two[:2]))
    assert assign_one[2] == assign_two[2]
    uniforms = rng.random((5, 4))
    assert bitwise_equal(km.kmeanspp(*rows, 6, 17, uniforms, 1),
                         km.kmeanspp(*rows, 6, 17, uniforms, 2))


@pytest.mark.parametrize("kind", ["categorical", "dense", "mixed"])
def test_assign_matches_reference(kind, rng):
    shape = {"categorical": dict(r=6), "dense": dict(d=3), "mixed": dict(r=4, d=2)}[kind]
    for distance, p in [(UC, 2.0), (UH, 2.0), (UCOS, 2.0), (ULP, 4.0)]:
        rows = make_rows(rng, 80, missing=0.3, distance=distance, p=p, **shape)
        n_clusters = 5
        dense = rng.normal(size=(n_clusters, rows[0].shape[1]))
        # Arbitrary non-negative blocks, some all zero: assign reads them as given.
        cat = rng.random((n_clusters, int(rows[3][-1]))) * (rng.random((n_clusters, 1)) < 0.8)
        labels, costs, total = km.assign(*rows, dense, cat, 1)
        want_labels, want_costs, want_total = ref_assign(*rows, dense, cat)
        np.testing.assert_array_equal(labels, want_labels)
        np.testing.assert_allclose(costs, want_costs, rtol=1e-12, atol=1e-13)
        assert total == pytest.approx(want_total, rel=1e-12)


def test_centroids_match_reference_with_fallbacks(rng):
    rows = make_rows(rng, 50, r=4, d=2, missing=0.5)
    labels = rows[2]
    labels[:, 2] = -1  # no object labelled in partition 2: its blocks are all zero
    assignment = rng.integers(0, 4, 50).astype(np.int32)
    assignment[assignment == 3] = -1  # cluster 3 empty: whole-data centre and P_i
    members0 = np.flatnonzero(assignment == 0)
    labels[members0, 1] = -1  # cluster 0 has no member labelled in 1: gets P_1
    dense, cat = km.centroids(*rows, assignment, 4, 1)
    want_dense, want_cat = ref_centroids(*rows, assignment, 4)
    np.testing.assert_allclose(dense, want_dense, rtol=1e-12)
    np.testing.assert_array_equal(cat, want_cat)
    block1 = slice(rows[3][1], rows[3][2])
    p_1 = np.bincount(labels[labels[:, 1] >= 0, 1], minlength=block1.stop - block1.start)
    np.testing.assert_allclose(cat[0, block1], p_1 / p_1.sum(), rtol=1e-15)
    assert np.all(cat[:, rows[3][2]:rows[3][3]] == 0)
    np.testing.assert_allclose(dense[3], rows[0].mean(axis=0), rtol=1e-12)


def test_hand_computed_uc_toy():
    """6 objects, pi_1 = [0,0,0,1,1,1], pi_2 = [0,0,1,1,2,2], weights 1, K = 2, Uc.

    Start [0,1,0,1,0,1]: cluster 0 = {0,2,4}, cluster 1 = {1,3,5}.
      m_{0,1} = (2/3, 1/3), m_{1,1} = (1/3, 2/3), ||.||^2 = 5/9; m_{k,2} = (1/3,1/3,1/3), 1/3.
      pi_1 term 1 - 2 m[l] + ||m||^2: own-majority label 2/9, other 8/9; pi_2 term 2/3 always.
      costs to current: 8/9, 14/9, 8/9, 8/9, 14/9, 8/9 -> objective 60/9 = 20/3;
      best: [0,0,0,1,1,1] (objects 1 and 4 move).
    Then cluster 0 = {0,1,2}: m_{0,1} = (1,0), m_{0,2} = (2/3,1/3,0), ||m_{0,2}||^2 = 5/9;
      cluster 1 = {3,4,5}: m_{1,1} = (0,1), m_{1,2} = (0,1/3,2/3).
      pi_1 term 0 to own cluster, 2 to the other; pi_2 term 2/9, 8/9, 8/9, 2/9 for the
      labels (0, 1 | 1, 2) to their own cluster -> costs 2/9, 2/9, 8/9, 8/9, 2/9, 2/9,
      objective 24/9 = 8/3; nobody moves.
    """
    labels = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 2], [1, 2]], dtype=np.int32)
    rows = (np.empty((6, 0)), 1.0, labels, np.array([0, 2, 5], dtype=np.int64),
            np.ones(2), UC, 2.0)
    init = np.array([0, 1, 0, 1, 0, 1], dtype=np.int32)
    out, trace, n_iter, converged, objective, dense, cat = km.lloyd(*rows, init, 2, 10, 0.0, 1)
    np.testing.assert_array_equal(out, [0, 0, 0, 1, 1, 1])
    assert (n_iter, converged) == (1, True)
    np.testing.assert_allclose(trace, [20 / 3, 8 / 3], rtol=1e-15)
    assert objective == pytest.approx(8 / 3, rel=1e-15)
    np.testing.assert_allclose(cat, [[1, 0, 2 / 3, 1 / 3, 0], [0, 1, 0, 1 / 3, 2 / 3]],
                               rtol=1e-15)
    assert dense.shape == (2, 0)
    costs, total = km.objective(*rows, dense, cat, out, 1)
    np.testing.assert_allclose(costs, [2 / 9, 2 / 9, 8 / 9, 8 / 9, 2 / 9, 2 / 9], rtol=1e-15)


def test_empty_cluster_mid_run_is_reseeded_by_hand():
    """Points 0,1,2,10,11,12, K = 3, start [0,1,2,0,1,2]: centres 5, 6, 7, objective 150.

    Every object prefers centre 5 (the low three) or 7 (the high three), so cluster 1 empties.
    Costs to the new clusters' old centres: 25, 16, 9, 9, 16, 25 -> objects 0 and 5 tie at 25,
    the lowest index (0) re-seeds cluster 1: labels [1,0,0,2,2,2], centres 1.5, 0, 11,
    objective 0.25 + 0.25 + 0 + 1 + 0 + 1 = 2.5, then stable.
    """
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    rows = (X, 1.0, np.empty((6, 0), dtype=np.int32), np.zeros(1, dtype=np.int64),
            np.empty(0), UC, 2.0)
    init = np.array([0, 1, 2, 0, 1, 2], dtype=np.int32)
    out, trace, n_iter, converged, objective, dense, cat = km.lloyd(*rows, init, 3, 10, 0.0, 1)
    np.testing.assert_array_equal(out, [1, 0, 0, 2, 2, 2])
    np.testing.assert_array_equal(trace, [150.0, 2.5])
    np.testing.assert_array_equal(dense[:, 0], [1.5, 0.0, 11.0])
    assert (n_iter, converged, objective) == (1, True, 2.5)
    want = ref_lloyd(*rows, init, 3, 10, 0.0)
    np.testing.assert_array_equal(want[0], out)


@pytest.mark.parametrize("kind", ["categorical", "dense", "mixed"])
def test_initial_empty_clusters_are_reseeded(kind, rng):
    shape = {"categorical": dict(r=6), "dense": dict(d=3), "mixed": dict(r=4, d=2)}[kind]
    rows = make_rows(rng, 100, missing=0.2, **shape)
    init = rng.integers(0, 2, 100).astype(np.int32)  # clusters 2..5 empty
    got = km.lloyd(*rows, init, 6, 50, 0.0, 1)
    assert np.all(np.bincount(got[0], minlength=6) > 0)
    assert np.all(np.diff(got[1]) <= 0)
    want = ref_lloyd(*rows, init, 6, 50, 0.0)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-9)


def test_duplicate_objects_keep_clusters_non_empty():
    """Only two distinct rows but K = 4: re-seeding still yields four non-empty clusters."""
    labels = np.array([[0, 1]] * 5 + [[1, 0]] * 5, dtype=np.int32)
    rows = (np.empty((10, 0)), 1.0, labels, np.array([0, 2, 4], dtype=np.int64),
            np.array([0.5, 0.5]), UC, 2.0)
    out = km.lloyd(*rows, np.zeros(10, dtype=np.int32), 4, 20, 0.0, 1)
    assert np.all(np.bincount(out[0], minlength=4) > 0)
    assert np.all(np.diff(out[1]) <= 0)
    seeds = km.kmeanspp(*rows, 4, 0, np.full((3, 2), 0.5), 1)
    assert len(set(seeds.tolist())) == 4


@pytest.mark.parametrize("kind", ["categorical", "dense", "mixed"])
def test_kmeanspp_matches_reference(kind, rng):
    shape = {"categorical": dict(r=6), "dense": dict(d=3), "mixed": dict(r=4, d=2)}[kind]
    rows = make_rows(rng, 90, missing=0.3, dense_weight=0.7, **shape)
    n_clusters, n_trials = 6, 3
    uniforms = rng.random((n_clusters - 1, n_trials))
    first = int(rng.integers(90))
    seeds = km.kmeanspp(*rows, n_clusters, first, uniforms, 1)
    assert seeds[0] == first
    assert len(set(seeds.tolist())) == n_clusters
    np.testing.assert_array_equal(seeds, ref_kmeanspp(*rows, n_clusters, first, uniforms))
    np.testing.assert_array_equal(seeds, km.kmeanspp(*rows, n_clusters, first, uniforms, 2))
    np.testing.assert_array_equal(seeds, km.kmeanspp(*rows, n_clusters, first, uniforms.copy(), 1))


def test_kmeanspp_seeds_initialise_lloyd(rng):
    """Seeds -> centres (centroids of a labelling with only the seeds) -> assign -> lloyd."""
    rows = make_rows(rng, 200, r=5, d=2, missing=0.2)
    seeds = km.kmeanspp(*rows, 4, 3, rng.random((3, 2)), 1)
    only_seeds = np.full(200, -1, dtype=np.int32)
    only_seeds[seeds] = np.arange(4, dtype=np.int32)
    dense, cat = km.centroids(*rows, only_seeds, 4, 1)
    np.testing.assert_array_equal(dense, rows[0][seeds])
    init, _, _ = km.assign(*rows, dense, cat, 1)
    np.testing.assert_array_equal(init[seeds], np.arange(4))  # a seed is at distance 0 of itself
    out = km.lloyd(*rows, init, 4, 50, 0.0, 1)
    assert out[3] and np.all(np.diff(out[1]) <= 0)


def _small_rows():
    labels = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=np.int32)
    return [np.zeros((4, 2)), 1.0, labels, np.array([0, 2, 4], dtype=np.int64),
            np.array([0.5, 0.5]), UC, 2.0]


def _bad(*changes):
    """_small_rows() with (index, value) pairs replaced."""
    rows = _small_rows()
    for index, value in zip(changes[::2], changes[1::2]):
        rows[index] = value
    return rows


BAD_ROWS = {
    "X-rows": _bad(0, np.zeros((3, 2))),
    "offsets-length": _bad(3, np.array([0, 2], dtype=np.int64)),
    "offsets-decreasing": _bad(3, np.array([0, 2, 1], dtype=np.int64)),
    "offsets-start": _bad(3, np.array([1, 2, 4], dtype=np.int64)),
    "weights-length": _bad(4, np.array([1.0])),
    "weights-negative": _bad(4, np.array([1.0, -1.0])),
    "label-too-large": _bad(2, np.array([[0, 1], [1, 0], [1, 2], [0, 0]], dtype=np.int32)),
    "label-below-minus-one": _bad(2, np.array([[0, 1], [-2, 0], [1, 1], [0, 0]], dtype=np.int32)),
    "distance-code": _bad(5, 7),
    "ulp-p": _bad(5, ULP, 6, 1.0),
    "dense-weight": _bad(1, -1.0),
    "no-block": _bad(0, np.zeros((4, 0)), 2, np.zeros((4, 0), dtype=np.int32),
                     3, np.zeros(1, dtype=np.int64), 4, np.zeros(0)),
}


@pytest.mark.parametrize("name", list(BAD_ROWS), ids=list(BAD_ROWS))
def test_bad_rows_raise_value_error(name):
    rows = BAD_ROWS[name]
    init = np.array([0, 1, 0, 1], dtype=np.int32)
    centres = (np.zeros((2, rows[0].shape[1])), np.full((2, max(int(rows[3][-1]), 0)), 0.5))
    calls = [
        lambda: km.lloyd(*rows, init, 2, 10, 0.0, 1),
        lambda: km.centroids(*rows, init, 2, 1),
        lambda: km.kmeanspp(*rows, 2, 0, np.full((1, 2), 0.5), 1),
    ]
    if name not in ("X-rows", "offsets-length", "offsets-decreasing", "offsets-start"):
        calls += [lambda: km.assign(*rows, *centres, 1),
                  lambda: km.objective(*rows, *centres, init, 1)]
    for call in calls:
        with pytest.raises(ValueError):
            call()


def test_bad_call_arguments_raise_value_error():
    rows = _small_rows()
    init = np.array([0, 1, 0, 1], dtype=np.int32)
    dense, cat = np.zeros((2, 2)), np.full((2, 4), 0.5)
    bad_calls = {
        "assignment-length": lambda: km.lloyd(*rows, init[:3], 2, 10, 0.0, 1),
        "assignment-range": lambda: km.lloyd(*rows, np.array([0, 1, 2, 1], np.int32), 2, 10,
                                             0.0, 1),
        "assignment-minus-one": lambda: km.lloyd(*rows, np.array([0, -1, 0, 1], np.int32), 2, 10,
                                                 0.0, 1),
        "k-zero": lambda: km.lloyd(*rows, init, 0, 10, 0.0, 1),
        "k-above-n": lambda: km.lloyd(*rows, init, 5, 10, 0.0, 1),
        "max-iter": lambda: km.lloyd(*rows, init, 2, -1, 0.0, 1),
        "tol": lambda: km.lloyd(*rows, init, 2, 10, -1.0, 1),
        "dense-shape": lambda: km.assign(*rows, np.zeros((2, 3)), cat, 1),
        "cat-shape": lambda: km.assign(*rows, dense, np.zeros((2, 3)), 1),
        "k-mismatch": lambda: km.assign(*rows, dense, np.zeros((3, 4)), 1),
        "cat-negative": lambda: km.assign(*rows, dense, -cat, 1),
        "dense-nan": lambda: km.assign(*rows, np.full((2, 2), np.nan), cat, 1),
        "objective-assignment": lambda: km.objective(*rows, dense, cat, init[:2], 1),
        "centroids-assignment": lambda: km.centroids(*rows, np.array([0, 1, 0, -2], np.int32), 2,
                                                     1),
        "uniforms-rows": lambda: km.kmeanspp(*rows, 3, 0, np.full((1, 2), 0.5), 1),
        "uniforms-no-trial": lambda: km.kmeanspp(*rows, 2, 0, np.zeros((1, 0)), 1),
        "uniforms-range": lambda: km.kmeanspp(*rows, 2, 0, np.full((1, 2), 1.0), 1),
        "first": lambda: km.kmeanspp(*rows, 2, 4, np.full((1, 2), 0.5), 1),
        "kmeanspp-k-above-n": lambda: km.kmeanspp(*rows, 5, 0, np.full((4, 2), 0.5), 1),
    }
    for name, call in bad_calls.items():
        with pytest.raises(ValueError):
            call()
            pytest.fail(name)
    with pytest.raises(TypeError):
        km.lloyd(*rows, None, 2, 10, 0.0, 1)
    with pytest.raises(ValueError):  # a strided view is not C-contiguous
        km.lloyd(np.zeros((8, 2))[::2], *rows[1:], init, 2, 10, 0.0, 1)


# -- the pieces lloyd and kmeanspp are made of (exported for the Dask executor) ----------------

def _block(rows, a, b):
    X, dense_weight, labels, offsets, weights, distance, p = rows
    return (np.ascontiguousarray(X[a:b]), dense_weight, np.ascontiguousarray(labels[a:b]),
            offsets, weights, distance, p)


@pytest.mark.parametrize("distance", [UC, UH, UCOS, ULP], ids=["uc", "uh", "ucos", "ulp"])
def test_lloyd_pass_over_blocks_is_lloyds_first_pass(distance, rng):
    """Two blocks of 4096 and a partial one: their passes, partials added in chunk order, give
    what one lloyd pass gives on the whole array (labels, costs, objective, tally change)."""
    rows = make_rows(rng, 2 * km.CHUNK + 700, r=5, missing=0.2, distance=distance, p=3.0)
    n = rows[2].shape[0]
    start = rng.integers(0, 4, n).astype(np.int32)
    counts, sizes = km.tally(*rows, start, 4, 1)
    centres = km.centres_from_tally(rows[3], counts)
    _, want_cat = km.centroids(*rows, start, 4, 1)
    assert bitwise_equal(centres, want_cat)
    whole = km.lloyd_pass(*rows, centres, start, 2)
    bounds = [0, km.CHUNK, 2 * km.CHUNK, n]
    parts = [km.lloyd_pass(*_block(rows, a, b), centres, start[a:b], 1)
             for a, b in zip(bounds[:-1], bounds[1:])]
    assert bitwise_equal(np.concatenate([q[0] for q in parts]), whole[0])
    assert bitwise_equal(np.concatenate([q[1] for q in parts]), whole[1])
    assert bitwise_equal(np.concatenate([q[2] for q in parts]), whole[2])
    total = 0.0
    for v in np.concatenate([q[2] for q in parts]).tolist():
        total += v
    assert total == whole[6]
    assert sum(q[3] for q in parts) == whole[3] == int((whole[0] != start).sum())
    assert np.array_equal(sum(q[4] for q in parts), whole[4])
    new_counts, new_sizes = km.tally(*rows, whole[0], 4, 1)
    assert np.array_equal(counts + whole[4], new_counts)
    assert np.array_equal(sizes + whole[5], new_sizes)
    # the objective is lloyd's first trace entry
    trace = km.lloyd(*rows, start, 4, 0, 0.0, 1)[1]
    assert trace[0] == whole[6]


def test_lloyd_verdict_is_lloyds_stop_rule():
    assert km.lloyd_verdict(0, 5.0, 0.0, 3, 10, 1e-6) == -1  # the first pass never compares
    assert km.lloyd_verdict(1, 5.0, 4.0, 3, 10, 0.0) == km.STOP_ROSE
    assert km.lloyd_verdict(1, 4.0, 4.0, 3, 10, 1e-6) == 2  # kStopTol
    assert km.lloyd_verdict(1, 3.0, 4.0, 0, 10, 1e-6) == 1  # kStopStable
    assert km.lloyd_verdict(10, 3.0, 4.0, 2, 10, 1e-6) == km.STOP_MAX_ITER
    assert km.lloyd_verdict(3, 3.0, 4.0, 2, 10, 1e-6) == -1


def test_costliest_movable_is_lloyds_reseed_pick():
    labels = np.array([0, 0, 1, 2, 2], dtype=np.int32)
    sizes = np.array([2, 1, 2, 0], dtype=np.int64)
    costs = np.array([1.0, 3.0, 9.0, 3.0, 2.0])
    assert km.costliest_movable(labels, costs, sizes) == (1, 3.0)  # 2 is alone; 1 and 3 tie
    assert km.costliest_movable(labels[2:3], costs[2:3], sizes) == (-1, 0.0)
    nan_first = np.array([np.nan, 3.0, 9.0, 5.0, 2.0])
    assert km.costliest_movable(labels, nan_first, sizes)[0] == 0  # as lloyd: a NaN is kept


@pytest.mark.parametrize("n_trials", [1, 3])
def test_candidate_costs_and_draw_over_blocks_are_kmeanspp(n_trials, rng):
    """kmeanspp's first steps rebuilt from candidate_costs and draw_positions over blocks."""
    rows = make_rows(rng, km.CHUNK + 900, r=4, missing=0.1)
    n = rows[2].shape[0]
    uniforms = rng.random((2, n_trials))
    want = km.kmeanspp(*rows, 3, 17, uniforms, 2)
    bounds = [(0, km.CHUNK), (km.CHUNK, n)]
    blocks = [_block(rows, a, b) for a, b in bounds]
    first = np.ascontiguousarray(rows[2][[17]])
    closest = [km.candidate_costs(*blk, first, None, 1)[0][0] for blk in blocks]
    seeds = [17]
    for s in range(2):
        ends, running = [], 0.0
        for c in closest:
            running = km.draw_positions(c, running, np.empty(0))[0]
            ends.append(running)
        targets = uniforms[s] * ends[-1]
        candidates = []
        for t in targets:
            j = int(np.searchsorted(ends, t, side="right"))
            start = ends[j - 1] if j else 0.0
            candidates.append(bounds[j][0] + int(km.draw_positions(closest[j], start, np.array([t]))[1][0]))
        rows_c = np.ascontiguousarray(rows[2][candidates])
        outs = [km.candidate_costs(*blk, rows_c, c, 1) for blk, c in zip(blocks, closest)]
        chunk_potentials = np.concatenate([o[1] for o in outs])
        potentials = []
        for t in range(n_trials):
            total = 0.0
            for v in chunk_potentials[:, t].tolist():
                total += v
            potentials.append(total)
        win = int(np.argmin(potentials))
        seeds.append(candidates[win])
        closest = [o[0][win] for o in outs]
    assert seeds == want.tolist()


def test_centres_from_tally_refuses_bad_offsets():
    counts = np.ones((3, 5), dtype=np.int64)
    with pytest.raises(ValueError, match="non-decreasing"):
        km.centres_from_tally(np.array([0, 10, 5], dtype=np.int64), counts)
    with pytest.raises(ValueError, match="offsets\\[0\\]"):
        km.centres_from_tally(np.array([1, 3, 5], dtype=np.int64), counts)


# -- weighted objects (object_weights) and scaled rows (row_scale) ------------------------------
WEIGHTED_CASES = {
    "uc": dict(r=6, distance=UC),
    "uh": dict(r=6, distance=UH),
    "ulp-p3": dict(r=6, distance=ULP, p=3.0),
    "dense-only": dict(d=3),
    "mixed-uc": dict(r=5, d=2, distance=UC, dense_weight=0.3),
}


@pytest.mark.parametrize("missing", [0.0, 0.3], ids=["complete", "missing"])
@pytest.mark.parametrize("case", list(WEIGHTED_CASES), ids=list(WEIGHTED_CASES))
def test_weighted_lloyd_matches_reference(case, missing, rng):
    rows = make_rows(rng, 120, **{"missing": missing, **WEIGHTED_CASES[case]})
    w = rng.gamma(1.0, 1.0, 120) + 0.05
    init = rng.integers(0, 4, 120).astype(np.int32)
    got = km.lloyd(*rows, init, 4, 50, 0.0, 1, object_weights=w)
    want = ref_lloyd(*rows, init, 4, 50, 0.0, object_weights=w)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-9)
    assert (got[2], got[3]) == (want[2], want[3])
    np.testing.assert_allclose(got[5], want[5], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[6], want[6], rtol=1e-10, atol=1e-12)
    # A weight that differs from 1 changes the centres: the weights are really read.
    plain = km.lloyd(*rows, init, 4, 50, 0.0, 1)
    assert not np.allclose(got[6] if rows[4].size else got[5], plain[6] if rows[4].size else plain[5])


@pytest.mark.parametrize("missing", [0.0, 0.3], ids=["complete", "missing"])
def test_scaled_rows_match_reference(missing, rng):
    X, _, labels, offsets, weights, _, _ = make_rows(rng, 100, r=6, missing=missing)
    d = rng.random(100) * 3 + 0.5
    init = rng.integers(0, 4, 100).astype(np.int32)
    rows = (np.empty((100, 0)), 0.0, labels, offsets, weights, UC, 0.0)
    got = km.lloyd(*rows, init, 4, 50, 0.0, 1, object_weights=d, row_scale=1.0 / d)
    want = ref_lloyd(*rows, init, 4, 50, 0.0, object_weights=d, row_scale=1.0 / d)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-9)
    np.testing.assert_allclose(got[6], want[6], rtol=1e-10, atol=1e-13)
    labels_a, costs, total = km.assign(*rows, got[5], got[6], 1, object_weights=d, row_scale=1.0 / d)
    np.testing.assert_array_equal(labels_a, got[0])  # a converged run is its own assignment
    assert total == pytest.approx(float((d * costs).sum()), rel=1e-12)


def test_unit_weights_are_bitwise_the_unweighted_run(rng):
    rows = make_rows(rng, 300, r=6, d=2, missing=0.2, dense_weight=0.5)
    init = rng.integers(0, 5, 300).astype(np.int32)
    plain = km.lloyd(*rows, init, 5, 30, 0.0, 1)
    ones = km.lloyd(*rows, init, 5, 30, 0.0, 1, object_weights=np.ones(300))
    np.testing.assert_array_equal(plain[0], ones[0])
    np.testing.assert_allclose(plain[1], ones[1], rtol=1e-13)


def test_weighted_runs_are_identical_for_any_thread_count(rng):
    n = 14_000  # four chunks of kChunk = 4096
    _, _, labels, offsets, weights, _, _ = make_rows(rng, n, r=10, n_groups=5, missing=0.1)
    d = rng.random(n) + 0.5
    rows = (np.empty((n, 0)), 0.0, labels, offsets, weights, UC, 0.0)
    init = rng.integers(0, 5, n).astype(np.int32)
    one = km.lloyd(*rows, init, 5, 30, 0.0, 1, object_weights=d, row_scale=1.0 / d)
    two = km.lloyd(*rows, init, 5, 30, 0.0, 2, object_weights=d, row_scale=1.0 / d)
    for a, b in zip(one, two):
        assert bitwise_equal(a, b) if isinstance(a, np.ndarray) else a == b
    assert np.all(np.diff(one[1]) <= 0)


@pytest.mark.parametrize("bad, match", [
    (dict(object_weights=np.zeros(50)), "object_weights must be finite and > 0"),
    (dict(object_weights=np.full(50, np.nan)), "object_weights must be finite and > 0"),
    (dict(object_weights=np.ones(49)), "object_weights must have n = 50"),
    (dict(row_scale=-np.ones(50)), "row_scale must be finite and > 0"),
])
def test_bad_object_weights_raise(bad, match, rng):
    rows = make_rows(rng, 50, r=3)
    with pytest.raises(ValueError, match=match):
        km.lloyd(*rows, np.zeros(50, dtype=np.int32), 2, 5, 0.0, 1, **bad)


def test_row_scale_needs_uc_without_a_dense_block(rng):
    for shape in (dict(r=3, distance=UH), dict(r=3, d=2)):
        rows = make_rows(rng, 50, **shape)
        with pytest.raises(ValueError, match="row_scale needs the squared Euclidean"):
            km.lloyd(*rows, np.zeros(50, dtype=np.int32), 2, 5, 0.0, 1, row_scale=np.ones(50))


@pytest.mark.parametrize("d, n_trials", [(1, 1), (7, 5), (25, 3)], ids=["d1-t1", "d7-t5", "d25-t3"])
def test_dense_kmeanspp_matches_reference_at_any_width(d, n_trials, rng):
    # the candidate pass on dense rows only sums four candidates side by side; each cost
    # must still be the reference's sum of squared differences in feature order, bit for bit
    rows = make_rows(rng, 150, d=d, dense_weight=1.3)
    n_clusters = 7
    uniforms = rng.random((n_clusters - 1, n_trials))
    seeds = km.kmeanspp(*rows, n_clusters, 5, uniforms, 1)
    np.testing.assert_array_equal(seeds, ref_kmeanspp(*rows, n_clusters, 5, uniforms))
    np.testing.assert_array_equal(seeds, km.kmeanspp(*rows, n_clusters, 5, uniforms, 2))


@pytest.mark.parametrize("n_distinct,n_copies", [(1, 3), (3, 4), (5, 12), (9, 60), (20, 70)],
                         ids=["one-centre", "k7", "k17", "k69", "k90"])
def test_equal_costs_go_to_the_lowest_centre(n_distinct, n_copies, rng):
    """Costs equal to the minimum to the bit (copies of a centre) go to the lowest index: the
    first copy. Centres in the order c_0..c_{m-1}, then copies in random order, so the labels
    against all of them are the labels against the distinct ones."""
    for distance, p, shape in [(UH, 2.0, dict(r=9)), (UC, 2.0, dict(r=4, d=2)), (ULP, 3.0, dict(r=30))]:
        rows = make_rows(rng, 700, missing=0.2, distance=distance, p=p, **shape)
        dense = rng.normal(size=(n_distinct, rows[0].shape[1]))
        cat = rng.random((n_distinct, int(rows[3][-1])))
        copies = np.concatenate([np.arange(n_distinct), rng.integers(0, n_distinct, n_copies)])
        want, want_costs, _ = km.assign(*rows, dense, cat, 1)
        labels, costs, _ = km.assign(*rows, np.ascontiguousarray(dense[copies]),
                                     np.ascontiguousarray(cat[copies]), 2)
        assert bitwise_equal(labels, want) and bitwise_equal(costs, want_costs)


def test_objects_with_nan_or_inf_costs_go_to_the_first_centre(rng):
    """A NaN feature makes every cost of its object NaN (no cost is below it: centre 0, as the
    scan keeps it), an infinite one every cost +inf (all equal: centre 0); the others are
    unchanged."""
    rows = list(make_rows(rng, 300, r=5, d=3, distance=UC))
    dense = rng.normal(size=(9, 3))
    cat = rng.random((9, int(rows[3][-1])))
    want, _, _ = km.assign(*rows, dense, cat, 1)
    X = rows[0].copy()
    X[[4, 90], 0] = np.nan
    X[[5, 200], 2] = np.inf
    rows[0] = X
    labels, _, _ = km.assign(*rows, dense, cat, 2)
    want[[4, 5, 90, 200]] = 0
    assert bitwise_equal(labels, want)
