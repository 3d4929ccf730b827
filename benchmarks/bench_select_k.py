"""select_k's default (Monti et al.'s protocol, k-means inner clusterer) against ConsensusClusterPlus
(CCP; Wilkerson & Hayes 2010) run in R, in the same run, alternating, each run in its own process.

Both: 100 resamples of 80% of the items, k-means at exactly K (CCP: clusterAlg="km",
distance="euclidean"), K = 2..8, data z-scored. Times are of the call alone (the R and Python
start-up and imports excluded), medians of ``--repeats`` runs. PAC is computed from each tool's
consensus matrices with the same definition (Şenbabaoğlu et al. 2014: the share of pairs i < j
whose entry lies in (0.1, 0.9]); "K" is the K of lowest PAC, and CCP's minimum is "clear" when the
second-lowest PAC is more than 0.05 above it.

Needs R with ConsensusClusterPlus (Debian: r-base-core r-bioc-consensusclusterplus).

    python benchmarks/bench_select_k.py --data /work/shared/data --repeats 3 --out report.md
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from _common import cpu_model, write_report

SETS = ["iris", "wine", "glass", "ecoli", "breast", "yeast", "segment", "spambase"]

R_SCRIPT = r"""
suppressMessages(library(ConsensusClusterPlus))
pdf(NULL)  # CCP draws its CDF even with plot = NULL: to no file
args <- commandArgs(trailingOnly = TRUE)
d <- t(as.matrix(read.csv(args[1], header = FALSE)))
t0 <- proc.time()[["elapsed"]]
res <- suppressMessages(ConsensusClusterPlus(d, maxK = 8, reps = 100, pItem = 0.8, pFeature = 1,
                        clusterAlg = "km", distance = "euclidean", seed = as.numeric(args[2]),
                        plot = NULL, verbose = FALSE))
elapsed <- proc.time()[["elapsed"]] - t0
pac <- sapply(2:8, function(k) { m <- res[[k]]$consensusMatrix; v <- m[lower.tri(m)]; mean(v > 0.1 & v <= 0.9) })
cat(sprintf("{\"seconds\": %.6f, \"pac\": [%s]}\n", elapsed, paste(sprintf("%.6f", pac), collapse = ", ")))
"""

PY_CHILD = r"""
import json, sys, time
import numpy as np
from cclust import select_k
X = np.loadtxt(sys.argv[1], delimiter=",", ndmin=2)
select_k(X[:60], [2, 3], n_resamples=2, random_state=0)          # warm-up: imports, BLAS threads
start = time.perf_counter()
res = select_k(X, range(2, 9), random_state=int(sys.argv[2]), matrix=sys.argv[3])
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "pac": res.pac.tolist(), "best_k": res.best_k, "route": res.route}))
"""


def zscore(X):
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_and_gap(pac):
    order = np.argsort(pac, kind="stable")
    return int(order[0]) + 2, float(pac[order[1]] - pac[order[0]])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/work/shared/data")
    parser.add_argument("--sets", nargs="*", default=SETS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ccp-repeats-above", type=int, default=2000,
                        help="above this many objects CCP runs once (it takes minutes)")
    parser.add_argument("--large", nargs="*", default=["letter"], help="sets in DATA/large run by cclust only")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-select-k-")
    rfile = os.path.join(tmp, "ccp.R")
    with open(rfile, "w") as f:
        f.write(R_SCRIPT)
    lines = [f"CPU: {cpu_model()}; cclust select_k defaults (monti, k-means, 100 resamples, 80%) vs "
             f"ConsensusClusterPlus {ccp_version()} (km, euclidean, reps=100, pItem=0.8), K = 2..8, z-scored; "
             f"medians of {args.repeats} alternating runs (one CCP run above {args.ccp_repeats_above} objects)",
             "",
             "| data (n) | CCP s | cclust s | speed-up | CCP K (gap) | cclust K | max abs PAC difference |",
             "|---|---|---|---|---|---|---|"]
    for name in args.sets:
        X = zscore(np.load(os.path.join(args.data, f"{name}.npz"))["X"])
        path = os.path.join(tmp, f"{name}.csv")
        np.savetxt(path, X, delimiter=",")
        n = X.shape[0]
        ccp_runs, ours = [], []
        for r in range(args.repeats):
            if r == 0 or n <= args.ccp_repeats_above:
                ccp_runs.append(run(["Rscript", rfile, path, str(r + 1)]))
            ours.append(run([sys.executable, "-c", PY_CHILD, path, str(r), "auto"]))
            print(name, ccp_runs[-1]["seconds"], ours[-1]["seconds"], file=sys.stderr, flush=True)
        ccp_s = statistics.median(x["seconds"] for x in ccp_runs)
        our_s = statistics.median(x["seconds"] for x in ours)
        ccp_k, gap = best_and_gap(np.array(ccp_runs[0]["pac"]))
        our_k = ours[0]["best_k"]
        diff = max(abs(a - b) for a, b in zip(ccp_runs[0]["pac"], ours[0]["pac"]))
        lines.append(f"| {name} ({n}) | {ccp_s:.2f} | {our_s:.2f} | {ccp_s / our_s:.1f}x | {ccp_k} ({gap:.3f}) | "
                     f"{our_k} | {diff:.3f} |")
        print(lines[-1], file=sys.stderr, flush=True)
    for name in args.large:
        X = zscore(np.load(os.path.join(args.data, "large", f"{name}.npz"))["X"])
        path = os.path.join(tmp, f"{name}.csv")
        np.savetxt(path, X, delimiter=",")
        res = run([sys.executable, "-c", PY_CHILD, path, "0", "auto"])
        lines.append(f"| {name} ({X.shape[0]}) | not run (7 dense {X.shape[0]} x {X.shape[0]} matrices: "
                     f"{7 * 8 * X.shape[0] ** 2 / 2 ** 30:.0f} GiB) | {res['seconds']:.1f} ({res['route']} route) | | | "
                     f"{res['best_k']} | |")
    write_report("\n".join(lines), args.out)


def ccp_version():
    try:
        out = subprocess.run(["Rscript", "-e", "cat(as.character(packageVersion('ConsensusClusterPlus')))"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


if __name__ == "__main__":
    main()
