"""Bayesian cluster ensembles (Wang, Shan & Banerjee, SDM 2009; Statistical Analysis and Data
Mining 4(1), 2011).

BCE is a mixed-membership model of the label vectors. Object x draws its own mixture over the K
consensus clusters, ``theta_x ~ Dirichlet(alpha)``; for every base clustering j that labels x it
draws a consensus cluster ``z_xj ~ Discrete(theta_x)`` and then the label
``y_xj ~ Discrete(beta_{z_xj, j})``, so a partition that leaves x out simply draws nothing
(missing labels need no imputation). Where the finite mixture of Topchy, Jain & Punch (2004,
:mod:`cclust.consensus_functions.mixture`) gives every object one component for all its labels,
BCE lets each label come from its own component.

Inference is the paper's variational EM. The variational family is ``q(theta_x) =
Dirichlet(gamma_x)`` and ``q(z_xj) = Discrete(phi_xj)``; the E-step iterates, per object,

* ``phi_xjk  proportional to  exp(psi(gamma_xk) - psi(sum_k gamma_xk)) beta_kj(y_xj)``,
* ``gamma_xk = alpha_k + sum_j phi_xjk`` (observed j only),

and the M-step sets ``beta_kj(l)`` proportional to ``smoothing + sum_x phi_xjk [y_xj = l]``
and ``alpha`` by Newton's method on the Dirichlet part of the bound (the Newton step of Blei,
Ng & Jordan 2003, appendix A.4.2, which the authors' code uses).

The E-step never stores phi (n x r x K): with ``E_xk = exp(psi(gamma_xk) - psi(sum gamma_x))``
and ``Z_xj = sum_k E_xk beta_kj(y_xj)``, ``gamma_x = alpha + E_x * sum_j beta_.j(y_xj) / Z_xj``,
the expected label counts of the M-step are ``beta * (A^T E)`` with A the sparse one-hot whose
entry (x, slot of y_xj) is ``1 / Z_xj``, and the lower bound of an object is
``log Gamma(sum alpha) - sum log Gamma(alpha_k) - log Gamma(sum gamma_x) + sum log Gamma(gamma_xk)
+ sum_k (alpha_k - gamma_xk) (psi(gamma_xk) - psi(sum gamma_x)) + sum_j log Z_xj`` (the phi terms
cancel once phi is optimal for gamma). One pass is O(n r K) time; the compiled E-step iterates
each row to its own stopping point and needs O(threads W K) extra memory for the partial label
counts (W = sum of the K_j). Objects with identical label rows have identical variational
parameters, so the E-step runs once per distinct row (:meth:`cclust.Ensemble.distinct_rows`),
weighted by the row's multiplicity.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.special import digamma, gammaln, zeta

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust._engine import useful_threads
from cclust._lloyd import best_of_restarts
from cclust._codes import missing_mask
from cclust.base import declare
from cclust.consensus_functions._starts import initial_labelings, label_distributions
from cclust.ensemble import require_every_object_labelled
from cclust.errors import ConvergenceWarning, ValidationError
from cclust.result import ConsensusResult
from cclust.validation import (
    check_float,
    check_init_name,
    check_int,
    check_n_clusters,
    check_n_jobs,
    check_random_state,
    renamed_threads,
    require_memory,
)
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

__all__ = ["bce", "BCE_INITS", "BCE_EXTRAS_MAX_SAMPLES"]

#: Starts of a restart: the authors' random parameters, or a k-means++ labelling on the label
#: vectors turned into parameters by one M-step.
BCE_INITS = ("k-means++", "random")

#: ``extras["gamma"]`` (n x K) and ``extras["beta"]`` are filled only up to this many objects.
BCE_EXTRAS_MAX_SAMPLES = 10_000


def _bce_bytes(r, m, code_bytes, row_copy, k, n, n_init):
    """Bytes bce holds at its peak for m distinct label rows of n objects, asked before any is
    made: ``code_bytes`` a label of a distinct row (the canonical form's copy of the codes, read
    in place by the compiled E-step and the start's sums by label) and ``row_copy`` more when rows
    are merged (the distinct rows' codes); 44 a row and cluster (gamma, the E-step's result, the
    bound's m x K terms and the start's indicator and weighted rows, float64); 8 an object and
    restart (the starting labellings). Measured: 41 to 46 bytes a row and cluster and 1.0 a label
    at 2 * 10^4 to 1.6 * 10^5 objects (every row distinct) x 10 to 100 partitions, K = 8; before
    the E-step read the codes, 21 bytes a label more (int64 slots, a mask and a sparse matrix)."""
    return (code_bytes + row_copy) * m * r + 44 * m * k + 8 * n * n_init


def _expected_log_theta(gamma):
    """``E_q[log theta_xk] = psi(gamma_xk) - psi(sum_k gamma_xk)``, row by row."""
    return digamma(gamma) - digamma(gamma.sum(axis=1, keepdims=True))


def _dirichlet_part(alpha, n_objects, stat):
    """The alpha-dependent part of the bound: ``N (log Gamma(sum alpha) - sum log Gamma(alpha))
    + sum_k (alpha_k - 1) stat_k`` with ``stat_k = sum_x E_q[log theta_xk]``."""
    return float(n_objects * (gammaln(alpha.sum()) - gammaln(alpha).sum()) + ((alpha - 1.0) * stat).sum())


def update_alpha(alpha, n_objects, stat, *, tol=1e-10, max_iter=500):
    """The M-step for alpha: Newton's method on the concave Dirichlet part of the bound.

    The Hessian is ``diag(-N psi'(alpha)) + N psi'(sum alpha)``, so the step is linear in K
    (Blei, Ng & Jordan 2003, appendix A.4.2; the authors' ``bceMstep``). The step is halved
    while it leaves the positive orthant (as the authors do) or lowers the objective (added here,
    so the bound can never decrease).
    """
    alpha = np.asarray(alpha, dtype=np.float64).copy()
    value = _dirichlet_part(alpha, n_objects, stat)
    for _ in range(max_iter):
        total = alpha.sum()
        grad = n_objects * (digamma(total) - digamma(alpha)) + stat
        # psi'(x) is the Hurwitz zeta(2, x), which SciPy's polygamma(1, x) returns, bit for bit,
        # through a Python wrapper that took a fifth of a small call's time
        h = -n_objects * zeta(2.0, alpha)
        z = n_objects * zeta(2.0, total)
        c = (grad / h).sum() / (1.0 / z + (1.0 / h).sum())
        step = (grad - c) / h
        eta = 1.0
        while True:
            new = alpha - eta * step
            if (new > 0).all():
                new_value = _dirichlet_part(new, n_objects, stat)
                # Near the maximum the change is below rounding; a step is refused only for a
                # decrease that rounding cannot explain.
                if new_value >= value - 1e-13 * abs(value):
                    break
            eta /= 2.0
            if eta < 1e-12:
                return alpha
        change = np.abs(new - alpha).sum() / alpha.sum()
        alpha, value = new, new_value
        if change < tol:
            break
    return alpha


@renamed_threads
def e_step(labels, offsets, counts, times, alpha, beta, gamma, *, tol=1e-6, max_iter=500, n_jobs=None):
    """The variational E-step for every (distinct) label row, in the compiled core.

    Each row iterates on its own: ``E_xk = exp(psi(gamma_xk) - psi(sum_k gamma_xk))``,
    ``Z_xj = sum_k E_xk beta_kj(y_xj)``, ``gamma_x <- alpha + E_x * sum_j times_j beta_.j(y_xj) / Z_xj``
    (observed j only), until the update passes the stopping test; then phi for the final gamma
    gives the row's expected label counts and ``log Z``. Rows run in parallel in fixed chunks
    whose partial sums are added in chunk order, so the result is bitwise the same for any
    ``n_jobs``. The slow references in the tests (a literal loop with phi stored, and the
    former vectorised NumPy E-step) agree with it to 1e-10.

    Parameters
    ----------
    labels : ndarray of shape (m, r)
        The label rows: int32 with -1 for a missing label, or the stored uint8 / uint16 codes
        (:meth:`cclust.Ensemble.compact_labels`), read in place when C-contiguous.
    offsets : ndarray of shape (r + 1,)
        Label l of partition j is row ``offsets[j] + l`` of ``beta``.
    counts : ndarray of shape (m,)
        Multiplicity of each row (objects sharing the row).
    times : ndarray of shape (r,)
        How many times each partition's label counts (``r w_j``; ones for the paper's model).
    alpha : ndarray of shape (K,)
    beta : ndarray of shape (W, K)
        ``beta[slot, k]``: probability of the slot's label in its partition under cluster k.
    gamma : ndarray of shape (m, K)
        Starting variational Dirichlet parameters (the previous E-step's, or ``alpha + V_x / K``).
    tol, max_iter
        A row stops when ``sum_k |gamma_new - gamma| / sum_k gamma_new`` falls below ``tol``,
        or after ``max_iter`` updates.
    n_jobs : int or None
        Threads (None: every core, :func:`cclust.validation.default_threads`).

    Returns
    -------
    gamma : ndarray of shape (m, K)
        Final gamma; phi is optimal for it (the last update is a phi update).
    label_counts : ndarray of shape (W, K)
        ``sum_x count_x times_j phi_xjk [slot_xj = s]``, the expected label counts of the M-step.
    log_z : float
        ``sum_x count_x sum_j times_j log Z_xj`` (the data part of the bound).
    n_updates : int
        The largest number of gamma updates any row needed.
    """
    from cclust._ext import _bayesian

    gamma = np.array(gamma, dtype=np.float64, order="C", copy=True)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    if not (isinstance(labels, np.ndarray) and labels.dtype in (np.uint8, np.uint16)):
        labels = np.asarray(labels, dtype=np.int32)
    counts_by_slot, log_z, n_updates = _bayesian.e_step(
        np.ascontiguousarray(labels), np.ascontiguousarray(offsets, dtype=np.int64),
        np.ascontiguousarray(counts, dtype=np.float64), np.ascontiguousarray(times, dtype=np.float64),
        np.ascontiguousarray(alpha, dtype=np.float64), beta, gamma, float(tol), int(max_iter),
        check_n_jobs(n_jobs))
    return gamma, counts_by_slot * beta, float(log_z), int(n_updates)


def lower_bound(alpha, gamma, counts, log_z):
    """The variational lower bound of the log-likelihood, summed over objects (see the module
    docstring for the closed form once phi is optimal for gamma)."""
    elog = _expected_log_theta(gamma)
    per_row = (gammaln(gamma).sum(axis=1) - gammaln(gamma.sum(axis=1))
               + ((alpha[None, :] - gamma) * elog).sum(axis=1))
    n_objects = counts.sum()
    return float(n_objects * (gammaln(alpha.sum()) - gammaln(alpha).sum()) + (counts * per_row).sum() + log_z)


def _random_start(offsets, K, rng):
    """The authors' random start: ``alpha_k ~ U(0, 1)``, each ``beta_kj`` a normalised U(0, 1) vector."""
    alpha = rng.random(K)
    beta = rng.random((int(offsets[-1]), K))
    return alpha, label_distributions(beta, offsets, 0.0)


def _labelling_start(rows, counts, times, offsets, labels, K, smoothing, n_threads=1):
    """Parameters from a hard labelling of the rows: beta from its label counts, alpha = 1.

    Label l of partition j counts ``sum_x count_x times_j [y_xj = l]`` for cluster k, summed over
    the rows x of cluster k in order (compiled, one partition at a time: the same sums bit for bit
    as the sparse product of the rows' weighted one-hot matrix, which is never formed)."""
    from cclust._ext import _voting

    m, r = rows.shape
    onehot = np.zeros((m, K))
    onehot[np.arange(m), labels] = 1.0
    table = np.empty((int(offsets[-1]), K))
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    for j in range(r):
        column = np.ascontiguousarray(rows[:, j:j + 1])
        values = (counts * times[j])[:, None] * onehot
        table[offsets[j]:offsets[j + 1]] = _voting.label_sums(column, offsets[j:j + 2] - offsets[j], values, n_threads)
    return np.ones(K), label_distributions(table, offsets, smoothing)


def _observed_weight(rows, times, block=4096):
    """``sum_j times_j [y_xj observed]`` of every row, in row blocks (no m x r float copy)."""
    out = np.empty(rows.shape[0])
    for start in range(0, rows.shape[0], block):
        out[start:start + block] = (~missing_mask(rows[start:start + block]) * times[None, :]).sum(axis=1)
    return out


def _fit(rows, counts, times, offsets, alpha, beta, smoothing, *, tol, max_iter,
         e_step_tol, e_step_max_iter, n_threads=None):
    """One run of variational EM from (alpha, beta). Returns its state at the best bound."""
    K = alpha.shape[0]
    observed = _observed_weight(rows, times)
    gamma = alpha[None, :] + observed[:, None] / K      # the authors' start of the first E-step
    n_objects = counts.sum()
    trace, converged = [], False
    for n_iter in range(1, max_iter + 1):
        gamma, label_counts, log_z, _ = e_step(rows, offsets, counts, times, alpha, beta, gamma,
                                               tol=e_step_tol, max_iter=e_step_max_iter, n_jobs=n_threads)
        bound = lower_bound(alpha, gamma, counts, log_z)
        if not np.isfinite(bound):
            raise ValidationError("bce: the lower bound is not finite (a label has probability 0 under "
                                  "every cluster); use smoothing > 0.")
        penalised = bound + smoothing * float(np.log(beta).sum())
        trace.append(penalised)
        state = (alpha, beta, gamma, bound)
        if n_iter > 1 and trace[-1] - trace[-2] <= tol * abs(trace[-1]):
            converged = True
            break
        beta = label_distributions(label_counts, offsets, smoothing)
        stat = (counts[:, None] * _expected_log_theta(gamma)).sum(axis=0)
        alpha = update_alpha(alpha, n_objects, stat)
    alpha, beta, gamma, bound = state
    return alpha, beta, gamma, bound, trace, n_iter, converged


@weights_on_the_ensemble
@renamed_threads
@declare(handles_missing=True, object_order="distribution")  # identical rows merged in order of first member
def bce(ensemble: EnsembleLike, n_clusters: int, *, smoothing: float = 1e-6,
        init: str = "k-means++", n_init: int = 5, max_iter: int = 500, tol: float = 1e-4, e_step_tol: float = 1e-4,
        e_step_max_iter: int = 100, max_bytes: int | None = None, random_state: RandomStateLike = None,
        n_jobs: int | None = None) -> ConsensusResult:
    """Bayesian cluster ensembles by variational EM (Wang, Shan & Banerjee 2009, 2011).

    The generative model (Wang et al. 2011): ``theta_x ~ Dirichlet(alpha)`` per object;
    for each base clustering j that labels x, ``z_xj ~ Discrete(theta_x)`` and
    ``y_xj ~ Discrete(beta_{z_xj, j})``. Variational EM fits ``alpha`` and ``beta``
    while each object gets a variational Dirichlet ``gamma_x`` (and multinomials ``phi_xj``,
    never stored); every object joins the cluster of largest ``gamma_xk``, as the authors'
    ``runBCE`` does (``gamma_x = alpha + sum_j phi_xj``, so this is the argmax of the
    aggregated phi shifted by the prior alpha, the posterior mean of ``theta_x`` up to
    normalisation). Labels missing from a partition draw nothing: the
    object's gamma, phi and bound use its observed labels only, and the M-step counts only
    labelled objects.

    Choices where the paper leaves room, checked against the authors' MATLAB code:

    * ``smoothing`` is the authors' Laplace smoothing of beta (their ``PramaLap = 1e-6``): the
      MAP estimate under a symmetric Dirichlet(1 + smoothing) prior; the bound reported in
      ``extras["objective_trace"]`` includes that log prior, so variational EM never lowers it.
    * Starts: ``init="random"`` draws alpha and the rows of beta uniformly and normalises beta,
      as ``runBCE``; the default ``init="k-means++"`` (the start of
      :func:`cclust.consensus_functions.voting.ivc`) turns a k-means++ labelling on the label
      vectors into beta by one M-step, alpha = 1. From random starts variational EM stops at
      much lower bounds (measured in the method catalogue). Restarts keep the run of highest bound among those whose
      labels use all K clusters.
    * The first E-step starts each object at ``gamma_x = alpha + V_x / K`` (V_x its number of
      labels), as the authors; later E-steps start from the previous gamma rather than restarting,
      which makes the bound non-decreasing from one iteration to the next.
    * The E-step stops per object at a relative gamma change below ``e_step_tol`` (the authors
      stop when phi and gamma change by under 1% in total); the outer loop stops when the bound
      improves by under ``tol`` of its size (the authors: beta changes by under 1%).
    * The alpha Newton step is halved while it leaves the positive orthant (the authors) or
      lowers the bound (added).
    * Partition weights count partition j's label ``r w_j`` times (equal weights: once, the
      paper's model).

    **Cost.** Time and memory are linear in n: an EM iteration is one compiled pass over the m
    distinct label rows, O(m r K) per update of a row's gamma, each row updated until it settles
    (at most ``e_step_max_iter`` times); memory is the label matrix, m x K gammas and a W x K
    table per thread (W = sum of the K_i). A restart takes some tens of iterations, and the
    ``n_init`` restarts multiply the time: about 1.5 times ``em-mixture`` (Topchy, Jain & Punch
    2004, one component per object rather than one per label) with the defaults of both. Pass ``n_init=1`` to divide it by
    five, or use ``em-mixture`` for large n.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Base clusterings; -1 marks a missing label.
    n_clusters : int
        K, the number of consensus clusters, in [2, number of distinct label vectors].
    smoothing : float, default=1e-6
        Laplace smoothing of beta (> 0).
    init : {"k-means++", "random"}, default="k-means++"
        ``"random"`` is the authors' start (see above).
    n_init : int, default=5
        Restarts; the run with the highest lower bound is kept.
    max_iter : int, default=500
        Variational EM iterations per run.
    tol : float, default=1e-4
        A run stops when its bound improves by less than ``tol`` times its magnitude.
    e_step_tol : float, default=1e-4
        An object's E-step stops when its gamma moves by less than ``e_step_tol`` (relative, L1).
    e_step_max_iter : int, default=100
        Updates of gamma per object and E-step; the next E-step continues from where this one
        stopped, so a cap only spreads the work over iterations.
    max_bytes : int, default=None
        Memory budget (default: the ``CCLUST_MEMORY_BUDGET`` environment variable, else 2 GiB),
        asked once the distinct label rows (m of them) are known and before anything else is
        made: the label codes' width a label of a distinct row (plus a copy of their codes when
        rows are merged; the compiled passes read the codes in place), 44 a distinct row and
        cluster, and 8 an object and restart.
    random_state : int, Generator or None
    n_jobs : int or None, default=None
        Threads of the compiled E-step (None: every core,
        :func:`cclust.validation.default_threads`); the result is the same for any number.

    Returns
    -------
    ConsensusResult
        ``objective``: the variational lower bound of the log-likelihood (nats, higher is
        better) at the kept run's last E-step. ``extras``: ``objective_trace`` (the bound plus
        the smoothing prior, per iteration), ``objectives`` (the bound of each restart;
        ``lower_bounds`` before), ``alpha`` (K,)
        and, for up to ``BCE_EXTRAS_MAX_SAMPLES`` objects, ``gamma`` (n, K) and ``beta`` (a list
        over the input partitions of (K, K_j) arrays indexed by the Ensemble's labels), and
        ``fewer_clusters``.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.bayesian import bce
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> bce(labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1, 1]
    """
    from cclust.ensemble import as_ensemble

    user = as_ensemble(ensemble)
    E, columns = user.canonical(return_columns=True)
    n_clusters = check_n_clusters(n_clusters, E)
    smoothing = check_float(smoothing, "smoothing", low=0, low_open=True)
    check_init_name(init, BCE_INITS)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    e_step_tol = check_float(e_step_tol, "e_step_tol", low=0)
    e_step_max_iter = check_int(e_step_max_iter, "e_step_max_iter", low=1)
    require_every_object_labelled(E, "bce", "gives an object with no label only the prior alpha, "
                                            "the same for every such object")
    rng = check_random_state(random_state)
    n_jobs = check_n_jobs(n_jobs)

    n, r = E.n_samples, E.n_partitions
    groups = E.distinct_rows()
    m = n if groups is None else int(groups[0].shape[0])
    # the stored codes, read in place (no int32 copy of the label matrix)
    codes = E.compact_labels()
    require_memory(_bce_bytes(r, m, codes.itemsize, codes.itemsize if groups is not None else 0, n_clusters, n, n_init),
                   f"bce's variational parameters for {m} distinct label rows of {n} objects x "
                   f"{r} partitions and {n_clusters} clusters",
                   "use kcc or em-mixture (no m x K variational parameters), or fewer restarts (n_init)", max_bytes)
    if groups is None:
        rows, inverse, counts = codes, np.arange(n), np.ones(n)
    else:
        first, inverse, counts = groups
        rows, counts = codes[first], counts.astype(np.float64)
    times = E.weights * r
    offsets = E.offsets

    if init == "k-means++":
        starts = initial_labelings(E, n_clusters, init, n_init, rng, n_jobs)

    def one_run(i):
        if init == "random":
            alpha, beta = _random_start(offsets, n_clusters, rng)
        else:
            row_labels = starts[i] if groups is None else starts[i][first]
            alpha, beta = _labelling_start(rows, counts, times, offsets, row_labels, n_clusters, smoothing,
                                           useful_threads(m, n_jobs))
        fit = _fit(rows, counts, times, offsets, alpha, beta, smoothing, tol=tol, max_iter=max_iter,
                   e_step_tol=e_step_tol, e_step_max_iter=e_step_max_iter, n_threads=n_jobs)
        row_labels = fit[2].argmax(axis=1)
        k_used = int(np.unique(row_labels).shape[0])
        return k_used == n_clusters, fit[3], fit, row_labels, k_used

    # a run that uses every cluster before one that does not, then the highest bound (the first on ties)
    best, scores = best_of_restarts(one_run, n_init, score=lambda run: (run[0], run[1]), higher_is_better=True)
    _, bound, fit, row_labels, k_used = best
    alpha, beta, gamma, bound, trace, n_iter, converged = fit
    if not converged:
        warnings.warn(f"bce stopped at max_iter={max_iter} before the lower bound settled; raise max_iter "
                      "or tol.", ConvergenceWarning, stacklevel=2)
    extras = {
        "objective_trace": np.asarray(trace),
        "objectives": np.array([score[1] for score in scores]),
        "alpha": alpha,
        "fewer_clusters": (f"only {k_used} of the {n_clusters} clusters hold an object"
                           if k_used < n_clusters else ""),
    }
    if n <= BCE_EXTRAS_MAX_SAMPLES:
        extras["gamma"] = gamma[inverse]
        extras["beta"] = _beta_per_input_partition(beta, E, user, columns)
    return ConsensusResult.from_labels(
        row_labels[inverse], objective=bound,
        objective_name="variational lower bound of the log-likelihood, nats (higher is better)",
        n_iter=n_iter, converged=converged, method="bce", extras=extras)


def _beta_per_input_partition(beta, E, user, columns):
    """beta as a list over the input partitions of (K, K_j) arrays, columns indexed by the
    Ensemble's labels (the canonical ensemble renumbers clusters and sorts partitions)."""
    out = [None] * E.n_partitions
    for jc, j in enumerate(columns):
        canon = E.labels[:, jc]
        block = beta[E.offsets[jc]:E.offsets[jc + 1]]          # (K_j, K), canonical label order
        labelled = np.flatnonzero(canon >= 0)
        _, first = np.unique(canon[labelled], return_index=True)
        theirs = user.labels[labelled[first], j]               # Ensemble label of each canonical one
        table = np.zeros((beta.shape[1], int(user.n_clusters[j])))
        table[:, theirs] = block.T
        out[j] = table
    return out
