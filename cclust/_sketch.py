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
    if method == "uniform":
        return uniform_sketch(X.shape[0], size, rng)
    return geometric_sketch(PrincipalGrid(X), size, rng)


def uniform_sketch(n, size, rng):
    """``size`` of the ``n`` objects drawn uniformly without replacement (sorted, int64)."""
    return np.sort(rng.choice(n, size=size, replace=False)).astype(np.int64)


def geometric_sketch(grid, size, rng):
    """The geometric sketch of ``size`` objects over ``grid``, the objects' principal scores as
    :class:`PrincipalGrid` exposes them (in memory, or row block by row block elsewhere)."""
    return round_robin(geometric_cells(grid, size), size, rng)


# The principal axes come from sums over fixed 4096-object sub-blocks (global positions), added
# in order, and the scores are computed per sub-block: every float is then the same whether the
# rows are held in one array or in chunks whose first rows are multiples of 4096, so a chunked
# run draws the same sketch as the in-memory one.

def block_sums(block):
    """Column sums of each 4096-object sub-block of ``block`` (which starts on a multiple of 4096)."""
    from cclust._blocks import BLOCK

    return [block[a:a + BLOCK].sum(axis=0) for a in range(0, block.shape[0], BLOCK)]


def block_scatter(block, mean):
    """The scatter matrix ``(x - mean)^T (x - mean)`` of each 4096-object sub-block."""
    from cclust._blocks import BLOCK

    out = []
    for a in range(0, block.shape[0], BLOCK):
        centred = block[a:a + BLOCK] - mean
        out.append(centred.T @ centred)
    return out


def block_scores(block, mean, axes):
    """The rows' scores on ``axes`` (not shifted), computed per 4096-object sub-block."""
    from cclust._blocks import BLOCK

    return np.concatenate([(block[a:a + BLOCK] - mean) @ axes for a in range(0, block.shape[0], BLOCK)])


def add_in_order(parts):
    """Sum of a list of arrays, left to right from zero."""
    total = np.zeros_like(parts[0])
    for part in parts:
        total += part
    return total


def principal_axes(sums, scatter_of, n):
    """The mean and the leading principal axes (at most GRID_COMPONENTS, as columns) from the
    sub-block column sums, and ``scatter_of(mean)``, the sub-block scatter matrices."""
    mean = add_in_order(sums) / n
    values, vectors = np.linalg.eigh(add_in_order(scatter_of(mean)))
    order = np.argsort(values)[::-1][:min(GRID_COMPONENTS, mean.shape[0])]
    return mean, np.ascontiguousarray(vectors[:, order])


def grid_cells(shifted, side):
    """The integer cube coordinates of scores already shifted to be non-negative."""
    return np.floor(shifted / side).astype(np.int64)


class PrincipalGrid:
    """X's scores on its leading principal components, shifted to be non-negative, as the
    bisection of :func:`geometric_cells` reads them: ``span`` (the largest shifted score) and
    ``cells(side)``, the cube of each object numbered in order of its first object."""

    def __init__(self, X):
        mean, axes = principal_axes(block_sums(X), lambda m: block_scatter(X, m), X.shape[0])
        scores = block_scores(X, mean, axes)
        self.scores = scores - scores.min(axis=0)
        self.span = float(self.scores.max())
        self._enough = None    # (side, cells) of the last side found to have enough cubes

    def cells(self, side):
        if self._enough is not None and self._enough[0] == side:
            return self._enough[1]       # the bisection's answer, grouped by its last test
        from cclust.ensemble import identical_label_rows

        groups = identical_label_rows(grid_cells(self.scores, side))
        return np.arange(self.scores.shape[0]) if groups is None else groups[1]

    def enough(self, side, size):
        """Whether at least ``size`` cubes of this side are occupied (the cells of the last such
        side are kept: :func:`geometric_cells` returns them)."""
        cells = self.cells(side)
        if int(cells.max()) + 1 < size:
            return False
        self._enough = (side, cells)
        return True


def geometric_cells(grid, size):
    """The cube of each object for the largest side whose grid has at least ``size`` occupied
    cubes (bisection on the side, as geosketch searches it)."""
    span = grid.span or 1.0
    low, high = span * 1e-9, span * 2.0          # many cubes at low (one object each), one at high
    if not grid.enough(low, size):               # fewer distinct positions than the sketch
        return grid.cells(low)
    for _ in range(40):
        middle = np.sqrt(low * high)
        if grid.enough(middle, size):
            low = middle
        else:
            high = middle
        if high / low < 1.01:
            break
    return grid.cells(low)


def round_robin(cells, size, rng):
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


def label_dtype(k):
    """The narrowest unsigned integer type that holds ``k``: the labels ``0..k-1`` of every
    object at K = k take one byte each up to K = 255."""
    return np.min_scalar_type(max(int(k), 1))


def label_rows(rows, start, fits, sizes, rule, n_neighbors, n_threads):
    """The labels at every K of ``rows`` (objects ``start, start + 1, ...``) from each sketch,
    by :func:`propagate`'s rules, without keeping every sketch's labels: the first sketch's
    (K -> :func:`label_dtype` array), and per K the contingency table (``sizes[K]`` square,
    int64) of every pair of sketches (a, b), a < b, in that order, over these rows. Tables of
    row blocks add up to the tables of all the objects, whose adjusted Rand indices are the
    sketches' agreement.

    ``fits`` holds, per sketch, its objects (sorted), their features and K -> their labels.
    """
    from cclust import _assign

    count = rows.shape[0]
    labelled = []
    for chosen, fitted, labels in fits:
        inside = (chosen >= start) & (chosen < start + count)
        local = chosen[inside] - start
        outside = np.ones(count, dtype=bool)
        outside[local] = False
        new = np.ascontiguousarray(rows[outside])
        out = {}
        for k, lab in labels.items():
            out[k] = np.empty(count, dtype=label_dtype(k))
            if new.shape[0]:
                out[k][outside] = _assign.assign(fitted, lab, new, rule, n_neighbors, n_threads)
            out[k][local] = lab[inside]
        labelled.append(out)
    first = labelled[0]
    tables = {}
    for k, size in sizes.items():
        tables[k] = [np.bincount(labelled[a][k].astype(np.int64) * size + labelled[b][k], minlength=size * size)
                     .reshape(size, size) for a in range(len(fits)) for b in range(a + 1, len(fits))]
    return first, tables


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
