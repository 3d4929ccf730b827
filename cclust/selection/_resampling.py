"""The runs of select_k at one K: the inner k-means named by ``inner_params``, the generator's
parameters as a function of K, and a consensus method's labels on every resample."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cclust.validation import check_int, check_n_jobs
from cclust.errors import ValidationError
from cclust._pipeline import RESERVED_GENERATOR, call_method, check_params_dict, generate_ensemble

#: Resamples per K of the Monti protocol: with the reference null (every reference data set
#: runs the same protocol), and without it (ConsensusClusterPlus's plain protocol).
RESAMPLES_WITH_NULL, RESAMPLES_PLAIN = 10, 100


def _inner_algorithm(inner, inner_params, method, default_starts=1):
    """``(algorithm, init, n_init)`` named by select_k's ``inner_params`` (None: Lloyd, its own
    init, ``default_starts`` runs per resample)."""
    from cclust import _monti

    if inner_params is None:
        return "lloyd", None, default_starts
    if not isinstance(inner_params, dict):
        raise ValidationError(f"inner_params must be a dict or None, got {type(inner_params).__name__}.")
    if method != "monti" or inner != "kmeans":
        raise ValidationError(
            f"inner_params sets the k-means inner clusterer of method='monti', inner='kmeans'; got "
            f"method={method!r}, inner={inner!r}.")
    unknown = sorted(set(inner_params) - {"algorithm", "init", "n_init"})
    if unknown:
        raise ValidationError(f"inner_params has unknown key(s) {unknown}; the k-means inner clusterer takes "
                              "'algorithm', 'init' and 'n_init'.")
    algorithm = inner_params.get("algorithm", "lloyd")
    if algorithm not in _monti.KMEANS_ALGORITHMS:
        raise ValidationError(f"inner_params['algorithm'] must be one of {list(_monti.KMEANS_ALGORITHMS)}, "
                              f"got {algorithm!r}.")
    init = inner_params.get("init")
    if init is not None and init not in _monti.KMEANS_INITS:
        raise ValidationError(f"inner_params['init'] must be one of {list(_monti.KMEANS_INITS)}, got {init!r}.")
    if algorithm == "hartigan-wong":
        n_init = check_int(inner_params.get("n_init", 1), "inner_params['n_init']", low=1, high=1)
    else:
        n_init = check_int(inner_params.get("n_init", default_starts), "inner_params['n_init']", low=1)
    return algorithm, init, n_init


def _per_k_params(generator_params):
    """``generator_params`` as a function of K (see :func:`select_k`)."""
    if callable(generator_params):
        def params(k):
            value = generator_params(k)
            return check_params_dict(value, f"generator_params({k})", RESERVED_GENERATOR, "select_k")
        return params
    fixed = check_params_dict(generator_params, "generator_params", RESERVED_GENERATOR, "select_k")
    if "k_range" in fixed:
        raise ValidationError(
            f"generator_params must not fix k_range={fixed['k_range']!r}: select_k would pass the same "
            "k_range to the generator at every K tested. Give generator_params as a function of K, "
            "e.g. generator_params=lambda k: {'k_range': (k, 2 * k)}, or leave k_range to the "
            "generator's default (which follows K).")
    return lambda k: fixed


def _fused_runs(fn, k, samples, n, X, ensemble, generator, n_partitions, generator_params, method_params,
                root, n_jobs, feature_draws=None, full_fit=True):
    """The consensus method's labels of every resample at K ((n, H) int32, -1 = not drawn) and
    its fit on all the data; seeds from (random_state, K) only.

    A resample is a small problem (50 k-means runs and one fusion of a few hundred objects take
    milliseconds), so starting threads inside each generator and method call costs more than it
    gains: the resamples run in parallel instead, each generating and fusing on one thread. The
    generator and the method give the same result for any thread count (their contract), and
    every resample keeps its own seeds and its own column, so the labels are the same for any
    ``n_jobs``. The fit on all the data keeps ``n_jobs``. A method that makes its own partitions
    of the features (``generates_ensemble``, e.g. usenc) is given none: ``generator`` is unused.
    """
    from cclust import _monti
    from cclust.base import method_info

    own_partitions = X is not None and method_info(fn).generates_ensemble
    seeds = np.random.SeedSequence(root, spawn_key=(k,)).generate_state(
        2 * (len(samples) + 1), dtype=np.uint32).tolist()

    def fuse(gen_seed, method_seed, idx, columns, jobs):
        features = None if X is None else (X if idx is None else np.ascontiguousarray(
            _monti.resample_rows(X, idx, columns)))
        if ensemble is not None:
            part = ensemble if idx is None else ensemble.take(idx)
        elif own_partitions:  # the method makes its own partitions of the features (usenc)
            part = None
        else:
            part = generate_ensemble(generator, features, k, n_partitions, generator_params, gen_seed,
                                     jobs, 0)
        return call_method(fn, part, k, method_params, method_seed, features, jobs, 0)

    def one_resample(h):
        columns = None if feature_draws is None else feature_draws[h]
        return fuse(seeds[2 * h], seeds[2 * h + 1], samples[h], columns, 1).labels

    workers = min(check_n_jobs(n_jobs, "n_jobs"), len(samples))
    out = np.full((n, len(samples)), -1, dtype=np.int32)
    if workers <= 1:
        fused = map(one_resample, range(len(samples)))
    else:
        pool = ThreadPoolExecutor(max_workers=workers)
        fused = pool.map(one_resample, range(len(samples)))
    try:
        for h, labels in enumerate(fused):
            out[samples[h], h] = labels
    finally:
        if workers > 1:
            pool.shutdown(cancel_futures=True)
    return out, fuse(seeds[-2], seeds[-1], None, None, n_jobs) if full_fit else None
