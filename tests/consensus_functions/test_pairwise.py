import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

import cclust
from cclust import Ensemble
from cclust.consensus_functions.pairwise import best, eac, fc
from cclust.errors import MemoryBudgetError, ValidationError
import reference_voting as ref
from factories import noisy_labels, same_partition
from reference_graph import first_merges_cut


def test_hac_is_an_alias_of_eac():
    assert cclust.get("hac") is cclust.get("eac") is eac


@pytest.mark.parametrize("method", ["average", "single", "complete", "weighted"])
@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
def test_eac_equals_scipy_linkage_on_the_same_matrix(rng, method, missing):
    L = noisy_labels(rng, n=36, missing=missing)
    w = np.full(L.shape[1], 1.0 / L.shape[1])
    D = np.round(1.0 - ref.coassociation(L, w), 12)
    np.fill_diagonal(D, 0.0)
    Z = linkage(squareform(D, checks=False), method=method)
    res = eac(L, 4, linkage=method)
    np.testing.assert_allclose(res.extras["linkage_matrix"][:, 2], Z[:, 2], atol=1e-12)
    # the first n - 4 merges in SciPy's order (scipy's cut_tree reorders tied merges, so it is not the reference here)
    assert same_partition(res.labels, first_merges_cut(Z, 4))
    assert res.n_clusters == 4


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
def test_fc_matches_reference(rng, missing):
    L = noisy_labels(rng, n=30, missing=missing)
    w = np.full(L.shape[1], 1.0 / L.shape[1])
    res = fc(L, 4)
    labels, centers = ref.furthest_consensus(L, w, 4)
    assert same_partition(res.labels, labels)
    assert res.extras["centers"].tolist() == centers


def test_best_returns_the_reference_member(rng):
    L = noisy_labels(rng, n=50, r=8)
    k = int(np.bincount([len(set(c)) for c in L.T.tolist()]).argmax())
    res = best(L, k)
    member, scores = ref.best_member(L, np.full(8, 1 / 8), k)
    assert res.extras["member"] == member
    assert same_partition(res.labels, L[:, member])
    for j, s in scores.items():
        assert res.extras["scores"][j] == pytest.approx(s, abs=1e-12)
    assert res.objective == pytest.approx(scores[member], abs=1e-12)


@pytest.mark.parametrize("metric", ["nmi", "ari", "vi", "van-dongen"])
def test_best_is_an_ensemble_member(rng, metric):
    L = noisy_labels(rng, n=50, r=8)
    res = best(L, None, metric=metric)
    assert any(same_partition(res.labels, col) for col in L.T)
    assert same_partition(res.labels, L[:, res.extras["member"]])
    scores = res.extras["scores"]
    chosen = scores[res.extras["member"]]
    assert chosen == (np.nanmin(scores) if metric in ("vi", "van-dongen") else np.nanmax(scores))


def test_best_member_index_follows_input_order(rng):
    L = noisy_labels(rng, n=50, r=8)
    order = rng.permutation(8)
    a, b = best(L, None), best(L[:, order], None)
    assert same_partition(a.labels, b.labels)
    assert order[b.extras["member"]] == a.extras["member"]


def test_bad_input(rng):
    L = noisy_labels(rng, n=30)
    with pytest.raises(ValidationError, match="linkage"):
        eac(L, 3, linkage="ward")
    with pytest.raises(MemoryBudgetError, match="bytes"):
        eac(L, 3, max_bytes=1000)
    with pytest.raises(MemoryBudgetError, match="bytes"):
        fc(L, 3, max_bytes=1000)
    small = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 0]])
    for fn in (eac, fc):
        with pytest.raises(ValidationError, match="distinct label vectors"):
            fn(small, 4)
    with pytest.raises(ValidationError, match="missing labels"):
        best(Ensemble(np.array([[0, 0], [0, -1], [1, 1], [1, 1]])), 2)
    with pytest.raises(ValidationError, match="metric"):
        best(small, 2, metric=3)


def test_best_without_a_member_at_k_takes_the_closest():
    # Members with 2, 4, 4 and 6 clusters; none with 3 or 5.
    L = np.array([[0, 0, 0, 0, 1, 1, 1, 1],
                  [0, 0, 1, 1, 2, 2, 3, 3],
                  [0, 0, 1, 1, 2, 2, 3, 3],
                  [0, 1, 2, 3, 4, 4, 5, 5]]).T
    res = best(L, 3)
    assert res.n_clusters in (2, 4)
    assert "no member has n_clusters=3" in res.extras["note"] and "2 or 4 clusters" in res.extras["note"]
    assert not np.isnan(res.extras["scores"][[0, 1, 2]]).any() and np.isnan(res.extras["scores"][3])
    # the two identical 4-cluster members agree best with the ensemble
    assert res.extras["member"] == 1 and res.n_clusters == 4
    five = best(L, 5)
    assert set(np.flatnonzero(~np.isnan(five.extras["scores"]))) == {1, 2, 3}
    assert best(L, 4).extras["note"] == ""


def test_best_with_the_default_ensemble():
    """The default kmeans ensemble (K_i from K to sqrt(n)) may have no member with K clusters:
    best then answers with a member of the closest K instead of refusing."""
    from sklearn.datasets import make_blobs

    from cclust.metrics import ari

    X, y = make_blobs(600, n_features=4, centers=4, random_state=0)
    E = cclust.generate("kmeans", X, 4, n_partitions=10, random_state=0)
    assert 4 not in E.n_clusters.tolist()
    res = cclust.consensus("best", E, 4)
    assert res.n_clusters == min(E.n_clusters) and res.extras["note"]
    assert ari(y, res.labels) > 0.8
