"""The surface plugins build on: public modules only, base below the registry and the methods.

* Each plugin shipped in ``plugins/`` is imported and run in a fresh interpreter in which any
  import of a private ``cclust._*`` module *from the plugin's own code* raises ImportError, so a
  plugin that reached into cclust's internals fails here (cached modules included: the check
  sits on ``__import__``, not on the module finder).
* cclust's module-level imports form no circle (a circle makes the import order decide which
  names exist, and was how ``registry`` and ``utilities`` had to import each other lazily).
"""
import ast
import importlib.util
import pathlib
import subprocess
import sys
import textwrap

import pytest

import cclust
import cclust.base
import cclust.graph
import cclust.validation

PACKAGE = pathlib.Path(cclust.__file__).parent

#: plugin module -> the name it registers
PLUGINS = {"cclust_example": "ccpivot", "cclust_hypergraph": "hgpa"}

_BLOCKED_RUN = textwrap.dedent("""
    import builtins, sys

    PLUGIN = sys.argv[1]
    NAME = sys.argv[2]
    real_import = builtins.__import__
    seen = []

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        importer = (globals or {}).get("__name__", "")
        if importer == PLUGIN or importer.startswith(PLUGIN + "."):
            target = name if level == 0 else None
            wanted = [target] if target else []
            wanted += [f"{target}.{item}" for item in (fromlist or ()) if target]
            for full in wanted:
                parts = full.split(".")
                if parts[0] == "cclust" and any(part.startswith("_") for part in parts[1:]):
                    seen.append(full)
                    raise ImportError(f"{importer} imports the private module {full}")
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded
    import numpy as np
    import cclust

    fn = cclust.get(NAME)
    assert fn.__module__.split(".")[0] == PLUGIN, fn.__module__
    rng = np.random.default_rng(0)
    truth = np.repeat(np.arange(3), 20)
    labels = np.column_stack([np.where(rng.random(60) < 0.1, rng.integers(0, 3, 60), truth)
                              for _ in range(8)])
    result = fn(cclust.Ensemble(labels), 3, random_state=0)
    assert result.labels.shape == (60,), result.labels.shape
    print("private imports:", seen)
""")


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_plugin_runs_with_private_cclust_modules_blocked(plugin, tmp_path):
    if importlib.util.find_spec(plugin) is None:
        pytest.skip(f"{plugin} is not installed (the README's test command installs it)")
    # From an empty folder: `python -c` puts the working folder first on the path, and a source
    # checkout there (CI's, whose cclust/ has no compiled cores) would shadow the installed cclust.
    done = subprocess.run([sys.executable, "-c", _BLOCKED_RUN, plugin, PLUGINS[plugin]],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "private imports: []" in done.stdout


def test_the_guard_catches_a_private_import(tmp_path):
    """The check above can fail: a module named like a plugin that imports cclust._engine."""
    (tmp_path / "cclust_example.py").write_text("from cclust._engine import useful_threads\n")
    script = _BLOCKED_RUN.split("builtins.__import__ = guarded")[0] + (
        "builtins.__import__ = guarded\nimport cclust_example\n")
    done = subprocess.run([sys.executable, "-c", script, "cclust_example", "ccpivot"], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path),
                                                                     "PATH": "/usr/bin:/bin"})
    assert done.returncode != 0
    assert "imports the private module cclust._engine" in done.stderr


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_level_imports(path, name, modules):
    """cclust modules imported when ``name`` is (top-level statements, including under if/try;
    not under ``if TYPE_CHECKING:``, which only a type checker reads)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(statement, ast.If) and ast.unparse(statement.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            continue
        for node in ast.walk(statement):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if m in modules and m != name}


def _import_graph():
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _module_level_imports(path, name, paths) for name, path in paths.items()}


def test_module_level_import_graph_is_read():
    # the import cycle check itself (function-level imports counted, so module-level cycles too)
    # is tests/test_layering.py's; this graph serves the layering of base below
    graph = _import_graph()
    assert "cclust.registry" in graph and "cclust.base" in graph["cclust.registry"]


def test_base_imports_neither_registry_nor_methods():
    imported = _import_graph()["cclust.base"]
    assert imported <= {"cclust.errors", "cclust.validation"}, imported


@pytest.mark.parametrize("module", [cclust.base, cclust.validation, cclust.graph])
def test_public_modules_list_what_they_offer(module):
    assert module.__all__, module.__name__
    for name in module.__all__:
        assert not name.startswith("_")
        assert hasattr(module, name), f"{module.__name__}.__all__ names {name}, which it lacks"
