"""Parameter sets of a study: full-factorial grids, lists of dicts, tables; range helpers; the
stable key of a parameter set (what the results store resumes by); the command-line grid syntax.

A *parameter set* is a plain ``dict`` name -> value passed as keyword arguments to the study's
``build``.  Values are numbers, strings, booleans, ``None`` or small tuples/lists of those; heavy
objects (a :class:`~flexmb.FlexibleBodyData`) are not parameters but ``shared=`` inputs of
:func:`flexmb.sweep`.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from flexmb.errors import ModelError

__all__ = ["linear_range", "log_range", "grid", "parameter_sets", "parameter_key", "parse_grid_option"]


def linear_range(start: float, stop: float, n: int) -> list[float]:
    """``n`` evenly spaced values from ``start`` to ``stop`` inclusive (``numpy.linspace`` as floats).

    >>> linear_range(100, 150, 6)
    [100.0, 110.0, 120.0, 130.0, 140.0, 150.0]
    """
    n = _count(n)
    return [float(v) for v in np.linspace(_finite("start", start), _finite("stop", stop), n)]


def log_range(start: float, stop: float, n: int) -> list[float]:
    """``n`` values from ``start`` to ``stop`` inclusive, evenly spaced in log scale (both > 0).

    >>> log_range(1e-3, 1e-1, 3)
    [0.001, 0.01, 0.1]
    """
    n = _count(n)
    a, b = _finite("start", start), _finite("stop", stop)
    if a <= 0 or b <= 0:
        raise ModelError(f"log_range({start!r}, {stop!r}, {n}): both ends must be > 0; use linear_range for "
                         f"ranges through zero")
    out = [float(v) for v in np.geomspace(a, b, n)]
    out[0], out[-1] = a, b  # exact ends (geomspace rounds them)
    return out


def grid(**values: Any) -> list[dict]:
    """Full factorial of the given values, the first name varying slowest.

    A scalar value is a parameter held fixed.

    >>> grid(omega=[100, 150], m=[0.0, 0.04])
    [{'omega': 100, 'm': 0.0}, {'omega': 100, 'm': 0.04}, {'omega': 150, 'm': 0.0}, {'omega': 150, 'm': 0.04}]
    """
    return parameter_sets(values)


def parameter_sets(parameters: Any) -> list[dict]:
    """The list of parameter sets described by ``parameters``.

    Parameters
    ----------
    parameters : dict, list of dict or pandas.DataFrame
        dict of lists: the full factorial (first name slowest; a scalar is held fixed);
        list of dicts: the sets as given; DataFrame: one set per row (column names are the names).

    Returns
    -------
    list of dict
        Each set with plain Python values (numpy scalars converted); checked: names are
        identifiers, values serialisable (see :func:`parameter_key`), sets unique.
    """
    if isinstance(parameters, Mapping):
        names = list(parameters)
        axes = [_axis(k, v) for k, v in parameters.items()]
        sets = [dict(zip(names, combo)) for combo in itertools.product(*axes)]
    elif _is_dataframe(parameters):
        sets = [dict(zip(map(str, parameters.columns), row)) for row in parameters.itertuples(index=False, name=None)]
    elif isinstance(parameters, Iterable) and not isinstance(parameters, (str, bytes)):
        sets = []
        for i, s in enumerate(parameters):
            if not isinstance(s, Mapping):
                raise ModelError(f"parameters[{i}] = {_short(s)} is not a dict; give a list of dicts such as "
                                 f"[{{'L': 1.0}}, {{'L': 2.0}}], a dict of lists (full factorial) or a DataFrame")
            sets.append(dict(s))
    else:
        raise ModelError(f"parameters={_short(parameters)} ({type(parameters).__name__}): give a dict of lists "
                         f"(full factorial), a list of dicts or a pandas DataFrame")
    if not sets:
        raise ModelError("parameters describe no parameter set (an empty list or an empty axis); give at least one")
    out, seen = [], {}
    for i, s in enumerate(sets):
        clean = {}
        for name, value in s.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ModelError(f"parameter name {name!r} (set {i}) is not a Python identifier; build(**params) "
                                 f"receives it as a keyword argument")
            clean[name] = _plain(name, value)
        key = parameter_key(clean)
        if key in seen:
            raise ModelError(f"parameter set {i} {clean} repeats set {seen[key]}; each set must be unique "
                             f"(results are stored and resumed by parameter set)")
        seen[key] = i
        out.append(clean)
    return out


def _canonical(value: Any) -> Any:
    """JSON-ready canonical form: every real number as a float, so that 1 and 1.0 are the same key."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Real):
        v = float(value)
        return repr(v) if not math.isfinite(v) else v
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    raise TypeError(type(value).__name__)


def parameter_key(params: Mapping[str, Any]) -> str:
    """Stable 16-hex-digit key of a parameter set, independent of the order of the names and of
    int/float spelling (``{"L": 1}`` and ``{"L": 1.0}`` have the same key).

    >>> parameter_key({"L": 1.0, "m": 2}) == parameter_key({"m": 2.0, "L": 1})
    True
    """
    text = json.dumps({str(k): _canonical(v) for k, v in params.items()}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_grid_option(text: str) -> tuple[str, list]:
    """One ``--grid`` option of ``flexmb sweep``: ``"name=start:stop:n"`` (n values, linear),
    ``"name=start:stop:n:log"`` (log scale) or ``"name=v1,v2,..."`` (a list; ints stay ints,
    other numbers are floats, anything else a string).

    >>> parse_grid_option("omega=100:150:6")
    ('omega', [100.0, 110.0, 120.0, 130.0, 140.0, 150.0])
    >>> parse_grid_option("m_slider=0,0.0378")
    ('m_slider', [0, 0.0378])
    """
    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not spec.strip():
        raise ModelError(f"--grid {text!r}: write NAME=START:STOP:N, NAME=START:STOP:N:log or NAME=V1,V2,... "
                         f"(e.g. --grid \"omega=100:150:6\" --grid \"m=0,0.0378\")")
    spec = spec.strip()
    if ":" in spec:
        parts = spec.split(":")
        scale = "lin"
        if len(parts) == 4:
            scale = parts.pop().strip().lower()
        if len(parts) != 3 or scale not in ("lin", "log"):
            raise ModelError(f"--grid {text!r}: a range is START:STOP:N or START:STOP:N:log")
        try:
            a, b, n = float(parts[0]), float(parts[1]), int(parts[2])
        except ValueError:
            raise ModelError(f"--grid {text!r}: START and STOP must be numbers and N an integer") from None
        return name, (log_range if scale == "log" else linear_range)(a, b, n)
    return name, [_scalar(v.strip()) for v in spec.split(",")]


def _scalar(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def _axis(name: str, value: Any) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray, range)) and not _is_series(value):
        return [value]
    values = list(value)
    if not values:
        raise ModelError(f"parameters[{name!r}] is empty; give at least one value")
    return values


def _plain(name: str, value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, tuple):
        value = list(value)
    try:
        _canonical(value)
    except TypeError:
        raise ModelError(f"parameter {name}={_short(value)} ({type(value).__name__}) is not a number, string, "
                         f"bool, None or a list of those; pass heavy inputs (meshes, FlexibleBodyData) with "
                         f"sweep(..., shared={{{name!r}: value}}) instead") from None
    return value


def _count(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ModelError(f"n={n!r}: the number of values must be an integer >= 1")
    return int(n)


def _finite(name: str, v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ModelError(f"{name}={v!r} is not a number") from None
    if not math.isfinite(x):
        raise ModelError(f"{name}={v!r} is not finite")
    return x


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "itertuples")


def _is_series(obj: Any) -> bool:
    return type(obj).__name__ == "Series" and hasattr(obj, "tolist")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
