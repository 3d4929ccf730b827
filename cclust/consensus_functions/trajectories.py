"""Consensus from random-walk probability trajectories: PTA and PTGP (Huang, Lai & Wang 2016).

Both methods share one pipeline on the **microclusters** of the ensemble (groups of objects
that every partition labels alike, :func:`cclust.graph.identical_label_rows`):

1. the microcluster co-association (MCA, Huang et al. 2016, eq. 4-5):
   ``a_ij = sum_m w_m [y_i and y_j share a cluster of pi_m]`` (``b_ij / M`` with equal
   weights);
2. the K-elite-neighbour graph (K-ENG, Definitions 5-7): a link ``a_ij`` is kept when it is at
   least the K-th largest link of y_i or of y_j (ties at the threshold are kept);
3. the random walk on the K-ENG (Definition 8): ``p_ij = n_j a_ij / sum_k n_k a_ik`` with
   ``n_j`` the number of objects in y_j;
4. the probability trajectory of y_i (Definition 9), ``(p^1_i:, ..., p^T_i:)``, the rows of
   ``P, P^2, ..., P^T``, and the probability trajectory similarity PTS (Definition 10, eq.
   13): the cosine between two trajectories.

PTA clusters the microclusters hierarchically on PTS (Algorithm 2, eq. 14); PTGP cuts the
microcluster-cluster bipartite graph weighted by the average PTS between a microcluster and
the microclusters of a cluster (Algorithm 3, eq. 15-17) with the transfer cut
(:func:`cclust.graph.tcut`).

Memory is O(n r + M^2) for M microclusters: the MCA, the trajectories and PTS are dense
M x M float64 matrices (up to four of them at once), guarded by
:func:`cclust.validation.require_memory`. With the authors' ensembles (10 partitions) M is
4-27% of n.

**How PTS is computed** (``pts_method``). The authors' code sums the T products
``P^t (P^t)^T`` (T dense rank-M updates and T - 1 sparse walk steps, O(T M^3)); that route is
kept as ``pts_method="powers"``. The default ``"spectral"`` uses that the walk is reversible
(detailed balance with weights ``n_i d_i``, ``d_i = sum_j a_ij n_j``): one symmetric
eigendecomposition per connected component of the K-ENG gives every power at once, about
3 times less work at the authors' T = 19-20 (see :func:`_spectral_pts` for the derivation).
The two agree to round-off (PTS within about 1e-13; measured on 90 ensembles of the authors'
pools and small random ones: the same PTA and PTGP labels every time).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust.base import declare
from cclust.ensemble import as_ensemble, require_every_object_labelled
from cclust.errors import ValidationError
from cclust._linkage import DECIMALS as _DECIMALS, cut_dendrogram
from cclust.graph import bipartite_affinity, blas_team, has_empty_part, honour_n_clusters, identical_label_rows, \
    one_blas_thread, partition_graph, tcut
from cclust.result import ConsensusResult
from cclust.validation import check_int, check_n_clusters, require_memory
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

__all__ = ["pta", "ptgp", "probability_trajectories", "default_elite_neighbors", "LINKAGES", "CUTS",
           "PTS_METHODS"]

#: PTA's agglomerative rules (Huang et al. 2016, eq. 14); "average" is the paper's default.
LINKAGES = ("average", "complete", "single")
#: PTGP's graph cuts: the paper's transfer cut, or METIS through :mod:`cclust.graph`.
CUTS = ("tcut", "metis")
#: Up to this many microclusters, the intermediate matrices are returned in ``extras``.
EXTRAS_MAX_MICROCLUSTERS = 200
#: PTS of an isolated microcluster (no link in the K-ENG) with every microcluster, itself
#: included: the authors' code's value (it is otherwise 0/0).
ISOLATED_SIMILARITY = 1e-20
#: How PTS is computed: one eigendecomposition of the reversible walk (the default) or the
#: walk's T powers (the authors' route; the test reference).
PTS_METHODS = ("spectral", "powers")
#: Spectral PTS values below this are round-off around an exact 0 and are set to 0.
SPECTRAL_ZERO = 1e-13
#: Row block of the O(M^2) elementwise passes of the spectral route.
_ROWS = 256

_ALTERNATIVE = ("use a method whose memory is linear in n, such as hbgf, mcla or kcc (the microclusters "
                "are too many for a dense M x M walk)")


def default_elite_neighbors(n_microclusters):
    """The authors' K = T: ``floor(sqrt(M) / 2)`` capped at 20 (Huang et al. 2016, sec. 5.3, and
    their demo code), at least 1 (their code treats 0 as 1)."""
    return int(max(1, min(20, np.floor(np.sqrt(n_microclusters) / 2))))


def _check_ensemble(ensemble, n_clusters, method):
    E = as_ensemble(ensemble).canonical()
    n = E.n_samples
    if n < 2:
        raise ValidationError(f"ensemble must label at least 2 objects to be partitioned, got {n}.")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=n)
    if E.n_partitions < 2:
        raise ValidationError(
            f"ensemble has one partition: {method} (Huang et al. 2016) links microclusters through the "
            "partitions that put them together, and with one partition no two of its clusters are linked; "
            "pass at least two partitions.")
    require_every_object_labelled(E, method, "has no co-association for them (Huang et al. 2016 define none)")
    # The microclusters are the distinct label vectors: K above their number is refused here.
    return E, check_n_clusters(n_clusters, E)


def _microclusters(labels):
    """(first member, microcluster of every object, sizes), numbered by first member."""
    groups = identical_label_rows(labels)
    if groups is None:
        n = labels.shape[0]
        return np.arange(n), np.arange(n), np.ones(n, dtype=np.int64)
    first, inverse, counts = groups
    return first, inverse, counts.astype(np.int64)


def _one_hot(labels, offsets, values=None):
    """The (rows x sum K_i) CSR one-hot of ``labels`` (missing labels have no entry)."""
    m, r = labels.shape
    present = labels >= 0
    rows = np.repeat(np.arange(m), r)[present.reshape(-1)]
    cols = (labels + offsets[:-1][None, :])[present]
    data = np.ones(cols.shape[0]) if values is None else values[cols]
    return sp.csr_matrix((data, (rows, cols)), shape=(m, int(offsets[-1])))


@weights_on_the_ensemble
def probability_trajectories(ensemble, *, elite_neighbors=None, trajectory_length=None, max_bytes=None,
                             method="pta", keep=None, pts_method="spectral"):
    """The shared first half of PTA and PTGP (Huang et al. 2016, Algorithm 1).

    Returns a dict with ``first``, ``inverse``, ``sizes`` (the microclusters), ``labels``
    (the canonical label rows of the microclusters), ``offsets``, ``elite_neighbors`` and
    ``trajectory_length`` (the K and T used), ``isolated`` (microclusters with no K-ENG link)
    and ``pts`` (the M x M PTS matrix, by ``pts_method``: "spectral" or "powers", see the
    module docstring); with ``keep`` (None: at most
    :data:`EXTRAS_MAX_MICROCLUSTERS` microclusters), also ``mca``, ``elite_graph`` (CSR),
    ``transition`` (CSR) and ``trajectories`` (T x M x M: ``[t - 1, i]`` is ``p^t_i:``).
    The ensemble must have been checked (see :func:`pta`); its weights are the partitions'
    (a ``weights=`` argument, read nowhere before, is the weighted ensemble's for one release,
    with a FutureWarning).
    """
    if pts_method not in PTS_METHODS:
        raise ValidationError(f"pts_method must be one of {list(PTS_METHODS)}, got {pts_method!r}.")
    E = ensemble
    first, inverse, sizes = _microclusters(E.labels)
    m = first.shape[0]
    keep = m <= EXTRAS_MAX_MICROCLUSTERS if keep is None else keep
    default = default_elite_neighbors(m)
    k = default if elite_neighbors is None else elite_neighbors
    t_len = default if trajectory_length is None else trajectory_length
    # Up to four dense M x M float64 arrays live at once (peak measured with tracemalloc on
    # MNIST, M = 1,483: 3.2 M^2 for the spectral route, the eigenvectors and the eigensolver's
    # workspace of 2 M^2; 3.8 for the powers, the MCA, two walk steps and their sum).
    require_memory(4 * m * m * 8, f"{method}'s probability trajectories of {m} microclusters (dense {m} x {m})",
                   _ALTERNATIVE, max_bytes)
    with blas_team(m):   # LAPACK's eigensolver runs on one thread in any case (_component_pts)
        return _trajectories(E, first, inverse, sizes, keep, k, t_len, pts_method)


def _trajectories(E, first, inverse, sizes, keep, k, t_len, pts_method):
    """The body of :func:`probability_trajectories` once the microclusters are known."""
    m = first.shape[0]
    labels = np.ascontiguousarray(E.labels[first])
    offsets = E.offsets
    weight_of = np.repeat(E.weights, E.n_clusters)
    Bw = _one_hot(labels, offsets, weight_of).toarray()
    B1 = (Bw > 0).astype(np.float64)
    mca = np.round(Bw @ B1.T, _DECIMALS)   # eq. 5; rounded so sums in any order tie exactly
    del Bw, B1
    # Definitions 5-7: the K-th largest link of each microcluster is its threshold; a link at
    # or above the threshold of either end is kept (the authors' code keeps ties the same way).
    k_eff = min(k, m - 1)
    if m > 1:
        masked = mca.copy()
        np.fill_diagonal(masked, -np.inf)
        masked.partition(m - k_eff, axis=1)   # in place: rows reordered, the K-th largest at m - K
        threshold = masked[:, m - k_eff].copy()
        del masked
    else:
        threshold = np.zeros(m)
    keep_link = mca >= threshold[:, None]
    np.fill_diagonal(keep_link, False)
    keep_link &= mca > 0
    keep_link |= keep_link.T
    rows, cols = np.nonzero(keep_link)
    del keep_link
    elite = sp.csr_matrix((mca[rows, cols], (rows, cols)), shape=(m, m))
    if not keep:
        del mca
    # Definition 8: p_ij proportional to n_j w_ij.
    flow = elite @ sp.diags(sizes.astype(np.float64))
    out = np.asarray(flow.sum(axis=1)).reshape(-1)
    isolated = out == 0
    P = sp.csr_matrix(sp.diags(1.0 / np.where(isolated, 1.0, out)) @ flow)
    # Definitions 9-10: PTS is the cosine of the rows of G = sum_t P^t (P^t)^T.
    if pts_method == "powers":
        G, steps = _powers_inner_products(P, t_len, keep)
        _cosine_in_place(G)
    else:
        G = _spectral_pts(elite, sizes, isolated, t_len)
        steps = _powers_inner_products(P, t_len, True, gram=False)[1] if keep else None
    G[isolated, :] = ISOLATED_SIMILARITY
    G[:, isolated] = ISOLATED_SIMILARITY
    out = {"first": first, "inverse": inverse, "sizes": sizes, "labels": labels, "offsets": offsets,
           "weights": weight_of, "elite_neighbors": k, "trajectory_length": t_len, "isolated": isolated, "pts": G}
    if keep:
        out.update(mca=mca, elite_graph=elite, transition=P, trajectories=np.stack(steps))
    return out


def _cosine_in_place(G):
    """G_ij / sqrt(G_ii G_jj) in place (eq. 13); a zero diagonal entry (an isolated
    microcluster, overwritten afterwards) divides by 1."""
    norm = np.sqrt(np.diag(G).copy())
    norm[norm == 0] = 1.0
    G /= norm[:, None]
    G /= norm[None, :]
    return G


def _powers_inner_products(P, t_len, keep, gram=True):
    """``pts_method="powers"``: G = sum_t P^t (P^t)^T by T - 1 sparse walk steps and T
    symmetric rank-M updates (BLAS ``dsyrk``); returns (G, the steps P^t if ``keep``).

    Y holds P^t (rows p^t_i:) in Fortran order, so that Y P = (P^T Y^T)^T is a sparse product
    with a C-ordered operand and the rank update adds Y Y^T to G in place (upper half, then
    mirrored). With ``gram=False`` only the steps are computed (the extras of small inputs)."""
    from scipy.linalg.blas import dsyrk

    m = P.shape[0]
    PT = P.T.tocsr()
    Y = np.asfortranarray(P.toarray())
    G = np.zeros((m, m), order="F") if gram else None
    steps = [] if keep else None
    for step in range(t_len):
        if step:
            Y = np.asfortranarray((PT @ Y.T).T)   # rows of Y: p^t_i:
        if keep:
            steps.append(np.array(Y))
        if gram:
            G = dsyrk(1.0, Y, beta=1.0, c=G, trans=0, lower=0, overwrite_c=1)  # += p^t (p^t)^T, upper half
    del Y
    if gram:
        G = np.triu(G) + np.triu(G, 1).T
    return G, steps


def _mirror_upper(G):
    """Copy the upper triangle of the square G onto its lower one, in place, in row blocks."""
    m = G.shape[0]
    for lo in range(0, m, _ROWS):
        hi = min(m, lo + _ROWS)
        G[lo:hi, :lo] = G[:lo, lo:hi].T
        block = G[lo:hi, lo:hi]
        block[np.tril_indices(hi - lo, -1)] = block.T[np.tril_indices(hi - lo, -1)]
    return G


def _spectral_pts(elite, sizes, isolated, t_len):
    """``pts_method="spectral"``: PTS from one symmetric eigendecomposition per connected
    component of the K-ENG instead of T matrix powers.

    The walk is reversible: with A the K-ENG weights, N = diag(n_i), d = A n and
    Pi = diag(n_i d_i), P = diag(1/d) A N satisfies Pi P = N A N (symmetric), so
    S = Pi^(1/2) P Pi^(-1/2) = diag(sqrt(n/d)) A diag(sqrt(n/d)) is symmetric, S = U Lambda U^T,
    and P^t = Pi^(-1/2) U Lambda^t U^T Pi^(1/2). Hence

        sum_{t=1..T} P^t (P^t)^T = Pi^(-1/2) U (H o C) U^T Pi^(-1/2),
        C = U^T Pi U,  H_ab = sum_{t=1..T} (lambda_a lambda_b)^t,

    (o: elementwise product), and the diagonal scaling Pi^(-1/2) cancels in the cosine (eq.
    13), so PTS is the cosine of G~ = U (H o C) U^T. Cost: the eigendecomposition, one rank
    update (C), a triangular product and one symmetric rank-2M update (G~ = L' U^T + U L'^T
    with L' = U L, L the lower half of H o C with its diagonal halved), about 4 M^3 flops
    besides the eigendecomposition against T M^3 and T - 1 sparse products for the powers.

    Pairs in different components have PTS exactly 0, as in exact arithmetic; within a
    component the result differs from the powers' in the last bits (round-off of order
    1e-15), and PTS values below :data:`SPECTRAL_ZERO` (round-off around exact zeros, such
    as two microclusters that swap places at every step) are set to 0. Returns the M x M
    PTS (isolated rows and columns left for the caller).
    """
    from scipy.sparse.csgraph import connected_components

    m = elite.shape[0]
    n = sizes.astype(np.float64)
    d = elite @ n                                   # d_i = sum_j a_ij n_j
    live = ~isolated
    scale = np.zeros(m)
    scale[live] = np.sqrt(n[live] / d[live])
    n_comp, comp = connected_components(elite, directed=False)
    blocks = [np.flatnonzero(comp == c) for c in range(n_comp)]
    blocks = [b for b in blocks if b.shape[0] > 1]   # singletons are the isolated microclusters
    whole = len(blocks) == 1 and blocks[0].shape[0] == m
    G = None if whole else np.zeros((m, m))
    for idx in blocks:
        A = elite if whole else elite[idx][:, idx]
        Gb = _component_pts(A, scale[idx], n[idx] * d[idx], t_len)
        if whole:
            G = Gb
        else:
            G[np.ix_(idx, idx)] = Gb
        del Gb
    if G is None:
        G = np.zeros((m, m))
    G[G < SPECTRAL_ZERO] = 0.0
    return G


def _component_pts(A, s, stationary, t_len):
    """PTS of one connected component of the K-ENG (see :func:`_spectral_pts`): A its weights,
    ``s`` = sqrt(n / d), ``stationary`` = n d (Pi's diagonal)."""
    from scipy.linalg import eigh
    from scipy.linalg.blas import dsyr2k, dsyrk, dtrmm

    S = (sp.diags(s) @ A @ sp.diags(s)).toarray()
    with one_blas_thread():   # LAPACK's threaded eigensolver loses badly on shared cores
        # S is symmetric, so S.T is the Fortran-ordered S and LAPACK overwrites it with U.
        lam, U = eigh(S.T, overwrite_a=True, check_finite=False, driver="evd")
    del S
    U = np.asfortranarray(U)
    C = dsyrk(1.0, U * np.sqrt(stationary)[:, None], trans=1, lower=1)   # U^T Pi U, lower half
    for lo in range(0, lam.shape[0], _ROWS):   # C *= H in row blocks (no M x M temporaries)
        hi = min(lo + _ROWS, lam.shape[0])
        x = np.multiply.outer(lam[lo:hi], lam[:hi])   # the lower half only: dtrmm reads no more
        H = x.copy()
        for _ in range(t_len - 1):              # Horner: x + x^2 + ... + x^T
            H += 1.0
            H *= x
        C[lo:hi, :hi] *= H                      # lower half of H o C
    del x, H
    C[np.diag_indices_from(C)] *= 0.5
    L = dtrmm(1.0, C, U, side=1, lower=1, overwrite_b=0)    # U L, L lower triangular
    del C
    Gb = dsyr2k(1.0, L, U, trans=0, lower=0)                # upper half of L U^T + U L^T
    del L, U
    _mirror_upper(Gb)
    return _cosine_in_place(Gb)


def _check_common(elite_neighbors, trajectory_length):
    elite_neighbors = check_int(elite_neighbors, "elite_neighbors", low=1, allow_none=True)
    trajectory_length = check_int(trajectory_length, "trajectory_length", low=1, allow_none=True)
    return elite_neighbors, trajectory_length


def _walk(ensemble, n_clusters, elite_neighbors, trajectory_length, max_bytes, method, pts_method):
    """Check the ensemble and K, run :func:`probability_trajectories`; returns (walk, K, M,
    whether the intermediates go into extras)."""
    E, n_clusters = _check_ensemble(ensemble, n_clusters, method)
    walk = probability_trajectories(E, elite_neighbors=elite_neighbors, trajectory_length=trajectory_length,
                                    max_bytes=max_bytes, method=method, pts_method=pts_method)
    m = walk["first"].shape[0]
    return walk, n_clusters, m, m <= EXTRAS_MAX_MICROCLUSTERS


def _extras(walk, keep):
    extras = {"microclusters": walk["inverse"], "microcluster_sizes": walk["sizes"],
              "n_microclusters": int(walk["first"].shape[0]), "elite_neighbors": walk["elite_neighbors"],
              "trajectory_length": walk["trajectory_length"], "n_isolated": int(walk["isolated"].sum())}
    if keep:
        extras.update(mca=walk["mca"], elite_graph=walk["elite_graph"], transition=walk["transition"],
                      trajectories=walk["trajectories"], pts=walk["pts"])
    return extras


# Exact PTS ties break by microcluster index, i.e. by object order: with few microclusters
# (M < 16, so K = T = 1) most PTS values are exactly 0 and many merges tie at distance 1.
@weights_on_the_ensemble
@declare(handles_missing=True, object_order="distribution")
def pta(ensemble: EnsembleLike, n_clusters: int, *, linkage: str = "average", elite_neighbors: int | None = None,
        trajectory_length: int | None = None, pts_method: str = "spectral",
        max_bytes: int | None = None, random_state: RandomStateLike = None) -> ConsensusResult:
    """Probability trajectory accumulation, PTA (Huang, Lai & Wang 2016, Algorithm 2).

    The PTS similarity of the microclusters (see the module docstring: microclusters, MCA,
    K-elite-neighbour graph, random walk of T steps, cosine of the probability trajectories)
    is clustered agglomeratively -- :func:`scipy.cluster.hierarchy.linkage` on ``1 - PTS``,
    rounded to 12 decimals -- and the dendrogram cut at exactly K clusters
    (:func:`cclust.graph.cut_dendrogram`); every object takes its microcluster's label.
    Region similarities follow eq. 14: the mean (average link), the minimum (complete) or the
    maximum (single) PTS over pairs of microclusters, each microcluster counting once
    whatever its size, as in the paper and the authors' code.

    Exact ties between merges go to the lowest microcluster index (microclusters are numbered
    by first object), so a permutation of the objects may change which tied pair merges
    first; with few microclusters (M < 16: K = T = 1, each walker's one-step distributions
    mostly disjoint) many PTS values are exactly 0 and this matters.

    Choices where the paper is silent, settled as the authors' code does: ties at the K-th
    largest link are all kept; a microcluster with no link in the K-ENG (it shares no cluster
    with any other) has PTS 1e-20 with everything; K and T default to
    ``min(20, floor(sqrt(M) / 2))`` for M microclusters, at least 1.

    **Missing labels** are allowed: the paper's definitions need no change. Objects missing
    from the same partitions with the same other labels form a microcluster; ``b_ij`` counts
    the partitions that put both microclusters in one cluster, so a partition missing either
    counts as "not together" and ``a_ij`` is still divided by the total weight (unlike the
    per-pair normalisation of :func:`cclust.Ensemble.coassociation`). An object missing from
    every partition has no co-association at all and is refused.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        At least two partitions; missing labels (-1) are allowed (see above). The MCA is the
        weighted sum over the partitions, by the ensemble's weights.
    n_clusters : int
        K, in [2, number of microclusters].
    linkage : {"average", "complete", "single"}, default="average"
        PTA-AL (the paper's default), PTA-CL or PTA-SL.
    elite_neighbors : int, default=None
        K of the K-elite-neighbour graph (>= 1; values above M - 1 keep every link, the paper's
        "K = ALL"). None: the authors' rule above.
    trajectory_length : int, default=None
        T, the steps of the random walk (>= 1). None: the authors' rule above.
    pts_method : {"spectral", "powers"}, default="spectral"
        How PTS is computed: one eigendecomposition of the reversible walk, or the T powers of
        the walk as the authors' code does (slower; equal to round-off, see the module
        docstring). Exact PTS ties may then differ in the last bits; distances are rounded to
        12 decimals before the linkage, so such ties stay ties.
    max_bytes : int, default=None
        Memory budget of the dense M x M matrices (four at once).
    random_state : None
        Unused: PTA is deterministic.

    Returns
    -------
    ConsensusResult
        ``objective`` is the linkage distance ``1 - PTS`` of the first merge above the cut;
        ``extras`` holds ``microclusters`` (the microcluster of every object),
        ``microcluster_sizes``, ``n_microclusters``, ``elite_neighbors``, ``trajectory_length``,
        ``n_isolated``, ``linkage`` and ``linkage_matrix`` (SciPy's, over microclusters), and
        for at most 200 microclusters also ``mca``, ``elite_graph`` (the K-ENG, sparse),
        ``transition`` (P, sparse), ``trajectories`` (T x M x M; ``[t - 1, i]`` is p^t_i:)
        and ``pts``.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.trajectories import pta
    >>> labels = np.array([[0, 0], [0, 0], [0, 1], [0, 2], [1, 3], [1, 3], [1, 4], [1, 5]])
    >>> pta(labels, 2).labels.tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """
    from scipy.cluster.hierarchy import linkage as scipy_linkage
    from scipy.spatial.distance import squareform

    if linkage not in LINKAGES:
        raise ValidationError(f"linkage must be one of {list(LINKAGES)}, got {linkage!r}.")
    elite_neighbors, trajectory_length = _check_common(elite_neighbors, trajectory_length)
    walk, n_clusters, m, keep = _walk(ensemble, n_clusters, elite_neighbors, trajectory_length,
                                      max_bytes, "PTA", pts_method)
    condensed = squareform(walk["pts"], force="tovector", checks=False)   # the upper triangle, row by row
    walk["pts"] = walk["pts"] if keep else None
    np.subtract(1.0, condensed, out=condensed)
    np.round(condensed, _DECIMALS, out=condensed)
    Z = scipy_linkage(condensed, method=linkage)
    del condensed
    micro = cut_dendrogram(Z, n_clusters)
    height = float(Z[m - n_clusters, 2]) if n_clusters < m else float("nan")
    extras = _extras(walk, keep)
    extras.update(linkage=linkage, linkage_matrix=Z)
    return ConsensusResult.from_labels(
        micro[walk["inverse"]], objective=height,
        objective_name=f"{linkage}-linkage distance 1 - PTS of the first merge above the cut",
        method="pta", extras=extras)


@weights_on_the_ensemble
@declare(handles_missing=True, object_order="distribution")  # k-means++ draws by position
def ptgp(ensemble: EnsembleLike, n_clusters: int, *, cut: str = "tcut", elite_neighbors: int | None = None,
         trajectory_length: int | None = None, pts_method: str = "spectral",
         n_init: int = 3, max_iter: int = 100, ufactor: int | None = None, max_bytes: int | None = None,
         random_state: RandomStateLike = None) -> ConsensusResult:
    """Probability trajectory based graph partitioning, PTGP (Huang, Lai & Wang 2016, Algorithm 3).

    From the PTS similarity of the microclusters (as in :func:`pta`), the microcluster-cluster
    bipartite graph (MCBG, eq. 16-17) links every microcluster y_i with every cluster C_j of
    the ensemble by the mean PTS between y_i and the microclusters of C_j (eq. 15, each
    microcluster of C_j counting once). The graph is cut into K parts of microclusters, and
    every object takes its microcluster's part.

    ``cut="tcut"`` (the paper's): the transfer cut of Li, Wu & Chang (2012),
    :func:`cclust.graph.tcut`: the normalised-cut eigenvectors of the clusters' graph
    transferred to the microclusters, rows normalised, then k-means with ``n_init`` k-means++
    starts of at most ``max_iter`` passes (the authors' code: 3 and 100).
    ``cut="metis"``: METIS on the same bipartite graph (:func:`cclust.graph.partition_graph`),
    every microcluster weighing its number of objects and every cluster 1, so the parts are
    balanced in objects as HBGF's are; not in the paper, and measured far worse on the
    authors' ensembles (true-k NMI 0.54 against Tcut's 0.62 on segment, 0.18 against 0.81 on
    optdigits): kept for comparison.

    Missing labels, K and T, isolated microclusters and the memory budget: as in :func:`pta`.
    With more than ``sum K_i`` clusters asked for, Tcut uses all ``sum K_i`` eigenvectors.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        At least two partitions; missing labels (-1) are allowed.
    n_clusters : int
        K, in [2, number of microclusters].
    cut : {"tcut", "metis"}, default="tcut"
    elite_neighbors, trajectory_length : int, default=None
        K and T (see :func:`pta`).
    pts_method : {"spectral", "powers"}, default="spectral"
        How PTS is computed (see :func:`pta`).
    n_init, max_iter : int, default=3, 100
        The transfer cut's k-means starts and passes per start.
    ufactor : int, default=None
        METIS balance tolerance (``cut="metis"`` only; see :func:`cclust.graph.partition_graph`).
    max_bytes : int, default=None
        Memory budget of the dense M x M matrices.
    random_state : int, Generator or None
        Seeds the k-means starts (Tcut) or METIS.

    Returns
    -------
    ConsensusResult
        ``objective``: the k-means sum of squares in the Tcut embedding, or METIS's edge cut;
        ``extras`` as :func:`pta`'s (without the linkage), plus ``cut`` and, for at most 200
        microclusters, ``mcbg`` (the M x sum K_i edge weights of eq. 17).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.trajectories import ptgp
    >>> labels = np.array([[0, 0], [0, 0], [0, 1], [0, 2], [1, 3], [1, 3], [1, 4], [1, 5]])
    >>> ptgp(labels, 2, random_state=0).labels.tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """
    from cclust.validation import check_random_state

    if cut not in CUTS:
        raise ValidationError(f"cut must be one of {list(CUTS)}, got {cut!r}.")
    elite_neighbors, trajectory_length = _check_common(elite_neighbors, trajectory_length)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    ufactor = check_int(ufactor, "ufactor", low=1, high=100_000, allow_none=True)
    rng = check_random_state(random_state)
    walk, n_clusters, m, keep = _walk(ensemble, n_clusters, elite_neighbors, trajectory_length,
                                      max_bytes, "PTGP", pts_method)
    member = _one_hot(walk["labels"], walk["offsets"])        # microcluster x cluster
    per_cluster = np.asarray(member.sum(axis=0)).reshape(-1)   # |C_j| in microclusters
    mcbg = np.asarray((member.T @ walk["pts"]).T) / np.where(per_cluster > 0, per_cluster, 1.0)[None, :]
    if not keep:
        walk["pts"] = None
    if cut == "tcut":
        with blas_team(m):
            spectral = tcut(mcbg, n_clusters, random_state=rng, n_init=n_init, max_iter=max_iter)
        micro, objective = spectral.labels, spectral.objective
        objective_name = "k-means sum of squares in the transfer-cut embedding (lower is better)"
        details = {"eigenvalues": spectral.eigenvalues, "n_moved": spectral.n_moved}
    else:
        n_c = mcbg.shape[1]
        W = sp.bmat([[None, sp.csr_matrix(mcbg)], [sp.csr_matrix(mcbg.T), None]], format="csr")
        vertex_weights = np.concatenate([walk["sizes"], np.ones(n_c, dtype=np.int64)])
        parts, objective = partition_graph(W, n_clusters, random_state=rng, ufactor=ufactor, symmetric=True,
                                           vertex_weights=vertex_weights)
        micro, moved = parts[:m], 0
        if has_empty_part(micro, n_clusters):
            micro, moved = honour_n_clusters(micro, bipartite_affinity(sp.csr_matrix(mcbg), parts[m:], n_clusters),
                                             n_clusters)
        objective_name = "METIS edge cut of the microcluster-cluster graph"
        details = {"n_moved": moved, "ufactor": ufactor}
    extras = _extras(walk, keep)
    extras.update(cut=cut, **details)
    if keep:
        extras["mcbg"] = mcbg
    return ConsensusResult.from_labels(micro[walk["inverse"]], objective=objective, objective_name=objective_name,
                                       method="ptgp", extras=extras)
