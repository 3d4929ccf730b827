"""Iterative voting consensus (Nguyen & Caruana, ICDM 2007) and relabel-and-vote.

IVC, IPVC and IPC (Nguyen & Caruana 2007, Algorithms 1-3) are k-means-like loops on the label vectors
``y_x = (pi_1(x), ..., pi_r(x))``. Every point-to-cluster quantity they need is a lookup in the
contingency table ``c[k, i, l] = |{x in P_k : pi_i(x) = l}|`` of the current labelling against
each partition (one compiled pass, :meth:`cclust.Ensemble.contingency`):

* IVC: the centre of P_k holds, for each partition, the majority label ``argmax_l c[k, i, l]``;
  the Hamming distance of y_x to it is ``sum_i w_i [pi_i(x) != mode_ki]``.
* IPVC (Nguyen & Caruana 2007, eq. 2): ``D(x, P_k) = sum_i w_i (1 - c[k, i, pi_i(x)] / n_ki)``.
* IPC (Nguyen & Caruana 2007, eq. 3): ``S(x, P_k) = (1/n_k) sum_{x' in P_k} S(x, x') = sum_i w_i c[k, i, pi_i(x)] / n_k``.

Each is a sum over partitions of a per-(cluster, partition, label) value read at x's label, so
an assignment pass is O(n r K) reads of a transposed table (``cclust._ext._voting``) and the
n x n co-association matrix is never formed (tables with few non-zeros, such as IVC's modes,
are read in CSR form; with equal weights IVC simply counts agreements with the mode vectors).
The same pass serves relabel-and-vote (the table holds each partition's matched cluster) and
the EM mixture (the table holds log-probabilities).

All methods here first put the ensemble in its canonical form (:meth:`cclust.Ensemble.canonical`:
each partition's clusters numbered in order of first appearance, partitions sorted by their label
vectors), so their results do not depend on how clusters are named or partitions ordered, for a
given ``random_state``.
"""
from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust._engine import reseed, useful_threads
from cclust.consensus_functions._starts import (INITS, as_lookup, block_index, block_sums, initial_labelings,
                                                ipvc_values, kernel, lookup_argmax)
from cclust.validation import (
    check_init_name,
    check_int,
    check_n_clusters,
    check_n_jobs,
    check_random_state,
    renamed_threads,
)
from cclust.ensemble import as_ensemble, labelled_weight
from cclust.errors import ConvergenceWarning, ValidationError
from cclust.base import declare
from cclust.result import ConsensusResult
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

__all__ = ["ivc", "ipvc", "ipc", "voting"]


# -- the three criteria of Nguyen & Caruana (2007) --------------------------------------------------------------
class _Criterion:
    """One of IVC, IPVC, IPC: its lookup table, its objective and the object fits."""

    name = ""
    objective_name = ""
    higher_is_better = False

    def __init__(self, ensemble, n_threads):
        self.E = ensemble
        self.n_threads = n_threads
        self.cols = block_index(ensemble)
        self.w_cols = ensemble.weights[self.cols]
        self.ceiling = labelled_weight(ensemble)
        self.C = ensemble.compact_labels()  # read in place by the lookup passes
        self.offsets = np.ascontiguousarray(ensemble.offsets, dtype=np.int64)

    def table(self, labels, n_clusters):
        return self.E.contingency(labels, n_clusters, n_jobs=self.n_threads)

    def assign(self, labels, table, n_clusters):
        """New labels, each object's score for its new cluster, and its distance to it."""
        allowed = table.sum(axis=1) > 0
        new, best = lookup_argmax(self.C, self.offsets, as_lookup(self.values(table)), allowed,
                                  self.n_threads)
        return new, best, self.ceiling - best


class _IVC(_Criterion):
    name = "ivc"
    objective_name = "weighted Hamming distance to the cluster modes (lower is better)"

    def __init__(self, ensemble, n_threads):
        super().__init__(ensemble, n_threads)
        w = ensemble.weights
        self.equal = bool((w == w[0]).all())
        self.n_labelled = ensemble.labelled.sum(axis=1) if ensemble.has_missing else None

    def mode_columns(self, table):
        """(K, r) table column of each cluster's majority label per partition (first on ties),
        and whether the cluster has a labelled member there."""
        E = self.E
        W = table.shape[1]
        top = np.maximum.reduceat(table, E.offsets[:-1], axis=1)
        cols = np.broadcast_to(np.arange(W), table.shape)
        first = np.minimum.reduceat(np.where(table == top[:, self.cols], cols, W), E.offsets[:-1], axis=1)
        return first, top > 0

    def modes(self, table):
        """(K, W) 0/1 marks of each cluster's majority label per partition."""
        first, has = self.mode_columns(table)
        marks = np.zeros(table.shape, dtype=bool)
        rows, parts = np.nonzero(has)
        marks[rows, first[rows, parts]] = True
        return marks

    def values(self, table):
        return self.modes(table) * self.w_cols

    def assign(self, labels, table, n_clusters):
        if not self.equal:
            return super().assign(labels, table, n_clusters)
        # Equal weights: count agreements with the mode vectors (integer, vectorised).
        first, has = self.mode_columns(table)
        modes = np.where(has, first - self.E.offsets[:-1][None, :], -2).astype(np.int32)
        allowed = np.ascontiguousarray(table.sum(axis=1) > 0, dtype=np.uint8)
        new, matches = kernel().mode_argmax(self.C, np.ascontiguousarray(modes), allowed, self.n_threads)
        w = self.E.weights[0]
        labelled = self.E.n_partitions if self.n_labelled is None else self.n_labelled
        return new, matches * w, (labelled - matches) * w

    def objective(self, table):
        n_ki = block_sums(table, self.E)
        top = np.maximum.reduceat(table, self.E.offsets[:-1], axis=1)
        return float(((n_ki - top) @ self.E.weights).sum())


class _IPVC(_Criterion):
    name = "ipvc"
    objective_name = "sum of distances D(x, P_k) to the own cluster, Nguyen & Caruana 2007, eq. 2 (lower is better)"

    def values(self, table):
        return ipvc_values(self.E, table, self.cols)

    def objective(self, table):
        n_ki = block_sums(table, self.E).astype(np.float64)
        sq = np.add.reduceat(table.astype(np.float64) ** 2, self.E.offsets[:-1], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            agree = np.where(n_ki > 0, sq / np.where(n_ki > 0, n_ki, 1), 0.0)
        return float(((n_ki - agree) @ self.E.weights).sum())


class _IPC(_Criterion):
    name = "ipc"
    objective_name = "sum of average co-associations S(x, P_k) to the own cluster, Nguyen & Caruana 2007, eq. 3 (higher is better)"
    higher_is_better = True

    def __init__(self, ensemble, n_threads, max_bytes):
        super().__init__(ensemble, n_threads)
        self.S = None
        if ensemble.has_missing:
            # Pair-normalised co-association: not a sum of per-partition terms, so the matrix route.
            # Checked here so the refusal names routes IPC can take (not the kNN co-association).
            from cclust.validation import require_memory

            require_memory(ensemble.coassociation_bytes(),
                           f"IPC on missing labels (the dense co-association of {ensemble.n_samples} objects)",
                           "use ipvc or kcc, which handle missing labels in linear memory, or complete "
                           "the partitions", max_bytes)
            self.S = np.asarray(ensemble.coassociation(max_bytes=max_bytes), dtype=np.float64)
            self.ceiling = np.ones(ensemble.n_samples)

    def values(self, table):
        n_k = table[:, :int(self.E.offsets[1])].sum(axis=1).astype(np.float64)
        return table / np.where(n_k > 0, n_k, 1)[:, None] * self.w_cols

    def _matrix_scores(self, labels, n_clusters):
        member = labels >= 0
        M = np.zeros((labels.shape[0], n_clusters))
        M[np.flatnonzero(member), labels[member]] = 1.0
        n_k = M.sum(axis=0)
        return (self.S @ M) / np.where(n_k > 0, n_k, 1), n_k

    def assign(self, labels, table, n_clusters):
        if self.S is None:
            return super().assign(labels, table, n_clusters)
        scores, n_k = self._matrix_scores(labels, n_clusters)
        scores[:, n_k == 0] = -np.inf
        new = scores.argmax(axis=1).astype(np.int32)
        best = scores[np.arange(new.shape[0]), new]
        return new, best, self.ceiling - best

    def objective_of(self, labels, table, n_clusters):
        if self.S is None:
            return self.objective(table)
        scores, _ = self._matrix_scores(labels, n_clusters)
        return float(scores[np.arange(labels.shape[0]), labels].sum())

    def objective(self, table):
        n_k = table[:, :int(self.E.offsets[1])].sum(axis=1).astype(np.float64)
        sq = np.add.reduceat(table.astype(np.float64) ** 2, self.E.offsets[:-1], axis=1) @ self.E.weights
        return float((sq / np.where(n_k > 0, n_k, 1)).sum())


def _objective_of(crit, labels, table, n_clusters):
    if isinstance(crit, _IPC):
        return crit.objective_of(labels, table, n_clusters)
    return crit.objective(table)


def _run(crit, start, n_clusters, max_iter):
    """One restart: assignment passes until the labels stop changing (Nguyen & Caruana 2007, Algorithms 1-3)."""
    labels = start
    table = crit.table(labels, n_clusters)
    trace = []
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        new, _, fit = crit.assign(labels, table, n_clusters)
        new = reseed(new, fit, n_clusters)
        new_table = crit.table(new, n_clusters)
        trace.append(_objective_of(crit, new, new_table, n_clusters))
        if np.array_equal(new, labels):
            converged = True
            break
        labels, table = new, new_table
    return new, trace, n_iter, converged


def _check_init(init, ensemble, n_clusters):
    labels = np.asarray(init)
    n = ensemble.n_samples
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValidationError(f"init as an array must have shape ({n},), got {labels.shape}.")
    if labels.dtype.kind not in "iu":
        raise ValidationError(f"init as an array must hold integer labels, got dtype {labels.dtype}.")
    if labels.min() < 0 or labels.max() >= n_clusters:
        raise ValidationError(
            f"init labels must lie in 0..{n_clusters - 1}, got values in [{labels.min()}, {labels.max()}].")
    return labels.astype(np.int32)


def _iterative(kind, ensemble, n_clusters, *, init, n_init, max_iter, random_state,
               n_threads, max_bytes=None):
    E = as_ensemble(ensemble).canonical()
    n_clusters = check_n_clusters(n_clusters, E)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_threads = useful_threads(E.n_samples, check_n_jobs(n_threads))
    rng = check_random_state(random_state)
    crit = {"ivc": _IVC, "ipvc": _IPVC}[kind](E, n_threads) if kind != "ipc" else _IPC(E, n_threads, max_bytes)

    if isinstance(init, str):
        check_init_name(init, INITS, or_labels=True)
        starts = initial_labelings(E, n_clusters, init, n_init, rng, n_threads)
    else:
        # A user labelling of the original objects: object order is unchanged by canonical().
        starts = [_check_init(init, E, n_clusters)]

    from cclust._lloyd import best_of_restarts

    iterations = []

    def one_run(i):
        labels, trace, n_iter, converged = _run(crit, starts[i], n_clusters, max_iter)
        iterations.append(n_iter)
        return labels, trace[-1], trace, n_iter, converged

    best, objectives = best_of_restarts(one_run, len(starts), score=lambda run: run[1],
                                        higher_is_better=crit.higher_is_better)
    labels, value, trace, n_iter, converged = best
    if not converged:
        warnings.warn(f"{kind} stopped at max_iter={max_iter} before its labels stopped changing; "
                      "raise max_iter.", ConvergenceWarning, stacklevel=3)
    k_found = int(np.unique(labels).shape[0])
    return ConsensusResult.from_labels(
        labels, objective=value, objective_name=crit.objective_name, n_iter=n_iter,
        converged=converged, method=kind,
        extras={
            "objective_trace": np.asarray(trace),
            "objectives": np.asarray(objectives),
            "n_iter_per_restart": np.asarray(iterations),
            "fewer_clusters": (f"only {k_found} of the {n_clusters} requested clusters are non-empty"
                               if k_found < n_clusters else ""),
        },
    )


_PARAMS_DOC = """
    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        The basic partitions, with their weights w_i (the ensemble's); Nguyen & Caruana use
        equal weights, which give its unweighted sums up to the factor 1/r.
    n_clusters : int
        K, in [2, number of distinct label vectors].
    init : {"k-means++", "partitions"} or array-like of shape (n_samples,), default="k-means++"
        ``"k-means++"``: each restart starts from K objects drawn by k-means++ seeding on the
        label vectors (weighted Hamming distance, greedy D^2 sampling as in KCC++), every
        object joining its nearest seed. ``"partitions"``: each restart starts from a base partition
        drawn at random (Nguyen & Caruana 2007, sec. 8, the paper's start); a partition with more than K clusters
        keeps its K largest (the other objects join their nearest cluster in the first pass),
        one with fewer gets the remaining clusters from the empty-cluster rule below. An array
        gives the initial labels (0..K-1) and runs once. The default differs from Nguyen & Caruana: with
        the default ensembles (K_i from K to sqrt(n)) every base partition's K largest clusters
        tend to be the same pieces, so all restarts keep the same merge; on five well-separated
        blobs (n = 5,000, 100 k-means partitions) the paper's start ends at ARI 0.72
        and k-means++ at 1.0 (see the method catalogue for the measurements).
    n_init : int, default=10
        Restarts (Nguyen & Caruana 2007 use 100); the best by the method's own objective is kept.
    max_iter : int, default=100
    random_state : int, Generator or None
        Draws the k-means++ seeds, or the base partitions the restarts start from.
    n_jobs : int, default=None
        Threads of the compiled passes (None: every core, see
        :func:`cclust.validation.default_threads`); results are identical for any value.
"""

_RETURNS_DOC = """
    Returns
    -------
    ConsensusResult
        ``extras``: ``objective_trace`` (objective after each pass of the kept restart),
        ``objectives`` and ``n_iter_per_restart`` (one per restart) and ``fewer_clusters`` (a note, empty unless fewer than K clusters could be kept).

    Notes
    -----
    Empty clusters, which Nguyen & Caruana (2007) do not discuss, are refilled after every pass by
    the rule of every K-means in cclust: each, in increasing index, takes the object farthest
    from its own cluster (ties: lowest index) among objects whose cluster keeps another member.
    Ties go to the lowest cluster index; clusters are numbered by the canonical ensemble (see
    the module docstring), so results are invariant to cluster names and partition order.
"""


def _doc(text):
    def mark(fn):
        fn.__doc__ = text.replace("{params}", _PARAMS_DOC).replace("{returns}", _RETURNS_DOC)
        return fn
    return mark


# Modes are majority counts, so ties are common and go to the lowest label in the canonical
# (first-appearance) numbering: the result depends on the order of the objects in ties.
@weights_on_the_ensemble
@renamed_threads
@declare(handles_missing=True, object_order="distribution")
@_doc("""Iterative voting consensus, IVC (Nguyen & Caruana 2007, Algorithm 1).

    K-modes on the label vectors: each cluster's centre holds the majority label of its members
    in every partition, and each object moves to the centre at the smallest (weighted) Hamming
    distance ``sum_i w_i [pi_i(x) != mode_ki]``; repeat until the labels stop changing. The
    objective, the total distance to the modes, never increases. Objects missing from a
    partition (-1) skip its term, and modes are taken over the labelled members.
{params}    max_bytes : int, default=None
        Memory budget of the call's guards (the canonical form, the contingency tables;
        :func:`cclust.validation.memory_budget` if None).
{returns}
    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.voting import ivc
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> ivc(labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1, 1]
    """)
def ivc(ensemble: EnsembleLike, n_clusters: int, *, init: str | npt.ArrayLike = "k-means++", n_init: int = 10,
        max_iter: int = 100, random_state: RandomStateLike = None, n_jobs: int | None = None,
        max_bytes: int | None = None) -> ConsensusResult:
    # max_bytes governs every guard of the call through declare's budget scope
    return _iterative("ivc", ensemble, n_clusters, init=init, n_init=n_init,
                      max_iter=max_iter, random_state=random_state, n_threads=n_jobs)


@weights_on_the_ensemble
@renamed_threads
@declare(handles_missing=True, object_order="distribution")  # k-means++ draws objects by position
@_doc("""Iterative probabilistic voting consensus, IPVC (Nguyen & Caruana 2007, Algorithm 2, eq. 2).

    Each object moves to the cluster at the smallest ``D(x, P_k) = sum_i w_i (1 - c_ki(pi_i(x))
    / n_ki)``, the weighted fraction of the cluster's members that disagree with it, partition
    by partition (``c_ki(l)`` members with label l in pi_i, ``n_ki`` members labelled by pi_i);
    repeat until the labels stop changing. The objective reported is ``sum_x D(x, P_c(x))``
    (equal to the Uc / category-utility k-means cost); Nguyen & Caruana (2007) give no criterion that the passes
    decrease, and they need not decrease it monotonically (the assignment omits the
    cluster-spread term of that cost), so convergence is by stable labels within ``max_iter``.
{params}    max_bytes : int, default=None
        Memory budget of the call's guards (the canonical form, the contingency tables;
        :func:`cclust.validation.memory_budget` if None).
{returns}
    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.voting import ipvc
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> ipvc(labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1, 1]
    """)
def ipvc(ensemble: EnsembleLike, n_clusters: int, *, init: str | npt.ArrayLike = "k-means++", n_init: int = 10,
         max_iter: int = 100, random_state: RandomStateLike = None, n_jobs: int | None = None,
         max_bytes: int | None = None) -> ConsensusResult:
    # max_bytes governs every guard of the call through declare's budget scope
    return _iterative("ipvc", ensemble, n_clusters, init=init, n_init=n_init,
                      max_iter=max_iter, random_state=random_state, n_threads=n_jobs)


@weights_on_the_ensemble
@renamed_threads
@declare(handles_missing=True, object_order="distribution")  # k-means++ draws objects by position
@_doc("""Iterative pairwise consensus, IPC (Nguyen & Caruana 2007, Algorithm 3, eq. 1 and 3).

    Each object moves to the cluster with the highest average co-association to its members,
    ``S(x, P_k) = (1/n_k) sum_{x' in P_k} S(x, x')``; repeat until the labels stop changing.

    Without missing labels ``S(x, P_k) = sum_i w_i c_ki(pi_i(x)) / n_k`` exactly, read from the
    contingency tables in O(n r K) per pass: the n x n matrix Nguyen & Caruana (2007) keep (their sec. 9 gives IPC
    O(N^2) space) is never formed. As Nguyen & Caruana's (2007) eq. 3 sums over every member of P_k, the object's
    own cluster includes the object itself (``S(x, x) = 1``); with that term ``S(x, P_k) =
    sum_i w_i - D_IPVC(x, P_k)`` for every cluster, so from the same start IPC makes exactly the
    assignments of IPVC, and only the reported objective (the total average co-association,
    higher is better) differs. The two methods differ on ensembles with missing labels: there
    ``S(x, x')`` is normalised per pair by the partitions labelling both objects (as
    :meth:`cclust.Ensemble.coassociation`), which is not a per-partition sum, so IPC then uses
    the dense co-association matrix, within the memory budget ``max_bytes``.
{params}    max_bytes : int, default=None
        Memory budget of the co-association matrix, used only when labels are missing
        (:func:`cclust.validation.memory_budget` if None).
{returns}
    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.voting import ipc
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> ipc(labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1, 1]
    """)
def ipc(ensemble: EnsembleLike, n_clusters: int, *, init: str | npt.ArrayLike = "k-means++", n_init: int = 10,
        max_iter: int = 100, random_state: RandomStateLike = None, n_jobs: int | None = None,
        max_bytes: int | None = None) -> ConsensusResult:
    return _iterative("ipc", ensemble, n_clusters, init=init, n_init=n_init,
                      max_iter=max_iter, random_state=random_state, n_threads=n_jobs,
                      max_bytes=max_bytes)


# -- relabel and vote -----------------------------------------------------------------------
def _vote_table(E, table, n_clusters):
    """(W, K) lookup: partition i's label l votes w_i for the reference cluster matched to it."""
    from scipy.optimize import linear_sum_assignment

    values = np.zeros((table.shape[1], n_clusters))
    for i in range(E.n_partitions):
        lo, hi = int(E.offsets[i]), int(E.offsets[i + 1])
        block = table[:, lo:hi]
        rows, cols = linear_sum_assignment(block, maximize=True)
        target = block.argmax(axis=0)          # unmatched clusters: their largest overlap
        target[cols] = rows
        values[lo + np.arange(hi - lo), target] = E.weights[i]
    return np.ascontiguousarray(values)


# The Hungarian alignment works on integer overlap counts, whose ties go to the lowest cluster
# in the canonical (first-appearance) numbering: the result depends on object order in ties.
@weights_on_the_ensemble
@renamed_threads
@declare(handles_missing=True, object_order="distribution")
def voting(ensemble: EnsembleLike, n_clusters: int, *, init: str = "k-means++",
           n_init: int = 10, max_iter: int = 100, random_state: RandomStateLike = None,
           n_jobs: int | None = None, max_bytes: int | None = None) -> ConsensusResult:
    """Relabel-and-vote consensus (Dimitriadou et al. 2001; Ayad & Kamel's cVote; Mirkin & Shestakov, sec. 1).

    Every partition's clusters are matched to the clusters of a reference labelling by the
    Hungarian algorithm (:func:`scipy.optimize.linear_sum_assignment` on the contingency table,
    maximising the objects they share), then each object takes the reference cluster that most
    (weighted) partitions vote for. The vote becomes the new reference; repeat until it stops
    changing.

    A partition with more clusters than K cannot match them all one to one: its unmatched
    clusters vote for the reference cluster they overlap most (so every partition casts one vote
    per object). Objects missing from a partition do not vote in it. The first reference is a
    labelling with K clusters from k-means++ seeding on the label vectors (as :func:`ivc`), or
    with ``init="partitions"`` a base partition cut to its K largest clusters; ``n_init``
    restarts, the kept run has the largest total plurality (the summed weight of the winning
    votes, higher is better). Empty clusters are refilled as in :func:`ivc`.

    The k-means++ start is cclust's default; starting from a base partition, as voting methods
    usually do, aligns every partition to a reference whose K largest clusters are pieces of
    the true clusters when the base partitions have more than K clusters (the default
    ensembles have K_i from K to sqrt(n)), and the vote keeps that split: on five
    well-separated blobs (n = 5,000, 100 k-means partitions) ``init="partitions"``
    ends at ARI 0.47 and the default at 1.0.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    n_clusters : int
        K, in [2, number of distinct label vectors].
    init : {"k-means++", "partitions"}, default="k-means++"
        The first reference of each restart, as for :func:`ivc`.
    n_init : int, default=10
    max_iter : int, default=100
    random_state : int, Generator or None
    n_jobs : int, default=None
    max_bytes : int, default=None
        Memory budget of the call's guards (the canonical form, the contingency tables;
        :func:`cclust.validation.memory_budget` if None).

    Returns
    -------
    ConsensusResult
        ``objective`` is the total plurality; ``extras`` as for :func:`ivc`.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.voting import voting
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> voting(labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1, 1]
    """
    E = as_ensemble(ensemble).canonical()
    n_clusters = check_n_clusters(n_clusters, E)
    check_init_name(init, INITS)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_jobs = useful_threads(E.n_samples, check_n_jobs(n_jobs))
    rng = check_random_state(random_state)
    C = E.compact_labels()  # read in place by the lookup passes
    offsets = np.ascontiguousarray(E.offsets, dtype=np.int64)
    ceiling = labelled_weight(E)
    allowed = np.ones(n_clusters, dtype=np.uint8)

    best = None
    objectives, iterations = [], []
    for reference in initial_labelings(E, n_clusters, init, n_init, rng, n_jobs):
        trace, converged = [], False
        for n_iter in range(1, max_iter + 1):
            table = E.contingency(reference, n_clusters, n_jobs=n_jobs)
            new, score = lookup_argmax(C, offsets, _vote_table(E, table, n_clusters), allowed, n_jobs)
            new = reseed(new, ceiling - score, n_clusters)
            trace.append(float(score.sum()))
            if np.array_equal(new, reference):
                converged = True
                break
            reference = new
        objectives.append(trace[-1])
        iterations.append(n_iter)
        if best is None or trace[-1] > best[1]:
            best = (new, trace[-1], trace, n_iter, converged)
    labels, value, trace, n_iter, converged = best  # type: ignore[misc]  # n_init >= 1: set in the loop
    if not converged:
        warnings.warn(f"voting stopped at max_iter={max_iter} before the reference stopped changing; "
                      "raise max_iter.", ConvergenceWarning, stacklevel=2)
    k_found = int(np.unique(labels).shape[0])
    return ConsensusResult.from_labels(
        labels, objective=value, objective_name="total plurality of the votes (higher is better)",
        n_iter=n_iter, converged=converged, method="voting",
        extras={
            "objective_trace": np.asarray(trace),
            "objectives": np.asarray(objectives),
            "n_iter_per_restart": np.asarray(iterations),
            "fewer_clusters": (f"only {k_found} of the {n_clusters} requested clusters are non-empty"
                               if k_found < n_clusters else ""),
        },
    )
