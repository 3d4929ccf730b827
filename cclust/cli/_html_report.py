"""``cclust report`` (the one-file HTML report) and ``cclust run --from-manifest`` (its replay)."""
import argparse
import os
import sys
import textwrap

from cclust.cli._messages import UserError, _note, _warn

#: the options of ``cclust report`` that say how DATA is read: recorded in the manifest so that
#: a replay reads the file the same way
READING_OPTIONS = ("labels_column", "header", "missing_features", "na_values", "decimal", "thousands",
                   "index_column", "id_column", "samples_in_columns", "force", "layer", "use_rep")

#: how ``cclust report`` reads DATA by default: a replay of a manifest made in Python (which records
#: no reading options) reads DATA so
READING_DEFAULTS = {"labels_column": None, "header": "auto", "missing_features": "error", "na_values": None,
                    "decimal": ".", "thousands": None, "index_column": "auto", "id_column": None,
                    "samples_in_columns": False, "force": False, "layer": None, "use_rep": None}

#: options of ``run`` that --from-manifest reads from the manifest instead (given as well, they are refused)
_REPLAY_KEEPS = {"data", "from_manifest", "out", "format", "jobs", "verbose", "func", "command", "argv"}


def _check_html_output(args):
    """Refuse, before the work, an --out that is not a writable .html path and a --manifest that
    is not a writable .json path, or either naming the input."""
    from cclust.cli._commands import _input_paths, _same_file

    for option, path, suffixes in (("--out", args.out, (".html", ".htm")), ("--manifest", args.manifest, (".json",))):
        if path is None:
            continue
        if os.path.isdir(path):
            raise UserError(f"{option} {path}: is a directory; give a file name.")
        if os.path.splitext(path)[1].lower() not in suffixes:
            raise UserError(f"{option} {path}: the file name must end in {' or '.join(suffixes)}.")
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise UserError(f"{option} {path}: {folder} is a file, not a folder; write elsewhere.")
        if not os.path.isdir(folder):
            raise UserError(f"{option} {path}: the folder {folder} does not exist; create it or write elsewhere.")
        if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            raise UserError(f"{option} {path}: cannot write there (permission denied); choose a folder you can "
                            "write to.")
        for name, source in _input_paths(args):
            if _same_file(path, source):
                raise UserError(f"{option} {path} is the input {name}: writing it would destroy the input; give "
                                f"{option} another file name.")
    if args.manifest and _same_file(args.out, args.manifest):
        raise UserError(f"--out {args.out} and --manifest {args.manifest} name the same file; give them different "
                        "names.")


def _data_provenance(args, data):
    """Where DATA came from, for the manifest: a bundled name, or the file's path and SHA-256."""
    from cclust import datasets
    from cclust.report._manifest import file_sha256

    record = {"description": data.description, "reading": {key: getattr(args, key) for key in READING_OPTIONS}}
    if args.data in datasets.names():
        record.update(bundled=args.data, path=None, file_sha256=None)
    else:
        record.update(bundled=None, path=os.path.abspath(args.data), file_sha256=file_sha256(args.data))
    return record


def report(args, out=None):
    """``cclust report``: choose K, compare methods, rank markers, and write one HTML page."""
    import cclust.report as cclust_report
    from cclust.cli._commands import _load_features
    from cclust.cli._report import _PLOT_HINT, _replacing

    out = sys.stdout if out is None else out
    _check_html_output(args)
    try:  # the figures need matplotlib: say so before the work
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError(f"report draws its figures with matplotlib: {_PLOT_HINT}") from None
    data, _, notices = _load_features(args)
    for text in data.notes:
        _note(text, notices)
    low, high = args.k_range
    n = data.X.shape[0]
    if not 1 <= low <= high <= n or high < 2:
        raise UserError(f"--k-range must satisfy 1 <= LOW <= HIGH <= the number of objects ({n}) and HIGH >= 2, got "
                        f"{low} {high}.")
    select_params = {key: value for key, value in (
        ("null", None if args.null == "none" else args.null), ("n_references", args.references),
        ("n_resamples", args.resamples), ("criterion", args.criterion), ("matrix", args.matrix),
        ("sketch", args.sketch)) if value is not None or (key == "null" and args.null == "none")}
    methods = [m.strip() for item in (args.method or []) for m in item.split(",") if m.strip()] or None
    provenance = {"command": ["cclust", *getattr(args, "argv", [])], **_data_provenance(args, data)}
    result = cclust_report.build_report(
        data.X, (low, high), methods=methods, generator=args.generator, n_partitions=args.partitions,
        standardize=args.standardize, n_top_markers=args.markers, select_k_params=select_params, y=data.y,
        random_state=args.seed, n_jobs=args.jobs, verbose=args.verbose, provenance=provenance)
    for text in result.select.warnings:
        _warn(f"--k-range {low} {high}: {text}")
    page = result.to_html()
    try:
        with _replacing(args.out) as handle:
            handle.write(page)
        if args.manifest:
            with _replacing(args.manifest) as handle:
                handle.write(cclust_report._manifest.to_json(result.manifest))
    except OSError as exc:
        raise UserError(f"cannot write the report ({exc.strerror or exc}); choose a folder you can write to.") from None
    select = result.select
    print(data.summary(), file=out)
    answer = "K = 1" if select.best_k == 1 else f"K = {select.best_k} ({select.criterion})"
    print(f"chosen {answer}: {select.reason}", file=out)
    failed = [r["method"] for r in result.methods if r["labels"] is None]
    if failed:
        _warn(f"{', '.join(failed)} failed at K = {result.k}; the report's comparison table says why.")
    print(f"report written to {args.out} ({len(page) // 1024} KiB, one self-contained file)"
          + (f"; manifest written to {args.manifest}" if args.manifest else ""), file=out)
    return 0


def add_report_parser(sub, add_data_options, positive_int, seed, jobs):
    """The ``report`` sub-command's options (``_parser`` passes its shared option builders)."""
    p = sub.add_parser(
        "report", help="a one-file HTML report: choice of K, stability, heatmap, methods, markers, manifest",
        description=textwrap.fill(
            "Choose K for DATA (select_k with its reference null), fuse one ensemble at that K with several "
            "consensus methods, rank each cluster's markers, and write one self-contained HTML page (figures "
            "embedded, nothing loaded from the network) with a reproducibility manifest that `cclust run "
            "--from-manifest` replays. The layout follows cola's cola_report (Gu, Schlesner & Hübschmann 2021).",
            width=100, break_on_hyphens=False),
        epilog="examples:\n  cclust report iris -o iris.html\n"
               "  cclust report data.h5ad --use-rep X_pca -o report.html --manifest report.json\n"
               "  cclust run --from-manifest report.html -o labels.csv   replay: identical labels\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", metavar="DATA", help="iris, wine, or a .csv/.tsv/.txt/.npy/.npz/.h5ad file")
    p.add_argument("-o", "--out", required=True, metavar="FILE.html", help="the report to write")
    p.add_argument("--manifest", metavar="FILE.json", default=None,
                   help="also write the manifest as a .json file (the report holds it either way)")
    p.add_argument("--k-range", nargs=2, type=int, default=(2, 6), metavar=("LOW", "HIGH"),
                   help="inclusive range of K to try (default 2 6); with the reference null (the default) K = 1, "
                        "no evidence of cluster structure, can be the answer")
    p.add_argument("-m", "--method", action="append", metavar="M",
                   help="consensus methods to compare at the chosen K (repeat or comma-separate; default kcc, mcla, "
                        "hbgf, which need no n x n matrix)")
    p.add_argument("--generator", default="kmeans", metavar="G", help="basic-partition generator (default kmeans)")
    p.add_argument("--partitions", type=positive_int, default=None, metavar="R",
                   help="basic partitions the methods fuse (default 50, 20 above 20000 objects)")
    p.add_argument("--seed", type=seed, default=0, metavar="S", help="random seed of the whole report (default 0)")
    p.add_argument("--resamples", type=positive_int, default=None, metavar="N",
                   help="select_k's subsamples per K (default as select-k)")
    p.add_argument("--null", choices=("auto", "gaussian", "uniform", "none"), default="auto",
                   help="select_k's reference data sets without clusters (John et al. 2020; default auto, as "
                        "select-k)")
    p.add_argument("--references", type=positive_int, default=None, metavar="B",
                   help="reference data sets of --null (default 10)")
    p.add_argument("--criterion", choices=("rcsi", "pac", "delta_area", "objective", "gap"), default=None,
                   help="how K is chosen (default as select-k)")
    p.add_argument("--matrix", choices=("auto", "dense", "sparse"), default=None,
                   help="select_k's consensus matrices (default auto)")
    p.add_argument("--sketch", type=positive_int, default=None, metavar="S",
                   help="run select_k on S objects and label the others from them (default: 2000 above 20000 "
                        "objects, every object otherwise)")
    p.add_argument("--markers", type=positive_int, default=5, metavar="N", help="markers shown per cluster (default 5)")
    add_data_options(p)
    p.add_argument("--jobs", type=jobs, default=None, metavar="N",
                   help="threads (default: every core; results do not depend on it)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="progress bars on a terminal (the report's steps and select_k's K)")
    p.set_defaults(func=report)
    return p


# -- replay --------------------------------------------------------------------------------------
def _refuse_other_options(args, defaults):
    given = sorted(key for key, value in vars(args).items()
                   if key not in _REPLAY_KEEPS and key in defaults and value != defaults[key]
                   and not key.endswith("_given"))
    if given:
        options = ", ".join("--" + key.replace("_", "-") for key in given)
        raise UserError(f"--from-manifest replays the parameters the manifest records; drop {options} (give only "
                        "DATA, --out, --format, --jobs and --verbose with it).")


def _replay_data(args, manifest):
    """DATA of a replay, read as the manifest's run read it, after checking the file's SHA-256."""
    from cclust.cli._commands import _read_data
    from cclust.report._manifest import check_data, file_sha256

    inputs = manifest["inputs"]
    path = args.data or inputs.get("bundled") or inputs.get("path")
    if path is None:
        raise UserError(f"--from-manifest {args.from_manifest}: the manifest was made from data in memory "
                        f"({inputs.get('description')}); give the same features as DATA.")
    recorded = inputs.get("file_sha256")
    if args.data is None and inputs.get("bundled") is None:
        if not os.path.exists(path):
            raise UserError(f"DATA {path}: no such file (the manifest records it as the input); give its new "
                            "place as DATA.")
        if recorded and os.path.isfile(path) and file_sha256(path) != recorded:
            raise UserError(f"DATA {path}: the file changed since the manifest was written (its SHA-256 is "
                            f"{file_sha256(path)[:16]}..., the manifest records {recorded[:16]}...); replaying it would "
                            "give other labels: restore the file or make a new report.")
    reading = dict(READING_DEFAULTS)
    if inputs.get("reading") is None:  # made in Python: an AnnData's features as it named them
        reading.update(layer=inputs.get("layer"), use_rep=inputs.get("use_rep"))
    reading.update((key, value) for key, value in (inputs.get("reading") or {}).items() if key in READING_DEFAULTS)
    if reading["na_values"] is not None:
        reading["na_values"] = tuple(reading["na_values"])
    data = _read_data(argparse.Namespace(data=path, **reading))
    # DATA given in place of the recorded file (moved, or another format of it): its values must match
    check_data(manifest, data.X, where=f"DATA {path}")
    return data


def replay_manifest(args, defaults, out=None):
    """``cclust run --from-manifest FILE``: replay a report's run and say whether its labels are
    identical to the recorded ones (status 0) or not (a warning, status 1). ``defaults``: the
    values of run's options when not given (any other value is refused)."""
    import json

    import cclust
    import cclust.report as cclust_report
    from cclust.cli._commands import _ids_note
    from cclust.cli._report import write_labels

    out = sys.stdout if out is None else out
    _refuse_other_options(args, defaults)
    manifest = cclust_report.read_manifest(args.from_manifest)
    data = _replay_data(args, manifest)
    result = cclust_report.replay(manifest, data.X, n_jobs=args.jobs, verbose=args.verbose)
    names = ", ".join(result.labels)
    if args.format == "table":
        print(f"replayed {' '.join(manifest.get('command') or [manifest.get('call', 'the manifest')])} on "
              f"{data.description} (its SHA-256 matches the manifest); K = {result.best_k}", file=out)
    if result.identical:
        if args.format == "table":
            print(f"labels identical to the recorded ones ({names})", file=out)
    else:
        _warn(f"the labels of {', '.join(result.differing)} differ from the recorded ones: "
              f"{cclust_report._manifest.python_version_note(manifest) or 'same versions, so please report it'}.")
    if args.out:
        rows = [{"method": name, "result": cclust.ConsensusResult.from_labels(labels)}
                for name, labels in result.labels.items()]
        write_labels(args.out, rows, ids=data.ids)
        _ids_note(args.out, data.ids)
        if args.format == "table":
            print(f"labels written to {args.out}", file=out)
    if args.format != "table":
        from cclust.report._manifest import labels_sha256

        record = {"best_k": result.best_k, "identical": result.identical, "differing": list(result.differing),
                  "labels_sha256": {name: labels_sha256(v) for name, v in result.labels.items()}}
        json.dump(record, out, indent=2)
        out.write("\n")
    return 0 if result.identical else 1
