"""Speed of the least-squares consensus functions, with a before/after check of their labels.

Times ``addremadd`` and ``ls-agglomerative`` end to end (the public functions, co-association
or projection sums included, ``n_clusters=None``: each method's own number of clusters) on
realistic k-means ensembles of two data sets at each n:

* ``blobs``: ``make_gaussian_mixture(n)`` (12-D, 9 Gaussians as in Mirkin & Shestakov), 50
  k-means partitions with k uniform on [6, 12];
* ``pendigits``: the first n objects of pendigits (``/work/shared/data/pendigits.npz``), 100
  k-means partitions with k uniform on [5, 15].

Every result's labels are hashed (SHA-256 of the int64 labels). ``--record FILE`` stores the
hashes (run it on the code before a change); ``--check FILE`` compares against them in the same
run, so a speed-up that changed any label shows as "NO" in the "same labels" column.
``--threads`` sets AddRemAdd's ``n_jobs`` (one run per value). ``--memory`` measures
the peak memory of each call instead, in a child process.

Usage::

    python benchmarks/bench_least_squares.py --sizes 2000 5000 10000 --record /tmp/ls_before.json
    python benchmarks/bench_least_squares.py --sizes 2000 5000 10000 --check /tmp/ls_before.json
"""
import argparse
import hashlib
import json
import os
import resource
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cclust  # noqa: E402
from cclust.datasets import make_gaussian_mixture  # noqa: E402
from _common import cpu_model, timed, write_table  # noqa: E402

PENDIGITS = "/work/shared/data/pendigits.npz"


def problems(n):
    """(name, classes, Ensemble) of the two benchmark problems at n objects."""
    X, y = make_gaussian_mixture(n, random_state=0)
    yield "blobs", y, cclust.generate("kmeans", X, 9, n_partitions=50, k_range=(6, 12), init="random",
                                      random_state=1)
    data = np.load(PENDIGITS)
    P = data["X"].astype(np.float64)[:n]
    yield "pendigits", data["y"][:n], cclust.generate("kmeans", P, 10, n_partitions=100, k_range=(5, 15),
                                                      init="random", random_state=1)


def digest(labels):
    return hashlib.sha256(np.ascontiguousarray(labels, dtype=np.int64).tobytes()).hexdigest()


def memory(args):
    from cclust.testing import peak_memory

    rows = []
    for n in args.sizes:
        for data, _, E in problems(n):
            if data not in args.data:
                continue
            methods = [(m, {"n_clusters": None, "max_bytes": 64 * n * n}) for m in args.methods]
            result = peak_memory([(np.zeros((n, 1)), E)], methods, n_clusters=2, timeout=3600)[0]
            for m in args.methods:
                got = result[m]
                value = f"{got['bytes'] / 2**20:.0f}" if "bytes" in got else str(got)
                rows.append(f"| {m} | {data} | {n} | {value} |")
                print(rows[-1], flush=True)
    write_table("Peak memory of one call in a child process (MiB).", ["method", "data", "n", "peak MiB"], rows,
                args.out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000])
    parser.add_argument("--methods", nargs="+", default=["addremadd", "ls-agglomerative"])
    parser.add_argument("--data", nargs="+", default=["blobs", "pendigits"])
    parser.add_argument("--threads", type=int, nargs="+", default=[2],
                        help="AddRemAdd's n_jobs (each value is a run; the labels must agree)")
    parser.add_argument("--record", default=None, help="store the label hashes in this JSON file")
    parser.add_argument("--check", default=None, help="compare the label hashes with this JSON file")
    parser.add_argument("--memory", action="store_true",
                        help="only the peak memory of each call, one child process per method "
                             "(cclust.testing.peak_memory)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.memory:
        return memory(args)
    stored = json.load(open(args.check)) if args.check else {}
    recorded = {}
    if args.record and os.path.exists(args.record):
        recorded = json.load(open(args.record))
    rows = []
    for n in args.sizes:
        for data, _, E in problems(n):
            if data not in args.data:
                continue
            runs = [(m, t) for m in args.methods for t in (args.threads if m == "addremadd" else [None])]
            for method, threads in runs:
                kwargs = {"max_bytes": 64 * n * n}
                if threads is not None:
                    kwargs["n_jobs"] = threads
                res, elapsed, cpu_s = timed(lambda: cclust.get(method)(E, None, **kwargs))
                key = f"{method}/{data}/{n}"
                h = digest(res.labels)
                recorded[key] = h
                same = "–" if key not in stored else ("yes" if stored[key] == h else "NO")
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
                rows.append(f"| {method} | {data} | {n} | {E.n_partitions} | {threads or 1} | {elapsed:.2f} | "
                            f"{cpu_s:.2f} | {res.n_clusters} | {res.objective:.6g} | {peak:.2f} | {same} |")
                print(rows[-1], flush=True)
                if args.record:
                    with open(args.record, "w") as handle:
                        json.dump(recorded, handle, indent=1, sort_keys=True)
    write_table(f"AddRemAdd and ls-agglomerative end to end ({cpu_model()}, {os.cpu_count()} cores shared with "
                "other jobs, so timings were taken under load).",
                ["method", "data", "n", "r", "threads", "wall s", "CPU s", "clusters", "objective",
                 "peak RSS of the process so far (GiB)", "same labels"], rows, args.out)


if __name__ == "__main__":
    main()
