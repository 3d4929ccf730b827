"""Slow, obviously-correct references of the graph and WOEC consensus functions.

Every quantity is computed with Python loops straight from its definition (Strehl & Ghosh 2002;
Fern & Brodley 2004; Ren et al. (2017, eq. 1-13)). The graphs are handed to the same METIS call
(``cclust.graph.partition_graph``) with the same seed draw, so the fast path and the
reference must give the same labels whenever they build the same graph. Cluster vertices use the
library's canonical cluster order, which only fixes vertex numbering.
"""
import math

import numpy as np

from cclust.graph import argmax_random_ties, canonical_cluster_order, partition_graph


def clusters(labels, weights=None):
    """List of (partition index, set of members, partition weight) in one-hot column order."""
    labels = np.asarray(labels)
    n, r = labels.shape
    weights = np.full(r, 1.0 / r) if weights is None else np.asarray(weights) / np.sum(weights)
    out = []
    for j in range(r):
        for value in sorted(set(labels[:, j].tolist()) - {-1}):
            out.append((j, {x for x in range(n) if labels[x, j] == value}, weights[j]))
    return out


def coassociation(labels, weights=None):
    """Ren et al. (2017, eq. 1) with partition weights; over the partitions labelling both objects."""
    labels = np.asarray(labels)
    n, r = labels.shape
    weights = np.full(r, 1.0 / r) if weights is None else np.asarray(weights) / np.sum(weights)
    A = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            both = same = 0.0
            for j in range(r):
                if labels[x, j] >= 0 and labels[y, j] >= 0:
                    both += weights[j]
                    if labels[x, j] == labels[y, j]:
                        same += weights[j]
            A[x, y] = same / both if both > 0 else 0.0
    return A


def object_weights(labels, weights=None, smoothing=0.01):
    """Ren et al. (2017, eq. 1-4)."""
    A = coassociation(labels, weights)
    n = A.shape[0]
    for i in range(n):
        A[i, i] = 1.0
    out = np.empty(n)
    for i in range(n):
        confusion = sum(A[i, j] * (1 - A[i, j]) for j in range(n))
        w = 4.0 / n * confusion
        out[i] = (w + smoothing) / (1 + smoothing)
    return out


def meta_similarity(labels, object_w=None):
    """Ren et al. (2017, eq. 5) (binary Jaccard when object_w is None) between clusters, one-hot column order."""
    cl = clusters(labels)
    n = np.asarray(labels).shape[0]
    w = np.ones(n) if object_w is None else np.asarray(object_w)
    S = np.zeros((len(cl), len(cl)))
    for a, (_, Ca, _) in enumerate(cl):
        for b, (_, Cb, _) in enumerate(cl):
            union = sum(w[x] for x in Ca | Cb)
            S[a, b] = sum(w[x] for x in Ca & Cb) / union if union else 0.0
    return S


def mcla(ensemble, n_clusters, seed, object_w=None, balance="objects"):
    """MCLA / WOMC labels: meta-graph, METIS (vertex weight = cluster size, or 1 with
    balance="clusters"), strongest participation, random ties."""
    labels = ensemble.labels
    cl = clusters(labels, ensemble.weights)
    order = canonical_cluster_order(ensemble)
    S = meta_similarity(labels, object_w)[np.ix_(order, order)]
    sizes = None if balance == "clusters" else np.array([max(1, len(cl[c][1])) for c in order])
    rng = np.random.default_rng(seed)
    parts, _ = partition_graph(S, n_clusters, random_state=rng, vertex_weights=sizes)
    n = labels.shape[0]
    H = np.zeros((n, n_clusters))
    for m in range(n_clusters):
        members = [cl[order[v]] for v in range(len(order)) if parts[v] == m]
        total = sum(pw for _, _, pw in members)
        for x in range(n):
            H[x, m] = sum(pw for _, C, pw in members if x in C) / total if total else 0.0
    return argmax_random_ties(H, rng), H


def bipartite(labels, weights=None):
    """HBGF graph [[0, M], [M^T, 0]], M[x, c] = weight of c's partition if x in c."""
    cl = clusters(labels, weights)
    n = np.asarray(labels).shape[0]
    M = np.zeros((n, len(cl)))
    for c, (_, C, pw) in enumerate(cl):
        for x in C:
            M[x, c] = pw
    return M


def merge_identical_objects(M, cap=None):
    """HBGF's merged objects: identical rows of M become one row carrying their number.

    A group larger than ``cap`` objects becomes several rows of at most ``cap`` objects each,
    its objects taken in order. Returns (merged rows times multiplicity, multiplicities, group
    of every object); groups are numbered by first occurrence, then by chunk.
    """
    M = np.asarray(M, dtype=np.float64)
    groups, inverse, seen = {}, [], {}
    for row in M:
        key = tuple(row.tolist())
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        chunk = (key, 0 if cap is None else rank // cap)
        if chunk not in groups:
            groups[chunk] = None
        inverse.append(chunk)
    # Number the chunks by (first occurrence of their row, chunk index).
    first_seen = {}
    for chunk in inverse:
        first_seen.setdefault(chunk[0], len(first_seen))
    ordered = sorted(groups, key=lambda c: (first_seen[c[0]], c[1]))
    number = {c: i for i, c in enumerate(ordered)}
    inverse = np.array([number[c] for c in inverse])
    groups = ordered
    counts = np.array([int(np.sum(inverse == g)) for g in range(len(groups))])
    rows = np.array([M[list(inverse).index(g)] * counts[g] for g in range(len(groups))])
    return rows, counts, inverse


def memberships(X, labels, object_w, t=None):
    """Ren et al. (2017, eq. 6-9): weighted centres, exp(-d^2/t), normalised per clustering; and the t used."""
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels)
    n, r = labels.shape
    blocks, ts = [], []
    for j in range(r):
        values = sorted(set(labels[:, j].tolist()) - {-1})
        centres = []
        for v in values:
            members = [x for x in range(n) if labels[x, j] == v]
            mass = sum(object_w[x] for x in members)
            centres.append(sum(object_w[x] * X[x] for x in members) / mass)
        d2 = np.array([[float(np.sum((X[x] - c) ** 2)) for c in centres] for x in range(n)])
        own = [d2[x, values.index(labels[x, j])] for x in range(n) if labels[x, j] >= 0]
        t_j = sum(own) / len(own) if t is None else t
        ts.append(t_j)
        P = np.empty_like(d2)
        for x in range(n):
            e = [math.exp(-d2[x, l] / t_j) for l in range(len(centres))]
            P[x] = np.array(e) / sum(e)
        blocks.append(P)
    return np.hstack(blocks), np.array(ts)


def wosp_similarity(X, labels, object_w, weights=None, t=None):
    """Ren et al. (2017, eq. 10-11): cosine similarity of membership vectors averaged over clusterings."""
    labels = np.asarray(labels)
    n, r = labels.shape
    weights = np.full(r, 1.0 / r) if weights is None else np.asarray(weights) / np.sum(weights)
    P, _ = memberships(X, labels, object_w, t)
    sizes = [len(set(labels[:, j].tolist()) - {-1}) for j in range(r)]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    S = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            for j in range(r):
                a, b = P[x, bounds[j]:bounds[j + 1]], P[y, bounds[j]:bounds[j + 1]]
                S[x, y] += weights[j] * float(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))
    return S


def weighted_kmeans(X, w, centres, max_iter=100):
    """Ren et al. (2017, Algorithm 4) from given centres (no empty clusters expected)."""
    X = np.asarray(X, dtype=np.float64)
    labels = None
    for _ in range(max_iter):
        new = np.array([int(np.argmin([np.sum((x - c) ** 2) for c in centres])) for x in X])
        centres = np.array([sum(w[i] * X[i] for i in range(len(X)) if new[i] == k)
                            / sum(w[i] for i in range(len(X)) if new[i] == k) for k in range(len(centres))])
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
    return new, centres


def first_merges_cut(Z, n_clusters):
    """The dendrogram's clusters after its first ``n - n_clusters`` merges, row by row of SciPy's
    linkage matrix Z, by explicit member lists (cluster numbers: order of creation)."""
    n = len(Z) + 1
    members = {i: [i] for i in range(n)}
    for row in range(n - n_clusters):
        a, b = int(Z[row][0]), int(Z[row][1])
        members[n + row] = members.pop(a) + members.pop(b)
    labels = np.empty(n, dtype=np.int64)
    for number, key in enumerate(sorted(members)):
        labels[members[key]] = number
    return labels
