"""Partition weights belong to the ensemble: ``cclust.Ensemble(labels, weights=w)`` or
``ensemble.with_weights(w)``. Every consensus function follows them, none takes ``weights=``
of its own, and the 28 that took one still accept it for one release: a FutureWarning naming
the caller's line, and the result of the weighted ensemble."""
import inspect
import warnings

import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.soft import SoftEnsemble

#: The consensus functions that took ``weights=`` beside the ensemble, by registered name.
FORMER_WEIGHTS = ("addremadd", "bce", "best", "best-of", "dwh", "eac", "ecpcs-hc", "ecpcs-mc", "em-mixture",
                  "fc", "gv1", "gv3", "hac", "he", "hm", "ipc", "ipvc", "ivc", "kcc", "ls-agglomerative", "medoid",
                  "nmf", "pta", "ptgp", "se", "sm", "symdiff-median", "voting")


def _two_views(n_per=12, seed=0):
    """Six noisy copies of a partition A and six of a partition B that cuts across it, the
    features [A, B] with a little noise, and A and B: weighting one half up makes its view the
    consensus."""
    rng = np.random.default_rng(seed)
    A, B = np.repeat([0, 1, 2], n_per), np.tile([0, 1, 2], n_per)
    n = A.shape[0]
    columns = []
    for truth in (A, B):
        for _ in range(6):
            noisy = truth.copy()
            flip = rng.random(n) < 0.05
            noisy[flip] = rng.integers(0, 3, int(flip.sum()))
            columns.append(noisy)
    X = np.column_stack([A, B]).astype(float) + rng.normal(0.0, 0.1, (n, 2))
    return np.column_stack(columns), X, A, B


def _call(name, ensemble, X, **kwargs):
    fn = cclust.get(name, kind="consensus")
    if "X" in inspect.signature(fn).parameters:
        kwargs["X"] = X
    return fn(ensemble, 3, random_state=0, **kwargs)


#: A method in which the weights move the consensus towards the weighted view without making it
#: that view: ECPCS-MC's Markov clustering merges the clusters of both views into the same
#: meta-clusters whatever their weights (the weights enter the vote that follows; with A's copies
#: alone it finds A).
TOWARDS_ONLY = {"ecpcs-mc"}
#: WOKMEANS clusters X (which holds both views) with object weights that the weighted ensemble
#: sets: the partition weights change its labels, but towards no view.
CHANGES_ONLY = {"wokmeans"}


@pytest.mark.parametrize("name", sorted(cclust.available(kind="consensus")))
def test_every_consensus_function_follows_the_ensembles_partition_weights(name):
    """Weighting the six copies of A up (the others to 1%) gives A; weighting B's gives B. A
    method that read no weights would give the same labels both times. Twenty objects a
    cluster (twelve for the exact symmetric-difference median, limited to 40 objects)."""
    L, X, A, B = _two_views(n_per=12 if name == "symdiff-median" else 20)
    up = np.r_[np.ones(6), np.full(6, 0.01)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cclust.errors.ConvergenceWarning)
        towards_a = _call(name, Ensemble(L, weights=up), X).labels
        towards_b = _call(name, Ensemble(L, weights=up[::-1]), X).labels
    ari = cclust.get("ari", kind="metric")
    scores = {"A|A up": ari(towards_a, A), "A|B up": ari(towards_b, A),
              "B|A up": ari(towards_a, B), "B|B up": ari(towards_b, B)}
    if name in CHANGES_ONLY:
        assert not np.array_equal(towards_a, towards_b)
    elif name in TOWARDS_ONLY:
        assert scores["A|A up"] > scores["A|B up"] and scores["B|B up"] > scores["B|A up"], scores
    else:
        assert scores["A|A up"] >= 0.9 and scores["B|B up"] >= 0.9, scores


def test_no_consensus_function_takes_weights_beside_the_ensemble():
    taking = [name for name in sorted(cclust.available(kind="consensus"))
              if "weights" in inspect.signature(cclust.get(name, kind="consensus")).parameters]
    assert taking == []


@pytest.mark.parametrize("name", FORMER_WEIGHTS)
def test_the_former_weights_argument_warns_and_gives_the_weighted_ensembles_result(name):
    L, X, _, _ = _two_views(n_per=12)
    w = np.linspace(1.0, 3.0, L.shape[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = _call(name, L, X, weights=w)
    deprecations = [c for c in caught if c.category is FutureWarning]
    assert len(deprecations) == 1, [str(c.message) for c in caught]
    assert "with_weights" in str(deprecations[0].message) and deprecations[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cclust.errors.ConvergenceWarning)
        new = _call(name, Ensemble(L, weights=w), X)
    assert np.array_equal(old.labels, new.labels)
    assert old.objective == new.objective or (np.isnan(old.objective) and np.isnan(new.objective))


def test_the_former_weights_argument_by_keyword_ensemble_and_on_soft_input():
    L, X, _, _ = _two_views()
    w = np.linspace(1.0, 3.0, L.shape[1])
    kcc = cclust.get("kcc")
    with pytest.warns(FutureWarning):
        by_keyword = kcc(ensemble=L, n_clusters=3, weights=w, random_state=0)
    assert np.array_equal(by_keyword.labels, kcc(Ensemble(L, weights=w), 3, random_state=0).labels)
    S = SoftEnsemble(Ensemble(L))
    with pytest.warns(FutureWarning):
        soft = cclust.get("se")(S, 3, weights=w, random_state=0)
    assert np.array_equal(soft.labels, cclust.get("se")(S.with_weights(w), 3, random_state=0).labels)


def test_bad_weights_under_the_former_argument_are_refused_naming_them():
    L, _, _, _ = _two_views()
    with pytest.warns(FutureWarning), pytest.raises(cclust.errors.ValidationError, match="weights"):
        cclust.get("kcc")(L, 3, weights=np.r_[-1.0, np.ones(L.shape[1] - 1)])


def test_the_dask_kcc_takes_the_former_weights_argument_too():
    cdask = pytest.importorskip("cclust.dask")
    pytest.importorskip("dask.array")
    L, _, _, _ = _two_views()
    w = np.linspace(1.0, 3.0, L.shape[1])
    assert "weights" not in inspect.signature(cdask.kcc).parameters
    with pytest.warns(FutureWarning, match="with_weights"):
        old = cdask.kcc(L, 3, weights=w, n_init=2, random_state=0)
    new = cdask.kcc(cdask.from_array(L).with_weights(w), 3, n_init=2, random_state=0)
    assert np.array_equal(old.labels, new.labels) and old.objective == new.objective


def test_the_probability_trajectories_weights_argument_is_read_now():
    """PTA's and PTGP's shared first half took ``weights=`` and read it nowhere; it is now the
    weighted ensemble's, with the FutureWarning, and unequal weights change the trajectories."""
    from cclust.consensus_functions.trajectories import probability_trajectories

    L, _, _, _ = _two_views()
    E = Ensemble(L).canonical()
    w = np.r_[np.ones(6), np.full(6, 0.01)]
    with pytest.warns(FutureWarning, match="with_weights"):
        old = probability_trajectories(E, weights=w)
    new = probability_trajectories(E.with_weights(w))
    assert np.array_equal(old["pts"], new["pts"]) and np.array_equal(old["weights"], new["weights"])
    assert not np.allclose(probability_trajectories(E)["pts"], new["pts"])
