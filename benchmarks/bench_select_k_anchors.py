"""select_k's reference null beside its anchors: M3C (John et al. 2020) and ConsensusClusterPlus
(Wilkerson & Hayes 2010), run side by side in R, and the calibration goal at scale.

* ``calibration``: ``--sets`` data sets without clusters (the four shapes of
  ``bench_select_k_null.py``, in turn), n log-uniform in ``--n``, d uniform in ``--d``; how
  often cclust's default ``select_k(X)`` answers K = 1 (the goal is 95%), and every miss with
  its shape, n, d, K and p-value. One line per data set goes to ``--log`` as it finishes.
* ``m3c``: cclust's default against M3C's own code (its ``M3C()`` with Monte Carlo references,
  k-means inside and the PAC objective, as cclust's default; ``--m3c-iters`` references of
  ``--m3c-reps`` resamples) and ConsensusClusterPlus's default run (lowest PAC), on data without
  clusters of the four shapes, on blobs with K = 2..8 (balanced, and one blob three times the
  others), and on shared real data sets: the K each picks, M3C's and cclust's p-values and RCSI,
  and the time of each in the same run.
* ``ccp``: ConsensusClusterPlus's default run (``clusterAlg="hc"``, ``distance="pearson"``,
  average inner and final linkage, ``reps=10``, ``pItem=0.8``) against the same protocol in
  cclust (``inner="hierarchical", distance="pearson", null=None, n_resamples=10``) with several
  seeds of each: PAC per K, the K of lowest PAC, and the time; and cclust's default (with its
  reference null) timed against CCP's default run on the same data.

M3C is not taken from a package: its ``R/M3C.R`` is read at run time from a clone of
github.com/crj32/M3C (``--m3c-repo``, a bare git repository or a work tree, or the environment
variable ``M3C_REPO``) into a temporary folder and ``source()``-d by Rscript with a small shim
for the package Debian lacks (``registerDoSNOW`` registers doParallel's backend, so
``.options.snow`` is ignored; umap and Rtsne serve only M3C's plots and are not loaded). Nothing
of M3C is copied into this repository. R, M3C and ConsensusClusterPlus are never used by the
tests::

    python benchmarks/bench_select_k_anchors.py calibration --sets 100 --log calibration.log
    python benchmarks/bench_select_k_anchors.py m3c --m3c-repo PATH --real ../shared/data/wdbc.npz
    python benchmarks/bench_select_k_anchors.py ccp --real ../shared/data/wdbc.npz --seeds 3
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_select_k_null import SHAPES, blobs, null_data  # noqa: E402

from cclust import select_k  # noqa: E402


def _load():
    return os.getloadavg()[0]


def calibration(args):
    rng = np.random.default_rng(args.seed)
    log = open(args.log, "a") if args.log else None
    hits, misses, total_time = {s: [0, 0] for s in SHAPES}, [], 0.0

    def note(text):
        if log:
            log.write(text + "\n")
            log.flush()

    note(f"# calibration: sets {args.skip}..{args.sets - 1}, n log-uniform in {args.n}, d in {args.d}, "
         f"seed {args.seed}")
    for i in range(args.sets):
        shape = SHAPES[i % len(SHAPES)]
        n = int(round(np.exp(rng.uniform(np.log(args.n[0]), np.log(args.n[1])))))
        d = int(rng.integers(args.d[0], args.d[1] + 1))
        X = null_data(shape, n, d, rng)
        if i < args.skip:  # drawn all the same, so that set i is the same in every run
            continue
        start = time.perf_counter()
        result = select_k(X, random_state=i)
        wall = time.perf_counter() - start
        total_time += wall
        k = result.best_k
        p_min = float(np.min(result.p_value))
        k_min = int(result.k_values[np.argmin(result.p_value)])
        hits[shape][1] += 1
        if k == 1:
            hits[shape][0] += 1
        else:
            misses.append((shape, n, d, k, float(result.p_value[result.k_values == k][0])))
        note(f"{i} {shape} n={n} d={d} K={k} min p={p_min:.3g} at K={k_min} {wall:.1f}s load={_load():.2f}")
    right = sum(h[0] for h in hits.values())
    done = args.sets - args.skip
    lines = [f"K = 1 on {right}/{done} ({100 * right / done:.0f}%) data sets without clusters, "
             f"{total_time / 60:.1f} min of select_k",
             "",
             "| " + " | ".join(SHAPES) + " |",
             "| --- " * len(SHAPES) + "|",
             "| " + " | ".join(f"{hits[s][0]}/{hits[s][1]}" for s in SHAPES) + " |",
             "",
             "| miss: shape | n | d | K | p-value at K (Bonferroni level 0.05/7) |",
             "| --- | --- | --- | --- | --- |"]
    lines += [f"| {s} | {n} | {d} | {k} | {p:.2g} |" for s, n, d, k, p in misses]
    note("\n".join(lines))
    print("\n".join(lines), flush=True)


R_M3C = r"""
args <- commandArgs(TRUE)
suppressMessages({library(parallel); library(doParallel); library(foreach); library(ggplot2); library(Matrix)
                  library(cluster); library(corpcor)})
# M3C imports doSNOW for its progress bar only; doParallel's backend runs the same foreach loop
# (the .options.snow list is then ignored, with a warning)
registerDoSNOW <- function(cl) registerDoParallel(cl)
source(args[2])
x <- t(as.matrix(read.csv(args[1], header = FALSE)))  # M3C takes features x samples
colnames(x) <- paste0("S", seq_len(ncol(x)))
maxK <- as.integer(args[3]); iters <- as.integer(args[4]); reps <- as.integer(args[5])
t0 <- proc.time()[["elapsed"]]
r <- suppressWarnings(M3C(x, cores = 1, iters = iters, maxK = maxK, repsref = reps, repsreal = reps,
                          clusteralg = "km", objective = "PAC", removeplots = TRUE, silent = TRUE))
t1 <- proc.time()[["elapsed"]]
# M3C's progress bar also writes to stdout: the results go to a file
write.table(cbind(t1 - t0, r$scores[, c("K", "PAC_REAL", "PAC_REF", "RCSI", "RCSI_SE", "MONTECARLO_P", "BETA_P")]),
            args[6], row.names = FALSE, col.names = FALSE)
"""

R_CCP = r"""
args <- commandArgs(TRUE)
suppressMessages(library(ConsensusClusterPlus))
x <- t(as.matrix(read.csv(args[1], header = FALSE)))  # ConsensusClusterPlus takes features x samples
maxK <- as.integer(args[2]); seeds <- as.integer(strsplit(args[3], ",")[[1]])
for (s in seeds) {
  t0 <- proc.time()[["elapsed"]]
  r <- ConsensusClusterPlus(x, maxK = maxK, seed = s)  # every other argument at its default
  t1 <- proc.time()[["elapsed"]]
  pac <- sapply(2:maxK, function(k) {
    m <- r[[k]]$consensusMatrix
    v <- m[lower.tri(m)]
    mean(v > 0.1 & v <= 0.9)
  })
  cat(t1 - t0, pac, "\n")
}
"""


def _rscript(code, args, cwd):
    import subprocess

    done = subprocess.run(["Rscript", "-e", code, *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"Rscript failed:\n{done.stderr[-2000:]}")
    return done.stdout


def _write_csv(X, folder):
    path = os.path.join(folder, "data.csv")
    np.savetxt(path, X, delimiter=",")
    return path


def m3c_source(repo, folder):
    """M3C's R/M3C.R from a clone of github.com/crj32/M3C (bare or not), written into ``folder``."""
    import subprocess

    target = os.path.join(folder, "M3C.R")
    if os.path.isfile(os.path.join(repo, "R", "M3C.R")):
        with open(os.path.join(repo, "R", "M3C.R")) as source, open(target, "w") as handle:
            handle.write(source.read())
    else:
        text = subprocess.run(["git", "--git-dir", repo, "show", "HEAD:R/M3C.R"], capture_output=True, text=True,
                              check=True).stdout
        with open(target, "w") as handle:
            handle.write(text)
    return target


def run_m3c(X, source, max_k, iters, reps, folder):
    result = os.path.join(folder, "m3c.txt")
    _rscript(R_M3C, [_write_csv(X, folder), source, max_k, iters, reps, result], folder)
    rows = np.atleast_2d(np.genfromtxt(result, missing_values="NA", filling_values=np.nan))
    keys = ("k", "pac", "pac_ref", "rcsi", "rcsi_se", "p_monte_carlo", "p_beta")
    return float(rows[0, 0]), {key: rows[:, j + 1] for j, key in enumerate(keys)}


def run_ccp(X, max_k, seeds, folder):
    """ConsensusClusterPlus's default run per seed: (wall seconds, PAC at K = 2..max_k)."""
    out = _rscript(R_CCP, [_write_csv(X, folder), max_k, ",".join(map(str, seeds))], folder)
    rows = [np.array(line.split(), dtype=np.float64) for line in out.splitlines() if line.strip()]
    return [(row[0], row[1:]) for row in rows]


def real_data(paths):
    """Shared data sets, each feature standardised (their units differ by orders of magnitude)."""
    out = {}
    for path in paths:
        X = np.load(path)["X"].astype(np.float64)
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        out[os.path.splitext(os.path.basename(path))[0]] = X
    return out


def timed_select_k(X, **kwargs):
    start = time.perf_counter()
    result = select_k(X, **kwargs)
    return result, time.perf_counter() - start


def _at(result, k):
    return int(np.flatnonzero(result.k_values == k)[0])


def m3c(args):
    import tempfile

    rng = np.random.default_rng(args.seed)
    cases = [(f"no clusters: {shape}", null_data(shape, args.size, args.dim, rng), 1) for shape in SHAPES]
    for k in range(2, args.max_k + 1):
        for ratio in (1, 3):
            name = f"{k} blobs{' (one x3)' if ratio == 3 else ''}"
            cases.append((name, blobs(k, args.size, args.dim, ratio, rng), k))
    cases += [(name, X, None) for name, X in real_data(args.real).items()]
    k_range = range(2, args.max_k + 1)
    print(f"M3C: clusteralg='km', objective='PAC', iters={args.m3c_iters}, repsref=repsreal={args.m3c_reps}, "
          f"maxK={args.max_k}, cores=1; ConsensusClusterPlus: defaults, maxK={args.max_k}, seed 1; "
          "cclust: select_k(X, range(2, maxK + 1), random_state=0) and the same with null='gaussian'")
    print("| data | n x d | true K | cclust K (p at K) | cclust gaussian K | M3C K (beta p, Monte Carlo p at K) | "
          "M3C RCSI at K / cclust RCSI there | CCP K (lowest PAC) | cclust s | M3C s | CCP s | M3C / cclust | load |")
    print("| --- " * 13 + "|", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        source = m3c_source(args.m3c_repo, folder)
        for name, X, truth in cases:
            ours, ours_s = timed_select_k(X, k_range=k_range, random_state=0)
            gauss, _ = timed_select_k(X, k_range=k_range, random_state=0, null="gaussian")
            m3c_s, theirs = run_m3c(X, source, args.max_k, args.m3c_iters, args.m3c_reps, folder)
            ccp_s, ccp_pac = run_ccp(X, args.max_k, [1], folder)[0]
            j = int(np.nanargmax(theirs["rcsi"]))
            k_m3c = int(theirs["k"][j])
            if ours.best_k == 1:
                p_ours = f" (min p {np.min(ours.p_value):.2g})"
            else:
                p_ours = f" ({ours.p_value[_at(ours, ours.best_k)]:.2g})"
            print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {truth or ''} | {ours.best_k}{p_ours} | {gauss.best_k} | "
                  f"{k_m3c} ({theirs['p_beta'][j]:.2g}, {theirs['p_monte_carlo'][j]:.2g}) | "
                  f"{theirs['rcsi'][j]:.2f} / {ours.rcsi[_at(ours, k_m3c)]:.2f} | {int(np.argmin(ccp_pac)) + 2} | "
                  f"{ours_s:.1f} | {m3c_s:.1f} | {ccp_s:.1f} | {m3c_s / ours_s:.0f}x | {_load():.1f} |", flush=True)


def ccp(args):
    import tempfile

    rng = np.random.default_rng(args.seed)
    cases = {name: X for name, X in real_data(args.real).items()}
    cases[f"4 blobs {args.size} x {args.dim}"] = blobs(4, args.size, args.dim, 1, rng)
    cases[f"no clusters {args.size} x {args.dim}"] = rng.normal(size=(args.size, args.dim))
    k_range = range(2, args.max_k + 1)
    seeds = list(range(1, args.seeds + 1))
    print(f"ConsensusClusterPlus: defaults (hc, pearson, average linkage, reps 10, pItem 0.8), maxK={args.max_k}; "
          f"cclust: select_k(X, range(2, {args.max_k + 1}), inner='hierarchical', distance='pearson', null=None, "
          f"n_resamples=10); seeds {seeds} of each")
    print("| data | n x d | code | PAC at K = 2..8 (mean +- sd over seeds) | K of lowest PAC per seed | "
          "median s | CCP / cclust | load |")
    print("| --- " * 8 + "|", flush=True)
    defaults = []
    with tempfile.TemporaryDirectory() as folder:
        for name, X in cases.items():
            theirs = run_ccp(X, args.max_k, seeds, folder)
            ours = [timed_select_k(X, k_range=k_range, inner="hierarchical", distance="pearson", null=None,
                                   n_resamples=10, random_state=s) for s in seeds]
            default, default_s = timed_select_k(X, random_state=0)
            ccp_pac = np.array([pac for _, pac in theirs])
            our_pac = np.array([r.pac for r, _ in ours])
            ccp_s = float(np.median([t for t, _ in theirs]))
            our_s = float(np.median([t for _, t in ours]))
            for code, pac, secs, ratio in (("CCP", ccp_pac, ccp_s, ""), ("cclust", our_pac, our_s,
                                                                            f"{ccp_s / our_s:.1f}x")):
                text = " ".join(f"{m:.3f}+-{s:.3f}" for m, s in zip(pac.mean(axis=0), pac.std(axis=0)))
                picks = [int(np.argmin(row)) + 2 for row in pac]
                print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {code} | {text} | {picks} | {secs:.2f} | {ratio} | "
                      f"{_load():.1f} |", flush=True)
            defaults.append((name, X.shape, default.best_k, default_s, ccp_s))
    print()
    print("| data | n x d | cclust default K | cclust default s | CCP default run s (median) | CCP / cclust default |")
    print("| --- " * 6 + "|")
    for name, shape, k, secs, ccp_s in defaults:
        print(f"| {name} | {shape[0]} x {shape[1]} | {k} | {secs:.2f} | {ccp_s:.2f} | {ccp_s / secs:.1f}x |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=["calibration", "m3c", "ccp"])
    parser.add_argument("--sets", type=int, default=100, help="calibration: data sets")
    parser.add_argument("--n", type=int, nargs=2, default=(100, 5000), help="calibration: range of n (log-uniform)")
    parser.add_argument("--d", type=int, nargs=2, default=(2, 50), help="calibration: range of d")
    parser.add_argument("--skip", type=int, default=0,
                        help="calibration: draw but do not run the first SKIP sets (to resume a run from its log)")
    parser.add_argument("--log", default=None, help="calibration: append one line per data set to this file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--m3c-repo", default=os.environ.get("M3C_REPO"),
                        help="m3c: a clone of github.com/crj32/M3C (bare or with a work tree); default $M3C_REPO")
    parser.add_argument("--m3c-iters", type=int, default=10, help="m3c: M3C's iters (reference data sets)")
    parser.add_argument("--m3c-reps", type=int, default=25, help="m3c: M3C's repsref and repsreal")
    parser.add_argument("--max-k", type=int, default=8, help="m3c, ccp: the largest K tried")
    parser.add_argument("--size", type=int, default=200, help="m3c, ccp: n of the generated data")
    parser.add_argument("--dim", type=int, default=5, help="m3c, ccp: d of the generated data")
    parser.add_argument("--seeds", type=int, default=3, help="ccp: seeds of each code")
    parser.add_argument("--real", nargs="*", default=[], help="m3c, ccp: shared data sets (.npz with X)")
    args = parser.parse_args(argv)
    if args.suite == "m3c" and not args.m3c_repo:
        parser.error("m3c needs --m3c-repo (or M3C_REPO): a clone of github.com/crj32/M3C")
    {"calibration": calibration, "m3c": m3c, "ccp": ccp}[args.suite](args)


if __name__ == "__main__":
    main()
