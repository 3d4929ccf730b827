"""Graph-based consensus: CSPA, MCLA (Strehl & Ghosh, JMLR 3, 2002) and HBGF (Fern & Brodley,
ICML 2004), built and cut with the graph toolkit :mod:`cclust.graph`.

* **CSPA** partitions the object graph whose edge weights are the co-association A (Ren et al. 2017, sec. 2).
* **MCLA** partitions the meta-graph of clusters with binary-Jaccard edge weights, then gives each
  object to the meta-cluster it participates in most (Ren et al. 2017, sec. 2; the weighted variant WOMC,
  eq. 5 of Ren et al. 2017, shares this code, see :mod:`cclust.consensus_functions.woec`).
* **HBGF** partitions the bipartite graph of objects and clusters (an object is joined to each
  cluster it belongs to) and keeps the objects' parts (Ren et al. 2017, sec. 2).

How the graphs become integer METIS graphs, how cluster sizes are balanced (``sizes``) and why
the results do not depend on cluster names or partition order: :mod:`cclust.graph`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from cclust._codes import missing_mask
from cclust.base import declare
from cclust.errors import ValidationError
from cclust.graph import (
    DENSE_GRAPH_ENTRY_BYTES,
    bipartite_affinity,
    bipartite_partition,
    check_balance,
    check_dense_budget,
    check_graph_inputs,
    check_n_neighbors,
    check_sizes,
    check_ufactor,
    cut_with_sizes,
    has_empty_part,
    hbgf_graph,
    honour_n_clusters,
    meta_cluster,
    partition_bipartite_groups,
    partition_graph,
    symmetric_graph,
    top_neighbor_graph,
)
from cclust.result import ConsensusResult
from cclust.soft import is_soft_ensemble
from cclust.validation import check_int, check_random_state, memory_budget, renamed_threads, require_memory
from cclust.ensemble import Ensemble, EnsembleLike
from cclust.validation import RandomStateLike

if TYPE_CHECKING:
    from cclust.soft import SoftEnsemble

_CSPA_ALTERNATIVE = ("pass n_neighbors=30, neighbors='lsh' for the kNN co-association (linear memory and "
                     "time; n_neighbors=30 alone is exact but O(n^2) time), or use hbgf, mcla or kcc")
_NEIGHBORS = ("exact", "lsh")


# -- soft partitions (Hornik 2005) ---------------------------------------------------------------

def _soft_inputs(soft: SoftEnsemble, n_clusters: object) -> tuple[SoftEnsemble, Ensemble, int]:
    """(SoftEnsemble, its hardened Ensemble, K) for a graph method given soft partitions.

    The graphs are built from the memberships; the hardened ensemble (each object's most likely
    cluster per partition) serves only the size estimate of ``sizes="estimated"``/``"auto"``
    (:func:`cut_with_sizes`), which reads hard clusters."""
    hard, n_clusters = check_graph_inputs(soft.harden(), n_clusters)
    return soft, hard, n_clusters


#: Bytes a pair of clusters of the soft meta-graph takes at its peak (the dense Gram matrix, the
#: extended Jaccard similarities and their temporaries, the sparse graph and METIS's copy):
#: RSS high-water mark of mcla on soft partitions, 139 and 125 bytes a pair at 1,200 and 2,400 clusters.
_SOFT_META_GRAPH_PAIR_BYTES = 136


def _soft_meta_cluster(soft, hard, n_clusters, *, rng, ufactor, balance, sizes, max_bytes=None):
    """MCLA on soft partitions: the meta-graph's edge weights are the extended Jaccard
    similarities ``u.v / (|u|^2 + |v|^2 - u.v)`` of the membership columns (Strehl & Ghosh 2002,
    who use this similarity for real-valued vectors; binary Jaccard on 0/1 columns), and an
    object's association with a meta-cluster is its partition-weighted mean membership in the
    meta-cluster's clusters."""
    from cclust.graph._meta import participation

    n_c = int(np.sum(soft.n_clusters))
    require_memory(n_c * n_c * _SOFT_META_GRAPH_PAIR_BYTES, f"the soft meta-graph of {n_c} clusters",
                   "use fewer or coarser soft partitions, or hbgf or kcc (no meta-graph)", max_bytes)
    U = soft.stacked()
    G = U.T @ U
    norms = np.diag(G).copy()
    union = norms[:, None] + norms[None, :] - G
    S = np.where(union > 0, G / np.where(union > 0, union, 1.0), 0.0)
    meta = sp.csr_matrix(np.maximum(S, 0.0))
    B = sp.csr_matrix(U)
    n_c = U.shape[1]
    pw = np.repeat(soft.weights, soft.n_clusters)
    mass0 = U.sum(axis=0)

    def cut_graph(weights, tolerance):
        mass = mass0 if weights is None else U.T @ weights.astype(np.float64)
        if balance == "clusters":
            vertex_weights = None if weights is None else np.maximum(1, np.rint(mass / np.maximum(mass0, 1e-12)))
        else:
            vertex_weights = np.maximum(1, np.rint(mass)).astype(np.int64)
        if vertex_weights is not None:
            vertex_weights = np.asarray(vertex_weights, dtype=np.int64)
        parts, cut = partition_graph(meta, n_clusters, random_state=rng, ufactor=tolerance,
                                     vertex_weights=vertex_weights)
        labels, H, moved = participation(B, pw, parts, n_c, n_clusters, rng)
        return labels, cut, {"meta_labels": parts, "association": H, "n_moved": moved, "ufactor": tolerance,
                             "balance": balance}

    return cut_with_sizes(hard, n_clusters, sizes, ufactor, rng, cut_graph, max_bytes=max_bytes)


# -- the consensus functions ---------------------------------------------------------------------

def _result(labels, *, objective, method, n_clusters, extras):
    return ConsensusResult.from_labels(
        labels, objective=objective, objective_name="weighted edge cut of the METIS partition (lower is better)",
        method=method, extras=extras)


def _sampled_coassociation_graph(ensemble, n_neighbors, n_candidates, rng, chunk_rows=512):
    """Each object's ``n_neighbors`` strongest co-associations among ``n_candidates`` sampled
    objects: a draw picks a partition uniformly and a uniform member of the object's cluster
    in it, so objects sharing more clusters are proportionally likelier candidates. The
    co-association of every candidate pair is exact; only the candidate set is sampled."""
    L = np.ascontiguousarray(ensemble.labels)
    n, r = L.shape
    w = ensemble.weights
    B = ensemble.one_hot().tocsc()
    B.sort_indices()
    starts = B.indptr[:-1]
    sizes = np.diff(B.indptr)
    offsets = ensemble.offsets[:-1]
    rows, cols, vals = [], [], []
    for start in range(0, n, chunk_rows):
        stop = min(n, start + chunk_rows)
        xs = np.arange(start, stop)
        p = rng.integers(0, r, size=(stop - start, n_candidates))
        lab = L[xs[:, None], p]
        valid = lab >= 0
        col = offsets[p] + np.where(valid, lab, 0)
        pick = np.minimum((rng.random(p.shape) * sizes[col]).astype(np.int64), sizes[col] - 1)
        cand = B.indices[starts[col] + pick]
        cand = np.where(valid & (cand != xs[:, None]), cand, -1)
        cand.sort(axis=1)
        dup = np.zeros_like(valid)
        dup[:, 1:] = cand[:, 1:] == cand[:, :-1]
        safe = np.where(cand >= 0, cand, 0)
        Lx, Lc = L[xs][:, None, :], L[safe]
        both = (Lx >= 0) & (Lc >= 0)
        sim = ((Lx == Lc) & both) @ w
        if ensemble.has_missing:
            den = both @ w
            sim = np.where(den > 0, sim / np.where(den > 0, den, 1.0), 0.0)
        sim = np.where((cand >= 0) & ~dup, sim, -1.0)
        k = min(n_neighbors, n_candidates)
        idx = np.argpartition(-sim, k - 1, axis=1)[:, :k]
        top = np.take_along_axis(sim, idx, axis=1)
        keep = top > 0
        rows.append(np.repeat(xs, k)[keep.reshape(-1)])
        cols.append(np.take_along_axis(cand, idx, axis=1)[keep])
        vals.append(top[keep])
    G = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    return G.maximum(G.T).tocsr()


#: Pairs of objects :func:`_together_fraction` draws.
_DENSITY_PAIRS = 4096


def _together_fraction(ensemble):
    """The fraction of pairs of distinct objects that some partition of positive weight puts in
    one cluster (the co-association's non-zero pairs), estimated on ``_DENSITY_PAIRS`` pairs
    drawn with a fixed seed (standard error at most 0.008): O(pairs r), before the n x n matrix."""
    n = ensemble.n_samples
    rng = np.random.default_rng(0)
    first = rng.integers(0, n, _DENSITY_PAIRS)
    second = rng.integers(0, n - 1, _DENSITY_PAIRS)
    second += second >= first
    weighted = ensemble.weights > 0
    codes = ensemble.compact_labels()
    a, b = codes[first][:, weighted], codes[second][:, weighted]     # the sampled rows only
    together = (a == b) & ~missing_mask(a)
    return float(together.any(axis=1).mean())


def _coassociation_graph(ensemble, n_neighbors, max_bytes, n_candidates=None, rng=None, neighbors="exact",
                         n_threads=None):
    n = ensemble.n_samples
    if neighbors == "lsh":
        return ensemble.knn_coassociation(n_neighbors, random_state=rng, dtype=np.float64, max_bytes=max_bytes,
                                          n_jobs=n_threads)
    if n_neighbors is not None and n_candidates is not None:
        return _sampled_coassociation_graph(ensemble, n_neighbors, n_candidates, rng)
    if n_neighbors is None:
        # The co-association and its METIS graph on the pairs a sample finds together, asked
        # before the matrix is formed (so that a refusal quotes what the whole call needs); the
        # graph's exact figure is asked once the matrix is known.
        graph = np.float32().nbytes * n * n + DENSE_GRAPH_ENTRY_BYTES * _together_fraction(ensemble) * n * (n - 1)
        require_memory(max(ensemble.coassociation_bytes(dtype=np.float32), int(graph)),
                       f"the dense co-association of {n} objects and its METIS graph", _CSPA_ALTERNATIVE, max_bytes)
        return ensemble.coassociation(dtype=np.float32, max_bytes=memory_budget(max_bytes))
    B = ensemble.one_hot()
    Bw = ensemble.one_hot(weighted=True)
    BT = B.T.tocsr()
    if ensemble.has_missing:
        M = ensemble.labelled.astype(np.float64)
        MT = (M * ensemble.weights).T

    def block(start, stop):
        S = (Bw[start:stop] @ BT).toarray()
        if ensemble.has_missing:
            den = M[start:stop] @ MT
            S = np.where(den > 0, S / np.where(den > 0, den, 1.0), 0.0)
        return S

    return top_neighbor_graph(block, n, n_neighbors)


@renamed_threads
@declare(handles_missing=True, object_order="distribution", accepts_soft=True)  # METIS: vertex order
def cspa(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, n_neighbors: int | None = None,
         neighbors: str = "exact", n_candidates: int | None = None, ufactor: int | None = None, sizes: str = "auto",
         max_bytes: int | None = None, random_state: RandomStateLike = None,
         n_jobs: int | None = None) -> ConsensusResult:
    """Cluster-based Similarity Partitioning (CSPA; Strehl & Ghosh 2002, summarised in Ren et al. 2017, sec. 2).

    The co-association A (the weighted fraction of partitions putting two objects together,
    Ren et al. 2017, eq. 1) is the edge weight of a graph on the objects, cut into ``n_clusters`` parts by
    METIS (see :func:`partition_graph` for how weights become integers).

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
        Missing labels (-1) are handled: A[x, y] is taken over the partitions labelling both.
        Soft partitions (:class:`cclust.soft.SoftEnsemble`): A is the expected co-membership
        ``sum_i w_i U_i U_i^T`` (Hornik 2005), dense route only; the size estimate of
        ``sizes`` reads each object's most likely clusters.
    n_clusters : int
        In [2, n_samples].
    n_neighbors : int, default=None
        None: the exact dense graph (n^2 memory, refused past ``max_bytes``). An int: the sparse
        route, keeping for every object only its ``n_neighbors`` largest co-associations (an
        edge survives if either end keeps it). The sparse route changes the graph: weak
        links are dropped, which removes the long-range pull that makes dense CSPA split
        large clusters, and cuts memory to O(n * n_neighbors); rows are computed in chunks
        from the sparse one-hot, never as an n x n matrix; the time is O(n^2 r / K) with
        ``neighbors="exact"``.
    neighbors : {"exact", "lsh"}, default="exact"
        How the sparse route finds the neighbours. "exact": every pair is scored (above).
        "lsh": :meth:`cclust.Ensemble.knn_coassociation` — duplicate label rows collapsed and
        candidates found by sorting the rows on random orders of the partitions, exact values
        for the kept pairs, time and memory linear in n (n = 10^6 in minutes); an approximate
        kNN graph (recall of the true neighbours above 0.9 with its defaults, see there).
        ``n_neighbors`` defaults to 30 with "lsh".
    n_candidates : int, default=None
        With ``n_neighbors``: look for the neighbours among this many sampled candidates per
        object instead of all objects (time O(n * n_candidates * r), for n ~ 10^5). A draw
        picks a partition uniformly and a uniform member of the object's cluster in it, so an
        object sharing more clusters is proportionally likelier to be drawn; the weights of the
        kept edges are exact. Sampling makes the graph depend on the order of the partitions
        (the exact routes do not). None: exact search over all objects. Not with
        ``neighbors="lsh"``.
    ufactor : int, default=None
        METIS balance tolerance (thousandths): parts may exceed the average weight by
        ``ufactor / 1000``. None keeps METIS's default (nearly equal parts).
    sizes : {"auto", "estimated", "equal"}, default="auto"
        What the partitioner balances: "equal" is Strehl & Ghosh 2002 (every object counts 1);
        "estimated" weighs objects inversely to their estimated cluster's size; "auto" (not
        in the paper) picks one of the two cuts, so that a much larger cluster stays whole.
        See :func:`cut_with_sizes`; ``extras["sizes_used"]`` says which was kept.
    max_bytes : int, default=None
        Memory budget of the dense route (the matrix plus METIS's copy of the graph).
    random_state : int, Generator or None
        Seeds METIS (and the bands of ``neighbors="lsh"``).
    n_jobs : int, default=None
        Threads of ``neighbors="lsh"``; the labels do not depend on it.

    Returns
    -------
    ConsensusResult
        ``objective`` is the weighted edge cut in co-association units.

    Raises
    ------
    MemoryBudgetError
        If the dense route would exceed ``max_bytes``; the message gives the bytes needed.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0)
    >>> cspa(E, 3, random_state=0).n_clusters
    3
    """
    soft = None
    if is_soft_ensemble(ensemble):
        if n_neighbors is not None or neighbors != "exact" or n_candidates is not None:
            raise ValidationError("n_neighbors, neighbors='lsh' and n_candidates read hard labels; for a "
                                  "SoftEnsemble use the dense route (drop them), or hbgf/mcla (linear in n).")
        soft, ensemble, n_clusters = _soft_inputs(ensemble, n_clusters)
    else:
        ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    if neighbors not in _NEIGHBORS:
        raise ValidationError(f"neighbors must be one of {list(_NEIGHBORS)}, got {neighbors!r}.")
    if neighbors == "lsh" and n_neighbors is None:
        n_neighbors = 30
    n_neighbors = check_n_neighbors(n_neighbors, ensemble.n_samples) if neighbors == "exact" else check_int(
        n_neighbors, "n_neighbors", low=1)
    n_candidates = check_int(n_candidates, "n_candidates", low=1, allow_none=True)
    if n_candidates is not None and n_neighbors is None:
        raise ValidationError("n_candidates needs n_neighbors: pass n_neighbors=... (e.g. 30) as well.")
    if n_candidates is not None and neighbors == "lsh":
        raise ValidationError("n_candidates samples candidates for neighbors='exact'; neighbors='lsh' finds "
                              "its own: drop n_candidates or pass neighbors='exact'.")
    ufactor = check_ufactor(ufactor)
    sizes = check_sizes(sizes)
    rng = check_random_state(random_state)
    if soft is None:
        A = _coassociation_graph(ensemble, n_neighbors, max_bytes, n_candidates, rng, neighbors, n_jobs)
    else:
        check_dense_budget(ensemble.n_samples, "co-association", max_bytes, alternative=_CSPA_ALTERNATIVE)
        A = soft.coassociation(max_bytes=memory_budget(max_bytes)).astype(np.float32)
    # The dense co-association (float32) is kept for a cut that leaves a part empty, and METIS's
    # graph is made from it once for every cut; the kNN co-association is already symmetric
    # without diagonal.
    dense = isinstance(A, np.ndarray)
    graph = symmetric_graph(A, what="co-association", alternative=_CSPA_ALTERNATIVE, max_bytes=max_bytes) \
        if dense else A

    def cut_graph(weights, tolerance):
        parts, cut = partition_graph(graph, n_clusters, random_state=rng, ufactor=tolerance,
                                     symmetric=dense or neighbors == "lsh", vertex_weights=weights)
        if np.unique(parts).shape[0] < n_clusters:
            indicator = sp.csr_matrix((np.ones(parts.shape[0]), (np.arange(parts.shape[0]), parts)),
                                      shape=(parts.shape[0], n_clusters))
            affinity = np.asarray(((sp.csr_matrix(A) if dense else A) @ indicator).todense())
            parts, moved = honour_n_clusters(parts, affinity, n_clusters)
        else:
            moved = 0
        return parts, cut, {"n_moved": moved, "ufactor": tolerance}

    parts, cut, extras = cut_with_sizes(ensemble, n_clusters, sizes, ufactor, rng, cut_graph, max_bytes=max_bytes,
                                        n_jobs=n_jobs)
    return _result(parts, objective=cut, method="cspa", n_clusters=n_clusters,
                   extras=dict(extras, n_neighbors=n_neighbors, n_candidates=n_candidates, neighbors=neighbors))


@declare(handles_missing=True, object_order="distribution", accepts_soft=True)
def mcla(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, ufactor: int | None = None,
         balance: str = "objects", sizes: str = "auto", max_bytes: int | None = None,
         random_state: RandomStateLike = None) -> ConsensusResult:
    """Meta-CLustering Algorithm (MCLA; Strehl & Ghosh 2002, summarised in Ren et al. 2017, sec. 2).

    Every cluster of every partition is a vertex of a meta-graph whose edge weights are the
    binary Jaccard similarities ``|C_i & C_j| / |C_i | C_j|``; METIS cuts it into ``n_clusters``
    meta-clusters; each object goes to the meta-cluster in which it participates most (the
    fraction of the meta-cluster's clusters it belongs to, partition weights applied), ties
    broken at random. Memory and time are near-linear in n: the meta-graph is (sum K_i)^2,
    formed from the stored label codes (:func:`cclust.graph.meta_graph`) as is the association;
    no one-hot matrix is made (hard partitions).

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
        Missing labels (-1) are handled: an object missing from a partition belongs to none of
        its clusters. Soft partitions (:class:`cclust.soft.SoftEnsemble`): the meta-graph weighs
        the extended Jaccard similarity of the membership columns (binary Jaccard on 0/1
        columns) and an object's association is its weighted mean membership in a
        meta-cluster's clusters; the meta-graph is dense (sum K_i)^2.
    n_clusters : int
        In [2, n_samples]. If a meta-cluster wins no object (the WOMC of Ren et al. 2017, sec. 3.3.1,
        would then return fewer clusters), the objects closest to winning it move to it, so exactly ``n_clusters``
        are returned; ``extras["n_moved"]`` counts them.
    ufactor : int, default=None
        METIS balance tolerance of the meta-graph cut (thousandths).
    balance : {"objects", "clusters"}, default="objects"
        What METIS balances between meta-clusters: the objects their clusters hold (each
        vertex weighs its cluster's size, as Strehl & Ghosh sec. 3.4 and their ClusterPack
        code do) or their number of clusters (unit vertex weights, as ClusterEnsembles does).
        When base clusterings isolate a few outliers (k-means on the spambase sample),
        ``"clusters"`` puts the outliers' small clusters in one meta-cluster and their large
        complements in the other, and nearly every object joins the latter (ARI 0.0003 against
        0.44 with ``"objects"``; a looser ``ufactor`` does not help). ``"clusters"`` is better
        when the classes differ a lot in size (ecoli: ARI 0.45 against 0.37; glass: 0.17
        against 0.14). Measured by ``benchmarks/bench_mcla_balance.py``.
    sizes : {"auto", "estimated", "equal"}, default="auto"
        What the partitioner balances: "equal" is Strehl & Ghosh 2002 (every object counts 1);
        "estimated" weighs objects inversely to their estimated cluster's size; "auto" (not
        in the paper) picks one of the two cuts, so that a much larger cluster stays whole.
        See :func:`cut_with_sizes`; ``extras["sizes_used"]`` says which was kept.
    max_bytes : int, default=None
        Memory budget of the meta-graph: its entries, the pairs of clusters that share an object
        (up to (sum K_i)^2; soft partitions: all (sum K_i)^2 pairs, dense), about 90 bytes each
        at the peak, are counted first (unless even (sum K_i)^2 of them fit) and the call is
        refused with a :class:`cclust.errors.MemoryBudgetError` past the budget (None:
        :func:`cclust.validation.memory_budget`).
    random_state : int, Generator or None
        Seeds METIS and the tie-breaking.

    Returns
    -------
    ConsensusResult
        ``objective`` is the weighted cut of the meta-graph; ``extras`` holds ``meta_labels``
        (the meta-cluster of every cluster, in one-hot column order) and ``association``
        (n_samples, n_clusters).

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0)
    >>> mcla(E, 3, random_state=0).n_clusters
    3
    """
    if is_soft_ensemble(ensemble):
        soft, hard, n_clusters = _soft_inputs(ensemble, n_clusters)
        labels, cut, extras = _soft_meta_cluster(soft, hard, n_clusters, rng=check_random_state(random_state),
                                                 ufactor=check_ufactor(ufactor), balance=check_balance(balance),
                                                 sizes=check_sizes(sizes), max_bytes=max_bytes)
        return _result(labels, objective=cut, method="mcla", n_clusters=n_clusters, extras=extras)
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    ufactor = check_ufactor(ufactor)
    balance = check_balance(balance)
    sizes = check_sizes(sizes)
    labels, cut, extras = meta_cluster(ensemble, n_clusters, None, random_state=random_state,
                                       ufactor=ufactor, method="mcla", balance=balance, sizes=sizes,
                                       max_bytes=max_bytes)
    return _result(labels, objective=cut, method="mcla", n_clusters=n_clusters, extras=extras)


@declare(handles_missing=True, object_order="distribution", accepts_soft=True)
def hbgf(ensemble: EnsembleLike | SoftEnsemble, n_clusters: int, *, ufactor: int | None = None, sizes: str = "auto",
         max_bytes: int | None = None, random_state: RandomStateLike = None) -> ConsensusResult:
    """Hybrid Bipartite Graph Formulation (HBGF; Fern & Brodley 2004, summarised in Ren et al. 2017, sec. 2).

    Objects and clusters are the vertices of a bipartite graph; object x is joined to every
    cluster containing it with the weight of that cluster's partition. METIS cuts the graph
    into ``n_clusters`` parts and the objects keep their part. Memory and time are linear in
    n * n_partitions: no object-object matrix is formed. Objects every partition labels alike
    are one vertex of METIS's graph, weighted by their number (same cut, same balance; see
    :func:`bipartite_partition`), so they share a label and a redundant ensemble cuts faster.

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
        Missing labels (-1) are handled: the object has no edge to that partition. Soft
        partitions (:class:`cclust.soft.SoftEnsemble`): object x is joined to cluster l of
        partition i with weight ``w_i U_i[x, l]`` (zero memberships give no edge), the
        weighted bipartite graph of Fern & Brodley 2004's soft formulation.
    n_clusters : int
        In [2, n_samples]. A part holding only cluster vertices is filled with the objects
        most tied to its clusters (``extras["n_moved"]``).
    ufactor : int, default=None
        METIS balance tolerance (thousandths) over objects and clusters together.
    sizes : {"auto", "estimated", "equal"}, default="auto"
        What the partitioner balances: "equal" is Fern & Brodley 2004 (every object counts 1);
        "estimated" weighs objects inversely to their estimated cluster's size; "auto" (not
        in the paper) picks one of the two cuts, so that a much larger cluster stays whole.
        See :func:`cut_with_sizes`; ``extras["sizes_used"]`` says which was kept.
    max_bytes : int, default=None
        Memory budget for the bipartite graph, METIS's arrays and the sizes' estimate (None:
        ``CCLUST_MEMORY_BUDGET`` or the default, see :func:`cclust.validation.memory_budget`).
        METIS maps about 16 of its integers per edge of the graph at most: about 18 GiB for
        10^6 objects x 100 partitions.
    random_state : int, Generator or None
        Seeds METIS.

    Returns
    -------
    ConsensusResult
        ``objective`` is the weighted edge cut of the bipartite graph.

    Raises
    ------
    MemoryBudgetError
        Before the graph is formed, when it and METIS's arrays would exceed ``max_bytes``; the
        message gives the bytes needed and the alternatives (tcut cuts the same graph in memory
        linear in n r).

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0)
    >>> hbgf(E, 3, random_state=0).n_clusters
    3
    """
    if is_soft_ensemble(ensemble):
        soft, hard, n_clusters = _soft_inputs(ensemble, n_clusters)
        ufactor, sizes, rng = check_ufactor(ufactor), check_sizes(sizes), check_random_state(random_state)
        M = sp.csr_matrix(soft.stacked(weighted=True))
        M.eliminate_zeros()

        def cut_soft(weights, tolerance):
            labels, cut, moved = bipartite_partition(M, n_clusters, random_state=rng, ufactor=tolerance,
                                                     object_weights=weights, max_bytes=max_bytes)
            return labels, cut, {"n_moved": moved, "ufactor": tolerance}

        labels, cut, extras = cut_with_sizes(hard, n_clusters, sizes, ufactor, rng, cut_soft, max_bytes=max_bytes)
        return _result(labels, objective=cut, method="hbgf", n_clusters=n_clusters, extras=extras)
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    ufactor = check_ufactor(ufactor)
    sizes = check_sizes(sizes)
    rng = check_random_state(random_state)
    # bipartite_partition(one_hot(weighted=True)[:, canonical_cluster_order(ensemble)]) with the
    # same graph built from the labels: forming, permuting and re-sorting the one-hot, then
    # hashing its rows, took a quarter of the time at n = 20,000 (METIS most of the rest).
    G, groups, weight_by_rank = hbgf_graph(ensemble, n_clusters, max_bytes)

    def cut_graph(weights, tolerance):
        labels, cluster_part, cut = partition_bipartite_groups(G, groups, weight_by_rank.max(), n_clusters,
                                                         random_state=rng, ufactor=tolerance, object_weights=weights,
                                                         max_bytes=max_bytes)
        moved = 0
        if has_empty_part(labels, n_clusters):
            # The affinity of the distinct rows (their unscaled weights) gives every object its row's.
            rows = (G if groups is None else
                    sp.csr_matrix((weight_by_rank[G.indices], G.indices, G.indptr), shape=G.shape))
            affinity = bipartite_affinity(rows, cluster_part, n_clusters)
            labels, moved = honour_n_clusters(labels, affinity if groups is None else affinity[groups[1]],
                                              n_clusters)
        return labels, cut, {"n_moved": moved, "ufactor": tolerance}

    labels, cut, extras = cut_with_sizes(ensemble, n_clusters, sizes, ufactor, rng, cut_graph, max_bytes=max_bytes)
    return _result(labels, objective=cut, method="hbgf", n_clusters=n_clusters, extras=extras)
