"""Sphinx extension: the method catalogue, generated from cclust's live registry.

Three directives:

``.. cclust-registry-table::`` (option ``:kind:``, one of the registry's kinds)
    A table of every name ``cclust.available(kind=...)`` lists when the docs are built: name
    (linked to its catalogue entry), one-line description, provider, and a link to the API
    page of the registered object. Nothing in it is typed by hand, so it cannot go stale.

``.. cclust-method:: NAME`` (options ``:complexity:``, ``:plugin:``)
    One catalogue entry: a section titled with the registry name, the registry's description,
    kind, provider, the API link and (for consensus functions) what the function declares with
    ``cclust.base.declare``; then the hand-written prose given as the directive's content
    (the method in a few sentences and its paper). ``:plugin:`` names the distribution for an
    entry that documents a plugin, which may not be installed where the docs are built.

``.. cclust-command-help:: [SUBCOMMAND]``
    The ``--help`` text of the ``cclust`` command (or of one sub-command), taken from
    ``cclust.cli.build_parser()`` at build time, so the options shown are the real ones.

Consistency, checked once every page has been read (each problem is a Sphinx warning, so
``sphinx -W`` fails):

* every built-in name (provider ``cclust``) has a ``cclust-method`` entry;
* every entry names a registered name, or is marked ``:plugin:``;
* the object behind every built-in name has an API page (or, for objects that are not
  functions or classes, e.g. the KCC utilities, its module has one).
"""
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_refnode

logger = logging.getLogger(__name__)

KIND_TITLES = {
    "consensus": "consensus function",
    "utility": "KCC utility",
    "generator": "basic-partition generator",
    "metric": "metric",
}


def _registry():
    import cclust

    return cclust.available()


def _dotted(target):
    """``"pkg.mod:attr"`` -> ``("pkg.mod", "pkg.mod.attr")``."""
    module, _, attr = target.partition(":")
    return module, f"{module}.{attr}" if attr else module


def _entry_id(name):
    return "catalogue-" + nodes.make_id(name)


def _note_page(env):
    env.domaindata.setdefault("cclust_catalogue", {}).setdefault("pages", set()).add(env.docname)


class registry_table(nodes.General, nodes.Element):
    """Placeholder replaced by the table once every entry is known."""


class CatalogueEntry(SphinxDirective):
    required_arguments = 1
    has_content = True
    option_spec: ClassVar[dict] = {"complexity": directives.unchanged,
                                   "plugin": directives.unchanged}

    def run(self):
        name = self.arguments[0]
        row = _registry().get(name)
        declares = None
        if row is not None and row.kind == "consensus":
            declares = self._declares(name, row.provider)
            # Loading a plugin replaces its distribution summary by the object's own first
            # docstring line: read the row again so the entry and the table agree.
            row = _registry().get(name)
        node_id = _entry_id(name)
        section = nodes.section(ids=[node_id])
        section += nodes.title(name, "", nodes.literal(name, name))
        self.env.get_domain("std").note_hyperlink_target(node_id, self.env.docname, node_id, name)
        entries = self.env.domaindata.setdefault("cclust_catalogue", {}).setdefault("entries", {})
        _note_page(self.env)
        entries[name] = {"docname": self.env.docname, "id": node_id,
                         "plugin": self.options.get("plugin"), "lineno": self.lineno}

        fields = nodes.field_list()

        def field(label, *body):
            para = nodes.paragraph()
            para.extend(body)
            fields.append(nodes.field("", nodes.field_name(label, label), nodes.field_body("", para)))

        if row is not None:
            section += nodes.paragraph(row.description, row.description)
            field("Kind", nodes.Text(f"{KIND_TITLES.get(row.kind, row.kind)} ("),
                  nodes.literal(row.kind, row.kind), nodes.Text(")"))
            field("Provider", nodes.Text(row.provider if row.provider != "cclust"
                                         else "cclust (built in)"))
            module, dotted = _dotted(row.target)
            if row.provider == "cclust":
                ref = self._api_xref(dotted, module)
                field("API", ref)
            else:
                field("Object", nodes.literal(dotted, dotted))
            if declares is not None:
                field("Declares", nodes.Text(declares))
        else:
            from cclust.registry import KNOWN_PLUGINS, install_hint

            plugin = self.options.get("plugin")
            how = (install_hint(name) if name in KNOWN_PLUGINS and KNOWN_PLUGINS[name][0] == plugin
                   else "install it")
            text = (f"Provided by the plugin distribution {plugin}, which is not installed where "
                    f"these pages were built: {how} to use this name."
                    if plugin else "Not registered in this build.")
            section += nodes.paragraph(text, text)
        if "complexity" in self.options:
            # inline markup (``code``, roles) is allowed in the option, as in body text
            cost, messages = self.state.inline_text(" ".join(self.options["complexity"].split()),
                                                    self.lineno)
            field("Cost", *cost)
            section.extend(messages)
        if len(fields):
            section += fields
        if self.content:
            container = nodes.container()
            self.state.nested_parse(self.content, self.content_offset, container)
            section.extend(container.children)
        return [section]

    def _api_xref(self, dotted, module):
        from sphinx.addnodes import pending_xref

        ref = pending_xref("", refdomain="py", reftype="obj", reftarget=dotted,
                           refexplicit=True, refwarn=False)
        ref["py:module"] = None
        ref["py:class"] = None
        ref += nodes.literal(dotted, dotted, classes=["xref", "py", "py-obj"])
        return ref

    @staticmethod
    def _declares(name, provider):
        import cclust
        from cclust.registry import method_info

        try:
            fn = cclust.get(name)
        except ImportError as exc:
            if provider == "cclust":
                raise  # a built-in that does not import is a real failure of this build
            # A plugin whose own dependency is missing here: say so on the page, not as a
            # build failure, since its distribution is not part of cclust.
            return f"not loadable where these pages were built ({exc})."
        info = method_info(fn)
        parts = [
            "needs the features (X=)" if info.requires_X else "works from the ensemble alone",
            "can choose the number of clusters (n_clusters=None)" if info.chooses_n_clusters
            else "needs n_clusters",
            "accepts missing labels (-1)" if info.handles_missing else "refuses missing labels",
        ]
        order = getattr(info, "object_order", None)
        if order == "exact":
            parts.append("permuting the objects only permutes the labels")
        elif order == "distribution":
            parts.append("the result depends on the order of the objects in distribution only")
        return "; ".join(parts) + "."


class RegistryTable(SphinxDirective):
    required_arguments = 0
    option_spec: ClassVar[dict] = {"kind": directives.unchanged_required}

    def run(self):
        kind = self.options.get("kind")
        import cclust.registry

        if kind not in cclust.registry.KINDS:
            raise self.error(f":kind: must be one of {sorted(cclust.registry.KINDS)}, got {kind!r}")
        _note_page(self.env)
        node = registry_table()
        node["kind"] = kind
        return [node]


class CommandHelp(SphinxDirective):
    optional_arguments = 1

    def run(self):
        import argparse
        import os

        from cclust.cli import build_parser

        parser = build_parser()
        if self.arguments:
            name = self.arguments[0]
            commands = {}
            for action in parser._actions:  # argparse keeps sub-parsers only here
                if isinstance(action, argparse._SubParsersAction):
                    commands.update(action.choices)
            if name not in commands:
                raise self.error(f"cclust has no sub-command {name!r}; it has {sorted(commands)}")
            parser = commands[name]
        # argparse wraps to the terminal width; fix it so the page does not depend on where
        # the docs were built.
        saved = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "92"
        try:
            text = parser.format_help()
        finally:
            if saved is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = saved
        _note_page(self.env)
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def _purge(app, env, docname):
    data = env.domaindata.get("cclust_catalogue", {})
    entries = data.get("entries", {})
    for name in [n for n, e in entries.items() if e["docname"] == docname]:
        del entries[name]
    data.get("pages", set()).discard(docname)


def _merge(app, env, docnames, other):
    mine = env.domaindata.setdefault("cclust_catalogue", {}).setdefault("entries", {})
    theirs = other.domaindata.get("cclust_catalogue", {}).get("entries", {})
    mine.update({n: e for n, e in theirs.items() if e["docname"] in docnames})
    pages = env.domaindata["cclust_catalogue"].setdefault("pages", set())
    pages.update(d for d in other.domaindata.get("cclust_catalogue", {}).get("pages", ()) if d in docnames)


def _api_entry(env, dotted, module):
    """(docname, node id) of the API description of ``dotted``, else of its module, else None."""
    objects = env.get_domain("py").objects
    for key in (dotted, module):
        entry = objects.get(key)
        if entry is not None:
            return entry.docname, entry.node_id
    return None


def _always_reread(app, env, added, changed, removed):
    # The registry (installed plugins) and the command's options live outside the docs
    # sources: re-read every page that shows them on each build, never serve a stale copy.
    data = env.domaindata.get("cclust_catalogue", {})
    return sorted(set(data.get("pages", ())) - set(removed))


def _check(app, env):
    entries = env.domaindata.get("cclust_catalogue", {}).get("entries", {})
    rows = _registry()
    for name, row in rows.items():
        if row.provider == "cclust" and name not in entries:
            logger.warning("cclust catalogue: the built-in %r (%s) has no '.. cclust-method:: %s' "
                           "entry in docs/methods/; add one with its paper.", name, row.kind, name)
        if row.provider == "cclust":
            module, dotted = _dotted(row.target)
            if _api_entry(env, dotted, module) is None:
                logger.warning("cclust catalogue: %r points to %s, which has no API page; add its "
                               "module to docs/api/index.rst.", name, dotted)
    for name, entry in entries.items():
        if name not in rows and not entry["plugin"]:
            logger.warning("cclust catalogue: entry %r names nothing in the registry; remove it or "
                           "mark it ':plugin: <distribution>'.", name,
                           location=(entry["docname"], entry["lineno"]))


def _fill_tables(app, doctree, fromdocname):
    env = app.env
    entries = env.domaindata.get("cclust_catalogue", {}).get("entries", {})
    for node in list(doctree.findall(registry_table)):
        rows = [r for r in _registry().values() if r.kind == node["kind"]]
        table = nodes.table(classes=["cclust-registry"])
        group = nodes.tgroup(cols=4)
        table += group
        for width in (14, 52, 14, 20):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        body = nodes.tbody()
        group += body

        def row_of(*cells):
            tr = nodes.row()
            for cell in cells:
                entry = nodes.entry()
                para = nodes.paragraph()
                para += cell
                entry += para
                tr += entry
            return tr

        head += row_of(*(nodes.Text(t) for t in ("name", "what it is", "provider", "API")))
        for row in rows:
            name_node = nodes.literal(row.name, row.name)
            entry = entries.get(row.name)
            if entry is not None:
                name_node = make_refnode(app.builder, fromdocname, entry["docname"], entry["id"],
                                         name_node, row.name)
            module, dotted = _dotted(row.target)
            api = _api_entry(env, dotted, module) if row.provider == "cclust" else None
            api_node = nodes.literal(dotted, dotted)
            if api is not None:
                api_node = make_refnode(app.builder, fromdocname, api[0], api[1], api_node, dotted)
            body += row_of(name_node, nodes.Text(row.description), nodes.Text(row.provider), api_node)
        node.replace_self(table)


def setup(app):
    app.add_node(registry_table)
    app.add_directive("cclust-method", CatalogueEntry)
    app.add_directive("cclust-registry-table", RegistryTable)
    app.add_directive("cclust-command-help", CommandHelp)
    app.connect("env-get-outdated", _always_reread)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check)
    app.connect("doctree-resolved", _fill_tables)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
