"""Weighted-object ensemble clustering (WOEC; Ren, Domeniconi, Zhang & Yu, KAIS 2017).

Objects the ensemble disagrees about get large weights (one-shot, Ren et al. 2017, sec. 3.2, eq. 1-4), and
three consensus functions use them (Ren et al. 2017, sec. 3.3):

* :func:`womc` — MCLA whose meta-graph uses the object-weighted Jaccard similarity (eq. 5);
* :func:`wosp` — object graph of averaged cosine similarities between soft memberships computed
  from weighted ("shifted") cluster centres (eq. 6-11);
* :func:`wohb` — bipartite object-cluster graph weighted by those memberships (eq. 12);

plus :func:`wokmeans`, k-means whose centres are object-weighted means (Algorithm 4, eq. 13).
Every graph is cut by the METIS call of :mod:`cclust.graph`.

Choices where Ren et al. (2017) are open to more than one reading
-----------------------------------------------------------------
* ``t`` of eq. 7, per base clustering: "the average of the squared Euclidean distances between
  the data and the weighted means" (sec. 5) — taken between each object and the weighted centre
  of its own cluster (the objects labelled by that clustering). The other reading, over every
  object and every centre, gives a wider t and softer memberships; on Toy1-2 (R = 40, 10 runs)
  it reaches WOSP/WOHB ARI 0.933/0.927 and 0.986/0.987, the own-centre reading 0.946/0.945 and
  0.995/0.998, against Ren et al.'s (2017) 0.944/0.922 and 0.988/0.996 (Table 2), so the experiments support
  the own-centre reading.
* Partition weights (not in Ren et al. 2017): the co-association of eq. 1 and the averages of eq. 11 use the
  ensemble's partition weights (equal weights give Ren et al.'s method exactly); WOHB scales partition r's
  memberships by its weight.
* Missing labels (not in Ren et al. 2017): A of eq. 1 is taken over the partitions labelling both objects;
  weighted centres (eq. 6) use the labelled members; memberships (eq. 8) are computed for every
  object from X, so objects missing from a partition still get a membership in it.
* WOMC may leave a meta-cluster without objects (Ren et al. 2017, sec. 3.3.1); cclust moves the objects closest
  to winning it so that exactly ``n_clusters`` clusters are returned (``extras["n_moved"]``).

The object weights (:func:`object_weights`) and memberships (:func:`memberships`) the four
methods share live in ``_object_weights``; they are read from here.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust import _engine
from cclust._lloyd import best_of_restarts
from cclust.validation import (
    check_distinct_rows,
    check_float,
    check_int,
    check_n_jobs,
    check_random_state,
    memory_budget,
    renamed_threads,
    require_memory,
)
from cclust.graph import (
    EDGE_WEIGHT_RESOLUTION,
    canonical_cluster_order,
    cap_groups,
    check_balance,
    check_graph_inputs,
    check_n_neighbors,
    check_sizes,
    check_ufactor,
    cut_with_sizes,
    has_empty_part,
    honour_n_clusters,
    merge_cap,
    meta_cluster,
    mix64,
    number_by_first,
    partition_bipartite_groups,
    partition_graph,
    symmetric_graph,
    top_neighbor_graph,
)
from cclust.errors import ConvergenceWarning, ValidationError
from cclust.graph._meta import refuse_meta_graph_on_sample
from cclust.base import declare
from cclust.result import ConsensusResult
from cclust.consensus_functions._object_weights import (
    DEFAULT_SMOOTHING,
    _check_smoothing,
    _check_t,
    _check_X,
    _MembershipModel,
    _resolve_object_weights,
    _weights_and_entries,
    memberships,
    object_weights,
)
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike


def _woec_result(labels, cut, method, w, extras):
    extras = dict(extras)
    extras["object_weights"] = w
    return ConsensusResult.from_labels(
        labels, objective=cut,
        objective_name="weighted edge cut of the METIS partition (lower is better)",
        method=method, extras=extras)


@declare(handles_missing=True, object_order="distribution")  # METIS sees clusters in first-member order
def womc(ensemble: EnsembleLike, n_clusters: int, *, object_weights: npt.ArrayLike | None = None,
         smoothing: float = DEFAULT_SMOOTHING, ufactor: int | None = None, balance: str = "objects",
         sizes: str = "auto", max_bytes: int | None = None, random_state: RandomStateLike = None) -> ConsensusResult:
    """Weighted-Object Meta Clustering (WOMC; Ren et al. 2017, sec. 3.3.1, Algorithm 1).

    MCLA with the object-weighted Jaccard similarity between clusters (eq. 5):
    ``S_ij = sum_{x in C_i & C_j} w_x / sum_{x in C_i | C_j} w_x``, w the one-shot object
    weights (eq. 1-4). The meta-graph is cut by METIS into ``n_clusters`` meta-clusters and each
    object goes to the meta-cluster it participates in most (ties at random). With all object
    weights equal this is exactly MCLA.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
        In [2, n_samples].
    object_weights : array-like of shape (n_samples,), default=None
        Positive object weights; None computes them with :func:`object_weights`.
    smoothing : float, default=0.01
        e of eq. 4.
    ufactor : int, default=None
        METIS balance tolerance (thousandths) of the meta-graph cut.
    balance : {"objects", "clusters"}, default="objects"
        What METIS balances between meta-clusters, as in :func:`cclust.consensus_functions.graph.mcla`:
        the objects their clusters hold (Strehl & Ghosh's vertex weights, the clusters' sizes)
        or their number of clusters (unit vertex weights, as ClusterEnsembles).
    sizes : {"auto", "estimated", "equal"}, default="auto"
        What the partitioner balances: "equal" is Ren et al. 2017 (every object counts 1);
        "estimated" weighs objects inversely to their estimated cluster's size; "auto" (not
        in the paper) picks one of the two cuts, so that a much larger cluster stays whole.
        See :func:`cclust.graph.cut_with_sizes`; ``extras["sizes_used"]`` says which was kept.
    max_bytes : int, default=None
        Memory budget of the meta-graph (see :func:`cclust.graph.meta_graph`) and, when labels
        are missing, of the object weights (see :func:`object_weights`).
    random_state : int, Generator or None

    Returns
    -------
    ConsensusResult
        ``extras["object_weights"]`` holds the weights used.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("subsample", X, 3, n_partitions=20, random_state=0)
    >>> womc(E, 3, random_state=0).n_clusters
    3
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    smoothing = _check_smoothing(smoothing)
    ufactor = check_ufactor(ufactor)
    balance = check_balance(balance)
    sizes = check_sizes(sizes)
    # The meta-graph's refusal first (a count on a sample of the objects), then one pass for
    # the object weights and the meta-graph's exact entries.
    refuse_meta_graph_on_sample(ensemble, max_bytes)
    entries = None
    if object_weights is None and not ensemble.has_missing:
        if max_bytes is not None:
            memory_budget(max_bytes)                    # validates the argument
        w, entries = _weights_and_entries(ensemble, smoothing)
    else:
        w = _resolve_object_weights(ensemble, object_weights, smoothing, max_bytes)
    labels, cut, extras = meta_cluster(ensemble, n_clusters, w, random_state=random_state,
                                       ufactor=ufactor, method="womc", balance=balance, sizes=sizes,
                                       max_bytes=max_bytes, entries=entries)
    return _woec_result(labels, cut, "womc", w, extras)


#: Bytes per object and cluster that WOSP's memberships take at once: the float64 memberships
#: and their copy in canonical column order (the float32 normalised rows Q come after the first
#: is freed).
_WOSP_MEMBERSHIP_BYTES = 16
#: Bytes per pair of objects of WOSP's dense route at its peak: the float32 similarity Q Q^T
#: (kept for a cut that leaves a part empty), METIS's symmetric float64 CSR made from it once
#: (:func:`cclust.graph.symmetric_graph`, 12 a pair) and, during each cut, METIS's integer
#: weights and adjacency arrays (24 a pair with 64-bit METIS indices). Measured (peak RSS over
#: the ensemble, 10 partitions, K = 4): 52 bytes a pair at n = 700, 50 at 1400, 40.5 at 3000
#: and 40.1 at 5000 (81 at the two largest when each cut made its own graph through coordinate
#: arrays of every pair).
_WOSP_DENSE_PAIR_BYTES = 42


def _canonical_memberships(X, ensemble, w, t):
    P, ts = memberships(X, ensemble, w, t=t)
    order = canonical_cluster_order(ensemble)
    return P[:, order], np.repeat(np.arange(ensemble.n_partitions), ensemble.n_clusters)[order], ts


@renamed_threads
@declare(requires_X=True, handles_missing=True)
def wosp(ensemble: EnsembleLike, n_clusters: int, *, X: npt.ArrayLike, t: float | None = None,
         object_weights: npt.ArrayLike | None = None, smoothing: float = DEFAULT_SMOOTHING,
         n_neighbors: int | None = None, neighbors: str = "exact", ufactor: int | None = None, sizes: str = "auto",
         max_bytes: int | None = None, random_state: RandomStateLike = None,
         n_jobs: int | None = None) -> ConsensusResult:
    """Weighted-Object Similarity Partitioning (WOSP; Ren et al. 2017, sec. 3.3.2, Algorithm 2).

    For each base clustering: weighted centres ``m_l = sum w_i x_i / sum w_i`` over the cluster
    (eq. 6, the "shifting centre technique"), ``d = exp(-||x - m_l||^2 / t)`` (eq. 7),
    memberships P(C_l | x) = d / sum d (eq. 8-9) and cosine similarities between membership
    vectors (eq. 10); the similarities are averaged over clusterings (eq. 11) and the object
    graph is cut by METIS. The similarity is one product Q Q^T of the row-normalised
    memberships (never a Python loop over pairs), in float32.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
        In [2, n_samples].
    X : array-like of shape (n_samples, n_features)
        The data the base clusterings were computed on (Ren et al. 2017 standardise it first).
    t : float, default=None
        Width of eq. 7; None: per clustering, the mean squared distance between its objects and
        the weighted centres of their own clusters (Ren et al. 2017, sec. 5; see the module docstring).
    object_weights : array-like of shape (n_samples,), default=None
        None computes them with :func:`object_weights`.
    smoothing : float, default=0.01
        e of eq. 4.
    n_neighbors : int, default=None
        None: the dense graph (refused past ``max_bytes``). An int: keep each object's
        ``n_neighbors`` most similar objects (union), computed in row chunks.
    neighbors : {"exact", "lsh"}, default="exact"
        How the sparse route finds the neighbours. "exact": every pair is scored, O(n^2 sum K_i)
        time. "lsh": the candidates of an object are its ``2 * n_neighbors`` strongest
        co-associations (:meth:`cclust.Ensemble.knn_coassociation`, linear time), scored by
        the exact WOSP similarity, of which the ``n_neighbors`` largest are kept: an
        approximation that assumes the WOSP neighbours of an object are among its
        co-association neighbours (both measure agreement of the clusterings; WOSP's soft
        memberships also link objects that no partition puts together, which this route
        drops). The memberships themselves take ``12 n sum K_i`` bytes, refused past
        ``max_bytes``. ``n_neighbors`` defaults to 30 with "lsh".
    ufactor : int, default=None
        METIS balance tolerance (thousandths).
    sizes : {"auto", "estimated", "equal"}, default="auto"
        What the partitioner balances: "equal" is Ren et al. 2017 (every object counts 1);
        "estimated" weighs objects inversely to their estimated cluster's size; "auto" (not
        in the paper) picks one of the two cuts, so that a much larger cluster stays whole.
        See :func:`cclust.graph.cut_with_sizes`; ``extras["sizes_used"]`` says which was kept.
    max_bytes : int, default=None
    random_state : int, Generator or None
    n_jobs : int, default=None
        Threads of ``neighbors="lsh"``; the labels do not depend on it.

    Returns
    -------
    ConsensusResult
        ``extras`` holds ``object_weights`` and ``t`` (one per clustering).

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("subsample", X, 3, n_partitions=20, random_state=0)
    >>> wosp(E, 3, X=X, random_state=0).n_clusters
    3
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    X = _check_X(X, ensemble)
    t = _check_t(t)
    smoothing = _check_smoothing(smoothing)
    ufactor = check_ufactor(ufactor)
    sizes = check_sizes(sizes)
    n = ensemble.n_samples
    if neighbors not in ("exact", "lsh"):
        raise ValidationError(f"neighbors must be one of ['exact', 'lsh'], got {neighbors!r}.")
    if neighbors == "lsh" and n_neighbors is None:
        n_neighbors = 30
    n_neighbors = check_n_neighbors(n_neighbors, n)
    memberships_bytes = _WOSP_MEMBERSHIP_BYTES * n * int(ensemble.offsets[-1])
    if n_neighbors is None:
        require_memory(_WOSP_DENSE_PAIR_BYTES * n * n + memberships_bytes,
                       f"the dense WOSP similarity of {n} objects, its METIS graph and the memberships", (
                           "pass n_neighbors=30, neighbors='lsh' for the sparse route on co-association "
                           "candidates, or use womc or hbgf (memory linear in n r)"), max_bytes)
    require_memory(memberships_bytes, f"the WOSP memberships of {n} objects",
                   "use fewer clusters per partition, or womc or hbgf (no memberships)", max_bytes)
    rng = check_random_state(random_state)
    w = _resolve_object_weights(ensemble, object_weights, smoothing, max_bytes)
    P, partition_of, ts = _canonical_memberships(X, ensemble, w, t)
    # Eq. 10-11 as one product: rows of each block scaled to unit norm, then by sqrt(weight).
    Q = np.empty_like(P, dtype=np.float32)
    for r in range(ensemble.n_partitions):
        cols = partition_of == r
        block = P[:, cols]
        Q[:, cols] = block / np.linalg.norm(block, axis=1, keepdims=True) * np.sqrt(ensemble.weights[r])
    dense = n_neighbors is None
    if n_neighbors is None:
        # The dense similarity is kept (4 bytes a pair) for the rare cut that leaves a part
        # empty; METIS's symmetric graph is made from it once for every cut.
        S = Q @ Q.T
        graph = symmetric_graph(S)
    elif neighbors == "lsh":
        graph = _candidate_similarity_graph(ensemble, Q, n_neighbors, rng, max_bytes, n_jobs)
    else:
        graph = top_neighbor_graph(lambda a, b: Q[a:b] @ Q.T, n, n_neighbors)

    def cut_graph(weights, tolerance):
        parts, cut = partition_graph(graph, n_clusters, random_state=rng, ufactor=tolerance, vertex_weights=weights,
                                     symmetric=dense)
        if np.unique(parts).shape[0] < n_clusters:
            affinity = sp.csr_matrix(S) if dense else graph
            indicator = sp.csr_matrix((np.ones(n), (np.arange(n), parts)), shape=(n, n_clusters))
            parts, moved = honour_n_clusters(parts, np.asarray((affinity @ indicator).todense()), n_clusters)
        else:
            moved = 0
        return parts, cut, {"n_moved": moved, "ufactor": tolerance}

    parts, cut, extras = cut_with_sizes(ensemble, n_clusters, sizes, ufactor, rng, cut_graph, max_bytes=max_bytes,
                                        n_jobs=n_jobs)
    return _woec_result(parts, cut, "wosp", w, dict(extras, t=ts, n_neighbors=n_neighbors, neighbors=neighbors))


def _candidate_similarity_graph(ensemble, Q, n_neighbors, rng, max_bytes, n_threads):
    """Each object's ``n_neighbors`` largest ``Q[x] . Q[y]`` among its co-association neighbours."""
    n = ensemble.n_samples
    C = sp.triu(ensemble.knn_coassociation(2 * n_neighbors, random_state=rng, max_bytes=max_bytes,
                                           n_jobs=n_threads), k=1).tocoo()
    rows, cols = C.row.astype(np.int64), C.col.astype(np.int64)
    sims = np.empty(rows.shape[0], dtype=np.float64)
    step = max(1, 2**22 // max(1, Q.shape[1]))
    for start in range(0, rows.shape[0], step):
        a, b = rows[start:start + step], cols[start:start + step]
        sims[start:start + step] = np.einsum("ij,ij->i", Q[a], Q[b], dtype=np.float64)
    # Both directions, then each row's n_neighbors largest (ties to the smaller column).
    r = np.concatenate([rows, cols])
    c = np.concatenate([cols, rows])
    v = np.concatenate([sims, sims])
    order = np.lexsort((c, -v, r))
    r, c, v = r[order], c[order], v[order]
    first = np.searchsorted(r, np.arange(n))
    rank = np.arange(r.shape[0]) - first[r]
    keep = (rank < n_neighbors) & (v > 0)
    G = sp.csr_matrix((v[keep], (r[keep], c[keep])), shape=(n, n))
    return G.maximum(G.T).tocsr()


@declare(requires_X=True, handles_missing=True)
def wohb(ensemble: EnsembleLike, n_clusters: int, *, X: npt.ArrayLike, t: float | None = None,
         object_weights: npt.ArrayLike | None = None, smoothing: float = DEFAULT_SMOOTHING, ufactor: int | None = None,
         sizes: str = "auto", max_bytes: int | None = None, random_state: RandomStateLike = None) -> ConsensusResult:
    """Weighted-Object Hybrid Bipartite graph partitioning (WOHB; Ren et al. 2017, sec. 3.3.3, Algorithm 3).

    The bipartite graph of n objects and sum K_i clusters with edge weight P(C_j | x_i)
    (eq. 12; the memberships of eq. 6-9 from the weighted centres) is cut by METIS into
    ``n_clusters`` parts; the objects keep their part. Partition r's edges are scaled by its
    weight (equal weights: exactly the WOHB of Ren et al. 2017).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
        In [2, n_samples].
    X : array-like of shape (n_samples, n_features)
    t : float, default=None
        Width of eq. 7 (see :func:`wosp`).
    object_weights : array-like of shape (n_samples,), default=None
    smoothing : float, default=0.01
    ufactor : int, default=None
        METIS balance tolerance (thousandths).
    sizes : {"auto", "estimated", "equal"}, default="auto"
        What the partitioner balances: "equal" is Ren et al. 2017 (every object counts 1);
        "estimated" weighs objects inversely to their estimated cluster's size; "auto" (not
        in the paper) picks one of the two cuts, so that a much larger cluster stays whole.
        See :func:`cclust.graph.cut_with_sizes`; ``extras["sizes_used"]`` says which was kept.
    max_bytes : int, default=None
        Memory budget: the graph's edges of non-zero METIS weight (about 128 bytes each at the
        peak) are counted first and refused past it (and, with missing labels, the object
        weights' rows). Before any pass over the n x sum K_i memberships, a lower bound of the
        edges (at least one a partition per distinct membership row, from the memberships in
        the partition with the fewest clusters) refuses a graph already far past the budget,
        saying "at least".
    random_state : int, Generator or None

    Returns
    -------
    ConsensusResult
        ``extras`` holds ``object_weights``, ``t`` and ``n_edges`` (the object-cluster edges
        METIS weighed).

    Notes
    -----
    An edge whose weight rounds to 0 among METIS's integers (below 1/20,000 of the heaviest) is
    not built, so the dense n x sum K_i memberships never exist: memory is O(n) plus the kept
    edges, which grow with how many clusters of a partition lie near an object (on blobs with
    50 partitions of up to sqrt(n) clusters, about 6-10 per partition).

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("subsample", X, 3, n_partitions=20, random_state=0)
    >>> wohb(E, 3, X=X, random_state=0).n_clusters
    3
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    X = _check_X(X, ensemble)
    t = _check_t(t)
    smoothing = _check_smoothing(smoothing)
    ufactor = check_ufactor(ufactor)
    sizes = check_sizes(sizes)
    rng = check_random_state(random_state)
    w = _resolve_object_weights(ensemble, object_weights, smoothing, max_bytes)
    _refuse_wohb_graph_on_bound(X, ensemble, w, t, max_bytes)
    graph = _MembershipGraph(_MembershipModel(X, ensemble, w, t), n_clusters)
    graph.require_memory(max_bytes)

    def cut_graph(weights, tolerance):
        labels, cut, moved = graph.partition(random_state=rng, ufactor=tolerance, object_weights=weights)
        return labels, cut, {"n_moved": moved, "ufactor": tolerance}

    labels, cut, extras = cut_with_sizes(ensemble, n_clusters, sizes, ufactor, rng, cut_graph, max_bytes=max_bytes)
    return _woec_result(labels, cut, "wohb", w, dict(extras, t=graph.model.ts, n_edges=graph.n_edges))


#: Bytes per kept object-cluster edge at WOHB's peak: the CSR rows (12), their CSC copy (12),
#: the symmetric bipartite CSR (24), METIS's integer arrays with their masks (about 40) and
#: METIS's own graph and coarsening levels. Measured: n = 8,000, 50 partitions, 1.2e6 edges,
#: tracemalloc peak 1.0e8 bytes and RSS high-water mark 1.3e8 over the import (~110 bytes an edge).
_WOHB_BYTES_PER_EDGE = 128


_WOHB_ADVICE = ("pass a smaller t (sharper memberships keep fewer edges), or use hbgf (the same graph with "
                "0/1 memberships, n r edges) or womc")

#: Relative margin of the lower bound's rounding test: the exact count's scale and membership
#: sums differ from the bound's by a few units in the last place, far less than this.
_BOUND_MARGIN = 1e-6


def _row_keys(width):
    """The random column keys of :func:`_row_hashes` (fixed: the same on every call)."""
    return np.random.default_rng(0x5DEECE66D).integers(1, 2**63 - 1, size=width, dtype=np.int64).view(np.uint64)


def _row_hashes(M, keys):
    """A 64-bit hash of each dense row of M from its entries' bits, zeros left out (a zero is no
    edge, as in the sparse rows); equal rows hash alike, and the sum wraps mod 2^64."""
    entry = mix64(keys[None, :] ^ mix64(np.ascontiguousarray(M).view(np.uint64)))
    entry[M == 0] = 0
    return entry.sum(axis=1, dtype=np.uint64)


def _wohb_edges_lower_bound(X, ensemble, w, t):
    """A lower bound of the edges :class:`_MembershipGraph` keeps, from the memberships in one
    base clustering s (the one with the fewest clusters) only: O(n K_s d) time, none of the
    passes over the n x sum K_i memberships.

    Why no graph keeps fewer edges (M the weighted memberships, R = EDGE_WEIGHT_RESOLUTION):

    1. An entry v of a vertex's row gets the METIS weight rint(v * R / top), top the heaviest
       entry of the unmerged rows (merged rows use the same scale), and is kept iff
       v R / top > 1/2. A membership is at most 1 (a quotient whose denominator is a sum of
       non-negative terms including the numerator; rounding is monotone), so top <= max_r w_r
       (w_r partition r's weight) and any entry with v R / max_r w_r > 1/2 is kept (tested with
       the margin :data:`_BOUND_MARGIN`).
    2. An object's memberships in clustering r sum to 1, so the largest is at least 1 / K_r and
       its entry of M at least w_r / K_r; a vertex of c merged objects carries c times their
       row. So every vertex keeps at least one edge in each clustering r with
       (w_r / K_r) R / max_r w_r > 1/2 (every clustering under equal weights and K_r < 20000).
    3. Objects with identical rows of M share a vertex (at most ``merge_cap`` objects a vertex,
       which only adds vertices), and rows whose blocks in clustering s differ are different
       rows, so there are at least as many vertices as distinct blocks; a vertex keeps at least
       the block's own kept entries in s. Blocks are told apart by a hash of their bits (the
       model computes a row with the same bits in any chunk); a collision joins two classes,
       which only lowers the count.

    Returns the sum, over the classes of equal hashes, of the fewest entries kept in s by a
    block of the class, plus, for each class, one edge for every other clustering of point 2.
    """
    weights = np.asarray(ensemble.weights, dtype=np.float64)
    sizes = np.asarray(ensemble.n_clusters, dtype=np.float64)
    heaviest = float(weights.max())
    if not heaviest > 0:
        return 0
    low_scale = EDGE_WEIGHT_RESOLUTION / heaviest
    half = 0.5 * (1.0 + _BOUND_MARGIN)
    sure = weights / sizes * low_scale > half
    s = int(np.argmin(ensemble.n_clusters))
    model = _MembershipModel(X, ensemble, w, t, partitions=[s])
    n, k = ensemble.n_samples, int(ensemble.n_clusters[s])
    keys = _row_keys(k)
    row_hash = np.empty(n, dtype=np.uint64)
    kept = np.empty(n, dtype=np.int64)
    for rows in _MembershipModel.chunks(n, k):
        block = model.block(rows, s) * weights[s]       # the bits of M's entries in clustering s
        row_hash[rows] = _row_hashes(block, keys)
        kept[rows] = np.count_nonzero(block * low_scale > half, axis=1)
    order = np.lexsort((kept, row_hash))                # within a hash, the fewest kept first
    _, first = np.unique(row_hash[order], return_index=True)
    others = int(sure.sum()) - int(sure[s])
    return int(kept[order][first].sum()) + first.shape[0] * others


def _refuse_wohb_graph_on_bound(X, ensemble, w, t, max_bytes):
    """Refuse WOHB's graph at once when :func:`_wohb_edges_lower_bound` already needs more than
    the budget; nothing is computed when even every object-cluster edge would fit."""
    budget = memory_budget(max_bytes)
    n, n_columns = ensemble.n_samples, int(ensemble.offsets[-1])
    if _WOHB_BYTES_PER_EDGE * n * n_columns <= budget:
        return
    bound = _wohb_edges_lower_bound(X, ensemble, w, t)
    if _WOHB_BYTES_PER_EDGE * bound > budget:
        require_memory(_WOHB_BYTES_PER_EDGE * bound,
                       f"the WOHB bipartite graph of {n} objects and {n_columns} clusters (at least {bound} "
                       "edges of non-zero weight, counted from the memberships in one base clustering)",
                       _WOHB_ADVICE, max_bytes, lower_bound=True)


class _MembershipGraph:
    """WOHB's bipartite graph (Ren et al. 2017, eq. 12) without the dense n x sum K_i memberships.

    METIS takes integer edge weights, and :func:`cclust.graph.partition_graph` rounds
    an edge lighter than half a unit of resolution (1/20,000 of the heaviest) to weight 0 and
    drops it, so the soft memberships give METIS far fewer edges than n sum K_i: an object
    keeps the clusters of each partition whose centres are near it. This class keeps only those
    edges, in row-chunked passes over the memberships (:class:`_MembershipModel`), and gives
    METIS exactly the graph, vertex weights and seed that the dense route gave it:

    1. hash every full row (and find the heaviest entry); objects with identical rows are
       merged into one vertex as :func:`cclust.graph.bipartite_partition` merges them
       (groups checked entry by entry, capped as there);
    2. count the edges whose integer weight is not 0, with the merged vertices' scaled weights
       and the same scale (:meth:`require_memory` refuses past the budget here, before
       anything of that size is allocated);
    3. build the CSR of those edges;
    4. after METIS, add the weight of the dropped cut edges to the cut (the objective is the cut
       of the whole graph, as before) and, if a part holds no object, compute the affinities
       :func:`cclust.graph.honour_n_clusters` needs from the full rows.

    Memory: O(n + kept edges + a chunk of rows); time: four to five membership passes.
    """

    def __init__(self, model, n_clusters):
        self.model = model
        self.n_clusters = n_clusters
        ensemble = model.ensemble
        self.n = ensemble.n_samples
        self.order = canonical_cluster_order(ensemble)
        self.column_weights = np.repeat(ensemble.weights, ensemble.n_clusters)[self.order]
        self.n_columns = self.order.shape[0]
        self.groups, self.top = self._group_identical_rows()
        if self.groups is None:
            self.vertices, self.counts = None, None
            self.scale = EDGE_WEIGHT_RESOLUTION / self.top
        else:
            self.vertices, self.counts = self.groups[0], self.groups[2].astype(np.float64)
            # As partition_bipartite_groups and integer_edge_weights compute it for the merged graph.
            heaviest = float((self.row_max[self.vertices] * self.counts).max())
            resolution = EDGE_WEIGHT_RESOLUTION * (heaviest / self.top)
            self.scale = resolution / heaviest
        self.row_max = None
        self.n_edges = None
        self._kept = None  # the CSR of the kept edges, built on the first partition only

    def _rows(self, rows):
        """Rows of the weighted memberships in canonical cluster order (the dense route's M)."""
        return self.model.rows(rows)[:, self.order] * self.column_weights[None, :]

    def _vertex_chunks(self):
        """(vertex slice, object rows, merge counts) of the graph's object vertices, in chunks."""
        m = self.n if self.vertices is None else self.vertices.shape[0]
        for chunk in _MembershipModel.chunks(m, self.n_columns):
            if self.vertices is None:
                yield chunk, chunk, None
            else:
                yield chunk, self.vertices[chunk], self.counts[chunk]

    def _weights(self, rows, counts):
        """Scaled values and METIS integer weights of the vertices' rows."""
        values = self._rows(rows)
        if counts is not None:
            values *= counts[:, None]
        return values, np.rint(values * self.scale)

    def _group_identical_rows(self):
        keys = _row_keys(self.n_columns)
        row_hash = np.empty(self.n, dtype=np.uint64)
        self.row_max = np.empty(self.n)
        for rows in _MembershipModel.chunks(self.n, self.n_columns):
            M = self._rows(rows)
            row_hash[rows] = _row_hashes(M, keys)
            self.row_max[rows] = M.max(axis=1)
        top = float(self.row_max.max())
        _, first, inverse, counts = np.unique(row_hash, return_index=True, return_inverse=True, return_counts=True)
        if first.shape[0] == self.n:
            return None, top
        first, inverse, counts = number_by_first(first, inverse.reshape(-1), counts)
        # Exact check: every row sharing a group is compared with its group's first row.
        shared = np.flatnonzero(counts[inverse] > 1)
        for chunk in _MembershipModel.chunks(shared.shape[0], 2 * self.n_columns):
            members = shared[chunk]
            if not np.array_equal(self._rows(members), self._rows(first[inverse[members]])):
                return None, top                    # a hash collision: merge nothing
        return cap_groups((first, inverse, counts), merge_cap(self.n, self.n_clusters)), top

    def require_memory(self, max_bytes):
        """Count the edges METIS will get and refuse before building them past the budget."""
        self.n_edges = 0
        for _, rows, counts in self._vertex_chunks():
            self.n_edges += int(np.count_nonzero(self._weights(rows, counts)[1]))
        need = _WOHB_BYTES_PER_EDGE * self.n_edges
        require_memory(
            need, f"the WOHB bipartite graph of {self.n} objects and {self.n_columns} clusters "
            f"({self.n_edges} edges of non-zero weight)", _WOHB_ADVICE, max_bytes)

    def _build(self):
        data, indices, lengths = [], [], []
        for _, rows, counts in self._vertex_chunks():
            values, weights = self._weights(rows, counts)
            keep = weights != 0
            r, c = np.nonzero(keep)                 # row-major: each row's columns sorted
            data.append(values[r, c])
            indices.append(c.astype(np.int32))
            lengths.append(keep.sum(axis=1))
        lengths = np.concatenate(lengths)
        indptr = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        G = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr),
                          shape=(lengths.shape[0], self.n_columns))
        G.has_sorted_indices = True
        return G

    def partition(self, *, random_state, ufactor, object_weights=None):
        """METIS on the kept edges; returns the objects' labels, the cut and the objects moved.

        ``object_weights`` are the objects' vertex weights (None: all 1), as in
        :func:`cclust.graph.bipartite_partition`."""
        if self._kept is None:  # sizes="auto" cuts the same graph twice: two membership passes saved
            self._kept = self._build()
        labels, cluster_part, cut = partition_bipartite_groups(self._kept, self.groups, self.top, self.n_clusters,
                                                         random_state=random_state, ufactor=ufactor,
                                                         object_weights=object_weights)
        # The dropped edges weigh nothing to METIS, but the cut is the whole graph's.
        for vertices, rows, counts in self._vertex_chunks():
            values, weights = self._weights(rows, counts)
            part = labels[rows]
            cut += float(values[(weights == 0) & (cluster_part[None, :] != part[:, None])].sum())
        moved = 0
        if has_empty_part(labels, self.n_clusters):
            member = sp.csr_matrix((np.ones(self.n_columns), (np.arange(self.n_columns), cluster_part)),
                                   shape=(self.n_columns, self.n_clusters))
            affinity = np.empty((self.n, self.n_clusters))
            for rows in _MembershipModel.chunks(self.n, self.n_columns):
                affinity[rows] = (sp.csr_matrix(self._rows(rows)) @ member).todense()
            labels, moved = honour_n_clusters(labels, affinity, self.n_clusters)
        return labels, cut, moved


_WOKMEANS_INITS = ("k-means++", "random")

#: Bytes per object at WOKmeans's peak besides the 8 d of its float64 copy of X: the object
#: weights' pass (its index of the objects, two row sums, the confusion and its scaled copy) and
#: the K-means passes' per-object arrays. Measured 74-76 bytes an object with d = 2 at 2 * 10^5
#: and 4 * 10^5 objects (figure 80, 1.06-1.08 times the peak).
_WOKMEANS_OBJECT_BYTES = 64


@declare(requires_X=True, handles_missing=True)
def wokmeans(ensemble: EnsembleLike, n_clusters: int, *, X: npt.ArrayLike, object_weights: npt.ArrayLike | None = None,
             smoothing: float = DEFAULT_SMOOTHING, init: str = "k-means++", n_init: int = 10, max_iter: int = 100,
             tol: float = 0.0, max_bytes: int | None = None, random_state: RandomStateLike = None,
             n_jobs: int | None = None) -> ConsensusResult:
    """Weighted-Object k-means (WOKmeans; Ren et al. 2017, sec. 3.4, Algorithm 4).

    k-means on X whose centres are the object-weighted means ``c_k = sum w_i x_i / sum w_i``
    (eq. 13), w the one-shot weights of the ensemble (eq. 1-4): centres move toward the
    objects that are hard to cluster. Registered as a consensus function taking ``X`` (not a
    generator) because its input is an ensemble plus the data and its output one partition,
    exactly the consensus contract; the ensemble only supplies the weights.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
        In [2, n_samples].
    X : array-like of shape (n_samples, n_features)
    object_weights : array-like of shape (n_samples,), default=None
    smoothing : float, default=0.01
    init : {"k-means++", "random"}, default="k-means++"
        Initial centres of each run: ``"k-means++"``, k-means++ seeding on X (Arthur &
        Vassilvitskii 2007, greedy variant as scikit-learn's); ``"random"``, k distinct objects
        drawn uniformly, as in Ren et al.'s Algorithm 4. The default differs from Ren et al.: random centres
        hit all of k well-separated groups with probability k!/k^k per run (3.8% for k = 5),
        so the runs keep merging two groups and splitting another.
    n_init : int, default=10
        Runs; the one with the smallest weighted sum of squared distances is kept. Ren et al. report
        single runs (``n_init=1``).
    max_iter : int, default=100
        Ren et al. (2017, sec. 5.4) use 100.
    tol : float, default=0.0
        A run stops when its labels repeat or the objective falls by less than ``tol`` times
        its previous value: the K-means engine's rule, which also re-seeds an empty cluster
        with the object costliest to its own centre, as every other K-means in cclust does.
    max_bytes : int, default=None
        Memory budget: the call asks it for ``n (64 + 8 d)`` bytes (its measured peak) before
        computing anything.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Threads of the K-means passes (None: every core; -1: every available core); the labels
        do not depend on it.

    Returns
    -------
    ConsensusResult
        ``objective`` is the weighted sum of squared distances to the centres; ``extras``
        holds ``object_weights`` and ``centers``.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("subsample", X, 3, n_partitions=20, random_state=0)
    >>> wokmeans(E, 3, X=X, random_state=0).n_clusters
    3
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    n = ensemble.n_samples
    X = _check_X(X, ensemble)
    smoothing = _check_smoothing(smoothing)
    if init not in _WOKMEANS_INITS:
        raise ValidationError(f"init must be one of {list(_WOKMEANS_INITS)}, got {init!r}.")
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    rng = check_random_state(random_state)
    require_memory(n * (_WOKMEANS_OBJECT_BYTES + 8 * np.shape(X)[1]),
                   f"wokmeans on {n} objects (object weights and K-means passes)",
                   "use fewer objects (a sample) or kcc, which reads the labels only", max_bytes)
    w = _resolve_object_weights(ensemble, object_weights, smoothing, max_bytes)
    check_distinct_rows(X, n_clusters)
    n_threads = check_n_jobs(n_jobs)
    space = _engine.MixedSpace.dense(X)
    weighted = space.with_weights(object_weights=w)

    def one_run(_):
        if init == "random":
            start = np.sort(rng.choice(n, size=n_clusters, replace=False))
        else:
            start = _engine.seed_objects(space, n_clusters, init, rng, n_threads)
        return _engine.lloyd(weighted, _engine.labels_from_seeds(weighted, start, n_threads), n_clusters,
                             max_iter=max_iter, tol=tol, n_threads=n_threads)

    best, _ = best_of_restarts(one_run, n_init)
    sse, labels, centres, n_iter, converged = (best.objective, best.labels, best.dense_centers,
                                               best.n_iter, best.converged)
    if not converged:
        import warnings

        warnings.warn(f"wokmeans stopped at max_iter={max_iter} before converging; raise max_iter.",
                      ConvergenceWarning, stacklevel=2)
    return ConsensusResult.from_labels(
        labels, objective=sse, objective_name="object-weighted sum of squared distances (lower is better)",
        n_iter=n_iter, converged=converged, method="wokmeans",
        extras={"object_weights": w, "centers": centres})
