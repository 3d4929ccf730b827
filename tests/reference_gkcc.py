"""Slow, obviously correct NumPy reference of GKCC (Li & Liu 2018, Algorithm 1).

The augmented space is built explicitly: the rows are [sqrt(a) X, sqrt(w_1) b_1(x), ...] with
b_i(x) the one-hot of x's label in partition i (Li & Liu 2018, eq. 3), so K-means there is textbook
K-means with the squared Euclidean distance (the compiled engine's Uc distance
w (1 - 2 m[l] + ||m||^2) is w ||e_l - m||^2). Candidates are taken as given (the sampling is the
only randomness of GKCC), so the reference reproduces the partitions exactly. Only for small
inputs; empty clusters are not modelled (the reference refuses them).
"""
import numpy as np


def one_hot(column, size):
    B = np.zeros((column.shape[0], size))
    B[np.arange(column.shape[0]), column] = 1.0
    return B


def space(X, partitions, scaling):
    """The explicit augmented matrix for the partitions generated so far."""
    if scaling == "balanced":
        spread = ((X - X.mean(axis=0)) ** 2).sum(axis=1).mean()
        a = 1.0 / spread
        w = 1.0 / len(partitions) if partitions else 0.0
    else:
        a, w = 1.0, 1.0
    blocks = [np.sqrt(a) * X]
    for column, size in partitions:
        blocks.append(np.sqrt(w) * one_hot(column, size))
    return np.hstack(blocks)


def squared_distances(Z, centres):
    return np.array([[float(((z - c) ** 2).sum()) for c in centres] for z in Z])


def means(Z, labels, k):
    out = []
    for j in range(k):
        members = Z[labels == j]
        if members.shape[0] == 0:
            raise AssertionError("reference: an empty cluster appeared; pick other test data")
        out.append(members.mean(axis=0))
    return np.array(out)


def kmeans_from_labels(Z, labels, k, max_iter=1000):
    """Lloyd: centroids of the labels, every object to its nearest (ties keep the current)."""
    labels = labels.copy()
    for _ in range(max_iter):
        C = means(Z, labels, k)
        D = squared_distances(Z, C)
        new = labels.copy()
        for x in range(Z.shape[0]):
            if D[x, labels[x]] > D[x].min():
                new[x] = int(np.argmin(D[x]))
        if np.array_equal(new, labels):
            break
        labels = new
    C = means(Z, labels, k)
    objective = float(sum(((Z[x] - C[labels[x]]) ** 2).sum() for x in range(Z.shape[0])))
    return labels, objective, C


def kmeans_from_centres(Z, centres):
    """Assign to the nearest centre (ties: lowest index), then Lloyd."""
    labels = np.argmin(squared_distances(Z, centres), axis=1)
    return kmeans_from_labels(Z, labels, centres.shape[0])


def greedy_generation(X, n_clusters, candidates, scaling="raw"):
    """Algorithm 1's generation phase with the given sampled objects per step.

    Returns the partitions (list of label vectors, in order), each step's winner labels, each
    step's candidate objectives and the final augmented matrix.
    """
    partitions = []
    Z = space(X, partitions, scaling)
    centres = Z.mean(axis=0, keepdims=True)
    winners, objectives = [], []
    for step, k in enumerate(range(2, n_clusters + 1)):
        runs = [kmeans_from_centres(Z, np.vstack([centres, Z[c]])) for c in candidates[step]]
        objs = np.array([obj for _, obj, _ in runs])
        best = int(np.argmin(objs))
        partitions.extend((labels, k) for labels, _, _ in runs)
        winners.append(runs[best][0])
        objectives.append(objs)
        Z = space(X, partitions, scaling)
        if k < n_clusters:
            _, _, centres = kmeans_from_labels(Z, runs[best][0], k)
    return [labels for labels, _ in partitions], winners, objectives, Z


def fuse_partitions(partitions, start, n_clusters):
    """KCC with Uc on the partitions: K-means on the one-hot rows with weights 1/r."""
    r = len(partitions)
    B = np.hstack([np.sqrt(1.0 / r) * one_hot(p, int(p.max()) + 1) for p in partitions])
    labels, objective, _ = kmeans_from_labels(B, start, n_clusters)
    return labels, objective
