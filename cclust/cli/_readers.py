"""The input readers: DATA (bundled names, CSV, ``.npy``, ``.npz``) and ENSEMBLE files.

The CSV conventions they follow (delimiter, header detection, one object per data row) are in
:mod:`cclust.cli`'s docstring.
"""
import csv
import io
import math
import os
import re

import numpy as np

from cclust.cli._messages import UserError, plural
from cclust.cli._parameters import parse_value


_CSV_SUFFIXES = (".csv", ".tsv", ".txt")


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
    from cclust.validation import check_array_2d
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


def _soft_partitions(archive, files, path):
    """A SoftEnsemble from an .npz archive of membership matrices ``membership_0``,
    ``membership_1``, ... (one n x K_i array per partition, rows summing to one), or None
    when the archive holds none."""
    from cclust.errors import ValidationError
    from cclust.soft import SoftEnsemble

    names = [f for f in files if re.fullmatch(r"membership_\d+", f)]
    if not names:
        return None
    names.sort(key=lambda f: int(f.split("_")[1]))
    try:
        return SoftEnsemble([archive[f] for f in names])
    except ValueError as exc:  # ValidationError, or an array that needs unpickling
        raise UserError(f"{path}: {exc}") from None


def load_ensemble(path, header="auto", missing="-1"):
    """Read the ENSEMBLE argument of ``cclust fuse``.

    Parameters
    ----------
    path : str
        A ``.csv``/``.tsv``/``.txt`` file with one column per partition (labels may be any
        numbers or words; an empty cell marks a missing object), an ``.npy`` array of shape
        (n_samples, n_partitions), or an ``.npz`` archive holding it as ``labels`` (or as its
        only array), or soft partitions as arrays ``membership_0``, ``membership_1``, ...
        (n_samples x K_i, rows summing to one; a :class:`cclust.soft.SoftEnsemble`). Never unpickled. Every data row is one object, in file order: a CSV line
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
    ensemble : Ensemble or SoftEnsemble
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
        # the header names what made each partition (cclust run --save-ensemble writes it so)
        provenance = [cell.strip() for cell in names] if names else None
        return Ensemble(np.column_stack(columns), provenance=provenance), f"{path}"
    if suffix not in (".npy", ".npz"):
        if not os.path.exists(path):
            raise UserError(f"{path}: no such file.")
        raise UserError(f"{path}: unsupported file type {suffix or '(no extension)'!r}; give a .csv/.tsv/.txt, "
                        ".npy or .npz file with one column per partition.")
    loaded = _load_npy(path)
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            files = list(loaded.files)
            soft = _soft_partitions(loaded, files, path)
            if soft is not None:
                return soft, f"{path}: {soft.n_partitions} membership matrices"
            key = "labels" if "labels" in files else (files[0] if len(files) == 1 else None)
            if key is None:
                raise UserError(f"{path}: the .npz archive needs an array named 'labels' (it has {files}).")
            try:
                array = loaded[key]
                provenance = _npz_provenance(loaded, path) if key == "labels" else None
            except ValueError as exc:
                raise UserError(f"{path}: cannot read it ({exc}); cclust never unpickles user files.") from None
    else:
        array, key, provenance = loaded, None, None
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
            return Ensemble(array, missing=marker, provenance=provenance), path
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
        return Ensemble(np.column_stack(columns), provenance=provenance), path
    raise UserError(f"{what}: labels must be numbers or strings, got dtype {array.dtype}.")


def _npz_provenance(archive, path):
    """The archive's ``provenance`` (text, one entry per partition), or None if it has none."""
    if "provenance" not in archive.files:
        return None
    values = archive["provenance"]
    if values.dtype.kind not in "US" or values.ndim != 1:
        raise UserError(f"{path}: the array 'provenance' must be 1-D text naming what made each partition, got "
                        f"dtype {values.dtype} and shape {values.shape}.")
    return [str(v) for v in values]
