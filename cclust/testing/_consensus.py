"""Conformance checks of consensus functions (kind ``consensus``)."""
from __future__ import annotations

import inspect
import pickle
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np

from cclust.testing._common import (
    Failure,
    contract_failure,
    first_difference,
    parameters,
    resolve,
    run_all,
)
from cclust.testing._data import (
    BLOB_SIZE,
    DATA_SEED,
    Snapshot,
    adjusted_rand,
    blob_partitions,
    check_kit_blob_size,
    check_kit_n_clusters,
    noisy,
    relabel,
    same_partition,
    with_missing,
)
from cclust.validation import RandomStateLike

__all__ = [
    "CONSENSUS_CHECKS",
    "check_consensus",
    "check_consensus_contract",
    "check_consensus_deterministic",
    "check_consensus_identical_partitions",
    "check_consensus_missing_labels",
    "check_consensus_n_clusters",
    "check_consensus_no_mutation",
    "check_consensus_object_order",
    "check_consensus_order_invariance",
    "check_consensus_pickle",
    "check_consensus_relabel_invariance",
    "check_consensus_result",
    "check_consensus_thread_safety",
]

#: Marks an argument left to the check's own value.
_DEFAULT = object()


class _Case:
    """One check of one consensus function on the kit's blob data."""

    def __init__(self, check, fn_or_name, n_clusters, X_required, random_state, blob_size):
        from cclust.base import method_info

        self.fn, self.label = resolve(fn_or_name, "consensus")
        self.fail = Failure(check, self.label)
        self.info = method_info(self.fn)
        self.requires_X = self.info.requires_X if X_required is None else bool(X_required)
        self.n_clusters = check_kit_n_clusters(n_clusters)
        self.random_state = random_state
        self.X, self.y, self.labels = blob_partitions(self.n_clusters, blob_size=check_kit_blob_size(blob_size))
        self.n = self.y.shape[0]
        self.rng = np.random.default_rng(DATA_SEED + 3)

    def ensemble(self, labels=None, weights=None):
        from cclust.ensemble import Ensemble

        return Ensemble(self.labels if labels is None else labels, weights=weights)

    def run(self, ensemble, n_clusters=_DEFAULT, *, random_state=_DEFAULT, X=None, **params):
        """Call the function the way every check does (X= only if it requires X)."""
        n_clusters = self.n_clusters if n_clusters is _DEFAULT else n_clusters
        kwargs = {"random_state": self.random_state if random_state is _DEFAULT else random_state}
        if self.requires_X:
            kwargs["X"] = self.X.copy() if X is None else X
        kwargs.update(params)
        return self.fail.call(self.fn, ensemble, n_clusters, **kwargs)

    def valid(self, result, n_clusters, context):
        """Assert ``result`` is a valid ConsensusResult honouring ``n_clusters``; its labels."""
        from cclust.result import ConsensusResult

        where = f" ({context})" if context else ""
        if not isinstance(result, ConsensusResult):
            raise self.fail(f"returned {type(result).__name__}, not a cclust.ConsensusResult{where}.")
        labels = result.labels
        if not isinstance(labels, np.ndarray):
            raise self.fail(f"result.labels is a {type(labels).__name__}, not a NumPy array{where}.")
        if labels.dtype != np.int64:
            raise self.fail(f"result.labels has dtype {labels.dtype}, expected int64{where}.")
        if labels.shape != (self.n,):
            raise self.fail(f"result.labels has shape {labels.shape}, expected ({self.n},){where}.")
        k = result.n_clusters
        if labels.min() < 0 or labels.max() >= k:
            raise self.fail(
                f"result.labels are out of range: values in [{labels.min()}, {labels.max()}] but "
                f"n_clusters={k}, so they must lie in 0..{k - 1}{where}."
            )
        used = np.unique(labels).shape[0]
        if used != k:
            raise self.fail(f"result.n_clusters={k} but the labels use {used} clusters{where}.")
        if n_clusters is not None and k != n_clusters:
            raise self.fail(f"asked for n_clusters={n_clusters}, got a result with {k} clusters{where}.")
        if (result.n_iter is None) != (result.converged is None):
            raise self.fail(
                f"result.n_iter={result.n_iter!r} and result.converged={result.converged!r}: a method with a "
                f"main loop sets both, a one-shot method leaves both None{where}."
            )
        return labels

    def same(self, a, b, what):
        if not same_partition(a, b):
            raise self.fail(f"{what} (ARI = {adjusted_rand(a, b):.6f}, expected 1).")


def _options(check):
    """Give every check the same keyword options and a docstring tail."""
    check.__doc__ = (check.__doc__ or "").rstrip() + """

    Parameters
    ----------
    fn_or_name : callable or str
        The consensus function, or its registered name.
    n_clusters : int, default=3
        Number of well-separated blobs in the kit's data, and the K asked for.
    X_required : bool, default=None
        Whether to pass the blob features as ``X=``; None reads ``method_info(fn).requires_X``.
    random_state : int, default=0
        The seed passed to the function.
    blob_size : int, default=12
        Objects per blob in the kit's data. Fewer make every call cheaper for a method whose
        time grows steeply with n (an exact integer program); the properties checked are the same.

    Raises
    ------
    AssertionError
        Naming this check and the function, if the function fails it.
    """
    return check


@_options
def check_consensus_contract(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                             X_required: bool | None = None, random_state: RandomStateLike = 0,
                             blob_size: int = BLOB_SIZE) -> None:
    """The registry contract: ``fn(ensemble, n_clusters, *, random_state=None, **params)``.

    Runs ``cclust.registry.check_contract("consensus", fn)`` and checks that ``random_state``
    defaults to None, that ``method_info(fn)`` is a ``MethodInfo``, and that a function
    declaring ``requires_X`` takes ``X``.
    """
    from cclust.base import MethodInfo

    case = _Case("check_consensus_contract", fn_or_name, n_clusters, X_required, random_state, blob_size)
    contract_failure(case.fail, "consensus", case.fn)
    if not isinstance(case.info, MethodInfo):
        raise case.fail(f"its __cclust_info__ is a {type(case.info).__name__}; set it with cclust.base.declare().")
    params = parameters(case.fn)
    default = params["random_state"].default
    if default is not inspect.Parameter.empty and default is not None:
        raise case.fail(f"random_state must default to None, not {default!r}.")
    if case.requires_X and "X" not in params and not any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        raise case.fail("X_required=True but the function takes no X parameter.")


@_options
def check_consensus_result(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, X_required: bool | None = None,
                           random_state: RandomStateLike = 0, blob_size: int = BLOB_SIZE) -> None:
    """Returns a ConsensusResult: int64 labels of length n in 0..K-1, every cluster used, and
    ``n_iter``/``converged`` both set (a method with a main loop) or both None (one-shot).

    Tried with ``random_state`` as given and with the default (None), on equal and on unequal
    partition weights.
    """
    case = _Case("check_consensus_result", fn_or_name, n_clusters, X_required, random_state, blob_size)
    case.valid(case.run(case.ensemble()), case.n_clusters, "")
    kwargs = {"X": case.X.copy()} if case.requires_X else {}
    result = case.fail.call(case.fn, case.ensemble(), case.n_clusters, **kwargs,
                            what=f"without random_state, n_clusters={case.n_clusters}")
    case.valid(result, case.n_clusters, "random_state left to its default")
    weights = np.linspace(1.0, 3.0, case.labels.shape[1])
    case.valid(case.run(case.ensemble(weights=weights)), case.n_clusters, "unequal partition weights")


@_options
def check_consensus_n_clusters(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                               X_required: bool | None = None, random_state: RandomStateLike = 0,
                               blob_size: int = BLOB_SIZE) -> None:
    """``n_clusters`` is honoured for 2, K and K + 1 clusters; ``None`` is accepted when the
    function declares ``chooses_n_clusters``."""
    case = _Case("check_consensus_n_clusters", fn_or_name, n_clusters, X_required, random_state, blob_size)
    ensemble = case.ensemble()
    for k in sorted({2, case.n_clusters, case.n_clusters + 1}):
        case.valid(case.run(ensemble, k), k, f"n_clusters={k}")
    if case.info.chooses_n_clusters:
        case.valid(case.run(ensemble, None), None, "n_clusters=None, declared chooses_n_clusters=True")


@_options
def check_consensus_deterministic(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                                  X_required: bool | None = None, random_state: RandomStateLike = 0,
                                  blob_size: int = BLOB_SIZE) -> None:
    """Same seed, same labels: an int seed twice, two Generators seeded alike, and (if the
    function takes ``n_jobs``, or a third party's legacy ``n_threads``) one thread against two."""
    case = _Case("check_consensus_deterministic", fn_or_name, n_clusters, X_required, random_state, blob_size)
    ensemble = case.ensemble()
    first = case.valid(case.run(ensemble), case.n_clusters, f"random_state={random_state!r}")
    second = case.valid(case.run(case.ensemble()), case.n_clusters, f"random_state={random_state!r}")
    if not np.array_equal(first, second):
        raise case.fail(f"two calls with random_state={random_state!r} gave different labels "
                        f"({first_difference(first, second)}).")
    seed = random_state if isinstance(random_state, int) else 0
    runs = []
    for _ in range(2):
        gen = np.random.default_rng(seed)
        runs.append(case.valid(case.run(ensemble, random_state=gen), case.n_clusters,
                               "random_state=numpy.random.Generator"))
    if not np.array_equal(*runs):
        raise case.fail(f"two calls with numpy.random.default_rng({seed}) gave different labels "
                        f"({first_difference(*runs)}).")
    params = parameters(case.fn)
    for threads in ("n_threads", "n_jobs"):
        if threads in params:
            one = case.valid(case.run(ensemble, **{threads: 1}), case.n_clusters, f"{threads}=1")
            two = case.valid(case.run(ensemble, **{threads: 2}), case.n_clusters, f"{threads}=2")
            if not np.array_equal(one, two):
                raise case.fail(f"{threads}=1 and {threads}=2 gave different labels with the same seed "
                                f"({first_difference(one, two)}).")


@_options
def check_consensus_no_mutation(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                                X_required: bool | None = None, random_state: RandomStateLike = 0,
                                blob_size: int = BLOB_SIZE) -> None:
    """Inputs are left alone: the Ensemble's arrays, the user's label matrix and ``X`` keep
    their contents and their flags.

    The user's writable label matrix is also passed directly; a function that accepts only an
    Ensemble may refuse it with any exception, but must not write into it.
    """
    case = _Case("check_consensus_no_mutation", fn_or_name, n_clusters, X_required, random_state, blob_size)
    user_labels = case.labels.copy()
    X = case.X.copy()
    ensemble = case.ensemble(user_labels, weights=np.linspace(1.0, 2.0, user_labels.shape[1]))
    watched = Snapshot(**{"the user's label matrix": user_labels, "X": X,
                          "ensemble.labels": ensemble.labels, "ensemble.weights": ensemble.weights,
                          "ensemble.n_clusters": ensemble.n_clusters, "ensemble.offsets": ensemble.offsets})
    case.run(ensemble, X=X)
    try:
        case.fn(user_labels, case.n_clusters, random_state=case.random_state,
                **({"X": X} if case.requires_X else {}))
    except Exception:  # noqa: BLE001 - a raw array need not be accepted, only left untouched
        pass
    changes = watched.changes()
    if changes:
        raise case.fail("; ".join(changes) + ".")


@_options
def check_consensus_identical_partitions(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                                         X_required: bool | None = None, random_state: RandomStateLike = 0,
                                         blob_size: int = BLOB_SIZE) -> None:
    """Fusing several copies of one partition (clusters renamed in each) gives it back."""
    case = _Case("check_consensus_identical_partitions", fn_or_name, n_clusters, X_required, random_state, blob_size)
    copies = np.column_stack([relabel(case.y, case.rng) for _ in range(5)])
    ensemble = case.ensemble(copies)
    labels = case.valid(case.run(ensemble), case.n_clusters, "five copies of one partition")
    case.same(labels, case.y, "fusing five copies of one partition did not give that partition back")
    if case.info.chooses_n_clusters:
        labels = case.valid(case.run(ensemble, None), None, "five copies of one partition, n_clusters=None")
        case.same(labels, case.y, "fusing five copies of one partition with n_clusters=None did not give "
                                  "that partition back")


@_options
def check_consensus_relabel_invariance(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                                       X_required: bool | None = None, random_state: RandomStateLike = 0,
                                       blob_size: int = BLOB_SIZE) -> None:
    """Renaming the clusters of each partition does not change the consensus partition."""
    case = _Case("check_consensus_relabel_invariance", fn_or_name, n_clusters, X_required, random_state, blob_size)
    base = case.valid(case.run(case.ensemble()), case.n_clusters, "")
    for trial in range(2):
        renamed = np.column_stack([relabel(case.labels[:, j], case.rng) for j in range(case.labels.shape[1])])
        other = case.valid(case.run(case.ensemble(renamed)), case.n_clusters, "partitions relabelled")
        case.same(base, other, f"renaming the clusters of every partition (trial {trial}) changed the "
                               f"consensus partition with random_state={random_state!r}")


@_options
def check_consensus_order_invariance(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                                     X_required: bool | None = None, random_state: RandomStateLike = 0,
                                     blob_size: int = BLOB_SIZE) -> None:
    """Reordering the partitions does not change the consensus partition."""
    case = _Case("check_consensus_order_invariance", fn_or_name, n_clusters, X_required, random_state, blob_size)
    base = case.valid(case.run(case.ensemble()), case.n_clusters, "")
    orders = [np.arange(case.labels.shape[1])[::-1], case.rng.permutation(case.labels.shape[1])]
    for order in orders:
        other = case.valid(case.run(case.ensemble(case.labels[:, order])), case.n_clusters,
                           "partitions reordered")
        case.same(base, other, f"reordering the partitions as {order.tolist()} changed the consensus "
                               f"partition with random_state={random_state!r}")


@_options
def check_consensus_pickle(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, X_required: bool | None = None,
                           random_state: RandomStateLike = 0, blob_size: int = BLOB_SIZE) -> None:
    """The result survives a pickle round trip with its labels, K, objective and method."""
    from cclust.result import ConsensusResult

    case = _Case("check_consensus_pickle", fn_or_name, n_clusters, X_required, random_state, blob_size)
    result = case.run(case.ensemble())
    case.valid(result, case.n_clusters, "")
    try:
        back = pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:
        raise case.fail(f"its result does not pickle: {type(exc).__name__}: {exc}") from exc
    if not isinstance(back, ConsensusResult):
        raise case.fail(f"its result unpickles as {type(back).__name__}.")
    same_objective = back.objective == result.objective or (np.isnan(back.objective) and np.isnan(result.objective))
    if not (np.array_equal(back.labels, result.labels) and back.n_clusters == result.n_clusters
            and same_objective and back.method == result.method
            and sorted(back.extras) == sorted(result.extras)):
        raise case.fail("its result differs after a pickle round trip.")


@_options
def check_consensus_missing_labels(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                                   X_required: bool | None = None, random_state: RandomStateLike = 0,
                                   blob_size: int = BLOB_SIZE) -> None:
    """Missing labels (-1): a valid result if the function declares ``handles_missing``,
    otherwise a ``cclust.errors.ValidationError``."""
    from cclust.errors import ValidationError

    case = _Case("check_consensus_missing_labels", fn_or_name, n_clusters, X_required, random_state, blob_size)
    ensemble = case.ensemble(with_missing(case.labels))
    if case.info.handles_missing:
        case.valid(case.run(ensemble), case.n_clusters, "15% of the labels missing, declared handles_missing=True")
        return
    kwargs = {"random_state": case.random_state}
    if case.requires_X:
        kwargs["X"] = case.X.copy()
    try:
        case.fn(ensemble, case.n_clusters, **kwargs)
    except ValidationError:
        return
    except Exception as exc:
        raise case.fail(
            f"declares handles_missing=False but raised {type(exc).__name__} instead of "
            f"cclust.errors.ValidationError on an ensemble with missing labels: {exc}"
        ) from exc
    raise case.fail("declares handles_missing=False but returned a result for an ensemble with missing "
                    "labels instead of raising cclust.errors.ValidationError.")


@_options
def check_consensus_object_order(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                                 X_required: bool | None = None, random_state: RandomStateLike = 0,
                                 blob_size: int = BLOB_SIZE,
                                 object_order: str | None = None) -> None:
    """Reordering the objects (rows of the ensemble and of ``X``) reorders the labels only.

    After undoing the permutation the labels must be the same partition as without it. How
    strictly depends on ``object_order`` (by default the function's declared
    ``method_info(fn).object_order``):

    * ``"exact"`` -- the same ``random_state`` gives the same partition for every order of the
      objects (a reversed order and two random ones are tried), on the kit's ensemble and on a
      noisy one whose consensus is far from obvious. Both carry distinct, irregular partition
      weights, so that no two candidate merges, moves or seeds score exactly the same: a method
      that breaks exact ties by position is still "exact".
    * ``"distribution"`` -- the method draws objects by position (random seeds, a graph
      partitioner's vertex order), so its result changes with their order in ways only its
      distribution is invariant to. Then the permuted runs must return valid results, and
      fusing identical partitions -- the one case where the answer is unambiguous -- must give
      that partition in every order.

    The keyword ``object_order`` (``"exact"``, ``"distribution"`` or None, the default) overrides
    the declaration, e.g. for a plugin that declares nothing yet.
    """
    from cclust.base import OBJECT_ORDERS

    case = _Case("check_consensus_object_order", fn_or_name, n_clusters, X_required, random_state, blob_size)
    order = case.info.object_order if object_order is None else object_order
    if order not in OBJECT_ORDERS:
        raise ValueError(f"object_order must be one of {OBJECT_ORDERS} or None, got {order!r}.")
    weights = case.rng.uniform(0.5, 2.0, case.labels.shape[1])
    perms = [np.arange(case.n)[::-1], case.rng.permutation(case.n), case.rng.permutation(case.n)]
    copies = np.column_stack([relabel(case.y, case.rng) for _ in range(4)])
    inputs = [("four copies of one partition", copies, None, True),
              ("the kit's ensemble", case.labels, weights, order == "exact"),
              ("a noisy ensemble", noisy(case.labels, 0.5), weights, order == "exact")]
    for what, labels, w, strict in inputs:
        base = case.valid(case.run(case.ensemble(labels, w)), case.n_clusters, what)
        for perm in perms:
            moved = case.valid(case.run(case.ensemble(labels[perm], w), X=case.X[perm].copy()), case.n_clusters,
                               f"{what}, objects permuted")
            back = np.empty_like(moved)
            back[perm] = moved
            if strict and not same_partition(base, back):
                hint = ("" if order == "distribution" else
                        " If the method draws objects by position, declare it with "
                        "cclust.base.declare(object_order='distribution').")
                raise case.fail(
                    f"permuting the objects of {what} changed the consensus partition with "
                    f"random_state={random_state!r} (ARI = {adjusted_rand(base, back):.6f} after undoing "
                    f"the permutation; object_order={order!r}).{hint}"
                )


@_options
def check_consensus_thread_safety(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3,
                                  X_required: bool | None = None, random_state: RandomStateLike = 0,
                                  blob_size: int = BLOB_SIZE) -> None:
    """Calls from several Python threads at once give the results of the same calls made one
    after another (no shared mutable state, no global random state).

    Four threads start together (a barrier), each with its own input -- the kit's ensemble or
    a noisy one, K or K - 1 clusters (K + 1 when K = 2), its own seed -- so that results
    crossing between threads show; this is done twice, and every result must equal the
    sequential one exactly.
    """
    case = _Case("check_consensus_thread_safety", fn_or_name, n_clusters, X_required, random_state, blob_size)
    seed = random_state if isinstance(random_state, int) else 0
    n_threads = 4
    inputs = (case.labels, noisy(case.labels, 0.3))
    # The second cluster count only has to differ from K. Fewer clusters than blobs rather than
    # more: an exact method (an integer program) asked to split well-separated blobs into K + 1
    # classes on a noisy ensemble searches for minutes, and this check runs each job three times.
    other = case.n_clusters - 1 if case.n_clusters > 2 else case.n_clusters + 1
    jobs = [(inputs[i % 2], (case.n_clusters, other)[i // 2], seed + i) for i in range(n_threads)]
    expected = [case.valid(case.run(case.ensemble(labels), k, random_state=s), k, "sequential")
                for labels, k, s in jobs]
    barrier = threading.Barrier(n_threads)

    def one(job):
        labels, k, s = job
        ensemble = case.ensemble(labels)
        barrier.wait(timeout=60)
        return case.run(ensemble, k, random_state=s)

    for round_ in range(2):
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            results = list(pool.map(one, jobs))
        for i, (result, want) in enumerate(zip(results, expected)):
            got = case.valid(result, jobs[i][1], f"thread {i} of {n_threads} threads called at once")
            if not np.array_equal(got, want):
                raise case.fail(
                    f"thread {i} of {n_threads} threads called at once (round {round_}) "
                    f"(n_clusters={jobs[i][1]}, random_state={jobs[i][2]}) got other labels than the "
                    f"same call made alone ({first_difference(got, want)})."
                )


#: Every consensus check, in the order :func:`check_consensus` runs them; parametrize over it.
CONSENSUS_CHECKS = (
    check_consensus_contract,
    check_consensus_result,
    check_consensus_n_clusters,
    check_consensus_deterministic,
    check_consensus_no_mutation,
    check_consensus_identical_partitions,
    check_consensus_relabel_invariance,
    check_consensus_order_invariance,
    check_consensus_object_order,
    check_consensus_pickle,
    check_consensus_missing_labels,
    check_consensus_thread_safety,
)


def check_consensus(fn_or_name: str | Callable[..., Any], *, n_clusters: int = 3, X_required: bool | None = None,
                    random_state: RandomStateLike = 0, object_order: str | None = None,
                    blob_size: int = BLOB_SIZE) -> None:
    """Run every check of :data:`CONSENSUS_CHECKS` on a consensus function.

    The function is called on small ensembles the kit builds itself: ``n_clusters``
    well-separated Gaussian blobs of ``blob_size`` objects each (12 by default) and eight basic partitions that mostly
    agree with them (exact copies, noisy copies, a split and a merge). Methods that declare
    ``requires_X`` get the blob features as ``X=``.

    Parameters
    ----------
    fn_or_name : callable or str
        The consensus function, or its registered name.
    n_clusters : int, default=3
        Number of blobs, and the K asked for.
    X_required : bool, default=None
        Whether to pass ``X=``; None reads ``method_info(fn).requires_X``.
    random_state : int, default=0
        The seed passed to the function.
    object_order : {"exact", "distribution"}, default=None
        Overrides the function's declared ``method_info(fn).object_order`` in
        :func:`check_consensus_object_order`.
    blob_size : int, default=12
        Objects per blob. Fewer make every call cheaper for a method whose time grows steeply
        with n (an exact integer program); the properties checked are the same.

    Raises
    ------
    AssertionError
        Listing every failed check by name, with the function's name. If the contract check
        fails nothing else is run.

    Examples
    --------
    >>> from cclust.testing import check_consensus
    >>> check_consensus("ccpivot")  # doctest: +SKIP
    """
    _, label = resolve(fn_or_name, "consensus")
    checks = [partial(check, object_order=object_order) if check is check_consensus_object_order else check
              for check in CONSENSUS_CHECKS]
    run_all(checks, fn_or_name, label, n_clusters=n_clusters, X_required=X_required,
            random_state=random_state, blob_size=blob_size)
