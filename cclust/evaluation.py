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
"""
from dataclasses import dataclass, field

import numpy as np

from cclust.base import declare
from cclust.ensemble import Ensemble, as_ensemble
from cclust.errors import ValidationError
from cclust.validation import check_array_2d, check_int, check_same_length, label_vector, spawn_seed_sequences

__all__ = ["INDICES", "EvaluationResult", "evaluate", "trim", "reweigh", "aggregate_ranks", "connectivity"]

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


def internal_indices(X, labels, ensemble):
    """The :data:`INDICES` of one labelling of ``X`` (NaN where an index is undefined)."""
    from sklearn.metrics import calinski_harabasz_score, davies_bouldin_score, silhouette_score

    from cclust.metrics import compactness, consensus_score

    k = np.unique(labels).shape[0]
    defined = 2 <= k <= X.shape[0] - 1
    nan = float("nan")
    return {
        "silhouette": float(silhouette_score(X, labels)) if defined else nan,
        "calinski_harabasz": float(calinski_harabasz_score(X, labels)) if defined else nan,
        "davies_bouldin": float(davies_bouldin_score(X, labels)) if defined else nan,
        "compactness": float(compactness(X, labels)),
        "consensus_nmi": float(consensus_score(labels, ensemble, metric="nmi")),
        # clValid's L = 10, or every other object when there are fewer
        "connectivity": float(connectivity(X, labels, n_neighbors=min(10, X.shape[0] - 1))),
    }


#: Rows of distances held at once by :func:`connectivity` (bounded memory for any n).
_CONNECTIVITY_BLOCK_ELEMENTS = 2**22


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


@declare(requires_X=True)
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
    X = check_array_2d(X, "X")
    codes, _ = label_vector(labels, "labels")
    check_same_length(X, codes, "X", "labels")
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


def evaluate(X, ensemble, n_clusters, *, labels_true=None, method="eac", method_params=None,
             random_state=None, n_jobs=None):
    """Score each algorithm of a heterogeneous ensemble on internal validity indices and rank them.

    diceR's ``consensus_evaluate`` (Chiu & Talhouk 2018); see the module docstring for every
    step and where it differs from diceR.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the ensemble partitions.
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        The partitions; the algorithms are read from ``ensemble.provenance`` (an ensemble without
        provenance is one algorithm, ``"ensemble"``).
    n_clusters : int
        K of each algorithm's consensus labelling, in [2, n_samples - 1].
    labels_true : array-like of shape (n_samples,), default=None
        Reference classes: adds the external ARI and NMI (not used for ranking).
    method : str, default="eac"
        Registered consensus function fusing each algorithm's partitions.
    method_params : dict, default=None
        Its extra keyword arguments.
    random_state : int, Generator or None
        Seeds the consensus function (algorithm i gets the i-th child seed).
    n_jobs : int, default=None
        Threads of the consensus function.

    Returns
    -------
    EvaluationResult

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
    from cclust._pipeline import RESERVED_METHOD, call_method, check_name, check_params_dict, validate_X
    from cclust.metrics import ari, nmi
    from cclust.registry import get

    features, _ = validate_X(X)
    ensemble = as_ensemble(ensemble)
    n = features.shape[0]
    if ensemble.n_samples != n:
        raise ValidationError(f"X and ensemble must describe the same objects: X has {n} rows, "
                              f"the ensemble {ensemble.n_samples}.")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=max(2, n - 1))
    truth = None
    if labels_true is not None:
        truth, _ = label_vector(labels_true, "labels_true")
        if truth.shape[0] != n:
            raise ValidationError(f"labels_true must have one label per object ({n}), got {truth.shape[0]}.")
    fn = get(check_name(method, "method"), kind="consensus")
    params = check_params_dict(method_params, "method_params", RESERVED_METHOD, "evaluate")

    names, groups = _groups(ensemble)
    seeds = spawn_seed_sequences(random_state, len(names))
    labels = np.empty((len(names), n), dtype=np.int64)
    rows = []
    for a, (idx, seed) in enumerate(zip(groups, seeds)):
        seed = int(seed.generate_state(1, dtype=np.uint32)[0])
        result = call_method(fn, ensemble.take(partitions=idx), n_clusters, params, seed, features, n_jobs, 0)
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
                            indices, external, ranked, ranks, order, int(n_clusters), str(method))


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


def trim(ensemble, evaluation, n_keep=5):
    """Keep the partitions of the ``n_keep`` best-ranked algorithms (diceR's ``trim``).

    Parameters
    ----------
    ensemble : Ensemble
        The ensemble that was evaluated (or a part of it).
    evaluation : EvaluationResult
        From :func:`evaluate`.
    n_keep : int, default=5
        Algorithms to keep. With ``n_keep`` or fewer algorithms in ``ensemble`` it is returned
        unchanged, as in diceR.

    Returns
    -------
    Ensemble
        The kept partitions in their original order, with their weights (renormalised) and
        provenance.

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
    ensemble, names, groups = _check_pair(ensemble, evaluation)
    n_keep = check_int(n_keep, "n_keep", low=1)
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
