"""WEAC and GP-MGLA (Huang, Lai & Wang 2015): reproduction on the shared data sets, a benchmark
against the authors' MATLAB code run under GNU Octave, and time and memory at scale.

Modes::

    # pools of 100 k-means clusterings, k uniform in [2, sqrt(N)]; each run draws M = 10 and
    # fuses them at the true number of classes; NMI (sqrt) and ARI, mean and sd over the runs
    python benchmarks/modern_weac.py --reproduce --runs 10

    # the same draws from the authors' own pools (bc_pool_<IS|LS|MNIST|ODR|PD|Semeion>.mat of
    # their LWEA_LWGP code, the inputs of Huang, Wang & Lai 2018's Tables V and VII), next to
    # the WEAC and GP-MGLA rows of those tables (true-k); NMI also max-normalised, as theirs
    python benchmarks/modern_weac.py --reproduce --runs 10 --authors-pools DIR

    # ours vs the authors' getNCAI / getWeightedMatrix / linkage / gpmgla on the same label
    # matrices (pendigits subsample, n = 5,000, M = 10)
    python benchmarks/modern_weac.py --bench --octave-dir /tmp/weac_octave --runs 3

    # the authors' demo: their three shipped ensembles (baseCls_and_gt_<i>.mat) at K = 2, 3, 4,
    # 5, 9, 20, fused by both sides; ARI between the two labellings, NMI (max) to the classes
    python benchmarks/modern_weac.py --authors-demo 1 2 --octave-dir /tmp/weac_octave

    # the same at n = 5,000 for GP-MGLA alone (Octave's linkage did not finish at n = 5,000)
    python benchmarks/modern_weac.py --bench --gp-mgla-only --runs 3

    # time and peak memory at n = 20,000, r = 100
    python benchmarks/modern_weac.py --scale

Protocol: the paper's ensembles are k-means clusterings with randomly chosen k (Huang, Lai & Wang
2015, sec. 5); the pool-and-draw protocol here is the one the same authors use in their later
papers (Huang, Wang & Lai 2018, sec. V-A). Parameters are the authors' demo's: beta = 2,
alpha = 0.5, average linkage for WEAC. Features as shipped.

The authors' code (``git clone https://github.com/huangdonghere/WEAC_GPMGLA``, or
``git archive`` of a mirror, into ``--octave-dir``) is run unchanged except for ``stod``
(square matrix to distance vector), whose growing concatenation is cubic in n: this script
extracts the same vector with one indexing expression instead (``S(tril(true(n), -1))`` is the
row-wise upper triangle of the symmetric S), which only speeds their side up. Their WEAC
function computes three linkages at once; the benchmark times the average-linkage one alone
(``getNCAI``, ``getWeightedMatrix``, the vector, ``linkage(d, 'average')``, ``cluster``).
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import cclust
from cclust.consensus_functions.crowd_agreement import gp_mgla, weac
from cclust.metrics import ari, nmi

DATA = os.environ.get("CCLUST_SHARED_DATA", "/work/shared/data")

#: Data sets of the paper available in the shared data: our name -> the paper's.
DATASETS = {"segment": "IS", "satimage": "LS", "optdigits": "ODR", "pendigits": "PD", "mnist_test": "MNIST",
            "semeion": "Semeion"}
#: Huang, Wang & Lai (2018), Table V (NMI, max-normalised) and Table VII (ARI), "True-k" columns, mean and
#: sd over 100 runs of 10 members drawn from their pools: the WEAC and GP-MGLA rows (baselines there).
PUBLISHED = {
    "IS": {"weac": (0.600, 0.021, 0.497, 0.031), "gp-mgla": (0.619, 0.019, 0.521, 0.029)},
    "LS": {"weac": (0.601, 0.048, 0.538, 0.084), "gp-mgla": (0.619, 0.020, 0.538, 0.038)},
    "MNIST": {"weac": (0.615, 0.027, 0.467, 0.037), "gp-mgla": (0.616, 0.026, 0.511, 0.032)},
    "ODR": {"weac": (0.801, 0.019, 0.731, 0.031), "gp-mgla": (0.813, 0.020, 0.760, 0.033)},
    "PD": {"weac": (0.716, 0.030, 0.593, 0.045), "gp-mgla": (0.735, 0.031, 0.628, 0.049)},
    "Semeion": {"weac": (0.628, 0.026, 0.495, 0.036), "gp-mgla": (0.623, 0.026, 0.488, 0.038)},
}


def load(name, n=None, seed=0):
    with np.load(os.path.join(DATA, f"{name}.npz"), allow_pickle=False) as f:
        X, y = np.asarray(f["X"], dtype=np.float64), np.asarray(f["y"])
    if n is not None and X.shape[0] > n:
        keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=n, replace=False))
        X, y = X[keep], y[keep]
    return X, y


def pool(X, seed, size=100):
    return cclust.generate("kmeans", X, 2, n_partitions=size, k_range=(2, int(math.sqrt(X.shape[0]))),
                           random_state=seed)


def reproduce(args):
    rows = []
    for name in args.datasets:
        t0 = time.perf_counter()
        if args.authors_pools:
            from modern_locally_weighted import authors_pool

            P, y = authors_pool(DATASETS[name], args.authors_pools)
        else:
            X, y = load(name, 5000 if name == "mnist_test" else None)
            P = pool(X, seed=0)
        k = int(np.unique(y).shape[0])
        scores = {"weac": [], "gp-mgla": []}
        rng = np.random.default_rng(1)
        for run in range(args.runs):
            E = P.take(partitions=rng.choice(P.n_partitions, size=10, replace=False))
            scores["weac"].append(weac(E, k, max_bytes=2**33).labels)
            scores["gp-mgla"].append(gp_mgla(E, k, random_state=run).labels)
        for method, runs in scores.items():
            v = np.array([(nmi(labels, y), ari(labels, y), nmi(labels, y, average="max")) for labels in runs])
            cells = [f"{v[:, i].mean():.3f} ± {v[:, i].std(ddof=1):.3f}" for i in (0, 1, 2)]
            row = f"| {name} ({DATASETS[name]}) | {y.shape[0]} | {method} | {cells[0]} | {cells[1]} |"
            if args.authors_pools:
                pub = PUBLISHED[DATASETS[name]][method]
                row += f" {cells[2]} | {pub[0]:.3f} ± {pub[1]:.3f} | {pub[2]:.3f} ± {pub[3]:.3f} |"
            rows.append(row)
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if args.authors_pools:
        print("| data (paper) | n | method | NMI (sqrt) ours | ARI ours | NMI (max) ours | NMI (max) published "
              "| ARI published |\n|---|---|---|---|---|---|---|---|")
    else:
        print("| data (paper) | n | method | NMI ours | ARI ours |\n|---|---|---|---|---|")
    print("\n".join(rows))


_OCTAVE = r"""
pkg load statistics
addpath('{code}');
baseCls = load('{labels}') + 1; K = {k};
tic; ncai = getNCAI(baseCls); I = ncai .^ 2; t_ncai = toc;
if {with_weac}
tic; S = getWeightedMatrix(baseCls, I); n = size(S, 1); d = 1 - S(tril(true(n), -1))'; clear S;
Z = linkage(d, 'average'); weac_al = cluster(Z, 'maxclust', K); t_weac = toc + t_ncai;
else
weac_al = ones(size(baseCls, 1), 1); t_weac = NaN;
end
tic; gp = gpmgla(baseCls, I, K, 0.5); t_gp = toc + t_ncai;
dlmwrite('{out}', [weac_al(:), gp(:)]);
dlmwrite('{ncai_out}', ncai(:)', 'precision', 17);
printf('TIMES %f %f\n', t_weac, t_gp);
"""


def bench(args):
    from cclust.consensus_functions.crowd_agreement import ncai

    X, y = load(args.bench_data, args.n)
    k = int(np.unique(y).shape[0])
    P = pool(X, seed=0)
    weac(P.take(partitions=range(10)), k, max_bytes=2**33)          # warm-up: imports, BLAS threads
    gp_mgla(P.take(partitions=range(10)), k, random_state=0)
    rng = np.random.default_rng(0)
    print("| data | n | run | method | ours (s) | Octave (s) | ratio | ARI ours vs theirs | NMI ours | NMI theirs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in range(args.runs):
        E = P.take(partitions=rng.choice(P.n_partitions, size=10, replace=False))
        with tempfile.TemporaryDirectory() as tmp:
            paths = {key: os.path.join(tmp, f"{key}.txt") for key in ("labels", "out", "ncai_out")}
            np.savetxt(paths["labels"], E.labels, fmt="%d")
            script = _OCTAVE.format(code=args.octave_dir, k=k, with_weac=int(not args.gp_mgla_only), **paths)
            proc = subprocess.run(["octave-cli", "--no-gui", "--eval", script], capture_output=True, text=True,
                                  timeout=args.timeout)
            times = [line for line in proc.stdout.splitlines() if line.startswith("TIMES")]
            if not times:
                print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
                raise SystemExit("the Octave run failed")
            t_weac_oct, t_gp_oct = map(float, times[0].split()[1:])
            theirs = np.loadtxt(paths["out"], delimiter=",").astype(int)
            their_ncai = np.loadtxt(paths["ncai_out"], delimiter=",")
        gap = float(np.abs(ncai(E) - their_ncai).max())
        t0 = time.perf_counter()
        ours_weac = weac(E, k, max_bytes=2**33).labels
        t_weac = time.perf_counter() - t0
        t0 = time.perf_counter()
        ours_gp = gp_mgla(E, k, random_state=run).labels
        t_gp = time.perf_counter() - t0
        for method, t_ours, t_oct, ours, their in (("weac", t_weac, t_weac_oct, ours_weac, theirs[:, 0]),
                                                   ("gp-mgla", t_gp, t_gp_oct, ours_gp, theirs[:, 1]))[
                                                       int(args.gp_mgla_only):]:
            print(f"| {args.bench_data} | {X.shape[0]} | {run} | {method} | {t_ours:.3f} | {t_oct:.2f} | "
                  f"{t_oct / t_ours:.0f}x | {ari(ours, their):.4f} | {nmi(ours, y):.3f} | {nmi(their, y):.3f} |")
        print(f"run {run}: largest |NCAI ours - theirs| = {gap:.2e}", file=sys.stderr)
        sys.stdout.flush()


_DEMO_OCTAVE = r"""
pkg load statistics
addpath('{code}');
load('{mat}', 'baseCls', 'gt'); Ks = [2, 3, 4, 5, 9, 20];
I = getNCAI(baseCls) .^ 2;
S = getWeightedMatrix(baseCls, I); n = size(S, 1); d = 1 - S(tril(true(n), -1))'; clear S;
Z = linkage(d, 'average'); al = zeros(n, numel(Ks));
for i = 1:numel(Ks); al(:, i) = cluster(Z, 'maxclust', Ks(i)); end
gp = gpmgla(baseCls, I, Ks, 0.5);
dlmwrite('{out}', [al, gp]);
"""
_DEMO_KS = (2, 3, 4, 5, 9, 20)


def authors_demo(args):
    """Both sides on the ensembles the authors ship with their demo."""
    import scipy.io

    print("| demo set | n | M | K | method | ARI ours vs theirs | NMI ours | NMI theirs |")
    print("|---|---|---|---|---|---|---|---|")
    for index in args.authors_demo:
        mat = os.path.join(args.octave_dir, f"baseCls_and_gt_{index}.mat")
        data = scipy.io.loadmat(mat)
        L, gt = data["baseCls"].astype(np.int64) - 1, data["gt"].reshape(-1)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.txt")
            script = _DEMO_OCTAVE.format(code=args.octave_dir, mat=mat, out=out)
            proc = subprocess.run(["octave-cli", "--no-gui", "--eval", script], capture_output=True, text=True,
                                  timeout=args.timeout)
            if proc.returncode:
                print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
                raise SystemExit("the Octave run failed")
            theirs = np.loadtxt(out, delimiter=",").astype(int)
        for i, k in enumerate(_DEMO_KS):
            ours = {"weac": weac(L, k, max_bytes=2**33).labels, "gp-mgla": gp_mgla(L, k, random_state=0).labels}
            for j, method in enumerate(ours):
                their = theirs[:, i + j * len(_DEMO_KS)]
                print(f"| {index} | {L.shape[0]} | {L.shape[1]} | {k} | {method} | {ari(ours[method], their):.4f} | "
                      f"{nmi(ours[method], gt, average='max'):.3f} | {nmi(their, gt, average='max'):.3f} |")
        sys.stdout.flush()


_SCALE_CHILD = """
import time, resource, numpy as np, cclust
rng = np.random.default_rng(0); c = rng.normal(0, 6, size=(5, 3)); y = rng.integers(0, 5, {n})
X = c[y] + rng.normal(size=({n}, 3))
E = cclust.generate('kmeans', X, 5, n_partitions={r}, random_state=0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t, c = time.perf_counter(), time.process_time()
res = cclust.consensus('{method}', E, 5, random_state=0, **{params!r})
dt, dc = time.perf_counter() - t, time.process_time() - c
print(dt, dc, before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, res.extras['n_microclusters'],
      int(E.offsets[-1]), cclust.get('ari')(res.labels, y))
"""


def scale(args, cases=None):
    """Time and peak RSS (before the call, and overall) on five blobs, k-means ensembles."""
    cases = cases or [case for n in args.scale_sizes
                      for case in ((n, 100, "gp-mgla", {}), (n, 100, "weac", {"max_bytes": 2**33}))]
    print("| method | n | r | params | time (s) | CPU time, all threads (s) | load average at start | "
          "peak RSS before / after the call (MiB) | distinct rows | sum K_i | ARI |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, r, method, params in cases:
        code = _SCALE_CHILD.format(n=n, r=r, method=method, params=params)
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if out.returncode:
            print(f"| {method} | {n:,} | {r} | {params} | failed: {out.stderr.strip().splitlines()[-1]} |")
            continue
        t, cpu, before, after, m, sum_k, score = out.stdout.split()
        print(f"| {method} | {n:,} | {r} | {params} | {float(t):.2f} | {float(cpu):.2f} | {load:.1f} | "
              f"{float(before):.0f} / {float(after):.0f} | {m} | {sum_k} | {float(score):.3f} |")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reproduce", action="store_true")
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--authors-demo", nargs="*", type=int, default=[])
    parser.add_argument("--gp-mgla-only", action="store_true",
                        help="--bench without WEAC (Octave's average linkage is an m-file, cubic in n)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--authors-pools", default=None,
                        help="folder with the authors' bc_pool_<paper name>.mat (--reproduce on their inputs)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--octave-dir", default="/tmp/weac_octave")
    parser.add_argument("--bench-data", default="pendigits")
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--timeout", type=int, default=3600)
    parser.add_argument("--scale-sizes", type=int, nargs="+", default=[20000],
                        help="n of the --scale runs (each runs gp-mgla and weac at r = 100)")
    args = parser.parse_args()
    if args.reproduce:
        reproduce(args)
    if args.bench:
        bench(args)
    if args.authors_demo:
        authors_demo(args)
    if args.scale:
        scale(args)


if __name__ == "__main__":
    main()
