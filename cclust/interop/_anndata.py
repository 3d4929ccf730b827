"""AnnData in and out: the features an entry point reads from an AnnData, and the results it
writes back, the way scanpy's clustering tools write theirs.

* **In.** The features are ``adata.X`` (default), a layer (``layer=name``) or an ``obsm``
  entry (``use_rep="X_pca"``, or ``use_rep="X"`` for ``adata.X`` itself), never two of them.
  Every cclust route needs dense features, so a sparse matrix is densified, after the memory
  budget (:func:`cclust.validation.require_memory`) has agreed to its dense size. The caller's
  arrays are only read.
* **Out.** Labels go to ``obs[key]`` as a categorical whose categories are the strings
  ``"0".."K-1"`` in that order: scanpy's ``leiden`` and ``louvain`` write
  ``pd.Categorical(values=groups.astype("U"), categories=natsorted(...))``, so plotting and
  ``rank_genes_groups`` treat cclust's clusters as theirs. Each object's item consensus (the
  mean consensus with the other members of its cluster; Monti et al. 2003) goes to
  ``obs[key + "_item_consensus"]`` (float64), and the statistics and parameters to
  ``uns[key]``, a dict of str, bool, int, float, NumPy arrays and such dicts only, which
  ``write_h5ad`` stores and ``read_h5ad`` gives back. Nothing else of the object is touched.
* ``copy`` as in scanpy: False writes into the object given (which must not be a view: writing
  into a view would silently turn it into a copy), True into a copy that is returned.

AnnData is recognised by its class's module and name, so nothing here imports anndata unless
such an object was passed in (or an ``.h5ad`` file is read).
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cclust.errors import MissingDependencyError, ValidationError

if TYPE_CHECKING:
    from anndata import AnnData

    from cclust.ensemble import Ensemble

#: what the command line and the errors tell a user who lacks anndata
INSTALL_HINT = "pip install 'cclust[scverse]'"


def _is_instance_of(obj: object, package: str, name: str) -> bool:
    """Whether ``obj``'s class, or one it derives from, is ``name`` defined in ``package``."""
    for cls in type(obj).__mro__:
        if cls.__name__ == name and (cls.__module__ or "").split(".")[0] == package:
            return True
    return False


def is_anndata(obj: object) -> bool:
    """Whether ``obj`` is an ``anndata.AnnData`` (recognised without importing anndata)."""
    return _is_instance_of(obj, "anndata", "AnnData")


def is_mudata(obj: object) -> bool:
    """Whether ``obj`` is a ``mudata.MuData`` (recognised without importing mudata)."""
    return _is_instance_of(obj, "mudata", "MuData")


def refuse_container(data: object, name: str) -> None:
    """A MuData is read by the multiview generator only: say so, and what to pass instead."""
    if is_mudata(data):
        raise ValidationError(
            f"{name} is a MuData, which only the multiview generator reads (cclust.generate('multiview', mdata, K): "
            f"one ensemble of all its modalities); here pass one of its modalities, an AnnData such as "
            f"{name}.mod['rna'], or an array of features.")


def check_array_options(data: object, name: str, **given: bool) -> None:
    """Refuse the AnnData-only keywords (``layer``, ``use_rep``, ``key_added``, ``copy``) given with
    input that is not an AnnData, rather than ignoring them; ``given`` maps each keyword to
    whether the caller set it."""
    refuse_container(data, name)
    used = [keyword for keyword, set_ in given.items() if set_]
    if used:
        raise ValidationError(
            f"{used[0]} is for AnnData input, and {name} is not an AnnData (got {type(data).__name__}); drop "
            f"{used[0]}, or pass the AnnData itself.")


def check_key(key: object, name: str = "key_added") -> str:
    if not isinstance(key, str) or not key:
        raise ValidationError(f"{name} must be a non-empty str (the obs/uns key to write), got {key!r}.")
    return key


def check_copy(copy: object) -> bool:
    if not isinstance(copy, (bool, np.bool_)):
        raise ValidationError(f"copy must be True or False, got {copy!r}.")
    return bool(copy)


def check_target(adata: AnnData, name: str = "adata", copy: bool = False, offers_copy: bool = True) -> None:
    """Refuse an AnnData without objects, and a view that results would be written into
    (``offers_copy``: whether the entry point has a ``copy`` argument to suggest)."""
    if adata.n_obs == 0:
        raise ValidationError(f"{name} has 0 observations ({name}.n_obs == 0); consensus clustering needs at least 2.")
    if not copy and adata.is_view:
        raise ValidationError(
            f"{name} is a view of another AnnData (adata[...] without .copy()); writing the results into it would "
            f"turn it into a copy behind your back. Pass {name}.copy()"
            + (", or copy=True to get a modified copy back." if offers_copy else " and keep that copy."))


def features(adata: AnnData, layer: str | None = None, use_rep: str | None = None, name: str = "adata",
             max_bytes: int | None = None) -> tuple[Any, str]:
    """``(values, where)``: the (n_obs, n_features) features of ``adata`` named by ``layer`` or
    ``use_rep`` (see the module docstring), dense (the caller's own array when it already is one:
    never write into it), and where they were found (``"adata.obsm['X_pca']"``) for messages.

    Raises ValidationError naming ``layer``/``use_rep`` for a key that is not there, and
    MemoryBudgetError for a sparse matrix whose dense form exceeds the budget.
    """
    from cclust.validation import require_memory

    check_target(adata, name, copy=True)
    if layer is not None and use_rep is not None:
        raise ValidationError(
            f"layer={layer!r} and use_rep={use_rep!r} both name the features; give one of them (layer for "
            f"{name}.layers, use_rep for {name}.obsm).")
    if layer is not None:
        if not isinstance(layer, str) or layer not in adata.layers:
            raise ValidationError(
                f"layer={layer!r} is not a layer of {name} (its layers: {keys_text(adata.layers)}); pass one of "
                f"them, or layer=None for {name}.X.")
        values, where = adata.layers[layer], f"{name}.layers[{layer!r}]"
    elif use_rep is not None and use_rep != "X":
        if not isinstance(use_rep, str) or use_rep not in adata.obsm:
            hint = " (sc.pp.pca(adata) makes 'X_pca')" if use_rep == "X_pca" else ""
            raise ValidationError(
                f"use_rep={use_rep!r} is not a key of {name}.obsm (its keys: {keys_text(adata.obsm)}){hint}; pass one "
                f"of them, or use_rep=None for {name}.X.")
        values, where = adata.obsm[use_rep], f"{name}.obsm[{use_rep!r}]"
    else:
        values, where = adata.X, f"{name}.X"
        if values is None:
            raise ValidationError(f"{name}.X is None (the AnnData holds no matrix); name the features with "
                                  "layer= or use_rep=.")
    if hasattr(values, "iloc"):  # an obsm DataFrame
        values = values.to_numpy()
    if hasattr(values, "toarray") or type(values).__module__.startswith("scipy.sparse"):
        shape = values.shape
        need = int(shape[0]) * int(shape[1]) * 8
        require_memory(need, f"the dense float64 copy of the sparse {where} ({shape[0]} x {shape[1]})",
                       "reduce it first (e.g. sc.pp.pca, then use_rep='X_pca')", max_bytes)
        values = values.toarray()
    elif not isinstance(values, np.ndarray) and hasattr(values, "shape") and hasattr(values, "dtype") \
            and not hasattr(values, "__dask_graph__"):
        values = np.asarray(values)  # a backed (on-disk) matrix
    return values, where


def keys_text(mapping: Mapping[Any, Any]) -> str:
    keys = sorted(str(key) for key in mapping.keys())
    return ", ".join(repr(key) for key in keys) if keys else "none"


def plain(value: object) -> Any:
    """``value`` as what ``write_h5ad`` stores: str, bool, int, float, NumPy arrays of numbers or
    strings, and dicts of those; None (absent) for None, and the text of anything else."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {str(key): item for key, item in ((key, plain(item)) for key, item in value.items())
                if item is not None}
    if isinstance(value, (list, tuple, np.ndarray)):
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            return array.copy()
        if array.size and (array.dtype.kind in "US"
                           or (array.dtype.kind == "O" and all(isinstance(v, str) for v in array.flat))):
            # read_h5ad gives strings back as an object array: store them so, and the round trip is exact
            return np.array([str(v) for v in array.flat], dtype=object).reshape(array.shape)
    return repr(value)


def write_results(adata: AnnData, key: str, labels: npt.ArrayLike, n_clusters: int, stats: Mapping[str, Any] | None,
                  item_consensus: npt.ArrayLike | None = None) -> None:
    """Labels to ``obs[key]`` (categorical, categories ``"0".."K-1"``), the item consensus to
    ``obs[key + "_item_consensus"]`` and ``stats`` (unless None) to ``uns[key]`` (see the module
    docstring)."""
    import pandas as pd

    labels = np.asarray(labels, dtype=np.int64)
    adata.obs[key] = pd.Categorical.from_codes(labels, categories=[str(c) for c in range(int(n_clusters))])
    if item_consensus is not None:
        adata.obs[f"{key}_item_consensus"] = np.asarray(item_consensus, dtype=np.float64)
    if stats is not None:
        adata.uns[key] = plain(stats)


def require_anndata(what: str) -> ModuleType:
    """Import anndata, or say which extra installs it."""
    try:
        import anndata
    except ImportError:
        raise MissingDependencyError(f"{what} needs anndata, which is not installed: {INSTALL_HINT}") from None
    return anndata


def own_item_consensus(labels: npt.ArrayLike, item: np.ndarray) -> np.ndarray:
    """Each object's item consensus with its own cluster, from an (n, K) item-consensus table."""
    labels = np.asarray(labels, dtype=np.int64)
    return item[np.arange(labels.shape[0]), labels]


def ensemble_consensus(ensemble: Ensemble, labels: npt.ArrayLike,
                       n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Item consensus of every object with its own cluster and the cluster consensus of each
    cluster (Monti et al. 2003, sec. 3.3) read from the basic partitions: the co-association of
    two objects is the share of the partitions holding both that put them together (partition
    weights are not used), pooled over the members as :func:`cclust._monti.pooled_cluster_consensus`
    does, without forming the n x n matrix."""
    from cclust import _monti

    labels = np.asarray(labels, dtype=np.int64)
    item, cluster = _monti.pooled_cluster_consensus(np.asarray(ensemble.labels), labels, int(n_clusters))
    return own_item_consensus(labels, item), cluster


def write_clustering(adata: AnnData, key: str, labels: npt.ArrayLike, n_clusters: int, stats: Mapping[str, Any],
                     ensemble: Ensemble | None = None) -> None:
    """One consensus clustering into ``adata`` (:func:`write_results`); with the ``ensemble``
    that was fused, the item consensus in ``obs`` and the cluster consensus in ``uns[key]``."""
    stats = dict(stats)
    item = None
    if ensemble is not None:
        item, stats["cluster_consensus"] = ensemble_consensus(ensemble, labels, n_clusters)
    write_results(adata, key, labels, n_clusters, stats, item)


# result is a SelectKResult, Any here: cclust.selection imports this module, and importing it back, even
# for mypy alone, would be an import cycle (tests/test_layering.py)
def write_select_k(adata: AnnData, key: str, result: Any, params: Mapping[str, Any]) -> None:
    """select_k's answer into ``adata``: the labels at the recommended K and their item consensus
    in ``obs[f"{key}_k{K}"]`` and ``obs[f"{key}_k{K}_item_consensus"]``, the per-K table, the
    recommendation, the summary and ``params`` (with what the result records of its settings)
    in ``uns[f"{key}_select_k"]``."""
    best = result.best_k
    labels = np.asarray(result.labels[best], dtype=np.int64)
    own = None
    if best in (result.sketch_item_consensus or {}):   # the sketch's rows only: NaN for the others
        own = np.full(labels.shape[0], np.nan)
        own[result.sketch] = own_item_consensus(labels[result.sketch], result.sketch_item_consensus[best])
    elif best in (result.item_consensus or {}):
        own = own_item_consensus(labels, result.item_consensus[best])
    stats = {
        "params": {"k_range": result.k_values, "method": result.method, "inner": result.inner,
                   "n_resamples": result.n_resamples, "null": result.null, "n_references": result.n_references,
                   "criterion": result.criterion, **params},
        "best_k": best,
        "labels_key": f"{key}_k{best}",
        "reason": result.reason,
        "warnings": "\n".join(result.warnings),
        "summary": result.summary(),
        "route": result.route,
        **result.as_table(),
        "cdf_grid": result.cdf_grid,
        "cdf": result.cdf,
    }
    if best in (result.cluster_consensus or {}):
        stats["cluster_consensus"] = result.cluster_consensus[best]
    if result.sketch is not None:
        stats["sketch"] = result.sketch
    write_results(adata, f"{key}_k{best}", labels, int(labels.max()) + 1, None, own)
    adata.uns[f"{key}_select_k"] = plain(stats)
