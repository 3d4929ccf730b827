"""ECPCS-HC and ECPCS-MC (Huang et al. 2021) against the literal reference of the paper's equations."""
import numpy as np
import pytest

import reference_ecpcs as ref
from cclust import Ensemble
from cclust._linkage import average_linkage, cut_merges
from cclust.consensus_functions.ecpcs import (
    ecpcs_hc,
    ecpcs_mc,
    ncut_meta_clusters,
    propagate_cluster_similarity,
)
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.metrics import ari


def noisy_labels(seed, n=30, r=8, k=3, missing=0.0):
    """r noisy copies of a k-cluster truth (30% of each column relabelled at random, K_j up to 5)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n)
    L = np.stack([np.where(rng.random(n) < 0.3, rng.integers(0, rng.integers(2, 6), n), truth)
                  for _ in range(r)], axis=1)
    if missing:
        L[rng.random(L.shape) < missing] = -1
        L[(L < 0).all(axis=1), 0] = 0
    return L, truth


SEEDS = range(6)
MISSING = pytest.mark.parametrize("missing", [0.0, 0.1], ids=["complete", "missing"])


# -- the cluster level (eq. 1-8) -----------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
@MISSING
@pytest.mark.parametrize("name", ["ecpcs-hc", "ecpcs-mc"])
def test_cluster_similarities_match_reference(name, seed, missing):
    L, _ = noisy_labels(seed, missing=missing)
    # Arbitrary cluster names and a shuffled partition order: extras follow the input's one-hot.
    rng = np.random.default_rng(seed)
    named = np.where(L >= 0, L * 7 + 3, -1)[:, rng.permutation(L.shape[1])]
    fn = ecpcs_hc if name == "ecpcs-hc" else ecpcs_mc
    res = fn(named, 3, random_state=0)
    relabelled = Ensemble(named).labels
    S = ref.jaccard(relabelled)
    np.testing.assert_allclose(res.extras["cluster_similarity"], S, atol=1e-15)
    np.testing.assert_allclose(res.extras["propagated_similarity"], ref.propagated(S, 20), atol=1e-12)


@pytest.mark.parametrize("t", [1, 2, 3, 7, 20, 64])
@MISSING
def test_propagation_equals_literal_matrix_powers(t, missing):
    L, _ = noisy_labels(3, missing=missing)
    S = ref.jaccard(Ensemble(L).labels)
    np.testing.assert_allclose(propagate_cluster_similarity(S, t), ref.propagated(S, t), atol=1e-12)


def test_isolated_cluster_has_zero_similarities():
    # Cluster 2 of partition 0 ({4, 5}) meets no cluster of the other partition (objects 4, 5 are
    # unlabelled there): no edge, a zero trajectory, zero similarities (the authors' code too).
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [2, -1], [2, -1]])
    res = ecpcs_hc(L, 2)
    Z = res.extras["propagated_similarity"]
    np.testing.assert_array_equal(Z[2], 0.0)
    np.testing.assert_array_equal(Z[:, 2], 0.0)
    np.testing.assert_allclose(Z, ref.propagated(ref.jaccard(L), 20), atol=1e-12)


def test_hand_computed_three_identical_partitions():
    # Three copies of {0,1 | 2,3}: each cluster's three copies form a triangle with Jaccard 1 and
    # P = (J - I) / 2 on it, so <P^s_i, P^s_j> = (P^2s)_ij = 1/3 + 4^-s (delta_ij - 1/3). With
    # g = sum_{s<=t} 4^-s = (1 - 4^-t) / 3: z = (t/3 - g/3) / (t/3 + 2g/3) between copies.
    part = np.array([0, 0, 1, 1])
    L = np.stack([part] * 3, axis=1)
    for t in (1, 2, 20):
        g = (1 - 4.0 ** -t) / 3
        z = (t / 3 - g / 3) / (t / 3 + 2 * g / 3)
        res = ecpcs_hc(L, 2, t=t)
        Z = res.extras["propagated_similarity"]  # columns: (p0 c0, p0 c1, p1 c0, p1 c1, p2 c0, p2 c1)
        same = np.array([[1.0 if i % 2 == j % 2 else 0.0 for j in range(6)] for i in range(6)])
        expected = np.where(same > 0, z, 0.0)
        np.fill_diagonal(expected, 1.0)
        np.testing.assert_allclose(Z, expected, atol=1e-14)
        np.testing.assert_array_equal(res.labels, part)
    assert (1 / 2, 9 / 14) == pytest.approx((0.5, (2 / 3 - 1 / 9 * (1 - 1 / 16)) / (2 / 3 + 2 / 9 * (1 - 1 / 16))))


def test_hand_computed_two_identical_partitions_walk_alternates():
    # Two copies: a walker from a cluster alternates between it and its copy, so the two
    # trajectories never meet at the same step and z = 0 between copies; the enhanced
    # co-association is then the plain co-association.
    part = np.array([0, 0, 1, 1, 1])
    res = ecpcs_hc(np.stack([part, part], axis=1), 2)
    np.testing.assert_allclose(res.extras["propagated_similarity"], np.eye(4), atol=1e-12)
    np.testing.assert_allclose(res.extras["enhanced_coassociation"], (part[:, None] == part[None, :]) * 1.0,
                               atol=1e-12)
    np.testing.assert_array_equal(res.labels, part)


# -- ECPCS-HC (eq. 12-21) ------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
@MISSING
def test_enhanced_coassociation_matches_reference(seed, missing):
    L, _ = noisy_labels(seed, missing=missing)
    E = Ensemble(L, weights=np.linspace(1.0, 2.0, L.shape[1]))
    res = ecpcs_hc(E, 3)
    B = ref.enhanced_coassociation(E.labels, ref.propagated(ref.jaccard(E.labels), 20), E.weights)
    np.testing.assert_allclose(res.extras["enhanced_coassociation"], B, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@MISSING
@pytest.mark.parametrize("k", [2, 3, 5])
def test_hc_labels_match_average_linkage_on_all_objects(seed, missing, k):
    L, _ = noisy_labels(seed, missing=missing)
    E = Ensemble(L)
    res = ecpcs_hc(E, k)
    expected = ref.ecpcs_hc(E.labels, k)[0]
    assert ari(res.labels, expected) == 1.0
    assert res.n_clusters == k


@pytest.mark.parametrize("seed", range(3))
def test_microclusters_give_the_objects_dendrogram(seed):
    # Few clusters per partition: 120 objects fall into far fewer distinct label rows.
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, 120)
    L = np.stack([np.where(rng.random(120) < 0.15, rng.integers(0, 3, 120), truth) for _ in range(4)], axis=1)
    E = Ensemble(L)
    res = ecpcs_hc(E, 3)
    assert res.extras["n_microclusters"] < 60
    expected, B, _ = ref.ecpcs_hc(E.labels, 3)
    assert ari(res.labels, expected) == 1.0
    np.testing.assert_allclose(res.extras["enhanced_coassociation"], B, atol=1e-12)


def test_weighted_average_linkage_of_groups_equals_linkage_of_their_members():
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import cdist, squareform

    rng = np.random.default_rng(0)
    points = rng.normal(size=(12, 2))
    sizes = np.array([1, 3, 2, 1, 1, 4, 1, 2, 1, 1, 2, 1])
    expanded = np.repeat(points, sizes, axis=0)
    D = cdist(points, points)
    merges = average_linkage(D.copy(), sizes)
    full = linkage(squareform(cdist(expanded, expanded), checks=False), "average")
    above_zero = full[:, 2][full[:, 2] > 0]
    np.testing.assert_allclose(np.sort(merges[:, 2]), above_zero, rtol=1e-12)
    labels, height = cut_merges(merges, 12, 3)
    assert len(set(labels.tolist())) == 3 and height == pytest.approx(np.sort(merges[:, 2])[-2])


def test_hc_refuses_past_the_memory_budget():
    L, _ = noisy_labels(0, n=300)
    with pytest.raises(MemoryBudgetError, match=r"enhanced co-association of \d+ microclusters.*ecpcs-mc"):
        ecpcs_hc(L, 3, max_bytes=100_000)


def test_hc_is_deterministic_and_ignores_random_state():
    L, _ = noisy_labels(1)
    np.testing.assert_array_equal(ecpcs_hc(L, 3, random_state=0).labels, ecpcs_hc(L, 3, random_state=5).labels)


# -- ECPCS-MC (eq. 22-26) ------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
@MISSING
def test_mc_scores_are_the_papers_vote(seed, missing):
    L, _ = noisy_labels(seed, missing=missing)
    E = Ensemble(L)
    res = ecpcs_mc(E, 3, random_state=seed)
    scores = ref.vote(E.labels, res.extras["meta_labels"], 3)
    np.testing.assert_allclose(res.extras["scores"], scores, atol=1e-14)
    # Every object goes to a meta-cluster of its highest score (none moved on these ensembles).
    assert res.extras["n_moved"] == 0
    # Labels are renumbered by first object: map them back to meta-clusters, then every object's
    # meta-cluster must have its highest score.
    from scipy.optimize import linear_sum_assignment
    table = np.zeros((3, 3))
    raw = np.argmax(scores, axis=1)
    np.add.at(table, (res.labels, raw), 1)
    rows, cols = linear_sum_assignment(-table)
    mapped = cols[res.labels]
    chosen = scores[np.arange(L.shape[0]), mapped]
    np.testing.assert_allclose(chosen, scores.max(axis=1), atol=1e-14)


@pytest.mark.parametrize("seed", SEEDS)
def test_mc_recovers_the_truth_of_mildly_noisy_ensembles(seed):
    L, truth = noisy_labels(seed, n=60, r=10, k=3)
    assert ari(ecpcs_mc(L, 3, random_state=seed).labels, truth) > 0.8


def test_ncut_splits_disconnected_blocks():
    W = np.zeros((9, 9))
    for block in (range(0, 4), range(4, 6), range(6, 9)):
        for i in block:
            for j in block:
                W[i, j] = 0.8 if i != j else 1.0
    W[0, 4] = W[4, 0] = 1e-7  # at or below the authors' 1e-6 threshold: dropped
    for seed in range(5):
        parts = ncut_meta_clusters(W, 3, random_state=seed)
        assert ari(parts, [0, 0, 0, 0, 1, 1, 2, 2, 2]) == 1.0


def test_mc_is_seeded():
    L, _ = noisy_labels(2, missing=0.1)
    a = ecpcs_mc(L, 4, random_state=3)
    b = ecpcs_mc(L, 4, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.objective == b.objective


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [ecpcs_hc, ecpcs_mc], ids=["hc", "mc"])
@pytest.mark.parametrize("t", [0, -1, 2.5, True, "20", None])
def test_bad_t(fn, t):
    L, _ = noisy_labels(0)
    with pytest.raises(ValidationError, match=r"^t must be an int"):
        fn(L, 3, t=t)


@pytest.mark.parametrize("fn", [ecpcs_hc, ecpcs_mc], ids=["hc", "mc"])
def test_one_partition_is_refused(fn):
    with pytest.raises(ValidationError, match="at least 2 partitions"):
        fn(np.array([[0], [0], [1], [1]]), 2)


@pytest.mark.parametrize("fn", [ecpcs_hc, ecpcs_mc], ids=["hc", "mc"])
def test_one_cluster_everywhere_is_refused(fn):
    with pytest.raises(ValidationError, match="one cluster"):
        fn(np.zeros((6, 3), dtype=int), 2)


@pytest.mark.parametrize("fn", [ecpcs_hc, ecpcs_mc], ids=["hc", "mc"])
def test_object_missing_everywhere_is_refused(fn):
    L, _ = noisy_labels(0)
    L[4] = -1
    before = L.copy()
    with pytest.raises(ValidationError, match=r"missing from every partition.*first: \[4\]"):
        fn(L, 3)
    np.testing.assert_array_equal(L, before)


@pytest.mark.parametrize("fn", [ecpcs_hc, ecpcs_mc], ids=["hc", "mc"])
@pytest.mark.parametrize("k", [0, 1, 31, 2.5, "3"])
def test_bad_n_clusters(fn, k):
    L, _ = noisy_labels(0)
    with pytest.raises(ValidationError, match="n_clusters"):
        fn(L, k)


def test_mc_refuses_more_meta_clusters_than_clusters():
    # 2 x 2 clusters, 4 distinct label rows: K = 4 is meaningful for HC, but MC has 4 clusters
    # only when K <= Nc; K = 5 fails the distinct-row check first, so use 3 partitions of 2.
    L = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]])
    assert ecpcs_hc(L, 7).n_clusters == 7
    with pytest.raises(ValidationError, match=r"n_clusters=7 is larger than the number of clusters in the ensemble \(6\)"):
        ecpcs_mc(L, 7)
