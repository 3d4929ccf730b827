"""AnnData in and out (the ``scverse`` extra): features from X, a layer or obsm; results written
back as scanpy's clustering tools write theirs, and nothing else of the object touched.

Every check compares a deep copy taken before the call with the object after it, field by field
and byte for byte, so a write anywhere but the documented keys fails.
"""
import hashlib
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

ad = pytest.importorskip("anndata")
pd = pytest.importorskip("pandas")
sp = pytest.importorskip("scipy.sparse")

import cclust  # noqa: E402
from cclust import ConsensusClustering, cli  # noqa: E402
from cclust.datasets import load_iris, load_wine  # noqa: E402
from cclust.errors import MemoryBudgetError, ValidationError  # noqa: E402

R = 10  # basic partitions: enough for a stable consensus on iris, keeps the file fast


def make_adata(X=None, y=None):
    """An AnnData with something in every field: obs, var, uns (nested), obsm, varm, obsp, layers
    (one sparse), built from iris."""
    if X is None:
        X, y = load_iris()
    n, d = X.shape
    centred = X - X.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    obs = pd.DataFrame({"species": pd.Categorical(np.array(["setosa", "versicolor", "virginica"])[y]),
                        "depth": np.linspace(0.0, 1.0, n)}, index=[f"cell{i}" for i in range(n)])
    var = pd.DataFrame({"kind": [f"f{j}" for j in range(d)]}, index=[f"gene{j}" for j in range(d)])
    adata = ad.AnnData(X.copy(), obs=obs, var=var)
    adata.uns["note"] = "kept as it is"
    adata.uns["nested"] = {"values": np.arange(4), "name": "x"}
    adata.obsm["X_pca"] = u[:, :2] * s[:2]
    adata.varm["loadings"] = np.ones((d, 2))
    adata.obsp["distances"] = sp.csr_matrix(np.eye(n))
    adata.layers["counts"] = sp.csr_matrix(np.round(X * 10))
    adata.layers["scaled"] = centred / X.std(axis=0)
    return adata


def _same_value(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if sp.issparse(a):
        return (sp.issparse(b) and type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
                and _same_bytes(a.toarray(), b.toarray()))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and _same_bytes(a, b)
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b)
    return type(a) is type(b) and a == b


def _same_bytes(a, b):
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def assert_only_added(before, after, obs=(), uns=()):
    """``after`` holds every field of ``before`` bit for bit, plus exactly the obs columns ``obs``
    and the uns keys ``uns``."""
    assert _same_value(before.X, after.X)
    assert list(after.obs_names) == list(before.obs_names)
    assert list(after.var_names) == list(before.var_names)
    assert list(after.obs.columns) == list(before.obs.columns) + list(obs)
    pd.testing.assert_frame_equal(after.obs[list(before.obs.columns)], before.obs, check_exact=True)
    pd.testing.assert_frame_equal(after.var, before.var, check_exact=True)
    assert set(after.uns) == set(before.uns) | set(uns)
    assert set(before.uns).isdisjoint(uns)
    for key in before.uns:
        assert _same_value(before.uns[key], after.uns[key]), key
    for field in ("obsm", "varm", "obsp", "varp", "layers"):
        old, new = getattr(before, field), getattr(after, field)
        assert set(old) == set(new), field
        for key in old:
            assert _same_value(old[key], new[key]), (field, key)


def assert_scanpy_categorical(column, labels):
    """Categories "0".."K-1" in that order (scanpy's leiden writes its clusters so), codes = labels."""
    k = int(np.max(labels)) + 1
    assert isinstance(column.dtype, pd.CategoricalDtype)
    assert list(column.cat.categories) == [str(c) for c in range(k)]
    np.testing.assert_array_equal(column.cat.codes.to_numpy(), labels)


# -- ConsensusClustering ---------------------------------------------------------------------

def test_fit_writes_the_labels_item_consensus_and_statistics_and_nothing_else():
    adata = make_adata()
    before = adata.copy()
    X_before = adata.X.copy()
    model = ConsensusClustering("kcc", n_clusters=3, n_partitions=R, random_state=0)
    assert model.fit(adata) is model
    assert_only_added(before, adata, obs=["cclust", "cclust_item_consensus"], uns=["cclust"])
    assert _same_bytes(adata.X, X_before)
    # the array route, same seed: the same labels
    X, _ = load_iris()
    expected = ConsensusClustering("kcc", n_clusters=3, n_partitions=R, random_state=0).fit_predict(X)
    np.testing.assert_array_equal(model.labels_, expected)
    assert_scanpy_categorical(adata.obs["cclust"], expected)
    stats = adata.uns["cclust"]
    assert stats["n_clusters"] == 3
    assert stats["params"]["method"] == "kcc" and stats["params"]["random_state"] == 0
    assert stats["objective"] == pytest.approx(model.result_.objective)
    np.testing.assert_array_equal(stats["cluster_sizes"], np.bincount(expected))
    # item consensus: the mean co-association of each object with the other members of its
    # cluster, computed here from the n x n co-association matrix
    L = model.ensemble_.labels
    both = (L[:, None, :] >= 0) & (L[None, :, :] >= 0)
    coassociation = ((L[:, None, :] == L[None, :, :]) & both).sum(axis=2) / both.sum(axis=2)
    same = expected[:, None] == expected[None, :]
    np.fill_diagonal(same, False)
    item = (coassociation * same).sum(axis=1) / same.sum(axis=1)
    np.testing.assert_allclose(adata.obs["cclust_item_consensus"].to_numpy(), item, rtol=1e-12)
    assert stats["cluster_consensus"].shape == (3,)


@pytest.mark.parametrize("how", ["use_rep", "layer_sparse", "layer_dense"])
def test_fit_predict_reads_the_named_features(how):
    adata = make_adata()
    before = adata.copy()
    model = ConsensusClustering("kcc", n_clusters=3, n_partitions=R, random_state=1)
    if how == "use_rep":
        labels = model.fit_predict(adata, use_rep="X_pca", key_added="consensus")
        features = adata.obsm["X_pca"]
    elif how == "layer_sparse":
        labels = model.fit_predict(adata, layer="counts", key_added="consensus")
        features = adata.layers["counts"].toarray()
    else:
        labels = model.fit_predict(adata, layer="scaled", key_added="consensus")
        features = adata.layers["scaled"]
    assert_only_added(before, adata, obs=["consensus", "consensus_item_consensus"], uns=["consensus"])
    expected = ConsensusClustering("kcc", n_clusters=3, n_partitions=R, random_state=1).fit_predict(features)
    np.testing.assert_array_equal(labels, expected)
    assert_scanpy_categorical(adata.obs["consensus"], expected)
    key, value = ("use_rep", "X_pca") if how == "use_rep" else ("layer", "counts" if how == "layer_sparse" else "scaled")
    assert adata.uns["consensus"]["params"][key] == value


def test_fit_with_ready_partitions_and_a_method_without_them():
    adata = make_adata()
    X, _ = load_iris()
    ensemble = cclust.generate("kmeans", X, 3, n_partitions=R, random_state=0)
    model = ConsensusClustering("kcc", n_clusters=3, random_state=0).fit(adata, ensemble=ensemble)
    np.testing.assert_array_equal(model.labels_, ConsensusClustering("kcc", n_clusters=3, random_state=0)
                                  .fit(X, ensemble=ensemble).labels_)
    assert "cclust_item_consensus" in adata.obs
    # usenc makes its own partitions and returns none: labels and statistics, no item consensus
    usenc = make_adata()
    before = usenc.copy()
    ConsensusClustering("usenc", n_clusters=3, random_state=0, method_params={"n_partitions": 5}).fit(usenc)
    assert_only_added(before, usenc, obs=["cclust"], uns=["cclust"])


def test_fit_accepts_wine_with_a_float32_matrix():
    X, y = load_wine()
    adata = make_adata(X.astype(np.float32), y)
    before = adata.copy()
    ConsensusClustering("kcc", n_clusters=3, n_partitions=R, random_state=0).fit(adata)
    assert_only_added(before, adata, obs=["cclust", "cclust_item_consensus"], uns=["cclust"])
    assert adata.X.dtype == np.float32


# -- select_k ----------------------------------------------------------------------------------

def _blobs():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.3, (25, 3)) for c in ((0, 0, 0), (4, 0, 0), (0, 4, 0))])
    return X, np.repeat(np.arange(3), 25)


SELECT = dict(k_range=range(2, 5), n_resamples=8, null=None, random_state=0)


def test_select_k_writes_in_place_and_returns_none():
    X, y = _blobs()
    adata = make_adata(X, y)
    before = adata.copy()
    assert cclust.select_k(adata, **SELECT) is None
    expected = cclust.select_k(X, **SELECT)
    k = expected.best_k
    assert k == 3
    assert_only_added(before, adata, obs=[f"cclust_k{k}", f"cclust_k{k}_item_consensus"], uns=["cclust_select_k"])
    assert_scanpy_categorical(adata.obs[f"cclust_k{k}"], expected.labels[k])
    own = expected.item_consensus[k][np.arange(X.shape[0]), expected.labels[k]]
    np.testing.assert_array_equal(adata.obs[f"cclust_k{k}_item_consensus"].to_numpy(), own)
    stats = adata.uns["cclust_select_k"]
    assert stats["best_k"] == k and stats["labels_key"] == f"cclust_k{k}"
    np.testing.assert_array_equal(stats["pac"], expected.pac)
    np.testing.assert_array_equal(stats["k"], [2, 3, 4])
    assert stats["summary"] == expected.summary()
    assert stats["params"]["random_state"] == 0 and stats["params"]["criterion"] == "pac"


def test_select_k_copy_returns_a_modified_copy_and_leaves_the_input_alone():
    X, y = _blobs()
    adata = make_adata(X, y)
    before = adata.copy()
    result = cclust.select_k(adata, use_rep="X_pca", key_added="ck", copy=True, **SELECT)
    assert_only_added(before, adata)  # untouched
    assert isinstance(result, ad.AnnData) and result is not adata
    k = cclust.select_k(adata.obsm["X_pca"], **SELECT).best_k
    assert_only_added(before, result, obs=[f"ck_k{k}", f"ck_k{k}_item_consensus"], uns=["ck_select_k"])
    assert result.uns["ck_select_k"]["params"]["use_rep"] == "X_pca"


def test_select_k_answering_one_cluster_writes_one_category():
    X, y = load_iris()
    adata = make_adata(X, y)
    rng = np.random.default_rng(1)
    adata.layers["noise"] = rng.normal(size=X.shape)
    cclust.select_k(adata, range(2, 4), layer="noise", n_resamples=5, n_references=4, random_state=0)
    stats = adata.uns["cclust_select_k"]
    assert stats["best_k"] == 1
    assert list(adata.obs["cclust_k1"].cat.categories) == ["0"]
    assert "cclust_k1_item_consensus" not in adata.obs


# -- generate ----------------------------------------------------------------------------------

def test_generate_reads_the_features_and_writes_nothing():
    adata = make_adata()
    before = adata.copy()
    ensemble = cclust.generate("kmeans", adata, 3, layer="counts", n_partitions=4, random_state=0)
    expected = cclust.generate("kmeans", adata.layers["counts"].toarray(), 3, n_partitions=4, random_state=0)
    np.testing.assert_array_equal(ensemble.labels, expected.labels)
    assert list(ensemble.index) == list(adata.obs_names)
    assert_only_added(before, adata)


# -- h5ad round trip ----------------------------------------------------------------------------

def test_results_survive_write_h5ad_and_read_h5ad(tmp_path):
    X, y = _blobs()
    adata = make_adata(X, y)
    ConsensusClustering("kcc", n_clusters=3, n_partitions=R, random_state=0,
                        method_params={"utility": "uc"}).fit(adata)
    cclust.select_k(adata, **SELECT)
    path = tmp_path / "clustered.h5ad"
    adata.write_h5ad(path)
    back = ad.read_h5ad(path)
    assert_only_added(adata, back)
    assert back.uns["cclust"]["params"]["method_params"] == {"utility": "uc"}


# -- bad input ---------------------------------------------------------------------------------

def _mudata_like():
    """An object of a class named as mudata's, which cclust must recognise and refuse by name."""
    cls = type("MuData", (), {"__module__": "mudata._core.mudata"})
    return cls()


@pytest.mark.parametrize("call, words", [
    (lambda a: ConsensusClustering(n_clusters=3).fit(a, layer="spliced"), ["layer='spliced'", "counts", "scaled"]),
    (lambda a: ConsensusClustering(n_clusters=3).fit(a, use_rep="X_umap"), ["use_rep='X_umap'", "X_pca"]),
    (lambda a: cclust.select_k(a, use_rep="X_pca", layer="counts"), ["layer=", "use_rep="]),
    (lambda a: cclust.generate("kmeans", a, 3, use_rep="X_harmony"), ["use_rep='X_harmony'"]),
    (lambda a: cclust.select_k(a[:10], range(2, 3)), ["view", "copy=True"]),
    (lambda a: ConsensusClustering(n_clusters=3).fit(a[:10]), ["view", ".copy()"]),
    (lambda a: cclust.select_k(a[:0].copy()), ["0 observations"]),
    (lambda a: ConsensusClustering(n_clusters=3).fit(a[:0].copy()), ["0 observations"]),
    (lambda a: ConsensusClustering(n_clusters=3).fit(a, key_added=""), ["key_added"]),
    (lambda a: cclust.select_k(a, copy="yes"), ["copy"]),
    (lambda a: cclust.select_k(a.X, layer="counts"), ["layer", "AnnData"]),
    (lambda a: ConsensusClustering(n_clusters=3).fit(a.X, use_rep="X_pca"), ["use_rep", "AnnData"]),
    (lambda a: cclust.generate("kmeans", a.X, 3, layer="counts"), ["layer", "AnnData"]),
    (lambda a: cclust.select_k(a.X, copy=True), ["copy", "AnnData"]),
    (lambda a: cclust.select_k(_mudata_like()), ["MuData", ".mod["]),
    (lambda a: ConsensusClustering(n_clusters=3).fit(_mudata_like()), ["MuData", ".mod["]),
], ids=["missing-layer", "missing-obsm", "layer-and-use_rep", "generate-missing-obsm", "view-select_k", "view-fit",
        "no-obs-select_k", "no-obs-fit", "empty-key", "copy-not-bool", "layer-on-array", "use_rep-on-array",
        "generate-layer-on-array", "copy-on-array", "mudata-select_k", "mudata-fit"])
def test_bad_input_names_the_argument_and_changes_nothing(call, words):
    adata = make_adata()
    before = adata.copy()
    with pytest.raises(ValidationError) as info:
        call(adata)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert_only_added(before, adata)


def test_a_sparse_matrix_past_the_memory_budget_is_refused_before_densifying(monkeypatch):
    adata = make_adata()
    need = adata.n_obs * adata.n_vars * 8
    with pytest.raises(MemoryBudgetError, match="layers\\['counts'\\]"):
        cclust.select_k(adata, layer="counts", max_bytes=need - 1)
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", str(need - 1))
    with pytest.raises(MemoryBudgetError, match="use_rep='X_pca'"):
        ConsensusClustering(n_clusters=3).fit(adata, layer="counts")


def test_array_input_does_not_import_anndata(tmp_path):
    code = ("import sys, numpy as np, cclust\n"
            "X = np.random.default_rng(0).normal(size=(40, 3))\n"
            "cclust.ConsensusClustering(n_clusters=2, n_partitions=3, random_state=0).fit(X)\n"
            "cclust.generate('kmeans', X, 2, n_partitions=2, random_state=0)\n"
            "print('anndata' in sys.modules)\n")
    # from an empty folder, so that a source checkout there cannot shadow the installed cclust
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


# -- the command line --------------------------------------------------------------------------

def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def h5ad_file(tmp_path):
    path = tmp_path / "iris.h5ad"
    make_adata().write_h5ad(path)
    return path


def test_cli_run_writes_a_copy_of_the_h5ad_with_the_labels(capsys, tmp_path, h5ad_file):
    digest = _digest(h5ad_file)
    out = tmp_path / "labelled.h5ad"
    code, text, err = run_cli(capsys, "run", h5ad_file, "-m", "kcc", "-k", 3, "--partitions", R,
                              "--labels-column", "species", "-o", out)
    assert code == 0, err
    assert "3 classes" in text and f"labels written to {out}" in text
    assert _digest(h5ad_file) == digest  # the input file is only read
    X, _ = load_iris()
    ensemble = cclust.generate("kmeans", X, 3, n_partitions=R, random_state=0)
    expected = cclust.consensus("kcc", ensemble, 3, random_state=0).labels
    original, written = ad.read_h5ad(h5ad_file), ad.read_h5ad(out)
    assert_only_added(original, written, obs=["cclust", "cclust_item_consensus"], uns=["cclust"])
    assert_scanpy_categorical(written.obs["cclust"], expected)
    assert written.uns["cclust"]["method"] == "kcc" and written.uns["cclust"]["params"]["seed"] == 0


def test_cli_run_comparison_and_csv_output_from_h5ad(capsys, tmp_path, h5ad_file):
    out = tmp_path / "two.h5ad"
    code, _, err = run_cli(capsys, "run", h5ad_file, "-m", "kcc", "-m", "mcla", "-k", 3, "--partitions", R,
                           "--use-rep", "X_pca", "-o", out)
    assert code == 0, err
    written = ad.read_h5ad(out)
    assert_only_added(ad.read_h5ad(h5ad_file), written,
                      obs=["cclust_kcc", "cclust_kcc_item_consensus", "cclust_mcla", "cclust_mcla_item_consensus"],
                      uns=["cclust_kcc", "cclust_mcla"])
    assert written.uns["cclust_kcc"]["params"]["use_rep"] == "X_pca"
    csv_out = tmp_path / "labels.csv"
    code, _, err = run_cli(capsys, "run", h5ad_file, "-m", "kcc", "-k", 3, "--partitions", R, "-o", csv_out)
    assert code == 0, err
    lines = csv_out.read_text().splitlines()
    assert lines[0] == "id,label" and lines[1].startswith("cell0,")


def test_cli_select_k_writes_the_answer_into_a_copy(capsys, tmp_path):
    X, y = _blobs()
    source = tmp_path / "blobs.h5ad"
    make_adata(X, y).write_h5ad(source)
    out = tmp_path / "chosen.h5ad"
    code, text, err = run_cli(capsys, "select-k", source, "--k-range", 2, 4, "--resamples", 8, "--null", "none",
                              "-o", out)
    assert code == 0, err
    expected = cclust.select_k(X, **SELECT)
    written = ad.read_h5ad(out)
    k = expected.best_k
    assert f"labels at K = {k} written to {out}" in text
    assert_only_added(ad.read_h5ad(source), written, obs=[f"cclust_k{k}", f"cclust_k{k}_item_consensus"],
                      uns=["cclust_select_k"])
    assert_scanpy_categorical(written.obs[f"cclust_k{k}"], expected.labels[k])


def _installed_cclust():
    return str(Path(sysconfig.get_path("scripts")) / ("cclust.exe" if sys.platform == "win32" else "cclust"))


def test_installed_command_reads_h5ad(tmp_path, h5ad_file):
    out = tmp_path / "labels.json"
    done = subprocess.run([_installed_cclust(), "run", str(h5ad_file), "-m", "kcc", "-k", "3", "--partitions",
                           str(R), "--layer", "scaled", "-o", str(out)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "AnnData.layers['scaled']" in done.stdout
    assert out.exists()


@pytest.mark.parametrize("argv, words", [
    (["run", "{h5ad}", "--layer", "spliced"], ["--layer spliced", "'counts'", "drop --layer"]),
    (["run", "{h5ad}", "--use-rep", "X_umap"], ["--use-rep X_umap", "'X_pca'"]),
    (["run", "{h5ad}", "--use-rep", "X_pca", "--layer", "counts"], ["--layer and --use-rep"]),
    (["run", "iris", "--layer", "counts"], ["--layer", "not one"]),
    (["run", "iris", "-m", "kcc", "-o", "{tmp}/out.h5ad"], ["--out", ".h5ad DATA"]),
    (["select-k", "{h5ad}", "--k-range", "2", "3", "--labels-column", "tissue"], ["--labels-column tissue", "species"]),
    (["run", "{tmp}/broken.h5ad"], ["cannot read it as an AnnData"]),
    (["run", "{h5ad}", "--samples-in-columns"], ["--samples-in-columns is for CSV files"]),
    (["run", "{h5ad}", "--id-column", "0"], ["--id-column is for CSV files", "obs_names"]),
], ids=["missing-layer", "missing-obsm", "both", "layer-on-bundled", "h5ad-out-without-h5ad-in", "missing-obs-column",
        "not-hdf5", "transposed", "id-column"])
def test_cli_user_errors_are_one_line(capsys, tmp_path, h5ad_file, argv, words):
    (tmp_path / "broken.h5ad").write_text("not an HDF5 file\n")
    argv = [a.format(h5ad=h5ad_file, tmp=tmp_path) for a in argv]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert err.startswith("cclust: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, (word, err)


def test_without_anndata_the_command_names_the_extra(tmp_path, h5ad_file):
    """As where anndata is not installed (the module made unimportable): one line naming the extra."""
    code = ("import sys\nsys.modules['anndata'] = None\nfrom cclust.cli import main\n"
            f"sys.exit(main(['run', {str(h5ad_file)!r}, '-m', 'kcc', '-k', '3']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "pip install 'cclust[scverse]'" in done.stderr
