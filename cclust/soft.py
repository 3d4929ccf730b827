"""SoftEnsemble: basic partitions given as membership matrices (soft, or fuzzy, partitions).

Hornik (2005, "A CLUE for CLUster Ensembles") treats every partition of n objects as an n x K_i
membership matrix U_i: entry ``U_i[x, l]`` is the degree to which object x belongs to cluster l,
each row sums to one, and a hard partition is the special case of 0/1 rows. A
:class:`SoftEnsemble` holds r such matrices and their weights. It is a sibling of
:class:`cclust.Ensemble`, not a subclass: every consensus function written for hard label
matrices keeps receiving exactly the :class:`~cclust.Ensemble` it was written for, and only the
functions that declare ``accepts_soft=True`` (:func:`cclust.base.declare`) are handed a
SoftEnsemble. :func:`cclust.consensus` (and :func:`cclust.ensemble.as_ensemble`, which every
hard-only method calls) turns a SoftEnsemble whose partitions are all hard into the equivalent
Ensemble and refuses one holding a fractional membership, naming the method and the fix.

Soft partitions have no missing objects (a row of a membership matrix must sum to one).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, TypeGuard

import numpy as np
import numpy.typing as npt

from cclust.errors import ValidationError
from cclust.validation import require_memory

if TYPE_CHECKING:
    from cclust.ensemble import Ensemble

__all__ = ["SoftEnsemble", "DEFAULT_ROW_TOLERANCE", "is_soft_ensemble"]

#: How far a membership row's sum may be from one (absolute), and how negative an entry may be
#: (rounding), before the matrix is refused.
DEFAULT_ROW_TOLERANCE = 1e-6


def is_soft_ensemble(obj: object) -> "TypeGuard[SoftEnsemble]":
    """Whether ``obj`` is a :class:`SoftEnsemble`."""
    return isinstance(obj, SoftEnsemble)


def _one_hot(labels, name):
    """A hard partition given as a label vector -> its (n, K) membership matrix."""
    from cclust.validation import label_vector

    codes, k = label_vector(np.asarray(labels), name)
    U = np.zeros((codes.shape[0], k))
    U[np.arange(codes.shape[0]), codes] = 1.0
    return U


def _check_membership(U, name, tol):
    """A validated float64 copy of one membership matrix."""
    arr = np.asarray(U)
    if arr.dtype.kind not in "fiub":
        raise ValidationError(f"{name} must hold real numbers (memberships), got dtype {arr.dtype}.")
    if arr.ndim != 2:
        raise ValidationError(f"{name} must be a 2-D (n_samples, K_i) membership matrix, got shape {arr.shape}.")
    n, k = arr.shape
    if n == 0:
        raise ValidationError(f"{name} must hold at least one object, got n_samples = 0.")
    if k < 2:
        raise ValidationError(
            f"{name} has K_i = {k} column(s): a soft partition needs at least two clusters (a single "
            "cluster carries no information); drop that partition.")
    arr = np.array(arr, dtype=np.float64, copy=True, order="C")
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValidationError(f"{name} contains NaN or infinity (first at row {bad[0]}, column {bad[1]}); "
                              "memberships must be finite numbers in [0, 1].")
    if (arr < -tol).any():
        bad = np.argwhere(arr < -tol)[0]
        raise ValidationError(f"{name} has a negative membership {arr[bad[0], bad[1]]!r} at row {bad[0]}, "
                              f"column {bad[1]}; memberships must lie in [0, 1].")
    sums = arr.sum(axis=1)
    off = np.abs(sums - 1.0) > tol
    if off.any():
        row = int(np.argmax(off))
        raise ValidationError(
            f"{name}: row {row} sums to {sums[row]!r}, not 1 (tolerance {tol:g}); {int(off.sum())} row(s) "
            "are off. Every object's memberships must sum to one: normalise the rows (U / U.sum(1)[:, None]).")
    np.maximum(arr, 0.0, out=arr)
    arr /= arr.sum(axis=1, keepdims=True)
    return arr


class SoftEnsemble:
    """Soft (fuzzy) basic partitions of the same n objects, weighted (Hornik 2005).

    Parameters
    ----------
    memberships : sequence of array-like, SoftEnsemble or Ensemble
        One membership matrix of shape (n_samples, K_i) per partition: non-negative, every row
        summing to one (within ``tol``), K_i >= 2. A 1-D array in the sequence is a hard
        partition given by its labels (turned into its 0/1 membership matrix, clusters in the
        sorted order of the labels). An :class:`cclust.Ensemble` without missing labels gives
        its partitions as 0/1 matrices (hard partitions are the special case).
    weights : array-like of shape (n_partitions,), default=None
        Non-negative partition weights, not all zero; normalised to sum to one.
    tol : float, default=1e-6
        Absolute tolerance of the row sums and of negative entries (rounding); rows within it
        are renormalised to sum to one exactly.
    provenance : str or sequence of str, default=None
        What made each partition (e.g. ``"gmm"``, ``"fuzzy-cmeans"``).

    Attributes
    ----------
    memberships : tuple of ndarray
        The n x K_i matrices (read-only views of one stacked array).
    n_clusters : ndarray of int64 — K_i of each partition
    offsets : ndarray of int64 — partition i is columns ``offsets[i]:offsets[i+1]`` of :meth:`stacked`
    weights : ndarray of float64, sums to one
    hard : ndarray of bool — whether partition i is a 0/1 (hard) partition

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.soft import SoftEnsemble
    >>> U = np.array([[0.9, 0.1], [0.8, 0.2], [0.1, 0.9]])
    >>> S = SoftEnsemble([U, [0, 0, 1]])
    >>> S.shape, S.hard.tolist()
    ((3, 2), [False, True])
    >>> S.coassociation().round(3)[0].tolist()
    [0.91, 0.87, 0.09]
    """

    def __init__(self, memberships: SoftEnsemble | Ensemble | Sequence[npt.ArrayLike] | npt.NDArray[Any],
                 weights: npt.ArrayLike | None = None, *, tol: float = DEFAULT_ROW_TOLERANCE,
                 provenance: str | Sequence[str] | None = None) -> None:
        from cclust.ensemble import Ensemble, _check_provenance
        from cclust.validation import check_float

        tol = check_float(tol, "tol", low=0, high=0.5)
        if isinstance(memberships, SoftEnsemble):
            self._init(memberships._stacked, memberships._n_clusters,
                       memberships._weights if weights is None else Ensemble._check_weights(
                           weights, memberships.n_partitions),
                       memberships._provenance if provenance is None else
                       _check_provenance(provenance, memberships.n_partitions))
            return
        kept_weights = None
        if isinstance(memberships, Ensemble):
            if memberships.has_missing:
                raise ValidationError("memberships: the Ensemble has missing labels (-1); a soft partition has "
                                      "no missing objects (every row sums to one). Drop or label them first.")
            # The Ensemble's weights are normalised already; normalising again could move them by
            # an ulp (0.05 * 20 sums to 1.0000000000000002), and the soft and hard views of the
            # same partitions should weigh them identically.
            kept_weights = memberships.weights if weights is None else None
            if provenance is None:
                provenance = memberships.provenance
            memberships = [memberships.labels[:, j] for j in range(memberships.n_partitions)]
        if isinstance(memberships, np.ndarray) and memberships.ndim == 2:
            memberships = [memberships]
        try:
            items = list(memberships)
        except TypeError:
            raise ValidationError(f"memberships must be a sequence of (n_samples, K_i) membership matrices, got "
                                  f"{type(memberships).__name__}.") from None
        if not items:
            raise ValidationError("memberships must hold at least one partition, got none.")
        mats = []
        for i, item in enumerate(items):
            name = f"memberships[{i}]"
            arr = np.asarray(item) if not isinstance(item, np.ndarray) else item
            if arr.ndim == 1:
                mats.append(_check_membership(_one_hot(arr, name), name, tol))
            else:
                mats.append(_check_membership(arr, name, tol))
        lengths = {m.shape[0] for m in mats}
        if len(lengths) > 1:
            raise ValidationError(f"memberships: the partitions cover different numbers of objects "
                                  f"{sorted(lengths)}; every partition must have one row per object.")
        n_clusters = np.array([m.shape[1] for m in mats], dtype=np.int64)
        if kept_weights is not None:
            weights = np.array(kept_weights, dtype=np.float64)
        else:
            weights = Ensemble._check_weights(weights, len(mats))
        self._init(np.hstack(mats), n_clusters, weights,
                   _check_provenance(provenance, len(mats)))

    def _init(self, stacked, n_clusters, weights, provenance):
        stacked = np.asarray(stacked, dtype=np.float64)
        for a in (stacked, n_clusters, weights):
            a.setflags(write=False)
        self._stacked = stacked
        self._n_clusters = n_clusters
        self._weights = weights
        self._provenance = provenance
        offsets = np.zeros(len(n_clusters) + 1, dtype=np.int64)
        np.cumsum(n_clusters, out=offsets[1:])
        offsets.setflags(write=False)
        self._offsets = offsets
        self._memberships = tuple(stacked[:, offsets[i]:offsets[i + 1]] for i in range(len(n_clusters)))
        hard = np.array([bool(((U == 0) | (U == 1)).all()) for U in self._memberships])
        hard.setflags(write=False)
        self._hard = hard
        self._cache = {}

    # -- properties ---------------------------------------------------------------------------
    @property
    def memberships(self) -> tuple[npt.NDArray[np.float64], ...]:
        return self._memberships

    @property
    def n_samples(self) -> int:
        return self._stacked.shape[0]

    @property
    def n_partitions(self) -> int:
        return len(self._n_clusters)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_samples, self.n_partitions)

    @property
    def n_clusters(self) -> npt.NDArray[np.int64]:
        return self._n_clusters

    @property
    def offsets(self) -> npt.NDArray[np.int64]:
        return self._offsets

    @property
    def weights(self) -> npt.NDArray[np.float64]:
        return self._weights

    @property
    def cluster_sizes(self) -> npt.NDArray[np.float64]:
        """Summed membership of every cluster of every partition, float64 (sum K_i,), read-only:
        the soft counterpart of :attr:`cclust.Ensemble.cluster_sizes` (the member counts of 0/1
        partitions), so P_i = cluster_sizes[offsets[i]:offsets[i+1]] / n_samples."""
        if "cluster_sizes" not in self._cache:
            sizes = self._stacked.sum(axis=0)
            sizes.setflags(write=False)
            self._cache["cluster_sizes"] = sizes
        return self._cache["cluster_sizes"]

    @property
    def provenance(self) -> tuple[str, ...] | None:
        return self._provenance

    @property
    def hard(self) -> npt.NDArray[np.bool_]:
        return self._hard

    @property
    def is_hard(self) -> bool:
        """Whether every partition is hard (0/1 memberships)."""
        return bool(self._hard.all())

    has_missing = False

    def __len__(self) -> int:
        return self.n_samples

    def __repr__(self) -> str:
        k = self._n_clusters
        return (f"SoftEnsemble(n_samples={self.n_samples}, n_partitions={self.n_partitions}, "
                f"K_i in [{k.min()}, {k.max()}], {int((~self._hard).sum())} soft)")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SoftEnsemble):
            return NotImplemented
        return (np.array_equal(self._n_clusters, other._n_clusters) and np.array_equal(self._stacked, other._stacked)
                and np.array_equal(self._weights, other._weights) and self._provenance == other._provenance)

    __hash__ = None  # type: ignore[assignment]  # equal by value, so unhashable

    def __getstate__(self):
        return {"stacked": self._stacked, "n_clusters": self._n_clusters, "weights": self._weights,
                "provenance": self._provenance}

    def __setstate__(self, state):
        self._init(np.array(state["stacked"]), np.array(state["n_clusters"]), np.array(state["weights"]),
                   state["provenance"])

    # -- views --------------------------------------------------------------------------------
    def stacked(self, *, weighted: bool = False) -> npt.NDArray[np.float64]:
        """The memberships side by side, dense (n_samples, sum K_i); partition i's columns scaled
        by its weight if ``weighted``."""
        if not weighted:
            return self._stacked
        if "weighted" not in self._cache:
            W = self._stacked * np.repeat(self._weights, self._n_clusters)[None, :]
            W.setflags(write=False)
            self._cache["weighted"] = W
        return self._cache["weighted"]

    def labels(self) -> npt.NDArray[np.int32]:
        """Each partition's most likely cluster per object (ties to the first), (n, r) int32."""
        return np.stack([U.argmax(axis=1) for U in self._memberships], axis=1).astype(np.int32)

    def harden(self) -> Ensemble:
        """The :class:`cclust.Ensemble` of :meth:`labels` (the same weights and provenance)."""
        from cclust.ensemble import Ensemble

        return Ensemble(self.labels(), weights=self._weights, provenance=self._provenance)

    def to_ensemble(self, name: str = "ensemble", method: str | None = None) -> Ensemble:
        """The equivalent :class:`cclust.Ensemble` if every partition is hard; a ValidationError
        naming ``name`` (and ``method``) otherwise."""
        if not self.is_hard:
            soft = np.flatnonzero(~self._hard)
            who = f"{method!r} does not accept soft partitions" if method else "a hard ensemble is needed here"
            raise ValidationError(
                f"{name}: {who}, and partition(s) {soft[:5].tolist()}{' ...' if soft.size > 5 else ''} of this "
                "SoftEnsemble have fractional memberships. Use a method that accepts them (see "
                "cclust.base.method_info(fn).accepts_soft: kcc, eac, cspa, hbgf, mcla and the clue methods se, he, "
                "dwh, gv1, gv3, sm, hm, symdiff-median), or pass ensemble.harden() (each object's most likely cluster).")
        return self.harden()

    def take(self, objects: npt.ArrayLike) -> SoftEnsemble:
        """A SoftEnsemble on a subset (or reordering) of the objects."""
        from cclust.ensemble import _selection

        idx = _selection(objects, self.n_samples, "objects")
        out = SoftEnsemble.__new__(SoftEnsemble)
        out._init(np.ascontiguousarray(self._stacked[idx]), self._n_clusters, self._weights, self._provenance)
        return out

    def with_weights(self, weights: npt.ArrayLike | None) -> SoftEnsemble:
        """The same partitions with other weights."""
        return SoftEnsemble(self, weights=weights) if weights is not None else self

    def coassociation_bytes(self) -> int:
        """Peak bytes of :meth:`coassociation`: the n x n result and the weighted copy."""
        n = self.n_samples
        return n * n * 8 + 2 * self._stacked.nbytes

    def coassociation(self, *, max_bytes: int | None = None) -> npt.NDArray[np.float64]:
        """Expected co-membership ``A = sum_i w_i U_i U_i^T`` (n_samples, n_samples), read-only.

        ``A[x, y]`` is the weighted probability that x and y fall in the same cluster when each
        partition assigns objects independently by their memberships (the co-association of
        hard partitions when every U_i is 0/1; Hornik 2005 calls ``U U^T`` the co-membership
        matrix). The diagonal is ``sum_i w_i ||U_i[x]||^2``, 1 only for hard rows.
        """
        n = self.n_samples
        require_memory(self.coassociation_bytes(), f"the expected co-membership of {n} objects",
                       "use hbgf or mcla (linear in n) or one of the clue methods (se, he, dwh)", max_bytes)
        if "coassociation" not in self._cache:
            A = self.stacked(weighted=True) @ self._stacked.T
            np.clip(A, 0.0, 1.0, out=A)
            A.setflags(write=False)
            self._cache["coassociation"] = A
        return self._cache["coassociation"]
