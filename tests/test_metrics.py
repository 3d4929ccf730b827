"""Tests of cclust.metrics: agreement with scikit-learn, exact references, properties, bad input."""
import doctest
import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import cclust.metrics as cm
from cclust.metrics import _criteria, _information, _tables
from cclust import Ensemble
from cclust._ext import _contingency
from cclust.errors import ValidationError
from cclust.testing.strategies import profile

EPS = np.finfo(np.float64).eps
AVERAGES = ["arithmetic", "geometric", "max", "min"]

# -- random labellings ---------------------------------------------------------------------------

N_VALUES = [1, 2, 5, 60, 1000, 5000]
K_PAIRS = [(1, 1), (1, 4), (3, 3), (10, 200), (200, 200)]
KINDS = ["int", "negative", "gaps", "string", "singletons"]


@functools.lru_cache(maxsize=None)
def labellings(n, ka, kb, kind, seed):
    """Two labellings of n objects, with ka and kb drawn clusters, in the given label style."""
    rng = np.random.default_rng([seed, n, ka, kb, KINDS.index(kind)])
    a, b = rng.integers(0, ka, n), rng.integers(0, kb, n)
    if kind == "negative":
        a, b = a - ka // 2 - 1, -3 * b
    elif kind == "gaps":
        a, b = a * 7 + 3, b**2 + 100
    elif kind == "string":
        a, b = np.array([f"c{v}" for v in a]), np.array([f"k{v:03d}" for v in b])
    elif kind == "singletons":
        b = rng.permutation(n)
    return a, b


def _sklearn_vi(a, b):
    return skm.mutual_info_score(a, a) + skm.mutual_info_score(b, b) - 2 * skm.mutual_info_score(a, b)


EXACT_METRICS = {
    "ari": (cm.ari, skm.adjusted_rand_score),
    "rand": (cm.rand, skm.rand_score),
    **{f"nmi-{av}": (functools.partial(cm.nmi, average=av),
                     functools.partial(skm.normalized_mutual_info_score, average_method=av))
       for av in AVERAGES},
    "vi": (cm.vi, _sklearn_vi),
}

# One test per (metric, label style) runs every (K pair, n) of the grid and lists each case
# that differs, so a failure still names its case. One random draw per case: the cases already
# differ in shape, and scikit-learn's per-call overhead, not the arithmetic, is what a larger
# grid costs.
GRID = [(ka, kb, n) for ka, kb in K_PAIRS for n in N_VALUES]
GRID_SEED = 0
kind_grid = pytest.mark.parametrize("kind", KINDS)


def _differences(kind, compare):
    """The cases of GRID on which ``compare(a, b)`` returns a complaint, one line each."""
    lines = []
    for ka, kb, n in GRID:
        complaint = compare(*labellings(n, ka, kb, kind, GRID_SEED))
        if complaint:
            lines.append(f"K=({ka}, {kb}), n={n}: {complaint}")
    return "\n".join(lines)


@kind_grid
@pytest.mark.parametrize("metric", list(EXACT_METRICS))
def test_matches_sklearn(metric, kind):
    ours, theirs = EXACT_METRICS[metric]

    def compare(a, b):
        expected, got = theirs(a, b), ours(a, b)
        if not isinstance(got, float):
            return f"returned a {type(got).__name__}, not a float"
        if not abs(got - expected) <= 1e-12:
            return f"cclust {got!r}, scikit-learn {expected!r}"
        return None

    differences = _differences(kind, compare)
    assert not differences, f"{metric} on {kind} labels differs from scikit-learn:\n{differences}"


def sklearn_ami_is_noise(a, b, average):
    """The 0/0 case: one labelling (only one) puts every object alone and average="min".

    There MI = E[MI] = min(H, H') exactly, scikit-learn returns a ratio of rounding errors and
    cclust returns 0.0 (documented in ami).
    """
    rows, cols = _tables._marginals(cm.contingency_table(a, b))
    n, ka, kb = int(rows.sum()), np.count_nonzero(rows), np.count_nonzero(cols)
    return average == "min" and min(ka, kb) > 1 and (ka == n) != (kb == n)


@kind_grid
@pytest.mark.parametrize("average", AVERAGES)
def test_ami_matches_sklearn(average, kind):
    def compare(a, b):
        got = cm.ami(a, b, average=average)
        if sklearn_ami_is_noise(a, b, average):
            return None if got == 0.0 else f"cclust {got!r} where 0.0 is documented (the 0/0 case)"
        expected = skm.adjusted_mutual_info_score(a, b, average_method=average)
        rows, cols = _tables._marginals(cm.contingency_table(a, b))
        n = a.shape[0]
        # scikit-learn's E[MI] sums gammaln terms of size n log n that cancel, so its own rounding
        # error is about eps * n * log(n) * E[MI] / (normaliser - E[MI]) (measured worst ratio 3.4 on
        # 1,400 random cases); ours is checked against an exact reference in test_emi_exact.
        emi = _information._expected_mutual_info(rows, cols, n) if n > 1 else 0.0
        normaliser = _information._generalized_average(_information._entropy(rows), _information._entropy(cols), average)
        drift = 16 * EPS * n * math.log(max(n, 2)) * emi / max(abs(normaliser - emi), EPS)
        if not abs(got - expected) <= 1e-12 + drift:
            return f"cclust {got!r}, scikit-learn {expected!r} (allowed drift {drift:.3g})"
        return None

    differences = _differences(kind, compare)
    assert not differences, f"ami (average={average!r}) on {kind} labels differs from scikit-learn:\n{differences}"


def test_sklearn_comparison_is_tight_where_sklearn_is_exact():
    """Small n: scikit-learn's AMI is itself accurate, so the tolerance is plain 1e-12."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(3, 80))
        a, b = rng.integers(0, 4, n), rng.integers(0, 5, n)
        for average in AVERAGES:
            if sklearn_ami_is_noise(a, b, average):
                continue
            assert cm.ami(a, b, average=average) == pytest.approx(
                skm.adjusted_mutual_info_score(a, b, average_method=average), rel=0, abs=1e-12)


# -- exact references --------------------------------------------------------------------------

def emi_reference(a, b, n):
    """E[MI] by the textbook triple sum with exact hypergeometric probabilities (Fractions)."""
    total = []
    for u in a:
        for v in b:
            denominator = math.comb(n, v)
            for k in range(max(1, u + v - n), min(u, v) + 1):
                p = Fraction(math.comb(u, k) * math.comb(n - u, v - k), denominator)
                total.append(float(p) * k / n * math.log(Fraction(n * k, u * v)))
    return math.fsum(total)


@pytest.mark.parametrize("n,ka,kb", [(2, 2, 2), (7, 3, 2), (40, 4, 6), (300, 10, 3), (600, 20, 20)],
                         ids=lambda v: str(v))
def test_emi_exact(n, ka, kb, seed):
    rng = np.random.default_rng([seed, n])
    a = np.bincount(rng.integers(0, ka, n))
    b = np.bincount(rng.integers(0, kb, n))
    a, b = a[a > 0], b[b > 0]
    expected = emi_reference([int(x) for x in a], [int(x) for x in b], n)
    assert _information._expected_mutual_info(a, b, n) == pytest.approx(expected, rel=1e-13, abs=1e-15)


def test_emi_large_n_is_accurate():
    """The summation window drops only negligible mass: E[MI] ~ (Ka-1)(Kb-1) / (2n)."""
    n = 10**7
    a = np.full(10, n // 10)
    b = np.full(1000, n // 1000)
    emi = _information._expected_mutual_info(a, b, n)
    assert emi == pytest.approx(9 * 999 / (2 * n), rel=1e-3)


def test_ami_against_exact_reference():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(10, 150))
        a, b = rng.integers(0, 4, n), rng.integers(0, 6, n)
        ra, rb = np.bincount(a), np.bincount(b)
        ra, rb = ra[ra > 0], rb[rb > 0]
        emi = emi_reference([int(x) for x in ra], [int(x) for x in rb], n)
        mi = skm.mutual_info_score(a, b)
        h = (_information._entropy(ra) + _information._entropy(rb)) / 2
        assert cm.ami(a, b) == pytest.approx((mi - emi) / (h - emi), rel=0, abs=1e-12)


# -- edge cases: exactly scikit-learn's values --------------------------------------------------

EDGE_CASES = {
    "one-object": ([4], ["x"]),
    "both-one-cluster": ([0, 0, 0], [5, 5, 5]),
    "both-all-alone": ([0, 1, 2, 3], [3, 1, 2, 0]),
    "one-cluster-vs-all-alone": ([0, 0, 0, 0], [0, 1, 2, 3]),
    "one-cluster-vs-two": ([1, 1, 1, 1], [0, 0, 1, 1]),
    "two-objects-split": ([0, 1], [0, 1]),
    "two-objects-one-split": ([0, 0], [0, 1]),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
@pytest.mark.parametrize("metric", ["ari", "rand"] + [f"nmi-{av}" for av in AVERAGES])
def test_edge_cases_equal_sklearn_exactly(metric, case):
    a, b = EDGE_CASES[case]
    ours, theirs = EXACT_METRICS[metric]
    assert ours(a, b) == theirs(a, b)
    assert ours(b, a) == theirs(b, a)


@pytest.mark.parametrize("case", list(EDGE_CASES))
@pytest.mark.parametrize("average", AVERAGES)
def test_ami_edge_cases_equal_sklearn(average, case):
    a, b = EDGE_CASES[case]
    if sklearn_ami_is_noise(a, b, average):
        pytest.skip("0/0 case: scikit-learn returns rounding noise (see test_edge_values)")
    assert cm.ami(a, b, average=average) == pytest.approx(
        skm.adjusted_mutual_info_score(a, b, average_method=average), rel=0, abs=1e-12)


def test_edge_values():
    assert cm.vi([3], [1]) == 0.0
    assert cm.van_dongen([3], [1]) == 0.0
    assert cm.accuracy([3], [1]) == 1.0
    alone = np.arange(50)
    assert cm.ami(alone, alone[::-1]) == 1.0
    assert cm.ami(alone, alone % 3) == 0.0
    assert cm.ami(alone, alone % 3, average="min") == 0.0  # 0/0, documented


# -- hypothesis properties ---------------------------------------------------------------------

@st.composite
def labelling_pairs(draw, max_n=40, max_k=8):
    n = draw(st.integers(1, max_n))
    a = draw(st.lists(st.integers(0, max_k - 1), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(-3, max_k), min_size=n, max_size=n))
    return np.array(a), np.array(b)


SYMMETRIC = {"ari": cm.ari, "rand": cm.rand, "vi": cm.vi, "van_dongen": cm.van_dongen,
             **{f"nmi-{av}": functools.partial(cm.nmi, average=av) for av in AVERAGES},
             "ami": cm.ami}
# The project's hypothesis profile (derandomized in CI; CCLUST_HYPOTHESIS_PROFILE=cclust-dev
# draws fresh examples, ten times as many): 40 examples per property in CI.
property_settings = settings(profile(), max_examples=2 * profile().max_examples)


@pytest.mark.parametrize("metric", list(SYMMETRIC))
@property_settings
@given(pair=labelling_pairs())
def test_symmetry(metric, pair):
    a, b = pair
    f = SYMMETRIC[metric]
    assert f(a, b) == pytest.approx(f(b, a), rel=0, abs=1e-12)


@property_settings
@given(pair=labelling_pairs())
def test_bounds(pair):
    a, b = pair
    n = a.shape[0]
    assert -0.5 - 1e-12 <= cm.ari(a, b) <= 1.0
    assert 0.0 <= cm.rand(a, b) <= 1.0
    for average in AVERAGES:
        assert 0.0 <= cm.nmi(a, b, average=average) <= 1.0 + 1e-12
        assert cm.ami(a, b, average=average) <= 1.0 + 1e-12
    assert 0.0 <= cm.vi(a, b) <= math.log(n) + 1e-12
    assert 0.0 <= cm.van_dongen(a, b) < 1.0
    assert np.bincount(np.unique(a, return_inverse=True)[1]).max() / n - 1e-12 <= cm.accuracy(a, b) <= 1.0


@property_settings
@given(pair=labelling_pairs())
def test_identity(pair):
    a, _ = pair
    assert cm.ari(a, a) == 1.0
    assert cm.rand(a, a) == 1.0
    assert cm.vi(a, a) == 0.0
    assert cm.van_dongen(a, a) == 0.0
    assert cm.accuracy(a, a) == 1.0
    for average in AVERAGES:
        assert cm.nmi(a, a, average=average) == pytest.approx(1.0, abs=1e-12)
        assert cm.ami(a, a, average=average) == pytest.approx(1.0, abs=1e-12)


ALL_PAIR_METRICS = {**SYMMETRIC, "accuracy": cm.accuracy}


@pytest.mark.parametrize("metric", list(ALL_PAIR_METRICS))
@property_settings
@given(pair=labelling_pairs(), data=st.data())
def test_invariant_to_renaming_labels(metric, pair, data):
    a, b = pair
    values = np.unique(b)
    names = data.draw(st.permutations([f"name{i}" for i in range(values.size)]))
    renamed = np.array(names)[np.searchsorted(values, b)]
    f = ALL_PAIR_METRICS[metric]
    assert f(a, renamed) == pytest.approx(f(a, b), rel=0, abs=1e-12)
    assert f(a * 5 - 11, b) == pytest.approx(f(a, b), rel=0, abs=1e-12)


# -- hand-computed toy values ------------------------------------------------------------------

def test_van_dongen_toy():
    # table [[2, 1], [0, 1]]: rows' maxima 2 + 1, columns' maxima 2 + 1; (8 - 3 - 3) / 8
    assert cm.van_dongen([0, 0, 0, 1], [0, 0, 1, 1]) == 0.25
    assert cm.van_dongen([0, 0, 0, 1], [0, 0, 1, 1], normalize=False) == 2.0
    # table [[2, 0, 1], [0, 3, 0]] (n = 6): rows 2 + 3, columns 2 + 3 + 1; (12 - 5 - 6) / 12
    assert cm.van_dongen([0, 0, 0, 1, 1, 1], [0, 0, 2, 1, 1, 1]) == pytest.approx(1 / 12, abs=1e-15)
    # two orthogonal splits of 4 objects: every cell 1; (8 - 2 - 2) / 8
    assert cm.van_dongen([0, 0, 1, 1], [0, 1, 0, 1]) == 0.5


def test_accuracy_toy():
    # cluster 0 = {a, a} votes a (2), cluster 1 = {a, b, b, b} votes b (3): 5 / 6
    assert cm.accuracy(["a", "a", "a", "b", "b", "b"], [0, 0, 1, 1, 1, 1]) == 5 / 6
    # not symmetric: classes {0: 4 objects, 1: 2} against one cluster of 6 -> 4 / 6
    assert cm.accuracy([0, 0, 0, 0, 1, 1], [7] * 6) == 4 / 6
    assert cm.accuracy([7] * 6, [0, 0, 0, 0, 1, 1]) == 1.0
    assert cm.accuracy([0, 1, 2, 0, 1, 2], [0, 1, 2, 3, 4, 5]) == 1.0


def test_vi_toy():
    assert cm.vi([0, 0, 1, 1], [0, 0, 0, 0]) == pytest.approx(math.log(2), abs=1e-15)
    assert cm.vi([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(2 * math.log(2), abs=1e-15)
    # table [[2, 1], [0, 1]]: 1/2 log(3/2 * 2/2) + 1/4 log(3/1 * 2/1) + 1/4 log(1/1 * 2/1)
    expected = 0.5 * math.log(1.5) + 0.25 * math.log(6) + 0.25 * math.log(2)
    assert cm.vi([0, 0, 0, 1], [0, 0, 1, 1]) == pytest.approx(expected, abs=1e-15)


TOY_X = [[0.0, 0.0], [3.0, 4.0], [10.0, 0.0], [10.0, 1.0], [10.0, 3.0]]


def test_compactness_toy():
    # cluster 0: one pair at distance 5 -> mean 5, weight 2; cluster 1: pairs 1, 3, 2 -> mean 2,
    # weight 3; (2 * 5 + 3 * 2) / 5
    assert cm.compactness(TOY_X, [0, 0, 1, 1, 1]) == pytest.approx(3.2, abs=1e-15)
    # squared distances: 25 (weight 2) and (1 + 9 + 4) / 3 (weight 3): (50 + 14) / 5
    assert cm.compactness(TOY_X, [0, 0, 1, 1, 1], metric="sqeuclidean") == pytest.approx(12.8, abs=1e-13)
    # a singleton has no pairs and contributes 0, but still counts in n
    X = TOY_X + [[100.0, 100.0]]
    assert cm.compactness(X, [0, 0, 1, 1, 1, 2]) == pytest.approx(16 / 6, abs=1e-15)
    assert cm.compactness(TOY_X, np.arange(5)) == 0.0


def compactness_reference(X, labels, squared=False):
    X, labels = np.asarray(X, dtype=float), np.asarray(labels)
    total = 0.0
    for c in np.unique(labels):
        P = X[labels == c]
        m = P.shape[0]
        if m < 2:
            continue
        D = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
        if squared:
            D = D**2
        total += m * D[np.triu_indices(m, 1)].sum() / (m * (m - 1) / 2)
    return total / X.shape[0]


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_compactness_against_reference(metric, rng):
    X = rng.normal(size=(300, 4)) * 3 + 10
    labels = rng.integers(0, 7, 300)
    expected = compactness_reference(X, labels, squared=metric == "sqeuclidean")
    assert cm.compactness(X, labels, metric=metric) == pytest.approx(expected, rel=1e-12)


def test_compactness_blocks(monkeypatch, rng):
    """Row blocks smaller than a cluster give the same sum."""
    X = rng.normal(size=(200, 3))
    labels = rng.integers(0, 2, 200)
    expected = cm.compactness(X, labels)
    monkeypatch.setattr(_criteria, "_PAIR_BLOCK", 150)
    assert cm.compactness(X, labels) == pytest.approx(expected, rel=1e-12)


def test_kmeans_objective(rng):
    assert cm.kmeans_objective([[0.0], [2.0], [10.0], [10.0]], [0, 0, 1, 1]) == 2.0
    X = rng.normal(size=(500, 3)) + 1e4
    labels = rng.integers(0, 5, 500)
    expected = sum(((X[labels == c] - X[labels == c].mean(0)) ** 2).sum() for c in range(5))
    assert cm.kmeans_objective(X, labels) == pytest.approx(expected, rel=1e-10)
    assert cm.kmeans_objective(X, np.arange(500)) == 0.0


def test_kmeans_objective_matches_sklearn_inertia():
    from sklearn.cluster import KMeans

    X = np.random.default_rng(0).normal(size=(400, 2))
    km = KMeans(n_clusters=4, n_init=1, random_state=0).fit(X)
    # at convergence the centres are the cluster means, so the objectives agree
    assert cm.kmeans_objective(X, km.labels_) == pytest.approx(km.inertia_, rel=1e-6)


# -- consensus_score ---------------------------------------------------------------------------

def make_ensemble(rng, n=120, r=6, with_missing=True, weighted=True):
    columns = []
    for i in range(r):
        column = rng.integers(0, int(rng.integers(2, 7)), n)
        if with_missing:
            column[rng.random(n) < 0.2] = -1
        columns.append(column)
    labels = np.column_stack(columns)
    weights = rng.random(r) + 0.1 if weighted else None
    return Ensemble(labels, weights=weights), labels


NAMED = {"ari": cm.ari, "nmi": cm.nmi, "ami": cm.ami, "rand": cm.rand, "vi": cm.vi,
         "van-dongen": cm.van_dongen, "accuracy": cm.accuracy}


@pytest.mark.parametrize("with_missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize("metric", list(NAMED))
def test_consensus_score_is_weighted_average(metric, with_missing, rng):
    ensemble, labels = make_ensemble(rng, with_missing=with_missing)
    target = rng.integers(0, 4, ensemble.n_samples)
    one_by_one = []
    for i in range(ensemble.n_partitions):
        labelled = labels[:, i] >= 0
        one_by_one.append(NAMED[metric](target[labelled], labels[labelled, i]))
    expected = float(np.dot(ensemble.weights, one_by_one))
    assert cm.consensus_score(target, ensemble, metric=metric) == pytest.approx(expected, rel=0, abs=1e-12)
    # the function object is accepted in place of its name
    assert cm.consensus_score(target, ensemble, metric=NAMED[metric]) == pytest.approx(expected, abs=1e-12)


def test_consensus_score_defaults_and_paper_form(rng):
    ensemble, labels = make_ensemble(rng, with_missing=False, weighted=False)
    target = labels[:, 0]
    # equal weights: eq. 4's 1/C average, of NMI with the sqrt normalisation (eq. 10)
    expected = np.mean([skm.normalized_mutual_info_score(target, labels[:, i], average_method="geometric")
                        for i in range(labels.shape[1])])
    assert cm.consensus_score(target, ensemble) == pytest.approx(expected, abs=1e-12)
    # an array of partitions is accepted for the ensemble
    assert cm.consensus_score(target, labels, "ari") == pytest.approx(
        cm.consensus_score(target, ensemble, "ari"), abs=1e-15)


def test_consensus_score_callable_gets_each_block(rng):
    ensemble, labels = make_ensemble(rng)
    target = np.array([f"t{v}" for v in rng.integers(0, 3, ensemble.n_samples)])
    seen = []

    def labelled_fraction(table):
        seen.append(table.shape)
        return table.sum() / ensemble.n_samples

    score = cm.consensus_score(target, ensemble, metric=labelled_fraction)
    assert seen == [(3, int(k)) for k in ensemble.n_clusters]
    assert score == pytest.approx(float(np.dot(ensemble.weights, (labels >= 0).mean(axis=0))), abs=1e-15)


def test_consensus_score_duck_typed_ensemble(rng):
    """Any object with the Ensemble attributes works (plugins may pass their own)."""
    real, _ = make_ensemble(rng)

    class StandIn:
        n_samples, n_partitions = real.n_samples, real.n_partitions
        offsets, weights = real.offsets, real.weights

        def contingency(self, labels, n_clusters=None):
            return real.contingency(labels, n_clusters)

    target = rng.integers(0, 3, real.n_samples)
    assert cm.consensus_score(target, StandIn(), "ari") == cm.consensus_score(target, real, "ari")


def test_consensus_score_identical_partitions():
    labels = np.array([0, 0, 1, 1, 2, 2])
    ensemble = Ensemble(np.column_stack([labels, labels[::-1], labels]))
    assert cm.consensus_score(labels, ensemble, "vi") == 0.0
    assert cm.consensus_score(labels, ensemble, "ari") == 1.0


# -- the compiled table ------------------------------------------------------------------------

def table_reference(a, b, ka, kb):
    out = np.zeros((ka, kb), dtype=np.int64)
    keep = (a >= 0) & (b >= 0)
    np.add.at(out, (a[keep], b[keep]), 1)
    return out


@pytest.mark.parametrize("n", [1, 100, 40_000, 300_000], ids=lambda n: f"n{n}")
@pytest.mark.parametrize("ka,kb", [(1, 1), (3, 17), (250, 40)], ids=lambda k: f"K{k}")
def test_pair_table_against_numpy(ka, kb, n, rng):
    a = rng.integers(0, ka, n)
    b = rng.integers(0, kb, n)
    expected = table_reference(a, b, ka, kb)
    one = _contingency.pair_table(a, b, ka, kb, 1)
    two = _contingency.pair_table(a, b, ka, kb, 2)
    assert one.dtype == np.int64 and one.shape == (ka, kb)
    np.testing.assert_array_equal(one, expected)
    np.testing.assert_array_equal(two, one)


def test_pair_table_skips_missing_and_rejects_out_of_range(rng):
    a = rng.integers(-1, 3, 50_000)
    b = rng.integers(-1, 4, 50_000)
    np.testing.assert_array_equal(_contingency.pair_table(a, b, 3, 4, 2), table_reference(a, b, 3, 4))
    with pytest.raises(ValueError, match="outside"):
        _contingency.pair_table(np.array([0, 3]), np.array([0, 0]), 3, 1, 1)


def test_contingency_table_public():
    table = cm.contingency_table([0, 0, 1, 1, 2], ["a", "a", "a", "b", "b"])
    assert table.dtype == np.int64
    assert table.tolist() == [[2, 0], [1, 1], [0, 1]]
    sparse = cm.contingency_table([0, 0, 1, 1, 2], ["a", "a", "a", "b", "b"], sparse=True)
    assert sparse.toarray().tolist() == table.tolist()
    expected = skm.cluster.contingency_matrix([5, -1, 5, 2, 9, 9], ["x", "y", "x", "y", "y", "z"])
    np.testing.assert_array_equal(cm.contingency_table([5, -1, 5, 2, 9, 9], ["x", "y", "x", "y", "y", "z"]),
                                  expected)


@pytest.mark.parametrize("metric", list(ALL_PAIR_METRICS))
def test_sparse_tables_give_the_same_values(metric, monkeypatch, rng):
    a, b = rng.integers(0, 300, 2000), rng.integers(0, 250, 2000)
    f = ALL_PAIR_METRICS[metric]
    dense = f(a, b)
    monkeypatch.setattr(_tables, "_DENSE_CELLS", 0)
    assert _tables._labels_table(a, b).__class__.__name__ == "csr_array"
    assert f(a, b) == pytest.approx(dense, rel=0, abs=1e-15)


def test_many_clusters_stay_sparse():
    # 2e4 x 1e4 clusters: a dense table would hold 2e8 cells (1.6 GB)
    n = 20_000
    a = np.arange(n)
    b = np.arange(n)[::-1] // 2
    assert _tables._labels_table(a, b).__class__.__name__ == "csr_array"
    assert cm.ari(a, b) == skm.adjusted_rand_score(a, b)
    assert cm.nmi(a, b) == pytest.approx(skm.normalized_mutual_info_score(a, b, average_method="geometric"),
                                         abs=1e-12)


def test_threaded_path_matches_sklearn():
    rng = np.random.default_rng(11)
    a, b = rng.integers(0, 1000, 300_000), rng.integers(0, 30, 300_000)
    assert cm.ari(a, b) == skm.adjusted_rand_score(a, b)
    assert cm.nmi(a, b, average="arithmetic") == pytest.approx(skm.normalized_mutual_info_score(a, b), abs=1e-12)


# -- bad input ---------------------------------------------------------------------------------

PAIR_FUNCTIONS = {"ari": cm.ari, "rand": cm.rand, "nmi": cm.nmi, "ami": cm.ami, "vi": cm.vi,
                  "van_dongen": cm.van_dongen, "accuracy": cm.accuracy}

BAD_PAIRS = {
    "different-lengths": ([0, 1, 1], [0, 1], "labels_true and labels_pred"),
    "true-not-1d": ([[0, 1], [1, 0]], [0, 1], "labels_true must be 1-D"),
    "pred-not-1d": ([0, 1], [[0], [1]], "labels_pred must be 1-D"),
    "true-empty": ([], [], "labels_true must not be empty"),
    "pred-nan": ([0, 1, 1], [0.0, np.nan, 1.0], "labels_pred contains NaN"),
    "pred-not-whole": ([0, 1], [0.5, 1.0], "labels_pred"),
    "mixed-types": ([0, 1], np.array([1, "a"], dtype=object), "labels_pred"),
}


@pytest.mark.parametrize("case", list(BAD_PAIRS))
@pytest.mark.parametrize("function", list(PAIR_FUNCTIONS))
def test_bad_labellings(function, case):
    a, b, message = BAD_PAIRS[case]
    if function == "vi" and case == "true-not-1d":
        # vi reads a 2-D input as a membership matrix (clue's VI of soft partitions): this one
        # is the one-hot matrix of [1, 0], whose VI with [0, 1] is 0
        assert PAIR_FUNCTIONS[function](a, b) == 0.0
        return
    if function == "vi" and case == "pred-not-1d":
        message = "labels_pred is a membership matrix with 1 column"
    with pytest.raises(ValidationError, match=message):
        PAIR_FUNCTIONS[function](a, b)


@pytest.mark.parametrize("function", [cm.nmi, cm.ami], ids=["nmi", "ami"])
@pytest.mark.parametrize("average", ["mean", "", None, "Arithmetic"])
def test_unknown_average(function, average):
    with pytest.raises(ValidationError, match="average must be one of"):
        function([0, 1], [0, 1], average=average)


def test_contingency_table_bad_input():
    with pytest.raises(ValidationError, match="labels_a and labels_b"):
        cm.contingency_table([0, 1], [0])
    with pytest.raises(ValidationError, match="labels_b contains NaN"):
        cm.contingency_table([0, 1], [0, np.nan])


@pytest.mark.parametrize("function", [cm.compactness, cm.kmeans_objective], ids=["compactness", "kmeans"])
def test_bad_features(function):
    with pytest.raises(ValidationError, match="X must be 2-D"):
        function([0.0, 1.0], [0, 1])
    with pytest.raises(ValidationError, match="X contains NaN"):
        function([[0.0], [np.nan]], [0, 1])
    with pytest.raises(ValidationError, match="X and labels"):
        function([[0.0], [1.0], [2.0]], [0, 1])
    with pytest.raises(ValidationError, match="labels must not be empty"):
        function([[0.0]], [])


def test_compactness_unknown_metric():
    with pytest.raises(ValidationError, match="metric must be one of"):
        cm.compactness(TOY_X, [0, 0, 1, 1, 1], metric="cityblock")


def test_consensus_score_bad_input(rng):
    ensemble, _ = make_ensemble(rng, n=10)
    with pytest.raises(ValidationError, match="metric must be one of .* got 'nmj'. Did you mean 'nmi'"):
        cm.consensus_score(np.zeros(10, int), ensemble, metric="nmj")
    with pytest.raises(ValidationError, match="metric must be a metric name"):
        cm.consensus_score(np.zeros(10, int), ensemble, metric=3)
    with pytest.raises(ValidationError, match="labels and ensemble .* 9 labels, ensemble has n_samples = 10"):
        cm.consensus_score(np.zeros(9, int), ensemble)
    with pytest.raises(ValidationError, match="labels must be 1-D"):
        cm.consensus_score(np.zeros((10, 2), int), ensemble)
    with pytest.raises(ValidationError, match="labels contains NaN"):
        cm.consensus_score(np.full(10, np.nan), ensemble)
    with pytest.raises(ValidationError, match="metric must return a real number"):
        cm.consensus_score(np.zeros(10, int), ensemble, metric=lambda table: "high")


def test_inputs_are_not_modified(rng):
    a = rng.integers(0, 5, 100)
    b = rng.integers(0, 5, 100).astype(float)
    X = rng.normal(size=(100, 2))
    copies = a.copy(), b.copy(), X.copy()
    for f in PAIR_FUNCTIONS.values():
        f(a, b)
    cm.compactness(X, a)
    cm.kmeans_objective(X, a)
    for original, copy in zip((a, b, X), copies):
        np.testing.assert_array_equal(original, copy)


# -- registry rows and docs --------------------------------------------------------------------

#: The rows to add to cclust._builtins (name, kind, target, description).
METRIC_ROWS = [
    ("ari", "cclust.metrics:ari"),
    ("nmi", "cclust.metrics:nmi"),
    ("ami", "cclust.metrics:ami"),
    ("rand", "cclust.metrics:rand"),
    ("vi", "cclust.metrics:vi"),
    ("van-dongen", "cclust.metrics:van_dongen"),
    ("accuracy", "cclust.metrics:accuracy"),
    ("compactness", "cclust.metrics:compactness"),
    ("kmeans-objective", "cclust.metrics:kmeans_objective"),
    ("consensus-score", "cclust.metrics:consensus_score"),
]


@pytest.mark.parametrize("name,target", METRIC_ROWS, ids=[row[0] for row in METRIC_ROWS])
def test_registry_targets_satisfy_the_metric_contract(name, target):
    from cclust.registry import check_contract

    module, attribute = target.split(":")
    assert module == "cclust.metrics"
    function = getattr(cm, attribute)
    check_contract("metric", function, name)
    assert attribute in cm.__all__


def test_docstring_examples_run():
    result = doctest.testmod(cm, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10
    assert result.failed == 0
