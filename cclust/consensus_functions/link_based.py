"""Link-based cluster ensembles, LCE (Iam-On, Boongoen, Garrett & Price 2011; Iam-On & Garrett 2010).

The co-association says only whether two objects share a cluster; LCE also credits two
objects in *different* clusters of a partition by how closely those clusters are linked through
the rest of the ensemble:

* **Cluster links** (:func:`cluster_similarity`), in the graph whose vertices are the clusters
  and whose edges weigh the Jaccard overlap ``J(C, C') = |C & C'| / |C | C'|``:

  - ``"cts"`` -- weighted connected triples (Iam-On et al. 2011, sec. 3.2):
    ``WCT(C_a, C_b) = sum_k min(J(C_a, C_k), J(C_b, C_k))`` for two clusters of one partition,
    divided by its largest value, times the decay factor DC;
  - ``"srs"`` -- SimRank over the bipartite object-cluster graph (Iam-On & Garrett 2010): starting
    from the identity, ``S <- DC / M^2 B C B^T`` and ``C(C_a, C_b) <- DC mean_{x in C_a, y in C_b}
    S(x, y)`` (both updated from the previous step, 1 on the diagonals), ``R - 1`` times;
  - ``"asrs"`` -- approximate SimRank (Iam-On & Garrett 2010): ``CS(C_a, C_b) = sum_k J(C_a, C_k)
    J(C_b, C_k) / (N_a N_b)``, N the number of clusters a cluster overlaps, divided by its largest
    off-diagonal value; ``1`` where it is 1, ``DC CS`` elsewhere.

* **Refined cluster-association matrix** RA (:func:`refined_association`; Iam-On et al. 2011,
  sec. 3.3): ``RA(x, C) = 1`` if x belongs to C, else ``sim(C*, C)``, C* the cluster of x in C's
  partition.
* **Refined object similarity** (:func:`object_similarity`): for ``"cts"`` ``S(x, y) = (1 / M)
  sum_i RA(x, pi_i(y))``; for ``"srs"`` and ``"asrs"`` ``S(x, y) = (1 / M^2) sum_{i, j}
  sim(pi_i(x), pi_j(y))`` (LinkCluE), 1 on the diagonal.
* **Consensus** (:func:`lce`): the spectral partition (SPEC) of the bipartite graph of objects and
  clusters weighted by RA (the paper's consensus function, sec. 3.4), or hierarchical
  agglomeration of ``1 - S`` (single, complete or average linkage, the paper's and LinkCluE's
  alternatives).

Choices settled by the authors' code (LinkCluE, Iam-On & Garrett 2010: the MATLAB ``relabelCl``,
``weightCl``, ``cts``, ``srs``, ``asrs``, ``stod``, ``clHC``; read line by line and run side by
side under GNU Octave by ``benchmarks/modern_lce.py --bench``) and recorded here:

* Cluster numbering: ``relabelCl`` renumbers each partition's distinct labels in sorted order
  after the previous partitions' clusters, as ``Ensemble.offsets`` does; nothing depends on the
  label values.
* Cluster weights (``weightCl``): the Jaccard overlap ``|C & C'| / |C | C'|`` of every pair of
  clusters of the whole ensemble, 0 on the diagonal: the graph has no self-loops, so a cluster
  is not its own neighbour in the triples. WCT is computed only for pairs of one partition (the
  only pairs RA reads), summing the minimum over all clusters k (k = a and k = b add 0); its
  normaliser is the largest of those over all partitions (one global maximum, not one per
  partition).
* SRS runs ``R - 1`` updates (LinkCluE counts the identity as iteration one); both updates read
  the previous step; the cluster update averages over all pairs of members, an object paired
  with itself counting 1. R = 5, LinkCluE's default and the value of its examples.
* ASRS: ``N`` counts the clusters with a positive Jaccard overlap; the normaliser is the largest
  value over all pairs of distinct clusters (of any partitions); only entries exactly equal to
  1 (the diagonal and the maximal pair) escape the decay factor.
* DC = 0.9, the paper's experiments (sec. 5); LinkCluE's own default is 0.8 for all three
  similarities. Pass ``dc=0.8`` to match LinkCluE's defaults.
* Distance for the linkages: ``stod`` = ``1 - S`` on the pairs of distinct objects (the
  diagonal is never read). LinkCluE's consensus (``clHC``) is single, complete and average
  linkage (MATLAB's ``linkage``; average = UPGMA, the size-weighted mean of the object
  distances, as here); the paper's spectral SPEC (sec. 3.4) is not in LinkCluE and is ours.
* The cut: LinkCluE calls ``cluster(Z, 'maxclust', K)``, which undoes every merge at or above
  the height of the (n - K + 1)-th merge, so a tie at that height gives more than K clusters.
  Ours undoes exactly the K - 1 highest merges (ties broken by merge order) and always returns
  K clusters, as the paper's problem statement asks. In the side-by-side runs (pendigits,
  M = 10, k = ceil(sqrt(n)), K = 10) no tie fell at the cut, and the labels agreed (ARI 1) for
  every similarity and linkage run; the merge heights agreed with the authors' to 1e-15.
* Rounding: the linkages read ``1 - S`` rounded to 12 decimals, so two merge heights that differ
  only by floating-point noise tie and are broken by order, where LinkCluE's loops compare the
  raw sums; this can only matter when two candidate merges are equal in exact arithmetic.
* SPEC: the normalised-cut eigenvectors of the bipartite graph ``[[0, RA], [RA^T, 0]]``, computed
  on the cluster side by the transfer cut (:func:`cclust.graph.tcut`; Li et al. 2012), which gives
  the same eigenvectors as Fern & Brodley's (2004) SVD of the normalised RA; k-means (k-means++,
  3 runs) on the row-normalised object embedding.

Partition weights of an :class:`~cclust.ensemble.Ensemble` (``w_i``, summing to 1) replace the
``1 / M`` of the similarities (``1 / M^2`` becomes ``w_i w_j``) and weigh the RA graph's edges by
``M w_i``; equal weights give the equations above. Missing labels are refused (the Jaccard
overlaps and RA assume complete partitions).

**Microclusters.** Objects with identical label rows have identical RA rows and the same
similarity to every other object, so every route works on the m distinct label rows
(:func:`cclust.graph.identical_label_rows`): the RA graph has one row per group counted by its
size (the same cut), and the linkages run on the m x m similarity of the groups. With ``"cts"``
this is exact (two identical rows have similarity 1, any other pair below 1 when DC < 1, so
every linkage merges them first). With ``"srs"`` and ``"asrs"`` the similarity of two objects of
one group is the group's own entry (below 1), which is not always their largest: there the
groups are kept together, an approximation of the object-level dendrogram (documented, not the
authors' behaviour).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cclust.base import declare
from cclust._linkage import check_linkage, linkage_on_groups
from cclust.consensus_functions._prepare import (EXTRAS_MAX_SAMPLES, check_eigenvectors, complete_ensemble,
                                                 complete_microclusters)
from cclust.errors import ValidationError
from cclust.graph import tcut
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

__all__ = ["cluster_similarity", "wct", "refined_association", "object_similarity", "lce", "DEFAULT_DC",
           "DEFAULT_N_ITER", "SIMILARITIES", "CONSENSUS"]

#: The decay factor of the paper's experiments (Iam-On et al. 2011, sec. 5).
DEFAULT_DC = 0.9

#: R, the SimRank iterations of LinkCluE's examples (Iam-On & Garrett 2010).
DEFAULT_N_ITER = 5

SIMILARITIES = ("cts", "srs", "asrs")
CONSENSUS = ("spec", "average", "complete", "single")

_ALTERNATIVE = "use lce(..., consensus='spec'), which never forms an object x object matrix, or hbgf or kcc"


# -- checks -------------------------------------------------------------------------------------

def _check_common(similarity, dc, n_iter):
    if similarity not in SIMILARITIES:
        raise ValidationError(f"similarity must be one of {list(SIMILARITIES)}, got {similarity!r}.")
    dc = check_float(dc, "dc", low=0.0, high=1.0)
    n_iter = check_int(n_iter, "n_iter", low=2)
    return similarity, dc, n_iter


_MISSING_ALTERNATIVE = "kcc, hbgf or lwgp, which handle missing labels"


def _ensemble(ensemble):
    return complete_ensemble(ensemble, "lce", alternative=_MISSING_ALTERNATIVE)


# -- cluster links ------------------------------------------------------------------------------

def _jaccard(E, max_bytes):
    """Dense Jaccard overlaps of all pairs of clusters, 0 on the diagonal (LinkCluE's ``weightCl``)."""
    n_c = int(E.offsets[-1])
    require_memory(4 * n_c * n_c * 8, f"the link similarity of {n_c} clusters",
                   "use fewer or coarser basic partitions, or hbgf or kcc", max_bytes)
    B = E.one_hot()
    O = (B.T @ B).toarray()
    sizes = np.diag(O).copy()
    J = O / (sizes[:, None] + sizes[None, :] - O)
    np.fill_diagonal(J, 0.0)
    return J


def _wct(E, J):
    """Normalised WCT of the pairs of clusters of each partition (0 across partitions, 1 on the diagonal)."""
    n_c = J.shape[0]
    W = np.zeros((n_c, n_c))
    for i in range(E.n_partitions):
        lo, hi = int(E.offsets[i]), int(E.offsets[i + 1])
        rows = J[lo:hi]
        for a in range(hi - lo):
            W[lo + a, lo:hi] = np.minimum(rows[a][None, :], rows).sum(axis=1)
    block = W.copy()
    np.fill_diagonal(block, 0.0)
    top = block.max()
    if top > 0:
        W /= top
    np.fill_diagonal(W, 1.0)
    return W


def _partition_of(E):
    return np.repeat(np.arange(E.n_partitions), E.n_clusters)


def _srs(E, dc, n_iter, rows, counts, max_bytes):
    """SimRank on groups of identical objects: the group similarity (m x m, pairs of distinct
    objects, including two of one group) and the cluster similarity after ``n_iter - 1`` updates."""
    m = rows.shape[0]
    n_c = int(E.offsets[-1])
    require_memory(3 * m * m * 8 + 3 * n_c * n_c * 8, f"the SimRank similarities of {m} distinct label rows",
                   _ALTERNATIVE.replace("'spec'", "'spec', similarity='cts'"), max_bytes)
    G = E.one_hot()[rows]
    Gw = G @ sp.diags(E.weights[_partition_of(E)])
    sizes = np.asarray((G.T @ sp.diags(counts.astype(np.float64)) @ G).diagonal())
    S = np.zeros((m, m))             # the identity on objects: 0 between distinct objects
    C = np.eye(n_c)
    for _ in range(n_iter - 1):
        S_next = dc * (Gw @ (Gw @ C).T).T if m else S
        own = np.diag(S).copy()
        inner = counts[:, None] * S * counts[None, :]
        inner[np.diag_indices(m)] += counts * (1.0 - own)
        total = (G.T @ (G.T @ inner).T).T
        C = dc * total / np.outer(sizes, sizes)
        np.fill_diagonal(C, 1.0)
        S = np.asarray(S_next)
    return S, C


def _asrs(E, dc, J):
    """ASRS of every pair of clusters, decayed: 1 where the normalised value is 1, else DC times it."""
    neighbours = (J > 0).sum(axis=1).astype(np.float64)
    product = np.outer(neighbours, neighbours)
    CS = np.where(product > 0, (J @ J.T) / np.where(product > 0, product, 1.0), 0.0)
    np.fill_diagonal(CS, 0.0)
    top = CS.max()
    if top > 0:
        CS /= top
    np.fill_diagonal(CS, 1.0)
    return np.where(CS == 1.0, 1.0, dc * CS)


def _cluster_links(E, similarity, dc, n_iter, rows, counts, max_bytes):
    """The cluster similarity ``sim`` of the chosen measure (1 on the diagonal), the WCT (cts),
    and for srs the group similarity."""
    if similarity == "srs":
        S, C = _srs(E, dc, n_iter, rows, counts, max_bytes)
        return C, None, S
    J = _jaccard(E, max_bytes)
    if similarity == "asrs":
        return _asrs(E, dc, J), None, None
    W = _wct(E, J)
    sim = dc * W
    np.fill_diagonal(sim, 1.0)
    return sim, W, None


def _within_partitions(E, sim):
    """The block-diagonal part of ``sim`` (pairs of clusters of one partition), sparse."""
    blocks = [sim[lo:hi, lo:hi] for lo, hi in zip(E.offsets[:-1], E.offsets[1:])]
    return sp.block_diag(blocks, format="csr")


def _ra(E, sim, rows=None):
    """RA of the objects ``rows`` (all by default): ``B K`` with K the within-partition links."""
    B = E.one_hot() if rows is None else E.one_hot()[rows]
    return (B @ _within_partitions(E, sim)).tocsr()


def _ra_bytes(E, sim, rows):
    """Bytes of the RA matrix of the objects ``rows`` and its partition-weighted copy, which are
    alive together: a row holds, for every partition, the links of its cluster to the clusters
    of that partition, so its entries are counted exactly from the cluster sizes in ``rows``
    and the entries of each cluster's row of the within-partition links (float64 values and
    int32 indices, int64 past 2^31 entries)."""
    K = _within_partitions(E, sim)
    K.eliminate_zeros()                 # the product stores no zero sums
    links = np.diff(K.indptr)
    L = E.labels[rows]
    members = np.bincount((L + E.offsets[:-1])[L >= 0], minlength=int(E.offsets[-1]))
    entries = int(members @ links)
    return 2 * entries * (8 + (4 if entries < 2**31 else 8))


def _group_similarity(E, similarity, sim, rows, group_srs):
    """The object similarity between the groups ``rows`` (diagonal: two distinct objects of one group)."""
    G = E.one_hot()[rows]
    w = E.weights[_partition_of(E)]
    if similarity == "srs":
        return group_srs
    if similarity == "cts":
        RA = _ra(E, sim, rows) @ sp.diags(w)
        return np.asarray((RA @ G.T).todense())
    Gw = G @ sp.diags(w)
    return np.asarray((Gw @ (Gw @ sim).T).T)


def cluster_similarity(ensemble, similarity="cts", *, dc=DEFAULT_DC, n_iter=DEFAULT_N_ITER, max_bytes=None):
    """The link-based similarity of every pair of clusters (Iam-On et al. 2011; Iam-On & Garrett 2010).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Complete (no missing labels), at least two partitions.
    similarity : {"cts", "srs", "asrs"}, default="cts"
        Weighted connected triples (DC times the normalised WCT), SimRank or approximate SimRank
        (see the module docstring).
    dc : float, default=0.9
        The decay factor, in [0, 1].
    n_iter : int, default=5
        R, SimRank's iterations (``"srs"`` only), >= 2.
    max_bytes : int, default=None
        Memory budget of the (sum K_i)^2 matrices (and of SimRank's object matrix).

    Returns
    -------
    ndarray of shape (sum K_i, sum K_i)
        1 on the diagonal; cluster l of partition i at ``ensemble.offsets[i] + l``. For ``"cts"``
        only pairs of one partition are filled (the others are 0).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.link_based import cluster_similarity
    >>> L = np.array([[0, 0], [0, 1], [1, 1], [1, 2]])
    >>> cluster_similarity(L, dc=0.5).round(3)[0].tolist()
    [1.0, 0.5, 0.0, 0.0, 0.0]
    """
    similarity, dc, n_iter = _check_common(similarity, dc, n_iter)
    E = _ensemble(ensemble)
    rows = np.arange(E.n_samples)
    return _cluster_links(E, similarity, dc, n_iter, rows, np.ones(E.n_samples), max_bytes)[0]


def wct(ensemble, *, max_bytes=None):
    """Normalised weighted connected triples of the pairs of clusters of each partition (Iam-On et al. 2011, sec. 3.2).

    ``WCT(C_a, C_b) = sum_k min(J(C_a, C_k), J(C_b, C_k)) / max``, J the Jaccard overlap of
    clusters; 1 on the diagonal, 0 for pairs of different partitions.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
    max_bytes : int, default=None

    Returns
    -------
    ndarray of shape (sum K_i, sum K_i)

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.link_based import wct
    >>> wct(np.array([[0, 0], [0, 1], [1, 1], [1, 2]])).round(3)[0].tolist()
    [1.0, 1.0, 0.0, 0.0, 0.0]
    """
    E = _ensemble(ensemble)
    return _wct(E, _jaccard(E, max_bytes))


def refined_association(ensemble, similarity="cts", *, dc=DEFAULT_DC, n_iter=DEFAULT_N_ITER, max_bytes=None):
    """The refined cluster-association matrix RA (Iam-On et al. 2011, sec. 3.3).

    ``RA(x, C) = 1`` if x is in C, else ``sim(C*, C)`` with C* the cluster of x in C's partition.

    Parameters
    ----------
    ensemble, similarity, dc, n_iter, max_bytes
        As in :func:`cluster_similarity`.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, sum K_i)

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.link_based import refined_association
    >>> L = np.array([[0, 0], [0, 1], [1, 1], [1, 2]])
    >>> refined_association(L, dc=0.5).toarray().round(3)[0].tolist()
    [1.0, 0.5, 1.0, 0.5, 0.0]
    """
    similarity, dc, n_iter = _check_common(similarity, dc, n_iter)
    E = _ensemble(ensemble)
    sim = _cluster_links(E, similarity, dc, n_iter, np.arange(E.n_samples), np.ones(E.n_samples), max_bytes)[0]
    return _ra(E, sim)


def object_similarity(ensemble, similarity="cts", *, dc=DEFAULT_DC, n_iter=DEFAULT_N_ITER, max_bytes=None):
    """The refined object similarity of LCE (Iam-On et al. 2011; Iam-On & Garrett 2010), n x n.

    ``"cts"``: ``S(x, y) = sum_i w_i RA(x, pi_i(y))``; ``"srs"``/``"asrs"``: ``S(x, y) =
    sum_{i, j} w_i w_j sim(pi_i(x), pi_j(y))`` (w_i = 1 / M by default); 1 on the diagonal.

    Parameters
    ----------
    ensemble, similarity, dc, n_iter
        As in :func:`cluster_similarity`.
    max_bytes : int, default=None
        Memory budget of the n x n matrix.

    Returns
    -------
    ndarray of shape (n_samples, n_samples)

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.link_based import object_similarity
    >>> L = np.array([[0, 0], [0, 1], [1, 1], [1, 2]])
    >>> object_similarity(L, dc=0.5).round(3)[0].tolist()
    [1.0, 0.75, 0.5, 0.25]
    """
    similarity, dc, n_iter = _check_common(similarity, dc, n_iter)
    E = _ensemble(ensemble)
    n = E.n_samples
    require_memory(3 * n * n * 8, f"the refined similarity of {n} objects", _ALTERNATIVE, max_bytes)
    rows, counts = np.arange(n), np.ones(n)
    sim, _, group_srs = _cluster_links(E, similarity, dc, n_iter, rows, counts, max_bytes)
    S = _group_similarity(E, similarity, sim, rows, group_srs)
    np.fill_diagonal(S, 1.0)
    return S


# -- LCE ----------------------------------------------------------------------------------------

@renamed_threads
@declare(handles_missing=False, object_order="distribution")
def lce(ensemble: EnsembleLike, n_clusters: int, *, similarity: str = "cts", consensus: str = "spec",
        dc: float = DEFAULT_DC, n_iter: int = DEFAULT_N_ITER, n_init: int = 3, max_iter: int = 100,
        max_bytes: int | None = None, random_state: RandomStateLike = None,
        n_jobs: int | None = None) -> ConsensusResult:
    """Link-based cluster ensemble, LCE (Iam-On, Boongoen, Garrett & Price 2011).

    The ensemble's clusters are linked by a link-based similarity (``similarity``: weighted
    connected triples, the paper's; SimRank or approximate SimRank, LinkCluE's), the cluster
    association matrix is refined with it (RA), and the consensus is drawn from RA:

    * ``consensus="spec"`` (default, the paper's): the spectral cut of the bipartite graph of
      objects and clusters weighted by RA (``M w_i RA``), via the transfer cut; linear memory in
      n (RA is sparse: a cluster is linked only to clusters of its partition that share a
      neighbour).
    * ``"average"``, ``"complete"``, ``"single"``: hierarchical agglomeration of ``1 - S``, S the
      refined object similarity (:func:`object_similarity`), LinkCluE's consensus functions,
      cut at exactly K clusters (the K - 1 highest merges undone; LinkCluE's ``maxclust`` cut
      can give more at a tied height); O(m^2) memory for m distinct label rows (see the module
      docstring for why this is exact with ``"cts"``).

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Complete partitions (missing labels are refused), at least two.
    n_clusters : int
        K, in [2, number of distinct label rows] (and at most the number of clusters for "spec").
    similarity : {"cts", "srs", "asrs"}, default="cts"
        "cts": weighted connected triples (the paper's); "srs": SimRank iterated ``n_iter``
        times; "asrs": LinkCluE's approximate SimRank. Huang, Lai & Wang (2016) report an
        "SRS" baseline whose published NMIs "asrs" reproduces on their ensembles (every row
        within one sd; "srs" misses two rows with single linkage; docs/reproduction.md).
    consensus : {"spec", "average", "complete", "single"}, default="spec"
    dc : float, default=0.9
        The decay factor DC, in [0, 1] (0.9 in the paper's experiments; LinkCluE's default is
        0.8).
    n_iter : int, default=5
        R, SimRank's iterations (``similarity="srs"`` only), >= 2.
    n_init, max_iter : int, default=3, 100
        The spectral cut's k-means runs and Lloyd iterations.
    max_bytes : int, default=None
        Memory budget of the quadratic matrices (clusters x clusters; groups x groups for the
        linkages and SimRank).
    random_state : int, Generator or None
        Seeds the spectral cut's k-means; the linkages are deterministic.
    n_jobs : int, default=None
        Threads of the k-means passes; the labels do not depend on it.

    Returns
    -------
    ConsensusResult
        ``objective``: the k-means within-cluster sum of squares of the embedding ("spec") or the
        linkage distance of the first merge above the cut. ``extras``: ``similarity``,
        ``consensus``, ``dc``, ``n_microclusters``; ``eigenvalues`` ("spec"); and for n <= 1,000
        ``cluster_similarity`` ((sum K_i)^2, the input's cluster numbering), ``wct`` ("cts"),
        ``ra`` (n x sum K_i, dense) and ``object_similarity`` (n x n).

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.link_based import lce
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    >>> lce(labels, 2, consensus="average").labels.tolist()
    [0, 0, 1, 1, 1]
    """
    similarity, dc, n_iter = _check_common(similarity, dc, n_iter)
    if consensus not in CONSENSUS:
        raise ValidationError(f"consensus must be one of {list(CONSENSUS)}, got {consensus!r}.")
    n_init = check_int(n_init, "n_init", low=1)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_jobs = check_n_jobs(n_jobs)
    E0, E, _, n_clusters, groups = complete_microclusters(ensemble, n_clusters, "lce", _MISSING_ALTERNATIVE)
    first, inverse, counts = groups
    n, m = E.n_samples, first.shape[0]
    if consensus == "spec":
        check_eigenvectors(n_clusters, E, " or pass consensus='average'")
    else:
        check_linkage(consensus)
        require_memory(3 * m * m * 8, f"the refined similarity of {m} distinct label rows", _ALTERNATIVE, max_bytes)
    sim, _, group_srs = _cluster_links(E, similarity, dc, n_iter, first, counts, max_bytes)
    extras = {"similarity": similarity, "consensus": consensus, "dc": dc, "n_microclusters": int(m)}
    if consensus == "spec":
        n_c = int(E.offsets[-1])
        # + the cluster similarities (two (sum K_i)^2 arrays) and the working copies of the label
        # matrix (the canonical and grouped ensembles: measured about 48 bytes a label)
        require_memory(_ra_bytes(E, sim, first) + 2 * n_c * n_c * 8 + 48 * n * E.n_partitions,
                       f"the {m} x {n_c} refined cluster links (RA) of {m} distinct label rows, the "
                       "cluster similarities and the label matrix's working copies", "use fewer or coarser basic partitions, or hbgf or kcc", max_bytes)
        rng = check_random_state(random_state)
        RA = _ra(E, sim, first) @ sp.diags(E.n_partitions * E.weights[_partition_of(E)])
        result = tcut(RA, n_clusters, groups=groups, random_state=rng, n_init=n_init, max_iter=max_iter,
                      n_jobs=n_jobs)
        labels, objective = result.labels, float(result.objective)
        extras["eigenvalues"] = result.eigenvalues
        objective_name = "within-cluster sum of squares of the spectral embedding of RA (lower is better)"
    else:
        D = _group_similarity(E, similarity, sim, first, group_srs)
        np.subtract(1.0, D, out=D)
        group_labels, objective = linkage_on_groups(D, counts, n_clusters, consensus)
        labels = group_labels[inverse]
        objective_name = f"{consensus}-linkage distance 1 - refined similarity of the first merge above the cut"
    if n <= EXTRAS_MAX_SAMPLES and 3 * n * n * 8 <= memory_budget(max_bytes):
        rows0, ones = np.arange(n), np.ones(n)
        sim0, wct0, srs0 = _cluster_links(E0, similarity, dc, n_iter, rows0, ones, max_bytes)
        extras["cluster_similarity"] = sim0
        if wct0 is not None:
            extras["wct"] = wct0
        extras["ra"] = _ra(E0, sim0).toarray()
        S = _group_similarity(E0, similarity, sim0, rows0, srs0)
        np.fill_diagonal(S, 1.0)
        extras["object_similarity"] = S
    return ConsensusResult.from_labels(labels, objective=objective, objective_name=objective_name, method="lce",
                                       extras=extras)
