"""Pair-counting agreement of two labellings: the Rand index and the adjusted Rand index.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from cclust.base import declare
from cclust.metrics._tables import _cells, _labels_table, _marginals, _sum_of_squares


def _pair_confusion(table):
    """(tn, fp, fn, tp) pair counts as exact Python ints (ordered pairs, as scikit-learn)."""
    rows, cols = _marginals(table)
    n = int(rows.sum())
    cells = _cells(table)[2] if sp.issparse(table) else np.asarray(table).reshape(-1)
    sum_squares = _sum_of_squares(cells)
    tp = sum_squares - n
    fp = _sum_of_squares(cols) - sum_squares
    fn = _sum_of_squares(rows) - sum_squares
    tn = n * n - fp - fn - sum_squares
    return tn, fp, fn, tp


def ari_from_table(table):
    tn, fp, fn, tp = _pair_confusion(table)
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def _rand_from_table(table):
    tn, fp, fn, tp = _pair_confusion(table)
    numerator, denominator = tn + tp, tn + fp + fn + tp
    if numerator == denominator or denominator == 0:
        return 1.0
    return float(numerator) / float(denominator)


# -- label-level metrics -----------------------------------------------------------------------

@declare(higher_is_better=True)
def ari(labels_true: npt.ArrayLike, labels_pred: npt.ArrayLike) -> float:
    """Adjusted Rand index: the Rand index adjusted for chance.

    This is the normalised Rand index :math:`R_n` of Li & Liu (2018), eq. 8, equal
    to Hubert & Arabie's ARI and to ``sklearn.metrics.adjusted_rand_score``, computed in exact
    integer arithmetic from the contingency table (one O(n) compiled pass, no sort).

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground truth class labels to be used as a reference.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate.

    Returns
    -------
    ari : float
        Similarity score between -0.5 and 1.0. Random labelings have an ARI close to 0.0.
        1.0 stands for perfect match (also when there is one object, or both labellings put
        every object in one cluster, or both put every object alone).

    See Also
    --------
    rand : The Rand index, unadjusted.
    consensus_score : The average ARI (or any metric) against the partitions of an ensemble.

    Examples
    --------
    >>> from cclust.metrics import ari
    >>> ari([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    >>> round(ari([0, 0, 1, 2], [0, 0, 1, 1]), 2)
    0.57
    """
    return ari_from_table(_labels_table(labels_true, labels_pred))


@declare(higher_is_better=True)
def rand(labels_true: npt.ArrayLike, labels_pred: npt.ArrayLike) -> float:
    """Rand index: the fraction of object pairs on which two labellings agree.

    ``1 - rand`` is the Rand distance of Nguyen & Caruana (2007), eq. 8. Equal to
    ``sklearn.metrics.rand_score``.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground truth class labels to be used as a reference.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate.

    Returns
    -------
    ri : float
        Similarity score between 0.0 and 1.0, inclusive, 1.0 stands for perfect match (and for
        a single object, which has no pairs).

    Examples
    --------
    >>> from cclust.metrics import rand
    >>> rand([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    >>> round(rand([0, 0, 1, 2], [0, 0, 1, 1]), 2)
    0.83
    """
    return _rand_from_table(_labels_table(labels_true, labels_pred))
