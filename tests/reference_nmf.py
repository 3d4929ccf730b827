"""Slow, literal reference of consensus NMF (Li, Ding & Jordan 2007): the dense n x n
co-association, the multiplicative updates on it, the objective by its definition."""
import numpy as np

from reference_voting import coassociation


def nmf_factorize(L, w, n_clusters, seed, n_init, max_iter, tol, orthogonal=True, starts=None):
    """Every restart's (H, S, objective trace), with the same draws as the fast code's random
    start, or from the given (H, S) starts. ``orthogonal=True`` is the paper's H rule
    ``H * sqrt(M H S / (H H^T M H S))``; the loop stops when J changes by at most tol."""
    M = coassociation(np.asarray(L), np.asarray(w, dtype=float) / np.sum(w))
    n = M.shape[0]
    rng = np.random.default_rng(seed)
    runs = []
    for i in range(n_init):
        H = rng.random((n, n_clusters))
        S = rng.random((n_clusters, n_clusters))
        S = (S + S.T) / 2.0
        if starts is not None:
            H, S = starts[i]
        S = S * np.trace(H.T @ M @ H @ S) / np.sum((H @ S @ H.T) ** 2)
        trace = []
        it = 0
        while True:
            trace.append(float(np.sum((M - H @ S @ H.T) ** 2)))
            if len(trace) > 1 and abs(trace[-2] - trace[-1]) <= tol * trace[-2]:
                break
            if it == max_iter:
                break
            S = S * np.sqrt((H.T @ M @ H) / np.maximum(H.T @ H @ S @ H.T @ H, 1e-300))
            if orthogonal:
                H = H * np.sqrt((M @ H @ S) / np.maximum(H @ H.T @ M @ H @ S, 1e-300))
            else:
                H = H * ((M @ H @ S) / np.maximum(H @ S @ H.T @ H @ S, 1e-300)) ** 0.25
            it += 1
        runs.append((H, S, np.array(trace)))
    return runs
