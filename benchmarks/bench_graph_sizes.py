"""The graph methods' ``sizes`` options side by side: "equal" (the papers; bit-identical to the
defaults before ``sizes`` existed), "auto" (the default) and optionally "estimated".

For each data set and seed one k-means ensemble is built and every method is run on it with
each option, so the columns differ by the option only. Data: the shared real sets (standardised,
K_i in [2, 2K], r = 100, as ``compare_methods.py``), easy blobs ``blobs-<n>-k<K>[-x<ratio>]``
(the generator's default K_i range, r = 30, as the conformance kit) and ``mixture-<n>``: a
Gaussian mixture of five classes holding 30/25/20/15/10% of the objects (8 dimensions, centres
4 standard deviations from the origin along the axes).

Usage::

    python benchmarks/bench_graph_sizes.py --output /tmp/sizes.md
    python benchmarks/bench_graph_sizes.py --datasets mixture-100000 --methods hbgf mcla --seeds 3
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

import cclust
from cclust.registry import method_info
from _common import write_report
from compare_methods import DEFAULT_DATASETS, load, standardise

GRAPH_METHODS = ["cspa", "hbgf", "mcla", "womc", "wosp", "wohb", "hgpa"]
EASY = ["blobs-3000-k4-x3", "blobs-2000-k5-x5", "blobs-2000-k10-x5", "blobs-2000-k5"]


def mixture(n, seed):
    rng = np.random.default_rng([7, seed])
    sizes = np.floor(np.array([0.30, 0.25, 0.20, 0.15, 0.10]) * n).astype(int)
    sizes[0] += n - sizes.sum()
    y = np.repeat(np.arange(5), sizes)
    centres = np.zeros((5, 8))
    centres[np.arange(5), np.arange(5)] = 4.0
    return centres[y] + rng.standard_normal((n, 8)), y


def data(name, seed):
    """(X, y, ensemble kwargs) of a data set for a seed."""
    if name.startswith("mixture-"):
        X, y = mixture(int(name.split("-")[1]), seed)
        return X, y, {"n_partitions": 30}
    if name.startswith("blobs-"):
        X, y = load(name, seed)
        return X, y, {"n_partitions": 30}
    X, y = load(name)
    k = int(np.unique(y).shape[0])
    return standardise(X), y, {"n_partitions": 100, "k_range": (2, 2 * k)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=EASY + DEFAULT_DATASETS)
    parser.add_argument("--methods", nargs="+", default=GRAPH_METHODS)
    parser.add_argument("--options", nargs="+", default=["equal", "auto"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    ari = cclust.get("ari")
    scores = {(m, o, d): [] for m in args.methods for o in args.options for d in args.datasets}
    used = {(m, d): 0 for m in args.methods for d in args.datasets}
    seconds = {(m, o): 0.0 for m in args.methods for o in args.options}
    notes = {}
    started = time.perf_counter()
    for d in args.datasets:
        for seed in range(args.seeds):
            X, y, kwargs = data(d, seed)
            k = int(np.unique(y).shape[0])
            E = cclust.generate("kmeans", X, k, random_state=seed, **kwargs)
            print(f"{d} seed {seed}: n={E.n_samples} K={k}", file=sys.stderr, flush=True)
            for m in args.methods:
                fn = cclust.get(m)
                extra = {"X": X} if method_info(fn).requires_X else {}
                for o in args.options:
                    t0 = time.perf_counter()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            res = fn(E, k, sizes=o, random_state=seed, **extra)
                    except Exception as exc:  # noqa: BLE001 - e.g. over the memory budget
                        notes[(m, d)] = f"{type(exc).__name__}"
                        continue
                    seconds[(m, o)] += time.perf_counter() - t0
                    scores[(m, o, d)].append(ari(y, res.labels))
                    if o == "auto" and res.extras.get("sizes_used") == "estimated":
                        used[(m, d)] += 1

    def cell(m, d):
        parts = []
        for o in args.options:
            v = scores[(m, o, d)]
            parts.append(f"{np.mean(v):.3f} ± {np.std(v):.3f}" if v else notes.get((m, d), "–"))
        text = " → ".join(parts)
        if "auto" in args.options and scores[(m, "auto", d)]:
            text += f" ({used[(m, d)]}/{len(scores[(m, 'auto', d)])})"
        return text

    lines = [f"Command: `python benchmarks/bench_graph_sizes.py {' '.join(sys.argv[1:])}`".rstrip(),
             f"ARI mean ± sd over seeds 0..{args.seeds - 1}, options {' → '.join(args.options)}; in brackets, "
             "the seeds where 'auto' kept the estimated sizes. "
             f"{os.cpu_count()} cores; total {(time.perf_counter() - started) / 60:.1f} min.", "",
             "| data | " + " | ".join(args.methods) + " |", "| --- |" + " --- |" * len(args.methods)]
    for d in args.datasets:
        lines.append(f"| {d} | " + " | ".join(cell(m, d) for m in args.methods) + " |")
    lines += ["", "Seconds per option, all calls: " + "; ".join(
        f"{m} " + "/".join(f"{seconds[(m, o)]:.0f}" for o in args.options) for m in args.methods)]
    write_report("\n".join(lines) + "\n", args.output)


if __name__ == "__main__":
    main()
