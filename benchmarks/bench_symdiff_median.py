"""symdiff-median's integer program: wall time and optimum at n = 36, K = 2, 3, 4.

The inputs: 36 objects drawn (seed 0) from the bundled iris and wine data, a k-means ensemble
of 10 partitions with K_i drawn from 2..4 (seed 0). ``--before COMMIT`` also runs the
symmetric-difference median of an earlier commit (its module, or ``median.py`` before it had
one; read with ``git show``) on the same inputs, so one run gives the before/after table;
the optima must agree (both programs are solved exactly).

    PYTHONPATH=. python benchmarks/bench_symdiff_median.py
    PYTHONPATH=. python benchmarks/bench_symdiff_median.py --before 318dc31
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.optimize  # noqa: F401  (imported before the clock starts, for every version alike)

import cclust
from cclust.consensus_functions import symdiff
from cclust.datasets import load_iris, load_wine


def _has_symdiff_module(commit):
    """Whether the commit has the symmetric-difference median in its own module (it was in median.py)."""
    listing = subprocess.run(["git", "ls-tree", "--name-only", commit, "cclust/consensus_functions/symdiff.py"],
                             capture_output=True, text=True, check=True,
                             cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return bool(listing.stdout.strip())


def _module_at(commit):
    path_then = "cclust/consensus_functions/" + ("symdiff.py" if _has_symdiff_module(commit) else "median.py")
    source = subprocess.run(["git", "show", f"{commit}:{path_then}"], capture_output=True,
                            text=True, check=True, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(tempfile.mkdtemp(prefix="median_"), "median_before.py")
    with open(path, "w") as handle:
        handle.write(source.stdout)
    spec = importlib.util.spec_from_file_location("median_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, help="also time the symmetric-difference median of this commit")
    parser.add_argument("--n", type=int, default=36)
    args = parser.parse_args(argv)
    versions = [("now", symdiff)] + ([(args.before, _module_at(args.before))] if args.before else [])
    print("| data | n | K | " + " | ".join(f"{name} (s)" for name, _ in versions) + " | optimum | same optimum |")
    print("|---|---|---|" + "---|" * len(versions) + "---|---|")
    for name, loader in (("iris", load_iris), ("wine", load_wine)):
        X, _ = loader()
        rows = np.sort(np.random.default_rng(0).choice(X.shape[0], args.n, replace=False))
        E = cclust.generate("kmeans", X[rows], 3, n_partitions=10, k_range=(2, 4), random_state=0)
        for k in (2, 3, 4):
            times, values = [], []
            for _, module in versions:
                start = time.perf_counter()
                result = module.symdiff_median(E, k)
                times.append(time.perf_counter() - start)
                values.append(result.objective)
                assert result.extras["optimal"]
            same = all(abs(v - values[0]) <= 1e-9 * max(1.0, abs(values[0])) for v in values)
            print(f"| {name} | {args.n} | {k} | " + " | ".join(f"{t:.2f}" for t in times)
                  + f" | {values[0]:.6g} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
