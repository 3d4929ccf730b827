"""Predict on held-out objects: which rule of cclust.predict should be the default.

For every data set (the bundled iris and wine, then every ../shared/data/*.npz that exists,
from the repository, or of ``--data``; the large/ folder left out), the features are standardised and K is the number of classes. A
ConsensusClustering (kcc over k-means partitions) is fitted on all the objects, and, for each of
``--splits`` random 80/20 splits, on the 80% alone; the 20% are then predicted by every rule.
Reported per rule, averaged over the splits:

* ARI (all-data fit): adjusted Rand index between the predicted labels of the 20% and the labels
  the fit on all the data gave them -- how closely predict stands in for refitting;
* accuracy: purity of the predicted labels of the 20% against the classes (each cluster votes
  its majority class; Nguyen & Caruana 2007);
* ms: wall milliseconds of the predict call (the fit is not counted).

The row "(fit)" gives the same two numbers for the labels the 80% fit gave its own objects
against the all-data fit and the classes: the ceiling set by the fit itself.

    python benchmarks/bench_predict.py --splits 3 --data ../shared/data --out predict.md
"""
import argparse
import glob
import os
import sys
import time

import numpy as np

import cclust
from cclust.datasets import load_iris, load_wine

from _common import cpu_model, write_table


RULES = [("centroid", {"method": "centroid"}), ("knn k=5", {"method": "knn", "n_neighbors": 5}),
         ("knn k=15", {"method": "knn", "n_neighbors": 15}), ("knn k=30", {"method": "knn", "n_neighbors": 30})]


def data_sets(folder, names):
    yield "iris (bundled)", *load_iris()
    yield "wine (bundled)", *load_wine()
    for path in sorted(glob.glob(os.path.join(folder, "*.npz"))):
        name = os.path.basename(path)[:-4]
        if name in ("iris", "wine") or (names and name not in names):
            continue
        z = np.load(path)
        yield name, z["X"], z["y"]


def standardise(X):
    spread = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(spread > 0, spread, 1.0)


def model(k, seed, partitions):
    return cclust.ConsensusClustering("kcc", n_clusters=k, n_partitions=partitions, random_state=seed)


def run(name, X, y, splits, partitions, rows):
    ari, accuracy = cclust.get("ari"), cclust.get("accuracy")
    X = standardise(np.asarray(X, dtype=np.float64))
    k = len(np.unique(y))
    full = model(k, 0, partitions).fit(X).labels_
    scores = {label: [] for label in ["(fit)"] + [r for r, _ in RULES]}
    for split in range(splits):
        order = np.random.default_rng(100 + split).permutation(X.shape[0])
        cut = int(round(0.8 * X.shape[0]))
        train, test = np.sort(order[:cut]), np.sort(order[cut:])
        fitted = model(k, 1 + split, partitions).fit(X[train])
        scores["(fit)"].append((ari(fitted.labels_, full[train]), accuracy(fitted.labels_, y[train]), np.nan))
        for label, params in RULES:
            if params.get("n_neighbors", 0) > train.shape[0]:
                continue
            start = time.perf_counter()
            predicted = fitted.predict(X[test], **params)
            ms = 1000 * (time.perf_counter() - start)
            scores[label].append((ari(predicted, full[test]), accuracy(predicted, y[test]), ms))
    for label, values in scores.items():
        if values:
            a, b, c = np.mean(values, axis=0)
            timing = "" if np.isnan(c) else f"{c:.1f}"
            rows.append(f"| {name} | {X.shape[0]} x {X.shape[1]}, K={k} | {label} | {a:.3f} | {b:.3f} | {timing} |")
    sys.stdout.flush()
    return scores


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--data", default=os.path.join("..", "shared", "data"),
                        help="folder of the shared .npz data sets (default ../shared/data, from the repository)")
    parser.add_argument("--datasets", nargs="*", default=None, help="shared data sets by name (default: all)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows, summary = [], {label: [] for label, _ in RULES}
    warm = np.random.default_rng(0).normal(size=(60, 3))      # imports and first calls, not timed
    fitted = model(2, 0, 2).fit(warm)
    for _, params in RULES:
        fitted.predict(warm, **params)
    for name, X, y in data_sets(args.data, args.datasets):
        scores = run(name, X, y, args.splits, args.partitions, rows)
        for label in summary:
            if scores[label]:
                summary[label].append(np.mean(scores[label], axis=0))
        print(rows[-1 - len(RULES)].split("|")[1].strip(), "done", file=sys.stderr)
    for label, values in summary.items():
        a, b, c = np.mean(values, axis=0)
        rows.append(f"| **mean over data sets** | | {label} | {a:.3f} | {b:.3f} | {c:.1f} |")
    title = (f"### Predict on held-out objects ({args.splits} splits 80/20, kcc over {args.partitions} k-means "
             f"partitions, {cpu_model()}, load average {os.getloadavg()[0]:.1f} at the end)")
    write_table(title, ["data", "n x d", "rule", "ARI (all-data fit)", "accuracy", "ms"], rows, args.out)


if __name__ == "__main__":
    main()
