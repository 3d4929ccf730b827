"""HGPA's Mt-KaHyPar configuration, varied one parameter at a time, on the hypergraphs HGPA hands over.

Each variant overrides parameters of cclust's ``cclust_fast`` configuration (the one HGPA's
default ``preset="auto"`` runs at ``imbalance=0.05``; see ``cclust_hypergraph/_config.py``) and
runs ``hgpa`` on the cached r = 100 k-means ensembles of ``bench_graph.py`` (digits, letter,
birch1), once per seed; seed s draws the vertex numbering (``random_state=s``). Reported: the
median seconds of the ``hgpa`` call, the mean objective (weighted hyperedge cut, lower is better)
and the mean ARI against the classes. The first variant, ``shipped``, is the configuration as
it is.

    python benchmarks/bench_hgpa_configs.py --data letter birch1 digits --seeds 5 \\
        "20runs-maxnet1000:i-runs=20,maxnet-ignore=1000" "10runs:i-runs=10,maxnet-ignore=1000" \\
        "maxnet300:i-runs=20,maxnet-ignore=300" "maxnet200:maxnet-ignore=200"

Needs the cclust-hypergraph plugin (``pip install ./plugins/cclust-hypergraph``).
"""
import argparse
import os
import sys
import time

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cclust  # noqa: E402
from cclust.metrics import ari  # noqa: E402
from _common import write_report  # noqa: E402
from bench_graph import ensemble, load, parse_method  # noqa: E402

SIZES = {"digits": 1797, "letter": 20000, "birch1": 100000}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", metavar="NAME:KEY=VALUE,...")
    parser.add_argument("--data", nargs="*", default=["letter", "birch1", "digits"], choices=sorted(SIZES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cache", default="/tmp", help="where bench_graph.py caches its ensembles")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    import cclust_hypergraph
    from cclust_hypergraph import _config

    shipped = dict(_config.CONFIGS["cclust_fast"])
    # Values stay strings, as in Mt-KaHyPar's .ini files.
    variants = [("shipped", {})] + [parse_method(spec, typed=False) for spec in args.variants]
    for name, change in variants:
        unknown = set(change) - set(shipped)
        if unknown:
            parser.error(f"variant {name!r}: unknown Mt-KaHyPar parameter(s) {sorted(unknown)}")
    lines = [f"Command: `python benchmarks/bench_hgpa_configs.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
             f"{args.seeds} seeds (vertex numberings); median seconds of the hgpa call / mean objective / mean ARI.", "",
             "| data (n, K) | " + " | ".join(name for name, _ in variants) + " |",
             "|---|" + "---|" * len(variants)]
    try:
        for data in args.data:
            name, X, y = load(SIZES[data])
            k = int(y.max()) + 1
            labels = np.asarray(ensemble(name, X, k, 100, args.cache).labels)
            cclust_hypergraph.hgpa(labels[:500], k, random_state=0)  # Mt-KaHyPar's one-off start-up
            cells = []
            for variant, change in variants:
                _config.CONFIGS["cclust_fast"] = {**shipped, **change}
                seconds, objective, score = [], [], []
                for seed in range(args.seeds):
                    E = cclust.Ensemble(labels)
                    start = time.perf_counter()
                    result = cclust_hypergraph.hgpa(E, k, preset="cclust_fast", random_state=seed)
                    seconds.append(time.perf_counter() - start)
                    objective.append(result.objective)
                    score.append(ari(result.labels, y))
                cells.append(f"{np.median(seconds):.3f} s / {np.mean(objective):.2f} / {np.mean(score):.4f}")
                print(data, variant, cells[-1], flush=True)
            lines.append(f"| {name} ({len(y)}, {k}) | " + " | ".join(cells) + " |")
    finally:
        _config.CONFIGS["cclust_fast"] = shipped
    write_report("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
