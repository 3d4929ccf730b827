"""Generate, then fuse: the steps :class:`~cclust.ConsensusClustering`, :func:`cclust.select_k`
and the ``cclust`` command share.

Validating X and the parameter dicts, deriving independent seeds from one ``random_state``,
running a registered generator, and calling a consensus function with only the keywords its
signature takes (X, threads, verbosity).
"""
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from cclust.validation import check_array_2d, check_float, spawn_seed_sequences
from cclust.errors import ValidationError
from cclust.base import accepts

# Keywords the estimator and select_k pass themselves; putting them in method_params/generator_params
# would make the same argument come from two places.
RESERVED_METHOD = ("ensemble", "n_clusters", "random_state", "X", "n_threads", "n_jobs")
RESERVED_GENERATOR = ("X", "n_clusters", "n_partitions", "random_state", "n_jobs")


def check_name(value, name):
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a registered name (a str), got {value!r}.")
    return value


def check_params_dict(params, name, reserved, owner):
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ValidationError(
            f"{name} must be a dict of keyword arguments or None, got {type(params).__name__} {params!r}."
        )
    bad = [key for key in params if not isinstance(key, str)]
    if bad:
        raise ValidationError(f"{name} keys must be parameter names (str), got {bad[0]!r}.")
    clash = [key for key in params if key in reserved]
    if clash:
        raise ValidationError(
            f"{name} must not contain {clash[0]!r}: {owner} passes it itself; set it through "
            f"{owner}'s own parameters (n_clusters, n_partitions, random_state, n_jobs) instead."
        )
    return dict(params)


#: the values of ``missing_features`` (the Python side of the CLI's --missing-features)
MISSING_FEATURES = ("error", "mean")


def object_index(X):
    """The row labels of a pandas DataFrame or Series (its ``index``), else None."""
    if hasattr(X, "index") and hasattr(X, "iloc"):
        return X.index
    return None


def _label(values, position):
    """``'b' (position 1)`` for a labelled axis, ``1`` for a positional one."""
    if values is None:
        return str(position)
    label = values[position]
    if isinstance(label, (int, np.integer)) and label == position:
        return str(position)
    return f"{label!r} (position {position})"


def nonfinite_error(name, where, infinite, n_holes):
    """The refusal of features holding infinity (``infinite``) or ``n_holes`` NaN cells, the
    first bad one at ``where`` ("row 3, column 1")."""
    if infinite:
        return ValidationError(f"{name} contains infinity (first at {where}); replace or drop those values first.")
    return ValidationError(
        f"{name} contains NaN (first at {where}; {n_holes} in all); impute or drop those values first, "
        "or pass missing_features='mean' to fill each with the mean of its column.")


def fill_missing_features(array, name="X", missing_features="error", index=None, columns=None):
    """NaN cells refused (naming their row and column, by label for a DataFrame) or, with
    ``missing_features="mean"``, filled with their column's mean in a new array. Infinities
    are always refused."""
    if missing_features not in MISSING_FEATURES:
        raise ValidationError(f"missing_features must be one of {list(MISSING_FEATURES)}, got {missing_features!r}.")
    if array.dtype.kind != "f":
        return array
    finite = np.isfinite(array)
    if finite.all():
        return array
    infinite = np.isinf(array)
    holes = np.isnan(array)
    bad = np.argwhere(infinite if infinite.any() else holes)[0]
    where = f"row {_label(index, bad[0])}, column {_label(columns, bad[1])}"
    if infinite.any() or missing_features == "error":
        raise nonfinite_error(name, where, bool(infinite.any()), int(holes.sum()))
    empty = np.flatnonzero(holes.all(axis=0))
    if empty.size:
        raise ValidationError(f"{name}: missing_features='mean': column {_label(columns, empty[0])} has no value at "
                              "all to take a mean of; drop that column.")
    filled = array.copy()
    filled[holes] = np.take(np.nanmean(array, axis=0), np.nonzero(holes)[1])
    return filled


def validate_X(X: Any, name: str = "X", missing_features: str = "error") -> tuple[np.ndarray, np.ndarray | None]:
    """A C-contiguous float64 copy-or-view of X and its string column names (or None).

    NaN cells are refused with their row and column (their labels for a DataFrame), or filled
    with the column mean when ``missing_features="mean"``.

    The messages follow scikit-learn's wording where its estimator checks look for it
    ("0 feature(s) (shape=...) while a minimum of 1 is required", "n_samples=1", "Complex data
    not supported", "sparse").
    """
    feature_names = None
    index = object_index(X)
    columns = None
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        columns = np.asarray(list(X.columns), dtype=object)
        if len(columns) and all(isinstance(c, str) for c in columns):
            feature_names = columns
    if hasattr(X, "tocsr") or type(X).__module__.startswith("scipy.sparse"):
        raise ValidationError(
            f"{name} is a sparse matrix, but sparse input is not supported; pass a dense array "
            f"({name}.toarray()) or reduce it first (e.g. TruncatedSVD)."
        )
    if hasattr(X, "__dask_graph__"):
        raise ValidationError(f"{name} is a dask array; call .compute() first.")
    array = np.asarray(X)
    if array.dtype.kind == "c":
        raise ValidationError(
            f"Complex data not supported: {name} has dtype {array.dtype}; pass real features "
            "(e.g. the real part, the modulus, or both as separate columns)."
        )
    if array.dtype.kind == "O":
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name} must hold numbers only: {exc}") from None
    if array.ndim != 2:
        raise ValidationError(
            f"{name} must be 2-D (n_samples, n_features), got an array of shape {array.shape}; "
            "reshape a single feature with X.reshape(-1, 1) or a single sample with X.reshape(1, -1)."
        )
    n, d = array.shape
    if n == 0:
        raise ValidationError(f"{name} has 0 sample(s) (shape={array.shape}) while a minimum of 2 is required.")
    if d == 0:
        raise ValidationError(f"{name} has 0 feature(s) (shape={array.shape}) while a minimum of 1 is required.")
    if n == 1:
        raise ValidationError(f"{name} has n_samples=1; consensus clustering needs at least 2 samples.")
    if array.dtype.kind in "biuf":
        array = fill_missing_features(np.asarray(array, dtype=np.float64), name, missing_features,
                                      None if index is None else np.asarray(index, dtype=object), columns)
    return check_array_2d(array, name), feature_names


def check_counted_partitions(generator, params, n_partitions, owner):
    """Refuse ``n_partitions`` that differs from the counts a heterogeneous generator was given,
    with advice the caller of ``owner`` can follow (its own n_partitions, which has a default)."""
    if generator != "heterogeneous" or params.get("generators") is None:
        return
    from cclust.clusterers._heterogeneous import parsed_entries

    try:
        entries, _ = parsed_entries(params["generators"])
    except (ValidationError, TypeError, ValueError):
        return  # malformed: the generator's own checks say so
    if any(entry[1] is None for entry in entries):
        return
    total = sum(entry[1] for entry in entries)
    if total != n_partitions:
        raise ValidationError(
            f"{owner}: n_partitions={n_partitions} differs from the sum of the counts in "
            f"generator_params['generators'] ({total}); pass n_partitions={total} to {owner}, or drop the counts "
            f"so that its n_partitions is shared among the generators.")


def child_seeds(random_state, count, name="random_state"):
    """``count`` independent uint32 seeds derived from ``random_state``
    (:func:`cclust.validation.spawn_seed_sequences`): the same int always gives the same seeds.
    uint32, because every numpy API and every plugin that follows scikit-learn's convention
    accepts it."""
    return [int(child.generate_state(1, dtype=np.uint32)[0])
            for child in spawn_seed_sequences(random_state, count, name)]


def generate_ensemble(generator, X, n_clusters, n_partitions, params, seed, n_jobs, verbose):
    """Run the registered ``generator`` with the keywords it accepts (see ConsensusClustering)."""
    from cclust.registry import get

    gen = get(generator, kind="generator")
    kwargs = dict(params)
    k = n_clusters
    if k is None or k < 2:
        # Choosing methods (and the trivial K=1) still need partitions with several clusters.
        k = min(2, X.shape[0])
        if n_clusters is None and "k_range" not in kwargs and accepts(gen, "k_range"):
            kwargs["k_range"] = (2, max(2, min(X.shape[0], math.ceil(math.sqrt(X.shape[0])))))
    if verbose and accepts(gen, "verbose"):
        kwargs["verbose"] = verbose
    return gen(X, k, n_partitions=n_partitions, random_state=seed, n_jobs=n_jobs, **kwargs)


def call_method(fn, ensemble, n_clusters, params, seed, X, n_jobs, verbose):
    """Call a consensus function with X / threads / verbose when its signature takes them."""
    from cclust.base import method_info
    from cclust.validation import memory_refusal

    kwargs = dict(params)
    if X is not None and (method_info(fn).requires_X or accepts(fn, "X", var_keyword=False)):
        kwargs["X"] = X
    if accepts(fn, "n_jobs", var_keyword=False):
        kwargs["n_jobs"] = n_jobs
    elif accepts(fn, "n_threads", var_keyword=False):  # a third party's function may still say n_threads
        kwargs["n_threads"] = n_jobs
    if verbose and accepts(fn, "verbose", var_keyword=False):
        kwargs["verbose"] = verbose
    # the registered names are the functions' names with '-' for '_' (gp_mgla is "gp-mgla")
    with memory_refusal(getattr(fn, "__name__", "the consensus function").replace("_", "-")):
        return fn(ensemble, n_clusters, random_state=seed, **kwargs)


def check_sampling_weights(weights, name, length, draws, what, fraction):
    """CCP's weightsItem/weightsFeature: None, or a finite non-negative vector of ``length``
    with at least ``draws`` positive entries (R's ``sample`` needs as many to draw from)."""
    if weights is None:
        return None
    try:
        w = np.array(weights, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValidationError(f"{name} must be an array of {length} non-negative numbers, got {weights!r}.") from None
    if w.ndim != 1 or w.shape[0] != length:
        raise ValidationError(f"{name} must have one weight per {what[:-1]} ({length}), got shape {w.shape}.")
    if not np.isfinite(w).all():
        bad = int(np.flatnonzero(~np.isfinite(w))[0])
        raise ValidationError(f"{name} must be finite, got {w[bad]!r} at index {bad}.")
    if (w < 0).any():
        bad = int(np.flatnonzero(w < 0)[0])
        raise ValidationError(f"{name} must be non-negative, got {w[bad]!r} at index {bad}.")
    positive = int((w > 0).sum())
    if positive < draws:
        raise ValidationError(f"{name} has {positive} positive weights, but each resample draws {draws} {what} "
                              f"without replacement; give more positive weights or lower {fraction}.")
    return w


def check_pac_interval(pac_interval):
    """``pac_interval`` as the pair ``(u1, u2)`` with ``0 <= u1 < u2 <= 1`` (PAC's window)."""
    try:
        low, high = pac_interval
    except (TypeError, ValueError):
        raise ValidationError(f"pac_interval must be a pair (u1, u2), got {pac_interval!r}.") from None
    low = check_float(low, "pac_interval[0]", low=0, high=1)
    high = check_float(high, "pac_interval[1]", low=0, high=1)
    if not low < high:
        raise ValidationError(f"pac_interval must satisfy 0 <= u1 < u2 <= 1, got {pac_interval!r}.")
    return low, high
