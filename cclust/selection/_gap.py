"""The gap statistic (Tibshirani, Walther & Hastie 2001) as R's ``cluster::clusGap`` computes it:
gap_statistic and GapResult."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from cclust.validation import RandomStateLike, check_float, check_int, check_n_jobs
from cclust.errors import ValidationError
from cclust._pipeline import child_seeds, validate_X


@dataclass(frozen=True, eq=False)
class GapResult:
    """What :func:`gap_statistic` measured for K = 1..k_max, and the K its rule picks.

    Attributes
    ----------
    k_values : ndarray of shape (m,), int64
        1, 2, ..., k_max.
    log_w, e_log_w, gap, se_sim : ndarray of shape (m,)
        clusGap's table: ``log W_K`` of the data, its mean over the references, the gap
        ``E.logW - logW`` and the simulation error ``sqrt(1 + 1/B) sd_b(log W_K^b)``.
    best_k : int
        The K the rule picks (1: no evidence of cluster structure).
    rule, se_factor, n_references, reference, d_power :
        The settings.
    labels : dict
        K -> int64 labels of the data's clustering at K.
    reason : str
        One sentence saying why.
    """

    k_values: np.ndarray
    log_w: np.ndarray
    e_log_w: np.ndarray
    gap: np.ndarray
    se_sim: np.ndarray
    best_k: int
    rule: str
    se_factor: float
    n_references: int
    reference: str
    d_power: float
    labels: dict
    reason: str

    def as_table(self):
        """clusGap's ``Tab`` as a dict of equal-length lists (``k``, ``log_w``, ``e_log_w``,
        ``gap``, ``se_sim``)."""
        return {"k": self.k_values.tolist(), "log_w": self.log_w.tolist(), "e_log_w": self.e_log_w.tolist(),
                "gap": self.gap.tolist(), "se_sim": self.se_sim.tolist()}

    def to_dict(self):
        """Every field as plain Python values, e.g. for JSON."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(self.as_table())
        out.pop("k_values")
        out["labels"] = {int(k): v.tolist() for k, v in self.labels.items()}
        return out

    def summary(self):
        """A text table (K, log W, E log W, gap, SE) with the choice and its reason."""
        lines = [f"gap statistic (Tibshirani, Walther & Hastie 2001), {self.n_references} {self.reference} "
                 f"reference data sets, d_power = {self.d_power:g}, rule {self.rule} (SE factor {self.se_factor:g})",
                 f"{'K':>3}  {'log W':>9}  {'E log W':>9}  {'gap':>8}  {'SE':>7}"]
        for i, k in enumerate(self.k_values.tolist()):
            mark = "  <-" if k == self.best_k else ""
            lines.append(f"{k:>3}  {self.log_w[i]:>9.4f}  {self.e_log_w[i]:>9.4f}  {self.gap[i]:>8.4f}  "
                         f"{self.se_sim[i]:>7.4f}{mark}")
        lines.append(f"best K = {self.best_k} ({self.rule}): {self.reason}")
        return "\n".join(lines)


def gap_statistic(data: Any, k_max: int = 8, *, n_references: int = 100, d_power: float = 1, reference: str = "uniform",
                  rule: str = "firstSEmax", se_factor: float = 1.0, n_init: int = 10,
                  random_state: RandomStateLike = None, n_jobs: int | None = None) -> GapResult:
    """The gap statistic of Tibshirani, Walther & Hastie (2001) as R's ``cluster::clusGap`` computes
    it, with k-means as the clusterer, and the number of clusters by clusGap's rules.

    For K = 1..``k_max`` the data are clustered by k-means (the best of ``n_init`` k-means++
    starts by the within sum of squares; K = 1 is one cluster) and ``W_K = 0.5 sum_r sum_{i<j in
    C_r} d(i, j)^d_power / n_r`` is computed (clusGap's ``W.k``); ``n_references`` reference data
    sets without clusters get the same. ``gap(K) = mean_b log W_K^b - log W_K`` and
    ``SE(K) = sqrt(1 + 1/B) sd_b(log W_K^b)``; :func:`cclust._reference.max_se` then applies the
    rule (``"firstSEmax"``, R's default; ``"Tibs2001SEmax"``, the paper's "smallest K with
    gap(K) >= gap(K+1) - s(K+1)"; ``"globalSEmax"``, ``"firstmax"``, ``"globalmax"``). K = 1 is
    a possible answer: the data are then no more clustered than the references.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features)
    k_max : int, default=8
        The largest K (clusGap's ``K.max``), at least 2.
    n_references : int, default=100
        Reference data sets B (clusGap's ``B``), at least 2.
    d_power : float, default=1
        Power of the distances in ``W_K`` (clusGap's ``d.power``; 2 is Tibshirani et al.'s
        pooled within-cluster sum of squares, computed without pairs).
    reference : {"uniform", "original", "gaussian"}, default="uniform"
        ``"uniform"``: uniform over the range of each principal component, rotated back
        (clusGap's ``spaceH0 = "scaledPCA"``); ``"original"``: uniform over the range of each
        feature (``spaceH0 = "original"``); ``"gaussian"``: normal scores with each component's
        spread (M3C's reference).
    rule : str, default="firstSEmax"
    se_factor : float, default=1.0
        clusGap's ``SE.factor``.
    n_init : int, default=10
        k-means++ starts per K (R users pass ``nstart`` to ``kmeans`` for the same reason).
    random_state : int, numpy.random.Generator or None
    n_jobs : int or None
        Threads: each data set (the data and every reference) at each K is one task, and the
        tasks run side by side, one per thread; results do not depend on it.

    Returns
    -------
    GapResult

    References
    ----------
    R. Tibshirani, G. Walther, T. Hastie. Estimating the number of clusters in a data set via the
    gap statistic. Journal of the Royal Statistical Society B 63(2):411-423, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.3, (30, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    >>> res = gap_statistic(X, 5, n_references=20, random_state=0)
    >>> res.best_k, res.rule
    (3, 'firstSEmax')
    """
    from cclust import _reference
    from cclust._monti import best_kmeans_labels

    X, _ = validate_X(data, "data")
    n = X.shape[0]
    if n < 3:
        raise ValidationError(f"data has n_samples={n}; the gap statistic needs at least 3 objects.")
    k_max = check_int(k_max, "k_max", low=2, high=n)
    n_references = check_int(n_references, "n_references", low=2)
    d_power = check_float(d_power, "d_power", low=0, low_open=True)
    se_factor = check_float(se_factor, "se_factor", low=0)
    n_init = check_int(n_init, "n_init", low=1)
    if rule not in _reference.GAP_RULES:
        raise ValidationError(f"rule must be one of {list(_reference.GAP_RULES)}, got {rule!r}.")
    if reference not in ("uniform", "original", "gaussian"):
        raise ValidationError(f"reference must be one of ['uniform', 'original', 'gaussian'], got {reference!r}.")
    threads = check_n_jobs(n_jobs, "n_jobs")
    root = child_seeds(random_state, 1)[0]

    def log_w_at(Y, seed, k, n_threads):
        """log W_K of Y at one K and its labels, the best of n_init k-means++ starts."""
        if k == 1:
            labels = np.zeros(Y.shape[0], dtype=np.int64)
        else:
            starts = [np.random.default_rng(s) for s in np.random.SeedSequence(seed, spawn_key=(k,)).spawn(n_init)]
            labels = np.asarray(best_kmeans_labels(Y, k, starts, "k-means++", 100, 1e-4, n_threads)[0],
                                dtype=np.int64)
        return np.log(_reference.within_dispersion(Y, labels, d_power, n_threads)), labels

    shape = _reference.ReferenceShape(X)
    data_seed = np.random.SeedSequence(root, spawn_key=(0,)).generate_state(1)[0]

    def reference_of(b):
        """Reference b and its k-means seed, from its own seeds: the same whichever thread draws it."""
        draw, run = np.random.SeedSequence(root, spawn_key=(1, b)).spawn(2)
        return shape.draw(reference, np.random.default_rng(draw)), run.generate_state(1)[0]

    draws = _reference.SharedDraws(reference_of, k_max)

    def task(b_k, n_threads=1):
        """log W_K (and the labels) of one data set at one K: b = -1 is the data, 0..B-1 the references."""
        b, k = b_k
        if b < 0:
            return log_w_at(X, data_seed, k, n_threads)
        Y, seed = draws.get(b)
        try:
            return log_w_at(Y, seed, k, n_threads)
        finally:
            draws.done(b)

    # every (data set, K) is independent and takes its randomness from its own seeds, so the
    # tasks run one per thread (k-means and the distance sums release the GIL) in any order
    # and give the same numbers; a data set is drawn once and dropped after its last K
    tasks = [(b, k) for b in range(-1, n_references) for k in range(1, k_max + 1)]
    workers = min(threads, len(tasks))
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(task, tasks))
    else:
        results = [task(t) for t in tasks]
    log_w = np.array([results[k][0] for k in range(k_max)])
    labels = {k: results[k - 1][1] for k in range(1, k_max + 1)}
    logs = np.array([r[0] for r in results[k_max:]]).reshape(n_references, k_max)
    e_log_w = logs.mean(axis=0)
    se_sim = np.sqrt(1.0 + 1.0 / n_references) * logs.std(axis=0, ddof=1)
    gap = e_log_w - log_w
    best = _reference.max_se(gap, se_sim, rule, se_factor) + 1
    if best == 1:
        reason = (f"clusGap's {rule} rule picks K = 1 (gap {gap[0]:.4f}, SE {se_sim[0]:.4f}): the data are no more "
                  f"clustered than the {reference} references, no evidence of cluster structure.")
    else:
        reason = (f"K={best} by clusGap's {rule} rule: gap {gap[best - 1]:.4f} (SE {se_sim[best - 1]:.4f}) against "
                  f"{gap[best - 2]:.4f} at K={best - 1}.")
    return GapResult(k_values=np.arange(1, k_max + 1, dtype=np.int64), log_w=log_w, e_log_w=e_log_w, gap=gap,
                     se_sim=se_sim, best_k=int(best), rule=rule, se_factor=float(se_factor),
                     n_references=n_references, reference=reference, d_power=float(d_power), labels=labels,
                     reason=reason)
