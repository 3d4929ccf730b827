"""The compact label codes (:meth:`cclust.Ensemble.compact_labels`): the Ensemble stores them in
the narrowest type, and every compiled pass that reads labels gives bitwise the same results from
uint8, uint16 and int32 codes (int32 is the layout the references check)."""
import numpy as np
import pytest

from cclust import Ensemble
from cclust.errors import ValidationError
from cclust._ext import _kmeans as km
from cclust._ext import _voting as vt
from reference_kmeans import UC, UH, ULP
from test_kmeans_engine import bitwise_equal, make_rows

WIDTHS = [np.uint8, np.uint16]


def as_codes(labels, dtype):
    """int32 labels (-1 = missing) as codes of ``dtype`` (the missing label is its largest value)."""
    return np.ascontiguousarray(labels.astype(dtype))


# n = 2048 with few distinct rows: the engine groups identical rows (from 1024 objects), so both
# its grouped and its row-by-row passes are read in every width.
ENGINE_CASES = {
    "uc-grouped": dict(n=2048, r=3, k_max=3, missing=0.1),
    "uh-missing": dict(n=300, r=6, distance=UH, missing=0.3),
    "ulp-mixed": dict(n=300, r=4, d=2, distance=ULP, p=3.0, missing=0.2),
    "wide-k": dict(n=400, r=5, k_max=127, missing=0.2),     # the most clusters uint8 codes hold
}


@pytest.mark.parametrize("dtype", WIDTHS, ids=lambda t: t.__name__)
@pytest.mark.parametrize("case", list(ENGINE_CASES))
def test_engine_passes_read_every_width_alike(case, dtype):
    spec = dict(ENGINE_CASES[case])
    n = spec.pop("n")
    rng = np.random.default_rng(7)
    rows = make_rows(rng, n, **spec)
    compact = rows[:2] + (as_codes(rows[2], dtype),) + rows[3:]
    k = 5
    init = rng.integers(0, k, n).astype(np.int32)
    uniforms = rng.random((k - 1, 3))
    for threads in (1, 2):
        want = km.lloyd(*rows, init, k, 30, 0.0, threads)
        got = km.lloyd(*compact, init, k, 30, 0.0, threads)
        assert all(bitwise_equal(a, b) for a, b in zip(want, got))
        dense, cat = want[5], want[6]
        assert all(bitwise_equal(a, b) for a, b in zip(km.assign(*rows, dense, cat, threads),
                                                         km.assign(*compact, dense, cat, threads)))
        assert all(bitwise_equal(a, b) for a, b in zip(km.tally(*rows, init, k, threads),
                                                         km.tally(*compact, init, k, threads)))
        assert bitwise_equal(km.kmeanspp(*rows, k, 3, uniforms, threads),
                             km.kmeanspp(*compact, k, 3, uniforms, threads))


def test_engine_names_a_bad_code_as_a_label():
    rows = make_rows(np.random.default_rng(0), 50, r=3, k_max=4)
    codes = as_codes(rows[2], np.uint8)
    codes[17, 1] = 200
    with pytest.raises(ValueError, match=r"label 200 of partition 1 at row 17"):
        km.tally(*rows[:2], codes, *rows[3:], np.zeros(50, dtype=np.int32), 1, 1)
    with pytest.raises(ValueError, match="int32, uint16 or uint8"):
        km.tally(*rows[:2], codes.astype(np.int64), *rows[3:], np.zeros(50, dtype=np.int32), 1, 1)


@pytest.mark.parametrize("dtype, code", [(np.uint8, 127), (np.uint8, 130), (np.uint8, 254), (np.uint16, 32767),
                                         (np.uint16, 40000), (np.uint16, 65534)])
def test_a_narrow_code_past_its_signed_top_is_a_bad_label_named_as_stored(dtype, code):
    """The passes read a narrow code as signed (its label, the missing code -1), so a stored
    value past the signed top reads as 127 / 32767 or as a label below -1: each is refused as
    bad and named by the value stored, in the engine's, the voting and the BCE checks."""
    from cclust._ext import _bayesian

    rows = make_rows(np.random.default_rng(0), 50, r=3, k_max=4)
    codes = as_codes(rows[2], dtype)
    codes[17, 1] = code
    with pytest.raises(ValueError, match=fr"label {code} of partition 1 at row 17"):
        km.tally(*rows[:2], codes, *rows[3:], np.zeros(50, dtype=np.int32), 1, 1)
    with pytest.raises(ValueError, match=fr"label {code} of object 17 in partition 1"):
        vt.label_sums(codes, rows[3], np.ones((50, 2)), 2)
    with pytest.raises(ValueError, match=fr"label {code} of row 17 in partition 1"):
        _bayesian.e_step(codes, rows[3], np.ones(50), np.ones(3), np.ones(2), np.full((int(rows[3][-1]), 2), 0.5),
                         np.ones((50, 2)), 1e-6, 1, 1)


@pytest.mark.parametrize("dtype, k", [(np.uint8, 128), (np.uint16, 32768)])
def test_narrow_codes_of_more_clusters_than_their_layout_holds_are_refused(dtype, k):
    """uint8 codes hold partitions of at most 127 clusters and uint16 codes 32767 (the Ensemble
    widens past them); a kernel handed more says which partition and to pass wider codes."""
    rows = list(make_rows(np.random.default_rng(1), 60, r=2, k_max=4))
    rows[3] = rows[3].copy()
    rows[3][2] = rows[3][1] + k                        # partition 1 has k clusters
    codes = as_codes(rows[2], dtype)
    message = fr"partition 1 has {k} clusters, more than codes of {np.dtype(dtype).itemsize} byte\(s\) hold"
    with pytest.raises(ValueError, match=message):
        km.tally(*rows[:2], codes, *rows[3:], np.zeros(60, dtype=np.int32), 1, 1)
    with pytest.raises(ValueError, match=message):
        vt.label_sums(codes, rows[3], np.ones((60, 2)), 2)
    km.tally(*rows, np.zeros(60, dtype=np.int32), 1, 1)    # int32 codes of the same partitions pass


@pytest.mark.parametrize("dtype", WIDTHS, ids=lambda t: t.__name__)
def test_voting_passes_read_every_width_alike(dtype):
    rng = np.random.default_rng(3)
    _, _, labels, offsets, _, _, _ = make_rows(rng, 500, r=7, k_max=9, missing=0.25)
    codes = as_codes(labels, dtype)
    k = 4
    table = rng.random((int(offsets[-1]), k))
    table[rng.random(table.shape) < 0.7] = 0.0
    allowed = np.array([1, 0, 1, 1], dtype=np.uint8)
    rows, cols = np.nonzero(table)
    indptr = np.zeros(table.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=table.shape[0]), out=indptr[1:])
    sparse = (indptr, cols.astype(np.int32), np.ascontiguousarray(table[rows, cols]), k)
    modes = np.where(rng.random((k, 7)) < 0.2, -2, rng.integers(0, 3, (k, 7))).astype(np.int32)
    for threads in (1, 2):
        assert bitwise_equal(vt.scores(labels, offsets, table, threads), vt.scores(codes, offsets, table, threads))
        for a, b in zip(vt.argmax(labels, offsets, table, allowed, threads),
                        vt.argmax(codes, offsets, table, allowed, threads)):
            assert bitwise_equal(a, b)
        for a, b in zip(vt.argmax_sparse(labels, offsets, *sparse, allowed, threads),
                        vt.argmax_sparse(codes, offsets, *sparse, allowed, threads)):
            assert bitwise_equal(a, b)
        for a, b in zip(vt.mode_argmax(labels, modes, allowed, threads),
                        vt.mode_argmax(codes, modes, allowed, threads)):
            assert bitwise_equal(a, b)
    ranks = vt.first_appearance(codes, offsets)
    assert ranks.dtype == dtype
    assert bitwise_equal(as_codes(vt.first_appearance(labels, offsets), dtype), ranks)


def label_sums_reference(labels, offsets, values):
    """B^T V by loops: row offsets[j] + l adds the values of the objects with label l in j, in
    object order (a missing label, -1, adds nothing)."""
    out = np.zeros((int(offsets[-1]), values.shape[1]))
    for x in range(labels.shape[0]):
        for j in range(labels.shape[1]):
            if labels[x, j] >= 0:
                out[offsets[j] + labels[x, j]] += values[x]
    return out


@pytest.mark.parametrize("n_columns", [5, 1])   # one column: the transfer cut's products, a loop of its own
@pytest.mark.parametrize("dtype", [np.int32] + WIDTHS, ids=lambda t: t.__name__)
def test_label_sums_are_the_one_hot_transpose_product_in_every_width(dtype, n_columns):
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    _, _, labels, offsets, _, _, _ = make_rows(rng, 700, r=9, k_max=12, missing=0.2)
    values = rng.normal(size=(700, n_columns))
    want = label_sums_reference(labels, offsets, values)
    present = labels >= 0
    rows = np.nonzero(present)[0]
    B = sp.csr_matrix((np.ones(rows.shape[0]), (rows, (offsets[:-1][None, :] + labels)[present])),
                      shape=(700, int(offsets[-1])))
    codes = labels if dtype == np.int32 else as_codes(labels, dtype)
    for threads in (1, 2, 3):
        got = vt.label_sums(codes, offsets, values, threads)
        assert bitwise_equal(got, want)                  # objects summed in order, as the loops do
        assert bitwise_equal(got, np.asarray(B.T @ values))
    assert vt.label_sums(codes[:0], offsets, values[:0], 2).shape == want.shape


@pytest.mark.parametrize("n_columns", [2, 1])
def test_label_sums_name_a_bad_label_and_a_bad_shape(n_columns):
    rng = np.random.default_rng(2)
    _, _, labels, offsets, _, _, _ = make_rows(rng, 40, r=3, k_max=4)
    codes = as_codes(labels, np.uint8)
    codes[23, 2] = 9
    codes[31, 0] = 7          # a later object: the first one is named, whichever thread meets it
    for threads in (1, 2, 3):
        with pytest.raises(ValueError, match=r"label 9 of object 23 in partition 2"):
            vt.label_sums(codes, offsets, np.ones((40, n_columns)), threads)
    with pytest.raises(ValueError, match="values has 39 rows, expected 40"):
        vt.label_sums(labels, offsets, np.ones((39, 2)), 2)
    with pytest.raises(ValueError, match="offsets has 3 entries, expected 4"):
        vt.label_sums(labels, offsets[:-1], np.ones((40, 2)), 2)


@pytest.mark.parametrize("k, dtype", [(2, np.uint8), (127, np.uint8), (128, np.uint16), (32767, np.uint16),
                                      (32768, np.int32)])
def test_compact_view_is_the_narrowest_type(k, dtype):
    labels = np.zeros((k + 1, 2), dtype=np.int64)
    labels[:k, 0] = np.arange(k)
    labels[k, 0] = -1
    labels[:, 1] = np.arange(k + 1) % 2
    E = Ensemble(labels)
    codes = E.compact_labels()
    assert codes.dtype == dtype and codes.flags.c_contiguous and not codes.flags.writeable
    missing = -1 if dtype is np.int32 else np.iinfo(dtype).max
    assert codes[k, 0] == missing and codes[k - 1, 0] == k - 1
    assert E.labels.dtype == np.int32 and not E.labels.flags.writeable
    np.testing.assert_array_equal(E.labels, labels)
    assert E.compact_labels() is codes and E.labels is E.labels   # cached, no copy


def test_compact_store_keeps_every_view_and_old_pickles():
    labels = np.array([[0, 1, -1], [1, 1, 0], [1, -1, 0], [0, 0, 2]])
    E = Ensemble(labels, weights=[1, 2, 3])
    assert E.has_missing and repr(E).endswith("2 missing labels)")
    np.testing.assert_array_equal(E.labelled, labels >= 0)
    np.testing.assert_array_equal(E.take(objects=[3, 0]).labels, [[0, 0, 0], [0, 1, -1]])
    np.testing.assert_array_equal(E.one_hot().toarray(), Ensemble(labels.astype(np.int32)).one_hot().toarray())
    old = {"labels": np.array(E.labels), "n_clusters": E.n_clusters, "weights": E.weights}
    restored = Ensemble.__new__(Ensemble)
    restored.__setstate__(old)                       # a pickle written before the compact store
    assert restored == E and restored.compact_labels().dtype == np.uint8
    canonical = E.canonical()
    assert canonical.compact_labels().dtype == np.uint8
    for column in canonical.labels.T:               # clusters renumbered by first appearance
        present = column[column >= 0]
        _, first = np.unique(present, return_index=True)
        assert np.all(np.diff(first) > 0) and present[0] == 0


def _assert_same_ensemble(a, b):
    assert a.compact_labels().dtype == b.compact_labels().dtype
    assert np.array_equal(a.compact_labels(), b.compact_labels())
    assert np.array_equal(a.labels, b.labels)
    assert np.array_equal(a.n_clusters, b.n_clusters) and np.allclose(a.weights, b.weights)
    assert a == b


@pytest.mark.parametrize("widths", [(5, 9), (5, 300), (300, 5), (300, 70_000), (70_000, 5)])
def test_join_writes_the_stacked_ensemble_from_the_codes(widths):
    """Ensemble.join equals the ensemble of the stacked int32 labels, whatever the codes' types
    on either side (uint8, uint16, int32) and with missing labels, whose code changes with the type."""
    rng = np.random.default_rng(sum(widths))
    n = 70_001 if max(widths) > 60_000 else 400
    parts = []
    for k in widths:
        L = [np.arange(n) % k, rng.integers(0, 3, size=n)]
        for column in L:
            column[rng.random(n) < 0.05] = -1
        parts.append(Ensemble(L, provenance=["a", "b"]))
    weights = rng.random(4) + 0.1
    joined = parts[0].join(parts[1], weights=weights)
    stacked = np.column_stack([parts[0].labels, parts[1].labels])
    _assert_same_ensemble(joined, Ensemble(stacked, weights=weights, provenance=["a", "b", "a", "b"]))
    equal = parts[0].join(parts[1])
    assert np.allclose(equal.weights, 0.25)


def test_join_refuses_other_objects_and_keeps_the_index():
    A = Ensemble([[0, 1, 1], [1, 1, 0]], index=["x", "y", "z"])     # two partitions of three objects
    B = Ensemble([[0, 0, 1]])
    assert A.join(B).index == A.index and A.join(B).provenance is None
    with pytest.raises(ValidationError, match="other labels 2 objects but this ensemble 3"):
        A.join(Ensemble([[0, 1]]))
    with pytest.raises(ValidationError, match="other must be an Ensemble"):
        A.join([[0, 1]])
