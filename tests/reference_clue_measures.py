"""Slow, literal references for clue's partition measures (Hornik 2005), the medoid and BagClust1.

Written from the definitions, not from cclust's code: matchings by trying every permutation of
the columns, pair counts by looping over pairs, Katz-Powell as the correlation of the n x n
co-membership matrices, Boorman-Arabie A by breadth-first search over single-object moves,
the Mallows distance as the transportation LP of Zhou, Li & Zha (2005). Only for tiny inputs.
"""
import itertools
import math
from collections import deque

import numpy as np
from scipy.optimize import linprog


def memberships(partition, k=None):
    """A labelling (1-D) as a one-hot matrix, or a membership matrix, padded to k columns."""
    partition = np.asarray(partition)
    if partition.ndim == 1:
        values = sorted(set(partition.tolist()))
        M = np.array([[1.0 if v == w else 0.0 for w in values] for v in partition.tolist()])
    else:
        M = partition.astype(float)
    k = M.shape[1] if k is None else k
    return np.hstack([M, np.zeros((M.shape[0], k - M.shape[1]))])


def hard(partition):
    """Nearest hard partition: the first column of largest membership."""
    partition = np.asarray(partition)
    if partition.ndim == 1:
        return [sorted(set(partition.tolist())).index(v) for v in partition.tolist()]
    return [int(max(range(row.shape[0]), key=lambda j: (row[j], -j))) for row in partition]


def _pair(a, b):
    k = max(memberships(a).shape[1], memberships(b).shape[1])
    return memberships(a, k), memberships(b, k)


def _permutations(k):
    return [list(p) for p in itertools.permutations(range(k))]


def euclidean(a, b):
    A, B = _pair(a, b)
    return min(math.sqrt(sum((A[i, j] - B[i, p[j]]) ** 2 for i in range(A.shape[0]) for j in range(A.shape[1])))
               for p in _permutations(A.shape[1]))


def manhattan(a, b):
    A, B = _pair(a, b)
    return min(sum(abs(A[i, j] - B[i, p[j]]) for i in range(A.shape[0]) for j in range(A.shape[1]))
               for p in _permutations(A.shape[1]))


def mallows(a, b, p=1.0, alpha=None, beta=None):
    """The transportation LP: min sum_jk w_jk c_jk, rows of w summing to alpha, columns to beta (ones)."""
    A, B = _pair(a, b)
    k = A.shape[1]
    cost = np.array([[sum(abs(A[i, j] - B[i, l]) ** p for i in range(A.shape[0])) for l in range(k)]
                     for j in range(k)])
    equalities = []
    for j in range(k):
        row = np.zeros((k, k))
        row[j, :] = 1
        equalities.append(row.reshape(-1))
        col = np.zeros((k, k))
        col[:, j] = 1
        equalities.append(col.reshape(-1))
    alpha = np.ones(k) if alpha is None else np.asarray(alpha, float)
    beta = np.ones(k) if beta is None else np.asarray(beta, float)
    b_eq = np.ravel(np.column_stack([alpha, beta]))  # the rows above alternate: row j, column j
    res = linprog(cost.reshape(-1), A_eq=np.array(equalities), b_eq=b_eq, bounds=(0, None), method="highs")
    return max(res.fun, 0.0) ** (1.0 / p)


def angle(a, b):
    A, B = _pair(a, b)
    norm = math.sqrt(float((A * A).sum()) * float((B * B).sum()))
    return max(sum(A[i, j] * B[i, p[j]] for i in range(A.shape[0]) for j in range(A.shape[1]))
               for p in _permutations(A.shape[1])) / norm


def diag(a, b):
    A, B = _pair(a, b)
    return max(sum(A[i, j] * B[i, p[j]] for i in range(A.shape[0]) for j in range(A.shape[1]))
               for p in _permutations(A.shape[1])) / A.shape[0]


def _pair_counts(a, b):
    a, b = hard(a), hard(b)
    n = len(a)
    both = in_a = in_b = 0
    for i in range(n):
        for j in range(i + 1, n):
            both += a[i] == a[j] and b[i] == b[j]
            in_a += a[i] == a[j]
            in_b += b[i] == b[j]
    return n, both, in_a, in_b


def fowlkes_mallows(a, b):
    _, both, in_a, in_b = _pair_counts(a, b)
    if in_a == 0 or in_b == 0:
        return 1.0 if in_a == in_b else 0.0
    return both / math.sqrt(in_a * in_b)


def jaccard(a, b):
    _, both, in_a, in_b = _pair_counts(a, b)
    union = in_a + in_b - both
    return both / union if union else 1.0


def katz_powell(a, b):
    a, b = hard(a), hard(b)
    Ca = np.array([[float(x == y) for y in a] for x in a]).reshape(-1)
    Cb = np.array([[float(x == y) for y in b] for x in b]).reshape(-1)
    if Ca.std() == 0 or Cb.std() == 0:
        return 1.0 if Ca.std() == Cb.std() else 0.0
    return float(np.corrcoef(Ca, Cb)[0, 1])


def purity(a, b):
    a, b = hard(a), hard(b)
    total = 0
    for cluster in set(a):
        inside = [b[i] for i in range(len(a)) if a[i] == cluster]
        total += max(inside.count(v) for v in set(inside))
    return total / len(a)


def _canonical(labels):
    seen = {}
    return tuple(seen.setdefault(v, len(seen)) for v in labels)


def boorman_arabie_a(a, b):
    """Breadth-first search: fewest moves of one object to another or a new cluster from a to b."""
    start, goal = _canonical(hard(a)), _canonical(hard(b))
    n = len(start)
    distance = {start: 0}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if state == goal:
            return float(distance[state])
        for i in range(n):
            for target in range(max(state) + 2):
                if target != state[i]:
                    nxt = _canonical(state[:i] + (target,) + state[i + 1:])
                    if nxt not in distance:
                        distance[nxt] = distance[state] + 1
                        queue.append(nxt)
    raise AssertionError("unreachable")


def boorman_arabie_d(a, b):
    n, both, in_a, in_b = _pair_counts(a, b)
    pairs = n * (n - 1) // 2
    return (in_a + in_b - 2 * both) / pairs if pairs else 0.0


def _comembership(partition):
    """The n x n co-membership matrix M M^T, entry by entry."""
    M = memberships(partition)
    n = M.shape[0]
    return [[math.fsum(M[x, c] * M[y, c] for c in range(M.shape[1])) for y in range(n)] for x in range(n)]


def comembership(a, b):
    Ca, Cb = _comembership(a), _comembership(b)
    n = len(Ca)
    return math.sqrt(math.fsum((Ca[x][y] - Cb[x][y]) ** 2 for x in range(n) for y in range(n)))


def _classes(partition):
    """clue's classes of a partition: distinct labels, or the columns of positive total membership."""
    M = memberships(partition)
    return M[:, [j for j in range(M.shape[1]) if M[:, j].sum() > 0]]


def gv1(a, b):
    """Every one-to-one matching of the smaller side's columns into the larger side's; the
    matched squared column distances summed, the larger side's other columns ignored."""
    A, B = _classes(a), _classes(b)
    if A.shape[1] > B.shape[1]:
        A, B = B, A
    best = min(math.fsum((A[i, j] - B[i, perm[j]]) ** 2 for j in range(A.shape[1]) for i in range(A.shape[0]))
               for perm in itertools.permutations(range(B.shape[1]), A.shape[1]))
    return math.sqrt(best)


def symdiff(a, b):
    n, both, in_a, in_b = _pair_counts(a, b)
    return float(in_a + in_b - 2 * both)


def boorman_arabie_c(a, b):
    """K_a + K_b - 2 K_join: the join by merging the classes of any two objects together in a or b."""
    ha, hb = hard(a), hard(b)
    n = len(ha)
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for x in range(n):
        for y in range(x + 1, n):
            if ha[x] == ha[y] or hb[x] == hb[y]:
                parent[find(x)] = find(y)
    k_join = len({find(x) for x in range(n)})
    return float(_classes(a).shape[1] + _classes(b).shape[1] - 2 * k_join)


def boorman_arabie_e(a, b):
    """1 - I / H(meet), probabilities of the classes, of their pairs and of the meet's classes."""
    ha, hb = hard(a), hard(b)
    n = len(ha)
    pa = {u: ha.count(u) / n for u in set(ha)}
    pb = {v: hb.count(v) / n for v in set(hb)}
    joint = {}
    for u, v in zip(ha, hb):
        joint[(u, v)] = joint.get((u, v), 0) + 1 / n
    mutual = math.fsum(p * math.log(p / (pa[u] * pb[v])) for (u, v), p in joint.items())
    entropy = -math.fsum(p * math.log(p) for p in joint.values())
    return 1.0 - mutual / entropy if entropy > 0 else 0.0


def prediction_strength(a, b):
    """For each class of a with two or more objects, the share of its pairs together in b; the least."""
    ha, hb = hard(a), hard(b)
    shares = []
    for cls in set(ha):
        members = [x for x in range(len(ha)) if ha[x] == cls]
        pairs = [(x, y) for x in members for y in members if x < y]
        if pairs:
            shares.append(sum(hb[x] == hb[y] for x, y in pairs) / len(pairs))
    return min(shares) if shares else 1.0


def soft_vi(a, b):
    """clue's VI of membership matrices: entropies of the mean memberships minus twice their
    'mutual information' from the mean products of memberships."""
    A, B = memberships(a), memberships(b)
    n = A.shape[0]
    ma = [math.fsum(A[:, j]) / n for j in range(A.shape[1])]
    mb = [math.fsum(B[:, l]) / n for l in range(B.shape[1])]
    h = -math.fsum(m * math.log(m) for m in ma + mb if m > 0)
    mutual = 0.0
    for j in range(A.shape[1]):
        for l in range(B.shape[1]):
            g = math.fsum(A[x, j] * B[x, l] for x in range(n)) / n
            if g > 0 and ma[j] * mb[l] > 0:
                mutual += g * math.log(g / (ma[j] * mb[l]))
    return h - 2 * mutual


def medoid(columns, distance):
    """Index of the first column of least summed distance to all columns."""
    sums = [sum(distance(c, d) for d in columns) for c in columns]
    return int(np.argmin(sums))


def matched_votes(reference, partitions, k):
    """BagClust1's votes: each partition relabelled by the permutation agreeing most with the reference."""
    n = len(reference)
    votes = np.zeros((n, k), dtype=np.int64)
    for labels in partitions:
        values = sorted(set(labels))
        best, best_perm = -1, None
        for perm in itertools.permutations(range(k), len(values)):
            agree = sum(1 for o in range(n) if perm[values.index(labels[o])] == reference[o])
            if agree > best:
                best, best_perm = agree, perm
        for o in range(n):
            votes[o, best_perm[values.index(labels[o])]] += 1
    return votes


def cssd(a, b, L, alpha=None, beta=None):
    """Zhou, Li & Zha's CSSD: the transportation LP over w written out, minimising
    sum_jl (1 - 2 w_jl / (alpha_j + beta_l)) L_jl C_jl with C_jl = sum_x u_xj v_xl."""
    A, B = _classes(a), _classes(b)
    ka, kb = A.shape[1], B.shape[1]
    C = np.array([[math.fsum(A[x, j] * B[x, l] for x in range(A.shape[0])) for l in range(kb)] for j in range(ka)])
    L = np.asarray(L, float)
    alpha = np.ones(ka) if alpha is None else np.asarray(alpha, float)
    beta = np.ones(kb) if beta is None else np.asarray(beta, float)
    gain = np.array([[2 * L[j, l] * C[j, l] / (alpha[j] + beta[l]) for l in range(kb)] for j in range(ka)])
    rows = [np.eye(ka)[j].repeat(kb) for j in range(ka)]
    cols = [np.tile(np.eye(kb)[l], ka) for l in range(kb)]
    res = linprog(-gain.reshape(-1), A_eq=np.array(rows + cols), b_eq=np.concatenate([alpha, beta]),
                  bounds=(0, None), method="highs")
    return float((L * C).sum() + res.fun)
