"""The conformance kit catches real defects, and passes correct functions.

Each broken function below has exactly one defect a real implementation could have; the test
asserts that the check written for that defect fails with an AssertionError naming the check
and the function.
"""
import re
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from scipy.cluster.hierarchy import cut_tree, linkage
from scipy.spatial.distance import squareform

import cclust
from cclust import ConsensusResult
from cclust.ensemble import Ensemble, as_ensemble
from cclust.errors import UnknownNameError, ValidationError
from cclust.registry import declare
from cclust.testing import (
    CHECKS,
    CONSENSUS_CHECKS,
    GENERATOR_CHECKS,
    METRIC_CHECKS,
    adjusted_rand,
    blob_partitions,
    check_consensus,
    check_consensus_contract,
    check_consensus_deterministic,
    check_consensus_identical_partitions,
    check_consensus_missing_labels,
    check_consensus_n_clusters,
    check_consensus_no_mutation,
    check_consensus_object_order,
    check_consensus_order_invariance,
    check_consensus_pickle,
    check_consensus_relabel_invariance,
    check_consensus_result,
    check_consensus_thread_safety,
    check_generator,
    check_generator_deterministic,
    check_generator_n_jobs,
    check_generator_result,
    check_metric,
    check_metric_no_mutation,
    check_metric_returns_float,
    check_metric_self_agreement,
    check_registered,
    parametrize_with_checks,
    same_partition,
)
from cclust.testing.strategies import ensembles, label_columns

# -- a correct consensus function -------------------------------------------------------------


def average_linkage(ensemble, n_clusters, *, random_state=None):
    """Average-linkage clustering of the co-association matrix cut into n_clusters (EAC)."""
    ensemble = as_ensemble(ensemble)
    if ensemble.n_samples == 1:
        return ConsensusResult.from_labels([0])
    distance = 1.0 - ensemble.coassociation()
    np.fill_diagonal(distance, 0.0)  # a copy: coassociation() is read-only
    tree = linkage(squareform(distance, checks=False), method="average")
    return ConsensusResult.from_labels(cut_tree(tree, n_clusters=n_clusters).reshape(-1), method="eac-test")


# -- consensus functions with one defect each ---------------------------------------------------


def mutates_its_input(ensemble, n_clusters, *, random_state=None):
    """Writes into the ensemble's label matrix (after switching its read-only flag off)."""
    labels = ensemble.labels
    labels.setflags(write=True)
    labels[0, 0] = (labels[0, 0] + 1) % ensemble.n_clusters[0]
    return average_linkage(ensemble, n_clusters)


def ignores_its_seed(ensemble, n_clusters, *, random_state=None):
    """Random labels from fresh OS entropy whatever random_state says."""
    rng = np.random.default_rng()
    n = ensemble.n_samples
    labels = np.concatenate([np.arange(n_clusters), rng.integers(0, n_clusters, n - n_clusters)])
    return ConsensusResult.from_labels(rng.permutation(labels))


def labels_out_of_range(ensemble, n_clusters, *, random_state=None):
    """Numbers its clusters 1..K (a forged result: ConsensusResult itself would refuse)."""
    result = average_linkage(ensemble, n_clusters)
    object.__setattr__(result, "labels", result.labels + 1)
    return result


def ignores_n_clusters(ensemble, n_clusters, *, random_state=None):
    """Returns the first partition, however many clusters were asked for."""
    return ConsensusResult.from_labels(ensemble.labels[:, 0])


def first_partition_with_k(ensemble, n_clusters, *, random_state=None):
    """The first partition with K clusters: depends on the order of the partitions."""
    for j in range(ensemble.n_partitions):
        if ensemble.n_clusters[j] == n_clusters and (ensemble.labels[:, j] >= 0).all():
            return ConsensusResult.from_labels(ensemble.labels[:, j])
    return average_linkage(ensemble, n_clusters)


def prefers_label_zero(ensemble, n_clusters, *, random_state=None):
    """The last K-cluster partition in which object 0 has label code 0: depends on label names."""
    chosen = None
    for j in range(ensemble.n_partitions):
        if ensemble.n_clusters[j] == n_clusters and ensemble.labels[0, j] == 0 and (ensemble.labels[:, j] >= 0).all():
            chosen = j
    if chosen is None:
        return average_linkage(ensemble, n_clusters)
    return ConsensusResult.from_labels(ensemble.labels[:, chosen])


def unpicklable_result(ensemble, n_clusters, *, random_state=None):
    """Puts a lambda in the result's extras."""
    result = average_linkage(ensemble, n_clusters)
    return ConsensusResult.from_labels(result.labels, extras={"score": lambda: 0})


@declare(handles_missing=False)
def accepts_missing_silently(ensemble, n_clusters, *, random_state=None):
    """Declares it cannot handle missing labels, then treats -1 as a cluster."""
    return average_linkage(Ensemble(np.asarray(ensemble.labels), missing=None), n_clusters)


@declare(handles_missing=False)
def refuses_missing(ensemble, n_clusters, *, random_state=None):
    """Declares handles_missing=False and refuses such ensembles as it should."""
    if ensemble.has_missing:
        raise ValidationError("ensemble: refuses_missing cannot handle missing labels (-1).")
    return average_linkage(ensemble, n_clusters)


def wrong_signature(labels, k, seed=None):
    """Takes k instead of n_clusters and no random_state."""
    return ConsensusResult.from_labels(np.asarray(labels.labels)[:, 0])


def never_returns_the_partition(ensemble, n_clusters, *, random_state=None):
    """Always moves object 0 to the next cluster: identical partitions do not come back."""
    labels = np.array(average_linkage(ensemble, n_clusters).labels)
    labels[0] = (labels[0] + 1) % n_clusters
    return ConsensusResult.from_labels(labels)


def merge_smallest(labels, n_clusters):
    _, labels = np.unique(labels, return_inverse=True)
    while labels.max() + 1 > n_clusters:
        counts = np.bincount(labels)
        small = np.argsort(counts, kind="stable")[:2]
        labels[labels == small[1]] = small[0]
        _, labels = np.unique(labels, return_inverse=True)
    return labels


@declare(requires_X=True)
def scales_X_in_place(ensemble, n_clusters, *, X, random_state=None):
    """Needs X and standardises it in place."""
    X -= X.mean(axis=0)
    return average_linkage(ensemble, n_clusters)


def furthest_first_from_object_zero(ensemble, n_clusters, *, random_state=None):
    """Furthest-first centres on 1 - co-association starting at object 0, then nearest centre:
    which object is "object 0" depends on the order of the objects."""
    distance = 1.0 - ensemble.coassociation()
    centres = [0]
    for _ in range(1, n_clusters):
        centres.append(int(distance[:, centres].min(axis=1).argmax()))
    labels = distance[:, centres].argmin(axis=1)
    return ConsensusResult.from_labels(merge_smallest(labels, n_clusters) if len(set(labels)) > n_clusters
                                       else labels)


_SHARED = {}


def keeps_its_input_in_a_global(ensemble, n_clusters, *, random_state=None):
    """Parks its input in a module-level dict and reads it back: not safe across threads."""
    _SHARED["ensemble"], _SHARED["k"] = ensemble, n_clusters
    time.sleep(0.005)  # widen the race window so the overlap is certain, not a timing accident
    return average_linkage(_SHARED["ensemble"], _SHARED["k"])


def _message(excinfo):
    return str(excinfo.value)


# -- consensus: a correct function passes --------------------------------------------------------


@pytest.mark.parametrize("check", CONSENSUS_CHECKS, ids=lambda check: check.__name__)
def test_a_correct_function_passes_every_check(check):
    check(average_linkage)


@pytest.mark.parametrize("n_clusters", [2, 3, 5])
def test_a_correct_function_passes_the_kit(n_clusters):
    check_consensus(average_linkage, n_clusters=n_clusters, random_state=11)


def test_refusing_missing_labels_is_correct_when_declared():
    check_consensus(refuses_missing)


@declare(requires_X=True)
def uses_X(ensemble, n_clusters, *, X, random_state=None):
    """Needs X (checks it is the blob data) and leaves it alone."""
    assert X.shape == (ensemble.n_samples, 2)
    return average_linkage(ensemble, n_clusters)


def test_requires_X_gets_the_blob_features():
    check_consensus(uses_X)


# -- consensus: each defect is caught by its check -----------------------------------------------

DEFECTS = [
    (mutates_its_input, check_consensus_no_mutation, r"ensemble\.labels was modified in place"),
    (scales_X_in_place, check_consensus_no_mutation, r"X was modified in place"),
    (ignores_its_seed, check_consensus_deterministic, r"two calls with random_state=0 gave different labels"),
    (labels_out_of_range, check_consensus_result, r"out of range"),
    (ignores_n_clusters, check_consensus_n_clusters, r"asked for n_clusters=2, got a result with 3 clusters"),
    (first_partition_with_k, check_consensus_order_invariance, r"reordering the partitions"),
    (prefers_label_zero, check_consensus_relabel_invariance, r"renaming the clusters"),
    (unpicklable_result, check_consensus_pickle, r"does not pickle"),
    (accepts_missing_silently, check_consensus_missing_labels, r"handles_missing=False but returned a result"),
    (wrong_signature, check_consensus_contract, r"breaks the consensus contract"),
    (never_returns_the_partition, check_consensus_identical_partitions, r"did not give that partition back"),
    (furthest_first_from_object_zero, check_consensus_object_order,
     r"permuting the objects of .* changed the consensus partition .*object_order='exact'"),
    (keeps_its_input_in_a_global, check_consensus_thread_safety, r"threads called at once"),
]


@pytest.mark.parametrize("fn, check, detail", DEFECTS, ids=[fn.__name__ for fn, _, _ in DEFECTS])
def test_each_defect_fails_its_check(fn, check, detail):
    with pytest.raises(AssertionError) as excinfo:
        check(fn)
    message = _message(excinfo)
    assert message.startswith(f"{check.__name__} failed for {fn.__module__}.{fn.__qualname__}: "), message
    assert re.search(detail, message), message


@pytest.mark.parametrize("fn, check, detail", DEFECTS, ids=[fn.__name__ for fn, _, _ in DEFECTS])
def test_each_defect_fails_the_whole_kit(fn, check, detail):
    with pytest.raises(AssertionError, match=check.__name__) as excinfo:
        check_consensus(fn)
    assert fn.__name__ in _message(excinfo)


def test_object_order_distribution_is_checked_only_where_the_answer_is_unambiguous():
    positional = declare(object_order="distribution")(furthest_first_from_object_zero)
    check_consensus_object_order(positional)
    check_consensus_object_order(furthest_first_from_object_zero, object_order="distribution")
    check_consensus(furthest_first_from_object_zero, object_order="distribution")

    @declare(object_order="distribution")
    def positional_and_wrong(ensemble, n_clusters, *, random_state=None):
        """Declares order dependence, but also loses identical partitions when reordered."""
        labels = np.array(furthest_first_from_object_zero(ensemble, n_clusters).labels)
        if ensemble.labels[0, 0] != ensemble.labels[-1, 0]:
            labels[0] = (labels[0] + 1) % n_clusters
        return ConsensusResult.from_labels(labels)

    with pytest.raises(AssertionError, match=r"check_consensus_object_order.*four copies of one partition"):
        check_consensus_object_order(positional_and_wrong)
    with pytest.raises(ValueError, match="object_order must be one of"):
        check_consensus_object_order(average_linkage, object_order="roughly")


def test_thread_safety_passes_a_function_that_releases_the_gil():
    def sleeps_then_clusters(ensemble, n_clusters, *, random_state=None):
        time.sleep(0.002)  # lets the other threads run in between: still no shared state
        return average_linkage(ensemble, n_clusters)

    before = threading.active_count()
    check_consensus_thread_safety(sleeps_then_clusters)
    assert threading.active_count() == before  # the kit's pool is shut down


def test_parametrize_with_checks_gives_one_test_per_pair():
    mark = parametrize_with_checks(["ari", "kcc"], options={"kcc": {"object_order": "distribution"}})
    argnames, params = mark.mark.args
    assert argnames == "obj, check"
    ids = [p.id for p in params]
    assert ids[:len(METRIC_CHECKS)] == [f"ari-{c.__name__}" for c in METRIC_CHECKS]
    assert ids[len(METRIC_CHECKS):] == [f"kcc-{c.__name__}" for c in CONSENSUS_CHECKS]
    bound = {p.id: p.values[1] for p in params}
    # The option reaches the check that takes it, and only that one.
    assert bound["kcc-check_consensus_object_order"].keywords == {"object_order": "distribution"}
    assert bound["kcc-check_consensus_pickle"] is check_consensus_pickle
    assert all(p.values[0] in ("ari", "kcc") for p in params)


def test_parametrize_with_checks_on_objects_needs_a_kind():
    _, params = parametrize_with_checks([average_linkage], kind="consensus").mark.args
    assert [p.id for p in params] == [f"average_linkage-{c.__name__}" for c in CONSENSUS_CHECKS]
    uc = cclust.get("uc")
    assert [p.values[0] for p in parametrize_with_checks([uc]).mark.args[1]] == [uc]
    with pytest.raises(ValueError, match=r"cannot tell the kind .* pass kind="):
        parametrize_with_checks([average_linkage])
    with pytest.raises(ValueError, match="kind must be one of"):
        parametrize_with_checks([average_linkage], kind="method")
    with pytest.raises(UnknownNameError, match="kcx"):
        parametrize_with_checks(["kcx"])


@parametrize_with_checks([average_linkage, refuses_missing], kind="consensus")
def test_parametrize_with_checks_runs_the_kit(obj, check):
    check(obj)


def test_the_kit_stops_after_a_broken_contract():
    with pytest.raises(AssertionError) as excinfo:
        check_consensus(wrong_signature)
    assert "1 conformance check(s) failed" in _message(excinfo)


def test_the_kit_checks_the_random_state_default():
    def seeded_by_default(ensemble, n_clusters, *, random_state=0):
        return average_linkage(ensemble, n_clusters)

    with pytest.raises(AssertionError, match=r"check_consensus_contract.*random_state must default to None"):
        check_consensus_contract(seeded_by_default)


def test_the_kit_checks_n_clusters_none_when_declared():
    @declare(chooses_n_clusters=True)
    def claims_to_choose(ensemble, n_clusters, *, random_state=None):
        return average_linkage(ensemble, n_clusters)  # cut_tree fails on None

    with pytest.raises(AssertionError, match=r"check_consensus_n_clusters.*claims_to_choose.*None"):
        check_consensus_n_clusters(claims_to_choose)


def test_the_kit_checks_thread_counts_when_offered():
    def depends_on_threads(ensemble, n_clusters, *, random_state=None, n_threads=1):
        result = average_linkage(ensemble, n_clusters)
        labels = np.array(result.labels)
        if n_threads > 1:  # a reduction in the wrong order: one object lands elsewhere
            labels[0] = (labels[0] + 1) % n_clusters
        return ConsensusResult.from_labels(merge_smallest(labels, n_clusters) if len(set(labels)) > n_clusters
                                           else labels)

    with pytest.raises(AssertionError, match=r"n_threads=1 and n_threads=2 gave different labels"):
        check_consensus_deterministic(depends_on_threads)


def test_a_function_that_raises_is_reported_not_crashed():
    def crashes(ensemble, n_clusters, *, random_state=None):
        raise RuntimeError("boom")

    with pytest.raises(AssertionError, match=r"check_consensus_result failed for .*crashes: calling it .* "
                                             r"raised RuntimeError: boom"):
        check_consensus_result(crashes)


def test_registered_names_are_checked_by_kind():
    cclust.register("kit-average-linkage", average_linkage, kind="consensus")
    try:
        check_registered("kit-average-linkage")
        with pytest.raises(AssertionError, match=r"check_consensus_n_clusters failed for 'kit-ignores-k'"):
            cclust.register("kit-ignores-k", ignores_n_clusters, kind="consensus")
            check_registered("kit-ignores-k")
    finally:
        for name in ("kit-average-linkage", "kit-ignores-k"):
            if name in cclust.available():
                cclust.registry.unregister(name)
    with pytest.raises(UnknownNameError, match="kit-average-linkag"):
        check_registered("kit-average-linkag")


def test_the_check_lists():
    assert CHECKS["consensus"] == CONSENSUS_CHECKS
    assert CHECKS["metric"] == METRIC_CHECKS
    assert CHECKS["generator"] == GENERATOR_CHECKS
    assert set(CHECKS) == set(cclust.registry.KINDS)
    for checks in CHECKS.values():
        assert len({c.__name__ for c in checks}) == len(checks)
        assert all(c.__doc__ for c in checks)


# -- the kit's own helpers -----------------------------------------------------------------------


def test_same_partition_and_ari():
    a = np.array([0, 0, 1, 1, 2, 2])
    assert same_partition(a, [5, 5, 3, 3, 9, 9])
    assert adjusted_rand(a, [5, 5, 3, 3, 9, 9]) == 1.0
    assert not same_partition(a, [0, 0, 1, 1, 1, 1])
    assert not same_partition(a, [0, 0, 0, 1, 1, 1])
    assert adjusted_rand(a, [0, 0, 0, 1, 1, 1]) < 1
    # Hand-computed ARI: a = {01}{23}{45}, b = {012}{345}: together 2, in a 3, in b 6, 15 pairs.
    expected = (2 - 3 * 6 / 15) / ((3 + 6) / 2 - 3 * 6 / 15)
    assert adjusted_rand(a, [0, 0, 0, 1, 1, 1]) == pytest.approx(expected)


def test_blob_partitions_agree_with_the_blobs():
    X, y, labels = blob_partitions(4)
    assert X.shape == (48, 2) and labels.shape == (48, 8)
    assert sum(same_partition(labels[:, j], y) for j in range(8)) >= 3
    assert same_partition(average_linkage(Ensemble(labels), 4).labels, y)


# -- metrics -------------------------------------------------------------------------------------


def ari_metric(labels_true, labels_pred):
    """Adjusted Rand index (the kit's own)."""
    return adjusted_rand(labels_true, labels_pred)


def distance_metric(labels_a, labels_b):
    """1 - ARI: smaller means more agreement."""
    return 1.0 - adjusted_rand(labels_a, labels_b)


def ensemble_metric(labels, ensemble):
    """Average ARI of a labelling to the partitions of an Ensemble."""
    return float(np.mean([adjusted_rand(labels, ensemble.labels[:, j]) for j in range(ensemble.n_partitions)]))


def returns_an_int(labels_a, labels_b):
    """Number of pairs put together by both labellings."""
    return int(sum((np.asarray(labels_a)[:, None] == labels_a) & (np.asarray(labels_b)[:, None] == labels_b)).sum())


def fraction_equal(labels_a, labels_b):
    """Fraction of objects with the same label value: depends on the names of the clusters."""
    return float(np.mean(np.asarray(labels_a) == np.asarray(labels_b)))


def sorts_in_place(labels_a, labels_b):
    """ARI after sorting its first input in place."""
    value = adjusted_rand(labels_a, labels_b)
    labels_a.sort()
    return value


@pytest.mark.parametrize("metric", [ari_metric, distance_metric, ensemble_metric], ids=lambda f: f.__name__)
def test_correct_metrics_pass(metric):
    check_metric(metric)


@pytest.mark.parametrize("fn, check, detail", [
    (returns_an_int, check_metric_returns_float, r"not a float"),
    (fraction_equal, check_metric_self_agreement, r"must not depend on cluster names"),
    (sorts_in_place, check_metric_no_mutation, r"labels_a was modified in place"),
], ids=["returns_an_int", "fraction_equal", "sorts_in_place"])
def test_metric_defects_are_caught(fn, check, detail):
    with pytest.raises(AssertionError, match=rf"{check.__name__} failed for .*{fn.__name__}: .*{detail}"):
        check(fn)
    with pytest.raises(AssertionError, match=check.__name__):
        check_metric(fn)


# -- generators ----------------------------------------------------------------------------------


def random_assignments(X, n_clusters, *, n_partitions=10, random_state=None, n_jobs=None):
    """Nearest of n_clusters random objects, per partition (one seed per partition)."""
    seeds = np.random.SeedSequence(random_state if isinstance(random_state, int) else
                                   np.random.default_rng(random_state).integers(2**63)).spawn(n_partitions)
    X = np.asarray(X)
    columns = []
    for seed in seeds:
        centres = X[np.random.default_rng(seed).choice(X.shape[0], n_clusters, replace=False)]
        columns.append(((X[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1))
    return Ensemble(np.column_stack(columns))


def seeds_by_job(X, n_clusters, *, n_partitions=10, random_state=None, n_jobs=None):
    """Gives each worker its own stream: results change with n_jobs."""
    return random_assignments(X, n_clusters, n_partitions=n_partitions,
                              random_state=(random_state or 0) + (n_jobs or 1), n_jobs=n_jobs)


def ignores_n_partitions(X, n_clusters, *, n_partitions=10, random_state=None, n_jobs=None):
    """Always makes three partitions."""
    return random_assignments(X, n_clusters, n_partitions=3, random_state=random_state)


def test_a_correct_generator_passes():
    check_generator(random_assignments)


@pytest.mark.parametrize("fn, check, detail", [
    (seeds_by_job, check_generator_n_jobs, r"n_jobs=1 and n_jobs=2 gave different ensembles"),
    (ignores_n_partitions, check_generator_result, r"returned 3 partitions, asked for n_partitions=5"),
], ids=["seeds_by_job", "ignores_n_partitions"])
def test_generator_defects_are_caught(fn, check, detail):
    with pytest.raises(AssertionError, match=rf"{check.__name__} failed for .*{fn.__name__}: .*{detail}"):
        check(fn)


def test_an_unseeded_generator_is_caught():
    def unseeded(X, n_clusters, *, n_partitions=10, random_state=None, n_jobs=None):
        return random_assignments(X, n_clusters, n_partitions=n_partitions, random_state=None)

    with pytest.raises(AssertionError, match=r"check_generator_deterministic failed .*unseeded"):
        check_generator_deterministic(unseeded)


# -- hypothesis strategies -----------------------------------------------------------------------


@settings(max_examples=60, deadline=None, database=None)
@given(ensembles(min_n=1, max_n=25, max_partitions=5, max_k=4, missing=True, weights=True))
def test_strategy_ensembles_are_valid(ensemble):
    assert isinstance(ensemble, Ensemble)
    assert 1 <= ensemble.n_samples <= 25 and 1 <= ensemble.n_partitions <= 5
    assert (ensemble.labels >= -1).all()
    assert ((ensemble.labels >= 0).sum(axis=0) >= 1).all()       # every partition labels someone
    assert ((ensemble.labels >= 0).sum(axis=1) >= 1).all()       # every object labelled somewhere
    assert (ensemble.labels.max(axis=0) + 1 == ensemble.n_clusters).all()
    assert ensemble.weights.sum() == pytest.approx(1.0)


@settings(max_examples=30, deadline=None, database=None)
@given(label_columns(min_n=3, max_n=12, max_partitions=4, max_k=3))
def test_strategy_label_columns_build_ensembles(columns):
    ensemble = Ensemble(columns)
    assert ensemble.n_partitions == len(columns)
    assert not ensemble.has_missing


@settings(max_examples=40, deadline=None, database=None)
@given(ensembles(min_n=2, max_n=20, max_partitions=4, max_k=4, missing=True))
def test_a_correct_function_is_valid_on_any_ensemble(ensemble):
    result = average_linkage(ensemble, 2)
    assert result.n_clusters == 2 and result.labels.shape == (ensemble.n_samples,)


# -- quality on easy data ------------------------------------------------------------------------

@declare(handles_missing=True)
def _first_member(ensemble, n_clusters, *, random_state=None):
    """The first partition whatever it is (right only when it has K clusters and they are right)."""
    labels = np.unique(as_ensemble(ensemble).labels[:, 0], return_inverse=True)[1].reshape(-1)
    return ConsensusResult.from_labels(labels, objective=0.0, objective_name="none", n_iter=0, converged=True,
                                       method="first-member")


@declare(handles_missing=True)
def _equal_chunks(ensemble, n_clusters, *, random_state=None):
    """K consecutive chunks of equal size, ignoring the ensemble."""
    n = as_ensemble(ensemble).n_samples
    labels = (np.arange(n) * n_clusters) // n
    return ConsensusResult.from_labels(labels, objective=0.0, objective_name="none", n_iter=0, converged=True,
                                       method="equal-chunks")


def test_easy_blobs_sizes_and_separation():
    from cclust.testing import easy_blobs

    X, y = easy_blobs(3000, 4, ratio=3, seed=0)
    assert np.bincount(y).tolist() == [1500, 500, 500, 500]
    centres = np.array([X[y == k].mean(axis=0) for k in range(4)])
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)[np.triu_indices(4, 1)]
    assert np.allclose(gaps, 10.0, atol=0.5)
    X2, y2 = easy_blobs(3000, 4, ratio=3, seed=0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert np.bincount(easy_blobs(700, 3, ratio=5)[1]).tolist() == [500, 100, 100]


def test_recovers_easy_structure_passes_a_method_that_finds_the_blobs():
    from cclust.testing import check_consensus_recovers_easy_structure

    # With K_i = K, k-means on blobs this far apart finds them, so the first member is right.
    scores = check_consensus_recovers_easy_structure(_first_member, n_samples=300, n_clusters=3, k_range="K",
                                                     n_partitions=5)
    assert len(scores) == 4 and min(scores) >= 0.95  # stops once 4 of 5 seeds passed


def test_recovers_easy_structure_fails_equal_parts_on_unbalanced_blobs():
    from cclust.testing import check_consensus_recovers_easy_structure

    # Chunks in object order are the blobs when they are balanced (blobs are stored in order) ...
    check_consensus_recovers_easy_structure(_equal_chunks, n_samples=300, n_clusters=3, n_partitions=5)
    # ... and not when one blob holds five times as many objects.
    with pytest.raises(AssertionError, match=r"check_consensus_recovers_easy_structure failed for .*_equal_chunks.*"
                                             r"0 of the seeds run, 4 of 5 needed.*true sizes \[300, 60, 60\]"):
        check_consensus_recovers_easy_structure(_equal_chunks, n_samples=420, n_clusters=3, ratio=5, n_partitions=5)


def test_recovers_easy_structure_bad_arguments():
    from cclust.testing import check_consensus_recovers_easy_structure, easy_blobs

    with pytest.raises(ValueError, match="min_passes=6 exceeds the 5 seeds"):
        check_consensus_recovers_easy_structure(_first_member, min_passes=6)
    with pytest.raises(ValueError, match="seeds must name at least one seed"):
        check_consensus_recovers_easy_structure(_first_member, seeds=())
    with pytest.raises(ValueError, match="ratio must be an int >= 1, got 0"):
        easy_blobs(100, 3, ratio=0)
    with pytest.raises(ValueError, match="too small for 3 blobs"):
        easy_blobs(2, 3)
