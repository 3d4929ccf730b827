"""cclust: consensus clustering for Python.

Generate diverse basic partitions, fuse them into one consensus partition with any published
consensus function, and score the result. Everything selectable by name lives in one registry
that third-party distributions extend through entry points.

>>> import cclust
>>> sorted(cclust.available(kind="metric"))[:3]
['accuracy', 'ami', 'ari']

Importing cclust imports no compiled module and no plugin.
"""
from cclust import consensus  # the package is callable: consensus(method, ensemble, K, ...)
from cclust.ensemble import Ensemble
from cclust.registry import available, get, register
from cclust.result import ConsensusResult

__version__ = "0.1.0"

__all__ = [
    "ConsensusClustering",
    "ConsensusResult",
    "Ensemble",
    "available",
    "consensus",
    "generate",
    "get",
    "register",
    "select_k",
    "show_config",
]

# Imported on first use so that ``import cclust`` stays light (no compiled module, no plugin).
_LAZY = {"ConsensusClustering": "cclust.estimator", "select_k": "cclust.selection"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cclust' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def generate(generator, X, n_clusters, **params):
    """Generate an Ensemble of basic partitions of ``X`` with the generator named ``generator``."""
    return get(generator, kind="generator")(X, n_clusters, **params)


def show_config(file=None):
    """Print (and return as a dict) versions, OpenMP support and the default thread count."""
    import platform
    import sys

    import numpy
    import scipy

    from cclust._ext import _contingency
    from cclust._validation import check_n_threads

    info = {
        "cclust": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "openmp": _contingency.openmp_enabled(),
        "openmp_max_threads": _contingency.max_threads(),
        "threads_used_by_default": check_n_threads(None),
    }
    try:
        from importlib.metadata import version

        info["pymetis"] = version("pymetis")
    except Exception:  # not installed: report rather than fail
        info["pymetis"] = "not installed"
    width = max(len(k) for k in info)
    for key, value in info.items():
        print(f"{key:<{width}} : {value}", file=file)
    return info
