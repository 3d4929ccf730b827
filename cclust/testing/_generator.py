"""Conformance checks of partition generators (kind ``generator``) and KCC utilities."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cclust.testing._common import Failure, contract_failure, first_difference, resolve, run_all
from cclust.testing._data import Snapshot, blobs, check_kit_n_clusters
from cclust.validation import RandomStateLike

__all__ = [
    "GENERATOR_CHECKS",
    "UTILITY_CHECKS",
    "check_generator",
    "check_generator_contract",
    "check_generator_deterministic",
    "check_generator_n_jobs",
    "check_generator_no_mutation",
    "check_generator_result",
    "check_utility",
    "check_utility_contract",
]

_DEFAULT = object()


class _Case:
    def __init__(self, check, fn_or_name, n_clusters, n_partitions, random_state):
        self.fn, self.label = resolve(fn_or_name, "generator")
        self.fail = Failure(check, self.label)
        self.n_clusters = check_kit_n_clusters(n_clusters)
        self.n_partitions = int(n_partitions)
        self.random_state = random_state
        self.X, _ = blobs(self.n_clusters)

    def run(self, *, X=None, random_state=_DEFAULT, n_jobs=1):
        random_state = self.random_state if random_state is _DEFAULT else random_state
        X = self.X.copy() if X is None else X
        return self.fail.call(self.fn, X, self.n_clusters, n_partitions=self.n_partitions,
                              random_state=random_state, n_jobs=n_jobs)

    def valid(self, ensemble, context):
        from cclust.ensemble import Ensemble

        where = f" ({context})" if context else ""
        if not isinstance(ensemble, Ensemble):
            raise self.fail(f"returned {type(ensemble).__name__}, not a cclust.Ensemble{where}.")
        if ensemble.n_samples != self.X.shape[0]:
            raise self.fail(f"returned an ensemble of {ensemble.n_samples} objects for X with "
                            f"{self.X.shape[0]} rows{where}.")
        if ensemble.n_partitions != self.n_partitions:
            raise self.fail(f"returned {ensemble.n_partitions} partitions, asked for "
                            f"n_partitions={self.n_partitions}{where}.")
        return ensemble

    def same(self, a, b, what):
        if not (np.array_equal(a.labels, b.labels) and np.array_equal(a.weights, b.weights)):
            raise self.fail(f"{what} ({first_difference(a.labels, b.labels)}).")


def check_generator_contract(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, n_partitions: int = 5,
                             random_state: RandomStateLike = 0) -> None:
    """The registry contract: ``fn(X, n_clusters, *, n_partitions, random_state, n_jobs, ...)``."""
    case = _Case("check_generator_contract", fn_or_name, n_clusters, n_partitions, random_state)
    contract_failure(case.fail, "generator", case.fn)


def check_generator_result(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, n_partitions: int = 5,
                           random_state: RandomStateLike = 0) -> None:
    """Returns an Ensemble of the n objects of X with ``n_partitions`` partitions."""
    case = _Case("check_generator_result", fn_or_name, n_clusters, n_partitions, random_state)
    case.valid(case.run(), "")


def check_generator_deterministic(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, n_partitions: int = 5,
                                  random_state: RandomStateLike = 0) -> None:
    """Same seed, same ensemble: an int seed twice, and two Generators seeded alike."""
    case = _Case("check_generator_deterministic", fn_or_name, n_clusters, n_partitions, random_state)
    first = case.valid(case.run(), f"random_state={random_state!r}")
    second = case.valid(case.run(), f"random_state={random_state!r}")
    case.same(first, second, f"two calls with random_state={random_state!r} gave different ensembles")
    seed = random_state if isinstance(random_state, int) else 0
    runs = [case.valid(case.run(random_state=np.random.default_rng(seed)), "random_state=Generator")
            for _ in range(2)]
    case.same(*runs, f"two calls with numpy.random.default_rng({seed}) gave different ensembles")  # type: ignore[call-arg]


def check_generator_n_jobs(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, n_partitions: int = 5,
                           random_state: RandomStateLike = 0) -> None:
    """``n_jobs=1`` and ``n_jobs=2`` give the same ensemble for the same seed."""
    case = _Case("check_generator_n_jobs", fn_or_name, n_clusters, n_partitions, random_state)
    one = case.valid(case.run(n_jobs=1), "n_jobs=1")
    two = case.valid(case.run(n_jobs=2), "n_jobs=2")
    case.same(one, two, "n_jobs=1 and n_jobs=2 gave different ensembles with the same seed")


def check_generator_no_mutation(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, n_partitions: int = 5,
                                random_state: RandomStateLike = 0) -> None:
    """``X`` keeps its contents and flags."""
    case = _Case("check_generator_no_mutation", fn_or_name, n_clusters, n_partitions, random_state)
    X = case.X.copy()
    watched = Snapshot(X=X)
    case.run(X=X)
    changes = watched.changes()
    if changes:
        raise case.fail("; ".join(changes) + ".")


#: Every generator check, in the order :func:`check_generator` runs them.
GENERATOR_CHECKS = (
    check_generator_contract,
    check_generator_result,
    check_generator_deterministic,
    check_generator_n_jobs,
    check_generator_no_mutation,
)


def check_generator(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, n_partitions: int = 5,
                    random_state: RandomStateLike = 0) -> None:
    """Run every check of :data:`GENERATOR_CHECKS` on a partition generator.

    The generator is called as ``fn(X, n_clusters, n_partitions=..., random_state=...,
    n_jobs=...)`` on ``n_clusters`` well-separated Gaussian blobs of 12 points each.

    Parameters
    ----------
    fn_or_name : callable or str
        The generator, or its registered name.
    n_clusters : int, default=3
        Number of blobs, and the ``n_clusters`` passed on.
    n_partitions : int, default=5
        Partitions asked for.
    random_state : int, default=0
        The seed passed to the generator.

    Raises
    ------
    AssertionError
        Listing every failed check by name, with the generator's name.
    """
    _, label = resolve(fn_or_name, "generator")
    run_all(GENERATOR_CHECKS, fn_or_name, label, n_clusters=n_clusters, n_partitions=n_partitions,
            random_state=random_state)


def check_utility_contract(fn_or_name: str | Callable[..., Any]) -> None:
    """The registry contract: the object is a ``cclust.base.Utility``."""
    obj, label = resolve(fn_or_name, "utility")
    contract_failure(Failure("check_utility_contract", label), "utility", obj)


#: Every utility check (for now the contract; a utility's arithmetic is tested where KCC is).
UTILITY_CHECKS = (check_utility_contract,)


def check_utility(fn_or_name: str | Callable[..., Any]) -> None:
    """Run every check of :data:`UTILITY_CHECKS` on a KCC utility.

    Raises
    ------
    AssertionError
        Naming the failed check and the utility.
    """
    _, label = resolve(fn_or_name, "utility")
    run_all(UTILITY_CHECKS, fn_or_name, label)
