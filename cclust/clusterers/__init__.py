"""Any clusterer as a basic-partition generator, the presets by name, and heterogeneous ensembles.

The generators here run a clustering algorithm once per partition, as Monti et al. (2003) and
ConsensusClusterPlus (Wilkerson & Hayes 2010) do with their "inner" clusterer and diceR (Chiu &
Talhouk 2018) with each of its algorithms:

* :func:`estimator` takes any scikit-learn compatible clusterer (an object with ``fit_predict``,
  or ``fit`` and ``labels_``) or a function ``f(X, k, random_state) -> labels``;
* the presets (:func:`hierarchical`, :func:`pam`, :func:`spectral`, :func:`gmm`,
  :func:`hdbscan`, :func:`dbscan`, :func:`affinity_propagation`, :func:`birch`,
  :func:`minibatch_kmeans`) are :func:`estimator` with the algorithm chosen by name, each
  registered under the literature's name;
* :func:`heterogeneous` concatenates the ensembles of several generators, recording in
  :attr:`cclust.Ensemble.provenance` which algorithm made each partition.

What partition j does, in this order, with the generator drawn from its own child of the seed
(so the ensemble is the same for any ``n_jobs``): draw K_j uniformly from ``k_range``; if
``p_item < 1``, sample ``floor(p_item * n)`` objects without replacement (the others get the
missing label -1, as in ConsensusClusterPlus); if ``p_feature < 1``, sample
``max(1, floor(p_feature * d))`` features; draw the seed ``s = integers(2**31 - 1)``; clone the
clusterer, set its K parameter (``n_clusters`` or ``n_components``) to K_j and its
``random_state`` to ``s`` where it has them, and cluster the sample. Labels below 0 (the noise
of DBSCAN and HDBSCAN) become missing labels.

:class:`KMedoids` is the PAM of Kaufman & Rousseeuw (1990), BUILD then SWAP, vectorised over
the dissimilarity matrix; it is the ``pam`` preset. Every other preset is scikit-learn's
estimator (``pip install 'cclust[sklearn]'``).

Layout
------
One private module per concern, all read through this package: ``_kmedoids``
(:class:`KMedoids`), ``_clusterer`` (one clusterer run once per partition: the wrapper, its
memory figures, :data:`PRESETS`, :func:`dbscan_eps`), ``_presets`` (:func:`estimator` and the
registered presets) and ``_heterogeneous`` (:func:`heterogeneous`).
"""
from cclust.clusterers._kmedoids import KMedoids
from cclust.clusterers._clusterer import PRESETS, dbscan_eps
from cclust.clusterers._presets import (
    affinity_propagation,
    birch,
    dbscan,
    estimator,
    gmm,
    hdbscan,
    hierarchical,
    minibatch_kmeans,
    pam,
    spectral,
)
from cclust.clusterers._heterogeneous import DEFAULT_GENERATORS, heterogeneous

__all__ = ["KMedoids", "PRESETS", "estimator", "heterogeneous", "hierarchical", "pam", "spectral", "gmm",
           "hdbscan", "dbscan", "affinity_propagation", "birch", "minibatch_kmeans"]
