"""The bad-input catalogue: the same malformed inputs for every registered function.

Each case is a malformed (or merely unusual) input and what a function may do with it:

* ``"raise"`` -- the input is meaningless (NaN labels, a 3-D array, K = 0, negative weights):
  the function must raise a cclust error, or a ``TypeError``/``ValueError``, whose message names
  the argument at fault.
* ``"same"`` -- the input means the same as a clean one (read-only, big-endian, Fortran-ordered,
  non-contiguous, a list, another integer dtype, string cluster names): the function must
  return the result it returns for the clean input -- or refuse it as above.
* ``"valid"`` -- the input is odd but legal (a partition with no labels): raise as above, or
  return a structurally valid result.
* ``"missing"`` -- a NaN label, which ``Ensemble`` reads as a missing label: as ``"valid"`` for
  a function declaring ``handles_missing``, as ``"raise"`` for one that does not.
* ``"none"`` -- ``ensemble=None``: as ``"valid"`` for a function whose docstring documents
  None for ``ensemble`` (GKCC generates its own partitions from ``X``), else as ``"raise"``.

Anything else fails: an unexpected exception type (IndexError, KeyError, ...), a message that
names no argument, a wrong result, a crash. Crashes are why the catalogue is meant to run in a
child process: ``python -m cclust.testing._bad_input KIND NAME...`` prints one JSON line per
(name, case) before and after running it, so the parent can tell which case killed the child.
:func:`run_catalogue` does that and returns the outcomes; :func:`check_bad_input` runs it on
one function and raises AssertionError listing every failed case.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["CASES", "check_bad_input", "outcomes_in_process", "run_catalogue"]

# Objects, partitions and K of the clean input every case starts from.
_N, _R, _K = 12, 4, 2


def _labels():
    rng = np.random.default_rng(7)
    base = np.repeat(np.arange(3), 4)
    columns = [base, (base + 1) % 3, rng.integers(0, 3, _N), np.where(base == 2, 1, base)]
    return np.column_stack(columns).astype(np.int64)


def _X():
    rng = np.random.default_rng(8)
    return np.repeat(np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]]), 4, axis=0) + rng.normal(size=(_N, 2))


def _readonly(a):
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


def _with(a, index, value, dtype=np.float64):
    a = np.array(a, dtype=dtype, copy=True)
    a[index] = value
    return a


def _strings(a):
    return np.char.add("c", np.asarray(a).astype(str))


def _ragged(a):
    rows = np.asarray(a).tolist()
    rows[3] = rows[3][:-1]
    return rows


# -- the catalogue: (case, expectation, argument words, build) ---------------------------------
# ``build(clean)`` returns the bad value of the argument the family varies; the clean value is
# the one "same" compares with.

#: Malformed label matrices (consensus functions; the ensemble argument).
LABEL_CASES = (
    ("list-of-columns", "same", lambda L: [L[:, j].tolist() for j in range(L.shape[1])]),
    ("fortran-order", "same", np.asfortranarray),
    ("non-contiguous", "same", lambda L: np.repeat(L, 2, axis=1)[:, ::2]),
    ("read-only", "same", _readonly),
    ("big-endian", "same", lambda L: L.astype(">i8")),
    ("int8", "same", lambda L: L.astype(np.int8)),
    ("uint64", "same", lambda L: L.astype(np.uint64)),
    ("integral-floats", "same", lambda L: L.astype(np.float64)),
    ("object-ints", "same", lambda L: L.astype(object)),
    ("string-names", "same", _strings),
    ("huge-label-values", "same", lambda L: L * 10**12 + 5),
    ("int32-max-labels", "same", lambda L: np.where(L == 2, np.iinfo(np.int32).max, L)),
    ("bool", "same", lambda L: L.astype(bool)),
    ("complex", "same", lambda L: L.astype(complex)),
    ("nan-label", "missing", lambda L: _with(L, (0, 0), np.nan)),
    ("inf-label", "raise", lambda L: _with(L, (1, 1), np.inf)),
    ("fractional-label", "raise", lambda L: _with(L, (2, 2), 0.5)),
    ("3-d", "raise", lambda L: L[:, :, None]),
    ("no-objects", "raise", lambda L: np.empty((0, _R), dtype=np.int64)),
    ("no-partitions", "raise", lambda L: np.empty((_N, 0), dtype=np.int64)),
    ("ragged-lists", "raise", _ragged),
    ("all-missing", "raise", lambda L: np.full_like(L, -1)),
    ("scalar", "raise", lambda L: 5),
    ("none", "none", lambda L: None),
    ("a-string", "raise", lambda L: "labels"),
    ("a-partition-all-missing", "valid", lambda L: _with(L, (slice(None), 0), -1, dtype=np.int64)),
    ("other-negative-labels", "valid", lambda L: L - 3),
)

#: Bad partition weights, given as ``Ensemble(labels, weights=...)``.
WEIGHT_CASES = (
    ("negative-weight", "raise", lambda w: _with(w, 0, -1.0)),
    ("nan-weight", "raise", lambda w: _with(w, 1, np.nan)),
    ("inf-weight", "raise", lambda w: _with(w, 1, np.inf)),
    ("zero-weights", "raise", lambda w: np.zeros_like(w)),
    ("too-few-weights", "raise", lambda w: w[:-1]),
    ("2-d-weights", "raise", lambda w: w[None, :]),
    ("string-weights", "raise", lambda w: ["a"] * len(w)),
    ("huge-weights", "same", lambda w: w * 1e300),
    ("big-endian-weights", "same", lambda w: w.astype(">f8")),
)

#: Bad n_clusters values (consensus functions and generators).
K_CASES = (
    ("k-zero", "raise", lambda k: 0),
    ("k-negative", "raise", lambda k: -1),
    ("k-above-n", "raise", lambda k: _N + 1),
    ("k-huge", "raise", lambda k: 10**12),
    ("k-fractional", "raise", lambda k: 2.5),
    ("k-nan", "raise", lambda k: float("nan")),
    ("k-string", "raise", lambda k: "2"),
    ("k-bool", "raise", lambda k: True),
    ("k-numpy-int", "same", lambda k: np.int64(k)),
)

#: Bad feature matrices (generators, and consensus functions that need X).
X_CASES = (
    ("x-fortran", "same", np.asfortranarray),
    ("x-non-contiguous", "same", lambda X: np.repeat(X, 2, axis=1)[:, ::2]),
    ("x-read-only", "same", _readonly),
    ("x-big-endian", "same", lambda X: X.astype(">f8")),
    ("x-list", "same", lambda X: X.tolist()),
    ("x-nan", "raise", lambda X: _with(X, (0, 0), np.nan)),
    ("x-inf", "raise", lambda X: _with(X, (1, 1), -np.inf)),
    ("x-complex", "raise", lambda X: X + 1j),
    ("x-strings", "raise", lambda X: X.astype(str)),
    ("x-object", "raise", lambda X: np.array([[object(), 1.0]] * _N, dtype=object)),
    ("x-1-d", "raise", lambda X: X[:, 0]),
    ("x-3-d", "raise", lambda X: X[:, :, None]),
    ("x-no-rows", "raise", lambda X: X[:0]),
    ("x-wrong-rows", "raise", lambda X: X[:-2]),
    ("x-ragged", "raise", _ragged),
    ("x-none", "raise", lambda X: None),
)

#: Bad labellings for metrics (the first labelling; the second stays clean).
METRIC_CASES = (
    ("fortran-or-strided", "same", lambda a: np.repeat(a, 2)[::2]),
    ("read-only", "same", _readonly),
    ("big-endian", "same", lambda a: a.astype(">i8")),
    ("list", "same", lambda a: a.tolist()),
    ("int8", "same", lambda a: a.astype(np.int8)),
    ("string-names", "same", _strings),
    ("huge-values", "same", lambda a: a * 10**15 + 3),
    ("integral-floats", "same", lambda a: a.astype(float)),
    ("bool", "same", lambda a: (a > 0)),
    ("nan", "raise", lambda a: _with(a, 0, np.nan)),
    ("inf", "raise", lambda a: _with(a, 0, np.inf)),
    ("fractional", "raise", lambda a: _with(a, 0, 0.5)),
    ("complex", "same", lambda a: a + 1j),
    ("2-d", "raise", lambda a: np.column_stack([a, a])),
    ("3-d", "raise", lambda a: a[:, None, None]),
    ("empty", "raise", lambda a: a[:0]),
    ("shorter", "raise", lambda a: a[:-1]),
    ("scalar", "raise", lambda a: 3),
    ("none", "raise", lambda a: None),
    ("object-junk", "raise", lambda a: np.array([object()] * a.shape[0], dtype=object)),
)

#: Bad exponents p for the KCC utilities (through ``kcc(..., utility=name, p=...)``).
P_CASES = (
    ("p-one", "lp-raise", lambda: 1.0),
    ("p-half", "lp-raise", lambda: 0.5),
    ("p-negative", "lp-raise", lambda: -2.0),
    ("p-nan", "lp-raise", lambda: float("nan")),
    ("p-inf", "lp-raise", lambda: float("inf")),
    ("p-string", "lp-raise", lambda: "3"),
)

#: family -> every case name (for listing and documentation)
CASES = {
    "consensus": [c[0] for c in LABEL_CASES + WEIGHT_CASES + K_CASES + X_CASES],
    "generator": [c[0] for c in X_CASES + K_CASES if c[0] != "x-wrong-rows"] + ["n-partitions-zero", "n-partitions-fractional",
                                                      "n-jobs-zero", "n-jobs-string"],
    "metric": [c[0] for c in METRIC_CASES],
    "utility": [c[0] for c in P_CASES],
}

# -- running one case ------------------------------------------------------------------------

# cclust's own errors (UnknownNameError is a LookupError, MemoryBudgetError a MemoryError) are
# caught by the CclustError test below; a bare IndexError or KeyError is a defect.
_ALLOWED = (ValueError, TypeError, MemoryError)


def _judge(call, expectation, words, same_as=None, compare=None, valid=None):
    """Run ``call()`` and return (ok, detail)."""
    from cclust.errors import CclustError, ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            result = call()
        except (CclustError,) + _ALLOWED as exc:
            message = str(exc)
            named = any(w in message for w in words)
            kind = "cclust" if isinstance(exc, CclustError) else type(exc).__name__
            if not named:
                return False, f"raised {type(exc).__name__} ({kind}) whose message names none of {words}: {message[:200]}"
            return True, f"raised {type(exc).__name__}"
        except Exception as exc:  # noqa: BLE001 - anything else is what the catalogue looks for
            return False, f"raised {type(exc).__name__} (not a cclust error/ValueError/TypeError): {str(exc)[:200]}"
    if expectation == "raise":
        return False, f"returned {type(result).__name__} instead of raising"
    if expectation == "same":
        if same_as is None:
            return False, "the clean input itself failed, nothing to compare with"
        if isinstance(same_as, BaseException):
            return False, f"returned a result where the clean input raised {type(same_as).__name__}"
        if not compare(result, same_as):
            return False, "returned a result different from the clean input's"
        return True, "same result"
    problem = valid(result) if valid else None
    return (problem is None), (problem or "valid result")


def _consensus_outcomes(name):
    import cclust
    from cclust.base import method_info
    from cclust.testing._data import same_partition

    fn = cclust.get(name, kind="consensus")
    info = method_info(fn)
    L, X = _labels(), _X()
    w = np.linspace(1.0, 2.0, _R)

    def run(labels=L, k=_K, weights=None, X_=X):
        ensemble = labels if weights is None else cclust.Ensemble(labels, weights=weights)
        kwargs = {"X": X_} if info.requires_X else {}
        return fn(ensemble, k, random_state=0, **kwargs)

    def clean(**kw):
        try:
            return run(**kw)
        except Exception as exc:  # noqa: BLE001
            return exc

    def compare(a, b):
        return same_partition(a.labels, b.labels) and a.n_clusters == b.n_clusters

    def valid(result):
        labels = getattr(result, "labels", None)
        if labels is None or np.asarray(labels).shape != (_N,) or np.asarray(labels).min() < 0:
            return f"returned an invalid result: {result!r}"
        return None

    base, base_w = clean(), clean(weights=w)
    label_words = ("ensemble", "labels", "partition")
    none_documented = any(line.strip().startswith("ensemble :") and "None" in line
                          for line in (fn.__doc__ or "").splitlines())
    for case, expect, build in LABEL_CASES:
        bad = build(L)
        if expect == "missing":
            expect = "valid" if info.handles_missing else "raise"
        elif expect == "none":
            expect = "valid" if none_documented else "raise"
        reference = clean(labels=L.astype(bool).astype(np.int64)) if case == "bool" else base
        yield case, lambda bad=bad: run(labels=bad), expect, label_words, reference, compare, valid
    for case, expect, build in WEIGHT_CASES:
        bad = build(w)
        yield case, lambda bad=bad: run(weights=bad), expect, ("weights",), base_w, compare, valid
    for case, expect, build in K_CASES:
        bad = build(_K)
        yield case, lambda bad=bad: run(k=bad), expect, ("n_clusters",), base, compare, valid
    if info.requires_X:
        for case, expect, build in X_CASES:
            bad = build(X)
            yield case, lambda bad=bad: run(X_=bad), expect, ("X",), base, compare, valid


def _generator_outcomes(name):
    import cclust

    fn = cclust.get(name, kind="generator")
    X = _X()

    def run(X_=X, k=_K + 1, n_partitions=3, n_jobs=1):
        return fn(X_, k, n_partitions=n_partitions, random_state=0, n_jobs=n_jobs)

    try:
        base = run()
    except Exception as exc:  # noqa: BLE001
        base = exc

    def compare(a, b):
        return np.array_equal(a.labels, b.labels) and np.array_equal(a.weights, b.weights)

    for case, expect, build in X_CASES:
        if case == "x-wrong-rows":  # a generator's X has no other array to match
            continue
        bad = build(X)
        yield case, lambda bad=bad: run(X_=bad), expect, ("X",), base, compare, None
    for case, expect, build in K_CASES:
        bad = build(_K + 1)
        yield case, lambda bad=bad: run(k=bad), expect, ("n_clusters",), base, compare, None
    yield "n-partitions-zero", lambda: run(n_partitions=0), "raise", ("n_partitions",), base, compare, None
    yield "n-partitions-fractional", lambda: run(n_partitions=2.5), "raise", ("n_partitions",), base, compare, None
    yield "n-jobs-zero", lambda: run(n_jobs=0), "raise", ("n_jobs",), base, compare, None
    yield "n-jobs-string", lambda: run(n_jobs="2"), "raise", ("n_jobs",), base, compare, None


def _metric_outcomes(name):
    import inspect

    import cclust
    from cclust.base import method_info

    fn = cclust.get(name, kind="metric")
    params = list(inspect.signature(fn).parameters)
    a = np.repeat(np.arange(3), 4).astype(np.int64)
    b = np.array([0, 0, 1, 1, 1, 2, 2, 2, 0, 1, 2, 2], dtype=np.int64)
    if method_info(fn).requires_X:
        X = _X()

        def run(labels):
            return fn(X, labels)
        words = ("labels", params[1])
    elif "ensemble" in params[1]:
        ensemble = cclust.Ensemble(_labels())

        def run(labels):
            return fn(labels, ensemble)
        words = ("labels", params[0])
    else:
        def run(labels):
            return fn(labels, b)
        words = ("labels", params[0], params[1])

    def clean(labels):
        try:
            return run(labels)
        except Exception as exc:  # noqa: BLE001
            return exc

    def compare(x, y):
        return isinstance(x, float) and (x == y or abs(x - y) <= 1e-12 * max(1.0, abs(y)))

    for case, expect, build in METRIC_CASES:
        bad = build(a)
        reference = clean(np.asarray(bad, dtype=np.int64)) if case == "bool" else clean(a)
        yield case, (lambda bad=bad: run(bad)), expect, words, reference, compare, None


def _utility_outcomes(name):
    import cclust

    L = _labels()
    lp = name in ("ulp", "nulp")

    def compare(x, y):
        return np.array_equal(x.labels, y.labels)

    try:
        base = cclust.consensus("kcc", L, _K, utility=name, random_state=0)
    except Exception as exc:  # noqa: BLE001
        base = exc
    for case, expect, build in P_CASES:
        bad = build()
        # Only ULp and NULp use p; the others may ignore it (same result) or refuse it.
        expectation = "raise" if lp else "same"
        yield (case, lambda bad=bad: cclust.consensus("kcc", L, _K, utility=name, p=bad, random_state=0),
               expectation, ("p",), base, compare, None)


def _ensemble_outcomes(name):
    """The Ensemble methods that call the compiled contingency and co-association cores."""
    import cclust

    L = _labels()
    ensemble = cclust.Ensemble(L)
    y = np.repeat(np.arange(3), 4).astype(np.int64)

    def compare(x, y_):
        return np.array_equal(np.asarray(x), np.asarray(y_))

    base = ensemble.contingency(y, 3)
    table_cases = (
        ("labels-big-endian", "same", y.astype(">i8"), 3),
        ("labels-non-contiguous", "same", np.repeat(y, 2)[::2], 3),
        ("labels-read-only", "same", _readonly(y), 3),
        ("labels-list", "same", y.tolist(), 3),
        ("labels-int8", "same", y.astype(np.int8), 3),
        ("labels-too-large", "raise", _with(y, 0, 7, dtype=np.int64), 3),
        ("labels-below-minus-one", "raise", _with(y, 0, -2, dtype=np.int64), 3),
        ("labels-nan", "raise", _with(y, 0, np.nan), 3),
        ("labels-fractional", "raise", _with(y, 0, 0.5), 3),
        ("labels-shorter", "raise", y[:-1], 3),
        ("labels-2-d", "raise", np.column_stack([y, y]), 3),
        ("labels-strings", "raise", _strings(y), 3),
        ("k-too-small", "raise", y, 2),
        ("k-zero", "raise", y, 0),
        ("k-negative", "raise", y, -3),
        ("k-fractional", "raise", y, 2.5),
        ("k-huge", "raise", y, 10**15),
    )
    words = ("labels", "n_clusters", "memory", "bytes")
    for case, expect, labels, k in table_cases:
        yield (f"contingency-{case}", lambda labels=labels, k=k: ensemble.contingency(labels, k), expect, words,
               base, compare, None)
    for case, threads in (("zero", 0), ("string", "2"), ("fractional", 1.5)):
        yield (f"contingency-n-jobs-{case}", lambda threads=threads: ensemble.contingency(y, 3, n_jobs=threads),
               "raise", ("n_jobs",), base, compare, None)
    co = ensemble.coassociation()
    for case, kwargs in (("max-bytes-zero", {"max_bytes": 0}), ("max-bytes-negative", {"max_bytes": -1}),
                         ("dtype-complex", {"dtype": complex}), ("dtype-string", {"dtype": "U3"}),
                         ("dtype-int", {"dtype": np.int64})):
        yield (f"coassociation-{case}", lambda kwargs=kwargs: ensemble.coassociation(**kwargs), "raise",
               ("max_bytes", "dtype", "memory"), co, compare, None)
    for case, objects in (("out-of-range", [0, 1, 99]), ("floats", np.array([0.0, 1.5])),
                          ("bool-wrong-length", np.ones(3, dtype=bool)), ("2-d", np.zeros((2, 2), dtype=int)),
                          ("empty", np.array([], dtype=np.int64))):
        yield (f"take-{case}", lambda objects=objects: ensemble.take(objects), "raise", ("objects",),
               None, compare, None)


_FAMILIES = {"consensus": _consensus_outcomes, "generator": _generator_outcomes,
             "metric": _metric_outcomes, "utility": _utility_outcomes, "ensemble": _ensemble_outcomes}


def _resolve_target(kind, name):
    """A registered name, or ``"module:attribute"`` registered here under the attribute's name
    (so a function nobody registered -- a plugin in development -- can be catalogued too)."""
    if ":" not in name or kind == "ensemble":
        return name
    import importlib

    import cclust

    module, attribute = name.split(":", 1)
    obj = getattr(importlib.import_module(module), attribute)
    alias = attribute.lower()
    if alias not in cclust.available():
        cclust.register(alias, obj, kind=kind)
    return alias


def outcomes_in_process(kind, name, emit=None):
    """Run every case of ``kind`` on the registered ``name`` (or ``"module:attribute"``) in
    this process.

    Returns a list of ``{"name", "case", "ok", "detail"}`` dicts; ``emit`` (if given) is called
    with a "start" record before each case and with the outcome after it.
    """
    out = []
    name = _resolve_target(kind, name)
    if emit:  # the family's generator first runs the clean input, for "same" to compare with
        emit({"event": "start", "name": name, "case": "(the clean input)"})
    for case, call, expect, words, reference, compare, valid in _FAMILIES[kind](name):
        if emit:
            emit({"event": "start", "name": name, "case": case})
        ok, detail = _judge(call, expect, words, reference, compare, valid)
        record = {"event": "done", "name": name, "case": case, "ok": bool(ok), "detail": detail}
        if emit:
            emit(record)
        out.append(record)
    return out


def run_catalogue(kind, names, *, timeout=600):
    """Run the catalogue on ``names`` (all of one kind) in one child process.

    Returns ``(records, crash)``: the "done" records, and None or a description of how the
    child died (signal or exit status, the case it was running, the end of its stderr).
    """
    if kind not in _FAMILIES:
        raise ValueError(f"kind must be one of {sorted(_FAMILIES)}, got {kind!r}.")
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run([sys.executable, "-m", "cclust.testing._bad_input", kind, *names],
                          capture_output=True, text=True, timeout=timeout, env=env, check=False,
                          cwd=root)  # not the caller's directory: a source checkout there would shadow
    records, running = [], None
    for line in done.stdout.splitlines():
        # Unrelated output (a library printing) is ignored; the records are whole JSON lines.
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if record["event"] == "start":
            running = (record["name"], record["case"])
        else:
            running = None
            records.append(record)
    crash = None
    if done.returncode != 0:
        how = (f"killed by signal {-done.returncode}" if done.returncode < 0
               else f"exited with status {done.returncode}")
        crash = {"how": how, "running": running, "stderr": done.stderr[-3000:]}
    return records, crash


def check_bad_input(fn_or_name: str | Callable[..., Any], kind: str | None = None) -> None:
    """Run the bad-input catalogue on one registered function in a child process.

    Parameters
    ----------
    fn_or_name : str
        A registered name (the child process looks it up again, so it must be registered by
        an installed distribution or a built-in).
    kind : str, default=None
        Its kind; None reads ``cclust.available()``.

    Raises
    ------
    AssertionError
        Listing every case the function failed, or how the child process died.

    Examples
    --------
    >>> from cclust.testing import check_bad_input
    >>> check_bad_input("ari")  # doctest: +SKIP
    """
    from cclust.registry import available

    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    kind = kind or available()[name].kind
    records, crash = run_catalogue(kind, [name])
    failed = [f"{r['case']}: {r['detail']}" for r in records if not r["ok"]]
    if crash:
        failed.append(f"the child process {crash['how']} while running {crash['running']}:\n{crash['stderr']}")
    if failed:
        raise AssertionError(f"bad-input catalogue failed for {name!r} ({len(failed)} case(s)):\n- "
                             + "\n- ".join(failed))


def _main(argv):
    kind, names = argv[0], argv[1:]

    def emit(record):
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

    for name in names:
        outcomes_in_process(kind, name, emit)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
