"""Speed of GKCC (Li & Liu 2018): time and share per phase, and Li & Liu's O(I n K^2 m) claim.

GKCC's generation runs, at step k = 2..K, nu K-means runs with k centres in a space of d dense
features plus r_k = nu (k - 2) categorical blocks (the partitions of the earlier steps), each
pass costing O(n k (d + r_k)) in the compiled engine; then one refinement run in the space with
r_{k+1} blocks. So a step costs about I nu n k (d + nu (k - 2)), and the whole generation
O(I nu n K^2 (d + nu K)) -- cubic in K once nu K exceeds d, not the O(I n K^2 m) Li & Liu (2018, sec. 4)
states (which counts only the m original features). The script times every phase, fits the
per-step candidate time against ``sum of Lloyd passes x n x k x (d + r_k)`` (the work model) and
reports the share of time per phase::

    python benchmarks/bench_gkcc.py --output /tmp/issue4_benchmarks.md
    python benchmarks/bench_gkcc.py --sets pendigits:59 letter:5 letter:15

A set is ``name[:nu]``; nu defaults to 59 (Li & Liu's value). letter (K = 26) with nu = 59 would
need about 1475 categorical blocks at the last step and hours on a shared 2-core machine, so the
default runs it with nu = 5 and 15 and extrapolates (candidate time is linear in nu at a given r_k, and
r_k itself grows with nu).
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
from cclust.errors import ConvergenceWarning  # noqa: E402
from cclust.metrics import ari, nmi  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))


def load(name):
    for folder in (DATA, os.path.join(DATA, "large")):
        path = os.path.join(folder, f"{name}.npz")
        if os.path.exists(path):
            z = np.load(path)
            return np.asarray(z["X"], dtype=np.float64), np.asarray(z["y"], dtype=np.int64)
    raise SystemExit(f"no dataset {name!r} in {DATA} or {DATA}/large")


def least_squares(work, seconds):
    """Seconds per unit of work fitted through the origin, the fitted times, and the mean
    absolute error relative to the total time."""
    per_unit = float((seconds * work).sum() / (work ** 2).sum())
    fit = per_unit * work
    return per_unit, fit, float(np.abs(fit - seconds).sum() / seconds.sum())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["pendigits:59", "letter:5", "letter:15"])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)

    lines = ["# GKCC speed (Li & Liu 2018)", "",
             f"Command: `python benchmarks/bench_gkcc.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
             f"({platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, "
             f"cclust {cclust.__version__}; n_jobs={args.n_jobs} on a 2-core machine shared with other "
             "engineers' jobs, so absolute times are noisy.)", ""]
    summary = ["| set | n | d | K | nu | r | total s | candidates | refinement | fusion | Rn | NMI "
               "| error of the fit I n k (d + r_k) | error of Li & Liu's I n k d |",
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    details = []
    for spec in args.sets:
        name, _, nu = spec.partition(":")
        nu = int(nu or 59)
        X, y = load(name)
        n, d = X.shape
        K = int(y.max()) + 1
        t0 = time.perf_counter()
        res = gkcc(None, K, X=X, n_partitions=nu * (K - 1), random_state=args.seed, n_jobs=args.n_jobs)
        total = time.perf_counter() - t0
        ps = res.extras["phase_seconds"]
        cand, refine, fusion = ps["candidates"], ps["refinement"], ps["fusion"]
        iters = res.extras["candidate_n_iter"]
        ks = np.arange(2, K + 1)
        blocks = nu * (ks - 2)
        # Lloyd passes = n_iter + 1 (the last pass only confirms); work in units of n k (d + r_k)
        work = np.array([(it + 1).sum() * n * k * (d + r) for it, k, r in zip(iters, ks, blocks)], dtype=float)
        per_unit, fit, rel = least_squares(work, cand)
        # The model of Li & Liu (2018, sec. 4) counts only the d original features (m in its notation)
        _, fit_paper, rel_paper = least_squares(
            np.array([(it + 1).sum() * n * k * d for it, k in zip(iters, ks)], dtype=float), cand)
        rest = total - cand.sum() - refine.sum() - fusion
        summary.append(
            f"| {name} | {n} | {d} | {K} | {nu} | {res.extras['ensemble'].n_partitions} | {total:.1f} "
            f"| {cand.sum() / total:.0%} | {refine.sum() / total:.0%} | {fusion / total:.1%} "
            f"| {ari(y, res.labels):.4f} | {nmi(y, res.labels):.4f} | {rel:.0%} | {rel_paper:.0%} |")
        details += ["", f"### {name} (n={n}, d={d}, K={K}, nu={nu}): per step", "",
                    "| k | r_k (blocks) | mean Lloyd passes | candidates s | fit I n k (d + r_k) | fit I n k d "
                    "| refinement s |",
                    "| --- | --- | --- | --- | --- | --- | --- |"]
        for k, r, it, c, f, fp, rf in zip(ks, blocks, iters, cand, fit, fit_paper, refine):
            details.append(f"| {k} | {r} | {(it + 1).mean():.1f} | {c:.2f} | {f:.2f} | {fp:.2f} | {rf:.2f} |")
        details.append(f"\nOther (validation, sampling, Gamma): {rest:.2f} s.")
        if nu != 59:
            ks59 = ks
            blocks59 = 59 * (ks59 - 2)
            passes = np.array([(it + 1).mean() for it in iters])
            est = per_unit * (59 * passes * n * ks59 * (d + blocks59)).sum()
            details.append(f"Extrapolated candidate time with nu = 59 (same passes per run): {est / 60:.0f} min.")
        print(summary[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines + summary + details) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
