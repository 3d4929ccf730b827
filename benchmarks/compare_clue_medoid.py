"""cclust's medoid of soft partitions against clue's ``cl_medoid`` (Hornik 2005), same inputs.

Random soft partitions (membership matrices) are written to CSV, R's clue reads them as soft
partitions (``as.cl_partition`` of a membership matrix), and both sides report every member's
sum of dissimilarities to the others and the chosen member, for clue's soft methods
"euclidean" and "manhattan" (cclust's "euclidean-distance" and "manhattan-distance"; cclust
reports the weighted average, here multiplied by r to give clue's sum).

Usage::

    python benchmarks/compare_clue_medoid.py            # needs Rscript with clue
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import cclust
from cclust.soft import SoftEnsemble

R_SCRIPT = r"""
library(clue)
args <- commandArgs(trailingOnly = TRUE)
files <- sort(Sys.glob(file.path(args[1], "membership_*.csv")))
ens <- cl_ensemble(list = lapply(files, function(f) as.cl_partition(as.matrix(read.csv(f, header = FALSE)))))
for (method in c("euclidean", "manhattan")) {
  d <- as.matrix(cl_dissimilarity(ens, method = method))
  m <- cl_medoid(ens, method = method)
  U <- cl_membership(m)
  pick <- which(sapply(files, function(f) {
    V <- as.matrix(read.csv(f, header = FALSE)); all(dim(V) == dim(U)) && max(abs(V - U)) < 1e-12 }))[1]
  cat(method, pick - 1, sprintf("%.15g", rowSums(d)), "\n")
}
"""


def main():
    rows = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n, ks = 40, rng.integers(2, 6, size=8)
        mats = []
        for k in ks:
            U = rng.random((n, int(k))) ** 3
            mats.append(U / U.sum(1, keepdims=True))
        S = SoftEnsemble(mats)
        with tempfile.TemporaryDirectory() as tmp:
            for i, U in enumerate(S.memberships):
                np.savetxt(os.path.join(tmp, f"membership_{i:02d}.csv"), U, delimiter=",", fmt="%.17g")
            script = os.path.join(tmp, "medoid.R")
            with open(script, "w") as handle:
                handle.write(R_SCRIPT)
            out = subprocess.run(["Rscript", script, tmp], capture_output=True, text=True, check=True).stdout
        for line in out.strip().splitlines():
            method, pick, *sums = line.split()
            clue_sums = np.array(sums, dtype=float)
            ours = cclust.consensus("medoid", S, None, metric=f"{method}-distance")
            our_sums = ours.extras["scores"] * S.n_partitions
            rel = float(np.max(np.abs(our_sums - clue_sums) / clue_sums))
            rows.append(f"| {seed} | {method} | {int(pick)} | {ours.extras['member']} | {rel:.1e} |")
    print("Command: `python benchmarks/compare_clue_medoid.py`\n")
    print("| seed | method | clue's medoid | cclust's medoid | max relative difference of the sums |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
