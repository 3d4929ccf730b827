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

All methods here first put the ensemble in a canonical form (each partition's clusters numbered
in order of first appearance, partitions sorted by their label vectors), so their results do not
depend on how clusters are named or partitions ordered, for a given ``random_state``.
"""
import warnings

import numpy as np

from cclust._engine import label_table, reseed, useful_threads
from cclust.validation import check_int, check_n_threads, check_random_state
from cclust.ensemble import Ensemble, as_ensemble, labelled_weight
from cclust.errors import ConvergenceWarning, ValidationError
from cclust.base import declare
from cclust.result import ConsensusResult

__all__ = ["ivc", "ipvc", "ipc", "voting"]


# -- shared machinery (also used by cclust.consensus_functions.pairwise and .mixture) ---------------------
def _kernel():
    from cclust._ext import _voting

    return _voting


def _row_keys(matrix):
    """Each row of a 2-D int32 array as one opaque (void) value, for fast exact grouping."""
    matrix = np.ascontiguousarray(matrix, dtype=np.int32)
    return matrix.view(np.dtype((np.void, 4 * matrix.shape[1]))).reshape(-1)


def canonical(ensemble, weights=None, *, return_columns=False):
    """The ensemble with clusters numbered by first appearance and partitions sorted.

    Returns a :class:`Canonical` whose results are invariant to renaming clusters and
    reordering partitions of the input (and, with ``return_columns``, the input column of each
    of its partitions).
    """
    ensemble = as_ensemble(ensemble)
    if weights is not None:
        ensemble = ensemble.with_weights(weights)
    C = _kernel().first_appearance(np.ascontiguousarray(ensemble.labels, dtype=np.int32),
                                   np.ascontiguousarray(ensemble.offsets, dtype=np.int64))
    w = ensemble.weights
    _, column_rank = np.unique(_row_keys(C.T), return_inverse=True)
    order = np.lexsort((w, column_rank.reshape(-1)))
    out = Canonical(np.ascontiguousarray(C[:, order]), np.ascontiguousarray(w[order]))
    return (out, order) if return_columns else out


class Canonical:
    """A canonical ensemble (see :func:`canonical`): the few views the methods here read.

    Built without re-validating the labels (they come from a valid Ensemble); the full
    :class:`Ensemble` is built only when a method needs its co-association or metrics.
    """

    def __init__(self, labels, weights):
        self.labels = labels
        self.labels.setflags(write=False)
        self.n_samples, self.n_partitions = labels.shape
        self.weights = weights
        self.n_clusters = (labels.max(axis=0) + 1).astype(np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.n_clusters)]).astype(np.int64)
        self.labelled = labels >= 0
        self.has_missing = not bool(self.labelled.all())
        self._ensemble = None
        self._vectors = None

    @property
    def vector_id(self):
        """Per-object id of its label vector (computed on first use)."""
        if self._vectors is None:
            self._vectors = distinct_vectors(self)
        return self._vectors[0]

    @property
    def n_distinct(self):
        """Number of distinct label vectors; at least the largest K_i, counted only if needed."""
        if self._vectors is None:
            self._vectors = distinct_vectors(self)
        return self._vectors[1]

    @property
    def ensemble(self):
        if self._ensemble is None:
            self._ensemble = Ensemble(self.labels, weights=self.weights)
        return self._ensemble

    def contingency(self, labels, n_clusters, *, n_threads=None):
        return label_table(self.labels, self.offsets, np.ascontiguousarray(labels, dtype=np.int32),
                           int(n_clusters), check_n_threads(n_threads))

    def one_hot(self):
        return self.ensemble.one_hot()

    def coassociation(self, *, max_bytes=None):
        return self.ensemble.coassociation(max_bytes=max_bytes)


def distinct_vectors(ensemble):
    """Per-object id of its label vector (-1 entries included), and how many distinct there are."""
    L = ensemble.labels
    # A multiplicative hash groups the rows in O(n r); the grouping is then checked exactly, and
    # a collision (never seen in practice) falls back to sorting the rows themselves.
    multipliers = np.random.default_rng(0x5EED).integers(1, 2**62, size=L.shape[1], dtype=np.uint64) * 2 + 1
    codes = (L.astype(np.int64) + 1).astype(np.uint64) * multipliers[None, :]
    _, first, inverse = np.unique(codes.sum(axis=1, dtype=np.uint64), return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(L, L[first[inverse]]):
        _, inverse = np.unique(_row_keys(L), return_inverse=True)
        inverse = inverse.reshape(-1)
    return inverse, int(inverse.max()) + 1


def check_n_clusters(n_clusters, ensemble):
    """K in [2, n_samples] and no larger than the number of distinct label vectors."""
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=ensemble.n_samples)
    # Every partition's clusters are distinct vectors, so counting is needed only above max K_i.
    if n_clusters > int(ensemble.n_clusters.max()) and n_clusters > ensemble.n_distinct:
        n_distinct = ensemble.n_distinct
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of distinct label vectors in the "
            f"ensemble ({n_distinct}): objects that every partition treats alike cannot be told "
            f"apart, so at most {n_distinct} clusters are meaningful; ask for n_clusters <= {n_distinct}."
        )
    return n_clusters


def block_index(ensemble):
    """Partition index of every column of the batched contingency table."""
    return np.repeat(np.arange(ensemble.n_partitions), ensemble.n_clusters)


def start_from_partition(part, n_clusters):
    """Initial labels from a base partition: its ``n_clusters`` largest clusters (ties: first
    named first) keep their members, every other object is unassigned (-1)."""
    present = part >= 0
    sizes = np.bincount(part[present], minlength=int(part.max()) + 1 if present.any() else 1)
    keep = np.argsort(-sizes, kind="stable")[:n_clusters]
    keep = keep[sizes[keep] > 0]
    mapping = np.full(sizes.shape[0], -1, dtype=np.int32)
    mapping[keep] = np.arange(keep.shape[0], dtype=np.int32)
    out = np.full(part.shape[0], -1, dtype=np.int32)
    out[present] = mapping[part[present]]
    return out


INITS = ("k-means++", "partitions")


def check_init_name(init):
    """The name of a start rule (``INITS``), with an error naming the choices."""
    if init not in INITS:
        raise ValidationError(f"init must be one of {list(INITS)} or an array of labels, got {init!r}.")
    return init


def seeded_starts(ensemble, n_clusters, n_init, rng, n_threads):
    """``n_init`` starting labelings by k-means++ seeding on the label vectors.

    Each start draws K objects by D^2 sampling (greedy k-means++, as KCC++) under the weighted
    Hamming distance between label vectors (the Uc distance on the one-hot rows, twice the
    Hamming distance; a partition missing an object is charged as in KCC), and every object
    joins its nearest seed. The seeds spread over the label space, so restarts start from
    different basins, where a base partition with K_i != K starts every restart from the same
    merge of its K largest clusters.
    """
    from cclust import _engine
    from cclust.utilities import resolve

    space = _engine.MixedSpace.categorical(ensemble, resolve("uc"))
    starts = []
    for _ in range(n_init):
        seeds = _engine.seed_objects(space, n_clusters, "k-means++", rng, n_threads)
        starts.append(_engine.labels_from_seeds(space, seeds, n_threads).astype(np.int32))
    return starts


def initial_labelings(ensemble, n_clusters, init, n_init, rng, n_threads):
    """The starts of the restarts for ``init`` in ``INITS``: k-means++ labelings, or base
    partitions cut to their K largest clusters (Nguyen & Caruana 2007, sec. 8). Validates ``init`` and ``n_init``."""
    check_init_name(init)
    n_init = check_int(n_init, "n_init", low=1)
    if init == "k-means++":
        return seeded_starts(ensemble, n_clusters, n_init, rng, n_threads)
    return [start_from_partition(ensemble.labels[:, j], n_clusters)
            for j in restart_partitions(ensemble, n_init, rng)]


def restart_partitions(ensemble, n_init, rng):
    """Indices of the canonical partitions the restarts start from (Nguyen & Caruana 2007, sec. 8).

    ``n_init`` distinct partitions drawn without replacement (all of them, in a random order, if
    there are fewer distinct ones than ``n_init``)."""
    _, first = np.unique(_row_keys(ensemble.labels.T), return_index=True)
    first = np.sort(first)
    return first[rng.permutation(first.shape[0])[:n_init]]


def _block_sums(table, ensemble):
    """(K, r) per-partition row sums of a batched table: n_ki, the labelled members."""
    return np.add.reduceat(table, ensemble.offsets[:-1], axis=1)


def _as_lookup(values):
    """(K, W) values as the contiguous (W, K) table the compiled pass reads."""
    return np.ascontiguousarray(values.T, dtype=np.float64)


def lookup_argmax(C, offsets, lookup, allowed, n_threads):
    """Best allowed cluster of every object for a (W, K) lookup table, and its score.

    Tables with few non-zeros (IVC's modes, relabel-and-vote's matches) go through the CSR
    pass, the others through the dense one; both give bitwise the same result.
    """
    allowed = np.ascontiguousarray(allowed, dtype=np.uint8)
    rows, cols = np.nonzero(lookup)
    if rows.shape[0] * 4 <= lookup.size:
        indptr = np.zeros(lookup.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=lookup.shape[0]), out=indptr[1:])
        return _kernel().argmax_sparse(C, offsets, indptr, cols.astype(np.int32),
                                       np.ascontiguousarray(lookup[rows, cols]), lookup.shape[1],
                                       allowed, n_threads)
    return _kernel().argmax(C, offsets, lookup, allowed, n_threads)


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
        self.C = np.ascontiguousarray(ensemble.labels, dtype=np.int32)
        self.offsets = np.ascontiguousarray(ensemble.offsets, dtype=np.int64)

    def table(self, labels, n_clusters):
        return self.E.contingency(labels, n_clusters, n_threads=self.n_threads)

    def assign(self, labels, table, n_clusters):
        """New labels, each object's score for its new cluster, and its distance to it."""
        allowed = table.sum(axis=1) > 0
        new, best = lookup_argmax(self.C, self.offsets, _as_lookup(self.values(table)), allowed,
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
        new, matches = _kernel().mode_argmax(self.C, np.ascontiguousarray(modes), allowed, self.n_threads)
        w = self.E.weights[0]
        labelled = self.E.n_partitions if self.n_labelled is None else self.n_labelled
        return new, matches * w, (labelled - matches) * w

    def objective(self, table):
        n_ki = _block_sums(table, self.E)
        top = np.maximum.reduceat(table, self.E.offsets[:-1], axis=1)
        return float(((n_ki - top) @ self.E.weights).sum())


class _IPVC(_Criterion):
    name = "ipvc"
    objective_name = "sum of distances D(x, P_k) to the own cluster, Nguyen & Caruana 2007, eq. 2 (lower is better)"

    def values(self, table):
        n_ki = _block_sums(table, self.E)[:, self.cols].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(n_ki > 0, table / np.where(n_ki > 0, n_ki, 1), 0.0)
        return frac * self.w_cols

    def objective(self, table):
        n_ki = _block_sums(table, self.E).astype(np.float64)
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

            require_memory(ensemble.ensemble.coassociation_bytes(),
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


def _iterative(kind, ensemble, n_clusters, *, weights, init, n_init, max_iter, random_state,
               n_threads, max_bytes=None):
    E = canonical(ensemble, weights)
    n_clusters = check_n_clusters(n_clusters, E)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_threads = useful_threads(E.n_samples, check_n_threads(n_threads))
    rng = check_random_state(random_state)
    crit = {"ivc": _IVC, "ipvc": _IPVC}[kind](E, n_threads) if kind != "ipc" else _IPC(E, n_threads, max_bytes)

    if isinstance(init, str):
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
        The basic partitions.
    n_clusters : int
        K, in [2, number of distinct label vectors].
    weights : array-like of shape (n_partitions,), default=None
        Partition weights w_i (the ensemble's own, equal by default, if None); Nguyen & Caruana use equal
        weights, which give its unweighted sums up to the factor 1/r.
    init : {"k-means++", "partitions"} or array-like of shape (n_samples,), default="k-means++"
        ``"k-means++"``: each restart starts from K objects drawn by k-means++ seeding on the
        label vectors (weighted Hamming distance), every object joining its nearest seed (see
        :func:`seeded_starts`). ``"partitions"``: each restart starts from a base partition
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
    n_threads : int, default=None
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
@declare(handles_missing=True, object_order="distribution")
@_doc("""Iterative voting consensus, IVC (Nguyen & Caruana 2007, Algorithm 1).

    K-modes on the label vectors: each cluster's centre holds the majority label of its members
    in every partition, and each object moves to the centre at the smallest (weighted) Hamming
    distance ``sum_i w_i [pi_i(x) != mode_ki]``; repeat until the labels stop changing. The
    objective, the total distance to the modes, never increases. Objects missing from a
    partition (-1) skip its term, and modes are taken over the labelled members.
{params}{returns}
    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.voting import ivc
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> ivc(labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1, 1]
    """)
def ivc(ensemble, n_clusters, *, weights=None, init="k-means++", n_init=10, max_iter=100,
        random_state=None, n_threads=None):
    return _iterative("ivc", ensemble, n_clusters, weights=weights, init=init, n_init=n_init,
                      max_iter=max_iter, random_state=random_state, n_threads=n_threads)


@declare(handles_missing=True, object_order="distribution")  # k-means++ draws objects by position
@_doc("""Iterative probabilistic voting consensus, IPVC (Nguyen & Caruana 2007, Algorithm 2, eq. 2).

    Each object moves to the cluster at the smallest ``D(x, P_k) = sum_i w_i (1 - c_ki(pi_i(x))
    / n_ki)``, the weighted fraction of the cluster's members that disagree with it, partition
    by partition (``c_ki(l)`` members with label l in pi_i, ``n_ki`` members labelled by pi_i);
    repeat until the labels stop changing. The objective reported is ``sum_x D(x, P_c(x))``
    (equal to the Uc / category-utility k-means cost); Nguyen & Caruana (2007) give no criterion that the passes
    decrease, and they need not decrease it monotonically (the assignment omits the
    cluster-spread term of that cost), so convergence is by stable labels within ``max_iter``.
{params}{returns}
    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.voting import ipvc
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> ipvc(labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1, 1]
    """)
def ipvc(ensemble, n_clusters, *, weights=None, init="k-means++", n_init=10, max_iter=100,
         random_state=None, n_threads=None):
    return _iterative("ipvc", ensemble, n_clusters, weights=weights, init=init, n_init=n_init,
                      max_iter=max_iter, random_state=random_state, n_threads=n_threads)


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
def ipc(ensemble, n_clusters, *, weights=None, init="k-means++", n_init=10, max_iter=100,
        random_state=None, n_threads=None, max_bytes=None):
    return _iterative("ipc", ensemble, n_clusters, weights=weights, init=init, n_init=n_init,
                      max_iter=max_iter, random_state=random_state, n_threads=n_threads,
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
@declare(handles_missing=True, object_order="distribution")
def voting(ensemble, n_clusters, *, weights=None, init="k-means++", n_init=10, max_iter=100,
           random_state=None, n_threads=None):
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
    weights : array-like of shape (n_partitions,), default=None
    init : {"k-means++", "partitions"}, default="k-means++"
        The first reference of each restart, as for :func:`ivc`.
    n_init : int, default=10
    max_iter : int, default=100
    random_state : int, Generator or None
    n_threads : int, default=None

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
    E = canonical(ensemble, weights)
    n_clusters = check_n_clusters(n_clusters, E)
    check_init_name(init)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_threads = useful_threads(E.n_samples, check_n_threads(n_threads))
    rng = check_random_state(random_state)
    C = np.ascontiguousarray(E.labels, dtype=np.int32)
    offsets = np.ascontiguousarray(E.offsets, dtype=np.int64)
    ceiling = labelled_weight(E)
    allowed = np.ones(n_clusters, dtype=np.uint8)

    best = None
    objectives, iterations = [], []
    for reference in initial_labelings(E, n_clusters, init, n_init, rng, n_threads):
        trace, converged = [], False
        for n_iter in range(1, max_iter + 1):
            table = E.contingency(reference, n_clusters, n_threads=n_threads)
            new, score = lookup_argmax(C, offsets, _vote_table(E, table, n_clusters), allowed, n_threads)
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
    labels, value, trace, n_iter, converged = best
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
