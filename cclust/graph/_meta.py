"""MCLA's meta-graph of clusters (Strehl & Ghosh 2002; weighted, Ren et al. 2017), its cut into
meta-clusters and the objects' participation in them."""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.ensemble import Ensemble
from cclust.validation import RandomStateLike, check_n_jobs, check_random_state, memory_budget, require_memory
from cclust.graph._checks import canonical_cluster_order
from cclust.graph._metis import argmax_random_ties, honour_n_clusters, partition_graph
from cclust.graph._sizes import cut_with_sizes
from cclust.graph._tcut import LabelGraph


def meta_graph(ensemble: Ensemble, object_weights: npt.ArrayLike | None = None, *,
               max_bytes: int | None = None) -> tuple[npt.NDArray[np.intp], Any]:
    """The meta-graph of MCLA / WOMC: (weighted) Jaccard similarity between every two clusters.

    ``S_ij = sum_{x in C_i & C_j} w_x / sum_{x in C_i | C_j} w_x`` (Ren et al. 2017, eq. 5; binary Jaccard
    when ``object_weights`` is None), from the overlap table ``G = B^T diag(w) B`` of the one-hot
    ``B``, which one compiled pass over the stored label codes forms without ``B``
    (:func:`overlap_table`). Its entries (pairs of clusters sharing an object, up to
    (sum K_i)^2) are counted before it is formed and refused past ``max_bytes`` (the memory
    budget, :func:`cclust.validation.memory_budget`).

    Returns
    -------
    order : ndarray of shape (sum K_i,)
        The canonical order of the clusters (one-hot columns) used as vertices.
    S : scipy CSR matrix of shape (sum K_i, sum K_i)
        Similarities between the clusters in that order (diagonal 1, zero entries absent).
    """
    return _meta_graph_parts(ensemble, object_weights, max_bytes)


def _meta_graph_parts(ensemble, object_weights, max_bytes, entries=None):
    """The canonical cluster order and the meta-graph in it, refused past the budget before
    anything of it is formed. ``entries``: the exact count of the meta-graph's entries when the
    caller has it (see :func:`_require_meta_graph`)."""
    entries, capacity = _require_meta_graph(ensemble, max_bytes, entries)
    order = canonical_cluster_order(ensemble)
    graph = _jaccard_graph(ensemble, order, object_weights, capacity)
    if entries is None:
        # The most entries the meta-graph can have fitted the budget, so the exact count was left
        # to the table's own pass: its figure is recorded now, within the bound's.
        _require_meta_graph(ensemble, max_bytes, graph.nnz)
    return order, graph


def overlap_table(ensemble: Ensemble, order: npt.NDArray[np.integer[Any]],
                  object_weights: npt.ArrayLike | None = None, capacity: int | None = None) -> Any:
    """``G = B^T diag(w) B`` for the one-hot ``B`` of ``ensemble``, its rows and columns in
    ``order`` (``B[:, order]``), as a CSR with sorted indices and float64 values (object counts
    when ``object_weights`` is None).

    One compiled pass over the stored label codes (:meth:`cclust.Ensemble.compact_labels`), the
    counting pass of :func:`cluster_overlaps` keeping the cells it tallies: ``B`` is never
    formed. ``capacity``: the entries, or an upper bound of them (the arrays' cells past the
    entries are never written, so never made resident); None counts them first."""
    from cclust._ext._contingency import overlap_table as table

    n_c = int(ensemble.offsets[-1])
    rank = np.empty(n_c, dtype=np.int64)
    rank[np.asarray(order)] = np.arange(n_c, dtype=np.int64)
    if capacity is None:
        capacity = cluster_overlaps(ensemble)[0]
    w = None if object_weights is None else np.ascontiguousarray(object_weights, dtype=np.float64)
    indptr, indices, data = table(ensemble.compact_labels(), np.ascontiguousarray(ensemble.offsets, dtype=np.int64),
                                  w, rank, int(capacity), check_n_jobs(None))
    if indices.shape[0] < np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)    # int32 like the indices: the CSR keeps both as they are
    else:
        indices = indices.astype(np.int64)
    G = sp.csr_matrix((data, indices, indptr), shape=(n_c, n_c))
    G.has_sorted_indices = True
    return G


#: Bytes per entry of the meta-graph at the peak of MCLA / WOMC: the overlap table as a CSR
#: (float64 value, int32 index: 12 bytes) that becomes the Jaccard graph in place, with the
#: table's pass (its rows of the blocks i' >= i, 6 bytes an entry) or the Jaccard unions and row
#: numbers (16) beside it, then METIS's graph made from it once (:func:`_off_diagonal`: its
#: entries off the diagonal, 12 bytes, while the selection mask and row numbers are alive) and,
#: during each cut, METIS's weights and adjacency arrays. Fitted with
#: :data:`_META_GRAPH_LABEL_BYTES` on MCLA's peaks (``sizes="equal"``) on noisy refinements (K_i
#: up to 50) of 10^5 x 100 and 2 * 10^5 x 50 objects x partitions: 230.8 and 56.2 MiB at 6.36 and
#: 1.40 million entries, 36.5 and 35.0 bytes an entry (89.1 when each cut symmetrised the graph
#: through coordinate arrays of every entry).
_META_GRAPH_ENTRY_BYTES = 37
#: Bytes per label beside the meta-graph. Nothing of n x r is made (the overlap table, the
#: canonical order, the cluster sizes and the association H are read from the stored label
#: codes); what remains is of n objects and comes before or after the graph's peak: the grouping
#: of identical rows of the canonical order (about 50 bytes an object) and the association H
#: (8 K bytes an object). The fit above leaves them under 0.01 byte a label; 1 byte a label (100
#: bytes an object at r = 100) keeps them counted where n is large and the graph small.
_META_GRAPH_LABEL_BYTES = 1


#: Every how many objects the sampled counts of the meta-graph's entries read, in turn: the
#: clusters sharing one of those objects are a subset of those sharing any object, so each
#: count is a lower bound, and a bound already past the budget refuses at once (a 64th, then an
#: 8th of the exact count's work).
_SAMPLE_STRIDES = (64, 8)
_SAMPLE_STRIDE = _SAMPLE_STRIDES[0]


def cluster_overlaps(ensemble, *, sums=False, stride=1):
    """One compiled pass over the stored label codes: the entries of ``B^T B`` (pairs of
    clusters sharing an object, the diagonal included) over the objects 0, stride, 2 stride,
    ..., and with ``sums`` every object's ``sum_j A_xj`` and ``sum_j A_xj^2`` for the weighted
    co-association A (an ensemble without missing labels). Returns (entries, row_sum, row_sq).

    One partition's clusters at a time, their objects tallied against the partitions after it
    (the table G = B^T B is symmetric): memory O(n + sum K_i) per thread, never a contingency
    table or the one-hot (see ``cclust/_ext/include/cclust/overlaps.hpp``)."""
    from cclust._ext._contingency import cluster_overlaps as overlaps

    weights = np.ascontiguousarray(ensemble.weights, dtype=np.float64) if sums else None
    return overlaps(ensemble.compact_labels(), np.ascontiguousarray(ensemble.offsets, dtype=np.int64), weights,
                    int(stride), check_n_jobs(None))


def _meta_graph_entries(ensemble):
    """Entries of ``B^T B`` for the one-hot ``B`` of ``ensemble`` (pairs of clusters sharing an
    object, the diagonal included), counted from the stored label codes before the one-hot
    exists: the non-zero cells of the contingency tables of every two partitions."""
    return cluster_overlaps(ensemble)[0]


def _meta_graph_figure(entries, ensemble):
    return entries * _META_GRAPH_ENTRY_BYTES + _META_GRAPH_LABEL_BYTES * ensemble.n_samples * ensemble.n_partitions


_META_GRAPH_ADVICE = "use fewer or coarser basic partitions, or hbgf or kcc (no meta-graph)"


def _meta_graph_what(ensemble):
    return f"the meta-graph of {int(ensemble.offsets[-1])} clusters of {ensemble.n_samples} x " \
           f"{ensemble.n_partitions} labels"


def _most_entries(ensemble):
    """The most entries the meta-graph can have: every pair of clusters, or r^2 an object."""
    total = int(ensemble.offsets[-1])
    return min(total * total, ensemble.n_samples * ensemble.n_partitions ** 2)


def refuse_meta_graph_on_sample(ensemble, max_bytes=None):
    """Refuse at once when the entries counted on every 64th object, then on every 8th
    (:data:`_SAMPLE_STRIDES`; lower bounds of the meta-graph's) already need more than the budget.
    Nothing is counted when even the most entries the meta-graph can have (every pair of clusters,
    or r^2 an object) fit."""
    budget = memory_budget(max_bytes)
    if _meta_graph_figure(_most_entries(ensemble), ensemble) <= budget:
        return                          # no count can exceed the budget: the exact one follows alone
    for stride in _SAMPLE_STRIDES:
        if ensemble.n_samples < 4 * stride:
            continue
        bound = cluster_overlaps(ensemble, stride=stride)[0]
        if _meta_graph_figure(bound, ensemble) > budget:
            require_memory(_meta_graph_figure(bound, ensemble),
                           f"{_meta_graph_what(ensemble)} (at least {bound} pairs of clusters sharing objects, "
                           f"counted on every {stride}th object)", _META_GRAPH_ADVICE, max_bytes, lower_bound=True)


def _require_meta_graph(ensemble, max_bytes=None, entries=None):
    """Refuse the meta-graph of ``ensemble`` past the memory budget, before anything of it is
    formed. Returns ``(entries, capacity)``: the exact count and the entries to make room for.

    ``entries``: the exact count when the caller has it. Otherwise, when even the most entries
    the meta-graph can have (:func:`_most_entries`) fit the budget, nothing is counted here
    (``(None, that bound)``: the table's own pass counts them, and the caller records the figure
    of that count); else a lower bound counted on a sample refuses first when it is already too
    much (:func:`refuse_meta_graph_on_sample`), and the exact count follows only when it fits."""
    if entries is None:
        most = _most_entries(ensemble)
        if _meta_graph_figure(most, ensemble) <= memory_budget(max_bytes):
            return None, most
        refuse_meta_graph_on_sample(ensemble, max_bytes)
        entries = _meta_graph_entries(ensemble)
    require_memory(_meta_graph_figure(entries, ensemble),
                   f"{_meta_graph_what(ensemble)} ({entries} pairs of clusters sharing objects)",
                   _META_GRAPH_ADVICE, max_bytes)
    return int(entries), int(entries)


def _jaccard_graph(ensemble, order, object_weights, capacity=None):
    """The (object-weighted) Jaccard similarities between the clusters of ``ensemble`` in
    ``order``: the overlap table (:func:`overlap_table`), divided in place by the unions
    ``|C_i| + |C_j| - |C_i & C_j|`` (weighted: sums of w), the masses ``|C_i|`` being its
    diagonal. The only other arrays of the size of the graph are its row numbers and the unions."""
    graph = overlap_table(ensemble, order, object_weights, capacity)
    mass = graph.diagonal()                          # sum of w over C_i
    n_c = graph.shape[0]
    union = mass[np.repeat(np.arange(n_c), np.diff(graph.indptr))]
    union += mass[graph.indices]
    union -= graph.data
    positive = union > 0
    np.divide(graph.data, union, out=graph.data, where=positive)
    graph.data[~positive] = 0.0
    return graph


def _off_diagonal(graph):
    """The meta-graph as METIS cuts it: its entries off the diagonal that are not 0, sorted, in
    new arrays (the graph's are freed). The Jaccard graph holds both triangles with equal
    values (the overlap table's, divided by the same sum of sizes), so this is what the
    symmetrising pass of :func:`partition_graph` makes of it (``0.5 a + 0.5 a`` is ``a``),
    made once for every cut instead of through coordinate arrays of every entry at each cut."""
    rows = np.repeat(np.arange(graph.shape[0], dtype=graph.indices.dtype), np.diff(graph.indptr))
    keep = (graph.indices != rows) & (graph.data != 0)
    indptr = np.zeros(graph.shape[0] + 1, dtype=graph.indptr.dtype)
    np.cumsum(np.bincount(rows[keep], minlength=graph.shape[0]), out=indptr[1:])
    del rows
    out = sp.csr_matrix((graph.data[keep], graph.indices[keep], indptr), shape=graph.shape)
    out.has_sorted_indices = True
    return out


def meta_cluster(ensemble: Ensemble, n_clusters: int, object_weights: npt.ArrayLike | None, *,
                 random_state: RandomStateLike, ufactor: int | None, method: str, balance: str = "objects",
                 sizes: str = "equal", max_bytes: int | None = None, entries: int | None = None
                 ) -> tuple[npt.NDArray[np.int64], float, dict[str, Any]]:
    """MCLA (object_weights None) or WOMC (Ren et al. 2017, eq. 5): meta-graph, METIS, strongest participation.

    ``balance="objects"`` gives every meta-graph vertex its cluster's size as METIS vertex
    weight (Strehl & Ghosh sec. 3.4), so that meta-clusters are balanced by the objects they
    cover; ``"clusters"`` gives unit weights (ClusterEnsembles), balancing their number of
    clusters. ``sizes="estimated"`` counts every object with its :func:`size_weights`: a
    cluster weighs the sum of its objects' weights ("objects") or their mean ("clusters").
    """
    rng = check_random_state(random_state)
    order, meta = _meta_graph_parts(ensemble, object_weights, max_bytes, entries)
    meta = _off_diagonal(meta)
    pw = np.repeat(ensemble.weights, ensemble.n_clusters)[order]
    sizes_in_order = ensemble.cluster_sizes[order]

    def cut_graph(weights, tolerance):
        if weights is None:
            vertex_weights = None if balance == "clusters" else np.maximum(1, sizes_in_order)
        else:
            mass = LabelGraph.of(ensemble, n_threads=check_n_jobs(None)).rmatvec(weights.astype(np.float64))[order]
            if balance == "clusters":
                mass = mass / np.maximum(1, sizes_in_order)
            vertex_weights = np.maximum(1, np.rint(mass)).astype(np.int64)
        parts, cut = partition_graph(meta, n_clusters, random_state=rng, ufactor=tolerance,
                                     vertex_weights=vertex_weights, symmetric=True)
        labels, H, moved = participation_of_codes(ensemble, order, pw, parts, n_clusters, rng)
        return labels, cut, {"meta_labels": parts[np.argsort(order)], "association": H, "n_moved": moved,
                             "ufactor": tolerance, "balance": balance}

    labels, cut, extras = cut_with_sizes(ensemble, n_clusters, sizes, ufactor, rng, cut_graph, max_bytes=max_bytes)
    return labels, cut, extras


def participation(B, pw, parts, n_c, n_clusters, rng):
    """MCLA's objects to meta-clusters from a membership matrix ``B`` (objects x clusters, the
    one-hot or soft memberships, columns in the order of ``parts``): labels, the association H
    and the objects moved."""
    # Association of each object with each meta-cluster: the (partition-weighted) fraction of
    # the meta-cluster's clusters it belongs to (Strehl & Ghosh sec. 3.4; Ren et al. 2017, sec. 3.3.1).
    member = sp.csr_matrix((pw, (np.arange(n_c), parts)), shape=(n_c, n_clusters))
    total = np.asarray(member.sum(axis=0)).reshape(-1)
    H = np.asarray((B @ member).todense()) / np.where(total > 0, total, 1.0)
    return _strongest(H, n_clusters, rng)


def participation_of_codes(ensemble, order, pw, parts, n_clusters, rng):
    """:func:`participation` of the one-hot ``B[:, order]`` of ``ensemble`` without ``B``: the
    association ``H = B member / total`` is a sum over partitions of one table row per label,
    read from the stored label codes (``LabelGraph`` of ``cclust.graph._tcut``), partition by partition.
    Equal to it bit for bit when the partition weights are equal (sums of equal terms), to
    rounding otherwise."""
    n_c = order.shape[0]
    values = np.empty(n_c)
    values[order] = pw
    member = np.zeros((n_c, n_clusters))
    member[order, parts] = 1.0      # one-hot column order[q] joins meta-cluster parts[q]
    total = np.bincount(parts, weights=pw, minlength=n_clusters)
    H = LabelGraph.of(ensemble, values, check_n_jobs(None)).matmat(member)
    H /= np.where(total > 0, total, 1.0)
    return _strongest(H, n_clusters, rng)


def _strongest(H, n_clusters, rng):
    labels = argmax_random_ties(H, rng)
    labels, moved = honour_n_clusters(labels, H, n_clusters)
    return labels, H, moved
