"""Weighted-object ensemble clustering (Ren et al. 2017): object weights, WOMC, WOSP, WOHB, WOKmeans."""
import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.graph import canonical_cluster_order, integer_edge_weights, meta_graph, partition_graph
from cclust.consensus_functions.graph import mcla
from cclust.consensus_functions.woec import memberships, object_weights, wohb, wokmeans, womc, wosp
from cclust.datasets import make_woec_toy
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.metrics import ari
from cclust.testing import same_partition

import reference_graph as ref

METHODS = {"womc": womc, "wosp": wosp, "wohb": wohb, "wokmeans": wokmeans}
NEEDS_X = ("wosp", "wohb", "wokmeans")


def data(rng, n=30, r=6, k=3, missing=0.0):
    truth = np.repeat(np.arange(k), n // k)
    X = np.column_stack([np.cos(2 * np.pi * truth / k), np.sin(2 * np.pi * truth / k)]) * 3
    X = X + rng.normal(scale=0.8, size=X.shape)
    labels = np.column_stack([np.where(rng.random(n) < 0.25, rng.integers(0, k + 1, size=n), truth)
                              for _ in range(r)])
    if missing:
        labels[rng.random(labels.shape) < missing] = -1
        labels[(labels < 0).all(axis=1), 0] = 0
    return X, truth, labels


def call(name, labels, k, X, **kw):
    return METHODS[name](labels, k, **({"X": X} if name in NEEDS_X else {}), **kw)


# -- object weights ---------------------------------------------------------------------------

@pytest.mark.parametrize("missing", [0.0, 0.15], ids=["complete", "missing"])
def test_object_weights_match_reference(seed, missing):
    rng = np.random.default_rng(seed)
    _, _, labels = data(rng, missing=missing)
    weights = rng.random(labels.shape[1]) + 0.5
    got = object_weights(Ensemble(labels, weights=weights))
    np.testing.assert_allclose(got, ref.object_weights(labels, weights), rtol=1e-10, atol=1e-12)
    assert (got > 0).all() and (got <= 1).all()


def test_object_weights_hand_computed():
    # Two objects always together and two always apart: A in {0, 1}, no confusion, w = e/(1+e).
    labels = np.array([[0, 0, 1, 1], [0, 0, 1, 1]]).T
    np.testing.assert_allclose(object_weights(labels), 0.01 / 1.01)
    # One of two partitions moves object 1: A[0,1] = A[1,2] = A[1,3] = 1/2.
    labels = np.array([[0, 0, 1, 1], [0, 1, 1, 1]]).T
    w = object_weights(labels, smoothing=0.5)
    # sum_j A_ij (1 - A_ij): object 1 is half-together with 0, 2 and 3; the others with 1 only.
    confusion = np.array([0.25, 0.75, 0.25, 0.25])
    np.testing.assert_allclose(w, (4 / 4 * confusion + 0.5) / 1.5)


# -- WOMC -------------------------------------------------------------------------------------

def test_womc_similarity_matches_eq5_and_figure3():
    # Ren et al. (2017, Fig. 3): C_i and C_j share 5 of 10 points, weights 0.8 x3, 0.2, 0.6 inside, 1.8 outside.
    w = np.array([0.8, 0.8, 0.8, 0.2, 0.6, 0.2, 0.2, 0.2, 0.8, 0.4])
    ci = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 0])   # 0..4 shared, 5..7 only in C_i
    cj = np.array([1, 1, 1, 1, 1, 0, 0, 0, 1, 1])   # 8, 9 only in C_j
    E = Ensemble(np.column_stack([ci, cj]))
    order, S = meta_graph(E, w)
    pos = {tuple(E.one_hot().toarray()[:, order][:, v].astype(int)): v for v in range(len(order))}
    a, b = pos[tuple(ci)], pos[tuple(cj)]
    assert S[a, b] == pytest.approx(3.2 / 5.0)
    _, S_binary = meta_graph(E)
    assert S_binary[a, b] == pytest.approx(0.5)


def test_womc_matches_reference(seed):
    rng = np.random.default_rng(seed)
    _, _, labels = data(rng)
    E = Ensemble(labels)
    w = object_weights(E)
    order, S = meta_graph(E, w)
    np.testing.assert_allclose(S.toarray(), ref.meta_similarity(labels, w)[np.ix_(order, order)], atol=1e-12)
    expected, _ = ref.mcla(E, 3, seed, object_w=w)
    assert same_partition(womc(E, 3, random_state=seed).labels, expected)


def test_womc_with_equal_weights_is_mcla(seed):
    rng = np.random.default_rng(seed)
    _, _, labels = data(rng)
    E = Ensemble(labels)
    equal = np.full(E.n_samples, 0.3)
    np.testing.assert_allclose(meta_graph(E, equal)[1].toarray(), meta_graph(E)[1].toarray(), atol=1e-12)
    assert np.array_equal(womc(E, 3, object_weights=equal, random_state=seed).labels,
                          mcla(E, 3, random_state=seed).labels)


# -- WOSP / WOHB ------------------------------------------------------------------------------

@pytest.mark.parametrize("t", [None, 2.0], ids=["t-default", "t-fixed"])
def test_memberships_match_reference_and_sum_to_one(seed, t):
    rng = np.random.default_rng(seed)
    X, _, labels = data(rng, missing=0.1)
    E = Ensemble(labels)
    w = object_weights(E)
    P, ts = memberships(X, E, w, t=t)
    P_ref, ts_ref = ref.memberships(X, labels, w, t=t)
    np.testing.assert_allclose(P, P_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ts, ts_ref, rtol=1e-10)
    for j in range(E.n_partitions):
        np.testing.assert_allclose(P[:, E.offsets[j]:E.offsets[j + 1]].sum(axis=1), 1.0, atol=1e-12)


def test_wosp_matches_reference(seed):
    rng = np.random.default_rng(seed)
    X, _, labels = data(rng)
    weights = rng.random(labels.shape[1]) + 0.5
    E = Ensemble(labels, weights=weights)
    w = object_weights(E)
    S = ref.wosp_similarity(X, labels, w, weights)
    np.fill_diagonal(S, 0.0)
    # Same integer graph as the fast path (float32 similarity) gives the same labels.
    expected, _ = partition_graph(S, 3, random_state=np.random.default_rng(seed))
    result = wosp(E, 3, X=X, random_state=seed)
    np.testing.assert_allclose(result.extras["object_weights"], w)
    iu = np.triu_indices_from(S, 1)
    from cclust.consensus_functions.woec import _canonical_memberships

    P, part_of, _ = _canonical_memberships(X, E, w, None)
    Q = np.hstack([P[:, part_of == j] / np.linalg.norm(P[:, part_of == j], axis=1, keepdims=True)
                   * np.sqrt(E.weights[j]) for j in range(E.n_partitions)])
    np.testing.assert_allclose((Q @ Q.T)[iu], S[iu], atol=1e-12)
    fast = (Q.astype(np.float32) @ Q.astype(np.float32).T)
    if np.array_equal(integer_edge_weights(fast[iu]), integer_edge_weights(S[iu])):
        assert same_partition(result.labels, expected)
    assert ari(result.labels, expected) > 0.8


def test_wohb_matches_reference(seed):
    rng = np.random.default_rng(seed)
    X, _, labels = data(rng)
    E = Ensemble(labels)
    w = object_weights(E)
    P, _ = ref.memberships(X, labels, w)
    M = (P / E.n_partitions)[:, canonical_cluster_order(E)]
    W = np.block([[np.zeros((M.shape[0],) * 2), M], [M.T, np.zeros((M.shape[1],) * 2)]])
    parts, _ = partition_graph(W, 3, random_state=np.random.default_rng(seed))
    result = wohb(E, 3, X=X, random_state=seed)
    if np.unique(parts[:M.shape[0]]).shape[0] == 3:
        assert same_partition(result.labels, parts[:M.shape[0]])


def _edge_bound_case(seed):
    """Random X (some rows repeated, so that identical membership rows merge), random labels,
    partition weights equal, random or nearly zero for some, and sharp to soft widths."""
    rng = np.random.default_rng(seed)
    n, r, d = int(rng.integers(200, 700)), int(rng.integers(2, 8)), int(rng.integers(1, 4))
    distinct = max(5, n // int(rng.choice([1, 3, 20])))
    X = (rng.normal(size=(distinct, d)) * 3)[rng.integers(0, distinct, size=n)]
    labels = np.column_stack([rng.integers(0, int(rng.integers(2, 60)), size=n) for _ in range(r)])
    E = Ensemble(labels, weights=rng.random(r) ** int(rng.choice([0, 1, 8])))
    return X, E, object_weights(E), [None, 0.01, 100.0][seed % 3], int(rng.integers(2, 4))


@pytest.mark.parametrize("case", range(12))
def test_wohb_edge_bound_is_at_most_the_exact_count(case):
    from cclust.consensus_functions.woec import _MembershipGraph, _MembershipModel, _wohb_edges_lower_bound

    X, E, w, t, k = _edge_bound_case(case)
    bound = _wohb_edges_lower_bound(X, E, w, t)
    graph = _MembershipGraph(_MembershipModel(X, E, w, t), k)
    graph.require_memory(None)
    assert 0 < bound <= graph.n_edges


def test_wohb_refuses_on_the_bound_before_the_membership_passes(monkeypatch):
    from cclust.consensus_functions import _object_weights

    rng = np.random.default_rng(0)
    X, _, labels = data(rng, n=3000, r=20, k=3)
    passes = []
    rows = _object_weights._MembershipModel.rows
    monkeypatch.setattr(_object_weights._MembershipModel, "rows",
                        lambda self, chosen: passes.append(1) or rows(self, chosen))
    # Every object keeps at least one edge a partition: 60000 edges, 7.7 MB at 128 bytes each.
    with pytest.raises(MemoryBudgetError) as info:
        wohb(labels, 3, X=X, max_bytes=4_000_000, random_state=0)
    message = str(info.value)
    assert "the WOHB bipartite graph of 3000 objects" in message
    assert "needs at least" in message and "counted from the memberships in one base clustering" in message
    assert "pass a max_bytes above" in message and "hbgf" in message
    assert not passes, "the membership rows were computed before the refusal"
    # Near the budget the bound fits and the exact count decides, in its own words.
    bound = int(message.split("(at least ")[1].split()[0])
    with pytest.raises(MemoryBudgetError, match=r"edges of non-zero weight\) needs about"):
        wohb(labels, 3, X=X, max_bytes=128 * bound, random_state=0)
    assert passes


def test_wosp_sparse_route_with_all_neighbours_is_the_dense_graph(seed):
    rng = np.random.default_rng(seed)
    X, _, labels = data(rng)
    dense = wosp(labels, 3, X=X, random_state=seed)
    full = wosp(labels, 3, X=X, n_neighbors=labels.shape[0] - 1, random_state=seed)
    assert np.array_equal(dense.labels, full.labels)


# -- WOKmeans ---------------------------------------------------------------------------------

def test_wokmeans_matches_reference(seed):
    rng = np.random.default_rng(seed)
    X, _, labels = data(rng)
    E = Ensemble(labels)
    w = object_weights(E)
    result = wokmeans(E, 3, X=X, init="random", n_init=1, random_state=seed)
    start = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=3, replace=False))
    expected, centres = ref.weighted_kmeans(X, w, X[start])
    assert same_partition(result.labels, expected)
    np.testing.assert_allclose(np.sort(result.extras["centers"], axis=0), np.sort(centres, axis=0), atol=1e-10)


# -- the Ren et al. (2017) toys -----------------------------------------------------------------------------

@pytest.mark.parametrize("i, n, k", [(1, 450, 3), (2, 900, 3), (3, 1500, 5)])
def test_make_woec_toy(i, n, k):
    X, y = make_woec_toy(i, random_state=0)
    assert X.shape == (n, 2) and np.bincount(y).tolist() == [n // k] * k
    X2, _ = make_woec_toy(i, random_state=0)
    assert np.array_equal(X, X2)


def test_make_woec_toy_bad_index():
    with pytest.raises(ValidationError, match="i must be 1, 2 or 3"):
        make_woec_toy(4)


def test_toy2_wosp_and_wohb_beat_mcla():
    # Ren et al. (2017, Table 2), Toy2: the shifting-centre methods separate the sparse lower disc better.
    X, y = make_woec_toy(2, random_state=1)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    a = cclust.generate("subsample", X, 3, n_partitions=10, random_state=0, n_jobs=1)
    b = cclust.generate("subspace", X, 3, n_partitions=10, fraction=1.0, random_state=1, n_jobs=1)
    E = Ensemble(np.column_stack([a.labels, b.labels]))
    # The papers' equal-size cuts (sizes="equal"), which 003's numbers are for; the default
    # sizes="auto" keeps the estimated cut for wosp here (ARI 0.951).
    scores = {name: ari(cclust.get(name)(E, 3, random_state=0, sizes="equal",
                                         **({"X": X} if name in NEEDS_X else {})).labels, y)
              for name in ("mcla", "wosp", "wohb")}
    assert scores["wosp"] > 0.97 and scores["wohb"] > 0.97
    assert scores["wosp"] > scores["mcla"] and scores["wohb"] > scores["mcla"]


# -- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NEEDS_X)
def test_X_with_other_n(name):
    X, _, labels = data(np.random.default_rng(0))
    with pytest.raises(ValidationError, match="X has 29 rows but the ensemble labels 30 objects"):
        METHODS[name](labels, 3, X=X[:-1])


@pytest.mark.parametrize("name", NEEDS_X)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_X_not_finite(name, bad):
    X, _, labels = data(np.random.default_rng(0))
    X[3, 1] = bad
    with pytest.raises(ValidationError, match="X contains NaN or infinity"):
        METHODS[name](labels, 3, X=X)


@pytest.mark.parametrize("name", NEEDS_X)
def test_X_missing(name):
    _, _, labels = data(np.random.default_rng(0))
    with pytest.raises(ValidationError, match="X is required"):
        METHODS[name](labels, 3, X=None)


@pytest.mark.parametrize("name", sorted(METHODS))
@pytest.mark.parametrize("k", [1, 31])
def test_bad_n_clusters(name, k):
    X, _, labels = data(np.random.default_rng(0))
    with pytest.raises(ValidationError, match="n_clusters must be an int in the range"):
        call(name, labels, k, X)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_single_cluster_partitions_are_refused(name):
    X, _, _ = data(np.random.default_rng(0))
    with pytest.raises(ValidationError, match="every partition puts all objects in one cluster"):
        call(name, np.zeros((30, 3), dtype=int), 2, X)


def test_memory_budget():
    X, _, labels = data(np.random.default_rng(0))
    with pytest.raises(MemoryBudgetError, match=r"bytes.*n_neighbors"):
        wosp(labels, 3, X=X, max_bytes=1000)
    labels = labels.copy()
    labels[0, 0] = -1  # missing labels: rows of the co-association in chunks, never n x n
    E = Ensemble(labels)
    A = E.coassociation().copy()
    np.fill_diagonal(A, 1.0)
    expected = (4.0 / E.n_samples * (A * (1.0 - A)).sum(axis=1) + 0.01) / 1.01
    np.testing.assert_allclose(object_weights(labels, max_bytes=1000), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"smoothing": 0.0}, "smoothing must be a finite number"),
    ({"t": -1.0}, "t must be a finite number"),
    ({"object_weights": np.zeros(30)}, "object_weights must be finite and positive"),
    ({"object_weights": np.ones(5)}, "object_weights must have one entry per object"),
])
def test_bad_parameters(kwargs, match):
    X, _, labels = data(np.random.default_rng(0))
    with pytest.raises(ValidationError, match=match):
        wosp(labels, 3, X=X, **kwargs)


def test_missing_labels_are_handled(seed):
    rng = np.random.default_rng(seed)
    X, truth, labels = data(rng, missing=0.2)
    for name in METHODS:
        result = call(name, labels, 3, X, random_state=seed)
        assert result.n_clusters == 3
        assert ari(result.labels, truth) > 0.5


def test_womc_balance_objects_runs_and_bad_balance_is_refused():
    import cclust
    from cclust.errors import ValidationError

    X, y = cclust.datasets.load_iris()
    E = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0)
    res = cclust.get("womc")(E, 3, balance="objects", random_state=0)
    assert res.n_clusters == 3 and res.extras["balance"] == "objects"
    with pytest.raises(ValidationError, match="balance"):
        cclust.get("womc")(E, 3, balance="sizes", random_state=0)
