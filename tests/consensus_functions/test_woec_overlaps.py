"""The compiled pass behind WOEC's object weights and the meta-graph's entry count
(``cclust/_ext/src/overlaps.cpp``) against slow, obviously correct Python, and the meta-graph's
refusal on a sampled count."""
import numpy as np
import pytest

import cclust
from cclust.consensus_functions.graph import mcla
from cclust.consensus_functions.woec import object_weights, womc
from cclust.errors import MemoryBudgetError
from cclust.graph._meta import _META_GRAPH_ENTRY_BYTES, _META_GRAPH_LABEL_BYTES, _SAMPLE_STRIDE, cluster_overlaps
from factories import random_labels


def reference_sums(labels, weights):
    """``sum_j A_xj`` and ``sum_j A_xj^2`` from the dense co-association, pair by pair of
    objects (no missing label)."""
    n, r = labels.shape
    A = np.zeros((n, n))
    for i in range(r):
        A += weights[i] * (labels[:, i][:, None] == labels[:, i][None, :])
    return A.sum(axis=1), (A * A).sum(axis=1)


def reference_entries(labels):
    """Pairs of clusters (c in partition i, c' in partition i') that share an object, every
    ordered pair of partitions (the diagonal blocks included), from the labels' set of pairs."""
    n, r = labels.shape
    cells = set()
    for x in range(n):
        for i in range(r):
            for j in range(r):
                if labels[x, i] >= 0 and labels[x, j] >= 0:
                    cells.add((i, int(labels[x, i]), j, int(labels[x, j])))
    return len(cells)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sums_match_the_dense_coassociation(seed):
    """To 1e-12 relative: the pass adds the same terms in another order than the dense rows."""
    rng = np.random.default_rng(seed)
    labels = random_labels(rng, 120, rng.integers(2, 12, size=9))
    w = rng.random(9) + 0.1
    E = cclust.Ensemble(labels, weights=w)
    entries, row_sum, row_sq = cluster_overlaps(E, sums=True)
    ref_sum, ref_sq = reference_sums(E.labels, E.weights)
    np.testing.assert_allclose(row_sum, ref_sum, rtol=1e-12)
    np.testing.assert_allclose(row_sq, ref_sq, rtol=1e-12)
    assert entries == reference_entries(E.labels)


@pytest.mark.parametrize("missing", [0.0, 0.3], ids=["complete", "missing"])
@pytest.mark.parametrize("ks", [(3, 5, 4, 2), (300, 7, 260), (70000, 3)], ids=["uint8", "uint16", "int32"])
def test_entries_are_the_one_hot_products_nonzeros_for_every_code_width(ks, missing):
    rng = np.random.default_rng(7)
    n = max(200, max(ks) + 10)
    labels = random_labels(rng, n, ks, missing)
    labels[np.arange(max(ks)) % n, np.argmax(ks)] = np.arange(max(ks))  # every cluster used
    E = cclust.Ensemble(labels)
    assert E.compact_labels().dtype == {5: np.uint8, 300: np.uint16, 70000: np.int32}[max(ks)]
    B = E.one_hot()
    assert cluster_overlaps(E)[0] == (B.T @ B).nnz
    if n <= 400:
        assert cluster_overlaps(E)[0] == reference_entries(E.labels)


def test_the_sampled_count_is_the_count_on_those_objects_and_a_lower_bound():
    rng = np.random.default_rng(3)
    E = cclust.Ensemble(random_labels(rng, 1000, (20, 30, 40, 25), missing=0.1))
    for stride in (1, 2, 7, 64):
        sampled = cluster_overlaps(E, stride=stride)[0]
        assert sampled == cluster_overlaps(E.take(objects=np.arange(0, 1000, stride)))[0]
        assert sampled <= cluster_overlaps(E)[0]


def test_one_and_two_threads_give_the_same_bits():
    from cclust._ext._contingency import cluster_overlaps as kernel

    rng = np.random.default_rng(5)
    E = cclust.Ensemble(random_labels(rng, 20000, rng.integers(5, 60, size=12)), weights=rng.random(12) + 0.5)
    args = (E.compact_labels(), np.asarray(E.offsets, dtype=np.int64), np.asarray(E.weights))
    one, two = kernel(*args, 1, 1), kernel(*args, 1, 2)
    assert one[0] == two[0]
    assert one[1].tobytes() == two[1].tobytes() and one[2].tobytes() == two[2].tobytes()


def test_labels_out_of_range_raise_rather_than_crash():
    from cclust._ext._contingency import cluster_overlaps as kernel

    labels = np.array([[0, 1], [1, 5]], dtype=np.int32)
    with pytest.raises(ValueError, match="object 1"):
        kernel(labels, np.array([0, 2, 4], dtype=np.int64), None, 1, 1)


def test_object_weights_follow_eq_3_and_4_from_the_dense_coassociation(seed):
    rng = np.random.default_rng(seed)
    E = cclust.Ensemble(random_labels(rng, 90, (3, 4, 5, 6, 2, 3, 4, 8, 9, 3)))
    A = np.zeros((90, 90))
    for i in range(E.n_partitions):
        A += E.weights[i] * (E.labels[:, i][:, None] == E.labels[:, i][None, :])
    expected = (4 / 90 * (A * (1 - A)).sum(axis=1) + 0.01) / 1.01
    np.testing.assert_allclose(object_weights(E), expected, rtol=1e-12, atol=1e-15)


def test_womc_with_its_own_weights_equals_womc_given_them(seed):
    rng = np.random.default_rng(seed)
    E = cclust.Ensemble(random_labels(rng, 300, (4, 5, 6, 3, 4, 5, 8)))
    own = womc(E, 3, random_state=0)
    given = womc(E, 3, object_weights=object_weights(E), random_state=0)
    assert np.array_equal(own.labels, given.labels)
    assert own.extras["object_weights"].tobytes() == given.extras["object_weights"].tobytes()


@pytest.mark.parametrize("method", [mcla, womc])
def test_a_meta_graph_far_over_the_budget_refuses_on_the_sampled_count(method):
    """Many noisy partitions of many clusters: the pairs of clusters met on every 64th object
    already need more than the budget, so the refusal comes before the exact count."""
    rng = np.random.default_rng(0)
    E = cclust.Ensemble(random_labels(rng, 40 * _SAMPLE_STRIDE, rng.integers(40, 60, size=20)))
    exact = cluster_overlaps(E)[0]
    with pytest.raises(MemoryBudgetError, match=f"at least .* counted on every {_SAMPLE_STRIDE}th object") as info:
        method(E, 3, random_state=0, max_bytes=10**5)
    assert "hbgf or kcc" in str(info.value) and "needs at least" in str(info.value)
    assert "pass a max_bytes above" in str(info.value)      # the bound is not a figure that would fit
    bound = int(str(info.value).split("at least ")[1].split()[0])
    assert 0 < bound < exact
    eighth = cluster_overlaps(E, stride=8)[0]
    assert bound < eighth < exact
    one_hot = _META_GRAPH_LABEL_BYTES * E.labels.size
    with pytest.raises(MemoryBudgetError, match="at least .* counted on every 8th object"):
        # the 64th's bound fits, the 8th's does not
        method(E, 3, random_state=0, max_bytes=_META_GRAPH_ENTRY_BYTES * bound + one_hot)
    with pytest.raises(MemoryBudgetError, match=f"\\({exact} pairs of clusters"):
        # the bound fits, the exact count does not
        method(E, 3, random_state=0, max_bytes=_META_GRAPH_ENTRY_BYTES * exact + one_hot - 1)


def _blobs_and_ensemble(n, r, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, size=n)
    X = rng.normal(0.0, 6.0, size=(4, 2))[truth] + rng.normal(size=(n, 2))
    labels = np.column_stack([truth * 3 + rng.integers(0, 3, size=n) for _ in range(r)])
    return X, cclust.Ensemble(labels)


def test_wokmeans_asks_the_budget_first_for_about_its_measured_peak():
    """The figure n (64 + 8 d) against the resident set the call adds, at two sizes (1.06-1.08
    times the peak when measured at 2 * 10^5 and 4 * 10^5 objects)."""
    from cclust.testing import peak_memory

    problems = [_blobs_and_ensemble(n, 5) for n in (100000, 200000)]
    peaks = peak_memory(problems, [("wokmeans", {"n_init": 2})], n_clusters=4,
                        env={"CCLUST_MEMORY_BUDGET": str(2**40)})
    for (X, E), peak in zip(problems, peaks):
        if peak["wokmeans"].get("source") != "rss":
            pytest.skip("the resident-set high-water mark cannot be reset here")
        figure = peak["wokmeans"]["asked"]
        assert figure == E.n_samples * (64 + 8 * 2)
        assert figure / 1.5 <= peak["wokmeans"]["bytes"] <= 1.5 * figure, (E.n_samples, peak)
    X, E = problems[0]
    from cclust.consensus_functions.woec import wokmeans

    with pytest.raises(MemoryBudgetError, match="wokmeans on 100000 objects"):
        wokmeans(E, 4, X=X, max_bytes=10**6)
