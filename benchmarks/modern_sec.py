"""SEC (Liu, Wu, Liu, Tao & Fu 2017): scale, real data, and a MATLAB implementation under Octave.

    PYTHONPATH=. python benchmarks/modern_sec.py --scale --n 20000,100000 --r 100
    PYTHONPATH=. python benchmarks/modern_sec.py --real --runs 10
    PYTHONPATH=. python benchmarks/modern_sec.py --octave DIR --n 5000 --runs 5
    PYTHONPATH=. python benchmarks/modern_sec.py --reproduce --runs 10 --repeats 50
    PYTHONPATH=. python benchmarks/modern_sec.py --huang2018 DIR --runs 10

``--scale``: time and peak memory (RSS of a child process, cclust.testing.peak_memory) on the
synthetic ensembles of benchmarks/modern_nmf.py. ``--real``: NMI over ``--runs`` ensembles of
r = 100 k-means partitions with K_i uniform in [K, min(sqrt(n), 50)] (the usual protocol of
this literature) on the shared data sets. ``--octave DIR``: a MATLAB implementation of SEC
(a directory holding ``SEC.m`` and ``weighted_kmeans.m``, e.g. a checkout of
Li-Hongmin/Implementation_of_Spectral_Ensemble_Clustering_via_Weighted_K-Means, which is not
the authors' code) on the same label matrices, in the same run: time and NMI of both.
``--reproduce``: the protocol of Liu et al. (2017, sec. 7.1.1) on the UCI sets of their Table 3
that we share (breast_w, iris, wine): r = 100 k-means partitions with K_i uniform in
[K, sqrt(n)], true K, Rn (= ARI); ``--runs`` ensembles (seeds), each fused ``--repeats`` times
(Liu et al. run each algorithm 50 times); data prepared as benchmarks/reproduce_kcc.py prepares
Wu et al.'s (wine's proline / 100, breast's missing cells mean-imputed), plus wine as shipped
(``wine-raw``); a ``-l2`` suffix (``iris-l2``) scales every row to unit length first.
``--huang2018 DIR``: SEC as a baseline of Huang, Wang & Lai (2018): each run draws 10 members from
the authors' pool of 100 (``DIR/bc_pool_<name>.mat``, as benchmarks/modern_locally_weighted.py
reads them) and fuses them at the true K; NMI (max-normalised, theirs) and ARI next to the SEC rows
of their Tables V and VII (true-k).
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


#: Rn of SEC published by Liu et al.: TKDE 2017, Table 3 (mean, sd over 50 runs), and the KDD 2015
#: version, Table 3 (mean of 10 runs).
PUBLISHED = {"breast": ((0.82, 0.00), 0.8230), "iris": ((0.92, 0.02), 0.9222), "wine": ((0.33, 0.00), 0.3272)}


#: Huang, Wang & Lai (2018), Tables V (NMI, max-normalised) and VII (ARI), true-k, SEC row: mean, sd
#: over 100 runs. Their LS and MF NMI cells of SEC (and of KCC) are identical, 0.380 ± 0.074, while
#: the ARI cells differ: one of the two NMI cells is likely a copy of the other.
HUANG2018 = {"IS": (0.437, 0.092, 0.300, 0.109), "LS": (0.380, 0.074, 0.235, 0.093),
             "MNIST": (0.423, 0.049, 0.263, 0.070), "ODR": (0.604, 0.065, 0.427, 0.100),
             "PD": (0.552, 0.065, 0.373, 0.093), "Semeion": (0.466, 0.046, 0.297, 0.063)}


def huang2018(args):
    import cclust
    from cclust.metrics import ari, nmi
    from modern_locally_weighted import authors_pool

    variants = (("defaults", {}), ("one random start", {"init": "random", "n_init": 1}))
    print(f"Authors' pools, 10 members drawn per run, true K, {args.runs} runs; mean ± sd (ddof 1).\n")
    print("| data | n | sec | NMI (max) ours | ARI ours | NMI (max) published | ARI published |")
    print("|---|---|---|---|---|---|---|")
    for name, (pn, pn_sd, pa, pa_sd) in HUANG2018.items():
        P, y = authors_pool(name, args.huang2018)
        k = int(np.unique(y).shape[0])
        rng = np.random.default_rng(1)
        draws = [P.take(partitions=rng.choice(P.n_partitions, size=10, replace=False)) for _ in range(args.runs)]
        for v, params in variants:
            labels = [cclust.consensus("sec", E, k, random_state=run, **params).labels for run, E in enumerate(draws)]
            a = np.array([ari(y, lab) for lab in labels])
            m = np.array([nmi(y, lab, average="max") for lab in labels])
            print(f"| {name} | {y.shape[0]} | {v} | {m.mean():.3f} ± {m.std(ddof=1):.3f} | {a.mean():.3f} ± "
                  f"{a.std(ddof=1):.3f} | {pn:.3f} ± {pn_sd:.3f} | {pa:.3f} ± {pa_sd:.3f} |", flush=True)


def spectral_labels(E, k, seed):
    """Spectral clustering of the co-association S = B B^T written out (n x n, small n only):
    k-means (10 starts) on the row-normalised top-k eigenvectors of D^-1/2 S D^-1/2 (Ng, Jordan &
    Weiss 2002), the relaxation SEC's weighted K-means stands for."""
    from sklearn.cluster import KMeans

    B = E.one_hot()
    B = B.toarray() if hasattr(B, "toarray") else np.asarray(B, dtype=float)
    S = B @ B.T
    d = S.sum(axis=1)
    V = np.linalg.eigh(S / np.sqrt(np.outer(d, d)))[1][:, -k:]
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    return KMeans(k, n_init=10, random_state=seed).fit_predict(V)


def reproduce(args):
    import cclust
    from cclust.metrics import ari
    from reproduce_kcc import load_dataset

    variants = (("defaults", {}), ("one random start", {"init": "random", "n_init": 1}))
    print(f"r = {args.r} k-means partitions, K_i uniform in [K, sqrt(n)], true K; {args.runs} ensembles (seeds "
          f"0-{args.runs - 1}) x {args.repeats} runs of sec each; Rn = ARI. 'lowest objective': Rn of the run "
          "with the lowest SEC objective among all runs on an ensemble; 'spectral': Rn of spectral clustering "
          "of S written out; both averaged over the ensembles.\n")
    print("| data (n, K) | sec | Rn, all runs: mean ± sd | per-ensemble mean: min-max | sd within an ensemble "
          "(mean) | Rn at the lowest objective | Rn of spectral clustering of S | published, Liu et al. (2017) "
          "Table 3 | published, KDD 2015 Table 3 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        base = name.replace("-raw", "").replace("-l2", "")
        if name.endswith("-raw"):
            with np.load(os.path.join(DATA, f"{base}.npz")) as d:
                X, y = np.asarray(d["X"], dtype=np.float64), np.asarray(d["y"])
        else:
            X, y = load_dataset(base, DATA)[:2]
        if name.endswith("-l2"):   # every row scaled to unit Euclidean length (k-means then splits by angle)
            X = X / np.linalg.norm(X, axis=1, keepdims=True)
        k = int(np.unique(y).shape[0])
        (tkde, tkde_sd), kdd = PUBLISHED[base]
        scores = {v: [] for v, _ in variants}
        best, spectral = [], []
        for seed in range(args.runs):
            E = kmeans_ensemble(X, k, args.r, seed)
            runs = []
            for v, params in variants:
                results = [cclust.consensus("sec", E, k, random_state=1000 * seed + j, **params)
                           for j in range(args.repeats)]
                scores[v].append([ari(y, res.labels) for res in results])
                runs += results
            best.append(ari(y, min(runs, key=lambda res: res.objective).labels))
            spectral.append(ari(y, spectral_labels(E, k, seed)))
        for v, rows in scores.items():
            rows = np.asarray(rows)
            means = rows.mean(axis=1)
            print(f"| {name} ({X.shape[0]}, {k}) | {v} | {rows.mean():.4f} ± {rows.std():.4f} | {means.min():.4f}-"
                  f"{means.max():.4f} | {rows.std(axis=1).mean():.4f} | {np.mean(best):.4f} | {np.mean(spectral):.4f} "
                  f"| {tkde:.2f} ± {tkde_sd:.2f} | {kdd:.4f} |", flush=True)


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
    ap.add_argument("--reproduce", action="store_true")
    ap.add_argument("--huang2018", metavar="DIR")
    ap.add_argument("--datasets", nargs="+", default=["breast", "iris", "wine", "wine-raw"])
    ap.add_argument("--repeats", type=int, default=50)
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
    if args.reproduce:
        reproduce(args)
    if args.huang2018:
        huang2018(args)


if __name__ == "__main__":
    main()
