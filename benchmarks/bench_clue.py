"""cclust's SE, HE, DWH, SM, HM and GV1 against R's clue (Hornik 2005) on the same ensembles, in the same run.

For each data set: a k-means ensemble of r partitions (K_i drawn from 5..10), one random start
membership, both written to CSV; clue's ``cl_consensus`` (methods "SE", "HE" with that start,
"DWH" in the order 1..r; "SM", "HM", "GV1" with that start) runs in R through
``benchmarks/bench_clue.R``, cclust's ``se``, ``he``, ``dwh`` (and ``sm``, ``hm``, ``gv1``) in this
process with the same start and order. Reported per method: wall time of each,
the ratio, clue's own objective value, clue's membership re-scored by cclust's criterion (every
partition matched to it afresh), and cclust's objective. The objectives are the same criterion
(SE/HE: weighted sum of squared Euclidean distances with optimal matching); DWH has no
criterion of its own and both are scored by SE's; SM/HM by the Manhattan criterion, GV1 by
Gordon & Vichi's (2001) model-1 criterion (each with a fresh matching).

    python benchmarks/bench_clue.py                        # pendigits (n = 10,992) and birch1 (n = 100,000)
    python benchmarks/bench_clue.py --datasets pendigits --methods se dwh
    python benchmarks/bench_clue.py --datasets pendigits --methods hm gv1
    python benchmarks/bench_clue.py --datasets pendigits --methods sm --n 1000 --r 20   # clue's SM: one LP per object

clue's SM and GV1 need the R packages lpSolve and quadprog.

Needs Rscript with the clue package. Data: /work/shared/data (``X`` and ``y`` in .npz files).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = {"pendigits": "/work/shared/data/pendigits.npz", "birch1": "/work/shared/data/large/birch1.npz"}
CLUE_NAMES = {"se": "SE", "he": "HE", "dwh": "DWH", "sm": "SM", "hm": "HM", "gv1": "GV1"}
#: The criterion each method's result (ours and clue's membership) is scored by.
CRITERION = {"se": "SE", "he": "SE", "dwh": "SE", "sm": "SM", "hm": "SM", "gv1": "GV1"}


def ensemble_for(name, r, seed, n_max=None):
    import cclust

    X = np.load(DATA[name])["X"].astype(np.float64)
    if n_max is not None and n_max < X.shape[0]:
        X = X[np.sort(np.random.default_rng(seed).choice(X.shape[0], n_max, replace=False))]
    return cclust.generate("kmeans", X, 10, n_partitions=r, k_range=(5, 10), random_state=seed)


def run_clue(workdir, methods, k):
    out = subprocess.run(["Rscript", str(HERE / "bench_clue.R"), str(workdir), str(k), ",".join(
        CLUE_NAMES[m] for m in methods)], capture_output=True, text=True, cwd=workdir)
    if out.returncode != 0:
        raise RuntimeError(f"Rscript failed:\n{out.stderr[-3000:]}")
    results = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            results[rec["method"]] = rec
    return results


def score(data, M, criterion):
    """The criterion of membership M, every partition matched to it afresh."""
    from cclust.consensus_functions import gordon_vichi as gv
    from cclust.consensus_functions import median as md

    if criterion == "GV1":
        T = data.cross(M)
        return gv._gv1_value(data, M, T, gv._gv1_match(data, M, T))
    return md._final_value(data, M, criterion)


def main(argv=None):
    from cclust.consensus_functions import _median as mc
    from cclust.consensus_functions import median as md

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["pendigits", "birch1"], choices=sorted(DATA))
    parser.add_argument("--methods", nargs="+", default=["se", "he", "dwh"], choices=sorted(CLUE_NAMES))
    parser.add_argument("--r", type=int, default=100, help="partitions per ensemble")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n", type=int, default=None, help="a random subset of this many objects")
    parser.add_argument("--keep", default=None, help="folder to keep the CSV files in")
    args = parser.parse_args(argv)

    rows = []
    for name in args.datasets:
        E = ensemble_for(name, args.r, args.seed, args.n)
        n, r = E.shape
        k = int(E.n_clusters.max())
        S = np.random.default_rng(args.seed).random((n, k))
        S /= S.sum(axis=1, keepdims=True)
        workdir = Path(args.keep or tempfile.mkdtemp(prefix="bench_clue_")) / name
        workdir.mkdir(parents=True, exist_ok=True)
        np.savetxt(workdir / "labels.csv", E.labels + 1, fmt="%d", delimiter=",")
        np.savetxt(workdir / "start.csv", S, fmt="%.17g", delimiter=",")
        clue = run_clue(workdir, args.methods, k)
        data = mc.Memberships(E, None, "bench")
        for method in args.methods:
            t0 = time.perf_counter()
            if method == "dwh":
                res = md.dwh(E, k, order=np.arange(r))
            else:
                res = getattr(md, method)(E, k, init=S)
            ours_time = time.perf_counter() - t0
            theirs = clue[CLUE_NAMES[method]]
            M = np.loadtxt(workdir / f"membership_{CLUE_NAMES[method]}.csv", delimiter=",", ndmin=2)
            full = np.zeros((n, max(k, data.k_max)))
            full[:, :M.shape[1]] = M
            rescored = score(data, M if method == "gv1" else full, CRITERION[method])
            rows.append({"data": name, "n": n, "r": r, "k": k, "method": method, "clue_s": theirs["elapsed"],
                         "cclust_s": round(ours_time, 3), "speedup": round(theirs["elapsed"] / ours_time, 1),
                         "clue_objval": theirs["objval"], "clue_rescored": rescored, "cclust_objective": res.objective,
                         "rel_diff": (res.objective - rescored) / abs(rescored),
                         "cclust_n_iter": res.n_iter})
            print(json.dumps(rows[-1]), flush=True)
    print()
    print("| data | n | method | clue (s) | cclust (s) | speed-up | clue objective | cclust objective | relative difference |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['data']} | {row['n']:,} | {row['method']} | {row['clue_s']:.1f} | {row['cclust_s']:.2f} | "
              f"{row['speedup']}x | {row['clue_rescored']:.10g} | {row['cclust_objective']:.10g} | "
              f"{row['rel_diff']:.1e} |")
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
