"""cclust.evaluation (diceR's consensus_evaluate, trim and reweigh; Chiu & Talhouk 2018)."""
import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.datasets import load_iris
from cclust.errors import ValidationError
from cclust.evaluation import EvaluationResult, aggregate_ranks, evaluate, internal_indices, reweigh, trim

import reference_evaluation as ref

sklearn = pytest.importorskip("sklearn")
from sklearn import metrics as skm  # noqa: E402


@pytest.fixture(scope="module")
def iris_het():
    X, y = load_iris()
    E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 4, "pam": 3, "gmm": 3, "hierarchical": 2},
                        random_state=0)
    return X, y, E


@pytest.mark.parametrize("seed", range(4))
def test_internal_indices_match_the_literal_definitions_and_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(14, 3))
    labels = rng.integers(0, 3, 14)
    labels[:3] = [0, 1, 2]
    E = Ensemble(rng.integers(0, 3, (14, 4)))
    got = internal_indices(X, labels, E)
    rows = X.tolist()
    assert got["silhouette"] == pytest.approx(ref.silhouette(rows, labels.tolist()), rel=1e-10)
    assert got["calinski_harabasz"] == pytest.approx(ref.calinski_harabasz(rows, labels.tolist()), rel=1e-10)
    assert got["davies_bouldin"] == pytest.approx(ref.davies_bouldin(rows, labels.tolist()), rel=1e-10)
    assert got["compactness"] == pytest.approx(ref.compactness(rows, labels.tolist()), rel=1e-10)
    assert got["silhouette"] == pytest.approx(skm.silhouette_score(X, labels))
    assert got["calinski_harabasz"] == pytest.approx(skm.calinski_harabasz_score(X, labels))
    assert got["davies_bouldin"] == pytest.approx(skm.davies_bouldin_score(X, labels))
    nmis = [skm.normalized_mutual_info_score(labels, E.labels[:, j], average_method="geometric") for j in range(4)]
    assert got["consensus_nmi"] == pytest.approx(np.mean(nmis))


def test_indices_undefined_for_one_cluster_are_nan():
    X = np.arange(12.0).reshape(6, 2)
    got = internal_indices(X, np.zeros(6, dtype=np.int64), Ensemble(np.zeros((6, 2), dtype=np.int64)))
    assert np.isnan(got["silhouette"]) and np.isnan(got["davies_bouldin"])


@pytest.mark.parametrize("seed", range(12))
def test_aggregate_ranks_is_footrule_optimal_against_every_ordering(seed):
    rng = np.random.default_rng(seed)
    m, lists = int(rng.integers(2, 6)), int(rng.integers(1, 5))
    from scipy.stats import rankdata
    ranks = np.column_stack([rankdata(rng.integers(0, 3, m)) for _ in range(lists)])
    best, orders = ref.footrule_best_orders(ranks)
    order = aggregate_ranks(ranks).tolist()
    assert ref.footrule_cost(ranks, order) == pytest.approx(best)
    assert tuple(order) in orders
    # the tie-break: when sorting by mean rank (then index) is itself optimal, it is the answer
    by_mean = sorted(range(m), key=lambda a: (ranks[a].mean(), a))
    if tuple(by_mean) in orders:
        assert order == by_mean


def test_aggregate_ranks_toy_cases():
    assert aggregate_ranks([[1, 2, 1], [2, 1, 3], [3, 3, 2]]).tolist() == [0, 1, 2]
    # a perfect tie between two orderings goes to the item seen first
    assert aggregate_ranks([[1, 2], [2, 1]]).tolist() == [0, 1]
    assert aggregate_ranks([[2, 1], [1, 2]]).tolist() == [0, 1]
    # one list is followed exactly
    assert aggregate_ranks([[3], [1], [2]]).tolist() == [1, 2, 0]
    with pytest.raises(ValidationError, match="ranks"):
        aggregate_ranks(np.empty((0, 2)))


def test_evaluate_rows_labels_and_ranks(iris_het):
    X, y, E = iris_het
    result = evaluate(X, E, 3, labels_true=y, random_state=0)
    assert result.algorithms == ("kmeans", "pam", "gmm", "hierarchical-average")
    assert result.n_partitions.tolist() == [4, 3, 3, 2]
    prov = np.array(E.provenance)
    for a, name in enumerate(result.algorithms):
        idx = np.flatnonzero(prov == name)
        expect = cclust.consensus("eac", E.take(partitions=idx), 3).labels
        assert np.array_equal(result.labels[a], expect)
        row = internal_indices(X, result.labels[a], E)
        for key, value in row.items():
            assert result.indices[key][a] == pytest.approx(value)
        assert result.external["ari"][a] == pytest.approx(skm.adjusted_rand_score(y, result.labels[a]))
    # ranks: 1 = best on each index, in the right direction
    for j, name in enumerate(result.ranked_indices):
        values = result.indices[name]
        best = np.argmax(values) if result.higher_is_better[name] else np.argmin(values)
        assert result.ranks[best, j] == 1
    assert sorted(result.order) == sorted(result.algorithms)
    assert ref.footrule_cost(result.ranks, [result.algorithms.index(a) for a in result.order]) == \
        pytest.approx(ref.footrule_best_orders(result.ranks)[0])
    table = result.as_table()
    assert table["algorithm"] == list(result.algorithms)
    assert sorted(table["rank"]) == [1, 2, 3, 4]
    assert "rank" in result.summary() and "gmm" in result.summary()


def test_evaluate_is_deterministic_and_thread_independent(iris_het):
    X, _, E = iris_het
    a = evaluate(X, E, 3, random_state=1, n_jobs=1)
    b = evaluate(X, E, 3, random_state=1, n_jobs=2)
    assert a.order == b.order and np.array_equal(a.labels, b.labels)


def test_evaluate_without_provenance_is_one_algorithm():
    X, _ = load_iris()
    E = cclust.generate("kmeans", X, 3, n_partitions=5, random_state=0)
    E = Ensemble(E.labels)
    result = evaluate(X, E, 3)
    assert result.algorithms == ("ensemble",) and result.order == ("ensemble",)
    assert trim(E, result, 1) is E and reweigh(E, result) is E


def test_trim_keeps_the_best_algorithms(iris_het):
    X, _, E = iris_het
    result = evaluate(X, E, 3)
    kept = trim(E, result, n_keep=2)
    assert set(kept.provenance) == set(result.order[:2])
    prov = np.array(E.provenance)
    idx = np.flatnonzero(np.isin(prov, result.order[:2]))
    assert np.array_equal(kept.labels, E.labels[:, idx])
    assert trim(E, result, n_keep=4) is E and trim(E, result, n_keep=9) is E


def test_reweigh_gives_borda_weights_by_rank(iris_het):
    X, _, E = iris_het
    result = evaluate(X, E, 3)
    W = reweigh(E, result)
    prov = np.array(W.provenance)
    m = 4
    for p, name in enumerate(result.order, start=1):
        share = W.weights[prov == name]
        assert share.sum() == pytest.approx((m + 1 - p) / (m * (m + 1) / 2))
        assert np.allclose(share, share[0])
    # after trimming, the ranks are renumbered among the algorithms left
    W2 = reweigh(trim(E, result, 2), result)
    prov2 = np.array(W2.provenance)
    assert W2.weights[prov2 == result.order[0]].sum() == pytest.approx(2 / 3)


def test_reweigh_hand_computed():
    X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    good = [0, 0, 0, 1, 1, 1]
    bad = [0, 1, 0, 1, 0, 1]
    E = Ensemble(np.column_stack([good, good, bad]), provenance=["good", "good", "bad"])
    result = evaluate(X, E, 2)
    assert result.order == ("good", "bad")
    assert reweigh(E, result).weights.tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3])
    assert trim(E, result, 1).provenance == ("good", "good")
    E2 = Ensemble(np.column_stack([good, bad, bad]), provenance=["good", "bad", "bad"])
    assert reweigh(E2, evaluate(X, E2, 2)).weights.tolist() == pytest.approx([2 / 3, 1 / 6, 1 / 6])


def test_bad_input(iris_het):
    X, y, E = iris_het
    with pytest.raises(ValidationError, match="n_clusters"):
        evaluate(X, E, 1)
    with pytest.raises(ValidationError, match="same objects"):
        evaluate(X[:-1], E, 3)
    with pytest.raises(ValidationError, match="labels_true"):
        evaluate(X, E, 3, labels_true=y[:-1])
    with pytest.raises(ValidationError, match="method_params"):
        evaluate(X, E, 3, method_params={"n_clusters": 2})
    with pytest.raises(cclust.errors.UnknownNameError):
        evaluate(X, E, 3, method="no-such-method")
    result = evaluate(X, E, 3)
    with pytest.raises(ValidationError, match="n_keep"):
        trim(E, result, n_keep=0)
    with pytest.raises(ValidationError, match="evaluation"):
        trim(E, {"order": ()})
    other = Ensemble(E.labels, provenance=["x"] * E.n_partitions)
    with pytest.raises(ValidationError, match="did not rank"):
        reweigh(other, result)
    assert isinstance(result, EvaluationResult)


def test_estimator_trim_and_reweigh(iris_het):
    X, _, E = iris_het
    model = cclust.ConsensusClustering("eac", n_clusters=3, trim=2, reweigh=True, random_state=0)
    model.fit(X, ensemble=E)
    assert set(model.ensemble_.provenance) == set(model.evaluation_.order[:2])
    expect = reweigh(trim(E, model.evaluation_, 2), model.evaluation_)
    assert np.allclose(model.ensemble_.weights, expect.weights)
    assert np.array_equal(model.labels_, cclust.consensus("eac", expect, 3).labels)
    # generated ensembles too, and the default trim=True keeps 5 (here: all 2 of them)
    gen = cclust.ConsensusClustering("kcc", n_clusters=3, n_partitions=6, generator="heterogeneous",
                                     generator_params={"generators": ["kmeans", "pam"]}, trim=True,
                                     random_state=0).fit(X)
    assert gen.evaluation_.algorithms == ("kmeans", "pam") and gen.ensemble_.n_partitions == 6
    plain = cclust.ConsensusClustering("eac", n_clusters=3).fit(X, ensemble=E)
    assert not hasattr(plain, "evaluation_")


def test_estimator_trim_bad_input(iris_het):
    X, _, E = iris_het
    with pytest.raises(ValidationError, match="trim"):
        cclust.ConsensusClustering("eac", n_clusters=3, trim=0).fit(X, ensemble=E)
    with pytest.raises(ValidationError, match="trim .*pass X"):
        cclust.ConsensusClustering("eac", n_clusters=3, trim=2).fit(ensemble=E)
    with pytest.raises(ValidationError, match="reweigh"):
        cclust.ConsensusClustering("eac", n_clusters=3, reweigh="yes").fit(X, ensemble=E)
    with pytest.raises(ValidationError, match="reweigh needs n_clusters"):
        cclust.ConsensusClustering("addremadd", n_clusters=None, reweigh=True).fit(X, ensemble=E)


def test_plot_evaluation(iris_het):
    pytest.importorskip("matplotlib")
    from cclust.plotting import plot_evaluation

    X, _, E = iris_het
    result = evaluate(X, E, 3)
    ax = plot_evaluation(result)
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"{p}. {a}" for p, a in enumerate(result.order, 1)]
    image = ax.get_images()[0].get_array()
    rows = [result.algorithms.index(a) for a in result.order]
    assert np.array_equal(np.asarray(image), result.ranks[rows])
    texts = [t.get_text() for t in ax.texts]
    assert texts[0] == f"{result.indices[result.ranked_indices[0]][rows[0]]:.3g}"
    with pytest.raises(ValidationError, match="result must be the EvaluationResult"):
        plot_evaluation({"order": ()})
    with pytest.raises(ValidationError, match="cmap"):
        plot_evaluation(result, cmap="no-such-map")


# -- connectivity (Handl, Knowles & Kell 2005; clValid's definition) ------------------------------

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("L", [1, 3, 10])
def test_connectivity_matches_the_literal_reference(seed, L):
    from cclust.evaluation import connectivity

    rng = np.random.default_rng(seed)
    n = int(rng.integers(L + 2, 30))
    # rounded coordinates: many exact ties in distance, and duplicated objects
    X = np.round(rng.normal(size=(n, 2)), 0)
    labels = rng.integers(0, 3, n)
    assert connectivity(X, labels, n_neighbors=L) == pytest.approx(
        ref.connectivity(X.tolist(), labels.tolist(), L), rel=1e-12)


def test_connectivity_blocks_give_the_same_value(monkeypatch):
    from cclust import evaluation

    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(40, 2)), 1)
    labels = rng.integers(0, 4, 40)
    whole = evaluation.connectivity(X, labels)
    monkeypatch.setattr(evaluation._indices, "_CONNECTIVITY_BLOCK_ELEMENTS", 7 * 40)
    assert evaluation.connectivity(X, labels) == whole


def test_connectivity_hand_cases_as_clvalid_orders_ties():
    from cclust.evaluation import connectivity, nearest_neighbors_in_order

    # 0, 1, 3, 10 on a line, L = 2: objects 0 and 1 see object 2 second (1/2 each), object 2 sees
    # 1 then 0, both in the other cluster (1 + 1/2), object 3 sees 2 (same) then 1 (1/2).
    assert connectivity([[0.0], [1.0], [3.0], [10.0]], [0, 0, 1, 1], n_neighbors=2) == 3.0
    # duplicates: objects 0, 1 and 3 coincide. R sorts ties by index, so for object 1 the order is
    # 0, 1, 3, 2 and clValid drops object 0 (not 1): object 1 is its own first neighbour.
    X = [[0.0], [0.0], [1.0], [0.0]]
    assert nearest_neighbors_in_order(np.array(X), 2).tolist() == [[1, 3], [1, 3], [0, 1], [1, 3]]
    # 1 (0 sees 1) + 1/2 (1 sees 3) + 1 (2 sees 0) + 1 (3 sees 1) = 3.5
    assert connectivity(X, [0, 1, 1, 0], n_neighbors=2) == 3.5
    # perfectly separated clusters of more than L + 1 objects: 0
    X = np.r_[np.zeros((5, 1)) + np.arange(5)[:, None] * 0.01, 10 + np.arange(5)[:, None] * 0.01]
    assert connectivity(X, [0] * 5 + [1] * 5, n_neighbors=4) == 0.0
    # the worst case: every neighbour elsewhere, n (1 + 1/2 + ... + 1/L)
    assert connectivity([[0.0], [1.0]], [0, 1], n_neighbors=1) == 2.0


def test_connectivity_registered_and_bad_input():
    from cclust.evaluation import connectivity

    assert cclust.get("connectivity") is connectivity
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValidationError, match="n_neighbors"):
        connectivity(X, [0, 0, 1, 1, 1], n_neighbors=5)
    with pytest.raises(ValidationError, match="n_neighbors"):
        connectivity(X, [0, 0, 1, 1, 1], n_neighbors=0)
    with pytest.raises(ValidationError, match="metric"):
        connectivity(X, [0, 0, 1, 1, 1], metric="cosine")
    with pytest.raises(ValidationError, match="labels"):
        connectivity(X, [0, 0, 1, 1])
    with pytest.raises(ValidationError, match="X"):
        connectivity(np.full((5, 2), np.nan), [0, 0, 1, 1, 1])
    assert connectivity(X, [0, 0, 1, 1, 1], n_neighbors=3, metric="manhattan") == pytest.approx(
        connectivity(X, [0, 0, 1, 1, 1], n_neighbors=3))


# -- several K (diceR's multi-K mode) ---------------------------------------------------------------

@pytest.fixture(scope="module")
def iris_per_k():
    X, y = load_iris()
    return X, y, {k: cclust.generate("heterogeneous", X, k, generators={"kmeans": 4, "pam": 2, "gmm": 4},
                                     random_state=k) for k in (2, 3, 4)}


def test_multi_k_per_k_equals_one_k_evaluations(iris_per_k):
    from cclust.evaluation import MultiKEvaluation

    X, y, Es = iris_per_k
    result = evaluate(X, Es, None, random_state=5)
    assert isinstance(result, MultiKEvaluation) and result.k_values == (2, 3, 4)
    seed = cclust._pipeline.child_seeds(5, 1)[0]
    for k, E in Es.items():
        one = evaluate(X, E, k, random_state=seed)
        assert result.per_k[k].order == one.order
        np.testing.assert_array_equal(result.per_k[k].labels, one.labels)
        for name in one.indices:
            np.testing.assert_array_equal(result.per_k[k].indices[name], one.indices[name])
    # the list spelling with the same dict is the same evaluation
    again = evaluate(X, Es, [4, 2, 3], random_state=5)
    assert again.order == result.order and again.chosen_k == result.chosen_k
    np.testing.assert_array_equal(again.pac, result.pac)


def _literal_pac(E, idx, low, high):
    """diceR's PAC: entries of the lower triangle strictly inside (low, high), over all pairs."""
    L = E.labels[:, idx]
    n = L.shape[0]
    inside = total = 0
    for i in range(n):
        for j in range(i):
            both = [(a, b) for a, b in zip(L[i], L[j]) if a >= 0 and b >= 0]
            value = sum(a == b for a, b in both) / len(both) if both else 0.0
            inside += low < value < high
            total += 1
    return inside / total


def test_multi_k_pac_and_diceR_choice_of_k():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 2))
    stable = np.repeat(np.arange(3), 8)
    noisy = rng.integers(0, 2, (24, 3))
    Es = {2: Ensemble(np.column_stack([stable % 2, stable % 2, noisy[:, 0], noisy[:, 1]]),
                      provenance=["a", "a", "b", "b"]),
          3: Ensemble(np.column_stack([stable, stable, stable, stable]), provenance=["a", "a", "b", "b"])}
    result = evaluate(X, Es, None, pac_interval=(0.1, 0.9))
    for col, k in enumerate((2, 3)):
        for row, (name, idx) in enumerate((("a", [0, 1]), ("b", [2, 3]))):
            assert result.pac[row, col] == pytest.approx(_literal_pac(Es[k], idx, 0.1, 0.9))
    # a: PAC 0 at both K, votes for the smaller (2); b: ambiguous at 2, not at 3 -> votes 3;
    # one vote each: the smaller K wins, as in diceR's choose_k
    assert result.pac[0].tolist() == [0.0, 0.0] and result.pac[1, 1] < result.pac[1, 0]
    assert result.chosen_k == (2,) and result.k_rule == "pac"
    assert evaluate(X, Es, None, k_method="all").chosen_k == (2, 3)
    assert evaluate(X, Es, None, k_method=3).chosen_k == (3,)
    assert evaluate(X, Es, None, labels_true=stable).chosen_k == (3,)
    assert evaluate(X, {3: Es[3]}, None).chosen_k == (3,)  # one K: "all"


def test_multi_k_joint_ranking_and_best_k(iris_per_k):
    X, y, Es = iris_per_k
    result = evaluate(X, Es, None)
    assert set(result.order) == set(result.combinations) and len(result.combinations) == 9
    assert result.best_k == result.order[0][1]
    cost = ref.footrule_cost(result.ranks, [result.combinations.index(c) for c in result.order])
    for seed in range(20):  # no random ordering does better (exactness itself is tested above)
        perm = np.random.default_rng(seed).permutation(len(result.combinations))
        assert cost <= ref.footrule_cost(result.ranks, perm) + 1e-9
    table = result.as_table()
    assert len(table["algorithm"]) == 9 and sorted(set(table["k"])) == [2, 3, 4]
    assert all(c == (k in result.chosen_k) for k, c in zip(table["k"], table["chosen"]))
    text = result.summary()
    assert f"best K by the internal indices: {result.best_k}" in text


def test_multi_k_trim_and_reweigh(iris_per_k):
    X, y, Es = iris_per_k
    one = evaluate(X, Es, None, k_method=3)
    kept = trim(Es, one, 2)
    expected = trim(Es[3], one.per_k[3], 2)
    np.testing.assert_array_equal(kept.labels, expected.labels)
    assert kept.provenance == expected.provenance
    every = evaluate(X, Es, None, k_method="all")
    kept = trim(Es, every, 2)
    assert kept.n_partitions == sum(trim(Es[k], every.per_k[k], 2).n_partitions for k in (2, 3, 4))
    assert all(p.rsplit(" k=", 1)[1] in ("2", "3", "4") for p in kept.provenance)
    weighted = reweigh(kept, every)
    prov = np.array(weighted.provenance)
    w = np.asarray(weighted.weights)
    for k in (2, 3, 4):
        block = np.array([p.endswith(f" k={k}") for p in prov])
        assert w[block].sum() == pytest.approx(1 / 3)
        best = every.per_k[k].order[0]
        second = [a for a in every.per_k[k].order if f"{a} k={k}" in set(prov)][1]
        assert w[prov == f"{best} k={k}"].sum() == pytest.approx(2 / 3 / 3)
        assert w[prov == f"{second} k={k}"].sum() == pytest.approx(1 / 3 / 3)
    # the dict itself can be reweighed too (no trimming)
    assert reweigh(Es, one).n_partitions == Es[3].n_partitions


def test_multi_k_bad_input(iris_per_k):
    X, y, Es = iris_per_k
    with pytest.raises(ValidationError, match="n_clusters"):
        evaluate(X, Es, [2, 3])
    with pytest.raises(ValidationError, match="n_clusters"):
        evaluate(X, Es[3], [])
    with pytest.raises(ValidationError, match="n_clusters must be an int"):
        evaluate(X, Es[3], None)
    with pytest.raises(ValidationError, match="k_method"):
        evaluate(X, Es, None, k_method=7)
    with pytest.raises(ValidationError, match="k_method"):
        evaluate(X, Es, None, k_method="best")
    with pytest.raises(ValidationError, match="k_method"):
        evaluate(X, Es[3], 3, k_method=3)
    with pytest.raises(ValidationError, match="labels_true has 3 classes"):
        evaluate(X, {2: Es[2], 4: Es[4]}, None, labels_true=y)
    with pytest.raises(ValidationError, match="pac_interval"):
        evaluate(X, Es, None, pac_interval=(0.9, 0.1))
    with pytest.raises(ValidationError, match=r"ensemble\[3\]"):
        evaluate(X, {2: Es[2], 3: Es[3].take(objects=np.arange(100))}, None)
    with pytest.raises(ValidationError, match="ensemble keys"):
        evaluate(X, {1: Es[2]}, None)


# -- the sparse route past the dense budget ----------------------------------------------------------

def test_sparse_route_automatic_past_the_budget_and_by_option():
    from cclust.consensus_functions.pairwise import eac
    from cclust.metrics import ari

    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.3, (200, 2)) for c in ((0, 0), (3, 0), (0, 3))])
    E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 4, "gmm": 4}, random_state=0)
    dense = evaluate(X, E, 3)
    assert dense.route == "dense"
    budget = 3_000_000  # under the dense route's 7.2 MB at n = 600, over the kNN graph's
    small = evaluate(X, E, 3, max_bytes=budget, random_state=0)
    forced = evaluate(X, E, 3, matrix="sparse", random_state=0)
    assert small.route == forced.route == "sparse"
    np.testing.assert_array_equal(small.labels, forced.labels)
    seeds = cclust.validation.spawn_seed_sequences(0, len(forced.algorithms))
    for a, name in enumerate(forced.algorithms):
        idx = np.flatnonzero([p == name for p in E.provenance])
        seed = int(seeds[a].generate_state(1, dtype=np.uint32)[0])
        expected = eac(E.take(partitions=idx), 3, linkage="single", n_neighbors=30, random_state=seed).labels
        np.testing.assert_array_equal(forced.labels[a], expected)
        assert ari(forced.labels[a], dense.labels[a]) > 0.9  # easy blobs: both routes agree
    with pytest.raises(cclust.errors.MemoryBudgetError):
        evaluate(X, E, 3, matrix="dense", max_bytes=budget)
    with pytest.raises(ValidationError, match="matrix"):
        evaluate(X, E, 3, matrix="knn")
    with pytest.raises(ValidationError, match="matrix"):
        evaluate(X, E, 3, method="kcc", matrix="sparse")


def test_plot_evaluation_several_k(iris_per_k):
    pytest.importorskip("matplotlib")
    from cclust.plotting import plot_evaluation

    X, y, Es = iris_per_k
    result = evaluate(X, Es, None, k_method=3)
    ax = plot_evaluation(result)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 9
    assert labels[0].startswith(f"1. {result.order[0][0]} (K={result.order[0][1]})")
    assert all(label.endswith(" *") == (" (K=3)" in label) for label in labels)
    assert f"best K by the indices = {result.best_k}" in ax.get_title()
    with pytest.raises(ValidationError, match="MultiKEvaluation"):
        plot_evaluation(result.per_k)
