"""The Ensemble: the basic partitions every consensus function takes.

An ensemble of r basic partitions of n objects is an ``(n, r)`` label matrix in which column i
holds partition pi_i relabelled to ``0..K_i-1`` and ``-1`` marks an object missing from pi_i
(``Ensemble.labels``, int32). It is stored in the narrowest integer type that holds every code
(:meth:`Ensemble.compact_labels`: uint8, uint16 or int32), which the compiled passes read in
place; the int32 matrix is made from it the first time ``labels`` is read. It carries one weight per partition (normalised to sum to one) and computes derived
views on demand, caching them: the sparse one-hot matrix, the co-association matrix,
contingency tables against a labelling, its canonical form (cluster names and partition order
made canonical) and its groups of identically labelled objects. It is immutable: its arrays are
read-only and nothing it is built from is written to, so a cached view never goes stale; a
derived ensemble (:meth:`Ensemble.take`, :meth:`Ensemble.with_weights`, a copy or a pickle)
starts with an empty cache of its own.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Union, overload

import numpy as np
import numpy.typing as npt

from cclust._codes import compact_dtype, labels_from_codes
from cclust._codes import missing_mask as _missing
from cclust._codes import to_compact as _to_compact
from cclust.errors import ValidationError
from cclust.validation import RandomStateLike, check_int, check_n_jobs, label_vector, renamed_threads, require_memory

if TYPE_CHECKING:
    import scipy.sparse


def _selection(index, size, name):
    """A 1-D int64 index array from indices or a boolean mask over ``size`` items, checked."""
    idx = np.asarray(index)
    if idx.dtype.kind == "b":
        if idx.shape != (size,):
            raise ValidationError(f"{name} as a boolean mask must have shape ({size},), got {idx.shape}.")
        idx = np.flatnonzero(idx)
    elif idx.size == 0:
        idx = idx.astype(np.int64)
    if idx.ndim != 1 or idx.dtype.kind not in "iu":
        raise ValidationError(f"{name} must be a 1-D array of indices or a boolean mask, got "
                              f"shape {idx.shape} and dtype {idx.dtype}.")
    if idx.size == 0:
        raise ValidationError(f"{name} must select at least one item, got none.")
    if idx.min() < -size or idx.max() >= size:
        raise ValidationError(f"{name} must be indices in [{-size}, {size - 1}], got values in "
                              f"[{int(idx.min())}, {int(idx.max())}].")
    return idx.astype(np.int64, copy=False)


def _check_index(index, n):
    """The objects' names: a pandas Index as it is (immutable), anything else as a tuple."""
    if index is None:
        return None
    if not (hasattr(index, "take") and hasattr(index, "is_unique")):  # not a pandas Index
        try:
            index = tuple(index)
        except TypeError:
            raise ValidationError(f"index must be a sequence of {n} object names, got {index!r}.") from None
    if len(index) != n:
        raise ValidationError(f"index must name each of the {n} objects, got {len(index)} names.")
    return index


def _check_provenance(provenance, r):
    """None, or a tuple of ``r`` strings from one string or a sequence of them."""
    if provenance is None:
        return None
    if isinstance(provenance, str):
        return (provenance,) * r
    try:
        values = tuple(provenance)
    except TypeError:
        raise ValidationError(f"provenance must be a string or a sequence of {r} strings, got {provenance!r}.") from None
    if len(values) != r:
        raise ValidationError(f"provenance must name what made each of the {r} partitions, got {len(values)} names.")
    bad = [v for v in values if not isinstance(v, str)]
    if bad:
        raise ValidationError(f"provenance must hold strings, got {bad[0]!r} of type {type(bad[0]).__name__}.")
    return values


def _is_missing_scalar(value):
    return value is None or (isinstance(value, float) and value != value)


def _encode_column(column, j, missing):
    """Relabel one partition to int32 codes 0..K-1 (-1 = missing); returns (codes, K)."""
    name = f"labels[:, {j}]"
    if column.dtype.kind == "b":
        column = column.astype(np.int64)
    if column.dtype.kind == "f":
        present = ~np.isnan(column)
        if missing is not None and not isinstance(missing, str):
            present &= column != missing
        if np.isinf(column[present]).any():
            raise ValidationError(f"{name} contains infinity; labels must be whole numbers or NaN for missing.")
        values = column[present]
        if (values != np.round(values)).any():
            raise ValidationError(
                f"{name} holds float labels that are not whole numbers (e.g. {values[values != np.round(values)][0]!r}); "
                "pass integer labels, with NaN or -1 for a missing object."
            )
        column = np.where(present, column, 0).astype(np.int64)
    elif column.dtype.kind in "iu":
        column = column.astype(np.int64, copy=False)
        present = np.ones(column.shape[0], dtype=bool) if missing is None else column != missing
    elif column.dtype.kind in "OUS":
        present = np.array([not _is_missing_scalar(v) and not (missing is not None and v == missing)
                            for v in column.tolist()], dtype=bool)
        values = column[present]
        try:
            uniques, codes = np.unique(values, return_inverse=True)
        except TypeError:
            # Mixed, incomparable types: number them in order of first appearance.
            seen = {}
            codes = np.array([seen.setdefault(v, len(seen)) for v in values.tolist()], dtype=np.int64)
            uniques = list(seen)
        out = np.full(column.shape[0], -1, dtype=np.int32)
        out[present] = codes.reshape(-1)
        return out, len(uniques)
    else:
        raise ValidationError(f"{name} has dtype {column.dtype}; labels must be integers, strings or whole floats.")

    out = np.full(column.shape[0], -1, dtype=np.int32)
    if present.any():
        codes, k = label_vector(column[present], name)
        out[present] = codes
    else:
        k = 0
    return out, k


def _columns_from(labels):
    """Split the accepted input forms into a list of 1-D columns."""
    if isinstance(labels, Ensemble):
        return [labels.labels[:, j] for j in range(labels.n_partitions)]
    if hasattr(labels, "columns") and hasattr(labels, "iloc"):  # a pandas DataFrame
        return [np.asarray(labels.iloc[:, j]) for j in range(labels.shape[1])]
    if isinstance(labels, (list, tuple)) and len(labels) == 0:
        raise ValidationError("labels must hold at least one partition, got an empty list.")
    if isinstance(labels, (list, tuple)) and all(np.ndim(c) == 1 for c in labels):
        columns = [np.asarray(c) for c in labels]
        lengths = {c.shape[0] for c in columns}
        if len(lengths) > 1:
            raise ValidationError(
                f"labels: the partitions have different lengths {sorted(lengths)}; every partition "
                "must label the same n objects (use -1 or None for an object missing from one)."
            )
        return columns
    try:
        array = np.asarray(labels)
    except ValueError:
        raise ValidationError(
            "labels: the partitions have different lengths; every partition must label the same n objects "
            "(use -1 or None for an object missing from one)."
        ) from None
    if array.dtype.kind == "O" and array.ndim == 1 and array.size and np.ndim(array[0]) == 1:
        raise ValidationError("labels: the partitions have different lengths; every partition must label the same n objects.")
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValidationError(
            f"labels must be 1-D (one partition) or 2-D (n_samples, n_partitions), got an array of shape {array.shape}."
        )
    return [array[:, j] for j in range(array.shape[1])]


#: Rows of the label codes read at once wherever a copy of every label would otherwise be made
#: (the one-hot, :meth:`Ensemble.join`, :func:`labelled_weight`, comparisons): a few MB of
#: temporaries.
_BLOCK_ROWS = 1 << 15


class Ensemble:
    """Basic partitions of the same n objects, relabelled and weighted.

    Parameters
    ----------
    labels : array-like of shape (n_samples, n_partitions), list of 1-D arrays, or DataFrame
        Column i is basic partition pi_i. Labels may be any comparable values (ints, strings,
        whole floats); each partition is relabelled to ``0..K_i-1`` in the sorted order of its
        values. An object missing from a partition is marked ``-1`` (integer input), ``None``
        or ``NaN``. A 1-D array is one partition; a list of 1-D arrays is a list of partitions.
    weights : array-like of shape (n_partitions,), default=None
        Non-negative partition weights, not all zero; normalised to sum to one. Equal if None.
    missing : int, str or None, default=-1
        The value that marks a missing label besides ``None``/``NaN``; ``None`` means that every
        integer is a real label.
    provenance : str or sequence of str, default=None
        What made each partition (the algorithm's name, such as ``"kmeans"`` or
        ``"hierarchical-ward"``): one string per partition, or one string for all. Kept by
        :meth:`take`, :meth:`with_weights`, pickling and equality; ``None`` when unknown. When
        ``labels`` is an Ensemble and ``provenance`` is None, its provenance is kept.
    index : sequence of length n_samples, default=None
        Names of the objects (a pandas DataFrame's index, sample IDs), one per row, for results
        keyed by them. Kept by :meth:`take` (the rows taken), :meth:`with_weights` and pickling;
        ``None`` when the objects have no names. When ``labels`` is an Ensemble and ``index`` is
        None, its index is kept.

    Attributes
    ----------
    labels : ndarray of shape (n_samples, n_partitions), int32, read-only
    n_clusters : ndarray of shape (n_partitions,), int64 — K_i of each partition
    offsets : ndarray of shape (n_partitions + 1,), int64 — partition i's one-hot columns are
        ``offsets[i]:offsets[i+1]``
    weights : ndarray of shape (n_partitions,), float64, sums to one
    provenance : tuple of str of length n_partitions, or None
    index : sequence of length n_samples, or None

    Examples
    --------
    >>> from cclust import Ensemble
    >>> E = Ensemble([["a", "a", "b", "b"], [0, 0, 0, 1], [5, 5, -1, 7]])
    >>> E.shape, E.n_clusters.tolist()
    ((4, 3), [2, 2, 2])
    >>> E.coassociation().round(2)[0].tolist()
    [1.0, 1.0, 0.5, 0.0]
    """

    def __init__(self, labels: EnsembleLike, weights: npt.ArrayLike | None = None, *, missing: int | str | None = -1,
                 provenance: str | Sequence[str] | None = None, index: Sequence[Any] | None = None) -> None:
        if isinstance(labels, Ensemble):
            state = labels.__getstate__()
            if weights is not None:
                state["weights"] = self._check_weights(weights, labels.n_partitions)
            if provenance is not None:
                state["provenance"] = _check_provenance(provenance, labels.n_partitions)
            if index is not None:
                state["index"] = _check_index(index, labels.n_samples)
            self.__setstate__(state)
            return
        columns = _columns_from(labels)
        if len(columns) == 0:
            raise ValidationError("labels must hold at least one partition, got none.")
        n = columns[0].shape[0]
        if n == 0:
            raise ValidationError("labels must label at least one object, got n_samples = 0.")
        matrix = np.empty((n, len(columns)), dtype=np.int32)
        n_clusters = np.empty(len(columns), dtype=np.int64)
        for j, column in enumerate(columns):
            matrix[:, j], n_clusters[j] = _encode_column(column, j, missing)
            if n_clusters[j] == 0:
                raise ValidationError(
                    f"labels[:, {j}] labels no object (every entry is missing); drop that partition."
                )
        self._init(matrix, n_clusters, self._check_weights(weights, len(columns)),
                   _check_provenance(provenance, len(columns)), _check_index(index, n))

    @classmethod
    def _from_codes(cls, matrix):
        """The Ensemble of an (n, r) integer label matrix built by the package itself (the
        generators' stacked k-means labels), without re-encoding it column by column when every
        column already is its own encoding: labels 0..K_j-1, each used, none missing. That is
        checked in one counting pass; any other matrix goes through the public constructor, so
        the Ensemble is the one ``Ensemble(matrix)`` gives either way."""
        matrix = np.asarray(matrix)
        if matrix.ndim != 2 or matrix.dtype.kind not in "iu" or matrix.size == 0 or matrix.min() < 0:
            return cls(matrix)
        n_clusters = matrix.max(axis=0).astype(np.int64) + 1
        starts = np.zeros(n_clusters.shape[0], dtype=np.int64)
        np.cumsum(n_clusters[:-1], out=starts[1:])
        counts = np.bincount((matrix + starts[None, :]).ravel(), minlength=int(n_clusters.sum()))
        if (counts == 0).any():
            return cls(matrix)
        self = cls.__new__(cls)
        self._init(matrix, n_clusters, cls._check_weights(None, matrix.shape[1]))
        return self

    @classmethod
    def _of_codes(cls, codes, n_clusters, weights=None):
        """The Ensemble of label codes the package itself wrote, stored without a copy when
        ``codes`` is C-contiguous in the compact dtype of ``n_clusters`` (else converted row
        block by row block): column j holds labels ``0..K_j-1``, each used, or the missing
        code. The caller vouches for the labels (GKCC's generated partitions beside the given
        ones); ``weights`` are checked and normalised as the constructor does."""
        n_clusters = np.array(n_clusters, dtype=np.int64)
        self = cls.__new__(cls)
        self._init(codes, n_clusters, cls._check_weights(weights, n_clusters.shape[0]))
        return self

    def _init(self, matrix, n_clusters, weights, provenance=None, index=None):
        """``matrix``: int32 labels (-1 = missing), non-negative integer labels of any dtype, or
        codes already in the compact dtype of ``n_clusters`` (see :meth:`compact_labels`)."""
        codes = _to_compact(matrix, compact_dtype(n_clusters))
        codes.setflags(write=False)
        n_clusters.setflags(write=False)
        weights.setflags(write=False)
        self._codes = codes
        self._n_clusters = n_clusters
        self._weights = weights
        self._provenance = provenance
        self._index = index
        offsets = np.zeros(len(n_clusters) + 1, dtype=np.int64)
        np.cumsum(n_clusters, out=offsets[1:])
        offsets.setflags(write=False)
        self._offsets = offsets
        self._cache = {}

    @staticmethod
    def _check_weights(weights, r):
        if weights is None:
            return np.full(r, 1.0 / r)
        try:
            w = np.array(weights, dtype=np.float64, copy=True).reshape(-1) if np.ndim(weights) <= 1 else None
        except (TypeError, ValueError):
            raise ValidationError(f"weights must be an array of {r} non-negative numbers, got {weights!r}.") from None
        if w is None or w.shape[0] != r:
            shape = np.shape(weights)
            raise ValidationError(f"weights must have one entry per partition ({r}), got shape {shape}.")
        if not np.isfinite(w).all():
            raise ValidationError("weights contain NaN or infinity; give finite non-negative weights.")
        if (w < 0).any():
            raise ValidationError(f"weights must be non-negative, got {w[w < 0][0]!r} at index {int(np.argmax(w < 0))}.")
        total = w.sum()
        if total <= 0:
            raise ValidationError("weights are all zero; at least one partition needs a positive weight.")
        return w / total

    # -- plain properties -------------------------------------------------------------------
    @property
    def labels(self) -> npt.NDArray[np.int32]:
        """The (n_samples, n_partitions) int32 label matrix, -1 = missing, read-only.

        Made from :meth:`compact_labels` the first time it is read and kept (when the compact
        codes are narrower it costs ``4 n r`` bytes more; kcc, the voting family and the
        contingency tables read the codes instead). The codes are what is stored: with int32
        stored and the codes as a second view, a method reading them would pay for the view on
        top of the int32 matrix, so no peak would drop (docs/benchmarks.md, "Compact label
        codes").
        """
        if self._codes.dtype == np.int32:
            return self._codes
        if "labels" not in self._cache:
            labels = labels_from_codes(self._codes)
            labels.setflags(write=False)
            self._cache["labels"] = labels
        return self._cache["labels"]

    def compact_labels(self) -> npt.NDArray[np.integer]:
        """The label matrix in the narrowest integer type that holds every code, as stored.

        uint8 when every partition has at most 127 clusters, uint16 when at most 32,767, int32
        otherwise; C-contiguous (n_samples, n_partitions), read-only, no copy. Labels are
        ``0..K_i-1`` as in :attr:`labels`; a missing label is the type's largest value (255 or
        65,535) in the unsigned types and -1 in int32 (so a code read as a signed number is its
        label, -1 for missing: what the compiled passes do). The compiled passes of kcc, of the voting
        family (ivc, ipvc, ipc, voting, em-mixture) and of the contingency tables read it in
        place. At 10^6 objects x 100 partitions it takes 95 MiB (uint8) or 191 MiB (uint16)
        where the int32 matrix takes 381 MiB.

        Examples
        --------
        >>> from cclust import Ensemble
        >>> E = Ensemble([[0, 0, 1, 1], [0, 1, -1, 1]])
        >>> E.compact_labels().dtype.name, E.compact_labels()[:, 1].tolist()
        ('uint8', [0, 1, 255, 1])
        """
        return self._codes

    @property
    def n_samples(self) -> int:
        return self._codes.shape[0]

    @property
    def n_partitions(self) -> int:
        return self._codes.shape[1]

    @property
    def shape(self) -> tuple[int, int]:
        return self._codes.shape

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
    def provenance(self) -> tuple[str, ...] | None:
        """What made each partition: a tuple of ``n_partitions`` strings, or None if unknown."""
        return self._provenance

    @property
    def index(self):
        """Names of the objects, one per row (e.g. a DataFrame's index), or None if unnamed."""
        return self._index

    @property
    def has_missing(self) -> bool:
        if "has_missing" not in self._cache:
            self._cache["has_missing"] = bool(_missing(self._codes).any())
        return self._cache["has_missing"]

    @property
    def cluster_sizes(self) -> npt.NDArray[np.int64]:
        """Members of every cluster of every partition, int64 of shape (sum K_i,), read-only.

        Cluster l of partition i is entry ``offsets[i] + l``; objects missing from a partition
        are not counted. One compiled contingency pass, computed once and cached.
        """
        if "cluster_sizes" not in self._cache:
            sizes = self.contingency(np.zeros(self.n_samples, dtype=np.int32), 1)[0]
            sizes.setflags(write=False)
            self._cache["cluster_sizes"] = sizes
        return self._cache["cluster_sizes"]

    @property
    def labelled(self) -> npt.NDArray[np.bool_]:
        """Boolean (n_samples, n_partitions): True where the object has a label."""
        return ~_missing(self._codes)

    def __len__(self):
        return self.n_samples

    def __repr__(self):
        k = self._n_clusters
        missing = f", {int(_missing(self._codes).sum())} missing labels" if self.has_missing else ""
        return (f"Ensemble(n_samples={self.n_samples}, n_partitions={self.n_partitions}, "
                f"K_i in [{k.min()}, {k.max()}]{missing})")

    def __eq__(self, other):
        if not isinstance(other, Ensemble):
            return NotImplemented
        # Equal labels have equal K_i, hence the same compact dtype: the codes compare alike.
        return (self.shape == other.shape and np.array_equal(self._n_clusters, other._n_clusters)
                and np.array_equal(self._codes, other._codes)
                and np.array_equal(self._weights, other._weights) and self._provenance == other._provenance)

    __hash__ = None  # type: ignore[assignment]  # equal by value, so unhashable

    def __getstate__(self):
        return {"codes": self._codes, "n_clusters": self._n_clusters, "weights": self._weights,
                "provenance": self._provenance, "index": self._index}

    def __setstate__(self, state):
        # state.get: pickles written before provenance existed have no such key; pickles written
        # before the compact store hold the int32 "labels"
        matrix = np.array(state["codes"]) if "codes" in state else np.array(state["labels"], dtype=np.int32)
        self._init(matrix, np.array(state["n_clusters"], dtype=np.int64),
                   np.array(state["weights"], dtype=np.float64), state.get("provenance"), state.get("index"))

    # -- derived ensembles -------------------------------------------------------------------
    def take(self, objects: npt.ArrayLike | slice | None = None,
             partitions: npt.ArrayLike | slice | None = None) -> Ensemble:
        """A new Ensemble on a subset (or reordering) of objects and/or partitions.

        Partitions are relabelled again, so clusters that lose every member disappear; the
        weights of the kept partitions are renormalised.
        """
        labels = self._codes
        weights = self._weights
        provenance = self._provenance
        if partitions is not None:
            idx = _selection(partitions, self.n_partitions, "partitions")
            labels = labels[:, idx]
            weights = weights[idx]
            if provenance is not None:
                provenance = tuple(provenance[i] for i in idx.tolist())
        index = self._index
        if objects is not None:
            rows = _selection(objects, self.n_samples, "objects")
            labels = labels[rows]
            if index is not None:
                index = index[rows] if hasattr(index, "take") and not isinstance(index, tuple) else \
                    tuple(index[i] for i in np.atleast_1d(rows).tolist())
        if labels.ndim != 2:
            raise ValidationError("partitions must select a list of partitions, not a single index.")
        return Ensemble(labels_from_codes(labels), weights=weights, provenance=provenance, index=index)

    def with_weights(self, weights: npt.ArrayLike | None) -> Ensemble:
        """The same partitions (and provenance) with other weights."""
        return Ensemble(self, weights=weights) if weights is not None else self

    def join(self, other: Ensemble, weights: npt.ArrayLike | None = None) -> Ensemble:
        """This ensemble's partitions followed by ``other``'s, on the same objects.

        Written from both ensembles' stored codes into the narrowest type that holds them all
        (never through the int32 labels): joining a million objects' 100 partitions to 20 more
        takes the 120 MB of the joined uint8 codes, not 1.4 GB of int32 matrices. The result is
        ``Ensemble(np.column_stack([self.labels, other.labels]), weights)``; provenance is kept
        when both have it, the index is this ensemble's.

        Parameters
        ----------
        other : Ensemble
            Partitions of the same ``n_samples`` objects, in the same order.
        weights : array-like of shape (self.n_partitions + other.n_partitions,), default=None
            Weights of the joined partitions, normalised to sum to one; equal if None.

        Examples
        --------
        >>> from cclust import Ensemble
        >>> Ensemble([[0, 0, 1]]).join(Ensemble([[1, 0, 0], [0, 1, 1]])).n_clusters.tolist()
        [2, 2, 2]
        """
        if not isinstance(other, Ensemble):
            raise ValidationError(f"other must be an Ensemble, got {type(other).__name__}; "
                                  "wrap its labels as Ensemble(labels) first.")
        if other.n_samples != self.n_samples:
            raise ValidationError(f"other labels {other.n_samples} objects but this ensemble {self.n_samples}: "
                                  "join ensembles of the same objects, in the same order.")
        n_clusters = np.concatenate([self._n_clusters, other._n_clusters])
        dtype = compact_dtype(n_clusters)
        codes = np.empty((self.n_samples, n_clusters.shape[0]), dtype=dtype)
        r = self.n_partitions
        for part, columns in ((self._codes, slice(0, r)), (other._codes, slice(r, None))):
            for start in range(0, part.shape[0], _BLOCK_ROWS):   # blocks bound the temporaries
                block = part[start:start + _BLOCK_ROWS]
                codes[start:start + _BLOCK_ROWS, columns] = \
                    block if block.dtype == dtype else _to_compact(labels_from_codes(block), dtype)
        provenance = None if self._provenance is None or other._provenance is None else \
            self._provenance + other._provenance
        joined = Ensemble.__new__(Ensemble)
        joined._init(codes, n_clusters, self._check_weights(weights, n_clusters.shape[0]), provenance, self._index)
        return joined

    # -- views of the same partitions ------------------------------------------------------------
    @overload
    def canonical(self, *, return_columns: Literal[False] = ...) -> Ensemble: ...
    @overload
    def canonical(self, *, return_columns: Literal[True]) -> tuple[Ensemble, npt.NDArray[np.intp]]: ...
    @overload
    def canonical(self, *, return_columns: bool) -> Ensemble | tuple[Ensemble, npt.NDArray[np.intp]]: ...

    def canonical(self, *, return_columns: bool = False) -> Ensemble | tuple[Ensemble, npt.NDArray[np.intp]]:
        """The same ensemble with cluster names and partition order made canonical, cached.

        Every partition's clusters are renumbered in order of first appearance (the first
        object's cluster is 0, the next new one 1, ...), and the partitions are sorted by
        their label vectors, then by weight. Objects keep their order. Methods that must not
        depend on how clusters are named or partitions ordered run on this form; two ensembles
        that differ only in cluster names and partition order have the same canonical form.
        Weights, provenance and index follow their partitions unchanged. The canonical form of
        a canonical ensemble is itself.

        Parameters
        ----------
        return_columns : bool, default=False
            Also return, for each partition of the canonical form, its column in this ensemble.

        Returns
        -------
        Ensemble, or (Ensemble, ndarray of shape (n_partitions,)) if ``return_columns``
        """
        if "canonical" not in self._cache:
            self._cache["canonical"] = self._make_canonical()
        out, columns = self._cache["canonical"]
        if out is None:
            out = self
        return (out, columns.copy()) if return_columns else out

    def _make_canonical(self):
        from cclust._ext import _voting

        C = _voting.first_appearance(self._codes, np.ascontiguousarray(self._offsets, dtype=np.int64))
        w = self._weights
        order = np.lexsort((w, _column_ranks(C)))
        if np.array_equal(order, np.arange(order.shape[0])) and np.array_equal(C, self._codes):
            return None, order                      # already canonical: no copy, no cycle
        out = Ensemble.__new__(Ensemble)
        provenance = None if self._provenance is None else tuple(self._provenance[j] for j in order.tolist())
        _permute_columns(C, order)
        # The weights are this ensemble's, permuted (not normalised again), and every
        # partition's clusters are all used, so nothing needs checking again.
        out._init(C, np.ascontiguousarray(self._n_clusters[order]),
                  np.ascontiguousarray(w[order]), provenance, self._index)
        out._cache["canonical"] = (None, np.arange(order.shape[0]))
        return out, order

    def distinct_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Groups of objects that every partition labels alike, cached (None if all rows differ).

        Two objects are in one group when each partition gives them the same label or leaves
        both unlabelled: they have the same one-hot row and the same co-associations, so no
        consensus can tell them apart. Returns ``(first, inverse, counts)``: the first object
        of every group in increasing order, the group of every object, and the group sizes
        (read-only arrays), or None when all rows differ; computed by
        :func:`identical_label_rows`.
        """
        if "distinct_rows" not in self._cache:
            groups = identical_label_rows(self._codes)
            if groups is not None:
                for array in groups:
                    array.setflags(write=False)
            self._cache["distinct_rows"] = groups
        return self._cache["distinct_rows"]

    @property
    def n_distinct_rows(self):
        """Number of distinct label rows (see :meth:`distinct_rows`), counted once."""
        groups = self.distinct_rows()
        return self.n_samples if groups is None else int(groups[0].shape[0])

    # -- views -------------------------------------------------------------------------------
    def one_hot(self, *, weighted: bool = False, dtype: npt.DTypeLike = np.float64,
                max_bytes: int | None = None) -> scipy.sparse.csr_matrix:
        """Sparse one-hot matrix B of shape (n_samples, sum K_i), CSR.

        Row x has a one in column ``offsets[i] + label`` for every partition that labels x
        (``weights[i]`` instead of one if ``weighted``). Never dense. Before it is first made,
        its bytes are asked of the memory budget (``max_bytes``, default the
        ``CCLUST_MEMORY_BUDGET`` environment variable or 2 GiB).
        """
        key = ("one_hot", bool(weighted), np.dtype(dtype).str)
        if key not in self._cache:
            self._cache[key] = self._make_one_hot(weighted, np.dtype(dtype), max_bytes)
        return self._cache[key]

    def _make_one_hot(self, weighted, dtype, max_bytes=None):
        """The CSR one-hot written straight from the labels, row block by row block: a row lists
        its partitions in order, and partition i's columns follow partition i-1's, so every row
        is sorted as written and only the matrix's own arrays are allocated (a COO detour held
        about four times as many bytes at its peak)."""
        import scipy.sparse as sp

        L = self._codes
        n, r = L.shape
        n_c = int(self._offsets[-1])
        nnz_max = n * r
        index_dtype = np.int32 if max(nnz_max, n_c, n) < np.iinfo(np.int32).max else np.int64
        require_memory(nnz_max * (np.dtype(index_dtype).itemsize + dtype.itemsize),
                       f"the one-hot matrix of {n} objects x {r} partitions",
                       "fuse a smaller ensemble (fewer objects or partitions), or use kcc (no one-hot)", max_bytes)
        starts = self._offsets[:-1].astype(index_dtype)
        values = (self._weights if weighted else np.ones(r)).astype(dtype)
        indptr = np.empty(n + 1, dtype=index_dtype)
        indptr[0] = 0
        if not self.has_missing:
            indptr[1:] = np.arange(r, nnz_max + 1, r, dtype=index_dtype)
        else:
            for start in range(0, n, _BLOCK_ROWS):
                stop = min(n, start + _BLOCK_ROWS)
                indptr[start + 1:stop + 1] = (~_missing(L[start:stop])).sum(axis=1)
            np.cumsum(indptr, out=indptr)
        nnz = int(indptr[-1])
        indices = np.empty(nnz, dtype=index_dtype)
        data = np.empty(nnz, dtype=dtype)
        for start in range(0, n, _BLOCK_ROWS):
            stop = min(n, start + _BLOCK_ROWS)
            lo, hi = int(indptr[start]), int(indptr[stop])
            block = L[start:stop] + starts
            if self.has_missing:
                present = ~_missing(L[start:stop])
                indices[lo:hi] = block[present]
                data[lo:hi] = np.broadcast_to(values, block.shape)[present]
            else:
                indices[lo:hi] = block.reshape(-1)
                data[lo:hi].reshape(stop - start, r)[:] = values
        B = sp.csr_matrix((data, indices, indptr), shape=(n, n_c), copy=False)
        B.has_sorted_indices = True
        return B

    @overload
    def coassociation(self, *, sparse: Literal[False] = ..., dtype: npt.DTypeLike = ...,
                      max_bytes: int | None = ...) -> np.ndarray: ...
    @overload
    def coassociation(self, *, sparse: Literal[True], dtype: npt.DTypeLike = ...,
                      max_bytes: int | None = ...) -> scipy.sparse.csr_matrix: ...
    @overload
    def coassociation(self, *, sparse: bool, dtype: npt.DTypeLike = ...,
                      max_bytes: int | None = ...) -> np.ndarray | scipy.sparse.csr_matrix: ...

    def coassociation(self, *, sparse: bool = False, dtype: npt.DTypeLike = np.float64,
                      max_bytes: int | None = None) -> np.ndarray | scipy.sparse.csr_matrix:
        """Weighted co-association matrix A (n_samples, n_samples).

        ``A[x, y]`` is the weighted fraction of the partitions labelling both x and y that put
        them in the same cluster (with no missing labels: ``sum_i w_i [pi_i(x) == pi_i(y)]``);
        0 where no partition labels both.

        Parameters
        ----------
        sparse : bool, default=False
            Return a scipy CSR matrix holding only the non-zero pairs (exact, not an
            approximation; its size is bounded by ``sum_i sum_k |C_ik|^2``).
        dtype : float32 or float64, default=float64
        max_bytes : int, default=None
            Memory budget for the result; defaults to ``cclust.validation.memory_budget()``.

        Raises
        ------
        MemoryBudgetError
            If the matrix would exceed the budget; the message gives the bytes needed.
        """
        dtype = np.dtype(dtype)
        if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValidationError(f"dtype must be float32 or float64, got {dtype}.")
        n = self.n_samples
        need = self.coassociation_bytes(sparse=sparse, dtype=dtype)
        if sparse:
            alternative = ("use knn_coassociation(n_neighbors=30) (linear memory) or a method with a "
                           "sparse or bipartite route (e.g. hbgf, mcla, kcc)")
        else:
            alternative = ("use knn_coassociation(n_neighbors=30) (linear memory), coassociation(sparse=True), or a "
                           "method that never forms it (e.g. kcc, hbgf, mcla)")
        require_memory(need, f"the {'sparse' if sparse else 'dense'} co-association of {n} objects",
                       alternative, max_bytes)
        key = ("coassociation", bool(sparse), dtype.str)
        if key in self._cache:
            return self._cache[key]
        B = self.one_hot()
        Bw = self.one_hot(weighted=True)
        if sparse:
            import scipy.sparse as sp

            A = (Bw @ B.T).tocoo()
            data = A.data
            if self.has_missing:
                data = data / self._pair_denominators_at(A.row, A.col)
            # Sums of weights that total one can exceed it by an ulp: clip so 1 - A >= 0.
            A = sp.csr_matrix((np.minimum(data, 1.0).astype(dtype), (A.row, A.col)), shape=(n, n))
            A.sort_indices()
        else:
            A = np.empty((n, n), dtype=dtype)
            equal = np.allclose(self._weights, self._weights[0], rtol=0, atol=0)
            if equal:
                # Counts of shared clusters are integers <= r: exact in float32 GEMM.
                D = B.astype(np.float32 if self.n_partitions < 2**24 else np.float64).toarray()
                Dw = D
            else:
                D, Dw = B.toarray(), Bw.toarray()
            if self.has_missing:
                M = self.labelled.astype(np.float64)
                Mw = M * self._weights
            # Row blocks keep the float64 temporaries at a few MB whatever n.
            step = max(1, 2**22 // n)
            for start in range(0, n, step):
                stop = min(n, start + step)
                if equal:
                    block = (D[start:stop] @ D.T).astype(np.float64) * self._weights[0]
                else:
                    block = D[start:stop] @ Dw.T
                if self.has_missing:
                    den = M[start:stop] @ Mw.T
                    with np.errstate(invalid="ignore", divide="ignore"):
                        block = np.where(den > 0, block / np.where(den > 0, den, 1.0), 0.0)
                # Sums of weights that total one can exceed it by an ulp: clip so 1 - A >= 0.
                A[start:stop] = np.minimum(block, 1.0)
        if not sparse:
            A.setflags(write=False)
        self._cache[key] = A
        return A

    def coassociation_bytes(self, *, sparse: bool = False, dtype: npt.DTypeLike = np.float64) -> int:
        """Peak bytes :meth:`coassociation` allocates with these arguments (checked before it runs).

        Dense: the n x n matrix, the dense one-hot matrices, the label mask (missing labels) and
        a block of float64 rows. Sparse: the bound ``sum_i sum_k |C_ik|^2`` on the pairs times
        SciPy's product, its COO copy and the result.

        Examples
        --------
        >>> from cclust import Ensemble
        >>> Ensemble([[0, 0, 1, 1]]).coassociation_bytes() >= 4 * 4 * 8
        True
        """
        dtype = np.dtype(dtype)
        n = self.n_samples
        if sparse:
            bound = min(n * n, int((self.cluster_sizes.astype(np.float64) ** 2).sum()))
            # SciPy's CSR product (8 + 4), its COO copy (8 + 4 + 4), the result (itemsize + 4).
            return bound * (dtype.itemsize + 32) + (n + 1) * 8
        width = int(self._offsets[-1])
        return (n * n * dtype.itemsize + n * width * 16 + (n * self.n_partitions * 16 if self.has_missing else 0)
                + 3 * 8 * min(n, max(1, 2**22 // n)) * n)

    @renamed_threads
    def knn_coassociation(self, n_neighbors: int = 30, *, n_bands: int = 8, band_size: int | None = None,
                          window: int | None = None, random_state: RandomStateLike = None,
                          dtype: npt.DTypeLike = np.float32, max_bytes: int | None = None,
                          n_jobs: int | None = None) -> scipy.sparse.csr_matrix:
        """Sparse co-association keeping each object's ``n_neighbors`` strongest pairs (approximate kNN).

        The scalable route for the methods that read the co-association (CSPA, EAC with single
        linkage): memory and time grow linearly in n, where the dense matrix grows as n^2 (8 TB
        at n = 10^6). At n = 10^6 with r = 100 partitions the estimate checked against
        ``max_bytes`` is about 3 GB, above the default 2 GiB budget: pass ``max_bytes`` at that
        size. Measured times and memory are in docs/benchmarks.md (sparse co-association at
        scale).

        How the neighbours are found:

        1. **Duplicates.** Objects with identical label rows (co-association 1) are collapsed to
           one distinct row each; k-means ensembles typically have far fewer distinct rows than
           objects. Each object is joined to min(g - 1, ``n_neighbors``) of its g - 1 duplicates.
        2. **Candidates by sorting.** The co-association is a weighted Hamming similarity of label
           rows, so rows that agree on many partitions are near each other in a lexicographic
           order of the rows. Each of ``n_bands`` bands draws a random order of ``band_size``
           partitions, sorts the distinct rows lexicographically on them, and offers each row
           the ``window`` rows just before and after it as candidates (a sorted-neighbourhood
           form of LSH by bit sampling: rows sharing a long prefix of labels are adjacent, and
           a big bucket of rows sharing a short prefix is split by the labels that follow
           instead of being sampled blindly).
        3. **Exact values.** The co-association of every candidate pair is computed exactly
           from the two label rows (as :meth:`coassociation` does, missing labels included) and
           each distinct row keeps its ``n_neighbors`` largest; an object then takes its
           duplicates, followed by the members of its row's nearest rows, until it has
           ``n_neighbors``; besides, it always keeps one member of each of its row's
           ``n_neighbors`` nearest other rows, so that a group of more than ``n_neighbors``
           duplicates stays linked to the rest (a plain kNN graph would make it an island,
           which misleads graph cuts). If there are at most ``2 * window * n_bands + 1``
           distinct rows, all pairs are compared instead and the graph is the exact kNN graph.

        The approximation: every stored value is the exact co-association of that pair, and the
        graph is symmetric (an edge is kept if either end chose it, the union). What is lost
        are (a) pairs outside every object's top ``n_neighbors`` — all the weak links that the
        dense matrix holds — and (b) true top-``n_neighbors`` pairs that no band placed within
        ``window`` positions of each other, which are replaced by weaker ones. Ties at the
        ``n_neighbors``-th value are broken by a seeded random order of the rows (breaking
        them by index would pile edges on low-index objects), so the kept set among tied pairs
        is one valid choice. Zero co-associations are never stored, nor the diagonal.
        Recall of the true top-``n_neighbors`` (ties at the k-th value count as hits) with the
        defaults: 0.984 on a k-means ensemble of letter (n = 20,000, r = 100, K_i in [10, 50];
        ``benchmarks/bench_sparse.py``); the test suite requires at least 0.9 on a seeded
        planted-cluster ensemble with 30% label noise (every row distinct). Raise ``window``
        or ``n_bands`` for more.

        Parameters
        ----------
        n_neighbors : int, default=30
            Neighbours kept per object (>= 1); more than n - 1 keeps every positive pair.
        n_bands : int, default=8
            Random sorts of the rows; more bands raise recall, time grows linearly.
        band_size : int, default=None
            Partitions in each band's sort key (drawn at random, in random order); None: up
            to 24 (rows that agree on 24 random partitions are already near-duplicates).
        window : int, default=None
            Rows on each side of a row in a band's order that become its candidates;
            None: ``max(8, n_neighbors)``. Recall depends mostly on ``window * n_bands``.
        random_state : int, Generator or None
            Seeds the bands' partition orders; the same seed gives the same matrix for any
            ``n_jobs``.
        dtype : float32 or float64, default=float32
        max_bytes : int, default=None
            Memory budget (see :func:`cclust.validation.memory_budget`); the estimate is checked before any
            large allocation.
        n_jobs : int, default=None
            Threads comparing label rows (NumPy releases the GIL); None: every core
            elsewhere (:func:`cclust.validation.default_threads`).

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_samples, n_samples)
            Symmetric, sorted indices, no explicit zeros, no diagonal. At most about
        ``3 * n_neighbors`` stored entries per row before symmetrisation (duplicates ring,
        nearest objects, one member per nearest row).

        Raises
        ------
        MemoryBudgetError
            If the estimated peak exceeds the budget; the message gives the bytes.

        Examples
        --------
        Object 0's strongest neighbour is its duplicate, object 1; it also keeps a member of
        its row's nearest other row (object 2):

        >>> import numpy as np
        >>> from cclust import Ensemble
        >>> E = Ensemble([[0, 0, 0, 1, 1], [0, 0, 1, 1, 1], [0, 0, 1, 1, 2]])
        >>> A = E.knn_coassociation(1, random_state=0, dtype=np.float64)
        >>> A[0].toarray().round(2).tolist()
        [[0.0, 1.0, 0.33, 0.0, 0.0]]
        >>> bool((A != A.T).nnz == 0)
        True
        """
        from cclust._knn import knn_graph
        from cclust.validation import check_int, check_random_state

        n, r = self.shape
        n_neighbors = check_int(n_neighbors, "n_neighbors", low=1)
        n_bands = check_int(n_bands, "n_bands", low=1)
        band_size = check_int(band_size, "band_size", low=1, high=r, allow_none=True)
        window = check_int(window, "window", low=1, allow_none=True)
        dtype = np.dtype(dtype)
        if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValidationError(f"dtype must be float32 or float64, got {dtype}.")
        n_jobs = check_n_jobs(n_jobs)
        rng = check_random_state(random_state)
        k = min(n_neighbors, max(n - 1, 1))
        window = max(8, n_neighbors) if window is None else window
        return knn_graph(self, k, n_bands, min(r, 24) if band_size is None else band_size, window, rng, dtype,
                         max_bytes, n_jobs)

    def _pair_denominators_at(self, rows, cols):
        """sum_i w_i [x and y both labelled in pi_i] for the listed pairs only."""
        M = self.labelled
        out = np.empty(rows.shape[0])
        step = max(1, 2**22 // max(1, self.n_partitions))
        for start in range(0, rows.shape[0], step):
            r, c = rows[start:start + step], cols[start:start + step]
            out[start:start + step] = (M[r] & M[c]) @ self._weights
        return out

    @renamed_threads
    def contingency(self, labels: npt.ArrayLike, n_clusters: int | None = None, *,
                    n_jobs: int | None = None) -> npt.NDArray[np.int64]:
        """Contingency table of a labelling against every partition at once.

        Parameters
        ----------
        labels : array-like of shape (n_samples,)
            Integer labels in ``0..n_clusters-1`` (``-1`` skips the object).
        n_clusters : int, default=None
            Number of rows; ``labels.max() + 1`` if None.

        Returns
        -------
        table : ndarray of shape (n_clusters, sum K_i), int64
            ``table[k, offsets[i] + l]`` counts objects in cluster k with label l in pi_i;
            objects missing from pi_i are not counted in its block.
        """
        y = np.asarray(labels)
        if y.ndim != 1 or y.shape[0] != self.n_samples:
            raise ValidationError(
                f"labels must have shape ({self.n_samples},) to match the ensemble, got {y.shape}."
            )
        if y.dtype.kind not in "iu":
            if y.dtype.kind == "f" and np.isfinite(y).all() and (y == np.round(y)).all():
                y = y.astype(np.int64)
            else:
                raise ValidationError(f"labels must be integers in 0..n_clusters-1, got dtype {y.dtype}.")
        if n_clusters is None:
            n_clusters = int(y.max()) + 1 if y.size else 0
        # The core's K is a C int, and the table is K x sum K_i int64: bound both before going in.
        n_clusters = check_int(n_clusters, "n_clusters", low=1, high=np.iinfo(np.int32).max)
        require_memory(n_clusters * int(self._offsets[-1]) * 8, f"the {n_clusters}-row contingency table",
                       "pass the number of clusters the labels actually use")
        if y.size and (y.max() >= n_clusters or y.min() < -1):
            raise ValidationError(
                f"labels must lie in 0..{n_clusters - 1} (or -1 to skip an object), got values in "
                f"[{int(y.min())}, {int(y.max())}]."
            )
        from cclust._engine import label_table

        return label_table(
            self._codes,
            self._offsets, np.ascontiguousarray(y, dtype=np.int32), int(n_clusters),
            check_n_jobs(n_jobs))

    @renamed_threads
    def contingency_blocks(self, labels: npt.ArrayLike, n_clusters: int | None = None, *,
                           n_jobs: int | None = None) -> list[npt.NDArray[np.int64]]:
        """The table of :meth:`contingency` split into one (n_clusters, K_i) block per partition."""
        table = self.contingency(labels, n_clusters, n_jobs=n_jobs)
        return [table[:, self._offsets[i]:self._offsets[i + 1]] for i in range(self.n_partitions)]




def _first_difference(a, b):
    """-1, 0 or 1 as column ``a`` sorts before, with or after column ``b`` by their bytes (the
    order of the columns viewed as single byte strings), read in row blocks."""
    for start in range(0, a.shape[0], _BLOCK_ROWS):
        differ = np.flatnonzero(a[start:start + _BLOCK_ROWS] != b[start:start + _BLOCK_ROWS])
        if differ.size:
            i = start + int(differ[0])
            return -1 if a[i:i + 1].tobytes() < b[i:i + 1].tobytes() else 1
    return 0


def _column_ranks(C):
    """Dense ranks of the columns of ``C`` in the order of their bytes (equal columns share a
    rank): what ``np.unique`` of the columns viewed as byte strings numbers them, without the
    transposed copy and the sort's copy of the whole matrix that it makes."""
    import functools

    r = C.shape[1]
    key = functools.cmp_to_key(lambda i, j: _first_difference(C[:, i], C[:, j]))
    by_bytes = sorted(range(r), key=key)
    ranks = np.zeros(r, dtype=np.int64)
    for previous, j in zip(by_bytes, by_bytes[1:]):
        ranks[j] = ranks[previous] + (_first_difference(C[:, previous], C[:, j]) != 0)
    return ranks


def _permute_columns(C, order):
    """``C[:, order]`` written into ``C`` itself, one block of rows at a time, so that no second
    label matrix is allocated (rows are contiguous: a block is permuted in cache)."""
    for start in range(0, C.shape[0], _BLOCK_ROWS):
        block = C[start:start + _BLOCK_ROWS]
        block[:] = block[:, order]


# -- objects that every partition labels alike ------------------------------------------------

#: Rows of the label matrix hashed at once when looking for identically labelled objects.
_HASH_CHUNK_ROWS = 1 << 13


def identical_label_rows(labels):
    """Groups of identically labelled objects: :func:`cclust.graph.identical_rows` of the ensemble's one-hot
    (weighted or not), from the label matrix.

    Two objects have the same one-hot row exactly when every partition gives them the same
    label (or leaves both unlabelled). Rows are grouped by a 64-bit hash, checked exactly; on a
    collision the grouping is redone by sorting the rows' bytes. Returns ``(first, inverse,
    counts)`` numbered by first member, as :func:`cclust.graph.identical_rows` does, or None if all differ.
    """
    n, r = labels.shape
    if n < 2:
        return None
    keys = np.random.default_rng(0x5DEECE66D).integers(1, 2**63 - 1, size=r, dtype=np.int64).view(np.uint64)
    keys |= np.uint64(1)
    row_hash = np.empty(n, dtype=np.uint64)
    for start in range(0, n, _HASH_CHUNK_ROWS):  # chunks bound the uint64 copy of the labels
        stop = min(n, start + _HASH_CHUNK_ROWS)
        np.matmul(labels[start:stop].astype(np.uint64), keys, out=row_hash[start:stop])  # wraps mod 2^64
    return _group_rows(labels, row_hash)


def _group_rows(labels, row_hash):
    """Groups of equal rows of ``labels`` (as :func:`cclust.graph.identical_rows` numbers them) found through
    ``row_hash``, exact whatever the hash: rows sharing a hash are compared, and if any differ
    the rows are grouped by sorting their bytes instead."""
    n, r = labels.shape
    _, first, inverse, counts = np.unique(row_hash, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    shared = np.flatnonzero(counts[inverse] > 1)  # a row alone with its hash is its group's first
    if first.shape[0] < n and not np.array_equal(labels[shared], labels[first[inverse[shared]]]):
        rows = np.ascontiguousarray(labels).view(np.dtype((np.void, labels.dtype.itemsize * r))).reshape(-1)
        _, first, inverse, counts = np.unique(rows, return_index=True, return_inverse=True, return_counts=True)
    if first.shape[0] == n:
        return None
    return number_by_first(first, inverse.reshape(-1), counts)


def number_by_first(first, inverse, counts):
    """Renumber groups in order of their first member, so the merged graph keeps the objects' order."""
    rank = np.empty_like(first)
    by_first = np.argsort(first, kind="stable")
    rank[by_first] = np.arange(first.shape[0])
    return first[by_first], rank[inverse], counts[by_first]


def is_dask_ensemble(obj: object) -> bool:
    """Whether ``obj`` is a :class:`cclust.dask.DaskEnsemble` (checked without importing Dask)."""
    return type(obj).__name__ == "DaskEnsemble" and type(obj).__module__.startswith("cclust.dask.")


def labelled_weight(ensemble):
    """sum_i w_i over the partitions that label each object (the weight total without missing
    labels): IVC's ceiling, SEC's ||b_x||_W^2."""
    if not ensemble.has_missing:
        return np.full(ensemble.n_samples, ensemble.weights.sum())
    # NumPy's row sums over blocks of rows: no float64 copy of every label, and the same sums
    # whatever BLAS or its threads (a matrix-vector product's order is theirs).
    codes, weights = ensemble.compact_labels(), ensemble.weights
    out = np.empty(ensemble.n_samples)
    for start in range(0, codes.shape[0], _BLOCK_ROWS):
        np.sum(~_missing(codes[start:start + _BLOCK_ROWS]) * weights, axis=1, out=out[start:start + _BLOCK_ROWS])
    return out


def require_every_object_labelled(ensemble, method, reason, name="ensemble"):
    """Refuse an ensemble with an object missing from every partition, for the methods that place
    an object only through the clusters that hold it (ECPCS, LWEA/LWGP, PTA/PTGP): the message
    names how many, the first few and the fix."""
    if not ensemble.has_missing:
        return
    codes = ensemble.compact_labels()
    unlabelled = np.flatnonzero(np.concatenate([_missing(codes[start:start + _BLOCK_ROWS]).all(axis=1)
                                                for start in range(0, codes.shape[0], _BLOCK_ROWS)]))
    if unlabelled.size:
        more = " ..." if unlabelled.size > 5 else ""
        raise ValidationError(
            f"{name}: {unlabelled.size} object(s) are missing from every partition, i.e. have missing labels "
            f"in every partition (first: {unlabelled[:5].tolist()}{more}); {method} {reason}. Drop them "
            f"({name}.take(objects=...)) or label them in at least one partition.")


#: What a consensus function takes as its ensemble: an Ensemble, or anything Ensemble() takes
#: (a label matrix of shape (n_samples, n_partitions), a list of 1-D labellings, a DataFrame).
EnsembleLike = Union[Ensemble, npt.ArrayLike]


def as_ensemble(ensemble: Any, name: str = "ensemble") -> Ensemble:
    """An Ensemble from an Ensemble (returned as is) or anything Ensemble() accepts."""
    if isinstance(ensemble, Ensemble):
        return ensemble
    if type(ensemble).__name__ == "SoftEnsemble" and type(ensemble).__module__ == "cclust.soft":
        return ensemble.to_ensemble(name)  # hard partitions only; soft ones are refused by name
    if is_dask_ensemble(ensemble):
        raise ValidationError(
            f"{name}: a DaskEnsemble (chunked by objects) is accepted by kcc only; call "
            f"{name}.compute() for an in-memory Ensemble if it fits, or use kcc."
        )
    try:
        return Ensemble(ensemble)
    except ValidationError as exc:
        raise ValidationError(f"{name}: {exc}") from None
