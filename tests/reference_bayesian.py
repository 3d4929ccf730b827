"""Slow, literal references for Bayesian cluster ensembles (Wang, Shan & Banerjee 2009, 2011).

Everything is a loop over objects, partitions and clusters with phi stored in full, as the
paper's variational EM writes it; partition j's label counts ``times[j]`` times (ones: the
paper's model). ``beta`` is a list over partitions of (K, K_j) arrays. Missing labels (-1) are
skipped: they have no phi and no term in the bound.
"""
import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln, polygamma


def phi_for(L, times, beta, gamma):
    """phi[x][j] (a K-vector, None where y_xj is missing) optimal for gamma."""
    n, r = L.shape
    K = gamma.shape[1]
    phi = []
    for x in range(n):
        elog = [digamma(gamma[x, k]) - digamma(gamma[x].sum()) for k in range(K)]
        row = []
        for j in range(r):
            if L[x, j] < 0:
                row.append(None)
                continue
            unnorm = np.array([np.exp(elog[k]) * beta[j][k, L[x, j]] for k in range(K)])
            row.append(unnorm / unnorm.sum())
        phi.append(row)
    return phi


def gamma_for(L, times, alpha, phi):
    """gamma_xk = alpha_k + sum over observed j of times_j phi_xjk."""
    n, r = L.shape
    K = alpha.shape[0]
    gamma = np.zeros((n, K))
    for x in range(n):
        for k in range(K):
            gamma[x, k] = alpha[k] + sum(times[j] * phi[x][j][k] for j in range(r) if L[x, j] >= 0)
    return gamma


def e_step(L, times, alpha, beta, gamma, n_updates):
    """``n_updates`` rounds of (phi from gamma, gamma from phi), then phi for the final gamma."""
    for _ in range(n_updates):
        gamma = gamma_for(L, times, alpha, phi_for(L, times, beta, gamma))
    return gamma, phi_for(L, times, beta, gamma)


def lower_bound(L, times, alpha, beta, gamma, phi):
    """The variational lower bound, term by term: E[log p(theta|alpha)] + E[log p(z|theta)]
    + E[log p(y|z, beta)] - E[log q(theta)] - E[log q(z)]."""
    n, r = L.shape
    K = alpha.shape[0]
    total = 0.0
    for x in range(n):
        elog = [digamma(gamma[x, k]) - digamma(gamma[x].sum()) for k in range(K)]
        total += gammaln(alpha.sum()) - sum(gammaln(a) for a in alpha)
        total += sum((alpha[k] - 1) * elog[k] for k in range(K))
        total -= gammaln(gamma[x].sum()) - sum(gammaln(g) for g in gamma[x])
        total -= sum((gamma[x, k] - 1) * elog[k] for k in range(K))
        for j in range(r):
            if L[x, j] < 0:
                continue
            for k in range(K):
                p = phi[x][j][k]
                if p > 0:
                    total += times[j] * p * (elog[k] + np.log(beta[j][k, L[x, j]]) - np.log(p))
    return total


def log_prior(beta, smoothing):
    """Log of the Dirichlet(1 + smoothing) prior on every beta_kj, up to its constant."""
    return smoothing * sum(float(np.log(b).sum()) for b in beta)


def m_step_beta(L, times, phi, K, sizes, smoothing):
    """beta_kj(l) = (smoothing + sum_x times_j phi_xjk [y_xj = l]) / (its sum over l)."""
    n, r = L.shape
    beta = []
    for j in range(r):
        b = np.full((K, sizes[j]), smoothing)
        for x in range(n):
            if L[x, j] >= 0:
                for k in range(K):
                    b[k, L[x, j]] += times[j] * phi[x][j][k]
        beta.append(b / b.sum(axis=1, keepdims=True))
    return beta


def m_step_alpha(alpha, gamma, *, iterations=200):
    """Newton's method with the full K x K Hessian (solved, not inverted by hand), halving the
    step to stay positive, on N(log G(sum a) - sum log G(a)) + sum_k (a_k - 1) sum_x E[log theta_xk]."""
    n, K = gamma.shape
    stat = np.array([sum(digamma(gamma[x, k]) - digamma(gamma[x].sum()) for x in range(n)) for k in range(K)])

    def value(a):
        return n * (gammaln(a.sum()) - gammaln(a).sum()) + ((a - 1) * stat).sum()

    alpha = alpha.copy()
    for _ in range(iterations):
        grad = n * (digamma(alpha.sum()) - digamma(alpha)) + stat
        hess = n * polygamma(1, alpha.sum()) * np.ones((K, K)) - n * np.diag(polygamma(1, alpha))
        step = np.linalg.solve(hess, grad)
        eta = 1.0
        while (alpha - eta * step <= 0).any() or value(alpha - eta * step) < value(alpha) - 1e-13 * abs(value(alpha)):
            eta /= 2
            if eta < 1e-12:
                return alpha
        new = alpha - eta * step
        if np.abs(new - alpha).sum() / alpha.sum() < 1e-10:
            return new
        alpha = new
    return alpha


def variational_em(L, times, alpha, beta, smoothing, n_iter, n_updates):
    """The full loop: E-step (gamma starts at alpha + V_x / K, then carries over), bound, M-step.

    Returns (alpha, beta, gamma, bounds including the log prior) of the last E-step.
    """
    n, r = L.shape
    K = alpha.shape[0]
    sizes = [beta[j].shape[1] for j in range(r)]
    observed = np.array([sum(times[j] for j in range(r) if L[x, j] >= 0) for x in range(n)])
    gamma = alpha[None, :] + observed[:, None] / K
    trace = []
    for it in range(n_iter):
        gamma, phi = e_step(L, times, alpha, beta, gamma, n_updates)
        trace.append(lower_bound(L, times, alpha, beta, gamma, phi) + log_prior(beta, smoothing))
        if it == n_iter - 1:
            break
        beta = m_step_beta(L, times, phi, K, sizes, smoothing)
        alpha = m_step_alpha(alpha, gamma)
    return alpha, beta, gamma, trace


# -- the vectorised NumPy E-step -------------------------------------------------------------------
#: Objects per block: the gathered ``beta`` rows take chunk x r x K floats.
_CHUNK_ENTRIES = 1 << 22


def _elog(gamma):
    return digamma(gamma) - digamma(gamma.sum(axis=1, keepdims=True))


def e_step_vectorised(slots, present, counts, times, alpha, beta, gamma, *, tol=1e-6, max_iter=500):
    """The NumPy E-step that cclust used before the compiled one, vectorised over rows: the
    reference the compiled core is checked against on larger random ensembles (same arguments
    and returns as ``cclust.consensus_functions.bayesian.e_step``).
    """
    m, r = slots.shape
    K = alpha.shape[0]
    W = beta.shape[0]
    gamma = np.array(gamma, dtype=np.float64, copy=True)
    label_counts = np.zeros((W, K))
    log_z = 0.0
    n_updates = 0
    step = max(1, _CHUNK_ENTRIES // max(1, r * K))
    beta_t = np.ascontiguousarray(beta.T)       # (K, W): gathering by slot is then one take per row
    for start in range(0, m, step):
        stop = min(m, start + step)
        mask = present[start:stop]
        weight = np.where(mask, times[None, :], 0.0)                     # (c, r)
        B = beta_t[:, slots[start:stop]]                                 # (K, c, r)
        B[:, ~mask] = 0.0
        g = gamma[start:stop]
        # The rows still moving, with their own copies of B and the weights. A row leaves as
        # soon as its update passes the test and keeps that update (the rule of the compiled
        # E-step; the NumPy E-step cclust used before it compacted only when half the rows had
        # stopped and so gave the stopped rows a few extra updates).
        active = np.arange(stop - start)
        Ba, wa, ga = B, weight, g.copy()
        for it in range(max_iter):
            Ex = np.exp(_elog(ga))
            Z = np.einsum("kxj,xk->xj", Ba, Ex)
            Z[wa == 0] = 1.0
            new = alpha[None, :] + Ex * np.einsum("kxj,xj->xk", Ba, wa / Z)
            moving = np.abs(new - ga).sum(axis=1) >= tol * new.sum(axis=1)
            ga = new
            n_updates = max(n_updates, it + 1)
            g[active[~moving]] = ga[~moving]
            active, Ba, wa, ga = active[moving], Ba[:, moving], wa[moving], ga[moving]
            if not active.shape[0]:
                break
        g[active] = ga
        # phi for the final gamma: the counts of the M-step and the data part of the bound.
        Ex = np.exp(_elog(g))
        Z = np.einsum("kxj,xk->xj", B, Ex)
        Z[~mask] = 1.0
        mult = counts[start:stop, None] * weight                         # (c, r), 0 where missing
        with np.errstate(divide="ignore"):
            log_z += float((mult * np.log(Z)).sum())
        A = sp.csr_matrix(((mult / Z).ravel(), slots[start:stop].ravel(),
                           np.arange(0, (stop - start) * r + 1, r)), shape=(stop - start, W))
        label_counts += A.T @ Ex
        gamma[start:stop] = g
    return gamma, label_counts * beta, log_z, n_updates
