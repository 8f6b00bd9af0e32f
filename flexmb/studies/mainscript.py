"""The main script as the worker processes of a local cluster see it.

dask starts the workers of a ``LocalCluster`` with Python's ``spawn`` start method: every worker
process first re-runs the main script (as module ``__mp_main__``), as ``multiprocessing`` does, so
that what it defines can be unpickled there.  Two cases break this:

* a script whose call of :func:`flexmb.sweep` is not under ``if __name__ == "__main__":``: every
  worker would start a cluster of its own while it starts, and dask reports hundreds of lines
  ending in "Nanny failed to start".  :func:`check_main_guard` finds the call in the script's
  source before any worker starts and raises one :class:`~flexmb.errors.ModelError` that says
  what to add;
* a script read from standard input (``python - < study.py``): its ``__file__`` is ``"<stdin>"``,
  which a worker cannot re-run (``FileNotFoundError``).  :func:`workers_skip_missing_main` hides
  that ``__file__`` while the workers start, so that they skip the re-run as they do for
  ``python -c`` and notebooks.  flexmb needs no re-run: a study's functions travel by value.

Notebooks, ``python -c``, ``python -m package`` of a ``__main__.py`` and the fork start method
need neither.
"""
from __future__ import annotations

import ast
import contextlib
import os
import sys
from types import FrameType, ModuleType

from flexmb.errors import ModelError

__all__ = ["check_main_guard", "workers_skip_missing_main", "main_rerun_path"]


def main_rerun_path() -> str | None:
    """Path of the main script that a spawned worker process re-runs, or None when it re-runs
    nothing (an interactive session, a notebook, ``python -c``, a package's ``__main__``, the
    ``fork`` start method).  Mirrors ``multiprocessing.spawn``'s preparation of ``__main__``."""
    if _start_method() == "fork":
        return None
    main = sys.modules.get("__main__")
    if main is None:
        return None
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None:  # python -m module: re-imported by name, except a package's __main__
        return None if name == "__main__" or name.endswith(".__main__") else getattr(main, "__file__", None) or name
    path = getattr(main, "__file__", None)
    if path is None or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None
    return path


def check_main_guard(what: str = "flexmb.sweep") -> None:
    """Raise :class:`ModelError` when ``what`` is being called from the top level of the main
    script outside ``if __name__ == "__main__":`` (every spawned worker would call it again), or
    from a worker process that is re-running the main script."""
    import multiprocessing

    path = main_rerun_path()
    if getattr(multiprocessing.current_process(), "_inheriting", False):  # a worker re-running the script
        raise ModelError(_message(what, path or "the main script", None))
    if path is None or not os.path.isfile(path):
        return
    line = _top_level_call_line(sys.modules["__main__"], path)
    if line is not None and not _guarded(path, line):
        raise ModelError(_message(what, path, line))


@contextlib.contextmanager
def workers_skip_missing_main():
    """While the block runs, hide a main ``__file__`` that names no file (``"<stdin>"``): spawned
    workers then skip re-running the main script, as for ``python -c``, instead of failing."""
    main = sys.modules.get("__main__")
    path = main_rerun_path()
    hide = main is not None and path is not None and getattr(main, "__spec__", None) is None \
        and not os.path.isfile(path)
    if hide:
        saved = main.__dict__.pop("__file__")
    try:
        yield
    finally:
        if hide:
            main.__file__ = saved


def _start_method() -> str:
    try:
        import dask

        return str(dask.config.get("distributed.worker.multiprocessing-method", "spawn"))
    except ImportError:
        return "spawn"


def _top_level_call_line(main: ModuleType, path: str) -> int | None:
    """Line of the main script, at its top level, from which the current call comes (the
    outermost frame running the script's module code), or None (not called from the script's
    top level: a thread, an interactive prompt after ``python -i``)."""
    target = os.path.realpath(path)
    frame: FrameType | None = sys._getframe(1)
    line = None
    while frame is not None:
        if frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>" \
                and os.path.realpath(frame.f_code.co_filename) == target:
            line = frame.f_lineno
        frame = frame.f_back
    return line


def _guarded(path: str, line: int) -> bool:
    """Whether ``line`` of ``path`` lies in a branch that a re-run as ``__mp_main__`` skips: an
    ``if`` whose test reads ``__name__`` (or asks for the current or parent process); True when the
    source cannot be read or parsed (no false alarms)."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _mentions_main(node.test):
            for branch in (node.body, node.orelse):
                if branch and branch[0].lineno <= line <= (branch[-1].end_lineno or branch[-1].lineno):
                    return True
    return False


def _mentions_main(test: ast.expr) -> bool:
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    attrs = {n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute)}
    return "__name__" in names or bool({"current_process", "parent_process"} & (names | attrs))


def _message(what: str, path: str, line: int | None) -> str:
    where = f"its line {line}" if line is not None else "its code"
    return (f"{what} starts worker processes, and each of them first re-runs the main script {path} (Python's "
            f"'spawn' start method): {where}, which starts this sweep, is not under `if __name__ == \"__main__\":`, "
            f"so every worker would start a sweep of its own. Put the code that runs the sweep under that guard:\n\n"
            f"    if __name__ == \"__main__\":\n"
            f"        df = fm.sweep(build, parameters, outputs, ...)\n\n"
            f"(build and outputs stay outside it), or run serially with scheduler=None")
