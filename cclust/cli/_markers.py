"""``cclust markers``: which features set each cluster apart (:func:`cclust.markers` from a shell)."""
import csv
import math
import os
import sys

import numpy as np

from cclust.cli._messages import UserError, _note, plural

#: Features per cluster printed when --top is not given.
DEFAULT_TOP = 5

#: What each method's score is, for the header of the printed table.
_SCORE = {"wilcoxon": "the z-statistic of the Wilcoxon rank-sum test with tie correction (Mann & Whitney 1947)",
          "t-test": "the t statistic of Welch's (1947) t-test"}

_OUT_SUFFIXES = (".csv", ".tsv")


def _p_text(p):
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    if p == 0.0:
        return "< 1e-300"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def _first_of_each_cluster(clusters, top):
    """Row indices of the first ``top`` rows of each cluster (every row when ``top`` is None)."""
    counts, keep = {}, []
    for i, c in enumerate(clusters):
        counts[c] = counts.get(c, 0) + 1
        if top is None or counts[c] <= top:
            keep.append(i)
    return keep


def _check_files(args):
    """The options that name files, refused before the work: -o and --plot extensions and
    folders, and an output that names an input."""
    from cclust.cli._commands import _check_outputs, _same_file

    if args.out is not None and os.path.splitext(args.out)[1].lower() not in _OUT_SUFFIXES:
        raise UserError(f"-o {args.out}: the table is written as .csv or .tsv (the extension names the format); "
                        f"got {os.path.splitext(args.out)[1] or 'no extension'!r}.")
    _check_outputs(args)
    for option, path in (("-o", args.out), ("--plot", args.plot)):
        if path and args.labels and os.path.exists(args.labels) and _same_file(path, args.labels):
            raise UserError(f"{option} {path} is the --labels file: writing it would destroy the labels; give "
                            f"{option} another file name.")


def _cluster_labels(args, data):
    """The clusters of DATA's objects: from --labels FILE, from --labels-column (the values of
    that column), or DATA's own classes; and a phrase saying where they came from."""
    from cclust.cli._readers import load_labels

    n = data.X.shape[0]
    if args.labels is not None:
        return load_labels(args.labels, n, data.description), f"--labels {args.labels}"
    if data.y is None:
        raise UserError("markers need the clusters of DATA's objects: give --labels FILE (one label per object, e.g. "
                        "written by `cclust run DATA -o labels.csv`) or --labels-column NAME (a column of DATA, or "
                        "an obs column of an .h5ad file).")
    if data.classes is not None:
        labels = np.asarray(data.classes, dtype=object)[data.y]
    else:
        labels = data.y
    where = f"--labels-column {args.labels_column}" if args.labels_column is not None else "DATA's own classes"
    return labels, where


def markers(args, out=None):
    """``cclust markers``: rank every feature in every cluster against the other objects."""
    import cclust
    from cclust.cli._commands import _read_data
    from cclust.cli._report import _plotting, _replacing, _save_figure, format_table
    from cclust.errors import ValidationError

    out = sys.stdout if out is None else out
    if args.labels is not None and args.labels_column is not None:
        raise UserError("--labels FILE and --labels-column NAME both give the clusters; give one of them.")
    _check_files(args)
    data = _read_data(args)
    notices = []
    for text in data.notes:
        _note(text, notices)
    labels, where = _cluster_labels(args, data)
    values, sizes = np.unique(np.asarray(labels).astype(str), return_counts=True)
    if values.shape[0] < 2:
        raise UserError(f"the labels ({where}) put all {data.X.shape[0]} objects in one cluster, {values[0]!r}; "
                        "markers compare each cluster with the other objects, so at least two clusters are needed.")
    if args.method == "t-test" and sizes.min() < 2:
        small = values[int(np.argmin(sizes))]
        raise UserError(f"cluster {small!r} ({where}) has 1 object; Welch's t-test needs at least two in each "
                        "cluster: use --method wilcoxon, or merge the small clusters.")
    try:
        names = data.feature_names or [f"column {j}" for j in range(data.X.shape[1])]
        table = cclust.markers(data.X, labels, method=args.method, feature_names=names, as_frame=False)
    except ValidationError as exc:
        raise UserError(str(exc)) from None
    top = DEFAULT_TOP if args.top is None else args.top
    clusters = list(dict.fromkeys(table["cluster"]))
    rows = [[str(table["cluster"][i]), str(table["feature"][i]), f"{table['score'][i]:.2f}",
             f"{table['auroc'][i]:.3f}", _p_text(table["p_value"][i]), _p_text(table["p_value_adjusted"][i])]
            for i in _first_of_each_cluster(table["cluster"], top)]
    n, d = data.X.shape
    print(f"{data.description}: {plural(n, 'object')}, {plural(d, 'feature')}; "
          f"{plural(len(clusters), 'cluster')} from {where}", file=out)
    print(f"Each cluster against all the other objects. score: {_SCORE[args.method]}, > 0 when higher in the "
          "cluster; AUROC: how well the feature alone tells the cluster's objects from the rest (0.5: not at all, "
          "1: every member higher); adjusted p: by Benjamini & Hochberg (1995) over each cluster's features.", file=out)
    shown = min(top, d)
    print(f"The {shown} highest-scoring features of each cluster:" if shown > 1
          else "The highest-scoring feature of each cluster:", file=out)
    print(format_table(rows, ["cluster", "feature", "score", "AUROC", "p", "adjusted p"],
                       align=["<", "<", ">", ">", ">", ">"]), file=out)
    print("If the clusters were found in these same data, the p-values are optimistic (the clustering separated "
          "the objects on these features): read the list as a ranking.", file=out)
    if args.out is not None:
        keep = _first_of_each_cluster(table["cluster"], args.top)
        columns = list(table)
        try:
            with _replacing(args.out) as handle:
                writer = csv.writer(handle, delimiter="\t" if args.out.lower().endswith(".tsv") else ",",
                                    lineterminator="\n")
                writer.writerow(columns)
                writer.writerows([[table[name][i] for name in columns] for i in keep])
        except OSError as exc:
            raise UserError(f"-o {args.out}: cannot write it ({exc.strerror or exc}).") from None
        what = "every feature" if args.top is None else f"the {plural(args.top, 'best feature')}"
        print(f"wrote {what} of each cluster ({len(keep)} rows) to {args.out}", file=out)
    if args.plot is not None:
        plotting = _plotting()
        ax = plotting.plot_markers(table, n_top=min(3 if args.top is None else args.top, d))
        _save_figure(ax.figure, args.plot)
        print(f"wrote the dot plot of each cluster's best features to {args.plot}", file=out)
    return 0
