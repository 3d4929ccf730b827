"""The input readers: DATA (bundled names, CSV, ``.npy``, ``.npz``) and ENSEMBLE files.

The CSV conventions they follow (delimiter, header detection, one object per data row) are in
:mod:`cclust.cli`'s docstring.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from cclust.cli._csv import (
    _DEFAULT_OPTIONS,
    _FEW,
    _IMPUTE_HINT,
    NA_VALUES,
    CsvOptions,
    _check_ids,
    _check_names,
    _column_index,
    _drop_trailing,
    _first_column_role,
    _header_choice,
    _is_number,
    _parse_cells,
    _read_rows,
    _split_header,
    _trailing_empty,
)
from cclust.cli._messages import UserError, plural
from cclust.cli._parameters import parse_value

if TYPE_CHECKING:
    from cclust.ensemble import Ensemble
    from cclust.soft import SoftEnsemble


_CSV_SUFFIXES = (".csv", ".tsv", ".txt")


def _take_first_column(found, notes, skipped, id_j):
    """Apply what ``_first_column_role`` found in column 0: an index is skipped, row names become
    the IDs (unless --id-column named another column); either way the note is kept. Returns the
    ID column."""
    role, note = found
    if role is None:
        return id_j
    notes.append(note)
    if role == "index":
        skipped.add(0)
        return id_j
    return 0 if id_j is None else id_j


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
    ids : list of str or None
        The objects' IDs (``--id-column``, row names, or the header of a ``--samples-in-columns``
        file), in row order; None when the file has none.
    notes : list of str
        What the reader decided that the user may want to undo (a header of numbers, a skipped
        index column, ...), each with the option that undoes it.
    filled : dict
        ``--missing-features mean``: {feature name: how many cells were filled}; empty otherwise.
    adata : anndata.AnnData or None
        The AnnData an ``.h5ad`` DATA held (``-o FILE.h5ad`` writes a copy of it with the labels).
    feature_names : list of str or None
        The features' names (a CSV header, an AnnData's ``var_names``), in column order; None
        when the input has none.
    classes : list or None
        The label values ``y`` codes (code c is ``classes[c]``); None without ``y``.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray | None, description: str, ids: list[str] | None = None,
                 notes: Sequence[str] = (), filled: dict[str, int] | None = None, adata: Any = None,
                 feature_names: list[str] | None = None, classes: list[Any] | None = None) -> None:
        self.X, self.y, self.description = X, y, description
        self.ids = ids
        self.adata = adata
        self.feature_names = feature_names
        self.classes = classes
        self.notes = list(notes)
        self.filled = dict(filled or {})

    def summary(self) -> str:
        n, d = self.X.shape
        classes = f", {plural(len(np.unique(self.y)), 'class')}" if self.y is not None else ""
        text = f"{self.description}: {plural(n, 'object')}, {plural(d, 'feature')}{classes}"
        if self.filled:
            text += f"; {filled_text(self.filled)}"
        return text


def filled_text(filled: Mapping[str, int], most: int = 8) -> str:
    """``--missing-features mean``'s count for a person: "3 missing cells filled with their
    feature's mean (b: 2, c: 1)"."""
    parts = [f"{name}: {count}" for name, count in filled.items()]
    if len(parts) > most:
        parts = parts[:most] + [f"{len(parts) - most} more features"]
    return (f"{plural(sum(filled.values()), 'missing cell')} filled with their feature's mean "
            f"({', '.join(parts)})")


def _encode_classes(values, what):
    values = np.asarray(values)
    if values.ndim != 1:
        raise UserError(f"{what} must be 1-D (one label per object), got shape {values.shape}.")
    try:
        _, codes = np.unique(values, return_inverse=True)
    except TypeError:
        raise UserError(f"{what} mixes label types that cannot be compared.") from None
    return codes.reshape(-1).astype(np.int64)


def _labels_from(path, spec, name, cells, lines, options):
    """The true classes of --labels-column, refused when they look like IDs or measurements."""
    for cell, line in zip(cells, lines):
        if options.is_na(cell):
            held = "an empty cell" if cell == "" else f"{cell!r}, a missing value,"
            raise UserError(f"{path}: the labels column {name} has {held} on line {line}; every object needs a "
                            "class.")
    n = len(cells)
    if not options.force:
        values = [options.number(cell) for cell in cells]
        fractional = [cell for cell, v in zip(cells, values) if v is not None and not v.is_integer()]
        if all(v is not None for v in values) and fractional:
            raise UserError(f"--labels-column {spec}: the column {name} holds fractional numbers (e.g. "
                            f"{fractional[0]}), a measurement rather than classes; name the column that holds the "
                            "true classes, or pass --force to take each distinct value as a class.")
        if n > _FEW and len(set(cells)) == n:
            raise UserError(f"--labels-column {spec}: the column {name} holds a different value on each of its "
                            f"{n} rows, so it would make {n} classes of one object each (an ID column?); name the "
                            f"column that holds the true classes (keep this one as row IDs with --id-column {spec}), "
                            "or pass --force to use it anyway.")
    return _encode_classes(np.array(cells), f"{path}: the labels column")


def _load_csv_data(path, labels_column, options, missing_features="error"):
    notes = []
    rows, lines = _read_rows(path, options, notes)
    trailing = _trailing_empty(rows)
    if trailing:
        rows = _drop_trailing(path, rows, trailing, notes)
    names, body, body_lines = _split_header(path, rows, lines, options, "data", notes)
    n_columns = len(rows[0])
    if names is not None:
        _check_names(path, names)
    transposed = options.samples_in_columns
    if transposed and labels_column is not None:
        raise UserError("--labels-column names a column, but with --samples-in-columns the objects are the "
                        "columns; give the true classes in a file of their own, or drop --samples-in-columns.")
    label_j = _column_index(labels_column, names, n_columns, path) if labels_column is not None else None
    id_j, skipped = None, set()
    if options.id_column is not None:
        id_j = _column_index(options.id_column, names, n_columns, path, "--id-column")
        if id_j == label_j:
            raise UserError(f"--id-column {options.id_column} and --labels-column {labels_column} name the same "
                            "column; the IDs and the true classes are different columns.")
    if id_j != 0 and label_j != 0:
        id_j = _take_first_column(_first_column_role(path, names, body, options,
                                                     "data" if transposed else "a feature",
                                                     "the names of the features" if transposed else
                                                     "row IDs (R's row names), written beside the labels"),
                                  notes, skipped, id_j)
    kept = [j for j in range(n_columns) if j not in skipped and j not in (label_j, id_j)]
    if not kept:
        raise UserError(f"{path}: no feature column is left besides the "
                        f"{'labels' if label_j is not None else 'ID'} column.")
    row_ids = [row[id_j] for row in body] if id_j is not None else None
    if row_ids is not None:
        _check_ids(path, row_ids, [f"line {line}" for line in body_lines], f"the ID column {names[id_j]!r}" if names else f"column {id_j}")

    def column_name(j):
        return f"column {names[j]!r} (index {j})" if names and names[j] else f"column {j}"

    def place(r, j):
        row = f" (row {row_ids[r]!r})" if row_ids is not None else ""
        return f"{path}: line {body_lines[r]}{row}, {column_name(j)}"

    y = classes = None
    if label_j is not None:  # before the features: a wrong labels column explains a column of words
        y = _labels_from(path, labels_column, repr(names[label_j]) if names else str(label_j),
                         [row[label_j] for row in body], body_lines, options)
        classes = np.unique(np.array([row[label_j] for row in body])).tolist()
    impute = missing_features == "mean"
    if not impute and not transposed:
        for r, row in enumerate(body):
            if all(options.is_na(row[j]) for j in kept):
                row_text = f" (row {row_ids[r]!r})" if row_ids is not None else ""
                raise UserError(
                    f"{path}: line {body_lines[r]}{row_text} has no feature value (every cell is empty or missing); "
                    f"each line is one object, so fill it in or delete the line{_IMPUTE_HINT}."
                )

    def words_hint(j):
        def hint():
            if transposed:
                return (f"; if it names the features, pass --id-column {names[j] if names and names[j] else j}"
                        if len({row[j] for row in body}) == len(body) else "")
            cells = [row[j] for row in body]
            spec = names[j] if names and names[j] else j
            distinct = len(set(cells)) == len(cells)
            ids = f"if it names the rows, pass --id-column {spec}"
            if label_j is not None:
                return f"; {ids}" if distinct else ""
            classes = f"if it holds the true classes, pass --labels-column {spec}"
            if len(cells) > _FEW:
                return f"; {ids if distinct else classes}"
            return f"; {classes}; {ids}"
        return hint

    grid = np.column_stack([_parse_cells([row[j] for row in body], options, impute,
                                         lambda r, j=j: place(r, j), words_hint(j)) for j in kept])
    ids = row_ids
    if transposed:
        # genes x samples: the rows of the file are the features, its columns the objects
        feature_names = row_ids if row_ids is not None else [f"line {line}" for line in body_lines]
        X = grid.T
        ids = [names[j] for j in kept] if names is not None else None
        if ids is not None:
            _check_ids(path, ids, [f"column {j}" for j in kept], "the header row (the object IDs)")
    else:
        feature_names = [names[j] if names and names[j] else str(j) for j in kept]
        X = grid
    filled = {}
    if impute:
        holes = np.isnan(X).sum(axis=0)
        filled = {name: int(count) for name, count in zip(feature_names, holes) if count}
        X = _impute_mean(X, path, feature_names)
    return Dataset(X, y, path, ids=ids, notes=notes, filled=filled, feature_names=list(feature_names),
                   classes=classes)


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


def load_data(source: str, labels_column: str | None = None, header: str = "auto", missing_features: str = "error", *,
              na_values: Sequence[str] | None = None, decimal: str = ".", thousands: str | None = None,
              index_column: str = "auto", id_column: str | None = None, samples_in_columns: bool = False,
              force: bool = False, layer: str | None = None, use_rep: str | None = None) -> Dataset:
    """Read the DATA argument of ``cclust run`` and ``cclust select-k``.

    Every data row is one object, in file order: a CSV line of delimiters only, or an empty line
    between two rows, is an object without features (refused, unless imputed); only empty lines
    before the first and after the last row (such as the final newline) are not rows.

    Parameters
    ----------
    source : str
        A bundled dataset name (``iris``, ``wine``; the name wins over a file of that name), or
        a path ending in ``.csv``/``.tsv``/``.txt`` (numeric feature columns), ``.npy`` (X),
        ``.npz`` (``X`` and optionally ``y``) or ``.h5ad`` (an AnnData; needs anndata, ``pip
        install 'cclust[scverse]'``; its ``obs_names`` are the IDs). Never unpickled.
    labels_column : str, optional
        CSV: the column holding the true classes, by header name or 0-based index (negative
        counts from the end); ``.h5ad``: an ``obs`` column. Default: every column is a feature.
    header : {"auto", "yes", "no"}, default="auto"
        Whether the CSV's first row names the columns; "auto" detects it (a file of one line of
        words only is a header without data).
    missing_features : {"error", "mean"}, default="error"
        What to do with a missing feature value (an empty cell, a NaN, or one of ``na_values``):
        refuse it (naming its line and column), or fill it with the mean of its feature (the
        counts per feature are in ``Dataset.filled``). Infinite values are always refused.
    na_values : sequence of str, optional
        CSV only: the cell values that mean "missing", besides an empty cell; default
        :data:`NA_VALUES` (``NA``, ``N/A``, ``NaN``, ``nan``, ``NULL``, ``null``, ``None``,
        ``#N/A``, ``<NA>``, ``?`` and the like).
    decimal : {".", ","}, default="."
        CSV only: the decimal mark (``","`` reads ``0,173``; the delimiter is then ``;`` or tab).
    thousands : {",", ".", " ", "'"}, optional
        CSV only: a thousands separator, removed from numbers grouped by threes (``-1,355.6``).
    index_column : {"auto", "no"}, default="auto"
        CSV only: "auto" leaves out a first column with an empty header cell holding 0..n-1 or
        1..n in order (pandas' ``to_csv`` index) and reads one holding a different word on every
        row as the row IDs (R's row names); "no" reads it as a feature.
    id_column : str, optional
        CSV only: the column of row IDs (name or 0-based index), kept out of the features; the
        IDs are in ``Dataset.ids``. With ``samples_in_columns``, the column naming the features.
    samples_in_columns : bool, default=False
        CSV only: the objects are the file's columns (genes x samples); the header row, if any,
        holds their IDs.
    force : bool, default=False
        Take ``labels_column`` as the true classes even when its values are all different or
        fractional numbers (refused otherwise).
    layer, use_rep : str, optional
        ``.h5ad`` only: the features are the AnnData's ``layers[layer]`` or ``obsm[use_rep]``
        instead of its ``X`` (one of them at most).

    Returns
    -------
    Dataset

    Raises
    ------
    UserError
        Missing or unreadable file, a directory, wrong type, fewer than 2 objects, a header
        without data rows, a non-numeric, empty, NaN or infinite feature cell (the message names
        the column by header name and index, the line (and row ID), and what the cell holds), a
        header naming two columns alike, a labels column that looks like IDs or measurements.

    Examples
    --------
    >>> data = load_data("iris")
    >>> data.X.shape, data.summary()
    ((150, 4), "bundled dataset 'iris': 150 objects, 4 features, 3 classes")
    """
    if missing_features not in ("error", "mean"):
        raise ValueError(f"missing_features must be 'error' or 'mean', got {missing_features!r}")
    options = CsvOptions(header=header, na_values=NA_VALUES if na_values is None else na_values,
                         decimal=decimal, thousands=thousands, index_column=index_column, id_column=id_column,
                         samples_in_columns=samples_in_columns, force=force)
    if (layer is not None or use_rep is not None) and os.path.splitext(source)[1].lower() != ".h5ad":
        option = "--layer" if layer is not None else "--use-rep"
        raise UserError(f"{option} names the features inside an .h5ad file (an AnnData); DATA {source!r} is not one.")
    if os.path.splitext(source)[1].lower() == ".h5ad" and source not in _bundled_names():
        for option, given in (("--id-column", id_column is not None), ("--samples-in-columns", samples_in_columns)):
            if given:
                raise UserError(f"{option} is for CSV files; {source!r} is an AnnData, whose obs_names are the IDs "
                                "and whose rows are the objects.")
        data = _load_h5ad(source, labels_column, missing_features, layer, use_rep)
    else:
        data = _load_data(source, labels_column, options, missing_features)
    _check_n_objects(data.X.shape[0], data.description)
    return data


def _bundled_names():
    from cclust import datasets

    return datasets.names()


def _load_h5ad(source, labels_column, missing_features, layer, use_rep):
    """An AnnData file: its features (X, a layer or an obsm entry), its obs_names as IDs, and the
    true classes from an obs column when --labels-column names one."""
    from cclust.errors import CclustError
    from cclust.interop import _anndata

    _refuse_directory(source, "DATA ")
    if not os.path.exists(source):
        raise UserError(f"DATA {source!r} is neither a bundled dataset ({', '.join(_bundled_names())}) nor an "
                        "existing file.")
    try:
        anndata = _anndata.require_anndata(f"DATA {source}: reading an .h5ad file")
    except CclustError as exc:
        raise UserError(str(exc)) from None
    try:
        adata = anndata.read_h5ad(source)
    except Exception as exc:  # h5py and anndata raise many types for a file that is not theirs
        raise UserError(f"{source}: cannot read it as an AnnData .h5ad file ({type(exc).__name__}: "
                        f"{' '.join(str(exc).split())[:200]}).") from None
    if layer is not None and use_rep is not None:
        raise UserError("--layer and --use-rep both name the features to cluster; give one of them.")
    if layer is not None and layer not in adata.layers:
        raise UserError(f"--layer {layer}: the AnnData in {source} has no such layer (its layers: "
                        f"{_anndata.keys_text(adata.layers)}); drop --layer to cluster its X.")
    if use_rep not in (None, "X") and use_rep not in adata.obsm:
        raise UserError(f"--use-rep {use_rep}: the AnnData in {source} has no such obsm entry (its obsm keys: "
                        f"{_anndata.keys_text(adata.obsm)}); drop --use-rep to cluster its X.")
    try:
        values, where = _anndata.features(adata, layer, use_rep, "the AnnData")
    except CclustError as exc:
        raise UserError(f"{source}: {exc}") from None
    filled = {}
    X = np.asarray(values)
    if missing_features == "mean" and X.dtype.kind == "f" and X.ndim == 2:
        holes = np.isnan(X).sum(axis=0)
        filled.update({str(j): int(count) for j, count in enumerate(holes) if count})
        X = _impute_mean(X, f"{source} ({where})")
    X = _check_X(X, f"{source} ({where})")
    y = classes = None
    if labels_column is not None:
        if labels_column not in adata.obs.columns:
            columns = ", ".join(repr(str(c)) for c in adata.obs.columns) or "none"
            raise UserError(f"--labels-column {labels_column}: the AnnData in {source} has no obs column of that "
                            f"name (its obs columns: {columns}).")
        column = adata.obs[labels_column]
        if column.isna().any():
            raise UserError(f"--labels-column {labels_column}: obs[{labels_column!r}] in {source} has missing values; "
                            "every object needs a class.")
        y = _encode_classes(np.asarray(column.astype(str)), f"{source}: obs[{labels_column!r}]")
        classes = np.unique(np.asarray(column.astype(str))).tolist()
    described = source if where == "the AnnData.X" else f"{source} ({where.replace('the AnnData', 'AnnData')})"
    # X and a layer have the AnnData's features (var_names); an obsm entry has its own columns
    feature_names = [str(v) for v in adata.var_names] if use_rep in (None, "X") else None
    return Dataset(X, y, described, ids=[str(v) for v in adata.obs_names], filled=filled, adata=adata,
                   feature_names=feature_names, classes=classes)


def _load_data(source, labels_column, options, missing_features):
    from cclust import datasets

    csv_only = [option for option, given in (("--id-column", options.id_column is not None),
                                             ("--samples-in-columns", options.samples_in_columns))
                if given]
    if csv_only and (source in datasets.names() or os.path.splitext(source)[1].lower() not in _CSV_SUFFIXES):
        raise UserError(f"{csv_only[0]} is for CSV files; {source!r} is not one (transpose an array before saving "
                        "it; an .npz file carries no IDs).")
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
        return _load_csv_data(source, labels_column, options, missing_features)
    if labels_column is not None:
        raise UserError("--labels-column is for CSV files; an .npz file carries its labels as the array 'y'.")

    filled = {}

    def features(X):
        if missing_features == "mean" and np.asarray(X).dtype.kind == "f" and np.asarray(X).ndim == 2:
            holes = np.isnan(X).sum(axis=0)
            filled.update({str(j): int(count) for j, count in enumerate(holes) if count})
            X = _impute_mean(X, source)
        return _check_X(X, source)

    loaded = _load_npy(source)
    if suffix == ".npy":
        if isinstance(loaded, np.lib.npyio.NpzFile):
            loaded.close()
            raise UserError(f"{source}: it is an .npz archive despite its name; rename it to .npz.")
        X = features(loaded)
        return Dataset(X, None, source, filled=filled)
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
    return Dataset(X, y, source, filled=filled)


def _encode_partition(cells, missing, name, options=_DEFAULT_OPTIONS):
    """Strings of one partition -> int32 codes (-1 = missing) and K."""
    present = np.array([not options.is_na(cell) and cell != missing for cell in cells], dtype=bool)
    values = [cell for cell, keep in zip(cells, present) if keep]
    if not values:
        raise UserError(f"{name} labels no object (every cell is missing); drop that partition.")
    if all(_is_number(v) for v in values):
        numbers = np.array(values, dtype=np.float64)
        fraction = numbers[np.isfinite(numbers) & (numbers != np.round(numbers))]
        if fraction.size:
            raise UserError(f"{name} holds fractional numbers (e.g. {fraction[0]:g}), not cluster labels: ENSEMBLE "
                            "needs one column of integer or text labels per partition. Features are clustered with "
                            "`cclust run DATA`.")
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


def load_ensemble(path: str, header: str = "auto", missing: str = "-1", *, na_values: Sequence[str] | None = None,
                  index_column: str = "auto", id_column: str | None = None) -> tuple[Ensemble | SoftEnsemble, str]:
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
    na_values, index_column, id_column
        CSV only, as in :func:`load_data`: a cell holding one of ``na_values`` marks a missing
        object; a pandas index column is left out, R's row names and the ``id_column`` are the
        objects' IDs (see :func:`read_ensemble` to get them).

    Returns
    -------
    ensemble : Ensemble or SoftEnsemble
    description : str
    """
    read = read_ensemble(path, header, missing, na_values=na_values, index_column=index_column, id_column=id_column)
    return read.ensemble, read.description


class EnsembleFile:
    """What :func:`read_ensemble` read: ``ensemble``, ``description``, ``ids`` (list of str or
    None) and ``notes`` (what the reader decided, with the option that undoes it)."""

    def __init__(self, ensemble: Ensemble | SoftEnsemble, description: str, ids: list[str] | None = None,
                 notes: Iterable[str] = ()) -> None:
        self.ensemble, self.description, self.ids, self.notes = ensemble, description, ids, list(notes)


def read_ensemble(path: str, header: str = "auto", missing: str = "-1", *, na_values: Sequence[str] | None = None,
                  index_column: str = "auto", id_column: str | None = None) -> EnsembleFile:
    """:func:`load_ensemble`, with the objects' IDs and the reader's notes: an :class:`EnsembleFile`."""
    options = CsvOptions(header=header, na_values=NA_VALUES if na_values is None else na_values,
                         index_column=index_column, id_column=id_column)
    notes: list[str] = []
    ensemble, description, ids = _load_ensemble(path, missing, options, notes)
    return EnsembleFile(ensemble, description, ids, notes)


def _ensemble_csv(path, missing, options, notes):
    from cclust.ensemble import Ensemble

    rows, lines = _read_rows(path, options, notes)
    trailing = _trailing_empty(rows)
    if trailing:
        # an empty last partition under an empty header cell is a trailing delimiter; without a
        # header it may be a partition that labels no object, which is refused below
        trimmed = [row[:len(row) - trailing] for row in rows]
        if _header_choice(path, trimmed, options, "ensemble")[0]:
            rows = _drop_trailing(path, rows, trailing, notes)
    names, body, body_lines = _split_header(path, rows, lines, options, "ensemble", notes)
    _check_n_objects(len(body), path)
    n_columns = len(rows[0])
    id_j, skipped = None, set()
    if options.id_column is not None:
        id_j = _column_index(options.id_column, names, n_columns, path, "--id-column")
    if id_j != 0:
        id_j = _take_first_column(_first_column_role(path, names, body, options, "a partition"), notes, skipped,
                                  id_j)
    ids = None
    if id_j is not None:
        ids = [row[id_j] for row in body]
        _check_ids(path, ids, [f"line {line}" for line in body_lines],
                   f"the ID column {names[id_j]!r}" if names else f"column {id_j}")
    kept = [j for j in range(n_columns) if j not in skipped and j != id_j]
    if not kept:
        raise UserError(f"{path}: no partition column is left besides the ID column.")
    columns = []
    for j in kept:
        name = f"{path}: partition {names[j]!r} (column {j})" if names else f"{path}: partition in column {j}"
        columns.append(_encode_partition([row[j] for row in body], missing, name, options))
    # the header names what made each partition (cclust run --save-ensemble writes it so)
    provenance = [names[j].strip() for j in kept] if names else None
    return Ensemble(np.column_stack(columns), provenance=provenance), f"{path}", ids


def _load_ensemble(path, missing, options, notes):
    from cclust.ensemble import Ensemble
    from cclust.errors import ValidationError

    _refuse_directory(path, "ENSEMBLE ")
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _CSV_SUFFIXES:
        return _ensemble_csv(path, missing, options, notes)
    if options.id_column is not None:
        raise UserError(f"--id-column is for CSV files; {path!r} is not one.")
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
                return soft, f"{path}: {soft.n_partitions} membership matrices", None
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
            return Ensemble(array, missing=marker, provenance=provenance), path, None
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
        return Ensemble(np.column_stack(columns), provenance=provenance), path, None
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


def load_labels(path: str, n: int, description: str) -> np.ndarray:
    """The cluster labels of ``cclust markers --labels FILE``: one per object of DATA, in its
    order, as the file writes them (numbers or words).

    ``path`` is a ``.csv``/``.tsv``/``.txt`` file with one column of labels (a header row is
    detected), or with a column named ``label`` beside others (what ``cclust run -o labels.csv``
    writes, with an ``id`` column when DATA has IDs), or an ``.npy`` vector. ``n`` and
    ``description`` are DATA's number of objects and name, for the length check.
    """
    _refuse_directory(path, "--labels ")
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".npy":
        loaded = _load_npy(path)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            loaded.close()
            raise UserError(f"--labels {path}: it is an .npz archive despite its name; save the labels with np.save.")
        values = np.asarray(loaded)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1 or values.dtype.kind not in "biufUS":
            raise UserError(f"--labels {path}: needs a vector of labels (numbers or text), one per object; got an "
                            f"array of shape {values.shape} and dtype {values.dtype}.")
        if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
            raise UserError(f"--labels {path}: holds NaN or infinity; every object needs a cluster.")
        labels = values.astype(str) if values.dtype.kind in "US" else values
    elif suffix in _CSV_SUFFIXES:
        options = CsvOptions(na_values=NA_VALUES)
        rows, lines = _read_rows(path, options, [])
        names, body, body_lines = _split_header(path, rows, lines, options, "ensemble", [])
        if names is not None and "label" in names:
            j = names.index("label")
        elif len(rows[0]) == 1:
            j = 0
        else:
            raise UserError(f"--labels {path}: has {len(rows[0])} columns; give a file with one column of cluster "
                            "labels, or name the column of labels 'label' in a header row.")
        cells = [row[j] for row in body]
        for cell, line in zip(cells, body_lines):
            if options.is_na(cell):
                raise UserError(f"--labels {path}: line {line} has no label; every object needs a cluster.")
        if all(_is_number(cell) for cell in cells):
            numbers = np.array(cells, dtype=np.float64)
            labels = numbers.astype(np.int64) if np.all(numbers == np.round(numbers)) else np.array(cells)
        else:
            labels = np.array(cells)
    else:
        if not os.path.exists(path):
            raise UserError(f"--labels {path}: no such file.")
        raise UserError(f"--labels {path}: unsupported file type {suffix or '(no extension)'!r}; give a "
                        ".csv/.tsv/.txt file with one label per line, or an .npy vector.")
    if labels.shape[0] != n:
        raise UserError(f"--labels {path}: holds {labels.shape[0]} labels but DATA {description} has {n} objects; "
                        "give one label per object of DATA, in its order.")
    return labels
