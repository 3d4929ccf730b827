"""The work behind a report: choose K, generate and fuse an ensemble, compare methods, rank
markers; every number the page shows, and the labels its manifest records.

Everything here is decided by the features and one dict of JSON-ready parameters, so that a
manifest holding those parameters replays the same work (:func:`compute`).
"""
import inspect
import time

import numpy as np

from cclust.errors import CclustError, ValidationError
from cclust.selection._select_k import SKETCH_FROM

#: the consensus methods compared by default: each works on the ensemble's clusters, not on an
#: n x n matrix, so the comparison stays linear in the number of objects
DEFAULT_METHODS = ("kcc", "mcla", "hbgf")

#: above select_k's own threshold for sketching (SKETCH_FROM) the report's select_k runs on one
#: geometric sketch of SKETCH_SIZE objects (Hie et al. 2019), smaller than select_k's default,
#: since the report also generates and fuses an ensemble, unless the caller chooses ``sketch``
#: itself; and the ensemble has LARGE_PARTITIONS basic partitions unless the caller says how
#: many: at 100000 objects in 50 dimensions, 50 k-means partitions took 3 times as long as
#: select_k on a sketch of 2000 objects
SKETCH_SIZE = 2000
PARTITIONS, LARGE_PARTITIONS = 50, 20

#: the select_k keywords a report passes on (JSON values only; the rest are the report's own)
SELECT_K_KEYS = ("method", "inner", "n_resamples", "subsample", "null", "n_references", "alpha", "criterion",
                 "matrix", "sketch", "sketch_method", "propagation")


def _standardize(X):
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def resolve_parameters(n, k_range=(2, 6), *, methods=None, generator="kmeans", n_partitions=None,
                       standardize=False, n_top_markers=5, random_state=0, select_k_params=None):
    """The report's parameters checked and completed (defaults written out), as a JSON-ready
    dict: what :func:`compute` runs and what a manifest records."""
    from cclust.validation import check_int

    try:
        low, high = (int(v) for v in k_range)
    except (TypeError, ValueError):
        raise ValidationError(f"k_range must be two integers (LOW, HIGH), got {k_range!r}.") from None
    if not 1 <= low <= high <= n:
        raise ValidationError(f"k_range must satisfy 1 <= LOW <= HIGH <= the number of objects ({n}), got "
                              f"({low}, {high}).")
    if high < 2:
        raise ValidationError(f"k_range must reach K = 2 at least (HIGH >= 2), got ({low}, {high}).")
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, (int, np.integer)) \
            or random_state < 0:
        raise ValidationError(f"random_state must be a non-negative integer (the manifest records it so that the "
                              f"run can be replayed), got {random_state!r}.")
    methods = list(DEFAULT_METHODS if methods is None else ([methods] if isinstance(methods, str) else methods))
    if not methods or not all(isinstance(m, str) for m in methods):
        raise ValidationError(f"methods must be a list of consensus method names, got {methods!r}.")
    import cclust

    for name in methods:  # an unknown name fails here, with the closest registered one
        cclust.get(name, kind="consensus")
    select = dict(select_k_params or {})
    unknown = sorted(set(select) - set(SELECT_K_KEYS))
    if unknown:
        raise ValidationError(f"select_k_params has unknown key(s) {unknown}; a report passes on "
                              f"{', '.join(SELECT_K_KEYS)}.")
    if "sketch" not in select and n > SKETCH_FROM:
        select["sketch"] = SKETCH_SIZE
    if n_partitions is None:
        n_partitions = LARGE_PARTITIONS if n > SKETCH_FROM else PARTITIONS
    return {"k_range": [low, high], "methods": methods, "generator": str(generator),
            "n_partitions": check_int(n_partitions, "n_partitions", low=2), "standardize": bool(standardize),
            "n_top_markers": check_int(n_top_markers, "n_top_markers", low=1), "random_state": int(random_state),
            "select_k": select}


def _diversity(ensemble):
    """Each basic partition's mean NMI with the other partitions, summarised by its mean and
    standard deviation over the partitions.

    One compiled pass per partition (:func:`cclust.metrics.consensus_score` of the partition
    against the whole ensemble, its own term taken out) instead of one per pair: at 100000
    objects and 50 partitions, the 1225 pairwise NMIs took a minute.
    """
    from cclust.metrics import consensus_score, nmi

    labels = np.asarray(ensemble.labels)
    r = labels.shape[1]
    weights = np.ones(r) if ensemble.weights is None else np.asarray(ensemble.weights, dtype=np.float64)
    weights = weights / weights.sum()
    others = np.empty(r)
    for i in range(r):
        column = labels[:, i]
        if (column >= 0).all() and weights[i] < 1:
            others[i] = (float(consensus_score(column, ensemble)) - weights[i]) / (1.0 - weights[i])
        else:  # objects missing from partition i: each pair on the objects both label
            values = []
            for j in range(r):
                keep = (column >= 0) & (labels[:, j] >= 0)
                if j != i and keep.any():
                    values.append(weights[j] * float(nmi(column[keep], labels[keep, j])))
            others[i] = sum(values) / (1.0 - weights[i]) if values else float("nan")
    return {"partitions": r, "nmi_mean": float(np.nanmean(others)),
            "nmi_sd": float(np.nanstd(others, ddof=1)) if r > 1 else float("nan")}


def _compare_methods(names, ensemble, k, X, seed, reference, y, n_jobs):
    """One row per method: K, ANMI with the ensemble, ARI with the chosen labels (and with the
    true classes when known), seconds; a method that fails gets its error as a note."""
    import cclust
    from cclust.base import method_info

    rows = []
    for name in names:
        row = {"method": name, "labels": None, "note": ""}
        start = time.perf_counter()
        try:
            fn = cclust.get(name, kind="consensus")
            params = {"random_state": seed}
            if method_info(fn).requires_X:
                params["X"] = X
            if n_jobs is not None and "n_jobs" in inspect.signature(fn).parameters:
                params["n_jobs"] = n_jobs
            result = fn(ensemble, k, **params)
        except (CclustError, ValueError, MemoryError, ImportError, LookupError) as exc:
            row.update(seconds=time.perf_counter() - start, note=" ".join(str(exc).split()))
            rows.append(row)
            continue
        labels = np.asarray(result.labels, dtype=np.int64)
        row.update(labels=labels, seconds=time.perf_counter() - start, n_clusters=int(result.n_clusters),
                   agreement=float(cclust.get("consensus-score")(labels, ensemble)),
                   ari_chosen=float(cclust.get("ari")(reference, labels)))
        if y is not None:
            row["ari_true"] = float(cclust.get("ari")(y, labels))
        rows.append(row)
    return rows


def _steps(params):
    return 4 + len(params["methods"])


def compute(X, params, *, y=None, feature_names=None, n_jobs=None, verbose=0, markers=True):
    """Run what ``params`` (from :func:`resolve_parameters`) describes on the features ``X``.

    Returns a dict: ``X`` (as clustered), ``select`` (the SelectKResult), ``k`` (the K the
    sections below the choice show: the chosen one, or the smallest K >= 2 tried when the
    choice is K = 1), ``ensemble``, ``diversity``, ``methods`` (rows), ``markers`` (every
    feature's row per cluster, a dict of lists; None for a single cluster) and ``labels`` ({name: int64 labels} that the manifest records).
    """
    import cclust
    from cclust._progress import progress

    X = _standardize(X) if params["standardize"] else X
    seed = params["random_state"]
    low, high = params["k_range"]
    out = {"X": X}
    with progress(total=_steps(params), desc="report", verbose=verbose) as bar:
        select = cclust.select_k(X, range(low, high + 1), random_state=seed, keep_matrices=True, n_jobs=n_jobs,
                                 verbose=verbose, **params["select_k"])
        bar.update(1)
        k = int(select.best_k) if select.best_k >= 2 else int(min(v for v in select.k_values.tolist() if v >= 2))
        chosen = np.asarray(select.labels[k], dtype=np.int64)
        extra = {"verbose": verbose} if "verbose" in inspect.signature(
            cclust.get(params["generator"], kind="generator")).parameters else {}
        ensemble = cclust.generate(params["generator"], X, k, n_partitions=params["n_partitions"],
                                   random_state=seed, n_jobs=n_jobs, **extra)
        bar.update(1)
        diversity = _diversity(ensemble)
        diversity["anmi_chosen"] = float(cclust.get("consensus-score")(chosen, ensemble))
        bar.update(1)
        rows = []
        for name in params["methods"]:
            rows += _compare_methods([name], ensemble, k, X, seed, chosen, y, n_jobs)
            bar.update(1)
        table = None
        if markers and np.unique(chosen).shape[0] >= 2:
            # every feature: the dot plot scores the features it shows in every cluster
            table = cclust.markers(X, chosen, feature_names=feature_names, as_frame=False)
        bar.update(1)
    labels = {f"select_k K={select.best_k}": np.asarray(select.labels[select.best_k], dtype=np.int64)}
    labels.update((row["method"], row["labels"]) for row in rows if row["labels"] is not None)
    out.update(select=select, k=k, ensemble=ensemble, diversity=diversity, methods=rows, markers=table,
               labels=labels)
    return out
