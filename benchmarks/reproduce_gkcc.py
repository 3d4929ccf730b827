"""GKCC against Li & Liu 2018 ("Greedy optimization for K-means-based consensus
clustering", Tsinghua Sci. Tech. 2018): Fig. 3a/3b, Table 4 and Table 5 on the shared UCI sets.

Protocol (Li & Liu 2018, sec. 5.1): K = number of classes; for every dataset and seed s GKCC runs with its
defaults (nu = 59 candidates per step, so r = 59 (K - 1) basic partitions) seeded with s; KCC
(random initial objects) and KCC++ (k-means++ seeding) run once each (``n_init=1``) with Uc,
i.e. plain K-means on the binary matrix B, on the same generated ensemble, seeded with s.

* Fig. 3a: the condensed K-means objective on B, sum_k sum_{x in C_k} ||b(x) - m_k||^2 / n^2,
  of the three methods (GKCC's is the objective of its final K-means); we report the means,
  the mean paired difference KCC - GKCC and KCC++ - GKCC (positive: GKCC lower) and the share
  of seeds where GKCC is at most the other's value.
* Fig. 3b: the standard deviation of that objective across seeds.
* Table 4: mean Rn (ARI) and NMI against the classes.
* Table 5: greedy generation against RPS (k-means with K_i uniform on [2, K], as many partitions
  as the greedy ensemble) under the same fusion, KCC with Uc and ``n_init=10``; GKCC itself for
  reference (Li & Liu's "Greedy" column is GKCC).
* Choices (docstring of ``cclust.consensus_functions.gkcc.gkcc``): the four combinations of ``scaling``
  (raw / balanced) and ``fusion`` (partitions / augmented), ``--choice-seeds`` seeds on the
  small sets and ``--large-choice-seeds`` on pendigits and satimage.

Datasets from ``../shared/data`` as shipped (Li & Liu 2018 do not say how they prepared them): iris,
wine, breast, ecoli, glass, yeast, balance_scale, breast_tissue, pendigits, satimage; Li & Liu's gene
expression and image sets (26 of its 36) are not available and are skipped. pendigits and
satimage run ``--large-seeds`` seeds (default 3) instead of 20 to stay well under 30 minutes on
a shared 2-core machine::

    python benchmarks/reproduce_gkcc.py --output /tmp/issue4_reproduction.md
    python benchmarks/reproduce_gkcc.py --datasets iris wine --seeds 5
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
except ImportError:  # run from a source checkout: use the tree this script lives in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cclust  # noqa: E402
from cclust.consensus_functions.gkcc import gkcc  # noqa: E402
from cclust.consensus_functions.kcc import kcc  # noqa: E402
from cclust.errors import ConvergenceWarning  # noqa: E402
from cclust.metrics import ari, nmi  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
SMALL = ("iris", "wine", "breast", "ecoli", "glass", "yeast", "balance_scale", "breast_tissue")
LARGE = ("pendigits", "satimage")
PAPER_TABLE4 = {"KCC": (0.2986, 0.3965), "KCC++": (0.3139, 0.4147), "GKCC": (0.3710, 0.4560)}
PAPER_TABLE5 = {"RPS": (0.3135, 0.4151), "Greedy": (0.3710, 0.4560)}


def load(name, data_dir):
    z = np.load(os.path.join(data_dir, f"{name}.npz"))
    return np.asarray(z["X"], dtype=np.float64), np.asarray(z["y"], dtype=np.int64)


def condensed_objective(ensemble, labels, n_clusters):
    """sum_k sum_{x in C_k} ||b(x) - m_k||^2 / n^2 on the unweighted binary matrix B."""
    n = ensemble.n_samples
    table = ensemble.contingency(labels, n_clusters).astype(np.float64)
    sizes = table[:, ensemble.offsets[0]:ensemble.offsets[1]].sum(axis=1)
    sizes = np.where(sizes > 0, sizes, 1.0)
    sse = ensemble.n_partitions * n - ((table ** 2).sum(axis=1) / sizes).sum()
    return sse / n ** 2


def run_dataset(name, X, y, seeds, n_jobs, choice_seeds):
    K = int(y.max()) + 1
    rows = {key: [] for key in ("gkcc", "kcc", "kccpp", "kcc_greedy", "kcc_rps")}
    choices = {}
    timing = {"gkcc": 0.0, "kcc": 0.0, "rps": 0.0}
    r = None
    for s in range(seeds):
        t0 = time.perf_counter()
        res = gkcc(None, K, X=X, random_state=s, n_jobs=n_jobs)
        timing["gkcc"] += time.perf_counter() - t0
        E = res.extras["ensemble"]
        r = E.n_partitions
        t0 = time.perf_counter()
        plain = kcc(E, K, utility="uc", init="random", n_init=1, random_state=s, n_jobs=n_jobs)
        plus = kcc(E, K, utility="uc", init="k-means++", n_init=1, random_state=s, n_jobs=n_jobs)
        fused = kcc(E, K, utility="uc", init="random", n_init=10, random_state=s, n_jobs=n_jobs)
        timing["kcc"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        rps = cclust.generate("kmeans", X, K, n_partitions=r, k_range=(2, K), random_state=s, n_jobs=n_jobs)
        on_rps = kcc(rps, K, utility="uc", init="random", n_init=10, random_state=s, n_jobs=n_jobs)
        timing["rps"] += time.perf_counter() - t0
        for key, labels in (("gkcc", res.labels), ("kcc", plain.labels), ("kccpp", plus.labels),
                            ("kcc_greedy", fused.labels)):
            rows[key].append((condensed_objective(E, labels, K), ari(y, labels), nmi(y, labels)))
        rows["kcc_rps"].append((condensed_objective(rps, on_rps.labels, K), ari(y, on_rps.labels),
                                nmi(y, on_rps.labels)))
        if s < choice_seeds:
            for scaling in ("balanced", "raw"):
                for fusion in ("partitions", "augmented"):
                    alt = res if (scaling, fusion) == ("raw", "partitions") else gkcc(
                        None, K, X=X, random_state=s, n_jobs=n_jobs, scaling=scaling, fusion=fusion)
                    choices.setdefault((scaling, fusion), []).append(
                        (condensed_objective(alt.extras["ensemble"], alt.labels, K), ari(y, alt.labels),
                         nmi(y, alt.labels)))
    out = {key: np.array(v) for key, v in rows.items()}
    return K, r, out, {key: np.array(v) for key, v in choices.items()}, timing


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(SMALL + LARGE))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--large-seeds", type=int, default=3)
    parser.add_argument("--choice-seeds", type=int, default=5,
                        help="seeds for the scaling/fusion comparison on the small sets")
    parser.add_argument("--large-choice-seeds", type=int, default=1,
                        help="seeds for the scaling/fusion comparison on pendigits and satimage")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--data-dir", default=DEFAULT_DATA)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)

    started = time.perf_counter()
    results = {}
    for name in args.datasets:
        X, y = load(name, args.data_dir)
        seeds = args.large_seeds if name in LARGE else args.seeds
        choice_seeds = min(args.large_choice_seeds if name in LARGE else args.choice_seeds, seeds)
        t0 = time.perf_counter()
        results[name] = (X.shape, seeds) + run_dataset(name, X, y, seeds, args.n_jobs, choice_seeds)
        print(f"# {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    total = time.perf_counter() - started

    lines = ["# GKCC reproduction (Li & Liu 2018)", "",
             f"Command: `python benchmarks/reproduce_gkcc.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
             f"({platform.machine()}, Python {platform.python_version()}, cclust {cclust.__version__}; "
             f"{args.n_jobs} threads on a 2-core machine shared with other jobs; total {total / 60:.1f} min.) "
             f"Seeds: {args.seeds} per small set, {args.large_seeds} for pendigits and satimage.", ""]

    lines += ["## Fig. 3a/3b: condensed objective on B (sum ||b(x) - m||^2 / n^2; lower is better)", "",
              "Same generated ensemble per seed for the three methods; diff = other - GKCC (positive: GKCC "
              "lower); `GKCC <=` = share of seeds where GKCC's value is at most the other's.", "",
              "| dataset | n | K | r | KCC mean (std) | KCC++ mean (std) | GKCC mean (std) | diff KCC | diff KCC++ "
              "| GKCC <= KCC | GKCC <= KCC++ |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, (shape, seeds, K, r, out, _, _) in results.items():
        g, a, b = out["gkcc"][:, 0], out["kcc"][:, 0], out["kccpp"][:, 0]
        lines.append(
            f"| {name} | {shape[0]} | {K} | {r} | {a.mean():.4f} ({a.std():.2e}) | {b.mean():.4f} ({b.std():.2e}) "
            f"| {g.mean():.4f} ({g.std():.2e}) | {(a - g).mean():+.4f} | {(b - g).mean():+.4f} "
            f"| {np.mean(g <= a + 1e-12):.0%} | {np.mean(g <= b + 1e-12):.0%} |")

    lines += ["", "## Table 4: mean Rn (ARI) and NMI against the classes", "",
              "| dataset | seeds | KCC Rn | KCC++ Rn | GKCC Rn | KCC NMI | KCC++ NMI | GKCC NMI |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    means = {key: [] for key in ("kcc", "kccpp", "gkcc", "kcc_greedy", "kcc_rps")}
    for name, (shape, seeds, K, r, out, _, _) in results.items():
        for key in means:
            means[key].append(out[key][:, 1:].mean(axis=0))
        cells = [f"{out[k][:, 1].mean():.4f}" for k in ("kcc", "kccpp", "gkcc")]
        cells += [f"{out[k][:, 2].mean():.4f}" for k in ("kcc", "kccpp", "gkcc")]
        lines.append(f"| {name} | {seeds} | " + " | ".join(cells) + " |")
    avg = {key: np.mean(v, axis=0) for key, v in means.items()}
    lines.append(f"| **mean over {len(results)} sets** | | " + " | ".join(
        f"**{avg[k][0]:.4f}**" for k in ("kcc", "kccpp", "gkcc")) + " | " + " | ".join(
        f"**{avg[k][1]:.4f}**" for k in ("kcc", "kccpp", "gkcc")) + " |")
    lines.append("| Li & Liu 2018, Table 4 (36 sets) | | " + " | ".join(
        f"{PAPER_TABLE4[k][0]:.4f}" for k in ("KCC", "KCC++", "GKCC")) + " | " + " | ".join(
        f"{PAPER_TABLE4[k][1]:.4f}" for k in ("KCC", "KCC++", "GKCC")) + " |")

    lines += ["", "## Table 5: greedy against RPS generation (fusion: KCC, Uc, n_init=10)", "",
              "| dataset | RPS Rn | greedy Rn | GKCC Rn | RPS NMI | greedy NMI | GKCC NMI |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, (shape, seeds, K, r, out, _, _) in results.items():
        cells = [f"{out[k][:, 1].mean():.4f}" for k in ("kcc_rps", "kcc_greedy", "gkcc")]
        cells += [f"{out[k][:, 2].mean():.4f}" for k in ("kcc_rps", "kcc_greedy", "gkcc")]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| **mean** | " + " | ".join(f"**{avg[k][0]:.4f}**" for k in ("kcc_rps", "kcc_greedy", "gkcc"))
                 + " | " + " | ".join(f"**{avg[k][1]:.4f}**" for k in ("kcc_rps", "kcc_greedy", "gkcc")) + " |")
    lines.append(f"| Li & Liu 2018, Table 5 (36 sets) | {PAPER_TABLE5['RPS'][0]:.4f} | | {PAPER_TABLE5['Greedy'][0]:.4f} "
                 f"| {PAPER_TABLE5['RPS'][1]:.4f} | | {PAPER_TABLE5['Greedy'][1]:.4f} |")

    with_choices = {name: v for name, v in results.items() if v[5]}
    if with_choices:
        combos = [("raw", "partitions"), ("raw", "augmented"), ("balanced", "partitions"), ("balanced", "augmented")]
        lines += ["", "## Choices: scaling x fusion (mean Rn / NMI / condensed objective on B)", "",
                  f"raw/partitions is the default. Seeds: {args.choice_seeds} per small set, "
                  f"{args.large_choice_seeds} for pendigits and satimage. Each choice generates its own "
                  "ensemble, so the objectives compare only within a column.", "",
                  "| dataset | " + " | ".join(f"{s}/{f}" for s, f in combos) + " |",
                  "| --- |" + " --- |" * len(combos)]
        sums = {c: [] for c in combos}
        small_sums = {c: [] for c in combos}
        for name, (shape, seeds, K, r, out, choices, _) in with_choices.items():
            cells = []
            for c in combos:
                v = choices[c].mean(axis=0)
                sums[c].append(v)
                if name not in LARGE:
                    small_sums[c].append(v)
                cells.append(f"{v[1]:.4f} / {v[2]:.4f} / {v[0]:.4f}")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        for label, table in (("small sets", small_sums), ("all", sums)):
            if table[combos[0]]:
                lines.append(f"| **mean, {label}** | " + " | ".join(
                    "**{1:.4f} / {2:.4f}** / {0:.4f}".format(*np.mean(table[c], axis=0)) for c in combos) + " |")

    lines += ["", "## Time per dataset (seconds, all seeds)", "",
              "| dataset | GKCC | KCC, KCC++, KCC x10 on its ensemble | RPS generation + KCC x10 |",
              "| --- | --- | --- | --- |"]
    for name, (shape, seeds, K, r, out, _, timing) in results.items():
        lines.append(f"| {name} | {timing['gkcc']:.1f} | {timing['kcc']:.1f} | {timing['rps']:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
