"""Time of the mixture methods (bce, em-mixture) as n grows, with the E-steps bce makes.

Four blobs in 3-D (``N(0, 6^2)`` centres, unit noise), an ensemble of ``--r`` k-means partitions
(``cclust.generate("kmeans", X, 4, n_partitions=r, k_range=..., random_state=0)``), fused with
K = 4. Prints wall and CPU time of the consensus call only (generation excluded), the kept
run's EM iterations, bce's number of E-steps over all restarts, and the ARI against the blobs.

    python benchmarks/bench_mixture_scale.py --n 20000 100000 --r 100 --k-range 30 60
    python benchmarks/bench_mixture_scale.py --n 20000 100000 --r 100 --k-range 30 60 --n-init 1 --methods bce
"""
import argparse
import os
import time
import warnings

import numpy as np

import cclust
from cclust.testing import adjusted_rand


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--r", type=int, default=100)
    parser.add_argument("--k-range", type=int, nargs=2, default=None)
    parser.add_argument("--methods", nargs="+", default=["bce", "em-mixture"])
    parser.add_argument("--n-init", type=int, default=None)
    args = parser.parse_args()
    import cclust.consensus_functions.bayesian as bayesian

    e_steps = []
    original = bayesian.e_step

    def counted(*a, **kw):
        e_steps.append(1)
        return original(*a, **kw)

    bayesian.e_step = counted
    for n in args.n:
        rng = np.random.default_rng(0)
        centres = rng.normal(0.0, 6.0, size=(4, 3))
        y = rng.integers(0, 4, size=n)
        X = centres[y] + rng.normal(size=(n, 3))
        E = cclust.generate("kmeans", X, 4, n_partitions=args.r,
                            k_range=None if args.k_range is None else tuple(args.k_range), random_state=0)
        for method in args.methods:
            params = {} if args.n_init is None else {"n_init": args.n_init}
            e_steps.clear()
            load = os.getloadavg()[0]
            wall, cpu = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = cclust.consensus(method, E, 4, random_state=0, **params)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(f"{method} n={n} r={args.r} params={params or 'defaults'} wall={wall:.1f}s cpu={cpu:.1f}s "
                  f"n_iter={result.n_iter} e_steps={len(e_steps) or '-'} ari={adjusted_rand(y, result.labels):.3f} "
                  f"load={load:.1f}", flush=True)


if __name__ == "__main__":
    main()
