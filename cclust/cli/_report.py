"""The report: comparison tables, a single result, labels written with ``--out`` and figures
with ``--plot``."""
from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
import secrets
import shutil
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np
import numpy.typing as npt

from cclust.cli._jobs import _run_jobs, column_names
from cclust.cli._messages import UserError, plural, terminate_as_interrupt

if TYPE_CHECKING:
    from anndata import AnnData
    from matplotlib.figure import Figure

    from cclust.ensemble import Ensemble
    from cclust.result import ConsensusResult
    from cclust.soft import SoftEnsemble


_PLOT_HINT = "pip install 'cclust[plot]'"

#: sort keys: larger is better for these, smaller for the others
_DESCENDING = ("agreement", "ari", "nmi")

#: how the agreement column is explained wherever it is shown
_AGREEMENT = "ANMI, the average NMI of the consensus with the basic partitions, Strehl & Ghosh 2002"


def _settings_text(settings):
    return ", ".join(f"{key}={value}" for key, value in settings.items())


def format_table(rows: list[Sequence[Any]], header: Sequence[str], align: Sequence[str] | None = None) -> str:
    """Rows of strings as aligned text: the first column left-aligned, then ``align`` (default:
    right-aligned, the last column left-aligned)."""
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    align = align or [">"] * (len(header) - 1) + ["<"]
    align = ["<"] + list(align[1:])

    def line(cells):
        return "  ".join(f"{c!s:{a}{w}}" for c, a, w in zip(cells, align, widths)).rstrip()

    lines = [line(r) for r in rows]
    head = line(header)
    # the rule spans the widest line, not just the header (a long last column runs past it)
    return "\n".join([head, "-" * max([len(head)] + [len(t) for t in lines])] + lines)


def _fmt(value, spec):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _has_value(value):
    """False for None and NaN: a value not to show."""
    return value is not None and not (isinstance(value, (float, np.floating)) and math.isnan(value))


def _terminal_width():
    """Columns to lay text out in: the terminal's (or $COLUMNS), 100 when neither is known."""
    return shutil.get_terminal_size((100, 24)).columns


def wrap_cell(text: str, width: int, indent: int) -> str:
    """``text`` as lines of at most ``width`` characters, the lines after the first indented by
    ``indent`` spaces, so that a long note stays under its column. Nothing is cut: a word longer
    than ``width`` (a path, ``max_bytes=990000``) gets a line of its own.

    Examples
    --------
    >>> print(wrap_cell("pass max_bytes=990000 to allow it, or use kcc", 20, 4))
    pass
        max_bytes=990000 to
        allow it, or use kcc
    """
    lines = textwrap.wrap(" ".join(text.split()), width, break_long_words=False, break_on_hyphens=False)
    return ("\n" + " " * indent).join(lines)


def _plain(value):
    """A JSON-safe scalar: NumPy floats to float, NaN and infinities to None (JSON has neither)."""
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _json_safe(obj):
    if isinstance(obj, dict):
        return {key: _json_safe(v) for key, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return _plain(obj)


def _public(row):
    return {key: _plain(v) for key, v in row.items() if key not in ("result", "summary")}


class ComparisonTable:
    """The comparison as aligned text, printable row by row while the methods run.

    Column widths are fixed up front (method names are known; numbers have a set format) so a
    slow method's row can be shown as soon as it is done. The last column (criterion, settings
    and warnings) is never cut: a note longer than the room left on the line continues on the
    next lines, under its column.

    Columns: ``K`` is the number of clusters in the method's consensus partition (the K asked
    for, or the K a method that chooses it found); ``agreement`` is the average NMI of the
    consensus with the basic partitions (ANMI, Strehl & Ghosh 2002), which needs no true labels
    and is comparable across methods; ``ARI``/``NMI`` compare with the true labels when known.
    """

    def __init__(self, names: Iterable[str], y_known: bool, out: TextIO, width: int | None = None) -> None:
        self.out, self.y_known = out, y_known
        method = max([len("method")] + [len(n) for n in names])
        if y_known:
            self.columns = [("method", method, "<"), ("K", 3, ">"), ("ARI", 7, ">"), ("NMI", 7, ">"),
                            ("agreement", 9, ">"), ("seconds", 8, ">"), ("note", 0, "<")]
        else:
            self.columns = [("method", method, "<"), ("K", 3, ">"), ("agreement", 9, ">"), ("objective", 11, ">"),
                            ("seconds", 8, ">"), ("criterion / note", 0, "<")]
        self.indent = sum(w + 2 for _, w, _ in self.columns[:-1])
        self.note_width = max(30, (width or _terminal_width()) - self.indent - 1)
        self.failed = 0
        self.too_large = 0

    def _line(self, cells):
        return "  ".join(f"{c:{a}{w}}" for c, (_, w, a) in zip(cells, self.columns)).rstrip()

    def header(self) -> None:
        head = self._line([name for name, _, _ in self.columns])
        print(head, file=self.out)
        print("-" * len(head), file=self.out, flush=True)

    def row(self, r: Mapping[str, Any]) -> None:
        if r["status"] == "error":
            self.failed += 1
        elif r.get("skipped_because") == "input size":
            self.too_large += 1
        settings = _settings_text(r.get("settings") or {})
        if self.y_known:
            note = "; ".join(t for t in (settings, r["note"]) if t)
            cells = [r["method"], _fmt(r["n_clusters"], "d"), _fmt(r.get("ari"), ".4f"), _fmt(r.get("nmi"), ".4f"),
                     _fmt(r.get("agreement"), ".4f"), _fmt(r["seconds"], ".3f")]
        else:
            note = "; ".join(t for t in (r["objective_name"], settings, r["note"]) if t)
            cells = [r["method"], _fmt(r["n_clusters"], "d"), _fmt(r.get("agreement"), ".4f"),
                     _fmt(r["objective"], ".6g"), _fmt(r["seconds"], ".3f")]
        cells.append(wrap_cell(note, self.note_width, self.indent))
        print(self._line(cells), file=self.out, flush=True)

    def footer(self, n_partitions: int) -> None:
        legend = (f"K: clusters in each method's consensus. agreement: average NMI of the consensus with the "
                  f"{plural(n_partitions, 'basic partition')} (ANMI, Strehl & Ghosh 2002; higher is better; "
                  "needs no true labels).")
        print(wrap_cell(legend, max(30, self.indent + self.note_width), 0), file=self.out)
        if self.too_large:
            text = (f"{plural(self.too_large, 'method')} skipped: refused by design at this input size (the note "
                    "says the limit and how to allow it).")
            print(wrap_cell(text, max(30, self.indent + self.note_width), 0), file=self.out)
        if self.failed:
            print(f"{plural(self.failed, 'method')} failed (the note says why).", file=self.out)


def _sort_key(sort, y_known, command="run"):
    """The key rows are sorted by; ARI/NMI without true labels fall back to the agreement, saying so."""
    if sort in ("ari", "nmi") and not y_known:
        print(f"cclust: note: --sort {sort} needs true labels, which {'DATA' if command == 'run' else 'ENSEMBLE'} "
              f"does not have; sorting by agreement ({_AGREEMENT}) instead.", file=sys.stderr)
        return "agreement"
    return sort


def _sorted_rows(rows, sort):
    if sort == "name":
        return rows
    present = [r for r in rows if r.get(sort) is not None]
    missing = [r for r in rows if r.get(sort) is None]
    present.sort(key=lambda r: r[sort], reverse=sort in _DESCENDING)
    return present + missing


def _compare(jobs, ensemble, k, X, y, args, context, out):
    """Run a comparison and print it in ``args.format``; returns the rows in the printed order."""
    sort = _sort_key(args.sort, y is not None, getattr(args, "command", "run"))
    if args.format == "table":
        print(context["summary"], file=out, flush=True)
        table = ComparisonTable([job.label for job in jobs], y is not None, out)
        table.header()
        if sort == "name":
            rows = _run_jobs(jobs, ensemble, k, X, y, args, strict=False, on_row=table.row)
        else:
            rows = _sorted_rows(_run_jobs(jobs, ensemble, k, X, y, args, strict=False), sort)
            for row in rows:
                table.row(row)
        table.footer(ensemble.n_partitions)
        return rows
    rows = _sorted_rows(_run_jobs(jobs, ensemble, k, X, y, args, strict=False), sort)
    if args.format == "json":
        json.dump({**_public(context), "sorted_by": sort, "rows": [_public(r) for r in rows]}, out, indent=2,
                  default=str)
        out.write("\n")
        return rows
    fields = ["method", "status", "skipped_because", "n_clusters"] + (["ari", "nmi"] if y is not None else []) + \
             ["agreement", "objective", "objective_name", "seconds", "n_iter", "converged", "settings", "note"]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    for row in rows:
        row = dict(row, settings=_settings_text(row["settings"]))
        writer.writerow(["" if row.get(f) is None else row.get(f) for f in fields])
    return rows


def cluster_sizes_text(sizes: Sequence[int], shown: int = 10) -> str:
    """Cluster sizes for a person: all of them when few, else the first ``shown`` and a summary.

    Examples
    --------
    >>> cluster_sizes_text([50, 62, 38])
    'sizes 50, 62, 38'
    >>> cluster_sizes_text([5] * 20 + [1, 90], shown=3)
    'sizes 5, 5, 5, ... (22 clusters: smallest 1, median 5, largest 90)'
    """
    if len(sizes) <= shown + 2:
        return f"sizes {', '.join(map(str, sizes))}"
    return (f"sizes {', '.join(map(str, sizes[:shown]))}, ... ({len(sizes)} clusters: smallest {min(sizes)}, "
            f"median {np.median(sizes):g}, largest {max(sizes)})")


def iterations_text(result: ConsensusResult) -> str | None:
    """What ``n_iter``/``converged`` mean for this result, or None for a one-shot method.

    ``n_iter`` counts the label updates of the run that was kept; a method with restarts
    (``extras["n_iter_per_restart"]``) also gets the total over all restarts, and 0 is
    explained: the kept restart started at a partition no update could improve.

    Examples
    --------
    >>> from cclust import ConsensusResult
    >>> iterations_text(ConsensusResult.from_labels([0, 1], n_iter=0, converged=True,
    ...                                             extras={"n_iter_per_restart": [3, 0, 4]}))
    '0 (converged: the kept restart started at a fixed point; 7 label updates over 3 restarts)'
    >>> iterations_text(ConsensusResult.from_labels([0, 1])) is None
    True
    """
    if result.n_iter is None:
        return None
    state = "converged" if result.converged else "NOT converged"
    if result.n_iter == 0 and result.converged:
        state += ": the kept restart started at a fixed point"
    per_restart = result.extras.get("n_iter_per_restart")
    if per_restart is not None and len(per_restart) > 1:
        state += f"; {plural(int(np.sum(per_restart)), 'label update')} over {len(per_restart)} restarts"
    return f"{result.n_iter} ({state})"


def _print_single(row, y, fmt, context, out, ensemble):
    result = row["result"]
    sizes = np.bincount(result.labels).tolist()
    record = {**_public(context), **_public(row), "cluster_sizes": sizes}
    if fmt == "json":
        json.dump(record, out, indent=2, default=str)
        out.write("\n")
        return
    if fmt == "csv":
        fields = [f for f in ("method", "n_clusters", "ari", "nmi", "agreement", "objective", "objective_name",
                              "seconds", "n_iter", "converged", "settings") if f in record]
        record["settings"] = _settings_text(record["settings"])
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(fields)
        writer.writerow(["" if record[f] is None else record[f] for f in fields])
        return
    settings = _settings_text(row["settings"])
    lines = [("data", context["data"]), ("ensemble", context["ensemble"]),
             ("method", f"{row['method']} ({settings})" if settings else row["method"]),
             ("clusters", f"{result.n_clusters} ({cluster_sizes_text(sizes)})")]
    if _has_value(result.objective):  # a method without a criterion (a plugin's) shows no line for it
        name = f"  [{result.objective_name}]" if result.objective_name else ""
        lines.append(("objective", f"{result.objective:.6g}{name}"))
    iterations = iterations_text(result)
    if iterations is not None:
        lines.append(("iterations", iterations))
    if y is not None:
        lines.append(("ARI / NMI", f"{row['ari']:.4f} / {row['nmi']:.4f}  (against the true labels)"))
    if ensemble is not None:  # None: the method made its own partitions
        lines.append(("agreement", f"{row['agreement']:.4f}  (average NMI with the "
                                   f"{plural(ensemble.n_partitions, 'partition')}, ANMI; higher is better)"))
    lines.append(("time", f"{row['seconds']:.3f} s"))
    if row["note"]:
        lines.append(("warnings", row["note"]))
    width = max(len(k) for k, _ in lines)
    text_width = max(30, _terminal_width() - width - 4)
    for key, value in lines:
        print(f"{key:<{width}} : {wrap_cell(value, text_width, width + 3)}", file=out)


#: what --out writes, by the file's extension
_OUT_FORMATS = {".csv": "comma-separated", ".tsv": "tab-separated", ".json": "JSON", ".npy": "NumPy array",
                ".h5ad": "AnnData, for .h5ad DATA"}


def _out_format(path):
    """The extension of an --out path, refused up front unless it names a format cclust writes."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in _OUT_FORMATS:
        allowed = ", ".join(f"{ext} ({what})" for ext, what in _OUT_FORMATS.items())
        got = repr(suffix) if suffix else "no extension"
        raise UserError(f"--out {path}: the extension names the format to write, one of {allowed}; got {got}.")
    return suffix


#: the temporary name _replacing writes under: .NAME.PID-HEX.part
_PART = re.compile(r"^\..+\.([0-9]+)-[0-9a-f]{12}\.part$")


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM): alive
        return True
    return True


def _remove_stale_parts(folder):
    """Remove the temporary files that writers killed outright (SIGKILL, a power cut) left in ``folder``.

    Only files named as :func:`_replacing` names them whose process no longer runs; a file of a
    live process (another cclust writing to the same folder) is kept. Not on Windows, where no
    signal-free test of a process id exists.
    """
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = _PART.match(entry.name)
            if match and int(match.group(1)) != os.getpid() and not _process_alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False):
                        os.unlink(entry.path)


@contextlib.contextmanager
def _replacing(path, binary=False):
    """Open a temporary file next to ``path``; rename it over ``path`` only once it is complete.

    An error or an interruption (Ctrl-C, or SIGTERM, which is raised as Ctrl-C while the file
    is written) removes the temporary file and leaves ``path`` as it was, so a file under the
    final name is always a complete one. A process killed outright (SIGKILL) can leave the
    hidden ``.NAME.PID-HEX.part`` file, never a truncated ``NAME``; the next write to the same
    folder removes such files once their process is gone.

    The temporary name is chosen before the file is created, so the cleanup knows it even when
    Ctrl-C lands between the file's creation and the return of ``os.open`` (blocking SIGINT
    in this thread would not close that window: the signal can be delivered to any other
    thread of the process, a BLAS or OpenMP worker, and Python raises it in this one at the
    next bytecode).
    """
    folder, name = os.path.split(os.path.abspath(path))
    _remove_stale_parts(folder)
    temp = os.path.join(folder, f".{name}.{os.getpid()}-{secrets.token_hex(6)}.part")
    fd = None
    with terminate_as_interrupt(redeliver=True):
        try:
            # O_EXCL: never open another process's file; mode 0666 less the umask, like any new file
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
            kwargs = {} if binary else {"newline": "", "encoding": "utf-8"}
            with os.fdopen(fd, "wb" if binary else "w", **kwargs) as handle:
                fd = None
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
        except BaseException as exc:
            if fd is not None:  # an interruption can leave fd closed already by its file object
                with contextlib.suppress(OSError):
                    os.close(fd)
            if not isinstance(exc, FileExistsError):  # that file is not ours
                with contextlib.suppress(OSError):
                    os.unlink(temp)
            raise


def write_h5ad(path: str, adata: AnnData) -> None:
    """Write ``adata`` to ``path`` under a temporary name in the same folder, renamed when complete
    (as :func:`_replacing` does for the other formats: never a half-written file under the name)."""
    folder, name = os.path.split(os.path.abspath(path))
    _remove_stale_parts(folder)
    temp = os.path.join(folder, f".{name}.{os.getpid()}-{secrets.token_hex(6)}.part")
    with terminate_as_interrupt(redeliver=True):
        try:
            adata.write_h5ad(temp)
            os.replace(temp, path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            if isinstance(exc, OSError):
                raise UserError(f"--out {path}: cannot write it ({exc.strerror or exc}).") from None
            raise


def _obs_key(column):
    """An obs column name from a method's column name: letters, digits, '_', '-' and '.' kept."""
    return "cclust_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", column).strip("_")


def write_labels_h5ad(path: str, rows: Sequence[dict[str, Any]], adata: AnnData, ensemble: Ensemble | None = None,
                      params: Mapping[str, Any] | None = None) -> None:
    """``--out FILE.h5ad``: a copy of the input AnnData with each successful row's labels in
    ``obs`` (key ``cclust`` for one method, else ``cclust_<method>``) as scanpy writes clusters
    (categorical, categories "0".."K-1"), its item consensus over ``ensemble``'s partitions in
    ``obs[key + "_item_consensus"]``, and its statistics and the run's ``params`` in ``uns[key]``."""
    from cclust.interop import _anndata

    done = [r for r in rows if r["result"] is not None]
    if not done:
        raise UserError(f"--out {path}: no method succeeded, so there are no labels to write.")
    keys = ["cclust"] if len(done) == 1 else [_obs_key(c) for c in column_names([r["method"] for r in done])]
    target = adata.copy()
    for key, row in zip(keys, done):
        result = row["result"]
        stats = {"method": row["method"], "n_clusters": result.n_clusters, "objective": result.objective,
                 "objective_name": result.objective_name, "n_iter": result.n_iter, "converged": result.converged,
                 "params": {**(params or {}), **row.get("settings", {})}}
        _anndata.write_clustering(target, key, result.labels, result.n_clusters, stats, ensemble)
    write_h5ad(path, target)


def write_labels(path: str, rows: Sequence[dict[str, Any]], ids: Sequence[str] | None = None) -> None:
    """Write the labels of the successful rows in the format the extension of ``path`` names.

    One label per data row of the input, in its order. ``.csv`` / ``.tsv``: a header row
    (``label`` for one method, else one column per method, named after it) then one line per
    object, comma- or tab-separated. ``.json``: one object mapping each method to its list of
    labels, ``{"kcc": [0, 2, ...]}``; a method run twice gets columns ``kcc`` and ``kcc #2`` in
    every format (:func:`column_names`). ``.npy``: int64, shape (n_samples,) for one method,
    (n_samples, n_methods) for several. With ``ids`` (one per object: the row IDs of the input),
    the CSV/TSV gains an ``id`` first column and the JSON a list ``"ids"``; ``.npy`` holds labels
    only. The file is written under a temporary name in the same
    folder and renamed when complete, so it never exists half-written.
    """
    suffix = _out_format(path)
    if suffix == ".h5ad":
        raise UserError(f"--out {path}: an .h5ad file is a copy of .h5ad DATA with the labels added; DATA is not "
                        "one, so write .csv, .tsv, .json or .npy.")
    done = [r for r in rows if r["result"] is not None]
    if not done:
        raise UserError(f"--out {path}: no method succeeded, so there are no labels to write.")
    labels = np.column_stack([np.asarray(r["result"].labels, dtype=np.int64) for r in done])
    try:
        if suffix == ".npy":
            with _replacing(path, binary=True) as handle:
                np.save(handle, labels[:, 0] if len(done) == 1 else labels, allow_pickle=False)
        elif suffix == ".json":
            keys = column_names([r["method"] for r in done])
            with _replacing(path) as handle:
                record = {"ids": list(ids)} if ids is not None else {}
                record.update({key: labels[:, i].tolist() for i, key in enumerate(keys)})
                json.dump(record, handle)
                handle.write("\n")
        else:
            with _replacing(path) as handle:
                writer = csv.writer(handle, delimiter="\t" if suffix == ".tsv" else ",", lineterminator="\n")
                head = ["label"] if len(done) == 1 else column_names([r["method"] for r in done])
                writer.writerow(head if ids is None else ["id"] + head)
                for start in range(0, labels.shape[0], 65536):  # in blocks: Ctrl-C is noticed between them
                    block = labels[start:start + 65536].tolist()
                    if ids is not None:
                        block = [[ids[start + i]] + values for i, values in enumerate(block)]
                    writer.writerows(block)
    except OSError as exc:
        raise UserError(f"--out {path}: cannot write it ({exc.strerror or exc}).") from None


def provenance_counts(ensemble: Ensemble | SoftEnsemble) -> dict[str, int]:
    """{what made the partitions: how many}, in order of first appearance; {} without provenance."""
    counts: dict[str, int] = {}
    for name in ensemble.provenance or ():
        counts[name] = counts.get(name, 0) + 1
    return counts


def provenance_text(ensemble: Ensemble | SoftEnsemble, *, repeated_only: bool = False, most: int = 8) -> str:
    """``"50 kmeans, 25 hierarchical-ward, 25 gmm"``: what made the partitions, or "".

    ``repeated_only``: "" unless some name covers several partitions (a file whose header names
    every partition differently says nothing a count would add).
    """
    counts = provenance_counts(ensemble)
    if not counts or (repeated_only and len(counts) == ensemble.n_partitions):
        return ""
    parts = [f"{count} {name}" for name, count in counts.items()]
    if len(parts) > most:
        parts = parts[:most] + [f"{len(parts) - most} more"]
    return ", ".join(parts)


#: what --save-ensemble writes, by the file's extension
_ENSEMBLE_FORMATS = {".csv": "comma-separated", ".tsv": "tab-separated", ".npz": "NumPy archive"}


def ensemble_format(path: str) -> str:
    """The extension of a --save-ensemble path, refused up front unless cclust writes it."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in _ENSEMBLE_FORMATS:
        allowed = ", ".join(f"{ext} ({what})" for ext, what in _ENSEMBLE_FORMATS.items())
        raise UserError(f"--save-ensemble {path}: the extension names the format to write, one of {allowed}; "
                        f"got {repr(suffix) if suffix else 'no extension'}.")
    return suffix


def write_ensemble(path: str, ensemble: Ensemble, provenance: Sequence[str], ids: Sequence[str] | None = None) -> None:
    """Write the basic partitions so that ``cclust fuse`` reads them back, provenance included.

    ``.csv``/``.tsv``: a header row naming what made each partition (``kmeans``, ``gmm``, ...;
    names repeat), then one line per object, -1 for an object missing from a partition. With
    ``ids`` (the input's row IDs) a first column holds them under an empty header cell, the
    layout of R's row names, which ``cclust fuse`` reads back as the objects' IDs.
    ``.npz``: arrays ``labels`` (int32, n_samples x n_partitions) and ``provenance`` (text), and
    ``ids`` (text) with IDs. Written under a temporary name and renamed when complete.
    """
    suffix = ensemble_format(path)
    try:
        if suffix == ".npz":
            with _replacing(path, binary=True) as handle:
                arrays: dict[str, Any] = {"ids": np.array([str(v) for v in ids])} if ids is not None else {}
                np.savez(handle, labels=np.asarray(ensemble.labels), provenance=np.array(provenance, dtype=str),
                         **arrays)
        else:
            with _replacing(path) as handle:
                writer = csv.writer(handle, delimiter="\t" if suffix == ".tsv" else ",", lineterminator="\n")
                writer.writerow(list(provenance) if ids is None else [""] + list(provenance))
                labels = ensemble.labels
                for start in range(0, labels.shape[0], 65536):
                    block = labels[start:start + 65536].tolist()
                    if ids is not None:
                        block = [[ids[start + i]] + values for i, values in enumerate(block)]
                    writer.writerows(block)
    except OSError as exc:
        raise UserError(f"--save-ensemble {path}: cannot write it ({exc.strerror or exc}).") from None


def _plotting():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError(f"--plot needs matplotlib: {_PLOT_HINT}") from None
    from cclust import plotting

    return plotting


def _save_figure(fig, path):
    try:
        with _replacing(path, binary=True) as handle:  # never a half-written image under the name
            fig.savefig(handle, format=os.path.splitext(path)[1].lower().lstrip("."), dpi=110, bbox_inches="tight")
    except OSError as exc:
        raise UserError(f"--plot {path}: cannot write it ({exc.strerror or exc}).") from None
    except ValueError as exc:  # e.g. an unknown image format from the extension
        raise UserError(f"--plot {path}: {exc}") from None


def _new_figure(size):
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    fig = Figure(figsize=size)
    return fig, fig.add_subplot()


def plot_rows(path: str, rows: Sequence[dict[str, Any]], ensemble: Ensemble,
              y: npt.ArrayLike | None) -> tuple[Figure, str]:
    """One result: consensus matrix ordered by its labels; several: a bar chart of the methods by
    ARI against the true labels, or by their agreement with the partitions without them (the
    methods' own objectives are not comparable). Returns the figure and what it shows."""
    plotting = _plotting()
    done = [r for r in rows if r["result"] is not None]
    if not done:
        raise UserError(f"--plot {path}: no method succeeded, so there is nothing to plot.")
    if len(rows) == 1:
        fig, ax = _new_figure((6.0, 5.5))
        plotting.plot_consensus_matrix(ensemble, done[0]["result"].labels, ax=ax)
        what = f"consensus matrix of {done[0]['method']}, ordered by its clusters"
    else:
        metric = "ARI" if y is not None else "agreement (ANMI)"
        keys = {"ari": "ARI", "nmi": "NMI", "agreement": "agreement (ANMI)", "seconds": "seconds", "n_clusters": "K"}
        table = {r["method"]: {shown: r[key] for key, shown in keys.items() if r.get(key) is not None}
                 for r in done}
        fig, ax = _new_figure((max(6.0, 0.4 * len(table) + 2), 4.5))
        plotting.plot_method_comparison(table, metric=metric, ax=ax)
        what = ("bar chart of each method's ARI against the true labels" if y is not None else
                "bar chart of each method's agreement with the partitions (ANMI)")
    _save_figure(fig, path)
    return fig, what
