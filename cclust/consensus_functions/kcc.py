"""K-means-based consensus clustering (KCC; Wu, Liu, Xiong, Cao & Chen, TKDE 27(1), 2015).

KCC turns consensus clustering into K-means: maximising the consensus function
Gamma(pi) = sum_i w_i U_mu(pi, pi_i) (Wu et al. 2015, eq. 1) for a KCC utility U_mu is equivalent to K-means
on the binary dataset (the one-hot encoding of every basic partition) with the point-to-centroid
distance f that mu induces (Wu et al. 2015; Becerra Tomé, Table 1), centroids being the per-partition label distributions
of each cluster (Wu et al. 2015; eq. 4 of Becerra Tomé's review). The compiled engine never builds the binary dataset: a pass is
O(n r K) table lookups.

In memory the whole run (k-means++ seeding, the Lloyd loop) is the compiled engine's
(``cclust._engine``). A :class:`cclust.dask.DaskEnsemble`, ``backend="dask"`` or ``client=``
hands over to :func:`cclust.dask.kcc`, imported only then, which maps the same engine's
per-block kernels over row chunks; parameter checks, restarts and the result are shared by
both (``cclust.consensus_functions._kcc_run``), and ``cclust.dask`` does not import this module.
"""
from __future__ import annotations

from typing import Any, TYPE_CHECKING

import numpy.typing as npt

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust import _engine
from cclust.base import declare
from cclust.consensus_functions._kcc_run import best_restart, finish, prepare
from cclust.consensus_functions._kcc_soft import check_soft_options, soft_kcc
from cclust.ensemble import as_ensemble, is_dask_ensemble
from cclust.errors import ValidationError
from cclust.soft import is_soft_ensemble
from cclust.validation import check_n_jobs, renamed_threads
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike
from cclust.result import ConsensusResult
from cclust.base import Utility

if TYPE_CHECKING:
    from cclust.soft import SoftEnsemble
    from cclust.dask import DaskEnsemble


@weights_on_the_ensemble
@renamed_threads
@declare(handles_missing=True, object_order="distribution", accepts_soft=True)
def kcc(ensemble: EnsembleLike | SoftEnsemble | DaskEnsemble, n_clusters: int, *, utility: str | Utility = "uh",
        p: float | None = None, init: str | npt.ArrayLike = "k-means++",
        n_init: int = 10, max_iter: int = 100, tol: float = 1e-6, kmeanspp_trials: int | None = None,
        random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0, backend: str | None = None,
        client: Any = None, chunks: int | None = None, max_bytes: int | None = None) -> ConsensusResult:
    """K-means-based consensus clustering (KCC and KCC++).

    Parameters
    ----------
    ensemble : Ensemble, SoftEnsemble or array-like of shape (n_samples, n_partitions)
        The basic partitions; objects missing from a partition (-1) contribute nothing for it
        and centroids use only the labelled members (incomplete KCC). A
        :class:`cclust.soft.SoftEnsemble` (soft partitions, Hornik 2005) runs the same
        K-means on the membership rows instead of the one-hot rows (see Notes).
    n_clusters : int
        K, in [2, n_samples].
    utility : str or Utility, default="uh"
        A registered KCC utility: ``uc``, ``uh``, ``ucos``, ``ulp`` (needs ``p``) or the
        normalised ``nuc``, ``nuh``, ``nucos``, ``nulp``.
    p : float, default=None
        Exponent of ``ulp``/``nulp`` (> 1; Wu et al. 2015 use 5 and 8).
    init : {"k-means++", "random"} or array-like of shape (n_samples,), default="k-means++"
        ``"k-means++"``: D^2 seeding on the binary dataset (KCC++ of Li & Liu 2018); see
        ``kmeanspp_trials``. ``"random"``: K distinct objects as initial centroids, the start of
        Wu et al. 2015 (as Becerra Tomé re-implements it). An array gives the initial labels (0..K-1) and runs once,
        whatever ``n_init``. The default differs from Wu et al.: K random objects fall in all
        of K well-separated groups with probability K!/K^K per restart (3.8% for K = 5), so
        with 10 restarts KCC often keeps a partition with two groups merged and one split; on
        five well-separated blobs (n = 20,000, 100 k-means partitions) ``"random"`` ends at ARI
        0.72 and ``"k-means++"`` at 1.0 (the method catalogue has the measurements, and the
        KCC reproduction both starts).
    n_init : int, default=10
        Restarts; the one with the highest Gamma is kept.
    max_iter : int, default=100
    tol : float, default=1e-6
        A run stops when its labels no longer change or the objective improves by less than
        ``tol`` relatively.
    kmeanspp_trials : int, default=None
        Candidates drawn per centre by ``init="k-means++"``, the one lowering the potential most
        being kept. None: scikit-learn's greedy k-means++ (2 + log K). 1: Arthur &
        Vassilvitskii's original, which is the KCC++ of Li & Liu (2018) (its ref. [27]); measured on
        pendigits (r = 100, K = 10, n_init = 10) it ends at a 1.2% higher K-means objective than
        the greedy default.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Threads of the compiled passes (None: every core, see
        :func:`cclust.validation.default_threads`). Results are identical for any value.
    verbose : int, default=0
        1 draws a progress bar over the restarts (only on a terminal), 2 also leaves it on
        screen when done.
    backend : {None, "threads", "dask"}, default=None
        ``"dask"`` runs every Lloyd pass as a map over row chunks (:func:`cclust.dask.kcc`);
        None picks Dask for a :class:`cclust.dask.DaskEnsemble` or when ``client`` is given.
        The result is identical either way.
    client : dask.distributed.Client, default=None
        Cluster for the Dask backend (implies it).
    chunks : int, default=None
        Rows per chunk when an in-memory ensemble goes to the Dask backend.
    max_bytes : int, default=None
        Memory budget of the soft route (None: ``CCLUST_MEMORY_BUDGET`` or 2 GiB); hard input
        does not read it.

    Returns
    -------
    ConsensusResult
        ``objective`` is Gamma (higher is better); ``n_iter`` counts the accepted label
        updates of the kept run (0 when its starting partition was already a fixed point);
        ``extras`` holds ``kmeans_objective`` (the
        sum of point-to-centroid distances), ``objective_trace`` of the kept run, ``utility``,
        ``objectives`` (Gamma of each restart; ``gammas`` before) and ``n_iter_per_restart`` and
        ``partition_utilities`` (U(pi, pi_i) per partition). Soft input adds ``centers`` (K, sum
        K_i; ``centres`` before): each consensus cluster's mean membership rows.

    Notes
    -----
    Soft partitions. Wu et al.'s (2015) reduction holds for any rows: with x^(i) the membership
    row of an object in partition i instead of its one-hot row, the centroids are the clusters'
    mean membership rows and f = sum_i w_i f_i is the same Bregman distance of each utility's
    mu, so the cost of object x under centre k is ``mu(x) - <x, g(m_k)> + c(m_k)`` per
    partition: one BLAS product per partition and pass, O(n (r + K)) working memory beside the
    n x sum K_i membership matrix (within the O(n r K) of the hard engine; refused past
    ``max_bytes``). Gamma is computed from the soft contingency table (the clusters' summed
    memberships) and the normalised utilities divide by ``|mu(P_i)|`` with P_i the mean membership
    row. Every rule (k-means++ on the rows' squared Euclidean distance, ties, empty clusters,
    the stop rule, restarts) and every floating operation on a one-hot row are the hard
    engine's, so a SoftEnsemble of 0/1 partitions gives the hard KCC's labels and Gamma.
    Soft ensembles have no missing objects; ``backend="dask"`` takes hard ensembles only, and
    ``n_jobs`` does not apply (NumPy/BLAS do the passes).

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0)
    >>> res = kcc(E, 3, utility="uc", random_state=0)
    >>> res.n_clusters
    3
    """
    if backend not in (None, "threads", "dask"):
        raise ValidationError(f"backend must be one of [None, 'threads', 'dask'], got {backend!r}.")
    if is_soft_ensemble(ensemble):
        check_soft_options(backend, client, chunks)
        check_n_jobs(n_jobs)
        setup = prepare(ensemble, n_clusters, utility, p, init, n_init, max_iter, tol, kmeanspp_trials,
                        random_state)
        return soft_kcc(ensemble, setup, init, verbose, max_bytes)
    is_dask = is_dask_ensemble(ensemble)
    if backend == "dask" or client is not None or (is_dask and backend is None):
        from cclust import dask as cdask

        return cdask.kcc(ensemble, n_clusters, utility=utility, p=p, init=init,
                         n_init=n_init, max_iter=max_iter, tol=tol, kmeanspp_trials=kmeanspp_trials,
                         random_state=random_state, n_jobs=n_jobs, verbose=verbose,
                         client=client, chunks=chunks)
    if is_dask:
        raise ValidationError("backend='threads' needs an in-memory Ensemble; call .compute() on the "
                              "DaskEnsemble or pass backend='dask'.")
    if chunks is not None:
        raise ValidationError(f"chunks only applies to backend='dask', got chunks={chunks!r}.")
    ensemble = as_ensemble(ensemble)
    setup = prepare(ensemble, n_clusters, utility, p, init, n_init, max_iter, tol, kmeanspp_trials,
                    random_state)
    n, n_clusters, util, rng = ensemble.n_samples, setup.n_clusters, setup.utility, setup.rng
    n_jobs = check_n_jobs(n_jobs)
    space = _engine.MixedSpace.categorical(ensemble, util)

    # Complete ensembles: Gamma = offset - objective / n (see Utility.gamma_offset), so a
    # restart costs no contingency pass; with missing labels Gamma is computed from the tables.
    offset = None if ensemble.has_missing else util.gamma_offset(ensemble)

    def one_restart(restart):
        if setup.starts is None:
            seeds = _engine.seed_objects(space, n_clusters, init, rng, n_jobs, n_trials=setup.kmeanspp_trials)
            start = _engine.labels_from_seeds(space, seeds, n_jobs)
        else:
            start = setup.starts[restart]
        run = _engine.lloyd(space, start, n_clusters, max_iter=setup.max_iter, tol=setup.tol, n_threads=n_jobs)
        if offset is None:
            return run, util.consensus_value(ensemble, run.labels, n_clusters, n_jobs=n_jobs)
        return run, offset - run.objective / n

    best, gammas, iterations = best_restart(setup.n_init, one_restart, verbose)
    table = ensemble.contingency(best.labels, n_clusters, n_jobs=n_jobs)
    return finish(ensemble, util, best.labels, n_clusters, table, best.objective, best.trace,
                  best.n_iter, best.converged, gammas, iterations, setup.max_iter)


