"""diceR's ``consensus_evaluate`` (Chiu & Talhouk 2018): :func:`evaluate` at one K, and every
(algorithm, K) combination at several K with diceR's choice of K by PAC."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.ensemble import EnsembleLike, as_ensemble
from cclust.errors import ValidationError
from cclust.evaluation._indices import INDICES, _rank_columns, _require_sklearn, aggregate_ranks, internal_indices
from cclust.evaluation._result import EvaluationResult, MultiKEvaluation, _groups
from cclust.validation import RandomStateLike, check_int, label_vector, spawn_seed_sequences


#: kNN co-association neighbours of the sparse route (as select_k's sparse consensus graphs).
SPARSE_NEIGHBORS = 30


def _route(method, matrix, max_bytes):
    """(route, extra eac parameters): "auto" is settled by the first fusion (dense unless eac's
    own memory guard refuses it, which it does before allocating)."""
    if matrix not in ("auto", "dense", "sparse"):
        raise ValidationError(f"matrix must be one of ['auto', 'dense', 'sparse'], got {matrix!r}.")
    if method != "eac":
        if matrix != "auto":
            raise ValidationError(f"matrix={matrix!r} chooses the route of the default method 'eac'; method "
                                  f"{method!r} keeps its own (pass matrix='auto', or method='eac').")
        return "method", {}
    budget = {} if max_bytes is None else {"max_bytes": max_bytes}
    if matrix == "sparse":
        return "sparse", {"linkage": "single", "n_neighbors": SPARSE_NEIGHBORS, **budget}
    return matrix, budget


def _check_common(X, labels_true, method, method_params):
    from cclust._pipeline import RESERVED_METHOD, check_name, check_params_dict, validate_X
    from cclust.registry import get

    features, _ = validate_X(X)
    n = features.shape[0]
    truth = None
    if labels_true is not None:
        truth, _ = label_vector(labels_true, "labels_true")
        if truth.shape[0] != n:
            raise ValidationError(f"labels_true must have one label per object ({n}), got {truth.shape[0]}.")
    fn = get(check_name(method, "method"), kind="consensus")
    params = check_params_dict(method_params, "method_params", RESERVED_METHOD, "evaluate")
    return features, truth, fn, params


def _as_same_objects(ensemble, n, name="ensemble"):
    ensemble = as_ensemble(ensemble, name)
    if ensemble.n_samples != n:
        raise ValidationError(f"X and {name} must describe the same objects: X has {n} rows, "
                              f"{name} {ensemble.n_samples}.")
    return ensemble


def _evaluate_one(features, ensemble, n_clusters, truth, fn, params, method, route, random_state, n_jobs):
    from cclust._pipeline import call_method
    from cclust.metrics import ari, nmi

    from cclust.errors import MemoryBudgetError

    n = features.shape[0]
    names, groups = _groups(ensemble)
    seeds = spawn_seed_sequences(random_state, len(names))
    labels = np.empty((len(names), n), dtype=np.int64)
    rows = []
    mode, extra = route
    for a, (idx, seed) in enumerate(zip(groups, seeds)):
        seed = int(seed.generate_state(1, dtype=np.uint32)[0])
        part = ensemble.take(partitions=idx)
        try:
            result = call_method(fn, part, n_clusters, {**extra, **params}, seed, features, n_jobs, 0)
        except MemoryBudgetError:
            if mode != "auto":
                raise
            mode, extra = _route("eac", "sparse", extra.get("max_bytes"))
            result = call_method(fn, part, n_clusters, {**extra, **params}, seed, features, n_jobs, 0)
        mode = "dense" if mode == "auto" else mode
        labels[a] = np.asarray(result.labels, dtype=np.int64)
        rows.append(internal_indices(features, labels[a], ensemble))
    indices = {name: np.array([row[name] for row in rows]) for name in INDICES}
    external = {}
    if truth is not None:
        external = {"ari": np.array([ari(truth, row) for row in labels]),
                    "nmi": np.array([nmi(truth, row) for row in labels])}
    ranked, ranks = _rank_columns(indices, INDICES, len(names))
    order = tuple(names[i] for i in aggregate_ranks(ranks))
    return EvaluationResult(tuple(names), np.array([g.shape[0] for g in groups], dtype=np.int64), labels,
                            indices, external, ranked, ranks, order, int(n_clusters), str(method), route=mode)


def _is_k_list(n_clusters):
    return not isinstance(n_clusters, (str, bytes)) and isinstance(n_clusters, (list, tuple, range, np.ndarray))


def evaluate(X: npt.ArrayLike, ensemble: EnsembleLike | Mapping[int, EnsembleLike],
             n_clusters: int | Sequence[int] | None, *, labels_true: npt.ArrayLike | None = None, method: str = "eac",
             method_params: Mapping[str, Any] | None = None, matrix: str = "auto", k_method: int | str | None = None,
             pac_interval: tuple[float, float] = (0.0, 1.0), max_bytes: int | None = None,
             random_state: RandomStateLike = None, n_jobs: int | None = None) -> EvaluationResult | MultiKEvaluation:
    """Score each algorithm of a heterogeneous ensemble on internal validity indices and rank them.

    diceR's ``consensus_evaluate`` (Chiu & Talhouk 2018); see the module docstring for every
    step and where it differs from diceR. With a list of K (``n_clusters=[3, 4, 5]``) or one
    ensemble per K (``{3: E3, 4: E4, 5: E5}``), every (algorithm, K) combination is evaluated
    as diceR's multi-K mode does (``consensus_cluster(nk = 3:5)`` then ``consensus_evaluate``),
    and a :class:`MultiKEvaluation` is returned; see there for how K is chosen.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the ensemble partitions.
    ensemble : Ensemble, array-like of shape (n_samples, n_partitions), or dict of int -> Ensemble
        The partitions; the algorithms are read from ``ensemble.provenance`` (an ensemble without
        provenance is one algorithm, ``"ensemble"``). A dict gives the partitions generated at
        each K (diceR's ensemble over ``nk``); one Ensemble with several K is fused at every K.
    n_clusters : int, list of int, or None
        K of each algorithm's consensus labelling, each in [2, n_samples - 1]. None only with a
        dict ``ensemble`` (its keys).
    labels_true : array-like of shape (n_samples,), default=None
        Reference classes: adds the external ARI and NMI (not used for ranking); with several K
        it also fixes the chosen K to its number of classes, as in diceR.
    method : str, default="eac"
        Registered consensus function fusing each algorithm's partitions.
    method_params : dict, default=None
        Its extra keyword arguments.
    matrix : {"auto", "dense", "sparse"}, default="auto"
        Route of the default ``eac``: "dense" is average linkage of the full n x n ``1 -
        co-association`` (refused past ``max_bytes``); "sparse" is single linkage of the kNN
        co-association graph of each object's 30 strongest pairs
        (:meth:`cclust.Ensemble.knn_coassociation`; :func:`cclust.consensus_functions.pairwise.eac`
        with ``n_neighbors``), memory linear in n; "auto" is dense while the dense route fits the
        budget. Other methods keep their own routes (only "auto" is accepted with them).
    k_method : None, int or "all", default=None
        With several K, which K trim and reweigh use (diceR's ``k.method``): None for the
        number of classes of ``labels_true``, else the K most algorithms find least ambiguous
        (PAC); an int for that K; "all" for every K.
    pac_interval : (float, float), default=(0.0, 1.0)
        ``(lower, upper)`` of PAC, the share of consensus entries strictly between them
        (diceR's ``PAC(lower = 0, upper = 1)``). Several K only.
    max_bytes : int, default=None
        Memory budget (``cclust.validation.memory_budget()`` when None).
    random_state : int, Generator or None
        Seeds the consensus function (algorithm i gets the i-th child seed; with several K
        every K is seeded alike, so ``result.per_k[K]`` equals a one-K evaluation at K).
    n_jobs : int, default=None
        Threads of the consensus function.

    Returns
    -------
    EvaluationResult, or MultiKEvaluation with several K

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.evaluation import evaluate
    >>> X, y = load_iris()
    >>> E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 5, "hierarchical": 5},
    ...                     random_state=0)
    >>> result = evaluate(X, E, 3, labels_true=y)
    >>> result.algorithms, sorted(result.indices)[:2]
    (('kmeans', 'hierarchical-average'), ['calinski_harabasz', 'compactness'])
    """
    _require_sklearn()
    if isinstance(ensemble, Mapping) or _is_k_list(n_clusters):
        return _evaluate_multi(X, ensemble, n_clusters, labels_true, method, method_params, matrix, k_method,
                               pac_interval, max_bytes, random_state, n_jobs)
    features, truth, fn, params = _check_common(X, labels_true, method, method_params)
    n = features.shape[0]
    ensemble = _as_same_objects(ensemble, n)
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, n - 1))
    if k_method is not None:
        raise ValidationError(f"k_method chooses among several K; n_clusters={n_clusters} is one K (give a list, "
                              "e.g. n_clusters=[3, 4, 5]).")
    route = _route(method, matrix, max_bytes)
    return _evaluate_one(features, ensemble, n_clusters, truth, fn, params, method, route, random_state, n_jobs)


# -- several K (diceR's multi-K mode) ---------------------------------------------------------------

def _k_values(n_clusters, ensemble, n):
    if isinstance(ensemble, Mapping):
        keys = sorted(check_int(k, "ensemble keys (K)", low=2, high=max(2, n - 1)) for k in ensemble)
        if not keys:
            raise ValidationError("ensemble is an empty dict; give one Ensemble per K, e.g. {3: E3, 4: E4}.")
        if n_clusters is not None:
            wanted = sorted({check_int(k, "n_clusters", low=2, high=max(2, n - 1))
                             for k in (n_clusters if _is_k_list(n_clusters) else [n_clusters])})
            if wanted != keys:
                raise ValidationError(f"n_clusters={list(wanted)} differs from the K of the ensemble dict {keys}; "
                                      "pass n_clusters=None to use the dict's keys.")
        return tuple(keys)
    if n_clusters is None:
        raise ValidationError("n_clusters=None needs ensemble as a dict K -> Ensemble; give n_clusters.")
    values = [check_int(k, "n_clusters", low=2, high=max(2, n - 1)) for k in n_clusters]
    if not values:
        raise ValidationError("n_clusters must hold at least one K, got an empty list.")
    return tuple(sorted(set(values)))


def _pac(ensemble, groups, pairs, interval):
    """diceR's PAC of each group's unweighted consensus matrix, from the exact entries of ``pairs``."""
    from cclust._monti import pair_values

    low, high = interval
    out = np.empty(len(groups))
    for a, idx in enumerate(groups):
        values = pair_values(ensemble.labels[:, idx], *pairs)
        out[a] = np.nan if not values.any() else float(np.count_nonzero((values > low) & (values < high))
                                                       / values.shape[0])
    return out


def _pac_pairs(n, root):
    """Every pair when there are at most a million, else a million random ones (select_k's sparse
    route at its default tolerance)."""
    from cclust._monti import PAIR_TOLERANCE, draw_pairs

    return draw_pairs(n, PAIR_TOLERANCE, np.random.default_rng(np.random.SeedSequence(root, spawn_key=(0,))))


def _choose_k(k_values, pac, truth, k_method):
    """diceR's ``choose_k``: (chosen K, rule)."""
    if len(k_values) == 1:
        return k_values, "all"
    if k_method is None and truth is not None:
        k = int(np.unique(truth).shape[0])
        if k not in k_values:
            raise ValidationError(f"labels_true has {k} classes, so diceR's rule evaluates K = {k}, which is not "
                                  f"among n_clusters={list(k_values)}; add it, or pass k_method.")
        return (k,), "labels_true"
    if k_method is None:
        votes = np.zeros(len(k_values), dtype=np.int64)
        for row in pac:
            if np.isfinite(row).any():
                votes[int(np.nanargmin(row))] += 1
        return (k_values[int(np.argmax(votes))],), "pac"
    if isinstance(k_method, str):
        if k_method != "all":
            raise ValidationError(f"k_method must be None, an int among n_clusters or 'all', got {k_method!r}.")
        return k_values, "all"
    k = check_int(k_method, "k_method")
    if k not in k_values:
        raise ValidationError(f"k_method={k} is not among the K evaluated, {list(k_values)}.")
    return (k,), "given"


def _evaluate_multi(X, ensemble, n_clusters, labels_true, method, method_params, matrix, k_method, pac_interval,
                    max_bytes, random_state, n_jobs):
    from cclust._pipeline import check_pac_interval, child_seeds

    features, truth, fn, params = _check_common(X, labels_true, method, method_params)
    n = features.shape[0]
    k_values = _k_values(n_clusters, ensemble, n)
    if isinstance(ensemble, Mapping):
        ensembles = {k: _as_same_objects(ensemble[k], n, f"ensemble[{k}]") for k in k_values}
    else:
        shared = _as_same_objects(ensemble, n)
        ensembles = {k: shared for k in k_values}
    interval = check_pac_interval(pac_interval)
    route = _route(method, matrix, max_bytes)
    root = child_seeds(random_state, 1)[0]
    pairs = _pac_pairs(n, root)
    per_k, pac_rows = {}, {}
    for k in k_values:
        per_k[k] = _evaluate_one(features, ensembles[k], k, truth, fn, params, method, route, root, n_jobs)
        pac_rows[k] = dict(zip(per_k[k].algorithms, _pac(ensembles[k], _groups(ensembles[k])[1], pairs, interval)))
    algorithms = tuple(dict.fromkeys(a for k in k_values for a in per_k[k].algorithms))
    pac = np.array([[pac_rows[k].get(a, np.nan) for k in k_values] for a in algorithms])
    chosen, rule = _choose_k(k_values, pac, truth, k_method)
    combinations = tuple((a, k) for k in k_values for a in per_k[k].algorithms)
    indices = {name: np.concatenate([per_k[k].indices[name] for k in k_values]) for name in INDICES}
    ranked, ranks = _rank_columns(indices, INDICES, len(combinations))
    order = tuple(combinations[i] for i in aggregate_ranks(ranks))
    return MultiKEvaluation(k_values, algorithms, per_k, pac, interval, tuple(int(k) for k in chosen), rule, ranked,
                            combinations, ranks, order, int(order[0][1]), str(method))
