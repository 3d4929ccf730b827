"""The consensus criterion: a labelling's weighted average agreement with an ensemble, and the
metrics it knows by name.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.validation import label_vector
from cclust.base import method_info
from cclust.errors import ValidationError
from cclust.metrics._set_matching import _accuracy_from_table, _van_dongen_from_table, accuracy, van_dongen
from cclust.metrics._information import _ami_from_table, _nmi_from_table, _vi_from_table, ami, nmi, vi
from cclust.metrics._pair_counting import ari_from_table, _rand_from_table, ari, rand
from cclust.metrics._clue_measures import (
    _boorman_arabie_a_from_table,
    _boorman_arabie_c_from_table,
    _boorman_arabie_d_from_table,
    _boorman_arabie_e_from_table,
    _comembership_from_table,
    _fowlkes_mallows_from_table,
    _gv1_from_table,
    _jaccard_from_table,
    _katz_powell_from_table,
    _prediction_strength_from_table,
    _purity_from_table,
    _symdiff_from_table,
    boorman_arabie_a,
    boorman_arabie_c,
    boorman_arabie_d,
    boorman_arabie_e,
    comembership_distance,
    fowlkes_mallows,
    gv1_distance,
    jaccard,
    katz_powell,
    prediction_strength,
    purity,
    symdiff_distance,
)
from cclust.metrics._membership import (
    _diag_from_table,
    _euclidean_agreement_from_table,
    _euclidean_from_table,
    _manhattan_agreement_from_table,
    _manhattan_from_table,
    angle,
    diag,
    euclidean_agreement,
    euclidean_distance,
    mallows_distance,
    manhattan_agreement,
    manhattan_distance,
)


# -- consensus criterion -----------------------------------------------------------------------

#: Metrics consensus_score knows by name: registry name -> function of a contingency table.
_TABLE_METRICS = {
    "ari": ari_from_table,
    "nmi": _nmi_from_table,
    "ami": _ami_from_table,
    "rand": _rand_from_table,
    "vi": _vi_from_table,
    "van-dongen": _van_dongen_from_table,
    "accuracy": _accuracy_from_table,
    # Hornik (2005), clue's measures of hard partitions
    "euclidean-distance": _euclidean_from_table,
    "euclidean-agreement": _euclidean_agreement_from_table,
    "manhattan-distance": _manhattan_from_table,
    "manhattan-agreement": _manhattan_agreement_from_table,
    "mallows-distance": _manhattan_from_table,  # p = 1
    "angle": _diag_from_table,
    "diag": _diag_from_table,
    "fowlkes-mallows": _fowlkes_mallows_from_table,
    "jaccard": _jaccard_from_table,
    "katz-powell": _katz_powell_from_table,
    "purity": _purity_from_table,
    "boorman-arabie-a": _boorman_arabie_a_from_table,
    "boorman-arabie-d": _boorman_arabie_d_from_table,
    "boorman-arabie-c": _boorman_arabie_c_from_table,
    "boorman-arabie-e": _boorman_arabie_e_from_table,
    "comembership-distance": _comembership_from_table,
    "gv1-distance": _gv1_from_table,
    "symdiff-distance": _symdiff_from_table,
    "prediction-strength": _prediction_strength_from_table,
}

#: The label-level functions, accepted by consensus_score in place of their names.
_BY_FUNCTION = {ari: "ari", nmi: "nmi", ami: "ami", rand: "rand", vi: "vi",
                van_dongen: "van-dongen", accuracy: "accuracy",
                euclidean_distance: "euclidean-distance", euclidean_agreement: "euclidean-agreement",
                manhattan_distance: "manhattan-distance", manhattan_agreement: "manhattan-agreement",
                mallows_distance: "mallows-distance", angle: "angle", diag: "diag",
                fowlkes_mallows: "fowlkes-mallows", jaccard: "jaccard", katz_powell: "katz-powell",
                purity: "purity", boorman_arabie_a: "boorman-arabie-a", boorman_arabie_d: "boorman-arabie-d",
                boorman_arabie_c: "boorman-arabie-c", boorman_arabie_e: "boorman-arabie-e",
                comembership_distance: "comembership-distance", gv1_distance: "gv1-distance",
                symdiff_distance: "symdiff-distance", prediction_strength: "prediction-strength"}

#: The distances among them (lower is better, as each declares), for the methods that pick a best member.
DISSIMILARITIES = tuple(name for function, name in _BY_FUNCTION.items()
                        if method_info(function).higher_is_better is False)

#: Registered metrics that are not a comparison of two labellings, so cannot score against partitions.
_NOT_PAIRWISE = ("consensus-score",)


def _registered_metric(name):
    """A registered metric comparing two labellings (a plugin's, say), or None if no metric has that name."""
    import cclust

    if name not in cclust.available(kind="metric"):
        return None
    function = cclust.get(name, kind="metric")
    if name in _NOT_PAIRWISE or method_info(function).requires_X:
        raise ValidationError(
            f"metric {name!r} is not a comparison of two labellings (it "
            f"{'reads the data X' if method_info(function).requires_X else 'scores against an ensemble'}), so it "
            f"cannot score a labelling against each partition; pass one of {sorted(_TABLE_METRICS)} or a "
            "registered metric f(labels_a, labels_b)."
        )
    return function


def _resolve_metric(metric):
    """(function, reads) with reads "table" (a function of a contingency table) or "labels" (a
    registered metric called on the two labellings)."""
    if isinstance(metric, str):
        if metric in _TABLE_METRICS:
            return _TABLE_METRICS[metric], "table"
        function = _registered_metric(metric)
        if function is None:
            import difflib

            import cclust

            names = sorted(set(_TABLE_METRICS) | set(cclust.available(kind="metric")) - set(_NOT_PAIRWISE))
            close = difflib.get_close_matches(metric, names, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValidationError(
                f"metric must be one of {sorted(_TABLE_METRICS)}, another registered metric comparing two "
                f"labellings, or a callable on a contingency table, got {metric!r}.{hint}"
            )
        return function, "labels"
    if callable(metric):
        try:
            name = _BY_FUNCTION.get(metric)
        except TypeError:  # an unhashable callable
            name = None
        return (_TABLE_METRICS[name] if name else metric), "table"
    raise ValidationError(
        f"metric must be a metric name ({sorted(_TABLE_METRICS)}) or a callable on a contingency "
        f"table, got {metric!r} of type {type(metric).__name__}."
    )


def higher_is_better(metric: str | Callable[..., float]) -> bool:
    """Whether a larger value of ``metric`` means a better labelling, as the metric declares it.

    Every built-in metric declares its direction with :func:`cclust.base.declare`
    (``higher_is_better=True`` for the agreements such as ARI and NMI, ``False`` for the
    distances such as VI and for the criteria on X); a plugin metric declares it the same way.
    ``best`` and ``best-of`` read it to maximise or minimise.

    Parameters
    ----------
    metric : str or callable
        A registered metric name (built-in or plugin) or a metric function.

    Returns
    -------
    bool

    Raises
    ------
    ValidationError
        If ``metric`` names no registered metric, or declares no direction (the message names
        the metric and the fix: ``@declare(higher_is_better=...)`` on its function).

    Examples
    --------
    >>> from cclust.metrics import higher_is_better
    >>> higher_is_better("nmi"), higher_is_better("vi")
    (True, False)
    """
    if isinstance(metric, str):
        if metric in _TABLE_METRICS:
            return metric not in DISSIMILARITIES
        import cclust

        if metric not in cclust.available(kind="metric"):
            _resolve_metric(metric)          # raises the unknown-name error with its suggestion
        if metric in _NOT_PAIRWISE:
            raise ValidationError(f"metric {metric!r} takes its direction from the metric it averages; pass "
                                  "that metric's name instead.")
        function, what = cclust.get(metric, kind="metric"), f"metric {metric!r}"
    elif callable(metric):
        function, what = metric, f"metric {getattr(metric, '__name__', metric)!r}"
    else:
        raise ValidationError(f"metric must be a metric name or a metric function, got {metric!r}.")
    declared = method_info(function).higher_is_better
    if declared is None:
        raise ValidationError(
            f"{what} does not declare whether higher or lower values are better, so it cannot be "
            "maximised or minimised safely; decorate its function with "
            "@cclust.base.declare(higher_is_better=True) (an agreement) or "
            "@cclust.base.declare(higher_is_better=False) (a distance or a cost)."
        )
    return declared


def _as_ensemble(ensemble):
    if all(hasattr(ensemble, attr) for attr in ("n_samples", "offsets", "weights", "contingency")):
        return ensemble
    from cclust.ensemble import as_ensemble

    return as_ensemble(ensemble, "ensemble")


def consensus_score(labels: npt.ArrayLike, ensemble: Any, metric: str | Callable[..., float] = "nmi") -> float:
    """Weighted average agreement of a labelling with every partition of an ensemble.

    The consensus performance of Nguyen & Caruana (2007), eq. 4,
    ``Perf(pi*, Pi) = sum_i w_i f(pi*, pi_i)`` with the ensemble's weights ``w_i`` (equal
    weights give the paper's ``1/C``). One compiled pass builds the table of ``labels`` against
    every partition at once; ``f`` is then read from each partition's block. Objects missing
    from a partition are left out of its term.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        The labelling to score, e.g. a consensus partition.
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        The basic partitions (anything :class:`cclust.Ensemble` accepts).
    metric : str or callable, default="nmi"
        ``f``: one of "ari", "nmi" (sqrt normalisation, Nguyen & Caruana 2007, eq. 10), "ami", "rand", "vi"
        (Nguyen & Caruana 2007, eq. 9), "van-dongen" (Nguyen & Caruana 2007, eq. 7), "accuracy", or one of clue's
        measures (Hornik 2005) on hard partitions: "euclidean-distance", "euclidean-agreement",
        "manhattan-distance", "manhattan-agreement", "mallows-distance" (p = 1), "angle", "diag",
        "fowlkes-mallows", "jaccard", "katz-powell", "purity", "boorman-arabie-a",
        "boorman-arabie-d"; or one of those functions of this module; or the name of another
        registered metric ``f(labels_a, labels_b)`` (a plugin's), called on the objects each
        partition labels; or a callable ``f(table) -> float`` of an int64 contingency table of shape
        ``(n_clusters, K_i)`` whose rows are the clusters of ``labels`` and columns those of
        partition i (so ``labels`` plays ``labels_true``). For the distances
        (:data:`DISSIMILARITIES`) lower is better.

    Returns
    -------
    score : float

    Raises
    ------
    ValidationError
        If ``labels`` is not a 1-D labelling, ``ensemble`` labels a different number of
        objects, or ``metric`` is unknown.

    Examples
    --------
    >>> from cclust import Ensemble
    >>> from cclust.metrics import consensus_score
    >>> E = Ensemble([[0, 0, 1, 1], [0, 0, 1, 1], [0, 1, 1, 1]])
    >>> round(consensus_score([0, 0, 1, 1], E, metric="ari"), 4)
    0.6667
    """
    function, reads = _resolve_metric(metric)
    codes, k = label_vector(labels, "labels")
    ensemble = _as_ensemble(ensemble)
    if int(ensemble.n_samples) != codes.shape[0]:
        raise ValidationError(
            f"labels and ensemble must describe the same objects: labels has {codes.shape[0]} "
            f"labels, ensemble has n_samples = {int(ensemble.n_samples)}."
        )
    weights = np.asarray(ensemble.weights, dtype=np.float64)
    if reads == "table":
        table = np.asarray(ensemble.contingency(codes, k))
        offsets = np.asarray(ensemble.offsets)

        def term(i):
            return function(table[:, offsets[i]:offsets[i + 1]])
    else:
        members = np.asarray(ensemble.labels)

        def term(i):
            labelled = members[:, i] >= 0
            return function(codes[labelled], members[labelled, i])
    scores = np.empty(weights.shape[0])
    for i in range(weights.shape[0]):
        value = term(i)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ValidationError(
                f"metric must return a real number for each partition, got {value!r} for partition {i}."
            )
        scores[i] = value
    return float(np.dot(weights, scores))
