"""Memory of the ensemble's shared views, measured at two sizes, and the refusals of the methods
whose dense matrices grow with the widest partition.

The views every method reads (the one-hot CSR, the canonical form) are formed once and cached
on the ensemble; their peak is measured here as the growth of the resident set's high-water
mark in a child process (:func:`cclust.testing.peak_memory`'s measure), so that a detour
through copies of the n x r label matrix (a COO one-hot, transposed and sorted copies of the
labels) shows as a failure, not as a slow drift of the benchmarks.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cclust
from cclust.errors import MemoryBudgetError

_CHILD = r"""
import json, sys
import numpy as np
import scipy.sparse  # imported before measuring: its import is not the one-hot's memory
import cclust
from cclust.testing._memory import _measure
n, r = int(sys.argv[1]), int(sys.argv[2])
labels = np.random.default_rng(0).integers(0, 50, size=(n, r))
E = cclust.Ensemble(labels)
del labels
out = {"labels": E.labels.nbytes}
out["one_hot"], out["source"] = _measure(lambda: E.one_hot())
B = E.one_hot()
out["one_hot_size"] = B.data.nbytes + B.indices.nbytes + B.indptr.nbytes
del B
out["canonical"], _ = _measure(lambda: E.canonical())
out["canonical_is_copy"] = E.canonical() is not E
print(json.dumps(out))
"""

#: RSS noise (allocator pages, the row blocks' temporaries) allowed on top of a bound.
SLACK = 8 * 2**20


@pytest.fixture(scope="module")
def peaks(tmp_path_factory):
    from cclust.testing._memory import _ALLOCATOR_ENV

    env = dict(os.environ, **_ALLOCATOR_ENV)
    # cwd: a source checkout in the working folder would shadow the installed cclust
    cwd = tmp_path_factory.mktemp("memory_scale")
    out = []
    for n in (200_000, 400_000):
        done = subprocess.run([sys.executable, "-c", _CHILD, str(n), "20"], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=600)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout.splitlines()[-1]))
    if any(p["source"] != "rss" for p in out):
        pytest.skip("the resident-set high-water mark cannot be reset here")
    return out


@pytest.mark.parametrize("size", [0, 1], ids=["200k", "400k"])
def test_one_hot_allocates_only_itself(peaks, size):
    """Written straight into CSR: no COO row/column arrays, no float copy of the values."""
    p = peaks[size]
    assert p["one_hot"] <= 1.25 * p["one_hot_size"] + SLACK, p


@pytest.mark.parametrize("size", [0, 1], ids=["200k", "400k"])
def test_canonical_form_holds_one_label_matrix(peaks, size):
    """The canonical form's labels are its one new n x r array: columns ranked without a
    transposed or sorted copy, and permuted in place."""
    p = peaks[size]
    assert p["canonical_is_copy"]
    assert p["canonical"] <= 1.5 * p["labels"] + SLACK, p


_KCC_CHILD = r"""
import json, sys, warnings
import numpy as np
import cclust
from cclust.testing._memory import _measure
warnings.simplefilter("ignore")
n, r = int(sys.argv[1]), int(sys.argv[2])
E = cclust.Ensemble._from_codes(np.random.default_rng(0).integers(0, 40, size=(n, r)))
cclust.consensus("kcc", E.take(objects=np.arange(300)), 8, random_state=0)   # imports, thread pools
out = {"compact": E.compact_labels().nbytes, "dtype": E.compact_labels().dtype.name}
out["kcc"], out["source"] = _measure(lambda: cclust.consensus("kcc", E, 8, random_state=0, n_init=1,
                                                               max_iter=10))
out["made_int32"] = "labels" in E._cache
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def kcc_peaks(tmp_path_factory):
    from cclust.testing._memory import _ALLOCATOR_ENV

    env = dict(os.environ, **_ALLOCATOR_ENV)
    cwd = tmp_path_factory.mktemp("memory_scale_kcc")
    out = []
    for n in (100_000, 200_000):
        done = subprocess.run([sys.executable, "-c", _KCC_CHILD, str(n), "50"], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=600)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout.splitlines()[-1]))
    if any(p["source"] != "rss" for p in out):
        pytest.skip("the resident-set high-water mark cannot be reset here")
    return out


@pytest.mark.parametrize("size", [0, 1], ids=["100k", "200k"])
def test_kcc_reads_the_compact_labels_in_place(kcc_peaks, size):
    """The ensemble stores one byte per label (K_i <= 255) and kcc's passes read those codes
    where they are: no int32 label matrix is made, and the call's peak stays below what one
    int32 copy of the labels (4 n r bytes) would take alone."""
    p = kcc_peaks[size]
    assert p["dtype"] == "uint8" and not p["made_int32"], p
    assert p["kcc"] <= 4 * p["compact"], p


def _wide_ensemble():
    """200 objects, partitions with up to 100 clusters (the memberships' width)."""
    rng = np.random.default_rng(3)
    truth = np.repeat(np.arange(4), 50)
    columns = [truth * 25 + rng.integers(0, 25, size=200) for _ in range(6)]
    return cclust.Ensemble(np.column_stack(columns))


@pytest.mark.parametrize("name", ["dwh", "se", "he", "sm", "hm"])
def test_median_methods_refuse_their_dense_memberships_over_the_budget(name, monkeypatch):
    """3 x 200 x 100 float64 = 480000 bytes: over a budget of 400000 they refuse, naming the
    width; at 1 MB they run."""
    E = _wide_ensemble()
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "400000")
    with pytest.raises(MemoryBudgetError, match="membership matrices"):
        cclust.consensus(name, E, 4, random_state=0)
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "1000000")
    assert cclust.consensus(name, E, 4, random_state=0).labels.shape == (200,)


def test_dwh_in_place_pass_matches_the_dense_update():
    """DWH's pass with the partition's memberships added in place equals the textbook update
    ``M <- (1 - s_b) M + s_b U_b P_b`` with U_b P_b formed densely (a soft copy of the same
    partitions takes that route)."""
    from cclust.soft import SoftEnsemble

    E = _wide_ensemble().take(objects=np.arange(120))
    hard = cclust.consensus("dwh", E, 4, random_state=0)
    memberships = [np.eye(int(k))[E.labels[:, i]] for i, k in enumerate(E.n_clusters)]
    soft = cclust.consensus("dwh", SoftEnsemble(memberships), 4, random_state=0)
    np.testing.assert_allclose(hard.extras["membership"], soft.extras["membership"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name, words", [("hbgf", "METIS on the bipartite graph"), ("hgpa", "hgpa's hypergraph")])
def test_bipartite_metis_call_refuses_over_the_budget(name, words, monkeypatch):
    """HBGF's graph asks for its METIS call's peak, about 96 bytes per adjacency entry, before
    the call: 2 x 200 x 6 entries need about 230 kB. HGPA's size estimate makes the same call,
    after HGPA has asked for its hypergraph, the larger figure (270 bytes a pin, 324 kB here)."""
    E = _wide_ensemble()
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "100000")
    with pytest.raises(MemoryBudgetError, match=words):
        cclust.consensus(name, E, 4, random_state=0)
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", str(2**31))
    assert cclust.consensus(name, E, 4, random_state=0).labels.shape == (200,)
