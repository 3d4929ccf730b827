"""The ``cclust`` command: consensus clustering from a shell.

Sub-commands
------------
``cclust run DATA``
    Generate basic partitions of DATA and fuse them. DATA is a bundled dataset name (``iris``,
    ``wine``; the name wins over a file of that name, write ``./iris`` for the file), a CSV file
    (``.csv``, ``.tsv``, ``.txt``), an ``.npy`` file holding X, or an ``.npz`` file holding ``X``
    and optionally ``y``. Without ``--method`` every registered consensus method (plugins
    included) fuses one shared ensemble and the command prints one row per method; with one
    ``--method`` it prints that result. ``--utilities`` compares KCC under every utility of Wu et al. (2015).
``cclust fuse ENSEMBLE``
    Fuse partitions the user already has (one column per partition, any label values).
``cclust select-k DATA --k-range LOW HIGH``
    Consensus CDF, delta area and PAC per K (Monti et al.), with the recommended K.
``cclust methods``
    The registry: name, kind, provider and description.
``cclust show-config``
    Versions, OpenMP, threads, optional extras and plugins.

Conventions
-----------
* CSV: the delimiter is sniffed among ``,``, ``;`` and tab (tab for ``.tsv``). A header row is
  detected when a column's first cell is not a number while the rest of the column is, or, for
  columns of words, when every first cell occurs nowhere else in its column (a file of one line
  of words only is a header without data); ``--header yes|no`` overrides the guess.
* Every data row is one object, in file order, in every output: a line of delimiters only
  (``,``) or an empty line between two rows is a row whose cells are all empty. Only empty lines
  before the first and after the last row (such as the final newline) are not rows. In features
  such a row, or any empty, NaN or infinite cell, is refused with its line and column
  (``--missing-features mean`` fills empty and NaN cells with the column mean); in an ensemble
  it is an object missing from every partition, reported with its row.
* ``--out`` writes the format its extension names: ``.csv``/``.tsv`` (header ``label``, or one
  column per method), ``.json`` (``{"method": [labels]}``) or ``.npy`` (int64); any other
  extension is refused before the work. Outputs (labels and figures) are written to a
  temporary file in the same folder and renamed when complete, so an error or Ctrl-C never
  leaves a half-written file under the name.
* ``--method-param KEY=VALUE`` (and ``--generator-param``) values are read as ``none``/``null``
  -> None, ``true``/``false`` -> bool, an integer -> int, a number -> float, otherwise the text;
  a value with commas is a tuple of such values (``k_range=2,6``). ``METHOD:KEY=VALUE`` gives a
  parameter to one method only; a plain ``KEY=VALUE`` goes to every selected method that takes
  ``KEY`` (and is an error if none does).
* User files are never unpickled (``allow_pickle=False``).
* A user error prints one line ``cclust: error: ...`` on standard error and exits with status 2.
"""
import argparse
import contextlib
import csv
import dataclasses
import inspect
import io
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import textwrap
import time
import warnings

import numpy as np

from cclust.registry import accepts

__all__ = [
    "KCC_UTILITIES",
    "Dataset",
    "UserError",
    "build_parser",
    "load_data",
    "load_ensemble",
    "main",
    "parse_value",
]

#: (label, utility, p) rows of the KCC utility comparison: Wu et al.'s (2015) ten utilities, the
#: columns of Becerra Tomé's Tables 4 and 5
KCC_UTILITIES = (
    ("Uc", "uc", None), ("UH", "uh", None), ("Ucos", "ucos", None),
    ("UL5", "ulp", 5.0), ("UL8", "ulp", 8.0),
    ("NUc", "nuc", None), ("NUH", "nuh", None), ("NUcos", "nucos", None),
    ("NUL5", "nulp", 5.0), ("NUL8", "nulp", 8.0),
)

#: parameters the command itself sets; giving them as --method-param would be ambiguous
_RESERVED = {"n_clusters": "-k", "random_state": "--seed", "X": "DATA", "ensemble": "DATA",
             "n_partitions": "--partitions", "n_jobs": "--jobs", "n_threads": "--jobs"}

#: above this many objects a comparison of every method warns that some are O(n^2)
_LARGE = 2000
_CSV_SUFFIXES = (".csv", ".tsv", ".txt")
_PLOT_HINT = "pip install 'cclust[plot]'"

#: Feature standard deviations further apart than this draw a warning from run and select-k.
#: Measured (kmeans generator, 100 partitions, K = classes; KCC's ARI): on the 11 shared real
#: sets whose ratio is at most 8, z-scoring lowers ARI on 8 (iris 0.73 -> 0.68) and raises it by
#: at most 0.014 on 3; on the 9 from 46x up it raises ARI on 7 (dermatology 0.06 -> 0.87, wine
#: 0.37 -> 0.85) and lowers it on glass (475x) and optdigits (346x, near-constant border pixels).
_SCALE_RATIO = 20.0

#: sort keys: larger is better for these, smaller for the others
_DESCENDING = ("agreement", "ari", "nmi")

#: how the agreement column is explained wherever it is shown
_AGREEMENT = "ANMI, the average NMI of the consensus with the basic partitions, Strehl & Ghosh 2002"


def plural(n, noun):
    """A count with its noun in the right number.

    Examples
    --------
    >>> plural(1, "partition"), plural(2, "partition"), plural(3, "class"), plural(0, "method")
    ('1 partition', '2 partitions', '3 classes', '0 methods')
    """
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {noun}es" if noun.endswith("s") else f"{n} {noun}s"


def _warn(message, warnings_list=None):
    """One ``cclust: warning:`` line on standard error (and the message kept for JSON output)."""
    print(f"cclust: warning: {' '.join(message.split())}", file=sys.stderr)
    if warnings_list is not None:
        warnings_list.append(message)


class UserError(Exception):
    """A problem with what the user asked for: reported in one line, no traceback."""


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage mistakes as one ``cclust: error:`` line (via UserError)."""

    def error(self, message):
        raise UserError(f"{message} (see `{self.prog} --help`)")


# -- values of --method-param / --generator-param ------------------------------------------------

def parse_value(text):
    """Read one ``--method-param``/``--generator-param`` value.

    Parameters
    ----------
    text : str
        The text after ``=``.

    Returns
    -------
    value : None, bool, int, float, tuple or str
        ``none``/``null`` (any case) -> None, ``true``/``false`` -> bool, an integer -> int,
        another number -> float, text with commas -> a tuple of such values, else the text.

    Examples
    --------
    >>> parse_value("3"), parse_value("0.5"), parse_value("True"), parse_value("none")
    (3, 0.5, True, None)
    >>> parse_value("2,6"), parse_value("uh")
    ((2, 6), 'uh')
    """
    text = text.strip()
    if "," in text:
        return tuple(parse_value(part) for part in text.split(","))
    lowered = text.lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_params(items, option):
    """``KEY=VALUE`` / ``SCOPE:KEY=VALUE`` strings -> (params for all, {scope: params})."""
    common, scoped = {}, {}
    for item in items or ():
        key, sep, value = item.partition("=")
        scope, colon, key = key.rpartition(":") if ":" in key else ("", "", key)
        key = key.strip()
        if not sep or not key.isidentifier() or (colon and not scope.strip()):
            raise UserError(
                f"{option} takes KEY=VALUE or METHOD:KEY=VALUE with KEY a parameter name, got {item!r}."
            )
        if key in _RESERVED:
            raise UserError(f"{option} {key}=... is set by {_RESERVED[key]}; use that option instead.")
        target = scoped.setdefault(scope.strip(), {}) if colon else common
        target[key] = parse_value(value)
    return common, scoped


def _accepts(fn, key):
    # A parameter of a function whose signature cannot be read is passed on: the call says.
    return accepts(fn, key, unknown=True)


def _parameter_names(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [name for name, p in params.items() if p.kind in kinds and name not in _RESERVED]


# -- reading files ---------------------------------------------------------------------------------

def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_blank_line(row):
    # csv gives [] for an empty line, and one blank cell for a line of spaces without delimiters
    return len(row) <= 1 and not any(row)


def _read_rows(path):
    """The data rows of a delimited text file: their cells (stripped strings) and line numbers.

    Every line is a row, in file order, and becomes one object: a line of delimiters only
    (``,``) is a row whose cells are all empty, and so is a completely empty line between two
    rows. Empty lines before the first and after the last non-empty line (such as the file's
    final newline) are not rows.
    """
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(path)
        with open(path, newline="", encoding="utf-8-sig") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a file; give the data file inside it.") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: cannot read it as CSV: it is not UTF-8 text (a binary file?).") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc}).") from None
    if "\0" in text:
        raise UserError(f"{path}: cannot read it as CSV: it holds NUL bytes (a binary file?).")
    if not text.strip():
        raise UserError(f"{path}: the file holds only empty lines (no data rows)." if text else
                        f"{path}: the file is empty (no data rows).")
    if path.lower().endswith(".tsv"):
        delimiter = "\t"
    else:
        try:
            delimiter = csv.Sniffer().sniff(text[:65536], delimiters=",;\t").delimiter
        except csv.Error:
            delimiter = ","
    # newline="": the csv module sees the line ends itself (\n, \r\n or \r), so a quoted cell may
    # hold a line break and no other character (form feed, U+2028, ...) splits a row.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows, lines = [], []
    try:
        for row in reader:
            rows.append([cell.strip() for cell in row])
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise UserError(f"{path}: cannot read it as CSV (line {reader.line_num}: {exc}).") from None
    filled = [i for i, row in enumerate(rows) if not _is_blank_line(row)]
    rows, lines = rows[filled[0]:filled[-1] + 1], lines[filled[0]:filled[-1] + 1]
    width = len(rows[0])
    for i, (row, line) in enumerate(zip(rows, lines)):
        if _is_blank_line(row):
            rows[i] = [""] * width  # an empty line between rows: an object with every cell empty
        elif len(row) != width:
            raise UserError(
                f"{path}: cannot read it as CSV: line {line} has {len(row)} fields, line {lines[0]} has "
                f"{width} (delimiter {delimiter!r})."
            )
    if not any(any(row) for row in rows):
        raise UserError(f"{path}: none of its {len(rows)} rows holds a value (every cell is empty).")
    return rows, lines


def _detect_header(rows):
    """Guess whether the first row names the columns (see the module docstring)."""
    if len(rows) < 2:
        return False
    numeric_votes, word_votes = [], []
    for j, first in enumerate(rows[0]):
        rest = [row[j] for row in rows[1:] if row[j]]
        if not rest:
            continue
        if all(_is_number(cell) for cell in rest):
            # a word over numbers is a column name; a number over numbers is data
            numeric_votes.append(bool(first) and not _is_number(first))
        else:
            # a column of words: a name occurs once, a label usually recurs further down
            word_votes.append(bool(first) and first not in set(rest))
    if numeric_votes:
        return any(numeric_votes)
    return bool(word_votes) and all(word_votes)


def _header_choice(rows, header):
    if header == "yes":
        return True
    if header == "no":
        return False
    if len(rows) == 1:
        # one line of words only names columns; a line holding a number is a (single) data row
        return not any(_is_number(cell) for cell in rows[0])
    return _detect_header(rows)


def _split_header(path, rows, lines, header):
    """(column names or None, data rows, their line numbers); refuses a header without data."""
    if not _header_choice(rows, header):
        return None, rows, lines
    if len(rows) == 1:
        raise UserError(
            f"{path}: the file has a header row ({', '.join(rows[0])}) but no data rows below it"
            + (" (the header row was detected; pass --header no if that line is data)." if header == "auto" else ".")
        )
    return rows[0], rows[1:], lines[1:]


def _check_n_objects(n, where):
    if n < 2:
        raise UserError(
            f"{where}: the data has {n} object{'s' if n != 1 else ''} ({n} data row{'s' if n != 1 else ''}); "
            "consensus clustering needs at least 2."
        )


class Dataset:
    """What :func:`load_data` read: features, optional true labels, and where they came from.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64, or None
        True classes coded 0..C-1 (in the sorted order of the original values), if known.
    description : str
        The dataset name or file path, for messages.
    """

    def __init__(self, X, y, description):
        self.X, self.y, self.description = X, y, description

    def summary(self):
        n, d = self.X.shape
        classes = f", {plural(len(np.unique(self.y)), 'class')}" if self.y is not None else ""
        return f"{self.description}: {plural(n, 'object')}, {plural(d, 'feature')}{classes}"


def _encode_classes(values, what):
    values = np.asarray(values)
    if values.ndim != 1:
        raise UserError(f"{what} must be 1-D (one label per object), got shape {values.shape}.")
    try:
        _, codes = np.unique(values, return_inverse=True)
    except TypeError:
        raise UserError(f"{what} mixes label types that cannot be compared.") from None
    return codes.reshape(-1).astype(np.int64)


def _column_index(spec, names, n_columns, path):
    """Resolve --labels-column NAME|INDEX (0-based, negative counts from the end)."""
    try:
        index = int(spec)
    except ValueError:
        if names is None:
            raise UserError(
                f"--labels-column {spec!r}: {path} has no header row to look a name up in; give a 0-based "
                "column index, or --header yes if the first row does name the columns."
            ) from None
        if spec not in names:
            raise UserError(f"--labels-column {spec!r}: no such column in {path}; its columns are {names}.")
        return names.index(spec)
    if not -n_columns <= index < n_columns:
        raise UserError(
            f"--labels-column {index}: {path} has {n_columns} columns, so the index must be in "
            f"[{-n_columns}, {n_columns - 1}]."
        )
    return index % n_columns


_IMPUTE_HINT = " (or pass --missing-features mean to fill empty and NaN cells with the column mean)"


def _bad_cell(path, name, line, cell, impute):
    """The message for a feature cell that is not a finite number, saying what it is."""
    where = f"{path}: line {line}, {name}"
    if cell == "":
        return (f"{where} is empty; cclust needs a value in every feature cell: fill it in or delete the "
                f"line{'' if impute else _IMPUTE_HINT}.")
    value = float(cell) if _is_number(cell) else None
    if value is not None and math.isnan(value):
        return (f"{where} holds {cell!r}, which is NaN (not a number); cclust needs finite feature values: "
                f"fill it in or delete the line{'' if impute else _IMPUTE_HINT}.")
    if value is not None:
        return (f"{where} holds {cell!r}, an infinite value; cclust needs finite feature values: fix it or "
                "delete the line.")
    return None


def _load_csv_data(path, labels_column, header, missing_features="error"):
    rows, lines = _read_rows(path)
    names, body, body_lines = _split_header(path, rows, lines, header)
    n_columns = len(rows[0])
    label_j = _column_index(labels_column, names, n_columns, path) if labels_column is not None else None
    impute = missing_features == "mean"
    if not impute:
        for row, line in zip(body, body_lines):
            if not any(cell for j, cell in enumerate(row) if j != label_j):
                raise UserError(
                    f"{path}: line {line} has no feature value (every cell is empty); each line is one object, "
                    f"so fill it in or delete the line{_IMPUTE_HINT}."
                )
    columns = []
    for j in range(n_columns):
        if j == label_j:
            continue
        cells = [row[j] for row in body]
        name = f"column {names[j]!r} (index {j})" if names else f"column {j}"
        try:
            values = np.array(cells, dtype=np.float64)
        except ValueError:
            values = None
        if values is None or not np.isfinite(values).all():
            parsed = np.empty(len(cells))
            for i, (cell, line) in enumerate(zip(cells, body_lines)):
                if impute and (cell == "" or (_is_number(cell) and math.isnan(float(cell)))):
                    parsed[i] = np.nan
                    continue
                if _is_number(cell) and math.isfinite(float(cell)):
                    parsed[i] = float(cell)
                    continue
                problem = _bad_cell(path, name, line, cell, impute)
                if problem is not None:
                    raise UserError(problem)
                hint = "" if label_j is not None else \
                    f"; if it holds the true classes, pass --labels-column {names[j] if names else j}"
                words = cell.split()
                if len(words) > 1 and all(_is_number(w) for w in words):
                    hint = "; the file looks separated by spaces, but cclust reads ',', ';' or tab delimiters"
                raise UserError(
                    f"{path}: {name} is not numeric: line {line} holds {cell!r}. cclust clusters "
                    f"numeric features only: drop or encode that column{hint}."
                )
            values = parsed
        columns.append(values)
    if not columns:
        raise UserError(f"{path}: no feature column is left besides the labels column.")
    X = np.column_stack(columns)
    if impute:
        X = _impute_mean(X, path, [names[j] if names else j for j in range(n_columns) if j != label_j])
    y = None
    if label_j is not None:
        raw = [row[label_j] for row in body]
        if "" in raw:
            line = body_lines[raw.index("")]
            raise UserError(f"{path}: the labels column has an empty cell on line {line}; every object needs a class.")
        y = _encode_classes(np.array(raw), f"{path}: the labels column")
    return Dataset(X, y, path)


def _impute_mean(X, where, columns=None):
    """--missing-features mean: NaN cells take their column's mean; infinities are still refused."""
    X = np.array(X, dtype=np.float64)  # a copy: the caller's array is never changed
    if np.isinf(X).any():
        i, j = np.argwhere(np.isinf(X))[0]
        raise UserError(f"{where}: X holds an infinite value (row {i}, column {j}); cclust needs finite feature "
                        "values: fix or drop it.")
    holes = np.isnan(X)
    if holes.any():
        empty = np.flatnonzero(holes.all(axis=0))
        if empty.size:
            label = columns[empty[0]] if columns is not None else empty[0]
            raise UserError(f"{where}: --missing-features mean: column {label!r} has no value at all to take a mean "
                            "of; drop that column.")
        means = np.nanmean(X, axis=0)
        X[holes] = np.take(means, np.nonzero(holes)[1])
    return X


def _load_npy(path):
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file.") from None
    except ValueError as exc:
        if "allow_pickle" in str(exc) or "pickle" in str(exc).lower():
            raise UserError(
                f"{path}: it holds Python objects, which cclust never unpickles; save plain numeric (or "
                "string) arrays instead."
            ) from None
        raise UserError(f"{path}: cannot read it as {os.path.splitext(path)[1]} ({exc}).") from None
    except (OSError, EOFError) as exc:
        raise UserError(f"{path}: cannot read it ({exc}).") from None


def _check_X(X, where):
    from cclust._validation import check_array_2d
    from cclust.errors import ValidationError

    X = np.asarray(X)
    if X.ndim == 1:
        raise UserError(f"{where}: X must be 2-D (n_samples, n_features), got shape {X.shape}; "
                        "save one feature as shape (n, 1).")
    if X.dtype.kind in "fc" and X.ndim == 2 and not np.isfinite(X).all():
        i, j = np.argwhere(~np.isfinite(X))[0]
        if np.isnan(X[i, j]):
            raise UserError(f"{where}: X[{i}, {j}] is NaN (not a number); cclust needs finite feature values: fill "
                            f"in or drop that row{_IMPUTE_HINT}.")
        raise UserError(f"{where}: X[{i}, {j}] is infinite; cclust needs finite feature values: fix or drop that row.")
    try:
        return check_array_2d(X, "X")
    except ValidationError as exc:
        raise UserError(f"{where}: {exc}") from None


def _refuse_directory(path, option):
    if os.path.isdir(path):
        raise UserError(f"{option}{path!r} is a directory, not a file; give the data file inside it.")


def load_data(source, labels_column=None, header="auto", missing_features="error"):
    """Read the DATA argument of ``cclust run`` and ``cclust select-k``.

    Every data row is one object, in file order: a CSV line of delimiters only, or an empty line
    between two rows, is an object without features (refused, unless imputed); only empty lines
    before the first and after the last row (such as the final newline) are not rows.

    Parameters
    ----------
    source : str
        A bundled dataset name (``iris``, ``wine``; the name wins over a file of that name), or
        a path ending in ``.csv``/``.tsv``/``.txt`` (numeric feature columns), ``.npy`` (X) or
        ``.npz`` (``X`` and optionally ``y``). Never unpickled.
    labels_column : str, optional
        CSV only: the column holding the true classes, by header name or 0-based index
        (negative counts from the end). Default: every column is a feature.
    header : {"auto", "yes", "no"}, default="auto"
        Whether the CSV's first row names the columns; "auto" detects it (a file of one line of
        words only is a header without data).
    missing_features : {"error", "mean"}, default="error"
        What to do with an empty or NaN feature value: refuse it (naming its line and column),
        or fill it with the mean of its column. Infinite values are always refused.

    Returns
    -------
    Dataset

    Raises
    ------
    UserError
        Missing or unreadable file, a directory, wrong type, fewer than 2 objects, a header
        without data rows, a non-numeric, empty, NaN or infinite feature cell (the message names
        the column by header name and index, the line, and what the cell holds).

    Examples
    --------
    >>> data = load_data("iris")
    >>> data.X.shape, data.summary()
    ((150, 4), "bundled dataset 'iris': 150 objects, 4 features, 3 classes")
    """
    if missing_features not in ("error", "mean"):
        raise ValueError(f"missing_features must be 'error' or 'mean', got {missing_features!r}")
    data = _load_data(source, labels_column, header, missing_features)
    _check_n_objects(data.X.shape[0], data.description)
    return data


def _load_data(source, labels_column, header, missing_features):
    from cclust import datasets

    if source in datasets.names():
        if labels_column is not None:
            raise UserError(f"--labels-column is for CSV files; the bundled {source!r} has its labels.")
        X, y = datasets.load(source)
        return Dataset(X, y, f"bundled dataset {source!r}")
    _refuse_directory(source, "DATA ")
    suffix = os.path.splitext(source)[1].lower()
    if suffix not in _CSV_SUFFIXES + (".npy", ".npz"):
        if not os.path.exists(source):
            raise UserError(
                f"DATA {source!r} is neither a bundled dataset ({', '.join(datasets.names())}) nor an "
                "existing file."
            )
        raise UserError(
            f"DATA {source!r}: unsupported file type {suffix or '(no extension)'!r}; give a .csv/.tsv/.txt, "
            ".npy or .npz file."
        )
    if suffix in _CSV_SUFFIXES:
        return _load_csv_data(source, labels_column, header, missing_features)
    if labels_column is not None:
        raise UserError("--labels-column is for CSV files; an .npz file carries its labels as the array 'y'.")

    def features(X):
        if missing_features == "mean" and np.asarray(X).dtype.kind == "f":
            X = _impute_mean(X, source)
        return _check_X(X, source)

    loaded = _load_npy(source)
    if suffix == ".npy":
        if isinstance(loaded, np.lib.npyio.NpzFile):
            loaded.close()
            raise UserError(f"{source}: it is an .npz archive despite its name; rename it to .npz.")
        return Dataset(features(loaded), None, source)
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise UserError(f"{source}: it is a single .npy array, not an .npz archive; rename it to .npy.")
    with loaded:
        try:
            files = list(loaded.files)
            if "X" not in files:
                raise UserError(f"{source}: the .npz archive has no array named 'X' (it has {files}).")
            X = features(loaded["X"])
            y = _encode_classes(loaded["y"], f"{source}: y") if "y" in files else None
        except ValueError as exc:
            raise UserError(f"{source}: cannot read it ({exc}); cclust never unpickles user files.") from None
    if y is not None and y.shape[0] != X.shape[0]:
        raise UserError(f"{source}: y has {y.shape[0]} labels but X has {X.shape[0]} rows.")
    return Dataset(X, y, source)


def _encode_partition(cells, missing, name):
    """Strings of one partition -> int32 codes (-1 = missing) and K."""
    present = np.array([cell != "" and cell != missing for cell in cells], dtype=bool)
    values = [cell for cell, keep in zip(cells, present) if keep]
    if not values:
        raise UserError(f"{name} labels no object (every cell is missing); drop that partition.")
    if all(_is_number(v) for v in values):
        numbers = np.array(values, dtype=np.float64)
        if np.isfinite(numbers).all():
            values = numbers
    _, codes = np.unique(np.asarray(values), return_inverse=True)
    out = np.full(len(cells), -1, dtype=np.int32)
    out[present] = codes.reshape(-1)
    return out


def load_ensemble(path, header="auto", missing="-1"):
    """Read the ENSEMBLE argument of ``cclust fuse``.

    Parameters
    ----------
    path : str
        A ``.csv``/``.tsv``/``.txt`` file with one column per partition (labels may be any
        numbers or words; an empty cell marks a missing object), an ``.npy`` array of shape
        (n_samples, n_partitions), or an ``.npz`` archive holding it as ``labels`` (or as its
        only array). Never unpickled. Every data row is one object, in file order: a CSV line
        of delimiters only (``,``), or an empty line between two rows, is an object missing
        from every partition; only empty lines before the first and after the last row (such
        as the final newline) are not rows. In a one-column file, mark a missing object in the
        last row with the ``missing`` value rather than an empty line.
    header : {"auto", "yes", "no"}, default="auto"
        Whether the CSV's first row names the partitions; "auto" detects it.
    missing : str, default="-1"
        A label value that also marks a missing object ("" for none besides empty cells).

    Returns
    -------
    ensemble : Ensemble
    description : str
    """
    from cclust.ensemble import Ensemble
    from cclust.errors import ValidationError

    _refuse_directory(path, "ENSEMBLE ")
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _CSV_SUFFIXES:
        rows, lines = _read_rows(path)
        names, body, _ = _split_header(path, rows, lines, header)
        _check_n_objects(len(body), path)
        columns = []
        for j in range(len(rows[0])):
            name = f"{path}: partition {names[j]!r} (column {j})" if names else f"{path}: partition in column {j}"
            columns.append(_encode_partition([row[j] for row in body], missing, name))
        return Ensemble(np.column_stack(columns)), f"{path}"
    if suffix not in (".npy", ".npz"):
        if not os.path.exists(path):
            raise UserError(f"{path}: no such file.")
        raise UserError(f"{path}: unsupported file type {suffix or '(no extension)'!r}; give a .csv/.tsv/.txt, "
                        ".npy or .npz file with one column per partition.")
    loaded = _load_npy(path)
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            files = list(loaded.files)
            key = "labels" if "labels" in files else (files[0] if len(files) == 1 else None)
            if key is None:
                raise UserError(f"{path}: the .npz archive needs an array named 'labels' (it has {files}).")
            try:
                array = loaded[key]
            except ValueError as exc:
                raise UserError(f"{path}: cannot read it ({exc}); cclust never unpickles user files.") from None
    else:
        array, key = loaded, None
    # name the array the labels came from: an archive's only array may be called anything
    what = f"{path}: array {key!r}" if key not in (None, "labels") else path
    if array.ndim >= 1:
        _check_n_objects(array.shape[0], what)
    if array.dtype.kind == "f":
        fraction = array[np.isfinite(array) & (array != np.round(array))]
        if fraction.size:
            source = (f"the archive has no array named 'labels', so its only array {key!r} was read, and it"
                      if key not in (None, "labels") else "it")
            raise UserError(
                f"{path}: {source} holds fractional numbers (e.g. {float(fraction.flat[0]):g}), not cluster "
                "labels: ENSEMBLE needs one column of integer or text labels per partition. Features are "
                "clustered with `cclust run DATA`."
            )
    if array.dtype.kind in "biuf":
        marker = parse_value(missing) if missing != "" else None
        marker = marker if isinstance(marker, (int, float)) and not isinstance(marker, bool) else None
        try:
            return Ensemble(array, missing=marker), path
        except ValidationError as exc:
            raise UserError(f"{what}: {exc}") from None
    if array.dtype.kind in "US":
        array = array.astype(str)
        if array.ndim == 1:
            array = array[:, None]
        if array.ndim != 2:
            raise UserError(f"{what}: labels must be 2-D (n_samples, n_partitions), got shape {array.shape}.")
        columns = [_encode_partition(list(array[:, j]), missing, f"{what}: partition {j}")
                   for j in range(array.shape[1])]
        return Ensemble(np.column_stack(columns)), path
    raise UserError(f"{what}: labels must be numbers or strings, got dtype {array.dtype}.")


# -- running consensus methods ---------------------------------------------------------------------

class Job:
    """One row of a comparison: a label, the registered method and its parameters."""

    def __init__(self, label, method, params=None, fn=None, error=None):
        self.label, self.method, self.params = label, method, dict(params or {})
        self.fn, self.error = fn, error

    def settings(self):
        """The choices this run makes: every keyword parameter whose default is a name (KCC's
        ``utility``, EAC's ``linkage``, ...), then what was given with --method-param."""
        shown = {}
        try:
            params = inspect.signature(self.fn).parameters.values()
        except (TypeError, ValueError):
            params = ()
        for p in params:
            if p.kind is inspect.Parameter.KEYWORD_ONLY and isinstance(p.default, str) and p.name not in _RESERVED:
                shown[p.name] = p.default
        shown.update(self.params)
        return {key: value for key, value in shown.items() if value is not None}


def _short(exc):
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _resolve_methods(names):
    """Jobs for the named methods (errors raise), or for every registered method (errors recorded)."""
    import cclust
    from cclust.errors import CclustError
    from cclust.registry import KNOWN_PLUGINS, install_hint

    if names:
        jobs = []
        for name in names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a shadowed plugin is reported by `cclust methods`
                jobs.append(Job(name, name, fn=cclust.get(name, kind="consensus")))
        return jobs
    rows = cclust.available(kind="consensus")
    jobs, targets = [], {}
    for name, row in rows.items():
        if row.target in targets and row.target != "<runtime>":
            jobs.append(Job(name, name, error=f"alias of {targets[row.target]}"))
            continue
        targets[row.target] = name
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn = cclust.get(name, kind="consensus")
        except (CclustError, ImportError) as exc:
            jobs.append(Job(name, name, error=f"unavailable: {_short(exc)}"))
            continue
        jobs.append(Job(name, name, fn=fn))
    for name, (_, why) in KNOWN_PLUGINS.items():
        if name not in rows:
            jobs.append(Job(name, name, error=f"not installed: {install_hint(name)} ({why})"))
    return sorted(jobs, key=lambda job: job.method)


def _exclude(jobs, excluded):
    """Drop the methods named by --exclude (each must be one of the jobs)."""
    names = _method_names(excluded)
    known = {job.method for job in jobs}
    for name in names:
        if name not in known:
            raise UserError(f"--exclude {name}: not among the methods to run ({', '.join(sorted(known))}).")
    kept = [job for job in jobs if job.method not in names]
    if not kept:
        raise UserError("--exclude leaves no method to run.")
    return kept


def _distribute_params(jobs, common, scoped, option):
    """Give each job its parameters; a parameter nobody takes is an error."""
    labels = {job.method for job in jobs}
    for scope in scoped:
        if scope not in labels:
            raise UserError(f"{option} {scope}:...: {scope!r} is not among the methods run ({', '.join(sorted(labels))}).")
    taken = set()
    for job in jobs:
        if job.fn is None:
            continue
        for key, value in common.items():
            if _accepts(job.fn, key):
                job.params.setdefault(key, value)
                taken.add(key)
        for key, value in scoped.get(job.method, {}).items():
            if not _accepts(job.fn, key):
                raise UserError(
                    f"{option} {job.method}:{key}=...: {job.method} has no parameter {key!r}; its parameters "
                    f"are {', '.join(_parameter_names(job.fn))}."
                )
            job.params[key] = value
    for key in common:
        if key not in taken:
            if len(jobs) == 1 and jobs[0].fn is not None:
                raise UserError(
                    f"{option} {key}=...: {jobs[0].method} has no parameter {key!r}; its parameters are "
                    f"{', '.join(_parameter_names(jobs[0].fn))}."
                )
            raise UserError(f"{option} {key}=...: none of the methods run takes a parameter {key!r}.")


def _settings_text(settings):
    return ", ".join(f"{key}={value}" for key, value in settings.items())


def _run_job(job, ensemble, k, X, seed, jobs_option, strict):
    """Run one job; returns a result row (dict). ``strict`` lets errors propagate."""
    from cclust.estimator import call_method
    from cclust.registry import method_info

    row = {"method": job.label, "status": "ok", "n_clusters": None, "agreement": None, "objective": None,
           "objective_name": None, "seconds": None, "n_iter": None, "converged": None, "settings": {},
           "note": "", "result": None}
    if job.fn is None:
        row.update(status="skipped", note=job.error)
        return row
    if method_info(job.fn).requires_X and X is None:
        message = f"{job.method} needs the original features X; run it with `cclust run DATA --method {job.method}`"
        if strict:
            raise UserError(message + ".")
        row.update(status="skipped", note=message)
        return row
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # The estimator's call: X, threads (n_threads or n_jobs) and the seed as each method takes them.
            result = call_method(job.fn, ensemble, k, job.params, seed, X, jobs_option, 0)
    except Exception as exc:  # one failing method (or broken plugin) must not stop the table
        if strict:
            raise
        row.update(status="error", note=_short(exc))
        return row
    row["seconds"] = time.perf_counter() - start
    notes = sorted({" ".join(str(w.message).split()) for w in caught})
    row.update(n_clusters=result.n_clusters, objective=result.objective, objective_name=result.objective_name,
               n_iter=result.n_iter, converged=result.converged, settings=job.settings(), note="; ".join(notes),
               result=result)
    return row


def _score_row(row, y, ensemble):
    """ARI and NMI against the true labels when known; always the label-free agreement."""
    import cclust

    if row["result"] is None:
        return
    labels = row["result"].labels
    row["agreement"] = float(cclust.get("consensus-score")(labels, ensemble))
    if y is not None:
        row["ari"] = float(cclust.get("ari")(y, labels))
        row["nmi"] = float(cclust.get("nmi")(y, labels))


def _run_jobs(jobs, ensemble, k, X, y, args, strict, on_row=None):
    """Run every job in order; ``on_row(row)`` sees each row as soon as it is done."""
    from cclust._progress import progress

    rows = []
    with progress(total=len(jobs), desc="consensus methods", verbose=args.verbose) as bar:
        for job in jobs:
            row = _run_job(job, ensemble, k, X, args.seed, args.jobs, strict)
            _score_row(row, y, ensemble)
            rows.append(row)
            bar.update(1)
            if on_row is not None:
                on_row(row)
    return rows


# -- output ----------------------------------------------------------------------------------------

def format_table(rows, header, align=None):
    """Rows of strings as aligned text: the first column left-aligned, then ``align`` (default:
    right-aligned, the last column left-aligned)."""
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    align = align or [">"] * (len(header) - 1) + ["<"]
    align = ["<"] + list(align[1:])

    def line(cells):
        return "  ".join(f"{c!s:{a}{w}}" for c, a, w in zip(cells, align, widths)).rstrip()

    lines = [line(r) for r in rows]
    head = line(header)
    # the rule spans the widest line, not just the header (a long last column runs past it)
    return "\n".join([head, "-" * max([len(head)] + [len(t) for t in lines])] + lines)


def _fmt(value, spec):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _terminal_width():
    """Columns to lay text out in: the terminal's (or $COLUMNS), 100 when neither is known."""
    return shutil.get_terminal_size((100, 24)).columns


def wrap_cell(text, width, indent):
    """``text`` as lines of at most ``width`` characters, the lines after the first indented by
    ``indent`` spaces, so that a long note stays under its column. Nothing is cut: a word longer
    than ``width`` (a path, ``max_bytes=990000``) gets a line of its own.

    Examples
    --------
    >>> print(wrap_cell("pass max_bytes=990000 to allow it, or use kcc", 20, 4))
    pass
        max_bytes=990000 to
        allow it, or use kcc
    """
    lines = textwrap.wrap(" ".join(text.split()), width, break_long_words=False, break_on_hyphens=False)
    return ("\n" + " " * indent).join(lines)


def _plain(value):
    """A JSON-safe scalar: NumPy floats to float, NaN and infinities to None (JSON has neither)."""
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _json_safe(obj):
    if isinstance(obj, dict):
        return {key: _json_safe(v) for key, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return _plain(obj)


def _public(row):
    return {key: _plain(v) for key, v in row.items() if key not in ("result", "summary")}


class ComparisonTable:
    """The comparison as aligned text, printable row by row while the methods run.

    Column widths are fixed up front (method names are known; numbers have a set format) so a
    slow method's row can be shown as soon as it is done. The last column (criterion, settings
    and warnings) is never cut: a note longer than the room left on the line continues on the
    next lines, under its column.

    Columns: ``K`` is the number of clusters in the method's consensus partition (the K asked
    for, or the K a method that chooses it found); ``agreement`` is the average NMI of the
    consensus with the basic partitions (ANMI, Strehl & Ghosh 2002), which needs no true labels
    and is comparable across methods; ``ARI``/``NMI`` compare with the true labels when known.
    """

    def __init__(self, names, y_known, out, width=None):
        self.out, self.y_known = out, y_known
        method = max([len("method")] + [len(n) for n in names])
        if y_known:
            self.columns = [("method", method, "<"), ("K", 3, ">"), ("ARI", 7, ">"), ("NMI", 7, ">"),
                            ("agreement", 9, ">"), ("seconds", 8, ">"), ("note", 0, "<")]
        else:
            self.columns = [("method", method, "<"), ("K", 3, ">"), ("agreement", 9, ">"), ("objective", 11, ">"),
                            ("seconds", 8, ">"), ("criterion / note", 0, "<")]
        self.indent = sum(w + 2 for _, w, _ in self.columns[:-1])
        self.note_width = max(30, (width or _terminal_width()) - self.indent - 1)
        self.failed = 0

    def _line(self, cells):
        return "  ".join(f"{c:{a}{w}}" for c, (_, w, a) in zip(cells, self.columns)).rstrip()

    def header(self):
        head = self._line([name for name, _, _ in self.columns])
        print(head, file=self.out)
        print("-" * len(head), file=self.out, flush=True)

    def row(self, r):
        if r["status"] == "error":
            self.failed += 1
        settings = _settings_text(r.get("settings") or {})
        if self.y_known:
            note = "; ".join(t for t in (settings, r["note"]) if t)
            cells = [r["method"], _fmt(r["n_clusters"], "d"), _fmt(r.get("ari"), ".4f"), _fmt(r.get("nmi"), ".4f"),
                     _fmt(r.get("agreement"), ".4f"), _fmt(r["seconds"], ".3f")]
        else:
            note = "; ".join(t for t in (r["objective_name"], settings, r["note"]) if t)
            cells = [r["method"], _fmt(r["n_clusters"], "d"), _fmt(r.get("agreement"), ".4f"),
                     _fmt(r["objective"], ".6g"), _fmt(r["seconds"], ".3f")]
        cells.append(wrap_cell(note, self.note_width, self.indent))
        print(self._line(cells), file=self.out, flush=True)

    def footer(self, n_partitions):
        legend = (f"K: clusters in each method's consensus. agreement: average NMI of the consensus with the "
                  f"{plural(n_partitions, 'basic partition')} (ANMI, Strehl & Ghosh 2002; higher is better; "
                  "needs no true labels).")
        print(wrap_cell(legend, max(30, self.indent + self.note_width), 0), file=self.out)
        if self.failed:
            print(f"{plural(self.failed, 'method')} failed (the note says why).", file=self.out)


def _sort_key(sort, y_known, command="run"):
    """The key rows are sorted by; ARI/NMI without true labels fall back to the agreement, saying so."""
    if sort in ("ari", "nmi") and not y_known:
        print(f"cclust: note: --sort {sort} needs true labels, which {'DATA' if command == 'run' else 'ENSEMBLE'} "
              f"does not have; sorting by agreement ({_AGREEMENT}) instead.", file=sys.stderr)
        return "agreement"
    return sort


def _sorted_rows(rows, sort):
    if sort == "name":
        return rows
    present = [r for r in rows if r.get(sort) is not None]
    missing = [r for r in rows if r.get(sort) is None]
    present.sort(key=lambda r: r[sort], reverse=sort in _DESCENDING)
    return present + missing


def _compare(jobs, ensemble, k, X, y, args, context, out):
    """Run a comparison and print it in ``args.format``; returns the rows in the printed order."""
    sort = _sort_key(args.sort, y is not None, getattr(args, "command", "run"))
    if args.format == "table":
        print(context["summary"], file=out, flush=True)
        table = ComparisonTable([job.label for job in jobs], y is not None, out)
        table.header()
        if sort == "name":
            rows = _run_jobs(jobs, ensemble, k, X, y, args, strict=False, on_row=table.row)
        else:
            rows = _sorted_rows(_run_jobs(jobs, ensemble, k, X, y, args, strict=False), sort)
            for row in rows:
                table.row(row)
        table.footer(ensemble.n_partitions)
        return rows
    rows = _sorted_rows(_run_jobs(jobs, ensemble, k, X, y, args, strict=False), sort)
    if args.format == "json":
        json.dump({**_public(context), "sorted_by": sort, "rows": [_public(r) for r in rows]}, out, indent=2,
                  default=str)
        out.write("\n")
        return rows
    fields = ["method", "status", "n_clusters"] + (["ari", "nmi"] if y is not None else []) + \
             ["agreement", "objective", "objective_name", "seconds", "n_iter", "converged", "settings", "note"]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    for row in rows:
        row = dict(row, settings=_settings_text(row["settings"]))
        writer.writerow(["" if row.get(f) is None else row.get(f) for f in fields])
    return rows


def cluster_sizes_text(sizes, shown=10):
    """Cluster sizes for a person: all of them when few, else the first ``shown`` and a summary.

    Examples
    --------
    >>> cluster_sizes_text([50, 62, 38])
    'sizes 50, 62, 38'
    >>> cluster_sizes_text([5] * 20 + [1, 90], shown=3)
    'sizes 5, 5, 5, ... (22 clusters: smallest 1, median 5, largest 90)'
    """
    if len(sizes) <= shown + 2:
        return f"sizes {', '.join(map(str, sizes))}"
    return (f"sizes {', '.join(map(str, sizes[:shown]))}, ... ({len(sizes)} clusters: smallest {min(sizes)}, "
            f"median {np.median(sizes):g}, largest {max(sizes)})")


def iterations_text(result):
    """What ``n_iter``/``converged`` mean for this result, or None for a one-shot method.

    ``n_iter`` counts the label updates of the run that was kept; a method with restarts
    (``extras["n_iter_per_restart"]``) also gets the total over all restarts, and 0 is
    explained: the kept restart started at a partition no update could improve.

    Examples
    --------
    >>> from cclust import ConsensusResult
    >>> iterations_text(ConsensusResult.from_labels([0, 1], n_iter=0, converged=True,
    ...                                             extras={"n_iter_per_restart": [3, 0, 4]}))
    '0 (converged: the kept restart started at a fixed point; 7 label updates over 3 restarts)'
    >>> iterations_text(ConsensusResult.from_labels([0, 1])) is None
    True
    """
    if result.n_iter is None:
        return None
    state = "converged" if result.converged else "NOT converged"
    if result.n_iter == 0 and result.converged:
        state += ": the kept restart started at a fixed point"
    per_restart = result.extras.get("n_iter_per_restart")
    if per_restart is not None and len(per_restart) > 1:
        state += f"; {plural(int(np.sum(per_restart)), 'label update')} over {len(per_restart)} restarts"
    return f"{result.n_iter} ({state})"


def _print_single(row, y, fmt, context, out, ensemble):
    result = row["result"]
    sizes = np.bincount(result.labels).tolist()
    record = {**_public(context), **_public(row), "cluster_sizes": sizes}
    if fmt == "json":
        json.dump(record, out, indent=2, default=str)
        out.write("\n")
        return
    if fmt == "csv":
        fields = [f for f in ("method", "n_clusters", "ari", "nmi", "agreement", "objective", "objective_name",
                              "seconds", "n_iter", "converged", "settings") if f in record]
        record["settings"] = _settings_text(record["settings"])
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(fields)
        writer.writerow(["" if record[f] is None else record[f] for f in fields])
        return
    settings = _settings_text(row["settings"])
    lines = [("data", context["data"]), ("ensemble", context["ensemble"]),
             ("method", f"{row['method']} ({settings})" if settings else row["method"]),
             ("clusters", f"{result.n_clusters} ({cluster_sizes_text(sizes)})"),
             ("objective", f"{result.objective:.6g}  [{result.objective_name}]")]
    iterations = iterations_text(result)
    if iterations is not None:
        lines.append(("iterations", iterations))
    if y is not None:
        lines.append(("ARI / NMI", f"{row['ari']:.4f} / {row['nmi']:.4f}  (against the true labels)"))
    lines.append(("agreement", f"{row['agreement']:.4f}  (average NMI with the "
                               f"{plural(ensemble.n_partitions, 'partition')}, ANMI; higher is better)"))
    lines.append(("time", f"{row['seconds']:.3f} s"))
    if row["note"]:
        lines.append(("warnings", row["note"]))
    width = max(len(k) for k, _ in lines)
    text_width = max(30, _terminal_width() - width - 4)
    for key, value in lines:
        print(f"{key:<{width}} : {wrap_cell(value, text_width, width + 3)}", file=out)


#: what --out writes, by the file's extension
_OUT_FORMATS = {".csv": "comma-separated", ".tsv": "tab-separated", ".json": "JSON", ".npy": "NumPy array"}


def _out_format(path):
    """The extension of an --out path, refused up front unless it names a format cclust writes."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in _OUT_FORMATS:
        allowed = ", ".join(f"{ext} ({what})" for ext, what in _OUT_FORMATS.items())
        got = repr(suffix) if suffix else "no extension"
        raise UserError(f"--out {path}: the extension names the format to write, one of {allowed}; got {got}.")
    return suffix


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _block_sigint():
    """Block SIGINT in this thread (POSIX); returns what :func:`_restore_sigint` needs."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _restore_sigint(previous):
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def _replacing(path, binary=False):
    """Open a temporary file next to ``path``; rename it over ``path`` only once it is complete.

    An error or an interruption (Ctrl-C) while writing removes the temporary file and leaves
    ``path`` as it was, so a file under the final name is always a complete one. (A process
    killed outright can leave the hidden ``.NAME.*.part`` file, never a truncated ``NAME``.)
    """
    folder, name = os.path.split(os.path.abspath(path))
    # Ctrl-C between mkstemp creating the file and returning its name would leak it: hold
    # SIGINT back until the name is known and the cleanup below is armed.
    blocked = _block_sigint()
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".part")
    except BaseException:
        _restore_sigint(blocked)
        raise
    try:
        _restore_sigint(blocked)
        os.chmod(temp, 0o666 & ~_umask())  # mkstemp's 0600 would make the result private
        kwargs = {} if binary else {"newline": "", "encoding": "utf-8"}
        with os.fdopen(fd, "wb" if binary else "w", **kwargs) as handle:
            fd = None
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        if fd is not None:  # an interruption can leave fd closed already by its file object
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_labels(path, rows):
    """Write the labels of the successful rows in the format the extension of ``path`` names.

    One label per data row of the input, in its order. ``.csv`` / ``.tsv``: a header row
    (``label`` for one method, else one column per method, named after it) then one line per
    object, comma- or tab-separated. ``.json``: one object mapping each method to its list of
    labels, ``{"kcc": [0, 2, ...]}``. ``.npy``: int64, shape (n_samples,) for one method,
    (n_samples, n_methods) for several. The file is written under a temporary name in the same
    folder and renamed when complete, so it never exists half-written.
    """
    suffix = _out_format(path)
    done = [r for r in rows if r["result"] is not None]
    if not done:
        raise UserError(f"--out {path}: no method succeeded, so there are no labels to write.")
    labels = np.column_stack([np.asarray(r["result"].labels, dtype=np.int64) for r in done])
    try:
        if suffix == ".npy":
            with _replacing(path, binary=True) as handle:
                np.save(handle, labels[:, 0] if len(done) == 1 else labels, allow_pickle=False)
        elif suffix == ".json":
            keys = [r["method"] for r in done]
            # a method asked for twice keeps both columns, as in CSV: "kcc", "kcc #2"
            keys = [k if keys[:i].count(k) == 0 else f"{k} #{keys[:i].count(k) + 1}" for i, k in enumerate(keys)]
            with _replacing(path) as handle:
                json.dump({key: labels[:, i].tolist() for i, key in enumerate(keys)}, handle)
                handle.write("\n")
        else:
            with _replacing(path) as handle:
                writer = csv.writer(handle, delimiter="\t" if suffix == ".tsv" else ",", lineterminator="\n")
                writer.writerow(["label"] if len(done) == 1 else [r["method"] for r in done])
                for start in range(0, labels.shape[0], 65536):  # in blocks: Ctrl-C is noticed between them
                    writer.writerows(labels[start:start + 65536].tolist())
    except OSError as exc:
        raise UserError(f"--out {path}: cannot write it ({exc.strerror or exc}).") from None


def _plotting():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError(f"--plot needs matplotlib: {_PLOT_HINT}") from None
    from cclust import plotting

    return plotting


def _save_figure(fig, path):
    try:
        with _replacing(path, binary=True) as handle:  # never a half-written image under the name
            fig.savefig(handle, format=os.path.splitext(path)[1].lower().lstrip("."), dpi=110, bbox_inches="tight")
    except OSError as exc:
        raise UserError(f"--plot {path}: cannot write it ({exc.strerror or exc}).") from None
    except ValueError as exc:  # e.g. an unknown image format from the extension
        raise UserError(f"--plot {path}: {exc}") from None


def _new_figure(size):
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    fig = Figure(figsize=size)
    return fig, fig.add_subplot()


def plot_rows(path, rows, ensemble, y):
    """One result: consensus matrix ordered by its labels; several: a bar chart of the methods by
    ARI against the true labels, or by their agreement with the partitions without them (the
    methods' own objectives are not comparable). Returns the figure and what it shows."""
    plotting = _plotting()
    done = [r for r in rows if r["result"] is not None]
    if not done:
        raise UserError(f"--plot {path}: no method succeeded, so there is nothing to plot.")
    if len(rows) == 1:
        fig, ax = _new_figure((6.0, 5.5))
        plotting.plot_consensus_matrix(ensemble, done[0]["result"].labels, ax=ax)
        what = f"consensus matrix of {done[0]['method']}, ordered by its clusters"
    else:
        metric = "ARI" if y is not None else "agreement (ANMI)"
        keys = {"ari": "ARI", "nmi": "NMI", "agreement": "agreement (ANMI)", "seconds": "seconds", "n_clusters": "K"}
        table = {r["method"]: {shown: r[key] for key, shown in keys.items() if r.get(key) is not None}
                 for r in done}
        fig, ax = _new_figure((max(6.0, 0.4 * len(table) + 2), 4.5))
        plotting.plot_method_comparison(table, metric=metric, ax=ax)
        what = ("bar chart of each method's ARI against the true labels" if y is not None else
                "bar chart of each method's agreement with the partitions (ANMI)")
    _save_figure(fig, path)
    return fig, what


# -- commands --------------------------------------------------------------------------------------

def _check_k(k, n):
    if not 2 <= k <= n:
        raise UserError(f"-k must be between 2 and the number of objects ({n}), got {k}.")
    return k


def _generator_call(args, X, k):
    import cclust

    gen = cclust.get(args.generator, kind="generator")
    common, scoped = parse_params(args.generator_param, "--generator-param")
    if scoped:
        raise UserError("--generator-param takes KEY=VALUE (there is only one generator).")
    for key in common:
        if not _accepts(gen, key):
            raise UserError(
                f"--generator-param {key}=...: the generator {args.generator!r} has no parameter {key!r}; its "
                f"parameters are {', '.join(_parameter_names(gen))}."
            )
    kwargs = dict(common, n_partitions=args.partitions, random_state=args.seed, n_jobs=args.jobs)
    if args.verbose and _accepts(gen, "verbose"):
        kwargs["verbose"] = args.verbose
    start = time.perf_counter()
    ensemble = gen(X, k, **kwargs)
    took = time.perf_counter() - start
    kis = ensemble.n_clusters
    text = (f"{plural(ensemble.n_partitions, f'{args.generator} partition')} (K_i {kis.min()}..{kis.max()}), "
            f"seed {args.seed}, {took:.3f} s")
    return ensemble, text


def _method_names(values):
    names = []
    for value in values or ():
        names += [v.strip() for v in value.split(",") if v.strip()]
    return names


def _pick_k(args, data):
    if args.k is not None:
        return _check_k(args.k, data.X.shape[0])
    if data.y is None:
        raise UserError("give the number of clusters with -k (DATA has no true labels to take it from).")
    return _check_k(len(np.unique(data.y)), data.X.shape[0])


def _standardize(X):
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def scale_warning(X, ratio=_SCALE_RATIO):
    """A sentence when the features' standard deviations differ by more than ``ratio``, else "".

    The generators (k-means on all, some or projected features) and the methods that read X
    measure Euclidean distances, so a feature with a large spread decides them alone. Constant
    features are left out.

    Examples
    --------
    >>> scale_warning(np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 4.0]]))
    ''
    >>> scale_warning(np.array([[0.0, 100.0], [1.0, 900.0], [2.0, 400.0]]))[:47]
    'the features differ in scale by a factor of 404'
    """
    std = np.asarray(X, dtype=np.float64).std(axis=0)
    varying = np.flatnonzero(std > 0)
    if varying.size < 2:
        return ""
    wide, narrow = varying[np.argmax(std[varying])], varying[np.argmin(std[varying])]
    factor = std[wide] / std[narrow]
    if factor <= ratio:
        return ""
    return (f"the features differ in scale by a factor of {factor:.3g} (standard deviation {std[wide]:.3g} of "
            f"feature {wide} against {std[narrow]:.3g} of feature {narrow}, 0-based), so the widest features "
            "decide the distances the partitions are built on; if every feature should count alike, pass "
            "--standardize.")


def _check_outputs(args):
    """Refuse unwritable --out/--plot paths before the work, not after it."""
    for option, path in (("--out", getattr(args, "out", None)), ("--plot", getattr(args, "plot", None))):
        if not path:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UserError(f"{option} {path}: the folder {folder} does not exist.")
        if os.path.isdir(path):
            raise UserError(f"{option} {path}: is a directory; give a file name.")
    if getattr(args, "out", None):
        _out_format(args.out)
    if getattr(args, "plot", None):
        _plotting()  # matplotlib missing: say so before the work
        from matplotlib.backend_bases import FigureCanvasBase

        suffix = os.path.splitext(args.plot)[1].lower().lstrip(".")
        formats = sorted(FigureCanvasBase.get_supported_filetypes())
        if suffix not in formats:
            raise UserError(f"--plot {args.plot}: the extension must name an image format ({', '.join(formats)}), "
                            f"got {suffix or 'none'!r}.")


def _write_outputs(args, rows, ensemble, y, out):
    if args.out:
        write_labels(args.out, rows)
        if args.format == "table":
            print(f"labels written to {args.out}", file=out)
    if args.plot:
        _, what = plot_rows(args.plot, rows, ensemble, y)
        if args.format == "table":
            print(f"figure written to {args.plot} ({what})", file=out)


def run(args, out=None):
    """``cclust run``: generate an ensemble of DATA and fuse it with one or more methods."""
    out = sys.stdout if out is None else out
    data = load_data(args.data, args.labels_column, args.header, args.missing_features)
    X = _standardize(data.X) if args.standardize else data.X
    k = _pick_k(args, data)
    notices = []
    common, scoped = parse_params(args.method_param, "--method-param")
    names = _method_names(args.method)
    if args.utilities:
        if names and names != ["kcc"]:
            raise UserError("--utilities compares KCC utilities; do not combine it with --method other than kcc.")
        if "utility" in common or "p" in common:
            raise UserError("--utilities sets utility and p itself; drop them from --method-param.")
        import cclust

        fn = cclust.get("kcc", kind="consensus")
        jobs = [Job(f"kcc {label}", "kcc", {"utility": u, "p": p}, fn=fn) for label, u, p in KCC_UTILITIES]
    else:
        jobs = _exclude(_resolve_methods(names), args.exclude)
        if not names and data.X.shape[0] > _LARGE and args.format == "table":
            print(f"cclust: note: comparing every method on {data.X.shape[0]} objects; those working on the "
                  "n x n co-association can take minutes: choose with --method or leave out with --exclude.",
                  file=sys.stderr)
    _distribute_params(jobs, common, scoped, "--method-param")
    _check_outputs(args)
    if not args.standardize and (text := scale_warning(X)):
        _warn(text, notices)
    ensemble, ens_text = _generator_call(args, X, k)
    context = {"data": data.summary(), "ensemble": ens_text, "n_clusters": k, "warnings": notices,
               "summary": f"{data.summary()}\nensemble: {ens_text}; consensus K = {k}"}
    if len(jobs) == 1:
        rows = _run_jobs(jobs, ensemble, k, X, data.y, args, strict=True)
        _print_single(rows[0], data.y, args.format, context, out, ensemble)
    else:
        rows = _compare(jobs, ensemble, k, X, data.y, args, context, out)
    _write_outputs(args, rows, ensemble, data.y, out)
    return 0


def fuse(args, out=None):
    """``cclust fuse``: fuse an ensemble read from a file."""
    from cclust.registry import method_info

    out = sys.stdout if out is None else out
    ensemble, what = load_ensemble(args.ensemble, args.header, args.missing)
    jobs = _exclude(_resolve_methods(_method_names(args.method) or ["kcc"]), args.exclude)
    common, scoped = parse_params(args.method_param, "--method-param")
    _distribute_params(jobs, common, scoped, "--method-param")
    n = ensemble.n_samples
    if args.k is None:
        needs_k = [j.method for j in jobs if not method_info(j.fn).chooses_n_clusters]
        if needs_k:
            raise UserError(f"give the number of clusters with -k ({', '.join(needs_k)} cannot choose it).")
        k = None
    else:
        k = _check_k(args.k, n)
    _check_outputs(args)
    kis = ensemble.n_clusters
    missing = int((ensemble.labels < 0).sum())
    ens_text = (f"{plural(ensemble.n_partitions, 'partition')} (K_i {kis.min()}..{kis.max()}), "
                f"{plural(missing, 'missing label')}")
    unlabelled = np.flatnonzero((ensemble.labels < 0).all(axis=1)) + 1
    if unlabelled.size:
        # such an object keeps its row (and its line in --out); its consensus label is a guess
        rows_text = ", ".join(map(str, unlabelled[:10])) + (", ..." if unlabelled.size > 10 else "")
        ens_text += (f"; {plural(unlabelled.size, 'object')} in no partition "
                     f"(data {'row' if unlabelled.size == 1 else 'rows'} {rows_text})")
    shown_k = k if k is not None else "chosen by each method"
    notices = []
    if kis.max() <= 1:
        _warn(f"every partition in {what} puts all objects in one cluster, so they give no reason to split the "
              f"objects: the consensus clusters below are arbitrary, and the agreement score says nothing. Check "
              f"that each column of the file is a partition (--header, --missing).", notices)
    context = {"data": f"{what}: {plural(n, 'object')}", "ensemble": ens_text, "n_clusters": k, "warnings": notices,
               "summary": f"{what}: {plural(n, 'object')}, {ens_text}; consensus K = {shown_k}"}
    if len(jobs) == 1:
        rows = _run_jobs(jobs, ensemble, k, None, None, args, strict=True)
        _print_single(rows[0], None, args.format, context, out, ensemble)
    else:
        rows = _compare(jobs, ensemble, k, None, None, args, context, out)
    _write_outputs(args, rows, ensemble, None, out)
    return 0


def methods(args, out=None):
    """``cclust methods``: the registry as a table."""
    import cclust
    from cclust.registry import KNOWN_PLUGINS, install_hint

    out = sys.stdout if out is None else out
    kind = None if args.kind == "all" else args.kind
    rows = sorted(cclust.available(kind=kind).values(), key=lambda r: (r.kind, r.name))
    if args.format == "json":
        json.dump([{"name": r.name, "kind": r.kind, "provider": r.provider, "description": r.description}
                   for r in rows], out, indent=2)
        out.write("\n")
        return 0
    if args.format == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["name", "kind", "provider", "description"])
        writer.writerows([[r.name, r.kind, r.provider, r.description] for r in rows])
        return 0
    body = [[r.name, r.kind, r.provider, r.description] for r in rows]
    print(format_table(body, ["name", "kind", "provider", "description"], align=["<", "<", "<", "<"]), file=out)
    if kind in (None, "consensus"):
        for name, (_, why) in KNOWN_PLUGINS.items():
            if name not in cclust.available():
                print(f"not installed: {name} ({why}): {install_hint(name)}", file=out)
    return 0


def select_k(args, out=None):
    """``cclust select-k``: consensus CDF, delta area and PAC over a range of K."""
    import cclust

    out = sys.stdout if out is None else out
    data = load_data(args.data, args.labels_column, args.header, args.missing_features)
    X = _standardize(data.X) if args.standardize else data.X
    notices = []
    if not args.standardize and (text := scale_warning(X)):
        _warn(text, notices)
    low, high = args.k_range
    n = X.shape[0]
    if not 2 <= low <= high <= n:
        raise UserError(f"--k-range must satisfy 2 <= LOW <= HIGH <= the number of objects ({n}), got {low} {high}.")
    method_params, scoped = parse_params(args.method_param, "--method-param")
    generator_params, gen_scoped = parse_params(args.generator_param, "--generator-param")
    if scoped or gen_scoped:
        raise UserError("select-k runs one method and one generator: give parameters as KEY=VALUE.")
    job = Job(args.method, args.method, fn=cclust.get(args.method, kind="consensus"))
    _distribute_params([job], method_params, {}, "--method-param")
    gen = cclust.get(args.generator, kind="generator")
    for key in generator_params:
        if not _accepts(gen, key):
            raise UserError(f"--generator-param {key}=...: the generator {args.generator!r} has no parameter "
                            f"{key!r}; its parameters are {', '.join(_parameter_names(gen))}.")
    _check_outputs(args)
    try:
        select = cclust.select_k
    except ImportError as exc:
        raise UserError(f"select-k is not available in this installation of cclust ({exc}).") from None
    result = select(X, range(low, high + 1), method=args.method, generator=args.generator,
                    n_partitions=args.partitions, n_resamples=args.resamples, subsample=args.subsample,
                    method_params=method_params or None, generator_params=generator_params or None,
                    criterion=args.criterion, random_state=args.seed, n_jobs=args.jobs, verbose=args.verbose)
    for text in result.warnings:
        _warn(f"--k-range {low} {high}: {text}")
    if args.format == "json":
        record = result.to_dict()
        record.pop("consensus_matrices", None)
        record.pop("labels", None)
        record["warnings"] = notices + list(result.warnings)
        json.dump(_json_safe({"data": data.summary(), **record}), out, indent=2)
        out.write("\n")
    elif args.format == "csv":
        table = result.as_table()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(list(table) + ["best"])
        for i, k in enumerate(table["k"]):
            writer.writerow([table[c][i] for c in table] + [k == result.best_k])
    else:
        print(data.summary(), file=out)
        # the warnings went to standard error above; not twice on a terminal
        print(dataclasses.replace(result, warnings=()).summary(), file=out)
        if data.y is not None:
            print(f"(the data's true labels have {plural(len(np.unique(data.y)), 'class')})", file=out)
    if args.out:
        labels = result.labels[result.best_k]
        row = {"method": f"{args.method} K={result.best_k}", "result": cclust.ConsensusResult.from_labels(labels)}
        write_labels(args.out, [row])
        if args.format == "table":
            print(f"labels at K = {result.best_k} written to {args.out}", file=out)
    if args.plot:
        _save_figure(_plotting().plot_select_k(result), args.plot)
        if args.format == "table":
            print(f"figure written to {args.plot}", file=out)
    return 0


def show_config(args, out=None):
    """``cclust show-config``: what ``cclust.show_config()`` prints (versions, threads, extras, plugins)."""
    import cclust

    cclust.show_config(file=sys.stdout if out is None else out)
    return 0


# -- the parser ------------------------------------------------------------------------------------

_OUT_HELP = ("write the labels, one per data row, in the format the extension names: .csv or .tsv (header "
             "'label', or one column per method), .json ({method: [labels]}) or .npy")

_EPILOG_RUN = """\
examples:
  cclust run iris                              compare every consensus method on iris
  cclust run iris --method kcc --plot iris.png one method, consensus-matrix heatmap
  cclust run data.csv --labels-column class    CSV with the true classes in column 'class'
  cclust run wine --standardize --utilities    KCC under the ten utilities of Wu et al. 2015
  cclust run iris --method kcc --method-param utility=uc --method-param n_init=20

DATA: a bundled dataset (iris, wine), a CSV (.csv/.tsv/.txt, numeric feature columns, header row
detected), an .npy file with X, or an .npz file with X and optionally y. Files are never unpickled.
Every data row is one object: an empty feature cell or row (`,`) is refused with its line, unless
--missing-features mean; empty lines after the last row are not rows.
--method-param values: none/null, true/false, ints, floats, commas for tuples (k_range=2,6),
otherwise text; METHOD:KEY=VALUE targets one method, KEY=VALUE every method that takes KEY.
output: one row per method. K = clusters in the method's consensus; ARI/NMI against the true
labels (when DATA has them); agreement = average NMI of the consensus with the basic partitions
(ANMI, Strehl & Ghosh 2002; higher is better, no true labels needed); without true labels also
the method's own criterion, which is not comparable across methods.
"""

_EPILOG_FUSE = """\
The file holds one column per partition (CSV with or without a header; labels may be numbers or
words; an empty cell, or the --missing value, marks an object missing from that partition), or an
.npy array (n_samples, n_partitions), or an .npz archive with an array 'labels'. Every data row is
one object: a row of empty cells (`,`, or an empty line between rows) is an object missing from
every partition; empty lines after the last row are not rows.
output: one row per method. K = clusters in the method's consensus; agreement = average NMI of
the consensus with the partitions (ANMI, Strehl & Ghosh 2002; higher is better); the criterion is
the method's own and not comparable across methods.
examples:
  cclust fuse partitions.csv -k 3
  cclust fuse partitions.csv -k 3 --method cspa --method mcla
  cclust fuse partitions.csv --method addremadd          (chooses K itself)
"""


def _add_generation_options(p, *, partitions, what):
    """The options of commands that generate the basic partitions themselves (run, select-k)."""
    p.add_argument("--generator", default="kmeans", metavar="G", help="basic-partition generator (default kmeans)")
    p.add_argument("--partitions", type=_positive_int, default=partitions, metavar="R",
                   help=f"{what} (default {partitions})")
    p.add_argument("--generator-param", action="append", metavar="KEY=VALUE", help="parameter for the generator")
    p.add_argument("--seed", type=_seed, default=0, metavar="S", help="random seed (default 0)")


def _add_common_output(p, comparison=True, labels=True):
    if comparison:
        p.add_argument("-x", "--exclude", action="append", metavar="M",
                       help="leave method M out of the comparison (repeat or comma-separate)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="output format (default table)")
    if comparison and labels:
        p.add_argument("--sort", choices=("name", "agreement", "ari", "nmi", "seconds"), default="name",
                       help="order of the comparison rows (default name; agreement, ari and nmi put the best "
                            "first; ari/nmi need true labels and fall back to agreement, with a note, without)")
    elif comparison:
        p.add_argument("--sort", choices=("name", "agreement", "seconds"), default="name",
                       help="order of the comparison rows (default name; agreement puts the best first)")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="threads (default: every core; results do not depend on it)")
    p.add_argument("-v", "--verbose", action="count", default=0, help="progress bars on a terminal")


def _add_data_options(p):
    p.add_argument("--labels-column", default=None, metavar="NAME|INDEX",
                   help="CSV column holding the true classes (name from the header, or 0-based index; "
                        "negative counts from the end). Default: none, every column is a feature")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="whether the CSV's first row names the columns (default: detect)")
    p.add_argument("--standardize", action="store_true",
                   help="z-score every feature before clustering. Off by default: it lowers ARI where the "
                        "features share a scale (iris: kcc 0.73 -> 0.68); a warning suggests it when their standard "
                        f"deviations differ more than {_SCALE_RATIO:g}-fold, where it mostly helps (wine: kcc "
                        "0.37 -> 0.85; breast cancer, dermatology, australian)")
    p.add_argument("--missing-features", choices=("error", "mean"), default="error",
                   help="an empty or NaN feature value: refuse it, naming its line and column (default), or "
                        "fill it with its column's mean")


def _int_option(low, what):
    """An argparse type: an int >= ``low`` (``what`` describes the allowed values)."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
        return value

    return parse


_positive_int = _int_option(1, "a positive integer")
_seed = _int_option(0, "a non-negative integer")


def _jobs(text):
    if text.strip() == "-1":
        return -1
    return _int_option(1, "a positive integer or -1 (every core)")(text)


def build_parser():
    """The :class:`argparse.ArgumentParser` of the ``cclust`` command (also used by the docs).

    Returns
    -------
    parser : argparse.ArgumentParser
        Its ``error()`` raises :class:`UserError` instead of exiting, so :func:`main` reports
        every mistake in one line.
    """
    import cclust

    parser = _ArgumentParser(
        prog="cclust", description="Consensus clustering: generate basic partitions, fuse them, compare methods.",
        epilog="Run `cclust COMMAND --help` for the options of a command.")
    parser.add_argument("--version", action="version", version=f"cclust {cclust.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", help="cluster DATA: compare every consensus method, or run one",
                       description="Generate basic partitions of DATA and fuse them with consensus methods.",
                       epilog=_EPILOG_RUN, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", metavar="DATA", help="iris, wine, or a .csv/.tsv/.txt/.npy/.npz file")
    p.add_argument("-m", "--method", action="append", metavar="M",
                   help="consensus method (repeat or comma-separate for several; default: every registered one)")
    p.add_argument("-k", "--n-clusters", dest="k", type=int, default=None, metavar="K",
                   help="clusters in the consensus (default: the number of true classes)")
    _add_generation_options(p, partitions=100, what="basic partitions")
    p.add_argument("--method-param", action="append", metavar="KEY=VALUE", help="parameter for the method(s)")
    p.add_argument("--utilities", action="store_true",
                   help="compare KCC under every utility (Uc, UH, Ucos, UL5, UL8 and normalised forms); "
                        "KCC++ starts by default, --method-param init=random for Wu et al.'s random objects")
    p.add_argument("-o", "--out", metavar="FILE", help=_OUT_HELP)
    p.add_argument("--plot", metavar="FILE.png", help="one method: consensus matrix ordered by the labels; "
                                                      "several: a bar chart of each method's ARI against the "
                                                      "true labels, or of its agreement (ANMI) without them "
                                                      "(needs cclust[plot])")
    _add_data_options(p)
    _add_common_output(p)
    p.set_defaults(func=run)

    p = sub.add_parser("fuse", help="fuse partitions you already have (one column per partition)",
                       description="Fuse the partitions in ENSEMBLE into one consensus partition.",
                       epilog=_EPILOG_FUSE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ensemble", metavar="ENSEMBLE", help=".csv/.tsv/.txt, .npy or .npz file")
    p.add_argument("-k", "--n-clusters", dest="k", type=int, default=None, metavar="K",
                   help="clusters in the consensus (required unless the method chooses K)")
    p.add_argument("-m", "--method", action="append", metavar="M", help="consensus method (default kcc; "
                                                                      "repeat for a comparison)")
    p.add_argument("--seed", type=_seed, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--missing", default="-1", metavar="VALUE",
                   help="label that marks a missing object, besides empty cells (default -1; '' for none)")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="whether the CSV's first row names the partitions (default: detect)")
    p.add_argument("--method-param", action="append", metavar="KEY=VALUE", help="parameter for the method(s)")
    p.add_argument("-o", "--out", metavar="FILE", help=_OUT_HELP)
    p.add_argument("--plot", metavar="FILE.png", help="one method: consensus-matrix heatmap ordered by the labels; "
                                                      "several: a bar chart of each method's agreement with the "
                                                      "partitions, ANMI (needs cclust[plot])")
    _add_common_output(p, labels=False)
    p.set_defaults(func=fuse)

    p = sub.add_parser("select-k", help="choose K: consensus CDF, delta area and PAC per K",
                       description="Resample, cluster and fuse DATA for each K in a range; report Monti et "
                                   "al.'s consensus CDF area, delta area and PAC, and the recommended K.")
    p.add_argument("data", metavar="DATA", help="iris, wine, or a .csv/.tsv/.txt/.npy/.npz file")
    p.add_argument("--k-range", nargs=2, type=int, required=True, metavar=("LOW", "HIGH"),
                   help="inclusive range of K to try")
    p.add_argument("-m", "--method", default="kcc", metavar="M", help="consensus method (default kcc)")
    p.add_argument("--resamples", type=_positive_int, default=50, metavar="N",
                   help="resampled runs per K (Monti et al.'s H; default 50)")
    p.add_argument("--subsample", type=float, default=0.8, metavar="F",
                   help="fraction of the objects in each resample (default 0.8)")
    p.add_argument("--criterion", choices=("pac", "delta_area", "objective"), default="pac",
                   help="how the recommended K is chosen (default pac: the lowest PAC)")
    _add_generation_options(p, partitions=50, what="basic partitions per run")
    p.add_argument("--method-param", action="append", metavar="KEY=VALUE", help="parameter for the method")
    p.add_argument("-o", "--out", metavar="FILE",
                   help=_OUT_HELP.replace("the labels", "the labels at the recommended K"))
    p.add_argument("--plot", metavar="FILE.png", help="consensus CDF and delta-area curves (needs cclust[plot])")
    _add_data_options(p)
    _add_common_output(p, comparison=False)
    p.set_defaults(func=select_k)

    p = sub.add_parser("methods", help="list the registry (consensus methods, generators, metrics, utilities)",
                       description="List registered names with kind, providing distribution and description.")
    p.add_argument("--kind", choices=("consensus", "generator", "metric", "utility", "all"), default="all",
                   help="only this kind (default all)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.set_defaults(func=methods)

    p = sub.add_parser("show-config", help="versions, OpenMP, threads, extras and plugins",
                       description="Print versions, OpenMP support, threads, optional extras and plugins.")
    p.set_defaults(func=show_config)
    return parser


def main(argv=None):
    """Run the ``cclust`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; default ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success; 2 for a user error, reported as one line ``cclust: error: ...`` on
        standard error; 130 when interrupted. Unexpected internal errors propagate.

    Examples
    --------
    >>> main(["methods", "--kind", "utility", "--format", "csv"])  # doctest: +ELLIPSIS
    name,kind,provider,description
    nuc,utility,cclust,...
    0
    """
    from cclust.errors import CclustError

    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except (UserError, CclustError) as exc:
        _error(str(exc))
    except KeyboardInterrupt:
        print("cclust: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `cclust methods | head`: the reader left; exit quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout without a file descriptor (captured)
            pass
        return 0
    return 2


def _error(message):
    print(f"cclust: error: {' '.join(message.split())}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
