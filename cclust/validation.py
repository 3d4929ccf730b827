"""Argument checks, random state and the memory budget: public, for cclust and its plugins.

Each check returns a clean value (a new array when conversion is needed, never a write into
the caller's array) or raises ``ValidationError`` naming the argument, the expectation and the
value received. A plugin that uses these raises the same errors, in the same words, as the
built-in methods.

Random state has one normaliser, :func:`seed_sequence`: every other entry point
(:func:`check_random_state` for one stream, :func:`spawn_seed_sequences` for independent
streams) is built on it, so every function of cclust accepts the same values.

The memory budget (:func:`cclust.validation.memory_budget`, :func:`require_memory`) is what every allocation that
can grow past O(n * r) asks before it allocates.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import numbers
import os
import re
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, TypeVar, Union, cast, overload

import numpy as np
import numpy.typing as npt

from cclust.errors import MemoryBudgetError, ValidationError

__all__ = ["check_int", "check_float", "check_k_range", "check_random_state", "seed_sequence", "spawn_seed_sequences",
           "check_n_jobs", "check_n_threads", "renamed_argument", "renamed_threads", "default_threads",
           "available_cores", "busy_elsewhere", "one_thread_pools", "check_array_2d",
           "check_distinct_rows", "check_partition_request", "label_vector", "check_same_length", "memory_budget", "require_memory", "recorded_memory_requests",
           "format_bytes", "memory_refusal", "memory_budget_scope", "address_space_left", "require_address_space",
           "DEFAULT_MEMORY_BUDGET", "check_n_clusters",
           "check_distinct_label_vectors", "check_init_name"]

#: Bytes one O(n^2) (or otherwise super-linear) structure may take when neither ``max_bytes``
#: nor the environment variable ``CCLUST_MEMORY_BUDGET`` says otherwise.
DEFAULT_MEMORY_BUDGET = 2 * 1024**3

#: What every ``random_state`` argument accepts (:func:`seed_sequence`).
RandomStateLike = Union[None, int, np.integer, np.random.SeedSequence, np.random.Generator, np.random.RandomState]

_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def check_int(value: object, name: str, *, low: int | None = ..., high: int | None = ...,
              allow_none: Literal[False] = ...) -> int: ...
@overload
def check_int(value: object, name: str, *, low: int | None = ..., high: int | None = ...,
              allow_none: bool) -> int | None: ...


def check_int(value: object, name: str, *, low: int | None = None, high: int | None = None,
              allow_none: bool = False) -> int | None:
    """An int in ``[low, high]`` (bounds inclusive, None = unbounded)."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValidationError(f"{name} must be an int, got {value!r} of type {type(value).__name__}.")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValidationError(f"{name} must be an int in the range [{lo}, {hi}], got {value}.")
    return value


def check_float(value: object, name: str, *, low: float | None = None, high: float | None = None,
                low_open: bool = False, high_open: bool = False) -> float:
    """A finite float in the given interval (open ends where asked)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValidationError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    bad = not np.isfinite(value)
    if low is not None:
        bad |= value <= low if low_open else value < low
    if high is not None:
        bad |= value >= high if high_open else value > high
    if bad:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValidationError(f"{name} must be a finite number in {left}{lo}, {hi}{right}, got {value!r}.")
    return value


def check_k_range(k_range: Sequence[int] | None, default: Sequence[int], n: int,
                  name: str = "k_range") -> tuple[int, int]:
    """A pair of ints ``(low, high)`` with ``2 <= low <= high <= n`` (the number of clusters
    drawn per basic partition); ``default`` when ``k_range`` is None."""
    if k_range is None:
        k_range = default
    try:
        low, high = (int(v) for v in k_range)
        if (low, high) != tuple(k_range):
            raise TypeError
    except (TypeError, ValueError):
        raise ValidationError(f"{name} must be a pair of ints (low, high), got {k_range!r}.") from None
    if not 2 <= low <= high <= n:
        raise ValidationError(
            f"{name} must satisfy 2 <= low <= high <= n_samples ({n}), got ({low}, {high})."
        )
    return low, high


def seed_sequence(random_state: RandomStateLike, name: str = "random_state") -> np.random.SeedSequence:
    """The ``numpy.random.SeedSequence`` that ``random_state`` stands for.

    None gives fresh entropy; a non-negative int seeds a SeedSequence; a SeedSequence is copied
    (spawning from the copy leaves the caller's object unchanged); a Generator or a legacy
    ``RandomState`` is drawn from once (its state advances, NumPy's convention).
    """
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.SeedSequence(random_state.entropy, spawn_key=random_state.spawn_key,
                                      pool_size=random_state.pool_size)
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2**63)))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(int(random_state.randint(2**31 - 1)))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_)):
        if random_state < 0:
            raise ValidationError(f"{name} must be a non-negative int, got {random_state}.")
        return np.random.SeedSequence(int(random_state))
    raise ValidationError(
        f"{name} must be None, a non-negative int, a numpy.random.SeedSequence, a "
        f"numpy.random.Generator or a numpy.random.RandomState, got {random_state!r}."
    )


def check_random_state(random_state: RandomStateLike, name: str = "random_state") -> np.random.Generator:
    """A ``numpy.random.Generator`` from anything :func:`seed_sequence` accepts.

    A Generator passed in is used as is (its state advances), as in NumPy's own convention; an
    int gives the same stream as ``numpy.random.default_rng(int)``.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(seed_sequence(random_state, name))


def spawn_seed_sequences(random_state: RandomStateLike, count: int,
                         name: str = "random_state") -> list[np.random.SeedSequence]:
    """``count`` independent SeedSequences derived from ``random_state`` (its spawned children).

    The same int always gives the same children, whatever is done with them later, so work
    split into ``count`` tasks is reproducible however the tasks are scheduled.
    """
    return seed_sequence(random_state, name).spawn(count)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform reports one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def busy_elsewhere() -> int:
    """Threads running or ready to run on the machine right now besides the caller's own, or 0
    where the platform does not say (the "running" count of Linux's ``/proc/loadavg``).

    A snapshot, not an average: the 1-minute load average would count this process's own work
    of the last minute and make a long computation talk itself down to one thread; this
    process's own running threads (``/proc/self/task``) are left out for the same reason.
    """
    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            running = int(handle.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 0
    return max(0, running - _running_here())


def _running_here():
    """Threads of this process running now (at least the one asking): its own BLAS or OpenMP
    threads still spinning after a call are no other work."""
    own = 1
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return own
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/stat", encoding="ascii", errors="replace") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        own += state == "R"
    return max(1, own - 1)  # the asking thread was counted once above and once in the loop


#: threadpoolctl's view of the loaded thread pools, made once and again only after more modules
#: were imported (a new compiled module can bring its own BLAS or OpenMP runtime), with the
#: number of modules it was made at.
_POOLS: dict[str, Any] = {"controller": None, "modules": -1}
_POOLS_LOCK = threading.Lock()


def one_thread_pools(user_api: Literal["blas", "openmp"] | None = None) -> contextlib.AbstractContextManager[Any]:
    """A context in which the thread pools of BLAS (``user_api="blas"``), OpenMP
    (``"openmp"``) or both (None) run on one thread, through threadpoolctl (scikit-learn's
    dependency; where it is not installed nothing changes).

    ``threadpoolctl.threadpool_limits`` finds the loaded libraries again at every call by
    reading the process's memory map, about 1.3 ms with SciPy and scikit-learn loaded: half of
    U-SENC's time on a few dozen objects, whose clusterers each ask for one BLAS thread. Here
    they are found once, and again only after further modules were imported. Callers in
    several threads at once are threadpoolctl's to reconcile, as with ``threadpool_limits``.
    """
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # no threadpoolctl (it comes with scikit-learn), or one before 3.0
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            return contextlib.nullcontext()
        return cast(contextlib.AbstractContextManager[Any], threadpool_limits(limits=1, user_api=user_api))
    with _POOLS_LOCK:
        if _POOLS["controller"] is None or _POOLS["modules"] != len(sys.modules):
            _POOLS["controller"] = ThreadpoolController()
            _POOLS["modules"] = len(sys.modules)
        controller = _POOLS["controller"]
    return cast(contextlib.AbstractContextManager[Any], controller.limit(limits=1, user_api=user_api))


def default_threads() -> int:
    """The thread count that ``n_jobs=None`` means.

    ``CCLUST_NUM_THREADS``, else ``OMP_NUM_THREADS``, when set to a positive integer; otherwise
    every core this process may use (:func:`available_cores`). The compiled passes' threads wait
    passively between parallel regions (``OMP_WAIT_POLICY=PASSIVE`` unless set), so on a loaded
    machine they take their share of the cores and spin on none: with two CPU-bound processes on
    two cores, GKCC took 66 s on two threads against 102 s on one, AddRemAdd 5.8 s against 7.7 s
    (docs/benchmarks.md). Results never depend on the thread count (work is split into fixed
    chunks reduced in chunk order), so only the time changes. BLAS, whose threads do spin, runs
    on one thread when the other cores are busy (:func:`busy_elsewhere`).
    """
    env = os.environ.get("CCLUST_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return available_cores()


def check_n_jobs(n_jobs: int | None, name: str = "n_jobs") -> int:
    """Resolve a thread count, the ``n_jobs`` argument of every cclust function (scikit-learn's
    word): None means :func:`default_threads` (every core, or the
    ``CCLUST_NUM_THREADS``/``OMP_NUM_THREADS`` setting), -1 every available core whatever the
    environment says, and a positive int that many threads.

    Examples
    --------
    >>> check_n_jobs(2)
    2
    >>> check_n_jobs(-1) == available_cores()
    True
    """
    if n_jobs is None:
        return default_threads()
    if isinstance(n_jobs, numbers.Integral) and not isinstance(n_jobs, bool) and n_jobs == -1:
        return available_cores()
    return check_int(n_jobs, name, low=1)


def check_n_threads(n_threads: int | None, name: str = "n_threads") -> int:
    """The former name of :func:`check_n_jobs`, the same check; kept, without a warning, for
    plugins written before the rename (an installed plugin cannot be updated with cclust)."""
    return check_n_jobs(n_threads, name)


# -- renamed arguments ----------------------------------------------------------------------------
# scikit-learn's convention: a renamed argument is still accepted for one release, warns
# FutureWarning (shown to users by default, unlike DeprecationWarning) naming the new spelling,
# and passing both spellings at once is an error. The signature a decorated function shows
# (inspect.signature, the documentation) is its new one.

#: Thread counts are called ``n_jobs`` everywhere (scikit-learn's word); ``n_threads`` is the
#: spelling most consensus functions used before.
THREADS = ("n_threads", "n_jobs")


def warn_deprecated(message: str) -> None:
    """Warn ``FutureWarning`` with ``message``, attributed to the first caller outside cclust
    (a deprecated spelling is the user's line to change, however deep the check sits)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame: types.FrameType | None = sys._getframe(0)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, FutureWarning, stacklevel=level)


def renamed_argument(old: str, new: str) -> Callable[[_F], _F]:
    """Decorate a function whose keyword argument ``old`` is now called ``new``.

    ``fn(..., old=v)`` warns ``FutureWarning`` and runs ``fn(..., new=v)``; ``fn(..., old=v,
    new=w)`` raises :class:`cclust.errors.ValidationError`. The names a function accepts under
    their old spelling are kept in its ``renamed_arguments`` attribute (``{old: new}``).

    Examples
    --------
    >>> import warnings
    >>> @renamed_argument("n_threads", "n_jobs")
    ... def f(x, *, n_jobs=None):
    ...     return n_jobs
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     f(1, n_threads=2), caught[0].category.__name__
    (2, 'FutureWarning')
    """
    def decorate(fn: _F) -> _F:
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", "the function"))

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if old in kwargs:
                value = kwargs.pop(old)
                if new in kwargs:
                    raise ValidationError(
                        f"{name} got both {old}={value!r} and {new}={kwargs[new]!r}; {old} is the deprecated "
                        f"spelling of {new}: pass {new} only.")
                warn_deprecated(f"{name}: {old} was renamed {new} and will be removed in the next release; pass "
                                f"{new}={value!r} instead (the same values).")
                kwargs[new] = value
            return fn(*args, **kwargs)

        wrapper.renamed_arguments = {**getattr(fn, "renamed_arguments", {}), old: new}  # type: ignore[attr-defined]
        return cast(_F, wrapper)

    return decorate


#: The decorator every function that took ``n_threads`` carries: ``@renamed_threads``.
renamed_threads = renamed_argument(*THREADS)
renamed_threads.__doc__ = """``renamed_argument("n_threads", "n_jobs")``: the thread count's one spelling is ``n_jobs``
(scikit-learn's word); a function that called it ``n_threads`` carries this decorator for one
release."""


def check_array_2d(X: npt.ArrayLike, name: str = "X", *, dtype: npt.DTypeLike = np.float64,
                   finite: bool = True) -> np.ndarray:
    """A C-contiguous 2-D float array with at least one row and column, all finite."""
    if hasattr(X, "__dask_graph__"):
        raise ValidationError(f"{name} is a dask array; call .compute() first or use the dask backend.")
    try:
        array = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise ValidationError(f"{name} must be a 2-D array of numbers: {exc}") from None
    if array.ndim != 2:
        raise ValidationError(f"{name} must be 2-D (n_samples, n_features), got an array of shape {array.shape}.")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValidationError(f"{name} must have at least one row and one column, got shape {array.shape}.")
    if array.dtype.kind not in "biuf":
        raise ValidationError(f"{name} must hold numbers, got dtype {array.dtype}.")
    array = np.ascontiguousarray(array, dtype=dtype)
    if finite and not np.isfinite(array).all():
        bad = np.argwhere(~np.isfinite(array))[0]
        raise ValidationError(
            f"{name} contains NaN or infinity (first at row {bad[0]}, column {bad[1]}); "
            "impute or drop those values first."
        )
    return array


def check_partition_request(X: np.ndarray, n_clusters: int, n_partitions: int, *,
                            distinct_rows: bool = True) -> tuple[int, int]:
    """The checks every generator makes of a 2-D ``X`` (already an array) before partitioning it:
    at least 2 rows, ``n_clusters`` in [2, n], at least ``n_clusters`` distinct rows (not asked
    with ``distinct_rows=False``, for data read lazily) and ``n_partitions`` >= 1.

    Returns ``(n_clusters, n_partitions)`` as ints.

    Examples
    --------
    >>> check_partition_request(np.arange(10.0).reshape(5, 2), 3, 4)
    (3, 4)
    """
    n = X.shape[0]
    if n < 2:
        raise ValidationError(f"X must have at least 2 rows to be clustered, got {n}.")
    n_clusters = check_int(n_clusters, "n_clusters", low=2, high=n)
    if distinct_rows:
        check_distinct_rows(X, n_clusters)
    return n_clusters, check_int(n_partitions, "n_partitions", low=1)


def check_distinct_rows(X: npt.ArrayLike, n_clusters: int, name: str = "X", k_name: str = "n_clusters") -> None:
    """Refuse ``X`` when it has fewer distinct rows than ``n_clusters`` (called ``k_name`` in the message).

    Identical rows are one point to every distance-based clustering: splitting them into
    ``n_clusters`` groups can only be arbitrary (30 identical rows cut into 1, 1 and 28), so every
    path that clusters X asks this first. Rows are compared block by block, stopping as soon as
    ``n_clusters`` distinct ones are seen: a few rows on ordinary data, one pass on constant data.

    Examples
    --------
    >>> check_distinct_rows(np.array([[0.0, 1.0], [2.0, 3.0], [0.0, 1.0]]), 2)
    >>> check_distinct_rows(np.ones((30, 2)), 3)
    Traceback (most recent call last):
    ...
    cclust.errors.ValidationError: X has only 1 distinct row, fewer than n_clusters=3: ...
    """
    array = np.asarray(X)
    n = array.shape[0]
    seen: set[bytes] = set()
    step = max(256, 4 * int(n_clusters))
    for start in range(0, n, step):
        block = array[start:start + step]
        if block.dtype.kind == "f":
            block = block + 0.0  # -0.0 and 0.0 are one value
        block = np.unique(np.ascontiguousarray(block), axis=0)
        seen.update(row.tobytes() for row in block)
        if len(seen) >= n_clusters:
            return
    distinct = len(seen)
    if distinct == 1:
        fix = f"every row is the same, so there is nothing to cluster: check that {name} holds the features meant"
    else:
        fix = f"lower {k_name} to at most {distinct}, or check that {name} holds the features meant"
    raise ValidationError(
        f"{name} has only {distinct} distinct {'row' if distinct == 1 else 'rows'}, fewer than "
        f"{k_name}={n_clusters}: identical rows cannot be told apart, so any split into {n_clusters} clusters "
        f"would be arbitrary; {fix}."
    )


def check_n_clusters(n_clusters: object, ensemble: Any, name: str = "n_clusters", *,
                     n_distinct: int | None = None) -> int:
    """The number of consensus clusters K for ``ensemble``: an int in [2, n_samples], and no
    larger than the number of distinct label vectors.

    Objects that every partition labels alike (the same label in each, or missing from the same
    ones) are one point to every consensus function, so a split of them would be arbitrary. The
    distinct vectors are counted (:meth:`cclust.Ensemble.distinct_rows`) only when K exceeds
    every partition's K_i, since each partition's clusters already differ in their vectors;
    ``n_distinct`` gives the count instead (a method that groups the objects itself).

    Examples
    --------
    >>> from cclust import Ensemble
    >>> check_n_clusters(2, Ensemble([[0, 0, 1, 1], [0, 0, 1, 1]]))
    2
    >>> check_n_clusters(3, Ensemble([[0, 0, 1, 1], [0, 0, 1, 1]]))
    Traceback (most recent call last):
    ...
    cclust.errors.ValidationError: n_clusters=3 is larger than the number of distinct label vectors ...
    """
    k = check_int(n_clusters, name, low=2, high=ensemble.n_samples)
    if n_distinct is None and k <= int(np.max(ensemble.n_clusters)):
        return k
    return check_distinct_label_vectors(k, ensemble.n_distinct_rows if n_distinct is None else n_distinct, name)


def check_distinct_label_vectors(n_clusters: int, n_distinct: int, name: str = "n_clusters") -> int:
    """Refuse more clusters than the ``n_distinct`` distinct label vectors of an ensemble (see
    :func:`check_n_clusters`, which counts them); returns ``n_clusters``."""
    distinct = int(n_distinct)
    if n_clusters > distinct:
        raise ValidationError(
            f"{name}={n_clusters} is larger than the number of distinct label vectors in the ensemble "
            f"({distinct}): objects that every partition labels alike cannot be told apart, so at most "
            f"{distinct} clusters are meaningful; ask for {name} <= {distinct}.")
    return n_clusters


def check_init_name(init: object, allowed: Sequence[str], name: str = "init", *, or_labels: bool = False) -> str:
    """``init`` when it is one of the names ``allowed``; else an error listing them (and saying
    that an array of labels is accepted too, with ``or_labels``)."""
    if not isinstance(init, str) or init not in allowed:
        also = " or an array of labels" if or_labels else ""
        raise ValidationError(f"{name} must be one of {list(allowed)}{also}, got {init!r}.")
    return init


def label_vector(labels: npt.ArrayLike, name: str) -> tuple[npt.NDArray[np.int64], int]:
    """A 1-D labelling of any hashable values as int64 codes 0..K-1, and K.

    Codes follow the sorted order of the values. Non-negative integer labels with a modest
    maximum take a linear-time path through the compiled core instead of a sort; when they
    already are 0..K-1 the codes are the caller's (int64, contiguous) array itself, so callers
    must only read them.
    """
    array = np.asarray(labels)
    if array.ndim != 1:
        raise ValidationError(f"{name} must be 1-D (n_samples,), got an array of shape {array.shape}.")
    n = array.shape[0]
    if n == 0:
        raise ValidationError(f"{name} must not be empty.")
    if array.dtype.kind in "iub":
        from cclust._ext import _contingency

        array = np.ascontiguousarray(array, dtype=np.int64)
        low, high = _contingency.label_range(array)
        if low >= 0 and high <= 4 * n + 1024:
            # Codes may be the caller's own array (when already 0..k-1): read-only use only.
            return _contingency.relabel_dense(array, high, check_n_jobs(None))
    elif array.dtype.kind == "f":
        if not np.isfinite(array).all():
            raise ValidationError(f"{name} contains NaN or infinity; every object needs a label.")
        if (array != np.round(array)).any():
            raise ValidationError(f"{name} holds floats that are not whole numbers; pass integer labels.")
    try:
        values, codes = np.unique(array, return_inverse=True)
    except TypeError as exc:
        raise ValidationError(f"{name} mixes label types that cannot be compared: {exc}") from None
    return codes.reshape(-1).astype(np.int64, copy=False), int(values.shape[0])


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValidationError(
            f"{name_a} and {name_b} must label the same objects: got {a.shape[0]} and {b.shape[0]} labels."
        )


#: The ``max_bytes`` of the consensus call running in this context (:func:`memory_budget_scope`).
_scoped_budget: contextvars.ContextVar[int | None] = contextvars.ContextVar("cclust_memory_budget", default=None)


def memory_budget(max_bytes: float | None = None) -> int:
    """The memory budget in bytes: ``max_bytes`` if given, else that of the enclosing
    :func:`memory_budget_scope` (the ``max_bytes`` of the consensus call that is running), else
    ``CCLUST_MEMORY_BUDGET`` or 2 GiB."""
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, numbers.Real) or max_bytes <= 0:
            raise ValidationError(f"max_bytes must be a positive number of bytes, got {max_bytes!r}.")
        return int(max_bytes)
    scoped = _scoped_budget.get()
    if scoped is not None:
        return scoped
    env = os.environ.get("CCLUST_MEMORY_BUDGET")
    if env:
        try:
            return int(float(env))
        except ValueError:
            raise ValidationError(
                f"the environment variable CCLUST_MEMORY_BUDGET must be a number of bytes, got {env!r}."
            ) from None
    return DEFAULT_MEMORY_BUDGET


@contextlib.contextmanager
def memory_budget_scope(max_bytes: float | None) -> Iterator[None]:
    """Make ``max_bytes`` the budget of every guard inside the block that is given none.

    A consensus function's ``max_bytes`` then governs all its guards, including those of the
    Ensemble views and functions it calls without passing it on, so the ``max_bytes=`` a refusal
    asks for lifts it. :func:`cclust.base.declare` opens this scope around every call of a
    function taking ``max_bytes``. None leaves the budget as it is. The scope follows the
    calling context (:mod:`contextvars`): threads started inside the block do not inherit it.

    Examples
    --------
    >>> from cclust.validation import memory_budget, memory_budget_scope
    >>> with memory_budget_scope(10**9):
    ...     memory_budget()
    1000000000
    """
    if max_bytes is None:
        yield
        return
    token = _scoped_budget.set(memory_budget(max_bytes))
    try:
        yield
    finally:
        _scoped_budget.reset(token)


#: Figures asked of :func:`require_memory` while :func:`recorded_memory_requests` is open, else None.
_requests: list[int] | None = None


@contextlib.contextmanager
def recorded_memory_requests() -> Iterator[list[int]]:
    """Collect the bytes every :func:`require_memory` call asks while the block runs (granted or
    refused), in order: how :mod:`cclust.testing` sets a guard's figure beside the peak it
    measures for the same call. Blocks nest: an inner block's figures are also the outer's.

    Examples
    --------
    >>> from cclust.validation import recorded_memory_requests, require_memory
    >>> with recorded_memory_requests() as asked:
    ...     _ = require_memory(1000, "a test buffer", "use less")
    >>> asked
    [1000]
    """
    global _requests
    outer, _requests = _requests, []
    try:
        yield _requests
    finally:
        if outer is not None:
            outer.extend(_requests)
        _requests = outer


def require_memory(need: float, what: str, alternative: str, max_bytes: float | None = None, *,
                   lower_bound: bool = False) -> int:
    """Raise MemoryBudgetError unless ``need`` bytes fit the budget; return the budget.

    The message names the bytes, the budget, how to raise it and ``alternative`` (the
    scalable route), so every O(n^2) allocation in cclust refuses in the same words. With
    ``lower_bound``, ``need`` is a bound counted on part of the input (the exact figure would
    take longer to count than the refusal is worth): the message says "at least", and that a
    ``max_bytes`` of ``need`` may still be refused by the exact figure.

    Examples
    --------
    >>> from cclust.validation import require_memory
    >>> require_memory(2048, "a table", "use a smaller one", max_bytes=4096)
    4096
    >>> require_memory(8192, "a table", "use a smaller one", max_bytes=4096, lower_bound=True)
    Traceback (most recent call last):
    ...
    cclust.errors.MemoryBudgetError: a table needs at least 8.0 KiB (8192 bytes), over the memory budget of 4.0 KiB; pass a max_bytes above 8192 (or set CCLUST_MEMORY_BUDGET) to allow it, or use a smaller one.
    """
    budget = memory_budget(max_bytes)
    if _requests is not None:
        _requests.append(int(need))
    if need > budget:
        if lower_bound:
            raise MemoryBudgetError(
                f"{what} needs at least {format_bytes(need)} ({need} bytes), over the memory budget of "
                f"{format_bytes(budget)}; pass a max_bytes above {need} (or set CCLUST_MEMORY_BUDGET) to "
                f"allow it, or {alternative}."
            )
        raise MemoryBudgetError(
            f"{what} needs about {format_bytes(need)} ({need} bytes), over the memory budget of "
            f"{format_bytes(budget)}; pass max_bytes={need} (or set CCLUST_MEMORY_BUDGET) to "
            f"allow it, or {alternative}."
        )
    return budget


def address_space_left() -> int | None:
    """Bytes of address space this process may still map under its limit (``RLIMIT_AS``,
    ``ulimit -v``), or None where no limit is set or it cannot be read (not Linux)."""
    try:
        import resource
    except ImportError:
        return None
    limit = resource.getrlimit(resource.RLIMIT_AS)[0] if hasattr(resource, "RLIMIT_AS") else resource.RLIM_INFINITY
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as status:
            size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return None
    return max(0, limit - size)


def require_address_space(need: float, what: str, alternative: str) -> None:
    """Raise MemoryBudgetError unless ``need`` bytes fit under the process's address-space limit.

    For libraries that cannot fail an allocation cleanly: METIS (through PyMetis) raises an
    exception that does not say why when one of its allocations fails, and a second such failure
    in the same process ends it with a segmentation fault. Asked before such a call, with an
    upper bound of what it maps; without a limit (the usual case: an allocation then does not
    fail, the kernel's out-of-memory handling acts instead) it never refuses.
    """
    left = address_space_left()
    if left is not None and need > left:
        raise MemoryBudgetError(
            f"{what} needs up to {format_bytes(need)} ({need} bytes) of address space, but the process's "
            f"address-space limit (RLIMIT_AS, ulimit -v) leaves {format_bytes(left)}; raise the limit, or "
            f"{alternative}."
        )


#: NumPy's words when an allocation fails: "Unable to allocate 763. MiB for an array with shape
#: (1000000, 100) and data type float64".
_NUMPY_ALLOCATION = re.compile(r"Unable to allocate (?P<size>[\d.]+ ?\w+) for an array with shape "
                               r"\((?P<shape>[\d, ]*)\) and data type (?P<dtype>\S+)")


def _failed_allocation(exc):
    """What the failed allocation was, in words, from a MemoryError's message (NumPy's names the
    array; a C++ ``std::bad_alloc`` says nothing of its size)."""
    message = str(exc)
    found = _NUMPY_ALLOCATION.search(message)
    if found is None:
        return "an allocation of unknown size failed" + (f" ({message})" if message else "")
    shape = tuple(int(part) for part in found.group("shape").replace(" ", "").split(",") if part)
    try:
        n_bytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(found.group("dtype")).itemsize
    except TypeError:
        return f"allocating {found.group('size')} for an array of shape {shape} failed"
    if found.group("dtype").startswith("|V"):   # the rows of a matrix viewed as single items
        return f"allocating {format_bytes(n_bytes)} ({n_bytes} bytes) for {shape[0] if shape else 1} rows failed"
    return (f"allocating {format_bytes(n_bytes)} ({n_bytes} bytes) for a {found.group('dtype')} array of "
            f"shape {shape} failed")


@contextlib.contextmanager
def memory_refusal(method: str) -> Iterator[None]:
    """Turn an allocation failure inside a consensus call into a :class:`MemoryBudgetError`.

    A ``MemoryError`` that no memory guard caught (NumPy's, or a C++ ``std::bad_alloc``, which
    Cython raises as ``MemoryError``) leaves the block as a MemoryBudgetError naming ``method``,
    the size that failed when it is known, and what to do instead; a MemoryBudgetError passes
    unchanged. This is the door every registered consensus function is called through
    (:func:`cclust.consensus`, ``cclust run``, the estimator, best-of), so an ensemble too large
    for the machine gives a refusal, never a raw MemoryError.

    Examples
    --------
    >>> with memory_refusal("hbgf"):
    ...     raise MemoryError("std::bad_alloc")
    Traceback (most recent call last):
    ...
    cclust.errors.MemoryBudgetError: hbgf ran out of memory: an allocation of unknown size failed (std::bad_alloc); ...
    """
    try:
        yield
    except MemoryBudgetError:
        raise
    except MemoryError as exc:
        raise MemoryBudgetError(
            f"{method} ran out of memory: {_failed_allocation(exc)}; fuse a smaller ensemble (fewer objects or "
            "partitions, ensemble.take(...)), use a method whose memory is linear in n such as kcc, or set a "
            "memory budget below the memory this process can use (max_bytes= where the method takes it, or "
            "CCLUST_MEMORY_BUDGET), so that its guarded allocations are refused before they start."
        ) from exc


def format_bytes(n_bytes: float) -> str:
    """``n_bytes`` in the largest binary unit that keeps it at or above 1 (``1.5 GiB``)."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n_bytes < 1024:
            return f"{n_bytes:.0f} {unit}" if unit == "bytes" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1024
    return f"{n_bytes:.1f} TiB"
