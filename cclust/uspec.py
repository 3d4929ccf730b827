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
import numpy as np

from cclust._spectral import (DEFAULT_K_RANGE, DEFAULT_REPRESENTATIVES, NEIGHBORHOOD_FACTOR, affinities,
                              affinity_rows, check_ensemble, check_sizes, chunk_rows, column_rank, default_k_range,
                              default_representatives, hybrid_representatives, k_smallest, nearest_in_index,
                              representative_index, squared_distances)
from cclust.errors import ValidationError
from cclust.graph import one_blas_thread, tcut
from cclust.validation import check_array_2d, check_int, check_n_jobs, check_random_state, renamed_threads

__all__ = ["uspec", "uspec_ensemble", "uspec_graph", "hybrid_representatives",
           "approximate_nearest_representatives", "UspecGraph", "default_representatives", "default_k_range",
           "DEFAULT_REPRESENTATIVES", "DEFAULT_K_RANGE"]


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



@renamed_threads
def approximate_nearest_representatives(X, representatives, n_neighbors, random_state=None, *,
                                        neighborhood_factor=NEIGHBORHOOD_FACTOR, n_jobs=None):
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
    return nearest_in_index(X, index, n_neighbors, n_threads=n_jobs)


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
    step = chunk_rows(z1, d)
    with one_blas_thread():
        for start in range(0, n, step):
            region[start:start + step] = squared_distances(_rows(X, start, start + step), centres).argmin(axis=1)
        nearest = np.empty(n, dtype=np.int64)
        for j, rows in _groups(region, z1):
            inside = members[j]
            for part in _pieces(rows, chunk_rows(inside.shape[0], d)):
                nearest[part] = inside[squared_distances(X[part], R[inside]).argmin(axis=1)]
        del region
        neighbors = np.empty((n, k), dtype=np.int64)
        for l, rows in _groups(nearest, p):
            candidates = neighborhood[l]
            for part in _pieces(rows, chunk_rows(width, d)):
                pick = k_smallest(squared_distances(X[part], R[candidates]), k)
                neighbors[part] = candidates[pick]
    distances = np.empty((n, k), dtype=np.float64)
    step = chunk_rows(k, d)
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



def _graph(X, p, k, rng, n_threads=1):
    with one_blas_thread():  # OpenBLAS's thread team slows the small products on a loaded machine
        R = hybrid_representatives(X, p, rng, n_jobs=n_threads)
    k = min(k, R.shape[0])  # fewer distinct representatives than asked for (duplicate points)
    neighbors, distances = approximate_nearest_representatives(X, R, k, rng, n_jobs=n_threads)
    sigma = float(distances.mean())
    columns, rank = column_rank(np.bincount(neighbors.reshape(-1), minlength=R.shape[0]))
    B = affinity_rows(neighbors, affinities(distances, sigma), rank, columns.shape[0])
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
    p, k = check_sizes(X, None, n_representatives, n_neighbors)
    return _graph(X, p, k, check_random_state(random_state))


def _labels(X, n_clusters, p, k, rng, n_init, max_iter, n_threads):
    graph = _graph(X, p, k, rng, n_threads)
    n_columns = graph.affinity.shape[1]
    if n_clusters > n_columns:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of distinct representatives found "
            f"({n_columns}; X has few distinct points): pass n_clusters <= {n_columns}.")
    return tcut(graph.affinity, n_clusters, random_state=rng, n_init=n_init, max_iter=max_iter,
                n_jobs=n_threads).labels


@renamed_threads
def uspec(X, n_clusters, random_state=None, *, n_representatives=None, n_neighbors=5, n_init=3, max_iter=100,
          n_jobs=None):
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
        p; None: the paper's 1000 from n = 10000 on, n / 10 (at least 50) below
        (:func:`default_representatives`). More than n becomes n.
    n_neighbors : int, default=5
        K nearest representatives per object (the paper's default), in [1, p]; with the default
        p on fewer than K objects, K becomes n.
    n_init, max_iter : int, default=3, 100
        k-means runs and Lloyd iterations of the discretisation.
    n_jobs : int, default=None
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
    p, k = check_sizes(X, n_clusters, n_representatives, n_neighbors)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_jobs = check_n_jobs(n_jobs)
    return _labels(X, n_clusters, p, k, check_random_state(random_state), n_init, max_iter, n_jobs)



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
    from cclust.generators import seeded_ensemble

    X, n_clusters, n_partitions, p, k, (low, high), n_init, max_iter = check_ensemble(
        X, n_clusters, n_partitions, k_range, n_representatives, n_neighbors, n_init, max_iter)

    def one_partition(X, rng):
        k_i = int(rng.integers(low, high + 1))
        graph = _graph(X, p, k, rng)
        k_i = min(k_i, graph.affinity.shape[1])  # few distinct points: fewer columns than K_i
        return tcut(graph.affinity, k_i, random_state=rng, n_init=n_init, max_iter=max_iter, n_jobs=1).labels

    return seeded_ensemble(one_partition, X, random_state, n_partitions, n_jobs, verbose=verbose,
                            desc="uspec partitions")
