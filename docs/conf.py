"""Sphinx configuration for the cclust documentation.

Build (from the repository root)::

    python -m sphinx -W -b html docs docs/_build/html

Everything that can go stale is generated at build time: the API pages come from the
docstrings (autosummary writes ``api/generated/``, which is not committed) and the method
catalogue's tables and entries come from the live registry (``_ext/cclust_catalogue.py``).
No extension here touches the network.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The catalogue extension lives next to this file; cclust itself must be importable (installed
# or built in place), because the API reference and the catalogue are read from the package.
sys.path.insert(0, str(HERE / "_ext"))

import cclust  # after the path set-up above

project = "cclust"
author = "The cclust developers"
copyright = "the cclust developers"
release = cclust.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "cclust_catalogue",
    "numpydoc_template_once",  # build speed only: numpydoc's template compiled once (_ext/)
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# -- API reference ---------------------------------------------------------------------------
autosummary_generate = True  # stubs are written on every build into api/generated/
autosummary_imported_members = False  # each object is documented once, in its home module
autosummary_ignore_module_all = False  # a module's __all__, where it has one, is its public API
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc sections carry the types

# numpydoc lists class members itself unless told not to; the autosummary class template does
# that job (one page per class with its methods), so numpydoc's own list would duplicate it.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- Markdown pages (plugins.md, benchmarks.md, reproduction.md, development.md) --------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# No intersphinx: the build runs offline in CI.

# -- HTML --------------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"cclust {release}"
html_static_path = []
html_theme_options = {
    "description": "Consensus clustering for Python",
    "fixed_sidebar": False,
    "show_relbars": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
