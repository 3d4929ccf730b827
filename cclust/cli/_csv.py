"""The CSV table under DATA and ENSEMBLE files: how its cells are read (:class:`CsvOptions`), its
rows, the header and first-column rules, and feature cells turned into numbers.

The rules are written for users in :mod:`cclust.cli`'s docstring.
"""
import csv
import dataclasses
import io
import math
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from cclust.cli._messages import UserError


#: Cells that mean "no value here", as R (``NA``), pandas (``NaN``, ``<NA>``, ``None``, ``null``, ...),
#: spreadsheets (``#N/A``) and the UCI repository files (``?``) write them. An empty cell is always
#: missing; ``--na-values`` replaces the rest of this list.
NA_VALUES = ("NA", "N/A", "n/a", "NaN", "nan", "NAN", "-NaN", "-nan", "NULL", "null", "None", "#N/A", "#NA",
             "<NA>", "?")


#: above this many objects a labels column whose values are all different is refused (an ID column)
_FEW = 5


_DECIMALS = (".", ",")


_THOUSANDS = (",", ".", " ", "'")


@dataclasses.dataclass(frozen=True)
class CsvOptions:
    """How a CSV file is read: the options of the same names (see :mod:`cclust.cli`).

    Parameters
    ----------
    header : {"auto", "yes", "no"}
        Whether the first row names the columns.
    na_values : tuple of str
        Cell values that mean "missing", besides an empty cell.
    decimal : {".", ","}
        The decimal mark of the numbers.
    thousands : str or None
        The thousands separator (``","``, ``"."``, ``" "`` or ``"'"``), removed from numbers
        grouped by threes (``-1,355.6``).
    index_column : {"auto", "no"}
        "auto" leaves out a first column with an empty header cell that holds 0..n-1 or 1..n in
        order (the index pandas' ``to_csv`` writes) and reads one holding a different word on every
        row as row IDs (R's row names); "no" reads that column as data.
    id_column : str or None
        The column of row IDs (name or 0-based index): kept out of the data, written beside the labels.
    samples_in_columns : bool
        The file has one column per object (genes x samples); the header row holds the object IDs.
    force : bool
        Accept a labels column that looks like IDs or measurements.
    """

    header: str = "auto"
    na_values: Sequence[str] = NA_VALUES  # a tuple once built (a string alone is one token)
    decimal: str = "."
    thousands: str | None = None
    index_column: str = "auto"
    id_column: str | None = None
    samples_in_columns: bool = False
    force: bool = False

    if TYPE_CHECKING:  # set on every instance by __post_init__; ClassVar keeps them out of the fields
        _na: ClassVar[frozenset[str]]
        _grouped: ClassVar[re.Pattern[str] | None]
        _plain_marks: ClassVar[bool]
        plain_numbers: ClassVar[bool]

    def __post_init__(self):
        if self.header not in ("auto", "yes", "no"):
            raise ValueError(f"header must be 'auto', 'yes' or 'no', got {self.header!r}")
        if self.decimal not in _DECIMALS:
            raise UserError(f"--decimal must be '.' or ',', got {self.decimal!r}.")
        if self.thousands is not None and self.thousands not in _THOUSANDS:
            raise UserError(f"--thousands must be one of {', '.join(map(repr, _THOUSANDS))}, got {self.thousands!r}.")
        if self.thousands == self.decimal:
            raise UserError(f"--thousands {self.thousands!r} is also the decimal mark; give --decimal , with "
                            "--thousands . (1.355,6) or --thousands , with the default decimal point (1,355.6).")
        if self.index_column not in ("auto", "no"):
            raise ValueError(f"index_column must be 'auto' or 'no', got {self.index_column!r}")
        tokens = (self.na_values,) if isinstance(self.na_values, str) else tuple(self.na_values)
        object.__setattr__(self, "na_values", tokens)
        object.__setattr__(self, "_na", frozenset(self.na_values) | {""})
        grouped = None
        if self.thousands is not None:
            sep, dec = re.escape(self.thousands), re.escape(self.decimal)
            grouped = re.compile(rf"[+-]?\d{{1,3}}(?:{sep}\d{{3}})+(?:{dec}\d*)?(?:[eE][+-]?\d+)?")
        object.__setattr__(self, "_grouped", grouped)
        object.__setattr__(self, "_plain_marks", self.decimal == "." and self.thousands is None)
        # a missing-value code that reads as a number (-999) rules out the quick path of NumPy's parser
        object.__setattr__(self, "plain_numbers", self.decimal == "." and self.thousands is None and not any(
            _finite(self.number(token)) for token in self.na_values))

    def is_na(self, cell: str) -> bool:
        """Whether a (stripped) cell means "no value"."""
        return cell in self._na

    def number(self, cell: str) -> float | None:
        """The float a cell holds under these options, or None if it holds no number."""
        if self._plain_marks:
            if "_" in cell:  # float() reads "1_000"; a CSV cell that does is no number
                return None
            try:
                return float(cell)
            except ValueError:
                return None
        text = cell
        if self.thousands is not None and self._grouped is not None and self.thousands in text \
                and self._grouped.fullmatch(text):
            text = text.replace(self.thousands, "")
        if self.decimal != ".":
            if "." in text:
                return None
            text = text.replace(self.decimal, ".")
        if "_" in text:  # float() reads "1_000"; a CSV cell that does is no number
            return None
        try:
            return float(text)
        except ValueError:
            return None


def _finite(value):
    return value is not None and math.isfinite(value)


_DEFAULT_OPTIONS = CsvOptions()


def _is_number(text):
    return _DEFAULT_OPTIONS.number(text) is not None


def _is_blank_line(row):
    # csv gives [] for an empty line, and one blank cell for a line of spaces without delimiters
    return len(row) <= 1 and not any(row)


def _read_rows(path, options=_DEFAULT_OPTIONS, notes=None):
    """The data rows of a delimited text file: their cells (stripped strings) and line numbers.

    Every line is a row, in file order, and becomes one object: a line of delimiters only
    (``,``) is a row whose cells are all empty, and so is a completely empty line between two
    rows. Empty lines before the first and after the last non-empty line (such as the file's
    final newline) are not rows. A first row one cell shorter than every other row (R's
    ``write.table`` writes its row names so) gets an empty first cell, with a note.
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
        # with a decimal comma, the comma cannot also separate the cells
        candidates = ";\t" if options.decimal == "," else ",;\t"
        try:
            delimiter = csv.Sniffer().sniff(text[:65536], delimiters=candidates).delimiter
        except csv.Error:
            delimiter = candidates[0]
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
    widths = {len(row) for row in rows[1:] if not _is_blank_line(row)}
    if len(rows) > 1 and widths == {len(rows[0]) + 1} and len(rows[0]) > 0:
        rows[0] = [""] + rows[0]
        if notes is not None:
            notes.append(f"{path}: the first row has one cell fewer than the rows below it, as R's write.table "
                         "writes a header over row names; it was read as the names of the columns after the "
                         "first.")
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


def _detect_header(rows, options=_DEFAULT_OPTIONS):
    """Guess whether the first row names the columns from words (see the module docstring)."""
    if len(rows) < 2:
        return False
    numeric_votes, word_votes = [], []
    for j, first in enumerate(rows[0]):
        rest = [row[j] for row in rows[1:] if not options.is_na(row[j])]
        if not rest:
            continue
        if all(options.number(cell) is not None for cell in rest):
            # a word over numbers is a column name; a number (or a missing value) over numbers is data
            numeric_votes.append(not options.is_na(first) and options.number(first) is None)
        else:
            # a column of words: a name occurs once, a label usually recurs further down
            word_votes.append(bool(first) and first not in set(rest))
    if numeric_votes:
        return any(numeric_votes)
    return bool(word_votes) and all(word_votes)


def _shown(cells, most=6):
    return ", ".join(cells[:most]) + (", ..." if len(cells) > most else "")


def _numeric_header(path, rows, options, kind):
    """(header?, note) for a first row of integers over rows of numbers, or None if the row is not that.

    A row of distinct integers in increasing order (``2019,2020,2021``; ``1,2,3,4``) names the
    columns when the rows below are unlike it: in a data file, most columns below hold fractional
    numbers (or each column below holds only fractional numbers, whatever the first row's order);
    in a partitions file, some first value occurs nowhere below in its column while every column
    below repeats a few codes. Either way the reading taken is said in a note.
    """
    first = rows[0]
    values = [options.number(cell) for cell in first]
    if len(first) < 2 or any(v is None or not math.isfinite(v) or not v.is_integer() for v in values):
        return None
    increasing = all(a < b for a, b in zip(values, values[1:]))
    if not increasing and kind != "data":
        return None
    columns = [[options.number(row[j]) for row in rows[1:] if not options.is_na(row[j])] for j in range(len(first))]
    if any(None in column for column in columns) or not any(columns):
        return None
    yes = (f"{path}: the first row ({_shown(first)}) was read as column names, not as an object: {{why}}; pass "
           "--header no if it is a data row.")
    no = (f"{path}: the first row ({_shown(first)}) was read as a data row, though its distinct increasing "
          "integers could be column names; pass --header yes if it names the columns.")
    filled = [column for column in columns if column]
    if kind == "data":
        fractional = [any(not v.is_integer() for v in column) for column in filled]
        only_fractional = all(all(not v.is_integer() for v in column) for column in filled)
        if only_fractional:
            return True, yes.format(why="integers over columns that hold only fractional numbers")
        if increasing and 2 * sum(fractional) > len(filled):
            return True, yes.format(why="distinct increasing integers over columns of fractional numbers")
        return (False, no) if increasing else None
    if not increasing:
        return None
    absent = [j for j, (v, column) in enumerate(zip(values, columns)) if column and v not in set(column)]
    repeated = all(len(set(column)) <= max(2, len(column) // 2) for column in filled)
    if absent and repeated:
        return True, yes.format(why=f"distinct increasing integers, and {first[absent[0]]!r} is no label of its "
                                    "column below, where a few labels repeat")
    return False, no


def _header_choice(path, rows, options, kind="data"):
    """(header?, note or None): --header, else the detection rules of the module docstring."""
    if options.header != "auto":
        return options.header == "yes", None
    if len(rows) == 1:
        # one line of words only names columns; a line holding a number is a (single) data row
        return not any(options.number(cell) is not None for cell in rows[0]), None
    if _detect_header(rows, options):
        return True, None
    return _numeric_header(path, rows, options, kind) or (False, None)


def _split_header(path, rows, lines, options, kind="data", notes=None):
    """(column names or None, data rows, their line numbers); refuses a header without data."""
    header, note = _header_choice(path, rows, options, kind)
    if note is not None and notes is not None:
        notes.append(note)
    if not header:
        return None, rows, lines
    if len(rows) == 1:
        raise UserError(
            f"{path}: the file has a header row ({', '.join(rows[0])}) but no data rows below it"
            + (" (the header row was detected; pass --header no if that line is data)."
               if options.header == "auto" else ".")
        )
    return rows[0], rows[1:], lines[1:]


def _trailing_empty(rows):
    """How many last columns are empty in every row (every line ends with delimiters)."""
    width = len(rows[0])
    count = 0
    while count < width - 1 and not any(row[width - 1 - count] for row in rows):
        count += 1
    return count


def _drop_trailing(path, rows, count, notes):
    notes.append(f"{path}: every line ends with a delimiter, so the last "
                 f"{'column is' if count == 1 else f'{count} columns are'} empty in every row; "
                 f"{'it was' if count == 1 else 'they were'} ignored.")
    return [row[:len(row) - count] for row in rows]


def _column_index(spec, names, n_columns, path, option="--labels-column"):
    """Resolve NAME|INDEX (0-based, negative counts from the end) of ``option``."""
    try:
        index = int(spec)
    except ValueError:
        if names is None:
            raise UserError(
                f"{option} {spec!r}: {path} has no header row to look a name up in; give a 0-based "
                "column index, or --header yes if the first row does name the columns."
            ) from None
        if spec not in names:
            raise UserError(f"{option} {spec!r}: no such column in {path}; its columns are {names}.")
        return names.index(spec)
    if not -n_columns <= index < n_columns:
        raise UserError(
            f"{option} {index}: {path} has {n_columns} columns, so the index must be in "
            f"[{-n_columns}, {n_columns - 1}]."
        )
    return index % n_columns


def _check_names(path, names):
    """Refuse a header that gives two columns the same name (which one would a name pick?)."""
    seen = {}
    for j, name in enumerate(names):
        if name:
            seen.setdefault(name, []).append(j)
    repeated = {name: where for name, where in seen.items() if len(where) > 1}
    if repeated:
        listed = "; ".join(f"{name!r} (columns {', '.join(map(str, where))})" for name, where in repeated.items())
        raise UserError(f"{path}: the header names several columns alike: {listed}; a name must pick one column, "
                        "so rename them (or pass --header no if the first row is data).")


def _first_column_role(path, names, body, options, what, ids_are="row IDs (R's row names), written beside the labels"):
    """The first column with an empty header cell: ("index", note), ("ids", note) or (None, None).

    0..n-1 or 1..n in order is the row index pandas' ``to_csv`` (or R's ``write.csv``) writes;
    a different word on every row is R's row names.
    """
    if options.index_column == "no" or names is None or names[0] != "" or len(names) < 2:
        return None, None
    cells = [row[0] for row in body]
    values = [options.number(cell) for cell in cells]
    n = len(cells)
    if all(v is not None for v in values) and values in (list(map(float, range(n))), list(map(float, range(1, n + 1)))):
        return "index", (f"{path}: the first column has an empty header cell and holds {cells[0]}, ..., {cells[-1]} "
                         "in order: the row index pandas' to_csv (or R's write.csv) writes; it was "
                         f"left out. Pass --index-column no to read it as {what}.")
    if not any(options.is_na(c) for c in cells) and any(v is None for v in values) and len(set(cells)) == n:
        return "ids", (f"{path}: the first column has an empty header cell and a different value on every row "
                       f"({_shown(cells, 3)}): read as {ids_are}. Pass "
                       f"--index-column no to read it as {what}.")
    return None, None


def _check_ids(path, ids, places, what):
    """Refuse an empty or repeated ID; ``places`` says where each ID is ("line 4", "column 2")."""
    for cell, place in zip(ids, places):
        if cell == "":
            raise UserError(f"{path}: {what} has no ID on {place}; every object needs one.")
    if len(set(ids)) < len(ids):
        seen = set()
        for cell, place in zip(ids, places):
            if cell in seen:
                raise UserError(f"{path}: {what} holds the ID {cell!r} twice (again on {place}); an ID must "
                                "name one object.")
            seen.add(cell)


_IMPUTE_HINT = (" (or pass --missing-features mean to fill missing cells, empty, NA, NaN and the like, with "
                "the column mean)")


_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")


_GROUPED = {sep: re.compile(rf"[+-]?\d{{1,3}}(?:{re.escape(sep)}\d{{3}})+(?:{re.escape(dec)}\d*)?")
            for sep, dec in ((",", "."), (".", ","), (" ", "."), ("'", "."))}


def _number_hint(cell, options):
    """What a cell that is no number may be, and the option that reads it, or ""."""
    hints = []
    if options.decimal == "." and _DECIMAL_COMMA.fullmatch(cell):
        hints.append(f"a decimal comma ({cell} for {cell.replace(',', '.')}), which --decimal , reads")
    for sep, pattern in _GROUPED.items():
        if sep != options.thousands and pattern.fullmatch(cell):
            flag = f"--thousands {sep}" if sep in ",." else f"--thousands {sep!r}"
            hints.append(f"a number with a thousands separator {sep!r}, which {flag}"
                         f"{' --decimal ,' if sep == '.' else ''} reads")
    if options.decimal == "," and re.fullmatch(r"[+-]?\d*\.\d+", cell):
        hints.append("a number with a decimal point, though --decimal , is given")
    return "; it looks like " + ", or ".join(hints) if hints else ""


def _parse_cells(cells, options, impute, where, name_column):
    """One file column (or row) of feature cells as floats, NaN where a missing cell may be filled.

    ``where(i)`` says where cell i is; ``name_column()`` the hint for a column of words.
    """
    if options.plain_numbers:
        try:
            values = np.array(cells, dtype=np.float64)
        except ValueError:
            values = None
        if values is not None and np.isfinite(values).all():
            return values
    parsed = np.empty(len(cells))
    for i, cell in enumerate(cells):
        value = None if options.is_na(cell) else options.number(cell)
        if value is not None and math.isfinite(value):
            parsed[i] = value
            continue
        if options.is_na(cell) or (value is not None and math.isnan(value)):
            if impute:
                parsed[i] = np.nan
                continue
            if cell == "":
                raise UserError(f"{where(i)} is empty; cclust needs a value in every feature cell: fill it in or "
                                f"delete the line{_IMPUTE_HINT}.")
            raise UserError(f"{where(i)} holds {cell!r}, a missing value (NaN, not a number); cclust needs finite "
                            f"feature values: fill it in or delete the line{_IMPUTE_HINT}.")
        if value is not None:
            raise UserError(f"{where(i)} holds {cell!r}, an infinite value; cclust needs finite feature values: fix "
                            "it or delete the line.")
        hint = _number_hint(cell, options)
        words = cell.split()
        if not hint and len(words) > 1 and all(_is_number(w) for w in words):
            hint = "; the file looks separated by spaces, but cclust reads ',', ';' or tab delimiters"
        if not hint:
            hint = name_column()
        raise UserError(f"{where(i)} is not numeric: it holds {cell!r}. cclust clusters numeric features only: "
                        f"drop or encode it{hint}.")
    return parsed
