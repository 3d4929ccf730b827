"""The C++ sources of the compiled cores: every one is built into a module, and none outgrows a
file one can own (docs/development.md names the exceptions and why)."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXT = ROOT / "cclust" / "_ext"
LIMIT = 1000  # lines

pytestmark = pytest.mark.skipif(
    not (ROOT / "setup.py").exists() or not (EXT / "src").is_dir(),
    reason="no source tree: cclust is installed from a wheel, which carries no C++ sources",
)


def modules():
    """setup.py's MODULES: extension module name -> the C++ sources it compiles."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "MODULES" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no MODULES table")


def test_every_source_is_compiled_into_one_module():
    listed = [src for sources in modules().values() for src in sources]
    on_disk = sorted(p.name for p in (EXT / "src").glob("*.cpp"))
    assert sorted(listed) == on_disk
    assert len(listed) == len(set(listed)), "a source compiled into two modules"


def test_kmeans_module_is_one_extension_of_several_sources():
    sources = modules()["_kmeans"]
    assert len(sources) > 1
    assert "kmeans_internal.hpp" in {p.name for p in (EXT / "include" / "cclust").glob("*.hpp")}


def test_no_cpp_file_over_the_limit_without_a_written_reason():
    guide = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    files = sorted((EXT / "src").glob("*.cpp")) + sorted((EXT / "include" / "cclust").glob("*.hpp"))
    too_long = [
        f"{p.name} ({n} lines)"
        for p in files
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LIMIT and f"{p.name} is longer" not in guide
    ]
    assert not too_long, f"split these by concern or say in docs/development.md why not: {too_long}"
