"""Plumbing shared by the checks: resolving a name, labelling failures, calling safely."""
import inspect

from cclust.errors import ContractError


def resolve(fn_or_name, kind):
    """(object, label for messages) from a registered name or the object itself."""
    if isinstance(fn_or_name, str):
        from cclust.registry import get

        return get(fn_or_name, kind=kind), repr(fn_or_name)
    module = getattr(fn_or_name, "__module__", None)
    qualname = getattr(fn_or_name, "__qualname__", None) or getattr(fn_or_name, "__name__", None)
    if qualname is None:
        return fn_or_name, repr(fn_or_name)
    return fn_or_name, f"{module}.{qualname}" if module else qualname


class Failure:
    """Builds the AssertionError of one check for one function."""

    def __init__(self, check, label):
        self.check = check
        self.label = label

    def __call__(self, detail):
        return AssertionError(f"{self.check} failed for {self.label}: {detail}")

    def call(self, fn, *args, what=None, **kwargs):
        """``fn(*args, **kwargs)``, turning any exception into this check's AssertionError."""
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            shown = what or describe_call(args, kwargs)
            raise self(f"calling it {shown} raised {type(exc).__name__}: {exc}") from exc


def describe_call(args, kwargs):
    parts = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    return f"({', '.join(parts)})"


def _short(value):
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"<{type(value).__name__} of shape {tuple(shape)}>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def contract_failure(failure, kind, obj):
    from cclust.base import check_contract

    try:
        check_contract(kind, obj, failure.label)
    except ContractError as exc:
        raise failure(f"breaks the {kind} contract: {exc}") from exc


def parameters(obj):
    try:
        return inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return {}


def first_difference(a, b):
    import numpy as np

    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return f"shapes {a.shape} and {b.shape}"
    where = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
    if where.size == 0:
        return "no difference"
    i = int(where[0])
    return f"{where.size} of {a.size} entries differ, first at index {i}: {a.reshape(-1)[i]} vs {b.reshape(-1)[i]}"


def run_all(checks, fn, label, stop_after_first=1, **options):
    """Run every check, collecting failures; stop early if one of the first ``stop_after_first``
    (the contract checks) fails, since nothing after it is meaningful."""
    failures = []
    for index, check in enumerate(checks):
        try:
            check(fn, **options)
        except AssertionError as exc:
            failures.append(str(exc))
            if index < stop_after_first:
                break
    if failures:
        raise AssertionError(
            f"{len(failures)} conformance check(s) failed for {label}:\n- " + "\n- ".join(failures)
        )
