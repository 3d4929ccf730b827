"""How cclust's modules may import each other, read from the source (every ``import`` and
``from ... import`` statement at any depth, function bodies included)."""
import ast
import pathlib

import cclust

PACKAGE = pathlib.Path(cclust.__file__).parent
FAMILIES_DIR = PACKAGE / "consensus_functions"

#: A family may run another registered method whole, as its documented start: NMF starts from
#: a K-means of the one-hot rows (KCC, Li, Ding & Jordan 2007) and the median partitions from
#: the KCC consensus. That uses the method's result, not a helper living in its module; any
#: other import of one family by another fails the test below.
RUNS_ANOTHER_METHOD = {("median", "kcc"), ("nmf", "kcc")}


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
