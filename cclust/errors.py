"""The exception and warning types cclust raises.

Every error a user can cause by bad input is a ``ValidationError`` (a ``ValueError``) whose
message names the argument, what was expected and what was received. Registry problems have
their own types so a caller can tell a typo from a broken plugin.
"""


class CclustError(Exception):
    """Base class of every exception cclust raises on purpose."""


class ValidationError(CclustError, ValueError):
    """An argument has the wrong shape, dtype, range or content."""


class InputSizeError(CclustError):
    """A method refuses the input by design because of its size, not because it is wrong.

    The message names the limit, the size received and how to allow it (a parameter such as
    ``max_objects=`` or ``max_bytes=``) or which method to use instead. ``cclust run`` lists a
    method that raises it as skipped, with that message, rather than as failed.
    """


class MemoryBudgetError(InputSizeError, MemoryError):
    """A dense O(n^2) structure would exceed the memory budget; the message gives the bytes."""


class SizeLimitError(InputSizeError, ValidationError):
    """The input has more objects (or partitions) than a method's declared limit, e.g. an exact
    integer program that is refused above ``max_objects``."""


class UnknownNameError(CclustError, LookupError):
    """No method, utility, generator or metric is registered under the name asked for."""


class RegistryConflictError(CclustError):
    """Two distributions claim the same name, or ``register`` would replace a name."""


class PluginLoadError(CclustError, ImportError):
    """A registered entry point could not be imported."""


class NotFittedError(CclustError, ValueError, AttributeError):
    """A fitted estimator's method was called before ``fit`` (raised as a subclass of
    scikit-learn's NotFittedError too when scikit-learn is installed)."""


class MissingDependencyError(CclustError, ImportError):
    """An optional dependency (scikit-learn, matplotlib, ...) is not installed; the message gives the
    ``pip install`` command that brings it."""


class ContractError(CclustError, TypeError):
    """A registered object does not satisfy the contract of its kind."""


class LostDataError(CclustError, RuntimeError):
    """Dask lost data that a dead worker held and cclust could not make it again: the data had no
    lineage (scattered, not built by a Dask graph), or workers kept dying; the message says which
    and what to change."""


class RegistryWarning(UserWarning):
    """Something in the registry needs attention but did not stop the lookup."""


class ConvergenceWarning(UserWarning):
    """An iterative method stopped at its iteration limit before converging."""
