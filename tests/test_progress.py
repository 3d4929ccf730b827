"""The progress-bar rule: drawn only when verbose and stderr is a terminal."""
import io
import sys
import threading

import pytest
from factories import FakeTerminal

from cclust import _progress


class BrokenStream(io.StringIO):
    def isatty(self):
        raise ValueError("I/O operation on closed file")


@pytest.mark.parametrize("verbose", [0, False, None])
def test_silent_when_not_verbose(verbose):
    stream = FakeTerminal()
    with _progress.progress(total=10, desc="x", verbose=verbose, stream=stream) as bar:
        for _ in range(10):
            bar.update(1)
    assert stream.getvalue() == ""


def test_silent_when_not_a_terminal():
    stream = io.StringIO()  # a pipe, a captured stream, a CI log
    with _progress.progress(total=10, desc="x", verbose=2, stream=stream) as bar:
        for _ in range(10):
            bar.update(1)
    assert stream.getvalue() == ""
    assert not _progress.wants_progress(1, stream)


def test_broken_stream_counts_as_no_terminal():
    assert not _progress.wants_progress(1, BrokenStream())


def test_pytest_capture_is_silent(capsys):
    with _progress.progress(total=3, desc="x", verbose=1) as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""


def test_tqdm_bar_on_a_terminal():
    pytest.importorskip("tqdm")
    stream = FakeTerminal()
    with _progress.progress(total=4, desc="partitions", verbose=2, stream=stream) as bar:
        for _ in range(4):
            bar.update(1)
    text = stream.getvalue()
    assert "partitions" in text and "4/4" in text


def test_plain_fallback_without_tqdm(monkeypatch):
    # Hide tqdm for this call only: the fallback must still report on a terminal.
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    stream = FakeTerminal()
    bar = _progress.progress(total=20, desc="restarts", verbose=1, stream=stream)
    assert isinstance(bar, _progress._PlainLines)
    with bar:
        threads = [threading.Thread(target=lambda: [bar.update(1) for _ in range(5)]) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    lines = stream.getvalue().splitlines()
    assert lines[-1] == "restarts: 20/20"
    assert 1 <= len(lines) <= 10  # one line per tenth at most
    counts = [int(line.split(": ")[1].split("/")[0]) for line in lines]
    assert counts == sorted(counts)
