"""select_k's reference null (John et al. 2020, M3C): reference data sets, RCSI, p-values, K = 1.

The statistics are checked against slow literal computations on small inputs; the reference data
sets against the principal-component spread of the data they copy; the decision on data with and
without clusters, including a calibration check over a few dozen null data sets that the plain
protocol (which never answers K = 1) cannot pass.
"""
import math

import numpy as np
import pytest

import cclust
from cclust import select_k
from cclust._reference import ReferenceShape, beta_p, monte_carlo_p, predictive_p, rcsi
from cclust.errors import ValidationError


def _correlated(n, seed=0):
    rng = np.random.default_rng(seed)
    A = np.array([[3.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.5, -0.5, 0.2]])
    return rng.normal(size=(n, 3)) @ A + np.array([10.0, -2.0, 0.5])


@pytest.mark.parametrize("null", ["gaussian", "uniform"])
def test_a_reference_keeps_the_principal_axes_and_their_spread(null):
    X = _correlated(4000)
    ref = ReferenceShape(X).draw(null, np.random.default_rng(1))
    assert ref.shape == X.shape
    if null == "gaussian":  # centred on the data's mean (the uniform box on its range's middle)
        np.testing.assert_allclose(ref.mean(axis=0), X.mean(axis=0), atol=0.1)
    # the principal directions and the spread along each are the data's
    _, s_data, vt_data = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    scores = (ref - ref.mean(axis=0)) @ vt_data.T
    data_sd = s_data / math.sqrt(X.shape[0] - 1)
    if null == "gaussian":
        np.testing.assert_allclose(scores.std(axis=0, ddof=1), data_sd, rtol=0.05)
    else:  # uniform over the range of each component: within it, and spread evenly across it
        data_scores = (X - X.mean(axis=0)) @ vt_data.T
        ref_scores = (ref - X.mean(axis=0)) @ vt_data.T
        span = data_scores.max(axis=0) - data_scores.min(axis=0)
        assert (ref_scores >= data_scores.min(axis=0) - 1e-9 * span).all()
        assert (ref_scores <= data_scores.max(axis=0) + 1e-9 * span).all()
        np.testing.assert_allclose(ref_scores.std(axis=0, ddof=1), span / math.sqrt(12), rtol=0.05)
    # the components are uncorrelated in the reference (no structure beyond the axes)
    C = np.corrcoef(scores.T)
    assert np.abs(C - np.eye(3)).max() < 0.06


def test_a_reference_of_rank_deficient_data_stays_in_its_subspace():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2)) @ rng.normal(size=(2, 6))  # rank 2 in 6 dimensions (d > rank)
    shape = ReferenceShape(X)
    assert shape.rank == 2
    ref = shape.draw("gaussian", rng)
    assert np.linalg.matrix_rank(ref - ref.mean(axis=0), tol=1e-8) == 2


def test_a_reference_refuses_data_without_shape():
    with pytest.raises(ValidationError, match="at least 3 objects"):
        ReferenceShape(np.zeros((2, 3)) + [[0.0], [1.0]])
    with pytest.raises(ValidationError, match="no spread"):
        ReferenceShape(np.ones((10, 3)))


def _literal(pac, refs):
    """M3C's formulas written out one K and one reference at a time."""
    from scipy.stats import beta

    out_rcsi, out_se, out_mc, out_beta = [], [], [], []
    B = len(refs)
    for j, observed in enumerate(pac):
        column = [refs[b][j] for b in range(B)]
        diffs = [math.log(max(c, 1e-4)) - math.log(max(observed, 1e-4)) for c in column]
        mean = sum(diffs) / B
        out_rcsi.append(mean)
        out_se.append(math.sqrt(sum((d - mean) ** 2 for d in diffs) / (B - 1)) / math.sqrt(B))
        out_mc.append((1 + sum(1 for c in column if c < observed)) / (B + 1))
        mu = sum(column) / B
        var = sum((c - mu) ** 2 for c in column) / (B - 1)
        if var > 1e-12 * mu * (1 - mu) and 0 < mu < 1 and var < mu * (1 - mu):
            a = ((1 - mu) / var - 1 / mu) * mu ** 2  # M3C's estBetaParams
            out_beta.append(beta.cdf(observed, a, a * (1 / mu - 1)))
        else:
            out_beta.append(float("nan"))
    return out_rcsi, out_se, out_mc, out_beta


def test_rcsi_and_p_values_match_the_literal_formulas():
    rng = np.random.default_rng(4)
    pac = np.array([0.0, 0.21, 0.5, 0.33])
    refs = rng.uniform(0.1, 0.6, size=(7, 4))
    refs[:, 3] = 0.4  # every reference alike: no beta distribution has a zero variance
    got_rcsi, got_se = rcsi(pac, refs)
    want = _literal(pac.tolist(), refs.tolist())
    np.testing.assert_allclose(got_rcsi, want[0], rtol=1e-12)
    np.testing.assert_allclose(got_se, want[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(monte_carlo_p(pac, refs), want[2], rtol=1e-12)
    np.testing.assert_allclose(beta_p(pac, refs), want[3], rtol=1e-10, equal_nan=True)
    assert np.isnan(beta_p(pac, refs)[3])


def _literal_predictive(pac, refs):
    """The prediction p-value written out one K at a time: Student's t on B - 1 degrees of freedom
    for the data's logit PAC against the references' mean and spread."""
    from scipy.stats import t

    def logit(p):
        p = min(max(p, 1e-4), 1 - 1e-4)
        return math.log(p / (1 - p))

    B = len(refs)
    out = []
    for j, observed in enumerate(pac):
        z = [logit(refs[b][j]) for b in range(B)]
        mean = sum(z) / B
        sd = math.sqrt(sum((v - mean) ** 2 for v in z) / (B - 1))
        no_spread = sd <= 1e-12 * max(1.0, abs(mean))  # equal values up to rounding in the mean
        out.append(float("nan") if no_spread else t.cdf((logit(observed) - mean) / (sd * math.sqrt(1 + 1 / B)), B - 1))
    return out


def test_the_predictive_p_value_matches_its_literal_formula():
    rng = np.random.default_rng(5)
    pac = np.array([0.0, 0.21, 0.5, 0.33, 1.0])
    refs = rng.uniform(0.1, 0.6, size=(6, 5))
    refs[:, 3] = 0.4  # no spread: NaN, the caller keeps the Monte Carlo p-value
    refs[0, 0] = 0.0
    np.testing.assert_allclose(predictive_p(pac, refs), _literal_predictive(pac.tolist(), refs.tolist()),
                               rtol=1e-10, equal_nan=True)
    assert np.isnan(predictive_p(pac, refs)[3]) and np.isnan(predictive_p(pac, refs[:1])).all()


def test_a_pac_of_0_is_not_certain_structure_when_a_reference_is_0_too():
    # M3C's beta fit gives exactly 0 here, although one of the ten references is as stable
    refs = np.array([[0.026, 0.11, 0.091, 0.024, 0.0, 0.097, 0.035, 0.045, 0.047, 0.089]]).T
    assert beta_p(np.array([0.0]), refs)[0] == 0.0
    p = predictive_p(np.array([0.0]), refs)[0]
    assert 1e-3 < p < 0.1
    assert monte_carlo_p(np.array([0.0]), refs)[0] == pytest.approx(1 / 11)


def test_the_predictive_p_value_keeps_its_level_with_ten_references_where_the_beta_fit_does_not():
    # Null draws: the data's PAC and the B = 10 references' from one beta distribution (mean 0.3,
    # sd 0.05), 20000 times. A p-value below 0.01 should come 1% of the time: binomial sd 0.07%.
    rng = np.random.default_rng(11)
    mu, sd = 0.3, 0.05
    c = mu * (1 - mu) / sd ** 2 - 1
    draws = rng.beta(mu * c, (1 - mu) * c, size=(11, 20000))
    pac, refs = draws[0], draws[1:]
    predictive = np.mean(predictive_p(pac, refs) < 0.01)
    fitted = np.mean(beta_p(pac, refs) < 0.01)
    assert predictive < 0.0135          # 1.1% on this draw (logit-normal is not exactly beta)
    assert fitted > 0.02                # 2.7%: the fit taken as exact claims too much


def test_structureless_data_get_k1_and_say_why():
    X = np.random.default_rng(0).normal(size=(150, 6))
    plain = select_k(X, range(2, 7), random_state=0, null=None, n_resamples=30)
    assert plain.best_k >= 2  # Monti's PAC alone always names a K
    res = select_k(X, range(2, 7), random_state=0)
    assert res.labels[1].tolist() == [0] * 150 and res.labels_series().nunique() == 1
    assert res.null == "uniform" and res.n_references == 10 and res.n_resamples == 10
    assert res.criterion == "rcsi"
    assert res.best_k == 1
    assert "no evidence of cluster structure" in res.reason
    assert (res.p_value >= res.alpha / 5).all()
    assert res.pac_reference.shape == (10, 5)
    text = res.summary()
    assert "best K = 1" in text and "reference PAC" in text and "RCSI" in text
    table = res.as_table()
    assert {"rcsi", "p_value", "pac_reference_mean"} <= set(table)
    assert res.to_dict()["best_k"] == 1


def test_clusters_are_found_against_the_null_and_k1_may_be_in_the_range():
    rng = np.random.default_rng(1)
    centres = rng.normal(0, 4, size=(4, 5))
    X = np.vstack([rng.normal(c, 0.4, (40, 5)) for c in centres])
    res = select_k(X, range(1, 8), random_state=0, n_resamples=30)
    assert res.best_k == 4
    assert res.k_values.tolist() == [2, 3, 4, 5, 6, 7]
    i = res.k_values.tolist().index(4)
    assert res.p_value[i] < res.alpha / 6
    # K = 3 (two nearby blobs together) is reproduced by every resample too: PAC 0 at 3 and 4,
    # and the finer of the perfectly stable K is taken
    assert res.pac[i] == 0 and res.pac[i - 1] == 0 and "perfectly stable" in res.reason
    again = select_k(X, range(1, 8), random_state=0, n_resamples=30, n_jobs=1)
    np.testing.assert_array_equal(res.pac_reference, again.pac_reference)


def test_the_default_is_calibrated_on_data_without_clusters():
    """Null data sets of four shapes: the default must answer K = 1 in at least 22 of 24.

    With a false "structure" rate near 5% the chance of 3 or more in 24 is about 12%; the plain
    protocol answers K >= 2 on every one of them, so this cannot pass by chance.
    """
    shapes = []
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        n, d = 60 + 10 * seed, 2 + seed % 4
        shapes.append(rng.normal(size=(n, d)))                                   # isotropic Gaussian
        shapes.append(rng.normal(size=(n, d)) @ rng.normal(size=(d, d)))         # correlated Gaussian
        shapes.append(rng.uniform(-1, 1, size=(n, d)))                           # uniform box
        shapes.append(rng.normal(size=(n, d)) * np.geomspace(10, 1, d))          # one elongated cloud
    answers = [select_k(X, range(2, 6), random_state=i).best_k for i, X in enumerate(shapes)]
    assert sum(k == 1 for k in answers) >= 22, answers


def test_bad_reference_input():
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValidationError, match="n_references must be an int"):
        select_k(X, [2, 3], n_references=1, n_resamples=3)
    with pytest.raises(ValidationError, match="data has only 1 distinct row"):
        select_k(np.ones((30, 3)), [2, 3], n_resamples=3)
    with pytest.raises(ValidationError, match=r"alpha must be a finite number in \(0, 1\)"):
        select_k(X, [2, 3], alpha=1.0, n_resamples=3)


def test_the_cli_says_k1_on_structureless_data(tmp_path, capsys):
    from cclust.cli import main

    path = tmp_path / "noise.csv"
    np.savetxt(path, np.random.default_rng(0).normal(size=(80, 4)), delimiter=",", header="a,b,c,d", comments="")
    pytest.importorskip("matplotlib")
    labels, figure = tmp_path / "labels.csv", tmp_path / "k.png"
    assert main(["select-k", str(path), "--k-range", "1", "5", "--resamples", "20", "--out", str(labels),
                 "--plot", str(figure)]) == 0
    out = capsys.readouterr().out
    assert "best K = 1" in out and "no evidence of cluster structure" in out
    assert "K = 1 has no consensus matrix" in out and figure.stat().st_size > 1000
    assert labels.read_text().splitlines() == ["label"] + ["0"] * 80  # one cluster: every object in it
    assert main(["select-k", str(path), "--k-range", "1", "5", "--null", "none"]) == 2
    assert "K = 1 needs a --null" in capsys.readouterr().err
    assert main(["select-k", str(path), "--k-range", "2", "4", "--resamples", "10", "--format", "json"]) == 0
    import json

    record = json.loads(capsys.readouterr().out)
    assert record["best_k"] == 1 and len(record["p_value"]) == 3 and record["null"] == "uniform"


def test_the_cli_runs_consensusclusterplus_default_protocol(capsys):
    from cclust.cli import main

    assert main(["select-k", "iris", "--k-range", "2", "4", "--inner", "hierarchical", "--distance", "pearson",
                 "--inner-linkage", "average", "--final-linkage", "average", "--null", "none",
                 "--resamples", "10"]) == 0
    assert "monti (hierarchical)" in capsys.readouterr().out
    assert main(["select-k", "iris", "--k-range", "2", "4", "--distance", "pearson"]) == 2
    assert "add --inner hierarchical" in capsys.readouterr().err


# -- the gap statistic (Tibshirani, Walther & Hastie 2001; R's cluster::clusGap) ------------------

def _literal_w(X, labels, d_power):
    total = 0.0
    for r in set(labels.tolist()):
        members = [X[i] for i in range(len(labels)) if labels[i] == r]
        pairs = sum(sum((a - b) ** 2) ** 0.5 ** 1 for i, a in enumerate(members) for b in members[i + 1:]) \
            if d_power == 1 else sum(float(sum((a - b) ** 2)) ** (d_power / 2)
                                     for i, a in enumerate(members) for b in members[i + 1:])
        total += pairs / len(members)
    return 0.5 * total


@pytest.mark.parametrize("d_power", [1, 2, 0.5])
def test_the_within_dispersion_is_clusgap_w(d_power):
    from cclust._reference import within_dispersion

    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3))
    labels = rng.integers(0, 3, 25)
    assert within_dispersion(X, labels, d_power) == pytest.approx(_literal_w(X, labels, d_power), rel=1e-12)


@pytest.mark.parametrize("d_power", [1, 0.5])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_the_within_dispersion_of_a_large_cluster_counts_every_pair_once(d_power, n_threads):
    # 300 members: row sums of the compiled core spread over threads, against the full matrix
    from cclust._reference import within_dispersion

    rng = np.random.default_rng(2)
    X = rng.normal(size=(310, 3))
    labels = np.r_[np.zeros(300, dtype=np.int64), np.ones(10, dtype=np.int64)]
    expected = 0.0
    for r in (0, 1):
        members = X[labels == r]
        d = np.sqrt(((members[:, None, :] - members[None, :, :]) ** 2).sum(axis=2))
        expected += 0.5 * (d[np.triu_indices(len(members), 1)] ** d_power).sum() / len(members)
    assert within_dispersion(X, labels, d_power, n_threads) == pytest.approx(expected, rel=1e-12)
    assert within_dispersion(X, labels, d_power, n_threads) == within_dispersion(X, labels, d_power, 1)


def _ordered_root_sum(X):
    """The compiled pair sum's documented order, in Python floats: for each row i, the squared
    distances to the rows after it summed over the features in order from +0, their roots
    summed in four running lanes (j - i - 1 mod 4) over the first multiple of four, the lanes
    added as (s0 + s1) + (s2 + s3), then the last roots one by one; the row sums in row order."""
    import math

    rows = X.tolist()
    total = 0.0
    for i, xi in enumerate(rows[:-1]):
        rest = rows[i + 1:]
        body = len(rest) - len(rest) % 4
        lanes = [0.0, 0.0, 0.0, 0.0]
        roots = []
        for xj in rest:
            sq = 0.0
            for a, b in zip(xj, xi):
                sq += (a - b) * (a - b)
            roots.append(math.sqrt(sq))
        for j in range(body):
            lanes[j % 4] += roots[j]
        row = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
        for j in range(body, len(rest)):
            row += roots[j]
        total += row
    return total


@pytest.mark.parametrize("m", [2, 5, 8, 13, 40])
@pytest.mark.parametrize("d", [1, 3, 7])
def test_the_pair_sum_follows_its_documented_order_bit_for_bit(m, d):
    # whichever instruction set the compiled core picks (SSE2 pairs, AVX2 fours or scalar), the
    # sum is the same bits as the documented order
    from cclust._ext import _distances

    X = np.random.default_rng(m * 10 + d).normal(scale=3.0, size=(m, d))
    expected = _ordered_root_sum(X)
    assert _distances.pair_distance_sum(X, 1.0, 1) == expected
    assert _distances.pair_distance_sum(X, 1.0, 2) == expected


def _literal_max_se(f, se, rule, factor=1.0):
    """R's cluster::maxSE, 1-based as R returns it, written out with R's vector semantics."""
    K = len(f)
    fse = [factor * s for s in se]
    decr = [f[i + 1] - f[i] <= 0 for i in range(K - 1)]
    first = decr.index(True) + 1 if any(decr) else K
    if rule == "firstmax":
        return first
    if rule == "globalmax":
        return f.index(max(f)) + 1
    if rule == "Tibs2001SEmax":
        mp = [f[i] >= f[i + 1] - fse[i + 1] for i in range(K - 1)]
        return mp.index(True) + 1 if any(mp) else K
    nc = first if rule == "firstSEmax" else f.index(max(f)) + 1
    mp = [f[i] >= f[nc - 1] - fse[nc - 1] for i in range(nc - 1)]
    return mp.index(True) + 1 if any(mp) else nc


@pytest.mark.parametrize("rule", ["firstSEmax", "Tibs2001SEmax", "globalSEmax", "firstmax", "globalmax"])
def test_the_rules_are_clusgaps(rule):
    from cclust._reference import max_se

    rng = np.random.default_rng(2)
    for _ in range(200):
        K = int(rng.integers(2, 9))
        f = np.round(rng.normal(size=K).cumsum(), 2)
        se = np.abs(rng.normal(0, 0.5, K))
        assert max_se(f, se, rule) + 1 == _literal_max_se(f.tolist(), se.tolist(), rule), (f, se)


def test_the_gap_statistic_finds_blobs_and_says_k1_on_noise():
    from cclust.selection import gap_statistic

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.3, (30, 2)) for c in ((0, 0), (4, 0), (0, 4))])
    res = gap_statistic(X, 5, n_references=20, random_state=0)
    assert res.best_k == 3 and res.k_values.tolist() == [1, 2, 3, 4, 5]
    assert cclust.get("ari")(res.labels[3], np.repeat([0, 1, 2], 30)) == 1.0
    np.testing.assert_allclose(res.gap, res.e_log_w - res.log_w)
    assert res.log_w[0] == pytest.approx(math.log(_literal_w(X, np.zeros(90, int), 1)), rel=1e-12)
    noise = gap_statistic(rng.normal(size=(100, 3)), 5, n_references=20, random_state=0)
    assert noise.best_k == 1 and "no evidence of cluster structure" in noise.reason
    again = gap_statistic(X, 5, n_references=20, random_state=0, reference="original", n_jobs=1)
    assert again.best_k == 3 and "best K = 3" in again.summary()


@pytest.mark.parametrize("kwargs, message", [
    ({"k_max": 1}, r"k_max must be an int in the range \[2, 30\], got 1"),
    ({"n_references": 1}, r"n_references must be an int in the range \[2, inf\], got 1"),
    ({"d_power": 0}, r"d_power must be a finite number in \(0, inf\], got 0"),
    ({"rule": "Tibs"}, r"rule must be one of \['firstSEmax'"),
    ({"reference": "box"}, r"reference must be one of"),
])
def test_bad_gap_input(kwargs, message):
    from cclust.selection import gap_statistic

    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValidationError, match=message):
        gap_statistic(X, **{"k_max": 3, "n_references": 2, **kwargs})


# -- per-cluster stability (Hennig 2007; fpc::clusterboot) ----------------------------------------

def test_cluster_stability_matches_a_literal_jaccard_bootstrap():
    from cclust.selection import cluster_stability

    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(c, 0.6, (20, 2)) for c in ((0, 0), (2.5, 0), (0, 4))])
    seen = []

    def recorder(Y, k, seed):
        labels = cclust.generate("kmeans", Y, k, n_partitions=1, k_range=(k, k), random_state=seed).labels[:, 0]
        seen.append((Y.copy(), labels))
        return labels

    given = np.repeat([0, 1, 2], 20)
    res = cluster_stability(X, 3, labels=given, clusterer=recorder, n_resamples=15, random_state=0)
    assert len(seen) == 15
    for b, (Y, theirs) in enumerate(seen):
        # the resample's objects, recovered from their rows (the blobs' rows are all distinct)
        rows = [int(np.flatnonzero((X == y).all(axis=1))[0]) for y in Y]
        for c in range(3):
            mine = [given[i] == c for i in rows]
            if not any(mine):
                assert np.isnan(res.jaccard[b, c])
                continue
            best = 0.0
            for d in set(theirs.tolist()):
                other = [t == d for t in theirs]
                both = sum(a and o for a, o in zip(mine, other))
                either = sum(a or o for a, o in zip(mine, other))
                best = max(best, both / either)
            assert res.jaccard[b, c] == pytest.approx(best, abs=1e-12)
    np.testing.assert_allclose(res.mean_jaccard, np.nanmean(res.jaccard, axis=0))
    assert res.dissolved.tolist() == (res.jaccard <= 0.5).sum(axis=0).tolist()
    assert res.recovered.tolist() == (res.jaccard > 0.75).sum(axis=0).tolist()
    assert "mean Jaccard" in res.summary()


def test_stable_and_unstable_clusters_are_told_apart():
    from cclust.selection import cluster_stability

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal((0, 0), 0.3, (40, 2)), rng.normal((6, 0), 0.3, (40, 2)),
                   rng.normal((6, 0), 0.3, (40, 2)) + [0.1, 0.0]])  # two "clusters" in one blob
    res = cluster_stability(X, 3, n_resamples=30, scheme="subset", random_state=0)
    alone = res.labels[0]
    # one k-means++ start per resample now and then splits the lone blob instead (a local optimum)
    assert res.mean_jaccard[alone] > 0.85 and res.dissolved[alone] <= 2
    others = [c for c in range(3) if c != alone]
    assert res.mean_jaccard[others].max() < 0.75 and (res.dissolved[others] >= 5).all()


@pytest.mark.parametrize("scheme", ["boot", "subset"])
def test_cluster_stability_is_the_same_on_any_number_of_threads(scheme):
    from cclust.selection import cluster_stability

    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(c, 0.8, (40, 3)) for c in ((0, 0, 0), (3, 0, 0), (0, 3, 0))])
    one = cluster_stability(X, 3, scheme=scheme, n_resamples=21, random_state=4, n_jobs=1)
    two = cluster_stability(X, 3, scheme=scheme, n_resamples=21, random_state=4, n_jobs=2)  # three batches
    np.testing.assert_array_equal(one.jaccard, two.jaccard)
    np.testing.assert_array_equal(one.labels, two.labels)
    with pytest.raises(ValidationError, match="n_jobs"):
        cluster_stability(X, 3, n_resamples=5, n_jobs=0)


@pytest.mark.parametrize("kwargs, message", [
    ({"scheme": "jitter"}, r"scheme must be one of \['boot', 'subset'\]"),
    ({"n_resamples": 0}, r"n_resamples must be an int in the range \[1, inf\], got 0"),
    ({"labels": [0, 1]}, r"labels has 2 entries but data has 30 objects"),
    ({"subset_size": 2}, r"subset_size must be an int in the range \[3, 30\], got 2"),
])
def test_bad_stability_input(kwargs, message):
    from cclust.selection import cluster_stability

    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValidationError, match=message):
        cluster_stability(X, 3, **kwargs)


# -- select_k's per-cluster stability, its gap criterion, and the null of a consensus method ------

def _literal_best_jaccard(L, labels):
    """Per resample and cluster, the largest |C ∩ D| / |C ∪ D| with a cluster D of the resample,
    over the objects the resample drew (set arithmetic, one pair of clusters at a time)."""
    k = int(labels.max()) + 1
    out = np.full((L.shape[1], k), np.nan)
    for h in range(L.shape[1]):
        drawn = [i for i in range(L.shape[0]) if L[i, h] >= 0]
        for c in range(k):
            mine = {i for i in drawn if labels[i] == c}
            if not mine:
                continue
            out[h, c] = max(len(mine & {i for i in drawn if L[i, h] == d}) / len(mine | {i for i in drawn if L[i, h] == d})
                            for d in {int(L[i, h]) for i in drawn})
    return out


def test_resample_jaccard_matches_the_literal_sets():
    from cclust import _monti

    rng = np.random.default_rng(5)
    L = rng.integers(0, 4, size=(40, 12)).astype(np.int32)
    L[rng.random(L.shape) < 0.3] = -1                   # objects a resample did not draw
    L[:8, 3] = -1                                        # a resample without cluster 0's members below
    labels = np.repeat(np.arange(5), 8)
    np.testing.assert_allclose(_monti.resample_jaccard(L, labels, 5), _literal_best_jaccard(L, labels),
                               rtol=0, atol=1e-12)
    assert np.isnan(_monti.resample_jaccard(L, labels, 5)[3, 0])


def test_select_k_reports_each_clusters_stability():
    rng = np.random.default_rng(0)
    # two well-separated blobs and a third blob touching the second one
    X = np.vstack([rng.normal((0, 0), 0.3, (40, 2)), rng.normal((6, 0), 0.5, (40, 2)), rng.normal((7.2, 0), 0.5, (40, 2))])
    res = select_k(X, [2, 3], n_resamples=20, random_state=0, null=None)
    for k in (2, 3):
        stability = res.cluster_stability[k]
        assert stability.scheme == "subset" and stability.n_resamples == 20 and stability.subset_size == 96
        np.testing.assert_array_equal(stability.labels, res.labels[k])
        assert stability.jaccard.shape == (20, k)
        table = res.cluster_table(k)
        assert table["size"] == np.bincount(res.labels[k]).tolist()
        assert table["cluster_consensus"] == res.cluster_consensus[k].tolist()
    lone = res.labels[3][0]
    touching = [c for c in range(3) if c != lone]
    assert res.cluster_stability[3].mean_jaccard[lone] > 0.95
    assert res.cluster_stability[3].mean_jaccard[touching].min() < res.cluster_stability[3].mean_jaccard[lone]
    text = res.summary()
    assert f"clusters at K = {res.best_k}" in text and "Hennig 2007" in text
    import json

    record = json.loads(json.dumps(res.to_dict()))
    assert record["cluster_stability"]["3"]["mean_jaccard"] == res.cluster_stability[3].mean_jaccard.tolist()
    with pytest.raises(ValidationError, match=r"k must be one of the K tried \(\[2, 3\]\), got 4"):
        res.cluster_table(4)


def test_the_gap_criterion_is_the_gap_statistic_of_the_k_tried():
    from cclust._pipeline import child_seeds
    from cclust.selection import gap_statistic
    from cclust.selection._recommend import _recommend_gap

    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.4, (30, 2)) for c in ((0, 0), (4, 0), (0, 4), (4, 4))])
    res = select_k(X, range(2, 7), criterion="gap", n_resamples=5, random_state=0)
    assert res.null is None and res.p_value is None        # the gap carries its own reference
    assert res.gap.k_values.tolist() == [1, 2, 3, 4, 5, 6] and res.gap.d_power == 2
    assert res.best_k == res.gap.best_k == 4, res.summary()
    table = res.as_table()
    assert table["gap"] == res.gap.gap[1:].tolist() and table["gap_se"] == res.gap.se_sim[1:].tolist()
    # the same numbers as gap_statistic called alone with the same reference and seed
    alone = gap_statistic(X, 6, n_references=10, d_power=2, rule="Tibs2001SEmax",
                          random_state=int(np.random.SeedSequence(
                              child_seeds(0, 1)[0], spawn_key=(4,)).generate_state(1)[0]))
    np.testing.assert_array_equal(alone.gap, res.gap.gap)
    # on K tried that skip some, the rule runs on K = 1 and those K: a literal maxSE on the sequence
    gap = res.gap
    for ks in ([2, 4, 6], [3, 5], [5, 6]):
        sequence = [1] + ks
        f, s = gap.gap[np.array(sequence) - 1], gap.se_sim[np.array(sequence) - 1]
        first = next((i for i in range(len(f) - 1) if f[i] >= f[i + 1] - s[i + 1]), len(f) - 1)
        assert _recommend_gap(ks, gap)[0] == sequence[first]
    noise = select_k(rng.normal(size=(120, 3)), range(1, 6), criterion="gap", n_resamples=5, random_state=0)
    assert noise.best_k == 1 and "no evidence of cluster structure" in noise.reason
    assert noise.labels[1].tolist() == [0] * 120


def test_a_consensus_method_runs_against_the_reference_null():
    rng = np.random.default_rng(2)
    blobs = np.vstack([rng.normal(c, 0.3, (25, 2)) for c in ((0, 0), (5, 0), (0, 5))])
    settings = dict(method="kcc", null="uniform", n_references=4, n_resamples=8, n_partitions=8, random_state=0)
    res = select_k(blobs, [2, 3, 4], **settings)
    assert res.pac_reference.shape == (4, 3) and res.best_k == 3, res.summary()
    assert np.isfinite(res.objective).all()                # the method's own fit is still reported
    again = select_k(blobs, [2, 3, 4], **{**settings, "n_jobs": 2})
    np.testing.assert_array_equal(res.pac_reference, again.pac_reference)
    noise = select_k(rng.normal(size=(75, 2)), [2, 3, 4], **settings)
    assert noise.best_k == 1, noise.summary()
    assert select_k(blobs, [2, 3], method="kcc", n_resamples=4, n_partitions=4, random_state=0).null is None


def test_the_cli_chooses_k_by_the_gap_and_draws_each_clusters_stability(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from cclust.cli import main

    figure = tmp_path / "k.png"
    assert main(["select-k", "iris", "--k-range", "1", "4", "--criterion", "gap", "--gap-rule", "firstSEmax",
                 "--resamples", "5", "--plot", str(figure), "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "(gap)" in out and "rule firstSEmax" in out and "gap statistic" in out
    assert (tmp_path / "k-clusters.png").stat().st_size > 1000
    assert main(["select-k", "iris", "--k-range", "2", "3", "--resamples", "5", "--format", "json"]) == 0
    import json

    rows = json.loads(capsys.readouterr().out)["cluster_consensus"]
    assert {row["k"] for row in rows} == {2, 3} and len(rows) == 5
    assert set(rows[0]) == {"k", "cluster", "size", "cluster_consensus", "mean_jaccard", "dissolved", "recovered"}
    assert main(["select-k", "iris", "--k-range", "1", "3", "--null", "none"]) == 2
    assert "K = 1 needs a --null or --criterion gap" in capsys.readouterr().err


def test_the_cluster_stability_figure_draws_the_table():
    pytest.importorskip("matplotlib")
    from cclust.plotting import plot_cluster_stability

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.8, (20, 2)) for c in (0, 3, 6)])
    res = select_k(X, [2, 3], n_resamples=10, random_state=0, null=None)
    ax = plot_cluster_stability(res, 3)
    heights = [patch.get_height() for patch in ax.patches]
    table = res.cluster_table(3)
    np.testing.assert_allclose(heights, table["cluster_consensus"] + table["mean_jaccard"])
    with pytest.raises(ValidationError, match="result must be the SelectKResult"):
        plot_cluster_stability(object())


def test_the_reference_data_sets_give_the_same_pacs_on_any_number_of_threads():
    # with two or more threads each reference data set runs on its own thread beside the data's
    # consensus; it must give what the one-thread loop gives, reference by reference
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(c, 1.0, (30, 4)) for c in (0, 5, 10)])
    settings = dict(n_resamples=6, n_references=3, random_state=2)
    one = select_k(X, [2, 3, 4], n_jobs=1, **settings)
    for n_jobs in (2, 3):
        other = select_k(X, [2, 3, 4], n_jobs=n_jobs, **settings)
        np.testing.assert_array_equal(one.pac_reference, other.pac_reference)
        np.testing.assert_array_equal(one.pac, other.pac)
        np.testing.assert_array_equal(one.p_value, other.p_value)
        assert one.best_k == other.best_k
        np.testing.assert_array_equal(one.labels[one.best_k], other.labels[other.best_k])
