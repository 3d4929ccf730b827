"""Plots of soft partitions: plot_memberships, the expected co-membership heatmap, and clear
refusals of fractional memberships by the plots that need hard labels (Agg, no pyplot)."""
import matplotlib
import numpy as np
import pytest
from factories import random_memberships
from matplotlib.backends.backend_agg import FigureCanvasAgg

from cclust import ConsensusResult, Ensemble
from cclust.errors import ValidationError
from cclust.plotting import object_confidence, plot_confidence, plot_consensus_matrix, plot_memberships
from cclust.soft import SoftEnsemble

matplotlib.use("Agg")


def _image(ax):
    return np.asarray(ax.images[0].get_array())


def _render(ax, tmp_path):
    ax.figure.set_dpi(40)
    FigureCanvasAgg(ax.figure).print_png(str(tmp_path / "f.png"))
    return matplotlib.image.imread(str(tmp_path / "f.png"))


def test_membership_heatmap_sorts_rows_by_label_then_by_own_membership(tmp_path):
    U = np.array([[0.6, 0.4], [0.1, 0.9], [0.9, 0.1], [0.3, 0.7], [0.7, 0.3]])
    ax = plot_memberships(U)
    # label 0: rows 2 (0.9), 4 (0.7), 0 (0.6); label 1: rows 1 (0.9), 3 (0.7)
    np.testing.assert_array_equal(_image(ax), U[[2, 4, 0, 1, 3]])
    assert ax.get_title() == "Memberships of 5 objects, 2 clusters"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0", "1"]
    assert len(ax.lines) == 1                               # one boundary between the two labels
    assert _render(ax, tmp_path)[..., :3].var() > 0


def test_given_labels_set_the_order_and_blocks():
    U = np.array([[0.6, 0.4], [0.1, 0.9], [0.9, 0.1], [0.3, 0.7]])
    ax = plot_memberships(U, labels=["b", "a", "b", "a"])
    np.testing.assert_array_equal(_image(ax), U[[3, 1, 0, 2]])   # "a" (code 0) by column 0, then "b" by column 1
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]


def test_soft_result_membership_and_ensemble_partitions():
    U = np.array([[0.8, 0.2], [0.3, 0.7], [0.95, 0.05]])
    res = ConsensusResult.from_labels([0, 1, 0], method="se", extras={"membership": U})
    ax = plot_memberships(res)
    np.testing.assert_array_equal(_image(ax), U[[2, 0, 1]])
    assert ax.get_title().startswith("Se memberships of 3 objects")
    S = SoftEnsemble(random_memberships(30, [2, 3, 4], seed=3))
    ax = plot_memberships(S)
    assert _image(ax).shape == (30, 9)
    assert len([ln for ln in ax.lines]) >= 2                # two partition separators at least
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    ax = plot_memberships(S, partition=2)
    assert _image(ax).shape == (30, 4)
    assert np.allclose(np.sort(_image(ax).sum(1)), 1.0)


def test_large_input_is_subsampled():
    S = SoftEnsemble(random_memberships(300, [3], seed=1))
    ax = plot_memberships(S, partition=0, max_objects=50)
    assert _image(ax).shape == (50, 3)
    assert "subsample of 50 of 300" in ax.get_title()


@pytest.mark.parametrize("data, kwargs, match", [
    (np.ones((4, 1)), {}, "K >= 2"),
    (np.array([[2.0, -1.0], [0.5, 0.5]]), {}, r"\[0, 1\]"),
    (Ensemble([[0, 1], [1, 0], [0, 0]]), {}, "SoftEnsemble\\(ensemble\\)"),
    (ConsensusResult.from_labels([0, 1, 0]), {}, "extras\\['membership'\\]"),
    (np.full((3, 2), 0.5), {"partition": 0}, "partition only applies"),
])
def test_membership_plot_rejects_bad_input(data, kwargs, match):
    with pytest.raises(ValidationError, match=match):
        plot_memberships(data, **kwargs)


def test_partition_out_of_range_is_named():
    S = SoftEnsemble(random_memberships(10, [2, 2], seed=0))
    with pytest.raises(ValidationError, match="partition"):
        plot_memberships(S, partition=2)


def test_consensus_matrix_of_a_soft_ensemble_is_the_expected_comembership():
    S = SoftEnsemble(random_memberships(12, [2, 3], seed=4))
    labels = np.array([0] * 6 + [1] * 6)
    ax = plot_consensus_matrix(S, labels=labels)
    drawn = _image(ax)
    A = S.coassociation()
    # The drawn matrix is A under some permutation that keeps the two label blocks apart.
    assert np.allclose(np.sort(drawn.ravel()), np.sort(A.ravel()))
    assert ax.get_title() == "Expected co-membership of 12 objects, 2 clusters"
    sub = plot_consensus_matrix(S, labels=labels, max_objects=6)
    assert _image(sub).shape == (6, 6)


def test_hard_label_plots_refuse_fractional_memberships_and_take_hard_ones():
    S = SoftEnsemble(random_memberships(20, [2, 3], seed=5))
    with pytest.raises(ValidationError, match="ensemble: object_confidence .* plot_memberships"):
        object_confidence(S, np.arange(20) % 2)
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValidationError, match="plot_memberships"):
        plot_confidence(X, np.arange(20) % 2, ensemble=S)
    hard = SoftEnsemble([[0, 0, 1, 1], [0, 0, 1, 1], [0, 1, 1, 1]])
    assert object_confidence(hard, [0, 0, 1, 1]).tolist() == object_confidence(hard.harden(), [0, 0, 1, 1]).tolist()
