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


def write_report(text, path):
    """Print a Markdown report and, when ``path`` is given, write it there too."""
    print(text)
    if path:
        with open(path, "w") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
