"""select_k on a sketch of the objects (Hie et al. 2019's geometric sketch, or a uniform sample),
with every other object labelled by the nearest consensus centroid."""
import json

import numpy as np
import pytest

import cclust
from cclust import _sketch
from cclust.errors import ValidationError


def blobs(n_per, centres, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, scale, (n_per, 2)) for c in centres])
    return X, np.repeat(np.arange(len(centres)), n_per)


CENTRES = ((0, 0), (8, 0), (0, 8))


def test_select_k_on_a_sketch_labels_every_object():
    X, y = blobs(700, CENTRES)
    res = cclust.select_k(X, range(2, 5), sketch=240, random_state=0)
    assert res.best_k == 3 and res.sketch.shape == (240,) and res.sketch_method == "geometric"
    assert np.array_equal(res.sketch, np.unique(res.sketch))
    assert cclust.get("ari")(res.labels[3], y) == 1.0 and res.labels[3].shape == (2100,)
    item = res.item_consensus[3]
    outside = np.setdiff1d(np.arange(2100), res.sketch)
    assert item.shape == (2100, 3) and np.isnan(item[outside]).all() and not np.isnan(item[res.sketch]).all()
    assert "geometric sketch of 240 of the 2100 objects" in res.summary()
    again = cclust.select_k(X, range(2, 5), sketch=240, random_state=0)
    assert np.array_equal(again.sketch, res.sketch) and np.array_equal(again.labels[3], res.labels[3])


def test_several_sketches_report_their_agreement():
    X, _ = blobs(500, CENTRES)
    res = cclust.select_k(X, [2, 3, 4], sketch=150, n_sketches=3, sketch_method="uniform", null=None,
                          n_resamples=20, random_state=1)
    assert res.sketch_best_k == (3, 3, 3) and res.sketch_method == "uniform"
    assert res.sketch_agreement[3] == 1.0 and 0 <= res.sketch_agreement[2] <= 1
    record = json.loads(json.dumps(res.to_dict()))
    assert record["sketch_agreement"]["3"] == 1.0 and record["sketch_best_k"] == [3, 3, 3]
    assert "3 sketches chose K = 3, 3, 3" in res.summary()


def test_propagation_is_the_nearest_centroid_and_keeps_the_sketch_labels():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3))
    sketch = np.array([1, 4, 9, 20, 33, 41, 50])
    labels = np.array([0, 1, 0, 2, 1, 2, 0])
    got = _sketch.propagate(X, sketch, labels, 1)
    centres = np.array([X[sketch[labels == c]].mean(axis=0) for c in range(3)])
    expected = np.array([int(np.argmin(((centres - x) ** 2).sum(axis=1))) for x in X])
    expected[sketch] = labels
    np.testing.assert_array_equal(got, expected)


def test_the_geometric_sketch_keeps_a_rare_group_that_a_uniform_sample_thins():
    # a group of 1% of the objects, as compact as the large one: the geometric sketch covers its
    # region like any other (Hie et al. 2019), the uniform sample keeps about 1% of the sketch
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.3, (20000, 5)), rng.normal(8, 0.3, (200, 5))])
    rare = {method: np.mean([(_sketch.draw_sketch(X, 1000, method, np.random.default_rng(s)) >= 20000).sum()
                             for s in range(3)]) for method in _sketch.SKETCH_METHODS}
    assert rare["uniform"] < 25 and rare["geometric"] > 60


def test_the_sketch_has_the_size_asked_even_with_repeated_points():
    X = np.repeat(np.arange(10.0)[:, None], 30, axis=0) @ np.ones((1, 2))   # ten distinct points
    chosen = _sketch.draw_sketch(X, 40, "geometric", np.random.default_rng(0))
    assert chosen.shape == (40,) and np.unique(chosen).shape == (40,)
    # one per point first: all ten distinct positions are in the sketch
    assert np.unique(X[chosen, 0]).shape == (10,)


@pytest.mark.parametrize("kwargs, match", [
    ({"sketch": 300}, "not smaller than the 300 objects"),
    ({"sketch": 4}, "cannot hold the clusters asked for"),
    ({"sketch": 0}, "sketch"),
    ({"sketch": 50, "sketch_method": "random"}, "sketch_method must be one of"),
    ({"sketch": 50, "method": "kcc"}, "pass method='monti'"),
    ({"sketch": 50, "n_sketches": 0}, "n_sketches"),
    ({"n_sketches": 2}, "no sketch is drawn"),
    ({"sketch": "some"}, "sketch must be 'auto', None or a number of objects"),
])
def test_bad_sketch_arguments_are_refused(kwargs, match):
    X, _ = blobs(100, CENTRES)
    with pytest.raises(ValidationError, match=match):
        cclust.select_k(X, [2, 3, 4], **kwargs)


def test_the_automatic_sketch_is_drawn_above_its_size_only_when_no_route_is_asked():
    from cclust.selection import _select_k

    big = np.zeros((_select_k.SKETCH_FROM + 1, 2))
    small = np.zeros((_select_k.SKETCH_FROM, 2))
    auto = (_select_k.AUTO_SKETCH, _select_k.AUTO_SKETCHES)
    resolve = _select_k.resolve_sketch
    assert resolve(big, "auto", None, "monti", "auto", None) == auto
    assert resolve(big, "auto", 3, "monti", "auto", None) == (_select_k.AUTO_SKETCH, 3)
    assert resolve(small, "auto", None, "monti", "auto", None) == (None, 1)
    assert resolve(big, "auto", None, "monti", "sparse", None) == (None, 1)      # a route asked for
    assert resolve(big, "auto", None, "monti", "auto", 0.01) == (None, 1)
    assert resolve(big, "auto", None, "kcc", "auto", None) == (None, 1)          # a consensus method
    assert resolve(big, None, None, "monti", "auto", None) == (None, 1)          # every object, asked
    assert resolve(small, 400, None, "monti", "auto", None) == (400, 1)
    assert resolve(big.tolist(), "auto", None, "monti", "auto", None) == auto   # any array-like


def test_the_default_sketches_large_data_as_the_same_sketches_given_by_hand(monkeypatch):
    # the automatic route is select_k(sketch=AUTO_SKETCH, n_sketches=AUTO_SKETCHES) exactly; the
    # thresholds are lowered so that it runs on a small data set
    from cclust.selection import _select_k

    monkeypatch.setattr(_select_k, "SKETCH_FROM", 1000)
    monkeypatch.setattr(_select_k, "AUTO_SKETCH", 240)
    X, y = blobs(400, CENTRES)
    auto = cclust.select_k(X, range(2, 5), null=None, n_resamples=20, random_state=0)
    by_hand = cclust.select_k(X, range(2, 5), null=None, n_resamples=20, sketch=240, n_sketches=2, random_state=0)
    assert auto.sketch.shape == (240,) and auto.sketch_best_k == by_hand.sketch_best_k == (3, 3)
    assert np.array_equal(auto.labels[3], by_hand.labels[3]) and cclust.get("ari")(auto.labels[3], y) == 1.0
    every = cclust.select_k(X, range(2, 5), null=None, n_resamples=20, sketch=None, random_state=0)
    assert every.sketch is None and every.route == "dense"


def test_a_sketch_of_an_ensemble_is_refused():
    X, _ = blobs(30, CENTRES)
    E = cclust.generate("kmeans", X, 3, n_partitions=4, random_state=0)
    with pytest.raises(ValidationError, match="data is an Ensemble"):
        cclust.select_k(E, [2, 3], method="kcc", sketch=40)


def test_the_automatic_sketches_hold_2000_objects():
    from cclust.selection import _select_k

    big = np.zeros((_select_k.SKETCH_FROM + 1, 2))
    assert _select_k.resolve_sketch(big, "auto", None, "monti", "auto", None) == (2000, 2)


def test_repeated_geometric_draws_are_the_sketches_drawn_one_by_one():
    # the in-memory rows find the geometric grid once per size and reuse it for every sketch
    from cclust.selection._sketched import InMemoryRows

    X, _ = blobs(300, CENTRES)
    rows = InMemoryRows(X)
    for seed in (0, 1, 2):
        for size in (50, 120):
            assert np.array_equal(rows.draw(size, "geometric", np.random.default_rng(seed)),
                                  _sketch.draw_sketch(X, size, "geometric", np.random.default_rng(seed)))
    assert np.array_equal(rows.draw(50, "uniform", np.random.default_rng(3)),
                          _sketch.draw_sketch(X, 50, "uniform", np.random.default_rng(3)))



def _sketch_alone(X, size, k_range, seed, t, **kwargs):
    """Sketch t as select_k(sketch=size, random_state=seed) draws it, run through select_k on
    its own (with its own reference null): the objects and the result."""
    from cclust._pipeline import child_seeds

    draw, run = np.random.SeedSequence(child_seeds(seed, 1)[0], spawn_key=(5, t)).spawn(2)
    chosen = _sketch.draw_sketch(X, size, "geometric", np.random.default_rng(draw))
    return chosen, cclust.select_k(X[chosen], k_range, random_state=int(run.generate_state(1)[0]), **kwargs)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_later_sketches_are_judged_against_the_first_sketchs_reference_null(n_jobs):
    from cclust import _reference
    from cclust.selection._recommend import _recommend_rcsi

    X, _ = blobs(200, CENTRES, scale=2.5)
    settings = dict(n_references=3, n_resamples=5)
    res = cclust.select_k(X, [2, 3, 4], sketch=150, n_sketches=2, random_state=3, n_jobs=n_jobs, **settings)
    # the first sketch's own result, its reference null included, is the answer as before
    chosen, first = _sketch_alone(X, 150, [2, 3, 4], 3, 0, **settings)
    np.testing.assert_array_equal(res.sketch, chosen)
    np.testing.assert_array_equal(res.pac_reference, first.pac_reference)
    np.testing.assert_array_equal(res.pac, first.pac)
    assert res.best_k == first.best_k
    # the second: its own PACs, judged by the obvious rule against the first sketch's references
    _, alone = _sketch_alone(X, 150, [2, 3, 4], 3, 1, **settings)
    p_predicted = _reference.predictive_p(alone.pac, res.pac_reference)
    p_value = np.where(np.isfinite(p_predicted), p_predicted, _reference.monte_carlo_p(alone.pac, res.pac_reference))
    rcsi, _ = _reference.rcsi(alone.pac, res.pac_reference)
    expected, _ = _recommend_rcsi(alone.k_values, alone.pac, rcsi, p_value, 0.05, "uniform", 3)
    assert res.sketch_best_k == (res.best_k, expected)
    assert "2 sketches chose K" in res.summary()
    assert "(each against the first sketch's reference data sets)" in res.summary()


def test_sketches_run_beside_each_other_give_the_sketches_run_one_by_one(monkeypatch):
    # with two threads the later sketches run beside the first one (one thread), sharing its
    # reference null once it is ready; one thread, or the verbose run, takes them in turn
    from cclust.selection import _sketched

    X, _ = blobs(200, CENTRES, scale=2.5)
    settings = dict(sketch=150, n_sketches=3, n_references=3, n_resamples=5, random_state=5)
    beside = []
    original = _sketched.ThreadPoolExecutor

    def counting(*args, **kwargs):
        beside.append(kwargs.get("max_workers"))
        return original(*args, **kwargs)

    monkeypatch.setattr(_sketched, "ThreadPoolExecutor", counting)
    two = cclust.select_k(X, [2, 3, 4], n_jobs=2, **settings)
    assert beside == [1]
    one = cclust.select_k(X, [2, 3, 4], n_jobs=1, **settings)
    assert beside == [1]
    for name in ("pac", "pac_reference", "rcsi", "p_value", "cdf", "sketch"):
        np.testing.assert_array_equal(getattr(two, name), getattr(one, name))
    assert two.sketch_best_k == one.sketch_best_k and two.sketch_agreement == one.sketch_agreement
    for k in (2, 3, 4):
        np.testing.assert_array_equal(two.labels[k], one.labels[k])
        np.testing.assert_array_equal(two.sketch_item_consensus[k], one.sketch_item_consensus[k])
    # a budget that holds one sketch's consensus matrices but not two: one after the other
    from cclust import _monti

    need = _monti.dense_bytes(150, 100, [2, 3, 4], False)
    budgeted = cclust.select_k(X, [2, 3, 4], n_jobs=2, max_bytes=int(1.5 * need), **settings)
    assert beside == [1] and budgeted.route == "dense"
    np.testing.assert_array_equal(budgeted.pac_reference, two.pac_reference)
    assert budgeted.sketch_best_k == two.sketch_best_k and budgeted.sketch_agreement == two.sketch_agreement


def test_a_failing_first_sketch_is_raised_and_the_later_ones_do_not_wait_for_it(monkeypatch):
    from cclust.selection import _select_k

    X, _ = blobs(200, CENTRES, scale=2.5)
    real = _select_k.select_k
    calls = []

    def first_fails(data, **kwargs):
        calls.append(kwargs["n_jobs"])
        if len(calls) == 1:
            raise RuntimeError("the first sketch failed")
        return real(data, **kwargs)

    from cclust.selection._sketched import select_k_on_sketches

    arguments = dict(data=X, k_range=[2, 3], sketch=150, sketch_method="geometric", n_sketches=2,
                     propagation="centroid", item_weights=None, random_state=0, n_jobs=2, method="monti",
                     missing_features="error", subsample=0.8, verbose=0, n_references=2, n_resamples=4)
    with pytest.raises(RuntimeError, match="the first sketch failed"):
        select_k_on_sketches(arguments, first_fails)
    assert sorted(calls) == [1, 2]


# -- the per-object part of a sketched result: one byte per object and K ---------------------------

def test_sketch_result_keeps_one_byte_labels_and_the_sketch_rows_of_item_consensus():
    from collections.abc import Mapping

    X, _ = blobs(500, ((0, 0), (4, 0), (0, 4)), scale=1.5)
    res = cclust.select_k(X, [2, 3, 4], sketch=150, n_sketches=3, sketch_method="uniform", null=None,
                          n_resamples=20, random_state=1)
    # the values the result held when every sketch's int64 labels were kept
    assert res.sketch_agreement == {2: 0.850446451895916, 3: 0.8713720957581836, 4: 0.5672246035579588}
    assert [np.bincount(res.labels[k]).tolist() for k in (2, 3, 4)] == [[651, 849], [454, 497, 549],
                                                                        [471, 338, 281, 410]]
    outside = np.setdiff1d(np.arange(1500), res.sketch)
    for k in (2, 3, 4):
        assert res.labels[k].dtype == np.uint8 and res.labels[k].shape == (1500,)
        compact = res.sketch_item_consensus[k]
        assert compact.shape == (150, k) and compact.dtype == np.float64
        dense = res.item_consensus[k]
        assert dense.shape == (1500, k) and np.isnan(dense[outside]).all()
        np.testing.assert_array_equal(dense[res.sketch], compact)
    assert isinstance(res.item_consensus, Mapping) and sorted(res.item_consensus) == [2, 3, 4]
    assert res.labels_series(3).tolist() == res.labels[3].tolist()
    record = res.to_dict()
    assert len(record["item_consensus"][3]) == 1500 and len(record["sketch_item_consensus"][3]) == 150
    # the exact route is as it was: int64 labels, a dict of (n, K) item consensus
    exact = cclust.select_k(X[:90], [2, 3], n_resamples=5, null=None, random_state=0)
    assert exact.labels[2].dtype == np.int64 and type(exact.item_consensus) is dict
    assert exact.item_consensus[2].shape == (90, 2) and exact.sketch_item_consensus is None


def test_one_labelling_pass_gives_the_propagated_labels_and_the_sketches_agreement():
    # the first sketch's labels are propagate's, and the contingency tables of row blocks add up
    # to the adjusted Rand index of every pair of sketches' labels of all the objects
    from cclust.metrics._pair_counting import ari_from_table

    rng = np.random.default_rng(3)
    X = rng.normal(size=(1000, 3))
    fits, propagated = [], []
    for t in range(3):
        chosen = np.sort(rng.choice(1000, 60, replace=False))
        labels = {2: rng.integers(0, 2, 60), 3: rng.integers(0, 3, 60)}
        fits.append((chosen, X[chosen], labels))
        propagated.append({k: _sketch.propagate(X, chosen, lab, 1, "knn", 15) for k, lab in labels.items()})
    sizes = {2: 2, 3: 3}
    first, tables = _sketch.label_rows(X, 0, fits, sizes, "knn", 15, 1)
    parts = [_sketch.label_rows(X[a:a + 300], a, fits, sizes, "knn", 15, 1) for a in range(0, 1000, 300)]
    ari = cclust.get("ari")
    for k in (2, 3):
        assert first[k].dtype == np.uint8
        np.testing.assert_array_equal(first[k], propagated[0][k])
        np.testing.assert_array_equal(np.concatenate([part[0][k] for part in parts]), first[k])
        pairs = [(0, 1), (0, 2), (1, 2)]
        for i, (a, b) in enumerate(pairs):
            np.testing.assert_array_equal(sum(part[1][k][i] for part in parts), tables[k][i])
            assert ari_from_table(tables[k][i]) == ari(propagated[a][k], propagated[b][k])


def test_a_sketched_result_holds_a_few_bytes_per_object():
    # the bytes a result stores (its pickle) grow by about one byte per object and K tried: the
    # labels; item consensus, the sketch and every statistic belong to the sketch's objects.
    # When the item consensus of every object (float64) and int64 labels were kept, it grew by
    # 8 bytes per object and K plus 8 per object and cluster: 96 bytes per object here.
    import pickle

    def stored(n):
        X, _ = blobs(n // 3, CENTRES)
        res = cclust.select_k(X, [2, 3, 4], sketch=120, n_sketches=2, null=None, n_resamples=5, random_state=0)
        return len(pickle.dumps(res)), X.shape[0]

    (small, n_small), (large, n_large) = stored(3000), stored(30000)
    per_object = (large - small) / (n_large - n_small)
    assert per_object < 3 + 0.5, per_object


def test_anndata_and_the_cli_read_the_item_consensus_of_a_sketched_result(tmp_path, capsys):
    ad = pytest.importorskip("anndata")
    from cclust import cli

    X, _ = blobs(200, CENTRES, scale=0.7)
    adata = ad.AnnData(X.astype(np.float32))
    arguments = dict(k_range=[2, 3, 4], sketch=150, n_sketches=2, null=None, n_resamples=10, random_state=1)
    res = cclust.select_k(adata.X, **arguments)
    written = cclust.select_k(adata, **arguments, copy=True)
    k = res.best_k
    own = res.item_consensus[k][np.arange(600), res.labels[k]]
    np.testing.assert_array_equal(written.obs[f"cclust_k{k}_item_consensus"].to_numpy(), own)
    assert np.isnan(own).sum() == 600 - 150
    np.savetxt(tmp_path / "x.csv", X, delimiter=",", header="a,b", comments="")
    assert cli.main(["select-k", str(tmp_path / "x.csv"), "--k-range", "2", "4", "--resamples", "10", "--null",
                     "none", "--sketch", "150", "--sketches", "2", "--format", "json", "--seed", "1"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert "sketch_item_consensus" not in record
    assert len(record["item_consensus"]) == 600 * (2 + 3 + 4)
    rows = [row for row in record["item_consensus"] if row["k"] == 3 and row["item_consensus"] is not None]
    assert len(rows) == 150 * 3
