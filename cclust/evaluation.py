"""Evaluate, trim and reweigh the algorithms of a heterogeneous ensemble (diceR's ``consensus_evaluate``).

Chiu & Talhouk (2018) score every algorithm of a heterogeneous ensemble on internal validity
indices, rank the algorithms on each index, aggregate the rankings into one list, keep the top
``n`` algorithms ("trim") and weight what is left by how well it ranked ("reweigh"). Here:

1. **One labelling per algorithm.** The algorithms are the distinct values of
   :attr:`cclust.Ensemble.provenance`, in order of first appearance. Each algorithm's partitions
   are fused into one K-cluster labelling by a registered consensus function (default ``eac``:
   average linkage of ``1 - co-association``, the final step of Monti et al. 2003). diceR does
   the same with average linkage of the Euclidean distances between rows of the consensus
   matrix; we cluster ``1 - M`` itself, as ConsensusClusterPlus (Wilkerson & Hayes 2010) does,
   so that partitions with missing labels (subsamples) count per co-sampled pair.
2. **Indices** of each algorithm's labelling (:data:`INDICES`): silhouette (Rousseeuw 1987),
   Calinski-Harabasz (Calinski & Harabasz 1974) and Davies-Bouldin (Davies & Bouldin 1979),
   all three by scikit-learn's functions; compactness (Nguyen & Caruana 2007, eq. 11;
   diceR's ``compactness``), connectivity (Handl, Knowles & Kell 2005; clValid's
   ``connectivity`` with L = 10, as diceR calls it; :func:`connectivity`) and the consensus score (average NMI with every partition of the
   whole ensemble, Nguyen & Caruana 2007, eq. 4). With ``labels_true``, the external ARI and NMI
   are reported as well; like diceR, they are never used for ranking.
3. **Rank aggregation.** On each index the algorithms are ranked (1 = best; ties get their
   mean rank). An index that is NaN for some algorithm (e.g. silhouette of a one-cluster
   labelling) is left out of the ranking, as diceR leaves out NaN indices. diceR then calls
   ``RankAggreg(method="GA")``, a genetic search for the ordering that minimises the summed
   Spearman footrule distance to the per-index orderings. We find that ordering exactly and
   deterministically: the footrule-optimal full ranking is an assignment problem (Dwork et
   al. 2001), cost of putting algorithm a at position p = ``sum_index |rank_index(a) - p|``,
   solved by :func:`scipy.optimize.linear_sum_assignment`. Ties between optimal orderings go
   to the lower mean rank, then to the algorithm seen first.
4. **Trim** keeps the partitions of the ``n_keep`` best algorithms of that ordering; with
   ``n_keep`` or fewer algorithms nothing is trimmed (diceR's rule).
5. **Reweigh** gives algorithm a, at position p among the m algorithms present, the total
   weight ``(m + 1 - p) / (m (m + 1) / 2)`` (Borda points), shared among its partitions in
   proportion to their current weights. diceR instead weights an algorithm by its average share
   of each index's column sum; for indices where lower is better (Davies-Bouldin, compactness)
   that gives the worse algorithm the larger weight, and silhouette's sign can flip the share,
   so we weight by the aggregated rank, which is what diceR's documentation describes.
6. **Several K** (diceR's ``nk = c(...)``): :func:`evaluate` with a list of K, or a dict of one
   ensemble per K, evaluates every (algorithm, K) combination. Following diceR's code
   (``consensus_evaluate``, ``choose_k``, ``consensus_trim``): PAC of each algorithm's consensus
   matrix at each K with ``lower = 0, upper = 1``; the K trimming uses is the number of classes
   of ``labels_true``, else the K most algorithms find least ambiguous (each votes for its K of
   lowest PAC; ties to the smaller K), or ``k_method``; trim and reweigh act per chosen K on the
   ranking within that K. Beyond diceR, every combination is also ranked jointly on the
   indices, and the K of the best one is reported as :attr:`MultiKEvaluation.best_k`.
7. **Past the dense budget** the default ``eac`` fuses on its sparse route (single linkage of
   the kNN co-association graph, linear memory); see ``matrix`` in :func:`evaluate`.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from cclust.base import declare
from cclust.ensemble import Ensemble, as_ensemble
from cclust.errors import MissingDependencyError, ValidationError
from cclust.validation import check_array_2d, check_int, label_vector, spawn_seed_sequences

__all__ = ["INDICES", "EvaluationResult", "MultiKEvaluation", "evaluate", "trim", "reweigh", "aggregate_ranks", "connectivity"]

#: Internal indices computed per algorithm -> True when higher is better.
INDICES = {
    "silhouette": True,
    "calinski_harabasz": True,
    "davies_bouldin": False,
    "compactness": False,
    "consensus_nmi": True,
    "connectivity": False,
}

#: External indices reported (never ranked) when ``labels_true`` is given.
EXTERNAL = ("ari", "nmi")

_UNNAMED = "ensemble"


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`evaluate` measured for each algorithm of an ensemble.

    Attributes
    ----------
    algorithms : tuple of str
        The distinct provenance values, in order of first appearance (the table's rows).
    n_partitions : ndarray of shape (n_algorithms,), int64
        Partitions each algorithm contributed.
    labels : ndarray of shape (n_algorithms, n_samples), int64
        Each algorithm's consensus labelling (``method`` applied to its partitions).
    indices : dict of str -> ndarray of shape (n_algorithms,)
        The internal indices of :data:`INDICES` (NaN where undefined, e.g. one cluster).
    external : dict of str -> ndarray of shape (n_algorithms,)
        ARI and NMI against ``labels_true``; empty without it.
    ranked_indices : tuple of str
        The indices used for ranking (those finite for every algorithm).
    ranks : ndarray of shape (n_algorithms, len(ranked_indices)), float64
        Rank of each algorithm on each ranked index, 1 = best, ties at their mean rank.
    order : tuple of str
        The algorithms best first: the footrule-optimal aggregate of ``ranks``.
    n_clusters : int
    method : str
    route : str
        How each algorithm's partitions were fused: ``"dense"`` (eac's average linkage of the
        n x n ``1 - co-association``), ``"sparse"`` (eac's single linkage of the kNN
        co-association graph) or ``"method"`` (another consensus method, on its own route).
    """

    algorithms: tuple
    n_partitions: np.ndarray
    labels: np.ndarray
    indices: dict
    external: dict
    ranked_indices: tuple
    ranks: np.ndarray
    order: tuple
    n_clusters: int
    method: str = "eac"
    higher_is_better: dict = field(default_factory=lambda: dict(INDICES))
    route: str = "dense"

    def rank_of(self, algorithm):
        """Position (1 = best) of ``algorithm`` in :attr:`order`."""
        if algorithm not in self.order:
            raise ValidationError(f"algorithm {algorithm!r} was not evaluated; evaluated: {list(self.order)}.")
        return self.order.index(algorithm) + 1

    def as_table(self):
        """The per-algorithm numbers as a dict of equal-length lists (``pandas.DataFrame(...)``-ready).

        Rows follow :attr:`algorithms`; ``rank`` is the aggregated position (1 = best).

        Examples
        --------
        >>> import numpy as np
        >>> from cclust import Ensemble
        >>> from cclust.evaluation import evaluate
        >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
        >>> E = Ensemble(np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 0], [1, 1, 1]]),
        ...              provenance=["good", "good", "noisy"])
        >>> table = evaluate(X, E, 2).as_table()
        >>> table["algorithm"], table["n_partitions"], table["rank"]
        (['good', 'noisy'], [2, 1], [1, 2])
        """
        table = {"algorithm": list(self.algorithms), "n_partitions": self.n_partitions.tolist()}
        for name, values in self.indices.items():
            table[name] = values.tolist()
        for name, values in self.external.items():
            table[name] = values.tolist()
        table["rank"] = [self.rank_of(a) for a in self.algorithms]
        return table

    def summary(self):
        """A text table, one row per algorithm, best first."""
        names = list(self.indices) + list(self.external)
        head = f"{'rank':>4}  {'algorithm':<24}  {'R':>4}  " + "  ".join(f"{n[:12]:>12}" for n in names)
        lines = [f"evaluation of {len(self.algorithms)} algorithms at K = {self.n_clusters} "
                 f"(each fused by {self.method}); ranked on {', '.join(self.ranked_indices) or 'nothing'}", head]
        for algorithm in self.order:
            i = self.algorithms.index(algorithm)
            values = [self.indices[n][i] if n in self.indices else self.external[n][i] for n in names]
            lines.append(f"{self.rank_of(algorithm):>4}  {algorithm:<24}  {int(self.n_partitions[i]):>4}  "
                         + "  ".join(f"{v:>12.4g}" for v in values))
        return "\n".join(lines)

    def __repr__(self):
        return f"EvaluationResult(n_clusters={self.n_clusters}, order={list(self.order)})"


def _groups(ensemble):
    """(algorithm names in order of first appearance, partition indices of each)."""
    provenance = ensemble.provenance or (_UNNAMED,) * ensemble.n_partitions
    names = list(dict.fromkeys(provenance))
    return names, [np.flatnonzero([p == name for p in provenance]) for name in names]


def _require_sklearn():
    """The internal indices are scikit-learn's: say so, with the install command, before any work."""
    try:
        import sklearn.metrics  # noqa: F401
    except ImportError:
        raise MissingDependencyError("evaluate scores partitions with scikit-learn's Calinski-Harabasz, "
                                     "Davies-Bouldin and silhouette indices, and scikit-learn cannot be imported: "
                                     "pip install 'cclust[sklearn]'.") from None


def internal_indices(X, labels, ensemble):
    """The :data:`INDICES` of one labelling of ``X`` (NaN where an index is undefined)."""
    from sklearn.metrics import calinski_harabasz_score, davies_bouldin_score

    from cclust.metrics import compactness, consensus_score
    from cclust.metrics._criteria import silhouette

    k = np.unique(labels).shape[0]
    defined = 2 <= k <= X.shape[0] - 1
    nan = float("nan")
    return {
        "silhouette": silhouette(X, labels) if defined else nan,
        "calinski_harabasz": float(calinski_harabasz_score(X, labels)) if defined else nan,
        "davies_bouldin": float(davies_bouldin_score(X, labels)) if defined else nan,
        "compactness": float(compactness(X, labels)),
        "consensus_nmi": float(consensus_score(labels, ensemble, metric="nmi")),
        # clValid's L = 10, or every other object when there are fewer
        "connectivity": float(connectivity(X, labels, n_neighbors=min(10, X.shape[0] - 1))),
    }


#: Distances held at once by :func:`connectivity` (8 MiB of float64: bounded memory for any n).
_CONNECTIVITY_BLOCK_ELEMENTS = 2**20


def nearest_neighbors_in_order(X, n_neighbors, metric="euclidean"):
    """Each object's ``n_neighbors`` nearest others as clValid orders them: (n, L) int64.

    For object i the objects are sorted by distance, ties by index (R's stable sort), and the
    first of that order is dropped as "i itself"; the next ``n_neighbors`` are i's neighbours.
    With a duplicate j < i of i (distance 0) the dropped one is j and i counts among its own
    neighbours, exactly as in clValid. Distances are SciPy's ``cdist`` (the same sum of
    squares and square root as R's ``dist``), in row blocks of bounded memory.
    """
    from scipy.spatial.distance import cdist

    n = X.shape[0]
    keep = n_neighbors + 1
    out = np.empty((n, n_neighbors), dtype=np.int64)
    step = max(1, _CONNECTIVITY_BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, n, step):
        D = cdist(X[start:start + step], X, metric=metric)
        b = D.shape[0]
        # every entry up to the keep-th smallest value of its row: the first `keep` of the
        # (distance, index) order are among them, whatever the ties at that value
        cut = np.partition(D, keep - 1, axis=1)[:, keep - 1]
        rows, cols = np.nonzero(D <= cut[:, None])
        order = np.lexsort((cols, D[rows, cols], rows))
        rows, cols = rows[order], cols[order]
        first = np.searchsorted(rows, np.arange(b))
        take = first[:, None] + np.arange(1, keep)[None, :]
        out[start:start + b] = cols[take]
    return out


@declare(requires_X=True, higher_is_better=False)
def connectivity(X, labels, *, n_neighbors=10, metric="euclidean"):
    """Connectivity of a labelling (Handl, Knowles & Kell 2005): lower is better.

    ``sum_i sum_{j=1}^{L} x_{i, nn_i(j)}``, where ``nn_i(j)`` is the j-th nearest neighbour of
    object i and ``x_{i, nn_i(j)}`` is ``1/j`` when that neighbour is in another cluster, else 0
    (Handl et al. 2005, sec. 2.2.3). It ranges from 0 (every object's L neighbours share its
    cluster) to ``n (1 + 1/2 + ... + 1/L)``. As clValid's ``connectivity`` (Brock et al. 2008),
    which diceR's ``consensus_evaluate`` calls with its default L = 10: the neighbours of i are
    the objects in order of distance, ties in distance by object index, after dropping the
    first of that order (i itself, unless a duplicate of i comes before it; see
    :func:`nearest_neighbors_in_order`).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the labelling partitions; finite.
    labels : array-like of shape (n_samples,)
        Cluster labels.
    n_neighbors : int, default=10
        L, clValid's ``neighbSize``, in [1, n_samples - 1].
    metric : {"euclidean", "manhattan"}, default="euclidean"
        The distance (clValid's ``method``; ``"manhattan"`` is R's name for cityblock).

    Returns
    -------
    connectivity : float
        Non-negative; lower is better.

    Examples
    --------
    >>> from cclust.evaluation import connectivity
    >>> X = [[0.0], [1.0], [3.0], [10.0]]
    >>> connectivity(X, [0, 0, 1, 1], n_neighbors=2)  # 1/2 + 1/2 + (1 + 1/2) + 1/2
    3.0
    """
    if not isinstance(metric, str) or metric not in _CONNECTIVITY_METRICS:
        raise ValidationError(f"metric must be one of {list(_CONNECTIVITY_METRICS)}, got {metric!r}.")
    from cclust.metrics._criteria import _features_and_codes  # the checks every internal index makes

    X, codes, _ = _features_and_codes(X, labels)
    n = X.shape[0]
    if n < 2:
        raise ValidationError(f"connectivity needs at least 2 objects (each needs a neighbour), got {n}.")
    n_neighbors = check_int(n_neighbors, "n_neighbors", low=1, high=n - 1)
    neighbours = nearest_neighbors_in_order(X, n_neighbors, _CONNECTIVITY_METRICS[metric])
    other = codes[neighbours] != codes[:, None]
    return float((other / np.arange(1, n_neighbors + 1)[None, :]).sum())


_CONNECTIVITY_METRICS = {"euclidean": "euclidean", "manhattan": "cityblock"}


def aggregate_ranks(ranks):
    """The full ordering minimising the summed Spearman footrule distance to every column's ranking.

    Parameters
    ----------
    ranks : array-like of shape (n_items, n_lists)
        ``ranks[a, j]``: position of item a in list j (1 = first; ties may share a mean rank).

    Returns
    -------
    order : ndarray of shape (n_items,), int64
        Item indices, first = best. Exact (Dwork et al. 2001: an assignment problem), whereas
        diceR's ``RankAggreg(method="GA")`` searches for the same optimum heuristically. Among
        optimal orderings, ties go to the lower mean rank, then to the lower index.

    Examples
    --------
    >>> aggregate_ranks([[1, 2, 1], [2, 1, 3], [3, 3, 2]]).tolist()
    [0, 1, 2]
    """
    from scipy.optimize import linear_sum_assignment

    ranks = np.asarray(ranks, dtype=np.float64)
    m = ranks.shape[0]
    if ranks.ndim != 2 or m == 0:
        raise ValidationError(f"ranks must be a non-empty 2-D array (items x lists), got shape {ranks.shape}.")
    if ranks.shape[1] == 0:
        return np.arange(m, dtype=np.int64)
    # Items in tie-break order (mean rank, then index), so the solver's first optimum honours it.
    pre = np.lexsort((np.arange(m), ranks.mean(axis=1)))
    positions = np.arange(1, m + 1, dtype=np.float64)
    cost = np.abs(ranks[pre, :, None] - positions[None, None, :]).sum(axis=1)
    # The costs are multiples of 1/2 (mean ranks of ties). Subtracting r * p / (10 m^3) (at most
    # 0.1 in total) breaks ties among optima only: by the rearrangement inequality it prefers
    # the assignment keeping the pre-order (item r of ``pre`` at position r).
    cost = cost - np.arange(m)[:, None] * positions[None, :] / (10.0 * m**3)
    rows, cols = linear_sum_assignment(cost)
    order = np.empty(m, dtype=np.int64)
    order[cols] = pre[rows]
    return order


def _rank_columns(indices, higher, n):
    from scipy.stats import rankdata

    names, columns = [], []
    for name, values in indices.items():
        if not np.isfinite(values).all():
            continue
        names.append(name)
        columns.append(rankdata(-values if higher[name] else values, method="average"))
    ranks = np.column_stack(columns) if columns else np.empty((n, 0))
    return tuple(names), ranks


#: kNN co-association neighbours of the sparse route (as select_k's sparse consensus graphs).
SPARSE_NEIGHBORS = 30


def _route(method, matrix, max_bytes):
    """(route, extra eac parameters): "auto" is settled by the first fusion (dense unless eac's
    own memory guard refuses it, which it does before allocating)."""
    if matrix not in ("auto", "dense", "sparse"):
        raise ValidationError(f"matrix must be one of ['auto', 'dense', 'sparse'], got {matrix!r}.")
    if method != "eac":
        if matrix != "auto":
            raise ValidationError(f"matrix={matrix!r} chooses the route of the default method 'eac'; method "
                                  f"{method!r} keeps its own (pass matrix='auto', or method='eac').")
        return "method", {}
    budget = {} if max_bytes is None else {"max_bytes": max_bytes}
    if matrix == "sparse":
        return "sparse", {"linkage": "single", "n_neighbors": SPARSE_NEIGHBORS, **budget}
    return matrix, budget


def _check_common(X, labels_true, method, method_params):
    from cclust._pipeline import RESERVED_METHOD, check_name, check_params_dict, validate_X
    from cclust.registry import get

    features, _ = validate_X(X)
    n = features.shape[0]
    truth = None
    if labels_true is not None:
        truth, _ = label_vector(labels_true, "labels_true")
        if truth.shape[0] != n:
            raise ValidationError(f"labels_true must have one label per object ({n}), got {truth.shape[0]}.")
    fn = get(check_name(method, "method"), kind="consensus")
    params = check_params_dict(method_params, "method_params", RESERVED_METHOD, "evaluate")
    return features, truth, fn, params


def _as_same_objects(ensemble, n, name="ensemble"):
    ensemble = as_ensemble(ensemble, name)
    if ensemble.n_samples != n:
        raise ValidationError(f"X and {name} must describe the same objects: X has {n} rows, "
                              f"{name} {ensemble.n_samples}.")
    return ensemble


def _evaluate_one(features, ensemble, n_clusters, truth, fn, params, method, route, random_state, n_jobs):
    from cclust._pipeline import call_method
    from cclust.metrics import ari, nmi

    from cclust.errors import MemoryBudgetError

    n = features.shape[0]
    names, groups = _groups(ensemble)
    seeds = spawn_seed_sequences(random_state, len(names))
    labels = np.empty((len(names), n), dtype=np.int64)
    rows = []
    mode, extra = route
    for a, (idx, seed) in enumerate(zip(groups, seeds)):
        seed = int(seed.generate_state(1, dtype=np.uint32)[0])
        part = ensemble.take(partitions=idx)
        try:
            result = call_method(fn, part, n_clusters, {**extra, **params}, seed, features, n_jobs, 0)
        except MemoryBudgetError:
            if mode != "auto":
                raise
            mode, extra = _route("eac", "sparse", extra.get("max_bytes"))
            result = call_method(fn, part, n_clusters, {**extra, **params}, seed, features, n_jobs, 0)
        mode = "dense" if mode == "auto" else mode
        labels[a] = np.asarray(result.labels, dtype=np.int64)
        rows.append(internal_indices(features, labels[a], ensemble))
    indices = {name: np.array([row[name] for row in rows]) for name in INDICES}
    external = {}
    if truth is not None:
        external = {"ari": np.array([ari(truth, row) for row in labels]),
                    "nmi": np.array([nmi(truth, row) for row in labels])}
    ranked, ranks = _rank_columns(indices, INDICES, len(names))
    order = tuple(names[i] for i in aggregate_ranks(ranks))
    return EvaluationResult(tuple(names), np.array([g.shape[0] for g in groups], dtype=np.int64), labels,
                            indices, external, ranked, ranks, order, int(n_clusters), str(method), route=mode)


def _is_k_list(n_clusters):
    return not isinstance(n_clusters, (str, bytes)) and isinstance(n_clusters, (list, tuple, range, np.ndarray))


def evaluate(X, ensemble, n_clusters, *, labels_true=None, method="eac", method_params=None, matrix="auto",
             k_method=None, pac_interval=(0.0, 1.0), max_bytes=None, random_state=None, n_jobs=None):
    """Score each algorithm of a heterogeneous ensemble on internal validity indices and rank them.

    diceR's ``consensus_evaluate`` (Chiu & Talhouk 2018); see the module docstring for every
    step and where it differs from diceR. With a list of K (``n_clusters=[3, 4, 5]``) or one
    ensemble per K (``{3: E3, 4: E4, 5: E5}``), every (algorithm, K) combination is evaluated
    as diceR's multi-K mode does (``consensus_cluster(nk = 3:5)`` then ``consensus_evaluate``),
    and a :class:`MultiKEvaluation` is returned; see there for how K is chosen.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the ensemble partitions.
    ensemble : Ensemble, array-like of shape (n_samples, n_partitions), or dict of int -> Ensemble
        The partitions; the algorithms are read from ``ensemble.provenance`` (an ensemble without
        provenance is one algorithm, ``"ensemble"``). A dict gives the partitions generated at
        each K (diceR's ensemble over ``nk``); one Ensemble with several K is fused at every K.
    n_clusters : int, list of int, or None
        K of each algorithm's consensus labelling, each in [2, n_samples - 1]. None only with a
        dict ``ensemble`` (its keys).
    labels_true : array-like of shape (n_samples,), default=None
        Reference classes: adds the external ARI and NMI (not used for ranking); with several K
        it also fixes the chosen K to its number of classes, as in diceR.
    method : str, default="eac"
        Registered consensus function fusing each algorithm's partitions.
    method_params : dict, default=None
        Its extra keyword arguments.
    matrix : {"auto", "dense", "sparse"}, default="auto"
        Route of the default ``eac``: "dense" is average linkage of the full n x n ``1 -
        co-association`` (refused past ``max_bytes``); "sparse" is single linkage of the kNN
        co-association graph of each object's 30 strongest pairs
        (:meth:`cclust.Ensemble.knn_coassociation`; :func:`cclust.consensus_functions.pairwise.eac`
        with ``n_neighbors``), memory linear in n; "auto" is dense while the dense route fits the
        budget. Other methods keep their own routes (only "auto" is accepted with them).
    k_method : None, int or "all", default=None
        With several K, which K trim and reweigh use (diceR's ``k.method``): None for the
        number of classes of ``labels_true``, else the K most algorithms find least ambiguous
        (PAC); an int for that K; "all" for every K.
    pac_interval : (float, float), default=(0.0, 1.0)
        ``(lower, upper)`` of PAC, the share of consensus entries strictly between them
        (diceR's ``PAC(lower = 0, upper = 1)``). Several K only.
    max_bytes : int, default=None
        Memory budget (``cclust.validation.memory_budget()`` when None).
    random_state : int, Generator or None
        Seeds the consensus function (algorithm i gets the i-th child seed; with several K
        every K is seeded alike, so ``result.per_k[K]`` equals a one-K evaluation at K).
    n_jobs : int, default=None
        Threads of the consensus function.

    Returns
    -------
    EvaluationResult, or MultiKEvaluation with several K

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.evaluation import evaluate
    >>> X, y = load_iris()
    >>> E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 5, "hierarchical": 5},
    ...                     random_state=0)
    >>> result = evaluate(X, E, 3, labels_true=y)
    >>> result.algorithms, sorted(result.indices)[:2]
    (('kmeans', 'hierarchical-average'), ['calinski_harabasz', 'compactness'])
    """
    _require_sklearn()
    if isinstance(ensemble, Mapping) or _is_k_list(n_clusters):
        return _evaluate_multi(X, ensemble, n_clusters, labels_true, method, method_params, matrix, k_method,
                               pac_interval, max_bytes, random_state, n_jobs)
    features, truth, fn, params = _check_common(X, labels_true, method, method_params)
    n = features.shape[0]
    ensemble = _as_same_objects(ensemble, n)
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, n - 1))
    if k_method is not None:
        raise ValidationError(f"k_method chooses among several K; n_clusters={n_clusters} is one K (give a list, "
                              "e.g. n_clusters=[3, 4, 5]).")
    route = _route(method, matrix, max_bytes)
    return _evaluate_one(features, ensemble, n_clusters, truth, fn, params, method, route, random_state, n_jobs)


# -- several K (diceR's multi-K mode) ---------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MultiKEvaluation:
    """What :func:`evaluate` measured for every (algorithm, K) combination (diceR's multi-K mode).

    Attributes
    ----------
    k_values : tuple of int
        The K evaluated, increasing.
    algorithms : tuple of str
        Every algorithm seen, in order of first appearance.
    per_k : dict of int -> EvaluationResult
        Each K's evaluation: indices of each algorithm and their ranking within that K
        (diceR's ``ii[[k]]`` and the rank aggregation its trim runs at K).
    pac : ndarray of shape (n_algorithms, n_k)
        PAC of each algorithm's consensus (co-association) matrix at each K: the share of the
        pairs i < j whose entry lies strictly inside ``pac_interval`` (diceR's ``PAC``), over
        every pair up to 10^6 pairs and over 10^6 random pairs beyond; NaN where the algorithm
        is absent at that K.
    pac_interval : tuple of float
    chosen_k : tuple of int
        The K trim and reweigh use, chosen by ``k_method`` as diceR's ``choose_k`` does: the
        number of classes of ``labels_true``; else, each algorithm voting for its K of lowest
        PAC (the smaller K on ties), the K with most votes (the smallest on ties); an int
        ``k_method``; or every K for ``"all"`` (also when only one K is evaluated).
    k_rule : str
        How ``chosen_k`` was found: "labels_true", "pac", "given" or "all".
    ranked_indices : tuple of str
        Indices finite for every combination, used for the joint ranking.
    combinations : tuple of (str, int)
        The (algorithm, K) rows of ``ranks``.
    ranks : ndarray of shape (n_combinations, len(ranked_indices))
        Rank of each combination on each index over all combinations (1 = best).
    order : tuple of (str, int)
        Every combination, best first: the footrule-optimal aggregate of ``ranks``.
    best_k : int
        The K of the best combination: the K the internal indices favour. diceR does not report
        this (it chooses K by PAC); it is given beside ``chosen_k``. Many indices drift with K
        (compactness falls and connectivity grows as K grows), so read it with the table.
    """

    k_values: tuple
    algorithms: tuple
    per_k: dict
    pac: np.ndarray
    pac_interval: tuple
    chosen_k: tuple
    k_rule: str
    ranked_indices: tuple
    combinations: tuple
    ranks: np.ndarray
    order: tuple
    best_k: int
    method: str = "eac"

    def rank_of(self, algorithm, k):
        """Position (1 = best) of ``(algorithm, k)`` in the joint :attr:`order`."""
        if (algorithm, k) not in self.order:
            raise ValidationError(f"({algorithm!r}, {k}) was not evaluated; evaluated: {list(self.order)}.")
        return self.order.index((algorithm, k)) + 1

    def as_table(self):
        """One row per (algorithm, K) as a dict of equal-length lists (``pandas.DataFrame(...)``-ready).

        ``rank_in_k`` is the algorithm's place among the algorithms at that K (what trim uses),
        ``rank`` its place among all combinations, ``chosen`` whether K is in :attr:`chosen_k`.
        """
        table = {"algorithm": [], "k": [], "n_partitions": []}
        first = self.per_k[self.k_values[0]]
        names = list(first.indices) + list(first.external)
        for name in names + ["pac", "rank_in_k", "rank", "chosen"]:
            table[name] = []
        for k in self.k_values:
            one = self.per_k[k]
            for i, algorithm in enumerate(one.algorithms):
                table["algorithm"].append(algorithm)
                table["k"].append(int(k))
                table["n_partitions"].append(int(one.n_partitions[i]))
                for name in names:
                    source = one.indices if name in one.indices else one.external
                    table[name].append(float(source[name][i]))
                table["pac"].append(float(self.pac[self.algorithms.index(algorithm), self.k_values.index(k)]))
                table["rank_in_k"].append(one.rank_of(algorithm))
                table["rank"].append(self.rank_of(algorithm, k))
                table["chosen"].append(k in self.chosen_k)
        return table

    def summary(self):
        """A text table, one row per (algorithm, K), best first, with the K chosen and the best K."""
        first = self.per_k[self.k_values[0]]
        names = list(first.indices) + list(first.external)
        table = self.as_table()
        rows = sorted(range(len(table["rank"])), key=lambda r: table["rank"][r])
        lines = [f"evaluation of {len(self.algorithms)} algorithms at K = {list(self.k_values)} (each fused by "
                 f"{self.method}); ranked jointly on {', '.join(self.ranked_indices) or 'nothing'}",
                 f"{'rank':>4}  {'algorithm':<24}  {'K':>3}  {'in K':>4}  {'PAC':>6}  "
                 + "  ".join(f"{n[:12]:>12}" for n in names)]
        for r in rows:
            lines.append(f"{table['rank'][r]:>4}  {table['algorithm'][r]:<24}  {table['k'][r]:>3}  "
                         f"{table['rank_in_k'][r]:>4}  {table['pac'][r]:>6.3f}  "
                         + "  ".join(f"{table[n][r]:>12.4g}" for n in names))
        lines.append(f"best K by the internal indices: {self.best_k} (of {self.order[0][0]}); K used for trimming "
                     f"({self.k_rule}): {', '.join(map(str, self.chosen_k))}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"MultiKEvaluation(k_values={list(self.k_values)}, chosen_k={list(self.chosen_k)}, "
                f"best_k={self.best_k})")


def _k_values(n_clusters, ensemble, n):
    if isinstance(ensemble, Mapping):
        keys = sorted(check_int(k, "ensemble keys (K)", low=2, high=max(2, n - 1)) for k in ensemble)
        if not keys:
            raise ValidationError("ensemble is an empty dict; give one Ensemble per K, e.g. {3: E3, 4: E4}.")
        if n_clusters is not None:
            wanted = sorted({check_int(k, "n_clusters", low=2, high=max(2, n - 1))
                             for k in (n_clusters if _is_k_list(n_clusters) else [n_clusters])})
            if wanted != keys:
                raise ValidationError(f"n_clusters={list(wanted)} differs from the K of the ensemble dict {keys}; "
                                      "pass n_clusters=None to use the dict's keys.")
        return tuple(keys)
    if n_clusters is None:
        raise ValidationError("n_clusters=None needs ensemble as a dict K -> Ensemble; give n_clusters.")
    values = [check_int(k, "n_clusters", low=2, high=max(2, n - 1)) for k in n_clusters]
    if not values:
        raise ValidationError("n_clusters must hold at least one K, got an empty list.")
    return tuple(sorted(set(values)))


def _pac(ensemble, groups, pairs, interval):
    """diceR's PAC of each group's unweighted consensus matrix, from the exact entries of ``pairs``."""
    from cclust._monti import _pair_values

    low, high = interval
    out = np.empty(len(groups))
    for a, idx in enumerate(groups):
        values = _pair_values(ensemble.labels[:, idx], *pairs)
        out[a] = np.nan if not values.any() else float(np.count_nonzero((values > low) & (values < high))
                                                       / values.shape[0])
    return out


def _pac_pairs(n, root):
    """Every pair when there are at most a million, else a million random ones (select_k's sparse
    route at its default tolerance)."""
    from cclust._monti import PAIR_TOLERANCE, draw_pairs

    return draw_pairs(n, PAIR_TOLERANCE, np.random.default_rng(np.random.SeedSequence(root, spawn_key=(0,))))


def _choose_k(k_values, pac, truth, k_method):
    """diceR's ``choose_k``: (chosen K, rule)."""
    if len(k_values) == 1:
        return k_values, "all"
    if k_method is None and truth is not None:
        k = int(np.unique(truth).shape[0])
        if k not in k_values:
            raise ValidationError(f"labels_true has {k} classes, so diceR's rule evaluates K = {k}, which is not "
                                  f"among n_clusters={list(k_values)}; add it, or pass k_method.")
        return (k,), "labels_true"
    if k_method is None:
        votes = np.zeros(len(k_values), dtype=np.int64)
        for row in pac:
            if np.isfinite(row).any():
                votes[int(np.nanargmin(row))] += 1
        return (k_values[int(np.argmax(votes))],), "pac"
    if isinstance(k_method, str):
        if k_method != "all":
            raise ValidationError(f"k_method must be None, an int among n_clusters or 'all', got {k_method!r}.")
        return k_values, "all"
    k = check_int(k_method, "k_method")
    if k not in k_values:
        raise ValidationError(f"k_method={k} is not among the K evaluated, {list(k_values)}.")
    return (k,), "given"


def _evaluate_multi(X, ensemble, n_clusters, labels_true, method, method_params, matrix, k_method, pac_interval,
                    max_bytes, random_state, n_jobs):
    from cclust._pipeline import check_pac_interval, child_seeds

    features, truth, fn, params = _check_common(X, labels_true, method, method_params)
    n = features.shape[0]
    k_values = _k_values(n_clusters, ensemble, n)
    if isinstance(ensemble, Mapping):
        ensembles = {k: _as_same_objects(ensemble[k], n, f"ensemble[{k}]") for k in k_values}
    else:
        shared = _as_same_objects(ensemble, n)
        ensembles = {k: shared for k in k_values}
    interval = check_pac_interval(pac_interval)
    route = _route(method, matrix, max_bytes)
    root = child_seeds(random_state, 1)[0]
    pairs = _pac_pairs(n, root)
    per_k, pac_rows = {}, {}
    for k in k_values:
        per_k[k] = _evaluate_one(features, ensembles[k], k, truth, fn, params, method, route, root, n_jobs)
        pac_rows[k] = dict(zip(per_k[k].algorithms, _pac(ensembles[k], _groups(ensembles[k])[1], pairs, interval)))
    algorithms = tuple(dict.fromkeys(a for k in k_values for a in per_k[k].algorithms))
    pac = np.array([[pac_rows[k].get(a, np.nan) for k in k_values] for a in algorithms])
    chosen, rule = _choose_k(k_values, pac, truth, k_method)
    combinations = tuple((a, k) for k in k_values for a in per_k[k].algorithms)
    indices = {name: np.concatenate([per_k[k].indices[name] for k in k_values]) for name in INDICES}
    ranked, ranks = _rank_columns(indices, INDICES, len(combinations))
    order = tuple(combinations[i] for i in aggregate_ranks(ranks))
    return MultiKEvaluation(k_values, algorithms, per_k, pac, interval, tuple(int(k) for k in chosen), rule, ranked,
                            combinations, ranks, order, int(order[0][1]), str(method))


# -- trim and reweigh --------------------------------------------------------------------------------

def _check_pair(ensemble, evaluation):
    ensemble = as_ensemble(ensemble)
    if not isinstance(evaluation, EvaluationResult):
        raise ValidationError(f"evaluation must be the EvaluationResult of cclust.evaluation.evaluate, got "
                              f"{type(evaluation).__name__}.")
    names, groups = _groups(ensemble)
    unknown = [name for name in names if name not in evaluation.algorithms]
    if unknown:
        raise ValidationError(f"ensemble holds algorithms the evaluation did not rank: {unknown}; evaluated: "
                              f"{list(evaluation.algorithms)}.")
    return ensemble, names, groups


_K_SUFFIX = " k="


def _blocks(ensemble, evaluation):
    """[(K, the ensemble's partitions at K)] for the chosen K of a multi-K evaluation.

    ``ensemble`` is the dict evaluated (one Ensemble per K), the one Ensemble evaluated at every
    K, or what a multi-K :func:`trim`/:func:`reweigh` returned (provenance ``"name k=K"`` when
    several K were chosen, diceR's ``paste_k``).
    """
    if isinstance(ensemble, Mapping):
        missing = [k for k in evaluation.chosen_k if k not in ensemble]
        if missing:
            raise ValidationError(f"ensemble has no partitions at the chosen K {missing}; give the dict evaluated.")
        return [(k, as_ensemble(ensemble[k], f"ensemble[{k}]")) for k in evaluation.chosen_k]
    ensemble = as_ensemble(ensemble)
    provenance = ensemble.provenance or ()
    if provenance and all(_K_SUFFIX in p for p in provenance):
        parsed = [p.rsplit(_K_SUFFIX, 1) for p in provenance]
        blocks = []
        for k in evaluation.chosen_k:
            idx = np.flatnonzero([suffix == str(k) for _, suffix in parsed])
            if idx.shape[0]:
                part = ensemble.take(partitions=idx)
                blocks.append((k, Ensemble(part, provenance=[parsed[i][0] for i in idx])))
        if blocks:
            return blocks
    return [(k, ensemble) for k in evaluation.chosen_k]


def _join(blocks):
    """One Ensemble of the blocks side by side, each block's weight 1/len(blocks), provenance suffixed
    by K when there are several."""
    if len(blocks) == 1:
        return blocks[0][1]
    labels, weights, provenance = [], [], []
    for k, part in blocks:
        labels.append(part.labels)
        weights.append(np.asarray(part.weights) / len(blocks))
        provenance += [f"{p}{_K_SUFFIX}{k}" for p in (part.provenance or (_UNNAMED,) * part.n_partitions)]
    return Ensemble(np.column_stack(labels), weights=np.concatenate(weights), provenance=provenance)


def trim(ensemble, evaluation, n_keep=5):
    """Keep the partitions of the ``n_keep`` best-ranked algorithms (diceR's ``trim``).

    Parameters
    ----------
    ensemble : Ensemble or dict of int -> Ensemble
        The ensemble that was evaluated (or a part of it); with a :class:`MultiKEvaluation`,
        the dict (or single Ensemble) evaluated.
    evaluation : EvaluationResult or MultiKEvaluation
        From :func:`evaluate`.
    n_keep : int, default=5
        Algorithms to keep. With ``n_keep`` or fewer algorithms in ``ensemble`` it is returned
        unchanged, as in diceR.

    Returns
    -------
    Ensemble
        The kept partitions in their original order, with their weights (renormalised) and
        provenance. With several K, as diceR's trim over ``k.method``: at each K of
        ``evaluation.chosen_k``, the ``n_keep`` algorithms ranked best at that K; when several
        K are chosen their kept partitions are joined, each K weighing 1/(number of K), and the
        provenance reads ``"algorithm k=K"``.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.evaluation import evaluate, trim
    >>> X, _ = load_iris()
    >>> E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 3, "pam": 3, "gmm": 3},
    ...                     random_state=0)
    >>> len(set(trim(E, evaluate(X, E, 3), n_keep=2).provenance))
    2
    """
    n_keep = check_int(n_keep, "n_keep", low=1)
    if isinstance(evaluation, MultiKEvaluation):
        return _join([(k, trim(part, evaluation.per_k[k], n_keep)) for k, part in _blocks(ensemble, evaluation)])
    ensemble, names, groups = _check_pair(ensemble, evaluation)
    if len(names) <= n_keep:
        return ensemble
    kept = set(sorted(names, key=evaluation.rank_of)[:n_keep])
    idx = np.sort(np.concatenate([g for name, g in zip(names, groups) if name in kept]))
    return ensemble.take(partitions=idx)


def reweigh(ensemble, evaluation):
    """Weight each algorithm's partitions by the algorithm's aggregated rank (diceR's ``reweigh``).

    Of the m algorithms in ``ensemble``, the one at position p (1 = best, in
    ``evaluation.order``) gets the total weight ``(m + 1 - p) / (m (m + 1) / 2)``, shared among
    its partitions in proportion to their current weights. One algorithm: returned unchanged.
    With a :class:`MultiKEvaluation`, each chosen K is reweighed by its own ranking and the K
    are joined as :func:`trim` joins them.

    Returns
    -------
    Ensemble

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.evaluation import evaluate, reweigh
    >>> X, _ = load_iris()
    >>> E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 2, "pam": 1},
    ...                     random_state=0)
    >>> sorted(round(w, 4) for w in reweigh(E, evaluate(X, E, 3)).weights.tolist())
    [0.3333, 0.3333, 0.3333]
    """
    if isinstance(evaluation, MultiKEvaluation):
        return _join([(k, reweigh(part, evaluation.per_k[k])) for k, part in _blocks(ensemble, evaluation)])
    ensemble, names, groups = _check_pair(ensemble, evaluation)
    m = len(names)
    if m == 1:
        return ensemble
    position = {name: p + 1 for p, name in enumerate(sorted(names, key=evaluation.rank_of))}
    current = np.asarray(ensemble.weights, dtype=np.float64)
    weights = np.zeros_like(current)
    for name, g in zip(names, groups):
        share = current[g] / current[g].sum() if current[g].sum() > 0 else np.full(g.shape[0], 1.0 / g.shape[0])
        weights[g] = (m + 1 - position[name]) / (m * (m + 1) / 2) * share
    return ensemble.with_weights(weights)
