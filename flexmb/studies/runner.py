"""``flexmb.sweep``: run a study (one simulation per parameter set) serially or on dask.distributed,
store the results as runs finish, resume from the store, return a pandas DataFrame.

Stages: parameter sets -> drop those already stored -> executor (serial loop, or a dask Client
with the study functions and the shared inputs sent once to every worker) -> each finished run:
row -> store (journaled at once, folded into a Parquet part every ``store_every`` s) -> progress ->
DataFrame in parameter-set order.
"""
from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from flexmb.errors import ModelError
from flexmb.studies.arguments import SERIAL, check_keywords, checked_arguments
from flexmb.studies.deps import require
from flexmb.studies.fingerprint import study_fingerprint
from flexmb.studies.mainscript import check_main_guard, workers_skip_missing_main
from flexmb.studies.parameters import parameter_key, parameter_sets
from flexmb.studies.progress import StudyProgress
from flexmb.studies.store import FINGERPRINT, ResultStore
from flexmb.studies.task import RUN_COLUMNS, StudyFunctions, run_one

__all__ = ["sweep", "SERIAL", "THREAD_ENV", "local_cluster", "warm_workers"]

logger = logging.getLogger(__name__)

#: dask settings of flexmb's LocalCluster.  A study's tasks are CPU-bound Python runs of seconds:
#: every wake-up of a worker's event-loop thread takes the GIL from the run.  Measured on idle
#: 2-worker clusters (this 2-core machine): background CPU 1.8 % of a core per worker and 4 % for the
#: scheduler process with dask's defaults, 0.3 % and 0.7 % with these.
#: ``profile.enabled``: the statistical profiler samples the running task's stack every 10 ms;
#: ``tick.interval``: the blocked-event-loop detector (20 ms by default; the largest share);
#: ``system-monitor.interval``: CPU/memory/network statistics for the dashboard (off here);
#: ``memory.monitor-interval``: the memory-limit watchdog (reacts within 1 s instead of 0.1 s).
QUIET_CONFIG = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                "distributed.admin.system-monitor.interval": "5s", "distributed.worker.memory.monitor-interval": "1s"}

#: environment of the worker processes: one BLAS/OpenMP thread each (one worker per core; more
#: threads would oversubscribe the cores)
THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def sweep(build: Callable, parameters: Any, outputs: Callable | None = None, *, simulate_kwargs: dict | None = None,
          shared: dict | None = None, store: str | os.PathLike | None = None, scheduler: Any = "local",
          workers: int | None = None, retries: int = 0, rerun_failed: bool = False, progress: bool | None = None,
          store_every: float = 5.0, cluster_kwargs: dict | None = None, if_changed: str = "error"):
    """Run one simulation per parameter set and collect the outputs in a DataFrame.

    Parameters
    ----------
    build : callable
        ``build(**params, **shared)`` returns a :class:`flexmb.Model`, or ``(model, simulate_kwargs)``
        (a dict of :func:`flexmb.simulate` arguments overriding ``simulate_kwargs`` of the sweep).
        Called on the worker: only the function travels, the model is built there.
    parameters : dict of lists, list of dicts or pandas.DataFrame
        A grid (full factorial, first name slowest), explicit sets, or a table; see
        :func:`flexmb.studies.parameter_sets`, :func:`flexmb.linear_range`, :func:`flexmb.log_range`.
    outputs : callable, optional
        ``outputs(solution, **params)`` returns a dict name -> scalar (number, bool, str) or small
        array.  None: only the run columns.
    simulate_kwargs : dict, optional
        Defaults of :func:`flexmb.simulate` for every run (``t_end``, ``h``, ``p``, ``rtol``, ...).
    shared : dict, optional
        Extra keyword arguments of ``build`` computed once, sent once to every worker (a
        :class:`flexmb.FlexibleBodyData`, a mesh).  Not part of the parameter-set key.
    store : path, optional
        Parquet results directory (``results.parquet``): each finished run is appended to a journal
        in it at once (it survives a kill of this process); a parameter set already stored is not
        run again (a killed sweep resumes).  The store records the study that computed its rows:
        the code of ``build`` and ``outputs`` (and of the functions and constants of the study's
        modules they use), ``simulate_kwargs``, ``shared`` and the flexmb version
        (:mod:`flexmb.studies.fingerprint`); see ``if_changed``.
    scheduler : ``"local"``, None, ``"sync"``, address or ``dask.distributed.Client``
        ``"local"`` (default): a ``LocalCluster`` of ``workers`` processes (default: one per core,
        at most one per run) on 127.0.0.1, closed at the end.  None / ``"sync"``: serially in this
        process (no dask needed).  ``"tcp://host:8786"``: the scheduler of a running cluster.  A
        ``Client``: used as is (and left open).
    workers : int, optional
        Local workers; with an address, wait until that many workers have joined.
    retries : int
        Further attempts of a failed run (on the worker), and of a run whose worker died.
    rerun_failed : bool
        Also recompute runs stored as failed (default: a stored failure counts as done).
    progress : bool, optional
        Bar with done / failed / ETA (default: on a terminal); INFO log lines otherwise.
    store_every : float
        Seconds between folds of the journal into a Parquet part file written to disk (0: after
        every run); a fold also makes the rows survive a crash of the machine.
    cluster_kwargs : dict, optional
        More arguments of ``LocalCluster`` (``dashboard_address=":8787"``, ``memory_limit``, ...).
    if_changed : ``"error"``, ``"recompute"`` or ``"keep"``
        What to do when the store holds rows of another version of the study (other outputs,
        build code, simulate_kwargs, shared inputs or flexmb version, or a store that did not
        record its version): raise :class:`StoreError` saying what changed (default), compute those
        runs again (their rows are replaced), or take them as they are (they then count as this
        version's).

    Returns
    -------
    pandas.DataFrame
        One row per parameter set, in the order of ``parameters``: the parameters, the outputs, and
        ``status`` (``"ok"`` / ``"failed"``), ``error`` (exception class), ``message``,
        ``started`` (POSIX time [s]), ``wall_time`` [s], ``cpu_time`` [s], ``attempts``, ``steps``, ``newton_iterations``, ``newton_max_iterations``,
        ``factorizations``, ``step_retries``, ``t_reached`` [s], ``worker``, ``key``.
        ``df.attrs["sweep"]``: ``computed``, ``from_store``, ``failed``, ``workers``, ``wall_time``.

    Raises
    ------
    StoreError
        ``store`` is not a results store, or holds rows of another version of the study
        (``if_changed="error"``).
    MissingDependencyError
        pandas (or dask.distributed for a cluster, pyarrow for a store) is not installed: the
        message names the extra ``flexmb[sweep]``.
    ModelError
        Any bad argument, before any run (:mod:`flexmb.studies.arguments`,
        :func:`flexmb.studies.parameter_sets`: e.g. a parameter named like a result column,
        ``workers=0``, an unknown ``simulate_kwargs`` key); a failing run is a row, not an exception.
    """
    pd = require("pandas", "flexmb.sweep")
    args = checked_arguments(build, outputs, simulate_kwargs, shared, store, scheduler, workers, retries, rerun_failed,
                             progress, store_every, cluster_kwargs, if_changed)
    simulate_kwargs, shared, store, workers, retries, store_every, cluster_kwargs = (
        args[k] for k in ("simulate_kwargs", "shared", "store", "workers", "retries", "store_every", "cluster_kwargs"))
    if store is not None:
        require("pyarrow", "flexmb.sweep(store=...)")
    sets = parameter_sets(parameters)
    keys = [parameter_key(s) for s in sets]
    clash = sorted(set(shared) & set().union(*sets))
    if clash:
        raise ModelError(f"shared inputs {clash} have the names of swept parameters; a name is either swept or shared: "
                         f"drop it from shared or from the parameters")
    names = list(dict.fromkeys(n for s in sets for n in s))
    check_keywords(build, "build", names + list(shared), {**{n: "the parameters" for n in names},
                                                          **{k: "shared" for k in shared}})
    if outputs is not None:
        check_keywords(outputs, "outputs", names, {n: "the parameters" for n in names})
    if scheduler == "local":
        check_main_guard()  # before anything is stored or started
    rs = ResultStore(store, study_fingerprint(build, outputs, simulate_kwargs, shared)) if store is not None else None
    stored = rs.done(rerun_failed, if_changed) if rs is not None else {}
    adopt = [k for k in keys if k in stored and stored[k][FINGERPRINT] != rs.current]  # if_changed="keep"
    todo = [i for i, k in enumerate(keys) if k not in stored]
    meta = {"parameters": names, "n_sets": len(sets), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "build": getattr(build, "__qualname__", repr(build)), "module": getattr(build, "__module__", None)}
    from flexmb import __version__

    meta["flexmb_version"] = __version__
    rows: dict[int, dict] = {}
    bar = StudyProgress(len(todo), skipped=len(sets) - len(todo), enabled=progress)
    start = time.perf_counter()
    n_workers, complete = 1, False
    last_flush = time.perf_counter()
    try:
        if todo:
            runs = _serial(build, outputs, sets, keys, todo, shared, simulate_kwargs, retries) if scheduler in SERIAL \
                else None
            with contextlib.ExitStack() as stack:
                if runs is None:
                    client = stack.enter_context(_client(scheduler, workers, len(todo), cluster_kwargs))
                    n_workers = max(len(client.scheduler_info(n_workers=-1).get("workers", {})), 1)
                    runs = _distributed(client, build, outputs, sets, keys, todo, shared, simulate_kwargs, retries)
                stack.callback(runs.close)  # cancels pending runs (before the client closes) on Ctrl-C
                for i, record in runs:
                    row = _row(sets[i], record)
                    rows[i] = row
                    _forward_logs(sets[i], record)
                    if record["status"] != "ok":
                        logger.warning("run %s failed: %s: %s", sets[i], record["error"], record["message"])
                    bar.update(record["status"] == "ok")
                    if rs is not None:
                        rs.add(row, meta)  # in the journal at once: durable against a kill of this process
                        if time.perf_counter() - last_flush >= store_every:
                            rs.flush(meta)
                            last_flush = time.perf_counter()
        complete = True
    except KeyboardInterrupt:
        logger.warning("sweep interrupted after %d of %d runs%s", len(rows), len(todo),
                       f"; they are stored in {rs.path}: run the same sweep again to resume" if rs else "")
        raise
    finally:
        bar.close()
        if rs is not None:
            rs.close()
            if complete:
                rs.compact(adopt)
    for i, k in enumerate(keys):
        if i not in rows:
            rows[i] = {**{c: v for c, v in stored[k].items() if c != FINGERPRINT}, **sets[i]}
    df = _frame(pd, [rows[i] for i in range(len(sets))], names)
    df.attrs["sweep"] = {"computed": len(todo), "from_store": len(sets) - len(todo),
                         "failed": int((df["status"] != "ok").sum()), "workers": n_workers,
                         "wall_time": time.perf_counter() - start}
    return df


def _serial(build, outputs, sets, keys, todo, shared, simulate_kwargs, retries) -> Iterator[tuple[int, dict]]:
    """Runs in this process (logging, warnings and prints go where they normally go)."""
    for i in todo:
        yield i, run_one((build, outputs), sets[i], keys[i], shared=shared, simulate_kwargs=simulate_kwargs,
                         n_retries=retries)


def _distributed(client, build, outputs, sets, keys, todo, shared, simulate_kwargs, retries) -> Iterator[tuple[int, dict]]:
    """Runs on the workers of ``client``, yielded as they finish; pending runs are cancelled when the
    generator is closed early (Ctrl-C)."""
    distributed = require("distributed", "flexmb.sweep on a cluster")
    # the functions (a few kB) travel with every task, so that no run depends on data held by a
    # worker that may die; shared inputs (maybe large) are sent once to every worker
    functions = StudyFunctions.dumps(build, outputs)
    shared_f = {name: client.scatter(value, broadcast=True, hash=False) for name, value in shared.items()}
    level = logging.getLogger("flexmb").getEffectiveLevel()
    token = uuid.uuid4().hex[:8]
    futures, index = [], {}
    for i in todo:
        fut = client.submit(run_one, functions, sets[i], keys[i], shared=shared_f, simulate_kwargs=simulate_kwargs,
                            n_retries=retries, origin_pid=os.getpid(), log_level=level, key=f"flexmb-run-{keys[i]}-{token}",
                            pure=False, retries=retries)
        futures.append(fut)
        index[fut.key] = i
    try:
        for fut, result in distributed.as_completed(futures, with_results=True, raise_errors=False):
            i = index[fut.key]
            if not isinstance(result, dict):
                # the task itself was lost (its worker died, a result that cannot be sent): the run failed
                if isinstance(result, tuple) and len(result) == 3 and isinstance(result[1], BaseException):
                    result = result[1]  # (type, exception, traceback)
                result = _lost(keys[i], result)
            yield i, result
    finally:
        left = [f for f in futures if not f.done()]
        if left:
            client.cancel(left)


def _lost(key: str, exc: Any) -> dict:
    from flexmb.studies.task import newton_stats

    message = str(exc)
    if type(exc).__name__ == "KilledWorker":
        message = (f"the run ended its worker process each time it was tried ({exc}): a crash in compiled code, "
                   f"os._exit or the process running out of memory")
    rec = dict(key=key, status="failed", error=type(exc).__name__, message=message, outputs={}, attempts=1,
               worker=None, log=[], started=float("nan"), wall_time=float("nan"), cpu_time=float("nan"))
    rec.update(newton_stats(None))
    return rec


@contextlib.contextmanager
def _client(scheduler: Any, workers: int | None, n_runs: int, cluster_kwargs: dict | None):
    distributed = require("distributed", "flexmb.sweep on a cluster")
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    if scheduler == "local":
        kwargs = dict(cluster_kwargs or {})
        # workers_skip_missing_main for the cluster's life: a worker restarted by its nanny spawns too
        with _restored_environ(), _quiet("distributed", kwargs.get("silence_logs", logging.WARNING)), \
                workers_skip_missing_main(), local_cluster(workers or min(_cores(), n_runs), **kwargs) as cluster, \
                distributed.Client(cluster) as client:
            warm_workers(client, quiet=True)
            yield client
        return
    if isinstance(scheduler, str) and ":" in scheduler:  # tcp://host:8786, host:8786, tls://..., inproc://...
        with distributed.Client(scheduler) as client:
            if workers:
                client.wait_for_workers(int(workers))
            warm_workers(client)
            yield client
        return
    raise ModelError(f"scheduler={scheduler!r}: give 'local' (a LocalCluster on this machine), None or 'sync' "
                     f"(serial), a scheduler address such as 'tcp://host:8786', or a dask.distributed.Client")


@contextlib.contextmanager
def _restored_environ():
    """Undo the environment variables that dask's nannies set in this process (their pre-spawn
    environment: thread counts, log levels) when the cluster closes."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for k in set(os.environ) - set(saved):
            del os.environ[k]
        os.environ.update(saved)


@contextlib.contextmanager
def _quiet(name: str, level: Any):
    """Raise logger ``name`` to ``level`` for the life of a cluster this module starts: the
    scheduler runs in this process, and dask sets its loggers to INFO (start/stop lines for every
    worker); ``silence_logs`` of LocalCluster only covers the worker processes."""
    log = logging.getLogger(name)
    old = log.level
    if level and isinstance(level, int) and log.getEffectiveLevel() < level:
        log.setLevel(level)
    try:
        yield
    finally:
        log.setLevel(old)


def local_cluster(n_workers: int, **kwargs):
    """A ``LocalCluster`` of ``n_workers`` single-threaded worker processes on 127.0.0.1, each
    with one BLAS thread (:data:`THREAD_ENV`), few event-loop wake-ups (:data:`QUIET_CONFIG`),
    glibc's default memory trimming, dashboard off and worker logs below WARNING silenced
    (``kwargs`` override these).

    Raises :class:`ModelError` when called from the top level of a script outside
    ``if __name__ == "__main__":`` (see :mod:`flexmb.studies.mainscript`)."""
    distributed = require("distributed", "flexmb.sweep on a cluster")
    import dask

    if int(n_workers) < 1:
        raise ModelError(f"workers={n_workers}: give 1 or more worker processes")
    check_main_guard("flexmb.local_cluster")  # before any worker re-runs the main script
    opts = dict(n_workers=int(n_workers), threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None, silence_logs=logging.WARNING, env=dict(THREAD_ENV))
    opts.update(kwargs)
    pre = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    # dask's MALLOC_TRIM_THRESHOLD_ (64 kB) makes glibc hand freed memory back at once: twice the
    # page faults and ~2 % more CPU per run measured on the pendulum study; a study's workers hold
    # no large data sets, so the allocator keeps its default
    pre.pop("MALLOC_TRIM_THRESHOLD_", None)
    if opts.get("silence_logs"):  # worker processes read their log levels from the environment at start-up
        pre["DASK_LOGGING__DISTRIBUTED"] = logging.getLevelName(opts["silence_logs"]).lower()
    with dask.config.set({"distributed.nanny.pre-spawn-environ": {**pre, **THREAD_ENV}, **QUIET_CONFIG}), \
            workers_skip_missing_main():
        return distributed.LocalCluster(**opts)


def warm_workers(client, quiet: bool = False) -> None:
    """Import the engine on every worker (now and on workers that start later), so that the first
    runs do not pay for it; ``quiet``: raise the workers' dask loggers to WARNING."""
    from flexmb.studies.worker import WorkerSetup

    client.register_plugin(WorkerSetup(quiet), name=WorkerSetup.name)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _row(params: dict, record: dict) -> dict:
    row = dict(params)
    row.update(record["outputs"])
    row.update({c: record.get(c) for c in RUN_COLUMNS})
    return row


def _forward_logs(params: dict, record: dict) -> None:
    """Re-emit the log records collected on a worker through this process's logging."""
    for level, name, message in record.get("log", ()):
        logging.getLogger(name).log(level, "[run %s] %s", params, message)


def _frame(pd, rows: list[dict], names: list[str]):
    out_cols = list(dict.fromkeys(c for r in rows for c in r if c not in names and c not in RUN_COLUMNS))
    df = pd.DataFrame(rows)
    return df.reindex(columns=[*names, *out_cols, *RUN_COLUMNS])
