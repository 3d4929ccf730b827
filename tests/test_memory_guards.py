"""Every registered consensus method either runs in memory linear in n or refuses an O(n^2)
allocation up front, with a MemoryBudgetError naming the bytes and a scalable alternative.

The table below classifies every registered method; a new method must be added to it (the
completeness test fails otherwise), so nobody ships an unguarded n x n allocation by accident.
"""
import re
import tracemalloc

import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.errors import MemoryBudgetError
from cclust.registry import method_info

#: Budget of these tests: far below the O(n^2) structures of N_SAMPLES objects (a dense float64
#: co-association takes 18 MB), far above the linear ones (the one-hot, memberships, kNN graph).
BUDGET = 6_000_000
N_SAMPLES = 1500

RUNS = "runs"            # linear memory: completes under the budget
REFUSES = "refuses"      # forms an n x n structure by default: refuses before allocating it

#: method -> (behaviour on a complete ensemble, behaviour with missing labels, scalable call).
#: The scalable call (keyword arguments) must run under the same budget.
EXPECTED = {
    "kcc": (RUNS, RUNS, None),
    "gkcc": (RUNS, RUNS, None),
    "mcla": (RUNS, RUNS, None),
    "hbgf": (RUNS, RUNS, None),
    "hgpa": (RUNS, RUNS, None),
    "womc": (RUNS, RUNS, None),
    "wohb": (RUNS, RUNS, None),
    "wokmeans": (RUNS, RUNS, None),
    "voting": (RUNS, RUNS, None),
    "ivc": (RUNS, RUNS, None),
    "ipvc": (RUNS, RUNS, None),
    # IPC's criterion is a per-partition sum without missing labels; with them it is normalised
    # per pair and reads the dense co-association.
    "ipc": (RUNS, REFUSES, None),
    "em-mixture": (RUNS, RUNS, None),
    "best": (RUNS, None, None),                         # refuses missing labels by design
    "cspa": (REFUSES, REFUSES, {"n_neighbors": 10, "neighbors": "lsh"}),
    "eac": (REFUSES, REFUSES, {"linkage": "single", "n_neighbors": 10}),
    "hac": (REFUSES, REFUSES, {"linkage": "single", "n_neighbors": 10}),
    "fc": (REFUSES, REFUSES, None),
    "wosp": (REFUSES, REFUSES, {"n_neighbors": 10, "neighbors": "lsh"}),
    "addremadd": (REFUSES, REFUSES, None),
    "ls-agglomerative": (REFUSES, None, None),          # refuses missing labels by design
    "ccpivot": (REFUSES, REFUSES, None),
}

#: Words of which a refusal's alternative must name at least one (a method or a sparse route).
ALTERNATIVES = ("n_neighbors", "knn_coassociation", "kcc", "hbgf", "mcla", "wohb", "womc")

CONSENSUS = sorted(cclust.available(kind="consensus"))


def test_every_registered_method_is_classified():
    missing = sorted(set(CONSENSUS) - set(EXPECTED))
    assert not missing, (f"classify {missing} in EXPECTED: does it run in linear memory or refuse "
                         "its O(n^2) allocation with require_memory?")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    centres = rng.normal(0.0, 6.0, size=(4, 3))
    truth = rng.integers(0, 4, size=N_SAMPLES)
    X = centres[truth] + rng.normal(size=(N_SAMPLES, 3))
    E = cclust.generate("kmeans", X, 4, n_partitions=10, random_state=0)
    L = E.labels.copy()
    L[rng.random(L.shape) < 0.05] = -1
    L[:, 0] = E.labels[:, 0]
    return X, E, Ensemble(L)


def _call(name, ensemble, X, **kwargs):
    fn = cclust.get(name)
    info = method_info(fn)
    if info.requires_X:
        kwargs["X"] = X
    n_clusters = None if name == "best" else 4
    return cclust.consensus(name, ensemble, n_clusters, random_state=0, **kwargs)


def _check_refusal(exc, budget):
    message = str(exc)
    found = re.search(r"\((\d+) bytes\)", message)
    assert found, f"the refusal does not give the bytes: {message}"
    assert int(found.group(1)) > budget
    assert f"max_bytes={found.group(1)}" in message
    alternative = message.split("to allow it, or", 1)[-1]
    assert any(word in alternative for word in ALTERNATIVES), f"no scalable alternative named: {message}"


@pytest.mark.parametrize("name", CONSENSUS)
@pytest.mark.parametrize("labels", ["complete", "missing"])
def test_runs_or_refuses_with_bytes_and_alternative(name, labels, data, monkeypatch):
    if name not in EXPECTED:
        pytest.fail(f"{name} is not classified in EXPECTED")
    behaviour = EXPECTED[name][0 if labels == "complete" else 1]
    if behaviour is None:
        pytest.skip(f"{name} refuses missing labels by design")
    X, complete, with_missing = data
    ensemble = complete if labels == "complete" else with_missing
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", str(BUDGET))
    if behaviour == RUNS:
        assert _call(name, ensemble, X).labels.shape == (N_SAMPLES,)
        return
    # The refusal comes before the allocation: the traced peak stays far below the n x n bytes.
    tracemalloc.start()
    try:
        with pytest.raises(MemoryBudgetError) as info:
            _call(name, ensemble, X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _check_refusal(info.value, BUDGET)
    assert peak < N_SAMPLES * N_SAMPLES * 8 / 2, f"{name} allocated {peak} bytes before refusing"


@pytest.mark.parametrize("name", [m for m in CONSENSUS if m in EXPECTED and EXPECTED[m][2]])
def test_the_scalable_route_runs_under_the_same_budget(name, data, monkeypatch):
    X, complete, with_missing = data
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", str(BUDGET))
    for ensemble in (complete, with_missing):
        assert _call(name, ensemble, X, **EXPECTED[name][2]).labels.shape == (N_SAMPLES,)


def test_max_bytes_argument_overrides_the_environment(data, monkeypatch):
    X, complete, _ = data
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", str(BUDGET))
    with pytest.raises(MemoryBudgetError):
        cclust.consensus("eac", complete, 4)
    assert cclust.consensus("eac", complete, 4, max_bytes=2**31).n_clusters == 4
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", str(2**31))
    with pytest.raises(MemoryBudgetError):
        cclust.consensus("cspa", complete, 4, max_bytes=BUDGET, random_state=0)


def test_ensemble_views_refuse_before_allocating(data):
    _, complete, with_missing = data
    for E in (complete, with_missing):
        for kwargs in ({}, {"sparse": True}):
            need = E.coassociation_bytes(**kwargs)
            with pytest.raises(MemoryBudgetError, match=rf"\({need} bytes\)"):
                E.coassociation(max_bytes=need - 1, **kwargs)
        with pytest.raises(MemoryBudgetError, match="kNN co-association"):
            E.knn_coassociation(30, max_bytes=10_000)
