"""KCC against Becerra Tomé's review of Wu et al. (TKDE 2015), the review's Tables 3, 4 and 5.

Protocol of Wu et al. 2015 as the review's sec. 2 repeats it: for every dataset and seed s, r = 100 basic partitions by k-means
(squared Euclidean, one initialisation each, K_i uniform on [2, 2K], K = number of classes),
equal weights; then KCC with each of the ten utilities of ``cclust.utilities.KCC_UTILITIES`` (Uc, UH,
Ucos, UL5, UL8 and their normalised forms), default restarts (``n_init=10``), both seeded with s;
Rn = ARI against the classes. Prints Markdown (and writes it to ``--output``): per dataset and
utility the mean and standard deviation over seeds of Rn beside the review's "Original" (Wu et
al.'s published values) and "Results" (the reviewer's re-implementation) columns, then times
and convergence notes::

    python benchmarks/reproduce_kcc.py --output /tmp/kcc.md
    python benchmarks/reproduce_kcc.py --datasets iris wine --seeds 3

Datasets come from ``../shared/data`` (``--data-dir``), prepared as the review describes:

* wine: last attribute (proline) divided by 100;
* breast: the 16 imputed Bare Nuclei cells (``missing`` mask) re-imputed with the column mean
  of the observed values (the review imputes with the mean; the shared copy uses the median);
* ecoli: the two classes of 2 objects (imL, imS) dropped, giving the review's 332 objects and 6
  classes (``ecoli336`` runs the shared copy as is: 336 objects, 8 classes);
* dermatology: the 8 rows with a missing Age dropped, giving the review's 358 rows (all 34 attributes);
* iris, pendigits, satimage: as shipped.

``--init k-means++`` runs KCC++ (the library's default start) instead of the review's random objects.

``--k-range authors`` replaces the review's K_i in [2, 2K] (``--k-range review``, the default)
with the KCC authors' own default K_i in [K, ceil(sqrt(n))] (the library's default) to test
where the review's "Original" column comes from.
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
from cclust.utilities import KCC_UTILITIES  # noqa: E402
from cclust.errors import ConvergenceWarning  # noqa: E402
from _common import cpu_model, write_report

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
DATASETS = ("breast", "ecoli", "iris", "pendigits", "satimage", "dermatology", "wine")  # the review's order
EXTRA_DATASETS = ("ecoli336",)

# Becerra Tomé, Tables 4 and 5: (Original = Wu et al. 2015, Results = the review's re-implementation), in
# the column order of cclust.utilities.KCC_UTILITIES.
PUBLISHED = {
    "breast": ((0.0556, 0.8337), (0.8673, 0.8337), (0.1111, 0.8337), (0.1212, 0.8337), (0.1333, 0.8337),
               (0.0380, 0.8337), (0.8694, 0.8337), (0.1173, 0.8337), (0.1329, 0.8337), (0.1126, 0.8337)),
    "ecoli": ((0.5065, 0.6613), (0.4296, 0.2857), (0.4359, 0.2973), (0.4393, 0.5098), (0.4284, 0.2948),
              (0.5012, 0.3788), (0.5470, 0.4005), (0.4179, 0.5165), (0.4174, 0.3440), (0.4281, 0.2948)),
    "iris": ((0.7352, 0.7302), (0.7338, 0.7455), (0.7352, 0.7455), (0.7352, 0.6013), (0.7455, 0.7302),
             (0.7325, 0.7455), (0.7069, 0.6013), (0.7455, 0.7455), (0.7455, 0.7302), (0.7352, 0.7302)),
    "pendigits": ((0.5347, 0.4882), (0.5596, 0.5348), (0.5814, 0.5404), (0.5692, 0.4834), (0.5527, 0.4411),
                  (0.5060, 0.5803), (0.5652, 0.3995), (0.5789, 0.4991), (0.5684, 0.4834), (0.5639, 0.4569)),
    "satimage": ((0.4501, 0.5282), (0.4743, 0.1753), (0.5322, 0.3857), (0.4738, 0.5310), (0.4834, 0.4181),
                 (0.3349, 0.4181), (0.5323, 0.5361), (0.5318, 0.5309), (0.4691, 0.3873), (0.4797, 0.4181)),
    "dermatology": ((0.0352, 0.0416), (0.0661, 0.0254), (0.0421, 0.0203), (0.0274, 0.0361), (0.0223, 0.0192),
                    (0.0386, 0.0399), (0.0537, 0.0262), (0.0490, 0.0361), (0.0259, 0.0192), (0.0309, 0.0183)),
    "wine": ((0.1448, 0.1278), (0.1476, 0.0537), (0.1448, 0.1379), (0.1397, 0.1348), (0.1379, 0.1348),
             (0.1448, 0.0714), (0.1336, 0.1475), (0.1449, 0.1348), (0.1447, 0.1348), (0.1379, 0.1348)),
}
PUBLISHED["ecoli336"] = PUBLISHED["ecoli"]

# Becerra Tomé, Table 3: seconds of KCC with Uc (Original, Results)
PUBLISHED_TIME = {"breast": (1.95, 0.69), "ecoli": (1.40, 2.31), "iris": (0.33, 0.52),
                  "pendigits": (81.19, 73.61), "satimage": (32.47, 25.15), "dermatology": (1.26, 1.96),
                  "wine": (0.56, 0.45)}
PUBLISHED_TIME["ecoli336"] = PUBLISHED_TIME["ecoli"]


def load_dataset(name, data_dir):
    """(X, y, note) of a dataset prepared as the review describes (see the module docstring)."""
    base = "ecoli" if name == "ecoli336" else name
    with np.load(os.path.join(data_dir, f"{base}.npz"), allow_pickle=False) as z:
        X = np.array(z["X"], dtype=np.float64)
        y = np.array(z["y"], dtype=np.int64)
        missing = np.array(z["missing"], dtype=bool) if "missing" in z.files else None
        names = np.array(z["label_names"]) if "label_names" in z.files else None
    note = "as shipped"
    if name == "wine":
        X[:, -1] /= 100.0
        note = "last attribute (proline) / 100"
    elif name == "breast":
        observed = np.where(missing, np.nan, X)
        means = np.nanmean(observed, axis=0)
        cols = np.nonzero(missing.any(0))[0]
        X[missing] = np.broadcast_to(means, X.shape)[missing]
        note = (f"{int(missing.sum())} missing cells re-imputed with the observed column mean, "
                + ", ".join(f"column {c} (0-based, Bare Nuclei): {means[c]:.4f}" for c in cols)
                + " instead of the shared copy's median")
    elif name == "ecoli":
        sizes = np.bincount(y)
        drop = np.nonzero(sizes <= 2)[0]
        keep = ~np.isin(y, drop)
        X, y = X[keep], np.unique(y[keep], return_inverse=True)[1]
        dropped = ", ".join(str(names[c]) if names is not None else str(c) for c in drop)
        note = f"classes of 2 objects dropped ({dropped}) as in the review's 332 x 6"
    elif name == "ecoli336":
        note = "shared copy as is (8 classes incl. two of 2 objects)"
    elif name == "dermatology":
        keep = ~missing.any(1)
        X, y = X[keep], y[keep]
        note = f"{int((~keep).sum())} rows with missing Age dropped (the review's 358 rows)"
    return np.ascontiguousarray(X), y, note


def parse_seeds(spec):
    """``N`` -> 0..N-1; ``a-b`` -> a..b inclusive; ``a,b,c`` -> those seeds."""
    try:
        if "," in spec:
            seeds = [int(s) for s in spec.split(",") if s.strip()]
        elif "-" in spec:
            low, high = (int(s) for s in spec.split("-"))
            seeds = list(range(low, high + 1))
        else:
            seeds = list(range(int(spec)))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds must be N, a-b or a,b,c; got {spec!r}") from None
    if not seeds or min(seeds) < 0:
        raise argparse.ArgumentTypeError(f"--seeds must give at least one seed >= 0; got {spec!r}")
    return seeds




def machine_line(n_threads):
    from cclust._ext import _contingency
    from cclust.validation import check_n_jobs

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return (f"{cpu_model()}, {os.cpu_count()} logical cores ({usable} usable), OpenMP "
            f"{'on' if _contingency.openmp_enabled() else 'off'}, cclust threads "
            f"{check_n_jobs(n_threads)}; Python {platform.python_version()}, NumPy {np.__version__}, "
            f"cclust {cclust.__version__}; load average at start {load}")


def run_dataset(name, X, y, seeds, k_range_mode, n_threads, log, init="random"):
    """ARI, seconds, iterations and warnings for every (seed, utility) of one dataset."""
    K = int(len(np.unique(y)))
    k_range = (2, 2 * K) if k_range_mode == "review" else None
    ari = cclust.get("ari")
    n_u = len(KCC_UTILITIES)
    out = {
        "K": K,
        "ari": np.empty((len(seeds), n_u)),
        "seconds": np.empty((len(seeds), n_u)),
        "n_iter": np.empty((len(seeds), n_u), dtype=np.int64),
        "not_converged": np.zeros(n_u, dtype=np.int64),
        "warnings": [],
        "gen_seconds": np.empty(len(seeds)),
    }
    for s_idx, seed in enumerate(seeds):
        start = time.perf_counter()
        ensemble = cclust.generate("kmeans", X, K, n_partitions=100, k_range=k_range, random_state=seed,
                                   n_jobs=n_threads)
        out["gen_seconds"][s_idx] = time.perf_counter() - start
        for u_idx, (label, utility, p) in enumerate(KCC_UTILITIES):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                start = time.perf_counter()
                res = cclust.consensus("kcc", ensemble, K, utility=utility, p=p, init=init,
                                       random_state=seed, n_jobs=n_threads)
                out["seconds"][s_idx, u_idx] = time.perf_counter() - start
            for w in caught:
                out["warnings"].append(f"{label} seed {seed}: {w.category.__name__}: {w.message}")
                if issubclass(w.category, ConvergenceWarning):
                    out["not_converged"][u_idx] += 1
            out["ari"][s_idx, u_idx] = ari(y, res.labels)
            out["n_iter"][s_idx, u_idx] = res.n_iter
        print(f"  {name} seed {seed}: generation {out['gen_seconds'][s_idx]:.2f} s, KCC "
              f"{out['seconds'][s_idx].sum():.2f} s for {n_u} utilities", file=log, flush=True)
    return out


def fmt(x, digits=4):
    return f"{x:.{digits}f}"


def rn_table(results, names, columns):
    """Layout of Becerra Tomé's Table 4 or 5: per dataset rows Original / Results / ours / in-range."""
    labels = [KCC_UTILITIES[c][0] for c in columns]
    lines = ["| dataset | row | " + " | ".join(labels) + " |",
             "| --- | --- | " + " | ".join("---:" for _ in labels) + " |"]
    for name in names:
        r = results[name]
        ari = r["ari"]
        ddof = 1 if ari.shape[0] > 1 else 0
        orig = [fmt(PUBLISHED[name][c][0]) for c in columns]
        rev = [fmt(PUBLISHED[name][c][1]) for c in columns]
        ours = [f"**{fmt(ari[:, c].mean())}** ± {fmt(ari[:, c].std(ddof=ddof))}" for c in columns]
        spread = [f"{fmt(ari[:, c].min(), 3)}–{fmt(ari[:, c].max(), 3)}" for c in columns]
        inside = []
        for c in columns:
            low, high = ari[:, c].min(), ari[:, c].max()
            tags = [t for t, v in (("O", PUBLISHED[name][c][0]), ("R", PUBLISHED[name][c][1]))
                    if low - 5e-5 <= v <= high + 5e-5]
            inside.append(" ".join(tags) or "–")
        lines.append(f"| {name} | Original (Wu et al. 2015) | " + " | ".join(orig) + " |")
        lines.append("|  | Results (Becerra Tomé) | " + " | ".join(rev) + " |")
        lines.append(f"|  | ours, mean ± sd ({ari.shape[0]} seeds) | " + " | ".join(ours) + " |")
        lines.append("|  | ours, min–max | " + " | ".join(spread) + " |")
        lines.append("|  | published value inside our min–max | " + " | ".join(inside) + " |")
    return lines


def time_table(results, names):
    lines = ["| dataset | n x d, K | generation of 100 BPs (s) | KCC Uc per run (s) | KCC per run, "
             "all 10 utilities (s) | Wu et al. 2015, Uc (s) | Becerra Tomé, Uc (s) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for name in names:
        r = results[name]
        orig, rev = PUBLISHED_TIME[name]
        lines.append(f"| {name} | {r['shape'][0]} x {r['shape'][1]}, {r['K']} | {r['gen_seconds'].mean():.3f} | "
                     f"{r['seconds'][:, 0].mean():.3f} | {r['seconds'].mean():.3f} | {orig:.2f} | {rev:.2f} |")
    return lines


def iteration_table(results, names):
    labels = [u[0] for u in KCC_UTILITIES]
    lines = ["| dataset | " + " | ".join(labels) + " |", "| --- | " + " | ".join("---:" for _ in labels) + " |"]
    for name in names:
        r = results[name]
        cells = []
        for c in range(len(labels)):
            stuck = int((r["n_iter"][:, c] == 0).sum())
            cells.append(f"{r['n_iter'][:, c].mean():.1f} ({stuck})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS),
                        choices=list(DATASETS) + list(EXTRA_DATASETS), metavar="NAME",
                        help=f"datasets to run (default: {' '.join(DATASETS)}; also {' '.join(EXTRA_DATASETS)})")
    parser.add_argument("--seeds", type=parse_seeds, default=parse_seeds("10"),
                        help="N (seeds 0..N-1), a-b (inclusive) or a,b,c; default 10")
    parser.add_argument("--k-range", choices=("review", "authors"), default="review",
                        help="K_i of the basic partitions: the review's [2, 2K] (Wu et al.'s protocol as "
                             "Becerra Tomé repeats it; default) or the KCC authors' [K, ceil(sqrt(n))]")
    parser.add_argument("--init", choices=("random", "k-means++"), default="random",
                        help="KCC's start: K random objects as in the review (default here) or k-means++ "
                             "(KCC++ of Li & Liu 2018, the library's default)")
    parser.add_argument("--n-threads", type=int, default=None,
                        help="threads for generation and KCC (default: every usable core)")
    parser.add_argument("--data-dir", default=DEFAULT_DATA, help=f"dataset directory (default {DEFAULT_DATA})")
    parser.add_argument("--output", help="also write the Markdown report to this file")
    args = parser.parse_args(argv)

    machine = machine_line(args.n_threads)
    names = list(dict.fromkeys(args.datasets))
    results = {}
    total_start = time.perf_counter()
    for name in names:
        X, y, note = load_dataset(name, args.data_dir)
        r = run_dataset(name, X, y, args.seeds, args.k_range, args.n_threads, sys.stderr, args.init)
        r["shape"], r["note"] = X.shape, note
        results[name] = r
    total = time.perf_counter() - total_start

    command = "python benchmarks/reproduce_kcc.py " + " ".join(argv if argv is not None else sys.argv[1:])
    seeds = args.seeds
    seed_text = f"{seeds[0]}..{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ",".join(map(str, seeds))
    k_text = "K_i uniform on [2, 2K] (Becerra Tomé, sec. 2)" if args.k_range == "review" else \
        "K_i uniform on [K, ceil(sqrt(n))] (the KCC authors' default, NOT the review's protocol)"
    out = [
        f"Basic partitions: 100 k-means runs (one initialisation, k-means++ seeding), {k_text}; "
        f"KCC with n_init=10, init={args.init!r}; generation and KCC both seeded with s, seeds {seed_text}. "
        "Rn = ARI against the classes; sd is the sample standard deviation over seeds.",
        "",
        "Data:",
        "",
        "| dataset | n x d | K | preparation |",
        "| --- | --- | ---: | --- |",
    ]
    out += [f"| {n} | {results[n]['shape'][0]} x {results[n]['shape'][1]} | {results[n]['K']} | "
            f"{results[n]['note']} |" for n in names]
    out += ["", "**Becerra Tomé's Table 4 (U forms).** Rn; O/R in the last row of a dataset: the review's "
            "Original (Wu et al. 2015) / Results (Becerra Tomé) value lies within the range of our seeds.", ""]
    out += rn_table(results, names, range(0, 5))
    out += ["", "**Becerra Tomé's Table 5 (NU forms).**", ""]
    out += rn_table(results, names, range(5, 10))
    out += ["", "**Times** (means over seeds; wall clock, this machine). Becerra Tomé's Table 3 gives one "
            "time per dataset for KCC with Uc, Original (Wu et al. 2015) and Results (the review's), "
            "hardware not stated.", ""]
    out += time_table(results, names)
    out += ["", "**Lloyd iterations of the kept restart** (mean over seeds; in brackets the number of "
            "seeds whose kept restart ended on its nearest-seed start partition, n_iter = 0).", ""]
    out += iteration_table(results, names)
    notes = [(n, w) for n in names for w in results[n]["warnings"]]
    out += ["", f"Warnings: {len(notes)}" + ("" if not notes else ":")]
    out += [f"- {n}: {w}" for n, w in notes[:50]]
    if len(notes) > 50:
        out.append(f"- ... and {len(notes) - 50} more")
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    out += ["", f"Machine: {machine}; at end {load}.", "", f"Total wall time: {total:.1f} s.", "",
            f"Command: `{command.strip()}`", ""]
    text = "\n".join(out)
    write_report(text, args.output)


if __name__ == "__main__":
    main()
