"""LCE (Iam-On, Boongoen, Garrett & Price 2011): reproduction on the shared small UCI sets, and
time and memory at scale.

Modes::

    # LinkCluE's protocol (Iam-On & Garrett 2010, the package's example script): M = 10 k-means
    # clusterings with k = ceil(sqrt(N)) clusters each ("fixed k"), fused at the true number of
    # classes with DC = 0.9 (the paper's) by every similarity and consensus function
    python benchmarks/modern_lce.py --reproduce --runs 10

    # the protocol of Huang, Lai & Wang (2016, sec. 5), who run the weighted connected-triple
    # method of Iam-On et al. (2011) and the SimRank one as baselines: M = 10 members drawn from
    # their pools of 200 (bc_pool_<name>.mat shipped with their PTA/PTGP code, read as
    # benchmarks/modern_trajectories.py reads them), true K, average / complete / single linkage of
    # the refined matrix, NMI (max-normalised, theirs); their Table 9 (true-k) beside ours
    python benchmarks/modern_lce.py --pta-pools DIR --runs 10

    # time and peak memory at n = 20,000, r = 100
    python benchmarks/modern_lce.py --scale

    # side by side with the authors' MATLAB LinkCluE (Iam-On & Garrett 2010; their pure-MATLAB
    # cts / srs / asrs / stod, Octave's linkage and cluster) under GNU Octave, on the same label
    # matrices: pendigits subsamples, M = 10 k-means clusterings with k = ceil(sqrt(n)) each,
    # fused at K = 10 with DC = 0.9 and R = 5
    git --git-dir=<mirror of nejci/Pepelka> archive HEAD methods/LCE | tar -x -C /tmp/lce_authors
    python benchmarks/modern_lce.py --bench --authors /tmp/lce_authors --sizes 500 2000 5000

The Octave side runs ``benchmarks/octave_lce.m`` (our driver; their functions unchanged, from
``methods/LCE/orig``) once per (n, similarity), timing each step with Octave's tic/toc and
cputime. Their loops are interpreted and quadratic (SRS: R n^2 M^2), so ``--skip`` leaves out
the pairs that would not finish in ``--timeout`` seconds; a run that times out is reported as such.
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
from cclust.consensus_functions.link_based import lce
from cclust.metrics import ari, nmi

sys.path.insert(0, os.path.dirname(__file__))
from modern_weac import DATA, load as _load_sample, scale as _scale  # noqa: E402

DATASETS = ("iris", "wine", "glass", "ecoli", "breast", "segment")
#: The paper's decay factor and LinkCluE's SimRank iterations, passed to both sides.
DC, R = 0.9, 5
VARIANTS = [("cts", "spec"), ("cts", "average"), ("srs", "spec"), ("srs", "average"), ("asrs", "spec"),
            ("asrs", "average")]


def load(name):
    with np.load(os.path.join(DATA, f"{name}.npz"), allow_pickle=False) as f:
        return np.asarray(f["X"], dtype=np.float64), np.asarray(f["y"])


def reproduce(args):
    rows = []
    for name in args.datasets:
        t0 = time.perf_counter()
        X, y = load(name)
        n = X.shape[0]
        k = int(np.unique(y).shape[0])
        k_base = int(math.ceil(math.sqrt(n)))
        scores = {variant: [] for variant in VARIANTS}
        for run in range(args.runs):
            E = cclust.generate("kmeans", X, k_base, n_partitions=10, k_range=(k_base, k_base), random_state=run)
            for similarity, consensus in VARIANTS:
                labels = lce(E, k, similarity=similarity, consensus=consensus, random_state=run,
                             max_bytes=2**32).labels
                scores[(similarity, consensus)].append((nmi(labels, y), ari(labels, y)))
        for (similarity, consensus), values in scores.items():
            v = np.array(values)
            rows.append(f"| {name} | {n} | {similarity} | {consensus} | {v[:, 0].mean():.3f} ± {v[:, 0].std(ddof=1):.3f} "
                        f"| {v[:, 1].mean():.3f} ± {v[:, 1].std(ddof=1):.3f} |")
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print("| data | n | similarity | consensus | NMI ours | ARI ours |\n|---|---|---|---|---|---|")
    print("\n".join(rows))


#: Huang, Lai & Wang (2016), Table 9, true-k NMI (max-normalised), mean of 100 runs, no spread published:
#: the WCT-AL/CL/SL rows (Iam-On et al. 2011's weighted connected triple, cclust's similarity="cts") and
#: the SRS-AL/CL/SL rows (SimRank, similarity="srs"; N/A there past the five smaller sets).
TABLE9 = {
    ("cts", "average"): {"MF": 0.579, "IS": 0.606, "MNIST": 0.562, "ODR": 0.774, "LS": 0.603, "PD": 0.695,
                         "USPS": 0.533},
    ("cts", "complete"): {"MF": 0.546, "IS": 0.612, "MNIST": 0.529, "ODR": 0.741, "LS": 0.459, "PD": 0.621,
                          "USPS": 0.476},
    ("cts", "single"): {"MF": 0.247, "IS": 0.415, "MNIST": 0.002, "ODR": 0.132, "LS": 0.002, "PD": 0.015,
                        "USPS": 0.001},
    ("srs", "average"): {"MF": 0.584, "IS": 0.603, "MNIST": 0.557, "ODR": 0.772, "LS": 0.583},
    ("srs", "complete"): {"MF": 0.547, "IS": 0.585, "MNIST": 0.534, "ODR": 0.744, "LS": 0.453},
    ("srs", "single"): {"MF": 0.189, "IS": 0.358, "MNIST": 0.002, "ODR": 0.003, "LS": 0.001},
}


def pta_pools(args):
    from modern_trajectories import draw_ensembles, load_pool

    print(f"M = 10 members drawn from the authors' pools (seed 0), true K, {args.runs} runs; mean ± sd (ddof 1); "
          "Huang, Lai & Wang (2016) Table 9: mean of 100 runs. For the SRS rows also LinkCluE's approximate "
          "SimRank (similarity='asrs') on the same ensembles.\n")
    print("| data | n | similarity | linkage | NMI (max) ours | ARI ours | NMI (max) ours, asrs | NMI (max) published |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.pool_sets:
        members, gt = load_pool(args.pta_pools, name)
        k = int(np.unique(gt).shape[0])
        ensembles = draw_ensembles(members, args.runs, 10, 0)
        for (similarity, consensus), published in TABLE9.items():
            if name not in published:
                continue
            scores = {}
            for variant in (similarity, "asrs") if similarity == "srs" else (similarity,):
                v = []
                for run, L in enumerate(ensembles):
                    labels = lce(L, k, similarity=variant, consensus=consensus, random_state=run,
                                 max_bytes=2**33).labels
                    v.append((nmi(gt, labels, average="max"), ari(gt, labels)))
                scores[variant] = np.array(v)
            v = scores[similarity]
            approx = scores.get("asrs")
            approx = "" if approx is None else f"{approx[:, 0].mean():.3f} ± {approx[:, 0].std(ddof=1):.3f}"
            print(f"| {name} | {members.shape[0]} | {similarity} | {consensus} | {v[:, 0].mean():.3f} ± "
                  f"{v[:, 0].std(ddof=1):.3f} | {v[:, 1].mean():.3f} ± {v[:, 1].std(ddof=1):.3f} | {approx} | "
                  f"{published[name]:.3f} |", flush=True)


def _authors_dir(path):
    """The folder holding the authors' pure-MATLAB functions (``cts.m`` ...)."""
    for candidate in (os.path.join(path, "methods", "LCE", "orig"), os.path.join(path, "orig"), path):
        if os.path.isfile(os.path.join(candidate, "cts.m")):
            return os.path.abspath(candidate)
    raise SystemExit(f"no cts.m under {path}: extract methods/LCE of nejci/Pepelka there")


def _read_theirs(tmp, n_linkages, total):
    out = os.path.join(tmp, "out.csv")
    labels = np.loadtxt(out, delimiter=",", ndmin=2).astype(np.int64)
    heights = [np.loadtxt(f"{out}.Z{i + 1}") for i in range(n_linkages)]
    return labels, heights, np.loadtxt(out + ".time", ndmin=1), total


def _theirs(authors, L, k, similarity, linkages, timeout, results=None):
    """The authors' pipeline under Octave: labels (n x len(linkages)), their merge heights, the
    timers (similarity, stod, then each linkage: wall and CPU) and the Octave process's wall time.

    ``results``: a folder where an earlier Octave run of ``octave_lce`` left ``labels.csv`` and
    its outputs; they are read instead (the label matrix must be the same)."""
    if results is not None:
        if not np.array_equal(np.loadtxt(os.path.join(results, "labels.csv"), delimiter=",", dtype=np.int64), L + 1):
            raise SystemExit(f"{results}/labels.csv is not this run's label matrix")
        return _read_theirs(results, len(linkages), float("nan"))
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "labels.csv"), os.path.join(tmp, "out.csv")
        np.savetxt(inp, L + 1, fmt="%d", delimiter=",")
        cell = "{" + ", ".join(f"'{name}'" for name in linkages) + "}"
        script = (f"pkg load statistics; addpath('{authors}'); addpath('{here}'); "
                  f"octave_lce('{inp}', '{out}', {k}, '{similarity}', {DC}, {R}, {cell});")
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(["octave-cli", "--no-gui", "--eval", script], capture_output=True, text=True,
                                  timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            done = out + ".progress"
            return np.loadtxt(done, delimiter=",", ndmin=1) if os.path.exists(done) else None
        total = time.perf_counter() - t0
        if not os.path.exists(out + ".time"):
            print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
            raise SystemExit("the Octave run failed")
        return _read_theirs(tmp, len(linkages), total)


def _ties(heights, n_clusters):
    """Merge heights above 0 shared with another merge (to 1e-12), and the number of merges at the
    height of the first merge left out by the cut at n_clusters (1 = no tie at the cut)."""
    h = np.sort(np.asarray(heights))
    pos = h[h > 1e-12]
    same = np.abs(np.diff(pos)) <= 1e-12
    tied = int(np.count_nonzero(np.r_[same, False] | np.r_[False, same]))
    cut = h[h.shape[0] - n_clusters + 1]
    return tied, int(np.count_nonzero(np.abs(h - cut) <= 1e-12))


def _reference_heights(E, similarity, linkage):
    """Object-level dendrogram heights of ``1 - object_similarity`` by scipy (diagnostic)."""
    from scipy.cluster.hierarchy import linkage as scipy_linkage
    from scipy.spatial.distance import squareform

    from cclust.consensus_functions.link_based import object_similarity

    D = 1.0 - object_similarity(E, similarity, dc=DC, n_iter=R, max_bytes=2**33)
    np.fill_diagonal(D, 0.0)
    return scipy_linkage(squareform(D, checks=False), method=linkage)[:, 2]


def bench(args):
    authors = _authors_dir(args.authors)
    skip = {tuple(item.split(":")) for item in args.skip}
    X0, _ = _load_sample(args.bench_data, 300)
    warm = cclust.generate("kmeans", X0, 18, n_partitions=10, k_range=(18, 18), random_state=0)
    for similarity in args.similarities:                      # imports, BLAS threads
        lce(warm, 10, similarity=similarity, consensus="average", dc=DC, n_iter=R)
    print(f"load average at start: {os.getloadavg()}", file=sys.stderr)
    print("| n | sim. | linkage | ours wall (s) | ours CPU (s) | theirs: similarity wall / CPU (s) | stod (s) "
          "| linkage + cut (s) | theirs total (s) | ratio | ARI ours vs theirs | clusters theirs | tied heights "
          "/ n - 1 | merges at the cut height | max height gap | load |")
    print("|" + "---|" * 16)
    for n in args.sizes:
        X, y = _load_sample(args.bench_data, n)
        k = int(np.unique(y).shape[0])
        k_base = int(math.ceil(math.sqrt(X.shape[0])))
        E = cclust.generate("kmeans", X, k_base, n_partitions=10, k_range=(k_base, k_base), random_state=0)
        for similarity in args.similarities:
            linkages = args.linkages if n <= args.all_linkages_up_to else ["average"]
            load = os.getloadavg()[0]
            ours = {}
            for linkage in linkages:
                t0, c0 = time.perf_counter(), time.process_time()
                labels = lce(E, k, similarity=similarity, consensus=linkage, dc=DC, n_iter=R, max_bytes=2**33).labels
                ours[linkage] = (labels, time.perf_counter() - t0, time.process_time() - c0)
            run = None if (similarity, str(n)) in skip else _theirs(authors, E.labels, k, similarity, linkages,
                                                                      args.timeout, args.octave_results)
            for i, linkage in enumerate(linkages):
                labels, wall, cpu = ours[linkage]
                head = f"| {X.shape[0]:,} | {similarity} | {linkage} | {wall:.3f} | {cpu:.3f} |"
                if run is None or isinstance(run, np.ndarray):
                    why = "skipped" if (similarity, str(n)) in skip else f"timed out after {args.timeout:.0f} s"
                    if run is not None:
                        why += f" (similarity done in {run[0]:.1f} / CPU {run[1]:.1f} s)"
                    print(head + f" {why} |" + " |" * 10)
                    continue
                theirs, heights, timers, total = run
                sim_wall, sim_cpu, stod_wall = timers[0], timers[1], timers[2]
                link_wall = timers[4 + 2 * i]
                their_total = sim_wall + stod_wall + link_wall
                tied, at_cut = _ties(heights[i], k)
                gap = ""
                if X.shape[0] <= args.reference_up_to:
                    ref = _reference_heights(E, similarity, linkage)
                    gap = f"{np.abs(np.sort(ref) - np.sort(heights[i])).max():.1e}"
                print(head + f" {sim_wall:.2f} / {sim_cpu:.2f} | {stod_wall:.2f} | {link_wall:.2f} | {their_total:.2f} "
                      f"(Octave process {total:.1f}) | {their_total / wall:.0f}x | {ari(labels, theirs[:, i]):.4f} | "
                      f"{np.unique(theirs[:, i]).shape[0]} | {tied} / {X.shape[0] - 1} | {at_cut} | {gap} | "
                      f"{load:.1f} |")
            sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reproduce", action="store_true")
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pta-pools", default=None, help="folder with the authors' bc_pool_<name>.mat")
    parser.add_argument("--pool-sets", nargs="+", default=["IS", "LS", "ODR", "PD", "MNIST", "MF", "USPS"])
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--authors", default="/tmp/lce_authors",
                        help="where methods/LCE of nejci/Pepelka was extracted")
    parser.add_argument("--bench-data", default="pendigits")
    parser.add_argument("--sizes", nargs="+", type=int, default=[500, 2000, 5000])
    parser.add_argument("--similarities", nargs="+", default=["cts", "srs", "asrs"])
    parser.add_argument("--linkages", nargs="+", default=["average", "complete", "single"])
    parser.add_argument("--all-linkages-up-to", type=int, default=2000,
                        help="above this n only average linkage (Octave's linkage is cubic in n)")
    parser.add_argument("--reference-up-to", type=int, default=2000,
                        help="compare their merge heights with scipy's on our object similarity up to this n")
    parser.add_argument("--skip", nargs="*", default=["srs:2000", "srs:5000", "asrs:5000"],
                        help="similarity:n pairs not run under Octave (their loops would not finish)")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--octave-results", default=None,
                        help="read the Octave side from this folder of an earlier octave_lce run (one n, one similarity)")
    args = parser.parse_args()
    if args.reproduce:
        reproduce(args)
    if args.pta_pools:
        pta_pools(args)
    if args.bench:
        bench(args)
    if args.scale:
        _scale(args, cases=((20000, 100, "lce", {}), (20000, 100, "lce", {"similarity": "asrs"}),
                            (20000, 100, "lce", {"consensus": "average", "max_bytes": 2**33})))


if __name__ == "__main__":
    main()
