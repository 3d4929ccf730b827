"""Consensus from pairwise co-association and member selection: EAC/HAC, FC, BEST and the medoid.

The co-association ``S(x, y)`` (Nguyen & Caruana 2007, eq. 1) is the weighted fraction of partitions that put x and
y in the same cluster (:meth:`cclust.Ensemble.coassociation`; with missing labels, of the
partitions labelling both). EAC and FC read the dense n x n matrix, within the memory budget
(a :class:`cclust.errors.MemoryBudgetError` names the bytes needed past it); EAC with single
linkage also runs on the sparse kNN co-association (``n_neighbors=``), in linear memory. BEST
never forms it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust.validation import (check_int, check_n_clusters, check_n_jobs, default_threads, memory_budget,
                               renamed_threads, require_memory)
from cclust._engine import label_table_bytes
from cclust.ensemble import as_ensemble
from cclust.errors import ValidationError
from cclust._linkage import DECIMALS as _DECIMALS, cut_dendrogram
from cclust.metrics import DISSIMILARITIES, higher_is_better
from cclust.base import declare, method_info
from cclust.result import ConsensusResult
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

if TYPE_CHECKING:
    from cclust.soft import SoftEnsemble

__all__ = ["eac", "fc", "best", "medoid"]

_LINKAGES = ("average", "single", "complete", "weighted")


_ALTERNATIVE = ("pass linkage='single', n_neighbors=30 to eac for single linkage on the kNN co-association "
                "(linear memory), or use a method that never forms it (kcc, hbgf, mcla, or "
                "cspa(neighbors='lsh'))")


def _coassociation(ensemble, n_clusters, max_bytes):
    E = as_ensemble(ensemble).canonical()
    n_clusters = check_n_clusters(n_clusters, E)
    n = E.n_samples
    # The float64 matrix, its distance copy and squareform's condensed copy live at once.
    require_memory(n * n * 8 * 2 + n * (n - 1) // 2 * 8, f"the dense co-association distances of {n} objects",
                   _ALTERNATIVE, max_bytes)
    S = np.asarray(E.coassociation(max_bytes=memory_budget(max_bytes)), dtype=np.float64)
    # Co-associations are ratios of small weight sums; rounding away the last bits of summation
    # order makes tied pairs exactly tied, so ties break by object index and not by rounding.
    D = np.round(1.0 - S, _DECIMALS)
    np.fill_diagonal(D, 0.0)
    return E, n_clusters, D


def _soft_coassociation(E, n_clusters, max_bytes):
    """:func:`_coassociation` for a :class:`cclust.soft.SoftEnsemble`: the distance ``1 - A`` with A
    the expected co-membership ``sum_i w_i U_i U_i^T`` (Hornik 2005), diagonal zero."""
    n = E.n_samples
    n_clusters = check_int(n_clusters, "n_clusters", low=1, high=n)
    require_memory(n * n * 8 * 2 + n * (n - 1) // 2 * 8, f"the dense co-association distances of {n} objects",
                   _ALTERNATIVE, max_bytes)
    D = np.round(1.0 - E.coassociation(max_bytes=memory_budget(max_bytes)), _DECIMALS)
    np.fill_diagonal(D, 0.0)
    return E, n_clusters, D


def _single_linkage_sparse(E, n_clusters, n_neighbors, max_bytes, random_state, n_threads):
    """Single linkage cut at K on the kNN co-association graph (see :func:`eac`)."""
    import scipy.sparse as sp
    from scipy.cluster.hierarchy import linkage as scipy_linkage
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
    from scipy.spatial.distance import squareform

    n = E.n_samples
    A = E.knn_coassociation(n_neighbors, random_state=random_state, dtype=np.float64,
                                     max_bytes=max_bytes, n_jobs=n_threads)
    # Kruskal's tree depends only on the order of the weights: 1 + (1 - S) keeps the order and
    # keeps S = 1 pairs (duplicates) as edges, which a zero weight would drop.
    D = A.copy()
    D.data = 1.0 + np.round(1.0 - D.data, _DECIMALS)
    T = minimum_spanning_tree(D).tocoo()
    n_components = n - T.nnz            # a spanning forest has n - (number of trees) edges
    height = float("nan")
    if n_components < n_clusters:
        # Remove the heaviest tree edges (the last merges) until K trees remain; among tied
        # heights the edge with the larger (row, column) goes first.
        order = np.lexsort((-T.col, -T.row, -T.data))
        removed = order[:n_clusters - n_components]
        height = float(np.round(T.data[removed].min() - 1.0, _DECIMALS))
        keep = np.ones(T.nnz, dtype=bool)
        keep[removed] = False
        T = sp.coo_matrix((T.data[keep], (T.row[keep], T.col[keep])), shape=(n, n))
    n_parts, parts = connected_components(T, directed=False)
    joined = 0
    if n_components >= n_clusters:
        # Groups that no kept edge joins: single linkage of one representative per group (also
        # when exactly K, for the height of the next merge).
        require_memory(n_parts * n_parts * 24, f"joining the {n_parts} components of the kNN graph",
                       "raise n_neighbors so that the kNN graph has fewer components", max_bytes)
        first = np.unique(parts, return_index=True)[1]
        S = E.take(first).coassociation(max_bytes=memory_budget(max_bytes))
        Dc = np.round(1.0 - S, _DECIMALS)
        np.fill_diagonal(Dc, 0.0)
        Z = scipy_linkage(squareform(Dc, checks=False), method="single")
        parts = cut_dendrogram(Z, n_clusters)[parts]
        joined = n_parts - n_clusters
        height = float(Z[n_parts - n_clusters, 2])
    return parts, height, {"n_neighbors": n_neighbors, "n_components": int(n_components),
                           "n_joined_by_representatives": int(joined), "n_edges": int(A.nnz // 2)}


@weights_on_the_ensemble
@renamed_threads
@declare(handles_missing=True, accepts_soft=True)
def eac(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, linkage: str = "average",
        n_neighbors: int | None = None, max_bytes: int | None = None,
        random_state: RandomStateLike = None, n_jobs: int | None = None) -> ConsensusResult:
    """Evidence accumulation clustering, EAC (Fred & Jain 2002; HAC consensus of Nguyen & Caruana 2007, sec. 3.1).

    Agglomerative clustering of the distance ``1 - S`` (S the co-association, Nguyen & Caruana 2007, eq. 1,
    rounded to 12 decimals so that pairs tied in exact arithmetic stay tied) by
    :func:`scipy.cluster.hierarchy.linkage`, the dendrogram cut at exactly K clusters
    (:func:`cclust.graph.cut_dendrogram`). Average linkage merges the two clusters with the
    largest average similarity, as Nguyen & Caruana (2007) describe HAC; Fred & Jain also use single linkage.
    Ward is not offered: ``1 - S`` is not a squared Euclidean distance.

    **Sparse route** (``n_neighbors=``, single linkage only): the graph of each object's
    ``n_neighbors`` strongest co-associations (:meth:`cclust.Ensemble.knn_coassociation`,
    linear memory; n = 10^6 in minutes), its minimum spanning forest (Kruskal on ``1 - S``),
    and the K - c heaviest forest edges removed, c the number of trees. On the exact kNN graph
    this is exact single linkage wherever it matters little to lose edges: a tree edge of the
    dense single-linkage dendrogram is missing from the kNN graph only if both of its sides
    hold more than ``n_neighbors`` objects (each end has ``n_neighbors`` closer objects, all on
    its own side, else a lighter edge would cross), so every dense single-linkage cluster of at
    most ``n_neighbors`` objects is reproduced. When the kNN graph has more than K components
    (large groups that no kept edge joins), they are merged by single linkage of one
    representative object per component — an approximation of the true, maximal, link. The
    candidate search of the kNN graph is itself approximate (see there). Average, complete and
    weighted linkage are refused with ``n_neighbors``: they need every pair (an unkept pair is
    not a zero similarity), so a sparse graph would silently change the method.

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
        The basic partitions; missing labels (-1) are handled by the co-association's per-pair
        normalisation. Soft partitions (a :class:`cclust.soft.SoftEnsemble`) use the expected
        co-membership ``sum_i w_i U_i U_i^T`` as S (dense route only).
    n_clusters : int
        K, in [2, number of distinct label vectors].
    linkage : {"average", "single", "complete", "weighted"}, default="average"
    n_neighbors : int, default=None
        None: the dense route. An int: the sparse route above (``linkage="single"`` only).
    max_bytes : int, default=None
        Memory budget of the dense co-association matrix (or of the kNN graph).
    random_state : int, Generator or None
        Seeds the kNN graph's candidate search (sparse route); the dense route is
        deterministic and ignores it.
    n_jobs : int, default=None
        Threads of the sparse route's kNN graph; the labels do not depend on it.

    Returns
    -------
    ConsensusResult
        ``objective`` is the height of the last merge kept out (the cut height, a distance);
        ``extras["linkage_matrix"]`` is SciPy's (n - 1, 4) linkage matrix (dense route), or
        ``extras["n_components"]`` (trees of the kNN forest) and
        ``extras["n_joined_by_representatives"]`` (sparse route).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.pairwise import eac
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> eac(labels, 2).labels.tolist()
    [0, 0, 1, 1, 1]
    """
    from scipy.cluster.hierarchy import linkage as scipy_linkage
    from scipy.spatial.distance import squareform

    if linkage not in _LINKAGES:
        raise ValidationError(f"linkage must be one of {list(_LINKAGES)}, got {linkage!r}.")
    from cclust.soft import is_soft_ensemble

    if n_neighbors is not None and is_soft_ensemble(ensemble):
        raise ValidationError("n_neighbors (the sparse kNN route) reads hard labels; for a SoftEnsemble drop "
                              "n_neighbors (the dense expected co-membership is used).")
    if n_neighbors is not None:
        n_neighbors = check_int(n_neighbors, "n_neighbors", low=1)
        if linkage != "single":
            raise ValidationError(
                f"n_neighbors (the sparse kNN route) supports linkage='single' only, got linkage={linkage!r}: "
                f"{linkage} linkage needs every pair's co-association, and an unkept pair is not a zero "
                "similarity. Pass linkage='single', or drop n_neighbors for the dense route, or use "
                "cspa(..., neighbors='lsh') for a scalable graph cut.")
        E = as_ensemble(ensemble).canonical()
        n_clusters = check_n_clusters(n_clusters, E)
        labels, height, extras = _single_linkage_sparse(E, n_clusters, n_neighbors, max_bytes, random_state,
                                                        check_n_jobs(n_jobs))
        return ConsensusResult.from_labels(
            labels, objective=height,
            objective_name="single-linkage distance of the first merge above the cut (kNN graph)",
            method="eac", extras={"linkage": linkage, **extras})
    build = _soft_coassociation if is_soft_ensemble(ensemble) else _coassociation
    E, n_clusters, D = build(ensemble, n_clusters, max_bytes)
    Z = scipy_linkage(squareform(D, checks=False), method=linkage)
    labels = cut_dendrogram(Z, n_clusters)
    height = float(Z[E.n_samples - n_clusters, 2]) if n_clusters > 1 else float("nan")
    return ConsensusResult.from_labels(
        labels, objective=height,
        objective_name=f"{linkage}-linkage distance of the first merge above the cut",
        method="eac", extras={"linkage_matrix": Z, "linkage": linkage},
    )


@weights_on_the_ensemble
@declare(handles_missing=True, object_order="distribution")  # ties go to the lowest index
def fc(ensemble: EnsembleLike, n_clusters: int, *, max_bytes: int | None = None,
       random_state: RandomStateLike = None) -> ConsensusResult:
    """Furthest consensus, FC (Gionis, Mannila & Tsaparas 2005; Nguyen & Caruana 2007, sec. 3.1).

    With the distance ``d = 1 - S`` (S the co-association, Nguyen & Caruana 2007, eq. 1, rounded to 12 decimals as in
    :func:`eac`): the two objects furthest
    apart become the first two centres; each further centre is the object furthest from the
    centres found so far (largest distance to its nearest centre); with K centres, every object
    joins its nearest centre. Ties go to the lowest object index (pairs in row-major order) and
    to the earliest centre. Nguyen & Caruana (2007) describe this fixed-K form; Gionis et al.'s variant that stops
    adding centres when the clustering cost no longer falls is not implemented.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
        K, in [2, number of distinct label vectors].
    max_bytes : int, default=None
        Memory budget of the dense co-association matrix.
    random_state : None
        Unused (the method is deterministic).

    Returns
    -------
    ConsensusResult
        ``objective`` is the sum of distances to the nearest centre (lower is better);
        ``extras["centers"]`` the centre objects in the order found.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.pairwise import fc
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> fc(labels, 2).labels.tolist()
    [0, 0, 1, 1, 1]
    """
    E, n_clusters, D = _coassociation(ensemble, n_clusters, max_bytes)
    first = int(np.argmax(D))
    centers = [first // E.n_samples, first % E.n_samples]
    nearest = np.minimum(D[centers[0]], D[centers[1]])
    while len(centers) < n_clusters:
        nearest[centers] = -1.0
        c = int(np.argmax(nearest))
        centers.append(c)
        nearest = np.minimum(nearest, D[c])
    to_centers = D[:, centers]
    labels = to_centers.argmin(axis=1)
    labels[centers] = np.arange(n_clusters)
    cost = float(to_centers[np.arange(E.n_samples), labels].sum())
    return ConsensusResult.from_labels(
        labels, objective=cost, objective_name="sum of distances 1 - S to the nearest centre (lower is better)",
        method="fc", extras={"centers": np.asarray(centers)},
    )


#: Metric names accepted by medoid (all minimised).
_LOWER_IS_BETTER = DISSIMILARITIES


def _minimised(metric):
    """Whether best minimises ``metric``: a name or a metric function as it declares
    (cclust.metrics.higher_is_better; a registered name that declares nothing is refused), and a
    callable on a contingency table that declares nothing is maximised, as documented."""
    if isinstance(metric, str):
        return not higher_is_better(metric)
    return method_info(metric).higher_is_better is False


@weights_on_the_ensemble
@declare(chooses_n_clusters=True, handles_missing=False)
def best(ensemble: EnsembleLike, n_clusters: int | None = None, *, metric: str | Callable[..., float] = "nmi",
         max_bytes: int | None = None,
         random_state: RandomStateLike = None) -> ConsensusResult:
    """BEST: the ensemble member that agrees best with the ensemble (Nguyen & Caruana 2007, sec. 3.6).

    Every member with K clusters is scored by its average agreement with the whole ensemble,
    ``Perf(pi_j, Pi) = sum_i w_i f(pi_j, pi_i)`` (Nguyen & Caruana 2007, eq. 4, :func:`cclust.metrics.consensus_score`),
    and the best is returned unchanged. ``n_clusters=None`` considers every member. Ties go to
    the first member in the canonical order (see :mod:`cclust.consensus_functions.voting`), so the choice
    does not depend on partition order or cluster names.

    When no member has K clusters (common with the default ensembles, whose K_i range from K
    to sqrt(n)), the candidates are the members whose number of clusters is closest to K
    (both K - d and K + d on a tie), and the result has that many clusters:
    ``extras["note"]`` says so. Being a member, the result cannot have K clusters then; use
    a fusing method, or an ensemble with K_i = K (``k_range=(K, K)``), when exactly K matter.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Complete partitions only: a member with missing labels is not a labelling of every
        object, so missing labels raise a ValidationError.
    n_clusters : int or None, default=None
        Only members with this many clusters are candidates, or if there are none, those
        closest to it.
    metric : str or callable, default="nmi"
        The agreement f: "nmi" (Nguyen & Caruana 2007, eq. 10), "ari", "ami", "rand", or the distances "vi"
        (Nguyen & Caruana 2007, eq. 9) and "van-dongen" (Nguyen & Caruana 2007, eq. 7), minimised, as are the other
        distances of ``cclust.metrics.DISSIMILARITIES``; clue's agreements ("jaccard", "katz-powell", ...) are
        maximised (see :func:`cclust.metrics.consensus_score`). Another registered metric (a plugin's) is
        maximised or minimised as it declares (:func:`cclust.metrics.higher_is_better`) and refused if it
        declares neither. A callable on a contingency table is maximised unless it declares
        ``higher_is_better=False`` (:func:`cclust.base.declare`).
    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the canonical copy of the label codes is made: a copy of the stored codes,
        56 bytes an object and the counting core's contingency tables of the widest
        candidate against the ensemble (one per thread and two more).
    random_state : None
        Unused (the method is deterministic).

    Returns
    -------
    ConsensusResult
        ``objective`` is the chosen member's score; ``extras["member"]`` its column index in the
        input ensemble, ``extras["scores"]`` every candidate's score (NaN for non-candidates),
        ``extras["note"]`` a sentence when no member has ``n_clusters`` clusters (else empty).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.pairwise import best
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> res = best(labels, 2)
    >>> res.labels.tolist(), res.extras["member"]
    ([0, 0, 1, 1, 1], 0)
    """
    if not (isinstance(metric, str) or callable(metric)):
        raise ValidationError(f"metric must be a metric name or a callable, got {metric!r}.")
    lower = _minimised(metric)
    return _best_member(ensemble, n_clusters, metric, max_bytes, lower_is_better=lower, method="best",
                        criterion="Nguyen & Caruana 2007, eq. 4")


def _candidates(member_clusters, n_clusters):
    """The members with ``n_clusters`` clusters, or with the closest number (all for None), and
    the note saying so when none has exactly that many."""
    if n_clusters is None:
        return np.arange(member_clusters.shape[0]), ""
    gap = np.abs(member_clusters - n_clusters)
    candidates = np.flatnonzero(gap == gap.min())
    note = ""
    if gap.min() > 0:
        closest = sorted(set(member_clusters[candidates].tolist()))
        note = (f"no member has n_clusters={n_clusters} clusters (members have "
                f"{int(member_clusters.min())} to {int(member_clusters.max())}); the best member among "
                f"those closest, with {' or '.join(map(str, closest))} clusters, was returned")
    return candidates, note


def _best_member_bytes(ensemble, n_clusters):
    """Bytes BEST and the medoid hold at their peak: the canonical ensemble's codes (the
    first-appearance pass's output, ``itemsize`` bytes a label, made even when the ensemble is
    canonical already); 56 bytes an object (a member's int64 labels, their relabelled codes, the
    contingency pass's buffers and the result); and the counting core's tables of the widest
    candidate (the members :func:`_candidates` keeps for ``n_clusters``) against every partition,
    one per thread and two more (:func:`cclust._engine.label_table_bytes`). Measured on uint8
    codes: 1.2 bytes a label and 54 an object at 10^5 x 20 and 5 * 10^4 x 80; with up to 300
    clusters a member, (2 + threads) tables of (K_i + 1) x (sum K_i + r) int64."""
    codes = ensemble.compact_labels()
    n, r = codes.shape
    member_clusters = np.asarray(ensemble.n_clusters)
    widest = int(member_clusters[_candidates(member_clusters, n_clusters)[0]].max())
    tables = label_table_bytes(n, r, int(ensemble.offsets[-1]), widest, default_threads())
    return codes.itemsize * n * r + 56 * n + tables


def _best_member(ensemble, n_clusters, metric, max_bytes, *, lower_is_better, method, criterion):
    """The member (with K clusters, or the closest K) of best weighted average score against the ensemble."""
    from cclust.metrics import consensus_score

    original = as_ensemble(ensemble)
    if original.has_missing:
        raise ValidationError(f"{method} needs complete partitions: the ensemble has missing labels (-1), and a "
                              "member with missing objects is not a consensus labelling; drop or complete "
                              "those partitions first (ensemble.take(partitions=...)).")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=original.n_samples, allow_none=True)
    require_memory(_best_member_bytes(original, n_clusters),
                   f"{method}'s canonical copy of {original.n_samples} objects x {original.n_partitions} partitions",
                   "score fewer members (ensemble.take(partitions=...))", max_bytes)
    E, columns = original.canonical(return_columns=True)
    sign = -1.0 if lower_is_better else 1.0
    scores = np.full(E.n_partitions, np.nan)
    candidates, note = _candidates(E.n_clusters, n_clusters)
    # The members are read one column at a time from the stored codes (complete partitions: a
    # code is the label): no int32 copy of the whole label matrix (4 n r bytes) is made.
    codes = E.compact_labels()
    for j in candidates:
        scores[j] = consensus_score(codes[:, j], E, metric)
    chosen = int(candidates[np.argmax(sign * scores[candidates])])
    labels = codes[:, chosen].astype(np.int64)
    member = int(columns[chosen])
    original_scores = np.full(original.n_partitions, np.nan)
    original_scores[columns] = scores
    default_word = "dissimilarity" if lower_is_better else "agreement"
    return ConsensusResult.from_labels(
        labels, objective=float(scores[chosen]),
        objective_name=f"average {metric if isinstance(metric, str) else default_word} with the ensemble, "
                       f"{criterion} ({'lower' if sign < 0 else 'higher'} is better)",
        method=method,
        extras={"member": member, "scores": original_scores, "note": note,
                "metric": metric if isinstance(metric, str) else getattr(metric, "__name__", "callable")},
    )


#: The dissimilarities the medoid of soft partitions takes (Hornik 2005): clue's Euclidean,
#: Manhattan and Mallows on the membership matrices, Boorman & Arabie's on the nearest hard ones.
SOFT_DISSIMILARITIES = ("euclidean-distance", "manhattan-distance", "mallows-distance", "boorman-arabie-a",
                        "boorman-arabie-d")


@weights_on_the_ensemble
@declare(chooses_n_clusters=True, handles_missing=False, accepts_soft=True)
def medoid(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int | None = None, *,
           metric: str | Callable[..., float] = "euclidean-distance", max_bytes: int | None = None,
           random_state: RandomStateLike = None) -> ConsensusResult:
    """Medoid partition: the member with the least weighted sum of dissimilarities to the ensemble.

    clue's ``cl_medoid`` (Hornik 2005): ``argmin_j sum_i w_i d(pi_j, pi_i)`` over the members
    pi_j, with d a dissimilarity between partitions, by default the Euclidean distance of the
    memberships under the best matching of the clusters (clue's default, Dimitriadou,
    Weingessel & Hornik 2002; :func:`cclust.metrics.euclidean_distance`). Equal weights give
    clue's unweighted sum. Each candidate costs one compiled contingency pass against every
    member (:func:`cclust.metrics.consensus_score`), so the method takes O(n r) memory and never
    forms a co-association.

    Candidates are the members with ``n_clusters`` clusters, or if none has that many, those
    closest to it, as in :func:`best` (``extras["note"]`` says so); ``n_clusters=None`` (clue's
    behaviour) considers every member. Ties go to the first member in the canonical order (see
    :mod:`cclust.consensus_functions.voting`) so that the choice does not depend on partition
    order or cluster names; clue takes the first in the given order.

    The medoid is a member by definition, so it can only be as good as the members: when no
    member has ``n_clusters`` clusters (k-means ensembles with K_i drawn from K to sqrt(n)
    often have none), the medoid has more clusters than asked for and splits a group however
    plain the structure is. Generate the ensemble with K among the K_i (``k_range``) when K is
    known, or use a median partition (``se``, ``he``), which has K clusters by construction.

    Soft partitions (a :class:`cclust.soft.SoftEnsemble` with fractional memberships) are
    compared as membership matrices, as clue's ``cl_medoid`` does: d is one of
    :data:`SOFT_DISSIMILARITIES` (Euclidean and Manhattan under the best matching of the
    columns, Mallows; Boorman-Arabie on the nearest hard partitions, as in clue), ties go to
    the first member in the given order (clue's rule), the result's labels are the chosen
    member's most likely clusters and ``extras["membership"]`` holds its membership matrix.
    A SoftEnsemble of 0/1 partitions is the hard case.

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
        Complete partitions only (missing labels raise a ValidationError).
    n_clusters : int or None, default=None
    metric : str or callable, default="euclidean-distance"
        A dissimilarity: "euclidean-distance", "manhattan-distance", "mallows-distance" (p = 1),
        "boorman-arabie-a", "boorman-arabie-d", "vi" or "van-dongen"; or a callable
        ``f(table) -> float`` of an int64 contingency table, minimised.
    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the canonical copy of the label codes is made: a copy of the stored codes,
        56 bytes an object and the counting core's contingency tables of the widest
        candidate against the ensemble (one per thread and two more).
    random_state : None
        Unused (the method is deterministic).

    Returns
    -------
    ConsensusResult
        ``objective`` is the chosen member's weighted average dissimilarity (clue's sum divided
        by r with equal weights); ``extras["member"]`` its column in the input ensemble,
        ``extras["scores"]`` every candidate's value (NaN for non-candidates), ``extras["note"]``.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.pairwise import medoid
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> res = medoid(labels)
    >>> res.labels.tolist(), res.extras["member"]
    ([0, 0, 1, 1, 1], 0)
    """
    if isinstance(metric, str):
        if metric not in _LOWER_IS_BETTER:
            raise ValidationError(f"metric must be a dissimilarity, one of {list(_LOWER_IS_BETTER)}, or a callable "
                                  f"on a contingency table, got {metric!r}; for an agreement use best.")
    elif not callable(metric):
        raise ValidationError(f"metric must be a dissimilarity name or a callable, got {metric!r}.")
    from cclust.soft import is_soft_ensemble

    if is_soft_ensemble(ensemble) and not ensemble.is_hard:
        return _soft_medoid(ensemble, n_clusters, metric)
    return _best_member(ensemble, n_clusters, metric, max_bytes, lower_is_better=True, method="medoid",
                        criterion="clue's cl_medoid, Hornik 2005")


def _soft_medoid(S, n_clusters, metric):
    """:func:`medoid` of soft partitions: ``argmin_j sum_i w_i d(U_j, U_i)`` on membership matrices."""
    from cclust.registry import get

    if not (isinstance(metric, str) and metric in SOFT_DISSIMILARITIES):
        raise ValidationError(
            f"metric: the medoid of soft partitions compares membership matrices and takes one of "
            f"{list(SOFT_DISSIMILARITIES)}, got {metric!r}; a callable or another measure reads hard labels "
            "(pass ensemble.harden() for those).")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=S.n_samples, allow_none=True)
    candidates, note = _candidates(S.n_clusters, n_clusters)
    distance = get(metric, kind="metric")
    U = S.memberships
    scores = np.full(S.n_partitions, np.nan)
    for j in candidates.tolist():
        scores[j] = float(sum(w * distance(U[j], U[i]) for i, w in enumerate(S.weights.tolist()) if i != j))
    chosen = int(candidates[np.argmin(scores[candidates])])
    return ConsensusResult.from_labels(
        U[chosen].argmax(axis=1), objective=float(scores[chosen]),
        objective_name=f"average {metric} of the memberships with the ensemble, clue's cl_medoid, Hornik 2005 "
                       "(lower is better)",
        method="medoid",
        extras={"member": chosen, "scores": scores, "note": note, "metric": metric, "membership": U[chosen]},
    )

