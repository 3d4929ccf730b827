"""Start rules of the median partitions (SE, HE, SM, HM, GV1, DWH), the medoid and IVC on easy data.

Well-separated blobs (:func:`cclust.testing.easy_blobs`) with 50 k-means partitions of K_i in
the generator's default range [K, sqrt(n)], the true K asked for, 5 seeds per case. For every
method and start rule the table gives, per case, the seeds recovered (ARI >= 0.95 against the
blobs) out of 5; over all cases, how often the rule reaches the best criterion that 20 random
starts find (within a relative 1e-6, and within 0.1%: soft
memberships have many fixed points of nearly equal criterion; a lower value counts too), and its wall time relative to
clue's rule (one random start, the method's former default).

    python benchmarks/median_starts.py                          # every method, every rule
    python benchmarks/median_starts.py --methods se he --seeds 0 1
    python benchmarks/median_starts.py --clue                   # also R's clue (Rscript with clue)

Rules: ``random1`` is clue's (``init="random", n_init=1``; DWH: one random order), ``randomN``
N random starts (orders), ``kcc1`` the KCC start alone, ``kccN`` the KCC start and N - 1 random
ones (``init="kcc", n_init=N``). IVC: its k-means++ restarts (``kmpp10``, ``kmpp20``), base
partitions as starts (``partitions10``, Nguyen & Caruana's) and the KCC labels as the start
(``kcc``). The medoid has one rule; its row also says how many members have K clusters (the
medoid's candidates) and the best ARI among them.

With ``--clue``, clue's ``cl_consensus`` runs in R (``Rscript``) on the same ensembles at its
defaults (``nruns = 1``: one random start; DWH one random order) and at the effort of cclust's
default (``nruns`` = cclust's ``n_init``), and its membership is scored by cclust's criterion.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import cclust
from cclust.metrics import ari as adjusted_rand_index
from cclust.testing import easy_ensemble

#: (n_samples, n_clusters, ratio): ratio 3 with K = 4 puts half the objects in one blob.
CASES = {"n1500-k4-balanced": (1500, 4, 1), "n2500-k7-balanced": (2500, 7, 1), "n3000-k4-half": (3000, 4, 3)}
N_PARTITIONS = 50
MEDIAN = ("se", "he", "sm", "hm", "gv1")
RULES = {
    **{m: {"random1": dict(init="random", n_init=1), "kcc1": dict(init="kcc", n_init=1),
           "kcc3": dict(init="kcc", n_init=3), "random20": dict(init="random", n_init=20)} for m in MEDIAN},
    "dwh": {"random1": dict(n_init=1), "random3": dict(n_init=3), "random20": dict(n_init=20)},
    "ivc": {"kmpp10": dict(init="k-means++", n_init=10), "kmpp20": dict(init="k-means++", n_init=20),
            "partitions10": dict(init="partitions", n_init=10), "kcc": "kcc"},
    "medoid": {"member": {}},
}
REFERENCE = "random20"
CLUE_NAMES = {"se": "SE", "he": "HE", "sm": "SM", "hm": "HM", "gv1": "GV1", "dwh": "DWH"}

_R_CODE = r"""
suppressMessages(library(clue))
args <- commandArgs(trailingOnly = TRUE)
L <- as.matrix(read.csv(args[1], header = FALSE))
k <- as.integer(args[2]); m <- args[3]; nruns <- as.integer(args[4]); set.seed(as.integer(args[5]))
ens <- cl_ensemble(list = lapply(seq_len(ncol(L)), function(j) as.cl_partition(L[, j])))
control <- if (m == "DWH") list(k = k) else list(k = k, nruns = nruns)
elapsed <- system.time(res <- cl_consensus(ens, method = m, control = control))[["elapsed"]]
M <- unclass(cl_membership(res))
write.table(matrix(M, nrow(M)), args[6], sep = ",", row.names = FALSE, col.names = FALSE)
cat(sprintf("%.3f\n", elapsed))
"""


def run_rule(method, rule, E, k, seed):
    fn = cclust.get(method, kind="consensus")
    start = time.perf_counter()
    if rule == "kcc":     # IVC from the KCC labels
        labels = cclust.get("kcc")(E, k, random_state=seed).labels
        result = fn(E, k, init=labels)
    else:
        result = fn(E, k, random_state=seed, **rule)
    return result, time.perf_counter() - start


def score(method, E, k, membership):
    """cclust's criterion of a membership matrix (every partition matched to it afresh)."""
    from cclust.consensus_functions import median as md
    from cclust.consensus_functions import _median as mc
    from cclust.consensus_functions import gordon_vichi as gv

    data = mc.Memberships(E, None, method)
    M = np.asarray(membership, dtype=np.float64)
    if method == "gv1":
        T = data.cross(M)
        return gv._gv1_value(data, M, T, gv._gv1_match(data, M, T))
    full = np.zeros((data.n, max(k, data.k_max)))
    full[:, :M.shape[1]] = M
    return md._final_value(data, full, {"se": "SE", "dwh": "SE", "he": "SE", "sm": "SM", "hm": "SM"}[method])


def run_clue(method, E, k, nruns, seed, workdir):
    labels_csv, out_csv, script = (os.path.join(workdir, f) for f in ("labels.csv", "m.csv", "run.R"))
    np.savetxt(labels_csv, np.asarray(E.labels) + 1, fmt="%d", delimiter=",")
    with open(script, "w") as handle:
        handle.write(_R_CODE)
    out = subprocess.run(["Rscript", script, labels_csv, str(k), CLUE_NAMES[method], str(nruns), str(seed), out_csv],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"Rscript failed:\n{out.stderr[-2000:]}")
    M = np.loadtxt(out_csv, delimiter=",", ndmin=2)
    return M, float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=list(RULES))
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--rules", nargs="+", default=None, help="only these rules (e.g. random1 kcc3)")
    parser.add_argument("--clue", action="store_true", help="also run R's clue (needs Rscript and clue)")
    args = parser.parse_args(argv)
    print(f"# {N_PARTITIONS} k-means partitions per ensemble, seeds {args.seeds}; load average "
          f"{os.getloadavg()[0]:.2f} at the start", flush=True)
    for method in args.methods:
        rules = {name: rule for name, rule in RULES[method].items() if args.rules is None or name in args.rules}
        rec = {rule: {"ok": {c: 0 for c in args.cases}, "best": 0, "near": 0, "time": 0.0, "runs": 0,
                       "obj": 0.0} for rule in rules}
        clue = {}
        members = []
        for case in args.cases:
            n, k, ratio = CASES[case]
            for seed in args.seeds:
                _, y, E = easy_ensemble(n, k, ratio=ratio, n_partitions=N_PARTITIONS, seed=seed)
                got = {}
                for name, rule in rules.items():
                    result, seconds = run_rule(method, rule, E, k, seed)
                    got[name] = (result.objective, adjusted_rand_index(y, result.labels), seconds)
                    rec[name]["ari"] = rec[name].get("ari", 0.0) + got[name][1]
                if method == "medoid":
                    right = np.flatnonzero(np.asarray(E.n_clusters) == k)
                    best = max((adjusted_rand_index(y, E.labels[:, j]) for j in right), default=float("nan"))
                    members.append(f"{case} s{seed}: ARI {got['member'][1]:.2f}, {right.size} members with K "
                                   f"clusters, best of them ARI {best:.2f}")
                ref = got[REFERENCE][0] if REFERENCE in got else None
                for name, (obj, ari, seconds) in got.items():
                    r = rec[name]
                    r["ok"][case] += ari >= 0.95
                    r["best"] += ref is not None and obj <= ref + 1e-6 * abs(ref)
                    r["near"] += ref is not None and obj <= ref + 1e-3 * abs(ref)
                    r["time"] += seconds
                    r["runs"] += 1
                    r["obj"] += obj
                if args.clue and method in CLUE_NAMES:
                    effort = {"dwh": 1}.get(method, 3)
                    with tempfile.TemporaryDirectory() as workdir:
                        for label, nruns in (("clue nruns=1", 1), (f"clue nruns={effort}", effort)):
                            M, seconds = run_clue(method, E, k, nruns, seed, workdir)
                            c = clue.setdefault(label, {"ok": {cc: 0 for cc in args.cases}, "best": 0, "near": 0,
                                                        "time": 0.0, "runs": 0, "obj": 0.0})
                            obj = score(method, E, k, M)
                            c["ok"][case] += adjusted_rand_index(y, M.argmax(axis=1)) >= 0.95
                            c["best"] += ref is not None and obj <= ref + 1e-6 * abs(ref)
                            c["near"] += ref is not None and obj <= ref + 1e-3 * abs(ref)
                            c["time"] += seconds
                            c["runs"] += 1
                            c["obj"] += obj
                            c["ari"] = c.get("ari", 0.0) + adjusted_rand_index(y, M.argmax(axis=1))
                            if effort == 1:
                                break
                print(f"  {method} {case} seed {seed}: " + ", ".join(
                    f"{name} {obj!r} ARI {ari:.2f} {sec:.2f}s" for name, (obj, ari, sec) in got.items()),
                    file=sys.stderr, flush=True)
        base = rec[next(iter(rules))]["time"]
        print(f"\n{method}: seeds recovered (ARI >= 0.95) of {len(args.seeds)} per case; cases reaching "
              f"{REFERENCE}'s criterion; time relative to {next(iter(rules))}")
        print("| rule | " + " | ".join(args.cases) + " | best criterion (1e-6) | within 0.1% | mean criterion | "
              "mean ARI | time |")
        print("|---|" + "---|" * len(args.cases) + "---|---|---|---|---|")
        for name, r in list(rec.items()) + list(clue.items()):
            best = f"{r['best']}/{r['runs']} | {r['near']}/{r['runs']}" if REFERENCE in rules else "- | -"
            print(f"| {name} | " + " | ".join(str(r["ok"][c]) for c in args.cases) +
                  f" | {best} | {r['obj'] / r['runs']:.2f} | {r.get('ari', 0.0) / r['runs']:.3f} | "
                  f"{r['time'] / base:.2f}x |")
        for line in members:
            print(f"  {line}")
        sys.stdout.flush()
    print(f"\n# load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
