"""Scale run of nmf (Li, Ding & Jordan 2007) and best-of: time and peak memory at n objects,
r partitions, on a synthetic ensemble (K true groups, each partition a random refinement into
K..2K clusters with 10% of the objects relabelled at random).

    PYTHONPATH=. python benchmarks/modern_nmf.py --scale --n 100000 --r 100
    PYTHONPATH=. python benchmarks/modern_nmf.py --scale --n 100000 --r 100 --methods nmf --n-init 1

Time is in this process; peak memory (RSS) in a child per method (cclust.testing.peak_memory).
"""
import argparse
import os
import time

import numpy as np


def synthetic(n, r, k, seed):
    from cclust import Ensemble

    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    cols = []
    for _ in range(r):
        ki = int(rng.integers(k, 2 * k + 1))
        lab = y.copy()
        for extra in range(k, ki):
            g = int(rng.integers(0, k))
            lab[(y == g) & (rng.random(n) < 0.5)] = extra
        noise = rng.random(n) < 0.1
        lab[noise] = rng.integers(0, ki, int(noise.sum()))
        cols.append(lab)
    return y, Ensemble(np.column_stack(cols))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--r", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--methods", default="nmf,best-of")
    ap.add_argument("--n-init", type=int, default=None, help="nmf's n_init (default: the method's)")
    ap.add_argument("--no-time", action="store_true", help="peak memory only")
    args = ap.parse_args()
    import cclust
    from cclust.metrics import ari
    from cclust.testing import peak_memory

    y, E = synthetic(args.n, args.r, args.k, 0)
    print("| method | n | r | K | time (s) | CPU time, all threads (s) | load average at start | peak memory (MB) "
          "| ARI vs truth | n_iter |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    X = np.zeros((args.n, 1))   # peak_memory's children read an X; neither method uses it
    for name in args.methods.split(","):
        params = {"n_init": args.n_init} if name == "nmf" and args.n_init else {}
        res, dt, cpu = None, float("nan"), float("nan")
        load = os.getloadavg()[0]
        if not args.no_time:
            t, c = time.perf_counter(), time.process_time()
            res = cclust.consensus(name, E, args.k, random_state=0, **params)
            dt, cpu = time.perf_counter() - t, time.process_time() - c
        mem = peak_memory([(X, E)], [(name, params)], n_clusters=args.k)[0][name]
        mb = mem["bytes"] / 2**20 if "bytes" in mem else float("nan")
        score = ari(res.labels, y) if res is not None else float("nan")
        print(f"| {name}{' n_init=%d' % args.n_init if params else ''} | {args.n} | {args.r} | {args.k} | {dt:.1f} | "
              f"{cpu:.1f} | {load:.1f} | {mb:.0f} | {score:.3f} | {res.n_iter if res is not None else '-'} |", flush=True)


if __name__ == "__main__":
    main()
