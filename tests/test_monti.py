"""select_k's default, Monti et al.'s protocol as ConsensusClusterPlus (CCP) runs it: the consensus
matrix, its CDF/area/PAC, the final labels, item and cluster consensus, the sparse route."""
import numpy as np
import pytest

import cclust
from cclust import select_k
from cclust import _monti
from cclust.errors import ValidationError
from cclust.result import ConsensusResult


def blobs(n_per=20, centres=((0, 0), (5, 0), (0, 5)), scale=0.5, seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(c, scale, (n_per, 2)) for c in centres]), np.repeat(np.arange(len(centres)), n_per)


# -- slow, literal references --------------------------------------------------------------------

def reference_matrix(L):
    """CCP's ccRun: co-clustered / co-sampled counts per pair, 0 if never drawn together."""
    n, H = L.shape
    M = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            drawn = sum(1 for h in range(H) if L[i, h] >= 0 and L[j, h] >= 0)
            same = sum(1 for h in range(H) if L[i, h] >= 0 and L[i, h] == L[j, h])
            M[i, j] = same / drawn if drawn else 0.0
    return M


def reference_icl(M, labels):
    """CCP's calcICL, loop for loop: m(k) over the pairs i < j of cluster k; m_i(k) over the
    members j != i of cluster k (denominator n_k - 1 for a member, n_k otherwise)."""
    n = len(labels)
    K = max(labels) + 1
    cluster = np.full(K, np.nan)
    item = np.full((n, K), np.nan)
    for c in range(K):
        items = [i for i in range(n) if labels[i] == c]
        nk = len(items)
        if nk > 1:
            cluster[c] = sum(M[a][b] for a in items for b in items if a < b) / (nk * (nk - 1) / 2)
        for e in range(n):
            denom = nk - 1 if e in items else nk
            if denom > 0:
                item[e, c] = sum(M[e][j] for j in items if j != e) / denom
    return item, cluster


def test_hand_computed_fixture():
    # 3 objects, 4 resamples (-1: not drawn). Pairs: (0,1) drawn together in resamples 0, 1 and
    # together in 0: 1/2; (0,2) drawn in 0, 1, 3, never together: 0; (1,2) drawn in 0, 1, 2,
    # together in 1, 2: 2/3.
    L = np.array([[0, 0, -1, 1], [0, 1, 0, -1], [1, 1, 0, 0]], dtype=np.int32)
    out = _monti.dense_consensus(L, 2, _monti.sampled_counts(L), (0.1, 0.9), True)
    np.testing.assert_allclose(out.matrix, [[1, 0.5, 0], [0.5, 1, 2 / 3], [0, 2 / 3, 1]], atol=1e-15)
    # CDF: 1/3 below 0.5, 2/3 below 2/3, then 1 (grid points j/100: 0..49, 50..66, 67..100)
    expected_cdf = np.array([1 / 3] * 50 + [2 / 3] * 17 + [1.0] * 34)
    np.testing.assert_allclose(out.cdf, expected_cdf, atol=1e-15)
    area = 0.01 * (49 / 3 + 17 * 2 / 3 + 34)                 # CCP: sum_j 0.01 * CDF(j / 100), j >= 1
    assert cclust.selection.consensus_area(_monti.GRID, out.cdf)[0] == pytest.approx(area, abs=1e-12)
    assert out.pac == pytest.approx(2 / 3)                    # 0.5 and 2/3 lie in (0.1, 0.9]
    # average linkage of 1 - M: {1, 2} merge at 1/3, object 0 stays alone
    np.testing.assert_array_equal(out.labels, [0, 1, 1])
    np.testing.assert_allclose(out.item, [[np.nan, 0.25], [0.5, 2 / 3], [0.0, 2 / 3]], atol=1e-15)
    np.testing.assert_allclose(out.cluster, [np.nan, 2 / 3], atol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dense_consensus_against_references(seed):
    rng = np.random.default_rng(seed)
    n, H, k = 23, 9, 3
    L = rng.integers(0, k, size=(n, H)).astype(np.int32)
    L[rng.random((n, H)) < 0.25] = -1
    out = _monti.dense_consensus(L, k, _monti.sampled_counts(L), (0.2, 0.8), True)
    M = reference_matrix(L)
    np.fill_diagonal(M, (L >= 0).any(axis=1).astype(float))
    np.testing.assert_allclose(out.matrix, M, atol=1e-12)
    entries = M[np.triu_indices(n, 1)]
    np.testing.assert_allclose(out.cdf, [(entries <= x).mean() for x in _monti.GRID], atol=1e-12)
    assert out.pac == pytest.approx(((entries > 0.2) & (entries <= 0.8)).mean())
    item, cluster = reference_icl(M, out.labels.tolist())
    np.testing.assert_allclose(out.item, item, atol=1e-12)
    np.testing.assert_allclose(out.cluster, cluster, atol=1e-12)
    # the numbering follows the first object of each cluster, as R's cutree
    assert out.labels[0] == 0 and len(np.unique(out.labels)) == k


@pytest.mark.parametrize("table", [True, False], ids=["count-table", "pair-by-pair"])
@pytest.mark.parametrize("n,H,k", [(2, 1, 1), (31, 7, 3), (40, 1, 2), (57, 12, 5)])
def test_dense_consensus_entries_cdf_and_pac_are_the_literal_doubles(monkeypatch, table, n, H, k):
    # both ways of counting the CDF and PAC (a tally of the count pairs, or every pair's entry
    # binned on its own) give the counts of the literal doubles together / sampled of every pair,
    # intervals ending on entries included, and the matrix holds those doubles
    if not table:
        monkeypatch.setattr(_monti, "_COUNT_TABLE_CELLS", 0)
    rng = np.random.default_rng(n * H + k)
    L = rng.integers(0, k, size=(n, H)).astype(np.int32)
    L[rng.random((n, H)) < 0.3] = -1
    i, j = np.triu_indices(n, 1)
    entries = reference_matrix(L)[i, j]
    for interval in ((0.1, 0.9), (0.0, 1.0), (0.5, 2 / 3)):
        out = _monti.dense_consensus(L, k, _monti.sampled_counts(L), interval, True)
        assert np.array_equal(out.matrix[i, j], 1.0 - (1.0 - entries))
        cdf = np.array([np.count_nonzero(entries <= x) for x in _monti.GRID]) / entries.size
        assert np.array_equal(out.cdf, cdf)
        assert out.pac == np.count_nonzero((entries > interval[0]) & (entries <= interval[1])) / entries.size


def _literal_pac(L, interval):
    """PAC by the definition, pair by pair: together / sampled over the resamples (0 for a pair
    never drawn together), the share of pairs i < j in (low, high]."""
    low, high = interval
    n = L.shape[0]
    inside = 0
    for i in range(n):
        for j in range(i + 1, n):
            both = (L[i] >= 0) & (L[j] >= 0)
            sampled = int(both.sum())
            together = int((both & (L[i] == L[j])).sum())
            value = together / sampled if sampled else 0.0
            inside += low < value <= high
    return inside / (n * (n - 1) // 2)


@pytest.mark.parametrize("seed", range(6))
def test_the_reference_pac_is_the_pair_loop_value(seed):
    # the compiled count behind the reference null's PAC against the definition, with objects
    # left out of resamples, pairs never drawn together and entries exactly on the interval's ends
    rng = np.random.default_rng(seed)
    n, H, k = int(rng.integers(2, 60)), int(rng.integers(1, 12)), int(rng.integers(1, 5))
    L = rng.integers(0, k, size=(n, H))
    L[rng.random((n, H)) < rng.uniform(0.0, 0.7)] = -1
    for interval in ((0.1, 0.9), (0.0, 1.0), (0.25, 0.5)):
        expected = _literal_pac(L, interval)
        assert _monti.pac_only(L, interval) == expected
    # the count is an integer: the same for any thread count
    from cclust._ext import _distances

    labels = np.ascontiguousarray(L, dtype=np.int32)
    assert _distances.consensus_pairs_in(labels, 0.1, 0.9, 1) == _distances.consensus_pairs_in(labels, 0.1, 0.9, 2)


@pytest.mark.parametrize("shape", ["byte-labels", "wide-labels", "many-resamples"])
def test_the_reference_pair_count_is_the_pair_loop_value_for_any_labels(shape):
    # labels below 127 with at most 255 resamples are counted as bytes; larger labels or more
    # resamples by the general loop: both give the count of the definition
    rng = np.random.default_rng(7)
    n, H = (40, 9) if shape != "many-resamples" else (12, 300)
    L = rng.integers(0, 3, size=(n, H))
    if shape == "wide-labels":
        L = L + 125                       # 125, 126, 127: a label past the byte range
    L[rng.random((n, H)) < 0.3] = -1
    labels = np.ascontiguousarray(L, dtype=np.int32)
    from cclust._ext import _distances

    for interval in ((0.1, 0.9), (0.0, 1.0), (1 / 3, 0.5)):
        expected = round(_literal_pac(L, interval) * (n * (n - 1) // 2))
        assert _distances.consensus_pairs_in(labels, *interval, 1) == expected
        assert _distances.consensus_pairs_in(labels, *interval, 2) == expected


def test_select_k_result_matches_references():
    X, _ = blobs(n_per=12, scale=1.2)
    res = select_k(X, [2, 3, 4], n_resamples=15, keep_matrices=True, random_state=3)
    for row, k in enumerate(res.k_values.tolist()):
        M = res.consensus_matrices[k]
        item, cluster = reference_icl(M, res.labels[k].tolist())
        np.testing.assert_allclose(res.item_consensus[k], item, atol=1e-12)
        np.testing.assert_allclose(res.cluster_consensus[k], cluster, atol=1e-12)
        entries = M[np.triu_indices(M.shape[0], 1)]
        assert res.pac[row] == pytest.approx(((entries > 0.1) & (entries <= 0.9)).mean())


def test_inner_kmeans_is_the_kmeans_generator_at_exactly_k():
    X, _ = blobs()
    samples = _monti.draw_resamples(X.shape[0], 3, 0.8, np.random.default_rng(0))
    runs = _monti.inner_labels(X, samples, [2, 4], "kmeans", 7, 2)
    for k in (2, 4):
        seeds = np.random.SeedSequence(7, spawn_key=(k,)).generate_state(3, dtype=np.uint32)
        for h, idx in enumerate(samples):
            E = cclust.generate("kmeans", X[idx], k, n_partitions=1, k_range=(k, k), random_state=int(seeds[h]),
                                max_iter=100, kmeanspp_trials=None)
            np.testing.assert_array_equal(runs[k][idx, h], E.labels[:, 0])
            assert (np.delete(runs[k][:, h], idx) == -1).all()


def test_inner_hierarchical_cuts_the_average_linkage_tree():
    from scipy.cluster.hierarchy import cut_tree, linkage

    X, _ = blobs(scale=1.5)
    samples = _monti.draw_resamples(X.shape[0], 2, 0.8, np.random.default_rng(1))
    runs = _monti.inner_labels(X, samples, [2, 3, 5], "hierarchical", 0, 1)
    for h, idx in enumerate(samples):
        expected = cut_tree(linkage(X[idx], "average"), n_clusters=[2, 3, 5])
        for col, k in enumerate((2, 3, 5)):
            assert cclust.get("ari")(runs[k][idx, h], expected[:, col]) == 1.0


@pytest.mark.parametrize("inner", ["kmeans", "hierarchical"])
def test_the_plain_protocol_finds_three_blobs_and_is_deterministic(inner):
    X, y = blobs()
    a = select_k(X, range(2, 6), inner=inner, random_state=0, n_jobs=1, null=None)
    b = select_k(X, range(2, 6), inner=inner, random_state=0, n_jobs=2, null=None)
    assert a.method == "monti" and a.inner == inner and a.n_resamples == 100
    # average linkage merges the same two blobs in every resample, so K = 2 ties K = 3 at PAC 0
    # (and the tie goes to the smaller K); k-means splits them differently from run to run
    assert a.pac[1] == a.pac.min() and a.best_k == (3 if inner == "kmeans" else 2)
    assert cclust.get("ari")(a.labels[3], y) == 1.0
    assert np.nanmin(a.cluster_consensus[3]) > 0.95
    np.testing.assert_array_equal(a.pac, b.pac)
    for k in a.k_values.tolist():
        np.testing.assert_array_equal(a.labels[k], b.labels[k])
    assert "monti (" + inner + ")" in a.summary()


def reference_pooled(L, members, member_labels, k):
    """The pooled item consensus, pair by pair: for object i and cluster c, the co-clustering
    counts summed over the members j != i of c, over their co-sampling counts."""
    n, H = L.shape
    item = np.full((n, k), np.nan)
    for i in range(n):
        for c in range(k):
            others = [j for j, cj in zip(members, member_labels) if cj == c and j != i]
            if not others:
                continue
            same = sum(1 for j in others for h in range(H) if L[i, h] >= 0 and L[i, h] == L[j, h])
            drawn = sum(1 for j in others for h in range(H) if L[i, h] >= 0 and L[j, h] >= 0)
            item[i, c] = same / drawn if drawn else 0.0
    return item


def test_sparse_route_agrees_with_dense():
    X, y = blobs(n_per=40, scale=0.9)
    dense = select_k(X, range(2, 6), n_resamples=40, random_state=0)
    sparse = select_k(X, range(2, 6), n_resamples=40, random_state=0, matrix="sparse", keep_matrices=True)
    assert sparse.route == "sparse" and dense.route == "dense"
    # n = 120 < 2000 landmarks and 7140 pairs, fewer than the 10^6 the tolerance asks: every pair
    # is read, so the CDF and PAC are the dense route's and the labels too
    assert sparse.n_pairs == dense.n_pairs == 7140
    np.testing.assert_array_equal(sparse.pac, dense.pac)
    np.testing.assert_array_equal(sparse.cdf, dense.cdf)
    assert not sparse.pac_se.any() and not sparse.area_se.any() and "±" not in sparse.summary().splitlines()[1]
    for k in dense.k_values.tolist():
        np.testing.assert_array_equal(sparse.labels[k], dense.labels[k])
        # pooled ratios against CCP's mean of ratios: close, not equal (subsample < 1)
        np.testing.assert_allclose(sparse.item_consensus[k], dense.item_consensus[k], atol=0.01)
        A = sparse.consensus_matrices[k]
        assert A.shape == (120, 120) and A.nnz > 0
    assert sparse.best_k == dense.best_k == 3


def test_sparse_item_consensus_is_ccps_when_every_object_is_drawn():
    # with every object in every resample each pair is drawn H times: pooled = mean of ratios
    X, _ = blobs(n_per=8, scale=1.5)
    full = select_k(X, [2, 3], n_resamples=12, subsample=1.0, random_state=1, matrix="sparse", null=None)
    exact = select_k(X, [2, 3], n_resamples=12, subsample=1.0, random_state=1, null=None)
    for k in (2, 3):
        np.testing.assert_allclose(full.item_consensus[k], exact.item_consensus[k], rtol=0, atol=1e-12)
        np.testing.assert_allclose(full.cluster_consensus[k], exact.cluster_consensus[k], rtol=0, atol=1e-12)


def test_pooled_item_consensus_against_the_pair_loop_with_objects_missing():
    rng = np.random.default_rng(3)
    L = rng.integers(0, 3, size=(15, 9))
    L[rng.random(L.shape) < 0.3] = -1
    L[4] = -1                                  # an object never drawn
    members = np.array([0, 2, 3, 4, 7, 8, 11, 14])
    member_labels = np.array([0, 1, 0, 1, 1, 2, 0, 1])  # cluster 2 has one member: NaN for it
    got = _monti.pooled_item_consensus(L, members, member_labels, 3)
    np.testing.assert_allclose(got, reference_pooled(L, members.tolist(), member_labels.tolist(), 3),
                               rtol=0, atol=1e-12)
    assert np.isnan(got[8, 2]) and got[4, 0] == 0.0     # drawn with no member: 0, as CCP's M = 0
    # cluster consensus: the pooled ratio over the pairs of members
    labels = rng.integers(0, 3, size=15)
    item, cluster = _monti.pooled_cluster_consensus(L, labels, 3)
    for c in range(3):
        idx = np.flatnonzero(labels == c)
        same = sum(int(L[i, h] >= 0 and L[i, h] == L[j, h]) for a, i in enumerate(idx) for j in idx[a + 1:]
                   for h in range(9))
        drawn = sum(int(L[i, h] >= 0 and L[j, h] >= 0) for a, i in enumerate(idx) for j in idx[a + 1:]
                    for h in range(9))
        if idx.size < 2:
            assert np.isnan(cluster[c])
        else:
            assert cluster[c] == pytest.approx(same / drawn if drawn else 0.0, abs=1e-12)


def test_sampled_pairs_estimate_pac_without_bias_within_their_standard_error():
    # 200 independent pair samples of 400 pairs from one label matrix: the z-scores of the PAC
    # and area estimates against the exact values have mean 0 and variance 1. A biased estimate
    # or a standard error off by 30% fails (the mean's sd is 0.07, the variance's about 0.1).
    rng = np.random.default_rng(5)
    n, H, k = 300, 20, 4
    truth = rng.integers(0, k, n)
    L = np.where(rng.random((n, H)) < 0.7, truth[:, None], rng.integers(0, k, (n, H)))
    L[rng.random((n, H)) < 0.2] = -1
    everything = _monti.draw_pairs(n, 1e-6, rng)
    exact = _monti.sparse_consensus(L, k, (0.1, 0.9), everything, True, np.arange(50), _monti.sampled_counts(L[:50]),
                                    False, 0, 1)
    assert exact.pac_se == exact.area_se == 0.0
    tolerance = 0.5 / np.sqrt(400)           # 400 pairs
    z_pac, z_area = [], []
    for seed in range(200):
        pairs = _monti.draw_pairs(n, tolerance, np.random.default_rng(seed))
        assert pairs[0].shape[0] == 400 and (pairs[0] != pairs[1]).all()
        values = _monti.pair_values(L, *pairs)
        pac = np.count_nonzero((values > 0.1) & (values <= 0.9)) / 400
        z_pac.append((pac - exact.pac) / _monti.proportion_se(pac, 400, False))
        terms = _monti._area_terms(values)
        z_area.append((terms.mean() - cclust.selection.consensus_area(_monti.GRID, exact.cdf)[0])
                      / (terms.std(ddof=1) / 20))
    for z in (np.array(z_pac), np.array(z_area)):
        assert abs(z.mean()) < 0.3 and 0.6 < z.var() < 1.5


@pytest.mark.parametrize("bad, match", [(0, "pair_tolerance"), (-0.1, "pair_tolerance"), (0.5, "pair_tolerance"),
                                        ("small", "pair_tolerance must be a real number")])
def test_pair_tolerance_must_be_in_zero_to_one_half(bad, match):
    X, _ = blobs(n_per=5)
    with pytest.raises(ValidationError, match=match):
        select_k(X, [2, 3], n_resamples=3, matrix="sparse", pair_tolerance=bad)


def test_pair_tolerance_with_the_dense_route_is_refused():
    X, _ = blobs(n_per=5)
    with pytest.raises(ValidationError, match="pair_tolerance applies to the sparse route"):
        select_k(X, [2, 3], n_resamples=3, matrix="dense", pair_tolerance=0.01)


def test_the_sparse_route_reports_its_standard_errors():
    X, _ = blobs(n_per=30, scale=1.2)      # 90 objects, 4005 pairs; 0.02 asks for 625
    res = select_k(X, [2, 3, 4], n_resamples=20, random_state=0, matrix="sparse", pair_tolerance=0.02, null=None)
    assert res.n_pairs == 625 and (res.pac_se > 0).all() and (res.pac_se <= 0.02).all()
    assert (res.area_se > 0).all() and (res.area_se <= 0.02).all()
    shrunk = (res.pac * 625 + 1) / 627        # a PAC of 0 (K = 3 here) keeps a standard error
    np.testing.assert_allclose(res.pac_se, np.sqrt(shrunk * (1 - shrunk) / 625))
    text = res.summary()
    assert "estimated from 625 random object pairs" in text and f"{res.pac[0]:.4f} ± {res.pac_se[0]:.4f}" in text
    table = res.as_table()
    assert table["pac_se"] == res.pac_se.tolist() and table["area_se"] == res.area_se.tolist()
    exact = select_k(X, [2, 3, 4], n_resamples=20, random_state=0, null=None)
    assert np.all(np.abs(res.pac - exact.pac) <= 4 * np.maximum(res.pac_se, 1e-3))


def test_sparse_route_with_few_landmarks(monkeypatch):
    monkeypatch.setattr(_monti, "LANDMARKS", 40)
    X, y = blobs(n_per=40)
    res = select_k(X, [2, 3, 4], n_resamples=30, random_state=0, matrix="sparse")
    assert res.best_k == 3 and cclust.get("ari")(res.labels[3], y) == 1.0
    assert res.item_consensus[3].shape == (120, 3)


@pytest.fixture
def k_recorder():
    seen = []

    def gen(X, n_clusters, *, n_partitions=10, random_state=None, n_jobs=None, k_range=None):
        """Test generator: records the K it is asked for and its k_range."""
        seen.append((n_clusters, k_range))
        return cclust.generate("kmeans", X, n_clusters, n_partitions=n_partitions, random_state=random_state)

    cclust.register("test-k-recorder", gen, kind="generator")
    yield seen
    cclust.registry.unregister("test-k-recorder")


def test_generator_params_per_k(k_recorder):
    X, _ = blobs(n_per=8)
    select_k(X, [2, 3], method="kcc", generator="test-k-recorder", n_partitions=3, n_resamples=2, random_state=0,
             generator_params=lambda k: {"k_range": (k, 2 * k)})
    assert set(k_recorder) == {(2, (2, 4)), (3, (3, 6))}
    with pytest.raises(ValidationError, match=r"generator_params must not fix k_range=\(3, 3\).*function of K"):
        select_k(X, [2, 3], method="kcc", generator_params={"k_range": (3, 3)})
    with pytest.raises(ValidationError, match=r"generator_params\(2\) must be a dict"):
        select_k(X, [2, 3], method="kcc", generator_params=lambda k: [k])


def test_consensus_method_labels_from(k_recorder):
    X, y = blobs(n_per=10)
    by_matrix = select_k(X, [2, 3], method="kcc", n_partitions=5, n_resamples=6, random_state=0)
    by_fit = select_k(X, [2, 3], method="kcc", n_partitions=5, n_resamples=6, random_state=0, labels_from="fit")
    np.testing.assert_array_equal(by_matrix.pac, by_fit.pac)
    full = cclust.consensus("kcc", cclust.generate("kmeans", X, 3, n_partitions=5, random_state=0), 3)
    assert isinstance(full, ConsensusResult)
    assert cclust.get("ari")(by_matrix.labels[3], y) == 1.0
    assert by_matrix.inner is None and by_matrix.method == "kcc"


@pytest.mark.parametrize("kwargs, message", [
    ({"inner": "pam"}, r"inner must be one of \['kmeans', 'hierarchical'\], got 'pam'"),
    ({"labels_from": "full"}, r"labels_from must be 'consensus' or 'fit', got 'full'"),
    ({"labels_from": "fit"}, "labels_from='fit' takes the labels of a consensus method"),
    ({"matrix": "csr"}, r"matrix must be one of \['auto', 'dense', 'sparse'\], got 'csr'"),
    ({"criterion": "objective"}, "criterion='objective' reads a consensus method's own criterion"),
    ({"subsample": 1.2}, r"subsample must be a finite number in \(0, 1\]"),
    ({"subsample": 0}, r"subsample must be a finite number in \(0, 1\]"),
])
def test_bad_input(kwargs, message):
    X, _ = blobs(n_per=5)
    with pytest.raises(ValidationError, match=message):
        select_k(X, [2, 3], n_resamples=2, **kwargs)


def test_ensemble_needs_a_consensus_method():
    X, _ = blobs(n_per=5)
    E = cclust.generate("kmeans", X, 3, n_partitions=4, random_state=0)
    with pytest.raises(ValidationError, match="method='monti' clusters the objects' features, but data is an Ensemble"):
        select_k(E, [2, 3])


def test_plots_render(tmp_path):
    pytest.importorskip("matplotlib")
    from cclust.plotting import plot_consensus_heatmap, plot_tracking

    X, _ = blobs(n_per=15)
    res = select_k(X, [2, 3, 4], n_resamples=10, random_state=0, keep_matrices=True)
    fig = plot_consensus_heatmap(res, max_objects=30)
    assert "subsample of 30" in fig.axes[2].get_title()
    fig.savefig(tmp_path / "heatmap.png", dpi=50)
    ax = plot_tracking(res)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["2", "3", "4"]
    ax.figure.savefig(tmp_path / "tracking.png", dpi=50)
    with pytest.raises(ValidationError, match="keep_matrices=True"):
        plot_consensus_heatmap(select_k(X, [2, 3], n_resamples=3, random_state=0))
    with pytest.raises(ValidationError, match=r"k must be one of the K tried \[2, 3, 4\], got 7"):
        plot_consensus_heatmap(res, 7)


def test_cli_json_and_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import json

    from cclust.cli import main

    assert main(["select-k", "iris", "--k-range", "2", "4", "--resamples", "20", "--format", "json",
                 "--plot", str(tmp_path / "k.png")]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["method"] == "monti" and record["inner"] == "kmeans" and record["n_resamples"] == 20
    rows = [r for r in record["cluster_consensus"] if r["k"] == record["best_k"]]
    assert len(rows) == record["best_k"] and all(0 <= r["cluster_consensus"] <= 1 for r in rows)
    assert len(record["item_consensus"]) == 150 * (2 + 3 + 4)
    assert {p.name for p in tmp_path.iterdir()} == {"k.png", "k-heatmap.png", "k-tracking.png", "k-clusters.png"}
    assert main(["select-k", "iris", "--k-range", "2", "3", "--resamples", "5", "--inner", "hierarchical"]) == 0
    assert "monti (hierarchical)" in capsys.readouterr().out
    assert main(["select-k", "iris", "--k-range", "2", "3", "--method-param", "utility=uh"]) != 0
    assert "--method-param applies to a consensus method" in capsys.readouterr().err


def _literal_distance(x, y, distance):
    """R's dist() and 1 - cor() for one pair, written out coordinate by coordinate."""
    d = len(x)
    if distance in ("pearson", "spearman"):
        if distance == "spearman":
            from scipy.stats import rankdata

            x, y = rankdata(x), rankdata(y)
        mx, my = sum(x) / d, sum(y) / d
        sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
        sxx = sum((a - mx) ** 2 for a in x)
        syy = sum((b - my) ** 2 for b in y)
        return 1 - sxy / (sxx * syy) ** 0.5
    if distance in ("euclidean", "minkowski"):
        return sum((a - b) ** 2 for a, b in zip(x, y)) ** 0.5
    if distance == "maximum":
        return max(abs(a - b) for a, b in zip(x, y))
    if distance == "manhattan":
        return sum(abs(a - b) for a, b in zip(x, y))
    if distance == "binary":
        either = [(a != 0) or (b != 0) for a, b in zip(x, y)]
        one = [(a != 0) != (b != 0) for a, b in zip(x, y)]
        return sum(one) / sum(either) if any(either) else 0.0
    terms = [abs(a - b) / (abs(a) + abs(b)) for a, b in zip(x, y) if abs(a) + abs(b) > 0]  # canberra
    return sum(terms) * d / len(terms) if terms else 0.0


@pytest.mark.parametrize("distance", ["euclidean", "pearson", "spearman", "maximum", "manhattan", "canberra",
                                      "binary", "minkowski"])
def test_the_distances_of_consensusclusterplus_match_their_definitions(distance):
    from cclust import _monti

    rng = np.random.default_rng(5)
    R = rng.normal(size=(7, 6))
    R[0, 1] = R[1, 1] = 0.0    # a coordinate zero in both rows (binary, canberra leave it out)
    R[2, :3] = 0.0
    got = _monti.pairwise_distances(R, distance)
    want = [_literal_distance(R[i].tolist(), R[j].tolist(), distance) for i in range(7) for j in range(i + 1, 7)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_consensusclusterplus_default_protocol_pearson_average_linkage():
    # ConsensusClusterPlus's defaults: clusterAlg="hc", distance="pearson", average inner and
    # final linkage; objects that differ by profile, not by level, are what Pearson separates
    rng = np.random.default_rng(0)
    profiles = rng.normal(size=(3, 12))
    X = np.vstack([p * rng.uniform(0.5, 3) + rng.uniform(-5, 5) + rng.normal(0, 0.2, 12)
                   for p in profiles for _ in range(15)])
    y = np.repeat(np.arange(3), 15)
    res = select_k(X, range(2, 6), inner="hierarchical", distance="pearson", null=None, n_resamples=30,
                   random_state=0)
    assert res.best_k == 3 and cclust.get("ari")(res.labels[3], y) == 1.0
    euclid = select_k(X, [3], inner="hierarchical", null=None, n_resamples=30, random_state=0)
    assert cclust.get("ari")(euclid.labels[3], y) < 0.9  # levels and scales mislead Euclidean distances
    complete = select_k(X, [3], inner="hierarchical", distance="pearson", inner_linkage="complete",
                        final_linkage="complete", null=None, n_resamples=10, random_state=0)
    assert complete.labels[3].shape == (45,)
    with pytest.raises(ValidationError, match="distance='pearson' is the distance of the hierarchical"):
        select_k(X, [3], distance="pearson", null=None)
    with pytest.raises(ValidationError, match="distance must be one of"):
        select_k(X, [3], inner="hierarchical", distance="cosine", null=None)
    with pytest.raises(ValidationError, match="final_linkage must be one of"):
        select_k(X, [3], final_linkage="ward.D", null=None)
