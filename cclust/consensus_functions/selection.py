"""Former name of :mod:`cclust.consensus_functions.best_of` (best-of: the candidate consensus
that agrees most with the ensemble), kept so that imports of it keep working; import from
:mod:`cclust.consensus_functions.best_of`."""
from cclust.consensus_functions.best_of import DEFAULT_METHODS, best_of

__all__ = ["best_of", "DEFAULT_METHODS"]
