"""diceR's ``trim`` and ``reweigh`` (Chiu & Talhouk 2018): keep the best-ranked algorithms of an
ensemble, or weight each by its aggregated rank, at one K or at the K a multi-K evaluation chose."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cclust.ensemble import Ensemble, EnsembleLike, as_ensemble
from cclust.errors import ValidationError
from cclust.evaluation._result import _UNNAMED, EvaluationResult, MultiKEvaluation, _groups
from cclust.validation import check_int


def _check_pair(ensemble: Any, evaluation: object) -> tuple[Ensemble, list[str], list[np.ndarray]]:
    ensemble = as_ensemble(ensemble)
    if not isinstance(evaluation, EvaluationResult):
        raise ValidationError(f"evaluation must be the EvaluationResult of cclust.evaluation.evaluate, got "
                              f"{type(evaluation).__name__}.")
    names, groups = _groups(ensemble)
    unknown = [name for name in names if name not in evaluation.algorithms]
    if unknown:
        raise ValidationError(f"ensemble holds algorithms the evaluation did not rank: {unknown}; evaluated: "
                              f"{list(evaluation.algorithms)}.")
    return ensemble, names, groups


_K_SUFFIX = " k="


def _blocks(ensemble, evaluation):
    """[(K, the ensemble's partitions at K)] for the chosen K of a multi-K evaluation.

    ``ensemble`` is the dict evaluated (one Ensemble per K), the one Ensemble evaluated at every
    K, or what a multi-K :func:`trim`/:func:`reweigh` returned (provenance ``"name k=K"`` when
    several K were chosen, diceR's ``paste_k``).
    """
    if isinstance(ensemble, Mapping):
        missing = [k for k in evaluation.chosen_k if k not in ensemble]
        if missing:
            raise ValidationError(f"ensemble has no partitions at the chosen K {missing}; give the dict evaluated.")
        return [(k, as_ensemble(ensemble[k], f"ensemble[{k}]")) for k in evaluation.chosen_k]
    ensemble = as_ensemble(ensemble)
    provenance = ensemble.provenance or ()
    if provenance and all(_K_SUFFIX in p for p in provenance):
        parsed = [p.rsplit(_K_SUFFIX, 1) for p in provenance]
        blocks = []
        for k in evaluation.chosen_k:
            idx = np.flatnonzero([suffix == str(k) for _, suffix in parsed])
            if idx.shape[0]:
                part = ensemble.take(partitions=idx)
                blocks.append((k, Ensemble(part, provenance=[parsed[i][0] for i in idx])))
        if blocks:
            return blocks
    return [(k, ensemble) for k in evaluation.chosen_k]


def _join(blocks):
    """One Ensemble of the blocks side by side, each block's weight 1/len(blocks), provenance suffixed
    by K when there are several."""
    if len(blocks) == 1:
        return blocks[0][1]
    labels, weights, provenance = [], [], []
    for k, part in blocks:
        labels.append(part.labels)
        weights.append(np.asarray(part.weights) / len(blocks))
        provenance += [f"{p}{_K_SUFFIX}{k}" for p in (part.provenance or (_UNNAMED,) * part.n_partitions)]
    return Ensemble(np.column_stack(labels), weights=np.concatenate(weights), provenance=provenance)


def trim(ensemble: EnsembleLike | Mapping[int, EnsembleLike], evaluation: EvaluationResult | MultiKEvaluation,
         n_keep: int = 5) -> Ensemble:
    """Keep the partitions of the ``n_keep`` best-ranked algorithms (diceR's ``trim``).

    Parameters
    ----------
    ensemble : Ensemble or dict of int -> Ensemble
        The ensemble that was evaluated (or a part of it); with a :class:`MultiKEvaluation`,
        the dict (or single Ensemble) evaluated.
    evaluation : EvaluationResult or MultiKEvaluation
        From :func:`evaluate`.
    n_keep : int, default=5
        Algorithms to keep. With ``n_keep`` or fewer algorithms in ``ensemble`` it is returned
        unchanged, as in diceR.

    Returns
    -------
    Ensemble
        The kept partitions in their original order, with their weights (renormalised) and
        provenance. With several K, as diceR's trim over ``k.method``: at each K of
        ``evaluation.chosen_k``, the ``n_keep`` algorithms ranked best at that K; when several
        K are chosen their kept partitions are joined, each K weighing 1/(number of K), and the
        provenance reads ``"algorithm k=K"``.

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.evaluation import evaluate, trim
    >>> X, _ = load_iris()
    >>> E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 3, "pam": 3, "gmm": 3},
    ...                     random_state=0)
    >>> len(set(trim(E, evaluate(X, E, 3), n_keep=2).provenance))
    2
    """
    n_keep = check_int(n_keep, "n_keep", low=1)
    if isinstance(evaluation, MultiKEvaluation):
        return _join([(k, trim(part, evaluation.per_k[k], n_keep)) for k, part in _blocks(ensemble, evaluation)])
    ensemble, names, groups = _check_pair(ensemble, evaluation)
    if len(names) <= n_keep:
        return ensemble
    kept = set(sorted(names, key=evaluation.rank_of)[:n_keep])
    idx = np.sort(np.concatenate([g for name, g in zip(names, groups) if name in kept]))
    return ensemble.take(partitions=idx)


def reweigh(ensemble: EnsembleLike | Mapping[int, EnsembleLike],
            evaluation: EvaluationResult | MultiKEvaluation) -> Ensemble:
    """Weight each algorithm's partitions by the algorithm's aggregated rank (diceR's ``reweigh``).

    Of the m algorithms in ``ensemble``, the one at position p (1 = best, in
    ``evaluation.order``) gets the total weight ``(m + 1 - p) / (m (m + 1) / 2)``, shared among
    its partitions in proportion to their current weights. One algorithm: returned unchanged.
    With a :class:`MultiKEvaluation`, each chosen K is reweighed by its own ranking and the K
    are joined as :func:`trim` joins them.

    Returns
    -------
    Ensemble

    Examples
    --------
    >>> import cclust
    >>> from cclust.datasets import load_iris
    >>> from cclust.evaluation import evaluate, reweigh
    >>> X, _ = load_iris()
    >>> E = cclust.generate("heterogeneous", X, 3, generators={"kmeans": 2, "pam": 1},
    ...                     random_state=0)
    >>> sorted(round(w, 4) for w in reweigh(E, evaluate(X, E, 3)).weights.tolist())
    [0.3333, 0.3333, 0.3333]
    """
    if isinstance(evaluation, MultiKEvaluation):
        return _join([(k, reweigh(part, evaluation.per_k[k])) for k, part in _blocks(ensemble, evaluation)])
    ensemble, names, groups = _check_pair(ensemble, evaluation)
    m = len(names)
    if m == 1:
        return ensemble
    position = {name: p + 1 for p, name in enumerate(sorted(names, key=evaluation.rank_of))}
    current = np.asarray(ensemble.weights, dtype=np.float64)
    weights = np.zeros_like(current)
    for name, g in zip(names, groups):
        share = current[g] / current[g].sum() if current[g].sum() > 0 else np.full(g.shape[0], 1.0 / g.shape[0])
        weights[g] = (m + 1 - position[name]) / (m * (m + 1) / 2) * share
    return ensemble.with_weights(weights)
