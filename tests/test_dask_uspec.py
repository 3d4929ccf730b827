"""The Dask path of U-SPEC generation and of the transfer-cut consensus (Huang, Wang, Wu, Lai &
Kwoh 2020): the same labels for any chunking and as the in-memory path, on small sets."""
import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("dask")

import cclust
from cclust import dask as cdask
from cclust.datasets import load_iris, make_flower, make_moons
from cclust.errors import ValidationError
from cclust.metrics import ari
import reference_uspec as ref

N = 9000  # three 4096-row blocks, the last one partial


@pytest.fixture(scope="module")
def flower():
    return make_flower(N, random_state=0)


@pytest.fixture(scope="module")
def generated(flower):
    X, _ = flower
    # 300 representatives rather than the default 1000: chunking cuts the objects into blocks, not
    # the representatives, and fewer of them make each block's neighbour search cheaper
    params = dict(n_partitions=2, n_representatives=300, random_state=3)
    in_memory = cclust.generate("uspec", X, 10, n_jobs=1, **params)
    small = cdask.uspec_ensemble(X, 10, chunks=4096, **params)
    large = cdask.uspec_ensemble(X, 10, chunks=8192, **params)
    return in_memory, small, large


def test_uspec_generation_same_for_any_chunking_and_as_in_memory(generated):
    in_memory, small, large = generated
    assert isinstance(small, cdask.DaskEnsemble) and len(small.labels.chunks[0]) == 3
    a, b = small.compute().labels, large.compute().labels
    assert np.array_equal(a, b)
    assert np.array_equal(a, in_memory.labels)


def test_tcut_same_for_any_chunking_and_as_in_memory(flower):
    # A connected cluster graph (k-means partitions with K_i in 10..20): a cluster graph of few
    # partitions may fall into components, whose repeated eigenvalue 1 leaves the eigenvectors
    # (and the k-means on them) to the rounding of any implementation.
    X, y = flower
    in_memory = cclust.generate("kmeans", X, 10, n_partitions=8, k_range=(10, 20), random_state=0)
    expected = cclust.consensus("tcut", in_memory, 10, random_state=1)
    for chunks in (4096, 12288):
        got = cdask.tcut(in_memory, 10, random_state=1, chunks=chunks)
        assert np.array_equal(got.labels, expected.labels)
        assert got.extras["backend"] == "dask"
        np.testing.assert_allclose(got.extras["eigenvalues"], expected.extras["eigenvalues"], atol=1e-10)


def test_tcut_with_weights_and_missing_labels():
    rng = np.random.default_rng(0)
    X, y = load_iris()
    E = cclust.generate("kmeans", X, 3, n_partitions=6, random_state=0)
    labels = E.labels.copy()
    labels[rng.random(labels.shape) < 0.1] = -1
    labels[:, 0] = E.labels[:, 0]  # every object keeps a label
    E = cclust.Ensemble(labels, weights=[3, 1, 1, 2, 1, 1])
    expected = cclust.consensus("tcut", E, 3, random_state=0)
    got = cdask.tcut(cdask.from_array(E, chunks=64), 3, random_state=0)
    assert np.array_equal(got.labels, expected.labels)


def test_usenc_on_row_blocks_is_the_in_memory_usenc():
    X, y = make_moons(5000, random_state=1)
    expected = cclust.get("usenc")(None, 2, X=X, n_partitions=3, random_state=0)
    got = cdask.usenc(X, 2, n_partitions=3, random_state=0, chunks=4096)
    assert np.array_equal(got.labels, expected.labels)
    assert got.extras["n_generated"] == 3 and ari(got.labels, y) > 0.95


def test_bad_arguments_name_the_argument():
    X, _ = make_moons(300, random_state=0)
    E = cclust.generate("kmeans", X, 2, n_partitions=2, random_state=0, k_range=(2, 2))
    with pytest.raises(ValidationError, match="n_clusters"):
        cdask.tcut(E, 5, random_state=0)
    with pytest.raises(ValidationError, match="k_range"):
        cdask.uspec_ensemble(X, 2, k_range=(2, 40), n_representatives=30, n_partitions=1)
    with pytest.raises(ValidationError, match="n_neighbors"):
        cdask.uspec_ensemble(X, 2, n_neighbors=0, n_partitions=1)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValidationError, match="X"):
        cdask.usenc(bad, 2, n_partitions=1)


def test_cross_sums_is_the_literal_column_side_and_chains_exactly():
    from cclust._ext import _uspec

    rng = np.random.default_rng(2)
    B = sp.random(500, 12, density=0.3, random_state=3, format="csr")
    B.data += rng.random(B.data.shape[0])
    B = sp.vstack([B, sp.csr_matrix((1, 12))]).tocsr()  # a row without edges: degree 1e-10
    W, col, rows = np.zeros((12, 12)), np.zeros(12), None
    rows = _uspec.cross_sums(B.indptr.astype(np.int64), B.indices.astype(np.int64), B.data, W, col)
    W_ref, col_ref, rows_ref = ref.column_graph_sums(B.toarray())
    np.testing.assert_allclose(W, W_ref, rtol=1e-12)
    np.testing.assert_allclose(col, col_ref, rtol=1e-12)
    np.testing.assert_allclose(rows, rows_ref, rtol=1e-12)
    W2, col2 = np.zeros((12, 12)), np.zeros(12)
    for a, b in ((0, 123), (123, 124), (124, 501)):
        part = B[a:b]
        _uspec.cross_sums(part.indptr.astype(np.int64), part.indices.astype(np.int64), part.data, W2, col2)
    assert np.array_equal(W, W2) and np.array_equal(col, col2)
    with pytest.raises(ValueError, match="column index"):
        _uspec.cross_sums(np.array([0, 1]), np.array([12]), np.array([1.0]), np.zeros((12, 12)), np.zeros(12))


def test_column_graph_is_the_sparse_product():
    from cclust.graph._tcut import _column_graph

    rng = np.random.default_rng(4)
    B = sp.random(3000, 40, density=0.05, random_state=5, format="csr")
    scale = rng.random(3000) + 0.5
    np.testing.assert_allclose(_column_graph(B, scale), (B.T @ sp.diags(scale) @ B).toarray(), rtol=1e-12,
                               atol=1e-15)


def _engine_kmeans(X, k, seed, n_init, max_iter):
    """The in-memory transfer cut's k-means (cclust.graph.tcut): k-means++ with one candidate,
    labels_from_seeds, lloyd with tol = 0, the lowest objective of n_init runs."""
    from cclust import _engine

    rng = np.random.default_rng(seed)
    space = _engine.MixedSpace.dense(X)
    best = None
    for _ in range(n_init):
        seeds = _engine.seed_objects(space, k, "k-means++", rng, 2, n_trials=1)
        start = _engine.labels_from_seeds(space, seeds, 2)
        run = _engine.lloyd(space, start, k, max_iter=max_iter, tol=0.0, n_threads=2)
        if best is None or run.objective < best.objective:
            best = run
    return best


def _block_kmeans(X, k, seed, n_init, max_iter, rows):
    runner = cdask._Runner(None)
    starts = np.array(list(range(0, X.shape[0], rows)) + [X.shape[0]])
    blocks = runner.persist([runner.delayed(np.ascontiguousarray(X[a:b])) for a, b in zip(starts[:-1], starts[1:])])
    executor = cdask._DenseBlocks(blocks, starts, runner)
    labels, objective = executor.kmeans(k, np.random.default_rng(seed), n_init, max_iter)
    return np.concatenate(runner.compute(labels)), objective


@pytest.mark.parametrize("case", ["blobs", "duplicates"])
def test_block_kmeans_is_the_engine_kmeans_bit_for_bit(case):
    # The Dask transfer cut's k-means runs the engine's kernels per block and adds the per-chunk
    # partials in order: labels and objective equal the in-memory engine's exactly, for any blocks.
    rng = np.random.default_rng(7)
    if case == "blobs":
        X = rng.normal(size=(9000, 6)) + rng.integers(0, 5, size=(9000, 1)) * 3.0
        k, n_init, max_iter = 7, 2, 30
    else:  # 6 distinct points and 9 clusters: empty clusters, reseeds, repeated k-means++ draws
        X = rng.normal(size=(6, 3))[rng.integers(0, 6, size=9000)]
        k, n_init, max_iter = 9, 2, 10
    expected = _engine_kmeans(X, k, 3, n_init, max_iter)
    for rows in (4096, 8192):
        labels, objective = _block_kmeans(X, k, 3, n_init, max_iter, rows)
        assert np.array_equal(labels, expected.labels)
        assert objective == expected.objective


def test_dense_block_kernels_check_their_arguments():
    from cclust._ext import _kmeans

    X = np.random.default_rng(0).normal(size=(50, 3))
    centres = X[:4].copy()
    with pytest.raises(ValueError, match="d = 3 columns"):
        _kmeans.dense_block_pass(X, centres[:, :2].copy(), None, 1)
    with pytest.raises(ValueError, match="assignment"):
        _kmeans.dense_block_pass(X, centres, np.zeros(49, dtype=np.int32), 1)
    with pytest.raises(ValueError, match="outside 0..3"):
        _kmeans.dense_block_pass(X, centres, np.full(50, 4, dtype=np.int32), 1)
    with pytest.raises(ValueError, match="dense_centers must be finite"):
        _kmeans.dense_block_pass(X, np.full((4, 3), np.nan), None, 1)
    with pytest.raises(ValueError, match="closest"):
        _kmeans.dense_candidate_costs(X, centres, np.zeros(3), 1)
    with pytest.raises(ValueError, match="outside 0..1"):
        _kmeans.dense_block_sums(X, np.full(50, 2, dtype=np.int32), 2, 1)


@pytest.mark.parametrize("given", [True, False])
def test_dense_block_pass_against_the_literal_pass(given):
    # A Lloyd pass (ties keep the current label) or an assignment (ties to the lowest centre),
    # against a literal computation: costs, per-chunk objective, moves, per-chunk sums and sizes.
    from cclust._ext import _kmeans

    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(5000, 3)).astype(np.float64)  # integer points: many exact ties
    centres = np.ascontiguousarray(X[[0, 1, 2, 3]] + 0.5 * rng.integers(0, 2, size=(4, 3)))
    labels = rng.integers(0, 4, size=5000).astype(np.int32)
    best, cost, chunk_objective, moved, chunk_sums, sizes = _kmeans.dense_block_pass(
        X, centres, labels if given else None, 1)
    D = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    rows = np.arange(X.shape[0])
    lowest = D.argmin(axis=1)
    expected = np.where(D[rows, labels] == D[rows, lowest], labels, lowest) if given else lowest
    assert np.array_equal(best, expected)
    np.testing.assert_allclose(cost, D[rows, expected], rtol=1e-15)
    paid = D[rows, labels] if given else D[rows, expected]
    np.testing.assert_allclose(chunk_objective, [paid[:4096].sum(), paid[4096:].sum()], rtol=1e-12)
    assert moved == (int((expected != labels).sum()) if given else 0)
    for c, part in enumerate((slice(0, 4096), slice(4096, None))):
        for k in range(4):
            np.testing.assert_allclose(chunk_sums[c, k], X[part][expected[part] == k].sum(axis=0), rtol=1e-12)
    assert np.array_equal(sizes, np.bincount(expected, minlength=4))
    again, again_sizes = _kmeans.dense_block_sums(X, best, 4, 1)
    assert np.array_equal(again, chunk_sums) and np.array_equal(again_sizes, sizes)
