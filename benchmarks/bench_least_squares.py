"""Speed of the least-squares consensus cores: AddRemAdd (and the agglomeration) on n objects.

Data: ``make_gaussian_mixture(n)`` (12-D, 9 Gaussians as in Mirkin & Shestakov), a profile of 50 k-means
runs with k uniform on [6, 12]. Reports, per n and thread count, the time of the compiled
AddRemAdd extraction alone (the co-association formed beforehand), the number of similarity
updates it made (one per element of a similarity row per toggle, over every seed run), updates
per second, and the ratio of those updates to the bound ``sum_k m_k^2 |S_k|`` of running every
remaining seed to its cluster size with O(m) updates per step (m_k objects left before
extraction k: the paper's O(N^2) per cluster and seed-step); below 1 because seed runs whose
touched objects all survive an extraction are reused instead of rerun ("bound" column). The agglomeration
(``ls-agglomerative``) is timed end to end.

Usage::

    python benchmarks/bench_least_squares.py --sizes 2000 10000 --out /tmp/issue6_benchmarks.md
"""
import argparse
import platform
import time

import numpy as np

import cclust
from cclust._ext import _addremadd
from cclust.consensus_functions.least_squares import ls_agglomerative
from cclust.datasets import make_gaussian_mixture


def bound(labels, contributions_sizes):
    """sum over extractions of m_k^2 |S_k| (every remaining seed run |S_k| steps)."""
    total, m = 0, labels.shape[0]
    for size in contributions_sizes:
        total += m * m * size
        m -= size
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--agglomerative-max-n", type=int, default=5000)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = []
    for n in args.sizes:
        X, _ = make_gaussian_mixture(n, random_state=0)
        E = cclust.generate("kmeans", X, 9, n_partitions=50, k_range=(6, 12), init="random", random_state=1)
        start = time.perf_counter()
        A = np.ascontiguousarray(E.coassociation(dtype=np.float32, max_bytes=16 * n * n))
        t_coassoc = time.perf_counter() - start
        reference = None
        for threads in args.threads:
            start = time.perf_counter()
            labels, contributions, _, seeds, n_updates = _addremadd.partition(A, 1e-9, 10 * n + 10, threads)
            elapsed = time.perf_counter() - start
            if reference is None:
                reference = labels
            same = "yes" if np.array_equal(reference, labels) else "NO"
            sizes = np.bincount(labels)
            b = bound(labels, sizes)
            rows.append(f"| addremadd | {n} | {threads} | {elapsed:.2f} | {t_coassoc:.2f} | {len(contributions)} | "
                        f"{n_updates:.3g} | {n_updates / elapsed:.3g} | {n_updates / b:.2f} | {same} |")
            print(rows[-1], flush=True)
        del A
        if n <= args.agglomerative_max_n:
            start = time.perf_counter()
            res = ls_agglomerative(E, max_bytes=32 * n * n)
            elapsed = time.perf_counter() - start
            rows.append(f"| ls-agglomerative | {n} | 1 | {elapsed:.2f} | (in total) | {res.n_clusters} | "
                        f"{res.n_iter} merges | | | |")
            print(rows[-1], flush=True)
    header = [
        f"AddRemAdd and ls-agglomerative speed ({platform.processor() or platform.machine()}, "
        f"OpenMP {'on' if cclust.show_config(file=open('/dev/null', 'w')).get('openmp', False) else 'off'}; "
        "2 cores shared with other jobs, so timings were taken under contention).",
        "",
        "Command: `python benchmarks/bench_least_squares.py --sizes "
        + " ".join(map(str, args.sizes)) + " --threads " + " ".join(map(str, args.threads))
        + (f" --out {args.out}" if args.out else "") + "`",
        "",
        "| method | n | threads | seconds | co-association s | clusters | similarity updates | "
        "updates / s | updates / bound | same labels |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    text = "\n".join(header + rows) + "\n"
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    print(text)


if __name__ == "__main__":
    main()
