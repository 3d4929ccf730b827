"""Sparse kNN co-association: quality against the exact/dense routes, and scale to n = 10^6.

Run ``python benchmarks/bench_sparse.py`` (both parts), ``--part quality`` or ``--part scale``;
``--out FILE`` also writes the Markdown tables. Every case runs in a fresh subprocess so that its
peak RSS (``ru_maxrss``) is its own.

quality (letter, n = 20,000, from ../shared/data/large; k-means ensemble r = 100, K_i in [10, 50]):
  * recall of the true top-30 co-associations kept by ``Ensemble.knn_coassociation(30)``
    (ties at the 30th value count as hits; the truth is computed exactly in row blocks);
  * CSPA on the kNN graph (``neighbors="lsh"``) against CSPA on the exact top-30 graph
    (every pair scored, O(n^2 r / K) time) and, on a 5,000-object subsample, against dense CSPA;
  * EAC single linkage on the kNN graph against dense single linkage on the 5,000 subsample;
  * dense CSPA against itself with another METIS seed (the noise floor of these ARIs).
  The dense routes do not fit at n = 20,000 on this machine (CSPA's dense graph needs about
  17 GB, EAC's float64 distances 8 GB), which is the point of the sparse route.

scale (synthetic, labels drawn directly, r = 100, K_i in [10, 50]): a planted 20-cluster truth,
each partition a random coarsening/relabelling of it with 20% of the labels redrawn at random
(so nearly every label row is distinct: the hard case for the duplicate collapse), at n = 10^5
and 10^6: time and peak RSS of knn_coassociation(30), CSPA (lsh) and EAC single linkage (sparse).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _common import cpu_model, write_report  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "large")
K_NEIGHBORS = 30


def letter_ensemble(n_sub=None):
    import cclust

    d = np.load(os.path.join(DATA, "letter.npz"))
    X, y = d["X"].astype(np.float64), d["y"]
    if n_sub is not None:
        idx = np.random.default_rng(0).choice(X.shape[0], size=n_sub, replace=False)
        X, y = X[idx], y[idx]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    # The cases run in separate processes: generate the ensemble once and reuse it.
    cache = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"cclust_bench_sparse_letter_{n_sub}.npy")
    if os.path.exists(cache):
        return cclust.Ensemble(np.load(cache)), y
    E = cclust.generate("kmeans", X, 26, n_partitions=100, k_range=(10, 50), random_state=0, n_jobs=2)
    np.save(cache, E.labels)
    return E, y


def planted_ensemble(n, r=100, n_groups=20, noise=0.2, seed=0):
    from cclust import Ensemble

    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_groups, size=n)
    L = np.empty((n, r), dtype=np.int32)
    for j in range(r):
        k = int(rng.integers(10, 51))
        col = rng.integers(0, k, size=n_groups)[truth].astype(np.int32)
        flip = rng.random(n) < noise
        col[flip] = rng.integers(0, k, size=int(flip.sum()))
        L[:, j] = col
    return Ensemble(L), truth


def exact_recall(E, G, k):
    """Recall of the true top-k (ties at the k-th value are hits), exact rows in blocks."""
    B = E.one_hot()
    BwT = E.one_hot(weighted=True).T.tocsr()
    G = G.tocsr()
    hits = total = 0
    step = 512
    for start in range(0, E.n_samples, step):
        stop = min(E.n_samples, start + step)
        S = (B[start:stop] @ BwT).toarray()
        S[np.arange(stop - start), np.arange(start, stop)] = -1.0
        kth = -np.partition(-S, k - 1, axis=1)[:, k - 1]
        positive = np.minimum(k, (S > 0).sum(axis=1))
        for i, x in enumerate(range(start, stop)):
            kept = G.data[G.indptr[x]:G.indptr[x + 1]]
            hits += min(int(positive[i]), int((kept >= kth[i] - 1e-6).sum()))
        total += int(positive.sum())
    return hits / total


def case(name):
    """One measurement in this (fresh) process; returns a dict."""
    import cclust

    ari = cclust.get("ari")
    out = {"case": name}
    start = time.perf_counter()
    if name == "letter-knn":
        E, y = letter_ensemble()
        out["distinct_rows"] = int(np.unique(E.labels, axis=0).shape[0])
        t = time.perf_counter()
        G = E.knn_coassociation(K_NEIGHBORS, random_state=0)
        out["seconds"] = time.perf_counter() - t
        out["nnz_per_row"] = G.nnz / E.n_samples
        out["recall"] = exact_recall(E, G, K_NEIGHBORS)
    elif name in ("letter-cspa-lsh", "letter-cspa-exactknn", "letter-eac-sparse"):
        E, y = letter_ensemble()
        t = time.perf_counter()
        if name == "letter-cspa-lsh":
            res = cclust.consensus("cspa", E, 26, n_neighbors=K_NEIGHBORS, neighbors="lsh", random_state=0)
        elif name == "letter-cspa-exactknn":
            res = cclust.consensus("cspa", E, 26, n_neighbors=K_NEIGHBORS, random_state=0)
        else:
            res = cclust.consensus("eac", E, 26, linkage="single", n_neighbors=K_NEIGHBORS, random_state=0)
        out["seconds"] = time.perf_counter() - t
        out["ari_truth"] = ari(res.labels, y)
        out["labels"] = res.labels.tolist()
    elif name.startswith("sub-"):
        E, y = letter_ensemble(5000)
        t = time.perf_counter()
        method, route, *seed = name.split("-")[1:]
        kwargs = {}
        if method == "eac":
            kwargs["linkage"] = "single"
        if route == "sparse":
            kwargs["n_neighbors"] = K_NEIGHBORS
            if method == "cspa":
                kwargs["neighbors"] = "lsh"
        res = cclust.consensus(method, E, 26, random_state=int(seed[0][4:]) if seed else 0, max_bytes=2**34,
                               **kwargs)
        out["seconds"] = time.perf_counter() - t
        out["ari_truth"] = ari(res.labels, y)
        out["labels"] = res.labels.tolist()
    elif name.startswith("scale-"):
        _, what, n = name.split("-")
        E, truth = planted_ensemble(int(float(n)))
        out["build_seconds"] = time.perf_counter() - start
        t = time.perf_counter()
        if what == "knn":
            G = E.knn_coassociation(K_NEIGHBORS, random_state=0, max_bytes=2**34)
            out["nnz_per_row"] = G.nnz / E.n_samples
        elif what == "cspa":
            res = cclust.consensus("cspa", E, 20, n_neighbors=K_NEIGHBORS, neighbors="lsh", random_state=0,
                                   max_bytes=2**34)
            out["ari_truth"] = ari(res.labels, truth)
        else:
            res = cclust.consensus("eac", E, 20, linkage="single", n_neighbors=K_NEIGHBORS, random_state=0,
                                   max_bytes=2**34)
            out["ari_truth"] = ari(res.labels, truth)
            out["n_components"] = res.extras["n_components"]
        out["seconds"] = time.perf_counter() - t
    else:
        raise SystemExit(f"unknown case {name!r}")
    out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    return out


def run(name):
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--case", name], capture_output=True,
                          text=True)
    if proc.returncode:
        return {"case": name, "error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def quality():
    import cclust

    ari = cclust.get("ari")
    rows = ["| measurement | value | seconds | peak RSS (GB) |", "|---|---|---|---|"]
    knn = run("letter-knn")
    rows.append(f"| letter n=20,000: recall of the true top-30 (distinct rows {knn.get('distinct_rows')}, "
                f"{knn.get('nnz_per_row', 0):.1f} stored per row) | {knn.get('recall', float('nan')):.4f} | "
                f"{knn.get('seconds', float('nan')):.1f} | {knn.get('peak_rss_gb', float('nan')):.2f} |")
    results = {name: run(name) for name in ("letter-cspa-lsh", "letter-cspa-exactknn", "letter-eac-sparse",
                                            "sub-cspa-dense", "sub-cspa-dense-seed1", "sub-cspa-sparse",
                                            "sub-eac-dense", "sub-eac-sparse")}
    for name, res in results.items():
        if "error" in res:
            rows.append(f"| {name}: failed ({res['error']}) | | | |")
            continue
        rows.append(f"| {name}: ARI vs truth | {res['ari_truth']:.4f} | {res['seconds']:.1f} | "
                    f"{res['peak_rss_gb']:.2f} |")
    # Dense CSPA against itself with another METIS seed: the noise floor of the comparisons.
    for a, b in (("letter-cspa-lsh", "letter-cspa-exactknn"), ("sub-cspa-sparse", "sub-cspa-dense"),
                 ("sub-cspa-dense-seed1", "sub-cspa-dense"), ("sub-eac-sparse", "sub-eac-dense")):
        if "labels" in results[a] and "labels" in results[b]:
            rows.append(f"| ARI({a}, {b}) | {ari(results[a]['labels'], results[b]['labels']):.4f} | | |")
    return "\n".join(rows)


def scale(sizes):
    rows = ["| n | step | seconds | peak RSS (GB) | ARI vs planted truth |", "|---|---|---|---|---|"]
    for n in sizes:
        for what in ("knn", "cspa", "eac"):
            res = run(f"scale-{what}-{n}")
            if "error" in res:
                rows.append(f"| {n} | {what} | failed: {res['error']} | | |")
                continue
            extra = f"{res['ari_truth']:.4f}" if "ari_truth" in res else f"{res['nnz_per_row']:.1f} stored per row"
            rows.append(f"| {n} | {what} | {res['seconds']:.1f} | {res['peak_rss_gb']:.2f} | {extra} |")
            print(rows[-1], file=sys.stderr, flush=True)
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["quality", "scale", "all"], default="all")
    parser.add_argument("--sizes", default="1e5,1e6")
    parser.add_argument("--case")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.case:
        print(json.dumps(case(args.case)))
        return
    parts = [f"CPU: {cpu_model()}, {os.cpu_count()} cores (numbers taken under contention from other jobs)", ""]
    if args.part in ("quality", "all"):
        parts += ["### Quality (letter, n = 20,000)", "", quality(), ""]
    if args.part in ("scale", "all"):
        parts += ["### Scale (planted labels, r = 100)", "", scale([int(float(s)) for s in args.sizes.split(",")]), ""]
    write_report("\n".join(parts), args.out)


if __name__ == "__main__":
    main()
