"""cclust against SC3s (Quah, Barnes & Hemberg 2022; PyPI ``sc3s``), the streaming consensus
clustering of single-cell data, on the same data at 10^5 and 10^6 objects: time, peak memory and
ARI against the truth.

SC3s clusters the PCA coordinates of an AnnData (``obsm["X_pca"]``) by mini-batch k-means into
3 K "facilities" over 5 runs, then clusters the facilities' consensus; it does not choose K. So
two comparisons, each in its own process:

* **K given**: ``sc3s.tl.consensus(adata, n_clusters=[K])`` against cclust's default estimator,
  ``ConsensusClustering(n_clusters=K, random_state=0).fit_predict(X)``;
* **K chosen**: SC3s run for every K in 2..10 (``n_clusters=range(2, 11)``, its labels at the
  true K scored, since it leaves the choice to the user) against ``cclust.select_k(X, range(2,
  11))`` with its defaults (the reference null; the sketch route at this size), scored at the K
  it chose.

The data: Gaussian blobs, K = 8 of unequal sizes (the smallest 2% of the objects), 25 features
(SC3s's default number of principal components), centres drawn in a box so that k-means
separates them; the same array for both tools. SC3s needs ``numpy<2``, so it runs in its own
virtual environment, named by ``--sc3s-python`` (``python -m venv env && env/bin/pip install
"numpy<2" sc3s``). Peak memory is each process's ``ru_maxrss``.

    python benchmarks/bench_sc3s.py --sizes 100000 1000000 --sc3s-python ../sc3s-venv/bin/python

``--cclust-before DIR`` also runs the cclust source tree in DIR (e.g. an earlier commit's, with its
compiled modules) just before the current one, so that before and after share the load.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

N_CLUSTERS = 8
N_FEATURES = 25

CCLUST = r"""
import json, resource, sys, time
sys.path[:0] = sys.argv[4:5]          # --cclust-before: that source tree first
import numpy as np
import cclust
path, y_path, mode = sys.argv[1:4]
X, y = np.load(path), np.load(y_path)
k = int(y.max()) + 1
cclust.select_k(X[:80], [2, 3], n_resamples=2, random_state=0)          # warm-up: imports
start, cpu = time.perf_counter(), time.process_time()
if mode == "given":
    labels = cclust.ConsensusClustering(n_clusters=k, random_state=0).fit_predict(X)
    chosen = k
else:
    res = cclust.select_k(X, range(2, 11), random_state=0)
    chosen = res.best_k
    labels = res.labels[chosen] if chosen > 1 else np.zeros(len(y), dtype=int)
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
ari = cclust.get("ari")(labels, y)
print(json.dumps(dict(wall=wall, cpu=cpu, ari=ari, k=chosen,
                      peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)))
"""

SC3S = r"""
import json, logging, resource, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
import anndata, sc3s
from sklearn.metrics import adjusted_rand_score
logging.disable(logging.CRITICAL)
path, y_path, mode = sys.argv[1:4]
X, y = np.load(path), np.load(y_path)
k = int(y.max()) + 1
adata = anndata.AnnData(np.zeros((X.shape[0], 1), dtype=np.float32))
adata.obsm["X_pca"] = X
ks = [k] if mode == "given" else list(range(2, 11))
start, cpu = time.perf_counter(), time.process_time()
sc3s.tl.consensus(adata, n_clusters=ks, random_state=0)
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
labels = np.asarray(adata.obs[f"sc3s_{k}"].astype(int))
print(json.dumps(dict(wall=wall, cpu=cpu, ari=float(adjusted_rand_score(y, labels)), k=None,
                      peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)))
"""


def blobs(n, seed):
    rng = np.random.default_rng(seed)
    sizes = np.array([0.25, 0.2, 0.15, 0.12, 0.1, 0.09, 0.07, 0.02])
    counts = np.floor(sizes * n).astype(int)
    counts[0] += n - counts.sum()
    centres = rng.uniform(-10, 10, (N_CLUSTERS, N_FEATURES))
    X = np.vstack([rng.normal(c, 1.0, (m, N_FEATURES)) for c, m in zip(centres, counts)])
    y = np.repeat(np.arange(N_CLUSTERS), counts)
    order = rng.permutation(n)
    return np.ascontiguousarray(X[order]), y[order]


def run(python, script, path, y_path, mode, *extra):
    out = subprocess.run([python, "-c", script, path, y_path, mode, *extra], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100000, 1000000])
    parser.add_argument("--modes", nargs="+", default=["given", "chosen"], choices=["given", "chosen"])
    parser.add_argument("--sc3s-python", default=sys.executable,
                        help="a Python whose environment has sc3s (numpy<2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cclust-before", default=None,
                        help="a cclust source tree (compiled modules in place) run before this one, for a "
                             "before/after row in the same run")
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("| n | K | tool | K used | ARI | wall s | CPU s | peak GiB | time ratio (SC3s / cclust) | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            X, y = blobs(n, args.seed)
            path, y_path = os.path.join(tmp, "X.npy"), os.path.join(tmp, "y.npy")
            np.save(path, X)
            np.save(y_path, y)
            for mode in args.modes:
                tools = []
                if args.cclust_before:
                    tools.append(("cclust, before", run(sys.executable, CCLUST, path, y_path, mode,
                                                        os.path.abspath(args.cclust_before))))
                ours = run(sys.executable, CCLUST, path, y_path, mode)
                tools += [("cclust", ours), ("SC3s", run(args.sc3s_python, SC3S, path, y_path, mode))]
                label = "given (8)" if mode == "given" else "chosen in 2..10"
                for tool, res in tools:
                    if "error" in res:
                        print(f"| {n} | {label} | {tool} | failed: {res['error'][:80]} | | | | | | "
                              f"{os.getloadavg()[0]:.2f} |", flush=True)
                        continue
                    used = res["k"] if res["k"] is not None else "8 (read at the truth)"
                    ratio = ""
                    if tool == "SC3s" and "error" not in ours:
                        ratio = f"{res['wall'] / ours['wall']:.2f}x"
                    print(f"| {n} | {label} | {tool} | {used} | {res['ari']:.3f} | {res['wall']:.1f} | "
                          f"{res['cpu']:.1f} | {res['peak'] / 2**30:.2f} | {ratio} | {os.getloadavg()[0]:.2f} |",
                          flush=True)


if __name__ == "__main__":
    main()
