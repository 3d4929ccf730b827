"""The graph methods' shared argument checks and memory figures: the ensemble and K, ufactor,
balance, neighbours, the bytes of a dense graph and of a METIS call; and the canonical order of
cluster vertices."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from cclust._codes import labels_from_codes
from cclust.ensemble import Ensemble, as_ensemble
from cclust.errors import ValidationError
from cclust.validation import check_int, require_memory

if TYPE_CHECKING:
    from cclust.graph._merge import Groups


def check_graph_inputs(ensemble: Any, n_clusters: object, name: str = "ensemble") -> tuple[Ensemble, int]:
    """Validate an ensemble and K for a graph method; returns (Ensemble, K)."""
    ensemble = as_ensemble(ensemble, name)
    n = ensemble.n_samples
    if n < 2:
        raise ValidationError(f"{name} must label at least 2 objects to be partitioned, got {n}.")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=n)
    if (ensemble.n_clusters <= 1).all():
        raise ValidationError(
            f"{name}: every partition puts all objects in one cluster, so the graph carries no "
            "information to cut; generate partitions with at least two clusters."
        )
    return ensemble, n_clusters


def check_ufactor(ufactor: int | None) -> int | None:
    return check_int(ufactor, "ufactor", low=1, high=100_000, allow_none=True)


#: What METIS balances between MCLA/WOMC meta-clusters (see :func:`mcla`).
BALANCES = ("clusters", "objects")


def check_balance(balance: str) -> str:
    if balance not in BALANCES:
        raise ValidationError(f"balance must be 'clusters' or 'objects', got {balance!r}.")
    return balance


def check_n_neighbors(n_neighbors: int | None, n: int) -> int | None:
    return check_int(n_neighbors, "n_neighbors", low=1, high=max(1, n - 1), allow_none=True)


def _idx_bytes() -> int:
    try:
        from pymetis._internal import _idx_type_width
        return int(_idx_type_width()) // 8
    except (ImportError, AttributeError):  # older PyMetis builds: assume 64-bit idx_t
        return 8


def dense_graph_bytes(n: int, itemsize: int = 4) -> int:
    """Bytes a dense similarity of n objects and its METIS graph need at the peak, asked before
    the similarity is formed (a soft ensemble's co-association for CSPA).

    ``itemsize + 24`` bytes a pair: the dense matrix, and 24 bytes a pair of its sparse graph
    and METIS's arrays (the RSS high-water mark of CSPA's dense route at n = 1000 and 2000 on
    k-means ensembles with a fifth of the pairs non-zero: 22.7 and 21.6 bytes a pair). Once the similarity is known,
    :func:`cclust.graph.symmetric_graph` asks for its graph on the non-zero pairs it counts.
    """
    return n * n * (itemsize + 24)


#: Bytes a non-zero entry (off the diagonal) of a dense similarity costs once METIS's graph is
#: made from it (:func:`cclust.graph.symmetric_graph`, which asks for it): the float64 CSR entry (12) and, during a
#: cut, METIS's integer weights and adjacency arrays (20 with 64-bit METIS indices). Measured on
#: CSPA's dense route (the float32 co-association held besides, 4 bytes a pair), peak RSS at
#: n = 1000 to 4000: 30 to 34 bytes an entry (co-associations of 19% to 100% non-zero pairs).
DENSE_GRAPH_ENTRY_BYTES = 32


def metis_bytes(n_vertices: int, n_entries: int) -> int:
    """Address space METIS maps at most to partition a graph: 16 idx_t per vertex and per
    adjacency entry (both directions of every edge). The least limit under which METIS 5.1
    succeeded was 2.5-2.7 of them per entry on dense graphs and 10-12.2 on sparse random and
    clustered ones of 2 * 10^4 to 10^5 vertices (its coarser graphs keep most edges there)."""
    return 16 * (int(n_vertices) + int(n_entries)) * _idx_bytes()


def check_dense_budget(n: int, what: str, max_bytes: int | None, itemsize: int = 4,
                       alternative: str | None = None) -> None:
    if alternative is None:
        alternative = ("pass n_neighbors=... (e.g. 30) for the sparse route that keeps each object's "
                       "strongest neighbours")
    require_memory(dense_graph_bytes(n, itemsize), f"the dense {what} of {n} objects and its METIS graph",
                   alternative, max_bytes)


#: The scalable route named by CSPA's refusals.



#: Rows of the label matrix whose cluster keys are scattered at once by :func:`canonical_cluster_order`.
_ORDER_BLOCK_ROWS = 1 << 14


def canonical_cluster_order(ensemble: Ensemble, identical: Groups | None | str = "compute") -> npt.NDArray[np.intp]:
    """A permutation of the one-hot columns that depends on the clusters' members only.

    Clusters are sorted by (first member, size, a 64-bit hash of the member set, partition
    weight); identical clusters compare equal and are interchangeable in every graph built here.
    The keys are scattered from the label matrix (no one-hot is formed), every group of
    identically labelled objects read once: its first object is its smallest, its members'
    keys are summed beforehand. The stored label codes are read (:meth:`Ensemble.compact_labels`),
    a block of rows at a time, so no n x r array is made here.

    ``identical`` is :meth:`cclust.Ensemble.distinct_rows` (None when every row differs) if the
    caller has it already; ``"compute"`` reads it from the ensemble (computed once, cached).
    """
    # The stored codes, converted one row block at a time: the int32 label matrix is never made.
    L = ensemble.compact_labels()
    groups = ensemble.distinct_rows() if isinstance(identical, str) else identical
    n, r = L.shape
    n_c = int(ensemble.offsets[-1])
    # an array: NumPy's stubs read integers(..., size=n, dtype=...) as a scalar
    keys = cast("npt.NDArray[np.uint64]",
                np.random.default_rng(0x9E3779B9).integers(0, 2**63 - 1, size=n, dtype=np.int64).view(np.uint64))
    firsts: npt.NDArray[np.integer[Any]]
    if groups is None:
        firsts, multiplicity, group_keys = np.arange(n), None, keys
    else:
        firsts, inverse, multiplicity = groups
        group_keys = np.zeros(firsts.shape[0], dtype=np.uint64)
        np.add.at(group_keys, inverse, keys)  # uint64 sums wrap, as the sum over the members does
    starts = ensemble.offsets[:-1]   # int64: the block's keys index the bins without a cast
    sizes = np.zeros(n_c + 1, dtype=np.int64 if multiplicity is None else np.float64)
    first = np.full(n_c + 1, n, dtype=np.int64)
    member_hash = np.zeros(n_c + 1, dtype=np.uint64)
    # Row blocks: the per-entry keys (cluster, first member, member hash) exist for one block
    # at a time, a few MB, where whole they were three n x r 8-byte copies of the labels.
    for lo in range(0, firsts.shape[0], _ORDER_BLOCK_ROWS):
        hi = min(firsts.shape[0], lo + _ORDER_BLOCK_ROWS)
        block = labels_from_codes(L[lo:hi] if groups is None else L[firsts[lo:hi]])
        columns = block + starts
        if ensemble.has_missing:
            columns[block < 0] = n_c  # a bin past the clusters collects the missing labels
        columns = columns.reshape(-1)
        # ufunc.at is fast on 1-d operands of one shape only (broadcast values take a slow path).
        sizes += (np.bincount(columns, minlength=n_c + 1) if multiplicity is None else
                  np.bincount(columns, weights=np.repeat(multiplicity[lo:hi].astype(np.float64), r), minlength=n_c + 1))
        np.minimum.at(first, columns, np.repeat(firsts[lo:hi], r))
        np.add.at(member_hash, columns, np.repeat(group_keys[lo:hi], r))
    sizes = sizes.astype(np.int64)
    partition_weight = np.repeat(ensemble.weights, ensemble.n_clusters)
    return np.lexsort((partition_weight, member_hash[:n_c], sizes[:n_c], first[:n_c]))
