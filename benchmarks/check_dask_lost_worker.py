"""Check that the Dask routes give the undisturbed labels when a worker is killed mid-run.

On a ``LocalCluster`` of worker processes under nannies, each route runs twice: undisturbed,
then with one worker SIGKILLed (by its own PID) at a fixed point of the run -- when the
``--nth`` task of the route's pass finishes, from a scheduler plugin, not a timer. The victim
is the worker holding the generator's scattered X when the route uses one (the data Dask cannot
recompute), else the worker holding the finished task. Prints, per route, whether the killed
run succeeded, whether its labels equal the undisturbed run's, and both times.

Routes: ``kcc-generated`` (kcc on a ``kmeans`` ensemble generated on the cluster),
``kcc-array`` (kcc on ``cclust.dask.from_array``), ``tcut-generated``, ``usenc``.

Not a unit test (tests/test_dask_lost_worker.py is). Usage::

    python benchmarks/check_dask_lost_worker.py                      # n = 100000, every route
    python benchmarks/check_dask_lost_worker.py --routes kcc-generated --n 20000
"""
import argparse
import os
import signal
import time

import numpy as np

import cclust
from cclust import dask as cdask

ROUTES = {"kcc-generated": "_task_lloyd_pass", "kcc-array": "_task_lloyd_pass",
          "tcut-generated": "_task_transfer", "usenc": "_task_transfer"}


def make_plugin(trigger, nth, victim):
    from distributed.diagnostics.plugin import SchedulerPlugin

    class KillWorker(SchedulerPlugin):
        """SIGKILL the worker holding ``victim`` (else the finished task) when the ``nth``
        ``trigger`` task finishes."""

        def __init__(self):
            self.seen, self.killed = 0, None

        async def start(self, scheduler):
            self.scheduler = scheduler

        def transition(self, key, start, finish, *args, **kwargs):
            name = str(key[0] if isinstance(key, tuple) else key)
            if self.killed is not None or finish != "memory" or not name.startswith(trigger):
                return
            self.seen += 1
            if self.seen < nth:
                return
            task = self.scheduler.tasks.get(victim)
            if task is None or not task.who_has:
                task = self.scheduler.tasks[key]
            worker = next(iter(task.who_has))
            self.killed = (worker.address, worker.pid, name)
            os.kill(worker.pid, signal.SIGKILL)

    return KillWorker()


def blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(c, 1.5, (n // 4, 6)) for c in (0, 4, 8, 12)])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--routes", nargs="+", default=list(ROUTES), choices=list(ROUTES))
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--nth", type=int, default=3, help="kill when this many pass tasks have finished")
    ap.add_argument("--chunks", type=int, default=16384)
    args = ap.parse_args()

    import dask
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = distributed.Client(cluster, set_as_default=False)
    X = blobs(args.n)
    x_key = f"ndarray-{dask.base.tokenize(X)}"
    print(f"n = {args.n}, r = {args.partitions}, chunks = {args.chunks}, 2 worker processes, "
          f"load average {os.getloadavg()[0]:.1f}")
    for route in args.routes:
        def run():
            if route == "usenc":
                return cdask.usenc(X, 4, n_partitions=args.partitions, random_state=0, client=client,
                                   chunks=args.chunks)
            if route == "kcc-array":
                E = cclust.generate("kmeans", X, 4, n_partitions=args.partitions, random_state=0)
                D = cdask.from_array(E, chunks=args.chunks, client=client)
            else:
                D = cclust.generate("kmeans", X, 4, n_partitions=args.partitions, random_state=0, client=client,
                                    chunks=args.chunks)
            if route.startswith("tcut"):
                return cdask.tcut(D, 4, random_state=0, client=client)
            return cdask.kcc(D, 4, n_init=2, random_state=0, client=client)

        client.wait_for_workers(2)
        t = time.perf_counter()
        expected = run()
        undisturbed = time.perf_counter() - t
        client.wait_for_workers(2)
        name = f"kill-{route}"
        client.register_plugin(make_plugin(ROUTES[route], args.nth, x_key), name=name)
        t = time.perf_counter()
        try:
            got = run()
            outcome = f"ok, labels equal to the undisturbed run: {np.array_equal(got.labels, expected.labels)}"
        except Exception as exc:  # noqa: BLE001 - the failure is what this check reports
            outcome = f"FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        killed_time = time.perf_counter() - t
        killed = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins[name].killed)
        client.unregister_scheduler_plugin(name)
        print(f"{route}: worker killed at {killed[2] if killed else None}: {outcome}; "
              f"{undisturbed:.1f} s undisturbed, {killed_time:.1f} s with the kill")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
