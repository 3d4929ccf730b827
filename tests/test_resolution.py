"""choose_resolution (chooseR's rule over Leiden/Louvain resolutions): the recommended resolution
finds the clusters of blobs with a clear scale, the co-clustering silhouette against a by-hand
count, determinism for any n_jobs, the AnnData graph and write-back, the plot, and bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

import cclust
from cclust.errors import ValidationError
from cclust.metrics import ari
from cclust.resolution import coclustering_silhouette

pytest.importorskip("leidenalg")
pytest.importorskip("igraph")

GRID = (0.05, 0.5, 2.0, 5.0)


def _blobs(seed=0):
    """Three tight, far-apart blobs: one clear scale, three clusters."""
    rng = np.random.default_rng(seed)
    centres = ((0, 0), (8, 0), (0, 8))
    X = np.vstack([rng.normal(c, 0.4, size=(40, 2)) for c in centres])
    return X, np.repeat(np.arange(3), 40)


def test_recommended_resolution_gives_the_blobs():
    X, truth = _blobs()
    result = cclust.choose_resolution(X, GRID, n_resamples=8, random_state=0)
    assert result.recommended is not None
    assert ari(truth, result.best_labels) == pytest.approx(1.0)
    i = list(result.resolutions).index(result.recommended)
    assert result.n_clusters[i] == 3
    # the blobs' clusters never split or merge: every member's silhouette is 1
    assert result.cluster_stability[i] == pytest.approx(np.ones(3))
    # a grid too fine for three blobs cuts them into many less stable clusters
    assert result.n_clusters[-1] > 3
    assert result.median[-1] < result.median[i]
    assert result.ci_low[i] <= result.median[i] <= result.ci_high[i]


def test_rule_takes_the_highest_resolution_reaching_the_bound():
    X, _ = _blobs()
    result = cclust.choose_resolution(X, GRID, n_resamples=8, random_state=0)
    best = int(np.nanargmax(result.median))
    assert result.threshold == result.ci_low[best]
    reaching = [r for r, m in zip(result.resolutions, result.median) if np.isfinite(m) and m >= result.threshold]
    assert result.recommended == max(reaching)
    assert "Recommended resolution" in result.summary()
    assert "Patterson-Cross, Levine & Menon 2021" in result.summary()


def test_table_rows_per_resolution():
    X, _ = _blobs()
    result = cclust.choose_resolution(X, GRID, n_resamples=4, random_state=0)
    table = result.table(as_frame=False)
    assert table["resolution"] == list(GRID)
    assert sum(table["recommended"]) == 1
    assert [len(v) for v in table["cluster_stability"]] == table["n_clusters"]
    frame = result.table()
    assert list(frame["n_clusters"]) == table["n_clusters"]


def _silhouette_by_hand(L, labels):
    """Rousseeuw's silhouette on 1 - co-clustering frequency, pair by pair."""
    n = L.shape[0]
    D = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(n):
            both = (L[i] >= 0) & (L[j] >= 0)
            if both.any():
                D[i, j] = 1.0 - np.mean(L[i, both] == L[j, both])
    out = np.empty(n)
    k = labels.max() + 1
    for i in range(n):
        others = [j for j in range(n) if j != i and np.isfinite(D[i, j])]
        own = [j for j in others if labels[j] == labels[i]]
        if (labels == labels[i]).sum() == 1:
            out[i] = 0.0
            continue
        a = np.mean(D[i, own])
        b = min(np.mean(D[i, [j for j in others if labels[j] == c]]) for c in range(k) if c != labels[i])
        out[i] = 0.0 if max(a, b) == 0 else (b - a) / max(a, b)
    return out


@pytest.mark.parametrize("block_bytes", [1, 10**9], ids=["row-by-row", "one-block"])
def test_coclustering_silhouette_equals_by_hand(block_bytes):
    rng = np.random.default_rng(3)
    n, b = 23, 9
    L = rng.integers(0, 3, size=(n, b))
    L[rng.random((n, b)) < 0.25] = -1
    L[0] = np.maximum(L[0], 0)  # object 0 drawn everywhere
    labels = np.repeat(np.arange(4), [6, 6, 10, 1])
    got = coclustering_silhouette(L, labels, 4, block_bytes=block_bytes)
    assert got == pytest.approx(_silhouette_by_hand(L, labels), abs=1e-12)
    assert got[-1] == 0.0  # alone in its cluster


def test_same_random_state_same_result_for_any_n_jobs():
    X, _ = _blobs(seed=1)
    one = cclust.choose_resolution(X, GRID, n_resamples=4, random_state=7, n_jobs=1)
    two = cclust.choose_resolution(X, GRID, n_resamples=4, random_state=7, n_jobs=2)
    again = cclust.choose_resolution(X, GRID, n_resamples=4, random_state=7, n_jobs=1)
    for other in (two, again):
        assert other.recommended == one.recommended
        np.testing.assert_array_equal(other.median, one.median)
        np.testing.assert_array_equal(other.ci_low, one.ci_low)
        for a, b in zip(one.labels, other.labels):
            np.testing.assert_array_equal(a, b)
        for a, b in zip(one.object_stability, other.object_stability):
            np.testing.assert_array_equal(a, b)


def test_louvain_method():
    X, truth = _blobs()
    result = cclust.choose_resolution(X, GRID, n_resamples=4, method="louvain", random_state=0)
    assert result.method == "louvain"
    assert ari(truth, result.best_labels) == pytest.approx(1.0)


def test_one_cluster_resolution_is_never_recommended():
    # a connected graph: Leiden at a tiny resolution keeps it whole
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(60, 2))
    result = cclust.choose_resolution(Y, (1e-4, 1.0), n_resamples=3, random_state=0)
    assert result.n_clusters[0] == 1
    assert np.isnan(result.median[0])
    assert result.recommended == 1.0
    assert "one cluster" in result.summary()


def _block_graph(n_per=30, groups=3):
    """A graph of ``groups`` cliques: its clusters, whatever the features say."""
    blocks = [np.ones((n_per, n_per)) - np.eye(n_per)] * groups
    return sp.csr_matrix(sp.block_diag(blocks))


def test_anndata_graph_is_used_and_written_back_only_if_asked():
    anndata = pytest.importorskip("anndata")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3)).astype(np.float32)  # features without structure
    adata = anndata.AnnData(X)
    adata.obsp["connectivities"] = _block_graph()
    before = set(adata.obs.columns), set(adata.uns)
    result = cclust.choose_resolution(adata, (0.5, 1.0), n_resamples=4, random_state=0)
    assert (set(adata.obs.columns), set(adata.uns)) == before  # nothing written by default
    assert ari(np.repeat(np.arange(3), 30), result.best_labels) == pytest.approx(1.0)
    cclust.choose_resolution(adata, (0.5, 1.0), n_resamples=4, random_state=0, key_added="stable")
    assert list(adata.obs["stable"].cat.categories) == ["0", "1", "2"]
    assert adata.uns["stable"]["recommended"] == result.recommended
    assert "Recommended resolution" in adata.uns["stable"]["summary"]
    # graph="knn" clusters the features instead
    knn = cclust.choose_resolution(adata, (0.5, 1.0), n_resamples=4, random_state=0, graph="knn")
    assert ari(np.repeat(np.arange(3), 30), knn.best_labels) < 0.5


def test_anndata_view_is_not_written_into():
    anndata = pytest.importorskip("anndata")
    X, _ = _blobs()
    adata = anndata.AnnData(X)
    view = adata[:100]
    with pytest.raises(ValidationError, match="view"):
        cclust.choose_resolution(view, (0.5,), n_resamples=2, random_state=0, key_added="stable")
    # reading a view is fine: nothing is written
    result = cclust.choose_resolution(view, (0.5,), n_resamples=2, random_state=0)
    assert result.labels[0].shape == (100,)


def test_plot_resolution_marks_the_recommendation(tmp_path):
    pytest.importorskip("matplotlib")
    from cclust.plotting import plot_resolution

    X, _ = _blobs()
    result = cclust.choose_resolution(X, GRID, n_resamples=4, random_state=0)
    ax = plot_resolution(result)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "0.05\n(3)"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"recommended: {result.recommended:g}" in legend
    path = tmp_path / "resolution.png"
    ax.figure.savefig(path)
    assert path.stat().st_size > 0
    with pytest.raises(ValidationError, match="choose_resolution"):
        plot_resolution({"median": [1.0]})


@pytest.mark.parametrize("kwargs, match", [
    ({"resolutions": ()}, "resolutions must hold at least one"),
    ({"resolutions": (0.5, 0.0)}, "resolutions"),
    ({"resolutions": (-1.0,)}, "resolutions"),
    ({"resolutions": (0.5, 0.5)}, "resolutions holds 0.5 more than once"),
    ({"n_resamples": 1}, "n_resamples"),
    ({"subsample": 0.0}, "subsample"),
    ({"subsample": 1.0}, "subsample"),
    ({"subsample": 1.5}, "subsample"),
    ({"method": "kmeans"}, "method must be one of"),
    ({"key_added": "x"}, "key_added is for AnnData input"),
    ({"use_rep": "X_pca"}, "use_rep is for AnnData input"),
    ({"n_neighbors": 0}, "n_neighbors"),
    ({"graph": np.eye(3)}, r"graph must be a square matrix of shape \(120, 120\)"),
], ids=["empty-grid", "zero-resolution", "negative-resolution", "repeated", "one-resample", "subsample-0",
        "subsample-1", "subsample-above-1", "unknown-method", "key-without-anndata", "use-rep-without-anndata",
        "no-neighbours", "graph-shape"])
def test_bad_input_names_the_argument(kwargs, match):
    X, _ = _blobs()
    params = {"resolutions": GRID, "n_resamples": 2, "random_state": 0, **kwargs}
    resolutions = params.pop("resolutions")
    with pytest.raises(ValidationError, match=match):
        cclust.choose_resolution(X, resolutions, **params)


def test_input_is_not_modified():
    X, _ = _blobs()
    copy = X.copy()
    cclust.choose_resolution(X, (0.5,), n_resamples=2, random_state=0)
    np.testing.assert_array_equal(X, copy)
