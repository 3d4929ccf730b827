"""Locally weighted ensemble clustering: LWEA and LWGP (Huang, Wang & Lai 2018).

Every cluster of every basic partition is weighted by how much the rest of the ensemble agrees
with it, and the consensus is formed from those weights:

* **Cluster uncertainty** (Huang et al. 2018, Definitions 3-4, eq. 7-9): the entropy, in bits,
  of the labels that partition pi_m gives to the members of cluster C, summed over the
  partitions: ``H(C) = sum_m H^m(C)``, ``H^m(C) = -sum_j p_j log2 p_j``, ``p_j = |C & C_j^m| / |C|``
  (:func:`cluster_uncertainty`).
* **Ensemble-driven cluster index** (Definition 5, eq. 10): ``ECI(C) = exp(-H(C) / (theta M))``,
  M the number of partitions, theta > 0 (default 0.4, the paper's experiments; :func:`eci`).
* **Locally weighted co-association** (Definition 7, eq. 14-17): ``a(x, y) = (1 / M) sum_m
  ECI(Cls_m(x)) [Cls_m(x) = Cls_m(y)]`` (:func:`lwca`).
* **LWEA** (sec. IV-D1, Algorithm 1): average-linkage agglomeration of the LWCA matrix, the
  dendrogram cut at K clusters (:func:`lwea`).
* **LWGP** (sec. IV-D2, Definition 8, Algorithm 2): the bipartite graph of objects and clusters,
  object x joined to each cluster C containing it with weight ECI(C), cut by the transfer cut
  (:func:`cclust.graph.tcut`; Li et al. 2012), or by METIS on request (:func:`lwgp`).

Partition weights: with an :class:`~cclust.ensemble.Ensemble`'s weights ``w_m`` (summing to 1;
``1 / M`` by default) the sums over partitions become ``M w_m``-weighted: ``H(C) = sum_m M w_m
H^m(C)``, ``a(x, y) = sum_m w_m ECI(Cls_m(x)) [...]``, and the bipartite edge of partition m
weighs ``M w_m ECI(C)``. Equal weights give the paper's equations exactly.

Missing labels (-1) are handled, with this reading of the equations (the paper has none):

* ``H^m(C)`` is the entropy of the labels pi_m gives to the members of C **that pi_m labels**
  (``p_j = |C & C_j^m| / |C & labelled by pi_m|``); a partition that labels none of C's members
  adds 0. A missing label is not counted as a cluster of its own.
* In the LWCA, a partition that leaves x or y unlabelled adds nothing to ``a(x, y)`` (its
  indicator is 0), and the sum is divided by M, not by the partitions labelling both: eq. 15 as
  written. (This differs from :meth:`cclust.Ensemble.coassociation`, which divides by the
  partitions labelling both.) With this reading objects with identical label rows remain each
  other's nearest neighbours, which is what makes LWEA's merging of them exact (see
  :func:`lwea`).
* In LWGP's graph an object has no edge to a partition that does not label it.

An object that no partition labels carries no information: it is refused (ValidationError).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cclust._codes import labels_from_codes
from cclust._linkage import DECIMALS as _DECIMALS, average_linkage, cut_merges
from cclust.base import declare
from cclust.errors import ValidationError
from cclust.graph import (
    bipartite_partition,
    check_ufactor,
    one_hot_in_order,
    partition_graph,
    tcut,
)
from cclust.result import ConsensusResult
from cclust.validation import (
    check_float,
    check_int,
    check_n_clusters,
    check_n_jobs,
    check_random_state,
    memory_budget,
    renamed_threads,
    require_memory,
)
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

__all__ = ["cluster_uncertainty", "eci", "lwca", "lwea", "lwgp", "DEFAULT_THETA", "LWCA_EXTRAS_MAX_SAMPLES"]

#: theta of the paper's experiments and of the authors' demo code (Huang et al. 2018, sec. V-B).
DEFAULT_THETA = 0.4

#: ``extras["lwca"]`` (the n x n LWCA matrix) is filled only up to this many objects.
LWCA_EXTRAS_MAX_SAMPLES = 1000


_CUTS = ("tcut", "metis")

_LWEA_ALTERNATIVE = ("pass n_groups=... (e.g. 1000) to lwea for average linkage over fine groups cut from "
                     "the kNN co-association (n_neighbors; linear memory in n), or use lwgp, hbgf or kcc, "
                     "which never form it")


# -- checks -------------------------------------------------------------------------------------

def _check_theta(theta):
    return check_float(theta, "theta", low=0.0, low_open=True)


def _prepare(ensemble, n_clusters=None):
    """Canonical ensemble (clusters numbered by first appearance, partitions sorted), the input
    ensemble, and the input column of each canonical partition; refuses objects without labels."""
    from cclust.ensemble import as_ensemble, require_every_object_labelled

    original = as_ensemble(ensemble)
    E, columns = original.canonical(return_columns=True)
    require_every_object_labelled(E, "locally weighted consensus", "has no evidence about them")
    if n_clusters is not None:
        n_clusters = check_int(n_clusters, "n_clusters", low=2, high=E.n_samples)
    if (E.n_clusters <= 1).all():
        raise ValidationError(
            "ensemble: every partition puts all objects in one cluster, so there is nothing to fuse; "
            "generate partitions with at least two clusters.")
    return E, original, columns


# -- the paper's quantities ---------------------------------------------------------------------

def _uncertainty(E):
    """H(C) of every cluster of the (canonical) Ensemble E, in its one-hot column order."""
    M = E.n_partitions
    H = np.zeros(int(E.offsets[-1]))
    codes = E.compact_labels()   # one column at a time: no int32 copy of the label matrix
    for m in range(M):
        table = E.contingency(labels_from_codes(codes[:, m]), int(E.n_clusters[m])).astype(np.float64)
        size = table.sum(axis=0)
        p = table / np.where(size > 0, size, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
        H -= (M * E.weights[m]) * terms.sum(axis=0)
    return np.maximum(H, 0.0)


def _to_input_order(values, E, original, columns):
    """Per-cluster values of the canonical ensemble E in the input ensemble's one-hot order.

    The first member of every cluster is read from the stored codes one partition at a time
    (the canonical ensemble numbers clusters by first appearance, so cluster l starts where
    a partition's running maximum first reaches l): no one-hot matrix, no int32 label matrix."""
    codes = E.compact_labels()
    first = np.empty(int(E.offsets[-1]), dtype=np.int64)    # first member of every cluster
    for i in range(E.n_partitions):
        labels = labels_from_codes(codes[:, i])
        running = np.maximum.accumulate(labels)
        starts = np.flatnonzero(labels[1:] > running[:-1]) + 1
        first[E.offsets[i]:E.offsets[i + 1]] = np.concatenate([[0], starts]) if labels[0] >= 0 else starts
    column = np.repeat(np.arange(E.n_partitions), E.n_clusters)
    source = columns[column]
    index = original.offsets[source] + original.compact_labels()[first, source].astype(np.int64)
    out = np.empty_like(values)
    out[index] = values
    return out


def cluster_uncertainty(ensemble):
    """Uncertainty (entropy in bits) of every cluster w.r.t. the ensemble (Huang et al. 2018, eq. 7-9).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Missing labels read as in the module docstring.

    Returns
    -------
    ndarray of shape (sum K_i,)
        ``H(C)`` of cluster l of partition i at ``ensemble.offsets[i] + l`` (the numbering of
        :class:`cclust.Ensemble`, i.e. the order of :meth:`~cclust.Ensemble.one_hot`'s columns).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.locally_weighted import cluster_uncertainty
    >>> cluster_uncertainty(np.array([[0, 0], [0, 1], [1, 2], [1, 2]])).round(3).tolist()
    [1.0, 0.0, 0.0, 0.0, 0.0]
    """
    E, original, columns = _prepare(ensemble)
    return _to_input_order(_uncertainty(E), E, original, columns)


def eci(ensemble, theta=DEFAULT_THETA):
    """Ensemble-driven cluster index of every cluster (Huang et al. 2018, Definition 5, eq. 10).

    ``ECI(C) = exp(-H(C) / (theta M))`` with ``H`` from :func:`cluster_uncertainty` and M the
    number of partitions; in (0, 1], 1 for a cluster every partition keeps together.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    theta : float, default=0.4
        > 0; smaller values punish uncertain clusters harder.

    Returns
    -------
    ndarray of shape (sum K_i,)
        In the numbering of :func:`cluster_uncertainty`.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.locally_weighted import eci
    >>> eci(np.array([[0, 0], [0, 1], [1, 2], [1, 2]]), theta=0.5).round(3).tolist()
    [0.368, 1.0, 1.0, 1.0, 1.0]
    """
    theta = _check_theta(theta)
    E, original, columns = _prepare(ensemble)
    return _to_input_order(np.exp(-_uncertainty(E) / (theta * E.n_partitions)), E, original, columns)


def _require_lwca(E, rows, max_bytes, what):
    """The budget check of :func:`_lwca_block` on ``rows``: O(m r), asked before the cluster
    uncertainties (an O(n r^2) pass over the contingency tables) are computed."""
    m = rows.shape[0]
    L = E.labels[rows]
    sizes = np.bincount((L + E.offsets[:-1])[L >= 0], minlength=int(E.offsets[-1]))
    largest = int(sizes.max()) if sizes.size else 0
    require_memory(m * m * 8 + largest * largest * 24 + m * E.n_partitions * 8,
                   f"the dense locally weighted co-association of {m} {what}", _LWCA_ALTERNATIVE_FOR[what],
                   max_bytes)


def _lwca_block(E, values, rows, max_bytes, what):
    """The LWCA among the objects ``rows`` (one per group): ``sum_m w_m ECI(C) [both in C]``,
    dense, each cluster's block added at once (cost sum over clusters of its size squared)."""
    _require_lwca(E, rows, max_bytes, what)
    m = rows.shape[0]
    L = E.labels[rows]
    A = np.zeros((m, m))
    for j in range(E.n_partitions):
        labels = L[:, j]
        present = np.flatnonzero(labels >= 0)
        order = present[np.argsort(labels[present], kind="stable")]
        bounds = np.flatnonzero(np.diff(labels[order])) + 1
        for members in np.split(order, bounds):
            if members.size:
                A[np.ix_(members, members)] += values[E.offsets[j] + labels[members[0]]]
    return A


_LWCA_ALTERNATIVE_FOR = {
    "objects": "use lwea(..., n_groups=...) or lwgp, which never form it",
    "distinct label rows": _LWEA_ALTERNATIVE,
}


def lwca(ensemble, theta=DEFAULT_THETA, *, max_bytes=None):
    """The locally weighted co-association matrix (Huang et al. 2018, Definition 7, eq. 14-17).

    ``a(x, y) = (1 / M) sum_m ECI(Cls_m(x)) [Cls_m(x) = Cls_m(y)]`` for x != y, and 1 on the
    diagonal (as the authors' code sets it; eq. 15 would give the mean ECI of x's clusters
    there, which no consensus step reads). Partition weights and missing labels: see the module
    docstring.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    theta : float, default=0.4
    max_bytes : int, default=None
        Memory budget of the n x n matrix.

    Returns
    -------
    ndarray of shape (n_samples, n_samples), float64

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.locally_weighted import lwca
    >>> lwca(np.array([[0, 0], [0, 1], [1, 2], [1, 2]]), theta=0.5).round(3)[0].tolist()
    [1.0, 0.184, 0.0, 0.0]
    """
    theta = _check_theta(theta)
    E, _, _ = _prepare(ensemble)
    _require_lwca(E, np.arange(E.n_samples), max_bytes, "objects")
    values = E.weights[np.repeat(np.arange(E.n_partitions), E.n_clusters)] * np.exp(
        -_uncertainty(E) / (theta * E.n_partitions))
    A = _lwca_block(E, values, np.arange(E.n_samples), max_bytes, "objects")
    np.fill_diagonal(A, 1.0)
    return A


# -- average linkage over weighted groups -------------------------------------------------------

# -- LWEA ---------------------------------------------------------------------------------------

def _ensemble_values(E, theta):
    H = _uncertainty(E)
    values = np.exp(-H / (theta * E.n_partitions))
    return H, values


@declare(handles_missing=True)
def lwea(ensemble: EnsembleLike, n_clusters: int, *, theta: float = DEFAULT_THETA, n_groups: int | None = None,
         n_neighbors: int = 10, max_bytes: int | None = None, random_state: RandomStateLike = None) -> ConsensusResult:
    """Locally weighted evidence accumulation, LWEA (Huang, Wang & Lai 2018, Algorithm 1).

    Average-linkage agglomeration of the locally weighted co-association (LWCA, eq. 15; the
    region similarity of eq. 24 is the mean LWCA over pairs of objects), the dendrogram cut at
    K clusters. The paper and the authors' code use average linkage ("AL", sec. IV-D1;
    MATLAB ``linkage(1 - LWCA, 'average')`` cut by ``cluster(..., 'maxclust', K)``).

    **Microclusters (exact).** Objects with identical label rows (:func:`cclust.graph.identical_label_rows`)
    have the same LWCA to every other object and a larger one to each other than to any other
    object (an object differing in partition m loses ``ECI(Cls_m(x)) / M > 0``). Average
    linkage merges them first, so the dendrogram above them is average linkage of the groups
    weighted by their sizes: cclust runs it on the m distinct label rows (a nearest-neighbour
    chain over an m x m matrix, O(m^2) memory and time), not on n objects. Merges tied exactly
    may be taken in another order than MATLAB's. Distances are rounded to 12 decimals, and the
    ensemble is put in a canonical order first (clusters renumbered, partitions sorted), so the
    labels do not depend on cluster names or partition order.

    **Scalable route** (``n_groups=G``, not in the paper): the objects are first cut into G
    groups of about n / G objects by METIS on the sparse kNN co-association graph that EAC and
    CSPA use (:meth:`cclust.Ensemble.knn_coassociation`, ``n_neighbors`` per object; linear
    memory), then the groups are merged by exact average linkage of the LWCA (the mean over
    all pairs of objects of two groups, computed from the one-hot without any n x n matrix:
    O(n r + G^2) memory). It approximates LWEA only in assuming that each fine group belongs
    to one cluster. Average linkage is not run on the kNN graph itself: it needs every
    pair's similarity, and an unkept pair is not a zero similarity. (A METIS cut of LWGP's
    bipartite graph into G parts was tried for the fine groups and rejected: with G near the
    number of cluster vertices its parts mix clusters, purity 0.72 against 0.97, ARI 0.37
    against 0.92 on five blobs, n = 20,000, r = 20.)

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Missing labels (-1) are handled as the module docstring says; an object without any
        label is refused.
    n_clusters : int
        K, in [2, number of distinct label rows].
    theta : float, default=0.4
        ECI's parameter (> 0); 0.4 in all the paper's experiments.
    n_groups : int, default=None
        None: the exact route on the distinct label rows. An int in [n_clusters, n_samples]:
        the scalable route above (used only when it is below the number of distinct rows);
        leave several objects per group (e.g. G = 1,500 for twenty thousand objects, and
        also for a hundred thousand).
    n_neighbors : int, default=10
        Neighbours per object of the kNN graph of the scalable route (ignored otherwise).
    max_bytes : int, default=None
        Memory budget of the m x m matrix (m the distinct label rows, or G).
    random_state : int, Generator or None
        Seeds the kNN graph and METIS on the scalable route; the exact route is deterministic
        and ignores it.

    Returns
    -------
    ConsensusResult
        ``objective`` is the average-linkage distance ``1 - mean LWCA`` of the first merge
        kept out (the cut height). ``extras``: ``eci`` and ``cluster_uncertainty`` (one value
        per cluster, numbered as :class:`cclust.Ensemble` numbers them: cluster l of partition i
        at ``offsets[i] + l``), ``theta``, ``n_microclusters``, ``route`` ("microclusters" or
        "groups"), and ``lwca`` (the n x n matrix of :func:`lwca`) when n <= 1,000 and it fits the budget.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.locally_weighted import lwea
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> lwea(labels, 2).labels.tolist()
    [0, 0, 1, 1, 1]
    """
    theta = _check_theta(theta)
    E, original, columns = _prepare(ensemble, n_clusters)
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=E.n_samples)
    n = E.n_samples
    if n_groups is not None:
        n_groups = check_int(n_groups, "n_groups", low=n_clusters, high=n)
    n_neighbors = check_int(n_neighbors, "n_neighbors", low=1)
    groups = E.distinct_rows()
    if groups is None:
        first, inverse, counts = np.arange(n), np.arange(n), np.ones(n, dtype=np.int64)
    else:
        first, inverse, counts = groups
    n_distinct = first.shape[0]
    n_clusters = check_n_clusters(n_clusters, E, n_distinct=n_distinct)
    # The budget is asked before the cluster uncertainties, an O(n r^2) pass that took minutes
    # at n = 10^5 before a refusal; the groups route asks it for at most n_groups groups.
    exact = n_groups is None or n_groups >= n_distinct
    if exact:
        _require_lwca(E, first, max_bytes, "distinct label rows")
    else:
        _require_group_distances(E, n_groups, max_bytes)
    H, values = _ensemble_values(E, theta)
    weighted = E.weights[np.repeat(np.arange(E.n_partitions), E.n_clusters)] * values
    if exact:
        route = "microclusters"
        A = _lwca_block(E, weighted, first, max_bytes, "distinct label rows")
        object_lwca = None
        if _lwca_in_extras(n, max_bytes):
            object_lwca = A[np.ix_(inverse, inverse)]
            np.fill_diagonal(object_lwca, 1.0)
        np.subtract(1.0, A, out=A)
        np.round(A, _DECIMALS, out=A)
        sizes = counts
        member_of = inverse
    else:
        route = "groups"
        fine = _fine_groups(E, n_groups, n_neighbors, random_state, max_bytes)
        A, sizes = _group_distances(E, weighted, fine, max_bytes)
        member_of = fine
        object_lwca = None
        if _lwca_in_extras(n, max_bytes):
            object_lwca = _lwca_block(E, weighted, np.arange(n), max_bytes, "objects")
            np.fill_diagonal(object_lwca, 1.0)
        if A.shape[0] < n_clusters:
            raise ValidationError(
                f"n_groups={n_groups}: the fine cut of the kNN graph left only {A.shape[0]} non-empty groups, "
                f"fewer than n_clusters={n_clusters} (METIS does so when the groups would hold only one or "
                "two objects each); pass a smaller n_groups, or drop it for the exact route.")
    merges = average_linkage(A, sizes, update="weighted-sum")
    del A
    group_labels, height = cut_merges(merges, sizes.shape[0], n_clusters)
    extras = {"eci": _to_input_order(values, E, original, columns),
              "cluster_uncertainty": _to_input_order(H, E, original, columns),
              "theta": theta, "n_microclusters": int(n_distinct), "route": route}
    if route == "groups":
        extras["n_groups"] = int(sizes.shape[0])
    if object_lwca is not None:
        extras["lwca"] = object_lwca
    return ConsensusResult.from_labels(
        group_labels[member_of], objective=height,
        objective_name="average-linkage distance 1 - LWCA of the first merge above the cut",
        method="lwea", extras=extras)


def _lwca_in_extras(n, max_bytes):
    """Whether ``extras["lwca"]`` is filled: small n, and the n x n matrix within the budget."""
    return n <= LWCA_EXTRAS_MAX_SAMPLES and 2 * n * n * 8 <= memory_budget(max_bytes)


def _bipartite_graph(E, edge_values, rows=None):
    """LWGP's graph (Definition 8): rows of objects (or the listed objects), columns of clusters,
    entry ``edge_values[C]`` where the object belongs to C."""
    return one_hot_in_order(E, np.arange(int(E.offsets[-1])), rows=rows, values=edge_values)


def _fine_groups(E, n_groups, n_neighbors, random_state, max_bytes):
    """The scalable route's fine groups: METIS on the kNN co-association graph
    (:meth:`cclust.Ensemble.knn_coassociation`), cut into ``n_groups`` parts, empty parts dropped."""
    rng = check_random_state(random_state)
    A = E.knn_coassociation(n_neighbors, random_state=rng, dtype=np.float64, max_bytes=max_bytes)
    labels, _ = partition_graph(A, n_groups, random_state=rng, symmetric=True)
    return np.unique(labels, return_inverse=True)[1].reshape(-1)


def _require_group_distances(E, g, max_bytes):
    require_memory(g * g * 8 * 3 + g * int(E.offsets[-1]) * 16,
                   f"the average-linkage distances of {g} groups", "pass a smaller n_groups", max_bytes)


def _group_distances(E, weighted, fine, max_bytes):
    """``1 - mean LWCA`` between every two groups of ``fine``, from the one-hot: the LWCA summed
    over the pairs of groups g and h is ``sum_C w ECI(C) |g & C| |h & C|``."""
    g = int(fine.max()) + 1
    _require_group_distances(E, g, max_bytes)
    n = E.n_samples
    indicator = sp.csr_matrix((np.ones(n), (fine, np.arange(n))), shape=(g, n))
    P = (indicator @ E.one_hot()).toarray()                 # |g & C|
    total = (P * weighted[None, :]) @ P.T
    sizes = np.bincount(fine, minlength=g)
    D = 1.0 - total / np.outer(sizes, sizes).astype(np.float64)
    np.round(D, _DECIMALS, out=D)
    return D, sizes


# -- LWGP ---------------------------------------------------------------------------------------

@renamed_threads
@declare(handles_missing=True, object_order="distribution")
def lwgp(ensemble: EnsembleLike, n_clusters: int, *, theta: float = DEFAULT_THETA, cut: str = "tcut", n_init: int = 3,
         max_iter: int = 100, ufactor: int | None = None, max_bytes: int | None = None,
         random_state: RandomStateLike = None, n_jobs: int | None = None) -> ConsensusResult:
    """Locally weighted graph partitioning, LWGP (Huang, Wang & Lai 2018, Algorithm 2).

    The locally weighted bipartite graph (Definition 8, eq. 25-26) joins object x to every
    cluster C containing it with weight ECI(C); it is cut into K parts and the objects keep
    their part. Memory and time are linear in n r: no object x object matrix is formed.

    ``cut="tcut"`` (default; the paper's and the authors' code's): the transfer cut of Li et al.
    (2012), :func:`cclust.graph.tcut` -- the normalised-cut eigenvectors of the cluster-side
    graph ``W = B^T diag(1/d_x) B``, transferred to the objects, row-normalised, and k-means
    (k-means++, 3 runs, at most 100 iterations, as MATLAB's ``kmeans(..., 'Replicates', 3)``
    in the authors' code). Objects with identical label rows are one row of B counted by
    their number (the same cut). ``cut="metis"``: METIS on the same graph through
    :func:`cclust.graph.bipartite_partition`, as HBGF (balanced parts; not in the paper).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Missing labels (-1): the object has no edge to that partition (and the ECI reads them
        as the module docstring says); an object without any label is refused.
    n_clusters : int
        K, in [2, min(number of distinct label rows, total number of clusters)].
    theta : float, default=0.4
        ECI's parameter (> 0).
    cut : {"tcut", "metis"}, default="tcut"
    n_init, max_iter : int, default=3, 100
        The transfer cut's k-means runs and Lloyd iterations.
    ufactor : int, default=None
        METIS balance tolerance (``cut="metis"`` only).
    max_bytes : int, default=None
        Memory budget of the transfer cut (default: the ``CCLUST_MEMORY_BUDGET`` environment
        variable, else 2 GiB), asked for the graph and the cut together before the graph is
        made, as :func:`cclust.consensus_functions.ultra_scalable.tcut` asks it.
    random_state : int, Generator or None
        Seeds k-means (or METIS).
    n_jobs : int, default=None
        Threads of the k-means passes; the labels do not depend on it.

    Returns
    -------
    ConsensusResult
        ``objective``: the k-means within-cluster sum of squares in the transfer-cut embedding
        (tcut) or the weighted edge cut (metis), lower is better. ``extras``: ``eci`` and
        ``cluster_uncertainty`` (numbered as in :func:`lwea`), ``theta``, ``cut``,
        ``n_microclusters``, and for tcut the ``eigenvalues``.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.locally_weighted import lwgp
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> lwgp(labels, 2, random_state=0).labels.tolist() in ([0, 0, 1, 1, 1], [1, 1, 0, 0, 0])
    True
    """
    theta = _check_theta(theta)
    if cut not in _CUTS:
        raise ValidationError(f"cut must be one of {list(_CUTS)}, got {cut!r}.")
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    ufactor = check_ufactor(ufactor)
    n_jobs = check_n_jobs(n_jobs)
    E, original, columns = _prepare(ensemble, n_clusters)
    n = E.n_samples
    groups = E.distinct_rows()
    n_distinct = n if groups is None else groups[0].shape[0]
    n_clusters = check_n_clusters(n_clusters, E, n_distinct=n_distinct)
    n_c = int(E.offsets[-1])
    if cut == "tcut" and n_clusters > n_c:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of clusters in the ensemble ({n_c}): the "
            "transfer cut needs as many eigenvectors of the cluster graph; ask for fewer clusters or pass "
            "cut='metis'.")
    rng = check_random_state(random_state)
    if cut == "tcut":
        from cclust.graph._tcut import require_transfer_cut

        # with the canonical copy of the codes (none when the ensemble is canonical already)
        require_transfer_cut(E, n_clusters, "lwgp", max_bytes, held=0 if E is original else E.compact_labels().nbytes)
    H, values = _ensemble_values(E, theta)
    edge_values = E.n_partitions * E.weights[np.repeat(np.arange(E.n_partitions), E.n_clusters)] * values
    extras = {"eci": _to_input_order(values, E, original, columns),
              "cluster_uncertainty": _to_input_order(H, E, original, columns),
              "theta": theta, "cut": cut, "n_microclusters": int(n_distinct)}
    if cut == "tcut":
        from cclust.graph._tcut import ensemble_label_graph

        # the Lanczos route reads the label codes (columns in partition order, as the sparse matrix's)
        B = ensemble_label_graph(E, edge_values, n_jobs)
        if B is None:
            B = _bipartite_graph(E, edge_values, None if groups is None else groups[0])
        result = tcut(B, n_clusters, groups=groups, random_state=rng, n_init=n_init, max_iter=max_iter,
                      n_jobs=n_jobs)
        labels, objective = result.labels, result.objective
        extras["eigenvalues"] = result.eigenvalues
        objective_name = "within-cluster sum of squares of the transfer-cut embedding (lower is better)"
    else:
        B = _bipartite_graph(E, edge_values)
        labels, objective, moved = bipartite_partition(B, n_clusters, random_state=rng, ufactor=ufactor,
                                                       max_bytes=max_bytes)
        extras["n_moved"] = moved
        objective_name = "weighted edge cut of the METIS partition (lower is better)"
    return ConsensusResult.from_labels(labels, objective=float(objective), objective_name=objective_name,
                                       method="lwgp", extras=extras)
