"""Hartigan & Wong's (1979) k-means (AS 136), the compiled core and select_k's
``inner_params={"algorithm": "hartigan-wong"}``: against the slow literal reference, hand-computed
toys, R's kmeans from the same starting centres, and bad input."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from cclust import select_k
from cclust import _monti
from cclust._ext._hartigan_wong import hartigan_wong
from cclust.errors import ValidationError

sys.path.insert(0, os.path.dirname(__file__))
from reference_hartigan_wong import hartigan_wong as reference  # noqa: E402


def random_case(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(6, 45))
    d = int(rng.integers(1, 5))
    k = int(rng.integers(2, min(6, m - 1) + 1))
    X = rng.normal(size=(m, d)) + rng.integers(0, 3, size=(m, 1))
    if seed % 4 == 0:
        X = np.round(X, 1)  # ties in distances
    start = X[rng.choice(m, size=k, replace=False)]
    if len(np.unique(start, axis=0)) < k:
        start = start + np.arange(k)[:, None] * 1e-3
    return np.ascontiguousarray(X), start


@pytest.mark.parametrize("seed", range(30))
def test_compiled_core_matches_the_literal_reference(seed):
    X, start = random_case(seed)
    labels, centres, wss, n_iter, status = hartigan_wong(X, start, 10, 50 * len(X))
    r_labels, r_centres, r_wss, r_iter, r_status = reference(X, start, 10)
    assert status == r_status and status in (0, 2)
    np.testing.assert_array_equal(labels, r_labels)
    assert n_iter == r_iter
    np.testing.assert_allclose(centres, r_centres, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(wss, r_wss, rtol=1e-10, atol=1e-12)


def test_stops_after_max_iter_passes_like_r():
    X, start = random_case(7)
    one = hartigan_wong(X, start, 1, 50 * len(X))
    assert one[4] in (0, 2)
    if one[4] == 2:
        assert one[3] == 2  # max_iter + 1, as R reports
    full = reference(X, start, 1)
    np.testing.assert_array_equal(one[0], full[0])


def test_hand_computed_two_groups():
    # start: 0 alone, {1, 10, 11} around 22/3; moving 1 saves 3/2 * (22/3 - 1)^2 and costs
    # 1/2 * 1^2, so it moves; then nothing else does.
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    labels, centres, wss, n_iter, status = hartigan_wong(X, np.array([[0.0], [1.0]]), 10, 200)
    assert status == 0
    assert labels.tolist() == [0, 0, 1, 1]
    np.testing.assert_allclose(centres.ravel(), [0.5, 10.5])
    np.testing.assert_allclose(wss, [0.5, 0.5])


def test_leaves_a_lloyd_fixed_point():
    # {0, 2} with mean 1 and {3.5}: every point is nearest its own mean (Lloyd stops), but
    # moving 2 lowers W from 2 to 1.125 (leaving saves 2/1 * 1^2 = 2, joining costs
    # 1/2 * 1.5^2 = 1.125), which Hartigan-Wong's optimal transfer does.
    X = np.array([[0.0], [2.0], [3.5]])
    labels, centres, wss, _, status = hartigan_wong(X, np.array([[0.9], [3.5]]), 10, 150)
    assert status == 0
    assert labels.tolist() == [0, 1, 1]
    np.testing.assert_allclose(wss.sum(), 1.125)


def test_bad_k_is_fault_3():
    X = np.arange(6, dtype=np.float64).reshape(3, 2)
    assert hartigan_wong(X, X, 10, 150)[4] == 3          # k = m
    assert hartigan_wong(X, X[:1], 10, 150)[4] == 3      # k = 1


def test_monti_labels_start_from_distinct_objects():
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(5, 2)), 4, axis=0)   # 5 distinct rows, each 4 times
    labels = _monti.hartigan_wong_labels(X, 4, np.random.default_rng(1))
    assert len(np.unique(labels)) == 4
    assert _monti.hartigan_wong_labels(X[:3], 3, rng).tolist() == [0, 1, 2]  # k = m: singletons


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R")
def test_same_labels_as_r_kmeans(tmp_path):
    cases = [random_case(seed) for seed in range(12)]
    for i, (X, start) in enumerate(cases):
        np.savetxt(tmp_path / f"X{i}.csv", X, delimiter=",", fmt="%.17g")
        np.savetxt(tmp_path / f"C{i}.csv", start, delimiter=",", fmt="%.17g")
    script = ("for (i in 0:%d) { X <- as.matrix(read.csv(sprintf('X%%d.csv', i), header = FALSE));"
              " C <- as.matrix(read.csv(sprintf('C%%d.csv', i), header = FALSE));"
              " z <- suppressWarnings(kmeans(X, C, iter.max = 10, algorithm = 'Hartigan-Wong'));"
              " cat(z$cluster - 1, '\\n') }" % (len(cases) - 1))
    out = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    rows = out.stdout.strip().splitlines()
    assert len(rows) == len(cases)
    for (X, start), row in zip(cases, rows):
        ours = hartigan_wong(X, start, 10, 50 * len(X))[0]
        assert ours.tolist() == [int(v) for v in row.split()]


def blobs(seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(c, 0.4, (25, 2)) for c in ((0, 0), (5, 0), (0, 5))])


def test_select_k_hartigan_wong_is_deterministic_and_seeding_matters():
    X = blobs()
    hw = {"algorithm": "hartigan-wong"}
    a = select_k(X, range(2, 6), random_state=3, inner_params=hw, n_jobs=1)
    b = select_k(X, range(2, 6), random_state=3, inner_params=hw, n_jobs=2)
    np.testing.assert_array_equal(a.pac, b.pac)
    for k in range(2, 6):
        np.testing.assert_array_equal(a.labels[k], b.labels[k])
    # From random objects (R's and ConsensusClusterPlus's start) many resamples at K = 3 start
    # with two centres in one blob, a local optimum that single transfers cannot leave:
    # ConsensusClusterPlus gives PAC(3) near 0.53 on these blobs (measured) and so do we.
    assert a.pac[1] > 0.3
    plus = select_k(X, range(2, 6), random_state=3,
                    inner_params={"algorithm": "hartigan-wong", "init": "k-means++"})
    assert plus.best_k == 3 and plus.pac[1] == 0.0
    lloyd = select_k(X, range(2, 6), random_state=3, inner_params={"algorithm": "lloyd"})
    default = select_k(X, range(2, 6), random_state=3)
    np.testing.assert_array_equal(lloyd.pac, default.pac)
    assert default.best_k == 3


def test_inner_runs_are_the_direct_calls():
    X = blobs(1)
    samples = _monti.draw_resamples(len(X), 3, 0.8, np.random.default_rng(0))
    runs = _monti.inner_labels(X, samples, [3], "kmeans", 11, 1, None, "hartigan-wong", "random")
    seeds = np.random.SeedSequence(11, spawn_key=(3,)).generate_state(3, dtype=np.uint32)
    from cclust.validation import spawn_seed_sequences

    for h, idx in enumerate(samples):
        rng = np.random.default_rng(spawn_seed_sequences(int(seeds[h]), 1)[0])
        rng.integers(3, 4)
        expected = _monti.hartigan_wong_labels(X[idx], 3, rng)
        np.testing.assert_array_equal(runs[3][idx, h], expected)
        assert (np.delete(runs[3][:, h], idx) == -1).all()


@pytest.mark.parametrize("kwargs, message", [
    ({"inner_params": ["hartigan-wong"]}, "inner_params must be a dict"),
    ({"inner_params": {"algorithm": "macqueen"}}, r"inner_params\['algorithm'\] must be one of"),
    ({"inner_params": {"iter_max": 10}}, "inner_params has unknown key"),
    ({"inner_params": {"algorithm": "hartigan-wong", "init": "forgy"}}, r"inner_params\['init'\] must be one of"),
    ({"inner_params": {"algorithm": "lloyd"}, "inner": "hierarchical"}, "inner_params sets the k-means"),
    ({"inner_params": {"algorithm": "lloyd"}, "method": "kcc"}, "inner_params sets the k-means"),
    ({"inner_params": {"n_init": 0}}, r"inner_params\['n_init'\] must be an int in the range \[1, inf\], got 0"),
    ({"inner_params": {"algorithm": "hartigan-wong", "n_init": 3}},
     r"inner_params\['n_init'\] must be an int in the range \[1, 1\], got 3"),
])
def test_bad_inner_params(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        select_k(blobs(), range(2, 4), random_state=0, **kwargs)


def test_several_lloyd_starts_keep_the_lowest_sum_of_squares():
    """inner_params={"n_init": N}: per resample, N Lloyd runs from successive draws of the
    resample's stream, the one of lowest within sum of squares kept (literal loop below)."""
    from cclust.generators import _kmeans_labels
    from cclust.validation import spawn_seed_sequences

    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(c, 1.0, (25, 3)) for c in ((0, 0, 0), (3, 0, 0), (0, 3, 0), (3, 3, 0), (1.5, 1.5, 3))])
    samples = [np.sort(rng.choice(125, 100, replace=False)) for _ in range(6)]
    runs = _monti.inner_labels(X, samples, [5], "kmeans", 7, 1, None, "lloyd", None, n_init=4)
    one = _monti.inner_labels(X, samples, [5], "kmeans", 7, 1, None, "lloyd", None, n_init=1)
    seeds = np.random.SeedSequence(7, spawn_key=(5,)).generate_state(6, dtype=np.uint32)
    improved = 0
    for h, idx in enumerate(samples):
        stream = np.random.default_rng(spawn_seed_sequences(int(seeds[h]), 1)[0])
        stream.integers(5, 6)
        rows = np.ascontiguousarray(X[idx])
        fits = []
        for _ in range(4):
            labels, centres = _kmeans_labels(rows, 5, stream, "k-means++", 100, 1e-4)
            fits.append((sum(float(((rows[i] - centres[labels[i]]) ** 2).sum()) for i in range(rows.shape[0])), labels))
        best = min(fits, key=lambda fit: fit[0])
        np.testing.assert_array_equal(runs[5][idx, h], best[1])
        np.testing.assert_array_equal(one[5][idx, h], fits[0][1])      # one start: the first of the stream
        improved += best[0] < fits[0][0] - 1e-9
    assert improved >= 1  # the inputs are hard enough that a later start does better somewhere


def test_the_reference_null_runs_three_starts_and_the_plain_protocol_one():
    X = np.random.default_rng(0).normal(size=(60, 3))
    three = select_k(X, [2, 3], n_resamples=4, n_references=2, random_state=0)
    same = select_k(X, [2, 3], n_resamples=4, n_references=2, random_state=0, inner_params={"n_init": 3})
    one = select_k(X, [2, 3], n_resamples=4, n_references=2, random_state=0, inner_params={"n_init": 1})
    np.testing.assert_array_equal(three.pac_reference, same.pac_reference)
    assert not np.array_equal(three.pac_reference, one.pac_reference)
    plain = select_k(X, [2, 3], n_resamples=4, null=None, random_state=0)
    plain_one = select_k(X, [2, 3], n_resamples=4, null=None, random_state=0, inner_params={"n_init": 1})
    np.testing.assert_array_equal(plain.pac, plain_one.pac)
