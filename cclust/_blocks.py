"""Row-block executors' common ground: the runner interface and exact sums in chunk order.

An executor holds its rows as a list of blocks whose first rows are multiples of the engine's
4096-object chunk (``BLOCK``), and runs the engine's per-block kernels on each block through a
runner (``delayed``, ``persist``, ``compute``): Dask's (:mod:`cclust.dask`) or
:class:`InMemoryRunner`, which runs every task at once in this process. The client adds the
blocks' per-chunk partials in chunk order (:func:`fold`), the order in which the whole-array
kernels add their chunks, so every sum, draw and decision is the in-memory engine's bit for bit.
"""
import operator

import numpy as np

from cclust import _engine

__all__ = ["BLOCK", "InMemoryRunner", "RowBlocks", "aligned", "fold"]

#: rows of the compiled engine's chunks; row blocks start on multiples of it
BLOCK = _engine._CHUNK



def aligned(a, dtype=None):
    """``a`` C-contiguous and aligned: an array unpickled on a worker may start at any byte of
    its message, and the compiled kernels read their inputs as typed (aligned) memory."""
    return np.require(a, dtype=dtype, requirements=["C", "A"])


def fold(parts):
    """Left-to-right sum from 0.0 of a list of arrays of per-chunk partials, in chunk order:
    the order in which the compiled passes add their chunks, so the sum is theirs bit for bit."""
    total = 0.0
    for part in parts:
        for v in part.tolist():
            total += v
    return total


class InMemoryRunner:
    """The runner interface of the block executors (``delayed``, ``persist``, ``compute``) run
    at once in this process: an executor over in-memory blocks, no Dask."""

    @staticmethod
    def delayed(fn):
        return fn

    @staticmethod
    def persist(objs):
        return list(objs)

    compute = persist


class RowBlocks:
    """What every row-block executor shares. A subclass sets ``blocks``, ``starts`` (first row of
    every block, n at the end), ``runner`` and ``delayed``, and defines ``map``,
    ``candidate_rows`` and ``candidate_costs`` (the block's k-means++ candidate pass), which
    :func:`cclust._lloyd.kmeanspp` and :func:`cclust._lloyd.reseed` run on."""

    def part(self, objs, i):
        """Item ``i`` of each Delayed tuple in ``objs``."""
        return [self.delayed(operator.getitem)(o, i) for o in objs]
