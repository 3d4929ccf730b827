"""Multi-resolution graph ensembles: Leiden and Louvain partitions of a k-nearest-neighbour graph.

Both generators need ``leidenalg`` and ``igraph`` (``pip install 'cclust[graph]'``), imported
the first time a partition is asked for. Every partition is one community-detection run on the
same weighted graph, with a resolution taken in turn from a grid and its own seed, so the
ensemble spans coarse to fine partitions (as scanpy users do by hand when they try several
``resolution`` values of ``sc.tl.leiden``; Traag, Waltman & van Eck 2019).

**The graph.** An AnnData passed to :func:`cclust.generate` that holds
``obsp["connectivities"]`` (what ``sc.pp.neighbors`` writes) gives that graph, unless
``graph="knn"`` asks for one built from the features. Otherwise the graph is built here from
the exact ``n_neighbors`` nearest neighbours in Euclidean distance (the search of
:func:`cclust.predict`'s ``"knn"`` rule), weighted as PhenoGraph weights it (Levine et al.
2015): objects i and j are joined when one is among the other's neighbours, with the Jaccard
index of their neighbourhoods::

    w_ij = |N(i) & N(j)| / |N(i) | N(j)|

where N(i) is i with its ``n_neighbors`` nearest other objects. Counting i in N(i) makes every
edge's weight positive (i and j share at least j, or i), so no neighbour is silently dropped.

Choices where the papers are silent:

* The weights are PhenoGraph's Jaccard weights, not the fuzzy union of UMAP's membership
  strengths that ``sc.pp.neighbors`` computes (McInnes, Healy & Melville 2018): the Jaccard
  weight has no fitted bandwidth, so it is exactly reproducible and easy to check by hand; pass
  scanpy's graph (an AnnData's ``obsp``, or ``graph=``) to cluster that one.
* Partition j uses ``resolutions[j % len(resolutions)]`` and a seed drawn from the j-th child of
  the one ``numpy.random.SeedSequence`` every generator uses, so the ensemble is the same for
  any ``n_jobs``, and :attr:`cclust.Ensemble.provenance` records each partition's resolution and
  seed, enough to run it again with leidenalg or igraph directly.
* Louvain is igraph's ``community_multilevel``, whose only source of randomness is igraph's
  process-wide random number generator (a Python ``random`` object). Each Louvain partition
  installs its own ``random.Random(seed)`` there, runs, and installs igraph's default (the
  ``random`` module) again, under a lock: Louvain partitions therefore run one at a time
  whatever ``n_jobs`` is. igraph cannot report the generator it had, so a generator of your own
  given to ``igraph.set_random_number_generator`` must be given again after ``louvain``; igraph
  code running in other threads meanwhile would draw from the seeded generator.
"""
from __future__ import annotations

import random
import threading

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.errors import MissingDependencyError, ValidationError
from cclust.validation import (RandomStateLike, check_array_2d, check_float, check_int, renamed_threads,
                               spawn_seed_sequences)

if TYPE_CHECKING:
    from cclust.ensemble import Ensemble

#: What a user who lacks the graph libraries is told.
INSTALL_HINT = "pip install 'cclust[graph]'"

#: The resolution grid when none is given: from coarse to fine around leidenalg's and scanpy's 1.0.
DEFAULT_RESOLUTIONS = (0.25, 0.5, 1.0, 1.5, 2.0)

#: Neighbours per object of the graph built here when none is given (scanpy's default), at most n - 1.
DEFAULT_NEIGHBORS = 15

#: Seeds handed to leidenalg and igraph are drawn below this (a C int on every platform).
_SEED_BOUND = 2**31 - 1

_IGRAPH_RNG_LOCK = threading.Lock()


def _libraries(generator):
    try:
        import igraph
        import leidenalg
    except ImportError:
        raise MissingDependencyError(f"the {generator} generator needs leidenalg and igraph, which cannot be "
                                     f"imported: {INSTALL_HINT}.") from None
    return igraph, leidenalg


@renamed_threads
def knn_graph(X: npt.NDArray[np.float64], n_neighbors: int, n_jobs: int | None = 1) -> Any:
    """The symmetric Jaccard-weighted k-nearest-neighbour graph of the rows of X (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), C-contiguous finite float64
    n_neighbors : int in [1, n_samples - 1]
    n_jobs : int, default=1

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric, zero diagonal, weights in (0, 1].
    """
    from cclust._assign import nearest_neighbours

    n = X.shape[0]
    # n_neighbors + 1 nearest rows hold the row itself unless it has duplicates of lower index;
    # keep the first n_neighbors that are not the row
    near = nearest_neighbours(X, X, n_neighbors + 1, n_jobs)
    rows = np.arange(n)
    not_self = near != rows[:, None]
    keep = not_self & (np.cumsum(not_self, axis=1) <= n_neighbors)
    neighbours = near[keep].reshape(n, n_neighbors)
    ones = np.ones(n * n_neighbors)
    adjacency = sp.csr_matrix((ones, (np.repeat(rows, n_neighbors), neighbours.ravel())), shape=(n, n))
    edges = ((adjacency + adjacency.T) > 0).astype(np.float64).tocsr()
    # N(i): i and its neighbours; shared members of two neighbourhoods by one sparse product
    members = (adjacency + sp.identity(n, format="csr")).tocsr()
    shared = edges.multiply(members @ members.T).tocsr()
    shared.eliminate_zeros()
    size = n_neighbors + 1
    shared.data = shared.data / (2 * size - shared.data)
    shared.sort_indices()
    return shared


def check_graph(graph: Any, n: int, name: str = "graph") -> Any:
    """A given graph as a symmetric CSR float64 matrix of shape (n, n) with finite weights >= 0."""
    if sp.issparse(graph):
        matrix = sp.csr_matrix(graph, dtype=np.float64, copy=True)
    else:
        matrix = sp.csr_matrix(check_array_2d(graph, name))
    if matrix.shape != (n, n):
        raise ValidationError(f"{name} must be a square matrix of shape ({n}, {n}), one row and column per object of "
                              f"X, got shape {matrix.shape}; pass the connectivities computed on these {n} objects.")
    matrix.sum_duplicates()
    if not np.all(np.isfinite(matrix.data)) or (matrix.data < 0).any():
        raise ValidationError(f"{name} must hold finite weights >= 0; it has NaN, infinite or negative entries.")
    if (matrix != matrix.T).nnz:
        raise ValidationError(f"{name} must be symmetric (an undirected graph); pass (G + G.T) / 2 to symmetrise it.")
    matrix.eliminate_zeros()
    matrix.sort_indices()
    return matrix


def igraph_from_adjacency(matrix: Any) -> Any:
    """The undirected igraph Graph of a symmetric sparse matrix: one edge per stored entry of its
    upper triangle (diagonal included), in row-major order, weights in the edge attribute
    ``"weight"``."""
    igraph, _ = _libraries("graph")
    upper = sp.triu(matrix, format="csr")
    upper.sort_indices()
    sources = np.repeat(np.arange(upper.shape[0]), np.diff(upper.indptr))
    graph = igraph.Graph(n=upper.shape[0], edges=np.column_stack((sources, upper.indices)).tolist(), directed=False)
    graph.es["weight"] = upper.data.tolist()
    return graph


def _check_resolutions(resolutions):
    if resolutions is None:
        return DEFAULT_RESOLUTIONS
    values = [resolutions] if np.isscalar(resolutions) else list(np.asarray(resolutions, dtype=object).ravel())
    if not values:
        raise ValidationError("resolutions must hold at least one resolution > 0, got an empty sequence.")
    return tuple(check_float(v, "resolutions", low=0, low_open=True) for v in values)


def _prepare(X, n_clusters, graph, n_neighbors, resolutions, n_partitions, n_jobs, generator):
    """Validated (matrix, resolutions, n_partitions): the graph the partitions are cut from."""
    from cclust.validation import check_n_jobs

    X = check_array_2d(X, "X")
    n = X.shape[0]
    if n < 2:
        raise ValidationError(f"X must have at least 2 rows to be clustered, got {n}.")
    if n_clusters is not None:  # not used (the resolution sets K), but never a wrong value silently
        check_int(n_clusters, "n_clusters", low=2, high=n)
    if isinstance(graph, str) and graph != "knn":
        raise ValidationError(f"graph must be None, 'knn' or an (n, n) sparse matrix, got {graph!r}.")
    resolutions = _check_resolutions(resolutions)
    n_partitions = check_int(n_partitions, "n_partitions", low=1)
    n_threads = check_n_jobs(n_jobs, "n_jobs")
    if n_neighbors is None:
        n_neighbors = min(DEFAULT_NEIGHBORS, n - 1)
    n_neighbors = check_int(n_neighbors, "n_neighbors", low=1)
    if n_neighbors >= n:
        raise ValidationError(f"n_neighbors must be less than the {n} objects (each has at most {n - 1} other "
                              f"objects as neighbours), got {n_neighbors}; give n_neighbors <= {n - 1}.")
    _libraries(generator)
    if graph is None or isinstance(graph, str):
        matrix = knn_graph(np.ascontiguousarray(X, dtype=np.float64), n_neighbors, n_threads)
    else:
        matrix = check_graph(graph, n)
    return matrix, resolutions, n_partitions


def _ensemble(run, name, matrix, resolutions, n_partitions, random_state, n_jobs, verbose):
    """Ensemble of ``run(graph, resolution, seed)`` for partitions 0..n_partitions-1, collected in order."""
    from concurrent.futures import ThreadPoolExecutor

    from cclust._progress import progress
    from cclust.ensemble import Ensemble
    from cclust.validation import check_n_jobs

    graph = igraph_from_adjacency(matrix)
    jobs = [(resolutions[j % len(resolutions)], int(np.random.default_rng(seq).integers(0, _SEED_BOUND)))
            for j, seq in enumerate(spawn_seed_sequences(random_state, n_partitions))]
    workers = min(check_n_jobs(n_jobs, "n_jobs"), n_partitions)
    with progress(total=n_partitions, desc=f"{name} partitions", verbose=verbose) as bar:
        def one_partition(job):
            labels = np.asarray(run(graph, *job), dtype=np.int64)
            bar.update(1)
            return labels

        if workers <= 1:
            columns = [one_partition(job) for job in jobs]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                columns = list(pool.map(one_partition, jobs))
    provenance = [f"{name} resolution={resolution:g} seed={seed}" for resolution, seed in jobs]
    return Ensemble(np.column_stack(columns), provenance=provenance)


def leiden(X: npt.ArrayLike, n_clusters: int | None = None, *, n_partitions: int = 100,
           resolutions: float | Sequence[float] | None = None, n_neighbors: int | None = None, graph: Any = None,
           n_iterations: int = 2, random_state: RandomStateLike = None, n_jobs: int | None = None,
           verbose: int = 0) -> Ensemble:
    """Leiden partitions of a kNN graph over a grid of resolutions and seeds (Traag, Waltman & van Eck 2019).

    Each partition is one ``leidenalg.find_partition`` run with ``RBConfigurationVertexPartition``
    (modularity with a resolution parameter; Reichardt & Bornholdt 2006) on the weighted graph,
    at resolution ``resolutions[j % len(resolutions)]`` with its own seed. The graph, the seeds
    and the choices made are described in :mod:`cclust.graph_generators`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The features the kNN graph is built from; with ``graph`` given they are checked and
        give the number of objects. :func:`cclust.generate` with an AnnData holding
        ``obsp["connectivities"]`` passes that graph as ``graph``.
    n_clusters : int or None, default=None
        Not used: the resolution sets the number of clusters. Accepted (and checked to be in
        [2, n_samples]) so that the generator takes the common call ``gen(X, K, ...)``.
    n_partitions : int, default=100
    resolutions : float or sequence of float > 0, default=(0.25, 0.5, 1.0, 1.5, 2.0)
        The grid, used in turn; higher values give more, smaller clusters.
    n_neighbors : int, default=None
        Neighbours per object of the graph built from X, in [1, n_samples - 1]; None is 15
        (scanpy's default), or n_samples - 1 when there are fewer objects. Not used with
        ``graph``.
    graph : None, "knn" or sparse matrix of shape (n_samples, n_samples), default=None
        A symmetric matrix of weights >= 0 to cut instead of building one (e.g. scanpy's
        ``obsp["connectivities"]``). None builds one from X, except that :func:`cclust.generate`
        fills it from an AnnData's ``obsp["connectivities"]``; "knn" always builds one.
    n_iterations : int, default=2
        Passes of the Leiden algorithm per partition (leidenalg's default); -1 iterates until a
        pass changes nothing.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Partitions run in parallel threads (and threads of the neighbour search); the ensemble
        is identical for any value.
    verbose : int, default=0

    Returns
    -------
    Ensemble of shape (n_samples, n_partitions)
        Its ``provenance`` names each partition's resolution and seed, e.g.
        ``"leiden resolution=0.5 seed=1234"``.

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = leiden(X, n_partitions=4, resolutions=(0.5, 1.0), random_state=0)
    >>> E.shape, E.provenance[1].split()[:2]
    ((150, 4), ['leiden', 'resolution=1'])
    """
    matrix, resolutions, n_partitions = _prepare(X, n_clusters, graph, n_neighbors, resolutions, n_partitions,
                                                 n_jobs, "leiden")
    n_iterations = check_int(n_iterations, "n_iterations", low=-1)
    if n_iterations == 0:
        raise ValidationError("n_iterations must be a positive int, or -1 to iterate until nothing changes; got 0.")
    _, leidenalg = _libraries("leiden")

    def run(graph, resolution, seed):
        return leidenalg.find_partition(graph, leidenalg.RBConfigurationVertexPartition, weights="weight",
                                        n_iterations=n_iterations, seed=seed,
                                        resolution_parameter=resolution).membership

    return _ensemble(run, "leiden", matrix, resolutions, n_partitions, random_state, n_jobs, verbose)


def louvain(X: npt.ArrayLike, n_clusters: int | None = None, *, n_partitions: int = 100,
            resolutions: float | Sequence[float] | None = None, n_neighbors: int | None = None, graph: Any = None,
            random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0) -> Ensemble:
    """Louvain partitions of a kNN graph over a grid of resolutions and seeds (Blondel et al. 2008).

    Each partition is igraph's ``community_multilevel`` (modularity with a resolution parameter)
    on the weighted graph of :func:`leiden`, at resolution ``resolutions[j % len(resolutions)]``,
    with igraph's random number generator seeded for that partition alone (see
    :mod:`cclust.graph_generators`: Louvain partitions run one at a time). Parameters as
    :func:`leiden`, without ``n_iterations`` (Louvain runs to its last level).

    Examples
    --------
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> louvain(X, n_partitions=3, random_state=0).provenance[0].split()[:2]
    ['louvain', 'resolution=0.25']
    """
    matrix, resolutions, n_partitions = _prepare(X, n_clusters, graph, n_neighbors, resolutions, n_partitions,
                                                 n_jobs, "louvain")
    igraph, _ = _libraries("louvain")

    def run(graph, resolution, seed):
        with _IGRAPH_RNG_LOCK:
            igraph.set_random_number_generator(random.Random(seed))
            try:
                return graph.community_multilevel(weights="weight", resolution=resolution).membership
            finally:
                igraph.set_random_number_generator(random)

    return _ensemble(run, "louvain", matrix, resolutions, n_partitions, random_state, n_jobs, verbose)
