"""``cclust markers``: the table from a CSV with a labels column, from a labels file (as
``cclust run -o`` writes it) and from an .h5ad obs column equals ``cclust.markers``; the
outputs (-o, --plot); and the user errors, each one line and exit status 2."""
import csv
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import cclust
from cclust import cli
from cclust.datasets import load_iris

SPECIES = np.array(["setosa", "versicolor", "virginica"])
NAMES = ["sepal length", "sepal width", "petal length", "petal width"]


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_user_error(capsys, argv, *words):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert err.startswith("cclust: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word.lower() in err.lower(), (word, err)
    return err


@pytest.fixture
def iris_csv(tmp_path):
    X, y = load_iris()
    path = tmp_path / "iris.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(NAMES + ["species"])
        writer.writerows([[*map(repr, map(float, x)), SPECIES[c]] for x, c in zip(X, y)])
    return path


def _read_table(path, delimiter=","):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle, delimiter=delimiter))


def test_labels_column_table_equals_the_api(capsys, iris_csv, tmp_path):
    X, y = load_iris()
    out_path = tmp_path / "markers.csv"
    code, out, err = run_cli(capsys, "markers", iris_csv, "--labels-column", "species", "-o", out_path)
    assert code == 0, err
    assert "3 clusters from --labels-column species" in out
    assert "Benjamini & Hochberg (1995)" in out and "Mann & Whitney 1947" in out
    # the printed table: the header, then 4 features (fewer than --top's 5) of each species by name
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("cluster"))
    assert lines[head].split() == ["cluster", "feature", "score", "AUROC", "p", "adjusted", "p"]
    body = lines[head + 2:head + 2 + 12]
    assert body[0].startswith("setosa") and "sepal width" in body[0]
    expected = cclust.markers(X, SPECIES[y], feature_names=NAMES, as_frame=False)
    rows = _read_table(out_path)
    assert [r["cluster"] for r in rows] == expected["cluster"]
    assert [r["feature"] for r in rows] == expected["feature"]
    for key in ("score", "auroc", "p_value", "p_value_adjusted"):
        assert [float(r[key]) for r in rows] == pytest.approx(expected[key], rel=1e-15, abs=0)
    assert "wrote every feature of each cluster (12 rows)" in out


def test_labels_file_written_by_run(capsys, tmp_path):
    X, _ = load_iris()
    data = tmp_path / "features.csv"
    with open(data, "w", newline="") as handle:
        csv.writer(handle).writerows([NAMES] + [list(map(repr, map(float, x))) for x in X])
    labels_path = tmp_path / "labels.csv"
    code, out, err = run_cli(capsys, "run", data, "--method", "kcc", "-k", "3", "--partitions", "10", "-o",
                             labels_path)
    assert code == 0, err
    labels = np.array([int(r["label"]) for r in _read_table(labels_path)])
    out_path = tmp_path / "top.tsv"
    code, out, err = run_cli(capsys, "markers", data, "--labels", labels_path, "--method", "t-test", "--top", "2",
                             "-o", out_path)
    assert code == 0, err
    expected = cclust.markers(X, labels, method="t-test", n_top=2, feature_names=NAMES, as_frame=False)
    rows = _read_table(out_path, "\t")
    assert [int(r["cluster"]) for r in rows] == expected["cluster"]
    assert [r["feature"] for r in rows] == expected["feature"]
    for key in ("score", "auroc", "p_value", "p_value_adjusted"):
        assert [float(r[key]) for r in rows] == pytest.approx(expected[key], rel=1e-15, abs=0)
    assert "wrote the 2 best features of each cluster (6 rows)" in out


def test_labels_file_one_column_and_npy(capsys, tmp_path):
    X, y = load_iris()
    data = tmp_path / "X.npy"
    np.save(data, X)
    text = tmp_path / "clusters.txt"
    text.write_text("cluster\n" + "\n".join(SPECIES[y]) + "\n")
    code, out, err = run_cli(capsys, "markers", data, "--labels", text, "--method", "t-test", "--top", "2",
                             "-o", tmp_path / "t.tsv")
    assert code == 0, err
    expected = cclust.markers(X, SPECIES[y], method="t-test", n_top=2,
                              feature_names=[f"column {j}" for j in range(4)], as_frame=False)
    rows = _read_table(tmp_path / "t.tsv", "\t")
    assert [r["feature"] for r in rows] == expected["feature"]
    assert [float(r["score"]) for r in rows] == pytest.approx(expected["score"], rel=1e-15, abs=0)
    assert "The 2 highest-scoring features of each cluster" in out
    assert "Welch's (1947)" in out
    vector = tmp_path / "labels.npy"
    np.save(vector, y)
    code, out, err = run_cli(capsys, "markers", data, "--labels", vector)
    assert code == 0, err
    assert "3 clusters from --labels" in out


def test_h5ad_obs_column_and_plot(capsys, tmp_path):
    anndata = pytest.importorskip("anndata")
    pytest.importorskip("matplotlib")
    X, y = load_iris()
    adata = anndata.AnnData(X.astype(np.float64))
    adata.var_names = [name.replace(" ", "_") for name in NAMES]
    adata.obs["louvain"] = SPECIES[y]
    path = tmp_path / "iris.h5ad"
    adata.write_h5ad(path)
    figure = tmp_path / "markers.png"
    code, out, err = run_cli(capsys, "markers", path, "--labels-column", "louvain", "--top", "1", "--plot", figure)
    assert code == 0, err
    assert "The highest-scoring feature of each cluster" in out
    assert any(line.split()[:2] == ["virginica", "petal_width"] for line in out.splitlines())
    assert figure.stat().st_size > 0 and f"wrote the dot plot of each cluster's best features to {figure}" in out


def test_errors_are_one_line(capsys, iris_csv, tmp_path):
    X, y = load_iris()
    data = tmp_path / "X.npy"
    np.save(data, X)
    assert_user_error(capsys, ["markers", iris_csv, "--labels-column", "cluster"], "--labels-column", "cluster")
    short = tmp_path / "short.txt"
    short.write_text("\n".join(map(str, y[:100])) + "\n")
    assert_user_error(capsys, ["markers", data, "--labels", short], "100 labels", "150 objects")
    one = tmp_path / "one.txt"
    one.write_text("\n".join(["a"] * 150) + "\n")
    assert_user_error(capsys, ["markers", data, "--labels", one], "one cluster", "at least two")
    assert_user_error(capsys, ["markers", data], "--labels FILE", "--labels-column NAME")
    assert_user_error(capsys, ["markers", iris_csv, "--labels", one, "--labels-column", "species"], "give one")
    assert_user_error(capsys, ["markers", data, "--labels", one, "-o", tmp_path / "m.json"], ".csv or .tsv")
    one_csv = tmp_path / "one.csv"
    one_csv.write_text(one.read_text())
    assert_user_error(capsys, ["markers", data, "--labels", one_csv, "-o", one_csv], "--labels file")
    assert one_csv.read_text() == one.read_text()
    assert_user_error(capsys, ["markers", data, "--labels", tmp_path / "none.txt"], "no such file")
    assert_user_error(capsys, ["markers", data, "--labels", short, "--method", "anova"], "--method")
    singleton = tmp_path / "singleton.txt"
    singleton.write_text("\n".join(["a"] * 149 + ["b"]) + "\n")
    assert_user_error(capsys, ["markers", data, "--labels", singleton, "--method", "t-test"], "'b'", "wilcoxon")
    assert one.read_text().count("a") == 150  # the labels file is untouched


def test_installed_command_reports_an_error_in_one_line(tmp_path):
    scripts = Path(sysconfig.get_path("scripts"))
    command = scripts / "cclust"
    if not command.exists():
        pytest.skip("no installed cclust command next to this Python")
    done = subprocess.run([str(command), "markers", "iris", "--labels-column", "x"], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("cclust: error: ") and done.stderr.count("\n") == 1
    done = subprocess.run([str(command), "markers", "iris", "--top", "1"], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    assert done.returncode == 0 and "column 3" in done.stdout
