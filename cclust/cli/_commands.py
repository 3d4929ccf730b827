"""The sub-commands: ``run``, ``fuse``, ``evaluate``, ``methods``, ``select-k`` and ``show-config``."""
import csv
import dataclasses
import json
import os
import sys
import time

import numpy as np

from cclust.cli._jobs import Job, _distribute_params, _exclude, _resolve_methods, _run_jobs
from cclust.cli._messages import UserError, _note, _warn, plural
from cclust.cli._parameters import _accepts, _method_names, _parameter_names, parse_params
from cclust.cli._csv import _FEW
from cclust.cli._readers import load_data, read_ensemble
from cclust.cli._report import (
    _compare,
    _json_safe,
    _out_format,
    _plotting,
    _print_single,
    _save_figure,
    ensemble_format,
    format_table,
    provenance_counts,
    provenance_text,
    write_ensemble,
    plot_rows,
    write_h5ad,
    write_labels,
    write_labels_h5ad,
)
from cclust.utilities import KCC_UTILITIES


#: above this many objects a comparison of every method warns that some are O(n^2)
_LARGE = 2000

#: Feature standard deviations further apart than this draw a warning from run and select-k.
#: Measured (kmeans generator, 100 partitions, K = classes; KCC's ARI): on the 11 shared real
#: sets whose ratio is at most 8, z-scoring lowers ARI on 8 (iris 0.73 -> 0.68) and raises it by
#: at most 0.014 on 3; on the 9 from 46x up it raises ARI on 7 (dermatology 0.06 -> 0.87, wine
#: 0.37 -> 0.85) and lowers it on glass (475x) and optdigits (346x, near-constant border pixels).
_SCALE_RATIO = 20.0


def _check_k(k, n):
    if not 2 <= k <= n:
        raise UserError(f"-k must be between 2 and the number of objects ({n}), got {k}.")
    return k


def _generator_entries(text):
    """``--generator`` as [(name, count or None)]: one name, or several for a heterogeneous ensemble."""
    entries = []
    for item in (v.strip() for v in text.split(",")):
        if not item:
            continue
        name, colon, count = item.partition(":")
        if colon and not (count.strip().isdigit() and int(count) > 0):
            raise UserError(f"--generator {text}: a count after ':' must be a positive integer, got {item!r} "
                            "(e.g. --generator kmeans:50,hierarchical:25,gmm:25).")
        entries.append((name.strip(), int(count) if colon else None))
    if not entries:
        raise UserError("--generator needs a generator name (see `cclust methods --kind generator`).")
    if len({c is None for _, c in entries}) > 1:
        raise UserError(f"--generator {text}: give a count to every generator or to none.")
    return entries


def _generator_spec(args):
    """``--generator``/``--generator-param``/``--partitions`` checked: (generator name, its keyword
    arguments, number of partitions or None when the counts in ``--generator`` give it)."""
    import cclust

    entries = _generator_entries(args.generator)
    common, scoped = parse_params(args.generator_param, "--generator-param")
    partitions = args.partitions
    if len(entries) == 1 and entries[0][1] is None:
        name = entries[0][0]
        gen = cclust.get(name, kind="generator")
        if scoped:
            raise UserError("--generator-param takes KEY=VALUE (there is only one generator).")
        for key in common:
            if not _accepts(gen, key):
                raise UserError(
                    f"--generator-param {key}=...: the generator {name!r} has no parameter {key!r}; its "
                    f"parameters are {', '.join(_parameter_names(gen))}."
                )
        kwargs = dict(common)
    else:
        # several generators (or one with a count): a heterogeneous ensemble, G:KEY=VALUE per generator
        name, gen = "heterogeneous", cclust.get("heterogeneous", kind="generator")
        names = [n for n, _ in entries]
        if common:
            raise UserError(f"--generator {args.generator} names several generators: give their parameters as "
                            f"G:KEY=VALUE (e.g. --generator-param {names[0]}:{next(iter(common))}=...).")
        for scope, params in scoped.items():
            if scope not in names:
                raise UserError(f"--generator-param {scope}:...: {scope!r} is not one of the generators "
                                f"({', '.join(names)}).")
            fn = cclust.get(scope, kind="generator")
            for key in params:
                if not _accepts(fn, key):
                    raise UserError(f"--generator-param {scope}:{key}=...: the generator {scope!r} has no parameter "
                                    f"{key!r}; its parameters are {', '.join(_parameter_names(fn))}.")
        kwargs = {"generators": [(n, c, scoped.get(n, {})) for n, c in entries]}
        if entries[0][1] is not None:
            if args.partitions_given:
                raise UserError(f"--partitions {args.partitions} and the counts in --generator {args.generator} "
                                "both set the number of partitions; give one of them.")
            partitions = None
    return name, gen, kwargs, partitions


def _generator_call(args, X, k, ids=None):
    name, gen, kwargs, partitions = _generator_spec(args)
    kwargs.update(n_partitions=partitions, random_state=args.seed, n_jobs=args.jobs)
    if args.verbose and _accepts(gen, "verbose"):
        kwargs["verbose"] = args.verbose
    start = time.perf_counter()
    ensemble = gen(X, k, **kwargs)
    took = time.perf_counter() - start
    kis = ensemble.n_clusters
    made_by = provenance_text(ensemble)
    if name == "heterogeneous":
        what = f"{plural(ensemble.n_partitions, 'partition')} ({made_by})"
    else:
        what = plural(ensemble.n_partitions, f"{name} partition")
        if made_by and set(ensemble.provenance) != {name}:
            what += f" ({made_by})"
    text = f"{what} (K_i {kis.min()}..{kis.max()}), seed {args.seed}, {took:.3f} s"
    if getattr(args, "save_ensemble", None):
        provenance = ensemble.provenance or (name,) * ensemble.n_partitions
        write_ensemble(args.save_ensemble, ensemble, provenance, ids)
    return ensemble, text


def _makes_own_partitions(job, args):
    """Whether the one method run makes its own partitions of DATA (usenc): then nothing is generated
    for it, and the options of generation are refused rather than ignored."""
    from cclust.base import method_info

    if job.fn is None or not method_info(job.fn).generates_ensemble:
        return False
    given = [option for option, used in (("--generator", args.generator != "kmeans"),
                                         ("--generator-param", bool(args.generator_param)),
                                         ("--partitions", args.partitions_given),
                                         ("--save-ensemble", bool(args.save_ensemble)),
                                         ("--plot", bool(args.plot))) if used]
    if given:
        count = " (set its number of partitions with --method-param n_partitions=M)" if "--partitions" in given else ""
        raise UserError(f"{job.method} makes its own partitions of DATA and returns none of them, so "
                        f"{', '.join(given)} would not be used: drop {'it' if len(given) == 1 else 'them'}{count}.")
    return True


def _pick_k(args, data):
    if args.k is not None:
        return _check_k(args.k, data.X.shape[0])
    if data.y is None:
        raise UserError("give the number of clusters with -k (DATA has no true labels to take it from).")
    return _check_k(len(np.unique(data.y)), data.X.shape[0])


def _standardize(X):
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def scale_warning(X: np.ndarray, ratio: float = _SCALE_RATIO) -> str:
    """A sentence when the features' standard deviations differ by more than ``ratio``, else "".

    The generators (k-means on all, some or projected features) and the methods that read X
    measure Euclidean distances, so a feature with a large spread decides them alone. Constant
    features are left out.

    Examples
    --------
    >>> scale_warning(np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 4.0]]))
    ''
    >>> scale_warning(np.array([[0.0, 100.0], [1.0, 900.0], [2.0, 400.0]]))[:47]
    'the features differ in scale by a factor of 404'
    """
    std = np.asarray(X, dtype=np.float64).std(axis=0)
    varying = np.flatnonzero(std > 0)
    if varying.size < 2:
        return ""
    wide, narrow = varying[np.argmax(std[varying])], varying[np.argmin(std[varying])]
    factor = std[wide] / std[narrow]
    if factor <= ratio:
        return ""
    return (f"the features differ in scale by a factor of {factor:.3g} (standard deviation {std[wide]:.3g} of "
            f"feature {wide} against {std[narrow]:.3g} of feature {narrow}, 0-based), so the widest features "
            "decide the distances the partitions are built on; if every feature should count alike, pass "
            "--standardize.")


def _read_data(args):
    """DATA as the reading options of ``args`` say (see ``_add_data_options``)."""
    return load_data(args.data, args.labels_column, args.header, args.missing_features, na_values=args.na_values,
                     decimal=args.decimal, thousands=args.thousands, index_column=args.index_column,
                     id_column=args.id_column, samples_in_columns=args.samples_in_columns, force=args.force,
                     layer=args.layer, use_rep=args.use_rep)


def _data_notes(data, notices):
    """What the reader decided (each with the option that undoes it) and what it filled in."""
    for text in data.notes:
        _note(text, notices)


def _load_features(args):
    """DATA read, z-scored if asked, and the scale warning given: (data, X, notices). The reader's
    notes are the caller's to give (``_data_notes``) once the arguments are checked, so that a
    user error stays one line."""
    data = _read_data(args)
    X = _standardize(data.X) if args.standardize else data.X
    notices = []
    if not args.standardize and (text := scale_warning(X)):
        _warn(text, notices)
    return data, X, notices


def _read_weights(path, option):
    """A vector of numbers from ``path``: an .npy array, or text with one number per line."""
    if path is None:
        return None
    try:
        if path.endswith(".npy"):
            values = np.load(path, allow_pickle=False)
        else:
            with open(path, encoding="utf-8") as handle:
                lines = [line.strip() for line in handle]
            values = np.array([float(line) for line in lines if line], dtype=np.float64)
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot read it ({exc.strerror or exc}).") from None
    except ValueError as exc:
        raise UserError(f"{option} {path}: expected one number per line ({exc}).") from None
    return values


def _select_k_figures(plot):
    """The figures ``select-k --plot FILE`` writes: FILE, FILE-heatmap, FILE-tracking and
    FILE-clusters (same extension)."""
    stem, dot, ext = plot.rpartition(".")
    stem, ext = (stem, "." + ext) if dot else (plot, "")
    return [plot, f"{stem}-heatmap{ext}", f"{stem}-tracking{ext}", f"{stem}-clusters{ext}"]


def _output_paths(args):
    """[(option, path)] of every file the command will write."""
    outputs = [("--out", getattr(args, "out", None)), ("--save-ensemble", getattr(args, "save_ensemble", None))]
    plot = getattr(args, "plot", None)
    if plot and getattr(args, "command", None) == "select-k":
        outputs += [("--plot", path) for path in _select_k_figures(plot)]
    else:
        outputs.append(("--plot", plot))
    return [(option, path) for option, path in outputs if path]


def _input_paths(args):
    """[(argument, path)] of every file the command reads (a bundled dataset's name is no file)."""
    from cclust import datasets

    data = getattr(args, "data", None)
    inputs = [("DATA", data if data not in datasets.names() else None),
              ("ENSEMBLE" if getattr(args, "command", None) == "fuse" else "--ensemble", getattr(args, "ensemble", None)),
              ("--item-weights", getattr(args, "item_weights", None)),
              ("--feature-weights", getattr(args, "feature_weights", None))]
    return [(name, path) for name, path in inputs if path and os.path.exists(path)]


def _same_file(a, b):
    """Whether paths ``a`` and ``b`` name one file: the same name once normalised and symbolic links
    followed, or (both existing) the same file on disk, which also catches hard links."""
    if os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b)):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return False


def _check_clashes(args):
    """Refuse an output that would overwrite an input, or two outputs on one file, before any work."""
    outputs, inputs = _output_paths(args), _input_paths(args)
    for option, path in outputs:
        for name, source in inputs:
            if _same_file(path, source):
                same = "is" if os.path.abspath(path) == os.path.abspath(source) else f"is the same file as {source}, which is"
                raise UserError(f"{option} {path} {same} the input {name}: writing it would destroy the input; "
                                f"give {option} another file name.")
    for i, (option, path) in enumerate(outputs):
        for other, other_path in outputs[:i]:
            if _same_file(path, other_path):
                raise UserError(f"{option} {path} and {other} {other_path} name the same file, so one output would "
                                f"overwrite the other; give them different file names.")


def _check_outputs(args):
    """Refuse unwritable --out/--plot paths, and outputs that clash with an input or with each other,
    before the work, not after it."""
    _check_clashes(args)
    for option, path in _output_paths(args):
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UserError(f"{option} {path}: the folder {folder} does not exist.")
        if os.path.isdir(path):
            raise UserError(f"{option} {path}: is a directory; give a file name.")
    if getattr(args, "out", None):
        if _out_format(args.out) == ".h5ad" and not str(getattr(args, "data", "") or "").lower().endswith(".h5ad"):
            raise UserError(f"--out {args.out}: an .h5ad output is a copy of .h5ad DATA with the labels added; "
                            "this DATA is not an .h5ad file, so write .csv, .tsv, .json or .npy.")
    if getattr(args, "save_ensemble", None):
        ensemble_format(args.save_ensemble)
    if getattr(args, "plot", None):
        _plotting()  # matplotlib missing: say so before the work
        from matplotlib.backend_bases import FigureCanvasBase

        suffix = os.path.splitext(args.plot)[1].lower().lstrip(".")
        formats = sorted(FigureCanvasBase.get_supported_filetypes())
        if suffix not in formats:
            raise UserError(f"--plot {args.plot}: the extension must name an image format ({', '.join(formats)}), "
                            f"got {suffix or 'none'!r}.")


def _ids_note(path, ids):
    if ids is not None and path.lower().endswith(".npy"):
        _note(f"--out {path}: an .npy file holds the labels only, in the order of the data rows; write .csv, .tsv "
              "or .json to keep the row IDs beside them.")


def _anndata_params(args, k):
    """The settings of a run that ``--out FILE.h5ad`` records in ``uns`` beside each method's own."""
    return {"data": args.data, "n_clusters": k, "generator": getattr(args, "generator", None),
            "partitions": getattr(args, "partitions", None), "seed": args.seed, "layer": args.layer,
            "use_rep": args.use_rep}


def _write_outputs(args, rows, ensemble, y, out, ids=None, adata=None, k=None):
    if args.out and args.out.lower().endswith(".h5ad"):
        write_labels_h5ad(args.out, rows, adata, ensemble, _anndata_params(args, k))
        if args.format == "table":
            print(f"labels written to {args.out} (a copy of {args.data} with obs and uns entries "
                  f"'{'cclust' if len([r for r in rows if r['result'] is not None]) == 1 else 'cclust_<method>'}')",
                  file=out)
    elif args.out:
        write_labels(args.out, rows, ids=ids)
        _ids_note(args.out, ids)
        if args.format == "table":
            print(f"labels written to {args.out}", file=out)
    if args.plot:
        _, what = plot_rows(args.plot, rows, ensemble, y)
        if args.format == "table":
            print(f"figure written to {args.plot} ({what})", file=out)


def run(args, out=None):
    """``cclust run``: generate an ensemble of DATA and fuse it with one or more methods."""
    out = sys.stdout if out is None else out
    _check_clashes(args)
    data = _read_data(args)
    X = _standardize(data.X) if args.standardize else data.X
    k = _pick_k(args, data)
    notices = []
    common, scoped = parse_params(args.method_param, "--method-param")
    names = _method_names(args.method)
    if args.utilities:
        if names and names != ["kcc"]:
            raise UserError("--utilities compares KCC utilities; do not combine it with --method other than kcc.")
        if "utility" in common or "p" in common:
            raise UserError("--utilities sets utility and p itself; drop them from --method-param.")
        import cclust

        fn = cclust.get("kcc", kind="consensus")
        jobs = [Job(f"kcc {label}", "kcc", {"utility": u, "p": p}, fn=fn) for label, u, p in KCC_UTILITIES]
    else:
        jobs = _exclude(_resolve_methods(names), args.exclude)
        if not names and data.X.shape[0] > _LARGE and args.format == "table":
            print(f"cclust: note: comparing every method on {data.X.shape[0]} objects; those working on the "
                  "n x n co-association can take minutes: choose with --method or leave out with --exclude.",
                  file=sys.stderr)
    _distribute_params(jobs, common, scoped, "--method-param")
    own = len(jobs) == 1 and _makes_own_partitions(jobs[0], args)
    _check_outputs(args)
    _data_notes(data, notices)
    if not args.standardize and (text := scale_warning(X)):
        _warn(text, notices)
    if own:
        ensemble, ens_text = None, f"none generated: {jobs[0].method} makes its own partitions of DATA"
    else:
        ensemble, ens_text = _generator_call(args, X, k, data.ids)
    if args.save_ensemble and args.format == "table":
        notices_text = f"; written to {args.save_ensemble}"
    else:
        notices_text = ""
    context = {"data": data.summary(), "ensemble": ens_text + notices_text, "n_clusters": k, "warnings": notices,
               "summary": f"{data.summary()}\nensemble: {ens_text}{notices_text}; consensus K = {k}"}
    if data.filled:
        context["missing_filled"] = data.filled
    if ensemble is not None and ensemble.provenance is not None:
        context["provenance"] = provenance_counts(ensemble)
    if len(jobs) == 1:
        rows = _run_jobs(jobs, ensemble, k, X, data.y, args, strict=True)
        _print_single(rows[0], data.y, args.format, context, out, ensemble)
    else:
        rows = _compare(jobs, ensemble, k, X, data.y, args, context, out)
    _write_outputs(args, rows, ensemble, data.y, out, ids=data.ids, adata=data.adata, k=k)
    return 0


def fuse(args, out=None):
    """``cclust fuse``: fuse an ensemble read from a file."""
    from cclust.base import method_info

    from cclust.soft import is_soft_ensemble

    out = sys.stdout if out is None else out
    _check_clashes(args)
    read = read_ensemble(args.ensemble, args.header, args.missing, na_values=args.na_values,
                         index_column=args.index_column, id_column=args.id_column)
    fused, what = read.ensemble, read.description
    # soft partitions (membership matrices) go to the methods as they are; what is printed and
    # scored reads each object's most likely cluster
    ensemble = fused.harden() if is_soft_ensemble(fused) else fused
    jobs = _exclude(_resolve_methods(_method_names(args.method) or ["kcc"]), args.exclude)
    if is_soft_ensemble(fused) and not fused.is_hard:
        hard_only = [j.method for j in jobs if j.fn is not None and not method_info(j.fn).accepts_soft]
        if hard_only:
            raise UserError(f"{what} holds soft partitions, which {', '.join(hard_only)} cannot fuse; use a method "
                            "that accepts them (eac, cspa, hbgf, mcla, se, he, dwh, gv1, gv3, sm, hm, "
                            "symdiff-median).")
    common, scoped = parse_params(args.method_param, "--method-param")
    _distribute_params(jobs, common, scoped, "--method-param")
    n = ensemble.n_samples
    if args.k is None:
        needs_k = [j.method for j in jobs if not method_info(j.fn).chooses_n_clusters]
        if needs_k:
            raise UserError(f"give the number of clusters with -k ({', '.join(needs_k)} cannot choose it).")
        k = None
    else:
        k = _check_k(args.k, n)
    _check_outputs(args)
    kis = ensemble.n_clusters
    missing = int((ensemble.labels < 0).sum())
    made_by = provenance_text(ensemble, repeated_only=True)
    ens_text = (f"{plural(ensemble.n_partitions, 'partition')}{f' ({made_by})' if made_by else ''} "
                f"(K_i {kis.min()}..{kis.max()}), {plural(missing, 'missing label')}")
    unlabelled = np.flatnonzero((ensemble.labels < 0).all(axis=1)) + 1
    if unlabelled.size:
        # such an object keeps its row (and its line in --out); its consensus label is a guess
        rows_text = ", ".join(map(str, unlabelled[:10])) + (", ..." if unlabelled.size > 10 else "")
        ens_text += (f"; {plural(unlabelled.size, 'object')} in no partition "
                     f"(data {'row' if unlabelled.size == 1 else 'rows'} {rows_text})")
    shown_k = k if k is not None else "chosen by each method"
    notices = []
    for text in read.notes:
        _note(text, notices)
    singletons = np.flatnonzero(kis == n) if n > _FEW else []
    if len(singletons):
        names = ensemble.provenance
        which = ", ".join(f"{names[j]!r} (column {j})" if names else f"column {j}" for j in singletons[:5])
        _warn(f"{plural(len(singletons), 'partition')} of {what} put{'s' if len(singletons) == 1 else ''} each of the "
              f"{n} objects in a cluster of its own: {which}{', ...' if len(singletons) > 5 else ''}. Such a "
              "partition is no grouping; is this a row-ID or index column (--id-column), or a file of features "
              "(cluster those with `cclust run DATA`)?", notices)
    if kis.max() <= 1:
        _warn(f"every partition in {what} puts all objects in one cluster, so they give no reason to split the "
              f"objects: the consensus clusters below are arbitrary, and the agreement score says nothing. Check "
              f"that each column of the file is a partition (--header, --missing).", notices)
    context = {"data": f"{what}: {plural(n, 'object')}", "ensemble": ens_text, "n_clusters": k, "warnings": notices,
               "summary": f"{what}: {plural(n, 'object')}, {ens_text}; consensus K = {shown_k}"}
    if ensemble.provenance is not None:
        context["provenance"] = provenance_counts(ensemble)
    if len(jobs) == 1:
        rows = _run_jobs(jobs, fused, k, None, None, args, strict=True)
        _print_single(rows[0], None, args.format, context, out, ensemble)
    else:
        rows = _compare(jobs, fused, k, None, None, args, context, out)
    _write_outputs(args, rows, ensemble, None, out, ids=read.ids)
    return 0


def evaluate(args, out=None):
    """``cclust evaluate``: rank the algorithms of a heterogeneous ensemble, then trim/reweigh/fuse it.

    With several K (``-k 3,4,5``) each K gets its own generated ensemble (one --ensemble FILE is
    fused at every K instead) and :func:`cclust.evaluation.evaluate` runs in its multi-K mode.
    """
    import cclust
    from cclust import evaluation as ev

    out = sys.stdout if out is None else out
    _check_clashes(args)
    data, X, notices = _load_features(args)
    if args.k is not None:
        ks = [_check_k(k, X.shape[0]) for k in args.k]
    else:
        ks = [_pick_k(args, data)]
    if args.k_method is not None and (len(ks) < 2 or (args.k_method != "all" and args.k_method not in ks)):
        raise UserError(f"--k-method chooses among the K given with -k ({','.join(map(str, ks))}); give -k with "
                        "several K, and --k-method as one of them or 'all'.")
    args.method = cclust.registry.canonical_name(args.method)  # --method KCC is kcc
    args.fuse = cclust.registry.canonical_name(args.fuse) if args.fuse else args.fuse
    cclust.get(args.method, kind="consensus")  # an unknown name fails before any work
    fuse_fn = cclust.get(args.fuse, kind="consensus") if args.fuse else None
    _check_outputs(args)
    if args.ensemble:
        read = read_ensemble(args.ensemble)
        ensemble, what = read.ensemble, read.description
        if ensemble.n_samples != X.shape[0]:
            raise UserError(f"--ensemble {args.ensemble} has {ensemble.n_samples} rows, DATA {X.shape[0]} objects; "
                            "they must describe the same objects.")
        ens_text = f"{plural(ensemble.n_partitions, 'partition')} from {what}"
        _data_notes(data, notices)
        for text in read.notes:
            _note(text, notices)
    else:
        _data_notes(data, notices)
        save, args.save_ensemble = args.save_ensemble, None  # written below, after trimming
        made = {k: _generator_call(args, X, k) for k in ks}
        args.save_ensemble = save
        ensemble = {k: e for k, (e, _) in made.items()} if len(ks) > 1 else made[ks[0]][0]
        ens_text = "; ".join(f"K = {k}: {text}" for k, (_, text) in made.items()) if len(ks) > 1 else made[ks[0]][1]
    result = ev.evaluate(X, ensemble, ks if len(ks) > 1 else ks[0], labels_true=data.y, method=args.method,
                         matrix=args.matrix, k_method=args.k_method, random_state=args.seed, n_jobs=args.jobs)
    multi = isinstance(result, ev.MultiKEvaluation)
    kept = ev.trim(ensemble, result, args.trim) if args.trim is not None else ensemble
    if args.reweigh:
        kept = ev.reweigh(kept, result)
    if isinstance(kept, dict):  # several K, nothing trimmed or reweighed: the chosen K's partitions
        kept = ev.trim(kept, result, max(len(result.algorithms), 1))
    k_fuse = (result.chosen_k[0] if len(result.chosen_k) == 1 else result.best_k) if multi else ks[0]
    provenance = kept.provenance or ("ensemble",) * kept.n_partitions
    algorithms = list(dict.fromkeys(provenance))
    weight = {a: float(np.asarray(kept.weights)[[p == a for p in provenance]].sum()) for a in algorithms}
    fused = None
    if fuse_fn is not None:
        fused = cclust.consensus(args.fuse, kept, k_fuse, random_state=args.seed)
    if args.save_ensemble:
        write_ensemble(args.save_ensemble, kept, provenance, data.ids)
    if args.plot:
        _save_figure(_plotting().plot_evaluation(result).figure, args.plot)
    table = result.as_table()
    if multi:
        several = len(result.chosen_k) > 1
        names = [f"{a} k={k}" if several else a for a, k in zip(table["algorithm"], table["k"])]
        table["kept"] = [c and name in weight for c, name in zip(table["chosen"], names)]
        table["weight"] = [weight.get(name, 0.0) if c else 0.0 for c, name in zip(table["chosen"], names)]
    else:
        table["kept"] = [a in algorithms for a in table["algorithm"]]
        table["weight"] = [weight.get(a, 0.0) for a in table["algorithm"]]
    if args.format == "json":
        record = {"data": data.summary(), "ensemble": ens_text, "n_clusters": ks if multi else ks[0],
                  "method": args.method, "ranked_indices": list(result.ranked_indices),
                  "order": [list(c) for c in result.order] if multi else list(result.order),
                  "algorithms": [dict(zip(table, values)) for values in zip(*table.values())],
                  "warnings": notices}
        if data.filled:
            record["missing_filled"] = data.filled
        if multi:
            record.update(best_k=result.best_k, chosen_k=list(result.chosen_k), k_rule=result.k_rule)
        if fused is not None:
            record["fused"] = {"method": args.fuse, "n_clusters": k_fuse, "labels": fused.labels.tolist()}
            if data.ids is not None:
                record["fused"]["ids"] = data.ids
            if data.y is not None:
                record["fused"]["ari"] = cclust.metrics.ari(data.y, fused.labels)
        json.dump(_json_safe(record), out, indent=2)
        out.write("\n")
    elif args.format == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(list(table))
        for values in zip(*table.values()):
            writer.writerow(values)
    else:
        print(data.summary(), file=out)
        print(f"ensemble: {ens_text}", file=out)
        print(result.summary(), file=out)
        if args.trim is not None or args.reweigh:
            print("kept: " + ", ".join(f"{a} (weight {weight[a]:.3f})" for a in algorithms), file=out)
        if fused is not None:
            score = f", ARI {cclust.metrics.ari(data.y, fused.labels):.4f}" if data.y is not None else ""
            print(f"fused by {args.fuse}: K = {fused.n_clusters}{score}", file=out)
        if args.save_ensemble:
            print(f"partitions written to {args.save_ensemble}", file=out)
        if args.plot:
            print(f"figure written to {args.plot}", file=out)
    return 0


def methods(args, out=None):
    """``cclust methods``: the registry as a table."""
    import cclust
    from cclust.registry import BUILTIN_PROVIDER, KNOWN_PLUGINS, install_hint

    out = sys.stdout if out is None else out
    kind = None if args.kind == "all" else args.kind
    rows = sorted(cclust.available(kind=kind).values(), key=lambda r: (r.kind, r.name))
    if args.format == "json":
        json.dump([{"name": r.name, "kind": r.kind, "provider": r.provider, "description": r.description}
                   for r in rows], out, indent=2)
        out.write("\n")
        return 0
    if args.format == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["name", "kind", "provider", "description"])
        writer.writerows([[r.name, r.kind, r.provider, r.description] for r in rows])
        return 0
    body = [[r.name, r.kind, r.provider, r.description] for r in rows]
    print(format_table(body, ["name", "kind", "provider", "description"], align=["<", "<", "<", "<"]), file=out)
    if kind in (None, "consensus"):
        for name, (_, why) in KNOWN_PLUGINS.items():
            if name not in cclust.available():
                print(f"not installed: {name} ({why}): {install_hint(name)}", file=out)
    for name, rows in sorted(cclust.registry.claims().items()):
        if kind is not None and rows[0].kind != kind:
            continue
        providers = " and ".join(row.provider for row in rows)
        if rows[0].provider == BUILTIN_PROVIDER:
            what = (f"the built-in is used ({rows[0].kind}); a plugin cannot take a built-in's name, so rename the "
                    "plugin's entry point")
        else:
            what = "neither is used: uninstall all but one"
        print(f"claimed twice: {name} by {providers}; {what}.", file=out)
    return 0


def select_k(args, out=None):
    """``cclust select-k``: consensus CDF, delta area and PAC over a range of K."""
    import cclust
    from cclust.selection import resolve_null

    out = sys.stdout if out is None else out
    _check_clashes(args)
    data, X, notices = _load_features(args)
    low, high = args.k_range
    n = X.shape[0]
    null = None if args.null == "none" else args.null
    null = resolve_null(null, args.method, args.criterion)
    floor = 1 if null is not None or args.criterion == "gap" else 2
    if not floor <= low <= high <= n:
        raise UserError(f"--k-range must satisfy {floor} <= LOW <= HIGH <= the number of objects ({n}), got {low} {high}"
                        + (" (K = 1 needs a --null or --criterion gap)." if floor == 2 and low == 1 else "."))
    method_params, scoped = parse_params(args.method_param, "--method-param")
    if scoped:
        raise UserError("select-k runs one method: give its parameters as KEY=VALUE.")
    args.method = cclust.registry.canonical_name(args.method)  # --method KCC is kcc
    if args.method == "monti":
        if method_params:
            raise UserError("--method-param applies to a consensus method; the monti method takes --inner, "
                            "--resamples and --subsample.")
    else:
        job = Job(args.method, args.method, fn=cclust.get(args.method, kind="consensus"))
        _distribute_params([job], method_params, {}, "--method-param")
    generator, _, generator_params, partitions = _generator_spec(args)
    if partitions is None:  # counts in --generator G:R,...: their sum per subsample
        partitions = sum(count for _, count, _ in generator_params["generators"])
    _check_outputs(args)
    _data_notes(data, notices)
    try:
        select = cclust.select_k
    except ImportError as exc:
        raise UserError(f"select-k is not available in this installation of cclust ({exc}).") from None
    if args.distance != "euclidean" and (args.method != "monti" or args.inner != "hierarchical"):
        raise UserError(f"--distance {args.distance} is the distance of the hierarchical inner clusterer: add "
                        "--inner hierarchical (with --method monti); k-means is Euclidean only.")
    inner_params = {key: value for key, value in (("algorithm", args.kmeans_algorithm),
                                                  ("init", args.kmeans_init)) if value is not None}
    if inner_params and (args.method != "monti" or args.inner != "kmeans"):
        raise UserError("--kmeans-algorithm and --kmeans-init set the k-means of the monti method "
                        "(--method monti --inner kmeans); drop them or choose that method.")
    from cclust.selection._select_k import resolve_sketch

    sketch, _ = resolve_sketch(X, "auto" if args.sketch is None else args.sketch, args.sketches, args.method,
                                args.matrix, args.pair_tolerance)
    if sketch is None and args.propagation != "centroid":
        raise UserError(f"--propagation {args.propagation} labels the objects outside a sketch, and none is drawn "
                        "(sketches are drawn by default above 20000 objects): give --sketch S (the objects to run "
                        "on) too, or drop --propagation.")
    if sketch is None and args.sketches is not None and args.sketches != 1:
        raise UserError(f"--sketches {args.sketches} compares sketches of the data, and none is drawn (sketches are "
                        "drawn by default above 20000 objects): give --sketch S (the objects per sketch) too, or "
                        "drop --sketches.")
    result = select(X, range(low, high + 1), method=args.method, inner=args.inner,
                    inner_params=inner_params or None, generator=generator,
                    n_partitions=partitions, n_resamples=args.resamples, subsample=args.subsample,
                    feature_subsample=args.feature_subsample,
                    item_weights=_read_weights(args.item_weights, "--item-weights"),
                    feature_weights=_read_weights(args.feature_weights, "--feature-weights"),
                    method_params=method_params or None, generator_params=generator_params or None,
                    criterion=args.criterion, matrix=args.matrix, pair_tolerance=args.pair_tolerance,
                    sketch="auto" if args.sketch is None else args.sketch, sketch_method=args.sketch_method,
                    n_sketches=args.sketches, propagation=args.propagation, null=null,
                    n_references=args.references,
                    distance=args.distance, inner_linkage=args.inner_linkage, final_linkage=args.final_linkage,
                    alpha=args.alpha, gap_rule=args.gap_rule, random_state=args.seed, n_jobs=args.jobs,
                    verbose=args.verbose, keep_matrices=bool(args.plot))
    for text in result.warnings:
        _warn(f"--k-range {low} {high}: {text}")
    if args.format == "json":
        record = result.to_dict()
        record.pop("consensus_matrices", None)
        record.pop("labels", None)
        if not result.has_objective:  # monti: no criterion, so no column of nulls
            record.pop("objective", None)
            record.pop("objective_name", None)
        # item consensus per object and K, as rows k, cluster, item, item_consensus (CCP's calcICL table)
        record.pop("item_consensus", None)
        record.pop("sketch_item_consensus", None)   # the rows below hold it
        record.pop("cluster_stability", None)
        # per cluster and K: size, cluster consensus, and its stability (Hennig 2007), one row each
        record["cluster_consensus"] = []
        for k in result.cluster_consensus:
            table = result.cluster_table(k)
            record["cluster_consensus"] += [{column: table[column][c] for column in table}
                                            for c in range(len(table["cluster"]))]
        ids = data.ids
        record["item_consensus"] = [
            {"k": k, "item": i, **({"id": ids[i]} if ids is not None else {}), "cluster": c, "item_consensus": float(v)}
            for k, table in result.item_consensus.items() for i, row in enumerate(table.tolist())
            for c, v in enumerate(row)]
        record["labels"] = {int(k): v.tolist() for k, v in result.labels.items()}
        if ids is not None:
            record["ids"] = ids
        if data.filled:
            record["missing_filled"] = data.filled
        record["warnings"] = notices + list(result.warnings)
        json.dump(_json_safe({"data": data.summary(), **record}), out, indent=2)
        out.write("\n")
    elif args.format == "csv":
        table = result.as_table()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(list(table) + ["best"])
        for i, k in enumerate(table["k"]):
            writer.writerow([table[c][i] for c in table] + [k == result.best_k])
    else:
        print(data.summary(), file=out)
        # the warnings went to standard error above; not twice on a terminal
        print(dataclasses.replace(result, warnings=()).summary(), file=out)
        if data.y is not None:
            print(f"(the data's true labels have {plural(len(np.unique(data.y)), 'class')})", file=out)
    if args.out and args.out.lower().endswith(".h5ad"):
        from cclust.interop import _anndata

        target = data.adata.copy()
        _anndata.write_select_k(target, "cclust", result, {
            "data": args.data, "subsample": args.subsample, "feature_subsample": args.feature_subsample,
            "seed": args.seed, "layer": args.layer, "use_rep": args.use_rep, "method_params": method_params,
            "generator": generator, "n_partitions": partitions})
        write_h5ad(args.out, target)
        if args.format == "table":
            print(f"labels at K = {result.best_k} written to {args.out} (a copy of {args.data} with "
                  f"obs['cclust_k{result.best_k}'] and uns['cclust_select_k'])", file=out)
    elif args.out:
        labels = result.labels[result.best_k]
        row = {"method": f"{args.method} K={result.best_k}", "result": cclust.ConsensusResult.from_labels(labels)}
        write_labels(args.out, [row], ids=data.ids)
        _ids_note(args.out, data.ids)
        if args.format == "table":
            print(f"labels at K = {result.best_k} written to {args.out}", file=out)
    if args.plot:
        plotting = _plotting()
        _, heatmap, tracking, clusters = _select_k_figures(args.plot)
        # K = 1 has no consensus matrix: the heatmap then shows the smallest K tried, and says so
        heat_k = result.best_k if result.best_k != 1 else int(result.k_values[0])
        extra = {heatmap: plotting.plot_consensus_heatmap(result, k=heat_k),
                 tracking: plotting.plot_tracking(result).figure,
                 clusters: plotting.plot_cluster_stability(result, k=heat_k).figure}
        _save_figure(plotting.plot_select_k(result), args.plot)
        for path, figure in extra.items():
            _save_figure(figure, path)
        if args.format == "table":
            print(f"figures written to {args.plot}, {', '.join(extra)}"
                  + (f" (the heatmap and the clusters show K = {heat_k}: K = 1 has no consensus matrix)"
                     if heat_k != result.best_k
                     else ""), file=out)
    return 0


def show_config(args, out=None):
    """``cclust show-config``: what ``cclust.show_config()`` prints (versions, threads, extras, plugins)."""
    import cclust

    cclust.show_config(file=sys.stdout if out is None else out)
    return 0
