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
slivers (one part holding 88% of a 100000-object mixture at ``ufactor=1000``). cclust's
default ``sizes="auto"`` (see :func:`cut_with_sizes`) also cuts with every object weighted
inversely to the size of its cluster in a size-free first consensus (:func:`estimate_clusters`,
:func:`size_weights`), and keeps that cut when it separates less than a third of the
co-association the equal cut separates (:func:`choose_sizes`). MCLA and WOMC weight each meta-graph vertex by its cluster's size
(Strehl & Ghosh), so their meta-clusters cover about equal numbers of objects; ``balance="clusters"``
gives unit weights instead (ClusterEnsembles), which suits data with very unequal classes.

Order and name invariance: cluster vertices (MCLA, HBGF, WOMC, WOHB) are put in a canonical order
that depends on the clusters' members only (:func:`canonical_cluster_order`), so renaming the
clusters of a partition or reordering the partitions yields the same graph and the same labels.

Layout
------
One private module per concern, all read through this package: ``_checks`` (argument checks,
memory figures, the canonical cluster order), ``_metis`` (the METIS call, integer edge weights,
the functions every cut shares), ``_meta`` (MCLA's meta-graph and meta-clusters), ``_merge`` (hash
mixing, identical-row merging), ``_bipartite`` (the HBGF graph and its bipartite cut), ``_sizes``
(the ``sizes`` option and the cluster estimate of WOSP and the other graph methods) and ``_tcut``
(the transfer cut, its graph read from label codes, and its BLAS thread control).
"""
from cclust.ensemble import identical_label_rows, number_by_first
from cclust._linkage import cut_dendrogram
from cclust.graph._checks import (
    BALANCES,
    DENSE_GRAPH_ENTRY_BYTES,
    canonical_cluster_order,
    check_balance,
    check_dense_budget,
    check_graph_inputs,
    check_n_neighbors,
    check_ufactor,
    dense_graph_bytes,
    metis_bytes,
)
from cclust.graph._metis import (
    EDGE_WEIGHT_RESOLUTION,
    argmax_random_ties,
    honour_n_clusters,
    integer_edge_weights,
    csr_of_blocks,
    partition_graph,
    symmetric_graph,
    top_neighbor_graph,
)
from cclust.graph._merge import MERGE_CAP_DIVISOR, cap_groups, identical_rows, merge_cap, mix64
from cclust.graph._bipartite import (
    BIPARTITE_BYTES_PER_ENTRY,
    bipartite_affinity,
    bipartite_bytes,
    bipartite_partition,
    has_empty_part,
    hbgf_graph,
    hbgf_graph_edges,
    one_hot_in_order,
    partition_bipartite_groups,
    require_hbgf_graph,
)
from cclust.graph._sizes import (
    AUTO_CUT_RATIO,
    ESTIMATED_UFACTOR,
    PARTS_PER_CLUSTER,
    FINE_CUTS,
    SIZE_WEIGHT_UNIT,
    SIZES,
    UNCHECKED_ESTIMATE_BYTES,
    check_sizes,
    choose_sizes,
    cut_with_sizes,
    estimate_bytes,
    estimate_clusters,
    estimate_route,
    object_size_weights,
    require_estimate_memory,
    separated_coassociation,
    size_weights,
)
from cclust.graph._meta import meta_cluster, meta_graph
from cclust.graph._tcut import BLAS_TEAM_FROM, TCUT_DENSE_MAX, TransferCut, blas_team, one_blas_thread, tcut

__all__ = ["EDGE_WEIGHT_RESOLUTION", "BALANCES", "MERGE_CAP_DIVISOR", "SIZES", "AUTO_CUT_RATIO",
           "ESTIMATED_UFACTOR", "PARTS_PER_CLUSTER", "SIZE_WEIGHT_UNIT", "check_graph_inputs",
           "check_ufactor", "check_balance", "check_n_neighbors", "dense_graph_bytes", "metis_bytes",
           "check_dense_budget", "DENSE_GRAPH_ENTRY_BYTES",
           "canonical_cluster_order", "integer_edge_weights", "partition_graph", "symmetric_graph", "csr_of_blocks", "honour_n_clusters",
           "argmax_random_ties", "top_neighbor_graph", "meta_graph", "meta_cluster", "mix64",
           "identical_rows", "cap_groups", "bipartite_partition", "merge_cap", "partition_bipartite_groups",
           "bipartite_affinity", "has_empty_part", "identical_label_rows", "number_by_first",
           "one_hot_in_order", "hbgf_graph", "hbgf_graph_edges", "require_hbgf_graph", "check_sizes", "separated_coassociation", "choose_sizes",
           "estimate_clusters", "estimate_route", "estimate_bytes", "require_estimate_memory", "FINE_CUTS",
           "UNCHECKED_ESTIMATE_BYTES", "bipartite_bytes", "BIPARTITE_BYTES_PER_ENTRY",
           "size_weights", "object_size_weights", "cut_with_sizes", "TransferCut", "tcut", "one_blas_thread", "blas_team", "BLAS_TEAM_FROM", "cut_dendrogram",
           "TCUT_DENSE_MAX"]
