"""Every registered consensus method at 50000 objects, through the installed ``cclust`` command.

Writes ``make_blobs``-style data (50000 x 20, K = 5 Gaussian blobs, seed 0) as a CSV to a
temporary folder, generates ONE ensemble with the command's defaults (``cclust run DATA -m kcc
-k 5 --save-ensemble ens.npz``: 100 partitions of the ``kmeans`` generator, seed 0), then, for
every registered consensus method with its defaults:

* ``cclust fuse ens.npz -m M -k 5`` for a method that needs the partitions only;
* ``cclust run DATA -m M -k 5`` for a method that also needs the features (``requires_X``),
  which generates the same ensemble again (same seed) -- its time includes that generation.

Each command runs in its own process with a time limit; the table gives its wall time, the
peak resident memory of that process (``os.wait4``), the ARI of its labels against the blobs,
or the one line it printed when it refused. A last row runs the default estimator,
``ConsensusClustering(n_clusters=5, random_state=0).fit_predict(X)``, in a child process the
same way::

    python benchmarks/bench_run_all_methods.py --timeout 120 --out all_methods.md

The machine may be shared: the load average is printed with the table; times are rough.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout: use the tree this script lives in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import cpu_model, write_report  # noqa: E402

ESTIMATOR = """
import sys
import numpy as np
from cclust import ConsensusClustering
X = np.load(sys.argv[1])
np.save(sys.argv[2], ConsensusClustering(n_clusters=5, random_state=0).fit_predict(X))
"""


def blobs(n, d, k, seed):
    """``n`` objects in ``k`` Gaussian blobs of unit spread in ``d`` dimensions, centres drawn
    uniformly in [-10, 10]^d (scikit-learn's make_blobs defaults), and their blob."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, size=(k, d))
    truth = rng.integers(0, k, size=n)
    return centres[truth] + rng.standard_normal((n, d)), truth


def cclust_command():
    """The installed ``cclust`` script of this interpreter."""
    path = os.path.join(sysconfig.get_path("scripts"), "cclust")
    if not os.path.exists(path):
        path = shutil.which("cclust")
    if path is None:
        sys.exit("the cclust command is not installed for this interpreter (pip install -e .)")
    return path


def run_limited(argv, timeout):
    """``(status, wall seconds, peak RSS MiB, stderr text)`` of one command; status is the exit
    code, or "timeout" when it was stopped after ``timeout`` seconds."""
    start = time.perf_counter()
    err = tempfile.TemporaryFile()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    status = None
    while True:
        pid, code, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            status = os.waitstatus_to_exitcode(code)
            break
        if time.perf_counter() - start > timeout:
            os.killpg(child.pid, signal.SIGKILL)
            _, code, usage = os.wait4(child.pid, 0)
            status = "timeout"
            break
        time.sleep(0.05)
    child.returncode = -1  # reaped here; keep Popen from waiting again
    wall = time.perf_counter() - start
    err.seek(0)
    text = err.read().decode(errors="replace").strip()
    return status, wall, usage.ru_maxrss / 1024, text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50000)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--methods", nargs="*", help="only these methods (default: every registered one)")
    parser.add_argument("--out", help="also write the Markdown table here")
    args = parser.parse_args()

    import cclust
    from cclust.base import method_info
    from cclust.metrics import ari

    command = cclust_command()
    names = args.methods or [name for name in cclust.available(kind="consensus")]
    folder = tempfile.mkdtemp(prefix="cclust_all_methods_")
    try:
        X, truth = blobs(args.n, 20, 5, 0)
        data = os.path.join(folder, "blobs.csv")
        np.savetxt(data, X, delimiter=",", header=",".join(f"f{j}" for j in range(20)), comments="", fmt="%.6f")
        X = np.loadtxt(data, delimiter=",", skiprows=1)  # what the command reads
        ensemble = os.path.join(folder, "ensemble.npz")
        out = os.path.join(folder, "labels.npy")
        status, wall, rss, text = run_limited([command, "run", data, "-m", "kcc", "-k", "5", "--save-ensemble",
                                               ensemble, "-o", out], 10 * args.timeout)
        if status != 0:
            sys.exit(f"generating the ensemble failed: {text}")
        rows = [f"| (generate 100 kmeans partitions + kcc, `cclust run`) | run | {wall:.1f} | {rss:.0f} | "
                f"{ari(truth, np.load(out)):.3f} |"]
        for name in names:
            if os.path.exists(out):
                os.remove(out)
            try:
                needs_X = method_info(cclust.get(name, kind="consensus")).requires_X
            except Exception as exc:  # noqa: BLE001 - a broken plugin is a row of the table
                rows.append(f"| {name} | - | - | - | not loadable: {exc} |")
                continue
            how = "run" if needs_X else "fuse"
            argv = ([command, "run", data] if needs_X else [command, "fuse", ensemble]) + ["-m", name, "-k", "5",
                                                                                          "-o", out]
            status, wall, rss, text = run_limited(argv, args.timeout)
            if status == 0 and os.path.exists(out):
                outcome = f"{ari(truth, np.load(out)):.3f}"
            elif status == "timeout":
                outcome = f"stopped at {args.timeout:.0f} s"
            else:
                lines = [line for line in text.splitlines() if line.strip()]
                # the refusal up to its first "; " (what it needs; the remedies follow in the full line)
                outcome = "refused: " + (lines[-1] if lines else f"exit {status}").split("; ")[0].replace("|", "/")
            rows.append(f"| {name} | {how} | {wall:.1f} | {rss:.0f} | {outcome} |")
            print(rows[-1], flush=True)
        npy = os.path.join(folder, "X.npy")
        np.save(npy, X)
        status, wall, rss, text = run_limited([sys.executable, "-c", ESTIMATOR, npy, out], args.timeout)
        outcome = (f"{ari(truth, np.load(out)):.3f}" if status == 0 else
                   f"stopped at {args.timeout:.0f} s" if status == "timeout" else f"failed: {text.splitlines()[-1]}")
        rows.append(f"| ConsensusClustering(n_clusters=5, random_state=0).fit_predict(X) | python | {wall:.1f} | "
                    f"{rss:.0f} | {outcome} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()
    header = [f"Every method at {args.n} objects (20 features, K = 5 blobs), {cpu_model()}, {os.cpu_count()} cores, "
              f"load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; limit {args.timeout:.0f} s "
              "per command.", "",
              "Command: `python benchmarks/bench_run_all_methods.py " + " ".join(sys.argv[1:]) + "`", "",
              "| method | command | wall s | peak RSS MiB | ARI, or what it printed |", "|---|---|---|---|---|"]
    write_report("\n".join(header + rows), args.out)


if __name__ == "__main__":
    main()
