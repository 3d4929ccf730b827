"""cclust.markers against scanpy's ``rank_genes_groups`` on ``pbmc68k_reduced`` (shipped inside
scanpy: no download), one louvain cluster against the rest, ``use_raw=False``.

What differs, and why the tolerances are what they are:

* scanpy stores ``scores`` as float32 (``pvals`` and ``pvals_adj`` as float64), so scores agree
  to float32's precision (relative 2**-24, about 6e-8; 1e-6 is asked).
* Wilcoxon (``tie_correct=True``): the same statistic (ranks over all cells, average ranks for
  ties, the tie-corrected variance, no continuity correction); p-values are computed in float64
  on both sides from the same z, so they agree to 1e-11 relative (summation order only), and
  so do the Benjamini-Hochberg adjusted values.
* Welch's t-test: scanpy computes each group's variance in one pass as E[x^2] - E[x]^2
  (``_get_mean_var``), which loses digits for genes nearly constant in a group (this data is
  scaled and clipped, so many are). Where a gene varies on both sides the t statistics agree to
  1e-6 relative and the p-values to 1e-3 relative (a relative error d in t moves p by about
  t^2 d: at t = 21, 5e-7 in t is 2e-4 in p). Where a gene is constant in the cluster or in the
  rest, the one-pass variance can come out slightly negative, scanpy's t is then NaN and is
  reported as score 0 and p-value 1; cclust gives SciPy's ``ttest_ind(equal_var=False)`` there,
  a finite t (checked to 1e-12; p-values to 1e-9, as a p-value near 1e-58 magnifies the last
  bits of t).
"""
import warnings

import numpy as np
import pytest
from scipy import stats

import cclust

sc = pytest.importorskip("scanpy")


@pytest.fixture(scope="module")
def pbmc():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adata = sc.datasets.pbmc68k_reduced()
    return adata


def _scanpy(adata, method):
    a = adata.copy()
    extra = {"tie_correct": True} if method == "wilcoxon" else {}
    with warnings.catch_warnings():
        # the log fold changes of scaled (negative) values warn; they are not compared
        warnings.simplefilter("ignore")
        sc.tl.rank_genes_groups(a, groupby="louvain", method=method, use_raw=False, n_genes=a.n_vars, **extra)
    return a.uns["rank_genes_groups"]


def _aligned(adata, method):
    """Per louvain cluster: scanpy's gene names, scores, p-values and adjusted p-values, and
    cclust's for the same genes in scanpy's order."""
    labels = adata.obs["louvain"].astype(str).to_numpy()
    table = cclust.markers(adata.X, labels, method=method, feature_names=list(adata.var_names))
    theirs = _scanpy(adata, method)
    out = {}
    for group in theirs["names"].dtype.names:
        names = list(theirs["names"][group])
        ours = table[table["cluster"] == group].set_index("feature").loc[names]
        out[group] = (names,
                      {key: np.asarray(theirs[key][group], dtype=np.float64)
                       for key in ("scores", "pvals", "pvals_adj")},
                      {"scores": ours["score"].to_numpy(), "pvals": ours["p_value"].to_numpy(),
                       "pvals_adj": ours["p_value_adjusted"].to_numpy()})
    return out, labels


def test_wilcoxon_equals_rank_genes_groups(pbmc):
    aligned, _ = _aligned(pbmc, "wilcoxon")
    assert len(aligned) == 11
    for names, theirs, ours in aligned.values():
        assert len(names) == pbmc.n_vars
        np.testing.assert_allclose(ours["scores"], theirs["scores"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(ours["pvals"], theirs["pvals"], rtol=1e-11, atol=0)
        np.testing.assert_allclose(ours["pvals_adj"], theirs["pvals_adj"], rtol=1e-11, atol=0)


def test_t_test_equals_rank_genes_groups_where_both_sides_vary(pbmc):
    aligned, labels = _aligned(pbmc, "t-test")
    X = np.asarray(pbmc.X, dtype=np.float64)
    column = {name: j for j, name in enumerate(pbmc.var_names)}
    one_sided = 0
    for group, (names, theirs, ours) in aligned.items():
        member = labels == group
        idx = np.array([column[name] for name in names])
        varies = (np.ptp(X[member][:, idx], axis=0) > 0) & (np.ptp(X[~member][:, idx], axis=0) > 0)
        np.testing.assert_allclose(ours["scores"][varies], theirs["scores"][varies], rtol=1e-6, atol=0)
        np.testing.assert_allclose(ours["pvals"][varies], theirs["pvals"][varies], rtol=1e-3, atol=0)
        # constant on one side: scanpy's score is 0 or a value from a variance that should be
        # 0; cclust's is SciPy's
        for j, gene in zip(np.flatnonzero(~varies), idx[~varies]):
            with warnings.catch_warnings():
                # SciPy warns that one side's values are identical (it still gives the t)
                warnings.simplefilter("ignore", RuntimeWarning)
                expected = stats.ttest_ind(X[member, gene], X[~member, gene], equal_var=False)
            assert ours["scores"][j] == pytest.approx(expected.statistic, rel=1e-12)
            # p-values of |t| near 20 magnify the last bits of t and of the degrees of freedom,
            # which a constant side's variance (0, or SciPy's rounding of it) sets
            assert ours["pvals"][j] == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-300)
            one_sided += 1
    assert one_sided > 0  # the case the notes above describe does occur in these data
