"""Peak memory and time of the graph methods' ``sizes`` machinery alone, at 10^5 and 10^6 objects.

On the synthetic ensemble of ``bench_memory_scale.py`` (8 classes, r partitions, K_i in
[8, min(ceil(sqrt(n)), k_cap)], uint8 codes), each measure runs in a child process of its own
and reports the growth of the resident set's high-water mark over the process's state after
the ensemble is built (after a warm-up on 300 objects), and the wall time:

* ``estimate``: ``estimate_clusters(E, 8)`` then ``choose_sizes`` between a random equal-size
  partition and the estimate (the work ``sizes="auto"`` adds to a graph method's own cut);
* ``steps``: steps 2 to 4 of the estimate (moves to the best average, average linkage, moves)
  and ``choose_sizes`` from a KCC fine cut computed beforehand, i.e. the passes without the
  fine cut.

    python benchmarks/bench_sizes_estimate.py [--sizes 100000 1000000] [--partitions 100]
        [--k-cap 50] [--measures estimate steps]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from bench_memory_scale import N_CLASSES, make_problem

_CHILD = r"""
import gc, json, sys, time
import numpy as np
import cclust
import cclust.graph._sizes as S
from cclust.errors import MemoryBudgetError
from cclust.testing._memory import _release_freed_memory, _reset_high_water_mark, _status_kib
from cclust.validation import recorded_memory_requests
spec = json.loads(sys.argv[1])
k = spec["k"]
E = cclust.Ensemble._from_codes(np.load(spec["labels"]))
equal = np.random.default_rng(1).permutation(np.arange(E.n_samples) % k)
fine = None
if spec["measure"] == "steps":
    fine = np.unique(S._kcc_fine_cut(E, 3 * k, 0, 2), return_inverse=True)[1].ravel()

def run(E, fine, equal):
    if fine is None:
        return S.choose_sizes(E, equal, S.estimate_clusters(E, k, random_state=0))
    own = S._scores(E, S._column_weights(E)[:, None], 2).ravel()
    groups, n_groups = S._move_to_best_average(E, own, fine, int(fine.max()) + 1, 1, 2)
    labels = S._average_linkage(E, groups, n_groups, k, 2)[groups]
    return S.choose_sizes(E, equal, S._move_to_best_average(E, own, labels, k, 1, 2)[0])

small = E.take(objects=np.arange(300))
run(small, None if fine is None else fine[:300] % 3, equal[:300])
gc.collect(); _release_freed_memory(); _reset_high_water_mark()
before = _status_kib("VmRSS")
start = time.perf_counter()
out = {}
try:
    with recorded_memory_requests() as asked:
        _, used, cuts = run(E, fine, equal)
    out.update(used=used, cuts=[round(c, 6) for c in cuts])
except MemoryBudgetError as error:
    out["refused"] = str(error)[:120]
out.update(seconds=round(time.perf_counter() - start, 2),
           peak_mib=round((_status_kib("VmHWM") - before) / 1024, 1),
           asked_mib=round(max(asked, default=0) / 2**20, 1))
print(json.dumps(out))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100000, 1000000])
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--k-cap", type=int, default=50)
    parser.add_argument("--measures", nargs="+", default=["estimate", "steps"], choices=["estimate", "steps"])
    args = parser.parse_args()
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072", MALLOC_TRIM_THRESHOLD_="131072")
    print("| n x r | measure | outcome | seconds | peak over the ensemble | largest figure asked | load |")
    print("|---|---|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            _, labels = make_problem(n, args.partitions, seed=0, k_cap=args.k_cap)
            path = os.path.join(tmp, f"labels_{n}.npy")
            np.save(path, labels.astype(np.uint8 if labels.max() < 255 else np.int32))
            del labels
            for measure in args.measures:
                spec = json.dumps({"labels": path, "k": N_CLASSES, "measure": measure})
                with open("/proc/loadavg") as handle:
                    load = " ".join(handle.read().split()[:3])
                done = subprocess.run([sys.executable, "-c", _CHILD, spec], capture_output=True, text=True, env=env)
                if done.returncode:
                    tail = done.stderr.strip()[-200:]
                    print(f"| {n} x {args.partitions} | {measure} | failed: {tail} | | | | {load} |")
                    continue
                out = json.loads(done.stdout.strip().splitlines()[-1])
                outcome = out.get("refused") or f"{out['used']}, cuts {out['cuts']}"
                print(f"| {n} x {args.partitions} | {measure} | {outcome} | {out['seconds']} | {out['peak_mib']} MiB "
                      f"| {out['asked_mib']} MiB | {load} |", flush=True)


if __name__ == "__main__":
    main()
