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
and moves with the body's deformation; the modal velocities then jump too.  Or, on side b, at the
nodes of its FE mesh (``nodes=``: a node set's name or node indices): every node is a contact point
(a point, or a sphere of ``radius`` centred at the node) at ``x + R (X_n + Phi_n q)``, each with its own
gap, impulse and resting state (:func:`contact_nodes`).

The equations: ``docs/theory.md``, section "Impacts"; the solve: :mod:`flexmb.dynamics.impact`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.model.checks import brief_repr, body_name as _body_name, number, vec3 as _vec3
from flexmb.model.frames import GROUND

__all__ = ["Impulse", "Contact", "CONTACT_KINDS", "check_impulsive", "contact_nodes"]

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

    ``nodes``: side b at FE nodes of the flexible body ``body_b`` (its plain name): the name of a node
    set of its data (:meth:`~flexmb.fe.reduction.body_data.FlexibleBodyData.node_set`: the mesh's sets,
    e.g. a structured box's faces ``"zmin"``, or an interface's) or node indices ``(k,)``.  Every node is
    a point (``"point-plane"``) or the centre of a sphere of ``radius`` (``"sphere-plane"``,
    ``"sphere-sphere"``), moving with the deformation; ``point_b`` stays zero.  The spheres turn with the
    body frame (the nodes' small rotations are left out: exact for the normal impulses; with friction a
    sphere's slip misses the local rotation of the mesh times its radius).
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
    nodes: Any = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ModelError(f"Contact: name={brief_repr(self.name)} must be a non-empty string")
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
        if self.nodes is not None:
            object.__setattr__(self, "nodes", _node_spec(owner, self.nodes))
            if isinstance(self.body_b, tuple):
                raise ModelError(f"{owner}: nodes={_nodes_text(self.nodes)} with body_b={self.body_b!r}: the nodes are the "
                                 f"body's own; give body_b={self.body_b[0]!r} (a node set may name the interface's nodes)")
            if np.any(self.point_b):
                raise ModelError(f"{owner}: point_b={self.point_b.tolist()} with nodes={_nodes_text(self.nodes)}: the contact "
                                 f"points are the nodes; leave point_b at (0, 0, 0)")

    @property
    def plane(self) -> bool:
        return self.kind != "sphere-sphere"


def _nodes_text(value: Any) -> str:
    """``nodes=`` for a message: a set's name quoted, indices as a list."""
    return brief_repr(value.tolist() if isinstance(value, np.ndarray) else value)


def _node_spec(owner: str, value: Any) -> Any:
    """``nodes=`` as a non-empty set name or a read-only array of distinct node indices ``>= 0`` (the
    range is checked against the body's mesh, :func:`contact_nodes`)."""
    fix = "give the name of a node set of body_b's data (e.g. 'zmin') or node indices such as [0, 4, 7]"
    if isinstance(value, str):
        if not value:
            raise ModelError(f"{owner}: nodes='' is empty; {fix}")
        return value
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        a = np.asarray([object()])
    whole = a.dtype.kind == "f" and bool(np.all(np.isfinite(a))) and bool(np.all(a == np.round(a)))
    if isinstance(value, (bytes, bool)) or (a.size and a.dtype.kind not in "iu" and not whole) or a.ndim > 1:
        raise ModelError(f"{owner}: nodes={brief_repr(value)} is neither a node set's name nor node indices; {fix}")
    idx = a.astype(np.int64).reshape(-1)
    if not idx.size:
        raise ModelError(f"{owner}: nodes={brief_repr(value)} is empty: a contact needs at least one node; {fix}")
    if idx.min() < 0 or np.unique(idx).size != idx.size:
        raise ModelError(f"{owner}: nodes={brief_repr(value)} must be distinct node indices >= 0; give each node once")
    idx.flags.writeable = False
    return idx


def contact_nodes(model, c: Contact) -> NDArray | None:
    """The FE node indices ``(k,)`` of contact ``c``'s side b (None: a single contact point), checked
    against the model: ``body_b`` a flexible body, the set known and not empty, the indices within its
    mesh (ModelError naming the contact, the value and the fix)."""
    if c.nodes is None:
        return None
    owner = f"Contact {c.name!r}"
    body = model.bodies[model.body_index(c.body_b)]
    data = getattr(body, "data", None)
    if data is None or not hasattr(data, "node_set"):
        raise ModelError(f"{owner}: nodes={_nodes_text(c.nodes)} on {c.body_b!r}, a {type(body).__name__}: node sets belong "
                         f"to flexible bodies (FE meshes); give point_b (and radius) for a rigid body, or make "
                         f"{c.body_b!r} a FlexibleBody")
    if isinstance(c.nodes, str):
        try:
            idx = data.node_set(c.nodes)
        except ModelError as exc:  # named by the model's body (the data's own name may differ)
            text = str(exc).replace(f"body {data.name!r}", f"flexible body {c.body_b!r} (data {data.name!r})", 1)
            raise ModelError(f"{owner}: nodes={c.nodes!r}: {text}") from None
        if not idx.size:
            raise ModelError(f"{owner}: nodes={c.nodes!r}: the node set of body {c.body_b!r} is empty; give a set "
                             f"with nodes")
        return idx
    n = data.n_nodes
    if c.nodes.max() >= n:
        raise ModelError(f"{owner}: nodes={_nodes_text(c.nodes)}: node {int(c.nodes.max())} is outside the mesh of "
                         f"{c.body_b!r} ({n} nodes, 0 .. {n - 1}); give indices into its data's points")
    return np.asarray(c.nodes, dtype=np.int64)


def check_impulsive(model, contacts, impulses) -> tuple[tuple, tuple]:
    """The model's ``contacts`` and ``impulses`` as tuples of :class:`Contact` / :class:`Impulse`,
    checked against its bodies and interfaces (ModelError naming the element, the value and the fix)."""
    from flexmb.model.flexible import name_of, check_site

    out = []
    for key, value, cls in (("contacts", contacts, Contact), ("impulses", impulses, Impulse)):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise ModelError(f"Model: {key}={brief_repr(value)} is not a list of {cls.__name__} elements")
        items = tuple(value)
        for k, c in enumerate(items):
            if not isinstance(c, cls):
                raise ModelError(f"Model: {key}[{k}]={brief_repr(c)} ({type(c).__name__}) is not a {cls.__name__}")
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
            if name_of(value) not in known:
                raise ModelError(f"{owner}: {side}={value!r} is not a body of the model; known bodies: {sorted(names)}"
                                 + (" and 'ground'" if side == "body_a" else ""))
            check_site(model, owner, side, value, joint=False)
        if isinstance(c, Contact):
            contact_nodes(model, c)
    return out[0], out[1]
