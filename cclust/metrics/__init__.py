"""External and consensus criteria, all computed from contingency tables.

Every metric that compares two labellings is written once, as a function of their contingency
table in a private module (``_pair_counting.ari_from_table``, whose name is public there because
the sketched ``select_k`` reads it too; ``_nmi_from_table``, ...). The public label-level
functions build that table with one O(n) pass of the compiled core and call it;
:func:`consensus_score` builds the table of a labelling against every partition of an
:class:`~cclust.Ensemble` with one compiled pass and calls the same function on each block.

Conventions
-----------
* A table's rows are the clusters of the first labelling (``labels_true``), its columns those
  of the second (``labels_pred``), as in ``sklearn.metrics.cluster.contingency_matrix``.
* Rows or columns that sum to zero are ignored (they occur in a consensus block when every
  object of a cluster is missing from that partition): a metric of a block is the metric of the
  objects that partition labels.
* Logarithms are natural. Edge cases (a single cluster on both sides, every object in its own
  cluster, one object) give the values scikit-learn gives; the one documented difference is
  :func:`ami` in the 0/0 case described there.
* A table with more than ``max(n_samples, 2**22)`` cells is kept sparse (sorted cell keys,
  O(n log n)) so that thousands of clusters on both sides cannot exhaust memory; every result is
  the same either way.

Layout
------
One private module per concern, all read through this package: ``_tables`` (contingency
tables and their readers), ``_pair_counting`` (ARI, Rand), ``_information`` (NMI, AMI, VI),
``_set_matching`` (van Dongen, accuracy), ``_membership`` (membership matrices and clue's
matched distances), ``_clue_measures`` (clue's other measures), ``_criteria`` (criteria on X)
and ``_consensus`` (:func:`consensus_score`).
"""
from cclust.metrics._tables import contingency_table
from cclust.metrics._pair_counting import ari, rand
from cclust.metrics._information import ami, nmi, vi
from cclust.metrics._set_matching import accuracy, van_dongen
from cclust.metrics._membership import (
    MEMBERSHIP_ROW_TOL,
    angle,
    diag,
    euclidean_agreement,
    euclidean_distance,
    mallows_distance,
    manhattan_agreement,
    manhattan_distance,
    membership_matrix,
)
from cclust.metrics._clue_measures import (
    boorman_arabie_a,
    boorman_arabie_c,
    boorman_arabie_d,
    boorman_arabie_e,
    comembership_distance,
    cssd,
    fowlkes_mallows,
    gv1_distance,
    jaccard,
    katz_powell,
    prediction_strength,
    purity,
    symdiff_distance,
)
from cclust.metrics._criteria import compactness, kmeans_objective
from cclust.metrics._consensus import DISSIMILARITIES, consensus_score, higher_is_better

__all__ = [
    "accuracy",
    "ami",
    "ari",
    "compactness",
    "consensus_score",
    "angle",
    "boorman_arabie_a",
    "boorman_arabie_d",
    "boorman_arabie_c",
    "boorman_arabie_e",
    "comembership_distance",
    "cssd",
    "gv1_distance",
    "higher_is_better",
    "prediction_strength",
    "symdiff_distance",
    "contingency_table",
    "diag",
    "euclidean_agreement",
    "euclidean_distance",
    "fowlkes_mallows",
    "jaccard",
    "katz_powell",
    "mallows_distance",
    "manhattan_agreement",
    "manhattan_distance",
    "membership_matrix",
    "purity",
    "kmeans_objective",
    "nmi",
    "rand",
    "van_dongen",
    "vi",
]

# The public names live here: their documentation, doctests, pickles and registry targets
# ("cclust.metrics:ari") all name this package, not the private module that defines them.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
