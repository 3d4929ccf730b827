"""tcut and usenc (Huang, Wang, Wu, Lai & Kwoh 2020) against the literal references of
``tests/reference_uspec.py``, hand-computed cases and bad input."""
import numpy as np
import pytest

from cclust import Ensemble
from cclust.consensus_functions.ultra_scalable import bipartite_cluster_graph, tcut
from cclust.errors import ValidationError
import reference_uspec as ref
from factories import noisy_labels_with_truth, same_partition

MISSING = pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
WEIGHTED = pytest.mark.parametrize("weighted", [False, True], ids=["equal", "weighted"])


# -- the graph ----------------------------------------------------------------------------------

@MISSING
@WEIGHTED
@pytest.mark.parametrize("seed", range(3))
def test_graph_is_eq_18_19_up_to_column_order_and_merged_rows(seed, missing, weighted):
    rng = np.random.default_rng(seed)
    L, _ = noisy_labels_with_truth(rng, n=30, r=5, missing=missing)
    w = rng.uniform(0.5, 2.0, L.shape[1]) if weighted else None
    E = Ensemble(L, weights=w)
    B, groups = bipartite_cluster_graph(E)
    full = B.toarray() if groups is None else B.toarray()[groups[1]]
    expected = ref.cluster_graph(L, w)
    # columns are permuted (canonical order): compare the sorted columns as sets of vectors
    key = lambda M: sorted(map(tuple, np.round(M.T, 12)))  # noqa: E731
    assert key(full) == key(expected)


def test_hand_computed_toy():
    # Two partitions agree on {0,1,2} | {3,4,5}; a third splits the second group.
    L = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 1], [1, 1, 2], [1, 1, 2], [1, 1, 2]])
    result = tcut(L, 2, random_state=0)
    assert result.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert result.n_iter is None and result.converged is None
    # The graph has two components, so the two leading eigenvalues are 1.
    np.testing.assert_allclose(result.extras["eigenvalues"], [1.0, 1.0], atol=1e-12)


# -- against the dense spectral clustering of the same graph -------------------------------------

@MISSING
@WEIGHTED
@pytest.mark.parametrize("seed", range(4))
def test_same_partition_and_eigenvalues_as_dense_bipartite_spectral_clustering(seed, missing, weighted):
    rng = np.random.default_rng(100 + seed)
    L, _ = noisy_labels_with_truth(rng, n=45, r=8, k=3, missing=missing, noise=0.2)
    w = rng.uniform(0.5, 2.0, L.shape[1]) if weighted else None
    labels, nu = ref.dense_bipartite_spectral(ref.cluster_graph(L, w), 3)
    result = tcut(Ensemble(L, weights=w), 3, n_init=10, random_state=seed)
    assert same_partition(result.labels, labels)
    # tcut's eigenvalues mu of D_C^-1/2 E_C D_C^-1/2 and the bipartite graph's nu = 1 - gamma
    # (eq. 10: gamma (2 - gamma) = 1 - mu) satisfy mu = nu^2.
    np.testing.assert_allclose(np.sqrt(result.extras["eigenvalues"]), nu, rtol=0, atol=1e-8)



@MISSING
@WEIGHTED
@pytest.mark.parametrize("seed", range(2))
def test_the_lanczos_route_on_label_codes_gives_the_same_partition(seed, missing, weighted, monkeypatch):
    # With TCUT_DENSE_MAX = 1 every graph takes the Lanczos route, which reads the label codes
    # (LabelGraph) instead of forming the sparse matrix: the dense route's cut and the
    # reference's eigenvalues.
    from cclust.graph import _tcut

    rng = np.random.default_rng(100 + seed)
    L, _ = noisy_labels_with_truth(rng, n=45, r=8, k=3, missing=missing, noise=0.2)
    L = np.vstack([L, L[:5]])                      # repeated rows: the graph holds the distinct ones
    w = rng.uniform(0.5, 2.0, L.shape[1]) if weighted else None
    E = Ensemble(L, weights=w)
    assert _tcut.ensemble_label_graph(E, np.ones(int(E.offsets[-1]))) is None
    dense = tcut(E, 3, n_init=10, random_state=seed)
    monkeypatch.setattr(_tcut, "TCUT_DENSE_MAX", 1)
    assert isinstance(_tcut.ensemble_label_graph(E, np.ones(int(E.offsets[-1]))), _tcut.LabelGraph)
    _, nu = ref.dense_bipartite_spectral(ref.cluster_graph(L, w), 3)
    result = tcut(E, 3, n_init=10, random_state=seed)
    assert same_partition(result.labels, dense.labels)
    np.testing.assert_allclose(result.objective, dense.objective, rtol=1e-9)
    np.testing.assert_allclose(np.sqrt(result.extras["eigenvalues"]), nu, rtol=0, atol=1e-8)


@pytest.mark.parametrize("widest", [40, 300], ids=["uint8", "uint16"])
def test_label_graph_products_are_the_sparse_matrixs(widest):
    from cclust.graph._tcut import LabelGraph

    rng = np.random.default_rng(widest)
    L = np.column_stack([rng.integers(0, k, 400) for k in rng.integers(2, 30, 5)] + [np.arange(400) % widest])
    L[:, :5][rng.random((400, 5)) < 0.1] = -1
    E = Ensemble(L)
    assert E.compact_labels().dtype == (np.uint8 if widest <= 127 else np.uint16)
    values = rng.uniform(0.1, 3.0, int(E.offsets[-1]))
    graph = LabelGraph(E.compact_labels(), E.offsets, values, n_threads=2)
    B = graph.tocsr()
    present = E.labels >= 0
    rows, parts = np.nonzero(present)
    dense = np.zeros(graph.shape)
    dense[rows, E.offsets[parts] + E.labels[rows, parts]] = values[E.offsets[parts] + E.labels[rows, parts]]
    np.testing.assert_array_equal(B.toarray(), dense)
    V = rng.normal(size=(graph.shape[1], 4))
    np.testing.assert_array_equal(graph.matmat(V), B @ V)      # partition order, as CSR adds a row
    np.testing.assert_array_equal(graph.matvec(V[:, 0]), B @ V[:, 0])
    y = rng.normal(size=graph.shape[0])
    np.testing.assert_allclose(graph.rmatvec(y), B.T @ y, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValidationError, match="one value per cluster"):
        LabelGraph(E.compact_labels(), E.offsets, values[:-1])


def test_label_graph_extra_rows_are_stacked_under_the_codes_rows():
    """Rows below the codes' rows (GP-MGLA's cluster rows): the products of the stacked CSR,
    the codes' rows and the extra rows' bitwise, ``B^T y`` to rounding."""
    import scipy.sparse as sp
    from cclust.graph import tcut as transfer_cut
    from cclust.graph._tcut import LabelGraph

    rng = np.random.default_rng(3)
    L = np.column_stack([rng.integers(0, k, 300) for k in (4, 9, 6)])
    E = Ensemble(L)
    n_c = int(E.offsets[-1])
    values = rng.uniform(0.1, 3.0, n_c)
    extra = sp.random(n_c, n_c, density=0.3, random_state=4, format="csr")
    graph = LabelGraph(E.compact_labels(), E.offsets, values, n_threads=2, extra_rows=extra)
    assert graph.shape == (300 + n_c, n_c) and len(graph.entries()) == 2
    B = graph.tocsr()
    expected = np.vstack([LabelGraph(E.compact_labels(), E.offsets, values).tocsr().toarray(), extra.toarray()])
    np.testing.assert_array_equal(B.toarray(), expected)
    V = rng.normal(size=(n_c, 3))
    np.testing.assert_array_equal(graph.matmat(V), B @ V)
    np.testing.assert_array_equal(graph.matvec(V[:, 0]), B @ V[:, 0])
    y = rng.normal(size=graph.shape[0])
    np.testing.assert_allclose(graph.rmatvec(y), B.T @ y, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValidationError, match="extra_rows must have one column per cluster"):
        LabelGraph(E.compact_labels(), E.offsets, values, extra_rows=extra[:, 1:])
    negative = extra.copy()
    negative.data[0] = -1.0
    with pytest.raises(ValidationError, match="non-negative"):
        transfer_cut(LabelGraph(E.compact_labels(), E.offsets, values, extra_rows=negative), 2, random_state=0)

def test_merged_rows_give_the_unmerged_cut():
    rng = np.random.default_rng(5)
    L, _ = noisy_labels_with_truth(rng, n=40, r=3, k=3, noise=0.1)
    L = np.vstack([L, L[:10]])  # duplicated label rows
    labels, nu = ref.dense_bipartite_spectral(ref.cluster_graph(L), 3)
    result = tcut(L, 3, n_init=10, random_state=0)
    assert result.extras["n_microclusters"] < L.shape[0]
    assert same_partition(result.labels, labels)
    np.testing.assert_allclose(np.sqrt(result.extras["eigenvalues"]), nu, atol=1e-8)


def test_partition_weights_matter():
    # Partition 0 says {0..3 | 4..7}, partition 1 says {0,1,4,5 | 2,3,6,7}: the heavier wins.
    a = np.repeat([0, 1], 4)
    b = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    L = np.column_stack([a, a, b, b])
    assert same_partition(tcut(Ensemble(L, weights=[3, 3, 1, 1]), 2, random_state=0).labels, a)
    assert same_partition(tcut(Ensemble(L, weights=[1, 1, 3, 3]), 2, random_state=0).labels, b)


# -- bad input ------------------------------------------------------------------------------------

def test_refuses_objects_missing_everywhere():
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [-1, -1]])
    with pytest.raises(ValidationError, match="missing from every partition"):
        tcut(L, 2)


def test_refuses_more_clusters_than_the_ensemble_has():
    L = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)])  # 8 rows, 6 clusters
    with pytest.raises(ValidationError, match="n_clusters=7 is larger than the number of clusters"):
        tcut(L, 7)
    with pytest.raises(ValidationError, match="distinct label vectors"):
        tcut(np.array([[0], [0], [1], [1]]), 3)


@pytest.mark.parametrize("kwargs, match", [({"n_init": 0}, "n_init"), ({"max_iter": 0}, "max_iter")])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        tcut(np.array([[0], [0], [1], [1]]), 2, **kwargs)
