"""The fast paths of select_k's consensus-method route give exactly what the general paths give:
the trusted Ensemble constructor, the cached signature reads, and threads over resamples."""
import numpy as np
import pytest

from cclust import Ensemble, select_k
from cclust.base import accepts
from cclust.datasets import load_iris


def _same(a, b):
    assert a == b
    assert a.labels.dtype == b.labels.dtype == np.int32
    assert np.array_equal(a.n_clusters, b.n_clusters) and a.n_clusters.dtype == b.n_clusters.dtype
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.weights, b.weights)
    assert not a.labels.flags.writeable


@pytest.mark.parametrize("seed", range(6))
def test_from_codes_equals_public_constructor(seed):
    rng = np.random.default_rng(seed)
    n, r = int(rng.integers(1, 40)), int(rng.integers(1, 6))
    ks = rng.integers(1, 6, size=r)
    M = np.column_stack([rng.integers(0, k, size=n) for k in ks])   # may leave labels unused
    if seed % 3 == 0:
        M[rng.integers(0, n), 0] = -1                                 # a missing label
    if seed % 3 == 1:
        M = M * 2                                                    # gaps: re-encoded
    _same(Ensemble._from_codes(M), Ensemble(M))


def test_from_codes_takes_the_trusted_path_only_for_encoded_columns():
    M = np.array([[0, 1], [1, 0], [2, 0]])
    E = Ensemble._from_codes(M)
    assert E.n_clusters.tolist() == [3, 2]
    _same(E, Ensemble(M))
    _same(Ensemble._from_codes(np.array([[0, 5], [2, 5]])), Ensemble(np.array([[0, 5], [2, 5]])))


def test_accepts_reads_each_callable_right():
    def f(a, *, b=1, **kw):
        return a

    def g(a, b=1):
        return a

    class Unhashable:
        __hash__ = None

        def __call__(self, a, c=1):
            return a

    assert accepts(f, "zzz") and not accepts(f, "zzz", var_keyword=False) and accepts(f, "b")
    assert accepts(g, "b") and not accepts(g, "c")
    u = Unhashable()
    assert accepts(u, "c") and not accepts(u, "b")
    assert accepts(len, "x", unknown=True) == accepts(len, "x", unknown=True)


def test_select_k_kcc_labels_do_not_depend_on_n_jobs():
    X, _ = load_iris()
    runs = [select_k(X, [2, 3], method="kcc", n_resamples=6, n_partitions=8, random_state=3, n_jobs=jobs)
            for jobs in (1, 2, 3)]
    for other in runs[1:]:
        assert np.array_equal(runs[0].pac, other.pac) and np.array_equal(runs[0].cdf, other.cdf)
        assert np.array_equal(runs[0].objective, other.objective)
        for k in (2, 3):
            assert np.array_equal(runs[0].labels[k], other.labels[k])


UTILITIES = [("uc", None), ("uh", None), ("ucos", None), ("ulp", 5), ("nuc", None), ("nuh", None),
             ("nucos", None), ("nulp", 8)]


@pytest.mark.parametrize("name,p", UTILITIES)
@pytest.mark.parametrize("seed", range(8))
def test_grouped_utilities_are_bit_identical_to_per_partition_loops(name, p, seed):
    import reference_utility_loops as ref
    from cclust.utilities import resolve

    util = resolve(name, p)
    rng = np.random.default_rng(seed)
    n, r, k = int(rng.integers(5, 300)), int(rng.integers(1, 40)), int(rng.integers(2, 20))
    widths = rng.integers(1, 3 + int(rng.integers(1, 30)), size=r)
    M = np.column_stack([rng.integers(0, w, size=n) for w in widths])
    if seed % 2:
        M[rng.random(M.shape) < 0.2] = -1                    # missing labels: empty rows appear
    E = Ensemble(M)
    labels = rng.integers(0, k, size=n)
    if seed % 4 == 3:
        labels[labels == 1] = 0                              # an empty consensus cluster
    table = E.contingency(labels, k)
    assert np.array_equal(util.partition_utilities(E, table), ref.partition_utilities(util, E, table),
                          equal_nan=True)
    assert np.array_equal(util.normalizers(E), ref.normalizers(util, E))
    assert util.gamma_offset(E) == ref.gamma_offset(util, E)


def test_the_documented_largest_n_of_the_default_dense_route_is_the_budgets():
    # select_k's docstring: with the default budget, 10 resamples and K = 2..8, "auto" runs the
    # dense route up to 13,191 objects and the sparse one above
    from cclust import _monti
    from cclust.validation import memory_budget

    budget = memory_budget(None)
    assert _monti.dense_bytes(13191, 10, range(2, 9), False) <= budget < _monti.dense_bytes(13192, 10, range(2, 9),
                                                                                           False)
