"""Evaluate, trim and reweigh the algorithms of a heterogeneous ensemble (diceR's ``consensus_evaluate``).

Chiu & Talhouk (2018) score every algorithm of a heterogeneous ensemble on internal validity
indices, rank the algorithms on each index, aggregate the rankings into one list, keep the top
``n`` algorithms ("trim") and weight what is left by how well it ranked ("reweigh"). Here:

1. **One labelling per algorithm.** The algorithms are the distinct values of
   :attr:`cclust.Ensemble.provenance`, in order of first appearance. Each algorithm's partitions
   are fused into one K-cluster labelling by a registered consensus function (default ``eac``:
   average linkage of ``1 - co-association``, the final step of Monti et al. 2003). diceR does
   the same with average linkage of the Euclidean distances between rows of the consensus
   matrix; we cluster ``1 - M`` itself, as ConsensusClusterPlus (Wilkerson & Hayes 2010) does,
   so that partitions with missing labels (subsamples) count per co-sampled pair.
2. **Indices** of each algorithm's labelling (:data:`INDICES`): silhouette (Rousseeuw 1987),
   Calinski-Harabasz (Calinski & Harabasz 1974) and Davies-Bouldin (Davies & Bouldin 1979),
   all three by scikit-learn's functions; compactness (Nguyen & Caruana 2007, eq. 11;
   diceR's ``compactness``), connectivity (Handl, Knowles & Kell 2005; clValid's
   ``connectivity`` with L = 10, as diceR calls it; :func:`connectivity`) and the consensus score (average NMI with every partition of the
   whole ensemble, Nguyen & Caruana 2007, eq. 4). With ``labels_true``, the external ARI and NMI
   are reported as well; like diceR, they are never used for ranking.
3. **Rank aggregation.** On each index the algorithms are ranked (1 = best; ties get their
   mean rank). An index that is NaN for some algorithm (e.g. silhouette of a one-cluster
   labelling) is left out of the ranking, as diceR leaves out NaN indices. diceR then calls
   ``RankAggreg(method="GA")``, a genetic search for the ordering that minimises the summed
   Spearman footrule distance to the per-index orderings. We find that ordering exactly and
   deterministically: the footrule-optimal full ranking is an assignment problem (Dwork et
   al. 2001), cost of putting algorithm a at position p = ``sum_index |rank_index(a) - p|``,
   solved by :func:`scipy.optimize.linear_sum_assignment`. Ties between optimal orderings go
   to the lower mean rank, then to the algorithm seen first.
4. **Trim** keeps the partitions of the ``n_keep`` best algorithms of that ordering; with
   ``n_keep`` or fewer algorithms nothing is trimmed (diceR's rule).
5. **Reweigh** gives algorithm a, at position p among the m algorithms present, the total
   weight ``(m + 1 - p) / (m (m + 1) / 2)`` (Borda points), shared among its partitions in
   proportion to their current weights. diceR instead weights an algorithm by its average share
   of each index's column sum; for indices where lower is better (Davies-Bouldin, compactness)
   that gives the worse algorithm the larger weight, and silhouette's sign can flip the share,
   so we weight by the aggregated rank, which is what diceR's documentation describes.
6. **Several K** (diceR's ``nk = c(...)``): :func:`evaluate` with a list of K, or a dict of one
   ensemble per K, evaluates every (algorithm, K) combination. Following diceR's code
   (``consensus_evaluate``, ``choose_k``, ``consensus_trim``): PAC of each algorithm's consensus
   matrix at each K with ``lower = 0, upper = 1``; the K trimming uses is the number of classes
   of ``labels_true``, else the K most algorithms find least ambiguous (each votes for its K of
   lowest PAC; ties to the smaller K), or ``k_method``; trim and reweigh act per chosen K on the
   ranking within that K. Beyond diceR, every combination is also ranked jointly on the
   indices, and the K of the best one is reported as :attr:`MultiKEvaluation.best_k`.
7. **Past the dense budget** the default ``eac`` fuses on its sparse route (single linkage of
   the kNN co-association graph, linear memory); see ``matrix`` in :func:`evaluate`.

Layout
------
One private module per concern, all read through this package: ``_indices`` (the validity
indices, :func:`connectivity` and the rank aggregation), ``_result`` (:class:`EvaluationResult`
and :class:`MultiKEvaluation`), ``_evaluate`` (:func:`evaluate` at one K and at several K) and
``_trim`` (:func:`trim` and :func:`reweigh`).
"""
from cclust.evaluation._indices import (
    EXTERNAL,
    INDICES,
    aggregate_ranks,
    connectivity,
    internal_indices,
    nearest_neighbors_in_order,
)
from cclust.evaluation._result import EvaluationResult, MultiKEvaluation
from cclust.evaluation._evaluate import SPARSE_NEIGHBORS, evaluate
from cclust.evaluation._trim import reweigh, trim

__all__ = ["INDICES", "EvaluationResult", "MultiKEvaluation", "evaluate", "trim", "reweigh", "aggregate_ranks", "connectivity"]
