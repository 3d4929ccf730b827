"""U-SPEC, ultra-scalable spectral clustering (Huang, Wang, Wu, Lai & Kwoh 2020), and its ensemble.

U-SPEC clusters n objects through a bipartite graph between the objects and p representatives
(sec. 3.1 of the paper):

1. **Hybrid representative selection** (sec. 3.1.1, :func:`hybrid_representatives`): p' =
   10 p candidates drawn at random without replacement, k-means on them (random distinct
   candidates as start, at most 10 Lloyd iterations, as the authors' ``litekmeans(..., 'MaxIter',
   10)``), the p centres are the representatives. Below 32 features the k-means is the
   engine's, bit for bit, run by its bounded dense Lloyd (``dense_lloyd_bounded``: most
   objects' costs to the other centres are proved unable to change their assignment and are
   not computed); from 32 on its distances are BLAS products, as in the authors'
   ``litekmeans``, under the engine's update, reseed and stopping rules.
2. **Approximate K nearest representatives** (sec. 3.1.2, Fig. 3,
   :func:`approximate_nearest_representatives`), coarse to fine, never an n x p distance
   matrix: the representatives are grouped into ``z1 = floor(sqrt(p))`` rep-clusters by k-means
   (at most 20 iterations; centre of a rep-cluster = mean of its representatives, eq. 4), and
   each representative's ``K' = 10 K`` nearest representatives are stored. Each object then
   finds its nearest rep-cluster (eq. 3), the nearest representative r_l inside it, and its K
   nearest among r_l and r_l's K' neighbours.
3. **Sparse Gaussian affinity** (eq. 5-6): ``b_ij = exp(-||x_i - r_j||^2 / (2 sigma^2))`` for
   the K listed representatives, sigma the mean of those n K Euclidean distances.
4. **Transfer cut** (sec. 3.1.3, eq. 7-12): :func:`cclust.graph.tcut` on B, the eigenproblem
   on the p x p side, k-means on the n-side embedding.

The per-object search runs in compiled code (``cclust/_ext/src/uspec.cpp``, OpenMP over
objects, each object alone, so the result is the same for any thread count and any split of the
rows): per object about ``(p^(1/2) + p / z + K' + 1) d`` flops and a partial selection of the K
smallest, ties to the lower index. The vectorised NumPy search it replaced (objects grouped by
rep-cluster and by nearest representative, one matrix product per group) is kept as its test
reference (``_nearest_numpy``: the same neighbours on the tested sets). Memory is O(n K) plus
O(p^2) for the representatives' own distances; the time is dominated by O(n p^(1/2) d). The
Dask path (:func:`cclust.dask.uspec_ensemble`) runs the same search per row block against one
:func:`representative_index`.

Choices where the paper is silent, settled by the authors' code (``USPEC.m``, ``USENC.m``):

* p: the paper's 1,000 by default from n = 10,000 on; for smaller data n / 10 (at least 50),
  so that about 10 p candidates remain (with p close to n every object is its own
  representative and the graph is a K-nearest-neighbour graph of the objects, which falls
  into small components: moons of 1,000 points came out at ARI 0.36 with p = n and 1.0 with
  p = 100). A p above n becomes n (the authors' code does the same); p' = min(10 p, n). Representatives
  that coincide (duplicate points, fewer distinct candidates than p) are kept once, so p may
  end below the number asked for; representatives nobody lists among its K nearest (an empty
  column of B) are dropped before the cut.
* a neighbourhood of ``K' + 1`` representatives (r_l itself and its K' = 10 K nearest), capped
  at p.
* ties: among equally distant representatives the lower index wins. When p' = p (p = n in
  particular) the representatives are the candidates in the random order they were drawn in,
  as the authors' code lists them, so an exact tie is broken anew by every clusterer of an
  ensemble. Distances are computed exactly as sums of squared differences, so two distances
  that are equal in decimal but not in binary (0.1 as 4.9 - 4.8 and as 5.0 - 4.9) are not
  ties; the authors' distances by matrix products round such pairs either way.
* affinities that underflow to 0 become the smallest positive double's neighbour ``eps``
  (2.2e-16), as the authors' ``Gsdx(Gsdx==0) = eps``; if every listed distance is 0 (all
  points identical) sigma is 0 and every affinity is 1.
* the k-means discretisation of the transfer cut: 3 runs of at most 100 iterations for one
  clusterer (``n_init``, ``max_iter``); inside the ensemble 1 run of at most 5 iterations, as
  the authors' U-SENC generation (``tcutKmIters = 5``, ``tcutKmRps = 1``), for diversity.
* the ensemble's K_i: uniform in ``k_range`` (eq. 14), the paper's [20, 60] by default, capped
  at a third of n and at p for small data.
"""
import math

import numpy as np
import scipy.sparse as sp

from cclust.errors import ValidationError
from cclust.graph import one_blas_thread, tcut
from cclust._engine import dense_lloyd, random_seeds, useful_threads
from cclust.validation import check_array_2d, check_int, check_n_threads, check_random_state, require_memory

__all__ = ["uspec", "uspec_ensemble", "uspec_graph", "hybrid_representatives",
           "approximate_nearest_representatives", "UspecGraph", "default_representatives", "default_k_range",
           "DEFAULT_REPRESENTATIVES", "DEFAULT_K_RANGE"]

#: p of the paper's experiments (Huang et al. 2020, sec. 4.2).
DEFAULT_REPRESENTATIVES = 1000
#: K_i range of the U-SENC base clusterers (Huang et al. 2020, sec. 4.2).
DEFAULT_K_RANGE = (20, 60)
#: p' / p of the hybrid selection (sec. 3.1.1).
CANDIDATE_FACTOR = 10
#: K' / K, the candidate neighbourhood of a representative (sec. 3.1.2).
NEIGHBORHOOD_FACTOR = 10
_SELECTION_ITER = 10
#: From this many features on, the hybrid selection's k-means assigns by BLAS products
#: (:func:`_kmeans_blas`); below, by the engine's bounded Lloyd (see docs/benchmarks.md).
_BLAS_MIN_FEATURES = 32
_REP_CLUSTER_ITER = 20
#: Elements of a chunk's largest temporary (rows x candidates x features), about 32 MiB.
_CHUNK_ELEMENTS = 1 << 22


class UspecGraph:
    """The bipartite graph of U-SPEC: ``affinity`` (CSR, n x p_used), the ``representatives``
    (p_used x d, the columns' points), each object's K nearest representatives ``neighbors``
    (n x K, column indices into the representatives before empty columns were dropped) with
    their Euclidean ``distances``, the kernel width ``sigma`` and ``columns`` (the
    representatives kept as columns, indices into the full set)."""

    __slots__ = ("affinity", "representatives", "neighbors", "distances", "sigma", "columns")

    def __init__(self, affinity, representatives, neighbors, distances, sigma, columns):
        self.affinity, self.representatives = affinity, representatives
        self.neighbors, self.distances, self.sigma, self.columns = neighbors, distances, sigma, columns


def _kmeans_blas(Y, k, rng, max_iter, n_threads=1):
    """Labels and centres of the k-means run of :func:`_kmeans` (the same random distinct rows
    as start, the same draws from ``rng``) with the assignment step by BLAS products
    (``cclust.dask._BlasDenseBlocks``: the engine's centre sums, empty-cluster reseed and
    stopping rule; distances as ||x||^2 + ||c||^2 - 2 x.c, lowest index among the minima). The
    same for any ``n_threads`` and any BLAS thread count."""
    from cclust.dask import _BlasDenseBlocks

    labels, centres, _ = _BlasDenseBlocks(Y, n_threads).run(random_seeds(rng, Y.shape[0], k), k, max_iter)
    return labels, centres


def _kmeans(Y, k, rng, max_iter, n_threads=1):
    """Labels and centres of one k-means run from k random distinct rows, as the authors'
    ``litekmeans`` starts: bit for bit the generators' run on the engine's Lloyd driver
    (``cclust.generators._kmeans_labels`` with ``init="random"``, ``tol=0``; the same draws from
    ``rng``), computed by the engine's bounded dense Lloyd (``dense_lloyd_bounded`` in
    ``kmeans.hpp``: the bounds of Hamerly 2010 with a rounding slack skip the costs that provably cannot
    change an assignment, ties included)."""
    run = dense_lloyd(Y, random_seeds(rng, Y.shape[0], k), max_iter, n_threads)
    return run.labels, run.dense_centers


def _distinct_rows(R):
    """The distinct rows of R in order of first appearance."""
    _, first = np.unique(R, axis=0, return_index=True)
    return R[np.sort(first)]


def _squared_distances(A, B):
    """||a - b||^2 for every row pair, by one product (clipped at 0)."""
    D = (A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :]
    D -= 2.0 * (A @ B.T)
    np.maximum(D, 0.0, out=D)
    return D


def hybrid_representatives(X, n_representatives, random_state=None, *, candidate_factor=CANDIDATE_FACTOR,
                           max_iter=_SELECTION_ITER, n_threads=1):
    """Hybrid representative selection (Huang et al. 2020, sec. 3.1.1).

    ``min(candidate_factor p, n)`` candidates drawn uniformly without replacement, then k-means
    with p clusters on them (random distinct candidates as start, at most ``max_iter`` Lloyd
    iterations); the centres, each distinct one once, are the representatives. ``p > n``
    becomes n. When p' = p (p = n in particular) the candidates themselves are the
    representatives, in the random order in which they were drawn (each distinct point once, at
    its first draw), so that ties between equally distant representatives, which go to the lower
    index, are broken at random. ``n_threads`` only changes the speed of the k-means (its
    results do not depend on it).

    Route of the k-means. The paper's hybrid selection is a k-means of p centres on the p'
    candidates, and the authors' code (``litekmeans``) computes its distances by BLAS matrix
    products. From ``d >= 32`` features (``_BLAS_MIN_FEATURES``) this k-means assigns by
    BLAS products too (:func:`_kmeans_blas`: squared distances as ||x||^2 + ||c||^2 - 2 x.c
    in row blocks on one BLAS thread, lowest index among the minima, near ties within the
    products' rounding decided on exact costs) under the engine's centre update, empty-cluster
    reseed and stopping rule; on MNIST's test part (p = 1,000, p' = 10,000, d = 784) that took
    the selection from 14.0 s to 3.8 s CPU, with the same representatives (docs/benchmarks.md).
    Below 32 features it is the engine's bounded Lloyd (``dense_lloyd_bounded``, Hamerly 2010),
    bit for bit the generators' k-means; there the bounds skip most costs and the products gain
    at most about 2x on a stage that takes under half a second.

    Returns
    -------
    ndarray of shape (p_used, n_features), p_used <= min(p, n)
    """
    rng = check_random_state(random_state)
    n = X.shape[0]
    p = min(int(n_representatives), n)
    m = min(int(candidate_factor) * p, n)
    drawn = rng.choice(n, size=m, replace=False)
    if m == p:
        # The candidates are the representatives, kept in the order drawn: ties between equally
        # distant representatives go to the lower index, so this random order breaks them anew in
        # every clusterer of an ensemble, as the authors' randomly ordered candidates do.
        return _distinct_rows(X[drawn])
    candidates = X[np.sort(drawn)]
    run = _kmeans_blas if X.shape[1] >= _BLAS_MIN_FEATURES else _kmeans
    _, centres = run(np.ascontiguousarray(candidates, dtype=np.float64), p, rng, max_iter, n_threads)
    return _distinct_rows(centres[np.isfinite(centres).all(axis=1)])


def _chunk_rows(width, d):
    return max(256, _CHUNK_ELEMENTS // max(1, width * max(1, d)))


class RepresentativeIndex:
    """The representatives' side of the coarse-to-fine search (Huang et al. 2020, sec. 3.1.2),
    built once per representative set and shared by every row block: the representatives
    ``R`` (p x d), each one's candidate ``neighborhood`` (p x width: itself first, then its
    ``K'`` nearest), the rep-cluster ``centres`` (z x d, eq. 4) and their ``members``
    (concatenated, ascending within a rep-cluster, rep-cluster c at
    ``members[member_start[c]:member_start[c + 1]]``)."""

    __slots__ = ("R", "neighborhood", "centres", "member_start", "members")

    def __init__(self, R, neighborhood, centres, member_start, members):
        self.R, self.neighborhood, self.centres = R, neighborhood, centres
        self.member_start, self.members = member_start, members


def representative_index(representatives, n_neighbors, random_state=None, *,
                         neighborhood_factor=NEIGHBORHOOD_FACTOR):
    """Pre-steps of the coarse-to-fine search (Huang et al. 2020, sec. 3.1.2): every
    representative's ``K' = neighborhood_factor K`` nearest representatives (``width = min(p,
    K' + 1)``, itself first), and ``floor(sqrt(p))`` rep-clusters by k-means (at most 20
    iterations, empty ones dropped, centre = mean of the members, eq. 4). O(p^2 d) time and
    O(p^2) memory; draws from ``random_state`` for the rep-clusters' k-means only.

    Returns
    -------
    RepresentativeIndex
    """
    rng = check_random_state(random_state)
    R = np.ascontiguousarray(representatives, dtype=np.float64)
    p, d = R.shape
    width = min(p, neighborhood_factor * int(n_neighbors) + 1)
    rep_distances = _squared_distances(R, R)
    np.fill_diagonal(rep_distances, -1.0)  # itself first, whatever the rounding
    neighborhood = np.ascontiguousarray(_k_smallest(rep_distances, width))
    del rep_distances
    z1 = max(1, math.isqrt(p))
    with one_blas_thread():
        rep_cluster = np.zeros(p, dtype=np.int64) if z1 == 1 else _kmeans(R, z1, rng, _REP_CLUSTER_ITER)[0]
    used, rep_cluster = np.unique(rep_cluster, return_inverse=True)
    rep_cluster = rep_cluster.reshape(-1)
    z1 = used.shape[0]
    sizes = np.bincount(rep_cluster, minlength=z1)
    centres = np.zeros((z1, d))
    np.add.at(centres, rep_cluster, R)
    centres /= sizes[:, None]
    members = np.argsort(rep_cluster, kind="stable").astype(np.int64)
    member_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return RepresentativeIndex(R, neighborhood, centres, member_start, members)


def nearest_in_index(X, index, n_neighbors, *, n_threads=None):
    """Each row's approximate K nearest representatives through a :class:`RepresentativeIndex`,
    compiled (``cclust._ext._uspec``), OpenMP over objects: per object the nearest rep-cluster
    centre (eq. 3), the nearest representative r_l among its members, the K nearest among r_l's
    candidate neighbourhood, by partial selection. Distances are sums of squared differences in
    feature order; ties go to the lower centre, the earlier member and the lower representative
    index. Every object is computed alone, so the result is the same for any thread count and
    any split of X into row blocks. O(n (p^(1/2) + K') d) time, O(n K) memory.

    Returns ``(neighbors, distances)`` as :func:`approximate_nearest_representatives`.
    """
    from cclust._ext import _uspec

    X = np.ascontiguousarray(X, dtype=np.float64)
    n_threads = useful_threads(X.shape[0], check_n_threads(n_threads))
    return _uspec.nearest_representatives(X, index.R, index.centres, index.member_start, index.members,
                                          index.neighborhood, int(n_neighbors), n_threads)


def approximate_nearest_representatives(X, representatives, n_neighbors, random_state=None, *,
                                        neighborhood_factor=NEIGHBORHOOD_FACTOR, n_threads=None):
    """Each object's approximate K nearest representatives, coarse to fine (Huang et al. 2020,
    sec. 3.1.2, Fig. 3).

    Pre-steps (:func:`representative_index`): the p representatives are grouped into
    ``floor(sqrt(p))`` rep-clusters by k-means (at most 20 iterations; empty ones dropped; each
    centre the mean of its representatives, eq. 4), and every representative's ``K' =
    neighborhood_factor K`` nearest representatives are listed. Per object
    (:func:`nearest_in_index`, compiled): the nearest rep-cluster centre (eq. 3), the nearest
    representative r_l in that rep-cluster, then the K nearest among r_l and its K' neighbours.
    O(n (p^(1/2) + K') d) time and O(n K) memory, never an n x p matrix.

    Returns
    -------
    neighbors : ndarray of shape (n_samples, K), int64
        Representative indices, nearest first.
    distances : ndarray of shape (n_samples, K), float64
        Their Euclidean distances.
    """
    index = representative_index(representatives, n_neighbors, random_state, neighborhood_factor=neighborhood_factor)
    return nearest_in_index(X, index, n_neighbors, n_threads=n_threads)


def _nearest_numpy(X, index, n_neighbors):
    """The vectorised NumPy search of :func:`nearest_in_index` (the compiled path's reference,
    kept for the tests): objects are grouped by rep-cluster, then by nearest representative, so
    that every group's distances are one matrix product ``||x||^2 + ||r||^2 - 2 x.r`` (only
    argmins and rankings are taken from them); the returned distances are recomputed exactly as
    sums of squared differences."""
    R, neighborhood, centres = index.R, index.neighborhood, index.centres
    p, d = R.shape
    k = int(n_neighbors)
    width = neighborhood.shape[1]
    z1 = centres.shape[0]
    members = [index.members[index.member_start[j]:index.member_start[j + 1]] for j in range(z1)]
    n = X.shape[0]
    region = np.empty(n, dtype=np.int64)
    step = _chunk_rows(z1, d)
    with one_blas_thread():
        for start in range(0, n, step):
            region[start:start + step] = _squared_distances(_rows(X, start, start + step), centres).argmin(axis=1)
        nearest = np.empty(n, dtype=np.int64)
        for j, rows in _groups(region, z1):
            inside = members[j]
            for part in _pieces(rows, _chunk_rows(inside.shape[0], d)):
                nearest[part] = inside[_squared_distances(X[part], R[inside]).argmin(axis=1)]
        del region
        neighbors = np.empty((n, k), dtype=np.int64)
        for l, rows in _groups(nearest, p):
            candidates = neighborhood[l]
            for part in _pieces(rows, _chunk_rows(width, d)):
                pick = _k_smallest(_squared_distances(X[part], R[candidates]), k)
                neighbors[part] = candidates[pick]
    distances = np.empty((n, k), dtype=np.float64)
    step = _chunk_rows(k, d)
    for start in range(0, n, step):
        diff = _rows(X, start, start + step)[:, None, :] - R[neighbors[start:start + step]]
        distances[start:start + step] = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    return neighbors, distances


def _rows(X, start, stop):
    return np.ascontiguousarray(X[start:stop], dtype=np.float64)


def _groups(owner, n_owners):
    """(owner, its rows) for every owner that has rows, rows ascending."""
    order = np.argsort(owner, kind="stable")
    cuts = np.searchsorted(owner[order], np.arange(n_owners + 1))
    for j in np.flatnonzero(np.diff(cuts)):
        yield int(j), order[cuts[j]:cuts[j + 1]]


def _pieces(rows, size):
    for start in range(0, rows.shape[0], size):
        yield rows[start:start + size]


def _k_smallest(d2, k):
    """Positions of the k smallest entries of every row of d2, smallest first."""
    if k < d2.shape[1]:
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
    else:
        part = np.broadcast_to(np.arange(d2.shape[1]), d2.shape).copy()
    order = np.argsort(np.take_along_axis(d2, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def _check_sizes(X, n_clusters, n_representatives, n_neighbors, min_clusters=2, memory_rows=None):
    """Validated (X, p_used_max, K) and the refusal of K_neighbors > p or clusters > p; the
    memory guard counts ``memory_rows`` objects (the Dask path: one row block) or all n."""
    n = X.shape[0]
    if n < 2:
        raise ValidationError(f"X must have at least 2 rows to be clustered, got {n}.")
    k = check_int(n_neighbors, "n_neighbors", low=1)
    if n_representatives is None:
        p_used = default_representatives(n)
        k = min(k, p_used)  # fewer objects than n_neighbors: each is joined to all of them
    else:
        p_used = min(check_int(n_representatives, "n_representatives", low=1), n)  # the authors' p > n -> n
    if k > p_used:
        raise ValidationError(
            f"n_neighbors={k} is larger than the number of representatives ({p_used} = min(n_representatives, "
            f"n_samples), X having {n} rows): each object needs n_neighbors representatives; pass n_neighbors "
            f"<= {p_used} or more representatives.")
    if n_clusters is not None and n_clusters > p_used:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of representatives ({p_used} = "
            f"min(n_representatives, n_samples)): the transfer cut needs as many eigenvectors of the "
            f"representatives' graph; pass n_representatives >= {n_clusters}.")
    require_memory((n if memory_rows is None else min(n, memory_rows)) * k * 48 + p_used * p_used * 24, f"U-SPEC's graph of {n} objects and {p_used} representatives",
                   "pass fewer n_representatives or n_neighbors", None)
    return p_used, k


def _affinities(distances, sigma):
    """eq. 5: exp(-d^2 / (2 sigma^2)), an underflow to 0 raised to eps (the authors' code), all
    ones when sigma is 0."""
    if sigma > 0:
        values = np.exp(-(distances * distances) / (2.0 * sigma * sigma))
        values[values == 0] = np.finfo(np.float64).eps
        return values
    return np.ones_like(distances)


def _column_rank(counts):
    """The representatives listed by somebody (``columns``) and every representative's column
    (-1 for an empty one)."""
    columns = np.flatnonzero(counts)
    rank = np.full(counts.shape[0], -1, dtype=np.int64)
    rank[columns] = np.arange(columns.shape[0])
    return columns, rank


def _affinity_rows(neighbors, values, rank, n_columns):
    """The rows of B (CSR) of objects with the given neighbours and affinities."""
    n, k = neighbors.shape
    return sp.csr_matrix((values.reshape(-1), rank[neighbors].reshape(-1), np.arange(0, n * k + 1, k)),
                         shape=(n, n_columns))


def _graph(X, p, k, rng, n_threads=1):
    with one_blas_thread():  # OpenBLAS's thread team slows the small products on a loaded machine
        R = hybrid_representatives(X, p, rng, n_threads=n_threads)
    k = min(k, R.shape[0])  # fewer distinct representatives than asked for (duplicate points)
    neighbors, distances = approximate_nearest_representatives(X, R, k, rng, n_threads=n_threads)
    sigma = float(distances.mean())
    columns, rank = _column_rank(np.bincount(neighbors.reshape(-1), minlength=R.shape[0]))
    B = _affinity_rows(neighbors, _affinities(distances, sigma), rank, columns.shape[0])
    return UspecGraph(B, R[columns], neighbors, distances, sigma, columns)


def uspec_graph(X, *, n_representatives=None, n_neighbors=5, random_state=None):
    """U-SPEC's bipartite graph of objects and representatives (Huang et al. 2020, sec. 3.1.1-3.1.2).

    Hybrid representative selection, approximate K nearest representatives and the sparse
    Gaussian affinity of eq. 5-6 (see the module docstring).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite values.
    n_representatives : int, default=None
        p; None: :func:`default_representatives`. More than n becomes n.
    n_neighbors : int, default=5
        K, the representatives each object is joined to; at most p.
    random_state : int, Generator or None

    Returns
    -------
    UspecGraph
    """
    X = check_array_2d(X, "X")
    p, k = _check_sizes(X, None, n_representatives, n_neighbors)
    return _graph(X, p, k, check_random_state(random_state))


def _labels(X, n_clusters, p, k, rng, n_init, max_iter, n_threads):
    graph = _graph(X, p, k, rng, n_threads)
    n_columns = graph.affinity.shape[1]
    if n_clusters > n_columns:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of distinct representatives found "
            f"({n_columns}; X has few distinct points): pass n_clusters <= {n_columns}.")
    return tcut(graph.affinity, n_clusters, random_state=rng, n_init=n_init, max_iter=max_iter,
                n_threads=n_threads).labels


def uspec(X, n_clusters, random_state=None, *, n_representatives=None, n_neighbors=5, n_init=3, max_iter=100,
          n_threads=None):
    """Ultra-scalable spectral clustering, U-SPEC (Huang, Wang, Wu, Lai & Kwoh 2020, sec. 3.1).

    The bipartite graph of :func:`uspec_graph` (hybrid representatives, approximate K nearest
    representatives, Gaussian affinity) cut into ``n_clusters`` parts by the transfer cut of
    Li, Wu & Chang (2012) (:func:`cclust.graph.tcut`). Time O(n p^(1/2) d + p^3), memory
    O(n K + p^2). ``random_state`` may be given by position, so that ``uspec`` is a clusterer
    function ``f(X, k, random_state)`` for the ``estimator`` generator
    (:func:`cclust.clusterers.estimator`).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite values (NaN or infinity is refused).
    n_clusters : int
        In [2, min(n_representatives, n_samples)].
    random_state : int, Generator or None
    n_representatives : int, default=None
        p; None: the paper's 1,000 from n = 10,000 on, n / 10 (at least 50) below
        (:func:`default_representatives`). More than n becomes n.
    n_neighbors : int, default=5
        K nearest representatives per object (the paper's default), in [1, p]; with the default
        p on fewer than K objects, K becomes n.
    n_init, max_iter : int, default=3, 100
        k-means runs and Lloyd iterations of the discretisation.
    n_threads : int, default=None
        Threads of the k-means passes; the labels do not depend on it.

    Returns
    -------
    labels : ndarray of shape (n_samples,), int64

    Examples
    --------
    >>> from cclust.datasets import make_moons
    >>> from cclust.metrics import ari
    >>> X, y = make_moons(2000, random_state=0)
    >>> ari(uspec(X, 2, random_state=0), y) > 0.95
    True
    """
    X = check_array_2d(X, "X")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, X.shape[0]))
    p, k = _check_sizes(X, n_clusters, n_representatives, n_neighbors)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_threads = check_n_threads(n_threads)
    return _labels(X, n_clusters, p, k, check_random_state(random_state), n_init, max_iter, n_threads)


def default_representatives(n):
    """p when none is given: the paper's 1,000 from n = 10,000 on; below, n / 10 (at least 50,
    at most n), so that the hybrid selection still draws about 10 p candidates."""
    return min(n, max(min(DEFAULT_REPRESENTATIVES, n // CANDIDATE_FACTOR), 50))


def default_k_range(n, p):
    """The paper's K_i range [20, 60], capped at p and at a third of n (at least 2)."""
    cap = max(2, min(p, n // 3))
    low = min(DEFAULT_K_RANGE[0], cap)
    return low, max(low, min(DEFAULT_K_RANGE[1], cap))


def _check_ensemble(X, n_clusters, n_partitions, k_range, n_representatives, n_neighbors, n_init, max_iter,
                    memory_rows=None):
    """The checked arguments of a U-SPEC ensemble (in memory or on Dask row blocks):
    ``(X, n_clusters, n_partitions, p, K, (low, high), n_init, max_iter)``."""
    from cclust.generators import _check_k_range

    X = check_array_2d(X, "X")
    n = X.shape[0]
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, n))
    n_partitions = check_int(n_partitions, "n_partitions", low=1)
    p, k = _check_sizes(X, None, n_representatives, n_neighbors, memory_rows=memory_rows)
    low, high = _check_k_range(k_range, default_k_range(n, p), n)
    if high > p:
        raise ValidationError(
            f"k_range=({low}, {high}) reaches above the number of representatives ({p} = min(n_representatives, "
            f"n_samples)): the transfer cut needs K_i eigenvectors of the representatives' graph; pass "
            f"n_representatives >= {high} or a lower k_range.")
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    return X, n_clusters, n_partitions, p, k, (low, high), n_init, max_iter


def uspec_ensemble(X, n_clusters, *, n_partitions=20, k_range=None, n_representatives=None, n_neighbors=5,
                   n_init=1, max_iter=5, random_state=None, n_jobs=None, verbose=0):
    """An ensemble of U-SPEC clusterers, U-SENC's generation (Huang et al. 2020, sec. 3.2.1).

    Clusterer i draws its own representatives (hybrid selection) and K_i uniformly from
    ``k_range`` (eq. 14) and cuts its graph by the transfer cut with a short k-means (1 run of
    at most 5 iterations, as the authors' code, for diversity). Partition i draws everything
    from the i-th child of the seed, so the ensemble is the same for any ``n_jobs``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        K of the consensus the ensemble is meant for (U-SENC's K_i do not depend on it).
    n_partitions : int, default=20
        m, the paper's default.
    k_range : (int, int), default=None
        Inclusive range of K_i; None: [20, 60] (Huang et al. 2020, sec. 4.2) capped at p and at
        ``n // 3``. The upper end must not exceed ``min(n_representatives, n_samples)``.
    n_representatives, n_neighbors : int, default=None, 5
        p and K of every clusterer (see :func:`uspec`).
    n_init, max_iter : int, default=1, 5
        k-means of each clusterer's discretisation.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Partitions computed in parallel threads; the ensemble is identical for any value.
    verbose : int, default=0
        1 draws a progress bar over the partitions.

    Returns
    -------
    Ensemble of shape (n_samples, n_partitions)

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> uspec_ensemble(X, 3, n_partitions=5, random_state=0).shape
    (150, 5)
    """
    from cclust.generators import _generate

    X, n_clusters, n_partitions, p, k, (low, high), n_init, max_iter = _check_ensemble(
        X, n_clusters, n_partitions, k_range, n_representatives, n_neighbors, n_init, max_iter)

    def one_partition(X, rng):
        k_i = int(rng.integers(low, high + 1))
        graph = _graph(X, p, k, rng)
        k_i = min(k_i, graph.affinity.shape[1])  # few distinct points: fewer columns than K_i
        return tcut(graph.affinity, k_i, random_state=rng, n_init=n_init, max_iter=max_iter, n_threads=1).labels

    return _generate(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                     desc="uspec partitions")
