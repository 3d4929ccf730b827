"""Sketch, choose, propagate: the objects :func:`cclust.select_k` runs on when given ``sketch``,
and the labels of every other object afterwards.

Two sketches: ``"uniform"``, a simple random sample without replacement; ``"geometric"``, the
geometric sketch of Hie et al. (2019), which covers the data's principal
subspace with a grid of equal cubes and draws the objects round-robin over the occupied cubes, so
that small, dense groups keep few objects and rare regions keep theirs (a rare cluster is not
lost in the sample). Every object outside the sketch then joins the consensus cluster with the
nearest centroid (in the features, as k-means would assign it) or, with ``propagation="knn"``,
the cluster most of its nearest sketch objects are in (:mod:`cclust._assign` holds both rules).
"""
import numpy as np

from cclust.errors import ValidationError

SKETCH_METHODS = ("uniform", "geometric")

#: Principal components the geometric sketch grids (at most; fewer when there are fewer features).
GRID_COMPONENTS = 10


def check_sketch(sketch, sketch_method, n, needed):
    """``sketch`` as an int in [needed, n) and the method name, or a clear error."""
    from cclust.validation import check_int

    if sketch_method not in SKETCH_METHODS:
        raise ValidationError(f"sketch_method must be one of {list(SKETCH_METHODS)}, got {sketch_method!r}.")
    sketch = check_int(sketch, "sketch", low=1)
    if sketch >= n:
        raise ValidationError(f"sketch={sketch} is not smaller than the {n} objects of data; drop sketch to run "
                              "on every object, or give a smaller sketch.")
    if sketch < needed:
        raise ValidationError(f"sketch={sketch} objects cannot hold the clusters asked for: each resample keeps "
                              f"a subsample of them, and needs at least {needed} for the largest K in k_range; "
                              f"give sketch >= {needed} or lower the largest K.")
    return sketch


def draw_sketch(X, size, method, rng):
    """Indices (sorted, int64) of ``size`` objects of X by ``method``."""
    n = X.shape[0]
    if method == "uniform":
        return np.sort(rng.choice(n, size=size, replace=False)).astype(np.int64)
    scores = _principal_scores(X)
    cells = _cells_for(scores, size)
    return _round_robin(cells, size, rng)


def _principal_scores(X):
    """X's scores on its leading principal components (at most GRID_COMPONENTS), shifted to be
    non-negative."""
    centred = X - X.mean(axis=0)
    cov = centred.T @ centred
    values, vectors = np.linalg.eigh(cov)
    order = np.argsort(values)[::-1][:min(GRID_COMPONENTS, X.shape[1])]
    scores = centred @ vectors[:, order]
    return scores - scores.min(axis=0)


def _cell_ids(scores, side):
    """The grid cube of each object (0..cubes-1) for cubes of the given side: objects whose
    cube coordinates agree, grouped exactly as the ensemble groups identical label rows."""
    from cclust.ensemble import identical_label_rows

    groups = identical_label_rows(np.floor(scores / side).astype(np.int64))
    return np.arange(scores.shape[0]) if groups is None else groups[1]


def _cells_for(scores, size):
    """The cube of each object for the largest side whose grid has at least ``size`` occupied
    cubes (bisection on the side, as geosketch searches it)."""
    span = float(scores.max()) or 1.0
    low, high = span * 1e-9, span * 2.0          # many cubes at low (one object each), one at high
    cells = _cell_ids(scores, low)
    if cells.max() + 1 < size:                   # fewer distinct positions than the sketch
        return cells
    for _ in range(40):
        middle = np.sqrt(low * high)
        trial = _cell_ids(scores, middle)
        if trial.max() + 1 >= size:
            low, cells = middle, trial
        else:
            high = middle
        if high / low < 1.01:
            break
    return cells


def _round_robin(cells, size, rng):
    """``size`` objects drawn one per cube in a random order of the cubes, again and again:
    within a cube the objects come in a random order."""
    n = cells.shape[0]
    n_cells = int(cells.max()) + 1
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(cells[shuffled], kind="stable")]      # by cube, random within
    starts = np.searchsorted(cells[order], np.arange(n_cells))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - starts[cells[order]]
    cube_turn = rng.permutation(n_cells)
    key = rank * n_cells + cube_turn[cells]
    return np.sort(np.argpartition(key, size - 1)[:size]).astype(np.int64)


def propagate(X, sketch, sketch_labels, n_threads, rule="centroid", n_neighbors=None):
    """Labels of every object: the sketch objects keep theirs, every other one gets the cluster
    that ``rule`` gives it from the sketch (:mod:`cclust._assign`: the nearest centroid, the mean
    of a cluster's sketch members, or a vote of its ``n_neighbors`` nearest sketch objects)."""
    from cclust import _assign

    labels = np.empty(X.shape[0], dtype=np.int64)
    outside = np.ones(X.shape[0], dtype=bool)
    outside[sketch] = False
    fitted = np.ascontiguousarray(X[sketch])
    k = _assign.check_neighbors(n_neighbors, fitted.shape[0])
    labels[outside] = _assign.assign(fitted, sketch_labels, np.ascontiguousarray(X[outside]), rule, k, n_threads)
    labels[sketch] = sketch_labels
    return labels
