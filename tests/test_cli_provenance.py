"""The command line with heterogeneous ensembles: --generator G:R,..., --save-ensemble, fuse."""
import csv
import json

import numpy as np
import pytest

import cclust
from cclust import cli
from cclust.datasets import load_iris

pytest.importorskip("sklearn")


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def user_error(capsys, *argv):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and err.startswith("cclust: error: ") and "Traceback" not in err, (out, err)
    return err


SPEC = {"kmeans": 4, "hierarchical": {"n_partitions": 2, "linkage": "ward"}, "gmm": 2}
ARGS = ["--generator", "kmeans:4,hierarchical:2,gmm:2", "--generator-param", "hierarchical:linkage=ward"]


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".npz"])
def test_run_saves_the_ensemble_and_fuse_reads_its_provenance(capsys, tmp_path, suffix):
    path = tmp_path / f"parts{suffix}"
    code, out, err = run_cli(capsys, "run", "iris", "-m", "kcc", *ARGS, "--save-ensemble", path)
    assert code == 0, err
    assert "8 partitions (4 kmeans, 2 hierarchical-ward, 2 gmm)" in out
    X, _ = load_iris()
    expected = cclust.generate("heterogeneous", X, 3, generators=SPEC, random_state=0)
    from cclust.cli._readers import load_ensemble

    read, _ = load_ensemble(str(path))
    assert read == expected  # labels, weights and provenance
    if suffix == ".csv":
        with open(path, newline="") as handle:
            assert next(csv.reader(handle)) == list(expected.provenance)
    code, out, err = run_cli(capsys, "fuse", path, "-k", "3", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["provenance"] == {"kmeans": 4, "hierarchical-ward": 2, "gmm": 2}
    assert "(4 kmeans, 2 hierarchical-ward, 2 gmm)" in record["ensemble"]


def test_run_json_and_single_generator_provenance(capsys, tmp_path):
    code, out, err = run_cli(capsys, "run", "iris", "-m", "kcc", *ARGS, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["provenance"] == {"kmeans": 4, "hierarchical-ward": 2, "gmm": 2}
    code, out, err = run_cli(capsys, "run", "iris", "-m", "kcc", "--generator", "hierarchical", "--partitions", 3,
                             "--generator-param", "linkage=complete", "--generator-param", "p_item=0.8")
    assert code == 0, err
    assert "3 hierarchical partitions (3 hierarchical-complete)" in out
    code, out, err = run_cli(capsys, "run", "iris", "-m", "kcc", "--generator", "pam,gmm", "--partitions", 3)
    assert code == 0, err
    assert "3 partitions (2 pam, 1 gmm)" in out


def test_fuse_of_a_csv_with_distinct_names_shows_no_counts(capsys, tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("run1,run2\n0,0\n0,1\n1,1\n1,1\n")
    code, out, err = run_cli(capsys, "fuse", path, "-k", "2")
    assert code == 0, err
    assert "2 partitions (K_i" in out


@pytest.mark.parametrize("argv, words", [
    (["--generator", "kmeans:4,gmm"], "give a count to every generator or to none"),
    (["--generator", "kmeans:x"], "a count after ':' must be a positive integer"),
    (["--generator", "kmeans:4,gmm:4", "--partitions", "8"], "--partitions 8 and the counts"),
    (["--generator", "kmeans:4,gmm:4", "--generator-param", "linkage=ward"], "give their parameters as G:KEY=VALUE"),
    (["--generator", "kmeans:4,gmm:4", "--generator-param", "pam:metric=l1"], "'pam' is not one of the generators"),
    (["--generator", "kmeans:4,gmm:4", "--generator-param", "kmeans:linkage=ward"],
     "the generator 'kmeans' has no parameter 'linkage'"),
    (["--generator", "kmeans:4,gmm:4", "--save-ensemble", "parts.json"], "--save-ensemble parts.json"),
    (["--generator", "gmm", "--generator-param", "p_item=1.5"], "gmm: p_item must be"),
])
def test_bad_generator_options(capsys, argv, words):
    err = user_error(capsys, "run", "iris", "-m", "kcc", "--partitions", "4", *argv) if "--partitions" not in argv \
        else user_error(capsys, "run", "iris", "-m", "kcc", *argv)
    assert words in err, err


def test_npz_with_bad_provenance(capsys, tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, labels=np.array([[0, 1], [0, 1], [1, 0]]), provenance=np.array([1, 2]))
    assert "the array 'provenance' must be 1-D text" in user_error(capsys, "fuse", path, "-k", "2")
    np.savez(path, labels=np.array([[0, 1], [0, 1], [1, 0]]), provenance=np.array(["a"]))
    assert "provenance must name what made each of the 2 partitions" in user_error(capsys, "fuse", path, "-k", "2")
