"""Memory of the ensemble's shared views, measured at two sizes, and the refusals of the methods
whose dense matrices grow with the widest partition.

The views every method reads (the one-hot CSR, the canonical form) are formed once and cached
on the ensemble; their peak is measured here as the growth of the resident set's high-water
mark in a child process (:func:`cclust.testing.peak_memory`'s measure), so that a detour
through copies of the n x r label matrix (a COO one-hot, transposed and sorted copies of the
labels) shows as a failure, not as a slow drift of the benchmarks. The same holds for the
methods whose memory was cut to run at 10^6 objects (WOKMEANS's object weights, EM's runs) and
for the refusals that now come before the one-hot or the generation (MCLA, WOMC, GKCC).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cclust
from cclust.errors import MemoryBudgetError

# The measuring children of the module fixtures run once, on one worker, under pytest-xdist
# (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("memory-scale")

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


def _run_children(tmp_path_factory, child, sizes, r, env=None):
    """The JSON line ``child`` prints, run in a fresh process for each n of ``sizes`` with r
    partitions (``env``: variables to set besides the allocator's); skips where the
    resident-set high-water mark cannot be reset."""
    from cclust.testing._memory import _ALLOCATOR_ENV

    env = dict(os.environ, **_ALLOCATOR_ENV, **(env or {}))
    # cwd: a source checkout in the working folder would shadow the installed cclust
    cwd = tmp_path_factory.mktemp("memory_scale")
    out = []
    for n in sizes:
        done = subprocess.run([sys.executable, "-c", child, str(n), str(r)], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=600)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout.splitlines()[-1]))
    if any(p["source"] != "rss" for p in out):
        pytest.skip("the resident-set high-water mark cannot be reset here")
    return out


@pytest.fixture(scope="module")
def peaks(tmp_path_factory):
    return _run_children(tmp_path_factory, _CHILD, (200_000, 400_000), 20)


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
    return _run_children(tmp_path_factory, _KCC_CHILD, (100_000, 200_000), 50)


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
    """Each holds at least two 200 x 100 float64 memberships, 320000 bytes (DWH two, HM two and
    its tables, SE five, HE and SM three and more): over a budget of 200000 they refuse, naming
    the width; at 2 MB they run."""
    E = _wide_ensemble()
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "200000")
    with pytest.raises(MemoryBudgetError, match="membership matrices"):
        cclust.consensus(name, E, 4, random_state=0)
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", "2000000")
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


def _noisy_problem(n, r, seed=0):
    """n objects in 8 classes, r partitions refining them into 48 labels with 10% noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 8, size=n)
    X = rng.normal(0.0, 6.0, size=(8, 2))[y] + rng.normal(size=(n, 2))
    labels = y[:, None] * 6 + rng.integers(0, 6, size=(n, r))
    noisy = rng.random((n, r)) < 0.1
    labels[noisy] = rng.integers(0, 48, size=int(noisy.sum()))
    return X, cclust.Ensemble(labels)


#: Calls whose memory was cut, and the bytes per object they may add at most (ten partitions,
#: K = 8): WOKMEANS's object weights formed both one-hot matrices and the whole cluster-overlap
#: table (256 bytes an object and more; now the labels' contingency rows a partition at a
#: time); EM kept the n x K responsibilities of every run (ten runs: 720 bytes an object more;
#: its canonical labels, one-hot and one E-step's arrays take about 600).
LINEAR_CALLS = {
    "wokmeans": ({"n_init": 1}, 120),
    "em-mixture": ({"n_init": 10, "max_iter": 2}, 800),
}


@pytest.fixture(scope="module")
def linear_peaks():
    from cclust.testing import peak_memory

    problems = [_noisy_problem(n, 10) for n in (200_000, 400_000)]
    peaks = peak_memory(problems, list((name, params) for name, (params, _) in LINEAR_CALLS.items()),
                        n_clusters=8, timeout=300)
    if any(p[name].get("source") != "rss" for p in peaks for name in LINEAR_CALLS):
        pytest.skip("the resident-set high-water mark cannot be reset here")
    return [(E.n_samples, p) for (_, E), p in zip(problems, peaks)]


@pytest.mark.parametrize("name", sorted(LINEAR_CALLS))
def test_methods_stay_within_their_bytes_per_object(linear_peaks, name):
    """At 2 * 10^5 and 4 * 10^5 objects the call adds at most its bytes per object (and the
    measure's noise): a structure of the one-hot's size, or one per run, would pass it."""
    for n, peak in linear_peaks:
        assert peak[name]["bytes"] <= LINEAR_CALLS[name][1] * n + SLACK, (name, n, peak[name])


@pytest.mark.parametrize("name, words", [("mcla", "meta-graph"), ("womc", "meta-graph"),
                                         ("gkcc", "generated partitions")])
def test_refusal_comes_before_the_one_hot_or_the_generation(name, words):
    """MCLA and WOMC count their meta-graph from the labels' contingency tables, and GKCC asks
    for its generated partitions before any is generated: a refusal allocates a small part of
    the one-hot matrix (12 bytes a label) it once formed before asking."""
    import tracemalloc

    X, E = _noisy_problem(100_000, 10)

    def call(rows):
        extra = {"X": X[:rows]} if name == "gkcc" else {}
        ensemble = E if rows == E.n_samples else E.take(objects=np.arange(rows))
        cclust.consensus(name, ensemble, 8, random_state=0, max_bytes=1000, **extra)

    with pytest.raises(MemoryBudgetError, match=words):   # imports and one-off buffers first
        call(500)
    tracemalloc.start()
    try:
        with pytest.raises(MemoryBudgetError, match=words):
            call(E.n_samples)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # WOMC's object weights (a few float vectors of n) come before its meta-graph
    assert peak < 12 * E.labels.size / 2, (name, peak)


_GKCC_CHILD = r"""
import json, sys
import numpy as np
import cclust
from cclust import _engine
from cclust.consensus_functions.gkcc import generation_bytes
from cclust.testing._memory import _measure
n, r = int(sys.argv[1]), int(sys.argv[2])
_engine.CANDIDATE_MEMO_BYTES = 0   # the memo's share depends on the data; the rest is what is checked
rng = np.random.default_rng(0)
y = rng.integers(0, 4, size=n)
X = rng.normal(0.0, 6.0, size=(4, 2))[y] + rng.normal(size=(n, 2))
E = cclust.Ensemble._from_codes(y[:, None] * 5 + rng.integers(0, 5, size=(n, r)))
kw = dict(X=X, n_partitions=30, random_state=0, n_jobs=2)
cclust.consensus("gkcc", E.take(objects=np.arange(300)), 4, **dict(kw, X=X[:300]))   # imports, thread pools
out = {"compact": E.compact_labels().nbytes, "figure": generation_bytes(n, r, [10, 10, 10], n_jobs=2)}
out["gkcc"], out["source"] = _measure(lambda: cclust.consensus("gkcc", E, 4, **kw))
out["made_int32"] = "labels" in E._cache
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def gkcc_peaks(tmp_path_factory):
    # the children measure the cclust under test, not whichever one the working folder would give
    root = os.path.dirname(os.path.dirname(os.path.abspath(cclust.__file__)))
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    return _run_children(tmp_path_factory, _GKCC_CHILD, (50_000, 150_000), 10, env={"PYTHONPATH": path})


@pytest.mark.parametrize("size", [0, 1], ids=["50k", "150k"])
def test_gkcc_holds_compact_codes_within_its_figure(gkcc_peaks, size):
    """GKCC's generated partitions and its augmented space are one buffer of one-byte codes
    beside the given ensemble's (no int32 copy of the given labels, no second copy of the
    space per step), and ``generation_bytes`` is within 1.5x of the peak either way: the int32
    columns twice and the space twice (20 bytes a label) would put the peak far above it."""
    p = gkcc_peaks[size]
    assert not p["made_int32"], p
    assert p["figure"] / 1.5 <= p["gkcc"] + SLACK and p["gkcc"] <= 1.5 * p["figure"] + SLACK, p
