# R side of benchmarks/bench_clue.py: clue's cl_consensus on the ensemble in <dir>/labels.csv
# (one partition per column, labels 1..K_i) from the start in <dir>/start.csv.
# Usage: Rscript bench_clue.R <dir> <k> <methods, comma-separated: SE,HE,DWH,SM,HM,GV1>
# (SM needs the R package lpSolve, GV1 quadprog.)
# Prints one JSON line per method (elapsed seconds, clue's objective value) and writes
# <dir>/membership_<method>.csv.
suppressMessages(library(clue))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
k <- as.integer(args[2])
methods <- strsplit(args[3], ",")[[1]]
L <- as.matrix(read.csv(file.path(dir, "labels.csv"), header = FALSE))
S <- as.matrix(read.csv(file.path(dir, "start.csv"), header = FALSE))
dimnames(S) <- NULL
ens <- cl_ensemble(list = lapply(seq_len(ncol(L)), function(j) as.cl_partition(L[, j])))
for (m in methods) {
  control <- if (m == "DWH") list(k = k, order = seq_len(ncol(L))) else list(k = k, start = list(S))
  elapsed <- system.time(res <- cl_consensus(ens, method = m, control = control))[["elapsed"]]
  M <- cl_membership(res)
  objval <- attr(res$.Data, "meta")$objval
  if (is.null(objval)) objval <- NA
  write.table(matrix(unclass(M), nrow(M)), file.path(dir, paste0("membership_", m, ".csv")),
              sep = ",", row.names = FALSE, col.names = FALSE)
  cat(sprintf('{"method": "%s", "elapsed": %.3f, "objval": %s}\n', m, elapsed,
              if (is.na(objval)) "null" else format(objval, digits = 17)))
}
