"""Soft KCC (kcc on a SoftEnsemble, NumPy/BLAS) against the compiled hard KCC, in one run.

On the same 0/1 partitions the two must give the same labels and Gamma (checked here); the
ratio is the price of running on membership rows (one BLAS product per partition and pass, over
n x sum K_i floats) instead of the engine's label lookups (O(n r K) per pass). A second row runs
soft KCC on fuzzy c-means memberships of the same data (Bezdek 1981; ``fuzzy-cmeans`` with
``memberships=True``). Peak memory is tracemalloc's (NumPy's allocations included).

Usage::

    python benchmarks/bench_kcc_soft.py                    # pendigits, r = 100, K = 10
    python benchmarks/bench_kcc_soft.py --n-init 3 --output table.md
"""
import argparse
import os
import tracemalloc

import numpy as np

import cclust
from _common import cpu_model, timed, write_table
from cclust.consensus_functions.kcc import kcc
from cclust.soft import SoftEnsemble


def load(name):
    path = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", f"{name}.npz")
    with np.load(path, allow_pickle=False) as data:
        return data["X"], data["y"]


def peak(fn):
    tracemalloc.start()
    out, wall, cpu = timed(fn)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, wall, cpu, top


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="pendigits")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--r", type=int, default=100)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--utilities", nargs="+", default=["uc", "uh", "ucos"])
    parser.add_argument("--output")
    args = parser.parse_args()
    X, y = load(args.data)
    k = args.k
    E = cclust.generate("kmeans", X, k, n_partitions=args.r, k_range=(2, 20), random_state=0)
    S = SoftEnsemble(E)
    F = cclust.generate("fuzzy-cmeans", X, k, n_partitions=args.r, k_range=(2, 20), memberships=True,
                        random_state=0)
    rows = []
    for util in args.utilities:
        hard, t_hard, c_hard, m_hard = peak(lambda: kcc(E, k, utility=util, n_init=args.n_init, random_state=0))
        soft, t_soft, c_soft, m_soft = peak(lambda: kcc(S, k, utility=util, n_init=args.n_init, random_state=0))
        equal = np.array_equal(hard.labels, soft.labels) and hard.objective == soft.objective
        fuzzy, t_fuzzy, c_fuzzy, m_fuzzy = peak(lambda: kcc(F, k, utility=util, n_init=args.n_init, random_state=0))
        ari = cclust.get("ari")
        rows.append(f"| {util} | {t_hard:.2f} ({c_hard:.2f}) | {t_soft:.2f} ({c_soft:.2f}) | {t_soft / t_hard:.1f} "
                    f"| {'yes' if equal else 'NO'} | {m_hard / 2**20:.0f} / {m_soft / 2**20:.0f} "
                    f"| {t_fuzzy:.2f} ({c_fuzzy:.2f}), {m_fuzzy / 2**20:.0f} MiB "
                    f"| {ari(hard.labels, y):.3f} / {ari(fuzzy.labels, y):.3f} |")
    title = (f"Soft vs hard KCC on {args.data} (n = {X.shape[0]}, r = {args.r}, K_i in [2, 20], "
             f"sum K_i = {int(E.n_clusters.sum())}, K = {k}, n_init = {args.n_init}; {cpu_model()}, "
             f"{os.cpu_count()} cores shared with other jobs)")
    write_table(title, ["utility", "hard s (CPU s)", "soft on 0/1 s (CPU s)", "soft / hard",
                        "same labels and Gamma", "peak MiB hard / soft", "soft on fuzzy c-means s (CPU s), peak",
                        "ARI hard / fuzzy"], rows, args.output)


if __name__ == "__main__":
    main()
