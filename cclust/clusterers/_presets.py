"""The generators that run one clusterer per partition: :func:`estimator` (any clusterer) and
the presets registered by name (:func:`hierarchical`, :func:`pam`, :func:`spectral`, ...)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy.typing as npt

from cclust.clusterers._clusterer import _Clusterer, _generate_with
from cclust.ensemble import Ensemble
from cclust.validation import RandomStateLike


_COMMON_DOC = """
    n_partitions : int, default=100
    k_range : (int, int), default=None
        Inclusive range K_j is drawn from for partition j; default ``(K, K)``, the K asked
        for (as ConsensusClusterPlus clusters at each K). Ignored by algorithms that find K
        themselves.
    p_item : float in (0, 1], default=1.0
        Fraction of the objects each partition clusters (ConsensusClusterPlus's ``pItem``):
        ``floor(p_item * n)`` drawn without replacement; the others get the missing label -1.
    p_feature : float in (0, 1], default=1.0
        Fraction of the features each partition uses (``pFeature``): ``max(1, floor(p_feature * d))``.
    fewer_clusters : {"error", "warn", "keep"}, default="error"
        What to do when an algorithm whose K is a parameter returns fewer clusters than asked
        (a Gaussian mixture with an empty component, say): raise, keep the partition with a
        warning that counts them, or keep it silently.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Partitions computed in parallel threads; None uses every core
        (:func:`cclust.validation.default_threads`), -1 every core whatever the environment says. The ensemble is
        identical for any value.
    verbose : int, default=0
        1 draws a progress bar over the partitions (on a terminal only).
    max_bytes : int, default=None
        Memory budget of one partition's largest array, asked before any partition runs
        (:func:`cclust.validation.require_memory`; None: ``CCLUST_MEMORY_BUDGET`` or 2 GiB). It
        applies to the clusterers whose memory grows past O(m) on a sample of m objects:
        hierarchical (m (m - 1) / 2 distances), spectral with a dense affinity, affinity
        propagation, pam, HDBSCAN's brute-force route, and the Gaussian mixture's K d x d
        covariances; an estimator object of those scikit-learn classes is asked the same.
"""


def _doc(text):
    return text.replace("    {common}\n", _COMMON_DOC.lstrip("\n"))


def estimator(X: npt.ArrayLike, n_clusters: int, *, estimator: str | Any = "hierarchical",
              estimator_params: Mapping[str, Any] | None = None, n_partitions: int = 100,
              k_range: tuple[int, int] | None = None, p_item: float = 1.0, p_feature: float = 1.0,
              fewer_clusters: str = "error", random_state: RandomStateLike = None, n_jobs: int | None = None,
              verbose: int = 0, max_bytes: int | None = None) -> Ensemble:
    return _generate_with(_Clusterer(estimator, dict(estimator_params or {}), "estimator", max_bytes), X, n_clusters,
                          n_partitions=n_partitions, k_range=k_range, p_item=p_item, p_feature=p_feature,
                          fewer_clusters=fewer_clusters, random_state=random_state, n_jobs=n_jobs, verbose=verbose,
                          max_bytes=max_bytes)


estimator.__doc__ = _doc("""Any clusterer, once per partition: a scikit-learn estimator, a preset or a function.

    The resampling protocol of Monti et al. (2003) as ConsensusClusterPlus runs it (Wilkerson &
    Hayes 2010): each partition clusters a sample of the objects (``p_item``) and/or of the
    features (``p_feature``) with the inner clusterer at K_j; objects out of the sample are
    missing from that partition. Partition j draws, from its own child of the seed and in this
    order, K_j, the objects, the features and the estimator's seed (see :mod:`cclust.clusterers`).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        K; sets the default ``k_range``.
    estimator : str, estimator or callable, default="hierarchical"
        A preset name (``hierarchical``, ``pam``, ``spectral``, ``gmm``, ``hdbscan``,
        ``dbscan``, ``affinity-propagation``, ``birch``, ``minibatch-kmeans``; the default is
        ConsensusClusterPlus's inner clusterer, average-linkage hierarchical clustering); an
        object with ``fit_predict``, or ``fit`` and ``labels_``, cloned for each partition
        (``sklearn.base.clone`` when scikit-learn is installed), its ``n_clusters`` or
        ``n_components`` set to K_j and its ``random_state`` to the partition's seed; or a
        function ``f(X, k, random_state) -> labels`` (``random_state`` an int). Labels must be
        integers; -1 (noise) becomes a missing label. Algorithms without a K parameter (DBSCAN,
        HDBSCAN, affinity propagation) find K themselves: K_i is whatever they find.
    estimator_params : dict, default=None
        Parameters of a preset's estimator (e.g. ``{"linkage": "ward"}``).
    {common}
    Returns
    -------
    Ensemble of shape (n_samples, n_partitions)
        With ``provenance`` the preset's name (``hierarchical-average`` for the default), the
        estimator's class name or the function's name.

    Raises
    ------
    ValidationError
        For an estimator without ``fit``/``fit_predict``, labels of the wrong length, float or
        string labels, fewer clusters than asked (unless ``fewer_clusters`` says otherwise), a
        partition of noise only, or ``p_item``/``p_feature`` outside (0, 1].

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, _ = load_iris()
    >>> E = cclust.generate("estimator", X, 3, estimator="pam", n_partitions=4, p_item=0.8, random_state=0)
    >>> E.shape, E.provenance[0], int((E.labels == -1).sum(axis=0)[0])
    ((150, 4), 'pam', 30)
    """)


def _preset_call(name, X, n_clusters, params, options):
    return _generate_with(_Clusterer(name, params, name, options.get("max_bytes")), X, n_clusters, **options)


def hierarchical(X: npt.ArrayLike, n_clusters: int, *, linkage: str = "average", metric: str = "euclidean",
                 n_partitions: int = 100, k_range: tuple[int, int] | None = None, p_item: float = 1.0,
                 p_feature: float = 1.0, fewer_clusters: str = "error", random_state: RandomStateLike = None,
                 n_jobs: int | None = None, verbose: int = 0, max_bytes: int | None = None, **params: Any) -> Ensemble:
    """Agglomerative hierarchical clustering cut at K_j, once per partition.

    scikit-learn's ``AgglomerativeClustering``; ``linkage="average"`` is ConsensusClusterPlus's
    default inner clusterer (Wilkerson & Hayes 2010), ``"complete"``, ``"single"`` and
    ``"ward"`` (Euclidean only) are the others. Deterministic for a given sample: with
    ``p_item = p_feature = 1`` every partition is the same unless ``k_range`` varies K.
    Parameters as :func:`estimator`; further keywords go to ``AgglomerativeClustering``.
    Provenance: ``hierarchical-<linkage>``.
    """
    return _preset_call("hierarchical", X, n_clusters, dict(params, linkage=linkage, metric=metric), dict(
        n_partitions=n_partitions, k_range=k_range, p_item=p_item, p_feature=p_feature,
        fewer_clusters=fewer_clusters, random_state=random_state, n_jobs=n_jobs, verbose=verbose,
        max_bytes=max_bytes))


def _make_preset(name, doc):
    def preset(X: npt.ArrayLike, n_clusters: int, *, n_partitions: int = 100, k_range: tuple[int, int] | None = None,
               p_item: float = 1.0, p_feature: float = 1.0, fewer_clusters: str = "error",
               random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0,
               max_bytes: int | None = None, **params: Any) -> Ensemble:
        return _preset_call(name, X, n_clusters, params, dict(
            n_partitions=n_partitions, k_range=k_range, p_item=p_item, p_feature=p_feature,
            fewer_clusters=fewer_clusters, random_state=random_state, n_jobs=n_jobs, verbose=verbose,
            max_bytes=max_bytes))

    preset.__name__ = preset.__qualname__ = name.replace("-", "_")
    preset.__doc__ = doc + ("\n\n    Parameters as :func:`estimator` (``max_bytes`` included); further keywords go to "
                            "the estimator.\n")
    return preset


pam = _make_preset("pam", """k-medoids by PAM (Kaufman & Rousseeuw 1990), once per partition.

    :class:`KMedoids` (BUILD + SWAP on Euclidean distances; ``metric=`` takes any of
    ``scipy.spatial.distance.cdist``'s). PAM is deterministic, so partitions differ only
    through ``k_range``, ``p_item`` and ``p_feature``: ConsensusClusterPlus's ``pam`` with
    ``pItem = 0.8`` is ``pam(X, K, p_item=0.8)``.""")
spectral = _make_preset("spectral", """Spectral clustering (Ng et al. 2001), once per partition.

    scikit-learn's ``SpectralClustering`` (RBF affinity by default), seeded per partition.""")
gmm = _make_preset("gmm", """Gaussian mixture, once per partition: each object to its most probable component.

    scikit-learn's ``GaussianMixture`` with ``n_components = K_j``, seeded per partition (EM from
    a k-means start). A component can end up with no object: see ``fewer_clusters``.""")
hdbscan = _make_preset("hdbscan", """HDBSCAN (Campello et al. 2013), once per partition; noise points are missing labels.

    scikit-learn's ``HDBSCAN``. It finds K itself, so it is never held to K_j; its noise points
    (label -1) are missing from that partition. ``min_cluster_size=None`` (the default) is
    scikit-learn's 5, lowered to ``max(2, m // K_j)`` for a sample of m < 5 K_j objects, where
    clusters of 5 could not all exist.""")
dbscan = _make_preset("dbscan", """DBSCAN (Ester et al. 1996), once per partition; noise points are missing labels.

    scikit-learn's ``DBSCAN``. It finds K itself (``n_clusters`` and ``k_range`` are not used).
    ``eps=None`` (the default) takes, in each partition's sample, the median distance of the
    objects to their ``min_samples``-th nearest neighbour (:func:`dbscan_eps`), so that about
    half are core points; give ``eps`` to fix it.""")
affinity_propagation = _make_preset("affinity-propagation", """Affinity propagation (Frey & Dueck 2007), once per partition.

    scikit-learn's ``AffinityPropagation``, seeded per partition. It finds K itself (through
    ``preference``); ``n_clusters`` and ``k_range`` are not used. A run that does not converge
    labels every object -1 and is refused: raise ``max_iter`` or ``damping``.""")
birch = _make_preset("birch", """BIRCH (Zhang et al. 1996), once per partition: CF-tree subclusters grouped into K_j.

    scikit-learn's ``Birch`` (``threshold=0.5``: scale X first). Deterministic for a given
    sample.""")
minibatch_kmeans = _make_preset("minibatch-kmeans", """Mini-batch k-means (Sculley 2010), once per partition.

    scikit-learn's ``MiniBatchKMeans`` with its defaults, seeded per partition.""")
