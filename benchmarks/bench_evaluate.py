"""cclust.evaluation (diceR's consensus_evaluate/trim/reweigh; Chiu & Talhouk 2018) on shared data.

For each data set (z-scored): a heterogeneous ensemble (kmeans, hierarchical, pam, gmm; 25
partitions each, K = the number of classes), the time of evaluate(), the aggregated order, and
the ARI of kcc and eac fused on the whole ensemble against the trimmed (best 2) and reweighed one.

Run: PYTHONPATH=. python benchmarks/bench_evaluate.py [name ...]   (default: wine wdbc glass ecoli)
"""
import sys
import time

import numpy as np

import cclust
from cclust.evaluation import evaluate, reweigh, trim

DATA = "/work/shared/data/{}.npz"


def main(names):
    print("| data (n) | evaluate s | order (best first) | kcc ARI all / trim+reweigh | eac ARI all / trim+reweigh |")
    print("|---|---|---|---|---|")
    for name in names:
        with np.load(DATA.format(name)) as archive:
            X, y = archive["X"].astype(float), archive["y"]
        X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        k = len(np.unique(y))
        E = cclust.generate("heterogeneous", X, k, n_partitions=100, random_state=0)
        start = time.perf_counter()
        result = evaluate(X, E, k, labels_true=y, random_state=0)
        took = time.perf_counter() - start
        kept = reweigh(trim(E, result, 2), result)
        cells = []
        for method in ("kcc", "eac"):
            all_ = cclust.metrics.ari(y, cclust.consensus(method, E, k, random_state=0).labels)
            best = cclust.metrics.ari(y, cclust.consensus(method, kept, k, random_state=0).labels)
            cells.append(f"{all_:.3f} / {best:.3f}")
        print(f"| {name} ({X.shape[0]}) | {took:.2f} | {', '.join(result.order)} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["wine", "wdbc", "glass", "ecoli"])
