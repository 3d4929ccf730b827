"""cclust-hypergraph: HGPA consensus clustering, cut by the Mt-KaHyPar hypergraph partitioner.

Registers ``hgpa`` through the ``cclust.consensus`` entry-point group. Nothing here is imported
by ``import cclust``; the registry imports this module (and Mt-KaHyPar) the first time the name
``hgpa`` is asked for.
"""
import threading

import numpy as np

from cclust._validation import check_float, check_n_threads, check_random_state
from cclust.consensus.graph import canonical_cluster_order, check_graph_inputs, honour_n_clusters
from cclust.registry import declare
from cclust.result import ConsensusResult

__version__ = "0.1.0"
__all__ = ["hgpa", "HYPEREDGE_WEIGHT_RESOLUTION", "PRESETS"]

#: Integer weight of the heaviest hyperedge (a cluster of the heaviest partition); the others
#: are scaled in proportion and rounded, at least 1. Equal partition weights give weight 1000.
HYPEREDGE_WEIGHT_RESOLUTION = 1000

#: The Mt-KaHyPar presets HGPA offers: the deterministic ones, whose partition depends on the
#: hypergraph alone -- not on the number of threads nor on their scheduling.
PRESETS = {"deterministic": "DETERMINISTIC", "deterministic_quality": "DETERMINISTIC_QUALITY"}

_lock = threading.Lock()
_initializer = None


def _mtkahypar():
    """Mt-KaHyPar, initialised once per process with every available core (or
    ``CCLUST_NUM_THREADS``): the deterministic presets give the same partition on any number
    of threads (checked on 1 and 2 threads in the tests), so threads only change the speed."""
    global _initializer
    import mtkahypar

    with _lock:
        if _initializer is None:
            _initializer = mtkahypar.initialize(check_n_threads(None), False)
    return mtkahypar, _initializer


# The partition depends on the vertex numbering, hence on the objects' order: "distribution".
@declare(handles_missing=True, object_order="distribution")
def hgpa(ensemble, n_clusters, *, imbalance=0.05, objective="cut", preset="deterministic_quality", random_state=None):
    """HyperGraph Partitioning Algorithm (HGPA; Strehl & Ghosh, JMLR 3, 2002; 003 sec. 2).

    Each cluster of each basic partition is a hyperedge joining its objects; the hypergraph is
    cut into ``n_clusters`` parts of nearly equal size minimising the weight of the hyperedges
    cut (Strehl & Ghosh used hMETIS; here Mt-KaHyPar with a deterministic preset, on every
    available core). A hyperedge's weight is its partition's weight, scaled so the heaviest is
    :data:`HYPEREDGE_WEIGHT_RESOLUTION` and rounded (at least 1).

    Mt-KaHyPar's deterministic presets ignore its global seed (``mtkahypar.set_seed``, version
    1.7), so ``random_state`` acts through the vertex numbering instead: the objects are handed
    to the partitioner in an order drawn from it, and the result is mapped back.

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
        asks KaHyPar for; on letter it scores a higher ARI, at about 4x the time, see
        docs/benchmarks.md).
    preset : {"deterministic_quality", "deterministic"}, default="deterministic_quality"
        Mt-KaHyPar preset; both give the same partition for any number of threads.
        ``deterministic`` takes about 0.55x the time (letter, n = 20,000: 8.5 s against 15 s
        of CPU) for a 0.5% larger cut and the same ARI, but keeps the parts nearly equal
        whatever ``imbalance`` allows, so it cannot keep a large natural cluster whole.
    random_state : int, Generator or None
        Draws the order in which the objects are numbered for Mt-KaHyPar.

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
    rng = check_random_state(random_state)
    seed = int(rng.integers(0, 2**31 - 1))
    n = ensemble.n_samples
    # Vertex id of every object: Mt-KaHyPar's deterministic presets depend on the numbering only.
    vertex = rng.permutation(n)

    order = canonical_cluster_order(ensemble)
    B = ensemble.one_hot()[:, order].tocsc()
    B.sort_indices()
    pins = vertex[B.indices]
    edges = [pins[B.indptr[c]:B.indptr[c + 1]].tolist() for c in range(B.shape[1])]
    pw = np.repeat(ensemble.weights, ensemble.n_clusters)[order]
    edge_weights = np.maximum(1, np.rint(pw / pw.max() * HYPEREDGE_WEIGHT_RESOLUTION)).astype(np.int64)

    mtk, init = _mtkahypar()
    with _lock:
        # DETERMINISTIC_QUALITY exists from Mt-KaHyPar 1.5 on; older versions fall back to the plain one.
        kind = getattr(mtk.PresetType, PRESETS[preset], mtk.PresetType.DETERMINISTIC)
        context = init.context_from_preset(kind)
        context.logging = False
        context.set_partitioning_parameters(
            int(n_clusters), float(imbalance), mtk.Objective.CUT if objective == "cut" else mtk.Objective.KM1)
        mtk.set_seed(seed)
        hypergraph = init.create_hypergraph(context, n, len(edges), edges, [1] * n, edge_weights.tolist())
        partitioned = hypergraph.partition(context)
        parts = np.asarray(partitioned.get_partition(), dtype=np.int64)[vertex]

    # Affinity of an object to a part: the weight of its hyperedges lying mostly in that part.
    counts = np.zeros((B.shape[1], n_clusters))
    np.add.at(counts, (np.repeat(np.arange(B.shape[1]), np.diff(B.indptr)), parts[B.indices]), 1.0)
    majority = counts.argmax(axis=1)
    affinity = np.zeros((n, n_clusters))
    np.add.at(affinity, (B.indices, np.repeat(majority, np.diff(B.indptr))),
              np.repeat(pw, np.diff(B.indptr)))
    labels, moved = honour_n_clusters(parts, affinity, n_clusters)
    cut_mask = (counts > 0).sum(axis=1) > 1
    cut = float(pw[cut_mask].sum())
    return ConsensusResult.from_labels(
        labels, objective=cut, objective_name="weighted hyperedge cut (lower is better)",
        n_iter=0, converged=True, method="hgpa",
        extras={"n_moved": moved, "imbalance": imbalance, "hyperedge_objective": objective, "preset": preset})
