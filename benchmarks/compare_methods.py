"""Quality of every registered consensus function, side by side (ARI and NMI against the classes).

Two suites, each method called with its default parameters:

* ``--suite real`` (default): the ten shared real data sets of ``DEFAULT_DATASETS`` (features
  standardised as in Ren et al. 2017, sec. 4.3), one ensemble of r k-means partitions per
  seed with K_i uniform in [2, 2K] (Wu et al. 2015), K = the number of classes.
* ``--suite easy``: well-separated Gaussian blobs (``cclust.testing.easy_blobs``), balanced and
  with one cluster several times larger than the others, ensembles from the ``kmeans``
  generator with its default K_i range ([K, sqrt(n)]) -- the data of the conformance kit's
  ``check_consensus_recovers_easy_structure``. Names read ``blobs-<n>-k<K>[-x<ratio>]``.

Every consensus function registered when the script runs is used
(``cclust.available(kind="consensus")``, plugins included); methods that need the features get
``X``. A function that raises ``MemoryBudgetError`` (or any other error) gets a note instead of
a score; names registered to the same target (``hac`` = ``eac``) are run once; the methods of
``SKIP_LARGE`` are not run above their size limit (stated in the report). Cells are
mean ± standard deviation over the seeds. ``--json`` keeps every score, and ``--compare
BEFORE.json AFTER.json`` prints a before/after table of the ARI from two such files.

Usage::

    python benchmarks/compare_methods.py --json /tmp/real.json --output /tmp/real.md
    python benchmarks/compare_methods.py --suite easy --json /tmp/easy.json --output /tmp/easy.md
    python benchmarks/compare_methods.py --datasets iris wine --seeds 3 --methods kcc ivc eac
    python benchmarks/compare_methods.py --compare /tmp/before.json /tmp/after.json
    python benchmarks/compare_methods.py --figure-1      # what each method returns on Figure 1 of Nguyen & Caruana (2007)
"""
import argparse
import json
import os
import re
import platform
import sys
import time
import traceback
import warnings

import numpy as np

import cclust
from cclust.errors import MemoryBudgetError
from cclust.registry import method_info
from _common import write_report

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")
DEFAULT_DATASETS = ["iris", "wine", "wdbc", "glass", "ecoli", "dermatology", "yeast", "segment", "satimage",
                    "wall_robot"]
#: n = 2,000 blobs with K = 3, 5 and 10, balanced and one cluster 5x the others, and the
#: 3,000-object K = 4 set whose first blob holds half of the objects.
EASY_DATASETS = [f"blobs-2000-k{k}{suffix}" for k in (3, 5, 10) for suffix in ("", "-x5")] + ["blobs-3000-k4-x3"]

#: method -> (largest n it is run on, why). Measured on this 2-core machine (docs/benchmarks.md).
SKIP_LARGE = {
    "addremadd": (3000, "O(n^3) time: about 4 min per call at n = 5,456"),
}

_BLOBS = re.compile(r"^blobs-(\d+)-k(\d+)(?:-x(\d+))?$")


def load(name, seed=0):
    """(X, y) of a shared dataset (``../shared/data``), scikit-learn's digits, or easy blobs
    (``blobs-<n>-k<K>[-x<ratio>]``, drawn with ``seed``)."""
    match = _BLOBS.match(name)
    if match:
        from cclust.testing import easy_blobs

        n, k, ratio = int(match[1]), int(match[2]), int(match[3] or 1)
        return easy_blobs(n, k, ratio=ratio, seed=seed)
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X.astype(np.float64), y.astype(np.int64)
    for folder in ("", "large"):
        path = os.path.join(DATA, folder, f"{name}.npz")
        if os.path.exists(path):
            with np.load(path, allow_pickle=False) as z:
                return np.array(z["X"], dtype=np.float64), np.array(z["y"], dtype=np.int64)
    if name in cclust.datasets.names():
        return cclust.datasets.load(name)
    raise SystemExit(f"unknown dataset {name!r}: not in {DATA} nor bundled")


def standardise(X):
    scale = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)


def methods_to_run(requested):
    table = cclust.available(kind="consensus")
    names = list(table) if not requested else requested
    unknown = [m for m in names if m not in table]
    if unknown:
        raise SystemExit(f"unknown consensus functions {unknown}; registered: {sorted(table)}")
    seen, out = {}, []
    for name in names:
        target = table[name].target
        if target in seen and target != "<runtime>":
            print(f"{name}: same function as {seen[target]}, not run twice", file=sys.stderr)
            continue
        seen[target] = name
        out.append(name)
    return out, seen


# Figure 1 of Nguyen & Caruana (2007): six objects, four clusterings; the ground truth is {x1, x2, x3}, {x4, x5, x6}.
FIGURE_1 = np.array([[1, 1, 1, 2, 2, 1], [2, 1, 1, 2, 2, 2], [2, 1, 2, 1, 2, 2], [1, 1, 2, 1, 2, 2]]).T
FIGURE_1_TRUTH = np.array([0, 0, 0, 1, 1, 1])


def figure_1(methods):
    """Markdown table: what each method returns on Figure 1 of Nguyen & Caruana (2007), from its default restarts and,
    for methods taking ``init``, from the ground truth."""
    import inspect

    ari = cclust.get("ari")
    lines = ["| method | clusters returned (x1..x6) | ARI vs truth | from the truth (init=) |",
             "| --- | --- | ---: | --- |"]
    for name in methods:
        fn = cclust.get(name)
        if method_info(fn).requires_X:
            lines.append(f"| {name} | needs X | | |")
            continue
        show = lambda labels: "{" + "}, {".join(
            ",".join(f"x{i + 1}" for i in np.flatnonzero(labels == k)) for k in np.unique(labels)) + "}"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = fn(FIGURE_1, 2, random_state=0)
                fixed = ""
                if "init" in inspect.signature(fn).parameters:
                    back = fn(FIGURE_1, 2, init=FIGURE_1_TRUTH, random_state=0).labels
                    fixed = "stays at the truth" if ari(FIGURE_1_TRUTH, back) == 1 else f"moves to {show(back)}"
        except Exception as exc:  # noqa: BLE001
            lines.append(f"| {name} | error: {type(exc).__name__}: {exc} | | |")
            continue
        lines.append(f"| {name} | {show(res.labels)} | {ari(FIGURE_1_TRUTH, res.labels):.3f} | {fixed} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=("real", "easy"), default="real",
                        help="default data sets and ensembles: the shared real sets or easy blobs")
    parser.add_argument("--datasets", nargs="+", default=None,
                        help="default: the suite's (real: %s; easy: %s)" % (" ".join(DEFAULT_DATASETS),
                                                                            " ".join(EASY_DATASETS)))
    parser.add_argument("--seeds", type=int, default=10, help="number of seeds (0..seeds-1)")
    parser.add_argument("--methods", nargs="+", default=None, help="default: every registered one")
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--without-X", action="store_true", help="skip the methods that need X")
    parser.add_argument("--no-skip", action="store_true", help="run SKIP_LARGE methods at every size")
    parser.add_argument("--json", default=None, help="also write every score to this JSON file")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), default=None,
                        help="only print the before/after ARI table of two --json files")
    parser.add_argument("--raw", action="store_true", help="do not standardise the features")
    parser.add_argument("--figure-1", action="store_true",
                        help="only show what each method returns on the toy of Figure 1 of Nguyen & Caruana 2007")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    if args.datasets is None:
        args.datasets = EASY_DATASETS if args.suite == "easy" else DEFAULT_DATASETS

    if args.compare:
        write_report(compare(*args.compare), args.output)
        return
    if args.figure_1:
        methods, _ = methods_to_run(args.methods)
        text = (f"Command: `python benchmarks/compare_methods.py {' '.join(sys.argv[1:])}`\n\n"
                "Figure 1 of Nguyen & Caruana 2007 (ground truth {x1,x2,x3}, {x4,x5,x6}), K = 2, random_state=0.\n\n"
                + figure_1(methods) + "\n")
        write_report(text, args.output)
        return

    ari, nmi = cclust.get("ari"), cclust.get("nmi")
    methods, targets = methods_to_run(args.methods)
    scores = {m: {d: {"ari": [], "nmi": [], "time": []} for d in args.datasets} for m in methods}
    notes = {m: {} for m in methods}
    started = time.perf_counter()
    for dataset in args.datasets:
        easy = bool(_BLOBS.match(dataset))
        for seed in range(args.seeds):
            if seed == 0 or easy:
                X, y = load(dataset, seed)
                X = X if (args.raw or easy) else standardise(X)
                k = int(np.unique(y).shape[0])
            t0 = time.perf_counter()
            E = cclust.generate("kmeans", X, k, n_partitions=args.partitions, k_range=None if easy else (2, 2 * k),
                                random_state=seed)
            print(f"{dataset} seed {seed}: n={E.n_samples} K={k} ensemble {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr, flush=True)
            for name in methods:
                fn = cclust.get(name)
                kwargs = {"random_state": seed}
                limit = SKIP_LARGE.get(name)
                if limit and E.n_samples > limit[0] and not args.no_skip:
                    notes[name][dataset] = f"not run above n = {limit[0]}: {limit[1]}"
                    continue
                if method_info(fn).requires_X:
                    if args.without_X:
                        notes[name][dataset] = "needs X"
                        continue
                    kwargs["X"] = X
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        res = fn(E, k, **kwargs)
                except MemoryBudgetError:
                    notes[name][dataset] = "over the memory budget"
                    continue
                except Exception as exc:  # noqa: BLE001 - one method's failure must not stop the table
                    notes[name][dataset] = f"error: {type(exc).__name__}: {exc}"[:120]
                    traceback.print_exc(file=sys.stderr)
                    continue
                cell = scores[name][dataset]
                cell["time"].append(time.perf_counter() - t0)
                cell["ari"].append(ari(y, res.labels))
                cell["nmi"].append(nmi(y, res.labels))
    elapsed = time.perf_counter() - started
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"argv": sys.argv[1:], "seeds": args.seeds, "minutes": elapsed / 60,
                       "scores": scores, "notes": notes}, handle)

    def cell(name, dataset, key):
        values = scores[name][dataset][key]
        if not values:
            return notes[name].get(dataset, "")
        if len(values) < args.seeds:
            return f"{np.mean(values):.3f} ± {np.std(values):.3f} ({len(values)}/{args.seeds})"
        return f"{np.mean(values):.3f} ± {np.std(values):.3f}"

    aliases = {name: [n for n, reg in cclust.available(kind="consensus").items()
                      if reg.target == cclust.available()[name].target and n != name] for name in methods}
    label = {m: m + (f" (= {', '.join(aliases[m])})" if aliases[m] else "") for m in methods}
    lines = [f"Command: `python benchmarks/compare_methods.py {' '.join(sys.argv[1:])}`".rstrip(),
             f"r = {args.partitions} k-means partitions per seed (real sets: K_i in [2, 2K], features "
             f"{'as distributed' if args.raw else 'standardised'}; blobs: the generator's default K_i in "
             f"[K, sqrt(n)]), seeds 0..{args.seeds - 1}; K = number of classes. "
             f"{platform.machine()}, {os.cpu_count()} cores; total {elapsed / 60:.1f} min.", ""]
    header = "| method | " + " | ".join(args.datasets) + " |"
    rule = "| --- |" + " ---: |" * len(args.datasets)
    for key, title in (("ari", "ARI"), ("nmi", "NMI (sqrt)")):
        lines += [f"### {title}", "", header, rule]
        lines += [f"| {label[m]} | " + " | ".join(cell(m, d, key) for d in args.datasets) + " |" for m in methods]
        lines.append("")
    lines += ["### Seconds per call (mean)", "", header, rule]
    for m in methods:
        row = []
        for d in args.datasets:
            t = scores[m][d]["time"]
            row.append(f"{np.mean(t):.3f}" if t else "")
        lines.append(f"| {label[m]} | " + " | ".join(row) + " |")
    text = "\n".join(lines) + "\n"
    write_report(text, args.output)


def compare(before_path, after_path):
    """Markdown table of the ARI (mean ± sd) of every method and data set in two ``--json`` files."""
    with open(before_path) as handle:
        before = json.load(handle)
    with open(after_path) as handle:
        after = json.load(handle)
    methods = [m for m in after["scores"] if m in before["scores"]]
    datasets = [d for d in next(iter(after["scores"].values())) if d in next(iter(before["scores"].values()))]

    def cell(run, m, d):
        values = run["scores"][m][d]["ari"]
        return f"{np.mean(values):.3f} ± {np.std(values):.3f}" if values else "–"

    lines = [f"ARI before (`{before_path}`, {before['minutes']:.1f} min) → after (`{after_path}`, "
             f"{after['minutes']:.1f} min); bold: mean changed by more than 0.02.", "",
             "| method | " + " | ".join(datasets) + " |", "| --- |" + " --- |" * len(datasets)]
    for m in methods:
        row = []
        for d in datasets:
            a, b = before["scores"][m][d]["ari"], after["scores"][m][d]["ari"]
            text = f"{cell(before, m, d)} → {cell(after, m, d)}"
            if a and b and abs(np.mean(a) - np.mean(b)) > 0.02:
                text = f"**{text}**"
            row.append(text if (a or b) else "–")
        lines.append(f"| {m} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
