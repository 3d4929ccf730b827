"""KCC at scale: r = 100 partitions, K = 10, on n = 1e5, 1e6 and 1e7 synthetic objects.

Two paths:

* ``memory`` -- the whole (n, r) int32 label matrix in one Ensemble, the compiled engine on
  every core (cclust.consensus_functions.kcc.kcc);
* ``dask`` -- a DaskEnsemble whose chunks *generate* their labels when computed (never all in
  memory: each Lloyd pass regenerates them chunk by chunk), KCC by cclust.dask.kcc on a
  ``dask.distributed.LocalCluster`` of worker processes.

Both draw the same labels (chunk c from ``default_rng([seed, c])``), so where both run their
labels are compared (they must be identical). Each configuration runs in its own subprocess so
that peak memory is its own: for ``memory`` the process's peak RSS (getrusage), for ``dask`` the
peak of the summed RSS of the client process (which hosts the scheduler) and every descendant
(nannies and workers), sampled every 0.2 s with psutil.

Usage::

    python benchmarks/bench_scale.py                             # 1e5 and 1e6, both paths
    python benchmarks/bench_scale.py --sizes 10000000 --paths dask --max-iter 10
    python benchmarks/bench_scale.py --output /tmp/scale.md
"""
import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time

import numpy as np
from _common import cpu_model, write_report

R, K, SEED, NOISE = 100, 10, 0, 0.4
ROWS = 40 * 4096  # rows per chunk (~64 MiB of labels at r = 100)


def partition_params(r=R, k=K, seed=SEED):
    """Per partition: K_i in [K, 2K] and the label each true cluster maps to."""
    rng = np.random.default_rng(seed)
    ks = rng.integers(k, 2 * k + 1, size=r)
    split = np.stack([rng.integers(0, ki, size=k) for ki in ks])  # (r, K)
    return ks, split


def label_chunk(c, rows, ks, split, seed=SEED):
    """Labels of objects c*ROWS .. c*ROWS+rows: noisy copies of a hidden K-cluster truth."""
    rng = np.random.default_rng([seed, c])
    truth = rng.integers(0, split.shape[1], size=rows)
    labels = split.T[truth].astype(np.int32)  # (rows, r)
    # Bytes are the cheapest random numbers: one decides the noise, the other the noisy label
    # (the modulo bias of byte % K_i does not matter here).
    noise = rng.integers(0, 256, size=labels.shape, dtype=np.uint8) < int(256 * NOISE)
    random_labels = rng.integers(0, 256, size=labels.shape, dtype=np.uint8) % ks.astype(np.uint8)[None, :]
    labels[noise] = random_labels[noise]
    return labels


def chunk_sizes(n):
    return [min(ROWS, n - a) for a in range(0, n, ROWS)]


def run_memory(n, args):
    import cclust
    from cclust.consensus_functions.kcc import kcc

    ks, split = partition_params()
    t0 = time.perf_counter()
    L = np.concatenate([label_chunk(c, m, ks, split) for c, m in enumerate(chunk_sizes(n))])
    E = cclust.Ensemble(L)
    del L
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = kcc(E, K, utility=args.utility, n_init=args.n_init, max_iter=args.max_iter,
              random_state=args.seed)
    t_kcc = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return res, t_build, t_kcc, peak


class PeakRSS:
    """Peak of the summed RSS of this process and all its descendants, sampled in a thread."""

    def __init__(self, interval=0.2):
        import psutil

        self.me, self.interval, self.peak = psutil.Process(), interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self):
        import psutil

        total = 0
        for p in [self.me] + self.me.children(recursive=True):
            try:
                total += p.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):  # a process that just exited
                continue
        self.peak = max(self.peak, total)
        return total

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sample()


def run_dask(n, args):
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    from cclust import dask as cdask

    ks, split = partition_params()
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    client = Client(cluster)
    try:
        with PeakRSS() as rss:
            base = rss.sample()
            t0 = time.perf_counter()
            parts = [da.from_delayed(dask.delayed(label_chunk)(c, m, ks, split), shape=(m, R),
                                     dtype=np.int32)
                     for c, m in enumerate(chunk_sizes(n))]
            E = cdask.DaskEnsemble(da.concatenate(parts), chunks=ROWS, client=client)
            t_build = time.perf_counter() - t0
            t0 = time.perf_counter()
            res = cdask.kcc(E, K, utility=args.utility, n_init=args.n_init, max_iter=args.max_iter,
                            random_state=args.seed, client=client)
            t_kcc = time.perf_counter() - t0
    finally:
        client.close()
        cluster.close()
    return res, t_build, t_kcc, rss.peak, base


def one(args):
    import warnings

    warnings.simplefilter("ignore")  # ConvergenceWarning at a small --max-iter
    n = args.one
    if args.path == "memory":
        res, t_build, t_kcc, peak = run_memory(n, args)
        base = None
    else:
        res, t_build, t_kcc, peak, base = run_dask(n, args)
    passes = int(np.sum(res.extras["n_iter_per_restart"] + 1))
    digest = int(np.bitwise_xor.reduce(res.labels * np.arange(1, n + 1, dtype=np.int64) % 1000003))
    print(json.dumps({
        "n": n, "path": args.path, "build_s": t_build, "kcc_s": t_kcc, "peak_rss": peak,
        "base_rss": base, "passes": passes, "passes_per_s": passes / t_kcc, "n_iter": res.n_iter,
        "converged": res.converged, "gamma": res.objective, "digest": digest,
        "labels_sha": __import__("hashlib").sha1(res.labels.tobytes()).hexdigest(),
    }))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--paths", nargs="+", default=["memory", "dask"], choices=["memory", "dask"])
    ap.add_argument("--utility", default="uc")
    ap.add_argument("--n-init", type=int, default=1)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--output", default=None)
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--path", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        return one(args)

    rows = []
    for n in args.sizes:
        for path in args.paths:
            cmd = [sys.executable, __file__, "--one", str(n), "--path", path, "--utility", args.utility,
                   "--n-init", str(args.n_init), "--max-iter", str(args.max_iter), "--seed",
                   str(args.seed), "--workers", str(args.workers)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                print(out.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{path} at n={n} failed")
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(rows[-1], file=sys.stderr)

    lines = [
        (f"KCC (utility {args.utility}, r = {R}, K = {K}, n_init = {args.n_init}, max_iter = "
         f"{args.max_iter}, random init, seed {args.seed}); {cpu_model()}, {os.cpu_count()} cores, "
         f"Python {platform.python_version()}; dask path: LocalCluster({args.workers} worker "
         "processes x 1 thread), labels regenerated chunk by chunk every pass."),
        "",
        "| n | path | KCC time (s) | Lloyd passes | passes / s | peak RSS | labels |",
        "|---|---|---|---|---|---|---|",
    ]
    by_n = {}
    for row in rows:
        by_n.setdefault(row["n"], {})[row["path"]] = row
    for row in rows:
        same = by_n[row["n"]]
        if len(same) == 2:
            ident = "identical" if same["memory"]["labels_sha"] == same["dask"]["labels_sha"] else "DIFFER"
        else:
            ident = "-"
        lines.append(f"| {row['n']:.0e} | {row['path']} | {row['kcc_s']:.1f} | {row['passes']} | "
                     f"{row['passes_per_s']:.2f} | {row['peak_rss'] / 2**30:.2f} GiB | {ident} |")
    write_report("\n".join(lines), args.output)


if __name__ == "__main__":
    main()
