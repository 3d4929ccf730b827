"""cclust.markers: the one-versus-rest tests of every feature in every cluster, against SciPy."""
import numpy as np
import pytest
from scipy import stats

import cclust
from cclust.differential import benjamini_hochberg, markers
from cclust.errors import MemoryBudgetError, ValidationError


def data(seed=0, n=90):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[:, 3] = np.round(X[:, 3])          # many ties
    X[:, 5] = 2.0                        # constant
    labels = np.array(["b", "a", "c"])[rng.integers(0, 3, n)]
    X[labels == "a", 1] += 2.5           # feature 1 marks cluster "a"
    return X, labels


def row(table, cluster, feature):
    i = next(i for i in range(len(table["cluster"])) if table["cluster"][i] == cluster
             and table["feature"][i] == feature)
    return {name: table[name][i] for name in table}


def test_wilcoxon_equals_scipys_mann_whitney_with_ties():
    X, labels = data()
    table = markers(X, labels, as_frame=False)
    assert len(table["cluster"]) == 3 * 6
    for c in ("a", "b", "c"):
        for j in range(5):
            got = row(table, c, str(j))
            inside, outside = X[labels == c, j], X[labels != c, j]
            want = stats.mannwhitneyu(inside, outside, use_continuity=False, method="asymptotic")
            assert got["p_value"] == pytest.approx(want.pvalue, rel=1e-12, abs=1e-300)
            assert got["auroc"] == pytest.approx(want.statistic / (inside.size * outside.size), rel=1e-12)
            # the z score's sign says which side ranks higher
            assert np.sign(got["score"]) == np.sign(got["auroc"] - 0.5)
    constant = row(table, "a", "5")
    assert constant["score"] == 0.0 and constant["p_value"] == 1.0 and constant["auroc"] == 0.5
    assert row(table, "a", "1")["auroc"] > 0.9 and table["feature"][0] == "1"


def test_welch_equals_scipys_t_test():
    X, labels = data(1)
    table = markers(X, labels, method="t-test", as_frame=False)
    for c in ("a", "b", "c"):
        for j in range(5):
            got = row(table, c, str(j))
            want = stats.ttest_ind(X[labels == c, j], X[labels != c, j], equal_var=False)
            assert got["score"] == pytest.approx(want.statistic, rel=1e-12)
            assert got["p_value"] == pytest.approx(want.pvalue, rel=1e-12, abs=1e-300)
    assert row(table, "b", "5")["score"] == 0.0 and row(table, "b", "5")["p_value"] == 1.0


def test_adjusted_p_values_are_benjamini_hochberg():
    p = np.random.default_rng(2).random(40) ** 3
    np.testing.assert_allclose(benjamini_hochberg(p), stats.false_discovery_control(p, method="bh"), rtol=1e-14)
    X, labels = data(3)
    table = markers(X, labels, as_frame=False)
    for c in ("a", "b", "c"):
        rows = [i for i in range(len(table["cluster"])) if table["cluster"][i] == c]
        np.testing.assert_allclose([table["p_value_adjusted"][i] for i in rows],
                                   stats.false_discovery_control([table["p_value"][i] for i in rows]), rtol=1e-14)


def test_the_table_is_sorted_by_cluster_then_score_and_n_top_keeps_the_best():
    X, labels = data(4)
    table = markers(X, labels, as_frame=False)
    assert table["cluster"] == sorted(table["cluster"])
    for c in ("a", "b", "c"):
        scores = [s for s, k in zip(table["score"], table["cluster"]) if k == c]
        assert scores == sorted(scores, reverse=True)
    top = markers(X, labels, n_top=2, as_frame=False)
    assert len(top["cluster"]) == 6 and top["feature"][:2] == table["feature"][:2]


def test_a_dataframe_in_gives_named_features_and_a_dataframe_out_and_x_is_left_alone():
    pd = pytest.importorskip("pandas")
    X, labels = data(5)
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(6)])
    before = frame.copy()
    table = cclust.markers(frame, labels)
    assert list(table.columns) == ["cluster", "feature", "score", "auroc", "p_value", "p_value_adjusted"]
    assert table.iloc[0]["feature"] == "gene1" and table.iloc[0]["cluster"] == "a"
    pd.testing.assert_frame_equal(frame, before)


def test_permuting_the_objects_changes_nothing():
    X, labels = data(6)
    order = np.random.default_rng(7).permutation(X.shape[0])
    for method in ("wilcoxon", "t-test"):
        a = markers(X, labels, method=method, as_frame=False)
        b = markers(X[order], labels[order], method=method, as_frame=False)
        assert a["feature"] == b["feature"]
        np.testing.assert_allclose(a["p_value"], b["p_value"], rtol=1e-10)


@pytest.mark.parametrize("kwargs, match", [
    ({"labels": np.zeros(5)}, "one label per object"),
    ({"labels": np.zeros(90)}, "at least two clusters"),
    ({"labels": np.r_[np.nan, np.zeros(89)]}, "labels holds NaN"),
    ({"method": "logreg"}, "method must be one of"),
    ({"feature_names": ["x", "y"]}, "feature_names has 2 names"),
    ({"n_top": 0}, "n_top"),
    ({"labels": np.r_[1, np.zeros(89)], "method": "t-test"}, "needs at least two on each side"),
])
def test_bad_input_is_refused_naming_the_argument(kwargs, match):
    X, labels = data(8)
    args = {"labels": labels, **kwargs}
    with pytest.raises(ValidationError, match=match):
        markers(X, **args)


def test_the_ranks_past_the_memory_budget_are_refused():
    X, labels = data(9)
    with pytest.raises(MemoryBudgetError, match="ranks of 6 features"):
        markers(X, labels, max_bytes=1000)
