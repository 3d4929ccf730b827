"""select_k's sparse route against its exact (dense) route on the shared real data sets of
n <= 5000: the same K, and each sampled PAC within its reported standard error of the exact one.

Both routes run the same resample draws and the same inner clusterings (the same
``random_state``), so the sparse route differs from the dense one only by reading a random
sample of the object pairs; below about 1,414 objects its default sample (``0.25 /
pair_tolerance**2`` = 10^6 pairs) covers every pair and the two must agree exactly. Data are
z-scored; K = 2..8; everything else is select_k's default (10 resamples, the reference null of
10 uniform data sets, the predictive p-value). Per data set the script prints both K, the largest
|PAC_sparse - PAC_exact| over the K tried in units of the reported standard error, how many of
the K are within one and two standard errors, and both times (the load average beside them).

    python benchmarks/bench_select_k_exact_sparse.py --data ../shared/data
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cclust import select_k  # noqa: E402

SETS = ("breast_tissue", "iris", "hayes_roth", "wine", "glass", "ecoli", "dermatology", "wdbc", "balance_scale",
        "australian", "breast", "vowel", "yeast", "semeion", "segment", "spambase")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=os.path.join("..", "shared", "data"))
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print("| data set | n | d | K exact | K sparse | pairs read | max abs(PAC diff) / SE | K within 1 SE | "
          "within 2 SE | exact s | sparse s | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in args.sets:
        path = os.path.join(args.data, name + ".npz")
        if not os.path.exists(path):
            print(f"| {name} | missing ({path}) |", flush=True)
            continue
        X = np.load(path)["X"].astype(np.float64)
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        start = time.perf_counter()
        exact = select_k(X, range(2, 9), matrix="dense", random_state=args.seed)
        exact_s = time.perf_counter() - start
        start = time.perf_counter()
        sparse = select_k(X, range(2, 9), matrix="sparse", random_state=args.seed)
        sparse_s = time.perf_counter() - start
        n = X.shape[0]
        diff = np.abs(sparse.pac - exact.pac)
        se = sparse.pac_se
        if (se == 0).all():
            ratio, one, two = ("exact" if diff.max() == 0 else f"{diff.max():.2g} (SE 0)"), "all", "all"
        else:
            z = diff / np.where(se > 0, se, np.inf)
            ratio = f"{z.max():.2f}"
            one, two = f"{int((z <= 1).sum())}/{len(z)}", f"{int((z <= 2).sum())}/{len(z)}"
        print(f"| {name} | {n} | {X.shape[1]} | {exact.best_k} | {sparse.best_k} | "
              f"{sparse.n_pairs} of {n * (n - 1) // 2} | {ratio} | {one} | {two} | {exact_s:.1f} | {sparse_s:.1f} | "
              f"{os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
