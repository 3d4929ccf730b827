"""What every part of the ``cclust`` command says: the user-error type, counts with their
noun, and the one-line warnings and notes on standard error."""
import sys


def plural(n, noun):
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
