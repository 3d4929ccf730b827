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


# -- nonlinear shapes at any size (Huang, Wang, Wu, Lai & Kwoh 2020, sec. 4.1, Fig. 5) -----------

def _shape_arguments(n_samples, noise, n_features, random_state):
    from cclust.validation import check_float, check_int, check_random_state

    n_samples = check_int(n_samples, "n_samples", low=2)
    noise = check_float(noise, "noise", low=0)
    n_features = check_int(n_features, "n_features", low=2)
    return n_samples, noise, n_features, check_random_state(random_state)


def _finish_shape(points, y, noise, n_features, rng):
    """Gaussian noise on the two shape coordinates, ``n_features - 2`` noise-only coordinates,
    objects in a random order."""
    n = points.shape[0]
    X = np.empty((n, n_features))
    X[:, :2] = points
    X[:, :2] += rng.normal(scale=noise, size=(n, 2)) if noise else 0.0
    if n_features > 2:
        X[:, 2:] = rng.normal(scale=noise, size=(n, n_features - 2)) if noise else 0.0
    order = rng.permutation(n)
    return X[order], y[order].astype(np.int64)


def _split(n, weights):
    """Class sizes proportional to ``weights`` summing to n (largest remainders first)."""
    weights = np.asarray(weights, dtype=np.float64)
    exact = n * weights / weights.sum()
    sizes = np.floor(exact).astype(np.int64)
    sizes[np.argsort(-(exact - sizes), kind="stable")[: n - int(sizes.sum())]] += 1
    return sizes


def make_moons(n_samples=10_000, *, noise=0.05, n_features=2, random_state=None):
    """Two interleaving half circles ("two bananas", the TB set of Huang et al. 2020, Fig. 5).

    Class 0: angle t uniform in [0, pi], point (cos t, sin t); class 1: (1 - cos t, 0.5 - sin t).
    Half of the objects in each (the odd one to class 0), Gaussian noise of standard deviation
    ``noise`` on both coordinates. A k-means boundary (a straight line) cannot separate them.

    Parameters
    ----------
    n_samples : int, default=10,000
        Any n >= 2 (the paper's set has a million).
    noise : float, default=0.05
    n_features : int, default=2
        Coordinates past the second hold noise only (standard deviation ``noise``).
    random_state : int, Generator or None
        The same seed gives the same data for the same arguments.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64

    Examples
    --------
    >>> from cclust.datasets import make_moons
    >>> X, y = make_moons(1000, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 2), [0, 1])
    """
    n, noise, n_features, rng = _shape_arguments(n_samples, noise, n_features, random_state)
    sizes = _split(n, [1, 1])
    t0 = rng.uniform(0.0, np.pi, sizes[0])
    t1 = rng.uniform(0.0, np.pi, sizes[1])
    points = np.vstack([np.column_stack([np.cos(t0), np.sin(t0)]),
                        np.column_stack([1.0 - np.cos(t1), 0.5 - np.sin(t1)])])
    return _finish_shape(points, np.repeat([0, 1], sizes), noise, n_features, rng)


def make_circles(n_samples=10_000, *, n_circles=3, noise=0.05, n_features=2, random_state=None):
    """Concentric circles (the CC set of Huang et al. 2020, Fig. 5).

    Circle c (c = 0..n_circles-1) has radius c + 1 and holds objects in proportion to its
    radius (the same density along every circle), at uniform angles, with Gaussian noise of
    standard deviation ``noise``. No k-means partition separates rings.

    Parameters
    ----------
    n_samples : int, default=10,000
    n_circles : int, default=3
        At least 2.
    noise : float, default=0.05
    n_features : int, default=2
        Coordinates past the second hold noise only.
    random_state : int, Generator or None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        The circle, 0 the innermost.

    Examples
    --------
    >>> from cclust.datasets import make_circles
    >>> X, y = make_circles(600, random_state=0)
    >>> X.shape, [int(c) for c in np.bincount(y)]
    ((600, 2), [100, 200, 300])
    """
    from cclust.validation import check_int

    n, noise, n_features, rng = _shape_arguments(n_samples, noise, n_features, random_state)
    n_circles = check_int(n_circles, "n_circles", low=2, high=n)
    sizes = _split(n, np.arange(1, n_circles + 1))
    y = np.repeat(np.arange(n_circles), sizes)
    angle = rng.uniform(0.0, 2.0 * np.pi, n)
    radius = (y + 1.0)
    points = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    return _finish_shape(points, y, noise, n_features, rng)


def make_flower(n_samples=10_000, *, n_petals=8, noise=0.05, n_features=2, random_state=None):
    """A flower: a round core, ``n_petals`` petals around it and a ring around them.

    Modelled on the Flower set of Huang et al. (2020, Fig. 5) from its picture (the authors'
    generator is distributed only in compiled form), not a copy of it. Class 0 is the core,
    uniform in the disc of radius 1; classes 1..n_petals are petals, uniform in ellipses centred
    at radius 3 on equally spaced angles, semi-axes 1.2 along the radius and 0.45 across it;
    the last class is a ring of radius 5.5 (uniform angle, radial width 0.2). Objects are split
    in proportion to the areas of core, petals and ring; Gaussian noise of standard deviation
    ``noise`` is added.

    Parameters
    ----------
    n_samples : int, default=10,000
    n_petals : int, default=8
        At least 3.
    noise : float, default=0.05
    n_features : int, default=2
        Coordinates past the second hold noise only.
    random_state : int, Generator or None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        0 the core, 1..n_petals the petals, n_petals + 1 the ring.

    Examples
    --------
    >>> from cclust.datasets import make_flower
    >>> X, y = make_flower(2000, random_state=0)
    >>> X.shape, int(y.max()) + 1
    ((2000, 2), 10)
    """
    from cclust.validation import check_int

    n, noise, n_features, rng = _shape_arguments(n_samples, noise, n_features, random_state)
    n_petals = check_int(n_petals, "n_petals", low=3)
    areas = [np.pi] + [np.pi * 1.2 * 0.45] * n_petals + [2.0 * np.pi * 5.5 * 0.2]
    sizes = _split(n, areas)
    parts = []
    r = np.sqrt(rng.uniform(0.0, 1.0, sizes[0]))
    a = rng.uniform(0.0, 2.0 * np.pi, sizes[0])
    parts.append(np.column_stack([r * np.cos(a), r * np.sin(a)]))
    for j in range(n_petals):
        m = sizes[1 + j]
        r = np.sqrt(rng.uniform(0.0, 1.0, m))
        a = rng.uniform(0.0, 2.0 * np.pi, m)
        along, across = 1.2 * r * np.cos(a), 0.45 * r * np.sin(a)
        theta = 2.0 * np.pi * j / n_petals
        c, s = np.cos(theta), np.sin(theta)
        parts.append(np.column_stack([(3.0 + along) * c - across * s, (3.0 + along) * s + across * c]))
    m = sizes[-1]
    a = rng.uniform(0.0, 2.0 * np.pi, m)
    r = 5.5 + rng.uniform(-0.1, 0.1, m)
    parts.append(np.column_stack([r * np.cos(a), r * np.sin(a)]))
    return _finish_shape(np.vstack(parts), np.repeat(np.arange(n_petals + 2), sizes), noise, n_features, rng)
