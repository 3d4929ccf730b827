"""KCC on soft partitions: K-means on the membership rows with the utility's Bregman distance.

Wu, Liu, Xiong, Cao & Chen (2015) show that maximising Gamma = sum_i w_i U_mu(pi, pi_i) is
K-means on the concatenated one-hot rows with f = sum_i w_i f_i, each f_i the Bregman distance
of a convex mu on partition i's block. Nothing in that argument needs the rows to be one-hot:
given membership rows x^(i) (Hornik 2005), the centroid of a cluster is the mean of its members'
rows (again the minimiser of every Bregman distance), and

    f_i(x, m) = mu(x) - mu(m) - <grad mu(m), x - m>
              = mu(x) - <x, g(m)> + c(m)

so the cost of object x under centre k is an x-only term, one inner product of the membership
row with a vector of the centre and a constant of the centre. Per family (w_i the effective
weight, normalised forms dividing it by |mu(P_i)| with P_i the mean membership row):

=========  ===========================  ====================  ============
family     mu(x)                        g(m)                  c(m)
=========  ===========================  ====================  ============
``uc``     ||x||^2                      2 m                   ||m||^2
``uh``     sum_l x_l log2 x_l           log2(m + eps)         0
``ucos``   ||x||_2                      m / ||m||_2           0
``ulp``    ||x||_p                      (m / ||m||_p)^(p-1)   0
=========  ===========================  ====================  ============

(``uh`` uses the hard engine's eps = 2.2e-16 so an unseen cluster stays finite; a zero centre
block under ``ucos``/``ulp`` has no direction and gets g = 0, the hard engine's "orthogonal to
every label"; 0 log 0 = 0.) On a one-hot row these are exactly the hard engine's lookups
(``1 - 2 m[l] + ||m||^2``, ``-log2(m[l] + eps)``, ``1 - m[l]/||m||``, ``1 - (m[l]/||m||_p)^(p-1)``).

Arithmetic. The costs are summed partition by partition in partition order, each term
evaluated in the same order of operations as the compiled engine's table (kmeans.cpp), the
centre-side logarithms and powers through the C library (``math``), the centres' norms and the
objective by sequential sums in the engine's 4096-object chunks, and the Lloyd loop and the
k-means++ draw are the Python driver's (``cclust._lloyd``, the one the Dask executors run) with
the compiled engine's own stop rule, empty-cluster rule and draw functions. On 0/1 rows
every inner product is then exact and every number equals the hard engine's, so a SoftEnsemble
of hard partitions gives the hard KCC's labels, restarts and Gamma bit for bit (tested). Each
partition's inner products are one BLAS product (n x K_i) @ (K_i x K).

Memory: the membership matrix itself (n x sum K_i floats, held by the SoftEnsemble) and
O(n (r + K)) working floats, chunked by rows: within the O(n r K) of the hard engine's tables.
"""
import math

import numpy as np

from cclust import _engine, _lloyd
from cclust._blocks import InMemoryRunner, RowBlocks
from cclust.errors import ValidationError
from cclust.validation import require_memory

#: the compiled engine's chunk (kChunk): objective and potential sums follow its order
_CHUNK = 4096
#: rows per block of the cost passes (bounds the working arrays; results do not depend on it)
_ROW_BLOCK = 8192
_UH_EPS = 2.2e-16

_log2 = np.frompyfunc(math.log2, 1, 1)
_pow = np.frompyfunc(math.pow, 2, 1)


def _libm(ufunc, *args):
    """A C-library elementwise function (as the compiled engine calls it), float64 out."""
    return np.asarray(ufunc(*args), dtype=np.float64)


def engine_sum(values):
    """Sum of ``values`` as the compiled engine adds them: left to right within chunks of 4096,
    the chunk sums left to right."""
    total = 0.0
    for start in range(0, values.shape[0], _CHUNK):
        total += float(np.cumsum(values[start:start + _CHUNK])[-1])
    return total


def _width_groups(n_clusters, offsets):
    """(partition indices, (g, K_i) column indices) per distinct K_i."""
    for width in np.unique(n_clusters).tolist():
        idx = np.flatnonzero(n_clusters == width)
        yield idx, offsets[idx][:, None] + np.arange(width)


def _block_sequential_sums(A, n_clusters, offsets):
    """(rows, r): each row's sum over every partition's columns, added left to right."""
    out = np.empty((A.shape[0], n_clusters.shape[0]))
    for idx, cols in _width_groups(n_clusters, offsets):
        out[:, idx] = np.cumsum(A[:, cols], axis=-1)[..., -1]
    return out


class SoftSpace:
    """The membership rows of a SoftEnsemble with a KCC utility's per-partition distance."""

    def __init__(self, ensemble, utility, max_bytes=None):
        self.U = ensemble.stacked()
        self.n, self.width = self.U.shape
        self.n_clusters = np.asarray(ensemble.n_clusters)
        self.offsets = np.asarray(ensemble.offsets)
        self.r = self.n_clusters.shape[0]
        self.family = utility.family
        self.p = utility.exponent
        self.weights = np.ascontiguousarray(utility.effective_weights(ensemble), dtype=np.float64)
        block = min(self.n, _ROW_BLOCK)
        require_memory(8 * (self.n * (2 * self.r + 2) + block * 6 * 64),
                       f"KCC on a soft ensemble of {self.n} objects and {self.r} partitions",
                       "use fewer or smaller partitions, or harden() the ensemble for the compiled "
                       "hard KCC", max_bytes)
        self.sq = self._x_terms("uc")                      # ||x_i||^2, for k-means++
        self.phi = self.sq if self.family == "uc" else self._x_terms(self.family)

    def _x_terms(self, family):
        """mu(x_i) of every object's membership row in every partition, (n, r)."""
        out = np.empty((self.n, self.r))
        block = max(1, _ROW_BLOCK * 64 // max(self.width, 1))    # about 8192 x 64 floats at a time
        for start in range(0, self.n, block):
            U = self.U[start:start + block]
            if family == "uh":
                with np.errstate(divide="ignore", invalid="ignore"):
                    A = np.where(U > 0, U * np.log2(np.where(U > 0, U, 1.0)), 0.0)
            elif family == "ulp":
                A = U ** self.p
            else:
                A = U * U
            # Any order of summation will do here: on a one-hot row every term is 0 or 1.
            out[start:start + U.shape[0]] = np.add.reduceat(A, self.offsets[:-1], axis=1)
        if family == "ucos":
            np.sqrt(out, out=out)
        elif family == "ulp":
            np.power(out, 1.0 / self.p, out=out)
        return out

    def mean_mu(self):
        """Mean mu(x_i) over the objects, per partition (1 for one-hot rows, 0 under uh)."""
        return self.phi.mean(axis=0)

    def centre_terms(self, centres, family):
        """(G, c): the (width, K) inner-product matrix and the (r, K) constants of the centres."""
        M = np.asarray(centres, dtype=np.float64)
        K = M.shape[0]
        const = None
        if family == "uc":
            const = _block_sequential_sums(M * M, self.n_clusters, self.offsets).T   # (r, K)
            return M.T, const
        if family == "uh":
            return _libm(_log2, M + _UH_EPS).T, None
        if family == "ucos":
            norm = np.sqrt(_block_sequential_sums(M * M, self.n_clusters, self.offsets))  # (K, r)
        else:
            sp = _block_sequential_sums(_libm(_pow, M, self.p), self.n_clusters, self.offsets)
            norm = _libm(_pow, sp, 1.0 / self.p)
        col_norm = np.repeat(norm, self.n_clusters, axis=1)                     # (K, width)
        G = np.zeros((K, self.width))
        live = col_norm > 0
        G[live] = M[live] / col_norm[live]
        if family == "ulp":
            G[live] = _libm(_pow, G[live], self.p - 1.0)
        return G.T, None

    def costs(self, centres, family=None, weights=None, rows=slice(None)):
        """(m, K) costs of the objects ``rows`` under ``centres`` (K, width): partition by partition,
        in order, w_i (mu(x_i) - <x_i, g_i> + c_i)."""
        family = self.family if family is None else family
        w = self.weights if weights is None else weights
        G, const = self.centre_terms(centres, family)
        U = self.U[rows]
        x_terms = (self.sq if family == "uc" else self.phi)[rows]
        K = G.shape[1]
        acc = np.zeros((U.shape[0], K))
        for start in range(0, U.shape[0], _ROW_BLOCK):
            stop = min(start + _ROW_BLOCK, U.shape[0])
            out = acc[start:stop]
            for i in range(self.r):
                a, b = self.offsets[i], self.offsets[i + 1]
                D = U[start:stop, a:b] @ G[a:b]
                x = x_terms[start:stop, i:i + 1]
                if family == "uc":
                    T = x - 2.0 * D
                    T += const[i]
                else:
                    T = x - D
                T *= w[i]
                out += T
        return acc

    def centroids(self, labels, n_clusters):
        """(K, width) centres (the members' mean membership rows; an empty cluster gets the
        whole data set's) and the (K, width) membership sums per cluster."""
        from scipy.sparse import csr_matrix

        sizes = np.bincount(labels, minlength=n_clusters)
        S = csr_matrix((np.ones(self.n), (labels, np.arange(self.n))), shape=(n_clusters, self.n))
        sums = np.asarray(S @ self.U)
        centres = np.empty_like(sums)
        full = sizes > 0
        centres[full] = sums[full] / sizes[full][:, None].astype(np.float64)
        if not full.all():
            centres[~full] = self.U.sum(axis=0) / self.n
        return centres, sums


class SoftRows(RowBlocks):
    """A SoftSpace as an executor of the Python Lloyd driver (:mod:`cclust._lloyd`): one
    in-memory block of membership rows. The candidate pass of k-means++ uses D^2(x, y) =
    sum_i w_i ||x_i - y_i||^2 (the squared Euclidean distance of the hard engine's one-hot rows);
    a Lloyd state is the labels and the cluster sizes."""

    def __init__(self, space):
        self.space = space
        self.blocks = [space]
        self.starts = np.array([0, space.n], dtype=np.int64)
        self.runner = InMemoryRunner()
        self.delayed = self.runner.delayed
        self.rows = np.arange(space.n)

    def map(self, fn, *per_block, shared=()):
        """fn(space, *per_block_j, *shared) for the one block."""
        return [fn(b, *(p[j] for p in per_block), *shared) for j, b in enumerate(self.blocks)]

    def candidate_rows(self, index):
        return self.space.U[np.asarray(index, dtype=np.int64)]

    @staticmethod
    def candidate_costs(space, closest, candidates):
        """(D^2 of every object to each candidate row, capped by ``closest``; the potentials)."""
        d2 = np.ascontiguousarray(np.maximum(space.costs(candidates, family="uc"), 0.0).T)  # (t, n)
        dist = d2 if closest is None else np.minimum(closest[None, :], d2)
        return dist, np.array([[engine_sum(row) for row in dist]])

    def tally(self, labels, n_clusters):
        return labels, np.bincount(labels, minlength=n_clusters)

    @staticmethod
    def sizes(state):
        return state[1]

    def centres(self, state):
        return self.space.centroids(state[0], state[1].shape[0])[0]

    def costs(self, labels, centres):
        return self.space.costs(centres)[self.rows, labels]

    def step(self, labels, centres, state):
        rows = self.rows
        C = self.space.costs(centres)
        current = C[rows, labels]
        best = np.argmin(C, axis=1)
        best = np.where(current == C[rows, best], labels, best)  # ties keep the current cluster
        return _lloyd.Pass(engine_sum(current), int((best != labels).sum()), self.tally(best, state[1].shape[0]),
                           labels=lambda: best, costs=lambda: C[rows, best])

    @staticmethod
    def reseed(labels, costs, sizes, n_clusters):
        return _engine.reseed(labels, costs, n_clusters).astype(np.int64)


def kmeanspp_seeds(space, n_clusters, rng, n_trials=None):
    """The compiled engine's greedy k-means++ on the membership rows (:func:`cclust._lloyd.kmeanspp`
    over :class:`SoftRows`), from the same random numbers (:func:`cclust._engine.kmeanspp_draws`)."""
    first, uniforms = _engine.kmeanspp_draws(rng, space.n, n_clusters, n_trials)
    return _lloyd.kmeanspp(SoftRows(space), n_clusters, first, uniforms)


def labels_from_seeds(space, seeds):
    """Every object to its cheapest seed row (ties: the lowest index)."""
    return np.argmin(space.costs(space.U[seeds]), axis=1)


def lloyd(space, initial_labels, n_clusters, *, max_iter, tol):
    """The compiled engine's Lloyd loop (kmeans.hpp) on the membership rows, by the Python Lloyd
    driver (:func:`cclust._lloyd.lloyd` over :class:`SoftRows`): the same tie rule (keep the
    current cluster), stop rule, undo of a rising step and empty-cluster rule
    (:func:`cclust._engine.reseed`). Returns a :class:`cclust._engine.LloydRun`."""
    labels = np.asarray(initial_labels, dtype=np.int64).copy()
    run = _lloyd.lloyd(SoftRows(space), labels, n_clusters, max_iter=max_iter, tol=tol)
    return _engine.LloydRun(run.labels, float(run.objective), run.trace, run.n_iter, run.converged,
                            np.empty((n_clusters, 0)), run.centres)


def soft_kcc(ensemble, setup, init, verbose, max_bytes):
    """KCC on a SoftEnsemble with the validated parameters of ``prepare`` (see the module)."""
    from cclust.consensus_functions._kcc_run import best_restart, finish
    from cclust.graph import one_blas_thread

    util, n_clusters, rng = setup.utility, setup.n_clusters, setup.rng
    space = SoftSpace(ensemble, util, max_bytes)
    n = space.n
    mus = util._size_mus(ensemble)
    offset = float(np.where(space.weights > 0, space.weights * (space.mean_mu() - mus), 0.0).sum())

    def one_restart(restart):
        if setup.starts is None:
            if init == "random":
                seeds = _engine.random_seeds(rng, n, n_clusters)
            else:
                seeds = kmeanspp_seeds(space, n_clusters, rng, setup.kmeanspp_trials)
            start = labels_from_seeds(space, seeds)
        else:
            start = setup.starts[restart]
        run = lloyd(space, start, n_clusters, max_iter=setup.max_iter, tol=setup.tol)
        return run, offset - run.objective / n

    # One BLAS thread: a pass is r small products (n x K_i) @ (K_i x K), for which OpenBLAS's
    # thread team costs more than it saves (pendigits, r = 100: 2.7 s per pass with the team on
    # two busy cores, 0.08 s on one thread); it also keeps every sum's order fixed.
    with one_blas_thread():
        best, gammas, iterations = best_restart(setup.n_init, one_restart, verbose)
    _, table = space.centroids(best.labels, n_clusters)
    # The result numbers clusters by their first member; the centres follow.
    _, first = np.unique(best.labels, return_index=True)
    centres = best.cat_centers[np.argsort(first, kind="stable")]
    return finish(ensemble, util, best.labels, n_clusters, table, best.objective, best.trace,
                  best.n_iter, best.converged, gammas, iterations, setup.max_iter,
                  extras={"centers": centres})


def check_soft_options(backend, client, chunks):
    if backend == "dask" or client is not None or chunks is not None:
        raise ValidationError("KCC on a SoftEnsemble runs in memory only: backend='dask', client and chunks "
                              "take hard ensembles (pass ensemble.harden() for the Dask KCC).")
