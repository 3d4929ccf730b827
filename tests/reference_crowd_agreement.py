"""Slow, literal references of WEAC and GP-MGLA (Huang, Lai & Wang 2015).

Every quantity is computed with Python loops from the definitions, read as the authors' MATLAB
code reads them (``NMImax``, ``getNCAI``, ``getWeightedMatrix``, ``makeWeightsBtwCls_SACT``,
``getBipartiteGraph``, ``Tcut_for_clustering_ensemble``): NMI normalised by the larger entropy,
SACT over every cluster linked to both (the pair itself included), the graph with object rows
then cluster rows. Complete label matrices only.
"""
import math

import numpy as np


def _weights(r, weights):
    return np.full(r, 1.0 / r) if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)


def clusters(labels):
    """(partition, set of members) of every cluster, in cclust's one-hot column order."""
    labels = np.asarray(labels)
    n, r = labels.shape
    return [(j, {x for x in range(n) if labels[x, j] == v})
            for j in range(r) for v in sorted(set(labels[:, j].tolist()))]


def untied_cuts(D, method, ks):
    """(k, labels) of SciPy's dendrogram of the full distance matrix D cut at each k of ``ks`` whose
    cut is not tied (the merge above and the merge below differ in height)."""
    from scipy.cluster.hierarchy import cut_tree, linkage
    from scipy.spatial.distance import squareform

    D = np.round(D, 12)
    np.fill_diagonal(D, 0.0)
    Z = linkage(squareform(D, checks=False), method=method)
    n = D.shape[0]
    return [(k, cut_tree(Z, n_clusters=k).ravel()) for k in ks if not np.isclose(Z[n - k, 2], Z[n - k - 1, 2])]


def nmi_max(a, b):
    n = len(a)
    pa = {v: list(a).count(v) / n for v in set(a)}
    pb = {v: list(b).count(v) / n for v in set(b)}
    mi = 0.0
    for u in pa:
        for v in pb:
            p = sum(1 for x in range(n) if a[x] == u and b[x] == v) / n
            if p > 0:
                mi += p * math.log(p / (pa[u] * pb[v]))
    ha = -sum(p * math.log(p) for p in pa.values())
    hb = -sum(p * math.log(p) for p in pb.values())
    return 1.0 if max(ha, hb) == 0 else mi / max(ha, hb)


def ncai(labels):
    labels = np.asarray(labels)
    r = labels.shape[1]
    cai = [sum(nmi_max(labels[:, i], labels[:, j]) for j in range(r) if j != i) / (r - 1) for i in range(r)]
    top = max(cai)
    return np.array([c / top for c in cai]) if top > 0 else np.ones(r)


def partition_weights(labels, beta, weights=None):
    r = np.asarray(labels).shape[1]
    return r * _weights(r, weights) * ncai(labels) ** beta


def weighted_coassociation(labels, beta, weights=None):
    labels = np.asarray(labels)
    n, r = labels.shape
    u = partition_weights(labels, beta, weights)
    S = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            S[x, y] = 1.0 if x == y else sum(u[i] for i in range(r) if labels[x, i] == labels[y, i]) / u.sum()
    return S


def sact(labels, beta, weights=None):
    cl = clusters(labels)
    u = partition_weights(labels, beta, weights)
    c = len(cl)

    def jaccard(a, b):
        return 1.0 if a == b else len(cl[a][1] & cl[b][1]) / len(cl[a][1] | cl[b][1])

    J = [[jaccard(a, b) for b in range(c)] for a in range(c)]
    T = np.zeros((c, c))
    for a in range(c):
        for b in range(c):
            T[a, b] = sum(u[cl[k][0]] * min(J[k][a], J[k][b]) for k in range(c) if J[k][a] > 0 and J[k][b] > 0)
    T /= T.max()
    np.fill_diagonal(T, 1.0)
    return T


def mgla_graph(labels, alpha, beta, weights=None):
    labels = np.asarray(labels)
    n = labels.shape[0]
    cl = clusters(labels)
    u = partition_weights(labels, beta, weights)
    S = sact(labels, beta, weights)
    B = np.zeros((n + len(cl), len(cl)))
    for k, (i, members) in enumerate(cl):
        for x in members:
            B[x, k] = alpha * u[i]
    B[n:] = S
    return B


def tcut_object_embedding(B, n_objects, n_clusters):
    """The transfer cut of the authors' code, step by step: the embedding of the object rows."""
    dx = B.sum(axis=1)
    Wy = B.T @ np.diag(1.0 / dx) @ B
    Dh = np.diag(1.0 / np.sqrt(Wy.sum(axis=1)))
    nW = Dh @ Wy @ Dh
    values, vectors = np.linalg.eigh((nW + nW.T) / 2)
    top = np.argsort(-values)[:n_clusters]
    U = np.diag(1.0 / dx) @ B @ (Dh @ vectors[:, top])
    U = U[:n_objects]
    return U / (np.sqrt((U * U).sum(axis=1))[:, None] + 1e-10), values[top]


# -- the vectorised NumPy loops cclust used before its compiled ones ----------------------------------------
# Same arithmetic, same order of additions per entry: the compiled cores must equal them bit for bit.

def sact_sums_loop(J, cluster_weight):
    """sum_k w_k min(J[k, a], J[k, b]) by a loop over k adding each k's outer minimum (J: sparse CSR)."""
    n_c = J.shape[0]
    total = np.zeros((n_c, n_c))
    for k in range(n_c):
        start, stop = J.indptr[k], J.indptr[k + 1]
        linked = J.indices[start:stop]
        values = J.data[start:stop]
        total[np.ix_(linked, linked)] += cluster_weight[k] * np.minimum.outer(values, values)
    return total


def weighted_block_loop(L, share):
    """sum_j share_j [L[x, j] == L[y, j]] by adding share_j to every cluster's block, partition by partition."""
    m = L.shape[0]
    A = np.zeros((m, m))
    for j in range(L.shape[1]):
        order = np.argsort(L[:, j], kind="stable")
        bounds = np.flatnonzero(np.diff(L[order, j])) + 1
        for members in np.split(order, bounds):
            A[np.ix_(members, members)] += share[j]
    return A
