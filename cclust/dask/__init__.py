"""Dask backend: basic partitions as Dask tasks and KCC over an ensemble chunked by objects.

Users with millions of objects outgrow one machine's memory long before KCC's O(n r K) passes
outgrow its cores. This module runs the two linear-in-n steps on Dask (a
``dask.distributed`` cluster, or Dask's local scheduler when no client is given):

* :func:`generate_partitions` (used by every generator with ``backend="dask"`` or
  ``client=``): each basic partition is one Dask task drawing from the same
  ``SeedSequence`` child as the threaded path, so the ensemble is identical for any backend.
* :class:`DaskEnsemble`: the ``(n, r)`` int32 label matrix as a ``dask.array`` chunked along
  the objects only (every chunk holds all r partitions), with the per-partition facts KCC needs
  (``n_clusters``, ``offsets``, ``weights``, ``cluster_sizes``) computed once, in one pass.
  Chunks are kept at a multiple of 4096 rows, the compiled engine's own chunk, so that sums
  computed chunk by chunk add up in exactly the engine's order. ``compute()`` gives the
  in-memory :class:`~cclust.Ensemble`.
* :func:`kcc`: KCC (Wu et al. 2015) with every pass mapped over the row chunks. Each chunk runs
  the compiled engine's own per-block kernels -- the Lloyd pass of ``lloyd`` (best labels, ties
  kept at the current cluster, per-4096-object objective partials, moved count, tally change),
  the tally, the reseed pick and the k-means++ (Arthur & Vassilvitskii 2007) candidate pass and
  draw of ``kmeanspp`` -- and the client adds the partials in chunk order, builds the centres
  from the tally and applies the stop rule with the engine's own ``centres_from_tally`` and
  ``lloyd_verdict``. Seeding uses the same random numbers as the in-memory path
  (``cclust._engine``). Labels, objective, trace and n_iter are therefore those of
  :func:`cclust.consensus_functions.kcc.kcc` for the same seed, by construction; parameter checks,
  restarts and the result are shared with it (``cclust.consensus_functions._kcc_run``).

* :func:`uspec_ensemble`, :func:`tcut` and :func:`usenc`: U-SPEC generation and the
  transfer-cut consensus of U-SENC (Huang, Wang, Wu, Lai & Kwoh 2020) per row block, the
  representatives and the small column side global (see ``cclust.dask._usenc``); the labels
  do not depend on the chunking.

Nothing ever gathers the label matrix: the client holds K x sum K_i tables and n-vectors of
int32 labels are kept chunked on the workers between passes. When the ensemble's graph
generates its labels (rather than holding persisted chunks), each pass regenerates them, so
memory stays at a few chunks per worker; call :meth:`DaskEnsemble.persist` when the labels fit
in the cluster's memory and passes should not recompute them.

Generation needs every object for every partition (k-means over all of X), so a dask-array X
is gathered once into one task and must fit in one worker's memory; a NumPy X is scattered to
the cluster once.

A lost worker: the scheduler recomputes from the graph what a dead worker held, so every route
survives it with the same result. Only a scattered X has no graph: a generated ensemble keeps
it on the cluster while it lives and, when it is lost, scatters X again and makes its columns
again from the same seeds, and the route runs again from the same draws
(``cclust.dask._runner.recovering``); labels built from data without lineage raise
:class:`cclust.errors.LostDataError`.

Layout: ``_ensemble`` (DaskEnsemble and generation), ``_kcc`` (the KCC block executor),
``_usenc`` (U-SPEC, U-SENC and the transfer cut on blocks), ``_runner`` (where tasks run). What
the row-block executors share with the in-memory paths lives outside the package
(``cclust._blocks``, ``cclust._dense_blocks``, ``cclust._spectral``), so no in-memory module
imports from it.
"""
from cclust._blocks import BLOCK  # noqa: F401 - rows of the engine's chunks; Dask chunks are multiples of it
from cclust._dense_blocks import DenseBlocks as _DenseBlocks  # noqa: F401 - the transfer cut's k-means on blocks
from cclust.dask._ensemble import DaskEnsemble, check_dask_X, from_array, from_blocks, generate_partitions
from cclust.dask._kcc import kcc
from cclust.dask._runner import _Runner  # noqa: F401 - where the tasks run (client, default, local)
from cclust.dask._usenc import tcut, usenc, uspec_ensemble

__all__ = ["DaskEnsemble", "check_dask_X", "from_array", "from_blocks", "generate_partitions", "kcc", "tcut",
           "usenc", "uspec_ensemble"]
