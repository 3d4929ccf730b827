"""evaluate over several K (diceR's multi-K mode) on the bundled sets: the K diceR's PAC vote
chooses and the best K by the internal indices, against the number of classes.

Usage: python benchmarks/bench_evaluate_multi_k.py

Per K in 2..6, a heterogeneous ensemble of the z-scored data (hierarchical, pam, gmm and
mini-batch k-means, 10 partitions each on 80% of the objects, diceR's p.item = 0.8; seed K), as
diceR's consensus_cluster(nk = 2:6) builds one per K; labels_true is not passed, so K is chosen
by PAC. Prints one line per data set.
"""
import time

import cclust
from cclust.datasets import load_iris, load_wine
from cclust.evaluation import evaluate


def main():
    for name, load in (("iris", load_iris), ("wine", load_wine)):
        X, y = load()
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        start = time.perf_counter()
        generators = [(g, 10, {"p_item": 0.8}) for g in ("hierarchical", "pam", "gmm", "minibatch-kmeans")]
        Es = {k: cclust.generate("heterogeneous", X, k, generators=generators, random_state=k) for k in range(2, 7)}
        result = evaluate(X, Es, None, random_state=0)
        seconds = time.perf_counter() - start
        votes = {a: result.k_values[int(row.argmin())] for a, row in zip(result.algorithms, result.pac)}
        print(f"{name}: classes {len(set(y.tolist()))}, chosen K (PAC vote) {result.chosen_k[0]} {votes}, "
              f"best K by the indices {result.best_k} ({result.order[0][0]}), top 3 {list(result.order[:3])}, "
              f"{seconds:.1f} s")


if __name__ == "__main__":
    main()
