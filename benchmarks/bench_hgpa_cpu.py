"""HGPA's CPU time, per call and per stage, on letter and pendigits (issue 22, item 3).

Runs ``hgpa`` (plugin cclust-hypergraph) on the cached r = 100 k-means ensembles of
``bench_graph.py`` (letter: n = 20,000, K = 26; pendigits: n = 10,992, K = 10, from
``../shared/data``), seeds 0 to ``--seeds - 1`` (``random_state=seed``: the vertex numbering),
for every ``--sizes`` setting, and reports per setting: median CPU and wall seconds of the call
(CPU = ``time.process_time``, all threads of this process), mean ARI against the classes, mean
objective (weighted hyperedge cut, lower is better), how often the "estimated" cut was kept,
and the CPU/wall seconds of every stage (the hypergraph build, each Mt-KaHyPar call, the size
estimate and its METIS call, the choice between the two cuts), plus the load average.

    python benchmarks/bench_hgpa_cpu.py --data letter pendigits --seeds 10 --sizes equal auto
    CCLUST_NUM_THREADS=1 python benchmarks/bench_hgpa_cpu.py --data letter --seeds 3

Variants override parameters of the ``cclust_fast`` configuration (HGPA's default at
``imbalance=0.05``), as in ``bench_hgpa_configs.py``: ``"5runs:i-runs=5"``.
The ClusterEnsembles figure to compare with on letter is the one measured by
``bench_graph.py`` (10.58 s CPU, docs/benchmarks.md); it is not run here.
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
import cclust.graph  # noqa: E402
from cclust.metrics import ari  # noqa: E402
from _common import write_report  # noqa: E402
from bench_graph import DATA, ensemble, load, parse_method  # noqa: E402


def load_data(name, cache):
    if name == "letter":
        _, X, y = load(20000)
    else:
        path = os.path.join(os.path.dirname(DATA), f"{name}.npz")
        with np.load(path, allow_pickle=False) as z:
            X, y = np.array(z["X"], dtype=np.float64), np.array(z["y"], dtype=np.int64)
    k = int(y.max()) + 1
    return np.asarray(ensemble(name, X, k, 100, cache).labels), y, k


class StageClock:
    """CPU and wall seconds of the stages of one hgpa call, by wrapping the functions it calls."""

    def __init__(self):
        self.times = {}

    def record(self, key, fn):
        def wrapped(*args, **kwargs):
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.times.setdefault(key, []).append((time.process_time() - cpu, time.perf_counter() - wall))
        return wrapped


def install(clock):
    """Wrap the stage functions (in the modules that look them up) and Mt-KaHyPar's calls."""
    import cclust_hypergraph as ch

    g = cclust.graph
    g.estimate_clusters = clock.record("size estimate", g.estimate_clusters)
    g.partition_bipartite_groups = clock.record("  of it METIS", g.partition_bipartite_groups)
    g.choose_sizes = clock.record("choose (separated co-association)", g.choose_sizes)
    ch.build_hypergraph = clock.record("hypergraph build", ch.build_hypergraph)
    real = ch._mtkahypar

    class Hypergraph:
        def __init__(self, h):
            self.h = h

        def partition(self, context):
            return clock.record("Mt-KaHyPar partition", self.h.partition)(context)

    class Initializer:
        def __init__(self, init):
            self.init = init

        def __getattr__(self, name):
            return getattr(self.init, name)

        def create_hypergraph(self, *args):
            return Hypergraph(clock.record("Mt-KaHyPar create", self.init.create_hypergraph)(*args))

    def patched():
        mtk, init = real()
        return mtk, Initializer(init)

    ch._mtkahypar = patched


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", metavar="NAME:KEY=VALUE,...")
    parser.add_argument("--data", nargs="*", default=["letter", "pendigits"], choices=["letter", "pendigits"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--sizes", nargs="*", default=["equal", "auto"], choices=["equal", "auto", "estimated"])
    parser.add_argument("--cache", default="/tmp", help="where bench_graph.py caches its ensembles")
    parser.add_argument("--stages", action="store_true", help="time every stage (adds a little overhead)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    import cclust_hypergraph
    from cclust_hypergraph import _config

    clock = StageClock()
    if args.stages:
        install(clock)
    shipped = dict(_config.CONFIGS["cclust_fast"])
    variants = [("shipped", {})] + [parse_method(spec, typed=False) for spec in args.variants]
    for name, change in variants:
        if set(change) - set(shipped):
            parser.error(f"variant {name!r}: unknown Mt-KaHyPar parameter(s) {sorted(set(change) - set(shipped))}")
    threads = os.environ.get("CCLUST_NUM_THREADS", "all")
    lines = [f"Command: `python benchmarks/bench_hgpa_cpu.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
             f"CCLUST_NUM_THREADS={threads}; seeds 0-{args.seeds - 1}; median CPU / wall seconds of the hgpa call; "
             "mean ARI; mean objective (hyperedge cut); runs keeping the estimated cut.", "",
             "| data (n, K) | sizes | variant | CPU s | wall s | ARI | cut | estimated kept | load average |",
             "|---|---|---|---|---|---|---|---|---|"]
    stage_lines = []
    try:
        for data in args.data:
            labels, y, k = load_data(data, args.cache)
            cclust_hypergraph.hgpa(labels[:500], k, random_state=0)  # Mt-KaHyPar's one-off start-up
            for sizes in args.sizes:
                for variant, change in variants:
                    _config.CONFIGS["cclust_fast"] = {**shipped, **change}
                    cpu, wall, score, cut, kept = [], [], [], [], 0
                    clock.times.clear()
                    load_before = os.getloadavg()[0]
                    for seed in range(args.seeds):
                        E = cclust.Ensemble(labels)
                        c0, w0 = time.process_time(), time.perf_counter()
                        result = cclust_hypergraph.hgpa(E, k, sizes=sizes, random_state=seed)
                        cpu.append(time.process_time() - c0)
                        wall.append(time.perf_counter() - w0)
                        score.append(ari(result.labels, y))
                        cut.append(result.objective)
                        kept += result.extras["sizes_used"] == "estimated"
                    load_after = os.getloadavg()[0]
                    row = (f"| {data} ({len(y)}, {k}) | {sizes} | {variant} | {np.median(cpu):.3f} | "
                           f"{np.median(wall):.3f} | {np.mean(score):.4f} ± {np.std(score):.4f} | {np.mean(cut):.3f} | "
                           f"{kept}/{args.seeds} | {load_before:.1f}-{load_after:.1f} |")
                    lines.append(row)
                    print(row, flush=True)
                    for key, values in clock.times.items():
                        values = np.asarray(values)
                        stage_lines.append(f"| {data} | {sizes} | {variant} | {key} | {len(values) / args.seeds:.1f} | "
                                           f"{values[:, 0].sum() / args.seeds:.3f} | {values[:, 1].sum() / args.seeds:.3f} |")
    finally:
        _config.CONFIGS["cclust_fast"] = shipped
    if stage_lines:
        lines += ["", "Stages, per hgpa call (mean over the seeds):", "",
                  "| data | sizes | variant | stage | calls | CPU s | wall s |", "|---|---|---|---|---|---|---|"]
        lines += stage_lines
    write_report("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
