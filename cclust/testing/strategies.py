"""Hypothesis strategies for valid cclust inputs.

Drawing from them needs hypothesis (in the ``test`` extra: ``pip install hypothesis``); the
module itself imports without it, so its pages build from the ``docs`` extra alone and
``help()`` shows each strategy's real signature.

>>> from hypothesis import given
>>> from cclust.testing.strategies import ensembles
>>> @given(ensembles(max_n=20, missing=True))
... def test_something(ensemble):
...     assert ensemble.labels.min() >= -1

Every example is a valid input: each partition labels at least one object, labels are
``0..K_i-1`` before relabelling (with possibly unused values, which ``Ensemble`` drops), ``-1``
marks a missing label, and weights are non-negative and not all zero.
"""
import functools
import inspect

import numpy as np

__all__ = ["PROFILES", "degenerate_ensembles", "ensembles", "label_columns", "labellings", "profile",
           "register_profiles"]

#: The hypothesis profiles cclust's property tests use. ``cclust-ci`` (the default run) is
#: derandomized: the same examples every run, so a red CI build is reproducible and a green one
#: is not luck. ``cclust-dev`` draws fresh random examples, more of them, for exploring locally
#: (``CCLUST_HYPOTHESIS_PROFILE=cclust-dev python -m pytest tests/test_properties.py``).
PROFILES = {
    "cclust-ci": {"derandomize": True, "deadline": None, "database": None, "max_examples": 20,
                  "print_blob": True},
    "cclust-dev": {"derandomize": False, "deadline": None, "max_examples": 200, "print_blob": True},
}


def _hypothesis(module="hypothesis"):
    """Import hypothesis (or one of its modules), saying how to get it when it is missing."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            "cclust.testing.strategies needs hypothesis to draw examples: pip install hypothesis "
            "(it comes with cclust's test extra)."
        ) from None


def _composite(function):
    """``hypothesis.strategies.composite``, applied on the first call rather than at import.

    The returned function has the strategy's signature (``function``'s without ``draw``) and
    returns what the composite would.
    """
    composite = None

    @functools.wraps(function)
    def strategy(*args, **kwargs):
        nonlocal composite
        if composite is None:
            composite = _hypothesis("hypothesis.strategies").composite(function)
        return composite(*args, **kwargs)

    signature = inspect.signature(function)
    strategy.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])
    return strategy


def register_profiles():
    """Register :data:`PROFILES` with hypothesis (idempotent)."""
    hypothesis = _hypothesis()
    Phase, settings = hypothesis.Phase, hypothesis.settings

    # No "explain" phase: it imports optional tooling whose deprecation warnings would turn a
    # test failure into a pytest internal error under filterwarnings=error.
    phases = tuple(p for p in Phase if p is not Phase.explain)
    for name, values in PROFILES.items():
        settings.register_profile(name, phases=phases, **values)


def profile(name=None):
    """The settings of a cclust profile, to use as ``@settings(profile(), max_examples=...)``.

    Parameters
    ----------
    name : str, default=None
        A key of :data:`PROFILES`; None reads the ``CCLUST_HYPOTHESIS_PROFILE`` environment
        variable, and falls back to ``"cclust-ci"``.

    Returns
    -------
    hypothesis.settings

    Raises
    ------
    ValueError
        If the name is not a cclust profile.

    Examples
    --------
    >>> from cclust.testing.strategies import profile
    >>> profile("cclust-ci").derandomize
    True
    """
    import os

    settings = _hypothesis().settings
    register_profiles()
    name = name or os.environ.get("CCLUST_HYPOTHESIS_PROFILE") or "cclust-ci"
    if name not in PROFILES:
        raise ValueError(f"CCLUST_HYPOTHESIS_PROFILE must be one of {sorted(PROFILES)}, got {name!r}.")
    return settings.get_profile(name)


def _check_bounds(min_n, max_n, min_partitions, max_partitions, max_k):
    if not 1 <= min_n <= max_n:
        raise ValueError(f"need 1 <= min_n <= max_n, got min_n={min_n}, max_n={max_n}.")
    if not 1 <= min_partitions <= max_partitions:
        raise ValueError(f"need 1 <= min_partitions <= max_partitions, got {min_partitions} and {max_partitions}.")
    if max_k < 1:
        raise ValueError(f"max_k must be at least 1, got {max_k}.")


def labellings(n_samples, *, max_k=5):
    """One labelling of ``n_samples`` objects: an int64 array of values in ``0..k-1``.

    Parameters
    ----------
    n_samples : int
    max_k : int, default=5
        Largest number of distinct labels (also capped at ``n_samples``).
    """
    st = _hypothesis("hypothesis.strategies")
    k_cap = max(1, min(max_k, n_samples))
    return st.integers(1, k_cap).flatmap(
        lambda k: st.lists(st.integers(0, k - 1), min_size=n_samples, max_size=n_samples)
    ).map(lambda values: np.array(values, dtype=np.int64))


@_composite
def label_columns(draw, min_n=1, max_n=30, max_partitions=6, max_k=5, *, min_partitions=1,
                  missing=False, every_object_labelled=True):
    """A list of 1-D int64 labellings of the same n objects: valid ``Ensemble(labels)`` input.

    Parameters
    ----------
    min_n, max_n : int, default=1, 30
        Range of the number of objects.
    max_partitions : int, default=6
    max_k : int, default=5
        Largest number of clusters of one partition.
    min_partitions : int, default=1
    missing : bool, default=False
        Whether some labels are ``-1`` (missing). Each partition keeps at least one label.
    every_object_labelled : bool, default=True
        With ``missing``, whether every object keeps a label in at least one partition.
    """
    st = _hypothesis("hypothesis.strategies")
    _check_bounds(min_n, max_n, min_partitions, max_partitions, max_k)
    n = draw(st.integers(min_n, max_n))
    r = draw(st.integers(min_partitions, max_partitions))
    columns = [draw(labellings(n, max_k=max_k)) for _ in range(r)]
    if missing:
        matrix = np.column_stack(columns)
        mask = np.array(draw(st.lists(st.booleans(), min_size=n * r, max_size=n * r)),
                        dtype=bool).reshape(n, r)
        mask[np.arange(n) == draw(st.integers(0, n - 1)), :] = False  # one object labelled everywhere
        if every_object_labelled:
            mask[mask.all(axis=1), 0] = False
        matrix[mask] = -1
        columns = [matrix[:, j].copy() for j in range(r)]
    return columns


@_composite
def ensembles(draw, min_n=1, max_n=30, max_partitions=6, max_k=5, *, min_partitions=1,
              missing=False, weights=False):
    """A valid :class:`cclust.Ensemble`.

    Parameters
    ----------
    min_n, max_n, max_partitions, max_k, min_partitions, missing
        As for :func:`label_columns`.
    weights : bool, default=False
        Whether to draw partition weights (non-negative, at least one positive) instead of
        leaving them equal.
    """
    from cclust.ensemble import Ensemble

    st = _hypothesis("hypothesis.strategies")
    columns = draw(label_columns(min_n, max_n, max_partitions, max_k, min_partitions=min_partitions,
                                 missing=missing))
    w = None
    if weights:
        r = len(columns)
        w = np.array(draw(st.lists(st.floats(0.0, 10.0, allow_nan=False, allow_infinity=False),
                                   min_size=r, max_size=r)))
        w[draw(st.integers(0, r - 1))] += 1.0  # never all zero
    return Ensemble(columns, weights=w)


#: The shapes :func:`degenerate_ensembles` draws from.
DEGENERATE_SHAPES = ("one-object", "two-objects", "one-partition", "all-in-one-cluster",
                     "every-object-alone", "identical-partitions", "one-labelled-object-per-partition")


@_composite
def degenerate_ensembles(draw, max_n=8, max_partitions=4):
    """A valid :class:`cclust.Ensemble` of a degenerate shape (see :data:`DEGENERATE_SHAPES`):
    one or two objects, one partition, every object in one cluster, every object alone,
    identical partitions, or partitions that label a single object each (the rest missing; the
    first partition also labels the objects no other partition does).
    Cluster names and the number of partitions are drawn too.
    """
    from cclust.ensemble import Ensemble

    st = _hypothesis("hypothesis.strategies")
    shape = draw(st.sampled_from(DEGENERATE_SHAPES))
    r = draw(st.integers(1, max_partitions))
    n = {"one-object": 1, "two-objects": 2}.get(shape) or draw(st.integers(3, max(3, max_n)))
    if shape == "one-partition":
        r = 1
    rename = draw(st.permutations(range(n)))
    if shape in ("all-in-one-cluster", "one-object"):
        column = np.zeros(n, dtype=np.int64)
    elif shape == "every-object-alone":
        column = np.array(rename, dtype=np.int64)
    else:
        column = draw(labellings(n, max_k=3))
    if shape == "one-labelled-object-per-partition":
        matrix = np.full((n, r), -1, dtype=np.int64)
        for j in range(r):
            matrix[draw(st.integers(0, n - 1)), j] = 0
        matrix[(matrix < 0).all(axis=1), 0] = 1  # every object keeps a label somewhere
    elif shape in ("identical-partitions", "one-partition", "two-objects"):
        # The same partition in every column, its clusters named differently in each.
        names = [np.array(draw(st.permutations(range(n))), dtype=np.int64) for _ in range(r)]
        matrix = np.column_stack([names[j][column] for j in range(r)])
    else:
        matrix = np.column_stack([column] * r)
    return Ensemble(matrix)
