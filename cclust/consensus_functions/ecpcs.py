"""Ensemble clustering by propagating cluster-wise similarities, ECPCS-HC and ECPCS-MC
(Huang, Wang, Peng, Lai & Kwoh 2021, IEEE TSMC: Systems 51(1); arXiv 1810.12544).

Both methods share the cluster level (Huang et al. 2021, sec. IV):

1. the cluster similarity graph: the base clusters C_1..C_Nc of all partitions are the
   vertices, ``e_ij = Jaccard(C_i, C_j) = |C_i & C_j| / |C_i | C_j|`` the edge weights
   (eq. 1-3; the meta-graph MCLA cuts, :func:`cclust.graph.meta_graph`);
2. the random walk: ``p_ij = e_ij / sum_{k != i} e_ik`` for i != j, ``p_ii = 0`` (eq. 4), and
   its t-step transitions ``P^(s) = P^s`` (eq. 5);
3. the propagated cluster-wise similarity: the cosine of the trajectories
   ``P_i:^(1:t) = [P_i:^(1), ..., P_i:^(t)]``, ``z_ij = <P_i^(1:t), P_j^(1:t)> /
   sqrt(<P_i^(1:t), P_i^(1:t)> <P_j^(1:t), P_j^(1:t)>)`` (eq. 6-8), t = 20 by default (the
   authors' code and experiments).

The trajectory inner products ``sum_{s=1..t} P^s (P^s)^T`` are not formed by t dense matrix
products (the authors' code: 2t products of Nc x Nc matrices). With ``d`` the degrees and
``A = D^-1/2 S D^-1/2 = U diag(lambda) U^T`` (S the Jaccard graph without its diagonal,
symmetric), ``P^s = D^-1/2 A^s D^1/2``, so ``sum_s P^s (P^s)^T = D^-1/2 U (Q o G) U^T D^-1/2``
with ``Q = U^T D U`` and ``G_ab = sum_{s=1..t} (lambda_a lambda_b)^s``: one symmetric
eigendecomposition and three matrix products whatever t, the same numbers to rounding (checked
against the literal powers in the tests). A cluster with no edge (all its objects unlabelled in
every other partition) has a zero trajectory; its similarities are 0, as in the authors' code.

* **ECPCS-HC** (sec. V, VI-A) maps Z to the objects, the enhanced co-association
  ``b_ij = (1/M) sum_m B^m_ij`` with ``B^m_ij = 1`` if x_i, x_j share a cluster of pi^m and
  ``z_uv`` for their two clusters otherwise (eq. 12-15), and cuts its average-linkage dendrogram
  at K clusters (eq. 16-21). Objects with identical label rows have ``b = 1`` between them and
  the same b to everyone else, so average linkage merges them first at height 0 and thereafter
  treats them as one group: the dendrogram above height 0 is average linkage of these
  *microclusters* weighted by their sizes, which is what is computed (quadratic in the number
  of microclusters, within the memory budget).
* **ECPCS-MC** (sec. VI-B) cuts the graph of clusters weighted by Z into K meta-clusters by the
  normalized cut (eq. 22-24; Shi & Malik 2000, with the multiclass relaxation and the
  rotation-based discretisation of Yu & Shi 2003, at the authors' Ncut settings), and gives each object to the
  meta-cluster holding the largest fraction of its clusters (eq. 25-26). Linear in n.
"""
from __future__ import annotations

import numpy as np

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust._linkage import DECIMALS as _DECIMALS, average_linkage, cut_merges
from cclust.base import declare
from cclust.errors import ValidationError
from cclust.graph import one_blas_thread
from cclust.graph._meta import participation_of_codes
from cclust.result import ConsensusResult
from cclust._engine import useful_threads
from cclust.validation import check_int, check_n_clusters, check_n_jobs, check_random_state, require_memory
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

__all__ = ["ecpcs_hc", "ecpcs_mc", "propagate_cluster_similarity", "ncut_meta_clusters"]

#: The authors' number of random-walk steps (Huang et al. 2021, sec. VII-C; their code's default).
DEFAULT_T = 20

#: The Nc x Nc cluster matrices (Jaccard graph, propagated Z) are put in ``extras`` up to this
#: many clusters (8 MB each); the object-level enhanced co-association up to this many objects.
EXTRAS_MAX_CLUSTERS = 1000
EXTRAS_MAX_OBJECTS = 1000

#: The authors' Ncut settings (Cour, Yu & Shi's code as shipped with ECPCS): entries of the
#: similarity at or below VALUE_MIN are dropped, OFFSET is added to the diagonal and twice
#: OFFSET to the degrees, and the discretisation stops after MAX_ROTATIONS + 1 iterations.
NCUT_VALUE_MIN = 1e-6
NCUT_OFFSET = 0.5
NCUT_MAX_ROTATIONS = 20
#: Up to this many clusters the Ncut eigenvectors come from a dense decomposition.
DENSE_EIGEN_MAX = 1000

_HC_ALTERNATIVE = ("use ecpcs-mc, which works on the clusters and is linear in n, or a linear method "
                   "such as mcla, hbgf or kcc")
_CLUSTER_ALTERNATIVE = ("use partitions with fewer clusters (a smaller k_range), or a method that does not "
                        "compare every two clusters densely, such as hbgf or kcc")


# -- the shared cluster level -------------------------------------------------------------------

def _prepare(ensemble, n_clusters):
    """The input ensemble, its canonical form, the input column of every canonical partition,
    and K, with ECPCS's own refusals."""
    from cclust.ensemble import as_ensemble, require_every_object_labelled

    original = as_ensemble(ensemble)
    E, columns = original.canonical(return_columns=True)
    if E.n_partitions < 2:
        raise ValidationError(
            f"ensemble must hold at least 2 partitions for ECPCS, got {E.n_partitions}: the cluster "
            "similarity graph (Huang et al. 2021, eq. 3) joins clusters of different partitions, and the "
            "clusters of one partition are disjoint, so one partition gives a graph without edges.")
    if (E.n_clusters <= 1).all():
        raise ValidationError(
            "ensemble: every partition puts all objects in one cluster, so the cluster similarity graph "
            "carries no information; generate partitions with at least two clusters.")
    require_every_object_labelled(E, "ECPCS", "places an object through the clusters that contain it")
    return original, E, columns, check_n_clusters(n_clusters, E)


def _check_t(t):
    return check_int(t, "t", low=1)


def _cluster_bytes(n_c):
    """Peak bytes of the cluster level: about eight dense Nc x Nc float64 arrays."""
    return 8 * 8 * n_c * n_c


def jaccard_matrix(E, max_bytes=None):
    """Dense Jaccard similarity of the clusters of the canonical ensemble E (Huang et al. 2021, eq. 1-3).

    Rows and columns follow E's one-hot columns (partition offsets + label); the diagonal is 1.
    The intersections ``|C_i & C_j|`` are the contingency tables of each partition against all
    (r compiled passes over the labels, missing labels skipped), not the sparse product
    ``B^T B`` of the one-hot (about 9x slower at n = 100,000, r = 100).
    """
    n_c = int(E.offsets[-1])
    require_memory(_cluster_bytes(n_c), f"the cluster-wise similarity propagation of {n_c} clusters",
                   _CLUSTER_ALTERNATIVE, max_bytes)
    inter = np.empty((n_c, n_c))
    threads = useful_threads(E.n_samples, check_n_jobs(None))
    for j in range(E.n_partitions):
        inter[E.offsets[j]:E.offsets[j + 1]] = E.contingency(E.labels[:, j], int(E.n_clusters[j]),
                                                             n_jobs=threads)
    size = np.diag(inter).copy()
    union = size[:, None] + size[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def _symmetric_eigh(A):
    """All eigenpairs of a symmetric matrix by divide and conquer (LAPACK syevd, NumPy's eigh).

    SciPy's default MRRR driver ('evr') fails with "Internal Error" on the highly repeated
    eigenvalues of ensembles whose partitions agree; syevd does not, and NumPy's build of it
    was 3-5x faster than SciPy's here (Nc = 1,509).
    """
    return np.linalg.eigh(A)


def _leading_eigenvectors(W, k):
    """The k eigenvectors of the symmetric W with the largest eigenvalues, largest first.

    As the authors' Ncut: Lanczos (ARPACK) from the all-ones start vector with
    ``max(35, 2k)`` Lanczos vectors, tolerance 1e-8 and 300 restarts, for more than
    :data:`DENSE_EIGEN_MAX` vertices; a dense decomposition below that, or if ARPACK fails.
    """
    n = W.shape[0]
    if n > DENSE_EIGEN_MAX and k < n - 1:
        from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, eigsh

        try:
            values, vectors = eigsh(W, k=k, which="LA", v0=np.ones(n), ncv=min(n - 1, max(35, 2 * k)), tol=1e-8,
                                    maxiter=300)
            return vectors[:, np.argsort(-values, kind="stable")]
        except (ArpackNoConvergence, ArpackError):
            pass
    _, vectors = _symmetric_eigh(W)
    return vectors[:, n - k:][:, ::-1]


def _geometric_sums(q, t):
    """``sum_{s=1..t} q^s`` elementwise, by binary doubling (O(log t) passes, no division)."""
    total = np.zeros_like(q)
    power = np.ones_like(q)  # q^k for the k summed so far
    for bit in bin(t)[2:]:
        total += power * total          # k -> 2k: S_2k = S_k + q^k S_k
        power *= power
        if bit == "1":                  # k -> k + 1: S_k+1 = q (1 + S_k)
            total += 1.0
            total *= q
            power *= q
    return total


def propagate_cluster_similarity(similarity, t=DEFAULT_T):
    """Propagated cluster-wise similarity Z (Huang et al. 2021, eq. 4-8).

    Parameters
    ----------
    similarity : ndarray of shape (n_c, n_c)
        Symmetric non-negative edge weights of the cluster graph (its diagonal is ignored:
        ``p_ii = 0``, eq. 4).
    t : int, default=20
        Number of random-walk steps.

    Returns
    -------
    Z : ndarray of shape (n_c, n_c)
        Cosine similarity of the t-step trajectories, in [0, 1]; 1 on the diagonal except for
        isolated vertices (no edge), whose row and column are 0.
    """
    t = _check_t(t)
    S = np.array(similarity, dtype=np.float64, copy=True)
    np.fill_diagonal(S, 0.0)
    d = S.sum(axis=1)
    isolated = d <= 0
    scale = np.where(isolated, 0.0, 1.0 / np.sqrt(np.where(isolated, 1.0, d)))
    S *= scale[:, None]
    S *= scale[None, :]                        # A = D^-1/2 S D^-1/2, symmetric
    lam, U = _symmetric_eigh(S)
    del S
    Q = U.T @ (d[:, None] * U)                 # U^T D U
    Q *= _geometric_sums(np.multiply.outer(lam, lam), t)
    inner = U @ Q @ U.T                        # sum_s A^s D A^s
    del Q, U
    inner = (inner + inner.T) * 0.5            # symmetric to the last bit
    inner *= scale[:, None]
    inner *= scale[None, :]                    # sum_s P^s (P^s)^T
    norm = np.sqrt(np.maximum(np.diag(inner), 0.0))
    live = norm > 0
    norm = np.where(live, norm, 1.0)
    inner /= norm[:, None]
    inner /= norm[None, :]
    np.clip(inner, 0.0, 1.0, out=inner)        # exact values are in [0, 1]; drop round-off
    inner[~live, :] = 0.0
    inner[:, ~live] = 0.0
    inner[np.flatnonzero(live), np.flatnonzero(live)] = 1.0
    return inner


def _cluster_level(E, t, max_bytes):
    S = jaccard_matrix(E, max_bytes)
    with one_blas_thread():
        return S, propagate_cluster_similarity(S, t)


def _input_order(E, columns, original):
    """Index of every canonical cluster among the input ensemble's one-hot columns."""
    n_c = int(E.offsets[-1])
    L = E.labels
    present = L >= 0
    canon = (L + E.offsets[:-1])[present]
    given = (original.labels[:, columns] + original.offsets[:-1][columns])[present]
    where = np.empty(n_c, dtype=np.int64)
    where[canon] = given
    return where


def _cluster_extras(E, columns, original, S, Z):
    """Jaccard graph and Z in the input ensemble's one-hot column order, for small inputs."""
    n_c = S.shape[0]
    if n_c > EXTRAS_MAX_CLUSTERS:
        return {}
    where = _input_order(E, columns, original)
    back = np.empty(n_c, dtype=np.int64)
    back[where] = np.arange(n_c)
    return {"cluster_similarity": S[np.ix_(back, back)], "propagated_similarity": Z[np.ix_(back, back)]}


# -- ECPCS-HC -------------------------------------------------------------------------------------

def enhanced_coassociation(E, Z, rows=None, *, block_bytes=1 << 22):
    """The enhanced co-association (Huang et al. 2021, eq. 12-15) between the objects ``rows``.

    ``b_ij = sum_m w_m Z'[Cls^m(x_i), Cls^m(x_j)] / sum_m w_m`` with Z' = Z with a unit
    diagonal, so that ``B^m_ij = 1`` for objects sharing a cluster (eq. 13). With missing labels
    the sums run over the partitions labelling both objects (0 if none does), as the
    co-association does in cclust. E is a canonical ensemble whose one-hot columns index Z.
    """
    L = E.labels if rows is None else E.labels[rows]
    m, r = L.shape
    w = E.weights / E.weights.sum()
    Zp = np.array(Z, dtype=np.float64, copy=True)
    np.fill_diagonal(Zp, 1.0)
    missing = E.has_missing
    # Per partition, the similarity of each of its clusters to every row's cluster (K_j + 1
    # rows: the last, zero, is read by rows the partition leaves unlabelled).
    tables, index = [], np.empty((m, r), dtype=np.int64)
    for j in range(r):
        k_j = int(E.n_clusters[j])
        lab = L[:, j]
        lookup = np.zeros((k_j + 1, m))
        present = lab >= 0
        block = Zp[E.offsets[j]:E.offsets[j + 1]]
        lookup[:k_j, present] = block[:, E.offsets[j] + lab[present]] * w[j]
        tables.append(lookup)
        index[:, j] = np.where(present, lab, k_j)
    B = np.empty((m, m))
    step = max(1, block_bytes // (8 * m))
    labelled = (L >= 0).astype(np.float64)
    for start in range(0, m, step):
        stop = min(m, start + step)
        out = B[start:stop]
        out[...] = tables[0][index[start:stop, 0]]
        for j in range(1, r):
            out += tables[j][index[start:stop, j]]
        if missing:
            den = (labelled[start:stop] * w) @ labelled.T
            np.divide(out, den, out=out, where=den > 0)
            out[den <= 0] = 0.0
    return B


def _hc_bytes(m, n_c, r):
    """Peak bytes of ECPCS-HC on m microclusters: the m x m matrix, the per-partition lookups,
    the per-object row buffers and the linkage's working rows."""
    return 8 * m * m + 8 * (n_c + r) * m + 8 * m * r + 64 * m


@weights_on_the_ensemble
@declare(handles_missing=True)
def ecpcs_hc(ensemble: EnsembleLike, n_clusters: int, *, t: int = DEFAULT_T, max_bytes: int | None = None,
             random_state: RandomStateLike = None) -> ConsensusResult:
    """ECPCS-HC: average linkage of the enhanced co-association (Huang et al. 2021, sec. VI-A).

    The cluster-wise similarities propagated by t-step random walks on the Jaccard graph of the
    base clusters (Huang et al. 2021, eq. 1-8; see :mod:`cclust.consensus_functions.ecpcs`) give the
    enhanced co-association ``b_ij``: the (weighted) average over the partitions of 1 when
    x_i, x_j share a cluster and of the propagated similarity of their two clusters otherwise
    (eq. 12-15). Agglomerative clustering with average linkage on ``1 - b`` (eq. 16-21), cut at
    exactly K clusters, gives the consensus. The authors' code does the same (MATLAB's
    ``linkage(..., 'average')`` and ``cluster(..., 'maxclust', K)``).

    The dendrogram is built on microclusters (objects with identical label rows,
    :func:`cclust.graph.identical_label_rows`) weighted by their sizes, which is exact (see the
    module docstring); ``b`` is rounded to 12 decimals so that pairs tied in exact arithmetic
    stay tied, and ties go to the lowest microcluster index (numbered by first object). Time
    and memory are quadratic in the number m of microclusters (an m x m matrix; refused with a
    :class:`cclust.errors.MemoryBudgetError` past the budget); at most n.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        At least two partitions. Missing labels (-1) are allowed: clusters are the sets of the
        objects a partition labels, so the Jaccard graph and the walks are unchanged, and
        ``b_ij`` is averaged over the partitions labelling both objects (0 if none does; the
        paper defines B^m only for complete partitions). An object missing from every
        partition is refused. The ensemble's partition weights weight the average (eq. 15
        uses equal weights, the default).
    n_clusters : int
        K, in [2, number of distinct label vectors].
    t : int, default=20
        Random-walk steps (the authors' default, Huang et al. 2021, sec. VII-C), at least 1.
    max_bytes : int, default=None
        Memory budget of the m x m matrix and of the Nc x Nc cluster matrices.
    random_state : None
        Unused (the method is deterministic).

    Returns
    -------
    ConsensusResult
        ``objective`` is the average-linkage distance ``1 - b`` of the first merge above the
        cut. ``extras``: ``n_microclusters``; for at most 1,000 clusters
        ``cluster_similarity`` (the Jaccard graph, eq. 3) and ``propagated_similarity`` (Z,
        eq. 8), Nc x Nc in the order of ``Ensemble(labels).one_hot()``'s columns; for at most
        1,000 objects ``enhanced_coassociation`` (n x n, eq. 15).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.ecpcs import ecpcs_hc
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> ecpcs_hc(labels, 2).labels.tolist()
    [0, 0, 1, 1, 1]
    """
    t = _check_t(t)
    original, E, columns, n_clusters = _prepare(ensemble, n_clusters)
    groups = E.distinct_rows()
    n = E.n_samples
    if groups is None:
        firsts, inverse, counts = np.arange(n), np.arange(n), np.ones(n, dtype=np.int64)
    else:
        firsts, inverse, counts = groups
    m = firsts.shape[0]
    n_c = int(E.offsets[-1])
    require_memory(_hc_bytes(m, n_c, E.n_partitions),
                   f"the enhanced co-association of {m} microclusters (objects with distinct label rows)",
                   _HC_ALTERNATIVE, max_bytes)
    S, Z = _cluster_level(E, t, max_bytes)
    B = enhanced_coassociation(E, Z, firsts)
    extras = {"n_microclusters": int(m), "t": t}
    if n <= EXTRAS_MAX_OBJECTS:
        extras["enhanced_coassociation"] = B[np.ix_(inverse, inverse)]
    extras.update(_cluster_extras(E, columns, original, S, Z))
    del S, Z
    np.subtract(1.0, B, out=B)
    np.round(B, _DECIMALS, out=B)
    merges = average_linkage(B, counts, update="fractions")
    del B
    micro, height = cut_merges(merges, m, n_clusters)
    return ConsensusResult.from_labels(
        micro[inverse], objective=height,
        objective_name="average-linkage distance 1 - b of the first merge above the cut (Huang et al. 2021, eq. 21)",
        method="ecpcs-hc", extras=extras)


# -- ECPCS-MC -------------------------------------------------------------------------------------

def _discretise(vectors, rng):
    """Yu & Shi's (2003) discretisation of continuous Ncut eigenvectors, as in the authors' Ncut code.

    Rows normalised; the rotation starts from a random row and rows as orthogonal as possible
    to those already chosen; then alternately each row goes to its largest rotated coordinate
    and the rotation is the polar factor of ``Y^T V``, until the objective repeats or after
    NCUT_MAX_ROTATIONS + 1 rounds.
    """
    n, k = vectors.shape
    norm = np.linalg.norm(vectors, axis=1)
    V = vectors / np.where(norm > 0, norm, 1.0)[:, None]
    R = np.zeros((k, k))
    R[:, 0] = V[int(rng.integers(n))]
    c = np.zeros(n)
    for j in range(1, k):
        c += np.abs(V @ R[:, j - 1])
        R[:, j] = V[int(np.argmin(c))]
    last = 0.0
    rounds = 0
    while True:
        rounds += 1
        labels = np.argmax(V @ R, axis=1)
        Y = np.zeros((k, n))
        Y[labels, np.arange(n)] = 1.0
        U, s, Vt = np.linalg.svd(Y @ V)
        value = 2.0 * (n - s.sum())
        if abs(value - last) < np.finfo(float).eps or rounds > NCUT_MAX_ROTATIONS:
            return labels
        last = value
        R = Vt.T @ U.T


def ncut_meta_clusters(similarity, n_parts, *, random_state=None):
    """Normalized cut of a similarity graph into ``n_parts`` (Huang et al. 2021, eq. 22-24).

    The multiclass spectral relaxation at the authors' Ncut settings: entries at or below
    ``NCUT_VALUE_MIN`` are dropped; with ``W' = W + OFFSET I`` and degrees
    ``d = rowsum(W) + 2 OFFSET`` the ``n_parts`` leading eigenvectors of
    ``D^-1/2 W' D^-1/2`` are mapped back by ``D^-1/2``, scaled to norm sqrt(n) with a
    negative first entry, and discretised (:func:`_discretise`; the start row is drawn from
    ``random_state``). Some parts may come back empty.
    """
    rng = check_random_state(random_state)
    W = np.where(np.asarray(similarity, dtype=np.float64) > NCUT_VALUE_MIN, similarity, 0.0)
    n = W.shape[0]
    k = min(int(n_parts), n)
    d = W.sum(axis=1) + 2.0 * NCUT_OFFSET
    W[np.diag_indices(n)] += NCUT_OFFSET
    scale = 1.0 / np.sqrt(d + np.finfo(float).eps)
    W *= scale[:, None]
    W *= scale[None, :]
    vectors = _leading_eigenvectors(W, k)
    vectors = vectors * scale[:, None]
    vectors *= np.sqrt(n) / np.linalg.norm(vectors, axis=0)
    first = np.sign(vectors[0])
    vectors *= np.where(first != 0, -first, 1.0)
    return _discretise(vectors, rng)


def normalized_cut(similarity, parts):
    """``sum_k W(A_k, not A_k) / vol(A_k)`` of a partition of the vertices (empty parts skipped)."""
    W = np.asarray(similarity)
    n_parts = int(parts.max()) + 1
    member = np.zeros((W.shape[0], n_parts))
    member[np.arange(W.shape[0]), parts] = 1.0
    vol = member.T @ W.sum(axis=1)
    within = np.einsum("ik,ik->k", member, W @ member)
    used = vol > 0
    return float(((vol - within)[used] / vol[used]).sum())


@weights_on_the_ensemble
@declare(handles_missing=True, object_order="distribution")  # random start row, random vote ties
def ecpcs_mc(ensemble: EnsembleLike, n_clusters: int, *, t: int = DEFAULT_T, max_bytes: int | None = None,
             random_state: RandomStateLike = None) -> ConsensusResult:
    """ECPCS-MC: meta-clusters of the propagated cluster graph, majority vote (Huang et al. 2021, sec. VI-B).

    The cluster-wise similarities Z propagated by t-step random walks on the Jaccard graph of
    the base clusters (Huang et al. 2021, eq. 1-8; see :mod:`cclust.consensus_functions.ecpcs`) weight a
    graph of the clusters (eq. 22-23: the paper writes ``b_ij`` in eq. 23, its text and the
    authors' code use Z), which the normalized cut splits into K meta-clusters
    (:func:`ncut_meta_clusters`, eq. 24). Each object then joins the meta-cluster holding the
    largest fraction of its clusters (eq. 25-26), exact ties at random as the paper says (the
    authors' code takes the first).

    Time and memory are linear in n (one sparse one-hot, an n x K score table); the cluster
    level is O(Nc^3) time and O(Nc^2) memory in the number Nc of clusters.

    Deviation: a meta-cluster that wins no object (possible when its clusters are outvoted
    everywhere, or when the discretisation leaves a part empty) is filled as MCLA's are in
    cclust (:func:`cclust.graph.honour_n_clusters`: the objects closest to preferring it move),
    so exactly K clusters come back; ``extras["n_moved"]`` counts the objects moved (0 in the
    paper's setting almost always).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        At least two partitions. Missing labels (-1) are allowed as the paper's definitions
        stand: clusters are the sets of the objects a partition labels (eq. 1), and an object
        votes with the clusters that contain it (eq. 25). An object missing from every
        partition is refused. A cluster counts with its partition's weight (the ensemble's)
        in the vote's fractions (eq. 25 uses equal weights, the default).
    n_clusters : int
        K, in [2, min(number of distinct label vectors, number of clusters Nc)].
    t : int, default=20
        Random-walk steps (the authors' default), at least 1.
    max_bytes : int, default=None
        Memory budget of the Nc x Nc cluster matrices.
    random_state : int, Generator or None
        Seeds the discretisation's start row and the vote's tie-breaking.

    Returns
    -------
    ConsensusResult
        ``objective`` is the normalized cut of the meta-clusters on the graph Z (lower is
        better). ``extras``: ``meta_labels`` (the meta-cluster of every cluster, in the order of
        ``Ensemble(labels).one_hot()``'s columns), ``scores`` (n x K, eq. 25), ``n_moved``; for
        at most 1,000 clusters ``cluster_similarity`` (eq. 3) and ``propagated_similarity``
        (eq. 8), in the same order.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.ecpcs import ecpcs_mc
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> ecpcs_mc(labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1, 1]
    """
    t = _check_t(t)
    rng = check_random_state(random_state)
    original, E, columns, n_clusters = _prepare(ensemble, n_clusters)
    n_c = int(E.offsets[-1])
    if n_clusters > n_c:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of clusters in the ensemble ({n_c}): "
            "ECPCS-MC groups the clusters into n_clusters meta-clusters (Huang et al. 2021, eq. 24); ask for "
            f"n_clusters <= {n_c} or use ecpcs-hc.")
    S, Z = _cluster_level(E, t, max_bytes)
    with one_blas_thread():
        meta = ncut_meta_clusters(Z, n_clusters, random_state=rng)
    objective = normalized_cut(Z, meta)
    pw = np.repeat(E.weights, E.n_clusters)
    labels, scores, moved = participation_of_codes(E, np.arange(n_c), pw, meta, n_clusters, rng)
    where = _input_order(E, columns, original)
    meta_labels = np.empty(n_c, dtype=np.int64)
    meta_labels[where] = meta
    extras = {"meta_labels": meta_labels, "scores": scores, "n_moved": int(moved), "t": t}
    extras.update(_cluster_extras(E, columns, original, S, Z))
    return ConsensusResult.from_labels(
        labels, objective=objective,
        objective_name="normalized cut of the meta-clusters on the propagated similarity Z (lower is better)",
        method="ecpcs-mc", extras=extras)
