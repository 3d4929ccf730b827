"""The built-in registrations: one table of dotted strings, read exactly like entry points.

Each row is (name, kind, "module:attribute", one-line description). Keeping the descriptions
here lets ``cclust.available()`` list everything without importing anything.
"""

BUILTINS = (
)
