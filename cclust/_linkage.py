"""Agglomerative clustering for the consensus functions: one place for the linkage code.

* :func:`average_linkage` — size-weighted average linkage (UPGMA) of groups of identical
  objects by the nearest-neighbour chain (Murtagh 1983; Mullner 2011, Fig. 4), and
  :func:`cut_merges`, which keeps its ``m - K`` lowest merges. ECPCS-HC (Huang et al. 2021),
  LWEA (Huang, Wang & Lai 2018), WEAC (Huang, Lai & Wang 2015) and LCE (Iam-On et al. 2011)
  run it on their microclusters, which is exact: a group of identical objects merges first, at
  height 0, and then behaves as one vertex of that size.
* :func:`linkage_on_groups` — average, complete or single linkage of groups cut at K (single
  and complete linkage do not depend on the sizes and go to SciPy).
* :func:`cut_dendrogram` — the K-cluster cut of a SciPy linkage matrix (EAC, PTA, WEAC, LCE,
  Monti's consensus matrix).

Ties: the chain moves to the lowest-index nearest neighbour and merges as soon as the
previous chain element is among the nearest (so two vertices at equal distance merge in the
order the chain meets them); :func:`cut_merges` applies merges of equal height in the order
found. No family of consensus functions is imported here.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cclust.errors import ValidationError
from cclust.validation import check_int

__all__ = ["LINKAGES", "check_linkage", "average_linkage", "cut_merges", "linkage_on_groups", "cut_dendrogram"]

#: The linkages :func:`linkage_on_groups` offers.
LINKAGES = ("average", "complete", "single")

#: The two forms of the average-linkage update (see :func:`average_linkage`).
UPDATES = ("fractions", "weighted-sum")

#: Distances are rounded to this many decimals before :func:`linkage_on_groups` agglomerates,
#: so pairs tied in exact arithmetic stay tied whatever the order of the sums that made them.
DECIMALS = 12


def check_linkage(linkage, allowed=LINKAGES):
    if linkage not in allowed:
        raise ValidationError(f"linkage must be one of {list(allowed)}, got {linkage!r}.")
    return linkage


def average_linkage(D, sizes, *, update="fractions"):
    """Size-weighted average linkage (UPGMA) by the nearest-neighbour chain.

    Parameters
    ----------
    D : ndarray of shape (m, m), float64
        Symmetric distances between m vertices; overwritten. A vertex standing for
        ``sizes[i]`` identical objects at distance 0 from each other behaves as those objects
        after their zero-height merges.
    sizes : array-like of shape (m,)
        Objects per vertex.
    update : {"fractions", "weighted-sum"}, default="fractions"
        How the Lance-Williams update of average linkage,
        ``d(a + b, k) = (|a| d(a, k) + |b| d(b, k)) / (|a| + |b|)``, is evaluated in floating
        point: ``"fractions"`` as ``d(a, k) |a| / (|a| + |b|) + d(b, k) |b| / (|a| + |b|)``
        (ECPCS-HC, WEAC, LCE), ``"weighted-sum"`` as written (LWEA). Equal in exact arithmetic;
        each method keeps the form its results were first recorded with, since the last bit
        can decide a near tie.

    Returns
    -------
    merges : ndarray of shape (m - 1, 3)
        ``(a, b, height)`` in the order found (not sorted by height): b is merged into a
        (a < b), and the merged vertex keeps slot a.

    Notes
    -----
    Ties: the chain steps to the lowest-index nearest neighbour, and merges when the previous
    chain element is at the smallest distance (even if another vertex is as close).
    """
    if update not in UPDATES:
        raise ValidationError(f"update must be one of {list(UPDATES)}, got {update!r}.")
    fractions = update == "fractions"
    m = D.shape[0]
    size = np.asarray(sizes, dtype=np.float64).copy()
    np.fill_diagonal(D, np.inf)
    merges = np.empty((max(m - 1, 0), 3))
    dead = np.zeros(m, dtype=bool)
    chain = []
    start = 0
    for step in range(m - 1):
        if not chain:
            while dead[start]:
                start += 1
            chain.append(start)
        while True:
            x = chain[-1]
            row = D[x]          # merged-away vertices are at distance +inf
            y = int(row.argmin())
            if len(chain) > 1 and row[chain[-2]] <= row[y]:
                y = chain[-2]
                break
            chain.append(y)
        del chain[-2:]
        height = float(row[y])
        a, b = (x, y) if x < y else (y, x)
        total = size[a] + size[b]
        if fractions:
            merged = D[a] * (size[a] / total) + D[b] * (size[b] / total)
        else:
            merged = (size[a] * D[a] + size[b] * D[b]) / total
        merged[a] = np.inf
        D[a] = merged
        D[:, a] = merged
        D[b] = np.inf
        D[:, b] = np.inf
        size[a] = total
        dead[b] = True
        merges[step] = (a, b, height)
    return merges


def cut_merges(merges, m, n_clusters):
    """Labels of m vertices after the ``m - n_clusters`` lowest merges of
    :func:`average_linkage` (ties: in the order found, a valid order for a reducible linkage).

    Returns the labels, numbered by their lowest vertex, and the height of the first merge
    left out (NaN if none is).
    """
    merges = np.asarray(merges, dtype=np.float64).reshape(-1, 3)
    order = np.argsort(merges[:, 2], kind="stable")
    parent = np.arange(m)

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    applied = m - n_clusters
    for k in order[:applied]:
        a, b = find(int(merges[k, 0])), find(int(merges[k, 1]))
        parent[max(a, b)] = min(a, b)
    roots = np.array([find(i) for i in range(m)])
    height = float(merges[order[applied], 2]) if applied < merges.shape[0] else float("nan")
    return np.unique(roots, return_inverse=True)[1].reshape(-1), height


def linkage_on_groups(D, counts, n_clusters, linkage):
    """Agglomerate m groups of identical objects (distances D between groups, ``counts`` objects
    each) and cut at ``n_clusters``: the labels of the groups and the height of the first merge
    left out.

    Exact for objects whose distance to their own group is the smallest they have (they merge
    first, at the bottom of the dendrogram): average linkage is the size-weighted average of
    groups (:func:`average_linkage`); single and complete linkage do not depend on the sizes
    (:func:`scipy.cluster.hierarchy.linkage`). D (float64, m x m) is overwritten, after its
    entries are rounded to :data:`DECIMALS` decimals.
    """
    from scipy.cluster.hierarchy import linkage as scipy_linkage
    from scipy.spatial.distance import squareform

    m = D.shape[0]
    np.round(D, DECIMALS, out=D)
    if linkage == "average":
        return cut_merges(average_linkage(D, counts), m, n_clusters)
    np.fill_diagonal(D, 0.0)
    Z = scipy_linkage(squareform(D, checks=False), method=linkage)
    labels = cut_dendrogram(Z, n_clusters)
    height = float(Z[m - n_clusters, 2]) if n_clusters < m else float("nan")
    return labels, height


def cut_dendrogram(Z: npt.ArrayLike, n_clusters: int) -> npt.NDArray[np.intp]:
    """Labels of the ``n_clusters`` clusters left after the first ``n - n_clusters`` merges of
    SciPy's linkage matrix ``Z`` (n - 1 rows, merges in row order).

    The cut :func:`scipy.cluster.hierarchy.cut_tree` describes, and many times faster: pointer
    jumping on the merge tree is O(n log depth) in NumPy, where ``cut_tree`` walks the tree in
    Python once per merge (0.08 s at n = 1,483 against under 1 ms). Where merges tie in height,
    ``cut_tree`` reorders them and can return another partition than the merges describe; this cut
    keeps the linkage's own order. Exactly K clusters also when merges tie at the cut height
    (unlike ``fcluster(..., "maxclust")``, which cuts by height). Clusters are numbered by
    their lowest dendrogram node."""
    Z = np.asarray(Z)
    n = Z.shape[0] + 1
    n_clusters = check_int(n_clusters, "n_clusters", low=1, high=n)
    parent = np.arange(2 * n - 1)
    merged = Z[:n - n_clusters, :2].astype(np.int64)
    parent[merged[:, 0]] = np.arange(n, 2 * n - n_clusters)
    parent[merged[:, 1]] = np.arange(n, 2 * n - n_clusters)
    while True:   # pointer jumping: every node ends at the root of its cluster
        up = parent[parent]
        if np.array_equal(up, parent):
            break
        parent = up
    return np.unique(parent[:n], return_inverse=True)[1].reshape(-1)
