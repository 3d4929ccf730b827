"""Slow, literal references of the median-partition methods (Hornik 2005's clue): dense membership
matrices, matchings by trying every permutation, clue's update formulas written out as in its R
sources, per-object linear programs through scipy.optimize.linprog, set partitions enumerated."""
from itertools import permutations

import numpy as np
from scipy.optimize import linprog


def one_hot(labels):
    labels = np.asarray(labels)
    values = np.unique(labels)
    return (labels[:, None] == values[None, :]).astype(float)


def pad(U, k):
    return np.hstack([U, np.zeros((U.shape[0], k - U.shape[1]))]) if U.shape[1] < k else U


def best_permutation(U, M, cost):
    """Columns of U (padded to M's width) permuted to minimise cost(U[:, p], M): every permutation."""
    k = M.shape[1]
    Up = pad(U, k)
    best = None
    for p in permutations(range(k)):
        c = cost(Up[:, list(p)], M)
        if best is None or c < best[0] - 1e-12:
            best = (c, Up[:, list(p)])
    return best


def sq(A, B):
    return float(((A - B) ** 2).sum())


def l1(A, B):
    return float(np.abs(A - B).sum())


def criterion(Us, w, M, cost):
    """sum_i w_i min_P cost(U_i P, M), w normalised."""
    w = np.asarray(w, float) / np.sum(w)
    return sum(wi * best_permutation(U, M, cost)[0] for U, wi in zip(Us, w))


def project_leading(M, k):
    y = M[:, :k]
    out = np.zeros_like(M)
    out[:, :k] = np.maximum(y + (1 - y.sum(1, keepdims=True)) / k, 0)
    return out


def aos(Us, w, k, start, kind, max_iter=100, tol=np.sqrt(np.finfo(float).eps)):
    """clue's .cl_consensus_partition_AOS for SE, HE, HM (SM: see l1_row_fit) with one start."""
    w = np.asarray(w, float) / np.sum(w)
    k_all = max(k, max(U.shape[1] for U in Us))
    cost = sq if kind in ("SE", "HE") else l1
    M = pad(start, k_all)
    matched = [best_permutation(U, M, cost)[1] for U in Us]
    old = sum(wi * cost(P, M) for wi, P in zip(w, matched))
    new = old
    for _ in range(max_iter):
        mean = sum(wi * P for wi, P in zip(w, matched))
        if kind == "SE":
            M = project_leading(mean, k) if k < k_all else mean
        elif kind == "SM":
            M = np.zeros((M.shape[0], k_all))
            for x in range(M.shape[0]):
                M[x, :k] = l1_row_fit([P[x, :k] for P in matched], w)
        else:
            ids = mean[:, :k].argmax(1)
            M = np.zeros_like(mean)
            M[np.arange(M.shape[0]), ids] = 1
        matched = [best_permutation(U, M, cost)[1] for U in Us]
        new = sum(wi * cost(P, M) for wi, P in zip(w, matched))
        if abs(old - new) < tol * (abs(old) + tol):
            break
        old = new
    return M, new


def l1_row_fit(vs, w):
    """clue's .l1_fit_M for one object: min sum_b w_b |v_b - m|_1, m >= 0, sum m = 1, by linprog
    (variables: m, then positive and negative parts per partition)."""
    B, k = len(vs), len(vs[0])
    nvar = k + 2 * B * k
    c = np.concatenate([np.zeros(k)] + [np.full(2 * k, wb) for wb in w])
    A_eq, b_eq = [], []
    for b, v in enumerate(vs):
        for j in range(k):
            row = np.zeros(nvar)
            row[j] = 1.0
            row[k + 2 * b * k + j] = 1.0        # pos
            row[k + 2 * b * k + k + j] = -1.0   # neg: v - m = pos - neg
            A_eq.append(row)
            b_eq.append(v[j])
    row = np.zeros(nvar)
    row[:k] = 1
    A_eq.append(row)
    b_eq.append(1.0)
    res = linprog(c, A_eq=np.array(A_eq), b_eq=np.array(b_eq), bounds=[(0, None)] * nvar, method="highs")
    return res.x[:k]


def l1_row_value(vs, w, m):
    return float(sum(wb * np.abs(np.asarray(v) - m).sum() for v, wb in zip(vs, w)))


def dwh(Us, w, k, order):
    """clue's .cl_consensus_partition_DWH with a given order."""
    w = np.asarray(w, float)
    Us = [Us[i] for i in order]
    w = w[list(order)]
    k_max = max(k, max(U.shape[1] for U in Us))
    s = w / np.cumsum(w)
    M = pad(Us[0], k_max)
    for b in range(1, len(Us)):
        # ties (a cluster sharing nothing with the occupied columns) go to an empty column
        empty = M.sum(0) == 0
        _, P = best_permutation(Us[b], M, lambda A, B: -float((A * B).sum()) - 1e-9 * float(A[:, empty].sum() > 0)
                                * float((A[:, empty] > 0).any(0).sum()))
        M = (1 - s[b]) * M + s[b] * P
        if k < k_max:
            M = project_leading(M, k)
    return M[:, :k]


def gv3_loss(Us, w, M):
    w = np.asarray(w, float) / np.sum(w)
    Y = sum(wi * U @ U.T for wi, U in zip(w, Us))
    return float(((Y - M @ M.T) ** 2).sum())


def set_partitions(n, k):
    """Every partition of range(n) into exactly k blocks, as label vectors (restricted growth strings)."""
    def rec(prefix, used):
        if len(prefix) == n:
            if used == k:
                yield list(prefix)
            return
        remaining = n - len(prefix)
        if used + remaining < k:
            return
        for c in range(min(used + 1, k)):
            yield from rec(prefix + [c], max(used, c + 1))
    yield from rec([], 0)


def symdiff_distance(Us, w, labels):
    """sum_i w_i sum_{x<y} |C_i(x, y) - C(x, y)| with C_i = U_i U_i^T (expected co-membership)."""
    w = np.asarray(w, float) / np.sum(w)
    labels = np.asarray(labels)
    n = labels.size
    total = 0.0
    for wi, U in zip(w, Us):
        Ci = U @ U.T
        for x in range(n):
            for y in range(x + 1, n):
                total += wi * abs(Ci[x, y] - float(labels[x] == labels[y]))
    return total


def symdiff_brute(Us, w, n, k):
    return min(symdiff_distance(Us, w, lab) for lab in set_partitions(n, k))


def weighted_cap(m, alpha):
    """One row m (summing to more than one) projected onto {x >= 0, sum x <= 1} in the norm
    weighted by alpha, from the KKT conditions x_j = max(m_j - tau / alpha_j, 0) (zero-weight
    columns fixed at max(m_j, 0)): tau by bisection until the row sums to one."""
    def row(tau):
        return [max(v - tau / a, 0.0) if a > 0 else max(v, 0.0) for v, a in zip(m, alpha)]
    lo, hi = 0.0, 1.0
    while sum(row(hi)) > 1.0 and hi < 1e12:
        hi *= 2.0
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(row(mid)) > 1.0 else (lo, mid)
    return row(hi)
