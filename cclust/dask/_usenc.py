"""U-SPEC generation and the transfer-cut consensus of U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020)
on row blocks (see :mod:`cclust.dask`)."""
from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from cclust import _spectral
from cclust._blocks import BLOCK, aligned, fold
from cclust._dense_blocks import DenseBlocks
from cclust._progress import progress
from cclust.dask._ensemble import DaskEnsemble, _check_block, _chunk_rows, from_array
from cclust.dask._runner import _import_dask, _Runner, recovering
from cclust.errors import ValidationError
from cclust.graph import one_blas_thread
from cclust.graph._tcut import dense_leading_eigenvectors, transfer_rows
from cclust.result import ConsensusResult
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike, check_array_2d, check_int, check_random_state, spawn_seed_sequences

# The representatives, the rep-cluster index and the column side of the transfer cut (p x p,
# or sum K_i x sum K_i) are global and small; the neighbour search, the affinity rows, the
# transfer of the eigenvectors and the k-means passes run per row block. Every float that adds
# over objects is added in the objects' order, independently of the blocks: the column-side sums
# by one compiled pass continued from block to block (a chain of tasks), sigma, the k-means
# objective and the centre sums as partials per 4096-object sub-block (global positions; chunks
# are multiples of 4096) folded in order on the client, the k-means++ running sum continued from
# block to block. So labels are the same for any chunking. The k-means passes are the engine's
# compiled kernels (kmeans.cpp: dense_block_pass, dense_block_sums, dense_candidate_costs), each
# 4096-object chunk computed as the whole-array engine computes it, so the k-means is the
# in-memory one bit for bit.

def _sub_block_sums(values):
    """The sums of ``values`` per 4096-object sub-block of a block (which starts on a multiple of
    4096), each one NumPy sum of that sub-block alone: the same floats for any blocks."""
    return [float(values[a:a + BLOCK].sum()) for a in range(0, values.shape[0], BLOCK)]


def _fold_sub_blocks(parts):
    """Left-to-right sum from zero of the sub-block partials of every block, in order."""
    return fold([np.asarray(part, dtype=np.float64) for part in parts])


def _task_uspec_rows(X, index, k):
    neighbors, distances = _spectral.nearest_in_index(aligned(np.asarray(X), np.float64), index, k, n_threads=1)
    return (neighbors, distances, _sub_block_sums(distances.sum(axis=1)),
            np.bincount(neighbors.reshape(-1), minlength=index.R.shape[0]))


def _task_affinity_block(rows, sigma, rank, n_columns):
    neighbors, distances = rows[0], rows[1]
    return _spectral.affinity_rows(neighbors, _spectral.affinities(distances, sigma), rank, n_columns)


def _task_label_graph(block, offsets, weights, r, j):
    """The object-cluster rows (eq. 18-19, weights w_i, a missing label no edge) of a label block."""
    import scipy.sparse as sp

    block = _check_block(block, r, j)
    present = block >= 0
    cols = (block + offsets[:-1][None, :].astype(np.int32))[present]
    vals = np.broadcast_to(weights, block.shape)[present]
    indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
    return sp.csr_matrix((vals, cols, indptr), shape=(block.shape[0], int(offsets[-1])))


def _task_cross_sums(B, sums):
    from cclust._ext import _uspec

    W, col_degree = sums[0].copy(), sums[1].copy()
    _uspec.cross_sums(aligned(B.indptr, np.int64), aligned(B.indices, np.int64), aligned(B.data, np.float64),
                      W, col_degree)
    return W, col_degree


def _task_transfer(B, ncut_vectors):
    degree = np.asarray(B.sum(axis=1)).reshape(-1)
    degree[degree == 0] = 1e-10
    return transfer_rows(B, ncut_vectors, degree)


def _block_cut(graph_blocks, n_columns, starts, n_clusters, rng, n_init, max_iter, runner):
    """The transfer cut (Li, Wu & Chang 2012; :func:`cclust.graph.tcut`) of a bipartite graph
    whose rows are the persisted CSR ``graph_blocks``: the column-side sums chained over the
    blocks, the dense leading eigenvectors, the transferred rows per block, k-means on them.
    Returns (labels as blocks numbered by first object, eigenvalues, objective)."""
    delayed = runner.delayed
    sums = (np.zeros((n_columns, n_columns)), np.zeros(n_columns))
    for B in graph_blocks:
        sums = delayed(_task_cross_sums)(B, sums)
    W, col_degree = runner.compute([sums])[0]
    n_vectors = min(n_clusters, n_columns)
    inv_sqrt = 1.0 / np.sqrt(np.where(col_degree > 0, col_degree, 1.0))
    values, vectors = dense_leading_eigenvectors(W, inv_sqrt, n_vectors)
    ncut_vectors = delayed(vectors * inv_sqrt[:, None])
    embedding = runner.persist([delayed(_task_transfer)(B, ncut_vectors) for B in graph_blocks])
    blocks = DenseBlocks(embedding, starts, runner)
    labels, objective = blocks.kmeans(n_clusters, rng, n_init, max_iter)
    labels = blocks.numbered(labels, n_clusters)
    del embedding, blocks
    return labels, values, objective


def _row_starts(n, chunks, width):
    rows = _chunk_rows(chunks, n, width)
    return np.array(list(range(0, n, rows)) + [n], dtype=np.int64)


def _uspec_blocks(X, starts, p, k, k_i, rng, n_init, max_iter, runner):
    """One U-SPEC clusterer of X on row blocks (the draws of :func:`cclust.uspec` in the same
    order): hybrid representatives and the rep-cluster index in memory, then the neighbour
    search, sigma, the affinity rows and the transfer cut per block. Labels as blocks."""
    delayed = runner.delayed
    with one_blas_thread():
        R = _spectral.hybrid_representatives(X, p, rng)
    k = min(k, R.shape[0])
    index = delayed(_spectral.representative_index(R, k, rng))
    rows = runner.persist([delayed(_task_uspec_rows)(X[a:b], index, k) for a, b in itertools.pairwise(starts)])
    parts = runner.compute([delayed(operator.itemgetter(2, 3))(r) for r in rows])
    sigma = _fold_sub_blocks([q[0] for q in parts]) / (int(starts[-1]) * k)
    columns, rank = _spectral.column_rank(sum(q[1] for q in parts))
    graph = runner.persist([delayed(_task_affinity_block)(r, sigma, rank, columns.shape[0]) for r in rows])
    del rows
    k_i = min(k_i, columns.shape[0])
    labels, _, _ = _block_cut(graph, columns.shape[0], starts, k_i, rng, n_init, max_iter, runner)
    return labels


def uspec_ensemble(X: Any, n_clusters: int, *, n_partitions: int = 20, k_range: tuple[int, int] | None = None,
                   n_representatives: int | None = None, n_neighbors: int = 5, n_init: int = 1, max_iter: int = 5,
                   random_state: RandomStateLike = None, client: Any = None, chunks: int | None = None,
                   verbose: int = 0) -> DaskEnsemble:
    """U-SENC's ensemble of U-SPEC clusterers (Huang, Wang, Wu, Lai & Kwoh 2020) on row blocks.

    Parameters and draws are those of :func:`cclust.uspec.uspec_ensemble` (partition i from the
    i-th child seed); per clusterer the representatives and the rep-cluster index are built in
    memory (O(p^2)), the neighbour search (compiled), the affinity rows, the transferred
    eigenvectors and the k-means passes of the transfer cut run per row block, and the column
    side (p x p) is summed over the blocks in object order. Memory: X, the blocks' n x K graph
    and n x K_i embedding of one clusterer at a time, and the n x m labels, never more. The
    labels do not depend on ``chunks``. The k-means of the transfer cut is the in-memory engine's
    bit for bit (its compiled kernels per block, partials added in chunk order); sigma and the
    column-side sums are added in another order than in memory, so the two paths agree up to
    that rounding (the same labels on the tested sets).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_clusters, n_partitions, k_range, n_representatives, n_neighbors, n_init, max_iter, random_state
        As :func:`cclust.uspec.uspec_ensemble`.
    client : dask.distributed.Client, default=None
        None uses Dask's default (a global client, else the local scheduler).
    chunks : int, default=None
        Rows per block (rounded up to a multiple of 4096); None: about 64 MiB of labels.
    verbose : int, default=0
        1 draws a progress bar over the partitions.

    Returns
    -------
    DaskEnsemble of shape (n_samples, n_partitions)

    Examples
    --------
    >>> from cclust.datasets import make_moons
    >>> from cclust.dask import uspec_ensemble
    >>> X, y = make_moons(3000, random_state=0)
    >>> uspec_ensemble(X, 2, n_partitions=3, random_state=0, chunks=4096).shape
    (3000, 3)
    """
    dask, da = _import_dask()
    X = check_array_2d(X, "X")
    starts = _row_starts(X.shape[0], chunks, check_int(n_partitions, "n_partitions", low=1))
    # the client holds p x p; each task a block's n_b x K graph (the blocks live on the workers)
    X, n_clusters, n_partitions, p, k, (low, high), n_init, max_iter = _spectral.check_ensemble(
        X, n_clusters, n_partitions, k_range, n_representatives, n_neighbors, n_init, max_iter,
        memory_rows=int(starts[1] - starts[0]))
    runner = _Runner(client)
    columns = []
    with progress(total=n_partitions, desc="uspec partitions (dask)", verbose=verbose) as bar:
        for seq in spawn_seed_sequences(random_state, n_partitions):
            rng = np.random.default_rng(seq)
            k_i = int(rng.integers(low, high + 1))
            columns.append(_uspec_blocks(X, starts, p, k, k_i, rng, n_init, max_iter, runner))
            bar.update(1)
    blocks = [da.from_delayed(runner.delayed(np.column_stack)([c[j] for c in columns]),
                              shape=(int(b - a), n_partitions), dtype=np.int32)
              for j, (a, b) in enumerate(itertools.pairwise(starts))]
    E = DaskEnsemble(da.concatenate(blocks, axis=0), chunks=int(starts[1] - starts[0]), client=runner.client)
    if runner.client is not None:
        from distributed import futures_of

        # The array graph names the label blocks' keys but does not hold their futures: kept
        # here, else the cluster forgets the labels as soon as this function returns. A lost
        # worker's blocks are recomputed from the graph (every input of it is in the graph).
        E._keep = futures_of(columns)
    return E


def tcut(ensemble: DaskEnsemble | EnsembleLike, n_clusters: int, *, n_init: int = 3, max_iter: int = 100,
         random_state: RandomStateLike = None, client: Any = None, chunks: int | None = None) -> ConsensusResult:
    """The transfer-cut consensus (Huang et al. 2020, sec. 3.2.2) of a :class:`DaskEnsemble`.

    As :func:`cclust.consensus_functions.ultra_scalable.tcut`, per row block: the
    object-cluster rows (eq. 18-19, partition weights on the edges, a missing label no edge),
    the cluster-side sums chained over the blocks in object order, the dense eigenproblem of the
    ``sum K_i`` clusters, the transferred rows and k-means (k-means++, ``n_init`` runs of at most
    ``max_iter`` passes) per block. Identical label rows are not merged (the same cut; the
    in-memory function merges them), and the cluster side is always solved dense. The labels do
    not depend on the chunking.

    Returns
    -------
    ConsensusResult
        labels gathered on the client (n int64); ``extras``: ``eigenvalues``, ``backend="dask"``.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.dask import from_array, tcut as dask_tcut
    >>> X, y = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=10, random_state=0)
    >>> dask_tcut(from_array(E), 3, random_state=0).n_clusters
    3
    """
    if not isinstance(ensemble, DaskEnsemble):
        ensemble = from_array(ensemble, chunks=chunks, client=client)
    n = ensemble.n_samples
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, n))
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    width = int(ensemble.offsets[-1])
    if n_clusters > width:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of clusters in the ensemble ({width}): "
            "the transfer cut needs as many eigenvectors of the cluster graph.")
    runner = _Runner(client or ensemble._client)
    r = ensemble.n_partitions
    rng = check_random_state(random_state)

    def run():
        graph = runner.persist([runner.delayed(_task_label_graph)(b, ensemble.offsets, ensemble.weights, r, j)
                                for j, b in enumerate(ensemble.blocks())])
        labels, values, objective = _block_cut(graph, width, ensemble.chunk_starts, n_clusters,
                                               rng, n_init, max_iter, runner)
        return np.concatenate(runner.compute(labels)).astype(np.int64), values, objective

    # labels a lost worker held that Dask cannot recompute are made again (see kcc)
    gathered, values, objective = recovering(run, ensemble=ensemble, rng=rng, what="tcut")
    return ConsensusResult.from_labels(
        gathered, objective=float(objective),
        objective_name="within-cluster sum of squares of the transfer-cut embedding (lower is better)",
        method="tcut", extras={"eigenvalues": values, "backend": "dask"})


def usenc(X: Any, n_clusters: int, *, n_partitions: int = 20, k_range: tuple[int, int] | None = None,
          n_representatives: int | None = None, n_neighbors: int = 5, n_init: int = 3, max_iter: int = 100,
          random_state: RandomStateLike = None, client: Any = None, chunks: int | None = None,
          verbose: int = 0) -> ConsensusResult:
    """U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020) on row blocks: :func:`uspec_ensemble` then
    :func:`tcut`, with the draws of :func:`cclust.consensus_functions.ultra_scalable.usenc`
    (an int ``random_state`` seeds both steps). Returns a ConsensusResult as :func:`tcut`,
    ``extras["n_generated"]`` = m.

    Examples
    --------
    >>> from cclust.datasets import make_moons
    >>> from cclust.dask import usenc
    >>> from cclust.metrics import ari
    >>> X, y = make_moons(3000, random_state=0)
    >>> ari(usenc(X, 2, n_partitions=3, random_state=0).labels, y) > 0.95
    True
    """
    rng = check_random_state(random_state) if not isinstance(random_state, (int, np.integer)) else random_state
    ensemble = uspec_ensemble(X, n_clusters, n_partitions=n_partitions, k_range=k_range,
                              n_representatives=n_representatives, n_neighbors=n_neighbors, random_state=rng,
                              client=client, chunks=chunks, verbose=verbose)
    result = tcut(ensemble, n_clusters, n_init=n_init, max_iter=max_iter, random_state=rng, client=client)
    return ConsensusResult.from_labels(result.labels, objective=result.objective,
                                       objective_name=result.objective_name, method="usenc",
                                       extras=dict(result.extras, n_generated=ensemble.n_partitions))
