import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.consensus_functions import voting as voting_module
from cclust.consensus_functions import _starts
from cclust.consensus_functions.voting import ipc, ipvc, ivc, voting
from cclust.errors import MemoryBudgetError, ValidationError
import reference_voting as ref
from factories import noisy_labels, same_partition

ITERATIVE = {"ivc": ivc, "ipvc": ipvc, "ipc": ipc}

# Nguyen & Caruana (2007, Figure 1): six objects, four clusterings; the ground truth is {x1, x2, x3}, {x4, x5, x6}.
FIGURE_1 = np.array([[1, 1, 1, 2, 2, 1], [2, 1, 1, 2, 2, 2], [2, 1, 2, 1, 2, 2], [1, 1, 2, 1, 2, 2]]).T
FIGURE_1_TRUTH = np.array([0, 0, 0, 1, 1, 1])


def test_registered_rows_point_here():
    for name in ("ivc", "ipvc", "ipc", "voting"):
        assert cclust.get(name) is getattr(voting_module, name)


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
@pytest.mark.parametrize("weighted", [False, True], ids=["equal", "weighted"])
@pytest.mark.parametrize("kind", ["ivc", "ipvc", "ipc"])
def test_matches_reference_from_same_start(rng, kind, weighted, missing):
    L = Ensemble(noisy_labels(rng, missing=missing)).canonical().labels
    w = rng.random(L.shape[1]) + 0.2 if weighted else np.full(L.shape[1], 1.0 / L.shape[1])
    w = w / w.sum()
    start = rng.integers(0, 3, size=L.shape[0])
    start[:3] = [0, 1, 2]
    fast = ITERATIVE[kind](cclust.Ensemble(L, weights=w), 3, init=start, max_iter=200)
    slow = ref.iterate(kind, L, w, start, 3, max_iter=200)
    assert fast.converged
    assert same_partition(fast.labels, slow)


@pytest.mark.parametrize("kind", ["ivc", "ipvc", "ipc"])
def test_empty_clusters_follow_the_engine_rule(rng, kind):
    """Starts that leave clusters empty (every object in 0 or 1 of K = 5): the refills are the
    K-means engine's rule, as written out in the reference."""
    L = Ensemble(noisy_labels(rng, n=60, missing=0.1)).canonical().labels
    w = np.full(L.shape[1], 1.0 / L.shape[1])
    start = rng.integers(0, 2, size=L.shape[0])
    fast = ITERATIVE[kind](cclust.Ensemble(L, weights=w), 5, init=start, max_iter=200)
    slow = ref.iterate(kind, L, w, start, 5, max_iter=200)
    assert np.array_equal(fast.labels, slow) or same_partition(fast.labels, slow)
    assert np.unique(fast.labels).shape[0] == 5


def test_engine_reseed_rule_by_hand():
    from cclust._engine import reseed

    labels = np.array([0, 0, 0, 1, 1])
    costs = np.array([0.5, 2.0, 2.0, 9.0, 1.0])
    # Cluster 2 takes object 3 (costliest; its cluster keeps object 4), then cluster 3 takes
    # object 1 (ties with object 2: the lower index).
    out = reseed(labels, costs, 4)
    assert out.tolist() == [0, 3, 0, 2, 1]
    with pytest.raises(ValueError, match="n_clusters exceeds n"):  # two objects cannot fill three clusters
        reseed(np.array([0, 1]), np.array([1.0, 1.0]), 3)


@pytest.mark.parametrize("kind", ["ivc", "ipvc"])
def test_single_pass_distances_match_reference(rng, kind):
    L = Ensemble(noisy_labels(rng, missing=0.15)).canonical().labels
    E = Ensemble(L).canonical()
    w = E.weights
    labels = rng.integers(0, 4, size=L.shape[0]).astype(np.int32)
    crit = (voting_module._IVC if kind == "ivc" else voting_module._IPVC)(E, 1)
    _, best, dist = crit.assign(labels, crit.table(labels, 4), 4)
    D = (ref.ivc_distances if kind == "ivc" else ref.ipvc_distances)(L, w, labels, 4)
    np.testing.assert_allclose(dist, D.min(axis=1), atol=1e-12)


@pytest.mark.parametrize("density", [0.05, 0.3, 1.0])
def test_sparse_and_dense_passes_are_bitwise_equal(rng, density):
    L = Ensemble(noisy_labels(rng, n=50, r=7, missing=0.1)).canonical().labels
    E = Ensemble(L).canonical()
    lookup = rng.random((int(E.offsets[-1]), 5)) * (rng.random((int(E.offsets[-1]), 5)) < density)
    allowed = np.array([1, 1, 0, 1, 1], dtype=np.uint8)
    C = np.ascontiguousarray(E.labels)
    dense = _starts.kernel().argmax(C, E.offsets, np.ascontiguousarray(lookup), allowed, 1)
    fast = _starts.lookup_argmax(C, E.offsets, np.ascontiguousarray(lookup), allowed, 1)
    scores = _starts.kernel().scores(C, E.offsets, np.ascontiguousarray(lookup), 1)
    scores[:, 2] = -np.inf
    assert np.array_equal(dense[0], fast[0]) and np.array_equal(dense[1], fast[1])
    assert np.array_equal(dense[0], scores.argmax(axis=1))
    assert np.array_equal(dense[1], scores.max(axis=1))


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
def test_ivc_mode_count_pass_equals_table_pass(rng, missing):
    """With equal weights IVC counts agreements with the mode vectors; same choice and
    distances as the weighted lookup-table pass."""
    E = Ensemble(noisy_labels(rng, n=60, r=9, missing=missing)).canonical()
    crit = voting_module._IVC(E, 1)
    assert crit.equal
    labels = rng.integers(0, 5, size=E.n_samples).astype(np.int32)
    labels[labels == 3] = 2  # cluster 3 empty: not allowed
    table = crit.table(labels, 5)
    fast = crit.assign(labels, table, 5)
    generic = voting_module._Criterion.assign(crit, labels, table, 5)
    assert np.array_equal(fast[0], generic[0])
    np.testing.assert_allclose(fast[2], generic[2], atol=1e-12)
    assert (fast[0] != 3).all()


def test_ipc_table_route_equals_matrix_form(rng):
    """S(x, P_k) from the contingency tables equals the average of the n x n matrix rows."""
    L = Ensemble(noisy_labels(rng, n=30, r=7)).canonical().labels
    E = Ensemble(L).canonical()
    labels = rng.integers(0, 4, size=L.shape[0]).astype(np.int32)
    crit = voting_module._IPC(E, 1, None)
    table = crit.table(labels, 4)
    lookup = np.ascontiguousarray(crit.values(table).T)
    fast = _starts.kernel().scores(np.ascontiguousarray(E.labels), E.offsets, lookup, 1)
    S = ref.coassociation(L, E.weights)
    np.testing.assert_allclose(fast, ref.ipc_similarities(S, labels, 4), atol=1e-12)
    # ... and S(x, P_k) = sum_i w_i - D_IPVC(x, P_k): IPC and IPVC choose alike.
    np.testing.assert_allclose(fast, 1.0 - ref.ipvc_distances(L, E.weights, labels, 4), atol=1e-12)


def test_ipc_and_ipvc_agree_without_missing_labels(rng):
    L = noisy_labels(rng, n=60, r=8)
    start = rng.integers(0, 3, size=60)
    assert np.array_equal(ipc(L, 3, init=start).labels, ipvc(L, 3, init=start).labels)
    assert np.array_equal(ipc(L, 3, random_state=1).labels, ipvc(L, 3, random_state=1).labels)


def test_ipc_with_missing_labels_uses_pair_normalised_coassociation(rng):
    L = noisy_labels(rng, n=30, missing=0.3)
    with pytest.raises(MemoryBudgetError, match="bytes"):
        ipc(L, 3, random_state=0, max_bytes=100)
    assert ipc(L, 3, random_state=0).n_clusters == 3


def test_ivc_objective_never_increases(rng):
    L = noisy_labels(rng, n=90, r=10, k=4, missing=0.1)
    start = rng.integers(0, 4, size=90)
    res = ivc(L, 4, init=start)
    trace = res.extras["objective_trace"]
    assert trace.shape[0] == res.n_iter >= 2
    assert (np.diff(trace) <= 1e-12).all()
    E = Ensemble(L).canonical()
    assert res.objective == pytest.approx(ref.ivc_objective(E.labels, E.weights, res.labels, 4))


@pytest.mark.parametrize("kind", ["ivc", "ipvc", "ipc"])
def test_converges_to_stable_labels(rng, kind):
    """Stopping rule of Nguyen & Caruana (2007): labels stable; one more pass from the result changes nothing."""
    L = noisy_labels(rng, n=80, r=9, k=4)
    # The result's clusters are renumbered, which changes the lowest-index tie-breaks of a pass;
    # the paper's start gives a result here with no ties left to break.
    res = ITERATIVE[kind](L, 4, init="partitions", random_state=0)
    assert res.converged
    again = ITERATIVE[kind](L, 4, init=res.labels, max_iter=1)
    assert again.converged and np.array_equal(again.labels, res.labels)


def test_restart_keeps_best_objective(rng):
    L = noisy_labels(rng, n=80, r=9, k=4)
    res = ivc(L, 4, n_init=6, random_state=3)
    assert res.objective == res.extras["objectives"].min()
    assert res.extras["objectives"].shape == (6,)
    res = ipc(L, 4, n_init=6, random_state=3)
    assert res.objective == res.extras["objectives"].max()


def test_figure_1_truth_is_a_fixed_point_of_the_iterative_methods():
    """Nguyen & Caruana (2007, sec. 4): pairwise-similarity methods cannot return the ground truth; the iterative
    methods keep it (it is a local optimum of their passes)."""
    for fn in ITERATIVE.values():
        res = fn(FIGURE_1, 2, init=FIGURE_1_TRUTH)
        assert res.converged and res.n_iter == 1
        assert np.array_equal(res.labels, FIGURE_1_TRUTH)
    for link in ("average", "single", "complete", "weighted"):
        assert not same_partition(cclust.get("eac")(FIGURE_1, 2, linkage=link).labels, FIGURE_1_TRUTH)
    assert not same_partition(cclust.get("fc")(FIGURE_1, 2).labels, FIGURE_1_TRUTH)


def test_figure_1_what_each_method_returns():
    """From base-partition restarts every method lands on clustering III of Figure 1
    ({x2, x4} against the rest), whose IVC cost 1.25 is below the truth's 1.5; FC splits off
    {x5, x6}."""
    iii = np.array([0, 1, 0, 1, 0, 0])
    for name in ("ivc", "ipvc", "ipc", "voting", "em-mixture"):
        assert np.array_equal(cclust.get(name)(FIGURE_1, 2, n_init=4, random_state=0).labels, iii), name
    assert ivc(FIGURE_1, 2, n_init=4, random_state=0).objective == pytest.approx(1.25)
    assert ivc(FIGURE_1, 2, init=FIGURE_1_TRUTH).objective == pytest.approx(1.5)
    assert np.array_equal(cclust.get("eac")(FIGURE_1, 2).labels, iii)
    assert np.array_equal(cclust.get("best")(FIGURE_1, 2).labels, iii)
    assert np.array_equal(cclust.get("fc")(FIGURE_1, 2).labels, [0, 0, 0, 0, 1, 1])


@pytest.mark.parametrize("name", ["ivc", "ipvc", "ipc", "voting"])
def test_keeps_k_clusters_when_partitions_have_fewer(rng, name):
    """Every base partition has 2 clusters but 4 are asked: no cluster vanishes."""
    truth = np.repeat(np.arange(4), 25)
    cols = [np.where(rng.random(100) < 0.1, rng.integers(0, 2, 100), (truth + s) % 4 // 2) for s in range(6)]
    res = cclust.get(name)(np.column_stack(cols), 4, random_state=0)
    assert res.n_clusters == 4 and res.extras["fewer_clusters"] == ""


def test_voting_pass_matches_reference(rng):
    truth = np.repeat(np.arange(3), 12)
    cols = [np.where(rng.random(36) < 0.2, rng.integers(0, 3, 36), (truth + s) % 3) for s in range(5)]
    E = Ensemble(np.column_stack(cols)).canonical()
    reference = rng.integers(0, 3, size=36).astype(np.int32)
    reference[:3] = [0, 1, 2]
    table = E.contingency(reference, 3)
    new, _ = _starts.kernel().argmax(np.ascontiguousarray(E.labels), E.offsets,
                                            voting_module._vote_table(E, table, 3),
                                            np.ones(3, dtype=np.uint8), 1)
    assert np.array_equal(new, ref.vote_pass(E.labels, E.weights, reference, 3))


def test_voting_recovers_consensus_of_relabelled_copies(rng):
    truth = np.repeat(np.arange(4), 15)
    cols = [rng.permutation(4)[truth] for _ in range(5)]
    cols.append(np.where(rng.random(60) < 0.3, rng.integers(0, 4, 60), truth))
    res = voting(np.column_stack(cols), 4, random_state=0)
    assert same_partition(res.labels, truth) and res.converged


def test_same_result_for_any_thread_count(rng):
    n = 9000  # three chunks of the compiled passes
    truth = rng.integers(0, 5, size=n)
    L = np.column_stack([np.where(rng.random(n) < 0.3, rng.integers(0, 6, n), truth) for _ in range(4)])
    for fn in (ivc, ipvc, voting):
        a = fn(L, 5, random_state=0, n_init=2, n_jobs=1)
        b = fn(L, 5, random_state=0, n_init=2, n_jobs=2)
        assert np.array_equal(a.labels, b.labels) and a.objective == b.objective


@pytest.mark.parametrize("name", ["ivc", "ipvc", "ipc", "voting"])
def test_bad_input(name):
    fn = cclust.get(name)
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 0]])
    with pytest.raises(ValidationError, match="distinct label vectors"):
        fn(L, 4)
    with pytest.raises(ValidationError, match="n_init"):
        fn(L, 2, n_init=0)
    with pytest.raises(ValidationError, match="n_clusters"):
        fn(L, 1)
    with pytest.raises(ValidationError, match="max_iter"):
        fn(L, 2, max_iter=0)
    with pytest.raises(ValidationError, match="labels no object"):
        fn(np.column_stack([np.arange(5) % 2, np.full(5, -1)]), 2)


@pytest.mark.parametrize("kind", ["ivc", "ipvc", "ipc"])
def test_bad_init(kind):
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 0]])
    with pytest.raises(ValidationError, match="shape"):
        ITERATIVE[kind](L, 2, init=[0, 1])
    with pytest.raises(ValidationError, match="0..1"):
        ITERATIVE[kind](L, 2, init=[0, 1, 2, 0, 1])
    with pytest.raises(ValidationError, match="init must be"):
        ITERATIVE[kind](L, 2, init="random")


def test_inputs_are_not_modified(rng):
    L = noisy_labels(rng, missing=0.1)
    copy = L.copy()
    start = rng.integers(0, 3, size=L.shape[0])
    start_copy = start.copy()
    for fn in ITERATIVE.values():
        fn(L, 3, init=start)
    voting(L, 3, random_state=0)
    assert np.array_equal(L, copy) and np.array_equal(start, start_copy)


def test_compiled_passes_reject_bad_labels_and_tables():
    kernel = _starts.kernel()
    offsets = np.array([0, 2, 5], dtype=np.int64)
    labels = np.array([[0, 2], [1, 3]], dtype=np.int32)   # 3 is outside partition 1's 0..2
    table = np.ones((5, 2))
    allowed = np.ones(2, dtype=np.uint8)
    with pytest.raises(ValueError, match="label 3 of object 1 in partition 1"):
        kernel.argmax(labels, offsets, table, allowed, 1)
    with pytest.raises(ValueError, match="label 3 of object 1 in partition 1"):
        kernel.scores(labels, offsets, table, 1)
    indptr = np.arange(6, dtype=np.int64)
    with pytest.raises(ValueError, match="label 3 of object 1 in partition 1"):
        kernel.argmax_sparse(labels, offsets, indptr, np.zeros(5, dtype=np.int32), np.ones(5), 2, allowed, 1)
    with pytest.raises(ValueError, match="outside 0..1"):
        kernel.argmax_sparse(labels[:1], offsets, indptr, np.full(5, 7, dtype=np.int32), np.ones(5), 2, allowed, 1)
    with pytest.raises(ValueError, match="no cluster is allowed"):
        kernel.argmax(labels[:1], offsets, table, np.zeros(2, dtype=np.uint8), 1)
    with pytest.raises(ValueError, match="label -2"):
        kernel.first_appearance(np.array([[0, -2]], dtype=np.int32), offsets)
    with pytest.raises(ValueError, match="rows"):
        kernel.argmax(labels, offsets, np.ones((4, 2)), allowed, 1)
    with pytest.raises(ValueError, match="columns"):
        kernel.mode_argmax(labels, np.zeros((2, 3), dtype=np.int32), allowed, 1)
    with pytest.raises(ValueError, match="no cluster is allowed"):
        kernel.mode_argmax(labels, np.zeros((2, 2), dtype=np.int32), np.zeros(2, dtype=np.uint8), 1)
    modes = np.array([[0, 2], [1, -2]], dtype=np.int32)
    assert [a.tolist() for a in kernel.mode_argmax(labels, modes, allowed, 1)] == [[0, 1], [2, 1]]
    assert kernel.first_appearance(np.array([[1, 2], [0, 2], [1, -1]], dtype=np.int32), offsets).tolist() == \
        [[0, 0], [1, 0], [0, -1]]


def test_docstring_examples_run():
    import doctest

    from cclust.consensus_functions import mixture, pairwise

    for module in (voting_module, pairwise, mixture):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_ipvc_objective_can_rise_yet_the_labels_settle():
    """Nguyen & Caruana (2007) give IPVC/IPC no criterion their passes decrease; the sum of D(x, P_c(x)) (the Uc
    k-means cost) is not one: here it rises once before the labels stop changing. IVC's cost
    never rises (test_ivc_objective_never_increases)."""
    rng = np.random.default_rng(142)
    n, r, k = int(rng.integers(30, 80)), int(rng.integers(3, 10)), int(rng.integers(2, 5))
    truth = rng.integers(0, k, n)
    L = np.column_stack([np.where(rng.random(n) < 0.3, rng.integers(0, k + 2, n), truth) for _ in range(r)])
    init = rng.integers(0, k, n)
    res = ipvc(L, k, init=init)
    trace = res.extras["objective_trace"]
    assert res.converged
    assert (np.diff(trace) > 1e-9).any()
    np.testing.assert_allclose(trace, [10.711, 9.302, 9.333, 9.333], atol=5e-4)
    # IPC makes the same moves; its own objective (total average co-association) falls there.
    ipc_trace = ipc(L, k, init=init).extras["objective_trace"]
    assert (np.diff(ipc_trace) < -1e-9).any()
