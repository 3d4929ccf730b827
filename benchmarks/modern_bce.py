"""Bayesian cluster ensembles (Wang, Shan & Banerjee 2009, 2011): reproduction runs, speed
against the authors' MATLAB code under GNU Octave, and a scale run.

Three modes:

``--reproduce``
    Small UCI sets of the shared data (iris, wine, glass, ecoli, breast, dermatology by
    default), each run s = 0..runs-1 an ensemble of ``--r`` k-means partitions with K_i = K (the
    true number of classes; ``cclust.generate("kmeans", X, K, k_range=(K, K),
    random_state=s)``), fused with K. Prints mean +- sd of micro-precision (the accuracy of
    the best one-to-one matching, the authors' ``calculateAccuracy``) and NMI for cclust's
    ``bce`` with its defaults, ``bce`` with the authors' start (``init="random", n_init=1``),
    and, with ``--authors DIR``, the authors' code on the same ensembles, next to
    ``em-mixture`` (Topchy et al. 2004), the model BCE generalises.

``--bench``
    The same kind of ensembles on synthetic blobs of ``--sizes`` objects (``--bench-runs``
    seeds): wall time of cclust's ``bce`` (authors' start, one run, and the defaults) and of the
    authors' code under ``octave-cli`` in the same run, and the ARI of each against the blobs
    (both are randomised, so distributions are compared, not labels).

``--ren2017``
    The protocol of Ren et al. (2017, sec. 4-5), the one later paper found here that reports BCE
    on data sets we share: R = ``--R`` (40) base clusterings, half k-means on 70% of the objects,
    half on 70% of the features, K_i = K, features standardised, fused with K; the ensembles of
    ``benchmarks/reproduce_woec.py`` (same helpers, same seeds), Toy1-3 and the real sets of its
    Table 4. Prints ARI (and NMI on the toys) mean +- sd and min-max over ``--runs`` runs for
    ``bce`` with its defaults and with the authors' start, next to Ren et al.'s BCE column
    (Table 2 and Table 4, R = 40; means of 100 runs, no spread published).

``--scale``
    Time and peak memory (RSS of a child, :func:`cclust.testing.peak_memory`) of ``bce`` at
    ``--n`` objects and ``--r`` partitions on the synthetic ensemble of ``modern_nmf.py``.

Usage::

    PYTHONPATH=. python benchmarks/modern_bce.py --reproduce --authors /tmp/bce_authors --runs 10
    PYTHONPATH=. python benchmarks/modern_bce.py --bench --authors /tmp/bce_authors --sizes 500 2000 --bench-runs 3
    PYTHONPATH=. python benchmarks/modern_bce.py --scale --n 100000 --r 100 --n-init 1
    PYTHONPATH=. python benchmarks/modern_bce.py --ren2017 --runs 10

``--authors`` is a folder holding the authors' ``learnBCE.m``, ``bceEstep.m`` and
``bceMstep.m``; ``octave_bce.m`` (this folder) starts them as their ``runBCE.m`` does.
"""
import argparse
import os
import subprocess
import tempfile
import time
import warnings

import numpy as np

import cclust
from cclust.metrics import accuracy, ari, nmi
from _common import best_of

DATA = "/work/shared/data"
DATASETS = ("iris", "wine", "glass", "ecoli", "breast", "dermatology")


def load(name):
    with np.load(os.path.join(DATA, f"{name}.npz"), allow_pickle=False) as f:
        return np.asarray(f["X"], dtype=np.float64), np.asarray(f["y"]).astype(np.int64)


def ensemble(X, k, r, seed):
    return cclust.generate("kmeans", X, k, n_partitions=r, k_range=(k, k), random_state=seed)


def authors(folder, E, k, seed):
    """The authors' BCE under Octave on E: (labels, seconds inside Octave, wall seconds)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        infile, outfile = os.path.join(tmp, "labels.csv"), os.path.join(tmp, "out.csv")
        np.savetxt(infile, E.labels + 1, fmt="%d", delimiter=",")
        script = (f"addpath('{folder}'); addpath('{here}'); "
                  f"octave_bce('{infile}', '{outfile}', {k}, {seed});")
        start = time.perf_counter()
        subprocess.run(["octave-cli", "--no-gui", "-q", "--eval", script], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
        wall = time.perf_counter() - start
        if not os.path.exists(outfile):
            return None, float("nan"), wall
        labels = np.loadtxt(outfile, delimiter=",", dtype=np.int64).reshape(-1) - 1
        with open(outfile + ".time") as handle:
            inner = float(handle.read().split()[0])
    return labels, inner, wall


def _fmt(values):
    values = np.asarray(values, dtype=float)
    if values.size == 0 or np.isnan(values).all():
        return "--"
    return f"{np.nanmean(values):.3f} ± {np.nanstd(values):.3f}"


def reproduce(args):
    methods = [("bce (defaults)", "bce", {}), ("bce (authors' start)", "bce", {"init": "random", "n_init": 1}),
               ("em-mixture", "em-mixture", {})]
    print(f"{args.r} k-means partitions with K_i = K per run, {args.runs} runs (seeds 0-{args.runs - 1}); "
          "mean ± sd over runs.\n")
    print("| data set | n | K | method | micro-precision | NMI | time (s) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.datasets:
        X, y = load(name)
        k = int(np.unique(y).shape[0])
        rows = {label: ([], [], []) for label, _, _ in methods}
        if args.authors:
            rows["authors' code (Octave)"] = ([], [], [])
        for seed in range(args.runs):
            E = ensemble(X, k, args.r, seed)
            for label, method, params in methods:
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = cclust.consensus(method, E, k, random_state=seed, **params)
                rows[label][2].append(time.perf_counter() - start)
                rows[label][0].append(accuracy(y, res.labels))
                rows[label][1].append(nmi(y, res.labels))
            if args.authors:
                labels, inner, _ = authors(args.authors, E, k, seed)
                acc = np.nan if labels is None else accuracy(y, labels)
                rows["authors' code (Octave)"][0].append(acc)
                rows["authors' code (Octave)"][1].append(np.nan if labels is None else nmi(y, labels))
                rows["authors' code (Octave)"][2].append(inner)
        for label, (acc, nm, secs) in rows.items():
            print(f"| {name} | {X.shape[0]} | {k} | {label} | {_fmt(acc)} | {_fmt(nm)} | {np.mean(secs):.2f} |",
                  flush=True)


#: Ren et al. (2017), BCE column of Table 2 (toys: ARI, NMI) and of Table 4 (ARI, R = 40 rows): the 7th
#: of the 12 value columns (min, max, mean, CSPA, MCLA, HBGF, BCE, WCC, ECMC, WOMC, WOSP, WOHB), in the
#: rows that reproduce_woec.py's TABLE2/TABLE4 identify by their base-clustering columns.
REN2017_TOYS = {1: (0.9111, 0.8720), 2: (0.9367, 0.9177), 3: (0.9474, 0.9294)}
REN2017_REAL = {"australian": 0.4485, "balance_scale": 0.1241, "breast_tissue": 0.2938, "glass": 0.1727,
                "hayes_roth": 0.0492, "iris": 0.6074, "semeion": 0.4041, "spambase": 0.3842,
                "vowel": 0.1711, "wall_robot": 0.0538, "yeast": 0.0703}


def ren2017(args):
    from cclust.datasets import make_woec_toy
    from reproduce_woec import DEFAULT_DATA, ensemble_for, load_real, standardise

    variants = (("defaults", {}), ("authors' start", {"init": "random", "n_init": 1}))
    print(f"Ren et al. (2017) protocol: R = {args.R}, half subsample / half subspace (70%), K_i = K, "
          f"{args.runs} runs (ensemble seed = run; toy seed 1000 + run); mean ± sd [min-max] over runs; "
          "Ren et al.'s BCE value (mean of 100 runs) last.\n")
    print("| data (n, K) | bce | ARI | NMI | ARI published (Ren et al. 2017) | NMI published |")
    print("|---|---|---|---|---|---|")
    cases = [(f"Toy{i}", lambda i=i, run=0: make_woec_toy(i, random_state=1000 + run), REN2017_TOYS[i])
             for i in args.toys] + [(name, name, (REN2017_REAL[name], None)) for name in args.real]
    for label, source, (pub_ari, pub_nmi) in cases:
        scores = {v: ([], []) for v, _ in variants}
        for run in range(args.runs):
            if isinstance(source, str):
                X, y = load_real(source, DEFAULT_DATA)
            else:
                X, y = source(run=run)
                X = standardise(X)
            k = int(y.max()) + 1
            E = ensemble_for(X, k, args.R, run)
            for v, params in variants:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = cclust.consensus("bce", E, k, random_state=run, **params)
                scores[v][0].append(ari(y, res.labels))
                scores[v][1].append(nmi(y, res.labels))
        for v, (a, m) in scores.items():
            span = f" [{min(a):.4f}-{max(a):.4f}]"
            nmi_pub = "--" if pub_nmi is None else f"{pub_nmi:.4f}"
            print(f"| {label} ({X.shape[0]}, {k}) | {v} | {np.mean(a):.4f} ± {np.std(a):.4f}{span} "
                  f"| {np.mean(m):.4f} ± {np.std(m):.4f} | {pub_ari:.4f} | {nmi_pub} |", flush=True)


def blobs(n, k, seed):
    from sklearn.datasets import make_blobs

    return make_blobs(n, n_features=8, centers=k, cluster_std=2.5, random_state=seed)


def bench(args):
    print(f"Blobs (K = {args.k}, 8 features), {args.r} k-means partitions with K_i = K; the authors' code "
          f"started as their runBCE.m starts it; runs with seeds 0-{args.bench_runs - 1} (ensemble, blobs and "
          "both starts); times are means per run.\n")
    print("| n | cclust bce, authors' start, 1 run (s) | cclust bce defaults (s) | authors' code, Octave (s) "
          "| speed ratio (1 run) | ARI vs truth: ours 1 run / defaults / theirs |")
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        t_one, t_def, t_oct, a_one, a_def, a_oct = [], [], [], [], [], []
        for seed in range(args.bench_runs):
            X, y = blobs(n, args.k, seed)
            E = ensemble(X, args.k, args.r, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                seconds, one = best_of(lambda: cclust.consensus("bce", E, args.k, random_state=seed,
                                                                  init="random", n_init=1))
                t_one.append(seconds)
                seconds, default = best_of(lambda: cclust.consensus("bce", E, args.k, random_state=seed))
                t_def.append(seconds)
            a_one.append(ari(y, one.labels))
            a_def.append(ari(y, default.labels))
            if args.authors:
                theirs, inner, _ = authors(args.authors, E, args.k, seed)
                t_oct.append(inner)
                a_oct.append(np.nan if theirs is None else ari(y, theirs))
        ratio = np.mean(t_oct) / np.mean(t_one) if t_oct else float("nan")
        print(f"| {n:,} | {np.mean(t_one):.2f} | {np.mean(t_def):.2f} | {np.mean(t_oct) if t_oct else float('nan'):.2f} "
              f"| {ratio:.0f}x | {_fmt(a_one)} / {_fmt(a_def)} / {_fmt(a_oct)} |", flush=True)


def scale(args):
    from cclust.testing import peak_memory
    from modern_nmf import synthetic

    y, E = synthetic(args.n, args.r, args.k, 0)
    params = {"n_init": args.n_init} if args.n_init else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load = os.getloadavg()[0]
        start, cpu = time.perf_counter(), time.process_time()
        res = cclust.consensus("bce", E, args.k, random_state=0, **params)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    mem = peak_memory([(np.zeros((args.n, 1)), E)], [("bce", params)], n_clusters=args.k, timeout=3600)[0]["bce"]
    mb = mem["bytes"] / 2**20 if "bytes" in mem else float("nan")
    print("| n | r | K | params | time (s) | CPU time, all threads (s) | load average at start "
          "| peak memory (MB) | ARI vs truth | n_iter |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {args.n:,} | {args.r} | {args.k} | {params or 'defaults'} | {seconds:.1f} | {cpu:.1f} | {load:.1f} "
          f"| {mb:.0f} | {ari(y, res.labels):.3f} | {res.n_iter} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reproduce", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--ren2017", action="store_true")
    ap.add_argument("--R", type=int, default=40, help="ensemble size of --ren2017")
    ap.add_argument("--toys", type=int, nargs="*", default=[1, 2, 3], help="toys of --ren2017")
    ap.add_argument("--real", nargs="*", default=list(REN2017_REAL), help="data sets of --ren2017")
    ap.add_argument("--authors", default=None, help="folder with the authors' learnBCE.m, bceEstep.m, bceMstep.m")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--r", type=int, default=10)
    ap.add_argument("--k", type=int, default=None, help="K of --bench (default 5) and --scale (default 10)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    ap.add_argument("--bench-runs", type=int, default=3)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--n-init", type=int, default=None)
    args = ap.parse_args()
    if args.reproduce:
        reproduce(args)
    if args.ren2017:
        ren2017(args)
    if args.bench:
        bench(argparse.Namespace(**{**vars(args), "k": args.k or 5}))
    if args.scale:
        scale(argparse.Namespace(**{**vars(args), "k": args.k or 10}))


if __name__ == "__main__":
    main()
