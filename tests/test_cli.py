import numpy as np

from cclust import cli


def test_run_iris_prints_every_utility(capsys):
    assert cli.main(["run", "iris", "--partitions", "20"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    names = [row[0] for row in rows if len(row) == 5]
    assert names == ["utility"] + [label for label, _, _ in cli.KCC_UTILITIES]
    assert "150 objects" in out
    for row in rows:
        if len(row) == 5 and row[0] != "utility":
            assert 0.5 < float(row[1]) <= 1.0  # ARI of KCC on iris


def test_run_npz_without_labels_needs_k(tmp_path, capsys):
    path = tmp_path / "data.npz"
    np.savez(path, X=np.random.default_rng(0).random((40, 3)))
    assert cli.main(["run", str(path)]) == 2
    assert "-k" in capsys.readouterr().err
    assert cli.main(["run", str(path), "-k", "3", "--partitions", "5"]) == 0


def test_user_errors_are_one_line(tmp_path, capsys):
    assert cli.main(["run", "no-such-data"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cclust: error:") and err.count("\n") == 1
    assert cli.main(["run", "iris", "-k", "1000"]) == 2
    assert "-k must be between 2" in capsys.readouterr().err
    assert cli.main(["run", str(tmp_path / "missing.npz")]) == 2
    assert "cannot read" in capsys.readouterr().err
