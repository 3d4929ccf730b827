"""The views of a multi-view data set aligned on their objects: what :mod:`cclust.multiview`'s
generator and scores read.

A view is a table of features (an array, a DataFrame, an AnnData) of some of the objects.
:func:`align_views` takes the accepted spellings of several views (a mapping of name -> table,
a list of tables, a MuData, or one table) and returns each view's finite rows with their
positions among all the objects; the rules (union of the IDs in order of first appearance,
rows aligned by position without IDs, a row entirely NaN marks an absent object) are written
in :mod:`cclust.multiview`.
"""
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from cclust.errors import ValidationError
from cclust.validation import check_array_2d


@dataclass
class _View:
    name: str          # the view's name, and how messages refer to it
    where: str         # the argument it came from, for messages ("views['rna']", "X")
    values: np.ndarray  # (m, d) finite float64 rows of the objects the view holds
    rows: np.ndarray   # (m,) int64 positions of those objects among all the objects


def _is_anndata(obj):
    from cclust.interop import _anndata

    return _anndata.is_anndata(obj)


def _is_mudata(obj):
    from cclust.interop import _anndata

    return _anndata.is_mudata(obj)


def _is_table(obj):
    """Whether ``obj`` is one 2-D table of features (an array, DataFrame, AnnData or nested list)."""
    if _is_anndata(obj):
        return True
    shape = getattr(obj, "shape", None)
    if shape is not None:
        return len(shape) == 2
    try:
        return np.ndim(obj) == 2
    except ValueError:  # ragged nested lists: not a table
        return False


def _named_views(views):
    """[(name, where, table)] from the accepted spellings of ``views`` (MuData handled by the caller)."""
    if isinstance(views, Mapping):
        items = list(views.items())
        if not items:
            raise ValidationError("views must hold at least one view, got an empty mapping.")
        return [(name, f"views[{name!r}]", table) for name, table in items]
    if isinstance(views, (list, tuple)) and views and all(_is_table(v) for v in views):
        return [(f"view{i}", f"views[{i}]", table) for i, table in enumerate(views)]
    if views is None or isinstance(views, (str, bytes, numbers.Number)):
        raise ValidationError(f"views must be a mapping of view name -> features, a list of feature tables, a MuData, "
                              f"or one table X (a single view), got {views!r}.")
    return [("X", "X", views)]  # one table: checked as X, as every generator checks its data


def _ids_of(table):
    """The object IDs a table carries (a DataFrame's index, an AnnData's obs_names), or None."""
    if _is_anndata(table):
        return table.obs_names
    if hasattr(table, "index") and hasattr(table, "columns"):
        return table.index
    return None


def _values_of(table, where, layer, use_rep):
    """(n_rows, d) float64 values of a table, rows entirely NaN kept (they mark absent objects)."""
    if _is_anndata(table):
        from cclust.interop import _anndata

        table, where = _anndata.features(table, layer, use_rep, where)
    elif layer is not None or use_rep is not None:
        raise ValidationError(f"layer/use_rep name the features of an AnnData, and {where} is not one (got "
                              f"{type(table).__name__}); drop its entry from layer/use_rep.")
    values = check_array_2d(table, where, finite=False)
    if np.isinf(values).any():
        bad = np.argwhere(np.isinf(values))[0]
        raise ValidationError(f"{where} contains infinity (first at row {bad[0]}, column {bad[1]}); replace it first.")
    return values, where


def _per_view_option(option, name, views):
    """``option`` (None, one value for every view, or a mapping view -> value) as view -> value."""
    if option is None or isinstance(option, str):
        return {view: option for view in views}
    if not isinstance(option, Mapping):
        raise ValidationError(f"{name} must be None, a str, or a mapping of view name -> str, got {option!r}.")
    unknown = [key for key in option if key not in views]
    if unknown:
        raise ValidationError(f"{name} names {unknown[0]!r}, which is not a view; the views are {list(views)}.")
    return {view: option.get(view) for view in views}


def _check_ids(ids, where, n_rows):
    ids = list(ids)
    if len(ids) != n_rows:
        raise ValidationError(f"obs_names for {where} must name each of its {n_rows} rows, got {len(ids)} names.")
    seen = set()
    for value in ids:
        if value in seen:
            raise ValidationError(f"{where}: the object ID {value!r} appears twice; object IDs must be unique within "
                                  "a view.")
        seen.add(value)
    return ids


def align_views(views, obs_names=None, layer=None, use_rep=None):
    """The views of ``views`` aligned on their objects (module docstring): ([_View], ids, n).

    ``ids`` is the objects' IDs in their order (a pandas Index when the IDs came as one), or
    None when the views carry no IDs and are aligned by row; ``n`` the number of objects.
    """
    pandas_index = None
    if _is_mudata(views):
        if obs_names is not None:
            raise ValidationError("obs_names is for views given as arrays; a MuData's modalities carry their own "
                                  "obs_names.")
        named = [(name, f"views.mod[{name!r}]", views.mod[name]) for name in views.mod]
        if not named:
            raise ValidationError("views is a MuData without modalities; it needs at least one.")
        union = list(views.obs_names)
        pandas_index = views.obs_names
    else:
        named = _named_views(views)
        union = None
    names = [name for name, _, _ in named]
    for name in names:  # the provenance reads "<view>: ...", so a name cannot hold ':'
        if not isinstance(name, str) or not name or ":" in name:
            raise ValidationError(f"views: a view's name must be a non-empty str without ':', got {name!r}.")
    if len(set(names)) != len(names):
        raise ValidationError(f"views: two views have the same name ({names}); give them different names.")
    layers = _per_view_option(layer, "layer", names)
    reps = _per_view_option(use_rep, "use_rep", names)
    if obs_names is not None and not isinstance(obs_names, Mapping):
        raise ValidationError(f"obs_names must be a mapping of view name -> object IDs, got "
                              f"{type(obs_names).__name__}.")
    given_ids = dict(obs_names or {})
    unknown = [key for key in given_ids if key not in names]
    if unknown:
        raise ValidationError(f"obs_names names {unknown[0]!r}, which is not a view; the views are {names}.")
    tables = []
    for name, where, table in named:
        if not _is_anndata(table):  # one name for every view reads the AnnData views; a mapping is per view
            layers[name] = layers[name] if isinstance(layer, Mapping) else None
            reps[name] = reps[name] if isinstance(use_rep, Mapping) else None
        values, where = _values_of(table, where, layers[name], reps[name])
        ids = _ids_of(table)
        if name in given_ids:
            if ids is not None:
                raise ValidationError(f"obs_names[{name!r}] is given, but {where} carries its own object IDs "
                                      f"(its index or obs_names); drop obs_names[{name!r}].")
            ids = given_ids[name]
        elif ids is not None and pandas_index is None and type(ids).__module__.startswith("pandas"):
            pandas_index = ids
        tables.append((name, where, values, None if ids is None else _check_ids(ids, where, values.shape[0])))
    with_ids = [t for t in tables if t[3] is not None]
    if with_ids and len(with_ids) != len(tables):
        bare = next(t for t in tables if t[3] is None)
        raise ValidationError(f"{bare[1]} carries no object IDs while other views do; give obs_names={{{bare[0]!r}: "
                              "[...]}} (one ID per row), or pass it as a DataFrame with the IDs as its index.")
    if with_ids:
        if union is None:
            union = list(dict.fromkeys(value for t in tables for value in t[3]))
        position = {value: i for i, value in enumerate(union)}
        placed = []
        for _, where, _, view_ids in tables:
            stray = [value for value in view_ids if value not in position]
            if stray:
                raise ValidationError(f"{where} holds the object {stray[0]!r}, which is not among views.obs_names; "
                                      "update the MuData (mdata.update()) so that it lists every modality's objects.")
            placed.append(np.array([position[value] for value in view_ids], dtype=np.int64))
        n = len(union)
    else:
        lengths = {t[1]: t[2].shape[0] for t in tables}
        if len(set(lengths.values())) > 1:
            raise ValidationError(f"views without object IDs must have the same number of rows (row i is object i), "
                                  f"got {lengths}; give each view its IDs (a DataFrame index, an AnnData, or "
                                  "obs_names=) to align views that hold different objects.")
        n = tables[0][2].shape[0]
        placed = [np.arange(n, dtype=np.int64) for _ in tables]
    out = []
    for (name, where, values, _), rows in zip(tables, placed):
        nan = np.isnan(values)
        absent = nan.all(axis=1)
        partial = nan.any(axis=1) & ~absent
        if partial.any():
            row = int(np.argmax(partial))
            raise ValidationError(f"{where} contains NaN in row {row} (column {int(np.argmax(nan[row]))}) among "
                                  "features that are not NaN; impute them, or make the whole row NaN to mark the "
                                  "object as absent from this view.")
        if absent.any():
            values, rows = np.ascontiguousarray(values[~absent]), rows[~absent]
        if values.shape[0] == 0:
            raise ValidationError(f"{where} holds no object (every row is entirely NaN); drop that view.")
        out.append(_View(name, where, values, rows))
    _check_overlap(out, n)
    if not with_ids:
        return out, None, n
    if pandas_index is None:
        return out, tuple(union), n
    if list(pandas_index) == union:
        return out, pandas_index, n
    import pandas as pd

    return out, pd.Index(union), n


def _check_overlap(views, n):
    """Refuse a view that shares no object with the others, and objects that no view holds."""
    covered = np.zeros(n, dtype=np.int64)
    for view in views:
        covered[view.rows] += 1
    lonely = [view.where for view in views if len(views) > 1 and not (covered[view.rows] > 1).any()]
    if lonely:
        named = lonely[0] if len(lonely) == 1 else " and ".join(lonely)
        raise ValidationError(
            f"{named} {'has' if len(lonely) == 1 else 'have'} no object in common with the other views, so nothing "
            "links the clusters of one view to those of another; check that the object IDs are spelled the same in "
            "every view, or cluster a view on its own.")
    unseen = np.flatnonzero(covered == 0)
    if unseen.size:
        raise ValidationError(f"{unseen.size} object(s) are held by no view (first at position {int(unseen[0])}); "
                              "every object needs features in at least one view.")
