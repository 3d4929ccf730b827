"""The Dask backend: generation and KCC on an ensemble chunked by objects give exactly the
in-memory results, on Dask's local scheduler and on a multi-process LocalCluster."""
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import cclust
from cclust import Ensemble, generators
from cclust import dask as cdask
from cclust.consensus_functions.kcc import kcc
from cclust.datasets import load_iris
from cclust.errors import ValidationError
from factories import dask_process_cluster

# Worker processes cannot import this file (pytest imports it by path and CI's ``pytest`` puts
# no checkout on sys.path), so the helpers sent to them are pickled by value, not by reference.
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N = 9000  # three chunks of 4096 rows, the last one partial

# distributed's scheduler sometimes drops a probe socket of its HTTP server without closing it;
# the ResourceWarning surfaces at garbage collection, in whichever test runs then.
pytestmark = [pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]


def labelled_ensemble(seed, n=N, r=8, k_true=4, missing=0.0):
    """Noisy copies of a hidden k_true-cluster labelling, some objects missing."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k_true, n)
    cols = []
    for _ in range(r):
        k = int(rng.integers(2, 7))
        col = np.where(rng.random(n) < 0.3, rng.integers(0, k, n), truth % k)
        if missing:
            col = np.where(rng.random(n) < missing, -1, col)
        cols.append(col)
    return Ensemble(np.column_stack(cols))


def assert_same_result(a, b):
    assert np.array_equal(a.labels, b.labels)
    assert a.n_iter == b.n_iter and a.converged == b.converged
    assert a.objective == b.objective
    assert a.extras["kmeans_objective"] == b.extras["kmeans_objective"]
    assert np.array_equal(a.extras["objective_trace"], b.extras["objective_trace"])
    assert np.array_equal(a.extras["objectives"], b.extras["objectives"])


def _cclust_location():
    import cclust as module

    return module.__file__


@pytest.fixture(scope="module")
def client():
    """Two worker processes: the same code path (pickling, transfers) as a real cluster."""
    with dask_process_cluster() as cluster:
        c = distributed.Client(cluster, set_as_default=False)
        # Tasks built with dask.delayed from this file's functions are pickled by reference inside
        # the task graph, so the workers must be able to import this file as pytest named it
        # (``tests.test_dask`` under --import-mode=importlib): put the checkout's root at the *end*
        # of their path, so that an installed cclust still comes first.
        root = str(Path(__file__).resolve().parents[1])
        c.run(exec, f"import sys\nif {root!r} not in sys.path: sys.path.append({root!r})")
        # Workers come from a server that imported the cclust this process imported, installed
        # or from the checkout (factories.dask_process_cluster, or spawned with this sys.path).
        assert set(c.run(_cclust_location).values()) == {cclust.__file__}
        yield c
        c.close()


# -- KCC --------------------------------------------------------------------------------------

# Every utility with both starts, and every utility with and without missing labels (each pair
# of two settings once, not every triple: the utility picks the lookup, the start and the
# missing labels are separate passes of the same driver).
_UTILITIES = [("uc", None), ("uh", None), ("ucos", None), ("ulp", 5.0), ("nuh", None)]


@pytest.mark.parametrize("utility, p, init, missing", [
    pytest.param(utility, p, init, (0.0, 0.25)[(i + j) % 2], id=f"{utility}{p or ''}-{init}-"
                 f"{('complete', 'missing25')[(i + j) % 2]}")
    for i, (utility, p) in enumerate(_UTILITIES) for j, init in enumerate(["random", "k-means++"])])
def test_kcc_identical_to_in_memory_on_local_scheduler(utility, p, init, missing):
    E = labelled_ensemble(1, missing=missing)
    a = kcc(E, 5, utility=utility, p=p, init=init, n_init=2, random_state=7)
    b = cdask.kcc(cdask.from_array(E, chunks=4096), 5, utility=utility, p=p, init=init, n_init=2,
                  random_state=7)
    assert_same_result(a, b)
    assert b.extras["backend"] == "dask"


@pytest.mark.parametrize("init, missing", [("random", 0.0), ("k-means++", 0.3)])
def test_kcc_identical_to_in_memory_on_a_local_cluster(client, init, missing):
    E = labelled_ensemble(2, missing=missing)
    w = np.random.default_rng(0).random(E.n_partitions) + 0.1
    a = kcc(E.with_weights(w), 4, utility="uh", init=init, n_init=2, random_state=3)
    b = kcc(cdask.from_array(E, chunks=4096, client=client).with_weights(w), 4, utility="uh",
            init=init, n_init=2, random_state=3, client=client)
    assert_same_result(a, b)


def test_backend_argument_and_registry_route_to_dask():
    E = labelled_ensemble(3, n=5000)
    a = kcc(E, 3, utility="uc", n_init=1, random_state=0)
    b = cclust.get("kcc")(E, 3, utility="uc", n_init=1, random_state=0, backend="dask", chunks=4096)
    assert b.extras["backend"] == "dask"
    assert_same_result(a, b)


def test_given_init_and_empty_cluster_reseeding_match():
    """An initial labelling with unused clusters makes both engines re-seed them."""
    E = labelled_ensemble(4, missing=0.1)
    start = np.random.default_rng(1).integers(0, 3, E.n_samples)  # clusters 3 and 4 empty
    a = kcc(E, 5, utility="ucos", init=start)
    b = cdask.kcc(cdask.from_array(E, chunks=4096), 5, utility="ucos", init=da.from_array(start))
    assert_same_result(a, b)
    assert len(np.unique(b.labels)) == 5


def test_max_iter_warning_and_trace_match():
    E = labelled_ensemble(5)
    with pytest.warns(cclust.errors.ConvergenceWarning, match="max_iter"):
        a = kcc(E, 6, utility="uh", n_init=1, max_iter=1, random_state=2)
    with pytest.warns(cclust.errors.ConvergenceWarning, match="max_iter"):
        b = cdask.kcc(cdask.from_array(E, chunks=4096), 6, utility="uh", n_init=1, max_iter=1,
                      random_state=2)
    assert_same_result(a, b)
    assert not b.converged


# -- generation -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["kmeans", "subspace", "subsample", "projection"])
def test_generation_identical_for_every_backend(client, name):
    X, _ = load_iris()
    gen = cclust.get(name, kind="generator")
    a = gen(X, 3, n_partitions=6, random_state=4)
    b = gen(X, 3, n_partitions=6, random_state=4, backend="dask")
    c = gen(da.from_array(X, chunks=40), 3, n_partitions=6, random_state=4)
    d = gen(X, 3, n_partitions=6, random_state=4, client=client)
    assert isinstance(b, cdask.DaskEnsemble) and b.shape == (150, 6)
    for other in (b, c, d):
        assert other.compute() == a
        assert np.array_equal(other.n_clusters, a.n_clusters)
        assert np.array_equal(other.cluster_sizes, a.cluster_sizes)


def test_generated_ensemble_is_chunked_by_objects_and_feeds_dask_kcc(client):
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.5, size=(3000, 2)) for c in (0, 4, 8)])
    E = generators.kmeans(X, 3, n_partitions=5, random_state=1, client=client, chunks=4096)
    assert E.labels.chunks[0] == (4096, 4096, 808) and E.labels.chunks[1] == (5,)
    a = kcc(E.compute(), 3, random_state=0, n_init=2)
    b = kcc(E, 3, random_state=0, n_init=2, client=client)
    assert_same_result(a, b)


def test_generation_at_scale_takes_the_kmeans_default_whatever_the_chunking():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (generators.FIT_ROWS_FROM + 1, 3))
    a = generators.kmeans(X, 3, n_partitions=2, random_state=5)          # fit_rows="auto": a sample
    assert a == generators.kmeans(X, 3, n_partitions=2, random_state=5, fit_rows=generators.FIT_ROWS)
    for other in (generators.kmeans(X, 3, n_partitions=2, random_state=5, backend="dask", chunks=4096),
                  generators.kmeans(da.from_array(X, chunks=7000), 3, n_partitions=2, random_state=5,
                                    chunks=12288)):
        assert other.compute() == a


# -- DaskEnsemble -----------------------------------------------------------------------------

def test_dask_ensemble_facts_match_ensemble():
    E = labelled_ensemble(6, n=5000, missing=0.2)
    D = cdask.DaskEnsemble(da.from_array(np.array(E.labels), chunks=(1000, 3)), chunks=4096)
    assert D.labels.chunks == ((4096, 904), (E.n_partitions,))
    assert np.array_equal(D.n_clusters, E.n_clusters) and np.array_equal(D.offsets, E.offsets)
    assert np.array_equal(D.cluster_sizes, E.cluster_sizes) and D.has_missing
    assert D.compute() == E
    W = D.with_weights(np.arange(1, E.n_partitions + 1))
    assert np.isclose(W.weights.sum(), 1.0) and W.weights[-1] > W.weights[0]


def test_chunks_are_rounded_to_the_engine_block():
    D = cdask.from_array(labelled_ensemble(7, n=6000), chunks=1000)
    assert D.labels.chunks[0] == (4096, 1904)


# -- bad input --------------------------------------------------------------------------------

def test_dask_X_with_unknown_chunks_is_refused():
    X, _ = load_iris()
    dX = da.from_array(X, chunks=50)
    unknown = dX[dX[:, 0] > 0]  # boolean indexing leaves the row chunks unknown (nan)
    with pytest.raises(ValidationError, match=r"compute_chunk_sizes\(\)"):
        generators.kmeans(unknown, 3, n_partitions=2)


def test_labels_with_unknown_chunks_are_refused():
    L = da.from_array(np.zeros((10, 2), dtype=np.int64), chunks=5)
    with pytest.raises(ValidationError, match=r"labels.*compute_chunk_sizes\(\)"):
        cdask.DaskEnsemble(L[L[:, 0] >= 0])


def test_blocks_disagreeing_in_r_are_refused():
    with pytest.raises(ValidationError, match=r"disagree in r.*blocks\[1\] has 2"):
        cdask.from_blocks([np.zeros((4, 3), dtype=int), np.zeros((4, 2), dtype=int)])


def test_a_chunk_whose_data_disagrees_with_its_metadata_is_reported():
    good = da.from_array(np.zeros((4096, 3), dtype=np.int32))
    lying = da.from_delayed(dask.delayed(np.zeros)((100, 2), dtype=np.int32), shape=(100, 3),
                            dtype=np.int32)
    with pytest.raises(ValidationError, match=r"chunk 1 .*r = 3"):
        cdask.DaskEnsemble(da.concatenate([good, lying]))


@pytest.mark.parametrize("labels, match", [
    (np.array([[0, 1], [1, -2], [0, 0]]), "-2"),
    (np.array([[0, 2], [1, 0], [0, 0]]), r"never uses label 1"),
    (np.array([[0, -1], [1, -1], [0, -1]]), "labels no object"),
    (np.array([[0.0, 1.0], [1.0, 0.0]]), "integers"),
], ids=["below-minus-one", "gap", "all-missing", "floats"])
def test_bad_labels(labels, match):
    with pytest.raises(ValidationError, match=match):
        cdask.DaskEnsemble(da.from_array(labels))


def test_not_a_dask_array_is_refused():
    with pytest.raises(ValidationError, match="from_array"):
        cdask.DaskEnsemble(np.zeros((3, 2), dtype=int))


def test_threads_backend_refuses_dask_inputs():
    D = cdask.from_array(labelled_ensemble(8, n=100))
    with pytest.raises(ValidationError, match="backend='threads'"):
        kcc(D, 3, backend="threads")
    X, _ = load_iris()
    with pytest.raises(ValidationError, match="backend='threads'"):
        generators.kmeans(da.from_array(X), 3, n_partitions=2, backend="threads")


def _flaky_block(counter_path, fail_after, shape):
    """A chunk that fails on a worker from its ``fail_after``-th computation on."""
    with open(counter_path, "a") as f:
        f.write(".")
    with open(counter_path) as f:
        calls = len(f.read())
    if calls > fail_after:
        raise RuntimeError(f"disk on fire at call {calls}")
    return np.random.default_rng(0).integers(0, 3, size=shape).astype(np.int32)


def test_worker_failure_mid_run_raises_the_workers_error(client, tmp_path):
    counter = str(tmp_path / "calls")
    block = da.from_delayed(dask.delayed(_flaky_block, pure=False)(counter, 4, (5000, 4)),
                            shape=(5000, 4), dtype=np.int32)
    D = cdask.DaskEnsemble(block, client=client)  # one computation: the validating pass
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(kcc, D, 3, n_init=3, random_state=0, client=client)
        with pytest.raises(RuntimeError, match="disk on fire"):
            future.result(timeout=120)  # a hang would fail here instead


@pytest.mark.parametrize("n_clusters", [3, 5, 8])
def test_few_distinct_objects_match(n_clusters):
    """Three distinct rows: k-means++ runs out of objects at D^2 > 0 and takes the next index,
    and Lloyd re-seeds the clusters left empty, across several chunks."""
    E = Ensemble(np.tile(np.array([[0, 0], [1, 1], [0, 1]]), (3000, 1)))
    a = kcc(E, n_clusters, utility="uc", n_init=2, random_state=1)
    b = cdask.kcc(cdask.from_array(E, chunks=4096), n_clusters, utility="uc", n_init=2,
                  random_state=1)
    assert_same_result(a, b)


def test_many_empty_clusters_reseeded_across_chunks_match():
    E = labelled_ensemble(6, missing=0.2)
    start = np.zeros(E.n_samples, dtype=np.int64)
    start[5000:] = 1  # clusters 2..8 empty
    a = kcc(E, 9, utility="uh", init=start)
    b = cdask.kcc(cdask.from_array(E, chunks=4096), 9, utility="uh", init=da.from_array(start, chunks=5000))
    assert_same_result(a, b)


def test_dask_ensemble_keeps_provenance():
    from cclust.dask import DaskEnsemble, from_array, from_blocks

    E = Ensemble(np.array([[0, 1, 0], [0, 0, 1], [1, 1, 1], [1, 0, 0]]), provenance=["kmeans", "pam", "pam"])
    D = from_array(E, chunks=2)
    assert D.provenance == ("kmeans", "pam", "pam")
    assert D.with_weights([1, 2, 3]).provenance == D.provenance
    assert D.persist().provenance == D.provenance
    back = D.with_weights([1, 2, 3]).compute()
    assert back.provenance == E.provenance and np.allclose(back.weights, [1 / 6, 2 / 6, 3 / 6])
    assert from_array(E, provenance="other").provenance == ("other",) * 3
    assert from_array(E.labels).provenance is None
    da = pytest.importorskip("dask.array")
    assert DaskEnsemble(da.from_array(E.labels), provenance=["a", "b", "c"]).compute().provenance == ("a", "b", "c")
    assert from_blocks([E.labels[:2], E.labels[2:]], provenance="x").provenance == ("x", "x", "x")
    with pytest.raises(ValidationError, match="provenance"):
        from_array(E, provenance=["a"])
