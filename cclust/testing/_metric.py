"""Conformance checks of metrics (kind ``metric``).

A metric is ``fn(labels_a, labels_b_or_ensemble, ...) -> float``. The kit first finds out which
second argument the metric takes: it calls ``fn(y, y)`` with two 1-D labellings, and if that
raises, ``fn(y, Ensemble(y))``; every later call uses the form that worked.

Whether larger or smaller values mean more agreement is not declared anywhere, so the kit decides
it from one comparison: a labelling against itself versus against an unrelated random labelling
of the same objects. Every clustering metric separates those two; the side the self-agreement
falls on is the metric's "more agreement" direction (larger for ARI, NMI, accuracy; smaller for
VI, van Dongen). The kit then requires that, in that direction, a labelling agrees with itself
at least as much as with any other labelling it tries (ties are allowed: a metric such as
homogeneity is also maximal for refinements), and exactly as much as with a copy whose clusters
are renamed. Symmetry is not required: the kit always puts the labelling under test first.

Internal criteria that score a labelling of data, ``fn(X, labels)`` (``compactness``,
``kmeans-objective``), declare it with ``cclust.base.declare(requires_X=True)``. For them
the kit calls ``fn(X, labels)`` on its blob data, and "self-agreement" becomes: the value does
not depend on cluster names, and the blobs score differently from a random labelling.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cclust.base import method_info
from cclust.testing._common import Failure, contract_failure, run_all, resolve
from cclust.testing._data import DATA_SEED, Snapshot, blob_partitions, relabel

__all__ = [
    "METRIC_CHECKS",
    "check_metric",
    "check_metric_contract",
    "check_metric_no_mutation",
    "check_metric_returns_float",
    "check_metric_self_agreement",
]

_RTOL = 1e-9
_ATOL = 1e-12


class _Case:
    def __init__(self, check, fn_or_name):
        self.fn, self.label = resolve(fn_or_name, "metric")
        self.fail = Failure(check, self.label)
        self.X, self.y, self.labels = blob_partitions(3)
        self.n = self.y.shape[0]
        self.rng = np.random.default_rng(DATA_SEED + 5)
        self.random = self.rng.integers(0, 3, size=self.n)
        self._mode = None

    def second(self, b):
        from cclust.ensemble import Ensemble

        b = np.array(b, dtype=np.int64, copy=True)
        return b if self.mode() in ("labels", "data") else Ensemble(b[:, None])

    def first(self, a):
        if self.mode() == "data":
            return np.array(self.X, copy=True)
        return np.array(a, dtype=np.int64, copy=True)

    def mode(self):
        from cclust.base import method_info

        if self._mode is None and method_info(self.fn).requires_X:
            self._mode = "data"
        if self._mode is None:
            from cclust.ensemble import Ensemble

            try:
                self.fn(self.y.copy(), self.y.copy())
                self._mode = "labels"
            except Exception as first:
                try:
                    self.fn(self.y.copy(), Ensemble(self.y[:, None]))
                    self._mode = "ensemble"
                except Exception as second:
                    raise self.fail(
                        "it accepts neither two 1-D labellings (raised "
                        f"{type(first).__name__}: {first}) nor a labelling and an Ensemble (raised "
                        f"{type(second).__name__}: {second})."
                    ) from second
        return self._mode

    def value(self, a, b, what):
        value = self.fail.call(self.fn, self.first(a), self.second(b),
                               what=f"on {what}")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (float, np.floating)):
            raise self.fail(f"returned {value!r} of type {type(value).__name__} on {what}, not a float.")
        if not np.isfinite(value):
            raise self.fail(f"returned {value!r} on {what}; expected a finite value on these labellings.")
        return float(value)


def check_metric_contract(fn_or_name: str | Callable[..., Any]) -> None:
    """The registry contract: ``fn(labels_a, labels_b_or_ensemble, ...)``, no ``*args``."""
    case = _Case("check_metric_contract", fn_or_name)
    contract_failure(case.fail, "metric", case.fn)


def check_metric_returns_float(fn_or_name: str | Callable[..., Any]) -> None:
    """Returns a finite float (Python or NumPy) for equal, similar and unrelated labellings."""
    case = _Case("check_metric_returns_float", fn_or_name)
    case.mode()
    case.value(case.y, case.y, "a labelling and itself")
    case.value(case.y, case.labels[:, 3], "a labelling and a noisy copy")
    case.value(case.y, case.random, "a labelling and a random labelling")


def check_metric_self_agreement(fn_or_name: str | Callable[..., Any]) -> None:
    """Agreement of a labelling with itself is the metric's extreme (see the module notes).

    For several labellings a: m(a, a) equals m(a, a renamed); m(a, a) lies strictly on one side
    of m(a, random), the same side for every a; and no other labelling b gives m(a, b) beyond
    m(a, a) on that side. A metric that declares its direction (``higher_is_better``) must
    declare that side.
    """
    case = _Case("check_metric_self_agreement", fn_or_name)
    if case.mode() == "data":
        _check_data_criterion(case)
        return
    candidates = {"the blobs": case.y, "a noisy partition": case.labels[:, 3],
                  "a split partition": case.labels[:, 6], "a merged partition": case.labels[:, 7]}
    others = dict(candidates)
    others["a random labelling"] = case.random
    direction = None
    for name, a in candidates.items():
        self_value = case.value(a, a, f"{name} and itself")
        renamed = case.value(a, relabel(a, case.rng), f"{name} and itself with clusters renamed")
        if not np.isclose(self_value, renamed, rtol=_RTOL, atol=_ATOL):
            raise case.fail(f"{name} scores {self_value!r} against itself but {renamed!r} against itself "
                            "with its clusters renamed; a metric must not depend on cluster names.")
        random_value = case.value(a, case.random, f"{name} and a random labelling")
        if np.isclose(self_value, random_value, rtol=_RTOL, atol=_ATOL):
            raise case.fail(f"{name} scores {self_value!r} both against itself and against a random "
                            "labelling; the metric does not tell agreement from chance.")
        side = 1.0 if self_value > random_value else -1.0
        if direction is None:
            direction = side
        elif side != direction:
            raise case.fail(f"for {name} self-agreement is {'above' if side > 0 else 'below'} the "
                            "agreement with a random labelling, the other way round from the first "
                            "labelling tried; larger must mean more agreement always, or never.")
        for other, b in others.items():
            if other == name:
                continue
            value = case.value(a, b, f"{name} and {other}")
            if direction * (value - self_value) > _ATOL + _RTOL * abs(self_value):
                best = "larger" if direction > 0 else "smaller"
                raise case.fail(f"{name} agrees more with {other} ({value!r}) than with itself "
                                f"({self_value!r}); with {best} meaning more agreement, self-agreement "
                                "must be the extreme.")
    declared = method_info(case.fn).higher_is_better
    if declared is not None and declared != (direction > 0):  # type: ignore[operator]  # set by the first pair
        raise case.fail(f"declares higher_is_better={declared}, but a labelling scores "
                        f"{'higher' if direction > 0 else 'lower'} against itself than against a random "  # type: ignore[operator]
                        "labelling; best and best-of would pick the worst labelling. Fix the declaration.")


def _check_data_criterion(case):
    """Self-agreement for ``fn(X, labels)`` criteria: name-free, and blobs differ from noise."""
    blobs = case.value(None, case.y, "the blob data labelled by the blobs")
    renamed = case.value(None, relabel(case.y, case.rng), "the blob labels with clusters renamed")
    if not np.isclose(blobs, renamed, rtol=_RTOL, atol=_ATOL):
        raise case.fail(f"the blobs score {blobs!r} but {renamed!r} with their clusters renamed; a "
                        "criterion must not depend on cluster names.")
    noise = case.value(None, case.random, "the blob data labelled at random")
    if np.isclose(blobs, noise, rtol=_RTOL, atol=_ATOL):
        raise case.fail(f"the blobs and a random labelling both score {blobs!r}; the criterion does "
                        "not tell structure from noise.")


def check_metric_no_mutation(fn_or_name: str | Callable[..., Any]) -> None:
    """Inputs are left alone: both labellings (or the Ensemble's arrays) keep contents and flags."""
    case = _Case("check_metric_no_mutation", fn_or_name)
    shuffle = case.rng.permutation(case.n)  # unsorted inputs, so sorting in place shows
    a = case.y[shuffle].copy()
    b = np.array(case.labels[shuffle, 4], dtype=np.int64, copy=True)
    second = case.second(b)
    if case.mode() == "data":
        a = np.array(case.X[shuffle], copy=True)
        watched = Snapshot(X=a, labels=second)
    elif case.mode() == "labels":
        watched = Snapshot(labels_a=a, labels_b=second)
    else:
        watched = Snapshot(labels_a=a, **{"ensemble.labels": second.labels, "ensemble.weights": second.weights})
    case.fail.call(case.fn, a, second)
    changes = watched.changes()
    if changes:
        raise case.fail("; ".join(changes) + ".")


#: Every metric check, in the order :func:`check_metric` runs them.
METRIC_CHECKS = (
    check_metric_contract,
    check_metric_returns_float,
    check_metric_self_agreement,
    check_metric_no_mutation,
)


def check_metric(fn_or_name: str | Callable[..., Any]) -> None:
    """Run every check of :data:`METRIC_CHECKS` on a metric.

    Parameters
    ----------
    fn_or_name : callable or str
        The metric, or its registered name.

    Raises
    ------
    AssertionError
        Listing every failed check by name, with the metric's name.

    Notes
    -----
    How the kit decides what "maximal agreement" means without being told is described in the
    notes of :mod:`cclust.testing._metric`: the direction comes from comparing self-agreement
    with agreement with a random labelling.
    """
    _, label = resolve(fn_or_name, "metric")
    run_all(METRIC_CHECKS, fn_or_name, label)
