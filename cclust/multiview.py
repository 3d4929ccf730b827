"""Multi-view consensus: one ensemble from several views of the same objects, and its scores per view.

A *view* is one table of features of the objects: an omics layer (expression, methylation, copy
number), a modality of a single-cell experiment (RNA, ATAC, protein), any block of features
measured separately. :func:`multiview` clusters each view on its own, with its own generator
and settings, and puts every view's partitions side by side in one :class:`cclust.Ensemble`;
a consensus function then fuses them into one partition of all the objects. This is the
cluster-of-clusters idea of COCA (Hoadley et al. 2014), with the per-view step generalised to
any generator and the fusing step to any consensus function (docs/guide/multiview.rst has
COCA itself as a recipe).

**The objects.** Views may hold different objects: a sample without methylation data, a cell
whose protein panel failed. When the views carry object IDs (a DataFrame's index, an AnnData's
``obs_names``, a MuData's modalities, or ``obs_names=`` given per view) the objects are the
union of the views' IDs, in order of first appearance: the first view's objects in its order,
then the objects of the second view not seen yet, and so on (a MuData: its own ``obs_names``).
Without IDs every view must have the same number of rows, row i being object i. Either way a
row whose features are all NaN is an object absent from that view. An object absent from a
view has the missing label -1 in every partition of that view, so the consensus functions that
handle missing labels (``handles_missing`` in :func:`cclust.base.method_info`; e.g. ``kcc``,
``eac``, ``mcla``) place it from the views that hold it, as NEMO does for partial multi-omic
data (Rappoport & Shamir 2019).

**Provenance.** Each partition's :attr:`cclust.Ensemble.provenance` reads
``"<view>: <maker> K=<K_i> random_state=<seed>"``: the view, what made the partition (the
generator's own provenance, such as ``"leiden resolution=0.5 seed=17"``, else its name), the
number of clusters it has and the ``random_state`` the view's generator was called with; that
call, ``cclust.generate(clusterer, <the view's rows>, n_clusters, random_state=seed, ...)``,
gives the view's partitions again, in the same order. :func:`view_of` reads the views back.

**Scores.** :func:`multiview_scores` scores a consensus labelling against each view (the
silhouette of Rousseeuw 1987 on the objects the view holds) and, given survival times, tests
whether the clusters differ in survival (:func:`logrank_test`, the log-rank test of Mantel 1966
and Peto & Peto 1972), as multi-omic subtyping studies report their clusters; given a
categorical outcome, it tests the clusters' association with it (Pearson's chi-square).

Choices where the papers are silent:

* View i is generated from the i-th child of the one ``numpy.random.SeedSequence`` (an int
  seed drawn from it is what the view's generator receives), so the ensemble is the same for
  any ``n_jobs`` and a view keeps its partitions when another view's settings change; it does
  depend on the order of the views.
* Every partition weighs the same, so a view's say in the consensus is its share of the
  partitions: give the views equal ``n_partitions`` (the default) for equal say, or reweigh
  with :meth:`cclust.Ensemble.with_weights`.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cclust._views import align_views
from cclust.metrics._criteria import silhouette
from cclust.errors import ValidationError
from cclust.validation import RandomStateLike, check_array_2d, check_int, label_vector, spawn_seed_sequences

if TYPE_CHECKING:
    from cclust.ensemble import Ensemble, EnsembleLike

__all__ = ["multiview", "view_of", "multiview_scores", "MultiviewScores", "logrank_test", "LogRankResult",
           "OutcomeTest", "silhouette"]

#: Seeds handed to each view's generator are drawn below this (a C int everywhere).
_SEED_BOUND = 2**31 - 1

#: Keys of a view's settings that are not parameters of its generator.
_SETTINGS = ("clusterer", "n_partitions")

#: Parameters every view's generator receives from multiview itself.
_RESERVED = ("random_state", "n_jobs", "verbose")


# -- the generator ------------------------------------------------------------------------------------

def _settings(name, entry):
    """A view's entry of ``per_view`` as a dict of settings."""
    where = f"per_view[{name!r}]"
    if isinstance(entry, str):
        return {"clusterer": entry}
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], Mapping):
        return {"clusterer": entry[0], **entry[1]}
    if isinstance(entry, Mapping):
        return dict(entry)
    raise ValidationError(f"{where} must be a generator name, a (name, parameters) pair or a dict of settings, "
                          f"got {entry!r}.")


def _view_plans(views, n_clusters, clusterer, params, n_partitions, per_view):
    """[(generator name, function, n_partitions, params, n_clusters)] per view, checked."""
    from cclust.base import accepts
    from cclust.registry import get

    names = [v.name for v in views]
    if params is not None and not isinstance(params, Mapping):
        raise ValidationError(f"params must be a dict of parameters of the clusterer, got {params!r}.")
    if per_view is not None and not isinstance(per_view, Mapping):
        raise ValidationError(f"per_view must be a mapping of view name -> settings, got {per_view!r}.")
    per_view = dict(per_view or {})
    unknown = [key for key in per_view if key not in names]
    if unknown:
        raise ValidationError(f"per_view names {unknown[0]!r}, which is not a view; the views are {names}.")
    n_partitions = check_int(n_partitions, "n_partitions", low=1)
    plans = []
    for view in views:
        own = _settings(view.name, per_view[view.name]) if view.name in per_view else {}
        where = f"per_view[{view.name!r}]"
        name = own.pop("clusterer", clusterer)
        if not isinstance(name, str):
            raise ValidationError(f"{where if view.name in per_view else 'clusterer'} must be a registered generator "
                                  f"name, got {name!r}.")
        if name == "multiview":
            raise ValidationError("a view's clusterer cannot be 'multiview' itself; name a generator such as 'kmeans'.")
        fn = get(name, kind="generator")
        count = check_int(own.pop("n_partitions", n_partitions), f"{where}['n_partitions']"
                          if view.name in per_view else "n_partitions", low=1)
        merged, source_of = {}, {}
        for source, values in (("params", dict(params or {})), (where, own)):
            for key, value in values.items():
                if key in _RESERVED or (key in _SETTINGS and source == "params"):
                    raise ValidationError(f"{source}: {key}=... is set by multiview itself; give it as multiview's "
                                          f"own argument{' or in per_view' if key in _SETTINGS else ''}.")
                if not accepts(fn, key):
                    raise ValidationError(
                        f"{source}: {key}=... is not a parameter of {name!r} (the clusterer of view {view.name!r}) "
                        "that can be set here; put a clusterer's own parameters in per_view for the views it runs on.")
                merged[key], source_of[key] = value, source
        k = n_clusters
        if k is None and merged.get("k_range") is not None:
            try:
                k = int(min(merged["k_range"]))
            except (TypeError, ValueError):
                raise ValidationError(f"{source_of['k_range']}: k_range must be a pair of ints (low, high), got "
                                      f"{merged['k_range']!r}.") from None
        if k is None and _needs_k(fn):
            raise ValidationError(f"n_clusters is needed by {name!r}, the clusterer of view {view.name!r}: give "
                                  "n_clusters, or a k_range for that view (in params or per_view).")
        plans.append((name, fn, count, merged, k))
    return plans


def _needs_k(fn):
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return len(params) > 1 and params[1].default is inspect.Parameter.empty


def multiview(views: Any, n_clusters: int | None = None, *, n_partitions: int = 50, clusterer: str = "kmeans",
              params: Mapping[str, Any] | None = None, per_view: Mapping[str, Any] | None = None,
              obs_names: Mapping[str, Sequence[Any]] | None = None, layer: str | Mapping[str, str] | None = None,
              use_rep: str | Mapping[str, str] | None = None, random_state: RandomStateLike = None,
              n_jobs: int | None = None, verbose: int = 0) -> Ensemble:
    """One ensemble from several views of the objects: each view clustered on its own (COCA; Hoadley et al. 2014).

    Each view is clustered ``n_partitions`` times by its own generator, on the objects it holds;
    the views' partitions follow one another in one :class:`cclust.Ensemble` over all the
    objects, an object absent from a view having the missing label -1 in that view's
    partitions (see :mod:`cclust.multiview` for how objects are matched across views).

    Parameters
    ----------
    views : mapping, sequence, MuData or array-like
        The views: a mapping of view name -> features (array-like of shape (n_rows, n_features),
        DataFrame or AnnData); a list of them (named ``"view0"``, ``"view1"``, ...); a
        ``mudata.MuData``, whose modalities are the views and whose ``obs_names`` are the
        objects (``pip install 'cclust[scverse]'``); or one table, a single view named ``"X"``.
        Rows entirely NaN are objects absent from that view; any other NaN is refused.
    n_clusters : int or None, default=None
        K of the consensus the ensemble is meant for, passed to every view's generator (for
        ``kmeans`` it sets the default K_i range, ``(K, sqrt(n))``). None is allowed when every
        view's generator takes no K (``leiden``, ``louvain``: their ``n_clusters`` is optional)
        or is given a ``k_range``; that view then receives the low end of its ``k_range``.
    n_partitions : int, default=50
        Partitions per view (``per_view`` may set a view's own).
    clusterer : str, default="kmeans"
        The registered generator that clusters every view, unless ``per_view`` names another.
    params : dict, default=None
        Parameters of the generators, for every view (e.g. ``{"k_range": (2, 6)}``); each must
        be a parameter of every view's generator.
    per_view : mapping of view name -> settings, default=None
        A view's own settings, over the defaults: a dict with ``"clusterer"``,
        ``"n_partitions"`` and parameters of its generator (merged over ``params``), e.g.
        ``{"atac": {"clusterer": "leiden", "resolutions": (0.5, 1.0)}, "rna": {"k_range": (2, 8)}}``;
        or just a generator name, or a ``(name, parameters)`` pair.
    obs_names : mapping of view name -> sequence, default=None
        Object IDs of views given as plain arrays (one per row), to align views that hold
        different objects. If one view has IDs, every view needs them.
    layer, use_rep : str or mapping of view name -> str, default=None
        Which features of an AnnData view to read (``adata.layers[layer]``, ``adata.obsm[use_rep]``;
        default ``adata.X``), for every AnnData view or per view.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Passed to each view's generator; the ensemble is the same for any value.
    verbose : int, default=0
        Passed to the generators that take it.

    Returns
    -------
    Ensemble of shape (n_objects, total partitions)
        The views' partitions in the order of the views; ``provenance`` as described in
        :mod:`cclust.multiview` (``"rna: kmeans K=3 random_state=..."``); ``index`` the object
        IDs when the views carry them, else None.

    Raises
    ------
    ValidationError
        For views of different lengths without object IDs, a view sharing no object with the
        others, an object in no view, a ``per_view``/``obs_names``/``layer`` key that is not a view,
        a parameter that a view's generator does not take.

    Examples
    --------
    >>> import numpy as np, cclust
    >>> rng = np.random.default_rng(0)
    >>> truth = np.repeat([0, 1, 2], 20)
    >>> rna = rng.normal(size=(60, 5)) + 4 * truth[:, None]
    >>> methylation = rng.normal(size=(60, 3)) - 3 * truth[:, None]
    >>> methylation[:10] = np.nan          # the first 10 objects have no methylation data
    >>> E = cclust.generate("multiview", {"rna": rna, "methylation": methylation}, 3, n_partitions=5,
    ...                     params={"k_range": (2, 5)}, random_state=0)
    >>> E.shape, view_of(E)[:1] + view_of(E)[-1:]
    ((60, 10), ('rna', 'methylation'))
    >>> E.provenance[0].split()[:2], int((E.labels[:, 5:] == -1).sum(axis=0)[0])
    (['rna:', 'kmeans'], 10)
    >>> cclust.consensus("kcc", E, 3, random_state=0).labels.tolist() == list(np.repeat([0, 1, 2], 20))
    True
    """
    from cclust.base import accepts
    from cclust.ensemble import Ensemble, as_ensemble
    from cclust.validation import check_n_jobs

    aligned, ids, n = align_views(views, obs_names, layer, use_rep)
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=n, allow_none=True)
    check_n_jobs(n_jobs, "n_jobs")
    plans = _view_plans(aligned, n_clusters, clusterer, params, n_partitions, per_view)
    seeds = [int(np.random.default_rng(seq).integers(0, _SEED_BOUND))
             for seq in spawn_seed_sequences(random_state, len(aligned))]
    columns, provenance = [], []
    for view, (name, fn, count, merged, k), seed in zip(aligned, plans, seeds):
        kwargs = dict(merged)
        if verbose and accepts(fn, "verbose", var_keyword=False):
            kwargs["verbose"] = verbose
        try:
            part = fn(view.values, k, n_partitions=count, random_state=seed, n_jobs=n_jobs, **kwargs)
        except ValidationError as exc:
            raise ValidationError(f"{view.where} ({view.values.shape[0]} objects, clusterer {name!r}): {exc}") \
                if view.where != "X" else exc from None
        part = as_ensemble(part, f"the partitions of {view.where}")
        block = np.full((n, part.n_partitions), -1, dtype=np.int64)
        block[view.rows] = part.labels
        columns.append(block)
        makers = part.provenance or (name,) * part.n_partitions
        provenance += [f"{view.name}: {maker} K={int(kk)} random_state={seed}"
                       for maker, kk in zip(makers, part.n_clusters.tolist())]
    return Ensemble(np.column_stack(columns), provenance=provenance, index=ids)


# generate() hands this generator a MuData, several views and AnnData options as they are.
multiview.takes_views = True  # type: ignore[attr-defined]


def view_of(ensemble: EnsembleLike) -> tuple[str, ...]:
    """The view of each partition of an ensemble made by :func:`multiview`, read from its provenance.

    Returns
    -------
    tuple of str of length n_partitions

    Examples
    --------
    >>> import numpy as np, cclust
    >>> a, b = np.eye(6)[:, :3] + np.arange(6)[:, None], np.arange(12.0).reshape(6, 2)
    >>> view_of(cclust.generate("multiview", [a, b], 2, n_partitions=2, random_state=0))
    ('view0', 'view0', 'view1', 'view1')
    """
    from cclust.ensemble import as_ensemble

    ensemble = as_ensemble(ensemble)
    provenance = ensemble.provenance
    if provenance is None or not all(": " in p for p in provenance):
        raise ValidationError("ensemble: its provenance does not say which view made each partition; pass an "
                              "ensemble made by the multiview generator (or one taken from it).")
    return tuple(p.split(": ", 1)[0] for p in provenance)


# -- scores --------------------------------------------------------------------------------------------



@dataclass(frozen=True)
class LogRankResult:
    """The log-rank test of equal survival across groups (:func:`logrank_test`)."""

    statistic: float  #: chi-square statistic
    df: int  #: degrees of freedom, the number of groups less one
    p_value: float  #: upper tail of the chi-square distribution with ``df`` degrees of freedom
    groups: tuple  #: the group labels, in sorted order
    n_objects: np.ndarray  #: objects per group
    observed: np.ndarray  #: events per group
    expected: np.ndarray  #: events expected per group under equal survival

    def __repr__(self) -> str:
        return f"LogRankResult(statistic={self.statistic:.4g}, df={self.df}, p_value={self.p_value:.3g})"


def _survival(time, event, n, time_name="time", event_name="event"):
    """(time float64, event bool) of length n; NaN times allowed (objects without an outcome)."""
    try:
        t = np.asarray(time, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError(f"{time_name} must be an array of numbers (survival or follow-up times).") from None
    if t.ndim != 1 or t.shape[0] != n:
        raise ValidationError(f"{time_name} must be 1-D with one value per object ({n}), got shape {t.shape}.")
    if event is None:
        raise ValidationError(f"{event_name} must be given with {time_name}: 1 (or True) where the event was "
                              "observed, 0 where the time is censored.")
    e = np.asarray(event)
    if e.ndim != 1 or e.shape[0] != n:
        raise ValidationError(f"{event_name} must be 1-D with one value per object ({n}), got shape {e.shape}.")
    known = ~np.isnan(t)
    if e.dtype.kind not in "biuf":
        raise ValidationError(f"{event_name} must hold 0/1 or booleans, got dtype {e.dtype}.")
    values = e[known].astype(np.float64)
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValidationError(f"{event_name} must hold 0/1 or booleans (1: event observed, 0: censored), got "
                              f"{np.unique(values[~np.isin(values, (0.0, 1.0))])[:3].tolist()}.")
    if np.isinf(t).any() or (t[known] < 0).any():
        raise ValidationError(f"{time_name} must be finite and >= 0 (NaN marks an object without an outcome).")
    out = np.zeros(n, dtype=bool)
    out[known] = values == 1.0
    return t, out, known


def logrank_test(time: npt.ArrayLike, event: npt.ArrayLike, groups: npt.ArrayLike) -> LogRankResult:
    """The log-rank test that several groups have the same survival (Mantel 1966; Peto & Peto 1972).

    At each distinct time t with an event, with ``n_t`` objects at risk (time >= t) and ``d_t``
    events, of which ``n_gt`` and ``d_gt`` in group g, group g expects
    ``E_gt = d_t n_gt / n_t`` events; ``U = sum_t (d_gt - E_gt)`` over the times, with the
    hypergeometric covariance ``V_gh = sum_t d_t (n_t - d_t) / (n_t - 1) (n_gt / n_t)
    (delta_gh - n_ht / n_t)``. The statistic is ``U' V^- U`` over the first G - 1 groups, which
    is chi-square with G - 1 degrees of freedom under equal survival (Mantel-Haenszel form; the
    one of R's ``survdiff`` and lifelines' ``multivariate_logrank_test``).

    Parameters
    ----------
    time : array-like of shape (n_samples,)
        Survival or follow-up times, >= 0. NaN: no outcome, the object is left out.
    event : array-like of shape (n_samples,)
        1 or True where the event was observed at ``time``, 0 or False where censored.
    groups : array-like of shape (n_samples,)
        The group (cluster) of each object.

    Returns
    -------
    LogRankResult

    Raises
    ------
    ValidationError
        For times or events of the wrong length or values, fewer than two groups among the
        objects with an outcome, or no event at all.

    Examples
    --------
    >>> result = logrank_test([1, 2, 3, 2, 4], [1, 1, 0, 1, 1], [0, 0, 0, 1, 1])
    >>> result.observed.tolist(), [round(e, 4) for e in result.expected.tolist()]
    ([2.0, 2.0], [1.6, 2.4])
    >>> round(result.statistic, 4), result.df      # 0.4^2 / (0.24 + 1/3)
    (0.2791, 1)
    """
    return _logrank(time, event, groups, "groups")


def _logrank(time, event, groups, groups_name):
    """:func:`logrank_test`, its messages naming the groups ``groups_name``."""
    from scipy.stats import chi2

    try:
        g = np.asarray(groups)
    except Exception:  # noqa: BLE001 - ragged input
        raise ValidationError(f"{groups_name} must be 1-D, one group per object.") from None
    if g.ndim != 1:
        raise ValidationError(f"{groups_name} must be 1-D, one group per object, got shape {g.shape}.")
    t, e, known = _survival(time, event, g.shape[0])
    t, e, g = t[known], e[known], g[known]
    if t.shape[0] == 0:
        raise ValidationError("time is NaN for every object; the log-rank test needs objects with an outcome.")
    codes, k = label_vector(g, groups_name)
    if k < 2:
        raise ValidationError(f"{groups_name}: the objects with an outcome (a time that is not NaN) fall in {k} "
                              "group; the log-rank test compares at least two. Give times for objects of other clusters, "
                              "or choose a consensus with at least two clusters.")
    if not e.any():
        raise ValidationError("event marks no event among the objects with an outcome; the log-rank test needs at "
                              "least one observed event.")
    event_times = np.unique(t[e])
    # at risk at each event time: objects whose time is >= t, per group (one sort, counts from the top)
    at_risk = np.empty((event_times.shape[0], k))
    deaths = np.zeros((event_times.shape[0], k))
    for group in range(k):
        times = np.sort(t[codes == group])
        at_risk[:, group] = times.shape[0] - np.searchsorted(times, event_times, side="left")
        np.add.at(deaths[:, group], np.searchsorted(event_times, t[(codes == group) & e]), 1.0)
    n_t = at_risk.sum(axis=1)
    d_t = deaths.sum(axis=1)
    share = at_risk / n_t[:, None]
    expected = (d_t[:, None] * share).sum(axis=0)
    observed = deaths.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(n_t > 1, d_t * (n_t - d_t) / (n_t - 1), 0.0)
    V = np.einsum("t,tg,gh->gh", scale, share, np.eye(k)) - np.einsum("t,tg,th->gh", scale, share, share)
    U = observed - expected
    statistic = float(U[:-1] @ np.linalg.pinv(V[:-1, :-1]) @ U[:-1])
    df = k - 1
    return LogRankResult(statistic=statistic, df=df, p_value=float(chi2.sf(statistic, df)),
                         groups=tuple(np.unique(g).tolist()), n_objects=np.bincount(codes, minlength=k),
                         observed=observed, expected=expected)


@dataclass(frozen=True)
class OutcomeTest:
    """Pearson's chi-square test that the clusters and a categorical outcome are independent."""

    statistic: float  #: Pearson's chi-square, sum of (observed - expected)^2 / expected over the table
    df: int  #: (clusters - 1) (categories - 1)
    p_value: float  #: upper tail of the chi-square distribution with ``df`` degrees of freedom
    table: np.ndarray  #: objects per (cluster, category), clusters in label order, categories sorted
    categories: tuple  #: the outcome's categories, sorted
    ari: float  #: adjusted Rand index of the clusters and the categories (Hubert & Arabie 1985)

    def __repr__(self) -> str:
        return f"OutcomeTest(statistic={self.statistic:.4g}, df={self.df}, p_value={self.p_value:.3g})"


def _is_unknown(value):
    return value is None or (isinstance(value, float) and value != value)


def _outcome_test(codes, outcome, n):
    """:class:`OutcomeTest` of the cluster codes against ``outcome`` (None/NaN: unknown, left out)."""
    from scipy.stats import chi2_contingency

    from cclust.metrics import ari

    try:
        values = np.asarray(outcome, dtype=object)
    except Exception:  # noqa: BLE001 - ragged input
        raise ValidationError("outcome must be 1-D, one category per object.") from None
    if values.ndim != 1 or values.shape[0] != n:
        raise ValidationError(f"outcome must be 1-D with one category per object ({n}), got shape {values.shape}.")
    known = np.array([not _is_unknown(v) for v in values], dtype=bool)
    kept = values[known]
    if all(isinstance(v, str) for v in kept):
        kept = kept.astype(str)
    elif all(isinstance(v, (numbers.Integral, np.bool_)) for v in kept):
        kept = kept.astype(np.int64)
    elif all(isinstance(v, numbers.Real) for v in kept):
        kept = kept.astype(np.float64)
    else:
        raise ValidationError("outcome mixes strings and numbers (or holds other objects); give one category type.")
    categories, category = np.unique(kept, return_inverse=True)
    if categories.shape[0] < 2:
        raise ValidationError(f"outcome has {categories.shape[0]} category among the objects where it is known; "
                              "the test of association needs at least two (None or NaN marks an unknown outcome).")
    clusters, cluster = np.unique(codes[known], return_inverse=True)
    if clusters.shape[0] < 2:
        raise ValidationError("labels: the objects with a known outcome fall in 1 cluster; the test of association "
                              "needs at least two.")
    table = np.zeros((clusters.shape[0], categories.shape[0]), dtype=np.int64)
    np.add.at(table, (cluster.reshape(-1), category.reshape(-1)), 1)
    statistic, p_value, df, _ = chi2_contingency(table, correction=False)
    return OutcomeTest(statistic=float(statistic), df=int(df), p_value=float(p_value), table=table,
                       categories=tuple(categories.tolist()), ari=float(ari(cluster, category)))


@dataclass(frozen=True)
class MultiviewScores:
    """A consensus labelling scored against each view and an outcome (:func:`multiview_scores`)."""

    silhouette: dict  #: view name -> mean silhouette width on the objects the view holds (NaN if undefined)
    n_objects: dict  #: view name -> objects the view holds
    n_clusters: dict  #: view name -> clusters among those objects
    logrank: LogRankResult | None = None  #: the log-rank test across the clusters, when times were given
    outcome: OutcomeTest | None = None  #: the test of association with a categorical outcome, when one was given
    views: tuple = field(default=())  #: the views, in order

    def summary(self) -> str:
        """The scores as lines of text."""
        width = max([len(v) for v in self.views] + [4])
        lines = [f"{'view':<{width}}  objects  clusters  silhouette (Euclidean)"]
        for v in self.views:
            lines.append(f"{v:<{width}}  {self.n_objects[v]:>7}  {self.n_clusters[v]:>8}  {self.silhouette[v]:>10.4f}")
        if self.logrank is not None:
            r = self.logrank
            lines.append(f"log-rank test across {r.df + 1} clusters ({int(r.n_objects.sum())} objects with an "
                         f"outcome): chi-square {r.statistic:.4g} on {r.df} df, p = {r.p_value:.3g}")
        if self.outcome is not None:
            o = self.outcome
            lines.append(f"outcome ({len(o.categories)} categories, {int(o.table.sum())} objects): chi-square "
                         f"{o.statistic:.4g} on {o.df} df, p = {o.p_value:.3g}; ARI {o.ari:.4f}")
        return "\n".join(lines)


def multiview_scores(labels: npt.ArrayLike, views: Any, *, outcome: npt.ArrayLike | None = None,
                     time: npt.ArrayLike | None = None, event: npt.ArrayLike | None = None,
                     obs_names: Mapping[str, Sequence[Any]] | None = None, layer: str | Mapping[str, str] | None = None,
                     use_rep: str | Mapping[str, str] | None = None) -> MultiviewScores:
    """Score a consensus of several views against each view, and against an outcome when given.

    * **Per view**, the silhouette width (Rousseeuw 1987; :func:`silhouette`) of the labels of
      the objects the view holds, with the Euclidean distance between their rows of that view
      as given (scale the features first if their units differ). It says how well each view
      supports the consensus: a view whose silhouette is near 0 or below adds clusters of its
      own, or none.
    * **Against survival**, with ``time`` and ``event``: the log-rank test that the clusters
      have the same survival (:func:`logrank_test`), on the objects whose time is known.
    * **Against a categorical outcome** (response, stage, a known subtype), with ``outcome``:
      Pearson's chi-square test that clusters and categories are independent (scipy's
      ``chi2_contingency`` without continuity correction) and their adjusted Rand index, on the
      objects whose outcome is known.

    Parameters
    ----------
    labels : array-like of shape (n_objects,)
        The consensus labels of the objects, in the order :func:`multiview` gives them for the
        same ``views`` (e.g. ``ConsensusResult.labels``).
    views, obs_names, layer, use_rep
        As :func:`multiview`; the objects are aligned the same way.
    outcome : array-like of shape (n_objects,), default=None
        A category per object (ints or strings); None or NaN where unknown.
    time : array-like of shape (n_objects,), default=None
        Survival or follow-up times; NaN for an object without an outcome.
    event : array-like of shape (n_objects,), default=None
        1/True where the event was observed, 0/False where the time is censored.

    Returns
    -------
    MultiviewScores

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> labels = np.repeat([0, 1], 15)
    >>> views = {"a": rng.normal(size=(30, 2)) + 5 * labels[:, None], "b": rng.normal(size=(30, 2))}
    >>> time, event = np.where(labels == 0, 10.0, 2.0) + rng.random(30), np.ones(30)
    >>> scores = multiview_scores(labels, views, time=time, event=event)
    >>> scores.silhouette["a"] > 0.5, abs(scores.silhouette["b"]) < 0.2, scores.logrank.p_value < 1e-4
    (True, True, True)
    """
    aligned, ids, n = align_views(views, obs_names, layer, use_rep)
    try:
        array = np.asarray(labels)
    except Exception:  # noqa: BLE001 - ragged input
        raise ValidationError("labels must be 1-D, one label per object.") from None
    if array.ndim != 1 or array.shape[0] != n:
        raise ValidationError(f"labels must be 1-D with one label per object of the views ({n}), got shape "
                              f"{array.shape}.")
    codes, _ = label_vector(array, "labels")
    if time is None and event is not None:
        raise ValidationError("event is given without time; give both (time: follow-up times, event: 1 or 0).")
    scores, sizes, counts = {}, {}, {}
    for view in aligned:
        held = codes[view.rows]
        scores[view.name] = silhouette(view.values, held)
        sizes[view.name] = int(view.rows.shape[0])
        counts[view.name] = int(np.unique(held).shape[0])
    logrank = None if time is None else _logrank(time, event, codes, "labels")
    association = None if outcome is None else _outcome_test(codes, outcome, n)
    return MultiviewScores(silhouette=scores, n_objects=sizes, n_clusters=counts, logrank=logrank,
                           outcome=association, views=tuple(v.name for v in aligned))
