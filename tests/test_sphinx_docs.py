"""The Sphinx documentation builds without warnings, and the examples on its pages run.

This is CI's documentation build: `.ci/run` runs the README's test command, and this module
builds the docs as README's docs command does, from what the ``docs`` extra installs.

The build is the real one (``python -m sphinx -W --keep-going -b html``) on a copy of docs/,
so the test never writes into the source tree. Sphinx, numpydoc and myst-parser come with the
``docs`` extra, which the ``test`` extra includes: a missing one fails here, it is not skipped.
The build runs as it would where only the ``docs`` extra is installed: the packages that come
with the other extras cannot be imported by it (CI also builds from a ``.[docs]``-only venv).
It leaves out two things the pages' content cannot break, a quarter of its time: the search
index (stemming every word of 470 pages) and the sidebars (the whole table of contents on each).
"""
import doctest
import html
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cclust

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GUIDE_PAGES = sorted((DOCS / "guide").glob("*.rst"))

# One worker builds the docs for all of this module's tests under pytest-xdist (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("sphinx-build")


# What the test and feature extras install and the docs extra does not: the documentation build
# must not need any of it. These are named here; _test_only_modules adds every module of every
# distribution the installed cclust's test extra asks for, so a new test dependency is hidden too.
NOT_IN_DOCS_EXTRA = ("hypothesis", "pytest", "sklearn", "pandas", "matplotlib", "tqdm", "dask",
                     "distributed")


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _test_only_modules():
    """NOT_IN_DOCS_EXTRA and the top-level modules of the distributions that cclust's ``test``
    extra asks for (directly, or through the extras of cclust it names) and that neither the
    ``docs`` extra nor cclust itself requires: the build below runs as from a ``.[docs]``
    install, which is what README's docs command makes."""
    from importlib import metadata

    from packaging.requirements import Requirement

    try:
        requirements = [Requirement(line) for line in metadata.requires("cclust") or []]
    except metadata.PackageNotFoundError:   # built in place and never installed: the names above
        return NOT_IN_DOCS_EXTRA

    def asked(extra, seen):
        names = set()
        for requirement in requirements:
            if requirement.marker is None or not requirement.marker.evaluate({"extra": extra}):
                continue
            if _canonical(requirement.name) == "cclust":
                for inner in set(requirement.extras) - seen:
                    names |= asked(inner, seen | {inner})
            else:
                names.add(_canonical(requirement.name))
        return names

    core = {_canonical(r.name) for r in requirements if r.marker is None}
    test_only = asked("test", {"test"}) - asked("docs", {"docs"}) - core
    modules = {module for module, distributions in metadata.packages_distributions().items()
               if module.isidentifier() and {_canonical(d) for d in distributions} & test_only}
    return tuple(sorted(modules | set(NOT_IN_DOCS_EXTRA)))
# `python -m sphinx`, with some packages made unimportable, as if they were not installed (and
# without the search index and sidebars: see the module docstring).
_SPHINX_WITHOUT = """\
import sys
for name in sys.argv[1].split(","):
    if name:
        sys.modules[name] = None
from sphinx.builders.html import StandaloneHTMLBuilder
StandaloneHTMLBuilder.search = False
# Sphinx 9 reads a page's sidebars through _get_sidebars; earlier versions through add_sidebars
StandaloneHTMLBuilder._get_sidebars = lambda self, pagename, /: ()
StandaloneHTMLBuilder.add_sidebars = lambda self, pagename, ctx: ctx.__setitem__("sidebars", [])
from sphinx.cmd.build import main
sys.exit(main(sys.argv[2:]))
"""


def _sphinx(source, out, *extra, without=()):
    # The build must document the cclust this test imported (installed, or built in place),
    # not whatever a working directory on sys.path would shadow it with.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(cclust.__file__).resolve().parents[1])]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return subprocess.run(
        [sys.executable, "-c", _SPHINX_WITHOUT, ",".join(without),
         "-W", "--keep-going", "-b", "html", "-q", *extra, str(source), str(out)],
        capture_output=True, text=True, cwd=str(Path(out).parent), env=env, timeout=900,
        check=False,
    )


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    """Build a copy of docs/ once for the module; return the HTML directory."""
    tmp = tmp_path_factory.mktemp("sphinx")
    source = tmp / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build", "generated", "__pycache__"))
    out = tmp / "html"
    proc = _sphinx(source, out, "-d", str(tmp / "doctrees"), without=_test_only_modules())
    assert proc.returncode == 0, (
        f"sphinx -W failed with status {proc.returncode}:\n{proc.stderr[-6000:]}\n{proc.stdout[-2000:]}"
    )
    # Warnings are errors (-W), so any warning text left over is a problem too.
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-6000:]
    return out


def _text(path):
    return path.read_text(encoding="utf-8")


def _plain(path):
    """A page's visible text: tags dropped, entities and Sphinx's smart quotes undone,
    whitespace collapsed (so phrases wrapped across lines or split by markup still match)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", _text(path)))
    for fancy, plain in (("\u201c", '"'), ("\u201d", '"'), ("\u2018", "'"), ("\u2019", "'"),
                         ("\u2013", "--"), ("\u2014", "---")):
        text = text.replace(fancy, plain)
    return " ".join(text.split())


def test_key_pages_exist(built_docs):
    for page in ("index.html", "guide/quickstart.html", "guide/choosing_k.html",
                 "guide/estimator.html", "guide/command_line.html", "methods/consensus.html",
                 "methods/references.html", "api/index.html", "plugins.html",
                 "benchmarks.html", "reproduction.html"):
        assert (built_docs / page).is_file(), page
    index = _plain(built_docs / "index.html")
    assert "python -m sphinx -W -b html docs docs/_build/html" in index


def test_the_build_leaves_out_the_search_index_and_the_sidebars(built_docs):
    """What the module docstring says the build skips is skipped: under Sphinx 9 the sidebars
    came back unnoticed (it stopped calling add_sidebars), a tenth of the build's time."""
    assert not (built_docs / "searchindex.js").exists()
    for page in ("index.html", "api/index.html", "guide/quickstart.html"):
        assert 'class="sphinxsidebar"' not in _text(built_docs / page), page


def test_api_page_of_the_estimator(built_docs):
    page = built_docs / "api" / "generated" / "cclust.estimator.ConsensusClustering.html"
    assert page.is_file()
    source = _text(page)
    # numpydoc rendered the sections and autodoc the methods.
    assert 'id="cclust.estimator.ConsensusClustering"' in source
    assert 'id="cclust.estimator.ConsensusClustering.fit_predict"' in source
    text = _plain(page)
    assert "Parameters:" in text and "Attributes:" in text and "n_partitions" in text


def test_catalogue_lists_every_registered_name(built_docs):
    pages = {kind: _text(built_docs / "methods" / f"{page}.html") for kind, page in
             (("consensus", "consensus"), ("utility", "utilities"),
              ("generator", "generators"), ("metric", "metrics"))}
    texts = {kind: _plain(built_docs / "methods" / f"{page}.html") for kind, page in
             (("consensus", "consensus"), ("utility", "utilities"),
              ("generator", "generators"), ("metric", "metrics"))}
    # The build loads every consensus function (to show what it declares), and a loaded
    # plugin's description becomes its docstring's first line: load them here too.
    for name in cclust.available(kind="consensus"):
        cclust.get(name)
    for name, row in cclust.available().items():
        page = pages[row.kind]
        # the generated table row links the name to its entry ...
        assert f'href="#catalogue-{name}"' in page, name
        # ... and the entry exists, with the registry's own description.
        assert f'id="catalogue-{name}"' in page, name
        assert " ".join(row.description.split()) in texts[row.kind], (name, row.description)
    consensus = pages["consensus"]
    for name in ("kcc", "wosp"):
        assert 'href="../api/generated/cclust.consensus_functions.' in consensus
        assert f'id="catalogue-{name}"' in consensus
    # every paper is cited in full on the references page
    refs = _plain(built_docs / "methods" / "references.html")
    for needle in ("Greedy optimization for K-means-based consensus clustering",
                   "K-means-based consensus clustering: a unified view",
                   "Least squares consensus clustering",
                   "Weighted-object ensemble clustering",
                   "Consensus clusterings"):
        assert needle in refs, needle


def test_command_help_is_generated(built_docs):
    text = _plain(built_docs / "guide" / "command_line.html")
    from cclust.cli import build_parser

    # the page shows the parser's own help, whatever options it has today
    for line in build_parser().format_help().splitlines():
        if line.strip().startswith("usage:"):
            assert "usage: cclust" in text
    for option in ("--partitions", "--k-range", "--method", "--out"):
        assert option in text, option


def _public_modules():
    names = []
    for info in pkgutil.walk_packages(cclust.__path__, "cclust."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def test_api_reference_names_every_public_module():
    listed = set(re.findall(r"^\s+(cclust(?:\.\w+)+)\s*$", _text(DOCS / "api" / "index.rst"), re.MULTILINE))
    missing = sorted(set(_public_modules()) - listed)
    assert not missing, f"add these modules to docs/api/index.rst: {missing}"


@pytest.mark.parametrize("page", GUIDE_PAGES, ids=lambda p: p.name)
def test_guide_examples_run(page):
    result = doctest.testfile(str(page), module_relative=False, verbose=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_guide_has_examples():
    # the pages promise that their examples are tested: there must be some to test
    counts = {p.name: _text(p).count(">>> ") for p in GUIDE_PAGES}
    assert sum(counts.values()) > 40, counts
    assert counts["quickstart.rst"] > 5


def test_catalogue_check_fails_on_a_missing_or_stale_entry(tmp_path):
    """The build-time consistency check really fires: a catalogue without entries fails -W."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(DOCS / "_ext")!r})
        extensions = ["cclust_catalogue"]
        exclude_patterns = ["_build"]
    """))
    (source / "index.rst").write_text(textwrap.dedent("""
        Catalogue
        =========

        .. cclust-registry-table::
           :kind: metric

        .. cclust-method:: ari

        .. cclust-method:: no-such-method
    """))
    proc = _sphinx(source, tmp_path / "html")
    assert proc.returncode != 0
    err = proc.stderr
    # a built-in without an entry
    assert "the built-in 'kcc' (consensus) has no '.. cclust-method:: kcc' entry" in err
    # an entry for a name nobody registers
    assert "entry 'no-such-method' names nothing in the registry" in err
    # an API page missing for a registered object
    assert "points to cclust.metrics.ari, which has no API page" in err
    # the entry that does exist is not reported
    assert "'ari' (metric) has no" not in err


def test_numpydoc_template_is_compiled_once(monkeypatch):
    """docs/_ext/numpydoc_template_once.py: every docstring gets the same compiled template."""
    from numpydoc import docscrape_sphinx

    monkeypatch.syspath_prepend(str(DOCS / "_ext"))
    # undone after the test: the extension replaces numpydoc's environment class for the process
    monkeypatch.setattr(docscrape_sphinx, "SandboxedEnvironment", docscrape_sphinx.SandboxedEnvironment)
    import numpydoc_template_once

    class App:
        def connect(self, event, callback):
            self.callback = callback

    plain = [str(docscrape_sphinx.get_doc_object(obj, config={})) for obj in (cclust.consensus, cclust.generate)]
    app = App()
    numpydoc_template_once.setup(app)
    templates = []
    for obj, want in zip((cclust.consensus, cclust.generate), plain):
        config = {}
        assert str(docscrape_sphinx.get_doc_object(obj, config=config)) == want   # the same text
        templates.append(config["template"])
    assert templates[0] is templates[1]
    app.callback(app)   # a new build compiles it anew
    config = {}
    docscrape_sphinx.get_doc_object(cclust.consensus, config=config)
    assert config["template"] is not templates[0]
