"""The passes behind :func:`cclust.select_k`: resamples, the inner clusterings, and the consensus
matrix of each K with its CDF, PAC, final labels and item/cluster consensus.

The consensus matrix of Monti et al. (2003) for one K is held as two counts per pair: how many
resamples drew both objects (the same for every K) and how many of those put them in one cluster.
Both are symmetric rank-H products of indicator matrices (one-hot of the labels, per resample), so
BLAS's SYRK computes them (upper triangle only); the pairs are then read once, in row blocks, for
the CDF histogram, PAC, and the condensed distance vector ``1 - M`` that average linkage reads.

Past the dense memory budget nothing of size n x n is formed. The CDF, area and PAC are estimated
from a seeded random sample of pairs whose consensus entries are computed exactly from the labels
(every pair when the sample would be as large as the pairs themselves: then they are exact), each
with its standard error. The labels are the average-linkage clusters of the exact consensus matrix
of a random subset of landmark objects, every other object joining the landmark cluster it is most
often clustered with. Item and cluster consensus are pooled ratios read from contingency tables
of each resample's labels against the clusters, O(n H K) time and O(n K) memory: see
:func:`pooled_item_consensus`.
"""
import contextvars
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
#: Landmark objects of the sparse route.
LANDMARKS = 2000
#: The sparse route's default standard error of PAC (and of every CDF value): the pairs drawn,
#: ``0.25 / PAIR_TOLERANCE ** 2`` = 10^6, bound it whatever PAC is.
PAIR_TOLERANCE = 0.0005

INNER = ("kmeans", "hierarchical")

#: Where the k-means runs of :func:`inner_labels` run when set: ``map_runs(fn, X, tasks)`` returns
#: ``[fn(X, *task) for task in tasks]`` in order, computed anywhere (cclust.dask sends them to
#: its workers). None: this process's threads. Each run is seeded by its (K, resample) alone, so
#: the labels do not depend on where it runs.
MAP_RUNS = contextvars.ContextVar("cclust_map_runs", default=None)

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
        seeds = {k: np.random.SeedSequence(root, spawn_key=(k,)).generate_state(len(samples), dtype=np.uint32)
                 for k in k_values}
        pairs = [(k, h) for k in k_values for h in range(len(samples))]
        runs = [(samples[h], int(seeds[k][h]), k, None if features is None else features[h], algorithm, init,
                 n_init) for k, h in pairs]
        map_runs = MAP_RUNS.get()
        if map_runs is not None:
            for (k, h), labels in zip(pairs, map_runs(kmeans_run, X, runs)):
                out[k][samples[h], h] = labels
            return out

        def one(i):
            k, h = pairs[i]
            out[k][samples[h], h] = kmeans_run(X, *runs[i])

        tasks = list(range(len(runs)))
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


def kmeans_run(X, idx, seed, k, columns, algorithm, init, n_init):
    """The labels of one resample (rows ``idx``, features ``columns`` or all) at K: exactly what
    the registered kmeans generator does with n_partitions=1, k_range=(k, k), max_iter=100 and
    this seed (tests check it), without its per-call validation and Ensemble; with
    ``algorithm="hartigan-wong"`` R's default k-means (:func:`hartigan_wong_labels`)."""
    from cclust.validation import spawn_seed_sequences

    rng = np.random.default_rng(spawn_seed_sequences(seed, 1)[0])
    rng.integers(k, k + 1)               # the generator's draw of K_i
    rows = resample_rows(X, idx, columns)
    if algorithm == "hartigan-wong":
        return hartigan_wong_labels(rows, k, rng, init=init or "random")
    return best_kmeans_labels(np.ascontiguousarray(rows), k, [rng] * n_init, init or "k-means++", 100, 1e-4)[0]


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


def n_pairs(n, tolerance=PAIR_TOLERANCE):
    """Pairs the sparse route reads: ``ceil(0.25 / tolerance^2)`` random ones, whose PAC (a
    proportion) then has a standard error of at most ``tolerance``; every pair when that is as
    many as there are."""
    return min(math.ceil(0.25 / tolerance ** 2), n * (n - 1) // 2)


def draw_pairs(n, tolerance, rng):
    """The sparse route's pairs ``(a, b)``, int64: every pair i < j once when :func:`n_pairs` is
    all of them (the estimates are then exact); otherwise that many drawn independently and
    uniformly among the unordered pairs (with replacement), so that the fraction of them with a
    property is an unbiased estimate of the fraction of all pairs, with the binomial standard
    error :func:`proportion_se`."""
    m = n_pairs(n, tolerance)
    if m == n * (n - 1) // 2:
        a, b = np.triu_indices(n, 1)
        return a.astype(np.int64), b.astype(np.int64)
    a = rng.integers(0, n, size=m)
    b = (a + rng.integers(1, n, size=m)) % n       # uniform over the other objects
    return a, b


def proportion_se(p, m, exact):
    """Standard error of a proportion ``p`` estimated from ``m`` independent pairs; 0 when exact.
    The binomial ``sqrt(p (1 - p) / m)`` at ``(p m + 1) / (m + 2)`` (one success and one failure
    added, as in Agresti & Coull 1998), so that an estimate of 0 or 1 does not claim to be exact."""
    p = np.asarray(p, dtype=np.float64)
    if exact:
        return np.zeros_like(p)
    shrunk = (p * m + 1.0) / (m + 2.0)
    return np.sqrt(shrunk * (1.0 - shrunk) / m)


def sparse_bytes(n, n_resamples, k_values, tolerance=PAIR_TOLERANCE):
    """Peak bytes of the sparse route: label matrices, the landmarks' dense route, the pairs (two
    int64 indices, their values and a sorted copy), and the item consensus: two float64 (n, K)
    sums with the (n, K) result and one resample's gathered table."""
    m = min(n, LANDMARKS)
    k_max = int(max(k_values))
    return (4 * n * n_resamples * (len(k_values) + 2) + dense_bytes(m, n_resamples, k_values, False)
            + n_pairs(n, tolerance) * 32 + 4 * 8 * n * k_max + 2 * _block_bytes(n))


def _one_hot(L, k):
    """(n, H * k) float32 indicator of ``L[:, h] == c`` at column ``h * k + c``."""
    n, H = L.shape
    D = np.zeros((n, H * k), dtype=np.float32)
    rows, cols = np.nonzero(L >= 0)
    D[rows, cols * k + L[rows, cols]] = 1.0
    return D


class Consensus:
    """One K's summaries: ``cdf`` (101,), ``pac``, ``area_se`` and ``pac_se`` (0 when exact),
    ``labels``, ``item`` (n, K), ``cluster`` (K,) and, if asked, ``matrix`` (the consensus
    matrix)."""

    __slots__ = ("cdf", "pac", "area_se", "pac_se", "labels", "item", "cluster", "matrix")


def _blocks(n):
    step = max(1, _BLOCK_ELEMENTS // max(1, n))
    return [(s, min(n, s + step)) for s in range(0, n, step)]


def _entry_blocks(together, sampled, n):
    """The consensus entries of the pairs i < j, by row blocks of the two counts' lower
    triangles: (rows of the block, its pair mask, the two counts, the entries ``together /
    sampled``, 0 where never sampled together)."""
    for s, e in _blocks(n):
        rows = np.arange(s, e)
        mask = np.arange(e)[None, :] < rows[:, None]
        tog, smp = together[s:e, :e][mask], sampled[s:e, :e][mask]
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(smp > 0, tog.astype(np.float64) / smp, 0.0)
        yield rows, mask, tog, smp, values


#: Count pairs (together, sampled) tallied up to this many, (n_resamples + 1)^2; with more
#: resamples each pair's entry is binned on its own.
_COUNT_TABLE_CELLS = 2**16


def _cdf_and_pac(values, interval, weights=None):
    """The CDF bin counts and the PAC count of the consensus entries ``values``, each counted
    once or ``weights`` times (integers)."""
    low, high = interval
    bins = np.searchsorted(GRID, values, side="left")
    inside = (values > low) & (values <= high)
    if weights is None:
        return np.bincount(bins, minlength=GRID.shape[0]), int(np.count_nonzero(inside))
    # float64 sums of integers below 2^53: exact
    return np.bincount(bins, weights=weights, minlength=GRID.shape[0]).astype(np.int64), int(weights[inside].sum())


def _tally_cdf_and_pac(tally, width, interval):
    """:func:`_cdf_and_pac` of pairs tallied by ``together * width + sampled``: each count pair's
    entry is the double ``together / sampled`` (0 when never sampled), as a pair's entry is."""
    together, sampled = np.divmod(np.arange(tally.shape[0], dtype=np.int64), width)
    used = np.flatnonzero(tally)                  # together <= sampled: no entry above 1
    together, sampled = together[used], sampled[used]
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(sampled > 0, together.astype(np.float64) / sampled.astype(np.float64), 0.0)
    return _cdf_and_pac(values, interval, tally[used])


def dense_consensus(L, k, sampled, interval, keep_matrix, final_linkage="average"):
    """The exact consensus matrix of one K (ConsensusClusterPlus's definitions) and its summaries.

    ``M(i, j) = together(i, j) / sampled(i, j)``, 0 for pairs never drawn together; the CDF and
    PAC are over every pair i < j (ConsensusClusterPlus's ``triangle(ml, mode=1)``); the labels cut
    the ``final_linkage`` tree of ``1 - M`` at K (its ``finalLinkage``, "average" by default).
    """
    from scipy.cluster.hierarchy import linkage

    n = L.shape[0]
    together = _syrk(_one_hot(L, k))
    counts = np.zeros(GRID.shape[0], dtype=np.int64)
    ambiguous = 0
    condensed = np.empty(n * (n - 1) // 2, dtype=np.float64)
    # Position of pair (i, j), i < j, in the condensed vector is base[i] + j.
    base = np.arange(n, dtype=np.int64) * n - np.arange(n, dtype=np.int64) * (np.arange(n, dtype=np.int64) + 3) // 2 - 1
    # Both counts are integers from 0 to the number of resamples H, so an entry is one of at most
    # (H + 1)^2 doubles: the pairs are tallied by their count pair, and the CDF bin and the PAC
    # test of each count pair's entry (the same double) are taken once, not per pair.
    width = L.shape[1] + 1
    tally = np.zeros(width * width, dtype=np.int64) if width * width <= _COUNT_TABLE_CELLS else None
    for rows, mask, tog, smp, values in _entry_blocks(together, sampled, n):
        if tally is not None:
            tally += np.bincount((tog * np.float32(width) + smp).astype(np.intp), minlength=tally.shape[0])
        else:
            block_counts, block_ambiguous = _cdf_and_pac(values, interval)
            counts += block_counts
            ambiguous += block_ambiguous
        cols = np.nonzero(mask)
        condensed[base[cols[1]] + rows[cols[0]]] = 1.0 - values
    del together
    if tally is not None:
        counts, ambiguous = _tally_cdf_and_pac(tally, width, interval)
    total = n * (n - 1) // 2
    out = Consensus()
    out.cdf = np.cumsum(counts) / total
    out.pac = ambiguous / total
    out.area_se = out.pac_se = 0.0
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


def pair_values(L, a, b):
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


def pooled_item_consensus(L, members, member_labels, k):
    """Item consensus of every object with clusters given on some objects, as pooled ratios, from
    contingency tables (no pair is visited): (n, k) float64.

    ``[i, c] = sum_j together(i, j) / sum_j sampled(i, j)`` over the members j != i of cluster c
    (``members[t]`` is in cluster ``member_labels[t]``), where ``sampled(i, j)`` counts the
    resamples (columns of ``L``, -1 = not drawn) that drew both objects and ``together(i, j)``
    those that also put them in one cluster. Per resample h, the table ``T_h[c, l]`` of members
    of c drawn with label l gives object i (drawn, label l) ``T_h[c, l]`` co-clustered members and
    ``sum_l T_h[c, l]`` co-drawn ones, its own count taken off for its own cluster.

    ConsensusClusterPlus's item consensus is the mean of the ratios ``together / sampled`` over
    the members; the pooled ratio weighs each pair by how often it was drawn together, and the
    two are equal when every pair was drawn together equally often (``subsample=1``). NaN where
    cluster c has no member other than i; 0 where it has, but none was ever drawn with i.
    """
    together, sampled = _pooled_sums(L, members, member_labels, k)
    members = np.asarray(members, dtype=np.int64)
    member_labels = np.asarray(member_labels, dtype=np.int64)
    sizes = np.bincount(member_labels, minlength=k).astype(np.float64)
    others = np.broadcast_to(sizes, together.shape).copy()
    others[members, member_labels] -= 1.0
    item = _ratio(together, sampled)
    item[others <= 0] = np.nan
    return item


def _ratio(together, sampled):
    """``together / sampled``, 0 where nothing was drawn together."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sampled > 0, together / np.where(sampled > 0, sampled, 1.0), 0.0)


def _pooled_sums(L, members, member_labels, k):
    """(n, k) co-clustering and co-sampling counts of every object summed over the members
    (other than itself) of each cluster, from one contingency table per resample."""
    n, H = L.shape
    members = np.asarray(members, dtype=np.int64)
    member_labels = np.asarray(member_labels, dtype=np.int64)
    # cluster-major sums (k, n), so that each resample adds whole rows; a resample's table gets a
    # last column of zeros that the objects it did not draw (label -1) read
    together = np.zeros((k, n))
    co_drawn = np.zeros((H, k))
    for h in range(H):
        column = L[:, h]
        width = int(column.max()) + 1
        if width == 0:
            continue
        own = column[members]
        hit = own >= 0
        table = np.zeros((k, width + 1))
        table[:, :width] = np.bincount(member_labels[hit] * width + own[hit],
                                       minlength=k * width).reshape(k, width)
        together += table[:, np.where(column >= 0, column, width)]
        co_drawn[h] = table.sum(axis=1)
    together = np.ascontiguousarray(together.T)
    # co-drawn members: sum over the resamples that drew i of the members drawn there (a GEMM)
    sampled = np.empty((n, k))
    step = max(1, _BLOCK_ELEMENTS // max(1, H))
    for s in range(0, n, step):
        sampled[s:s + step] = (L[s:s + step] >= 0).astype(np.float64) @ co_drawn
    # a member's own count: one in its own cluster for every resample that drew it
    times_drawn = np.count_nonzero(L[members] >= 0, axis=1)
    together[members, member_labels] -= times_drawn
    sampled[members, member_labels] -= times_drawn
    return together, sampled


def pooled_cluster_consensus(L, labels, k):
    """Item consensus of every object with the clusters of ``labels`` (:func:`pooled_item_consensus`,
    every object a member) and the cluster consensus, the pooled ratio over the pairs of each
    cluster's members (NaN for a cluster of one). The members' own sums of the item pass hold
    every pair of the cluster twice, in the numerator and the denominator alike, so their ratio
    is the ratio over the pairs: no second pass over the labels."""
    n = L.shape[0]
    labels = np.asarray(labels, dtype=np.int64)
    together, sampled = _pooled_sums(L, np.arange(n), labels, k)
    sizes = np.bincount(labels, minlength=k)
    item = _ratio(together, sampled)
    item[sizes[None, :] - (labels[:, None] == np.arange(k)[None, :]) <= 0] = np.nan
    own = np.arange(n), labels
    cluster = _ratio(np.bincount(labels, weights=together[own], minlength=k),
                     np.bincount(labels, weights=sampled[own], minlength=k))
    cluster[sizes < 2] = np.nan
    return item, cluster


def _area_terms(values):
    """Each pair's share of Monti's area ``sum_{i>=1} (x_i - x_{i-1}) CDF(x_i)`` on GRID: the area
    is the mean over pairs of ``sum_{i>=1, x_i >= v} (x_i - x_{i-1}) = x_last - x_{j-1}``, j the
    first grid index with ``x_j >= v`` (at least 1)."""
    first = np.maximum(np.searchsorted(GRID, values, side="left"), 1)
    return GRID[-1] - GRID[first - 1]


def sparse_consensus(L, k, interval, pairs, exact, landmarks, landmark_sampled, keep_matrix, seed, n_jobs,
                     final_linkage="average"):
    """One K's summaries past the dense budget (see the module docstring): the CDF, area and PAC
    of the ``pairs`` (every pair when ``exact``) with their standard errors, the landmarks'
    average-linkage labels extended to every object, and pooled item and cluster consensus."""
    n = L.shape[0]
    low, high = interval
    values = pair_values(L, pairs[0], pairs[1])
    m = values.shape[0]
    out = Consensus()
    out.cdf = np.searchsorted(np.sort(values), GRID, side="right") / m
    ambiguous = (values > low) & (values <= high)
    out.pac = float(np.count_nonzero(ambiguous)) / m
    out.pac_se = float(proportion_se(out.pac, m, exact))
    # the area is the mean over pairs of sum_j (x_{j+1} - x_j) [v <= x_j] (the trapezoid-free
    # reading of consensus_area on the grid): its standard error is that of a mean
    out.area_se = 0.0 if exact else float(np.std(_area_terms(values), ddof=1) / math.sqrt(m)) if m > 1 else 0.0
    core = dense_consensus(L[landmarks], k, landmark_sampled, interval, False, final_linkage)
    # every object to the landmark cluster it is clustered with most often (pooled item consensus)
    to_landmarks = pooled_item_consensus(L, landmarks, core.labels, k)
    labels = np.argmax(np.nan_to_num(to_landmarks, nan=-1.0), axis=1)
    labels[landmarks] = core.labels
    out.labels = first_appearance(labels)
    out.item, out.cluster = pooled_cluster_consensus(L, out.labels, k)
    out.matrix = None
    if keep_matrix:
        from cclust.ensemble import Ensemble

        out.matrix = Ensemble(L).knn_coassociation(30, random_state=seed, dtype=np.float64, n_jobs=n_jobs)
    return out


def pac_only(L, interval, pairs=None, n_threads=None):
    """PAC of one K and nothing else, for the reference data sets of the null, from the
    resampling labels ``L`` (-1 = not drawn): exact over every pair (dense route), counted pair by
    pair in compiled code with no n x n array (the same integers as :func:`dense_consensus`'s two
    counts), or from the entries of the random ``pairs`` (sparse route), as
    :func:`sparse_consensus` computes it. ``n_threads``: of the pair count on a large matrix
    (None: :func:`cclust.validation.default_threads`; an integer count, the same for any)."""
    from cclust._ext import _distances
    from cclust.validation import default_threads

    low, high = interval
    if pairs is not None:
        values = pair_values(L, pairs[0], pairs[1])
        return float(np.count_nonzero((values > low) & (values <= high))) / values.shape[0]
    n = L.shape[0]
    labels = np.ascontiguousarray(L, dtype=np.int32)
    threads = 1   # small: no parallel region
    if n * n * labels.shape[1] > 2e7:
        threads = default_threads() if n_threads is None else n_threads
    ambiguous = _distances.consensus_pairs_in(labels, float(low), float(high), threads)
    return ambiguous / (n * (n - 1) // 2)


def best_kmeans_labels(X, k, rngs, init, max_iter, tol, n_threads=1):
    """One k-means run (``cclust.generators._kmeans_labels``) from each random stream of ``rngs``
    in turn (the same stream given several times runs from its successive draws); the labels and
    centres of the run with the lowest within sum of squares, the first of equal ones. One stream:
    that run, no sum. The inner k-means of Monti's protocol and of the gap statistic."""
    from cclust.generators import _kmeans_labels

    best = None
    for rng in rngs:
        labels, centres = _kmeans_labels(X, k, rng, init, max_iter, tol, n_threads)
        if len(rngs) == 1:
            return labels, centres
        residuals = X - centres[labels]
        sse = float(np.multiply(residuals, residuals, out=residuals).sum())   # (X - c)^2 summed, in place
        if best is None or sse < best[0]:
            best = (sse, labels, centres)
    return best[1], best[2]
