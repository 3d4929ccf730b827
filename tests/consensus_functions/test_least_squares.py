import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cclust
from cclust import Ensemble
from cclust._ext import _addremadd
from cclust.consensus_functions.least_squares import (
    addremadd,
    combined_criterion,
    ensemble_criterion,
    ls_agglomerative,
    projection_sums,
)
from cclust.datasets import make_gaussian_mixture
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.graph import identical_label_rows
from cclust.testing import same_partition
from cclust.testing.strategies import profile
import reference_least_squares as ref


def block_ensemble(rng, n=30, r=8, k=3, noise=0.3):
    """Noisy copies of k blocks; with r = 8 the co-association is a multiple of 1/8 (exact)."""
    truth = np.arange(n) % k
    cols = []
    for _ in range(r):
        ki = int(rng.integers(2, 6))
        col = np.where(rng.random(n) < noise, rng.integers(0, ki, size=n), truth % ki)
        cols.append(col)
    return Ensemble(np.column_stack(cols)), truth


def signed_similarity(rng, n):
    """A symmetric similarity with negative entries (so AddRemAdd also removes), in quarters."""
    base = np.arange(n) % 3
    S = np.where(base[:, None] == base[None, :], 2, -1) + rng.integers(-3, 4, size=(n, n))
    S = np.triu(S, 1)
    S = (S + S.T) / 4.0
    return np.ascontiguousarray(S, dtype=np.float32)


# -- compiled AddRemAdd against the reference ---------------------------------------------

def test_single_run_matches_reference_and_never_decreases(rng):
    for A in (block_ensemble(rng)[0].coassociation(dtype=np.float32), signed_similarity(rng, 25)):
        A = np.ascontiguousarray(A)
        for seed in range(A.shape[0]):
            inside, f, lam, steps, trace = _addremadd.cluster(A, seed, 1e-9, 10_000, 10_000)
            r_inside, r_f, r_lam, r_trace = ref.addremadd_cluster(A, seed)
            assert np.array_equal(inside, r_inside)
            assert f == r_f and lam == pytest.approx(r_lam, rel=1e-12)
            assert steps == trace.shape[0] - 1
            np.testing.assert_allclose(trace, r_trace, rtol=1e-12, atol=1e-12)
            assert np.all(np.diff(trace) > 0)


def test_removal_steps_happen_on_signed_similarity(rng):
    A = signed_similarity(rng, 25)
    # A toggle back (a removal) shows as a run with more steps than members.
    removals = 0
    for seed in range(A.shape[0]):
        inside, _, _, steps, _ = _addremadd.cluster(A, seed, 1e-9, 10_000, 0)
        removals += (steps - (inside.sum() - 1)) // 2
    assert removals > 0


@pytest.mark.parametrize("kind", ["coassociation", "noisy60", "signed"])
def test_partition_matches_reference(rng, kind):
    # Several extractions, so reused seed runs are checked against rerunning every seed.
    if kind == "coassociation":
        A = np.ascontiguousarray(block_ensemble(rng, n=24)[0].coassociation(dtype=np.float32))
    elif kind == "noisy60":
        truth = np.arange(60) % 6
        cols = [np.where(rng.random(60) < 0.25, rng.integers(0, 7, size=60), truth) for _ in range(8)]
        A = np.ascontiguousarray(Ensemble(np.column_stack(cols)).coassociation(dtype=np.float32))
    else:
        A = signed_similarity(rng, 20)
    labels, contributions, _, seeds, n_updates = _addremadd.partition(A, 1e-9, 10_000, 2)
    r_labels, r_contributions, r_seeds = ref.addremadd_partition(A)
    assert np.array_equal(labels, r_labels)
    assert np.array_equal(seeds, r_seeds)
    np.testing.assert_array_equal(contributions, r_contributions)
    assert n_updates > 0


def test_partition_same_for_any_thread_count(rng):
    A = np.ascontiguousarray(block_ensemble(rng, n=90, noise=0.45)[0].coassociation(dtype=np.float32))
    runs = [_addremadd.partition(A, 1e-9, 10_000, t) for t in (1, 2, 3)]
    for other in runs[1:]:
        assert np.array_equal(runs[0][0], other[0])
        assert np.array_equal(runs[0][1], other[1])
        assert runs[0][4] == other[4]


# -- the grouped extraction (identical rows, exact sums) against the plain one -------------

PROFILE = profile()


def repeated_rows_ensemble(data, max_n=60):
    """Few partitions with few clusters: many identical rows and many tied sums."""
    n = data.draw(st.integers(2, max_n), label="n")
    r = data.draw(st.integers(1, 6), label="r")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, data.draw(st.integers(1, 4), label="k"), size=n)
    cols = [np.where(rng.random(n) < 0.3, rng.integers(0, 4, size=n), truth) for _ in range(r)]
    return Ensemble(np.column_stack(cols)), rng


def assert_same_partition_run(a, b):
    for x, y in zip(a[:4], b[:4]):
        assert np.array_equal(x, y)


@settings(PROFILE, max_examples=4 * PROFILE.max_examples)
@given(st.data())
def test_grouped_extraction_equals_plain_on_repeated_rows(data):
    E, rng = repeated_rows_ensemble(data)
    A = np.ascontiguousarray(E.coassociation(dtype=np.float32))
    plain = _addremadd.partition(A, 1e-9, 10_000, 1, False)
    assert_same_partition_run(_addremadd.partition(A, 1e-9, 10_000, 2), plain)
    # The G x G route of the consensus function: the same clusters, contributions and seeds.
    res = addremadd(E, n_jobs=2)
    assert same_partition(res.labels, plain[0])  # the result numbers clusters by first member
    assert np.array_equal(res.extras["contributions"], plain[1])
    assert np.array_equal(res.extras["seeds"], plain[3])
    assert res.objective == pytest.approx(ensemble_criterion(A, plain[0]), rel=1e-12)


@settings(PROFILE, max_examples=2 * PROFILE.max_examples)
@given(st.data())
def test_grouped_extraction_equals_plain_with_removals(data):
    # A signed similarity (quarters) on repeated objects, so runs also remove members and tie.
    E, rng = repeated_rows_ensemble(data, max_n=40)
    groups = identical_label_rows(E.labels)
    inverse = np.arange(E.n_samples) if groups is None else groups[1]
    S = signed_similarity(rng, int(inverse.max()) + 1)
    S[np.diag_indices_from(S)] = rng.integers(-4, 5, size=S.shape[0]) / 4.0
    A = np.ascontiguousarray(S[np.ix_(inverse, inverse)])
    plain = _addremadd.partition(A, 1e-9, 10_000, 1, False)
    assert_same_partition_run(_addremadd.partition(A, 1e-9, 10_000, 2), plain)
    assert_same_partition_run(_addremadd.partition_groups(S, inverse.astype(np.int64), 1e-9, 10_000, 2), plain)


@settings(PROFILE, max_examples=6 * PROFILE.max_examples)
@given(st.data())
def test_grouped_extraction_equals_plain_when_seeds_of_a_group_differ(data):
    # Few groups, halves: seeds of one group often reach different f through index-broken ties
    # (e.g. groups [1, 2, 0, 0, 1, 0, 0, 0, 2] of the similarities [[0, .5, 0], [.5, 0, 1],
    # [0, 1, 0]]: f = 2 from objects 2 and 3, 8/3 from 5, 6 and 7), so each must then be run.
    g = data.draw(st.integers(2, 5), label="groups")
    n = data.draw(st.integers(g, 12), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    inverse = np.concatenate([np.arange(g), rng.integers(0, g, size=n - g)])
    rng.shuffle(inverse)
    S = rng.integers(0, 3, size=(g, g)) / 2.0
    S = (np.triu(S) + np.triu(S, 1).T).astype(np.float32)
    A = np.ascontiguousarray(S[np.ix_(inverse, inverse)])
    plain = _addremadd.partition(A, 1e-9, 10_000, 1, False)
    assert_same_partition_run(_addremadd.partition(A, 1e-9, 10_000, 2), plain)
    assert_same_partition_run(_addremadd.partition_groups(S, inverse.astype(np.int64), 1e-9, 10_000, 1), plain)


def test_seeds_of_one_group_can_differ():
    # Why a group's other seeds are run when its first seed met a tie with another group.
    inverse = np.array([1, 2, 0, 0, 1, 0, 0, 0, 2])
    S = np.array([[0, 0.5, 0], [0.5, 0, 1], [0, 1, 0]], dtype=np.float32)
    A = np.ascontiguousarray(S[np.ix_(inverse, inverse)])
    f = [_addremadd.cluster(A, p, 1e-9, 100, 0)[1] for p in np.flatnonzero(inverse == 0)]
    assert f == [2.0, 2.0, 8 / 3, 8 / 3, 8 / 3]
    r_labels, r_contributions, r_seeds = ref.addremadd_partition(A)
    labels, contributions, _, seeds, _ = _addremadd.partition(A, 1e-9, 100, 2)
    assert np.array_equal(labels, r_labels) and np.array_equal(seeds, r_seeds)
    np.testing.assert_array_equal(contributions, r_contributions)


def test_grouped_extraction_matches_reference_on_ties():
    # Four copies of each of five objects, all at the same similarity: every step is a tie.
    inverse = np.repeat(np.arange(5), 4)[np.random.default_rng(1).permutation(20)]
    S = np.full((5, 5), 0.5, dtype=np.float32)
    np.fill_diagonal(S, 1.0)
    A = np.ascontiguousarray(S[np.ix_(inverse, inverse)])
    labels, contributions, _, seeds, _ = _addremadd.partition(A, 1e-9, 10_000, 2)
    r_labels, r_contributions, r_seeds = ref.addremadd_partition(A)
    assert np.array_equal(labels, r_labels) and np.array_equal(seeds, r_seeds)
    np.testing.assert_array_equal(contributions, r_contributions)


def test_inexact_sums_take_the_plain_route(rng):
    # An element of 2^-60 next to 1: sums of float32 values need more than float64's 53 bits.
    A = signed_similarity(rng, 12)
    A[0, 1] = A[1, 0] = 2.0 ** -60
    S = np.ascontiguousarray(A)
    assert _addremadd.partition_groups(S, np.arange(12, dtype=np.int64), 1e-9, 10_000, 1) is None
    labels, contributions, _, seeds, _ = _addremadd.partition(S, 1e-9, 10_000, 2)
    r_labels, r_contributions, r_seeds = ref.addremadd_partition(S)
    assert np.array_equal(labels, r_labels) and np.array_equal(seeds, r_seeds)


def test_partition_groups_rejects_bad_groups():
    S = np.eye(2, dtype=np.float32)
    with pytest.raises(ValueError, match=r"group_of\[1\] is outside 0..1"):
        _addremadd.partition_groups(S, np.array([0, 2]), 1e-9, 10, 1)
    with pytest.raises(ValueError, match="group 1 is empty"):
        _addremadd.partition_groups(S, np.array([0, 0]), 1e-9, 10, 1)


def test_all_zero_similarity_gives_singletons():
    labels, contributions, _, seeds, _ = _addremadd.partition(np.zeros((5, 5), np.float32), 1e-9, 100, 1)
    assert labels.tolist() == [0, 1, 2, 3, 4]
    assert seeds.tolist() == [0, 1, 2, 3, 4] and not contributions.any()


def test_core_rejects_bad_seed():
    with pytest.raises(ValueError, match="seed 7 is outside"):
        _addremadd.cluster(np.zeros((3, 3), np.float32), 7, 1e-9, 10, 0)


# -- the consensus function --------------------------------------------------------------

def test_addremadd_hand_example():
    labels = np.array([[0, 0, 1], [0, 0, 1], [1, 0, 0], [1, 1, 0], [2, 1, 0], [2, 1, 2]])
    res = addremadd(labels)
    assert res.labels.tolist() == [0, 0, 1, 1, 1, 1]
    # Cluster {0, 1}: a_01 = 1, so lambda = 1 and f = 2; eq. 3: (1+1+1+1)/2 + sum over {2..5}/4.
    assert res.extras["contributions"][0] == pytest.approx(2.0)
    A = Ensemble(labels).coassociation()
    assert res.objective == pytest.approx(ref.ensemble_criterion(A, res.labels), rel=1e-6)
    assert res.extras["seeds"].tolist() == [0, 2]


def test_addremadd_objective_is_eq3(rng):
    E, _ = block_ensemble(rng)
    res = addremadd(E)
    A = E.coassociation()
    assert res.objective == pytest.approx(ref.ensemble_criterion(A, res.labels), rel=1e-6)
    assert res.extras["objective_found"] == pytest.approx(res.objective)
    assert res.extras["n_clusters_found"] == res.n_clusters


def test_addremadd_recovers_blocks_and_honours_k(rng):
    E, truth = block_ensemble(rng, n=45, noise=0.1)
    res = addremadd(E)
    assert cclust.get("ari")(truth, res.labels) > 0.9
    for k in (1, 2, 3, 5, 9, 45):
        assert addremadd(E, k).n_clusters == k


def test_merge_step_is_the_best_least_squares_merge(rng):
    E, _ = block_ensemble(rng, n=45, noise=0.1)
    A = E.coassociation(dtype=np.float32)
    found = addremadd(E)
    k0 = found.n_clusters
    merged = addremadd(E, k0 - 1)
    best = max(
        ensemble_criterion(A, np.unique(np.where(found.labels == b, a, found.labels), return_inverse=True)[1])
        for a, b in itertools.combinations(range(k0), 2)
    )
    assert merged.objective == pytest.approx(best, rel=1e-9)


def test_split_step_refines_and_increases_g(rng):
    E, _ = block_ensemble(rng, n=45, noise=0.1)
    found = addremadd(E)
    split = addremadd(E, found.n_clusters + 2)
    for c in range(split.n_clusters):
        assert np.unique(found.labels[split.labels == c]).shape[0] == 1
    assert split.objective > found.objective


def test_addremadd_missing_labels_and_weights(rng):
    E, truth = block_ensemble(rng, n=30, noise=0.05)
    labels = E.labels.copy()
    labels[rng.random(labels.shape) < 0.1] = -1
    res = addremadd(Ensemble(labels, missing=-1).with_weights(np.linspace(1, 2, E.n_partitions)))
    assert cclust.get("ari")(truth, res.labels) > 0.9


def test_one_object_ensemble():
    for fn in (addremadd, ls_agglomerative):
        res = fn(np.array([[0, 1, 0]]))
        assert res.labels.tolist() == [0] and res.n_clusters == 1
        with pytest.raises(ValidationError, match=r"n_clusters must be an int in the range \[1, 1\]"):
            fn(np.array([[0, 1, 0]]), 2)


@pytest.mark.parametrize("fn", [addremadd, ls_agglomerative], ids=["addremadd", "ls-agglomerative"])
@pytest.mark.parametrize("k", [0, 31, 2.5], ids=["zero", "more-than-n", "float"])
def test_bad_n_clusters(fn, k):
    E, _ = block_ensemble(np.random.default_rng(0))
    with pytest.raises(ValidationError, match="n_clusters must be an int"):
        fn(E, k)


def addremadd_need(E):
    """AddRemAdd's bytes: the float32 co-association of the distinct objects and its copy."""
    groups = identical_label_rows(E.labels)
    if groups is not None:
        E = Ensemble(E.labels[groups[0]])
    return E.coassociation_bytes(dtype=np.float32) + 4 * E.n_samples ** 2


@pytest.mark.parametrize("distinct", [False, True], ids=["repeated-rows", "distinct-rows"])
@pytest.mark.parametrize("fn, need", [
    (addremadd, addremadd_need),
    (ls_agglomerative, lambda E: 36 * 30 * 30)], ids=["addremadd", "ls-agglomerative"])
def test_memory_budget_overflow_names_the_bytes(fn, need, distinct):
    E, _ = block_ensemble(np.random.default_rng(0))
    if distinct:  # a partition of singletons makes every row distinct: the full n x n matrix
        E = Ensemble(np.column_stack([E.labels, np.arange(30)]))
    elif fn is addremadd:
        assert identical_label_rows(E.labels) is not None  # the G x G route
    need = need(E)
    m = Ensemble(E.labels[identical_label_rows(E.labels)[0]]).n_samples if not distinct else 30
    assert need >= 8 * m * m     # at least the matrix and one working copy in float32
    with pytest.raises(MemoryBudgetError, match=rf"\({need} bytes\).*max_bytes={need}"):
        fn(E, max_bytes=need - 1)
    assert fn(E, max_bytes=need).n_clusters >= 1


def test_addremadd_bad_tol():
    with pytest.raises(ValidationError, match="tol must be"):
        addremadd(np.array([[0, 1], [0, 1]]), tol=-1.0)


# -- combined consensus ----------------------------------------------------------------

def test_projection_sums_by_definition_and_order_free(rng):
    E, _ = block_ensemble(rng, n=20)
    P = projection_sums(E)
    np.testing.assert_allclose(P, ref.projection_sums(E.labels), rtol=0, atol=1e-13)
    assert np.array_equal(P, projection_sums(Ensemble(E.labels[:, ::-1])))


@pytest.mark.parametrize("target", [0, 1, 2, 4, 12], ids=lambda t: f"target{t}")
def test_agglomeration_matches_reference(rng, target):
    E, _ = block_ensemble(rng, n=24, noise=0.4)
    G = projection_sums(E) - 1.0 / E.n_samples
    names, merges, gains = _addremadd.agglomerate(np.ascontiguousarray(G), target)
    r_names, r_gains = ref.agglomerate(G, target)
    assert np.array_equal(names, r_names)
    np.testing.assert_array_equal(gains, r_gains)
    assert merges.shape == (gains.shape[0], 2) and np.all(merges[:, 0] < merges[:, 1])


@settings(PROFILE, max_examples=4 * PROFILE.max_examples)
@given(st.data())
def test_agglomeration_matches_reference_on_ties(data):
    # Small integer gains: many equal pairs, so the lexicographic tie order is exercised.
    n = data.draw(st.integers(1, 25), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    G = rng.integers(-3, 4, size=(n, n)).astype(np.float64)
    G = np.triu(G, 1) + np.triu(G, 1).T
    target = data.draw(st.integers(0, n), label="target")
    names, _, gains = _addremadd.agglomerate(np.ascontiguousarray(G), target)
    r_names, r_gains = ref.agglomerate(G, target)
    assert np.array_equal(names, r_names)
    np.testing.assert_array_equal(gains, r_gains)


@settings(PROFILE, max_examples=PROFILE.max_examples)
@given(st.data())
def test_projection_sums_of_repeated_rows_by_definition(data):
    E, _ = repeated_rows_ensemble(data, max_n=30)
    np.testing.assert_allclose(projection_sums(E), ref.projection_sums(E.labels), rtol=0, atol=1e-13)


def test_ls_agglomerative_criterion_never_decreases(rng):
    E, _ = block_ensemble(rng, n=40, noise=0.4)
    res = ls_agglomerative(E)
    trace = res.extras["objective_trace"]
    assert np.all(np.diff(trace) > 0)
    assert trace[-1] == pytest.approx(res.objective, rel=1e-9)
    assert res.objective == pytest.approx(ref.combined_criterion(E.labels, res.labels), rel=1e-9)
    assert combined_criterion(E, np.arange(E.n_samples)) == pytest.approx(trace[0], rel=1e-9)


def test_ls_agglomerative_hand_example():
    # Objects 0, 1 always together; 3, 4 always together; 2 swaps sides. p-bar = T/N = 2/5.
    labels = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 1]])
    res = ls_agglomerative(labels)
    assert res.labels.tolist() == [0, 0, 1, 2, 2]
    # f = sum_i (p_ii - 2/5) + 2 (p_01 - 2/5) + 2 (p_34 - 2/5); p_22 = 1/3 + 1/3 and
    # p_ii = p_01 = p_34 = 1/3 + 1/2 otherwise.
    assert res.objective == pytest.approx(4 * 5 / 6 + 2 / 3 - 5 * 0.4 + 4 * (5 / 6 - 0.4))


def test_ls_agglomerative_cut_at_k(rng):
    E, _ = block_ensemble(rng, n=30, noise=0.2)
    free = ls_agglomerative(E)
    for k in (1, 2, free.n_clusters, free.n_clusters + 3, 30):
        assert ls_agglomerative(E, k).n_clusters == k


def test_ls_agglomerative_refuses_missing():
    labels = np.array([[0, 0], [0, -1], [1, 1], [1, 1]])
    with pytest.raises(ValidationError, match="missing labels"):
        ls_agglomerative(Ensemble(labels, missing=-1))


def test_ls_agglomerative_weights_scale_free(rng):
    E, _ = block_ensemble(rng, n=30, noise=0.3)
    a = ls_agglomerative(E)
    b = ls_agglomerative(E.with_weights(np.full(E.n_partitions, 5.0)))
    assert np.array_equal(a.labels, b.labels)


# -- the synthetic generator of Mirkin & Shestakov ---------------------------------------------------

def test_make_gaussian_mixture():
    X, y = make_gaussian_mixture(random_state=3)
    assert X.shape == (1000, 12) and y.shape == (1000,) and y.dtype == np.int64
    assert np.bincount(y).shape[0] == 9
    X2, y2 = make_gaussian_mixture(random_state=3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    for k in range(9):
        within = X[y == k] - X[y == k].mean(axis=0)
        assert 0.07 < within.var(axis=0).mean() < 0.35


@pytest.mark.parametrize("kwargs, match", [
    ({"variance_range": (0.3, 0.1)}, r"variance_range\[1\]"),
    ({"variance_range": 0.2}, "variance_range must be a pair"),
    ({"n_clusters": 0}, "n_clusters"),
    ({"center_variance": -1.0}, "center_variance"),
])
def test_make_gaussian_mixture_bad_input(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        make_gaussian_mixture(**kwargs)


# -- the sampled route (sample_size) -------------------------------------------------------

def test_sampled_route_keeps_the_sample_and_assigns_by_average_coassociation(rng):
    E, truth = block_ensemble(rng, n=60, noise=0.2)
    res = addremadd(E, sample_size=25, random_state=3)
    sample = res.extras["sample"]
    assert sample.shape == (25,) and np.all(np.diff(sample) > 0)
    on_sample = addremadd(E.take(objects=sample))
    assert same_partition(res.labels[sample], on_sample.labels)
    # Every other object: the sample cluster of the largest mean co-association (first on ties).
    A = E.coassociation()
    for x in np.setdiff1d(np.arange(60), sample):
        means = [A[x, sample[res.labels[sample] == c]].mean() for c in range(res.n_clusters)]
        assert res.labels[x] in np.flatnonzero(np.isclose(means, max(means), rtol=1e-12, atol=0))
    assert res.objective == pytest.approx(ref.ensemble_criterion(A, res.labels), rel=1e-9)
    assert np.array_equal(addremadd(E, sample_size=25, random_state=3).labels, res.labels)


def test_sampled_route_honours_k_and_falls_back_to_exact(rng):
    E, _ = block_ensemble(rng, n=40, noise=0.1)
    assert addremadd(E, 4, sample_size=20, random_state=0).n_clusters == 4
    exact = addremadd(E)
    assert np.array_equal(addremadd(E, sample_size=40, random_state=0).labels, exact.labels)


@pytest.mark.parametrize("value", [0, 2.5, "all"], ids=["zero", "float", "string"])
def test_bad_sample_size(value):
    E, _ = block_ensemble(np.random.default_rng(0))
    with pytest.raises(ValidationError, match="sample_size must be an int"):
        addremadd(E, sample_size=value)


def test_sampled_route_refuses_missing_labels():
    labels = np.array([[0, 0], [0, -1], [1, 1], [1, 1], [0, 1]])
    with pytest.raises(ValidationError, match="sample_size needs complete partitions"):
        addremadd(Ensemble(labels, missing=-1), sample_size=3, random_state=0)
