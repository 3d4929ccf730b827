"""Peak memory of every registered consensus method at two sizes: the table of the method catalogue.

Each method runs on blobs (4 Gaussian clusters in 3-D) with an ensemble of 50 k-means partitions
from the default generator (K_i drawn in [4, ceil(sqrt(n))], so sum K_i grows like sqrt(n)), at
n = 2,000 and n = 8,000, K = 4, random_state=0. The number is the growth of the resident set's
high-water mark during the call (NumPy, C++ cores, METIS and Mt-KaHyPar alike), measured by
:func:`cclust.testing.peak_memory`: one child process per size, every method warmed up first.

Methods that form an n x n structure by default (QUADRATIC) run under a budget of 64 MiB, where
they refuse: the table gives the bytes they ask for (at the default 2 GiB budget they run up to
that size); those with a scalable route also run it (``n_neighbors=10``, with
``neighbors="lsh"`` where there is one).

    python benchmarks/bench_memory.py [--sizes 2000 8000] [--partitions 50] [--out docs/memory.md]
"""
import argparse
import re

import numpy as np
from _common import cpu_model, write_report

import cclust
from cclust.testing import peak_memory

#: Methods that form an n x n structure by default, and the budget they are run under.
QUADRATIC = ("addremadd", "ccpivot", "cspa", "eac", "fc", "hac", "ls-agglomerative", "wosp")
QUADRATIC_BUDGET = 64 * 2**20

#: The scalable route of each method that forms an n x n structure by default.
SCALABLE = {
    "cspa": {"n_neighbors": 10, "neighbors": "lsh"},
    "eac": {"linkage": "single", "n_neighbors": 10},
    "hac": {"linkage": "single", "n_neighbors": 10},
    "wosp": {"n_neighbors": 10, "neighbors": "lsh"},
}


def blobs(n, partitions, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 6.0, size=(4, 3))
    X = centres[rng.integers(0, 4, size=n)] + rng.normal(size=(n, 3))
    return X, cclust.generate("kmeans", X, 4, n_partitions=partitions, random_state=seed)


def cell(result):
    if "bytes" in result:
        return f"{result['bytes']:,}"
    if "refused" in result:
        asked = re.search(r"\((\d+) bytes\)", result["refused"])
        return f"refuses ({int(asked.group(1)):,} asked)" if asked else "refuses"
    return "error: " + result["error"][:60]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=(2000, 8000))
    parser.add_argument("--partitions", type=int, default=50)
    parser.add_argument("--out", default=None, help="also write the Markdown table here")
    args = parser.parse_args()
    names = sorted(cclust.available(kind="consensus"))
    linear = [(name, {"n_clusters": None} if name == "best" else {}) for name in names if name not in QUADRATIC]
    problems = [blobs(n, args.partitions) for n in args.sizes]
    # One child per (size, route): a method's name is its key in a child's results.
    default = peak_memory(problems, linear, n_clusters=4)
    refusals = peak_memory(problems, [(name, {}) for name in names if name in QUADRATIC], n_clusters=4,
                           env={"CCLUST_MEMORY_BUDGET": str(QUADRATIC_BUDGET)})
    for size in range(2):
        default[size].update(refusals[size])
    scalable = peak_memory(problems, [(name, kw) for name, kw in SCALABLE.items() if name in names], n_clusters=4)
    small, large = args.sizes
    sum_k = [int(E.offsets[-1]) for _, E in problems]
    lines = [f"Peak memory added by each call (bytes; RSS high-water mark): blobs, {args.partitions} k-means "
             f"partitions, sum K_i = {sum_k[0]} and {sum_k[1]}, K = 4; methods forming an n x n structure run "
             f"under a budget of {QUADRATIC_BUDGET // 2**20} MiB (they refuse: the bytes they ask for) and on their "
             f"scalable route; {cpu_model()}.", "",
             f"| method | n = {small:,} | n = {large:,} | growth |", "|---|---:|---:|---:|"]

    def row(label, a, b):
        growth = f"{b['bytes'] / a['bytes']:.1f}x" if "bytes" in a and "bytes" in b and a["bytes"] else ""
        lines.append(f"| {label} | {cell(a)} | {cell(b)} | {growth} |")

    for name in names:
        row(name, default[0][name], default[1][name])
        if name in SCALABLE:
            route = ", ".join(f"{k}={v!r}" for k, v in SCALABLE[name].items())
            row(f"{name} ({route})", scalable[0][name], scalable[1][name])
    write_report("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
