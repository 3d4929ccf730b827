"""Anchor for select_k's item/feature weights: cclust's weighted draws against R's
``sample(n, size, replace = FALSE, prob = w)`` (what ConsensusClusterPlus's weightsItem and
weightsFeature use; Wilkerson & Hayes 2010) and the exact successive-sampling probabilities.

Run: PYTHONPATH=. python benchmarks/check_weighted_sampling.py [draws]
Prints, per subset, the exact probability and the frequencies of R and of cclust.
"""
import itertools
import subprocess
import sys
import tempfile

import numpy as np

from cclust import _monti

WEIGHTS = [1.0, 2.0, 3.0, 4.0, 0.5]
SIZE = 3


def exact(weights, size):
    out = {}
    for order in itertools.permutations(range(len(weights)), size):
        p, left = 1.0, sum(weights)
        for i in order:
            p *= weights[i] / left
            left -= weights[i]
        key = tuple(sorted(order))
        out[key] = out.get(key, 0.0) + p
    return out


def r_frequencies(weights, size, draws):
    script = (f"set.seed(1); w <- c({', '.join(map(str, weights))}); "
              f"s <- replicate({draws}, paste(sort(sample({len(weights)}, {size}, replace = FALSE, prob = w)) - 1, "
              "collapse = ' ')); t <- table(s); cat(paste(names(t), t, sep = ':'), sep = '\\n')")
    with tempfile.TemporaryDirectory() as tmp:
        text = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, check=True, cwd=tmp).stdout
    counts = {}
    for line in text.split("\n"):
        if line.strip():
            key, count = line.rsplit(":", 1)
            counts[tuple(int(v) for v in key.split())] = int(count) / draws
    return counts


def main(draws=40000):
    probabilities = exact(WEIGHTS, SIZE)
    r = r_frequencies(WEIGHTS, SIZE, draws)
    samples = _monti.draw_resamples(len(WEIGHTS), draws, SIZE / len(WEIGHTS), np.random.default_rng(1),
                                    np.array(WEIGHTS))
    ours = {}
    for s in samples:
        ours[tuple(s.tolist())] = ours.get(tuple(s.tolist()), 0) + 1 / draws
    print(f"weights {WEIGHTS}, {SIZE} drawn, {draws} draws each")
    print(f"{'subset':<12} {'exact':>8} {'R':>8} {'cclust':>8}")
    worst_r = worst_ours = 0.0
    for key in sorted(probabilities):
        p = probabilities[key]
        sd = np.sqrt(p * (1 - p) / draws)
        worst_r = max(worst_r, abs(r.get(key, 0) - p) / sd)
        worst_ours = max(worst_ours, abs(ours.get(key, 0) - p) / sd)
        print(f"{str(key):<12} {p:>8.4f} {r.get(key, 0):>8.4f} {ours.get(key, 0):>8.4f}")
    print(f"largest deviation from exact, in standard errors: R {worst_r:.2f}, cclust {worst_ours:.2f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
