"""The default pipeline's quality and time against the k-means generator's settings.

``ConsensusClustering(n_clusters=K, random_state=s).fit_predict(X)`` (kcc over 100 partitions of
the ``kmeans`` generator) with the generator's Lloyd iterations per partition (``max_iter``), the
upper end of its K_i range and its seeding changed through ``generator_params``, or the number of partitions changed, everything else
at its default. Prints Markdown: per variant and data set the mean ARI and NMI against the classes
over the seeds (ARI also its standard deviation and minimum) and the mean wall and CPU time of one fit (the CPU
time of all threads is the steadier number on a shared machine). ``--se`` prints the means with their
standard errors instead, and the mean paired difference from the first variant (the same seed gives both
variants the same generator and KCC seeds, and a smaller ensemble is the first columns of the larger)::

    python benchmarks/bench_default_pipeline.py --suite real --seeds 5 --data ../shared/data
    python benchmarks/bench_default_pipeline.py --suite large --seeds 1 --variants old default
    python benchmarks/bench_default_pipeline.py --suite real --variants old iter1 iter3 iter5 iter10 default
    python benchmarks/bench_default_pipeline.py --suite scale --seeds 5 --se --variants partitions100 partitions50

Suites:

* ``real``: bundled iris and wine, and the shared wdbc, ecoli, dermatology, yeast, segment,
  satimage and pendigits (../shared/data/NAME.npz), features standardised, K = number of classes.
* ``large``: ``make_blobs(50000, n_features=20, centers=5, random_state=0)``, K = 5.
* ``scale``: the shared data sets at and above 20000 objects (../shared/data/large/NAME.npz):
  fashion_mnist (70000 x 784, K = 10) on its first 50 principal components (pixels / 255, as
  single-cell pipelines and SC3s cluster principal components; the full 784 pixels cost 16 times
  more per pass), birch1 (100000 x 2, K = 100, standardised) and letter (20000 x 16, K = 26,
  standardised); with ``--more``, also mnist_test, pendigits and satimage (standardised).

``--reuse`` (variants of the number of partitions only, with the same generator_params): the
largest ensemble is generated once per seed and each smaller count fuses its first columns with
``fit(X, ensemble=...)``: the labels of ``ConsensusClustering(n_partitions=m)`` exactly (partition
j has the j-th child seed whatever the count, and the consensus has the same seed), for the time
of one generation; the seconds printed are then the fusion's alone for the smaller counts.
* ``blobs``: the conformance kit's easy blobs (n = 2000, K = 3, 5, 10, balanced and one blob
  5 times the others), the cells of the easy-data table of docs/benchmarks.md.

Variants (``--variants``; the cap is the top of K_i's range, ``k_range = (K, max(K, min(cap,
ceil(sqrt(n)))))``):
"""
import argparse
import math
import os
import sys
import time

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout: use the tree this script lives in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cclust import ConsensusClustering  # noqa: E402
from cclust.metrics import ari, nmi  # noqa: E402
from _common import cpu_model, write_report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
REAL = ("wdbc", "ecoli", "dermatology", "yeast", "segment", "satimage", "pendigits")
SCALE = ("fashion_mnist", "birch1", "letter")
MORE = ("mnist_test", "pendigits", "satimage")

#: name -> (max_iter, cap of K_i (None: sqrt(n)), init, kmeanspp_trials (None: greedy, 2 + log K_i));
#: "default" is whatever this cclust does with no generator_params; "old" the defaults before.
VARIANTS = {
    "default": None,
    "old": (100, None, "k-means++", None),
    "iter1": (1, None, "k-means++", None),
    "iter3": (3, None, "k-means++", None),
    "iter5": (5, None, "k-means++", None),
    "iter10": (10, None, "k-means++", None),
    "iter5-cap50": (5, 50, "k-means++", None),
    "iter5-cap100": (5, 100, "k-means++", None),
    "iter100-cap50": (100, 50, "k-means++", None),
    "iter5-cap50-trials1": (5, 50, "k-means++", 1),
    "iter5-cap50-random": (5, 50, "random", None),
    "iter10-cap50-trials1": (10, 50, "k-means++", 1),
    "iter3-cap50-trials1": (3, 50, "k-means++", 1),
}
#: name -> (n_partitions, generator_params): the estimator's own parameters at this cclust's generator
#: defaults, for the number of partitions and the cost per partition at scale (docs/benchmarks.md,
#: "The default pipeline at 10^5 objects: where the time goes, and 50 partitions on real data")
SIZED = {
    "partitions100": (100, None),
    "partitions50": (50, None),
    "partitions30": (30, None),
    "partitions50-iter3": (50, {"max_iter": 3}),
    "partitions50-fit5000": (50, {"fit_rows": 5000}),
    "partitions100-fit5000": (100, {"fit_rows": 5000}),
    "partitions100-trials1": (100, {"kmeanspp_trials": 1}),
    "partitions100-iter3": (100, {"max_iter": 3}),
}
__doc__ += "".join(f"\n* ``{name}``: " + ("no generator_params" if spec is None else
                   "max_iter={}, cap={}, init={}, kmeanspp_trials={}".format(*spec))
                   for name, spec in VARIANTS.items())
__doc__ += "".join(f"\n* ``{name}``: n_partitions={count}" + (f", generator_params={params}" if params else "")
                   for name, (count, params) in SIZED.items())


def generator_params(name, n, k):
    if name in SIZED:
        return SIZED[name][1]
    spec = VARIANTS[name]
    if spec is None:
        return None
    max_iter, cap, init, trials = spec
    high = math.ceil(math.sqrt(n)) if cap is None else min(cap, math.ceil(math.sqrt(n)))
    # every object fits every run, as when these variants were measured (fit_rows="auto" samples above 20000)
    return {"max_iter": max_iter, "k_range": (k, max(k, high)), "init": init, "kmeanspp_trials": trials,
            "fit_rows": None}


def datasets(suite, data_dir, more=False):
    """(name, loader() -> (X, y, K)) of a suite."""
    def standardised(X):
        sd = X.std(axis=0)
        return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)

    if suite == "scale":
        def stored(path):
            z = np.load(path)
            X = z["X"]
            if os.path.basename(path) == "fashion_mnist.npz":
                X = principal_components(X / 255.0, 50)
            else:
                X = standardised(X)
            return X, z["y"], len(np.unique(z["y"]))

        paths = [(name, os.path.join(data_dir, "large", name + ".npz")) for name in SCALE]
        paths += [(name, os.path.join(data_dir, name + ".npz")) for name in (MORE if more else ())]
        missing = [path for _, path in paths if not os.path.exists(path)]
        if missing:
            sys.exit(f"bench_default_pipeline.py: {', '.join(missing)} not found; "
                     "pass the folder of the shared data sets with --data")
        return [(name, lambda path=path: stored(path)) for name, path in paths]

    if suite == "large":
        def blobs():
            from sklearn.datasets import make_blobs

            X, y = make_blobs(50000, n_features=20, centers=5, random_state=0)
            return X, y, 5
        return [("blobs-50000x20-k5", blobs)]
    if suite == "blobs":
        from cclust.testing import easy_blobs

        out = []
        for k in (3, 5, 10):
            for ratio in (1, 5):
                name = f"blobs-2000-k{k}" + ("-x5" if ratio > 1 else "")
                out.append((name, lambda k=k, ratio=ratio: (*easy_blobs(2000, k, ratio=ratio), k)))
        return out
    from cclust.datasets import load_iris, load_wine

    def bundled(load):
        X, y = load()
        return standardised(X), y, len(np.unique(y))

    def shared(name):
        z = np.load(os.path.join(data_dir, name + ".npz"))
        return standardised(z["X"]), z["y"], len(np.unique(z["y"]))

    missing = [name for name in REAL if not os.path.exists(os.path.join(data_dir, name + ".npz"))]
    if missing:
        sys.exit(f"bench_default_pipeline.py: {', '.join(missing)} not found in {data_dir}; "
                 "pass the folder of the shared data sets with --data")
    return ([("iris", lambda: bundled(load_iris)), ("wine", lambda: bundled(load_wine))]
            + [(name, lambda name=name: shared(name)) for name in REAL])


def principal_components(X, m):
    """The scores of X's first m principal components (the eigenvectors of its covariance)."""
    centred = X - X.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)
    return np.ascontiguousarray(centred @ vectors[:, ::-1][:, :m])


def run_shared(X, y, k, variants, seed, n_jobs):
    """run() of SIZED variants that differ in n_partitions alone: the largest generated once,
    the smaller ones fused from its first columns (the same labels as fitting them)."""
    from cclust import Ensemble

    counts = {variant: SIZED[variant][0] for variant in variants}
    largest = max(variants, key=counts.get)
    out = {largest: run(X, y, k, largest, seed, n_jobs, keep=True)}
    model = out[largest][-1]
    labels = np.asarray(model.ensemble_.labels)
    for variant in variants:
        if variant == largest:
            continue
        small = ConsensusClustering(n_clusters=k, random_state=seed, n_jobs=n_jobs)
        start, cpu = time.perf_counter(), time.process_time()
        fused = small.fit_predict(X, ensemble=Ensemble(labels[:, :counts[variant]]))
        out[variant] = (ari(y, fused), nmi(y, fused), time.perf_counter() - start, time.process_time() - cpu)
    out[largest] = out[largest][:-1]
    return out


def run(X, y, k, variant, seed, n_jobs, keep=False):
    sized = {"n_partitions": SIZED[variant][0]} if variant in SIZED else {}
    model = ConsensusClustering(n_clusters=k, random_state=seed, n_jobs=n_jobs,
                                generator_params=generator_params(variant, X.shape[0], k), **sized)
    start, cpu = time.perf_counter(), time.process_time()
    labels = model.fit_predict(X)
    out = ari(y, labels), nmi(y, labels), time.perf_counter() - start, time.process_time() - cpu
    return out + (model,) if keep else out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", choices=("real", "large", "blobs", "scale"), default="real")
    parser.add_argument("--variants", nargs="+", default=["old", "default"],
                        choices=sorted(VARIANTS) + sorted(SIZED))
    parser.add_argument("--se", action="store_true",
                        help="means ± standard error, and the paired difference from the first variant")
    parser.add_argument("--more", action="store_true", help="suite scale: also mnist_test, pendigits, satimage")
    parser.add_argument("--reuse", action="store_true",
                        help="variants of the number of partitions: generate the largest once per seed")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--sets", nargs="+", default=None, help="only these data sets of the suite")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()

    sets = [(name, load) for name, load in datasets(args.suite, args.data, args.more)
            if args.sets is None or name in args.sets]
    cells = {}
    for name, load in sets:
        X, y, k = load()
        if args.reuse:
            if any(v not in SIZED or SIZED[v][1] != SIZED[args.variants[0]][1] for v in args.variants):
                sys.exit("bench_default_pipeline.py: --reuse takes variants that differ in the number of partitions alone")
            shared = {}
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                for variant, score in run_shared(X, y, k, args.variants, seed, args.n_jobs).items():
                    shared.setdefault(variant, []).append(score)
                    print(f"  {name} {variant} seed {seed}: ARI {score[0]:.4f} NMI {score[1]:.4f} {score[2]:.1f} s "
                          f"(CPU {score[3]:.1f} s), load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
            for variant in args.variants:
                cells[variant, name] = np.array(shared[variant])
            continue
        for variant in args.variants:
            scores = []
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                scores.append(run(X, y, k, variant, seed, args.n_jobs))
                print(f"  {name} {variant} seed {seed}: ARI {scores[-1][0]:.4f} NMI {scores[-1][1]:.4f} "
                      f"{scores[-1][2]:.1f} s (CPU {scores[-1][3]:.1f} s), load {os.getloadavg()[0]:.1f}",
                      file=sys.stderr, flush=True)
            scores = np.array(scores)
            cells[variant, name] = scores
            print(f"{name} {variant}: ARI {scores[:, 0].mean():.3f} NMI {scores[:, 1].mean():.3f} "
                  f"{scores[:, 2].mean():.2f} s (CPU {scores[:, 3].mean():.2f} s)", file=sys.stderr, flush=True)
    if args.se:
        write_report(se_table(cells, sets, args.variants, range(args.first_seed, args.first_seed + args.seeds)), args.output)
        return
    load = os.getloadavg()
    lines = [f"Machine: {cpu_model()}, {os.cpu_count()} cores, load average {load[0]:.1f} at the end; "
             f"seeds {args.first_seed}..{args.first_seed + args.seeds - 1}; cells: ARI mean ± sd (min) / NMI mean / "
             "seconds per fit, wall (CPU of all threads).", "",
             "| variant | " + " | ".join(name for name, _ in sets) + " |",
             "|---|" + "---:|" * len(sets)]
    for variant in args.variants:
        row = []
        for name, _ in sets:
            s = cells[variant, name]
            row.append(f"{s[:, 0].mean():.3f} ± {s[:, 0].std():.3f} ({s[:, 0].min():.3f}) / {s[:, 1].mean():.3f} / "
                       f"{s[:, 2].mean():.2f} ({s[:, 3].mean():.2f})")
        lines.append(f"| {variant} | " + " | ".join(row) + " |")
    write_report("\n".join(lines), args.output)


def se_table(cells, sets, variants, seeds):
    """Markdown: ARI and NMI mean ± standard error per variant and data set, the paired difference
    in ARI from the first variant (mean ± its standard error), and the CPU seconds per fit."""
    def se(values):
        return values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")

    load = os.getloadavg()
    lines = [f"Machine: {cpu_model()}, {os.cpu_count()} cores, load average {load[0]:.1f} at the end; "
             f"seeds {seeds[0]}..{seeds[-1]}; cells: ARI mean ± standard error / NMI mean ± standard error / ARI minus "
             f"{variants[0]}'s, paired by seed (mean ± standard error) / CPU seconds per fit (all threads).", "",
             "| variant | " + " | ".join(name for name, _ in sets) + " |",
             "|---|" + "---:|" * len(sets)]
    for variant in variants:
        row = []
        for name, _ in sets:
            s, base = cells[variant, name], cells[variants[0], name]
            diff = s[:, 0] - base[:, 0]
            row.append(f"{s[:, 0].mean():.3f} ± {se(s[:, 0]):.3f} / {s[:, 1].mean():.3f} ± {se(s[:, 1]):.3f} / "
                       + ("-" if variant == variants[0] else f"{diff.mean():+.3f} ± {se(diff):.3f}")
                       + f" / {s[:, 3].mean():.1f}")
        lines.append(f"| {variant} | " + " | ".join(row) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
