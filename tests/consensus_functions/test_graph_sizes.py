"""The ``sizes`` machinery of the graph methods on the label codes: the estimate's passes
against their one-hot formulas, the KCC fine cut where METIS would not fit, and the memory
check that comes before any cut."""
import numpy as np
import pytest
import scipy.sparse as sp

import cclust
import cclust.graph._sizes as sizes_module
from cclust import Ensemble
from cclust.errors import MemoryBudgetError
from cclust.graph import (
    bipartite_bytes,
    cut_with_sizes,
    estimate_clusters,
    estimate_route,
    hbgf_graph,
    partition_bipartite_groups,
    separated_coassociation,
)
from cclust.graph._tcut import LabelGraph
from cclust.metrics import ari
from cclust.testing import easy_ensemble, same_partition
from cclust.validation import recorded_memory_requests


# -- slow references: the one-hot formulas the code route replaces ------------------------------

def _indicator(labels, n_groups):
    n = labels.shape[0]
    return sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_groups, n))


def ref_separated(E, labels):
    B, Bw = E.one_hot(), E.one_hot(weighted=True)
    ind = _indicator(np.asarray(labels, dtype=np.int64), int(labels.max()) + 1)
    within = float((ind @ Bw).multiply(ind @ B).sum())
    total = float(np.asarray(Bw.sum(axis=0)).ravel() @ np.asarray(B.sum(axis=0)).ravel())
    return max(0.0, 1.0 - within / total)


def ref_move(E, labels, n_groups, passes):
    """Every object to the group of highest mean co-association, from the dense n x n matrix."""
    A = (E.one_hot(weighted=True) @ E.one_hot().T).toarray()
    n = labels.shape[0]
    for _ in range(passes):
        score = np.full((n, n_groups), -1.0)
        for x in range(n):
            for g in range(n_groups):
                members = np.flatnonzero(labels == g)
                members = members[members != x]
                if members.size:
                    score[x, g] = A[x, members].sum() / members.size
        best = score.argmax(axis=1)
        moved = np.where(score[np.arange(n), labels] >= score[np.arange(n), best], labels, best)
        if np.array_equal(moved, labels):
            break
        labels = moved
    used, labels = np.unique(labels, return_inverse=True)
    return labels.ravel(), used.shape[0]


def ref_linkage(E, labels, n_groups, n_clusters):
    """UPGMA on the groups from the dense co-association: merge the pair of highest mean."""
    A = (E.one_hot(weighted=True) @ E.one_hot().T).toarray()
    clusters = {g: list(np.flatnonzero(labels == g)) for g in range(n_groups)}
    while len(clusters) > n_clusters:
        keys = sorted(clusters)
        best, pair = -np.inf, None
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                mean = A[np.ix_(clusters[a], clusters[b])].mean()
                if mean > best:
                    best, pair = mean, (a, b)
        clusters[pair[0]] += clusters.pop(pair[1])
    final = np.empty(n_groups, dtype=np.int64)
    for new, key in enumerate(sorted(clusters)):
        for g in set(labels[clusters[key]].tolist()):
            final[g] = new
    return final


def coded_ensemble(code_width, missing, weighted, seed=0):
    """Noisy partitions of 4 classes of 330 objects; uint16 codes when a partition has 300
    clusters; some labels missing; irregular partition weights."""
    rng = np.random.default_rng(seed)
    n, r = 330, 8
    truth = np.repeat(np.arange(4), [150, 80, 60, 40])
    L = np.column_stack([np.where(rng.random(n) < 0.2, rng.integers(0, 6, size=n), truth) for _ in range(r)])
    if code_width == "uint16":
        L[:, -1] = np.arange(n) % 300
    if missing:
        head = L[:, :-1]  # the last partition keeps its 300 clusters
        head[rng.random(head.shape) < 0.15] = -1
    weights = rng.random(r) + 0.3 if weighted else None
    E = Ensemble(L, weights=weights)
    assert E.compact_labels().dtype == np.dtype(code_width)
    return E, truth


CASES = [(width, missing, weighted) for width in ("uint8", "uint16") for missing in (False, True)
         for weighted in (False, True)]
IDS = [f"{w}-{'missing' if m else 'complete'}-{'weighted' if v else 'equal'}" for w, m, v in CASES]


@pytest.mark.parametrize("width, missing, weighted", CASES, ids=IDS)
def test_separated_coassociation_equals_the_one_hot_formula(width, missing, weighted):
    E, truth = coded_ensemble(width, missing, weighted)
    for labels in (truth, np.random.default_rng(1).integers(0, 5, size=E.n_samples)):
        assert separated_coassociation(E, labels) == pytest.approx(ref_separated(E, labels), rel=1e-12, abs=1e-15)
        assert separated_coassociation(E, labels, n_jobs=1) == separated_coassociation(E, labels, n_jobs=2)


@pytest.mark.parametrize("width, missing, weighted", CASES, ids=IDS)
def test_moves_and_linkage_equal_the_dense_references(width, missing, weighted):
    E, truth = coded_ensemble(width, missing, weighted)
    start = np.random.default_rng(2).integers(0, 9, size=E.n_samples)
    own = LabelGraph.of(E, sizes_module._column_weights(E)).matvec(np.ones(int(E.offsets[-1])))
    assert np.allclose(own, np.diag((E.one_hot(weighted=True) @ E.one_hot().T).toarray()))
    for passes in (1, 3):
        got = sizes_module._move_to_best_average(E, own, start, 9, passes, 2)
        want = ref_move(E, start, 9, passes)
        assert got[1] == want[1] and np.array_equal(got[0], want[0])
    groups, n_groups = sizes_module._move_to_best_average(E, own, start, 9, 1, 1)
    assert np.array_equal(sizes_module._average_linkage(E, groups, n_groups, 3, 2),
                          ref_linkage(E, groups, n_groups, 3))


@pytest.mark.parametrize("width, missing, weighted", CASES, ids=IDS)
def test_estimate_on_the_codes_equals_the_one_hot_estimate(width, missing, weighted):
    """The METIS route, steps 2-4 written with the reference formulas, gives the same labels."""
    E, truth = coded_ensemble(width, missing, weighted)
    k, n_parts = 4, 12
    G, groups, by_rank = hbgf_graph(E, n_parts)
    fine, _, _ = partition_bipartite_groups(G, groups, by_rank.max(), n_parts, random_state=np.random.default_rng(5),
                                            ufactor=None)
    fine = np.unique(fine, return_inverse=True)[1].ravel()
    purified, n_groups = ref_move(E, fine, int(fine.max()) + 1, 1)
    labels = ref_linkage(E, purified, n_groups, k)[purified]
    settled, _ = ref_move(E, labels, k, 1)
    got = estimate_clusters(E, k, random_state=np.random.default_rng(5))
    assert np.array_equal(got, settled)
    assert np.array_equal(estimate_clusters(E, k, random_state=np.random.default_rng(5), n_jobs=1), got)


# -- the fine cut: METIS where its graph fits the budget, KCC otherwise -------------------------

def test_route_threshold_is_hbgf_figure_of_the_merged_graph():
    # Every row eight times: HBGF merges them (at most n / (64 * 12) = 3 a vertex here), so the
    # figure is counted on the merged graph.
    E, _ = coded_ensemble("uint8", True, True)
    E = Ensemble(np.tile(np.asarray(E.labels), (8, 1)), weights=E.weights)
    n_parts = 12
    G, _, _ = hbgf_graph(E, n_parts)
    exact = bipartite_bytes(G.nnz)
    assert G.nnz < int((np.asarray(E.labels) >= 0).sum())  # merging shrank it
    assert estimate_route(E, 4, max_bytes=exact) == "metis"
    assert estimate_route(E, 4, max_bytes=exact - 1) == "kcc"


def test_kcc_fine_cut_gives_a_valid_estimate(monkeypatch):
    _, y, E = easy_ensemble(600, 4, ratio=3, n_partitions=20, seed=1)
    est = estimate_clusters(E, 4, random_state=0, max_bytes=1 << 10)
    assert est.dtype == np.int64 and est.shape == (600,)
    assert same_partition(est, y)
    assert np.array_equal(estimate_clusters(E, 4, random_state=0, max_bytes=1 << 10), est)
    # The KCC fine cut runs on the small budget only, into 3 * 4 parts.
    calls = []
    original = sizes_module._kcc_fine_cut

    def counting(ensemble, n_parts, *args):
        calls.append(n_parts)
        return original(ensemble, n_parts, *args)

    monkeypatch.setattr(sizes_module, "_kcc_fine_cut", counting)
    estimate_clusters(E, 4, random_state=0, max_bytes=1 << 10)
    estimate_clusters(E, 4, random_state=0)
    assert calls == [12]


def test_kcc_fine_cut_with_few_distinct_label_vectors():
    # 5 distinct label vectors, 3 * 3 parts asked: KCC cuts into at most 5.
    # (KCC alone would split identically labelled objects to fill 9 parts.)
    L = np.repeat(np.array([[0, 0], [0, 1], [1, 1], [1, 2], [2, 2]]), 20, axis=0)
    fine = sizes_module._kcc_fine_cut(Ensemble(L), 9, 0, 1)
    assert same_partition(fine, np.repeat(np.arange(5), 20))
    est = estimate_clusters(Ensemble(L), 3, random_state=0, max_bytes=1 << 10)
    assert np.unique(est).shape[0] == 3


GRAPH_METHODS = ["cspa", "mcla", "hbgf", "womc", "wosp", "wohb"]


@pytest.mark.parametrize("name", GRAPH_METHODS)
def test_graph_methods_with_the_kcc_fine_cut(name, monkeypatch):
    from cclust.base import method_info

    monkeypatch.setattr(sizes_module, "estimate_route", lambda *args, **kwargs: "kcc")
    X, y, E = easy_ensemble(500, 4, ratio=3, n_partitions=20, seed=1)
    fn = cclust.get(name)
    extra = {"X": X} if method_info(fn).requires_X else {}
    for sizes in ("auto", "estimated"):
        result = fn(E, 4, sizes=sizes, random_state=0, **extra)
        assert result.n_clusters == 4 and np.unique(result.labels).shape[0] == 4
        assert result.extras["sizes_fine_cut"] == "kcc"
    assert ari(y, result.labels) > 0.9  # the estimated cut keeps the large blob whole


# -- the estimate's memory is checked before the first cut -------------------------------------

@pytest.mark.parametrize("sizes", ["auto", "estimated"])
def test_estimate_refusal_comes_before_the_first_cut(sizes, monkeypatch):
    _, _, E = easy_ensemble(300, 3, n_partitions=10, seed=0)
    calls = []

    def cut(weights, ufactor):
        calls.append(weights)
        return np.arange(E.n_samples) % 3, 0.0, {}

    monkeypatch.setattr(sizes_module, "UNCHECKED_ESTIMATE_BYTES", 0)
    need = sizes_module.estimate_bytes(E.n_samples, 9)
    with recorded_memory_requests() as asked, pytest.raises(MemoryBudgetError, match="sizes='equal'"):
        cut_with_sizes(E, 3, sizes, None, np.random.default_rng(0), cut, max_bytes=need - 1)
    assert calls == [] and asked[-1] == need
    # Granted: the same call runs its cuts.
    cut_with_sizes(E, 3, sizes, None, np.random.default_rng(0), cut, max_bytes=need)
    assert len(calls) == (2 if sizes == "auto" else 1)


def test_small_estimates_ask_nothing_of_the_budget():
    # Under UNCHECKED_ESTIMATE_BYTES the passes' figure is not asked (the contingency tables
    # they read ask their own).
    _, _, E = easy_ensemble(300, 3, n_partitions=10, seed=0)
    with recorded_memory_requests() as asked:
        estimate_clusters(E, 3, random_state=0, max_bytes=1 << 10)
    assert sizes_module.estimate_bytes(300, 9) not in asked
