"""Slow, obviously-correct references of the voting family and the classic baselines.

Plain loops over objects, partitions and clusters, straight from the papers' formulas
(Nguyen & Caruana 2007, Algorithms 1-3 and eq. 1-4; Topchy et al. 2004 for the mixture), on small inputs. Labels
are taken as given (the fast paths run on the canonical ensemble, so tests pass that).
"""
import itertools

import numpy as np


def coassociation(L, w):
    """Nguyen & Caruana (2007, eq. 1) with weights; with missing labels, normalised per pair by the partitions
    labelling both objects (0 if none)."""
    n, r = L.shape
    S = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            num = den = 0.0
            for j in range(r):
                if L[x, j] >= 0 and L[y, j] >= 0:
                    den += w[j]
                    num += w[j] * (L[x, j] == L[y, j])
            S[x, y] = num / den if den > 0 else 0.0
    return S


def members(labels, k):
    return [x for x in range(len(labels)) if labels[x] == k]


def mode(values):
    """Majority value; ties go to the smallest value."""
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)


def ivc_distances(L, w, labels, K):
    """(n, K) weighted Hamming distances to the cluster modes (Nguyen & Caruana 2007, Algorithm 1); inf for
    clusters without members."""
    n, r = L.shape
    D = np.full((n, K), np.inf)
    for k in range(K):
        P = members(labels, k)
        if not P:
            continue
        centre = []
        for j in range(r):
            vals = [L[x, j] for x in P if L[x, j] >= 0]
            centre.append(mode(vals) if vals else None)
        for x in range(n):
            D[x, k] = sum(w[j] for j in range(r) if L[x, j] >= 0 and L[x, j] != centre[j])
    return D


def ipvc_distances(L, w, labels, K):
    """(n, K) D(x, P_k) = sum_j w_j (fraction of P_k's labelled members disagreeing), Nguyen & Caruana (2007, eq. 2)."""
    n, r = L.shape
    D = np.full((n, K), np.inf)
    for k in range(K):
        P = members(labels, k)
        if not P:
            continue
        for x in range(n):
            total = 0.0
            for j in range(r):
                if L[x, j] < 0:
                    continue
                lab = [y for y in P if L[y, j] >= 0]
                if lab:
                    total += w[j] * sum(L[y, j] != L[x, j] for y in lab) / len(lab)
                else:
                    total += w[j]
            D[x, k] = total
    return D


def ipc_similarities(S, labels, K):
    """(n, K) S(x, P_k) = mean of S(x, x') over x' in P_k (Nguyen & Caruana 2007, eq. 3); -inf for empty clusters."""
    n = S.shape[0]
    out = np.full((n, K), -np.inf)
    for k in range(K):
        P = members(labels, k)
        if P:
            for x in range(n):
                out[x, k] = sum(S[x, y] for y in P) / len(P)
    return out


def refill(labels, dist, L, K):
    """The engine's empty-cluster rule (cclust._engine.reseed), written out: each empty cluster,
    in increasing index, takes the object farthest from its own cluster (ties: lowest index)
    among objects whose cluster keeps another member."""
    labels = list(labels)
    fit = [dist[x, labels[x]] for x in range(len(labels))]
    for e in range(K):
        if labels.count(e):
            continue
        movable = [x for x in range(len(labels)) if labels.count(labels[x]) > 1]
        pick = max(movable, key=lambda x: (fit[x], -x))
        labels[pick] = e
    return np.array(labels)


def iterate(kind, L, w, start, K, max_iter=100):
    """Nguyen & Caruana (2007, Algorithms 1-3) from ``start`` (-1 = unassigned) until the labels stop changing."""
    labels = np.array(start)
    S = coassociation(L, w) if kind == "ipc" else None
    for _ in range(max_iter):
        if kind == "ivc":
            dist = ivc_distances(L, w, labels, K)
        elif kind == "ipvc":
            dist = ipvc_distances(L, w, labels, K)
        else:
            dist = 1.0 - ipc_similarities(S, labels, K)
        new = np.array([min(range(K), key=lambda k: (dist[x, k], k)) for x in range(L.shape[0])])
        new = refill(new, dist, L, K)
        if np.array_equal(new, labels):
            return new
        labels = new
    return labels


def ivc_objective(L, w, labels, K):
    D = ivc_distances(L, w, labels, K)
    return sum(D[x, labels[x]] for x in range(L.shape[0]))


def furthest_consensus(L, w, K):
    """FC (Nguyen & Caruana 2007, sec. 3.1): furthest pair, then furthest-first centres, nearest-centre assignment."""
    D = np.round(1.0 - coassociation(L, w), 12)
    n = D.shape[0]
    for x in range(n):
        D[x, x] = 0.0
    pair = max(((D[a, b], -a, -b) for a in range(n) for b in range(n)))
    centers = [-pair[1], -pair[2]]
    while len(centers) < K:
        best = max((min(D[x, c] for c in centers), -x) for x in range(n) if x not in centers)
        centers.append(-best[1])
    labels = [min(range(K), key=lambda i: (D[x, centers[i]], i)) for x in range(n)]
    for i, c in enumerate(centers):
        labels[c] = i
    return np.array(labels), centers


def nmi_sqrt(a, b):
    """NMI with the sqrt normalisation (Nguyen & Caruana 2007, eq. 10), from counts."""
    n = len(a)
    pa, pb, pab = {}, {}, {}
    for x, y in zip(a, b):
        pa[x] = pa.get(x, 0) + 1
        pb[y] = pb.get(y, 0) + 1
        pab[(x, y)] = pab.get((x, y), 0) + 1
    ha = -sum(c / n * np.log(c / n) for c in pa.values())
    hb = -sum(c / n * np.log(c / n) for c in pb.values())
    mi = sum(c / n * np.log(c * n / (pa[x] * pb[y])) for (x, y), c in pab.items())
    return mi / np.sqrt(ha * hb) if ha > 0 and hb > 0 else (1.0 if ha == hb == 0 else 0.0)


def best_member(L, w, K):
    """BEST (Nguyen & Caruana 2007, sec. 3.6): the member with K clusters maximising sum_i w_i NMI(member, pi_i)."""
    scores = {}
    for j in range(L.shape[1]):
        if len(set(L[:, j].tolist())) == K:
            scores[j] = sum(w[i] * nmi_sqrt(L[:, j], L[:, i]) for i in range(L.shape[1]))
    return max(scores, key=lambda j: scores[j]), scores


def em_step(L, w, resp, smoothing):
    """One M-step then one E-step of the multinomial mixture (Topchy et al. 2004), as loops.

    Returns (alpha, theta as a dict (m, j, l) -> prob, new responsibilities, log-likelihood).
    """
    n, r = L.shape
    K = resp.shape[1]
    sizes = [int(L[:, j].max()) + 1 for j in range(r)]
    alpha = [(sum(resp[x, m] for x in range(n)) + smoothing) / (n + K * smoothing) for m in range(K)]
    theta = {}
    for m in range(K):
        for j in range(r):
            mass = sum(resp[x, m] for x in range(n) if L[x, j] >= 0)
            for lab in range(sizes[j]):
                cnt = sum(resp[x, m] for x in range(n) if L[x, j] == lab)
                theta[m, j, lab] = (cnt + smoothing) / (mass + smoothing * sizes[j])
    new = np.zeros((n, K))
    loglik = 0.0
    for x in range(n):
        logs = []
        for m in range(K):
            s = np.log(alpha[m])
            for j in range(r):
                if L[x, j] >= 0:
                    s += r * w[j] * np.log(theta[m, j, L[x, j]])
            logs.append(s)
        top = max(logs)
        z = sum(np.exp(v - top) for v in logs)
        loglik += top + np.log(z)
        for m in range(K):
            new[x, m] = np.exp(logs[m] - top) / z
    return alpha, theta, new, loglik


def vote_pass(L, w, reference, K):
    """Relabel-and-vote pass for ensembles whose partitions all have K clusters: the matching of
    each partition to the reference maximising shared objects (all K! permutations), then
    plurality with ties to the lowest cluster."""
    n, r = L.shape
    votes = np.zeros((n, K))
    for j in range(r):
        table = np.zeros((K, K))
        for x in range(n):
            table[reference[x], L[x, j]] += 1
        perm = max(itertools.permutations(range(K)), key=lambda p: sum(table[p[l], l] for l in range(K)))
        for x in range(n):
            votes[x, perm[L[x, j]]] += w[j]
    return np.array([min(range(K), key=lambda k: (-votes[x, k], k)) for x in range(n)])
