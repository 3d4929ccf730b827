"""select_k on a dask array of Gaussian blobs on a LocalCluster: time, K chosen, peak memory.

The blobs (K = 5 in 20 dimensions, unit spread, centres uniform in [-10, 10]^20) are generated
chunk by chunk inside the workers (each chunk from its own seed), so X never exists in one
place. ``select_k(X, range(2, 11), random_state=0)`` then runs with every default: two
geometric sketches of 2000 objects drawn from the chunks, Monti et al.'s protocol with the
reference null on each, every object labelled chunk by chunk. The resident memory of every
worker process is sampled every 0.2 s; the client's is its own peak (``ru_maxrss``)::

    python benchmarks/bench_select_k_dask.py --n 1000000 --workers 2
"""
import argparse
import os
import resource
import sys
import threading
import time

import numpy as np

try:
    import cclust  # noqa: F401
except ImportError:  # run from a source checkout: use the tree this script lives in
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import cpu_model, write_report  # noqa: E402

D, K, SEED = 20, 5, 0
CHUNK = 32 * 4096  # rows per chunk: 21 MiB of float64 features


def centres():
    return np.random.default_rng(SEED).uniform(-10, 10, size=(K, D))


def blob_chunk(index, rows, truth=False):
    """Chunk ``index`` of the blobs (its rows from its own seed), or their blob."""
    rng = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(index,)))
    which = rng.integers(0, K, size=rows)
    if truth:
        return which
    return centres()[which] + rng.standard_normal((rows, D))


def rss_of_workers(client):
    def rss():
        import psutil

        return psutil.Process().memory_info().rss
    return client.run(rss)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="also write the Markdown row here")
    parser.add_argument("--log", type=float, default=0,
                        help="every this many seconds, print the time, the workers' peaks so far and the client's "
                             "resident and peak memory to standard error (0: never)")
    args = parser.parse_args()

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    from cclust import select_k
    from cclust.metrics import ari

    sizes = [min(CHUNK, args.n - a) for a in range(0, args.n, CHUNK)]
    X = da.concatenate([da.from_delayed(dask.delayed(blob_chunk, pure=True)(i, rows), (rows, D), np.float64)
                        for i, rows in enumerate(sizes)])
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                           memory_limit=0)
    client = Client(cluster)
    peaks = {}
    done = threading.Event()

    def sample():
        import psutil

        last = begun = time.perf_counter()
        while not done.is_set():
            for worker, value in rss_of_workers(client).items():
                peaks[worker] = max(peaks.get(worker, 0), value)
            if args.log and time.perf_counter() - last >= args.log:
                last = time.perf_counter()
                print(f"{last - begun:.0f} s: worker peaks {', '.join(f'{v / 2**20:.0f}' for v in peaks.values())} "
                      f"MiB; client {psutil.Process().memory_info().rss / 2**30:.2f} GiB now, "
                      f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB peak; "
                      f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start, cpu = time.perf_counter(), os.times()
    result = select_k(X, range(2, 11), random_state=0)
    wall = time.perf_counter() - start
    end = os.times()
    done.set()
    sampler.join()
    truth = np.concatenate([blob_chunk(i, rows, truth=True) for i, rows in enumerate(sizes)])
    score = ari(truth, result.labels[result.best_k]) if result.best_k > 1 else float("nan")
    worker_peaks = ", ".join(f"{v / 2**20:.0f}" for v in sorted(peaks.values()))
    load = os.getloadavg()
    row = (f"| {args.n:,} | {args.workers} x 1 thread | {result.best_k} {result.sketch_best_k} | {score:.3f} | "
           f"{min(result.sketch_agreement.values()):.3f} | {wall:.0f} | {(end.user + end.system) - (cpu.user + cpu.system):.0f} | "
           f"{worker_peaks} | {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} | "
           f"{load[0]:.1f} |")
    header = [f"select_k on a dask array, {cpu_model()}, {os.cpu_count()} cores", "",
              "Command: `python benchmarks/bench_select_k_dask.py " + " ".join(sys.argv[1:]) + "`", "",
              "| n | workers | K chosen (each sketch) | ARI at K | least agreement of the sketches | wall s | "
              "client CPU s | peak RSS per worker MiB | client peak GiB | load |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    write_report("\n".join(header + [row]), args.out)
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
