"""Slow, obviously correct KCC pieces straight from Wu et al. 2015 (Table 1, eq. 1 and 4 of Becerra Tomé's review), for tests.

The Lloyd loop itself is reference_kmeans.lloyd on the explicit one-hot matrix; this module adds
what KCC puts around it: the utilities' mu, the normalisers |mu(P_i)| and Gamma.
"""
import math

import numpy as np

import reference_kmeans

FAMILY = {"uc": 0, "uh": 1, "ucos": 2, "ulp": 3}


def mu(family, dist, p=None):
    if family == "uc":
        return sum(v * v for v in dist)
    if family == "uh":
        return sum(v * math.log2(v) for v in dist if v > 0)
    if family == "ucos":
        return math.sqrt(sum(v * v for v in dist))
    return sum(v ** p for v in dist) ** (1.0 / p)


def partition_distribution(column):
    labelled = [v for v in column if v >= 0]
    k = max(labelled) + 1
    return [labelled.count(j) / len(labelled) for j in range(k)]


def effective_weights(labels, weights, family, normalized, p=None):
    out = []
    for i in range(labels.shape[1]):
        if not normalized:
            out.append(weights[i])
            continue
        norm = abs(mu(family, partition_distribution(labels[:, i]), p))
        out.append(weights[i] / norm if norm > 0 else 0.0)
    return np.array(out)


def gamma(labels, weights, consensus, family, normalized, p=None):
    """sum_i w_i U(pi, pi_i) with U = sum_k p_k+ mu(P_k^(i)) - mu(P^(i)), over labelled objects."""
    total = 0.0
    for i in range(labels.shape[1]):
        col = labels[:, i]
        keep = [x for x in range(len(col)) if col[x] >= 0]
        k_i = max(col) + 1
        P = [sum(1 for x in keep if col[x] == j) / len(keep) for j in range(k_i)]
        u = -mu(family, P, p)
        for k in sorted(set(consensus[x] for x in keep)):
            members = [x for x in keep if consensus[x] == k]
            Pk = [sum(1 for x in members if col[x] == j) / len(members) for j in range(k_i)]
            u += len(members) / len(keep) * mu(family, Pk, p)
        if normalized:
            norm = abs(mu(family, P, p))
            u = u / norm if norm > 0 else 0.0
        total += weights[i] * u
    return total


def kcc_from(labels, weights, initial, n_clusters, family, normalized, p=None, max_iter=100, tol=1e-6):
    """Reference KCC from given initial labels: (labels, kmeans objective, trace)."""
    n = labels.shape[0]
    offsets = np.concatenate([[0], np.cumsum(labels.max(0) + 1)]).astype(np.int64)
    w = effective_weights(labels, weights, family, normalized, p)
    out = reference_kmeans.lloyd(np.empty((n, 0)), 0.0, labels.astype(np.int32), offsets, w,
                                 FAMILY[family], p or 0.0, initial.astype(np.int32), n_clusters,
                                 max_iter, tol)
    return out[0], out[4], out[1]
