"""cclust.plotting: every figure is rendered headlessly (Agg) and read back as pixels.

Figures are small and drawn at 50 dpi to keep the file fast. Pixel checks use the Axes'
data-to-display transform to find where a given matrix cell or point landed in the PNG.
"""
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import matplotlib.image
import numpy as np
import pytest
import scipy.sparse as sp
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

import cclust
from cclust import ConsensusResult, Ensemble
from cclust.datasets import load_iris
from cclust.errors import ValidationError
from cclust.plotting import _confidence
from cclust.plotting import (
    object_confidence,
    plot_confidence,
    plot_consensus_cdf,
    plot_consensus_matrix,
    plot_delta_area,
    plot_markers,
    plot_method_comparison,
    plot_pac,
    plot_select_k,
)

DPI = 50
PACKAGE_ROOT = str(Path(cclust.__file__).resolve().parents[1])


# -- helpers ----------------------------------------------------------------------------------
def render(figure, path):
    """Draw ``figure`` with Agg at DPI into a PNG and read it back as (h, w, 4) floats."""
    figure.set_dpi(DPI)
    FigureCanvasAgg(figure).print_png(str(path))
    return matplotlib.image.imread(str(path))


def assert_not_blank(image, min_colours=8):
    rgb = image[..., :3]
    assert rgb.var() > 0, "the image is a single flat colour"
    colours = np.unique((rgb * 255).round().astype(np.uint8).reshape(-1, 3), axis=0)
    assert colours.shape[0] > min_colours, f"only {colours.shape[0]} distinct colours"


def pixel(image, ax, x, y):
    """RGB of the PNG pixel where data point (x, y) of ``ax`` was drawn."""
    px, py = ax.transData.transform((x, y))
    row = int(np.floor(image.shape[0] - py))
    col = int(np.floor(px))
    return image[row, col, :3]


def darkness(rgb):
    return 1.0 - float(np.mean(rgb))


def block_labels(sizes, rng):
    """Labels with the given cluster sizes, objects in shuffled order."""
    labels = np.repeat(np.arange(len(sizes)), sizes)
    return labels[rng.permutation(labels.shape[0])]


def perfect_ensemble(labels, n_partitions=5, rng=None):
    """Partitions equal to ``labels`` up to a renaming of the clusters."""
    rng = rng or np.random.default_rng(0)
    k = int(labels.max()) + 1
    return Ensemble(np.column_stack([rng.permutation(k)[labels] for _ in range(n_partitions)]))


def fake_select_k(k_values=(2, 3, 4, 5), best_k=3, objective=None):
    """A SelectKResult-shaped record (the frozen dataclass's fields) with hand-made curves."""
    k_values = np.asarray(k_values, dtype=np.int64)
    m = k_values.shape[0]
    grid = np.linspace(0.0, 1.0, 21)
    # The best K gets a CDF flat in the middle (an unambiguous consensus), the others rise.
    cdf = np.vstack([np.clip(0.2 + 0.6 * grid + 0.05 * i, 0, 1) for i in range(m)])
    cdf[-1] = 1.0
    best_row = int(np.flatnonzero(k_values == best_k)[0]) if best_k in k_values else 0
    cdf[best_row] = np.where(grid < 1.0, 0.7, 1.0)
    area = cdf.mean(axis=1)
    pac = np.linspace(0.4, 0.1, m)
    pac[best_row] = 0.0
    return SimpleNamespace(
        k_values=k_values, cdf_grid=grid, cdf=cdf, area=area,
        delta_area=np.concatenate([[area[0]], np.diff(area) / area[:-1]]), pac=pac,
        objective=np.linspace(1.0, 2.0, m) if objective is None else np.asarray(objective, dtype=float),
        objective_name="utility (higher is better)", best_k=best_k, criterion="pac",
        reason=f"K = {best_k} has the lowest PAC.", method="kcc", consensus_matrices=None, labels={},
    )


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris()
    return X, y


@pytest.fixture(scope="module")
def iris_ensemble(iris):
    return cclust.generate("kmeans", iris[0], 3, n_partitions=12, random_state=0)


# -- import behaviour -------------------------------------------------------------------------
def run_python(code, tmp_path):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": PACKAGE_ROOT,
                                             "HOME": str(tmp_path), "MPLCONFIGDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_import_is_lazy_and_no_pyplot_is_used(tmp_path):
    seen = run_python("""
        import json, sys
        import numpy as np
        import cclust.plotting as P
        after_import = "matplotlib" in sys.modules
        from cclust import Ensemble
        labels = np.array([0, 0, 1, 1])
        E = Ensemble([[0, 0, 1, 1], [0, 1, 1, 1]])
        P.plot_consensus_matrix(E, labels)
        P.plot_confidence(np.eye(4), labels, ensemble=E)
        P.plot_method_comparison({"a": {"ARI": 1.0}})
        print(json.dumps({"after_import": after_import, "matplotlib": "matplotlib" in sys.modules,
                          "pyplot": "matplotlib.pyplot" in sys.modules}))
    """, tmp_path)
    assert seen == {"after_import": False, "matplotlib": True, "pyplot": False}


def test_missing_matplotlib_says_what_to_install(tmp_path):
    seen = run_python("""
        import json, sys
        sys.modules["matplotlib"] = None   # what Python does for a package that is not installed
        import cclust.plotting as P
        try:
            P.plot_method_comparison({"a": {"ARI": 1.0}})
        except ImportError as exc:
            print(json.dumps({"message": str(exc)}))
    """, tmp_path)
    assert "pip install 'cclust[plot]'" in seen["message"]


# -- consensus matrix -------------------------------------------------------------------------
def test_heatmap_shows_dark_diagonal_blocks_for_a_perfect_ensemble(tmp_path, rng):
    sizes = [20, 30, 25]
    labels = block_labels(sizes, rng)
    ax = plot_consensus_matrix(perfect_ensemble(labels, rng=rng), labels)
    assert isinstance(ax, Axes) and isinstance(ax.figure, Figure)
    image = render(ax.figure, tmp_path / "blocks.png")
    assert_not_blank(image)

    # The drawn matrix is block diagonal in label order: ones inside blocks, zeros elsewhere.
    shown = np.asarray(ax.images[0].get_array())
    ordered = np.repeat(np.arange(3), sizes)
    assert np.array_equal(shown, (ordered[:, None] == ordered[None, :]).astype(float))

    starts = np.concatenate([[0], np.cumsum(sizes)])
    inside, outside = [], []
    for a in range(3):
        for b in range(3):
            # Cell centres away from boundary lines.
            for i in np.linspace(starts[a] + 2, starts[a + 1] - 3, 3):
                for j in np.linspace(starts[b] + 2, starts[b + 1] - 3, 3):
                    (inside if a == b else outside).append(darkness(pixel(image, ax, j, i)))
    assert min(inside) > max(outside) + 0.4, (min(inside), max(outside))
    assert "3 clusters" in ax.get_title() and "subsample" not in ax.get_title()


def test_heatmap_draws_cluster_boundaries_and_ticks_with_label_names(rng):
    labels = np.array(["b", "a", "b", "c", "a", "b", "c", "c", "c"])
    codes = np.unique(labels, return_inverse=True)[1]
    ax = plot_consensus_matrix(perfect_ensemble(codes, rng=rng), labels)
    # Sizes a=2, b=3, c=4: boundaries after 2 and 5 objects, one horizontal and one vertical each.
    positions = sorted({round(float(np.ravel(line.get_xdata())[0]), 3) for line in ax.get_lines()
                        if np.ptp(line.get_xdata()) == 0})
    assert positions == [1.5, 4.5]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]


def test_dense_sparse_and_ensemble_inputs_draw_the_same_matrix(iris_ensemble):
    labels = cclust.consensus("kcc", iris_ensemble, 3, random_state=0).labels
    A = np.array(iris_ensemble.coassociation())
    shown = [np.asarray(plot_consensus_matrix(data, labels).images[0].get_array())
             for data in (iris_ensemble, A, sp.csr_matrix(A), A.tolist())]
    for other in shown[1:]:
        np.testing.assert_allclose(other, shown[0], rtol=0, atol=1e-12)
    # The drawing is a reordering of the matrix: same multiset of values, symmetric.
    np.testing.assert_allclose(np.sort(shown[0].ravel()), np.sort(A.ravel()))
    np.testing.assert_allclose(shown[0], shown[0].T)


def test_within_cluster_order_keeps_sub_blocks_contiguous():
    # One consensus cluster made of two sub-blocks that the ensemble separates half the time,
    # interleaved in the input order; the other cluster is clean.
    sub = np.array([0, 1] * 6)
    labels = np.concatenate([np.zeros(12, dtype=int), np.ones(6, dtype=int)])
    p1 = np.concatenate([sub, np.full(6, 2)])
    p2 = np.concatenate([np.zeros(12, dtype=int), np.ones(6, dtype=int)])
    ax = plot_consensus_matrix(Ensemble(np.column_stack([p1, p2])), labels)
    shown = np.asarray(ax.images[0].get_array())
    first_row = shown[0, :12]
    # In the drawn order the sub-block of object 0 fills one contiguous run.
    runs = np.count_nonzero(np.diff(first_row) != 0)
    assert runs == 1 and first_row[:6].tolist() == [1.0] * 6


def test_without_labels_objects_are_ordered_by_similarity(rng):
    labels = block_labels([15, 10, 12], rng)
    ax = plot_consensus_matrix(perfect_ensemble(labels, rng=rng))
    shown = np.asarray(ax.images[0].get_array())
    # Contiguous blocks: the super-diagonal leaves a block exactly twice (3 blocks).
    assert np.count_nonzero(np.diag(shown, 1) == 0) == 2
    assert not [line for line in ax.get_lines()]
    assert "clusters" not in ax.get_title()


def test_large_input_is_subsampled_by_cluster_reproducibly(tmp_path):
    rng = np.random.default_rng(7)
    sizes = [400, 180, 19, 1]    # a singleton must survive the subsample
    labels = block_labels(sizes, rng)
    E = perfect_ensemble(labels, rng=rng)
    ax = plot_consensus_matrix(E, labels, max_objects=100, random_state=3)
    shown = np.asarray(ax.images[0].get_array())
    assert shown.shape == (100, 100)
    assert "subsample of 100 of 600 objects" in ax.get_title()
    # Blocks of the drawn matrix are the per-cluster counts: proportional, each cluster present.
    block_sizes = [int(s) for s in np.unique(shown.sum(axis=1), return_counts=True)[0]]
    assert sorted(block_sizes) == sorted([66, 30, 3, 1])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0", "1", "2", "3"]
    again = np.asarray(plot_consensus_matrix(E, labels, max_objects=100, random_state=3).images[0].get_array())
    assert np.array_equal(shown, again)
    assert_not_blank(render(ax.figure, tmp_path / "sub.png"))


def test_subsample_of_an_ensemble_equals_the_submatrix_of_its_coassociation():
    rng = np.random.default_rng(1)
    L = rng.integers(0, 4, size=(300, 6))
    L[rng.random(L.shape) < 0.2] = -1    # missing labels: pairwise denominators must still match
    E = Ensemble(L)
    labels = rng.integers(0, 3, size=300)
    A = np.array(E.coassociation())
    from_ensemble = plot_consensus_matrix(E, labels, max_objects=80, random_state=5)
    from_matrix = plot_consensus_matrix(A, labels, max_objects=80, random_state=5)
    np.testing.assert_allclose(np.asarray(from_ensemble.images[0].get_array()),
                               np.asarray(from_matrix.images[0].get_array()), atol=1e-12)


def test_heatmap_reuses_a_given_axes_and_does_not_mutate_inputs():
    figure = Figure(figsize=(6, 3))
    left, right = figure.subplots(1, 2)
    A = np.array([[1.0, 0.8, 0.1], [0.8, 1.0, 0.0], [0.1, 0.0, 1.0]])
    labels = np.array([1, 1, 0])
    A_before, labels_before = A.copy(), labels.copy()
    assert plot_consensus_matrix(A, labels, ax=right) is right
    assert right.images and not left.images
    assert np.array_equal(A, A_before) and np.array_equal(labels, labels_before)
    assert A.flags.writeable and labels.flags.writeable


@pytest.mark.parametrize("data, labels, kwargs, match", [
    (np.ones((3, 4)), None, {}, "square"),
    (np.ones((2, 2, 2)), None, {}, "square"),
    (np.full((3, 3), 2.0), None, {}, r"\[0, 1\]"),
    (np.array([[1.0, np.inf], [np.inf, 1.0]]), None, {}, "infinity"),
    (np.array([["a", "b"], ["c", "d"]]), None, {}, "numbers"),
    (np.eye(3), [0, 1], {}, "one entry per object"),
    (np.eye(3), [[0, 1, 2]], {}, "1-D"),
    (np.eye(3), None, {"cmap": "no-such-map"}, "cmap"),
    (np.eye(3), None, {"ax": "left"}, "ax must be a matplotlib Axes"),
    (np.eye(3), None, {"max_objects": 1}, "max_objects"),
    (np.eye(3), None, {"max_objects": 2.5}, "max_objects"),
], ids=["not-square", "3-d", "above-one", "inf", "strings", "labels-length", "labels-2d", "cmap", "ax",
        "max-objects-small", "max-objects-float"])
def test_heatmap_rejects_bad_input(data, labels, kwargs, match):
    with pytest.raises(ValidationError, match=match):
        plot_consensus_matrix(data, labels, **kwargs)


# -- select_k ---------------------------------------------------------------------------------
def test_cdf_draws_one_curve_per_k_with_the_best_one_thick(tmp_path):
    res = fake_select_k()
    ax = plot_consensus_cdf(res)
    lines = ax.get_lines()
    assert len(lines) == 4
    widths = {line.get_label(): line.get_linewidth() for line in lines}
    assert widths["K = 3 (best)"] > max(w for name, w in widths.items() if "best" not in name)
    for line, row in zip(lines, res.cdf):
        assert np.allclose(line.get_ydata(), row)
    assert_not_blank(render(ax.figure, tmp_path / "cdf.png"))


@pytest.mark.parametrize("plot, field", [(plot_delta_area, "delta_area"), (plot_pac, "pac")], ids=["delta", "pac"])
def test_k_curves_plot_the_values_and_mark_the_best_k(tmp_path, plot, field):
    res = fake_select_k()
    ax = plot(res)
    curve = ax.get_lines()[0]
    assert np.array_equal(curve.get_xdata(), res.k_values)
    assert np.allclose(curve.get_ydata(), getattr(res, field))
    star = [line for line in ax.get_lines() if line.get_marker() == "*"]
    assert len(star) == 1 and star[0].get_xdata()[0] == 3
    assert star[0].get_ydata()[0] == pytest.approx(getattr(res, field)[1])
    assert_not_blank(render(ax.figure, tmp_path / f"{field}.png"))


def test_the_pac_panel_shows_the_standard_error_of_sampled_pairs(tmp_path):
    from matplotlib.collections import LineCollection

    exact = plot_pac(fake_select_k())
    assert not [c for c in exact.collections if isinstance(c, LineCollection)]
    res = fake_select_k()
    res.pac_se = np.array([0.01, 0.0025, 0.02, 0.015])
    ax = plot_pac(res)
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(bars) == 1
    spans = [segment[:, 1] for segment in bars[0].get_segments()]
    np.testing.assert_allclose([high - low for low, high in spans], 2 * res.pac_se)
    assert any("standard error" in text.get_text() for text in ax.get_legend().get_texts())
    assert_not_blank(render(ax.figure, tmp_path / "pac_se.png"))


def test_select_k_figure_has_four_panels_and_names_the_choice(tmp_path):
    res = fake_select_k()
    figure = plot_select_k(res)
    assert isinstance(figure, Figure) and len(figure.axes) == 4
    title = figure.get_suptitle()
    assert "Selected K = 3" in title and "pac" in title and "lowest PAC" in title
    assert figure.axes[3].get_ylabel() == "utility (higher is better)"
    assert_not_blank(render(figure, tmp_path / "select.png"), min_colours=20)


def test_select_k_without_objective_or_valid_best_k_still_draws(tmp_path):
    res = fake_select_k(objective=[np.nan] * 4, best_k=9)
    figure = plot_select_k(res)
    # no criterion: three panels (CDF, delta area, PAC), no empty fourth one
    assert len(figure.axes) == 3 and not any(ax.texts for ax in figure.axes)
    assert [ax.get_title() for ax in figure.axes] == [plot_select_k(fake_select_k()).axes[i].get_title()
                                                      for i in range(3)]
    assert not [line for ax in figure.axes for line in ax.get_lines() if line.get_marker() == "*"]
    assert_not_blank(render(figure, tmp_path / "nobest.png"))


def test_select_k_panels_reuse_axes():
    figure = Figure()
    ax = figure.add_subplot()
    res = fake_select_k()
    assert plot_consensus_cdf(res, ax=ax) is ax
    assert plot_delta_area(res, ax=ax) is ax
    assert plot_pac(res, ax=ax) is ax


def test_select_k_plots_reject_other_objects():
    res = fake_select_k()
    del res.cdf
    with pytest.raises(ValidationError, match="no field 'cdf'"):
        plot_consensus_cdf(res)
    with pytest.raises(ValidationError, match="SelectKResult"):
        plot_select_k(ConsensusResult.from_labels([0, 1]))
    bad = fake_select_k()
    bad.pac = np.zeros(2)
    with pytest.raises(ValidationError, match="one value per K"):
        plot_pac(bad)
    bad = fake_select_k()
    bad.cdf = bad.cdf[:, :5]
    with pytest.raises(ValidationError, match="cdf must have shape"):
        plot_consensus_cdf(bad)
    bad = fake_select_k()
    bad.k_values = np.array([2.0, 3.0, 4.0, 5.0])
    with pytest.raises(ValidationError, match="k_values"):
        plot_pac(bad)


def test_select_k_plots_draw_a_real_select_k_result(tmp_path):
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    X = np.vstack([c + rng.normal(size=(20, 2)) for c in centres])
    res = cclust.select_k(X, range(2, 5), n_partitions=8, n_resamples=6, random_state=0, keep_matrices=True)
    figure = plot_select_k(res)
    assert f"Selected K = {res.best_k}" in figure.get_suptitle()
    assert len(figure.axes[0].get_lines()) == len(res.k_values)
    assert_not_blank(render(figure, tmp_path / "real.png"), min_colours=20)
    # Its consensus matrices (NaN where a pair was never sampled together) draw as heatmaps.
    M = res.consensus_matrices[res.best_k]
    ax = plot_consensus_matrix(M, res.labels[res.best_k])
    shown = ax.images[0].get_array()
    assert np.ma.count_masked(shown) == np.isnan(M).sum()
    assert_not_blank(render(ax.figure, tmp_path / "monti.png"))


def test_pairs_never_compared_are_drawn_grey(tmp_path):
    A = np.kron(np.eye(2), np.ones((5, 5)))
    A[0, 7] = A[7, 0] = np.nan
    ax = plot_consensus_matrix(A, [0] * 5 + [1] * 5, cmap="Blues")
    image = render(ax.figure, tmp_path / "nan.png")
    shown = ax.images[0].get_array()
    row, col = (int(i[0]) for i in np.nonzero(np.ma.getmaskarray(shown)))
    grey = pixel(image, ax, col, row)
    assert np.ptp(grey) < 0.02 and 0.6 < grey.mean() < 0.9   # neutral mid grey, not a Blues shade


# -- object confidence ------------------------------------------------------------------------
def confidence_reference(labels_matrix, weights, consensus):
    """Slow, literal reading of object_confidence's definition."""
    n, r = labels_matrix.shape
    total = [0.0] * n
    agreeing = [0.0] * n
    for i in range(r):
        counts = {}
        for x in range(n):
            c = labels_matrix[x, i]
            if c >= 0:
                counts.setdefault(c, {})
                counts[c][consensus[x]] = counts[c].get(consensus[x], 0) + 1
        winners = {c: [k for k, v in row.items() if v == max(row.values())] for c, row in counts.items()}
        for x in range(n):
            c = labels_matrix[x, i]
            if c >= 0:
                total[x] += weights[i]
                if consensus[x] in winners[c]:
                    agreeing[x] += weights[i] / len(winners[c])
    return np.array([a / t if t > 0 else np.nan for a, t in zip(agreeing, total)])


@pytest.mark.parametrize("table", ["dense", "sparse"])
@pytest.mark.parametrize("missing", [0.0, 0.3], ids=["complete", "missing"])
def test_object_confidence_matches_the_reference(rng, missing, table, monkeypatch):
    if table == "sparse":
        # The route taken for many clusters on both sides; force it on a small case.
        monkeypatch.setattr(_confidence, "_DENSE_TABLE_CELLS", 0)
    n, r = 60, 9
    L = rng.integers(0, 5, size=(n, r)) if table == "dense" else rng.integers(0, 40, size=(n, r))
    L[rng.random(L.shape) < missing] = -1
    L[0] = -1                                  # an object no partition labels
    L[1:, 0] = np.where(L[1:, 0] < 0, 0, L[1:, 0])
    weights = rng.random(r) + 0.1
    E = Ensemble(L, weights=weights)
    consensus = rng.integers(0, 3, size=n)
    got = object_confidence(E, consensus)
    expected = confidence_reference(E.labels, E.weights, consensus)
    assert got.dtype == np.float64 and got.shape == (n,)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, equal_nan=True)
    assert np.isnan(got[0]) and np.all((got[1:] >= 0) & (got[1:] <= 1))


def test_object_confidence_on_clear_cases(rng):
    labels = block_labels([10, 7, 5], rng)
    assert np.array_equal(object_confidence(perfect_ensemble(labels, rng=rng), labels), np.ones(22))
    # Renaming the consensus clusters changes nothing.
    E = Ensemble(rng.integers(0, 3, size=(22, 6)))
    renamed = np.array([5, 9, 2])[labels]
    np.testing.assert_array_equal(object_confidence(E, labels), object_confidence(E, renamed))
    # The docstring's hand-worked case: partition 3 puts object 1 with the other cluster.
    got = object_confidence([[0, 0, 1, 1], [0, 0, 1, 1], [0, 1, 1, 1]], [0, 0, 1, 1])
    np.testing.assert_allclose(got, [1.0, 2 / 3, 1.0, 1.0])


def test_object_confidence_rejects_mismatched_labels():
    with pytest.raises(ValidationError, match="one entry per object"):
        object_confidence([[0, 1, 1]], [0, 1])


# -- confidence plot --------------------------------------------------------------------------
def scatter_of(ax):
    (collection,) = ax.collections
    return np.asarray(collection.get_offsets()), np.asarray(collection.get_facecolors())


def test_two_columns_are_drawn_as_given_and_confidence_fades_points(tmp_path):
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [5.0, 5.0], [5.0, 6.0], [6.0, 5.0]])
    confidence = np.array([1.0, 0.9, 0.2, 1.0, 0.5, 0.95])
    X_before, confidence_before = X.copy(), confidence.copy()
    ax = plot_confidence(X, [0, 0, 0, 1, 1, 1], confidence)
    offsets, faces = scatter_of(ax)
    # Same points (drawn surest first); each point's fill alpha grows with its confidence.
    order = np.lexsort((offsets[:, 1], offsets[:, 0]))
    assert np.array_equal(offsets[order], X[np.lexsort((X[:, 1], X[:, 0]))])
    alpha_at = {tuple(p): a for p, a in zip(offsets, faces[:, 3])}
    alphas = np.array([alpha_at[tuple(p)] for p in X])
    assert np.array_equal(np.argsort(alphas, kind="stable"), np.argsort(confidence, kind="stable"))
    # Colour follows the consensus label.
    colour_at = {tuple(p): tuple(np.round(f[:3], 6)) for p, f in zip(offsets, faces)}
    assert len({colour_at[tuple(p)] for p in X[:3]}) == 1 and colour_at[tuple(X[0])] != colour_at[tuple(X[3])]
    assert ax.get_xlabel() == "X[:, 0]"
    assert np.array_equal(X, X_before) and np.array_equal(confidence, confidence_before)
    assert_not_blank(render(ax.figure, tmp_path / "conf2d.png"))


def test_more_columns_are_projected_on_the_principal_components(iris, iris_ensemble, tmp_path):
    X, _ = iris
    labels = cclust.consensus("kcc", iris_ensemble, 3, random_state=0).labels
    ax = plot_confidence(X, labels, ensemble=iris_ensemble)
    offsets, _ = scatter_of(ax)
    # Reference PCA through the covariance eigenvectors; each axis may differ only in sign.
    centred = X - X.mean(axis=0)
    _, vectors = np.linalg.eigh(np.cov(centred, rowvar=False))
    expected = centred @ vectors[:, ::-1][:, :2]
    drawn = offsets[np.lexsort(offsets.T[::-1])]
    matches = []
    for signs in ([1, 1], [1, -1], [-1, 1], [-1, -1]):
        flipped = expected * signs
        flipped = flipped[np.lexsort(flipped.T[::-1])]
        matches.append(np.allclose(drawn, flipped, atol=1e-9))
    assert sum(matches) == 1
    assert ax.get_xlabel().startswith("PC 1 (92%")
    assert ax.get_title() == "Confidence: fraction of partitions agreeing"
    colourbar = [a for a in ax.figure.axes if a is not ax]
    assert colourbar and colourbar[0].get_ylabel() == "fraction of partitions agreeing"
    assert_not_blank(render(ax.figure, tmp_path / "iris.png"), min_colours=20)


def test_confidence_from_a_woec_result_and_from_a_result_carrying_its_ensemble(iris, iris_ensemble, tmp_path):
    X, _ = iris
    res = cclust.consensus("womc", iris_ensemble, 3, random_state=0)
    assert "object_weights" in res.extras
    ax = plot_confidence(X, res.labels, result=res)
    assert ax.get_title() == "Confidence: WOEC object weights"
    _, faces = scatter_of(ax)
    assert faces[:, 3].min() < faces[:, 3].max()
    assert_not_blank(render(ax.figure, tmp_path / "woec.png"))

    carried = ConsensusResult.from_labels(res.labels, extras={"ensemble": iris_ensemble}, method="gkcc")
    via_result = scatter_of(plot_confidence(X, res.labels, result=carried))
    via_ensemble = scatter_of(plot_confidence(X, res.labels, ensemble=iris_ensemble))
    for a, b in zip(via_result, via_ensemble):
        np.testing.assert_allclose(a, b)


def test_woec_weights_order_the_fading(iris_ensemble, iris):
    X, _ = iris
    res = cclust.consensus("womc", iris_ensemble, 3, random_state=0)
    weights = np.asarray(res.extras["object_weights"])
    embedding = np.column_stack([np.arange(150.0), np.zeros(150)])
    ax = plot_confidence(None, res.labels, result=res, embedding=embedding)
    offsets, faces = scatter_of(ax)
    alpha = np.empty(150)
    alpha[offsets[:, 0].astype(int)] = faces[:, 3]
    heaviest, lightest = int(np.argmax(weights)), int(np.argmin(weights))
    assert alpha[heaviest] < alpha[lightest]
    assert ax.get_xlabel() == "embedding 1"


def test_confidence_plot_reuses_axes_and_keeps_inputs():
    figure = Figure()
    ax = figure.add_subplot()
    X = np.random.default_rng(0).normal(size=(10, 3))
    labels = np.array([0, 1] * 5)
    E = Ensemble(np.column_stack([labels, labels[::-1]]))
    X_before = X.copy()
    assert plot_confidence(X, labels, ensemble=E, ax=ax) is ax
    assert np.array_equal(X, X_before) and np.array_equal(labels, [0, 1] * 5)


@pytest.mark.parametrize("kwargs, match", [
    ({}, "pass one of confidence="),
    ({"confidence": np.ones(4), "ensemble": [[0, 0, 1, 1]]}, "only one of"),
    ({"confidence": np.ones(3)}, "one value per object"),
    ({"confidence": np.array([1.0, np.inf, 0.0, 0.5])}, "infinity"),
    ({"ensemble": [[0, 0, 1]]}, "ensemble labels 3 objects"),
    ({"result": ConsensusResult.from_labels([0, 0, 1, 1], method="kcc")}, "pass ensemble="),
    ({"result": "kcc"}, "ConsensusResult"),
    ({"confidence": np.ones(4), "embedding": "tsne"}, "embedding must be 'pca'"),
    ({"confidence": np.ones(4), "embedding": np.ones((4, 3))}, "2 columns"),
    ({"confidence": np.ones(4), "embedding": np.ones((5, 2))}, "same objects"),
    ({"confidence": np.ones(4), "ax": 3}, "ax must be"),
], ids=["none", "two", "length", "inf", "ensemble-n", "no-weights", "not-result", "embedding-name",
        "embedding-cols", "embedding-rows", "ax"])
def test_confidence_plot_rejects_bad_input(kwargs, match):
    X = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 4.0], [4.0, 5.0]])
    with pytest.raises(ValidationError, match=match):
        plot_confidence(X, [0, 0, 1, 1], **kwargs)


def test_confidence_plot_rejects_bad_data_and_labels():
    with pytest.raises(ValidationError, match="X contains NaN"):
        plot_confidence(np.array([[0.0, np.nan], [1.0, 1.0]]), [0, 1], confidence=[1, 1])
    with pytest.raises(ValidationError, match="one entry per object"):
        plot_confidence(np.ones((3, 2)), [0, 1], confidence=[1, 1, 1])
    with pytest.raises(ValidationError, match="X is None"):
        plot_confidence(None, [0, 1], confidence=[1, 1])


# -- method comparison ------------------------------------------------------------------------
TABLE = {
    "kcc": {"ARI": 0.73, "NMI": 0.76, "ARI_std": 0.05, "seconds": 0.1},
    "hbgf": {"ARI": 0.91, "NMI": 0.89, "ARI_std": 0.01, "seconds": 0.3},
    "eac": {"ARI": 0.56, "NMI": 0.70, "seconds": 0.2},
    "voting": {"ARI": float("nan"), "NMI": 0.5, "seconds": 0.05},
}


def bar_container(ax):
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    return bars


def test_bars_are_sorted_with_error_bars_and_skipped_methods_named(tmp_path):
    ax = plot_method_comparison(TABLE)
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert names == ["hbgf", "kcc", "eac"]
    widths = [patch.get_width() for patch in ax.patches]
    assert widths == [0.91, 0.73, 0.56]
    errorbar = bar_container(ax).errorbar
    assert errorbar is not None
    segments = errorbar.lines[2][0].get_segments()
    half_lengths = [float(np.ptp(np.asarray(s)[:, 0]) / 2) for s in segments]
    np.testing.assert_allclose(half_lengths, [0.01, 0.05, 0.0], atol=1e-12)
    assert "no value: voting" in ax.get_xlabel()
    assert [t.get_text() for t in ax.texts] == ["0.91", "0.73", "0.56"]
    assert_not_blank(render(ax.figure, tmp_path / "bars.png"))


def test_dataframe_bare_numbers_and_case_insensitive_metric():
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(TABLE).T
    ax = plot_method_comparison(frame, metric="nmi")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["hbgf", "kcc", "eac", "voting"]
    assert bar_container(ax).errorbar is None
    ax = plot_method_comparison({"a": 0.2, "b": -0.1, "c": 0.5}, metric="seconds")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c", "a", "b"]
    assert ax.get_title() == "Methods by seconds"


def test_comparison_reuses_axes_and_keeps_the_table():
    figure = Figure()
    ax = figure.add_subplot()
    table = {m: dict(row) for m, row in TABLE.items()}
    assert plot_method_comparison(table, metric="seconds", ax=ax) is ax
    assert table.keys() == TABLE.keys()
    for method in TABLE:
        assert table[method].keys() == TABLE[method].keys()


@pytest.mark.parametrize("table, metric, match", [
    ([("kcc", 0.5)], "ARI", "mapping"),
    ({}, "ARI", "empty"),
    (TABLE, "F1", r"one of the table's scores \['ARI', 'NMI', 'seconds'\]"),
    (TABLE, 3, "metric must be a str"),
    ({"kcc": {"ARI": "high"}}, "ARI", "must be a number"),
    ({"kcc": {"ARI": np.inf}}, "ARI", "infinite"),
    ({"kcc": {"ARI": 0.5, "ARI_std": -1}}, "ARI", ">= 0"),
    ({"kcc": {"ARI": np.nan}}, "ARI", "no method"),
    ({"kcc": [0.5]}, "ARI", "mapping of scores"),
], ids=["list", "empty", "unknown-metric", "metric-type", "string-score", "inf", "negative-std", "all-nan",
        "row-list"])
def test_comparison_rejects_bad_input(table, metric, match):
    with pytest.raises(ValidationError, match=match):
        plot_method_comparison(table, metric=metric)


def test_the_markers_dot_plot_shows_each_clusters_best_features(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 8))
    labels = np.repeat([0, 1, 2], 30)
    X[:30, 2] += 3.0
    X[30:60, 6] += 3.0
    table = cclust.markers(X, labels, as_frame=False)
    ax = plot_markers(table, n_top=1)
    features = [t.get_text() for t in ax.get_xticklabels()]
    assert features[:2] == ["2", "6"] and [t.get_text() for t in ax.get_yticklabels()] == ["0", "1", "2"]
    dots = ax.collections[0]
    assert dots.get_offsets().shape[0] == 3 * len(features)
    # the colour is the score: cluster 0's dot at feature 2 is its z-score
    first = [i for i in range(len(table["cluster"])) if table["cluster"][i] == 0 and table["feature"][i] == "2"][0]
    assert dots.get_array()[0] == pytest.approx(table["score"][first])
    assert_not_blank(render(ax.figure, tmp_path / "markers.png"), min_colours=20)
    with pytest.raises(ValidationError, match="not one cut by n_top"):
        plot_markers(cclust.markers(X, labels, n_top=1, as_frame=False), n_top=2)
    with pytest.raises(ValidationError, match="what cclust.markers returns"):
        plot_markers({"cluster": [0]}, n_top=1)
    with pytest.raises(ValidationError, match="n_top"):
        plot_markers(table, n_top=0)
