"""Reference data without clusters, and the statistics that compare a data set's cluster
stability with theirs (the reference null of :func:`cclust.select_k`).

A reference data set keeps what the data has that is not cluster structure: its mean, the
directions of its principal components and the spread along each, so that a stability score of
the data can be judged against the scores that data without clusters but with the same shape
get from exactly the same protocol (Tibshirani, Walther & Hastie 2001, reference (b) of the gap
statistic; John et al. 2020, M3C).

* ``"gaussian"``: independent normal scores with the standard deviation of each principal
  component, rotated back (M3C's ``reverse-pca`` reference, a Gaussian with the data's
  covariance);
* ``"uniform"``: independent uniform scores over the range of each principal component, rotated
  back (the gap statistic's reference (b), the reference of M3C's first versions).

The comparison of one K: the data's PAC against the B references' PACs, summarised as

* the relative cluster stability index ``RCSI = mean_b log(PAC_b) - log(PAC)`` and its standard
  error ``sd_b(log PAC_b - log PAC) / sqrt(B)`` (M3C; a PAC of 0 counts as 1e-4, as in M3C);
* the Monte Carlo p-value ``(1 + #{b : PAC_b < PAC}) / (B + 1)`` (M3C), whose smallest value is
  ``1 / (B + 1)``;
* the predictive p-value, the one select_k decides by: the chance that one more reference data
  set has a PAC at most the data's, predicted from the B references on the logit scale with
  Student's t on B - 1 degrees of freedom (the prediction interval of a normal sample, which
  counts the uncertainty of the references' mean and spread); it reaches below ``1 / (B + 1)``
  as far as B references support;
* M3C's beta p-value: a beta distribution fitted to the references' PACs by their mean and
  variance (the method of moments) evaluated at the data's PAC. It takes the fitted mean and
  variance as exact, so with few references its far tail claims more than they show: on
  reference PACs drawn from a beta distribution it falls below 1e-3 in 0.8-1.0% of null draws
  with B = 10 (the predictive p-value: 0.1-0.5%), and a data PAC of 0 gets exactly 0 even when
  a reference PAC is 0 too. select_k reports it beside the predictive p-value for comparison
  with M3C.
"""
import threading

import numpy as np

from cclust.errors import ValidationError

#: The reference distributions select_k offers.
NULLS = ("gaussian", "uniform")

#: What a PAC of exactly 0 counts as in the logarithms of RCSI (M3C's value).
PAC_FLOOR = 1e-4


class ReferenceShape:
    """The principal axes of X that a reference keeps: mean, rotation, score spread and ranges.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64, finite

    Raises
    ------
    ValidationError
        X has fewer than 3 rows, or no spread at all (every row the same).
    """

    def __init__(self, X):
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        if n < 3:
            raise ValidationError(f"a reference null needs at least 3 objects, got n_samples={n}; pass null=None.")
        self.mean = X.mean(axis=0)
        _, s, vt = np.linalg.svd(X - self.mean, full_matrices=False)
        keep = s > s[0] * max(X.shape) * np.finfo(np.float64).eps if s.size and s[0] > 0 else np.zeros(0, bool)
        if not keep.any():
            raise ValidationError(
                "X has no spread (every row is the same), so there is no shape for a reference null to keep "
                "and nothing to cluster; check the data.")
        self.rotation = vt[keep]                                   # (r, d)
        scores = (X - self.mean) @ self.rotation.T                 # (n, r)
        self.sd = scores.std(axis=0, ddof=1)
        self.low, self.high = scores.min(axis=0), scores.max(axis=0)
        self.feature_low, self.feature_high = X.min(axis=0), X.max(axis=0)
        self.n = n

    @property
    def rank(self):
        """Principal components kept (the rank of the centred data)."""
        return self.rotation.shape[0]

    def draw(self, null, rng):
        """One reference data set of the data's size, (n_samples, n_features) float64:
        ``"gaussian"`` or ``"uniform"`` scores along the principal axes (above), or
        ``"original"``, uniform over the range of each feature (the gap statistic's reference
        (a), clusGap's ``spaceH0 = "original"``)."""
        r = self.rank
        if null == "gaussian":
            scores = rng.standard_normal((self.n, r)) * self.sd
        elif null == "uniform":
            scores = self.low + rng.random((self.n, r)) * (self.high - self.low)
        elif null == "original":  # uniform over each feature's range, no rotation (clusGap's "original")
            span = self.feature_high - self.feature_low
            return self.feature_low + rng.random((self.n, span.shape[0])) * span
        else:
            raise ValidationError(f"null must be one of {list(NULLS)} or None, got {null!r}.")
        return np.ascontiguousarray(scores @ self.rotation + self.mean)


class SharedDraws:
    """Reference data sets handed to several tasks each (one task per K of the gap statistic),
    drawn once by the first task that asks and dropped after the last one is done, so that at
    most about one data set per thread is held at a time.

    ``draw(b)`` returns reference b; ``uses`` is how many tasks ask for each. Thread-safe: a
    reference asked for by two threads at once is drawn once, and the same whichever thread
    draws it (``draw`` takes its randomness from b alone)."""

    def __init__(self, draw, uses):
        self._draw, self._uses = draw, int(uses)
        self._lock = threading.Lock()
        self._held = {}       # b -> [event, data, tasks still to come]

    def get(self, b):
        """Reference b, drawn now if no task has drawn it yet; call :meth:`done` after use."""
        with self._lock:
            entry = self._held.get(b)
            first = entry is None
            if first:
                entry = self._held[b] = [threading.Event(), None, self._uses]
        if first:
            try:
                entry[1] = self._draw(b)
            finally:
                entry[0].set()
        entry[0].wait()
        if entry[1] is None:
            raise RuntimeError(f"reference {b} could not be drawn (the first task that drew it failed).")
        return entry[1]

    def done(self, b):
        """One task of reference b is finished; the last one frees it."""
        with self._lock:
            entry = self._held[b]
            entry[2] -= 1
            if entry[2] == 0:
                del self._held[b]


def format_p(p):
    """A p-value as text, never as exactly 0: below what double precision resolves it reads
    ``< 1e-300``, the value otherwise, with two significant digits.

    Examples
    --------
    >>> format_p(0.0312), format_p(0.0), format_p(3e-9)
    ('0.031', '< 1e-300', '3e-09')
    """
    if not np.isfinite(p):
        return "n/a"
    if p <= 1e-300:
        return "< 1e-300"
    return f"{p:.2g}"


def rcsi(pac, reference_pacs):
    """RCSI and its standard error per K: ``pac`` (m,), ``reference_pacs`` (B, m)."""
    observed = np.log(np.maximum(np.asarray(pac, dtype=np.float64), PAC_FLOOR))
    logs = np.log(np.maximum(np.asarray(reference_pacs, dtype=np.float64), PAC_FLOOR))
    diff = logs - observed[None, :]
    b = diff.shape[0]
    se = diff.std(axis=0, ddof=1) / np.sqrt(b) if b > 1 else np.full(diff.shape[1], np.nan)
    return diff.mean(axis=0), se


def monte_carlo_p(pac, reference_pacs):
    """``(1 + #{b : PAC_b < PAC}) / (B + 1)`` per K (low PAC is stable: small p, structure)."""
    reference_pacs = np.asarray(reference_pacs, dtype=np.float64)
    below = (reference_pacs < np.asarray(pac, dtype=np.float64)[None, :]).sum(axis=0)
    return (1.0 + below) / (reference_pacs.shape[0] + 1.0)


def predictive_p(pac, reference_pacs):
    """The chance that one more reference data set has a PAC at most ``pac``, per K.

    The PACs are taken on the logit scale (clipped to ``[PAC_FLOOR, 1 - PAC_FLOOR]``, the floor
    RCSI uses), and the data's value is compared with the B references' by the prediction
    statistic ``t = (z - mean_b z_b) / (sd_b z_b sqrt(1 + 1/B))``, Student's t with B - 1 degrees
    of freedom when the references' logits are normal. Unlike a fitted distribution taken as
    exact, it widens with fewer references: four references cannot give the p-value of a
    hundred. NaN where there is no spread to predict from (fewer than 2 references, or every
    reference's clipped PAC the same); the caller then keeps the Monte Carlo p-value.
    """
    from scipy.stats import t as student

    reference_pacs = np.asarray(reference_pacs, dtype=np.float64)
    b = reference_pacs.shape[0]
    out = np.full(reference_pacs.shape[1], np.nan)
    if b < 2:
        return out

    def logit(p):
        p = np.clip(p, PAC_FLOOR, 1.0 - PAC_FLOOR)
        return np.log(p) - np.log1p(-p)

    z = logit(reference_pacs)
    mean, sd = z.mean(axis=0), z.std(axis=0, ddof=1)
    ok = sd > 1e-12 * np.maximum(1.0, np.abs(mean))
    score = (logit(np.asarray(pac, dtype=np.float64)) - mean) / np.where(ok, sd, 1.0) / np.sqrt(1.0 + 1.0 / b)
    out[ok] = student.cdf(score[ok], b - 1)
    return out


def beta_p(pac, reference_pacs):
    """The beta distribution fitted to each K's reference PACs by mean and variance, at ``pac``.

    M3C's p-value, reported beside :func:`predictive_p`. NaN where no beta distribution has those
    moments (every reference PAC the same, a mean of 0 or 1, or a variance at least
    ``mean (1 - mean)``).
    """
    from scipy.stats import beta

    reference_pacs = np.asarray(reference_pacs, dtype=np.float64)
    mu = reference_pacs.mean(axis=0)
    var = reference_pacs.var(axis=0, ddof=1) if reference_pacs.shape[0] > 1 else np.zeros_like(mu)
    out = np.full(mu.shape, np.nan)
    # a variance at rounding level (every reference PAC the same) is no spread to fit
    ok = (var > 1e-12 * mu * (1 - mu)) & (mu > 0) & (mu < 1) & (var < mu * (1 - mu))
    common = np.where(ok, mu * (1 - mu) / np.where(ok, var, 1.0) - 1.0, np.nan)
    a, b = mu * common, (1 - mu) * common
    out[ok] = beta.cdf(np.asarray(pac, dtype=np.float64)[ok], a[ok], b[ok])
    return out


#: clusGap's rules for the number of clusters from the gap curve (R's cluster::maxSE).
GAP_RULES = ("firstSEmax", "Tibs2001SEmax", "globalSEmax", "firstmax", "globalmax")


def within_dispersion(X, labels, d_power=1, n_threads=1):
    """clusGap's W_k: ``0.5 * sum_r sum_{i, j in C_r} d(i, j)^d_power / n_r`` (Tibshirani, Walther
    & Hastie 2001, eq. 2 with clusGap's ``d.power``; each unordered pair counted once, as R's
    ``sum(dist(xs)^d.power / nrow(xs))``). ``d_power=2`` is the pooled within-cluster sum of
    squares about the cluster means, which needs no pairs; other powers sum the pairs in the
    compiled core, with no m x m array, the same for any ``n_threads``."""
    from cclust._ext import _distances

    X = np.asarray(X, dtype=np.float64)
    total = 0.0
    for r in np.unique(labels):
        members = np.ascontiguousarray(X[labels == r])
        m = members.shape[0]
        if m < 2:
            continue
        if d_power == 2:  # sum_{i<j} d(i, j)^2 / m is the sum of squares about the mean
            total += 0.5 * float(((members - members.mean(axis=0)) ** 2).sum())
            continue
        total += 0.5 * _distances.pair_distance_sum(members, float(d_power), n_threads) / m
    return total


def max_se(f, se, rule="firstSEmax", se_factor=1.0):
    """The index (0-based) of the number of clusters chosen from the gap curve ``f`` (for K = 1,
    2, ...) and its standard errors ``se`` by one of clusGap's rules (R's ``cluster::maxSE``):

    * ``"globalmax"``: the largest gap; ``"firstmax"``: the first local maximum;
    * ``"Tibs2001SEmax"``: the smallest K with ``gap(K) >= gap(K+1) - s(K+1)`` (Tibshirani et
      al.'s rule);
    * ``"firstSEmax"`` (R's default) and ``"globalSEmax"``: the smallest K whose gap is within
      ``se_factor`` standard errors of the first local (or of the global) maximum.
    """
    f = np.asarray(f, dtype=np.float64)
    fse = se_factor * np.asarray(se, dtype=np.float64)
    K = f.shape[0]
    decr = np.diff(f) <= 0
    first = int(np.argmax(decr)) if decr.any() else K - 1
    if rule == "firstmax":
        return first
    if rule == "globalmax":
        return int(np.argmax(f))
    if rule == "Tibs2001SEmax":
        ok = f[:-1] >= (f - fse)[1:]
        return int(np.argmax(ok)) if ok.any() else K - 1
    if rule not in ("firstSEmax", "globalSEmax"):
        raise ValidationError(f"rule must be one of {list(GAP_RULES)}, got {rule!r}.")
    nc = first if rule == "firstSEmax" else int(np.argmax(f))
    ok = f[:nc] >= f[nc] - fse[nc]
    return int(np.argmax(ok)) if ok.any() else nc
