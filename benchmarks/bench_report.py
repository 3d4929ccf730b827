"""The whole HTML report (``cclust report``): wall time on iris and on a large single-cell-like
data set, and the time of each step.

The large set imitates a scanpy user's AnnData after ``sc.pp.pca``: ``--n`` cells (default
100000) in ``--clusters`` Gaussian populations of unequal sizes in a 50-dimensional "X_pca"
(``obsm``), with a few hundred "genes" in ``X`` that nothing reads. With anndata installed the
AnnData is written to an ``.h5ad`` file and the report is the command ``cclust report FILE.h5ad
--use-rep X_pca -o FILE.html``, timed from its start to its end (reading the file included);
without anndata, the same features go to :func:`cclust.report.build_report` as an array.

The load average (``os.getloadavg``) is printed before and after: on a shared machine, times
are only comparable at a similar load::

    python benchmarks/bench_report.py                 # iris, then 100000 cells
    python benchmarks/bench_report.py --n 20000 --skip-iris
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load():
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def cells(n, clusters, dims, seed=0):
    """(X_pca, genes): Gaussian populations of sizes in proportion 1, 2, ..., ``clusters``."""
    rng = np.random.default_rng(seed)
    sizes = np.arange(1, clusters + 1, dtype=float)
    sizes = np.floor(n * sizes / sizes.sum()).astype(int)
    sizes[-1] += n - sizes.sum()
    centres = rng.normal(0.0, 4.0, (clusters, dims))
    X = np.vstack([rng.normal(c, 1.0, (s, dims)) for c, s in zip(centres, sizes)])
    order = rng.permutation(n)
    genes = rng.poisson(1.0, (n, 200)).astype(np.float32)
    return X[order], genes


def timed_report(argv, label):
    from cclust import cli

    start = time.perf_counter()
    code = cli.main(argv)
    took = time.perf_counter() - start
    print(f"{label}: {took:.1f} s (exit {code}; {load()})", flush=True)
    return took


def steps(X, **kwargs):
    """Each step of the report on its own, for where the time goes."""
    import cclust
    from cclust.report import build_report

    start = time.perf_counter()
    report = build_report(X, **kwargs)
    built = time.perf_counter() - start
    page = report.to_html()
    rendered = time.perf_counter() - start - built
    print(f"  build_report {built:.1f} s (select_k route {report.select.route}"
          + (f", sketch of {report.select.sketch.shape[0]}" if report.select.sketch is not None else "")
          + f", K = {report.select.best_k}), to_html {rendered:.1f} s, page {len(page) // 1024} KiB", flush=True)
    for row in report.methods:
        print(f"  {row['method']}: {row['seconds']:.2f} s", flush=True)
    del cclust


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100000, help="cells of the large set (default 100000)")
    parser.add_argument("--clusters", type=int, default=6)
    parser.add_argument("--dims", type=int, default=50)
    parser.add_argument("--skip-iris", action="store_true")
    parser.add_argument("--steps", action="store_true", help="also time build_report and to_html apart")
    args = parser.parse_args()
    print(f"start: {load()}; {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        if not args.skip_iris:
            timed_report(["report", "iris", "-o", os.path.join(folder, "iris.html")], "cclust report iris")
        X, genes = cells(args.n, args.clusters, args.dims)
        try:
            import anndata
        except ImportError:
            anndata = None
        if anndata is not None:
            path = os.path.join(folder, "cells.h5ad")
            anndata.AnnData(genes, obsm={"X_pca": X}).write_h5ad(path)
            timed_report(["report", path, "--use-rep", "X_pca", "-o", os.path.join(folder, "cells.html")],
                         f"cclust report cells.h5ad ({args.n} cells, {args.dims} PCs)")
        else:
            from cclust.report import build_report

            start = time.perf_counter()
            build_report(X).to_html(os.path.join(folder, "cells.html"))
            print(f"build_report + to_html ({args.n} objects, no anndata): {time.perf_counter() - start:.1f} s "
                  f"({load()})", flush=True)
        if args.steps:
            steps(X)
    print(f"end: {load()}", flush=True)


if __name__ == "__main__":
    main()
