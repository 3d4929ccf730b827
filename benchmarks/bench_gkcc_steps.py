"""GKCC's candidate runs before/after the batched step (issue 22): bit-identity and speed.

Every case runs ``gkcc`` (Li & Liu 2018) and hashes what it returns: the generated partitions, the
candidate objectives (their float64 bytes), the winners, the final labels and objective. The
hashes recorded on the base commit (318dc31, one candidate K-means run per Python call) are
stored in ``benchmarks/data/gkcc_hashes.json``; a later tree must reproduce them bit for bit::

    python benchmarks/bench_gkcc_steps.py --record benchmarks/data/gkcc_hashes.json   # on the base
    python benchmarks/bench_gkcc_steps.py --check benchmarks/data/gkcc_hashes.json    # after
    python benchmarks/bench_gkcc_steps.py --check ... --cases pendigits:59:0 letter:59:0

A case is ``name:nu:seed[:scaling[:given]]`` (scaling raw or balanced; ``given`` adds two
k-means partitions with 10% missing labels as the given ensemble). Wall and CPU seconds
(process time, all threads) are printed per case; the machine is shared, so times are noisy.
``--reference`` runs the one-candidate-at-a-time path that the batched step replaced.
"""
import argparse
import hashlib
import json
import os
import sys
import time
import warnings

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout: use the tree this script lives in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cclust  # noqa: E402
from cclust.consensus_functions import gkcc as gkcc_module  # noqa: E402
from cclust.errors import ConvergenceWarning  # noqa: E402
from cclust.generators import CONVERGED_KMEANS  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gkcc import load  # noqa: E402  (the shared data sets, as bench_gkcc.py reads them)

CASES = ["iris:59:0", "wine:59:1:balanced", "ecoli:59:0", "ecoli:59:1:raw:given",
         "yeast:20:0", "vowel:10:2", "segment:15:0:balanced", "satimage:10:0",
         "pendigits:10:1", "letter:5:0", "pendigits:59:0", "letter:15:0"]


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:24]


def run_case(spec, n_jobs):
    parts = spec.split(":")
    name, nu, seed = parts[0], int(parts[1]), int(parts[2])
    scaling = parts[3] if len(parts) > 3 else "raw"
    given = len(parts) > 4 and parts[4] == "given"
    X, y = load(name)
    K = int(y.max()) + 1
    ensemble = None
    if given:
        # converged k-means (the generator's settings when the hashes were recorded), so that the
        # given partitions do not move when the generator's defaults do
        E = cclust.generate("kmeans", X, K, n_partitions=2, random_state=seed, **CONVERGED_KMEANS)
        labels = E.labels.copy()
        labels[np.random.default_rng(seed).random(labels.shape) < 0.1] = -1
        ensemble = cclust.Ensemble(labels)
    w0, c0 = time.perf_counter(), time.process_time()
    res = gkcc_module.gkcc(ensemble, K, X=X, n_partitions=nu * (K - 1), scaling=scaling,
                           random_state=seed, n_jobs=n_jobs)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    ex = res.extras
    hashes = {
        "partitions": digest(ex["ensemble"].labels),
        "candidate_objectives": digest(*ex["candidate_objectives"]),
        "candidate_n_iter": digest(*ex["candidate_n_iter"]),
        "winners": digest(ex["winners"]),
        "labels": digest(res.labels),
        "objective": float(res.objective).hex(),
        "kmeans_objective": float(ex["kmeans_objective"]).hex(),
    }
    phases = ex["phase_seconds"]
    return hashes, wall, cpu, float(phases["candidates"].sum())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=CASES)
    parser.add_argument("--record", default=None, help="write the hashes to this JSON file")
    parser.add_argument("--check", default=None, help="compare the hashes with this JSON file")
    parser.add_argument("--reference", action="store_true",
                        help="run the one-candidate-at-a-time path (the reference)")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    if args.reference:
        if not hasattr(gkcc_module, "_STEP"):
            raise SystemExit("this tree has only the reference path")
        gkcc_module._STEP = "reference"
    stored = {}
    if args.check:
        with open(args.check) as fh:
            stored = json.load(fh)
    recorded, failures = {}, []
    print(f"load {os.getloadavg()[0]:.2f} at start; n_jobs={args.n_jobs}", flush=True)
    print("| case | wall s | CPU s | candidates s | identical to the base |")
    print("| --- | --- | --- | --- | --- |")
    for spec in args.cases:
        hashes, wall, cpu, cand = run_case(spec, args.n_jobs)
        recorded[spec] = hashes
        verdict = "-"
        if args.check:
            if spec not in stored:
                verdict = "not recorded"
            else:
                bad = [k for k, v in stored[spec].items() if hashes.get(k) != v]
                verdict = "yes" if not bad else "NO: " + ", ".join(bad)
                if bad:
                    failures.append(spec)
        print(f"| {spec} | {wall:.2f} | {cpu:.2f} | {cand:.2f} | {verdict} |", flush=True)
    print(f"load {os.getloadavg()[0]:.2f} at end")
    if args.record:
        old = {}
        if os.path.exists(args.record):
            with open(args.record) as fh:
                old = json.load(fh)
        old.update(recorded)
        with open(args.record, "w") as fh:
            json.dump(old, fh, indent=1, sort_keys=True)
    if failures:
        raise SystemExit(f"hashes differ from the base for: {', '.join(failures)}")


if __name__ == "__main__":
    main()
