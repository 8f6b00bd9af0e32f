"""Checks of the arguments of :func:`flexmb.sweep` where they enter: each bad value raises
:class:`~flexmb.errors.ModelError` naming the argument, the value and the fix, before any run (a
bad ``simulate_kwargs`` used to fail every run, one row at a time; ``workers=0`` meant "one per
core"; ``retries=1.5`` was rounded down without a word).

The parameter sets themselves are checked by :func:`flexmb.studies.parameters.parameter_sets`.
"""
from __future__ import annotations

import difflib
import inspect
import math
import numbers
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from flexmb.errors import ModelError
from flexmb.studies.parameters import check_name
from flexmb.studies.parameters import short_repr as _short
from flexmb.studies.store import IF_CHANGED

__all__ = ["checked_arguments", "check_keywords", "SERIAL"]

#: ``scheduler`` values that run every parameter set in the calling process, one after the other
SERIAL = (None, "sync", "serial")


def checked_arguments(build: Any, outputs: Any, simulate_kwargs: Any, shared: Any, store: Any, scheduler: Any,
                      workers: Any, retries: Any, rerun_failed: Any, progress: Any, store_every: Any,
                      cluster_kwargs: Any, if_changed: Any) -> dict:
    """The arguments of :func:`flexmb.sweep` checked and in plain form: ``simulate_kwargs`` and
    ``shared`` as dicts, ``store`` a Path or None, ``workers`` an int or None, ``retries`` an int,
    ``store_every`` a float [s], ``cluster_kwargs`` a dict."""
    _check_build(build)
    _check_outputs(outputs)
    serial = scheduler in SERIAL
    if not (serial or scheduler == "local" or isinstance(scheduler, str) and ":" in scheduler
            or hasattr(scheduler, "submit") and hasattr(scheduler, "scheduler_info")):
        raise ModelError(f"scheduler={_short(scheduler)}: give 'local' (a LocalCluster on this machine), None or "
                         f"'sync' (serial), a scheduler address such as 'tcp://host:8786', or a dask.distributed.Client")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
            raise ModelError(f"workers={workers!r}: give the number of worker processes as an integer >= 1, or None "
                             f"(one per core)")
        if serial:
            raise ModelError(f"workers={workers} with scheduler={scheduler!r}: a serial sweep runs in this process; "
                             f"drop workers, or use scheduler='local' for {workers} worker processes")
    if isinstance(retries, bool) or not isinstance(retries, numbers.Integral) or retries < 0:
        raise ModelError(f"retries={retries!r}: give the number of further attempts of a failed run as an integer "
                         f">= 0")
    for name, value in (("rerun_failed", rerun_failed), ("progress", progress)):
        if not isinstance(value, (bool, np.bool_)) and not (name == "progress" and value is None):
            raise ModelError(f"{name}={value!r} ({type(value).__name__}): give True or False"
                             + (" (or None: a bar only on a terminal)" if name == "progress" else ""))
    if isinstance(store_every, bool) or not isinstance(store_every, numbers.Real) or math.isnan(store_every) \
            or store_every < 0:
        raise ModelError(f"store_every={store_every!r}: give the seconds between folds of the store's journal into a "
                         f"Parquet part as a number >= 0 (0: after every run)")
    if if_changed not in IF_CHANGED:
        raise ModelError(f"if_changed={if_changed!r}: give one of {', '.join(map(repr, IF_CHANGED))}")
    cluster_kwargs = _mapping("cluster_kwargs", cluster_kwargs, "{'memory_limit': '2GB'}")
    if cluster_kwargs and scheduler != "local":
        raise ModelError(f"cluster_kwargs={cluster_kwargs!r} with scheduler={scheduler!r}: they are arguments of the "
                         f"LocalCluster that scheduler='local' starts; drop them or use scheduler='local'")
    return dict(simulate_kwargs=_simulate_kwargs(simulate_kwargs), shared=_shared(shared), store=_store(store),
                workers=None if workers is None else int(workers), retries=int(retries),
                store_every=float(store_every), cluster_kwargs=cluster_kwargs)


def _check_build(build: Any) -> None:
    from flexmb.model.model import Model

    if isinstance(build, Model):
        raise ModelError("build is a Model; give a function that builds the model from the parameters, e.g. "
                         "def build(length): ... return fm.Model(...) (each run builds its own, on its worker)")
    if not callable(build):
        raise ModelError(f"build={_short(build)} is not callable; give a function build(**params) that returns a "
                         f"flexmb.Model or (model, simulate_kwargs)")


def _check_outputs(outputs: Any) -> None:
    if outputs is None or callable(outputs):
        return
    if isinstance(outputs, str) or isinstance(outputs, (list, tuple)) and all(isinstance(o, str) for o in outputs):
        names = [outputs] if isinstance(outputs, str) else list(outputs)
        example = ", ".join(f"{n!r}: ..." for n in names[:3])
        raise ModelError(f"outputs={_short(outputs)} names outputs, but a sweep cannot know how to compute them; give "
                         f"a function outputs(solution, **params) that returns a dict such as {{{example}}}")
    raise ModelError(f"outputs={_short(outputs)} ({type(outputs).__name__}) is not callable; give a function "
                     f"outputs(solution, **params) that returns a dict of scalars or small arrays, or None")


def _mapping(name: str, value: Any, example: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ModelError(f"{name}={_short(value)} ({type(value).__name__}) is not a dict; give a dict such as "
                         f"{example}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ModelError(f"{name} has the key {bad[0]!r} ({type(bad[0]).__name__}); give argument names (strings) "
                         f"as its keys, e.g. {example}")
    return dict(value)


def _simulate_kwargs(value: Any) -> dict:
    kwargs = _mapping("simulate_kwargs", value, "{'t_end': 2.0, 'h': 0.01, 'p': 2}")
    from flexmb.dynamics.simulate import simulate

    known = [p for p in inspect.signature(simulate).parameters if p != "model"]
    for key in kwargs:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            what = "the model comes from build" if key == "model" else f"flexmb.simulate has no argument {key!r}"
            raise ModelError(f"simulate_kwargs[{key!r}]: {what}; {hint}give arguments of flexmb.simulate: "
                             f"{', '.join(known)}")
    return kwargs


def _shared(value: Any) -> dict:
    shared = _mapping("shared", value, "{'rod': rod_data}")
    for key in shared:
        check_name(key, "shared input", " (a keyword argument of build)", columns=False)
    return shared


def _store(value: Any) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise ModelError(f"store={_short(value)} ({type(value).__name__}) is not a path; give the path of the results "
                         f"directory, e.g. store='results.parquet'")
    if not str(value).strip():
        raise ModelError("store='' is an empty path; give the path of the results directory, e.g. "
                         "store='results.parquet'")
    if "\x00" in str(value):
        raise ModelError(f"store={_short(value)} contains a NUL character, which no path can; give the path of the "
                         f"results directory, e.g. store='results.parquet'")
    return Path(value)


def check_keywords(fn: Any, role: str, names: list[str], source: dict[str, str]) -> None:
    """ModelError when the study function ``fn`` (``role``: ``"build"`` or ``"outputs"``) cannot take the
    keyword arguments ``names`` it will be called with (``source[name]``: where the name comes from, e.g.
    ``"shared"``), before any run: every run would otherwise fail alike with a TypeError.  A function
    with ``**kwargs``, or whose signature Python cannot read (a builtin), is not checked."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    takes = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                  inspect.Parameter.KEYWORD_ONLY)}
    missing = [n for n in names if n not in takes]
    if missing:
        n = missing[0]
        name = getattr(fn, "__name__", repr(fn))
        raise ModelError(f"sweep: {role} {name}() has no parameter {n!r}, which it would be called with (from "
                         f"{source[n]}); give {role} a parameter {n} (or **kwargs), or drop {n!r} from {source[n]}")
