"""The ``sizes`` option of every graph method: cluster sizes the ensemble suggests
(:func:`estimate_clusters`, a size-free first consensus), object weights from them
(:func:`size_weights`) and the choice between the equal and the estimated cut
(:func:`cut_with_sizes`, :func:`choose_sizes`)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.ensemble import Ensemble, EnsembleLike
from cclust.errors import ValidationError
from cclust.validation import RandomStateLike
from cclust.graph._checks import check_graph_inputs
from cclust.graph._bipartite import hbgf_graph, partition_bipartite_groups


#: What the graph methods' ``sizes`` parameter accepts (see :func:`choose_sizes`).
SIZES = ("auto", "estimated", "equal")

#: ``sizes="auto"`` keeps the cut balanced by estimated sizes when it separates at most this
#: fraction of the co-association the equal-size cut separates (:func:`choose_sizes`).
AUTO_CUT_RATIO = 1 / 3

#: METIS balance tolerance (thousandths) of a cut balanced by estimated sizes when the caller
#: leaves ``ufactor`` to its default: the estimate and the rounding of the weights are
#: approximate, so the parts get METIS's k-way tolerance (3%) rather than its 0.1% of
#: recursive bisection.
ESTIMATED_UFACTOR = 30

#: The fine cut of :func:`estimate_clusters` has this many parts per cluster asked for.
PARTS_PER_CLUSTER = 3

#: A vertex of an object whose estimated cluster holds s objects weighs about
#: ``SIZE_WEIGHT_UNIT * (n / K) / s`` (clipped to [1, SIZE_WEIGHT_UNIT ** 2]): each estimated
#: cluster then weighs about ``SIZE_WEIGHT_UNIT * n / K`` in all, rounded within 6% for
#: clusters up to 3.5 times the average size.
SIZE_WEIGHT_UNIT = 32


def check_sizes(sizes: str) -> str:
    if sizes not in SIZES:
        raise ValidationError(f"sizes must be 'auto', 'estimated' or 'equal', got {sizes!r}.")
    return sizes


def separated_coassociation(ensemble: Ensemble, labels: npt.NDArray[np.integer[Any]]) -> float:
    """The fraction of the total co-association joining objects that ``labels`` separates:
    ``1 - sum_k sum_{x, y in C_k} A[x, y] / sum_{x, y} A[x, y]`` (the consensus cut, from the
    one-hot, no n x n matrix)."""
    B = ensemble.one_hot()
    Bw = ensemble.one_hot(weighted=True)
    k = int(labels.max()) + 1
    indicator = _group_indicator(np.asarray(labels, dtype=np.int64), k)
    within = float((indicator @ Bw).multiply(indicator @ B).sum())
    total = float(np.asarray(Bw.sum(axis=0)).reshape(-1) @ np.asarray(B.sum(axis=0)).reshape(-1))
    return max(0.0, 1.0 - within / total) if total > 0 else 0.0  # never below 0 by round-off


def choose_sizes(ensemble: Ensemble, equal: npt.NDArray[np.int64], estimated: npt.NDArray[np.int64]
                 ) -> tuple[npt.NDArray[np.int64], str, tuple[float, float]]:
    """``sizes="auto"``: the partition balanced by estimated sizes if its consensus cut
    (:func:`separated_coassociation`) is below :data:`AUTO_CUT_RATIO` times the equal-size
    partition's, else the equal-size one. Returns (labels, which, the two cuts).

    When a natural cluster is several times larger than the others, the equal-size cut must
    go through it and separates far more co-association than a cut that keeps it whole
    (well-separated blobs: 3 to 50 times more; unbalanced real data such as wdbc and glass:
    4-5 times). When the classes overlap and are about equal (digits, segment), the estimate's
    sizes are off and buy a smaller saving (1.2-2.2 times): the equal cut is kept there.
    """
    cut_equal = separated_coassociation(ensemble, equal)
    cut_estimated = separated_coassociation(ensemble, estimated)
    if cut_estimated < AUTO_CUT_RATIO * cut_equal:  # strict: an equal cut separating nothing stays
        return estimated, "estimated", (cut_equal, cut_estimated)
    return equal, "equal", (cut_equal, cut_estimated)


def _group_indicator(labels, n_groups):
    n = labels.shape[0]
    return sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_groups, n))


def _move_to_best_average(B, Bw, labels, n_groups, passes):
    """Objects to the group of highest average co-association with its other members.

    The co-association of x with a group g is ``Bw[x] . sum_{y in g} B[y]`` (the weighted number
    of partitions putting x and y together, summed over g), divided by g's size (less x if x is
    in g); every object moves at once, ``passes`` times or until nothing moves. Groups left
    empty disappear; the labels are renumbered 0..(groups left - 1).
    """
    n = labels.shape[0]
    rows = np.arange(n)
    own = np.asarray(Bw.multiply(B).sum(axis=1)).reshape(-1)  # x with itself
    for _ in range(passes):
        totals = (_group_indicator(labels, n_groups) @ B).T.tocsr()
        score = np.asarray((Bw @ totals).todense())
        size = np.bincount(labels, minlength=n_groups).astype(np.float64)
        score[rows, labels] -= own
        denom = np.broadcast_to(size, score.shape).copy()
        denom[rows, labels] -= 1.0
        score = np.where(denom > 0, score / np.where(denom > 0, denom, 1.0), -1.0)
        # Stay put on a tie with the group held, so that a pass never undoes an equal choice.
        best = score.argmax(axis=1)
        stay = score[rows, labels] >= score[rows, best]
        moved = np.where(stay, labels, best)
        if np.array_equal(moved, labels):
            break
        labels = moved
    used, labels = np.unique(labels, return_inverse=True)
    return labels.reshape(-1), used.shape[0]


def _average_linkage(B, Bw, labels, n_groups, n_clusters):
    """Merge groups two by two, the pair of highest average co-association between their
    members first (UPGMA on groups, exact: the summed co-associations add up), until
    ``n_clusters`` remain; returns the merged label of every group."""
    indicator = _group_indicator(labels, n_groups)
    between = np.asarray(((indicator @ Bw) @ (indicator @ B).T).todense())  # sum of A over group pairs
    size = np.bincount(labels, minlength=n_groups).astype(np.float64)
    alive = np.ones(n_groups, dtype=bool)
    merged_into = np.arange(n_groups)
    for _ in range(n_groups - n_clusters):
        live = np.flatnonzero(alive)
        avg = between[np.ix_(live, live)] / np.outer(size[live], size[live])
        np.fill_diagonal(avg, -np.inf)
        i, j = np.unravel_index(int(np.argmax(avg)), avg.shape)
        a, b = live[min(i, j)], live[max(i, j)]
        between[a] += between[b]
        between[:, a] += between[:, b]
        size[a] += size[b]
        alive[b] = False
        merged_into[merged_into == b] = a
    _, final = np.unique(merged_into, return_inverse=True)
    return final.reshape(-1)


def estimate_clusters(ensemble: EnsembleLike, n_clusters: int, *, random_state: RandomStateLike = None,
                      parts_per_cluster: int = PARTS_PER_CLUSTER) -> npt.NDArray[np.int64]:
    """A first consensus that is free to have clusters of any size: the sizes to balance for.

    1. HBGF's bipartite graph is cut by METIS into ``parts_per_cluster * n_clusters`` parts of
       about equal size: fine enough that a natural cluster several times larger than the
       others is a union of parts, and each smaller one mostly one part.
    2. Every object moves to the part of highest average co-association with it (one pass), so
       a part straddling two natural clusters empties into them.
    3. The parts are merged by average linkage on the co-association (the mean over the pairs
       of objects) until ``n_clusters`` remain; average linkage has no preference for equal
       sizes.
    4. One more pass as in 2 settles the objects on the boundaries.

    Everything is computed from the sparse one-hot (no n x n matrix): time and memory linear
    in n * n_partitions, plus the METIS call.

    Returns
    -------
    labels : ndarray of shape (n_samples,), int64
        The estimated cluster of every object (at most ``n_clusters`` clusters; fewer only if
        the fine cut has fewer than ``n_clusters`` non-empty parts).
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    n = ensemble.n_samples
    n_parts = min(n, max(n_clusters, int(parts_per_cluster) * n_clusters))
    G, groups, weight_by_rank = hbgf_graph(ensemble, n_parts)
    fine, _, _ = partition_bipartite_groups(G, groups, weight_by_rank.max(), n_parts, random_state=random_state,
                                      ufactor=None)
    B = ensemble.one_hot()
    Bw = ensemble.one_hot(weighted=True)
    fine = np.unique(fine, return_inverse=True)[1].reshape(-1)
    purified, n_groups = _move_to_best_average(B, Bw, fine, int(fine.max()) + 1, 1)
    if n_groups < n_clusters:  # never seen: keep the parts as METIS cut them
        purified, n_groups = fine, int(fine.max()) + 1
    if n_groups <= n_clusters:
        return purified.astype(np.int64)
    labels = _average_linkage(B, Bw, purified, n_groups, n_clusters)[purified]
    settled, k = _move_to_best_average(B, Bw, labels, n_clusters, 1)
    return (settled if k == n_clusters else labels).astype(np.int64)


def size_weights(labels: npt.ArrayLike, n_clusters: int | None = None) -> npt.NDArray[np.int64]:
    """Integer vertex weights under which the clusters of ``labels`` weigh about the same.

    Object x in a cluster of s objects weighs ``round(SIZE_WEIGHT_UNIT * (n / K) / s)``,
    clipped to [1, SIZE_WEIGHT_UNIT ** 2] (K: the number of clusters in ``labels``, or
    ``n_clusters``), so a partitioner that balances parts by vertex weight -- METIS, Mt-KaHyPar
    -- is free to give every estimated cluster a part of its own size. Weights clipped at 1
    belong to clusters over 32 times the average, which then count as 32 times.
    """
    labels = np.asarray(labels)
    n = labels.shape[0]
    counts = np.bincount(labels)
    k = n_clusters if n_clusters is not None else int((counts > 0).sum())
    per_cluster = np.rint(SIZE_WEIGHT_UNIT * (n / k) / np.maximum(counts, 1))
    per_cluster = np.clip(per_cluster, 1, SIZE_WEIGHT_UNIT ** 2).astype(np.int64)
    return per_cluster[labels]


def object_size_weights(ensemble: EnsembleLike, n_clusters: int, random_state: RandomStateLike) -> npt.NDArray[np.int64]:
    """Every object's vertex weight under the estimated sizes: :func:`size_weights` of
    :func:`estimate_clusters`."""
    return size_weights(estimate_clusters(ensemble, n_clusters, random_state=random_state), n_clusters)


def cut_with_sizes(ensemble: Ensemble, n_clusters: int, sizes: str, ufactor: int | None, rng: np.random.Generator,
                   cut: Callable[[npt.NDArray[np.int64] | None, int | None], tuple[Any, Any, dict[str, Any]]], *,
                   admissible_equal: float | None = None) -> tuple[Any, Any, dict[str, Any]]:
    """Run a graph method's cut for ``sizes`` and pick the result.

    What the ``sizes`` parameter of ``cspa``, ``mcla``, ``hbgf``, ``womc``, ``wosp``, ``wohb``
    (and ``hgpa``) means:

    * "equal" (the papers): every object counts 1, so the parts hold about n / K objects each,
      and a natural cluster several times larger than the others is cut in pieces.
    * "estimated": a first consensus free of any size constraint (:func:`estimate_clusters`:
      a fine METIS cut of HBGF's graph whose parts are merged by average co-association)
      tells how large the clusters are, and each object counts inversely to its estimated
      cluster's size (:func:`size_weights`), so parts of equal weight may be clusters of
      unequal size; ``ufactor`` defaults to :data:`ESTIMATED_UFACTOR` there.
    * "auto" (cclust's default, not in the papers): both, keeping the "estimated" cut only if
      it separates less than a third of the co-association the "equal" cut separates
      (:func:`choose_sizes`): a cluster three or five times larger than the others then stays
      whole, while on overlapping classes of about equal size the papers' cut is kept.

    ``cut(weights, ufactor)`` returns ``(labels, objective, extras)`` for the objects' vertex
    weights (None: all 1). "equal" runs it once with unit weights; "estimated" once with
    :func:`object_size_weights`; "auto" both -- the equal cut first, drawing the same seeds
    from ``rng`` as "equal" does -- and keeps one by :func:`choose_sizes`. Returns the chosen
    ``(labels, objective, extras)``, with ``extras["sizes"]`` and ``extras["sizes_used"]``.

    ``admissible_equal`` (None for every METIS method: the above unchanged), a tolerance
    epsilon, lets "auto" skip the estimated cut when no estimated cluster exceeds
    ``(1 + epsilon) n / K`` objects: the estimate is then itself a partition the equal cut
    may return, so the size weights offer nothing the equal cut's balance forbids, and the
    equal cut is kept (``extras["estimated_cut_skipped"] = True``). A rule checked by
    measurement (HGPA, docs/benchmarks.md), not a theorem: the estimated cut is another
    partitioner run, which could in principle separate less co-association.
    """
    runs = {}
    if sizes in ("equal", "auto"):
        runs["equal"] = cut(None, ufactor)
    if sizes in ("estimated", "auto"):
        estimate = estimate_clusters(ensemble, n_clusters, random_state=rng)
        if sizes == "auto" and admissible_equal is not None and (
                np.bincount(estimate).max() <= (1 + admissible_equal) * ensemble.n_samples / n_clusters):
            labels, objective, extras = runs["equal"]
            return labels, objective, dict(extras, sizes=sizes, sizes_used="equal", estimated_cut_skipped=True)
        weights = size_weights(estimate, n_clusters)
        runs["estimated"] = cut(weights, ESTIMATED_UFACTOR if ufactor is None else ufactor)
    if sizes == "auto":
        _, used, cuts = choose_sizes(ensemble, runs["equal"][0], runs["estimated"][0])
    else:
        used, cuts = sizes, None
    labels, objective, extras = runs[used]
    extras = dict(extras, sizes=sizes, sizes_used=used)
    if cuts is not None:
        extras["separated_coassociation"] = {"equal": cuts[0], "estimated": cuts[1]}
    return labels, objective, extras
