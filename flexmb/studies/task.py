"""One run of a study, as executed on a worker (or in the calling process on the serial path):
``build(**params, **shared)`` -> :func:`flexmb.simulate` -> ``outputs(solution, **params)``, with
retries, the error class and message of a failed run, Newton statistics and the log records.

Nothing here imports dask or pandas: a worker needs only flexmb (and cloudpickle to receive the
study's functions by value).

The record of a run (a plain dict, see :func:`run_one`) is what the runner stores and turns into a
DataFrame row.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import numbers
import os
import socket
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from flexmb.errors import ModelError
from flexmb.studies.store import FINGERPRINT

__all__ = ["StudyFunctions", "run_one", "RUN_COLUMNS", "MAX_OUTPUT_SIZE"]

logger = logging.getLogger(__name__)

#: columns every run has, after the parameters and the outputs
RUN_COLUMNS = ("status", "error", "message", "started", "wall_time", "cpu_time", "attempts", "steps", "newton_iterations",
               "newton_max_iterations", "factorizations", "step_retries", "t_reached", "worker", "key")

#: largest number of values in one array output ("small arrays": a time history belongs in a file)
MAX_OUTPUT_SIZE = 100_000

#: loggers of the cluster machinery: never captured nor forwarded
_MACHINERY = ("distributed", "tornado", "bokeh", "asyncio")


@dataclass(frozen=True)
class StudyFunctions:
    """``build`` and ``outputs`` serialised by value (cloudpickle) for the workers.

    ``payload``: the pickled pair (bytes); ``digest``: its SHA-256, under which a worker keeps the
    unpickled functions so that they are loaded once per worker process, not once per run.
    """

    payload: bytes
    digest: str = field(default="")

    @classmethod
    def dumps(cls, build: Callable, outputs: Callable | None) -> "StudyFunctions":
        """Pickle ``build`` and ``outputs`` by value, including the module they come from when that
        module may not exist on the workers (a study file, a test module, ``__main__``)."""
        import cloudpickle

        modules = {getattr(f, "__module__", None) for f in (build, outputs) if f is not None}
        import sys

        registered = set(getattr(cloudpickle, "list_registry_pickle_by_value", lambda: set())())
        added = []
        for name in modules:
            mod = sys.modules.get(name) if name else None
            if mod is None or name == "__main__" or name in registered or name.split(".")[0] == "flexmb":
                continue  # __main__ and unknown modules are pickled by value anyway; flexmb is on every worker
            cloudpickle.register_pickle_by_value(mod)
            added.append(mod)
        try:
            payload = cloudpickle.dumps((build, outputs))
        except Exception as exc:
            raise ModelError(f"build/outputs cannot be sent to the workers: {type(exc).__name__}: {exc}; define "
                             f"them as module-level functions of the study file (no open files, locks or "
                             f"clients in their globals)") from exc
        finally:
            for mod in added:
                cloudpickle.unregister_pickle_by_value(mod)
        return cls(payload, hashlib.sha256(payload).hexdigest())

    def load(self) -> tuple[Callable, Callable | None]:
        fns = _LOADED.get(self.digest)
        if fns is None:
            import cloudpickle

            fns = _LOADED[self.digest] = cloudpickle.loads(self.payload)
        return fns


#: digest -> (build, outputs) already unpickled in this process
_LOADED: dict[str, tuple] = {}


def run_one(functions: StudyFunctions | tuple, params: dict, key: str, *, shared: dict | None = None,
            simulate_kwargs: dict | None = None, n_retries: int = 0, origin_pid: int | None = None,
            log_level: int = logging.WARNING) -> dict:
    """Run one parameter set; never raises for a failure of the run itself.

    Parameters
    ----------
    functions : StudyFunctions or (build, outputs)
    params : dict
        The parameter set (keyword arguments of ``build`` and ``outputs``).
    key : str
        Its key (:func:`flexmb.studies.parameters.parameter_key`), copied into the record.
    shared : dict, optional
        Extra keyword arguments of ``build`` computed once for the whole study.
    simulate_kwargs : dict, optional
        Defaults of :func:`flexmb.simulate` (``t_end``, ``h``, ``p``, ...); ``build`` may override them.
    n_retries : int
        Further attempts after a failure.
    origin_pid : int, optional
        Process id of the calling process.  When the run executes in another process (a worker),
        its log records (at ``log_level`` and above), Python warnings and prints are collected into
        ``record["log"]`` for the calling process to re-emit, instead of reaching the worker's own
        logging handlers or terminal.  None, or the same process: logging works as usual.
    log_level : int
        Lowest level collected on a worker.

    Returns
    -------
    dict
        ``key``, ``status`` (``"ok"`` / ``"failed"``), ``error`` (exception class name or None),
        ``message``, ``outputs`` (dict), ``started`` (POSIX time [s]), ``wall_time`` [s] (all attempts), ``cpu_time`` [s] (CPU time
        of the process meanwhile: much less than ``wall_time`` when the cores were shared), ``attempts``,
        ``steps`` (time elements), ``newton_iterations`` (sum), ``newton_max_iterations``,
        ``factorizations``, ``step_retries`` (step halvings), ``t_reached`` [s], ``worker``
        (``host:pid``), ``log`` (list of ``(levelno, logger name, message)``).
    """
    build, outputs = functions.load() if isinstance(functions, StudyFunctions) else functions
    record = dict(key=key, status="failed", error=None, message=None, outputs={}, attempts=0,
                  worker=f"{socket.gethostname()}:{os.getpid()}", log=[])
    record.update(newton_stats(None))
    record["started"] = time.time()
    start, cpu = time.perf_counter(), time.process_time()
    capture = origin_pid is not None and os.getpid() != origin_pid
    with _captured(record["log"], log_level) if capture else contextlib.nullcontext():
        for attempt in range(1 + max(int(n_retries), 0)):
            record["attempts"] = attempt + 1
            try:
                sol = None
                model, kwargs = _built(build(**params, **(shared or {})), simulate_kwargs)
                import flexmb

                sol = flexmb.simulate(model, **kwargs)
                record.update(newton_stats(sol))
                values = {} if outputs is None else outputs(sol, **params)
                record["outputs"] = _checked_outputs(values, params)
                record.update(status="ok", error=None, message=None)
                break
            except Exception as exc:  # one failure never stops the study: recorded, maybe retried
                partial = sol if sol is not None else getattr(exc, "solution", None)
                record.update(newton_stats(partial))
                record.update(status="failed", error=type(exc).__name__, message=str(exc), outputs={})
                logger.debug("run %s %s failed (attempt %d): %s: %s", key, params, attempt + 1, type(exc).__name__, exc)
    record["wall_time"] = time.perf_counter() - start
    record["cpu_time"] = time.process_time() - cpu
    return record


def _built(result: Any, defaults: dict | None) -> tuple[Any, dict]:
    from flexmb.model.model import Model

    kwargs = dict(defaults or {})
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Model):
        model, extra = result
        if not isinstance(extra, dict):
            raise ModelError(f"build returned (model, {type(extra).__name__}); the second item must be a dict of "
                             f"simulate arguments such as {{'t_end': 2.0, 'h': 0.01}}")
        kwargs.update(extra)
    elif isinstance(result, Model):
        model = result
    else:
        raise ModelError(f"build returned {type(result).__name__}; return a flexmb.Model or a pair "
                         f"(model, simulate_kwargs)")
    missing = [k for k in ("t_end", "h") if k not in kwargs]
    if missing:
        raise ModelError(f"no {' and no '.join(missing)} for simulate: give sweep(..., simulate_kwargs="
                         f"{{'t_end': ..., 'h': ...}}) or return (model, {{'t_end': ..., 'h': ...}}) from build")
    kwargs.setdefault("show_progress", False)  # the study shows its own progress
    return model, kwargs


def _checked_outputs(values: Any, params: dict) -> dict:
    if not isinstance(values, dict):
        raise ModelError(f"outputs returned {type(values).__name__}; return a dict name -> scalar or small array")
    out = {}
    for name, v in values.items():
        if not isinstance(name, str) or not name:
            raise ModelError(f"outputs returned the key {name!r}; output names must be non-empty strings")
        if name in params or name in RUN_COLUMNS or name == FINGERPRINT:
            raise ModelError(f"output {name!r} has the name of a {'parameter' if name in params else 'result column'}; "
                             f"rename it")
        if isinstance(v, np.generic):
            v = v.item()
        if v is None or isinstance(v, (bool, str, numbers.Number)):
            if isinstance(v, complex):
                raise ModelError(f"output {name!r} = {v!r} is complex; return its real and imaginary parts")
            out[name] = v
            continue
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"output {name!r} is a {type(v).__name__}; return a number, string, bool or a small "
                             f"array of numbers") from None
        if a.size > MAX_OUTPUT_SIZE:
            raise ModelError(f"output {name!r} has {a.size} values (> {MAX_OUTPUT_SIZE}); return a few numbers, or "
                             f"save large results from outputs() to a file and return its name")
        out[name] = a
    return out


def newton_stats(sol: Any) -> dict:
    """Newton statistics of a (possibly partial) Solution; NaN/0 without one."""
    if sol is None or not getattr(sol, "stats", None):
        return dict(steps=0, newton_iterations=0, newton_max_iterations=0, factorizations=0, step_retries=0,
                    t_reached=float("nan"))
    st = sol.stats
    it = np.asarray(st.get("iterations", []))
    return dict(steps=int(np.asarray(st.get("h", [])).size), newton_iterations=int(it.sum()),
                newton_max_iterations=int(it.max(initial=0)), factorizations=int(np.asarray(st.get("factorizations", [])).sum()),
                step_retries=int(np.asarray(st.get("retries", [])).sum()),
                t_reached=float(sol.t[-1]) if len(sol.t) else float("nan"))


class _ListHandler(logging.Handler):
    def __init__(self, sink: list, level: int):
        super().__init__(level)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.split(".")[0] in _MACHINERY:
            return
        try:
            self.sink.append((record.levelno, record.name, record.getMessage()))
        except Exception:  # a bad format string in user code: keep the raw message
            self.sink.append((record.levelno, record.name, str(record.msg)))


@contextlib.contextmanager
def _captured(sink: list, level: int):
    """Collect log records, warnings and prints of a run into ``sink`` (on a worker process: the
    root logger's own handlers, e.g. a ``logging.basicConfig`` of the user's script re-imported by
    the worker, are set aside for the run so that nothing reaches the worker's terminal)."""
    root = logging.getLogger()
    handler = _ListHandler(sink, level)
    old_level, old_handlers = root.level, root.handlers[:]
    root.handlers = [handler]
    root.setLevel(min(level, old_level) if old_level else level)
    out, err = io.StringIO(), io.StringIO()
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            warnings.simplefilter("default")
            yield
    finally:
        root.handlers = old_handlers
        root.setLevel(old_level)
        for w in caught:
            sink.append((logging.WARNING, "py.warnings", f"{w.category.__name__}: {w.message} ({os.path.basename(w.filename)}:{w.lineno})"))
        for stream, text in (("stdout", out.getvalue()), ("stderr", err.getvalue())):
            if text.strip():
                sink.append((logging.INFO, "flexmb.studies.worker", f"printed on {stream}: {text.rstrip()}"))
