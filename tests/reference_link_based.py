"""Slow, literal references of LCE (Iam-On, Boongoen, Garrett & Price 2011) and of the SimRank
similarities of LinkCluE (Iam-On & Garrett 2010).

Loops straight from the definitions, read as LinkCluE's MATLAB functions read them
(``weightCl``, ``cts``, ``srs``, ``asrs``): the Jaccard graph of clusters without self-loops,
WCT on the pairs of one partition normalised by their maximum, SimRank's simultaneous updates
(``R - 1`` of them) over single objects, ASRS with the exact-1 rule. Complete label matrices.
"""
import numpy as np

from reference_crowd_agreement import _weights, clusters


def index_of(labels):
    """cluster index of (object, partition)."""
    cl = clusters(labels)
    labels = np.asarray(labels)
    out = np.zeros(labels.shape, dtype=int)
    for k, (j, members) in enumerate(cl):
        for x in members:
            out[x, j] = k
    return out


def jaccard(labels):
    cl = clusters(labels)
    c = len(cl)
    J = np.zeros((c, c))
    for a in range(c):
        for b in range(c):
            if a != b:
                J[a, b] = len(cl[a][1] & cl[b][1]) / len(cl[a][1] | cl[b][1])
    return J


def wct(labels):
    cl = clusters(labels)
    J = jaccard(labels)
    c = len(cl)
    W = np.zeros((c, c))
    for a in range(c):
        for b in range(c):
            if a != b and cl[a][0] == cl[b][0]:
                W[a, b] = sum(min(J[a, k], J[b, k]) for k in range(c))
    if W.max() > 0:
        W /= W.max()
    np.fill_diagonal(W, 1.0)
    return W


def asrs_clusters(labels, dc):
    J = jaccard(labels)
    c = J.shape[0]
    nb = [(J[a] > 0).sum() for a in range(c)]
    CS = np.zeros((c, c))
    for a in range(c):
        for b in range(c):
            if a != b and nb[a] * nb[b] > 0:
                CS[a, b] = sum(J[a, k] * J[b, k] for k in range(c)) / (nb[a] * nb[b])
    if CS.max() > 0:
        CS /= CS.max()
    np.fill_diagonal(CS, 1.0)
    return np.array([[1.0 if v == 1.0 else dc * v for v in row] for row in CS])


def srs(labels, dc, R, weights=None):
    """(object similarity, cluster similarity) after R - 1 simultaneous SimRank updates."""
    labels = np.asarray(labels)
    n, r = labels.shape
    w = _weights(r, weights)
    cl = clusters(labels)
    idx = index_of(labels)
    c = len(cl)
    S, C = np.eye(n), np.eye(c)
    for _ in range(R - 1):
        S1 = np.eye(n)
        for x in range(n):
            for y in range(n):
                if x != y:
                    S1[x, y] = dc * sum(w[i] * w[j] * C[idx[x, i], idx[y, j]] for i in range(r) for j in range(r))
        C1 = np.eye(c)
        for a in range(c):
            for b in range(c):
                if a != b:
                    A, B = sorted(cl[a][1]), sorted(cl[b][1])
                    C1[a, b] = dc * sum(S[x, y] for x in A for y in B) / (len(A) * len(B))
        S, C = S1, C1
    return S, C


def cluster_similarity(labels, similarity, dc, R=5, weights=None):
    if similarity == "cts":
        W = dc * wct(labels)
        np.fill_diagonal(W, 1.0)
        return W
    if similarity == "asrs":
        return asrs_clusters(labels, dc)
    return srs(labels, dc, R, weights)[1]


def ra(labels, sim):
    labels = np.asarray(labels)
    n, r = labels.shape
    cl = clusters(labels)
    idx = index_of(labels)
    A = np.zeros((n, len(cl)))
    for x in range(n):
        for k, (j, members) in enumerate(cl):
            A[x, k] = 1.0 if x in members else sim[idx[x, j], k]
    return A


def object_similarity(labels, similarity, dc, R=5, weights=None):
    labels = np.asarray(labels)
    n, r = labels.shape
    w = _weights(r, weights)
    if similarity == "srs":
        return srs(labels, dc, R, weights)[0]
    sim = cluster_similarity(labels, similarity, dc, R, weights)
    idx = index_of(labels)
    S = np.eye(n)
    for x in range(n):
        for y in range(n):
            if x == y:
                continue
            if similarity == "cts":
                S[x, y] = sum(w[i] * (1.0 if labels[x, i] == labels[y, i] else sim[idx[x, i], idx[y, i]])
                              for i in range(r))
            else:
                S[x, y] = sum(w[i] * w[j] * sim[idx[x, i], idx[y, j]] for i in range(r) for j in range(r))
    return S
