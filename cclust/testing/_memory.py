"""Peak memory of consensus functions, measured in child processes.

:func:`peak_memory` runs registered consensus functions on given problems and returns the
peak memory each call added: the growth of the resident set (RSS) high-water mark during the
call, read from ``/proc/self/status`` (``VmHWM``) after resetting it with
``/proc/self/clear_refs``. RSS counts every allocation: NumPy's, and also the C++ cores',
METIS's and Mt-KaHyPar's, which :mod:`tracemalloc` does not see (it traces only allocations
made through Python's allocators). Where the high-water mark cannot be reset (not Linux), the
tracemalloc peak of the call is returned instead and ``source`` says so.

Each problem runs in one child process (one import for all its methods, and the memory of one
problem never hides another's); every method is first run once on the first 60 objects, so its
imports and one-off buffers are not counted.
"""
import gc
import json
import os
import subprocess
import sys
import tempfile

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

    with open(spec_path) as f:
        spec = json.load(f)
    data = np.load(spec["data"])
    X, labels = data["X"], data["labels"]
    weights = data["weights"] if "weights" in data else None
    ensemble = cclust.Ensemble(labels, weights=weights)
    small = cclust.Ensemble(labels[:WARM_UP_OBJECTS])
    results = {}
    for name, kwargs in spec["methods"]:
        kwargs = dict(kwargs)
        n_clusters = kwargs.pop("n_clusters", spec["n_clusters"])
        needs_X = method_info(cclust.get(name)).requires_X

        def call(E, rows):
            extra = {"X": X[:rows]} if needs_X else {}
            return cclust.consensus(name, E, n_clusters, random_state=0, **extra, **kwargs)

        try:
            call(small, WARM_UP_OBJECTS)
        except Exception:  # noqa: BLE001 -- a refusal of the small problem shows again below
            pass
        try:
            peak, source = _measure(lambda: call(ensemble, X.shape[0]))
            results[name] = {"bytes": peak, "source": source}
        except MemoryBudgetError as exc:
            results[name] = {"refused": str(exc)}
        except Exception as exc:  # noqa: BLE001 -- reported per method, the others still run
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
    json.dump(results, sys.stdout)


def peak_memory(problems, methods, *, n_clusters, env=None, timeout=600):
    """Peak memory of consensus calls, one child process per problem, run side by side.

    Parameters
    ----------
    problems : list of (X, Ensemble)
        The features (passed to methods that take ``X``) and the ensemble of each problem.
    methods : list of (str, dict)
        Registered consensus names with their keyword arguments (``n_clusters`` may be given
        per method; ``random_state=0`` always is).
    n_clusters : int
    env : dict, default=None
        Environment variables set in the children (e.g. ``CCLUST_MEMORY_BUDGET``).
    timeout : float, default=600
        Seconds a child may take.

    Returns
    -------
    results : list of dict
        Per problem, ``name -> {"bytes": int, "source": "rss" or "tracemalloc"}``, or
        ``{"refused": message}`` for a method that refused with a MemoryBudgetError, or
        ``{"error": message}`` for one that raised anything else.

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
    child_env = dict(os.environ, **_ALLOCATOR_ENV, **(env or {}))
    with tempfile.TemporaryDirectory(prefix="cclust-memory-") as tmp:
        running = []
        for i, (X, ensemble) in enumerate(problems):
            data = os.path.join(tmp, f"problem{i}.npz")
            np.savez(data, X=np.asarray(X, dtype=np.float64), labels=ensemble.labels, weights=ensemble.weights)
            spec = os.path.join(tmp, f"problem{i}.json")
            with open(spec, "w") as f:
                json.dump({"data": data, "methods": [[m, dict(kw)] for m, kw in methods],
                           "n_clusters": int(n_clusters)}, f)
            # cwd: "python -c" puts the working folder first on sys.path, and a source checkout
            # there (without its compiled modules) would shadow the installed cclust
            running.append(subprocess.Popen([sys.executable, "-c", _CHILD, spec],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                            env=child_env, cwd=tmp))
        outputs = [child.communicate(timeout=timeout) + (child.returncode,) for child in running]
    results = []
    for out, err, status in outputs:
        if status != 0:
            raise RuntimeError(f"the memory-measuring child failed (status {status}):\n{err}")
        results.append(json.loads(out))
    return results

