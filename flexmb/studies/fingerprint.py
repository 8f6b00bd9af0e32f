"""The fingerprint of a study: what shaped the rows of a results store besides the parameters.

A row of a sweep depends on its parameter set (its key) and on the study: the code of ``build``
and ``outputs``, ``simulate_kwargs``, the ``shared`` inputs and flexmb itself.  The store keeps
the fingerprint of the study that wrote each row, so that a sweep with other outputs or settings
does not silently return rows computed by the old ones (see :func:`flexmb.sweep`, ``if_changed``).

What the fingerprint of a function sees: its byte code, constants (its docstring too) and names
(not its line numbers, file name or comments: moving it or editing comments changes nothing), its
default arguments and closure, and, followed through the modules of the study (not installed libraries nor flexmb,
which its version covers), the functions and classes it calls and the constants it reads (numbers,
strings, arrays and small containers of those; a dict of models used as a cache is not a
constant).  Code in installed libraries other than flexmb is not seen.

The shared inputs are digested robustly: floats to 9 significant digits, float arrays by shape and
norms, so that an input computed in each process (a modal reduction, whose mode shapes may come out
with other signs or last bits) is the same input.

Byte code differs across Python versions: a store written with another Python shows its functions
as changed (the message says so).
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
import re
import sys
import sysconfig
import types
from typing import Any, Callable

import numpy as np

__all__ = ["study_fingerprint", "combined", "differences", "COMPONENTS"]

#: the parts of a study fingerprint, in the order the messages list them
COMPONENTS = ("build", "outputs", "simulate_kwargs", "shared", "flexmb")

#: largest number of leaves of a container read as a constant of the study
_MAX_CONSTANT_ITEMS = 10_000
_MAX_DEPTH = 12


def study_fingerprint(build: Callable, outputs: Callable | None, simulate_kwargs: dict | None,
                      shared: dict | None) -> dict:
    """Digests (16 hex digits) of the parts of a study, plus ``python`` (``"3.11"``) and
    ``describe`` (a readable form of each part for messages)."""
    from flexmb import __version__

    fp = {"build": _digest(build), "outputs": _digest(outputs), "simulate_kwargs": _digest(dict(simulate_kwargs or {})),
          "shared": _digest(dict(shared or {}), robust=True), "flexmb": __version__,
          "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    fp["describe"] = {"build": _name(build), "outputs": _name(outputs),
                      "simulate_kwargs": _short(simulate_kwargs or {}), "shared": sorted(shared or {})}
    return fp


def combined(fp: dict) -> str:
    """One 16-hex-digit digest of the parts of ``fp`` (:data:`COMPONENTS`)."""
    text = json.dumps([fp.get(c) for c in COMPONENTS], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def differences(old: dict | None, new: dict) -> list[str]:
    """What changed from ``old`` to ``new``, as phrases for a message ([] when nothing did)."""
    if not old:
        return ["not recorded (a store written before flexmb recorded the study that shaped its rows)"]
    out = []
    d_old, d_new = old.get("describe", {}), new.get("describe", {})
    for c in COMPONENTS:
        if old.get(c) == new.get(c):
            continue
        if c == "flexmb":
            out.append(f"the flexmb version ({old.get(c)} -> {new.get(c)})")
        elif c in ("build", "outputs"):
            was, now = d_old.get(c), d_new.get(c)
            named = f" ({was} -> {now})" if was != now else f" ({now})"
            out.append(f"{c}{named}: its code or the code and constants it uses")
        else:
            out.append(f"{c} ({d_old.get(c)} -> {d_new.get(c)})")
    if any(c in ("build", "outputs") for c in COMPONENTS if old.get(c) != new.get(c)) \
            and old.get("python") != new.get("python"):
        out.append(f"(the store was written with Python {old.get('python')}, this is {new.get('python')}: byte "
                   f"code differs across Python versions)")
    return out


# --- digests -------------------------------------------------------------------------------------

def _digest(value: Any, robust: bool = False) -> str:
    h = hashlib.sha256()
    _Walker(h, robust).value(value, 0)
    return h.hexdigest()[:16]


class _Walker:
    """Feeds a canonical byte form of values and functions into a hash.

    ``robust``: floats to 9 significant digits and float arrays by dtype, shape and two norms (the
    Euclidean one and the sum of absolute values, to 9 digits), so that inputs computed in each
    process (a modal reduction: rounding that depends on threads, the signs of mode shapes) give
    the same digest while any change of the model (a material, a mesh) does not."""

    def __init__(self, h, robust: bool = False) -> None:
        self.h = h
        self.robust = robust
        self.seen: set[int] = set()

    def put(self, *tokens: Any) -> None:
        for t in tokens:
            self.h.update(t if isinstance(t, bytes) else repr(t).encode())
            self.h.update(b"\x00")

    def value(self, v: Any, depth: int) -> None:
        """Any value: data exactly, functions by code, other objects by type and attributes."""
        if depth > _MAX_DEPTH:
            self.put("deep", type(v).__qualname__)
            return
        if isinstance(v, np.generic):
            v = v.item()
        if self.robust and isinstance(v, float):
            self.put("float", f"{v:.9g}")
            return
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes, enum.Enum)):
            self.put(type(v).__name__, v)
            return
        if isinstance(v, np.ndarray):
            if v.dtype == object:
                self.put("objarray", v.shape)
                for x in v.ravel():
                    self.value(x, depth + 1)
            elif self.robust and v.dtype.kind in "fc":
                a = np.abs(v)
                self.put("array", v.dtype.str, v.shape, f"{np.sqrt(np.sum(a * a)):.9g}", f"{np.sum(a):.9g}")
            else:
                self.put("array", v.dtype.str, v.shape, np.ascontiguousarray(v).tobytes())
            return
        if id(v) in self.seen:
            self.put("seen", type(v).__qualname__)
            return
        self.seen.add(id(v))
        if isinstance(v, (list, tuple)):
            self.put(type(v).__name__, len(v))
            for x in v:
                self.value(x, depth + 1)
        elif isinstance(v, dict):
            self.put("dict", len(v))
            for k in sorted(v, key=repr):
                self.put(repr(k))
                self.value(v[k], depth + 1)
        elif isinstance(v, (set, frozenset)):
            self.put("set", sorted(_digest(x, self.robust) for x in v))
        elif callable(v) and _code_of(v) is not None or isinstance(v, (functools.partial, types.MethodType)):
            self.function(v, depth + 1)
        elif isinstance(v, type):
            self.put("class", getattr(v, "__module__", None), v.__qualname__)
        elif isinstance(v, types.ModuleType):
            self.put("module", v.__name__)
        else:
            self.put("object", type(v).__module__, type(v).__qualname__)
            state = _state(v)
            if state is None:
                self.put(re.sub(r" at 0x[0-9a-fA-F]+", "", repr(v)))
            else:
                self.value(state, depth + 1)

    def function(self, f: Any, depth: int) -> None:
        """A callable: the code of a function (and what it uses in the study's modules), a
        partial's function and arguments, a bound method's function and instance."""
        if isinstance(f, functools.partial):
            self.put("partial")
            self.value(f.func, depth + 1)
            self.value(f.args, depth + 1)
            self.value(f.keywords, depth + 1)
            return
        if isinstance(f, types.MethodType):
            self.put("method")
            self.value(f.__func__, depth + 1)
            self.value(f.__self__, depth + 1)
            return
        f = getattr(f, "__wrapped__", f)  # functools.wraps, lru_cache
        code = _code_of(f)
        if not isinstance(f, types.FunctionType):  # an instance with __call__: its class's code and its state
            self.put("callable", type(f).__qualname__)
            self.code(code, depth)
            self.value(_state(f), depth + 1)
            return
        self.code(code, depth)
        self.value(f.__defaults__, depth + 1)
        self.value(f.__kwdefaults__, depth + 1)
        self.value([c.cell_contents for c in f.__closure__ or () if _cell_set(c)], depth + 1)
        self.uses(f.__globals__, _names(code), depth + 1)

    def code(self, code: types.CodeType | None, depth: int) -> None:
        if code is None:
            self.put("nocode")
            return
        consts = list(code.co_consts)
        self.put(code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
                 code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
                 getattr(code, "co_exceptiontable", b""))
        for c in consts:
            if isinstance(c, types.CodeType):
                self.code(c, depth + 1)
            else:
                self.value(c, depth + 1)  # a frozenset constant: in an order that does not depend on hashing

    def uses(self, namespace: dict, names: list[str], depth: int) -> None:
        """The functions, classes and constants of a study module that code reads by ``names``."""
        for name in names:
            if name not in namespace:
                continue
            v = namespace[name]
            if isinstance(v, types.ModuleType):
                if _study_module(v.__name__, v):
                    self.put("module", name)
                    self.uses(vars(v), names, depth + 1)  # module.attr: the attribute names are in names
            elif isinstance(v, type):
                if _study_module(v.__module__) and id(v) not in self.seen:
                    self.seen.add(id(v))
                    self.put("class", name)
                    for attr, member in sorted(vars(v).items()):
                        if isinstance(member, (types.FunctionType, staticmethod, classmethod, property)):
                            self.put(attr)
                            self.value(getattr(member, "__func__", getattr(member, "fget", member)), depth + 1)
            elif callable(v) and not isinstance(v, (np.ndarray, np.generic)):
                if _study_module(getattr(v, "__module__", None)) and id(v) not in self.seen:
                    self.put("uses", name)
                    self.value(v, depth + 1)
            elif _is_constant(v):
                self.put("const", name)
                self.value(v, depth + 1)


def _code_of(f: Any) -> types.CodeType | None:
    code = getattr(f, "__code__", None)
    if code is None and not isinstance(f, type):
        code = getattr(getattr(type(f), "__call__", None), "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _names(code: types.CodeType) -> list[str]:
    """Global and attribute names read by ``code`` and the code nested in it."""
    out = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out.extend(_names(c))
    return sorted(set(out))


def _cell_set(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _state(v: Any) -> Any:
    """The attributes of an object (dataclass fields, ``__dict__`` or ``__slots__``), or None."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: getattr(v, f.name, None) for f in dataclasses.fields(v)}
    if hasattr(v, "__dict__"):
        return dict(vars(v))
    slots = [s for cls in type(v).__mro__ for s in getattr(cls, "__slots__", ()) if isinstance(s, str)]
    if slots:
        return {s: getattr(v, s, None) for s in slots}
    return None


def _is_constant(v: Any, depth: int = 0, budget: list | None = None) -> bool:
    """Numbers, strings, arrays and small containers of those (not a cache of objects)."""
    budget = budget if budget is not None else [_MAX_CONSTANT_ITEMS]
    budget[0] -= 1
    if budget[0] < 0 or depth > 4:
        return False
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, np.generic, enum.Enum)):
        return True
    if isinstance(v, np.ndarray):
        return v.dtype != object
    if isinstance(v, (list, tuple, set, frozenset)):
        return all(_is_constant(x, depth + 1, budget) for x in v)
    if isinstance(v, dict):
        return all(_is_constant(k, depth + 1, budget) and _is_constant(x, depth + 1, budget) for k, x in v.items())
    return False


@functools.lru_cache(maxsize=None)
def _library_roots() -> tuple[str, ...]:
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths |= {p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")}
    return tuple(os.path.realpath(p) + os.sep for p in paths if p)


def _study_module(name: str | None, module: types.ModuleType | None = None) -> bool:
    """Whether the module ``name`` is part of the study (a script, a study file, the user's own
    modules) rather than flexmb, the standard library or an installed package."""
    if name in ("__main__", "__mp_main__"):
        return True
    if not name:
        return False
    top = name.split(".")[0]
    if top == "flexmb" or top in sys.stdlib_module_names or top == "builtins":
        return False
    module = module if module is not None else sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if path is None:
        return module is None  # a module loaded without registration (a study file): the study's
    return not os.path.realpath(path).startswith(_library_roots())


def _name(f: Any) -> str | None:
    if f is None:
        return None
    f = getattr(f, "func", f)
    return f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', type(f).__qualname__)}"


def _short(value: Any) -> str:
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
    return text if len(text) <= 80 else text[:77] + "..."
