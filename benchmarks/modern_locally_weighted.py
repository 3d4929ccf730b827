"""LWEA and LWGP (Huang, Wang & Lai 2018): reproduction of the paper's tables and a benchmark
against the authors' MATLAB code run under GNU Octave.

``--reproduce``: the protocol of Huang et al. (2018, sec. V-A): a pool of 100 k-means
clusterings per data set, each with k drawn from [2, sqrt(N)] (ours, or with
``--authors-pools`` the pools the authors publish with their code); each run draws M = 10 of them
and fuses them with theta = 0.4 at the true number of classes ("True-k" columns of Tables V
(NMI) and VII (ARI)); mean and standard deviation over the runs. Features are used as
shipped (no scaling). LWGP is run with both cuts (the paper's transfer cut and METIS).

``--bench``: the same label matrices fused by ours and by the authors' code (``computeECI``,
``computeLWCA``, ``runLWEA``, ``runLWGP`` from github.com/huangdonghere/LWEA_LWGP, checked out
into ``--octave-dir``; not part of cclust) under ``octave-cli`` with the statistics package:
wall time of each side, ratio, and the ARI between the two labellings (LWEA is deterministic)
or both sides' NMI to the classes (LWGP ends in randomised k-means).

    python benchmarks/modern_locally_weighted.py --reproduce --runs 10
    python benchmarks/modern_locally_weighted.py --reproduce --runs 10 --authors-pools /tmp/lwea_pools
    python benchmarks/modern_locally_weighted.py --reproduce --runs 10 --authors-pools /tmp/lwea_pools --nmi-average max
    python benchmarks/modern_locally_weighted.py --bench --octave-dir /tmp/lwea_octave --n 5000
    python benchmarks/modern_locally_weighted.py --scale
"""
import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import cclust
from cclust.consensus_functions.locally_weighted import lwea, lwgp

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")

#: Huang et al. (2018), Tables V (NMI) and VII (ARI), "True-k" columns: (mean, sd).
PUBLISHED = {
    # name in the shared data: (paper's name, {method: (NMI, NMI sd, ARI, ARI sd)})
    "segment": ("IS", {"lwea": (0.621, 0.026, 0.522, 0.031), "lwgp": (0.629, 0.029, 0.529, 0.039)}),
    "satimage": ("LS", {"lwea": (0.616, 0.027, 0.568, 0.054), "lwgp": (0.644, 0.019, 0.580, 0.032)}),
    "optdigits": ("ODR", {"lwea": (0.829, 0.018, 0.782, 0.032), "lwgp": (0.816, 0.015, 0.763, 0.026)}),
    "pendigits": ("PD", {"lwea": (0.769, 0.022, 0.675, 0.029), "lwgp": (0.774, 0.021, 0.675, 0.040)}),
    "semeion": ("Semeion", {"lwea": (0.655, 0.017, 0.539, 0.024), "lwgp": (0.642, 0.024, 0.520, 0.035)}),
}


def load(name, data_dir):
    with np.load(os.path.join(data_dir, f"{name}.npz"), allow_pickle=False) as f:
        return np.asarray(f["X"], dtype=np.float64), np.asarray(f["y"])


def pool(X, y, seed, size=100):
    """The paper's pool: k-means with k uniform in [2, sqrt(N)] (Huang et al. 2018, sec. V-A)."""
    n = X.shape[0]
    return cclust.generate("kmeans", X, 2, n_partitions=size, k_range=(2, int(math.sqrt(n))), random_state=seed)


def authors_pool(paper_name, pools_dir):
    """The authors' published pool of 100 base clusterings (``bc_pool_<name>.mat``) and classes."""
    import scipy.io

    mat = scipy.io.loadmat(os.path.join(pools_dir, f"bc_pool_{paper_name}.mat"))
    return cclust.Ensemble(mat["members"].astype(np.int64)), mat["gt"].reshape(-1)


def reproduce(args):
    nmi, ari = cclust.get("nmi"), cclust.get("ari")
    rows = []
    for name in args.datasets:
        t0 = time.perf_counter()
        if args.authors_pools:
            P, y = authors_pool(PUBLISHED[name][0], args.authors_pools)
        else:
            X, y = load(name, args.data_dir)
            P = pool(X, y, seed=0)
        k = int(np.unique(y).shape[0])
        scores = {"lwea": [], "lwgp": [], "lwgp (metis)": []}
        rng = np.random.default_rng(1)
        for run in range(args.runs):
            E = P.take(partitions=rng.choice(P.n_partitions, size=10, replace=False))
            for method, fn, kw in (("lwea", lwea, {}), ("lwgp", lwgp, {}), ("lwgp (metis)", lwgp, {"cut": "metis"})):
                labels = fn(E, k, random_state=run, max_bytes=2**33, **kw).labels if method == "lwea" else \
                    fn(E, k, random_state=run, **kw).labels
                scores[method].append((nmi(labels, y, average=args.nmi_average), ari(labels, y)))
        paper_name, published = PUBLISHED[name]
        for method, values in scores.items():
            v = np.array(values)
            pub = published.get(method)
            pub_text = (f"{pub[0]:.3f} ± {pub[1]:.3f} | {pub[2]:.3f} ± {pub[3]:.3f}" if pub else "— | —")
            rows.append(f"| {name} ({paper_name}) | {method} | {v[:, 0].mean():.3f} ± {v[:, 0].std(ddof=1):.3f} | "
                        f"{v[:, 1].mean():.3f} ± {v[:, 1].std(ddof=1):.3f} | {pub_text} |")
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    head = ("| data (paper) | method | NMI ours | ARI ours | NMI / ARI published (True-k) |\n"
            "|---|---|---|---|---|")
    print(head + "\n" + "\n".join(rows))


_OCTAVE = r"""
pkg load statistics
addpath('{code}');
data = load('{labels}'); baseCls = data + 1; K = {k};
M = size(baseCls, 2);
% timer ids: runLWEA and runLWGP call tic themselves, which restarts a bare tic's timer
t0 = tic; [bcs, baseClsSegs] = getAllSegs(baseCls); ECI = computeECI(bcs, baseClsSegs, 0.4); t_eci = toc(t0);
t0 = tic; LWCA = computeLWCA(baseClsSegs, ECI, M); lwea = runLWEA(LWCA, K); t_lwea = toc(t0) + t_eci; clear LWCA;
t0 = tic; lwgp = runLWGP(bcs, baseClsSegs, ECI, K); t_lwgp = toc(t0) + t_eci;
dlmwrite('{out}', [lwea(:), lwgp(:)]);
printf('TIMES %f %f\n', t_lwea, t_lwgp);
"""


def bench(args):
    ari, nmi = cclust.get("ari"), cclust.get("nmi")
    X, y = load(args.bench_data, args.data_dir)
    rng = np.random.default_rng(0)
    if X.shape[0] > args.n:
        keep = np.sort(rng.choice(X.shape[0], size=args.n, replace=False))
        X, y = X[keep], y[keep]
    k = int(np.unique(y).shape[0])
    P = pool(X, y, seed=0)
    lwea(P.take(partitions=range(10)), k, max_bytes=2**33)         # warm-up: imports, LAPACK threads
    lwgp(P.take(partitions=range(10)), k, random_state=0)
    print(f"| data | n | run | method | ours (s) | Octave (s) | ratio | ARI ours vs theirs | NMI ours | NMI theirs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in range(args.bench_runs):
        E = P.take(partitions=rng.choice(P.n_partitions, size=10, replace=False))
        with tempfile.TemporaryDirectory() as tmp:
            labels_path, out = os.path.join(tmp, "labels.txt"), os.path.join(tmp, "out.txt")
            np.savetxt(labels_path, E.labels, fmt="%d")
            script = _OCTAVE.format(code=args.octave_dir, labels=labels_path, k=k, out=out)
            proc = subprocess.run(["octave-cli", "--no-gui", "--eval", script], capture_output=True, text=True,
                                  timeout=args.timeout)
            times = [line for line in proc.stdout.splitlines() if line.startswith("TIMES")]
            if not times:
                print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
                raise SystemExit("the Octave run failed")
            t_lwea_oct, t_lwgp_oct = map(float, times[0].split()[1:])
            theirs = np.loadtxt(out, delimiter=",").astype(int)
        t0 = time.perf_counter()
        ours_lwea = lwea(E, k, max_bytes=2**33).labels
        t_lwea = time.perf_counter() - t0
        t0 = time.perf_counter()
        ours_lwgp = lwgp(E, k, random_state=run).labels
        t_lwgp = time.perf_counter() - t0
        for method, t_ours, t_oct, ours, their in (("lwea", t_lwea, t_lwea_oct, ours_lwea, theirs[:, 0]),
                                                   ("lwgp", t_lwgp, t_lwgp_oct, ours_lwgp, theirs[:, 1])):
            print(f"| {args.bench_data} | {X.shape[0]} | {run} | {method} | {t_ours:.3f} | {t_oct:.2f} | "
                  f"{t_oct / t_ours:.0f}x | {ari(ours, their):.4f} | {nmi(ours, y):.3f} | {nmi(their, y):.3f} |")
            sys.stdout.flush()


def scale(args):
    """Time and peak memory of each route on five blobs (k-means ensembles, K_i up to sqrt(n))."""
    print("| method | n | r | params | time (s) | peak RSS (MiB) | distinct rows | ARI |")
    print("|---|---|---|---|---|---|---|---|")
    for n, r, method, params in ((20000, 10, "lwea", {}), (20000, 100, "lwea", {"n_groups": 2000}),
                                 (20000, 100, "lwgp", {}), (100000, 100, "lwea", {"n_groups": 2000}),
                                 (100000, 100, "lwgp", {})):
        code = (f"import time, resource, numpy as np, cclust\n"
                f"rng = np.random.default_rng(0); c = rng.normal(0, 6, size=(5, 3)); y = rng.integers(0, 5, {n})\n"
                f"X = c[y] + rng.normal(size=({n}, 3))\n"
                f"E = cclust.generate('kmeans', X, 5, n_partitions={r}, random_state=0)\n"
                f"t = time.perf_counter(); res = cclust.consensus('{method}', E, 5, random_state=0, **{params!r})\n"
                f"dt = time.perf_counter() - t\n"
                f"print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "
                f"res.extras['n_microclusters'], cclust.get('ari')(res.labels, y))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        print(f"| {method} | {n:,} | {r} | {params} | {float(out[0]):.2f} | {float(out[1]):.0f} | {out[2]} | "
              f"{float(out[3]):.3f} |")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reproduce", action="store_true")
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--data-dir", default=DATA)
    parser.add_argument("--datasets", nargs="+", default=list(PUBLISHED))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--nmi-average", choices=("sqrt", "max"), default="sqrt",
                        help="NMI normalisation; 'max' is the authors' computeNMI, behind Tables V and VII")
    parser.add_argument("--authors-pools", default=None,
                        help="folder of the authors' bc_pool_<name>.mat files: fuse their pools instead of ours")
    parser.add_argument("--octave-dir", default="/tmp/lwea_octave")
    parser.add_argument("--bench-data", default="pendigits")
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--bench-runs", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=3600)
    args = parser.parse_args()
    if args.reproduce:
        reproduce(args)
    if args.bench:
        bench(args)
    if args.scale:
        scale(args)


if __name__ == "__main__":
    main()
