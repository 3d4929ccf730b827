"""ConsensusClustering: scikit-learn's own estimator checks, Pipeline/GridSearchCV, bad input."""
import inspect
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from unittest import SkipTest

import numpy as np
import pytest

import cclust
from cclust import ConsensusClustering
from cclust.base import accepts
from cclust.datasets import load_iris
from cclust.errors import UnknownNameError, ValidationError
from cclust.registry import method_info

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score
from sklearn.utils.estimator_checks import check_clustering, parametrize_with_checks

METHODS = sorted(cclust.available(kind="consensus"))

#: Exact methods with a size limit (symdiff-median: an integer program refused above 40 objects):
#: scikit-learn's checks fit data of 30-100 objects, so these run only the checks below that fit.
SIZE_LIMITED = {"symdiff-median"}


def _small(method, **params):
    """An estimator small enough for scikit-learn's checks (they fit it dozens of times).

    A fixed seed keeps the checks that do not set one themselves reproducible. ``best`` (and
    ``medoid``) returns
    an ensemble member with exactly n_clusters clusters, so its members are generated with K_i
    in {2, 3}, the K values the checks ask for (the default kmeans generator draws K_i from
    n_clusters..ceil(sqrt(n)) and may draw no member with K).
    """
    if method in ("best", "medoid"):
        params.setdefault("generator_params", {"k_range": (2, 3)})
    if method == "usenc":
        # U-SENC makes its own partitions (no k-means ones are mixed in): K_i near the checks' 3
        # blobs of 50 objects, where the paper's 20..60 (capped for small n) splits them at random;
        # ten of them, as the other methods get, instead of its default 20
        params.setdefault("method_params", {"k_range": (3, 6), "n_partitions": 10})
    return ConsensusClustering(method=method, n_clusters=3, n_partitions=10, random_state=0, **params)


def _route(method):
    """What of the estimator's code a method's fit goes through: whether it gets X (required or
    accepted), chooses K, makes its own partitions, and which settings _small gives it."""
    fn = cclust.get(method)
    info = method_info(fn)
    params, plain = _small(method).get_params(deep=False), _small("kcc").get_params(deep=False)
    settings = tuple(sorted(name for name, value in params.items() if name != "method" and value != plain[name]))
    return (info.requires_X, accepts(fn, "X", var_keyword=False), info.chooses_n_clusters,
            info.generates_ensemble, settings)


CHECKED = [m for m in METHODS if m not in SIZE_LIMITED]

#: Methods that represent their route where they are on one: kcc for the plain route, whose
#: first by name, bce, fits a variational mixture (the route's 36 checks and the memory-mapped
#: check_clustering took 2.5 s of CPU for bce against 0.2 s for kcc, at load average 3).
CHEAP_REPRESENTATIVES = ("kcc",)


def _representatives(methods):
    """One method per route through the estimator: the one of CHEAP_REPRESENTATIVES on it, else the
    first by name."""
    chosen = {}
    for method in sorted(methods):
        chosen.setdefault(_route(method), method)
    for method in CHEAP_REPRESENTATIVES:
        if method in methods:
            chosen[_route(method)] = method
    return sorted(chosen.values())


#: One method per route through the estimator.
ROUTES = _representatives(CHECKED)

#: scikit-learn checks that never call the consensus method: they read the estimator's
#: parameters, tags and repr, or the input is refused before any partition is generated
#: (test_wrapper_only_checks_never_reach_the_method counts the calls). Each would repeat the
#: same code for every method, so they run for one method per route; every other check, which
#: fits, runs for every method.
WRAPPER_ONLY_CHECKS = frozenset({
    "check_estimator_cloneable", "check_estimator_tags_renamed", "check_valid_tag_types", "check_estimator_repr",
    "check_no_attributes_set_in_init", "check_dont_overwrite_parameters", "check_estimators_unfitted",
    "check_do_not_raise_errors_in_init_or_set_params", "check_mixin_order", "check_all_zero_sample_weights_error",
    "check_complex_data", "check_estimators_empty_data_messages", "check_estimator_sparse_tag",
    "check_estimator_sparse_array", "check_estimator_sparse_matrix", "check_array_api_input",
    "check_parameters_default_constructible", "check_methods_subset_invariance", "check_fit2d_1sample",
    "check_fit2d_1feature", "check_get_params_invariance", "check_set_params", "check_fit1d",
    "check_fit2d_predict1d",
})


#: scikit-learn checks that fit the method exactly once, on plain blob data, and then judge only
#: the estimator's own code: the attributes fit sets (n_features_in_, fitted state, the return
#: value), the parameters and __dict__ it leaves alone, and how it validates sample_weight (which
#: only the resampling reads). What the method itself can get wrong there -- failing on plain
#: blobs -- check_clustering and check_fit_idempotent already ask of every method, so these run
#: for one method per route; test_wrapper_only_checks_never_reach_the_method counts one call each.
FIT_ONCE_CHECKS = frozenset({
    "check_estimators_fit_returns_self", "check_fit_check_is_fitted", "check_n_features_in",
    "check_n_features_in_after_fitting", "check_dict_unchanged", "check_estimators_overwrite_params",
    "check_positive_only_tag_during_fit", "check_sample_weights_list", "check_sample_weights_not_an_array",
    "check_sample_weights_not_overwritten", "check_sample_weights_pandas_series", "check_sample_weights_shape",
})

#: Checks run for one method per route only.
ROUTE_CHECKS = WRAPPER_ONLY_CHECKS | FIT_ONCE_CHECKS

#: scikit-learn checks that ask for what the estimator deliberately is not. Its sample_weight are
#: sampling weights of the resamples (ConsensusClusterPlus's weightsItem, acting through
#: subsample < 1), not repetition counts, so a fit with weight 2 is not a fit with the row twice;
#: the check compares predict's labels of the two fits (and compared nothing before predict existed).
NOT_APPLICABLE_CHECKS = frozenset({"check_sample_weight_equivalence_on_dense_data"})


def _check_name(check):
    return getattr(check, "func", check).__name__


def _sklearn_params(methods, keep):
    """scikit-learn's (estimator, check) parameters for ``methods``, those whose check ``keep`` accepts."""
    # scikit-learn warns at collection that the estimator does not inherit BaseEstimator; that is
    # deliberate (scikit-learn stays optional), so the warning is silenced for this call only.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not inherit from `sklearn.base.BaseEstimator`")
        mark = parametrize_with_checks([_small(m) for m in methods]).mark
    params = [p for p in mark.args[1] if keep(_check_name(getattr(p, "values", p)[1]))
              and _check_name(getattr(p, "values", p)[1]) not in NOT_APPLICABLE_CHECKS]
    return pytest.mark.parametrize(mark.args[0], params, **mark.kwargs)


@_sklearn_params(CHECKED, lambda name: name not in ROUTE_CHECKS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@_sklearn_params(ROUTES, lambda name: name in ROUTE_CHECKS)
def test_sklearn_wrapper_checks(estimator, check):
    check(estimator)


def test_wrapper_only_checks_never_reach_the_method():
    # Every route's checks, run on a method that counts its calls: the checks skipped for the
    # other methods of a route must not call it (a scikit-learn release that starts fitting
    # in one of them fails here, naming it).
    # The checks of FIT_ONCE_CHECKS must call it exactly once (one fit on plain blobs): a release
    # that makes one of them fit more inputs fails here too.
    checks = [getattr(p, "values", p)[1] for p in
              _sklearn_params(["kcc"], lambda name: name in ROUTE_CHECKS).mark.args[1]]
    calls = []
    reached = {}
    not_once = {}
    for method in ROUTES:
        target = cclust.get(method)

        def counting(ensemble, n_clusters, *, random_state=None, _target=target, **params):
            calls.append(1)
            return _target(ensemble, n_clusters, random_state=random_state, **params)

        counting.__cclust_info__ = target.__cclust_info__
        counting.__signature__ = inspect.signature(target)
        cclust.register("counting-method", counting, kind="consensus")
        try:
            estimator = _small(method).set_params(method="counting-method")
            for check in checks:
                before = len(calls)
                try:
                    check(estimator)
                except SkipTest:
                    pass
                name, made = _check_name(check), len(calls) - before
                if name in WRAPPER_ONLY_CHECKS and made:
                    reached.setdefault(name, []).append(method)
                if name in FIT_ONCE_CHECKS and made != 1:
                    not_once.setdefault(name, []).append((method, made))
        finally:
            cclust.registry.unregister("counting-method")
    assert not reached, f"these checks call the consensus method, so they must run for every method: {reached}"
    assert not not_once, f"these checks do not fit the method exactly once, so they must run for every method: {not_once}"
    ran = {_check_name(getattr(p, "values", p)[1]) for p in
           _sklearn_params(["kcc"], lambda name: True).mark.args[1]}
    assert ROUTE_CHECKS <= ran, f"not scikit-learn checks (any more): {sorted(ROUTE_CHECKS - ran)}"


# scikit-learn runs its clustering checks only for subclasses of ClusterMixin (an isinstance
# test, not a tag), which would need scikit-learn at import time; run them explicitly instead.
# A read-only memory map differs from an array only in what X the method (or the generator,
# the same for every method of a route) reads: it runs for one method per route.
@pytest.mark.parametrize("method, readonly_memmap",
                         [(m, False) for m in CHECKED] + [(m, True) for m in ROUTES],
                         ids=[f"{m}-array" for m in CHECKED] + [f"{m}-memmap" for m in ROUTES])
def test_sklearn_check_clustering(method, readonly_memmap):
    check_clustering("ConsensusClustering", _small(method), readonly_memmap=readonly_memmap)


@pytest.fixture(scope="module")
def iris():
    return load_iris()


def test_fit_predict_matches_labels_and_attributes(iris):
    X, y = iris
    model = ConsensusClustering("kcc", n_clusters=3, n_partitions=20, random_state=0)
    labels = model.fit_predict(X)
    assert labels.dtype == np.int64 and labels.shape == (150,)
    np.testing.assert_array_equal(labels, model.labels_)
    np.testing.assert_array_equal(labels, model.result_.labels)
    assert model.n_clusters_ == 3 and set(labels.tolist()) == {0, 1, 2}
    assert model.ensemble_.shape == (150, 20)
    assert model.n_features_in_ == 4
    assert not hasattr(model, "feature_names_in_")
    assert model.result_.method == "kcc"
    assert adjusted_rand_score(y, labels) > 0.5


def test_pipeline_fit_predict(iris):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = iris
    pipe = make_pipeline(StandardScaler(), ConsensusClustering(n_clusters=3, n_partitions=20, random_state=0))
    labels = pipe.fit_predict(X)
    direct = ConsensusClustering(n_clusters=3, n_partitions=20, random_state=0).fit_predict(
        StandardScaler().fit_transform(X))
    np.testing.assert_array_equal(labels, direct)
    assert adjusted_rand_score(y, labels) > 0.5
    # Nested parameters route through the pipeline to method_params.
    pipe.set_params(consensusclustering__method_params__utility="uc")
    assert pipe[-1].method_params == {"utility": "uc"}
    assert pipe.get_params()["consensusclustering__method_params__utility"] == "uc"


def _ari_scorer(estimator, X, y):
    # With one split whose train and test sets are the whole data, labels_ label X itself.
    return adjusted_rand_score(y, estimator.labels_)


def test_grid_search_picks_three_clusters_on_iris(iris):
    from sklearn.model_selection import GridSearchCV

    X, y = iris
    everything = np.arange(X.shape[0])
    # A fixed k_range gives every candidate K the same kind of basic partitions (by default
    # the kmeans generator's K_i range starts at n_clusters), so only the fusion differs.
    search = GridSearchCV(
        ConsensusClustering(n_partitions=20, random_state=0, generator_params={"k_range": (2, 6)}),
        param_grid={"n_clusters": [2, 3, 4, 5], "method": ["kcc", "hbgf"]},
        scoring=_ari_scorer, cv=[(everything, everything)])
    search.fit(X, y)
    assert search.best_params_["n_clusters"] == 3
    assert search.best_score_ > 0.6
    assert search.best_estimator_.labels_.shape == (150,)
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all() and len(scores) == 8


def test_grid_search_over_nested_method_params(iris):
    from sklearn.model_selection import GridSearchCV

    X, y = iris
    everything = np.arange(X.shape[0])
    base = ConsensusClustering(n_clusters=3, n_partitions=20, random_state=0, method_params={"n_init": 3})
    search = GridSearchCV(base, param_grid={"method_params__utility": ["uc", "uh", "ucos"]},
                          scoring=_ari_scorer, cv=[(everything, everything)]).fit(X, y)
    assert search.best_params_["method_params__utility"] in {"uc", "uh", "ucos"}
    # Each candidate kept the base's other key, and the base's dict was not written to.
    assert search.best_estimator_.method_params["n_init"] == 3
    assert base.method_params == {"n_init": 3}


def test_fit_with_ready_ensemble(iris):
    X, y = iris
    E = cclust.generate("kmeans", X, 3, n_partitions=15, random_state=4)
    model = ConsensusClustering("kcc", n_clusters=3, random_state=0).fit(ensemble=E)
    assert model.ensemble_ is E
    assert model.n_features_in_ == 0
    # The estimator seeds the method with the second child of SeedSequence(random_state).
    from cclust._pipeline import child_seeds

    method_seed = child_seeds(0, 2)[1]
    direct = cclust.consensus("kcc", E, 3, random_state=method_seed, n_jobs=None)
    np.testing.assert_array_equal(model.labels_, direct.labels)
    # A raw label matrix is accepted too, and X may come along for methods that use it.
    model2 = ConsensusClustering("wosp", n_clusters=3, random_state=0).fit(X, ensemble=np.asarray(E.labels))
    assert model2.n_features_in_ == 4 and model2.labels_.shape == (150,)
    assert adjusted_rand_score(y, model2.labels_) > 0.5


def test_method_choosing_k_accepts_none(iris):
    X, _ = iris
    model = ConsensusClustering("addremadd", n_clusters=None, n_partitions=15, random_state=0).fit(X)
    assert model.n_clusters_ == model.labels_.max() + 1 >= 2
    # the generator was asked for a spread of K (k_range=(2, ceil(sqrt(n)))), not K=2 only
    assert model.ensemble_.n_clusters.max() > 2


def test_single_cluster_is_trivial(iris):
    X, _ = iris
    model = ConsensusClustering(n_clusters=1, n_partitions=5, random_state=0).fit(X)
    assert model.n_clusters_ == 1 and (model.labels_ == 0).all()


@pytest.mark.parametrize("method", ["kcc", "hbgf", "wosp"])
def test_deterministic_for_seed_and_threads(iris, method):
    X, _ = iris
    runs = [ConsensusClustering(method, n_clusters=3, n_partitions=12, random_state=7, n_jobs=jobs).fit_predict(X)
            for jobs in (1, 2, 1)]
    for labels in runs[1:]:
        np.testing.assert_array_equal(runs[0], labels)
    other = ConsensusClustering(method, n_clusters=3, n_partitions=12, random_state=8).fit(X)
    assert not np.array_equal(other.ensemble_.labels, ConsensusClustering(
        method, n_clusters=3, n_partitions=12, random_state=7).fit(X).ensemble_.labels)


def test_generator_random_state_is_reproducible(iris):
    X, _ = iris
    a = ConsensusClustering(n_clusters=3, n_partitions=10, random_state=np.random.default_rng(3)).fit_predict(X)
    b = ConsensusClustering(n_clusters=3, n_partitions=10, random_state=np.random.default_rng(3)).fit_predict(X)
    np.testing.assert_array_equal(a, b)


def test_clone_and_params():
    est = ConsensusClustering("mcla", n_clusters=4, method_params={"ufactor": 5}, random_state=1)
    copy = clone(est)
    assert copy is not est
    assert copy.get_params(deep=False) == est.get_params(deep=False)
    assert copy.method_params is est.method_params or copy.method_params == est.method_params
    assert not hasattr(copy, "labels_")
    assert repr(est) == "ConsensusClustering(method='mcla', n_clusters=4, method_params={'ufactor': 5}, random_state=1)"
    assert repr(ConsensusClustering()) == "ConsensusClustering()"
    deep = est.get_params(deep=True)
    assert deep["method_params__ufactor"] == 5
    assert set(est.get_params(deep=False)) <= set(deep)


def test_set_params_nested_does_not_mutate():
    params = {"utility": "uh"}
    est = ConsensusClustering(method_params=params)
    assert est.set_params(method_params__utility="uc", generator_params__k_range=(2, 5)) is est
    assert est.method_params == {"utility": "uc"} and params == {"utility": "uh"}
    assert est.generator_params == {"k_range": (2, 5)}
    with pytest.raises(ValidationError, match="invalid parameter 'nope'.*valid parameters"):
        est.set_params(nope=1)
    with pytest.raises(ValidationError, match="invalid parameter 'n_clusters__x'"):
        est.set_params(n_clusters__x=1)
    with pytest.raises(ValidationError, match="method_params must be a dict or None"):
        ConsensusClustering(method_params=[1]).set_params(method_params__a=1)


def test_dataframe_feature_names():
    pd = pytest.importorskip("pandas")
    X, _ = load_iris()
    frame = pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"])
    model = ConsensusClustering(n_clusters=3, n_partitions=10, random_state=0).fit(frame)
    assert model.feature_names_in_.tolist() == ["sl", "sw", "pl", "pw"]
    np.testing.assert_array_equal(
        model.labels_, ConsensusClustering(n_clusters=3, n_partitions=10, random_state=0).fit_predict(X))
    model.fit(X)  # refitting on an array forgets the names
    assert not hasattr(model, "feature_names_in_")


def test_input_is_not_mutated(iris):
    X, _ = iris
    X = X.copy()
    X.setflags(write=False)
    before = X.copy()
    params = {"utility": "uc"}
    est = ConsensusClustering("wosp", n_clusters=3, n_partitions=10, method_params={}, random_state=0)
    est.fit(X)
    ConsensusClustering("kcc", n_clusters=3, n_partitions=10, method_params=params, random_state=0).fit(X)
    np.testing.assert_array_equal(X, before)
    assert params == {"utility": "uc"}


def test_bad_parameters_fail_at_fit_with_clear_messages(iris):
    X, _ = iris
    # __init__ accepts anything (scikit-learn's clone needs that); fit refuses.
    est = ConsensusClustering(method="kcx")
    with pytest.raises(UnknownNameError, match="Did you mean 'kcc'.*Available consensus names:.*hbgf"):
        est.fit(X)
    with pytest.raises(ValidationError, match=r"n_clusters must be an int in the range \[1, 150\], got 0"):
        ConsensusClustering(n_clusters=0).fit(X)
    with pytest.raises(ValidationError, match=r"n_clusters must be an int in the range \[1, 150\], got 151"):
        ConsensusClustering(n_clusters=151).fit(X)
    with pytest.raises(ValidationError, match="n_clusters must be an int"):
        ConsensusClustering(n_clusters=2.5).fit(X)
    with pytest.raises(ValidationError, match="n_clusters=None is only allowed for methods that choose.*addremadd"):
        ConsensusClustering(n_clusters=None).fit(X)
    with pytest.raises(ValidationError, match="method_params must be a dict of keyword arguments or None, got list"):
        ConsensusClustering(method_params=["utility"]).fit(X)
    with pytest.raises(ValidationError, match="method_params must not contain 'random_state'"):
        ConsensusClustering(method_params={"random_state": 1}).fit(X)
    with pytest.raises(ValidationError, match="generator_params must be a dict"):
        ConsensusClustering(generator_params="k_range").fit(X)
    with pytest.raises(ValidationError, match=r"n_partitions must be an int in the range \[0, inf\]"):
        ConsensusClustering(n_partitions=-1).fit(X)
    with pytest.raises(ValidationError, match="n_partitions=0 generates no partitions"):
        ConsensusClustering(n_partitions=0).fit(X)
    with pytest.raises(ValidationError, match="random_state must be None, a non-negative int"):
        ConsensusClustering(random_state="seed").fit(X)
    with pytest.raises(UnknownNameError, match="unknown generator name 'kmean'"):
        ConsensusClustering(generator="kmean").fit(X)
    with pytest.raises(ValidationError, match=r"n_jobs must be an int in the range \[1, inf\], got 0"):
        ConsensusClustering(n_jobs=0).fit(X)
    with pytest.raises(ValidationError, match="fit needs data"):
        ConsensusClustering().fit()
    with pytest.raises(ValidationError, match="X has 0 feature"):
        ConsensusClustering().fit(np.empty((5, 0)))
    with pytest.raises(ValidationError, match=r"X contains NaN \(first at row 0, column 0; 4 in all\)"):
        ConsensusClustering().fit(np.where(np.eye(150, 4) > 0, np.nan, X))


def test_method_requiring_x_with_ensemble_only(iris):
    X, _ = iris
    E = cclust.generate("kmeans", X, 3, n_partitions=5, random_state=0)
    needs_x = [m for m in METHODS if method_info(cclust.get(m)).requires_X]
    assert "wosp" in needs_x
    for method in needs_x:
        with pytest.raises(ValidationError, match=f"method '{method}' needs the original features"):
            ConsensusClustering(method, n_clusters=3).fit(ensemble=E)
    with pytest.raises(ValidationError, match="X has 10 rows, the ensemble 150"):
        ConsensusClustering("wosp", n_clusters=3).fit(X[:10], ensemble=E)


def test_works_without_sklearn():
    """fit_predict, get_params and set_params must not import scikit-learn."""
    code = textwrap.dedent("""
        import sys

        class BlockSklearn:
            def find_spec(self, name, path=None, target=None):
                if name == "sklearn" or name.startswith("sklearn."):
                    raise ImportError("scikit-learn is blocked for this test")
                return None

        sys.meta_path.insert(0, BlockSklearn())
        try:
            import sklearn  # noqa: F401
        except ImportError:
            pass
        else:
            raise SystemExit("the blocker did not work")
        import cclust
        from cclust.datasets import load_iris

        X, y = load_iris()
        model = cclust.ConsensusClustering("kcc", n_clusters=3, n_partitions=10, random_state=0)
        model.set_params(method_params__utility="uc")
        labels = model.fit_predict(X)
        assert labels.shape == (150,) and labels.max() == 2, labels
        assert model.get_params()["method_params__utility"] == "uc"
        assert cclust.get("ari")(labels, y) > 0.5
        assert not any(name.split(".")[0] == "sklearn" for name in sys.modules)
        print("ok", repr(model))
    """)
    root = Path(cclust.__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    # cwd=root: `python -c` puts its working directory first on sys.path, where a source
    # checkout without compiled extensions would shadow the installed cclust.
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False, cwd=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok ConsensusClustering(")


def test_n_jobs_verbose_and_seeds_reach_generator_and_method(iris):
    """n_jobs -> generator n_jobs and method n_threads; verbose -> both when they take it."""
    X, _ = iris
    seen = {}

    def recording_generator(X, n_clusters, *, n_partitions=100, random_state=None, n_jobs=None, verbose=0):
        """Test generator: kmeans, remembering its keywords."""
        seen["generator"] = {"n_jobs": n_jobs, "verbose": verbose, "random_state": random_state,
                             "n_partitions": n_partitions, "n_clusters": n_clusters}
        return cclust.generate("kmeans", X, n_clusters, n_partitions=n_partitions, random_state=random_state)

    def recording_method(ensemble, n_clusters, *, random_state=None, n_threads=None, verbose=0):
        """Test method: kcc, remembering its keywords."""
        seen["method"] = {"n_threads": n_threads, "verbose": verbose, "random_state": random_state}
        return cclust.consensus("kcc", ensemble, n_clusters, random_state=random_state)

    cclust.register("test-recording-generator", recording_generator, kind="generator")
    cclust.register("test-recording-method", recording_method, kind="consensus")
    try:
        model = ConsensusClustering("test-recording-method", n_clusters=3, generator="test-recording-generator",
                                    n_partitions=7, random_state=3, n_jobs=2, verbose=1).fit(X)
    finally:
        cclust.registry.unregister("test-recording-generator")
        cclust.registry.unregister("test-recording-method")
    from cclust._pipeline import child_seeds

    gen_seed, method_seed = child_seeds(3, 2)
    assert seen["generator"] == {"n_jobs": 2, "verbose": 1, "random_state": gen_seed, "n_partitions": 7,
                                 "n_clusters": 3}
    assert seen["method"] == {"n_threads": 2, "verbose": 1, "random_state": method_seed}
    assert gen_seed != method_seed
    assert model.ensemble_.n_partitions == 7


def test_constant_data_is_refused_not_split_at_random():
    X = np.ones((30, 4))
    with pytest.raises(ValidationError, match="X has only 1 distinct row, fewer than n_clusters=3"):
        ConsensusClustering("kcc", n_clusters=3, n_partitions=5, random_state=0).fit(X)


def test_a_method_that_makes_its_own_partitions_is_fed_no_generated_ensemble():
    from cclust._pipeline import child_seeds
    from cclust.datasets import make_moons

    assert method_info(cclust.get("usenc")).generates_ensemble
    assert not method_info(cclust.get("kcc")).generates_ensemble
    X, _ = make_moons(300, random_state=0)
    model = ConsensusClustering("usenc", n_clusters=2, random_state=0).fit(X)
    alone = cclust.get("usenc")(None, 2, X=X, random_state=child_seeds(0, 2)[1])
    assert model.ensemble_ is None and model.result_.extras["n_generated"] == 20
    assert np.array_equal(model.labels_, alone.labels)  # the paper's U-SENC, no k-means partitions joined
    for skip in ({"generator": None}, {"n_partitions": 0}, {"n_partitions": 10}):  # the generator's count: unused
        assert np.array_equal(ConsensusClustering("usenc", n_clusters=2, random_state=0, **skip).fit(X).labels_,
                              model.labels_)


@pytest.mark.parametrize("params, words", [
    ({"generator": "gmm"}, ["generator='gmm' would not be used", "fit(X, ensemble="]),
    ({"generator_params": {"k_range": (2, 5)}}, ["generator_params would not be used"]),
    ({"subsample": 0.8}, ["subsample"]),
    ({"trim": 2}, ["trim and reweigh"]),
], ids=["generator", "generator_params", "subsample", "trim"])
def test_generation_settings_for_a_method_that_makes_its_own_are_refused(params, words):
    X, _ = load_iris()
    with pytest.raises(ValidationError) as info:
        ConsensusClustering("usenc", n_clusters=3, random_state=0, **params).fit(X)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("skip, words", [({"generator": None}, "generator=None"), ({"n_partitions": 0}, "n_partitions=0")])
def test_no_generation_for_a_method_that_needs_partitions_is_a_clear_error(skip, words):
    X, _ = load_iris()
    with pytest.raises(ValidationError, match=f"{words} generates no partitions.*'kcc'.*usenc"):
        ConsensusClustering("kcc", n_clusters=3, **skip).fit(X)


def test_declaring_generates_ensemble_needs_requires_x():
    from cclust.base import declare

    with pytest.raises(ValidationError, match="requires_X=True"):
        declare(generates_ensemble=True)


def test_heterogeneous_counts_in_the_estimator_get_advice_for_the_estimator():
    X, _ = load_iris()
    params = {"generators": [("kmeans", 5, {}), ("subspace", 5, {})]}
    with pytest.raises(ValidationError, match=r"n_partitions=100 differs .* \(10\); pass n_partitions=10 to "
                                              "ConsensusClustering"):
        ConsensusClustering("kcc", n_clusters=3, generator="heterogeneous", generator_params=params).fit(X)
    model = ConsensusClustering("kcc", n_clusters=3, generator="heterogeneous", generator_params=params,
                                n_partitions=10, random_state=0).fit(X)
    assert model.ensemble_.provenance == ("kmeans",) * 5 + ("subspace",) * 5


def test_a_dataframe_keeps_its_index_and_nan_errors_name_its_labels():
    pd = pytest.importorskip("pandas")
    X, _ = load_iris()
    df = pd.DataFrame(X, index=[f"plant{i}" for i in range(150)], columns=["sl", "sw", "pl", "pw"])
    model = ConsensusClustering("kcc", n_clusters=3, n_partitions=10, random_state=0).fit(df)
    assert isinstance(model.labels_, np.ndarray) and model.index_.equals(df.index)
    assert model.labels_series_.index.equals(df.index) and np.array_equal(model.labels_series_.values, model.labels_)
    holed = df.copy()
    holed.loc["plant7", "pw"] = np.nan
    with pytest.raises(ValidationError, match=r"row 'plant7' \(position 7\), column 'pw' \(position 3\)"):
        ConsensusClustering("kcc", n_clusters=3, n_partitions=10).fit(holed)
    filled = ConsensusClustering("kcc", n_clusters=3, n_partitions=10, random_state=0,
                                 missing_features="mean").fit(holed)
    assert holed.isna().sum().sum() == 1  # the caller's frame is left as it was
    expected = X.copy()
    expected[7, 3] = np.delete(X[:, 3], 7).mean()
    same = ConsensusClustering("kcc", n_clusters=3, n_partitions=10, random_state=0).fit(expected)
    assert np.array_equal(filled.labels_, same.labels_)
    with pytest.raises(ValidationError, match="missing_features must be one of"):
        ConsensusClustering("kcc", n_clusters=3, missing_features="median").fit(X)


def test_default_kmeans_ensemble_fits_on_a_sample_above_the_size_threshold():
    from cclust import generators
    from cclust._pipeline import child_seeds
    from cclust.generators import FIT_ROWS, FIT_ROWS_FROM

    rng = np.random.default_rng(0)
    n = FIT_ROWS_FROM + 500
    X = np.concatenate([rng.normal(0, 1, (n // 2, 2)), rng.normal(8, 1, (n - n // 2, 2))])
    seed = child_seeds(0, 2)[0]
    model = ConsensusClustering(n_clusters=2, n_partitions=3, random_state=0).fit(X)
    assert model.ensemble_ == generators.kmeans(X, 2, n_partitions=3, random_state=seed, fit_rows=FIT_ROWS)
    old = ConsensusClustering(n_clusters=2, n_partitions=3, random_state=0, generator_params={"fit_rows": None}).fit(X)
    assert old.ensemble_ == generators.kmeans(X, 2, n_partitions=3, random_state=seed, fit_rows=None)
    assert old.ensemble_ != model.ensemble_
    # below the threshold nothing changes
    small = X[:FIT_ROWS_FROM]
    assert (ConsensusClustering(n_clusters=2, n_partitions=3, random_state=0).fit(small).ensemble_
            == generators.kmeans(small, 2, n_partitions=3, random_state=seed))
