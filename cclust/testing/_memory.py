"""Peak memory of consensus functions, measured in child processes.

:func:`peak_memory` runs registered consensus functions on given problems and returns the
peak memory each call added: the growth of the resident set (RSS) high-water mark during the
call, read from ``/proc/self/status`` (``VmHWM``) after resetting it with
``/proc/self/clear_refs``. RSS counts every allocation: NumPy's, and also the C++ cores',
METIS's and Mt-KaHyPar's, which :mod:`tracemalloc` does not see (it traces only allocations
made through Python's allocators). Where the high-water mark cannot be reset (not Linux), the
tracemalloc peak of the call is returned instead and ``source`` says so.

Each problem runs in one child process (one import for all its methods, and the memory of one
problem never hides another's), or a given number of children share the problems out; every
method is first run once on the first 60 objects, so its imports and one-off buffers are not
counted.
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

_CHILD = "import sys; from cclust.testing._memory import _child; _child(sys.argv[1])"

#: Objects of the warm-up problem every method runs on before it is measured.
WARM_UP_OBJECTS = 60


def _status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"/proc/self/status has no {field}")


def _reset_high_water_mark():
    """Reset the RSS high-water mark (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        _status_kib("VmHWM")
    except OSError:
        return False
    return True


def _release_freed_memory():
    """Give the C allocator's freed pages back to the system (glibc's malloc_trim), so that
    memory one call freed does not hide what the next call allocates."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


#: glibc settings of the children: a fixed mmap threshold (glibc raises it after every free of
#: a large block, after which blocks up to 32 MiB come from the heap and stay resident when
#: freed) and a small trim threshold, so the RSS follows what is allocated now.
_ALLOCATOR_ENV = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}


def _measure(call):
    """Bytes ``call()`` adds at its peak, and the source of the number ("rss" or "tracemalloc")."""
    gc.collect()
    _release_freed_memory()
    if _reset_high_water_mark():
        before = _status_kib("VmRSS")
        call()
        return max(0, _status_kib("VmHWM") - before) * 1024, "rss"
    import tracemalloc

    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1], "tracemalloc"
    finally:
        tracemalloc.stop()


def _child(spec_path):
    import cclust
    from cclust.errors import MemoryBudgetError
    from cclust.base import method_info
    from cclust.validation import recorded_memory_requests

    with open(spec_path) as f:
        spec = json.load(f)
    out = []
    for problem in spec["problems"]:
        data = np.load(problem["data"])
        X, labels = data["X"], data["labels"]
        weights = data["weights"] if "weights" in data else None
        ensemble = cclust.Ensemble(labels, weights=weights)
        small = cclust.Ensemble(labels[:WARM_UP_OBJECTS])
        del data, labels
        results = {}
        for name, kwargs in problem["methods"]:
            kwargs = dict(kwargs)
            n_clusters = kwargs.pop("n_clusters", spec["n_clusters"])
            needs_X = method_info(cclust.get(name)).requires_X

            def call(E, rows, name=name, kwargs=kwargs, n_clusters=n_clusters, needs_X=needs_X, X=X):
                extra = {"X": X[:rows]} if needs_X else {}
                return cclust.consensus(name, E, n_clusters, random_state=0, **extra, **kwargs)

            try:
                call(small, WARM_UP_OBJECTS)
            except Exception:  # noqa: BLE001 -- a refusal of the small problem shows again below
                pass
            with recorded_memory_requests() as asked:
                try:
                    peak, source = _measure(lambda: call(ensemble, X.shape[0]))
                    results[name] = {"bytes": peak, "source": source}
                except MemoryBudgetError as exc:
                    results[name] = {"refused": str(exc)}
                except Exception as exc:  # noqa: BLE001 -- reported per method, the others still run
                    results[name] = {"error": f"{type(exc).__name__}: {exc}"}
            results[name]["asked"] = max(asked, default=0)
        out.append(results)
        del ensemble, small, X
    json.dump(out, sys.stdout)


def peak_memory(problems: Sequence[tuple[Any, Any]],
                methods: Sequence[tuple[str, Mapping[str, Any]]] | Sequence[Sequence[tuple[str, Mapping[str, Any]]]], *,
                n_clusters: int, env: Mapping[str, str] | None = None, timeout: float = 600,
                processes: int | None = None) -> list[dict[str, Any]]:
    """Peak memory of consensus calls, one child process per problem, run side by side (or
    ``processes`` children, each running its share of the problems one after another).

    Parameters
    ----------
    problems : list of (X, Ensemble)
        The features (passed to methods that take ``X``) and the ensemble of each problem.
    methods : list of (str, dict), or one such list per problem
        Registered consensus names with their keyword arguments (``n_clusters`` may be given
        per method; ``random_state=0`` always is), run on every problem or, given per problem,
        each list on its own problem.
    n_clusters : int
    env : dict, default=None
        Environment variables set in the children (e.g. ``CCLUST_MEMORY_BUDGET``).
    timeout : float, default=600
        Seconds a child may take.
    processes : int, default=None
        Child processes to share the problems out to, in order (None: one per problem). One
        child for many small problems saves a start-up and an import each; the peak of each
        call is its own either way (the high-water mark is reset before it, and the children's
        allocator returns what a call freed).

    Returns
    -------
    results : list of dict
        Per problem, ``name -> {"bytes": int, "source": "rss" or "tracemalloc"}``, or
        ``{"refused": message}`` for a method that refused with a MemoryBudgetError, or
        ``{"error": message}`` for one that raised anything else; each also has ``"asked"``,
        the largest figure the call's memory guards asked of the budget
        (:func:`cclust.validation.require_memory`; 0 where none was asked), to set beside the
        measured peak.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.testing import peak_memory
    >>> X, _ = load_iris()
    >>> E = cclust.generate("kmeans", X, 3, n_partitions=10, random_state=0)
    >>> [r["kcc"]["bytes"] > 0 for r in peak_memory([(X, E)], [("kcc", {})], n_clusters=3)]  # doctest: +SKIP
    [True]
    """
    per_problem = bool(methods) and not isinstance(methods[0][0], str)
    if per_problem and len(methods) != len(problems):
        raise ValueError(f"methods: one list per problem needs {len(problems)} lists, got {len(methods)}.")
    method_lists = methods if per_problem else [methods] * len(problems)
    n_children = len(problems) if processes is None else max(1, min(int(processes), len(problems)))
    shares = np.array_split(np.arange(len(problems)), n_children)
    child_env = dict(os.environ, **_ALLOCATOR_ENV, **(env or {}))
    with tempfile.TemporaryDirectory(prefix="cclust-memory-") as tmp:
        running = []
        for c, share in enumerate(shares):
            entries = []
            for i in share:
                X, ensemble = problems[i]
                data = os.path.join(tmp, f"problem{i}.npz")
                np.savez(data, X=np.asarray(X, dtype=np.float64), labels=ensemble.labels, weights=ensemble.weights)
                entries.append({"data": data, "methods": [[m, dict(kw)] for m, kw in method_lists[i]]})
            spec = os.path.join(tmp, f"child{c}.json")
            with open(spec, "w") as f:
                json.dump({"problems": entries, "n_clusters": int(n_clusters)}, f)
            # cwd: "python -c" puts the working folder first on sys.path, and a source checkout
            # there (without its compiled modules) would shadow the installed cclust
            running.append(subprocess.Popen([sys.executable, "-c", _CHILD, spec],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                            env=child_env, cwd=tmp))
        outputs = [child.communicate(timeout=timeout * len(share)) + (child.returncode,)
                   for child, share in zip(running, shares)]
    results = []
    for out, err, status in outputs:
        if status != 0:
            raise RuntimeError(f"the memory-measuring child failed (status {status}):\n{err}")
        results.extend(json.loads(out))
    return results



# -- an address-space limit that binds -------------------------------------------------------------

_LIMIT_ZYGOTE = "import sys; from cclust.testing._memory import _limit_zygote; _limit_zygote(sys.argv[1], sys.argv[2])"

#: Objects of the warm-up call made before the limit is set (imports, thread pools, one-off buffers).
_LIMIT_WARM_UP_OBJECTS = 300


def _emit(record):
    # the parent reads every line written so far, so a later signal still shows what passed
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _limit_calls(spec, target):
    """Call ``target`` under each of ``spec``'s limits in this process, emitting one line per call."""
    import resource

    import cclust
    from cclust.base import method_info
    from cclust.errors import MemoryBudgetError

    n, r, k = spec["n_samples"], spec["n_partitions"], spec["n_labels"]
    rng = np.random.default_rng(spec["seed"])
    X = rng.normal(size=(n, 2))
    ensemble = cclust.Ensemble(rng.integers(0, k, size=(n, r)))
    needs_X = method_info(cclust.get(target)).requires_X

    def call(E, rows):
        extra = {"X": X[:rows]} if needs_X else {}
        return cclust.consensus(target, E, spec["n_clusters"], random_state=0, **extra, **spec["params"])

    warm = min(_LIMIT_WARM_UP_OBJECTS, n)
    try:
        call(ensemble.take(objects=np.arange(warm)), warm)
    except Exception:  # noqa: BLE001 -- a refusal of the small problem shows again below
        pass
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)   # a limit of the parent's stays in force
    for headroom in spec["headrooms"]:
        gc.collect()
        _release_freed_memory()
        baseline = _status_kib("VmSize") * 1024
        limit = baseline + headroom if hard == resource.RLIM_INFINITY else min(baseline + headroom, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        try:
            labels = np.asarray(call(ensemble, n).labels)
            outcome = {"outcome": "labels", "detail": f"{labels.dtype} labels of shape {labels.shape}"}
            if labels.shape != (n,):
                outcome = {"outcome": "error", "detail": f"labels of shape {labels.shape} for {n} objects"}
        except MemoryBudgetError as exc:
            outcome = {"outcome": "refused", "detail": str(exc)}
        except Exception as exc:  # noqa: BLE001 -- MemoryError included: the parent fails the check
            outcome = {"outcome": "error", "detail": f"{type(exc).__name__}: {exc}"}
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        _emit(dict(outcome, event="call", name=spec["name"], headroom=headroom, baseline=baseline))
        if outcome["outcome"] != "refused":
            break


def _limit_zygote(specs_json, timeout):
    """Import cclust and every method of ``specs_json`` once, then run each method in a child
    forked from this still untouched process, one after another.

    Every child starts from the same state as a process of its own that imported the methods
    (none of them has run here), so no method's leftovers serve another's allocations under its
    limit; the fork saves each child the start-up and the imports. A child that dies, or takes
    more than ``timeout`` seconds (then it is killed), fails its method only: an "end" line
    gives its exit status and the tail of its standard error, and the next method runs.
    """
    import signal
    import time
    import traceback

    import cclust
    from cclust.testing._bad_input import _resolve_target

    specs = json.loads(specs_json)
    timeout = float(timeout)
    targets = [_resolve_target("consensus", spec["name"]) for spec in specs]   # "module:function" too
    for target in targets:
        cclust.get(target)          # the method's module imported before the forks, once
    with tempfile.TemporaryDirectory(prefix="cclust-limit-") as tmp:
        for i, (spec, target) in enumerate(zip(specs, targets)):
            err_path = os.path.join(tmp, f"stderr{i}")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:                                            # the child
                status = 1
                try:
                    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                    os.dup2(err, 2)
                    _limit_calls(spec, target)
                    status = 0
                except BaseException:  # noqa: BLE001 -- reported through the exit status and stderr
                    traceback.print_exc()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(status)
            started = time.monotonic()
            deadline, pause, status = started + timeout, 1e-3, None
            while True:
                done, wait_status = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = os.waitstatus_to_exitcode(wait_status)
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    break
                time.sleep(pause)
                pause = min(2 * pause, 0.05)
            with open(err_path, errors="replace") as f:
                stderr = f.read()[-2000:]
            _emit({"event": "end", "name": spec["name"], "status": status, "stderr": stderr,
                   "seconds": time.monotonic() - started})


def _limit_spec(name, *, n_samples=3000, n_partitions=10, n_labels=8, n_clusters=4,
                headrooms=(2 * 2**20, 16 * 2**20, 64 * 2**20), params=None, seed=0):
    return {"name": name, "n_samples": int(n_samples), "n_partitions": int(n_partitions), "n_labels": int(n_labels),
            "n_clusters": int(n_clusters), "headrooms": [int(h) for h in headrooms], "params": dict(params or {}),
            "seed": int(seed)}


def _limit_failure(spec, outcomes, how, stderr, timeout):
    """Why a method's calls under the limits fail the check (None if they pass); ``how`` is the
    child's exit status (None: killed after ``timeout`` seconds, or never reported)."""
    what = f"{spec['name']} on {spec['n_samples']} objects x {spec['n_partitions']} partitions"
    for outcome in outcomes:
        if outcome["outcome"] not in ("labels", "refused"):
            return (f"check_consensus_memory_limit: {what}, limited to {_mib(outcome['headroom'])} more address "
                    f"space, raised neither labels nor MemoryBudgetError: {outcome['detail']}")
    if how == 0:
        return None
    headrooms = spec["headrooms"]
    limit = headrooms[len(outcomes)] if len(outcomes) < len(headrooms) else None
    during = f" limited to {_mib(limit)} more address space" if limit is not None else ""
    if how is None:
        return f"check_consensus_memory_limit: {what}{during} did not finish in {timeout} s:\n{stderr}"
    ended = f"was killed by signal {-how}" if how < 0 else f"exited with status {how}"
    return f"check_consensus_memory_limit: the child running {what}{during} {ended}:\n{stderr}"


def check_consensus_memory_limits(cases: Mapping[str, Mapping[str, Any]], *,
                                  timeout: float = 300) -> dict[str, dict[str, Any]]:
    """:func:`check_consensus_memory_limit` for several consensus functions, without raising.

    One child process imports cclust and the functions once; each function then runs in a
    process forked from it, which starts as that child was before any function ran (no
    function's leftovers stand in for another's allocations), without a start-up and imports
    of its own.

    Parameters
    ----------
    cases : dict
        Registered consensus name (or ``"module:function"``, registered in the child) -> the
        keyword arguments of :func:`check_consensus_memory_limit` for it (``n_samples``,
        ``headrooms``, ``params``...).
    timeout : float, default=300
        Seconds each function may take; one that takes longer is killed and fails.

    Returns
    -------
    results : dict
        Per name, ``{"outcomes": [...], "failure": None or str, "seconds": float}``: the outcomes as
        :func:`check_consensus_memory_limit` returns them, and the message it would raise
        (a raw allocation failure, another exception, a signal, a hang), and the wall time of
        the function's process (None if it never ran). Empty where the limit
        cannot be set (not Linux, or no ``fork``): nothing was run.

    Examples
    --------
    >>> from cclust.testing import check_consensus_memory_limits
    >>> results = check_consensus_memory_limits({"kcc": {"n_samples": 20_000}, "voting": {}})  # doctest: +SKIP
    >>> [r["failure"] for r in results.values()]  # doctest: +SKIP
    [None, None]
    """
    try:
        import resource
    except ImportError:
        return {}
    if not hasattr(resource, "RLIMIT_AS") or not os.path.exists("/proc/self/status") or not hasattr(os, "fork"):
        return {}
    specs = [_limit_spec(name, **kwargs) for name, kwargs in cases.items()]
    # one thread and one allocator arena: every extra thread's stack and arena is address space,
    # which would make the limits depend on the machine's core count (and, one thread, no OpenMP
    # or BLAS thread started before a fork)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               MALLOC_ARENA_MAX="1")
    env.pop("CCLUST_MEMORY_BUDGET", None)
    with tempfile.TemporaryDirectory(prefix="cclust-limit-") as tmp:
        try:
            # cwd: a source checkout in the working folder would shadow the installed cclust
            done = subprocess.run([sys.executable, "-c", _LIMIT_ZYGOTE, json.dumps(specs), str(timeout)],
                                  capture_output=True, text=True, env=env, cwd=tmp,
                                  timeout=timeout * len(specs) + 120)
            stdout, stderr, status = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired as exc:
            stdout, stderr, status = _text(exc.stdout), _text(exc.stderr), None
    records = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    ends = {r["name"]: r for r in records if r["event"] == "end"}
    results: dict[str, dict[str, Any]] = {}
    for spec in specs:
        outcomes = [_outcome(r) for r in records if r["event"] == "call" and r["name"] == spec["name"]]
        if spec["name"] in ends:
            end = ends[spec["name"]]
            failure = _limit_failure(spec, outcomes, end["status"], end["stderr"], timeout)
        else:   # the child that forks them failed
            how = f"status {status}" if status is not None else f"no end in {timeout * len(specs) + 120} s"
            failure = (f"check_consensus_memory_limit: the process that runs the functions stopped ({how}) "
                       f"before {spec['name']} ran:\n{stderr[-2000:]}")
        seconds = ends[spec["name"]]["seconds"] if spec["name"] in ends else None
        results[spec["name"]] = {"outcomes": outcomes, "failure": failure, "seconds": seconds}
    return results


def _text(output):
    """A TimeoutExpired's captured output (bytes even under text=True) as text."""
    if output is None:
        return ""
    return output.decode(errors="replace") if isinstance(output, bytes) else output


def _outcome(record):
    return {key: record[key] for key in ("outcome", "detail", "headroom", "baseline")}


def check_consensus_memory_limit(name: str, *, n_samples: int = 3000, n_partitions: int = 10, n_labels: int = 8,
                                 n_clusters: int = 4, headrooms: Sequence[int] = (2 * 2**20, 16 * 2**20, 64 * 2**20),
                                 params: Mapping[str, Any] | None = None, seed: int = 0,
                                 timeout: float = 300) -> list[dict[str, Any]]:
    """Run a registered consensus function under address-space limits that it hits.

    A child process (forked from one that imported cclust and the method; see
    :func:`check_consensus_memory_limits`) builds a random ensemble (``n_samples`` x ``n_partitions`` labels in
    ``0..n_labels-1``, and features ``X`` of shape ``(n_samples, 2)`` for methods that take
    them) and calls the function once on its first 300 objects, so that imports, thread pools
    and one-off buffers are in place. Then, for each of ``headrooms`` in turn, it reads its own
    address-space size, limits it (``RLIMIT_AS``) to that many bytes more and calls the function
    on the whole ensemble through :func:`cclust.consensus`, stopping at the first call that
    returns labels. Each call must return labels or raise
    :class:`~cclust.errors.MemoryBudgetError` (a memory guard, or an allocation failure turned
    into one at the registry's door): a raw ``MemoryError`` or ``std::bad_alloc`` that got past
    the door, any other exception, a signal (a C++ exception escaping a thread, an abort in a
    library) or a hang fails the check. Several headrooms make the allocations fail at several
    stages of the method; choose sizes so that at least the first binds (the outcomes say
    which did).

    Parameters
    ----------
    name : str
        A registered consensus function (built-in or plugin).
    n_samples, n_partitions, n_labels : int, default=3000, 10, 8
        Size of the random ensemble (built before any limit is set).
    n_clusters : int, default=4
    headrooms : sequence of int, default=(2 MiB, 16 MiB, 64 MiB)
        Address space each call may add to what the child holds before it, in increasing order.
    params : dict, default=None
        Keyword arguments of the method.
    seed : int, default=0
        Seed of the ensemble and features.
    timeout : float, default=300
        Seconds the child may take.

    Returns
    -------
    outcomes : list of dict
        One per call made: ``{"outcome": "labels" or "refused", "detail": str, "headroom": int,
        "baseline": int}`` (the refusal's message; the child's address-space size before the
        limit). Empty where the limit cannot be set (not Linux): nothing was run.

    Raises
    ------
    AssertionError
        Naming the method, the limit and what went wrong.

    Examples
    --------
    >>> from cclust.testing import check_consensus_memory_limit
    >>> outcomes = check_consensus_memory_limit("kcc", n_samples=20_000)  # doctest: +SKIP
    >>> [o["outcome"] for o in outcomes]  # doctest: +SKIP
    ['refused', 'refused', 'labels']
    """
    results = check_consensus_memory_limits(
        {name: {"n_samples": n_samples, "n_partitions": n_partitions, "n_labels": n_labels, "n_clusters": n_clusters,
                "headrooms": headrooms, "params": params, "seed": seed}}, timeout=timeout)
    if not results:
        return []
    if results[name]["failure"]:
        raise AssertionError(results[name]["failure"])
    return results[name]["outcomes"]


def _mib(n_bytes):
    """``n_bytes`` in words: '+12 MiB'."""
    return f"+{n_bytes / 2**20:.0f} MiB"
