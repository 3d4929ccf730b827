"""Values of ``--method``, ``--method-param`` and ``--generator-param``, and which parameters a
registered function takes."""
from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

from cclust.cli._messages import UserError
from cclust.base import accepts


#: parameters the command itself sets; giving them as --method-param would be ambiguous
_RESERVED = {"n_clusters": "-k", "random_state": "--seed", "X": "DATA", "ensemble": "DATA",
             "n_partitions": "--partitions", "n_jobs": "--jobs", "n_threads": "--jobs"}


def parse_value(text: str) -> Any:
    """Read one ``--method-param``/``--generator-param`` value.

    Parameters
    ----------
    text : str
        The text after ``=``.

    Returns
    -------
    value : None, bool, int, float, tuple or str
        ``none``/``null`` (any case) -> None, ``true``/``false`` -> bool, an integer -> int,
        another number -> float, text with commas -> a tuple of such values, else the text.

    Examples
    --------
    >>> parse_value("3"), parse_value("0.5"), parse_value("True"), parse_value("none")
    (3, 0.5, True, None)
    >>> parse_value("2,6"), parse_value("uh")
    ((2, 6), 'uh')
    """
    text = text.strip()
    if "," in text:
        return tuple(parse_value(part) for part in text.split(","))
    lowered = text.lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_params(items: Iterable[str] | None, option: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``KEY=VALUE`` / ``SCOPE:KEY=VALUE`` strings -> (params for all, {scope: params})."""
    common: dict[str, Any] = {}
    scoped: dict[str, dict[str, Any]] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        scope, colon, key = key.rpartition(":") if ":" in key else ("", "", key)
        key = key.strip()
        if not sep or not key.isidentifier() or (colon and not scope.strip()):
            raise UserError(
                f"{option} takes KEY=VALUE or METHOD:KEY=VALUE with KEY a parameter name, got {item!r}."
            )
        if key in _RESERVED:
            raise UserError(f"{option} {key}=... is set by {_RESERVED[key]}; use that option instead.")
        target = scoped.setdefault(scope.strip(), {}) if colon else common
        target[key] = parse_value(value)
    return common, scoped


def _accepts(fn, key):
    # A parameter of a function whose signature cannot be read is passed on: the call says.
    return accepts(fn, key, unknown=True)


def _parameter_names(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [name for name, p in params.items() if p.kind in kinds and name not in _RESERVED]


def _method_names(values):
    names = []
    for value in values or ():
        names += [v.strip() for v in value.split(",") if v.strip()]
    return names
