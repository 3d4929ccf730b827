"""Choosing the number of clusters: Monti et al.'s resampling consensus matrix, its CDF, the
delta-area curve, PAC, and item and cluster consensus.

For every K, ``n_resamples`` random subsamples of the objects are clustered at K (by one k-means
or hierarchical clustering each, Monti et al.'s protocol as ConsensusClusterPlus runs it, or by
a consensus function over generated partitions), and the consensus matrix ``M_K(i, j)`` (Monti
et al. 2003, eq. 2-3) counts how often i and j were put in the same cluster among the resamples
that drew both. A stable K gives entries near 0 and 1; the empirical CDF of the entries, the area
under it, the relative growth of that area (delta area) and the proportion of ambiguous entries
(PAC, Şenbabaoğlu et al. 2014) summarise how far from 0/1 the entries are. The passes live in
:mod:`cclust._monti`.

Layout
------
One private module per concern, all read through this package: ``_select_k`` (:func:`select_k`
and its AnnData and sketch entry points), ``_resampling`` (the runs at one K), ``_recommend``
(the curves and the rules that recommend K), ``_result`` (:class:`SelectKResult`), ``_html``
(its HTML page and the sections the report shares), ``_gap`` (:func:`gap_statistic`, Tibshirani,
Walther & Hastie 2001) and ``_stability`` (:func:`cluster_stability`, Hennig 2007);
:func:`format_p`, the one way a p-value is written, lives with the p-values in
:mod:`cclust._reference`.
"""
from cclust._reference import format_p
from cclust.selection._result import SelectKResult
from cclust.selection._gap import GapResult, gap_statistic
from cclust.selection._stability import STABILITY_SCHEMES, ClusterStability, cluster_stability
from cclust.selection._recommend import consensus_area, delta_area, resolve_null
from cclust.selection._resampling import RESAMPLES_PLAIN, RESAMPLES_WITH_NULL
from cclust.selection._select_k import CRITERIA, DEFAULT_REFERENCES, INNER_STARTS_WITH_NULL, select_k

__all__ = ["CRITERIA", "ClusterStability", "GapResult", "SelectKResult", "cluster_stability", "gap_statistic",
           "select_k"]
