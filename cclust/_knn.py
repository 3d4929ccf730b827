"""The k-nearest-neighbour co-association behind :meth:`cclust.Ensemble.knn_coassociation`.

Identical label rows are collapsed, candidate pairs come from lexicographic sorts of the rows on
random bands of partitions (a sorted-neighbourhood form of LSH by bit sampling), every kept value
is the exact co-association of its pair, and the top-k table of distinct rows is expanded back to
objects. The method's docstring explains the approximation and its recall; this module holds the
passes, in NumPy over chunks of rows on a thread pool.
"""
import numpy as np

from cclust.validation import require_memory
from cclust.errors import ValidationError

#: Label-row elements compared at once by the kNN co-association (bounds its temporaries).
_KNN_CHUNK_ELEMENTS = 2**24


def _compact_labels(labels, n_clusters):
    """Labels in the narrowest unsigned dtype; a missing label (-1) wraps to the dtype's maximum.

    Returns (compact, missing_code). One byte per label when every K_i < 255, which cuts the
    memory traffic of the pair comparisons fourfold against int32.
    """
    top = int(n_clusters.max())
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top < np.iinfo(dtype).max:
            # int32 -1 wraps to the maximum of the unsigned type under astype's unsafe cast.
            return labels.astype(dtype), int(np.iinfo(dtype).max)
    raise ValidationError("a partition has more than 2**32 - 2 clusters; labels cannot be compacted.")


def _unique_rows(compact):
    """Collapse identical label rows: (representatives, inverse, counts).

    Rows are hashed to 64 bits with random odd multipliers (a fixed seed, so the result does not
    depend on any random_state) and every row is checked against its representative, falling
    back to an exact ``np.unique(axis=0)`` in the (2^-64-unlikely) case of a collision.
    """
    n, r = compact.shape
    mult = np.random.default_rng(0x5EED_C0A5).integers(1, 2**63 - 1, size=r, dtype=np.int64).view(np.uint64) | 1
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(r):
            h = (h ^ (h >> np.uint64(29))) * mult[j] + (compact[:, j].astype(np.uint64) + np.uint64(1))
    _, first, inverse, counts = np.unique(h, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    step = max(1, _KNN_CHUNK_ELEMENTS // max(1, r))
    for start in range(0, n, step):
        block = compact[start:start + step]
        if not np.array_equal(block, compact[first[inverse[start:start + step]]]):
            _, first, inverse, counts = np.unique(compact, axis=0, return_index=True, return_inverse=True,
                                                  return_counts=True)
            return first, inverse.reshape(-1), counts
    return first, inverse, counts


class _PairSimilarity:
    """Exact co-association of label rows compared position by position (as ``coassociation``)."""

    def __init__(self, weights, missing_code, has_missing):
        self.weights = weights
        self.equal = bool(np.allclose(weights, weights[0], rtol=0, atol=0))
        self.missing_code = missing_code
        self.has_missing = has_missing

    def _weighted_count(self, mask):
        if self.equal:
            return np.count_nonzero(mask, axis=-1) * self.weights[0]
        return mask.astype(np.float64) @ self.weights

    def __call__(self, a, b):
        same = a == b
        if not self.has_missing:
            return np.minimum(self._weighted_count(same), 1.0)
        both = (a != self.missing_code) & (b != self.missing_code)
        num = self._weighted_count(same & both)
        den = self._weighted_count(both)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, np.minimum(num / np.where(den > 0, den, 1.0), 1.0), 0.0)


def _band_order(compact, n_clusters, missing_code, columns):
    """Lexicographic order of the rows on the listed partitions (first = most significant).

    Labels are packed into 64-bit words (a missing label becomes K_i), so one ``np.lexsort``
    over a few words sorts on all the band's partitions.
    """
    words, word, used = [], np.zeros(compact.shape[0], dtype=np.uint64), 0
    for j in columns:
        k = int(n_clusters[j])
        bits = max(1, int(k).bit_length())      # values 0..K_i, K_i standing for missing
        if used + bits > 64:
            words.append(word)
            word, used = np.zeros(compact.shape[0], dtype=np.uint64), 0
        col = compact[:, j].astype(np.uint64)
        col[col == missing_code] = k
        word = (word << np.uint64(bits)) | col
        used += bits
    words.append(word)
    return np.lexsort(words[::-1])


def _merge_top(top_cols, top_sims, new_cols, new_sims, k, tie_rank):
    """Keep each row's k largest similarities among the current and the new candidates.

    Rows are ordered by one 64-bit key: the float32 bit pattern of ``1 - sim`` (monotone for
    non-negative floats) above ``tie_rank[column]``, a random permutation of the columns, so
    ties go to a random but seeded column: breaking them by index would make every object
    choose the same few low-index objects and build hubs. Similarities closer than float32
    resolution (6e-8) rank as tied; the values kept are the exact ones.
    """
    cols = np.concatenate([top_cols, new_cols], axis=1)
    sims = np.concatenate([top_sims, new_sims], axis=1)
    valid = (cols >= 0) & (sims >= 0)
    distance = np.where(valid, 1.0 - sims, 2.0).astype(np.float32)
    key = (distance.view(np.uint32).astype(np.uint64) << np.uint64(32)) | tie_rank[np.maximum(cols, 0)]
    order = np.argsort(key, axis=1)
    key = np.take_along_axis(key, order, axis=1)
    # A candidate already kept (or offered twice) has the same key twice, now side by side.
    repeat = np.zeros(key.shape, dtype=bool)
    repeat[:, 1:] = key[:, 1:] == key[:, :-1]
    if repeat.any():
        order = np.take_along_axis(order, np.argsort(repeat, axis=1, kind="stable"), axis=1)
    order = order[:, :k]
    out_cols = np.take_along_axis(cols, order, axis=1)
    out_sims = np.take_along_axis(sims, order, axis=1)
    invalid = ~np.take_along_axis(valid, order, axis=1)
    out_cols[invalid] = -1
    out_sims[invalid] = -1.0
    return out_cols, out_sims


def _map_chunks(fn, n_items, step, n_threads):
    """Run ``fn(start, stop)`` over [0, n_items) in chunks, on up to n_threads threads.

    The chunks write disjoint outputs, so the result does not depend on the thread count.
    """
    bounds = [(s, min(n_items, s + step)) for s in range(0, n_items, step)]
    if n_threads <= 1 or len(bounds) <= 1:
        for s, e in bounds:
            fn(s, e)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(n_threads, len(bounds))) as pool:
        for _ in pool.map(lambda b: fn(*b), bounds):
            pass


def _knn_bytes(n, m, r, k, window, itemsize, label_bytes):
    """Peak bytes of knn_coassociation: the compact labels, the distinct rows and a band's sorted
    copy, the per-row top-k table, a band's forward similarities, the row hashes, and about
    1.5 n k directed edges with their CSR, its transpose and the symmetric union."""
    edges = int(1.5 * n * k)
    return (n * r * label_bytes + 2 * m * r * label_bytes + m * k * 12 + m * window * 8 + n * 24
            + edges * ((8 + itemsize) + 4 * (4 + itemsize)))


def knn_graph(ensemble, k, n_bands, band_size, window, rng, dtype, max_bytes, n_threads):
    """The symmetric CSR matrix of :meth:`Ensemble.knn_coassociation`, whose arguments it has checked
    (``k`` already at most n - 1, ``window`` and ``band_size`` resolved, ``rng`` a Generator)."""
    n, r = ensemble.shape
    codes = ensemble.compact_labels()
    if codes.dtype != np.int32 and int(ensemble.n_clusters.max()) < np.iinfo(codes.dtype).max:
        compact, missing_code = codes, int(np.iinfo(codes.dtype).max)  # as stored: no copy
    else:
        compact, missing_code = _compact_labels(ensemble.labels, ensemble.n_clusters)
    # Upper bound before collapsing duplicates (m <= n): refuse before the big allocations.
    require_memory(_knn_bytes(n, n, r, k, window, dtype.itemsize, compact.itemsize),
                   f"the kNN co-association of {n} objects (n_neighbors={k})",
                   "lower n_neighbors or window, or use a method that never forms a pairwise graph "
                   "(e.g. kcc, hbgf, mcla)", max_bytes)
    first, inverse, counts = _unique_rows(compact)
    m = first.shape[0]
    reps = np.ascontiguousarray(compact[first])
    del compact
    similarity = _PairSimilarity(ensemble.weights, missing_code, ensemble.has_missing)
    top_cols = np.full((m, min(k, max(m - 1, 1))), -1, dtype=np.int32 if m < 2**31 else np.int64)
    top_sims = np.full(top_cols.shape, -1.0)
    rows_per_chunk = max(1, _KNN_CHUNK_ELEMENTS // max(1, r))
    tie_rank = rng.permutation(m).astype(np.uint64)
    exact = m - 1 <= 2 * window * n_bands
    if exact and m > 1:
        # Few distinct rows: comparing all pairs is cheaper than hashing, and exact.
        rows_exact = max(1, _KNN_CHUNK_ELEMENTS // max(1, r * m))

        def all_pairs(s, e):
            sims = similarity(reps[s:e, None, :], reps[None, :, :])
            sims[np.arange(e - s), np.arange(s, e)] = -1.0
            cols = np.broadcast_to(np.arange(m), sims.shape)
            top_cols[s:e], top_sims[s:e] = _merge_top(top_cols[s:e], top_sims[s:e], cols, sims, top_cols.shape[1],
                                                      tie_rank)

        _map_chunks(all_pairs, m, rows_exact, n_threads)
    elif m > 1:
        for _ in range(n_bands):
            columns = rng.permutation(r)[:band_size]
            order = _band_order(reps, ensemble.n_clusters, missing_code, columns)
            ordered = reps[order]
            w = min(window, m - 1)
            forward = np.full((m, w), -1.0)

            def forward_sims(s, e, ordered=ordered, forward=forward, w=w):
                for o in range(1, w + 1):
                    stop = min(e, m - o)
                    if stop > s:
                        forward[s:stop, o - 1] = similarity(ordered[s:stop], ordered[s + o:stop + o])

            _map_chunks(forward_sims, m, rows_per_chunk, n_threads)

            def merge(s, e, order=order, forward=forward, w=w):
                # Candidates of sorted position p: the w positions after and the w before it.
                pos = np.arange(s, e)[:, None]
                offs = np.arange(1, w + 1)[None, :]
                after, before = pos + offs, pos - offs
                cand = np.concatenate([np.where(after < m, order[np.minimum(after, m - 1)], -1),
                                       np.where(before >= 0, order[np.maximum(before, 0)], -1)], axis=1)
                sims = np.concatenate([np.where(after < m, forward[pos, offs - 1], -1.0),
                                       np.where(before >= 0, forward[np.maximum(before, 0), offs - 1], -1.0)],
                                      axis=1)
                rows = order[s:e]
                top_cols[rows], top_sims[rows] = _merge_top(top_cols[rows], top_sims[rows], cand, sims,
                                                            top_cols.shape[1], tie_rank)

            _map_chunks(merge, m, max(1, rows_per_chunk // (2 * w + k)), n_threads)
            del ordered, forward
    return _expand_to_objects(top_cols, top_sims, inverse, counts, k, n, reps, similarity, dtype)


def _expand_to_objects(top_cols, top_sims, inverse, counts, k, n, reps, similarity, dtype):
    """Turn the top-k table of distinct rows into object edges.

    An object's strongest neighbours are its duplicates (co-association 1), then the members of
    its row's nearest distinct rows in decreasing co-association, and in any case one member of
    each of its row's k nearest rows. A group of g duplicates is a ring in which each member
    keeps its next min(g - 1, k) members; a member at position a of its group links to members
    a, a+1, ... (cyclically) of a neighbouring group, spreading the edges over the group instead
    of piling them on one member.
    """
    m = counts.shape[0]
    index = np.int32 if n < 2**31 else np.int64          # halves the edge arrays below 2^31 objects
    members = np.argsort(inverse, kind="stable").astype(index)
    start = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    position = np.empty(n, dtype=np.int64)
    position[members] = np.arange(n) - start[inverse[members]]
    self_sim = similarity(reps, reps) if reps.shape[0] else np.zeros(0)
    rows, cols, vals = [], [], []
    # Edges are generated in blocks so that the int64 index temporaries stay a few MB each.
    block = max(1, 2**20 // max(1, 2 * k))

    # Duplicates: a ring per group.
    inner = np.minimum(counts - 1, k)
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        t = inner[inverse[lo:hi]]
        total = int(t.sum())
        if not total:
            continue
        x = np.repeat(np.arange(lo, hi), t)
        step = np.arange(total) - np.repeat(np.cumsum(t) - t, t) + 1
        g = inverse[x]
        keep = self_sim[g] > 0
        rows.append(x[keep].astype(index))
        cols.append(members[start[g] + (position[x] + step) % counts[g]][keep])
        vals.append(self_sim[g][keep].astype(dtype))

    # Other rows, nearest first, until each object has k neighbours.
    for lo in range(0, m, block):
        hi = min(m, lo + block)
        tc, ts = top_cols[lo:hi], top_sims[lo:hi]
        need = (k - inner[lo:hi])[:, None]
        valid = (tc >= 0) & (ts > 0)
        sizes = np.where(valid, counts[np.maximum(tc, 0)], 0)
        before = np.cumsum(sizes, axis=1) - sizes
        # At least one member of each of the row's nearest rows: a group of more than k
        # duplicates would otherwise keep only its own ring and become an island, cut off from
        # the rest of the graph that CSPA and single linkage must see.
        take = np.where(valid, np.maximum(np.clip(need - before, 0, sizes), 1), 0)
        u, j = np.nonzero(take)
        if not u.shape[0]:
            continue
        v, sim, t = tc[u, j], ts[u, j], take[u, j]
        u = u + lo
        per_entry = counts[u] * t
        q = np.arange(int(per_entry.sum())) - np.repeat(np.cumsum(per_entry) - per_entry, per_entry)
        e = np.repeat(np.arange(u.shape[0]), per_entry)
        a, b = q // t[e], q % t[e]
        rows.append(members[start[u[e]] + a])
        cols.append(members[start[v[e]] + (a + b) % counts[v[e]]])
        vals.append(sim[e].astype(dtype))

    import scipy.sparse as sp

    if rows:
        rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
        G = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
        del rows, cols, vals
    else:
        G = sp.csr_matrix((n, n), dtype=dtype)
    G = G.maximum(G.T).tocsr()
    G.sort_indices()
    return G
