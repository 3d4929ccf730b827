"""Figures of consensus clusterings (optional dependency: matplotlib, ``pip install 'cclust[plot]'``).

* :func:`plot_consensus_matrix` — the co-association (or any consensus) matrix as a heatmap,
  objects ordered by their consensus label so that clusters show as blocks on the diagonal.
* :func:`plot_consensus_cdf`, :func:`plot_delta_area`, :func:`plot_pac` and :func:`plot_select_k`
  — Monti et al.'s consensus CDF and delta-area curves and the PAC of Senbabaoglu et al. for the
  result of :func:`cclust.select_k`.
* :func:`plot_cluster_stability` — per cluster at one K, ConsensusClusterPlus's cluster
  consensus beside the mean Jaccard of Hennig (2007), with its readings.
* :func:`plot_consensus_heatmap` and :func:`plot_tracking` — Monti et al.'s consensus heatmap at
  one K with its dendrogram and cluster colour bar, and ConsensusClusterPlus's tracking plot of
  every object's cluster across K.
* :func:`plot_confidence` — how sure the ensemble is of each object, on a 2-D embedding, with
  :func:`object_confidence` (the fraction of partitions agreeing with the consensus).
* :func:`plot_method_comparison` — a bar chart of a score per consensus method.
* :func:`plot_markers` — the dot plot of :func:`cclust.markers`: each cluster's best features,
  their score (colour) and AUROC (size) in every cluster.
* :func:`plot_resolution` — the stability of every resolution's clusters under subsampling,
  from :func:`cclust.choose_resolution`, with the recommended resolution marked.
* :func:`plot_memberships` — soft partitions (Hornik 2005): a membership matrix (objects x
  clusters, objects sorted by their hard label) of a soft result (``extras["membership"]``), of
  one partition of a :class:`cclust.soft.SoftEnsemble` or of all of them side by side.
  :func:`plot_consensus_matrix` draws a SoftEnsemble's expected co-membership; the plots built
  on hard labels (:func:`object_confidence`, :func:`plot_confidence`) refuse fractional
  memberships and say which plot to use instead.

Notes
-----
* matplotlib is imported inside the functions, so ``import cclust.plotting`` costs nothing and
  works without it; a call without it raises ``ImportError`` saying what to install.
* No pyplot: a function given ``ax=None`` builds a ``matplotlib.figure.Figure`` of its own, so
  nothing here selects a backend, opens a window or touches pyplot's current figure. Save with
  ``ax.figure.savefig(path)``; in a notebook, display ``ax.figure``.
* Each function returns the Axes it drew on (the Figure for the multi-panel
  :func:`plot_select_k`), so callers can restyle it.

Layout
------
One private module per kind of figure, all read through this package: ``_consensus_matrix``,
``_select_k`` (the select_k panels, heatmap and tracking plot), ``_confidence``,
``_comparison`` (method comparison, evaluation ranks), ``_memberships``, ``_markers`` and ``_resolution``; ``_common`` holds
what they share.
"""
from cclust.plotting._consensus_matrix import plot_consensus_matrix
from cclust.plotting._select_k import (
    plot_cluster_stability,
    plot_consensus_cdf,
    plot_consensus_heatmap,
    plot_delta_area,
    plot_pac,
    plot_reference_null,
    plot_select_k,
    plot_tracking,
)
from cclust.plotting._confidence import object_confidence, plot_confidence
from cclust.plotting._comparison import plot_evaluation, plot_method_comparison
from cclust.plotting._memberships import plot_memberships
from cclust.plotting._markers import plot_markers
from cclust.plotting._resolution import plot_resolution

__all__ = [
    "object_confidence",
    "plot_confidence",
    "plot_consensus_cdf",
    "plot_consensus_heatmap",
    "plot_consensus_matrix",
    "plot_delta_area",
    "plot_evaluation",
    "plot_markers",
    "plot_memberships",
    "plot_method_comparison",
    "plot_pac",
    "plot_select_k",
    "plot_cluster_stability",
    "plot_reference_null",
    "plot_resolution",
    "plot_tracking",
]

# The public names live here: their documentation, doctests and pickles name this package, not
# the private module that defines them.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
