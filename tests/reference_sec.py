"""Slow, literal reference of SEC (Liu, Wu, Liu, Tao & Fu 2017): the explicit co-association, its
degrees, the explicit rows of D^{-1} B W^{1/2} and the normalized cut. Only for small inputs."""
import numpy as np


def one_hot(labels):
    """(n, sum K_i) 0/1 matrix (K_i = max label + 1); a missing label leaves its block zero."""
    blocks = []
    for column in labels.T:
        block = np.zeros((labels.shape[0], int(column.max()) + 1))
        for x, l in enumerate(column):
            if l >= 0:
                block[x, l] = 1.0
        blocks.append(block)
    return np.hstack(blocks)


def column_weights(labels, weights):
    return np.concatenate([np.full(int(c.max()) + 1, w) for c, w in zip(labels.T, weights)])


def coassociation(labels, weights):
    """S = B W B^T, written as a double loop over objects and partitions."""
    n, r = labels.shape
    S = np.zeros((n, n))
    for x in range(n):
        for y in range(n):
            S[x, y] = sum(weights[j] for j in range(r) if labels[x, j] >= 0 and labels[x, j] == labels[y, j])
    return S


def scaled_rows(labels, weights):
    """The explicit points of SEC's weighted K-means, D^{-1} B W^{1/2}, and the weights D."""
    S = coassociation(labels, weights)
    d = S.sum(axis=1)
    X = one_hot(labels) * np.sqrt(column_weights(labels, weights))[None, :] / d[:, None]
    return X, d


def ncut(S, labels):
    """Normalized cut: sum over clusters of cut(C, rest) / vol(C)."""
    d = S.sum(axis=1)
    total = 0.0
    for k in np.unique(labels):
        inside = labels == k
        total += S[np.ix_(inside, ~inside)].sum() / d[inside].sum()
    return total
