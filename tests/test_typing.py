"""Type annotations of the public API: mypy is clean on cclust/ (pyproject's [tool.mypy]), and
the functions listed here keep full annotations, so coverage cannot drop without a test failing."""
import inspect
import pathlib
import subprocess
import sys

import pytest

import cclust
import cclust.base
import cclust.cli
import cclust.clusterers
import cclust.dask  # imports no Dask module until one is used
import cclust.differential
import cclust.evaluation
import cclust.generators
import cclust.graph
import cclust.graph_generators
import cclust.metrics
import cclust.multiview
import cclust.plotting
import cclust.registry
import cclust.report
import cclust.resolution
import cclust.selection
import cclust.soft
import cclust.soft_generators
import cclust.testing
import cclust.validation
from cclust.cli import _commands, _csv, _jobs, _messages, _parameters, _readers, _report
from cclust.ensemble import Ensemble, as_ensemble
from cclust.interop import _anndata
from cclust.result import ConsensusResult

ROOT = pathlib.Path(cclust.__file__).resolve().parent.parent
#: The source tree mypy reads: the checkout this test file is in (cclust/ beside tests/ and
#: pyproject.toml, as in CI, which installs cclust from that checkout and runs its tests), else
#: the directory the imported cclust lies in when it is built in place.
SOURCES = next((path for path in (pathlib.Path(__file__).resolve().parents[1], ROOT)
                if (path / "pyproject.toml").exists() and (path / "cclust" / "__init__.py").exists()), None)


def test_mypy_finds_no_error_in_the_package(tmp_path):
    pytest.importorskip("mypy")
    if SOURCES is None:
        pytest.skip("no source tree (cclust/ beside pyproject.toml) to type-check: the tests run from an sdist's copy")
    # a cache of its own, so that a stale one never hides an error (cold: about 25 s of CPU)
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(SOURCES / "pyproject.toml"),
                          "--cache-dir", str(tmp_path / "mypy_cache"), "--no-error-summary"],
                         cwd=SOURCES, capture_output=True, text=True)
    assert run.returncode == 0, f"mypy found errors (python -m mypy, from {SOURCES}):\n{run.stdout}{run.stderr}"


def test_the_mypy_configuration_exempts_no_module_of_cclust():
    """Only the compiled cores (they have no stubs) and other distributions are left unchecked: no
    override in [tool.mypy] turns off an error, or the check, for a Python module of cclust."""
    tomllib = pytest.importorskip("tomllib")
    if SOURCES is None:
        pytest.skip("no source tree (cclust/ beside pyproject.toml) whose configuration to read")
    config = tomllib.loads((SOURCES / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert not {"ignore_errors", "disable_error_code"} & set(config), "[tool.mypy] turns errors off everywhere"
    for override in config.get("overrides", []):
        modules = [override["module"]] if isinstance(override["module"], str) else override["module"]
        ours = [m for m in modules if m.split(".")[0] == "cclust" and m.split(".")[:2] != ["cclust", "_ext"]]
        assert not ours, f"[tool.mypy] has an override for {ours}: {override}; make that code clean instead"


def _builtin_consensus_functions():
    functions = {}
    for name, row in cclust.available(kind="consensus").items():
        if row.provider == cclust.registry.BUILTIN_PROVIDER:
            functions[name] = cclust.get(name)
    return functions


def _public_functions():
    """(name, callable) of the functions whose signatures must stay fully annotated."""
    out = [(f"cclust.{name}", getattr(cclust, name))
           for name in ("consensus", "generate", "show_config", "get", "available", "register")]
    out += [(f"cclust.Ensemble.{name}", getattr(Ensemble, name)) for name in ("__init__", "take", "with_weights", "join")]
    out += [(f"cclust.Ensemble.{name}", getattr(Ensemble, name).fget)
            for name in ("labels", "n_samples", "n_partitions", "shape", "n_clusters", "offsets", "weights",
                         "provenance", "has_missing", "labelled")]
    # the cached views
    out += [(f"cclust.Ensemble.{name}", getattr(Ensemble, name))
            for name in ("canonical", "distinct_rows", "one_hot", "coassociation", "coassociation_bytes",
                         "knn_coassociation", "contingency", "contingency_blocks")]
    out += [("cclust.Ensemble.cluster_sizes", Ensemble.cluster_sizes.fget)]
    out += [("cclust.ensemble.as_ensemble", as_ensemble), ("cclust.ConsensusResult.from_labels",
                                                           ConsensusResult.from_labels)]
    out += [(f"cclust.base.{name}", getattr(cclust.base, name))
            for name in ("declare", "method_info", "accepts", "check_contract")]
    out += [(f"cclust.registry.{name}", getattr(cclust.registry, name))
            for name in ("unregister", "conflicts", "refresh", "canonical_name", "claims", "install_hint")]
    out += [(f"cclust.validation.{name}", getattr(cclust.validation, name))
            for name in cclust.validation.__all__ if inspect.isfunction(getattr(cclust.validation, name))]
    out += [(f"consensus function {name!r}", fn) for name, fn in sorted(_builtin_consensus_functions().items())]
    out += [(f"cclust.{name}", getattr(cclust, name)) for name in ("predict", "markers", "choose_resolution",
                                                                   "select_k")]
    out += [(f"cclust.selection.{name}", getattr(cclust.selection, name))
            for name in ("gap_statistic", "cluster_stability")]
    out += [(f"cclust.selection.SelectKResult.{name}", getattr(cclust.selection.SelectKResult, name))
            for name in ("labels_series", "as_table", "to_dict", "to_html", "summary", "cluster_table")]
    out += [("cclust.selection.SelectKResult.has_objective", cclust.selection.SelectKResult.has_objective.fget)]
    out += [(f"cclust.ConsensusClustering.{name}", getattr(cclust.ConsensusClustering, name))
            for name in ("__init__", "get_params", "set_params", "fit", "predict", "fit_predict")]
    for module in (cclust.metrics, cclust.testing, cclust.clusterers, cclust.evaluation):
        out += [(f"{module.__name__}.{name}", getattr(module, name)) for name in module.__all__
                if inspect.isfunction(getattr(module, name))]
    out += [(f"cclust.clusterers.KMedoids.{name}", getattr(cclust.clusterers.KMedoids, name))
            for name in ("__init__", "get_params", "set_params", "fit", "fit_predict")]
    out += [(f"cclust.evaluation.{name}", getattr(cclust.evaluation, name))
            for name in ("internal_indices", "nearest_neighbors_in_order")]
    out += [(f"cclust.generators.{name}", getattr(cclust.generators, name))
            for name in ("kmeans", "subspace", "subsample", "projection", "boot", "bagged_memberships", "bag",
                         "seeded_ensemble")]
    # the graph toolkit; identical_label_rows and number_by_first live in cclust.ensemble
    out += [(f"cclust.graph.{name}", getattr(cclust.graph, name)) for name in cclust.graph.__all__
            if inspect.isfunction(getattr(cclust.graph, name))
            and name not in ("identical_label_rows", "number_by_first")]
    out += [("cclust.graph.TransferCut.__init__", cclust.graph.TransferCut.__init__)]
    out += [(f"cclust.base.Utility.{name}", getattr(cclust.base.Utility, name))
            for name in ("with_params", "mu", "normalizers", "effective_weights", "gamma_offset",
                         "partition_utilities", "consensus_value")]
    out += [(f"cclust.base.Utility.{name}", getattr(cclust.base.Utility, name).fget) for name in ("code", "exponent")]
    out += [(f"cclust.multiview.{name}", getattr(cclust.multiview, name))
            for name in ("multiview", "view_of", "logrank_test", "multiview_scores")]
    out += [("cclust.multiview.MultiviewScores.summary", cclust.multiview.MultiviewScores.summary)]
    out += [(f"cclust.cli.{name}", getattr(cclust.cli, name)) for name in cclust.cli.__all__
            if inspect.isfunction(getattr(cclust.cli, name))]
    out += [(f"cclust.cli.Dataset.{name}", getattr(cclust.cli.Dataset, name)) for name in ("__init__", "summary")]
    # what the sub-commands share: the readers, writers and text of the CLI's modules (not the
    # sub-command functions, which take argparse's namespace)
    for module, names in ((_commands, ("scale_warning",)), (_csv, ("CsvOptions.is_na", "CsvOptions.number")),
                          (_jobs, ("Job.__init__", "Job.settings", "column_names")),
                          (_messages, ("plural", "terminate_as_interrupt")), (_parameters, ("parse_params",)),
                          (_readers, ("filled_text", "EnsembleFile.__init__", "read_ensemble", "load_labels")),
                          (_report, ("format_table", "wrap_cell", "ComparisonTable.__init__", "ComparisonTable.header",
                                     "ComparisonTable.row", "ComparisonTable.footer", "cluster_sizes_text",
                                     "iterations_text", "write_h5ad", "write_labels_h5ad", "provenance_counts",
                                     "provenance_text", "ensemble_format", "write_ensemble", "plot_rows"))):
        for name in names:
            owner, _, attribute = name.rpartition(".")
            out += [(f"{module.__name__}.{name}", getattr(getattr(module, owner) if owner else module, attribute))]
    # the AnnData adapter: every function
    out += [(f"{_anndata.__name__}.{name}", fn) for name, fn in sorted(vars(_anndata).items())
            if inspect.isfunction(fn) and fn.__module__ == _anndata.__name__]
    out += [(f"cclust.report.{name}", getattr(cclust.report, name)) for name in ("build_report", "replay",
                                                                                   "read_manifest")]
    out += [(f"cclust.report.Report.{name}", getattr(cclust.report.Report, name))
            for name in ("to_html", "write_manifest")]
    out += [("cclust.report.Report.labels_", cclust.report.Report.labels_.fget)]
    out += [(f"cclust.plotting.{name}", getattr(cclust.plotting, name)) for name in cclust.plotting.__all__]
    out += [(f"cclust.dask.{name}", getattr(cclust.dask, name)) for name in cclust.dask.__all__
            if inspect.isfunction(getattr(cclust.dask, name))]
    out += [(f"cclust.dask.DaskEnsemble.{name}", getattr(cclust.dask.DaskEnsemble, name))
            for name in ("__init__", "blocks", "with_weights", "persist", "compute")]
    out += [("cclust.dask.DaskEnsemble.chunk_starts", cclust.dask.DaskEnsemble.chunk_starts.fget)]
    out += [(f"cclust.resolution.ResolutionChoice.{name}", getattr(cclust.resolution.ResolutionChoice, name))
            for name in ("labels_at", "table", "summary")]
    out += [("cclust.resolution.ResolutionChoice.best_labels", cclust.resolution.ResolutionChoice.best_labels.fget),
            ("cclust.resolution.coclustering_silhouette", cclust.resolution.coclustering_silhouette),
            ("cclust.differential.benjamini_hochberg", cclust.differential.benjamini_hochberg)]
    out += [(f"cclust.soft_generators.{name}", getattr(cclust.soft_generators, name))
            for name in cclust.soft_generators.__all__]
    out += [(f"cclust.graph_generators.{name}", getattr(cclust.graph_generators, name))
            for name in ("leiden", "louvain", "knn_graph", "check_graph", "igraph_from_adjacency")]
    out += [(f"cclust.soft.SoftEnsemble.{name}", getattr(cclust.soft.SoftEnsemble, name))
            for name in ("__init__", "stacked", "labels", "harden", "to_ensemble", "take", "with_weights",
                         "coassociation_bytes", "coassociation")]
    out += [(f"cclust.soft.SoftEnsemble.{name}", getattr(cclust.soft.SoftEnsemble, name).fget)
            for name in ("memberships", "n_samples", "n_partitions", "shape", "n_clusters", "offsets", "weights",
                         "cluster_sizes", "provenance", "hard", "is_hard")]
    return out


def _missing_annotations(fn):
    signature = inspect.signature(fn)
    missing = [p.name for p in signature.parameters.values()
               if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


@pytest.mark.parametrize("name, fn", _public_functions(), ids=lambda value: value if isinstance(value, str) else "")
def test_public_function_is_fully_annotated(name, fn):
    assert _missing_annotations(fn) == [], f"{name} lacks annotations"


def test_every_builtin_consensus_function_has_the_shared_signature_shape():
    functions = _builtin_consensus_functions()
    assert len(functions) > 40
    for name, fn in functions.items():
        signature = inspect.signature(fn)
        first, second = list(signature.parameters.values())[:2]
        assert (first.name, second.name) == ("ensemble", "n_clusters"), name
        assert "EnsembleLike" in str(first.annotation), name
        assert str(second.annotation) in ("int", "int | None"), name
        assert str(signature.parameters["random_state"].annotation) == "RandomStateLike", name
        assert str(signature.return_annotation) == "ConsensusResult", name


def test_the_annotation_check_sees_a_missing_annotation():
    def partly(ensemble: object, n_clusters, *, random_state=None) -> int:
        return 0

    def no_return(x: int):
        return x

    assert _missing_annotations(partly) == ["n_clusters", "random_state"]
    assert _missing_annotations(no_return) == ["return"]
