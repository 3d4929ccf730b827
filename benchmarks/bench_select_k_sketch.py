"""select_k on a sketch (sketch, choose, propagate) at 10^4 to 10^6 objects: time, peak memory,
the K chosen, the ARI of every object's labels against the truth, and the agreement between
sketches; at the smallest n also the exact protocol on every object for comparison.

The data: Gaussian blobs, K = 6 of unequal sizes (one of 2% of the objects), 20 features, centres
drawn in a box so that k-means separates them. Each run is its own process (peak RSS is its
``ru_maxrss``; the growth is that minus the RSS after loading the data and warming up).

    python benchmarks/bench_select_k_sketch.py --sizes 10000 100000 1000000 --sketch 5000 --sketches 2
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

CHILD = r"""
import json, resource, sys, time
import numpy as np
import cclust
n, sketch, sketches, seed = (int(v) for v in sys.argv[1:5])
rng = np.random.default_rng(seed)
sizes = np.array([0.3, 0.25, 0.2, 0.13, 0.1, 0.02])
counts = np.floor(sizes * n).astype(int); counts[0] += n - counts.sum()
centres = rng.uniform(-12, 12, (6, 20))
X = np.vstack([rng.normal(c, 1.0, (m, 20)) for c, m in zip(centres, counts)])
y = np.repeat(np.arange(6), counts)
cclust.select_k(X[:80], [2, 3], n_resamples=2, random_state=0)          # warm-up
with open("/proc/self/status") as handle:
    before = next(int(line.split()[1]) for line in handle if line.startswith("VmRSS")) * 1024
start = time.perf_counter(); cpu = time.process_time()
kwargs = dict(sketch=sketch, n_sketches=sketches) if sketch else {}
res = cclust.select_k(X, range(2, 11), random_state=seed, **kwargs)
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
ari = cclust.get("ari")(res.labels[res.best_k], y) if res.best_k > 1 else 0.0
print(json.dumps(dict(n=n, sketch=sketch, best_k=res.best_k, ari=ari, wall=wall, cpu=cpu, peak=peak,
                      growth=peak - before, sketch_best_k=res.sketch_best_k,
                      agreement=None if res.sketch_agreement is None else res.sketch_agreement.get(res.best_k))))
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000, 1000000])
    parser.add_argument("--sketch", type=int, default=5000)
    parser.add_argument("--sketches", type=int, default=2)
    parser.add_argument("--exact-up-to", type=int, default=10000, help="also run the exact protocol up to this n")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("| n | route | K chosen (sketches) | ARI | agreement at K | wall s | CPU s | peak GiB | growth GiB | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in args.sizes:
        runs = [(args.sketch, args.sketches)] if n > args.sketch else []
        if n <= args.exact_up_to:
            runs.append((0, 1))
        for sketch, sketches in runs:
            out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(sketch), str(sketches), str(args.seed)],
                                 capture_output=True, text=True)
            if out.returncode:
                print(f"| {n} | {'sketch' if sketch else 'exact'} | failed: {out.stderr.strip().splitlines()[-1]} |")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            route = f"sketch {sketch} x {sketches}" if sketch else "exact (every object)"
            ks = f"{r['best_k']}" + (f" ({', '.join(map(str, r['sketch_best_k']))})" if r["sketch_best_k"] else "")
            agreement = "-" if r["agreement"] is None else f"{r['agreement']:.3f}"
            print(f"| {n} | {route} | {ks} | {r['ari']:.3f} | {agreement} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                  f"{r['peak'] / 2**30:.2f} | {r['growth'] / 2**30:.2f} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
