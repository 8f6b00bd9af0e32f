"""Read-only views of a :class:`~flexmb.results.solution.Solution`: one body (:class:`BodyView`, with
body-fixed points :class:`PointView`) or one joint (:class:`JointView`), as returned by
``Solution.body(name)`` / ``Solution.joint(name)``."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["BodyView", "JointView", "PointView"]


def _quaternions(R: NDArray[np.float64]) -> NDArray[np.float64]:
    """Unit quaternions (w, x, y, z) of rotations ``R (nt, 3, 3)``, sign continuous in time."""
    from scipy.spatial.transform import Rotation

    if len(R) == 0:
        return np.zeros((0, 4))
    q = np.roll(Rotation.from_matrix(R).as_quat(), 1, axis=-1)
    if q[0, 0] < 0:
        q[0] = -q[0]
    # continuity: q_k times the product of the signs of q_j . q_{j-1} up to k
    sgn = np.sign(np.einsum("ti,ti->t", q[1:], q[:-1]))
    sgn[sgn == 0] = 1.0
    q[1:] *= np.cumprod(sgn)[:, None]
    return q


class BodyView(NamedTuple):
    """Read-only time histories of one body (views into the :class:`Solution` arrays).

    Attributes
    ----------
    name : str
    t : ndarray, shape (nt,)
        Time nodes [s].
    position : ndarray, shape (nt, 3)
        Reference point in the inertial frame [m].
    rotation : ndarray, shape (nt, 3, 3)
        Rotation matrix body -> inertial.
    velocity : ndarray, shape (nt, 3)
        Velocity of the reference point [m/s].
    angular_velocity : ndarray, shape (nt, 3)
        Angular velocity, inertial components [rad/s].
    quaternion : ndarray, shape (nt, 4)
        Orientation as a unit quaternion, scalar first (w, x, y, z).
    modal, modal_rate : ndarray, shape (nt, nm), or None
        Flexible bodies: modal coordinates and rates (mass-normalized shapes, [m sqrt(kg)] and
        per second); None for a rigid body.  For a flexible body the reference point and frame
        above are the floating frame (reference interface of Craig-Bampton data, mesh frame of
        free-free data).
    interfaces : dict of str to BodyView
        Flexible bodies: the motion of each interface frame (inertial position of its point,
        rotation, velocity, angular velocity), see :meth:`interface`.
    element : RigidBody or FlexibleBody or None
        The model element of the body when the solution knows its model
        (:meth:`Solution.attach`); needed by :meth:`nodes`, :meth:`chord_deflection`,
        :attr:`elastic_energy` and :attr:`kinetic_energy`.
    frame : str or None
        None: the motion above is inertial. The name of another body for a view made by
        :meth:`in_frame`: positions, rotations, velocities and angular velocities are then
        relative to that body's frame, in its components (and "inertial" in the docstrings of
        :meth:`point` and :meth:`nodes` reads "that body's frame").
    """

    name: str
    t: NDArray[np.float64]
    position: NDArray[np.float64]
    rotation: NDArray[np.float64]
    velocity: NDArray[np.float64]
    angular_velocity: NDArray[np.float64]
    quaternion: NDArray[np.float64]
    modal: NDArray[np.float64] | None = None
    modal_rate: NDArray[np.float64] | None = None
    interfaces: dict | None = None
    element: Any = None
    frame: str | None = None

    def in_frame(self, other: "BodyView") -> "BodyView":
        """This body's motion seen from another body's frame (e.g. a beam's tip in the hub frame:
        ``sol.body("beam").in_frame(sol.body("hub")).interface("tip").position``).

        With ``x_o, R_o, v_o, w_o`` the other body's frame, ``d = x - x_o``: position ``R_o^T d``,
        rotation ``R_o^T R``, velocity ``R_o^T (v - v_o - w_o x d)`` (the velocity seen by an
        observer fixed to that frame), angular velocity ``R_o^T (w - w_o)``, all in the other frame's
        components; interfaces likewise; modal coordinates unchanged.  ``kinetic_energy`` needs the
        inertial view.

        Parameters
        ----------
        other : BodyView
            From the same solution (same times), e.g. ``sol.body("hub")``.
        """
        from flexmb.errors import ModelError

        if not isinstance(other, BodyView):
            raise ModelError(f"body {self.name!r}: in_frame(other={other!r}) needs a BodyView of the same solution, "
                             "e.g. sol.body('hub')")
        if other.frame is not None or self.frame is not None:
            raise ModelError(f"body {self.name!r}: in_frame takes inertial views (sol.body(name)); this one or "
                             f"{other.name!r} is already relative to {self.frame or other.frame!r}")
        if other.t.shape != self.t.shape or not np.array_equal(other.t, self.t):
            raise ModelError(f"body {self.name!r}: in_frame({other.name!r}): the views have different times; take "
                             "both from one solution")
        return _relative(self, other)

    def interface(self, name: str) -> "BodyView":
        """Motion of the interface frame ``name`` of a flexible body (a :class:`BodyView`: inertial
        position of the interface point, rotation of the interface frame (it turns with the
        deformation), velocity, angular velocity).  KeyError lists the interfaces."""
        ifs = self.interfaces or {}
        if name not in ifs:
            raise KeyError(f"body {self.name!r} has no interface {name!r}; interfaces: {sorted(ifs)}")
        return ifs[name]

    def nodes(self, nodes: Any = None, *, points: ArrayLike | None = None, tol: float | None = None):
        """Motion of FE nodes of a flexible body at the output times (a
        :class:`~flexmb.results.flexible_outputs.NodeSetView`: ``displacement`` ``Phi_t q`` in the body
        frame, ``displacement_inertial`` ``R Phi_t q`` and ``position`` ``x + R (X0 + Phi_t q)``,
        each (nt, k, 3) [m]).

        Parameters
        ----------
        nodes : int, sequence of int, or str, optional
            Node indices into the data's ``points``, or an interface name (its node set); default
            every node.
        points : array_like, shape (3,) or (k, 3), optional
            Body-frame points [m] instead, snapped to the nearest nodes (within ``tol`` [m];
            default 1e-6 of the mesh size, i.e. they must be nodes).
        """
        from flexmb.results.flexible_outputs import node_set

        return node_set(self, nodes, points=points, tol=tol)

    def chord_deflection(self, point: Any, ends: tuple[str, str], axis: ArrayLike | None = None,
                         tol: float | None = None) -> NDArray[np.float64]:
        """Deflection of a node from the chord between two interfaces of a flexible body, in the body frame.

        The chord runs from interface ``ends[0]``'s point to ``ends[1]``'s, both deformed
        (``c + Phi_t q``); the node's deformed position ``X0 + Phi_t q`` minus its projection on the
        chord is the deflection [m].

        Parameters
        ----------
        point : int or array_like (3,)
            Node index, or a body-frame point [m] snapped to a node within ``tol`` (see :meth:`nodes`).
        ends : (str, str)
            Interface names.
        axis : array_like (3,), optional
            Body-frame axis ``n``: return the signed deflection along the unit vector of ``n x e``
            (``e`` the unit chord), shape (nt,) [m]; e.g. ``axis=(0, 0, 1)`` for the in-plane
            deflection of a rod along x bending in the x-y plane (positive along y).  Default: the
            deflection vector, shape (nt, 3) [m].

        Raises
        ------
        ModelError
            ``ends`` naming one interface twice (or two whose points coincide), or ``axis`` within
            5.7 degrees of the chord at some output time (``axis x e`` is then not a direction).
        """
        from flexmb.results.flexible_outputs import chord_deflection

        return chord_deflection(self, point, ends, axis, tol)

    def chord_angle(self, ends: tuple[str, str], axis: ArrayLike = (0.0, 0.0, 1.0),
                    zero: ArrayLike | None = None) -> NDArray[np.float64]:
        """Angle of the deformed chord between two interfaces of a flexible body about ``axis``, shape
        (nt,) [rad], continuous in time (unwrapped): e.g. a connecting rod's angle in the plane of a
        mechanism, its rigid angle plus the chord's elastic rotation.

        The chord ``R (b - a)`` runs from interface ``ends[0]``'s deformed point to ``ends[1]``'s,
        in this view's frame (inertial; another body's for a view from :meth:`in_frame`).  The angle
        is measured about ``axis`` (in that frame) from ``zero`` (default the x axis, or y for an
        axis along x), positive by the right-hand rule.  ModelError when the chord is within 5.7
        degrees of the axis (no angle about it) or the ends are not two interfaces apart.
        """
        from flexmb.results.flexible_outputs import chord_angle

        return chord_angle(self, ends, axis, zero)

    @property
    def elastic_energy(self) -> NDArray[np.float64]:
        """Strain energy of a flexible body, shape (nt,) [J]: ``1/2 omega2 q^2`` plus, for
        ``stiffening="full"``, the cubic ``1/2 G q^3`` and quartic ``1/8 H q^4`` terms (the energy the
        engine uses; the preload stiffness is not a stored energy and is not included)."""
        from flexmb.results.flexible_outputs import elastic_energy

        return elastic_energy(self)

    @property
    def kinetic_energy(self) -> NDArray[np.float64]:
        """Kinetic energy of the body, shape (nt,) [J]: rigid ``1/2 m v_c^2 + 1/2 w J w``; flexible
        ``1/2 W^T M(q) W`` with the exact configuration-dependent mass matrix of the reduced field
        (``W`` = frame velocity, angular velocity (body frame) and modal rates).  The sum over the
        bodies is ``Solution.kinetic_energy``."""
        from flexmb.results.flexible_outputs import body_kinetic_energy

        return body_kinetic_energy(self)

    def point(self, r: ArrayLike) -> PointView:
        """Motion of the body-fixed point(s) ``r`` at the time nodes.

        Parameters
        ----------
        r : array_like, shape (3,) or (k, 3)
            Point(s) in the body frame, relative to the body's reference point [m] (the
            convention of ``PointForce.point`` and ``SpringDamper.point_a``).

        Returns
        -------
        PointView
            ``position = x + R r`` and ``velocity = v + omega x (R r)``, shape (nt, 3) or
            (nt, k, 3), inertial frame.  No acceleration: the solution stores positions and
            velocities at the nodes, and a finite difference of the node velocities would be
            only second-order accurate (below the nodal order of p >= 2); take accelerations
            from the model's equations of motion if needed.
        """
        from flexmb.errors import ModelError

        try:
            rr = np.asarray(r, dtype=np.float64)
        except (TypeError, ValueError):
            rr = np.zeros(0)
        if rr.ndim not in (1, 2) or rr.shape[-1] != 3 or not np.all(np.isfinite(rr)):
            raise ModelError(
                f"body {self.name!r}: point r={r!r} must be a finite body-frame point of shape (3,) or "
                f"points of shape (k, 3) [m]"
            )
        arm = np.einsum("tij,...j->t...i", self.rotation, rr)  # (nt, 3) or (nt, k, 3)
        x = self.position[:, None] if rr.ndim == 2 else self.position
        v = self.velocity[:, None] if rr.ndim == 2 else self.velocity
        w = self.angular_velocity[:, None] if rr.ndim == 2 else self.angular_velocity
        return PointView(self.name, _frozen(rr.copy()), self.t, _frozen(x + arm), _frozen(v + np.cross(w, arm)))


class PointView(NamedTuple):
    """Motion of body-fixed points (see :meth:`BodyView.point`).

    Attributes
    ----------
    body : str
    r : ndarray, shape (3,) or (k, 3)
        The points in the body frame, relative to the reference point [m].
    t : ndarray, shape (nt,)
        Time nodes [s].
    position, velocity : ndarray, shape (nt, 3) or (nt, k, 3)
        Inertial position [m] and velocity [m/s] of the points.
    """

    body: str
    r: NDArray[np.float64]
    t: NDArray[np.float64]
    position: NDArray[np.float64]
    velocity: NDArray[np.float64]


class JointView(NamedTuple):
    """Read-only time histories of one joint (views into the :class:`Solution` arrays).

    Attributes
    ----------
    name, type : str
    t : ndarray, shape (nt,)
        Time nodes [s].
    rel_position : ndarray, shape (nt, 3)
        Relative position of the attachment point on B w.r.t. frame A, components in A [m].
    rel_rotation : ndarray, shape (nt, 3)
        Accumulated relative rotation vector of B w.r.t. A, components in A [rad].
    rel_velocity : ndarray, shape (nt, 6)
        Relative linear and angular velocity, components in A [m/s, rad/s].
    multiplier : ndarray, shape (nt, 6)
        Multipliers at the nodes [N s, N m s].
    force : ndarray, shape (nt, 3)
        Reaction force of A on B at the nodes, components in A [N], accurate to the nodal order
        (``order``): recovered from the impulses (docs/theory.md section 8).
    moment : ndarray, shape (nt, 3)
        Reaction moment of A on B about the attachment point of B at the nodes, components in A
        [N m].
    t_internal : ndarray, shape (ni,)
        Internal (Gauss) points of the time elements [s].
    force_internal, moment_internal : ndarray, shape (ni, 3)
        The reactions as solved for at the internal points (pointwise values; for p >= 2 they
        oscillate within each element: use ``force``/``moment`` or :meth:`force_at`).
    order : int
        Nodal order of the run's time elements (``2p``); :meth:`force_at` interpolates the node
        values with a local polynomial of degree ``order``.
    """

    name: str
    type: str
    t: NDArray[np.float64]
    rel_position: NDArray[np.float64]
    rel_rotation: NDArray[np.float64]
    rel_velocity: NDArray[np.float64]
    multiplier: NDArray[np.float64]
    force: NDArray[np.float64]
    moment: NDArray[np.float64]
    t_internal: NDArray[np.float64]
    force_internal: NDArray[np.float64]
    moment_internal: NDArray[np.float64]
    order: int = 2

    def force_at(self, t: ArrayLike) -> NDArray[np.float64]:
        """Reaction force at time(s) ``t`` [s] (within the run), shape (3,) or (k, 3), frame A [N]:
        the local polynomial of degree ``order`` through the nearest ``order + 1`` node values
        (interpolation error O(h^(order+1)), below the nodal error)."""
        return _values_at(self.t, self.force, t, self.order + 1, f"joint {self.name!r}")

    def moment_at(self, t: ArrayLike) -> NDArray[np.float64]:
        """Reaction moment about B's origin at time(s) ``t`` [s], shape (3,) or (k, 3), frame A [N m]
        (like :meth:`force_at`)."""
        return _values_at(self.t, self.moment, t, self.order + 1, f"joint {self.name!r}")


def _relative(view: BodyView, other: BodyView) -> BodyView:
    """``view`` relative to ``other``'s frame (see :meth:`BodyView.in_frame`); interfaces too."""
    Ro = other.rotation
    d = view.position - other.position
    v = view.velocity - other.velocity - np.cross(other.angular_velocity, d)
    R = np.einsum("tji,tjk->tik", Ro, view.rotation)
    ifs = None if view.interfaces is None else {k: _relative(f, other) for k, f in view.interfaces.items()}
    return view._replace(
        position=_frozen(np.einsum("tji,tj->ti", Ro, d)), rotation=_frozen(R),
        velocity=_frozen(np.einsum("tji,tj->ti", Ro, v)),
        angular_velocity=_frozen(np.einsum("tji,tj->ti", Ro, view.angular_velocity - other.angular_velocity)),
        quaternion=_frozen(_quaternions(R)), interfaces=ifs, frame=other.name)


def _values_at(nodes: NDArray, values: NDArray, t: ArrayLike, n: int, what: str) -> NDArray:
    from flexmb.dynamics.node.reactions import values_at

    return _frozen(values_at(nodes, values, t, n, what))


def _frozen(a: NDArray) -> NDArray:
    a.flags.writeable = False
    return a
