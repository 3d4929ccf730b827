"""cclust's partition measures and medoid against R's clue (Hornik 2005): values and speed.

Run from the repository root (needs ``Rscript`` with the clue package):

    PYTHONPATH=. python benchmarks/compare_clue_measures.py                 # values and speed
    PYTHONPATH=. python benchmarks/compare_clue_measures.py --no-speed      # values only

Values: every measure on fixed inputs (hard, soft, mixed, and a near-identical soft pair where
a distance is small) next to clue's ``cl_agreement``/``cl_dissimilarity``; a value passes when
``|ours - clue| <= 1e-12 max(1, |clue|)``. clue's Mallows distance needs the R package lpSolve;
when it is missing, the script compares with clue's own column distances (``.cxdist``) and
``solve_LSAP`` (the unit-mass transportation problem is an assignment problem) and says so.
The medoid of an ensemble (``cl_medoid``) is compared by the member chosen.

Speed: the same measures at n = 10,000 and 100,000 on a hard pair (K = 10 and 12) and a soft
pair (K = 5 and 6); the best of three wall times in each language, inputs already in memory.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_of, cpu_model, write_report  # noqa: E402

import cclust  # noqa: E402
from cclust import metrics  # noqa: E402
from cclust.datasets import load_iris  # noqa: E402

#: cclust name -> (clue function, clue method, extra R arguments)
MEASURES = {
    "euclidean-distance": ("cl_dissimilarity", "euclidean", ""),
    "euclidean-agreement": ("cl_agreement", "euclidean", ""),
    "manhattan-distance": ("cl_dissimilarity", "manhattan", ""),
    "manhattan-agreement": ("cl_agreement", "manhattan", ""),
    "mallows-distance": ("cl_dissimilarity", "Mallows", ", p = 2"),
    "angle": ("cl_agreement", "angle", ""),
    "diag": ("cl_agreement", "diag", ""),
    "fowlkes-mallows": ("cl_agreement", "FM", ""),
    "jaccard": ("cl_agreement", "Jaccard", ""),
    "katz-powell": ("cl_agreement", "KP", ""),
    "purity": ("cl_agreement", "purity", ""),
    "boorman-arabie-a": ("cl_dissimilarity", "BA/A", ""),
    "boorman-arabie-d": ("cl_dissimilarity", "BA/D", ""),
    "boorman-arabie-c": ("cl_dissimilarity", "BA/C", ""),
    "boorman-arabie-e": ("cl_dissimilarity", "BA/E", ""),
    "comembership-distance": ("cl_dissimilarity", "comemberships", ""),
    "gv1-distance": ("cl_dissimilarity", "GV1", ""),
    "symdiff-distance": ("cl_dissimilarity", "symdiff", ""),
    "prediction-strength": ("cl_agreement", "PS", ""),
    "vi": ("cl_dissimilarity", "VI", ""),
    "rand": ("cl_agreement", "Rand", ""),
    "ari": ("cl_agreement", "cRand", ""),
    "nmi": ("cl_agreement", "NMI", ""),
    # cclust's mallows_distance with masses alpha = 1..k, beta = k..1 (k = max(K_a, K_b)), p = 2
    "mallows-distance-masses": ("cl_dissimilarity", "Mallows-masses", ""),
    # cclust's cssd (not registered: it needs prototype distances) with L_jl = 1 + |j - l| + j / 2,
    # alpha = 1 (K_a of them), beta = K_a / K_b (K_b of them)
    "cssd": ("cl_dissimilarity", "CSSD", ""),
}

#: Compared on hard pairs only: clue refuses soft partitions for cRand and NMI ("Can only handle
#: hard partitions"); cclust's rand takes labels (for soft ones boorman-arabie-d is 1 - Rand).
HARD_ONLY = ("ari", "nmi", "rand")

R_HELPERS = r"""
suppressMessages(library(clue))
has_lpsolve <- requireNamespace("lpSolve", quietly = TRUE)
read_partition <- function(path) {
  if (grepl("_soft[.]csv$", path)) as.cl_partition(as.cl_membership(as.matrix(read.csv(path, header = FALSE))))
  else as.cl_partition(scan(path, quiet = TRUE))
}
measure <- function(fun, method, x, y) {
  if (method == "Mallows" && !has_lpsolve) {
    # clue's Mallows with alpha = beta = 1 and p = 2, lp.transport replaced by clue's solve_LSAP
    k <- max(n_of_classes(x), n_of_classes(y))
    C <- clue:::.cxdist(cl_membership(x, k), cl_membership(y, k), "minkowski", 2)^2
    ind <- solve_LSAP(C)
    return(sqrt(sum(C[cbind(seq_along(ind), ind)])))
  }
  if (method == "Mallows") return(as.numeric(cl_dissimilarity(x, y, method = "Mallows", p = 2)))
  if (method == "CSSD") {
    ka <- n_of_classes(x); kb <- n_of_classes(y)
    L <- outer(seq_len(ka) - 1, seq_len(kb) - 1, function(j, l) 1 + abs(j - l) + j / 2)
    return(as.numeric(cl_dissimilarity(x, y, method = "CSSD", L = L, alpha = rep(1, ka), beta = rep(ka / kb, kb))))
  }
  if (method == "Mallows-masses") {
    k <- max(n_of_classes(x), n_of_classes(y))
    return(as.numeric(cl_dissimilarity(x, y, method = "Mallows", p = 2, alpha = seq_len(k), beta = rev(seq_len(k)))))
  }
  as.numeric(do.call(fun, list(x, y, method = method)))
}
"""


def _write(path, partition):
    partition = np.asarray(partition)
    if partition.ndim == 1:
        np.savetxt(path, partition + 1, fmt="%d")
    else:
        np.savetxt(path, partition, fmt="%.17g", delimiter=",")


def _inputs():
    rng = np.random.default_rng(2005)
    X, y = load_iris()
    fitted = cclust.generate("kmeans", X, 3, n_partitions=1, k_range=(3, 3), random_state=0).labels[:, 0]
    hard_a, hard_b = rng.integers(0, 4, 500), rng.integers(0, 6, 500)
    soft_a = rng.dirichlet(np.full(3, 0.5), 300)
    soft_b = rng.dirichlet(np.full(5, 0.5), 300)
    near = soft_a[:, [2, 0, 1]] + rng.uniform(0, 1e-6, soft_a.shape)
    near /= near.sum(axis=1, keepdims=True)
    return {
        "iris-truth-vs-kmeans": (y, fitted),
        "hard-K4-vs-K6": (hard_a, hard_b),
        "soft-K3-vs-K5": (soft_a, soft_b),
        "hard-K4-vs-soft-K3": (hard_a[:300], soft_a),
        "soft-near-identical": (soft_a, near),
    }


def _run_r(script, workdir):
    path = os.path.join(workdir, "run.R")
    with open(path, "w") as handle:
        handle.write(R_HELPERS + script)
    out = subprocess.run(["Rscript", path], capture_output=True, text=True, cwd=workdir, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"Rscript failed:\n{out.stderr}")
    return out.stdout, out.stderr


def _n_classes(partition):
    """clue's number of classes: distinct labels, or columns of positive total membership."""
    partition = np.asarray(partition)
    return len(np.unique(partition)) if partition.ndim == 1 else int((partition.sum(axis=0) > 0).sum())


def _ours(name, a, b):
    if name == "mallows-distance":
        return metrics.mallows_distance(a, b, p=2.0)
    if name == "mallows-distance-masses":
        k = max(_n_classes(a), _n_classes(b))
        return metrics.mallows_distance(a, b, p=2.0, alpha=np.arange(1.0, k + 1), beta=np.arange(k, 0.0, -1))
    if name == "cssd":
        ka, kb = _n_classes(a), _n_classes(b)
        j, l = np.meshgrid(np.arange(ka), np.arange(kb), indexing="ij")
        return metrics.cssd(a, b, L=1 + np.abs(j - l) + j / 2, alpha=np.ones(ka), beta=np.full(kb, ka / kb))
    return cclust.get(name)(a, b)


def compare_values(workdir):
    pairs = _inputs()
    lines = []
    for pid, (a, b) in pairs.items():
        fa = f"{pid}_a_{'soft' if np.ndim(a) == 2 else 'hard'}.csv"
        fb = f"{pid}_b_{'soft' if np.ndim(b) == 2 else 'hard'}.csv"
        _write(os.path.join(workdir, fa), a)
        _write(os.path.join(workdir, fb), b)
        for name, (fun, method, _) in MEASURES.items():
            if name in HARD_ONLY and (np.ndim(a) == 2 or np.ndim(b) == 2):
                continue
            lines.append(f'cat("{pid}", "{name}", sprintf("%.17g", measure("{fun}", "{method}", '
                         f'read_partition("{fa}"), read_partition("{fb}"))), "\\n")')
    lines.append('cat("lpSolve", has_lpsolve, "\\n")')
    stdout, _ = _run_r("\n".join(lines) + "\n", workdir)
    clue, lpsolve = {}, False
    for line in stdout.splitlines():
        parts = line.split()
        if parts[0] == "lpSolve":
            lpsolve = parts[1] == "TRUE"
        else:
            clue[(parts[0], parts[1])] = float(parts[2])
    rows, worst = [], 0.0
    for pid, (a, b) in pairs.items():
        for name in MEASURES:
            if (pid, name) not in clue:
                continue
            ours = float(_ours(name, a, b))
            theirs = clue[(pid, name)]
            diff = abs(ours - theirs)
            scaled = diff / max(1.0, abs(theirs))
            worst = max(worst, scaled)
            verdict = "yes" if scaled <= 1e-12 else "NO"
            if verdict == "NO" and name in LITERAL:
                # clue's value may carry cancellation: which side does the literal definition (math.fsum) back?
                exact = LITERAL[name](a, b)
                verdict = (f"NO; literal value {exact:.17g}: cclust off by {abs(ours - exact):.1e}, "
                           f"clue by {abs(theirs - exact):.1e}")
            rows.append((pid, name, ours, theirs, diff, verdict))
    return rows, worst, lpsolve


def _literal_gv1(a, b):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    import reference_clue_measures

    return reference_clue_measures.gv1(a, b)


#: Literal references (the tests' slow definitions) consulted when a value differs from clue's.
LITERAL = {"gv1-distance": _literal_gv1}


def compare_medoid(workdir):
    rng = np.random.default_rng(7)
    n, r = 2000, 12
    truth = rng.integers(0, 4, n)
    columns = []
    for j in range(r):
        noisy = truth.copy()
        flip = rng.random(n) < 0.05 + 0.03 * j
        noisy[flip] = rng.integers(0, 4 + j % 3, int(flip.sum()))
        columns.append(noisy)
    L = np.column_stack(columns)
    np.savetxt(os.path.join(workdir, "ensemble.csv"), L + 1, fmt="%d", delimiter=",")
    script = textwrap.dedent("""
        L <- as.matrix(read.csv("ensemble.csv", header = FALSE))
        ens <- cl_ensemble(list = lapply(seq_len(ncol(L)), function(j) as.cl_partition(L[, j])))
        for (m in c("euclidean", "manhattan")) {
          d <- as.matrix(cl_dissimilarity(ens, method = m))
          cat(m, which.min(rowSums(d)) - 1, sprintf("%.17g", min(rowSums(d))), "\\n")
        }
    """)
    stdout, _ = _run_r(script, workdir)
    rows = []
    for line in stdout.splitlines():
        method, member, total = line.split()
        ours = cclust.consensus("medoid", L, None, metric=f"{method}-distance")
        rows.append((method, ours.extras["member"], int(member), ours.objective * r, float(total)))
    return rows


def _speed_inputs(n, rng):
    hard = (rng.integers(0, 10, n), rng.integers(0, 12, n))
    soft = (rng.dirichlet(np.full(5, 0.5), n), rng.dirichlet(np.full(6, 0.5), n))
    return {"hard K=10/12": hard, "soft K=5/6": soft}


def compare_speed(workdir, sizes, repeats=3):
    rng = np.random.default_rng(1)
    rows = []
    for n in sizes:
        for label, (a, b) in _speed_inputs(n, rng).items():
            tag = label.split()[0]  # "hard" or "soft": the file suffix read_partition reads
            fa, fb = f"speed_{n}_{tag}_a_{tag}.csv", f"speed_{n}_{tag}_b_{tag}.csv"
            _write(os.path.join(workdir, fa), a)
            _write(os.path.join(workdir, fb), b)
            lines = [f'x <- read_partition("{fa}"); y <- read_partition("{fb}")']
            names = [m for m in MEASURES if not (tag == "soft" and m in HARD_ONLY)]
            for name in names:
                fun, method, _ = MEASURES[name]
                lines.append(f'cat("{name}", min(replicate({repeats}, system.time(measure("{fun}", "{method}", x, y))'
                             f'[["elapsed"]])), "\\n")')
            stdout, _ = _run_r("\n".join(lines) + "\n", workdir)
            clue = {line.split()[0]: float(line.split()[1]) for line in stdout.splitlines()}
            for name in names:
                seconds, _ = best_of(lambda: _ours(name, a, b), repeats)
                rows.append((n, label, name, seconds, clue[name]))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--out", default=None, help="also write the Markdown report here")
    args = parser.parse_args(argv)
    version = subprocess.run(["Rscript", "-e", 'cat(as.character(packageVersion("clue")))'],
                             capture_output=True, text=True, check=True).stdout.strip()
    report = [f"clue {version}, cclust {cclust.__version__}, {cpu_model()}", ""]
    with tempfile.TemporaryDirectory() as workdir:
        rows, worst, lpsolve = compare_values(workdir)
        report += ["| input | measure | cclust | clue | abs. difference | within 1e-12 |",
                   "|---|---|---|---|---|---|"]
        report += [f"| {p} | {m} | {o:.17g} | {t:.17g} | {d:.1e} | {ok} |" for p, m, o, t, d, ok in rows]
        report += ["", f"Largest |ours - clue| / max(1, |clue|): {worst:.2e}; Mallows (p = 2) against "
                   + ("clue's cl_dissimilarity" if lpsolve else
                      "clue's .cxdist + solve_LSAP (R package lpSolve not installed)"), ""]
        report += ["| medoid metric | cclust member | clue member | cclust sum | clue sum |", "|---|---|---|---|---|"]
        report += [f"| {m} | {a} | {b} | {s:.12g} | {t:.12g} |" for m, a, b, s, t in compare_medoid(workdir)]
        if not args.no_speed:
            sizes = [int(s) for s in args.sizes.split(",")]
            report += ["", "| n | inputs | measure | cclust (ms) | clue (ms) | clue / cclust |",
                       "|---|---|---|---|---|---|"]
            for n, label, name, ours, theirs in compare_speed(workdir, sizes):
                ratio = theirs / ours if ours > 0 else float("inf")
                report.append(f"| {n:,} | {label} | {name} | {ours * 1e3:.3g} | {theirs * 1e3:.0f} | {ratio:.0f}x |")
    write_report("\n".join(report), args.out)


if __name__ == "__main__":
    main()
