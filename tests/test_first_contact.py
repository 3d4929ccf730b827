"""A new user's first hour, through the ``cclust`` command.

The README's "From the shell" examples and the most careless inputs a user types, run from a
folder outside the checkout. Every command must end with status 0 or 2 (a user error, reported
in one line), never with a traceback, and a successful run writes exactly one label per data row
it read. The README's examples and a few careless inputs run as real processes of the installed
``cclust`` command (its exit status, its standard streams, the installed package); the other
commands run in this process through ``cclust.cli.main``, which is what the script calls, to spare
a Python start-up each. One module fixture runs them all.
"""
import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import cclust
from cclust import cli
from cclust.datasets import load_iris

# The commands of the module fixture run once, on one worker, under pytest-xdist (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("first-contact")

SPECIES = np.array(["setosa", "versicolor", "virginica"])
FAST = ["--partitions", "10"]  # basic partitions: a few are enough to check the plumbing


def _cclust_command():
    """The ``cclust`` script installed next to this Python, else the one on PATH."""
    name = "cclust.exe" if sys.platform == "win32" else "cclust"
    script = Path(sysconfig.get_path("scripts")) / name
    found = str(script) if script.exists() else shutil.which("cclust")
    if found is None:
        pytest.fail("the `cclust` command is not installed; install the package (pip install -e .) first")
    return [found]


def _has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


# What the user types: {name: (argv, what the output holds)}. Files are made by _make_files;
# a successful run names its --out file and how many data rows its input has.
README = {
    # the README's examples, as printed (with fewer basic partitions or resamples where noted)
    "run-iris": (["run", "iris"], None),
    "run-utilities": (["run", "iris", "--utilities", *FAST], None),
    "run-csv-labels-column": (["run", "data.csv", "--labels-column", "class", "--method", "kcc,cspa,ivc", *FAST,
                               "--out", "data_labels.csv"], ("data_labels.csv", 75)),
    "run-npy-wosp-out-plot": (["run", "X.npy", "-k", "4", "--method", "wosp", "--out", "labels.csv",
                               "--plot", "consensus.png", *FAST], ("labels.csv", 75)),
    "run-method-params": (["run", "iris", "--method", "kcc", "--method-param", "utility=uc",
                           "--method-param", "n_init=20", "--out", "iris_labels.npy"], ("iris_labels.npy", 150)),
    "fuse-partitions": (["fuse", "partitions.csv", "-k", "3", "--out", "fused.json"], ("fused.json", 50)),
    "select-k": (["select-k", "data.csv", "--labels-column", "class", "--k-range", "2", "5", "--resamples", "5",
                  *FAST, "--plot", "choose_k.png", "--out", "best.tsv"], ("best.tsv", 75)),
    "methods": (["methods", "--kind", "consensus"], None),
}

# Careless inputs that still succeed: the label count must match the rows, blank rows included.
CARELESS_OK = {
    "fuse-blank-row": (["fuse", "ens_blank.csv", "-k", "2", "-o", "ens_blank_labels.csv"],
                       ("ens_blank_labels.csv", 5)),
    "run-usenc-alone": (["run", "iris", "-m", "usenc", "-o", "usenc_labels.csv"], ("usenc_labels.csv", 150)),
    "run-crlf-trailing-newlines": (["run", "crlf.csv", "-k", "2", "-m", "kcc", *FAST, "-o", "crlf_labels.npy"],
                                   ("crlf_labels.npy", 6)),
    # files as R, pandas and spreadsheets write them (60 objects each)
    "run-header-of-years": (["run", "years.csv", "-k", "3", "-m", "kcc", *FAST, "-o", "years_labels.csv"],
                            ("years_labels.csv", 60)),
    "fuse-header-of-numbers": (["fuse", "parts_numbered.csv", "-k", "3", "-o", "parts_numbered_labels.csv"],
                               ("parts_numbered_labels.csv", 60)),
    "run-pandas-index": (["run", "pandas_index.csv", "-k", "3", "-m", "kcc", *FAST, "-o", "pandas_labels.json"],
                         ("pandas_labels.json", 60)),
    "fuse-pandas-index": (["fuse", "pandas_parts.csv", "-k", "3", "-o", "pandas_parts_labels.csv"],
                          ("pandas_parts_labels.csv", 60)),
    "run-na-tokens-filled": (["run", "na_tokens.csv", "-k", "3", "-m", "kcc", *FAST, "--missing-features", "mean",
                              "-o", "na_labels.csv"], ("na_labels.csv", 60)),
    "run-genes-by-samples": (["run", "genes.csv", "--samples-in-columns", "--id-column", "gene", "-k", "3", "-m",
                              "kcc", *FAST, "-o", "genes_labels.csv"], ("genes_labels.csv", 60)),
    "run-id-column": (["run", "samples.csv", "--id-column", "sample", "--labels-column", "class", "-m", "kcc", *FAST,
                       "-o", "samples_labels.tsv"], ("samples_labels.tsv", 60)),
    "run-decimal-comma": (["run", "decimal_comma.csv", "--decimal", ",", "-k", "3", "-m", "kcc", *FAST,
                           "-o", "decimal_labels.csv"], ("decimal_labels.csv", 60)),
    "run-thousands": (["run", "thousands.csv", "--thousands", ",", "-k", "3", "-m", "kcc", *FAST,
                       "-o", "thousands_labels.csv"], ("thousands_labels.csv", 60)),
    "run-trailing-delimiters": (["run", "trailing.csv", "-k", "3", "-m", "kcc", *FAST, "-o", "trailing_labels.csv"],
                                ("trailing_labels.csv", 60)),
    "run-r-write-table": (["run", "r_table.csv", "-k", "3", "-m", "kcc", *FAST, "-o", "r_table_labels.csv"],
                          ("r_table_labels.csv", 60)),
}

# What those runs say on standard error: one `cclust: note:` per choice the reader made for the user,
# naming the option that undoes it.
NOTES = {
    "run-header-of-years": ["2019, 2020, 2021, 2022", "column names", "--header no"],
    "fuse-header-of-numbers": ["1, 2, 3, 4", "column names", "--header no"],
    "run-pandas-index": ["empty header cell", "0, ..., 59", "--index-column no"],
    "fuse-pandas-index": ["empty header cell", "0, ..., 59", "--index-column no"],
    "run-trailing-delimiters": ["ends with a delimiter", "ignored"],
    "run-r-write-table": ["one cell fewer", "row IDs"],
}

# Careless inputs that are user errors: status 2 and one line naming the problem. (Ragged rows, a
# missing file and the other mistakes run in-process in test_cli.py; each process here costs a
# Python start-up.)
CARELESS_ERRORS = {
    "blank-feature-row": (["run", "feat_blank.csv", "-k", "2"], ["line 4", "no feature value"]),
    "header-only": (["run", "header_only.csv", "-k", "2"], ["header row", "no data rows"]),
    "nan-cell": (["run", "nan.csv", "-k", "2"], ["line 3", "NaN", "finite"]),
    "one-row": (["run", "one_row.csv"], ["1 object", "at least 2"]),
    "npz-wrong-array": (["fuse", "noX.npz", "-k", "2"], ["'data'", "fractional"]),
    "directory": (["run", "a_folder", "-k", "2"], ["is a directory"]),
    "unknown-out-extension": (["run", "iris", "-m", "kcc", "--out", "labels.txt"], ["--out", ".json", ".npy"]),
    "empty-file": (["run", "empty.csv", "-k", "2"], ["empty"]),
    "binary-file": (["run", "binary.csv", "-k", "2"], ["binary"]),
    "space-delimited": (["run", "spaces.csv", "-k", "2"], ["separated by spaces"]),
    "labels-column-of-ids": (["run", "samples.csv", "--labels-column", "sample"],
                             ["--labels-column sample", "different value", "60 classes", "--force"]),
    "labels-column-of-floats": (["run", "samples.csv", "--labels-column", "b"],
                                ["--labels-column b", "fractional", "--force"]),
    "repeated-column-names": (["run", "repeated_names.csv", "--labels-column", "x"], ["'x' (columns 0, 1)",
                                                                                     "'y' (columns 2, 3)", "rename"]),
    "na-token-not-filled": (["run", "na_tokens.csv", "-k", "3"], ["line 5", "'b'", "'NA'", "missing value",
                                                                 "--missing-features mean"]),
    "decimal-comma": (["run", "decimal_comma.csv", "-k", "3"], ["'5,1'", "decimal comma", "--decimal ,"]),
    "thousands-separator": (["run", "thousands.csv", "-k", "3"], ["'2,100.0'", "thousands separator",
                                                                 "--thousands ,"]),
    "fuse-a-feature-file": (["fuse", "trailing.csv", "-k", "3"], ["fractional", "cclust run"]),
    "usenc-with-partitions": (["run", "iris", "-m", "usenc", *FAST], ["usenc makes its own partitions",
                                                                        "--method-param n_partitions"]),
    "constant-data": (["run", "constant.csv", "-k", "3", "-m", "kcc", *FAST], ["only 1 distinct row"]),
    "constant-data-select-k": (["select-k", "constant.csv", "--k-range", "2", "3", "--resamples", "2"],
                               ["only 1 distinct row"]),
}

# An output on an input's file, or two outputs on one file: refused before any work (status 2, one
# line), the inputs left byte for byte as they were. Links are made by _make_files.
CLASHES = {
    "out-is-data": (["run", "victim.csv", "-m", "kcc", "--labels-column", "species", *FAST, "-o", "victim.csv"],
                    ["--out victim.csv", "input DATA"]),
    "out-is-data-by-another-name": (["run", "victim.csv", "--labels-column", "species", "-m", "kcc", *FAST, "-o", "./sub/../victim.csv"],
                                    ["input DATA"]),
    "out-is-a-symlink-to-data": (["run", "victim.csv", "--labels-column", "species", "-m", "kcc", *FAST, "-o", "victim_link.csv"],
                                 ["same file as victim.csv", "input DATA"]),
    "out-is-a-hard-link-to-data": (["run", "victim.csv", "--labels-column", "species", "-m", "kcc", *FAST, "-o", "victim_hard.csv"],
                                   ["same file as victim.csv", "input DATA"]),
    "save-ensemble-is-data": (["run", "victim.csv", "--labels-column", "species", "-m", "kcc", *FAST, "--save-ensemble", "victim.csv"],
                              ["--save-ensemble", "input DATA"]),
    "fuse-out-is-ensemble": (["fuse", "pvictim.csv", "-k", "3", "-o", "pvictim.csv"], ["input ENSEMBLE"]),
    "save-ensemble-and-out-one-file": (["run", "iris", "-m", "kcc", *FAST, "--save-ensemble", "both.csv",
                                        "-o", "both.csv"], ["--save-ensemble both.csv", "--out both.csv",
                                                            "same file"]),
    "evaluate-save-ensemble-is-ensemble": (["evaluate", "victim.csv", "--labels-column", "species", "--ensemble", "pvictim150.csv",
                                            "--save-ensemble", "pvictim150.csv"], ["input --ensemble"]),
    "select-k-figure-is-weights": (["select-k", "victim.csv", "--labels-column", "species", "--k-range", "2", "3", "--item-weights",
                                    "fig-heatmap.png", "--plot", "fig.png"], ["--plot fig-heatmap.png",
                                                                              "--item-weights"]),
}


def _clash_files():
    """{name: bytes} of the inputs the CLASHES commands must leave untouched."""
    X, y = load_iris()
    victim = "a,b,c,d,species\n" + "".join(f"{','.join(map(str, x))},{SPECIES[c]}\n" for x, c in zip(X, y))
    partitions = cclust.generate("kmeans", X, 3, n_partitions=4, random_state=0).labels
    ensemble = "".join(",".join(map(str, row)) + "\n" for row in partitions)
    return {"victim.csv": victim.encode(), "pvictim.csv": ensemble[:ensemble.index("\n", 200) + 1].encode(),
            "pvictim150.csv": ensemble.encode(), "fig-heatmap.png": ("1\n" * 150).encode()}


def _make_files(folder):
    for name, content in _clash_files().items():
        (folder / name).write_bytes(content)
    (folder / "sub").mkdir()
    os.symlink("victim.csv", folder / "victim_link.csv")
    os.link(folder / "victim.csv", folder / "victim_hard.csv")
    X, y = load_iris()
    with open(folder / "data.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sepal length", "sepal width", "petal length", "petal width", "class"])
        writer.writerows([*map(float, x), SPECIES[c]] for x, c in zip(X[::2], y[::2]))
    np.save(folder / "X.npy", X[1::2])
    partitions = cclust.generate("kmeans", X[::3], 3, n_partitions=6, random_state=0).labels
    np.savetxt(folder / "partitions.csv", partitions, fmt="%d", delimiter=",",
               header=",".join(f"run{j}" for j in range(6)), comments="")
    (folder / "ens_blank.csv").write_text("a,b\n0,1\n0,1\n,\n1,0\n1,0\n")
    (folder / "crlf.csv").write_bytes(b"x,y\r\n1.0,2.0\r\n1.1,2.2\r\n0.9,2.1\r\n"
                                      b"5.0,6.0\r\n5.2,6.1\r\n4.9,6.3\r\n\r\n\r\n")
    (folder / "feat_blank.csv").write_text("f1,f2\n1.0,2.0\n1.1,2.1\n,\n5.0,6.0\n5.1,6.1\n")
    (folder / "header_only.csv").write_text("a,b\n")
    (folder / "nan.csv").write_text("a,b\n1,2\nnan,3\n4,5\n")
    (folder / "one_row.csv").write_text("1,2\n")
    np.savez(folder / "noX.npz", data=np.random.default_rng(0).random((5, 3)))
    (folder / "a_folder").mkdir()
    (folder / "empty.csv").write_text("")
    (folder / "binary.csv").write_bytes(bytes(range(256)) * 8)
    (folder / "spaces.csv").write_text("a b c\n1 2 3\n4 5 6\n")
    (folder / "constant.csv").write_text("a,b\n" + "1.5,2\n" * 30)
    _make_careless_tables(folder, X[::2][:60], y[::2][:60])


def _write_rows(path, rows, delimiter=","):
    with open(path, "w", newline="") as handle:
        csv.writer(handle, delimiter=delimiter, lineterminator="\n").writerows(rows)


def _make_careless_tables(folder, X, y):
    """60 objects of iris as R, pandas and spreadsheets write them."""
    n = X.shape[0]
    values = [[f"{v:.1f}" for v in x] for x in X]
    _write_rows(folder / "years.csv", [["2019", "2020", "2021", "2022"]] + values)
    partitions = np.column_stack([y, y, (y + 1) % 3, y]).astype(str).tolist()
    _write_rows(folder / "parts_numbered.csv", [["1", "2", "3", "4"]] + partitions)
    _write_rows(folder / "pandas_index.csv", [["", "a", "b", "c", "d"]] + [[str(i)] + row for i, row in
                                                                          enumerate(values)])
    _write_rows(folder / "pandas_parts.csv", [["", "run0", "run1", "run2", "run3"]] + [[str(i)] + row for i, row in
                                                                                      enumerate(partitions)])
    holes = [list(row) for row in values]
    holes[3][1], holes[7][2], holes[9][1] = "NA", "?", "N/A"
    _write_rows(folder / "na_tokens.csv", [["a", "b", "c", "d"]] + holes)
    ids = [f"S{i}" for i in range(n)]
    _write_rows(folder / "genes.csv", [["gene"] + ids] + [[f"gene{j}"] + [values[i][j] for i in range(n)]
                                                           for j in range(4)])
    _write_rows(folder / "samples.csv", [["sample", "a", "b", "c", "d", "class"]] +
                [[ids[i]] + values[i] + [str(SPECIES[y[i]])] for i in range(n)])
    _write_rows(folder / "repeated_names.csv", [["x", "x", "y", "y", "class"]] +
                [values[i] + [str(SPECIES[y[i]])] for i in range(n)])
    _write_rows(folder / "decimal_comma.csv", [["a", "b", "c", "d"]] +
                [[v.replace(".", ",") for v in row] for row in values], delimiter=";")
    _write_rows(folder / "thousands.csv", [["a", "b", "c", "d"]] + [[f"{1000 * v - 3000:,.1f}" for v in x] for x in X])
    (folder / "trailing.csv").write_text("a,b,c,d,\n" + "".join(",".join(row) + ",\n" for row in values))
    # R's write.table(df, sep=","): a header without a cell for the row names
    _write_rows(folder / "r_table.csv", [["a", "b", "c", "d"]] + [[f"r{i}"] + row for i, row in enumerate(values)])


def _count_labels(path):
    if path.suffix == ".npy":
        return np.load(path).shape[0]
    if path.suffix == ".json":
        lengths = {len(labels) for labels in json.loads(path.read_text()).values()}
        assert len(lengths) == 1
        return lengths.pop()
    lines = path.read_text().splitlines()
    assert lines[-1] != ""
    return len(lines) - 1  # the header row


# Commands run as real processes of the installed script; the others run through cli.main. Each
# kind of outcome keeps at least one process: a success writing labels, a note on standard error,
# a user error, an output refused because it is an input.
AS_PROCESS = {*README, "fuse-blank-row", "run-header-of-years", "binary-file", "nan-cell",
              "out-is-a-symlink-to-data"}


def _in_process(argv, folder):
    """(status, stdout, stderr) of ``cclust argv`` run through ``cli.main`` in ``folder``."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.chdir(folder)
        patch.setenv("COLUMNS", "100")
        try:
            status = cli.main(list(argv))
        except SystemExit as stop:  # what the script would exit with
            status = stop.code
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Every command of this file, run once: {name: (status, stdout, stderr, folder)}."""
    folder = tmp_path_factory.mktemp("first_contact")
    _make_files(folder)
    commands = {name: argv for table in (README, CARELESS_OK, CARELESS_ERRORS, CLASHES)
                for name, (argv, _) in table.items()}
    if not _has_matplotlib():
        for argv in commands.values():
            while "--plot" in argv:
                i = argv.index("--plot")
                del argv[i:i + 2]
    inputs = {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    # COLUMNS: the CLI lays text out to the terminal width, which differs between a terminal, a
    # pipe and a pytest-xdist worker; the assertions below read lines as laid out in 100 columns
    env.update(OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", COLUMNS="100")
    command = _cclust_command()
    running = {name: subprocess.Popen(command + argv, cwd=folder, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
               for name, argv in commands.items() if name in AS_PROCESS}
    # the in-process commands run while the processes do (the machine's other cores)
    results = {name: (*_in_process(argv, folder), folder) for name, argv in commands.items()
               if name not in AS_PROCESS}
    for name, child in running.items():
        out, err = child.communicate(timeout=600)
        results[name] = (child.returncode, out, err, folder)
    changed = [name for name, content in inputs.items() if (folder / name).read_bytes() != content]
    results["inputs changed"] = changed
    return results


def test_no_input_file_is_changed(ran):
    assert ran["inputs changed"] == []


@pytest.mark.parametrize("name", list(NOTES))
def test_the_reader_says_what_it_decided_and_how_to_undo_it(name, ran):
    _, _, err, _ = ran[name]
    notes = [line for line in err.splitlines() if line.startswith("cclust: note: ")]
    assert len(notes) >= 1, err
    for word in NOTES[name]:
        assert any(word.lower() in line.lower() for line in notes), (word, err)


@pytest.mark.parametrize("name", list(README) + list(CARELESS_OK))
def test_the_command_succeeds_and_writes_one_label_per_data_row(name, ran):
    status, out, err, folder = ran[name]
    assert status == 0, err
    assert "Traceback" not in out + err
    expected = {**README, **CARELESS_OK}[name][1]
    if expected is not None:
        path, n_rows = expected
        assert _count_labels(folder / path) == n_rows
    assert not list(folder.glob(".*.part"))  # no temporary file left behind


@pytest.mark.parametrize("name", list(CARELESS_ERRORS))
def test_a_careless_input_is_one_line_with_status_2(name, ran):
    status, out, err, _ = ran[name]
    assert status == 2, (out, err)
    assert "Traceback" not in out + err
    assert err.startswith("cclust: error: ") and err.count("\n") == 1, err
    for word in CARELESS_ERRORS[name][1]:
        assert word.lower() in err.lower(), (word, err)


def test_what_the_readme_examples_show(ran):
    assert "ensemble  : none generated: usenc makes its own partitions of DATA" in ran["run-usenc-alone"][1]
    status, out, _, folder = ran["run-iris"]
    rows = {line.split()[0] for line in out.splitlines()[4:] if line.strip()}
    assert set(cclust.available(kind="consensus")) <= rows  # the default compares every method
    assert "150 objects, 4 features, 3 classes" in out
    # symdiff-median refuses n = 150 by design: skipped with its limit, not a failure
    assert "failed" not in out
    assert "1 method skipped: refused by design at this input size" in " ".join(out.split())
    # the README quotes KCC's settings as this output shows them
    kcc_row = next(line for line in out.splitlines() if line.startswith("kcc "))
    settings = kcc_row.split("  ")[-1].strip()
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    assert settings.startswith("utility=uh, init=") and f"`kcc ({settings})`" in readme
    assert ran["methods"][1].count("\n") >= len(cclust.available(kind="consensus"))
    assert "Uc" in ran["run-utilities"][1] and "NUL8" in ran["run-utilities"][1]
    assert "75 objects" in ran["run-csv-labels-column"][1]
    if _has_matplotlib():
        for figure in ("consensus.png", "choose_k.png"):
            assert (folder / figure).stat().st_size > 1000
    # the blank row of a partitions file is an object missing from every partition, in place
    assert "1 object in no partition (data row 3)" in ran["fuse-blank-row"][1]
    labels = np.loadtxt(folder / "ens_blank_labels.csv", skiprows=1, dtype=int)
    assert labels[0] == labels[1] != labels[3] == labels[4]


@pytest.mark.parametrize("name", list(CLASHES))
def test_an_output_on_an_input_or_on_another_output_is_refused(name, ran):
    if name == "select-k-figure-is-weights" and not _has_matplotlib():
        pytest.skip("the fixture drops --plot without matplotlib")
    status, out, err, folder = ran[name]
    assert status == 2, (out, err)
    assert "Traceback" not in out + err
    assert err.startswith("cclust: error: ") and err.count("\n") == 1, err
    for word in CLASHES[name][1]:
        assert word.lower() in err.lower(), (word, err)
    for file, content in _clash_files().items():
        assert (folder / file).read_bytes() == content, file
    assert not (folder / "both.csv").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_during_a_run_is_one_line_with_status_143(tmp_path):
    # `kill PID` or a batch scheduler's time limit, while every method runs on iris
    import signal

    env = dict({key: value for key, value in os.environ.items() if key != "PYTHONPATH"}, OMP_NUM_THREADS="1")
    child = subprocess.Popen(_cclust_command() + ["run", "iris", "-o", "labels.csv"], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child.stdout.readline()  # the summary line: the work has begun
    child.send_signal(signal.SIGTERM)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 143, err
    assert err == "cclust: terminated\n", err
    assert list(tmp_path.iterdir()) == []  # neither the labels nor a temporary file


@pytest.mark.parametrize("argv", [
    ["run", "iris", "-m", "kcc", "--generator", "gmm", *FAST],
    ["run", "iris", "-m", "kcc", "--generator", "hierarchical", *FAST],
    ["run", "iris", "-m", "kcc", "--generator", "kmeans:5,dbscan:5"],
    ["evaluate", "iris", "--generator", "kmeans", *FAST],
], ids=["gmm", "hierarchical", "heterogeneous-dbscan", "evaluate"])
def test_without_scikit_learn_is_one_line_with_the_install_command(argv, tmp_path):
    # a folder on PYTHONPATH whose `sklearn` cannot be imported, as if scikit-learn were not installed
    (tmp_path / "hidden" / "sklearn").mkdir(parents=True)
    (tmp_path / "hidden" / "sklearn" / "__init__.py").write_text("raise ImportError('scikit-learn is hidden')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "hidden"), OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(_cclust_command() + argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.startswith("cclust: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "scikit-learn" in done.stderr and "pip install 'cclust[sklearn]'" in done.stderr


def test_a_generator_over_the_memory_budget_is_one_line(tmp_path, monkeypatch, capsys):
    # the README's heterogeneous example on data too large for hierarchical clustering's distances
    # (the budget is read when a generator runs, so cli.main in this process sees it)
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "50000")
    monkeypatch.chdir(tmp_path)
    status = cli.main(["run", "iris", "-m", "kcc", "--generator", "kmeans:5,hierarchical:5,gmm:5"])
    out, err = capsys.readouterr()
    assert status == 2, err
    assert "Traceback" not in out + err
    assert err.startswith("cclust: error: hierarchical clustering's condensed distance matrix of 150 objects")
    assert err.count("\n") == 1
