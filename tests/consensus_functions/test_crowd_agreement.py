"""WEAC and GP-MGLA (Huang, Lai & Wang 2015) against the literal references of
``tests/reference_crowd_agreement.py``, hand-computed cases, and bad input."""
import math

import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.consensus_functions.crowd_agreement import gp_mgla, mgla_graph, ncai, sact, weac, weighted_coassociation
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.graph import tcut
import reference_crowd_agreement as ref
from factories import noisy_labels, noisy_labels_with_truth, same_partition

WEIGHTED = pytest.mark.parametrize("weighted", [False, True], ids=["equal", "weighted"])


def _ensemble(rng, weighted, n=24, r=5):
    L = noisy_labels(rng, n=n, r=r)
    w = rng.uniform(0.5, 2.0, size=r) if weighted else None
    return L, w


# -- hand-computed cases -------------------------------------------------------------------------

def test_hand_computed_ncai_and_weights():
    # pi_1 = pi_2 (NMI 1); pi_3 = {0,2 | 1,3} is independent of both (NMI 0).
    L = np.array([[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 1]])
    np.testing.assert_allclose(ncai(L), [1.0, 1.0, 0.0])
    S = weighted_coassociation(L, beta=2.0)
    # pi_3 weighs 0: objects 0 and 1 agree in every partition that counts.
    assert S[0, 1] == pytest.approx(1.0) and S[0, 2] == pytest.approx(0.0)
    # beta = 0: the plain co-association.
    np.testing.assert_allclose(weighted_coassociation(L, beta=0.0), Ensemble(L).coassociation())


def test_nmi_normalised_by_the_larger_entropy():
    # pi_1 = {0,1 | 2,3}, pi_2 = {0 | 1 | 2,3}: I = log 2, H_1 = log 2, H_2 = 1.5 log 2 -> NMI 2/3
    # (the square-root normalisation would give 0.816). CAI_1 = (2/3 + 1) / 2 with pi_3 = pi_1.
    L = np.array([[0, 0, 0], [0, 1, 0], [1, 2, 1], [1, 2, 1]])
    cai = np.array([(2 / 3 + 1) / 2, (2 / 3 + 2 / 3) / 2, (2 / 3 + 1) / 2])
    np.testing.assert_allclose(ncai(L), cai / cai.max())


def test_hand_computed_sact():
    # pi_1 = {0,1 | 2,3}, pi_2 = {0,1 | 2 | 3}; equal NCAI (u = 1 each, see below).
    # J(A, a) = 1, J(B, b) = J(B, c) = 1/2, others 0. SACT sums: A-a: min over k in {A, a} = 2;
    # diagonal of A: J(A,A) + J(a,A) = 2; B-b: k = B gives min(1, 1/2), k = b gives min(1/2, 1): 1;
    # b-c: only k = B links both: min(1/2, 1/2) = 1/2. Maximum 2.
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 2]])
    u = ref.partition_weights(L, 2.0)
    assert u[0] == pytest.approx(u[1])
    S = sact(L)
    assert S[0, 2] == pytest.approx(1.0)
    assert S[1, 3] == pytest.approx(0.5)
    assert S[3, 4] == pytest.approx(0.25)
    assert S[0, 1] == 0.0 and S[3, 3] == 1.0


# -- against the literal references --------------------------------------------------------------

@WEIGHTED
def test_quantities_match_the_reference(rng, weighted):
    L, w = _ensemble(rng, weighted)
    E = Ensemble(L, weights=w)
    if not weighted:
        np.testing.assert_allclose(ncai(E), ref.ncai(L), atol=1e-12)
    np.testing.assert_allclose(weighted_coassociation(E, 1.5), ref.weighted_coassociation(L, 1.5, w), atol=1e-12)
    np.testing.assert_allclose(sact(E, 1.5), ref.sact(L, 1.5, w), atol=1e-12)
    np.testing.assert_allclose(mgla_graph(E, 0.3, 1.5).toarray(), ref.mgla_graph(L, 0.3, 1.5, w), atol=1e-12)


@WEIGHTED
def test_extras_match_the_reference(rng, weighted):
    L, w = _ensemble(rng, weighted)
    E = Ensemble(L, weights=w)
    res = weac(E, 3)
    np.testing.assert_allclose(res.extras["coassociation"], ref.weighted_coassociation(L, 2.0, w), atol=1e-12)
    np.testing.assert_allclose(res.extras["weights"], ref.partition_weights(L, 2.0, w), atol=1e-12)
    res = gp_mgla(E, 3, random_state=0)
    np.testing.assert_allclose(res.extras["sact"], ref.sact(L, 2.0, w), atol=1e-12)
    np.testing.assert_allclose(res.extras["graph"].toarray(), ref.mgla_graph(L, 0.5, 2.0, w), atol=1e-12)


@pytest.mark.parametrize("method", ["average", "complete", "single"])
def test_weac_equals_scipy_linkage_of_the_full_matrix(rng, method):
    # Duplicated rows make microclusters; the object-level dendrogram must give the same cut.
    L = noisy_labels(rng, n=30, r=5)
    L = np.vstack([L, L[:10]])
    cuts = ref.untied_cuts(1.0 - ref.weighted_coassociation(L, 2.0), method, range(2, 8))
    assert len(cuts) >= 2
    for k, expected in cuts:
        assert same_partition(weac(L, k, linkage=method).labels, expected), (method, k)


def test_gp_mgla_is_the_transfer_cut_of_the_literal_graph(rng):
    L = noisy_labels(rng, n=30, r=5)
    L = np.vstack([L, L[:8]])                    # microclusters: rows counted by their number
    n = L.shape[0]
    B = ref.mgla_graph(L, 0.5, 2.0)
    U, values = ref.tcut_object_embedding(B, n, 3)
    res = gp_mgla(L, 3, random_state=0)
    np.testing.assert_allclose(np.sort(res.extras["eigenvalues"]), np.sort(values), atol=1e-9)
    rows = B.shape[0]
    expected = tcut(B, 3, groups=(np.arange(rows), np.arange(n), np.ones(rows)), random_state=0)
    # k-means on the same object embedding (up to the sign of the eigenvectors) from the same seed.
    assert same_partition(res.labels, expected.labels)
    from cclust.metrics import kmeans_objective
    assert kmeans_objective(U, res.labels) == pytest.approx(res.objective, rel=1e-6)


def test_recovers_the_truth_of_a_clean_ensemble(rng):
    L, truth = noisy_labels_with_truth(rng, n=60, r=10, k=3, noise=0.1)
    for res in (weac(L, 3), gp_mgla(L, 3, random_state=0)):
        assert cclust.get("ari")(res.labels, truth) > 0.9


def test_a_partition_disagreeing_with_all_others_is_silenced():
    # Five copies of the truth and one partition unrelated to it: the odd one gets weight ~0.
    truth = np.repeat([0, 1, 2], 10)
    odd = np.tile([0, 1], 15)
    L = np.column_stack([truth] * 5 + [odd])
    res = weac(L, 3)
    assert res.extras["weights"][-1] < 0.05 and same_partition(res.labels, truth)


def test_identical_label_rows_are_one_microcluster():
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 2]])
    assert weac(L, 2).extras["n_microclusters"] == 3


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [weac, gp_mgla])
def test_refuses_missing_labels(fn):
    L = np.array([[0, 0], [0, -1], [1, 1], [1, 1]])
    with pytest.raises(ValidationError, match="missing labels"):
        fn(L, 2)


@pytest.mark.parametrize("fn", [weac, gp_mgla])
def test_refuses_one_partition_and_one_cluster(fn):
    with pytest.raises(ValidationError, match="at least two"):
        fn(np.array([[0], [0], [1], [1]]), 2)
    with pytest.raises(ValidationError, match="one cluster"):
        fn(np.zeros((4, 3), dtype=int), 2)


@pytest.mark.parametrize("kwargs, match", [
    ({"beta": -1.0}, "beta"), ({"beta": np.nan}, "beta"), ({"linkage": "ward"}, "linkage"),
    ({"n_clusters": 1}, "n_clusters"), ({"n_clusters": 5}, "distinct label vectors")])
def test_weac_bad_parameters(kwargs, match):
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 2], [2, 2], [2, 2]])
    kwargs = {"n_clusters": 2, **kwargs}
    with pytest.raises(ValidationError, match=match):
        weac(L, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 0.0}, "alpha"), ({"alpha": -1.0}, "alpha"), ({"beta": -0.5}, "beta"),
    ({"n_init": 0}, "n_init"), ({"n_clusters": 7}, "clusters in the ensemble")])
def test_gp_mgla_bad_parameters(kwargs, match):
    # eight distinct label rows, six clusters: K = 7 has no seventh eigenvector.
    L = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)])
    kwargs = {"n_clusters": 2, **kwargs}
    with pytest.raises(ValidationError, match=match):
        gp_mgla(L, **kwargs)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_compiled_sums_equal_the_numpy_loops_bit_for_bit(rng, threads):
    """SACT's sums and the weighted co-association in the compiled cores against the NumPy loops
    they replaced: the same terms added in the same order, so equal bit for bit, for any threads."""
    from cclust._ext import _crowd_agreement
    from cclust.consensus_functions.crowd_agreement import _jaccard

    L = noisy_labels(rng, n=150, r=7, k=5, noise=0.35)
    E = Ensemble(L)
    J = _jaccard(E)
    J.sort_indices()
    w = np.repeat(rng.random(7) + 0.1, E.n_clusters)
    got = _crowd_agreement.sact(J.indptr.astype(np.int64), J.indices.astype(np.int32), J.data, w, threads)
    np.testing.assert_array_equal(got, ref.sact_sums_loop(J, w))
    share = rng.random(7)
    rows = np.arange(0, E.n_samples, 2, dtype=np.int64)
    got = _crowd_agreement.weighted_coassociation(E.compact_labels(), rows, E.n_clusters.astype(np.int64), share,
                                                  threads)
    np.testing.assert_array_equal(got, ref.weighted_block_loop(E.labels[rows].astype(np.int64), share))


def test_compiled_cores_refuse_bad_indices():
    from cclust._ext import _crowd_agreement

    with pytest.raises(ValueError, match="unsorted or out-of-range"):
        _crowd_agreement.sact(np.array([0, 2, 3], dtype=np.int64), np.array([1, 0, 0], dtype=np.int32),
                              np.ones(3), np.ones(2), 1)
    with pytest.raises(ValueError, match="label 3 of row 1 in partition 0"):
        _crowd_agreement.weighted_coassociation(np.array([[0], [3]], dtype=np.int32), np.array([0, 1], dtype=np.int64),
                                                np.array([2], dtype=np.int64), np.ones(1), 1)


def test_weac_refuses_past_the_memory_budget(rng):
    L = noisy_labels(rng, n=300, r=6)
    with pytest.raises(MemoryBudgetError, match="gp-mgla"):
        weac(L, 3, max_bytes=10_000)


def test_inputs_are_not_mutated(rng):
    L = noisy_labels(rng, n=30, r=5)
    copy = L.copy()
    weac(L, 3)
    gp_mgla(L, 3, random_state=0)
    np.testing.assert_array_equal(L, copy)
    assert math.isfinite(weac(L, 3).objective)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int32])
def test_weighted_coassociation_kernel_reads_every_code_width_in_place(dtype):
    """The compiled sums over chosen rows of the stored codes, against a reference adding the
    shares partition by partition in the same order (so equal to the last bit)."""
    from cclust._ext._crowd_agreement import weighted_coassociation as kernel

    rng = np.random.default_rng(0)
    sizes = np.array([3, 7, 2, 5, 4], dtype=np.int64)
    codes = np.column_stack([rng.integers(0, k, 60) for k in sizes]).astype(dtype)
    rows = np.array([5, 0, 59, 5, 17, 33, 2], dtype=np.int64)
    share = rng.random(sizes.shape[0])
    expected = np.zeros((rows.shape[0], rows.shape[0]))
    for j in range(sizes.shape[0]):
        column = codes[rows, j]
        expected += np.where(column[:, None] == column[None, :], share[j], 0.0)
    before = codes.copy()
    assert np.array_equal(kernel(codes, rows, sizes, share, 2), expected)
    assert np.array_equal(codes, before)
    missing = codes.copy()
    missing[17, 1] = np.iinfo(dtype).max if dtype != np.int32 else -1
    with pytest.raises(ValueError, match="label -1 of row 17 in partition 1"):
        kernel(missing, rows, sizes, share, 1)
    with pytest.raises(ValueError, match="row 60 is outside"):
        kernel(codes, np.array([60], dtype=np.int64), sizes, share, 1)


# -- the graph and the overlaps from the label codes ---------------------------------------------

def _wide_labels(rng, n, r, k_low, k_high, repeat=0):
    """Noisy refinements of 4 classes with K_i in [k_low, k_high]: many clusters, so that the
    transfer cut of the MGLA graph takes the Lanczos route; ``repeat`` rows appended again."""
    y = rng.integers(0, 4, size=n)
    columns = []
    for _ in range(r):
        per = int(rng.integers(k_low, k_high + 1)) // 4
        column = y * per + rng.integers(0, per, size=n)
        noisy = rng.random(n) < 0.1
        column[noisy] = rng.integers(0, 4 * per, size=int(noisy.sum()))
        columns.append(column)
    L = np.column_stack(columns)
    return np.vstack([L, L[:repeat]])


@pytest.mark.parametrize("widest", [12, 300], ids=["uint8", "uint16"])
def test_jaccard_from_the_codes_is_the_one_hots_to_the_last_bit(widest):
    """The overlap counts from the compiled pass are those of ``B^T B``, so the Jaccard
    similarities equal the one-hot's, divided alike, bit for bit, in E's cluster numbering."""
    import scipy.sparse as sp
    from cclust.consensus_functions.crowd_agreement import _jaccard

    rng = np.random.default_rng(widest)
    L = np.column_stack([rng.integers(0, k, 500) for k in (3, 8, widest, 5)])
    E = Ensemble(L)
    B = E.one_hot()
    O = (B.T @ B).tocsr()
    O.sort_indices()
    sizes = np.asarray(B.sum(axis=0)).reshape(-1)
    rows = np.repeat(np.arange(O.shape[0]), np.diff(O.indptr))
    expected = O.data / (sizes[rows] + sizes[O.indices] - O.data)
    J = _jaccard(E)
    assert J.has_sorted_indices and isinstance(J, sp.csr_matrix)
    np.testing.assert_array_equal(J.indptr, O.indptr)
    np.testing.assert_array_equal(J.indices, O.indices)
    np.testing.assert_array_equal(J.data, expected)


@pytest.mark.parametrize("some_rows", [False, True], ids=["every-object", "some-rows"])
def test_graph_from_the_codes_is_the_one_hot_product(rng, some_rows):
    """The objects' rows written from the label codes are those of the one-hot times the
    diagonal of the weights, entry for entry and in the product's order within a row."""
    import scipy.sparse as sp
    from cclust.consensus_functions.crowd_agreement import _graph, _sact

    L = noisy_labels(rng, n=80, r=6, k=4)
    E = Ensemble(L)
    u = rng.uniform(0.2, 2.0, size=E.n_partitions)
    S = _sact(E, u)
    rows = np.array([3, 0, 17, 50, 79]) if some_rows else None
    one_hot = E.one_hot() if rows is None else E.one_hot()[rows]
    objects = one_hot @ sp.diags(0.5 * np.repeat(u, E.n_clusters))
    G = _graph(E, u, S, 0.5, rows=rows)
    m = objects.shape[0]
    np.testing.assert_array_equal(G.toarray(), np.vstack([objects.toarray(), S]))
    for x in (0, m - 1):
        got = G.indices[G.indptr[x]:G.indptr[x + 1]]
        np.testing.assert_array_equal(got, objects.indices[objects.indptr[x]:objects.indptr[x + 1]])


@pytest.mark.parametrize("repeat", [0, 40], ids=["distinct", "repeated-rows"])
def test_lanczos_route_reads_the_codes_and_gives_the_sparse_graphs_cut(repeat, monkeypatch):
    """Past the dense route (here about 900 clusters with a dense SACT matrix) the transfer cut
    reads the objects' rows from the label codes and SACT's non-zero entries below them
    (LabelGraph with extra rows); the cut of the CSR graph on the same route is the same
    partition with the same eigenvalues (the products differ in the last bits only)."""
    from cclust.consensus_functions import crowd_agreement
    from cclust.graph import _tcut

    rng = np.random.default_rng(repeat)
    L = _wide_labels(rng, 300, 30, 20, 40, repeat)
    seen = []
    original = crowd_agreement.tcut

    def spy(B, *args, **kwargs):
        seen.append(B)
        return original(B, *args, **kwargs)

    monkeypatch.setattr(crowd_agreement, "tcut", spy)
    res = gp_mgla(L, 4, random_state=0)
    graph = seen[0]
    assert isinstance(graph, _tcut.LabelGraph) and graph.extra_rows is not None
    E = Ensemble(L).canonical()
    groups = E.distinct_rows()
    m = E.n_samples if groups is None else groups[0].shape[0]
    assert graph.shape == (m + int(E.offsets[-1]), int(E.offsets[-1]))
    assert graph.codes.flags.writeable == (groups is not None)    # every object: the stored codes, read-only
    B = graph.tocsr()
    first, inverse, counts = groups if groups is not None else (np.arange(m), np.arange(m), np.ones(m))
    rows = (first, inverse, np.concatenate([counts, np.ones(int(E.offsets[-1]))]))
    expected = original(B, 4, groups=rows, random_state=0)
    assert same_partition(res.labels, expected.labels)
    np.testing.assert_allclose(res.extras["eigenvalues"], expected.eigenvalues, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.objective, expected.objective, rtol=1e-9)


def test_gp_mgla_counts_the_overlaps_only_where_their_bound_does_not_fit(rng, monkeypatch):
    """Where the Jaccard CSR of every pair of clusters that can overlap fits the budget, no pass
    counts the overlapping pairs and the figure with their exact number is asked once the
    overlap table knows it; just below that bound they are counted first (and the call gives
    the same labels or refuses a later structure)."""
    from cclust.consensus_functions.crowd_agreement import _CSR_ENTRY_BYTES, _overlap_bound
    from cclust.graph import _meta
    from cclust.validation import recorded_memory_requests

    L = noisy_labels(rng, n=300, r=6)
    E = Ensemble(L)
    overlaps = int(_meta.cluster_overlaps(E)[0])
    sizes = E.n_clusters
    bound = int(sizes.sum()) ** 2 - int((sizes ** 2).sum()) + int(sizes.sum())
    assert _overlap_bound(E) == bound and overlaps <= bound
    counted = []
    real = _meta.cluster_overlaps
    monkeypatch.setattr(_meta, "cluster_overlaps", lambda *a, **k: counted.append(1) or real(*a, **k))
    with recorded_memory_requests() as asked:
        free = gp_mgla(L, 3, random_state=0, max_bytes=2**40)
    assert counted == []
    assert asked[0] + _CSR_ENTRY_BYTES * overlaps in asked      # the SACT with the exact CSR
    try:
        tight = gp_mgla(L, 3, random_state=0, max_bytes=asked[0] + _CSR_ENTRY_BYTES * bound - 1)
    except MemoryBudgetError:
        tight = None
    assert counted == [1]
    if tight is not None:
        np.testing.assert_array_equal(tight.labels, free.labels)
