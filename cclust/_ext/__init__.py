"""Compiled cores. Importing this package sets OpenMP's wait policy before any core loads.

OpenMP threads spin while waiting for work by default. A Lloyd pass has a few short parallel
regions, and when another process holds a core the spinning threads steal its time: measured
here, KCC on satimage took 12.1 s on 2 spinning threads against 1.3 s on 1 thread. A passive
wait policy removes that (1.4 s) at a cost of microseconds per region. A user who sets
``OMP_WAIT_POLICY`` (or ``GOMP_SPINCOUNT``) keeps their setting. A variable set to nothing
(``export OMP_WAIT_POLICY=``) is no setting to OpenMP, whose threads then spin, so it is none
here either: the test suite's quality checks (2 processes on 2 cores) took 162-163 s of CPU with it
against 98-104 s passive.
"""
import os

if not os.environ.get("OMP_WAIT_POLICY", "").strip() and not os.environ.get("GOMP_SPINCOUNT", "").strip():
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
