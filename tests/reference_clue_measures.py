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


def mallows(a, b, p=1.0):
    """The transportation LP with unit masses: min sum_jk w_jk c_jk, rows and columns of w summing to 1."""
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
    res = linprog(cost.reshape(-1), A_eq=np.array(equalities), b_eq=np.ones(2 * k), bounds=(0, None),
                  method="highs")
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
