"""Wall time of select_k's consensus-method route (``method="kcc"``) and, for reference, its
default (Monti et al.'s protocol, k-means inner clusterer), before and after a code change, in
the same run: each measurement is a child process, the two code versions alternate, and the
hashes of every result (labels at every K, PAC, CDF, objective) must be equal.

"before" is the package as of a git revision (``--ref``), exported to a temporary folder with
the compiled extensions of this checkout copied in (the change under test touches no C++);
"after" is this checkout. Data are z-scored; K = 2..8; ``random_state=0``; the kcc route uses
select_k's defaults (50 resamples of 80% of the objects, 50 k-means partitions each) unless
``--resamples`` is given; times are of the select_k call alone (imports and a warm-up
excluded), medians of ``--repeats`` runs.

    python benchmarks/bench_select_k_route.py --ref <commit> --data /work/shared/data \
        --sets iris wine yeast --repeats 3 --out report.md
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from _common import cpu_model, write_report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import hashlib, json, sys, time
import numpy as np
import cclust
from cclust import select_k
X = np.load(sys.argv[1])
method, resamples = sys.argv[2], int(sys.argv[3])
kw = {} if resamples <= 0 else {"n_resamples": resamples}
select_k(X[:40], [2, 3], method=method, n_resamples=2, n_partitions=5, random_state=0)  # warm-up
start = time.perf_counter()
res = select_k(X, range(2, 9), method=method, random_state=0, **kw)
seconds = time.perf_counter() - start
h = hashlib.sha256()
for k in res.k_values.tolist():
    h.update(np.ascontiguousarray(res.labels[k], dtype=np.int64).tobytes())
labels_hash = h.hexdigest()[:16]
numbers = hashlib.sha256(np.concatenate([res.pac, res.cdf.ravel(), res.objective]).tobytes()).hexdigest()[:16]
print(json.dumps({"seconds": seconds, "labels": labels_hash, "numbers": numbers, "best_k": res.best_k,
                  "module": cclust.__file__}))
"""


def zscore(X):
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def export(ref, folder):
    """The package at ``ref`` in ``folder``, with this checkout's compiled extensions."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", ref, "cclust"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    ext = os.path.join(ROOT, "cclust", "_ext")
    for name in os.listdir(ext):
        if name.endswith(".so"):
            shutil.copy(os.path.join(ext, name), os.path.join(folder, "cclust", "_ext", name))


def run_child(path, data, method, resamples, cwd):
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", CHILD, data, method, str(resamples)], env=env, cwd=cwd,
                         check=True, capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    if not result["module"].startswith(path):
        raise RuntimeError(f"the child imported {result['module']}, not the copy in {path}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", required=True, help="git revision of the 'before' code")
    parser.add_argument("--data", default="/work/shared/data")
    parser.add_argument("--sets", nargs="+", default=["iris", "wine", "yeast"])
    parser.add_argument("--methods", nargs="+", default=["kcc", "monti"])
    parser.add_argument("--resamples", type=int, default=0,
                        help="n_resamples of every run (0: select_k's default for the method)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    rows, mismatches = [], []
    with tempfile.TemporaryDirectory() as tmp:
        before = os.path.join(tmp, "before")
        os.mkdir(before)
        export(args.ref, before)
        for name in args.sets:
            with np.load(os.path.join(args.data, f"{name}.npz"), allow_pickle=False) as z:
                X = zscore(np.asarray(z["X"], dtype=np.float64))
            data = os.path.join(tmp, f"{name}.npy")
            np.save(data, X)
            for method in args.methods:
                runs = {"before": [], "after": []}
                for _ in range(args.repeats):
                    for side, path in (("before", before), ("after", ROOT)):
                        runs[side].append(run_child(path, data, method, args.resamples, tmp))
                t = {side: statistics.median(r["seconds"] for r in runs[side]) for side in runs}
                keys = {(r["labels"], r["numbers"]) for side in runs for r in runs[side]}
                same = len(keys) == 1
                if not same:
                    mismatches.append(f"{name}/{method}")
                last = runs["after"][-1]
                rows.append(f"| {name} ({X.shape[0]}) | {method} | {t['before']:.2f} s | {t['after']:.2f} s | "
                            f"{t['before'] / t['after']:.1f}x | {last['best_k']} | "
                            f"{'yes' if same else 'NO'} ({last['labels']}/{last['numbers']}) |")
                print(rows[-1], flush=True)

    text = "\n".join([
        f"select_k routes, before ({args.ref[:12]}) and after, K = 2..8, random_state=0, "
        f"n_resamples={'default' if args.resamples <= 0 else args.resamples}, median of {args.repeats} "
        f"alternating runs, one process each; {cpu_model()}",
        "",
        f"Command: `python benchmarks/bench_select_k_route.py {' '.join(sys.argv[1:])}`",
        "",
        "| data (n) | method | before | after | speed-up | best K | identical (labels/numbers hash) |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ])
    write_report(text, args.out)
    if mismatches:
        sys.exit(f"results differ before and after: {', '.join(mismatches)}")


if __name__ == "__main__":
    main()
