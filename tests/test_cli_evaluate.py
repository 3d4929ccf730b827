"""`cclust evaluate`: diceR's consensus_evaluate, trim and reweigh on the command line."""
import csv
import io
import json

import numpy as np
import pytest

import cclust
from cclust import cli
from cclust.datasets import load_iris
from cclust.evaluation import evaluate, reweigh, trim

pytest.importorskip("sklearn")

ARGS = ["--generator", "kmeans:3,pam:3,gmm:3"]


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_evaluate_matches_the_api(capsys):
    code, out, err = run_cli(capsys, "evaluate", "iris", *ARGS, "--trim", "2", "--reweigh", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    X, y = load_iris()
    E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 3, "pam": 3, "gmm": 3}, random_state=0)
    expected = evaluate(X, E, 3, labels_true=y, random_state=0)
    assert record["order"] == list(expected.order)
    rows = {row["algorithm"]: row for row in record["algorithms"]}
    for a, name in enumerate(expected.algorithms):
        assert rows[name]["silhouette"] == pytest.approx(expected.indices["silhouette"][a])
        assert rows[name]["kept"] == (name in expected.order[:2])
    kept = reweigh(trim(E, expected, 2), expected)
    prov = np.array(kept.provenance)
    assert rows[expected.order[0]]["weight"] == pytest.approx(kept.weights[prov == expected.order[0]].sum())


def test_evaluate_table_fuse_save_and_read_back(capsys, tmp_path):
    path = tmp_path / "kept.csv"
    code, out, err = run_cli(capsys, "evaluate", "iris", *ARGS, "--trim", "2", "--fuse", "kcc",
                             "--save-ensemble", path)
    assert code == 0, err
    assert "rank  algorithm" in out and "kept: " in out and "fused by kcc: K = 3, ARI" in out
    code, out, err = run_cli(capsys, "evaluate", "iris", "--ensemble", path, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 and all(row["n_partitions"] == "3" for row in rows)


@pytest.mark.parametrize("argv, words", [
    (["evaluate", "iris", "--trim", "0"], ["--trim", "positive integer"]),
    (["evaluate", "iris", "-m", "no-such-method"], ["no-such-method"]),
    (["evaluate", "iris", "-k", "1"], ["-k"]),
    (["evaluate", "iris", "--generator", "kmeans:0"], ["--generator"]),
], ids=["trim-zero", "unknown-method", "k-one", "bad-count"])
def test_evaluate_bad_input(capsys, argv, words):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and err.startswith("cclust: error: ")
    for word in words:
        assert word in err


def test_evaluate_plot(capsys, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    path = tmp_path / "ranks.png"
    code, out, err = run_cli(capsys, "evaluate", "iris", *ARGS, "--plot", path)
    assert code == 0, err
    assert f"figure written to {path}" in out
    pixels = image.imread(path)
    assert pixels.ndim == 3 and pixels[..., :3].std() > 0.05


def test_evaluate_several_k_matches_the_api(capsys, tmp_path):
    code, out, err = run_cli(capsys, "evaluate", "iris", "-k", "2,3,4", *ARGS, "--k-method", "all", "--trim", "2",
                             "--reweigh", "--format", "json", "--fuse", "kcc")
    assert code == 0, err
    record = json.loads(out)
    X, y = load_iris()
    Es = {k: cclust.generate("heterogeneous", X, k, generators={"kmeans": 3, "pam": 3, "gmm": 3}, random_state=0)
          for k in (2, 3, 4)}
    expected = evaluate(X, Es, [2, 3, 4], labels_true=y, k_method="all", random_state=0)
    assert record["order"] == [list(c) for c in expected.order]
    assert record["best_k"] == expected.best_k and record["chosen_k"] == [2, 3, 4] and record["k_rule"] == "all"
    kept = reweigh(trim(Es, expected, 2), expected)
    prov = np.array(kept.provenance)
    rows = {(row["algorithm"], row["k"]): row for row in record["algorithms"]}
    assert len(rows) == 9
    for (a, k), row in rows.items():
        assert row["weight"] == pytest.approx(kept.weights[prov == f"{a} k={k}"].sum())
        assert row["kept"] == (f"{a} k={k}" in set(prov))
    assert record["fused"]["n_clusters"] == expected.best_k


def test_evaluate_several_k_table_csv_and_plot(capsys, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    path = tmp_path / "ranks.png"
    code, out, err = run_cli(capsys, "evaluate", "iris", "--k", "2-4", *ARGS, "--plot", path, "--matrix", "sparse")
    assert code == 0, err
    assert "best K by the internal indices:" in out and "K used for trimming (labels_true): 3" in out
    assert image.imread(path)[..., :3].std() > 0.05
    code, out, err = run_cli(capsys, "evaluate", "iris", "-k", "3,4", *ARGS, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 6 and {row["k"] for row in rows} == {"3", "4"}


@pytest.mark.parametrize("argv, words", [
    (["evaluate", "iris", "-k", "3,x"], ["-k", "comma-separated"]),
    (["evaluate", "iris", "-k", "3", "--k-method", "3"], ["--k-method", "several K"]),
    (["evaluate", "iris", "-k", "3,4", "--k-method", "5"], ["--k-method"]),
    (["evaluate", "iris", "-k", "3,4", "--k-method", "best"], ["--k-method"]),
    (["evaluate", "iris", "-k", "2,4"], ["labels_true has 3 classes"]),
    (["evaluate", "iris", "--matrix", "knn"], ["--matrix"]),
], ids=["bad-k", "k-method-one-k", "k-method-not-given", "k-method-word", "truth-k-missing", "bad-matrix"])
def test_evaluate_several_k_bad_input(capsys, argv, words):
    code, out, err = run_cli(capsys, *argv, *ARGS)
    assert code == 2 and err.startswith("cclust: error: ")
    for word in words:
        assert word in err


def test_evaluate_several_k_on_one_ensemble_file(capsys, tmp_path):
    path = tmp_path / "parts.csv"
    code, out, err = run_cli(capsys, "evaluate", "iris", *ARGS, "--save-ensemble", path)
    assert code == 0, err
    code, out, err = run_cli(capsys, "evaluate", "iris", "--ensemble", path, "-k", "2,3", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["n_clusters"] == [2, 3] and record["chosen_k"] == [3] and record["k_rule"] == "labels_true"
    assert {(row["algorithm"], row["k"]) for row in record["algorithms"]} == {
        (a, k) for a in ("kmeans", "pam", "gmm") for k in (2, 3)}
    # PAM's three partitions are identical (PAM is deterministic): they cannot be fused into 4
    code, out, err = run_cli(capsys, "evaluate", "iris", "--ensemble", path, "-k", "3,4")
    assert code == 2 and "n_clusters=4" in err
