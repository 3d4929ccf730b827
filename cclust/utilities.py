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
from cclust.base import FAMILIES, UH_EPS, Utility  # noqa: F401  (Utility is defined with the other contracts)
from cclust.errors import ValidationError

#: (label, utility, p) of Wu et al.'s (2015) ten utilities, in the column order of Becerra Tomé's
#: Tables 4 and 5: what ``cclust run --utilities`` and the KCC reproduction compare
KCC_UTILITIES = (
    ("Uc", "uc", None), ("UH", "uh", None), ("Ucos", "ucos", None),
    ("UL5", "ulp", 5.0), ("UL8", "ulp", 8.0),
    ("NUc", "nuc", None), ("NUH", "nuh", None), ("NUcos", "nucos", None),
    ("NUL5", "nulp", 5.0), ("NUL8", "nulp", 8.0),
)


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
