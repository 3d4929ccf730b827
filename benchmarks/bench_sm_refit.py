"""SM (Hornik & Böhm 2007) on a whole data set's k-means ensemble, for comparing two trees.

clue's SM solves one linear program per object, so ``benchmarks/bench_clue.py`` runs it on a
subset (``--n 1000 --r 20``); this times cclust's ``sm`` alone on every object, with its default
starts and with clue's (one random start), to compare the cclust of two trees in turn:

    PYTHONPATH=<tree before> python benchmarks/bench_sm_refit.py
    PYTHONPATH=<tree after> python benchmarks/bench_sm_refit.py

Prints the wall and CPU seconds, the objective and the iterations of each call. Data:
../shared/data/pendigits.npz (``X``).
"""
import argparse
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="pendigits")
    parser.add_argument("--r", type=int, default=100, help="partitions (K_i drawn from 5..10)")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)

    import cclust

    X = np.load(DATA / f"{args.dataset}.npz")["X"].astype(np.float64)
    E = cclust.generate("kmeans", X, args.k, n_partitions=args.r, k_range=(5, 10), random_state=0)
    where = Path(cclust.__file__).parents[1]
    print(f"cclust from {where}; {args.dataset}: {E.n_samples} objects x {args.r} partitions")
    for label, params in (("default starts", {}), ("clue's start", {"init": "random", "n_init": 1})):
        wall, cpu = time.perf_counter(), time.process_time()
        result = cclust.consensus("sm", E, args.k, random_state=0, **params)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"  sm, {label}: {wall:.2f} s wall, {cpu:.2f} s CPU, objective {result.objective!r}, "
              f"{result.n_iter} iterations")


if __name__ == "__main__":
    main()
