"""select_k: Monti et al.'s consensus matrix, CDF, area, delta area and PAC; choosing K."""
import dataclasses
import json

import numpy as np
import pytest

import cclust
from cclust import Ensemble, select_k
from cclust.errors import MemoryBudgetError, UnknownNameError, ValidationError
from cclust.registry import declare
from cclust.result import ConsensusResult
from cclust.selection import SelectKResult, consensus_area, delta_area


def blobs(n_per=25, centres=((0, 0), (6, 0), (0, 6)), scale=0.4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, scale, (n_per, 2)) for c in centres])
    y = np.repeat(np.arange(len(centres)), n_per)
    return X, y


# -- a slow, obviously correct reference -------------------------------------------------------

def reference_consensus_matrix(n, runs):
    """M(i, j) = #(runs with i, j in one cluster) / #(runs sampling both); 0 if never sampled
    (ConsensusClusterPlus's ``res[[k]][which(tmpCount == 0)] = 0``)."""
    together = [[0] * n for _ in range(n)]
    sampled = [[0] * n for _ in range(n)]
    for idx, labels in runs:
        for a in range(len(idx)):
            for b in range(len(idx)):
                sampled[idx[a]][idx[b]] += 1
                if labels[a] == labels[b]:
                    together[idx[a]][idx[b]] += 1
    return [[together[i][j] / sampled[i][j] if sampled[i][j] else 0.0 for j in range(n)]
            for i in range(n)]


def reference_average_linkage(M, k):
    """UPGMA on 1 - M, merging the closest pair of clusters until k remain (plain loops)."""
    n = len(M)
    clusters = [[i] for i in range(n)]
    while len(clusters) > k:
        best = None
        for a in range(len(clusters)):
            for b in range(a + 1, len(clusters)):
                d = sum(1 - M[i][j] for i in clusters[a] for j in clusters[b]) / (len(clusters[a]) * len(clusters[b]))
                if best is None or d < best[0] - 1e-12:
                    best = (d, a, b)
        _, a, b = best
        clusters[a] = clusters[a] + clusters.pop(b)
    labels = [0] * n
    for c, members in enumerate(clusters):
        for i in members:
            labels[i] = c
    return labels


def reference_summary(M, grid, interval):
    n = len(M)
    entries = [M[i][j] for i in range(n) for j in range(i + 1, n)]   # every pair, as CCP
    cdf = [sum(1 for e in entries if e <= x) / len(entries) for x in grid]
    area = sum((grid[i] - grid[i - 1]) * cdf[i] for i in range(1, len(grid)))
    u1, u2 = interval
    pac = sum(1 for e in entries if u1 < e <= u2) / len(entries)
    return cdf, area, pac


@pytest.fixture
def recorder():
    """A registered consensus function that records which objects each run saw and its labels.

    The objects' indices travel as feature 0 of X (select_k hands the subsample's rows to any
    method taking X); labels follow feature 1 with random flips so that the consensus
    entries are not all 0 or 1.
    """
    calls = []

    @declare(requires_X=True)
    def record(ensemble, n_clusters, *, X=None, random_state=None):
        """Test recorder: structured labels with noise, remembering every call."""
        rng = np.random.default_rng(random_state)
        idx = X[:, 0].astype(np.int64)
        labels = (np.floor(X[:, 1] * n_clusters).astype(np.int64) + (rng.random(idx.shape[0]) < 0.3)) % n_clusters
        result = ConsensusResult.from_labels(labels, objective=float(n_clusters % 3),
                                             objective_name="test score (higher is better)", method="test-recorder")
        calls.append((n_clusters, idx, result.labels))
        return result

    cclust.register("test-recorder", record, kind="consensus")
    yield calls
    cclust.registry.unregister("test-recorder")


def test_matches_reference_on_a_tiny_case(recorder):
    n, k_values, n_resamples = 14, [2, 3, 4], 5
    rng = np.random.default_rng(3)
    X = np.column_stack([np.arange(n), rng.random(n)])
    res = select_k(X, k_values, method="test-recorder", n_partitions=2, n_resamples=n_resamples,
                   subsample=0.7, keep_matrices=True, random_state=11, pac_interval=(0.2, 0.8))
    assert isinstance(res, SelectKResult)
    assert len(recorder) == len(k_values) * (n_resamples + 1)
    for row, k in enumerate(k_values):
        calls = recorder[row * (n_resamples + 1):(row + 1) * (n_resamples + 1)]
        assert all(c[0] == k for c in calls)
        runs = [(c[1].tolist(), c[2].tolist()) for c in calls[:-1]]
        assert all(len(idx) == int(np.floor(0.7 * n)) for idx, _ in runs)   # CCP's floor(pItem n)
        M = reference_consensus_matrix(n, runs)
        np.testing.assert_allclose(res.consensus_matrices[k], np.array(M), equal_nan=True, rtol=0, atol=1e-15)
        cdf, area, pac = reference_summary(M, res.cdf_grid.tolist(), (0.2, 0.8))
        np.testing.assert_allclose(res.cdf[row], cdf, rtol=0, atol=1e-12)
        assert res.area[row] == pytest.approx(area, abs=1e-12)
        assert res.pac[row] == pytest.approx(pac, abs=1e-12)
        # the full-data fit is the last call for K: its objective is reported, and its labels with
        # labels_from="fit"; by default the labels cut the average-linkage tree of 1 - M at K
        full_idx, full_labels = calls[-1][1], calls[-1][2]
        np.testing.assert_array_equal(full_idx, np.arange(n))
        assert res.objective[row] == k % 3
        assert cclust.get("ari")(res.labels[k], reference_average_linkage(M, k)) == 1.0
    expected_delta = [res.area[0]] + [(res.area[i] - res.area[i - 1]) / res.area[i - 1] for i in (1, 2)]
    np.testing.assert_allclose(res.delta_area, expected_delta, rtol=1e-12)
    assert res.objective_name == "test score (higher is better)"
    assert res.method == "test-recorder"
    # the three rules, from the reported numbers
    assert res.criterion == "pac" and res.best_k == k_values[int(np.argmin(res.pac))]
    by_objective = select_k(X, k_values, method="test-recorder", n_partitions=2, n_resamples=n_resamples,
                            subsample=0.7, random_state=11, criterion="objective")
    assert by_objective.best_k == 2 and "highest test score" in by_objective.reason  # 2 % 3 = 2 wins
    by_delta = select_k(X, k_values, method="test-recorder", n_partitions=2, n_resamples=n_resamples,
                        subsample=0.7, random_state=11, criterion="delta_area")
    assert by_delta.best_k == k_values[1 + int(np.argmax(res.delta_area[1:]))]


def test_grid_area_and_delta_helpers():
    grid = np.arange(101) / 100
    assert grid[0] == 0 and grid[-1] == 1 and grid[10] == 0.1 and grid[90] == 0.9
    # A perfectly stable matrix: a fraction p of the entries is 0, the rest 1.
    p = 0.7
    cdf = np.where(grid < 1, p, 1.0)[None, :]
    assert consensus_area(grid, cdf)[0] == pytest.approx(p * 0.99 + 0.01)
    np.testing.assert_allclose(delta_area([0.4, 0.6, 0.66]), [0.4, 0.5, 0.1])


@pytest.mark.parametrize("method", ["kcc", "hbgf"])
def test_well_separated_blobs_give_three(method):
    X, _ = blobs()
    res = select_k(X, range(2, 7), method=method, n_partitions=10, n_resamples=12, random_state=0)
    assert res.best_k == 3, res.summary()
    # hbgf's METIS cut of the bipartite graph is occasionally imperfect on a subsample (small
    # subsamples are below the size at which identical objects are merged into one vertex), so
    # allow some ambiguous pairs; K = 3 must still have the lowest PAC (asserted above).
    assert res.pac[res.k_values.tolist().index(3)] < (0.1 if method == "kcc" else 0.2)
    assert "lowest proportion of ambiguous clustering" in res.reason
    by_delta = select_k(X, range(2, 7), method=method, n_partitions=10, n_resamples=12, random_state=0,
                        criterion="delta_area")
    assert by_delta.best_k == 3 and by_delta.criterion == "delta_area"
    assert cclust.get("ari")(res.labels[3], blobs()[1]) > 0.95


def test_gaussian_mixture_from_datasets():
    from cclust.datasets import make_gaussian_mixture

    X, _ = make_gaussian_mixture(n_samples=90, n_features=2, n_clusters=3, variance_range=(0.01, 0.02),
                                 center_variance=4.0, random_state=2)
    res = select_k(X, range(2, 6), n_partitions=10, n_resamples=10, random_state=1)
    assert res.best_k == 3, res.summary()


def test_result_shapes_and_invariants():
    X, _ = blobs(n_per=10)
    res = select_k(X, [4, 2, 3, 3], n_partitions=5, n_resamples=4, random_state=0)
    np.testing.assert_array_equal(res.k_values, [2, 3, 4])
    assert res.k_values.dtype == np.int64
    g = res.cdf_grid
    assert g.dtype == np.float64 and g[0] == 0 and g[-1] == 1 and (np.diff(g) > 0).all()
    assert res.cdf.shape == (3, g.shape[0]) and res.area.shape == res.pac.shape == res.objective.shape == (3,)
    assert (np.diff(res.cdf, axis=1) >= 0).all() and np.allclose(res.cdf[:, -1], 1.0)
    assert ((res.pac >= 0) & (res.pac <= 1)).all()
    assert res.consensus_matrices is None
    assert set(res.labels) == {2, 3, 4} and all(v.dtype == np.int64 for v in res.labels.values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.best_k = 5
    text = res.summary()
    assert "delta area" in text and "PAC" in text and f"best K = {res.best_k}" in text
    # head, columns, one row per K, the choice, then the clusters at the chosen K: a title, columns, one per cluster
    assert len(text.splitlines()) == 2 + 3 + 1 + 2 + res.best_k
    json.dumps(res.to_dict())
    assert res.as_table()["k"] == [2, 3, 4]
    assert "best_k=" in repr(res)


def test_deterministic_across_n_jobs_and_k_range():
    X, _ = blobs(n_per=12)
    a = select_k(X, range(2, 5), n_partitions=6, n_resamples=5, random_state=5, n_jobs=1, keep_matrices=True)
    b = select_k(X, range(2, 5), n_partitions=6, n_resamples=5, random_state=5, n_jobs=2, keep_matrices=True)
    for field in ("cdf", "area", "delta_area", "pac", "objective"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    for k in a.k_values.tolist():
        np.testing.assert_array_equal(a.labels[k], b.labels[k])
        np.testing.assert_array_equal(a.consensus_matrices[k], b.consensus_matrices[k])
    # K's numbers depend on random_state and K only, not on the other K tried
    only3 = select_k(X, [3], n_partitions=6, n_resamples=5, random_state=5)
    assert only3.pac[0] == a.pac[1] and only3.area[0] == a.area[1]
    other = select_k(X, range(2, 5), n_partitions=6, n_resamples=5, random_state=6, keep_matrices=True)
    assert any(not np.array_equal(a.consensus_matrices[k], other.consensus_matrices[k], equal_nan=True)
               for k in (2, 3, 4))


def test_ensemble_input():
    X, y = blobs()
    E = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0)
    res = select_k(E, range(2, 6), method="kcc", n_resamples=10, random_state=0)
    assert res.best_k == 3, res.summary()
    # Identical partitions: every run returns that partition, so every entry is 0 or 1.
    same = Ensemble(np.column_stack([y] * 5))
    res = select_k(same, [3], method="kcc", n_resamples=6, subsample=0.6, keep_matrices=True, random_state=0)
    M = res.consensus_matrices[3]
    sampled = M > 0       # pairs drawn together and in one class; every other entry is 0
    np.testing.assert_array_equal(M[sampled], (y[:, None] == y[None, :])[sampled])
    assert not M[y[:, None] != y[None, :]].any()
    assert res.pac[0] == 0
    with pytest.raises(ValidationError, match="method 'wosp' needs the original features, but data is an Ensemble"):
        select_k(E, [2, 3], method="wosp")
    with pytest.raises(ValidationError, match="null='uniform' draws reference data sets like the features, but data "
                                              "is an Ensemble"):
        select_k(E, [2, 3], method="kcc", null="uniform")
    with pytest.raises(ValidationError, match="criterion='gap' clusters the features by k-means, but data is an "
                                              "Ensemble"):
        select_k(E, [2, 3], method="kcc", criterion="gap")


def test_dataframe_input_matches_array():
    pd = pytest.importorskip("pandas")
    X, _ = blobs(n_per=8)
    a = select_k(pd.DataFrame(X, columns=["a", "b"]), [2, 3], n_partitions=4, n_resamples=3, random_state=0)
    b = select_k(X, [2, 3], n_partitions=4, n_resamples=3, random_state=0)
    np.testing.assert_array_equal(a.pac, b.pac)


def test_input_not_mutated():
    X, _ = blobs(n_per=8)
    X.setflags(write=False)
    before = X.copy()
    params = {"utility": "uc"}
    select_k(X, [2, 3], n_partitions=4, n_resamples=3, method_params=params, random_state=0)
    np.testing.assert_array_equal(X, before)
    assert params == {"utility": "uc"}


def test_verbose_is_silent_off_a_terminal(capsys):
    X, _ = blobs(n_per=8)
    select_k(X, [2, 3], n_partitions=4, n_resamples=3, random_state=0, verbose=1)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.mark.parametrize("kwargs, message", [
    ({"k_range": [1, 2], "method": "kcc"}, r"k_range holds 1, but K = 1 \(no clusters\) can only be recommended"),
    ({"k_range": [0, 2]}, r"k_range must hold ints in \[1, n_samples=30\], got 0"),
    ({"k_range": [-3, 2]}, r"k_range must hold ints in \[1, n_samples=30\], got -3"),
    ({"k_range": [1]}, r"k_range must hold at least one K >= 2"),
    ({"k_range": [2, 31]}, r"k_range must hold ints in \[1, n_samples=30\], got 31"),
    ({"n_references": 1}, r"n_references must be an int in the range \[2, inf\], got 1"),
    ({"alpha": 0}, r"alpha must be a finite number in \(0, 1\), got 0"),
    ({"alpha": 1.5}, r"alpha must be a finite number in \(0, 1\), got 1.5"),
    ({"null": "permuted"}, r"null must be one of \['gaussian', 'uniform', 'auto'\] or None, got 'permuted'"),
    ({"gap_rule": "elbow", "criterion": "gap"}, r"gap_rule must be one of \['firstSEmax', 'Tibs2001SEmax'"),
    ({"criterion": "rcsi", "null": None}, r"criterion='rcsi' compares the data with a reference null"),
    ({"k_range": []}, "k_range must hold at least one K"),
    ({"k_range": "2-5"}, "k_range must be an iterable of ints"),
    ({"k_range": [2, 2.5]}, "k_range entries must be an int"),
    ({"subsample": 0}, r"subsample must be a finite number in \(0, 1\], got 0.0"),
    ({"subsample": 1.5}, r"subsample must be a finite number in \(0, 1\], got 1.5"),
    ({"subsample": 0.2, "k_range": [2, 8]}, "subsample=0.2 keeps 6 of the 30 objects, fewer than the 8 needed for K=8"),
    ({"n_resamples": 0}, r"n_resamples must be an int in the range \[1, inf\], got 0"),
    ({"n_partitions": 0}, r"n_partitions must be an int in the range \[1, inf\], got 0"),
    ({"criterion": "bic"}, r"criterion must be one of \['rcsi', 'pac', 'delta_area', 'objective', 'gap'\], got 'bic'"),
    ({"criterion": "delta_area", "k_range": [3]}, "criterion='delta_area' compares successive K"),
    ({"pac_interval": (0.9, 0.1)}, "pac_interval must satisfy 0 <= u1 < u2 <= 1"),
    ({"pac_interval": 0.5}, "pac_interval must be a pair"),
    ({"method_params": ["x"]}, "method_params must be a dict"),
    ({"method_params": {"n_clusters": 3}}, "method_params must not contain 'n_clusters'"),
    ({"random_state": -1}, "random_state must be a non-negative int"),
    ({"keep_matrices": "yes"}, "keep_matrices must be True or False"),
    ({"criterion": "objective", "method": "eac"}, "criterion='objective' needs to know whether"),
])
def test_bad_input(kwargs, message):
    X, _ = blobs(n_per=10)
    params = {"k_range": [2, 3], "n_partitions": 3, "n_resamples": 2, "random_state": 0, **kwargs}
    with pytest.raises(ValidationError, match=message):
        select_k(X, **params)


def test_bad_data_and_names():
    X, _ = blobs(n_per=10)
    with pytest.raises(UnknownNameError, match="Did you mean 'kcc'"):
        select_k(X, [2], method="kc")
    with pytest.raises(UnknownNameError, match="unknown generator name"):
        select_k(X, [2], generator="kmenas")
    with pytest.raises(ValidationError, match=r"data contains infinity \(first at row 0, column 0\)"):
        select_k(np.where(np.eye(30, 2) > 0, np.inf, X), [2])
    with pytest.raises(ValidationError, match="data must be 2-D"):
        select_k(X[:, 0], [2])


def test_memory_budget_refuses_before_allocating(monkeypatch):
    from cclust._monti import dense_bytes

    X, _ = blobs(n_per=10)  # n = 30
    need = dense_bytes(30, 2, [2, 3], False)
    with pytest.raises(MemoryBudgetError, match=r"select_k's consensus matrices of 30 objects.*matrix='sparse'"):
        select_k(X, [2, 3], max_bytes=need - 1, n_resamples=2, matrix="dense")
    assert select_k(X, [2, 3], max_bytes=need, n_resamples=2, random_state=0).route == "dense"
    # past the dense budget, "auto" takes the sparse route (when that one fits)
    import cclust._monti

    dense = cclust._monti.dense_bytes
    monkeypatch.setattr(cclust._monti, "dense_bytes", lambda n, *args: 10**12 if n == 30 else dense(n, *args))
    monkeypatch.setattr(cclust._monti, "LANDMARKS", 20)
    assert select_k(X, [2, 3], n_resamples=2, random_state=0).route == "sparse"
    monkeypatch.undo()
    with pytest.raises(MemoryBudgetError, match="select_k's consensus matrices"):
        select_k(X, [2, 3], max_bytes=need, keep_matrices=True, n_resamples=2, matrix="dense")
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "10000")
    with pytest.raises(MemoryBudgetError, match="CCLUST_MEMORY_BUDGET"):
        select_k(X, [2, 3], n_resamples=2, matrix="dense")


def test_select_k_refuses_fewer_distinct_rows_than_the_largest_k():
    import cclust
    from cclust.errors import ValidationError

    X = np.repeat(np.eye(3), 10, axis=0)
    with pytest.raises(ValidationError, match="data has only 3 distinct rows, fewer than max\\(k_range\\)=4"):
        cclust.select_k(X, range(2, 5), n_resamples=2, random_state=0)


def test_select_k_keys_labels_by_a_dataframe_index_and_fills_missing_features():
    import cclust
    from cclust.datasets import load_iris
    from cclust.errors import ValidationError

    pd = pytest.importorskip("pandas")
    X, _ = load_iris()
    df = pd.DataFrame(X[::5], index=[f"p{i}" for i in range(30)], columns=list("abcd"))
    result = cclust.select_k(df, [2, 3], n_resamples=3, random_state=0)
    assert result.index.equals(df.index) and result.to_dict()["index"][:2] == ["p0", "p1"]
    assert result.labels_series(3).index.equals(df.index)
    assert np.array_equal(result.labels_series().values, result.labels[result.best_k])
    assert "index" not in cclust.select_k(X[::5], [2, 3], n_resamples=3, random_state=0).to_dict()
    holed = df.copy()
    holed.iloc[4, 2] = np.nan
    with pytest.raises(ValidationError, match=r"row 'p4' \(position 4\), column 'c' \(position 2\)"):
        cclust.select_k(holed, [2, 3], n_resamples=3)
    filled = cclust.select_k(holed, [2, 3], n_resamples=3, random_state=0, missing_features="mean")
    assert filled.index.equals(df.index)


def test_a_method_that_makes_its_own_partitions_gets_no_generated_ones():
    calls = []

    def counting(X, n_clusters, *, n_partitions=10, random_state=None, n_jobs=None):
        calls.append(X.shape[0])
        return cclust.generate("kmeans", X, n_clusters, n_partitions=n_partitions, random_state=random_state)

    cclust.register("test-counting-generator", counting, kind="generator")
    try:
        X, _ = blobs(n_per=25)
        # the reference runs are resamples too: two of them check those as well as ten
        res = select_k(X, [2, 3], method="usenc", generator="test-counting-generator", n_resamples=3,
                       n_references=2, method_params={"k_range": (3, 6), "n_partitions": 5}, random_state=0)
    finally:
        cclust.registry.unregister("test-counting-generator")
    assert calls == []  # usenc makes its own partitions of each resample
    assert res.best_k in (2, 3)


def test_a_consensus_method_fit_generates_with_the_kmeans_default_at_scale():
    from cclust import generators

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (generators.FIT_ROWS_FROM + 1, 3))
    kw = dict(method="kcc", matrix="sparse", pair_tolerance=0.05, labels_from="fit", null=None, n_resamples=2,
              n_partitions=2, random_state=0)
    labels = select_k(X, [3], **kw).labels[3]   # the fit on all the objects: fit_rows="auto" samples
    assert np.array_equal(labels, select_k(X, [3], generator_params={"fit_rows": generators.FIT_ROWS}, **kw).labels[3])
    assert not np.array_equal(labels, select_k(X, [3], generator_params={"fit_rows": None}, **kw).labels[3])
    small = X[:generators.FIT_ROWS_FROM]        # at the threshold: every object
    assert np.array_equal(select_k(small, [3], **kw).labels[3],
                          select_k(small, [3], generator_params={"fit_rows": None}, **kw).labels[3])
