"""select_k's reference null (John et al. 2020, M3C): calibration, power and cost.

* ``calibration``: data without clusters of four shapes (isotropic Gaussian, correlated
  Gaussian, uniform box, one elongated Gaussian cloud), ``--sets`` of each with n and d drawn
  from ``--n`` and ``--d``; how often each setting answers K = 1 (the goal is 95%), and the
  plain protocol (``null=None``), which never can.
* ``power``: Gaussian blobs that k-means separates, K = 2..6, balanced or one blob three times
  the others; how often the true K is chosen.
* ``speed``: the default (with its reference) against the plain protocol on the same data, wall
  and CPU seconds and their ratio (the goal is at most 3x).
* ``stability``: :func:`cclust.selection.cluster_stability` against R's ``fpc::clusterboot``
  (``kmeansCBI`` with 10 random starts at the same K, the same B and scheme; cclust: one k-means++
  start) on the same data: the mean Jaccard of each
  cluster (matched between the two codes by their overlap) and the time.
* ``pvalues``: the p-values themselves, without select_k: the data's PAC and B reference PACs
  (B each of ``--b-values``) drawn from one beta distribution (so the null holds exactly),
  20000 times per shape; how often the predictive p-value (select_k's) and M3C's beta fit fall
  below 0.01 and 1e-3, which a calibrated p-value does 1% and 0.1% of the time.
* ``gap``: :func:`cclust.selection.gap_statistic` against R's ``cluster::clusGap`` (k-means with
  ``nstart = 10``, the same B, K.max and spaceH0) on the same data: the K each of clusGap's five
  rules picks, and the time of each (R through ``Rscript``; R is never used by the tests).

``--settings`` lists ``null:B:H`` or ``null:B:H:S`` (reference, references, resamples, k-means
runs per resample; ``none`` for the plain protocol, whose B is ignored), so settings are
compared on the same data sets::

    python benchmarks/bench_select_k_null.py calibration --sets 6 --settings uniform:10:25 gaussian:10:25 none:0:100
    python benchmarks/bench_select_k_null.py power --sets 4
    python benchmarks/bench_select_k_null.py speed --n 300 1000 3000
    python benchmarks/bench_select_k_null.py gap --sizes 500 5000
    python benchmarks/bench_select_k_null.py stability --sizes 500 5000 --references 100
    python benchmarks/bench_select_k_null.py pvalues --b-values 4 10 25
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cclust import select_k  # noqa: E402

SHAPES = ("isotropic", "correlated", "uniform box", "elongated")


def null_data(shape, n, d, rng):
    if shape == "isotropic":
        return rng.normal(size=(n, d))
    if shape == "correlated":
        return rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    if shape == "uniform box":
        return rng.uniform(-1, 1, size=(n, d))
    return rng.normal(size=(n, d)) * np.geomspace(10, 1, d)


def blobs(k, n, d, ratio, rng):
    sizes = np.full(k, n // (k + ratio - 1))
    sizes[0] *= ratio
    centres = rng.normal(0, 1, size=(k, d))
    centres *= 8.0 / np.min([np.linalg.norm(a - b) for i, a in enumerate(centres) for b in centres[i + 1:]])
    return np.vstack([rng.normal(c, 1.0, (s, d)) for c, s in zip(centres, sizes)])


def parse_setting(text):
    """``null:B:H`` or ``null:B:H:S``: reference, references, resamples and k-means runs per
    resample (S; default select_k's own: 3 with a null, 1 without)."""
    parts = text.split(":")
    null, b, h = parts[:3]
    starts = int(parts[3]) if len(parts) > 3 else None
    return (None if null == "none" else null), int(b), int(h), starts


def run(X, setting, seed, k_range):
    null, b, h, starts = setting
    kwargs = {"n_resamples": h, "random_state": seed, "null": null}
    if null is not None:
        kwargs["n_references"] = b
    if starts is not None:
        kwargs["inner_params"] = {"n_init": starts}
    return select_k(X, k_range, **kwargs)


def calibration(args):
    settings = [parse_setting(s) for s in args.settings]
    rng = np.random.default_rng(args.seed)
    hits = {s: {shape: 0 for shape in SHAPES} for s in args.settings}
    total = 0
    for i in range(args.sets):
        n, d = int(rng.integers(args.n[0], args.n[1] + 1)), int(rng.integers(args.d[0], args.d[1] + 1))
        for shape in SHAPES:
            X = null_data(shape, n, d, rng)
            total += 1
            for text, setting in zip(args.settings, settings):
                hits[text][shape] += run(X, setting, i, range(2, 7)).best_k == 1
    print(f"| setting (null:B:H) | K = 1 on {total} null sets | " + " | ".join(SHAPES) + " |")
    print("| --- | --- |" + " --- |" * len(SHAPES))
    for text in args.settings:
        row = hits[text]
        print(f"| {text} | {sum(row.values())}/{total} ({100 * sum(row.values()) / total:.0f}%) | "
              + " | ".join(f"{row[s]}/{args.sets}" for s in SHAPES) + " |", flush=True)


def power(args):
    settings = [parse_setting(s) for s in args.settings]
    rng = np.random.default_rng(args.seed)
    print("| setting (null:B:H) | true K | balance | right K | answers |")
    print("| --- | --- | --- | --- | --- |")
    for k in range(2, args.k_max + 1):
        for ratio in (1, 3):
            data = [blobs(k, int(rng.integers(args.n[0], args.n[1] + 1)), int(rng.integers(args.d[0], args.d[1] + 1)),
                          ratio, rng) for _ in range(args.sets)]
            for text, setting in zip(args.settings, settings):
                answers = [run(X, setting, i, range(2, args.k_max + 2)).best_k for i, X in enumerate(data)]
                right = sum(a == k for a in answers)
                print(f"| {text} | {k} | {'balanced' if ratio == 1 else '1 blob x3'} | {right}/{len(answers)} | "
                      f"{answers} |", flush=True)


def speed(args):
    print("| n | d | setting | wall s | CPU s | ratio to the plain protocol (wall, CPU) | load average |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    # the modules select_k loads on first use (SciPy's statistics among them: about a second)
    # are loaded before the clock starts, so that no setting pays for them
    for text in args.settings:
        run(np.random.default_rng(1).normal(size=(40, 3)), parse_setting(text), 0, range(2, 4))
    for n in args.sizes:
        X = np.random.default_rng(0).normal(size=(n, 10))
        times = {}
        for text in args.settings:
            setting = parse_setting(text)
            start, cpu = time.perf_counter(), os.times()
            run(X, setting, 0, range(2, 9))
            end = os.times()
            times[text] = (time.perf_counter() - start, end.user + end.system - cpu.user - cpu.system)
        plain = next((v for t, v in times.items() if t.startswith("none")), None)
        for text, (wall, cpu) in times.items():
            ratio = f"{wall / plain[0]:.2f}x, {cpu / plain[1]:.2f}x" if plain else ""
            print(f"| {n} | 10 | {text} | {wall:.2f} | {cpu:.2f} | {ratio} | {os.getloadavg()[0]:.2f} |", flush=True)


R_GAP = r"""
suppressMessages(library(cluster))
x <- as.matrix(read.csv(commandArgs(TRUE)[1], header = FALSE))
kmax <- as.integer(commandArgs(TRUE)[2]); B <- as.integer(commandArgs(TRUE)[3])
set.seed(1)
t0 <- proc.time()[["elapsed"]]
g <- clusGap(x, kmeans, K.max = kmax, B = B, nstart = 10, iter.max = 100, verbose = FALSE)
t1 <- proc.time()[["elapsed"]]
rules <- c("firstSEmax", "Tibs2001SEmax", "globalSEmax", "firstmax", "globalmax")
cat(t1 - t0, sapply(rules, function(r) maxSE(g$Tab[, "gap"], g$Tab[, "SE.sim"], method = r)), "\n")
"""


R_BOOT = r"""
suppressMessages(library(fpc))
x <- as.matrix(read.csv(commandArgs(TRUE)[1], header = FALSE))
k <- as.integer(commandArgs(TRUE)[2]); B <- as.integer(commandArgs(TRUE)[3]); how <- commandArgs(TRUE)[4]
t0 <- proc.time()[["elapsed"]]
cb <- clusterboot(x, B = B, bootmethod = how, clustermethod = kmeansCBI, krange = k, seed = 1, count = FALSE,
                  runs = 10)
t1 <- proc.time()[["elapsed"]]
cat(t1 - t0, "\n", cb$result$partition, "\n", cb[[paste0(how, "mean")]], "\n")
"""


def stability(args):
    import subprocess
    import tempfile

    from cclust.selection import cluster_stability

    print("| data | n | K | scheme | B | cclust mean Jaccard | clusterboot mean Jaccard | cclust s | clusterboot s | "
          "speed ratio | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(args.seed)
    # the modules a first call imports are loaded before timing (a draw of its own, so the data
    # sets below are the same as without it)
    cluster_stability(np.random.default_rng(1).normal(size=(60, 5)), 3, n_resamples=3, random_state=0)
    for n in args.sizes:
        cases = {"blobs K=4": (blobs(4, n, 5, 1, rng), 4), "noise": (rng.normal(size=(n, 5)), 3)}
        for name, (X, k) in cases.items():
            for scheme in ("boot", "subset"):
                start = time.perf_counter()
                ours = cluster_stability(X, k, n_resamples=args.references, scheme=scheme, random_state=0)
                mine = time.perf_counter() - start
                with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as handle:
                    np.savetxt(handle, X, delimiter=",")
                lines = subprocess.run(["Rscript", "-e", R_BOOT, handle.name, str(k), str(args.references), scheme],
                                       capture_output=True, text=True, check=True).stdout.splitlines()
                os.unlink(handle.name)
                theirs_time = float(lines[0])
                their_labels = np.array(lines[1].split(), dtype=np.int64) - 1
                their_mean = np.array(lines[2].split(), dtype=np.float64)
                # match R's clusters to ours by their largest overlap
                order = [int(np.bincount(their_labels[ours.labels == c], minlength=k).argmax()) for c in range(k)]
                ours_text = " ".join(f"{v:.2f}" for v in ours.mean_jaccard)
                theirs_text = " ".join(f"{their_mean[j]:.2f}" for j in order)
                print(f"| {name} | {n} | {k} | {scheme} | {args.references} | {ours_text} | {theirs_text} | "
                      f"{mine:.2f} | {theirs_time:.2f} | {theirs_time / mine:.1f}x | {os.getloadavg()[0]:.2f} |",
                      flush=True)


def gap(args):
    import subprocess
    import tempfile

    from cclust._reference import GAP_RULES, max_se
    from cclust.selection import gap_statistic

    print("| data | n | B | K.max | rule | cclust K | clusGap K | cclust s | clusGap s | speed ratio | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(args.seed)
    for n in args.sizes:
        cases = {"blobs K=4": blobs(4, n, 5, 1, rng), "noise": rng.normal(size=(n, 5))}
        for name, X in cases.items():
            start = time.perf_counter()
            ours = gap_statistic(X, 8, n_references=args.references, random_state=0)
            mine = time.perf_counter() - start
            with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as handle:
                np.savetxt(handle, X, delimiter=",")
            out = subprocess.run(["Rscript", "-e", R_GAP, handle.name, "8", str(args.references)],
                                 capture_output=True, text=True, check=True).stdout.split()
            os.unlink(handle.name)
            theirs_time, theirs_k = float(out[0]), [int(v) for v in out[1:]]
            for rule, their_k in zip(GAP_RULES, theirs_k):
                k = max_se(ours.gap, ours.se_sim, rule) + 1
                print(f"| {name} | {n} | {args.references} | 8 | {rule} | {k} | {their_k} | {mine:.2f} | "
                      f"{theirs_time:.2f} | {theirs_time / mine:.1f}x | {os.getloadavg()[0]:.2f} |", flush=True)


def pvalues(args):
    from cclust._reference import beta_p, predictive_p

    rng = np.random.default_rng(args.seed)
    draws = 20000
    print("| reference PACs (beta mean, sd) | B | predictive p < 0.01 | beta fit p < 0.01 | predictive p < 1e-3 | "
          "beta fit p < 1e-3 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for mu, sd in ((0.3, 0.05), (0.1, 0.04), (0.5, 0.03), (0.05, 0.03)):
        c = mu * (1 - mu) / sd ** 2 - 1
        for b in args.b_values:
            x = rng.beta(mu * c, (1 - mu) * c, size=(b + 1, draws))
            pred, fit = predictive_p(x[0], x[1:]), beta_p(x[0], x[1:])
            fit = np.where(np.isfinite(fit), fit, 1.0)
            print(f"| {mu}, {sd} | {b} | {np.mean(pred < 0.01):.2%} | {np.mean(fit < 0.01):.2%} | "
                  f"{np.mean(pred < 1e-3):.2%} | {np.mean(fit < 1e-3):.2%} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=["calibration", "power", "speed", "gap", "stability", "pvalues"])
    parser.add_argument("--references", type=int, default=100, help="gap and stability: B of both codes")
    parser.add_argument("--b-values", type=int, nargs="+", default=[4, 10, 25], help="pvalues: the B to try")
    parser.add_argument("--sets", type=int, default=6, help="data sets per shape (calibration) or per case (power)")
    parser.add_argument("--n", type=int, nargs=2, default=(60, 300), help="range of n")
    parser.add_argument("--d", type=int, nargs=2, default=(2, 10), help="range of d")
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 3000], help="speed: n")
    parser.add_argument("--settings", nargs="+", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k-max", type=int, default=6, help="power: blobs of K = 2..k_max, K tried 2..k_max + 1")
    args = parser.parse_args(argv)
    if args.settings is None:
        args.settings = ["uniform:10:25", "none:0:100"]
    {"calibration": calibration, "power": power, "speed": speed, "gap": gap,
     "stability": stability, "pvalues": pvalues}[args.suite](args)


if __name__ == "__main__":
    main()
