"""Slow, literal soft KCC for tests: the Bregman distance of each KCC utility's mu on membership rows.

Wu et al. (2015) write KCC's point-to-centroid distance as f = sum_i w_i f_i with
f_i(x, m) = mu(x) - mu(m) - <grad mu(m), x - m> on partition i's block; here x is an object's
membership row (Hornik 2005) instead of its one-hot row. Everything is a Python loop over
objects, centres, partitions and clusters, straight from those definitions.
"""
import math

import numpy as np
from reference_kcc import mu  # mu of each utility family, on any non-negative vector

EPS = 2.2e-16  # the hard engine's smoothing of log2 at a zero centre entry


def grad_mu(family, m, p=None):
    if family == "uc":
        return [2.0 * a for a in m]
    if family == "uh":
        return [math.log2(a) + 1.0 / math.log(2.0) for a in m]
    norm = mu(family, m, p)
    if family == "ucos":
        return [a / norm for a in m]
    return [(a / norm) ** (p - 1.0) for a in m]


def bregman(family, x, m, p=None):
    """f(x, m) = mu(x) - mu(m) - <grad mu(m), x - m>; uh at m + eps, a zero block under ucos/ulp
    is orthogonal to everything (cost mu(x))."""
    if family == "uh":
        m = [a + EPS for a in m]
    elif family in ("ucos", "ulp") and mu(family, m, p) == 0.0:
        return mu(family, x, p)
    g = grad_mu(family, m, p)
    return mu(family, x, p) - mu(family, m, p) - sum(gi * (xi - mi) for gi, xi, mi in zip(g, x, m))


def blocks(U, offsets):
    return [[list(U[x, offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)] for x in range(U.shape[0])]


def effective_weights(U, offsets, weights, family, normalized, p=None):
    out = []
    for i in range(len(offsets) - 1):
        P = list(U[:, offsets[i]:offsets[i + 1]].mean(axis=0))
        norm = abs(mu(family, P, p)) if normalized else 1.0
        out.append(weights[i] / norm if norm > 0 else 0.0)
    return out


def centres(U, labels, k):
    return [list(U[labels == c].mean(axis=0)) for c in range(k)]


def cost(family, xb, centre, offsets, w, p=None):
    return sum(w[i] * bregman(family, xb[i], centre[offsets[i]:offsets[i + 1]], p) for i in range(len(w)))


def lloyd(U, offsets, w, family, labels, k, p=None, max_iter=100, tol=1e-6):
    """Lloyd from ``labels`` (every cluster used): ties keep the current cluster, a rising step is
    undone, stop when nothing moves or the objective falls by less than tol relatively.
    Returns (labels, objective, trace)."""
    xb = blocks(U, offsets)
    labels = np.array(labels)
    trace, prev = [], None
    prev_labels = labels
    for it in range(max_iter + 1):
        C = centres(U, labels, k)
        costs = [[cost(family, xb[x], C[c], offsets, w, p) for c in range(k)] for x in range(len(xb))]
        obj = sum(costs[x][labels[x]] for x in range(len(xb)))
        if prev is not None and obj > prev:
            return prev_labels, prev, trace
        trace.append(obj)
        if prev is not None and prev - obj < tol * abs(prev):
            return labels, obj, trace
        best = np.array([labels[x] if costs[x][labels[x]] == min(costs[x]) else int(np.argmin(costs[x]))
                         for x in range(len(xb))])
        if (best == labels).all() or it == max_iter:
            return labels, obj, trace
        prev, prev_labels, labels = obj, labels, best
    return labels, obj, trace


def gamma(U, offsets, weights, family, normalized, labels, p=None):
    """Gamma = sum_i w_i U(pi, pi_i) with U = sum_k p_k mu(P_k) - mu(P) over soft contingency
    tables (mean membership rows), divided by |mu(P_i)| for the normalised forms."""
    n = U.shape[0]
    total = 0.0
    for i in range(len(offsets) - 1):
        block = U[:, offsets[i]:offsets[i + 1]]
        P = list(block.mean(axis=0))
        value = -mu(family, P, p)
        for c in np.unique(labels):
            members = block[labels == c]
            value += members.shape[0] / n * mu(family, list(members.mean(axis=0)), p)
        if normalized:
            norm = abs(mu(family, P, p))
            value = value / norm if norm > 0 else 0.0
        total += weights[i] * value
    return total
