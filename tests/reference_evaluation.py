"""Slow, literal references for cclust.evaluation: the validity indices from their papers'
definitions and the rank aggregation by trying every ordering.

Silhouette: Rousseeuw (1987); Calinski-Harabasz: Calinski & Harabasz (1974); Davies-Bouldin:
Davies & Bouldin (1979); compactness: Nguyen & Caruana (2007, eq. 11); the aggregate ranking
minimises the summed Spearman footrule distance (Dwork et al. 2001), the objective diceR's
RankAggreg search (Chiu & Talhouk 2018) approximates.
"""
import itertools
import math

import numpy as np


def _dist(a, b):
    return math.sqrt(sum((float(x) - float(y)) ** 2 for x, y in zip(a, b)))


def silhouette(X, labels):
    n = len(labels)
    total = 0.0
    for i in range(n):
        own = [j for j in range(n) if labels[j] == labels[i] and j != i]
        if not own:
            continue  # a singleton's silhouette is 0
        a = sum(_dist(X[i], X[j]) for j in own) / len(own)
        b = min(sum(_dist(X[i], X[j]) for j in range(n) if labels[j] == c) / sum(1 for j in range(n) if labels[j] == c)
                for c in set(labels) if c != labels[i])
        total += (b - a) / max(a, b)
    return total / n


def _centroid(X, members):
    return [sum(X[j][f] for j in members) / len(members) for f in range(len(X[0]))]


def calinski_harabasz(X, labels):
    n, ks = len(labels), sorted(set(labels))
    mean = _centroid(X, range(n))
    between = within = 0.0
    for c in ks:
        members = [j for j in range(n) if labels[j] == c]
        m = _centroid(X, members)
        between += len(members) * _dist(m, mean) ** 2
        within += sum(_dist(X[j], m) ** 2 for j in members)
    return (between / (len(ks) - 1)) / (within / (n - len(ks)))


def davies_bouldin(X, labels):
    n, ks = len(labels), sorted(set(labels))
    cents, spread = {}, {}
    for c in ks:
        members = [j for j in range(n) if labels[j] == c]
        cents[c] = _centroid(X, members)
        spread[c] = sum(_dist(X[j], cents[c]) for j in members) / len(members)
    return sum(max((spread[a] + spread[b]) / _dist(cents[a], cents[b]) for b in ks if b != a) for a in ks) / len(ks)


def compactness(X, labels):
    n = len(labels)
    total = 0.0
    for c in set(labels):
        members = [j for j in range(n) if labels[j] == c]
        nk = len(members)
        if nk > 1:
            pairs = sum(_dist(X[i], X[j]) for i, j in itertools.combinations(members, 2))
            total += nk * pairs / (nk * (nk - 1) / 2)
    return total / n


def footrule_best_orders(ranks):
    """Every ordering (item indices, best first) of least total footrule distance to the columns."""
    ranks = np.asarray(ranks, dtype=float)
    m = ranks.shape[0]
    best, orders = None, []
    for perm in itertools.permutations(range(m)):
        cost = sum(abs(ranks[item, j] - (p + 1)) for p, item in enumerate(perm) for j in range(ranks.shape[1]))
        if best is None or cost < best - 1e-12:
            best, orders = cost, [perm]
        elif abs(cost - best) <= 1e-12:
            orders.append(perm)
    return best, orders


def footrule_cost(ranks, order):
    ranks = np.asarray(ranks, dtype=float)
    return sum(abs(ranks[item, j] - (p + 1)) for p, item in enumerate(order) for j in range(ranks.shape[1]))


def connectivity(X, labels, n_neighbors=10):
    """clValid's connectivity (Handl, Knowles & Kell 2005), step by step: per object, every
    object sorted by (distance, index) as R's stable ``sort(..., index.return = TRUE)`` does, the
    first dropped, the next L are the neighbours; 1/j for the j-th in another cluster."""
    n = len(labels)
    total = 0.0
    for i in range(n):
        order = sorted(range(n), key=lambda j: (_dist(X[i], X[j]), j))
        for rank, j in enumerate(order[1:n_neighbors + 1], start=1):
            if labels[j] != labels[i]:
                total += 1.0 / rank
    return total
