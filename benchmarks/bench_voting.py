"""IVC / IPVC speed against the `iterative-voting-consensus` PyPI package, in one run.

The package (``pip install iterative-voting-consensus``; imported as ``ivc``; not a cclust
dependency; it pins numpy<2, so install it in a separate virtual environment together with
cclust rather than into your working one) runs one restart from a labelling ``pi_init`` for at most ``n_iter`` passes. Both
sides get the same ensemble (r k-means partitions, K_i uniform in [2, 2K], the protocol of Wu et al. 2015) and
the same random initial labelling; the package runs exactly 5 passes (``n_iter=5, tol=0``) and
cclust at most 5 (``max_iter=5``; it stops earlier if the labels are stable), so the ratio is
at equal work. Also shown: the package with its defaults (``tol=0.1``), cclust run from the same
start to convergence, and cclust's default (10 restarts from base partitions, Nguyen & Caruana 2007, sec. 8),
with ARI against the classes and the number of non-empty clusters each returns.

Usage::

    python benchmarks/bench_voting.py                      # digits (1,797), letter (20,000), breast cancer
    python benchmarks/bench_voting.py --datasets digits --repeats 5 --output /tmp/table.md
"""
import argparse
import os
import platform
import time
import warnings

import numpy as np

import cclust
from _common import best_of, write_report

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def load(name):
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X.astype(np.float64), y
    if name == "breast-cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        return X, y
    path = os.path.join(DATA, "large" if name == "letter" else "", f"{name}.npz")
    with np.load(path, allow_pickle=False) as z:
        return np.array(z["X"], dtype=np.float64), np.array(z["y"], dtype=np.int64)




def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["digits", "letter", "breast-cancer"])
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--package-ipvc-max-n", type=int, default=5000,
                        help="skip the package's IPVC above this n (it allocates n x |P_k| x r booleans)")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()

    try:
        from ivc.algorithms import iterative_probabilistic_voting_consensus as package_ipvc
        from ivc.algorithms import iterative_voting_consensus as package_ivc
    except ImportError as exc:
        raise SystemExit("pip install iterative-voting-consensus to run this benchmark") from exc
    ari = cclust.get("ari")
    ours = {"ivc": cclust.get("ivc"), "ipvc": cclust.get("ipvc")}
    package = {"ivc": package_ivc, "ipvc": package_ipvc}

    lines = []
    for name in args.datasets:
        X, y = load(name)
        k = int(y.max()) + 1
        start = time.perf_counter()
        E = cclust.generate("kmeans", X, k, n_partitions=args.partitions, k_range=(2, 2 * k),
                            random_state=args.seed)
        t_gen = time.perf_counter() - start
        L = np.asarray(E.labels, dtype=np.int64)
        init = np.random.default_rng(args.seed).integers(0, k, size=E.n_samples)
        print(f"{name}: n={E.n_samples} r={E.n_partitions} K={k} (ensemble in {t_gen:.1f} s)", flush=True)
        for method in ("ivc", "ipvc"):
            row = {"data": name, "n": E.n_samples, "K": k, "method": method}
            fn = ours[method]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # max_iter=5 may stop before convergence
                t5, res5 = best_of(lambda: fn(E, k, init=init, max_iter=5), args.repeats)
            tconv, resc = best_of(lambda: fn(E, k, init=init), args.repeats)
            tdef, resd = best_of(lambda: fn(E, k, random_state=args.seed), args.repeats)
            if method == "ipvc" and E.n_samples > args.package_ipvc_max_n:
                gb = E.n_samples * (E.n_samples / k) * E.n_partitions / 2**30
                pkg5 = pkgd = None
                note = f"package not run: about {gb:.1f} GiB of temporaries per cluster"
            else:
                pkg5, lab5 = best_of(lambda: package[method](L, k, n_iter=5, tol=0.0, verbose=False, pi_init=init),
                                   1 if method == "ipvc" else args.repeats)
                pkgd, labd = best_of(lambda: package[method](L, k, verbose=False, pi_init=init),
                                   1 if method == "ipvc" else args.repeats)
                note = (f"package: {len(np.unique(lab5))} clusters after 5 passes, "
                        f"ARI {ari(y, lab5):.3f}; defaults {len(np.unique(labd))} clusters, ARI {ari(y, labd):.3f}")
            row.update(t_pkg5=pkg5, t_pkg_default=pkgd, t5=t5, n5=res5.n_iter, t_conv=tconv, n_conv=resc.n_iter,
                       t_default=tdef, k5=res5.n_clusters, ari5=ari(y, res5.labels),
                       ari_conv=ari(y, resc.labels), ari_default=ari(y, resd.labels),
                       k_default=resd.n_clusters, note=note)
            lines.append(row)
            ratio = f"{pkg5 / t5:.0f}x" if pkg5 else "n/a"
            print(f"  {method}: package 5 passes {pkg5 if pkg5 is None else round(pkg5, 3)} s, cclust "
                  f"{t5 * 1e3:.1f} ms ({res5.n_iter} passes) -> {ratio}; {note}", flush=True)

    fmt = lambda t: "n/a" if t is None else (f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s")
    out = ["| data | n | K | method | package, 5 passes | cclust, same start, <= 5 passes | speed-up | "
           "package defaults | cclust to convergence (passes) | cclust default, 10 restarts | "
           "ARI package-5 / cclust-5 / cclust default | clusters cclust-5 / default | notes |",
           "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |"]
    for row in lines:
        ratio = f"{row['t_pkg5'] / row['t5']:.0f}x" if row["t_pkg5"] else "n/a"
        ari_pkg = row["note"].split("ARI ")[1].split(";")[0] if row["t_pkg5"] else "n/a"
        out.append(f"| {row['data']} | {row['n']} | {row['K']} | {row['method']} | {fmt(row['t_pkg5'])} | "
                   f"{fmt(row['t5'])} ({row['n5']}) | {ratio} | {fmt(row['t_pkg_default'])} | "
                   f"{fmt(row['t_conv'])} ({row['n_conv']}) | {fmt(row['t_default'])} | "
                   f"{ari_pkg} / {row['ari5']:.3f} / {row['ari_default']:.3f} | {row['k5']} / {row['k_default']} | "
                   f"{row['note']} |")
    from cclust._ext import _contingency

    header = [f"Command: `python benchmarks/bench_voting.py {' '.join(os.sys.argv[1:])}`".rstrip(),
              f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"OpenMP {'on' if _contingency.openmp_enabled() else 'off'}; best of {args.repeats} "
              "(package IPVC: one run). r = "
              f"{args.partitions} k-means partitions, K_i in [2, 2K], seed {args.seed}.", ""]
    text = "\n".join(header + out) + "\n"
    write_report(text, args.output)


if __name__ == "__main__":
    main()
