"""Pieces that several families of consensus functions share: restart starts and label lookups.

The label-vector methods (IVC, IPVC, IPC and relabel-and-vote in :mod:`.voting`, the EM mixture
in :mod:`.mixture`, BCE in :mod:`.bayesian`) start their restarts the same way, by k-means++
seeding on the label vectors or from base partitions (Nguyen & Caruana 2007, sec. 8), and read
per-(cluster, partition, label) tables at every object's labels with one compiled pass. They
run on the canonical ensemble (:meth:`cclust.Ensemble.canonical`), so the starts do not depend
on how clusters are named or partitions ordered. No family is imported here.
"""
import numpy as np

from cclust.ensemble import identical_label_rows, labelled_weight
from cclust.validation import check_init_name, check_int

#: The start rules of the label-vector methods (see :func:`initial_labelings`).
INITS = ("k-means++", "partitions")


def kernel():
    """The compiled lookup passes (imported on first use)."""
    from cclust._ext import _voting

    return _voting


def block_index(ensemble):
    """Partition index of every column of the batched contingency table."""
    return np.repeat(np.arange(ensemble.n_partitions), ensemble.n_clusters)


def block_sums(table, ensemble):
    """(K, r) per-partition row sums of a batched table: n_ki, the labelled members."""
    return np.add.reduceat(table, ensemble.offsets[:-1], axis=1)


def as_lookup(values):
    """(K, W) values as the contiguous (W, K) table the compiled pass reads."""
    return np.ascontiguousarray(values.T, dtype=np.float64)


def lookup_argmax(C, offsets, lookup, allowed, n_threads):
    """Best allowed cluster of every object for a (W, K) lookup table, and its score.

    Tables with few non-zeros (IVC's modes, relabel-and-vote's matches) go through the CSR
    pass, the others through the dense one; both give bitwise the same result.
    """
    allowed = np.ascontiguousarray(allowed, dtype=np.uint8)
    rows, cols = np.nonzero(lookup)
    if rows.shape[0] * 4 <= lookup.size:
        indptr = np.zeros(lookup.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=lookup.shape[0]), out=indptr[1:])
        return kernel().argmax_sparse(C, offsets, indptr, cols.astype(np.int32),
                                      np.ascontiguousarray(lookup[rows, cols]), lookup.shape[1],
                                      allowed, n_threads)
    return kernel().argmax(C, offsets, lookup, allowed, n_threads)


def ipvc_values(ensemble, table, cols):
    """IPVC's (K, W) lookup values ``w_i c[k, i, l] / n_ki`` (Nguyen & Caruana 2007, eq. 2):
    an object's score for cluster k is their sum at its labels; ``cols`` is :func:`block_index`."""
    n_ki = block_sums(table, ensemble)[:, cols].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(n_ki > 0, table / np.where(n_ki > 0, n_ki, 1), 0.0)
    return frac * ensemble.weights[cols]


def ipvc_pass(ensemble, labels, n_clusters, n_threads):
    """One IPVC assignment pass from ``labels`` (-1: unassigned): every object's best cluster
    among the non-empty ones, and its distance to it (the labelled weight minus its score)."""
    C = np.ascontiguousarray(ensemble.labels, dtype=np.int32)
    offsets = np.ascontiguousarray(ensemble.offsets, dtype=np.int64)
    table = ensemble.contingency(labels, n_clusters, n_jobs=n_threads)
    allowed = table.sum(axis=1) > 0
    new, best = lookup_argmax(C, offsets, as_lookup(ipvc_values(ensemble, table, block_index(ensemble))),
                              allowed, n_threads)
    return new, labelled_weight(ensemble) - best


def label_distributions(counts, offsets, smoothing):
    """Per component and partition, the distribution over the partition's labels from expected
    counts: the MAP estimate under a symmetric Dirichlet(1 + smoothing) prior.

    ``counts`` is the (W, K) table of expected label counts (one row per label slot, partitions
    in the blocks ``offsets[i]:offsets[i + 1]``); the result has the same layout, every block
    column summing to one. A component with no labelled mass in a partition (possible only with
    ``smoothing=0``) gets probability 1 for every label there, so it drops out of that partition.
    """
    sizes = np.diff(offsets)
    totals = np.add.reduceat(counts, offsets[:-1], axis=0)   # (r, K): labelled mass per partition
    denom = np.repeat(totals + smoothing * sizes[:, None], sizes, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (counts + smoothing) / np.where(denom > 0, denom, 1), 1.0)


def start_from_partition(part, n_clusters):
    """Initial labels from a base partition: its ``n_clusters`` largest clusters (ties: first
    named first) keep their members, every other object is unassigned (-1)."""
    present = part >= 0
    sizes = np.bincount(part[present], minlength=int(part.max()) + 1 if present.any() else 1)
    keep = np.argsort(-sizes, kind="stable")[:n_clusters]
    keep = keep[sizes[keep] > 0]
    mapping = np.full(sizes.shape[0], -1, dtype=np.int32)
    mapping[keep] = np.arange(keep.shape[0], dtype=np.int32)
    out = np.full(part.shape[0], -1, dtype=np.int32)
    out[present] = mapping[part[present]]
    return out


def seeded_starts(ensemble, n_clusters, n_init, rng, n_threads):
    """``n_init`` starting labelings by k-means++ seeding on the label vectors.

    Each start draws K objects by D^2 sampling (greedy k-means++, as KCC++) under the weighted
    Hamming distance between label vectors (the Uc distance on the one-hot rows, twice the
    Hamming distance; a partition missing an object is charged as in KCC), and every object
    joins its nearest seed. The seeds spread over the label space, so restarts start from
    different basins, where a base partition with K_i != K starts every restart from the same
    merge of its K largest clusters.
    """
    from cclust import _engine
    from cclust.utilities import resolve

    space = _engine.MixedSpace.categorical(ensemble, resolve("uc"))
    starts = []
    for _ in range(n_init):
        seeds = _engine.seed_objects(space, n_clusters, "k-means++", rng, n_threads)
        starts.append(_engine.labels_from_seeds(space, seeds, n_threads).astype(np.int32))
    return starts


def restart_partitions(ensemble, n_init, rng):
    """Indices of the canonical partitions the restarts start from (Nguyen & Caruana 2007, sec. 8).

    ``n_init`` distinct partitions drawn without replacement (all of them, in a random order, if
    there are fewer distinct ones than ``n_init``)."""
    groups = identical_label_rows(ensemble.labels.T)  # partitions with the same label column
    first = np.arange(ensemble.n_partitions) if groups is None else groups[0]
    return first[rng.permutation(first.shape[0])[:n_init]]


def initial_labelings(ensemble, n_clusters, init, n_init, rng, n_threads):
    """The starts of the restarts for ``init`` in ``INITS``: k-means++ labelings, or base
    partitions cut to their K largest clusters (Nguyen & Caruana 2007, sec. 8). Validates ``init`` and ``n_init``."""
    check_init_name(init, INITS)
    n_init = check_int(n_init, "n_init", low=1)
    if init == "k-means++":
        return seeded_starts(ensemble, n_clusters, n_init, rng, n_threads)
    return [start_from_partition(ensemble.labels[:, j], n_clusters)
            for j in restart_partitions(ensemble, n_init, rng)]
