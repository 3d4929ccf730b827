"""`cclust select-k` with the heterogeneous --generator G:R,... form and --feature-subsample."""
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


def test_select_k_with_counted_generators_matches_the_api(capsys):
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "-m", "kcc", "--generator",
                             "kmeans:3,hierarchical:2", "--generator-param", "hierarchical:linkage=ward",
                             "--resamples", "3", "--seed", "2", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    X, _ = load_iris()
    expected = cclust.select_k(X, range(2, 4), method="kcc", generator="heterogeneous", n_partitions=5,
                               generator_params={"generators": [("kmeans", 3, {}),
                                                                ("hierarchical", 2, {"linkage": "ward"})]},
                               n_resamples=3, random_state=2)
    np.testing.assert_allclose(record["pac"], expected.pac)
    assert record["best_k"] == expected.best_k


def test_select_k_with_shared_generators_and_feature_subsample(capsys):
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "-m", "kcc", "--generator",
                             "kmeans,pam", "--partitions", "4", "--resamples", "2", "--feature-subsample", "0.5",
                             "--format", "json")
    assert code == 0, err
    X, _ = load_iris()
    expected = cclust.select_k(X, range(2, 4), method="kcc", generator="heterogeneous", n_partitions=4,
                               generator_params={"generators": [("kmeans", None, {}), ("pam", None, {})]},
                               n_resamples=2, feature_subsample=0.5, random_state=0)
    np.testing.assert_allclose(json.loads(out)["pac"], expected.pac)


@pytest.mark.parametrize("argv, words", [
    (["--generator", "kmeans:3,pam:2", "--partitions", "7"], ["--partitions 7", "give one of them"]),
    (["--generator", "kmeans:3,pam"], ["every generator or to none"]),
    (["--generator", "kmeans:3,pam:2", "--generator-param", "linkage=ward"], ["G:KEY=VALUE"]),
    (["--generator", "kmeans:3,pam:2", "--generator-param", "gmm:n_init=2"], ["'gmm' is not one of"]),
    (["--feature-subsample", "1.5"], ["feature_subsample"]),
], ids=["partitions-and-counts", "mixed-counts", "unscoped-param", "unknown-scope", "feature-subsample"])
def test_select_k_generator_bad_input(capsys, argv, words):
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "-m", "kcc", "--resamples", "2",
                             *argv)
    assert code == 2 and err.startswith("cclust: error: "), (out, err)
    for word in words:
        assert word in err


def test_select_k_item_and_feature_weight_files(capsys, tmp_path):
    X, _ = load_iris()
    w = np.ones(X.shape[0])
    w[:10] = 0.01
    items = tmp_path / "items.txt"
    items.write_text("\n".join(map(str, w)) + "\n")
    features = tmp_path / "features.npy"
    np.save(features, np.array([1.0, 1.0, 0.0, 0.0]))
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--resamples", "5",
                             "--item-weights", items, "--feature-weights", features, "--feature-subsample", "0.5",
                             "--format", "json")
    assert code == 0, err
    expected = cclust.select_k(X, range(2, 4), n_resamples=5, item_weights=w, feature_weights=[1, 1, 0, 0],
                               feature_subsample=0.5, random_state=0)
    np.testing.assert_allclose(json.loads(out)["pac"], expected.pac)
    bad = tmp_path / "bad.txt"
    bad.write_text("1\nx\n")
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--item-weights", bad)
    assert code == 2 and "--item-weights" in err and "one number per line" in err
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--item-weights", items,
                             "--feature-weights", tmp_path / "missing.npy")
    assert code == 2 and "--feature-weights" in err
    short = tmp_path / "short.txt"
    short.write_text("1\n2\n")
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--item-weights", short)
    assert code == 2 and "item_weights must have one weight per object (150)" in err
