"""KCC speed against the anchors, in one run: scikit-learn's KMeans on the same one-hot matrix
(dense and CSR), and ccHBGF (HBGF by spectral partitioning) where installed.

cclust's ``kcc`` (Uc, equal weights) minimises sum_x sum_i w_i ||x_i - m_{k,i}||^2 with
w_i = 1/r, i.e. scikit-learn's inertia on the one-hot matrix divided by r; both objectives are
printed on scikit-learn's scale (cclust's times r). Both sides use k-means++ seeding and the
same number of restarts.

Usage::

    python benchmarks/bench_kcc.py                       # pendigits (if ../shared/data) + synthetic 1e5
    python benchmarks/bench_kcc.py --sizes 100000 1000000 --dense-max 20000 --output table.md
"""
import argparse
import os
import platform

import numpy as np

import cclust
from _common import best_of, write_report


def synthetic_ensemble(n, r, k, seed):
    """r noisy copies of a K-cluster truth, K_i in [K, 2K], built chunk by chunk."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, size=n)
    L = np.empty((n, r), dtype=np.int32)
    for i in range(r):
        ki = int(rng.integers(k, 2 * k + 1))
        split = rng.integers(0, ki, size=k)  # each true cluster maps to one label, some noise
        col = split[truth]
        noise = rng.random(n) < 0.2
        col[noise] = rng.integers(0, ki, size=int(noise.sum()))
        L[:, i] = col
    return cclust.Ensemble(L), truth


def pendigits_ensemble(seed):
    path = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "pendigits.npz")
    if not os.path.exists(path):
        return None
    with np.load(path, allow_pickle=False) as data:
        X, y = data["X"], data["y"]
    E = cclust.generate("kmeans", X, 10, n_partitions=100, k_range=(2, 20), random_state=seed)
    return E, y




def cpu_ghz():
    try:
        with open("/proc/cpuinfo") as handle:
            mhz = [float(line.split(":")[1]) for line in handle if line.startswith("cpu MHz")]
        return max(mhz) / 1000 if mhz else None
    except OSError:
        return None


def bench(label, E, y, k, n_init, dense_max, repeats, rows, threads):
    ari = cclust.get("ari")
    r = E.n_partitions
    t_kcc, res = best_of(lambda: cclust.consensus("kcc", E, k, utility="uc", init="k-means++",
                                                  n_init=n_init, random_state=0, n_jobs=threads), repeats)
    t_random, res_random = best_of(lambda: cclust.consensus("kcc", E, k, utility="uc", init="random",
                                                            n_init=n_init, random_state=0, n_jobs=threads), repeats)
    passes = int(res.extras["n_iter_per_restart"].sum() + n_init)
    adds = E.n_samples * r * k * passes
    obj = res.extras["kmeans_objective"] * r
    row = {"data": label, "n": E.n_samples, "r": r, "K": k, "kcc_s": t_kcc, "kcc_obj": obj,
           "kcc_random_s": t_random, "kcc_random_obj": res_random.extras["kmeans_objective"] * r,
           "kcc_ari": ari(y, res.labels) if y is not None else float("nan"),
           "adds_per_s": adds / t_kcc}
    try:
        from sklearn.cluster import KMeans
    except ImportError:
        KMeans = None
    if KMeans is not None:
        B = E.one_hot()
        for fmt, M in (("csr", B), ("dense", None)):
            if fmt == "dense":
                if E.n_samples > dense_max:
                    continue
                M = B.toarray()
            km = KMeans(k, n_init=n_init, random_state=0)
            t, fitted = best_of(lambda: km.fit(M), 1)
            row[f"sk_{fmt}_s"] = t
            row[f"sk_{fmt}_obj"] = fitted.inertia_
    try:
        import ccHBGF

        L = np.asarray(E.labels)
        t, labels = best_of(lambda: ccHBGF.find_consensus(L, n_clusters=k, random_state=0), 1)
        row["cchbgf_s"] = t
        row["cchbgf_ari"] = ari(y, labels) if y is not None else float("nan")
    except ImportError:
        pass
    rows.append(row)
    print(row, flush=True)


def table(rows, threads, n_init):
    ghz = cpu_ghz()
    cores = len(os.sched_getaffinity(0))
    head = ("| data | n | r | K | kcc k-means++ (s) | kcc random (s) | sklearn CSR (s) | ratio | "
            "sklearn dense (s) | ratio | ccHBGF (s) | ratio | objective kcc++ / kcc random / sklearn CSR | "
            "ARI kcc / ccHBGF | adds/s |")
    lines = [head, "|" + " --- |" * 15]
    for row in rows:
        def ratio(key):
            return f"{row[key] / row['kcc_s']:.1f}x" if key in row else "-"

        def sec(key):
            return f"{row[key]:.3f}" if key in row else "-"

        sk = f"{row['sk_csr_obj']:.1f}" if "sk_csr_obj" in row else "-"
        obj = f"{row['kcc_obj']:.1f} / {row['kcc_random_obj']:.1f} / {sk}"
        aris = f"{row['kcc_ari']:.3f} / {row['cchbgf_ari']:.3f}" if "cchbgf_ari" in row else f"{row['kcc_ari']:.3f} / -"
        lines.append(f"| {row['data']} | {row['n']} | {row['r']} | {row['K']} | {row['kcc_s']:.3f} | "
                     f"{row['kcc_random_s']:.3f} | "
                     f"{sec('sk_csr_s')} | {ratio('sk_csr_s')} | {sec('sk_dense_s')} | {ratio('sk_dense_s')} | "
                     f"{sec('cchbgf_s')} | {ratio('cchbgf_s')} | {obj} | {aris} | {row['adds_per_s']:.3g} |")
    bound = cores * (ghz or 0) * 1e9 * 4  # two 2-wide double adds per cycle per core (SSE2)
    lines.append("")
    lines.append(f"Ratios are anchor time / cclust's k-means++ time (higher = cclust faster). Restarts: "
                 f"n_init={n_init} on both sides; scikit-learn uses its greedy k-means++, cclust's kcc "
                 f"Arthur & Vassilvitskii's (the KCC++ of Li & Liu 2018) or KCC's random objects. adds/s counts the "
                 f"distance-table adds of the k-means++ run (n r K per pass, seeding and Gamma "
                 f"included in the time) against a machine bound of about {bound:.3g} adds/s "
                 f"({cores} cores x {ghz or float('nan'):.2f} GHz x 4 doubles/cycle). Threads: {threads}. "
                 f"{platform.processor() or platform.machine()}, Python {platform.python_version()}.")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--dense-max", type=int, default=20_000, help="largest n for the dense one-hot anchor")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--no-pendigits", action="store_true")
    parser.add_argument("--output")
    args = parser.parse_args()
    rows = []
    if not args.no_pendigits:
        loaded = pendigits_ensemble(0)
        if loaded is not None:
            bench("pendigits", loaded[0], loaded[1], 10, args.n_init, args.dense_max, args.repeats, rows, args.threads)
    for n in args.sizes:
        E, truth = synthetic_ensemble(n, args.partitions, args.k, seed=1)
        bench("synthetic", E, truth, args.k, args.n_init, args.dense_max, args.repeats, rows, args.threads)
    text = table(rows, args.threads or "all", args.n_init)
    write_report(text, args.output)


if __name__ == "__main__":
    main()
