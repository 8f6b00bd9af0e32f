"""Impulsive elements of a :class:`~flexmb.model.Model`: prescribed impulses and unilateral contacts,
validated when defined (re-exported by :mod:`flexmb.model` and :mod:`flexmb`).

* :class:`Impulse`: an impulsive force ``impulse`` [N s] (and couple [N m s]) at a body point at a
  given time: the velocities jump, the positions do not (Wittenburg, chapter 6).
* :class:`Contact`: a unilateral contact between two bodies or a body and the ground, described by
  a gap function ``g >= 0``: sphere (or point) against a plane, sphere against sphere.  When it
  closes with an approaching normal velocity it is an impact with Newton's restitution law
  ``v_n+ >= -e v_n-`` (``e`` in [0, 1]; 0: plastic) and, with ``friction`` ``mu > 0``, Coulomb's law
  on the tangential impulse (``|P_t| <= mu P_n``: sticking, or sliding against the slip at the cone's
  edge; :mod:`flexmb.dynamics.impact.friction`).

Points follow the force elements' convention: in the body frame relative to the body's reference
point (for the ground: inertial coordinates).  A flexible body takes part at an interface
``(body, interface)``: the contact point (a plane's point, a sphere's centre) is the interface point
and moves with the body's deformation; the modal velocities then jump too.

The equations: ``docs/theory.md``, section "Impacts"; the solve: :mod:`flexmb.dynamics.impact`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from flexmb.errors import ModelError
from flexmb.model.checks import _shown, body_name as _body_name, number, vec3 as _vec3
from flexmb.model.frames import GROUND

__all__ = ["Impulse", "Contact", "CONTACT_KINDS", "check_impulsive"]

#: kinds of contact: which side carries what
CONTACT_KINDS = {
    "sphere-plane": "a plane on body_a (point_a, normal), a sphere on body_b (centre point_b, radius)",
    "point-plane": "a plane on body_a (point_a, normal), a point on body_b (point_b)",
    "sphere-sphere": "spheres on both bodies (centres point_a, point_b; radii radius_a, radius)",
}


def _side_name(value: Any) -> str:
    return value[0] if isinstance(value, tuple) else value


@dataclass(frozen=True)
class Impulse:
    """An impulsive force ``impulse (3,)`` [N s] at ``point`` (body frame, relative to the body's
    reference point) of ``body`` and an impulsive couple ``couple (3,)`` [N m s], applied at ``time``
    [s]; ``frame="global"`` (inertial components) or ``"body"``.  On a flexible body give
    ``(body, interface)``: it acts at the interface point (``point`` must then be zero)."""

    body: Any
    impulse: Any = (0.0, 0.0, 0.0)
    point: Any = (0.0, 0.0, 0.0)
    couple: Any = (0.0, 0.0, 0.0)
    time: float = 0.0
    frame: str = "global"
    name: str = ""

    def __post_init__(self):
        owner = f"Impulse {self.name!r}" if self.name else "Impulse"
        _body_name(owner, "body", self.body)
        if _side_name(self.body) == GROUND:
            raise ModelError(f"{owner}: body='ground': an impulse acts on a body of the model; name one")
        object.__setattr__(self, "impulse", _vec3("impulse", self.impulse, owner))
        object.__setattr__(self, "point", _vec3("point", self.point, owner))
        object.__setattr__(self, "couple", _vec3("couple", self.couple, owner))
        object.__setattr__(self, "time", number("time", self.time, owner, unit="s"))
        if self.frame in ("global", "inertial"):
            object.__setattr__(self, "frame", "global")
        elif self.frame != "body":
            raise ModelError(f"{owner}: frame={self.frame!r}; use 'global' (inertial components) or 'body'")
        if isinstance(self.body, tuple) and np.any(self.point):
            raise ModelError(f"{owner}: point={self.point.tolist()} on the interface {self.body!r}: an impulse on an "
                             f"interface acts at the interface point; leave point at (0, 0, 0)")
        if not np.any(self.impulse) and not np.any(self.couple):
            raise ModelError(f"{owner}: impulse and couple are both zero; give a non-zero impulse [N s] or couple [N m s]")


@dataclass(frozen=True)
class Contact:
    """A unilateral contact ``name`` between ``body_a`` (a body, ``(body, interface)`` or
    ``"ground"``) and ``body_b`` (a body or ``(body, interface)``), of ``kind``:

    * ``"sphere-plane"``: the plane through ``point_a`` with the unit ``normal`` (body_a's frame; for
      the ground inertial), pointing to the free side; a sphere of ``radius`` [m] centred at ``point_b``
      on body_b.  Gap ``g = n . (c_b - p_a) - r``;
    * ``"point-plane"``: the same with a point (radius 0);
    * ``"sphere-sphere"``: spheres of radii ``radius_a`` and ``radius`` centred at ``point_a``,
      ``point_b``.  Gap ``g = |c_b - c_a| - r_a - r``.

    ``restitution``: Newton's coefficient ``e`` in [0, 1] (0: plastic, 1: elastic).  ``friction``:
    Coulomb's coefficient ``mu >= 0`` at impacts (0: frictionless; resting contacts hold the normal
    velocity only).  Initially interpenetrating bodies (``g < 0`` at the start
    of a run beyond the model's assembly tolerance) are refused when the run starts.
    """

    name: str
    body_a: Any
    body_b: Any
    kind: str = "sphere-plane"
    point_a: Any = (0.0, 0.0, 0.0)
    point_b: Any = (0.0, 0.0, 0.0)
    normal: Any = (0.0, 0.0, 1.0)
    radius: float = 0.0
    radius_a: float = 0.0
    restitution: float = 0.0
    friction: float = 0.0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ModelError(f"Contact: name={_shown(self.name)} must be a non-empty string")
        owner = f"Contact {self.name!r}"
        if self.kind not in CONTACT_KINDS:
            raise ModelError(f"{owner}: kind={self.kind!r}; use one of: " +
                             "; ".join(f"{k!r} ({v})" for k, v in CONTACT_KINDS.items()))
        _body_name(owner, "body_a", self.body_a)
        _body_name(owner, "body_b", self.body_b)
        if _side_name(self.body_b) == GROUND:
            raise ModelError(f"{owner}: body_b='ground': the ground goes on side a (its plane or sphere); "
                             f"swap body_a and body_b")
        if _side_name(self.body_a) == _side_name(self.body_b):
            raise ModelError(f"{owner}: body_a and body_b are both {_side_name(self.body_a)!r}; a contact acts "
                             f"between two different bodies (or a body and 'ground')")
        object.__setattr__(self, "point_a", _vec3("point_a", self.point_a, owner))
        object.__setattr__(self, "point_b", _vec3("point_b", self.point_b, owner))
        n = _vec3("normal", self.normal, owner)
        if self.kind != "sphere-sphere":
            size = float(np.linalg.norm(n))
            if not size > 0:
                raise ModelError(f"{owner}: normal={n.tolist()} is zero; give the plane's normal pointing to the free side")
            n = n / size
        object.__setattr__(self, "normal", n)
        for key in ("radius", "radius_a"):
            object.__setattr__(self, key, number(key, getattr(self, key), owner, unit="m"))
        if self.kind in ("sphere-plane", "sphere-sphere") and not self.radius > 0:
            raise ModelError(f"{owner}: radius={self.radius!r} of a {self.kind} contact must be > 0 [m]; "
                             f"use kind='point-plane' for a point")
        if self.kind == "sphere-sphere" and not self.radius_a > 0:
            raise ModelError(f"{owner}: radius_a={self.radius_a!r} of a sphere-sphere contact must be > 0 [m]")
        if self.kind == "point-plane" and self.radius != 0:
            raise ModelError(f"{owner}: radius={self.radius!r} on a point-plane contact; use kind='sphere-plane'")
        e = number("restitution", self.restitution, owner)
        if not 0.0 <= e <= 1.0:
            raise ModelError(f"{owner}: restitution={e!r} is outside [0, 1]; Newton's coefficient is 0 (plastic) "
                             f"to 1 (elastic): give e.g. restitution=0.5")
        object.__setattr__(self, "restitution", e)
        mu = number("friction", self.friction, owner)
        if not mu >= 0.0 or not np.isfinite(mu):
            raise ModelError(f"{owner}: friction={mu!r} is not a coefficient >= 0; Coulomb's coefficient mu is 0 "
                             f"(frictionless) or positive: give e.g. friction=0.3")
        object.__setattr__(self, "friction", mu)
        for side, point in (("a", self.point_a), ("b", self.point_b)):
            if isinstance(getattr(self, f"body_{side}"), tuple) and np.any(point):
                raise ModelError(f"{owner}: point_{side}={point.tolist()} on the interface "
                                 f"{getattr(self, f'body_{side}')!r}: the contact sits at the interface point; "
                                 f"leave point_{side} at (0, 0, 0)")

    @property
    def plane(self) -> bool:
        return self.kind != "sphere-sphere"


def check_impulsive(model, contacts, impulses) -> tuple[tuple, tuple]:
    """The model's ``contacts`` and ``impulses`` as tuples of :class:`Contact` / :class:`Impulse`,
    checked against its bodies and interfaces (ModelError naming the element, the value and the fix)."""
    from flexmb.model.flexible import _name_of, check_site

    out = []
    for key, value, cls in (("contacts", contacts, Contact), ("impulses", impulses, Impulse)):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise ModelError(f"Model: {key}={_shown(value)} is not a list of {cls.__name__} elements")
        items = tuple(value)
        for k, c in enumerate(items):
            if not isinstance(c, cls):
                raise ModelError(f"Model: {key}[{k}]={_shown(c)} ({type(c).__name__}) is not a {cls.__name__}")
        out.append(items)
    names = [b.name for b in model.bodies]
    known = set(names) | {GROUND}
    seen = set()
    for c in out[0]:
        if c.name in seen:
            raise ModelError(f"Model: duplicate contact name {c.name!r}")
        seen.add(c.name)
    for c in out[0] + out[1]:
        owner = f"Contact {c.name!r}" if isinstance(c, Contact) else "Impulse" + (f" {c.name!r}" if c.name else "")
        for side in (("body_a", "body_b") if isinstance(c, Contact) else ("body",)):
            value = getattr(c, side)
            if _name_of(value) not in known:
                raise ModelError(f"{owner}: {side}={value!r} is not a body of the model; known bodies: {sorted(names)}"
                                 + (" and 'ground'" if side == "body_a" else ""))
            check_site(model, owner, side, value, joint=False)
    return out[0], out[1]
