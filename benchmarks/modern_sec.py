"""SEC (Liu, Wu, Liu, Tao & Fu 2017): scale, real data, and a MATLAB implementation under Octave.

    PYTHONPATH=. python benchmarks/modern_sec.py --scale --n 20000,100000 --r 100
    PYTHONPATH=. python benchmarks/modern_sec.py --real --runs 10
    PYTHONPATH=. python benchmarks/modern_sec.py --octave DIR --n 5000 --runs 5

``--scale``: time and peak memory (RSS of a child process, cclust.testing.peak_memory) on the
synthetic ensembles of benchmarks/modern_nmf.py. ``--real``: NMI over ``--runs`` ensembles of
r = 100 k-means partitions with K_i uniform in [K, min(sqrt(n), 50)] (the usual protocol of
this literature) on the shared data sets. ``--octave DIR``: a MATLAB implementation of SEC
(a directory holding ``SEC.m`` and ``weighted_kmeans.m``, e.g. a checkout of
Li-Hongmin/Implementation_of_Spectral_Ensemble_Clustering_via_Weighted_K-Means, which is not
the authors' code) on the same label matrices, in the same run: time and NMI of both.
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np

DATA = os.environ.get("CCLUST_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
REAL = ["wine", "segment", "optdigits", "pendigits", "satimage"]


def kmeans_ensemble(X, k, r, seed):
    import cclust

    hi = int(min(max(k + 1, np.sqrt(X.shape[0])), 50))
    return cclust.generate("kmeans", X, k, n_partitions=r, k_range=(k, hi), random_state=seed)


def scale(args):
    import cclust
    from cclust.metrics import ari
    from cclust.testing import peak_memory
    from modern_nmf import synthetic

    print("| n | r | K | time (s) | peak memory (MB) | ARI vs truth | n_iter |")
    print("|---|---|---|---|---|---|---|")
    for n in (int(v) for v in args.n.split(",")):
        y, E = synthetic(n, args.r, 10, 0)
        t = time.perf_counter()
        res = cclust.consensus("sec", E, 10, random_state=0)
        dt = time.perf_counter() - t
        mem = peak_memory([(np.zeros((n, 1)), E)], [("sec", {})], n_clusters=10)[0]["sec"]
        print(f"| {n} | {args.r} | 10 | {dt:.2f} | {mem.get('bytes', float('nan')) / 2**20:.0f} | "
              f"{ari(res.labels, y):.3f} | {res.n_iter} |", flush=True)


def real(args):
    import cclust
    from cclust.metrics import nmi

    print("| data | n | K | NMI mean ± sd (sec) | NMI mean ± sd (sec, init=random) | time per run (s) |")
    print("|---|---|---|---|---|---|")
    for name in REAL:
        d = np.load(os.path.join(DATA, f"{name}.npz"))
        X, y = d["X"], d["y"]
        k = int(np.unique(y).shape[0])
        scores = {"k-means++": [], "random": []}
        t = time.perf_counter()
        for run in range(args.runs):
            E = kmeans_ensemble(X, k, 100, run)
            for init in scores:
                scores[init].append(nmi(cclust.consensus("sec", E, k, init=init, random_state=run).labels, y))
        dt = (time.perf_counter() - t) / (2 * args.runs)
        cells = [f"{np.mean(v):.3f} ± {np.std(v):.3f}" for v in scores.values()]
        print(f"| {name} | {X.shape[0]} | {k} | {cells[0]} | {cells[1]} | {dt:.3f} |", flush=True)


def octave(args):
    import cclust
    from cclust.metrics import nmi
    from modern_nmf import synthetic

    n = int(args.n.split(",")[0])
    y, E = synthetic(n, args.r, 10, 0)
    ours, theirs, t_ours, t_theirs = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        # Octave cannot broadcast a sparse-by-dense division (B ./ wb), which MATLAB can: run a
        # copy with that one row scaling written as a product with a sparse diagonal.
        code = open(os.path.join(args.octave, "SEC.m")).read()
        with open(os.path.join(tmp, "SEC.m"), "w") as f:
            f.write(code.replace("B./wb", "spdiags(1 ./ wb, 0, N, N) * B"))
        with open(os.path.join(tmp, "weighted_kmeans.m"), "w") as f:
            f.write(open(os.path.join(args.octave, "weighted_kmeans.m")).read())
        labels_file = os.path.join(tmp, "labels.txt")
        np.savetxt(labels_file, E.labels + 1, fmt="%d")
        for run in range(args.runs):
            t = time.perf_counter()
            res = cclust.consensus("sec", E, 10, init="random", n_init=1, random_state=run)
            t_ours.append(time.perf_counter() - t)
            ours.append(nmi(res.labels, y))
            out = os.path.join(tmp, f"out{run}.txt")
            script = (f"pkg load statistics; addpath('{tmp}'); rand('seed', {run}); randn('seed', {run}); "
                      f"L = load('{labels_file}'); tic; lab = SEC(L, 10); t = toc; "
                      f"dlmwrite('{out}', [t; lab(:)]);")
            subprocess.run(["octave-cli", "--no-gui", "--eval", script], check=True, capture_output=True)
            v = np.loadtxt(out)
            t_theirs.append(float(v[0]))
            theirs.append(nmi(v[1:].astype(int), y))
    print(f"n = {n}, r = {args.r}, K = 10, {args.runs} runs, one start each (init='random', n_init=1)")
    print("| implementation | NMI mean ± sd | time per run (s) |")
    print("|---|---|---|")
    print(f"| cclust sec | {np.mean(ours):.3f} ± {np.std(ours):.3f} | {np.median(t_ours):.4f} |")
    print(f"| MATLAB SEC.m under Octave | {np.mean(theirs):.3f} ± {np.std(theirs):.3f} | {np.median(t_theirs):.4f} |")
    print(f"speed ratio (median Octave / median cclust): {np.median(t_theirs) / np.median(t_ours):.0f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--octave", metavar="DIR")
    ap.add_argument("--n", default="20000,100000")
    ap.add_argument("--r", type=int, default=100)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    if args.scale:
        scale(args)
    if args.real:
        real(args)
    if args.octave:
        octave(args)


if __name__ == "__main__":
    main()
