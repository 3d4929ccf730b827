"""select_k's sketch route at 10^5 objects: the time of one call and a digest of everything
it reports, to check that a change of speed leaves every result equal.

Builds bench_sc3s.py's blobs (8 Gaussian blobs, 25 features), runs
``cclust.select_k(X, range(2, 11), random_state=0)`` (two geometric sketches of 2000 objects,
the resampling protocol with its reference null, propagation to every object) and prints the
wall and CPU seconds, the load average, best_k and a SHA-256 of the labels at every K and of
the statistics. ``--profile FILE`` writes a cProfile of the call.

    python benchmarks/bench_select_k_sketch_calls.py [--n 100000] [--seed 0] [--profile out.prof]
"""
import argparse
import hashlib
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_sc3s import blobs  # noqa: E402

import cclust  # noqa: E402


def digest(res):
    """Best K, a hash of each K's labels and a hash of the reported statistics."""
    out = {"best_k": int(res.best_k)}
    for k in sorted(res.labels):
        out[f"labels_{k}"] = hashlib.sha256(np.ascontiguousarray(res.labels[k], dtype=np.int64).tobytes()).hexdigest()[:16]
    stats = hashlib.sha256()
    for name in ("pac", "cdf", "area", "delta_area", "pac_se", "area_se", "pac_reference", "rcsi", "rcsi_se",
                 "p_value", "p_value_monte_carlo", "p_value_beta"):
        value = getattr(res, name, None)
        if value is not None:
            stats.update(name.encode())
            stats.update(np.ascontiguousarray(value, dtype=np.float64).tobytes())
    for k in sorted(res.sketch_item_consensus):
        stats.update(np.ascontiguousarray(res.sketch_item_consensus[k], dtype=np.float64).tobytes())
    for k in sorted(res.cluster_consensus):
        stats.update(np.ascontiguousarray(res.cluster_consensus[k], dtype=np.float64).tobytes())
    stats.update(repr((res.sketch_best_k, res.sketch_agreement)).encode())
    stats.update(np.ascontiguousarray(res.sketch, dtype=np.int64).tobytes())
    out["statistics"] = stats.hexdigest()[:16]
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--profile")
    args = parser.parse_args()
    X, _ = blobs(args.n, args.seed)
    cclust.select_k(X[:80], [2, 3], n_resamples=2, random_state=0)  # imports
    load = open("/proc/loadavg").read().split()[:3]
    start, cpu = time.perf_counter(), time.process_time()
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        res = profiler.runcall(cclust.select_k, X, range(2, 11), random_state=args.random_state)
        profiler.dump_stats(args.profile)
    else:
        res = cclust.select_k(X, range(2, 11), random_state=args.random_state)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20     # KiB on Linux: GiB
    print(json.dumps(dict(wall=round(wall, 2), cpu=round(cpu, 2), load=" ".join(load), peak_gib=round(peak, 3),
                          **digest(res))))


if __name__ == "__main__":
    main()
