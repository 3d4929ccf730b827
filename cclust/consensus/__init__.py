"""Consensus functions, one module per family (``kcc``, ...), each plain Python orchestration
over the compiled cores; find them by name with ``cclust.get``.

The package is also the ``cclust.consensus(method, ensemble, n_clusters, **params)`` shortcut:
DESIGN.md asks for both a ``consensus/`` package and a ``consensus()`` function at the top
level, and Python binds a subpackage to its parent's attribute when it is imported, so the
package itself is made callable instead of letting one name shadow the other.
"""
import sys
import types


def fuse(method, ensemble, n_clusters, **params):
    """Fuse an ensemble with the consensus function registered as ``method``.

    A thin shortcut for ``cclust.get(method, kind="consensus")(Ensemble(ensemble), n_clusters,
    **params)``; also reachable as ``cclust.consensus(method, ensemble, n_clusters, **params)``.
    """
    from cclust.ensemble import as_ensemble, is_dask_ensemble
    from cclust.registry import get

    fn = get(method, kind="consensus")
    if not is_dask_ensemble(ensemble):  # a DaskEnsemble stays chunked (kcc takes it)
        ensemble = as_ensemble(ensemble)
    return fn(ensemble, n_clusters, **params)


class _CallablePackage(types.ModuleType):
    def __call__(self, method, ensemble, n_clusters, **params):
        return fuse(method, ensemble, n_clusters, **params)


sys.modules[__name__].__class__ = _CallablePackage
