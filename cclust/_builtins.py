"""The built-in registrations: one table of dotted strings, read exactly like entry points.

Each row is (name, kind, "module:attribute", one-line description). Keeping the descriptions
here lets ``cclust.available()`` list everything without importing anything.
"""

BUILTINS = (
    # consensus functions
    ("kcc", "consensus", "cclust.consensus.kcc:kcc",
     "K-means-based consensus clustering, KCC/KCC++ (Wu et al. TKDE 2015; 001)"),
    # basic-partition generators
    ("kmeans", "generator", "cclust.generators:kmeans",
     "RPS: k-means with a random K per partition (001 sec. 2)"),
    ("subspace", "generator", "cclust.generators:subspace",
     "RFS: k-means on a random 70% of the features (003 sec. 4.3)"),
    ("subsample", "generator", "cclust.generators:subsample",
     "k-means on a random 70% of the objects, the rest to the nearest centre (003 sec. 4.3)"),
    ("projection", "generator", "cclust.generators:projection",
     "k-means on random Gaussian projections (Fern & Brodley 2003)"),
    # KCC utilities (001 Table 1)
    ("uc", "utility", "cclust.utilities:uc", "Uc: squared Euclidean / category utility (KCC, 001 Table 1)"),
    ("uh", "utility", "cclust.utilities:uh", "UH: KL divergence / information gain in bits (KCC, 001 Table 1)"),
    ("ucos", "utility", "cclust.utilities:ucos", "Ucos: cosine distance (KCC, 001 Table 1)"),
    ("ulp", "utility", "cclust.utilities:ulp", "ULp: Lp-norm utility, needs p > 1 (KCC, 001 Table 1)"),
    ("nuc", "utility", "cclust.utilities:nuc", "NUc: Uc normalised by ||P_i||_2^2 (KCC, 001)"),
    ("nuh", "utility", "cclust.utilities:nuh", "NUH: UH normalised by H(P_i) (KCC, 001)"),
    ("nucos", "utility", "cclust.utilities:nucos", "NUcos: Ucos normalised by ||P_i||_2 (KCC, 001)"),
    ("nulp", "utility", "cclust.utilities:nulp", "NULp: ULp normalised by ||P_i||_p, needs p > 1 (KCC, 001)"),
)
