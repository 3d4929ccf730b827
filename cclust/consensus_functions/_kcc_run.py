"""What the in-memory and the Dask KCC share: parameter checks, restarts and the result.

:func:`cclust.consensus_functions.kcc.kcc` runs KCC on an in-memory :class:`~cclust.Ensemble` and
:func:`cclust.dask.kcc` on a row-chunked :class:`~cclust.dask.DaskEnsemble`; both validate with
:func:`prepare`, keep the best of their restarts with :func:`best_restart` and build the result
with :func:`finish`, so they take the same parameters, keep the same restart and report the same
fields. Neither module imports the other at import time.
"""
import operator
from dataclasses import dataclass

import numpy as np

from cclust._lloyd import best_of_restarts
from cclust.base import Utility
from cclust.errors import ConvergenceWarning, ValidationError
from cclust.result import ConsensusResult
from cclust.utilities import resolve
from cclust.validation import check_float, check_int, check_random_state

_INITS = ("random", "k-means++")


def best_restart(n_init, one_restart, verbose):
    """Run ``one_restart(i) -> (run, gamma)`` for i < n_init and keep the run of highest Gamma
    (the first on ties); also the Gammas and ``run.n_iter`` of every restart, in order.
    The in-memory and the Dask KCC both call it, so both keep the same restart."""
    iterations = []

    def restart(i):
        run, gamma = one_restart(i)
        iterations.append(run.n_iter)
        return run, gamma

    (best, _), gammas = best_of_restarts(restart, n_init, score=operator.itemgetter(1), higher_is_better=True,
                                         verbose=verbose, desc="kcc restarts")
    return best, gammas, iterations


def _initial_labels(init, n):
    labels = np.asarray(init)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValidationError(f"init as an array must have shape ({n},), got {labels.shape}.")
    if labels.dtype.kind not in "iu":
        raise ValidationError(f"init as an array must hold integer labels, got dtype {labels.dtype}.")
    return labels


@dataclass(frozen=True)
class Setup:
    """Validated KCC parameters shared by the in-memory and the Dask paths (see :func:`prepare`)."""

    n_clusters: int
    utility: Utility
    max_iter: int
    tol: float
    #: candidates per centre of k-means++; None: the greedy default (2 + log K)
    kmeanspp_trials: int | None
    rng: np.random.Generator
    #: the given initial labelling as a one-element list, or None when ``init`` names a seeding
    starts: list | None
    #: restarts to run (1 when ``init`` gives labels)
    n_init: int


def prepare(ensemble, n_clusters, utility, p, init, n_init, max_iter, tol, kmeanspp_trials,
             random_state, init_labels=None):
    n = ensemble.n_samples
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=n)
    util = resolve(utility, p)
    _ = util.exponent  # raises now, naming p, when ulp/nulp has none
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0)
    kmeanspp_trials = check_int(kmeanspp_trials, "kmeanspp_trials", low=1, allow_none=True)
    rng = check_random_state(random_state)
    if isinstance(init, str):
        if init not in _INITS:
            raise ValidationError(f"init must be one of {list(_INITS)} or an array of labels, got {init!r}.")
        n_init = check_int(n_init, "n_init", low=1)
        starts = None
    else:
        labels0 = _initial_labels(init if init_labels is None else init_labels(init, n), n)
        if labels0.min() < 0 or labels0.max() >= n_clusters:
            raise ValidationError(
                f"init labels must lie in 0..{n_clusters - 1}, got values in [{labels0.min()}, {labels0.max()}]."
            )
        starts = [labels0]
        n_init = 1
    return Setup(n_clusters=n_clusters, utility=util, max_iter=max_iter, tol=tol,
                  kmeanspp_trials=kmeanspp_trials, rng=rng, starts=starts, n_init=n_init)


def finish(ensemble, util, labels, n_clusters, table, kmeans_objective, trace, n_iter, converged,
            gammas, iterations, max_iter, extras=None):
    if not converged:
        import warnings

        warnings.warn(f"kcc stopped at max_iter={max_iter} before converging; raise max_iter.",
                      ConvergenceWarning, stacklevel=3)
    partition_utilities = util.partition_utilities(ensemble, table)
    return ConsensusResult.from_labels(
        labels,
        objective=float(ensemble.weights @ partition_utilities),
        objective_name="Gamma (consensus utility, higher is better)",
        n_iter=n_iter,
        converged=converged,
        method="kcc",
        extras={
            "kmeans_objective": kmeans_objective,
            "objective_trace": trace,
            "utility": util.name if util.p is None else f"{util.name}(p={util.p:g})",
            "objectives": np.array(gammas),
            "n_iter_per_restart": np.array(iterations),
            "partition_utilities": partition_utilities,
            **(extras or {}),
        },
    )
