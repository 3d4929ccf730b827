"""Speed of the last decade's consensus functions against the authors' code (GNU Octave), one
family after another: ``benchmarks/reproduce_modern.py`` with ``--bench`` preset.

    PYTHONPATH=. python benchmarks/bench_modern.py
    PYTHONPATH=. python benchmarks/bench_modern.py --families ecpcs trajectories
"""
import sys

from reproduce_modern import main

if __name__ == "__main__":
    sys.exit(main(default_mode="bench"))
