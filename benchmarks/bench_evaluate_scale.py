"""evaluate (diceR's consensus_evaluate) past the dense memory budget: time and peak memory.

Usage: python benchmarks/bench_evaluate_scale.py N [auto|dense|sparse]

Blobs of N objects in 3 dimensions (4 centres), a heterogeneous ensemble of 10 k-means and 10
mini-batch k-means partitions at K = 4, then ``evaluate(X, E, 4, matrix=...)`` under the default
budget (2 GiB: the dense route's 20 n^2 bytes fit up to about n = 10,000). The peak is the growth
of the resident set's high-water mark during the call (cclust.testing._memory), as in
tests/test_memory_guards.py. Prints one JSON line.
"""
import json
import sys
import time

import numpy as np

import cclust
from cclust.evaluation import evaluate
from cclust.testing._memory import _measure


def main(n, matrix):
    rng = np.random.default_rng(0)
    centres = rng.normal(0.0, 6.0, size=(4, 3))
    truth = rng.integers(0, 4, size=n)
    X = centres[truth] + rng.normal(size=(n, 3))
    E = cclust.generate("heterogeneous", X, 4, generators={"kmeans": 10, "minibatch-kmeans": 10}, random_state=0)
    evaluate(X[:80], E.take(objects=np.arange(80)), 4, random_state=0)   # imports and one-off buffers
    box = {}
    start = time.perf_counter()
    peak, source = _measure(lambda: box.setdefault("r", evaluate(X, E, 4, labels_true=truth, matrix=matrix,
                                                                   random_state=0)))
    seconds = time.perf_counter() - start
    result = box["r"]
    print(json.dumps({"n": n, "matrix": matrix, "route": result.route, "seconds": round(seconds, 2),
                      "peak_mib": round(peak / 2**20, 1), "source": source, "order": list(result.order),
                      "ari": [round(float(v), 4) for v in result.external["ari"]]}))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "auto")
