"""The median-partition methods of R's clue (Hornik 2005) against literal references
(tests/reference_median.py): the same start gives the same fixed point; LP/MILP steps against
linprog and brute force."""
from itertools import permutations

import numpy as np
import pytest

import cclust
from cclust.consensus_functions import median as md
from cclust.consensus_functions import _median as mc
from cclust.consensus_functions import gordon_vichi as gv
from cclust.consensus_functions import symdiff as sd
from cclust.errors import ValidationError
from cclust.soft import SoftEnsemble

from tests import reference_median as ref
from tests.factories import random_memberships


def _hard(n, ks, seed):
    rng = np.random.default_rng(seed)
    cols = []
    for k in ks:
        c = rng.integers(0, k, n)
        c[:k] = np.arange(k)          # every cluster used
        cols.append(rng.permutation(c))
    return np.column_stack(cols)


def _soft(n, ks, seed):
    return random_memberships(n, ks, seed)


def _start(n, k, seed):
    S = np.random.default_rng(seed).random((n, k))
    return S / S.sum(1, keepdims=True)


def _memberships(L):
    return [ref.one_hot(L[:, j]) for j in range(L.shape[1])]


CASES = [  # (n, K_i, k): k >= max K_i (the Gram route for SE) and k < max K_i (projection)
    (9, [2, 3, 3], 3), (10, [3, 2, 4], 4), (8, [3, 4, 2], 2), (9, [2, 2, 3, 3], 5),
]


@pytest.mark.parametrize("n, ks, k", CASES)
def test_se_matches_literal_clue_from_the_same_start(n, ks, k):
    L = _hard(n, ks, seed=n + k)
    w = np.linspace(1, 2, len(ks))
    S = _start(n, k, seed=k)
    got = md.se(cclust.Ensemble(L, weights=w), k, init=S)
    M_ref, value_ref = ref.aos(_memberships(L), w, k, S, "SE")
    np.testing.assert_allclose(got.extras["membership"], mc.stochastify(M_ref)[:, :k], atol=1e-10)
    full = ref.pad(got.extras["membership"], max(k, max(ks)))
    assert got.objective == pytest.approx(ref.criterion(_memberships(L), w, full, ref.sq), rel=1e-10)
    assert got.objective <= value_ref * (1 + 1e-10)


@pytest.mark.parametrize("n, ks, k", CASES)
@pytest.mark.parametrize("kind", ["HE", "HM"])
def test_hard_medians_reach_a_fixed_point_of_the_literal_iteration(n, ks, k, kind):
    # integer cross products tie often, and ties may be matched either way: instead of one
    # trajectory, check the defining fixed point -- one more literal iteration (optimal matching
    # by trying every permutation, then the refit) does not improve the criterion -- and the value
    L = _hard(n, ks, seed=n + k)
    w = np.array([1.0, 1.7, 2.3, 2.9])[:len(ks)]
    got = getattr(md, kind.lower())(cclust.Ensemble(L, weights=w), k, init=_start(n, k, seed=k))
    cost = ref.sq if kind == "HE" else ref.l1
    k_all = max(k, max(ks))
    M = ref.pad(got.extras["membership"], k_all)
    value = ref.criterion(_memberships(L), w, M, cost)
    assert got.objective == pytest.approx(value, rel=1e-10)
    _, again = ref.aos(_memberships(L), w, k, got.extras["membership"], kind, max_iter=1)
    assert again >= value - 1e-9


@pytest.mark.parametrize("n, ks, k", [(8, [2, 3, 3], 3), (9, [3, 2, 4], 2)])
def test_soft_se_matches_literal_clue(n, ks, k):
    Us = _soft(n, ks, seed=3)
    S = _start(n, k, seed=5)
    got = md.se(SoftEnsemble(Us), k, init=S)
    M_ref, _ = ref.aos(Us, np.ones(len(ks)), k, S, "SE")
    np.testing.assert_allclose(got.extras["membership"], mc.stochastify(M_ref)[:, :k], atol=1e-10)


def test_se_result_is_the_weighted_mean_of_the_matched_partitions():
    L = _hard(12, [3, 3, 3, 2], seed=7)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    r = md.se(cclust.Ensemble(L, weights=w), 3, random_state=0)
    assert r.converged
    M = r.extras["membership"]
    matched = [ref.best_permutation(U, M, ref.sq)[1] for U in _memberships(L)]
    np.testing.assert_allclose(M, sum(wi * P for wi, P in zip(w / w.sum(), matched)), atol=1e-12)


@pytest.mark.parametrize("n, ks, k", [(9, [2, 3, 3, 2], 3), (8, [3, 4, 2], 2), (7, [2, 2], 3)])
def test_dwh_matches_literal_clue(n, ks, k):
    L = _hard(n, ks, seed=11)
    order = np.random.default_rng(0).permutation(len(ks))
    w = np.arange(1, len(ks) + 1, dtype=float)
    got = md.dwh(cclust.Ensemble(L, weights=w), k, order=order)
    np.testing.assert_allclose(got.extras["membership"], ref.dwh(_memberships(L), w, k, order), atol=1e-12)
    full = ref.pad(got.extras["membership"], max(k, max(ks)))
    assert got.objective == pytest.approx(ref.criterion(_memberships(L), w, full, ref.sq), rel=1e-10)


def test_dwh_soft_matches_literal():
    Us = _soft(8, [3, 2, 3], seed=2)
    got = md.dwh(SoftEnsemble(Us), 3, order=[2, 0, 1])
    np.testing.assert_allclose(got.extras["membership"], ref.dwh(Us, np.ones(3), 3, [2, 0, 1]), atol=1e-12)


def test_l1_simplex_median_equals_linprog():
    rng = np.random.default_rng(0)
    for _ in range(40):
        r, k = rng.integers(1, 5), rng.integers(2, 5)
        V = rng.random((1, r, k))
        V = np.where(rng.random(V.shape) < 0.3, 0.0, V)
        V /= np.maximum(1.0, V.sum(2, keepdims=True))
        w = rng.random(r)
        w /= w.sum()
        m = md.l1_simplex_median(V, w)[0]
        assert m.min() >= 0 and m.sum() == pytest.approx(1.0)
        vs = list(V[0])
        assert ref.l1_row_value(vs, w, m) == pytest.approx(ref.l1_row_value(vs, w, ref.l1_row_fit(vs, w)), abs=1e-9)


def test_l1_simplex_median_of_columns_is_the_general_refit_bit_for_bit():
    """The hard refit's shortcut against the sorting refit on the same 0/1 memberships: rows
    with ties between columns (equal weights, repeated integer weights), rows a partition leaves
    all zero (column -1) and single partitions or columns. Every differing case is listed."""
    rng = np.random.default_rng(3)
    differ = []
    for case in range(1500):
        m, r, k = int(rng.integers(1, 25)), int(rng.integers(1, 9)), int(rng.integers(1, 7))
        columns = rng.integers(-1, k, size=(m, r))
        w = (np.full(r, 1.0), rng.random(r), rng.integers(1, 4, size=r).astype(float))[case % 3]
        w = w / w.sum()
        V = np.zeros((m, r, k))
        rows, parts = np.nonzero(columns >= 0)
        V[rows, parts, columns[rows, parts]] = 1.0
        want = md.l1_simplex_median(V, w)
        got = md.l1_simplex_median_of_columns(columns, w, k)
        if got.tobytes() != want.tobytes():
            differ.append((case, m, r, k))
    assert not differ, differ[:10]


def test_sm_on_a_hard_ensemble_refits_as_on_its_soft_memberships():
    """SM's hard route (matched columns) and its soft route (the one-hot as soft memberships,
    the sorting refit) reach the same memberships, and the same objective up to rounding."""
    rng = np.random.default_rng(5)
    L = np.stack([rng.integers(0, K, size=90) for K in (2, 3, 3, 4, 5)], axis=1)
    w = rng.random(5)
    hard = md.sm(cclust.Ensemble(L, weights=w), 3, random_state=0)
    Us = [np.eye(int(L[:, i].max()) + 1)[L[:, i]] for i in range(L.shape[1])]
    soft = md.sm(SoftEnsemble(Us, weights=w), 3, random_state=0)
    np.testing.assert_array_equal(hard.extras["membership"], soft.extras["membership"])
    assert hard.objective == pytest.approx(soft.objective, rel=1e-12)   # the hard criterion's sum differs in order


def test_sm_reaches_a_fixed_point_of_the_lp_refit():
    Us = _soft(8, [3, 2, 3], seed=4)
    r = md.sm(SoftEnsemble(Us), 3, random_state=0)
    M = r.extras["membership"]
    matched = [ref.best_permutation(U, M, ref.l1)[1] for U in Us]
    w = np.ones(3) / 3
    value = sum(wi * ref.l1(P, M) for wi, P in zip(w, matched))
    assert r.objective == pytest.approx(value, rel=1e-10)
    # no object's LP refit improves on its row
    for x in range(8):
        vs = [P[x] for P in matched]
        assert ref.l1_row_value(vs, w, M[x]) <= ref.l1_row_value(vs, w, ref.l1_row_fit(vs, w)) + 1e-9


def test_gv1_matches_literal_when_every_partition_has_at_least_k_clusters():
    L = _hard(9, [3, 3, 4], seed=5)
    S = _start(9, 3, seed=1)
    got = gv.gv1(L, 3, init=S)
    # clue's fit_M for k <= min K_i: the weighted mean of the matched columns, pushed to the simplex
    Us = _memberships(L)
    M = S.copy()
    for _ in range(100):
        matched = []
        for U in Us:
            best = None
            for p in permutations(range(U.shape[1]), 3):
                c = ref.sq(U[:, list(p)], M)
                if best is None or c < best[0] - 1e-12:
                    best = (c, U[:, list(p)])
            matched.append(best[1])
        new = sum(P for P in matched) / 3
        if max(U.shape[1] for U in Us) > 3:
            new = np.maximum(new + (1 - new.sum(1, keepdims=True)) / 3, 0)
        if np.abs(new - M).max() < 1e-14:
            break
        M = new
    np.testing.assert_allclose(got.extras["membership"], mc.stochastify(M), atol=1e-9)


def test_gv1_weighted_projection_is_the_constrained_least_squares_row():
    from scipy.optimize import minimize

    rng = np.random.default_rng(1)
    M = rng.random((6, 4)) * 0.9 + 0.1
    alpha = np.array([0.5, 0.2, 0.9, 0.4])
    got = gv._weighted_simplex_cap(M, alpha)
    for row, g in zip(M, got):
        res = minimize(lambda x: (alpha * (x - row) ** 2).sum(), np.full(4, 0.25), method="SLSQP",
                       bounds=[(0, None)] * 4, constraints=[{"type": "ineq", "fun": lambda x: 1 - x.sum()}],
                       options={"ftol": 1e-14})
        np.testing.assert_allclose(g, res.x, atol=1e-6)


def test_gv3_objective_and_stationarity():
    L = _hard(10, [2, 3, 3], seed=8)
    r = gv.gv3(L, 3, random_state=0, n_init=3)
    M = r.extras["membership"]
    Us = _memberships(L)
    assert r.objective == pytest.approx(ref.gv3_loss(Us, np.ones(3), M), rel=1e-9)
    # projected gradient fixed point: a small projected step does not lower the loss noticeably
    Y = sum(U @ U.T for U in Us) / 3
    grad = 4 * (M @ M.T - Y) @ M
    stepped = gv._simplex_rows(M - 1e-3 * grad)
    assert ref.gv3_loss(Us, np.ones(3), stepped) >= r.objective - 1e-6


def test_gv3_identical_partitions_fit_exactly():
    L = np.column_stack([[0, 0, 1, 1, 2, 2, 2]] * 3)
    r = gv.gv3(L, 3, random_state=0)
    assert r.objective < 1e-8
    assert cclust.get("ari")(r.labels, L[:, 0]) == 1.0


@pytest.mark.parametrize("n, ks, k", [(6, [2, 3, 3], 2), (7, [3, 2, 3, 2], 3), (8, [2, 4, 3], 3), (8, [3, 3], 4)])
def test_symdiff_median_equals_brute_force(n, ks, k):
    L = _hard(n, ks, seed=n * k)
    w = np.arange(1, len(ks) + 1, dtype=float)
    r = sd.symdiff_median(cclust.Ensemble(L, weights=w), k)
    best = ref.symdiff_brute(_memberships(L), w, n, k)
    assert r.objective == pytest.approx(best, abs=1e-9)
    assert ref.symdiff_distance(_memberships(L), w, r.labels) == pytest.approx(best, abs=1e-9)
    assert r.extras["optimal"] and r.n_clusters == k


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_symdiff_median_optimal_value_does_not_depend_on_object_order(seed):
    L = _hard(9, [2, 3, 3, 4], seed=seed)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, 4)
    base = sd.symdiff_median(cclust.Ensemble(L, weights=w), 3)
    for perm in (np.arange(9)[::-1], np.random.default_rng(seed).permutation(9)):
        moved = sd.symdiff_median(cclust.Ensemble(L[perm], weights=w), 3)
        assert moved.objective == pytest.approx(base.objective, abs=1e-9)
        assert moved.extras["optimal"]


def test_symdiff_median_soft_equals_brute_force():
    Us = _soft(7, [2, 3], seed=9)
    r = sd.symdiff_median(SoftEnsemble(Us), 3)
    assert r.objective == pytest.approx(ref.symdiff_brute(Us, np.ones(2), 7, 3), abs=1e-9)


def test_hard_medians_are_no_worse_than_brute_force_allows():
    # the global optimum over all hard partitions (brute force) bounds HE/HM from below;
    # with several starts they reach it on this small ensemble
    L = _hard(7, [2, 3, 3], seed=2)
    Us = _memberships(L)
    best = min(ref.criterion(Us, np.ones(3), ref.pad(ref.one_hot(lab), 3), ref.sq)
               for lab in ref.set_partitions(7, 3))
    for fn in (md.he, md.hm):
        r = fn(L, 3, n_init=20, random_state=0)
        assert r.objective >= best - 1e-9
        assert r.objective == pytest.approx(best, abs=1e-9)


def test_hand_computed_toy_case():
    # two partitions agree on {0,1},{2,3}; a third moves object 3: SE's mean gives object 3
    # membership 2/3 in its majority cluster, and the criterion is 3 * (2 * (1/3)^2 + ...) / 3
    L = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1], [1, 1, 0]])
    r = md.se(L, 2, random_state=0)
    np.testing.assert_allclose(r.extras["membership"][3], [1 / 3, 2 / 3] if r.labels[3] == 1 else [2 / 3, 1 / 3])
    # the two agreeing partitions each differ from M only in row 3 by (1/3, 1/3); the third by (2/3, 2/3)
    assert r.objective == pytest.approx((2 * (2 / 9) + (8 / 9)) / 3)
    assert r.labels.tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("name", ["se", "he", "dwh", "gv1", "gv3", "sm", "hm", "symdiff-median"])
def test_bad_input_names_the_argument(name):
    fn = cclust.get(name)
    L = _hard(10, [2, 3], seed=0)
    with pytest.raises(ValidationError, match="n_clusters"):
        fn(L, 11)
    with pytest.raises(ValidationError, match="missing labels"):
        fn(np.where(np.eye(10, 2, dtype=bool), -1, L), 2)
    with pytest.raises(ValidationError, match="weights"):
        fn(cclust.Ensemble(L, weights=[1.0, -1.0]), 2)


def test_symdiff_median_refuses_above_the_size_limit():
    L = _hard(41, [2, 3], seed=0)
    with pytest.raises(ValidationError, match="max_objects = 40"):
        sd.symdiff_median(L, 2)
    with pytest.raises(ValidationError, match="max_objects = 5"):
        sd.symdiff_median(L[:6], 2, max_objects=5)


def test_bad_init_and_order():
    L = _hard(6, [2, 3], seed=0)
    with pytest.raises(ValidationError, match=r"init\[0\]"):
        md.se(L, 2, init=np.ones((5, 2)))
    with pytest.raises(ValidationError, match="order"):
        md.dwh(L, 2, order=[0, 0])


@pytest.mark.parametrize("name", ["se", "he", "dwh", "gv1", "gv3", "sm", "hm"])
def test_soft_results_keep_the_membership(name):
    Us = _soft(12, [2, 3, 3], seed=1)
    r = cclust.consensus(name, SoftEnsemble(Us), 3, random_state=0)
    M = r.extras["membership"]
    assert M.shape == (12, 3) and np.allclose(M.sum(1), 1)
    assert (M.argmax(1) == r.labels).all() or r.extras["n_moved"] > 0 or r.n_clusters == 3


# -- HE/HM tie moves (cclust's addition to clue) ---------------------------------------------------

TIE_L = np.array([[0, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 0]]).T
TIE_S = np.array([[0.398, 0.168, 0.433], [0.509, 0.221, 0.27], [0.362, 0.288, 0.35], [0.328, 0.571, 0.101],
                  [0.361, 0.057, 0.583], [0.298, 0.083, 0.619]])


def test_tie_moves_improve_a_hand_checked_fixed_point():
    # from this start the plain iteration settles at criterion 4 with tied objects; moving
    # them and iterating again reaches 3 (checked literally below)
    plain = md.he(TIE_L, 3, init=TIE_S, tie_rounds=0)
    moved = md.he(TIE_L, 3, init=TIE_S)
    assert plain.objective == pytest.approx(4.0) and moved.objective == pytest.approx(3.0)
    Us = _memberships(TIE_L)
    assert moved.objective == pytest.approx(ref.criterion(Us, np.ones(2), ref.pad(moved.extras["membership"], 3),
                                                          ref.sq))


@pytest.mark.parametrize("kind", ["HE", "HM"])
@pytest.mark.parametrize("seed", range(12))
def test_tie_moves_never_raise_the_criterion(kind, seed):
    rng = np.random.default_rng(seed)
    n, r, k = int(rng.integers(6, 14)), int(rng.integers(2, 5)), int(rng.integers(2, 4))
    L = np.column_stack([rng.integers(0, int(rng.integers(2, 4)), n) for _ in range(r)])
    S = _start(n, k, seed=seed)
    fn = getattr(md, kind.lower())
    plain, moved = fn(L, k, init=S, tie_rounds=0), fn(L, k, init=S, tie_rounds=10)
    assert moved.objective <= plain.objective + 1e-12
    # the result is still a fixed point of the literal iteration
    cost = ref.sq if kind == "HE" else ref.l1
    M = ref.pad(moved.extras["membership"], max(k, L.max() + 1))
    value = ref.criterion(_memberships(L), np.ones(r), M, cost)
    assert moved.objective == pytest.approx(value, rel=1e-10)
    _, again = ref.aos(_memberships(L), np.ones(r), k, moved.extras["membership"], kind, max_iter=1)
    assert again >= value - 1e-9


@pytest.mark.parametrize("kind", ["HE", "HM"])
def test_a_tie_move_keeps_the_criterion_under_fixed_matchings(kind):
    # the step's premise, literally: with every partition's matching held, moving the tied
    # objects to the cluster they tie with leaves sum_i w_i cost(U_i P_i, M) unchanged
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        L = np.column_stack([rng.integers(0, 3, 10) for _ in range(3)])
        res = getattr(md, kind.lower())(L, 3, init=_start(10, 3, seed=seed), tie_rounds=0)
        ids = res.extras["membership"].argmax(axis=1)
        data = mc.Memberships(L, "test")
        _, assign = md._hard_criterion(data, kind == "HE", ids, 3)
        moved = md._tie_flip(data, assign, ids, 3, 3)
        if moved is None:
            continue
        cost = ref.sq if kind == "HE" else ref.l1
        Us = _memberships(L)
        M, M_moved = np.eye(3)[ids], np.eye(3)[moved]
        matched = [ref.best_permutation(U, M, cost)[1] for U in Us]
        before = sum(cost(P, M) for P in matched)
        after = sum(cost(P, M_moved) for P in matched)
        assert after == pytest.approx(before, abs=1e-12)
        assert not np.array_equal(moved, ids)


def test_tie_rounds_is_checked():
    with pytest.raises(ValidationError, match="tie_rounds"):
        md.he(TIE_L, 2, tie_rounds=-1)
    with pytest.raises(ValidationError, match="tie_rounds"):
        md.hm(TIE_L, 2, tie_rounds=1.5)


# -- symdiff-median's programs: the cut program (K = 2), the clique partitioning program with
#    representatives (K >= 3) and the rows on twins, each against brute force --------------------

@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("seed", range(8))
def test_symdiff_median_with_many_twins_equals_brute_force(k, seed):
    # few partitions with few clusters: many objects share their whole label row (twins)
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(k + 1, 9))
    L = np.column_stack([rng.integers(0, int(rng.integers(2, 4)), n) for _ in range(int(rng.integers(1, 4)))])
    w = rng.uniform(0.5, 2.0, L.shape[1])
    distinct = np.unique(L, axis=0).shape[0]
    if k > distinct:   # twins cannot be told apart: a K above the distinct rows is refused
        with pytest.raises(ValidationError, match=f"n_clusters <= {distinct}"):
            sd.symdiff_median(cclust.Ensemble(L, weights=w), k)
        return
    r = sd.symdiff_median(cclust.Ensemble(L, weights=w), k)
    best = ref.symdiff_brute(_memberships(L), w, n, k)
    assert r.objective == pytest.approx(best, abs=1e-9)
    assert r.extras["optimal"] and r.n_clusters == k


def test_symdiff_median_refuses_more_classes_than_distinct_rows():
    # 30 objects whose 8 partitions give only 3 distinct label rows: K = 6 would have to split
    # twins arbitrarily, and the program searched those equal splits for minutes (with the time
    # limit it returned a non-optimal labelling instead); refused before solving
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 3, size=(3, 8))
    L = rows[rng.integers(0, 3, size=30)]
    assert np.unique(L, axis=0).shape[0] == 3
    for k in (4, 6):
        with pytest.raises(ValidationError, match=r"distinct label vectors in the ensemble \(3\).*n_clusters <= 3"):
            sd.symdiff_median(L, k, time_limit=5)
    soft = SoftEnsemble([np.eye(3)[L[:, i]] for i in range(L.shape[1])])
    with pytest.raises(ValidationError, match="n_clusters <= 3"):
        sd.symdiff_median(soft, 4, time_limit=5)
    assert sd.symdiff_median(L, 3).n_clusters == 3


@pytest.mark.parametrize("k", [2, 3])
def test_symdiff_median_with_fuzzy_twins_equals_brute_force(k):
    # soft twins whose expected co-membership is below 1/2 get no twin rows; those above do
    rng = np.random.default_rng(77)
    U1 = rng.dirichlet(np.ones(3), 4)
    U1 = np.vstack([U1, U1[:2], np.full((1, 3), 1 / 3)])         # rows 4, 5 copy rows 0, 1
    U1 = np.vstack([U1, np.full((1, 3), 1 / 3)])                  # two uniform rows: A = 1/3
    U2 = rng.dirichlet(np.ones(2), 8)
    U2[4:6] = U2[:2]
    U2[6:8] = 0.5
    Us = [U1, U2]
    r = sd.symdiff_median(SoftEnsemble(Us), k)
    assert r.objective == pytest.approx(ref.symdiff_brute(Us, np.ones(2), 8, k), abs=1e-9)


def test_symdiff_twin_rows_are_only_for_twins_that_belong_together():
    L = np.array([[0, 0, 0, 1, 1, 2], [0, 0, 0, 1, 1, 1]]).T
    data = mc.Memberships(L, "test")
    A = sd._mean_comembership(data)
    n = 6
    iu, ju = np.triu_indices(n, 1)
    pair = np.full((n, n), -1)
    pair[iu, ju] = pair[ju, iu] = np.arange(iu.shape[0])
    rows = sd._twin_rows(data, A, pair, iu.shape[0])
    # twins: (0, 1), (1, 2) and (3, 4); each gives n - 2 = 4 rows
    assert rows.shape[0] == 12
    assert sd.symdiff_median(L, 3).labels.tolist() == [0, 0, 0, 1, 1, 2]
    assert sd.symdiff_median(L, 2).labels.tolist() == [0, 0, 0, 1, 1, 1]


def test_gv1_weighted_projection_equals_literal_kkt_solution():
    rng = np.random.default_rng(4)
    for _ in range(60):
        k = int(rng.integers(2, 7))
        M = rng.random((20, k)) * rng.uniform(0.5, 2.0)
        alpha = rng.random(k)
        if rng.random() < 0.3:
            alpha[rng.integers(0, k)] = 0.0
        M = M[(M.sum(axis=1) > 1) & (M[:, alpha == 0].sum(axis=1) < 1)]
        got = gv._weighted_simplex_cap(M, alpha)
        for m, row in zip(M, got):
            np.testing.assert_allclose(row, ref.weighted_cap(m, alpha), atol=1e-12)
            assert row.sum() == pytest.approx(1.0, abs=1e-12)
