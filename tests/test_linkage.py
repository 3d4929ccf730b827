"""cclust._linkage: average linkage of groups by the nearest-neighbour chain, and the cuts."""
import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage as scipy_linkage
from scipy.spatial.distance import squareform

from cclust._linkage import average_linkage, cut_dendrogram, cut_merges, linkage_on_groups
from cclust.errors import ValidationError


def distances(rng, m, levels=None):
    """Symmetric distances with zero diagonal; on a coarse grid (many ties) if ``levels``."""
    D = rng.random((m, m)) if levels is None else rng.integers(1, levels, (m, m)) / levels
    D = np.triu(D, 1)
    return D + D.T


@pytest.mark.parametrize("update", ["fractions", "weighted-sum"])
@pytest.mark.parametrize("seed", range(5))
def test_unit_sizes_give_scipys_average_linkage(seed, update):
    D = distances(np.random.default_rng(seed), 15)
    merges = average_linkage(D.copy(), np.ones(15), update=update)
    Z = scipy_linkage(squareform(D), method="average")
    np.testing.assert_allclose(np.sort(merges[:, 2]), Z[:, 2], rtol=1e-12)
    for k in (2, 4, 7):
        labels, height = cut_merges(merges, 15, k)
        expected = cut_dendrogram(Z, k)
        assert len(set(zip(labels.tolist(), expected.tolist()))) == len(set(labels.tolist())) == k  # same partition
        assert height == pytest.approx(Z[15 - k, 2], rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_groups_merge_as_their_members_and_both_update_forms_agree_on_ties(seed):
    """A vertex of s identical objects behaves as those objects; on a coarse grid (many exact
    ties) both floating-point forms of the update give the same dendrogram."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 4, 8)
    D = distances(rng, 8, levels=4)
    members = np.repeat(np.arange(8), sizes)
    full = D[np.ix_(members, members)]
    objects = cut_merges(average_linkage(full.copy(), np.ones(members.shape[0])), members.shape[0], 3)[0]
    for update in ("fractions", "weighted-sum"):
        groups, _ = cut_merges(average_linkage(D.copy(), sizes, update=update), 8, 3)
        assert np.array_equal(groups[members], objects)


def test_ties_go_to_the_previous_chain_element_then_the_lowest_index():
    D = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    merges = average_linkage(D.copy(), np.ones(3))
    assert merges[:, :2].tolist() == [[0.0, 1.0], [0.0, 2.0]]
    assert cut_merges(merges, 3, 2)[0].tolist() == [0, 0, 1]


def test_linkage_on_groups_rounds_and_cuts():
    D = distances(np.random.default_rng(1), 6)
    for linkage in ("average", "single", "complete"):
        labels, height = linkage_on_groups(D.copy(), np.ones(6), 2, linkage)
        assert labels.shape == (6,) and set(labels.tolist()) == {0, 1} and height > 0


def test_unknown_update_is_refused():
    with pytest.raises(ValidationError, match=r"update must be one of \['fractions', 'weighted-sum'\], got 'mean'"):
        average_linkage(np.zeros((2, 2)), np.ones(2), update="mean")
