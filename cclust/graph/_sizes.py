"""The ``sizes`` option of every graph method: cluster sizes the ensemble suggests
(:func:`estimate_clusters`, a size-free first consensus), object weights from them
(:func:`size_weights`) and the choice between the equal and the estimated cut
(:func:`cut_with_sizes`, :func:`choose_sizes`)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from cclust.ensemble import Ensemble, EnsembleLike
from cclust.errors import ValidationError
from cclust.validation import RandomStateLike, check_n_jobs, memory_budget, require_memory
from cclust.graph._checks import check_graph_inputs
from cclust.graph._bipartite import bipartite_bytes, hbgf_graph, hbgf_graph_edges, partition_bipartite_groups
from cclust.graph._tcut import LabelGraph


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


def _column_weights(ensemble: Ensemble) -> npt.NDArray[np.float64]:
    """The partition weight of every one-hot column (cluster ``offsets[i] + l`` weighs w_i)."""
    return np.repeat(np.asarray(ensemble.weights, dtype=np.float64), ensemble.n_clusters)


def _group_counts(ensemble: Ensemble, labels: npt.NDArray[np.integer[Any]], n_groups: int,
                  n_threads: int) -> npt.NDArray[np.float64]:
    """``indicator @ B``: the (n_groups, sum K_i) counts of every group's members in every
    cluster of every partition (missing labels not counted), one pass over the label codes."""
    return ensemble.contingency(labels, n_groups, n_jobs=n_threads).astype(np.float64)


def separated_coassociation(ensemble: Ensemble, labels: npt.NDArray[np.integer[Any]], *,
                            n_jobs: int | None = None) -> float:
    """The fraction of the total co-association joining objects that ``labels`` separates:
    ``1 - sum_k sum_{x, y in C_k} A[x, y] / sum_{x, y} A[x, y]`` (the consensus cut).

    With T the contingency table of ``labels`` against every partition's clusters and w_c the
    weight of cluster c's partition, ``sum_{x, y in C_k} A[x, y] = sum_c w_c T[k, c]^2``: one
    pass over the label codes, no one-hot and no n x n matrix. ``n_jobs`` threads (the result
    does not depend on it).
    """
    n_threads = check_n_jobs(n_jobs)
    labels = np.asarray(labels, dtype=np.int64)
    T = _group_counts(ensemble, labels, int(labels.max()) + 1, n_threads)
    w = _column_weights(ensemble)
    within = float((T * T).sum(axis=0) @ w)
    sizes = T.sum(axis=0)
    total = float((sizes * sizes) @ w)
    return max(0.0, 1.0 - within / total) if total > 0 else 0.0  # never below 0 by round-off


def choose_sizes(ensemble: Ensemble, equal: npt.NDArray[np.int64], estimated: npt.NDArray[np.int64], *,
                 n_jobs: int | None = None) -> tuple[npt.NDArray[np.int64], str, tuple[float, float]]:
    """``sizes="auto"``: the partition balanced by estimated sizes if its consensus cut
    (:func:`separated_coassociation`) is below :data:`AUTO_CUT_RATIO` times the equal-size
    partition's, else the equal-size one. Returns (labels, which, the two cuts).

    When a natural cluster is several times larger than the others, the equal-size cut must
    go through it and separates far more co-association than a cut that keeps it whole
    (well-separated blobs: 3 to 50 times more; unbalanced real data such as wdbc and glass:
    4-5 times). When the classes overlap and are about equal (digits, segment), the estimate's
    sizes are off and buy a smaller saving (1.2-2.2 times): the equal cut is kept there.
    """
    cut_equal = separated_coassociation(ensemble, equal, n_jobs=n_jobs)
    cut_estimated = separated_coassociation(ensemble, estimated, n_jobs=n_jobs)
    if cut_estimated < AUTO_CUT_RATIO * cut_equal:  # strict: an equal cut separating nothing stays
        return estimated, "estimated", (cut_equal, cut_estimated)
    return equal, "equal", (cut_equal, cut_estimated)


def _move_to_best_average(ensemble, own, labels, n_groups, passes, n_threads):
    """Objects to the group of highest average co-association with its other members.

    The co-association of x with a group g is ``sum_{y in g} A[x, y] = sum_c B[x, c] w_c T[g, c]``
    (T: the groups' contingency table, w_c: cluster c's partition weight), ``B_w T^T`` read
    from the label codes (``LabelGraph`` with the column weights w); divided by g's size (less x if x is in g, whose
    own term ``own[x] = A[x, x]`` is taken off); every object moves at once, ``passes`` times
    or until nothing moves. Groups left empty disappear; the labels are renumbered
    0..(groups left - 1). Holds one n x n_groups array.
    """
    n = labels.shape[0]
    rows = np.arange(n)
    weighted = LabelGraph.of(ensemble, _column_weights(ensemble), n_threads)
    for _ in range(passes):
        score = weighted.matmat(_group_counts(ensemble, labels, n_groups, n_threads).T)
        size = np.bincount(labels, minlength=n_groups).astype(np.float64)
        held = score[rows, labels] - own
        held_size = size[labels] - 1.0
        np.divide(score, size, out=score, where=size > 0)
        score[:, size == 0] = -1.0
        score[rows, labels] = np.where(held_size > 0, held / np.where(held_size > 0, held_size, 1.0), -1.0)
        # Stay put on a tie with the group held, so that a pass never undoes an equal choice.
        best = score.argmax(axis=1)
        stay = score[rows, labels] >= score[rows, best]
        del score
        moved = np.where(stay, labels, best)
        if np.array_equal(moved, labels):
            break
        labels = moved
    used, labels = np.unique(labels, return_inverse=True)
    return labels.reshape(-1), used.shape[0]


def _average_linkage(ensemble, labels, n_groups, n_clusters, n_threads):
    """Merge groups two by two, the pair of highest average co-association between their
    members first (UPGMA on groups, exact: the summed co-associations add up), until
    ``n_clusters`` remain; returns the merged label of every group.

    The co-association summed over two groups g, h is ``sum_c w_c T[g, c] T[h, c]`` for the
    groups' contingency table T (n_groups x sum K_i)."""
    T = _group_counts(ensemble, labels, n_groups, n_threads)
    between = (T * _column_weights(ensemble)) @ T.T  # sum of A over group pairs
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


#: Bytes the size estimate's passes may take without asking the memory budget (its n x
#: n_groups score array and a few vectors of n; METIS's fine cut is always asked).
UNCHECKED_ESTIMATE_BYTES = 256 << 20

#: The fine cut of :func:`estimate_clusters`: METIS on HBGF's bipartite graph when it fits
#: the memory budget, else KCC on the label codes (see :func:`estimate_route`).
FINE_CUTS = ("metis", "kcc")


#: KCC's utility when it makes the fine cut (see :func:`estimate_clusters`).
FINE_CUT_UTILITY = "uc"


def _n_parts(ensemble: Ensemble, n_clusters: int, parts_per_cluster: int) -> int:
    return min(ensemble.n_samples, max(n_clusters, int(parts_per_cluster) * n_clusters))


def estimate_route(ensemble: EnsembleLike, n_clusters: int, *, parts_per_cluster: int = PARTS_PER_CLUSTER,
                   max_bytes: int | None = None) -> str:
    """The fine cut :func:`estimate_clusters` takes: ``"metis"`` when METIS on HBGF's bipartite
    graph (:func:`cclust.graph.bipartite_bytes` of its edges) fits the memory budget
    (:func:`cclust.validation.memory_budget` of ``max_bytes``), else ``"kcc"``.

    The edges are first counted on the unmerged graph (one per label; an upper bound), and only
    when that bound is over the budget on the graph with identically labelled objects merged,
    as HBGF builds it.
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    budget = memory_budget(max_bytes)
    if bipartite_bytes(int(ensemble.cluster_sizes.sum())) <= budget:
        return "metis"
    edges = hbgf_graph_edges(ensemble, _n_parts(ensemble, n_clusters, parts_per_cluster))[2]
    return "metis" if bipartite_bytes(edges) <= budget else "kcc"


def estimate_bytes(n_samples: int, n_groups: int) -> int:
    """Peak bytes of the size estimate's passes over the label codes besides the fine cut: the
    n x ``n_groups`` float64 scores and about eight vectors of n (labels, own terms, the held
    group's scores and sizes, the best group, the moves)."""
    return 8 * int(n_samples) * (int(n_groups) + 8)


def require_estimate_memory(ensemble: EnsembleLike, n_clusters: int, *, parts_per_cluster: int = PARTS_PER_CLUSTER,
                            max_bytes: int | None = None) -> str:
    """Check the memory of :func:`estimate_clusters` before it runs, and return its fine cut
    (:func:`estimate_route`).

    The passes over the label codes need :func:`estimate_bytes`; past
    :data:`UNCHECKED_ESTIMATE_BYTES` that figure is asked of the budget
    (:func:`cclust.validation.require_memory`), so that a refusal comes before any work.
    The METIS fine cut is taken only where it fits; KCC's passes need a few vectors of n.
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    route = estimate_route(ensemble, n_clusters, parts_per_cluster=parts_per_cluster, max_bytes=max_bytes)
    n = ensemble.n_samples
    n_parts = _n_parts(ensemble, n_clusters, parts_per_cluster)
    need = estimate_bytes(n, n_parts)
    if need > UNCHECKED_ESTIMATE_BYTES:
        require_memory(need, f"the cluster-size estimate of {n} objects in {n_parts} groups (sizes='auto' or "
                       "'estimated')", "pass sizes='equal' (no estimate)", max_bytes)
    return route


def estimate_clusters(ensemble: EnsembleLike, n_clusters: int, *, random_state: RandomStateLike = None,
                      parts_per_cluster: int = PARTS_PER_CLUSTER, max_bytes: int | None = None,
                      n_jobs: int | None = None) -> npt.NDArray[np.int64]:
    """A first consensus that is free to have clusters of any size: the sizes to balance for.

    1. A fine cut into ``parts_per_cluster * n_clusters`` parts of about equal size: fine
       enough that a natural cluster several times larger than the others is a union of parts,
       and each smaller one mostly one part. HBGF's bipartite graph cut by METIS when it fits
       the memory budget (``max_bytes``, see :func:`estimate_route`), else KCC (Wu et al.
       2015) on the label codes with the category utility Uc into as many parts (no more than
       the distinct label vectors), one k-means++ start.
    2. Every object moves to the part of highest average co-association with it (one pass), so
       a part straddling two natural clusters empties into them.
    3. The parts are merged by average linkage on the co-association (the mean over the pairs
       of objects) until ``n_clusters`` remain; average linkage has no preference for equal
       sizes.
    4. One more pass as in 2 settles the objects on the boundaries.

    Steps 2 to 4 read the label codes (contingency tables of the groups and one lookup pass
    over the partitions, ``n_jobs`` threads), no one-hot and no n x n matrix: time linear in
    n * n_partitions, memory one n x n_groups array (:func:`estimate_bytes`) beside the codes.
    METIS on the bipartite graph needs :func:`cclust.graph.bipartite_bytes` of its edges (about
    18 GiB at 10^8 labels); KCC keeps memory linear in n at any size. Uc is KCC's utility
    here because its K-means objective is the one steps 2 and 3 read, the co-association
    within the parts (Wu et al. 2015).

    Returns
    -------
    labels : ndarray of shape (n_samples,), int64
        The estimated cluster of every object (at most ``n_clusters`` clusters; fewer only if
        the fine cut has fewer than ``n_clusters`` non-empty parts).
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    route = require_estimate_memory(ensemble, n_clusters, parts_per_cluster=parts_per_cluster, max_bytes=max_bytes)
    return _estimate(ensemble, n_clusters, route, random_state, parts_per_cluster, max_bytes, check_n_jobs(n_jobs))


def _estimate(ensemble, n_clusters, route, random_state, parts_per_cluster, max_bytes, n_threads):
    """:func:`estimate_clusters` once its memory is checked and its fine cut (``route``) chosen."""
    n_parts = _n_parts(ensemble, n_clusters, parts_per_cluster)
    if route == "metis":
        G, groups, weight_by_rank = hbgf_graph(ensemble, n_parts, max_bytes)
        fine, _, _ = partition_bipartite_groups(G, groups, weight_by_rank.max(), n_parts, random_state=random_state,
                                                ufactor=None, max_bytes=max_bytes)
        del G, groups
    else:
        fine = _kcc_fine_cut(ensemble, n_parts, random_state, n_threads)
    fine = np.unique(fine, return_inverse=True)[1].reshape(-1)
    # A[x, x], summed as the scores it is taken off are (labelled_weight's sums round otherwise)
    own = LabelGraph.of(ensemble, _column_weights(ensemble), n_threads).matvec(np.ones(int(ensemble.offsets[-1])))
    purified, n_groups = _move_to_best_average(ensemble, own, fine, int(fine.max()) + 1, 1, n_threads)
    if n_groups < n_clusters:  # never seen: keep the parts as the fine cut made them
        purified, n_groups = fine, int(fine.max()) + 1
    if n_groups <= n_clusters:
        return purified.astype(np.int64)
    labels = _average_linkage(ensemble, purified, n_groups, n_clusters, n_threads)[purified]
    settled, k = _move_to_best_average(ensemble, own, labels, n_clusters, 1, n_threads)
    return (settled if k == n_clusters else labels).astype(np.int64)


def _kcc_fine_cut(ensemble, n_parts, random_state, n_threads):
    """KCC with Uc into ``n_parts`` parts (fewer if fewer distinct label vectors), one start."""
    from cclust.registry import get

    if n_parts > int(np.max(ensemble.n_clusters)):
        n_parts = min(n_parts, ensemble.n_distinct_rows)
    if n_parts < 2:
        return np.zeros(ensemble.n_samples, dtype=np.int64)
    return get("kcc")(ensemble, n_parts, utility=FINE_CUT_UTILITY, n_init=1, random_state=random_state,
                      n_jobs=n_threads).labels


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
                   admissible_equal: float | None = None, max_bytes: int | None = None,
                   n_jobs: int | None = None) -> tuple[Any, Any, dict[str, Any]]:
    """Run a graph method's cut for ``sizes`` and pick the result.

    What the ``sizes`` parameter of ``cspa``, ``mcla``, ``hbgf``, ``womc``, ``wosp``, ``wohb``
    (and ``hgpa``) means:

    * "equal" (the papers): every object counts 1, so the parts hold about n / K objects each,
      and a natural cluster several times larger than the others is cut in pieces.
    * "estimated": a first consensus free of any size constraint (:func:`estimate_clusters`:
      a fine METIS cut of HBGF's graph, or KCC's where that graph would not fit the memory
      budget, whose parts are merged by average co-association)
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
    ``(labels, objective, extras)``, with ``extras["sizes"]`` and ``extras["sizes_used"]``, and
    for "estimated" and "auto" ``extras["sizes_fine_cut"]``, the estimate's fine cut ("metis"
    or "kcc", see :func:`estimate_route`).

    The estimate's memory is checked (:func:`require_estimate_memory`, against ``max_bytes``)
    before the first cut runs, so a refusal comes before any work; ``n_jobs`` threads run the
    estimate's passes (the result does not depend on it).

    ``admissible_equal`` (None for every METIS method: the above unchanged), a tolerance
    epsilon, lets "auto" skip the estimated cut when no estimated cluster exceeds
    ``(1 + epsilon) n / K`` objects: the estimate is then itself a partition the equal cut
    may return, so the size weights offer nothing the equal cut's balance forbids, and the
    equal cut is kept (``extras["estimated_cut_skipped"] = True``). A rule checked by
    measurement (HGPA, docs/benchmarks.md), not a theorem: the estimated cut is another
    partitioner run, which could in principle separate less co-association.
    """
    fine_cut = None
    if sizes in ("estimated", "auto"):
        fine_cut = require_estimate_memory(ensemble, n_clusters, max_bytes=max_bytes)
    runs = {}
    if sizes in ("equal", "auto"):
        runs["equal"] = cut(None, ufactor)
    if sizes in ("estimated", "auto"):
        # the memory was checked and the fine cut chosen above, before the first cut
        estimate = _estimate(ensemble, n_clusters, fine_cut, rng, PARTS_PER_CLUSTER, max_bytes, check_n_jobs(n_jobs))
        if sizes == "auto" and admissible_equal is not None and (
                np.bincount(estimate).max() <= (1 + admissible_equal) * ensemble.n_samples / n_clusters):
            labels, objective, extras = runs["equal"]
            return labels, objective, dict(extras, sizes=sizes, sizes_used="equal", sizes_fine_cut=fine_cut,
                                           estimated_cut_skipped=True)
        weights = size_weights(estimate, n_clusters)
        runs["estimated"] = cut(weights, ESTIMATED_UFACTOR if ufactor is None else ufactor)
    if sizes == "auto":
        _, used, cuts = choose_sizes(ensemble, runs["equal"][0], runs["estimated"][0], n_jobs=n_jobs)
    else:
        used, cuts = sizes, None
    labels, objective, extras = runs[used]
    extras = dict(extras, sizes=sizes, sizes_used=used)
    if fine_cut is not None:
        extras["sizes_fine_cut"] = fine_cut
    if cuts is not None:
        extras["separated_coassociation"] = {"equal": cuts[0], "estimated": cuts[1]}
    return labels, objective, extras
