"""Soft partitions end to end on iris: fuzzy c-means memberships -> kcc and se -> metrics ->
``cclust fuse`` of a membership archive with kcc -> plots (Agg, no pyplot)."""
import matplotlib
import numpy as np

import cclust
from cclust import cli
from cclust.datasets import load_iris
from cclust.plotting import plot_consensus_matrix, plot_memberships
from cclust.soft import SoftEnsemble

matplotlib.use("Agg")


def test_fuzzy_cmeans_to_kcc_se_metrics_cli_and_plots(tmp_path, capsys, monkeypatch):
    X, y = load_iris()
    S = cclust.generate("fuzzy-cmeans", X, 3, n_partitions=10, k_range=(2, 5), memberships=True, random_state=0)
    assert isinstance(S, SoftEnsemble) and not S.hard.any()

    kcc = cclust.consensus("kcc", S, 3, random_state=0)
    se = cclust.consensus("se", S, 3, random_state=0)
    for res in (kcc, se):
        assert res.n_clusters == 3 and res.labels.shape == (150,)
    # soft input is fused as memberships, not hardened first
    assert kcc.extras["centers"].shape == (3, int(S.n_clusters.sum()))
    assert not np.array_equal(kcc.extras["kmeans_objective"],
                              cclust.consensus("kcc", S.harden(), 3, random_state=0).extras["kmeans_objective"])
    ari = cclust.get("ari")
    assert ari(kcc.labels, y) > 0.7 and ari(se.labels, y) > 0.6    # measured 0.73 and 0.66
    assert cclust.get("nmi")(kcc.labels, se.labels) > 0.7

    archive = tmp_path / "memberships.npz"
    np.savez(archive, **{f"membership_{i}": U for i, U in enumerate(S.memberships)})
    monkeypatch.chdir(tmp_path)
    out_path = tmp_path / "fused.csv"
    code = cli.main(["fuse", str(archive), "-k", "3", "-m", "kcc", "-o", str(out_path)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    fused = np.array(out_path.read_text().splitlines()[1:], dtype=np.int64)
    np.testing.assert_array_equal(fused, kcc.labels)

    ax = plot_memberships(se, labels=kcc.labels)
    assert np.asarray(ax.images[0].get_array()).shape == (150, 3)
    ax.figure.savefig(tmp_path / "memberships.png", dpi=40)
    ax = plot_consensus_matrix(S, labels=kcc.labels)
    assert ax.get_title().startswith("Expected co-membership of 150 objects")
    ax.figure.savefig(tmp_path / "comembership.png", dpi=40)
    assert (tmp_path / "memberships.png").stat().st_size > 0 and (tmp_path / "comembership.png").stat().st_size > 0
