"""The ``cclust`` command: consensus clustering from a shell.

Sub-commands
------------
``cclust run DATA``
    Generate basic partitions of DATA and fuse them. DATA is a bundled dataset name (``iris``,
    ``wine``; the name wins over a file of that name, write ``./iris`` for the file), a CSV file
    (``.csv``, ``.tsv``, ``.txt``), an ``.npy`` file holding X, or an ``.npz`` file holding ``X``
    and optionally ``y``. Without ``--method`` every registered consensus method (plugins
    included) fuses one shared ensemble and the command prints one row per method; with one
    ``--method`` it prints that result. ``--utilities`` compares KCC under every utility of Wu et al. (2015).
``cclust fuse ENSEMBLE``
    Fuse partitions the user already has (one column per partition, any label values).
``cclust select-k DATA --k-range LOW HIGH``
    Consensus CDF, delta area and PAC per K (Monti et al.), with the recommended K.
``cclust methods``
    The registry: name, kind, provider and description.
``cclust show-config``
    Versions, OpenMP, threads, optional extras and plugins.

Conventions
-----------
* CSV: the delimiter is sniffed among ``,``, ``;`` and tab (tab for ``.tsv``). A header row is
  detected when a column's first cell is not a number while the rest of the column is, or, for
  columns of words, when every first cell occurs nowhere else in its column (a file of one line
  of words only is a header without data); ``--header yes|no`` overrides the guess.
* Every data row is one object, in file order, in every output: a line of delimiters only
  (``,``) or an empty line between two rows is a row whose cells are all empty. Only empty lines
  before the first and after the last row (such as the final newline) are not rows. In features
  such a row, or any empty, NaN or infinite cell, is refused with its line and column
  (``--missing-features mean`` fills empty and NaN cells with the column mean); in an ensemble
  it is an object missing from every partition, reported with its row.
* ``--out`` writes the format its extension names: ``.csv``/``.tsv`` (header ``label``, or one
  column per method), ``.json`` (``{"method": [labels]}``) or ``.npy`` (int64); any other
  extension is refused before the work. Outputs (labels and figures) are written to a
  temporary file in the same folder and renamed when complete, so an error, Ctrl-C (status
  130) or SIGTERM (status 143) never leaves a half-written file under the name. An output that
  names an input file or another output (by name, symbolic or hard link) is refused first.
* ``--method-param KEY=VALUE`` (and ``--generator-param``) values are read as ``none``/``null``
  -> None, ``true``/``false`` -> bool, an integer -> int, a number -> float, otherwise the text;
  a value with commas is a tuple of such values (``k_range=2,6``). ``METHOD:KEY=VALUE`` gives a
  parameter to one method only; a plain ``KEY=VALUE`` goes to every selected method that takes
  ``KEY`` (and is an error if none does).
* User files are never unpickled (``allow_pickle=False``).
* A user error prints one line ``cclust: error: ...`` on standard error and exits with status 2.

Layout
------
The command's code is split by what it does, in private modules: ``_parameters`` (values of
``--method-param``), ``_readers`` (DATA and ENSEMBLE files), ``_jobs`` (resolving and running the
methods), ``_report`` (tables, single results, ``--out`` and ``--plot``), ``_commands`` (one
function per sub-command) and ``_parser`` (``build_parser`` and ``main``); ``_messages`` holds
:class:`UserError` and the one-line messages. The names in ``__all__`` are the stable surface: the
console script ``cclust = "cclust.cli:main"``, the parser the documentation renders, and the
readers and the label writer that scripts may reuse.
"""
from cclust.cli._messages import UserError
from cclust.cli._parameters import parse_value
from cclust.cli._parser import build_parser, main
from cclust.cli._readers import Dataset, load_data, load_ensemble
from cclust.cli._report import write_labels

__all__ = [
    "Dataset",
    "UserError",
    "build_parser",
    "load_data",
    "load_ensemble",
    "main",
    "parse_value",
    "write_labels",
]
