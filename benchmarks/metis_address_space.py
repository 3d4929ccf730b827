"""The least address space METIS needs to partition a graph, found by bisection.

Each trial is a child process that builds the graph, makes one small METIS call (imports,
one-off buffers), limits its address space (``RLIMIT_AS``) to its size plus the trial's
headroom and partitions the graph; the headroom is halved towards the least one that
succeeds. A child per trial, because a second failed METIS allocation in one process ends it.
Linux only. Prints one line per graph: vertices + adjacency entries, the least headroom and
that headroom per (vertices + entries) idx_t (the figure ``cclust.graph.metis_bytes`` bounds).

    python benchmarks/metis_address_space.py
"""
import os
import subprocess
import sys

CHILD = r'''
import resource, sys
import numpy as np, scipy.sparse as sp, pymetis
kind, n, degree, parts, headroom = sys.argv[1], *map(int, sys.argv[2:])
rng = np.random.default_rng(0)
rows = np.repeat(np.arange(n), degree)
if kind == "random":
    cols = rng.integers(0, n, size=n * degree)
else:  # four blocks: every edge inside its block
    cols = (rows // (n // 4)) * (n // 4) + rng.integers(0, n // 4, size=n * degree)
S = sp.csr_matrix((np.ones(n * degree), (rows, cols)), shape=(n, n))
S = S + S.T
S.setdiag(0)
S.eliminate_zeros()
S.sort_indices()
xadj, adjncy = S.indptr.astype(np.int64), S.indices.astype(np.int64)
ring = np.arange(9), np.roll(np.arange(8), -1)
pymetis.part_graph(2, adjacency=pymetis.CSRAdjacency(*ring), options=pymetis.Options(seed=0))
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + headroom, resource.RLIM_INFINITY))
try:
    pymetis.part_graph(parts, adjacency=pymetis.CSRAdjacency(xadj, adjncy), eweights=np.ones(S.nnz, dtype=np.int64),
                       options=pymetis.Options(seed=0))
    print("OK", n + S.nnz)
except Exception:
    print("FAIL", n + S.nnz)
'''

GRAPHS = [("random", 20_000, 20, 4), ("random", 100_000, 10, 4), ("blocks", 3_000, 1_500, 4),
          ("blocks", 50_000, 30, 16), ("random", 3_000, 3_000, 4)]


def trial(graph, headroom):
    env = dict(os.environ, OMP_NUM_THREADS="1", MALLOC_ARENA_MAX="1")
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, graph), str(headroom)], capture_output=True,
                          text=True, env=env)
    last = [line for line in done.stdout.splitlines() if line.startswith(("OK", "FAIL"))] or ["FAIL 0"]
    outcome, size = last[-1].split()
    return outcome == "OK", int(size)


def main():
    for graph in GRAPHS:
        low, high, size = 0, 2**31, 0
        while high - low > max(2**20, high // 50):
            middle = (low + high) // 2
            ok, size = trial(graph, middle)
            low, high = (low, middle) if ok else (middle, high)
        print(*graph, "vertices+entries", size, "least headroom (MiB)", round(high / 2**20),
              "per idx_t", round(high / (8 * size), 1), flush=True)


if __name__ == "__main__":
    main()
