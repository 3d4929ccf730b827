import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cclust
from cclust.consensus_functions import bayesian
from cclust.consensus_functions.bayesian import bce
from cclust.consensus_functions.mixture import label_distributions
from cclust.errors import ValidationError
from cclust.graph import identical_label_rows
from cclust.testing.strategies import label_columns, profile
import reference_bayesian as ref
from factories import noisy_labels_with_truth as noisy_labels

PROFILE = profile()


def _layout(L):
    """slots, present and offsets of a label matrix whose partitions use labels 0..K_j-1."""
    sizes = L.max(axis=0) + 1
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    present = L >= 0
    slots = np.where(present, L, 0) + offsets[:-1][None, :]
    return slots.astype(np.int64), present, offsets, sizes


def _random_model(rng, sizes, K):
    alpha = rng.random(K) + 0.2
    beta = [rng.dirichlet(np.ones(s), size=K) for s in sizes]
    return alpha, beta


def _table(beta):
    """The per-partition (K, K_j) arrays as the (W, K) table of the module."""
    return np.concatenate([b.T for b in beta], axis=0)


def _blocks(table, offsets):
    return [table[offsets[j]:offsets[j + 1]].T for j in range(offsets.shape[0] - 1)]


def test_registered():
    assert cclust.get("bce") is bce


@pytest.mark.parametrize("missing", [0.0, 0.25], ids=["complete", "missing25"])
@pytest.mark.parametrize("n_updates", [1, 4])
def test_e_step_and_bound_match_reference(rng, missing, n_updates):
    L, _ = noisy_labels(rng, n=14, r=4, k=3, missing=missing)
    slots, present, offsets, sizes = _layout(L)
    K = 3
    alpha, beta = _random_model(rng, sizes, K)
    times = rng.random(4) + 0.5
    gamma0 = rng.random((14, K)) + 0.5
    counts = np.ones(14)
    gamma, label_counts, log_z, used = bayesian.e_step(L, offsets, counts, times, alpha, _table(beta), gamma0,
                                                       tol=0.0, max_iter=n_updates)
    r_gamma, r_phi = ref.e_step(L, times, alpha, beta, gamma0, n_updates)
    assert used == n_updates
    np.testing.assert_allclose(gamma, r_gamma, rtol=1e-10, atol=0)
    bound = bayesian.lower_bound(alpha, gamma, counts, log_z)
    assert bound == pytest.approx(ref.lower_bound(L, times, alpha, beta, r_gamma, r_phi), rel=1e-10)
    # The M-step's counts, against beta from the literal phi.
    r_beta = ref.m_step_beta(L, times, r_phi, K, sizes, 1e-3)
    np.testing.assert_allclose(label_distributions(label_counts, offsets, 1e-3), _table(r_beta), rtol=1e-10)


@pytest.mark.parametrize("missing", [0.0, 0.3], ids=["complete", "missing30"])
@pytest.mark.parametrize("tol, max_iter", [(0.0, 7), (1e-4, 100)], ids=["fixed-updates", "stopping-test"])
def test_compiled_e_step_matches_vectorised_numpy(rng, missing, tol, max_iter):
    """The compiled E-step against the vectorised NumPy one on a larger ensemble with merged
    rows, unequal weights and a partition of weight zero: gamma, counts and log Z to 1e-10."""
    L, _ = noisy_labels(rng, n=700, r=9, k=4, noise=0.3, missing=missing)
    first, _, counts = identical_label_rows(L)
    rows = L[first]
    slots, present, offsets, sizes = _layout(L)
    slots, present = slots[first], present[first]
    K = 4
    alpha, beta = _random_model(rng, sizes, K)
    times = rng.random(9) * 2
    times[3] = 0.0
    gamma0 = rng.random((rows.shape[0], K)) * 3 + 0.2
    got = bayesian.e_step(rows, offsets, counts.astype(float), times, alpha, _table(beta), gamma0,
                          tol=tol, max_iter=max_iter)
    want = ref.e_step_vectorised(slots, present, counts.astype(float), times, alpha, _table(beta), gamma0,
                                 tol=tol, max_iter=max_iter)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=0)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-300)
    assert got[2] == pytest.approx(want[2], rel=1e-10)
    assert got[3] == want[3]
    assert not np.shares_memory(got[0], gamma0)


def test_compiled_e_step_same_for_any_thread_count(rng):
    """Fixed chunks added in chunk order: bitwise the same result for 1, 2 and 3 threads."""
    L, _ = noisy_labels(rng, n=3000, r=6, k=5, noise=0.4, missing=0.1)
    slots, present, offsets, sizes = _layout(L)
    alpha, beta = _random_model(rng, sizes, 5)
    gamma0 = np.tile(alpha + 1.0, (3000, 1))
    runs = [bayesian.e_step(L, offsets, np.ones(3000), np.ones(6), alpha, _table(beta), gamma0,
                            tol=1e-6, max_iter=50, n_jobs=t) for t in (1, 2, 3)]
    for other in runs[1:]:
        np.testing.assert_array_equal(other[0], runs[0][0])
        np.testing.assert_array_equal(other[1], runs[0][1])
        assert other[2] == runs[0][2] and other[3] == runs[0][3]


def test_compiled_digamma_matches_scipy():
    from scipy.special import digamma

    from cclust._ext import _bayesian

    for x in [1e-8, 1e-3, 0.3, 1.0, 1.4616321449683622, 2.5, 9.999, 10.0, 37.0, 1e5, 1e18]:
        assert _bayesian.psi(x) == pytest.approx(digamma(x), rel=1e-13, abs=1e-15)
    assert np.isnan(_bayesian.psi(0.0)) and np.isnan(_bayesian.psi(-1.0))


@pytest.mark.parametrize("dtype", [np.int32, np.uint16, np.uint8])
def test_compiled_e_step_refuses_a_label_outside_its_partition(dtype):
    from cclust._ext import _bayesian

    labels = np.array([[0, 1], [1, 3]], dtype=dtype)     # partition 1 has labels 0..2
    with pytest.raises(ValueError, match="label 3 of row 1 in partition 1 is outside 0..2"):
        _bayesian.e_step(labels, np.array([0, 2, 5]), np.ones(2), np.ones(2), np.ones(2),
                         np.full((5, 2), 0.5), np.ones((2, 2)), 0.0, 3, 1)
    with pytest.raises(ValueError, match="beta must have offsets"):
        _bayesian.e_step(labels, np.array([0, 2, 5]), np.ones(2), np.ones(2), np.ones(2),
                         np.full((4, 2), 0.5), np.ones((2, 2)), 0.0, 3, 1)


@pytest.mark.parametrize("dtype", [np.uint16, np.uint8])
def test_compiled_e_step_reads_every_code_width_alike(rng, dtype):
    """The stored uint8 / uint16 codes (largest value = missing) give the int32 result bitwise."""
    L, _ = noisy_labels(rng, n=400, r=5, k=4, noise=0.3, missing=0.2)
    _, _, offsets, sizes = _layout(L)
    codes = L.astype(dtype)                               # -1 wraps to the type's largest value
    alpha, beta = _random_model(rng, sizes, 4)
    gamma0 = rng.random((400, 4)) + 0.5
    times = rng.random(5) + 0.5
    want = bayesian.e_step(L, offsets, np.ones(400), times, alpha, _table(beta), gamma0, tol=1e-6, max_iter=20)
    got = bayesian.e_step(codes, offsets, np.ones(400), times, alpha, _table(beta), gamma0, tol=1e-6, max_iter=20)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_labelling_start_is_the_weighted_one_hot_product(rng):
    """beta's start from a hard labelling: the compiled sums by label equal the sparse product of
    the rows' weighted one-hot matrix bit for bit (unequal weights, merged rows, missing labels)."""
    import scipy.sparse as sp

    L, _ = noisy_labels(rng, n=300, r=6, k=4, noise=0.3, missing=0.2)
    slots, present, offsets, _ = _layout(L)
    counts = rng.integers(1, 5, 300).astype(float)
    times = rng.random(6) * 2
    labels = rng.integers(0, 3, 300)
    mult = counts[:, None] * np.where(present, times[None, :], 0.0)
    A = sp.csr_matrix((mult.ravel(), slots.ravel(), np.arange(0, 300 * 6 + 1, 6)), shape=(300, int(offsets[-1])))
    onehot = np.zeros((300, 3))
    onehot[np.arange(300), labels] = 1.0
    want = label_distributions(np.asarray(A.T @ onehot), offsets, 1e-3)
    got = bayesian._labelling_start(L.astype(np.int32), counts, times, offsets, labels, 3, 1e-3, 2)[1]
    np.testing.assert_array_equal(got, want)


def test_alpha_newton_matches_reference(rng):
    gamma = rng.random((30, 4)) * 5 + 0.1
    start = rng.random(4) + 0.3
    stat = bayesian._expected_log_theta(gamma).sum(axis=0)
    alpha = bayesian.update_alpha(start, 30.0, stat)
    np.testing.assert_allclose(alpha, ref.m_step_alpha(start, gamma), rtol=1e-10)
    # The maximum of a concave function: the gradient vanishes there.
    from scipy.special import digamma
    grad = 30 * (digamma(alpha.sum()) - digamma(alpha)) + stat
    np.testing.assert_allclose(grad, 0.0, atol=1e-6)


@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["complete", "missing20"])
def test_full_loop_matches_reference(rng, missing):
    L, _ = noisy_labels(rng, n=12, r=3, k=2, missing=missing)
    slots, present, offsets, sizes = _layout(L)
    K = 2
    alpha, beta = _random_model(rng, sizes, K)
    times = np.ones(3)
    fit = bayesian._fit(L, np.ones(12), times, offsets, alpha, _table(beta), 1e-3,
                        tol=-np.inf, max_iter=5, e_step_tol=0.0, e_step_max_iter=3)
    r_alpha, r_beta, r_gamma, r_trace = ref.variational_em(L, times, alpha, beta, 1e-3, 5, 3)
    f_alpha, f_beta, f_gamma, _, trace, n_iter, _ = fit
    assert n_iter == 5
    np.testing.assert_allclose(trace, r_trace, rtol=1e-10)
    np.testing.assert_allclose(f_alpha, r_alpha, rtol=1e-10)
    np.testing.assert_allclose(f_gamma, r_gamma, rtol=1e-10)
    for mine, theirs in zip(_blocks(f_beta, offsets), r_beta):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)


def test_identical_rows_merged_equal_every_object(rng):
    """The E-step on distinct rows weighted by multiplicity equals the literal one on all objects."""
    L, _ = noisy_labels(rng, n=10, r=3, k=2, noise=0.1)
    L = np.concatenate([L, L[:6]])                       # six duplicated rows
    slots, present, offsets, sizes = _layout(L)
    alpha, beta = _random_model(rng, sizes, 2)
    first, inverse, counts = identical_label_rows(L)
    fit = bayesian._fit(L[first], counts.astype(float), np.ones(3), offsets, alpha,
                        _table(beta), 1e-3, tol=-np.inf, max_iter=4, e_step_tol=0.0, e_step_max_iter=2)
    r_alpha, _, r_gamma, r_trace = ref.variational_em(L, np.ones(3), alpha, beta, 1e-3, 4, 2)
    np.testing.assert_allclose(fit[4], r_trace, rtol=1e-10)
    np.testing.assert_allclose(fit[2][inverse], r_gamma, rtol=1e-10)


def test_missing_label_uses_only_observed_partitions(rng):
    """An object missing from a partition gets the gamma of the model without that partition's factor."""
    L, _ = noisy_labels(rng, n=12, r=4, k=3)
    slots, present, offsets, sizes = _layout(L)
    alpha, beta = _random_model(rng, sizes, 3)
    gamma0 = np.tile(alpha + 1.0, (12, 1))
    holes = L.copy()
    holes[0, [1, 3]] = -1
    g_holes = bayesian.e_step(holes, offsets, np.ones(12), np.ones(4), alpha, _table(beta), gamma0,
                              tol=0.0, max_iter=6)[0]
    # Object 0 alone, on partitions 0 and 2 only.
    keep = [0, 2]
    g_alone = ref.e_step(L[:1, keep], np.ones(2), alpha, [beta[j] for j in keep], gamma0[:1], 6)[0]
    np.testing.assert_allclose(g_holes[0], g_alone[0], rtol=1e-10)
    # The other objects are untouched by object 0's holes.
    g_full = bayesian.e_step(L, offsets, np.ones(12), np.ones(4), alpha, _table(beta), gamma0,
                             tol=0.0, max_iter=6)[0]
    np.testing.assert_allclose(g_holes[1:], g_full[1:], rtol=1e-12)
    assert not np.allclose(g_holes[0], g_full[0])


@settings(PROFILE, max_examples=max(5, PROFILE.max_examples // 2), deadline=None)
@given(columns=label_columns(min_n=4, max_n=25, max_partitions=5, max_k=4, min_partitions=2, missing=True),
       K=st.integers(2, 4), seed=st.integers(0, 2**16), updates=st.integers(1, 5))
def test_bound_never_decreases(columns, K, seed, updates):
    L = np.column_stack(columns)
    E = cclust.Ensemble(L)
    slots, present, offsets, _ = _layout(E.labels)
    rng = np.random.default_rng(seed)
    alpha, beta = bayesian._random_start(offsets, K, rng)
    trace = bayesian._fit(E.labels, np.ones(L.shape[0]), np.ones(L.shape[1]), offsets, alpha, beta, 1e-6,
                          tol=-np.inf, max_iter=15, e_step_tol=0.0, e_step_max_iter=updates)[4]
    trace = np.asarray(trace)
    assert (np.diff(trace) >= -1e-9 * np.abs(trace[1:])).all(), trace


def test_result_and_extras(rng):
    L, truth = noisy_labels(rng, n=90, r=12, k=3, noise=0.2, missing=0.1)
    res = bce(L, 3, random_state=0)
    assert cclust.get("ari")(truth, res.labels) > 0.9
    assert res.n_iter == res.extras["objective_trace"].shape[0] and res.converged
    trace = res.extras["objective_trace"]
    assert (np.diff(trace) >= -1e-9 * np.abs(trace[1:])).all()
    assert res.objective == res.extras["objectives"].max()
    gamma = res.extras["gamma"]
    assert gamma.shape == (90, 3)
    assert cclust.get("ari")(gamma.argmax(axis=1), res.labels) == 1.0
    beta = res.extras["beta"]
    assert [b.shape for b in beta] == [(3, int(L[:, j].max()) + 1) for j in range(12)]
    for b in beta:
        np.testing.assert_allclose(b.sum(axis=1), 1.0)
    assert res.extras["alpha"].shape == (3,) and (res.extras["alpha"] > 0).all()


def test_beta_follows_the_input_labels(rng):
    """extras['beta'] is indexed by the user's labels, whatever the canonical renumbering."""
    L, _ = noisy_labels(rng, n=60, r=4, k=3, noise=0.05)
    renamed = L.copy()
    renamed[:, 1] = (L[:, 1].max() - L[:, 1])            # reverse partition 1's label names
    a = bce(L, 3, random_state=1)
    b = bce(renamed, 3, random_state=1)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_allclose(b.extras["beta"][1], a.extras["beta"][1][:, ::-1], rtol=1e-12)


def test_toy_case_by_hand():
    """Two clean groups: every restart finds them, gamma puts the group's labels on one cluster."""
    L = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 1, 0]])
    res = bce(L, 2, random_state=0, init="random")
    assert res.labels.tolist() == [0, 0, 0, 1, 1, 1]
    gamma = res.extras["gamma"]
    assert (gamma[:3, 0] > gamma[:3, 1] + 2.5).all() and (gamma[3:, 1] > gamma[3:, 0] + 2.5).all()


def test_bad_input():
    L = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 0]])
    with pytest.raises(ValidationError, match="distinct label vectors"):
        bce(L, 4)
    with pytest.raises(ValidationError, match="n_init"):
        bce(L, 2, n_init=0)
    with pytest.raises(ValidationError, match="smoothing"):
        bce(L, 2, smoothing=0.0)
    with pytest.raises(ValidationError, match="tol"):
        bce(L, 2, tol=-1.0)
    with pytest.raises(ValidationError, match="e_step_tol"):
        bce(L, 2, e_step_tol=-1.0)
    with pytest.raises(ValidationError, match="e_step_max_iter"):
        bce(L, 2, e_step_max_iter=0)
    with pytest.raises(ValidationError, match="max_iter"):
        bce(L, 2, max_iter=0)
    with pytest.raises(ValidationError, match="init"):
        bce(L, 2, init="partitions")
    with pytest.raises(ValidationError, match="n_clusters"):
        bce(L, 1)
    holes = np.array([[0, 0], [-1, -1], [1, 1], [1, 1], [1, 0]])
    with pytest.raises(ValidationError, match="missing from every partition"):
        bce(holes, 2)
