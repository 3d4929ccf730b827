"""LCE (Iam-On, Boongoen, Garrett & Price 2011): reproduction on the shared small UCI sets, and
time and memory at scale.

Modes::

    # LinkCluE's protocol (Iam-On & Garrett 2010, the package's example script): M = 10 k-means
    # clusterings with k = ceil(sqrt(N)) clusters each ("fixed k"), fused at the true number of
    # classes with DC = 0.9 (the paper's) by every similarity and consensus function
    python benchmarks/modern_lce.py --reproduce --runs 10

    # time and peak memory at n = 20,000, r = 100
    python benchmarks/modern_lce.py --scale

No comparison with the authors' code is run: their R package LinkCluE (CRAN archive) cannot be
installed here (no network), and their MATLAB package is not in the shared data.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

import cclust
from cclust.consensus_functions.link_based import lce
from cclust.metrics import ari, nmi

sys.path.insert(0, os.path.dirname(__file__))
from modern_weac import DATA, scale as _scale  # noqa: E402

DATASETS = ("iris", "wine", "glass", "ecoli", "breast", "segment")
VARIANTS = [("cts", "spec"), ("cts", "average"), ("srs", "spec"), ("srs", "average"), ("asrs", "spec"),
            ("asrs", "average")]


def load(name):
    with np.load(os.path.join(DATA, f"{name}.npz"), allow_pickle=False) as f:
        return np.asarray(f["X"], dtype=np.float64), np.asarray(f["y"])


def reproduce(args):
    rows = []
    for name in args.datasets:
        t0 = time.perf_counter()
        X, y = load(name)
        n = X.shape[0]
        k = int(np.unique(y).shape[0])
        k_base = int(math.ceil(math.sqrt(n)))
        scores = {variant: [] for variant in VARIANTS}
        for run in range(args.runs):
            E = cclust.generate("kmeans", X, k_base, n_partitions=10, k_range=(k_base, k_base), random_state=run)
            for similarity, consensus in VARIANTS:
                labels = lce(E, k, similarity=similarity, consensus=consensus, random_state=run,
                             max_bytes=2**32).labels
                scores[(similarity, consensus)].append((nmi(labels, y), ari(labels, y)))
        for (similarity, consensus), values in scores.items():
            v = np.array(values)
            rows.append(f"| {name} | {n} | {similarity} | {consensus} | {v[:, 0].mean():.3f} ± {v[:, 0].std(ddof=1):.3f} "
                        f"| {v[:, 1].mean():.3f} ± {v[:, 1].std(ddof=1):.3f} |")
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print("| data | n | similarity | consensus | NMI ours | ARI ours |\n|---|---|---|---|---|---|")
    print("\n".join(rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reproduce", action="store_true")
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    if args.reproduce:
        reproduce(args)
    if args.scale:
        _scale(args, cases=((20000, 100, "lce", {}), (20000, 100, "lce", {"similarity": "asrs"}),
                            (20000, 100, "lce", {"consensus": "average", "max_bytes": 2**33})))


if __name__ == "__main__":
    main()
