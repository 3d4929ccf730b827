"""The validity indices :func:`cclust.evaluation.evaluate` scores each algorithm's labelling on,
clValid's connectivity (Handl, Knowles & Kell 2005), and the footrule-optimal aggregation of
rankings (Dwork et al. 2001)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from cclust.base import declare
from cclust.errors import MissingDependencyError, ValidationError
from cclust.validation import check_int

if TYPE_CHECKING:
    from cclust.ensemble import Ensemble


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


def _require_sklearn():
    """The internal indices are scikit-learn's: say so, with the install command, before any work."""
    try:
        import sklearn.metrics  # noqa: F401
    except ImportError:
        raise MissingDependencyError("evaluate scores partitions with scikit-learn's Calinski-Harabasz, "
                                     "Davies-Bouldin and silhouette indices, and scikit-learn cannot be imported: "
                                     "pip install 'cclust[sklearn]'.") from None


def internal_indices(X: np.ndarray, labels: npt.ArrayLike, ensemble: Ensemble) -> dict[str, float]:
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


def nearest_neighbors_in_order(X: np.ndarray, n_neighbors: int, metric: str = "euclidean") -> npt.NDArray[np.int64]:
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
def connectivity(X: npt.ArrayLike, labels: npt.ArrayLike, *, n_neighbors: int = 10, metric: str = "euclidean") -> float:
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


def aggregate_ranks(ranks: npt.ArrayLike) -> npt.NDArray[np.int64]:
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
