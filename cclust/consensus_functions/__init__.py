"""The consensus functions, one module per family, each plain Python orchestration over the
compiled cores: ``kcc`` and ``gkcc`` (Wu et al. 2015, Li & Liu 2018), ``graph`` (CSPA, MCLA:
Strehl & Ghosh 2002; HBGF: Fern & Brodley 2004), ``woec`` (Ren et al. 2017),
``least_squares`` (Mirkin & Shestakov), ``voting`` (Nguyen & Caruana 2007; Dimitriadou et al.
2001), ``mixture`` (Topchy et al. 2004) and ``pairwise`` (evidence accumulation, Fred & Jain
2002, and the other co-association baselines).

Find them by name with :func:`cclust.get`, or call one through :func:`cclust.consensus`; the
modules are importable for their helpers and documentation.
"""
