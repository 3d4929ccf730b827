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
* ``octave --data letter --runs 10 --usenc-runs 10`` (or ``mnist``, ``pendigits``, ``flower``, a
  ``.npz`` path; comma separated) -- the same on a named shared data set, one line per method:
  both NMI spreads, whether each mean lies in the other's [min, max], Welch's p, median wall and
  CPU seconds of each code, the ratio, the load average, and the paper's Tables 4 and 6.
  ``--timeout`` stops the authors' code after that many seconds, keeping its finished runs.
* ``small --runs 10`` -- U-SENC on every shared data set of fewer than 1,000 objects
  (``../shared/data/MANIFEST.csv``, or ``--data`` paths): the authors' ``USENC.m`` under
  Octave against cclust with the authors' parameters (p = 1,000 lowered to n, K = 5, m = 20,
  K_i in [20, 60]), NMI mean and sd of each, Welch's p, the base partitions' NMI, how many
  runs' ensembles leave the consensus graph in k or more connected components (then the
  transfer cut can only return unions of them), and the diagnostics: cclust on the rows
  in a random order (ties between equal distances broken at random, as the authors' randomly
  ordered representatives do), cclust's defaults, and the authors' ensemble (their ``USPEC.m``
  20 times, ``octave_usenc_ensemble.m``) fused by cclust's ``tcut``; ``--variants jitter`` adds
  cclust with every clusterer on X plus its own noise of 1e-9 feature sd (distances that differ
  by rounding only become ties broken at random, as in the authors' BLAS-computed distances);
  ``--skip-authors`` runs cclust's columns alone.

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
    X, y = load_pendigits(args.data[0] if args.data else f"{DATA}/pendigits.npz")
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


# The paper's data sets that are shared here, and its Tables 4 and 6 (NMI % mean, sd over 20 runs;
# seconds on the authors' PC) for U-SPEC and U-SENC. Its MNIST is all 70,000 images; the shared
# mnist_test is the 10,000-image test part only. Letters and PenDigits are the authors' own files
# (data_Letters.mat, data_PenDigits.mat in their repository) up to the row order, unscaled.
DATA = "/work/shared/data"
SETS = {
    "pendigits": (f"{DATA}/pendigits.npz", {"uspec": (80.30, 2.18, 1.01), "usenc": (85.34, 0.91, 19.13)}),
    "letter": (f"{DATA}/large/letter.npz", {"uspec": (42.53, 1.32, 1.44), "usenc": (45.90, 0.58, 21.44)}),
    "mnist": (f"{DATA}/mnist_test.npz", {"uspec": (67.43, 1.55, 7.48), "usenc": (75.02, 0.81, 131.60)}),
}


def octave_data(name, n):
    """X, y, name and the paper's numbers of one data set of the octave suite."""
    if name is None:  # the first comparison: pendigits for n = 10,000, the flower otherwise
        name = "pendigits" if n == 10_000 else "flower"
    if name == "flower":
        X, y = make_flower(n, random_state=0)
        return X, y, name, {}
    path, published = SETS.get(name, (name, {}))
    X, y = load_pendigits(path)
    return X, y, os.path.splitext(os.path.basename(name))[0], published


def run_authors(code, data, method, runs, timeout, cwd):
    """The authors' code under Octave: NMI labels, wall and CPU seconds of the runs it finished."""
    from scipy.io import loadmat

    out = os.path.join(cwd, f"{method}.mat")
    command = ["octave-cli", "--no-gui", "-q", os.path.join(HERE, "octave_uspec.m"), code, data, method,
               str(runs), out]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd,
                             start_new_session=True)
    try:
        _, err = child.communicate(timeout=timeout)
        if child.returncode:
            raise RuntimeError(f"Octave failed: {err.decode()[-2000:]}")
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, 9)  # this child's own process group only
        child.wait()
    if not os.path.exists(out):
        return np.zeros((0, 0), dtype=np.int64), np.zeros(0), np.zeros(0)
    got = loadmat(out)
    done = int(np.ravel(got["done"])[0])
    return (got["labels"][:, :done].astype(np.int64), np.ravel(got["seconds"])[:done],
            np.ravel(got["cpu"])[:done])


def run_ours(X, k, method, runs):
    """cclust with the authors' defaults (p = 1,000, K = 5, m = 20, K_i in [20, 60]), seeds 0..runs-1."""
    labels, seconds, cpu = [], [], []
    for seed in range(runs):
        start, used = time.perf_counter(), cpu_seconds()
        labels.append(uspec(X, k, seed, n_representatives=1000, n_neighbors=5) if method == "uspec" else
                      cclust.get("usenc")(None, k, X=X, n_representatives=1000, n_neighbors=5, n_partitions=20,
                                          k_range=(20, 60), random_state=seed).labels)
        seconds.append(time.perf_counter() - start)
        cpu.append(cpu_seconds() - used)
    return labels, np.array(seconds), np.array(cpu)


def spread(values):
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return "--"
    return f"{values.mean():.3f} +- {values.std(ddof=1) if values.size > 1 else 0.0:.3f} ({values.min():.3f}, {values.max():.3f})"


def within(mean, values):
    """Whether ``mean`` lies in the [min, max] spread of ``values``."""
    return "--" if len(values) == 0 or np.isnan(mean) else ("yes" if min(values) <= mean <= max(values) else "no")


def suite_octave(args):
    """Both codes on the same X, one data set and method after the other (never side by side)."""
    from scipy.io import savemat
    from scipy.stats import ttest_ind

    code = authors_code(args.authors)
    print("| data | n | method | runs (cclust, authors) | cclust NMI mean +- sd (min, max) | authors NMI mean +- sd "
          "(min, max) | cclust mean in authors' range | authors' mean in cclust's range | Welch p | cclust time "
          "(median) | authors time (median) | speed ratio | cclust CPU (median) | authors CPU (median) | load "
          "average (start, end) | paper (Huang et al. 2020, 20 runs) |")
    print("|" + "---|" * 16)
    for name, n in ([(name, None) for name in args.data] if args.data else [(None, n) for n in args.n]):
        X, y, name, published = octave_data(name, n)
        k = int(y.max()) + 1
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "data.mat")
            savemat(data, {"fea": X, "k": k})
            for method in args.methods:
                runs = args.runs if method == "uspec" else (args.usenc_runs or args.runs)
                load = os.getloadavg()[0]
                theirs, their_s, their_cpu = run_authors(code, data, method, runs, args.timeout, tmp)
                labels, our_s, our_cpu = run_ours(X, k, method, runs)
                load = (load, os.getloadavg()[0])
                ours = [nmi(y, got) for got in labels]
                theirs = [nmi(y, theirs[:, j]) for j in range(theirs.shape[1])]
                p = ttest_ind(ours, theirs, equal_var=False).pvalue if len(ours) > 1 and len(theirs) > 1 else np.nan
                their_time = float(np.median(their_s)) if len(their_s) else np.nan
                paper = published.get(method)
                paper = (f"NMI {paper[0] / 100:.3f} +- {paper[1] / 100:.3f}, {paper[2]:.2f} s" if paper else "--")
                print(f"| {name} | {X.shape[0]:,} | {method} | {len(ours)}, {len(theirs)} of {runs} | {spread(ours)} | "
                      f"{spread(theirs)} | {within(np.mean(ours), theirs)} | "
                      f"{within(np.mean(theirs) if theirs else np.nan, ours)} | {p:.2f} | {np.median(our_s):.2f} s | "
                      f"{their_time:.2f} s | {their_time / np.median(our_s):.1f}x | {np.median(our_cpu):.2f} s | "
                      f"{np.median(their_cpu) if len(their_cpu) else np.nan:.2f} s | {load[0]:.1f}, {load[1]:.1f} | "
                      f"{paper} |", flush=True)


def small_sets(limit=1000):
    """(name, path) of the shared data sets with fewer than ``limit`` objects, from the MANIFEST."""
    import csv

    with open(os.path.join(DATA, "MANIFEST.csv"), newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if int(row["n"]) < limit]
    return [(row["name"], os.path.join(DATA, f"{row['name']}.npz")) for row in sorted(rows, key=lambda r: int(r["n"]))
            if os.path.exists(os.path.join(DATA, f"{row['name']}.npz"))]


def run_authors_ensembles(code, data, runs, timeout, cwd):
    """The authors' generation step alone under Octave: an n x 20 x runs array of their labels."""
    from scipy.io import loadmat

    out = os.path.join(cwd, "ensembles.mat")
    command = ["octave-cli", "--no-gui", "-q", os.path.join(HERE, "octave_usenc_ensemble.m"), code, data,
               str(runs), out]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd,
                             start_new_session=True)
    try:
        _, err = child.communicate(timeout=timeout)
        if child.returncode:
            raise RuntimeError(f"Octave failed: {err.decode()[-2000:]}")
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, 9)  # this child's own process group only
        child.wait()
    if not os.path.exists(out):
        return np.zeros((0, 0, 0), dtype=np.int64)
    got = loadmat(out)
    done = int(np.ravel(got["done"])[0])
    return np.asarray(got["ensembles"], dtype=np.int64).reshape(got["ensembles"].shape[0], 20, -1)[:, :, :done]


def ours_small(X, k, seed, variant):
    """One cclust U-SENC labelling of X for the small suite's variants."""
    usenc = cclust.get("usenc")
    if variant == "defaults":
        return usenc(None, k, X=X, random_state=seed).labels
    if variant == "shuffled":  # the rows in a random order, the labels returned in the original one
        order = np.random.default_rng([seed, 7]).permutation(X.shape[0])
        labels = np.empty(X.shape[0], dtype=np.int64)
        labels[order] = usenc(None, k, X=X[order], n_representatives=1000, n_neighbors=5, n_partitions=20,
                              k_range=(20, 60), random_state=seed).labels
        return labels
    if variant == "jitter":  # each clusterer on X plus its own noise of 1e-9 feature sd: near ties at random
        rng = np.random.default_rng([seed, 11])
        columns = [cclust.generate("uspec", X + 1e-9 * X.std(axis=0) * rng.standard_normal(X.shape), k,
                                   n_partitions=1, n_representatives=1000, n_neighbors=5, k_range=(20, 60),
                                   random_state=1000 * seed + i + 1).labels[:, 0] for i in range(20)]
        return cclust.consensus("tcut", np.column_stack(columns), k, random_state=seed).labels
    return usenc(None, k, X=X, n_representatives=1000, n_neighbors=5, n_partitions=20, k_range=(20, 60),
                 random_state=seed).labels


def ours_generated(X, k, seed):
    """cclust's U-SENC with the authors' parameters in its two steps (the same labels as ``usenc``
    with that seed): the consensus labels and the mean NMI-ready ensemble."""
    E = cclust.generate("uspec", X, k, n_partitions=20, n_representatives=1000, n_neighbors=5, k_range=(20, 60),
                        random_state=seed)
    return cclust.consensus("tcut", E, k, random_state=seed).labels, E.labels


def consensus_components(labels):
    """Connected components of the object-cluster graph of a label matrix (n x m)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    n, m = labels.shape
    codes = np.column_stack([np.unique(labels[:, i], return_inverse=True)[1].reshape(-1) for i in range(m)])
    codes = codes + np.concatenate([[0], np.cumsum(codes.max(axis=0) + 1)[:-1]])
    B = sp.csr_matrix((np.ones(n * m), (np.repeat(np.arange(n), m), codes.reshape(-1))),
                      shape=(n, int(codes.max()) + 1))
    return connected_components(sp.bmat([[None, B], [B.T, None]]), directed=False)[0]


def suite_small(args):
    """U-SENC on the shared data sets of n < 1,000: the authors' code, cclust, and diagnostics."""
    from scipy.io import savemat
    from scipy.stats import ttest_ind

    code = authors_code(args.authors)
    sets = ([(os.path.splitext(os.path.basename(p))[0], p) for p in args.data] if args.data else small_sets())
    variants = [v for v in args.variants if v]
    header = ["data", "n", "k", "authors (Octave)", "cclust, authors' parameters", "Welch p",
              "base partitions' NMI: authors", "cclust", "runs with >= k components: authors", "cclust"]
    names = {"shuffled": "cclust, rows in random order", "defaults": "cclust defaults",
             "their-ensemble": "authors' ensemble + cclust tcut",
             "jitter": "cclust, each clusterer on X + 1e-9 sd noise"}
    header += [names[v] for v in variants] + ["load average (start, end)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header), flush=True)
    for name, path in sets:
        X, y = load_pendigits(path)
        k = int(y.max()) + 1
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "data.mat")
            savemat(data, {"fea": X, "k": k})
            if args.skip_authors:
                theirs, ensembles = np.zeros((X.shape[0], 0), dtype=np.int64), np.zeros((X.shape[0], 20, 0))
            else:
                theirs, _, _ = run_authors(code, data, "usenc", args.runs, args.timeout, tmp)
                ensembles = run_authors_ensembles(code, data, args.ensemble_runs, args.timeout, tmp)
            theirs = [nmi(y, theirs[:, j]) for j in range(theirs.shape[1])]
        ours, our_base, our_split = [], [], 0
        for seed in range(args.runs):
            labels, E = ours_generated(X, k, seed)
            ours.append(nmi(y, labels))
            our_split += consensus_components(E) >= k
            our_base.extend(nmi(y, E[:, i]) for i in range(E.shape[1]))
        their_base = [nmi(y, ensembles[:, i, j]) for j in range(ensembles.shape[2]) for i in range(ensembles.shape[1])]
        p = ttest_ind(ours, theirs, equal_var=False).pvalue if len(theirs) > 1 else np.nan
        cells = [name, f"{X.shape[0]:,}", str(k), spread(theirs), spread(ours), f"{p:.2f}",
                 spread(their_base), spread(our_base),
                 f"{sum(consensus_components(ensembles[:, :, j]) >= k for j in range(ensembles.shape[2]))} of "
                 f"{ensembles.shape[2]}", f"{our_split} of {args.runs}"]
        for variant in variants:
            if variant == "their-ensemble":
                scores = [nmi(y, cclust.consensus("tcut", ensembles[:, :, j] - 1, k, random_state=j).labels)
                          for j in range(ensembles.shape[2])]
            else:
                scores = [nmi(y, ours_small(X, k, seed, variant)) for seed in range(args.runs)]
            cells.append(spread(scores))
        cells.append(f"{load:.1f}, {os.getloadavg()[0]:.1f}")
        print("| " + " | ".join(cells) + " |", flush=True)

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", choices=["pendigits", "scale", "clusterers", "octave", "small", "_scale_one", "_generate_one"])
    parser.add_argument("--data", type=lambda s: s.split(","), default=None,
                        help="pendigits suite: a path (default pendigits); octave suite: names "
                             f"({', '.join(SETS)}, flower) or .npz paths, comma separated (default: by --n)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n", type=lambda s: [int(v) for v in s.split(",")], default=[1_000_000])
    parser.add_argument("--d", type=lambda s: [int(v) for v in s.split(",")], default=[2, 5, 10])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="octave suite: runs of each code (U-SPEC)")
    parser.add_argument("--usenc-runs", type=int, default=0, help="octave suite: U-SENC runs (0: --runs)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="octave suite: seconds after which the authors' code is stopped (finished runs kept)")
    parser.add_argument("--m", type=int, default=20, help="U-SPEC clusterers of U-SENC (scale suite)")
    parser.add_argument("--dask", type=int, default=0,
                        help="scale suite: rows per Dask block (0: in memory); Dask's threaded scheduler")
    parser.add_argument("--methods", type=lambda s: s.split(","), default=["uspec", "usenc"])
    parser.add_argument("--ensemble-runs", type=int, default=5,
                        help="small suite: runs of the authors' generation step alone (their ensembles)")
    parser.add_argument("--variants", type=lambda s: s.split(","), default=["shuffled", "defaults", "their-ensemble"],
                        help="small suite: diagnostics to add (shuffled, defaults, their-ensemble, jitter; '' for none)")
    parser.add_argument("--skip-authors", action="store_true",
                        help="small suite: cclust's columns only (no Octave)")
    parser.add_argument("--authors", default=os.path.join(tempfile.gettempdir(), "uspec_authors"))
    args = parser.parse_args(argv)
    if args.suite == "_scale_one":
        print(json.dumps(one_scale_run(args.n[0], args.d[0], 0, args.n_jobs, args.dask, args.m)))
    elif args.suite == "_generate_one":
        print(json.dumps(one_generation_run(args.n[0], args.d[0], args.m, args.dask)))
    else:
        {"pendigits": suite_pendigits, "scale": suite_scale, "clusterers": suite_clusterers,
         "octave": suite_octave, "small": suite_small}[args.suite](args)


if __name__ == "__main__":
    main()
