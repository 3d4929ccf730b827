"""ConsensusResult: what every consensus function returns."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.errors import ValidationError
from cclust.validation import warn_deprecated

#: Keys of ``ConsensusResult.extras`` that some methods spelled otherwise, per method: old -> new.
#: The old spelling still reads for one release, with a FutureWarning, on that method's results.
RENAMED_EXTRAS = {"kcc": {"gammas": "objectives", "centres": "centers"},
                  "bce": {"lower_bounds": "objectives"},
                  "em-mixture": {"log_likelihoods": "objectives"}}


class Extras(Mapping[str, Any]):
    """The read-only mapping of a result's method-specific values.

    A key its method spelled otherwise before (``renamed``, old -> new: KCC's ``"gammas"``, ...)
    reads the value of its new spelling with a FutureWarning, for one release; iteration and
    ``len`` see the new spellings only.
    """

    __slots__ = ("_data", "_renamed_keys")

    def __init__(self, data: Mapping[str, Any], renamed: Mapping[str, str] | None = None):
        self._data = dict(data)
        self._renamed_keys = dict(renamed or {})

    def _renamed(self, key: object) -> str | None:
        """The new spelling of an old key this mapping holds under its new one, with the warning."""
        new = self._renamed_keys.get(key) if isinstance(key, str) and key not in self._data else None
        if new is None or new not in self._data:
            return None
        warn_deprecated(f"extras[{key!r}] was renamed extras[{new!r}] and will be removed in the next release; "
                        f"read extras[{new!r}] instead (the same values).")
        return new

    def __getitem__(self, key: str) -> Any:
        new = self._renamed(key)
        return self._data[key if new is None else new]

    def __contains__(self, key: object) -> bool:
        return key in self._data or self._renamed(key) is not None

    def get(self, key: str, default: Any = None) -> Any:
        new = self._renamed(key)
        return self._data.get(key if new is None else new, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Extras({self._data!r})"


@dataclass(frozen=True, eq=False)
class ConsensusResult:
    """The consensus partition and how it was reached.

    Attributes
    ----------
    labels : ndarray of shape (n_samples,), int64, read-only
        Consensus labels in ``0..n_clusters-1``, every cluster non-empty.
    n_clusters : int
        Number of clusters in ``labels``.
    objective : float
        The method's own criterion for ``labels`` (e.g. KCC's consensus utility Gamma).
    objective_name : str
        What ``objective`` is, and whether larger or smaller is better.
    n_iter : int or None
        Iterations of the method's main loop; None for a method without one (a graph cut, a
        hierarchical clustering, a pick among the partitions), which has nothing to count.
    converged : bool or None
        Whether the method met its convergence rule; None when it has no such rule (then
        ``n_iter`` is None too).
    method : str
        Registry name of the method that produced the result.
    extras : mapping
        Method-specific results (e.g. ``object_weights``, ``ensemble``, ``objective_trace``),
        read-only. One spelling across methods: ``objectives`` for the criterion of each
        restart, ``centers`` for cluster centres (KCC's ``gammas``, BCE's ``lower_bounds``,
        EM's ``log_likelihoods`` and soft KCC's ``centres`` read the same values with a
        FutureWarning for one release).
    """

    labels: np.ndarray
    n_clusters: int
    objective: float = float("nan")
    objective_name: str = ""
    n_iter: int | None = None
    converged: bool | None = None
    method: str = ""
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        labels = np.array(self.labels, copy=True)
        if labels.dtype.kind not in "iu":
            raise ValidationError(f"labels must be integers, got dtype {labels.dtype}.")
        labels = labels.astype(np.int64)
        if labels.ndim != 1 or labels.size == 0:
            raise ValidationError(f"labels must be a non-empty 1-D array, got shape {labels.shape}.")
        k = int(labels.max()) + 1
        if labels.min() < 0 or np.bincount(labels, minlength=k).min() == 0:
            raise ValidationError("labels must use every cluster 0..K-1; relabel with ConsensusResult.from_labels().")
        if int(self.n_clusters) != k:
            raise ValidationError(f"n_clusters={self.n_clusters} but labels use {k} clusters.")
        labels.setflags(write=False)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "n_clusters", k)
        object.__setattr__(self, "objective", float(self.objective))
        if self.n_iter is not None:
            if isinstance(self.n_iter, (bool, np.bool_)) or not isinstance(self.n_iter, Integral) or self.n_iter < 0:
                raise ValidationError(f"n_iter must be a non-negative int or None, got {self.n_iter!r}.")
            object.__setattr__(self, "n_iter", int(self.n_iter))
        if self.converged is not None:
            object.__setattr__(self, "converged", bool(self.converged))
        object.__setattr__(self, "extras", Extras(self.extras, RENAMED_EXTRAS.get(self.method)))

    @classmethod
    def from_labels(cls, labels: npt.ArrayLike, **fields: Any) -> ConsensusResult:
        """Build a result from any integer labels, renumbering clusters to 0..K-1.

        Clusters are numbered in order of their first member, so the result does not depend
        on how the method happened to number them.
        """
        labels = np.asarray(labels).reshape(-1)
        _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        order = np.argsort(np.argsort(first, kind="stable"), kind="stable")
        compact = order[inverse.reshape(-1)]
        return cls(labels=compact, n_clusters=int(first.shape[0]), **fields)

    def __reduce__(self):
        return (_rebuild, (self.labels, self.n_clusters, self.objective, self.objective_name,
                           self.n_iter, self.converged, self.method, dict(self.extras)))

    def __repr__(self):
        name = f" {self.objective_name}" if self.objective_name else ""
        return (f"ConsensusResult(method={self.method!r}, n_samples={self.labels.shape[0]}, "
                f"n_clusters={self.n_clusters},{name} objective={self.objective:.6g}"
                + (f", n_iter={self.n_iter}" if self.n_iter is not None else "")
                + (f", converged={self.converged}" if self.converged is not None else "") + ")")


def _rebuild(*args):
    return ConsensusResult(*args)
