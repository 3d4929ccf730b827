"""MCLA and WOMC with ``balance="clusters"`` against ``balance="objects"``, and MCLA with a
looser METIS ``ufactor``, over many seeds.

The question it answers: which ``balance`` should be the default? ``"clusters"`` gives every
meta-graph vertex unit weight (as ClusterEnsembles does), so METIS balances meta-clusters by
their number of clusters; ``"objects"`` weights each vertex by its cluster's size, as Strehl &
Ghosh (2002, sec. 3.4, "each vertex is weighted proportional to the size of the corresponding
cluster") and their ClusterPack code do, so the meta-clusters cover about as many objects. When
the base clusterings isolate a few outliers (k-means with K = 2 on the spambase sample),
``"clusters"`` puts the outliers' small clusters in one meta-cluster and their large complements
in the other, and nearly every object joins the latter (ARI about 0). Every variant names its
``balance`` explicitly, so the columns keep their meaning whatever the library default is.

Data and ensembles:

* The data sets of Ren et al. (2017, Table 4) (spambase 250 + 250 sample, iris, glass, yeast, vowel,
  balance_scale, breast_tissue, hayes_roth, australian, semeion, wall_robot), loaded and
  prepared by ``reproduce_woec.load_real`` from ``--data-dir``; seed s builds Ren et al.'s (2017) R = 40
  ensemble with ``reproduce_woec.ensemble_for(X, K, 40, s)`` (half ``subsample``, half
  ``subspace``), as ``reproduce_woec.py`` does for its run s.
* With ``--datasets``, also ecoli, dermatology, wdbc, wine, breast and segment (not in Ren et al. 2017;
  same R = 40 protocol, standardised, all objects).
* digits (scikit-learn) and letter (``--data-dir``/large/letter.npz): r = 100 k-means
  partitions with K_i = K, built by ``bench_graph.ensemble`` and cached in ``--cache`` (the
  same ``bench_graph_<name>_100.npy`` files as ``bench_graph.py``); seed s permutes objects,
  partitions and cluster names (``bench_graph.equivalent_ensemble``).

Every variant of a seed fuses the same ensemble with ``random_state=s``; ARI and NMI against
the classes, mean ± sd (ddof 1) over the seeds.

    python benchmarks/bench_mcla_balance.py --out /tmp/mcla_balance.md
    python benchmarks/bench_mcla_balance.py --seeds 5 --datasets spambase digits
"""
import argparse
import os
import platform
import sys
import time
import warnings

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cclust  # noqa: E402
from cclust.errors import ConvergenceWarning  # noqa: E402
from cclust.metrics import ari, nmi  # noqa: E402
from _common import write_report  # noqa: E402
from bench_graph import ensemble as cached_kmeans_ensemble, equivalent_ensemble  # noqa: E402
from reproduce_woec import DEFAULT_DATA, REAL, TABLE4, ensemble_for, load_real  # noqa: E402

LARGE = ("digits", "letter")
DATASETS = REAL + LARGE
# Not in Ren et al. (2017, Table 4) and not run by default: more shared data sets with the same R = 40
# protocol, several with strongly imbalanced classes (ecoli 143..2 objects, dermatology, wdbc).
EXTRA = ("ecoli", "dermatology", "wdbc", "wine", "breast", "segment")
# (column label, consensus method, keyword arguments): balance, then MCLA's ufactor with unit
# vertex weights (the ufactor rows of docs/benchmarks.md).
BALANCE_VARIANTS = (
    ("MCLA clusters", "mcla", {"balance": "clusters"}),
    ("MCLA objects", "mcla", {"balance": "objects"}),
    ("WOMC clusters", "womc", {"balance": "clusters"}),
    ("WOMC objects", "womc", {"balance": "objects"}),
)
UFACTOR_VARIANTS = (
    ("MCLA ufactor=300", "mcla", {"ufactor": 300, "balance": "clusters"}),
    ("MCLA ufactor=1000", "mcla", {"ufactor": 1000, "balance": "clusters"}),
    ("MCLA ufactor=3000", "mcla", {"ufactor": 3000, "balance": "clusters"}),
)
VARIANTS = BALANCE_VARIANTS + UFACTOR_VARIANTS
# Ren et al. (2017, Table 4) columns after base min / max / mean: CSPA, MCLA, HBGF, WOMC, WOSP, WOHB.
PUBLISHED = {name: (row[4], row[6]) for name, row in TABLE4.items()}
# A consensus cluster below this fraction of the average size n / K counts as degenerate: the
# collapse keeps K labels but gives all but a handful of objects to one meta-cluster.
DEGENERATE = 0.2


def load_large(name, data_dir):
    """digits (scikit-learn's copy, as ``bench_graph.load``) or letter from ``data_dir``/large."""
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X.astype(np.float64), np.asarray(y, dtype=np.int64)
    with np.load(os.path.join(data_dir, "large", f"{name}.npz"), allow_pickle=False) as z:
        return np.array(z["X"], dtype=np.float64), np.array(z["y"], dtype=np.int64)


def ensembles(name, args):
    """(shape of X, K, iterator of (seed, Ensemble, classes) over ``args.seeds`` seeds) of ``name``."""
    if name in LARGE:
        X, y = load_large(name, args.data_dir)
        _, y = np.unique(y, return_inverse=True)
        k = int(y.max()) + 1
        base = np.asarray(cached_kmeans_ensemble(name, X, k, args.r, args.cache).labels)

        def runs():
            for seed in range(args.seeds):
                labels, truth = equivalent_ensemble(base, y, seed)
                yield seed, cclust.Ensemble(labels), truth
        return X.shape, k, runs()
    X, y = load_real(name, args.data_dir)
    k = int(y.max()) + 1

    def runs():
        for seed in range(args.seeds):
            yield seed, ensemble_for(X, k, args.R, seed), y
    return X.shape, k, runs()


def evaluate(name, args):
    """Scores of every variant over the seeds: {label: {"ari": [...], "nmi": [...], "degenerate": int}}."""
    shape, k, runs = ensembles(name, args)
    scores = {label: {"ari": [], "nmi": [], "degenerate": 0, "cpu": 0.0} for label, _, _ in VARIANTS}
    for seed, E, truth in runs:
        floor = DEGENERATE * E.n_samples / k
        for label, method, params in VARIANTS:
            cpu = time.process_time()
            res = cclust.get(method)(E, k, random_state=seed, **params)
            scores[label]["cpu"] += time.process_time() - cpu
            scores[label]["ari"].append(ari(res.labels, truth))
            scores[label]["nmi"].append(nmi(res.labels, truth))
            sizes = np.bincount(res.labels, minlength=k)
            scores[label]["degenerate"] += int(sizes.min() < floor)
        print(f"{name} seed {seed}: " + " ".join(f"{label.replace(' ', '_')}={s['ari'][-1]:.3f}"
                                                   for label, s in scores.items()), file=sys.stderr, flush=True)
    return shape, k, scores


def mean_sd(values):
    values = np.asarray(values, dtype=np.float64)
    sd = values.std(ddof=1) if values.size > 1 else 0.0
    return f"{values.mean():.4f} ± {sd:.4f}"


def paired(scores, metric, a, b):
    """Mean ± sd of the per-seed difference a - b, and how many seeds a beats b by > 0.01."""
    diff = np.asarray(scores[a][metric]) - np.asarray(scores[b][metric])
    sd = diff.std(ddof=1) if diff.size > 1 else 0.0
    return f"{diff.mean():+.4f} ± {sd:.4f} ({int((diff > 0.01).sum())}/{int((diff < -0.01).sum())})"


def table(results, metric, variants, with_published):
    labels = [label for label, _, _ in variants]
    head = "| data (n, d, K) | " + " | ".join(labels)
    rule = "|---|" + "---|" * len(labels)
    if with_published:
        head += " | objects − clusters, MCLA | objects − clusters, WOMC | MCLA (Ren et al. 2017) | WOMC (Ren et al. 2017)"
        rule += "---|---|---|---|"
    lines = [head + " |", rule]
    for name, (shape, k, scores) in results.items():
        cells = [mean_sd(scores[label][metric]) for label in labels]
        if with_published:
            cells += [paired(scores, metric, "MCLA objects", "MCLA clusters"),
                      paired(scores, metric, "WOMC objects", "WOMC clusters")]
            published = PUBLISHED.get(name)
            cells += [f"{v:.4f}" for v in published] if published and metric == "ari" else ["", ""]
        lines.append(f"| {name} ({shape[0]}, {shape[1]}, {k}) | " + " | ".join(cells) + " |")
    # The unweighted mean over data sets of the per-data-set means: one number per column.
    overall = [f"{np.mean([np.mean(s[label][metric]) for _, _, s in results.values()]):.4f}" for label in labels]
    if with_published:
        overall += ["", "", "", ""]
    lines.append(f"| mean over {len(results)} data sets | " + " | ".join(overall) + " |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="runs per data set (seeds 0..N-1)")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=DATASETS + EXTRA,
                        metavar="NAME", help="some of: " + " ".join(DATASETS + EXTRA) + " (default: all but "
                        + ", ".join(EXTRA) + ")")
    parser.add_argument("--data-dir", default=DEFAULT_DATA,
                        help="the shared data folder (default: ../shared/data beside the repository)")
    parser.add_argument("--cache", default="/tmp",
                        help="folder of the cached r-partition k-means ensembles of digits and letter")
    parser.add_argument("--R", type=int, default=40, help="ensemble size for the data sets of Ren et al. 2017, Table 4")
    parser.add_argument("--r", type=int, default=100, help="k-means ensemble size for digits and letter")
    parser.add_argument("--out", default=None, help="also write the Markdown report to this file")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be a positive integer, got {args.seeds}.")
    if not args.datasets:
        parser.error("--datasets needs at least one name, got none.")
    warnings.simplefilter("ignore", ConvergenceWarning)

    start_wall, start_cpu = time.perf_counter(), time.process_time()
    results = {}
    for name in args.datasets:
        results[name] = evaluate(name, args)
    wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu

    command = " ".join(["python benchmarks/bench_mcla_balance.py"] + list(argv if argv is not None else sys.argv[1:]))
    machine = (f"Machine: {platform.platform()}, Python {platform.python_version()}, 2 cores shared with "
               f"other jobs; {wall:.0f} s wall, {cpu:.0f} s CPU (this process, ensembles included).")
    protocol = (f"{args.seeds} seeds per data set. Data of Ren et al. 2017, Table 4 (and extra): seed s = the R = {args.R} "
                f"ensemble of `reproduce_woec.py` run s. digits, letter: r = {args.r} cached k-means "
                "partitions, seed s permutes objects, partitions and cluster names. random_state = s for "
                "every variant; mean ± sd (ddof 1) over seeds.")
    legend = ("\"objects − clusters\": paired per-seed difference, mean ± sd (seeds where objects is "
              "better / worse by more than 0.01). MCLA / WOMC (Ren et al. 2017): their Table 4 (R = 40), for reference.")
    lines = ["# MCLA / WOMC: balance=\"clusters\" vs \"objects\", and MCLA's ufactor", "",
             f"Command: `{command}`", machine, protocol, legend, "", "## ARI: balance", ""]
    lines += table(results, "ari", BALANCE_VARIANTS, True)
    lines += ["", "## NMI: balance", ""]
    lines += table(results, "nmi", BALANCE_VARIANTS, True)
    lines += ["", "## ARI: MCLA ufactor (balance=\"clusters\")", ""]
    lines += table(results, "ari", (BALANCE_VARIANTS[0],) + UFACTOR_VARIANTS, False)
    lines += ["", f"## Degenerate consensus: seeds with a cluster smaller than {DEGENERATE:g} n / K", "",
              "| data | " + " | ".join(label for label, _, _ in VARIANTS) + " |",
              "|---|" + "---|" * len(VARIANTS)]
    for name, (_, _, scores) in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{scores[label]['degenerate']}/{args.seeds}"
                                                 for label, _, _ in VARIANTS) + " |")
    lines += ["", "CPU seconds of the consensus calls, all data sets: " +
              ", ".join(f"{label} {sum(r[2][label]['cpu'] for r in results.values()):.1f}"
                        for label, _, _ in VARIANTS) + "."]
    write_report("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
