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
  columns of words, when every first cell occurs nowhere else in its column; ``--header yes|no``
  overrides the guess.
* ``--method-param KEY=VALUE`` (and ``--generator-param``) values are read as ``none``/``null``
  -> None, ``true``/``false`` -> bool, an integer -> int, a number -> float, otherwise the text;
  a value with commas is a tuple of such values (``k_range=2,6``). ``METHOD:KEY=VALUE`` gives a
  parameter to one method only; a plain ``KEY=VALUE`` goes to every selected method that takes
  ``KEY`` (and is an error if none does).
* User files are never unpickled (``allow_pickle=False``).
* A user error prints one line ``cclust: error: ...`` on standard error and exits with status 2.
"""
import argparse
import csv
import inspect
import json
import math
import os
import sys
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


def _read_rows(path):
    """The cells (stripped strings) of a delimited text file, and each row's line number."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a file.") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: cannot read it as CSV: it is not UTF-8 text (a binary file?).") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc}).") from None
    if "\0" in text:
        raise UserError(f"{path}: cannot read it as CSV: it holds NUL bytes (a binary file?).")
    if path.lower().endswith(".tsv"):
        delimiter = "\t"
    else:
        try:
            delimiter = csv.Sniffer().sniff(text[:65536], delimiters=",;\t").delimiter
        except csv.Error:
            delimiter = ","
    reader = csv.reader(text.splitlines(), delimiter=delimiter)
    rows, lines = [], []
    try:
        for row in reader:
            cells = [cell.strip() for cell in row]
            if any(cells):
                rows.append(cells)
                lines.append(reader.line_num)
    except csv.Error as exc:
        raise UserError(f"{path}: cannot read it as CSV (line {reader.line_num}: {exc}).") from None
    if not rows:
        raise UserError(f"{path}: the file is empty.")
    width = len(rows[0])
    for row, line in zip(rows, lines):
        if len(row) != width:
            raise UserError(
                f"{path}: cannot read it as CSV: line {line} has {len(row)} fields, line {lines[0]} has "
                f"{width} (delimiter {delimiter!r})."
            )
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
        if len(rows) < 2:
            raise UserError("--header yes: the file has a header row but no data below it.")
        return True
    if header == "no":
        return False
    return _detect_header(rows)


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
        classes = f", {len(np.unique(self.y))} classes" if self.y is not None else ""
        return f"{self.description}: {n} objects, {d} features{classes}"


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


def _load_csv_data(path, labels_column, header):
    rows, lines = _read_rows(path)
    has_header = _header_choice(rows, header)
    names = rows[0] if has_header else None
    body, body_lines = (rows[1:], lines[1:]) if has_header else (rows, lines)
    n_columns = len(rows[0])
    label_j = _column_index(labels_column, names, n_columns, path) if labels_column is not None else None
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
            for cell, line in zip(cells, body_lines):
                if cell == "":
                    raise UserError(
                        f"{path}: {name} has an empty cell on line {line}; fill in or drop missing values first."
                    )
                if not _is_number(cell) or not math.isfinite(float(cell)):
                    hint = "" if label_j is not None else \
                        f"; if it holds the true classes, pass --labels-column {names[j] if names else j}"
                    raise UserError(
                        f"{path}: {name} is not numeric: line {line} holds {cell!r}. cclust clusters "
                        f"numeric features only: drop or encode that column{hint}."
                    )
        columns.append(values)
    if not columns:
        raise UserError(f"{path}: no feature column is left besides the labels column.")
    X = np.column_stack(columns)
    y = None
    if label_j is not None:
        raw = [row[label_j] for row in body]
        if "" in raw:
            line = body_lines[raw.index("")]
            raise UserError(f"{path}: the labels column has an empty cell on line {line}; every object needs a class.")
        y = _encode_classes(np.array(raw), f"{path}: the labels column")
    return Dataset(X, y, path)


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
    try:
        return check_array_2d(X, "X")
    except ValidationError as exc:
        raise UserError(f"{where}: {exc}") from None


def load_data(source, labels_column=None, header="auto"):
    """Read the DATA argument of ``cclust run`` and ``cclust select-k``.

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
        Whether the CSV's first row names the columns; "auto" detects it.

    Returns
    -------
    Dataset

    Raises
    ------
    UserError
        Missing or unreadable file, wrong type, a non-numeric or empty feature cell (the message
        names the column by header name and index, and the line).

    Examples
    --------
    >>> data = load_data("iris")
    >>> data.X.shape, data.summary()
    ((150, 4), "bundled dataset 'iris': 150 objects, 4 features, 3 classes")
    """
    from cclust import datasets

    if source in datasets.names():
        if labels_column is not None:
            raise UserError(f"--labels-column is for CSV files; the bundled {source!r} has its labels.")
        X, y = datasets.load(source)
        return Dataset(X, y, f"bundled dataset {source!r}")
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
        return _load_csv_data(source, labels_column, header)
    if labels_column is not None:
        raise UserError("--labels-column is for CSV files; an .npz file carries its labels as the array 'y'.")
    loaded = _load_npy(source)
    if suffix == ".npy":
        if isinstance(loaded, np.lib.npyio.NpzFile):
            loaded.close()
            raise UserError(f"{source}: it is an .npz archive despite its name; rename it to .npz.")
        return Dataset(_check_X(loaded, source), None, source)
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise UserError(f"{source}: it is a single .npy array, not an .npz archive; rename it to .npy.")
    with loaded:
        try:
            files = list(loaded.files)
            if "X" not in files:
                raise UserError(f"{source}: the .npz archive has no array named 'X' (it has {files}).")
            X = _check_X(loaded["X"], source)
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
        only array). Never unpickled.
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

    suffix = os.path.splitext(path)[1].lower()
    if suffix in _CSV_SUFFIXES:
        rows, _ = _read_rows(path)
        has_header = _header_choice(rows, header)
        names = rows[0] if has_header else None
        body = rows[1:] if has_header else rows
        if len(body) < 2:
            raise UserError(f"{path}: the ensemble must label at least 2 objects, got {len(body)} row(s).")
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
        array = loaded
    if array.dtype.kind in "biuf":
        marker = parse_value(missing) if missing != "" else None
        marker = marker if isinstance(marker, (int, float)) and not isinstance(marker, bool) else None
        try:
            return Ensemble(array, missing=marker), path
        except ValidationError as exc:
            raise UserError(f"{path}: {exc}") from None
    if array.dtype.kind in "US":
        array = array.astype(str)
        if array.ndim == 1:
            array = array[:, None]
        if array.ndim != 2:
            raise UserError(f"{path}: labels must be 2-D (n_samples, n_partitions), got shape {array.shape}.")
        columns = [_encode_partition(list(array[:, j]), missing, f"{path}: partition {j}")
                   for j in range(array.shape[1])]
        return Ensemble(np.column_stack(columns)), path
    raise UserError(f"{path}: labels must be numbers or strings, got dtype {array.dtype}.")


# -- running consensus methods ---------------------------------------------------------------------

class Job:
    """One row of a comparison: a label, the registered method and its parameters."""

    def __init__(self, label, method, params=None, fn=None, error=None):
        self.label, self.method, self.params = label, method, dict(params or {})
        self.fn, self.error = fn, error


def _short(exc):
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _resolve_methods(names):
    """Jobs for the named methods (errors raise), or for every registered method (errors recorded)."""
    import cclust
    from cclust.errors import CclustError
    from cclust.registry import KNOWN_PLUGINS

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
    for name, (dist, why) in KNOWN_PLUGINS.items():
        if name not in rows:
            jobs.append(Job(name, name, error=f"not installed: pip install {dist} ({why})"))
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


def _run_job(job, ensemble, k, X, seed, jobs_option, strict):
    """Run one job; returns a result row (dict). ``strict`` lets errors propagate."""
    from cclust.estimator import call_method
    from cclust.registry import method_info

    row = {"method": job.label, "status": "ok", "n_clusters": None, "objective": None,
           "objective_name": None, "seconds": None, "n_iter": None, "converged": None, "note": "",
           "result": None}
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
               n_iter=result.n_iter, converged=result.converged, note="; ".join(notes), result=result)
    return row


def _score_row(row, y):
    import cclust

    if y is not None and row["result"] is not None:
        row["ari"] = float(cclust.get("ari")(y, row["result"].labels))
        row["nmi"] = float(cclust.get("nmi")(y, row["result"].labels))


def _run_jobs(jobs, ensemble, k, X, y, args, strict, on_row=None):
    """Run every job in order; ``on_row(row)`` sees each row as soon as it is done."""
    from cclust._progress import progress

    rows = []
    with progress(total=len(jobs), desc="consensus methods", verbose=args.verbose) as bar:
        for job in jobs:
            row = _run_job(job, ensemble, k, X, args.seed, args.jobs, strict)
            _score_row(row, y)
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

    head = line(header)
    return "\n".join([head, "-" * len(head)] + [line(r) for r in rows])


def _fmt(value, spec):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _clip(text, width=80):
    return text if len(text) <= width else text[: width - 3] + "..."


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
    slow method's row can be shown as soon as it is done; a longer value just widens its line.
    """

    def __init__(self, names, y_known, out):
        self.out, self.y_known = out, y_known
        method = max([len("method")] + [len(n) for n in names])
        if y_known:
            self.columns = [("method", method, "<"), ("K", 3, ">"), ("ARI", 7, ">"), ("NMI", 7, ">"),
                            ("seconds", 8, ">"), ("note", 0, "<")]
        else:
            self.columns = [("method", method, "<"), ("K", 3, ">"), ("objective", 11, ">"),
                            ("seconds", 8, ">"), ("criterion / note", 0, "<")]
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
        if self.y_known:
            cells = [r["method"], _fmt(r["n_clusters"], "d"), _fmt(r.get("ari"), ".4f"), _fmt(r.get("nmi"), ".4f"),
                     _fmt(r["seconds"], ".3f"), _clip(r["note"])]
        else:
            note = "; ".join(t for t in (r["objective_name"], r["note"]) if t)
            cells = [r["method"], _fmt(r["n_clusters"], "d"), _fmt(r["objective"], ".6g"), _fmt(r["seconds"], ".3f"),
                     _clip(note)]
        print(self._line(cells), file=self.out, flush=True)

    def footer(self):
        if self.failed:
            print(f"{self.failed} method(s) failed; --format json shows the full messages.", file=self.out)


def _sorted_rows(rows, sort):
    if sort == "name":
        return rows
    present = [r for r in rows if r.get(sort) is not None]
    missing = [r for r in rows if r.get(sort) is None]
    present.sort(key=lambda r: r[sort], reverse=sort in ("ari", "nmi"))
    return present + missing


def _compare(jobs, ensemble, k, X, y, args, context, out):
    """Run a comparison and print it in ``args.format``; returns the rows in the printed order."""
    if args.format == "table":
        print(context["summary"], file=out, flush=True)
        table = ComparisonTable([job.label for job in jobs], y is not None, out)
        table.header()
        if args.sort == "name":
            rows = _run_jobs(jobs, ensemble, k, X, y, args, strict=False, on_row=table.row)
        else:
            rows = _sorted_rows(_run_jobs(jobs, ensemble, k, X, y, args, strict=False), args.sort)
            for row in rows:
                table.row(row)
        table.footer()
        return rows
    rows = _sorted_rows(_run_jobs(jobs, ensemble, k, X, y, args, strict=False), args.sort)
    if args.format == "json":
        json.dump({**_public(context), "rows": [_public(r) for r in rows]}, out, indent=2, default=str)
        out.write("\n")
        return rows
    fields = ["method", "status", "n_clusters"] + (["ari", "nmi"] if y is not None else []) + \
             ["objective", "objective_name", "seconds", "n_iter", "converged", "note"]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    for row in rows:
        writer.writerow(["" if row.get(f) is None else row.get(f) for f in fields])
    return rows


def _print_single(row, y, fmt, context, out, ensemble):
    import cclust

    result = row["result"]
    sizes = np.bincount(result.labels).tolist()
    agreement = float(cclust.get("consensus-score")(result.labels, ensemble))
    record = {**_public(context), **_public(row), "cluster_sizes": sizes, "average_nmi_with_ensemble": agreement}
    if fmt == "json":
        json.dump(record, out, indent=2, default=str)
        out.write("\n")
        return
    if fmt == "csv":
        fields = [f for f in ("method", "n_clusters", "ari", "nmi", "objective", "objective_name", "seconds",
                              "n_iter", "converged", "average_nmi_with_ensemble") if f in record]
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(fields)
        writer.writerow(["" if record[f] is None else record[f] for f in fields])
        return
    lines = [("data", context["data"]), ("ensemble", context["ensemble"]),
             ("method", row["method"]),
             ("clusters", f"{result.n_clusters} (sizes {', '.join(map(str, sizes))})"),
             ("objective", f"{result.objective:.6g}  [{result.objective_name}]"),
             ("iterations", f"{result.n_iter} ({'converged' if result.converged else 'NOT converged'})")]
    if y is not None:
        lines.append(("ARI / NMI", f"{row['ari']:.4f} / {row['nmi']:.4f}  (against the true labels)"))
    lines.append(("agreement", f"{agreement:.4f}  (average NMI with the {ensemble.n_partitions} partitions)"))
    lines.append(("time", f"{row['seconds']:.3f} s"))
    if row["note"]:
        lines.append(("warnings", row["note"]))
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        print(f"{key:<{width}} : {value}", file=out)


def write_labels(path, rows):
    """Write the labels of the successful rows: CSV (a column per method) or .npy."""
    done = [r for r in rows if r["result"] is not None]
    if not done:
        raise UserError(f"--out {path}: no method succeeded, so there are no labels to write.")
    try:
        if path.lower().endswith(".npy"):
            labels = done[0]["result"].labels if len(done) == 1 else \
                np.column_stack([r["result"].labels for r in done])
            np.save(path, np.asarray(labels, dtype=np.int64), allow_pickle=False)
        else:
            with open(path, "w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle, lineterminator="\n")
                writer.writerow(["label"] if len(done) == 1 else [r["method"] for r in done])
                writer.writerows(np.column_stack([r["result"].labels for r in done]).tolist())
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
        fig.savefig(path, dpi=110, bbox_inches="tight")
    except OSError as exc:
        raise UserError(f"--plot {path}: cannot write it ({exc.strerror or exc}).") from None
    except ValueError as exc:  # e.g. an unknown image format from the extension
        raise UserError(f"--plot {path}: {exc}") from None


def _new_figure(size):
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    fig = Figure(figsize=size)
    return fig, fig.add_subplot()


def plot_rows(path, rows, ensemble, y):
    """One result: consensus matrix ordered by its labels; several: a method-comparison chart."""
    plotting = _plotting()
    done = [r for r in rows if r["result"] is not None]
    if not done:
        raise UserError(f"--plot {path}: no method succeeded, so there is nothing to plot.")
    if len(rows) == 1:
        fig, ax = _new_figure((6.0, 5.5))
        plotting.plot_consensus_matrix(ensemble, done[0]["result"].labels, ax=ax)
    else:
        # Objectives of different methods are not comparable; without true labels, show time.
        metric = "ARI" if y is not None else "seconds"
        keys = {"ari": "ARI", "nmi": "NMI", "seconds": "seconds", "n_clusters": "K"}
        table = {r["method"]: {shown: r[key] for key, shown in keys.items() if r.get(key) is not None}
                 for r in done}
        fig, ax = _new_figure((max(6.0, 0.4 * len(table) + 2), 4.5))
        plotting.plot_method_comparison(table, metric=metric, ax=ax)
    _save_figure(fig, path)


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
    text = (f"{ensemble.n_partitions} {args.generator} partitions (K_i {kis.min()}..{kis.max()}), seed {args.seed}, "
            f"{took:.3f} s")
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
        plot_rows(args.plot, rows, ensemble, y)
        if args.format == "table":
            print(f"figure written to {args.plot}", file=out)


def run(args, out=None):
    """``cclust run``: generate an ensemble of DATA and fuse it with one or more methods."""
    out = sys.stdout if out is None else out
    data = load_data(args.data, args.labels_column, args.header)
    X = _standardize(data.X) if args.standardize else data.X
    k = _pick_k(args, data)
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
    ensemble, ens_text = _generator_call(args, X, k)
    context = {"data": data.summary(), "ensemble": ens_text, "n_clusters": k,
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
    ens_text = f"{ensemble.n_partitions} partitions (K_i {kis.min()}..{kis.max()}), {missing} missing label(s)"
    shown_k = k if k is not None else "chosen by each method"
    context = {"data": f"{what}: {n} objects", "ensemble": ens_text, "n_clusters": k,
               "summary": f"{what}: {n} objects, {ens_text}; consensus K = {shown_k}"}
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
    from cclust.registry import KNOWN_PLUGINS

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
        for name, (dist, why) in KNOWN_PLUGINS.items():
            if name not in cclust.available():
                print(f"not installed: {name} (pip install {dist}; {why})", file=out)
    return 0


def select_k(args, out=None):
    """``cclust select-k``: consensus CDF, delta area and PAC over a range of K."""
    import cclust

    out = sys.stdout if out is None else out
    data = load_data(args.data, args.labels_column, args.header)
    X = _standardize(data.X) if args.standardize else data.X
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
    if args.format == "json":
        record = result.to_dict()
        record.pop("consensus_matrices", None)
        record.pop("labels", None)
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
        print(result.summary(), file=out)
        if data.y is not None:
            print(f"(the data's true labels have {len(np.unique(data.y))} classes)", file=out)
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
    """``cclust show-config``: versions, threads, extras and plugins."""
    from importlib import metadata

    import cclust

    out = sys.stdout if out is None else out
    info = cclust.show_config(file=out)
    extras = {"plot": "matplotlib", "progress": "tqdm", "dask": "dask", "sklearn": "scikit-learn",
              "hypergraph": "mtkahypar"}
    lines = []
    for extra, dist in extras.items():
        try:
            lines.append((f"extra {extra}", f"{dist} {metadata.version(dist)}"))
        except metadata.PackageNotFoundError:
            lines.append((f"extra {extra}", f"not installed (pip install 'cclust[{extra}]')"))
    plugins = sorted({r.provider for r in cclust.available().values() if r.provider != "cclust"})
    lines.append(("plugins", ", ".join(plugins) or "none"))
    width = max(max(len(k) for k in info), max(len(k) for k, _ in lines))
    for key, value in lines:
        print(f"{key:<{width}} : {value}", file=out)
    return 0


# -- the parser ------------------------------------------------------------------------------------

_EPILOG_RUN = """\
examples:
  cclust run iris                              compare every consensus method on iris
  cclust run iris --method kcc --plot iris.png one method, consensus-matrix heatmap
  cclust run data.csv --labels-column class    CSV with the true classes in column 'class'
  cclust run wine --standardize --utilities    KCC under the ten utilities of Wu et al. 2015
  cclust run iris --method kcc --method-param utility=uc --method-param n_init=20

DATA: a bundled dataset (iris, wine), a CSV (.csv/.tsv/.txt, numeric feature columns, header row
detected), an .npy file with X, or an .npz file with X and optionally y. Files are never unpickled.
--method-param values: none/null, true/false, ints, floats, commas for tuples (k_range=2,6),
otherwise text; METHOD:KEY=VALUE targets one method, KEY=VALUE every method that takes KEY.
"""

_EPILOG_FUSE = """\
The file holds one column per partition (CSV with or without a header; labels may be numbers or
words; an empty cell, or the --missing value, marks an object missing from that partition), or an
.npy array (n_samples, n_partitions), or an .npz archive with an array 'labels'.
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


def _add_common_output(p, comparison=True):
    if comparison:
        p.add_argument("-x", "--exclude", action="append", metavar="M",
                       help="leave method M out of the comparison (repeat or comma-separate)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="output format (default table)")
    if comparison:
        p.add_argument("--sort", choices=("name", "ari", "nmi", "seconds"), default="name",
                       help="order of the comparison rows (default name; ari/nmi need true labels)")
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
                   help="z-score every feature before clustering")


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
                   help="compare KCC under every utility (Uc, UH, Ucos, UL5, UL8 and normalised forms)")
    p.add_argument("-o", "--out", metavar="FILE", help="write the labels: .csv (header 'label', or one column "
                                                       "per method) or .npy")
    p.add_argument("--plot", metavar="FILE.png", help="one method: consensus matrix ordered by the labels; "
                                                      "several: a bar chart of the methods (needs cclust[plot])")
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
    p.add_argument("-o", "--out", metavar="FILE", help="write the labels (.csv or .npy)")
    p.add_argument("--plot", metavar="FILE.png", help="consensus-matrix heatmap (needs cclust[plot])")
    _add_common_output(p)
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
    p.add_argument("-o", "--out", metavar="FILE", help="write the labels at the recommended K (.csv or .npy)")
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
