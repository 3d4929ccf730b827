"""The leiden and louvain generators: partitions equal to leidenalg's and igraph's own runs on the
same graph with the same seed and resolution, the kNN graph's Jaccard weights against a
by-hand count, the AnnData graph, determinism, provenance, and bad input."""
import random
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import cclust
from cclust.datasets import load_iris
from cclust.errors import ValidationError
from cclust.graph_generators import knn_graph, leiden, louvain

leidenalg = pytest.importorskip("leidenalg")
igraph = pytest.importorskip("igraph")


def _blobs(n_per=40, centres=((0, 0), (12, 0), (0, 12)), seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, 1.0, size=(n_per, 2)) for c in centres])
    return X, np.repeat(np.arange(len(centres)), n_per)


def _direct_graph(matrix):
    """The igraph graph of a symmetric matrix, made here without cclust: igraph's own
    weighted-adjacency constructor on the dense upper triangle."""
    return igraph.Graph.Weighted_Adjacency(np.triu(matrix.toarray()).tolist(), mode="upper", attr="weight")


def _same_partition(a, b):
    """Whether two labellings put the objects in the same clusters (numbering aside)."""
    a, b = np.asarray(a).tolist(), np.asarray(b).tolist()
    return len(set(zip(a, b))) == len(set(a)) == len(set(b))


def _resolution_and_seed(provenance):
    name, resolution, seed = provenance.split()
    return float(resolution.split("=")[1]), int(seed.split("=")[1])


def test_leiden_partitions_equal_leidenalg_called_directly():
    X, _ = load_iris()
    E = leiden(X, n_partitions=6, resolutions=(0.3, 1.0, 2.5), n_neighbors=10, random_state=7)
    graph = _direct_graph(knn_graph(X, 10))
    for j, prov in enumerate(E.provenance):
        resolution, seed = _resolution_and_seed(prov)
        assert resolution == (0.3, 1.0, 2.5)[j % 3]
        direct = leidenalg.find_partition(graph, leidenalg.RBConfigurationVertexPartition, weights="weight",
                                          seed=seed, resolution_parameter=resolution).membership
        assert _same_partition(E.labels[:, j], direct)


def test_louvain_partitions_equal_igraph_called_directly():
    X, _ = load_iris()
    E = louvain(X, n_partitions=4, resolutions=(0.5, 1.5), random_state=3)
    graph = _direct_graph(knn_graph(X, 15))
    for j, prov in enumerate(E.provenance):
        resolution, seed = _resolution_and_seed(prov)
        igraph.set_random_number_generator(random.Random(seed))
        try:
            direct = graph.community_multilevel(weights="weight", resolution=resolution).membership
        finally:
            igraph.set_random_number_generator(random)
        assert _same_partition(E.labels[:, j], direct)


def test_resolution_grid_changes_the_number_of_clusters():
    X, _ = load_iris()
    E = leiden(X, n_partitions=2, resolutions=(0.05, 5.0), random_state=0)
    assert E.n_clusters[0] < E.n_clusters[1]


def test_knn_graph_weights_are_the_jaccard_index_of_the_neighbourhoods():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    k = 4
    G = knn_graph(X, k).toarray()
    distances = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(distances, np.inf)
    near = [set(np.argsort(distances[i], kind="stable")[:k].tolist()) for i in range(30)]
    expected = np.zeros((30, 30))
    for i in range(30):
        for j in range(30):
            if j in near[i] or i in near[j]:
                a, b = near[i] | {i}, near[j] | {j}
                expected[i, j] = len(a & b) / len(a | b)
    np.testing.assert_allclose(G, expected, rtol=0, atol=1e-15)
    assert (G == G.T).all() and (np.diag(G) == 0).all()


@pytest.mark.parametrize("generator", [leiden, louvain], ids=["leiden", "louvain"])
def test_same_ensemble_for_any_n_jobs_and_seed(generator):
    X, _ = load_iris()
    one = generator(X, n_partitions=6, random_state=11, n_jobs=1)
    two = generator(X, n_partitions=6, random_state=11, n_jobs=2)
    assert np.array_equal(one.labels, two.labels) and one.provenance == two.provenance
    other = generator(X, n_partitions=6, random_state=12, n_jobs=1)
    assert other.provenance != one.provenance


def test_provenance_records_resolution_and_seed():
    X, _ = load_iris()
    E = cclust.generate("leiden", X, n_partitions=5, resolutions=[0.5, 2], random_state=0)
    assert [_resolution_and_seed(p)[0] for p in E.provenance] == [0.5, 2.0, 0.5, 2.0, 0.5]
    assert all(p.startswith("leiden ") for p in E.provenance)
    assert len({_resolution_and_seed(p)[1] for p in E.provenance}) == 5


def test_the_anndata_graph_is_used_when_present():
    ad = pytest.importorskip("anndata")
    X, _ = _blobs()
    # a graph that disagrees with the features: two rings of objects 0..59 and 60..119
    n = X.shape[0]
    ring = sp.lil_matrix((n, n))
    for start, stop in ((0, 60), (60, n)):
        for i in range(start, stop):
            j = start + (i - start + 1) % (stop - start)
            ring[i, j] = ring[j, i] = 1.0
    adata = ad.AnnData(X)
    adata.obsp["connectivities"] = ring.tocsr()
    before = adata.obsp["connectivities"].copy()
    E = cclust.generate("leiden", adata, n_partitions=3, resolutions=0.01, random_state=0)
    expected = leiden(X, n_partitions=3, resolutions=0.01, graph=ring.tocsr(), random_state=0)
    assert np.array_equal(E.labels, expected.labels)
    assert all(_same_partition(E.labels[:, j], np.repeat([0, 1], 60)) for j in range(3))
    assert (adata.obsp["connectivities"] != before).nnz == 0  # only read
    assert list(E.index) == list(adata.obs_names)
    built = cclust.generate("leiden", adata, n_partitions=3, resolutions=0.01, graph="knn", random_state=0)
    assert np.array_equal(built.labels, leiden(X, n_partitions=3, resolutions=0.01, random_state=0).labels)


def test_a_consensus_of_the_leiden_ensemble_recovers_separated_blobs():
    X, y = _blobs()
    E = leiden(X, n_partitions=20, random_state=0)
    labels = cclust.consensus("hbgf", E, 3, random_state=0).labels
    assert _same_partition(labels, y)


def test_inputs_are_not_modified():
    X, _ = _blobs()
    G = knn_graph(X, 5)
    X_copy, G_copy = X.copy(), G.copy()
    leiden(X, n_partitions=2, graph=G, random_state=0)
    louvain(X, n_partitions=2, random_state=0)
    assert np.array_equal(X, X_copy) and (G != G_copy).nnz == 0


@pytest.mark.parametrize("kwargs, match", [
    ({"resolutions": 0.0}, "resolutions"),
    ({"resolutions": (1.0, -2.0)}, "resolutions"),
    ({"resolutions": ()}, "resolutions"),
    ({"n_neighbors": 0}, "n_neighbors"),
    ({"n_neighbors": 120}, "n_neighbors"),
    ({"graph": sp.identity(50, format="csr")}, r"graph must be a square matrix of shape \(120, 120\)"),
    ({"graph": sp.csr_matrix(np.triu(np.ones((120, 120)), 1))}, "graph must be symmetric"),
    ({"graph": -sp.identity(120, format="csr")}, "graph must hold finite weights"),
    ({"graph": "umap"}, "graph must be None, 'knn'"),
    ({"n_partitions": 0}, "n_partitions"),
], ids=["resolution-zero", "resolution-negative", "no-resolution", "no-neighbours", "neighbours-n",
        "graph-shape", "graph-asymmetric", "graph-negative", "graph-name", "no-partitions"])
@pytest.mark.parametrize("generator", [leiden, louvain], ids=["leiden", "louvain"])
def test_bad_input_names_the_argument(generator, kwargs, match):
    X, _ = _blobs()
    with pytest.raises(ValidationError, match=match):
        generator(X, random_state=0, **kwargs)


def test_n_iterations_is_checked():
    X, _ = _blobs()
    with pytest.raises(ValidationError, match="n_iterations"):
        leiden(X, n_iterations=0)


def test_without_the_graph_extra_the_error_names_it():
    code = ("import sys\nsys.modules['leidenalg'] = None\nimport cclust\nfrom cclust.datasets import load_iris\n"
            "X, _ = load_iris()\ntry:\n    cclust.generate('leiden', X)\nexcept ImportError as error:\n"
            "    print(type(error).__name__, error)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("MissingDependencyError the leiden generator needs leidenalg and igraph")
    assert "pip install 'cclust[graph]'" in out


def test_knn_graph_with_duplicate_rows_has_no_self_loops():
    X = np.repeat(np.arange(10.0)[:, None], 3, axis=0)  # every point three times
    G = knn_graph(X, 4)
    assert G.diagonal().sum() == 0 and (G != G.T).nnz == 0
    # each object keeps its 4 nearest others: its two duplicates first
    assert ((G > 0).sum(axis=1) >= 4).all()
    for i in range(30):
        twins = [j for j in range(3 * (i // 3), 3 * (i // 3) + 3) if j != i]
        assert all(G[i, j] > 0 for j in twins)
