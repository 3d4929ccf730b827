"""LCE (Iam-On, Boongoen, Garrett & Price 2011; SimRank similarities of Iam-On & Garrett 2010)
against the literal references of ``tests/reference_link_based.py``, hand-computed cases, and
bad input."""
import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.consensus_functions.link_based import cluster_similarity, lce, object_similarity, refined_association, wct
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.graph import tcut
import reference_crowd_agreement as cut_reference
import reference_link_based as ref
from factories import noisy_labels, noisy_labels_with_truth, same_partition

SIMILARITY = pytest.mark.parametrize("similarity", ["cts", "srs", "asrs"])
WEIGHTED = pytest.mark.parametrize("weighted", [False, True], ids=["equal", "weighted"])


def test_hand_computed_wct_ra_and_similarity():
    # pi_1 = {0,1 | 2,3}; pi_2 = {0 | 1,2 | 3}. Jaccard: A-a 1/2, A-b 1/3, B-b 1/3, B-c 1/2.
    # WCT(A, B) = min(J(A,b), J(B,b)) = 1/3; WCT(a, b) = min(J(a,A), J(b,A)) = 1/3;
    # WCT(b, c) = 1/3; WCT(a, c) = 0. Normalised by 1/3.
    L = np.array([[0, 0], [0, 1], [1, 1], [1, 2]])
    W = wct(L)
    assert W[0, 1] == pytest.approx(1.0) and W[2, 3] == pytest.approx(1.0) and W[2, 4] == 0.0
    RA = refined_association(L, dc=0.5).toarray()
    np.testing.assert_allclose(RA[0], [1.0, 0.5, 1.0, 0.5, 0.0])
    S = object_similarity(L, dc=0.5)
    # S(0, 2) = (sim(A, B) + sim(a, b)) / 2 = (0.5 + 0.5) / 2; S(0, 3) = (0.5 + 0) / 2.
    np.testing.assert_allclose(S[0], [1.0, 0.75, 0.5, 0.25])


def test_dc_zero_gives_the_plain_coassociation(rng):
    L = noisy_labels(rng, n=20, r=4)
    np.testing.assert_allclose(object_similarity(L, dc=0.0), Ensemble(L).coassociation(), atol=1e-12)


@SIMILARITY
@WEIGHTED
def test_similarities_match_the_reference(rng, similarity, weighted):
    L = noisy_labels(rng, n=18, r=4)
    w = rng.uniform(0.5, 2.0, size=4) if weighted else None
    E = Ensemble(L, weights=w)
    np.testing.assert_allclose(cluster_similarity(E, similarity, dc=0.8, n_iter=4),
                               ref.cluster_similarity(L, similarity, 0.8, 4, w), atol=1e-12)
    sim = ref.cluster_similarity(L, similarity, 0.8, 4, w)
    np.testing.assert_allclose(refined_association(E, similarity, dc=0.8, n_iter=4).toarray(), ref.ra(L, sim),
                               atol=1e-12)
    np.testing.assert_allclose(object_similarity(E, similarity, dc=0.8, n_iter=4),
                               ref.object_similarity(L, similarity, 0.8, 4, w), atol=1e-12)
    if similarity == "cts":
        np.testing.assert_allclose(wct(E), ref.wct(L), atol=1e-12)


@SIMILARITY
def test_extras_match_the_reference(rng, similarity):
    L = noisy_labels(rng, n=18, r=4)
    res = lce(L, 3, similarity=similarity, random_state=0)
    np.testing.assert_allclose(res.extras["object_similarity"], ref.object_similarity(L, similarity, 0.9),
                               atol=1e-12)
    np.testing.assert_allclose(res.extras["ra"], ref.ra(L, ref.cluster_similarity(L, similarity, 0.9)), atol=1e-12)


@SIMILARITY
def test_srs_and_asrs_group_similarity_with_duplicated_rows(rng, similarity):
    # Rows repeated: the microcluster computation must give the object-level matrix.
    L = noisy_labels(rng, n=14, r=4)
    L = np.vstack([L, L[:6], L[:3]])
    np.testing.assert_allclose(lce(L, 3, similarity=similarity, consensus="average").extras["object_similarity"],
                               ref.object_similarity(L, similarity, 0.9), atol=1e-12)


@pytest.mark.parametrize("method", ["average", "complete", "single"])
def test_cts_linkage_equals_scipy_on_the_full_matrix(rng, method):
    L = noisy_labels(rng, n=30, r=5)
    L = np.vstack([L, L[:10]])
    cuts = cut_reference.untied_cuts(1.0 - ref.object_similarity(L, "cts", 0.9), method, range(2, 8))
    assert len(cuts) >= 2
    for k, expected in cuts:
        assert same_partition(lce(L, k, consensus=method).labels, expected), (method, k)


@SIMILARITY
@pytest.mark.parametrize("method", ["average", "complete", "single"])
def test_tied_cut_still_gives_exactly_k_clusters(similarity, method):
    # Four groups of two identical rows, every pair of groups equally far (no shared
    # neighbours): all three group merges tie. LinkCluE's cluster(Z, 'maxclust', 2) undoes every
    # merge at the tied height (four clusters); ours undoes exactly K - 1 of them.
    L = np.repeat(np.array([[0, 0], [1, 1], [2, 2], [3, 3]]), 2, axis=0)
    D = 1.0 - object_similarity(L, similarity)
    off_group = D[np.repeat(np.arange(4), 2)[:, None] != np.repeat(np.arange(4), 2)[None, :]]
    assert np.ptp(off_group) == 0.0                    # the tie the test is about
    for k in (2, 3):
        labels = lce(L, k, similarity=similarity, consensus=method).labels
        assert np.unique(labels).shape[0] == k
        assert np.all(labels[0::2] == labels[1::2])    # identical rows stay together


def test_spec_is_the_transfer_cut_of_the_literal_ra(rng):
    L = noisy_labels(rng, n=30, r=5)
    L = np.vstack([L, L[:8]])
    RA = ref.ra(L, ref.cluster_similarity(L, "cts", 0.9))
    res = lce(L, 3, random_state=0)
    expected = tcut(RA, 3, random_state=0)
    np.testing.assert_allclose(np.sort(res.extras["eigenvalues"]), np.sort(expected.eigenvalues), atol=1e-9)
    assert same_partition(res.labels, expected.labels)


# The linkages of "cts" are left out: with partitions of two or three clusters the normalised WCT
# links nearly every pair of clusters of a partition (DC times up to 1), and an outlier's row can
# stay alone; the paper uses base clusterings of about sqrt(n) clusters.
@pytest.mark.parametrize("similarity, consensus", [
    ("cts", "spec"), ("srs", "spec"), ("asrs", "spec"), ("srs", "average"), ("asrs", "average")])
def test_recovers_the_truth_of_a_clean_ensemble(rng, similarity, consensus):
    L, truth = noisy_labels_with_truth(rng, n=60, r=10, k=3, noise=0.1)
    res = lce(L, 3, similarity=similarity, consensus=consensus, random_state=0)
    assert cclust.get("ari")(res.labels, truth) > 0.9


# -- bad input -----------------------------------------------------------------------------------

def test_refuses_missing_labels_one_partition_one_cluster():
    with pytest.raises(ValidationError, match="missing labels"):
        lce(np.array([[0, 0], [0, -1], [1, 1], [1, 1]]), 2)
    with pytest.raises(ValidationError, match="at least two"):
        lce(np.array([[0], [0], [1], [1]]), 2)
    with pytest.raises(ValidationError, match="one cluster"):
        lce(np.zeros((4, 3), dtype=int), 2)


@pytest.mark.parametrize("kwargs, match", [
    ({"dc": -0.1}, "dc"), ({"dc": 1.5}, "dc"), ({"dc": np.inf}, "dc"), ({"n_iter": 1}, "n_iter"),
    ({"similarity": "jaccard"}, "similarity"), ({"consensus": "ward"}, "consensus"), ({"n_init": 0}, "n_init"),
    ({"n_clusters": 1}, "n_clusters"), ({"n_clusters": 9}, "distinct label vectors"),
    ({"n_clusters": 7}, "clusters in the ensemble")])
def test_bad_parameters(kwargs, match):
    L = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)] * 2)
    kwargs = {"n_clusters": 2, **kwargs}
    with pytest.raises(ValidationError, match=match):
        lce(L, **kwargs)


def test_linkages_refuse_past_the_memory_budget(rng):
    L = noisy_labels(rng, n=300, r=6)
    with pytest.raises(MemoryBudgetError, match="spec"):
        lce(L, 3, consensus="average", max_bytes=200_000)
    lce(L, 3, max_bytes=200_000)                  # the spectral route fits


def test_inputs_are_not_mutated(rng):
    L = noisy_labels(rng, n=30, r=5)
    copy = L.copy()
    for similarity in ("cts", "srs", "asrs"):
        lce(L, 3, similarity=similarity, random_state=0)
    np.testing.assert_array_equal(L, copy)
