"""KCC, the graph, voting, mixture and transfer-cut methods and U-SPEC before and after a change, alternating.

Each (tree, method, problem) runs in its own process, the trees alternating method by method
and round by round, so that before and after share the machine's load. A tree is a cclust
source checkout with its compiled modules built in place (``python setup.py build_ext
--inplace``); the current one is this script's. Written to check that storing the label
matrix as compact codes (uint8/uint16) slowed none of the passes that read it.

The problems: r noisy refinements of 8 classes (K_i drawn in [8, 40], so uint8 codes, or in
[300, 600] with ``--wide``, so uint16), a tenth of the labels redrawn, and the digits data set's
k-means ensemble (scikit-learn's copy) for the graph methods. GKCC and U-SENC make their own
partitions: they run on pendigits (``../shared/data``; 10,992 objects, K = 10) from X alone, so
that each tree runs its whole pipeline; the labels' hash says whether the two trees agree.
U-SPEC, the clusterer (``cclust.uspec.uspec``, Huang et al. 2020) that U-SENC runs twenty times,
runs alone with its defaults on pendigits and on birch1 (``../shared/data/large``; 100000
objects in two dimensions, K = 100), the size it is written for.

    python benchmarks/bench_label_codes.py --before ../before-tree --rounds 3 [--methods nmf em-mixture bce]
    python benchmarks/bench_label_codes.py --before ../before-tree --methods kcc gkcc usenc uspec
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[8])   # this script's folder: the ensembles of _common.py
import numpy as np
import cclust
from _common import noisy_refinements

method, n, r, wide, repeats = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", int(sys.argv[6])
params = json.loads(sys.argv[7])
if n == 0:   # the digits data set's k-means ensemble, as the graph benchmark builds it
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    E = cclust.generate("kmeans", X, 10, n_partitions=r, random_state=0)
    n_clusters = 10
elif n < 0:  # pendigits (-1) or birch1 (-2), X alone: the method makes its own partitions
    import os
    data_dir = os.path.join(sys.argv[8], "..", "..", "shared", "data")
    path = os.path.join(data_dir, "pendigits.npz") if n == -1 else os.path.join(data_dir, "large", "birch1.npz")
    with np.load(path) as data:
        X, y = data["X"], data["y"]
    E, n_clusters = None, len(np.unique(y))
    if method != "uspec":   # the clusterer takes X as its first argument
        params = dict(params, X=X)
else:
    y, E = noisy_refinements(n, r, *((300, 600) if wide else (8, 40)))
    n_clusters = 8
from cclust.uspec import uspec
best = float("inf")
for _ in range(repeats):
    start = time.perf_counter()
    if method == "uspec":   # the clusterer, on X alone
        labels = uspec(X, n_clusters, random_state=0, **params)
    else:
        labels = cclust.get(method)(E, n_clusters, random_state=0, **params).labels
    best = min(best, time.perf_counter() - start)
import hashlib
from cclust.metrics import ari
codes = "-" if E is None else str(getattr(E, "compact_labels", lambda: E.labels)().dtype)
print(json.dumps({"seconds": best, "ari": float(ari(labels, y)), "codes": codes,
                  "labels": hashlib.sha256(np.ascontiguousarray(labels, dtype=np.int64)).hexdigest()[:12]}))
"""

CASES = [
    # (method, n, r, wide, params): n = 0 is the digits data set
    ("kcc", 200000, 100, False, {"n_init": 3}),
    ("kcc", 100000, 100, True, {"n_init": 3}),
    ("voting", 200000, 100, False, {"n_init": 1, "max_iter": 5}),
    ("ivc", 200000, 100, False, {"n_init": 1, "max_iter": 10}),
    ("ipvc", 50000, 50, False, {"n_init": 1, "max_iter": 10}),
    ("hbgf", 0, 100, False, {}),
    ("mcla", 0, 100, False, {}),
    ("cspa", 0, 100, False, {}),
    ("em-mixture", 100000, 100, False, {"n_init": 1, "max_iter": 10}),
    ("nmf", 100000, 100, False, {"n_init": 1, "max_iter": 20}),
    ("bce", 50000, 50, False, {"n_init": 1, "max_iter": 5}),
    # about 2,400 clusters: the transfer cut's Lanczos route
    ("tcut", 200000, 100, False, {}),
    ("lwgp", 200000, 100, False, {}),
    # n = -1 is pendigits from X alone: GKCC with nu = 10 (Li & Liu's 59 takes a minute a call),
    # U-SENC with its defaults (20 U-SPEC clusterers)
    ("gkcc", -1, 90, False, {"n_partitions": 90}),
    ("usenc", -1, 20, False, {}),
    # n = -2 is birch1 from X alone; U-SPEC, the clusterer, with its defaults on both
    ("uspec", -1, 0, False, {}),
    ("uspec", -2, 0, False, {}),
]


def run(tree, case, repeats):
    method, n, r, wide, params = case
    out = subprocess.run([sys.executable, "-c", CHILD, tree, method, str(n), str(r), "1" if wide else "0",
                          str(repeats), json.dumps(params), HERE], capture_output=True, text=True, cwd=tree,
                         check=False)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the cclust source tree to compare against")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="calls per process; the best is kept")
    parser.add_argument("--methods", nargs="*", default=None, help="only these methods' cases")
    args = parser.parse_args()
    cases = [case for case in CASES if args.methods is None or case[0] in args.methods]
    trees = [("before", os.path.abspath(args.before)), ("after", ROOT)]
    rows = {}
    for _ in range(args.rounds):
        for case in cases:
            for label, tree in trees:
                rows.setdefault((case[0], case[1], case[3]), {}).setdefault(label, []).append(run(tree, case, args.repeats))
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print("| method | n | codes before / after | before s (each round) | after s (each round) | after / before (best) "
          "| ARI before / after | same labels |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (method, n, wide), by in rows.items():
        def cells(label):
            return [x.get("seconds") for x in by[label]]
        if any("error" in x for label in by for x in by[label]):
            errors = {label: [x["error"] for x in by[label] if "error" in x] for label in by}
            print(f"| {method} | {n or 'digits'} | | {errors} | | | |")
            continue
        before, after = cells("before"), cells("after")
        name = {0: "digits (1797)", -1: "pendigits (10992)", -2: "birch1 (100000)"}.get(n, n)
        same = by["before"][0].get("labels") == by["after"][0].get("labels")
        print(f"| {method} | {name} | {by['before'][0]['codes']} / {by['after'][0]['codes']} | "
              f"{', '.join(f'{s:.2f}' for s in before)} | {', '.join(f'{s:.2f}' for s in after)} | "
              f"{min(after) / min(before):.2f} | {by['before'][0]['ari']:.3f} / {by['after'][0]['ari']:.3f} | "
              f"{'yes' if same else 'no'} |")


if __name__ == "__main__":
    main()
