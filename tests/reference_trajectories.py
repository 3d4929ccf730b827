"""Slow, literal references of PTA and PTGP (Huang, Lai & Wang 2016), equation by equation.

Loops over microclusters and pairs, no BLAS tricks, no sparse matrices: what the fast code in
cclust.consensus_functions.trajectories is checked against on small ensembles.
"""
import math

import numpy as np


def microclusters(labels):
    """Definition 1: objects with identical label rows (missing labels included), numbered by
    first member. Returns (representative rows, microcluster of each object, sizes)."""
    reps, inverse = [], []
    for row in labels.tolist():
        if row in reps:
            inverse.append(reps.index(row))
        else:
            reps.append(row)
            inverse.append(len(reps) - 1)
    inverse = np.array(inverse)
    return np.array(reps), inverse, np.bincount(inverse)


def mca(reps, weights):
    """Eq. 4-5: a_ij = sum_m w_m [y_i and y_j in the same cluster of pi_m] (missing: not)."""
    m, r = reps.shape
    A = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            A[i, j] = sum(weights[p] for p in range(r) if reps[i, p] >= 0 and reps[i, p] == reps[j, p])
    return A


def elite_graph(A, K):
    """Definitions 5-7: keep w_ij when it reaches the K-th largest link of y_i or of y_j."""
    m = A.shape[0]
    thres = []
    for i in range(m):
        links = sorted((A[i, j] for j in range(m) if j != i), reverse=True)
        thres.append(links[min(K, m - 1) - 1])
    W = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            if i != j and A[i, j] > 0 and (A[i, j] >= thres[i] or A[i, j] >= thres[j]):
                W[i, j] = A[i, j]
    return W


def transition(W, sizes):
    """Definition 8: p_ij = n_j w_ij / sum_{k != i} n_k w_ik (an isolated row stays 0)."""
    m = W.shape[0]
    P = np.zeros((m, m))
    for i in range(m):
        total = sum(sizes[k] * W[i, k] for k in range(m) if k != i)
        for j in range(m):
            if total > 0:
                P[i, j] = sizes[j] * W[i, j] / total
    return P


def trajectories(P, T):
    """Definition 9: PT_i = (p^1_i:, ..., p^T_i:), P^t = P P^{t-1}. Returns (T, M, M)."""
    steps = [P]
    for _ in range(T - 1):
        prev = steps[-1]
        m = P.shape[0]
        nxt = np.zeros((m, m))
        for i in range(m):
            for j in range(m):
                nxt[i, j] = sum(P[i, k] * prev[k, j] for k in range(m))
        steps.append(nxt)
    return np.stack(steps)


def pts(traj, isolated):
    """Definition 10 with eq. 13: cosine of the concatenated trajectories; 1e-20 for an
    isolated microcluster (the authors' code)."""
    T, m, _ = traj.shape
    vec = [np.concatenate([traj[t, i] for t in range(T)]) for i in range(m)]
    S = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            if isolated[i] or isolated[j]:
                S[i, j] = 1e-20
            else:
                S[i, j] = float(vec[i] @ vec[j]) / math.sqrt(float(vec[i] @ vec[i]) * float(vec[j] @ vec[j]))
    return S


def walk(labels, weights, K=None, T=None):
    """Algorithm 1. K = T = min(20, floor(sqrt(M) / 2)), at least 1, by default."""
    reps, inverse, sizes = microclusters(labels)
    m = reps.shape[0]
    default = max(1, min(20, int(math.floor(math.sqrt(m) / 2))))
    K = default if K is None else K
    T = default if T is None else T
    A = mca(reps, weights)
    W = elite_graph(A, K)
    P = transition(W, sizes)
    isolated = np.array([W[i].sum() == 0 for i in range(m)])
    traj = trajectories(P, T)
    return {"reps": reps, "inverse": inverse, "sizes": sizes, "mca": A, "elite_graph": W, "transition": P,
            "trajectories": traj, "pts": pts(traj, isolated), "K": K, "T": T}


def pta(labels, weights, n_clusters, linkage="average", K=None, T=None):
    """Algorithm 2: merge the two most similar regions (eq. 14) until n_clusters remain.
    Returns the labels, the distances 1 - s of the merges made, and the walk."""
    w = walk(labels, weights, K, T)
    S = w["pts"]
    regions = [[i] for i in range(S.shape[0])]

    def sim(a, b):
        values = [S[k, l] for k in a for l in b]
        if linkage == "average":
            return sum(values) / (len(a) * len(b))
        return min(values) if linkage == "complete" else max(values)

    heights = []
    while len(regions) > n_clusters:
        best, pair = -np.inf, None
        for i in range(len(regions)):
            for j in range(i + 1, len(regions)):
                s = sim(regions[i], regions[j])
                if s > best:
                    best, pair = s, (i, j)
        i, j = pair
        heights.append(1.0 - best)
        regions[i] = regions[i] + regions[j]
        del regions[j]
    micro = np.empty(S.shape[0], dtype=int)
    for c, region in enumerate(regions):
        micro[region] = c
    return micro[w["inverse"]], heights, w


def mcbg(reps, S):
    """Eq. 15 and 17: the weight between microcluster y_i and cluster C_j is the mean PTS
    between y_i and the microclusters of C_j. Columns: partitions in order, clusters 0..K_m-1."""
    m, r = reps.shape
    columns = []
    for p in range(r):
        for c in range(int(reps[:, p].max()) + 1):
            members = [k for k in range(m) if reps[k, p] == c]
            columns.append([sum(S[i, k] for k in members) / len(members) for i in range(m)])
    return np.array(columns).T


def transfer_embedding(B, k):
    """Tcut's row embedding from the WHOLE bipartite graph (Li, Wu & Chang 2012): the generalised
    eigenvectors f = (u, v) of W f = mu D f, W = [[0, B], [B^T, 0]], with the k largest mu.
    Their row part is u = D_X^{-1} B v / mu; the authors' code drops the 1 / mu, so u is
    multiplied by mu here before the rows are normalised to unit length (plus 1e-10)."""
    from scipy.linalg import eigh

    nx, ny = B.shape
    W = np.zeros((nx + ny, nx + ny))
    W[:nx, nx:] = B
    W[nx:, :nx] = B.T
    d = W.sum(axis=1)
    mu, f = eigh(W, np.diag(d))
    top = np.argsort(-mu)[:k]
    F = f[:nx, top] * mu[top][None, :]
    return F / (np.sqrt((F * F).sum(axis=1)) + 1e-10)[:, None]
