"""What an extension of cclust builds on: the kinds, their contracts and the method metadata.

A plugin (or a built-in, which uses the same door) needs from cclust:

* :data:`KINDS`, the four kinds of registered object and their entry-point groups;
* :func:`declare` and :class:`MethodInfo`, what a consensus function says about itself (needs
  ``X``, chooses its K, takes missing labels, depends on object order), and a metric about its
  direction (higher or lower is better);
* :class:`Utility`, the type of a KCC utility (Wu et al. 2015): a convex function the compiled
  K-means passes can evaluate;
* :func:`check_contract`, the check the registry runs on every object it loads, which a plugin
  author can run on their own function in a test.

The argument checks, random state and memory budget a plugin uses are in
:mod:`cclust.validation`; the graph toolkit of the METIS-based methods in :mod:`cclust.graph`;
the conformance kit in :mod:`cclust.testing`. This module imports neither the registry nor any
method, so anything can import it.

The API a plugin sees is versioned by :data:`API_VERSION`: a plugin pins the cclust releases
whose API it was written for (``cclust>=0.1,<0.2`` while the API version is 1).
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from cclust.errors import ContractError, ValidationError
from cclust.validation import check_float, memory_budget_scope, renamed_threads

if TYPE_CHECKING:
    from cclust.ensemble import Ensemble


class PartitionSizes(Protocol):
    """What a utility reads of an ensemble besides its labels: an :class:`cclust.Ensemble`, a
    :class:`cclust.soft.SoftEnsemble` or a :class:`cclust.dask.DaskEnsemble`."""

    @property
    def n_partitions(self) -> int: ...
    @property
    def n_clusters(self) -> npt.NDArray[np.int64]: ...
    @property
    def offsets(self) -> npt.NDArray[np.int64]: ...
    @property
    def weights(self) -> npt.NDArray[np.float64]: ...
    @property
    def cluster_sizes(self) -> npt.NDArray[Any]: ...

__all__ = ["API_VERSION", "KINDS", "MethodInfo", "OBJECT_ORDERS", "declare", "method_info", "accepts",
           "Utility", "FAMILIES", "check_contract"]

#: Version of the plugin-facing API (this module, :mod:`cclust.validation`, :mod:`cclust.graph`,
#: :mod:`cclust.testing`, the Ensemble and ConsensusResult). It changes, with the minor release
#: of cclust, only when a change would break a plugin written for the previous one.
API_VERSION = 1

#: kind -> entry-point group
KINDS = MappingProxyType({
    "consensus": "cclust.consensus",
    "utility": "cclust.utilities",
    "generator": "cclust.generators",
    "metric": "cclust.metrics",
})


@dataclass(frozen=True)
class MethodInfo:
    """What a consensus function or a metric declares about itself (set with :func:`declare`).

    Attributes
    ----------
    requires_X : bool
        A consensus function needs the original features as ``X=`` (WOSP, WOHB, GKCC); a
        metric is an internal criterion ``fn(X, labels)`` (compactness) rather than a
        comparison of two labellings.
    chooses_n_clusters : bool
        The function can choose the number of clusters itself and accepts ``n_clusters=None``.
    handles_missing : bool
        The function accepts ensembles with missing labels (-1).
    object_order : {"exact", "distribution"}
        How the result depends on the order of the objects (the rows of the ensemble and of
        ``X``). ``"exact"``: for a fixed ``random_state``, permuting the objects permutes the
        labels and nothing else. ``"distribution"``: the method draws random objects (seeds,
        tie-breaks) by position, so a permutation changes which draw each object gets; the
        result is the same only in distribution, and the conformance kit then asks for exact
        invariance only where the answer is unambiguous (identical partitions).
    accepts_soft : bool
        The function accepts a :class:`cclust.soft.SoftEnsemble` holding soft (fuzzy) partitions
        (membership matrices; Hornik 2005). A function that does not is only ever handed a hard
        :class:`cclust.Ensemble`: :func:`cclust.consensus` converts a SoftEnsemble whose
        partitions are all hard and refuses one with fractional memberships.
    generates_ensemble : bool
        The function makes its own basic partitions from ``X`` (U-SENC's U-SPEC clusterers) and
        accepts ``ensemble=None``; an ensemble passed in joins them. The estimator and the
        ``cclust run`` command then generate nothing for it: the partitions of another generator
        would only dilute its own. Implies ``requires_X``.
    higher_is_better : bool or None
        For a metric: True when a larger value means a better labelling (ARI, NMI, Jaccard),
        False for a distance or a cost (VI, the k-means objective). Methods that pick the best of
        several labellings by a metric (``best``, ``best-of``) read it to know whether to
        maximise or minimise. None: the metric does not say, and those methods refuse it by name
        rather than guess.
    """

    requires_X: bool = False
    chooses_n_clusters: bool = False
    handles_missing: bool = True
    object_order: str = "exact"
    accepts_soft: bool = False
    generates_ensemble: bool = False
    higher_is_better: bool | None = None


#: The values of :attr:`MethodInfo.object_order`.
OBJECT_ORDERS = ("exact", "distribution")


_F = TypeVar("_F", bound=Callable[..., Any])


def declare(*, requires_X: bool = False, chooses_n_clusters: bool = False, handles_missing: bool = True,
            object_order: str = "exact", accepts_soft: bool = False, generates_ensemble: bool = False,
            higher_is_better: bool | None = None) -> Callable[[_F], _F]:
    """Decorator recording what a consensus function or a metric declares (:class:`MethodInfo`).

    A function taking ``max_bytes`` is returned wrapped: each call runs inside
    :func:`cclust.validation.memory_budget_scope` of the ``max_bytes`` it is given, so that every
    memory guard of the call (those of the Ensemble views and functions it does not pass
    ``max_bytes`` to included) answers to it, and the ``max_bytes=`` a refusal asks for lifts
    it. The wrapper keeps the function's name, docstring and signature.

    Raises
    ------
    cclust.errors.ValidationError
        If ``object_order`` is not one of ``"exact"``, ``"distribution"``, or ``generates_ensemble``
        is set without ``requires_X`` (partitions made from X need X), or ``higher_is_better``
        is not True, False or None.

    Examples
    --------
    >>> from cclust.base import declare, method_info
    >>> @declare(requires_X=True)
    ... def mine(ensemble, n_clusters, *, X, random_state=None):
    ...     ...
    >>> method_info(mine).requires_X
    True
    >>> @declare(higher_is_better=False)
    ... def mismatch(labels_a, labels_b):
    ...     return float(sum(a != b for a, b in zip(labels_a, labels_b)))
    >>> method_info(mismatch).higher_is_better
    False
    """
    if object_order not in OBJECT_ORDERS:
        raise ValidationError(f"object_order must be one of {', '.join(map(repr, OBJECT_ORDERS))}, "
                              f"got {object_order!r}.")
    if generates_ensemble and not requires_X:
        raise ValidationError("generates_ensemble=True means the function makes its partitions from X: declare "
                              "requires_X=True as well.")
    if higher_is_better is not None and not isinstance(higher_is_better, (bool, np.bool_)):
        raise ValidationError(f"higher_is_better must be True (larger is better), False (smaller is better) or "
                              f"None (not declared), got {higher_is_better!r}.")
    info = MethodInfo(requires_X=requires_X, chooses_n_clusters=chooses_n_clusters,
                      handles_missing=handles_missing, object_order=object_order,
                      accepts_soft=bool(accepts_soft), generates_ensemble=bool(generates_ensemble),
                      higher_is_better=None if higher_is_better is None else bool(higher_is_better))

    def mark(fn: _F) -> _F:
        try:
            parameters = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):  # a callable whose signature cannot be read
            parameters = []
        if "max_bytes" in parameters:
            fn = _within_its_budget(fn, parameters.index("max_bytes"))
        fn.__cclust_info__ = info  # type: ignore[attr-defined]
        return fn

    return mark


def _within_its_budget(fn: _F, position: int) -> _F:
    """``fn`` run inside :func:`cclust.validation.memory_budget_scope` of the ``max_bytes`` it is
    called with (by keyword, or as its ``position``-th argument): every guard of the call,
    including those of the views and functions that are not passed ``max_bytes``, then answers
    to it, and the ``max_bytes=`` a refusal names lifts it."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        max_bytes = kwargs.get("max_bytes", args[position] if len(args) > position else None)
        with memory_budget_scope(max_bytes):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def method_info(fn: Callable[..., Any]) -> MethodInfo:
    """The :class:`MethodInfo` of a consensus function (defaults if it declares none)."""
    return getattr(fn, "__cclust_info__", MethodInfo())


def accepts(fn: Callable[..., Any], keyword: str, *, var_keyword: bool = True, unknown: bool = False) -> bool:
    """Whether ``fn`` can be called with ``keyword=``.

    ``var_keyword``: whether a ``**params`` catch-all counts as accepting it. ``unknown``: the
    answer when the signature cannot be read (some builtins and C extensions).
    """
    try:
        names, var = _keywords(fn)
    except TypeError:  # an unhashable callable: read its signature each time
        try:
            names, var = _keywords.__wrapped__(fn)
        except (TypeError, ValueError):
            return unknown
    except ValueError:
        return unknown
    return keyword in names or (var_keyword and var)


@functools.lru_cache(maxsize=256)
def _keywords(fn):
    """The parameter names of ``fn`` and whether it takes ``**params``, read once per callable:
    select_k asks the same generator and method for every resample, and reading a signature
    costs about as much as a small k-means run."""
    params = inspect.signature(fn).parameters
    return frozenset(params), any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


#: distance family -> code of the compiled engine
FAMILIES = {"uc": 0, "uh": 1, "ucos": 2, "ulp": 3}

#: smoothing of uh's -log2(m[l] + eps)
UH_EPS = 2.2e-16


@dataclass(frozen=True)
class Utility:
    """A KCC utility: its convex function, point-to-centroid distance and normalisation.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"nucos"``.
    family : {"uc", "uh", "ucos", "ulp"}
        The distance family (Wu et al. 2015; Becerra Tomé, Table 1) the compiled engine evaluates.
    normalized : bool, default=False
        Whether U is divided by ``|mu(P^(i))|`` (the NU forms of Wu et al. 2015).
    p : float, default=None
        The exponent of ``ulp`` (> 1; Wu et al. 2015 use 5 and 8). Must be None for other families.
    description : str
        One line shown by ``cclust.available()``.
    """

    name: str
    family: str
    normalized: bool = False
    p: float | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValidationError(f"family must be one of {sorted(FAMILIES)}, got {self.family!r}.")
        if self.family == "ulp":
            if self.p is not None:
                object.__setattr__(self, "p", check_float(self.p, "p", low=1, low_open=True))
        elif self.p is not None:
            raise ValidationError(f"p only applies to the ulp family, not {self.family!r}.")

    @property
    def code(self) -> int:
        """The compiled engine's distance code."""
        return FAMILIES[self.family]

    @property
    def exponent(self) -> float:
        """p for ``ulp`` (checked to be set), 0.0 otherwise."""
        if self.family != "ulp":
            return 0.0
        if self.p is None:
            raise ValidationError(
                f"utility {self.name!r} needs p > 1 (the KCC papers use p=5 and p=8); pass p=..."
            )
        return float(self.p)

    def with_params(self, p: float | None = None) -> Utility:
        """This utility with its parameter set (``p`` for ``ulp``)."""
        if p is None:
            return self
        if self.family != "ulp":
            raise ValidationError(f"utility {self.name!r} takes no p; only ulp and nulp do.")
        return replace(self, p=p)

    def mu(self, dist: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """mu applied to each row of ``dist`` (rows are probability vectors)."""
        dist = np.asarray(dist, dtype=np.float64)
        if self.family == "uc":
            return (dist ** 2).sum(-1)
        if self.family == "uh":
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.where(dist > 0, dist * np.log2(np.where(dist > 0, dist, 1.0)), 0.0)
            return terms.sum(-1)
        if self.family == "ucos":
            return np.sqrt((dist ** 2).sum(-1))
        p = self.exponent
        return (dist ** p).sum(-1) ** (1.0 / p)

    def normalizers(self, ensemble: PartitionSizes) -> npt.NDArray[np.float64]:
        """``|mu(P^(i))|`` per partition for the normalised forms, ones otherwise."""
        if not self.normalized:
            return np.ones(ensemble.n_partitions)
        out = np.abs(self._size_mus(ensemble))
        # A partition with one cluster has H = 0 under uh: it carries no information, and
        # dividing by zero would give it infinite weight. Give it weight zero instead.
        return np.where(out > 0, out, np.inf)

    def _size_mus(self, ensemble):
        """``mu(P^(i))`` of every partition's cluster-size distribution over the objects it labels.

        Partitions of the same K_i are stacked and evaluated together (a few NumPy calls per
        distinct K_i, not per partition: select_k's route calls this for thousands of small
        ensembles). Every reduction runs along the last axis of each row, as it would on the
        partition alone, so the values are bit-for-bit those of one call per partition."""
        sizes = ensemble.cluster_sizes.astype(np.float64)
        out = np.empty(ensemble.n_partitions)
        for idx, cols in _width_groups(ensemble):
            counts = sizes[cols]                                     # (g, K_i)
            out[idx] = self._row_mus(counts / counts.sum(-1)[:, None])
        return out

    def effective_weights(self, ensemble: PartitionSizes) -> npt.NDArray[np.float64]:
        """``w_i / |mu(P^(i))|`` (normalised) or w_i: the weights the compiled distance uses."""
        return ensemble.weights / self.normalizers(ensemble)

    def gamma_offset(self, ensemble: PartitionSizes) -> float:
        """sum_i w'_i (mu(e) - mu(P^(i))) with w' the effective weights and e a one-hot vector.

        On a complete ensemble every f of Wu et al. (2015; Becerra Tomé, Table 1) is a Bregman divergence whose centroid is
        the cluster mean, so sum_x f(x, m_k) = sum_k n_k (mu(e) - mu(m_k)) per partition and
        Gamma = gamma_offset - kmeans_objective / n exactly (up to uh's eps): restarts can be
        ranked without a contingency pass each.
        """
        point = float(self.mu(np.array([1.0])))
        mus = self._size_mus(ensemble)
        weights = self.effective_weights(ensemble)
        return float(np.where(weights > 0, weights * (point - mus), 0.0).sum())

    def partition_utilities(self, ensemble: PartitionSizes, table: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        """U(pi, pi_i) for every partition from the batched contingency table (K, sum K_i).

        ``U = sum_k p_k mu(P_k) - mu(P)`` over the clusters k of the labelling with members
        labelled in pi_i (Wu et al. 2015). Partitions of the same K_i are evaluated together,
        as in :meth:`_size_mus`; a partition whose block has an empty row is evaluated alone,
        its sum over k running over the non-empty rows. The values are bit-for-bit those of one pass per partition."""
        values = np.empty(ensemble.n_partitions)
        norm = self.normalizers(ensemble)
        for idx, cols in _width_groups(ensemble):
            blocks = np.ascontiguousarray(table[:, cols].astype(np.float64).transpose(1, 0, 2))  # (g, K, K_i)
            rows = blocks.sum(2)
            full = (rows > 0).all(1)
            if full.any():
                values[idx[full]] = self._utilities(blocks[full], rows[full])
            for j in np.flatnonzero(~full).tolist():
                values[idx[j]] = self._utilities(blocks[j:j + 1], rows[j:j + 1], rows[j] > 0)[0]
        finite = np.isfinite(norm)
        return np.where(finite, values / np.where(finite, norm, 1.0), 0.0)

    def _utilities(self, blocks, rows, keep=slice(None)):
        """``sum_k p_k mu(P_k) - mu(P)`` of each stacked (K, K_i) block, over its rows ``keep``
        (those with members; p_k and P use every row, as the totals include the empty ones)."""
        total = rows.sum(1)
        P = blocks.sum(1) / total[:, None]
        p_k = rows[:, keep] / total[:, None]
        P_k = blocks[:, keep] / rows[:, keep][:, :, None]
        return (p_k * self.mu(P_k)).sum(1) - self._row_mus(P)

    def _row_mus(self, dists):
        """``mu`` of each row of a (g, m) array of distributions, each as ``mu`` gives it for that
        row alone: ulp's final root of one row is NumPy's scalar power, which may round
        differently from its array power, so ulp rows go one at a time."""
        if self.family != "ulp":
            return self.mu(dists)
        return np.array([float(self.mu(row)) for row in dists])

    @renamed_threads
    def consensus_value(self, ensemble: Ensemble, labels: npt.ArrayLike, n_clusters: int | None = None, *,
                        n_jobs: int | None = None) -> float:
        """Gamma = sum_i w_i U(pi, pi_i) (Wu et al. 2015, eq. 1) of a consensus labelling."""
        table = ensemble.contingency(labels, n_clusters, n_jobs=n_jobs)
        return float(ensemble.weights @ self.partition_utilities(ensemble, table))


def _width_groups(ensemble):
    """The partitions grouped by K_i: (partition indices, (g, K_i) one-hot column indices) per K_i."""
    widths = ensemble.n_clusters
    for width in np.unique(widths).tolist():
        idx = np.flatnonzero(widths == width)
        yield idx, ensemble.offsets[idx][:, None] + np.arange(width)


# -- the contracts of the kinds ---------------------------------------------------------------------------------

def _parameters(obj, what):
    try:
        return inspect.signature(obj).parameters
    except (TypeError, ValueError) as exc:
        raise ContractError(f"{what}: cannot read its signature ({exc}).") from None


def _check_no_varargs(params, what):
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params.values()):
        raise ContractError(f"{what} takes *args; name every parameter so it can be checked and documented.")


def _positional(params):
    return [p for p in params.values()
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]


def _check_consensus(obj, what):
    if not callable(obj):
        raise ContractError(f"{what} must be callable, got {type(obj).__name__}.")
    params = _parameters(obj, what)
    _check_no_varargs(params, what)
    positional = _positional(params)
    signature = "fn(ensemble, n_clusters, *, random_state=None, **params)"
    if len(positional) < 2:
        names = ", ".join(p.name for p in positional) or "none"
        raise ContractError(
            f"{what} takes {len(positional)} positional parameter(s) ({names}), not two: the first is the "
            f"ensemble and the second n_clusters, as in {signature}."
        )
    if positional[1].name != "n_clusters":
        raise ContractError(
            f"{what}: the second parameter is {positional[1].name!r}, not n_clusters (callers pass "
            f"n_clusters=... by name); rename it, as in {signature}."
        )
    if "random_state" not in params:
        raise ContractError(f"{what} must accept a random_state keyword (int, Generator or None).")
    info = method_info(obj)
    if info.requires_X and "X" not in params:
        raise ContractError(f"{what} declares requires_X=True but has no X parameter.")


def _check_generator(obj, what):
    if not callable(obj):
        raise ContractError(f"{what} must be callable, got {type(obj).__name__}.")
    params = _parameters(obj, what)
    _check_no_varargs(params, what)
    if not _positional(params):
        raise ContractError(f"{what} must take the data X as its first argument.")
    missing = [p for p in ("n_partitions", "random_state", "n_jobs") if p not in params]
    if missing:
        raise ContractError(f"{what} must accept the keyword(s) {', '.join(missing)}.")


def _check_metric(obj, what):
    if not callable(obj):
        raise ContractError(f"{what} must be callable, got {type(obj).__name__}.")
    params = _parameters(obj, what)
    _check_no_varargs(params, what)
    positional = _positional(params)
    if len(positional) < 2:
        raise ContractError(f"{what} must take two labellings (or a labelling and an Ensemble) positionally.")
    if method_info(obj).requires_X and positional[0].name != "X":
        raise ContractError(f"{what} declares requires_X=True, so its first parameter must be X.")


def _check_utility(obj, what):
    if not isinstance(obj, Utility):
        raise ContractError(
            f"{what} must be a cclust.base.Utility (a distance the compiled K-means passes "
            f"can evaluate), got {type(obj).__name__}."
        )


_CONTRACTS = {"consensus": _check_consensus, "generator": _check_generator,
              "metric": _check_metric, "utility": _check_utility}


def check_contract(kind: str, obj: object, what: str = "object") -> None:
    """Raise ContractError unless ``obj`` satisfies the contract of ``kind``."""
    if kind not in KINDS:
        raise ValidationError(f"kind must be one of {sorted(KINDS)}, got {kind!r}.")
    _CONTRACTS[kind](obj, what)
