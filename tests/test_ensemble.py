import pickle
import re

import numpy as np
import pytest

from cclust import Ensemble
from cclust.errors import MemoryBudgetError, ValidationError


def brute_coassociation(labels, weights):
    """A[x, y] = sum_i w_i [same] / sum_i w_i [both labelled], straight from the definition."""
    n, r = labels.shape
    A = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            num = den = 0.0
            for i in range(r):
                if labels[x, i] >= 0 and labels[y, i] >= 0:
                    den += weights[i]
                    num += weights[i] * (labels[x, i] == labels[y, i])
            A[x, y] = num / den if den > 0 else 0.0
    return A


def random_labels(rng, n, r, k_max=5, missing=0.0):
    L = rng.integers(0, k_max, size=(n, r))
    if missing:
        L[rng.random((n, r)) < missing] = -1
        L[0] = 0  # every partition labels at least one object
    return L


class TestConstruction:
    def test_relabels_each_partition_in_sorted_order(self):
        E = Ensemble(np.array([[10, -5], [30, 7], [10, 7], [20, -5]]), missing=None)
        assert E.labels.tolist() == [[0, 0], [2, 1], [0, 1], [1, 0]]
        assert E.n_clusters.tolist() == [3, 2]
        assert E.offsets.tolist() == [0, 3, 5]
        assert E.labels.dtype == np.int32

    @pytest.mark.parametrize(
        "column, expected",
        [
            (["b", "a", None, "b"], [1, 0, -1, 1]),
            ([2.0, np.nan, 5.0, 2.0], [0, -1, 1, 0]),
            ([3, -1, 3, 9], [0, -1, 0, 1]),
            ([True, False, True, True], [1, 0, 1, 1]),
            (np.array([7, 7, 1000000, 7], dtype=np.uint64), [0, 0, 1, 0]),
        ],
        ids=["strings-None", "floats-NaN", "ints-minus-one", "bools", "uint64-gap"],
    )
    def test_missing_markers_and_value_types(self, column, expected):
        assert Ensemble([column]).labels[:, 0].tolist() == expected

    def test_list_of_partitions_and_dataframe_agree_with_matrix(self):
        pd = pytest.importorskip("pandas")
        M = np.array([[0, 1], [0, 0], [1, 0]])
        a = Ensemble(M)
        b = Ensemble([M[:, 0], M[:, 1]])
        c = Ensemble(pd.DataFrame({"p": ["x", "x", "y"], "q": [1, 0, 0]}))
        assert a == b == c

    def test_one_dimensional_input_is_one_partition(self):
        E = Ensemble([4, 4, 2])
        assert E.shape == (3, 1)

    def test_weights_are_normalised(self):
        E = Ensemble(np.zeros((3, 4), dtype=int), weights=[1, 1, 2, 0])
        assert E.weights.tolist() == [0.25, 0.25, 0.5, 0.0]
        assert Ensemble(np.zeros((3, 4), dtype=int)).weights.tolist() == [0.25] * 4

    def test_never_mutates_and_is_read_only(self):
        M = np.array([[5, 1], [-1, 2], [5, 2]])
        before = M.copy()
        w = np.array([3.0, 1.0])
        E = Ensemble(M, weights=w)
        assert np.array_equal(M, before) and w.tolist() == [3.0, 1.0]
        assert M.flags.writeable
        with pytest.raises(ValueError):
            E.labels[0, 0] = 3
        with pytest.raises(ValueError):
            E.weights[0] = 3
        with pytest.raises(AttributeError):
            E.labels = M

    def test_pickle_round_trip_and_take(self):
        E = Ensemble(np.array([[0, 1, 2], [0, 1, 1], [1, 0, 2], [1, 1, 0]]), weights=[1, 2, 3])
        assert pickle.loads(pickle.dumps(E)) == E
        sub = E.take(objects=[3, 2, 1], partitions=[2, 0])
        assert sub.labels.tolist() == [[0, 1], [2, 1], [1, 0]]
        assert np.allclose(sub.weights, [0.75, 0.25])


class TestBadInput:
    @pytest.mark.parametrize(
        "labels, match",
        [
            (np.zeros((2, 2, 2), dtype=int), r"labels must be 1-D .* or 2-D"),
            (np.zeros((3, 0), dtype=int), r"at least one partition"),
            ([], r"at least one partition"),
            (np.zeros((0, 3), dtype=int), r"n_samples = 0"),
            ([[0, 1, 1], [0, 1]], r"different lengths"),
            (np.array([[0.5, 1.0], [1.0, 2.0]]), r"not whole numbers"),
            (np.array([[0, -1], [1, -1]]), r"labels\[:, 1\] labels no object"),
            (np.array([[np.inf], [1.0]]), r"infinity"),
        ],
        ids=["3-D", "no-partitions", "empty-list", "n-zero", "ragged", "fractional", "all-missing", "inf"],
    )
    def test_bad_labels(self, labels, match):
        with pytest.raises(ValidationError, match=match):
            Ensemble(labels)

    @pytest.mark.parametrize(
        "weights, match",
        [
            ([1.0, -1.0], "non-negative"),
            ([1.0, np.nan], "NaN"),
            ([1.0, 1.0, 1.0], r"one entry per partition \(2\)"),
            ([0.0, 0.0], "all zero"),
            ("heavy", "weights"),
        ],
        ids=["negative", "nan", "wrong-length", "all-zero", "not-numbers"],
    )
    def test_bad_weights(self, weights, match):
        with pytest.raises(ValidationError, match=match):
            Ensemble(np.zeros((3, 2), dtype=int), weights=weights)


class TestViews:
    @pytest.mark.parametrize("missing", [0.0, 0.3], ids=["complete", "missing30"])
    @pytest.mark.parametrize("weighted", [False, True], ids=["equal", "weighted"])
    def test_coassociation_matches_definition(self, rng, missing, weighted):
        L = random_labels(rng, 25, 6, missing=missing)
        w = rng.random(6) + 0.1 if weighted else None
        E = Ensemble(L, weights=w)
        expected = brute_coassociation(E.labels, E.weights)
        assert np.allclose(E.coassociation(), expected, atol=1e-12)
        assert np.allclose(E.coassociation(sparse=True).toarray(), expected, atol=1e-12)
        assert np.allclose(E.coassociation(dtype=np.float32), expected, atol=1e-6)
        assert E.coassociation().max() <= 1.0 and E.coassociation(sparse=True).max() <= 1.0

    def test_coassociation_refuses_past_budget_with_bytes(self):
        E = Ensemble(np.zeros((1000, 2), dtype=int))
        with pytest.raises(MemoryBudgetError, match=r"\((\d+) bytes\).*max_bytes=\1") as info:
            E.coassociation(max_bytes=10_000)
        need = int(re.search(r"max_bytes=(\d+)", str(info.value)).group(1))
        # The estimate covers at least the matrix itself, and the budget it names is enough.
        assert need >= 1000 * 1000 * 8
        assert "knn_coassociation" in str(info.value)
        assert E.coassociation(max_bytes=need).shape == (1000, 1000)
        with pytest.raises(MemoryBudgetError, match="sparse co-association"):
            E.coassociation(sparse=True, max_bytes=10_000)

    def test_one_hot_is_sparse_and_matches_labels(self, rng):
        L = random_labels(rng, 30, 4, missing=0.2)
        E = Ensemble(L)
        B = E.one_hot()
        assert B.format == "csr" and B.shape == (30, int(E.n_clusters.sum()))
        dense = B.toarray()
        for i in range(E.n_partitions):
            block = dense[:, E.offsets[i]:E.offsets[i + 1]]
            labelled = E.labels[:, i] >= 0
            assert np.array_equal(block[labelled].argmax(1), E.labels[labelled, i])
            assert not block[~labelled].any()

    @pytest.mark.parametrize("n_threads", [1, 2])
    def test_contingency_matches_numpy(self, rng, n_threads):
        L = random_labels(rng, 20000, 7, k_max=9, missing=0.25)
        E = Ensemble(L)
        y = rng.integers(0, 4, size=20000)
        table = E.contingency(y, n_jobs=n_threads)
        for i, block in enumerate(E.contingency_blocks(y)):
            expected = np.zeros((4, E.n_clusters[i]), dtype=np.int64)
            keep = E.labels[:, i] >= 0
            np.add.at(expected, (y[keep], E.labels[keep, i]), 1)
            assert np.array_equal(block, expected)
            assert np.array_equal(table[:, E.offsets[i]:E.offsets[i + 1]], expected)

    def test_contingency_rejects_bad_labels(self):
        E = Ensemble(np.zeros((3, 2), dtype=int))
        with pytest.raises(ValidationError, match=r"shape \(3,\)"):
            E.contingency([0, 1])
        with pytest.raises(ValidationError, match=r"0\.\.1"):
            E.contingency([0, 1, 2], n_clusters=2)
        with pytest.raises(ValidationError, match="integers"):
            E.contingency(np.array([0.5, 1, 0]))


def test_cluster_sizes_count_labelled_members(rng):
    L = random_labels(rng, 50, 5, missing=0.3)
    E = Ensemble(L)
    sizes = E.cluster_sizes
    assert sizes.shape == (int(E.n_clusters.sum()),) and not sizes.flags.writeable
    for i in range(E.n_partitions):
        col = E.labels[:, i]
        expected = np.bincount(col[col >= 0], minlength=int(E.n_clusters[i]))
        assert np.array_equal(sizes[E.offsets[i]:E.offsets[i + 1]], expected)
    assert E.cluster_sizes is sizes  # cached


def test_an_ensemble_keeps_the_names_of_its_objects():
    import pickle

    pd = pytest.importorskip("pandas")
    import cclust
    from cclust.datasets import load_iris

    X, _ = load_iris()
    df = pd.DataFrame(X[::10], index=[f"plant{i}" for i in range(15)])
    E = cclust.generate("kmeans", df, 3, n_partitions=4, random_state=0)  # a DataFrame's index is kept
    assert E.index.tolist() == [f"plant{i}" for i in range(15)]
    assert E.take([3, 1]).index.tolist() == ["plant3", "plant1"]
    assert E.with_weights([1, 2, 3, 4]).index.tolist() == E.index.tolist()
    assert pickle.loads(pickle.dumps(E)).index.tolist() == E.index.tolist()
    assert cclust.generate("kmeans", X[::10], 3, n_partitions=4, random_state=0).index is None
    named = Ensemble(E.labels, index="abcdefghijklmno")
    assert named.index == tuple("abcdefghijklmno") and named.take(np.array([0, 2])).index == ("a", "c")
    assert Ensemble(named).index == named.index
    with pytest.raises(ValidationError, match="index must name each of the 15 objects, got 2 names"):
        Ensemble(E.labels, index=["a", "b"])


# -- the canonical form and the groups of identical rows ----------------------------------------

def test_canonical_form_ignores_cluster_names_and_partition_order():
    labels = np.array([[2, 0, 1], [2, 1, 1], [0, 1, 0], [1, 0, 0]])
    renamed = np.column_stack([labels[:, 2] + 5, (labels[:, 0] + 1) % 3, labels[:, 1]])  # permuted, renamed
    C = Ensemble(labels).canonical()
    assert np.array_equal(Ensemble(renamed).canonical().labels, C.labels)
    assert C.labels[0].tolist() == [0, 0, 0]           # first object's clusters are numbered 0
    np.testing.assert_array_equal(C.coassociation(), Ensemble(labels).coassociation())


def test_canonical_form_is_cached_and_keeps_weights_provenance_and_index():
    labels = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [0, 0, 1]])
    E = Ensemble(labels, weights=[0.5, 0.3, 0.2], provenance=["a", "b", "c"], index=["w", "x", "y", "z"])
    C, columns = E.canonical(return_columns=True)
    assert E.canonical() is C and C.canonical() is C
    for j, col in enumerate(columns):   # each canonical partition is its input column, renamed
        assert Ensemble(C.labels[:, j]).coassociation().tolist() == Ensemble(E.labels[:, col]).coassociation().tolist()
    assert C.weights.tolist() == E.weights[columns].tolist()          # permuted, bit for bit
    assert C.provenance == tuple(E.provenance[j] for j in columns)
    assert C.index == E.index
    assert not C.labels.flags.writeable
    columns[:] = 0                                                      # the caller's copy only
    assert sorted(E.canonical(return_columns=True)[1].tolist()) == [0, 1, 2]


def test_derived_ensembles_do_not_share_cached_views():
    labels = np.array([[0, 0], [0, 0], [1, 1], [1, 0], [2, 1]])
    E = Ensemble(labels)
    C, groups = E.canonical(), E.distinct_rows()
    assert E.n_distinct_rows == 4
    heavier = E.with_weights([0.9, 0.1])
    assert C.weights.tolist() == [0.5, 0.5]
    assert heavier.canonical().weights.tolist() == [0.1, 0.9]   # the second column sorts first
    fewer = E.take(objects=[0, 2, 3])
    assert fewer.distinct_rows() is None and fewer.n_distinct_rows == 3
    assert fewer.canonical().n_samples == 3
    copy = pickle.loads(pickle.dumps(E))
    assert copy.canonical() is not C and np.array_equal(copy.canonical().labels, C.labels)
    assert E.distinct_rows() is groups


def test_distinct_rows_group_identically_labelled_objects_read_only():
    labels = np.array([[0, 1], [1, -1], [0, 1], [1, -1], [1, 0]])
    first, inverse, counts = Ensemble(labels).distinct_rows()
    assert first.tolist() == [0, 1, 4] and inverse.tolist() == [0, 1, 0, 1, 2] and counts.tolist() == [2, 2, 1]
    with pytest.raises(ValueError):
        inverse[0] = 1
    assert Ensemble(np.arange(4)).distinct_rows() is None and Ensemble(np.arange(4)).n_distinct_rows == 4


def test_labelled_weight_and_unlabelled_objects_read_the_codes_by_blocks():
    """Both read the codes a block of rows at a time (no float64 copy of every label); the sums
    are NumPy's row sums, the same whatever BLAS does, and the refusal finds an unlabelled
    object in any block."""
    from cclust.ensemble import labelled_weight, require_every_object_labelled

    rng = np.random.default_rng(5)
    L = rng.integers(0, 4, size=(70_001, 9))
    L[rng.random(L.shape) < 0.2] = -1
    L[:, 0] = np.maximum(L[:, 0], 0)
    E = Ensemble(L, weights=rng.random(9) + 0.1)
    assert np.array_equal(labelled_weight(E), np.where(L >= 0, E.weights, 0.0).sum(axis=1))
    require_every_object_labelled(E, "ecpcs", "places objects through their clusters")
    L[[3, 40_000, 70_000]] = -1
    with pytest.raises(ValidationError, match=r"3 object\(s\) are missing from every partition.*\[3, 40000, 70000\]"):
        require_every_object_labelled(Ensemble(L), "ecpcs", "places objects through their clusters")
