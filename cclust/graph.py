"""The graph toolkit of cclust's graph-based consensus functions, public for plugins.

CSPA, MCLA, HBGF (:mod:`cclust.consensus_functions.graph`), WOMC, WOSP, WOHB (:mod:`cclust.consensus_functions.woec`)
and the hypergraph plugin's HGPA build their graphs and cut them with what is here:

* the one METIS call, :func:`partition_graph` (and :func:`bipartite_partition` for graphs of
  objects and clusters), with :func:`integer_edge_weights`, the only place where similarities
  become integers;
* identical-row merging: :func:`identical_rows`, :func:`identical_label_rows`,
  :func:`cap_groups`;
* the canonical order of cluster vertices, :func:`canonical_cluster_order`, and the one-hot
  matrix in that order, :func:`one_hot_in_order`;
* cluster sizes: the ``sizes`` option of every graph method (:func:`cut_with_sizes`,
  :func:`estimate_clusters`, :func:`size_weights`, :func:`choose_sizes`);
* shared argument checks (:func:`check_graph_inputs`, :func:`check_sizes`, ...) and
  :func:`honour_n_clusters`, which fills parts a cut left empty;
* the spectral cut of a bipartite graph, the transfer cut :func:`tcut` (Li et al. 2012), for
  the methods whose papers cut their object-cluster graphs with it instead of METIS;
* the cut of a SciPy dendrogram at exactly K clusters, :func:`cut_dendrogram`, for the
  hierarchical methods (EAC, WEAC, PTA, the Monti resampling).

The METIS call (:func:`partition_graph`)
-----------------------------------------
METIS takes positive integer edge weights on a symmetric graph without self-loops. Every graph
method here hands :func:`partition_graph` a symmetric non-negative float matrix and the function

1. drops the diagonal (self-loops) and symmetrises (``(S + S.T) / 2``: a no-op on the symmetric
   matrices the methods build, a guard against round-off),
2. scales the weights so that the largest becomes :data:`EDGE_WEIGHT_RESOLUTION` and rounds them
   to integers — the **only** place where similarities become integers. The partition therefore
   does not depend on the scale of the similarities; weights below half a unit of resolution
   (``max / 20000``) round to zero and
3. zero edges are dropped, so the graph METIS sees has exactly the positive integer edges;
4. calls ``pymetis.part_graph`` (with vertex weights when the caller merged identical vertices,
   see :func:`bipartite_partition`) with ``options.seed`` drawn from ``random_state`` and the balance
   tolerance ``ufactor`` (METIS's own default when None: 1 for recursive bisection, used for up to
   8 parts, 30 for k-way beyond). METIS is serial, so the labels are identical for any number of
   threads and are a function of the graph and the seed alone.

Balance: METIS minimises the weighted edge cut subject to every part holding at most
``(1 + ufactor / 1000)`` times the average vertex weight. With every object weighing 1 (the
papers; ``sizes="equal"``) CSPA, HBGF, MCLA and the weighted-object methods cut large natural
clusters to balance the parts (blobs of 1,500/500/500/500 objects come back as four parts of
about 750, ARI 0.52), and a looser ``ufactor`` does not fix it: min-cut then cuts off small
slivers (one part holding 88% of a 100,000-object mixture at ``ufactor=1000``). cclust's
default ``sizes="auto"`` (see :func:`cut_with_sizes`) also cuts with every object weighted
inversely to the size of its cluster in a size-free first consensus (:func:`estimate_clusters`,
:func:`size_weights`), and keeps that cut when it separates less than a third of the
co-association the equal cut separates (:func:`choose_sizes`). MCLA and WOMC weight each meta-graph vertex by its cluster's size
(Strehl & Ghosh), so their meta-clusters cover about equal numbers of objects; ``balance="clusters"``
gives unit weights instead (ClusterEnsembles), which suits data with very unequal classes.

Order and name invariance: cluster vertices (MCLA, HBGF, WOMC, WOHB) are put in a canonical order
that depends on the clusters' members only (:func:`canonical_cluster_order`), so renaming the
clusters of a partition or reordering the partitions yields the same graph and the same labels.
"""
import numpy as np
import scipy.sparse as sp

from cclust.ensemble import as_ensemble, identical_label_rows, number_by_first
from cclust._linkage import cut_dendrogram
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.validation import (address_space_left, available_cores, busy_elsewhere, check_int, check_random_state,
                               format_bytes, require_address_space, require_memory)

__all__ = ["EDGE_WEIGHT_RESOLUTION", "BALANCES", "MERGE_CAP_DIVISOR", "SIZES", "AUTO_CUT_RATIO",
           "ESTIMATED_UFACTOR", "PARTS_PER_CLUSTER", "SIZE_WEIGHT_UNIT", "check_graph_inputs",
           "check_ufactor", "check_balance", "check_n_neighbors", "dense_graph_bytes", "metis_bytes",
           "check_dense_budget",
           "canonical_cluster_order", "integer_edge_weights", "partition_graph", "honour_n_clusters",
           "argmax_random_ties", "top_neighbor_graph", "meta_graph", "meta_cluster", "mix64",
           "identical_rows", "cap_groups", "bipartite_partition", "merge_cap", "partition_bipartite_groups",
           "bipartite_affinity", "has_empty_part", "identical_label_rows", "number_by_first",
           "one_hot_in_order", "hbgf_graph", "check_sizes", "separated_coassociation", "choose_sizes",
           "estimate_clusters", "size_weights", "object_size_weights", "cut_with_sizes", "TransferCut", "tcut", "one_blas_thread", "blas_team", "BLAS_TEAM_FROM", "cut_dendrogram",
           "TCUT_DENSE_MAX"]

#: Integer edge weight METIS receives for the heaviest edge of a graph; the others are scaled in
#: proportion and rounded (see the module docstring).
EDGE_WEIGHT_RESOLUTION = 10_000

#: Rows of the similarity computed at once by the sparse (nearest-neighbour) routes.
_CHUNK_ROWS = 256


# -- shared checks ------------------------------------------------------------------------------

def check_graph_inputs(ensemble, n_clusters, name="ensemble"):
    """Validate an ensemble and K for a graph method; returns (Ensemble, K)."""
    ensemble = as_ensemble(ensemble, name)
    n = ensemble.n_samples
    if n < 2:
        raise ValidationError(f"{name} must label at least 2 objects to be partitioned, got {n}.")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=n)
    if (ensemble.n_clusters <= 1).all():
        raise ValidationError(
            f"{name}: every partition puts all objects in one cluster, so the graph carries no "
            "information to cut; generate partitions with at least two clusters."
        )
    return ensemble, n_clusters


def check_ufactor(ufactor):
    return check_int(ufactor, "ufactor", low=1, high=100_000, allow_none=True)


#: What METIS balances between MCLA/WOMC meta-clusters (see :func:`mcla`).
BALANCES = ("clusters", "objects")


def check_balance(balance):
    if balance not in BALANCES:
        raise ValidationError(f"balance must be 'clusters' or 'objects', got {balance!r}.")
    return balance


def check_n_neighbors(n_neighbors, n):
    return check_int(n_neighbors, "n_neighbors", low=1, high=max(1, n - 1), allow_none=True)


def _idx_bytes():
    try:
        from pymetis._internal import _idx_type_width
        return int(_idx_type_width()) // 8
    except (ImportError, AttributeError):  # older PyMetis builds: assume 64-bit idx_t
        return 8


def dense_graph_bytes(n, itemsize=4):
    """Bytes a dense similarity of n objects and its METIS graph need at the peak.

    ``itemsize + 24`` bytes a pair: the dense matrix, and at most 24 bytes a pair of its sparse
    copies and METIS's arrays at any one time (the RSS high-water mark of CSPA's dense route,
    float32: 26.3 and 22.8 bytes a pair at n = 1000 and 2000; counting every copy and METIS's
    arrays as alive together, 44 bytes, refused graphs that fit).
    """
    return n * n * (itemsize + 24)


def metis_bytes(n_vertices, n_entries):
    """Address space METIS maps at most to partition a graph: 16 idx_t per vertex and per
    adjacency entry (both directions of every edge). The least limit under which METIS 5.1
    succeeded was 2.5-2.7 of them per entry on dense graphs and 10-12.2 on sparse random and
    clustered ones of 2 * 10^4 to 10^5 vertices (its coarser graphs keep most edges there)."""
    return 16 * (int(n_vertices) + int(n_entries)) * _idx_bytes()


def check_dense_budget(n, what, max_bytes, itemsize=4, alternative=None):
    if alternative is None:
        alternative = ("pass n_neighbors=... (e.g. 30) for the sparse route that keeps each object's "
                       "strongest neighbours")
    require_memory(dense_graph_bytes(n, itemsize), f"the dense {what} of {n} objects and its METIS graph",
                   alternative, max_bytes)


#: The scalable route named by CSPA's refusals.



def canonical_cluster_order(ensemble, identical="compute"):
    """A permutation of the one-hot columns that depends on the clusters' members only.

    Clusters are sorted by (first member, size, a 64-bit hash of the member set, partition
    weight); identical clusters compare equal and are interchangeable in every graph built here.
    The keys are scattered from the label matrix (no one-hot is formed), every group of
    identically labelled objects read once: its first object is its smallest, its members'
    keys are summed beforehand.

    ``identical`` is :func:`identical_label_rows` of the ensemble's labels (None when every
    row differs) if the caller has it already; ``"compute"`` computes it here.
    """
    groups = identical_label_rows(ensemble.labels) if isinstance(identical, str) else identical
    L = ensemble.labels
    n, r = L.shape
    n_c = int(ensemble.offsets[-1])
    keys = np.random.default_rng(0x9E3779B9).integers(0, 2**63 - 1, size=n, dtype=np.int64).view(np.uint64)
    if groups is None:
        firsts, multiplicity, group_keys = np.arange(n), None, keys
    else:
        firsts, inverse, multiplicity = groups
        L = L[firsts]
        group_keys = np.zeros(firsts.shape[0], dtype=np.uint64)
        np.add.at(group_keys, inverse, keys)  # uint64 sums wrap, as the sum over the members does
    columns = L + ensemble.offsets[:-1]
    if ensemble.has_missing:
        columns[L < 0] = n_c  # a bin past the clusters collects the missing labels
    columns = columns.reshape(-1)
    # ufunc.at is fast on 1-d operands of one shape only (broadcast values take a slow path).
    sizes = (np.bincount(columns, minlength=n_c + 1) if multiplicity is None else
             np.bincount(columns, weights=np.repeat(multiplicity.astype(np.float64), r), minlength=n_c + 1)
             .astype(np.int64))
    first = np.full(n_c + 1, n, dtype=np.int64)
    np.minimum.at(first, columns, np.repeat(firsts, r))
    member_hash = np.zeros(n_c + 1, dtype=np.uint64)
    np.add.at(member_hash, columns, np.repeat(group_keys, r))
    partition_weight = np.repeat(ensemble.weights, ensemble.n_clusters)
    return np.lexsort((partition_weight, member_hash[:n_c], sizes[:n_c], first[:n_c]))


# -- the METIS call ------------------------------------------------------------------------------

def integer_edge_weights(values, resolution=EDGE_WEIGHT_RESOLUTION):
    """Scale positive similarities so the largest is ``resolution`` and round them to integers.

    This is the one place where cclust turns similarities into METIS's integer weights.
    """
    values = np.asarray(values, dtype=np.float64)
    top = values.max() if values.size else 0.0
    if top <= 0:
        return np.zeros(values.shape, dtype=np.int64)
    return np.rint(values * (resolution / top)).astype(np.int64)


def partition_graph(similarity, n_parts, *, random_state=None, ufactor=None, symmetric=False,
                    vertex_weights=None, resolution=EDGE_WEIGHT_RESOLUTION):
    """Partition a weighted undirected graph into ``n_parts`` with METIS (PyMetis).

    Parameters
    ----------
    similarity : sparse matrix or ndarray of shape (n_vertices, n_vertices)
        Non-negative symmetric edge weights; the diagonal is ignored.
    n_parts : int
    random_state : int, Generator or None
        Source of METIS's seed.
    ufactor : int, default=None
        METIS balance tolerance in thousandths (None: METIS's default).
    symmetric : bool, default=False
        The caller guarantees a symmetric CSR matrix without diagonal (the bipartite graphs):
        skip the symmetrising pass.
    vertex_weights : array-like of int, default=None
        Positive integer weight of each vertex, counted by the balance constraint (None: all
        1). A vertex standing for m merged identical vertices has weight m.
    resolution : float, default=EDGE_WEIGHT_RESOLUTION
        Integer weight of the heaviest edge. A graph of merged vertices passes
        ``EDGE_WEIGHT_RESOLUTION`` times (its heaviest edge / the unmerged graph's heaviest
        edge), so that an edge of a vertex merging m identical ones weighs about m times the
        unmerged integer weight (exactly, when all partition weights are equal).

    Returns
    -------
    parts : ndarray of shape (n_vertices,), int64
        The part of each vertex (some parts may be empty).
    cut : float
        Weight of the edges cut, in the units of ``similarity``.
    """
    rng = check_random_state(random_state)
    if symmetric:
        S = sp.csr_matrix(similarity, dtype=np.float64)
        if S.nnz and S.data.min() < 0:
            raise ValidationError("similarity must be non-negative to be cut by METIS.")
        return _metis(S, n_parts, rng, ufactor, vertex_weights, resolution)
    C = sp.coo_matrix(similarity)
    off = (C.row != C.col) & (C.data != 0)
    row, col, data = C.row[off], C.col[off], C.data[off].astype(np.float64)
    if data.size and data.min() < 0:
        raise ValidationError("similarity must be non-negative to be cut by METIS.")
    # (S + S^T) / 2 without the diagonal, in one COO -> CSR conversion (duplicates summed).
    S = sp.csr_matrix((np.concatenate([data, data]) * 0.5,
                       (np.concatenate([row, col]), np.concatenate([col, row]))), shape=C.shape)
    del C, row, col, data
    return _metis(S, n_parts, rng, ufactor, vertex_weights, resolution)


def _metis(S, n_parts, rng, ufactor, vertex_weights=None, resolution=EDGE_WEIGHT_RESOLUTION):
    """METIS on a symmetric diagonal-free float CSR: integer weights, seed, ufactor."""
    import pymetis

    n = S.shape[0]
    seed = int(rng.integers(0, 2**31 - 1))
    if n_parts <= 1 or n <= n_parts:
        parts = np.zeros(n, dtype=np.int64) if n_parts <= 1 else np.arange(n, dtype=np.int64)
        return parts, _cut(S, parts)
    if not S.has_sorted_indices:
        S = S.sorted_indices()  # a copy: the caller's matrix is never reordered in place
    idx = np.int64 if _idx_bytes() == 8 else np.int32
    # METIS's arrays straight from S: at n = 1e6 the kNN graph has ~6e7 entries, so every
    # intermediate CSR copy costs gigabytes. Edges whose weight rounds to 0 are dropped.
    weights = integer_edge_weights(S.data, resolution)
    keep = weights != 0
    if keep.all():
        xadj = np.ascontiguousarray(S.indptr, dtype=idx)
        adjncy = np.ascontiguousarray(S.indices, dtype=idx)
        eweights = weights.astype(idx, copy=False)
    else:
        kept_before = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
        xadj = np.ascontiguousarray(kept_before[S.indptr], dtype=idx)
        adjncy = np.ascontiguousarray(S.indices[keep], dtype=idx)
        eweights = np.ascontiguousarray(weights[keep], dtype=idx)
        del kept_before
    del weights, keep
    require_address_space(metis_bytes(n, int(xadj[-1])), f"METIS on a graph of {n} vertices and {int(xadj[-1])} "
                          "edge entries", "use a method with a smaller graph (kcc, or a sparse route)")
    options = pymetis.Options(seed=seed)
    if ufactor is not None:
        options.ufactor = int(ufactor)
    vweights = None if vertex_weights is None else np.ascontiguousarray(vertex_weights, dtype=idx)
    try:
        if hasattr(pymetis, "CSRAdjacency"):
            result = pymetis.part_graph(int(n_parts), adjacency=pymetis.CSRAdjacency(xadj, adjncy),
                                        eweights=eweights, vweights=vweights, options=options)
        else:  # PyMetis < 2025.2
            result = pymetis.part_graph(int(n_parts), xadj=xadj, adjncy=adjncy, eweights=eweights,
                                        vweights=vweights, options=options)
    except RuntimeError as exc:
        # METIS's own allocation failure reaches Python as "Caught an unknown exception!"; the
        # inputs were checked above, so under an address-space limit it is the memory
        left = address_space_left()
        if left is None:
            raise
        raise MemoryBudgetError(
            f"METIS failed on a graph of {n} vertices and {int(xadj[-1])} edge entries with "
            f"{format_bytes(left)} of address space left under the process's limit (RLIMIT_AS, ulimit -v): "
            f"{exc}; raise the limit, or use a method with a smaller graph (kcc, or a sparse route).") from exc
    del xadj, adjncy, eweights
    parts = np.asarray(result[1], dtype=np.int64)
    return parts, _cut(S, parts)


def _cut(S, parts):
    """Weight of the edges of the symmetric, diagonal-free CSR ``S`` joining different parts."""
    parts = parts.astype(np.int32, copy=False)  # half the bytes to gather; parts < n_parts
    own = np.repeat(parts, np.diff(S.indptr))
    return float(S.data[own != parts[S.indices]].sum() / 2.0)


# -- helpers shared with woec.py -----------------------------------------------------------------

def honour_n_clusters(labels, affinity, n_clusters):
    """Fill parts a partitioner left without objects, so exactly ``n_clusters`` are used.

    For each empty part m (in order) the objects with the largest ``affinity[x, m] -
    affinity[x, label(x)]`` (ties kept together) move to m, never emptying the part they leave.
    Ren et al. (2017, sec. 3.3.1) accept fewer clusters than asked; cclust honours ``n_clusters`` instead and
    reports how many objects moved.
    """
    labels = np.array(labels, dtype=np.int64, copy=True)
    n = labels.shape[0]
    counts = np.bincount(labels, minlength=n_clusters)
    moved = 0
    for m in np.flatnonzero(counts == 0):
        gain = affinity[:, m] - affinity[np.arange(n), labels]
        gain = np.where(counts[labels] > 1, gain, -np.inf)
        best = gain.max()
        chosen = np.flatnonzero(gain >= best - 1e-12 * max(1.0, abs(best)))
        for x in chosen:
            if counts[labels[x]] > 1:
                counts[labels[x]] -= 1
                labels[x] = m
                counts[m] += 1
                moved += 1
    return labels, moved


def argmax_random_ties(scores, rng):
    """Row-wise argmax, exact ties broken at random (Ren et al. 2017, sec. 3.3.1: "Ties are broken randomly")."""
    top = scores.max(axis=1, keepdims=True)
    tied = scores >= top - 1e-12 * np.maximum(1.0, np.abs(top))
    priority = np.where(tied, rng.random(scores.shape), -1.0)
    return priority.argmax(axis=1)


def top_neighbor_graph(block, n, n_neighbors, *, chunk_rows=_CHUNK_ROWS):
    """Sparse symmetric graph keeping each object's ``n_neighbors`` strongest similarities.

    ``block(start, stop)`` returns the dense rows ``start:stop`` of the similarity. An edge is
    kept if either end counts the other among its strongest (union), with its exact weight.
    """
    rows, cols, vals = [], [], []
    k = n_neighbors
    for start in range(0, n, chunk_rows):
        stop = min(n, start + chunk_rows)
        S = np.array(block(start, stop), dtype=np.float32, copy=True)
        local = np.arange(stop - start)
        S[local, start + local] = -np.inf
        idx = np.argpartition(-S, k - 1, axis=1)[:, :k] if k < n - 1 else np.argsort(-S, axis=1)[:, :n - 1]
        rows.append(np.repeat(np.arange(start, stop), idx.shape[1]))
        cols.append(idx.reshape(-1))
        vals.append(np.take_along_axis(S, idx, axis=1).reshape(-1))
    G = sp.csr_matrix((np.concatenate(vals).astype(np.float64), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, n))
    G.data = np.maximum(G.data, 0.0)
    return G.maximum(G.T).tocsr()


def meta_graph(ensemble, object_weights=None, *, max_bytes=None):
    """The meta-graph of MCLA / WOMC: (weighted) Jaccard similarity between every two clusters.

    ``S_ij = sum_{x in C_i & C_j} w_x / sum_{x in C_i | C_j} w_x`` (Ren et al. 2017, eq. 5; binary Jaccard
    when ``object_weights`` is None), from the sparse one-hot as ``B^T diag(w) B``. Its entries
    (pairs of clusters sharing an object, up to (sum K_i)^2) are counted before it is formed and
    refused past ``max_bytes`` (the memory budget, :func:`cclust.validation.memory_budget`).

    Returns
    -------
    order : ndarray of shape (sum K_i,)
        The canonical order of the clusters (one-hot columns) used as vertices.
    S : scipy CSR matrix of shape (sum K_i, sum K_i)
        Similarities between the clusters in that order (diagonal 1, zero entries absent).
    """
    order, _, graph = _meta_graph_parts(ensemble, object_weights, max_bytes)
    return order, graph


def _meta_graph_parts(ensemble, object_weights, max_bytes):
    """The canonical cluster order, the one-hot ``B`` (CSC) in that order, and the meta-graph,
    refused past the budget before it is formed: :func:`meta_graph`, with ``B`` for
    :func:`meta_cluster`."""
    order = canonical_cluster_order(ensemble)
    B = one_hot_in_order(ensemble, order).tocsc()
    _require_meta_graph(B, max_bytes)
    return order, B, _jaccard_graph(B, object_weights)


#: Bytes per entry of the meta-graph at the peak of MCLA / WOMC: the Jaccard CSR (float64 value,
#: int32 index) and, in the symmetrising pass of :func:`partition_graph`, its COO, the
#: off-diagonal selection, the doubled coordinate arrays and the float64 CSR they become (twice
#: the entries), alive with it. Measured: 78-82 bytes an entry at 1.6 and 6.5 million entries.
_META_GRAPH_ENTRY_BYTES = 84


def _meta_graph_entries(B):
    """Entries of ``B^T B`` (pairs of clusters sharing an object, the diagonal included) for the
    one-hot ``B`` (CSC), counted without forming the product.

    Uses SciPy's own count of a sparse product's entries (the first pass of its SMMP product);
    where that is not available, the upper bound (sum K_i)^2."""
    n_c = B.shape[1]
    try:
        from scipy.sparse._sparsetools import csr_matmat_maxnnz
    except ImportError:  # pragma: no cover -- a SciPy without the helper: count every pair
        return n_c * n_c
    rows = B.tocsr()
    index = np.result_type(B.indices, rows.indices)
    return int(csr_matmat_maxnnz(n_c, n_c, B.indptr.astype(index, copy=False), B.indices.astype(index, copy=False),
                                 rows.indptr.astype(index, copy=False), rows.indices.astype(index, copy=False)))


def _require_meta_graph(B, max_bytes=None):
    """Refuse the meta-graph of the one-hot ``B`` past the memory budget, before it is formed."""
    entries = _meta_graph_entries(B)
    require_memory(entries * _META_GRAPH_ENTRY_BYTES,
                   f"the meta-graph of {B.shape[1]} clusters ({entries} pairs of clusters sharing objects)",
                   "use fewer or coarser basic partitions, or hbgf or kcc (no meta-graph)", max_bytes)


def _jaccard_graph(B, object_weights):
    """The (object-weighted) Jaccard similarities between the columns of the one-hot ``B``.

    Computed in the product's own arrays (its rows' indices sorted, as a COO -> CSR conversion
    leaves them), so the only other arrays of the size of the graph are its row numbers and the
    unions."""
    w = np.ones(B.shape[0]) if object_weights is None else np.asarray(object_weights, dtype=np.float64)
    Bw = sp.diags(w) @ B
    mass = np.asarray(Bw.sum(axis=0)).reshape(-1)    # sum of w over C_i
    graph = (B.T @ Bw).tocsr()                       # sum of w over C_i & C_j
    del Bw
    graph.sort_indices()
    n_c = B.shape[1]
    union = mass[np.repeat(np.arange(n_c), np.diff(graph.indptr))]
    union += mass[graph.indices]
    union -= graph.data
    positive = union > 0
    np.divide(graph.data, union, out=graph.data, where=positive)
    graph.data[~positive] = 0.0
    return graph


def meta_cluster(ensemble, n_clusters, object_weights, *, random_state, ufactor, method, balance="objects",
                 sizes="equal", max_bytes=None):
    """MCLA (object_weights None) or WOMC (Ren et al. 2017, eq. 5): meta-graph, METIS, strongest participation.

    ``balance="objects"`` gives every meta-graph vertex its cluster's size as METIS vertex
    weight (Strehl & Ghosh sec. 3.4), so that meta-clusters are balanced by the objects they
    cover; ``"clusters"`` gives unit weights (ClusterEnsembles), balancing their number of
    clusters. ``sizes="estimated"`` counts every object with its :func:`size_weights`: a
    cluster weighs the sum of its objects' weights ("objects") or their mean ("clusters").
    """
    rng = check_random_state(random_state)
    order, B, meta = _meta_graph_parts(ensemble, object_weights, max_bytes)
    n_c = B.shape[1]
    pw = np.repeat(ensemble.weights, ensemble.n_clusters)[order]

    def cut_graph(weights, tolerance):
        if weights is None:
            vertex_weights = None if balance == "clusters" else np.maximum(1, np.diff(B.indptr))
        else:
            mass = B.T @ weights.astype(np.float64)
            if balance == "clusters":
                mass = mass / np.maximum(1, np.diff(B.indptr))
            vertex_weights = np.maximum(1, np.rint(mass)).astype(np.int64)
        parts, cut = partition_graph(meta, n_clusters, random_state=rng, ufactor=tolerance,
                                     vertex_weights=vertex_weights)
        labels, H, moved = _participation(B, pw, parts, n_c, n_clusters, rng)
        return labels, cut, {"meta_labels": parts[np.argsort(order)], "association": H, "n_moved": moved,
                             "ufactor": tolerance, "balance": balance}

    labels, cut, extras = cut_with_sizes(ensemble, n_clusters, sizes, ufactor, rng, cut_graph)
    return labels, cut, extras


def _participation(B, pw, parts, n_c, n_clusters, rng):
    """MCLA's objects to meta-clusters: labels, the association H and the objects moved."""
    # Association of each object with each meta-cluster: the (partition-weighted) fraction of
    # the meta-cluster's clusters it belongs to (Strehl & Ghosh sec. 3.4; Ren et al. 2017, sec. 3.3.1).
    member = sp.csr_matrix((pw, (np.arange(n_c), parts)), shape=(n_c, n_clusters))
    total = np.asarray(member.sum(axis=0)).reshape(-1)
    H = np.asarray((B @ member).todense()) / np.where(total > 0, total, 1.0)
    labels = argmax_random_ties(H, rng)
    labels, moved = honour_n_clusters(labels, H, n_clusters)
    return labels, H, moved


def mix64(z):
    """SplitMix64's finaliser on uint64 arrays: every input bit affects every output bit."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def identical_rows(M):
    """Groups of identical rows of a CSR matrix with sorted indices, or None if all differ.

    Returns ``(first, inverse, counts)``: the first row of every group, in increasing order,
    the group of every row (``M[first][inverse]`` equals ``M``) and the group sizes. Rows are
    grouped by a 64-bit hash of their (column, value) entries, then every row is compared
    entry by entry with its group's first row; a hash collision (never seen, but possible)
    makes the function give up and return None, so a merge is always exact.
    """
    n, n_c = M.shape
    nnz = np.diff(M.indptr)
    if n < 2:
        return None
    keys = np.random.default_rng(0x5DEECE66D).integers(1, 2**63 - 1, size=n_c, dtype=np.int64).view(np.uint64)
    # One value per column (HBGF: the partition's weight) lets one gather hash every entry.
    col_value = np.zeros(n_c)
    col_value[M.indices] = M.data
    per_column = bool(np.array_equal(col_value[M.indices], M.data))
    if per_column:
        entry = mix64(keys ^ mix64(col_value.view(np.uint64)))[M.indices]
    else:
        entry = mix64(keys[M.indices] ^ mix64(np.ascontiguousarray(M.data, dtype=np.float64).view(np.uint64)))
    row_hash = np.zeros(n, dtype=np.uint64)
    full = nnz > 0
    if entry.size:
        row_hash[full] = np.add.reduceat(entry, M.indptr[:-1][full])
    _, first, inverse, counts = np.unique(row_hash, return_index=True, return_inverse=True, return_counts=True)
    if first.shape[0] == n:
        return None
    # Number the groups by first occurrence, so the merged graph keeps the objects' order.
    rank = np.empty_like(first)
    by_first = np.argsort(first, kind="stable")
    rank[by_first] = np.arange(first.shape[0])
    first, counts, inverse = first[by_first], counts[by_first], rank[inverse.reshape(-1)]
    rep = first[inverse]
    if not np.array_equal(nnz, nnz[rep]):
        return None
    row = np.repeat(np.arange(n), nnz)
    mirror = M.indptr[rep[row]] + (np.arange(M.indices.shape[0]) - M.indptr[row])
    if not np.array_equal(M.indices, M.indices[mirror]):
        return None
    if not per_column and not np.array_equal(M.data, M.data[mirror]):
        return None
    return first, inverse, counts


#: A merged vertex of identical objects weighs at most n / (MERGE_CAP_DIVISOR * n_clusters):
#: METIS balances the parts by vertex weight, and vertices heavy next to a part make a balanced
#: cut unreachable (one vertex of about 3,000 identical objects in a 4,800-object, 2-part problem
#: gave parts of 1,504 and 3,296 objects instead of about 2,400 each). With 64, parts stay within
#: METIS's own tolerance on such data; 8 to 32 still left them 4-12% off balance.
MERGE_CAP_DIVISOR = 64


def cap_groups(groups, cap):
    """Split groups of :func:`identical_rows` larger than ``cap`` into chunks of at most ``cap``.

    ``groups`` is ``(first, inverse, counts)`` or None (returned as is). Objects are assigned to
    the chunks of their group in object order, so the result is deterministic.
    """
    if groups is None:
        return None
    first, inverse, counts = groups
    if counts.max() <= cap:
        return groups
    n = inverse.shape[0]
    by_group = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(n, dtype=np.int64)
    rank[by_group] = np.arange(n) - np.repeat(starts, counts)
    key = inverse.astype(np.int64) * (int(counts.max()) // cap + 1) + rank // cap
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return first, inverse.reshape(-1), counts


def bipartite_partition(M, n_clusters, *, random_state, ufactor, object_weights=None):
    """Partition the bipartite graph [[0, M], [M.T, 0]] of objects and clusters (HBGF, WOHB).

    Objects with identical rows of ``M`` (the same clusters with the same weights) become one
    vertex of weight m (their number) whose edges weigh m times theirs: the cut and the
    balance of any partition keeping them together are those of the unmerged graph, and the
    graph METIS coarsens shrinks (letter: 20,000 objects, 13,912 distinct; birch1: 100,000,
    15,904). Merged objects always share a part, as the HBGF cut already favours. A group is
    merged into vertices of at most ``n / (MERGE_CAP_DIVISOR * n_clusters)`` objects each, so
    that METIS can still balance the parts as it does on the unmerged graph.

    ``object_weights`` (int, one per object; None: all 1) are the objects' vertex weights, e.g.
    :func:`size_weights`; a merged vertex weighs the sum of its objects', a cluster the mean
    of its members' (1 when all weigh 1).

    Returns the objects' labels (every one of the ``n_clusters`` used), the cut and the number
    of objects moved to fill parts that held only cluster vertices.
    """
    n = M.shape[0]
    M = sp.csr_matrix(M, dtype=np.float64)
    M.sort_indices()
    groups = cap_groups(identical_rows(M), merge_cap(n, n_clusters))
    G = M if groups is None else _scale_rows(M[groups[0]], groups[2])  # row selection keeps sorted indices
    labels, cluster_part, cut = partition_bipartite_groups(G, groups, M.data.max() if M.nnz else None, n_clusters,
                                                     random_state=random_state, ufactor=ufactor,
                                                     object_weights=object_weights)
    moved = 0
    if has_empty_part(labels, n_clusters):
        labels, moved = honour_n_clusters(labels, bipartite_affinity(M, cluster_part, n_clusters), n_clusters)
    return labels, cut, moved


def merge_cap(n, n_clusters):
    """Most objects one merged vertex may stand for: ``n / (MERGE_CAP_DIVISOR * n_clusters)``, at
    least 1, so that METIS can still balance the parts (see :func:`bipartite_partition`)."""
    return max(1, n // (MERGE_CAP_DIVISOR * n_clusters))


def _scale_rows(G, counts):
    """Multiply every entry of CSR row g by ``counts[g]`` (the merged objects' edges)."""
    G.data = G.data * np.repeat(counts.astype(np.float64), np.diff(G.indptr))
    return G


def partition_bipartite_groups(G, groups, top, n_clusters, *, random_state, ufactor, object_weights=None):
    """METIS on [[0, G], [G^T, 0]], G's rows being objects merged by ``groups`` (see
    :func:`bipartite_partition`) and its columns clusters.

    ``G`` is CSR with sorted indices; ``top`` is the heaviest edge of the unmerged graph;
    ``object_weights`` the (unmerged) objects' vertex weights or None (all 1).
    Returns the part of every object (unmerged), the part of every cluster and the cut.
    """
    m, n_c = G.shape
    if groups is None:
        resolution = EDGE_WEIGHT_RESOLUTION
        row_weights = None if object_weights is None else np.asarray(object_weights, dtype=np.int64)
    else:
        row_weights = (groups[2] if object_weights is None else
                       np.bincount(groups[1], weights=object_weights, minlength=m).astype(np.int64))
        # The unmerged graph's scale (heaviest single edge -> EDGE_WEIGHT_RESOLUTION), so that
        # a merged edge weighs about m times the unmerged integer weight.
        resolution = EDGE_WEIGHT_RESOLUTION * (G.data.max() / top) if top is not None else EDGE_WEIGHT_RESOLUTION
    if row_weights is None:
        vertex_weights = None
    elif object_weights is None:
        vertex_weights = np.concatenate([row_weights, np.ones(n_c, dtype=np.int64)])
    else:
        # A cluster weighs the mean of its objects' weights, each object counted by its edge
        # (its membership, WOHB): 1 when every object weighs 1. G's rows of merged objects
        # carry their count in the edges already, so the rows' mean weights are averaged.
        mean_weight = row_weights / (1.0 if groups is None else groups[2].astype(np.float64))
        edge_sum = G.T @ np.ones(m)
        mass = G.T @ mean_weight
        cluster_weights = np.maximum(1, np.rint(mass / np.where(edge_sum > 0, edge_sum, 1.0))).astype(np.int64)
        vertex_weights = np.concatenate([row_weights, cluster_weights])
    Gc = G.tocsc()  # SciPy's transpose visits the rows in order: every column comes out sorted
    Gc.sort_indices()
    # [[0, G], [G^T, 0]] assembled directly in CSR: object rows then cluster rows.
    nnz = G.nnz
    index = np.int32 if 2 * nnz + m + n_c < np.iinfo(np.int32).max else np.int64
    data = np.concatenate([G.data, Gc.data])
    indices = np.concatenate([G.indices, Gc.indices]).astype(index, copy=False)
    indices[:nnz] += m
    indptr = np.concatenate([G.indptr, Gc.indptr[1:]]).astype(index, copy=False)
    indptr[m + 1:] += nnz
    W = sp.csr_matrix((data, indices, indptr), shape=(m + n_c, m + n_c))
    W.has_sorted_indices = True
    parts, cut = partition_graph(W, n_clusters, random_state=random_state, ufactor=ufactor, symmetric=True,
                                 vertex_weights=vertex_weights, resolution=resolution)
    return (parts[:m] if groups is None else parts[:m][groups[1]]), parts[m:], cut


def bipartite_affinity(rows, cluster_part, n_clusters):
    """Weight of each row's clusters lying in each part: what :func:`honour_n_clusters` weighs
    when a part of the bipartite graph holds only clusters. Dense (rows x n_clusters), so
    formed only then."""
    n_c = cluster_part.shape[0]
    member = sp.csr_matrix((np.ones(n_c), (np.arange(n_c), cluster_part)), shape=(n_c, n_clusters))
    return np.asarray((rows @ member).todense())


def has_empty_part(labels, n_clusters):
    """Whether one of the parts ``0..n_clusters-1`` holds no object."""
    return bool(np.bincount(labels, minlength=n_clusters).min() == 0)


def one_hot_in_order(ensemble, order, rows=None, values=None):
    """``ensemble.one_hot()[rows][:, order]`` with sorted indices, built from the labels.

    Column j is cluster ``order[j]``; each row lists its clusters' positions in ``order``,
    sorted, so no sparse matrix is permuted and re-sorted. ``rows`` selects objects (all by
    default); ``values[j]`` is the entry of every object in column j (1.0 by default).
    """
    L = ensemble.labels if rows is None else ensemble.labels[rows]
    n_c = int(ensemble.offsets[-1])
    rank = np.empty(n_c, dtype=np.int32)
    rank[order] = np.arange(n_c, dtype=np.int32)
    R = rank[L + ensemble.offsets[:-1]]  # a missing label (-1) picks any rank: masked next
    if ensemble.has_missing:
        present = L >= 0
        R[~present] = n_c  # sorts after every rank
        R.sort(axis=1)
        lengths = present.sum(axis=1)
        indices = R[R < n_c]
    else:
        R.sort(axis=1)
        lengths = np.full(R.shape[0], R.shape[1])
        indices = R.reshape(-1)
    indptr = np.zeros(R.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    data = np.ones(indices.shape[0]) if values is None else np.asarray(values, dtype=np.float64)[indices]
    B = sp.csr_matrix((data, indices, indptr), shape=(R.shape[0], n_c))
    B.has_sorted_indices = True
    return B


def hbgf_graph(ensemble, n_clusters):
    """HBGF's merged bipartite graph straight from the label matrix.

    Equal to ``bipartite_partition``'s on ``ensemble.one_hot(weighted=True)[:, order]`` (same
    rows, columns, values and index order, so METIS gets the same input), without forming,
    permuting and re-sorting the one-hot: the rows of distinct objects are their clusters'
    canonical ranks, sorted.

    Returns ``(G, groups, weight_by_rank)``: G is the CSR of the (merged) objects' rows, its
    entries scaled by the group sizes; ``groups`` as :func:`cap_groups` returns it; and the
    partition weight of every column of G.
    """
    identical = identical_label_rows(ensemble.labels)
    order = canonical_cluster_order(ensemble, identical)
    weight_by_rank = np.repeat(ensemble.weights, ensemble.n_clusters)[order]
    groups = cap_groups(identical, merge_cap(ensemble.n_samples, n_clusters))
    G = one_hot_in_order(ensemble, order, rows=None if groups is None else groups[0], values=weight_by_rank)
    return (G if groups is None else _scale_rows(G, groups[2])), groups, weight_by_rank


# -- cluster sizes the ensemble suggests ---------------------------------------------------------

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


def check_sizes(sizes):
    if sizes not in SIZES:
        raise ValidationError(f"sizes must be 'auto', 'estimated' or 'equal', got {sizes!r}.")
    return sizes


def separated_coassociation(ensemble, labels):
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


def choose_sizes(ensemble, equal, estimated):
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


def estimate_clusters(ensemble, n_clusters, *, random_state=None, parts_per_cluster=PARTS_PER_CLUSTER):
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


def size_weights(labels, n_clusters=None):
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


def object_size_weights(ensemble, n_clusters, random_state):
    """Every object's vertex weight under the estimated sizes: :func:`size_weights` of
    :func:`estimate_clusters`."""
    return size_weights(estimate_clusters(ensemble, n_clusters, random_state=random_state), n_clusters)


def cut_with_sizes(ensemble, n_clusters, sizes, ufactor, rng, cut, *, admissible_equal=None):
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


# -- the transfer cut ----------------------------------------------------------------------------

#: :func:`tcut` decomposes the column graph densely (LAPACK) up to this many columns when forming
#: it costs little (at most ``TCUT_DENSE_MAX ** 2 * 50`` multiply-adds); beyond, ARPACK finds
#: the leading eigenvectors through products with B, without forming the column graph.
TCUT_DENSE_MAX = 2000


class TransferCut:
    """What :func:`tcut` returns.

    Attributes
    ----------
    labels : ndarray of shape (n_objects,), int64
        The part of every object (every row of B, or every object of ``groups``), 0..K-1, every
        part used, numbered in order of their first object.
    embedding : ndarray of shape (n_rows, min(K, n_columns))
        The row-normalised transferred eigenvectors, one row per row of B (per group).
    eigenvalues : ndarray of shape (min(K, n_columns),)
        The leading eigenvalues of the normalised column graph, in decreasing order.
    objective : float
        Within-cluster sum of squares of the k-means run kept (over the objects).
    n_iter : int
        Lloyd iterations of the k-means run kept.
    n_moved : int
        Objects moved into parts that k-means left empty (possible when K exceeds the number
        of distinct embedded rows).
    """

    __slots__ = ("labels", "embedding", "eigenvalues", "objective", "n_iter", "n_moved")

    def __init__(self, labels, embedding, eigenvalues, objective, n_iter, n_moved=0):
        self.labels, self.embedding, self.eigenvalues = labels, embedding, eigenvalues
        self.objective, self.n_iter, self.n_moved = objective, n_iter, n_moved


#: Below this many rows (and columns) of a dense BLAS product, its thread team costs CPU and saves
#: no wall time (see :func:`blas_team`).
BLAS_TEAM_FROM = 1024


def blas_team(size, threshold=BLAS_TEAM_FROM):
    """The BLAS thread setting for dense products on ``size`` x ``size`` matrices: one thread
    (:func:`one_blas_thread`) below ``threshold``, BLAS's own team from it on. OpenBLAS's
    second thread spins between calls: on two idle cores PTA's products at 805 microclusters
    took the same wall time with the team and twice the CPU time (0.23 s against 0.13 s);
    at 1,483 the team saved a sixth of the wall time. When the other cores are busy
    (:func:`cclust.validation.busy_elsewhere`) it is one thread at any size."""
    from contextlib import nullcontext

    # a team on a machine whose other cores are busy only adds a spinning thread
    busy = available_cores() - busy_elsewhere() < 2
    return nullcontext() if size >= threshold and not busy else one_blas_thread()


def one_blas_thread():
    """A context in which BLAS/LAPACK run on one thread (threadpoolctl, scikit-learn's
    dependency, when installed; else nothing changes), for the small dense eigenproblems of the
    spectral cuts. OpenBLAS's thread team spins for its share of the cores: on this two-core
    machine under a load of 6-12 the eigendecomposition of 871 clusters took 12.6 s with the
    team and 0.73 s on one thread (Huang et al. 2021's ECPCS cluster graph); on an idle machine
    the team would save at most a factor of two."""
    from contextlib import nullcontext

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return nullcontext()
    return threadpool_limits(1, user_api="blas")


def _column_graph(B, row_scale):
    """The dense column graph ``B^T diag(row_scale) B`` of a CSR matrix, summed one row after
    the other in row order by a compiled pass (``cclust._ext._uspec.cross_sums``; a tenth of
    the time of SciPy's sparse product at a million rows), so that the Dask path, which
    continues the same pass from row block to row block, adds the same floats in the same order."""
    from cclust._ext import _uspec

    n_cols = B.shape[1]
    W = np.zeros((n_cols, n_cols))
    _uspec.cross_sums(np.ascontiguousarray(B.indptr, dtype=np.int64), np.ascontiguousarray(B.indices, dtype=np.int64),
                      np.ascontiguousarray(B.data, dtype=np.float64), W, np.zeros(n_cols),
                      np.ascontiguousarray(row_scale, dtype=np.float64))
    return W


def _dense_leading_eigenvectors(W, inv_sqrt, n_vectors):
    """The ``n_vectors`` leading eigenpairs of ``D^-1/2 W D^-1/2`` (``inv_sqrt`` = D^-1/2 as a
    vector) for a dense column graph W, largest first (symmetrised against rounding)."""
    import scipy.linalg

    n_cols = W.shape[0]
    W = inv_sqrt[:, None] * W * inv_sqrt[None, :]
    W = (W + W.T) / 2.0
    with one_blas_thread():
        try:
            values, vectors = scipy.linalg.eigh(W, subset_by_index=(n_cols - n_vectors, n_cols - 1))
        except np.linalg.LinAlgError:  # MRRR can fail on the repeated eigenvalues of agreeing partitions
            values, vectors = np.linalg.eigh(W)
            values, vectors = values[n_cols - n_vectors:], vectors[:, n_cols - n_vectors:]
    return values[::-1], vectors[:, ::-1]


def _dense_leading_eigenvectors_by_rows(B, row_scale, inv_sqrt, n_vectors):
    """The leading eigenpairs of ``A^T A`` (``A = diag(row_scale)^1/2 B D^-1/2``) from the
    smaller ``A A^T`` when B has fewer rows than columns: ``A^T A v = l v`` with ``v = A^T u /
    sqrt(l)`` for every eigenpair ``(l, u)`` of ``A A^T`` with ``l > 0``. None when a wanted
    eigenvalue is not clearly positive (then the column graph is used)."""
    import scipy.linalg

    A = B.toarray() * np.sqrt(row_scale)[:, None] * inv_sqrt[None, :]
    G = A @ A.T
    G = (G + G.T) / 2.0
    n_rows = G.shape[0]
    with one_blas_thread():
        try:
            values, vectors = scipy.linalg.eigh(G, subset_by_index=(n_rows - n_vectors, n_rows - 1))
        except np.linalg.LinAlgError:
            return None
    if values[0] <= 1e-8 * max(values[-1], 1e-300):
        return None
    vectors = (A.T @ vectors) / np.sqrt(values)[None, :]
    return values[::-1], vectors[:, ::-1]


def _leading_eigenvectors(B, row_scale, col_degree, n_vectors):
    """The ``n_vectors`` leading eigenpairs of ``D^-1/2 B^T diag(row_scale) B D^-1/2`` (D the
    diagonal of ``col_degree``), largest first: dense when the column graph is small and cheap
    to form, else ARPACK on products with B."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    n_cols = B.shape[1]
    inv_sqrt = 1.0 / np.sqrt(np.where(col_degree > 0, col_degree, 1.0))
    row_nnz = np.diff(B.indptr).astype(np.float64)
    n_rows = B.shape[0]
    if n_vectors < n_rows < n_cols <= TCUT_DENSE_MAX:
        found = _dense_leading_eigenvectors_by_rows(B, row_scale, inv_sqrt, n_vectors)
        if found is not None:
            return found
    if n_cols <= TCUT_DENSE_MAX and float(row_nnz @ row_nnz) <= 50.0 * TCUT_DENSE_MAX ** 2:
        return _dense_leading_eigenvectors(_column_graph(B, row_scale), inv_sqrt, n_vectors)
    Bt = B.T.tocsr()

    def matvec(v):
        v = np.asarray(v).reshape(-1)
        return inv_sqrt * (Bt @ (row_scale * (B @ (inv_sqrt * v))))

    operator = LinearOperator((n_cols, n_cols), matvec=matvec, dtype=np.float64)
    # A fixed start vector (the leading eigenvector of a connected graph): ARPACK is then
    # deterministic, and invariant to the order of the columns.
    v0 = np.sqrt(np.maximum(col_degree, 0.0)) + 1e-3
    values, vectors = eigsh(operator, k=n_vectors, which="LA", v0=v0 / np.linalg.norm(v0), tol=0.0)
    order = np.argsort(-values, kind="stable")
    return values[order], vectors[:, order]


def _row_block(B, start, stop):
    """Rows ``start:stop`` of the CSR matrix B, built from slices of B's arrays (any copy is
    NumPy's, whose failed allocation is a MemoryError). SciPy's own row slicing collects the
    entries in C++ vectors, and their failed allocation under an address-space limit ended
    the process (SIGSEGV, SciPy 1.17)."""
    stop = min(stop, B.shape[0])
    lo, hi = B.indptr[start], B.indptr[stop]
    return sp.csr_matrix((B.data[lo:hi], B.indices[lo:hi], B.indptr[start:stop + 1] - lo),
                         shape=(stop - start, B.shape[1]))


def _transfer_rows(B, ncut_vectors, row_degree):
    """Step 2-3 of :func:`tcut` for the rows of B: ``diag(1/d_x) B V``, each row normalised to
    unit length (plus 1e-10). Computed in blocks of 32,768 rows (every row's floats are those of
    the whole-matrix expression: each row is reduced alone), so that no n x K temporary beyond
    the result is formed; a row block of B gives the same rows as the whole of B."""
    n = B.shape[0]
    B = sp.csr_matrix(B)
    out = np.empty((n, ncut_vectors.shape[1]))
    step = 1 << 15
    for start in range(0, n, step):
        part = (_row_block(B, start, start + step) @ ncut_vectors) / row_degree[start:start + step, None]
        part /= np.sqrt((part * part).sum(axis=1))[:, None] + 1e-10
        out[start:start + step] = part
    return out


def tcut(B, n_clusters, *, groups=None, random_state=None, n_init=3, max_iter=100, n_threads=None):
    """Transfer cut (Tcut; Li, Wu & Chang 2012) of the bipartite graph [[0, B], [B^T, 0]].

    The spectral (normalised-cut) partition of a bipartite graph of objects (rows of B) and
    clusters or other features (columns), computed on the small side only (Li et al. 2012,
    sec. 3-4): with ``d_x`` the weighted degree of object x and ``W = B^T diag(1/d_x) B`` the
    column graph that the transfer induces,

    1. the K leading eigenvectors of ``D^-1/2 W D^-1/2`` (D the degrees of W), scaled by
       ``D^-1/2``, are the normalised-cut eigenvectors on the columns;
    2. they are transferred to the objects, ``diag(1/d_x) B`` times them;
    3. each object's row is normalised to unit length (plus 1e-10) and k-means with K
       clusters (k-means++ seeding, ``n_init`` runs, at most ``max_iter`` Lloyd iterations,
       the run of lowest within-cluster sum of squares kept) gives the parts.

    The cost is that of the column side: a dense eigen-decomposition up to
    :data:`TCUT_DENSE_MAX` columns, else Lanczos (ARPACK) on products with B, never an
    object x object matrix; k-means on an n x K embedding. Objects without any edge (``d_x =
    0``) get ``d_x = 1e-10``, as in the authors' code.

    Parameters
    ----------
    B : sparse matrix or ndarray of shape (n_rows, n_columns)
        Non-negative cross-affinities; every column needs a positive sum.
    n_clusters : int
        K, in [1, n_objects]. ``min(K, n_columns)`` eigenvectors are used; parts k-means
        leaves empty (K above the number of distinct embedded rows) are filled with the objects
        closest to their centres, as :func:`honour_n_clusters` does.
    groups : tuple or None, default=None
        ``(first, inverse, counts)`` as :func:`identical_label_rows` returns it when the rows
        of B stand for groups of identical objects (row g for ``counts[g]`` of them): the
        column graph counts row g ``counts[g]`` times and the parts are returned per object
        (``labels[x]`` is the part of row ``inverse[x]``). Exactly the cut of the unmerged graph.
    random_state : int, Generator or None
        Seeds k-means.
    n_init : int, default=3
    max_iter : int, default=100
    n_threads : int, default=None
        Threads of the k-means passes; the labels do not depend on it.

    Returns
    -------
    TransferCut
        ``labels`` of the objects, the ``embedding`` of the rows, the ``eigenvalues``, the
        k-means ``objective`` and ``n_iter``.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.graph import tcut
    >>> B = np.array([[1, 0, 1, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 1, 0, 1.0]])
    >>> tcut(B, 2, random_state=0).labels.tolist() in ([0, 0, 1, 1], [1, 1, 0, 0])
    True
    """
    from cclust import _engine
    from cclust._lloyd import best_of_restarts
    from cclust.validation import check_n_threads

    B = sp.csr_matrix(B, dtype=np.float64)
    n_rows, n_cols = B.shape
    if B.nnz and (B.data.min() < 0 or not np.isfinite(B.data).all()):
        raise ValidationError("B must hold finite non-negative affinities to be cut by tcut.")
    n_objects = n_rows if groups is None else int(np.asarray(groups[1]).shape[0])
    n_clusters = check_int(n_clusters, "n_clusters", low=1, high=max(1, n_objects))
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    rng = check_random_state(random_state)
    n_threads = check_n_threads(n_threads)
    counts = np.ones(n_rows) if groups is None else np.asarray(groups[2], dtype=np.float64)
    if counts.shape[0] != n_rows:
        raise ValidationError(f"groups describe {counts.shape[0]} rows, but B has {n_rows}.")
    row_degree = np.asarray(B.sum(axis=1)).reshape(-1)
    row_degree[row_degree == 0] = 1e-10
    col_degree = B.T @ (counts * 1.0)          # W 1 = B^T diag(c / d) B 1 = B^T c
    values, vectors = _leading_eigenvectors(B, counts / row_degree, col_degree, min(n_clusters, n_cols))
    ncut_vectors = vectors / np.sqrt(np.where(col_degree > 0, col_degree, 1.0))[:, None]
    embedding = _transfer_rows(B, ncut_vectors, row_degree)
    X = embedding if groups is None else embedding[groups[1]]
    space = _engine.MixedSpace.dense(X)

    def one_run(_):
        seeds = _engine.seed_objects(space, n_clusters, "k-means++", rng, n_threads, n_trials=1)
        return _engine.dense_lloyd(X, seeds, max_iter, n_threads)  # = labels_from_seeds + lloyd, bit for bit

    best, _ = best_of_restarts(one_run, n_init)
    labels, moved = best.labels, 0
    if has_empty_part(labels, n_clusters):
        closeness = -((X[:, None, :] - best.dense_centers[None, :, :]) ** 2).sum(axis=2)
        labels, moved = honour_n_clusters(labels, closeness, n_clusters)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty_like(first)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    labels = rank[inverse.reshape(-1)].astype(np.int64)  # parts numbered by their first object
    return TransferCut(labels, embedding, values, float(best.objective), best.n_iter, moved)
