"""``python -m cclust``: the same as the ``cclust`` command (see :mod:`cclust.cli`)."""
import sys

from cclust.cli import main

if __name__ == "__main__":
    sys.exit(main())
