"""The sketch route of select_k: the protocol on sketches of the objects, every other object
labelled from them, over rows held in memory or in the chunks of a dask array."""
import contextlib
import contextvars
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from cclust._pipeline import child_seeds, object_index, validate_X
from cclust.errors import ValidationError
from cclust.selection._recommend import _check_k_range
from cclust.validation import check_float, check_int, check_n_jobs


#: Set by :func:`select_k_on_sketches` while its second and later sketches run: a function that
#: waits for the first sketch and gives its K tried, its number of reference data sets and its
#: reference PACs (B x K), or None when it drew none. The null's PAC depends on the objects'
#: count, their principal axes and spreads, and the protocol; the sketches share the count and the
#: protocol, and are drawn from the same objects, so each later sketch is judged against the first
#: sketch's reference data sets instead of drawing its own (the reference runs are most of the
#: sketch route's time). The sketches' K then differ by the objects drawn, not by the null's Monte
#: Carlo error, which ``rcsi_se`` reports.
SHARED_REFERENCE = contextvars.ContextVar("cclust_shared_reference", default=None)


def reference_offered():
    """Whether this select_k runs a later sketch, offered the first sketch's reference PACs (read
    them with :func:`shared_reference_pacs` once the data's protocol is done)."""
    return SHARED_REFERENCE.get() is not None


def shared_reference_pacs(k_values, n_references):
    """The first sketch's reference PACs for these K and this many references (a copy; waits
    until the first sketch has them), or None: draw the reference data sets."""
    offer = SHARED_REFERENCE.get()
    shared = None if offer is None else offer()
    if shared is None:
        return None
    ks, count, pacs = shared
    if ks != tuple(k_values) or count != n_references:
        return None
    return pacs.copy()


class InMemoryRows:
    """The objects of the sketch route held as one array: draws, gathers and propagation on X.

    :func:`select_k_on_sketches` runs on this interface (``n``, ``draw``, ``take``,
    ``label``, ``running``, ``concurrent``); ``cclust.dask`` gives the same one over the chunks of a dask array.
    """

    #: The sketches' protocols may run in threads beside each other.
    concurrent = True

    def __init__(self, X):
        self.X = X
        self.n = X.shape[0]
        self._cells = {}     # size -> the geometric sketch's cubes, the same for every draw of that size

    def running(self):
        """Where the protocol's runs on a sketch go: here, this process's threads."""
        return contextlib.nullcontext()

    def draw(self, size, how, rng):
        """The sketch's objects; the geometric sketch's grid (the principal axes and the
        bisection on the cube side) depends on X and ``size`` only, so it is found once and
        only the round-robin draw differs between sketches (the same objects as
        :func:`cclust._sketch.draw_sketch`)."""
        from cclust import _sketch

        if how != "geometric":
            return _sketch.draw_sketch(self.X, size, how, rng)
        if size not in self._cells:
            self._cells[size] = _sketch.geometric_cells(_sketch.PrincipalGrid(self.X), size)
        return _sketch.round_robin(self._cells[size], size, rng)

    def take(self, chosen):
        return self.X[chosen]

    def label(self, fits, sizes, rule, n_threads):
        """Every object's labels at each K from the first of ``fits`` and the sketches' pair
        contingency tables (:func:`cclust._sketch.label_rows`)."""
        from cclust import _assign, _sketch

        neighbours = _assign.check_neighbors(None, fits[0][1].shape[0])
        return _sketch.label_rows(self.X, 0, fits, sizes, rule, neighbours, n_threads)


def in_memory_rows(data, missing_features):
    return InMemoryRows(validate_X(data, "data", missing_features)[0])


def _fit_beside(arguments, size, k_values):
    """Whether two sketches' protocols fit the memory budget at once: twice the dense route's
    estimate for ``size`` objects and the resamples given (when none are, the plain protocol's,
    the larger of select_k's defaults). Arguments select_k would refuse run one sketch at a time,
    where it refuses them."""
    from cclust import _monti
    from cclust.selection._resampling import RESAMPLES_PLAIN
    from cclust.validation import memory_budget

    resamples = arguments.get("n_resamples")
    try:
        resamples = RESAMPLES_PLAIN if resamples is None else check_int(resamples, "n_resamples", low=1)
        budget = memory_budget(arguments.get("max_bytes"))
    except ValidationError:
        return False
    need = _monti.dense_bytes(size, resamples, [int(k) for k in k_values], bool(arguments.get("keep_matrices")))
    return 2 * need <= budget


def select_k_on_sketches(arguments, select_k, rows_of=in_memory_rows):
    """select_k on ``n_sketches`` sketches of the objects (see :func:`select_k`): the first
    sketch's result with every object's labels, and the agreement between the sketches.
    ``select_k`` runs on each sketch; ``rows_of(data, missing_features)`` checks the features and gives the rows' interface
    (:class:`InMemoryRows`, or the Dask chunks')."""
    from dataclasses import replace

    from cclust import _assign, _monti, _sketch
    from cclust.ensemble import Ensemble
    from cclust.metrics._pair_counting import ari_from_table
    from cclust.selection._result import SketchItemConsensus

    data = arguments.pop("data")
    size, how = arguments.pop("sketch"), arguments.pop("sketch_method")
    count = check_int(arguments.pop("n_sketches"), "n_sketches", low=1)
    rule = _assign.check_method(arguments.pop("propagation"), "propagation")
    if isinstance(data, Ensemble):
        raise ValidationError("sketch labels the objects outside the sketch by their features, but data is an "
                              "Ensemble; pass the features X as data, or drop sketch.")
    if arguments["method"] != "monti":
        raise ValidationError("sketch runs the Monti protocol on the sketch and labels the other objects from "
                              "its consensus clusters; pass method='monti', or drop sketch.")
    rows = rows_of(data, arguments["missing_features"])
    n = rows.n
    k_values = _check_k_range(arguments["k_range"], n, one_allowed=True)
    subsample = check_float(arguments["subsample"], "subsample", low=0, high=1, low_open=True)
    needed = max(2, int(k_values[-1]))
    smallest = next((s for s in range(needed, n + 1) if _monti.sample_size(s, subsample) >= needed), n)
    size = _sketch.check_sketch(size, how, n, smallest)
    weights = arguments.pop("item_weights")
    threads = check_n_jobs(arguments["n_jobs"], "n_jobs")
    root = child_seeds(arguments.pop("random_state"), 1)[0]
    sketches = []
    for t in range(count):
        draw, run = np.random.SeedSequence(root, spawn_key=(5, t)).spawn(2)
        chosen = rows.draw(size, how, np.random.default_rng(draw))
        sketches.append((chosen, rows.take(chosen), int(run.generate_state(1)[0])))
    first_done = Future()

    def first_reference():
        part = first_done.result()
        if part.pac_reference is None:
            return None
        return tuple(part.k_values.tolist()), part.n_references, part.pac_reference

    def one_sketch(t, jobs):
        chosen, fitted, seed = sketches[t]
        token = SHARED_REFERENCE.set(None if t == 0 else first_reference)
        try:
            with rows.running():
                return select_k(fitted, random_state=seed, **dict(arguments, n_jobs=jobs),
                                item_weights=None if weights is None else np.asarray(weights)[chosen])
        finally:
            SHARED_REFERENCE.reset(token)

    # The later sketches wait for the first one's reference PACs only at their very end, so with
    # spare threads they run beside it (one thread; results do not depend on n_jobs): the first
    # sketch's reference runs leave a core idle at times (the data's consensus of each K is one
    # thread), and the later sketches fill it. Two sketches' consensus matrices are then held at
    # once, so only when twice the dense route's estimate fits the memory budget.
    beside = (count > 1 and threads > 1 and rows.concurrent and not arguments["verbose"]
              and _fit_beside(arguments, size, k_values))
    pool = ThreadPoolExecutor(max_workers=1) if beside else None
    try:
        later = [pool.submit(contextvars.copy_context().run, one_sketch, t, 1) for t in range(1, count)] if beside else []
        try:
            first_done.set_result(one_sketch(0, arguments["n_jobs"]))
        except BaseException as error:
            first_done.set_exception(error)
            raise
        results = [first_done.result()]
        results += [future.result() for future in later] if beside else [one_sketch(t, arguments["n_jobs"])
                                                                        for t in range(1, count)]
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    fits = []
    for t, part in enumerate(results):
        # the later sketches' labels serve the agreement only, at the K tried
        labels = part.labels if t == 0 else {k: part.labels[k] for k in results[0].k_values.tolist()}
        fits.append((sketches[t][0], sketches[t][1], {k: np.asarray(lab, dtype=np.int64) for k, lab in labels.items()}))
    first = results[0]
    # one pass over the objects labels them from every sketch; only the first sketch's labels
    # and, per K, the sketches' contingency tables come back
    sizes = {k: int(max(lab[k].max() for _, _, lab in fits)) + 1 for k in first.k_values.tolist()} if count > 1 else {}
    everyone, tables = rows.label(fits, sizes, rule, threads)
    agreement = best_ks = None
    if count > 1:
        best_ks = tuple(part.best_k for part in results)
        agreement = {k: float(np.mean([ari_from_table(table) for table in tables[k]])) for k in sizes}
    chosen = fits[0][0]
    compact = dict(first.item_consensus)
    return replace(first, labels=everyone, item_consensus=SketchItemConsensus(n, chosen, compact),
                   sketch_item_consensus=compact, index=object_index(data), sketch=chosen, sketch_method=how,
                   sketch_propagation=rule, sketch_best_k=best_ks, sketch_agreement=agreement)
