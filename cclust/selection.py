"""Choosing the number of clusters: Monti et al.'s resampling consensus matrix, its CDF, the
delta-area curve and PAC, next to each method's own consensus criterion.

For every K, the consensus method is run ``n_resamples`` times, each time on a random
subsample of the objects, and the consensus matrix ``M_K(i, j)`` (Monti et al. 2003, eq. 2-3)
counts how often i and j were put in the same cluster among the runs that sampled both. A
stable K gives entries near 0 and 1; the empirical CDF of the entries, the area under it, the
relative growth of that area (delta area) and the proportion of ambiguous entries (PAC,
Senbabaoglu et al. 2014) summarise how far from 0/1 the entries are.
"""
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields

import numpy as np

from cclust._progress import progress
from cclust.validation import check_float, check_int, check_n_threads
from cclust.errors import ValidationError
from cclust._pipeline import (
    RESERVED_GENERATOR,
    RESERVED_METHOD,
    call_method,
    check_name,
    check_params_dict,
    child_seeds,
    generate_ensemble,
    validate_X,
)

__all__ = ["CRITERIA", "SelectKResult", "select_k"]

#: The rules select_k can recommend K by.
CRITERIA = ("pac", "delta_area", "objective")

#: Points at which the CDF is reported and the area computed: 0, 0.01, ..., 1 (the 100 bins
#: of ConsensusClusterPlus). ``k / 100`` rather than ``linspace`` so that 0.1, 0.9 ... are the
#: same doubles as the literals.
_GRID = np.arange(101, dtype=np.float64) / 100.0


@dataclass(frozen=True, eq=False)
class SelectKResult:
    """What :func:`select_k` measured for every K, and the K it recommends.

    Attributes
    ----------
    k_values : ndarray of shape (m,), int64
        The K tried, increasing.
    cdf_grid : ndarray of shape (g,), float64
        Points in [0, 1] (0 and 1 included, increasing) at which ``cdf`` is given.
    cdf : ndarray of shape (m, g), float64
        ``cdf[k, j]`` is the fraction of consensus-matrix entries (pairs i < j sampled together
        at least once) that are ``<= cdf_grid[j]``.
    area : ndarray of shape (m,)
        Area under the CDF, A(K) (Monti et al. 2003), on ``cdf_grid``.
    delta_area : ndarray of shape (m,)
        Relative increase of the area: ``A(K)`` for the first K, then
        ``(A(K) - A(K_prev)) / A(K_prev)``.
    pac : ndarray of shape (m,)
        Proportion of ambiguous clustering ``CDF(u2) - CDF(u1)`` (Senbabaoglu et al. 2014).
    objective : ndarray of shape (m,)
        The method's own criterion of a fit on all the data at each K.
    objective_name : str
        What ``objective`` is (and whether higher or lower is better).
    best_k : int
        The recommended K.
    criterion : str
        The rule that picked it: ``"pac"``, ``"delta_area"`` or ``"objective"``.
    reason : str
        One sentence saying why.
    method : str
        The consensus method.
    consensus_matrices : dict or None
        K -> (n, n) float64 consensus matrix (NaN for pairs never sampled together), when
        ``keep_matrices=True``.
    labels : dict
        K -> int64 labels of the fit on all the data.
    warnings : tuple of str
        What to be wary of; so far one case: ``best_k`` is the largest K tried, or the smallest
        when it is above 2, so the best K may lie outside the range (widen ``k_range``).
    """

    k_values: np.ndarray
    cdf_grid: np.ndarray
    cdf: np.ndarray
    area: np.ndarray
    delta_area: np.ndarray
    pac: np.ndarray
    objective: np.ndarray
    objective_name: str
    best_k: int
    criterion: str
    reason: str
    method: str
    consensus_matrices: dict | None
    labels: dict
    warnings: tuple = ()

    def as_table(self):
        """The per-K numbers as a dict of equal-length lists (``pandas.DataFrame(...)``-ready).

        Examples
        --------
        >>> import numpy as np
        >>> from cclust.selection import select_k
        >>> rng = np.random.default_rng(0)
        >>> X = np.vstack([rng.normal(c, 0.1, (15, 2)) for c in (0, 3)])
        >>> table = select_k(X, [2, 3], n_partitions=5, n_resamples=5, random_state=0).as_table()
        >>> sorted(table), table["k"]
        (['area', 'delta_area', 'k', 'objective', 'pac'], [2, 3])
        """
        return {
            "k": self.k_values.tolist(),
            "area": self.area.tolist(),
            "delta_area": self.delta_area.tolist(),
            "pac": self.pac.tolist(),
            "objective": self.objective.tolist(),
        }

    def to_dict(self):
        """Every field as plain Python values (lists, floats, str), e.g. for JSON."""
        def plain(value):
            if isinstance(value, np.ndarray):
                return value.tolist()
            if isinstance(value, dict):  # K -> array
                return {int(k): v.tolist() for k, v in value.items()}
            if isinstance(value, tuple):
                return list(value)
            return value

        return {field.name: plain(getattr(self, field.name)) for field in fields(self)}

    def summary(self):
        """A text table (K, area, delta area, PAC, objective) with the recommendation.

        Examples
        --------
        >>> import numpy as np
        >>> from cclust.selection import select_k
        >>> rng = np.random.default_rng(0)
        >>> X = np.vstack([rng.normal(c, 0.1, (15, 2)) for c in (0, 3)])
        >>> print(select_k(X, [2, 3], n_partitions=5, n_resamples=5, random_state=0).summary())
        ... # doctest: +NORMALIZE_WHITESPACE, +ELLIPSIS
        select_k with kcc: ...
          K    area  delta area     PAC  objective
          2  ...
          3  ...
        best K = 2 (pac): ...
        """
        lines = [f"select_k with {self.method}: objective = {self.objective_name or 'n/a'}",
                 f"{'K':>3}  {'area':>6}  {'delta area':>10}  {'PAC':>6}  {'objective':>9}"]
        for i, k in enumerate(self.k_values.tolist()):
            mark = "  <-" if k == self.best_k else ""
            lines.append(f"{k:>3}  {self.area[i]:>6.4f}  {self.delta_area[i]:>10.4f}  "
                         f"{self.pac[i]:>6.4f}  {self.objective[i]:>9.4g}{mark}")
        lines.append(f"best K = {self.best_k} ({self.criterion}): {self.reason}")
        lines.extend(f"warning: {text}" for text in self.warnings)
        return "\n".join(lines)

    def __repr__(self):
        return (f"SelectKResult(method={self.method!r}, k_values={self.k_values.tolist()}, "
                f"best_k={self.best_k}, criterion={self.criterion!r})")


def select_k(data, k_range=range(2, 9), *, method="kcc", generator="kmeans", n_partitions=50,
             n_resamples=50, subsample=0.8, method_params=None, generator_params=None,
             criterion="pac", pac_interval=(0.1, 0.9), random_state=None, n_jobs=None, verbose=0,
             keep_matrices=False, max_bytes=None):
    """Recommend a number of clusters by resampling consensus (Monti et al. 2003) and PAC.

    For each K in ``k_range`` and each of ``n_resamples`` resamples, a random ``subsample``
    fraction of the objects is drawn (without replacement); on it, ``n_partitions`` basic
    partitions are generated with ``generator`` and fused at K with ``method`` (when ``data``
    is an Ensemble, its rows are taken instead). The consensus matrix

        M_K(i, j) = #(runs putting i and j in one cluster) / #(runs sampling both i and j)

    (Monti et al. 2003, Machine Learning 52:91-118, eq. 3) is summarised by:

    * the empirical CDF of its entries ``M_K(i, j)``, i < j, over the pairs sampled together
      at least once, reported on the grid 0, 0.01, ..., 1;
    * the area under the CDF, Monti et al.'s ``A(K) = sum_{i=2}^{m} (x_i - x_{i-1}) CDF(x_i)``
      evaluated at the grid points x_i (ConsensusClusterPlus's 100-bin histogram method);
    * the delta area, the relative increase of the area when K grows: ``Delta(K_1) = A(K_1)``
      for the smallest K tried (Monti's ``Delta(2) = A(2)``) and ``Delta(K) = (A(K) -
      A(K_prev)) / A(K_prev)`` for the others, as ConsensusClusterPlus plots it (Monti et al.
      index the same ratio at the smaller K);
    * PAC, the proportion of ambiguous clustering ``CDF(u2) - CDF(u1)`` for ``pac_interval =
      (u1, u2)``, the fraction of entries in ``(u1, u2]`` (Senbabaoglu, Michailidis & Li 2014,
      Sci Rep 4:6207), computed from the entries themselves rather than the grid;
    * the method's own consensus criterion (``ConsensusResult.objective``) of one fit on all
      the objects at K, whose labels are returned too.

    Every K uses the same ``n_resamples`` subsamples (fewer differences between K that come
    from the draw alone), and the seeds of K's runs depend only on ``random_state`` and K, so
    a K gets the same numbers whatever else ``k_range`` holds.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features), DataFrame, or cclust.Ensemble
        The objects, or ready basic partitions of them.
    k_range : iterable of int, default=range(2, 9)
        The K to try, each in ``[2, n_samples]``; sorted and de-duplicated.
    method : str, default="kcc"
        A registered consensus function. With an Ensemble, methods needing the features
        (``requires_X``) cannot be used.
    generator : str, default="kmeans"
        A registered generator (unused for an Ensemble).
    n_partitions : int, default=50
        Basic partitions generated per run (unused for an Ensemble).
    n_resamples : int, default=50
        Resampled runs per K (Monti et al.'s H).
    subsample : float in (0, 1], default=0.8
        Fraction of the objects in each resample; it must keep at least max(k_range) objects.
    method_params, generator_params : dict or None
        Extra keyword arguments of the method and the generator.
    criterion : {"pac", "delta_area", "objective"}, default="pac"
        How ``best_k`` is chosen: the lowest PAC (ties go to the smaller K); the largest delta
        area among the K after the first (the K after which adding a cluster gains most
        stability); or the best objective, using the direction its name gives ("higher is
        better" / "lower is better"). Many objectives drift with K, so prefer "pac".
    pac_interval : (float, float), default=(0.1, 0.9)
        ``(u1, u2)`` with ``0 <= u1 < u2 <= 1``.
    random_state : int, numpy.random.Generator or None, default=None
        Same value, same result, for any ``n_jobs``.
    n_jobs : int or None, default=None
        Threads for the generator and the method (labels do not depend on it).
    verbose : int, default=0
        A progress bar over K x resamples (on a terminal only).
    keep_matrices : bool, default=False
        Return every consensus matrix (n x n float64 each).
    max_bytes : int, optional
        Memory budget for the n x n buffers (two, plus one per K if ``keep_matrices``);
        default ``cclust.validation.memory_budget()`` (``CCLUST_MEMORY_BUDGET``).

    Returns
    -------
    SelectKResult

    Raises
    ------
    ValidationError
        Bad ``k_range``, ``subsample``, ``n_resamples``, ``criterion``, ``pac_interval`` ...
    MemoryBudgetError
        If the n x n buffers exceed the budget.

    References
    ----------
    S. Monti, P. Tamayo, J. Mesirov, T. Golub. Consensus clustering: a resampling-based method
    for class discovery and visualization of gene expression microarray data. Machine Learning
    52:91-118, 2003.
    Y. Senbabaoglu, G. Michailidis, J. Z. Li. Critical limitations of consensus clustering in
    class discovery. Scientific Reports 4:6207, 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust import select_k
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.2, (20, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    >>> result = select_k(X, range(2, 6), n_partitions=10, n_resamples=10, random_state=0)
    >>> result.best_k, result.criterion
    (3, 'pac')
    >>> result.cdf.shape
    (4, 101)
    """
    from cclust.ensemble import Ensemble
    from cclust.validation import require_memory
    from cclust.registry import get
    from cclust.base import method_info

    fn = get(check_name(method, "method"), kind="consensus")
    info = method_info(fn)
    method_params = check_params_dict(method_params, "method_params", RESERVED_METHOD, "select_k")
    generator_params = check_params_dict(generator_params, "generator_params", RESERVED_GENERATOR,
                                         "select_k")
    if isinstance(data, Ensemble):
        ensemble, X = data, None
        if info.requires_X:
            raise ValidationError(
                f"method {method!r} needs the original features, but data is an Ensemble; pass the "
                "features X as data, or choose a method that uses the partitions alone (e.g. kcc)."
            )
        n = ensemble.n_samples
        if n < 2:
            raise ValidationError(f"data has n_samples={n}; choosing K needs at least 2 objects.")
    else:
        ensemble = None
        X, _ = validate_X(data, "data")
        n = X.shape[0]
        generator = check_name(generator, "generator")
        get(generator, kind="generator")  # fail early on an unknown name
        n_partitions = check_int(n_partitions, "n_partitions", low=1)
    k_values = _check_k_range(k_range, n)
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    subsample = check_float(subsample, "subsample", low=0, high=1, low_open=True)
    size = round(subsample * n)
    if size < max(2, int(k_values[-1])):
        raise ValidationError(
            f"subsample={subsample} keeps {size} of the {n} objects, fewer than the "
            f"{max(2, int(k_values[-1]))} needed for K={int(k_values[-1])}; raise subsample or "
            "lower the largest K in k_range."
        )
    if criterion not in CRITERIA:
        raise ValidationError(f"criterion must be one of {list(CRITERIA)}, got {criterion!r}.")
    low, high = _check_interval(pac_interval)
    verbose = check_int(verbose, "verbose", low=0)
    check_n_threads(n_jobs, "n_jobs")
    if not isinstance(keep_matrices, (bool, np.bool_)):
        raise ValidationError(f"keep_matrices must be True or False, got {keep_matrices!r}.")

    m = k_values.shape[0]
    buffers = 2 + (m if keep_matrices else 0)
    require_memory(buffers * n * n * 8, f"select_k's {buffers} consensus buffers of {n} x {n} objects",
                   "pass fewer objects, e.g. a random subset of the rows of data (the "
                   "subsample parameter does not shrink these n x n matrices)", max_bytes)

    root = child_seeds(random_state, 1)[0]
    draw = np.random.default_rng(np.random.SeedSequence(root, spawn_key=(0,)))
    samples = [np.sort(draw.choice(n, size=size, replace=False)) for _ in range(n_resamples)]

    sampled = np.zeros((n, n), dtype=np.float64)  # runs that sampled both i and j
    for idx in samples:
        sampled[np.ix_(idx, idx)] += 1.0
    together = np.empty((n, n), dtype=np.float64)  # runs that put i and j in one cluster
    upper = np.triu_indices(n, k=1)
    pair_sampled = sampled[upper] > 0

    cdf = np.empty((m, _GRID.shape[0]))
    pac = np.empty(m)
    objective = np.empty(m)
    objective_name = ""
    labels = {}
    matrices = {} if keep_matrices else None

    def fuse(k, gen_seed, method_seed, idx):
        features = None if X is None else (X if idx is None else np.ascontiguousarray(X[idx]))
        if ensemble is not None:
            part = ensemble if idx is None else ensemble.take(idx)
        else:
            part = generate_ensemble(generator, features, k, n_partitions, generator_params, gen_seed,
                                     n_jobs, 0)
        return call_method(fn, part, k, method_params, method_seed, features, n_jobs, 0)

    with progress(total=m * (n_resamples + 1), desc=f"select_k ({method})", verbose=verbose) as bar:
        for row, k in enumerate(k_values.tolist()):
            seeds = np.random.SeedSequence(root, spawn_key=(k,)).generate_state(
                2 * (n_resamples + 1), dtype=np.uint32).tolist()
            together.fill(0.0)
            for h, idx in enumerate(samples):
                run = fuse(k, seeds[2 * h], seeds[2 * h + 1], idx)
                for members in _clusters(run.labels, idx):
                    together[np.ix_(members, members)] += 1.0
                bar.update(1)
            full = fuse(k, seeds[-2], seeds[-1], None)
            bar.update(1)
            labels[k] = np.array(full.labels, dtype=np.int64)
            objective[row] = full.objective
            objective_name = objective_name or full.objective_name

            with np.errstate(invalid="ignore", divide="ignore"):
                np.divide(together, sampled, out=together)
            together[sampled == 0] = np.nan
            entries = np.sort(together[upper][pair_sampled])
            count = entries.shape[0]
            cdf[row] = np.searchsorted(entries, _GRID, side="right") / count
            pac[row] = (np.searchsorted(entries, high, side="right")
                        - np.searchsorted(entries, low, side="right")) / count
            if keep_matrices:
                matrices[k] = together.copy()

    area = consensus_area(_GRID, cdf)
    delta = delta_area(area)
    best_k, reason = _recommend(criterion, k_values, pac, delta, objective, objective_name,
                                (low, high))
    edge = _edge_warning(k_values, best_k)
    return SelectKResult(
        k_values=k_values, cdf_grid=_GRID.copy(), cdf=cdf, area=area, delta_area=delta, pac=pac,
        objective=objective, objective_name=objective_name, best_k=int(best_k),
        criterion=criterion, reason=reason, method=method, consensus_matrices=matrices,
        labels=labels, warnings=(edge,) if edge else ())


def _edge_warning(k_values, best_k):
    """A sentence when ``best_k`` is at an end of the K tried that could be widened, else "".

    The largest K tried always counts as an edge; the smallest only above 2 (K = 1 is not
    tried, so K = 2 at the bottom of the range is a real answer).

    Examples
    --------
    >>> _edge_warning([2, 3, 4, 5, 6, 7, 8], 8)
    'K=8 is the largest K tried, so a larger K may be better still; widen the range (e.g. up to 11) to check.'
    >>> _edge_warning([2, 3, 4], 2)
    ''
    """
    ks = sorted(int(k) for k in k_values)
    if len(ks) < 2:
        return ""
    if best_k == ks[-1]:
        wider = ks[-1] + max(2, (ks[-1] - ks[0] + 1) // 2)
        return (f"K={best_k} is the largest K tried, so a larger K may be better still; widen the range "
                f"(e.g. up to {wider}) to check.")
    if best_k == ks[0] and ks[0] > 2:
        return (f"K={best_k} is the smallest K tried, so a smaller K may be better still; widen the range "
                f"(e.g. down to {max(2, ks[0] - max(2, (ks[-1] - ks[0] + 1) // 2))}) to check.")
    return ""


def consensus_area(grid, cdf):
    """Monti et al.'s area under the CDF, ``sum_{i>=2} (x_i - x_{i-1}) CDF(x_i)``, per row.

    Examples
    --------
    >>> import numpy as np
    >>> consensus_area(np.array([0.0, 0.5, 1.0]), np.array([[0.5, 0.5, 1.0]]))
    array([0.75])
    """
    cdf = np.atleast_2d(cdf)
    return (np.diff(grid)[None, :] * cdf[:, 1:]).sum(axis=1)


def delta_area(area):
    """Relative area increase: ``area[0]``, then ``(area[i] - area[i-1]) / area[i-1]``.

    Examples
    --------
    >>> delta_area([0.5, 0.75, 0.75]).tolist()
    [0.5, 0.5, 0.0]
    """
    area = np.asarray(area, dtype=np.float64)
    out = np.empty_like(area)
    if area.shape[0]:
        out[0] = area[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[1:] = (area[1:] - area[:-1]) / area[:-1]
    return out


def _clusters(labels, idx):
    """The objects (as indices into the full data) of each cluster of a run on ``idx``."""
    labels = np.asarray(labels)
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    return [idx[part] for part in np.split(order, bounds)]


def _check_k_range(k_range, n):
    if isinstance(k_range, (str, bytes)) or not isinstance(k_range, Iterable):
        raise ValidationError(f"k_range must be an iterable of ints such as range(2, 9), got {k_range!r}.")
    values = [check_int(k, "k_range entries") for k in k_range]
    if not values:
        raise ValidationError("k_range must hold at least one K, got an empty range.")
    bad = [k for k in values if not 2 <= k <= n]
    if bad:
        raise ValidationError(
            f"k_range must hold ints in [2, n_samples={n}], got {bad[0]}; choosing K compares "
            "K >= 2 clusters of the objects."
        )
    return np.array(sorted(set(values)), dtype=np.int64)


def _check_interval(pac_interval):
    try:
        low, high = pac_interval
    except (TypeError, ValueError):
        raise ValidationError(f"pac_interval must be a pair (u1, u2), got {pac_interval!r}.") from None
    low = check_float(low, "pac_interval[0]", low=0, high=1)
    high = check_float(high, "pac_interval[1]", low=0, high=1)
    if not low < high:
        raise ValidationError(f"pac_interval must satisfy 0 <= u1 < u2 <= 1, got {pac_interval!r}.")
    return low, high


def _first_best(values, better):
    """Index of the best finite value (smallest K on ties), or None if none is finite."""
    finite = np.isfinite(values)
    if not finite.any():
        return None
    target = values[finite].min() if better == "lower" else values[finite].max()
    tol = 1e-12 * max(1.0, abs(target))
    return int(np.flatnonzero(finite & (np.abs(values - target) <= tol))[0])


def _objective_direction(name):
    match = re.search(r"\b(higher|larger|lower|smaller) is better", name or "")
    if not match:
        return None
    return "higher" if match.group(1) in ("higher", "larger") else "lower"


def _recommend(criterion, k_values, pac, delta, objective, objective_name, interval):
    ks = k_values.tolist()
    if criterion == "pac":
        i = _first_best(pac, "lower")
        if i is None:
            raise ValidationError("PAC is undefined for every K; no pair of objects was sampled together.")
        ties = [k for k, p in zip(ks, pac) if k != ks[i] and abs(p - pac[i]) <= 1e-12 * max(1.0, abs(pac[i]))]
        tie = f", tied with K={', '.join(map(str, ties))} (the smaller K is taken)" if ties else ""
        return ks[i], (f"K={ks[i]} has the lowest proportion of ambiguous clustering, PAC={pac[i]:.4f} "
                       f"(share of consensus entries in ({interval[0]:g}, {interval[1]:g}]){tie}, among "
                       f"K in {ks}.")
    if criterion == "delta_area":
        if len(ks) < 2:
            raise ValidationError(
                "criterion='delta_area' compares successive K and needs at least two K in k_range, "
                f"got {ks}; use criterion='pac' or widen k_range."
            )
        i = _first_best(delta[1:], "higher")
        if i is None:
            raise ValidationError("delta area is undefined for every K (the area under the CDF is zero).")
        i += 1
        return ks[i], (f"going from K={ks[i - 1]} to K={ks[i]} increases the area under the consensus "
                       f"CDF the most (delta area {delta[i]:.4f}), among K in {ks}.")
    direction = _objective_direction(objective_name)
    if direction is None:
        raise ValidationError(
            f"criterion='objective' needs to know whether the method's objective is better higher or "
            f"lower, but its name {objective_name!r} does not say; use criterion='pac' or 'delta_area'."
        )
    i = _first_best(objective, direction)
    if i is None:
        raise ValidationError("the method's objective is NaN for every K; use criterion='pac'.")
    return ks[i], (f"K={ks[i]} has the {'highest' if direction == 'higher' else 'lowest'} "
                   f"{objective_name} = {objective[i]:.6g} on the full data, among K in {ks}.")
