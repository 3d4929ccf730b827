"""The bad-input catalogue over every registered function (cclust.testing._bad_input).

Each family of functions runs in one child process, so a segfault or an abort in a compiled
core fails the tests of that family -- naming the case that was running -- instead of killing
pytest. Every (function, case) outcome is judged in the child; the tests here only collect the
verdicts. See the module docstring of ``cclust.testing._bad_input`` for what each case expects.
"""
import ctypes
import os

import pytest

import cclust
from cclust.testing._bad_input import (
    CASES,
    check_bad_input,
    outcomes_in_process,
    run_catalogue,
)

FAMILIES = {kind: sorted(cclust.available(kind=kind)) for kind in ("consensus", "generator", "metric", "utility")}
FAMILIES["ensemble"] = ["Ensemble"]

# Defects found by the catalogue in files this test does not own, reported to their owners
# (docs/development.md lists them with the fix). While they stand the affected function's test
# is an xfail naming them; anything else failing is a plain failure.
KNOWN = {}

# One worker runs each family's child process for all of this module's tests under pytest-xdist
# (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("bad-input-catalogue")


@pytest.fixture(scope="module")
def verdicts():
    """kind -> (name -> list of records, crash or None), each family run once in a child."""
    cache = {}

    def get(kind):
        if kind not in cache:
            records, crash = run_catalogue(kind, FAMILIES[kind])
            by_name = {}
            for record in records:
                by_name.setdefault(record["name"], []).append(record)
            cache[kind] = (by_name, crash)
        return cache[kind]

    return get


PARAMS = [pytest.param(kind, name, id=f"{kind}-{name}") for kind, names in FAMILIES.items() for name in names]


@pytest.mark.parametrize("kind, name", PARAMS)
def test_bad_input_catalogue(verdicts, kind, name):
    by_name, crash = verdicts(kind)
    records = by_name.get(name, [])
    if crash and (crash["running"] and crash["running"][0] == name or not records):
        pytest.fail(f"the {kind} catalogue's child process {crash['how']} while running "
                    f"{crash['running']}:\n{crash['stderr']}")
    assert records, f"no outcome recorded for {name}"
    failed = {r["case"]: r["detail"] for r in records if not r["ok"]}
    unexpected = {case: detail for case, detail in failed.items() if (name, case) not in KNOWN}
    assert not unexpected, "\n".join(f"{name} / {case}: {detail}" for case, detail in unexpected.items())
    if failed:
        pytest.xfail("known defects (reported): " + "; ".join(KNOWN[(name, case)] for case in failed))


def test_every_case_ran_for_every_family(verdicts):
    for kind in ("generator", "metric", "utility"):
        by_name, crash = verdicts(kind)
        assert crash is None
        for name in FAMILIES[kind]:
            assert sorted(r["case"] for r in by_name[name]) == sorted(CASES[kind]), (kind, name)
    by_name, _ = verdicts("consensus")
    label_cases = set(CASES["consensus"]) - {c for c in CASES["consensus"] if c.startswith("x-")}
    for name in FAMILIES["consensus"]:
        assert label_cases <= {r["case"] for r in by_name[name]}, name


# -- the catalogue itself catches what it is for -----------------------------------------------


def segfaults(ensemble, n_clusters, *, random_state=None):
    """Reads address 0 whenever the labels are not the clean matrix: a crashing compiled core."""
    import numpy as np

    if isinstance(ensemble, cclust.Ensemble):
        return cclust.ConsensusResult.from_labels(ensemble.labels[:, 0])
    labels = np.asarray(ensemble)
    if labels.dtype != np.int64 or not labels.flags.c_contiguous:
        ctypes.string_at(0)
    return cclust.ConsensusResult.from_labels(labels[:, 0])


def index_error_on_k(ensemble, n_clusters, *, random_state=None):
    """A consensus function that indexes with K unchecked: IndexError on K out of range."""
    ensemble = cclust.ensemble.as_ensemble(ensemble)
    centres = list(range(ensemble.n_samples))
    return cclust.get("eac")(ensemble, centres[n_clusters] and n_clusters, random_state=random_state)


def test_a_segfault_fails_the_test_and_names_the_case():
    env_path = os.path.dirname(os.path.abspath(__file__))
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = env_path + (os.pathsep + old if old else "")
    try:
        records, crash = run_catalogue("consensus", [f"{__name__.rpartition('.')[2]}:segfaults"], timeout=120)
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    assert crash is not None and "signal" in crash["how"]
    name, case = crash["running"]
    assert name == "segfaults" and case == "fortran-order"  # the first non-clean label matrix
    assert [r["case"] for r in records] == ["list-of-columns"]  # a list becomes an Ensemble: no crash


def test_unclear_exceptions_are_reported():
    cclust.register("index-error-on-k", index_error_on_k, kind="consensus")
    try:
        records = outcomes_in_process("consensus", "index-error-on-k")
        failed = {r["case"]: r["detail"] for r in records if not r["ok"]}
        assert "k-huge" in failed and "IndexError" in failed["k-huge"]
        assert "k-zero" not in failed  # eac refuses K = 0 itself, naming n_clusters
    finally:
        cclust.registry.unregister("index-error-on-k")


def test_check_bad_input_passes_a_builtin():
    check_bad_input("ari")
