"""Tests of cclust-hypergraph: the conformance kit, the entry point, HGPA against brute force."""
import itertools
from importlib import metadata

import numpy as np
import pytest
from cclust_hypergraph import PRESETS, build_hypergraph, hgpa

import cclust
from cclust import Ensemble
from cclust.errors import ValidationError
from cclust.testing import parametrize_with_checks, same_partition


def _installed():
    try:
        metadata.distribution("cclust-hypergraph")
    except metadata.PackageNotFoundError:
        return False
    return True


needs_install = pytest.mark.skipif(
    not _installed(), reason="cclust-hypergraph is not installed: python -m pip install ./plugins/cclust-hypergraph"
)


# The hypergraph partitioner's result depends on the order of the vertices (objects), so
# reordering them changes the cut beyond a permutation: the kit checks object order only where
# the answer is unambiguous (hgpa declares object_order="distribution"; kept explicit here so
# the kit runs the same with an older cclust).
OPTIONS = {"object_order": "distribution"}


@parametrize_with_checks([hgpa], kind="consensus", options={hgpa: OPTIONS})
def test_conformance(obj, check):
    check(obj)


@needs_install
def test_registered_through_the_entry_point():
    cclust.registry.refresh()
    row = cclust.available(kind="consensus")["hgpa"]
    assert row.provider == "cclust-hypergraph" and row.target == "cclust_hypergraph:hgpa"
    assert cclust.get("hgpa") is hgpa


def hyperedge_cut(labels, parts, weights=None):
    """Brute force: the total weight of clusters whose members fall in more than one part."""
    labels = np.asarray(labels)
    r = labels.shape[1]
    weights = np.full(r, 1.0 / r) if weights is None else np.asarray(weights) / np.sum(weights)
    cut = 0.0
    for j in range(r):
        for value in set(labels[:, j].tolist()) - {-1}:
            if len({int(parts[x]) for x in np.flatnonzero(labels[:, j] == value)}) > 1:
                cut += weights[j]
    return cut


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_cut_is_the_weighted_hyperedge_cut(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, size=24)
    labels = np.column_stack([np.where(rng.random(24) < 0.2, rng.integers(0, 3, 24), truth) for _ in range(6)])
    weights = rng.random(6) + 0.5
    result = hgpa(Ensemble(labels, weights=weights), 3, imbalance=0.5, random_state=seed)
    assert result.objective == pytest.approx(hyperedge_cut(labels, result.labels, weights))


def test_optimal_on_a_tiny_case():
    # Brute force over every balanced bipartition of 6 objects: HGPA finds a minimum cut.
    labels = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1], [1, 1, 1, 0, 0, 0]]).T
    best = min(hyperedge_cut(labels, [int(x in side) for x in range(6)])
               for side in itertools.combinations(range(6), 3))
    result = hgpa(labels, 2, imbalance=0.01, random_state=0)
    assert result.objective == pytest.approx(best)
    assert same_partition(result.labels, [0, 0, 0, 1, 1, 1])


def test_imbalance_lets_large_clusters_stay_whole():
    # A 40/8 split, every partition moving two of the 40 into a cluster of their own, so the
    # objects are not all identical (identical ones would be merged into few vertices, which
    # keeps a cluster whole without any refinement).
    truth = np.repeat([0, 1], [40, 8])
    columns = []
    for j in range(20):
        column = truth.copy()
        column[[j, j + 20]] = 2
        columns.append(column)
    labels = np.column_stack(columns)
    assert not same_partition(hgpa(labels, 2, sizes="equal", random_state=0).labels, truth)
    for preset in ("auto", "cclust", "deterministic_quality"):
        assert same_partition(hgpa(labels, 2, imbalance=1.0, preset=preset, sizes="equal", random_state=0).labels,
                              truth)
    # Without flow refinement the parts stay nearly equal whatever the tolerance (documented).
    for preset in ("cclust_fast", "deterministic"):
        assert not same_partition(hgpa(labels, 2, imbalance=1.0, preset=preset, sizes="equal",
                                       random_state=0).labels, truth)
    # The default weighs the objects by their estimated cluster's size: kept whole at 5%.
    assert same_partition(hgpa(labels, 2, random_state=0).labels, truth)


@pytest.mark.parametrize("imbalance, expected", [(0.05, "cclust_fast"), (0.03, "cclust_fast"), (0.06, "cclust")])
def test_auto_preset_runs_flows_only_past_the_default_imbalance(imbalance, expected):
    labels = _random_labels(1, n=200)
    auto = hgpa(labels, 4, imbalance=imbalance, random_state=3)
    assert auto.extras["preset"] == expected
    assert np.array_equal(auto.labels, hgpa(labels, 4, imbalance=imbalance, preset=expected, random_state=3).labels)


def _reference_hypergraph(labels, weights):
    """Slow HGPA hypergraph of a label matrix, in objects: every cluster's member set and its
    partition's weight, and the objects grouped by identical label rows."""
    labels = np.asarray(labels)
    clusters = {}
    for j in range(labels.shape[1]):
        for value in set(labels[:, j].tolist()) - {-1}:
            members = frozenset(np.flatnonzero(labels[:, j] == value).tolist())
            clusters.setdefault(members, []).append(weights[j])
    rows = {}
    for i, row in enumerate(map(tuple, labels.tolist())):
        rows.setdefault(row, []).append(i)
    return clusters, rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hypergraph_against_a_slow_reference(seed):
    rng = np.random.default_rng(seed)
    n, r = 240, 7
    # Few distinct rows (so objects merge, some groups past the cap) and a missing label or two.
    prototypes = rng.integers(0, 3, size=(12, r))
    labels = prototypes[rng.integers(0, 12, size=n)]
    labels[rng.random((n, r)) < 0.01] = -1
    labels[rng.integers(0, n, 3), rng.integers(0, r, 3)] = 3
    weights = rng.random(r) + 0.5
    E = Ensemble(labels, weights=weights)
    B = E.one_hot().tocsr()
    B.sort_indices()
    pw = np.repeat(E.weights, E.n_clusters)
    cap = 7
    graph = build_hypergraph(B, pw, cap, np.random.default_rng(seed))
    clusters, rows = _reference_hypergraph(labels, E.weights)

    # Every vertex stands for objects with identical label rows, at most the cap of them.
    objects_of = {}
    for i, v in enumerate(graph.vertex_of.tolist()):
        objects_of.setdefault(v, []).append(i)
    assert sorted(objects_of) == list(range(len(graph.vertex_weights)))
    for v, objects in objects_of.items():
        assert graph.vertex_weights[v] == len(objects) <= cap
        assert len({tuple(labels[i]) for i in objects}) == 1
    # Merging is as fine as the cap allows: a group of identical rows has ceil(size / cap) vertices.
    assert len(graph.vertex_weights) == sum(-(-len(members) // cap) for members in rows.values())
    # Every hyperedge, expanded back to objects, is a cluster with its partition's weight.
    top = max(w for ws in clusters.values() for w in ws)
    built = {}
    for pins, weight in zip(graph.edges, graph.edge_weights.tolist()):
        assert len(set(pins)) == len(pins)
        members = frozenset(i for v in pins for i in objects_of[v])
        built.setdefault(members, []).append(weight)
    assert set(built) == set(clusters)
    for members, ws in clusters.items():
        expected = sorted(max(1, round(w / top * 1000)) for w in ws)
        assert sorted(built[members]) == expected


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_merge_against_a_slow_reference(seed):
    # With object weights (the estimated cut's size weights), a merged vertex weighs at most the
    # cap in weight units: objects of weight w go to chunks of max(1, cap // w), in object order,
    # and objects of different weights never share a vertex.
    rng = np.random.default_rng(seed)
    n, r, cap = 300, 6, 40
    labels = rng.integers(0, 3, size=(10, r))[rng.integers(0, 10, size=n)]
    object_weights = rng.choice([1, 3, 7, 13, 45, 90], size=n)
    E = Ensemble(labels)
    B = E.one_hot().tocsr()
    B.sort_indices()
    graph = build_hypergraph(B, np.ones(B.shape[1]), cap, np.random.default_rng(seed), object_weights=object_weights)

    expected = set()
    for row in {tuple(x) for x in labels.tolist()}:
        for w in set(object_weights.tolist()):
            members = [i for i in range(n) if tuple(labels[i]) == row and object_weights[i] == w]
            size = max(1, cap // w)
            expected |= {frozenset(members[a:a + size]) for a in range(0, len(members), size)}
    built = {}
    for i, v in enumerate(graph.vertex_of.tolist()):
        built.setdefault(v, set()).add(i)
    assert {frozenset(objects) for objects in built.values()} == expected
    for v, objects in built.items():
        assert graph.vertex_weights[v] == object_weights[sorted(objects)].sum()
        assert graph.vertex_weights[v] <= cap or len(objects) == 1


def test_unit_object_weights_merge_as_unweighted():
    labels = _random_labels(3, n=400, r=3, k=2)
    E = Ensemble(labels)
    B = E.one_hot().tocsr()
    B.sort_indices()
    plain = build_hypergraph(B, np.ones(B.shape[1]), 9, np.random.default_rng(0))
    unit = build_hypergraph(B, np.ones(B.shape[1]), 9, np.random.default_rng(0), object_weights=np.ones(400, int))
    assert np.array_equal(plain.vertex_of, unit.vertex_of)
    assert np.array_equal(plain.vertex_weights, unit.vertex_weights)


def test_size_weighted_vertices_stay_within_a_parts_slack():
    # 600 of 4,800 objects labelled alike and estimated in a small cluster (heavy size weights):
    # capped in weight units, no vertex weighs more than a part's slack; capped by object count
    # (the former rule) one vertex would have weighed several times the slack.
    from cclust.graph import size_weights

    rng = np.random.default_rng(1)
    labels = rng.integers(0, 6, size=(4800, 8))
    labels[:600] = labels[0]
    estimate = np.where(np.arange(4800) < 600, 0, 1 + np.arange(4800) % 2)
    weights = size_weights(estimate, 6)
    E = Ensemble(labels)
    B = E.one_hot().tocsr()
    B.sort_indices()
    cap = int(0.05 * weights.sum() / 6)
    graph = build_hypergraph(B, np.ones(B.shape[1]), cap, np.random.default_rng(0), object_weights=weights)
    assert graph.vertex_weights.max() <= cap
    assert weights[0] * int(0.05 * 4800 / 6) > 2 * cap

@pytest.mark.parametrize("seed", [0, 1])
def test_hyperedges_larger_than_any_part_are_left_out_but_every_object_stays_covered(seed):
    rng = np.random.default_rng(seed)
    n, r = 300, 8
    # Cluster sizes from a few objects to half of them: with 6 parts of at most 52, the large
    # ones are cut by every admissible partition.
    labels = np.column_stack([np.minimum(rng.geometric(0.3, size=n) - 1, 5) for _ in range(r)])
    labels[:4] = 0  # objects whose clusters are all large
    E = Ensemble(labels)
    B = E.one_hot().tocsr()
    B.sort_indices()
    pw = np.repeat(E.weights, E.n_clusters)
    limit = 52
    graph = build_hypergraph(B, pw, 1, np.random.default_rng(seed), max_edge_size=limit)
    sizes = np.asarray(B.sum(axis=0)).ravel()
    kept = set(graph.clusters.tolist())
    assert {c for c in range(B.shape[1]) if sizes[c] <= limit} <= kept
    assert any(sizes[c] > limit for c in range(B.shape[1]) if c not in kept)
    member_of = [set(np.flatnonzero(B[:, [c]].toarray().ravel()).tolist()) for c in range(B.shape[1])]
    assert set().union(*(member_of[c] for c in kept)) == set(range(n))
    # The large clusters kept are exactly the smallest cluster of each object left in none of
    # the small ones.
    small = [c for c in range(B.shape[1]) if sizes[c] <= limit]
    expected = set()
    for i in range(n):
        mine = [c for c in range(B.shape[1]) if i in member_of[c]]
        if not any(c in small for c in mine):
            expected.add(min(mine, key=lambda c: (sizes[c], c)))
    assert expected and kept - set(small) == expected
    # Edges are the kept clusters, over the (unmerged) objects' vertices, with their weights.
    for pins, c, w in zip(graph.edges, graph.clusters.tolist(), graph.edge_weights.tolist()):
        assert {int(np.flatnonzero(graph.vertex_of == v)[0]) for v in pins} == member_of[c]
        assert w == 1000
    # HGPA's objective still counts every cluster cut, left out or not.
    result = hgpa(labels, 6, random_state=seed)
    assert result.extras["n_hyperedges"] < B.shape[1]
    assert result.objective == pytest.approx(hyperedge_cut(labels, result.labels))
    # km1 counts the parts a hyperedge spans: no hyperedge is a constant there.
    assert hgpa(labels, 6, objective="km1", random_state=seed).extras["n_hyperedges"] == B.shape[1]


def test_merged_objects_keep_parts_balanced():
    # 3,000 of 4,800 objects labelled alike everywhere: merged vertices are capped at a part's
    # slack (120 objects) so the partitioner can still balance the parts (an uncapped
    # 3,000-object vertex could not).
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, size=(4800, 8))
    labels[:3000] = labels[0]
    for preset in set(PRESETS) - {"auto"}:
        result = hgpa(labels, 2, preset=preset, random_state=0)
        assert result.extras["n_vertices"] < 4800
        assert np.bincount(result.labels).max() <= 1.05 * 2400 + 1, preset


def _random_labels(seed, n=300, r=10, k=4):
    return np.random.default_rng(seed).integers(0, k, size=(n, r))


def test_random_state_changes_the_partition_and_repeats_it():
    # Mt-KaHyPar's deterministic presets ignore its global seed; random_state must still matter
    # (through the vertex numbering) and give the same labels when repeated.
    labels = _random_labels(0)
    runs = [hgpa(labels, 4, random_state=seed).labels for seed in (0, 1, 2, 0)]
    assert np.array_equal(runs[0], runs[3])
    assert not (same_partition(runs[0], runs[1]) and same_partition(runs[0], runs[2]))


@pytest.mark.parametrize("preset", sorted(set(PRESETS) - {"auto"}))
def test_same_labels_on_one_and_two_threads(preset, tmp_path):
    # Mt-KaHyPar is initialised once per process, so each thread count runs in its own
    # interpreter (CCLUST_NUM_THREADS sets it).
    import os
    import subprocess
    import sys

    script = ("import sys, numpy as np; from cclust_hypergraph import hgpa; "
              "L = np.random.default_rng(3).integers(0, 5, size=(400, 12)); "
              f"np.save(sys.argv[1], hgpa(L, 5, preset={preset!r}, random_state=7).labels)")
    out = []
    for threads in ("1", "2"):
        path = tmp_path / f"labels_{threads}.npy"
        # The child must import the same cclust as this process, installed or not.
        root = os.path.dirname(os.path.dirname(cclust.__file__))
        env = {**os.environ, "CCLUST_NUM_THREADS": threads,
               "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        # cwd=root: the working directory goes first on the child's sys.path, and a source
        # checkout there (no compiled extensions) would shadow the installed cclust.
        subprocess.run([sys.executable, "-c", script, str(path)], env=env, check=True, timeout=300, cwd=root)
        out.append(np.load(path))
    assert np.array_equal(out[0], out[1])


@pytest.mark.parametrize("kwargs, match", [
    ({"n_clusters": 2, "preset": "default"}, "preset must be one of 'auto', 'cclust', 'cclust_fast', 'deterministic', 'deterministic_quality'"),
    ({"n_clusters": 1}, "n_clusters must be an int in the range"),
    ({"n_clusters": 7}, "n_clusters must be an int in the range"),
    ({"n_clusters": 2, "imbalance": 0.0}, "imbalance must be a finite number"),
    ({"n_clusters": 2, "objective": "soed"}, "objective must be 'cut' or 'km1'"),
])
def test_bad_arguments(kwargs, match):
    n_clusters = kwargs.pop("n_clusters")
    with pytest.raises(ValidationError, match=match):
        hgpa(np.array([[0, 0, 0, 1, 1, 1]]).T, n_clusters, **kwargs)


def test_single_cluster_partitions_are_refused():
    with pytest.raises(ValidationError, match="every partition puts all objects in one cluster"):
        hgpa(np.zeros((8, 3), dtype=int), 2)


def test_configurations_differ_in_flows_and_three_speed_settings():
    from cclust_hypergraph._config import CONFIGS, config_text

    assert set(CONFIGS["cclust"]) == set(CONFIGS["cclust_fast"])
    differ = {k for k in CONFIGS["cclust"] if CONFIGS["cclust"][k] != CONFIGS["cclust_fast"][k]}
    assert differ == {"r-flow-algo", "maxnet-ignore", "i-runs", "r-jet-dynamic-rounds"}
    lines = config_text("cclust").splitlines()
    assert len(lines) == len(CONFIGS["cclust"]) and all(line.count("=") == 1 for line in lines)


def test_a_changed_configuration_gets_its_own_file(monkeypatch):
    from cclust_hypergraph import _config

    before = _config.config_path("cclust_fast")
    monkeypatch.setitem(_config.CONFIGS, "cclust_fast", {**_config.CONFIGS["cclust_fast"], "i-runs": "3"})
    changed = _config.config_path("cclust_fast")
    assert changed != before
    with open(changed, encoding="ascii") as handle:
        assert "i-runs=3\n" in handle.read()


def test_configuration_file_is_written_again_if_removed():
    import shutil

    from cclust_hypergraph import _config

    labels = _random_labels(2, n=120)
    before = hgpa(labels, 3, preset="cclust_fast", random_state=0).labels
    shutil.rmtree(_config._folder)  # as a forked child's exit would
    assert np.array_equal(hgpa(labels, 3, preset="cclust_fast", random_state=0).labels, before)


def test_sizes_keep_a_cluster_three_times_larger_whole():
    # Blobs of 300, 100, 100, 100 objects: Strehl & Ghosh's equal parts cut the large one, the
    # default sizes="auto" keeps it (as the METIS-based methods do).
    from cclust.metrics import ari
    from cclust.testing import easy_ensemble

    X, y, E = easy_ensemble(600, 4, ratio=3, n_partitions=20, seed=1)
    equal = hgpa(E, 4, sizes="equal", random_state=0)
    default = hgpa(E, 4, random_state=0)
    assert ari(y, equal.labels) < 0.8
    assert ari(y, default.labels) > 0.95
    assert default.extras["sizes_used"] == "estimated"


def test_bad_sizes():
    from cclust.errors import ValidationError

    with pytest.raises(ValidationError, match="sizes must be 'auto', 'estimated' or 'equal', got 'x'"):
        hgpa([[0, 0, 1, 1], [0, 0, 1, 1]], 2, sizes="x")


def test_auto_skips_the_estimated_cut_when_the_estimate_is_balanced(monkeypatch):
    # Balanced blobs: no estimated cluster exceeds (1 + imbalance) n / K, so "auto" keeps the
    # equal cut without the second one; the full run (no skip) gives the same partition.
    import cclust_hypergraph
    from cclust.graph import cut_with_sizes
    from cclust.testing import easy_ensemble

    _, _, E = easy_ensemble(900, 3, n_partitions=20, seed=0)
    skipped = hgpa(E, 3, random_state=0)
    assert skipped.extras["estimated_cut_skipped"] is True
    assert skipped.extras["sizes_used"] == "equal"
    assert np.array_equal(skipped.labels, hgpa(E, 3, sizes="equal", random_state=0).labels)

    def without_skip(*args, admissible_equal=None, **kwargs):
        return cut_with_sizes(*args, **kwargs)

    monkeypatch.setattr(cclust_hypergraph, "cut_with_sizes", without_skip)
    full = hgpa(E, 3, random_state=0)
    assert "estimated_cut_skipped" not in full.extras
    assert same_partition(full.labels, skipped.labels)


def test_auto_does_not_skip_when_an_estimated_cluster_is_too_large():
    from cclust.testing import easy_ensemble

    _, _, E = easy_ensemble(600, 4, ratio=3, n_partitions=20, seed=1)
    result = hgpa(E, 4, random_state=0)
    assert "estimated_cut_skipped" not in result.extras
    assert set(result.extras["separated_coassociation"]) == {"equal", "estimated"}


def _noisy_ensemble(n, r, seed=0):
    """r noisy refinements of 8 classes (8 to 40 clusters, a tenth of the labels random): hardly
    any two objects labelled alike by every partition, so nearly every label is a pin."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 8, size=n)
    columns = []
    for _ in range(r):
        k = int(rng.integers(8, 40))
        column = (y * k // 8 + rng.integers(0, 2, size=n)) % k
        noise = rng.random(n) < 0.1
        column[noise] = rng.integers(0, k, size=int(noise.sum()))
        columns.append(column)
    return np.zeros((n, 2)), Ensemble(np.column_stack(columns))


def test_the_hypergraph_is_refused_under_the_budget_before_it_is_built(monkeypatch):
    """At 10^6 objects x 100 partitions hgpa once reached 6.9 GiB inside Mt-KaHyPar with no guard."""
    import cclust_hypergraph
    from cclust.errors import MemoryBudgetError

    _, E = _noisy_ensemble(3000, 10)
    built = []
    monkeypatch.setattr(cclust_hypergraph, "build_hypergraph", lambda *a, **k: built.append(1))
    with pytest.raises(MemoryBudgetError, match=r"hgpa's hypergraph of \d+ pins .*max_bytes=.*hbgf, mcla or kcc"):
        hgpa(E, 8, random_state=0, max_bytes=10**6)
    monkeypatch.setenv("CCLUST_MEMORY_BUDGET", str(10**6))   # the environment's budget is asked the same way
    with pytest.raises(MemoryBudgetError, match="hgpa's hypergraph"):
        hgpa(E, 8, random_state=0)
    assert built == []


def test_the_guards_figure_is_within_half_again_of_the_measured_peak():
    """The figure hgpa asks for against the peak resident memory a call adds, at two sizes
    (measured 1.14 and 0.98 of the figure at 2 * 10^5 and 4 * 10^5 pins)."""
    import re

    from cclust.errors import MemoryBudgetError
    from cclust.testing import peak_memory

    problems = [_noisy_ensemble(n, 10) for n in (20000, 40000)]
    peaks = peak_memory(problems, [("hgpa", {})], n_clusters=8, env={"CCLUST_MEMORY_BUDGET": str(2**40)})
    for (_, E), peak in zip(problems, peaks):
        if peak["hgpa"].get("source") != "rss":
            pytest.skip("the resident-set high-water mark cannot be reset here")
        with pytest.raises(MemoryBudgetError) as info:
            hgpa(E, 8, random_state=0, max_bytes=1)
        figure = int(re.search(r"\((\d+) bytes\)", str(info.value)).group(1))
        assert figure / 1.5 <= peak["hgpa"]["bytes"] <= 1.5 * figure, (E.n_samples, peak, figure)
