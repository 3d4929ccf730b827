"""Small inputs and helpers shared by the conformance checks.

Everything here is built with NumPy from fixed seeds, so a failure seen once is seen again on
any machine. The kit deliberately does not use ``cclust.metrics``: a broken metric must not be
able to hide a broken consensus function.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import numpy.typing as npt

#: Seed of the data the kit builds (the method under test gets its own ``random_state``).
DATA_SEED = 20240

#: Objects per blob.
BLOB_SIZE = 12


def check_kit_n_clusters(n_clusters):
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral) or n_clusters < 2:
        raise ValueError(f"n_clusters must be an int >= 2 for the conformance kit, got {n_clusters!r}.")
    return int(n_clusters)


def check_kit_blob_size(blob_size):
    if isinstance(blob_size, bool) or not isinstance(blob_size, numbers.Integral) or blob_size < 4:
        raise ValueError(f"blob_size must be an int >= 4 for the conformance kit (its partitions split a blob "
                         f"in two and move a tenth of the objects), got {blob_size!r}.")
    return int(blob_size)


def blobs(n_clusters=3, *, blob_size=BLOB_SIZE, seed=DATA_SEED):
    """Well-separated Gaussian blobs in the plane.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of blobs; their centres sit on a circle of radius 10, each blob has standard
        deviation 0.5, so every blob is far from every other one.
    blob_size : int, default=12
        Objects per blob.
    seed : int
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n_clusters * blob_size, 2), float64, writable
    y : ndarray of shape (n_clusters * blob_size,), int64 — the blob of each object
    """
    n_clusters = check_kit_n_clusters(n_clusters)
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(n_clusters) / n_clusters
    centres = 10.0 * np.column_stack([np.cos(angles), np.sin(angles)])
    y = np.repeat(np.arange(n_clusters, dtype=np.int64), blob_size)
    X = centres[y] + rng.normal(scale=0.5, size=(y.shape[0], 2))
    return X, y


def relabel(labels, rng):
    """``labels`` with its cluster names permuted at random (-1 stays -1)."""
    labels = np.asarray(labels)
    present = labels >= 0
    values = np.unique(labels[present])
    mapping = dict(zip(values.tolist(), rng.permutation(values).tolist()))
    out = labels.copy()
    out[present] = [mapping[v] for v in labels[present].tolist()]
    return out


def blob_partitions(n_clusters: int = 3, *, blob_size: int = BLOB_SIZE,
                    seed: int = DATA_SEED) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Blob data and a label matrix of basic partitions that mostly agree with the blobs.

    The eight partitions are: three exact copies of the blobs (each with its clusters renamed),
    three noisy copies (10%, 10% and 20% of the objects moved to a random cluster), one that
    splits a blob in two and one that merges two blobs. Their consensus is plainly the blobs.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of blobs.
    blob_size : int, default=12
        Objects per blob, at least 4.
    seed : int
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n, 2)
    y : ndarray of shape (n,), the blobs
    labels : ndarray of shape (n, 8), int64, writable
    """
    X, y = blobs(n_clusters, blob_size=check_kit_blob_size(blob_size), seed=seed)
    rng = np.random.default_rng(seed + 1)
    n = y.shape[0]
    columns = [relabel(y, rng) for _ in range(3)]
    for fraction in (0.1, 0.1, 0.2):
        noisy = y.copy()
        moved = rng.choice(n, size=int(round(fraction * n)), replace=False)
        noisy[moved] = rng.integers(0, n_clusters, size=moved.shape[0])
        columns.append(relabel(noisy, rng))
    split = y.copy()
    first = y == 0
    split[first & (X[:, 0] > np.median(X[first, 0]))] = n_clusters
    columns.append(relabel(split, rng))
    merged = np.where(y == n_clusters - 1, 0, y)
    columns.append(relabel(merged, rng))
    return X, y, np.column_stack(columns).astype(np.int64)


def noisy(labels, fraction, *, seed=DATA_SEED):
    """A copy of ``labels`` with about ``fraction`` of each partition's labels redrawn at random
    among that partition's clusters (-1 stays -1): an ensemble whose consensus is not obvious.
    """
    rng = np.random.default_rng(seed + 4)
    out = np.array(labels, dtype=np.int64, copy=True)
    for j in range(out.shape[1]):
        column = out[:, j]
        present = column >= 0
        redraw = present & (rng.random(column.shape[0]) < fraction)
        column[redraw] = rng.integers(0, column[present].max() + 1, size=int(redraw.sum()))
    return out


def with_missing(labels, fraction=0.15, *, seed=DATA_SEED):
    """A copy of ``labels`` with about ``fraction`` of the entries set to -1.

    Every object keeps at least one label and every partition keeps at least one object.
    """
    rng = np.random.default_rng(seed + 2)
    out = np.array(labels, dtype=np.int64, copy=True)
    out[rng.random(out.shape) < fraction] = -1
    unlabelled = (out < 0).all(axis=1)
    out[unlabelled, 0] = np.asarray(labels)[unlabelled, 0]
    return out


def pair_counts(a, b):
    """Integer pair counts (same-same, same-in-a, same-in-b, all pairs) of two labellings."""
    a = np.asarray(a).reshape(-1)
    b = np.asarray(b).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"labellings of different lengths {a.shape[0]} and {b.shape[0]}.")
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    ai = ai.reshape(-1)
    bi = bi.reshape(-1)
    table = np.zeros((int(ai.max()) + 1, int(bi.max()) + 1), dtype=np.int64)
    np.add.at(table, (ai, bi), 1)

    def pairs(counts):
        return int((counts * (counts - 1) // 2).sum())

    n = a.shape[0]
    return pairs(table), pairs(table.sum(axis=1)), pairs(table.sum(axis=0)), n * (n - 1) // 2


def adjusted_rand(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Adjusted Rand index of two labellings (Hubert & Arabie 1985), from integer pair counts.

    1.0 exactly when the labellings are the same partition (and also when both put every
    object in one cluster, or every object alone).
    """
    together, in_a, in_b, total = pair_counts(a, b)
    if total == 0:
        return 1.0
    expected = in_a * in_b / total
    maximum = (in_a + in_b) / 2
    if maximum == expected:
        return 1.0
    return (together - expected) / (maximum - expected)


def same_partition(a: npt.ArrayLike, b: npt.ArrayLike) -> bool:
    """Whether two labellings are one partition up to renaming the clusters (ARI == 1).

    Decided exactly on integer pair counts: ARI is 1 if and only if the pairs put together by
    ``a``, by ``b`` and by both are the same number.
    """
    a = np.asarray(a).reshape(-1)
    b = np.asarray(b).reshape(-1)
    if a.shape != b.shape:
        return False
    together, in_a, in_b, _ = pair_counts(a, b)
    return together == in_a == in_b


def flags(array):
    """The flags of an array that a callee must not change."""
    f = array.flags
    return {"C_CONTIGUOUS": f.c_contiguous, "F_CONTIGUOUS": f.f_contiguous,
            "OWNDATA": f.owndata, "WRITEABLE": f.writeable, "ALIGNED": f.aligned}


class Snapshot:
    """Contents and flags of arrays before a call, to compare with after it."""

    def __init__(self, **arrays):
        self._arrays = arrays
        self._copies = {name: np.array(a, copy=True) for name, a in arrays.items()}
        self._flags = {name: flags(a) for name, a in arrays.items()}

    def changes(self):
        """Descriptions of every array whose contents or flags differ from the snapshot."""
        out = []
        for name, array in self._arrays.items():
            before = self._copies[name]
            if array.shape != before.shape or not np.array_equal(array, before, equal_nan=before.dtype.kind == "f"):
                out.append(f"{name} was modified in place")
            now = flags(array)
            changed = [k for k in now if now[k] != self._flags[name][k]]
            if changed:
                out.append(f"{name} changed its flags {', '.join(f'{k}: {self._flags[name][k]} -> {now[k]}' for k in changed)}")
        return out


def noisy_refinements(n_samples: int, n_partitions: int, *, k_range: tuple[int, int] = (8, 40),
                      shuffled: bool = False, seed: int = 0) -> tuple[npt.NDArray[np.float64],
                                                                      npt.NDArray[np.int64], Any]:
    """Eight classes and noisy refinements of them: ensembles as large per object as they get.

    Partition i has K_i clusters (drawn in ``k_range``): it splits every class into K_i // 8
    parts at random, then a tenth of its labels is redrawn among its K_i clusters. Every label
    row then differs from the others, so the structures a method holds per row (the one-hot,
    memberships, graphs) are as large as they get and grow with n r: the ensembles to measure a
    method's memory on (:func:`peak_memory`, at two sizes) or to time its passes over the labels.
    A ``k_range`` of hundreds gives wide partitions, whose tables of clusters against clusters
    outgrow the per-object terms.

    Parameters
    ----------
    n_samples, n_partitions : int
    k_range : (int, int), default=(8, 40)
        Smallest and largest K_i.
    shuffled : bool, default=False
        Rename every partition's clusters at random and reverse the partitions' order, so the
        ensemble is not in canonical form.
    seed : int, default=0

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
        Features of eight Gaussian blobs, one per class.
    y : ndarray of shape (n_samples,), int64
        The classes.
    ensemble : Ensemble

    Examples
    --------
    >>> from cclust.testing import noisy_refinements
    >>> X, y, E = noisy_refinements(1000, 20)
    >>> E.labels.shape, int(E.n_clusters.min()) >= 8
    ((1000, 20), True)
    """
    from cclust.ensemble import Ensemble

    k_low, k_high = (int(k) for k in k_range)
    if not 1 <= k_low <= k_high:
        raise ValueError(f"k_range must be (low, high) with 1 <= low <= high, got {k_range!r}.")
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 8, n_samples)
    columns = []
    for _ in range(n_partitions):
        k = int(rng.integers(k_low, k_high + 1))
        labels = y * (k // 8) + rng.integers(0, max(1, k // 8), n_samples)
        noise = rng.random(n_samples) < 0.1
        labels[noise] = rng.integers(0, k, int(noise.sum()))
        columns.append(rng.permutation(k)[labels] if shuffled else labels)
    X = rng.normal(0.0, 6.0, size=(8, 3))[y] + rng.normal(size=(n_samples, 3))
    return X, y, Ensemble(np.column_stack(columns[::-1] if shuffled else columns))
