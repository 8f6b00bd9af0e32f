"""Frozen-time linearization at a point of a trajectory: :func:`operating_point`, :func:`linearize_point`.

``fm.linearize(sol, t=...)`` linearizes the equations of motion about the state of a
:class:`~flexmb.Solution` at time ``t`` (the node values, or the solution's order-4 interpolation
between nodes, :meth:`~flexmb.Solution.at`): bodies' positions, rotations, velocities and modal
coordinates and rates, the joints' accumulated relative rotations and reactions, drives and loads held
at their values at ``t``.  The matrices come from the same p = 1 element Jacobian as at an equilibrium
(:mod:`flexmb.linear.pencil`), evaluated with the velocities of the state, so that in the bodies'
coordinates (``M z'' + C z' + K z = W mu``, ``G z = 0``)

* ``M``, ``K`` carry the configuration dependence of the inertia and of the loads *and* the lever
  stiffness of the reactions that the motion needs (a swinging pendulum's rod tension
  ``m g cos(theta) + m l theta'^2``);
* ``C`` carries the gyroscopic terms ``(dM/dz) w`` and the rates of the moving rotations (rotation
  perturbations are taken about each body's moving rotation, ``R = exp(d) R*(t)``: the kinematic rows
  ``d' = dw + omega x d``; for an axisymmetric rotor spinning on isotropic supports this makes the
  frozen equations the exact, time-invariant ones).

The constraint directions turn with the motion.  In independent coordinates ``z = Z(t) xi`` the basis
is carried along the trajectory (``Z(t)``: orthonormal basis of the null space of ``G(t)``, aligned
with ``Z`` at ``t`` by the orthogonal Procrustes rotation, so that ``Z^T Zd = 0`` to first order), and
``z'' = Z xi'' + 2 Zd xi' + Zdd xi`` gives

    Mr = Z^T M Z,   Cr = Z^T (C Z + 2 M Zd),   Kr = Z^T (K Z + C Zd + M Zdd),

``Zd``, ``Zdd`` by three-point differences of ``Z`` at ``t`` and two neighbouring times (the
solution's adjacent nodes, or ``t +- h`` of the local step).  This removes the centripetal lever
stiffness of the frozen constraint directions: a swinging pendulum's ``Kr`` is ``m g l cos(theta(t))``
(the derivative of its equation of motion with respect to the angle), not the string stiffness
``m g l cos(theta) + m l^2 theta'^2`` of ``Z^T K Z``.  At an equilibrium ``Zd = Zdd = 0``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.linear.pencil import ElementPencil
from flexmb.linear.statics import JointReactions
from flexmb.model.model import Model, RigidBody


@dataclass
class OperatingPoint(JointReactions):
    """The state of a Solution at time ``t`` (a point of a trajectory, not an equilibrium).

    ``model``: the solution's model with its bodies in that state (positions, rotations, velocities,
    modal coordinates and rates; joints by body frames) (``simulate(model, ..., t0=t)`` continues the
    motion from it); ``reactions (nj, 6)``: the joints' reaction wrenches at ``t`` (frame A, as
    ``Solution.joint_force`` / ``joint_moment``); ``velocities (nv,)``: the bodies' velocities in the
    engine's layout; ``solution``: the Solution it was taken from."""

    t: float
    model: Model
    reactions: NDArray
    velocities: NDArray
    solution: object = field(default=None, repr=False)
    start: object = field(default=None, repr=False)
    pencil: ElementPencil = field(default=None, repr=False)
    source: Model = field(default=None, repr=False)
    spin: object = field(default=None, repr=False)
    linearization: object = field(default=None, repr=False)


def _values_at(sol, times: NDArray):
    """``sol`` sampled at ``times`` (node values where a time is a node)."""
    return sol.at(np.asarray(times, dtype=float))


def operating_point(sol, t: float) -> OperatingPoint:
    """The state of ``sol`` at time ``t`` [s] as an :class:`OperatingPoint`.

    Raises :class:`~flexmb.errors.ModelError` when ``t`` is not a finite time within the solution or
    the solution has no model (``sol.attach(model)`` after ``Solution.load``)."""
    model = getattr(sol, "model", None)
    if model is None:
        raise ModelError("linearize: this Solution carries no model (loaded from a file?); attach it first: "
                         "sol.attach(model)")
    try:
        t = float(t)
    except (TypeError, ValueError):
        raise ModelError(f"linearize: t={t!r} is not a time; give a number within [{sol.t[0]:.6g}, {sol.t[-1]:.6g}] s") from None
    span = 1e-12 * max(1.0, abs(sol.t[-1]))
    if not np.isfinite(t) or t < sol.t[0] - span or t > sol.t[-1] + span:
        raise ModelError(f"linearize: t={t!r} is outside the solution's time span [{sol.t[0]:.6g}, {sol.t[-1]:.6g}] s; "
                         f"give a time within it")
    return _point(sol, _values_at(sol, [min(max(t, sol.t[0]), sol.t[-1])]), 0, t)


def _point(sol, at, i: int, t: float) -> OperatingPoint:
    """The operating point of row ``i`` of the sampled solution ``at`` (time ``t``)."""
    from flexmb.dynamics.system import initial_configuration
    from flexmb.linear.statics import placed_model
    from flexmb.linear.pencil import compiled
    from flexmb.linear.statics import start_state

    model = sol.model
    names = list(at.body_names)
    states = {}
    for b, body in enumerate(model.bodies):
        k = names.index(body.name)
        kw = dict(position=at.body_position[i, k], orientation=at.body_rotation[i, k],
                  velocity=at.body_velocity[i, k], angular_velocity=at.body_angular_velocity[i, k])
        if not isinstance(body, RigidBody):
            kw["q0"] = np.asarray(at.extra[f"modal/{body.name}"][i], float)
            kw["qd0"] = np.asarray(at.extra[f"modal_rate/{body.name}"][i], float)
        states[b] = kw
    here = placed_model(model, compiled(model), states)
    pen = ElementPencil(here, t)
    st = start_state(pen)
    if pen.cm.nj:
        st.acc = np.array(at.joint_rel_rotation[i], dtype=float)  # accumulated (a drive's turns)
    _, _, w = initial_configuration(pen.cm)
    Q = np.concatenate([at.joint_force[i], at.joint_moment[i]], axis=1) if pen.cm.nj else np.zeros((0, 6))
    return OperatingPoint(t=t, model=here, reactions=Q, velocities=w, solution=sol, start=st, pencil=pen,
                          source=model)


def _frozen_linearization(point: OperatingPoint):
    """The linearization of ``point`` in the bodies' coordinates (basis rates not yet set)."""
    from flexmb.linear.forms import Linearization, coordinate_names, pencil, rotating_frame, second_order

    pen, st, Q, w = point.pencil, point.start, point.reactions, point.velocities
    E, A, (U, r0, r1, J0, J1, KB) = pencil(pen, st, Q, None, None, w=w)
    M, C, K, G, W = second_order(pen, E, A, J0)
    C, K = rotating_frame(pen, None, A, M, C, K, second_order.Ez, w)
    return Linearization(E=E, A=A, M=M, C=C, K=K, G=G, W=W, coordinates=coordinate_names(pen.cm),
                         equilibrium=point, J0=J0, velocities=np.asarray(w, float).copy(),
                         reactions=second_order.reactions)


def _aligned(Zn: NDArray, Z: NDArray) -> NDArray:
    """``Zn`` turned within its span to the closest to ``Z`` (orthogonal Procrustes)."""
    U, _, Vt = np.linalg.svd(Zn.T @ Z)
    return Zn @ (U @ Vt)


def _neighbour_times(sol, t: float) -> NDArray:
    """Times around ``t`` for the differences of the basis: the adjacent nodes (``t`` a node) or
    ``t -+ h`` (``h``: the local step); at an end of the run four one-sided ones (second order)."""
    ts = sol.t
    if ts.size < 4:
        raise ModelError("linearize: a Solution of fewer than 4 nodes cannot give the rates of the constraint "
                         "basis; simulate over a few steps")
    if np.abs(ts - t).min() <= 1e-12 * max(1.0, abs(ts[-1])):  # a node: its neighbours
        j = int(np.argmin(np.abs(ts - t)))
        if j == 0:
            return ts[:4]
        if j == ts.size - 1:
            return ts[-4:]
        return ts[j - 1:j + 2]
    k = int(np.clip(np.searchsorted(ts, t), 1, ts.size - 1))
    h = ts[k] - ts[k - 1]
    if t - h < ts[0]:
        return np.array([t, t + h, t + 2 * h, t + 3 * h])
    if t + h > ts[-1]:
        return np.array([t - 3 * h, t - 2 * h, t - h, t])
    return np.array([t - h, t, t + h])


def _difference_weights(x: NDArray) -> tuple[NDArray, NDArray]:
    """Weights of the first and second derivative at 0 of the polynomial through the points ``x (k,)``."""
    V = np.vander(x, x.size, increasing=True)  # f(x) = c0 + c1 x + c2 x^2 + ...
    Vi = np.linalg.inv(V)
    return Vi[1], 2.0 * Vi[2]


def linearize_point(point: OperatingPoint):
    """The frozen-time :class:`~flexmb.linear.forms.Linearization` at ``point`` (module docstring)."""
    from flexmb.linear.forms import null_space

    if point.linearization is not None:
        return point.linearization
    lin = _frozen_linearization(point)
    sol = point.solution
    if lin.G.shape[0] and sol is not None:
        Z = lin.Z
        times = _neighbour_times(sol, point.t)
        at = _values_at(sol, times)
        Zs = []
        for i, ti in enumerate(times):
            if abs(ti - point.t) <= 1e-12 * max(1.0, abs(point.t)):
                Zs.append(Z)
                continue
            Gi = _frozen_linearization(_point(sol, at, i, float(ti))).G
            Zi = null_space(Gi, Z.shape[0])
            if Zi.shape[1] != Z.shape[1]:
                raise ModelError(f"linearize: the number of degrees of freedom changes between t = {point.t:.6g} "
                                 f"({Z.shape[1]}) and t = {ti:.6g} s ({Zi.shape[1]}): a singular position; "
                                 f"linearize at another time")
            Zs.append(_aligned(Zi, Z))
        d1, d2 = _difference_weights(times - point.t)
        Zd = sum(c * z for c, z in zip(d1, Zs))
        Zdd = sum(c * z for c, z in zip(d2, Zs))
        lin.basis_rates = (Zd, Zdd)
    point.linearization = lin
    return lin
