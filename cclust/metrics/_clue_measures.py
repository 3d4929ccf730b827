"""clue's other agreements and dissimilarities of hard or soft partitions (Hornik 2005): pair
counts (Fowlkes-Mallows, Jaccard, Katz-Powell, co-membership, symmetric difference), Boorman &
Arabie's measures, purity, GV1, CSSD and prediction strength.
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.base import declare
from cclust.validation import check_array_2d
from cclust.errors import ValidationError
from cclust.metrics._set_matching import _accuracy_from_table
from cclust.metrics._tables import _cells, _marginals, _sum_of_squares
from cclust.metrics._membership import (
    _dense_table,
    _hard_table,
    _masses,
    _matched_count,
    _partitions,
    _soft,
    _transport,
)
from cclust.metrics._pair_counting import _rand_from_table


def _boorman_arabie_a_from_table(table):
    n, m = _matched_count(table)
    return float(n - m)


def _boorman_arabie_d_from_table(table):
    return 1.0 - _rand_from_table(table)


def _pair_sums(table):
    """(n, sum of squared cells, of squared row sums, of squared column sums), exact ints."""
    rows, cols = _marginals(table)
    cells = _cells(table)[2] if sp.issparse(table) else np.asarray(table).reshape(-1)
    return int(rows.sum()), _sum_of_squares(cells), _sum_of_squares(rows), _sum_of_squares(cols)


def _fowlkes_mallows_from_table(table):
    n, both, first, second = _pair_sums(table)
    together_a, together_b = first - n, second - n  # ordered pairs of distinct objects
    if together_a == 0 or together_b == 0:
        return 1.0 if together_a == together_b else 0.0
    # Clipped: the two roots may round so that identical partitions score 1 + 1 ulp.
    return min(1.0, (both - n) / math.sqrt(together_a) / math.sqrt(together_b))


def _jaccard_from_table(table):
    n, both, first, second = _pair_sums(table)
    union = first + second - n - both
    return (both - n) / union if union else 1.0


def _katz_powell_from_table(table):
    n, both, first, second = _pair_sums(table)
    nn = n * n
    spread_a, spread_b = first * (nn - first), second * (nn - second)
    if spread_a == 0 or spread_b == 0:
        return 1.0 if spread_a == spread_b else 0.0
    return max(-1.0, min(1.0, (nn * both - first * second) / math.sqrt(spread_a) / math.sqrt(spread_b)))


def _purity_from_table(table):
    return _accuracy_from_table(table.T)


def _occupied(table):
    """The table without its empty rows and columns, dense int64."""
    dense = _dense_table(table)
    rows, cols = _marginals(dense)
    return dense[np.ix_(rows > 0, cols > 0)]


def _comembership_from_table(table):
    n, both, first, second = _pair_sums(table)
    return math.sqrt(first - 2 * both + second)


def _gv1_cost(sizes_a, sizes_b, cross):
    """clue's GV1 cost of matching column j of one partition with column l of the other,
    ``||u_j||^2 + ||v_l||^2 - 2 <u_j, v_l>``, padded with zeros (an unmatched column costs
    nothing): the least matched total over one-to-one matchings."""
    from cclust.matching import match_clusters

    cost = np.add.outer(sizes_a, sizes_b) - 2.0 * cross
    square = np.zeros((max(cost.shape),) * 2)
    square[:cost.shape[0], :cost.shape[1]] = cost
    pick = match_clusters(square, maximize=False)
    return float(square[np.arange(square.shape[0]), pick].sum()), pick


def _gv1_from_table(table):
    dense = _occupied(table).astype(np.float64)
    if dense.size == 0:
        return 0.0
    return math.sqrt(max(0.0, _gv1_cost(dense.sum(axis=1), dense.sum(axis=0), dense)[0]))


def _symdiff_from_table(table):
    n, both, first, second = _pair_sums(table)
    return float((first + second - 2 * both) // 2)


def _boorman_arabie_c_from_table(table):
    from scipy.sparse.csgraph import connected_components

    dense = _occupied(table)
    ka, kb = dense.shape
    if ka == 0:
        return 0.0
    # the join: classes connected through shared objects (the bipartite graph of non-empty cells)
    graph = sp.bmat([[None, sp.csr_matrix(dense > 0)], [sp.csr_matrix((dense > 0).T), None]])
    k_join = connected_components(graph, directed=False)[0]
    return float(ka + kb - 2 * k_join)


def _boorman_arabie_e_from_table(table):
    rows, cols = _marginals(table)
    nzx, nzy, vals = _cells(table)
    n = float(vals.sum())
    if n == 0:
        return 0.0
    p = vals / n
    joint = float(-(p * np.log(p)).sum())
    if joint <= 0:
        return 0.0   # one class on both sides: clue's 0/0
    mutual = float((p * np.log(vals * n / (rows.take(nzx).astype(np.float64) * cols.take(nzy)))).sum())
    return 1.0 - mutual / joint


def _prediction_strength_from_table(table):
    rows, _ = _marginals(table)
    nzx, _, vals = _cells(table)
    within = np.zeros(rows.shape[0], dtype=np.int64)
    np.add.at(within, nzx, vals * (vals - 1))
    pairs = rows * (rows - 1)
    ok = pairs > 0
    if not ok.any():
        return 1.0   # every class of the first partition a single object: no pair to predict
    return float((within[ok] / pairs[ok]).min())


@declare(higher_is_better=True)
def fowlkes_mallows(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Fowlkes-Mallows index: pairs together in both over the geometric mean of pairs together in each.

    ``N_ab / sqrt(N_a N_b)`` over unordered pairs of distinct objects (Fowlkes & Mallows 1983;
    clue's ``cl_agreement(method = "FM")``, Hornik 2005), from exact integer pair counts of one
    contingency table. Higher is better. For a soft partition the nearest hard partition (each
    object in its cluster of largest membership, the first on a tie) is used, as clue does;
    clue breaks ties at random.

    Parameters
    ----------
    partition_a, partition_b : array-like of shape (n_samples,) or (n_samples, K)
        Labellings or membership matrices.

    Returns
    -------
    fm : float
        In [0, 1]. When a partition puts every object alone (no pairs, clue's 0/0): 1.0 if
        both do, else 0.0.

    Examples
    --------
    >>> from cclust.metrics import fowlkes_mallows
    >>> round(fowlkes_mallows([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]), 4)
    0.4714
    """
    return _fowlkes_mallows_from_table(_hard_table(*_partitions(partition_a, partition_b)))


@declare(higher_is_better=True)
def jaccard(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Jaccard index of the co-clustered pairs: together in both over together in at least one.

    The Jaccard coefficient of the sets of co-clustered pairs of distinct objects (clue's
    ``cl_agreement(method = "Jaccard")``, Hornik 2005), from exact pair counts of one
    contingency table. Higher is better. Soft partitions are hardened as in
    :func:`fowlkes_mallows`.

    Returns
    -------
    jaccard : float
        In [0, 1]; 1.0 when no pair is together in either (every object alone in both; clue's 0/0).

    Examples
    --------
    >>> from cclust.metrics import jaccard
    >>> round(jaccard([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]), 4)
    0.2857
    """
    return _jaccard_from_table(_hard_table(*_partitions(partition_a, partition_b)))


@declare(higher_is_better=True)
def katz_powell(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Katz-Powell index: the correlation of the two co-membership matrices (higher is better).

    The product-moment correlation of the n x n entries of ``C_a = M_a M_a^T`` and ``C_b``
    (Katz & Powell 1953; clue's ``cl_agreement(method = "KP")``, Hornik 2005):
    ``(n^2 S_ab - S_a S_b) / sqrt(S_a (n^2 - S_a) S_b (n^2 - S_b))`` with ``S_ab`` the sum of
    squared contingency cells and ``S_a``, ``S_b`` the sums of squared cluster sizes, computed
    in exact integers. Soft partitions are hardened as in :func:`fowlkes_mallows`.

    Returns
    -------
    kp : float
        In [-1, 1]. When a partition is a single cluster its co-memberships are constant (clue's
        0/0): 1.0 if both are, else 0.0.

    Examples
    --------
    >>> from cclust.metrics import katz_powell
    >>> katz_powell([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    return _katz_powell_from_table(_hard_table(*_partitions(partition_a, partition_b)))


@declare(higher_is_better=True)
def purity(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Purity of the clusters of ``partition_a`` with respect to ``partition_b`` (higher is better).

    ``sum_i max_j n_ij / n``: each cluster of the first partition counts its objects in its
    majority cluster of the second (clue's ``cl_agreement(method = "purity")``, Hornik 2005).
    This is :func:`accuracy` with the arguments the other way round
    (``purity(a, b) == accuracy(b, a)``); not symmetric. Soft partitions are hardened as in
    :func:`fowlkes_mallows`.

    Examples
    --------
    >>> from cclust.metrics import purity
    >>> purity([0, 0, 1, 1, 1, 1], ["a", "a", "a", "b", "b", "b"])
    0.8333333333333334
    """
    return _purity_from_table(_hard_table(*_partitions(partition_a, partition_b)))


@declare(higher_is_better=False)
def boorman_arabie_a(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Boorman-Arabie distance A: the fewest single-object moves from one partition to the other (lower is better).

    Moves of one object to another or a new cluster (Rubin 1967; Boorman & Arabie 1972):
    ``n - m`` with m the most objects on matched clusters, half the hard
    :func:`manhattan_distance` (clue's ``cl_dissimilarity(method = "BA/A")``, Hornik 2005).
    Soft partitions are hardened as in :func:`fowlkes_mallows`.

    Returns
    -------
    moves : float
        A whole number in [0, n - 1].

    Examples
    --------
    >>> from cclust.metrics import boorman_arabie_a
    >>> boorman_arabie_a([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 1])
    2.0
    """
    return _boorman_arabie_a_from_table(_hard_table(*_partitions(partition_a, partition_b)))


@declare(higher_is_better=False)
def boorman_arabie_d(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Boorman-Arabie distance D, the pair-bonds distance: ``1 - rand`` (lower is better).

    The share of pairs of distinct objects together in exactly one of the partitions (Boorman &
    Arabie 1972; clue's ``cl_dissimilarity(method = "BA/D")``, Hornik 2005), equal to the Rand
    distance for hard partitions. Soft partitions are hardened as in :func:`fowlkes_mallows`.
    A single object has no pairs: 0.0 (clue: 0/0).

    Examples
    --------
    >>> from cclust.metrics import boorman_arabie_d
    >>> round(boorman_arabie_d([0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1]), 4)
    0.3333
    """
    return _boorman_arabie_d_from_table(_hard_table(*_partitions(partition_a, partition_b)))


@declare(higher_is_better=False)
def comembership_distance(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Euclidean distance of the co-membership matrices (lower is better).

    ``||M_a M_a^T - M_b M_b^T||_F``, computed without the n x n matrices as
    ``sqrt(||M_a^T M_a||^2 - 2 ||M_a^T M_b||^2 + ||M_b^T M_b||^2)`` (Frobenius norms of k x k
    cross products; clue's ``cl_dissimilarity(method = "comemberships")``, Hornik 2005). For
    hard partitions ``sqrt(S_a - 2 S_ab + S_b)`` from one contingency table in exact integers
    (S the sums of squared cluster sizes and of squared cells): the square root of the number of
    ordered pairs of objects together in exactly one partition.

    Parameters
    ----------
    partition_a, partition_b : array-like of shape (n_samples,) or (n_samples, K)
        Labellings or membership matrices (rows non-negative, summing to 1).

    Returns
    -------
    distance : float
        0.0 for identical partitions (cluster names aside).

    Examples
    --------
    >>> from cclust.metrics import comembership_distance
    >>> comembership_distance([0, 0, 1, 1], [0, 0, 0, 1]) == 6 ** 0.5
    True
    """
    a, b = _partitions(partition_a, partition_b)
    soft = _soft(a, b)
    if soft is None:
        return _comembership_from_table(_hard_table(a, b))
    Ma, Mb = soft
    aa, ab, bb = Ma.T @ Ma, Ma.T @ Mb, Mb.T @ Mb
    return math.sqrt(max(0.0, float((aa * aa).sum()) - 2.0 * float((ab * ab).sum()) + float((bb * bb).sum())))


def _nonzero_columns(M):
    """clue's classes of a soft partition: its columns of positive total membership."""
    return M[:, M.sum(axis=0) > 0]


@declare(higher_is_better=False)
def gv1_distance(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Gordon & Vichi's (2001) model-1 dissimilarity: matched squared column distances (lower is better).

    The square root of ``min sum_{(j, l) matched} ||M_a[:, j] - M_b[:, l]||^2`` over one-to-one
    matchings of the clusters (columns) of the two membership matrices, where the clusters of
    the partition with more of them that are left unmatched do not count (clue's
    ``cl_dissimilarity(method = "GV1")``, Hornik 2005; the criterion of the ``gv1`` consensus).
    Unlike :func:`euclidean_distance` nothing is padded with empty clusters that would then
    cost their mass. For hard partitions the cost of a pair is ``n_j + n_l - 2 n_jl``. Soft
    partitions keep their columns of positive total membership, as clue does.

    Parameters
    ----------
    partition_a, partition_b : array-like of shape (n_samples,) or (n_samples, K)
        Labellings or membership matrices.

    Returns
    -------
    distance : float
        0.0 when the matched clusters agree exactly (identical partitions, cluster names aside).

    Examples
    --------
    >>> from cclust.metrics import gv1_distance
    >>> gv1_distance([0, 0, 1, 1], [0, 0, 1, 2])  # {2, 3} matched with {2} or {3}: cost 1
    1.0
    """
    a, b = _partitions(partition_a, partition_b)
    if a.memberships is None and b.memberships is None:
        return _gv1_from_table(_hard_table(a, b))
    Ma, Mb = _nonzero_columns(a.dense(a.k)), _nonzero_columns(b.dense(b.k))
    _, pick = _gv1_cost((Ma * Ma).sum(axis=0), (Mb * Mb).sum(axis=0), Ma.T @ Mb)
    # the matched pairs' distances summed from the differences themselves: the expanded cost
    # loses digits to cancellation when the partitions nearly agree
    pairs = [(j, l) for j, l in enumerate(pick) if j < Ma.shape[1] and l < Mb.shape[1]]
    rows, cols = (np.array(v, dtype=np.int64) for v in zip(*pairs)) if pairs else (np.zeros(0, int),) * 2
    difference = Ma[:, rows] - Mb[:, cols]
    return math.sqrt(float(np.einsum("ij,ij->", difference, difference)))


@declare(higher_is_better=False)
def symdiff_distance(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Symmetric-difference distance: the number of pairs of objects together in exactly one partition.

    The cardinality of the symmetric difference of the two equivalence relations, counting
    unordered pairs of distinct objects (clue's ``cl_dissimilarity(method = "symdiff")``,
    Hornik 2005; ``(1 - rand) n (n - 1) / 2``), from exact pair counts of one contingency
    table. The criterion of the ``symdiff-median`` consensus. Soft partitions are hardened as
    in :func:`fowlkes_mallows`.

    Returns
    -------
    distance : float
        A whole number in [0, n (n - 1) / 2].

    Examples
    --------
    >>> from cclust.metrics import symdiff_distance
    >>> symdiff_distance([0, 0, 1, 1], [0, 0, 0, 1])
    3.0
    """
    return _symdiff_from_table(_hard_table(*_partitions(partition_a, partition_b)))


@declare(higher_is_better=False)
def boorman_arabie_c(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Boorman-Arabie distance C: the fewest lattice moves between the partitions (lower is better).

    ``K_a + K_b - 2 K_join`` with K the number of classes and the join the finest partition
    coarser than both (classes linked through shared objects; Boorman & Arabie 1972, after
    Pavy; clue's ``cl_dissimilarity(method = "BA/C")``, Hornik 2005). The join is found as the
    connected components of the bipartite graph of the non-empty contingency cells. For a soft
    partition, as clue computes it, K counts its columns of positive total membership and the
    join is taken of the nearest hard partitions.

    Returns
    -------
    moves : float
        A whole number; 0.0 for identical partitions.

    Examples
    --------
    >>> from cclust.metrics import boorman_arabie_c
    >>> boorman_arabie_c([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 1])
    1.0
    """
    a, b = _partitions(partition_a, partition_b)
    value = _boorman_arabie_c_from_table(_hard_table(a, b))
    if a.memberships is None and b.memberships is None:
        return value
    used = int(np.count_nonzero(np.bincount(a.codes, minlength=a.k))) + int(
        np.count_nonzero(np.bincount(b.codes, minlength=b.k)))
    classes = sum(_nonzero_columns(p.dense(p.k)).shape[1] for p in (a, b))
    return value + float(classes - used)


@declare(higher_is_better=False)
def boorman_arabie_e(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Boorman-Arabie distance E: Rajski's normalised information distance ``1 - I / H`` (lower is better).

    I the mutual information of the two partitions and H the entropy of their meet (the joint
    classes; Rajski 1961; Boorman & Arabie 1972; clue's ``cl_dissimilarity(method = "BA/E")``,
    Hornik 2005), natural logarithms from one contingency table. Soft partitions are hardened
    as in :func:`fowlkes_mallows`.

    Returns
    -------
    distance : float
        In [0, 1]; 0.0 for identical partitions, and (clue: 0/0) when both are one class.

    Examples
    --------
    >>> from cclust.metrics import boorman_arabie_e
    >>> boorman_arabie_e([0, 0, 1, 1], [0, 0, 1, 1])
    0.0
    >>> boorman_arabie_e([0, 0, 1, 1], [0, 1, 0, 1])
    1.0
    """
    return _boorman_arabie_e_from_table(_hard_table(*_partitions(partition_a, partition_b)))


@declare(higher_is_better=False)
def cssd(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike, *, L: npt.ArrayLike | None = None,
         prototypes_a: npt.ArrayLike | None = None, prototypes_b: npt.ArrayLike | None = None,
         alpha: npt.ArrayLike | None = None, beta: npt.ArrayLike | None = None) -> float:
    """Cluster Similarity Sensitive Distance of Zhou, Li & Zha (2005) (lower is better).

    ``sum_{jl} (1 - 2 w_jl / (alpha_j + beta_l)) L_jl C_jl`` minimised over the transportation
    plans w with row sums alpha and column sums beta, where ``C = M_a^T M_b`` (the contingency
    table of hard partitions) and ``L_jl`` the distance between the prototypes of cluster j of
    ``partition_a`` and cluster l of ``partition_b`` (clue's ``cl_dissimilarity(method =
    "CSSD")``, Hornik 2005): ``sum(C L) - 2 max_w sum w C L / (alpha + beta)``, the
    transportation LP solved by :func:`scipy.optimize.linprog` (HiGHS). Not a registered
    metric: a partition given as labels or memberships carries no prototypes, so ``L`` or both
    prototype arrays must be passed.

    Parameters
    ----------
    partition_a, partition_b : array-like of shape (n_samples,) or (n_samples, K)
        Labellings or membership matrices; their K_a and K_b clusters are clue's classes (the
        distinct labels, or the columns of positive total membership).
    L : array-like of shape (K_a, K_b), default=None
        Prototype distances.
    prototypes_a, prototypes_b : array-like of shape (K_a, d) and (K_b, d), default=None
        Cluster prototypes (e.g. centroids); ``L`` is then their Euclidean distances.
    alpha, beta : array-like of shape (K_a,) and (K_b,), default=None
        Cluster masses with equal totals; ones if None.

    Examples
    --------
    >>> from cclust.metrics import cssd
    >>> cssd([0, 0, 1, 1], [0, 0, 1, 1], L=[[0.0, 2.0], [2.0, 0.0]])
    0.0
    >>> cssd([0, 0, 1, 1], [0, 0, 0, 1], L=[[1.0, 1.0], [1.0, 1.0]])
    1.0
    """
    a, b = _partitions(partition_a, partition_b)
    if a.memberships is None and b.memberships is None:
        C = _occupied(_hard_table(a, b)).astype(np.float64)
    else:
        C = _nonzero_columns(a.dense(a.k)).T @ _nonzero_columns(b.dense(b.k))
    ka, kb = C.shape
    if L is None:
        if prototypes_a is None or prototypes_b is None:
            raise ValidationError("cssd needs the prototype distances L (K_a x K_b) or both prototypes_a and "
                                  "prototypes_b (one row per cluster): a partition given as labels or memberships "
                                  "has no prototypes.")
        pa = check_array_2d(prototypes_a, "prototypes_a")
        pb = check_array_2d(prototypes_b, "prototypes_b")
        if pa.shape[0] != ka or pb.shape[0] != kb or pa.shape[1] != pb.shape[1]:
            raise ValidationError(f"prototypes_a and prototypes_b must have {ka} and {kb} rows (one per cluster) of "
                                  f"the same width, got shapes {pa.shape} and {pb.shape}.")
        L = np.sqrt(((pa[:, None, :] - pb[None, :, :]) ** 2).sum(axis=2))
    L = np.asarray(L, dtype=np.float64) if not isinstance(L, str) else np.zeros(0)
    if L.shape != (ka, kb) or not np.isfinite(L).all():
        raise ValidationError(f"L must be a finite ({ka}, {kb}) matrix of prototype distances, got {np.shape(L)}.")
    alpha = _masses(alpha, ka, "alpha", "partition_a, K_a")
    beta = _masses(beta, kb, "beta", "partition_b, K_b")
    alpha = np.ones(ka) if alpha is None else alpha
    beta = np.ones(kb) if beta is None else beta
    if not np.isclose(alpha.sum(), beta.sum(), rtol=1e-9, atol=0):
        raise ValidationError(f"alpha and beta must have equal totals, got {alpha.sum()!r} and {beta.sum()!r} "
                              f"(with K_a = {ka} and K_b = {kb} clusters, unit masses need equal numbers of clusters).")
    CL = C * L
    return float(CL.sum() - 2.0 * _transport(CL / np.add.outer(alpha, beta), alpha, beta, maximize=True))


@declare(higher_is_better=True)
def prediction_strength(partition_a: npt.ArrayLike, partition_b: npt.ArrayLike) -> float:
    """Prediction strength of Tibshirani & Walther (2005), as clue computes it (higher is better).

    ``min_j sum_l n_jl (n_jl - 1) / (n_j (n_j - 1))`` over the classes j of ``partition_a``
    with at least two objects: for the worst class of the first partition, the share of its
    pairs of objects that the second partition also puts together (clue's
    ``cl_agreement(method = "PS")``, Hornik 2005; clue's documentation words the minimum over
    the classes of the second argument, its code, followed here, over the first). Not
    symmetric. Soft partitions are hardened as in :func:`fowlkes_mallows`.

    Returns
    -------
    strength : float
        In [0, 1]; 1.0 when every class of ``partition_a`` is a single object (clue returns
        R's ``Inf``, the minimum of nothing).

    Examples
    --------
    >>> from cclust.metrics import prediction_strength
    >>> prediction_strength([0, 0, 0, 1, 1], [0, 0, 1, 1, 1])
    0.3333333333333333
    """
    return _prediction_strength_from_table(_hard_table(*_partitions(partition_a, partition_b)))
