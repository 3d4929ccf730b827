"""The one-file HTML report (``cclust.report``, ``cclust report``) and its manifest's replay
(``cclust run --from-manifest``): the page is self-contained (no request, every figure a PNG that
decodes and is not blank), says what it shows, and its manifest replays to identical labels and
refuses changed inputs. Headless Chromium renders the page when it is installed."""
import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from cclust import cli
from cclust.errors import UnknownNameError, ValidationError

pytest.importorskip("matplotlib")

import matplotlib.image  # noqa: E402

from cclust.report import FORMAT_VERSION, build_report, read_manifest, replay  # noqa: E402

# The reports of the module fixtures are built once, on one worker, under pytest-xdist
# (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("report-html")

#: small settings so that a report takes seconds
FAST = {"n_resamples": 5, "n_references": 5}


def blobs(n_per=30, centres=((0, 0), (6, 0), (0, 6)), seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(c, 0.5, (n_per, 2)) for c in centres])


@pytest.fixture(scope="module")
def three():
    # more features than the markers shown per cluster (5), so the page shows a cut of the table
    X = np.hstack([blobs(), np.random.default_rng(2).normal(0.0, 0.3, (90, 6))])
    y = np.repeat([0, 1, 2], 30)
    report = build_report(X, (2, 5), methods=["kcc", "mcla"], n_partitions=10, y=y, select_k_params=FAST)
    return X, report, report.to_html()


@pytest.fixture(scope="module")
def none():
    X = np.random.default_rng(1).normal(size=(80, 3))
    report = build_report(X, (1, 4), methods=["kcc"], n_partitions=10, select_k_params=FAST)
    return X, report, report.to_html()


def images(page):
    return re.findall(r'<img src="([^"]*)"', page)


def decoded(uri):
    assert uri.startswith("data:image/png;base64,"), uri[:40]
    data = base64.b64decode(uri.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return matplotlib.image.imread(io.BytesIO(data), format="png")


# -- the page --------------------------------------------------------------------------------------
def test_the_page_loads_nothing_from_anywhere(three):
    _, _, page = three
    assert "http://" not in page and "https://" not in page and "//" not in re.sub(r"data:[^\"]*", "", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    # the only script is the manifest's JSON block, which no browser runs
    assert re.findall(r"<script[^>]*>", page) == ['<script type="application/json" id="cclust-manifest">']
    assert all(src.startswith("data:image/png;base64,") for src in re.findall(r'src="([^"]*)"', page))
    assert not re.findall(r'href="', page)


def test_every_figure_is_a_png_that_is_not_blank(three):
    _, _, page = three
    found = images(page)
    # CDF/delta area/PAC/null, stability, heatmap, tracking, item consensus, methods, markers
    assert len(found) == 7
    for uri in found:
        pixels = decoded(uri)
        assert pixels.ndim == 3 and pixels.shape[0] > 50 and pixels.shape[1] > 50
        assert float(pixels[..., :3].std()) > 0.01


def test_the_page_has_every_section_and_the_uncertainty(three):
    X, report, page = three
    for heading in ("Data", "Choosing K", "Per-cluster stability at K = 3", "Consensus heatmap at K = 3",
                    "Item consensus at K = 3", "Ensemble and its diversity", "Method comparison at K = 3",
                    "Markers per cluster at K = 3", "Reproducibility manifest"):
        assert f"<h2>{heading}</h2>" in page, heading
    assert report.select.best_k == 3 and "Chosen K = 3" in page
    assert "reference PAC (mean ± sd)" in page and "RCSI ± se" in page and "p-value" in page
    assert "mean NMI with the others" in page and "over the 10 partitions" in page
    # true classes are scored against, never used to choose
    assert "ARI with the true classes" in page
    # five markers per cluster in the table, every feature in the report's own table
    markers = page[page.index("<h2>Markers per cluster"):page.index("<h2>Reproducibility")]
    assert markers.count("<tr>") == 1 + 3 * 5
    assert len(report.markers["feature"]) == 3 * X.shape[1]
    assert report.labels_.shape == (X.shape[0],)


def test_k1_is_said_plainly_and_the_rest_is_marked_for_inspection_only(none):
    _, report, page = none
    assert report.select.best_k == 1
    assert "Answer: K = 1" in page and "no evidence of cluster structure" in page
    assert "for inspection only" in page and "Chosen K" not in page
    assert report.k == 2 and "<h2>Per-cluster stability at K = 2</h2>" in page


def test_a_large_heatmap_is_a_subsample_and_the_page_says_so():
    X = blobs(n_per=350)
    page = build_report(X, (2, 3), methods=["kcc"], n_partitions=5,
                        select_k_params={"n_resamples": 3, "n_references": 2}).to_html()
    assert "1050 x 1050 entries" in page and "stratified subsample of 1000 objects" in page


def test_a_sketched_choice_draws_the_sketch_and_says_so():
    X = blobs(n_per=100)
    report = build_report(X, (2, 4), methods=["kcc"], n_partitions=5, select_k_params={**FAST, "sketch": 120})
    page = report.to_html()
    assert report.select.sketch is not None and report.labels_.shape == (300,)
    assert "sketch of 120 of the 300 objects" in page and f"Consensus heatmap at K = {report.k}" in page
    for uri in images(page):
        assert float(decoded(uri)[..., :3].std()) > 0.01


def test_a_select_k_result_has_a_page_of_its_own(tmp_path):
    import cclust

    result = cclust.select_k(blobs(), range(2, 5), keep_matrices=True, random_state=0, **FAST)
    page = result.to_html()
    for heading in ("Choosing K", "Per-cluster stability at K = 3", "Consensus heatmap at K = 3",
                    "Item consensus at K = 3"):
        assert f"<h2>{heading}</h2>" in page, heading
    assert "Chosen K = 3" in page and "RCSI ± se" in page
    assert "http" not in page and "<script" not in page and "<link" not in page
    found = images(page)
    assert len(found) == 5          # CDF/PAC/null, stability, heatmap, tracking, item consensus
    assert all(float(decoded(uri)[..., :3].std()) > 0.01 for uri in found)
    path = tmp_path / "k.html"
    assert result.to_html(path) == str(path) and path.read_text(encoding="utf-8") == page
    # the same sections as the report's page at the same K
    at_2 = result.to_html(k=2)
    assert at_2.count("<h2>") == 4 and "Per-cluster stability at K = 2" in at_2
    # without the matrices the heatmap section says how to keep them
    lean = cclust.select_k(blobs(), range(2, 4), random_state=0, **FAST).to_html()
    assert "keep_matrices=True" in lean


def test_a_select_k_page_refuses_bad_arguments(tmp_path):
    import cclust

    result = cclust.select_k(blobs(), range(2, 4), random_state=0, **FAST)
    with pytest.raises(ValidationError, match="k=7 is not a K of this result"):
        result.to_html(k=7)
    with pytest.raises(ValidationError, match="should end in .html"):
        result.to_html(tmp_path / "page.txt")
    with pytest.raises(ValidationError, match="does not exist"):
        result.to_html(tmp_path / "missing" / "page.html")


def test_to_html_writes_one_file_and_leaves_no_temporary(three, tmp_path):
    _, report, page = three
    path = tmp_path / "r.html"
    assert report.to_html(path) == path
    assert path.read_text(encoding="utf-8") == page
    assert os.listdir(tmp_path) == ["r.html"]
    with pytest.raises(ValidationError, match="does not exist"):
        report.to_html(tmp_path / "missing" / "r.html")
    with pytest.raises(ValidationError, match="is a directory"):
        report.to_html(tmp_path)


def test_the_caller_data_is_not_changed():
    X = blobs()
    before = X.copy()
    build_report(X, (2, 3), methods=["kcc"], n_partitions=5, standardize=True, select_k_params=FAST)
    assert np.array_equal(X, before)


def test_bad_arguments_name_themselves():
    X = blobs()
    with pytest.raises(ValidationError, match="k_range"):
        build_report(X, (3, 2))
    with pytest.raises(ValidationError, match="random_state"):
        build_report(X, (2, 3), random_state=None)
    with pytest.raises(ValidationError, match="select_k_params has unknown key"):
        build_report(X, (2, 3), select_k_params={"keep_matrices": False})
    with pytest.raises(UnknownNameError, match="kcc"):
        build_report(X, (2, 3), methods=["kccc"])
    with pytest.raises(ValidationError, match="y must have one true class per object"):
        build_report(X, (2, 3), y=[0, 1])


# -- the manifest -----------------------------------------------------------------------------------
def test_the_manifest_records_versions_parameters_seed_and_digests(three):
    X, report, page = three
    manifest = report.manifest
    assert manifest["format_version"] == FORMAT_VERSION
    assert {"cclust", "python", "numpy", "scipy"} <= set(manifest["versions"])
    assert manifest["parameters"]["random_state"] == 0 and manifest["parameters"]["methods"] == ["kcc", "mcla"]
    assert manifest["parameters"]["select_k"] == FAST
    assert re.fullmatch(r"[0-9a-f]{64}", manifest["inputs"]["data_sha256"])
    assert set(manifest["results"]["labels_sha256"]) == {"select_k K=3", "kcc", "mcla"}


def test_the_manifest_is_read_back_from_the_page_and_from_json(three, tmp_path):
    _, report, page = three
    (tmp_path / "r.html").write_text(page, encoding="utf-8")
    report.write_manifest(tmp_path / "m.json")
    assert read_manifest(tmp_path / "r.html") == report.manifest
    assert read_manifest(tmp_path / "m.json") == report.manifest


def test_replay_gives_identical_labels(three):
    X, report, _ = three
    again = replay(report.manifest, X.copy())
    assert again.identical and again.differing == ()
    for name, labels in report.labels.items():
        assert np.array_equal(again.labels[name], labels), name


def test_replay_refuses_other_data_and_newer_or_foreign_manifests(three, tmp_path):
    X, report, _ = three
    changed = X.copy()
    changed[0, 0] += 1e-9
    with pytest.raises(ValidationError, match="not those the manifest was made from"):
        replay(report.manifest, changed)
    newer = dict(report.manifest, format_version=FORMAT_VERSION + 1)
    with pytest.raises(ValidationError, match="upgrade cclust"):
        replay(newer, X)
    with pytest.raises(ValidationError, match="not a cclust report manifest"):
        replay({"format": "something-else"}, X)
    (tmp_path / "page.html").write_text("<html><body>no manifest</body></html>", encoding="utf-8")
    with pytest.raises(ValidationError, match="neither a JSON manifest nor an HTML report"):
        read_manifest(tmp_path / "page.html")


# -- the command line -------------------------------------------------------------------------------
CLI_FAST = ["--k-range", "2", "4", "--resamples", "5", "--references", "3", "--partitions", "10", "-m", "kcc,mcla"]


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_csv(path, X):
    lines = ["a,b"] + [f"{a!r},{b!r}" for a, b in X.tolist()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def cli_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    data = folder / "blobs.csv"
    write_csv(data, blobs())
    code = cli.main(["report", str(data), "-o", str(folder / "r.html"), "--manifest", str(folder / "m.json"),
                     *CLI_FAST])
    assert code == 0
    return folder, data


def test_cli_report_writes_the_page_and_the_manifest(cli_report):
    folder, data = cli_report
    page = (folder / "r.html").read_text(encoding="utf-8")
    manifest = json.loads((folder / "m.json").read_text(encoding="utf-8"))
    assert read_manifest(folder / "r.html") == manifest
    assert manifest["command"][:3] == ["cclust", "report", str(data)]
    assert manifest["inputs"]["path"] == str(data.resolve())
    assert re.fullmatch(r"[0-9a-f]{64}", manifest["inputs"]["file_sha256"])
    assert "http" not in page and len(images(page)) >= 7


def test_cli_replay_from_the_page_gives_identical_labels(cli_report, capsys):
    folder, _ = cli_report
    manifest = read_manifest(folder / "m.json")
    code, out, err = run_cli(capsys, "run", "--from-manifest", folder / "r.html", "-o", folder / "labels.json")
    assert code == 0, err
    assert "labels identical to the recorded ones (select_k K=3, kcc, mcla)" in out
    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    from cclust.report._manifest import labels_sha256

    assert {name: labels_sha256(v) for name, v in labels.items()} == manifest["results"]["labels_sha256"]


def one_line_error(code, out, err):
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("cclust: error: ") and "Traceback" not in err
    return err


def test_cli_replay_refuses_a_changed_or_missing_input(cli_report, tmp_path, capsys):
    folder, data = cli_report
    copy = tmp_path / "blobs.csv"
    shutil.copy(data, copy)
    manifest = read_manifest(folder / "m.json")
    manifest["inputs"]["path"] = str(copy)
    (tmp_path / "m.json").write_text(json.dumps(manifest), encoding="utf-8")
    with open(copy, "a", encoding="utf-8") as handle:
        handle.write("0.5,0.5\n")
    err = one_line_error(*run_cli(capsys, "run", "--from-manifest", tmp_path / "m.json"))
    assert f"DATA {copy}: the file changed since the manifest was written" in err
    # given as DATA (moved or renamed), the file is checked by its values
    err = one_line_error(*run_cli(capsys, "run", copy, "--from-manifest", tmp_path / "m.json"))
    assert f"DATA {copy}: its values are not those the manifest was made from" in err
    copy.unlink()
    err = one_line_error(*run_cli(capsys, "run", "--from-manifest", tmp_path / "m.json"))
    assert f"DATA {copy}: no such file" in err


def test_cli_replay_refuses_a_newer_format_and_other_options(cli_report, tmp_path, capsys):
    folder, _ = cli_report
    manifest = read_manifest(folder / "m.json")
    manifest["format_version"] = FORMAT_VERSION + 1
    (tmp_path / "new.json").write_text(json.dumps(manifest), encoding="utf-8")
    err = one_line_error(*run_cli(capsys, "run", "--from-manifest", tmp_path / "new.json"))
    assert f"manifest format version {FORMAT_VERSION + 1}" in err and "upgrade cclust" in err
    err = one_line_error(*run_cli(capsys, "run", "--from-manifest", folder / "m.json", "--seed", "3"))
    assert "drop --seed" in err
    err = one_line_error(*run_cli(capsys, "run"))
    assert "run needs DATA" in err


def test_cli_report_refuses_unwritable_outputs_before_the_work(tmp_path, capsys):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x", encoding="utf-8")
    for out, expected in ((tmp_path / "missing" / "r.html", "does not exist"),
                          (blocker / "r.html", "is a file, not a folder"),
                          (tmp_path, "is a directory"),
                          (tmp_path / "r.txt", "must end in .html or .htm")):
        err = one_line_error(*run_cli(capsys, "report", "iris", "-o", out))
        assert f"--out {out}" in err and expected in err
    err = one_line_error(*run_cli(capsys, "report", "iris", "-o", tmp_path / "r.html", "--manifest",
                                  tmp_path / "m.txt"))
    assert "--manifest" in err and ".json" in err
    err = one_line_error(*run_cli(capsys, "report", "iris", "-o", tmp_path / "r.html", "--k-range", "4", "2"))
    assert "--k-range must satisfy 1 <= LOW <= HIGH" in err and "got 4 2" in err
    assert sorted(os.listdir(tmp_path)) == ["file.txt"]


def test_cli_report_on_h5ad_replays(tmp_path, capsys):
    anndata = pytest.importorskip("anndata")
    X = blobs()
    adata = anndata.AnnData(np.zeros((X.shape[0], 1)), obsm={"X_pca": X})
    adata.write_h5ad(tmp_path / "cells.h5ad")
    code, out, err = run_cli(capsys, "report", tmp_path / "cells.h5ad", "--use-rep", "X_pca", "-o",
                             tmp_path / "r.html", *CLI_FAST)
    assert code == 0, err
    assert "chosen K = 3" in out
    code, out, err = run_cli(capsys, "run", "--from-manifest", tmp_path / "r.html")
    assert code == 0, err
    assert "labels identical" in out


def _installed_cclust():
    path = Path(sysconfig.get_path("scripts")) / ("cclust.exe" if sys.platform == "win32" else "cclust")
    if not path.exists():
        pytest.skip(f"the cclust command is not installed in {path.parent}")
    return str(path)


def test_the_installed_command_reports_a_bad_manifest_in_one_line(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text('{"format": "cclust-report-manifest", "format_version": 99}', encoding="utf-8")
    done = subprocess.run([_installed_cclust(), "run", "--from-manifest", str(bad)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("cclust: error: ") and "version 99" in done.stderr


# -- headless Chromium --------------------------------------------------------------------------------
_PROBE = ('<script>window.addEventListener("load", function () {'
          'var images = [];'
          'for (const i of document.images) { images.push(i.complete && i.naturalWidth > 0 ? "ok" : "broken"); }'
          'document.body.setAttribute("data-images", images.join(","));'
          'document.body.setAttribute("data-requests", performance.getEntriesByType("resource")'
          '.map(function (e) { return e.name; }).join(" ")); });</script>')


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no chromium on PATH (Debian: apt-get install chromium); the page's offline checks above still ran")


def _headless(browser, *args):
    # --host-resolver-rules: every host name fails to resolve, so any request the page made would fail
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--host-resolver-rules=MAP * ~NOTFOUND", *args]
    return subprocess.run(command, capture_output=True, timeout=180)


def test_chromium_renders_every_figure_with_no_request(three, tmp_path):
    browser = _chromium()
    _, _, page = three
    # the page as written plus a probe at its end that records, once loaded, whether each image
    # decoded and which resources were requested (the report itself holds no script)
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    done = _headless(browser, "--virtual-time-budget=10000", "--dump-dom", probed.as_uri())
    dom = done.stdout.decode("utf-8", "replace")
    found = re.search(r'data-images="([^"]*)"', dom)
    assert found, f"the probe did not run: {done.stderr.decode('utf-8', 'replace')[-500:]}"
    statuses = found.group(1).split(",")
    assert statuses == ["ok"] * len(images(page))
    assert re.search(r'data-requests="([^"]*)"', dom).group(1) == ""


def test_chromium_screenshot_of_the_page_is_not_blank(three, tmp_path):
    browser = _chromium()
    _, _, page = three
    path = tmp_path / "r.html"
    path.write_text(page, encoding="utf-8")
    shot = tmp_path / "shot.png"
    _headless(browser, f"--screenshot={shot}", "--window-size=1200,2400", path.as_uri())
    assert shot.exists()
    pixels = matplotlib.image.imread(str(shot))
    assert pixels.shape[0] >= 2000 and pixels.shape[1] >= 1000
    # text, tables and figures: far from one colour
    assert float(pixels[..., :3].std()) > 0.05


def test_diversity_is_each_partitions_mean_nmi_with_the_others_missing_objects_included():
    import cclust
    from cclust.metrics import nmi
    from cclust.report._build import _diversity

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, (60, 5))
    labels[rng.random((60, 5)) < 0.2] = -1
    labels[:, 0] = rng.integers(0, 3, 60)  # one partition labels every object: the one-pass route
    ensemble = cclust.Ensemble(labels)
    read = np.asarray(ensemble.labels)
    per = []
    for i in range(5):
        both = [(read[:, i] >= 0) & (read[:, j] >= 0) for j in range(5)]
        per.append(np.mean([nmi(read[both[j], i], read[both[j], j]) for j in range(5) if j != i]))
    found = _diversity(ensemble)
    assert found["nmi_mean"] == pytest.approx(np.mean(per), abs=1e-12)
    assert found["nmi_sd"] == pytest.approx(np.std(per, ddof=1), abs=1e-12)


def test_no_value_can_close_the_manifest_block(three, tmp_path):
    from cclust.report._manifest import html_block

    _, report, _ = three
    manifest = json.loads(json.dumps(report.manifest))
    manifest["inputs"]["description"] = 'a file named </script><img src="x"> &quot;'
    (tmp_path / "r.html").write_text(f"<html><body>{html_block(manifest)}</body></html>", encoding="utf-8")
    assert read_manifest(tmp_path / "r.html") == manifest


def test_an_anndata_is_only_read_and_replays(tmp_path, capsys):
    anndata = pytest.importorskip("anndata")
    X = blobs()
    adata = anndata.AnnData(X.copy(), obsm={"X_pca": X[:, ::-1].copy()})
    adata.var_names = ["gene_a", "gene_b"]
    report = build_report(adata, (2, 4), methods=["kcc"], n_partitions=10, select_k_params=FAST)
    assert list(adata.obs.columns) == [] and list(adata.uns) == [] and np.array_equal(adata.X, X)
    assert set(report.markers["feature"]) == {"gene_a", "gene_b"}
    assert replay(report.manifest, adata).identical
    on_pca = build_report(adata, (2, 4), methods=["kcc"], n_partitions=10, select_k_params=FAST, use_rep="X_pca")
    assert on_pca.manifest["inputs"]["use_rep"] == "X_pca"
    assert replay(on_pca.manifest, adata).identical
    # the command line replays a manifest made in Python from the .h5ad file
    adata.write_h5ad(tmp_path / "cells.h5ad")
    on_pca.write_manifest(tmp_path / "m.json")
    code, out, err = run_cli(capsys, "run", tmp_path / "cells.h5ad", "--from-manifest", tmp_path / "m.json")
    assert code == 0, err
    assert "labels identical" in out
