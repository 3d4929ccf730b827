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
    """Wine: 178 objects, 13 features, 3 classes (unscaled; 001 divides the last feature by 100)."""
    return load("wine")
