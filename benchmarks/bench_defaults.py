"""Default starts of the iterative consensus methods against the papers' starts (ARI).

Every method is run twice on the same ensemble: with the papers' start (``kcc`` and
``wokmeans``: ``init="random"``, K random objects; ``ivc``, ``ipvc``, ``ipc``, ``em-mixture``,
``voting``: ``init="partitions"``, a base partition cut to its K largest clusters) and with
cclust's default (``init="k-means++"``). ``best`` is run with K requested (it used to refuse
when no member has K clusters; "refused" counts those cases), and ``gkcc`` with its defaults.
Ensembles: ``cclust.generate("kmeans", X, K, n_partitions=100, random_state=s)`` (default
K_i in [K, sqrt(n)]); consensus ``random_state=s``. Prints Markdown: mean ARI over the seeds
(and the minimum) per scenario::

    python benchmarks/bench_defaults.py --suite blobs --output /tmp/defaults.md
    python benchmarks/bench_defaults.py --suite issue real

Suites:

* ``issue``: ``make_blobs(n, n_features=8, centers=5, random_state=0)``, n = 5,000 and
  20,000, seed 0 (em-mixture at 20,000 takes about a minute).
* ``blobs``: n = 2,000, K = 3, 5, 10, balanced and unbalanced (one blob holding 5 times the
  objects of each other), blob and ensemble seeds 0..4.
* ``real``: bundled iris and wine, and the shared wdbc, ecoli, segment, yeast (standardised),
  K = number of classes, seeds 0..4.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout: use the tree this script lives in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cclust  # noqa: E402
from cclust.errors import ConvergenceWarning, ValidationError  # noqa: E402
from cclust.metrics import ari  # noqa: E402
from _common import cpu_model, write_report

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))

# (column label, method, parameters)
VARIANTS = (
    ("kcc random", "kcc", {"init": "random"}),
    ("kcc k-means++", "kcc", {"init": "k-means++"}),
    ("ivc partitions", "ivc", {"init": "partitions"}),
    ("ivc k-means++", "ivc", {"init": "k-means++"}),
    ("ipvc partitions", "ipvc", {"init": "partitions"}),
    ("ipvc k-means++", "ipvc", {"init": "k-means++"}),
    ("ipc partitions", "ipc", {"init": "partitions"}),
    ("ipc k-means++", "ipc", {"init": "k-means++"}),
    ("em partitions", "em-mixture", {"init": "partitions"}),
    ("em k-means++", "em-mixture", {"init": "k-means++"}),
    ("voting partitions", "voting", {"init": "partitions"}),
    ("voting k-means++", "voting", {"init": "k-means++"}),
    ("wokmeans random", "wokmeans", {"init": "random"}),
    ("wokmeans k-means++", "wokmeans", {"init": "k-means++"}),
    ("best", "best", {}),
    ("gkcc", "gkcc", {}),
)
NEEDS_X = ("wokmeans", "gkcc")


def unbalanced_blobs(n, k, seed, ratio=5):
    """k blobs, the first holding ``ratio`` times the objects of each other one."""
    from sklearn.datasets import make_blobs

    small = n // (ratio + k - 1)
    sizes = [n - small * (k - 1)] + [small] * (k - 1)
    return make_blobs(sizes, n_features=8, random_state=seed)


def scenarios(suite, data_dir):
    """(name, seeds, loader(seed) -> (X, y, K)) of a suite."""
    from sklearn.datasets import make_blobs

    if suite == "issue":
        for n in (5000, 20000):
            yield (f"blobs n={n} K=5", [0],
                   lambda s, n=n: (*make_blobs(n, n_features=8, centers=5, random_state=0), 5))
    elif suite == "blobs":
        for k in (3, 5, 10):
            yield (f"blobs n=2000 K={k}", range(5),
                   lambda s, k=k: (*make_blobs(2000, n_features=8, centers=k, random_state=s), k))
            yield (f"unbalanced n=2000 K={k}", range(5), lambda s, k=k: (*unbalanced_blobs(2000, k, s), k))
    elif suite == "real":
        from cclust.datasets import load_iris, load_wine

        def standard(X):
            sd = X.std(0)
            return (X - X.mean(0)) / np.where(sd > 0, sd, 1)

        for name, loader in (("iris", load_iris), ("wine", load_wine)):
            yield (name, range(5), lambda s, loader=loader: _with_k(standard(loader()[0]), loader()[1]))
        for name in ("wdbc", "ecoli", "segment", "yeast"):
            path = os.path.join(data_dir, f"{name}.npz")
            if os.path.exists(path):
                yield (name, range(5), lambda s, path=path: _with_k(standard(np.load(path)["X"]),
                                                                   np.load(path)["y"]))


def _with_k(X, y):
    return X, y, int(np.unique(y).shape[0])


def run(suites, data_dir, variants, n_threads, only=None, n_seeds=None):
    rows = []
    for suite in suites:
        for name, seeds, load in scenarios(suite, data_dir):
            if only and name not in only:
                continue
            seeds = seeds if n_seeds is None else list(seeds)[:n_seeds]
            scores = {label: [] for label, _, _ in variants}
            refused = 0
            seconds = {label: 0.0 for label, _, _ in variants}
            for s in seeds:
                X, y, k = load(s)
                E = cclust.generate("kmeans", X, k, n_partitions=100, random_state=s)
                refused += k not in E.n_clusters.tolist()   # best refused these before it took the closest K
                for label, method, params in variants:
                    extra = {"X": X} if method in NEEDS_X else {}
                    if method not in ("best", "gkcc", "wokmeans", "em-mixture") and n_threads:
                        extra["n_jobs"] = n_threads
                    t0 = time.perf_counter()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", ConvergenceWarning)
                            res = cclust.consensus(method, E, k, random_state=s, **params, **extra)
                    except ValidationError:
                        continue
                    seconds[label] += time.perf_counter() - t0
                    scores[label].append(ari(y, res.labels))
            rows.append((name, len(list(seeds)), scores, seconds, refused))
            print(f"done {name}: " + ", ".join(f"{lab} {np.mean(v):.3f}" for lab, v in scores.items() if v),
                  file=sys.stderr, flush=True)
    return rows


def report(rows, variants, argv):
    labels = [label for label, _, _ in variants]
    lines = ["# Default starts against the papers' starts (ARI against the classes)", "",
             f"Command: `python benchmarks/bench_defaults.py {' '.join(argv)}`; CPU: {cpu_model()}.",
             "Cells: mean ARI over the seeds (minimum in brackets). \"no member at K\": seeds whose "
             "ensemble has no member with K clusters, where `best` used to refuse.", "",
             "| scenario | seeds | " + " | ".join(labels) + " | no member at K |",
             "|---|---|" + "---|" * (len(labels) + 1)]
    for name, n_seeds, scores, _, refused in rows:
        cells = [f"{np.mean(v):.3f} ({np.min(v):.2f})" if v else "-" for v in (scores[lab] for lab in labels)]
        lines.append(f"| {name} | {n_seeds} | " + " | ".join(cells) + f" | {refused} |")
    lines += ["", "Seconds per scenario (all seeds):", "",
              "| scenario | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for name, _, _, seconds, _ in rows:
        lines.append(f"| {name} | " + " | ".join(f"{seconds[lab]:.1f}" for lab in labels) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", nargs="+", choices=("issue", "blobs", "real"), default=["blobs"])
    parser.add_argument("--methods", nargs="+", default=None,
                        help="registry names to run (default: every method in the table)")
    parser.add_argument("--scenarios", nargs="+", default=None,
                        help='scenario names to run, e.g. "unbalanced n=2000 K=5" (default: all of the suites)')
    parser.add_argument("--seeds", type=int, default=None, help="first N seeds of each scenario only")
    parser.add_argument("--data-dir", default=DEFAULT_DATA)
    parser.add_argument("--n-threads", type=int, default=None)
    parser.add_argument("--output", help="also write the Markdown report to this file")
    args = parser.parse_args(argv)
    variants = [v for v in VARIANTS if args.methods is None or v[1] in args.methods]
    rows = run(args.suite, args.data_dir, variants, args.n_threads, args.scenarios, args.seeds)
    write_report(report(rows, variants, argv if argv is not None else sys.argv[1:]), args.output)


if __name__ == "__main__":
    main()
