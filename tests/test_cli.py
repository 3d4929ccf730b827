"""The ``cclust`` command, run in-process through ``main([...])`` and once as a real process."""
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cclust
from cclust import cli
from cclust.cli._csv import _detect_header
from cclust.datasets import load_iris
from cclust.utilities import KCC_UTILITIES

R = "12"  # basic partitions per run: enough for stable consensus on iris, keeps the file fast
SPECIES = np.array(["setosa", "versicolor", "virginica"])


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_user_error(capsys, argv, *words):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert err.startswith("cclust: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word.lower() in err.lower(), (word, err)
    return err


def api_labels(method, k=3, X=None, **params):
    """The labels the Python API gives for the CLI's defaults (kmeans generator, seed 0)."""
    if X is None:
        X, _ = load_iris()
    ensemble = cclust.generate("kmeans", X, k, n_partitions=int(R), random_state=0)
    return cclust.consensus(method, ensemble, k, random_state=0, **params).labels


@pytest.fixture
def iris_files(tmp_path):
    X, y = load_iris()
    names = ["sepal length", "sepal width", "petal length", "petal width", "species"]
    rows = [[*map(repr, map(float, x)), SPECIES[c]] for x, c in zip(X, y)]
    with_header = tmp_path / "iris.csv"
    with open(with_header, "w", newline="") as handle:
        csv.writer(handle).writerows([names] + rows)
    no_header = tmp_path / "iris_noheader.csv"
    with open(no_header, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    npy = tmp_path / "X.npy"
    np.save(npy, X)
    npz = tmp_path / "Xy.npz"
    np.savez(npz, X=X, y=SPECIES[y])
    return {"header": with_header, "noheader": no_header, "npy": npy, "npz": npz}


# -- run: comparison --------------------------------------------------------------------------------

def test_run_iris_compares_every_registered_method(capsys):
    code, out, err = run_cli(capsys, "run", "iris", "--partitions", R)
    assert code == 0, err
    lines = out.splitlines()
    assert "150 objects" in lines[0] and "3 classes" in lines[0]
    header = lines[2].split()
    assert header == ["method", "K", "ARI", "NMI", "agreement", "seconds", "note"]
    rows = {line.split()[0]: line.split() for line in lines[4:] if line and not line[0].isdigit()}
    assert set(cclust.available(kind="consensus")) <= set(rows)
    kcc = rows["kcc"]
    assert kcc[1] == "3" and 0.5 < float(kcc[2]) <= 1 and 0.5 < float(kcc[3]) <= 1
    assert "alias of eac" in " ".join(rows["hac"])


def test_run_json_rows_match_the_api(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,cspa", "--format", "json")
    assert code == 0
    record = json.loads(out)
    assert [r["method"] for r in record["rows"]] == ["kcc", "cspa"]
    _, y = load_iris()
    ari = cclust.get("ari")
    # Two methods are a comparison; the single-method path is checked against the API below.
    for row in record["rows"]:
        assert row["status"] == "ok" and row["n_clusters"] == 3
        assert row["ari"] == pytest.approx(ari(y, api_labels(row["method"])))


def test_run_without_true_labels_shows_each_criterion(iris_files, capsys):
    code, out, _ = run_cli(capsys, "run", iris_files["npy"], "-k", "3", "--partitions", R, "-m", "kcc", "-m", "mcla")
    assert code == 0
    assert "ARI" not in out and "criterion" in out
    assert "Gamma" in out and "edge cut" in out


def test_a_failing_method_is_reported_in_its_row(capsys):
    def broken(ensemble, n_clusters, *, random_state=None):
        """A consensus function that always fails."""
        raise RuntimeError("deliberately broken for the test")

    cclust.register("broken-for-cli-test", broken, kind="consensus")
    try:
        code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "--format", "json")
    finally:
        cclust.registry.unregister("broken-for-cli-test")
    assert code == 0
    rows = {r["method"]: r for r in json.loads(out)["rows"]}
    assert rows["broken-for-cli-test"]["status"] == "error"
    assert "deliberately broken" in rows["broken-for-cli-test"]["note"]
    assert rows["kcc"]["status"] == "ok"  # the table went on


def test_run_utilities_compares_kcc_utilities(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "--utilities", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(out.splitlines()))
    assert [r["method"] for r in rows] == [f"kcc {label}" for label, _, _ in KCC_UTILITIES]
    assert all(r["status"] == "ok" and 0.4 < float(r["ari"]) <= 1 for r in rows)


def test_sort_by_ari_puts_the_best_first(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "hbgf,cspa,kcc", "--sort", "ari",
                           "--format", "json")
    assert code == 0
    aris = [r["ari"] for r in json.loads(out)["rows"]]
    assert aris == sorted(aris, reverse=True)


# -- run: one method, files -------------------------------------------------------------------------

def test_run_one_method_writes_the_api_labels_as_csv(tmp_path, capsys):
    out_path = tmp_path / "labels.csv"
    code, out, _ = run_cli(capsys, "run", "iris", "-m", "kcc", "--partitions", R, "--out", out_path,
                           "--method-param", "utility=uc", "--method-param", "n_init=3")
    assert code == 0
    assert "Gamma" in out and "ARI / NMI" in out and f"labels written to {out_path}" in out
    lines = out_path.read_text().splitlines()
    assert lines[0] == "label" and len(lines) == 151
    expected = api_labels("kcc", utility="uc", n_init=3)
    np.testing.assert_array_equal(np.array(lines[1:], dtype=np.int64), expected)


def test_run_writes_npy_and_one_column_per_method(tmp_path, capsys):
    npy = tmp_path / "labels.npy"
    assert cli.main(["run", "iris", "-m", "ivc", "--partitions", R, "-o", str(npy)]) == 0
    np.testing.assert_array_equal(np.load(npy), api_labels("ivc"))
    table = tmp_path / "several.csv"
    assert cli.main(["run", "iris", "-m", "ivc,kcc", "--partitions", R, "-o", str(table)]) == 0
    capsys.readouterr()
    rows = list(csv.reader(table.read_text().splitlines()))
    assert rows[0] == ["ivc", "kcc"] and len(rows) == 151


def test_scoped_method_params_reach_only_their_method(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,ivc", "--format", "json",
                           "--method-param", "kcc:utility=ucos")
    assert code == 0
    rows = {r["method"]: r for r in json.loads(out)["rows"]}
    ari = cclust.get("ari")
    assert rows["kcc"]["ari"] == pytest.approx(ari(load_iris()[1], api_labels("kcc", utility="ucos")))


@pytest.mark.parametrize("kind", ["header", "noheader", "npz"])
def test_files_with_labels_give_the_bundled_result(kind, iris_files, capsys):
    extra = {"header": ["--labels-column", "species"], "noheader": ["--labels-column", "-1"], "npz": []}[kind]
    code, out, err = run_cli(capsys, "run", iris_files[kind], *extra, "-m", "kcc", "--partitions", R,
                             "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert "150 objects, 4 features, 3 classes" in record["data"]
    _, y = load_iris()
    assert record["ari"] == pytest.approx(cclust.get("ari")(y, api_labels("kcc")))


def test_header_detection_and_override(tmp_path, capsys):
    X, _ = load_iris()
    path = tmp_path / "numbers.csv"
    np.savetxt(path, X[:, :2], delimiter=";", header="a;b", comments="")
    code, out, _ = run_cli(capsys, "run", path, "-k", "3", "-m", "kcc", "--partitions", R, "--format", "json")
    assert code == 0 and "150 objects, 2 features" in json.loads(out)["data"]
    # Forcing "no header" makes the names data, which is not numeric: an error naming the column.
    assert_user_error(capsys, ["run", path, "-k", "3", "--header", "no"], "column 0", "'a'")


def test_cli_matches_api_for_any_thread_count(tmp_path, capsys):
    paths = []
    for jobs in ("1", "2"):
        paths.append(tmp_path / f"labels{jobs}.npy")
        assert cli.main(["run", "iris", "-m", "kcc", "--partitions", R, "--jobs", jobs, "-o", str(paths[-1])]) == 0
    capsys.readouterr()
    np.testing.assert_array_equal(np.load(paths[0]), np.load(paths[1]))


# -- fuse -------------------------------------------------------------------------------------------

def write_ensemble_csv(path, matrix, header=True, words=False, holes=()):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        if header:
            writer.writerow([f"run{j}" for j in range(matrix.shape[1])])
        for i, row in enumerate(matrix):
            cells = [f"c{v}" if words else str(v) for v in row]
            for j in (j for (h, j) in holes if h == i):
                cells[j] = ""
            writer.writerow(cells)


@pytest.mark.parametrize("header", [True, False], ids=["header", "noheader"])
@pytest.mark.parametrize("words", [False, True], ids=["ints", "strings"])
def test_fuse_csv_gives_the_api_result(tmp_path, capsys, header, words):
    X, _ = load_iris()
    ensemble = cclust.generate("kmeans", X, 3, n_partitions=8, random_state=3)
    holes = [(0, 1), (5, 2), (149, 7)]
    path = tmp_path / "ensemble.csv"
    write_ensemble_csv(path, ensemble.labels, header=header, words=words, holes=holes)
    out_path = tmp_path / "fused.csv"
    code, out, err = run_cli(capsys, "fuse", path, "-k", "3", "-o", out_path)
    assert code == 0, err
    assert "8 partitions" in out and "3 missing labels" in out
    labels = ensemble.labels.copy()
    for i, j in holes:
        labels[i, j] = -1
    expected = cclust.consensus("kcc", cclust.Ensemble(labels), 3, random_state=0).labels
    got = np.array(out_path.read_text().splitlines()[1:], dtype=np.int64)
    np.testing.assert_array_equal(got, expected)


def test_fuse_npy_missing_value_and_self_chosen_k(tmp_path, capsys):
    labels = np.array([[0, 1, 9], [0, 1, 9], [0, 1, 9], [1, 0, 7], [1, 0, 7], [1, 0, 7]] * 5)
    labels[0, 2] = 99
    path = tmp_path / "ensemble.npy"
    np.save(path, labels)
    code, out, _ = run_cli(capsys, "fuse", path, "--missing", "99", "-m", "addremadd", "--format", "json")
    assert code == 0
    record = json.loads(out)
    assert record["n_clusters"] == 2 and record["cluster_sizes"] == [15, 15]
    assert "1 missing" in record["ensemble"]
    assert_user_error(capsys, ["fuse", path], "-k", "kcc")


def test_fuse_refuses_methods_needing_features(tmp_path, capsys):
    path = tmp_path / "e.csv"
    write_ensemble_csv(path, np.array([[0, 1], [0, 1], [1, 0], [1, 0]]))
    assert_user_error(capsys, ["fuse", path, "-k", "2", "-m", "wosp"], "wosp", "features", "cclust run")


# -- every data row is one object, for every reader ---------------------------------------------------

def _write_table(path, rows, header=None, delimiter=",", newline="\n"):
    with open(path, "w", newline="") as handle:
        csv.writer(handle, delimiter=delimiter, lineterminator=newline).writerows(([header] if header else []) + rows)


READERS = ["csv-header", "csv-noheader", "tsv", "crlf", "npy", "npz"]


def _save_as(kind, folder, stem, matrix, fmt, npz_key):
    """``matrix`` in the file format ``kind``; returns the path."""
    rows = [[fmt(v) for v in row] for row in matrix]
    header = [f"c{j}" for j in range(matrix.shape[1])]
    if kind == "npy":
        path = folder / f"{stem}.npy"
        np.save(path, matrix)
    elif kind == "npz":
        path = folder / f"{stem}.npz"
        np.savez(path, **{npz_key: matrix})
    else:
        path = folder / f"{stem}.{'tsv' if kind == 'tsv' else 'csv'}"
        _write_table(path, rows, header=None if kind == "csv-noheader" else header,
                     delimiter="\t" if kind == "tsv" else ",", newline="\r\n" if kind == "crlf" else "\n")
    return path


@pytest.mark.parametrize("kind", READERS)
def test_run_writes_one_label_per_data_row_for_every_reader(kind, tmp_path, capsys):
    X = load_iris()[0][::4]  # 38 objects
    path = _save_as(kind, tmp_path, "features", X, lambda v: repr(float(v)), "X")
    out = tmp_path / "labels.npy"
    code, text, err = run_cli(capsys, "run", path, "-k", "3", "-m", "kcc", "--partitions", "6", "-o", out)
    assert code == 0, err
    assert f"{len(X)} objects" in " ".join(text.split())  # a long path may wrap the line
    labels = np.load(out)
    assert labels.shape == (len(X),)
    ensemble = cclust.generate("kmeans", X, 3, n_partitions=6, random_state=0)
    np.testing.assert_array_equal(labels, cclust.consensus("kcc", ensemble, 3, random_state=0).labels)


@pytest.mark.parametrize("kind", READERS)
def test_fuse_writes_one_label_per_data_row_for_every_reader(kind, tmp_path, capsys):
    partitions = cclust.generate("kmeans", load_iris()[0][::3], 3, n_partitions=5, random_state=1).labels
    path = _save_as(kind, tmp_path, "partitions", partitions, str, "labels")
    out = tmp_path / "labels.csv"
    code, text, err = run_cli(capsys, "fuse", path, "-k", "3", "-o", out)
    assert code == 0, err
    assert f"{len(partitions)} objects" in " ".join(text.split())
    written = out.read_text().splitlines()
    assert written[0] == "label" and len(written) == len(partitions) + 1
    expected = cclust.consensus("kcc", cclust.Ensemble(partitions), 3, random_state=0).labels
    np.testing.assert_array_equal(np.array(written[1:], dtype=np.int64), expected)


def test_blank_rows_of_a_partitions_file_are_objects_missing_from_every_partition(tmp_path, capsys):
    # Rows 1-3 and 5-7 are two clear groups; row 4 is ",", row 8 a completely empty line.
    # Empty lines before the header and after the last row (the final newlines) are not rows.
    path = tmp_path / "partitions.csv"
    path.write_text("\n\nrun0,run1\n0,1\n0,1\n0,1\n,\n1,0\n1,0\n1,0\n\n0,1\n1,0\n\n\n")
    out = tmp_path / "labels.json"
    code, text, err = run_cli(capsys, "fuse", path, "-k", "2", "-o", out)
    assert code == 0, err
    assert "10 objects" in " ".join(text.split()) and "2 objects in no partition (data rows 4, 8)" in " ".join(text.split())
    labels = json.loads(out.read_text())["kcc"]
    assert len(labels) == 10
    matrix = np.array([[0, 1]] * 3 + [[-1, -1]] + [[1, 0]] * 3 + [[-1, -1], [0, 1], [1, 0]])
    expected = cclust.consensus("kcc", cclust.Ensemble(matrix), 2, random_state=0).labels
    np.testing.assert_array_equal(labels, expected)
    assert labels[0] == labels[1] == labels[2] == labels[8] != labels[4] == labels[5] == labels[6] == labels[9]


def test_every_method_labels_an_object_missing_from_every_partition_or_says_why(tmp_path, capsys):
    path = tmp_path / "partitions.csv"
    path.write_text("0,1\n0,1\n0,1\n,\n1,0\n1,0\n1,0\n")
    out = tmp_path / "labels.json"
    names = sorted(cclust.available(kind="consensus"))
    code, text, err = run_cli(capsys, "fuse", path, "-k", "2", "-m", ",".join(names), "--format", "json", "-o", out)
    assert code == 0, err
    rows = {r["method"]: r for r in json.loads(text)["rows"]}
    written = json.loads(out.read_text())
    for name in names:
        if rows[name]["status"] == "ok":
            assert len(written[name]) == 7, name
        else:  # a clear refusal in its row: it needs complete partitions, or the features
            assert "missing labels" in rows[name]["note"] or "features X" in rows[name]["note"], rows[name]
    assert {"kcc", "cspa", "mcla", "hbgf", "voting", "addremadd"} <= set(written)


def test_blank_rows_of_a_feature_file_are_refused_or_imputed(tmp_path, capsys):
    path = tmp_path / "features.csv"
    path.write_text("a,b\n1.0,2.0\n1.2,2.1\n,\n5.0,6.0\n5.1,6.2\n\n")
    assert_user_error(capsys, ["run", path, "-k", "2"], "line 4", "no feature value", "--missing-features mean")
    path.write_text("a,b\n1.0,2.0\n1.2,2.1\n\n5.0,6.0\n5.1,6.2\n")  # an empty line between rows is a row too
    assert_user_error(capsys, ["run", path, "-k", "2"], "line 4", "no feature value")
    out = tmp_path / "labels.npy"
    code, text, err = run_cli(capsys, "run", path, "-k", "2", "-m", "kcc", "--partitions", "4",
                              "--missing-features", "mean", "-o", out)
    assert code == 0, err
    assert "5 objects" in " ".join(text.split())
    X = np.array([[1.0, 2.0], [1.2, 2.1], [3.075, 4.075], [5.0, 6.0], [5.1, 6.2]])
    expected = cclust.consensus("kcc", cclust.generate("kmeans", X, 2, n_partitions=4, random_state=0), 2,
                                random_state=0).labels
    np.testing.assert_array_equal(np.load(out), expected)


def test_missing_features_mean_fills_nan_cells_of_every_reader(tmp_path, capsys):
    X = load_iris()[0][::5].copy()
    X[3, 1] = np.nan
    original = X.copy()
    filled = X.copy()
    filled[3, 1] = np.nanmean(X[:, 1])
    np.save(tmp_path / "X.npy", X)
    text = "\n".join(",".join("" if (i, j) == (3, 1) else repr(float(v)) for j, v in enumerate(row))
                     for i, row in enumerate(X))
    (tmp_path / "X.csv").write_text(text + "\n")
    ensemble = cclust.generate("kmeans", filled, 3, n_partitions=4, random_state=0)
    expected = cclust.consensus("kcc", ensemble, 3, random_state=0).labels
    for name in ("X.npy", "X.csv"):
        assert_user_error(capsys, ["run", tmp_path / name, "-k", "3"], "--missing-features mean")
        out = tmp_path / f"{name}.labels.npy"
        assert cli.main(["run", str(tmp_path / name), "-k", "3", "-m", "kcc", "--partitions", "4",
                         "--missing-features", "mean", "-o", str(out)]) == 0
        np.testing.assert_array_equal(np.load(out), expected)
    np.testing.assert_array_equal(np.load(tmp_path / "X.npy"), original)
    (tmp_path / "gap.csv").write_text("a,b\n1,\n2,\n3,\n")
    assert_user_error(capsys, ["run", tmp_path / "gap.csv", "-k", "2", "--missing-features", "mean"],
                      "column 'b'", "no value")
    capsys.readouterr()


# -- --out: the format its extension names, written whole or not at all -----------------------------

def test_out_writes_the_format_its_extension_names(tmp_path, capsys):
    expected = {m: api_labels(m) for m in ("ivc", "kcc")}
    for ext in (".csv", ".tsv", ".json", ".npy"):
        out = tmp_path / f"labels{ext}"
        assert cli.main(["run", "iris", "-m", "ivc,kcc", "--partitions", R, "-o", str(out)]) == 0
        if ext == ".npy":
            got = np.load(out)
            np.testing.assert_array_equal(got, np.column_stack([expected["ivc"], expected["kcc"]]))
        elif ext == ".json":
            record = json.loads(out.read_text())
            assert list(record) == ["ivc", "kcc"]
            for method, labels in record.items():
                np.testing.assert_array_equal(labels, expected[method])
        else:
            rows = list(csv.reader(out.read_text().splitlines(), delimiter="," if ext == ".csv" else "\t"))
            assert rows[0] == ["ivc", "kcc"] and len(rows) == 151 and all(len(r) == 2 for r in rows)
            np.testing.assert_array_equal(np.array(rows[1:], dtype=np.int64)[:, 1], expected["kcc"])
    one = tmp_path / "one.json"
    assert cli.main(["run", "iris", "-m", "kcc", "--partitions", R, "-o", str(one)]) == 0
    capsys.readouterr()
    assert list(json.loads(one.read_text())) == ["kcc"]
    assert cli.main(["run", "iris", "-m", "kcc,kcc", "--partitions", R, "-o", str(one)]) == 0
    capsys.readouterr()
    assert list(json.loads(one.read_text())) == ["kcc", "kcc #2"]  # no column is lost
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize("name", ["labels.txt", "labels", "labels.xlsx", "labels.npz"])
def test_out_refuses_an_unknown_extension_before_the_work(name, tmp_path, capsys):
    calls = []

    def recording(ensemble, n_clusters, *, random_state=None):
        """Records that the work started."""
        calls.append(n_clusters)
        return cclust.ConsensusResult.from_labels(np.zeros(ensemble.n_samples, dtype=np.int64))

    (tmp_path / "labels.txt").write_text("kept\n")
    (tmp_path / "ens.csv").write_text("0,1\n0,1\n1,0\n1,0\n")
    cclust.register("recording-for-cli-test", recording, kind="consensus")
    try:
        err = assert_user_error(capsys, ["run", "iris", "-m", "recording-for-cli-test", "-o", tmp_path / name],
                                "--out", ".csv", ".tsv", ".json", ".npy")
        assert_user_error(capsys, ["fuse", tmp_path / "ens.csv", "-k", "2", "-m", "recording-for-cli-test",
                                   "-o", tmp_path / name], "--out", ".csv", ".json")
    finally:
        cclust.registry.unregister("recording-for-cli-test")
    assert (repr(os.path.splitext(name)[1]) if "." in name else "no extension") in err
    assert calls == []  # refused before any consensus ran
    assert (tmp_path / "labels.txt").read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ens.csv", "labels.txt"]


_WRITER = """
import signal
import sys
# Ctrl-C as in a terminal, whatever the test runner's process left the child (an inherited
# SIG_IGN for SIGINT would make Python skip its KeyboardInterrupt handler)
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
from cclust import ConsensusResult, cli
labels = np.arange(int(sys.argv[2])) % 7
cli.write_labels(sys.argv[1], [{"method": "m", "result": ConsensusResult.from_labels(labels)}])
"""


def _child_env():
    root = Path(cli.__file__).resolve().parents[2]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
                PYTHONDONTWRITEBYTECODE="1")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_an_interrupted_write_leaves_no_labels_file(signal_name, tmp_path):
    import signal
    import time

    target = tmp_path / "labels.csv"
    for n in (4_000_000, 16_000_000):  # the larger size only if the write beat the signal
        child = subprocess.Popen([sys.executable, "-c", _WRITER, str(target), str(n)], env=_child_env(),
                                 cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while child.poll() is None and not list(tmp_path.glob(".labels.csv.*.part")):
            time.sleep(0.002)
        child.send_signal(getattr(signal, signal_name))
        _, err = child.communicate(timeout=120)
        if child.returncode != 0:
            break
        target.unlink()
    assert child.returncode != 0, "the child finished writing before it could be interrupted"
    assert not target.exists()  # never a truncated file under the final name
    leftovers = list(tmp_path.glob(".labels.csv.*.part"))
    if signal_name == "SIGINT":
        assert "KeyboardInterrupt" in err and leftovers == []  # Ctrl-C: the temporary file is removed too
    elif signal_name == "SIGTERM":
        # kill PID: the same cleanup, then the process still ends by SIGTERM, as its sender expects
        assert child.returncode == -signal.SIGTERM and leftovers == [], err
    else:
        assert len(leftovers) <= 1  # a process killed outright cannot clean up; the name stays free


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process ids")
def test_a_write_removes_the_temporary_files_of_dead_writers_only(tmp_path):
    # what a writer killed outright (SIGKILL, a power cut) leaves, and what a live one has open
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
    dead = tmp_path / f".labels.csv.{int(finished.stdout)}-0123456789ab.part"
    live = tmp_path / f".other.csv.{os.getpid()}-ba9876543210.part"
    unrelated = tmp_path / ".notes.part"
    for path in (dead, live, unrelated):
        path.write_text("partial")
    cli.write_labels(str(tmp_path / "labels.csv"), [{"method": "m",
                                                        "result": cclust.ConsensusResult.from_labels([0, 1, 1])}])
    assert not dead.exists()
    assert live.read_text() == "partial" and unrelated.read_text() == "partial"
    assert (tmp_path / "labels.csv").read_text() == "label\n0\n1\n1\n"


@pytest.mark.skipif(not hasattr(os, "setrlimit") and sys.platform == "win32", reason="POSIX resource limits")
def test_a_write_that_fails_midway_keeps_the_previous_file(tmp_path):
    # A real failure in the middle of the write: the file-size limit of the child process is hit
    # after 64 KiB of the ~100 KiB of labels.
    pytest.importorskip("resource")
    partitions = np.repeat(np.array([[0, 1, 0], [1, 0, 1], [2, 2, 0]]), 17_000, axis=0)
    np.save(tmp_path / "partitions.npy", partitions)
    target = tmp_path / "labels.csv"
    target.write_text("label\nprevious run\n")
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))\n"
        "from cclust import cli\n"
        "sys.exit(cli.main(['fuse', 'partitions.npy', '-k', '3', '--out', 'labels.csv']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_child_env(), capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("cclust: error: --out labels.csv: cannot write it") and "Traceback" not in done.stderr
    assert target.read_text() == "label\nprevious run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv", "partitions.npy"]


# -- plots ------------------------------------------------------------------------------------------

def assert_non_blank_png(path):
    image = pytest.importorskip("matplotlib.image").imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0.05  # more than a blank canvas


def test_plot_one_method_and_a_comparison(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    one, many = tmp_path / "one.png", tmp_path / "many.png"
    assert cli.main(["run", "iris", "-m", "kcc", "--partitions", R, "--plot", str(one)]) == 0
    assert cli.main(["run", "iris", "-m", "kcc,cspa,ivc", "--partitions", R, "--plot", str(many)]) == 0
    assert f"figure written to {many}" in capsys.readouterr().out
    assert_non_blank_png(one)
    assert_non_blank_png(many)


def test_plot_without_matplotlib_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    assert_user_error(capsys, ["run", "iris", "-m", "kcc", "--plot", tmp_path / "x.png"],
                      "matplotlib", "pip install 'cclust[plot]'")


# -- methods, version, config -----------------------------------------------------------------------

def test_methods_lists_the_registry(capsys):
    code, out, _ = run_cli(capsys, "methods")
    assert code == 0
    names = {line.split()[0] for line in out.splitlines()[2:] if line and not line.startswith("not installed")}
    assert set(cclust.available()) <= names
    code, out, _ = run_cli(capsys, "methods", "--kind", "generator", "--format", "json")
    rows = json.loads(out)
    assert {r["name"] for r in rows} == set(cclust.available(kind="generator"))
    assert all(r["kind"] == "generator" and r["provider"] and r["description"] for r in rows)


def test_version_and_show_config(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.strip() == f"cclust {cclust.__version__}"
    code, out, _ = run_cli(capsys, "show-config")
    assert code == 0 and "openmp" in out and "extra plot" in out


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("-2", -2), ("0.5", 0.5), ("1e-3", 1e-3), ("true", True), ("False", False),
    ("none", None), ("NULL", None), ("uh", "uh"), ("2,6", (2, 6)), ("k-means++", "k-means++"),
])
def test_parse_value(text, value):
    assert cli.parse_value(text) == value and type(cli.parse_value(text)) is type(value)


# -- bad input --------------------------------------------------------------------------------------

BAD = {
    "unknown-dataset": (["run", "no-such-data"], ["neither a bundled dataset", "iris"]),
    "missing-file": (["run", "{tmp}/missing.csv"], ["no such file"]),
    "binary-as-csv": (["run", "{tmp}/binary.csv", "-k", "2"], ["cannot read it as csv"]),
    "ragged-csv": (["run", "{tmp}/ragged.csv", "-k", "2"], ["line 3", "fields"]),
    "non-numeric-column": (["run", "{tmp}/words.csv", "-k", "2"], ["'colour' (index 1)", "not numeric", "--labels-column"]),
    "empty-cell": (["run", "{tmp}/hole.csv", "-k", "2"],
                   ["line 3", "'b' (index 1)", "is empty", "--missing-features mean"]),
    "wrong-type": (["run", "{tmp}/data.xlsx", "-k", "2"], ["unsupported file type", ".xlsx"]),
    "pickled-npy": (["run", "{tmp}/objects.npy", "-k", "2"], ["unpickle"]),
    "npz-without-X": (["run", "{tmp}/noX.npz", "-k", "2"], ["no array named 'x'"]),
    "k-too-small": (["run", "iris", "-k", "1"], ["-k", "between 2", "got 1"]),
    "k-too-large": (["run", "iris", "-k", "151"], ["-k", "150", "got 151"]),
    "k-not-int": (["run", "iris", "-k", "three"], ["-k", "invalid int"]),
    "k-needed": (["run", "{tmp}/X.npy"], ["-k"]),
    "unknown-method": (["run", "iris", "-m", "kcd"], ["unknown", "'kcd'", "did you mean 'kcc'", "cspa"]),
    "unknown-generator": (["run", "iris", "--generator", "kmean"], ["'kmean'", "kmeans"]),
    "param-syntax": (["run", "iris", "-m", "kcc", "--method-param", "utility"], ["key=value", "'utility'"]),
    "param-unknown": (["run", "iris", "-m", "kcc", "--method-param", "nope=1"], ["no parameter 'nope'", "n_init"]),
    "param-reserved": (["run", "iris", "--method-param", "random_state=3"], ["--seed"]),
    "param-bad-value": (["run", "iris", "-m", "kcc", "--method-param", "n_init=0"], ["n_init"]),
    "labels-column-name": (["run", "{tmp}/words.csv", "-k", "2", "--labels-column", "shape"], ["'shape'", "colour"]),
    "out-folder": (["run", "iris", "-m", "kcc", "-o", "{tmp}/nowhere/l.csv"], ["--out", "does not exist"]),
    "plot-format": (["run", "iris", "-m", "kcc", "--plot", "{tmp}/fig.nope"], ["--plot", "png"]),
    "jobs-zero": (["run", "iris", "--jobs", "0"], ["--jobs", "-1"]),
    "seed-negative": (["run", "iris", "--seed", "-1"], ["--seed", "non-negative"]),
    "unknown-command": (["cluster", "iris"], ["invalid choice", "run"]),
    "fuse-k-range": (["fuse", "{tmp}/ens.csv", "-k", "5"], ["-k", "between 2", "4"]),
    "fuse-all-missing": (["fuse", "{tmp}/ens_hole.csv", "-k", "2"], ["column 1", "no object"]),
    "select-k-range": (["select-k", "iris", "--k-range", "6", "3"], ["--k-range", "got 6 3"]),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_user_errors_are_one_line_with_status_2(case, tmp_path, capsys):
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "ragged.csv").write_text("a,b\n1,2\n3\n")
    (tmp_path / "words.csv").write_text("size,colour\n1.5,red\n2.5,blue\n")
    (tmp_path / "hole.csv").write_text("a,b\n1,2\n3,\n4,5\n")
    (tmp_path / "data.xlsx").write_text("not a spreadsheet")
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.savez(tmp_path / "noX.npz", data=np.zeros((3, 2)))
    np.save(tmp_path / "X.npy", np.zeros((4, 2)))
    (tmp_path / "ens.csv").write_text("0,1\n0,1\n1,0\n1,0\n")
    (tmp_path / "ens_hole.csv").write_text("0,\n0,\n1,\n1,\n")
    argv, words = BAD[case]
    assert_user_error(capsys, [a.replace("{tmp}", str(tmp_path)) for a in argv], *words)


# Each message names the real problem (and not a wrong one, as these inputs used to get).
CLEAR = {
    "header-only-csv": (["run", "{tmp}/header_only.csv", "-k", "2"], ["header row", "no data rows"],
                        ["not numeric", "--labels-column"]),
    "header-only-ensemble": (["fuse", "{tmp}/header_only.csv", "-k", "2"], ["header row", "no data rows"], ["row(s)"]),
    "header-yes-only": (["run", "{tmp}/one_row.csv", "-k", "2", "--header", "yes"], ["header row", "no data rows"], []),
    "nan-cell": (["run", "{tmp}/nan.csv", "-k", "2"], ["line 3", "'a' (index 0)", "NaN", "finite"], ["not numeric"]),
    "inf-cell": (["run", "{tmp}/inf.csv", "-k", "2"], ["line 4", "'b' (index 1)", "infinite", "finite"],
                 ["not numeric"]),
    "nan-npy": (["run", "{tmp}/nan.npy", "-k", "2"], ["X[1, 0]", "is NaN", "--missing-features mean"], ["infinity"]),
    "inf-npy": (["run", "{tmp}/inf.npy", "-k", "2"], ["X[1, 0]", "infinite"], ["NaN"]),
    "empty-cell": (["run", "{tmp}/hole.csv", "-k", "2"], ["line 3", "'b' (index 1)", "is empty"], ["not numeric"]),
    "one-row": (["run", "{tmp}/one_row.csv"], ["1 object", "at least 2"], ["-k must be"]),
    "one-row-labelled": (["run", "{tmp}/one_row_labelled.csv", "--labels-column", "2"], ["1 object", "at least 2"],
                         ["-k must be"]),
    "one-row-ensemble": (["fuse", "{tmp}/one_row.csv", "-k", "2"], ["1 object", "at least 2"], ["-k must be"]),
    "npz-wrong-array": (["fuse", "{tmp}/noX.npz", "-k", "2"], ["no array named 'labels'", "'data'", "fractional",
                                                              "cclust run"], ["labels[:, 0]"]),
    "npy-features-as-ensemble": (["fuse", "{tmp}/X.npy", "-k", "2"], ["fractional", "cclust run"], ["labels[:, 0]"]),
    "directory-run": (["run", "{tmp}/folder", "-k", "2"], ["'", "folder", "is a directory"], ["no extension"]),
    "directory-fuse": (["fuse", "{tmp}/folder", "-k", "2"], ["folder", "is a directory"], ["no extension"]),
    "directory-csv": (["run", "{tmp}/folder.csv", "-k", "2"], ["folder.csv", "is a directory"], []),
    "directory-npy": (["run", "{tmp}/folder.npy", "-k", "2"], ["folder.npy", "is a directory"], []),
    "only-blank-rows": (["fuse", "{tmp}/only_blank.csv", "-k", "2"], ["none of its 3 rows", "every cell is empty"],
                        ["got 1 row", "file is empty"]),
    "only-newlines": (["run", "{tmp}/newlines.csv", "-k", "2"], ["only empty lines"], []),
    "empty-file": (["run", "{tmp}/empty.csv", "-k", "2"], ["the file is empty"], []),
    "space-delimited": (["run", "{tmp}/spaces.csv", "-k", "2"], ["separated by spaces", "tab"], ["--labels-column"]),
}


@pytest.mark.parametrize("case", list(CLEAR), ids=list(CLEAR))
def test_errors_name_the_real_problem(case, tmp_path, capsys):
    (tmp_path / "header_only.csv").write_text("a,b\n")
    (tmp_path / "nan.csv").write_text("a,b\n1,2\nnan,3\n4,5\n")
    (tmp_path / "inf.csv").write_text("a,b\n1,2\n3,4\n5,-inf\n")
    (tmp_path / "hole.csv").write_text("a,b\n1,2\n3,\n4,5\n")
    (tmp_path / "one_row.csv").write_text("1,2\n")
    (tmp_path / "one_row_labelled.csv").write_text("1,2,x\n")
    (tmp_path / "only_blank.csv").write_text(",\n,\n,\n")
    (tmp_path / "newlines.csv").write_text("\n\n\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "spaces.csv").write_text("a b\n1 2\n3 4\n")
    for name in ("folder", "folder.csv", "folder.npy"):
        (tmp_path / name).mkdir()
    X = np.arange(12.0).reshape(6, 2) / 7
    np.save(tmp_path / "X.npy", X)
    np.savez(tmp_path / "noX.npz", data=X)
    for name, value in (("nan", np.nan), ("inf", np.inf)):
        bad = X.copy()
        bad[1, 0] = value
        np.save(tmp_path / f"{name}.npy", bad)
    argv, words, absent = CLEAR[case]
    err = assert_user_error(capsys, [a.replace("{tmp}", str(tmp_path)) for a in argv], *words)
    for word in absent:
        assert word.lower() not in err.lower(), (word, err)


# -- the real command -------------------------------------------------------------------------------

def _module_run(*argv):
    # The child imports the same cclust as this process (source tree or installed copy).
    root = Path(cli.__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "cclust", *argv], check=False, capture_output=True, text=True,
                          env=env, cwd=root, timeout=300)


def test_python_dash_m_cclust_runs_and_reports_errors_in_one_line():
    done = _module_run("run", "iris", "-m", "kcc", "--partitions", R)
    assert done.returncode == 0, done.stderr
    assert "kcc" in done.stdout and "ARI / NMI" in done.stdout
    failed = _module_run("run", "iris", "-k", "0")
    assert failed.returncode == 2
    assert failed.stderr.startswith("cclust: error:") and failed.stderr.count("\n") == 1
    assert "Traceback" not in failed.stderr


def test_exclude_leaves_methods_out(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-x", "addremadd,eac", "--exclude", "voting",
                           "--format", "csv")
    assert code == 0
    methods = {row["method"] for row in csv.DictReader(out.splitlines())}
    assert methods == set(cclust.available(kind="consensus")) - {"addremadd", "eac", "voting"} | \
        ({"hgpa"} if "hgpa" not in cclust.available() else set())
    assert_user_error(capsys, ["run", "iris", "-m", "kcc", "-x", "cspa"], "--exclude cspa", "kcc")


def test_select_k_reports_the_api_recommendation(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    small = ["--resamples", "4", "--partitions", "5", "--seed", "1"]
    fig, labels = tmp_path / "k.png", tmp_path / "k.csv"
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "4", *small, "--format", "json",
                             "--plot", fig, "-o", labels)
    assert code == 0, err
    record = json.loads(out)
    X, _ = load_iris()
    expected = cclust.select_k(X, range(2, 5), n_resamples=4, n_partitions=5, random_state=1)
    assert record["k_values"] == [2, 3, 4] and record["best_k"] == expected.best_k
    np.testing.assert_allclose(record["pac"], expected.pac)
    written = np.array(labels.read_text().splitlines()[1:], dtype=np.int64)
    assert len(np.unique(written)) == expected.best_k
    assert_non_blank_png(fig)
    code, out, _ = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", *small)
    assert code == 0 and "best K =" in out and "PAC" in out


def test_select_k_sparse_route_with_a_pair_tolerance(capsys):
    # --pair-tolerance reaches select_k: the same sampled PAC and its standard error in the JSON
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--resamples", "5", "--seed", "2",
                             "--matrix", "sparse", "--pair-tolerance", "0.02", "--null", "none", "--format", "json")
    assert code == 0, err
    X, _ = load_iris()
    expected = cclust.select_k(X, [2, 3], n_resamples=5, random_state=2, matrix="sparse", pair_tolerance=0.02,
                               null=None)
    record = json.loads(out)
    assert record["n_pairs"] == 625 and record["pac_se"] == expected.pac_se.tolist()
    np.testing.assert_allclose(record["pac"], expected.pac)
    assert_user_error(capsys, ["select-k", "iris", "--k-range", "2", "3", "--pair-tolerance", "0.7"],
                      "pair_tolerance", "(0, 0.5)")


def test_select_k_on_a_sketch(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--resamples", "5", "--null", "none",
                             "--sketch", "60", "--sketches", "2", "--sketch-method", "uniform", "-o", labels)
    assert code == 0, err
    assert "uniform sketch of 60 of the 150 objects" in out and "2 sketches chose K =" in out
    assert len(labels.read_text().splitlines()) == 151          # every object labelled
    assert_user_error(capsys, ["select-k", "iris", "--k-range", "2", "3", "--sketches", "2"],
                      "--sketches 2", "--sketch S")
    assert_user_error(capsys, ["select-k", "iris", "--k-range", "2", "3", "--sketch", "150"], "sketch=150",
                      "not smaller")


def test_select_k_propagates_a_sketch_by_the_vote(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    argv = ["select-k", "iris", "--k-range", "2", "3", "--resamples", "5", "--null", "none", "--sketch", "60",
            "--sketch-method", "uniform"]
    code, out, err = run_cli(capsys, *argv, "--propagation", "knn", "-o", labels)
    assert code == 0, err
    assert "the others labelled by a vote of their nearest sketch objects" in out
    X, _ = load_iris()
    expected = cclust.select_k(X, [2, 3], n_resamples=5, null=None, sketch=60, sketch_method="uniform",
                               propagation="knn", random_state=0)
    written = np.loadtxt(labels, delimiter=",", skiprows=1, usecols=-1, dtype=np.int64)
    np.testing.assert_array_equal(written, expected.labels[expected.best_k])
    assert_user_error(capsys, ["select-k", "iris", "--k-range", "2", "3", "--propagation", "knn"],
                      "--propagation knn", "--sketch S")


def test_select_k_runs_the_kmeans_algorithm_it_is_given(capsys):
    # --kmeans-algorithm/--kmeans-init reach select_k's inner_params: same PAC as the API call.
    code, out, err = run_cli(capsys, "select-k", "iris", "--k-range", "2", "4", "--resamples", "6", "--seed", "3",
                             "--kmeans-algorithm", "hartigan-wong", "--format", "json")
    assert code == 0, err
    X, _ = load_iris()
    expected = cclust.select_k(X, range(2, 5), n_resamples=6, random_state=3,
                               inner_params={"algorithm": "hartigan-wong"})
    lloyd = cclust.select_k(X, range(2, 5), n_resamples=6, random_state=3)
    np.testing.assert_allclose(json.loads(out)["pac"], expected.pac)
    assert not np.allclose(expected.pac, lloyd.pac) or not np.array_equal(expected.labels[3], lloyd.labels[3])
    assert_user_error(capsys, ["select-k", "iris", "--k-range", "2", "3", "--inner", "hierarchical",
                               "--kmeans-algorithm", "hartigan-wong"], "--kmeans-algorithm", "--inner kmeans")


def test_cli_docstring_examples():
    # tests/test_docs.py leaves the cclust.cli package out of its sweep; its examples are checked here.
    import doctest
    import importlib
    import pkgutil

    names = [info.name for info in pkgutil.iter_modules(cli.__path__, "cclust.cli.")
             if info.name != "cclust.cli.__main__"]
    results = {name: doctest.testmod(importlib.import_module(name),
                                     optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE) for name in names}
    assert sum(tried for _, tried in results.values()) > 0
    assert {name: failures for name, (failures, _) in results.items() if failures} == {}


@pytest.mark.parametrize("rows, expected", [
    ([["a", "b"], ["1", "2"], ["3", "4"]], True),            # names over numbers
    ([["1", "2"], ["3", "4"]], False),                       # numbers only
    ([["5.1", "setosa"], ["4.9", "setosa"]], False),         # a numeric column says data
    ([["id", "class"], ["1", "x"], ["2", "x"]], True),       # a word over numbers wins
    ([["run0", "run1"], ["c1", "c3"], ["c2", "c3"]], True),  # labels as words, names occur once
    ([["c1", "c3"], ["c1", "c3"], ["c2", "c1"]], False),     # labels as words, first row recurs
], ids=["names", "numbers", "numeric-data", "mixed-header", "word-header", "word-data"])
def test_header_detection_rule(rows, expected):
    assert _detect_header(rows) is expected


def test_fuse_membership_archive_of_soft_partitions(tmp_path, capsys):
    from cclust.soft import SoftEnsemble

    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 10)
    mats = []
    for _ in range(4):
        U = np.full((30, 3), 0.1) + rng.random((30, 3)) * 0.05
        U[np.arange(30), rng.permutation(3)[y]] = 0.8
        mats.append(U / U.sum(1, keepdims=True))
    path = tmp_path / "memberships.npz"
    np.savez(path, **{f"membership_{i}": U for i, U in enumerate(mats)})
    out_path = tmp_path / "fused.csv"
    code, out, err = run_cli(capsys, "fuse", path, "-k", "3", "-m", "se", "-o", out_path)
    assert code == 0, err
    assert "4 partitions" in out and "membership matrices" in out
    expected = cclust.consensus("se", SoftEnsemble(mats), 3, random_state=0).labels
    got = np.array(out_path.read_text().splitlines()[1:], dtype=np.int64)
    np.testing.assert_array_equal(got, expected)
    code, out, err = run_cli(capsys, "fuse", path, "-k", "3", "-o", out_path)   # the default, kcc, takes them
    assert code == 0, err
    expected = cclust.consensus("kcc", SoftEnsemble(mats), 3, random_state=0).labels
    np.testing.assert_array_equal(np.array(out_path.read_text().splitlines()[1:], dtype=np.int64), expected)
    assert_user_error(capsys, ["fuse", path, "-k", "3", "-m", "ivc"], "soft partitions", "ivc")
    mats[1] = mats[1] * 2
    np.savez(path, **{f"membership_{i}": U for i, U in enumerate(mats)})
    assert_user_error(capsys, ["fuse", path, "-k", "3", "-m", "se"], "memberships[1]", "sums to")


# -- files as R, pandas and spreadsheets write them ---------------------------------------------------

def _lines(path, rows, delimiter=","):
    with open(path, "w", newline="") as handle:
        csv.writer(handle, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return path


def _iris_cells(n=30):
    X, y = load_iris()
    return [[f"{v:.1f}" for v in x] for x in X[::5][:n]], y[::5][:n]


@pytest.mark.parametrize("rows, kind, expected, words", [
    ([["2019", "2020", "2021"], ["5.1", "3.5", "1.4"], ["4.9", "3.0", "1.3"], ["6.2", "2.8", "4.4"]], "data", True,
     ["column names", "--header no"]),
    ([["3", "1", "2"], ["5.1", "3.5", "1.4"], ["4.9", "3.7", "1.3"]], "data", True, ["only fractional"]),
    ([["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]], "data", False, ["data row", "--header yes"]),
    ([["5", "3", "1"], ["4", "5", "6"], ["7", "8", "9"]], "data", False, None),
    ([["1", "2", "3", "4"]] + [[str(c)] * 4 for c in (0, 1, 2, 0, 1, 2)], "ensemble", True, ["'3' is no label"]),
    ([["0", "1", "2"]] + [[str(c)] * 3 for c in (0, 1, 2, 0, 1, 2)], "ensemble", False, ["--header yes"]),
], ids=["years-over-floats", "ints-over-floats", "ints-over-ints", "not-increasing", "numbered-partitions",
        "partition-row"])
def test_a_header_of_numbers(rows, kind, expected, words):
    from cclust.cli._csv import CsvOptions, _header_choice

    header, note = _header_choice("f.csv", rows, CsvOptions(), kind)
    assert header is expected
    if words is None:
        assert note is None
    else:
        for word in words:
            assert word in note, (word, note)
    assert _header_choice("f.csv", rows, CsvOptions(header="no"), kind) == (False, None)


def test_a_header_of_numbers_is_noted_in_json_warnings(tmp_path, capsys):
    values, _ = _iris_cells()
    path = _lines(tmp_path / "years.csv", [["2019", "2020", "2021", "2022"]] + values)
    code, out, err = run_cli(capsys, "run", path, "-k", "3", "-m", "kcc", "--partitions", "5", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["data"].endswith("30 objects, 4 features")
    assert any("--header no" in w for w in record["warnings"])
    assert err.startswith("cclust: note: ") and "--header no" in err


def test_a_labels_column_of_ids_or_measurements_needs_force(tmp_path, capsys):
    values, y = _iris_cells()
    rows = [["sample", "a", "b", "c", "d", "class"]] + [[f"S{i}"] + row + [str(SPECIES[c])]
                                                        for i, (row, c) in enumerate(zip(values, y))]
    path = _lines(tmp_path / "samples.csv", rows)
    assert_user_error(capsys, ["run", path, "--labels-column", "sample"], "30 classes", "--force", "--id-column sample")
    assert_user_error(capsys, ["run", path, "--labels-column", "a", "--id-column", "sample"], "fractional", "--force")
    measured = _lines(tmp_path / "measured.csv", [["a", "b", "c", "d"]] + values)
    code, out, err = run_cli(capsys, "run", measured, "--labels-column", "a", "--force", "-k", "3", "-m", "kcc",
                             "--partitions", "5")
    assert code == 0 and "3 features" in " ".join(out.split()), err
    code, out, err = run_cli(capsys, "run", path, "--labels-column", "class", "--id-column", "sample", "-m", "kcc",
                             "--partitions", "5")
    assert code == 0 and "30 objects, 4 features, 3 classes" in " ".join(out.split()), err


def test_a_header_naming_two_columns_alike_is_refused(tmp_path, capsys):
    path = _lines(tmp_path / "dups.csv", [["x", "x", "y", "class"], ["1.5", "2.5", "3.5", "a"],
                                          ["1.6", "2.4", "3.1", "b"]])
    assert_user_error(capsys, ["run", path, "--labels-column", "x"], "'x' (columns 0, 1)", "rename")


@pytest.mark.parametrize("first", [[""], []], ids=["pandas", "r-write-table"])
def test_a_row_index_is_left_out_and_row_names_become_ids(first, tmp_path, capsys):
    values, _ = _iris_cells()
    index = _lines(tmp_path / "index.csv", [[""] + ["a", "b", "c", "d"]] + [[str(i)] + r for i, r in enumerate(values)])
    code, out, err = run_cli(capsys, "run", index, "-k", "3", "-m", "kcc", "--partitions", "5",
                             "-o", tmp_path / "l.csv")
    assert code == 0 and "30 objects, 4 features" in " ".join(out.split()) and "--index-column no" in err, err
    assert (tmp_path / "l.csv").read_text().splitlines()[0] == "label"
    code, out, err = run_cli(capsys, "run", index, "-k", "3", "-m", "kcc", "--partitions", "5", "--index-column", "no")
    assert code == 0 and "30 objects, 5 features" in " ".join(out.split()), err
    names = _lines(tmp_path / "names.csv", [first + ["a", "b", "c", "d"]] + [[f"r{i}"] + r for i, r in enumerate(values)])
    code, out, err = run_cli(capsys, "run", names, "-k", "3", "-m", "kcc", "--partitions", "5", "-o", tmp_path / "n.json")
    assert code == 0 and "row IDs" in err, err
    written = json.loads((tmp_path / "n.json").read_text())
    assert written["ids"] == [f"r{i}" for i in range(30)] and len(written["kcc"]) == 30


def test_fuse_skips_an_index_and_warns_of_a_partition_of_singletons(tmp_path, capsys):
    _, y = _iris_cells()
    rows = [["", "id", "run0", "run1"]] + [[str(i), str(100 + i), str(c), str((c + 1) % 3)] for i, c in enumerate(y)]
    path = _lines(tmp_path / "parts.csv", rows)
    code, out, err = run_cli(capsys, "fuse", path, "-k", "3", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["data"].endswith("30 objects")
    assert "3 partitions" in record["ensemble"]
    assert any("--index-column no" in w for w in record["warnings"])
    assert any("'id' (column 0)" in w and "cluster of its own" in w for w in record["warnings"])
    code, out, err = run_cli(capsys, "fuse", path, "-k", "3", "--id-column", "id", "-o", tmp_path / "f.csv")
    assert code == 0 and "cluster of its own" not in err, err
    lines = (tmp_path / "f.csv").read_text().splitlines()
    assert lines[0] == "id,label" and lines[1].startswith("100,") and len(lines) == 31


def test_missing_value_tokens(tmp_path, capsys):
    values, _ = _iris_cells()
    values[2][1], values[5][1], values[6][3] = "NA", "null", "?"
    path = _lines(tmp_path / "na.csv", [["a", "b", "c", "d"]] + values)
    assert_user_error(capsys, ["run", path, "-k", "3"], "line 4", "'b'", "'NA'", "missing value",
                      "--missing-features mean")
    code, out, err = run_cli(capsys, "run", path, "-k", "3", "-m", "kcc", "--partitions", "5", "--missing-features",
                             "mean", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["missing_filled"] == {"b": 2, "d": 1}
    assert "3 missing cells filled with their feature's mean (b: 2, d: 1)" in record["data"]
    # --na-values replaces the list: "NA" is then no missing value, "-999" is
    assert_user_error(capsys, ["run", path, "-k", "3", "--na-values", "-999", "--missing-features", "mean"],
                      "'NA'", "not numeric")
    values[2][1], values[5][1], values[6][3] = "-999", "1.0", "2.0"
    path = _lines(tmp_path / "codes.csv", [["a", "b", "c", "d"]] + values)
    code, out, err = run_cli(capsys, "run", path, "-k", "3", "-m", "kcc", "--partitions", "5", "--na-values", "-999",
                             "--missing-features", "mean")
    assert code == 0 and "1 missing cell filled" in " ".join(out.split()), err


def test_missing_value_tokens_in_a_partitions_file(tmp_path, capsys):
    path = _lines(tmp_path / "ens.csv", [["p1", "p2"], ["0", "1"], ["NA", "1"], ["1", "0"], ["1", "NaN"]])
    code, out, err = run_cli(capsys, "fuse", path, "-k", "2")
    assert code == 0 and "2 missing labels" in out, err


def test_samples_in_columns_with_ids_in_every_output(tmp_path, capsys):
    values, _ = _iris_cells()
    ids = [f"S{i}" for i in range(30)]
    rows = [["gene"] + ids] + [[f"g{j}"] + [values[i][j] for i in range(30)] for j in range(4)]
    path = _lines(tmp_path / "genes.csv", rows)
    code, out, err = run_cli(capsys, "run", path, "--transpose", "--id-column", "gene", "-k", "3", "-m", "kcc",
                             "--partitions", "5", "-o", tmp_path / "g.tsv")
    assert code == 0 and "30 objects, 4 features" in " ".join(out.split()), err
    lines = (tmp_path / "g.tsv").read_text().splitlines()
    assert lines[0] == "id\tlabel" and [line.split("\t")[0] for line in lines[1:]] == ids
    # the same objects as the file of samples in rows gives the same labels
    plain = _lines(tmp_path / "plain.csv", [["a", "b", "c", "d"]] + values)
    run_cli(capsys, "run", plain, "-k", "3", "-m", "kcc", "--partitions", "5", "-o", tmp_path / "p.csv")
    assert [line.split("\t")[1] for line in lines[1:]] == (tmp_path / "p.csv").read_text().splitlines()[1:]
    code, out, err = run_cli(capsys, "select-k", path, "--samples-in-columns", "--id-column", "gene", "--k-range", "2",
                             "3", "--resamples", "5", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["ids"] == ids and record["item_consensus"][0]["id"] == "S0"
    # a bad cell is named by its feature (row ID) and its sample (column name)
    rows[3][6] = "high"
    path = _lines(tmp_path / "bad.csv", rows)
    assert_user_error(capsys, ["run", path, "--samples-in-columns", "--id-column", "gene", "-k", "3"],
                      "row 'g2'", "column 'S5'", "'high'")
    assert_user_error(capsys, ["run", path, "--samples-in-columns", "--labels-column", "1"], "--labels-column",
                      "--samples-in-columns")


def test_a_bad_cell_names_the_row_id(tmp_path, capsys):
    values, _ = _iris_cells()
    values[4][2] = "n.d."
    path = _lines(tmp_path / "ids.csv", [["name", "a", "b", "c", "d"]] + [[f"r{i}"] + r for i, r in enumerate(values)])
    assert_user_error(capsys, ["run", path, "--id-column", "name", "-k", "3"], "line 6 (row 'r4')", "column 'c'",
                      "'n.d.'")


@pytest.mark.parametrize("cells, delimiter, options, words", [
    (["0,173", "1,2"], ";", ["--decimal", ","], ["decimal comma", "--decimal ,"]),
    (["-1,355.6", "2,001.5"], ",", ["--thousands", ","], ["thousands separator ','", "--thousands ,"]),
    (["-1.355,6", "2.001,5"], ";", ["--decimal", ",", "--thousands", "."], ["--thousands . --decimal ,"]),
], ids=["decimal-comma", "thousands-comma", "european"])
def test_decimal_commas_and_thousands_separators(cells, delimiter, options, words, tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = [["a", "b", "c"]] + [cells + [f"{v:.2f}".replace(".", "," if "--decimal" in options else ".")]
                                for v in rng.random(8)]
    path = _lines(tmp_path / "n.csv", rows, delimiter=delimiter)
    assert_user_error(capsys, ["run", path, "-k", "2"], *words)
    code, out, err = run_cli(capsys, "run", path, *options, "-k", "2", "-m", "kcc", "--partitions", "5",
                             "--format", "json")
    assert code == 0, err
    assert json.loads(out)["data"].endswith("8 objects, 3 features")


def test_decimal_and_thousands_read_the_values(tmp_path):
    from cclust.cli import load_data

    path = _lines(tmp_path / "e.csv", [["a", "b"], ["-1.355,6", "0,5"], ["2.001,25", "1"]], delimiter=";")
    data = load_data(str(path), decimal=",", thousands=".")
    np.testing.assert_array_equal(data.X, [[-1355.6, 0.5], [2001.25, 1.0]])


def test_trailing_delimiters_are_ignored(tmp_path, capsys):
    values, _ = _iris_cells()
    path = tmp_path / "t.csv"
    path.write_text("a,b,c,d,\n" + "".join(",".join(r) + ",\n" for r in values))
    code, out, err = run_cli(capsys, "run", path, "-k", "3", "-m", "kcc", "--partitions", "5")
    assert code == 0 and "30 objects, 4 features" in " ".join(out.split()) and "ends with a delimiter" in err, err
    ens = tmp_path / "e.csv"
    ens.write_text("r0,r1,\n0,1,\n0,1,\n1,0,\n1,0,\n")
    code, out, err = run_cli(capsys, "fuse", ens, "-k", "2")
    assert code == 0 and "2 partitions" in out and "ends with a delimiter" in err, err


def test_evaluate_keeps_the_ids_and_a_user_error_stays_one_line(tmp_path, capsys):
    values, y = _iris_cells()
    rows = [["", "a", "b", "c", "d", "class"]] + [[f"S{i}"] + row + [str(SPECIES[c])]
                                                  for i, (row, c) in enumerate(zip(values, y))]
    path = _lines(tmp_path / "named.csv", rows)
    code, out, err = run_cli(capsys, "evaluate", path, "--labels-column", "class", "--generator", "kmeans:4,pam:4",
                             "--fuse", "kcc", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["fused"]["ids"] == [f"S{i}" for i in range(30)]
    assert any("row IDs" in w for w in record["warnings"])
    # the reader's note is not given when the command stops at a mistake
    assert_user_error(capsys, ["select-k", path, "--labels-column", "class", "--k-range", "6", "3"], "--k-range")
    code, out, err = run_cli(capsys, "run", path, "--labels-column", "class", "-m", "kcc", "--partitions", "4",
                             "-o", tmp_path / "l.npy")
    assert code == 0 and "an .npy file holds the labels only" in err, err


# -- method names in another case ------------------------------------------------------------------

def test_a_method_name_in_capitals_is_the_registered_name(capsys):
    code, out, err = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "KCC,Cspa,ivc",
                             "--method-param", "KCC:utility=uc", "--exclude", "CSPA", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert [r["method"] for r in rows] == ["kcc", "ivc"]
    assert rows[0]["settings"]["utility"] == "uc"
    code, out, err = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "KCCX")
    assert code == 2 and err.startswith("cclust: error: unknown consensus name 'KCCX'. Did you mean 'kcc'?")


def test_saved_partitions_keep_the_row_ids_and_fuse_reads_them_back(capsys, tmp_path):
    X, _ = load_iris()
    data = tmp_path / "g.csv"
    with open(data, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sample", "a", "b", "c", "d"])
        writer.writerows([f"s{i}", *x] for i, x in enumerate(X[::3].tolist()))
    saved, fused = tmp_path / "ens.csv", tmp_path / "fused.csv"
    code, _, err = run_cli(capsys, "run", str(data), "--id-column", "sample", "-k", "3", "-m", "kcc",
                           "--partitions", "5", "--save-ensemble", str(saved))
    assert code == 0, err
    rows = saved.read_text().splitlines()
    assert rows[0] == ",kmeans,kmeans,kmeans,kmeans,kmeans" and rows[1].startswith("s0,") and len(rows) == 51
    code, _, err = run_cli(capsys, "fuse", str(saved), "-k", "3", "-o", str(fused))
    assert code == 0, err
    lines = fused.read_text().splitlines()
    assert lines[0] == "id,label" and [line.split(",")[0] for line in lines[1:]] == [f"s{i}" for i in range(50)]


def test_run_generates_with_the_kmeans_default_at_scale(capsys, tmp_path):
    from cclust import generators

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (generators.FIT_ROWS_FROM + 1, 3))
    for rows, fit_rows in ((X, generators.FIT_ROWS), (X[:generators.FIT_ROWS_FROM], None)):
        data, saved = tmp_path / f"x{len(rows)}.npy", tmp_path / f"parts{len(rows)}.npz"
        np.save(data, rows)
        code, out, err = run_cli(capsys, "run", data, "-k", "3", "-m", "kcc", "--partitions", "2",
                                 "--save-ensemble", saved)
        assert code == 0, err
        expected = generators.kmeans(rows, 3, n_partitions=2, random_state=0, fit_rows=fit_rows)
        assert cclust.Ensemble(np.load(saved)["labels"]) == expected
    code, out, err = run_cli(capsys, "run", data, "-k", "3", "-m", "kcc", "--partitions", "2",
                             "--generator-param", "fit_rows=500", "--save-ensemble", saved)
    assert code == 0, err
    assert cclust.Ensemble(np.load(saved)["labels"]) == generators.kmeans(X[:generators.FIT_ROWS_FROM], 3,
                                                                         n_partitions=2, random_state=0, fit_rows=500)
