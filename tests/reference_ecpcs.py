"""Slow, literal references of ECPCS (Huang, Wang, Peng, Lai & Kwoh 2021, eq. 1-26).

Every quantity is computed with Python loops or the paper's matrix powers, straight from its
equation: the Jaccard graph (eq. 1-3), the transition matrix and its powers (eq. 4-5), the
trajectories and their cosines (eq. 6-8), the enhanced co-association (eq. 12-15; with missing
labels averaged over the partitions labelling both objects), average linkage on the objects
(eq. 16-21, SciPy on the full n x n matrix) and the meta-cluster vote (eq. 25-26). Clusters
are numbered as ``Ensemble(labels).one_hot()``'s columns.
"""
import numpy as np


def clusters(labels):
    """List of (partition, set of members) in one-hot column order (labels 0..K_j-1 per column)."""
    labels = np.asarray(labels)
    n, r = labels.shape
    out = []
    for j in range(r):
        for value in range(int(labels[:, j].max()) + 1):
            out.append((j, {x for x in range(n) if labels[x, j] == value}))
    return out


def jaccard(labels):
    """Eq. 1-3: e_ij = |C_i & C_j| / |C_i | C_j| (1 on the diagonal)."""
    cs = clusters(labels)
    n_c = len(cs)
    S = np.zeros((n_c, n_c))
    for i in range(n_c):
        for j in range(n_c):
            a, b = cs[i][1], cs[j][1]
            S[i, j] = len(a & b) / len(a | b) if a | b else 0.0
    return S


def transition(S):
    """Eq. 4: p_ij = e_ij / sum_{k != i} e_ik for i != j, p_ii = 0 (a row of zeros if isolated)."""
    n_c = S.shape[0]
    P = np.zeros((n_c, n_c))
    for i in range(n_c):
        total = sum(S[i, k] for k in range(n_c) if k != i)
        for j in range(n_c):
            if j != i and total > 0:
                P[i, j] = S[i, j] / total
    return P


def propagated(S, t):
    """Eq. 5-8: cosine of the trajectories [P^(1)_i:, ..., P^(t)_i:] (0 for a zero trajectory)."""
    P = transition(S)
    steps = [P]
    for _ in range(t - 1):
        steps.append(steps[-1] @ P)
    T = np.hstack(steps)  # row i is the trajectory of cluster i
    n_c = S.shape[0]
    Z = np.zeros((n_c, n_c))
    for i in range(n_c):
        for j in range(n_c):
            ni, nj = np.dot(T[i], T[i]), np.dot(T[j], T[j])
            Z[i, j] = np.dot(T[i], T[j]) / np.sqrt(ni * nj) if ni > 0 and nj > 0 else 0.0
    return Z


def enhanced_coassociation(labels, Z, weights=None):
    """Eq. 12-15, weighted, over the partitions labelling both objects."""
    labels = np.asarray(labels)
    n, r = labels.shape
    w = np.ones(r) if weights is None else np.asarray(weights, dtype=float)
    offsets = np.concatenate([[0], np.cumsum(labels.max(axis=0) + 1)])
    B = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            num = den = 0.0
            for j in range(r):
                if labels[x, j] < 0 or labels[y, j] < 0:
                    continue
                den += w[j]
                if labels[x, j] == labels[y, j]:
                    num += w[j]
                else:
                    num += w[j] * Z[offsets[j] + labels[x, j], offsets[j] + labels[y, j]]
            B[x, y] = num / den if den > 0 else 0.0
    return B


def ecpcs_hc(labels, n_clusters, t=20, weights=None):
    """Average linkage of 1 - B on the objects, cut at K (eq. 16-21)."""
    from scipy.cluster.hierarchy import cut_tree, linkage
    from scipy.spatial.distance import squareform

    Z = propagated(jaccard(labels), t)
    B = enhanced_coassociation(labels, Z, weights)
    D = np.round(1.0 - B, 12)
    np.fill_diagonal(D, 0.0)
    tree = linkage(squareform(D, checks=False), method="average")
    return cut_tree(tree, n_clusters=n_clusters).reshape(-1), B, Z


def vote(labels, meta, n_clusters):
    """Eq. 25: Score(x, MC_k) = fraction of the clusters of MC_k that contain x."""
    cs = clusters(labels)
    n = np.asarray(labels).shape[0]
    scores = np.zeros((n, n_clusters))
    for k in range(n_clusters):
        members = [c for c, part in zip(cs, meta) if part == k]
        for x in range(n):
            if members:
                scores[x, k] = sum(1.0 for _, c in members if x in c) / len(members)
    return scores
