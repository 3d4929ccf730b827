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
