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

``--clusterensembles-python PY`` also runs the ClusterEnsembles code (PyPI ``ensembleclustering``)
on the same label matrix, in a separate interpreter PY: it no longer installs beside current
SciPy/NumPy, so it lives in its own virtual environment::

    python3 -m venv /tmp/ce-venv
    /tmp/ce-venv/bin/pip install "scipy==1.10.1" "numpy<2" "scikit-learn<1.4" typing_extensions
    /tmp/ce-venv/bin/pip install --no-deps ensembleclustering kahypar pymetis
    python benchmarks/bench_graph.py --sizes 1797 20000 100000 \\
        --clusterensembles-python /tmp/ce-venv/bin/python --clusterensembles-memory-gb 16 \\
        --output /tmp/issue5_benchmarks_v2.md

``--seeds N`` replaces the one-run table by N runs per method on equivalent ensembles (objects,
partitions and cluster names permuted by the seed, see ``equivalent_ensemble``) for both
libraries, reporting ARI mean ± sd and median wall / CPU seconds; ``--methods`` picks the cclust
methods and ``--clusterensembles-skip DATA:SOLVER`` leaves out ClusterEnsembles runs that are
too slow (its MCLA) or too large (its CSPA on letter)::

    python benchmarks/bench_graph.py --sizes 1797 20000 --seeds 10 --methods hbgf cspa mcla \\
        --clusterensembles-python /tmp/ce-venv/bin/python --clusterensembles-memory-gb 16 \\
        --clusterensembles-skip digits:mcla letter:mcla letter:cspa

A method may carry parameters after a colon; variants of one method share ClusterEnsembles's
runs (the HGPA presets of cclust-hypergraph, say)::

    python benchmarks/bench_graph.py --sizes 1797 20000 --seeds 5 \\
        --methods hgpa hgpa:preset=cclust_fast hgpa:preset=deterministic_quality \\
        --clusterensembles-python /tmp/ce-venv/bin/python

The ensemble is saved to a temporary ``.npy``; each of its solvers (``cluster_ensembles(labels.T,
nclass=K, solver=..., random_state=0)``) runs in a fresh subprocess with a wall-clock limit
(``--clusterensembles-timeout``, default 300 s) and an address-space limit
(``--clusterensembles-memory-gb``, default 8) so that its CSPA (a Python-list copy of the whole
co-association graph) cannot take the machine down: at n = 20,000 it needs more than 8 GB and
completes within 16 GB (``--clusterensembles-memory-gb 16``). The subprocess times the solver call
alone (not its imports); the ARI is computed here with the same function as cclust's. Sizes above
``--clusterensembles-max-n`` (default 20,000) skip it.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cclust  # noqa: E402
from cclust.metrics import ari  # noqa: E402
from _common import best_of, write_report

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


# Runs inside the ClusterEnsembles interpreter: argv = labels.npy (n, r), K, solver, out.npy, GB.
CE_WORKER = r"""
import json, resource, sys, time
labels_path, k, solver, out_path, gb = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
random_state = int(sys.argv[6]) if len(sys.argv) > 6 else 0
if gb > 0:
    limit = int(gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import warnings
warnings.simplefilter("ignore")
import numpy as np
import ensembleclustering as CE
from importlib.metadata import version
versions = {p: version(p) for p in ("ensembleclustering", "numpy", "scipy", "scikit-learn", "pymetis", "kahypar")}
L = np.load(labels_path).T.astype(np.float64)  # ClusterEnsembles wants (r, n), float for its NaN test
try:
    t0, c0 = time.perf_counter(), time.process_time()
    out = CE.cluster_ensembles(L, nclass=k, solver=solver, random_state=random_state)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
except MemoryError:
    print(json.dumps({"error": "MemoryError (address-space limit %g GB)" % gb, "versions": versions,
                      "seconds": time.perf_counter() - t0}))
    sys.exit(0)
np.save(out_path, np.asarray(out, dtype=np.int64))
print(json.dumps({"seconds": seconds, "cpu": cpu, "versions": versions}))
"""
CE_SOLVERS = ("cspa", "mcla", "hbgf", "hgpa")


def run_clusterensembles(python, labels_path, k, solver, timeout, memory_gb, tmpdir, random_state=0):
    """Run one ClusterEnsembles solver in a subprocess.

    Returns (wall seconds or None, labels or None, note, versions, CPU seconds or None).
    """
    out_path = os.path.join(tmpdir, f"ce_{solver}.npy")
    if os.path.exists(out_path):
        os.remove(out_path)
    cmd = [python, "-c", CE_WORKER, labels_path, str(k), solver, out_path, str(memory_gb), str(random_state)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, None, f"timeout > {timeout:g} s (killed)", {}, None
    wall = time.perf_counter() - t0
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        if proc.returncode < 0:
            tail = f"killed by signal {-proc.returncode} after {wall:.0f} s; {tail}"
        return None, None, f"failed: {tail[:160]}", {}, None
    info = json.loads(lines[-1])
    if "error" in info:
        return None, None, f"{info['error']} after {info['seconds']:.0f} s", info["versions"], None
    return info["seconds"], np.load(out_path), "", info["versions"], info.get("cpu")



def equivalent_ensemble(labels, y, seed):
    """The same ensemble in another guise: objects, partitions and cluster names permuted.

    Every consensus method should treat it as the same problem, but a graph partitioner sees
    its vertices in another order. ClusterEnsembles' HBGF and CSPA call METIS without a seed
    (its ``random_state`` only reaches HGPA, MCLA's tie-breaking and NMF), so their spread over
    seeds comes from this reordering alone; cclust gets the same reordering plus
    ``random_state=seed``.
    """
    rng = np.random.default_rng(seed)
    n, r = labels.shape
    objects, partitions = rng.permutation(n), rng.permutation(r)
    out = np.array(labels[objects][:, partitions], dtype=np.int32, copy=True)
    for j in range(r):
        names = rng.permutation(int(out[:, j].max()) + 1).astype(np.int32)
        present = out[:, j] >= 0
        out[present, j] = names[out[present, j]]
    return out, y[objects]


def parse_method(spec, typed=True):
    """``"hgpa:preset=cclust_fast,objective=km1"`` -> ``("hgpa", {"preset": "cclust_fast", ...})``;
    with ``typed``, values that read as JSON numbers or literals become those."""
    name, _, rest = spec.partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if typed:
            try:
                value = json.loads(value)
            except ValueError:
                pass
        params[key] = value
    return name, params


def method_label(method, params):
    return method + (f" ({', '.join(f'{key}={value}' for key, value in params.items())})" if params else "")


def mean_sd(values):
    values = np.asarray(values, dtype=np.float64)
    sd = values.std(ddof=1) if values.size > 1 else 0.0
    return f"{values.mean():.4f} ± {sd:.4f}"


def seed_table(args, methods, ce, tmpdir, ce_versions):
    """Mean ± sd of the ARI over ``args.seeds`` equivalent ensembles, for cclust and
    ClusterEnsembles on the same label matrices; median seconds and their ratio."""
    skip = {tuple(item.split(":", 1)) for item in args.clusterensembles_skip}
    ce_runs = {}  # (data, solver, seed) -> run_clusterensembles's answer, shared by a method's variants
    lines = [f"{args.seeds} seeds: seed s reorders objects, partitions and cluster names of the cached "
             "ensemble (`equivalent_ensemble`) and is passed as `random_state`; ARI mean ± sd (ddof 1); "
             "median seconds of the consensus call, wall / CPU (process time, all threads; the "
             "steadier figure on a shared machine).", "",
             "| data (n, K) | method | cclust s (wall / CPU) | CE s (wall / CPU) | speed-up (wall / CPU) "
             "| cclust ARI | CE ARI |",
             "|---|---|---|---|---|---|---|"]
    for n in args.sizes:
        name, X, y = load(n)
        k = int(y.max()) + 1
        base = np.asarray(ensemble(name, X, k, args.r, args.cache).labels)
        for spec in methods:
            method, params = parse_method(spec)
            if method == "cspa" and n > args.dense_limit:
                params = {"n_neighbors": args.n_neighbors, "n_candidates": args.n_candidates, **params}
            fn = cclust.get(method)
            ours, ours_s, ours_cpu, theirs, theirs_s, theirs_cpu, notes = [], [], [], [], [], [], []
            run_ce = (ce and n <= args.clusterensembles_max_n and method in CE_SOLVERS
                      and (name, method) not in skip)
            for seed in range(args.seeds):
                labels, truth = equivalent_ensemble(base, y, seed)
                E = cclust.Ensemble(labels)
                cpu = time.process_time()
                seconds, res = best_of(lambda: fn(E, k, random_state=seed, **params))
                ours_cpu.append(time.process_time() - cpu)
                ours.append(ari(res.labels, truth))
                ours_s.append(seconds)
                if run_ce:
                    if (name, method, seed) not in ce_runs:
                        labels_path = os.path.join(tmpdir, f"{name}_{args.r}_{seed}.npy")
                        np.save(labels_path, labels)
                        ce_runs[name, method, seed] = run_clusterensembles(
                            ce, labels_path, k, method, args.clusterensembles_timeout,
                            args.clusterensembles_memory_gb, tmpdir, random_state=seed)
                    seconds, out, note, versions, cpu = ce_runs[name, method, seed]
                    ce_versions.update(versions)
                    if out is None:
                        notes.append(note)
                    else:
                        theirs.append(ari(out, truth))
                        theirs_s.append(seconds)
                        theirs_cpu.append(cpu)
                print(name, method, seed, ours[-1], theirs[-1] if theirs else notes[-1:], flush=True)
            label = method_label(method, params)
            mine, mine_cpu = float(np.median(ours_s)), float(np.median(ours_cpu))
            if theirs:
                other, other_cpu = float(np.median(theirs_s)), float(np.median(theirs_cpu))
                ce_cols = (f"{other:.2f} / {other_cpu:.2f} | {other / mine:.1f}x / {other_cpu / mine_cpu:.1f}x")
                ce_ari = mean_sd(theirs) + (f" ({len(theirs)} of {args.seeds} seeds)" if notes else "")
            else:
                ce_cols = (notes[0] if notes else "not run") + " | "
                ce_ari = ""
            lines.append(f"| {name} ({n}, {k}) | {label} | {mine:.2f} / {mine_cpu:.2f} | {ce_cols} "
                         f"| {mean_sd(ours)} | {ce_ari} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1797, 20000, 100000])
    parser.add_argument("--r", type=int, default=100)
    parser.add_argument("--n-neighbors", type=int, default=30)
    parser.add_argument("--n-candidates", type=int, default=300)
    parser.add_argument("--dense-limit", type=int, default=5000)
    parser.add_argument("--cache", default="/tmp")
    parser.add_argument("--output", default=None)
    parser.add_argument("--clusterensembles-python", default=None,
                        help="interpreter with `ensembleclustering` installed (e.g. /tmp/ce-venv/bin/python)")
    parser.add_argument("--clusterensembles-timeout", type=float, default=300.0)
    parser.add_argument("--clusterensembles-memory-gb", type=float, default=8.0)
    parser.add_argument("--clusterensembles-max-n", type=int, default=20000)
    parser.add_argument("--clusterensembles-skip", nargs="*", default=[], metavar="DATA:SOLVER",
                        help="ClusterEnsembles runs to leave out in --seeds mode, e.g. letter:mcla letter:cspa")
    parser.add_argument("--methods", nargs="*", default=None, metavar="METHOD[:KEY=VALUE,...]",
                        help="cclust methods to run (default: cspa mcla hbgf, and hgpa if installed), "
                             "each with optional parameters, e.g. hgpa:preset=cclust_fast")
    parser.add_argument("--seeds", type=int, default=0,
                        help="instead of one run per method, N runs on equivalent reorderings of the "
                             "ensemble (ARI mean ± sd for cclust and ClusterEnsembles)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")

    methods = ["cspa", "mcla", "hbgf"]
    if "hgpa" in cclust.available(kind="consensus"):
        methods.append("hgpa")
    if args.methods:
        methods = list(args.methods)
    try:
        import ccHBGF
    except ImportError:
        ccHBGF = None

    ce = args.clusterensembles_python
    ce_versions = {}
    tmpdir = tempfile.mkdtemp(prefix="bench_graph_ce_")
    lines = ["# Graph consensus: cclust vs cchbgf" + (" and ClusterEnsembles" if ce else ""), "",
             f"Command: `python benchmarks/bench_graph.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
             f"Machine: {platform.platform()}, Python {platform.python_version()}; 2 cores shared with "
             "other jobs (timings under contention).",
             f"r = {args.r} k-means partitions with K_i = K; seconds of the consensus call; ARI vs classes.", "",
             ("| data (n, K) | method | seconds | ARI | ClusterEnsembles seconds | ClusterEnsembles ARI "
              "| speed-up (CE s / cclust s) |"), "|---|---|---|---|---|---|---|"]
    if args.seeds:
        lines = lines[:5] + seed_table(args, methods, ce, tmpdir, ce_versions)
    for n in (args.sizes if not args.seeds else []):
        name, X, y = load(n)
        k = int(y.max()) + 1
        E = ensemble(name, X, k, args.r, args.cache)
        rows = []
        ce_cols = {}
        if ce and n <= args.clusterensembles_max_n:
            labels_path = os.path.join(tmpdir, f"{name}_{args.r}.npy")
            np.save(labels_path, np.asarray(E.labels))
            for solver in (s for s in CE_SOLVERS if s in {parse_method(m)[0] for m in methods}):
                seconds, labels, note, versions, _ = run_clusterensembles(
                    ce, labels_path, k, solver, args.clusterensembles_timeout,
                    args.clusterensembles_memory_gb, tmpdir)
                ce_versions.update(versions)
                ce_cols[solver] = (seconds, None if labels is None else ari(labels, y), note)
                print(name, "ClusterEnsembles", solver, ce_cols[solver], flush=True)
        for spec in methods:
            method, params = parse_method(spec)
            if method == "cspa" and n > args.dense_limit:
                params = {"n_neighbors": args.n_neighbors, "n_candidates": args.n_candidates, **params}
            fn = cclust.get(method)
            seconds, res = best_of(lambda: fn(E, k, random_state=0, **params))
            label = method_label(method, params)
            rows.append((f"cclust {label}", seconds, ari(res.labels, y), ce_cols.get(method)))
            print(name, rows[-1], flush=True)
        if ccHBGF is not None:
            L = np.asarray(E.labels)
            # cchbgf passes an int random_state to scipy's svds as a RandomState, which SciPy
            # >= 1.15 rejects, and a Generator to scikit-learn, which rejects it too: seed NumPy's
            # global state instead and pass None.
            np.random.seed(0)
            seconds, labels = best_of(lambda: ccHBGF.find_consensus(L, n_clusters=k, random_state=None))
            rows.append(("cchbgf (spectral HBGF)", seconds, ari(np.asarray(labels), y), None))
            print(name, rows[-1], flush=True)
        for method, seconds, score, other in rows:
            if other is None:
                extra = "| | | |" if not ce_cols else "| n/a | n/a | |"
                if not ce_cols and ce and n > args.clusterensembles_max_n:
                    extra = "| not run | | |"
            elif other[0] is None:
                extra = f"| {other[2]} | | |"
            else:
                extra = f"| {other[0]:.2f} | {other[1]:.4f} | {other[0] / seconds:.1f}x |"
            lines.append(f"| {name} ({n}, {k}) | {method} | {seconds:.2f} | {score:.4f} {extra}")
    if ce:
        lines += ["", "ClusterEnsembles: `" + ce + "` with " +
                  ", ".join(f"{p} {v}" for p, v in sorted(ce_versions.items())) +
                  f"; each solver in its own subprocess, limit {args.clusterensembles_timeout:g} s and "
                  f"{args.clusterensembles_memory_gb:g} GB address space; "
                  f"random_state={'the seed' if args.seeds else 0}; "
                  f"run for n <= {args.clusterensembles_max_n}."]
    shutil.rmtree(tmpdir, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    write_report(text, args.output)


if __name__ == "__main__":
    main()
