"""What a Lloyd loop in Python would cost next to the compiled one (the driver question).

The compiled ``lloyd`` runs every pass, the centre update, the tolerance test and the reseed in
C++. A Python driver over a one-pass kernel would add, per pass: one call into the compiled
module (argument conversion, the GIL released and taken back), the K x sum K_i (and K x d)
tally delta returned as new arrays and added to the tally, the centres computed from the tally
in NumPy, and the loop's tests. This script

1. runs each workload once with ``_engine.lloyd`` wrapped to count its calls and passes
   (n_iter + 1 each, a lower bound: an undone rise costs one more) and times it;
2. times that per-pass work in Python on the workload's own shapes (n = 1 rows, so the kernel
   does no work and what is left is the overhead);
3. prints the Python loop's extra time as a share of the workload's time.

Usage::

    python benchmarks/bench_driver_overhead.py            # needs ../shared/data/pendigits.npz
"""
import os
import time

import numpy as np

import cclust
from cclust import _engine
from cclust._ext import _kmeans
from cclust.datasets import load_iris


def load_pendigits():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "pendigits.npz")
    with np.load(path, allow_pickle=False) as data:
        return data["X"], data["y"]


class Counter:
    """Wraps _engine.lloyd: calls, passes and the shapes (K, width, d) it saw."""

    def __init__(self):
        self.calls = self.passes = 0
        self.shapes = []
        self.real = _engine.lloyd

    def __enter__(self):
        def counted(space, initial_labels, n_clusters, **kw):
            run = self.real(space, initial_labels, n_clusters, **kw)
            self.calls += 1
            self.passes += run.n_iter + 1
            self.shapes.append((n_clusters, int(space.offsets[-1]), space.X.shape[1], space))
            return run

        _engine.lloyd = counted
        return self

    def __exit__(self, *exc):
        _engine.lloyd = self.real


def centres_from_tally(counts, sizes, sums, offsets):
    """The centre update a Python driver would run per pass (vectorised NumPy)."""
    k = sizes.shape[0]
    dense = sums / np.maximum(sizes, 1)[:, None] if sums.shape[1] else np.empty((k, 0))
    width = counts.shape[1]
    if not width:
        return dense, np.empty((k, 0))
    starts = offsets[:-1]
    totals = np.add.reduceat(counts, starts, axis=1)  # (K, r)
    per_slot = np.repeat(totals, np.diff(offsets), axis=1)
    cat = counts / np.maximum(per_slot, 1)
    return dense, cat


def per_pass_overhead(K, width, d, space, repeats=2000):
    """Seconds of one Python-driven pass beyond the kernel's own work (n = 1)."""
    one = _engine.MixedSpace(np.ascontiguousarray(space.X[:1]), space.dense_weight,
                             np.ascontiguousarray(space.labels[:1]), space.offsets, space.weights,
                             space.family, space.p)
    args = one._args()
    labels = np.zeros(1, dtype=np.int32)
    counts = np.zeros((K, width), dtype=np.int64)
    sizes = np.ones(K, dtype=np.int64)
    sums = np.zeros((K, d))
    dense_c, cat_c = _kmeans.centroids(*args, labels, K, 1)
    # the kernel's own table build (K x width) is paid by the compiled loop too: subtract it
    t0 = time.perf_counter()
    for _ in range(repeats):
        _kmeans.objective(*args, dense_c, cat_c, labels, 1)
    kernel_call = (time.perf_counter() - t0) / repeats
    prev_obj = 1.0
    t0 = time.perf_counter()
    for it in range(repeats):
        _, obj = _kmeans.objective(*args, dense_c, cat_c, labels, 1)
        delta = np.zeros((K, width), dtype=np.int64)  # what the pass would return
        dsizes = np.zeros(K, dtype=np.int64)
        counts += delta
        sizes += dsizes
        dense_c, cat_c = centres_from_tally(counts, sizes, sums, space.offsets)
        dense_c, cat_c = np.ascontiguousarray(dense_c), np.ascontiguousarray(cat_c)
        if it > 0 and obj > prev_obj:
            pass
        if (sizes == 0).any():
            pass
        if (prev_obj - obj) < 1e-6 * abs(prev_obj):
            pass
        prev_obj = obj
    python_pass = (time.perf_counter() - t0) / repeats
    # the compiled loop also calls into C++ once per run and updates centres in C++; charge the
    # Python loop only for the difference: the whole Python pass minus the table-building call
    # time it shares with the compiled pass is an upper bound, the full python_pass a looser one
    return python_pass, kernel_call


def workload(name, fn):
    fn()  # warm up (imports, first-touch)
    with Counter() as c:
        t0 = time.perf_counter()
        fn()
        total = time.perf_counter() - t0
    # overhead measured on a few representative shapes, weighted by how often each occurs
    seen = {}
    for K, width, d, space in c.shapes:
        seen.setdefault((K, width, d), [0, space])[0] += 1
    picks = sorted(seen.items(), key=lambda kv: -kv[1][0])[:6]
    weighted, calls = 0.0, 0
    for (K, width, d), (count, space) in picks:
        py, _ = per_pass_overhead(K, width, d, space, repeats=500)
        weighted += py * count
        calls += count
    per_pass = weighted / calls
    extra = per_pass * c.passes
    print(f"{name}: {total:.3f} s, {c.calls} lloyd calls, {c.passes} passes, "
          f"Python per-pass overhead {per_pass * 1e6:.1f} us -> +{extra:.3f} s "
          f"(+{100 * extra / total:.1f}%)", flush=True)
    return total, extra


def main():
    X, _ = load_pendigits()
    E = cclust.generate("kmeans", X, 10, n_partitions=100, k_range=(2, 20), random_state=0)
    Xi, _ = load_iris()
    workload("(a) gkcc pendigits K=10", lambda: cclust.consensus("gkcc", E, 10, X=X, random_state=0))
    workload("(b) kcc pendigits K=10, n_init=10",
             lambda: cclust.consensus("kcc", E, 10, utility="uc", random_state=0))
    workload("(c) kmeans generator iris, 100 partitions",
             lambda: cclust.generate("kmeans", Xi, 3, n_partitions=100, random_state=0, n_jobs=1))
    workload("(d) kmeans generator pendigits, 100 partitions",
             lambda: cclust.generate("kmeans", X, 10, n_partitions=100, k_range=(2, 20),
                                     random_state=0, n_jobs=1))


if __name__ == "__main__":
    main()
