"""ARI and NMI: cclust against scikit-learn on the same labellings, in the same run.

Random labellings of n objects into K clusters (two independent draws per case); each function
is timed best-of-``--repeat`` on the same input, and the values are checked to agree. cclust is
timed once per thread count in ``--threads`` (default: 1 and every usable core), set through
``CCLUST_NUM_THREADS``. Prints a Markdown table (and writes it to ``--output`` if given)::

    python benchmarks/bench_metrics.py --output /tmp/bench_metrics.md
"""
import argparse
import os
import platform
import sys

import numpy as np
from _common import best_of, cpu_model, write_report

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout: use the tree this script lives in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))






def machine_line():
    import sklearn

    from cclust._ext import _contingency
    from cclust.validation import check_n_jobs

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return (f"{cpu_model()}, {os.cpu_count()} logical cores ({usable} usable), "
            f"OpenMP {'on' if _contingency.openmp_enabled() else 'off'}, cclust threads "
            f"{check_n_jobs(None)}; Python {platform.python_version()}, NumPy {np.__version__}, "
            f"scikit-learn {sklearn.__version__}; load average at start {load}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**6, 10**7])
    parser.add_argument("--clusters", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="cclust thread counts to time (default: 1 and every usable core)")
    parser.add_argument("--output", help="also write the Markdown table to this file")
    args = parser.parse_args(argv)

    from sklearn import metrics as skm

    from cclust import metrics as cm

    cases = {
        "ARI": (cm.ari, skm.adjusted_rand_score),
        # NMI with the same (sqrt = geometric) normalisation on both sides
        "NMI": (cm.nmi, lambda a, b: skm.normalized_mutual_info_score(a, b, average_method="geometric")),
    }
    from cclust.validation import check_n_jobs

    threads = args.threads or sorted({1, check_n_jobs(None)})
    machine = machine_line()
    rows = []
    for n in args.sizes:
        for k in args.clusters:
            rng = np.random.default_rng([args.seed, n, k])
            a = rng.integers(0, k, n)
            b = rng.integers(0, k, n)
            for name, (ours, theirs) in cases.items():
                ours(a[:1000], b[:1000])  # import and warm the compiled module outside the timing
                t_theirs, v_theirs = best_of(lambda: theirs(a, b), args.repeat)
                t_ours = []
                for t in threads:
                    os.environ["CCLUST_NUM_THREADS"] = str(t)
                    elapsed, v_ours = best_of(lambda: ours(a, b), args.repeat)
                    if abs(v_ours - v_theirs) > 1e-12:
                        raise SystemExit(f"{name} n={n} K={k}: cclust {v_ours!r} != scikit-learn {v_theirs!r}")
                    t_ours.append(elapsed)
                os.environ.pop("CCLUST_NUM_THREADS", None)
                rows.append((name, n, k, t_theirs, t_ours))
                print(f"  {name} n={n:.0e} K={k}: scikit-learn {t_theirs * 1e3:.1f} ms, cclust "
                      + ", ".join(f"{x * 1e3:.1f} ms ({t} thr)" for x, t in zip(t_ours, threads)),
                      file=sys.stderr, flush=True)

    command = "python benchmarks/bench_metrics.py " + " ".join(argv if argv is not None else sys.argv[1:])
    header = "| metric | n | K | scikit-learn (ms) |"
    rule = "| --- | ---: | ---: | ---: |"
    for t in threads:
        header += f" cclust, {t} thread{'s' if t > 1 else ''} (ms) | speed-up |"
        rule += " ---: | ---: |"
    lines = [header, rule]
    for name, n, k, t_theirs, t_ours in rows:
        line = f"| {name} | {n:.0e} | {k} | {t_theirs * 1e3:.1f} |"
        for elapsed in t_ours:
            line += f" {elapsed * 1e3:.1f} | {t_theirs / elapsed:.0f}x |"
        lines.append(line)
    text = "\n".join([
        f"Best of {args.repeat} wall-clock times per call on two random labellings (values checked "
        "equal to 1e-12); NMI uses the sqrt (geometric) normalisation on both sides.",
        "",
        *lines,
        "",
        f"Machine: {machine}.",
        "",
        f"Command: `{command.strip()}`",
        "",
    ])
    write_report(text, args.output)


if __name__ == "__main__":
    main()
