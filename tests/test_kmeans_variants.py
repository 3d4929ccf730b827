"""The K-means engine's lookup-kernel variants (baseline, AVX2, AVX-512) and its grouping of
identical label rows: every combination this CPU supports gives bitwise the results of the
baseline kernel without grouping, on every entry point that runs categorical passes."""
import numpy as np
import pytest

import cclust
from cclust.datasets import load_wine
from cclust._ext import _kmeans as km
from reference_kmeans import UC, UCOS, UH, ULP, kmeanspp, pair_distance
from test_kmeans_engine import bitwise_equal, make_rows

VARIANTS = km.simd_variants()


@pytest.fixture
def restore_engine():
    yield
    km._force_simd(None)
    km._group_rows(True)


def with_duplicates(rows, rng, n_distinct):
    """The rows with their label matrix replaced by copies of n_distinct of its rows, so at most
    n_distinct rows are distinct (grouping kicks in from 1,024 objects with <= half distinct)."""
    X, dw, labels, offsets, weights, distance, p = rows
    pick = rng.integers(0, n_distinct, labels.shape[0])
    return (X, dw, np.ascontiguousarray(labels[pick]), offsets, weights, distance, p)


def every_output(rows, k, rng_seed, weighted):
    """lloyd, assign, objective, kmeanspp, lloyd_pass and candidate_costs of the engine."""
    rng = np.random.default_rng(rng_seed)
    n = rows[2].shape[0]
    extra = {}
    if weighted == "weights":
        extra = {"object_weights": rng.random(n) + 0.5}
    elif weighted == "scale":
        extra = {"row_scale": rng.random(n) + 0.5}
    init = rng.integers(0, k, n).astype(np.int32)
    out = list(km.lloyd(*rows, init, k, 30, 0.0, 2, **extra))
    labels, cat = out[0], out[6]
    dense = np.empty((k, 0))
    out += list(km.assign(*rows, dense, cat, 2, **extra))
    out += list(km.objective(*rows, dense, cat, labels, 2, **extra))
    if weighted is None:
        uniforms = rng.random((k - 1, 3)) if k > 1 else np.empty((0, 3))
        out.append(km.kmeanspp(*rows, k, 7, uniforms, 2))
        out += list(km.lloyd_pass(*rows, cat, init, 2))
        cand = np.ascontiguousarray(rows[2][rng.integers(0, n, 4)])
        out += list(km.candidate_costs(*rows, cand, None, 2))
    return out


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert bitwise_equal(x, y)
        else:
            assert x == y or (x != x and y != y)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 10, 12, 17, 26, 33])
@pytest.mark.parametrize("distance", [UC, UH, UCOS, ULP])
def test_every_variant_and_grouping_is_bitwise_the_baseline(k, distance, restore_engine):
    # one random draw per (K, distance): the K values span the SIMD lane widths, more draws of
    # the same shape walk the same code
    rng = np.random.default_rng([k, distance])
    rows = make_rows(rng, 3000, r=13, k_max=9, missing=0.2, distance=distance, p=3.0)
    rows = with_duplicates(rows, rng, 700)
    km._force_simd("baseline")
    km._group_rows(False)
    want = every_output(rows, k, 1, None)
    for variant in VARIANTS:
        for grouped in (False, True):
            km._force_simd(variant)
            km._group_rows(grouped)
            assert km.simd_variant() == variant
            assert_same(every_output(rows, k, 1, None), want)


@pytest.mark.parametrize("weighted", ["weights", "scale"])
def test_weighted_and_scaled_rows_are_bitwise_the_baseline(weighted, rng, restore_engine):
    rows = make_rows(rng, 2500, r=7, missing=0.1 if weighted == "weights" else 0.0, distance=UC)
    rows = with_duplicates(rows, rng, 300)
    km._force_simd("baseline")
    km._group_rows(False)
    want = every_output(rows, 6, 2, weighted)
    for variant in VARIANTS:
        for grouped in (False, True):
            km._force_simd(variant)
            km._group_rows(grouped)
            assert_same(every_output(rows, 6, 2, weighted), want)


def test_distinct_rows_and_mixed_rows_run_every_variant(rng, restore_engine):
    # All rows distinct (no grouping) and a dense block (the object-by-object path).
    for rows in (make_rows(rng, 1500, r=40, k_max=12, distance=UH),
                 make_rows(rng, 1500, r=5, d=3, distance=UC, dense_weight=0.5)):
        init = rng.integers(0, 9, 1500).astype(np.int32)
        km._force_simd("baseline")
        base = km.lloyd(*rows, init, 9, 20, 0.0, 2)
        for variant in VARIANTS:
            km._force_simd(variant)
            assert_same(km.lloyd(*rows, init, 9, 20, 0.0, 2), base)


def test_kcc_is_identical_in_every_variant(restore_engine):
    X, _ = load_wine()
    E = cclust.generate("kmeans", X, 3, n_partitions=30, random_state=0)
    # 8 copies of every object: grouping applies (1,424 objects, <= 178 distinct rows).
    E8 = cclust.Ensemble(np.repeat(E.labels, 8, axis=0))
    km._force_simd("baseline")
    km._group_rows(False)
    want = cclust.consensus("kcc", E8, 3, random_state=0, n_init=3)
    for variant in VARIANTS:
        km._force_simd(variant)
        km._group_rows(True)
        got = cclust.consensus("kcc", E8, 3, random_state=0, n_init=3)
        assert bitwise_equal(got.labels, want.labels)
        assert got.objective == want.objective
        assert got.extras["kmeans_objective"] == want.extras["kmeans_objective"]
        assert got.n_iter == want.n_iter


def test_variant_names_and_forcing(restore_engine):
    assert VARIANTS[0] == "baseline"
    assert set(VARIANTS) <= {"baseline", "avx2", "avx512"}
    assert km.simd_variant() in VARIANTS
    with pytest.raises(ValueError, match="unknown SIMD variant"):
        km._force_simd("sse9")
    for variant in {"avx2", "avx512"} - set(VARIANTS):
        with pytest.raises(ValueError, match="not supported"):
            km._force_simd(variant)
    km._force_simd("baseline")
    assert km.simd_variant() == "baseline"
    km._force_simd(None)
    assert km.simd_variant() == VARIANTS[-1] or km.simd_variant() in VARIANTS


def test_cpu_flags_match_the_variants():
    try:
        with open("/proc/cpuinfo") as handle:
            flags = next((line.split(":", 1)[1].split() for line in handle if line.startswith("flags")), None)
    except OSError:
        flags = None
    if flags is None:
        pytest.skip("no /proc/cpuinfo flags on this platform")
    assert ("avx2" in VARIANTS) == ("avx2" in flags)
    assert ("avx512" in VARIANTS) == ("avx512f" in flags and "avx512vl" in flags)


@pytest.mark.parametrize("k", [10, 26, 40])
def test_cache_blocked_tables_are_bitwise_the_baseline(k, restore_engine):
    # 1,200 partitions of up to 24 labels: the table (about 16,000 label slots x K doubles, over
    # 1 MiB) outgrows the kernel's limit, so the partitions are walked in groups. One random draw
    # per K (the table's size is what matters, not the draw), the baselines computed once.
    rng = np.random.default_rng(k)
    rows = make_rows(rng, 1200, r=1200, k_max=24, missing=0.1, distance=UH)
    init = rng.integers(0, k, 1200).astype(np.int32)
    dup = with_duplicates(rows, rng, 100)
    km._force_simd("baseline")
    km._group_rows(False)
    base = km.lloyd(*rows, init, k, 10, 0.0, 2)
    want = km.lloyd(*dup, init, k, 10, 0.0, 2)
    for variant in VARIANTS:
        for grouped in (False, True):
            km._force_simd(variant)
            km._group_rows(grouped)
            assert_same(km.lloyd(*rows, init, k, 10, 0.0, 2), base)
            assert_same(km.lloyd(*dup, init, k, 10, 0.0, 2), want)


@pytest.mark.parametrize("d", [1, 3, 7, 25, 31])
def test_dense_candidate_costs_are_the_ordered_sums_in_every_variant(d, restore_engine):
    """k-means++'s candidate pass on dense rows (the generators' seeding) sums (x_j - c_j)^2 from
    0 in feature order, as the engine's squared distance does, in every variant: candidate counts
    across the tiles' widths and row counts that leave every remainder of the row tiles."""
    rng = np.random.default_rng(d)
    X = rng.normal(0, 3, (1000 + d, d))
    for m in (1, 2, 5, 8, 9, 13, 17, 33):
        cand = X[rng.choice(len(X), m, replace=False)] + rng.normal(0, 0.1, (m, d))
        want = np.zeros((m, len(X)))
        for j in range(d):
            want += (X[:, j][None, :] - cand[:, j][:, None]) ** 2
        closest = rng.random(len(X)) * want.mean()
        for variant in VARIANTS:
            km._force_simd(variant)
            for n in (1, 5, 23, 25, 47, len(X)):
                dist, potentials = km.dense_candidate_costs(np.ascontiguousarray(X[:n]), cand, None, 1)
                assert bitwise_equal(dist, want[:, :n]), (variant, m, n)
                assert bitwise_equal(potentials[0], np.cumsum(want[:, :n], axis=1)[:, -1])  # one chunk
            dist, _ = km.dense_candidate_costs(X, cand, closest, 2)
            assert bitwise_equal(dist, np.minimum(closest, want)), (variant, m)


CODE_TYPES = {"int32": np.int32, "uint16": np.uint16, "uint8": np.uint8}


def equal_weight_rows(rng, n, r, code_type, missing=0.2):
    """Rows whose partitions all weigh the same double (k-means++ then counts label mismatches),
    in one of the three label-code layouts (the narrow ones mark a missing label by their
    largest value, which is what astype makes of -1)."""
    X, dw, labels, offsets, _, distance, p = make_rows(rng, n, r=r, k_max=7, missing=missing, distance=UH)
    return (X, dw, np.ascontiguousarray(labels.astype(CODE_TYPES[code_type])), offsets,
            np.full(r, 1.0 / 3.0), distance, p), labels


@pytest.mark.parametrize("code_type", list(CODE_TYPES))
def test_equal_weight_candidate_costs_are_the_ordered_sums(code_type, restore_engine):
    """k-means++ candidates under one weight for every partition are costed by counting label
    mismatches (all codes of a vector at once) instead of looking the table up: the same doubles
    as the reference's ordered sum of 2 w over the partitions where both labels are present and
    differ, and as the baseline's table, in every variant. The partition counts cross the vector
    widths of every code layout (16, 32 and 64 codes per vector); candidates include missing
    labels and an unlabelled row."""
    rng = np.random.default_rng(list(CODE_TYPES).index(code_type))
    for r in (1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 130):
        rows, labels = equal_weight_rows(rng, 150 + r, r, code_type)
        n = labels.shape[0]
        cand = labels[rng.integers(0, n, 4)].copy()
        cand[1, : r // 2] = -1
        cand = np.ascontiguousarray(np.vstack([cand, np.full((1, r), -1, dtype=np.int32)]))
        want = np.array([[pair_distance(np.empty((2, 0)), 1.0, np.vstack([labels[x], c]), rows[4], 0, 1)
                          for x in range(n)] for c in cand])
        closest = rng.random(n) * want.mean()
        for variant in VARIANTS:
            km._force_simd(variant)
            dist, _ = km.candidate_costs(*rows, cand, None, 2)
            assert bitwise_equal(dist, want), (variant, r)
            dist, _ = km.candidate_costs(*rows, cand, closest, 1)
            assert bitwise_equal(dist, np.minimum(closest, want)), (variant, r)


@pytest.mark.parametrize("code_type", list(CODE_TYPES))
def test_equal_weight_kmeanspp_is_bitwise_the_baseline(code_type, restore_engine):
    """kmeanspp and candidate_costs by mismatch counts (every partition weighing the same) against
    the baseline's table lookups, over several chunks, with identical rows grouped or not, and
    kmeanspp against the reference on a small input."""
    rng = np.random.default_rng([list(CODE_TYPES).index(code_type), 1])
    rows, labels = equal_weight_rows(rng, 9000, 70, code_type)
    dup = with_duplicates(rows, rng, 900)
    uniforms = rng.random((7, 4))
    cand = np.ascontiguousarray(labels[rng.integers(0, 9000, 3)])
    closest = rng.random(9000)
    km._force_simd("baseline")
    km._group_rows(False)
    want = [km.kmeanspp(*rows, 8, 11, uniforms, 2), km.kmeanspp(*dup, 8, 11, uniforms, 2),
            *km.candidate_costs(*rows, cand, closest, 2)]
    for variant in VARIANTS:
        for grouped in (False, True):
            km._force_simd(variant)
            km._group_rows(grouped)
            got = [km.kmeanspp(*rows, 8, 11, uniforms, 2), km.kmeanspp(*dup, 8, 11, uniforms, 2),
                   *km.candidate_costs(*rows, cand, closest, 2)]
            assert_same(got, want)
    small = tuple(a[:200] if isinstance(a, np.ndarray) and a.ndim == 2 else a for a in rows)
    small_uniforms = rng.random((4, 3))
    reference = kmeanspp(*small[:2], labels[:200], *small[3:], 5, 3, small_uniforms)
    for variant in VARIANTS:
        km._force_simd(variant)
        assert bitwise_equal(km.kmeanspp(*small, 5, 3, small_uniforms, 1), reference)
