"""select_k on a dask array: the sketch drawn from the chunks, the protocol on it, the labels
propagated chunk by chunk give exactly the in-memory select_k, for any chunking and scheduler."""
import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from cclust import select_k
from cclust.errors import MemoryBudgetError, ValidationError

# distributed's scheduler sometimes drops a probe socket of its HTTP server without closing it;
# the ResourceWarning surfaces at garbage collection, in whichever test runs then.
pytestmark = [pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]

N = 9000  # three 4096-row blocks, the last one partial

# a small protocol, so that each run takes seconds: the equalities do not depend on its size
SMALL = dict(k_range=range(2, 6), n_resamples=4, n_references=3, sketch=500, random_state=0)


def blobs(n=N, d=3, k=4, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-6, 6, size=(k, d))
    return centres[rng.integers(0, k, n)] + rng.normal(0, 0.7, (n, d))


@pytest.fixture(scope="module")
def X():
    return blobs()


@pytest.fixture(scope="module")
def in_memory(X):
    return {how: select_k(X, sketch_method=how, n_sketches=2, **SMALL) for how in ("geometric", "uniform")}


@pytest.fixture(scope="module")
def client():
    """Two workers in this process: the distributed scheduler's code path, quickly."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0")
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


def assert_same(a, b):
    assert a.best_k == b.best_k and a.reason == b.reason
    assert np.array_equal(a.sketch, b.sketch)
    assert np.array_equal(a.pac, b.pac) and np.array_equal(a.cdf, b.cdf)
    assert np.array_equal(a.pac_reference, b.pac_reference) and np.array_equal(a.p_value, b.p_value)
    assert a.labels.keys() == b.labels.keys()
    for k in a.labels:
        assert a.labels[k].dtype == b.labels[k].dtype
        assert np.array_equal(a.labels[k], b.labels[k])
        assert np.array_equal(a.item_consensus[k], b.item_consensus[k], equal_nan=True)
    assert a.sketch_best_k == b.sketch_best_k and a.sketch_agreement == b.sketch_agreement


@pytest.mark.parametrize("how", ["geometric", "uniform"])
@pytest.mark.parametrize("chunks", [(4096, 3), (1000, 2)], ids=["blocks-of-4096", "small-chunks-split-columns"])
def test_same_result_as_in_memory_for_any_chunking(X, in_memory, how, chunks):
    with dask.config.set(scheduler="synchronous"):
        result = select_k(da.from_array(X, chunks=chunks), sketch_method=how, n_sketches=2, **SMALL)
    assert result.best_k == 4
    assert_same(in_memory[how], result)


def test_same_result_on_a_distributed_cluster(X, in_memory, client):
    with client.as_current():
        result = select_k(da.from_array(X, chunks=(3000, 3)), sketch_method="geometric", n_sketches=2, **SMALL)
    assert_same(in_memory["geometric"], result)
    # the chunks' passes and the protocol's k-means runs were the workers' tasks
    prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert {"task_check", "task_label", "kmeans_run"} <= set(prefixes)


def test_knn_propagation_as_in_memory():
    X = blobs(5000, d=10, k=3, seed=1)   # more than 8 features: the blocked neighbour search
    arguments = dict(SMALL, k_range=range(2, 4), sketch=300, propagation="knn")
    expected = select_k(X, **arguments)
    with dask.config.set(scheduler="synchronous"):
        result = select_k(da.from_array(X, chunks=(2000, 10)), **arguments)
    assert_same(expected, result)


def test_without_a_sketch_the_array_is_gathered_within_the_budget():
    X = blobs(300, seed=2)
    arguments = dict(SMALL, sketch=None)
    expected = select_k(X, **arguments)
    with dask.config.set(scheduler="synchronous"):
        result = select_k(da.from_array(X, chunks=(100, 3)), **arguments)
        assert result.sketch is None
        assert_same(expected, result)
        with pytest.raises(MemoryBudgetError, match="sketch=s"):
            select_k(da.from_array(X, chunks=(100, 3)), **arguments, max_bytes=1000)


@pytest.mark.parametrize("bad,kind", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_nan_or_infinity_in_a_chunk_raises_the_in_memory_error(X, bad, kind):
    Xbad = X.copy()
    Xbad[5000, 1] = bad   # in the second chunk
    Xbad[7001, 2] = np.nan
    with pytest.raises(ValidationError) as expected:
        select_k(Xbad, **SMALL)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValidationError) as got:
        select_k(da.from_array(Xbad, chunks=(1000, 3)), **SMALL)
    assert str(got.value) == str(expected.value)
    assert f"data contains {kind} (first at row 5000, column 1" in str(got.value)


def test_bad_dask_input_names_the_argument_and_the_fix(X):
    with pytest.raises(ValidationError, match=r"data must be 2-D .*shape \(9000,\)"):
        select_k(da.from_array(X[:, 0], chunks=1000), **SMALL)
    with pytest.raises(ValidationError, match=r"data must be 2-D .*shape \(9000, 3, 1\)"):
        select_k(da.from_array(X[:, :, None], chunks=(1000, 3, 1)), **SMALL)
    unknown = da.from_array(X, chunks=(1000, 3))
    unknown = unknown[unknown[:, 0] > -100]
    with pytest.raises(ValidationError, match=r"unknown chunk sizes.*compute_chunk_sizes"):
        select_k(unknown, **SMALL)
    with pytest.raises(ValidationError, match="data must hold real numbers"):
        select_k(da.from_array(X.astype(np.complex128), chunks=(1000, 3)), **SMALL)
    with pytest.raises(ValidationError, match="missing_features='mean'.*sketch=None"):
        select_k(da.from_array(X, chunks=(1000, 3)), **SMALL, missing_features="mean")


def test_a_dask_dataframe_is_refused_with_the_conversion(X):
    frame = pytest.importorskip("dask.dataframe")
    with pytest.raises(ValidationError, match=r"to_dask_array\(lengths=True\)"):
        select_k(frame.from_array(X, chunksize=1000), **SMALL)
