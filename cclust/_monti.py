"""The passes behind :func:`cclust.select_k`: resamples, the inner clusterings, and the consensus
matrix of each K with its CDF, PAC, final labels and item/cluster consensus.

The consensus matrix of Monti et al. (2003) for one K is held as two counts per pair: how many
resamples drew both objects (the same for every K) and how many of those put them in one cluster.
Both are symmetric rank-H products of indicator matrices (one-hot of the labels, per resample), so
BLAS's SYRK computes them (upper triangle only); the pairs are then read once, in row blocks, for
the CDF histogram, PAC, and the condensed distance vector ``1 - M`` that average linkage reads.

Past the dense memory budget the same statistics are estimated: the CDF and PAC from a seeded
random sample of pairs whose consensus entries are computed exactly, the labels by average
linkage of the exact consensus matrix of a random subset of landmark objects, every other object
joining the cluster with the highest item consensus to the landmark members, and the item and
cluster consensus from those landmark members.
"""
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cclust.graph import cut_dendrogram

#: Points at which the CDF is reported: 0, 0.01, ..., 1, the 100 bins of ConsensusClusterPlus.
#: ``k / 100`` rather than ``linspace`` so that 0.1, 0.9 ... are the same doubles as the literals.
GRID = np.arange(101, dtype=np.float64) / 100.0

#: Elements of the n x n counts read at once in the row-block passes (bounds the temporaries).
_BLOCK_ELEMENTS = 2**20


def _block_bytes(n):
    """Bytes of those temporaries: about six float64/int64 arrays of a block (measured with the
    rest of the dense estimate in tests/test_memory_guards.py)."""
    return 6 * 8 * min(n * n, _BLOCK_ELEMENTS + n)
#: Landmark objects of the sparse route and random pairs its CDF is estimated from.
LANDMARKS = 2000
PAIRS = 1_000_000

INNER = ("kmeans", "hierarchical")

#: ConsensusClusterPlus's ``distance`` choices for ``clusterAlg="hc"`` (R's ``dist`` methods and
#: ``1 - cor``), and its linkages (R's ``hclust`` methods that SciPy's ``linkage`` computes on a
#: condensed distance: ``mcquitty`` is SciPy's "weighted", ``ward.D2`` its "ward").
DISTANCES = ("euclidean", "pearson", "spearman", "maximum", "manhattan", "canberra", "binary", "minkowski")
LINKAGES = {"average": "average", "complete": "complete", "single": "single", "mcquitty": "weighted",
            "ward.D2": "ward"}


def pairwise_distances(rows, distance):
    """Condensed distances between the rows, as ConsensusClusterPlus computes them for
    ``clusterAlg="hc"``: R's ``dist(method=distance)`` (``maximum`` is Chebyshev's; ``binary``
    the share of the coordinates non-zero in either row that are non-zero in only one;
    ``canberra`` ``sum |x - y| / (|x| + |y|)`` over the coordinates not zero in both rows,
    scaled up by the share of terms left out; ``minkowski`` with R's default p = 2),
    or ``1 - cor`` (Pearson or Spearman) between rows."""
    from scipy.spatial.distance import pdist
    from scipy.stats import rankdata

    rows = np.asarray(rows, dtype=np.float64)
    if distance in ("pearson", "spearman"):
        values = rankdata(rows, axis=1) if distance == "spearman" else rows
        centred = values - values.mean(axis=1, keepdims=True)
        norms = np.linalg.norm(centred, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            unit = centred / norms[:, None]
        corr = np.clip(unit @ unit.T, -1.0, 1.0)
        corr[~np.isfinite(corr)] = 0.0  # a constant row has no correlation (R gives NA; no pair is closer)
        i, j = np.triu_indices(rows.shape[0], 1)
        return 1.0 - corr[i, j]
    if distance == "canberra":
        m, d = rows.shape
        i, j = np.triu_indices(m, 1)
        out = np.empty(i.shape[0])
        step = max(1, (1 << 20) // max(1, d))
        for s in range(0, i.shape[0], step):
            a, b = rows[i[s:s + step]], rows[j[s:s + step]]
            num, den = np.abs(a - b), np.abs(a) + np.abs(b)
            kept = den > 0  # R leaves out the terms of two zeros and scales the sum up for them
            with np.errstate(invalid="ignore", divide="ignore"):
                terms = np.where(kept, num / np.where(kept, den, 1.0), 0.0)
            n_kept = kept.sum(axis=1)
            out[s:s + step] = np.where(n_kept > 0, terms.sum(axis=1) * d / np.maximum(n_kept, 1), 0.0)
        return out
    metric = {"euclidean": "euclidean", "maximum": "chebyshev", "manhattan": "cityblock",
              "minkowski": "euclidean"}.get(distance)
    if distance == "binary":
        nonzero = rows != 0
        return np.nan_to_num(pdist(nonzero, "jaccard"), nan=0.0)
    return pdist(rows, metric)


def draw_resamples(n, n_resamples, p_item, rng, weights=None):
    """``n_resamples`` sorted draws of ``floor(p_item * n)`` of ``n`` indices without replacement
    (ConsensusClusterPlus's ``sampleCols``, for objects and, with ``p_item`` = pFeature, features).

    ``weights`` (ConsensusClusterPlus's ``weightsItem``/``weightsFeature``, non-negative, at least
    ``floor(p_item * n)`` positive) make each draw R's ``sample(n, size, replace = FALSE, prob =
    weights)``: successive sampling, where the next index is drawn with probability
    proportional to its weight among those not yet drawn. NumPy's ``choice(replace=False, p=)``
    draws i.i.d. indices and keeps each one's first occurrence, which yields the same
    distribution (the first unseen index of an i.i.d. stream is distributed as the weights
    renormalised over the unseen ones); tests compare it with the exact probabilities.
    """
    size = sample_size(n, p_item)
    if weights is None:
        return [np.sort(rng.choice(n, size=size, replace=False)) for _ in range(n_resamples)]
    p = np.asarray(weights, dtype=np.float64)
    p = p / p.sum()
    return [np.sort(rng.choice(n, size=size, replace=False, p=p)) for _ in range(n_resamples)]


def draw_features(d, n_resamples, p_feature, rng, weights=None):
    """Per resample, the sorted features it uses, or None when every resample uses them all
    (``p_feature = 1``: with any weights, ConsensusClusterPlus then draws every feature)."""
    if sample_size(d, p_feature) >= d:
        return None
    return draw_resamples(d, n_resamples, p_feature, rng, weights)


def resample_rows(X, idx, features):
    """The resample's objects ``idx`` and, when ``features`` is given, only those columns."""
    rows = X[idx]
    return rows if features is None else np.ascontiguousarray(rows[:, features])


def sample_size(n, p_item):
    return int(math.floor(p_item * n))


#: k-means algorithms of the Monti inner clusterer (``inner_params={"algorithm": ...}``).
KMEANS_ALGORITHMS = ("lloyd", "hartigan-wong")
#: ConsensusClusterPlus's ``kmeans(..., iter.max = 10)``.
HW_MAX_ITER = 10


#: Starting centres of the Monti inner k-means (``inner_params={"init": ...}``).
KMEANS_INITS = ("random", "k-means++")


def hartigan_wong_labels(rows, k, rng, max_iter=HW_MAX_ITER, init="random"):
    """One k-means run by Hartigan & Wong's (1979) AS 136 from k distinct objects.

    ``init="random"`` is R's ``kmeans(x, k, nstart = 1)`` start, ConsensusClusterPlus's: k of
    the objects drawn without replacement as the centres; ``"k-means++"`` draws them by Arthur &
    Vassilvitskii's (2007) D^2 sampling (the engine's greedy variant, as the Lloyd route). Either
    way they are drawn again uniformly among the distinct rows when two chosen rows coincide
    (R's ``unique(x)``). Then optimal-transfer and quick-transfer stages until the optimal-transfer
    stage moves nothing, at most ``max_iter`` passes (ConsensusClusterPlus: 10; R warns when
    they run out and keeps the labels, so do we), and at most 50 m quick-transfer steps (R's
    bound). The labels are R's for the same starting centres (tests compare them); the draw of
    the centres comes from NumPy, not R's generator. With k equal to the number of objects each
    object is its own cluster (AS 136 needs k < m; that is its exact optimum).
    """
    from cclust._ext._hartigan_wong import hartigan_wong

    m = rows.shape[0]
    if k >= m:
        return np.arange(m, dtype=np.int32)
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    if init == "random":
        start = rows[rng.choice(m, size=k, replace=False)]
    else:
        from cclust import _engine

        start = rows[_engine.seed_objects(_engine.MixedSpace.dense(rows), k, "k-means++", rng, 1)]
    if len(np.unique(start, axis=0)) < k:
        distinct = np.unique(rows, axis=0)
        start = distinct[rng.choice(len(distinct), size=k, replace=False)]
    labels, _, _, _, status = hartigan_wong(rows, start, max_iter,
                                            min(50 * m, 2**31 - 1))
    if status in (1, 3):  # cannot happen from k < m distinct data points as centres
        raise RuntimeError(f"Hartigan-Wong k-means failed (AS 136 fault {status}) with k={k}, m={m}")
    return labels


def inner_labels(X, samples, k_values, inner, root, n_jobs, features=None, algorithm="lloyd", init=None,
                 distance="euclidean", linkage_method="average", n_init=1):
    """Labels of every resample at every K: K -> (n, H) int32, -1 for objects not drawn.

    ``inner="kmeans"``: one k-means run at exactly K on each resample, seeded by (K, h) only:
    ``algorithm="lloyd"``, Lloyd iterations from ``init`` (None: k-means++; the registered
    ``kmeans`` generator with ``k_range=(K, K), max_iter=100``); ``algorithm="hartigan-wong"``, R's default
    k-means as ConsensusClusterPlus calls it (:func:`hartigan_wong_labels`; ``init`` None:
    random objects, as R).
    ``inner="hierarchical"``: one ``linkage_method`` tree of the resample's ``distance``
    (:func:`pairwise_distances`), cut at every K (as ConsensusClusterPlus does with
    ``clusterAlg="hc"``, ``distance``, ``innerLinkage``).
    ``features``: per resample, the features it clusters on (None: all).
    ``n_init``: Lloyd runs per resample from successive starts of the same stream, the one of
    lowest within sum of squares kept (1: exactly the generator's one run).
    """
    n = X.shape[0]
    out = {k: np.full((n, len(samples)), -1, dtype=np.int32) for k in k_values}
    if inner == "kmeans":
        from cclust.generators import _best_kmeans_labels
        from cclust.validation import spawn_seed_sequences

        seeds = {k: np.random.SeedSequence(root, spawn_key=(k,)).generate_state(len(samples), dtype=np.uint32)
                 for k in k_values}

        def one(task):
            # Exactly what the registered kmeans generator does with n_partitions=1, k_range=(k, k),
            # max_iter=100 and this seed (tests check it), without its
            # per-call validation and Ensemble.
            k, h = task
            idx = samples[h]
            rng = np.random.default_rng(spawn_seed_sequences(int(seeds[k][h]), 1)[0])
            rng.integers(k, k + 1)               # the generator's draw of K_i
            rows = resample_rows(X, idx, None if features is None else features[h])
            if algorithm == "hartigan-wong":
                out[k][idx, h] = hartigan_wong_labels(rows, k, rng, init=init or "random")
            else:
                out[k][idx, h] = _best_kmeans_labels(np.ascontiguousarray(rows), k, [rng] * n_init,
                                                     init or "k-means++", 100, 1e-4)[0]

        tasks = [(k, h) for k in k_values for h in range(len(samples))]
    else:
        from scipy.cluster.hierarchy import linkage

        def one(h):
            idx = samples[h]
            Z = linkage(pairwise_distances(resample_rows(X, idx, None if features is None else features[h]),
                                           distance), method=LINKAGES[linkage_method])
            for k in k_values:
                out[k][idx, h] = cut_dendrogram(Z, k)

        tasks = list(range(len(samples)))
    workers = min(n_jobs, len(tasks))
    if workers <= 1:
        for task in tasks:
            one(task)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, tasks))
    return out


def _syrk(A):
    """Upper triangle of ``A @ A.T`` for a C-contiguous float32 A (n, m), as the lower triangle of
    a C-contiguous (n, n) array (entry [j, i], i <= j, holds pair (i, j)); the rest is zero."""
    from scipy.linalg.blas import ssyrk

    # f2py copies A to Fortran order (small next to the n x n result); passing the Fortran view
    # A.T with trans=1 avoids that copy but measured up to 17x slower in OpenBLAS at n = 178.
    return ssyrk(1.0, A).T


def sampled_counts(L):
    """Pairs' co-sampling counts from any K's label matrix (-1 = not drawn): (n, n) float32,
    lower triangle valid (see :func:`_syrk`)."""
    return _syrk((L >= 0).astype(np.float32))


def dense_bytes(n, n_resamples, k_values, keep_matrices):
    """Peak bytes of the dense route: the co-sampling counts (float32 n x n) held throughout;
    per K the co-clustering counts (float32 n x n) with the condensed distances (float64, n(n-1)/2)
    and then the condensed distances with average linkage's own copy; the label matrices, the
    one-hot of one K, the row-block temporaries, and a float64 n x n per K if kept."""
    pairs = n * (n - 1) // 2
    k_max = int(max(k_values))
    per_k = max(4 * n * n + 8 * pairs, 16 * pairs) + 4 * n * n_resamples * k_max
    return (4 * n * n + per_k + 4 * n * n_resamples * (len(k_values) + 1) + _block_bytes(n)
            + (8 * n * n * len(k_values) if keep_matrices else 0))


def n_pairs(n):
    """Random pairs the sparse route's CDF is estimated from (at most one per pair's count)."""
    return min(PAIRS, n * (n - 1) // 2)


def sparse_bytes(n, n_resamples, k_values):
    """Peak bytes of the sparse route: label matrices, the landmarks' dense route, the sampled
    pairs (two int64 indices, their values and a sorted copy) and one block of the landmark item
    consensus."""
    m = min(n, LANDMARKS)
    return (4 * n * n_resamples * (len(k_values) + 2) + dense_bytes(m, n_resamples, k_values, False)
            + n_pairs(n) * 32 + 4 * m * n_resamples * int(max(k_values)) + 2 * _block_bytes(n))


def _one_hot(L, k):
    """(n, H * k) float32 indicator of ``L[:, h] == c`` at column ``h * k + c``."""
    n, H = L.shape
    D = np.zeros((n, H * k), dtype=np.float32)
    rows, cols = np.nonzero(L >= 0)
    D[rows, cols * k + L[rows, cols]] = 1.0
    return D


class Consensus:
    """One K's summaries: ``cdf`` (101,), ``pac``, ``labels``, ``item`` (n, K), ``cluster`` (K,)
    and, if asked, ``matrix`` (the consensus matrix)."""

    __slots__ = ("cdf", "pac", "labels", "item", "cluster", "matrix")


def _blocks(n):
    step = max(1, _BLOCK_ELEMENTS // max(1, n))
    return [(s, min(n, s + step)) for s in range(0, n, step)]


def _entry_blocks(together, sampled, n):
    """The consensus entries of the pairs i < j, by row blocks of the two counts' lower
    triangles: (rows of the block, its pair mask, the entries ``together / sampled``, 0 where
    never sampled together)."""
    for s, e in _blocks(n):
        rows = np.arange(s, e)
        mask = np.arange(e)[None, :] < rows[:, None]
        tog, smp = together[s:e, :e][mask], sampled[s:e, :e][mask]
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(smp > 0, tog.astype(np.float64) / smp, 0.0)
        yield rows, mask, values


def dense_consensus(L, k, sampled, interval, keep_matrix, final_linkage="average"):
    """The exact consensus matrix of one K (ConsensusClusterPlus's definitions) and its summaries.

    ``M(i, j) = together(i, j) / sampled(i, j)``, 0 for pairs never drawn together; the CDF and
    PAC are over every pair i < j (ConsensusClusterPlus's ``triangle(ml, mode=1)``); the labels cut
    the ``final_linkage`` tree of ``1 - M`` at K (its ``finalLinkage``, "average" by default).
    """
    from scipy.cluster.hierarchy import linkage

    n = L.shape[0]
    together = _syrk(_one_hot(L, k))
    low, high = interval
    counts = np.zeros(GRID.shape[0], dtype=np.int64)
    ambiguous = 0
    condensed = np.empty(n * (n - 1) // 2, dtype=np.float64)
    # Position of pair (i, j), i < j, in the condensed vector is base[i] + j.
    base = np.arange(n, dtype=np.int64) * n - np.arange(n, dtype=np.int64) * (np.arange(n, dtype=np.int64) + 3) // 2 - 1
    for rows, mask, values in _entry_blocks(together, sampled, n):
        counts += np.bincount(np.searchsorted(GRID, values, side="left"), minlength=GRID.shape[0])
        ambiguous += int(np.count_nonzero((values > low) & (values <= high)))
        cols = np.nonzero(mask)
        condensed[base[cols[1]] + rows[cols[0]]] = 1.0 - values
    del together
    total = n * (n - 1) // 2
    out = Consensus()
    out.cdf = np.cumsum(counts) / total
    out.pac = ambiguous / total
    if n > 1:
        labels = cut_dendrogram(linkage(condensed, method=LINKAGES[final_linkage]), k)
    else:
        labels = np.zeros(n, dtype=np.int64)
    out.labels = first_appearance(labels)
    out.item, out.cluster = _item_consensus_condensed(condensed, out.labels, k)
    out.matrix = _square(condensed, n) if keep_matrix else None
    return out


def best_jaccard(ours, theirs, k):
    """For each cluster c of ``ours`` (codes 0..k-1), the largest Jaccard similarity
    ``|C ∩ D| / |C ∪ D|`` with a cluster D of ``theirs`` over the same objects (Hennig 2007;
    fpc's clusterboot): (k,) float64, NaN for a cluster with no object here."""
    theirs = np.asarray(theirs, dtype=np.int64)
    width = int(theirs.max()) + 1 if theirs.size else 1
    table = np.bincount(np.asarray(ours, dtype=np.int64) * width + theirs,
                        minlength=k * width).reshape(k, width).astype(np.float64)
    union = table.sum(axis=1)[:, None] + table.sum(axis=0)[None, :] - table
    with np.errstate(invalid="ignore", divide="ignore"):
        best = np.where(union > 0, table / union, 0.0).max(axis=1)
    best[table.sum(axis=1) == 0] = np.nan
    return best


def resample_jaccard(L, labels, k):
    """Per resample (column of ``L``, -1 = not drawn) and cluster of ``labels``, the best Jaccard
    of the cluster on the resample's objects with a cluster of the resample's own clustering:
    (H, k) float64 (:func:`best_jaccard`). This is clusterboot's subsetting scheme with the
    resamples select_k already clustered: no clustering is added."""
    out = np.empty((L.shape[1], k))
    for h in range(L.shape[1]):
        drawn = L[:, h] >= 0
        out[h] = best_jaccard(labels[drawn], L[drawn, h], k)
    return out


def first_appearance(labels):
    """Relabel so clusters are numbered in order of their first object (R's ``cutree`` order)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.shape[0])
    return rank[inverse.reshape(-1)]


def _square(condensed, n):
    from scipy.spatial.distance import squareform

    M = 1.0 - squareform(condensed, checks=False)
    return M


def _item_consensus_condensed(condensed, labels, k):
    """ConsensusClusterPlus's calcICL from the condensed distances ``1 - M``: item consensus
    ``m_i(c)``, the mean of M(i, j) over the members j != i of cluster c, and cluster consensus
    ``m(c)``, the mean of M over the pairs of members (NaN for a cluster of one)."""
    n = labels.shape[0]
    sums = np.zeros((n, k))
    offset = 0
    for i in range(n - 1):
        width = n - i - 1
        m = 1.0 - condensed[offset:offset + width]
        offset += width
        rest = labels[i + 1:]
        sums[i] += np.bincount(rest, weights=m, minlength=k)
        sums[i + 1:, labels[i]] += m
    return _item_and_cluster(sums, labels, k)


def _item_and_cluster(sums, labels, k):
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    denominator = np.broadcast_to(sizes, sums.shape).copy()
    denominator[np.arange(labels.shape[0]), labels] -= 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        item = np.where(denominator > 0, sums / np.where(denominator > 0, denominator, 1.0), np.nan)
        own = item[np.arange(labels.shape[0]), labels]
        cluster = np.bincount(labels, weights=np.nan_to_num(own), minlength=k) / sizes
    cluster[sizes < 2] = np.nan
    return item, cluster


def _pair_values(L, a, b):
    """Exact consensus entries of the pairs (a[t], b[t]) from the label rows (0 if never co-drawn)."""
    out = np.empty(a.shape[0])
    step = max(1, _BLOCK_ELEMENTS // max(1, L.shape[1]))
    for s in range(0, a.shape[0], step):
        la, lb = L[a[s:s + step]], L[b[s:s + step]]
        both = (la >= 0) & (lb >= 0)
        same = np.count_nonzero((la == lb) & both, axis=1)
        drawn = np.count_nonzero(both, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[s:s + step] = np.where(drawn > 0, same / np.maximum(drawn, 1), 0.0)
    return out


def sparse_consensus(L, k, interval, pairs, landmarks, landmark_sampled, keep_matrix, seed, n_jobs,
                     final_linkage="average"):
    """One K's summaries past the dense budget (see the module docstring)."""
    n = L.shape[0]
    low, high = interval
    values = _pair_values(L, pairs[0], pairs[1])
    out = Consensus()
    out.cdf = np.searchsorted(np.sort(values), GRID, side="right") / values.shape[0]
    out.pac = float(np.count_nonzero((values > low) & (values <= high))) / values.shape[0]
    core = dense_consensus(L[landmarks], k, landmark_sampled, interval, False, final_linkage)
    # Item consensus of every object to the landmark members of each cluster: co-clustering and
    # co-sampling counts against the landmarks, in row blocks, by GEMM of the indicators.
    D_land = _one_hot(L[landmarks], k)
    S_land = (L[landmarks] >= 0).astype(np.float32)
    Y = np.zeros((landmarks.shape[0], k))
    Y[np.arange(landmarks.shape[0]), core.labels] = 1.0
    sums = np.empty((n, k))
    step = max(1, _BLOCK_ELEMENTS // max(1, landmarks.shape[0]))
    for s in range(0, n, step):
        block = L[s:s + step]
        tog = _one_hot(block, k) @ D_land.T
        smp = (block >= 0).astype(np.float32) @ S_land.T
        with np.errstate(invalid="ignore", divide="ignore"):
            M = np.where(smp > 0, tog.astype(np.float64) / np.maximum(smp, 1), 0.0)
        sums[s:s + step] = M @ Y
    # An object's own entry (M = 1 with itself when it was ever drawn) is left out of its mean.
    sizes = Y.sum(axis=0)
    where = np.full(n, -1)
    where[landmarks] = core.labels
    is_land = where >= 0
    self_value = (L[landmarks] >= 0).any(axis=1).astype(np.float64)
    sums[landmarks, core.labels] -= self_value
    denominator = np.broadcast_to(sizes, sums.shape).copy()
    denominator[np.flatnonzero(is_land), where[is_land]] -= 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        item = np.where(denominator > 0, sums / np.where(denominator > 0, denominator, 1.0), np.nan)
    labels = np.where(is_land, where, np.argmax(np.nan_to_num(item, nan=-1.0), axis=1))
    out.labels = first_appearance(labels)
    # Renumber the item-consensus columns the same way.
    perm = np.empty(k, dtype=np.int64)
    perm[labels] = out.labels
    order = np.argsort(perm)
    out.item = item[:, order]
    own = out.item[np.arange(n), out.labels]
    sizes_all = np.bincount(out.labels, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        out.cluster = np.bincount(out.labels, weights=np.nan_to_num(own), minlength=k) / sizes_all
    out.cluster[sizes_all < 2] = np.nan
    out.matrix = None
    if keep_matrix:
        from cclust.ensemble import Ensemble

        out.matrix = Ensemble(L).knn_coassociation(30, random_state=seed, dtype=np.float64, n_threads=n_jobs)
    return out


def pac_only(L, k, interval, sampled=None, pairs=None):
    """PAC of one K and nothing else, for the reference data sets of the null: exact from the
    co-sampling counts ``sampled`` (dense route), or from the entries of the random ``pairs``
    (sparse route), as :func:`dense_consensus` and :func:`sparse_consensus` compute it."""
    low, high = interval
    if pairs is not None:
        values = _pair_values(L, pairs[0], pairs[1])
        return float(np.count_nonzero((values > low) & (values <= high))) / values.shape[0]
    n = L.shape[0]
    ambiguous = 0
    for _, _, values in _entry_blocks(_syrk(_one_hot(L, k)), sampled, n):
        ambiguous += int(np.count_nonzero((values > low) & (values <= high)))
    return ambiguous / (n * (n - 1) // 2)
