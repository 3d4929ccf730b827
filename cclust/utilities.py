"""KCC utility functions (Wu et al. 2015; Table 1 of Becerra Tomé's review) as data the compiled K-means
passes understand.

A utility U_mu(pi, pi_i) = sum_k p_k+ mu(P_k^(i)) - mu(P^(i)) is defined by a convex function mu
on distributions. KCC maximises Gamma = sum_i w_i U_mu(pi, pi_i) by K-means on the (never
materialised) one-hot "binary dataset" with the point-to-centroid distance f that mu induces.
For an object whose label in pi_i is l and a centroid block m = m_{k,i} (Wu et al. 2015; eq. 4 of Becerra Tomé's review), the
distance terms the compiled engine evaluates are:

=========  ==========================  ==========================================
family     mu(m)                       f(x, m) for x the one-hot of label l
=========  ==========================  ==========================================
``uc``     ||m||_2^2                   1 - 2 m[l] + ||m||_2^2
``uh``     -H(m) (bits)                -log2(m[l] + eps),  eps = 2.2e-16
``ucos``   ||m||_2                     1 - m[l] / ||m||_2
``ulp``    ||m||_p                     1 - (m[l] / ||m||_p)^(p-1)
=========  ==========================  ==========================================

The normalised utilities NU_mu divide U_mu(pi, pi_i) by ``|mu(P^(i))|`` (P^(i) is pi_i's
cluster-size distribution over the objects it labels), which in the distance divides w_i by
||P_i||_2^2, H(P_i), ||P_i||_2 or ||P_i||_p respectively: the KCC authors' own convention, kept
so results compare with theirs.

``uh`` smoothing: a centroid entry of zero would make -log m[l] infinite, so the distance uses
m[l] + eps with eps = 2.2e-16 (about 52 bits for an unseen label); Gamma itself is computed
exactly from the contingency tables (0 log 0 = 0).

A third-party utility is possible wherever the engine can express its distance: any
``Utility`` whose ``family`` is one of the four above (e.g. ``ulp`` with another ``p``)
registered under the ``cclust.utilities`` entry point.
"""
from dataclasses import dataclass, replace

import numpy as np

from cclust._validation import check_float
from cclust.errors import ValidationError

#: distance family -> code of the compiled engine
FAMILIES = {"uc": 0, "uh": 1, "ucos": 2, "ulp": 3}

#: smoothing of uh's -log2(m[l] + eps)
UH_EPS = 2.2e-16

#: (label, utility, p) of Wu et al.'s (2015) ten utilities, in the column order of Becerra Tomé's
#: Tables 4 and 5: what ``cclust run --utilities`` and the KCC reproduction compare
KCC_UTILITIES = (
    ("Uc", "uc", None), ("UH", "uh", None), ("Ucos", "ucos", None),
    ("UL5", "ulp", 5.0), ("UL8", "ulp", 8.0),
    ("NUc", "nuc", None), ("NUH", "nuh", None), ("NUcos", "nucos", None),
    ("NUL5", "nulp", 5.0), ("NUL8", "nulp", 8.0),
)


@dataclass(frozen=True)
class Utility:
    """A KCC utility: its convex function, point-to-centroid distance and normalisation.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"nucos"``.
    family : {"uc", "uh", "ucos", "ulp"}
        The distance family (Wu et al. 2015; Becerra Tomé, Table 1) the compiled engine evaluates.
    normalized : bool, default=False
        Whether U is divided by ``|mu(P^(i))|`` (the NU forms of Wu et al. 2015).
    p : float, default=None
        The exponent of ``ulp`` (> 1; Wu et al. 2015 use 5 and 8). Must be None for other families.
    description : str
        One line shown by ``cclust.available()``.
    """

    name: str
    family: str
    normalized: bool = False
    p: float = None
    description: str = ""

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValidationError(f"family must be one of {sorted(FAMILIES)}, got {self.family!r}.")
        if self.family == "ulp":
            if self.p is not None:
                object.__setattr__(self, "p", check_float(self.p, "p", low=1, low_open=True))
        elif self.p is not None:
            raise ValidationError(f"p only applies to the ulp family, not {self.family!r}.")

    @property
    def code(self):
        """The compiled engine's distance code."""
        return FAMILIES[self.family]

    @property
    def exponent(self):
        """p for ``ulp`` (checked to be set), 0.0 otherwise."""
        if self.family != "ulp":
            return 0.0
        if self.p is None:
            raise ValidationError(
                f"utility {self.name!r} needs p > 1 (the KCC papers use p=5 and p=8); pass p=..."
            )
        return float(self.p)

    def with_params(self, p=None):
        """This utility with its parameter set (``p`` for ``ulp``)."""
        if p is None:
            return self
        if self.family != "ulp":
            raise ValidationError(f"utility {self.name!r} takes no p; only ulp and nulp do.")
        return replace(self, p=p)

    def mu(self, dist):
        """mu applied to each row of ``dist`` (rows are probability vectors)."""
        dist = np.asarray(dist, dtype=np.float64)
        if self.family == "uc":
            return (dist ** 2).sum(-1)
        if self.family == "uh":
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.where(dist > 0, dist * np.log2(np.where(dist > 0, dist, 1.0)), 0.0)
            return terms.sum(-1)
        if self.family == "ucos":
            return np.sqrt((dist ** 2).sum(-1))
        p = self.exponent
        return (dist ** p).sum(-1) ** (1.0 / p)

    def normalizers(self, ensemble):
        """``|mu(P^(i))|`` per partition for the normalised forms, ones otherwise."""
        if not self.normalized:
            return np.ones(ensemble.n_partitions)
        sizes = _partition_sizes(ensemble)
        out = np.empty(ensemble.n_partitions)
        for i, counts in enumerate(sizes):
            out[i] = abs(float(self.mu(counts / counts.sum())))
        # A partition with one cluster has H = 0 under uh: it carries no information, and
        # dividing by zero would give it infinite weight. Give it weight zero instead.
        return np.where(out > 0, out, np.inf)

    def effective_weights(self, ensemble):
        """``w_i / |mu(P^(i))|`` (normalised) or w_i: the weights the compiled distance uses."""
        return ensemble.weights / self.normalizers(ensemble)

    def gamma_offset(self, ensemble):
        """sum_i w'_i (mu(e) - mu(P^(i))) with w' the effective weights and e a one-hot vector.

        On a complete ensemble every f of Wu et al. (2015; Becerra Tomé, Table 1) is a Bregman divergence whose centroid is
        the cluster mean, so sum_x f(x, m_k) = sum_k n_k (mu(e) - mu(m_k)) per partition and
        Gamma = gamma_offset - kmeans_objective / n exactly (up to uh's eps): restarts can be
        ranked without a contingency pass each.
        """
        point = float(self.mu(np.array([1.0])))
        sizes = _partition_sizes(ensemble)
        mus = np.array([float(self.mu(c / c.sum())) for c in sizes])
        weights = self.effective_weights(ensemble)
        return float(np.where(weights > 0, weights * (point - mus), 0.0).sum())

    def partition_utilities(self, ensemble, table):
        """U(pi, pi_i) for every partition from the batched contingency table (K, sum K_i)."""
        values = np.empty(ensemble.n_partitions)
        norm = self.normalizers(ensemble)
        for i in range(ensemble.n_partitions):
            block = table[:, ensemble.offsets[i]:ensemble.offsets[i + 1]].astype(np.float64)
            rows = block.sum(1)
            total = rows.sum()
            filled = rows > 0
            p_k = rows[filled] / total
            P_k = block[filled] / rows[filled, None]
            P = block.sum(0) / total
            u = float((p_k * self.mu(P_k)).sum() - self.mu(P))
            values[i] = u / norm[i] if np.isfinite(norm[i]) else 0.0
        return values

    def consensus_value(self, ensemble, labels, n_clusters=None, *, n_threads=None):
        """Gamma = sum_i w_i U(pi, pi_i) (Wu et al. 2015, eq. 1) of a consensus labelling."""
        table = ensemble.contingency(labels, n_clusters, n_threads=n_threads)
        return float(ensemble.weights @ self.partition_utilities(ensemble, table))


def _partition_sizes(ensemble):
    """Cluster sizes of each partition over the objects it labels."""
    sizes = ensemble.cluster_sizes.astype(np.float64)
    return np.split(sizes, ensemble.offsets[1:-1])


uc = Utility("uc", "uc", description="Uc: squared Euclidean / category utility (KCC; Wu et al. 2015)")
uh = Utility("uh", "uh", description="UH: KL divergence / information gain in bits (KCC; Wu et al. 2015)")
ucos = Utility("ucos", "ucos", description="Ucos: cosine distance (KCC; Wu et al. 2015)")
ulp = Utility("ulp", "ulp", description="ULp: Lp-norm utility, needs p > 1 (KCC; Wu et al. 2015)")
nuc = Utility("nuc", "uc", True, description="NUc: Uc normalised by ||P_i||_2^2 (KCC; Wu et al. 2015)")
nuh = Utility("nuh", "uh", True, description="NUH: UH normalised by H(P_i) (KCC; Wu et al. 2015)")
nucos = Utility("nucos", "ucos", True, description="NUcos: Ucos normalised by ||P_i||_2 (KCC; Wu et al. 2015)")
nulp = Utility("nulp", "ulp", True, description="NULp: ULp normalised by ||P_i||_p, needs p > 1 (KCC; Wu et al. 2015)")


def resolve(utility, p=None):
    """A Utility from a registered name or a Utility, with ``p`` applied."""
    if isinstance(utility, Utility):
        return utility.with_params(p)
    if not isinstance(utility, str):
        raise ValidationError(f"utility must be a registered utility name or a Utility, got {utility!r}.")
    from cclust.registry import get

    return get(utility, kind="utility").with_params(p)
