"""Every install hint cclust prints can be followed: one hint per missing plugin, the same in
every message, naming an extra that pyproject.toml defines or a plugin folder of this tree.

Nothing is installed or uninstalled: an installed plugin is taken out of the default registry
for the test (``unregister``) and the registry is read again afterwards (``refresh``), which is
what a session without the plugin sees.
"""
import io
import re
from pathlib import Path

import pytest

import cclust
import cclust.registry
from cclust import cli
from cclust.errors import UnknownNameError
from cclust.registry import KNOWN_PLUGINS

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# `pip install X`, with X up to a space, backquote, parenthesis, semicolon or end of line.
PIP_INSTALL = re.compile(r"pip install ([^\s`);]+)")


def _installable(target):
    """Why ``pip install target`` would not work from the repository root, or None if it would."""
    extra = re.fullmatch(r"'cclust\[([a-z0-9-]+)\]'", target)
    if extra:
        extras = PYPROJECT["project"]["optional-dependencies"]
        return None if extra.group(1) in extras else f"cclust has no extra {extra.group(1)!r}"
    if target.startswith("./"):
        project = ROOT / target / "pyproject.toml"
        return None if project.is_file() else f"{project} does not exist"
    return f"{target!r} is neither an extra of cclust nor a folder of this tree (nothing is on PyPI)"


@pytest.fixture
def without_plugins():
    """The default registry as it is where no plugin of KNOWN_PLUGINS is installed."""
    for name in KNOWN_PLUGINS:
        if name in cclust.available():
            cclust.registry.unregister(name)
    yield
    cclust.registry.refresh()


@pytest.mark.parametrize("name", sorted(KNOWN_PLUGINS))
def test_hint_installs_the_plugin_that_provides_the_name(name):
    dist, _ = KNOWN_PLUGINS[name]
    commands = PIP_INSTALL.findall(cclust.registry.install_hint(name))
    assert len(commands) == 1, cclust.registry.install_hint(name)
    assert _installable(commands[0]) is None, _installable(commands[0])
    plugin = tomllib.loads((ROOT / commands[0] / "pyproject.toml").read_text(encoding="utf-8"))
    assert plugin["project"]["name"] == dist
    groups = plugin["project"]["entry-points"]
    assert any(name in groups.get(group, {}) for group in
               ("cclust.consensus", "cclust.utilities", "cclust.generators", "cclust.metrics"))


def test_every_message_about_a_missing_plugin_gives_the_same_hint(without_plugins, capsys):
    messages = {}
    assert cli.main(["methods"]) == 0
    messages["cclust methods"] = capsys.readouterr().out
    assert cli.main(["run", "iris", "--partitions", "3", "--format", "json"]) == 0
    messages["cclust run"] = capsys.readouterr().out
    assert cli.main(["show-config"]) == 0
    messages["cclust show-config"] = capsys.readouterr().out
    cclust.show_config()
    messages["cclust.show_config()"] = capsys.readouterr().out
    for name in KNOWN_PLUGINS:
        assert cli.main(["run", "iris", "--method", name]) == 2
        messages[f"cclust run --method {name}"] = capsys.readouterr().err
        with pytest.raises(UnknownNameError) as error:
            cclust.get(name)
        messages[f"cclust.get({name!r})"] = str(error.value)
    for name, (dist, _) in KNOWN_PLUGINS.items():
        for where, text in messages.items():
            lines = [line for line in text.splitlines() if name in line or dist in line]
            assert any(cclust.registry.install_hint(name) in line for line in lines), (where, lines)
            hinted = {cmd for line in lines for cmd in PIP_INSTALL.findall(line)}
            assert hinted == set(PIP_INSTALL.findall(cclust.registry.install_hint(name))), (where, hinted)


def test_every_printed_install_hint_can_be_followed(without_plugins, capsys):
    """Extras as well as plugins: show-config names each extra it finds missing."""
    assert cli.main(["methods"]) == 0
    assert cli.main(["show-config"]) == 0
    text = capsys.readouterr().out
    targets = set(PIP_INSTALL.findall(text))
    assert targets  # the plugins were taken out, so there is at least their hint
    for target in targets:
        assert _installable(target) is None, _installable(target)


def test_show_config_lists_every_feature_extra():
    extras = set(PYPROJECT["project"]["optional-dependencies"]) - {"docs", "test"}
    info = cclust.show_config(file=io.StringIO())
    assert {key.split()[1] for key in info if key.startswith("extra ")} == extras
