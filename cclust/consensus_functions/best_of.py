"""Selecting among consensus methods: run several, keep the labels that agree most with the
ensemble (the average-NMI criterion of Strehl & Ghosh 2002)."""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust.consensus_functions._prepare import weights_on_the_ensemble
from cclust.validation import check_random_state, memory_budget
from cclust.errors import MemoryBudgetError, ValidationError
from cclust.base import accepts, declare, method_info
from cclust.metrics import higher_is_better
from cclust.result import ConsensusResult
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike

__all__ = ["best_of", "DEFAULT_METHODS"]

#: Fast, linear-memory methods that all take missing labels.
DEFAULT_METHODS = ("kcc", "hbgf", "mcla")


@weights_on_the_ensemble
@declare(handles_missing=True, object_order="distribution")
def best_of(ensemble: EnsembleLike, n_clusters: int, *, methods: Sequence[str] = DEFAULT_METHODS, metric: str = "nmi",
            params: Mapping[str, Mapping[str, Any]] | None = None, X: npt.ArrayLike | None = None,
            max_bytes: int | None = None,
            random_state: RandomStateLike = None) -> ConsensusResult:
    """The candidate consensus whose labels agree most with the ensemble (Strehl & Ghosh 2002).

    Every method named in ``methods`` is looked up in the registry and called with the same
    ensemble, ``n_clusters`` and ``random_state``; its labels are scored by the registered
    metric ``consensus-score`` (:func:`cclust.metrics.consensus_score`: the weighted average
    agreement with the partitions, with ``metric="nmi"`` Strehl & Ghosh's (2002) average NMI
    criterion for choosing among consensus functions), and the best-scoring labels are returned
    (ties: the first in ``methods``). A method that needs the data (``requires_X``) gets ``X``
    when it is given and is skipped with a note otherwise; methods that take ``X`` optionally
    get it when given. A candidate that raises is recorded with its message and the others go
    on; if every candidate fails or is skipped, a ValidationError lists why (a MemoryBudgetError
    when every failure was one). Candidates run one after another and only the best result so
    far is kept, so the peak memory is the largest candidate's, not their sum.

    The declared metadata are those of the default set (kcc, hbgf, mcla: all take missing
    labels; their results depend on object order only in distribution). A candidate that
    cannot take missing labels fails on such an ensemble and is reported in
    ``extras["failures"]``.

    Parameters
    ----------
    ensemble : Ensemble or array-like of shape (n_samples, n_partitions)
        Its partition weights are those every candidate and the score see.
    n_clusters : int
    methods : sequence of str, default=("kcc", "hbgf", "mcla")
        Registered consensus-function names, at least one, no repeats, not "best-of" itself.
    metric : str, default="nmi"
        The agreement passed to ``consensus-score``: a name it knows or another registered metric
        comparing two labellings. The winner has the highest score, or the lowest for a metric
        that declares lower is better ("vi", "van-dongen" and the other distances;
        :func:`cclust.metrics.higher_is_better`); a metric that declares neither is refused.
    params : dict, default=None
        Extra keyword arguments per method name, e.g. ``{"kcc": {"utility": "uh"}}``.
    X : array-like of shape (n_samples, n_features), default=None
        The data, for candidates that use it.
    max_bytes : int, default=None
        Memory budget passed to every candidate that takes ``max_bytes`` (unless its ``params``
        set one); a candidate refused by its guard is recorded as failed and the others go on.
    random_state : int, Generator or None
        An int is passed unchanged to every candidate (so the winner's labels are those of
        calling it alone with that seed); a Generator or None first draws one int seed.

    Returns
    -------
    ConsensusResult
        The winner's labels; ``objective`` its score; ``n_iter``/``converged`` the winner's.
        ``extras["winner"]`` its name, ``extras["scores"]`` a dict name -> score for every
        candidate (NaN for a failed or skipped one), ``extras["failures"]`` name -> message,
        ``extras["skipped"]`` name -> reason.

    Examples
    --------
    >>> import numpy as np
    >>> from cclust.consensus_functions.best_of import best_of
    >>> labels = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 1, 0], [1, 1, 1]])
    >>> res = best_of(labels, 2, random_state=0)
    >>> res.labels.tolist(), sorted(res.extras["scores"])
    ([0, 0, 1, 1, 1], ['hbgf', 'kcc', 'mcla'])
    """
    import cclust
    from cclust._pipeline import call_method
    from cclust.ensemble import as_ensemble

    if isinstance(methods, str) or not all(isinstance(m, str) for m in np.atleast_1d(np.asarray(methods, dtype=object))):
        raise ValidationError(f"methods must be a sequence of registered consensus names, got {methods!r}.")
    methods = tuple(methods)
    if not methods:
        raise ValidationError("methods must name at least one consensus function.")
    if len(set(methods)) != len(methods):
        raise ValidationError(f"methods has repeated names: {list(methods)!r}.")
    if "best-of" in methods:
        raise ValidationError("methods cannot contain 'best-of' itself.")
    if not isinstance(metric, str):
        raise ValidationError(f"metric must be a metric name, got {metric!r}.")
    params = {} if params is None else params
    if not isinstance(params, dict) or not all(isinstance(v, dict) for v in params.values()):
        raise ValidationError("params must be a dict mapping method names to dicts of keyword arguments.")
    unknown = sorted(set(params) - set(methods))
    if unknown:
        raise ValidationError(f"params names methods that are not candidates: {unknown!r}.")
    fns = {name: cclust.get(name, kind="consensus") for name in methods}   # unknown names raise here
    score = cclust.get("consensus-score", kind="metric")
    E = as_ensemble(ensemble)
    # Validates the metric name once, up front, and its declared direction.
    score(np.zeros(E.n_samples, dtype=np.int64), E, metric=metric)
    sign = 1.0 if higher_is_better(metric) else -1.0
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed = random_state
    else:
        seed = int(check_random_state(random_state).integers(2**63 - 1))
    if max_bytes is not None:
        memory_budget(max_bytes)                        # validates the argument
    scores, failures, skipped, refused = {}, {}, {}, set()
    winner, res = None, None
    for name in methods:
        fn = fns[name]
        scores[name] = float("nan")
        if method_info(fn).requires_X and X is None:
            skipped[name] = f"{name} needs the data: pass X="
            continue
        kwargs = dict(params.get(name, {}))
        if max_bytes is not None and "max_bytes" not in kwargs and accepts(fn, "max_bytes", var_keyword=False):
            kwargs["max_bytes"] = max_bytes
        try:
            candidate = call_method(fn, E, n_clusters, kwargs, seed, X, None, False)
        except Exception as exc:  # noqa: BLE001 - any candidate's failure is reported, not fatal
            failures[name] = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, MemoryBudgetError):
                refused.add(name)
            continue
        scores[name] = float(score(candidate.labels, E, metric=metric))
        # ties go to the first in methods, which is already kept
        if winner is None or sign * scores[name] > sign * scores[winner]:
            winner, res = name, candidate
        del candidate
    if winner is None:
        why = "; ".join(f"{k}: {v}" for k, v in {**failures, **skipped}.items())
        error = MemoryBudgetError if failures and set(failures) == refused else ValidationError
        raise error(f"every candidate of best-of failed or was skipped ({why}).")
    return ConsensusResult.from_labels(
        res.labels, objective=scores[winner],  # type: ignore[union-attr]  # res is set with winner
        objective_name=f"average {metric} with the ensemble (Strehl & Ghosh 2002; "
                       f"{'lower' if sign < 0 else 'higher'} is better)",
        n_iter=res.n_iter, converged=res.converged, method="best-of",  # type: ignore[union-attr]
        extras={"winner": winner, "scores": scores, "failures": failures, "skipped": skipped, "metric": metric})
