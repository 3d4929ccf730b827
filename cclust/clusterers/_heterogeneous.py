"""Heterogeneous ensembles (diceR; Chiu & Talhouk 2018): several generators' partitions side by
side, each column's maker recorded in :attr:`cclust.Ensemble.provenance`."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.ensemble import Ensemble
from cclust.errors import ValidationError
from cclust.validation import RandomStateLike, check_array_2d, check_int, spawn_seed_sequences


#: The algorithms of a heterogeneous ensemble when none are named.
DEFAULT_GENERATORS = ("kmeans", "hierarchical", "pam", "gmm")


def _spec_entries(generators, n_partitions):
    """[(name, count, params)] from the accepted spellings of ``generators``."""
    entries, default = parsed_entries(generators)
    counted = [e for e in entries if e[1] is not None]
    if counted:
        total = sum(e[1] for e in entries)
        if n_partitions is not None and check_int(n_partitions, "n_partitions", low=1) != total:
            raise ValidationError(f"heterogeneous: n_partitions={n_partitions} differs from the sum of the counts in "
                                  f"generators ({total}); leave n_partitions out or make them agree.")
    else:
        total = check_int(100 if n_partitions is None else n_partitions, "n_partitions", low=1)
        if total < len(entries) and not default:
            raise ValidationError(f"heterogeneous: n_partitions={total} is fewer than the {len(entries)} generators.")
        share, extra = divmod(total, len(entries))
        for i, e in enumerate(entries):
            e[1] = share + (i < extra)
        entries = [e for e in entries if e[1] > 0]  # the default's last ones, when n_partitions < 4
    return entries


def parsed_entries(generators):
    """([name, count or None, params] per generator, whether they are the default set), checked:
    a count for every generator or for none."""
    where = "heterogeneous: generators"
    default = generators is None
    if default:
        generators = DEFAULT_GENERATORS
    if isinstance(generators, str):
        generators = [generators]
    if hasattr(generators, "items"):
        items = list(generators.items())
    else:
        items = []
        for entry in generators:
            if isinstance(entry, str):
                name, sep, count = entry.partition(":")
                items.append((name.strip(), int(count) if sep and count.strip().isdigit() else
                              (count if sep else None)))
            elif isinstance(entry, (tuple, list)) and 1 <= len(entry) <= 3:
                items.append(tuple(entry) if len(entry) > 1 else (entry[0], None))
            else:
                raise ValidationError(f"{where} entries must be names, 'name:count' strings or (name, count[, params]) "
                                      f"tuples, got {entry!r}.")
    if not items:
        raise ValidationError(f"{where} must name at least one generator, got none.")
    entries = []
    for item in items:
        name, count = item[0], item[1]
        params = dict(item[2]) if len(item) > 2 and item[2] else {}
        if isinstance(count, dict):
            params = dict(count)
            count = params.pop("n_partitions", None)
        if not isinstance(name, str):
            raise ValidationError(f"{where}: a generator must be given by its registered name, got {name!r}.")
        if count is not None and (isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1):
            raise ValidationError(f"{where}: the count of {name!r} must be a positive int, got {count!r}.")
        entries.append([name, None if count is None else int(count), params])
    counted = [e for e in entries if e[1] is not None]
    if counted and len(counted) != len(entries):
        raise ValidationError(f"{where}: give a count for every generator or for none, got "
                              f"{[(e[0], e[1]) for e in entries]}.")
    return entries, default


def heterogeneous(X: npt.ArrayLike, n_clusters: int, *, generators: Any = None, n_partitions: int | None = None,
                  random_state: RandomStateLike = None, n_jobs: int | None = None, verbose: int = 0) -> Ensemble:
    """Several generators in one ensemble: their partitions side by side, each column's maker recorded.

    The heterogeneous ensembles of diceR (Chiu & Talhouk 2018), where each algorithm
    contributes its own partitions. Generator i runs with the i-th child of the seed, so the
    ensemble is the same for any ``n_jobs``, and its columns follow in the order given.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        K, passed to every generator.
    generators : dict, sequence or None, default=None
        Which generators, how many partitions each and with what parameters, any of:
        ``{"kmeans": 50, "hierarchical": 25, "gmm": 25}`` (name -> count),
        ``{"hierarchical": {"n_partitions": 25, "linkage": "ward"}, ...}`` (name -> parameters),
        ``["kmeans:50", "pam:50"]``, ``[("hierarchical", 25, {"linkage": "ward"}),
        ("hierarchical", 25, {"linkage": "complete"})]`` (repeats allowed), or names without
        counts (``["kmeans", "gmm"]``), which share ``n_partitions`` evenly (the first get one
        more when it does not divide). Any registered generator name works, the presets of
        :func:`estimator` included. Default: ``kmeans``, ``hierarchical``, ``pam`` and ``gmm``
        sharing ``n_partitions`` (with fewer than 4 partitions, the first ones only).
    n_partitions : int, default=None
        Total partitions; with counts it must be None or their sum; without counts, None
        means 100.
    random_state : int, Generator or None
    n_jobs : int, default=None
        Passed to each generator (partitions in parallel threads); results do not depend on it.
    verbose : int, default=0

    Returns
    -------
    Ensemble
        ``provenance`` holds, per partition, the provenance its generator recorded (e.g.
        ``hierarchical-ward``) or else the generator's name.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> X, _ = load_iris()
    >>> E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 2, "pam": 1, "gmm": 1},
    ...                     random_state=0)
    >>> E.provenance
    ('kmeans', 'kmeans', 'pam', 'gmm')
    """
    from cclust.base import accepts
    from cclust.registry import get
    from cclust.validation import check_n_jobs

    entries = _spec_entries(generators, n_partitions)
    check_n_jobs(n_jobs, "n_jobs")
    fns = []
    for name, _, params in entries:
        if name == "heterogeneous":
            raise ValidationError("heterogeneous: generators cannot include 'heterogeneous' itself.")
        fn = get(name, kind="generator")
        for key in params:
            if key in ("n_partitions", "random_state", "n_jobs") or not accepts(fn, key):
                raise ValidationError(f"heterogeneous: generators: {key}=... is not a parameter of {name!r} that "
                                      "can be set here.")
        fns.append(fn)
    X = check_array_2d(X, "X")
    seeds = spawn_seed_sequences(random_state, len(entries))
    labels, provenance = [], []
    for (name, count, params), fn, seed in zip(entries, fns, seeds):
        if verbose and accepts(fn, "verbose", var_keyword=False):
            params = dict(params, verbose=verbose)
        part = fn(X, n_clusters, n_partitions=count, random_state=seed, n_jobs=n_jobs, **params)
        labels.append(np.asarray(part.labels))
        provenance += list(part.provenance) if getattr(part, "provenance", None) else [name] * part.n_partitions
    return Ensemble(np.column_stack(labels), provenance=provenance)
