"""cclust's own Mt-KaHyPar configurations for HGPA, written to a file once per process.

Mt-KaHyPar's Python interface takes a configuration either as one of its presets or as a file
of ``key=value`` lines (``Initializer.context_from_file``), and a file must name every
parameter: nothing is inherited from a preset. The two configurations here are Mt-KaHyPar's
deterministic algorithms throughout (deterministic community detection, coarsening, initial
partitioning, Jet refinement and rebalancing), so the partition depends on the hypergraph alone,
never on the number of threads. They differ from Mt-KaHyPar's ``DETERMINISTIC_QUALITY`` preset
in one parameter, and ``cclust_fast`` in four more:

* **Coarsening stops at 40 K vertices instead of 160 K** (``c-t``). A consensus hypergraph has
  few, very large hyperedges (letter: 2,600 hyperedges of 770 objects on average, 2 million
  pins), and initial partitioning on a 160 K-vertex coarse hypergraph costs a third of the run
  (Mt-KaHyPar's own timers, plain deterministic preset: 1.4 of 4.2 s); on a 40 K-vertex one it
  costs a seventh. Letter, objects merged as HGPA does, three vertex numberings, idle machine:
  6.7 s of CPU against 8.8 s, cut 2,266,000 against 2,279,000, ARI 0.096 against 0.088.
* ``cclust_fast`` also turns the deterministic flow refinement off (3.8 s of CPU on the same
  runs, the same ARI). Flows are what move a whole large natural cluster into one part when
  ``imbalance`` allows it (a local search cannot: no single move uncuts a hyperedge).
* ``cclust_fast`` ignores hyperedges of more than 300 vertices when rating contractions
  (``maxnet-ignore``, 1000 in the presets) and makes 10 initial-partitioning runs instead of 20.
  A large cluster says little about which two of its objects belong together, and rating it
  costs its size squared. On the hypergraph HGPA hands over (large clusters already left out),
  with 5 vertex numberings: letter 1.11 s → 0.75 s for a cut 0.5% larger; birch1 (K = 100)
  1.91 s → 1.81 s, cut 0.7% larger; digits 0.075 s → 0.050 s, same cut
  (``benchmarks/bench_hgpa_configs.py``).
* ``cclust_fast`` runs one round of Jet refinement instead of three (``r-jet-dynamic-rounds``;
  the later rounds repeat Jet with smaller negative-gain factors). On letter and pendigits
  (r = 100, seeds 0-9) the labels are bit-identical, at about 10% less CPU on letter
  (1.16 → 1.05 s median, under load). On eleven smaller sets (5 seeds, both ``sizes``) 66 of
  110 results are identical and the summed mean cut is 0.13 lower; the largest loss is
  dermatology, 1.0% larger cut, the largest gain optdigits, 0.5% smaller
  (``benchmarks/bench_hgpa_cpu.py``, docs/benchmarks.md).
* Rejected on the same runs: 5 or 3 initial-partitioning runs instead of 10 (letter cut 0.2%
  larger, ARI 0.107 → 0.105 and 0.103; pendigits cut 0.9% and 2.1% larger), one coarsening
  sub-round instead of three (no faster, cut 0.6% larger on letter) and one FM round in
  initial partitioning (letter cut 0.2% larger).
"""
import atexit
import hashlib
import os
import shutil
import tempfile
import threading

# One entry per Mt-KaHyPar parameter (the names of its .ini files, version 1.5 to 1.7).
_COMMON = {
    # general
    "mode": "direct",
    "preset-type": "deterministic_quality",
    "deterministic": "true",
    "maxnet-removal-factor": "0.01",
    "smallest-maxnet-threshold": "50000",
    "maxnet-ignore": "1000",
    "num-vcycles": "0",
    "s-use-localized-random-shuffle": "false",
    "s-static-balancing-work-packages": "128",
    "p-stable-io": "true",
    # community detection before coarsening (deterministic Louvain)
    "p-enable-community-detection": "true",
    "p-louvain-edge-weight-function": "hybrid",
    "p-max-louvain-pass-iterations": "5",
    "p-louvain-min-vertex-move-fraction": "0.01",
    "p-vertex-degree-sampling-threshold": "200000",
    "p-louvain-low-memory-contraction": "true",
    "p-num-sub-rounds": "16",
    # coarsening: stop at c-t * K vertices (160 in Mt-KaHyPar's presets)
    "c-type": "deterministic_multilevel_coarsener",
    "c-use-adaptive-edge-size": "false",
    "c-resolve-swaps": "true",
    "c-min-shrink-factor": "1.01",
    "c-max-shrink-factor": "2.5",
    "c-s": "1",
    "c-t": "40",
    "c-vertex-degree-sampling-threshold": "200000",
    "c-num-sub-rounds": "3",
    "c-rating-score": "heavy_edge",
    "c-rating-heavy-node-penalty": "no_penalty",
    "c-rating-acceptance-criterion": "best_prefer_unmatched",
    # initial partitioning by recursive bipartitioning, 20 runs, deterministic label propagation
    "i-mode": "rb",
    "i-runs": "20",
    "i-use-adaptive-ip-runs": "false",
    "i-perform-refinement-on-best-partitions": "false",
    "i-remove-degree-zero-hns-before-ip": "true",
    "i-fm-refinement-rounds": "3",
    "i-lp-maximum-iterations": "20",
    "i-lp-initial-block-size": "5",
    "i-population-size": "64",
    "i-r-refine-until-no-improvement": "false",
    "i-r-rebalancer-type": "deterministic",
    "i-r-lp-type": "deterministic",
    "i-r-lp-maximum-iterations": "5",
    "i-r-sync-lp-sub-rounds": "1",
    "i-r-lp-he-size-activation-threshold": "100",
    "i-r-sync-lp-active-nodeset": "true",
    "i-r-fm-type": "do_nothing",
    # refinement: deterministic Jet, then (cclust only) deterministic flows
    "r-refine-until-no-improvement": "false",
    "r-rebalancer-type": "deterministic",
    "r-max-det-rebalancing-rounds": "0",
    "r-det-rebalancing-deadzone": "0.1",
    "r-det-rebalancing-heavy-vertex-exclusion": "1.5",
    "r-lp-type": "do_nothing",
    "r-lp-maximum-iterations": "5",
    "r-sync-lp-sub-rounds": "1",
    "r-lp-he-size-activation-threshold": "100",
    "r-sync-lp-active-nodeset": "true",
    "r-jet-type": "deterministic",
    "r-jet-num-iterations": "8",
    "r-jet-relative-improvement-threshold": "0.001",
    "r-jet-dynamic-rounds": "3",
    "r-jet-initial-negative-gain": "0.75",
    "r-jet-final-negative-gain": "0.0",
    "r-fm-type": "do_nothing",
    "r-flow-algo": "deterministic",
    "r-flow-scaling": "16",
    "r-flow-max-num-pins": "4294967295",
    "r-flow-find-most-balanced-cut": "true",
    "r-flow-determine-distance-from-cut": "true",
    "r-flow-max-bfs-distance": "2",
    "r-flow-min-relative-improvement-per-round": "0.001",
    "r-flow-time-limit-factor": "8",
    "r-flow-skip-small-cuts": "true",
    "r-flow-skip-unpromising-blocks": "true",
    "r-flow-pierce-in-bulk": "true",
    "r-flow-process-mapping-policy": "lower_bound",
}

#: cclust's configurations by preset name: parameter -> value.
CONFIGS = {
    "cclust": dict(_COMMON),
    "cclust_fast": {**_COMMON, "r-flow-algo": "do_nothing", "maxnet-ignore": "300", "i-runs": "10",
                    "r-jet-dynamic-rounds": "1"},
}

_lock = threading.Lock()
_folder = None
_paths = {}


def config_text(name):
    """The .ini text of configuration ``name`` (one ``key=value`` line per parameter)."""
    return "".join(f"{key}={value}\n" for key, value in CONFIGS[name].items())


def config_path(name):
    """The path of a file holding configuration ``name`` as :data:`CONFIGS` has it now,
    written on first use in a private temporary directory removed when the interpreter exits
    (one file per distinct text, so a changed configuration gets its own file)."""
    global _folder
    text = config_text(name)
    with _lock:
        path = _paths.get(text)
        # Written again if it went missing: a forked child that exits normally runs this
        # process's atexit cleanup too.
        if path is None or not os.path.exists(path):
            if _folder is None or not os.path.isdir(_folder):
                _folder = tempfile.mkdtemp(prefix="cclust-hypergraph-")
                atexit.register(shutil.rmtree, _folder, ignore_errors=True)
            digest = hashlib.sha1(text.encode("ascii")).hexdigest()[:12]
            path = os.path.join(_folder, f"{name}-{digest}.ini")
            with open(path, "w", encoding="ascii") as handle:
                handle.write(text)
            _paths[text] = path
        return path
