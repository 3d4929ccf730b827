"""Plugins through entry points: the example distribution, and broken or clashing fakes.

The example plugin (plugins/cclust-example) is installed by the README's test command; the
session fixture installs it into the running interpreter if that has not happened. The broken
and clashing plugins are fake ``*.dist-info`` directories in a temporary folder put on
``sys.path``, read by the real ``importlib.metadata`` machinery, as numcodecs tests its
entry points.
"""
import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cclust
import cclust._builtins
import cclust.registry
from cclust.errors import ContractError, PluginLoadError, RegistryConflictError, RegistryWarning
from cclust.testing import CONSENSUS_CHECKS, check_registered

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "plugins" / "cclust-example"


@pytest.fixture(scope="session")
def example_plugin():
    """The installed cclust-example distribution (installed here if the README step was skipped)."""
    try:
        import cclust_example  # noqa: F401
    except ImportError:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", str(EXAMPLE)],
            capture_output=True, text=True,
        )
        assert done.returncode == 0, f"pip install of {EXAMPLE} failed:\n{done.stdout}\n{done.stderr}"
        importlib.invalidate_caches()
    cclust.registry.refresh()
    yield importlib.import_module("cclust_example")
    cclust.registry.refresh()


# -- the example plugin --------------------------------------------------------------------------

def test_example_is_found_through_its_entry_point(example_plugin):
    cclust.registry.refresh()
    row = cclust.available()["ccpivot"]
    assert row.kind == "consensus"
    assert row.provider == "cclust-example"
    assert row.target == "cclust_example:ccpivot"
    assert "ccpivot" in cclust.available(kind="consensus")
    assert cclust.get("ccpivot") is example_plugin.ccpivot
    assert cclust.get("ccpivot", kind="consensus") is example_plugin.ccpivot
    assert "ccpivot" not in cclust.registry.conflicts()


def test_example_passes_the_registration_check(example_plugin):
    # by its registered name; the conformance kit runs once, one check at a time, below
    check_registered("ccpivot")


@pytest.mark.parametrize("check", CONSENSUS_CHECKS, ids=lambda check: check.__name__)
def test_example_each_check(example_plugin, check):
    check("ccpivot")


def test_example_through_the_shortcut(example_plugin):
    labels = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]]).T
    result = cclust.consensus("ccpivot", labels, None, random_state=0)
    assert result.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert result.method == "ccpivot"


def test_import_cclust_imports_no_plugin_and_no_compiled_module(example_plugin, tmp_path):
    code = textwrap.dedent("""
        import json, sys
        import cclust
        after_import = sorted(m for m in sys.modules
                              if m.startswith("cclust_example") or m.startswith("cclust._ext"))
        rows = cclust.available()
        after_available = sorted(m for m in sys.modules
                                 if m.startswith("cclust_example") or m.startswith("cclust._ext"))
        print(json.dumps({"import": after_import, "available": after_available,
                          "provider": rows["ccpivot"].provider if "ccpivot" in rows else None}))
    """)
    package_root = str(Path(cclust.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**_environ(), "PYTHONPATH": package_root})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["import"] == [], f"import cclust imported {seen['import']}"
    assert seen["available"] == [], f"cclust.available() imported {seen['available']}"
    assert seen["provider"] == "cclust-example"


def _environ():
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


# -- fake distributions --------------------------------------------------------------------------

def _write_distribution(root, name, entry_points, modules=None, summary=None):
    """A minimal installed distribution: ``<name>-0.1.dist-info`` with METADATA and entry points."""
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n"
    if summary:
        metadata += f"Summary: {summary}\n"
    (info / "METADATA").write_text(metadata)
    lines = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{entry} = {target}" for entry, target in entries.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))
    for module, source in (modules or {}).items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


FAKE_MODULES = ("broken_twin_impl", "twin_shadow_impl", "twin_a_impl", "twin_b_impl", "twin_builtin_impl",
                "not_a_module_xyz")

_GOOD_FN = """
    from cclust.result import ConsensusResult


    def fn(ensemble, n_clusters, *, random_state=None):
        \"\"\"{doc}\"\"\"
        return ConsensusResult.from_labels(ensemble.labels[:, 0])
"""


@pytest.fixture
def fake_plugins(example_plugin, tmp_path):
    """Four fake distributions on sys.path, plus a built-in for one of them to shadow.

    * broken-twin: ``broken-twin`` points at a module that does not exist, and
      ``broken-twin-contract`` at a function with the wrong signature;
    * twin-shadow: claims ``twin-builtin``, a row added to the built-in table for this test,
      and the first real built-in name if there is one;
    * twin-a and twin-b: both claim the new name ``twin-clash``.

    Yields the names twin-shadow claims from the built-ins.
    """
    cclust.registry.refresh()
    real = next((row for row in cclust.available().values() if row.provider == "cclust"), None)
    shadow_entries = {"cclust.consensus": {"twin-builtin": "twin_shadow_impl:fn"}}
    if real is not None:
        group = cclust.registry.KINDS[real.kind]
        shadow_entries.setdefault(group, {})[real.name] = "twin_shadow_impl:fn"
    _write_distribution(
        tmp_path, "broken-twin",
        {"cclust.consensus": {"broken-twin": "not_a_module_xyz:fn",
                              "broken-twin-contract": "broken_twin_impl:bad"}},
        {"broken_twin_impl": """
            def bad(labels, k):
                \"\"\"Takes k instead of n_clusters and no random_state.\"\"\"
                return labels
        """},
        summary="A plugin that is broken on purpose",
    )
    _write_distribution(tmp_path, "twin-shadow", shadow_entries,
                        {"twin_shadow_impl": _GOOD_FN.format(doc="The shadowing plugin.")})
    _write_distribution(tmp_path, "twin-a", {"cclust.consensus": {"twin-clash": "twin_a_impl:fn"}},
                        {"twin_a_impl": _GOOD_FN.format(doc="Twin A.")})
    _write_distribution(tmp_path, "twin-b", {"cclust.consensus": {"twin-clash": "twin_b_impl:fn"}},
                        {"twin_b_impl": _GOOD_FN.format(doc="Twin B.")})
    # The built-in that twin-shadow claims: an extra row in the built-in table (read by the same
    # code as every built-in), pointing at a real function, so the test does not depend on which
    # built-ins exist yet.
    (tmp_path / "twin_builtin_impl.py").write_text(textwrap.dedent(_GOOD_FN.format(doc="The built-in twin.")))
    builtin_row = ("twin-builtin", "consensus", "twin_builtin_impl:fn", "a built-in the fake plugin tries to shadow")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cclust._builtins, "BUILTINS", tuple(cclust._builtins.BUILTINS) + (builtin_row,))
        mp.syspath_prepend(str(tmp_path))
        cclust.registry.refresh()
        try:
            yield ["twin-builtin"] + ([real.name] if real is not None else [])
        finally:
            for module in FAKE_MODULES:
                sys.modules.pop(module, None)
    importlib.invalidate_caches()
    cclust.registry.refresh()


def test_broken_plugins_are_listed_without_importing(fake_plugins):
    rows = cclust.available()
    assert rows["broken-twin"].provider == "broken-twin"
    assert rows["broken-twin"].target == "not_a_module_xyz:fn"
    assert "A plugin that is broken on purpose" in rows["broken-twin"].description
    assert rows["broken-twin-contract"].provider == "broken-twin"
    for module in FAKE_MODULES:
        assert module not in sys.modules, f"available() imported {module}"


def test_a_broken_plugin_fails_only_for_its_own_name(fake_plugins):
    with pytest.raises(PluginLoadError, match=r"broken-twin.*not_a_module_xyz") as excinfo:
        cclust.get("broken-twin")
    assert "from broken-twin" in str(excinfo.value)
    with pytest.raises(ContractError, match=r"broken-twin-contract.*from broken-twin.*n_clusters"):
        cclust.get("broken-twin-contract")
    # Every other name still works (the clash names are tested below).
    clashing = set(cclust.registry.conflicts())
    for name in cclust.available():
        if name.startswith("broken-twin") or name in clashing:
            continue
        assert cclust.get(name) is not None
    assert cclust.get("ccpivot").__module__ == "cclust_example"
    # And asking again gives the same error, not a half-loaded object.
    with pytest.raises(PluginLoadError):
        cclust.get("broken-twin")


def test_a_plugin_cannot_shadow_a_builtin(fake_plugins):
    for name in fake_plugins:
        assert cclust.available()[name].provider == "cclust"
        assert list(cclust.registry.conflicts()[name]) == ["cclust", "twin-shadow"]
        with pytest.warns(RegistryWarning, match=rf"{name}.*twin-shadow.*built-in is used"):
            obj = cclust.get(name)
        assert getattr(obj, "__module__", None) != "twin_shadow_impl"
    with pytest.warns(RegistryWarning):  # it warns on every get, not only the first
        fn = cclust.get("twin-builtin")
    assert fn.__module__ == "twin_builtin_impl" and fn.__doc__ == "The built-in twin."
    assert "twin_shadow_impl" not in sys.modules


def test_two_plugins_claiming_one_new_name_is_an_error(fake_plugins):
    assert sorted(cclust.registry.conflicts()["twin-clash"]) == ["twin-a", "twin-b"]
    assert "twin-clash" not in cclust.available()
    with pytest.raises(RegistryConflictError, match=r"twin-clash.*twin-a.*twin-b|twin-clash.*twin-b.*twin-a"):
        cclust.get("twin-clash")
    assert "twin_a_impl" not in sys.modules and "twin_b_impl" not in sys.modules


def test_the_registry_is_restored_afterwards(example_plugin, tmp_path):
    # Runs after the fake-plugin tests (file order): none of their names survive.
    rows = cclust.available()
    for name in ("broken-twin", "broken-twin-contract", "twin-builtin", "twin-clash"):
        assert name not in rows
    assert not any(name.startswith("twin") for name in cclust.registry.conflicts())
    assert rows["ccpivot"].provider == "cclust-example"


# -- what the cclust command says about them ------------------------------------------------------

def test_the_command_notes_a_shadowed_builtin_and_lists_every_claim(fake_plugins, capsys):
    from cclust import cli

    assert cli.main(["run", "iris", "--partitions", "4", "-m", "twin-builtin"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("cclust: note: twin-builtin is also claimed by the plugin twin-shadow; the built-in "
                          "twin-builtin is used") and err.count("\n") == 1, err
    assert cli.main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "claimed twice: twin-builtin by cclust and twin-shadow; the built-in is used" in out
    assert "claimed twice: twin-clash by twin-a and twin-b; neither is used: uninstall all but one." in out
    assert cli.main(["methods", "--kind", "metric"]) == 0
    assert "twin-builtin" not in capsys.readouterr().out  # a consensus name, not a metric
