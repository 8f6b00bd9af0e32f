"""Immutable model description: bodies, joints and force elements, validated when defined.

A script builds the elements and passes them to :class:`Model`::

    bar = RigidBody("bar", mass=1.0, inertia=np.diag([1e-3, 1e-3, 0.1]), position=(0, -0.5, 0))
    pin = Revolute("pin", "ground", "bar", point=(0, 0, 0), axis=(0, 0, 1))
    model = Model([bar], [pin], [Gravity((0, -9.81, 0))])

Conventions
-----------
* Units are any consistent system (SI in the examples); flexmb never converts.
* A body's *frame* is its reference point and orientation; ``com``, attachment points and
  attachment frames are given in that frame.  Initial ``velocity`` is the velocity of the
  reference point and ``angular_velocity`` is in inertial components.
* A joint connects attachment frame ``A`` on ``body_a`` to frame ``B`` on ``body_b`` (either may be
  ``"ground"``).  Its relative coordinates are the position ``s`` of the origin of B measured in
  A and the rotation of B relative to A; its reaction is the wrench exerted by A on B, moment about
  the origin of B, in components of frame A.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from flexmb.model.contacts import check_impulsive
from flexmb.model.checks import DriveFunction, brief_repr, body_name as _body_name, number, vec3 as _vec3
from flexmb.model.forces import FORCE_TYPES, Gravity, PointForce, PointTorque, SpringDamper
from flexmb.errors import ModelError
from flexmb.model.flexible import FlexibleBody, name_of, check_site, site_frame, site_offset  # flexible bodies: own module
from flexmb.model.frames import GROUND, Frame, rotation_input

__all__ = [
    "GROUND",
    "Frame",
    "RigidBody",
    "Joint",
    "Spherical",
    "Revolute",
    "Universal",
    "Prismatic",
    "Cylindrical",
    "Planar",
    "Fixed",
    "Gravity",
    "PointForce",
    "PointTorque",
    "SpringDamper",
    "Model",
    "FlexibleBody",
]

@dataclass(frozen=True)
class RigidBody:
    """A rigid body.

    Parameters
    ----------
    name : str
    mass : float
        [kg], > 0.
    inertia : array_like, shape (3, 3) or (3,)
        Inertia tensor about the centre of mass in body-frame components [kg m^2] (a 3-vector
        is a diagonal).  Must be symmetric positive definite and satisfy the triangle inequality.
    position : array_like, shape (3,)
        Initial position of the body reference point [m].
    orientation : (3, 3) rotation matrix or dict
        Initial orientation (body -> inertial); see :func:`flexmb.rotations.orientation`.
    velocity : array_like, shape (3,)
        Initial velocity of the reference point [m/s].
    angular_velocity : array_like, shape (3,)
        Initial angular velocity, inertial components [rad/s].
    com : array_like, shape (3,)
        Centre of mass in the body frame [m] (default: the reference point).
    """

    name: str
    mass: float
    inertia: Any
    position: Any = (0.0, 0.0, 0.0)
    orientation: Any = None
    velocity: Any = (0.0, 0.0, 0.0)
    angular_velocity: Any = (0.0, 0.0, 0.0)
    com: Any = (0.0, 0.0, 0.0)

    def __post_init__(self):
        owner = f"RigidBody {self.name!r}"
        if not isinstance(self.name, str) or not self.name or self.name == GROUND:
            raise ModelError(f"{owner}: name must be a non-empty string other than {GROUND!r}")
        if isinstance(self.mass, (str, bytes)):
            raise ModelError(f"{owner}: mass={self.mass!r} is a string; give the mass as a number [kg] "
                             f"(flexmb does not parse units: use one consistent unit system)")
        try:
            m = float(self.mass)
        except (TypeError, ValueError):
            m = math.nan
        if not math.isfinite(m) or m <= 0:
            raise ModelError(f"{owner}: mass={self.mass!r} must be a finite positive number [kg]")
        object.__setattr__(self, "mass", m)
        try:
            J = np.asarray(self.inertia, dtype=float) if not isinstance(self.inertia, (str, bytes)) else np.zeros(0)
        except (TypeError, ValueError):
            J = np.zeros(0)
        if J.shape == (3,):
            J = np.diag(J)
        if J.shape != (3, 3) or not np.all(np.isfinite(J)):
            raise ModelError(f"{owner}: inertia must be a finite 3x3 tensor or 3 principal values, got {self.inertia!r}")
        if np.abs(J - J.T).max() > 1e-9 * max(np.abs(J).max(), 1e-300):
            raise ModelError(f"{owner}: inertia tensor is not symmetric: {J.tolist()}")
        ev = np.linalg.eigvalsh(J)
        if ev[0] <= 0:
            raise ModelError(
                f"{owner}: inertia tensor must be positive definite; smallest principal moment is "
                f"{ev[0]:.3e} kg m^2.  A slender bar still needs a small axial moment (e.g. m r^2/2)"
            )
        if ev[2] > (ev[0] + ev[1]) * (1 + 1e-9):
            raise ModelError(
                f"{owner}: principal moments {ev.tolist()} violate the triangle inequality "
                f"(I3 <= I1 + I2); check the inertia values and units"
            )
        object.__setattr__(self, "inertia", J)
        for key in ("position", "velocity", "angular_velocity", "com"):
            object.__setattr__(self, key, _vec3(key, getattr(self, key), owner))
        object.__setattr__(self, "orientation", rotation_input("orientation", self.orientation, owner))


# ----------------------------------------------------------------------------------------------
# joints


def _drive(name: str, value: Any, rate: Any, owner: str) -> tuple[Callable | None, Callable | None]:
    """Normalize a drive given as a callable of time or a constant rate into (f(t), f'(t))."""
    if value is None and rate is None:
        return None, None
    if value is not None and rate is not None:
        raise ModelError(f"{owner}: give either {name} (a function of time) or its rate, not both")
    rate_name = {"angle": "angular_velocity", "displacement": "velocity"}.get(name, "rate")
    unit = {"angle": "rad", "displacement": "m"}.get(name, "")
    if rate is not None:
        r = number(rate_name, rate, owner, unit=f"{unit}/s")
        return (lambda t, r=r: r * np.asarray(t, dtype=float)), (lambda t, r=r: r + 0.0 * np.asarray(t, dtype=float))
    if not callable(value):
        if isinstance(value, (str, bytes)) or np.ndim(value) != 0:
            raise ModelError(
                f"{owner}: {name}={value!r} is neither a number nor a function of time; give a constant "
                f"[{unit}] or a callable f(t) returning the {name} [{unit}]"
            )
        v = number(name, value, owner, unit=unit)
        return (lambda t, v=v: v + 0.0 * np.asarray(t, dtype=float)), (lambda t: 0.0 * np.asarray(t, dtype=float))
    f = value if isinstance(value, DriveFunction) else DriveFunction(value, owner, name, unit)

    def df(t, f=f, eps=1e-6):
        t = np.asarray(t, dtype=float)
        return (np.asarray(f(t + eps)) - np.asarray(f(t - eps))) / (2 * eps)

    return f, df


def _spring_law(joint: Any, owner: str, ref: str, units: tuple[str, str, str]) -> None:
    """Check and normalize the (stiffness, damping, reference) fields of a joint's linear law."""
    for key, unit, lo in (("stiffness", units[0], 0.0), ("damping", units[1], 0.0), (ref, units[2], None)):
        object.__setattr__(joint, key, number(key, getattr(joint, key), owner, minimum=lo, unit=unit))


@dataclass(frozen=True)
class Joint:
    """Base class of the joint elements (abstract).

    Parameters
    ----------
    name : str
    body_a, body_b : str
        Names of the connected bodies (``"ground"`` allowed for one of them).
    frame_a, frame_b : Frame, optional
        Attachment frames in the body frames.  If omitted they are built from ``point`` and
        ``axis`` (given in inertial coordinates at t = 0).
    point : array_like, shape (3,), optional
        Joint location in inertial coordinates at t = 0.
    axis : array_like, shape (3,), optional
        Joint axis in inertial coordinates at t = 0 (the z axis of the attachment frames).
    axis2 : array_like, shape (3,), optional
        Second axis (universal joint: the axis fixed in body B; planar: unused).

    Class attributes describe the constitutive law on the relative coordinates
    ``q = (s_x, s_y, s_z, phi_x, phi_y, phi_z)``: ``constrained`` is the mask of the components
    held (or driven), the others are free with a force law on the reaction component of the same
    index (zero for an ideal joint).
    """

    name: str
    body_a: str
    body_b: str
    frame_a: Frame | None = None
    frame_b: Frame | None = None
    point: Any = None
    axis: Any = None
    axis2: Any = None

    kind = "joint"
    constrained = (True,) * 6

    def __post_init__(self):
        owner = f"{type(self).__name__} {self.name!r}"
        if type(self) is Joint:
            raise ModelError("Joint is abstract: use Spherical, Revolute, Universal, Prismatic, Cylindrical, Planar or Fixed")
        if not isinstance(self.name, str) or not self.name:
            raise ModelError(f"{owner}: name must be a non-empty string")
        for side in ("body_a", "body_b"):
            _body_name(owner, side, getattr(self, side))
        for side in ("frame_a", "frame_b"):
            v = getattr(self, side)
            if v is not None and not isinstance(v, Frame):
                raise ModelError(f"{owner}: {side}={v!r} is not a Frame; give Frame(origin, orientation) in body coordinates")
        if self.body_a == self.body_b:
            raise ModelError(f"{owner}: body_a and body_b are both {self.body_a!r}; a joint needs two different bodies")
        if self.point is not None:
            object.__setattr__(self, "point", _vec3("point", self.point, owner))
        for key in ("axis", "axis2"):
            v = getattr(self, key)
            if v is not None:
                v = _vec3(key, v, owner)
                n = np.linalg.norm(v)
                if n < 1e-12:
                    raise ModelError(f"{owner}: {key}={v.tolist()} has zero length; give a nonzero direction vector")
                object.__setattr__(self, key, v / n)

    # joint-specific hooks -------------------------------------------------------------------
    def drives(self) -> dict[int, tuple[Callable, Callable]]:
        """Rheonomic targets ``{component: (f(t), f'(t))}`` for driven constrained components."""
        return {}

    def free_law(self) -> dict[int, tuple[float, float, float]]:
        """Linear force laws on free components: ``{component: (stiffness, damping, reference)}``.

        The reaction component ``k`` equals ``-stiffness (q_k - reference) - damping dq_k/dt``.
        """
        return {}


@dataclass(frozen=True)
class Spherical(Joint):
    """Spherical joint (ball): the attachment points coincide; 3 rotational DOF free."""

    kind = "spherical"
    constrained = (True, True, True, False, False, False)


@dataclass(frozen=True)
class Revolute(Joint):
    """Revolute joint (hinge) about the common z axis of the attachment frames.

    Optional torsional spring-damper (``stiffness`` [N m/rad], ``damping`` [N m s/rad],
    ``angle0`` [rad]) makes it a damped hinge; a rheonomic drive prescribes the relative angle
    (``angle``: constant or function of time [rad]) or a constant ``angular_velocity`` [rad/s].
    """

    stiffness: float = 0.0
    damping: float = 0.0
    angle0: float = 0.0
    angle: Any = None
    angular_velocity: Any = None

    kind = "revolute"

    @property
    def constrained(self):
        driven = self.angle is not None or self.angular_velocity is not None
        return (True, True, True, True, True, driven)

    def __post_init__(self):
        super().__post_init__()
        owner = f"Revolute {self.name!r}"
        _spring_law(self, owner, "angle0", ("N m/rad", "N m s/rad", "rad"))
        f, _ = _drive("angle", self.angle, self.angular_velocity, owner)
        if f is not None and (self.stiffness or self.damping):
            raise ModelError(f"{owner}: a driven revolute cannot also have stiffness/damping on the driven angle; "
                             f"remove the drive or the spring-damper")
        if callable(self.angle) and not isinstance(self.angle, DriveFunction):
            object.__setattr__(self, "angle", f)

    def drives(self):
        f, df = _drive("angle", self.angle, self.angular_velocity, f"Revolute {self.name!r}")
        return {} if f is None else {5: (f, df)}

    def free_law(self):
        if self.stiffness or self.damping:
            return {5: (float(self.stiffness), float(self.damping), float(self.angle0))}
        return {}


@dataclass(frozen=True)
class Universal(Joint):
    """Universal (Cardan/Hooke) joint: attachment points coincide; the x axis of frame A and the
    y axis of frame B stay orthogonal (the cross).  With ``point``/``axis``/``axis2`` the cross
    axes are ``axis`` (fixed in body A) and ``axis2`` (fixed in body B), orthogonal at t = 0."""

    kind = "universal"
    constrained = (True, True, True, False, False, False)  # plus the nonlinear cross condition


@dataclass(frozen=True)
class Prismatic(Joint):
    """Prismatic (slider) joint along the common z axis; relative rotation locked.

    A drive prescribes the slide ``displacement`` (constant or function of time [m]) or a
    constant ``velocity`` [m/s]; ``stiffness``/``damping`` add a linear spring-damper.
    """

    stiffness: float = 0.0
    damping: float = 0.0
    displacement0: float = 0.0
    displacement: Any = None
    velocity: Any = None

    kind = "prismatic"

    @property
    def constrained(self):
        driven = self.displacement is not None or self.velocity is not None
        return (True, True, driven, True, True, True)

    def __post_init__(self):
        super().__post_init__()
        owner = f"Prismatic {self.name!r}"
        _spring_law(self, owner, "displacement0", ("N/m", "N s/m", "m"))
        f, _ = _drive("displacement", self.displacement, self.velocity, owner)
        if f is not None and (self.stiffness or self.damping):
            raise ModelError(f"{owner}: a driven prismatic joint cannot also have stiffness/damping on the driven "
                             f"displacement; remove the drive or the spring-damper")
        if callable(self.displacement) and not isinstance(self.displacement, DriveFunction):
            object.__setattr__(self, "displacement", f)

    def drives(self):
        f, df = _drive("displacement", self.displacement, self.velocity, f"Prismatic {self.name!r}")
        return {} if f is None else {2: (f, df)}

    def free_law(self):
        if self.stiffness or self.damping:
            return {2: (float(self.stiffness), float(self.damping), float(self.displacement0))}
        return {}


@dataclass(frozen=True)
class Cylindrical(Joint):
    """Cylindrical joint: slides along and rotates about the common z axis."""

    kind = "cylindrical"
    constrained = (True, True, False, True, True, False)


@dataclass(frozen=True)
class Planar(Joint):
    """Planar joint: frame B moves in the x-y plane of frame A and rotates about z."""

    kind = "planar"
    constrained = (False, False, True, True, True, False)


@dataclass(frozen=True)
class Fixed(Joint):
    """Fixed joint (weld): no relative motion."""

    kind = "fixed"
    constrained = (True,) * 6


# ----------------------------------------------------------------------------------------------


def _sequence(owner: str, key: str, value: Any, what: str) -> tuple:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ModelError(f"{owner}: {key}={brief_repr(value)} is not a list of {what}; write e.g. Model([bob], [pin], [gravity])")
    return tuple(value)


# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """An immutable multibody model: ``bodies``, ``joints`` and ``forces``; ``units`` labels the
    consistent unit system of the input (default ``"SI"``; nothing is converted); ``contacts`` and
    ``impulses``: unilateral contacts and prescribed impulses (:mod:`flexmb.model.contacts`).

    Validation at construction: element types, unique names, joints and forces referring to known
    bodies, ``assembly_tol`` finite and > 0; force elements given with ``point_frame="inertial"``
    are converted to body-frame points.  That the attachment frames of the joints coincide at
    ``t0`` in their constrained components (within ``assembly_tol``, relative to the model size)
    is checked when :func:`flexmb.simulate` starts, where the drives' values at ``t0`` are known.
    """

    bodies: Sequence[RigidBody]
    joints: Sequence[Joint] = ()
    forces: Sequence[Any] = ()
    assembly_tol: float = 1e-8
    #: label of the consistent unit system of the input (e.g. "SI", "ft-slug-s"); flexmb never
    #: converts, the label only reaches the results (``Solution.meta["units"]``) and plot axes
    units: str = "SI"
    #: unilateral contacts and prescribed impulses (:mod:`flexmb.model.contacts`)
    contacts: Sequence[Any] = ()
    impulses: Sequence[Any] = ()

    def __post_init__(self):
        object.__setattr__(self, "bodies", _sequence("Model", "bodies", self.bodies, "RigidBody"))
        object.__setattr__(self, "joints", _sequence("Model", "joints", self.joints, "joints"))
        object.__setattr__(self, "forces", _sequence("Model", "forces", self.forces, "force elements"))
        if not self.bodies:
            raise ModelError("Model: no bodies; add at least one RigidBody")
        for k, b in enumerate(self.bodies):
            if not isinstance(getattr(b, "name", None), str) or not hasattr(b, "mass"):
                raise ModelError(f"Model: bodies[{k}]={brief_repr(b)} ({type(b).__name__}) is not a body; give RigidBody(...) elements")
        for k, j in enumerate(self.joints):
            if not isinstance(j, Joint):
                raise ModelError(f"Model: joints[{k}]={brief_repr(j)} ({type(j).__name__}) is not a joint; give Revolute(...), "
                                 f"Spherical(...), ... elements (forces go in the third argument)")
        for k, f in enumerate(self.forces):
            if not isinstance(f, FORCE_TYPES):
                raise ModelError(f"Model: forces[{k}]={brief_repr(f)} ({type(f).__name__}) is not a force element; use "
                                 f"{', '.join(t.__name__ for t in FORCE_TYPES)}")
        object.__setattr__(self, "assembly_tol", number("assembly_tol", self.assembly_tol, "Model", positive=True))
        if not isinstance(self.units, str) or not self.units:
            raise ModelError(f"Model: units={self.units!r} must be a label string such as 'SI' or 'ft-slug-s'")
        names = [b.name for b in self.bodies]
        dup = [n for n, k in Counter(names).items() if k > 1]
        if dup:
            raise ModelError(f"Model: duplicate body names {sorted(dup)}")
        dup = [n for n, k in Counter(j.name for j in self.joints).items() if k > 1]
        if dup:
            raise ModelError(f"Model: duplicate joint names {sorted(dup)}")
        # name -> index, for O(1) look-ups at set-up (a linear search made set-up O(N^2))
        object.__setattr__(self, "_body_index", {n: i for i, n in enumerate(names)})
        # joint -> its attachment frames, computed at the first request (set-up asks 3 times per joint)
        object.__setattr__(self, "_frames", {})
        known = set(names) | {GROUND}
        for j in self.joints:
            for side in ("body_a", "body_b"):
                if name_of(getattr(j, side)) not in known:
                    raise ModelError(
                        f"{type(j).__name__} {j.name!r}: {side}={getattr(j, side)!r} is not a body of the model; "
                        f"known bodies: {sorted(names)} and 'ground'"
                    )
                check_site(self, f"{type(j).__name__} {j.name!r}", side, getattr(j, side), joint=True)
        for f in self.forces:
            for side in ("body", "body_a", "body_b"):
                b = getattr(f, side, None)
                if b is not None and name_of(b) not in known - ({GROUND} if side == "body" else set()):
                    raise ModelError(f"{type(f).__name__}: {side}={b!r} is not a body of the model; known bodies: {sorted(names)}")
                if b is not None:
                    check_site(self, type(f).__name__, side, b, joint=False)
        object.__setattr__(self, "forces", tuple(self._in_body_frames(f) for f in self.forces))
        contacts, impulses = check_impulsive(self, self.contacts, self.impulses)  # flexmb/model/contacts.py
        object.__setattr__(self, "contacts", contacts)
        object.__setattr__(self, "impulses", impulses)

    def _in_body_frames(self, f: Any) -> Any:
        """Force elements with ``point_frame="inertial"`` converted to body-frame points (t = 0 pose)."""
        if getattr(f, "point_frame", "body") != "inertial":
            return f
        if isinstance(f, PointForce):
            x, R = self.body_pose(f.body)
            return replace(f, point=R.T @ (f.point - x), point_frame="body")
        (xa, Ra), (xb, Rb) = self.body_pose(f.body_a), self.body_pose(f.body_b)
        return replace(f, point_a=Ra.T @ (f.point_a - xa), point_b=Rb.T @ (f.point_b - xb), point_frame="body")

    # ------------------------------------------------------------------------------------------
    def body_index(self, name: str) -> int:
        """Index of a body (``-1`` for the ground)."""
        name = name_of(name)
        if name == GROUND:
            return -1
        try:
            return self._body_index[name]
        except KeyError:
            raise KeyError(f"unknown body {name!r}; bodies: {[b.name for b in self.bodies]}") from None

    def body_pose(self, name: str) -> tuple[NDArray, NDArray]:
        """Initial pose (position of the reference point, rotation) of a body or the ground."""
        name = name_of(name)
        if name == GROUND:
            return np.zeros(3), np.eye(3)
        b = self.bodies[self.body_index(name)]
        return b.position, b.orientation

    def attachment_frames(self, joint: Joint) -> tuple[Frame, Frame]:
        """Attachment frames of ``joint`` in the frames of ``body_a`` and ``body_b`` (cached per joint
        object: the model and its joints are immutable)."""
        cached = self._frames.get(id(joint))
        if cached is not None and cached[0] is joint:
            return cached[1]
        frames = self._attachment_frames(joint)
        self._frames[id(joint)] = (joint, frames)
        return frames

    def _attachment_frames(self, joint: Joint) -> tuple[Frame, Frame]:
        owner = f"{type(joint).__name__} {joint.name!r}"
        xa, Ra = self.body_pose(joint.body_a)
        xb, Rb = self.body_pose(joint.body_b)
        fa, fb = joint.frame_a, joint.frame_b
        if fa is None or fb is None:
            on_site = isinstance(joint.body_a, tuple) or isinstance(joint.body_b, tuple)
            if fa is None and joint.point is None and fb is None and not on_site:
                raise ModelError(f"{owner}: give frame_a/frame_b (body frames) or point/axis (inertial, at t = 0)")
            # global frame of the joint at t = 0
            if joint.point is not None:
                p = joint.point
            elif isinstance(joint.body_a, tuple) and fa is None:
                p = xa + Ra @ site_offset(self, joint.body_a)[0]
            elif isinstance(joint.body_b, tuple) and fb is None:
                p = xb + Rb @ site_offset(self, joint.body_b)[0]
            elif fa is not None:
                p = xa + Ra @ fa.origin
            else:
                p = xb + Rb @ fb.origin
            if joint.axis is not None:
                G = _frame_from_axes(joint.axis, joint.axis2 if isinstance(joint, Universal) else None, kind=joint.kind)
            elif fa is not None:
                G = Ra @ fa.orientation
            elif fb is not None:
                G = Rb @ fb.orientation
            else:
                G = np.eye(3)
            # (products of checked rotations and vectors: Frame.checked skips the input checks)
            if fa is None:
                fa = Frame.checked(Ra.T @ (p - xa), Ra.T @ G)
            if fb is None:
                Gb = G
                if isinstance(joint, Universal) and joint.axis2 is not None:
                    Gb = G  # same frame at t = 0: cross axes are x of A and y of B
                fb = Frame.checked(Rb.T @ (p - xb), Rb.T @ Gb)
        return site_frame(self, joint.body_a, fa), site_frame(self, joint.body_b, fb)

    @property
    def size(self) -> float:
        """Characteristic length of the model [m] (for tolerances)."""
        pts = [b.position for b in self.bodies]
        pts += [b.position + b.orientation @ f.position for b in self.bodies  # flexible bodies: interfaces
                for f in (b.data.interfaces if hasattr(b, "data") else ())]
        for j in self.joints:
            if j.point is not None:
                pts.append(j.point)
        pts = np.array(pts)
        return float(max(np.ptp(pts, axis=0).max() if len(pts) > 1 else 0.0, np.abs(pts).max(), 1e-3))


def _frame_from_axes(axis: NDArray, axis2: NDArray | None, kind: str) -> NDArray:
    """Orthonormal frame with z = ``axis`` (universal: x = axis, y = axis2)."""
    from flexmb.rotations.so3 import cross  # (numpy's np.cross, the same products, without its overhead)

    if kind == "universal":
        x = axis
        if axis2 is None:
            raise ModelError("Universal joint with point/axis also needs axis2 (the cross axis fixed in body B)")
        y = axis2 - (axis2 @ x) * x
        if np.linalg.norm(y) < 1e-9:
            raise ModelError("Universal joint: axis and axis2 are parallel; give two orthogonal cross axes")
        if abs(axis2 @ x) > 1e-8:
            raise ModelError(f"Universal joint: axis and axis2 must be orthogonal at t = 0 (dot = {axis2 @ x:.3e})")
        y = y / np.linalg.norm(y)
        return np.column_stack([x, y, cross(x, y)])
    z = axis
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = helper - (helper @ z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, cross(z, x), z])

