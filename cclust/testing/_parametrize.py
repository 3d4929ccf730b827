"""``parametrize_with_checks``: one pytest test per (function, check) pair."""
from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

from cclust.testing._consensus import CONSENSUS_CHECKS
from cclust.testing._generator import GENERATOR_CHECKS, UTILITY_CHECKS
from cclust.testing._metric import METRIC_CHECKS

#: kind -> the checks of that kind
CHECKS = MappingProxyType({
    "consensus": CONSENSUS_CHECKS,
    "metric": METRIC_CHECKS,
    "generator": GENERATOR_CHECKS,
    "utility": UTILITY_CHECKS,
})

__all__ = ["CHECKS", "parametrize_with_checks"]


def _kind_of(item, kind):
    from cclust.registry import available
    from cclust.base import KINDS

    if kind is not None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))} or None, got {kind!r}.")
        return kind
    if isinstance(item, str):
        rows = available()
        if item not in rows:
            from cclust.registry import get

            get(item)  # raises UnknownNameError with suggestions
        return rows[item].kind
    from cclust.base import Utility

    if isinstance(item, Utility):
        return "utility"
    raise ValueError(
        f"cannot tell the kind of {item!r}: pass kind='consensus', 'generator', 'metric' or "
        f"'utility' to parametrize_with_checks, or give a registered name instead."
    )


def _label(item):
    if isinstance(item, str):
        return item
    return getattr(item, "__name__", None) or getattr(item, "name", None) or type(item).__name__


def _bind(check, options):
    """``check`` with the options it accepts bound (each check takes only some of them)."""
    accepted = inspect.signature(check).parameters
    kwargs = {k: v for k, v in options.items() if k in accepted}
    if not kwargs:
        return check
    bound = partial(check, **kwargs)
    bound.__name__ = check.__name__
    return bound


def parametrize_with_checks(items: Iterable[Any], *, kind: str | None = None,
                            options: Mapping[str, Mapping[str, Any]] | None = None) -> Any:
    """A ``pytest.mark.parametrize`` decorator running every conformance check on each item.

    The decorated test receives two arguments, ``obj`` (the registered name or object) and
    ``check`` (a check with the item's options bound), and should just call ``check(obj)``; each
    (item, check) pair becomes its own test, with an id such as ``"kcc-check_consensus_pickle"``,
    so a failure names both.

    Parameters
    ----------
    items : iterable of str or objects
        Registered names (their kind is read from ``cclust.available()``) or the functions /
        utilities themselves.
    kind : {"consensus", "generator", "metric", "utility"}, default=None
        The kind of every item; needed for objects that are not registered names (a
        ``Utility`` instance is recognised on its own).
    options : mapping, default=None
        Item (name or object) -> keyword options for its checks, e.g.
        ``{"kcc": {"object_order": "distribution"}}`` or ``{my_fn: {"n_clusters": 4}}``. Each
        check receives only the options it accepts.

    Returns
    -------
    decorator
        ``pytest.mark.parametrize("obj, check", ...)``.

    Raises
    ------
    ValueError
        If the kind of an object cannot be told (pass ``kind=``) or ``kind`` is unknown.
    cclust.errors.UnknownNameError
        If a name is not registered.

    Examples
    --------
    >>> from cclust.testing import parametrize_with_checks
    >>> decorator = parametrize_with_checks(["ari", "uc"])
    >>> marks = decorator.mark.args
    >>> marks[0]
    'obj, check'
    >>> [p.id for p in marks[1]][:2]
    ['ari-check_metric_contract', 'ari-check_metric_returns_float']

    In a test module::

        @parametrize_with_checks(["ccpivot"], options={"ccpivot": {"object_order": "distribution"}})
        def test_conformance(obj, check):
            check(obj)
    """
    import pytest

    options = {} if options is None else dict(options)
    params = []
    for item in items:
        item_kind = _kind_of(item, kind)
        item_options = options.get(item, {}) if isinstance(item, str) or _hashable(item) else {}
        for check in CHECKS[item_kind]:
            params.append(pytest.param(item, _bind(check, item_options),
                                       id=f"{_label(item)}-{check.__name__}"))
    return pytest.mark.parametrize("obj, check", params)


def _hashable(item):
    try:
        hash(item)
    except TypeError:
        return False
    return True
