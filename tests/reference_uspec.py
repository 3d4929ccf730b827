"""Slow, literal references of U-SPEC and U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020).

Everything is written from the paper's definitions with Python loops or dense matrices, no
shortcut of the library's: the object-cluster graph (eq. 18-19, partition weights on the
edges), the normalised cut of a bipartite graph as a dense eigenproblem of all its n + p
vertices (eq. 7-8, solved without the transfer), the exact K nearest representatives (every
object against every representative), the Gaussian cross-affinity (eq. 5-6, sigma the mean
distance to the K nearest representatives) and the recall of an approximate neighbour list.
"""
import math

import numpy as np


def cluster_graph(labels, weights=None):
    """B~ of eq. 18-19: one row per object, one column per (partition, label) in order of
    partition then label value; entry w_i where the object is in that cluster (missing: none)."""
    labels = np.asarray(labels)
    n, r = labels.shape
    w = np.full(r, 1.0 / r) if weights is None else np.asarray(weights, float) / np.sum(weights)
    columns = [(j, v) for j in range(r) for v in sorted(set(labels[:, j].tolist()) - {-1})]
    B = np.zeros((n, len(columns)))
    for c, (j, v) in enumerate(columns):
        for x in range(n):
            if labels[x, j] == v:
                B[x, c] = w[j]
    return B


def lloyd_best(Y, k, n_init=20, seed=0, max_iter=300):
    """Plain Lloyd from random distinct rows, ``n_init`` times; the lowest sum of squares."""
    rng = np.random.default_rng(seed)
    best, best_sse = None, math.inf
    for _ in range(n_init):
        C = Y[rng.choice(Y.shape[0], size=k, replace=False)].copy()
        labels = None
        for _ in range(max_iter):
            D = ((Y[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
            new = D.argmin(axis=1)
            if labels is not None and np.array_equal(new, labels):
                break
            labels = new
            for j in range(k):
                if (labels == j).any():
                    C[j] = Y[labels == j].mean(axis=0)
        sse = float(((Y - C[labels]) ** 2).sum())
        if sse < best_sse:
            best, best_sse = labels.copy(), sse
    return best


def dense_bipartite_spectral(B, k, n_init=20, seed=0):
    """Normalised cut of the bipartite graph [[0, B], [B^T, 0]] on all n + p vertices (eq. 7-8).

    Returns ``(labels of the n objects, nu)``: nu are the k largest eigenvalues of
    ``D^-1/2 E D^-1/2`` (``1 - gamma`` of eq. 8); the object rows of ``D^-1/2 u`` (the
    generalised eigenvectors), each scaled to unit length (plus 1e-10), are clustered by Lloyd.
    """
    B = np.asarray(B, dtype=float)
    n, p = B.shape
    E = np.zeros((n + p, n + p))
    E[:n, n:] = B
    E[n:, :n] = B.T
    d = E.sum(axis=1)
    d[d == 0] = 1e-10
    S = E / np.sqrt(d)[:, None] / np.sqrt(d)[None, :]
    values, vectors = np.linalg.eigh((S + S.T) / 2)
    top = np.argsort(-values, kind="stable")[:k]
    U = vectors[:, top] / np.sqrt(d)[:, None]
    Y = U[:n]
    Y = Y / (np.sqrt((Y * Y).sum(axis=1))[:, None] + 1e-10)
    return lloyd_best(Y, k, n_init=n_init, seed=seed), values[top]


def exact_nearest_representatives(X, R, k):
    """Indices (n, k) and Euclidean distances of each object's k nearest representatives,
    every pair computed; ties to the lower index."""
    X, R = np.asarray(X, float), np.asarray(R, float)
    idx = np.zeros((X.shape[0], k), dtype=np.int64)
    dist = np.zeros((X.shape[0], k))
    for i in range(X.shape[0]):
        d = [math.sqrt(sum((X[i, t] - R[j, t]) ** 2 for t in range(X.shape[1]))) for j in range(R.shape[0])]
        order = sorted(range(R.shape[0]), key=lambda j: (d[j], j))[:k]
        idx[i] = order
        dist[i] = [d[j] for j in order]
    return idx, dist


def gaussian_affinity(idx, dist, p):
    """Eq. 5-6: b_ij = exp(-||x_i - r_j||^2 / (2 sigma^2)) for the listed neighbours, sigma the
    mean of the listed distances."""
    n, k = idx.shape
    sigma = sum(dist.reshape(-1)) / (n * k)
    B = np.zeros((n, p))
    for i in range(n):
        for t in range(k):
            B[i, idx[i, t]] = math.exp(-dist[i, t] ** 2 / (2 * sigma ** 2))
    return B


def recall(approx, exact):
    """Fraction of the exact neighbours found: mean over objects of |approx & exact| / k."""
    hits = sum(len(set(a.tolist()) & set(e.tolist())) for a, e in zip(approx, exact))
    return hits / exact.size


def column_graph_sums(B):
    """The transfer cut's column side of a dense bipartite graph, literally: d_x = sum_j b_xj
    (1e-10 when 0), W = sum_x b_x^T b_x / d_x, and the column degrees sum_x b_x."""
    B = np.asarray(B, dtype=float)
    p = B.shape[1]
    W, col_degree, row_degree = np.zeros((p, p)), np.zeros(p), []
    for row in B:
        d = row.sum() or 1e-10
        row_degree.append(d)
        W += np.outer(row, row) / d
        col_degree += row
    return W, col_degree, np.array(row_degree)
