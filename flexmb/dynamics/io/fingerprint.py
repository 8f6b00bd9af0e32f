"""The fingerprint of a model: what shapes its equations, as named entries, so that a checkpoint can
tell whether the model it is resumed with is the one it was written with, and name what differs.

Two dictionaries of exact texts (``repr`` of numbers and short vectors, a SHA-256 prefix of larger
arrays):

* ``structure``: the bodies (name, type, index, number of modal coordinates) and the joints
  (name, kind, index, the bodies they connect). A state or a history cannot be carried over
  between models that differ here.
* ``parameters``: every other input of the equations. Bodies: all fields but the name and the
  initial conditions (rigid: ``mass``, ``inertia``, ``com``; flexible: the digest of the
  :class:`~flexmb.fe.reduction.body_data.FlexibleBodyData` (mode shapes, frequencies, invariants,
  interfaces, geometric and preload stiffnesses, damping, build settings; not its name, source path
  or unit label), ``modes``, ``damping``, ``stiffening``). Joints: the attachment frames as built
  (origin, orientation and interface of frames A and B in the body frames: they change with the
  bodies' initial poses, so a 1 m and a 2 m pendulum differ), the constrained components, the force
  laws (``stiffness``, ``damping``, reference) and the drives' constants. Force elements: every
  field, with a spring's ``free_length`` as measured at ``t0`` when it was left open.

Not covered: what a user function computes (drive functions, loads ``f(t)`` and callbacks
``f(t, state)``): only that a function stands there, and of which form. A resumed run checks the
joints at its first node against the drives' values there (:mod:`flexmb.dynamics.io.checkpoint`),
which catches a changed drive; a changed load function goes unseen. Initial conditions
(positions, orientations, velocities, ``q0``, ``qd0``) are not covered either: a resumed run starts
from the checkpoint's state, not from them (except through the attachment frames above). Labels
that do not enter the equations (``Model.units``, ``assembly_tol``) are not covered.
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

#: version of the fingerprint's entries (a checkpoint with another version is compared on structure only)
VERSION = 1

#: body fields that are initial conditions (a resumed run starts from the checkpoint's state instead)
INITIAL_CONDITIONS = ("position", "orientation", "velocity", "angular_velocity", "q0", "qd0")

#: joint fields replaced by the attachment frames built from them
JOINT_GEOMETRY = ("frame_a", "frame_b", "point", "axis", "axis2")

#: fields of a FlexibleBodyData that label it without entering the equations
DATA_LABELS = ("name", "source", "source_checksum", "units")

#: longest exact text kept as it is (longer values are digested)
SHORT = 48


def _digest(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return "sha256:" + h.hexdigest()[:16]


def _array_text(a: np.ndarray) -> str:
    if a.dtype.kind == "f":
        a = a + 0.0  # -0.0 and 0.0 are the same input
    if a.dtype.kind in "biuf" and a.size <= 6 and a.ndim <= 1:
        text = repr(a.tolist())
        if len(text) <= SHORT:
            return text
    a = np.ascontiguousarray(a)
    return _digest([f"{a.dtype.str}{a.shape}".encode(), a.tobytes()])


def value_text(value, skip: tuple[str, ...] = ()) -> str:
    """An exact text of an input value: ``repr`` of numbers, strings and short vectors, a SHA-256
    prefix of anything longer; a user function is ``"a user function f(t)"`` (its form, not its
    content); dataclasses (``skip``: fields left out), tuples and dicts are taken apart."""
    if value is None or isinstance(value, (bool, int, str, np.bool_, np.integer)):
        return repr(value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, (float, np.floating)):
        return repr(float(value) + 0.0)
    if callable(value) and not isinstance(value, type):
        return f"a user function {getattr(value, 'form', 'f(t)')}"
    if dataclasses.is_dataclass(value):
        parts = [f"{f.name}={value_text(getattr(value, f.name))}" for f in dataclasses.fields(value) if f.name not in skip]
        return _short(f"{type(value).__name__}({', '.join(parts)})")
    if isinstance(value, dict):
        return _short("{" + ", ".join(f"{k!r}: {value_text(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}")
    if isinstance(value, (tuple, list)) and not all(isinstance(v, (int, float, np.number)) for v in value):
        return _short("(" + ", ".join(value_text(v) for v in value) + ")")
    try:
        a = np.asarray(value)
    except Exception:  # an object we do not know how to take apart: its type only
        return f"a {type(value).__name__}"
    if a.dtype == object:
        return f"a {type(value).__name__}"
    return _array_text(a)


def _short(text: str) -> str:
    return text if len(text) <= SHORT else _digest([text.encode()])


def _fields(obj, skip: tuple[str, ...]) -> list[str]:
    return [f.name for f in dataclasses.fields(obj) if f.name not in skip] if dataclasses.is_dataclass(obj) else []


def fingerprint(cm) -> dict:
    """The fingerprint of the compiled model ``cm`` (:class:`~flexmb.dynamics.system.CompiledModel`):
    ``{"version", "structure": {entry: text}, "parameters": {entry: text}}`` (JSON-ready)."""
    model = cm.model
    structure, params = {}, {}
    for k, b in enumerate(model.bodies):
        key = f"body {b.name!r}"
        structure[key] = f"{type(b).__name__} #{k}" + (f" with {b.n_modes} modes" if hasattr(b, "n_modes") else "")
        for name in _fields(b, ("name",) + INITIAL_CONDITIONS):
            params[f"{key} {name}"] = value_text(getattr(b, name), skip=DATA_LABELS if name == "data" else ())
    for j, jt in enumerate(model.joints):
        key = f"joint {jt.name!r}"
        structure[key] = f"{type(jt).__name__} #{j} {jt.body_a!r} -> {jt.body_b!r}"
        for side, frame in zip("AB", model.attachment_frames(jt)):
            params[f"{key} frame {side} origin"] = value_text(frame.origin)
            params[f"{key} frame {side} orientation"] = value_text(frame.orientation)
            params[f"{key} frame {side} interface"] = value_text(frame.site)
        params[f"{key} constrained"] = value_text(np.asarray(jt.constrained, dtype=bool))
        for name in _fields(jt, ("name", "body_a", "body_b") + JOINT_GEOMETRY):
            params[f"{key} {name}"] = value_text(getattr(jt, name))
    springs = iter(range(len(cm.spring_names)))
    for k, f in enumerate(model.forces):
        key = f"force #{k} ({type(f).__name__})"
        for name in _fields(f, ("point_frame",)):
            value = getattr(f, name)
            if name == "free_length":  # as used: measured at t0 when left open
                value = float(cm.forces.springs.L0[next(springs)])
            params[f"{key} {name}"] = value_text(value)
    for c in getattr(model, "contacts", ()):  # contacts and impulses (flexmb.model.contacts)
        structure[f"contact {c.name!r}"] = f"{c.kind} {c.body_a!r} -> {c.body_b!r}"
        for name in _fields(c, ("name", "body_a", "body_b", "kind")):
            params[f"contact {c.name!r} {name}"] = value_text(getattr(c, name))
    for k, imp in enumerate(getattr(model, "impulses", ())):
        for name in _fields(imp, ()):
            params[f"impulse #{k} {name}"] = value_text(getattr(imp, name))
    return {"version": VERSION, "structure": structure, "parameters": params}


def differences(old: dict, new: dict, part: str) -> list[str]:
    """What differs between two fingerprints in ``part`` (``"structure"`` or ``"parameters"``), one
    line per entry: ``old`` is the checkpoint's, ``new`` the model's."""
    a, b = old.get(part, {}), new.get(part, {})
    out = []
    for key in list(a) + [k for k in b if k not in a]:
        if key not in b:
            out.append(f"{key} ({a[key]}) is not in the model")
        elif key not in a:
            out.append(f"{key} ({b[key]}) is not in the checkpoint's model")
        elif a[key] != b[key]:
            out.append(f"{key}: {a[key]} in the checkpoint, {b[key]} in the model")
    return out


def describe(lines: list[str], limit: int = 6) -> str:
    """The first ``limit`` lines of :func:`differences` joined, with the count of the others."""
    text = "; ".join(lines[:limit])
    return text + (f"; and {len(lines) - limit} more" if len(lines) > limit else "")
