"""Graph consensus side by side: cclust's CSPA, MCLA, HBGF (and HGPA if cclust-hypergraph is
installed) against ``cchbgf`` (HBGF by spectral partitioning), on the same ensembles.

Datasets: digits (scikit-learn's 1,797 8x8 digits, K = 10), letter (20,000 x 16, K = 26) and
birch1 (100,000 x 2, K = 100) from ``../shared/data/large``. Ensembles: r = 100 partitions of the
``kmeans`` generator with K_i = K (one k-means run each, ``max_iter=20`` to keep generation
short; generation is not timed), cached in ``--cache``. Every method gets the same ensemble and
``random_state=0``; wall time of the consensus call only, ARI against the classes.

    python benchmarks/bench_graph.py --output /tmp/issue5_benchmarks.md
    python benchmarks/bench_graph.py --sizes 1797 20000

CSPA runs dense at n = 1,797 and above ``--dense-limit`` objects through the sparse route:
each object's ``n_neighbors`` (default 30) strongest co-associations among ``n_candidates``
(default 300) sampled candidates. Timings are taken on a 2-core machine shared with other jobs.
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
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cclust  # noqa: E402
from cclust.metrics import ari  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data", "large"))


def load(n):
    if n == 1797:
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return "digits", X.astype(np.float64), y
    name = {20000: "letter", 100000: "birch1"}[n]
    with np.load(os.path.join(DATA, f"{name}.npz"), allow_pickle=False) as z:
        X, y = np.array(z["X"], dtype=np.float64), np.array(z["y"], dtype=np.int64)
    return name, X, y


def ensemble(name, X, k, r, cache):
    path = os.path.join(cache, f"bench_graph_{name}_{r}.npy")
    if os.path.exists(path):
        return cclust.Ensemble(np.load(path))
    E = cclust.generate("kmeans", X, k, n_partitions=r, k_range=(k, k), max_iter=20, random_state=0)
    np.save(path, E.labels)
    return E


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1797, 20000, 100000])
    parser.add_argument("--r", type=int, default=100)
    parser.add_argument("--n-neighbors", type=int, default=30)
    parser.add_argument("--n-candidates", type=int, default=300)
    parser.add_argument("--dense-limit", type=int, default=5000)
    parser.add_argument("--cache", default="/tmp")
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")

    methods = ["cspa", "mcla", "hbgf"]
    if "hgpa" in cclust.available(kind="consensus"):
        methods.append("hgpa")
    try:
        import ccHBGF
    except ImportError:
        ccHBGF = None

    lines = ["# Graph consensus: cclust vs cchbgf", "",
             f"Command: `python benchmarks/bench_graph.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
             f"Machine: {platform.platform()}, Python {platform.python_version()}; 2 cores shared with "
             "other jobs (timings under contention).",
             f"r = {args.r} k-means partitions with K_i = K; seconds of the consensus call; ARI vs classes.", "",
             "| data (n, K) | method | seconds | ARI |", "|---|---|---|---|"]
    for n in args.sizes:
        name, X, y = load(n)
        k = int(y.max()) + 1
        E = ensemble(name, X, k, args.r, args.cache)
        rows = []
        for method in methods:
            params = {}
            if method == "cspa" and n > args.dense_limit:
                params["n_neighbors"] = args.n_neighbors
                params["n_candidates"] = args.n_candidates
            fn = cclust.get(method)
            seconds, res = timed(lambda: fn(E, k, random_state=0, **params))
            label = method + (f" (n_neighbors={args.n_neighbors}, n_candidates={args.n_candidates})"
                              if params else "")
            rows.append((f"cclust {label}", seconds, ari(res.labels, y)))
            print(name, rows[-1], flush=True)
        if ccHBGF is not None:
            L = np.asarray(E.labels)
            # cchbgf passes an int random_state to scipy's svds as a RandomState, which SciPy
            # >= 1.15 rejects, and a Generator to scikit-learn, which rejects it too: seed NumPy's
            # global state instead and pass None.
            np.random.seed(0)
            seconds, labels = timed(lambda: ccHBGF.find_consensus(L, n_clusters=k, random_state=None))
            rows.append(("cchbgf (spectral HBGF)", seconds, ari(np.asarray(labels), y)))
            print(name, rows[-1], flush=True)
        for method, seconds, score in rows:
            lines.append(f"| {name} ({n}, {k}) | {method} | {seconds:.2f} | {score:.4f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
