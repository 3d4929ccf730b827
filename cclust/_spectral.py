"""The pieces of U-SPEC (Huang, Wang, Wu, Lai & Kwoh 2020) that the in-memory path
(:mod:`cclust.uspec`) and the row-block path (:mod:`cclust.dask`) share: the hybrid
representative selection, the representatives' index and the compiled K-nearest search against
it, the Gaussian affinities and the rows of the bipartite graph, and the checks of an ensemble's
arguments. See :mod:`cclust.uspec` for the method and the choices where the paper is silent.
"""
import math

import numpy as np
import scipy.sparse as sp

from cclust._dense_blocks import BlasDenseBlocks
from cclust._engine import dense_lloyd, random_seeds, useful_threads
from cclust.errors import ValidationError
from cclust.graph import one_blas_thread
from cclust.validation import (
    check_array_2d,
    check_int,
    check_k_range,
    check_n_jobs,
    check_random_state,
    renamed_threads,
    require_memory,
)

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
#: (:func:`blas_kmeans`); below, by the engine's bounded Lloyd (see docs/benchmarks.md).
BLAS_MIN_FEATURES = 32
_REP_CLUSTER_ITER = 20
#: Elements of a chunk's largest temporary (rows x candidates x features), about 32 MiB.
_CHUNK_ELEMENTS = 1 << 22


def blas_kmeans(Y, k, rng, max_iter, n_threads=1):
    """Labels and centres of the k-means run of :func:`engine_kmeans` (the same random distinct rows
    as start, the same draws from ``rng``) with the assignment step by BLAS products
    (:class:`cclust._dense_blocks.BlasDenseBlocks`: the engine's centre sums, empty-cluster reseed and
    stopping rule; distances as ||x||^2 + ||c||^2 - 2 x.c, lowest index among the minima). The
    same for any ``n_threads`` and any BLAS thread count."""
    labels, centres, _ = BlasDenseBlocks(Y, n_threads).run(random_seeds(rng, Y.shape[0], k), k, max_iter)
    return labels, centres


def engine_kmeans(Y, k, rng, max_iter, n_threads=1):
    """Labels and centres of one k-means run from k random distinct rows, as the authors'
    ``litekmeans`` starts: bit for bit the generators' run on the engine's Lloyd driver
    (``cclust.generators._kmeans_labels`` with ``init="random"``, ``tol=0``; the same draws from
    ``rng``), computed by the engine's bounded dense Lloyd (``dense_lloyd_bounded`` in
    ``kmeans.hpp``: the bounds of Hamerly 2010 with a rounding slack skip the costs that provably cannot
    change an assignment, ties included)."""
    run = dense_lloyd(Y, random_seeds(rng, Y.shape[0], k), max_iter, n_threads)
    return run.labels, run.dense_centers


def distinct_rows(R):
    """The distinct rows of R in order of first appearance."""
    _, first = np.unique(R, axis=0, return_index=True)
    return R[np.sort(first)]


def squared_distances(A, B):
    """||a - b||^2 for every row pair, by one product (clipped at 0)."""
    D = (A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :]
    D -= 2.0 * (A @ B.T)
    np.maximum(D, 0.0, out=D)
    return D


@renamed_threads
def hybrid_representatives(X, n_representatives, random_state=None, *, candidate_factor=CANDIDATE_FACTOR,
                           max_iter=_SELECTION_ITER, n_jobs=1):
    """Hybrid representative selection (Huang et al. 2020, sec. 3.1.1).

    ``min(candidate_factor p, n)`` candidates drawn uniformly without replacement, then k-means
    with p clusters on them (random distinct candidates as start, at most ``max_iter`` Lloyd
    iterations); the centres, each distinct one once, are the representatives. ``p > n``
    becomes n. When p' = p (p = n in particular) the candidates themselves are the
    representatives, in the random order in which they were drawn (each distinct point once, at
    its first draw), so that ties between equally distant representatives, which go to the lower
    index, are broken at random. ``n_jobs`` only changes the speed of the k-means (its
    results do not depend on it).

    Route of the k-means. The paper's hybrid selection is a k-means of p centres on the p'
    candidates, and the authors' code (``litekmeans``) computes its distances by BLAS matrix
    products. From ``d >= 32`` features (``BLAS_MIN_FEATURES``) this k-means assigns by
    BLAS products too (:func:`blas_kmeans`: squared distances as ||x||^2 + ||c||^2 - 2 x.c
    in row blocks on one BLAS thread, lowest index among the minima, near ties within the
    products' rounding decided on exact costs) under the engine's centre update, empty-cluster
    reseed and stopping rule; on MNIST's test part (p = 1000, p' = 10000, d = 784) that took
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
        return distinct_rows(X[drawn])
    candidates = X[np.sort(drawn)]
    run = blas_kmeans if X.shape[1] >= BLAS_MIN_FEATURES else engine_kmeans
    _, centres = run(np.ascontiguousarray(candidates, dtype=np.float64), p, rng, max_iter, n_jobs)
    return distinct_rows(centres[np.isfinite(centres).all(axis=1)])


def chunk_rows(width, d):
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
    rep_distances = squared_distances(R, R)
    np.fill_diagonal(rep_distances, -1.0)  # itself first, whatever the rounding
    neighborhood = np.ascontiguousarray(k_smallest(rep_distances, width))
    del rep_distances
    z1 = max(1, math.isqrt(p))
    with one_blas_thread():
        rep_cluster = np.zeros(p, dtype=np.int64) if z1 == 1 else engine_kmeans(R, z1, rng, _REP_CLUSTER_ITER)[0]
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
    n_threads = useful_threads(X.shape[0], check_n_jobs(n_threads))
    return _uspec.nearest_representatives(X, index.R, index.centres, index.member_start, index.members,
                                          index.neighborhood, int(n_neighbors), n_threads)



def k_smallest(d2, k):
    """Positions of the k smallest entries of every row of d2, smallest first."""
    if k < d2.shape[1]:
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
    else:
        part = np.broadcast_to(np.arange(d2.shape[1]), d2.shape).copy()
    order = np.argsort(np.take_along_axis(d2, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def check_sizes(X, n_clusters, n_representatives, n_neighbors, min_clusters=2, memory_rows=None):
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


def affinities(distances, sigma):
    """eq. 5: exp(-d^2 / (2 sigma^2)), an underflow to 0 raised to eps (the authors' code), all
    ones when sigma is 0."""
    if sigma > 0:
        values = np.exp(-(distances * distances) / (2.0 * sigma * sigma))
        values[values == 0] = np.finfo(np.float64).eps
        return values
    return np.ones_like(distances)


def column_rank(counts):
    """The representatives listed by somebody (``columns``) and every representative's column
    (-1 for an empty one)."""
    columns = np.flatnonzero(counts)
    rank = np.full(counts.shape[0], -1, dtype=np.int64)
    rank[columns] = np.arange(columns.shape[0])
    return columns, rank


def affinity_rows(neighbors, values, rank, n_columns):
    """The rows of B (CSR) of objects with the given neighbours and affinities."""
    n, k = neighbors.shape
    return sp.csr_matrix((values.reshape(-1), rank[neighbors].reshape(-1), np.arange(0, n * k + 1, k)),
                         shape=(n, n_columns))


def default_representatives(n):
    """p when none is given: the paper's 1000 from n = 10000 on; below, n / 10 (at least 50,
    at most n), so that the hybrid selection still draws about 10 p candidates."""
    return min(n, max(min(DEFAULT_REPRESENTATIVES, n // CANDIDATE_FACTOR), 50))


def default_k_range(n, p):
    """The paper's K_i range [20, 60], capped at p and at a third of n (at least 2)."""
    cap = max(2, min(p, n // 3))
    low = min(DEFAULT_K_RANGE[0], cap)
    return low, max(low, min(DEFAULT_K_RANGE[1], cap))


def check_ensemble(X, n_clusters, n_partitions, k_range, n_representatives, n_neighbors, n_init, max_iter,
                    memory_rows=None):
    """The checked arguments of a U-SPEC ensemble (in memory or on Dask row blocks):
    ``(X, n_clusters, n_partitions, p, K, (low, high), n_init, max_iter)``."""
    X = check_array_2d(X, "X")
    n = X.shape[0]
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, n))
    n_partitions = check_int(n_partitions, "n_partitions", low=1)
    p, k = check_sizes(X, None, n_representatives, n_neighbors, memory_rows=memory_rows)
    low, high = check_k_range(k_range, default_k_range(n, p), n)
    if high > p:
        raise ValidationError(
            f"k_range=({low}, {high}) reaches above the number of representatives ({p} = min(n_representatives, "
            f"n_samples)): the transfer cut needs K_i eigenvectors of the representatives' graph; pass "
            f"n_representatives >= {high} or a lower k_range.")
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    return X, n_clusters, n_partitions, p, k, (low, high), n_init, max_iter


