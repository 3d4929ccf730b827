"""WEAC and GP-MGLA: crowd agreement weights and multi-granularity link analysis (Huang, Lai & Wang 2015).

Every basic partition is weighted by how much the rest of the ensemble agrees with it, and the
consensus is formed from those weights at two granularities:

* **Normalized crowd agreement index** (Huang et al. 2015, sec. 3): ``CAI(pi_i) = (1 / (M - 1))
  sum_{j != i} NMI(pi_i, pi_j)``, ``NCAI(pi_i) = CAI(pi_i) / max_j CAI(pi_j)`` (:func:`ncai`), and
  the weight of pi_i is ``NCAI(pi_i) ** beta`` (beta = 2 in the authors' demo).
* **WEAC** (sec. 4.1): the weighted co-association ``S(x, y) = sum_i u_i [pi_i(x) = pi_i(y)] /
  sum_i u_i`` with ``u_i = NCAI(pi_i) ** beta`` (:func:`weighted_coassociation`), clustered by
  hierarchical agglomeration (average, complete or single linkage) and cut at K (:func:`weac`).
* **GP-MGLA** (sec. 4.2): the source-aware connected-triple similarity (SACT) of clusters
  (:func:`sact`) and the bipartite graph whose left side holds the objects and the clusters and
  whose right side holds the clusters (:func:`mgla_graph`), cut by the transfer cut
  (:func:`cclust.graph.tcut`; Li et al. 2012) as in the authors' code (:func:`gp_mgla`).

Choices settled by the authors' MATLAB code (Huang, Lai & Wang 2015, version 3.0), recorded here:

* NMI in the crowd agreement is ``I(a, b) / max(H(a), H(b))`` (their ``NMImax``); two partitions
  that each put every object in one cluster count as agreeing fully (NMI 1, which their code's
  ``eps`` arithmetic also gives). When no partition agrees with any other (every CAI is 0), the
  NCAI is undefined (0 / 0); cclust then weighs all partitions alike (NCAI = 1) instead of failing.
* SACT (their ``makeWeightsBtwCls_SACT``): with ``J`` the Jaccard similarity of clusters (1 on the
  diagonal), ``SACT(C_a, C_b) = sum_k u(C_k) min(J(C_k, C_a), J(C_k, C_b))`` over every cluster
  C_k linked to both (C_a and C_b themselves included, through ``J = 1`` on the diagonal), u(C_k)
  the weight of C_k's partition; the matrix is divided by its largest entry and its diagonal set
  to 1.
* The graph (their ``getBipartiteGraph``): object x is joined to each of its clusters in pi_i with
  weight ``alpha u_i`` (alpha = 0.5 in the demo); cluster C_a (as a left vertex) is joined to
  cluster C_b (right vertex) with weight ``SACT(C_a, C_b)``. The transfer cut's k-means runs on the
  object rows only (their ``Tcut_for_clustering_ensemble``), here with k-means++ seeding and 3 runs
  (theirs: one farthest-first run from the first object), so labels agree with theirs in
  distribution, not bit for bit.
* WEAC's linkage: the demo returns single, complete and average linkage; ``linkage="average"``
  is the default here (the variant whose NMI the demo prints).

Partition weights of an :class:`~cclust.ensemble.Ensemble` (``w_i``, summing to 1) multiply the
crowd weights: ``u_i = M w_i NCAI(pi_i) ** beta``; equal weights give the authors' equations.

Missing labels (-1) are refused: NMI, the co-association and the Jaccard overlaps of the paper are
defined on complete partitions.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cclust.base import declare
from cclust._linkage import check_linkage, linkage_on_groups
from cclust.consensus_functions._prepare import (EXTRAS_MAX_SAMPLES, check_eigenvectors, complete_ensemble,
                                                 complete_microclusters)
from cclust.graph import csr_of_blocks, tcut
from cclust.result import ConsensusResult
from cclust.validation import (
    check_float,
    check_int,
    check_n_jobs,
    check_random_state,
    memory_budget,
    renamed_threads,
    require_memory,
)
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

__all__ = ["ncai", "weighted_coassociation", "sact", "mgla_graph", "weac", "gp_mgla", "linkage_on_groups",
           "complete_ensemble", "complete_microclusters", "check_eigenvectors", "check_linkage",
           "DEFAULT_ALPHA", "DEFAULT_BETA", "EXTRAS_MAX_SAMPLES"]

#: The authors' demo: the influence exponent of the NCAI (``I_ncai = ncai .^ beta``).
DEFAULT_BETA = 2.0

#: The authors' demo: the weight of the object-cluster links of the MGLA graph.
DEFAULT_ALPHA = 0.5


_WEAC_ALTERNATIVE = "use gp-mgla, lwgp, hbgf or kcc, which never form an object x object matrix"


# -- checks -------------------------------------------------------------------------------------

def _check_beta(beta):
    return check_float(beta, "beta", low=0.0)


def _check_alpha(alpha):
    return check_float(alpha, "alpha", low=0.0, low_open=True)


# -- the paper's quantities ---------------------------------------------------------------------

def _ncai(E):
    """NCAI of every partition of the complete Ensemble E (NMI normalised by the larger entropy),
    from contingency tables of the stored label codes (no int32 copy of the labels)."""
    n, M = E.n_samples, E.n_partitions
    starts = E.offsets[:-1]
    codes = E.compact_labels()
    p = E.contingency(np.zeros(n, dtype=np.int32), 1)[0] / n        # the cluster sizes, over n
    plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    H = -np.add.reduceat(plogp, starts)
    nmi = np.ones((M, M))
    for i in range(M - 1):
        P = E.contingency(codes[:, i], int(E.n_clusters[i])).astype(np.float64) / n
        ratio = P / (p[starts[i]:E.offsets[i + 1], None] * p[None, :])
        terms = np.where(P > 0, P * np.log(np.where(P > 0, ratio, 1.0)), 0.0)
        mi = np.add.reduceat(terms.sum(axis=0), starts)
        denominator = np.maximum(H[i], H)
        row = np.where(denominator > 0, np.maximum(mi, 0.0) / np.where(denominator > 0, denominator, 1.0), 1.0)
        nmi[i, i + 1:] = row[i + 1:]
        nmi[i + 1:, i] = row[i + 1:]
    cai = (nmi.sum(axis=1) - 1.0) / (M - 1)
    top = cai.max()
    return cai / top if top > 0 else np.ones(M)


def _partition_weights(E, beta):
    """``u_i = M w_i NCAI(pi_i) ** beta`` and the NCAI."""
    values = _ncai(E)
    return E.n_partitions * E.weights * values ** beta, values


def ncai(ensemble):
    """Normalized crowd agreement index of every partition (Huang, Lai & Wang 2015, sec. 3).

    ``CAI(pi_i)`` is the mean NMI of pi_i with the other partitions (NMI normalised by the larger
    entropy, as in the authors' code), and ``NCAI = CAI / max CAI``, in [0, 1].

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Complete (no missing labels), at least two partitions.

    Returns
    -------
    ndarray of shape (n_partitions,)

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.crowd_agreement import ncai
    >>> ncai(np.array([[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 1]])).round(3).tolist()
    [1.0, 1.0, 0.0]
    """
    return _ncai(complete_ensemble(ensemble, "the crowd agreement index"))


def _require_weighted_block(E, m, max_bytes, what):
    """The budget check of :func:`_weighted_block` on ``m`` rows, asked before the partition
    weights (whose NCAI costs O(n r^2)) are computed."""
    require_memory(m * m * 8 + m * E.n_partitions * 24, f"the weighted co-association of {m} {what}",
                   _WEAC_ALTERNATIVE, max_bytes)


def _weighted_block(E, u, rows, max_bytes, what, n_threads=None):
    """The weighted co-association among ``rows``: ``sum_i u_i [same cluster] / sum_i u_i``, dense,
    in the compiled core: each row adds, partition by partition, ``u_i / sum u`` at the members of
    its cluster (cost: the sum over clusters of their size squared; no sparse product, whose m^2
    stored entries would take more than the dense result). Rows are independent, so the result
    is the same for any number of threads."""
    from cclust._ext import _crowd_agreement

    _require_weighted_block(E, rows.shape[0], max_bytes, what)
    total = u.sum()
    share = u / (total if total > 0 else 1.0)
    return _crowd_agreement.weighted_coassociation(E.compact_labels(), np.ascontiguousarray(rows, dtype=np.int64),
                                                   np.ascontiguousarray(E.n_clusters, dtype=np.int64),
                                                   np.ascontiguousarray(share, dtype=np.float64),
                                                   check_n_jobs(n_threads))


def weighted_coassociation(ensemble, beta=DEFAULT_BETA, *, max_bytes=None):
    """The NCAI-weighted co-association matrix of WEAC (Huang, Lai & Wang 2015, sec. 4.1).

    ``S(x, y) = sum_i u_i [pi_i(x) = pi_i(y)] / sum_i u_i``, ``u_i = M w_i NCAI(pi_i) ** beta``
    (1 on the diagonal).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    beta : float, default=2.0
        >= 0; the influence of the NCAI (0 gives the plain co-association).
    max_bytes : int, default=None
        Memory budget of the n x n matrix.

    Returns
    -------
    ndarray of shape (n_samples, n_samples)

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.crowd_agreement import weighted_coassociation
    >>> weighted_coassociation(np.array([[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 1]]))[0].round(3).tolist()
    [1.0, 1.0, 0.0, 0.0]
    """
    beta = _check_beta(beta)
    E = complete_ensemble(ensemble, "the weighted co-association")
    _require_weighted_block(E, E.n_samples, max_bytes, "objects")
    u, _ = _partition_weights(E, beta)
    A = _weighted_block(E, u, np.arange(E.n_samples), max_bytes, "objects")
    np.fill_diagonal(A, 1.0)
    return A


def _jaccard(E, entries=None):
    """Sparse Jaccard similarity of every pair of clusters (clusters of one partition never overlap,
    so their entries are 0), with 1 on the diagonal, sorted, in E's cluster numbering. The overlap
    counts ``B^T B`` of the one-hot B come from one compiled pass over the label codes
    (:func:`cclust.graph._meta.overlap_table`, ``entries``: their count or a bound of it),
    without B; they are divided in their own array, the divisors by blocks of entries."""
    from cclust.graph._meta import overlap_table

    O = overlap_table(E, np.arange(int(E.offsets[-1])), capacity=entries)
    sizes = O.diagonal()
    row_of = np.repeat(np.arange(O.shape[0], dtype=O.indices.dtype), np.diff(O.indptr))
    for start in range(0, O.nnz, _BLOCK):
        stop = min(O.nnz, start + _BLOCK)
        overlap = O.data[start:stop]
        overlap /= sizes[row_of[start:stop]] + sizes[O.indices[start:stop]] - overlap
    return O


_GP_MGLA_ADVICE = "use fewer or coarser basic partitions, or lwgp, hbgf or kcc"

#: Entries (of the cluster overlaps, of SACT's rows) a block pass handles at once.
_BLOCK = 2**18

#: Bytes the crowd-agreement graph methods hold, fitted to the peaks of GP-MGLA (resident set):
#: figure / peak 0.98 to 1.01 on 10^3 x 40 and 2 * 10^3 x 70 partitions of 30 to 60 clusters
#: (1,860 and 3,214 clusters), 2 * 10^3 and 2 * 10^4 x 60 noisy refinements (about 1,450),
#: 2 * 10^4, 4 * 10^4 and 10^5 x 100 noisy refinements with K_i in [8, 50] (about 2,550 clusters,
#: 135 to 140 MiB) and 10^6 x 100 (2,256 clusters, 369 MiB). Nothing of n x sum K_i is formed:
#: the cluster overlaps and the objects' rows are read from the label codes.
#: Held throughout: the canonical copy of the codes (when the input was not canonical) and
#: :data:`_OBJECT_BYTES` an object (the groups of identical label rows, ``first``, ``inverse`` and
#: ``counts``, and the rows' counts the transfer cut reads). While SACT is summed: the dense SACT
#: (8 a pair of clusters) and the Jaccard CSR (12 an overlapping pair). While the graph is made:
#: the dense SACT, the CSR of its non-zero entries (12 a link) and a block of their coordinates
#: (24 an entry), on the dense route the graph's CSR besides (12 an entry), and the codes of the
#: distinct rows when some objects share one. Then the transfer cut of that graph
#: (:func:`cclust.graph.transfer_cut_bytes`: the CSR on the dense route; on the Lanczos route the
#: objects' rows read from the codes, with SACT's CSR and the embedding's per-object copy).
_SACT_PAIR_BYTES = 8
_CSR_ENTRY_BYTES = 12
_OBJECT_BYTES = 32


def _held_bytes(E0, E):
    """What GP-MGLA holds from its start: the canonical codes, if copied, and the groups."""
    return (0 if E is E0 else E.compact_labels().nbytes) + _OBJECT_BYTES * E.n_samples


def _overlap_bound(E):
    """The most entries the Jaccard CSR can have: every pair of clusters of two different
    partitions and the diagonal (clusters of one partition never overlap)."""
    sizes = np.asarray(E.n_clusters, dtype=np.int64)
    n_c = int(sizes.sum())
    return n_c * n_c - int((sizes * sizes).sum()) + n_c


def _require_sact(E, max_bytes, held=0):
    """The budget check of :func:`_sact`, asked before the partition weights are computed: the
    dense matrix first, then with the Jaccard CSR. Where the CSR of every pair of clusters that
    can overlap fits beside (:func:`_overlap_bound`), nothing is counted: that bound is the
    capacity of the overlap table (its cells past the entries are never written, so never made
    resident) and the figure with the CSR's exact entries is asked once the table knows them
    (granted, since the bound fitted). Otherwise one compiled pass over the label codes counts
    the pairs of overlapping clusters first (:func:`cclust.graph._meta.cluster_overlaps`,
    O(n r^2) as the NCAI) and the figure is asked with them. ``held``: bytes the caller holds
    beside. Returns ``(capacity, ask)`` for :func:`_sact`: the count or the bound, and the
    figure still to ask of the entries (None when it was asked)."""
    from cclust.graph._meta import cluster_overlaps

    n_c = int(E.offsets[-1])
    what = f"the SACT similarity of {n_c} clusters"
    need = held + _SACT_PAIR_BYTES * n_c * n_c
    budget = require_memory(need, what, _GP_MGLA_ADVICE, max_bytes)

    def ask(overlaps):
        require_memory(need + _CSR_ENTRY_BYTES * overlaps, f"{what} ({overlaps} pairs of overlapping clusters)",
                       _GP_MGLA_ADVICE, max_bytes)

    bound = _overlap_bound(E)
    if need + _CSR_ENTRY_BYTES * bound <= budget:
        return bound, ask
    overlaps = int(cluster_overlaps(E)[0])
    ask(overlaps)
    return overlaps, None


def _require_graph(E, m, S, n_clusters, max_bytes, dense=True, held=0):
    """The budget check of the MGLA graph of ``m`` object rows made from the SACT matrix ``S``
    (and, with ``n_clusters``, of its transfer cut), asked once SACT is known. ``dense``: the
    graph is a CSR (the transfer cut's dense route, :func:`_graph_route`), else the label codes
    with SACT's rows below (:func:`_label_graph`). ``held``: bytes the caller holds beside."""
    from cclust.graph._tcut import transfer_cut_bytes

    n_c, labels = int(E.offsets[-1]), m * E.n_partitions
    code_bytes = E.compact_labels().dtype.itemsize
    links = int(np.count_nonzero(S))
    block = min(n_c, max(1, _BLOCK // max(1, n_c))) * n_c * links / max(1, n_c * n_c)
    rows = code_bytes * labels if m < E.n_samples else 0        # the codes of the distinct rows
    need = _SACT_PAIR_BYTES * n_c * n_c + _CSR_ENTRY_BYTES * links + int(24 * block) + rows
    if dense:
        need += _CSR_ENTRY_BYTES * (labels + links)
    what = f"the MGLA graph of {m} object rows and {n_c} clusters ({links} SACT links)"
    if n_clusters is not None:
        if dense:
            cut = transfer_cut_bytes(E.n_samples, m + n_c, labels + links, n_c, n_clusters, dense=True)
        else:
            k = min(n_clusters, n_c)
            cut = (transfer_cut_bytes(E.n_samples, m, labels, n_c, n_clusters, code_bytes, dense=False)
                   + _CSR_ENTRY_BYTES * links + 8 * k * (n_c + (E.n_samples if m == E.n_samples else 0)))
        need = max(need, cut)
        what += " and its transfer cut"
    require_memory(held + need, what, _GP_MGLA_ADVICE, max_bytes)


def _sact(E, u, entries=None, n_threads=None):
    """SACT of every pair of clusters, dense (sum K_i)^2, in E's cluster numbering; ``entries``:
    what :func:`_require_sact` returned, or None.

    The sums ``sum_k u(C_k) min(J(C_k, C_a), J(C_k, C_b))`` run in the compiled core, one row a
    per task over the clusters k linked to C_a in increasing order: the terms of every entry are
    added in the order of a loop over k, so the matrix is the same for any number of threads.
    """
    from cclust._ext import _crowd_agreement

    capacity, ask = (None, None) if entries is None else entries
    J = _jaccard(E, capacity)
    if ask is not None:
        ask(J.nnz)
    cluster_weight = np.ascontiguousarray(np.repeat(u, E.n_clusters), dtype=np.float64)
    total = _crowd_agreement.sact(J.indptr.astype(np.int64), J.indices.astype(np.int32, copy=False),
                                  np.ascontiguousarray(J.data, dtype=np.float64), cluster_weight,
                                  check_n_jobs(n_threads))
    top = total.max()
    if top > 0:
        total /= top
    np.fill_diagonal(total, 1.0)
    return total


def sact(ensemble, beta=DEFAULT_BETA, *, max_bytes=None):
    """Source-aware connected-triple similarity of every pair of clusters (Huang, Lai & Wang 2015, sec. 4.2).

    ``SACT(C_a, C_b) = sum_k u(C_k) min(J(C_k, C_a), J(C_k, C_b)) / max``, J the Jaccard
    similarity of clusters (1 on the diagonal), u(C_k) the crowd weight of C_k's partition; 1 on
    the diagonal (see the module docstring for the authors' code's reading).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    beta : float, default=2.0
    max_bytes : int, default=None
        Memory budget of the (sum K_i) x (sum K_i) matrix.

    Returns
    -------
    ndarray of shape (sum K_i, sum K_i)
        Cluster l of partition i at ``ensemble.offsets[i] + l`` (the numbering of
        :class:`cclust.Ensemble`).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.crowd_agreement import sact
    >>> sact(np.array([[0, 0], [0, 0], [1, 1], [1, 2]])).round(3)[0].tolist()
    [1.0, 0.0, 1.0, 0.0, 0.0]
    """
    beta = _check_beta(beta)
    E = complete_ensemble(ensemble, "SACT")
    entries = _require_sact(E, max_bytes)
    u, _ = _partition_weights(E, beta)
    return _sact(E, u, entries)


def _cluster_rows(S):
    """The non-zero entries of the dense SACT matrix S as a CSR, read by blocks of rows (what
    ``sp.csr_matrix(S)`` gives, without the coordinate arrays of every pair of clusters)."""
    n_c = S.shape[0]
    return csr_of_blocks(lambda a, b: S[a:b], n_c, n_c, block_entries=_BLOCK)


def _graph(E, u, S, alpha, rows=None):
    """The MGLA graph as a CSR: object rows (``rows`` of them, all by default), then one row per
    cluster. Object x's row holds ``alpha u_i`` in column ``offsets[i] + code[x, i]`` for every
    partition i (complete partitions: r entries), written straight from the label codes into
    the arrays of the one CSR, followed by the non-zero entries of S row by row. An object's
    entries are written last partition first, the order in which SciPy's product of the one-hot
    with the diagonal of the weights left them, so that the transfer cut adds every row's terms
    in the same order as when the graph was formed through that product: the same labels."""
    codes = E.compact_labels() if rows is None else E.compact_labels()[rows]
    m, r = codes.shape
    n_c = S.shape[0]
    per_row = np.count_nonzero(S, axis=1)
    labels = m * r
    nnz = labels + int(per_row.sum())
    index = np.int32 if max(nnz, m + n_c) < np.iinfo(np.int32).max else np.int64
    data = np.empty(nnz)
    indices = np.empty(nnz, dtype=index)
    indptr = np.empty(m + n_c + 1, dtype=index)
    indptr[:m + 1] = np.arange(0, labels + 1, r, dtype=index)
    np.cumsum(per_row, out=indptr[m + 1:])
    indptr[m + 1:] += labels
    starts = E.offsets[:-1].astype(index)
    values = alpha * u
    block = max(1, _BLOCK // max(1, r))
    for start in range(0, m, block):
        stop = min(m, start + block)
        np.add(codes[start:stop], starts, out=indices[start * r:stop * r].reshape(stop - start, r)[:, ::-1],
               casting="unsafe")
        data[start * r:stop * r].reshape(stop - start, r)[:] = values[::-1]
    del codes
    cluster_rows = _cluster_rows(S)
    data[labels:] = cluster_rows.data
    indices[labels:] = cluster_rows.indices
    return sp.csr_matrix((data, indices, indptr), shape=(m + n_c, n_c))


def _label_graph(E, u, S, alpha, rows, n_threads):
    """The MGLA graph of the objects ``rows`` (None: all, their codes read in place) for the
    Lanczos route of :func:`cclust.graph.tcut`: the objects' rows read from the label codes
    (:class:`cclust.graph._tcut.LabelGraph`, column values ``alpha u_i``) over the non-zero
    entries of S as a CSR; no objects x clusters matrix is formed."""
    from cclust.graph._tcut import LabelGraph

    codes = E.compact_labels() if rows is None else E.compact_labels()[rows]
    return LabelGraph(codes, E.offsets, alpha * np.repeat(u, E.n_clusters), n_threads, extra_rows=_cluster_rows(S))


def _graph_route(E, m, S):
    """Whether :func:`cclust.graph.tcut` forms the column graph of the MGLA graph of ``m`` object
    rows and SACT matrix S (its dense route, which reads the CSR), as its own rule decides from
    the rows' entry counts: r for an object row, the non-zero entries of S for a cluster row."""
    from cclust.graph._tcut import forms_column_graph

    per_row = np.count_nonzero(S, axis=1).astype(np.float64)
    return forms_column_graph(S.shape[0], m * float(E.n_partitions) ** 2 + per_row @ per_row)


def mgla_graph(ensemble, alpha=DEFAULT_ALPHA, beta=DEFAULT_BETA, *, max_bytes=None):
    """The multi-granularity bipartite graph of GP-MGLA (Huang, Lai & Wang 2015, sec. 4.2).

    Rows: the n objects, then the sum K_i clusters; columns: the clusters. Object x links to its
    cluster in pi_i with weight ``alpha u_i``; cluster C_a links to C_b with ``SACT(C_a, C_b)``.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    alpha : float, default=0.5
        > 0; weight of the object-cluster links.
    beta : float, default=2.0
    max_bytes : int, default=None
        Memory budget of the SACT matrix.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples + sum K_i, sum K_i)

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.crowd_agreement import mgla_graph
    >>> mgla_graph(np.array([[0, 0], [0, 0], [1, 1], [1, 2]])).shape
    (9, 5)
    """
    alpha, beta = _check_alpha(alpha), _check_beta(beta)
    E = complete_ensemble(ensemble, "the MGLA graph")
    entries = _require_sact(E, max_bytes)
    u, _ = _partition_weights(E, beta)
    S = _sact(E, u, entries)
    _require_graph(E, E.n_samples, S, None, max_bytes)
    return _graph(E, u, S, alpha)


# -- agglomeration over groups of identical objects ---------------------------------------------

def _in_extras(n, max_bytes):
    return n <= EXTRAS_MAX_SAMPLES and 2 * n * n * 8 <= memory_budget(max_bytes)


def _to_input_columns(values, columns):
    out = np.empty_like(values)
    out[columns] = values
    return out


# -- WEAC ---------------------------------------------------------------------------------------

@renamed_threads
@declare(handles_missing=False)
def weac(ensemble: EnsembleLike, n_clusters: int, *, linkage: str = "average", beta: float = DEFAULT_BETA,
         max_bytes: int | None = None, random_state: RandomStateLike = None,
         n_jobs: int | None = None) -> ConsensusResult:
    """Weighted evidence accumulation clustering, WEAC (Huang, Lai & Wang 2015, sec. 4.1).

    Hierarchical agglomeration of the NCAI-weighted co-association (:func:`weighted_coassociation`),
    the dendrogram cut at K clusters (the authors' code: MATLAB ``linkage`` on ``1 - S`` and
    ``cluster(..., 'maxclust', K)``).

    **Microclusters (exact).** Objects with identical label rows have co-association 1 with each
    other and below 1 with every other object (as long as their partitions' weights are
    positive; a weight-0 partition ties them at 1, which merges them at height 0 just the same),
    so every linkage merges them first. cclust agglomerates the m distinct label rows
    (:func:`cclust.graph.identical_label_rows`), average linkage weighted by the groups' sizes:
    O(m^2) memory and time instead of O(n^2), the same dendrogram above height 0. The
    ensemble is put in a canonical order first and distances rounded to 12 decimals, so the
    labels do not depend on cluster names or partition order; merges tied exactly may be taken
    in another order than MATLAB's.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Complete partitions (missing labels are refused), at least two.
    n_clusters : int
        K, in [2, number of distinct label rows].
    linkage : {"average", "complete", "single"}, default="average"
    beta : float, default=2.0
        >= 0; weights are ``NCAI ** beta`` (2 in the authors' demo).
    max_bytes : int, default=None
        Memory budget of the m x m matrix.
    random_state : ignored
        WEAC is deterministic.
    n_jobs : int, default=None
        Threads of the weighted co-association (None: every core,
        :func:`cclust.validation.default_threads`); the labels do not depend on it.

    Returns
    -------
    ConsensusResult
        ``objective``: the linkage distance ``1 - S`` of the first merge above the cut.
        ``extras``: ``ncai`` and ``weights`` (``u_i``, per input partition), ``beta``, ``linkage``,
        ``n_microclusters``, and ``coassociation`` (the n x n weighted co-association) when
        n <= 1,000.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.crowd_agreement import weac
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> weac(labels, 2).labels.tolist()
    [0, 0, 1, 1, 1]
    """
    linkage = check_linkage(linkage)
    beta = _check_beta(beta)
    n_jobs = check_n_jobs(n_jobs)
    _, E, columns, n_clusters, (first, inverse, counts) = complete_microclusters(ensemble, n_clusters, "weac")
    _require_weighted_block(E, first.shape[0], max_bytes, "distinct label rows")    # before the O(n r^2) NCAI
    u, values = _partition_weights(E, beta)
    A = _weighted_block(E, u, first, max_bytes, "distinct label rows", n_jobs)
    n = E.n_samples
    extras = {"ncai": _to_input_columns(values, columns), "weights": _to_input_columns(u, columns),
              "beta": beta, "linkage": linkage, "n_microclusters": int(first.shape[0])}
    if _in_extras(n, max_bytes):
        full = A[np.ix_(inverse, inverse)]
        np.fill_diagonal(full, 1.0)
        extras["coassociation"] = full
    np.subtract(1.0, A, out=A)
    groups, height = linkage_on_groups(A, counts, n_clusters, linkage)
    return ConsensusResult.from_labels(
        groups[inverse], objective=height,
        objective_name=f"{linkage}-linkage distance 1 - weighted co-association of the first merge above the cut",
        method="weac", extras=extras)


# -- GP-MGLA ------------------------------------------------------------------------------------

@renamed_threads
@declare(handles_missing=False, object_order="distribution")
def gp_mgla(ensemble: EnsembleLike, n_clusters: int, *, alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA,
            n_init: int = 3, max_iter: int = 100, max_bytes: int | None = None, random_state: RandomStateLike = None,
            n_jobs: int | None = None) -> ConsensusResult:
    """Graph partitioning with multi-granularity link analysis, GP-MGLA (Huang, Lai & Wang 2015, sec. 4.2).

    The bipartite graph of :func:`mgla_graph` (objects and clusters on one side, clusters on the
    other; links weighted by the crowd agreement and SACT) is cut into K parts by the transfer cut
    (:func:`cclust.graph.tcut`, Li et al. 2012): the normalised-cut eigenvectors of the cluster
    side, transferred to the objects, row-normalised, then k-means on the object rows only (the
    cluster rows shape the eigenvectors but are not clustered), as in the authors' code. Objects
    with identical label rows are one row counted by their number (the same cut). Memory is
    linear in n plus the (sum K_i)^2 SACT matrix: the cluster overlaps and the objects' rows of
    the graph are read from the stored label codes, no object x object or objects x clusters
    matrix is formed where the transfer cut takes its Lanczos route (beyond 2000 clusters, or
    where forming the column graph would cost more; the dense route reads a CSR of the graph).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Complete partitions (missing labels are refused), at least two.
    n_clusters : int
        K, in [2, min(number of distinct label rows, total number of clusters)].
    alpha : float, default=0.5
        > 0; weight of the object-cluster links (the authors' demo).
    beta : float, default=2.0
        >= 0; partition weights ``NCAI ** beta``.
    n_init, max_iter : int, default=3, 100
        The transfer cut's k-means runs (k-means++) and Lloyd iterations.
    max_bytes : int, default=None
        Memory budget: the SACT matrix (8 bytes a pair of clusters) with the Jaccard overlaps
        (12 bytes an overlapping pair; counted first unless 12 bytes for every pair of clusters
        of two partitions fit) is asked for before the NCAI, the graph and its transfer
        cut once SACT is known: on the Lanczos route about 12 bytes a non-zero SACT entry and,
        an object, its canonical label codes (r bytes for uint8 codes), 32 bytes of groups, the
        transfer cut's 64 and 16 K for the embedding and its copy.
    random_state : int, Generator or None
        Seeds k-means.
    n_jobs : int, default=None
        Threads of the SACT sums and the k-means passes; the labels do not depend on it.

    Returns
    -------
    ConsensusResult
        ``objective``: the k-means within-cluster sum of squares in the embedding (lower is
        better). ``extras``: ``ncai``, ``weights``, ``alpha``, ``beta``, ``n_microclusters``,
        ``eigenvalues``, and for n <= 1,000 ``sact`` ((sum K_i)^2, numbered as
        :class:`cclust.Ensemble` numbers the input's clusters) and ``graph`` (:func:`mgla_graph`).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.crowd_agreement import gp_mgla
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> gp_mgla(labels, 2, random_state=0).labels.tolist() in ([0, 0, 1, 1, 1], [1, 1, 0, 0, 0])
    True
    """
    alpha, beta = _check_alpha(alpha), _check_beta(beta)
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_jobs = check_n_jobs(n_jobs)
    E0, E, columns, n_clusters, (first, inverse, counts) = complete_microclusters(ensemble, n_clusters, "gp-mgla")
    n_c = check_eigenvectors(n_clusters, E, "")
    rng = check_random_state(random_state)
    m = first.shape[0]
    held = _held_bytes(E0, E)
    entries = _require_sact(E, max_bytes, held)             # before the O(n r^2) NCAI
    u, values = _partition_weights(E, beta)
    S = _sact(E, u, entries, n_jobs)
    dense = _graph_route(E, m, S)
    _require_graph(E, m, S, n_clusters, max_bytes, dense, held)
    some = first if m < E.n_samples else None               # every object: the codes read in place
    B = _graph(E, u, S, alpha, rows=some) if dense else _label_graph(E, u, S, alpha, some, n_jobs)
    del S
    rows = (first, inverse, np.concatenate([counts, np.ones(n_c, dtype=np.int64)]))
    result = tcut(B, n_clusters, groups=rows, random_state=rng, n_init=n_init, max_iter=max_iter,
                  n_jobs=n_jobs)
    del B
    extras = {"ncai": _to_input_columns(values, columns), "weights": _to_input_columns(u, columns),
              "alpha": alpha, "beta": beta, "n_microclusters": int(first.shape[0]),
              "eigenvalues": result.eigenvalues}
    if _in_extras(E.n_samples, max_bytes):
        entries = _require_sact(E0, max_bytes)
        u0, _ = _partition_weights(E0, beta)
        extras["sact"] = _sact(E0, u0, entries)
        _require_graph(E0, E0.n_samples, extras["sact"], None, max_bytes)
        extras["graph"] = _graph(E0, u0, extras["sact"], alpha)
    return ConsensusResult.from_labels(
        result.labels, objective=float(result.objective),
        objective_name="within-cluster sum of squares of the transfer-cut embedding (lower is better)",
        method="gp-mgla", extras=extras)
