"""Force elements of a :class:`~flexmb.model.Model`: gravity, point forces and torques, linear
spring-dampers, validated when defined (re-exported by :mod:`flexmb.model` and :mod:`flexmb`).

Point conventions: a joint takes ``point=`` in inertial coordinates at t = 0; a force element
takes its points in the body frame relative to the body's reference point by default, or in
inertial coordinates at t = 0 with ``point_frame="inertial"`` (the :class:`~flexmb.model.Model`
converts them to the body frame with the bodies' initial poses).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flexmb.model.checks import UserFunction, body_name as _body_name, number, vec3 as _vec3
from flexmb.errors import ModelError

__all__ = ["Gravity", "PointForce", "PointTorque", "SpringDamper", "FORCE_TYPES"]


@dataclass(frozen=True)
class Gravity:
    """Uniform gravity ``g (3,)`` [m/s^2] acting on every body."""

    g: Any = (0.0, 0.0, -9.81)

    def __post_init__(self):
        object.__setattr__(self, "g", _vec3("g", self.g, "Gravity"))


def _load_frame(owner: str, frame: Any) -> str:
    """Components of a load: ``"global"`` (alias ``"inertial"``) or ``"body"``."""
    if frame in ("global", "inertial"):
        return "global"
    if frame == "body":
        return "body"
    raise ModelError(f"{owner}: frame={frame!r}; use 'global' (inertial components) or 'body' (follower load)")


def _point_frame(owner: str, value: Any) -> str:
    if value not in ("body", "inertial"):
        raise ModelError(
            f"{owner}: point_frame={value!r}; use 'body' (points in the body frame, relative to the body's "
            f"reference point) or 'inertial' (points in inertial coordinates at t = 0, as joints take them)"
        )
    return value


def _load(owner: str, key: str, value: Any, unit: str) -> Any:
    """A constant 3-vector or a checked :class:`~flexmb.model.checks.UserFunction`."""
    if isinstance(value, UserFunction):
        return value
    if callable(value):
        return UserFunction(value, owner, key, unit)
    return _vec3(key, value, owner)


@dataclass(frozen=True)
class PointForce:
    """A force on ``body`` at ``point`` [N].

    ``force`` is a constant 3-vector, a function ``f(t) -> (3,)``, or a callback
    ``f(t, state) -> (3,)`` of the body state (``state.position``, ``.rotation``, ``.velocity``,
    ``.angular_velocity`` of the centre of mass; the Jacobian of a state callback is taken by
    finite differences).  Which of the two a callable is, is decided from its required positional
    parameters (``lambda t, k=2: ...`` is a function of time).  ``frame`` gives the components of
    the force: ``"global"`` (alias ``"inertial"``) or ``"body"`` (follower force).
    ``point_frame``: ``"body"`` (default; ``point`` in the body frame relative to the reference
    point) or ``"inertial"`` (``point`` in inertial coordinates at t = 0, as joints take it;
    :class:`Model` converts it to the body frame).
    """

    body: str
    force: Any
    point: Any = (0.0, 0.0, 0.0)
    frame: str = "global"
    name: str = ""
    point_frame: str = "body"

    def __post_init__(self):
        owner = f"PointForce {self.name!r} on {self.body!r}" if self.name else f"PointForce on {self.body!r}"
        _body_name(owner, "body", self.body)
        object.__setattr__(self, "point", _vec3("point", self.point, owner))
        object.__setattr__(self, "frame", _load_frame(owner, self.frame))
        object.__setattr__(self, "point_frame", _point_frame(owner, self.point_frame))
        object.__setattr__(self, "force", _load(owner, "force", self.force, "N"))


@dataclass(frozen=True)
class PointTorque:
    """A torque on ``body`` [N m]: constant, ``f(t)`` or ``f(t, state)``; ``frame`` as PointForce."""

    body: str
    torque: Any
    frame: str = "global"
    name: str = ""

    def __post_init__(self):
        owner = f"PointTorque {self.name!r} on {self.body!r}" if self.name else f"PointTorque on {self.body!r}"
        _body_name(owner, "body", self.body)
        object.__setattr__(self, "frame", _load_frame(owner, self.frame))
        object.__setattr__(self, "torque", _load(owner, "torque", self.torque, "N m"))


@dataclass(frozen=True)
class SpringDamper:
    """Linear spring-damper between ``point_a`` on ``body_a`` and ``point_b`` on ``body_b``
    (``"ground"`` allowed, its points are inertial).

    Force along the line: ``stiffness (L - free_length) + damping dL/dt`` [N]; ``free_length``
    [m, >= 0] defaults to the distance at t = 0.  ``point_frame``: ``"body"`` (default; points in
    the body frames relative to the reference points) or ``"inertial"`` (points in inertial
    coordinates at t = 0, as joints take them; :class:`Model` converts them to the body frames).
    """

    name: str
    body_a: str
    body_b: str
    point_a: Any = (0.0, 0.0, 0.0)
    point_b: Any = (0.0, 0.0, 0.0)
    stiffness: float = 0.0
    damping: float = 0.0
    free_length: float | None = None
    point_frame: str = "body"

    def __post_init__(self):
        owner = f"SpringDamper {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise ModelError(f"{owner}: name must be a non-empty string")
        for side in ("body_a", "body_b"):
            _body_name(owner, side, getattr(self, side))
        if self.body_a == self.body_b:
            raise ModelError(f"{owner}: body_a and body_b are both {self.body_a!r}; a spring-damper needs two different bodies")
        for key in ("point_a", "point_b"):
            object.__setattr__(self, key, _vec3(key, getattr(self, key), owner))
        object.__setattr__(self, "stiffness", number("stiffness", self.stiffness, owner, minimum=0.0, unit="N/m"))
        object.__setattr__(self, "damping", number("damping", self.damping, owner, minimum=0.0, unit="N s/m"))
        if self.free_length is not None:
            object.__setattr__(self, "free_length", number(
                "free_length", self.free_length, owner, minimum=0.0, unit="m (or None: the distance at t = 0)"))
        object.__setattr__(self, "point_frame", _point_frame(owner, self.point_frame))


#: the force elements a Model accepts
FORCE_TYPES = (Gravity, PointForce, PointTorque, SpringDamper)
