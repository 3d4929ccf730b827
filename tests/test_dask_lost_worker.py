"""The Dask routes survive a worker killed mid-run (SIGKILL, as a preempted node): the labels are
those of an undisturbed run, and data that cannot be made again gives a clear error."""
import os
import signal
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

from distributed.diagnostics.plugin import SchedulerPlugin

import cclust
from cclust import dask as cdask
from cclust.errors import LostDataError
from factories import dask_process_cluster

# The plugin below runs on the scheduler; this file is not importable there (see test_dask.py).
cloudpickle.register_pickle_by_value(sys.modules[__name__])

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]

N = 12000  # three chunks of 4096 rows


class KillWorker(SchedulerPlugin):
    """SIGKILL worker processes, by their own PIDs, the moment the ``nth`` task whose key starts
    with ``trigger`` reaches the state ``when`` ("memory": finished, "processing": sent to a
    worker): a fixed point of the run, not a timer. The victims are every worker holding the key
    ``victim`` if the cluster has it (Dask may have copied it to both, and a copy left alive
    would leave nothing lost), else the one worker holding (or running) the key that triggered.
    ``killed`` records (addresses, pids, trigger key, workers holding the victim key)."""

    def __init__(self, trigger, nth=1, victim=None, when="memory"):
        self.trigger, self.nth, self.victim, self.when = trigger, nth, victim, when
        self.seen, self.killed = 0, None

    async def start(self, scheduler):
        self.scheduler = scheduler

    def transition(self, key, start, finish, *args, **kwargs):
        if self.killed is not None or finish != self.when:
            return
        if not str(key[0] if isinstance(key, tuple) else key).startswith(self.trigger):
            return
        self.seen += 1
        if self.seen < self.nth:
            return
        task = self.scheduler.tasks.get(self.victim)
        if task is not None and task.who_has:
            workers = list(task.who_has)
            replicas = len(workers)
        else:
            task = self.scheduler.tasks[key]
            workers, replicas = [next(iter(task.who_has)) if task.who_has else task.processing_on], 0
        self.killed = ([w.address for w in workers], [w.pid for w in workers], str(key), replicas)
        for worker in workers:
            os.kill(worker.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes under nannies (a killed worker is restarted, as on a real cluster),
    shared by the module's tests: each new worker process costs a start-up and the imports of
    Dask and cclust (about 2 s of CPU), three per test when each test had a cluster of its own;
    they are forked, not spawned (factories.dask_process_cluster)."""
    with dask_process_cluster() as cluster:
        yield cluster


@pytest.fixture
def client(cluster):
    """A client of the shared cluster, once both its workers run (a worker killed by the test
    before is restarted by its nanny first). A test's kill is a scheduler plugin that it
    unregisters before it ends (killed_during), and its keys are its own (data of its own
    seed), so no test's kill reaches another's tasks."""
    c = distributed.Client(cluster, set_as_default=False)
    c.wait_for_workers(2, timeout=120)
    yield c
    c.close()


def killed_during(client, trigger, run, nth=1, victim=None, when="memory"):
    """``run()`` with a worker killed when the ``nth`` ``trigger`` task reaches ``when`` (with
    ``victim``, every worker holding that key); checks that the kill happened and that it took
    every copy of the victim key, and returns what ``run`` returned."""
    client.wait_for_workers(2, timeout=120)
    name = f"kill-at-{trigger}-{nth}"
    before = set(client.run(os.getpid).values())
    client.register_plugin(KillWorker(trigger, nth, victim, when), name=name)
    try:
        out = run()
    finally:
        killed = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins[name].killed)
        client.unregister_scheduler_plugin(name)
    assert killed is not None, f"no {trigger} task finished: the worker was not killed mid-run"
    assert set(killed[1]) <= before
    if victim is not None:
        assert killed[3] >= 1 and len(killed[1]) == killed[3], f"{victim} was not held when the workers were killed"
    return out


def blobs(n=N, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(c, 1.0, (n // 4, 4)) for c in (0, 4, 8, 12)])


def x_key(X):
    """The key a NumPy X has on the cluster once a generator scattered it."""
    return f"ndarray-{dask.base.tokenize(X)}"


def test_kcc_on_a_generated_ensemble_survives_losing_the_worker_that_holds_X(client):
    # X goes to the cluster by scatter: data the scheduler cannot recompute. Before, it was
    # even forgotten right after generation, so losing any worker holding a label column
    # cancelled the run ("lost dependencies").
    X = blobs()
    expected = cclust.consensus("kcc", cclust.generate("kmeans", X, 4, n_partitions=6, random_state=0),
                                4, n_init=2, random_state=0)
    D = cclust.generate("kmeans", X, 4, n_partitions=6, random_state=0, client=client, chunks=4096)
    got = killed_during(client, "_task_lloyd_pass",
                        lambda: cdask.kcc(D, 4, n_init=2, random_state=0, client=client), nth=4, victim=x_key(X))
    assert np.array_equal(got.labels, expected.labels)
    assert got.objective == expected.objective and got.n_iter == expected.n_iter
    # the ensemble made its labels again in place: its value is unchanged and usable
    assert np.array_equal(D.compute().labels, cclust.generate("kmeans", X, 4, n_partitions=6, random_state=0).labels)


def test_kcc_on_an_array_ensemble_survives_losing_a_worker(client):
    E = cclust.generate("kmeans", blobs(seed=1), 4, n_partitions=6, random_state=0)
    expected = cclust.consensus("kcc", E, 4, n_init=2, random_state=0)
    D = cdask.from_array(E, chunks=4096, client=client)
    got = killed_during(client, "_task_lloyd_pass",
                        lambda: cdask.kcc(D, 4, n_init=2, random_state=0, client=client), nth=4)
    assert np.array_equal(got.labels, expected.labels)


def test_generation_survives_losing_the_worker_that_holds_X(client):
    X = blobs(seed=2)
    expected = cclust.generate("kmeans", X, 4, n_partitions=6, random_state=3)
    # killed as the first column is sent to a worker: before any worker can have copied X
    D = killed_during(client, "_one_column",
                      lambda: cclust.generate("kmeans", X, 4, n_partitions=6, random_state=3, client=client,
                                              chunks=4096), victim=x_key(X), when="processing")
    assert np.array_equal(D.compute().labels, expected.labels)


def test_tcut_on_a_generated_ensemble_survives_losing_the_worker_that_holds_X(client):
    X = blobs(seed=4)
    D = cclust.generate("kmeans", X, 4, n_partitions=6, random_state=0, client=client, chunks=4096)
    undisturbed = np.random.default_rng(5)
    expected = cdask.tcut(D, 4, random_state=undisturbed, client=client)
    rng = np.random.default_rng(5)
    got = killed_during(client, "_task_transfer", lambda: cdask.tcut(D, 4, random_state=rng, client=client),
                        victim=x_key(X))
    assert np.array_equal(got.labels, expected.labels) and got.objective == expected.objective
    # a Generator passed in ends where the undisturbed run left it
    assert rng.bit_generator.state == undisturbed.bit_generator.state


def test_usenc_on_a_cluster_survives_losing_a_worker(client):
    # uspec_ensemble's labels live on the cluster; before, its ensemble did not hold them and a
    # cluster forgot them at once (usenc failed with "lost dependencies" even undisturbed)
    # few clusters a clusterer (k_range): each k-means++ centre on the cluster is a round trip of
    # its own, and the defaults' 20-60 took 18 s here without any kill
    X = blobs(n=6000, seed=7)
    kwargs = dict(n_partitions=2, k_range=(4, 8), n_representatives=200, n_init=1, max_iter=10, random_state=0,
                  chunks=4096)
    expected = cdask.usenc(X, 4, **kwargs)  # on Dask's local scheduler
    got = killed_during(client, "_task_transfer",
                        lambda: cdask.usenc(X, 4, client=client, **kwargs),
                        nth=2)
    assert np.array_equal(got.labels, expected.labels)


def test_labels_without_lineage_lost_with_a_worker_raise_a_clear_error(client):
    E = cclust.generate("kmeans", blobs(seed=6, n=4096), 3, n_partitions=4, random_state=0)
    future = client.scatter(np.asarray(E.labels, dtype=np.int32))
    # a library function as the task (a function of this module is pickled by reference, and the
    # worker processes of an installed package cannot import the tests)
    labels = da.from_delayed(dask.delayed(np.asarray)(future), shape=E.labels.shape, dtype=np.int32)
    D = cdask.DaskEnsemble(labels, client=client)
    with pytest.raises(LostDataError, match=r"kcc: a Dask worker died .*client\.scatter.*from_array"):
        killed_during(client, "_task_lloyd_pass", lambda: cdask.kcc(D, 3, n_init=1, random_state=0, client=client),
                      victim=future.key)


def test_an_X_changed_after_generation_is_not_used_to_make_lost_columns_again(client):
    X = blobs(n=4096, seed=8)
    D = cclust.generate("kmeans", X, 3, n_partitions=3, random_state=0, client=client)
    X[0, 0] += 1.0  # the caller changes X in place while its ensemble is in use
    with pytest.raises(LostDataError, match=r"X changed after the ensemble was generated"):
        D._regenerate()  # what a run does once the worker holding X died


@pytest.mark.parametrize("trigger,nth", [("_task_enough", 3), ("kmeans_run", 10)],
                         ids=["during-the-sketch", "during-the-protocol"])
def test_select_k_on_a_dask_array_survives_losing_a_worker(client, trigger, nth):
    # every task is built from the array's graph (the geometric sketch's passes over the chunks,
    # the protocol's k-means runs on the sketch): the scheduler computes a lost part again
    X = blobs(n=9000, seed=3)
    arguments = dict(k_range=range(2, 5), sketch=400, n_resamples=4, n_references=2, random_state=0)
    expected = cclust.select_k(X, **arguments)
    with client.as_current():
        got = killed_during(client, trigger,
                            lambda: cclust.select_k(da.from_array(X, chunks=(3000, 4)), **arguments), nth=nth)
    assert got.best_k == expected.best_k and np.array_equal(got.pac, expected.pac)
    assert np.array_equal(got.sketch, expected.sketch)
    assert all(np.array_equal(got.labels[k], expected.labels[k]) for k in expected.labels)
