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
import keyword
import math
import numbers
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from flexmb.errors import ModelError

__all__ = ["linear_range", "log_range", "grid", "parameter_sets", "parameter_key", "parse_grid_option",
           "check_name", "short_repr", "RESERVED", "MAX_SETS"]

#: names a parameter cannot have: the columns every row of a sweep has besides the parameters
#: (flexmb.studies.task.RUN_COLUMNS and the store's "fingerprint"; test_sweep_inputs checks they agree)
RESERVED = ("status", "error", "message", "started", "wall_time", "cpu_time", "attempts", "steps",
            "newton_iterations", "newton_max_iterations", "factorizations", "step_retries", "t_reached", "worker",
            "key", "fingerprint")

#: most parameter sets (or range values) one study may describe (a larger grid is a typo, and its
#: list alone would exhaust the memory)
MAX_SETS = 1_000_000


def linear_range(start: float, stop: float, n: int) -> list[float]:
    """``n`` evenly spaced values from ``start`` to ``stop`` inclusive (``numpy.linspace`` as floats).

    >>> linear_range(100, 150, 6)
    [100.0, 110.0, 120.0, 130.0, 140.0, 150.0]
    """
    call = f"linear_range({start!r}, {stop!r}, {n!r})"
    a, b = _finite(call, "start", start), _finite(call, "stop", stop)
    return [float(v) for v in np.linspace(a, b, _count(call, n, a, b))]


def log_range(start: float, stop: float, n: int) -> list[float]:
    """``n`` values from ``start`` to ``stop`` inclusive, evenly spaced in log scale (both > 0).

    >>> log_range(1e-3, 1e-1, 3)
    [0.001, 0.01, 0.1]
    """
    call = f"log_range({start!r}, {stop!r}, {n!r})"
    a, b = _finite(call, "start", start), _finite(call, "stop", stop)
    if a <= 0 or b <= 0:
        raise ModelError(f"{call}: both ends must be > 0 ({'start' if a <= 0 else 'stop'}={a if a <= 0 else b!r}); use "
                         f"linear_range for ranges through zero")
    n = _count(call, n, a, b)
    out = [float(v) for v in np.geomspace(a, b, n)]
    out[0], out[-1] = a, b  # exact ends (geomspace rounds them)
    return out


def grid(**values: Any) -> list[dict]:
    """Full factorial of the given values, the first name varying slowest.

    A scalar value is a parameter held fixed.

    >>> grid(omega=[100, 150], m=[0.0, 0.04])
    [{'omega': 100, 'm': 0.0}, {'omega': 100, 'm': 0.04}, {'omega': 150, 'm': 0.0}, {'omega': 150, 'm': 0.04}]
    """
    if not values:
        raise ModelError("grid() was given no parameters; give name=values pairs such as grid(omega=[100, 150])")
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
        if not parameters:
            raise ModelError("parameters={} names no parameter; give a dict of lists such as {'length': [0.5, 1.0]}")
        names = list(parameters)
        for name in names:
            check_name(name, "parameter name")
        axes = [_axis(k, v) for k, v in parameters.items()]
        size = math.prod(len(a) for a in axes)
        if size > MAX_SETS:
            raise ModelError(f"parameters: the full factorial of {' x '.join(str(len(a)) for a in axes)} values is "
                             f"{size} parameter sets (more than {MAX_SETS}); give fewer values, or a list of the sets "
                             f"you want")
        sets = [dict(zip(names, combo)) for combo in itertools.product(*axes)]
    elif _is_dataframe(parameters):
        sets = [dict(zip(map(str, parameters.columns), row)) for row in parameters.itertuples(index=False, name=None)]
    elif isinstance(parameters, Iterable) and not isinstance(parameters, (str, bytes, set, frozenset)):
        sets = []
        for i, s in enumerate(parameters):
            if not isinstance(s, Mapping):
                raise ModelError(f"parameters[{i}] = {short_repr(s)} is not a dict; give a list of dicts such as "
                                 f"[{{'L': 1.0}}, {{'L': 2.0}}], a dict of lists (full factorial) or a DataFrame")
            if not s:
                raise ModelError(f"parameters[{i}] = {{}} names no parameter; give each set as a dict such as "
                                 f"{{'length': 1.0}}")
            if i >= MAX_SETS:
                raise ModelError(f"parameters: more than {MAX_SETS} parameter sets; give fewer")
            sets.append(dict(s))
    else:
        raise ModelError(f"parameters={short_repr(parameters)} ({type(parameters).__name__}): give a dict of lists "
                         f"(full factorial), a list of dicts or a pandas DataFrame")
    if not sets:
        raise ModelError(f"parameters={short_repr(parameters)} describe no parameter set (an empty list or table); give "
                         f"at least one")
    out, seen = [], {}
    for i, s in enumerate(sets):
        clean = {}
        for name, value in s.items():
            check_name(name, "parameter name", f" (set {i})")
            clean[name] = _plain(name, value)
        key = parameter_key(clean)
        if key in seen:
            raise ModelError(f"parameter set {i} {clean} repeats set {seen[key]} (1 and 1.0 are the same value); "
                             f"remove the repeat: each set must be unique (results are stored and resumed by "
                             f"parameter set)")
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
    other numbers are floats, anything else a string; one ``=`` only: names and values cannot hold one).

    >>> parse_grid_option("omega=100:150:6")
    ('omega', [100.0, 110.0, 120.0, 130.0, 140.0, 150.0])
    >>> parse_grid_option("m_slider=0,0.0378")
    ('m_slider', [0, 0.0378])
    """
    syntax = ("write NAME=START:STOP:N, NAME=START:STOP:N:log or NAME=V1,V2,... (e.g. --grid \"omega=100:150:6\" "
              "--grid \"m=0,0.0378\")")
    name, sep, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if not sep or not name or not spec:
        missing = "the '='" if not sep else "a name before '='" if not name else "values after '='"
        raise ModelError(f"--grid {text!r}: no {missing}; {syntax}")
    check_name(name, f"--grid {text!r}: name")
    if "=" in spec:  # "A==1,2", "A=0=0": neither the name 'A=' / 'A=0' nor the value '=1' / '0=0' is meant
        raise ModelError(f"--grid {text!r}: more than one '=': a parameter name cannot contain '=' and neither can a "
                         f"value of a grid option; write one '=' after the name, e.g. {name}=1,2")
    if ":" in spec:
        parts = spec.split(":")
        scale = "lin"
        if len(parts) == 4:
            scale = parts.pop().strip().lower()
        if len(parts) != 3 or scale not in ("lin", "log"):
            raise ModelError(f"--grid {text!r}: a range is START:STOP:N or START:STOP:N:log; write e.g. "
                             f"{name}=0.5:2:4 or {name}=0.01:1:3:log")
        try:
            a, b, n = float(parts[0]), float(parts[1]), int(parts[2])
        except ValueError:
            raise ModelError(f"--grid {text!r}: START and STOP must be numbers and N an integer; write e.g. "
                             f"{name}=0.5:2:4") from None
        try:
            return name, (log_range if scale == "log" else linear_range)(a, b, n)
        except ModelError as exc:
            raise ModelError(f"--grid {text!r}: {exc}") from None
    values = [v.strip() for v in spec.split(",")]
    if "" in values:
        raise ModelError(f"--grid {text!r}: value {values.index('') + 1} is empty; separate the values by single "
                         f"commas, e.g. {name}=1,2,3")
    return name, [_scalar(v) for v in values]


def check_name(name: Any, what: str, where: str = "", columns: bool = True) -> str:
    """``name`` if it can name a swept parameter (a Python identifier, not a keyword, not a
    result column of :data:`RESERVED` unless ``columns`` is False), else :class:`ModelError`
    saying why and what can."""
    rule = ("a name is letters, digits and underscores, not starting with a digit (a Python identifier such as "
            "length or m_slider)")
    if not isinstance(name, str):
        raise ModelError(f"{what} {name!r}{where} is a {type(name).__name__}, not a string; give a string: {rule}")
    if not name.isidentifier():
        raise ModelError(f"{what} {name!r}{where} is not a valid name: {rule}; rename it (build(**params) receives it "
                         f"as a keyword argument)")
    if keyword.iskeyword(name):
        raise ModelError(f"{what} {name!r}{where} is a Python keyword, which no function can take as an argument; "
                         f"rename it (e.g. {name}_)")
    if columns and name in RESERVED:
        raise ModelError(f"{what} {name!r}{where} is the name of a result column of every sweep "
                         f"({', '.join(RESERVED)}); rename the parameter (e.g. {name}_)")
    return name


def _scalar(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def _axis(name: str, value: Any) -> list:
    if isinstance(value, (set, frozenset)):
        raise ModelError(f"{name}={short_repr(value)} is a set, which has no order; give a list (the sets are run and "
                         f"returned in the order of the values)")
    if isinstance(value, Iterator):
        raise ModelError(f"{name}={short_repr(value)} is an iterator ({type(value).__name__}); give a list, e.g. "
                         f"{name}=list(...)")
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray, range)) and not _is_series(value):
        return [value]
    values = list(value)
    if not values:
        raise ModelError(f"{name}={short_repr(value)}: no values; give at least one")
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
        raise ModelError(f"parameter {name}={short_repr(value)} ({type(value).__name__}) is not a number, string, "
                         f"bool, None or a list of those; pass heavy inputs (meshes, FlexibleBodyData) with "
                         f"sweep(..., shared={{{name!r}: value}}) instead") from None
    return value


def _count(call: str, n: Any, a: float, b: float) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ModelError(f"{call}: n={n!r} is not a count; give the number of values (ends included) as an integer "
                         f">= 1")
    if n > MAX_SETS:
        raise ModelError(f"{call}: n={n} values is more than {MAX_SETS}; give fewer")
    if n == 1 and a != b:
        raise ModelError(f"{call}: n=1 gives start alone and drops stop={b!r}; give n >= 2, or the list [{a!r}]")
    return int(n)


def _finite(call: str, name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ModelError(f"{call}: {name}={v!r} ({type(v).__name__}) is not a number; give a float such as 1.0")
    x = float(v)
    if not math.isfinite(x):
        raise ModelError(f"{call}: {name}={v!r} is not finite; give a finite number")
    return x


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "itertuples")


def _is_series(obj: Any) -> bool:
    return type(obj).__name__ == "Series" and hasattr(obj, "tolist")


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to 60 characters, for messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
