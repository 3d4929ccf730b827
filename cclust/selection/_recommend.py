"""How select_k reads its curves and recommends K: the area under the consensus CDF and its
relative growth, PAC, the method's objective, RCSI against a reference null and the gap
statistic, each with its one-sentence reason; the K range and where K = 1 is allowed."""
import re
from collections.abc import Iterable

import numpy as np

from cclust.validation import check_int
from cclust.errors import ValidationError
from cclust._reference import format_p


def resolve_null(null, method, criterion):
    """The reference distribution ``null="auto"`` stands for: ``"uniform"`` for the Monti
    protocol, None for a consensus method (each reference run would generate and fuse
    partitions) and with ``criterion="gap"`` (the gap statistic has its own reference); any
    other value unchanged."""
    if isinstance(null, str) and null == "auto":
        return "uniform" if method == "monti" and criterion != "gap" else None
    return null


def _recommend_rcsi(k_values, pac, rcsi, p_value, alpha, null, n_references):
    """The K of largest RCSI among the K significant after Bonferroni, else 1 (see select_k).

    Where several significant K have a PAC of 0 (every consensus entry at most the lower or
    above the upper end of the PAC window: each of those partitions is reproduced by every
    resample), RCSI only compares the references' PACs, since a PAC of 0 counts as 1e-4; the
    finest of those perfectly stable K is taken, which splits none of the others' clusters.
    """
    ks = k_values.tolist()
    m = len(ks)
    level = alpha / m
    significant = np.flatnonzero(p_value < level)
    smallest = int(np.nanargmin(p_value))
    adjusted = f"alpha = {alpha:g} over {m} K tried, so p < {level:.3g}" if m > 1 else f"p < alpha = {alpha:g}"
    if significant.size == 0:
        return 1, (f"no evidence of cluster structure: at no K is the data's PAC lower than in {n_references} "
                   f"{null} reference data sets of the same shape beyond chance ({adjusted}; the smallest p-value "
                   f"is {format_p(p_value[smallest])}, at K={ks[smallest]}).")
    perfect = significant[np.asarray(pac)[significant] <= 0.0]
    if perfect.size > 1:
        i = int(perfect[-1])
        return ks[i], (f"K={ks[i]} is the largest of the K whose consensus is perfectly stable (PAC = 0: "
                       f"K={', '.join(str(ks[j]) for j in perfect)}) and significantly more stable than in "
                       f"{n_references} {null} reference data sets ({adjusted}; K={ks[i]}: "
                       f"{_p_phrase(p_value[i])}); the finest of them splits none of the others' clusters.")
    i = int(significant[np.argmax(rcsi[significant])])
    return ks[i], (f"K={ks[i]} has the largest relative cluster stability index, RCSI = {rcsi[i]:.3f}, among the "
                   f"K whose PAC is significantly lower than in {n_references} {null} reference data sets "
                   f"({adjusted}; K={ks[i]}: {_p_phrase(p_value[i])}).")


def _recommend_gap(ks, gap):
    """The K that ``gap.rule`` picks from K = 1 and the K tried (clusGap's ``maxSE`` on that
    sequence: on K = 1, 2, ..., max(k_range) it is clusGap's own choice)."""
    from cclust import _reference

    sequence = [1] + [k for k in ks if k != 1]
    rows = np.asarray(sequence) - 1
    i = _reference.max_se(gap.gap[rows], gap.se_sim[rows], gap.rule, gap.se_factor)
    best = sequence[i]
    where = (f"gap statistic (Tibshirani, Walther & Hastie 2001) against {gap.n_references} {gap.reference} reference "
             f"data sets, rule {gap.rule}")
    if best == 1:
        return 1, (f"no evidence of cluster structure: the {where}, picks K = 1 (gap {gap.gap[0]:.4f}, SE "
                   f"{gap.se_sim[0]:.4f}; K={sequence[1]}: {gap.gap[sequence[1] - 1]:.4f}, SE "
                   f"{gap.se_sim[sequence[1] - 1]:.4f}): the data are no more clustered than the references.")
    return best, (f"K={best} by the {where}: gap {gap.gap[best - 1]:.4f} (SE {gap.se_sim[best - 1]:.4f}).")


def _p_phrase(p):
    text = format_p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


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


def _check_k_range(k_range, n, one_allowed=False):
    """The K >= 2 to run, sorted; K = 1 is accepted (and needs no run) when ``one_allowed``."""
    if isinstance(k_range, (str, bytes)) or not isinstance(k_range, Iterable):
        raise ValidationError(f"k_range must be an iterable of ints such as range(2, 9), got {k_range!r}.")
    values = [check_int(k, "k_range entries") for k in k_range]
    if not values:
        raise ValidationError("k_range must hold at least one K, got an empty range.")
    bad = [k for k in values if not 1 <= k <= n]
    if bad:
        raise ValidationError(f"k_range must hold ints in [1, n_samples={n}], got {bad[0]}.")
    if 1 in values and not one_allowed:
        raise ValidationError(
            "k_range holds 1, but K = 1 (no clusters) can only be recommended against a reference null: "
            "its consensus is trivially perfect. Pass null='uniform' or criterion='gap', or start k_range at 2.")
    values = sorted(set(values) - {1})
    if not values:
        raise ValidationError("k_range must hold at least one K >= 2 to compare with K = 1, got only 1.")
    return np.array(values, dtype=np.int64)


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
