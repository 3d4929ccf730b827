"""``python -m cclust.cli``: the ``cclust`` command (the same as ``python -m cclust``)."""
import sys

from cclust.cli._parser import main

if __name__ == "__main__":
    sys.exit(main())
