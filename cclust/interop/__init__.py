"""Adapters that read the users' container objects and write results back into them.

So far AnnData (``pip install 'cclust[scverse]'``): :func:`cclust.select_k`,
:class:`cclust.ConsensusClustering`, :func:`cclust.generate` and the ``cclust`` command take
one, read its ``X``, a layer or an ``obsm`` embedding, and write the labels, the item consensus
and the statistics into its ``obs`` and ``uns`` as scanpy's clustering tools do (the user guide's
AnnData page). Each adapter recognises its object without importing the library it comes from,
so ``import cclust`` and array input stay free of optional dependencies.
"""
