"""Shared plumbing of the atheris harnesses (not part of the package, not run by pytest).

A harness turns the fuzzer's bytes into small arrays with a ``FuzzedDataProvider`` and calls
the compiled cores two ways:

* through the thin Cython wrappers (``cclust._ext._*``) with inputs that meet the wrappers'
  documented preconditions (dtype, contiguity, matching sizes) but arbitrary values, because
  the C++ cores promise to check values themselves and raise ``ValueError``;
* through the public, validated entry points with almost arbitrary input, which must either
  return or raise one of the exceptions listed in :data:`EXPECTED`.

Anything else -- a segfault, an abort, an unexpected exception type -- is a finding: atheris
stops, prints the traceback and writes the input to ``crash-<hash>``.
"""
import os
import sys
import warnings

import numpy as np

# Run from anywhere: the checkout (with extensions built in place) comes first.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A validated entry point may refuse input with these; anything else is a defect. (cclust's own
# errors are ValueError/TypeError/MemoryError/LookupError subclasses; the harness imports
# cclust itself, under atheris.instrument_imports, so its Python code is instrumented.)
EXPECTED = (ValueError, TypeError, MemoryError)

# Warnings are part of normal operation (ConvergenceWarning on degenerate data, ...).
warnings.simplefilter("ignore")


def small_int(fdp, low, high):
    return fdp.ConsumeIntInRange(low, high)


def label_matrix(fdp, n, r, k_max, missing=True):
    """(n, r) int32 labels in -1..k_max-1 (or 0..k_max-1), and every partition's K (max + 1)."""
    low = -1 if missing else 0
    values = [fdp.ConsumeIntInRange(low, k_max - 1) for _ in range(n * r)]
    labels = np.array(values, dtype=np.int32).reshape(n, r)
    return labels


def offsets_of(labels):
    """Ensemble-style offsets: partition j's one-hot columns are offsets[j]..offsets[j+1]-1."""
    ks = labels.max(axis=0).astype(np.int64) + 1 if labels.shape[0] else np.zeros(labels.shape[1], np.int64)
    ks = np.maximum(ks, 1)
    return np.concatenate([[0], np.cumsum(ks)]).astype(np.int64)


def floats(fdp, count, *, finite=False):
    """``count`` float64 values; non-finite ones included unless ``finite``."""
    out = np.empty(count, dtype=np.float64)
    for i in range(count):
        choice = fdp.ConsumeIntInRange(0, 9)
        if finite or choice < 7:
            out[i] = fdp.ConsumeFloatInRange(-1e3, 1e3)
        elif choice == 7:
            out[i] = np.nan
        elif choice == 8:
            out[i] = np.inf
        else:
            out[i] = fdp.ConsumeRegularFloat()
    return out


def call_public(fn, *args, **kwargs):
    """Call a validated entry point; swallow only the exceptions it may raise on bad input."""
    try:
        return fn(*args, **kwargs)
    except EXPECTED:
        return None


def main(test_one_input):
    import sys

    import atheris

    atheris.Setup(sys.argv, atheris.instrument_func(test_one_input))
    atheris.Fuzz()
