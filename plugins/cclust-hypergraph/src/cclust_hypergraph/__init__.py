"""cclust-hypergraph: HGPA consensus clustering, cut by the Mt-KaHyPar hypergraph partitioner.

Registers ``hgpa`` through the ``cclust.consensus`` entry-point group. Nothing here is imported
by ``import cclust``; the registry imports this module (and Mt-KaHyPar) the first time the name
``hgpa`` is asked for.
"""
import threading
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from cclust.base import declare
from cclust.graph import (
    canonical_cluster_order, cap_groups, check_graph_inputs, check_sizes, cut_with_sizes, honour_n_clusters,
    identical_label_rows, identical_rows, one_hot_in_order)
from cclust.result import ConsensusResult
from cclust.validation import check_float, check_n_jobs, check_random_state, require_memory

from cclust_hypergraph._config import CONFIGS, config_path

__version__ = "0.2.0"
__all__ = ["hgpa", "build_hypergraph", "Hypergraph", "AUTO_FLOW_IMBALANCE", "HYPEREDGE_WEIGHT_RESOLUTION", "PRESETS"]

#: Integer weight of the heaviest hyperedge (a cluster of the heaviest partition); the others
#: are scaled in proportion and rounded, at least 1. Equal partition weights give weight 1000.
HYPEREDGE_WEIGHT_RESOLUTION = 1000

#: The configurations HGPA offers, all deterministic: the partition depends on the hypergraph
#: alone, not on the number of threads nor on their scheduling. ``cclust`` and ``cclust_fast``
#: are cclust's own (see :mod:`cclust_hypergraph._config`); the other two are Mt-KaHyPar's
#: presets of those names. ``auto`` picks one of cclust's by the imbalance tolerance.
PRESETS = {"auto": None, "cclust": None, "cclust_fast": None,
           "deterministic": "DETERMINISTIC", "deterministic_quality": "DETERMINISTIC_QUALITY"}
assert set(CONFIGS) <= set(PRESETS)

#: ``preset="auto"`` runs flow refinement (``cclust``) only for an ``imbalance`` above this,
#: HGPA's default: flows are what let a part grow past its average share to keep a natural
#: cluster whole, and within 5% of the average they leave the ARI unchanged at about twice the
#: time (letter and digits, docs/benchmarks.md).
AUTO_FLOW_IMBALANCE = 0.05

#: Peak bytes per pin (an object's membership in a hyperedge) of a call: the pins as Python lists
#: (Mt-KaHyPar's input), Mt-KaHyPar's own hypergraph and its coarser levels. Measured as the
#: resident-set peak of whole calls on ensembles of 20 noisy partitions of 8 to 40 clusters
#: (no identical rows): 260, 266 and 223 bytes a pin at 10^6, 2 * 10^6 and 4 * 10^6 pins.
HGPA_BYTES_PER_PIN = 270

_lock = threading.Lock()
_initializer = None


def _mtkahypar():
    """Mt-KaHyPar, initialised once per process with every available core (or
    ``CCLUST_NUM_THREADS``): the deterministic configurations give the same partition on any
    number of threads (checked on 1 and 2 threads in the tests), so threads only change the speed."""
    global _initializer
    import mtkahypar

    with _lock:
        if _initializer is None:
            _initializer = mtkahypar.initialize(check_n_jobs(None), False)
    return mtkahypar, _initializer


class Hypergraph(NamedTuple):
    """HGPA's hypergraph as handed to the partitioner.

    ``vertex_of[i]`` is object i's vertex; ``vertex_weights[v]`` the number of objects vertex v
    stands for; ``edges[e]`` the vertices of hyperedge e, which is cluster ``clusters[e]`` (an
    index into the one-hot's columns), and ``edge_weights[e]`` its integer weight.
    """
    vertex_of: np.ndarray
    vertex_weights: np.ndarray
    edges: list
    edge_weights: np.ndarray
    clusters: np.ndarray


def build_hypergraph(B, partition_weight, max_vertex_weight, rng, max_edge_size=None, identical=None,
                     object_weights=None):
    """HGPA's hypergraph of a one-hot matrix, objects with identical rows merged.

    Parameters
    ----------
    B : scipy.sparse.csr_matrix of shape (n_samples, n_hyperedges)
        Object-cluster incidence (ones) with sorted indices; column c is hyperedge c.
    partition_weight : ndarray of shape (n_hyperedges,)
        The weight of each hyperedge's partition. Scaled so the heaviest is
        :data:`HYPEREDGE_WEIGHT_RESOLUTION` and rounded, at least 1.
    max_vertex_weight : int
        A merged vertex weighs at most this much (a larger group of identical objects becomes
        several vertices), in the units of the vertex weights: objects, or ``object_weights``
        when given. HGPA passes ``imbalance * W / n_clusters`` (W: the total weight), the
        slack of a part: vertices no heavier than that can always be spread over the parts
        within ``(1 + imbalance)`` times the average (the lightest part, given the next vertex,
        never grows past the average plus one vertex), so merging never makes balance
        unreachable. A single object heavier than that stays one vertex.
    rng : numpy.random.Generator
        Draws the vertex numbering.
    max_edge_size : int or None
        The heaviest part the partitioner may return, for the cut objective (None: keep every
        hyperedge). A cluster of more objects than that is cut by every admissible partition,
        so it adds the same weight to every cut and is left out; the cut's minimisers do not
        change. A labelled object in none of the clusters kept keeps its smallest one (as
        harmless to the objective), so that no object is placed by the balance constraint
        alone. On letter (K = 26) this leaves 1,613
        of 2,600 hyperedges and 0.5 of 1.4 million pins, and halves the partitioner's time.
    identical : tuple or None
        ``identical_rows(B)`` if already known (for instance from
        :func:`cclust.graph.identical_label_rows`), else computed here.
    object_weights : ndarray of shape (n_samples,) of int, or None
        Every object's weight in the balance (None: 1 each). A vertex weighs the sum of its
        objects' weights, and ``max_edge_size`` compares a cluster's total weight.

    Returns
    -------
    Hypergraph

    Notes
    -----
    Objects in exactly the same clusters lie in exactly the same hyperedges, so one vertex
    weighing their number gives every partition that keeps them together the cut and the part
    weights of the unmerged hypergraph; Mt-KaHyPar balances parts by vertex weight. Merging
    shrinks the input Mt-KaHyPar coarsens (letter: 20,000 objects, 13,962 vertices; 2.0 to 1.4
    million pins) and halves its time there. The cap matters for quality too: HBGF's tighter
    cap (n / (64 K) objects) left birch1 (n = 100,000, K = 100) with 19,448 vertices of up to
    15 objects that Mt-KaHyPar's coarsening could hardly contract further (its limit there is
    25), and the cut rose from 72.6 to 86.6 (ARI 0.73 to 0.50, seed 0).
    """
    n = B.shape[0]
    groups = identical_rows(B) if identical is None else identical
    if object_weights is None:
        groups = cap_groups(groups, max(1, int(max_vertex_weight)))
    else:
        groups = _cap_weighted_groups(groups, np.asarray(object_weights, dtype=np.int64), int(max_vertex_weight))
    if groups is None:
        G, counts, vertex_of = B, np.ones(n, dtype=np.int64), np.arange(n)
    else:
        first, vertex_of, counts = groups
        G = B[first]
    if object_weights is not None:
        counts = np.bincount(vertex_of, weights=object_weights, minlength=G.shape[0]).astype(np.int64)
    # Vertex ids drawn from rng: Mt-KaHyPar's deterministic configurations depend on the
    # numbering, and ignore its global seed (version 1.7).
    numbering = rng.permutation(G.shape[0])
    weights = np.empty(G.shape[0], dtype=np.int64)
    weights[numbering] = counts
    Gc = G.tocsc()
    Gc.sort_indices()
    pins = numbering[Gc.indices]
    clusters = np.arange(Gc.shape[1]) if max_edge_size is None else _clusters_kept(B, max_edge_size, object_weights)
    edges = [pins[Gc.indptr[c]:Gc.indptr[c + 1]].tolist() for c in clusters]
    pw = np.asarray(partition_weight, dtype=np.float64)
    edge_weights = np.maximum(1, np.rint(pw / pw.max() * HYPEREDGE_WEIGHT_RESOLUTION)).astype(np.int64)
    return Hypergraph(numbering[vertex_of], weights, edges, edge_weights[clusters], clusters)


def _cap_weighted_groups(groups, weights, cap):
    """Split groups of identical objects so that no group weighs more than ``cap``.

    ``groups`` is ``(first, inverse, counts)`` or None; ``weights`` every object's integer
    weight. Within a group, objects of equal weight w go to chunks of ``max(1, cap // w)``
    objects in object order (objects of different weights never share a vertex), so the
    result is deterministic. Groups already within ``cap`` are returned as they are, so that
    unit weights give :func:`cclust.graph.cap_groups`'s groups.
    """
    if groups is None:
        return None
    _, inverse, _ = groups
    group_weight = np.bincount(inverse, weights=weights)
    w_min = np.full(group_weight.shape[0], np.iinfo(np.int64).max)
    np.minimum.at(w_min, inverse, weights)
    w_max = np.zeros(group_weight.shape[0], dtype=np.int64)
    np.maximum.at(w_max, inverse, weights)
    if group_weight.max() <= cap and np.array_equal(w_min, w_max):
        return groups
    n = inverse.shape[0]
    # Rank of every object among the objects of its group and weight, in object order.
    key = inverse.astype(np.int64) * (int(weights.max()) + 1) + weights
    by_key = np.argsort(key, kind="stable")
    _, start, size = np.unique(key[by_key], return_index=True, return_counts=True)
    rank = np.empty(n, dtype=np.int64)
    rank[by_key] = np.arange(n) - np.repeat(start, size)
    chunk = rank // np.maximum(1, cap // np.maximum(weights, 1))
    _, first, inverse, counts = np.unique(np.stack([key, chunk]), axis=1, return_index=True, return_inverse=True,
                                          return_counts=True)
    return first, inverse.reshape(-1), counts


def _clusters_kept(B, max_edge_size, object_weights=None):
    """The clusters (columns of B) of at most ``max_edge_size`` objects (total object weight),
    plus, for every labelled object in none of those, its smallest cluster (the first of equal
    ones)."""
    n, n_c = B.shape
    sizes = (np.bincount(B.indices, minlength=n_c) if object_weights is None else
             np.rint(B.T @ np.asarray(object_weights, dtype=np.float64)).astype(np.int64))
    keep = sizes <= max_edge_size
    row_length = np.diff(B.indptr)
    labelled = row_length > 0
    covered = np.bincount(np.repeat(np.arange(n), row_length), weights=keep[B.indices], minlength=n) > 0
    uncovered = labelled & ~covered
    if uncovered.any():
        # Per object, the least (size, column) of its clusters, as one integer key.
        key = sizes[B.indices].astype(np.int64) * n_c + B.indices
        smallest = np.minimum.reduceat(key, B.indptr[:-1][labelled])[uncovered[labelled]] % n_c
        keep[smallest] = True
    return np.flatnonzero(keep)


def _context(mtk, init, preset):
    """Mt-KaHyPar's context for ``preset``: a preset of its own, or a cclust configuration file."""
    if PRESETS[preset] is not None:
        # DETERMINISTIC_QUALITY exists from Mt-KaHyPar 1.5 on; older versions fall back to the plain one.
        return init.context_from_preset(getattr(mtk.PresetType, PRESETS[preset], mtk.PresetType.DETERMINISTIC))
    try:
        return init.context_from_file(config_path(preset))
    except Exception as exc:  # an Mt-KaHyPar version whose parameters differ from 1.5-1.7's
        raise RuntimeError(
            f"Mt-KaHyPar {getattr(mtk, '__version__', '')} rejected cclust's {preset!r} configuration ({exc}). "
            "Pass preset='deterministic_quality' (Mt-KaHyPar's own), or install mtkahypar 1.5 to 1.7."
        ) from exc


# The partition depends on the vertex numbering, hence on the objects' order: "distribution".
@declare(handles_missing=True, object_order="distribution")
def hgpa(ensemble, n_clusters, *, imbalance=0.05, objective="cut", preset="auto", sizes="auto", random_state=None,
         max_bytes=None):
    """HyperGraph Partitioning Algorithm (HGPA; Strehl & Ghosh, JMLR 3, 2002; Ren et al. 2017, sec. 2).

    Each cluster of each basic partition is a hyperedge joining its objects; the hypergraph is
    cut into ``n_clusters`` parts of nearly equal size minimising the weight of the hyperedges
    cut (Strehl & Ghosh used hMETIS; here Mt-KaHyPar, deterministic, on every available core).
    A hyperedge's weight is its partition's weight, scaled so the heaviest is
    :data:`HYPEREDGE_WEIGHT_RESOLUTION` and rounded (at least 1). Objects every partition labels
    alike are one vertex weighing their number (same cut, same balance), so they share a
    label; with the cut objective, clusters larger than any admissible part (cut whatever the
    partition) are left out of the hypergraph given to Mt-KaHyPar (see
    :func:`build_hypergraph`); ``objective`` still counts them.

    Mt-KaHyPar's deterministic algorithms ignore its global seed (``mtkahypar.set_seed``,
    version 1.7), so ``random_state`` acts through the vertex numbering instead: the vertices
    are handed to the partitioner in an order drawn from it, and the result is mapped back.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Missing labels (-1) are handled: an object missing from a partition is in none of its
        hyperedges.
    n_clusters : int
        In [2, n_samples]. A part left empty is filled with the objects most tied to it.
    imbalance : float, default=0.05
        Allowed imbalance epsilon: every part holds at most ``(1 + imbalance)`` times the
        average number of objects (hMETIS's UBfactor 5 of Strehl & Ghosh). HGPA's balance
        constraint makes it split large natural clusters; raise it for imbalanced data.
    objective : {"cut", "km1"}, default="cut"
        Cut-net (Strehl & Ghosh's hyperedge cut) or connectivity - 1 (what ClusterEnsembles
        asks KaHyPar for; higher ARI on digits, lower on letter, at 3-7x the time; see
        docs/benchmarks.md).
    preset : {"auto", "cclust", "cclust_fast", "deterministic_quality", "deterministic"}, default="auto"
        The partitioner's configuration; all give the same partition for any number of threads.
        ``cclust`` is Mt-KaHyPar's ``deterministic_quality`` preset coarsening to 40 K instead
        of 160 K vertices (:mod:`cclust_hypergraph._config`). ``cclust_fast`` also skips flow
        refinement and makes three cheaper choices (a cut about 0.5% larger on letter), for
        about half the time, but, like ``deterministic``, keeps the parts nearly
        equal whatever ``imbalance`` allows, so it cannot keep a large natural cluster whole
        (unless its objects are identical, hence merged).
        ``auto`` is ``cclust_fast`` for ``imbalance <= 0.05`` (where the two score about the
        same ARI on letter and digits) and ``cclust`` above (:data:`AUTO_FLOW_IMBALANCE`).
    sizes : {"auto", "estimated", "equal"}, default="auto"
        What the partitioner balances (see :func:`cclust.graph.cut_with_sizes`):
        "equal" is Strehl & Ghosh 2002 (parts of about n / K objects); "estimated" weighs every object
        inversely to the size of its cluster in a size-free first consensus
        (:func:`cclust.graph.estimate_clusters`), so parts of equal weight may be
        clusters of unequal size; "auto" (cclust's default, not in the paper) keeps the
        "estimated" partition only where it separates less than a third of the co-association
        the "equal" one does, and skips that second cut when no estimated cluster exceeds
        ``(1 + imbalance) n / K`` objects (the estimate is then a partition the equal cut may
        return; ``extras["estimated_cut_skipped"]``). ``imbalance`` applies in every case.
    random_state : int, Generator or None
        Draws the order in which the vertices are numbered for Mt-KaHyPar.
    max_bytes : int, default=None
        Memory budget (default: ``CCLUST_MEMORY_BUDGET`` or 2 GiB). The hypergraph takes about
        :data:`HGPA_BYTES_PER_PIN` bytes per pin (an object in a cluster; objects labelled
        alike by every partition count once): about 2.6 GB at 10^6 objects x 10 partitions.
        A call that would need more refuses with MemoryBudgetError before building it.

    Returns
    -------
    ConsensusResult
        ``objective`` is the weighted hyperedge cut (in partition-weight units, lower is
        better).

    Examples
    --------
    >>> from cclust_hypergraph import hgpa
    >>> labels = [[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1], [1, 1, 0, 0, 0, 0]]
    >>> hgpa(labels, 2, random_state=0).labels.tolist()
    [0, 0, 0, 1, 1, 1]
    """
    from cclust.errors import ValidationError

    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    imbalance = check_float(imbalance, "imbalance", low=0, low_open=True)
    if objective not in ("cut", "km1"):
        raise ValidationError(f"objective must be 'cut' or 'km1', got {objective!r}.")
    if preset not in PRESETS:
        raise ValidationError(f"preset must be one of {', '.join(map(repr, PRESETS))}, got {preset!r}.")
    if preset == "auto":
        preset = "cclust" if imbalance > AUTO_FLOW_IMBALANCE else "cclust_fast"
    sizes = check_sizes(sizes)
    rng = check_random_state(random_state)
    n = ensemble.n_samples

    identical = identical_label_rows(ensemble.labels)
    order = canonical_cluster_order(ensemble, identical)
    B = one_hot_in_order(ensemble, order)
    n_c = B.shape[1]
    pins = B.nnz if identical is None else int(np.diff(B.indptr)[identical[0]].sum())
    require_memory(HGPA_BYTES_PER_PIN * pins, f"hgpa's hypergraph of {pins} pins (objects in clusters)",
                   "fuse fewer partitions or objects (ensemble.take(...)), or use hbgf, mcla or kcc", max_bytes)
    pw = np.repeat(ensemble.weights, ensemble.n_clusters)[order]

    mtk, init = _mtkahypar()

    def cut_hypergraph(weights, _tolerance):
        total = n if weights is None else int(weights.sum())
        with _lock:
            context = _context(mtk, init, preset)
            context.logging = False
            context.set_partitioning_parameters(
                int(n_clusters), float(imbalance), mtk.Objective.CUT if objective == "cut" else mtk.Objective.KM1)
            # A cluster larger than any part Mt-KaHyPar may fill is cut whatever the partition: a
            # constant of the cut objective (not of km1, which counts the parts it spans).
            max_edge_size = max(context.compute_max_block_weights(total)) if objective == "cut" else None
        # The merge cap is a part's slack in the units Mt-KaHyPar balances: objects, or the
        # objects' size weights (capping those by object count let one vertex of 38 heavy
        # objects weigh 3.2 times the slack on letter).
        graph = build_hypergraph(B, pw, max(1, int(imbalance * total / n_clusters)), rng,
                                 max_edge_size=max_edge_size, identical=identical, object_weights=weights)
        with _lock:
            hypergraph = init.create_hypergraph(context, len(graph.vertex_weights), len(graph.edges), graph.edges,
                                                graph.vertex_weights.tolist(), graph.edge_weights.tolist())
            partitioned = hypergraph.partition(context)
        parts = np.asarray(partitioned.get_partition(), dtype=np.int64)[graph.vertex_of]

        # The parts every cluster's objects fall in: the cut, and (for empty parts) the affinities.
        counts = np.bincount(B.indices * n_clusters + np.repeat(parts, np.diff(B.indptr)),
                             minlength=n_c * n_clusters).reshape(n_c, n_clusters)
        cut = float(pw[(counts > 0).sum(axis=1) > 1].sum())
        labels, moved = parts, 0
        if np.bincount(parts, minlength=n_clusters).min() == 0:
            # Affinity of an object to a part: the weight of its clusters lying mostly in that part.
            majority = counts.argmax(axis=1)
            affinity = sp.csr_matrix((pw[B.indices], (np.repeat(np.arange(n), np.diff(B.indptr)),
                                                      majority[B.indices])), shape=(n, n_clusters)).toarray()
            labels, moved = honour_n_clusters(parts, affinity, n_clusters)
        return labels, cut, {"n_moved": moved, "n_vertices": len(graph.vertex_weights),
                             "n_hyperedges": len(graph.edges)}

    labels, cut, extras = cut_with_sizes(ensemble, n_clusters, sizes, None, rng, cut_hypergraph,
                                         admissible_equal=imbalance)
    return ConsensusResult.from_labels(
        labels, objective=cut, objective_name="weighted hyperedge cut (lower is better)",
        method="hgpa",
        extras=dict(extras, imbalance=imbalance, hyperedge_objective=objective, preset=preset))
