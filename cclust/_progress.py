"""Progress bars for long loops (partition generation, restarts, ``select_k``).

One rule everywhere: a bar is drawn only when ``verbose`` is truthy **and** standard error is a
terminal, so tests, pipes, notebooks' captured output and CI logs stay silent. tqdm draws the bar
when it is installed (extra ``progress``); without it a terminal gets one plain line per tenth of
the work instead, so ``verbose=1`` never fails for want of an optional package.

Usage::

    with progress(total=n_partitions, desc="kmeans partitions", verbose=verbose) as bar:
        for ...:
            ...
            bar.update(1)

Thread safety: ``update`` may be called from worker threads (tqdm locks internally; the plain
fallback takes its own lock).
"""
import sys
import threading

__all__ = ["progress", "wants_progress"]


def wants_progress(verbose, stream=None):
    """True when a bar should be drawn: ``verbose`` is truthy and ``stream`` is a terminal."""
    if not verbose:
        return False
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed or detached stream
        return False


class _Silent:
    """No bar; also the context-manager half of :class:`_PlainLines`."""

    def update(self, n=1):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _PlainLines(_Silent):
    """The no-tqdm fallback: ``desc: i/total`` each time another tenth is done."""

    def __init__(self, total, desc, stream):
        self.total, self.desc, self.stream = total, desc, stream
        self.done = 0
        self.step = max(1, -(-total // 10)) if total else 1  # a tenth of the work
        self.next_report = self.step
        self.lock = threading.Lock()

    def update(self, n=1):
        with self.lock:
            self.done += n
            if self.done >= self.next_report or (self.total and self.done >= self.total):
                print(f"{self.desc}: {self.done}/{self.total or '?'}", file=self.stream, flush=True)
                while self.next_report <= self.done:
                    self.next_report += self.step


def progress(total=None, desc="", verbose=0, stream=None):
    """A context manager with ``update(n)``: a tqdm bar, plain lines, or nothing (see module doc)."""
    stream = sys.stderr if stream is None else stream
    if not wants_progress(verbose, stream):
        return _Silent()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _PlainLines(total, desc, stream)
    return tqdm(total=total, desc=desc, file=stream, leave=verbose > 1, dynamic_ncols=True)
