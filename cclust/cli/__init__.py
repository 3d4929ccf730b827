"""The ``cclust`` command: consensus clustering from a shell.

Sub-commands
------------
``cclust run DATA``
    Generate basic partitions of DATA and fuse them. DATA is a bundled dataset name (``iris``,
    ``wine``; the name wins over a file of that name, write ``./iris`` for the file), a CSV file
    (``.csv``, ``.tsv``, ``.txt``), an ``.npy`` file holding X, an ``.npz`` file holding ``X``
    and optionally ``y``, or an AnnData ``.h5ad`` file (``--layer``/``--use-rep`` name the
    features; ``-o FILE.h5ad`` writes a copy of it with the labels added). Without ``--method`` every registered consensus method (plugins
    included) fuses one shared ensemble and the command prints one row per method; with one
    ``--method`` it prints that result. ``--utilities`` compares KCC under every utility of Wu et al. (2015).
``cclust fuse ENSEMBLE``
    Fuse partitions the user already has (one column per partition, any label values).
``cclust select-k DATA --k-range LOW HIGH``
    Consensus CDF, delta area and PAC per K (Monti et al.), with the recommended K.
``cclust markers DATA --labels FILE`` (or ``--labels-column NAME``)
    Each cluster's highest-scoring features against the other objects (``cclust.markers``:
    Wilcoxon rank-sum or Welch's t-test, AUROC, Benjamini-Hochberg adjusted p-values).
``cclust methods``
    The registry: name, kind, provider and description.
``cclust show-config``
    Versions, OpenMP, threads, optional extras and plugins.

Conventions
-----------
* CSV: the delimiter is sniffed among ``,``, ``;`` and tab (tab for ``.tsv``; ``;`` or tab with
  ``--decimal ,``). ``--header yes|no`` overrides the header detection, which takes the first row
  for column names when

  - a column's first cell is not a number while the rest of the column is, or, for columns of
    words, when every first cell occurs nowhere else in its column (a file of one line of words
    only is a header without data);
  - the first row holds distinct integers in increasing order (``2019,2020,2021``; ``1,2,3,4``)
    and the rows below are unlike it: in DATA, most columns below hold fractional numbers (or every
    column below holds only fractional numbers, whatever the order of the first row); in a
    partitions file, some first value is no label of its column below, where a few labels repeat.
    Such a row is read as names, or else as data, with a ``cclust: note:`` saying which and the
    ``--header`` value that takes the other reading (also under ``warnings`` in JSON).

  A header that names two columns alike is refused in DATA (which one would a name pick?).
* A first row one cell shorter than the rows below (R's ``write.table``) is a header over row
  names. A first column with an empty header cell holding 0..n-1 or 1..n in order is the row
  index of pandas' ``to_csv`` (R's ``write.csv`` writes 1..n): it is left out, with a note.
  One holding a different word on every row is R's row names: read as the row IDs, with a note.
  ``--index-column no`` reads that column as data instead. ``--id-column NAME|INDEX`` names the
  column of row IDs; every output keeps them: ``--out`` CSV/TSV gain an ``id`` first column, the
  JSON a list ``ids`` (an ``.npy`` holds labels only, with a note), ``select-k``'s JSON item
  consensus rows an ``id``; a bad cell's error names its row ID.
* ``--samples-in-columns`` (alias ``--transpose``) reads a genes x samples file: each column is
  an object, the header row holds the objects' IDs, each line is a feature (``--id-column`` names
  the column of feature names).
* A line whose every cell ends with a delimiter leaves an empty last column (its header cell
  empty too): it is ignored, with a note (in a partitions file only under a header; without one
  such a column is a partition that labels no object, and refused).
* Numbers: ``--decimal ,`` reads ``0,173``; ``--thousands ,`` (``.``, ``' '``, ``"'"``) removes a
  thousands separator from numbers grouped by threes (``-1,355.6``; ``-1.355,6`` with
  ``--decimal , --thousands .``). A cell that looks like either is refused with the option to pass.
* Missing values: an empty cell, and the cells ``NA``, ``N/A``, ``n/a``, ``NaN``, ``nan``, ``NAN``,
  ``-NaN``, ``-nan``, ``NULL``, ``null``, ``None``, ``#N/A``, ``#NA``, ``<NA>`` and ``?`` (R's,
  pandas' and spreadsheets' spellings, and the UCI repository's), are missing; ``--na-values
  TOKENS`` (comma-separated, e.g. ``--na-values NA,-999``) replaces that list (an empty cell stays
  missing). In DATA a missing feature value is refused, naming its line and column, unless
  ``--missing-features mean`` fills it with its feature's mean; the output then counts the cells
  filled per feature (``missing_filled`` in JSON). In a partitions file a missing cell is an object
  missing from that partition.
* ``--labels-column`` is refused, unless ``--force``, when its values are all different (more than
  5 rows: an ID column) or fractional numbers (a measurement).
* Every data row is one object, in file order, in every output: a line of delimiters only
  (``,``) or an empty line between two rows is a row whose cells are all empty. Only empty lines
  before the first and after the last row (such as the final newline) are not rows. In features
  such a row, or any missing or infinite cell, is refused with its line and column (unless
  ``--missing-features mean``); in an ensemble it is an object missing from every partition,
  reported with its row. ``fuse`` refuses fractional labels (a file of features) and warns of a
  partition that puts every object in a cluster of its own (an ID or index column).
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
``--method-param``), ``_csv`` (the CSV table: reading options, rows, the header and first-column
rules, feature cells), ``_readers`` (DATA and ENSEMBLE files), ``_jobs`` (resolving and running the
methods), ``_report`` (tables, single results, ``--out`` and ``--plot``), ``_commands`` (one
function per sub-command; ``markers`` in ``_markers``) and ``_parser`` (``build_parser`` and ``main``); ``_messages`` holds
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
