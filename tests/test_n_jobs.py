"""One spelling of the thread count: ``n_jobs`` everywhere. Every public callable that took
``n_threads`` takes ``n_jobs``; ``n_threads=`` still works for one release with a FutureWarning
naming ``n_jobs`` and gives the same result; passing both is an error."""
import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.datasets import load_iris
from cclust.errors import ValidationError


def _data():
    X, _ = load_iris()
    X = X[::3]  # 50 objects: every call below takes milliseconds
    return X, cclust.generate("kmeans", X, 3, n_partitions=8, random_state=0)


def _consensus(name, needs_X=False):
    def call(X, E, threads):
        extra = {"X": X} if needs_X else {}
        return cclust.get(name)(E, 3, random_state=0, **extra, **threads).labels
    return call


def _graph_tcut(X, E, threads):
    from cclust.graph import one_hot_in_order

    B = one_hot_in_order(E, np.arange(E.offsets[-1]))
    return cclust.graph.tcut(B, 3, random_state=0, **threads).labels


def _contingency(X, E, threads):
    return E.contingency(np.arange(E.n_samples) % 3, 3, **threads)


def _contingency_blocks(X, E, threads):
    return np.concatenate(E.contingency_blocks(np.arange(E.n_samples) % 3, 3, **threads), axis=1)


def _knn_coassociation(X, E, threads):
    return E.knn_coassociation(5, random_state=0, dtype=np.float64, **threads).toarray()


def _consensus_value(X, E, threads):
    return np.array([cclust.get("uc").consensus_value(E, E.labels[:, 0], **threads)])


def _uspec(X, E, threads):
    from cclust.uspec import uspec

    return uspec(X, 3, random_state=0, n_representatives=20, **threads)


def _hybrid_representatives(X, E, threads):
    from cclust.uspec import hybrid_representatives

    return hybrid_representatives(X, 10, np.random.default_rng(0), **threads)


def _approximate_nearest_representatives(X, E, threads):
    from cclust.uspec import approximate_nearest_representatives, hybrid_representatives

    R = hybrid_representatives(X, 10, np.random.default_rng(0))
    return np.concatenate(approximate_nearest_representatives(X, R, 3, np.random.default_rng(1), **threads), axis=1)


def _knn_graph(X, E, threads):
    pytest.importorskip("igraph")
    from cclust.graph_generators import knn_graph

    return knn_graph(X, 4, **threads).toarray()


def _e_step(X, E, threads):
    from cclust.consensus_functions.bayesian import e_step

    L = E.labels
    sizes = L.max(axis=0) + 1
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    rng = np.random.default_rng(0)
    beta = np.concatenate([rng.dirichlet(np.ones(s), size=3).T for s in sizes], axis=0)
    gamma = rng.random((L.shape[0], 3)) + 0.5
    return e_step(L, offsets, np.ones(L.shape[0]), np.ones(L.shape[1]), np.full(3, 0.5), beta, gamma,
                  max_iter=3, **threads)[0]


def _dask_kcc(X, E, threads):
    pytest.importorskip("dask")
    from cclust.dask import from_array, kcc

    return kcc(from_array(E.labels, chunks=20), 3, random_state=0, **threads).labels


#: Every public callable whose thread count was called n_threads, and a call of it.
RENAMED = {
    **{name: _consensus(name) for name in ("addremadd", "bce", "cspa", "eac", "em-mixture", "gp-mgla", "ipc", "ipvc",
                                           "ivc", "kcc", "lce", "lwgp", "sec", "tcut", "voting", "weac")},
    "wosp": _consensus("wosp", needs_X=True),
    "usenc": _consensus("usenc", needs_X=True),
    "cclust.graph.tcut": _graph_tcut,
    "Ensemble.contingency": _contingency,
    "Ensemble.contingency_blocks": _contingency_blocks,
    "Ensemble.knn_coassociation": _knn_coassociation,
    "Utility.consensus_value": _consensus_value,
    "cclust.uspec.uspec": _uspec,
    "cclust.uspec.hybrid_representatives": _hybrid_representatives,
    "cclust.uspec.approximate_nearest_representatives": _approximate_nearest_representatives,
    "cclust.graph_generators.knn_graph": _knn_graph,
    "cclust.consensus_functions.bayesian.e_step": _e_step,
    "cclust.dask.kcc": _dask_kcc,
}


@pytest.mark.parametrize("name", sorted(RENAMED))
def test_n_threads_warns_and_gives_what_n_jobs_gives(name):
    X, E = _data()
    call = RENAMED[name]
    expected = call(X, E, {"n_jobs": 2})
    with pytest.warns(FutureWarning, match=r"n_threads was renamed n_jobs .* pass n_jobs=2 instead"):
        got = call(X, E, {"n_threads": 2})
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


@pytest.mark.parametrize("name", sorted(RENAMED))
def test_n_threads_and_n_jobs_together_are_refused(name):
    X, E = _data()
    with pytest.raises(ValidationError, match=r"got both n_threads=1 and n_jobs=2; n_threads is the deprecated "
                                              r"spelling of n_jobs: pass n_jobs only"):
        RENAMED[name](X, E, {"n_threads": 1, "n_jobs": 2})


def test_the_warning_points_at_the_callers_line():
    X, E = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cclust.get("kcc")(E, 3, random_state=0, n_threads=1)
    assert [w.filename for w in caught] == [__file__]


#: Private modules whose names their public package re-exports (cclust.uspec's representatives).
_PUBLIC_HOMES = {"_spectral"}


def _public_callables():
    """(dotted name, callable) of every public function, class and method of cclust's public
    modules (no leading underscore in the module path or the name), and every registered name."""
    seen = {}
    for info in pkgutil.walk_packages(cclust.__path__, "cclust."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional dependency (matplotlib, dask, ...) that is not installed
            continue
        public = getattr(module, "__all__", None)
        for attr, obj in vars(module).items():
            if public is not None and attr not in public:
                continue
            home = getattr(obj, "__module__", None) or ""
            if attr.startswith("_") or not callable(obj) or not home.startswith("cclust") or any(
                    part.startswith("_") for part in home.split(".")[1:] if part not in _PUBLIC_HOMES):
                continue
            seen.setdefault(f"{obj.__module__}.{getattr(obj, '__qualname__', attr)}", obj)
            if inspect.isclass(obj):
                for member, value in vars(obj).items():
                    if not member.startswith("_") and callable(value):
                        seen.setdefault(f"{obj.__module__}.{obj.__qualname__}.{member}", value)
    for name in cclust.available():
        try:
            seen.setdefault(name, cclust.get(name))
        except Exception:  # an optional dependency of one built-in
            continue
    return seen


def test_no_public_signature_says_n_threads():
    said = []
    renamed = []
    for name, obj in _public_callables().items():
        try:
            parameters = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            continue
        if "n_threads" in parameters and name != "cclust.validation.check_n_threads":  # the former name
            said.append(name)
        if "n_threads" in getattr(obj, "renamed_arguments", {}):
            renamed.append(name)
        doc = inspect.getdoc(obj) or ""
        if "n_threads :" in doc:
            said.append(name + " (docstring)")
    assert said == []
    # the deprecation shim is where the renamed names are, and the test above calls each of them
    assert len(renamed) >= len(RENAMED) - 1  # the dask backend may be missing


def test_usenc_takes_one_thread_count_and_wokmeans_takes_it_too():
    X, E = _data()
    usenc = inspect.signature(cclust.get("usenc")).parameters
    assert "n_jobs" in usenc and "n_threads" not in usenc
    wokmeans = cclust.get("wokmeans")
    assert "n_jobs" in inspect.signature(wokmeans).parameters
    one = wokmeans(E, 3, X=X, random_state=0, n_jobs=1).labels
    two = wokmeans(E, 3, X=X, random_state=0, n_jobs=2).labels
    np.testing.assert_array_equal(one, two)
    with pytest.raises(ValidationError, match="n_jobs"):
        wokmeans(E, 3, X=X, random_state=0, n_jobs=0)


def test_check_n_jobs_and_its_former_name():
    from cclust.validation import available_cores, check_n_jobs, check_n_threads

    assert check_n_jobs(3) == 3 and check_n_jobs(-1) == available_cores()
    with pytest.raises(ValidationError, match="n_jobs"):
        check_n_jobs(0)
    # the former name stays, silent: an installed plugin that calls it must not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_n_threads(3) == 3 and check_n_threads(None) == check_n_jobs(None)


def test_a_third_partys_n_threads_is_still_given_the_thread_count():
    # a plugin's function written before the rename: the pipeline passes n_jobs under its name
    from cclust._pipeline import call_method

    seen = {}

    def legacy(ensemble, n_clusters, *, random_state=None, n_threads=None):
        seen["n_threads"] = n_threads
        return cclust.get("kcc")(ensemble, n_clusters, random_state=random_state, n_jobs=n_threads)

    X, E = _data()
    call_method(legacy, E, 3, {}, 0, None, 2, 0)
    assert seen == {"n_threads": 2}


def test_the_renamed_functions_keep_their_metadata():
    from cclust.base import method_info

    assert method_info(cclust.get("usenc")).requires_X
    assert method_info(cclust.get("addremadd")).chooses_n_clusters
    assert cclust.get("kcc").__name__ == "kcc" and "Parameters" in cclust.get("kcc").__doc__


def test_the_estimator_passes_n_jobs_without_a_warning():
    X, _ = _data()
    est = cclust.ConsensusClustering(method="kcc", n_clusters=3, n_partitions=5, random_state=0, n_jobs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        labels = est.fit_predict(X)
    assert labels.shape == (50,)


def test_an_ensemble_of_its_own_still_takes_n_jobs():
    E = Ensemble(np.array([[0, 1], [0, 1], [1, 0]]))
    assert E.contingency(np.array([0, 0, 1]), 2, n_jobs=1).shape == (2, 4)
