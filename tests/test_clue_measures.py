"""clue's partition measures, the medoid partition and the boot/bag generators (Hornik 2005).

Every measure against the slow literal references of ``tests/reference_clue_measures.py`` on
small random hard, soft and mixed inputs, hand-computed toy cases, and the bad inputs (soft
partitions whose rows do not sum to 1, negative memberships, NaN, K = 1, lengths that differ).
The comparison with clue itself needs R and lives in ``benchmarks/compare_clue_measures.py``.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cclust
import reference_clue_measures as ref
from cclust import metrics
from cclust.datasets import load_iris
from cclust.errors import ValidationError
from cclust.generators import _matched_votes, bag, bagged_memberships, boot, kmeans
from cclust.matching import match_clusters, matched_total, pad_square
from cclust.testing.strategies import labellings, profile
from cclust.validation import spawn_seed_sequences

MEASURES = {
    "euclidean-distance": ref.euclidean,
    "manhattan-distance": ref.manhattan,
    "mallows-distance": ref.mallows,
    "angle": ref.angle,
    "diag": ref.diag,
    "fowlkes-mallows": ref.fowlkes_mallows,
    "jaccard": ref.jaccard,
    "katz-powell": ref.katz_powell,
    "purity": ref.purity,
    "boorman-arabie-a": ref.boorman_arabie_a,
    "boorman-arabie-d": ref.boorman_arabie_d,
    "boorman-arabie-c": ref.boorman_arabie_c,
    "boorman-arabie-e": ref.boorman_arabie_e,
    "comembership-distance": ref.comembership,
    "gv1-distance": ref.gv1,
    "symdiff-distance": ref.symdiff,
    "prediction-strength": ref.prediction_strength,
    "vi": ref.soft_vi,
}


def _inputs(seed, n, kind):
    rng = np.random.default_rng(seed)
    ka, kb = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    if kind == "hard":
        return rng.integers(0, ka, n), rng.integers(0, kb, n) * 7 + 3
    soft_a = rng.dirichlet(np.full(ka, 0.6), n)
    soft_b = rng.dirichlet(np.full(kb, 0.6), n)
    if kind == "soft":
        return soft_a, soft_b
    return rng.integers(0, ka, n), soft_b


@pytest.mark.parametrize("kind", ["hard", "soft", "mixed"])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", sorted(MEASURES))
def test_measure_equals_literal_reference(name, seed, kind):
    n = 6 if name == "boorman-arabie-a" else 9
    a, b = _inputs(seed, n, kind)
    assert cclust.get(name)(a, b) == pytest.approx(MEASURES[name](a, b), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("kind", ["hard", "soft"])
def test_mallows_is_the_transportation_lp(p, kind):
    for seed in range(4):
        a, b = _inputs(100 + seed, 10, kind)
        assert metrics.mallows_distance(a, b, p=p) == pytest.approx(ref.mallows(a, b, p), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("kind", ["hard", "soft", "mixed"])
def test_mallows_with_cluster_masses_is_the_transportation_lp(kind):
    for seed in range(4):
        a, b = _inputs(200 + seed, 10, kind)
        k = max(np.asarray(x).shape[1] if np.ndim(x) == 2 else len(np.unique(x)) for x in (a, b))
        alpha = np.random.default_rng(seed).uniform(0.5, 2.0, k)
        beta = np.random.default_rng(seed + 50).uniform(0.5, 2.0, k)
        beta *= alpha.sum() / beta.sum()
        for p in (1.0, 2.0):
            assert metrics.mallows_distance(a, b, p=p, alpha=alpha, beta=beta) == pytest.approx(
                ref.mallows(a, b, p, alpha, beta), rel=1e-9, abs=1e-9)
    # unequal masses move more than a permutation can: larger than the unit-mass distance here
    a, b = [0, 0, 1, 1, 2], [0, 1, 1, 2, 2]
    assert metrics.mallows_distance(a, b, alpha=[3, 1, 1], beta=[1, 1, 3]) > metrics.mallows_distance(a, b)


def test_mallows_masses_are_checked():
    with pytest.raises(ValidationError, match="alpha must be 3 finite non-negative"):
        metrics.mallows_distance([0, 1, 2], [0, 1, 1], alpha=[1, 1])
    with pytest.raises(ValidationError, match="beta must be 3 finite non-negative"):
        metrics.mallows_distance([0, 1, 2], [0, 1, 1], beta=[1, -1, 1])
    with pytest.raises(ValidationError, match="alpha must be"):
        metrics.mallows_distance([0, 1, 2], [0, 1, 1], alpha=[1, np.nan, 1])
    with pytest.raises(ValidationError, match="alpha and beta must have equal totals"):
        metrics.mallows_distance([0, 1, 2], [0, 1, 1], alpha=[1, 2, 1], beta=[1, 1, 1])


def test_hand_computed_values_of_the_added_measures():
    a = [0, 0, 0, 1, 1, 1]
    b = [0, 0, 1, 1, 2, 2]
    # pairs together: a 6, b 3, both 2 -> symmetric difference 6 + 3 - 4 = 5 unordered pairs
    assert metrics.symdiff_distance(a, b) == 5.0
    assert metrics.comembership_distance(a, b) == pytest.approx(math.sqrt(10))  # ordered pairs
    # the join of a and b is one class (b's middle cluster links a's two): 2 + 3 - 2
    assert metrics.boorman_arabie_c(a, b) == 3.0
    assert metrics.boorman_arabie_c([0, 0, 1, 1], [0, 0, 1, 1]) == 0.0
    # prediction strength: a's classes keep 1/3 of their pairs in b (pairs {0,1} and {4,5} of 3)
    assert metrics.prediction_strength(a, b) == pytest.approx(1 / 3)
    assert metrics.prediction_strength(b, a) == 0.0  # b's middle class has one pair, split by a
    assert metrics.prediction_strength([0, 0, 1, 1], [0, 0, 0, 0]) == 1.0  # nested in one class
    assert metrics.prediction_strength([0, 1, 2], [0, 0, 0]) == 1.0  # no pairs: clue's Inf
    # GV1: a's clusters (sizes 3, 3) matched to b's {0,1} and {4,5}: 3 + 2 - 4 = 1 each
    assert metrics.gv1_distance(a, b) == pytest.approx(math.sqrt(2))
    # BA/E: independent halves have I = 0
    assert metrics.boorman_arabie_e([0, 0, 1, 1], [0, 1, 0, 1]) == 1.0
    assert metrics.boorman_arabie_e([0, 0, 0], [1, 1, 1]) == 0.0  # one class each: clue's 0/0
    # soft VI of a one-hot matrix is the hard VI
    assert metrics.vi(np.eye(2)[[0, 0, 1, 1]], [0, 1, 0, 1]) == pytest.approx(metrics.vi([0, 0, 1, 1], [0, 1, 0, 1]))


def test_gv1_distance_is_accurate_for_nearly_equal_soft_partitions():
    rng = np.random.default_rng(11)
    M = rng.dirichlet(np.ones(3), 200)
    near = M + rng.uniform(0, 1e-7, M.shape)
    near /= near.sum(axis=1, keepdims=True)
    assert metrics.gv1_distance(M, near[:, [1, 2, 0]]) == pytest.approx(
        math.sqrt(((M - near) ** 2).sum()), rel=1e-12)


@pytest.mark.parametrize("kind", ["hard", "soft", "mixed"])
def test_agreements_are_one_minus_scaled_distances(kind):
    a, b = _inputs(7, 12, kind)
    n = 12
    assert metrics.euclidean_agreement(a, b) == pytest.approx(1 - ref.euclidean(a, b) / math.sqrt(2 * n), abs=1e-12)
    assert metrics.manhattan_agreement(a, b) == pytest.approx(1 - ref.manhattan(a, b) / (2 * n), abs=1e-12)


def test_hand_computed_values():
    a = [0, 0, 0, 1, 1, 1]
    b = [0, 0, 1, 1, 2, 2]
    # Best matching keeps 4 objects (two per cluster of a): m = 4 of n = 6.
    assert metrics.diag(a, b) == pytest.approx(4 / 6)
    assert metrics.angle(a, b) == pytest.approx(4 / 6)
    assert metrics.boorman_arabie_a(a, b) == 2.0
    assert metrics.manhattan_distance(a, b) == 4.0
    assert metrics.euclidean_distance(a, b) == 2.0
    # Pairs together: a has 3 + 3 = 6, b has 3, both 2; of 15.
    assert metrics.fowlkes_mallows(a, b) == pytest.approx(2 / math.sqrt(6 * 3))
    assert metrics.jaccard(a, b) == pytest.approx(2 / (6 + 3 - 2))
    assert metrics.boorman_arabie_d(a, b) == pytest.approx((6 + 3 - 4) / 15)
    assert metrics.purity(a, b) == pytest.approx(4 / 6)
    assert metrics.purity(b, a) == pytest.approx(5 / 6)  # b's middle cluster straddles a's two
    # A soft toy case: memberships (1, 0), (0.5, 0.5) against (0, 1), (0, 1).
    u = [[1.0, 0.0], [0.5, 0.5]]
    v = [[0.0, 1.0], [0.0, 1.0]]
    assert metrics.manhattan_distance(u, v) == pytest.approx(1.0)  # swap columns: |0| + |0| + 2 * 0.5
    assert metrics.euclidean_distance(u, v) == pytest.approx(math.sqrt(0.5))
    assert metrics.diag(u, v) == pytest.approx(1.5 / 2)
    assert metrics.angle(u, v) == pytest.approx(1.5 / math.sqrt(1.5 * 2))


@pytest.mark.parametrize("name", sorted(MEASURES) + ["euclidean-agreement", "manhattan-agreement"])
def test_identical_and_renamed_partitions(name):
    a = np.array([0, 0, 1, 1, 2, 2, 2])
    renamed = np.array([5, 5, 1, 1, 9, 9, 9])
    best = 0.0 if name in metrics.DISSIMILARITIES else 1.0
    assert cclust.get(name)(a, renamed) == pytest.approx(best, abs=1e-12)
    one_hot = np.eye(3)[[2, 2, 0, 0, 1, 1, 1]]
    assert cclust.get(name)(a, one_hot) == pytest.approx(best, abs=1e-12)


def test_degenerate_pair_counts():
    alone = np.arange(5)
    together = np.zeros(5, dtype=int)
    assert metrics.fowlkes_mallows(alone, alone) == 1.0
    assert metrics.fowlkes_mallows(alone, [0, 0, 1, 2, 3]) == 0.0
    assert metrics.jaccard(alone, alone) == 1.0
    assert metrics.katz_powell(together, together) == 1.0
    assert metrics.katz_powell(together, [0, 0, 1, 1, 1]) == 0.0
    assert metrics.boorman_arabie_d([3], [4]) == 0.0


def test_soft_measures_use_the_nearest_hard_partition_for_pair_counts():
    rng = np.random.default_rng(3)
    M = rng.dirichlet(np.ones(3), 20)
    labels = rng.integers(0, 2, 20)
    for name in ("fowlkes-mallows", "jaccard", "katz-powell", "purity", "boorman-arabie-a", "boorman-arabie-d"):
        assert cclust.get(name)(M, labels) == cclust.get(name)(M.argmax(axis=1), labels), name


def test_consensus_score_and_table_functions_agree_with_label_functions():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 40)
    columns = np.column_stack([rng.integers(0, k, 40) for k in (2, 3, 4)])
    ensemble = cclust.Ensemble(columns)
    for name in ("euclidean-distance", "manhattan-agreement", "jaccard", "katz-powell", "purity", "diag",
                 "boorman-arabie-a"):
        expected = np.mean([cclust.get(name)(labels, columns[:, j]) for j in range(3)])
        assert metrics.consensus_score(labels, ensemble, metric=name) == pytest.approx(expected, abs=1e-12), name



def test_consensus_score_of_the_added_measures_with_missing_labels():
    # a consensus block of a partition with missing labels has empty rows: each measure must be
    # that of the objects the partition labels
    rng = np.random.default_rng(8)
    labels = rng.integers(0, 3, 40)
    columns = rng.integers(0, 4, (40, 4))
    columns[rng.random((40, 4)) < 0.15] = -1
    ensemble = cclust.Ensemble(columns)
    for name in ("comembership-distance", "gv1-distance", "symdiff-distance", "boorman-arabie-c",
                 "boorman-arabie-e", "prediction-strength"):
        expected = np.mean([cclust.get(name)(labels[columns[:, j] >= 0], columns[columns[:, j] >= 0, j])
                            for j in range(4)])
        assert metrics.consensus_score(labels, ensemble, metric=name) == pytest.approx(expected, abs=1e-12), name


# -- matching ------------------------------------------------------------------------------------

def test_matching_helpers():
    assert pad_square([[1, 2, 3]]).tolist() == [[1, 2, 3], [0, 0, 0], [0, 0, 0]]
    assert match_clusters([[0, 5], [4, 1]]).tolist() == [1, 0]
    assert match_clusters([[0, 5], [4, 1]], maximize=False).tolist() == [0, 1]
    total, permutation = matched_total(np.array([[3, 0, 1], [0, 0, 4]]))
    assert total == 7 and sorted(permutation.tolist()) == [0, 1, 2]
    with pytest.raises(ValidationError, match="table"):
        match_clusters([[np.nan, 1.0], [0.0, 1.0]])
    with pytest.raises(ValidationError, match="table"):
        match_clusters([1.0, 2.0])


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(MEASURES))
@pytest.mark.parametrize("bad, words", [
    (np.array([[0.6, 0.6], [0.5, 0.5], [1.0, 0.0]]), "partition_a must have rows summing to 1"),
    (np.array([[1.2, -0.2], [0.5, 0.5], [1.0, 0.0]]), "partition_a has a negative membership"),
    (np.array([[np.nan, 0.5], [0.5, 0.5], [1.0, 0.0]]), "partition_a contains NaN"),
    (np.ones((3, 1)), "partition_a is a membership matrix with 1 column"),
    (np.array([["a", "b"], ["a", "b"], ["a", "b"]]), "partition_a is read as a membership matrix"),
    (np.zeros((0, 2)), "partition_a must not be empty"),
    (np.ones((3, 2, 1)), "partition_a must be 1-D"),
], ids=["row-sums", "negative", "nan", "k-one", "strings", "empty", "3-d"])
def test_bad_soft_partitions_are_refused(name, bad, words):
    if name == "vi":  # vi's arguments are labels_true and labels_pred
        words = words.replace("partition_a", "labels_true")
    with pytest.raises(ValidationError, match=words):
        cclust.get(name)(bad, [0, 1, 1])


def test_lengths_and_p_are_checked():
    with pytest.raises(ValidationError, match="partition_a and partition_b"):
        metrics.euclidean_distance(np.eye(2)[[0, 1, 1]], [0, 1])
    with pytest.raises(ValidationError, match="p must be"):
        metrics.mallows_distance([0, 1], [1, 0], p=0.5)
    with pytest.raises(ValidationError, match="memberships must be a 2-D membership matrix"):
        metrics.membership_matrix([0.5, 0.5], "memberships")


def test_inputs_are_not_modified():
    rng = np.random.default_rng(0)
    M = rng.dirichlet(np.ones(3), 30)
    M.setflags(write=False)
    labels = rng.integers(0, 4, 30)
    before = labels.copy()
    for name in MEASURES:
        cclust.get(name)(M, labels)
    assert np.array_equal(labels, before)


# -- medoid --------------------------------------------------------------------------------------

@pytest.mark.parametrize("metric, distance", [
    ("euclidean-distance", ref.euclidean), ("manhattan-distance", ref.manhattan),
    ("boorman-arabie-d", ref.boorman_arabie_d),
])
@pytest.mark.parametrize("seed", range(5))
def test_medoid_equals_literal_reference(metric, distance, seed):
    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, int(rng.integers(2, 4)), 9) for _ in range(6)]
    result = cclust.get("medoid")(np.column_stack(columns), None, metric=metric)
    sums = [sum(distance(c, d) for d in columns) for c in columns]
    assert sums[result.extras["member"]] == pytest.approx(min(sums), abs=1e-12)
    assert result.objective == pytest.approx(min(sums) / len(columns), abs=1e-12)
    assert cclust.get("ari")(result.labels, columns[result.extras["member"]]) == 1.0


def test_medoid_weights_candidates_and_bad_metric():
    columns = np.array([[0, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 1], [1, 1, 1, 1], [1, 1, 2, 2]])
    sums = [sum(ref.euclidean(columns[:, i], columns[:, j]) for j in range(4)) for i in range(4)]
    unweighted = cclust.get("medoid")(columns, None)
    assert unweighted.extras["member"] == int(np.argmin(sums))
    weighted = cclust.get("medoid")(cclust.Ensemble(columns, weights=[0.0, 0.0, 1.0, 0.0]), None)
    assert weighted.extras["member"] == 2  # the only weighted member is at distance 0 from itself
    three = [j for j in range(4) if len(set(columns[:, j])) == 3]
    only_three = cclust.get("medoid")(columns, 3)
    assert only_three.n_clusters == 3
    assert only_three.extras["member"] == min(three, key=lambda j: (sums[j], j))
    with pytest.raises(ValidationError, match="metric must be a dissimilarity"):
        cclust.get("medoid")(columns, None, metric="jaccard")
    with pytest.raises(ValidationError, match="missing labels"):
        cclust.get("medoid")(np.array([[0, 0], [1, -1], [1, 1]]), None)


# -- boot and bag --------------------------------------------------------------------------------

def test_boot_without_resampling_is_restarted_kmeans():
    X, _ = load_iris()
    restarted = boot(X, 3, n_partitions=6, random_state=4)
    assert np.array_equal(restarted.labels, kmeans(X, 3, n_partitions=6, k_range=(3, 3), init="random",
                                                   max_iter=100, random_state=4).labels)


def test_boot_with_resampling_labels_every_object_and_differs():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 40)
    X = rng.normal(size=(120, 2)) + 20.0 * np.eye(3)[y][:, :2] + np.array([[0.0, 0.0]])
    X[y == 2] += [20.0, 20.0]
    resampled = boot(X, 3, n_partitions=8, resample=True, random_state=4)
    assert resampled.labels.shape == (120, 8) and not resampled.has_missing
    assert not np.array_equal(resampled.labels, boot(X, 3, n_partitions=8, random_state=4).labels)
    # About a third of the objects are out of each bootstrap sample; the nearest centre labels them.
    assert max(cclust.get("ari")(y, resampled.labels[:, j]) for j in range(8)) == 1.0
    with pytest.raises(ValidationError, match="resample"):
        boot(X, 3, n_partitions=2, resample="yes")


def test_matched_votes_equal_literal_reference():
    rng = np.random.default_rng(11)
    reference = rng.integers(0, 3, 15)
    partitions = []
    for _ in range(5):  # noisy renamed copies: the best matching is unique
        noisy = reference.copy()
        flip = rng.choice(15, size=3, replace=False)
        noisy[flip] = rng.integers(0, 3, 3)
        partitions.append(rng.permutation(3)[noisy] * 10 + 1)
    votes = _matched_votes(reference, np.column_stack(partitions), 3)
    assert np.array_equal(votes, ref.matched_votes(reference.tolist(), [p.tolist() for p in partitions], 3))
    # Random partitions (ties possible): the matched agreement is still optimal.
    partitions = [rng.integers(0, 3, 15) for _ in range(4)]
    votes = _matched_votes(reference, np.column_stack(partitions), 3)
    literal = ref.matched_votes(reference.tolist(), [p.tolist() for p in partitions], 3)
    assert votes[np.arange(15), reference].sum() == literal[np.arange(15), reference].sum()
    assert np.array_equal(votes.sum(axis=1), np.full(15, 4))


def test_bag_is_the_plurality_of_bagged_memberships():
    X, y = load_iris()
    M = bagged_memberships(X, 3, n_bootstrap=6, random_state=np.random.default_rng(spawn_seed_sequences(2, 1)[0]))
    assert M.shape == (150, 3) and np.allclose(M.sum(axis=1), 1.0)
    assert np.allclose(M * 6, np.round(M * 6))
    bagged = bag(X, 3, n_partitions=1, n_bootstrap=6, random_state=2)
    assert cclust.get("ari")(bagged.labels[:, 0], M.argmax(axis=1)) == 1.0
    assert cclust.get("ari")(y, bagged.labels[:, 0]) > 0.6


def test_bag_bad_input():
    X, _ = load_iris()
    with pytest.raises(ValidationError, match="n_bootstrap"):
        bag(X, 3, n_partitions=2, n_bootstrap=0)
    with pytest.raises(ValidationError, match="n_bootstrap"):
        bagged_memberships(X, 3, n_bootstrap=2.5)
    with pytest.raises(ValidationError, match="n_clusters"):
        bagged_memberships(X, 1)


# -- properties on random labellings ---------------------------------------------------------------

SYMMETRIC = ("euclidean-distance", "manhattan-distance", "mallows-distance", "angle", "diag", "fowlkes-mallows",
             "jaccard", "katz-powell", "boorman-arabie-a", "boorman-arabie-d")


@st.composite
def _pairs(draw, max_n=25, max_k=6):
    n = draw(st.integers(1, max_n))
    return draw(labellings(n, max_k=max_k)), draw(labellings(n, max_k=max_k))


@settings(profile(), max_examples=4 * profile().max_examples)
@given(_pairs())
def test_symmetry_bounds_and_identities(pair):
    a, b = pair
    n = a.shape[0]
    value = {name: cclust.get(name)(a, b) for name in SYMMETRIC + ("purity",)}
    for name in SYMMETRIC:
        assert cclust.get(name)(b, a) == pytest.approx(value[name], abs=1e-12), name
    assert 0.0 <= value["euclidean-distance"] <= math.sqrt(2 * n)
    assert 0.0 <= value["manhattan-distance"] <= 2 * n
    assert value["mallows-distance"] == value["manhattan-distance"]
    for name in ("angle", "diag", "fowlkes-mallows", "jaccard", "purity"):
        assert 0.0 <= value[name] <= 1.0, name
    assert -1.0 <= value["katz-powell"] <= 1.0
    # Hard partitions: every matched measure is a function of m, the most objects on matched clusters.
    m = value["diag"] * n
    assert value["boorman-arabie-a"] == pytest.approx(n - m, abs=1e-9)
    assert value["manhattan-distance"] == pytest.approx(2 * (n - m), abs=1e-9)
    assert value["euclidean-distance"] == pytest.approx(math.sqrt(2 * (n - m)), abs=1e-9)
    assert value["angle"] == value["diag"]
    assert value["boorman-arabie-d"] == pytest.approx(1.0 - cclust.get("rand")(a, b), abs=1e-12)
    assert value["purity"] == pytest.approx(cclust.get("accuracy")(b, a), abs=1e-12)
    assert value["diag"] <= min(value["purity"], metrics.purity(b, a)) + 1e-12


@pytest.mark.parametrize("kind", ["hard", "soft", "mixed"])
@pytest.mark.parametrize("seed", range(4))
def test_cssd_equals_literal_reference(kind, seed):
    a, b = _inputs(300 + seed, 10, kind)
    ka = np.asarray(a).shape[1] if np.ndim(a) == 2 else len(np.unique(a))
    kb = np.asarray(b).shape[1] if np.ndim(b) == 2 else len(np.unique(b))
    rng = np.random.default_rng(seed)
    L = rng.uniform(0.1, 3.0, (ka, kb))
    alpha = rng.uniform(0.5, 2.0, ka)
    beta = rng.uniform(0.5, 2.0, kb)
    beta *= alpha.sum() / beta.sum()
    assert metrics.cssd(a, b, L=L, alpha=alpha, beta=beta) == pytest.approx(ref.cssd(a, b, L, alpha, beta),
                                                                           rel=1e-9, abs=1e-9)
    # prototypes give L as their Euclidean distances
    pa, pb = rng.normal(size=(ka, 2)), rng.normal(size=(kb, 2))
    distances = np.sqrt(((pa[:, None] - pb[None]) ** 2).sum(axis=2))
    assert metrics.cssd(a, b, prototypes_a=pa, prototypes_b=pb, alpha=alpha, beta=beta) == pytest.approx(
        ref.cssd(a, b, distances, alpha, beta), rel=1e-9, abs=1e-9)


def test_cssd_bad_input():
    with pytest.raises(ValidationError, match="cssd needs the prototype distances L"):
        metrics.cssd([0, 0, 1], [0, 1, 1])
    with pytest.raises(ValidationError, match=r"L must be a finite \(2, 2\) matrix"):
        metrics.cssd([0, 0, 1], [0, 1, 1], L=np.ones((2, 3)))
    with pytest.raises(ValidationError, match="prototypes_a and prototypes_b must have 2 and 2 rows"):
        metrics.cssd([0, 0, 1], [0, 1, 1], prototypes_a=np.ones((3, 2)), prototypes_b=np.ones((2, 2)))
    with pytest.raises(ValidationError, match="alpha and beta must have equal totals"):
        metrics.cssd([0, 0, 1], [0, 1, 2], L=np.ones((2, 3)))
    with pytest.raises(ValidationError, match="alpha must be 2 finite non-negative cluster masses"):
        metrics.cssd([0, 0, 1], [0, 1, 1], L=np.ones((2, 2)), alpha=[1, -1])
