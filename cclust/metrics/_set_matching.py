"""Set-matching criteria of two labellings: van Dongen's distance and accuracy.
"""
from __future__ import annotations

import numpy.typing as npt

from cclust.base import declare
from cclust.metrics._tables import _labels_table, _marginals, _max_per


def _van_dongen_from_table(table, normalize=True):
    rows, _ = _marginals(table)
    n = int(rows.sum())
    distance = 2 * n - int(_max_per(table, axis=1).sum()) - int(_max_per(table, axis=0).sum())
    if not normalize:
        return float(distance)
    return distance / (2.0 * n) if n else 0.0


def _accuracy_from_table(table):
    rows, _ = _marginals(table)
    n = int(rows.sum())
    return int(_max_per(table, axis=0).sum()) / n if n else 1.0


@declare(higher_is_better=False)
def van_dongen(labels_true: npt.ArrayLike, labels_pred: npt.ArrayLike, *, normalize: bool = True) -> float:
    """Van Dongen's set-matching distance between two labellings.

    Nguyen & Caruana (2007), eq. 7:
    ``(2n - sum_k max_k' m_kk' - sum_k' max_k m_kk') / (2n)`` where m is the contingency table.
    Each cluster of either labelling is matched to the cluster of the other that it overlaps
    most; the distance counts the objects outside those matches.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        First labelling.
    labels_pred : array-like of shape (n_samples,)
        Second labelling.
    normalize : bool, default=True
        If True, return eq. 7 as printed: divided by ``2n``, so the distance lies in
        ``[0, 1)`` (van Dongen's original count never reaches 2n). If False, return van
        Dongen's unnormalised count ``2n - sum max - sum max`` (a whole number, as a float).

    Returns
    -------
    distance : float
        0.0 exactly when the partitions are identical; symmetric; lower is better.

    Examples
    --------
    >>> from cclust.metrics import van_dongen
    >>> van_dongen([0, 0, 1, 1], [1, 1, 0, 0])
    0.0
    >>> van_dongen([0, 0, 0, 1], [0, 0, 1, 1])
    0.25
    >>> van_dongen([0, 0, 0, 1], [0, 0, 1, 1], normalize=False)
    2.0
    """
    return _van_dongen_from_table(_labels_table(labels_true, labels_pred), bool(normalize))


@declare(higher_is_better=True)
def accuracy(labels_true: npt.ArrayLike, labels_pred: npt.ArrayLike) -> float:
    """Clustering accuracy (purity): each predicted cluster votes its majority true class.

    Nguyen & Caruana (2007), eq. 12: ``sum_k majority(C_k) / n`` where
    ``majority(C_k)`` is the number of objects of predicted cluster k that carry its most
    frequent true label. Not symmetric, and not the one-to-one (Hungarian) matched accuracy:
    several clusters may vote for the same class, so splitting clusters never lowers it and
    every object alone scores 1.0.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground truth class labels.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate.

    Returns
    -------
    accuracy : float
        Between ``max class size / n`` and 1.0; higher is better.

    Examples
    --------
    >>> from cclust.metrics import accuracy
    >>> accuracy(["a", "a", "a", "b", "b", "b"], [0, 0, 1, 1, 1, 1])
    0.8333333333333334
    """
    return _accuracy_from_table(_labels_table(labels_true, labels_pred))
