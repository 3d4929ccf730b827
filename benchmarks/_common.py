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
    """Classes of 8 and r noisy refinements of them as ``(y, Ensemble)``: partition i splits every
    class into K_i // 8 parts at random (K_i drawn in [k_low, k_high]), then a tenth of its
    labels is redrawn among its K_i clusters. The ensembles of the label-code benchmarks
    (uint8 codes for K_i up to 127, uint16 above)."""
    import numpy as np

    import cclust

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 8, n)
    columns = []
    for _ in range(r):
        k = int(rng.integers(k_low, k_high + 1))
        labels = y * (k // 8) + rng.integers(0, max(1, k // 8), n)
        noise = rng.random(n) < 0.1
        labels[noise] = rng.integers(0, k, int(noise.sum()))
        columns.append(labels)
    return y, cclust.Ensemble(np.column_stack(columns))


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
