"""Slow, obviously correct NumPy reference of the K-means engine (cclust/_ext/kmeans.hpp).

It builds the explicit one-hot matrix of the basic partitions, computes centroids as column means
per block, evaluates the point-to-centroid distances of KCC's Table 1 (Wu et al.) in their
textbook form on the explicit one-hot vectors with plain loops, and runs the textbook Lloyd loop
with the engine's tie, stopping and empty-cluster rules. Only for small inputs.

The rows arguments are the same as the compiled wrappers':
``X, dense_weight, labels, offsets, weights, distance, p``; ``object_weights`` and ``row_scale``
(keywords, None = all 1) are the weighted objects of the engine's header: centres are weighted
means, the objective a weighted sum, and with ``row_scale`` object x is the row s_x b_x (zero
blocks where it is unlabelled) under plain squared Euclidean distance.
"""
import math

import numpy as np

UC, UH, UCOS, ULP = 0, 1, 2, 3
UH_SMOOTHING = 2.2e-16
CHUNK = 4096  # the engine's kChunk: sums are taken per chunk, then over chunks in order


def one_hot(labels, offsets):
    """(n, offsets[-1]) 0/1 matrix; a missing label (-1) leaves its block all zero."""
    n, r = labels.shape
    B = np.zeros((n, int(offsets[-1])))
    for x in range(n):
        for i in range(r):
            if labels[x, i] >= 0:
                B[x, offsets[i] + labels[x, i]] = 1.0
    return B


def ordered_sum(values):
    """Sum per chunk of CHUNK values in order, then over chunks in order (the engine's order)."""
    total = 0.0
    for start in range(0, len(values), CHUNK):
        part = 0.0
        for v in values[start:start + CHUNK]:
            part += float(v)
        total += part
    return total


def _mean(rows, w):
    """Weighted mean of the rows, summed object by object."""
    total = np.zeros(rows.shape[1])
    for row, v in zip(rows, w):
        total += v * row
    return total / sum(w)


def centroids(X, dense_weight, labels, offsets, weights, distance, p, assignment, n_clusters,
              object_weights=None, row_scale=None):
    """Dense part: (weighted) mean of the members' rows (whole-data mean for an empty cluster).

    Block i: (weighted) column means of the one-hot block over the members labelled in i; if
    none is, the column means over every object labelled in i (P_i), or zeros if no object is.
    With ``row_scale``: the weighted mean of the members' scaled rows s_x b_x.
    """
    B = one_hot(labels, offsets)
    n, d = X.shape
    r = labels.shape[1]
    w = np.ones(n) if object_weights is None else np.asarray(object_weights, dtype=float)
    dense = np.zeros((n_clusters, d))
    cat = np.zeros((n_clusters, int(offsets[-1])))
    for k in range(n_clusters):
        members = np.flatnonzero(assignment == k)
        if d:
            dense[k] = _mean(X[members], w[members]) if len(members) else _mean(X, w)
        if row_scale is not None:
            rows = members if len(members) else np.arange(n)
            cat[k] = _mean(row_scale[rows, None] * B[rows], w[rows])
            continue
        for i in range(r):
            block = slice(offsets[i], offsets[i + 1])
            labelled = members[labels[members, i] >= 0]
            if len(labelled) == 0:
                labelled = np.flatnonzero(labels[:, i] >= 0)  # fallback P_i
            if len(labelled):
                cat[k, block] = _mean(B[labelled, block], w[labelled])
    return dense, cat


def block_distance(b, m, distance, p):
    """f(b, m) of Table 1 between a one-hot block b and a centre block m, written out."""
    if distance == UC:  # ||b - m||^2
        return sum((bj - mj) ** 2 for bj, mj in zip(b, m))
    if distance == UH:  # KL(b || m), m smoothed; 0 log 0 = 0
        return sum(bj * (math.log2(bj) - math.log2(mj + UH_SMOOTHING))
                   for bj, mj in zip(b, m) if bj > 0)
    if distance == UCOS:  # 1 - cos(b, m)
        norm_b = math.sqrt(sum(bj * bj for bj in b))
        norm_m = math.sqrt(sum(mj * mj for mj in m))
        if norm_m == 0:
            return 1.0
        return 1.0 - sum(bj * mj for bj, mj in zip(b, m)) / (norm_b * norm_m)
    if distance == ULP:  # 1 - sum_j b_j m_j^(p-1) / ||m||_p^(p-1)
        norm_m = sum(mj ** p for mj in m) ** (1.0 / p)
        if norm_m == 0:
            return 1.0
        return 1.0 - sum(bj * mj ** (p - 1) for bj, mj in zip(b, m)) / norm_m ** (p - 1)
    raise ValueError(distance)


def cost_matrix(X, dense_weight, labels, offsets, weights, distance, p, dense, cat, row_scale=None):
    """(n, K) costs: dense_weight ||x - c_k||^2 + sum over labelled i of w_i f(b_i, m_{k,i});
    with ``row_scale``, sum over every i of w_i ||s_x b_i - m_{k,i}||^2 (b_i = 0 if unlabelled)."""
    B = one_hot(labels, offsets)
    if row_scale is not None:
        costs = np.zeros((B.shape[0], len(cat)))
        for x in range(B.shape[0]):
            for k in range(len(cat)):
                for i in range(labels.shape[1]):
                    block = slice(offsets[i], offsets[i + 1])
                    costs[x, k] += weights[i] * float(((row_scale[x] * B[x, block] - cat[k, block]) ** 2).sum())
        return costs
    n, d = X.shape
    r = labels.shape[1]
    n_clusters = len(dense) if d else len(cat)
    costs = np.zeros((n, n_clusters))
    for x in range(n):
        for k in range(n_clusters):
            cost = 0.0
            if d:
                sq = 0.0
                for j in range(d):
                    sq += (X[x, j] - dense[k, j]) ** 2
                cost = dense_weight * sq
            for i in range(r):
                if labels[x, i] < 0:
                    continue
                block = slice(offsets[i], offsets[i + 1])
                cost += weights[i] * block_distance(B[x, block], cat[k, block], distance, p)
            costs[x, k] = cost
    return costs


def best_clusters(costs, current=None):
    """Cheapest cluster per object; ties keep `current` if it is among the minima, else lowest."""
    best = np.argmin(costs, axis=1)
    if current is not None:
        rows = np.arange(len(costs))
        keep = costs[rows, current] == costs[rows, best]
        best = np.where(keep, current, best)
    return best.astype(np.int32)


def reseed(assignment, costs, n_clusters):
    """Each empty cluster (increasing index) takes the costliest object (ties: lowest index)
    among objects whose cluster has more than one member."""
    assignment = assignment.copy()
    sizes = np.bincount(assignment, minlength=n_clusters)
    for e in range(n_clusters):
        if sizes[e]:
            continue
        eligible = [x for x in range(len(assignment)) if sizes[assignment[x]] > 1]
        pick = max(eligible, key=lambda x: (costs[x], -x))
        sizes[assignment[pick]] -= 1
        sizes[e] = 1
        assignment[pick] = e
    return assignment


def lloyd(X, dense_weight, labels, offsets, weights, distance, p, assignment, n_clusters,
          max_iter, tol, object_weights=None, row_scale=None):
    """Textbook Lloyd loop; returns the same tuple as the compiled ``lloyd``."""
    rows = (X, dense_weight, labels, offsets, weights, distance, p)
    n = len(assignment)
    w = np.ones(n) if object_weights is None else np.asarray(object_weights, dtype=float)
    current = np.asarray(assignment, dtype=np.int32).copy()
    if np.bincount(current, minlength=n_clusters).min() == 0:
        dense, cat = centroids(*rows, current, n_clusters, object_weights, row_scale)
        costs = cost_matrix(*rows, dense, cat, row_scale)
        current = reseed(current, costs[np.arange(n), current], n_clusters)
    trace = []
    previous = None
    it = 0
    while True:
        dense, cat = centroids(*rows, current, n_clusters, object_weights, row_scale)
        costs = cost_matrix(*rows, dense, cat, row_scale)
        objective = ordered_sum(w * costs[np.arange(n), current])
        best = best_clusters(costs, current)
        if it > 0 and objective > previous[3]:  # a rise is undone
            current, dense, cat, objective = previous
            converged = True
            break
        trace.append(objective)
        if it > 0 and previous[3] - objective < tol * abs(previous[3]):
            converged = True
            break
        if np.array_equal(best, current):
            converged = True
            break
        if it == max_iter:
            converged = False
            break
        previous = (current, dense, cat, objective)
        current = best
        if np.bincount(current, minlength=n_clusters).min() == 0:
            current = reseed(current, costs[np.arange(n), current], n_clusters)
        it += 1
    return current, np.array(trace), len(trace) - 1, converged, objective, dense, cat


def assign(X, dense_weight, labels, offsets, weights, distance, p, dense, cat):
    """(assignment, costs, objective) against given centres; ties go to the lowest index."""
    costs = cost_matrix(X, dense_weight, labels, offsets, weights, distance, p, dense, cat)
    best = best_clusters(costs)
    chosen = costs[np.arange(len(best)), best]
    return best, chosen, ordered_sum(chosen)


def pair_distance(X, dense_weight, labels, weights, x, y):
    """D^2(x, y) = dense_weight ||X[x] - X[y]||^2 + sum_i 2 w_i [labels differ, both present]."""
    d2 = 0.0
    if X.shape[1]:
        sq = 0.0
        for j in range(X.shape[1]):
            sq += (X[x, j] - X[y, j]) ** 2
        d2 = dense_weight * sq
    for i in range(labels.shape[1]):
        a, b = labels[x, i], labels[y, i]
        if a >= 0 and b >= 0 and a != b:
            d2 += weights[i] * 2.0
    return d2


def kmeanspp(X, dense_weight, labels, offsets, weights, distance, p, n_clusters, first,
             uniforms):
    """Greedy k-means++ driven by ``uniforms`` ((K - 1, n_trials) in [0, 1))."""
    n = len(labels)

    def distances_to(y):
        return np.array([pair_distance(X, dense_weight, labels, weights, x, y) for x in range(n)])

    closest = distances_to(first)
    seeds = [first]
    for s in range(1, n_clusters):
        cum = np.cumsum(closest)  # a running sum in object order
        total = cum[-1]
        if total > 0:
            positive = np.flatnonzero(closest > 0)
            candidates = []
            for u in uniforms[s - 1]:
                x = int(np.searchsorted(cum, u * total, side="right"))  # first cum > u * total
                candidates.append(x if x < n else int(positive[-1]))
            trials = [np.minimum(closest, distances_to(c)) for c in candidates]
            potentials = [ordered_sum(t) for t in trials]
            win = int(np.argmin(potentials))
            seed = candidates[win]
            closest = trials[win]
        else:
            seed = min(set(range(n)) - set(seeds))
        seeds.append(seed)
    return np.array(seeds, dtype=np.int64)
