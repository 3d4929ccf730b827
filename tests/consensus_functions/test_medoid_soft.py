"""The medoid of soft partitions (clue's cl_medoid on membership matrices, Hornik 2005) against
the literal references of tests/reference_clue_measures.py."""
import numpy as np
import pytest
import reference_clue_measures as ref
from factories import random_memberships

import cclust
from cclust.base import method_info
from cclust.consensus_functions.pairwise import SOFT_DISSIMILARITIES, medoid
from cclust.errors import ValidationError
from cclust.soft import SoftEnsemble

LITERAL = {"euclidean-distance": ref.euclidean, "manhattan-distance": ref.manhattan,
           "mallows-distance": ref.mallows, "boorman-arabie-a": ref.boorman_arabie_a,
           "boorman-arabie-d": ref.boorman_arabie_d}


@pytest.mark.parametrize("metric", SOFT_DISSIMILARITIES)
def test_soft_medoid_matches_literal_sums(metric):
    for seed in range(3):
        mats = random_memberships(7, [2, 3, 3, 2, 4][: 3 + seed], seed=seed, power=3)
        S = SoftEnsemble(mats)
        res = medoid(S, metric=metric)
        literal = LITERAL[metric]
        sums = [sum(literal(a, b) for b in mats) for a in mats]
        np.testing.assert_allclose(res.extras["scores"] * len(mats), sums, rtol=1e-9, atol=1e-12)
        assert res.extras["member"] == ref.medoid(mats, literal)
        assert res.objective == pytest.approx(min(sums) / len(mats), rel=1e-9, abs=1e-12)
        U = mats[res.extras["member"]]
        np.testing.assert_array_equal(res.extras["membership"], S.memberships[res.extras["member"]])
        np.testing.assert_allclose(res.extras["membership"], U, rtol=1e-12)
        assert cclust.get("ari")(res.labels, U.argmax(axis=1)) == 1.0


def test_weights_candidates_and_ties():
    mats = random_memberships(10, [2, 3, 3, 4], seed=1)
    S = SoftEnsemble(mats)
    w = np.array([1.0, 0.0, 0.0, 5.0])
    res = medoid(S.with_weights(w))
    # weighted sums of distances to the others (w normalised): member 3 is at distance 0 from itself
    d = lambda a, b: ref.euclidean(a, b)
    expected = [sum(wi / w.sum() * d(mats[j], mats[i]) for i, wi in enumerate(w)) for j in range(4)]
    np.testing.assert_allclose(res.extras["scores"], expected, rtol=1e-9)
    three = medoid(S, 3)
    assert set(np.flatnonzero(~np.isnan(three.extras["scores"]))) == {1, 2} and three.extras["note"] == ""
    five = medoid(S, 5)
    assert np.flatnonzero(~np.isnan(five.extras["scores"])).tolist() == [3] and "closest" in five.extras["note"]
    same = medoid(SoftEnsemble([mats[0], mats[0], mats[1]]))
    assert same.extras["member"] == 0                      # a tie goes to the first member, as in clue


def test_hard_soft_ensemble_is_the_hard_medoid_and_dispatch():
    assert method_info(medoid).accepts_soft
    L = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    hard = medoid(L)
    soft = medoid(SoftEnsemble([L[:, j] for j in range(3)]))
    assert hard.labels.tolist() == soft.labels.tolist() and hard.objective == soft.objective
    S = SoftEnsemble(random_memberships(12, [2, 3, 2], seed=2))
    a = cclust.consensus("medoid", S, None)
    assert a.extras["member"] == medoid(S).extras["member"]


def test_soft_medoid_refuses_hard_only_measures():
    S = SoftEnsemble(random_memberships(12, [2, 3], seed=3))
    with pytest.raises(ValidationError, match="metric: the medoid of soft partitions"):
        medoid(S, metric="vi")
    with pytest.raises(ValidationError, match="metric"):
        medoid(S, metric=lambda table: 0.0)
    with pytest.raises(ValidationError, match="n_clusters"):
        medoid(S, 1)
