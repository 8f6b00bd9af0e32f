"""Force elements: point forces and torques (constant, ``f(t)`` or state callbacks) and linear
spring-dampers, batched by type, acting on bodies through attachments
(:mod:`flexmb.dynamics.elements.attachments`).  Gravity is a body-type term (each body type knows its mass
distribution).

Each element computes a wrench at its attachment point (force; moment about that point;
inertial) and scatters it onto the momentum balance of its body (``-h Q``) with the analytic
Jacobian; user callbacks of the body state are differentiated by central finite differences (the
only place flexmb does so).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from flexmb import rotations as rot
from flexmb.dynamics.elements import force_law
from flexmb.dynamics.elements.attachments import AttachmentSet, ElementKin
from flexmb.dynamics.layout import Triplets
from flexmb.errors import ModelError
from flexmb.model.checks import UserFunction, required_positional

I3 = np.eye(3)


def is_state_callback(f) -> bool:
    """``f(t, state)`` rather than ``f(t)``: decided once when the model is built (only required
    positional parameters count, so ``lambda t, k=2: ...`` is a function of time)."""
    if isinstance(f, UserFunction):
        return f.takes_state
    return required_positional(f) == 2


def _user_value(fn, owner: str, *args) -> np.ndarray:
    """Call a user function and check its result: a finite 3-vector (a :class:`UserFunction`, as the
    model wraps them, checks its own results and names the element)."""
    if isinstance(fn, UserFunction):
        return np.asarray(fn(*args), dtype=float).reshape(3)
    try:
        val = np.asarray(fn(*args), dtype=float)
    except Exception as exc:  # the user's error, named and chained
        raise ModelError(f"{owner}: the user function raised {type(exc).__name__}: {exc}") from exc
    if val.shape != (3,):
        try:
            val = val.reshape(3)
        except ValueError:
            raise ModelError(f"{owner}: the user function returned shape {val.shape}; it must return 3 numbers") from None
    if not np.all(np.isfinite(val)):
        raise ModelError(f"{owner}: the user function returned {val.tolist()} at t = {args[0]:.6g}; it must be finite")
    return val


def _body_point(cm, body_name, point) -> tuple[int, np.ndarray, str | None]:
    """Body index, attachment point and site; ``(flexible body, interface)`` attaches at the
    interface's point (the given point is not used)."""
    b = cm.model.body_index(body_name)
    if isinstance(body_name, tuple):
        return b, np.asarray(cm.model.bodies[b].interface(body_name[1]).position, dtype=float), body_name[1]
    return (cm.nb if b < 0 else b), np.asarray(point, dtype=float), None


def compile_forces(cm, point_forces, point_torques, springs, st0) -> SimpleNamespace:
    """Attachment sets and data of the force elements of a compiled model; ``st0`` is the initial
    node configuration (free lengths of spring-dampers given as None are measured there)."""
    out = SimpleNamespace(loads=[], springs=None)
    # point loads: constant/time functions and state callbacks alike
    loads = [(f, "force", f.force, f.point) for f in point_forces] + [(t, "torque", t.torque, None) for t in point_torques]
    for elem, kind, value, point in loads:
        b = cm.model.body_index(elem.body)
        if b < 0:
            raise ModelError(f"{type(elem).__name__} on the ground has no effect; give a body name")
        body = cm.model.bodies[b]
        where = np.asarray(point, dtype=float) if point is not None else np.asarray(body.com, dtype=float)
        site = None
        if isinstance(elem.body, tuple):
            _, where, site = _body_point(cm, elem.body, where)
        att = AttachmentSet(cm, [b], where[None], site=None if site is None else [site])
        ref = AttachmentSet(cm, [b], np.asarray(body.com, dtype=float)[None])
        callback = callable(value) and is_state_callback(value)
        owner = f"{type(elem).__name__} on {elem.body!r}"
        out.loads.append(SimpleNamespace(att=att, ref=ref, kind=kind, value=value, frame=elem.frame,
                                         callback=callback, timefn=callable(value) and not callback, owner=owner))
    if springs:
        ia = [_body_point(cm, s.body_a, s.point_a) for s in springs]
        ib = [_body_point(cm, s.body_b, s.point_b) for s in springs]
        sites = any(z is not None for _, _, z in ia + ib)
        att_a = AttachmentSet(cm, [b for b, _, _ in ia], np.array([q for _, q, _ in ia]),
                              site=[z for _, _, z in ia] if sites else None)
        att_b = AttachmentSet(cm, [b for b, _, _ in ib], np.array([q for _, q, _ in ib]),
                              site=[z for _, _, z in ib] if sites else None)
        d0 = np.linalg.norm(att_b.node_pose(cm, st0)[0] - att_a.node_pose(cm, st0)[0], axis=1)
        L0 = np.array([np.nan if s.free_length is None else s.free_length for s in springs], dtype=float)
        out.springs = SimpleNamespace(a=att_a, b=att_b, k=np.array([s.stiffness for s in springs], dtype=float),
                                      c=np.array([s.damping for s in springs], dtype=float),
                                      L0=np.ascontiguousarray(np.where(np.isnan(L0), d0, L0)))
    return out


def load_values(ld, t_gauss: np.ndarray) -> np.ndarray:
    """Values ``(p, 3)`` at the Gauss times ``t_gauss`` of a point load that is a constant or a function
    of time (user functions are called here, in Python, once per evaluation or element; the kernels
    read the values)."""
    if ld.timefn:
        return np.stack([_user_value(ld.value, ld.owner, t) for t in t_gauss])
    return np.ascontiguousarray(np.broadcast_to(np.asarray(ld.value, dtype=float), (t_gauss.size, 3)))


def force_residual(cm, ek: ElementKin, res: np.ndarray, trip: Triplets) -> None:
    """Add every force element's generalized force and Jacobian to the bodies' momentum rows (the force
    laws: :mod:`flexmb.dynamics.elements.force_law`).  Jacobian blocks in this order (the fused
    evaluator writes the same for force elements on rigid bodies): per point load, the scatter's own blocks, then
    (body frame) / the attachment's pose; then the spring-dampers, side B then side A, each / the
    poses of B and A, then / their velocities."""
    for ld in cm.forces.loads:
        wrench, terms = load_wrench(ek, ld, trip.jacobian)
        ld.att.scatter(ek, res, trip, wrench, "force", terms)
    if cm.forces.springs is not None:
        _springs(ek, res, trip, cm.forces.springs)


def load_wrench(ek: ElementKin, ld, jacobian: bool = True):
    """The wrench ``(1, p, 6)`` of the point load ``ld`` at its attachment point at the Gauss points
    (force [N]; moment about that point [N m]; inertial components) and its dependence on the unknowns
    (``terms`` of :meth:`AttachmentSet.scatter`; empty when ``jacobian`` is False): the one evaluation
    of a load (a body-frame load through :func:`flexmb.dynamics.elements.force_law.body_frame_load`),
    used by the residual and by the energy audit (:mod:`flexmb.dynamics.energy_audit`)."""
    if ld.callback:
        return _callback_load(ek, ld, jacobian)
    p = ek.te.p
    vals = load_values(ld, ek.t_gauss)
    k0 = 0 if ld.kind == "force" else 3
    if ld.frame == "body":
        P = ld.att.pose(ek, "gauss")
        wrench, dW = np.empty((1, p, 6)), np.empty((1, p, 6, 6) if jacobian else (0, 0, 6, 6))
        force_law.body_frame_load(np.ascontiguousarray(P.R), vals, k0, wrench, dW, jacobian)
        return wrench, [(P.jac, dW)] if jacobian else []
    wrench = np.zeros((1, p, 6))
    wrench[0, :, k0:k0 + 3] = vals
    return wrench, []


def _callback_load(ek: ElementKin, ld, jacobian: bool = True):
    """A user callback ``fn(t, state)`` of the body's reference point (position, rotation, velocity,
    angular velocity): its wrench as :func:`load_wrench`, with the Jacobian by central differences in
    that state, chained through the reference point's pose and velocity."""
    p = ek.te.p
    P = ld.ref.pose(ek, "gauss")
    V = ld.ref.velocity(ek)

    def load(i, z):
        R = rot.exp(z[3:6]) @ P.R[0, i]
        state = SimpleNamespace(position=z[:3], rotation=R, velocity=z[6:9], angular_velocity=z[9:12])
        val = _user_value(ld.value, ld.owner, ek.t_gauss[i], state)
        return R @ val if ld.frame == "body" else val

    vals = np.zeros((1, p, 3))
    dz = np.zeros((1, p, 3, 12))
    for i in range(p):
        z0 = np.concatenate([P.x[0, i], np.zeros(3), V.nu[0, i]])
        vals[0, i] = load(i, z0)
        if not jacobian:  # residual only: no differences
            continue
        for k in range(12):
            eps = 1e-7 * max(1.0, abs(z0[k]))
            zp, zm = z0.copy(), z0.copy()
            zp[k] += eps
            zm[k] -= eps
            dz[0, i, :, k] = (load(i, zp) - load(i, zm)) / (2 * eps)
    k0 = 0 if ld.kind == "force" else 3
    wrench = np.zeros((1, p, 6))
    wrench[..., k0:k0 + 3] = vals
    if not jacobian:
        return wrench, []
    dWp = np.zeros((1, p, 6, 6))
    dWv = np.zeros((1, p, 6, 6))
    dWp[..., k0:k0 + 3, :] = dz[..., :6]
    dWv[..., k0:k0 + 3, :] = dz[..., 6:]
    return wrench, [(P.jac, dWp), (V.jac, dWv)]


def spring_kinematics(ek: ElementKin, S):
    """Poses and velocities of the spring-dampers' ends at the Gauss points and the derived
    ``d = x_b - x_a``, length ``L``, unit vector ``e``, ``vrel = v_b - v_a`` and ``Ldot (n, p, 1)``,
    for the energy audit's damping power (the force law itself:
    :func:`flexmb.dynamics.elements.force_law.spring_damper`)."""
    Pa, Pb = S.a.pose(ek, "gauss"), S.b.pose(ek, "gauss")
    Va, Vb = S.a.velocity(ek), S.b.velocity(ek)
    d = Pb.x - Pa.x
    L = np.maximum(np.linalg.norm(d, axis=-1, keepdims=True), 1e-300)
    e = d / L
    vrel = Vb.nu[..., :3] - Va.nu[..., :3]
    Ldot = np.einsum("sid,sid->si", e, vrel)[..., None]
    return SimpleNamespace(Pa=Pa, Pb=Pb, Va=Va, Vb=Vb, d=d, L=L, e=e, vrel=vrel, Ldot=Ldot)


def _springs(ek: ElementKin, res, trip, S) -> None:
    """The spring-dampers (:func:`flexmb.dynamics.elements.force_law.spring_damper`): ``Fb`` on B, ``-Fb``
    on A, both at the attachment points."""
    Pa, Pb = S.a.pose(ek, "gauss"), S.b.pose(ek, "gauss")
    Va, Vb = S.a.velocity(ek), S.b.velocity(ek)
    jac = trip.jacobian
    c = np.ascontiguousarray
    d = c(Pb.x - Pa.x)
    vrel = c(Vb.nu[..., :3] - Va.nu[..., :3])
    n, p = d.shape[:2]
    Fb = np.empty((n, p, 3))
    shape = (n, p, 6, 6) if jac else (0, 0, 6, 6)
    dx, dv = np.empty(shape), np.empty(shape)
    force_law.spring_damper(d, vrel, S.k, S.c, S.L0, Fb, dx, dv, jac)
    Wb = np.concatenate([Fb, np.zeros((n, p, 3))], axis=-1)
    if not jac:
        S.b.scatter(ek, res, trip, Wb, "force")
        S.a.scatter(ek, res, trip, -Wb, "force")
        return
    S.b.scatter(ek, res, trip, Wb, "force", [(Pb.jac, dx), (Pa.jac, -dx), (Vb.jac, dv), (Va.jac, -dv)])
    S.a.scatter(ek, res, trip, -Wb, "force", [(Pb.jac, -dx), (Pa.jac, dx), (Vb.jac, -dv), (Va.jac, dv)])


def potential_energy(cm, st) -> float:
    """Potential energy at a time node [J]: gravity (zero at the origin), spring-dampers and the joint
    springs ``k (q_c - q_ref)^2 / 2`` on the free components (revolute torsional and prismatic
    springs: the same law as the joint rows, ``joints.py``; ``q = (s, acc)`` of the node state)."""
    V = 0  # (the sums in the order of ``sum``: ((0 + V_1) + V_2) ..., strain energies summed apart)
    strain = 0
    for grp in cm.groups:
        V = V + grp.gravity_potential(st, cm.gravity)
        if hasattr(grp, "strain_energy"):
            strain = strain + grp.strain_energy(st)
    V += strain
    if cm.nj and np.count_nonzero(cm.jnt_k):  # (any(): ~5 us on a float array)
        q = np.concatenate([st.s, st.acc], axis=1)
        V += float(np.sum(0.5 * cm.jnt_k * (q - cm.jnt_ref) ** 2))
    S = cm.forces.springs
    if S is not None:
        L = np.linalg.norm(S.b.node_pose(cm, st)[0] - S.a.node_pose(cm, st)[0], axis=1)
        V += float(np.sum(0.5 * S.k * (L - S.L0) ** 2))
    return float(V)
