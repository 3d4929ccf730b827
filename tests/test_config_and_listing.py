"""What a user sees first in Python: ``cclust.available()`` reads as a table and stays a read-only
mapping; ``cclust.show_config()`` says what ``cclust show-config`` says."""
import io
from collections.abc import Mapping

import pytest

import cclust
from cclust import cli


def test_available_reads_as_a_table():
    rows = cclust.available()
    lines = repr(rows).splitlines()
    assert lines[0].split() == ["name", "kind", "provider", "description"]
    assert set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + len(rows)
    for line, row in zip(lines[2:], rows.values()):
        # one line per name, in order, with its whole description (never cut)
        assert line.split()[:3] == [row.name, row.kind, row.provider]
        assert line.endswith(row.description)
    assert str(rows) == repr(rows)
    assert "Registration(" not in repr(rows)
    html = rows._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + len(rows)


def test_available_is_still_a_read_only_mapping():
    rows = cclust.available(kind="metric")
    assert isinstance(rows, Mapping)
    assert "ari" in rows and rows["ari"].kind == "metric"
    assert dict(rows) == rows == rows.copy()
    assert sorted(rows) == list(rows)
    with pytest.raises(TypeError):
        rows["ari"] = None
    with pytest.raises(TypeError):
        del rows["ari"]
    assert repr(cclust.available(kind="utility")).count("\n") == 1 + len(cclust.available(kind="utility"))


def test_available_of_an_empty_selection():
    from cclust.registry import Available

    assert repr(Available({})) == "(no registered names)"
    assert len(Available({})) == 0


def test_show_config_in_python_is_the_command(capsys):
    info = cclust.show_config()
    printed = capsys.readouterr().out
    assert cli.main(["show-config"]) == 0
    command = capsys.readouterr().out
    # the same lines, but for nothing: both come from one implementation
    assert printed == command
    assert any(key.startswith("extra ") for key in info)
    providers = {r.provider for r in cclust.available().values() if r.provider != "cclust"}
    for provider in providers:
        assert provider in info["plugins"]
    if not providers:
        assert info["plugins"] == "none"
    out = io.StringIO()
    assert cclust.show_config(file=out) == info
