"""select_k at n = 20,000 on the sparse route against ConsensusClusterPlus (CCP; Wilkerson & Hayes
2010) at the same n: time and peak memory of each, and select_k's memory guard against its peak.

select_k: its defaults (Monti et al. 2003: 100 resamples of 80%, k-means at exactly K, K = 2..8)
with ``matrix="auto"`` (the dense route's seven n x n float32/float64 products exceed the budget,
so the sparse route runs), in its own process; peak RSS is the process's ``ru_maxrss``, the
growth is that minus the RSS just before the call (NumPy, SciPy and the data already loaded).
The guard's figure is ``cclust._monti.sparse_bytes``, what select_k charges against the budget.

CCP: ``clusterAlg="km"``, ``distance="euclidean"``, ``reps=100``, ``pItem=0.8``, ``maxK=8``, in R
with a wall-time limit and an address-space limit (``RLIMIT_AS``) so that it cannot take the
shared machine's memory; its stderr (verbose progress or R's allocation error) is reported.

    python benchmarks/bench_select_k_large.py --data /work/shared/data/large/letter.npz \
        --ccp-timeout 1200 --ccp-memory-gib 6 --algorithms lloyd hartigan-wong
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from _common import cpu_model, write_report

PY_CHILD = r"""
import json, resource, sys, time
import numpy as np
from cclust import select_k
from cclust import _monti
from cclust.validation import memory_budget
X = np.loadtxt(sys.argv[1], delimiter=",", ndmin=2)
select_k(X[:60], [2, 3], n_resamples=2, random_state=0)          # warm-up: imports, BLAS threads
def rss_now():
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
before = rss_now()
start = time.perf_counter()
res = select_k(X, range(2, 9), random_state=0, inner_params={"algorithm": sys.argv[2]})
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
n = X.shape[0]
print(json.dumps({"seconds": seconds, "route": res.route, "best_k": res.best_k, "pac": res.pac.tolist(),
                  "peak_rss": peak, "rss_before": before, "guard": _monti.sparse_bytes(n, 100, list(range(2, 9))),
                  "dense_guard": _monti.dense_bytes(n, 100, list(range(2, 9)), False), "budget": memory_budget(None)}))
"""

R_SCRIPT = r"""
suppressMessages(library(ConsensusClusterPlus))
pdf(NULL)
args <- commandArgs(trailingOnly = TRUE)
d <- t(as.matrix(read.csv(args[1], header = FALSE)))
t0 <- proc.time()[["elapsed"]]
res <- ConsensusClusterPlus(d, maxK = 8, reps = 100, pItem = 0.8, pFeature = 1, clusterAlg = "km",
                            distance = "euclidean", seed = 1, plot = NULL, verbose = TRUE)
cat(sprintf("{\"seconds\": %.3f}\n", proc.time()[["elapsed"]] - t0))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/work/shared/data/large/letter.npz")
    parser.add_argument("--ccp-timeout", type=float, default=1200)
    parser.add_argument("--ccp-memory-gib", type=float, default=6)
    parser.add_argument("--algorithms", nargs="+", default=["lloyd"])
    parser.add_argument("--skip-ccp", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    X = np.load(args.data)["X"].astype(np.float64)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    tmp = tempfile.mkdtemp(prefix="bench-select-k-large-")
    path = os.path.join(tmp, "data.csv")
    np.savetxt(path, X, delimiter=",")
    n = X.shape[0]
    name = os.path.basename(args.data).rsplit(".", 1)[0]
    lines = [f"CPU: {cpu_model()}; {name} (n = {n}, d = {X.shape[1]}), z-scored, K = 2..8, 100 resamples of 80%",
             "", "| run | time (s) | peak RSS (MiB) | growth during the call (MiB) | select_k's guard (MiB) | route | K |",
             "|---|---|---|---|---|---|---|"]
    for algorithm in args.algorithms:
        out = subprocess.run([sys.executable, "-c", PY_CHILD, path, algorithm], capture_output=True, text=True,
                             check=True, cwd=tmp)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(json.dumps(r), file=sys.stderr, flush=True)
        lines.append(f"| select_k ({algorithm}) | {r['seconds']:.1f} | {r['peak_rss'] / 2**20:.0f} | "
                     f"{(r['peak_rss'] - r['rss_before']) / 2**20:.0f} | {r['guard'] / 2**20:.0f} (dense route: "
                     f"{r['dense_guard'] / 2**30:.1f} GiB > budget {r['budget'] / 2**30:.1f} GiB) | {r['route']} | "
                     f"{r['best_k']} |")
    if not args.skip_ccp:
        rfile = os.path.join(tmp, "ccp.R")
        with open(rfile, "w") as handle:
            handle.write(R_SCRIPT)
        limit = int(args.ccp_memory_gib * 2**30)

        def cap():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        start = time.perf_counter()
        with tempfile.TemporaryFile("w+") as err:
            # GNU time reports R's own peak RSS; the session lets a time-out stop both
            proc = subprocess.Popen(["/usr/bin/time", "-f", "maxrss_kb=%M", "Rscript", rfile, path],
                                    stdout=subprocess.PIPE, stderr=err, text=True, cwd=tmp, preexec_fn=cap,
                                    start_new_session=True)
            try:
                stdout, _ = proc.communicate(timeout=args.ccp_timeout)
                what = f"exit status {proc.returncode}"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                stdout, _ = proc.communicate()
                what = f"stopped at the {args.ccp_timeout:.0f} s limit"
            elapsed = time.perf_counter() - start
            err.seek(0)
            text = err.read()
        peak = [line.split("=")[1] for line in text.splitlines() if line.startswith("maxrss_kb=")]
        done = max(text.count("random subsample") - 1, 0)
        error = [line for line in text.splitlines() if "Error" in line or "cannot allocate" in line]
        print(text[-3000:], file=sys.stderr)
        peak_mib = f"{int(peak[-1]) / 2**10:.0f}" if peak else "(not reported: stopped)"
        lines.append(f"| CCP (address space capped at {args.ccp_memory_gib:g} GiB) | {elapsed:.1f} ({what}) | "
                     f"{peak_mib} | | | {done} of 100 resamples done | {'; '.join(error)[:300] or '-'} |")
    write_report("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
