"""Slow, literal references of LWEA and LWGP (Huang, Wang & Lai 2018).

Every quantity is computed with Python loops straight from the paper's definitions: cluster
uncertainty (Definitions 3-4, eq. 7-9), ECI (Definition 5, eq. 10), the LWCA matrix
(Definition 7, eq. 15), average-linkage region merging on single objects (Algorithm 1,
eq. 18-24), and the transfer cut's embedding of the locally weighted bipartite graph
(Definition 8; Li et al. 2012) on every object, without merging identical rows. Partition
weights and missing labels follow the reading stated in
``cclust.consensus_functions.locally_weighted``.
"""
import math

import numpy as np


def _weights(r, weights):
    return np.full(r, 1.0 / r) if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)


def clusters(labels):
    """(partition, value, set of members) of every cluster, in cclust's one-hot column order."""
    labels = np.asarray(labels)
    n, r = labels.shape
    out = []
    for j in range(r):
        for value in sorted(set(labels[:, j].tolist()) - {-1}):
            out.append((j, value, {x for x in range(n) if labels[x, j] == value}))
    return out


def uncertainty(labels, weights=None):
    """H(C) = sum_m M w_m H^m(C), H^m over the members of C that pi_m labels (bits)."""
    labels = np.asarray(labels)
    n, r = labels.shape
    w = _weights(r, weights)
    out = []
    for _, _, members in clusters(labels):
        total = 0.0
        for m in range(r):
            seen = [labels[x, m] for x in members if labels[x, m] >= 0]
            h = 0.0
            for value in set(seen):
                p = seen.count(value) / len(seen)
                h -= p * math.log2(p)
            total += r * w[m] * h
        out.append(total)
    return np.array(out)


def eci(labels, theta, weights=None):
    r = np.asarray(labels).shape[1]
    return np.array([math.exp(-h / (theta * r)) for h in uncertainty(labels, weights)])


def lwca(labels, theta, weights=None):
    """a(x, y) = sum_m w_m ECI(Cls_m(x)) [Cls_m(x) = Cls_m(y), both labelled]; 1 on the diagonal."""
    labels = np.asarray(labels)
    n, r = labels.shape
    w = _weights(r, weights)
    index = {(j, v): i for i, (j, v, _) in enumerate(clusters(labels))}
    e = eci(labels, theta, weights)
    A = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            if x == y:
                A[x, y] = 1.0
                continue
            for m in range(r):
                if labels[x, m] >= 0 and labels[x, m] == labels[y, m]:
                    A[x, y] += w[m] * e[index[(m, labels[x, m])]]
    return A


def average_linkage(A, n_clusters):
    """Region merging of Algorithm 1 on single objects: merge the two regions of highest mean
    similarity (eq. 24) until ``n_clusters`` remain. Ties: the first pair in (i, j) order."""
    n = A.shape[0]
    D = np.round(1.0 - A, 12)
    regions = [[x] for x in range(n)]
    while len(regions) > n_clusters:
        best, pair = math.inf, None
        for i in range(len(regions)):
            for j in range(i + 1, len(regions)):
                d = sum(D[x, y] for x in regions[i] for y in regions[j]) / (len(regions[i]) * len(regions[j]))
                if d < best - 1e-12:
                    best, pair = d, (i, j)
        i, j = pair
        regions[i] = regions[i] + regions[j]
        del regions[j]
    labels = np.empty(n, dtype=int)
    for k, region in enumerate(regions):
        labels[region] = k
    return labels


def lwea(labels, n_clusters, theta, weights=None):
    return average_linkage(lwca(labels, theta, weights), n_clusters)


def bipartite_graph(labels, theta, weights=None):
    """Definition 8: B[x, C] = M w_m ECI(C) for x in C (C a cluster of pi_m)."""
    labels = np.asarray(labels)
    n, r = labels.shape
    w = _weights(r, weights)
    e = eci(labels, theta, weights)
    B = np.zeros((n, len(e)))
    for i, (m, _, members) in enumerate(clusters(labels)):
        for x in members:
            B[x, i] = r * w[m] * e[i]
    return B


def tcut_embedding(B, n_clusters):
    """The transfer cut's row-normalised object embedding, step by step on the dense matrix."""
    dx = B.sum(axis=1)
    dx[dx == 0] = 1e-10
    Wy = B.T @ np.diag(1.0 / dx) @ B
    d = Wy.sum(axis=1)
    Dh = np.diag(1.0 / np.sqrt(d))
    nW = Dh @ Wy @ Dh
    nW = (nW + nW.T) / 2
    values, vectors = np.linalg.eigh(nW)
    top = np.argsort(-values)[:n_clusters]
    ncut = Dh @ vectors[:, top]
    U = np.diag(1.0 / dx) @ B @ ncut
    return U / (np.sqrt((U * U).sum(axis=1))[:, None] + 1e-10), values[top]
