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

_LIMIT_CHILD = "import sys; from cclust.testing._memory import _limit_child; _limit_child(sys.argv[1])"

#: Objects of the warm-up call made before the limit is set (imports, thread pools, one-off buffers).
_LIMIT_WARM_UP_OBJECTS = 300


def _limit_child(spec_json):
    import resource

    import cclust
    from cclust.base import method_info
    from cclust.errors import MemoryBudgetError

    spec = json.loads(spec_json)
    name, n, r, k = spec["name"], spec["n_samples"], spec["n_partitions"], spec["n_labels"]
    rng = np.random.default_rng(spec["seed"])
    X = rng.normal(size=(n, 2))
    ensemble = cclust.Ensemble(rng.integers(0, k, size=(n, r)))
    needs_X = method_info(cclust.get(name)).requires_X

    def call(E, rows):
        extra = {"X": X[:rows]} if needs_X else {}
        return cclust.consensus(name, E, spec["n_clusters"], random_state=0, **extra, **spec["params"])

    warm = min(_LIMIT_WARM_UP_OBJECTS, n)
    try:
        call(ensemble.take(objects=np.arange(warm)), warm)
    except Exception:  # noqa: BLE001 -- a refusal of the small problem shows again below
        pass
    outcomes = []
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
        outcomes.append(dict(outcome, headroom=headroom, baseline=baseline))
        # the parent reads every line written so far, so a later signal still shows what passed
        sys.stdout.write(json.dumps(outcomes[-1]) + "\n")
        sys.stdout.flush()
        if outcome["outcome"] != "refused":
            break


def check_consensus_memory_limit(name: str, *, n_samples: int = 3000, n_partitions: int = 10, n_labels: int = 8,
                                 n_clusters: int = 4, headrooms: Sequence[int] = (2 * 2**20, 16 * 2**20, 64 * 2**20),
                                 params: Mapping[str, Any] | None = None, seed: int = 0,
                                 timeout: float = 300) -> list[dict[str, Any]]:
    """Run a registered consensus function under address-space limits that it hits.

    A child process builds a random ensemble (``n_samples`` x ``n_partitions`` labels in
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
    try:
        import resource
    except ImportError:
        return []
    if not hasattr(resource, "RLIMIT_AS") or not os.path.exists("/proc/self/status"):
        return []
    headrooms = [int(h) for h in headrooms]
    spec = json.dumps({"name": name, "n_samples": int(n_samples), "n_partitions": int(n_partitions),
                       "n_labels": int(n_labels), "n_clusters": int(n_clusters), "headrooms": headrooms,
                       "params": dict(params or {}), "seed": int(seed)})
    # one thread and one allocator arena: every extra thread's stack and arena is address space,
    # which would make the limits depend on the machine's core count
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               MALLOC_ARENA_MAX="1")
    env.pop("CCLUST_MEMORY_BUDGET", None)
    what = f"{name} on {n_samples} objects x {n_partitions} partitions"
    with tempfile.TemporaryDirectory(prefix="cclust-limit-") as tmp:
        try:
            # cwd: a source checkout in the working folder would shadow the installed cclust
            done = subprocess.run([sys.executable, "-c", _LIMIT_CHILD, spec], capture_output=True, text=True,
                                  env=env, cwd=tmp, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"check_consensus_memory_limit: {what} did not finish in {timeout} s") from None
    outcomes = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    for outcome in outcomes:
        if outcome["outcome"] not in ("labels", "refused"):
            raise AssertionError(f"check_consensus_memory_limit: {what}, limited to {_mib(outcome['headroom'])} "
                                 f"more address space, raised neither labels nor MemoryBudgetError: "
                                 f"{outcome['detail']}")
    if done.returncode != 0:
        how = (f"was killed by signal {-done.returncode}" if done.returncode < 0
               else f"exited with status {done.returncode}")
        limit = headrooms[len(outcomes)] if len(outcomes) < len(headrooms) else None
        during = f" limited to {_mib(limit)} more address space" if limit is not None else ""
        raise AssertionError(f"check_consensus_memory_limit: the child running {what}{during} {how}:\n"
                             f"{done.stderr[-2000:]}")
    return outcomes


def _mib(n_bytes):
    """``n_bytes`` in words: '+12 MiB'."""
    return f"+{n_bytes / 2**20:.0f} MiB"
