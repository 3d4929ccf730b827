"""Quality of every registered consensus function, side by side (ARI and NMI against the classes).

For each dataset and seed, one ensemble of r k-means partitions (``cclust.generate("kmeans")``,
K_i uniform in [2, 2K] as in Wu et al. 2015, features standardised as in Ren et al. 2017, sec. 4.3) is fused by every
consensus function registered when the script runs (``cclust.available(kind="consensus")``,
plugins included), asking for K = the number of classes. Functions that need the features (X)
are skipped unless ``--with-X``; a function that raises ``MemoryBudgetError`` (or any other
error) gets a note instead of a score; names registered to the same target (``hac`` = ``eac``)
are run once. Cells are mean ± standard deviation over the seeds.

Usage::

    python benchmarks/compare_methods.py                                   # default, < 10 min on 2 cores
    python benchmarks/compare_methods.py --datasets iris wine --seeds 3 --methods kcc ivc eac
    python benchmarks/compare_methods.py --with-X --output /tmp/quality.md
    python benchmarks/compare_methods.py --figure-1      # what each method returns on Figure 1 of Nguyen & Caruana (2007)
"""
import argparse
import os
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
DEFAULT_DATASETS = ["iris", "wine", "wdbc", "glass", "ecoli", "dermatology", "yeast", "digits"]


def load(name):
    """(X, y) of a shared dataset (``../shared/data``), or scikit-learn's digits."""
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
    parser.add_argument("--datasets", nargs="+", default=DEFAULT_DATASETS)
    parser.add_argument("--seeds", type=int, default=10, help="number of seeds (0..seeds-1)")
    parser.add_argument("--methods", nargs="+", default=None, help="default: every registered one")
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--with-X", action="store_true", help="also run the methods that need X")
    parser.add_argument("--raw", action="store_true", help="do not standardise the features")
    parser.add_argument("--figure-1", action="store_true",
                        help="only show what each method returns on the toy of Figure 1 of Nguyen & Caruana 2007")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()

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
        X, y = load(dataset)
        X = X if args.raw else standardise(X)
        k = int(np.unique(y).shape[0])
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            E = cclust.generate("kmeans", X, k, n_partitions=args.partitions, k_range=(2, 2 * k),
                                random_state=seed)
            print(f"{dataset} seed {seed}: n={E.n_samples} K={k} ensemble {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr, flush=True)
            for name in methods:
                fn = cclust.get(name)
                kwargs = {"random_state": seed}
                if method_info(fn).requires_X:
                    if not args.with_X:
                        notes[name][dataset] = "needs X (--with-X)"
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
             f"r = {args.partitions} k-means partitions (K_i in [2, 2K]) per seed, seeds 0..{args.seeds - 1}, "
             f"features {'as distributed' if args.raw else 'standardised'}; K = number of classes. "
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


if __name__ == "__main__":
    main()
