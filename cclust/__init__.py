"""cclust: consensus clustering for Python.

Generate diverse basic partitions, fuse them into one consensus partition with any published
consensus function, and score the result. Everything selectable by name lives in one registry
that third-party distributions extend through entry points.

>>> import cclust
>>> sorted(cclust.available(kind="metric"))[:2]
['accuracy', 'ami']

Importing cclust imports no compiled module and no plugin.
"""
from __future__ import annotations

from typing import IO, Any

from cclust.ensemble import Ensemble
from cclust.registry import available, get, register
from cclust.result import ConsensusResult

__version__ = "0.1.0"

__all__ = [
    "ConsensusClustering",
    "ConsensusResult",
    "Ensemble",
    "available",
    "choose_resolution",
    "consensus",
    "generate",
    "get",
    "markers",
    "predict",
    "register",
    "select_k",
    "show_config",
]

# Imported on first use so that ``import cclust`` stays light (no compiled module, no plugin).
_LAZY = {"ConsensusClustering": "cclust.estimator", "select_k": "cclust.selection", "markers": "cclust.differential",
         "predict": "cclust._assign", "choose_resolution": "cclust.resolution"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cclust' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def consensus(method: str, ensemble: Any, n_clusters: int | None, **params: Any) -> ConsensusResult:
    """Fuse an ensemble with the consensus function registered as ``method``.

    A shortcut for ``cclust.get(method, kind="consensus")(ensemble, n_clusters, **params)``
    that first turns a label matrix (or anything :class:`Ensemble` takes) into an Ensemble; a
    :class:`cclust.dask.DaskEnsemble` is passed on as it is (``kcc`` takes it chunked). A
    :class:`cclust.soft.SoftEnsemble` is passed on to a method declaring ``accepts_soft=True``;
    for any other method it becomes the equivalent Ensemble if all its partitions are hard and
    is refused with a ``ValidationError`` otherwise. An allocation that fails inside the method
    (the machine's memory, not a guard, ran out) is raised as a
    :class:`cclust.errors.MemoryBudgetError` naming the method and the size that failed
    (:func:`cclust.validation.memory_refusal`).

    Examples
    --------
    >>> import numpy as np, cclust
    >>> labels = np.array([[0, 0], [0, 0], [1, 1], [1, 1]])   # 4 objects, 2 partitions
    >>> cclust.consensus("kcc", labels, 2, random_state=0).labels.tolist()
    [0, 0, 1, 1]
    """
    from cclust.base import method_info
    from cclust.ensemble import as_ensemble, is_dask_ensemble
    from cclust.soft import is_soft_ensemble
    from cclust.validation import memory_refusal

    fn = get(method, kind="consensus")
    if is_soft_ensemble(ensemble):
        if not method_info(fn).accepts_soft:
            ensemble = ensemble.to_ensemble("ensemble", method=method)
    elif not is_dask_ensemble(ensemble):
        ensemble = as_ensemble(ensemble)
    with memory_refusal(method):
        return fn(ensemble, n_clusters, **params)


def generate(generator: str, X: Any, n_clusters: int | None = None, *, layer: str | None = None,
             use_rep: str | None = None, **params: Any) -> Any:
    """Generate an Ensemble of basic partitions of ``X`` with the generator named ``generator``.

    When ``X`` is a pandas DataFrame, the Ensemble keeps its index (:attr:`Ensemble.index`), so
    that results can be keyed by the objects' names. An ``anndata.AnnData`` gives its features
    (``X.X``, ``X.layers[layer]`` or ``X.obsm[use_rep]``, e.g. ``use_rep="X_pca"``) and its
    ``obs_names`` as the index; it is only read: nothing is written into it. A generator that
    takes a ``graph`` (``leiden``, ``louvain``) is given the AnnData's ``obsp["connectivities"]``
    (scanpy's neighbourhood graph) when it holds one and ``graph`` is not given; ``graph="knn"``
    builds one from the features instead. ``n_clusters`` may be left out only for generators
    that find the number of clusters themselves (``leiden``, ``louvain``).

    The ``multiview`` generator takes several views of the objects as ``X`` (a mapping of view
    name -> features, a list of them, or a ``mudata.MuData``) and ``layer``/``use_rep`` for its
    AnnData views; see :func:`cclust.multiview.multiview`.
    """
    from cclust.interop import _anndata

    gen = get(generator, kind="generator")
    if getattr(gen, "takes_views", False):  # multiview: aligns the views and names the objects itself
        options = {key: value for key, value in (("layer", layer), ("use_rep", use_rep)) if value is not None}
        return gen(X, n_clusters, **options, **params)
    if _anndata.is_anndata(X):
        from cclust._pipeline import validate_X
        from cclust.base import accepts

        values, where = _anndata.features(X, layer, use_rep, "X")
        features, _ = validate_X(values, where)
        if "graph" not in params and "connectivities" in X.obsp and accepts(gen, "graph", var_keyword=False):
            params["graph"] = X.obsp["connectivities"]
        ensemble = gen(features, n_clusters, **params)
        if isinstance(ensemble, Ensemble) and ensemble.index is None:
            ensemble = Ensemble(ensemble, index=X.obs_names)
        return ensemble
    _anndata.check_array_options(X, "X", layer=layer is not None, use_rep=use_rep is not None)
    ensemble = gen(X, n_clusters, **params)
    index = getattr(X, "index", None)
    if index is not None and hasattr(X, "columns") and isinstance(ensemble, Ensemble) and ensemble.index is None:
        ensemble = Ensemble(ensemble, index=index)
    return ensemble


#: The optional extras that add features, by the distribution each installs (pyproject's
#: ``[project.optional-dependencies]`` less the development extras ``docs`` and ``test``).
_EXTRAS = {"plot": "matplotlib", "progress": "tqdm", "dask": "dask", "sklearn": "scikit-learn", "scverse": "anndata",
           "graph": "leidenalg"}


def show_config(file: IO[str] | None = None) -> dict[str, Any]:
    """Print (and return as a dict) what this installation has: versions, OpenMP support, the
    default thread count, the optional extras and the plugins.

    ``cclust show-config`` prints the same. An extra that is not installed says how to install
    it; so does a plugin of this project (see :data:`cclust.registry.KNOWN_PLUGINS`).

    Parameters
    ----------
    file : file-like, default=None
        Where to print; None prints to ``sys.stdout``.

    Returns
    -------
    dict
        The printed lines, key -> value.
    """
    import platform
    import sys
    from importlib import metadata

    import numpy
    import scipy

    from cclust._ext import _contingency
    from cclust.validation import available_cores, check_n_jobs
    from cclust.registry import KNOWN_PLUGINS, install_hint

    def installed(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    info = {
        "cclust": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "openmp": _contingency.openmp_enabled(),
        "openmp_max_threads": _contingency.max_threads(),
        "threads_used_by_default": check_n_jobs(None),
        "cores": available_cores(),
        "pymetis": installed("pymetis") or "not installed",
    }
    for extra, dist in _EXTRAS.items():
        version = installed(dist)
        info[f"extra {extra}"] = (f"{dist} {version}" if version
                                  else f"not installed (pip install 'cclust[{extra}]')")
    rows = available()
    plugins = sorted({r.provider for r in rows.values() if r.provider != "cclust" and r.target != "<runtime>"})
    info["plugins"] = ", ".join(f"{p} {installed(p) or '(version unknown)'}" for p in plugins) or "none"
    for name, (dist, why) in KNOWN_PLUGINS.items():
        if name not in rows:
            info[f"plugin {dist}"] = f"not installed (provides {name!r}; {why}): {install_hint(name)}"
    width = max(len(k) for k in info)
    for key, value in info.items():
        print(f"{key:<{width}} : {value}", file=file)
    return info
