"""U-SPEC / U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020): quality, speed, memory, and the authors' code.

Suites (run from the repository root, ``PYTHONPATH=. python benchmarks/bench_uspec.py <suite>``):

* ``pendigits`` -- U-SPEC NMI and time over seeds on pendigits (n = 10,992; the paper reports
  NMI 0.80 and 1.01 s), U-SENC likewise, and the recall of the approximate 5 nearest
  representatives against the exact ones.
* ``scale --n 1000000 --d 2,5,10`` -- U-SENC with 20 U-SPEC clusterers on the flower shape
  (``cclust.datasets.make_flower``, extra coordinates noise only), one child process per d:
  time, peak RSS of the child (``ru_maxrss``, the data included), ARI against the shape.
* ``scale --dask 1048576 --n 10000000 --d 2`` -- the same through ``cclust.dask.usenc`` (row
  blocks of that many objects, Dask's threaded scheduler, so one process holds everything and
  its ``ru_maxrss`` is the peak of the whole run).
* ``octave --n 10000,100000`` -- the authors' MATLAB code (``huangdonghere/USPEC_USENC``) under
  GNU Octave on the same data as cclust (pendigits for n = 10,000, the flower for other n), a
  few runs each: NMI distribution and the speed ratio, same machine, same run.

Data: ``/work/shared/data/pendigits.npz`` (or ``--data``); the shapes are generated.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import cclust
from cclust.datasets import make_flower
from cclust.metrics import ari, nmi
from cclust.uspec import approximate_nearest_representatives, hybrid_representatives, uspec

AUTHORS = "huangdonghere/USPEC_USENC"
AUTHORS_COMMIT = "54f0c88e9e1555a8b14d192f6f1215ca4f946874"
AUTHORS_FILES = ("USPEC.m", "USENC.m", "litekmeans.m", "pdist2_fast.m")
HERE = os.path.dirname(os.path.abspath(__file__))


def load_pendigits(path):
    data = np.load(path)
    return np.asarray(data["X"], dtype=np.float64), np.asarray(data["y"], dtype=np.int64)


def summary(values):
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.3f} +- {values.std():.3f} (min {values.min():.3f}, max {values.max():.3f})"


def suite_pendigits(args):
    X, y = load_pendigits(args.data)
    rows = []
    for method in ("uspec", "usenc"):
        scores, times = [], []
        for seed in range(args.seeds if method == "uspec" else max(1, args.seeds // 2)):
            start = time.perf_counter()
            labels = (uspec(X, 10, seed) if method == "uspec" else
                      cclust.get("usenc")(None, 10, X=X, random_state=seed).labels)
            times.append(time.perf_counter() - start)
            scores.append(nmi(labels, y))
        rows.append(f"| {method} | {len(scores)} | {summary(scores)} | {np.median(times):.2f} s "
                    f"(min {min(times):.2f}) |")
    R = hybrid_representatives(X, 1000, 0)
    approx, _ = approximate_nearest_representatives(X, R, 5, 0)
    D = ((X * X).sum(1)[:, None] + (R * R).sum(1)[None, :] - 2 * X @ R.T)
    exact = np.argsort(D, axis=1, kind="stable")[:, :5]
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(approx.tolist(), exact.tolist())])
    print("| method | runs | NMI (sqrt) mean +- sd | time (median) |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nrecall of the approximate 5 nearest of p = {R.shape[0]} representatives on pendigits: {recall:.4f}")


def one_scale_run(n, d, seed, n_jobs, dask_chunks=None, n_partitions=20):
    X, y = make_flower(n, n_features=d, random_state=seed)
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), cpu_seconds()
    if dask_chunks:
        import dask

        from cclust.dask import usenc as dask_usenc

        with dask.config.set(scheduler="threads", num_workers=n_jobs):  # one process: its RSS is the peak
            result = dask_usenc(X, 10, n_partitions=n_partitions, random_state=seed, chunks=dask_chunks)
    else:
        result = cclust.get("usenc")(None, 10, X=X, random_state=seed, n_jobs=n_jobs, n_partitions=n_partitions)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"n": n, "d": d, "seconds": seconds, "cpu": cpu, "peak_rss": peak, "ari": ari(result.labels, y),
            "load": [load, os.getloadavg()[0]]}


def cpu_seconds(who=resource.RUSAGE_SELF):
    """User + system CPU seconds of this process (all its threads) so far."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def suite_scale(args):
    print(f"| n | d | U-SENC (m = {args.m}{', Dask' if args.dask else ''}) time | CPU time | peak RSS of the process | ARI vs shape | load average "
          "(start, end) |\n|---|---|---|---|---|---|---|")
    for n in args.n:
        for d in args.d:
            out = subprocess.run([sys.executable, __file__, "_scale_one", "--n", str(n), "--d", str(d),
                                  "--n-jobs", str(args.n_jobs), "--m", str(args.m), "--dask", str(args.dask)],
                                 stdout=subprocess.PIPE, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {r['n']:,} | {r['d']} | {r['seconds']:.1f} s | {r['cpu']:.1f} s | {r['peak_rss'] / 2**20:,.0f} MiB | "
                  f"{r['ari']:.3f} | {r['load'][0]:.1f}, {r['load'][1]:.1f} |", flush=True)


def authors_code(target):
    """Check the authors' files out of the fetched mirror into ``target``."""
    mirror = "/work/.mirror/huangdonghere+USPEC_USENC/repo/.git"
    os.makedirs(target, exist_ok=True)
    for name in AUTHORS_FILES:
        text = subprocess.run(["git", "--git-dir", mirror, "show", f"{AUTHORS_COMMIT}:{name}"],
                              capture_output=True, check=True).stdout
        with open(os.path.join(target, name), "wb") as handle:
            handle.write(text)
    return target


def suite_octave(args):
    from scipy.io import loadmat, savemat

    code = authors_code(args.authors)
    print("| data | n | method | implementation | runs | NMI (sqrt) | median time | CPU time per run | speed ratio "
          "(time; CPU) | load average (start, end) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.n:
        if n == 10_000:
            X, y = load_pendigits(args.data)
            name = "pendigits"
        else:
            X, y = make_flower(n, random_state=0)
            name = "flower"
        k = int(y.max()) + 1
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "data.mat")
            savemat(data, {"fea": X, "k": k})
            for method in args.methods:
                out = os.path.join(tmp, "out.mat")
                load = os.getloadavg()[0]
                # The Octave process's CPU time (all threads, start-up and data loading included) per run.
                their_cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
                subprocess.run(["octave-cli", "--no-gui", "-q", os.path.join(HERE, "octave_uspec.m"), code, data,
                                method, str(args.runs), out], capture_output=True, check=True, cwd=tmp)
                their_cpu = (cpu_seconds(resource.RUSAGE_CHILDREN) - their_cpu) / args.runs
                their_load = (load, os.getloadavg()[0])
                got = loadmat(out)
                theirs = [nmi(got["labels"][:, j].astype(np.int64), y) for j in range(args.runs)]
                their_time = float(np.median(got["seconds"]))
                ours, times, cpus = [], [], []
                load = os.getloadavg()[0]
                for seed in range(args.runs):
                    start, cpu = time.perf_counter(), cpu_seconds()
                    labels = (uspec(X, k, seed, n_representatives=1000) if method == "uspec" else
                              cclust.get("usenc")(None, k, X=X, n_representatives=1000, random_state=seed).labels)
                    times.append(time.perf_counter() - start)
                    cpus.append(cpu_seconds() - cpu)
                    ours.append(nmi(labels, y))
                our_time, our_cpu = float(np.median(times)), float(np.median(cpus))
                print(f"| {name} | {X.shape[0]:,} | {method} | authors (Octave) | {args.runs} | {summary(theirs)} | "
                      f"{their_time:.2f} s | {their_cpu:.2f} s | 1 | {their_load[0]:.1f}, {their_load[1]:.1f} |")
                print(f"| {name} | {X.shape[0]:,} | {method} | cclust | {args.runs} | {summary(ours)} | "
                      f"{our_time:.2f} s | {our_cpu:.2f} s | {their_time / our_time:.1f}x; {their_cpu / our_cpu:.1f}x | "
                      f"{load:.1f}, {os.getloadavg()[0]:.1f} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", choices=["pendigits", "scale", "octave", "_scale_one"])
    parser.add_argument("--data", default="/work/shared/data/pendigits.npz")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n", type=lambda s: [int(v) for v in s.split(",")], default=[1_000_000])
    parser.add_argument("--d", type=lambda s: [int(v) for v in s.split(",")], default=[2, 5, 10])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--m", type=int, default=20, help="U-SPEC clusterers of U-SENC (scale suite)")
    parser.add_argument("--dask", type=int, default=0,
                        help="scale suite: rows per Dask block (0: in memory); Dask's threaded scheduler")
    parser.add_argument("--methods", type=lambda s: s.split(","), default=["uspec", "usenc"])
    parser.add_argument("--authors", default=os.path.join(tempfile.gettempdir(), "uspec_authors"))
    args = parser.parse_args(argv)
    if args.suite == "_scale_one":
        print(json.dumps(one_scale_run(args.n[0], args.d[0], 0, args.n_jobs, args.dask, args.m)))
    else:
        {"pendigits": suite_pendigits, "scale": suite_scale, "octave": suite_octave}[args.suite](args)


if __name__ == "__main__":
    main()
