"""The registry: every consensus function, KCC utility, generator and metric, found by name.

Contract
--------
* Names are unique across kinds, lower-case, and the literature's own (``kcc``, ``wosp``).
  ``get(name)`` needs no kind; ``kind=`` filters or asserts. A name that differs from exactly
  one registered name only in case (``"KCC"``) finds it; one that matches several that way,
  or none, is unknown and the message suggests the closest names.
* Four kinds, each with an entry-point group a third-party distribution declares in its
  ``pyproject.toml``::

      consensus  -> cclust.consensus       fn(ensemble, n_clusters, *, random_state=None, **params)
                                           -> ConsensusResult
      utility    -> cclust.utilities       a cclust.base.Utility
      generator  -> cclust.generators      fn(X, n_clusters, *, n_partitions, random_state, n_jobs,
                                              **params) -> Ensemble
      metric     -> cclust.metrics         fn(labels_a, labels_b_or_ensemble, ...) -> float

* Built-ins are declared in one table of dotted strings (``cclust._builtins``) that is read by
  the same code as entry points: one door for everyone, with the provider recorded.
* Nothing is imported until its name is asked for. ``available()`` lists names, kinds,
  one-line descriptions and providers without importing any of them.
* A name claimed twice is never silently resolved: a plugin claiming a built-in's name is
  ignored with a warning; two plugins claiming one name make that name an error until one is
  uninstalled or ``register(..., replace=True)`` settles it.
* A target that fails to import fails only when its own name is asked for, with a
  ``PluginLoadError`` naming the plugin and its distribution; an object that breaks its kind's
  contract raises ``ContractError`` at load time.
"""
from __future__ import annotations

import difflib
import html
import importlib
import re
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, TypeVar, overload

from cclust.base import (  # noqa: F401  (re-exported: they lived here before cclust.base)
    KINDS, OBJECT_ORDERS, MethodInfo, accepts, check_contract, declare, method_info)
from cclust.errors import (
    PluginLoadError,
    RegistryConflictError,
    RegistryWarning,
    UnknownNameError,
    ValidationError,
)

BUILTIN_PROVIDER = "cclust"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_+-]*$")
_T = TypeVar("_T")


@dataclass(frozen=True)
class Registration:
    """One row of :func:`available`: a registered name, read-only."""

    name: str
    kind: str
    description: str
    provider: str
    target: str  # "module:attribute", or "<runtime>" for objects given to register()

    def __str__(self):
        return f"{self.name} ({self.kind}, {self.provider}): {self.description}"


class Available(Mapping):
    """What :func:`available` returns: a read-only mapping name -> :class:`Registration`.

    It reads as a table (name, kind, provider, description) when printed or shown in a notebook,
    and otherwise behaves as the read-only dict it is: ``available()["kcc"].description``,
    ``sorted(available())``, ``"hgpa" in available()``, ``dict(available())``.

    >>> rows = available(kind="utility")
    >>> rows["uc"].kind
    'utility'
    >>> print(repr(rows).splitlines()[0].split())
    ['name', 'kind', 'provider', 'description']
    """

    __slots__ = ("_rows",)
    _COLUMNS = ("name", "kind", "provider", "description")

    def __init__(self, rows):
        self._rows = dict(rows)

    def __getitem__(self, name):
        return self._rows[name]

    def __iter__(self):
        return iter(self._rows)

    def __len__(self):
        return len(self._rows)

    def __contains__(self, name):
        return name in self._rows

    def copy(self):
        """A plain dict of the rows."""
        return dict(self._rows)

    def _cells(self):
        return [[getattr(row, column) for column in self._COLUMNS] for row in self._rows.values()]

    def __repr__(self):
        if not self._rows:
            return "(no registered names)"
        cells = self._cells()
        widths = [max(len(column), *(len(row[i]) for row in cells))
                  for i, column in enumerate(self._COLUMNS[:-1])]
        lines = [list(self._COLUMNS), ["-" * len(c) if i == 3 else "-" * widths[i]
                                       for i, c in enumerate(self._COLUMNS)]] + cells
        # the last column is left as long as it is: a description is never cut
        return "\n".join("  ".join([*(f"{c:<{w}}" for c, w in zip(line, widths)), line[-1]]).rstrip()
                         for line in lines)

    __str__ = __repr__

    def _repr_html_(self):
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self._COLUMNS)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in self._cells())
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class _Slot:
    """A name's entry: where its target is, and the object once loaded."""

    __slots__ = ("name", "kind", "target", "provider", "description", "obj", "loaded", "entry_point")

    def __init__(self, name, kind, target, provider, description, obj=None, loaded=False, entry_point=None):
        self.name = name
        self.kind = kind
        self.target = target
        self.provider = provider
        self.description = description
        self.obj = obj
        self.loaded = loaded
        self.entry_point = entry_point

    def registration(self):
        return Registration(self.name, self.kind, self.description, self.provider, self.target)


def _first_line(text):
    for line in (text or "").strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _entry_points(group):
    from importlib.metadata import entry_points

    return entry_points(group=group)


# -- the registry ------------------------------------------------------------------------------

class Registry:
    """Name -> target table filled from built-ins and entry points, loaded lazily.

    Most code uses the module-level functions bound to the default registry; a separate
    instance is useful in tests (``Registry(builtins=(...), entry_points=fake)``).
    """

    def __init__(self, builtins=None, entry_points=None):
        self._builtins = builtins
        self._entry_points = entry_points or _entry_points
        self._slots = None
        self._conflicts = {}   # name -> list of losing slots (plugin vs built-in)
        self._ambiguous = {}   # name -> list of slots from several plugins
        self._lock = threading.RLock()

    # scanning -------------------------------------------------------------------------------
    def _table(self):
        if self._slots is None:
            with self._lock:
                if self._slots is None:
                    self._scan()
        return self._slots

    def _scan(self):
        builtins = self._builtins
        if builtins is None:
            from cclust._builtins import BUILTINS as builtins
        slots = {}
        for name, kind, target, description in builtins:
            slots[name] = _Slot(name, kind, target, BUILTIN_PROVIDER, description)
        claims = {}
        for kind, group in KINDS.items():
            seen = set()
            for ep in self._entry_points(group):
                dist = getattr(ep, "dist", None)
                provider = dist.name if dist is not None else "<unknown distribution>"
                if provider == BUILTIN_PROVIDER or (ep.name, provider, ep.value) in seen:
                    continue
                seen.add((ep.name, provider, ep.value))
                summary = ""
                if dist is not None:
                    summary = dist.metadata.get("Summary") or ""
                description = f"{summary} [plugin {provider}]" if summary else f"plugin {provider}"
                claims.setdefault(ep.name, []).append(
                    _Slot(ep.name, kind, ep.value, provider, description, entry_point=ep))
        for name, claimants in claims.items():
            if name in slots:
                self._conflicts[name] = claimants
            elif len(claimants) > 1:
                self._ambiguous[name] = claimants
            else:
                slots[name] = claimants[0]
        self._slots = slots

    def refresh(self) -> None:
        """Forget everything scanned or loaded and read the built-ins and entry points again."""
        with self._lock:
            self._slots = None
            self._conflicts = {}
            self._ambiguous = {}

    # queries --------------------------------------------------------------------------------
    def available(self, kind: str | None = None) -> Available:
        """Read-only mapping name -> :class:`Registration` (an :class:`Available`, printed as a
        table), importing nothing."""
        if kind is not None and kind not in KINDS:
            raise ValidationError(f"kind must be one of {sorted(KINDS)} or None, got {kind!r}.")
        table = self._table()
        rows = {name: slot.registration() for name, slot in sorted(table.items())
                if kind is None or slot.kind == kind}
        return Available(rows)

    def conflicts(self) -> Mapping[str, list[str]]:
        """Names claimed more than once: name -> providers claiming it (the winner first)."""
        table = self._table()
        out = {}
        for name, losers in self._conflicts.items():
            winner = table.get(name)
            out[name] = ([winner.provider] if winner is not None else []) + [s.provider for s in losers]
        for name, claimants in self._ambiguous.items():
            out[name] = [s.provider for s in claimants]
        return MappingProxyType(out)

    def canonical_name(self, name: str) -> str:
        """``name`` as registered: itself when registered, else the one registered name equal to it
        ignoring case (``"KCC"`` -> ``"kcc"``); unchanged when none or several match."""
        table = self._table()
        if not isinstance(name, str) or name in table or name in self._ambiguous or name in KNOWN_PLUGINS:
            return name
        matches = self._same_but_case(name)
        return matches[0] if len(matches) == 1 else name

    def _same_but_case(self, name):
        folded = name.casefold()
        return sorted({n for n in (*self._table(), *self._ambiguous, *KNOWN_PLUGINS) if n.casefold() == folded})

    def claims(self) -> Mapping[str, tuple[Registration, ...]]:
        """Names claimed more than once, with every claimant: name -> tuple of
        :class:`Registration` (the one in use first, for a built-in's name; for a name two
        plugins claim, none is in use)."""
        table = self._table()
        out = {}
        for name, losers in self._conflicts.items():
            winner = table.get(name)
            out[name] = tuple(([winner.registration()] if winner is not None else [])
                              + [s.registration() for s in losers])
        for name, claimants in self._ambiguous.items():
            out[name] = tuple(s.registration() for s in claimants)
        return MappingProxyType(out)

    def get(self, name: str, kind: str | None = None) -> Any:
        """The registered object called ``name``, imported on first use.

        A name differing from a registered one only in case (``"KCC"``) finds it when exactly
        one registered name matches that way."""
        table = self._table()
        if kind is not None and kind not in KINDS:
            raise ValidationError(f"kind must be one of {sorted(KINDS)} or None, got {kind!r}.")
        if not isinstance(name, str):
            raise ValidationError(f"name must be a string, got {type(name).__name__}.")
        name = self.canonical_name(name)
        if name in self._ambiguous and name not in table:
            providers = ", ".join(s.provider for s in self._ambiguous[name])
            raise RegistryConflictError(
                f"{name!r} is registered by several plugins ({providers}); uninstall all but one, "
                f"or choose with cclust.register({name!r}, obj, kind=..., replace=True)."
            )
        slot = table.get(name)
        if slot is None and name in KNOWN_PLUGINS:
            dist, why = KNOWN_PLUGINS[name]
            raise UnknownNameError(
                f"{name!r} is provided by the plugin distribution {dist}, which is not installed "
                f"({why}): {install_hint(name)}."
            )
        if slot is None:
            raise UnknownNameError(self._unknown_message(name, kind))
        if kind is not None and slot.kind != kind:
            raise UnknownNameError(
                f"{name!r} is a {slot.kind}, not a {kind}. "
                + self._unknown_message(name, kind, listing_only=True)
            )
        if name in self._conflicts:
            providers = ", ".join(s.provider for s in self._conflicts[name])
            warnings.warn(
                f"{name!r} is also claimed by plugin(s) {providers}; the built-in is used. Give "
                "the plugin's function another name.", RegistryWarning, stacklevel=2)
        if not slot.loaded:
            with self._lock:
                if not slot.loaded:
                    self._load(slot)
        return slot.obj

    def _load(self, slot):
        what = f"{slot.kind} {slot.name!r} from {slot.provider} ({slot.target})"
        try:
            if slot.entry_point is not None:
                obj = slot.entry_point.load()
            else:
                module, _, attr = slot.target.partition(":")
                obj = importlib.import_module(module)
                for part in attr.split("."):
                    obj = getattr(obj, part)
        except Exception as exc:  # any failure inside a plugin is reported as that plugin's
            hint = "reinstall or fix that distribution" if slot.provider != BUILTIN_PROVIDER \
                else "this is a bug in cclust; please report it"
            raise PluginLoadError(
                f"could not load {what}: {type(exc).__name__}: {exc}. Other names still work; {hint}."
            ) from exc
        check_contract(slot.kind, obj, what)
        if slot.provider != BUILTIN_PROVIDER or not slot.description:
            slot.description = _first_line(getattr(obj, "__doc__", "")) or slot.description
        slot.obj = obj
        slot.loaded = True

    def _unknown_message(self, name, kind, listing_only=False):
        table = self._table()
        names = sorted(n for n, s in table.items() if kind is None or s.kind == kind)
        close = []
        if isinstance(name, str):
            # several names equal but for case (two plugins' "Foo" and "foo") are all suggested
            close = [n for n in self._same_but_case(name) if n in names]
            if not close:
                folded = {n.casefold(): n for n in names}
                close = [folded[n] for n in difflib.get_close_matches(name.casefold(), list(folded), n=1,
                                                                      cutoff=0.5)]
        what = f"{kind} " if kind else ""
        head = "" if listing_only else f"unknown {what}name {name!r}. "
        suggestion = f"Did you mean {' or '.join(map(repr, close))}? " if close else ""
        return f"{head}{suggestion}Available {what or ''}names: {', '.join(names) or '(none)'}."

    # changes --------------------------------------------------------------------------------
    @overload
    def register(self, name: str, obj: None = None, *, kind: str, description: str | None = None,
                 replace: bool = False) -> Callable[[_T], _T]: ...
    @overload
    def register(self, name: str, obj: _T, *, kind: str, description: str | None = None,
                 replace: bool = False) -> _T: ...

    def register(self, name: str, obj: Any = None, *, kind: str, description: str | None = None,
                 replace: bool = False) -> Any:
        """Register ``obj`` under ``name`` at run time; usable as a decorator when obj is None."""
        if obj is None:
            def decorate(target: _T) -> _T:
                return self.register(name, target, kind=kind, description=description, replace=replace)

            return decorate
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValidationError(
                f"name must be lower-case letters, digits, '-', '_' or '+', starting with a letter "
                f"or digit, got {name!r}."
            )
        if kind not in KINDS:
            raise ValidationError(f"kind must be one of {sorted(KINDS)}, got {kind!r}.")
        check_contract(kind, obj, f"{kind} {name!r}")
        table = self._table()
        with self._lock:
            if (name in table or name in self._ambiguous) and not replace:
                old = table.get(name)
                who = old.provider if old is not None else "several plugins"
                raise RegistryConflictError(
                    f"{name!r} is already registered (by {who}); pass replace=True to replace it "
                    "or choose another name."
                )
            doc = description or _first_line(getattr(obj, "__doc__", "")) or f"runtime {kind}"
            module = getattr(obj, "__module__", None) or "__main__"
            self._slots[name] = _Slot(name, kind, "<runtime>", module.split(".")[0], doc, obj, True)
            self._ambiguous.pop(name, None)
            self._conflicts.pop(name, None)
        return obj

    def unregister(self, name: str) -> None:
        """Remove a name (built-ins come back after :meth:`refresh`)."""
        table = self._table()
        with self._lock:
            if name not in table:
                raise UnknownNameError(self._unknown_message(name, None))
            del table[name]
            self._conflicts.pop(name, None)


#: names provided by optional plugin distributions of this project: name -> (distribution, why
#: it is separate). Asking for one that is not installed says what to install.
KNOWN_PLUGINS = MappingProxyType({
    "hgpa": ("cclust-hypergraph", "it needs the Mt-KaHyPar hypergraph partitioner"),
})

#: How to install a plugin distribution of this project: the one hint every message about a
#: missing plugin shows (``cclust.get``, ``cclust.show_config()``, ``cclust methods``, ``cclust run``,
#: ``cclust show-config``). The plugins are not published on PyPI, so the hint is their folder in a
#: cclust source checkout (or unpacked sdist), from whose root the command runs.
PLUGIN_INSTALL_HINT = "run `pip install ./plugins/{dist}` in a cclust source checkout"


def install_hint(name: str) -> str:
    """The command that installs the plugin providing ``name``, a key of :data:`KNOWN_PLUGINS`.

    >>> install_hint("hgpa")
    'run `pip install ./plugins/cclust-hypergraph` in a cclust source checkout'
    """
    dist, _ = KNOWN_PLUGINS[name]
    return PLUGIN_INSTALL_HINT.format(dist=dist)


_default = Registry()
get = _default.get
available = _default.available
register = _default.register
unregister = _default.unregister
conflicts = _default.conflicts
refresh = _default.refresh
canonical_name = _default.canonical_name
claims = _default.claims
