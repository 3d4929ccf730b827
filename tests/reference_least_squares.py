"""Slow, obviously-correct references of the least-squares consensus algorithms.

Straight from the pseudo-code of Mirkin & Shestakov (sec. 3.1 and 3.2), recomputing every quantity from the
matrix at each step instead of updating it. On similarities whose sums are exact in float64
(e.g. co-associations of eight partitions, multiples of 1/8) they must give bitwise the same
decisions as the compiled core.
"""
import numpy as np


def contribution(sigma, size):
    """f(S) = lambda |S| = Sigma / (|S| - 1), 0 for a singleton."""
    return sigma / (size - 1) if size >= 2 else 0.0


def addremadd_cluster(A, seed, tol=1e-9, max_steps=10_000):
    """AddRemAdd(seed): (membership bool array, f, lambda, trace of f)."""
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0]
    inside = np.zeros(n, dtype=bool)
    inside[seed] = True
    trace = [0.0]
    for _ in range(max_steps):
        members = np.flatnonzero(inside)
        size = members.shape[0]
        # s[i] = sum of A[i, j] over members j != i; a(i, S) = s / |S| (outsider), s / (|S|-1).
        s = A[:, members].sum(axis=1) - np.where(inside, np.diag(A), 0.0)
        sigma = s[members].sum()
        f = contribution(sigma, size)
        outsiders = np.flatnonzero(~inside)
        best_add = outsiders[np.argmax(s[outsiders])] if outsiders.size else -1
        best_rem = members[np.argmin(s[members])] if size >= 2 else -1
        gain_add = (sigma + 2.0 * s[best_add]) / size - f if best_add >= 0 else -np.inf
        gain_rem = contribution(sigma - 2.0 * s[best_rem], size - 1) - f if best_rem >= 0 else -np.inf
        if gain_add > gain_rem or (gain_add == gain_rem and best_add >= 0 and (best_rem < 0 or best_add < best_rem)):
            pick, gain = best_add, gain_add
        else:
            pick, gain = best_rem, gain_rem
        if pick < 0 or not gain > tol:
            break
        inside[pick] = not inside[pick]
        members = np.flatnonzero(inside)
        sub = A[np.ix_(members, members)]
        trace.append(contribution(sub.sum() - np.trace(sub), members.shape[0]))
    members = np.flatnonzero(inside)
    size = members.shape[0]
    sub = A[np.ix_(members, members)]
    sigma = sub.sum() - np.trace(sub)
    lam = sigma / (size * (size - 1)) if size >= 2 else 0.0
    return inside, contribution(sigma, size), lam, np.array(trace)


def addremadd_partition(A, tol=1e-9, max_steps=10_000):
    """Repeated extraction: AddRemAdd from every remaining object, keep the largest f (ties:
    the lowest seed), remove it, repeat. Returns (labels, contributions, seeds)."""
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    remaining = np.arange(n)
    contributions, seeds = [], []
    k = 0
    while remaining.size:
        sub = A[np.ix_(remaining, remaining)]
        best = None
        for seed in range(remaining.size):
            inside, f, _, _ = addremadd_cluster(sub, seed, tol, max_steps)
            if best is None or f > best[0]:
                best = (f, seed, inside)
        f, seed, inside = best
        labels[remaining[inside]] = k
        contributions.append(f)
        seeds.append(remaining[seed])
        remaining = remaining[~inside]
        k += 1
    return labels, np.array(contributions), np.array(seeds)


def agglomerate(G, target_k=0):
    """Mirkin & Shestakov (sec. 3.2) on the gain matrix G (diagonal ignored): find the largest off-diagonal
    entry over active clusters (ties: the first pair in row-major order); join if positive (or,
    with target_k >= 1, while more than target_k clusters remain) by summing rows and columns.
    Returns labels naming each object's cluster by its lowest member, and the merge gains."""
    G = np.array(G, dtype=np.float64)
    n = G.shape[0]
    active = list(range(n))
    owner = np.arange(n)
    gains = []
    while len(active) > 1:
        if target_k and len(active) <= target_k:
            break
        best = None
        for x, r in enumerate(active):
            for t in active[x + 1:]:
                if best is None or G[r, t] > best[0]:
                    best = (G[r, t], r, t)
        g, r, t = best
        if not target_k and not g > 0:
            break
        for o in active:
            if o not in (r, t):
                G[r, o] = G[r, o] + G[t, o]
                G[o, r] = G[r, o]
        active.remove(t)
        owner[owner == t] = r
        gains.append(g)
    return owner, np.array(gains)


def projection_sums(labels):
    """p_ij / T with equal weights, by definition: average over partitions of [same] / N_k."""
    labels = np.asarray(labels)
    n, r = labels.shape
    P = np.zeros((n, n))
    for t in range(r):
        col = labels[:, t]
        same = col[:, None] == col[None, :]
        sizes = np.bincount(col)[col]
        P += same / sizes[None, :] / r
    return P


def ensemble_criterion(A, labels):
    """g(S) of Mirkin & Shestakov (eq. 3) by its definition."""
    A = np.asarray(A, dtype=np.float64)
    return sum(A[np.ix_(labels == k, labels == k)].sum() / (labels == k).sum() for k in np.unique(labels))


def combined_criterion(labels_matrix, labels):
    """f(S, p) of Mirkin & Shestakov (eq. 6) by its definition (equal weights, paper's scale)."""
    labels_matrix = np.asarray(labels_matrix)
    n, T = labels_matrix.shape
    P = projection_sums(labels_matrix) * T
    return sum((P[np.ix_(labels == k, labels == k)] - T / n).sum() for k in np.unique(labels))
