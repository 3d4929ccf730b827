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

``--ccp-kmeans lloyd`` runs CCP with a custom ``clusterAlg``: R's ``kmeans(..., iter.max = 10,
nstart = 1, algorithm = "Lloyd")`` on the resample's rows, everything else as ``"km"`` (the check
of whether CCP's Hartigan-Wong inner k-means explains a different K). ``--inner-params`` passes
select_k's ``inner_params`` (e.g. ``'{"algorithm": "hartigan-wong"}'``). ``--log FILE`` appends
every run's raw record (times and PAC curves) as JSON lines.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from _common import cpu_model, write_report

#: Every shared data set with n <= 5,000, in order of n.
SETS = ["breast_tissue", "iris", "hayes_roth", "wine", "glass", "ecoli", "dermatology", "wdbc",
        "balance_scale", "australian", "breast", "vowel", "yeast", "semeion", "segment", "spambase"]

R_SCRIPT = r"""
suppressMessages(library(ConsensusClusterPlus))
pdf(NULL)  # CCP draws its CDF even with plot = NULL: to no file
args <- commandArgs(trailingOnly = TRUE)
d <- t(as.matrix(read.csv(args[1], header = FALSE)))
colnames(d) <- as.character(seq_len(ncol(d)))
alg <- "km"
if (length(args) > 2 && args[3] == "lloyd") {
  # Custom clusterAlg: CCP hands it the resample's Euclidean dist object, whose labels name the
  # objects; k-means runs on those objects' rows, as "km" does, but with Lloyd's algorithm.
  rows <- t(d)
  kmLloyd <- function(this_dist, k) {
    ids <- as.integer(attr(this_dist, "Labels"))
    kmeans(rows[ids, , drop = FALSE], k, iter.max = 10, nstart = 1, algorithm = "Lloyd")$cluster
  }
  alg <- "kmLloyd"
}
t0 <- proc.time()[["elapsed"]]
# verbose: CCP's "random subsample i" messages on stderr count the resamples begun (see run_ccp)
res <- suppressWarnings(ConsensusClusterPlus(d, maxK = 8, reps = 100, pItem = 0.8,
                        pFeature = 1, clusterAlg = alg, distance = "euclidean",
                        seed = as.numeric(args[2]), plot = NULL, verbose = TRUE))
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
out = {}
for algorithm in json.loads(sys.argv[4]):
    start = time.perf_counter()
    res = select_k(X, range(2, 9), random_state=int(sys.argv[2]), matrix=sys.argv[3],
                   inner_params={"algorithm": algorithm})
    seconds = time.perf_counter() - start
    out[algorithm] = {"seconds": seconds, "pac": res.pac.tolist(), "best_k": res.best_k, "route": res.route}
print(json.dumps(out))
"""


def zscore(X):
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def run(cmd, timeout=None):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_ccp(cmd, timeout=None):
    """CCP's record; past ``timeout`` the run is stopped and its rate extrapolated: CCP (verbose)
    reports each resample it starts, every resample costs the same (one clustering and one
    n x n update per K), so 100 resamples take about elapsed * 100 / (resamples finished)."""
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, cwd=tempfile.gettempdir())
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            elapsed = time.perf_counter() - start
            err.seek(0)
            done = max(sum("random subsample" in line for line in err) - 1, 0)
            return {"seconds": None, "pac": None, "stopped_after": elapsed, "resamples_done": done,
                    "extrapolated_seconds": elapsed * 100 / done if done else None}
        if proc.returncode:
            err.seek(0)
            raise RuntimeError(err.read()[-2000:])
    return json.loads(stdout.strip().splitlines()[-1])


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
    parser.add_argument("--ccp-timeout", type=float, default=None, help="seconds before a CCP run is stopped")
    parser.add_argument("--ccp-kmeans", choices=["hartigan-wong", "lloyd"], default="hartigan-wong",
                        help="CCP's inner k-means: its own clusterAlg='km' (Hartigan-Wong) or R's Lloyd")
    parser.add_argument("--algorithms", nargs="+", default=["lloyd", "hartigan-wong"],
                        help="select_k inner_params['algorithm'] values, each timed in the same child")
    parser.add_argument("--log", default=None, help="append raw records here (JSON lines)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-select-k-")
    rfile = os.path.join(tmp, "ccp.R")
    with open(rfile, "w") as f:
        f.write(R_SCRIPT)
    lines = [f"CPU: {cpu_model()}; cclust select_k (monti, k-means, 100 resamples, 80%; inner k-means "
             f"algorithm as named) vs ConsensusClusterPlus {ccp_version()} (km, euclidean, reps=100, pItem=0.8, "
             f"CCP's k-means: {args.ccp_kmeans}), K = 2..8, z-scored; medians of {args.repeats} alternating runs "
             f"(one CCP run above {args.ccp_repeats_above} objects); CCP stopped after {args.ccp_timeout} s "
             "and its time extrapolated from the resamples it finished (marked ~)",
             "",
             "| data (n) | CCP s | CCP K (gap) | " + " | ".join(f"{a} s | speed-up | K | max abs PAC diff"
                                                      for a in args.algorithms) + " |",
             "|---|---|---|" + "---|---|---|---|" * len(args.algorithms)]
    for name in args.sets:
        X = zscore(np.load(os.path.join(args.data, f"{name}.npz"))["X"])
        path = os.path.join(tmp, f"{name}.csv")
        np.savetxt(path, X, delimiter=",")
        n = X.shape[0]
        ccp_runs, ours = [], []
        for r in range(args.repeats):
            if r == 0 or n <= args.ccp_repeats_above:
                ccp_runs.append(run_ccp(["Rscript", rfile, path, str(r + 1), args.ccp_kmeans], args.ccp_timeout))
            ours.append(run([sys.executable, "-c", PY_CHILD, path, str(r), "auto", json.dumps(args.algorithms)]))
            print(name, ccp_runs[-1], {a: v["seconds"] for a, v in ours[-1].items()}, file=sys.stderr, flush=True)
            if args.log:
                with open(args.log, "a") as handle:
                    handle.write(json.dumps({"set": name, "n": n, "repeat": r, "ccp_kmeans": args.ccp_kmeans,
                                             "ccp": ccp_runs[-1], "cclust": ours[-1]}) + "\n")
        finished = [x["seconds"] for x in ccp_runs if x["seconds"] is not None]
        if finished:
            ccp_s, mark = statistics.median(finished), ""
            ccp_k, gap = best_and_gap(np.array(ccp_runs[0]["pac"]))
            ccp_cell = f"{ccp_s:.2f} | {ccp_k} ({gap:.3f})"
        else:
            ccp_s, mark = ccp_runs[0]["extrapolated_seconds"] or float("inf"), "~"
            ccp_k = None
            ccp_cell = (f"~{ccp_s:.0f} (stopped at {ccp_runs[0]['stopped_after']:.0f} s, "
                        f"{ccp_runs[0]['resamples_done']} of 100 resamples) | -")
        cells = []
        for a in args.algorithms:
            our_s = statistics.median(x[a]["seconds"] for x in ours)
            diff = ("-" if ccp_k is None else
                    f"{max(abs(p - q) for p, q in zip(ccp_runs[0]['pac'], ours[0][a]['pac'])):.3f}")
            cells.append(f"{our_s:.2f} | {mark}{ccp_s / our_s:.1f}x | {ours[0][a]['best_k']} | {diff}")
        lines.append(f"| {name} ({n}) | {ccp_cell} | " + " | ".join(cells) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
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
