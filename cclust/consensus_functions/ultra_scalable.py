"""Transfer-cut consensus (``tcut``) and U-SENC (``usenc``; Huang, Wang, Wu, Lai & Kwoh 2020).

* :func:`tcut` cuts the object-cluster bipartite graph of any ensemble (Huang et al. 2020,
  sec. 3.2.2, eq. 16-20: object x joined to each cluster containing it) by the transfer cut of
  Li, Wu & Chang (2012), :func:`cclust.graph.tcut`: the normalised-cut eigenvectors of the
  small cluster-side graph ``B^T D_X^-1 B``, carried over to the objects, row-normalised, then
  k-means. Beside ``hbgf`` (METIS on the same graph) it is a spectral, deterministic-for-a-seed
  alternative with no balance constraint.
* :func:`usenc` is the whole U-SENC pipeline: an ensemble of U-SPEC clusterers
  (:func:`cclust.uspec.uspec_ensemble`, registered as the ``uspec`` generator) fused by
  :func:`tcut`.

Choices where the paper is silent, settled by the authors' code (``USENC.m``):

* edge weights: the paper's eq. 19 gives every edge weight 1; cclust gives the edges of
  partition i its weight w_i (equal weights give eq. 19 up to a common factor, which a
  normalised cut ignores);
* a missing label (-1) is no edge; an object missing from every partition is refused (it has
  no edge at all, and the authors' code would place it by its zero embedding row);
* objects labelled alike by every partition are one row of B counted by their number (the same
  cut exactly, see :func:`cclust.graph.tcut`); columns are in the canonical cluster order
  (:func:`cclust.graph.canonical_cluster_order`), so renaming clusters or reordering partitions
  gives the same graph;
* the k-means discretisation: k-means++ seeding, 3 runs of at most 100 Lloyd iterations, the
  lowest sum of squares kept (the authors' ``kmeans(..., 'MaxIter', 100, 'Replicates', 3)``).
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cclust.base import declare
from cclust.ensemble import Ensemble, as_ensemble, require_every_object_labelled
from cclust.errors import ValidationError
from cclust.graph import (
    canonical_cluster_order,
    check_graph_inputs,
    one_hot_in_order,
    tcut as transfer_cut,
)
from cclust.graph._tcut import ensemble_label_graph, require_transfer_cut, transfer_cut_bytes
from cclust.result import ConsensusResult
from cclust.validation import (check_distinct_label_vectors, check_int, check_n_jobs, check_random_state, renamed_threads,
                               require_memory)
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

__all__ = ["tcut", "usenc", "bipartite_cluster_graph"]

_OBJECTIVE = "within-cluster sum of squares of the transfer-cut embedding (lower is better)"


def bipartite_cluster_graph(ensemble):
    """The object-cluster graph of Huang et al. (2020, eq. 18-19), weighted by partition.

    Returns ``(B, groups)``: B is the CSR matrix of the distinct label rows (all rows when
    ``groups`` is None) x clusters in canonical order, entry ``w_i`` where the object belongs to
    a cluster of partition i; ``groups`` is :meth:`cclust.Ensemble.distinct_rows`, which :func:`cclust.graph.tcut` takes to count each distinct row by its number.
    """
    groups = ensemble.distinct_rows()
    order = canonical_cluster_order(ensemble, groups)
    values = np.repeat(ensemble.weights, ensemble.n_clusters)[order]
    B = one_hot_in_order(ensemble, order, rows=None if groups is None else groups[0], values=values)
    return B, groups


@renamed_threads
@declare(handles_missing=True, object_order="distribution")  # k-means++ draws objects by position
def tcut(ensemble: EnsembleLike, n_clusters: int, *, n_init: int = 3, max_iter: int = 100,
         max_bytes: int | None = None, random_state: RandomStateLike = None,
         n_jobs: int | None = None) -> ConsensusResult:
    """Transfer cut of the object-cluster bipartite graph (U-SENC's consensus function).

    The consensus function of U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020, sec. 3.2.2), usable on
    any ensemble: objects and clusters are the vertices of a bipartite graph (eq. 17-19),
    object x joined to each cluster containing it; its normalised cut (eq. 8) is solved on the
    cluster side alone, ``L_C v = lambda D_C v`` with ``E_C = B^T D_X^-1 B`` (eq. 20), by the
    transfer cut of Li, Wu & Chang (2012) (:func:`cclust.graph.tcut`), and the K leading
    eigenvectors, carried over to the objects (eq. 10-12) and row-normalised, are discretised by
    k-means. Time O(n r (r + K) + sum K_i^3) and memory O(n r); no object x object matrix.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Partition weights weight the edges; a missing label (-1) is no edge. An object missing
        from every partition is refused.
    n_clusters : int
        K, in [2, min(number of distinct label rows, total number of clusters)].
    n_init : int, default=3
        k-means runs on the embedding (k-means++ seeding), the lowest sum of squares kept.
    max_iter : int, default=100
        Lloyd iterations per run.
    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before the graph is made for the graph and the cut together
        (:data:`cclust.graph.TCUT_DENSE_MAX` decides the route): on the dense route 10 bytes
        an edge, 27 a pair of clusters and 32 an object and consensus cluster; on the Lanczos
        route, which reads the label codes and forms no graph, 64 bytes an object and 8 an
        object and consensus cluster (and, when label rows repeat, the distinct rows' codes and
        8 more an object and cluster).
    random_state : int, Generator or None
        Seeds k-means.
    n_jobs : int, default=None
        Threads of the k-means passes; the labels do not depend on it.

    Returns
    -------
    ConsensusResult
        ``objective``: the k-means sum of squares in the embedding (lower is better);
        ``n_iter``/``converged`` None (one-shot method); ``extras``: ``eigenvalues`` (of
        ``D_C^-1/2 E_C D_C^-1/2``, largest first; ``1 - lambda`` of eq. 20) and
        ``n_microclusters`` (distinct label rows).

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=10, random_state=0)
    >>> tcut(E, 3, random_state=0).n_clusters
    3
    """
    ensemble, n_clusters = check_graph_inputs(ensemble, n_clusters)
    require_every_object_labelled(ensemble, "tcut", "places an object only through the clusters holding it")
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_jobs = check_n_jobs(n_jobs)
    rng = check_random_state(random_state)
    require_transfer_cut(ensemble, n_clusters, "tcut", max_bytes)
    # the Lanczos route reads the label codes; the dense one the canonical sparse matrix
    B = ensemble_label_graph(ensemble, np.repeat(ensemble.weights, ensemble.n_clusters), n_jobs)
    if B is None:
        B, groups = bipartite_cluster_graph(ensemble)
    else:
        groups = ensemble.distinct_rows()
    n_distinct = B.shape[0]
    check_distinct_label_vectors(n_clusters, n_distinct)
    if n_clusters > B.shape[1]:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of clusters in the ensemble ({B.shape[1]}): "
            "the transfer cut needs as many eigenvectors of the cluster graph; ask for fewer clusters or "
            "use hbgf.")
    cut = transfer_cut(B, n_clusters, groups=groups, random_state=rng, n_init=n_init, max_iter=max_iter,
                       n_jobs=n_jobs)
    return ConsensusResult.from_labels(cut.labels, objective=float(cut.objective), objective_name=_OBJECTIVE,
                                       method="tcut", extras={"eigenvalues": cut.eigenvalues,
                                                              "n_microclusters": int(n_distinct)})


#: Bytes a U-SPEC clusterer of usenc holds at its peak: per object and nearest representative
#: 58 (the neighbours, int64; their distances and affinities, float64; the CSR affinity rows
#: and the transfer cut's row sums), per object and cluster 16 (the transferred embedding and
#: k-means' buffers, float64, at the middle of the K_i range), per pair of representatives 13
#: (the dense column graph of the transfer cut and its scaled copy, once: the clusterers
#: running at once do not reach it together). Measured with 4 and 5 clusterers at 2 * 10^4 and
#: 4 * 10^4 objects of 3 features, p = 1000, k = 5, K_i in [20, 60]: 835 bytes an object with one
#: clusterer at a time, 1450 with two, 12.5 to 12.9 bytes a pair of representatives.
USPEC_OBJECT_NEIGHBOR_BYTES = 58
USPEC_OBJECT_CLUSTER_BYTES = 16
USPEC_REPRESENTATIVE_PAIR_BYTES = 13


def usenc_bytes(n, n_given, given_columns, n_partitions, workers, p, k, k_range, n_clusters):
    """Bytes usenc holds at its peak, the larger of its two phases, for n objects, ``n_given``
    given partitions of ``given_columns`` clusters (0 and 0 for the paper's pipeline) and
    ``n_partitions`` U-SPEC clusterers run ``workers`` at a time (p representatives, k nearest,
    K_i in ``k_range``):

    * generation: each running clusterer's per-object arrays, one dense representative graph
      (see the constants' note) and the labels made (int64, 8 bytes an object and partition);
    * consensus: with given partitions, the joined ensemble's codes (:meth:`cclust.Ensemble.join`,
      at most 2 bytes an object and partition), and the transfer cut of every label row (all
      distinct) against the given clusters and the generated ones (K_i at the middle of
      ``k_range``), :func:`transfer_cut_bytes`.
    """
    low, high = k_range
    middle = (low + high) // 2
    per_object = USPEC_OBJECT_NEIGHBOR_BYTES * k + USPEC_OBJECT_CLUSTER_BYTES * middle
    generation = workers * per_object * n + USPEC_REPRESENTATIVE_PAIR_BYTES * p * p + 8 * n * n_partitions
    total = n_given + n_partitions
    consensus = 2 * n * total + transfer_cut_bytes(n, n, n * total, given_columns + n_partitions * middle,
                                                             n_clusters, code_bytes=2)  # rows all distinct: no copy
    return max(generation, consensus)


@renamed_threads
@declare(requires_X=True, handles_missing=True, object_order="distribution", generates_ensemble=True)
def usenc(ensemble: EnsembleLike | None, n_clusters: int, *, X: npt.ArrayLike, n_partitions: int = 20,
          k_range: tuple[int, int] | None = None, n_representatives: int | None = None, n_neighbors: int = 5,
          n_init: int = 3, max_iter: int = 100, max_bytes: int | None = None,
          random_state: RandomStateLike = None, n_jobs: int | None = None) -> ConsensusResult:
    """Ultra-scalable ensemble clustering, U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020, sec. 3.2).

    ``n_partitions`` U-SPEC clusterers of ``X`` (:func:`cclust.uspec.uspec_ensemble`: own
    hybrid representatives and K_i uniform in ``k_range`` each) fused by :func:`tcut`, the
    transfer cut of the object-cluster bipartite graph. Time O(n m p^(1/2) d) for the
    generation, O(n m (m + K)) for the consensus; memory O(n (K + m) + p^2).

    ``usenc(None, K, X=X, random_state=s)`` is the paper's pipeline and gives exactly the
    labels of ``cclust.consensus("tcut", cclust.generate("uspec", X, K, n_partitions=m,
    random_state=s), K, random_state=s)`` for an int ``s`` (a Generator is drawn from by both
    steps in that order). An ``ensemble`` passed in (the consensus-function contract, e.g.
    from ``cclust.consensus``) joins the U-SPEC partitions in the bipartite graph, each of its
    partitions weighing ``r w_i`` against 1 for a U-SPEC partition (its own weights
    ``w_i``, summing to 1 over its r partitions, keep their ratios); not in the paper.

    Parameters
    ----------
    ensemble : Ensemble, array-like of shape (n_samples, n_partitions), or None
        Further partitions of the same objects (missing labels allowed), or None for the
        paper's U-SENC.
    n_clusters : int
        K, in [2, n_samples].
    X : array-like of shape (n_samples, n_features)
        The data (finite values).
    n_partitions : int, default=20
        m, the U-SPEC clusterers (the paper's default).
    k_range : (int, int), default=None
        K_i range; None: the paper's [20, 60], capped for small data (see
        :func:`cclust.uspec.uspec_ensemble`).
    n_representatives, n_neighbors : int, default=None, 5
        p and K of each U-SPEC clusterer (None: the paper's p = 1,000 from n = 10,000 on, see
        :func:`cclust.uspec.default_representatives`; K = 5, the paper's).
    n_init, max_iter : int, default=3, 100
        k-means of the consensus transfer cut.
    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked before anything is generated for the larger of the generation (the clusterers
        running at once, each with its graph and transfer cut) and the consensus (the joined
        labels and their transfer cut); see :func:`usenc_bytes`.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Threads over the U-SPEC clusterers and of the consensus k-means; the labels do not
        depend on it.

    Returns
    -------
    ConsensusResult
        As :func:`tcut`, with ``extras["n_generated"]`` (m).

    Notes
    -----
    With p = n (fewer objects than ``n_representatives``, as with the authors' p = 1,000 on
    small data) every representative is an object and each clusterer's graph is the K
    nearest-neighbour graph of the objects; with K_i in [20, 60] its clusters hold a few
    objects each. A tight group that every clusterer keeps apart is then a connected
    component of the consensus graph, and when there are ``n_clusters`` or more components the
    transfer cut's clusters are unions of them (tiny clusters beside one that holds nearly
    every object). How often this
    happens depends on the ensemble's diversity, to which the ties between equally distant
    representatives contribute: cclust breaks exact ties in a random order per clusterer, as
    the authors' code does, but orders distances that differ by rounding only by their exact
    values, which the authors' matrix products round differently, so the two codes' graphs
    differ at such ties (see
    :func:`cclust.uspec.hybrid_representatives`). The default p (n / 10 below 10,000 objects)
    and the default K_i range (capped at a third of n) keep several objects per representative.

    Examples
    --------
    >>> from cclust.datasets import make_circles
    >>> from cclust.metrics import ari
    >>> X, y = make_circles(3000, random_state=0)
    >>> ari(usenc(None, 3, X=X, random_state=0).labels, y) > 0.95
    True
    """
    from cclust._spectral import check_ensemble
    from cclust.uspec import uspec_ensemble
    from cclust.validation import check_array_2d

    X = check_array_2d(X, "X")
    if ensemble is not None:
        ensemble = as_ensemble(ensemble)
        if ensemble.n_samples != X.shape[0]:
            raise ValidationError(
                f"X has {X.shape[0]} rows but the ensemble labels {ensemble.n_samples} objects; pass the "
                "features of the ensemble's objects, in the same order.")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, X.shape[0]))
    _, _, n_partitions, p, k, k_bounds, _, _ = check_ensemble(X, n_clusters, n_partitions, k_range,
                                                               n_representatives, n_neighbors, 1, 1)
    workers = min(check_n_jobs(n_jobs), n_partitions)
    given = (0, 0) if ensemble is None else (ensemble.n_partitions, int(ensemble.offsets[-1]))
    require_memory(usenc_bytes(X.shape[0], given[0], given[1], n_partitions, workers, p, k, k_bounds, n_clusters),
                   f"usenc's {n_partitions} U-SPEC clusterers ({workers} at a time) and the transfer cut of "
                   f"{X.shape[0]} objects", "pass fewer n_partitions, n_representatives or n_jobs, or use kcc on "
                   "an ensemble generated by parts", max_bytes)
    generated = uspec_ensemble(X, n_clusters, n_partitions=n_partitions, k_range=k_range,
                               n_representatives=n_representatives, n_neighbors=n_neighbors,
                               random_state=random_state, n_jobs=n_jobs)
    if ensemble is None:
        joined = generated
    else:
        r = ensemble.n_partitions
        joined = ensemble.join(generated, weights=np.concatenate([ensemble.weights * r,
                                                                  np.ones(generated.n_partitions)]))
    result = tcut(joined, n_clusters, n_init=n_init, max_iter=max_iter, max_bytes=max_bytes,
                  random_state=random_state, n_jobs=n_jobs)
    return ConsensusResult.from_labels(result.labels, objective=result.objective, objective_name=_OBJECTIVE,
                                       method="usenc", extras=dict(result.extras,
                                                                   n_generated=generated.n_partitions))
