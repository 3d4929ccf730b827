"""Least-squares consensus clustering (Mirkin & Shestakov; Mirkin 1980).

Two symmetric least-squares criteria of a consensus partition S = {S_1, ..., S_K} of N objects
given T basic partitions:

* **ensemble consensus** (Mirkin & Shestakov, sec. 2.1): S best predicts the basic partitions,
  ``||X - P_Z X||^2`` (eq. 2), equivalently maximise ``g(S) = sum_k sum_{i,j in S_k} a_ij / N_k``
  (eq. 3) with ``a_ij`` the co-association (the number of partitions joining i and j);
  :func:`addremadd` maximises it by Mirkin's one-cluster-at-a-time AddRemAdd (sec. 3.1).
* **combined consensus** (Mirkin & Shestakov, sec. 2.2): S is best predicted by the basic partitions,
  ``sum_u ||Z - P_u Z||^2`` (eq. 5), equivalently maximise
  ``f(S, p) = sum_k sum_{i,j in S_k} (p_ij - T/N)`` (eq. 6) with ``p_ij`` the sum over partitions
  of ``1/N_k`` when i and j share cluster k; :func:`ls_agglomerative` maximises it by greedy
  agglomeration (sec. 3.2).

Both choose the number of clusters themselves (``n_clusters=None``).
"""
from __future__ import annotations

import numpy as np

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust.validation import check_float, check_int, check_n_jobs, check_random_state, renamed_threads, require_memory
from cclust.ensemble import Ensemble, as_ensemble
from cclust.errors import ValidationError
from cclust.base import declare
from cclust.result import ConsensusResult
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

# Fixed-point scale of the projection sums p_ij: integer sums are exact, so p_ij does not depend
# on the order of the partitions (order-invariant ties in the agglomeration).
_P_SCALE = 2.0 ** 50

#: Peak bytes per pair of :func:`projection_sums`: the sparse int64 product (8 + 4 per stored
#: pair), its dense int64 copy and two float64 arrays (the conversion and the scaled result).
_PROJECTION_BYTES_PER_PAIR = 12 + 8 + 8 + 8
_ROW_BLOCK = 1024


def _check_budget(n, bytes_per_pair, max_bytes, what, alternative):
    return require_memory(int(n) * int(n) * bytes_per_pair, f"{what} of {n} objects",
                          f"use {alternative}", max_bytes)


def _block_sums(A, labels, k):
    """W[a, b] = sum_{i in S_a, j in S_b} A[i, j] in float64, without an n x n float64 copy."""
    n = labels.shape[0]
    Z = np.zeros((n, k), dtype=np.float64)
    Z[np.arange(n), labels] = 1.0
    W = np.zeros((k, k), dtype=np.float64)
    for start in range(0, n, _ROW_BLOCK):
        stop = min(n, start + _ROW_BLOCK)
        rows = np.asarray(A[start:stop], dtype=np.float64) @ Z
        W += Z[start:stop].T @ rows
    return W


def ensemble_criterion(A, labels):
    """g(S) of Mirkin & Shestakov's eq. 3: ``sum_k sum_{i,j in S_k} A[i, j] / N_k`` (diagonal included).

    Parameters
    ----------
    A : ndarray of shape (n_samples, n_samples)
        The similarity (co-association).
    labels : array-like of shape (n_samples,)
        Integer labels in ``0..K-1``.

    Examples
    --------
    >>> import numpy as np
    >>> ensemble_criterion(np.ones((2, 2)), np.array([0, 0]))
    2.0
    """
    labels = np.asarray(labels, dtype=np.int64)
    k = int(labels.max()) + 1
    W = _block_sums(A, labels, k)
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    return float((np.diag(W) / sizes).sum())


def _merge_gain_matrix(W, sizes):
    """Change of g (eq. 3) when clusters a and b merge, for every pair (upper triangle)."""
    diag = np.diag(W)
    own = diag / sizes
    merged = (diag[:, None] + diag[None, :] + 2.0 * W) / (sizes[:, None] + sizes[None, :])
    gain = merged - own[:, None] - own[None, :]
    k = sizes.shape[0]
    gain[np.tril_indices(k)] = -np.inf
    return gain


def _merge_to(A, labels, k, target):
    """Greedy least-squares merging (the pair increasing g of eq. 3 most, ties the lowest pair)."""
    labels = labels.copy()
    W = _block_sums(A, labels, k)
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    while k > target:
        gain = _merge_gain_matrix(W, sizes)
        a, b = np.unravel_index(int(np.argmax(gain)), gain.shape)
        # b into a, then the last cluster takes b's place.
        W[a, :] += W[b, :]
        W[:, a] += W[:, b]
        sizes[a] += sizes[b]
        labels[labels == b] = a
        last = k - 1
        if b != last:
            W[b, :] = W[last, :]
            W[:, b] = W[:, last]
            sizes[b] = sizes[last]
            labels[labels == last] = b
        k -= 1
        W = W[:k, :k].copy()
        sizes = sizes[:k].copy()
    return labels


def _bisect(B):
    """A least-squares 2-split of one cluster with within-cluster similarity B (m x m, m >= 2).

    Starts from the two least similar members (ties: the first pair in row-major order), each
    other member joining the one it is more similar to (ties: the first), then moves single
    members between the halves while a move increases ``sum_h Sigma_h / N_h`` (eq. 3 restricted
    to the cluster; Sigma_h the sum of B over the half, diagonal included), the best move first.
    Returns (boolean mask of the second half, value of the split).
    """
    m = B.shape[0]
    off = B + np.diag(np.full(m, np.inf))
    p, q = np.unravel_index(int(np.argmin(off)), off.shape)
    p, q = min(p, q), max(p, q)
    side = B[:, q] > B[:, p]
    side[p], side[q] = False, True
    diag = np.diag(B)
    for _ in range(4 * m):
        t1 = B[:, side].sum(axis=1)  # similarity of each member to the second half
        t0 = B.sum(axis=1) - t1
        n1 = int(side.sum())
        n0 = m - n1
        s0, s1 = t0[~side].sum(), t1[side].sum()
        value = s0 / n0 + s1 / n1
        with np.errstate(divide="ignore", invalid="ignore"):
            # Moving i from the second half to the first, or from the first to the second.
            to0 = (s0 + 2.0 * t0 + diag) / (n0 + 1) + (s1 - 2.0 * t1 + diag) / (n1 - 1)
            to1 = (s0 - 2.0 * t0 + diag) / (n0 - 1) + (s1 + 2.0 * t1 + diag) / (n1 + 1)
        gain = np.where(side, to0, to1) - value
        gain[side & (n1 == 1)] = -np.inf
        gain[~side & (n0 == 1)] = -np.inf
        best_i = int(np.argmax(gain))
        if not gain[best_i] > 1e-12 * max(1.0, abs(value)):
            break
        side[best_i] = not side[best_i]
    n1 = int(side.sum())
    value = B[~side][:, ~side].sum() / (m - n1) + B[side][:, side].sum() / n1
    return side, value


def _split_to(A, labels, k, target):
    """Least-squares splitting: split the cluster whose best bisection increases g most."""
    labels = labels.copy()
    while k < target:
        best = None
        for c in range(k):
            members = np.flatnonzero(labels == c)
            if members.shape[0] < 2:
                continue
            B = np.asarray(A[np.ix_(members, members)], dtype=np.float64)
            side, value = _bisect(B)
            gain = value - B.sum() / members.shape[0]
            if best is None or gain > best[0]:
                best = (gain, members, side)
        _, members, side = best
        labels[members[side]] = k
        k += 1
    return labels


_ADDREMADD_ALTERNATIVE = ("use a method that never forms the n x n matrix (e.g. kcc, hbgf, mcla, or "
                          "cspa(neighbors='lsh'))")


def _identical_objects(ensemble):
    """(first, inverse) of the groups of identically labelled objects, numbered by first member,
    when AddRemAdd may run on their G x G co-association: at least one repeated row, equal
    weights and no missing labels (the co-association of a pair is then ``count / T`` whatever
    other objects are present, so the G x G matrix holds exactly the entries of the full one);
    None otherwise."""
    r = ensemble.n_partitions
    if ensemble.has_missing or not np.all(ensemble.weights == 1.0 / r):
        return None
    groups = ensemble.distinct_rows()
    if groups is None:
        return None
    first, inverse, _ = groups
    return first, np.ascontiguousarray(inverse, dtype=np.int64)


def _full_coassociation(ensemble, max_bytes):
    """The dense float32 co-association, within the budget for it and the kernel's working copy."""
    n = ensemble.n_samples
    need = ensemble.coassociation_bytes(dtype=np.float32) + n * n * 4
    budget = require_memory(need, f"AddRemAdd on the dense float32 co-association and its working copy of {n} "
                            "objects", _ADDREMADD_ALTERNATIVE, max_bytes)
    return np.ascontiguousarray(ensemble.coassociation(dtype=np.float32, max_bytes=budget))


def _grouped_criterion(AG, inverse, labels):
    """g(S) of eq. 3 from the co-association AG of groups of identical objects (inverse: the
    group of each object): ``sum_k c_k^T AG c_k / N_k``, c_k the group counts of cluster k."""
    k = int(labels.max()) + 1
    C = np.zeros((AG.shape[0], k), dtype=np.float64)
    np.add.at(C, (inverse, labels), 1.0)
    W = C.T @ (np.asarray(AG, dtype=np.float64) @ C)
    sizes = C.sum(axis=0)
    return float((np.diag(W) / sizes).sum())


@weights_on_the_ensemble
@renamed_threads
@declare(chooses_n_clusters=True, handles_missing=True, object_order="distribution")  # index tie-breaks
def addremadd(ensemble: EnsembleLike, n_clusters: int | None = None, *, tol: float = 1e-9,
              max_steps: int | None = None, max_bytes: int | None = None, sample_size: int | None = None,
              random_state: RandomStateLike = None, n_jobs: int | None = None) -> ConsensusResult:
    """Least-squares ensemble consensus by AddRemAdd cluster extraction (Mirkin & Shestakov, sec. 2.1, 3.1).

    Maximises the ensemble-consensus criterion ``g(S) = sum_k sum_{i,j in S_k} a_ij / N_k``
    (Mirkin & Shestakov, eq. 3), ``a_ij`` the co-association of objects i and j, one cluster at a time:
    AddRemAdd(j) grows a cluster from seed j, at each step toggling the object whose
    membership change most increases the cluster's contribution ``f(S) = lambda |S|``
    (``lambda`` the average similarity between distinct members; ``g^2 = lambda^2 |S|^2`` in
    Mirkin & Shestakov), i.e. adding the outsider with the largest average similarity ``a(i, S)`` if it
    exceeds ``lambda / 2`` or removing the member with the smallest if that increases f, with
    the incremental updates of ``lambda`` and ``a(i, S)`` of Mirkin & Shestakov (sec. 3.1). It is run from every
    remaining object; the cluster with the largest contribution is kept (ties: the lowest seed)
    and removed, and extraction repeats until no object is left.

    Choices where Mirkin & Shestakov are terse, with the reasons:

    * ``a_ij`` is the raw (weighted) co-association, no threshold subtracted: eq. 3 is the
      expansion of eq. 2 with ``A = X X^T``, and Mirkin & Shestakov (sec. 3.1) take "the consensus
      co-association matrix A" as input. We use ``Ensemble.coassociation`` (the count divided
      by T, or the weighted fraction; with missing labels the fraction over the partitions
      labelling both objects); AddRemAdd's decisions do not depend on that scale.
    * The diagonal is left out of ``lambda`` and ``a(i, S)``: Mirkin & Shestakov's update
      ``lambda' = ((n-2) lambda + 2 z a(i*, S)) / n`` is exact for the average over distinct
      pairs, and with it adding i increases ``f`` by exactly ``2 a(i, S) - lambda``, which is
      Mirkin & Shestakov's "add if a(i, S) > lambda / 2". Removing member i increases f iff
      ``a(i, S) < lambda |S| / (2 (|S| - 1))`` (about ``lambda / 2``); we use that exact
      condition. Running sums are kept in float64.
    * A toggle is made only if it increases f by more than ``tol`` (so runs always end).

    The compiled core runs the seeds in parallel (OpenMP) and reduces serially, so labels are
    identical for any ``n_jobs``. Each step costs O(n) updates of the sums ``s_i``; a seed's
    run costs ``O(n |S|)`` and an extraction ``O(n^2 |S|)``. After an extraction, a seed run whose
    candidates (the best outsider and member it looked at before each decision) were all kept
    would repeat itself exactly on the smaller matrix, so its result is reused rather than
    recomputed; the partition is the same as rerunning every seed (checked against a plain
    Python reference in the tests).

    Identically labelled objects have identical co-association rows, and AddRemAdd makes the
    same decisions on their G groups, object for object, at O(G) per step instead of O(n):

    * Exact sums. Every co-association is a float32 value, an integer multiple of ``2^-q``
      for some q; if ``n max|a| 2^q <= 2^52`` every running sum of at most n of them is exact in
      float64, so ``s_i`` depends only on i's group and on whether i is a member (then it is the
      outsiders' sum minus ``a_ii``), whatever order the updates came in. The core checks this
      condition (it holds for co-associations of up to millions of objects) and otherwise runs
      the plain extraction.
    * Ties. Within a group the outsider added is always its lowest outsider and the member
      removed its lowest member, so each group keeps those two indices and ties between groups
      go to the lowest object, as in the plain run.
    * Seeds. Runs from two seeds of one group start from the same group counts and can only
      part where a tie between that group and another is broken by object index at a toggle;
      a run that meets none stands for every seed of its group (the lowest seed wins any tie
      among them), otherwise each seed of the group is run. Both routes are compared on many
      random ensembles with repeated rows and ties in the tests.

    With equal weights and no missing labels only the G x G co-association of one object per
    group is formed (the entries are ``count / T`` whatever other objects are present);
    otherwise the core groups the rows of the full matrix itself. At n = 10,000 k-means
    ensembles have about a thousand distinct rows.

    A requested ``n_clusters`` different from the number K0 AddRemAdd finds is reached by a
    least-squares step on eq. 3: while there are too many clusters, merge the pair whose union
    increases g most (decreases it least); while there are too few, split the cluster whose
    best 2-split increases g most (the split starts from its two least similar members and
    moves single members between the halves while g increases). Any K in ``[1, n_samples]``
    is honoured this way.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        The basic partitions (missing labels, -1, allowed).
    n_clusters : int or None, default=None
        None keeps AddRemAdd's own number of clusters; an int in ``[1, n_samples]`` is reached
        by the merge/split step above.
    tol : float, default=1e-9
        Smallest increase of a cluster's contribution that counts as an improvement
        (co-associations lie in [0, 1]).
    max_steps : int, default=None
        Cap on the toggles of one AddRemAdd run (default ``10 * n_samples + 10``).
    max_bytes : int, default=None
        Memory budget for the dense float32 co-association and its working copy
        (``8 * G**2`` bytes for G distinct objects, ``8 * n_samples**2`` when the full matrix
        is needed); defaults to ``cclust.validation.memory_budget()``.
    sample_size : int, default=None
        The scalable route (an approximation): if given and smaller than ``n_samples``,
        AddRemAdd (and the merge/split step) runs on ``sample_size`` objects drawn at random
        with ``random_state``, and every other object joins the cluster of the sample it has
        the largest average co-association with (ties: the first cluster), computed from
        contingency tables in ``O(n_samples * n_partitions * K)`` without any n x n matrix.
        Needs complete partitions. ``objective`` is then g(S) of eq. 3 on the whole ensemble
        (from the contingency tables, exact). None (default): the exact method.
    random_state : int, Generator or None
        Draws the sample of ``sample_size``; the exact method is deterministic.
    n_jobs : int, default=None
        Threads for the per-seed runs (None: every core, see
        :func:`cclust.validation.default_threads`). Results are identical for any value.

    Returns
    -------
    ConsensusResult
        ``objective`` is g(S) of eq. 3 on the co-association (the paper's value divided by T
        for equal weights; higher is better). ``extras``: ``contributions`` and ``lambdas``
        (f and lambda of each extracted cluster, in extraction order), ``seeds`` (the seed
        object of each), ``n_clusters_found`` (K0), ``objective_found`` (g before any
        merge/split), ``n_updates`` (updates of a sum done by the compiled core: per object on
        the plain route, per group on the grouped one); with ``sample_size``, ``sample`` (the
        sampled objects) and ``objective_sample`` (g on the sample).

    Raises
    ------
    ValidationError
        On a bad argument, e.g. ``n_clusters`` outside ``[1, n_samples]``.
    MemoryBudgetError
        If the co-association and its working copy (see ``max_bytes``) exceed the memory
        budget (the message gives the bytes).

    Examples
    --------
    >>> import numpy as np
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 0, 0], [1, 1, 0], [2, 1, 0], [2, 1, 2]])
    >>> res = addremadd(labels)
    >>> res.labels.tolist(), res.n_clusters
    ([0, 0, 1, 1, 1, 1], 2)
    """
    ensemble = as_ensemble(ensemble)
    n = ensemble.n_samples
    n_clusters = check_int(n_clusters, "n_clusters", low=1, high=n, allow_none=True)
    tol = check_float(tol, "tol", low=0)
    max_steps = 10 * n + 10 if max_steps is None else check_int(max_steps, "max_steps", low=1)
    sample_size = check_int(sample_size, "sample_size", low=max(1, n_clusters or 1), allow_none=True)
    rng = check_random_state(random_state)
    n_jobs = check_n_jobs(n_jobs)
    if sample_size is not None and sample_size < n:
        return _addremadd_sampled(ensemble, n_clusters, sample_size, rng, tol=tol, max_steps=max_steps,
                                  max_bytes=max_bytes, n_jobs=n_jobs)
    from cclust._ext import _addremadd

    A = None
    out = None
    groups = _identical_objects(ensemble)
    if groups is not None:
        # The co-association of one object per group: a G x G matrix instead of n x n.
        first, inverse = groups
        sub = Ensemble(ensemble.labels[first])
        need = sub.coassociation_bytes(dtype=np.float32) + first.shape[0] ** 2 * 4
        budget = require_memory(need, f"AddRemAdd on the dense float32 co-association of the {first.shape[0]} "
                                f"distinct objects among {n} and its working copy",
                                _ADDREMADD_ALTERNATIVE, max_bytes)
        AG = np.ascontiguousarray(sub.coassociation(dtype=np.float32, max_bytes=budget))
        out = _addremadd.partition_groups(AG, inverse, tol, max_steps, n_jobs)
    if out is None:
        A = _full_coassociation(ensemble, max_bytes)
        out = _addremadd.partition(A, tol, max_steps, n_jobs)
    found, contributions, lambdas, seeds, n_updates = out
    k0 = contributions.shape[0]
    g_found = ensemble_criterion(A, found) if A is not None else _grouped_criterion(AG, inverse, found)
    labels = found
    if n_clusters is not None and n_clusters != k0:
        if A is None:
            require_memory(n * n * 4, f"the merge/split step's float32 co-association of {n} objects",
                           _ADDREMADD_ALTERNATIVE, max_bytes)
            A = AG[np.ix_(inverse, inverse)]  # the full co-association, entry for entry
        if n_clusters < k0:
            labels = _merge_to(A, found, k0, n_clusters)
        else:
            labels = _split_to(A, found, k0, n_clusters)
    g = g_found if labels is found else ensemble_criterion(A, labels)
    return ConsensusResult.from_labels(
        labels,
        objective=g,
        objective_name="g(S), Mirkin & Shestakov's ensemble-consensus criterion, eq. 3, on the "
                       "co-association (higher is better)",
        n_iter=k0,
        converged=True,
        method="addremadd",
        extras={
            "contributions": contributions,
            "lambdas": lambdas,
            "seeds": seeds,
            "n_clusters_found": k0,
            "objective_found": g_found,
            "n_updates": n_updates,
        },
    )


def _addremadd_sampled(ensemble, n_clusters, sample_size, rng, **params):
    """AddRemAdd on a random sample, every other object to the sample cluster of its largest
    average co-association ``sum_t w_t n_{c, label_t(x)} / N_c`` (n_{c, l}: the sample members
    of cluster c with label l in partition t)."""
    if ensemble.has_missing:
        raise ValidationError("sample_size needs complete partitions (the assignment averages the co-association "
                              "over every partition) but the ensemble has missing labels (-1); drop or impute them, "
                              "or leave sample_size=None.")
    n = ensemble.n_samples
    sample = np.sort(rng.choice(n, size=sample_size, replace=False))
    part = addremadd(ensemble.take(objects=sample), n_clusters, **params)
    k = part.n_clusters
    labels = np.full(n, -1, dtype=np.int64)
    labels[sample] = part.labels
    table = ensemble.contingency(labels, k).astype(np.float64)
    sizes = np.bincount(part.labels, minlength=k).astype(np.float64)
    scores = np.asarray(ensemble.one_hot(weighted=True) @ table.T) / sizes[None, :]
    rest = labels < 0
    labels[rest] = np.argmax(scores[rest], axis=1)
    # g(S) of eq. 3 from the contingency table: sum_{i, j in S_k} a_ij = sum_t w_t sum_l n_kl^2.
    table = ensemble.contingency(labels, k).astype(np.float64)
    part_of_column = np.repeat(np.arange(ensemble.n_partitions), np.diff(ensemble.offsets))
    within = (table ** 2) @ ensemble.weights[part_of_column]
    g = float((within / np.bincount(labels, minlength=k)).sum())
    extras = dict(part.extras)
    extras.update(sample=sample, objective_sample=part.objective)
    return ConsensusResult.from_labels(
        labels, objective=g, objective_name=part.objective_name, n_iter=part.n_iter, converged=True,
        method="addremadd", extras=extras)


def projection_sums(ensemble, *, max_bytes=None):
    """The combined-consensus matrix of Mirkin & Shestakov, sec. 2.2, in weighted form, float64 (n, n).

    ``P[i, j] = sum_t w_t [i, j share cluster k of partition t] / N_k^t``; with equal weights
    it is the paper's ``sum_u P_u`` divided by T. The sums are formed in 2^-50 fixed point, so
    the result does not depend on the order of the partitions. ``max_bytes`` bounds the n x n
    int64 product, its sparse form and the float64 result (a MemoryBudgetError names the bytes).
    """
    ensemble = as_ensemble(ensemble)
    n = ensemble.n_samples
    _check_budget(n, _PROJECTION_BYTES_PER_PAIR, max_bytes, "the dense projection sums P (Mirkin & Shestakov, sec. 2.2)",
                  "addremadd or a method that never forms the n x n matrix (e.g. kcc, hbgf, mcla)")
    B = ensemble.one_hot().tocsc()
    sizes = np.asarray(B.sum(axis=0)).ravel()
    part_of_column = np.repeat(np.arange(ensemble.n_partitions), np.diff(ensemble.offsets))
    scale = np.zeros_like(sizes)
    used = sizes > 0
    scale[used] = ensemble.weights[part_of_column[used]] / sizes[used]
    q = np.rint(scale * _P_SCALE).astype(np.int64)
    B = B.tocsr().astype(np.int64)
    # Identically labelled objects have identical rows: the integer sums of the distinct
    # objects, spread to all (the same integers, so the same values).
    groups = ensemble.distinct_rows()
    if groups is not None:
        first, inverse, _ = groups
        B = B[first]
    P = (B.multiply(q[None, :]).tocsr() @ B.T).toarray()
    P = P.astype(np.float64) / _P_SCALE
    if groups is not None:
        P = P[np.ix_(inverse, inverse)]
    return P


def combined_criterion(ensemble, labels):
    """f(S, p) of Mirkin & Shestakov's eq. 6, ``sum_k sum_{i,j in S_k} (p_ij - T/N)``, in the paper's scale.

    With partition weights w_t (summing to one) ``p_ij = T sum_t w_t [..] / N_k^t``. Computed
    from the contingency tables of ``labels`` against the partitions, without the n x n matrix:
    ``sum_{i,j in S_k} p_ij = T sum_t w_t sum_l n_kl^2 / N_l^t``.

    Examples
    --------
    >>> import numpy as np
    >>> round(combined_criterion(np.array([[0, 0], [0, 0], [1, 1]]), np.array([0, 0, 1])), 6)
    2.666667
    """
    ensemble = as_ensemble(ensemble)
    labels = np.asarray(labels, dtype=np.int64)
    k = int(labels.max()) + 1
    table = ensemble.contingency(labels, k).astype(np.float64)
    sizes = table.sum(axis=0)
    part_of_column = np.repeat(np.arange(ensemble.n_partitions), np.diff(ensemble.offsets))
    weight = np.zeros_like(sizes)
    used = sizes > 0
    weight[used] = ensemble.weights[part_of_column[used]] / sizes[used]
    within = float((table ** 2 @ weight).sum())
    cluster_sizes = np.bincount(labels, minlength=k).astype(np.float64)
    T = ensemble.n_partitions
    return T * (within - float((cluster_sizes ** 2).sum()) / labels.shape[0])


@weights_on_the_ensemble
@declare(chooses_n_clusters=True, handles_missing=False)
def ls_agglomerative(ensemble: EnsembleLike, n_clusters: int | None = None, *, max_bytes: int | None = None,
                     random_state: RandomStateLike = None) -> ConsensusResult:
    """Least-squares combined consensus by agglomeration (Mirkin & Shestakov, sec. 2.2, 3.2).

    Maximises ``f(S, p) = sum_k sum_{i,j in S_k} (p_ij - T/N)`` (Mirkin & Shestakov, eq. 6), where ``p_ij``
    sums, over the T partitions, ``1/N_k`` when objects i and j share cluster k (the entries of
    the projection matrices ``P_u = Z_u (Z_u^T Z_u)^{-1} Z_u^T``). Starting from singletons, the
    pair of clusters whose merge increases f most is merged while the increase is positive.
    The gain of merging clusters r and t is ``2 sum_{i in S_r, j in S_t} (p_ij - T/N)``; the
    gain of a merged cluster against any other is the sum of its parts' gains (Mirkin & Shestakov: "update by
    componentwise summation of rows and columns"), never recomputed from scratch. Ties go to
    the pair of clusters whose lowest members come first. Each cluster keeps its best partner
    among the clusters after it, so a merge costs one O(N) pass over those partners plus a
    fresh O(N) search only for the clusters whose partner was one of the two merged: about
    O(N^2) in all where a priority queue took O(N^2 log N) (the same merges: checked against a
    literal reference on tied gains). The projection sums are formed for the distinct label
    rows only and spread to their copies (integer sums, so the same values).

    With partition weights ``w_t`` (summing to one) the criterion is
    ``T sum_k sum_{i,j in S_k} (sum_t w_t [..] / N_k^t - 1/N)``, the paper's for equal weights.

    What it is good for: the partition the combined criterion itself chooses, at its own number
    of clusters. The term ``-T/N sum_k N_k^2`` of eq. 6 rewards clusters of equal size, and
    the merges are irrevocable, so a requested K, especially below the method's own, can be
    far from what methods fusing towards K find. Measured on the standardised breast-cancer
    data (569 objects, 100 k-means partitions with K_i in [2, 24], K = 2): the agglomeration
    stops at 3 clusters (125/253/191, the benign class split in halves, ARI 0.28 where EAC's
    3 clusters reach 0.64, yet f = 25,575 against EAC's 25,039: the criterion prefers the
    balanced split); the best of the three merges to 2 clusters gives 316/253, ARI 0.01,
    f = 18,096, while EAC's 2-cluster partition (ARI 0.70) has f = 22,912: at K = 2 the
    criterion prefers the right answer but the greedy path cannot reach it (and moving single
    objects does not either: 18,096 is a local optimum). For a requested K prefer
    :func:`addremadd` (ARI 0.63 there) or :func:`cclust.consensus_functions.kcc.kcc`.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Complete basic partitions (no missing labels: eq. 5 needs every object in every
        partition).
    n_clusters : int or None, default=None
        None stops at the first non-positive gain (the paper's rule). An int in
        ``[1, n_samples]`` cuts the agglomeration at that many clusters: earlier than the
        paper's stop if larger than its number of clusters, or continuing with the least
        negative merges if smaller.
    max_bytes : int, default=None
        Memory budget for the dense float64 gains and their working copy (``24 *
        n_samples**2`` bytes at the peak); defaults to ``cclust.validation.memory_budget()``.
    random_state : int, Generator or None
        Accepted for the common contract; the agglomeration is deterministic.

    Returns
    -------
    ConsensusResult
        ``objective`` is f(S, p) of eq. 6 (higher is better). ``extras``: ``merges``
        ((n_merges, 2) pairs of cluster names, the lowest member of each), ``merge_gains``,
        ``objective_trace`` (f after each merge, starting from the singletons).

    Raises
    ------
    ValidationError
        On missing labels or a bad argument.
    MemoryBudgetError
        If ``24 * n_samples**2`` bytes exceed the memory budget (the message gives the bytes).

    Examples
    --------
    >>> import numpy as np
    >>> labels = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 1]])
    >>> res = ls_agglomerative(labels)
    >>> res.labels.tolist()
    [0, 0, 1, 2, 2]
    """
    ensemble = as_ensemble(ensemble)
    if ensemble.has_missing:
        raise ValidationError(
            "ls_agglomerative needs complete partitions (Mirkin & Shestakov's eq. 5 puts every object in every "
            "partition) but the ensemble has missing labels (-1); drop or impute them, or use "
            "addremadd, which handles missing labels."
        )
    n = ensemble.n_samples
    n_clusters = check_int(n_clusters, "n_clusters", low=1, high=n, allow_none=True)
    check_random_state(random_state)
    # The projection sums' peak (the float64 gains and the kernel's working copy fit within it).
    _check_budget(n, _PROJECTION_BYTES_PER_PAIR, max_bytes, "ls_agglomerative's dense projection sums and gains",
                  "addremadd on a float32 co-association, or a method that never forms the n x n matrix "
                  "(e.g. kcc, hbgf, mcla)")

    G = projection_sums(ensemble, max_bytes=max_bytes)
    G -= 1.0 / n

    from cclust._ext import _addremadd

    names, merges, merge_gains = _addremadd.agglomerate(G, 0 if n_clusters is None else n_clusters)
    del G
    T = ensemble.n_partitions
    singletons = np.arange(n)
    f0 = combined_criterion(ensemble, singletons)
    trace = f0 + 2.0 * T * np.concatenate([[0.0], np.cumsum(merge_gains)])
    return ConsensusResult.from_labels(
        names,
        objective=combined_criterion(ensemble, np.unique(names, return_inverse=True)[1].reshape(-1)),
        objective_name="f(S, p), combined-consensus criterion of Mirkin & Shestakov, eq. 6 (higher is better)",
        method="ls-agglomerative",
        extras={"merges": merges, "merge_gains": merge_gains, "objective_trace": trace},
    )
