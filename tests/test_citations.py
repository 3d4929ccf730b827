"""Users see papers cited by author and year, never by the project's internal file numbers.

The papers cclust is built from are kept, for the developers, as files numbered 000 to 004;
users do not have those files, so "004 Alg. 1" or "(Li & Liu 2018; 000)" means nothing to them.
These tests scan everything a user reads -- registry descriptions, the objective names results
report, the help of every ``cclust`` sub-command and its ``methods`` listing, the docstrings of
every module, function and class of cclust and of the bundled plugins, the docs, the README, the
benchmark scripts whose output the docs quote, and the source files the API pages are built
from -- and list every hit with where it is and the text around it. They also check that every
author-year citation of a description or docstring has its full entry on the references page.
"""
import importlib
import inspect
import pkgutil
import re
import unicodedata
import warnings
from pathlib import Path

import numpy as np
import pytest

import cclust
from cclust.errors import ConvergenceWarning
from cclust.registry import KINDS, method_info

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = ROOT / "docs" / "methods" / "references.rst"

# A paper file number: 000-004 standing alone, not part of a number ("0.001", "10,000",
# "10 000", "1e-004"), a word or a file name ("kcc_001.md", "run-002").
PAPER_CODE = re.compile(r"(?<![\w.,/\\-])(?<!\d )00[0-4](?!\w)")

# Plugins shipped in this repository; their docstrings are checked like cclust's own.
PLUGIN_PACKAGES = ("cclust_example", "cclust_hypergraph")


def paper_codes(text, where):
    """One line per paper code in ``text``: where it is and the text around it."""
    hits = []
    for lineno, line in enumerate((text or "").splitlines(), 1):
        for match in PAPER_CODE.finditer(line):
            start = max(0, match.start() - 60)
            snippet = line[start:match.end() + 60].strip()
            hits.append(f"{where}, line {lineno}: ...{snippet}...")
    return hits


def report(hits, what):
    return (f"{len(hits)} paper file number(s) in {what}; cite the paper by author and year instead "
            "(e.g. 'Nguyen & Caruana 2007, Algorithm 1'; full list on docs/methods/references.rst):\n  "
            + "\n  ".join(hits))


def _import_modules(package_names):
    """(name, module) of every importable module of the given packages, walking subpackages."""
    modules = []
    for top in package_names:
        try:
            package = importlib.import_module(top)
        except ImportError:
            continue
        modules.append((top, package))
        for info in pkgutil.walk_packages(getattr(package, "__path__", []), top + "."):
            try:
                modules.append((info.name, importlib.import_module(info.name)))
            except ImportError as exc:  # an optional dependency that is not installed
                if (exc.name or "").split(".")[0] in ("cclust",) + PLUGIN_PACKAGES:
                    raise
    return modules


def _docstrings():
    """(where, docstring) of every module, and of every function, class, method and property a
    module defines, across cclust and the bundled plugins."""
    prefixes = ("cclust",) + PLUGIN_PACKAGES
    seen = set()
    out = []
    for mod_name, module in _import_modules(("cclust",) + PLUGIN_PACKAGES):
        out.append((f"module {mod_name}", module.__doc__))
        for name, obj in vars(module).items():
            if not getattr(obj, "__module__", None) or not str(obj.__module__).startswith(prefixes):
                continue
            if id(obj) in seen or not (inspect.isroutine(obj) or inspect.isclass(obj)
                                       or hasattr(obj, "__doc__")):
                continue
            seen.add(id(obj))
            qual = f"{obj.__module__}.{getattr(obj, '__qualname__', name)}"
            out.append((qual, getattr(obj, "__doc__", None)))
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("__") and attr != "__init__":
                        continue
                    doc = getattr(member, "__doc__", None)
                    if isinstance(member, (staticmethod, classmethod)):
                        doc = member.__func__.__doc__
                    if isinstance(doc, str) and doc is not type(member).__doc__:
                        out.append((f"{qual}.{attr}", doc))
    # Consensus functions, generators, metrics and utilities as the registry hands them out
    # (plugins included).
    for kind in KINDS:
        for name in cclust.available(kind=kind):
            try:
                obj = cclust.get(name, kind=kind)
            except ImportError:  # a plugin whose optional dependency is missing
                continue
            out.append((f"{kind} {name!r} (registry object)", getattr(obj, "__doc__", None)))
            out.append((f"{kind} {name!r} (registry object description)", getattr(obj, "description", None)))
    return [(where, doc) for where, doc in out if isinstance(doc, str)]


# -- registry descriptions -------------------------------------------------------------------


def test_registry_descriptions_cite_by_author_year():
    hits = []
    for kind in KINDS:
        entries = cclust.available(kind=kind)
        for name in entries:
            hits += paper_codes(entries[name].description, f"description of {kind} {name!r}")
    assert not hits, report(hits, "registry descriptions (cclust methods, cclust.available())")


# -- objective names -------------------------------------------------------------------------


def _tiny_ensemble():
    from cclust.datasets import load_iris

    X, _ = load_iris()
    X = np.asarray(X, dtype=float)[::3]  # 50 objects, all three classes
    return X, cclust.generate("kmeans", X, 3, n_partitions=8, random_state=0)


@pytest.mark.parametrize("name", sorted(cclust.available(kind="consensus")))
def test_objective_name_cites_by_author_year(name):
    X, ensemble = _tiny_ensemble()
    try:
        fn = cclust.get(name, kind="consensus")
    except ImportError as exc:
        pytest.skip(f"{name} needs a dependency that is not installed: {exc}")
    kwargs = {"X": X} if method_info(fn).requires_X else {}
    if name == "symdiff-median":  # an exact integer program, refused above 40 objects: seconds at 30, not at 13
        X, ensemble = X[::4], ensemble.take(np.arange(0, 50, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = fn(ensemble, 3, random_state=0, **kwargs)
    hits = paper_codes(result.objective_name, f"objective_name of {name!r}")
    assert not hits, report(hits, "objective names")


# -- the command line ------------------------------------------------------------------------


def _subparsers(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_cli_help_and_listings_cite_by_author_year(capsys):
    from cclust.cli import build_parser, main

    parser = build_parser()
    hits = paper_codes(parser.format_help(), "cclust --help")
    commands = _subparsers(parser)
    assert {"run", "fuse", "methods"} <= set(commands)
    for command, sub in commands.items():
        hits += paper_codes(sub.format_help(), f"cclust {command} --help")
    for argv in (["methods"], ["show-config"]):
        capsys.readouterr()
        assert main(argv) == 0
        out = capsys.readouterr()
        hits += paper_codes(out.out + out.err, f"output of cclust {' '.join(argv)}")
    assert not hits, report(hits, "the cclust command's help and listings")


# -- docstrings ------------------------------------------------------------------------------


def test_docstrings_cite_by_author_year():
    hits = []
    for where, doc in _docstrings():
        hits += paper_codes(doc, f"docstring of {where}")
    assert not hits, report(hits, "docstrings (the API pages are built from them)")


# -- text files ------------------------------------------------------------------------------

TEXT_SUFFIXES = {".md", ".rst", ".txt", ".py", ".pyx", ".pxd", ".hpp", ".h", ".cpp", ".toml", ".cfg"}


def _user_text_files():
    """README, docs, benchmark scripts (the docs quote their output) and the sources of cclust
    and the bundled plugins (docstrings and comments of the pages built from them)."""
    files = [ROOT / "README.md"]
    roots = [ROOT / "docs", ROOT / "benchmarks", ROOT / "cclust", ROOT / "plugins"]
    for root in roots:
        for path in sorted(root.rglob("*")):
            parts = set(path.relative_to(ROOT).parts)
            if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
                continue
            if parts & {"_build", "build", "__pycache__", ".pytest_cache"} or any(
                    p.endswith(".egg-info") for p in parts):
                continue
            files.append(path)
    return files


def test_docs_readme_and_sources_cite_by_author_year():
    hits = []
    for path in _user_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".cpp" and "Generated by Cython" in text[:300]:
            continue  # regenerated from the .pyx, which is scanned
        hits += paper_codes(text, str(path.relative_to(ROOT)))
    assert not hits, report(hits, "README.md, docs/, benchmarks/ and the sources of cclust and plugins/")


def test_scanner_finds_the_code_forms_and_only_them():
    leaks = ["(002 eq. 3)", "004 Alg. 1", "(Li & Liu 2018; 000)", "001 Tables 4-5", "paper 003",
             "Paper **004**.", "as 001 does", "000's Algorithm 1", "| 003 MCLA |", "{001,authors}"]
    for text in leaks:
        assert paper_codes(text, "x"), text
    numbers = ["0.001", "10,000 objects", "2,000 x 8,000", "1e-004", "10 000", "kcc_001.md",
               "run-002", "0x004", "1000", "n = 1004", "tol=0.0001"]
    for text in numbers:
        assert not paper_codes(text, "x"), text


# -- the references page ---------------------------------------------------------------------

# "Li & Liu 2018", "Ren et al. (2017", "Strehl & Ghosh, JMLR 3, 2002", "Topchy, Jain & Punch, SDM
# 2004", "Nguyen & Caruana's (2007)", "Senbabaoglu et al. 2014", "Mirkin 1980".
NAME = r"(?:(?:van|de) )?[A-Z][a-z\u00c0-\u024f]+(?:-[A-Z][a-z\u00c0-\u024f]+)?"
CITATION = re.compile(
    rf"\b({NAME}(?:(?:,? {NAME})*,? (?:&|and) {NAME}| et al\.)?)(?:'s)?"
    r",? \(?(?:[A-Z]{2,6}(?: \d+)?,? )?((?:19[5-9]|20[0-4])\d)\b")
NOT_NAMES = {"In", "Since", "As", "See", "From", "Until", "Before", "After", "The", "And", "Of", "Table",
             "Tables", "Figure", "Algorithm", "Python", "NumPy", "Version"}


def _fold(text):
    """Lower case without accents, so that 'Senbabaoglu' matches 'Şenbabaoğlu'."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def _reference_entries():
    text = REFERENCES.read_text(encoding="utf-8")
    entries = re.split(r"\n(?=\.\. \[)", text)
    return [_fold(" ".join(e.split())) for e in entries if e.startswith(".. [")]


def test_every_cited_author_year_has_a_reference_entry():
    entries = _reference_entries()
    assert len(entries) >= 6
    texts = [(f"description of {kind} {name!r}", cclust.available(kind=kind)[name].description)
             for kind in KINDS for name in cclust.available(kind=kind)]
    texts += [(f"docstring of {where}", doc) for where, doc in _docstrings()]
    missing = {}
    for where, text in texts:
        for match in CITATION.finditer(" ".join((text or "").split())):
            authors, year = match.group(1), match.group(2)
            names = [n for n in re.findall(NAME, authors) if n not in NOT_NAMES]
            if not names:
                continue
            if not any(_fold(n) in entry and year in entry for n in names for entry in entries):
                missing.setdefault(f"{authors} {year}", []).append(where)
    assert not missing, (
        "author-year citations without an entry (authors and year) on docs/methods/references.rst:\n  "
        + "\n  ".join(f"{cite}: {', '.join(sorted(set(where))[:5])}" for cite, where in sorted(missing.items())))


def test_references_page_gives_author_year_not_file_numbers():
    text = REFERENCES.read_text(encoding="utf-8")
    assert not paper_codes(text, "references"), report(paper_codes(text, "references.rst"), "the references page")
    for cite in ("Li & Liu 2018", "Wu et al. 2015", "Ren et al. 2017", "Nguyen & Caruana 2007",
                 "Mirkin & Shestakov", "Becerra Tom"):
        assert cite in " ".join(text.split()), cite


def test_context_of_a_hit_names_the_place_and_text():
    hits = paper_codes("first line\nKCC under every utility (001 Tables 4-5)", "cclust run --help")
    assert hits == ["cclust run --help, line 2: ...KCC under every utility (001 Tables 4-5)..."]
    message = report(hits, "help")
    assert "cclust run --help, line 2" in message and "author and year" in message
