"""What the ``cclust`` command prints: notes that are never cut, the label-free agreement score,
warnings about feature scales and the K range, iteration counts that mean something, counts in
the right number. Run in-process through ``main([...])``."""
import csv
import json
import re

import numpy as np
import pytest

import cclust
from cclust import ConsensusResult, cli
from cclust.cli._report import plot_rows, wrap_cell
from cclust.datasets import load_iris
from cclust.testing import check_consensus_result

R = "12"  # basic partitions per run


@pytest.fixture(autouse=True)
def _fixed_width(monkeypatch):
    # The table wraps its notes to the terminal's width; tests see a 100-column terminal.
    monkeypatch.setenv("COLUMNS", "100")


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def option_help(help_text, option):
    """The help of one option in ``--help`` output (its line and its continuation lines)."""
    start = help_text.index(f"\n  {option}")
    end = re.compile(r"\n  -").search(help_text, start + 1)
    return flat(help_text[start:end.start() if end else None])


def flat(text):
    """The text with every run of white space made one space (a wrapped note read back whole)."""
    return " ".join(text.split())


@pytest.fixture
def partitions_csv(tmp_path):
    X, _ = load_iris()
    ensemble = cclust.generate("kmeans", X, 3, n_partitions=8, random_state=0)
    path = tmp_path / "partitions.csv"
    np.savetxt(path, ensemble.labels, fmt="%d", delimiter=",")
    return path, ensemble


@pytest.fixture
def unlabelled_npy(tmp_path):
    X, _ = load_iris()
    path = tmp_path / "X.npy"
    np.save(path, X)
    return path


# -- notes are wrapped, never cut ------------------------------------------------------------------

def test_a_memory_budget_error_keeps_its_byte_count_and_alternative(capsys, monkeypatch):
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "100000")
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "cspa,kcc")
    assert code == 0
    text = flat(out)
    # the full message of the refusal: what it needs, the budget, and both ways out
    # the float32 co-association and its METIS graph on the pairs a fixed sample finds together
    assert "needs about 837.9 KiB (858000 bytes)" in text
    assert "pass max_bytes=858000 (or set CCLUST_MEMORY_BUDGET) to allow it" in text
    assert "neighbors='lsh'" in text and "or use hbgf, mcla or kcc." in text
    assert "..." not in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("method"))
    column = header.index("note")
    start = next(i for i, line in enumerate(lines) if line.startswith("cspa"))
    assert lines[start][column:].startswith("skipped: ")
    # the continuation lines sit under the note column and stay within the 100 columns
    continued = lines[start + 1:lines.index(next(line for line in lines if line.startswith("kcc")))]
    assert len(continued) >= 2
    assert all(line[:column].strip() == "" and line[column] != " " for line in continued)
    assert all(len(line) <= 100 for line in lines[start:start + len(continued) + 1])
    # a memory-budget refusal is by design: skipped with its reason, not a failure
    assert "1 method skipped: refused by design at this input size" in text
    assert "failed" not in out


# -- a method refusing the input's size by design is skipped, not failed --------------------------

def test_a_size_refusal_is_skipped_in_the_table_csv_and_json(capsys):
    # symdiff-median (an exact integer program) refuses n = 150 > max_objects = 40
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,symdiff-median")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("symdiff-median"))
    assert "skipped: ensemble has n_samples = 150 objects, more than max_objects = 40" in flat(out)
    assert "ValidationError" not in out and "failed" not in out
    assert row.split()[1:5] == ["-"] * 4
    assert "1 method skipped: refused by design at this input size (the note says the limit and how to allow it)." \
        in flat(out)
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,symdiff-median", "--format", "csv")
    rows = {r["method"]: r for r in csv.DictReader(out.splitlines())}
    assert (rows["symdiff-median"]["status"], rows["symdiff-median"]["skipped_because"]) == ("skipped", "input size")
    assert (rows["kcc"]["status"], rows["kcc"]["skipped_because"]) == ("ok", "")
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,symdiff-median", "--format", "json")
    rows = {r["method"]: r for r in json.loads(out)["rows"]}
    assert rows["symdiff-median"]["status"] == "skipped"
    assert rows["symdiff-median"]["skipped_because"] == "input size"
    assert rows["symdiff-median"]["note"].startswith("skipped: ensemble has n_samples = 150")


def test_a_size_refusal_is_an_input_size_error_and_still_a_validation_error():
    from cclust.errors import InputSizeError, MemoryBudgetError, SizeLimitError, ValidationError

    E = cclust.generate("kmeans", load_iris()[0], 3, n_partitions=4, random_state=0)
    with pytest.raises(SizeLimitError, match="max_objects = 40") as info:
        cclust.get("symdiff-median")(E, 3)
    assert isinstance(info.value, ValidationError) and isinstance(info.value, InputSizeError)
    assert issubclass(MemoryBudgetError, InputSizeError) and issubclass(MemoryBudgetError, MemoryError)


def test_the_direction_of_a_criterion_survives_a_narrow_terminal(partitions_csv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    path, _ = partitions_csv
    code, out, _ = run_cli(capsys, "fuse", path, "-k", "3", "-m", "kcc,cspa,addremadd")
    assert code == 0
    text = flat(out)
    assert "weighted edge cut of the METIS partition (lower is better)" in text
    assert "Gamma (consensus utility, higher is better)" in text
    # addremadd's criterion is the longest; each of the three ends saying which way is better
    assert text.count("is better)") == 3 and "..." not in out


def test_wrap_cell_keeps_every_word():
    words = "MemoryBudgetError: pass max_bytes=990000 (or set CCLUST_MEMORY_BUDGET) or use kcc".split()
    wrapped = wrap_cell(" ".join(words), 12, 4)
    assert wrapped.split() == words
    assert all(line.startswith("    ") for line in wrapped.splitlines()[1:])


# -- the agreement score (ANMI) --------------------------------------------------------------------

def test_every_run_row_carries_the_agreement_in_table_csv_and_json(unlabelled_npy, capsys):
    X, _ = load_iris()
    ensemble = cclust.generate("kmeans", X, 3, n_partitions=int(R), random_state=0)
    score = cclust.get("consensus-score")
    code, out, _ = run_cli(capsys, "run", unlabelled_npy, "-k", "3", "--partitions", R, "-m", "kcc,hbgf",
                           "--format", "json")
    assert code == 0
    rows = {row["method"]: row for row in json.loads(out)["rows"]}
    for method in ("kcc", "hbgf"):
        labels = cclust.consensus(method, ensemble, 3, random_state=0).labels
        assert rows[method]["agreement"] == pytest.approx(score(labels, ensemble), abs=1e-12)
    code, out, _ = run_cli(capsys, "run", unlabelled_npy, "-k", "3", "--partitions", R, "-m", "kcc,hbgf",
                           "--format", "csv")
    table = list(csv.DictReader(out.splitlines()))
    assert [float(r["agreement"]) for r in table] == pytest.approx([rows["hbgf"]["agreement"],
                                                                    rows["kcc"]["agreement"]][::-1])
    code, out, _ = run_cli(capsys, "run", unlabelled_npy, "-k", "3", "--partitions", R, "-m", "kcc,hbgf")
    lines = out.splitlines()
    assert lines[2].split()[:5] == ["method", "K", "agreement", "objective", "seconds"]
    kcc_line = next(line for line in lines if line.startswith("kcc")).split()
    assert float(kcc_line[2]) == pytest.approx(rows["kcc"]["agreement"], abs=5e-5)


def test_fuse_rows_carry_the_agreement_and_sort_by_it(partitions_csv, capsys):
    path, ensemble = partitions_csv
    code, out, _ = run_cli(capsys, "fuse", path, "-k", "3", "-m", "hbgf,kcc,mcla", "--sort", "agreement",
                           "--format", "json")
    assert code == 0
    record = json.loads(out)
    assert record["sorted_by"] == "agreement"
    scores = [row["agreement"] for row in record["rows"]]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    for row in record["rows"]:
        labels = cclust.consensus(row["method"], ensemble, 3, random_state=0).labels
        assert row["agreement"] == pytest.approx(cclust.get("consensus-score")(labels, ensemble), abs=1e-12)


def test_sort_by_agreement_also_with_true_labels(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "hbgf,kcc,mcla", "--sort", "agreement",
                           "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(out.splitlines()))
    assert {"ari", "nmi", "agreement"} <= set(rows[0])
    scores = [float(r["agreement"]) for r in rows]
    assert scores == sorted(scores, reverse=True)


def test_sort_by_ari_without_labels_says_it_falls_back(unlabelled_npy, capsys):
    code, out, err = run_cli(capsys, "run", unlabelled_npy, "-k", "3", "--partitions", R, "-m", "hbgf,kcc,mcla",
                             "--sort", "ari", "--format", "csv")
    assert code == 0
    assert err.startswith("cclust: note: --sort ari needs true labels") and "sorting by agreement" in err
    scores = [float(r["agreement"]) for r in csv.DictReader(out.splitlines())]
    assert scores == sorted(scores, reverse=True)


def test_fuse_offers_no_label_based_sort(partitions_csv, capsys):
    code, out, _ = run_cli(capsys, "fuse", "--help")
    assert code == 0
    sort_help = option_help(out, "--sort")
    assert "{name,agreement,seconds}" in sort_help
    assert not re.search(r"\b(ari|nmi)\b", sort_help)
    path, _ = partitions_csv
    code, _, err = run_cli(capsys, "fuse", path, "-k", "3", "-m", "kcc,hbgf", "--sort", "ari")
    assert code == 2 and "invalid choice: 'ari'" in err


def test_fuse_plot_of_several_methods_draws_the_agreement(partitions_csv, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path, ensemble = partitions_csv
    figure = tmp_path / "methods.png"
    code, out, _ = run_cli(capsys, "fuse", path, "-k", "3", "-m", "kcc,hbgf", "--plot", figure)
    assert code == 0 and figure.stat().st_size > 0
    assert f"figure written to {figure} (bar chart of each method's agreement with the partitions (ANMI))" in out
    rows = [{"method": m, "result": cclust.consensus(m, ensemble, 3, random_state=0), "n_clusters": 3,
             "seconds": 0.1, "agreement": a} for m, a in (("kcc", 0.7), ("hbgf", 0.6))]
    fig, what = plot_rows(str(tmp_path / "again.png"), rows, ensemble, None)
    assert "agreement" in fig.axes[0].get_xlabel() and "agreement" in what
    code, out, _ = run_cli(capsys, "fuse", "--help")
    assert "agreement" in option_help(out, "--plot")


# -- feature scales and the K range ------------------------------------------------------------------

@pytest.fixture
def scaled_npy(tmp_path):
    """Two blobs told apart by feature 0 (spread ~1) while feature 1 is noise of spread ~1e4."""
    rng = np.random.default_rng(0)
    X = np.column_stack([np.r_[rng.normal(0, 0.3, 40), rng.normal(3, 0.3, 40)], rng.normal(0, 1e4, 80)])
    path = tmp_path / "scaled.npy"
    np.save(path, X)
    return path


def test_run_warns_when_feature_scales_differ(scaled_npy, capsys):
    code, out, err = run_cli(capsys, "run", scaled_npy, "-k", "2", "--partitions", R, "-m", "kcc", "--format",
                             "json")
    assert code == 0
    assert err.startswith("cclust: warning: the features differ in scale by a factor of")
    assert "--standardize" in err and err.count("\n") == 1
    assert json.loads(out)["warnings"] == [err[len("cclust: warning: "):].strip()]
    code, out, err = run_cli(capsys, "run", scaled_npy, "-k", "2", "--partitions", R, "-m", "kcc",
                             "--standardize", "--format", "json")
    assert code == 0 and err == "" and json.loads(out)["warnings"] == []
    code, _, err = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc")
    assert code == 0 and "warning" not in err  # iris: scales within 4x


def test_select_k_warns_about_scales_and_a_k_at_the_top_of_the_range(scaled_npy, capsys):
    code, out, err = run_cli(capsys, "select-k", scaled_npy, "--k-range", "2", "3", "--resamples", "4",
                             "--partitions", "6", "--criterion", "objective", "-m", "kcc", "--format", "json")
    assert code == 0
    record = json.loads(out)
    lines = err.splitlines()
    assert lines[0].startswith("cclust: warning: the features differ in scale")
    if record["best_k"] == 3:
        assert lines[1].startswith("cclust: warning: --k-range 2 3: K=3 is the largest K tried")
        assert "widen the range" in lines[1] and len(record["warnings"]) == 2
    else:
        assert len(lines) == 1 and len(record["warnings"]) == 1


def _blobs(tmp_path, centres):
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.05, (20, 2)) for c in centres])
    path = tmp_path / "blobs.npy"
    np.save(path, X)
    return path


def test_select_k_warns_when_it_picks_either_end_of_the_range(tmp_path, capsys):
    # Four tight blobs: HBGF's edge cut (lower is better) is 0 at K = 4 and only there, with the
    # paper's equal parts (sizes="auto" may weigh objects so that a cut of 0 is also found at K = 3).
    four = _blobs(tmp_path, [(0, 0), (0, 5), (5, 0), (5, 5)])
    common = ["--resamples", "3", "--partitions", "8", "-m", "hbgf", "--criterion", "objective",
              "--method-param", "sizes=equal"]
    code, out, err = run_cli(capsys, "select-k", four, "--k-range", "2", "4", *common)
    assert code == 0 and "best K = 4" in out
    assert err == ("cclust: warning: --k-range 2 4: K=4 is the largest K tried, so a larger K may be better "
                   "still; widen the range (e.g. up to 6) to check.\n")
    assert "warning" not in out  # said once, on standard error
    code, out, err = run_cli(capsys, "select-k", four, "--k-range", "4", "6", *common, "--format", "json")
    record = json.loads(out)
    assert code == 0 and record["best_k"] == 4
    assert "K=4 is the smallest K tried" in err and "down to 2" in err
    assert record["warnings"] == [re.sub(r"^cclust: warning: --k-range 4 6: ", "", err.strip())]
    code, out, err = run_cli(capsys, "select-k", four, "--k-range", "3", "5", *common)
    assert code == 0 and "best K = 4" in out and err == ""


def test_select_k_result_says_when_k_is_at_the_edge():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.05, (20, 2)) for c in [(0, 0), (0, 5), (5, 0), (5, 5)]])
    result = cclust.select_k(X, [2, 3, 4], method="hbgf", criterion="objective", n_partitions=8, n_resamples=3,
                             method_params={"sizes": "equal"}, random_state=0)
    assert result.best_k == 4 and len(result.warnings) == 1
    lines = result.summary().splitlines()
    # the warning follows the choice, before the table of the chosen K's clusters
    assert "largest K tried" in lines[lines.index(next(line for line in lines if line.startswith("best K"))) + 1]
    assert result.to_dict()["warnings"] == list(result.warnings)


# -- numbers that mean what they say -------------------------------------------------------------------

def test_one_shot_methods_report_no_iterations():
    X, _ = load_iris()
    ensemble = cclust.generate("kmeans", X, 3, n_partitions=8, random_state=0)
    for method in ("cspa", "mcla", "hbgf", "eac", "fc", "best", "womc", "ls-agglomerative"):
        result = cclust.consensus(method, ensemble, 3, random_state=0)
        assert result.n_iter is None and result.converged is None, method
        assert "n_iter" not in repr(result)
    result = cclust.consensus("kcc", ensemble, 3, random_state=0)
    assert isinstance(result.n_iter, int) and result.converged is True


def test_a_result_with_iterations_but_no_convergence_state_fails_the_kit():
    def half_reported(ensemble, n_clusters, *, random_state=None):
        labels = np.arange(np.asarray(cclust.Ensemble(ensemble).labels).shape[0]) % n_clusters
        return ConsensusResult.from_labels(labels, n_iter=3)

    with pytest.raises(AssertionError, match="a one-shot method leaves both None"):
        check_consensus_result(half_reported)


def test_result_refuses_a_negative_iteration_count():
    with pytest.raises(cclust.errors.ValidationError, match="n_iter must be a non-negative int or None"):
        ConsensusResult.from_labels([0, 1], n_iter=-1, converged=True)


def test_single_method_output_explains_iterations_and_shows_the_utility(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc")
    assert code == 0
    fields = dict(line.split(" : ", 1) for line in re.sub(r"\n {13}", " ", out).splitlines())
    fields = {key.strip(): value for key, value in fields.items()}
    assert fields["method"] == "kcc (utility=uh, init=k-means++)"
    assert re.fullmatch(r"\d+ \(converged(: the kept restart started at a fixed point)?; "
                        r"\d+ label updates over 10 restarts\)", fields["iterations"]), fields["iterations"]
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc", "--method-param", "utility=uc")
    assert "method     : kcc (utility=uc, init=k-means++)" in out


def test_single_one_shot_method_prints_no_iterations(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "hbgf")
    assert code == 0 and "iterations" not in out
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "hbgf", "--format", "json")
    record = json.loads(out)
    assert record["n_iter"] is None and record["converged"] is None


def test_the_table_says_what_k_and_agreement_are_and_which_utility_ran(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,hbgf")
    assert code == 0
    text = flat(out)
    assert "K: clusters in each method's consensus." in text
    assert "agreement: average NMI of the consensus with the 12 basic partitions (ANMI, Strehl & Ghosh 2002" in text
    assert re.search(r"^kcc .*utility=uh, init=k-means\+\+", out, re.M)


def test_fuse_warns_when_every_partition_has_one_cluster(tmp_path, capsys):
    path = tmp_path / "flat.csv"
    np.savetxt(path, np.zeros((20, 3), dtype=int), fmt="%d", delimiter=",")
    code, out, err = run_cli(capsys, "fuse", path, "-k", "2", "--format", "json")
    assert code == 0
    assert err.startswith("cclust: warning: every partition in") and "arbitrary" in err
    assert len(json.loads(out)["warnings"]) == 1
    path = tmp_path / "fine.csv"
    np.savetxt(path, np.array([[0, 0, 1]] * 10 + [[1, 0, 0]] * 10), fmt="%d", delimiter=",")
    code, _, err = run_cli(capsys, "fuse", path, "-k", "2")
    assert code == 0 and err == ""  # one informative partition is enough


# -- counts and sizes -----------------------------------------------------------------------------------

def test_counts_are_in_the_right_number(tmp_path, capsys):
    one = tmp_path / "one.csv"
    np.savetxt(one, np.array([[0], [0], [1], [1], [2]]), fmt="%d", delimiter=",")
    code, out, _ = run_cli(capsys, "fuse", one, "-k", "2")
    assert code == 0
    assert "1 partition (K_i 3..3), 0 missing labels" in out and "with the 1 partition," in out
    assert "1 partitions" not in out
    X = np.linspace(0.0, 1.0, 30)[:, None]
    path = tmp_path / "line.npy"
    np.save(path, X)
    code, out, _ = run_cli(capsys, "run", path, "-k", "2", "--partitions", "1", "-m", "kcc")
    assert code == 0 and "30 objects, 1 feature ensemble : 1 kmeans partition (K_i" in flat(out)
    assert "with the 1 partition," in out


def test_many_cluster_sizes_are_summarised(capsys):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", "5", "-m", "kcc", "-k", "40")
    assert code == 0
    line = flat(out[out.index("clusters"):out.index("objective")])
    numbers = re.findall(r"\d+", line.split("(", 1)[1].split("...")[0])
    assert len(numbers) == 10
    assert re.search(r"\(40 clusters: smallest \d+, median [\d.]+, largest \d+\)", line)
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", "5", "-m", "kcc", "-k", "40", "--format", "json")
    assert len(json.loads(out)["cluster_sizes"]) == 40  # machines still get every size


def test_methods_rule_spans_the_table(capsys):
    code, out, _ = run_cli(capsys, "methods")
    assert code == 0
    lines = out.splitlines()
    rule = lines[1]
    assert set(rule) == {"-"}
    table = lines[2:len(lines)]
    table = [line for line in table if not line.startswith("not installed")]
    assert len(rule) == max(len(line) for line in table)


# -- one name per column; no value, no column ------------------------------------------------------

def test_a_method_run_twice_has_one_name_per_column_in_every_output(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,ivc,kcc", "-o", tmp_path / "x.csv")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[4:7]] == ["kcc", "ivc", "kcc"]
    assert out.splitlines()[6].startswith("kcc #2 ")
    assert (tmp_path / "x.csv").read_text().splitlines()[0] == "kcc,ivc,kcc #2"
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,ivc,kcc", "-o", tmp_path / "x.tsv",
                           "--format", "json")
    assert [r["method"] for r in json.loads(out)["rows"]] == ["kcc", "ivc", "kcc #2"]
    assert (tmp_path / "x.tsv").read_text().splitlines()[0] == "kcc\tivc\tkcc #2"
    code, out, _ = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "kcc,ivc,kcc", "-o", tmp_path / "x.json",
                           "--format", "csv")
    assert [r["method"] for r in csv.DictReader(out.splitlines())] == ["kcc", "ivc", "kcc #2"]
    assert list(json.loads((tmp_path / "x.json").read_text())) == ["kcc", "ivc", "kcc #2"]


def test_a_method_without_a_criterion_shows_no_objective_line(capsys):
    def no_criterion(ensemble, n_clusters, *, random_state=None):
        """Labels only, no criterion."""
        return ConsensusResult.from_labels(np.arange(ensemble.n_samples) % n_clusters)

    cclust.register("no-criterion-for-cli-test", no_criterion, kind="consensus")
    try:
        code, out, err = run_cli(capsys, "run", "iris", "--partitions", R, "-m", "no-criterion-for-cli-test")
    finally:
        cclust.registry.unregister("no-criterion-for-cli-test")
    assert code == 0, err
    assert "objective" not in out and "nan" not in out and "[]" not in out
    assert "clusters  : 3 (sizes 50, 50, 50)" in out


def test_select_k_without_a_criterion_has_no_objective_column(capsys):
    code, out, _ = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--partitions", "5", "--resamples", "3",
                           "--null", "none")
    assert code == 0
    assert "objective" not in out and "nan" not in out
    assert [line for line in out.splitlines() if line.lstrip().startswith("K ")][0].split() == \
        ["K", "area", "delta", "area", "PAC"]
    code, out, _ = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--partitions", "5", "--resamples", "3",
                           "--null", "none", "--format", "csv")
    assert out.splitlines()[0] == "k,area,delta_area,pac,best"
    code, out, _ = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--partitions", "5", "--resamples", "3",
                           "--null", "none", "--format", "json")
    assert "objective" not in json.loads(out)
    # a method with a criterion keeps the column
    code, out, _ = run_cli(capsys, "select-k", "iris", "--k-range", "2", "3", "--partitions", "5", "--resamples", "3",
                           "-m", "kcc", "--format", "csv")
    assert out.splitlines()[0] == "k,area,delta_area,pac,objective,best"
