"""What clue's median partitions share (Hornik 2005; :mod:`cclust.consensus_functions.median`,
:mod:`~cclust.consensus_functions.gordon_vichi` and :mod:`~cclust.consensus_functions.symdiff`):
the ensemble as membership blocks, the argument checks and the result, the starts (the KCC
consensus and random stochastic matrices), clue's stopping rule and the best of several starts,
and the documentation blocks of their parameters.
"""
import numpy as np

from cclust._lloyd import best_of_restarts
from cclust.consensus_functions._starts import kernel
from cclust.ensemble import as_ensemble
from cclust.errors import ValidationError
from cclust.graph import honour_n_clusters
from cclust.result import ConsensusResult
from cclust.soft import is_soft_ensemble
from cclust.validation import (check_float, check_int, default_threads, memory_budget, require_memory,
                               spawn_seed_sequences)

#: clue's default relative tolerance, sqrt(machine epsilon).
DEFAULT_TOL = float(np.sqrt(np.finfo(float).eps))

#: Largest sum K_i for which the (sum K_i)^2 Gram matrix of the fast SE/DWH route is formed.
GRAM_MAX_COLUMNS = 4000


# -- the ensemble as membership blocks ----------------------------------------------------------

def require_complete(ensemble, method):
    """The hard ensemble as an Ensemble, refused when a label is missing."""
    E = as_ensemble(ensemble)
    if E.has_missing:
        raise ValidationError(
            f"ensemble has missing labels (-1); {method} compares whole membership matrices, whose rows "
            "must sum to one, so every object must be labelled in every partition. Drop the objects "
            "(ensemble.take(objects=...)) or the partitions with missing labels.")
    return E


class Memberships:
    """The partitions as the stacked membership matrix B (n x sum K_i): dense for a
    SoftEnsemble; for a hard Ensemble its one-hot, whose products are made from the stored
    label codes without forming it (``B^T M`` by :func:`cclust._ext._voting.label_sums`, ``B Q``
    by :func:`cclust._ext._voting.scores`, bitwise SciPy's products with the CSR one-hot: the
    same terms added in the same order); the ensemble's weights w, summing to one."""

    def __init__(self, ensemble, method):
        if is_soft_ensemble(ensemble):
            E = ensemble
            self.hard = False
            self._B = np.ascontiguousarray(E.stacked())
            self.ensemble = None
        else:
            E = require_complete(ensemble, method)
            self.hard = True
            self._B = None          # formed when read; cross and combine read the label codes
            self.ensemble = E
        self.source = E                                  # the weighted ensemble itself
        self.n, self.r = E.n_samples, E.n_partitions
        self.K = np.asarray(E.n_clusters, dtype=np.int64)
        self.offsets = np.asarray(E.offsets, dtype=np.int64)
        self.w = np.asarray(E.weights, dtype=np.float64)
        self.C = int(self.offsets[-1])
        self.k_max = int(self.K.max())
        if self.hard:
            self.norms2 = np.full(self.r, float(self.n))
        else:
            sq = (self.B ** 2).sum(axis=0)
            self.norms2 = np.add.reduceat(sq, self.offsets[:-1])
        self._gram = None

    @property
    def B(self):
        """The memberships as a matrix: a SoftEnsemble's dense ones, or a hard ensemble's sparse
        one-hot, formed when first read (the symmetric-difference median reads it for its few
        objects; the median partitions' products read the codes instead)."""
        if self._B is None:
            self._B = self.ensemble.one_hot()
        return self._B

    def require_dense(self, k, copies, method, max_bytes=None, *, tables=0, starts=0, extra=0):
        """Refuse (MemoryBudgetError) unless ``copies`` dense float64 (n, max(k, max K_i))
        matrices fit the memory budget: clue's memberships have a column for every cluster of the
        widest partition, so their size is n times the largest K_i, not n times K. Counted with
        them: ``tables`` float64 (sum K_i, max(k, max K_i)) matrices (cross products, matchings),
        ``starts`` (n, k) starting memberships and ``extra`` bytes."""
        k_cols = max(int(k), self.k_max)
        require_memory(copies * self.n * k_cols * 8 + tables * self.C * k_cols * 8 + starts * self.n * int(k) * 8
                       + int(extra),
                       f"{method}'s {copies} dense {self.n} x {k_cols} membership matrices (one column per "
                       f"cluster of the widest partition, K_i = {self.k_max})",
                       "use partitions with fewer clusters (the largest K_i sets the width) or fewer objects, "
                       "or a method whose memory does not grow with K_i, such as kcc", max_bytes)

    def block(self, i):
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def cross(self, M):
        """B^T M, (sum K_i, k)."""
        if self.hard:
            return kernel().label_sums(self.ensemble.compact_labels(), self.offsets,
                                        np.ascontiguousarray(M, dtype=np.float64), default_threads())
        return np.asarray(self.B.T @ M)

    def cross_block(self, i, M):
        """U_i^T M for partition i alone, (K_i, k)."""
        if self.hard:
            column = np.ascontiguousarray(self.codes_of(i))
            return kernel().label_sums(column[:, None], np.array([0, self.K[i]], dtype=np.int64),
                                        np.ascontiguousarray(M, dtype=np.float64), default_threads())
        return self.B[:, self.block(i)].T @ M

    def combine(self, Q):
        """B Q, (n, k)."""
        if self.hard:
            return kernel().scores(self.ensemble.compact_labels(), self.offsets,
                                    np.ascontiguousarray(Q, dtype=np.float64), default_threads())
        return np.asarray(self.B @ Q)

    def codes_of(self, i, rows=slice(None)):
        """Partition i's labels of ``rows`` (a hard ensemble here is complete, so its stored
        codes are its labels, 0..K_i-1, in the narrowest type: no int32 copy of the matrix)."""
        return self.ensemble.compact_labels()[rows, i]

    def gram_ok(self, max_bytes=None):
        return self.C <= GRAM_MAX_COLUMNS and self.C * self.C * 8 <= memory_budget(max_bytes)

    def gram(self):
        """G = B^T B, dense (sum K_i)^2: the pairwise contingency tables (hard) or membership
        cross products (soft)."""
        if self._gram is None:
            if self.hard:
                E = self.ensemble
                G = np.empty((self.C, self.C))
                for i in range(self.r):
                    G[self.block(i)] = E.contingency(self.codes_of(i), int(self.K[i]))
            else:
                G = self.B.T @ self.B
            self._gram = G
        return self._gram

    def matched_scatter(self, assignments, k_cols):
        """Q (sum K_i, k_cols) with ``w_i`` at (cluster l of partition i, its matched column)."""
        Q = np.zeros((self.C, k_cols))
        for i, cols in enumerate(assignments):
            Q[self.offsets[i] + np.arange(self.K[i]), cols] = self.w[i]
        return Q

    def matched_dense(self, i, cols, k_cols):
        """U_i P_i: partition i's memberships in its matched columns, (n, k_cols)."""
        out = np.zeros((self.n, k_cols))
        if self.hard:
            out[np.arange(self.n), cols[self.codes_of(i)]] = 1.0
        else:
            out[:, cols] = self.B[:, self.block(i)]
        return out


# -- argument checks and the result -----------------------------------------------------------

def check_common(ensemble, n_clusters, method, n_init, max_iter, tol):
    data = Memberships(ensemble, method)
    k = check_int(n_clusters, "n_clusters", low=1, high=data.n)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    return data, k, n_init, max_iter, tol


#: The start rules of SE, HE, SM, HM and GV1 (``init`` as a string).
INITS = ("kcc", "random")


def start_memberships(init, data, k, n_init, random_state):
    """Starting memberships: the user's ``init`` (an (n, k) matrix or a list of them), or
    ``n_init`` starts by a rule: ``"random"`` draws random stochastic matrices (clue's
    ``.random_stochastic_matrix``); ``"kcc"`` makes the first start the hard KCC consensus of
    the ensemble (:func:`kcc_start`) and the other ``n_init - 1`` random. Every start has its
    own seed spawned from ``random_state``, so the random starts are the same under both rules."""
    if isinstance(init, str) or init is None:
        rule = "random" if init is None else init
        if rule not in INITS:
            raise ValidationError(f"init must be one of {list(INITS)} or starting memberships of shape "
                                  f"({data.n}, {k}), got {init!r}.")
        out = []
        for j, seq in enumerate(spawn_seed_sequences(random_state, n_init)):
            if j == 0 and rule == "kcc":
                out.append(kcc_start(data, k, seq))
                continue
            M = np.random.default_rng(seq).random((data.n, k))
            out.append(M / M.sum(axis=1, keepdims=True))
        return out
    mats = [init] if (isinstance(init, np.ndarray) and init.ndim == 2) or (
        not isinstance(init, (list, tuple))) else list(init)
    out = []
    for j, m in enumerate(mats):
        a = np.asarray(m, dtype=np.float64)
        if a.shape != (data.n, k) or not np.isfinite(a).all() or (a < 0).any():
            raise ValidationError(f"init[{j}] must be a finite non-negative ({data.n}, {k}) membership "
                                  f"matrix, got shape {a.shape}.")
        out.append(a / np.where(a.sum(1, keepdims=True) > 0, a.sum(1, keepdims=True), 1.0))
    return out


def kcc_start(data, k, seed):
    """The one-hot membership of the KCC consensus (Wu et al. 2015; cclust's defaults: utility
    UH, k-means++ seeding, 10 restarts) of the weighted ensemble, a SoftEnsemble's on its
    membership rows: a cheap, seeded partition that already agrees with the members, from which
    the alternating optimisation only has to settle. K = 1 needs no search (every object in the
    one cluster)."""
    if k == 1:
        return np.ones((data.n, 1))
    from cclust.consensus_functions.kcc import kcc

    labels = kcc(data.source, k, random_state=np.random.default_rng(seed)).labels
    M = np.zeros((data.n, k))
    M[np.arange(data.n), labels] = 1.0
    return M


def stochastify(M):
    """clue's ``.stochastify``: negative entries to zero, rows scaled to sum to one."""
    M = np.maximum(M, 0.0)
    s = M.sum(axis=1, keepdims=True)
    return np.where(s > 0, M / np.where(s > 0, s, 1.0), 1.0 / M.shape[1])


def project_leading(M, k):
    """clue's ``.project_to_leading_columns``: ``max(y + (1 - sum y) / k, 0)`` on the first k
    columns, zeros in the others."""
    y = M[:, :k]
    out = np.zeros_like(M)
    out[:, :k] = np.maximum(y + (1.0 - y.sum(axis=1, keepdims=True)) / k, 0.0)
    return out


def median_result(membership, method, objective, objective_name, n_iter, converged, extras):
    membership = np.ascontiguousarray(membership)
    k = membership.shape[1]
    labels = membership.argmax(axis=1)
    labels, moved = honour_n_clusters(labels, membership, k) if k <= membership.shape[0] else (labels, 0)
    membership.setflags(write=False)
    return ConsensusResult.from_labels(labels, objective=objective, objective_name=objective_name, method=method,
                                       n_iter=n_iter, converged=converged,
                                       extras=dict(extras, membership=membership, n_moved=int(moved)))


# -- restarts and the stopping rule ----------------------------------------------------------

def until_stable(step, old, max_iter, tol):
    """clue's stopping rule: call ``step()`` (one refit and rematch, returning the criterion)
    until it changes by less than ``tol * (|old| + tol)``; returns (value, n_iter, converged)."""
    new = old
    for n_iter in range(1, max_iter + 1):
        new = step()
        if abs(old - new) < tol * (abs(old) + tol):
            return new, n_iter, True
        old = new
    return new, max_iter, False


def best_start(starts, run):
    """``run(start) -> (M, value, n_iter, converged)`` for every start; the lowest value's
    tuple and the list of values."""
    return best_of_restarts(lambda i: run(starts[i]), len(starts), score=lambda out: out[1])


# -- the documentation blocks the methods share ------------------------------------------------

DOC_PARAMS = """Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
        Hard partitions (no missing labels) or soft ones (:class:`cclust.soft.SoftEnsemble`).
    n_clusters : int
        K, the columns of the consensus membership (clue's ``k``), in [1, n_samples].
    n_init : int, default=3
        Starts tried (clue's ``nruns``, whose default is 1); the run of lowest criterion is kept.
    max_iter : int, default=100
    tol : float, default=sqrt(machine epsilon)
        Stop when the criterion changes by less than ``tol * (|old| + tol)`` (clue's ``reltol``).
    init : {"kcc", "random"}, array-like of shape (n_samples, n_clusters) or list of them, default="kcc"
        ``"kcc"``: the first start is the hard KCC consensus of the ensemble (Wu et al. 2015,
        cclust's :func:`~cclust.consensus_functions.kcc.kcc` with its defaults), the other
        ``n_init - 1`` are random; ``"random"``: ``n_init`` random stochastic matrices, clue's
        start (``init="random", n_init=1`` is clue's default exactly; None means ``"random"``).
        An array, or a list of them, gives the starting memberships (clue's ``start``; rows are
        normalised) and overrides ``n_init``.
    random_state : int, Generator or None
        Seeds the starts (each start has its own seed, so the random starts are the same under
        both rules).
"""

STARTS_NOTES = """
    Notes
    -----
    Choices where the papers are silent: the start. clue draws one random stochastic matrix
    (``nruns = 1``). From one random start the alternation often stops at a fixed point that
    merges two groups and splits another when the partitions have many more clusters than the
    K columns of M (only K of each partition's clusters are matched). cclust's default starts
    once from the hard KCC consensus of the ensemble (Wu et al. 2015), a seeded partition that
    already agrees with the members, and twice at random, and keeps the lowest criterion: the
    minimiser the method defines, found more often, for about three times the work of one
    start. Where the criterion itself prefers another partition to the plain groups (one group
    much larger than the others and cut into many pieces by the partitions), the lowest
    criterion is kept even so. ``init="random", n_init=1`` is clue's default exactly (for the
    same ``random_state``, the start of this function's former default).
"""

DOC_RETURNS = """
    Returns
    -------
    ConsensusResult
        ``labels`` the most likely cluster of every object; ``extras["membership"]`` the
        consensus membership matrix (n_samples, n_clusters); ``objective`` the criterion of
        that matrix; ``extras["objectives"]`` the criterion at each start's fixed point.
"""

TIE_DOC = """    tie_rounds : int, default=10
        cclust's addition to clue: rounds of tie moves after the iteration has settled. Matched
        votes are sums of partition weights, so ties are common; clue breaks them at random,
        cclust keeps an object in its cluster on a tie and then, from the fixed point, moves
        every tied object to the other cluster it ties with, rematches and iterates again,
        keeping the round only if the criterion fell (with the matchings fixed the moves leave
        the criterion unchanged, and the rematch can only lower it). The criterion returned is
        never above the plain iteration's; 0 gives the plain iteration.
"""


def fill_docs(*functions):
    """Fill the shared blocks (``%(params)s``, ``%(ties)s``, ``%(returns)s``, ``%(notes)s``)
    into the docstrings of ``functions``."""
    for fn in functions:
        fn.__doc__ = fn.__doc__.replace("%(params)s", DOC_PARAMS).replace("%(ties)s", TIE_DOC).replace(
            "%(returns)s", DOC_RETURNS).replace("%(notes)s", STARTS_NOTES)
