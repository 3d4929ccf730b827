"""Thread use on an idle and on a loaded machine: GKCC against KCC, AddRemAdd against SciPy.

A user's machine is often busy with other work. This script runs the same calls

* ``kcc`` and ``gkcc`` (Li & Liu 2018, nu = 59 candidates per step) on pendigits with K = 10,
  on one k-means ensemble of 100 partitions;
* ``addremadd`` (Mirkin & Shestakov) on the first 6,000 objects of pendigits, and SciPy's
  average linkage on the same co-association (its distance form; building it included),

with ``n_jobs`` = 1, 2 and the default (None: the cores not busy elsewhere, see
``cclust.validation.default_threads``), once on the machine as it is and once with ``--load N``
busy processes started by the script itself (one pure-Python loop each, the load of another
program using N cores). Every call runs in a fresh child process, so no thread pool or cache
carries over, and prints wall and CPU seconds (the CPU of all of the call's threads) and, per
condition, the ratios the issue asks about (gkcc/kcc, addremadd/SciPy).

Usage::

    python benchmarks/bench_threads_under_load.py                 # idle, then under a load of 2
    python benchmarks/bench_threads_under_load.py --load 2 --only loaded
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PENDIGITS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data", "pendigits.npz"))

CHILD = r"""
import json, os, sys, time
import numpy as np
sys.path.insert(0, {root!r})
import cclust
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

what, threads = {what!r}, {threads!r}
data = np.load({data!r})
X = data["X"].astype(np.float64)

def clock():
    t = os.times()
    return time.perf_counter(), t.user + t.system

def since(start):
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]

out = {{}}
if what == "gkcc":
    E = cclust.generate("kmeans", X, 10, n_partitions=100, random_state=1)
    start = clock()
    cclust.get("kcc")(E, 10, random_state=0, n_jobs=threads)
    out["kcc"] = since(start)
    start = clock()
    cclust.get("gkcc")(E, 10, X=X, random_state=0, n_jobs=threads)
    out["gkcc"] = since(start)
else:
    P = X[:6000]
    E = cclust.generate("kmeans", P, 10, n_partitions=100, k_range=(5, 15), init="random", random_state=1)
    start = clock()
    cclust.get("addremadd")(E, None, n_jobs=threads)
    out["addremadd"] = since(start)
    start = clock()
    A = E.coassociation()
    A = np.asarray(A.todense() if hasattr(A, "todense") else A)
    D = 1.0 - A
    np.fill_diagonal(D, 0.0)
    linkage(squareform(D, checks=False), "average")
    out["scipy average linkage"] = since(start)
print(json.dumps(out))
"""


def run_child(what, threads, root):
    env = {k: v for k, v in os.environ.items() if k not in ("CCLUST_NUM_THREADS", "OMP_NUM_THREADS")}
    code = CHILD.format(root=root, what=what, threads=threads, data=PENDIGITS)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", type=int, default=2, help="busy processes for the loaded condition")
    parser.add_argument("--only", choices=["idle", "loaded"], default=None)
    parser.add_argument("--what", nargs="+", default=["gkcc", "addremadd"], choices=["gkcc", "addremadd"])
    args = parser.parse_args(argv)
    root = os.path.dirname(HERE)
    conditions = [c for c in ("idle", "loaded") if args.only in (None, c)]
    print("| condition | load average before | work | threads | call | wall s | CPU s | ratio to the anchor (wall) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for condition in conditions:
        hogs = []
        if condition == "loaded":
            hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
            time.sleep(2)
        try:
            for what in args.what:
                for threads in (1, 2, None):
                    load = os.getloadavg()[0]
                    times = run_child(what, threads, root)
                    anchor = "kcc" if what == "gkcc" else "scipy average linkage"
                    for call, (wall, cpu) in times.items():
                        ratio = "" if call == anchor else f"{wall / times[anchor][0]:.1f}x"
                        label = "default" if threads is None else threads
                        print(f"| {condition}{f' ({args.load} busy)' if hogs else ''} | {load:.2f} | {what} | "
                              f"{label} | {call} | {wall:.2f} | {cpu:.2f} | {ratio} |", flush=True)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()


if __name__ == "__main__":
    main()
