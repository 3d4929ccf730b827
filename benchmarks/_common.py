"""Helpers shared by the benchmark and reproduction scripts (run as ``python benchmarks/x.py``,
which puts this folder on sys.path)."""
import platform
import time


def best_of(fn, repeats=1):
    """Smallest wall time of ``repeats`` calls of ``fn()``, and the value of the last call."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def timed(fn):
    """``(fn(), wall seconds, CPU seconds of this process and its threads)``."""
    import os

    start, cpu = time.perf_counter(), os.times()
    out = fn()
    end = os.times()
    return out, time.perf_counter() - start, (end.user + end.system) - (cpu.user + cpu.system)


def cpu_model():
    """The CPU's model name (Linux), else what platform reports."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def noisy_refinements(n, r, k_low=8, k_high=40, seed=0):
    """``(y, Ensemble)`` of :func:`cclust.testing.noisy_refinements` with K_i in [k_low, k_high]
    (uint8 codes up to 127 clusters, uint16 above), the same ensembles whichever cclust is
    imported: that function's module is loaded from this checkout's file (it imports only NumPy
    until it builds the Ensemble, which is the imported cclust's), so a benchmark that compares
    trees, older ones without it included, runs them on the same labels."""
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cclust", "testing", "_data.py")
    spec = importlib.util.spec_from_file_location("_checkout_testing_data", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _, y, ensemble = module.noisy_refinements(n, r, k_range=(k_low, k_high), seed=seed)
    return y, ensemble


def write_report(text, path):
    """Print a Markdown report and, when ``path`` is given, write it there too."""
    print(text)
    if path:
        with open(path, "w") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")


def write_table(title, columns, rows, path):
    """:func:`write_report` of a Markdown table under ``title`` and the command that made it."""
    import sys

    script = "benchmarks/" + sys.argv[0].replace("\\", "/").split("/")[-1]
    header = [title, "", f"Command: `python {script} " + " ".join(sys.argv[1:]) + "`", "",
              "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    write_report("\n".join(header + list(rows)), path)
