"""PTA and PTGP (Huang, Lai & Wang 2016) against the literal reference of their equations."""
import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.consensus_functions.trajectories import PTS_METHODS, default_elite_neighbors, pta, ptgp
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.graph import tcut
import reference_trajectories as ref
from factories import noisy_labels, same_partition


def _ensemble(rng, n=30, missing=0.0, irregular=True):
    """Noisy labels; irregular partition weights make exact PTS ties unlikely."""
    L = noisy_labels(rng, n=n, r=6, missing=missing)
    w = rng.uniform(0.5, 1.5, L.shape[1]) if irregular else np.ones(L.shape[1])
    w = w / w.sum()
    return L, w


@pytest.mark.parametrize("pts_method", PTS_METHODS)
@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
@pytest.mark.parametrize("K,T", [(None, None), (1, 1), (3, 4), (50, 2)], ids=["default", "K1T1", "K3T4", "Kall"])
def test_intermediates_match_the_literal_reference(rng, missing, K, T, pts_method):
    L, w = _ensemble(rng, missing=missing)
    res = pta(Ensemble(L, weights=w), 3, elite_neighbors=K, trajectory_length=T, pts_method=pts_method)
    want = ref.walk(L, w, K, T)
    ex = res.extras
    np.testing.assert_array_equal(ex["microclusters"], want["inverse"])
    np.testing.assert_array_equal(ex["microcluster_sizes"], want["sizes"])
    assert (ex["elite_neighbors"], ex["trajectory_length"]) == (want["K"], want["T"])
    # Microclusters are numbered by first member in both; the fast code's MCA is rounded to
    # 12 decimals, so the comparisons allow that.
    np.testing.assert_allclose(ex["mca"] - np.diag(np.diag(ex["mca"])), want["mca"] - np.diag(np.diag(want["mca"])),
                               atol=1e-11)
    np.testing.assert_allclose(ex["elite_graph"].toarray(), want["elite_graph"], atol=1e-11)
    np.testing.assert_allclose(ex["transition"].toarray(), want["transition"], atol=1e-11)
    np.testing.assert_allclose(ex["trajectories"], want["trajectories"], atol=1e-10)
    np.testing.assert_allclose(ex["pts"], want["pts"], atol=1e-10)


@pytest.mark.parametrize("pts_method", PTS_METHODS)
@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
@pytest.mark.parametrize("linkage", ["average", "complete", "single"])
def test_pta_matches_the_literal_agglomeration(missing, linkage, pts_method):
    # Three ensembles from one seed (not the three-seed fixture: each seed repeated the loop).
    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(3):
        L, w = _ensemble(rng, missing=missing)
        for k in (2, 3, 5):
            got = pta(Ensemble(L, weights=w), k, linkage=linkage, pts_method=pts_method)
            want, heights, _ = ref.pta(L, w, k, linkage)
            Z = got.extras["linkage_matrix"]
            m = Z.shape[0] + 1
            np.testing.assert_allclose(Z[: m - k, 2], heights, atol=1e-9)   # every merge below the cut
            # Complete linkage of microclusters in different K-ENG components ties at distance
            # 1 (PTS 0): which tied pair merges first is arbitrary, so labels are compared only
            # when the first merge above the cut is not such a tie.
            if Z[m - k, 2] < 1.0 - 1e-9:
                assert same_partition(got.labels, want), (linkage, k)
                compared += 1
    assert compared >= (1 if linkage == "complete" else 3)


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
def test_ptgp_bipartite_weights_match_eq_15(rng, missing):
    L, w = _ensemble(rng, missing=missing)
    res = ptgp(Ensemble(L, weights=w), 3, random_state=0)
    want = ref.walk(L, w)
    # cclust numbers each partition's clusters by first appearance and sorts partitions
    # (canonical form); compare the columns as a set.
    got_cols = {tuple(np.round(c, 9)) for c in res.extras["mcbg"].T}
    want_cols = {tuple(np.round(c, 9)) for c in ref.mcbg(want["reps"], want["pts"]).T}
    assert got_cols == want_cols


def test_the_walk_is_reversible_with_weights_n_i_d_i(rng):
    # The premise of pts_method="spectral": Pi P is symmetric for Pi = diag(n_i d_i).
    L, w = _ensemble(rng, missing=0.2)
    want = ref.walk(L, w)
    d = (want["elite_graph"] * want["sizes"][None, :]).sum(axis=1)
    flow = (want["sizes"] * d)[:, None] * want["transition"]
    np.testing.assert_allclose(flow, flow.T, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("K,T", [(None, None), (1, 1), (2, 7), (50, 20)], ids=["default", "K1T1", "K2T7", "KallT20"])
def test_spectral_pts_equals_the_powers(rng, K, T):
    # Larger ensembles (150 objects, several K-ENG components with K = 1, isolated
    # microclusters) than the literal reference can take; "powers" is the authors' route.
    for missing in (0.0, 0.3):
        L = noisy_labels(rng, n=150, r=5, missing=missing)
        L = np.vstack([L, [[9] * 5]])   # one microcluster alone in a cluster of every partition
        a, b = (pta(L, 3, elite_neighbors=K, trajectory_length=T, pts_method=p) for p in PTS_METHODS)
        assert a.extras["n_isolated"] >= 1
        np.testing.assert_allclose(b.extras["pts"], a.extras["pts"], rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(b.extras["trajectories"], a.extras["trajectories"])
        assert same_partition(a.labels, b.labels)


def test_spectral_pts_keeps_exact_zeros():
    # Different K-ENG components (the two triangles) and a pair that swaps places at every
    # step: PTS exactly 0 both ways.
    L = np.array([[0, 0], [0, 0], [0, 1], [0, 2], [1, 3], [1, 3], [1, 4], [1, 5]])
    for p in PTS_METHODS:
        assert pta(L, 2, elite_neighbors=1, trajectory_length=2, pts_method=p).extras["pts"][0, 3] == 0.0
        assert pta(np.array([[0, 0], [0, 1], [1, 2], [1, 2]]), 2, elite_neighbors=1, trajectory_length=3,
                   pts_method=p).extras["pts"][0, 1] == 0.0


def test_tcut_embedding_is_the_whole_graphs_eigenvectors(rng):
    B = rng.random((25, 8)) ** 3
    for k in (2, 3, 5):
        F, want = tcut(B, k, random_state=0).embedding, ref.transfer_embedding(B, k)
        # Equal up to an orthogonal map of the columns (eigenvector signs): compare Gram matrices.
        np.testing.assert_allclose(F @ F.T, want @ want.T, atol=1e-8)


def test_tcut_recovers_a_planted_bipartite_partition(rng):
    truth = np.repeat(np.arange(3), 10)
    cols = np.repeat(np.arange(3), 4)
    B = (truth[:, None] == cols[None, :]).astype(float) + 0.05 * rng.random((30, 12))
    cut = tcut(B, 3, random_state=1)
    assert same_partition(cut.labels, truth)
    assert cut.labels[0] == 0 and cut.objective >= 0 and cut.n_moved == 0


def test_tcut_fills_every_part_with_more_parts_than_columns():
    B = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.5, 0.5]])
    labels = tcut(B, 4, random_state=0).labels
    assert sorted(set(labels.tolist())) == [0, 1, 2, 3]


def test_default_K_T_is_the_authors_rule():
    assert [default_elite_neighbors(m) for m in (1, 3, 4, 15, 16, 899, 1599, 1600, 1764, 10**6)] == \
        [1, 1, 1, 1, 2, 14, 19, 20, 20, 20]


def test_toy_case_by_hand():
    # Microclusters {0,1} {2} {3} | {4,5} {6} {7}: two triangles of linked microclusters.
    L = np.array([[0, 0], [0, 0], [0, 1], [0, 2], [1, 3], [1, 3], [1, 4], [1, 5]])
    res = pta(L, 2, elite_neighbors=1, trajectory_length=2)
    ex = res.extras
    np.testing.assert_array_equal(ex["microclusters"], [0, 0, 1, 2, 3, 3, 4, 5])
    # MCA: 1/2 inside each triangle, 0 across.
    assert ex["mca"][0, 1] == ex["mca"][0, 2] == ex["mca"][3, 5] == 0.5 and ex["mca"][0, 3] == 0
    # K = 1 with ties: every link at the (tied) top is kept.
    triangle = np.ones((3, 3)) - np.eye(3)
    np.testing.assert_array_equal(ex["elite_graph"].toarray() > 0, np.kron(np.eye(2), triangle))
    # y0 holds two objects, so y1 walks to it twice as often as to y2.
    np.testing.assert_allclose(ex["transition"].toarray()[1], [2 / 3, 0, 1 / 3, 0, 0, 0])
    # Two steps from y1: p^2_1: = p^1_1: P.
    P = ex["transition"].toarray()
    np.testing.assert_allclose(ex["trajectories"][1, 1], P[1] @ P)
    np.testing.assert_array_equal(res.labels, [0, 0, 0, 0, 1, 1, 1, 1])
    assert ex["pts"][0, 3] == 0.0 and ex["pts"][0, 1] > 0


def test_a_linked_pair_has_orthogonal_trajectories():
    # Two microclusters linked only to each other swap places at every step: PTS 0 (the
    # random walk of Definition 8 has no self-loops).
    L = np.array([[0, 0], [0, 1], [1, 2], [1, 2]])
    ex = pta(L, 2, elite_neighbors=1, trajectory_length=3).extras
    assert ex["pts"][0, 1] == 0.0


def test_isolated_microcluster_gets_the_authors_tiny_similarity():
    # Object 4 is alone in a cluster of both partitions: no link, PTS 1e-20 with everything.
    L = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [2, 2]])
    res = pta(L, 2)
    assert res.extras["n_isolated"] == 1
    np.testing.assert_array_equal(res.extras["pts"][3], [1e-20] * 4)


def test_identical_partitions_give_that_partition_back():
    y = np.repeat(np.arange(4), 5)
    L = np.column_stack([y, (y + 1) % 4, y])
    for fn in (pta, ptgp):
        assert same_partition(fn(L, 4, random_state=0).labels, y)


def test_ptgp_metis_cut_runs_and_is_valid(rng):
    L, w = _ensemble(rng, n=60)
    res = ptgp(Ensemble(L, weights=w), 3, cut="metis", random_state=0)
    assert res.n_clusters == 3 and res.extras["cut"] == "metis"


def test_missing_labels_count_as_not_together():
    L = np.array([[0, 0], [0, -1], [1, 1], [1, 1]])
    ex = pta(L, 2).extras
    assert ex["mca"][0, 1] == 0.5   # together in one of two partitions, not divided by 1


def test_deterministic_and_seed_independent_pta(rng):
    L, _ = _ensemble(rng)
    a, b = pta(L, 3, random_state=0), pta(L, 3, random_state=5)
    np.testing.assert_array_equal(a.labels, b.labels)


def test_large_inputs_drop_the_matrices_from_extras(rng):
    L = rng.integers(0, 6, size=(400, 5))
    res = pta(L, 3)
    assert res.extras["n_microclusters"] > 200 and "pts" not in res.extras and "mcbg" not in ptgp(L, 3).extras


def test_memory_guard_refuses_before_allocating(rng):
    L = rng.integers(0, 8, size=(300, 6))
    for fn in (pta, ptgp):
        with pytest.raises(MemoryBudgetError, match=r"microclusters.*max_bytes=\d+.*hbgf"):
            fn(L, 3, max_bytes=100_000)


BAD = [
    ({"elite_neighbors": 0}, "elite_neighbors"),
    ({"elite_neighbors": 2.5}, "elite_neighbors"),
    ({"elite_neighbors": -3}, "elite_neighbors"),
    ({"trajectory_length": 0}, "trajectory_length"),
    ({"trajectory_length": "20"}, "trajectory_length"),
]


@pytest.mark.parametrize("fn", [pta, ptgp])
@pytest.mark.parametrize("kwargs,word", BAD)
def test_bad_parameters_name_themselves(fn, kwargs, word):
    L = np.array([[0, 0], [0, 1], [1, 1], [1, 0]])
    before = L.copy()
    with pytest.raises(ValidationError, match=word):
        fn(L, 2, **kwargs)
    np.testing.assert_array_equal(L, before)


def test_bad_method_specific_parameters():
    L = np.array([[0, 0], [0, 1], [1, 1], [1, 0]])
    with pytest.raises(ValidationError, match="linkage"):
        pta(L, 2, linkage="ward")
    with pytest.raises(ValidationError, match="cut"):
        ptgp(L, 2, cut="ncut")
    for fn in (pta, ptgp):
        with pytest.raises(ValidationError, match="pts_method"):
            fn(L, 2, pts_method="eigen")
    with pytest.raises(ValidationError, match="n_init"):
        ptgp(L, 2, n_init=0)
    with pytest.raises(ValidationError, match="max_iter"):
        ptgp(L, 2, max_iter=0)


@pytest.mark.parametrize("fn", [pta, ptgp])
def test_bad_ensembles(fn):
    with pytest.raises(ValidationError, match="one partition"):
        fn(np.array([[0], [0], [1], [1]]), 2)
    with pytest.raises(ValidationError, match="n_clusters"):   # one cluster everywhere: one microcluster
        fn(np.zeros((5, 3), dtype=int), 2)
    with pytest.raises(ValidationError, match=r"missing labels in every partition"):
        fn(np.array([[0, 0], [0, 1], [-1, -1], [1, 1]]), 2)
    with pytest.raises(ValidationError, match="distinct label vectors"):
        fn(np.array([[0, 0], [0, 0], [1, 1], [1, 1]]), 3)
    with pytest.raises(ValidationError, match="n_clusters"):
        fn(np.array([[0, 0], [0, 1], [1, 1], [1, 0]]), 1)


def test_registered():
    assert cclust.get("pta") is pta and cclust.get("ptgp") is ptgp
