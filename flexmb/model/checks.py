"""Input checks shared by the model elements and :func:`flexmb.simulate`: numbers, vectors, user
functions (force callbacks and drives) and the run arguments.

Every check raises :class:`~flexmb.errors.ModelError` whose message names the input, the value and
the fix; wrong Python types (``mass="1 kg"``) are reported the same way, never as a numpy message.

User functions are wrapped once, when the element is built, in :class:`UserFunction`: whether a
callable is a function of time ``f(t)`` or a callback of the body state ``f(t, state)`` is decided
there from its signature (only parameters without a default count, so ``lambda t, k=2: ...`` is a
function of time); at run time the wrapper names the element when the function raises, returns
the wrong shape or returns NaN.
"""
from __future__ import annotations

import inspect
import math
import numbers
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError

__all__ = ["number", "vec3", "real_array", "index_list", "flag", "body_name", "required_positional", "UserFunction",
           "DriveFunction", "check_simulate_args"]


def brief_repr(value: Any) -> str:
    """Short text of a value for messages (elements by type and name, long reprs cut)."""
    name = getattr(value, "name", None)
    if isinstance(name, str) and not isinstance(value, (str, bytes, np.ndarray)) and hasattr(value, "__dataclass_fields__"):
        return f"{type(value).__name__}({name!r})"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _pre(owner: str) -> str:
    return f"{owner}: " if owner else ""


def number(name: str, value: Any, owner: str, *, minimum: float | None = None, positive: bool = False,
           integer: bool = False, unit: str = "") -> float:
    """``value`` as a finite float (or int when ``integer``), else a ModelError naming ``owner.name``.

    ``minimum``: inclusive lower bound; ``positive``: strictly greater than zero.
    """
    unit_txt = f" [{unit}]" if unit else ""
    kind = "an integer" if integer else "a number"
    if isinstance(value, (str, bytes)) or value is None or isinstance(value, bool) and not integer:
        raise ModelError(
            f"{_pre(owner)}{name}={brief_repr(value)} is not {kind}; give {name} as a plain number{unit_txt} "
            f"(flexmb does not parse units: use one consistent unit system)"
        )
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{_pre(owner)}{name}={brief_repr(value)} ({type(value).__name__}) is not {kind}; give a finite number{unit_txt}") from None
    if not math.isfinite(v):
        raise ModelError(f"{_pre(owner)}{name}={brief_repr(value)} is not finite; give a finite number{unit_txt}")
    if integer:
        if not isinstance(value, numbers.Integral) and v != int(v):
            raise ModelError(f"{_pre(owner)}{name}={brief_repr(value)} must be an integer")
        v = int(v)
    if positive and v <= 0:
        raise ModelError(f"{_pre(owner)}{name}={brief_repr(value)} must be > 0{unit_txt}")
    if minimum is not None and v < minimum:
        raise ModelError(f"{_pre(owner)}{name}={brief_repr(value)} must be >= {minimum:g}{unit_txt}")
    return v


def vec3(name: str, value: ArrayLike, owner: str) -> NDArray:
    """``value`` as a finite float array of shape (3,)."""
    if isinstance(value, (str, bytes)):
        raise ModelError(f"{owner}: {name}={brief_repr(value)} is a string; give a 3-vector of numbers such as (0, 0, 1)")
    try:
        a = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {name}={brief_repr(value)} is not a 3-vector of numbers; give e.g. (0, 0, 1)") from None
    if a.shape != (3,):
        raise ModelError(f"{owner}: {name} must have 3 components, got {a.size}: {brief_repr(value)}")
    if not np.all(np.isfinite(a)):
        raise ModelError(f"{owner}: {name}={a.tolist()} contains NaN or inf; give finite values")
    return a


def real_array(name: str, value: Any, owner: str, expected: str) -> NDArray:
    """``value`` as a float array; a string, None, a dict or an array of non-numbers is a ModelError
    naming ``owner``, ``name``, the value and ``expected`` (what to give instead), never numpy's
    "could not convert string to float" (nor a string such as "0.02" silently read as a number)."""
    bad = isinstance(value, (str, bytes, dict)) or value is None
    a = None
    if not bad:
        try:
            a = np.asarray(value)
        except (TypeError, ValueError):
            bad = True
        else:
            bad = a.dtype.kind not in "iuf"
    if bad:
        raise ModelError(f"{owner}: {name}={brief_repr(value)} ({type(value).__name__}) is not numbers; give {expected}")
    return np.asarray(a, dtype=float)


def index_list(name: str, value: Any, n: int, owner: str) -> NDArray:
    """``value`` (an int or a sequence of ints) as distinct indices ``0 .. n - 1``, shape (k,)."""
    shown = brief_repr(value)
    if isinstance(value, (str, bytes)) or isinstance(value, bool):
        raise ModelError(f"{owner}: {name}={shown} must be distinct integer indices 0 .. {n - 1}; give e.g. [0, 1, 2]")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        a = np.asarray([object()])
    whole = a.dtype.kind == "f" and bool(np.all(np.isfinite(a))) and bool(np.all(a == np.round(a)))  # 2.0 is 2
    if a.size and ((a.dtype.kind not in "iu" and not whole) or a.ndim > 1):
        raise ModelError(f"{owner}: {name}={shown} must be distinct integer indices 0 .. {n - 1}; give e.g. [0, 1, 2]")
    idx = a.astype(np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= n or np.unique(idx).size != idx.size):
        raise ModelError(f"{owner}: {name}={shown} must be distinct indices 0 .. {n - 1} (the data has {n}); "
                         f"give each index once, within that range")
    return idx


def flag(name: str, value: Any, owner: str) -> bool:
    """``value`` as a bool; anything but True/False (numpy bools included) is a ModelError."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ModelError(f"{owner}: {name}={brief_repr(value)} must be True or False")


def required_positional(f: Callable) -> int | None:
    """Number of positional parameters of ``f`` without a default (``None`` if not inspectable;
    a ``*args`` parameter counts as accepting anything)."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return None
    n = 0
    for prm in sig.parameters.values():
        if prm.kind in (prm.POSITIONAL_ONLY, prm.POSITIONAL_OR_KEYWORD) and prm.default is prm.empty:
            n += 1
        elif prm.kind is prm.VAR_POSITIONAL:
            return None
    return n


def _finite(a: NDArray) -> bool:
    return bool(np.all(np.isfinite(a)))


class UserFunction:
    """A user's load function ``f(t) -> (3,)`` or callback ``f(t, state) -> (3,)``, checked.

    ``takes_state`` is decided once, here, from the signature: two required positional parameters
    make a state callback, one a function of time.  Calling the wrapper returns a float array of
    shape (3,); an exception inside the user's function, a wrong shape or a NaN raise ModelError
    naming ``owner`` and the value.  (Inf from a callback evaluated at a non-finite trial state of
    a diverging Newton iteration is passed through: Newton then halves the step.)
    """

    def __init__(self, func: Callable, owner: str, what: str, unit: str):
        n = required_positional(func)
        if n is None:
            n = 1
        if n not in (1, 2):
            raise ModelError(
                f"{owner}: {what} function {_fname(func)} takes {n} required arguments; give f(t) "
                f"(function of time) or f(t, state) (callback of the body state), returning a 3-vector [{unit}]"
            )
        self.func = func
        self.owner = owner
        self.what = what
        self.unit = unit
        self.takes_state = n == 2
        #: signature text for messages
        self.form = "f(t, state)" if self.takes_state else "f(t)"

    def __call__(self, t, state=None) -> NDArray:
        try:
            val = self.func(t) if state is None or not self.takes_state else self.func(t, state)
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(
                f"{self.owner}: the {self.what} function {_fname(self.func)} raised {type(exc).__name__}: {exc} "
                f"(called as {self.form} at t = {float(t):.6g} s); fix the function"
            ) from exc
        try:
            a = np.asarray(val, dtype=float)
        except (TypeError, ValueError):
            a = None
        if a is None or a.size != 3:
            got = f"shape {a.shape}" if a is not None else f"type {type(val).__name__}"
            raise ModelError(
                f"{self.owner}: the {self.what} function {_fname(self.func)} returned {brief_repr(val)} ({got}) at "
                f"t = {float(t):.6g} s; it must return a 3-vector of numbers [{self.unit}]"
            )
        a = a.reshape(3)
        if not _finite(a):
            nan = np.isnan(a).any()
            state_ok = state is None or all(
                _finite(np.asarray(getattr(state, k))) for k in ("position", "rotation", "velocity", "angular_velocity")
            )
            if nan and state_ok or state is None:
                raise ModelError(
                    f"{self.owner}: the {self.what} function {_fname(self.func)} returned {a.tolist()} at "
                    f"t = {float(t):.6g} s; it must return finite values [{self.unit}]"
                )
        return a

    def __repr__(self) -> str:
        return f"UserFunction({self.func!r}, {self.form})"


def _fname(f: Callable) -> str:
    name = getattr(f, "__name__", None) or type(f).__name__
    return repr(name)


class DriveFunction:
    """A user's drive ``f(t)`` (prescribed angle or displacement), evaluated on arrays of times.

    Returns a float array broadcast to ``np.shape(t)``.  A function written for scalars only
    (``math.sin``) is evaluated time by time.  An exception, a wrong shape or a NaN raise
    ModelError naming the joint and the value.
    """

    def __init__(self, func: Callable, owner: str, what: str, unit: str):
        n = required_positional(func)
        if n is not None and n != 1:
            raise ModelError(f"{owner}: {what} function {_fname(func)} takes {n} required arguments; give f(t) of time only")
        self.func, self.owner, self.what, self.unit = func, owner, what, unit

    def _raise(self, exc: BaseException, t) -> None:
        tt = np.asarray(t, dtype=float).reshape(-1)
        where = f"t = {tt[0]:.6g} s" if tt.size == 1 else f"t = {tt.min():.6g} .. {tt.max():.6g} s"
        raise ModelError(
            f"{self.owner}: the {self.what} drive {_fname(self.func)} raised {type(exc).__name__}: {exc} "
            f"(called at {where}); fix the function (it receives numpy arrays of times: use np.sin, not math.sin)"
        ) from exc

    def __call__(self, t) -> NDArray:
        t_arr = np.asarray(t, dtype=float)
        try:
            val = np.asarray(self.func(t), dtype=float)
        except ModelError:
            raise
        except Exception as exc:
            if t_arr.ndim == 0:
                self._raise(exc, t)
            try:  # a function written for scalars: evaluate time by time
                val = np.array([float(np.asarray(self.func(float(ti)), dtype=float)) for ti in t_arr.reshape(-1)])
                val = val.reshape(t_arr.shape)
            except Exception:
                self._raise(exc, t)
        try:
            val = np.broadcast_to(val, t_arr.shape)
        except ValueError:
            raise ModelError(
                f"{self.owner}: the {self.what} drive {_fname(self.func)} returned shape {val.shape} for "
                f"{t_arr.size} times; return one value [{self.unit}] per time"
            ) from None
        if not _finite(val):
            k = int(np.flatnonzero(~np.isfinite(val.reshape(-1)))[0])
            tk = float(np.broadcast_to(t_arr, val.shape).reshape(-1)[k])
            raise ModelError(
                f"{self.owner}: the {self.what} drive {_fname(self.func)} returned {val.reshape(-1)[k]} at "
                f"t = {tk:.6g} s; it must return finite values [{self.unit}]"
            )
        return val

    def __repr__(self) -> str:
        return f"DriveFunction({self.func!r})"


def body_name(owner: str, key: str, value: Any) -> None:
    """Check that ``value`` names a body (a non-empty string); a body object gets a hint."""
    if isinstance(value, str) and value:
        return
    if (isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) and v for v in value)):
        return  # (flexible body, interface)
    hint = f"; give its name {value.name!r}" if isinstance(getattr(value, "name", None), str) else ""
    raise ModelError(f"{owner}: {key}={brief_repr(value)} must be a body name (a string), 'ground' or "
                     f"(flexible body name, interface name){hint}")



# ----------------------------------------------------------------------------------------------
# arguments of simulate

_NEWTON_FIELDS = {  # name: (positive, minimum, integer)
    "tol": (True, None, False), "max_iter": (True, 1, True), "divergence_rate": (True, None, False),
    "min_iter_divergence": (False, 1, True), "roundoff_factor": (False, 1, False),
    "reuse_rate": (True, None, False), "reuse_min_unknowns": (False, 0, True), "reuse_near": (False, 0, False),
}


def check_simulate_args(model: Any, t_end: Any, h: Any, p: Any, t0: Any, options: Any) -> tuple[float, float, float]:
    """Check the arguments of :func:`flexmb.simulate` (``model`` already known to be a
    :class:`~flexmb.Model`, checked by the caller); return ``(t_end, h, t0)`` as floats.

    Also evaluates every drive and every load function of time at ``t0`` (and each state callback
    at the initial state), so that a function that raises or returns NaN is named before the run.
    """
    t0 = number("t0", t0, "simulate", unit="s")
    t_end = number("t_end", t_end, "simulate", unit="s")
    h = number("h", h, "simulate", positive=True, unit="s")
    if t_end <= t0:
        raise ModelError(f"simulate: t_end={t_end!r} must be greater than t0={t0!r} [s]")
    if not hasattr(p, "p"):  # a TimeElement has .p
        p = number("p", p, "simulate", integer=True)
        if p not in (1, 2, 3):
            raise ModelError(f"simulate: p={p!r}; the time-element order must be 1, 2 or 3 (or a TimeElement)")
    if options is not None:
        _check_options(options)
    _check_functions(model, t0)
    return t_end, h, t0


def _check_options(options: Any) -> None:
    owner = "SimulationOptions"
    if not all(hasattr(options, k) for k in ("newton", "max_halvings", "linear_solver", "redundant")):
        raise ModelError(f"simulate: options={brief_repr(options)} is not a SimulationOptions; use fm.SimulationOptions(...)")
    number("max_halvings", options.max_halvings, owner, minimum=0, integer=True)
    if not callable(options.linear_solver):
        from flexmb.dynamics.solve.linsolve import LINEAR_SOLVERS

        if not isinstance(options.linear_solver, str) or options.linear_solver not in LINEAR_SOLVERS:
            raise ModelError(f"{owner}: linear_solver={brief_repr(options.linear_solver)} is unknown; use one of "
                             f"{sorted(LINEAR_SOLVERS)} or a callable factor(A) -> solve(b)")
    if options.redundant not in ("resolve", "error"):
        raise ModelError(f"{owner}: redundant={brief_repr(options.redundant)}; use 'resolve' or 'error'")
    if getattr(options, "resting", "constraint") not in ("constraint", "node"):
        raise ModelError(f"{owner}: resting={brief_repr(options.resting)}; use 'constraint' (a constraint row while the "
                         f"contact rests) or 'node' (a hold at the nodes)")
    newton = options.newton
    if not hasattr(newton, "tol"):
        raise ModelError(f"{owner}: newton={brief_repr(newton)} is not a NewtonOptions; use fm.NewtonOptions(...)")
    for key, (positive, minimum, integer) in _NEWTON_FIELDS.items():
        if hasattr(newton, key):
            number(key, getattr(newton, key), "NewtonOptions", positive=positive, minimum=minimum, integer=integer)


def _check_functions(model: Any, t0: float) -> None:
    from types import SimpleNamespace

    for j in model.joints:
        for f, _df in j.drives().values():
            f(np.array([t0]))
    for force in model.forces:
        fn = getattr(force, "force", None) if hasattr(force, "force") else getattr(force, "torque", None)
        if not isinstance(fn, UserFunction):
            continue
        if not fn.takes_state:
            fn(t0)
            continue
        b = model.bodies[model.body_index(force.body)]
        R = b.orientation
        rc = R @ b.com
        state = SimpleNamespace(position=b.position + rc, rotation=R, velocity=b.velocity + np.cross(b.angular_velocity, rc),
                                angular_velocity=b.angular_velocity)
        fn(t0, state)


def check_run_args(rtol: Any, atol: Any, t_eval: Any, on_step: Any, t0: float, t_end: float):
    """Check the run arguments of :func:`flexmb.simulate` before anything is computed; return ``(rtol,
    atol, t_eval)`` normalized (floats or None; ``t_eval`` a float array or None).  A ModelError names the
    argument, the value and the fix: tolerances that are not finite numbers (strings included), ``rtol = 0``
    without ``atol``, ``t_eval`` that is not a list of numbers, not finite, not strictly increasing or
    outside ``[t0, t_end]``, and an ``on_step`` that is not callable (it was found only after the first
    element)."""
    if rtol is not None or atol is not None:
        rtol = 0.0 if rtol is None else number("rtol", rtol, "simulate", minimum=0.0)
        if atol is not None:
            atol = number("atol", atol, "simulate", positive=True, unit="model length unit")
        if rtol == 0 and atol is None:
            raise ModelError("simulate: rtol=0 needs an absolute tolerance; give atol > 0 [model length unit] "
                             "(e.g. rtol=1e-6, atol=1e-8)")
    if t_eval is not None:
        if isinstance(t_eval, (str, bytes)):
            raise ModelError(f"simulate: t_eval={brief_repr(t_eval)} is a string; give the output times as a list or "
                             f"array of numbers [s], e.g. numpy.linspace(t0, t_end, 101)")
        try:
            t_eval = np.asarray(t_eval, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ModelError(f"simulate: t_eval={brief_repr(t_eval)} is not a list of numbers; give the output times [s] "
                             f"as a list or array, e.g. numpy.linspace(t0, t_end, 101)") from None
        if not t_eval.size:
            raise ModelError("simulate: t_eval is empty; give at least one output time [s] or leave it None (the nodes)")
        if not np.all(np.isfinite(t_eval)):
            raise ModelError(f"simulate: t_eval={brief_repr(t_eval.tolist())} has non-finite times; give finite times [s]")
        if np.any(np.diff(t_eval) <= 0):
            k = int(np.flatnonzero(np.diff(t_eval) <= 0)[0])
            raise ModelError(f"simulate: t_eval must be strictly increasing; t_eval[{k}] = {float(t_eval[k])!r} >= "
                             f"t_eval[{k + 1}] = {float(t_eval[k + 1])!r}; give sorted, distinct times (numpy.unique)")
        if t_eval.min() < t0 or t_eval.max() > t_end:
            raise ModelError(f"simulate: t_eval spans [{t_eval.min():.6g}, {t_eval.max():.6g}] s, outside the run "
                             f"[{t0:.6g}, {t_end:.6g}] s; give times within the simulated interval")
    if on_step is not None and not callable(on_step):
        raise ModelError(f"simulate: on_step={brief_repr(on_step)} ({type(on_step).__name__}) is not callable; give a "
                         f"function on_step(t, state) -> stop (True ends the run) or None")
    return rtol, atol, t_eval


def stop_requested(value: Any, t: float) -> bool:
    """The truth of ``on_step``'s return at time ``t``: None, a bool or a number (numpy scalars too);
    anything else (an array, whose truth is ambiguous, a string, a list) is a ModelError naming it."""
    if value is None or isinstance(value, (bool, np.bool_, numbers.Number)):
        return bool(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf":
        return bool(value.reshape(()))
    raise ModelError(f"simulate: on_step returned {brief_repr(value)} ({type(value).__name__}) at t = {t:.6g} s; give a "
                     f"function that returns True to stop the run there, False or None to go on")
