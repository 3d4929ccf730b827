"""One front end for the reproduction and speed runs of the last decade's consensus functions.

Each family has its own script (``benchmarks/modern_<family>.py``) with the paper's protocol,
its published tables and the authors' code under GNU Octave; this runs the chosen families one
after the other, each in its own process, with one shared set of options, and says which
command produced which table.

    PYTHONPATH=. python benchmarks/reproduce_modern.py                  # every --reproduce
    PYTHONPATH=. python benchmarks/reproduce_modern.py --bench          # every --bench (speed)
    PYTHONPATH=. python benchmarks/reproduce_modern.py --families ecpcs lce --runs 10
    PYTHONPATH=. python benchmarks/reproduce_modern.py --list

``benchmarks/bench_modern.py`` is the same front end with ``--bench`` preset. Options after
``--`` go to every family script unchanged.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# family -> (script, methods, paper): the order is the issue's table.
FAMILIES = {
    "locally_weighted": ("modern_locally_weighted.py", "lwea, lwgp", "Huang, Wang & Lai 2018"),
    "trajectories": ("modern_trajectories.py", "pta, ptgp", "Huang, Lai & Wang 2016"),
    "ecpcs": ("modern_ecpcs.py", "ecpcs-hc, ecpcs-mc", "Huang et al. 2021"),
    "sec": ("modern_sec.py", "sec", "Liu, Wu, Liu, Tao & Fu 2017"),
    "nmf": ("modern_nmf.py", "nmf, best-of", "Li, Ding & Jordan 2007"),
    "lce": ("modern_lce.py", "lce", "Iam-On, Boongoen, Garrett & Price 2011"),
    "weac": ("modern_weac.py", "weac, gp-mgla", "Huang, Lai & Wang 2015"),
    "bce": ("modern_bce.py", "bce", "Wang, Shan & Banerjee 2009"),
}

# Scripts whose modes are named differently: what --reproduce / --bench mean for them.
MODES = {
    "sec": {"reproduce": ["--reproduce"], "bench": ["--scale"]},
    "nmf": {"reproduce": ["--scale"], "bench": ["--scale"]},
}


def command(family, mode, runs, extra):
    script = os.path.join(HERE, FAMILIES[family][0])
    args = MODES.get(family, {}).get(mode, [f"--{mode}"])
    if runs is not None and family != "nmf":
        args = args + ["--runs", str(runs)]
    return [sys.executable, script, *args, *extra]


def main(argv=None, default_mode="reproduce"):
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", nargs="+", choices=list(FAMILIES), default=list(FAMILIES))
    parser.add_argument("--bench", action="store_true", help="run each family's speed run instead")
    parser.add_argument("--runs", type=int, default=None, help="runs per data set (default: each script's)")
    parser.add_argument("--list", action="store_true", help="print the families and their commands")
    args = parser.parse_args(argv)
    mode = "bench" if args.bench or default_mode == "bench" else "reproduce"
    failed = []
    for family in args.families:
        script, methods, paper = FAMILIES[family]
        cmd = command(family, mode, args.runs, extra)
        shown = "PYTHONPATH=. python " + " ".join(["benchmarks/" + script] + cmd[2:])
        if args.list:
            print(f"{family:17s} {methods:20s} {paper}\n    {shown}")
            continue
        if not os.path.exists(os.path.join(HERE, script)):
            print(f"## {methods} ({paper}): no {script} in this checkout, skipped\n", flush=True)
            continue
        print(f"## {methods} ({paper})\n\n    {shown}\n", flush=True)
        start = time.perf_counter()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(HERE), HERE,
                                                            os.environ.get("PYTHONPATH", "")]))
        code = subprocess.call(cmd, env=env)
        print(f"\n({family}: exit status {code}, {time.perf_counter() - start:.0f} s)\n", flush=True)
        if code:
            failed.append(family)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
