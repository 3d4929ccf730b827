"""Jobs: the consensus methods a command runs, their parameters, and running them one by one
into result rows."""
from __future__ import annotations

import inspect
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cclust.cli._messages import UserError
from cclust.cli._parameters import _RESERVED, _accepts, _method_names, _parameter_names


class Job:
    """One row of a comparison: a label, the registered method and its parameters."""

    def __init__(self, label: str, method: str, params: Mapping[str, Any] | None = None,
                 fn: Callable[..., Any] | None = None, error: str | None = None, reason: str | None = None) -> None:
        self.label, self.method, self.params = label, method, dict(params or {})
        self.fn, self.error, self.reason = fn, error, reason

    def settings(self) -> dict[str, Any]:
        """The choices this run makes: every keyword parameter whose default is a name (KCC's
        ``utility``, EAC's ``linkage``, ...), then what was given with --method-param."""
        shown: dict[str, Any] = {}
        params: Iterable[inspect.Parameter] = ()
        if self.fn is not None:
            try:
                params = inspect.signature(self.fn).parameters.values()
            except (TypeError, ValueError):
                pass
        for p in params:
            if p.kind is inspect.Parameter.KEYWORD_ONLY and isinstance(p.default, str) and p.name not in _RESERVED:
                shown[p.name] = p.default
        shown.update(self.params)
        return {key: value for key, value in shown.items() if value is not None}


def column_names(names: Iterable[str]) -> list[str]:
    """One name per column, a name repeated getting its count: the one rule for the rows of a
    comparison and the columns of ``--out`` (CSV, TSV and JSON keys; ``.npy`` keeps the order).

    >>> column_names(["kcc", "cspa", "kcc", "kcc"])
    ['kcc', 'cspa', 'kcc #2', 'kcc #3']
    """
    seen: dict[str, int] = {}
    out: list[str] = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return out


def _short(exc):
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _resolve_methods(names):
    """Jobs for the named methods (errors raise), or for every registered method (errors recorded)."""
    import cclust
    from cclust.errors import CclustError
    from cclust.registry import KNOWN_PLUGINS, canonical_name, install_hint

    if names:
        names = [canonical_name(name) for name in names]  # --method KCC is kcc
        jobs = []
        # a method asked for twice is shown as kcc and kcc #2, in the table and every output
        for label, name in zip(column_names(names), names):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the registry's warning is for Python; a note is said below
                jobs.append(Job(label, name, fn=cclust.get(name, kind="consensus")))
        _note_claims(names)
        return jobs
    rows = cclust.available(kind="consensus")
    jobs, targets = [], {}
    for name, row in rows.items():
        if row.target in targets and row.target != "<runtime>":
            jobs.append(Job(name, name, error=f"alias of {targets[row.target]}", reason="alias"))
            continue
        targets[row.target] = name
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn = cclust.get(name, kind="consensus")
        except (CclustError, ImportError) as exc:
            jobs.append(Job(name, name, error=f"unavailable: {_short(exc)}", reason="unavailable"))
            continue
        jobs.append(Job(name, name, fn=fn))
    _note_claims(rows)
    for name, (_, why) in KNOWN_PLUGINS.items():
        if name not in rows:
            jobs.append(Job(name, name, error=f"not installed: {install_hint(name)} ({why})",
                            reason="not installed"))
    return sorted(jobs, key=lambda job: job.method)


def _note_claims(names):
    """A note on standard error for each method name a plugin also claims (the built-in is used)."""
    from cclust.registry import BUILTIN_PROVIDER, claims

    claimed = claims()
    for name in dict.fromkeys(names):
        rows = claimed.get(name, ())
        others = [row.provider for row in rows[1:]]
        if rows and rows[0].provider == BUILTIN_PROVIDER and others:
            print(f"cclust: note: {name} is also claimed by the plugin {', '.join(others)}; the built-in {name} "
                  "is used (a plugin cannot replace a built-in: `cclust methods` lists such names).", file=sys.stderr)


def _exclude(jobs, excluded):
    """Drop the methods named by --exclude (each must be one of the jobs)."""
    from cclust.registry import canonical_name

    names = [canonical_name(name) for name in _method_names(excluded)]
    known = {job.method for job in jobs}
    for name in names:
        if name not in known:
            raise UserError(f"--exclude {name}: not among the methods to run ({', '.join(sorted(known))}).")
    kept = [job for job in jobs if job.method not in names]
    if not kept:
        raise UserError("--exclude leaves no method to run.")
    return kept


def _distribute_params(jobs, common, scoped, option):
    """Give each job its parameters; a parameter nobody takes is an error."""
    from cclust.registry import canonical_name

    scoped = {canonical_name(scope): params for scope, params in scoped.items()}  # KCC:utility=uc
    labels = {job.method for job in jobs}
    for scope in scoped:
        if scope not in labels:
            raise UserError(f"{option} {scope}:...: {scope!r} is not among the methods run ({', '.join(sorted(labels))}).")
    taken = set()
    for job in jobs:
        if job.fn is None:
            continue
        for key, value in common.items():
            if _accepts(job.fn, key):
                job.params.setdefault(key, value)
                taken.add(key)
        for key, value in scoped.get(job.method, {}).items():
            if not _accepts(job.fn, key):
                raise UserError(
                    f"{option} {job.method}:{key}=...: {job.method} has no parameter {key!r}; its parameters "
                    f"are {', '.join(_parameter_names(job.fn))}."
                )
            job.params[key] = value
    for key in common:
        if key not in taken:
            if len(jobs) == 1 and jobs[0].fn is not None:
                raise UserError(
                    f"{option} {key}=...: {jobs[0].method} has no parameter {key!r}; its parameters are "
                    f"{', '.join(_parameter_names(jobs[0].fn))}."
                )
            raise UserError(f"{option} {key}=...: none of the methods run takes a parameter {key!r}.")


def _run_job(job, ensemble, k, X, seed, jobs_option, strict):
    """Run one job; returns a result row (dict). ``strict`` lets errors propagate."""
    from cclust._pipeline import call_method
    from cclust.base import method_info
    from cclust.errors import InputSizeError

    # status: ok, error (the note has the exception) or skipped (skipped_because: alias, unavailable,
    # not installed, needs X, or input size: a method refusing the input's size by design)
    row = {"method": job.label, "status": "ok", "skipped_because": None, "n_clusters": None, "agreement": None,
           "objective": None,
           "objective_name": None, "seconds": None, "n_iter": None, "converged": None, "settings": {},
           "note": "", "result": None}
    if job.fn is None:
        row.update(status="skipped", skipped_because=job.reason, note=job.error)
        return row
    if method_info(job.fn).requires_X and X is None:
        message = f"{job.method} needs the original features X; run it with `cclust run DATA --method {job.method}`"
        if strict:
            raise UserError(message + ".")
        row.update(status="skipped", skipped_because="needs X", note=message)
        return row
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # The estimator's call: X, threads (n_jobs) and the seed as each method takes them.
            # A method that makes its own partitions of X (usenc) gets none of the generated ones.
            own = method_info(job.fn).generates_ensemble
            result = call_method(job.fn, None if own else ensemble, k, job.params, seed, X, jobs_option, 0)
    except InputSizeError as exc:  # refused by design (a declared limit, the memory budget): not a failure
        if strict:
            raise
        row.update(status="skipped", skipped_because="input size",
                   note="skipped: " + " ".join(str(exc).split()))
        return row
    except Exception as exc:  # one failing method (or broken plugin) must not stop the table
        if strict:
            raise
        row.update(status="error", note=_short(exc))
        return row
    row["seconds"] = time.perf_counter() - start
    notes = sorted({" ".join(str(w.message).split()) for w in caught})
    if own and ensemble is not None:
        notes.insert(0, "fused its own partitions of DATA, not the ensemble above")
    row.update(n_clusters=result.n_clusters, objective=result.objective, objective_name=result.objective_name,
               n_iter=result.n_iter, converged=result.converged, settings=job.settings(), note="; ".join(notes),
               result=result)
    return row


def _score_row(row, y, ensemble):
    """ARI and NMI against the true labels when known; always the label-free agreement."""
    import cclust

    if row["result"] is None:
        return
    labels = row["result"].labels
    if ensemble is not None:  # None: one method that made its own partitions, which it does not return
        row["agreement"] = float(cclust.get("consensus-score")(labels, ensemble))
    if y is not None:
        row["ari"] = float(cclust.get("ari")(y, labels))
        row["nmi"] = float(cclust.get("nmi")(y, labels))


def _run_jobs(jobs, ensemble, k, X, y, args, strict, on_row=None):
    """Run every job in order; ``on_row(row)`` sees each row as soon as it is done."""
    from cclust._progress import progress

    from cclust.soft import is_soft_ensemble

    # soft partitions are fused as they are; the label-free agreement reads their most likely clusters
    scored = ensemble.harden() if ensemble is not None and is_soft_ensemble(ensemble) else ensemble
    rows = []
    with progress(total=len(jobs), desc="consensus methods", verbose=args.verbose) as bar:
        for job in jobs:
            row = _run_job(job, ensemble, k, X, args.seed, args.jobs, strict)
            _score_row(row, y, scored)
            rows.append(row)
            bar.update(1)
            if on_row is not None:
                on_row(row)
    return rows
