"""cclust-example: the worked example of a cclust plugin.

It registers one consensus function, ``ccpivot`` (CC-Pivot / KwikCluster on the co-association
matrix), through the ``cclust.consensus`` entry-point group of its ``pyproject.toml``. Nothing
here is imported by ``import cclust``; the registry imports this module the first time the
name ``ccpivot`` is asked for.

It uses only cclust's public API: :func:`cclust.base.declare`,
:func:`cclust.ensemble.as_ensemble`, :class:`cclust.ConsensusResult` and the argument checks
and memory budget of :mod:`cclust.validation`, so its errors read as the built-in methods' do.
"""
import numpy as np
import scipy.sparse as sp

from cclust.base import declare
from cclust.ensemble import as_ensemble
from cclust.result import ConsensusResult
from cclust.validation import check_int, check_random_state, require_memory

__version__ = "0.1.0"
__all__ = ["ccpivot", "disagreement_cost", "merge_to", "pivot_clustering", "split_to"]

#: Co-association must exceed 1/2 by more than this to count as a majority: weights summed in
#: floating point can land an exact half one ulp above 0.5.
MAJORITY_SLACK = 1e-9


# -- the algorithm -------------------------------------------------------------------------------

def pivot_clustering(coassociation, order, threshold=0.5):
    """One pass of CC-Pivot (KwikCluster) over the objects in ``order``.

    The next unclustered object of ``order`` becomes a pivot; its cluster is the pivot and every
    still unclustered object whose co-association with it exceeds ``threshold``.

    Parameters
    ----------
    coassociation : ndarray of shape (n_samples, n_samples)
        Symmetric similarities in [0, 1].
    order : ndarray of shape (n_samples,)
        A permutation of the objects: the order in which pivots are tried.
    threshold : float, default=0.5
        Majority threshold (a pair joins when its similarity exceeds it by more than
        :data:`MAJORITY_SLACK`).

    Returns
    -------
    labels : ndarray of shape (n_samples,), int64
        Clusters numbered in the order their pivots were picked.
    n_clusters : int
    """
    A = coassociation
    labels = np.full(A.shape[0], -1, dtype=np.int64)
    k = 0
    for pivot in order:
        if labels[pivot] >= 0:
            continue
        members = (labels < 0) & (A[pivot] > threshold + MAJORITY_SLACK)
        members[pivot] = True
        labels[members] = k
        k += 1
    return labels, k


def _indicator(labels, k):
    n = labels.shape[0]
    return sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, k))


def disagreement_cost(coassociation, labels):
    """Weighted correlation-clustering disagreement of a labelling.

    ``sum over pairs x < y`` of ``1 - A[x, y]`` if x and y share a cluster, ``A[x, y]`` if not
    (Ailon, Charikar & Newman 2008, the weighted objective with w+ = A and w- = 1 - A). With no
    missing labels and equal weights it is the average, over the partitions, of the number of
    pairs on which the labelling and the partition disagree.

    Parameters
    ----------
    coassociation : ndarray of shape (n_samples, n_samples)
    labels : ndarray of shape (n_samples,)
        Labels in ``0..K-1``.

    Returns
    -------
    cost : float
    """
    A = coassociation
    labels = np.asarray(labels, dtype=np.int64)
    n = labels.shape[0]
    k = int(labels.max()) + 1
    diagonal = float(np.trace(A))
    all_pairs = (float(A.sum()) - diagonal) / 2
    MA = _indicator(labels, k).T @ A                      # (k, n): sum of A over each cluster
    within = (float(np.asarray(MA)[labels, np.arange(n)].sum()) - diagonal) / 2
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    within_pairs = float((sizes * (sizes - 1) / 2).sum())
    return (all_pairs - within) + (within_pairs - within)


def merge_to(coassociation, labels, n_clusters):
    """Merge clusters greedily until ``n_clusters`` remain.

    Each step merges the two clusters with the highest average co-association between their
    members (average linkage); ties go to the pair with the lowest cluster numbers.

    Returns
    -------
    labels : ndarray of shape (n_samples,), int64, in ``0..n_clusters-1``
    """
    labels = np.asarray(labels, dtype=np.int64)
    k = int(labels.max()) + 1
    if k <= n_clusters:
        return labels.copy()
    M = _indicator(labels, k)
    S = np.asarray((M.T @ coassociation) @ M.toarray())   # (k, k) summed co-association
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    clusters = list(range(k))                              # row of S -> original cluster ids
    merged_into = np.arange(k)
    upper = np.triu(np.ones((k, k), dtype=bool), 1)
    while S.shape[0] > n_clusters:
        average = np.where(upper[:S.shape[0], :S.shape[0]], S / np.outer(sizes, sizes), -np.inf)
        i, j = np.unravel_index(int(np.argmax(average)), average.shape)
        S[i, :] += S[j, :]
        S[:, i] += S[:, j]
        sizes[i] += sizes[j]
        merged_into[merged_into == clusters[j]] = clusters[i]
        S = np.delete(np.delete(S, j, axis=0), j, axis=1)
        sizes = np.delete(sizes, j)
        del clusters[j]
    final = {c: index for index, c in enumerate(clusters)}
    return np.array([final[c] for c in merged_into[labels].tolist()], dtype=np.int64)


def _bisect(sub):
    """Split a cluster (its co-association block ``sub``) around its two most separate members.

    ``a`` is the member with the lowest mean co-association with the cluster, ``b`` the member
    least co-associated with ``a``; each member joins whichever of them it is more co-associated
    with (ties stay with ``a``). Returns the boolean mask of ``b``'s side.
    """
    a = int(np.argmin(sub.mean(axis=1)))
    to_a = sub[a].copy()
    to_a[a] = np.inf
    b = int(np.argmin(to_a))
    side_b = sub[:, b] > sub[:, a]
    side_b[a] = False
    side_b[b] = True
    return side_b


def split_to(coassociation, labels, n_clusters):
    """Bisect clusters until there are ``n_clusters``.

    Each step bisects every cluster of two or more members (see ``_bisect``) and keeps the
    bisection that raises the disagreement cost least, i.e. whose cross pairs have the lowest
    ``sum (2 A[x, y] - 1)``; ties go to the lowest cluster number. The new cluster takes the
    next number.
    """
    A = coassociation
    labels = np.array(labels, dtype=np.int64, copy=True)
    k = int(labels.max()) + 1
    while k < n_clusters:
        best = None
        for c in range(k):
            members = np.flatnonzero(labels == c)
            if members.shape[0] < 2:
                continue
            sub = A[np.ix_(members, members)]
            side_b = _bisect(sub)
            cross = sub[np.ix_(side_b, ~side_b)]
            delta = 2 * float(cross.sum()) - cross.size
            if best is None or delta < best[0]:
                best = (delta, members[side_b])
        labels[best[1]] = k
        k += 1
    return labels


@declare(chooses_n_clusters=True, handles_missing=True, object_order="distribution")
def ccpivot(ensemble, n_clusters=None, *, n_init=10, random_state=None, max_bytes=None):
    """CC-Pivot (KwikCluster) consensus on the co-association matrix.

    Ailon, Charikar & Newman, "Aggregating inconsistent information: ranking and clustering",
    J. ACM 55(5), 2008: algorithm CC-Pivot applied to consensus clustering through the
    co-association matrix ``A`` (``A[x, y]`` = weighted fraction of the partitions labelling both
    x and y that put them together). Repeat until every object is clustered: pick a random pivot
    among the unclustered objects and make a cluster of it and every unclustered object whose
    co-association with it exceeds 1/2. Each of ``n_init`` random pivot orders gives a
    clustering; the one with the lowest weighted disagreement cost
    ``sum_{x<y, together} (1 - A[x, y]) + sum_{x<y, apart} A[x, y]`` is kept. Ailon et al.
    prove a constant expected approximation factor for this rounding on consensus-clustering
    instances.

    CC-Pivot chooses the number of clusters itself (``n_clusters=None``). When ``n_clusters``
    is given the chosen clustering is adjusted to exactly that many clusters: if it has more,
    the two clusters with the highest average co-association between their members are merged
    until ``n_clusters`` remain (greedy average linkage, ties to the lowest cluster numbers);
    if it has fewer, the cluster whose bisection around its two least co-associated members
    raises the cost least is split, until there are ``n_clusters``.

    Objects missing from some partitions are handled through the co-association, which only
    counts the partitions that label both objects of a pair (a pair that no partition labels
    together has ``A = 0`` and is kept apart).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        The basic partitions (anything ``cclust.Ensemble`` accepts).
    n_clusters : int, default=None
        Number of clusters of the result; None lets CC-Pivot choose.
    n_init : int, default=10
        Random pivot orders tried.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the pivot orders.
    max_bytes : int, default=None
        Memory budget for the dense co-association (see ``Ensemble.coassociation``).

    Returns
    -------
    ConsensusResult
        ``objective`` is the disagreement cost of ``labels`` (lower is better); ``extras`` has
        ``n_pivot_clusters`` (clusters of the best CC-Pivot pass, before merging or splitting)
        and ``pivot_cost`` (its cost).

    Raises
    ------
    cclust.errors.ValidationError
        If ``n_clusters`` is not in ``[1, n_samples]``, ``n_init < 1`` or ``random_state`` is
        not a seed.
    cclust.errors.MemoryBudgetError
        If the dense co-association would exceed the memory budget.

    Examples
    --------
    >>> from cclust import Ensemble
    >>> from cclust_example import ccpivot
    >>> ensemble = Ensemble([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]])
    >>> result = ccpivot(ensemble, None, random_state=0)
    >>> result.labels.tolist(), result.n_clusters
    ([0, 0, 0, 1, 1, 1], 2)
    >>> ccpivot(ensemble, 3, random_state=0).n_clusters
    3

    Through the registry, once the distribution is installed:
    ``cclust.consensus("ccpivot", ensemble, None, random_state=0)``.
    """
    ensemble = as_ensemble(ensemble)
    n = ensemble.n_samples
    n_clusters = check_int(n_clusters, "n_clusters", low=1, high=n, allow_none=True)
    n_init = check_int(n_init, "n_init", low=1)
    rng = check_random_state(random_state)
    # The matrix and the pivot loop's float64 working copy, checked before either is allocated.
    require_memory(ensemble.coassociation_bytes() + n * n * 8, f"ccpivot on the dense co-association of {n} objects",
                   "use a linear-memory method (kcc, hbgf, mcla) or cspa(neighbors='lsh')", max_bytes)
    A = ensemble.coassociation(max_bytes=max_bytes)

    best_labels, best_cost = None, np.inf
    for _ in range(n_init):
        labels, _k = pivot_clustering(A, rng.permutation(n))
        cost = disagreement_cost(A, labels)
        if cost < best_cost:
            best_labels, best_cost = labels, cost
    n_pivot = int(best_labels.max()) + 1
    labels = best_labels
    if n_clusters is not None and n_pivot > n_clusters:
        labels = merge_to(A, labels, n_clusters)
    elif n_clusters is not None and n_pivot < n_clusters:
        labels = split_to(A, labels, n_clusters)
    return ConsensusResult.from_labels(
        labels,
        objective=disagreement_cost(A, labels),
        objective_name="disagreement cost (lower is better)",
        n_iter=n_init,
        converged=True,
        method="ccpivot",
        extras={"n_pivot_clusters": n_pivot, "pivot_cost": float(best_cost)},
    )
