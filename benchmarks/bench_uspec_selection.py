"""U-SPEC's hybrid representative selection (Huang, Wang, Wu, Lai & Kwoh 2020, sec. 3.1.1) on
MNIST's test part (n = 10,000, d = 784, raw pixels): the k-means route by BLAS products against
the engine's bounded Lloyd (Hamerly 2010).

``PYTHONPATH=. python benchmarks/bench_uspec_selection.py --route blas`` (or ``exact``, which
forces the engine's bounded Lloyd at every d, the route before issue 18's BLAS change; ``auto``
is the library's choice, BLAS from 32 features): CPU and wall seconds of
``hybrid_representatives(X, 1000, 0)`` and of one ``uspec(X, 10, seed)`` call per seed, and the
NMI (square-root normalisation) of each against the digit labels.
"""
import argparse
import time

import numpy as np

import cclust
from cclust import _spectral, uspec as uspec_module


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--route", choices=["auto", "blas", "exact"], default="auto")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="n_jobs of uspec (default: all)")
    parser.add_argument("--data", default="/work/shared/data/mnist_test.npz")
    args = parser.parse_args()
    if args.route != "auto":
        _spectral.BLAS_MIN_FEATURES = 1 if args.route == "blas" else 10**9
    data = np.load(args.data)
    X, y = data["X"].astype(np.float64), data["y"]
    nmi = cclust.get("nmi")
    R, wall, cpu = timed(lambda: uspec_module.hybrid_representatives(X, 1000, 0))
    print(f"hybrid_representatives(X, 1000, 0): {R.shape[0]} representatives, {cpu:.2f} s CPU, {wall:.2f} s wall")
    scores, cpus, walls = [], [], []
    for seed in range(args.seeds):
        labels, wall, cpu = timed(lambda: uspec_module.uspec(X, 10, seed, n_jobs=args.threads))
        scores.append(nmi(labels, y))
        cpus.append(cpu)
        walls.append(wall)
        print(f"uspec(X, 10, {seed}): NMI {scores[-1]:.4f}, {cpu:.2f} s CPU, {wall:.2f} s wall", flush=True)
    print(f"route {args.route}: NMI {np.mean(scores):.4f} +- {np.std(scores, ddof=1) if len(scores) > 1 else 0.0:.4f}, "
          f"median {np.median(cpus):.2f} s CPU, {np.median(walls):.2f} s wall")


if __name__ == "__main__":
    main()
