"""MCLA's and WOMC's meta-graph and association read from the stored label codes: the compiled
overlap table (``cclust/_ext/src/overlaps.cpp``, ``cluster_overlap_table``) against the slow
one-hot product ``B^T diag(w) B``, the Jaccard graph against the one the one-hot gave, and the
association H against the one-hot product ``B member``."""
import numpy as np
import pytest
import scipy.sparse as sp

import cclust
from cclust.graph import canonical_cluster_order, meta_graph, one_hot_in_order
from cclust.graph._meta import cluster_overlaps, overlap_table, participation, participation_of_codes
from factories import random_labels


def codes_of(labels, dtype):
    """The label matrix in one of the three stored layouts (missing: -1 in int32, the largest
    value in the unsigned types)."""
    if dtype == np.int32:
        return np.ascontiguousarray(labels, dtype=np.int32)
    return np.ascontiguousarray(np.where(labels < 0, np.iinfo(dtype).max, labels).astype(dtype))


def dense_one_hot(labels, offsets):
    n, r = labels.shape
    B = np.zeros((n, int(offsets[-1])))
    for j in range(r):
        for x in range(n):
            if labels[x, j] >= 0:
                B[x, offsets[j] + labels[x, j]] = 1.0
    return B


def reference_table(labels, offsets, w, order):
    """``B[:, order]^T diag(w) B[:, order]``, dense, from the one-hot written out object by object."""
    B = dense_one_hot(labels, offsets)[:, order]
    return B.T @ (w[:, None] * B)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("weighted", [False, True], ids=["counts", "object-weights"])
@pytest.mark.parametrize("missing", [0.0, 0.25], ids=["complete", "missing"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int32], ids=["uint8", "uint16", "int32"])
def test_the_overlap_table_is_the_one_hot_product(dtype, missing, weighted, n_threads):
    from cclust._ext._contingency import overlap_table as kernel

    rng = np.random.default_rng(11)
    ks = (4, 7, 3, 9, 5)
    labels = random_labels(rng, 150, ks, missing)
    offsets = np.concatenate([[0], np.cumsum(ks)]).astype(np.int64)
    n_c = int(offsets[-1])
    order = rng.permutation(n_c)
    rank = np.empty(n_c, dtype=np.int64)
    rank[order] = np.arange(n_c)
    w = rng.random(150) + 0.05 if weighted else np.ones(150)
    E = cclust.Ensemble(labels)
    nnz = cluster_overlaps(E)[0]
    indptr, indices, data = kernel(codes_of(labels, dtype), offsets, w if weighted else None, rank, nnz, n_threads)
    G = sp.csr_matrix((data, indices, indptr), shape=(n_c, n_c))
    expected = reference_table(labels, offsets, w, order)
    assert np.array_equal(G.toarray() != 0, expected != 0)
    assert G.nnz == nnz == np.count_nonzero(expected)
    for q in range(n_c):
        assert np.all(np.diff(indices[indptr[q]:indptr[q + 1]]) > 0)     # sorted, no repeat
    if weighted:
        np.testing.assert_allclose(G.toarray(), expected, rtol=1e-13, atol=0)
    else:
        assert np.array_equal(G.toarray(), expected)                    # integer counts: exact


def test_the_overlap_table_gives_the_same_bits_for_any_thread_count():
    from cclust._ext._contingency import overlap_table as kernel

    rng = np.random.default_rng(5)
    E = cclust.Ensemble(random_labels(rng, 20000, rng.integers(5, 60, size=12), missing=0.05))
    order = canonical_cluster_order(E)
    rank = np.empty_like(order, dtype=np.int64)
    rank[order] = np.arange(order.shape[0])
    w = rng.random(E.n_samples) + 0.1
    nnz = cluster_overlaps(E)[0]
    args = (E.compact_labels(), np.asarray(E.offsets, dtype=np.int64), w, rank, nnz)
    one = kernel(*args, 1)
    for n_threads in (2, 3):
        other = kernel(*args, n_threads)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(one, other))


def test_the_overlap_table_takes_an_upper_bound_and_refuses_too_little_room_or_a_wrong_rank():
    from cclust._ext._contingency import overlap_table as kernel

    rng = np.random.default_rng(2)
    E = cclust.Ensemble(random_labels(rng, 60, (3, 4, 5)))
    args = (E.compact_labels(), np.asarray(E.offsets, dtype=np.int64), None)
    nnz = cluster_overlaps(E)[0]
    rank = np.arange(12, dtype=np.int64)
    exact = kernel(*args, rank, nnz, 1)
    roomy = kernel(*args, rank, 144, 2)                 # every pair of clusters: an upper bound
    assert roomy[1].shape[0] == nnz and all(a.tobytes() == b.tobytes() for a, b in zip(exact, roomy))
    for wrong in (nnz - 1, 0):
        with pytest.raises(ValueError, match="the overlap table has"):
            kernel(*args, rank, wrong, 1)
    with pytest.raises(ValueError, match="rank must be a permutation"):
        kernel(*args, np.zeros(12, dtype=np.int64), nnz, 1)
    with pytest.raises(ValueError, match="rank has 11 entries"):
        kernel(*args, np.arange(11, dtype=np.int64), nnz, 1)


def one_hot_jaccard(E, object_weights=None):
    """The meta-graph as it was made from the one-hot: ``B^T diag(w) B`` by SciPy, divided by
    the unions."""
    order = canonical_cluster_order(E)
    B = one_hot_in_order(E, order).tocsc()
    w = np.ones(B.shape[0]) if object_weights is None else np.asarray(object_weights, dtype=np.float64)
    Bw = sp.diags(w) @ B
    mass = np.asarray(Bw.sum(axis=0)).reshape(-1)
    graph = (B.T @ Bw).tocsr()
    graph.sort_indices()
    union = mass[np.repeat(np.arange(B.shape[1]), np.diff(graph.indptr))] + mass[graph.indices] - graph.data
    graph.data = np.where(union > 0, graph.data / np.where(union > 0, union, 1.0), 0.0)
    return order, graph


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing"])
@pytest.mark.parametrize("seed", [0, 1])
def test_meta_graph_is_the_one_hot_jaccard(seed, missing):
    """Bit for bit without object weights (integer counts), to rounding with them."""
    rng = np.random.default_rng(seed)
    E = cclust.Ensemble(random_labels(rng, 400, rng.integers(2, 20, size=8), missing),
                        weights=rng.random(8) + 0.2)
    order, S = meta_graph(E)
    ref_order, ref = one_hot_jaccard(E)
    assert np.array_equal(order, ref_order)
    assert S.indptr.tobytes() == ref.indptr.tobytes() and S.indices.tobytes() == ref.indices.tobytes()
    assert S.data.tobytes() == ref.data.tobytes()
    w = rng.random(E.n_samples) + 0.05
    _, S_w = meta_graph(E, w)
    _, ref_w = one_hot_jaccard(E, w)
    assert np.array_equal(S_w.indices, ref_w.indices) and np.array_equal(S_w.indptr, ref_w.indptr)
    np.testing.assert_allclose(S_w.data, ref_w.data, rtol=1e-13, atol=0)


@pytest.mark.parametrize("weights", ["equal", "unequal"])
@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing"])
def test_the_association_from_the_codes_is_the_one_hot_product(missing, weights):
    """Bit for bit with equal partition weights (sums of equal terms in any order), to
    rounding otherwise; the labels then agree wherever the association has no near-tie."""
    rng = np.random.default_rng(4)
    r = 9
    E = cclust.Ensemble(random_labels(rng, 300, rng.integers(2, 10, size=r), missing),
                        weights=None if weights == "equal" else rng.random(r) + 0.2)
    order = canonical_cluster_order(E)
    n_c = order.shape[0]
    pw = np.repeat(E.weights, E.n_clusters)[order]
    parts = rng.integers(0, 4, size=n_c)
    parts[:4] = np.arange(4)
    B = one_hot_in_order(E, order)
    labels, H, moved = participation_of_codes(E, order, pw, parts, 4, np.random.default_rng(0))
    ref_labels, ref_H, ref_moved = participation(B, pw, parts, n_c, 4, np.random.default_rng(0))
    if weights == "equal":
        assert H.tobytes() == ref_H.tobytes()
        assert np.array_equal(labels, ref_labels) and moved == ref_moved
    else:
        np.testing.assert_allclose(H, ref_H, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("method", ["mcla", "womc"])
def test_mcla_and_womc_never_form_the_one_hot(method, monkeypatch):
    """The meta-graph, the vertex weights and the association come from the codes: a one-hot
    (``Ensemble.one_hot``, :func:`one_hot_in_order`) or the int32 label matrix is never made."""
    import cclust.graph._bipartite as bipartite

    labels = random_labels(np.random.default_rng(3), 500, (5, 6, 7, 4, 8))
    expected = cclust.consensus(method, cclust.Ensemble(labels), 3, random_state=0, sizes="equal").labels
    E = cclust.Ensemble(labels)
    assert E.compact_labels().dtype == np.uint8

    def refuse(*args, **kwargs):
        raise AssertionError("the one-hot was formed")

    monkeypatch.setattr(cclust.Ensemble, "one_hot", refuse)
    monkeypatch.setattr(bipartite, "one_hot_in_order", refuse)
    got = cclust.consensus(method, E, 3, random_state=0, sizes="equal")
    assert np.array_equal(got.labels, expected)
    assert "labels" not in E._cache
