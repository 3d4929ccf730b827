"""The KCC Lloyd pass against this machine's lookup-add bound (issue 22, item 4).

A Lloyd pass of KCC costs n r K lookup-adds (for every object, partition and centre one table
entry added). This script measures

* the engine's compiled pass: ``cclust._ext._kmeans.lloyd`` run from the same k-means++ start with
  ``max_iter = 0`` (one pass) and ``max_iter = M``; (t_M - t_0) / (passes_M - passes_0) is one
  Lloyd iteration as KCC runs it (table build, pass with its tally, centres), best of
  ``--repeats``;
* the bound: ``benchmarks/kcc_pass_bound.cpp`` compiled here with the extension's flags plus
  ``-march=native``, a blocked loop that does only the lookup-adds and the argmin over the same
  label matrix; every vector width and object block is timed and the fastest is the bound;

in ns per lookup-add, at 1 thread and at all threads, and their ratio. Label matrices: a k-means
ensemble of pendigits (n = 10,992) and of synthetic blobs (n = 10^5 and 10^6), r = 100,
K_i in [2, 20] (the ensembles are cached in ``--cache``).

``--hashes check`` runs kcc on several inputs and compares the label/objective hashes with those
recorded on the base commit 318dc31 (``--hashes record`` prints them); every SIMD variant the
CPU supports is checked (``CCLUST_KMEANS_SIMD``).

Usage::

    python benchmarks/bench_kcc_pass.py --hashes check
    python benchmarks/bench_kcc_pass.py --sizes 10992 100000 1000000 --ks 10 26 --threads 1 2
    taskset -c 0 python benchmarks/bench_kcc_pass.py --threads 1 --repeats 9
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data")
R = 100


def _sklearn_kmeans_ensemble(X, r, seed, fit_rows=5000):
    """r k-means partitions with K_i drawn in [2, 20], each fitted on a random subset of rows
    (so 10^6 objects cost seconds) and applied to every object."""
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(seed)
    L = np.empty((X.shape[0], r), dtype=np.int32)
    for i in range(r):
        k = int(rng.integers(2, 21))
        rows = rng.choice(X.shape[0], size=min(fit_rows, X.shape[0]), replace=False)
        km = KMeans(k, n_init=1, random_state=int(rng.integers(2**31))).fit(X[rows])
        L[:, i] = km.predict(X)
    return L


def blobs(n, seed):
    """Ten overlapping Gaussian blobs in 8 dimensions."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(10, 8))
    return centres[rng.integers(0, 10, size=n)] + rng.normal(size=(n, 8))


def label_matrix(name, n, cache):
    """(labels int32 (n, r), offsets int64 (r + 1,)) of a cached k-means ensemble."""
    path = os.path.join(cache, f"{name}_{n}.npy")
    if os.path.exists(path):
        L = np.load(path)
    else:
        if name == "pendigits":
            import cclust

            with np.load(os.path.join(DATA, "pendigits.npz"), allow_pickle=False) as data:
                X = data["X"]
            L = cclust.generate("kmeans", X, 10, n_partitions=R, k_range=(2, 20), random_state=0).labels
            L = np.ascontiguousarray(L, dtype=np.int32)
        else:
            L = _sklearn_kmeans_ensemble(blobs(n, 1), R, 2)
        os.makedirs(cache, exist_ok=True)
        np.save(path, L)
    sizes = L.max(axis=0).astype(np.int64) + 1
    return np.ascontiguousarray(L), np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


# -- the engine -------------------------------------------------------------------------------

def engine_pass(L, offsets, k, threads, repeats, max_iter=4):
    """Seconds of one Lloyd iteration of the compiled engine (see the module docstring; CPU
    seconds at one thread), and the number of passes it was measured over."""
    from cclust import _engine
    from cclust._ext import _kmeans

    n, r = L.shape
    weights = np.full(r, 1.0 / r)
    space = _engine.MixedSpace(np.empty((n, 0)), 0.0, L, offsets, weights, 1, 0.0)
    seeds = _engine.seed_objects(space, k, "k-means++", np.random.default_rng(0), threads, n_trials=1)
    start = np.ascontiguousarray(_engine.labels_from_seeds(space, seeds, threads), dtype=np.int32)

    # One thread runs in this thread (OpenMP team of one): its CPU time leaves out the time the
    # thread waited for a core on a loaded machine.
    clock = time.thread_time if threads == 1 else time.perf_counter

    def run(m):
        best, passes = float("inf"), 0
        for _ in range(repeats):
            t0 = clock()
            out = _kmeans.lloyd(*space._args(), start, k, m, 0.0, threads)
            best = min(best, clock() - t0)
            passes = out[1].shape[0]  # accepted passes (a rejected rise, rare, is not counted)
        return best, passes

    t0, p0 = run(0)
    tm, pm = run(max_iter)
    if pm <= p0:
        return t0, 1
    return (tm - t0) / (pm - p0), pm - p0


# -- the bound --------------------------------------------------------------------------------

def build_bound(workdir):
    exe = os.path.join(workdir, "kcc_pass_bound")
    cmd = ["g++", "-std=c++17", "-O3", "-ffp-contract=off", "-fopenmp", "-march=native",
           "-Wall", "-Wextra", os.path.join(HERE, "kcc_pass_bound.cpp"), "-o", exe]
    subprocess.run(cmd, check=True)
    return exe


def bound_pass(exe, workdir, L, offsets, k, threads, repeats, col_block=0):
    """{(W, B): seconds} of the bound kernel; B < 0 is the partition-blocked pass (groups of -B)."""
    lp, op = os.path.join(workdir, "labels.bin"), os.path.join(workdir, "offsets.bin")
    if not (os.path.exists(lp) and os.path.getsize(lp) == L.nbytes and getattr(bound_pass, "_id", None) == id(L)):
        L.tofile(lp)
        bound_pass._id = id(L)
    offsets.tofile(op)
    n, r = L.shape
    out = subprocess.run([exe, lp, str(n), str(r), str(k), op, str(threads), str(repeats), str(col_block)],
                         check=True, capture_output=True, text=True).stdout
    times = {}
    for line in out.strip().splitlines():
        w, b, s, _, _ = line.split()
        times[(int(w), int(b))] = float(s)
    return times


# -- hashes of kcc results (bit-identity with the base commit) ----------------------------------

# Recorded on the base commit 318dc31 with `--hashes record` (all threads).
BASE_HASHES = {
    "pendigits-uh-K10": "83f1ff614dad4028",
    "pendigits-uc-K26": "caa6b2f4abd73ee9",
    "pendigits-missing-nuh-K10": "cef6a275925f90d3",
    "pendigits-ulp5-K7-random": "a82c7bb8c5925919",
    "duplicates-ucos-K10": "5cee27ba013f3753",
    "blobs1e5-uh-K26": "2fc4ed0d3a3eabab",
    "pendigits-uh-K3-1thread": "eb754d2634231a68",
}


def hash_inputs(cache):
    import cclust

    pend, _ = label_matrix("pendigits", 10992, cache)
    rng = np.random.default_rng(5)
    holes = pend.copy()
    holes[rng.random(holes.shape) < 0.2] = -1
    dup = np.repeat(pend[:500], 8, axis=0)  # many identical rows
    small, _ = label_matrix("blobs", 100000, cache)
    yield "pendigits-uh-K10", cclust.Ensemble(pend), 10, {}
    yield "pendigits-uc-K26", cclust.Ensemble(pend), 26, {"utility": "uc"}
    yield "pendigits-missing-nuh-K10", cclust.Ensemble(holes), 10, {"utility": "nuh"}
    yield "pendigits-ulp5-K7-random", cclust.Ensemble(pend), 7, {"utility": "ulp", "p": 5, "init": "random"}
    yield "duplicates-ucos-K10", cclust.Ensemble(dup), 10, {"utility": "ucos"}
    yield "blobs1e5-uh-K26", cclust.Ensemble(small[:30000]), 26, {"n_init": 2}
    yield "pendigits-uh-K3-1thread", cclust.Ensemble(pend[:3000, :20]), 3, {"n_jobs": 1}


def result_hash(res):
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(res.labels, dtype=np.int64).tobytes())
    h.update(float(res.objective).hex().encode())
    h.update(float(res.extras["kmeans_objective"]).hex().encode())
    h.update(str(res.n_iter).encode())
    for g in res.extras["gammas"]:
        h.update(float(g).hex().encode())
    h.update(np.asarray(res.extras["objective_trace"], dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


def kcc_hashes(cache):
    import cclust

    out = {}
    for name, E, k, params in hash_inputs(cache):
        params = {"n_init": 3, "random_state": 0, **params}
        out[name] = result_hash(cclust.consensus("kcc", E, k, **params))
    return out


def variants():
    from cclust._ext import _kmeans

    return list(getattr(_kmeans, "simd_variants", lambda: ["baseline"])())


def check_hashes(cache):
    from cclust._ext import _kmeans

    rows, ok = [], True
    for variant in variants():
        if hasattr(_kmeans, "_force_simd"):
            _kmeans._force_simd(variant)
        got = kcc_hashes(cache)
        for name, h in got.items():
            same = BASE_HASHES.get(name) == h
            ok &= same
            rows.append(f"| {name} | {variant} | {h} | {'yes' if same else 'NO'} |")
    if hasattr(_kmeans, "_force_simd"):
        _kmeans._force_simd(None)
    print("| input | variant | hash | same as base 318dc31 |\n|---|---|---|---|\n" + "\n".join(rows))
    return ok


# -- main -------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10992, 100000, 1000000])
    ap.add_argument("--ks", type=int, nargs="+", default=[10, 26])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--col-block", type=int, default=0,
                    help="also time the bound with the partitions in groups of this many (cache blocking)")
    ap.add_argument("--r", type=int, default=R, help="partitions (columns repeated when > 100)")
    ap.add_argument("--hashes", choices=["record", "check"])
    ap.add_argument("--no-bound", action="store_true")
    ap.add_argument("--variants", nargs="+", default=None,
                    help="engine SIMD variants to time (default: the automatic one)")
    ap.add_argument("--grouping", nargs="+", choices=["on", "off"], default=["on", "off"],
                    help="time the engine with and/or without the grouping of identical rows")
    ap.add_argument("--engine-so", help="time this build of cclust._ext._kmeans instead (e.g. the "
                    "base commit's, for a before/after)")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "cclust_bench_kcc_pass"))
    ap.add_argument("--output")
    args = ap.parse_args()

    if args.engine_so:
        import importlib.util

        import cclust._ext

        spec = importlib.util.spec_from_file_location("cclust._ext._kmeans", args.engine_so)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["cclust._ext._kmeans"] = module
        cclust._ext._kmeans = module
    if args.hashes == "record":
        print(json.dumps(kcc_hashes(args.cache), indent=4))
        return 0
    if args.hashes == "check":
        return 0 if check_hashes(args.cache) else 1

    from cclust._ext import _kmeans

    variant = getattr(_kmeans, "simd_variant", lambda: "baseline")()
    engine_variants = args.variants or [variant]
    can_group = hasattr(_kmeans, "_group_rows")
    groupings = args.grouping if can_group else ["-"]
    work = tempfile.mkdtemp(prefix="kcc_pass_bound_")
    exe = None if args.no_bound else build_bound(work)
    lines = [f"KCC Lloyd pass vs the lookup-add bound; automatic engine variant {variant}; r = {args.r}; "
             f"best of {args.repeats}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
             f"load average {os.getloadavg()[0]:.2f}", "",
             f"engine: {args.engine_so or 'this checkout'}; 1 thread = CPU time of the thread, more = wall time", "",
             "| data | n | K | threads | variant | grouping | engine ms/pass | engine ns/add | bound ns/add (W, B) | ratio |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for n in args.sizes:
        name = "pendigits" if n == 10992 else "blobs"
        L, offsets = label_matrix(name, n, args.cache)
        if args.r != L.shape[1]:
            reps = -(-args.r // L.shape[1])
            L = np.ascontiguousarray(np.tile(L, (1, reps))[:, :args.r])
            sizes = L.max(axis=0).astype(np.int64) + 1
            offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        r = L.shape[1]
        for k in args.ks:
            adds = n * r * k
            for t in args.threads:
                engine = {}
                for v in engine_variants:
                    if hasattr(_kmeans, "_force_simd"):
                        _kmeans._force_simd(v)
                    for g in groupings:
                        if can_group:
                            _kmeans._group_rows(g == "on")
                        engine[v, g] = engine_pass(L, offsets, k, t, args.repeats)[0]
                if hasattr(_kmeans, "_force_simd"):
                    _kmeans._force_simd(None)
                if can_group:
                    _kmeans._group_rows(True)
                cell, bns = "-", None
                if exe is not None:
                    times = bound_pass(exe, work, L, offsets, k, t, args.repeats, args.col_block)
                    plain = {wb: s for wb, s in times.items() if wb[1] > 0}
                    wb = min(plain, key=plain.get)
                    bns = plain[wb] * 1e9 / adds
                    cell = f"{bns:.3f} (W={wb[0]}, B={wb[1]})"
                    blocked = {wb: s for wb, s in times.items() if wb[1] < 0}
                    if blocked:
                        cb = min(blocked, key=blocked.get)
                        cell += f"; partition-blocked {blocked[cb] * 1e9 / adds:.3f} (W={cb[0]})"
                for (v, g), sec in engine.items():
                    ens = sec * 1e9 / adds
                    ratio = f"{ens / bns:.2f}" if bns else "-"
                    lines.append(f"| {name} | {n} | {k} | {t} | {v} | {g} | {sec * 1e3:.2f} | {ens:.3f} | {cell} | {ratio} |")
                    print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
