"""The built-in registrations: one table of dotted strings, read exactly like entry points.

Each row is (name, kind, "module:attribute", one-line description). Keeping the descriptions
here lets ``cclust.available()`` list everything without importing anything.
"""

BUILTINS = (
    # consensus functions
    ("kcc", "consensus", "cclust.consensus.kcc:kcc",
     "K-means-based consensus clustering, KCC/KCC++ (Wu et al. TKDE 2015; 001)"),
    # -- GKCC (issue 4) --
    # -- graph-based and weighted-object consensus (issue 5) --
    # -- least-squares consensus (issue 6) --
    # -- iterative voting and classic baselines (issue 7) --
    # basic-partition generators
    ("kmeans", "generator", "cclust.generators:kmeans",
     "RPS: k-means with a random K per partition (001 sec. 2)"),
    ("subspace", "generator", "cclust.generators:subspace",
     "RFS: k-means on a random 70% of the features (003 sec. 4.3)"),
    ("subsample", "generator", "cclust.generators:subsample",
     "k-means on a random 70% of the objects, the rest to the nearest centre (003 sec. 4.3)"),
    ("projection", "generator", "cclust.generators:projection",
     "k-means on random Gaussian projections (Fern & Brodley 2003)"),
    # metrics (external criteria from one compiled contingency pass; 000 eq. 7-8, 004 eq. 4-12)
    ("ari", "metric", "cclust.metrics:ari", "Adjusted Rand index (Rn of 000 eq. 8)"),
    ("rand", "metric", "cclust.metrics:rand", "Rand index (1 - the Rand distance of 004 eq. 8)"),
    ("nmi", "metric", "cclust.metrics:nmi", "Normalised mutual information (000 eq. 7; sqrt by default, or arithmetic/max/min/geometric)"),
    ("ami", "metric", "cclust.metrics:ami", "Adjusted mutual information (Vinh et al. 2010)"),
    ("vi", "metric", "cclust.metrics:vi", "Variation of information, nats (004 eq. 9)"),
    ("van-dongen", "metric", "cclust.metrics:van_dongen", "Van Dongen set-matching distance, normalised to [0, 1) (004 eq. 7)"),
    ("accuracy", "metric", "cclust.metrics:accuracy", "Accuracy/purity: each cluster votes its majority class (004 eq. 12)"),
    ("compactness", "metric", "cclust.metrics:compactness", "Size-weighted mean within-cluster pair distance (004 eq. 11)"),
    ("kmeans-objective", "metric", "cclust.metrics:kmeans_objective", "Sum of squared distances to cluster means"),
    ("consensus-score", "metric", "cclust.metrics:consensus_score",
     "Weighted average agreement of a labelling with an ensemble (004 eq. 4)"),
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
