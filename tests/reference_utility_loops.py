"""The per-partition loops KCC's utilities were computed with before they were grouped by K_i
(cclust.base.Utility): one pass per partition, literal, kept to check that the grouped
computation gives the same floats bit for bit."""
import numpy as np


def size_mus(util, ensemble):
    sizes = np.split(ensemble.cluster_sizes.astype(np.float64), ensemble.offsets[1:-1])
    return np.array([float(util.mu(c / c.sum())) for c in sizes])


def normalizers(util, ensemble):
    if not util.normalized:
        return np.ones(ensemble.n_partitions)
    out = np.abs(size_mus(util, ensemble))
    return np.where(out > 0, out, np.inf)


def gamma_offset(util, ensemble):
    point = float(util.mu(np.array([1.0])))
    weights = ensemble.weights / normalizers(util, ensemble)
    return float(np.where(weights > 0, weights * (point - size_mus(util, ensemble)), 0.0).sum())


def partition_utilities(util, ensemble, table):
    values = np.empty(ensemble.n_partitions)
    norm = normalizers(util, ensemble)
    for i in range(ensemble.n_partitions):
        block = table[:, ensemble.offsets[i]:ensemble.offsets[i + 1]].astype(np.float64)
        rows = block.sum(1)
        total = rows.sum()
        filled = rows > 0
        p_k = rows[filled] / total
        P_k = block[filled] / rows[filled, None]
        P = block.sum(0) / total
        u = float((p_k * util.mu(P_k)).sum() - util.mu(P))
        values[i] = u / norm[i] if np.isfinite(norm[i]) else 0.0
    return values
