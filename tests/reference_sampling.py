"""Exact probabilities of weighted sampling without replacement, the scheme of R's
``sample(n, size, replace = FALSE, prob = w)`` that ConsensusClusterPlus (Wilkerson & Hayes 2010)
uses for ``weightsItem``/``weightsFeature``: the next index is drawn with probability
proportional to its weight among those not drawn yet (successive sampling)."""
import itertools


def subset_probabilities(weights, size):
    """{sorted tuple of indices: probability} by summing over every drawing order."""
    n = len(weights)
    total = {}
    for order in itertools.permutations(range(n), size):
        p, left = 1.0, float(sum(weights))
        for i in order:
            if left <= 0:
                p = 0.0
                break
            p *= weights[i] / left
            left -= weights[i]
        key = tuple(sorted(order))
        total[key] = total.get(key, 0.0) + p
    return total
