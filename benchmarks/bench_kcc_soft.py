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


def peak_bytes(fn):
    """Peak bytes tracemalloc sees during ``fn()`` (NumPy's allocations included); a separate
    call, since tracing slows the timed runs."""
    tracemalloc.start()
    fn()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="pendigits")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--r", type=int, default=100)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--utilities", nargs="+", default=["uc", "uh", "ucos", "nulp"])
    parser.add_argument("--fuzzy-r", type=int, default=10, help="fuzzy c-means partitions (0: skip that row)")
    parser.add_argument("--output")
    args = parser.parse_args()
    X, y = load(args.data)
    k = args.k
    E = cclust.generate("kmeans", X, k, n_partitions=args.r, k_range=(2, 20), random_state=0)
    S = SoftEnsemble(E)
    ari = cclust.get("ari")
    rows = []
    for util in args.utilities:
        p = 8.0 if util in ("ulp", "nulp") else None
        run = dict(utility=util, p=p, n_init=args.n_init, random_state=0)
        hard, t_hard, c_hard = timed(lambda: kcc(E, k, **run))
        soft, t_soft, c_soft = timed(lambda: kcc(S, k, **run))
        equal = np.array_equal(hard.labels, soft.labels) and hard.objective == soft.objective
        m_hard = peak_bytes(lambda: kcc(E, k, **{**run, "n_init": 1}))
        m_soft = peak_bytes(lambda: kcc(S, k, **{**run, "n_init": 1}))
        rows.append(f"| {util} | {t_hard:.2f} ({c_hard:.2f}) | {t_soft:.2f} ({c_soft:.2f}) | {t_soft / t_hard:.0f} "
                    f"| {'yes' if equal else 'NO'} | {m_hard / 2**20:.1f} / {m_soft / 2**20:.1f} "
                    f"| {ari(hard.labels, y):.3f} |")
        print(rows[-1], flush=True)
    title = (f"Soft KCC on 0/1 memberships vs hard KCC, {args.data} (n = {X.shape[0]}, r = {args.r} k-means "
             f"partitions, K_i in [2, 20], sum K_i = {int(E.n_clusters.sum())}, K = {k}, n_init = {args.n_init}; "
             f"{cpu_model()}, {os.cpu_count()} cores shared with other jobs; peak memory of one restart, "
             f"beside the {S.stacked().nbytes / 2**20:.0f} MiB membership matrix)")
    if args.fuzzy_r:
        F, t_gen, _ = timed(lambda: cclust.generate("fuzzy-cmeans", X, k, n_partitions=args.fuzzy_r, k_range=(2, 20),
                                                    memberships=True, random_state=0))
        fuzzy, t_fuzzy, c_fuzzy = timed(lambda: kcc(F, k, utility="uc", n_init=args.n_init, random_state=0))
        hardened, t_h, _ = timed(lambda: kcc(F.harden(), k, utility="uc", n_init=args.n_init, random_state=0))
        title += (f"\n\nFuzzy c-means memberships (r = {args.fuzzy_r}, generated in {t_gen:.0f} s): soft KCC (uc) "
                  f"{t_fuzzy:.2f} s ({c_fuzzy:.2f} CPU s), ARI {ari(fuzzy.labels, y):.3f}; the hardened ensemble "
                  f"through the hard KCC {t_h:.2f} s, ARI {ari(hardened.labels, y):.3f}.")
    write_table(title, ["utility", "hard s (CPU s)", "soft s (CPU s)", "soft / hard", "same labels and Gamma",
                        "peak MiB hard / soft", "ARI (both)"], rows, args.output)


if __name__ == "__main__":
    main()
