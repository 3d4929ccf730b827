"""How cclust's modules may import each other, read from the source (every ``import`` and
``from ... import`` statement at any depth, function bodies included)."""
import ast
import pathlib
import re

import pytest

import cclust

PACKAGE = pathlib.Path(cclust.__file__).parent


def _modules():
    """{dotted name: (path, is a package)} of every Python module of cclust."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def import_graph():
    """{module: set of cclust modules it imports}: ``import a.b`` and ``from a import b`` name
    module ``a.b`` when it exists, else the names come from module ``a``. Compiled modules and
    third-party packages are not nodes."""
    modules = _modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:
                        targets.add(f"{source}.{alias.name}")
                    elif source in modules:
                        targets.add(source)
        targets.discard(name)
        graph[name] = targets
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_level_imports():
    graph = import_graph()
    # generators hands over to the Dask backend only inside a function
    assert "cclust.dask" in graph["cclust.generators"]
    assert "cclust._spectral" in graph["cclust.dask._usenc"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_among_cclust_modules_counting_function_level_imports():
    found = cycles(import_graph())
    assert not found, "import cycles among cclust modules: " + "; ".join(" <-> ".join(c) for c in found)


def test_in_memory_modules_do_not_import_the_dask_package():
    # cclust.dask is imported only when asked for (a DaskEnsemble, backend="dask", a client, a
    # dask array given to select_k):
    # the modules that hand over to it do so inside a function, and nothing it shares with the
    # in-memory paths lives in it
    graph = import_graph()
    allowed = {"cclust.generators", "cclust.consensus_functions.kcc", "cclust.selection._select_k"}
    users = {m for m, targets in graph.items()
             if not m.startswith("cclust.dask") and any(t.startswith("cclust.dask") for t in targets)}
    assert users <= allowed, sorted(users - allowed)

FAMILIES_DIR = PACKAGE / "consensus_functions"

#: A family may run another registered method whole, as its documented start: NMF starts from
#: a K-means of the one-hot rows (KCC, Li, Ding & Jordan 2007) and the median partitions from
#: the KCC consensus. That uses the method's result, not a helper living in its module; any
#: other import of one family by another fails the test below.
RUNS_ANOTHER_METHOD = {("_median", "kcc"), ("nmf", "kcc"),
                       # the former module name of best_of, an alias that only re-exports it
                       ("selection", "best_of")}


def _family_imports(path):
    """Names of the consensus_functions modules that the module at ``path`` imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                names = [f"cclust.consensus_functions.{node.module or alias.name}" for alias in node.names]
            elif node.module == "cclust.consensus_functions":
                names = [f"cclust.consensus_functions.{alias.name}" for alias in node.names]
            else:
                names = [node.module or ""]
        else:
            continue
        for name in names:
            if name.startswith("cclust.consensus_functions."):
                found.add(name.split(".")[2])
    return found


def test_no_family_of_consensus_functions_imports_another():
    """Helpers that several families use live in shared modules (a leading underscore under
    consensus_functions, or validation, ensemble, graph, _linkage), never in one family's module."""
    families = {path.stem for path in FAMILIES_DIR.glob("*.py")
                if not path.stem.startswith("_")}
    assert {"voting", "ecpcs", "crowd_agreement", "link_based", "locally_weighted"} <= families
    offending = []
    for path in sorted(FAMILIES_DIR.glob("*.py")):
        for target in sorted(_family_imports(path) & families - {path.stem}):
            if (path.stem, target) not in RUNS_ANOTHER_METHOD:
                offending.append(f"{path.stem} imports {target}")
    assert offending == []


def test_the_import_reader_sees_imports_in_function_bodies(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from cclust.consensus_functions.voting import ivc\n"
                      "from cclust.consensus_functions import ecpcs\nfrom . import _starts\n")
    assert _family_imports(source) == {"voting", "ecpcs", "_starts"}


# -- rooms: size, the code map, private names ----------------------------------------------------

ROOT = PACKAGE.parent
PYTHON_LIMIT = 800  # lines of one module; docs/development.md names the longer ones and why

#: Private names one package still takes from a module of another package (importer, module,
#: name). Anything else a module needs from another package is public there, or lives in a
#: private module of its own (``cclust.graph._tcut.transfer_rows``), never behind an underscore.
PRIVATE_NAMES_ACROSS_PACKAGES = {
    ("cclust.dask._ensemble", "cclust.ensemble", "_check_provenance"),
    ("cclust.dask._ensemble", "cclust.ensemble", "_encode_column"),
    ("cclust.evaluation._indices", "cclust.metrics._criteria", "_features_and_codes"),
}


def _package_of(name, is_package):
    return name if is_package else name.rpartition(".")[0]


def private_names_across_packages():
    """(importer, module, name) of every ``from module import _name`` whose module lies in
    another package and whose ``_name`` is not itself a module."""
    import importlib.util

    modules = _modules()
    found = set()
    for name, (path, is_package) in modules.items():
        package = _package_of(name, is_package)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not source.startswith("cclust"):
                continue
            source_is_package = source in modules and modules[source][1] or source == "cclust._ext"
            if _package_of(source, source_is_package) == package:
                continue
            for alias in node.names:
                if not alias.name.startswith("_") or alias.name.startswith("__"):
                    continue
                dotted = f"{source}.{alias.name}"
                if dotted in modules or (source_is_package and importlib.util.find_spec(dotted) is not None):
                    continue  # a private module: internal to cclust, not to its package
                found.add((name, source, alias.name))
    return found


def test_no_module_takes_a_private_name_from_another_package():
    found = private_names_across_packages()
    assert found <= PRIVATE_NAMES_ACROSS_PACKAGES, sorted(found - PRIVATE_NAMES_ACROSS_PACKAGES)
    # the allowed list shrinks as the names move: an entry that no longer occurs is removed
    assert PRIVATE_NAMES_ACROSS_PACKAGES <= found, sorted(PRIVATE_NAMES_ACROSS_PACKAGES - found)


def test_the_private_name_reader_sees_function_level_imports():
    found = private_names_across_packages()
    assert ("cclust.evaluation._indices", "cclust.metrics._criteria", "_features_and_codes") in found
    assert not any(importer.startswith("cclust.selection") or source.startswith("cclust.selection")
                   for importer, source, _ in found)


def _guide():
    path = ROOT / "docs" / "development.md"
    if not path.exists():
        pytest.skip("no docs/development.md: cclust is installed from a wheel")
    return path.read_text(encoding="utf-8")


def test_no_python_module_over_the_limit_without_a_written_reason():
    guide = _guide()
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        relative = path.relative_to(PACKAGE).as_posix()
        if n > PYTHON_LIMIT and f"{relative} is longer" not in guide:
            too_long.append(f"{relative} ({n} lines)")
    assert not too_long, f"split these by concern or say in docs/development.md why not: {too_long}"


def test_the_code_map_names_every_module_and_nothing_else():
    """docs/development.md's "Where things are" block names every module and package of cclust
    (a package's private modules by name, e.g. ``_tcut``), and every entry it starts a line with
    exists."""
    block = _guide().split("## Where things are", 1)[1].split("```", 2)[1]
    named = set(re.findall(r"[A-Za-z_]\w*", block))
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if "_ext" in relative.parts or relative.name in ("__init__.py", "__main__.py"):
            continue
        if path.stem not in named:
            missing.append(relative.as_posix())
    for path in sorted(p for p in PACKAGE.iterdir() if (p / "__init__.py").exists()):
        if path.name not in named:
            missing.append(path.name + "/")
    assert not missing, f"docs/development.md's code map does not name: {missing}"
    entries = re.findall(r"^  ([A-Za-z_]\w*(?:\.py|/))", block, flags=re.MULTILINE)
    assert "graph/" in entries and "selection/" in entries
    gone = [e for e in entries if not (PACKAGE / e.rstrip("/")).exists()]
    assert not gone, f"docs/development.md's code map names what is not in cclust/: {gone}"
