"""The scalable route of AddRemAdd (``sample_size``): its speed and its quality cost.

At n = 10,000 (blobs and pendigits, the ensembles of ``bench_least_squares.py``) the exact
method and the sampled route run side by side: ARI of the sampled partition against the exact
one and against the classes, and g(S) of eq. 3 of both. At n = 100,000 (blobs only:
pendigits has 10,992 objects) the sampled route alone, against the classes. Every sampled
run is repeated over ``--seeds`` sample draws (mean and range).

Usage::

    python benchmarks/bench_addremadd_sample.py --out /tmp/addremadd_sample.md
"""
import argparse
import os
import resource
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cclust  # noqa: E402
from _common import cpu_model, timed, write_table  # noqa: E402
from bench_least_squares import problems  # noqa: E402

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[1000, 2000, 5000])
    parser.add_argument("--large-n", type=int, default=100_000)
    parser.add_argument("--large-samples", type=int, nargs="+", default=[5000, 10000])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    ari = cclust.get("ari")
    addremadd = cclust.get("addremadd")
    rows = []

    def report(data, n, sample, runs, exact=None):
        aris = [ari(y_true, r.labels) for r, _, _ in runs]
        vs_exact = "" if exact is None else "{:.3f} ({:.3f}-{:.3f})".format(
            *(lambda v: (np.mean(v), min(v), max(v)))([ari(exact.labels, r.labels) for r, _, _ in runs]))
        g = np.mean([r.objective for r, _, _ in runs])
        g_ratio = "" if exact is None else f"{g / exact.objective:.4f}"
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        rows.append(f"| {data} | {n} | {sample} | {np.mean([w for _, w, _ in runs]):.2f} | "
                    f"{np.mean([c for _, _, c in runs]):.2f} | {np.mean([r.n_clusters for r, _, _ in runs]):.1f} | "
                    f"{np.mean(aris):.3f} ({min(aris):.3f}-{max(aris):.3f}) | {vs_exact} | {g:.6g} | {g_ratio} | "
                    f"{peak:.2f} |")
        print(rows[-1], flush=True)

    for data, y_true, E in problems(10_000):
        exact = timed(lambda: addremadd(E, None, max_bytes=2**32, n_jobs=2))
        report(data, 10_000, "exact", [exact])
        for sample in args.samples:
            runs = [timed(lambda: addremadd(E, None, sample_size=sample, random_state=seed, n_jobs=2))
                    for seed in range(args.seeds)]
            report(data, 10_000, sample, runs, exact[0])
    _, y_true, E = next(problems(args.large_n))  # blobs: pendigits has 10,992 objects
    for sample in args.large_samples:
        runs = [timed(lambda: addremadd(E, None, sample_size=sample, random_state=seed, n_jobs=2))
                for seed in range(args.seeds)]
        report("blobs", args.large_n, sample, runs)
    write_table(f"AddRemAdd's sampled route ({cpu_model()}, {os.cpu_count()} cores shared with other jobs: "
                "timings under load; n_threads = 2). Mean over the sample draws, (min-max) for the ARIs.",
                ["data", "n", "sample", "wall s", "CPU s", "clusters", "ARI vs classes", "ARI vs exact", "g(S)",
                 "g / exact g", "peak RSS (GiB)"], rows, args.out)


if __name__ == "__main__":
    main()
