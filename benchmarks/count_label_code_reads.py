"""One call of a method that reads the label codes, to count its instructions under callgrind.

Wall time on a shared virtual machine varies by 15% from run to run; the number of instructions
a call executes does not depend on the load. So a change to the compiled passes is compared by
running this script on the tree before and the tree after, each under callgrind, side by side:

    valgrind --tool=callgrind --callgrind-out-file=before.out <python binary> benchmarks/count_label_code_reads.py gkcc
    callgrind_annotate --inclusive=no before.out | head -30

(``<python binary>`` is the interpreter itself, not a shell wrapper such as pyenv's shim, which
valgrind would count instead.) The cases:

* ``gkcc`` -- GKCC (Li & Liu 2018) on the first 2000 objects of pendigits, nu = 59 (531
  generated partitions), one thread; uint8 codes;
* ``kcc`` and ``voting`` -- the method on 50000 objects x 100 noisy refinements of 8 classes,
  K_i in [8, 40] (``_common.noisy_refinements``, the ensembles of ``bench_label_codes.py``;
  uint8 codes), K = 8, one thread.

It prints the cluster sizes, which must be the same on both trees.
"""
import argparse
import os
import sys
import warnings

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout: use the tree this script lives in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cclust  # noqa: E402
from _common import noisy_refinements  # noqa: E402
from bench_gkcc import load  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case", choices=["gkcc", "kcc", "voting"])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.case == "gkcc":
        X, y = load("pendigits")
        X, y = X[:2000], y[:2000]
        K = int(y.max()) + 1
        result = cclust.get("gkcc")(None, K, X=X, n_partitions=59 * (K - 1), random_state=0, n_jobs=1)
    else:
        _, E = noisy_refinements(50000, 100)
        E.compact_labels()
        result = cclust.get(args.case)(E, 8, random_state=0, n_jobs=1)
    print(args.case, "cluster sizes:", np.bincount(result.labels).tolist())


if __name__ == "__main__":
    main()
