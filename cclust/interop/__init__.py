"""Adapters that read the users' container objects and write results back into them.

Each adapter is imported only when such an object is passed in, and recognises it without
importing its library (by the class's module and name), so ``import cclust`` and every array
input stay free of optional dependencies.
"""
