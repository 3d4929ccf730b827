"""How cclust's modules may import each other, read from the source (every ``import`` and
``from ... import`` statement at any depth, function bodies included)."""
import ast
import pathlib

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
    # cclust.dask is imported only when asked for (a DaskEnsemble, backend="dask", a client):
    # the modules that hand over to it do so inside a function, and nothing it shares with the
    # in-memory paths lives in it
    graph = import_graph()
    allowed = {"cclust.generators", "cclust.consensus_functions.kcc"}
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
