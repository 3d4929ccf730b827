"""PTA and PTGP (Huang, Lai & Wang 2016): reproduction of the paper's Table 9 and speed against
the authors' MATLAB code under GNU Octave.

Two modes:

``--reproduce``
    The paper's protocol (sec. 5.2, 5.5) on the authors' own pools of 200 base clusterings
    (k-means and RPCL, k in [2, min(sqrt(N)/2, 50)]) that ship with their code as
    ``bc_pool_<NAME>.mat`` (``--pools DIR``): each run draws an ensemble of M = 10 members at
    random from the pool and fuses it with the true number of classes (true-k). Prints mean
    +- sd of NMI (max-normalised, as the authors' ``computeNMI``; and the sqrt-normalised NMI
    cclust uses) and ARI next to the published true-k NMI of Table 9, for PTA-AL, PTA-CL,
    PTA-SL, PTGP (Tcut) and PTGP with METIS.

``--agreement``
    How often the default PTS route (``pts_method="spectral"``: one eigendecomposition of the
    reversible walk) changes the labels of the authors' route (``"powers"``: the T powers of
    the walk): ``--runs`` ensembles of M = 10 members per pool (``--datasets``, default IS and
    MF) and as many small random ensembles (few microclusters, many exact ties), fused by PTA
    (average, complete, single linkage) and PTGP (same seed) both ways.

``--bench``
    The same ensembles (M = 10 members of the authors' pools) fused by cclust and by the
    authors' code under ``octave-cli`` (``--authors DIR``: a checkout of their repository,
    with the statistics package), in the same run: wall time of each and ARI between the
    two labelings. ``--scale`` adds time and peak memory of cclust alone at n = 20,000 and
    n = 100,000 (r = 100) on synthetic blobs.

``--stages``
    Where one call's CPU time goes (cclust alone, one ensemble per data set, the mean of
    ``--runs`` calls): the eigendecomposition, the three BLAS products of PTS, the rest of the
    walk, SciPy's linkage and the dendrogram cut, each timed by wrapping the function.

Usage::

    python benchmarks/modern_trajectories.py --reproduce --pools /tmp/pta_authors --runs 10
    python benchmarks/modern_trajectories.py --bench --authors /tmp/pta_authors --runs 3
    python benchmarks/modern_trajectories.py --agreement --pools /tmp/pta_authors --runs 30
    python benchmarks/modern_trajectories.py --scale
    python benchmarks/modern_trajectories.py --stages --runs 5
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import cclust
from cclust.metrics import ari, nmi

#: Table 9 of Huang, Lai & Wang (2016): true-k NMI over 100 runs (PTA-AL, PTA-CL, PTA-SL, PTGP).
PUBLISHED_TRUE_K = {
    "MF": (0.614, 0.611, 0.522, 0.613),
    "IS": (0.607, 0.609, 0.521, 0.611),
    "MNIST": (0.578, 0.577, 0.103, 0.576),
    "ODR": (0.804, 0.793, 0.533, 0.813),
    "LS": (0.622, 0.584, 0.114, 0.625),
    "PD": (0.732, 0.733, 0.445, 0.738),
    "USPS": (0.565, 0.530, 0.051, 0.551),
}
NAMES = {"MF": "Multiple features", "IS": "Image segmentation (segment)", "MNIST": "MNIST (5,000)",
         "ODR": "optdigits", "LS": "Landsat (satimage)", "PD": "pendigits", "USPS": "USPS"}
VARIANTS = (("PTA-AL", "pta", {"linkage": "average"}), ("PTA-CL", "pta", {"linkage": "complete"}),
            ("PTA-SL", "pta", {"linkage": "single"}), ("PTGP", "ptgp", {}), ("PTGP-METIS", "ptgp", {"cut": "metis"}))


def load_pool(pools, name):
    from scipy.io import loadmat

    m = loadmat(os.path.join(pools, f"bc_pool_{name}.mat"))
    return m["members"].astype(np.int64) - 1, m["gt"].reshape(-1).astype(np.int64)


def draw_ensembles(members, runs, size, seed):
    rng = np.random.default_rng(seed)
    return [members[:, rng.permutation(members.shape[1])[:size]] for _ in range(runs)]


def nmi_max(a, b):
    return nmi(a, b, average="max")


def reproduce(args):
    print(f"True-k, M = {args.size} members drawn from the authors' pools, {args.runs} runs "
          f"(the paper: 100); mean +- sd.\n")
    print("| data set | n | method | NMI (max) | NMI (sqrt) | ARI | published NMI (Table 9, true-k) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.datasets:
        members, gt = load_pool(args.pools, name)
        k = int(np.unique(gt).shape[0])
        ensembles = draw_ensembles(members, args.runs, args.size, args.seed)
        for label, method, kwargs in VARIANTS:
            scores = []
            for run, L in enumerate(ensembles):
                res = cclust.consensus(method, L, k, random_state=run, **kwargs)
                scores.append((nmi_max(gt, res.labels), nmi(gt, res.labels), ari(gt, res.labels)))
            s = np.array(scores)
            published = dict(zip(("PTA-AL", "PTA-CL", "PTA-SL", "PTGP"), PUBLISHED_TRUE_K[name])).get(label)
            cells = " | ".join(f"{s[:, j].mean():.3f} +- {s[:, j].std(ddof=1):.3f}" for j in range(3))
            print(f"| {NAMES[name]} ({name}) | {members.shape[0]} | {label} | {cells} | "
                  f"{'-' if published is None else f'{published:.3f}'} |", flush=True)


def run_octave(authors, L, k):
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "in.csv"), os.path.join(tmp, "out.csv")
        np.savetxt(inp, L + 1, fmt="%d", delimiter=",")
        script = (f"addpath('{authors}'); addpath('{os.path.dirname(os.path.abspath(__file__))}'); pkg load statistics; "
                  f"octave_trajectories('{inp}', '{out}', {k});")
        start = time.perf_counter()
        subprocess.run(["octave-cli", "--no-gui", "--eval", script], check=True, capture_output=True)
        wall = time.perf_counter() - start
        labels = np.loadtxt(out, delimiter=",").astype(np.int64)
        inner = [float(x) for x in open(out + ".time").read().split()]
    return labels, wall, inner


def _timed(method, L, k, **kwargs):
    """(result, wall seconds, CPU seconds of the process, all threads)."""
    start, cpu = time.perf_counter(), time.process_time()
    res = cclust.consensus(method, L, k, random_state=0, **kwargs)
    return res, time.perf_counter() - start, time.process_time() - cpu


def bench(args):
    print(f"M = {args.size} members of the authors' pools, true k; {args.runs} ensembles per data set; load "
          f"average at the start {os.getloadavg()[0]:.1f} (2 cores). Octave: its own timers (PTS, then PTA-AL "
          "or PTGP; start-up excluded), wall / CPU seconds; cclust: each call after a warm-up call (imports "
          "excluded), wall / CPU seconds of all threads; ratios of CPU times.\n")
    for method in ("pta", "ptgp"):   # warm-up: SciPy's lazy imports
        cclust.consensus(method, np.array([[0, 0], [0, 1], [1, 1], [1, 2], [2, 2], [2, 0]]), 2, random_state=0)
    print("| data set | n | M microclusters | cclust PTA | cclust PTGP | cclust PTA, powers | Octave PTS+PTA | "
          "Octave PTS+PTGP | ratio PTA | ratio PTGP | ARI PTA ours-theirs | ARI PTGP ours-theirs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        members, gt = load_pool(args.pools, name)
        k = int(np.unique(gt).shape[0])
        for L in draw_ensembles(members, args.runs, args.size, args.seed):
            a, w_pta, c_pta = _timed("pta", L, k)
            b, w_ptgp, c_ptgp = _timed("ptgp", L, k)
            _, w_pow, c_pow = _timed("pta", L, k, pts_method="powers")
            theirs, wall, inner = run_octave(args.authors, L, k)
            t_pts, t_al, t_gp, m, c_pts, c_al, c_gp = inner
            print(f"| {name} | {L.shape[0]} | {int(m)} | {w_pta:.2f} / {c_pta:.2f} s | {w_ptgp:.2f} / {c_ptgp:.2f} s | "
                  f"{w_pow:.2f} / {c_pow:.2f} s | {t_pts + t_al:.2f} / {c_pts + c_al:.2f} s | "
                  f"{t_pts + t_gp:.2f} / {c_pts + c_gp:.2f} s | {(c_pts + c_al) / c_pta:.1f}x | "
                  f"{(c_pts + c_gp) / c_ptgp:.1f}x | {ari(a.labels, theirs[:, 0]):.4f} | "
                  f"{ari(b.labels, theirs[:, 1]):.4f} |", flush=True)


def agreement(args):
    from cclust.consensus_functions.trajectories import probability_trajectories

    def small(rng):
        truth = rng.integers(0, 3, 60)
        L = np.column_stack([np.where(rng.random(60) < 0.2, rng.integers(0, 5, 60), truth + 3 * rng.integers(0, 2, 60))
                             for _ in range(5)])
        return L, 3

    sources = []
    for name in args.datasets:
        members, gt = load_pool(args.pools, name)
        k = int(np.unique(gt).shape[0])
        sources += [(name, L, k) for L in draw_ensembles(members, args.runs, args.size, args.seed)]
    rng = np.random.default_rng(args.seed)
    sources += [("random n = 60", *small(rng)) for _ in range(args.runs)]
    print("| ensembles | runs | max abs PTS difference | PTA-AL same labels | PTA-CL same labels | "
          "PTA-SL same labels | PTGP same labels | lowest ARI (any variant) |")
    print("|---|---|---|---|---|---|---|---|")
    for group in dict.fromkeys(s for s, _, _ in sources):
        diff, same, low = 0.0, np.zeros(4, dtype=int), 1.0
        runs = [(L, k) for s, L, k in sources if s == group]
        for L, k in runs:
            E = cclust.Ensemble(L).canonical()
            a, b = (probability_trajectories(E, pts_method=p, keep=False)["pts"] for p in ("powers", "spectral"))
            diff = max(diff, float(np.abs(a - b).max()))
            for j, (label, method, kwargs) in enumerate(VARIANTS[:4]):
                x, y = (cclust.consensus(method, L, k, random_state=0, pts_method=p, **kwargs).labels
                        for p in ("powers", "spectral"))
                score = ari(x, y)
                same[j] += score == 1.0
                low = min(low, score)
        print(f"| {group} | {len(runs)} | {diff:.1e} | " + " | ".join(f"{c}/{len(runs)}" for c in same)
              + f" | {low:.4f} |", flush=True)


def _peak_child(n, r, k_high, seed):
    """Time and peak RSS of pta and ptgp in a fresh process (ru_maxrss of the child)."""
    code = f"""
import time, resource, numpy as np, cclust
rng = np.random.default_rng({seed})
centres = rng.normal(0, 8, size=(10, 8))
X = centres[rng.integers(0, 10, {n})] + rng.normal(size=({n}, 8))
E = cclust.generate("kmeans", X, 10, n_partitions={r}, k_range=(2, {k_high}), random_state={seed})
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = []
for name in ("pta", "ptgp"):
    start = time.perf_counter()
    try:
        res = cclust.consensus(name, E, 10, random_state=0)
        out.append(f"{{name}}: {{time.perf_counter() - start:.1f}} s, M = {{res.extras['n_microclusters']}}")
    except MemoryError as exc:
        out.append(f"{{name}}: refused ({{str(exc)[:160]}})")
print("; ".join(out), f"| peak RSS {{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}} MiB "
      f"(after generating: {{base / 1024:.0f}} MiB)")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return (proc.stdout or proc.stderr).strip()


def scale(args):
    for n, r, k_high in ((20_000, 10, 50), (100_000, 100, 50)):
        print(f"n = {n}, r = {r}, k in [2, {k_high}]: {_peak_child(n, r, k_high, 0)}", flush=True)


def stages(args):
    """CPU seconds per step of one pta / ptgp call (see the module docstring)."""
    import scipy.cluster.hierarchy as hierarchy
    import scipy.linalg
    import scipy.linalg.blas as blas

    import cclust.consensus_functions.trajectories as traj

    spent = {}

    def timed(name, fn):
        def wrapper(*a, **kw):
            start = time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - start
        return wrapper

    saved = [(scipy.linalg, "eigh"), (blas, "dsyrk"), (blas, "dtrmm"), (blas, "dsyr2k"), (hierarchy, "linkage"),
             (traj, "_trajectories"), (traj, "cut_dendrogram"), (traj, "tcut")]
    originals = [(mod, name, getattr(mod, name)) for mod, name in saved]
    for mod, name, fn in originals:
        setattr(mod, name, timed(name, fn))
    steps = ("eigh", "dsyrk", "dtrmm", "dsyr2k", "_trajectories", "linkage", "cut_dendrogram", "tcut")
    print(f"CPU seconds per call, mean of {args.runs} calls; '_trajectories' is the whole walk (MCA, K-ENG, PTS: "
          "it includes the four columns before it); load average at the start "
          f"{os.getloadavg()[0]:.1f}.\n")
    print("| data set | M | method | total | " + " | ".join(steps) + " |")
    print("|" + "---|" * (4 + len(steps)))
    try:
        for name in args.datasets:
            members, gt = load_pool(args.pools, name)
            k = int(np.unique(gt).shape[0])
            L = draw_ensembles(members, 1, args.size, args.seed)[0]
            cclust.consensus("pta", L[:300], k)   # imports
            for method in ("pta", "ptgp"):
                spent.clear()
                start = time.process_time()
                for _ in range(args.runs):
                    res = cclust.consensus(method, L, k, random_state=0)
                total = (time.process_time() - start) / args.runs
                cells = " | ".join(f"{spent.get(step, 0.0) / args.runs:.3f}" for step in steps)
                print(f"| {name} | {res.extras['n_microclusters']} | {method} | {total:.3f} | {cells} |", flush=True)
    finally:
        for mod, name, fn in originals:
            setattr(mod, name, fn)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reproduce", action="store_true")
    p.add_argument("--bench", action="store_true")
    p.add_argument("--agreement", action="store_true")
    p.add_argument("--scale", action="store_true")
    p.add_argument("--stages", action="store_true")
    p.add_argument("--pools", default="/tmp/pta_authors", help="directory with the authors' bc_pool_*.mat")
    p.add_argument("--authors", default="/tmp/pta_authors", help="checkout of the authors' MATLAB code")
    p.add_argument("--datasets", nargs="+", default=None)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--size", type=int, default=10, help="ensemble size M (the paper: 10)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.reproduce:
        args.datasets = args.datasets or ["IS", "ODR", "LS", "PD", "MNIST"]
        reproduce(args)
    if args.agreement:
        args.datasets = args.datasets or ["IS", "MF"]
        agreement(args)
    if args.bench:
        args.datasets = args.datasets or ["MNIST", "ODR"]
        bench(args)
    if args.scale:
        scale(args)
    if args.stages:
        args.datasets = args.datasets or ["MNIST", "ODR"]
        stages(args)


if __name__ == "__main__":
    main()
