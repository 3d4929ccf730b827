"""select_k: Monti et al.'s resampling protocol (or a consensus function over generated
partitions) at every K, judged against a reference null when one is asked for, and its entry
points for an AnnData and for sketches of the objects."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cclust._progress import progress
from cclust.validation import check_distinct_rows, check_float, check_int, check_n_jobs
from cclust.errors import ValidationError
from cclust._pipeline import (
    RESERVED_METHOD,
    check_name,
    check_pac_interval,
    check_params_dict,
    check_sampling_weights,
    child_seeds,
    object_index,
    validate_X,
)
from cclust.selection._result import SelectKResult
from cclust.validation import RandomStateLike
from cclust.selection._gap import gap_statistic
from cclust.selection._stability import ClusterStability
from cclust.selection._recommend import (
    _check_k_range,
    _edge_warning,
    _recommend,
    _recommend_gap,
    _recommend_rcsi,
    consensus_area,
    delta_area,
    resolve_null,
)
from cclust.selection._resampling import (
    RESAMPLES_PLAIN,
    RESAMPLES_WITH_NULL,
    _fused_runs,
    _inner_algorithm,
    _per_k_params,
)
from cclust.selection._sketched import reference_offered, select_k_on_sketches, shared_reference_pacs

if TYPE_CHECKING:
    from anndata import AnnData


#: The rules select_k can recommend K by ("rcsi" needs a reference null; "gap" the features).
CRITERIA = ("rcsi", "pac", "delta_area", "objective", "gap")

#: Reference data sets of the default null: measured in docs/benchmarks.md ("select_k's
#: reference null") to keep the default within 3x the plain protocol's time.
DEFAULT_REFERENCES = 10


#: k-means runs per resample with the reference null (the best of them kept): measured in
#: docs/benchmarks.md ("select_k's reference null") for the power on blobs; the plain protocol
#: keeps ConsensusClusterPlus's one run.
INNER_STARTS_WITH_NULL = 3

#: ``sketch="auto"``: above this many objects the Monti protocol runs on sketches, by default.
#: At 20000 objects the sparse route on every object costs about as much as two sketches of
#: AUTO_SKETCH objects, and its cost grows with n where theirs does not (docs/benchmarks.md,
#: "select_k on a sketch").
SKETCH_FROM = 20000

#: The objects per sketch and the sketches drawn when ``sketch="auto"`` sketches. Two sketches
#: of 2000 choose the same K with the same ARI as two of 5000 on the blobs of docs/benchmarks.md
#: (10^5 objects, K = 6 and 8, the smallest cluster 2%) in a third of the CPU time ("select_k's
#: default at scale, and SC3s"); ``sketch=5000`` gives the former default.
AUTO_SKETCH = 2000
AUTO_SKETCHES = 2

def select_k(data: Any, k_range: Iterable[int] = range(2, 9), *, method: str = "monti", inner: str = "kmeans",
             inner_params: Mapping[str, Any] | None = None, generator: str = "kmeans", n_partitions: int = 50,
             n_resamples: int | None = None, subsample: float = 0.8, method_params: Mapping[str, Any] | None = None,
             generator_params: Mapping[str, Any] | Callable[..., Any] | None = None, feature_subsample: float = 1.0,
             item_weights: npt.ArrayLike | None = None, feature_weights: npt.ArrayLike | None = None,
             criterion: str | None = None, pac_interval: tuple[float, float] = (0.1, 0.9),
             labels_from: str = "consensus", matrix: str = "auto", pair_tolerance: float | None = None,
             null: str | None = "auto", n_references: int | None = None, alpha: float = 0.05,
             gap_rule: str = "Tibs2001SEmax", distance: str = "euclidean", inner_linkage: str = "average",
             final_linkage: str = "average", sketch: str | int | None = "auto", sketch_method: str = "geometric",
             n_sketches: int | None = None, propagation: str = "centroid", random_state: RandomStateLike = None,
             n_jobs: int | None = None, verbose: int = 0, keep_matrices: bool = False, max_bytes: int | None = None,
             missing_features: str = "error", layer: str | None = None, use_rep: str | None = None,
             key_added: str = "cclust", copy: bool = False) -> SelectKResult | AnnData | None:
    """Recommend a number of clusters by resampling consensus (Monti et al. 2003) judged against
    a reference null (John et al. 2020): K = 1, "no cluster structure", is a possible answer.

    By default this is Monti et al.'s protocol as ConsensusClusterPlus runs it (Wilkerson &
    Hayes 2010): ``n_resamples`` times, a random ``subsample`` fraction of the objects is drawn
    (``floor(subsample * n)`` of them, without replacement; the same draws for every K) and
    clustered at exactly K by the ``inner`` clusterer. The consensus matrix

        M_K(i, j) = #(resamples putting i and j in one cluster) / #(resamples drawing both)

    (Monti et al. 2003, eq. 3; 0 for a pair never drawn together, as in ConsensusClusterPlus) is
    summarised by:

    * the empirical CDF of its entries ``M_K(i, j)`` over all pairs i < j, on the grid
      0, 0.01, ..., 1 (ConsensusClusterPlus's 100-bin histogram);
    * the area under the CDF, ``A(K) = sum_{j=1}^{100} 0.01 CDF(j / 100)`` (Monti et al.'s
      ``sum_i (x_i - x_{i-1}) CDF(x_i)`` on that grid, ConsensusClusterPlus's ``areaK``);
    * the delta area: ``A(K_1)`` for the smallest K tried, then ``(A(K) - A(K_prev)) /
      A(K_prev)``, as ConsensusClusterPlus plots it;
    * PAC, the proportion of ambiguous clustering ``CDF(u2) - CDF(u1)`` for ``pac_interval =
      (u1, u2)``, the share of entries in ``(u1, u2]`` (Şenbabaoğlu et al. 2014), computed from
      the entries themselves;
    * item and cluster consensus (ConsensusClusterPlus's ``calcICL``; Monti et al. 2003, sec.
      3.3): for the final clusters at K, ``m(k)`` is the mean of M over the pairs of members of
      cluster k, and ``m_i(k)`` the mean of ``M(i, j)`` over the members j != i of cluster k.

    The labels at each K come from the consensus matrix: the average-linkage tree of ``1 - M``
    cut at K (ConsensusClusterPlus's ``finalLinkage="average"``), clusters numbered in order of
    their first object.

    With ``method`` set to a registered consensus function (e.g. ``"kcc"``), each resample is
    instead clustered by generating ``n_partitions`` basic partitions of it with ``generator``
    and fusing them at K (when ``data`` is an Ensemble, its rows are taken instead); the same
    consensus matrix and summaries follow, and the method's own criterion of one fit on all the
    data is reported as ``objective``.

    **Past the memory budget** (``matrix="auto"``), nothing of size n x n is formed (memory
    linear in n): the CDF, area and PAC are estimated from ``0.25 / pair_tolerance^2`` random
    pairs (10^6 by default) whose consensus entries are computed exactly from the resamples'
    labels, so that their standard errors (``pac_se``, ``area_se``) are at most
    ``pair_tolerance``; when that is as many pairs as there are, every pair is read once and the
    values are exact (standard error 0). The labels are the average-linkage clusters of the
    exact consensus matrix of 2000 random landmark objects, every other object joining the
    landmark cluster it was clustered with most often. Item and cluster consensus are pooled
    ratios (the co-clustering counts summed over a cluster's members, over their co-sampling
    counts), read from contingency tables of each resample's labels against the clusters for
    every object; ConsensusClusterPlus's (the dense route's) mean of the ratios equals them when
    every pair was drawn together equally often (``subsample=1``). With ``keep_matrices`` each
    K's consensus matrix is the sparse graph of each object's 30 strongest entries
    (:meth:`cclust.Ensemble.knn_coassociation`). docs/guide/monti.rst compares the two routes.

    Every K uses the same resamples, and the seeds of K's runs depend only on ``random_state``
    and K, so a K gets the same numbers whatever else ``k_range`` holds.

    **Sketch, choose, propagate** (``sketch=s``; by default above 20000 objects, as two sketches
    of 2000, see ``sketch``; ``sketch=None`` runs on every object at any n): the whole protocol
    runs on ``s`` objects (by default the geometric sketch of Hie et al. 2019, which keeps rare
    regions of the principal subspace; ``sketch_method="uniform"``: a simple random sample),
    and every other object then joins the consensus cluster whose centroid is nearest
    (``propagation="knn"``: the cluster most of its 15 nearest sketch objects are in; the rules of
    :func:`cclust.predict`). With
    ``n_sketches >= 2`` that many independent sketches are run: the result is the first one's,
    with the K each chose (``sketch_best_k``) and, per K, the mean adjusted Rand index between
    the sketches' labels of all the objects (``sketch_agreement``), which says how much the
    answer depends on the sample. The reference null is drawn once, for the first sketch: the
    later sketches (of the same size, from the same objects, so of the same reference shape up
    to the sample) are judged against its reference PACs, which spares most of their time.

    **A dask array** as ``data`` (rows chunked, chunk sizes known) gives the same result as
    ``select_k(data.compute())``, for any chunking, scheduler and number of workers, without
    gathering it when a sketch is drawn: the default ``dask.distributed`` client's workers (or
    Dask's local scheduler) check the chunks for NaN and infinity, sum the principal axes and
    grid cubes of the geometric sketch in a fixed order of 4096-row blocks, gather the sketch's
    rows and label every object chunk by chunk; with a client, the protocol's k-means runs on
    the sketch (one task per K and resample) run on the workers too, each seeded by its K and
    resample; the sketch's draws and the consensus matrices stay here. Without a sketch the
    array is gathered (within ``max_bytes``).
    ``missing_features="mean"`` needs the gathered array. docs/guide/scaling.rst has the details.

    **The reference null** (``null="uniform"``, the default of the Monti protocol). PAC falls with K on data without
    any cluster, so the lowest PAC favours the largest K tried (Şenbabaoğlu et al. 2014). As in
    M3C (John et al. 2020), ``n_references`` reference data sets of X's size are drawn that keep
    X's mean and principal axes and the spread along each (:mod:`cclust._reference`) but hold no
    clusters, and each runs through exactly the same protocol (the same resample draws, its own
    clustering seeds). Per K the result reports the references' PACs, the relative cluster
    stability index ``RCSI = mean_b log PAC_b - log PAC`` with its standard error, and a p-value
    for "no more stable than data without clusters": the chance that one more reference data set
    has a PAC at most the data's, predicted from the B references with Student's t on the logit
    scale (:func:`cclust._reference.predictive_p`), or the Monte Carlo p-value
    ``(1 + #{b: PAC_b < PAC}) / (B + 1)`` where the references' PACs have no spread. M3C fits a
    beta distribution to the references' PACs instead and takes it as exact, which with ten
    references puts p-values below 1e-3 several times as often as it should and gives exactly 0
    to a PAC of 0 (``p_value_beta`` keeps M3C's value for comparison; docs/benchmarks.md).
    ``best_k`` is the K of largest RCSI among those whose p-value is below
    ``alpha / m`` (m the number of K tried; Bonferroni, since the K are tried together); when
    none is, ``best_k`` is 1: the data give no evidence of cluster structure. M3C itself picks
    the largest RCSI and reports p-values unadjusted; the adjustment keeps the chance of a false
    "structure" near ``alpha`` whatever the range of K. ``null=None`` is ConsensusClusterPlus's
    plain protocol, PAC's lowest K (``criterion="pac"``) and 100 resamples.

    **An AnnData** (``pip install 'cclust[scverse]'``) as ``data`` gives its features
    (``adata.X``, ``layer`` or ``use_rep``) and receives the answer, as scanpy's tools write
    theirs: the labels at the recommended K in ``adata.obs[f"{key_added}_k{best_k}"]``
    (categorical, categories ``"0".."K-1"``), each object's item consensus with its own cluster
    in ``adata.obs[f"{key_added}_k{best_k}_item_consensus"]``, and the per-K statistics, the
    recommendation, its reason, the printed summary and the parameters in
    ``adata.uns[f"{key_added}_select_k"]``. Nothing else of it changes. Like scanpy's tools it
    then returns None (``copy=False``, the AnnData is written into) or the modified copy
    (``copy=True``); the :class:`SelectKResult` itself comes from ``select_k(features)``.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features), DataFrame, AnnData, dask array, or cclust.Ensemble
        The objects, or ready basic partitions of them (with a consensus ``method`` only).
    k_range : iterable of int, default=range(2, 9)
        The K to try, each in ``[1, n_samples]``; sorted and de-duplicated. K = 1 (no clusters)
        needs no run: with a reference null it is the answer when no K >= 2 is significant,
        whether or not ``k_range`` holds it; without one it cannot be recommended (its consensus
        is trivially perfect), so ``k_range`` may hold 1 only with a ``null``.
    method : str, default="monti"
        ``"monti"``: each resample is clustered once by ``inner`` (Monti et al.'s protocol).
        Or a registered consensus function, which fuses ``n_partitions`` partitions of each
        resample. With an Ensemble, methods needing the features (``requires_X``) cannot be used.
    inner : {"kmeans", "hierarchical"}, default="kmeans"
        The clusterer of the Monti protocol: one k-means run at exactly K (k-means++ seeding,
        Lloyd iterations; the registered ``kmeans`` generator with ``k_range=(K, K)``), or the
        average-linkage tree of the resample's Euclidean distances cut at K.
    distance : str, default="euclidean"
        The distance between objects of ``inner="hierarchical"`` (ConsensusClusterPlus's
        ``distance``): ``"euclidean"``, ``"pearson"`` and ``"spearman"`` (1 - the correlation of
        two objects across the features), ``"maximum"``, ``"manhattan"``, ``"canberra"``,
        ``"binary"``, ``"minkowski"`` (R's ``dist``, p = 2). ConsensusClusterPlus's default run
        is ``inner="hierarchical", distance="pearson"`` on the columns of a features x samples
        matrix (pass its transpose, or ``cclust select-k --samples-in-columns``). k-means is
        Euclidean only, as in ConsensusClusterPlus.
    inner_linkage, final_linkage : str, default="average"
        The linkage of the inner hierarchical clustering and of the final clusters cut from the
        consensus matrix (ConsensusClusterPlus's ``innerLinkage`` and ``finalLinkage``):
        ``"average"``, ``"complete"``, ``"single"``, ``"mcquitty"`` or ``"ward.D2"``.
    inner_params : dict or None
        Settings of the ``inner="kmeans"`` clusterer: ``{"algorithm": "lloyd"}`` (the default)
        or ``{"algorithm": "hartigan-wong"}``, the algorithm of Hartigan & Wong (1979, AS 136)
        that R's ``kmeans`` and so ConsensusClusterPlus's ``clusterAlg="km"`` run: k random
        objects as the starting centres, optimal-transfer and quick-transfer stages, at most
        10 passes (ConsensusClusterPlus's ``iter.max``). From the same start its labels are R's.
        ``"init"``: ``"random"`` (k random objects) or ``"k-means++"`` (Arthur & Vassilvitskii
        2007); the default is each algorithm's own (k-means++ for Lloyd, random objects for
        Hartigan-Wong, as R). ``"n_init"``: Lloyd runs per resample, each from the next
        start of the resample's stream, the one of lowest within sum of squares kept; default
        3 with a reference null (data and references alike), 1 without (ConsensusClusterPlus's
        one run). One run now and then lands in a local optimum (two blobs merged, another
        split), which makes the true K look less stable than a coarser K whose clusters never
        split: on Gaussian blobs the reference null found the true K in 17 of 24 cases with one
        run, 23 with two and 24 with three (docs/benchmarks.md). Hartigan-Wong runs once.
        The default stays Lloyd: Hartigan-Wong from random objects
        reproduces ConsensusClusterPlus's curves (its K on yeast), including its failure on
        well-separated blobs, where random starts put two centres in one blob;
        docs/guide/monti.rst has the measurements.
    generator : str, default="kmeans"
        A registered generator (consensus methods only; unused for an Ensemble and for a method
        that makes its own partitions of the features, such as ``usenc``).
    n_partitions : int, default=50
        Basic partitions generated per run (consensus methods only).
    n_resamples : int, default=None
        Resamples per K (Monti et al.'s H). None: 100 for the Monti protocol without a null, 10
        with one (each reference data set runs as many, each resample the best of three k-means
        runs; see ``n_references``), 50 for a consensus
        method (each of its resamples costs ``n_partitions`` clusterings and a fusion). 100 keeps
        the sampling noise of an entry of M near 0.06 (about 64 draws of each pair); PAC's
        window is 0.8 wide, so more resamples move it little. ConsensusClusterPlus's default is
        10 (noise near 0.2) and its vignette uses 1000.
    subsample : float in (0, 1], default=0.8
        Fraction of the objects drawn in each resample (ConsensusClusterPlus's ``pItem``); it must
        keep at least max(k_range) objects.
    feature_subsample : float in (0, 1], default=1.0
        Fraction of the features each resample clusters on (ConsensusClusterPlus's
        ``pFeature``): ``floor(feature_subsample * n_features)`` of them, at least one, drawn
        without replacement per resample (the same draws for every K). Not with an Ensemble as
        ``data``.
    item_weights : array-like of shape (n_samples,), default=None
        Sampling weights of the objects (ConsensusClusterPlus's ``weightsItem``): each resample
        is R's ``sample(n, floor(subsample * n), replace = FALSE, prob = item_weights)``, i.e.
        successive sampling: every next object is drawn with probability proportional to its
        weight among the objects not drawn yet. Non-negative and finite, with at least
        ``floor(subsample * n)`` positive; only the ratios matter. A weight of 0 keeps an object
        out of every resample (its consensus entries stay 0). None: uniform.
    feature_weights : array-like of shape (n_features,), default=None
        Sampling weights of the features (``weightsFeature``), drawn the same way; like
        ConsensusClusterPlus, they matter only when ``feature_subsample < 1``.
    method_params : dict or None
        Extra keyword arguments of the consensus method.
    generator_params : dict, callable or None
        Extra keyword arguments of the generator, the same for every K; or a function of K
        returning them, for settings that depend on the K tested (e.g. ``lambda k: {"k_range":
        (k, 2 * k)}``). A fixed ``k_range`` in a dict is refused: it would make every K tested
        fuse the same kind of partitions.
    criterion : {"rcsi", "pac", "delta_area", "objective", "gap"}, default=None
        How ``best_k`` is chosen. None: ``"rcsi"`` with a ``null``, ``"pac"`` without. ``"rcsi"``:
        the largest RCSI among the significant K, else K = 1 (above); ``"pac"``: the lowest PAC
        (ties go to the smaller K); ``"delta_area"``: the largest delta area among the K after
        the first (the K after which adding a cluster gains most stability); ``"objective"``:
        the best objective of a consensus method (its name says "higher is better" or "lower is
        better"; many objectives drift with K, so prefer "pac"); ``"gap"``: the gap statistic
        (Tibshirani, Walther & Hastie 2001) of k-means on the features, computed by
        :func:`gap_statistic` for K = 1..max(k_range) with ``n_references`` reference data sets
        of the shape ``null`` names (``"uniform"`` unless ``"gaussian"`` is given) and
        ``d_power=2``, the paper's pooled within-cluster sum of squares, and ``gap_rule`` applied
        to K = 1 and the K tried; K = 1 is a possible answer. The result's ``gap`` holds the
        table.
    gap_rule : str, default="Tibs2001SEmax"
        The rule of ``criterion="gap"`` (R's ``cluster::maxSE``): ``"Tibs2001SEmax"``, the
        paper's smallest K with ``gap(K) >= gap(K+1) - s(K+1)``, or ``"firstSEmax"`` (clusGap's
        default), ``"globalSEmax"``, ``"firstmax"``, ``"globalmax"``.
    pac_interval : (float, float), default=(0.1, 0.9)
        ``(u1, u2)`` with ``0 <= u1 < u2 <= 1``.
    labels_from : {"consensus", "fit"}, default="consensus"
        Where ``labels[K]`` come from: the consensus matrix (above), or, with a consensus method,
        its one fit on all the data (the fit whose objective is reported).
    matrix : {"auto", "dense", "sparse"}, default="auto"
        ``"dense"``: the exact n x n route (refused past ``max_bytes``); ``"sparse"``: the
        estimated route above; ``"auto"``: dense when it fits the budget, which with the default
        budget (2 GiB), 10 resamples and K = 2..8 is up to 13,191 objects, the sparse route above
        (the result's ``route`` and its summary's first line say which ran).
    pair_tolerance : float in (0, 0.5), optional
        The sparse route's bound on the standard error of PAC and of the area (default 0.0005,
        10^6 pairs): ``0.25 / pair_tolerance^2`` pairs are drawn. Only with the sparse route.
    sketch : "auto", int or None, default="auto"
        Run on this many objects and label the others from them (above; ``propagation``).
        Needs the features (not an Ensemble) and ``method="monti"``. ``"auto"``: two sketches
        of 2000 objects when the Monti protocol runs on the features of more than 20000
        objects and no route is asked for (``matrix="auto"``, no ``pair_tolerance``), every
        object otherwise; None: every object always. (The automatic sketches held 5000
        objects before; at 10^5 objects 2000 chose the same K with the same ARI in a third of
        the CPU time, docs/benchmarks.md; ``sketch=5000`` gives the former default.)
    sketch_method : {"geometric", "uniform"}, default="geometric"
    n_sketches : int, optional
        Independent sketches whose agreement is reported (with a sketch only). None: 2 with
        the automatic sketch, 1 with a sketch size given.
    propagation : {"centroid", "knn"}, default="centroid"
        How the objects outside the sketch are labelled (``sketch`` only): the nearest
        consensus centroid, or a vote of the 15 nearest sketch objects (exact neighbours, ties
        broken as :func:`cclust.predict` breaks them).
    null : {"auto", "gaussian", "uniform"} or None, default="auto"
        The reference distribution ("auto": ``"uniform"`` for the Monti protocol, None for a
        consensus method, whose every reference run generates and fuses ``n_partitions``
        partitions per resample and K, and None with ``criterion="gap"``, which has its own
        reference): independent normal scores with the spread of each of X's
        principal components (M3C's reference, a Gaussian with X's covariance), or uniform scores
        over each component's range (Tibshirani, Walther & Hastie 2001's reference (b)), rotated
        back onto X's axes. None: no reference (ConsensusClusterPlus's plain protocol). Needs
        the features X (not an Ensemble); with a consensus method the references run through
        the same generator and method. The uniform reference is the default because it
        is the better calibrated of the two on data without clusters: on 24 small null data sets
        of four shapes (isotropic, correlated, uniform box, elongated; n 60-110, d 2-5), 10
        references and 25 resamples answered K = 1 on 23 with it and on 21 with the Gaussian,
        which mistakes a uniform box for clusters (docs/benchmarks.md; measured with one
        k-means run per resample).
    n_references : int, default=None
        Reference data sets B (at least 2), of the null and of the gap statistic. None: 10,
        which with 10 resamples of the data and of each reference, three k-means runs each,
        keeps the default near 3x the plain protocol's 100 resamples of one run (CPU 3.4x at
        n = 300 and at a thousand objects, 2.5x at three thousand); the predictive p-value
        reaches below ``1 / (B + 1)`` as far as B references support. More references make the
        p-values steadier (M3C runs 25 to 100). This default answered K = 1 on 38 of 40 small data
        sets without clusters (n 60-300) and on 55 of the 58 checked of 100 larger ones (n 100 to
        five thousand, d 2-50), and found the true K on 55 of 56 blob data sets (K = 2..8); one
        run per resample found 42 of the 56 with M3C's beta p-value (docs/benchmarks.md).
    alpha : float in (0, 1), default=0.05
        Significance level of the reference null's decision (Bonferroni over the K tried).
    random_state : int, numpy.random.Generator or None, default=None
        Same value, same result, for any ``n_jobs``.
    n_jobs : int or None, default=None
        Threads (labels do not depend on it).
    verbose : int, default=0
        A progress bar over the K (on a terminal only).
    keep_matrices : bool, default=False
        Return every consensus matrix: (n, n) float64 each on the dense route, the sparse kNN
        consensus graph on the sparse route.
    max_bytes : int, optional
        Memory budget; default ``cclust.validation.memory_budget()`` (``CCLUST_MEMORY_BUDGET``).
        The dense route's estimate counts the co-sampling and co-clustering counts (float32
        n x n each), the condensed distances ``1 - M`` and average linkage's copy of them
        (float64, n(n - 1)/2 each), and a float64 n x n per K kept.
    missing_features : {"error", "mean"}, default="error"
        NaN cells of ``data`` (features): refused, naming the first one's row and column (by
        label for a DataFrame), or filled with their column's mean, as the command line's
        ``--missing-features mean`` does. Infinite values are always refused.
    layer : str, optional
        AnnData ``data`` only: the features are ``data.layers[layer]`` instead of ``data.X``.
    use_rep : str, optional
        AnnData ``data`` only: the features are ``data.obsm[use_rep]`` (e.g. ``"X_pca"``).
    key_added : str, default="cclust"
        AnnData ``data`` only: the prefix of the ``obs`` and ``uns`` keys written.
    copy : bool, default=False
        AnnData ``data`` only: write into a copy and return it, leaving ``data`` as it was.

    Returns
    -------
    SelectKResult
        Or, for an AnnData ``data``, None (``copy=False``) or the modified copy. With a sketch,
        ``labels[K]`` are uint8 up to K = 255 and only the sketch objects' item consensus is
        stored (see :class:`SelectKResult`).

    Raises
    ------
    ValidationError
        Bad ``k_range``, ``subsample``, ``n_resamples``, ``criterion``, ``pac_interval``,
        ``inner``, ``labels_from``, ``matrix`` or ``generator_params``.
    MemoryBudgetError
        ``matrix="dense"`` (or ``"sparse"``) past the budget.

    References
    ----------
    S. Monti, P. Tamayo, J. Mesirov, T. Golub. Consensus clustering: a resampling-based method
    for class discovery and visualization of gene expression microarray data. Machine Learning
    52:91-118, 2003.
    M. D. Wilkerson, D. N. Hayes. ConsensusClusterPlus: a class discovery tool with confidence
    assessments and item tracking. Bioinformatics 26(12):1572-1573, 2010.
    C. R. John, D. Watson, D. Russ, K. Goldmann, M. Ehrenstein, C. Pitzalis, M. Lewis, M. Barnes.
    M3C: Monte Carlo reference-based consensus clustering. Scientific Reports 10:1816, 2020.
    R. Tibshirani, G. Walther, T. Hastie. Estimating the number of clusters in a data set via
    the gap statistic. Journal of the Royal Statistical Society B 63(2):411-423, 2001.
    Y. Şenbabaoğlu, G. Michailidis, J. Z. Li. Critical limitations of consensus clustering in
    class discovery. Scientific Reports 4:6207, 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust import select_k
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.2, (20, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    >>> result = select_k(X, range(2, 6), random_state=0)
    >>> result.best_k, result.criterion
    (3, 'rcsi')
    >>> result.cluster_consensus[3].round(2).tolist()
    [1.0, 1.0, 1.0]
    """
    from cclust.interop import _anndata

    if _anndata.is_anndata(data):
        return _select_k_on_anndata(dict(locals()))
    _anndata.check_array_options(data, "data", layer=layer is not None, use_rep=use_rep is not None,
                                 key_added=key_added != "cclust", copy=copy is not False)
    if hasattr(data, "__dask_graph__"):  # chunk by chunk, never gathered (with a sketch)
        arguments = dict(locals())
        for name in ("_anndata", "layer", "use_rep", "key_added", "copy"):
            arguments.pop(name)
        return _select_k_on_dask(arguments)
    sketch, n_sketches = resolve_sketch(data, sketch, n_sketches, method, matrix, pair_tolerance)
    if sketch is not None:
        arguments = dict(locals())
        for name in ("_anndata", "layer", "use_rep", "key_added", "copy"):
            arguments.pop(name)
        return select_k_on_sketches(arguments, select_k)
    if n_sketches != 1:
        raise ValidationError(f"n_sketches={n_sketches!r} compares sketches, but no sketch is drawn (sketch=None, or "
                              f"sketch='auto' with at most {SKETCH_FROM} objects or a route asked for); pass sketch=s "
                              "(the objects per sketch) or drop n_sketches.")
    if propagation != "centroid":
        raise ValidationError(f"propagation={propagation!r} labels the objects outside a sketch, but no sketch is "
                              f"drawn (sketch=None, or sketch='auto' with at most {SKETCH_FROM} objects or a route "
                              "asked for); pass sketch=s (the objects to run on) or drop propagation.")
    from cclust.ensemble import Ensemble
    from cclust.validation import memory_budget, require_memory
    from cclust.registry import get
    from cclust.base import method_info
    from cclust import _monti

    from cclust import _reference

    monti = method == "monti"
    null = resolve_null(null, method, criterion)
    if null is not None and null not in _reference.NULLS:
        raise ValidationError(f"null must be one of {list(_reference.NULLS) + ['auto']} or None, got {null!r}.")
    if criterion is None:
        criterion = "rcsi" if null is not None else "pac"
    if criterion == "gap":
        if gap_rule not in _reference.GAP_RULES:
            raise ValidationError(f"gap_rule must be one of {list(_reference.GAP_RULES)}, got {gap_rule!r}.")
        if isinstance(data, Ensemble):
            raise ValidationError("criterion='gap' clusters the features by k-means, but data is an Ensemble; pass "
                                  "the features X as data, or choose criterion='pac'.")
    if criterion == "rcsi" and null is None:
        raise ValidationError("criterion='rcsi' compares the data with a reference null; pass null='gaussian' "
                              "(or 'uniform'), or choose criterion='pac'.")
    # 0 without a reference, as SelectKResult says
    n_references = _reference_count(n_references) if null is not None or criterion == "gap" else 0
    if null is not None:
        alpha = check_float(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    if inner not in _monti.INNER:
        raise ValidationError(f"inner must be one of {list(_monti.INNER)}, got {inner!r}.")
    algorithm, init, n_init = _inner_algorithm(inner, inner_params, method,
                                               INNER_STARTS_WITH_NULL if null is not None else 1)
    if distance not in _monti.DISTANCES:
        raise ValidationError(f"distance must be one of {list(_monti.DISTANCES)}, got {distance!r}.")
    if distance != "euclidean" and (not monti or inner != "hierarchical"):
        raise ValidationError(f"distance={distance!r} is the distance of the hierarchical inner clusterer; pass "
                              "method='monti', inner='hierarchical' (k-means is Euclidean only).")
    for name, value in (("inner_linkage", inner_linkage), ("final_linkage", final_linkage)):
        if value not in _monti.LINKAGES:
            raise ValidationError(f"{name} must be one of {list(_monti.LINKAGES)}, got {value!r}.")
    if labels_from not in ("consensus", "fit"):
        raise ValidationError(f"labels_from must be 'consensus' or 'fit', got {labels_from!r}.")
    if matrix not in ("auto", "dense", "sparse"):
        raise ValidationError(f"matrix must be one of ['auto', 'dense', 'sparse'], got {matrix!r}.")
    if monti:
        fn = info = None
        if labels_from == "fit":
            raise ValidationError(
                "labels_from='fit' takes the labels of a consensus method's fit on all the data; with "
                "method='monti' there is none: use labels_from='consensus' or a method such as 'kcc'.")
        if criterion == "objective":
            raise ValidationError(
                "criterion='objective' reads a consensus method's own criterion; method='monti' has none: "
                "use criterion='pac' or 'delta_area', or a method such as 'kcc'.")
    else:
        fn = get(check_name(method, "method"), kind="consensus")
        info = method_info(fn)
    method_params = check_params_dict(method_params, "method_params", RESERVED_METHOD, "select_k")
    params_for_k = _per_k_params(generator_params)
    if isinstance(data, Ensemble):
        if monti:
            raise ValidationError(
                "method='monti' clusters the objects' features, but data is an Ensemble; pass the "
                "features X as data, or choose a consensus method (e.g. method='kcc') to resample the "
                "Ensemble's rows.")
        if null is not None:
            raise ValidationError(
                f"null={null!r} draws reference data sets like the features, but data is an Ensemble; pass the "
                "features X as data, or null=None (the plain protocol).")
        ensemble, X = data, None
        if info is not None and info.requires_X:  # info is None only for monti, refused above
            raise ValidationError(
                f"method {method!r} needs the original features, but data is an Ensemble; pass the "
                "features X as data, or choose a method that uses the partitions alone (e.g. kcc)."
            )
        n = ensemble.n_samples
        if n < 2:
            raise ValidationError(f"data has n_samples={n}; choosing K needs at least 2 objects.")
    else:
        ensemble = None
        X, _ = validate_X(data, "data", missing_features)
        n = X.shape[0]
        generator = check_name(generator, "generator")
        get(generator, kind="generator")  # fail early on an unknown name
    n_partitions = check_int(n_partitions, "n_partitions", low=1)
    k_values = _check_k_range(k_range, n, one_allowed=null is not None or criterion == "gap")
    if X is not None:
        check_distinct_rows(X, max(k_values), "data", "max(k_range)")
    if n_resamples is None:
        n_resamples = (RESAMPLES_PLAIN if null is None else RESAMPLES_WITH_NULL) if monti else 50
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    subsample = check_float(subsample, "subsample", low=0, high=1, low_open=True)
    feature_subsample = check_float(feature_subsample, "feature_subsample", low=0, high=1, low_open=True)
    if X is None and (feature_subsample < 1 or feature_weights is not None):
        raise ValidationError("feature_subsample and feature_weights resample the features, but data is an "
                              "Ensemble; pass the features X as data.")
    size = _monti.sample_size(n, subsample)
    item_weights = check_sampling_weights(item_weights, "item_weights", n, size, "objects", "subsample")
    if X is not None:
        d = X.shape[1]
        if _monti.sample_size(d, feature_subsample) < 1:
            raise ValidationError(f"feature_subsample={feature_subsample} keeps none of the {d} features; "
                                  f"give at least 1/{d}.")
        feature_weights = check_sampling_weights(feature_weights, "feature_weights", d,
                                                  _monti.sample_size(d, feature_subsample), "features",
                                                  "feature_subsample")
    if size < max(2, int(k_values[-1])):
        raise ValidationError(
            f"subsample={subsample} keeps {size} of the {n} objects, fewer than the "
            f"{max(2, int(k_values[-1]))} needed for K={int(k_values[-1])}; raise subsample or "
            "lower the largest K in k_range."
        )
    if criterion not in CRITERIA:
        raise ValidationError(f"criterion must be one of {list(CRITERIA)}, got {criterion!r}.")
    low, high = check_pac_interval(pac_interval)
    verbose = check_int(verbose, "verbose", low=0)
    threads = check_n_jobs(n_jobs, "n_jobs")
    if not isinstance(keep_matrices, (bool, np.bool_)):
        raise ValidationError(f"keep_matrices must be True or False, got {keep_matrices!r}.")

    if pair_tolerance is None:
        tolerance = _monti.PAIR_TOLERANCE
    else:
        tolerance = check_float(pair_tolerance, "pair_tolerance", low=0, low_open=True, high=0.5, high_open=True)
        if matrix == "dense":
            raise ValidationError("pair_tolerance applies to the sparse route's sampled pairs; the dense route "
                                  "(matrix='dense') reads every pair exactly. Drop pair_tolerance or pass "
                                  "matrix='sparse'.")
    ks = k_values.tolist()
    dense_need = _monti.dense_bytes(n, n_resamples, ks, keep_matrices)
    what = f"select_k's consensus matrices of {n} objects ({len(ks)} K, {n_resamples} resamples)"
    if matrix == "dense" or (matrix == "auto" and dense_need <= memory_budget(max_bytes)):
        require_memory(dense_need, what, "pass matrix='sparse' (estimated CDF and PAC, landmark labels; "
                       "linear memory), or fewer objects", max_bytes)
        route = "dense"
    else:
        require_memory(_monti.sparse_bytes(n, n_resamples, ks, tolerance), what + " on the sparse route",
                       "lower n_resamples or the largest K", max_bytes)
        route = "sparse"

    root = child_seeds(random_state, 1)[0]
    draw = np.random.default_rng(np.random.SeedSequence(root, spawn_key=(0,)))
    samples = _monti.draw_resamples(n, n_resamples, subsample, draw, item_weights)
    features = None
    if X is not None:
        # its own stream, so that the objects drawn do not depend on the feature settings
        features = _monti.draw_features(X.shape[1], n_resamples, feature_subsample,
                                        np.random.default_rng(np.random.SeedSequence(root, spawn_key=(2,))),
                                        feature_weights)

    background = pending = None
    try:
        objective = np.full(len(ks), np.nan)
        objective_name = ""
        fit_labels = {}
        with progress(total=len(ks), desc=f"select_k ({method})", verbose=verbose) as bar:
            if monti:
                runs = _monti.inner_labels(X, samples, ks, inner, root, threads, features, algorithm, init, distance,
                                           inner_linkage, n_init)
            else:
                runs = {}
                for row, k in enumerate(ks):
                    runs[k], full = _fused_runs(fn, k, samples, n, X, ensemble, generator, n_partitions,
                                                params_for_k(k), method_params, root, n_jobs, features)
                    fit_labels[k] = np.array(full.labels, dtype=np.int64)
                    objective[row] = full.objective
                    objective_name = objective_name or full.objective_name

            # a later sketch of the sketch route is offered the first sketch's reference data sets:
            # it reads them at the end (shared_reference_pacs) and draws its own only if they do
            # not fit (other K or count)
            offered = null is not None and reference_offered()
            shape = None
            if null is not None:
                if not offered:
                    shape = _reference.ReferenceShape(X)

                def reference_draw(b):
                    """Reference data set b and the root seed of its runs."""
                    draw_seed, run_seed = np.random.SeedSequence(root, spawn_key=(3, b)).spawn(2)
                    return shape.draw(null, np.random.default_rng(draw_seed)), int(run_seed.generate_state(1)[0])

                def one_reference(b, workers):
                    """Reference data set b through the same protocol: its PAC at every K."""
                    Xb, run_root = reference_draw(b)
                    if monti:
                        runs_b = _monti.inner_labels(Xb, samples, ks, inner, run_root, workers, features, algorithm,
                                                     init, distance, inner_linkage, n_init)
                    else:
                        runs_b = {k: _fused_runs(fn, k, samples, n, Xb, None, generator, n_partitions, params_for_k(k),
                                                 method_params, run_root, n_jobs, features, full_fit=False)[0]
                                  for k in ks}
                    return [_monti.pac_only(runs_b.pop(k), (low, high), pairs=pairs if route == "sparse" else None,
                                            n_threads=workers) for k in ks]

                # On the dense route (consensus matrices within the memory budget) the reference data
                # sets run on the threads while this thread forms the data's consensus below, one task
                # per reference data set and K: inner_labels seeds each K by (K, resample) alone, so a
                # K run by itself gives the labels it gives among the others, and nothing depends on
                # the schedule. Tasks per K rather than per data set keep every thread busy to the end
                # (a data set's K differ in time, and ten tasks on two threads left one idle at the
                # end); the data set is drawn once, by its first task, and dropped after its last.
                if not offered and monti and route == "dense" and threads > 1 and _monti.MAP_RUNS.get() is None:
                    draws = _reference.SharedDraws(reference_draw, len(ks))

                    def one_reference_at(b, k):
                        """Reference data set b's PAC at K."""
                        Xb, run_root = draws.get(b)
                        try:
                            runs_b = _monti.inner_labels(Xb, samples, [k], inner, run_root, 1, features, algorithm,
                                                         init, distance, inner_linkage, n_init)
                            return _monti.pac_only(runs_b.pop(k), (low, high), n_threads=1)
                        finally:
                            draws.done(b)

                    background = ThreadPoolExecutor(max_workers=threads)
                    pending = [[background.submit(one_reference_at, b, k) for k in ks] for b in range(n_references)]
            pick = np.random.default_rng(np.random.SeedSequence(root, spawn_key=(1,)))
            if route == "dense":
                sampled = _monti.sampled_counts(runs[ks[0]])
            else:
                landmarks = np.sort(pick.choice(n, size=min(n, _monti.LANDMARKS), replace=False))
                sampled = _monti.sampled_counts(runs[ks[0]][landmarks])
                pairs = _monti.draw_pairs(n, tolerance, pick)
                exact = pairs[0].shape[0] == n * (n - 1) // 2
            cdf = np.empty((len(ks), _monti.GRID.shape[0]))
            pac = np.empty(len(ks))
            pac_se = np.zeros(len(ks))
            area_se = np.zeros(len(ks))
            labels, items, clusters, stability = {}, {}, {}, {}
            matrices: dict[int, Any] | None = {} if keep_matrices else None
            for row, k in enumerate(ks):
                if route == "dense":
                    one = _monti.dense_consensus(runs[k], k, sampled, (low, high), keep_matrices, final_linkage)
                else:
                    one = _monti.sparse_consensus(runs[k], k, (low, high), pairs, exact, landmarks, sampled,
                                                  keep_matrices, root, threads, final_linkage)
                cdf[row], pac[row], pac_se[row], area_se[row] = one.cdf, one.pac, one.pac_se, one.area_se
                labels[k] = fit_labels[k] if labels_from == "fit" else one.labels
                stability[k] = ClusterStability.from_jaccard(
                    labels[k], _monti.resample_jaccard(runs.pop(k), labels[k], int(labels[k].max()) + 1), "subset",
                    size)
                items[k], clusters[k] = one.item, one.cluster
                if matrices is not None:
                    matrices[k] = one.matrix
                bar.update(1)

        area = consensus_area(_monti.GRID, cdf)
        delta = delta_area(area)
        reference = {}
        if null is not None:
            # the sketch route's later sketches are judged against the first sketch's reference data
            # (reference_pacs given), or the reference data sets run here or have run beside the above
            reference_pacs = shared_reference_pacs(ks, n_references) if offered else None
            if reference_pacs is None:
                if shape is None:
                    shape = _reference.ReferenceShape(X)
                computed = np.empty((n_references, len(ks)))
                with progress(total=n_references, desc="select_k (reference null)", verbose=verbose) as bar:
                    for b in range(n_references):
                        computed[b] = ([task.result() for task in pending[b]] if pending is not None
                                       else one_reference(b, threads))
                        bar.update(1)
                reference_pacs = computed
            rcsi, rcsi_se = _reference.rcsi(pac, reference_pacs)
            p_mc = _reference.monte_carlo_p(pac, reference_pacs)
            p_predicted = _reference.predictive_p(pac, reference_pacs)
            reference = dict(null=null, n_references=n_references, pac_reference=reference_pacs, rcsi=rcsi,
                             rcsi_se=rcsi_se, p_value=np.where(np.isfinite(p_predicted), p_predicted, p_mc),
                             p_value_monte_carlo=p_mc, p_value_beta=_reference.beta_p(pac, reference_pacs),
                             alpha=float(alpha))
    finally:
        if background is not None:  # also when the data's consensus failed
            background.shutdown(wait=True, cancel_futures=True)
    gap = None
    if criterion == "gap":
        seed = int(np.random.SeedSequence(root, spawn_key=(4,)).generate_state(1)[0])
        gap = gap_statistic(X, max(2, ks[-1]), n_references=n_references, d_power=2, reference=null or "uniform",
                            rule=gap_rule, random_state=seed, n_jobs=n_jobs)
        best_k, reason = _recommend_gap(ks, gap)
    elif criterion == "rcsi":
        best_k, reason = _recommend_rcsi(k_values, pac, reference["rcsi"], reference["p_value"], alpha, null,
                                         n_references)
    else:
        best_k, reason = _recommend(criterion, k_values, pac, delta, objective, objective_name,
                                    (low, high))
    edge = _edge_warning(k_values, best_k) if best_k != 1 else ""
    if best_k == 1:
        labels[1] = np.zeros(n, dtype=np.int64)  # the answer "no clusters": every object in one
    return SelectKResult(
        k_values=k_values, cdf_grid=_monti.GRID.copy(), cdf=cdf, area=area, delta_area=delta, pac=pac,
        objective=objective, objective_name=objective_name, best_k=int(best_k),
        criterion=criterion, reason=reason, method=method, consensus_matrices=matrices,
        labels=labels, warnings=(edge,) if edge else (), item_consensus=items,
        cluster_consensus=clusters, cluster_stability=stability, inner=inner if monti else None, route=route,
        pac_se=pac_se, area_se=area_se, n_pairs=int(pairs[0].shape[0]) if route == "sparse" else n * (n - 1) // 2,
        n_resamples=n_resamples, index=object_index(data) if ensemble is None else None, gap=gap, **reference)


def _select_k_on_anndata(arguments):
    """select_k on the features of an AnnData, the answer written into it (see :func:`select_k`)."""
    from cclust.interop import _anndata

    arguments.pop("_anndata")
    adata = arguments.pop("data")
    layer, use_rep = arguments.pop("layer"), arguments.pop("use_rep")
    key = _anndata.check_key(arguments.pop("key_added"))
    copy = _anndata.check_copy(arguments.pop("copy"))
    _anndata.check_target(adata, "data", copy)
    values, where = _anndata.features(adata, layer, use_rep, "data", arguments["max_bytes"])
    X, _ = validate_X(values, where, arguments["missing_features"])
    result = select_k(X, **arguments)
    params = {"subsample": arguments["subsample"], "feature_subsample": arguments["feature_subsample"],
              "pac_interval": np.asarray(arguments["pac_interval"], dtype=np.float64),
              "random_state": arguments["random_state"], "layer": layer, "use_rep": use_rep,
              "method_params": arguments["method_params"], "generator": arguments["generator"],
              "n_partitions": arguments["n_partitions"]}
    target = adata.copy() if copy else adata
    _anndata.write_select_k(target, key, result, params)
    return target if copy else None


def _select_k_on_dask(arguments):
    """select_k on a dask array (see :func:`select_k`): on sketches drawn from its row chunks,
    with every object labelled chunk by chunk, or gathered when no sketch is drawn."""
    from cclust.dask._select_k import DaskRows, check_dask_data, gather
    from cclust.validation import require_memory

    data = arguments["data"]
    check_dask_data(data)
    sketch, n_sketches = resolve_sketch(data, arguments["sketch"], arguments["n_sketches"], arguments["method"],
                                        arguments["matrix"], arguments["pair_tolerance"])
    if sketch is None:
        n, d = data.shape
        require_memory(8 * n * d, f"select_k on every object of a dask array of shape {data.shape} (gathered)",
                       "pass sketch=s to run on s objects and label the others chunk by chunk",
                       arguments["max_bytes"])
        arguments["data"] = gather(data)
        return select_k(**arguments)
    arguments["sketch"], arguments["n_sketches"] = sketch, n_sketches
    return select_k_on_sketches(arguments, select_k, DaskRows)


def resolve_sketch(data, sketch, n_sketches, method, matrix, pair_tolerance):
    """``sketch`` and ``n_sketches`` as select_k runs them: ``sketch="auto"`` is AUTO_SKETCH
    objects in AUTO_SKETCHES sketches for the Monti protocol on the features of more than
    SKETCH_FROM objects when no route is asked for (``matrix="auto"``, no ``pair_tolerance``),
    and no sketch otherwise; ``n_sketches=None`` is 1 for a sketch size given."""
    from cclust.ensemble import Ensemble

    if isinstance(sketch, str):
        if sketch != "auto":
            raise ValidationError(f"sketch must be 'auto', None or a number of objects, got {sketch!r}.")
        n = _row_count(data)
        automatic = (method == "monti" and not isinstance(data, Ensemble) and n is not None and n > SKETCH_FROM
                     and isinstance(matrix, str) and matrix == "auto" and pair_tolerance is None)
        if not automatic:
            return None, 1 if n_sketches is None else n_sketches
        return AUTO_SKETCH, AUTO_SKETCHES if n_sketches is None else n_sketches
    return sketch, 1 if n_sketches is None else n_sketches


def _row_count(data):
    """The number of objects of array-like data, None when it has no 2-D shape (validation
    then says what is wrong)."""
    shape = getattr(data, "shape", None)
    if shape is None:
        try:
            shape = np.shape(data)
        except Exception:  # noqa: BLE001 - ragged input: validation reports it
            return None
    return int(shape[0]) if len(shape) == 2 else None


def _reference_count(n_references: int | None) -> int:
    if n_references is None:
        return DEFAULT_REFERENCES
    return check_int(n_references, "n_references", low=2)
