"""Small labelled datasets shipped inside the package, for examples and tests.

Both are from the UCI Machine Learning Repository as distributed by scikit-learn: iris (Fisher
1936, public domain) and wine (Forina et al.). Features are as distributed, unscaled.
"""
from importlib import resources

import numpy as np

from cclust.errors import ValidationError

_BUNDLED = ("iris", "wine")


def names():
    """Names of the bundled datasets."""
    return _BUNDLED


def load(name):
    """Load a bundled dataset as ``(X, y)``: float64 (n, d) and int64 labels in 0..K-1."""
    if name not in _BUNDLED:
        raise ValidationError(f"name must be one of {list(_BUNDLED)}, got {name!r}.")
    with resources.files(__name__).joinpath(f"{name}.npz").open("rb") as handle:
        with np.load(handle, allow_pickle=False) as data:
            return np.array(data["X"], dtype=np.float64), np.array(data["y"], dtype=np.int64)


def load_iris():
    """Iris: 150 objects, 4 features, 3 classes."""
    return load("iris")


def load_wine():
    """Wine: 178 objects, 13 features, 3 classes (unscaled; Wu et al. 2015 divide the last feature by 100)."""
    return load("wine")


_WOEC_TOYS = {
    1: ("gaussian", 150, 10.0, ((-10.0, 10.0), (10.0, 10.0), (0.0, 0.0))),
    2: ("disc", 300, None, (((-4.0, 6.0), 3.0), ((4.0, 6.0), 3.0), ((0.0, 0.0), 4.0))),
    3: ("gaussian", 300, 5.0, ((-5.29, 0.0), (-8.559, 10.062), (0.0, 16.281), (8.559, 10.062), (5.29, 0.0))),
}


def make_woec_toy(i, random_state=None):
    """The synthetic data Toy1-Toy3 of Ren et al. (2017, sec. 4.1, Table 1, Fig. 5).

    * Toy1: 3 Gaussian classes of 150 points, covariance 10 I, means (-10, 10), (10, 10), (0, 0).
    * Toy2: 3 classes of 300 points uniform in discs: centres (-4, 6) and (4, 6) with radius 3,
      and (0, 0) with radius 4 (the sparser lower class).
    * Toy3: 5 Gaussian classes of 300 points, covariance 5 I, means (-5.29, 0),
      (-8.559, 10.062), (0, 16.281), (8.559, 10.062), (5.29, 0).

    The features are returned as drawn; Ren et al. (2017) standardise them (zero mean, unit variance)
    before clustering.

    Parameters
    ----------
    i : {1, 2, 3}
        Which toy.
    random_state : int, Generator or None

    Returns
    -------
    X : ndarray of shape (n_samples, 2), float64
    y : ndarray of shape (n_samples,), int64 — the class of each point, 0..K-1

    Examples
    --------
    >>> from cclust.datasets import make_woec_toy
    >>> X, y = make_woec_toy(2, random_state=0)
    >>> X.shape, int(y.max()) + 1
    ((900, 2), 3)
    """
    from cclust.validation import check_random_state

    if isinstance(i, bool) or i not in _WOEC_TOYS:
        raise ValidationError(f"i must be 1, 2 or 3 (Toy1-Toy3 of Ren et al. 2017), got {i!r}.")
    rng = check_random_state(random_state)
    kind, size, variance, classes = _WOEC_TOYS[i]
    parts = []
    for spec in classes:
        if kind == "gaussian":
            parts.append(np.asarray(spec) + rng.normal(scale=np.sqrt(variance), size=(size, 2)))
        else:
            centre, radius = spec
            angle = rng.uniform(0.0, 2.0 * np.pi, size)
            r = radius * np.sqrt(rng.uniform(0.0, 1.0, size))
            parts.append(np.asarray(centre) + np.column_stack([r * np.cos(angle), r * np.sin(angle)]))
    X = np.vstack(parts)
    y = np.repeat(np.arange(len(classes), dtype=np.int64), size)
    return X, y


def make_gaussian_mixture(n_samples=1000, n_features=12, n_clusters=9, *, variance_range=(0.1, 0.3),
                          center_variance=0.7, random_state=None):
    """Spherical Gaussian mixture of the experiments of Mirkin & Shestakov (sec. 4).

    Mirkin & Shestakov generate their data with Netlab's ``gmm``/``gmmsamp``: 1000 twelve-dimensional objects
    from nine spherical Gaussian clusters, each cluster's variance in 0.1-0.3 and the centres
    drawn independently from N(0, 0.7). We read N(0, 0.7) as mean 0 and variance 0.7 (the
    usual N(mu, sigma^2) notation), draw each cluster's variance uniformly from
    ``variance_range``, and, as ``gmmsamp`` does with equal priors, draw each object's
    component uniformly at random (so cluster sizes vary around n_samples / n_clusters).

    Parameters
    ----------
    n_samples : int, default=1000
    n_features : int, default=12
    n_clusters : int, default=9
    variance_range : (float, float), default=(0.1, 0.3)
        Range of the per-cluster variance sigma_k^2 (the same in every dimension).
    center_variance : float, default=0.7
        Variance of each coordinate of the cluster centres.
    random_state : int, Generator or None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        The generating component of each object (the partition A of Mirkin & Shestakov, sec. 4), in
        ``0..n_clusters-1``; a component drawn for no object leaves its label unused.

    Examples
    --------
    >>> from cclust.datasets import make_gaussian_mixture
    >>> X, y = make_gaussian_mixture(random_state=0)
    >>> X.shape, int(y.max()) + 1
    ((1000, 12), 9)
    """
    from cclust.validation import check_float, check_int, check_random_state

    n_samples = check_int(n_samples, "n_samples", low=1)
    n_features = check_int(n_features, "n_features", low=1)
    n_clusters = check_int(n_clusters, "n_clusters", low=1)
    try:
        low, high = variance_range
    except (TypeError, ValueError):
        raise ValidationError(f"variance_range must be a pair (low, high), got {variance_range!r}.") from None
    low = check_float(low, "variance_range[0]", low=0, low_open=True)
    high = check_float(high, "variance_range[1]", low=low)
    center_variance = check_float(center_variance, "center_variance", low=0)
    rng = check_random_state(random_state)
    centers = rng.normal(0.0, np.sqrt(center_variance), size=(n_clusters, n_features))
    variances = rng.uniform(low, high, size=n_clusters)
    y = rng.integers(0, n_clusters, size=n_samples).astype(np.int64)
    X = centers[y] + rng.normal(size=(n_samples, n_features)) * np.sqrt(variances)[y, None]
    return X, y
