"""What every part of the ``cclust`` command says: the user-error type, counts with their
noun, the one-line warnings and notes on standard error, and SIGTERM handled as Ctrl-C."""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator


def plural(n: int, noun: str) -> str:
    """A count with its noun in the right number.

    Examples
    --------
    >>> plural(1, "partition"), plural(2, "partition"), plural(3, "class"), plural(0, "method")
    ('1 partition', '2 partitions', '3 classes', '0 methods')
    """
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {noun}es" if noun.endswith("s") else f"{n} {noun}s"


def _warn(message, warnings_list=None):
    """One ``cclust: warning:`` line on standard error (and the message kept for JSON output)."""
    print(f"cclust: warning: {' '.join(message.split())}", file=sys.stderr)
    if warnings_list is not None:
        warnings_list.append(message)


def _note(message, warnings_list=None):
    """One ``cclust: note:`` line on standard error: a choice made for the user, and how to undo it
    (kept for JSON output under ``warnings`` too)."""
    print(f"cclust: note: {' '.join(message.split())}", file=sys.stderr)
    if warnings_list is not None:
        warnings_list.append(message)


class UserError(Exception):
    """A problem with what the user asked for: reported in one line, no traceback."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill PID``, a batch scheduler's time limit) raised like Ctrl-C, so that the same
    cleanup runs: a file being written is removed, never left half-written or as a temporary."""


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def terminate_as_interrupt(redeliver: bool = False) -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) where it
    would have ended the process at once.

    Only in the main thread and only where SIGTERM has its default action: a handler the program
    set itself is kept. ``redeliver``: once the block has cleaned up after a SIGTERM, the default
    action is restored and the signal sent again, so the process still ends by SIGTERM as its
    sender expects (for writes outside ``cclust.cli.main``, which exits with status 143 instead).
    """
    installed = False
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGTERM"):
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _raise_terminated)
                installed = True
    try:
        yield
    except Terminated:
        if installed and redeliver:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            installed = False
            os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
