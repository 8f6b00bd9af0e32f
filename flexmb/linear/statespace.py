"""State-space models of a linearization: :func:`state_space` (``(A, B, C, D)`` for :mod:`scipy.signal`).

State ``x = (xi, xi')`` in the independent coordinates of the linearization (``z = Z xi``; along a
trajectory ``z' = Z xi' + Zd xi``), ``x' = A x + B u``, ``y = C x + D u``.

Inputs ``u`` (a list of names):

* ``"body:x"``, ``"body:theta_z"``, ``"body:q1"``: a generalized force on that coordinate (a force
  along x at the body's reference point [N], a moment about z [N m], a modal force);
* ``"<force>:x"`` (``y``, ``z``): a component of the point force or point torque named ``<force>``
  (``PointForce(..., name=)``, ``PointTorque(..., name=)``), in that element's ``frame`` at its point
  (an interface of a flexible body included): its generalized force is read off the element residual
  with that load set to the unit vector (the one implementation of the load law);
* ``"<joint>:fx"`` ... ``"<joint>:mz"``: an actuator acting along a *free* component of a joint
  (frame A; the wrench of A on B, and its opposite on A), e.g. ``"hinge:mz"`` a motor torque about a
  revolute's axis: the generalized force of a unit reaction in that component (``MQ``).

Outputs ``y``:

* ``"body:x"`` (a coordinate) and ``"body:x'"`` (its rate);
* ``(body, point, quantity)``: a point of a rigid body (``point`` in the body frame relative to its
  reference point, as ``PointForce`` takes it), ``quantity`` one of ``"x"``, ``"y"``, ``"z"``
  (displacement, inertial components [m]) or ``"vx"``, ``"vy"``, ``"vz"`` (velocity [m/s]);
* ``"<joint>:fx"`` ... ``"<joint>:mz"``: the change of the joint's reaction wrench (frame A, as
  ``Solution.joint_force``; an actuator input is not part of it), from the reactions' linearization of
  the same Jacobian: ``Qbar = Nr mu + Pz z + Pw w`` (held components: the multipliers
  ``mu = (G M^-1 W)^+ G M^-1 (C z' + K z - B u)`` of ``M z'' + C z' + K z = W mu + B u``, ``G z'' = 0``;
  free ones: their spring and damper laws).  At a point of a trajectory the constraint is taken frozen
  (``G z'' = 0``).
"""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError

AXES = {"x": 0, "y": 1, "z": 2}
WRENCH = {"fx": 0, "fy": 1, "fz": 2, "mx": 3, "my": 4, "mz": 5}
POINT = {"x": (0, False), "y": (1, False), "z": (2, False), "vx": (0, True), "vy": (1, True), "vz": (2, True)}


def _load_elements(cm) -> list:
    """The model's point loads in the order of ``cm.forces.loads`` (point forces, then torques)."""
    return list(cm.point_forces) + list(cm.point_torques)


def _known(lin) -> str:
    cm = lin.equilibrium.pencil.cm
    loads = [f.name for f in _load_elements(cm) if f.name]
    shown = ", ".join(lin.coordinates[:6]) + (" ..." if len(lin.coordinates) > 6 else "")
    return (f"coordinates ({shown}; rates: append \"'\"), force elements by name with :x/:y/:z "
            f"({', '.join(loads) or 'none named'}), joints with :fx ... :mz "
            f"({', '.join(j.name for j in cm.model.joints) or 'none'}), or (body, point, 'x'|'vx'|...) for outputs")


def _split(name):
    if not isinstance(name, str) or ":" not in name:
        return None, None
    head, _, tail = name.rpartition(":")
    return head, tail


def _joint(cm, head: str):
    names = [j.name for j in cm.model.joints]
    return names.index(head) if head in names else None


def _load_columns(lin, wanted: list) -> NDArray:
    """Generalized forces ``(nv, k)`` of unit components ``wanted = [(load index, component)]``: the
    element residual (momentum rows, ``h = 1``: ``r = ... - h F``) with that load the unit vector minus
    that with every load zero."""
    from flexmb.linear.statics import node_unknowns

    state = lin.equilibrium
    pen = state.pencil
    U, st = node_unknowns(pen, state.start, state.reactions, getattr(state, "spin", None), lin.velocities)
    st = replace(st, t=pen.t - 1.0)
    loads = pen.cm.forces.loads  # the frozen copy's own list: restored below
    saved = list(loads)
    zero = [SimpleNamespace(**{**vars(ld), "value": np.zeros(3), "timefn": False, "callback": False}) for ld in saved]
    out = np.zeros((pen.cm.nv, len(wanted)))
    try:
        loads[:] = zero
        r0 = pen.system.evaluate(U, st, 1.0, jacobian=False)[0]
        for k, (i, c) in enumerate(wanted):
            loads[i] = SimpleNamespace(**{**vars(zero[i]), "value": np.eye(3)[c]})
            r = pen.system.evaluate(U, st, 1.0, jacobian=False)[0]
            out[:, k] = -(r - r0)[pen.ix.pi]
            loads[i] = zero[i]
    finally:
        loads[:] = saved
    return out


def input_columns(lin, inputs) -> NDArray:
    """``Bz (nv, len(inputs))``: the generalized force of each named input (module docstring)."""
    cm = lin.equilibrium.pencil.cm
    elems = _load_elements(cm)
    Bz = np.zeros((cm.nv, len(inputs)))
    wanted, where = [], []
    kind = None
    for k, name in enumerate(inputs):
        if isinstance(name, str) and name in lin.coordinates:
            Bz[lin.coordinates.index(name), k] = 1.0
            continue
        head, tail = _split(name)
        hits = [i for i, f in enumerate(elems) if f.name and f.name == head]
        if hits and tail in AXES:
            wanted.append((hits[0], AXES[tail]))
            where.append(k)
            continue
        j = _joint(cm, head) if head is not None else None
        if j is not None and tail in WRENCH:
            c = WRENCH[tail]
            if kind is None:
                from flexmb.dynamics.elements.joint_law import FREE
                from flexmb.dynamics.elements.joints import law_data

                kind, free = law_data(cm).kind, FREE
            if kind[j, c] != free:
                raise ModelError(f"state_space: input {name!r}: component {tail} of joint {head!r} is held by the "
                                 f"joint (or a drive); an actuator acts along a free component (a revolute about z: "
                                 f"'{head}:mz', a prismatic along z: '{head}:fz')")
            Bz[:, k] = lin.reactions.MQ[:, 6 * j + c].toarray().ravel()
            continue
        raise ModelError(f"state_space: unknown input {name!r}; use {_known(lin)}")
    if wanted:
        Bz[:, where] = _load_columns(lin, wanted)
    return Bz


def _point_rows(lin, body: str, point, quantity: str, Lm):
    """``(Oz, Ow) (nv,)`` of a rigid body point's displacement or velocity component."""
    cm = lin.equilibrium.pencil.cm
    model = lin.equilibrium.model
    names = [x.name for x in model.bodies]
    b = names.index(body) if body in names else -1
    if b < 0:
        raise ModelError(f"state_space: output {(body, point, quantity)!r}: unknown body {body!r}; bodies: "
                         f"{', '.join(x.name for x in model.bodies)}")
    src = model.bodies[b]
    if not hasattr(src, "com") or hasattr(src, "data"):
        raise ModelError(f"state_space: output point of {body!r}: points are outputs of rigid bodies; for a flexible "
                         f"body use its coordinates ('{body}:q1', ...) or a rigid body welded to it")
    if quantity not in POINT:
        raise ModelError(f"state_space: output {(body, point, quantity)!r}: quantity {quantity!r}; use one of "
                         f"{', '.join(POINT)}")
    c, vel = POINT[quantity]
    R = np.asarray(src.orientation, float)
    r = R @ (np.asarray(point, float).reshape(3) - np.asarray(src.com, float))  # from the centre of mass
    grp = cm.groups[cm.group_of[b]]
    cols = grp.vel_cols[list(grp.bodies).index(b)]
    S = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
    row = np.zeros(cm.nv)
    row[cols[:3]] = np.eye(3)[c]
    row[cols[3:6]] = -S[c]
    if not vel:
        return row, np.zeros(cm.nv)
    om = lin.velocities[cols[3:6]]
    Wx = np.array([[0, -om[2], om[1]], [om[2], 0, -om[0]], [-om[1], om[0], 0]])
    Oz = Lm.T @ row  # w = z' + L z
    Oz[cols[3:6]] += -(Wx @ S)[c]  # omega x (dtheta x r)
    return Oz, row


def state_space(lin, inputs, outputs):
    """``(A, B, C, D)`` of ``x' = A x + B u``, ``y = C x + D u``, ``x = (xi, xi')`` (module docstring);
    :class:`~flexmb.errors.ModelError` for an unknown name or an actuator on a held component."""
    if isinstance(inputs, str) or isinstance(outputs, str) or isinstance(outputs, tuple) and len(outputs) == 3 \
            and isinstance(outputs[0], str) and not isinstance(outputs[1], str):
        raise ModelError("state_space: inputs and outputs are lists of names (a single one: ['bob:x'] or "
                         "[('bob', (0, 0, 0), 'x')])")
    inputs, outputs = list(inputs), list(outputs)
    n = lin.ndof
    Z = lin.Z
    Zd = lin.basis_rates[0] if lin.basis_rates is not None else np.zeros_like(Z)
    A = lin.state_matrix()
    Bz = input_columns(lin, inputs)
    B = np.vstack([np.zeros((n, len(inputs))), np.linalg.solve(lin.Mr, Z.T @ Bz)])
    pen = lin.equilibrium.pencil
    Lm = lin.Lw
    Oz = np.zeros((len(outputs), Z.shape[0]))
    Ow = np.zeros_like(Oz)
    D = np.zeros((len(outputs), len(inputs)))
    mu = None
    for k, name in enumerate(outputs):
        if isinstance(name, tuple):
            if len(name) != 3:
                raise ModelError(f"state_space: output {name!r}; a point output is (body, point, quantity)")
            Oz[k], Ow[k] = _point_rows(lin, *name, Lm)
            continue
        if isinstance(name, str) and name.rstrip("'") in lin.coordinates:
            (Ow if name.endswith("'") else Oz)[k, lin.coordinates.index(name.rstrip("'"))] = 1.0
            continue
        head, tail = _split(name)
        j = _joint(pen.cm, head) if head is not None else None
        if j is None or tail not in WRENCH:
            raise ModelError(f"state_space: unknown output {name!r}; use {_known(lin)}")
        if mu is None:
            mu = _multipliers(lin)
        e = 6 * j + WRENCH[tail]
        P = lin.reactions
        Nre = P.Nr[e].toarray().ravel() @ mu  # (nv,) row of Nr Sm
        Oz[k] = Nre @ lin.K + P.Pz[e].toarray().ravel() + (P.Pw[e] @ Lm).toarray().ravel()
        Ow[k] = Nre @ lin.C + P.Pw[e].toarray().ravel()
        D[k] = -Nre @ Bz
    C = np.hstack([Oz @ Z + Ow @ Zd, Ow @ Z])
    return A, B, C, D


def _multipliers(lin) -> NDArray:
    """``Sm (nc, nv)`` of ``mu = Sm (C z' + K z - B u)`` (module docstring; least norm when the
    constraints are redundant)."""
    M = lin.M.toarray()
    W = lin.W.toarray()
    G = lin.G.toarray()
    try:
        MiW = np.linalg.solve(M, W)
        MiI = np.linalg.inv(M)
    except np.linalg.LinAlgError:
        raise ModelError("state_space: the mass matrix in the bodies' coordinates is singular; reaction outputs "
                         "need mass and inertia in every direction of every body") from None
    return np.linalg.pinv(G @ MiW) @ (G @ MiI)
