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
* ``clusterers --n 1000000 --m 2 --dask 1048576`` -- the CPU seconds per U-SPEC clusterer of
  U-SENC's generation alone (``uspec_ensemble``, m clusterers), in memory (one thread) and
  through ``cclust.dask.uspec_ensemble`` (Dask's threaded scheduler, blocks of ``--dask`` rows),
  each in a child process, and whether the two ensembles are equal.
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


def one_generation_run(n, d, m, dask_chunks):
    """CPU seconds (user + system, all threads) of generating m U-SPEC clusterers, and a digest of
    the ensemble's labels."""
    import hashlib

    X, _ = make_flower(n, n_features=d, random_state=0)
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), cpu_seconds()
    if dask_chunks:
        import dask

        from cclust.dask import uspec_ensemble

        with dask.config.set(scheduler="threads", num_workers=2):
            labels = uspec_ensemble(X, 10, n_partitions=m, random_state=0, chunks=dask_chunks).compute().labels
    else:
        from cclust.uspec import uspec_ensemble

        labels = uspec_ensemble(X, 10, n_partitions=m, random_state=0, n_jobs=1).labels
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    return {"seconds": seconds, "cpu": cpu, "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "digest": hashlib.sha1(np.ascontiguousarray(labels, dtype=np.int64).tobytes()).hexdigest()[:12],
            "load": [load, os.getloadavg()[0]]}


def suite_clusterers(args):
    print(f"| n | d | path | m | time | CPU time | CPU per clusterer | peak RSS | labels (sha1) | load average "
          "(start, end) |\n|---|---|---|---|---|---|---|---|---|---|")
    for n in args.n:
        for d in args.d:
            for chunks in (0, args.dask):
                out = subprocess.run([sys.executable, __file__, "_generate_one", "--n", str(n), "--d", str(d),
                                      "--m", str(args.m), "--dask", str(chunks)],
                                     stdout=subprocess.PIPE, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                path = f"Dask, blocks of {chunks:,}" if chunks else "in memory, 1 thread"
                print(f"| {n:,} | {d} | {path} | {args.m} | {r['seconds']:.1f} s | {r['cpu']:.1f} s | "
                      f"{r['cpu'] / args.m:.2f} s | {r['peak_rss'] / 2**20:,.0f} MiB | {r['digest']} | "
                      f"{r['load'][0]:.1f}, {r['load'][1]:.1f} |", flush=True)


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
    print("| data | n | method | implementation | runs | NMI (sqrt) | median time | speed ratio |")
    print("|---|---|---|---|---|---|---|---|")
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
                subprocess.run(["octave-cli", "--no-gui", "-q", os.path.join(HERE, "octave_uspec.m"), code, data,
                                method, str(args.runs), out], capture_output=True, check=True, cwd=tmp)
                got = loadmat(out)
                theirs = [nmi(got["labels"][:, j].astype(np.int64), y) for j in range(args.runs)]
                their_time = float(np.median(got["seconds"]))
                ours, times = [], []
                for seed in range(args.runs):
                    start = time.perf_counter()
                    labels = (uspec(X, k, seed, n_representatives=1000) if method == "uspec" else
                              cclust.get("usenc")(None, k, X=X, n_representatives=1000, random_state=seed).labels)
                    times.append(time.perf_counter() - start)
                    ours.append(nmi(labels, y))
                our_time = float(np.median(times))
                print(f"| {name} | {X.shape[0]:,} | {method} | authors (Octave) | {args.runs} | {summary(theirs)} | "
                      f"{their_time:.2f} s | 1 |")
                print(f"| {name} | {X.shape[0]:,} | {method} | cclust | {args.runs} | {summary(ours)} | "
                      f"{our_time:.2f} s | {their_time / our_time:.1f}x |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", choices=["pendigits", "scale", "clusterers", "octave", "_scale_one", "_generate_one"])
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
    elif args.suite == "_generate_one":
        print(json.dumps(one_generation_run(args.n[0], args.d[0], args.m, args.dask)))
    else:
        {"pendigits": suite_pendigits, "scale": suite_scale, "clusterers": suite_clusterers,
         "octave": suite_octave}[args.suite](args)


if __name__ == "__main__":
    main()
