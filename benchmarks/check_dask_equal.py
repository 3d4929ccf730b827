"""Check that the Dask backend gives exactly the in-memory results on real data.

For each data set (fashion_mnist and birch1 from ../shared/data/large by default):

1. generation: the ``kmeans`` generator with the threaded backend and on a
   ``dask.distributed.LocalCluster`` (worker processes) -- the two ensembles must be equal;
2. KCC (random and k-means++ init, complete ensemble and one with 20% of the labels removed):
   in memory and through :func:`cclust.dask.kcc` on the same cluster -- labels, n_iter, the
   objective trace and Gamma must be identical.

Not a unit test: tests may not read ../shared. Usage::

    python benchmarks/check_dask_equal.py                       # both data sets
    python benchmarks/check_dask_equal.py --datasets birch1 --partitions 10
"""
import argparse
import os
import sys
import time

import numpy as np

import cclust
from cclust import dask as cdask
from cclust.consensus_functions.kcc import kcc

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "large")
# K of the consensus and the k_range of the basic partitions (kept modest: 784-d k-means is slow)
SETTINGS = {"fashion_mnist": (10, (10, 20)), "birch1": (100, (50, 150))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=list(SETTINGS))
    ap.add_argument("--partitions", type=int, default=20)
    ap.add_argument("--n-init", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunks", type=int, default=16384)
    args = ap.parse_args()

    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    client = Client(cluster)
    failures = 0
    try:
        for name in args.datasets:
            X = np.load(os.path.join(DATA, f"{name}.npz"))["X"]
            K, k_range = SETTINGS[name]
            t0 = time.perf_counter()
            E = cclust.generate("kmeans", X, K, n_partitions=args.partitions, k_range=k_range,
                                random_state=0)
            t_mem = time.perf_counter() - t0
            t0 = time.perf_counter()
            D = cclust.generate("kmeans", X, K, n_partitions=args.partitions, k_range=k_range,
                                random_state=0, client=client, chunks=args.chunks)
            t_dask = time.perf_counter() - t0
            same = D.compute() == E
            failures += not same
            print(f"{name}: generation kmeans r={args.partitions}: threads {t_mem:.1f} s, dask "
                  f"{t_dask:.1f} s, ensembles {'identical' if same else 'DIFFER'}")
            rng = np.random.default_rng(1)
            holes = np.where(rng.random(E.shape) < 0.2, -1, np.asarray(E.labels))
            for label, ens in (("complete", E), ("20% missing", cclust.Ensemble(holes))):
                dens = cdask.from_array(ens, chunks=args.chunks, client=client)
                for init in ("random", "k-means++"):
                    t0 = time.perf_counter()
                    a = kcc(ens, K, init=init, n_init=args.n_init, random_state=0)
                    t_a = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    b = kcc(dens, K, init=init, n_init=args.n_init, random_state=0, client=client)
                    t_b = time.perf_counter() - t0
                    ok = (np.array_equal(a.labels, b.labels) and a.n_iter == b.n_iter
                          and a.objective == b.objective
                          and np.array_equal(a.extras["objective_trace"], b.extras["objective_trace"]))
                    failures += not ok
                    print(f"{name}: kcc uh {label} init={init} n_init={args.n_init}: memory {t_a:.1f} s, "
                          f"dask {t_b:.1f} s, n_iter {a.n_iter}/{b.n_iter}, Gamma {a.objective:.6f}, "
                          f"labels {'identical' if ok else 'DIFFER'}")
    finally:
        client.close()
        cluster.close()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
