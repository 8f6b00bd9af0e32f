"""Force elements: gravity, point forces and torques, linear spring-dampers, batched by type.

Each adds ``-h F_i`` to the momentum rows of the bodies it acts on (``F`` = force and moment about
the centre of mass, inertial components) with its analytic Jacobian; user callbacks of the body
state are differentiated by central finite differences (the only place flexmb does so).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from flexmb import rotations as rot
from flexmb.dynamics.kinematics import Kin
from flexmb.dynamics.layout import BPI, BTH, BW, BX, Layout, Triplets
from flexmb.dynamics.system import CompiledModel, ElementStart, with_ground

I3 = np.eye(3)


def _call(f, t, state=None):
    if state is None:
        try:
            return np.asarray(f(t), dtype=float)
        except TypeError:
            return None
    return np.asarray(f(t, state), dtype=float)


def _is_state_callback(f) -> bool:
    import inspect

    try:
        return len(inspect.signature(f).parameters) >= 2
    except (TypeError, ValueError):
        return False


def force_residual(cm: CompiledModel, lay: Layout, kin: Kin, st: ElementStart, res: np.ndarray, trip: Triplets) -> None:
    nb, p, h = cm.nb, kin.te.p, kin.h
    if nb == 0:
        return
    rb = res[: lay.joint_off].reshape(nb, p, -1)
    # gravity: constant, no Jacobian
    if np.any(cm.gravity):
        rb[..., BPI:BPI + 3] -= h * cm.body_mass[:, None, None] * cm.gravity
    bi_all = np.arange(nb)
    for pf in cm.point_forces:
        b = cm.model.body_index(pf.body)
        c = pf.point - cm.body_com[b]
        R = kin.R[b]  # (p,3,3)
        T = kin.T[b]
        r = R @ c
        if callable(pf.force) and _is_state_callback(pf.force):
            _callback_load(cm, lay, kin, trip, rb, b, c, pf.force, pf.frame, is_torque=False)
            continue
        fv = np.stack([_call(pf.force, t) for t in kin.t_gauss]) if callable(pf.force) else np.broadcast_to(pf.force, (p, 3))
        if pf.frame == "body":
            f_in = np.einsum("ide,ie->id", R, fv)
        else:
            f_in = np.array(fv, dtype=float)
        M = rot.cross(r, f_in)
        rb[b, :, BPI:BPI + 3] -= h * f_in
        rb[b, :, BPI + 3:BPI + 6] -= h * M
        ip = np.arange(p)
        bb = np.full(p, b)
        if pf.frame == "body":
            dF = -rot.skew(f_in) @ T
            dM = (rot.skew(f_in) @ rot.skew(r) - rot.skew(r) @ rot.skew(f_in)) @ T
            trip.add(lay.body(bb, ip, BPI, 3), lay.body(bb, ip, BTH, 3), -h * dF)
        else:
            dM = rot.skew(f_in) @ rot.skew(r) @ T
        trip.add(lay.body(bb, ip, BPI + 3, 3), lay.body(bb, ip, BTH, 3), -h * dM)
    for pt in cm.point_torques:
        b = cm.model.body_index(pt.body)
        R = kin.R[b]
        if callable(pt.torque) and _is_state_callback(pt.torque):
            _callback_load(cm, lay, kin, trip, rb, b, np.zeros(3), pt.torque, pt.frame, is_torque=True)
            continue
        tv = np.stack([_call(pt.torque, t) for t in kin.t_gauss]) if callable(pt.torque) else np.broadcast_to(pt.torque, (p, 3))
        t_in = np.einsum("ide,ie->id", R, tv) if pt.frame == "body" else np.array(tv, dtype=float)
        rb[b, :, BPI + 3:BPI + 6] -= h * t_in
        if pt.frame == "body":
            ip = np.arange(p)
            bb = np.full(p, b)
            trip.add(lay.body(bb, ip, BPI + 3, 3), lay.body(bb, ip, BTH, 3), h * rot.skew(t_in) @ kin.T[b])
    if cm.springs["k"].size:
        _springs(cm, lay, kin, trip, rb, h, p)


def _callback_load(cm, lay, kin, trip, rb, b, c, fn, frame, is_torque):
    """A user callback ``fn(t, state)``; Jacobian by central differences in (x, theta, w)."""
    p, h = kin.te.p, kin.h
    R1 = kin.R[b]

    def load(i, x, th_inc, w):
        R = rot.exp(th_inc) @ R1[i]
        state = SimpleNamespace(position=x, rotation=R, velocity=w[:3], angular_velocity=w[3:])
        val = np.asarray(fn(kin.t_gauss[i], state), dtype=float).reshape(3)
        if frame == "body":
            val = R @ val
        if is_torque:
            return np.concatenate([np.zeros(3), val])
        return np.concatenate([val, rot.cross(R @ c, val)])

    for i in range(p):
        x0, w0 = kin.X[b, i], kin.W[b, i]
        F = load(i, x0, np.zeros(3), w0)
        rb[b, i, BPI:BPI + 6] -= h * F
        z0 = np.concatenate([x0, np.zeros(3), w0])
        Jz = np.zeros((6, 12))
        for k in range(12):
            eps = 1e-7 * max(1.0, abs(z0[k]))
            zp, zm = z0.copy(), z0.copy()
            zp[k] += eps
            zm[k] -= eps
            Jz[:, k] = (load(i, zp[:3], zp[3:6], zp[6:]) - load(i, zm[:3], zm[3:6], zm[6:])) / (2 * eps)
        # theta perturbation was a left increment eps = T dTheta
        Jth = Jz[:, 3:6] @ kin.T[b, i]
        bi, ii = np.array([b]), np.array([i])
        trip.add(lay.body(bi, ii, BPI, 6), lay.body(bi, ii, BX, 3), -h * Jz[None, :, :3])
        trip.add(lay.body(bi, ii, BPI, 6), lay.body(bi, ii, BTH, 3), -h * Jth[None])
        trip.add(lay.body(bi, ii, BPI, 6), lay.body(bi, ii, BW, 6), -h * Jz[None, :, 6:])


def _springs(cm, lay, kin, trip, rb, h, p):
    nb = cm.nb
    S = cm.springs
    a, b = S["a"], S["b"]
    ns = a.size
    Ra, Rb = kin.R[a], kin.R[b]  # (ns,p,3,3)
    ra = np.einsum("side,se->sid", Ra, S["pa"])
    rbv = np.einsum("side,se->sid", Rb, S["pb"])
    d = kin.X[b] + rbv - kin.X[a] - ra
    L = np.linalg.norm(d, axis=-1, keepdims=True)
    L = np.maximum(L, 1e-300)
    e = d / L
    Wa, Wb = kin.W[a], kin.W[b]
    vrel = Wb[..., :3] + rot.cross(Wb[..., 3:], rbv) - Wa[..., :3] - rot.cross(Wa[..., 3:], ra)
    Ldot = np.einsum("sid,sid->si", e, vrel)[..., None]
    k = S["k"][:, None, None]
    c = S["c"][:, None, None]
    L0 = cm.springs_L0[:, None, None]
    f = k * (L - L0) + c * Ldot
    Fb = -f * e
    Mb = rot.cross(rbv, Fb)
    Ma = rot.cross(ra, -Fb)
    gb, ga = b < nb, a < nb
    np.add.at(rb[..., BPI:BPI + 6], b[gb], -h * np.concatenate([Fb, Mb], axis=-1)[gb])
    np.add.at(rb[..., BPI:BPI + 6], a[ga], -h * np.concatenate([-Fb, Ma], axis=-1)[ga])
    # Jacobians of Fb w.r.t. d and vrel
    P = (np.eye(3) - e[..., :, None] * e[..., None, :]) / L[..., None]
    dFb_dd = -(e[..., :, None] * (k[..., None] * e[..., None, :] + c[..., None] * np.einsum("sid,side->sie", vrel, P)[..., None, :])
               + f[..., None] * P)
    dFb_dv = -c[..., None] * e[..., :, None] * e[..., None, :]
    Ta, Tb = kin.T[a], kin.T[b]
    sk = rot.skew
    # derivatives of d and vrel w.r.t. body unknowns (x, theta, v, omega) for side b (+) and a (-)
    sides = []
    for side, rr, W, T, sign, mask in ((b, rbv, Wb, Tb, 1.0, gb), (a, ra, Wa, Ta, -1.0, ga)):
        dd = {BX: sign * np.broadcast_to(I3, rr.shape + (3,)), BTH: -sign * sk(rr) @ T}
        dv = {BW: sign * np.broadcast_to(I3, rr.shape + (3,)), BW + 3: -sign * sk(rr),
              BTH: -sign * sk(W[..., 3:]) @ sk(rr) @ T}
        sides.append((side, rr, T, sign, mask, dd, dv))
    S_idx = np.broadcast_to(np.arange(p)[None, :], (ns, p))
    for (side_f, rr_f, T_f, sign_f, mask_f, _dd, _dv) in sides:  # body receiving the load
        if not mask_f.any():
            continue
        # generalized load on this body: (sign_f * Fb, rr_f x sign_f*Fb)
        for (side_z, rr_z, T_z, sign_z, mask_z, dd, dv) in sides:  # body whose unknowns vary
            m = mask_f & mask_z
            if not m.any():
                continue
            for slot in (BX, BTH, BW, BW + 3):
                dF = np.zeros((ns, p, 3, 3))
                if slot in dd:
                    dF = dF + dFb_dd @ dd[slot]
                if slot in dv:
                    dF = dF + dFb_dv @ dv[slot]
                dF = sign_f * dF
                dM = sk(rr_f) @ dF
                if slot == BTH and side_z is side_f:
                    # lever arm of this body rotates: d(rr x F) = skew(F) skew(rr) T
                    dM = dM + sk(sign_f * Fb) @ sk(rr_f) @ T_f
                blk = np.concatenate([dF, dM], axis=-2)
                Bf = np.broadcast_to(side_f[:, None], (ns, p))[m]
                Bz = np.broadcast_to(side_z[:, None], (ns, p))[m]
                trip.add(lay.body(Bf, S_idx[m], BPI, 6), lay.body(Bz, S_idx[m], slot, 3), -h * blk[m])


def potential_energy(cm: CompiledModel, x, R) -> float:
    """Potential energy of gravity and springs at a time node [J] (zero of gravity at the origin)."""
    V = -float(np.sum(cm.body_mass * (x @ cm.gravity)))
    if cm.springs["k"].size:
        S = cm.springs
        xg = with_ground(x, 0.0)
        Rg = with_ground(R, np.eye(3))
        d = xg[S["b"]] + np.einsum("sde,se->sd", Rg[S["b"]], S["pb"]) - xg[S["a"]] - np.einsum("sde,se->sd", Rg[S["a"]], S["pa"])
        L = np.linalg.norm(d, axis=1)
        V += float(np.sum(0.5 * S["k"] * (L - cm.springs_L0) ** 2))
    return V
