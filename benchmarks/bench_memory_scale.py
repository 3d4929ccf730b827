"""Peak memory of every registered consensus method at 10^5 and 10^6 objects, over the ensemble's own size.

The ensemble is built cheaply instead of by running r k-means: n objects in K = 8 true classes
(equal shares, shuffled), and each of r = 100 partitions is a noisy refinement of them, drawn
in one vectorised pass per partition: K_i is drawn in [K, ceil(sqrt(n))] as the default
generator draws it, each class is split at random into about K_i / K labels of that
partition, and 10% of the objects get a uniformly random label instead (every label ends up
used, none is missing). Methods that take features get 2-D points around the class centres.

Each method runs with its defaults and the true K (``best`` with ``n_clusters=None``) in a
child process of its own, so the memory one method leaves behind never shows in another's.
The child builds the ensemble, runs the method once on the first 300 objects (imports, thread
pools), then measures the growth of the resident set's high-water mark during the call
(:func:`cclust.testing.peak_memory`'s measure: NumPy's, the C++ cores' and METIS's allocations
alike) over the process's state after the ensemble is built. A child that runs past
``--timeout`` seconds is stopped and shows "timeout" with the peak it had reached; a
MemoryBudgetError shows "refuses" with the bytes asked for.

Beside each peak stands the largest figure the call's memory guards asked of the budget
(every :func:`cclust.validation.require_memory` call is recorded, granted or not, the same
record :func:`cclust.testing.peak_memory` reports as ``asked``) over that peak: a guard's figure
should be within 1.5x of the peak it guards either way, and a call that adds more than 256 MiB
should have asked something; "(!)" marks either miss (not where figure and peak both stay
under 64 MiB, within the measure's noise).

    python benchmarks/bench_memory_scale.py [--sizes 100000 1000000] [--partitions 100]
        [--timeout 120] [--methods kcc hbgf ...] [--k-cap 50] [--out table.md]

``--k-cap 50`` draws K_i as the default generator does today (``[K, min(ceil(sqrt(n)), 50)]``);
without it K_i reaches ceil(sqrt(n)) (the generator's range when these tables began: 316 at
10^5, 1000 at 10^6), which makes the cluster-level structures of every method far larger.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import cpu_model, write_report

#: True classes of the synthetic problem.
N_CLASSES = 8

_CHILD = r"""
import json, sys, time
import numpy as np
import cclust
from cclust.base import method_info
from cclust.errors import InputSizeError
from cclust.testing._memory import _release_freed_memory, _reset_high_water_mark, _status_kib
from cclust.validation import recorded_memory_requests
import gc, threading
spec = json.loads(sys.argv[1])
labels = np.load(spec["labels"])
E = cclust.Ensemble._from_codes(labels)
del labels
X = np.load(spec["X"]) if method_info(cclust.get(spec["name"])).requires_X else None
kw = dict(spec["params"])
k = kw.pop("n_clusters", spec["n_clusters"])
def call(ens, rows):
    extra = {} if X is None else {"X": X[:rows]}
    return cclust.consensus(spec["name"], ens, k, random_state=0, **extra, **kw)
try:
    call(E.take(objects=np.arange(300)), 300)
except Exception:
    pass
gc.collect()
_release_freed_memory()
_reset_high_water_mark()
before = _status_kib("VmRSS")
with open(spec["baseline"], "w") as f:
    f.write(str(before))
def report_asked(asked, stop):
    # the largest figure asked so far, for the parent to read if the call runs past its time
    while not stop.wait(0.5):
        with open(spec["asked"], "w") as f:
            f.write(str(max(asked, default=0)))
start = time.perf_counter()
with recorded_memory_requests() as asked:
    stop = threading.Event()
    threading.Thread(target=report_asked, args=(asked, stop), daemon=True).start()
    try:
        call(E, E.n_samples)
        out = {"bytes": max(0, _status_kib("VmHWM") - before) * 1024, "seconds": time.perf_counter() - start}
    except InputSizeError as exc:   # a memory budget or a size limit: a refusal before the work
        out = {"refused": str(exc), "seconds": time.perf_counter() - start}
    except Exception as exc:
        out = {"error": f"{type(exc).__name__}: {exc}"[:300], "seconds": time.perf_counter() - start}
    stop.set()
out["asked"] = max(asked, default=0)
print(json.dumps(out))
"""


def make_problem(n, r, seed=0, k_cap=None):
    """(X, labels) of the synthetic problem described in the module docstring; ``k_cap`` caps
    K_i's range (50: the default generator's range, ``[K, min(ceil(sqrt(n)), 50)]``)."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % N_CLASSES)
    centres = rng.normal(0.0, 6.0, size=(N_CLASSES, 2))
    X = centres[y] + rng.normal(size=(n, 2))
    labels = np.empty((n, r), dtype=np.int32)
    high = int(np.ceil(np.sqrt(n)))
    if k_cap is not None:
        high = max(N_CLASSES, min(high, k_cap))
    for j in range(r):
        k_i = int(rng.integers(N_CLASSES, high + 1))
        per_class = k_i // N_CLASSES
        column = y * per_class + rng.integers(0, per_class, size=n)
        noisy = rng.random(n) < 0.1
        column[noisy] = rng.integers(0, per_class * N_CLASSES, size=int(noisy.sum()))
        labels[:, j] = column
    return X, labels


def run_one(name, params, paths, timeout):
    spec = json.dumps({"name": name, "params": params, "n_clusters": N_CLASSES, **paths})
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072", MALLOC_TRIM_THRESHOLD_="131072")
    start = time.perf_counter()
    for path in (paths["baseline"], paths["asked"]):
        if os.path.exists(path):
            os.remove(path)
    child = subprocess.Popen([sys.executable, "-c", _CHILD, spec], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, cwd=os.path.dirname(paths["labels"]))
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # the peak so far: the child reset its high-water mark just before the call
        result = {"timeout": timeout}
        try:
            with open(f"/proc/{child.pid}/status") as status:
                hwm = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
            with open(paths["baseline"]) as f:
                result["bytes_so_far"] = max(0, hwm - int(f.read())) * 1024
            with open(paths["asked"]) as f:
                result["asked"] = int(f.read())
        except (OSError, ValueError, StopIteration):
            pass
        child.kill()
        child.communicate()
        return result
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if child.returncode != 0 or not lines:
        return {"error": f"child status {child.returncode}: {err.strip().splitlines()[-1:]}",
                "seconds": time.perf_counter() - start}
    return json.loads(lines[-1])


def cell(result, ensemble_bytes):
    if "bytes" in result:
        return f"{result['bytes'] / 2**20:,.0f} MiB ({result['bytes'] / ensemble_bytes:.1f}x)"
    if "refused" in result:
        asked = re.search(r"\((\d+) bytes\)", result["refused"])
        if asked:
            return f"refuses ({int(asked.group(1)) / 2**20:,.0f} MiB asked)"
        return "refuses (size limit)" if "max_objects" in result["refused"] else "refuses"
    if "timeout" in result:
        so_far = result.get("bytes_so_far")
        at_least = f", >= {so_far / 2**20:,.0f} MiB ({so_far / ensemble_bytes:.1f}x)" if so_far is not None else ""
        return f"timeout (> {result['timeout']:.0f} s{at_least})"
    return "error: " + result["error"][:80]


#: A guard's figure may be off the peak it guards by this factor either way.
FIGURE_TOLERANCE = 1.5
#: A call whose peak passes this without asking the budget anything is marked.
UNGUARDED_PEAK = 256 * 2**20
#: Below this (figure and peak alike) a ratio is not marked: the RSS noise of a 10^5 x 100 call
#: is tens of MiB, and a guard of a small table says nothing of a peak that needs no guard.
SMALL = 64 * 2**20


def figure_cell(result):
    """The largest figure the call's guards asked, over the peak it reached: "1.2", marked "(!)"
    outside [1/1.5, 1.5]; "asks nothing (!)" for a peak above 256 MiB that no guard counted."""
    asked = result.get("asked") or 0
    peak = result.get("bytes", result.get("bytes_so_far"))
    if "refused" in result or peak is None:
        return ""
    more = ">" if "bytes" not in result else ""     # a timeout: the peak is a lower bound
    if asked == 0:
        return "asks nothing (!)" if peak > UNGUARDED_PEAK else ""
    ratio = asked / max(peak, 1)
    # past the time limit the peak can still grow, so only a figure below it is known to be off
    off = ratio < 1 / FIGURE_TOLERANCE if more else not 1 / FIGURE_TOLERANCE <= ratio <= FIGURE_TOLERANCE
    off = off and max(asked, peak) > SMALL
    return f"{format_mib(asked)} / {more}{format_mib(peak)} = {'<' if more else ''}{ratio:.2f}{' (!)' if off else ''}"


def format_mib(n_bytes):
    return f"{n_bytes / 2**20:,.0f} MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=(100000, 1000000))
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per method and size")
    parser.add_argument("--methods", nargs="*", default=None)
    parser.add_argument("--k-cap", type=int, default=None,
                        help="cap K_i's range at this (50: the default generator's range); default: sqrt(n)")
    parser.add_argument("--json", default=None, help="also write the raw results here")
    parser.add_argument("--out", default=None, help="also write the Markdown table here")
    args = parser.parse_args()
    import cclust

    names = args.methods or sorted(cclust.available(kind="consensus"))
    results = {}
    ensemble_bytes = {}
    with tempfile.TemporaryDirectory(prefix="cclust-scale-") as tmp:
        for n in args.sizes:
            X, labels = make_problem(n, args.partitions, k_cap=args.k_cap)
            paths = {name: os.path.join(tmp, f"{name}.npy") for name in ("labels", "X", "baseline", "asked")}
            np.save(paths["labels"], labels)
            np.save(paths["X"], X)
            ensemble_bytes[n] = labels.nbytes
            del X, labels
            for name in names:
                params = {"n_clusters": None} if name == "best" else {}
                results[name, n] = run_one(name, params, paths, args.timeout)
                print(f"{name} n={n}: {results[name, n]}", file=sys.stderr, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{name} {n}": v for (name, n), v in results.items()}, f, indent=1)
    load = os.getloadavg()
    head = " | ".join(f"n = {n:,}" for n in args.sizes)
    figure_head = " | ".join(f"guard's figure / measured peak, n = {n:,}" for n in args.sizes)
    lines = [f"Peak memory each call adds over the state after the ensemble is built (RSS high-water mark; "
             f"in brackets, times the ensemble's own int32 labels: "
             + ", ".join(f"{ensemble_bytes[n] / 2**20:,.0f} MiB at n = {n:,}" for n in args.sizes)
             + f"); r = {args.partitions}, K = {N_CLASSES}, K_i in [K, "
             + ("ceil(sqrt(n))" if args.k_cap is None else f"min(ceil(sqrt(n)), {args.k_cap})")
             + f"]; {cpu_model()}, "
             f"load average {load[0]:.1f} at the end.", "",
             f"| method | {head} | seconds | {figure_head} |",
             "|---|" + "---:|" * len(args.sizes) + "---:|" + "---:|" * len(args.sizes)]
    for name in names:
        cells = " | ".join(cell(results[name, n], ensemble_bytes[n]) for n in args.sizes)
        secs = " / ".join(f"{results[name, n]['seconds']:.0f}" if "seconds" in results[name, n]
                          else f"> {results[name, n].get('timeout', float('nan')):.0f}" for n in args.sizes)
        figures = " | ".join(figure_cell(results[name, n]) for n in args.sizes)
        lines.append(f"| {name} | {cells} | {secs} | {figures} |")
    write_report("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
