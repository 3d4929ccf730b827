"""The conformance kit: the checks every built-in and every plugin runs.

A third-party author gets the same checks cclust uses for its own methods. Each check is a
small function that raises ``AssertionError`` naming itself and the function under test, so a
test suite can run them all at once::

    from cclust.testing import check_consensus

    def test_conformance():
        check_consensus("ccpivot")           # a registered name, or the function itself

or one test per check::

    import pytest
    from cclust.testing import CONSENSUS_CHECKS

    @pytest.mark.parametrize("check", CONSENSUS_CHECKS, ids=lambda c: c.__name__)
    def test_conformance(check):
        check("ccpivot")

Public API
----------
check_consensus, check_metric, check_generator, check_utility
    Run every check of a kind on a function (or a registered name).
check_registered
    Look a name up in ``cclust.available()`` and run the checks of its kind.
parametrize_with_checks
    A ``pytest.mark.parametrize`` decorator giving one test per (function, check) pair.
check_bad_input
    The bad-input catalogue (malformed arrays, K, weights, X) on a registered function, run in
    a child process so that a crash is reported, not suffered.
CONSENSUS_CHECKS, METRIC_CHECKS, GENERATOR_CHECKS, UTILITY_CHECKS, CHECKS
    The individual checks of each kind (``CHECKS`` maps kind -> tuple), to parametrize over.
blob_partitions, same_partition, adjusted_rand
    The kit's data and its exact partition comparison, for authors' own tests.
peak_memory, noisy_refinements
    The peak memory (RSS high-water mark, NumPy and compiled allocations alike) that consensus
    calls add, measured in child processes: run it at two sizes to see how a method grows; and
    ensembles whose per-object structures are as large as they get, to run it on.
check_consensus_memory_limit, check_consensus_memory_limits
    A consensus function under an address-space limit it hits, in a child process: labels or
    a MemoryBudgetError, never a raw MemoryError, a std::bad_alloc or a signal (several
    functions: one import, a fresh fork for each).
check_consensus_recovers_easy_structure, easy_blobs, easy_ensemble
    Quality on easy data: with its defaults, a consensus function must recover well-separated
    blobs (balanced, or one cluster several times larger) from k-means ensembles. Not part of
    ``check_consensus`` (it is slower, and a method that chooses its own K or refuses large
    inputs may be exempt): run it over the sizes and shapes your method should handle.

Hypothesis strategies for random valid ensembles are in :mod:`cclust.testing.strategies`
(hypothesis is a test extra; importing ``cclust.testing`` does not import it).

The kit builds all its inputs with NumPy from fixed seeds and does not use ``cclust.metrics``,
so a defect in one part of cclust cannot hide a defect in another.
"""
from __future__ import annotations

from typing import Any

from cclust.testing._bad_input import check_bad_input
from cclust.testing._consensus import (
    CONSENSUS_CHECKS,
    check_consensus,
    check_consensus_contract,
    check_consensus_deterministic,
    check_consensus_identical_partitions,
    check_consensus_missing_labels,
    check_consensus_n_clusters,
    check_consensus_no_mutation,
    check_consensus_object_order,
    check_consensus_order_invariance,
    check_consensus_pickle,
    check_consensus_relabel_invariance,
    check_consensus_result,
    check_consensus_thread_safety,
)
from cclust.testing._data import adjusted_rand, blob_partitions, noisy_refinements, same_partition
from cclust.testing._memory import check_consensus_memory_limit, check_consensus_memory_limits, peak_memory
from cclust.testing._generator import (
    GENERATOR_CHECKS,
    UTILITY_CHECKS,
    check_generator,
    check_generator_contract,
    check_generator_deterministic,
    check_generator_n_jobs,
    check_generator_no_mutation,
    check_generator_result,
    check_utility,
    check_utility_contract,
)
from cclust.testing._metric import (
    METRIC_CHECKS,
    check_metric,
    check_metric_contract,
    check_metric_no_mutation,
    check_metric_returns_float,
    check_metric_self_agreement,
)
from cclust.testing._parametrize import CHECKS, parametrize_with_checks
from cclust.testing._quality import check_consensus_recovers_easy_structure, easy_blobs, easy_ensemble

_RUNNERS = {"consensus": check_consensus, "metric": check_metric,
            "generator": check_generator, "utility": check_utility}


def check_registered(name: str, **options: Any) -> None:
    """Run the checks of a registered name's kind on it.

    Parameters
    ----------
    name : str
        A name listed by ``cclust.available()``.
    **options
        Passed to the kind's runner (e.g. ``n_clusters=`` for consensus functions).

    Raises
    ------
    cclust.errors.UnknownNameError
        If nothing is registered under ``name`` (the message lists what is).
    AssertionError
        Naming every failed check.

    Examples
    --------
    >>> import cclust
    >>> from cclust.testing import check_registered
    >>> for name in cclust.available(kind="consensus"):  # doctest: +SKIP
    ...     check_registered(name)
    """
    from cclust.registry import available, get

    rows = available()
    if name not in rows:
        get(name)  # raises UnknownNameError or RegistryConflictError with the full story
    return _RUNNERS[rows[name].kind](name, **options)


__all__ = [
    "CHECKS",
    "CONSENSUS_CHECKS",
    "GENERATOR_CHECKS",
    "METRIC_CHECKS",
    "UTILITY_CHECKS",
    "adjusted_rand",
    "blob_partitions",
    "check_bad_input",
    "check_consensus",
    "check_consensus_contract",
    "check_consensus_deterministic",
    "check_consensus_identical_partitions",
    "check_consensus_memory_limit",
    "check_consensus_memory_limits",
    "check_consensus_missing_labels",
    "check_consensus_n_clusters",
    "check_consensus_no_mutation",
    "check_consensus_object_order",
    "check_consensus_order_invariance",
    "check_consensus_pickle",
    "check_consensus_recovers_easy_structure",
    "check_consensus_relabel_invariance",
    "check_consensus_result",
    "check_consensus_thread_safety",
    "check_generator",
    "check_generator_contract",
    "check_generator_deterministic",
    "check_generator_n_jobs",
    "check_generator_no_mutation",
    "check_generator_result",
    "check_metric",
    "check_metric_contract",
    "check_metric_no_mutation",
    "check_metric_returns_float",
    "check_metric_self_agreement",
    "check_registered",
    "check_utility",
    "check_utility_contract",
    "easy_blobs",
    "easy_ensemble",
    "noisy_refinements",
    "parametrize_with_checks",
    "peak_memory",
    "same_partition",
]
