"""Where the Dask executors' tasks run: the given client, the default client, or Dask's local
scheduler (``delayed``, ``persist``, ``compute``, the runner interface of :mod:`cclust._blocks`)."""


def _import_dask():
    try:
        import dask
        import dask.array as da
    except ImportError:  # pragma: no cover - the extra is installed in every test environment
        raise ImportError("the Dask backend needs dask: pip install 'cclust[dask]'") from None
    return dask, da



def _resolve_client(client):
    """The given client, else the default dask.distributed client if one exists, else None
    (Dask's local scheduler)."""
    if client is not None:
        return client
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client has been created
        return None


class _Runner:
    """persist/compute on the given client, else the default client, else the local scheduler."""

    def __init__(self, client):
        self.client = _resolve_client(client)
        self.dask, _ = _import_dask()

    def delayed(self, fn):
        return self.dask.delayed(fn, pure=True)

    def _waves(self, objs):
        """Chunk maps go to a cluster in waves of ~2 tasks per worker thread: given all at
        once, the scheduler may run every chunk's (label-generating) producer before the
        consumers and hold all n x r labels at the same time (measured at n = 1e7, r = 100:
        4.1 GiB peak over client and workers at once, 1.05 GiB in waves)."""
        objs = list(objs)
        try:
            size = max(2, 2 * sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a client that cannot say: one wave
            size = len(objs)
        return [objs[i:i + size] for i in range(0, len(objs), size)]

    def persist(self, objs):
        if not objs:
            return []
        if self.client is not None:
            from distributed import as_completed, futures_of

            out = []
            for wave in self._waves(objs):
                done = self.client.persist(wave)
                for future in as_completed(futures_of(done), loop=self.client.loop):
                    if future.status == "error":
                        future.result()  # raises the worker's exception here, not later
                out.extend(done)
            return out
        return list(self.dask.persist(*objs))

    def compute(self, objs):
        if not objs:
            return []
        if self.client is not None:
            out = []
            for wave in self._waves(objs):
                out.extend(self.client.compute(wave, sync=True))
            return out
        return list(self.dask.compute(*objs))


#: runs of a route (the first and its re-runs) before a loss of data is reported
_ATTEMPTS = 3


def _cancelled_error():
    try:
        from distributed.client import FutureCancelledError
    except ImportError:  # no distributed: the local scheduler loses nothing
        return ()
    return FutureCancelledError


def recovering(run, *, ensemble=None, rng=None, what):
    """``run()``, made again from the start when Dask lost data it could not recompute.

    The scheduler recomputes what a dead worker held from the task graph (the lineage), so a
    route whose every block is built by graph survives a lost worker by itself. Data scattered to
    the cluster has no lineage: when its worker dies the scheduler forgets it and cancels every
    task that needs it (``FutureCancelledError``, "lost dependencies"). Then the ensemble makes
    its labels again from its source (:meth:`DaskEnsemble._regenerate`), ``rng`` is put back in
    the state it had before the first run, and ``run`` starts over: the result is the one an
    undisturbed run gives. After ``_ATTEMPTS`` runs, or when the ensemble has no source to make
    its labels from, a :class:`~cclust.errors.LostDataError` names what was lost and the fix.
    """
    from cclust.errors import LostDataError

    cancelled = _cancelled_error()
    state = None if rng is None else rng.bit_generator.state
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return run()
        except cancelled as exc:
            lost = exc
        if ensemble is None or not ensemble._can_regenerate():
            raise LostDataError(
                f"{what}: a Dask worker died holding data the scheduler cannot recompute ({lost}); "
                "the ensemble's labels depend on data without lineage (e.g. futures from "
                "client.scatter). Build them by a Dask graph (cclust.dask.from_array, "
                "dask.array.from_delayed of a function that loads them, or cclust.generate with "
                "backend='dask') so that a lost worker's part can be computed again."
            ) from lost
        if attempt == _ATTEMPTS:
            break
        ensemble._regenerate()
        if rng is not None:
            rng.bit_generator.state = state
    raise LostDataError(
        f"{what}: Dask workers died and lost the ensemble's labels {_ATTEMPTS} times in a row "
        f"(last: {lost}); the labels were generated again each time. Check why the workers die "
        "(memory limit, preemption) and run again, or persist a cheaper ensemble first "
        "(cclust.dask.from_array(ensemble.compute()))."
    ) from lost
