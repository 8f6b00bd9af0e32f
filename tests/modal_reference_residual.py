"""Rows and analytic Jacobian of the modal flexible bodies (:mod:`.modal`), batched over the
bodies and internal points of the group.  The equations are listed in :mod:`.modal`.

Each internal point's own derivatives are collected in one dense block ``(slots, slots)`` per body
and point (the pattern is built once, so the explicit zeros cost memory only); the couplings
between internal points (the ``D`` matrix of the time element) are separate blocks.
"""
from __future__ import annotations

import numpy as np

from flexmb import rotations as rot
from modal_reference_matrices import elastic_force, spin_products

I3 = np.eye(3)
#: key of the node velocities (nv,) in ``ElementStart.extra``, set by the marching driver
NODE_VELOCITY = "node_velocity"  # flexmb.dynamics.bodies.modal_residual.NODE_VELOCITY


def modal_residual(grp, ek, kin, r, trip, gravity) -> None:
    lay, te, h, p, n = ek.lay, ek.te, ek.h, ek.te.p, grp.n
    st = ek.st
    nm, N, S = grp.nm, grp.N, grp.slots
    BX, BTH, BQ, BPI, BW = grp.BX, grp.BTH, grp.BQ, grp.BPI, grp.BW
    X, TH, Q, PI, W, R, T = kin.X, kin.TH, kin.Q, kin.PI, kin.W, kin.R, kin.T
    v, om, qd = W[..., :3], W[..., 3:6], W[..., 6:]
    D0, D = te.D[:, 0], te.D[:, 1:]
    Ti = rot.tangent_inv(TH)
    x1, pi1, q1 = st.x[grp.bodies], st.pi[grp.vel_cols], grp.node_q(st)
    Rt = np.swapaxes(R, -1, -2)
    Rb = grp._rb(R)
    Rbt = np.swapaxes(Rb, -1, -2)
    Wb = np.einsum("bpji,bpj->bpi", Rb, W)
    M, Pb, A, gk, dgk = grp.mm.terms(Q, Wb)
    # linear elastic force collocated; the cubic and quartic part integrated along the element with
    # the 2p-point Gauss rule (flexmb.dynamics.bodies.modal_residual.force_points)
    fel, Kt = elastic_force(Q, grp.K, None, None)
    if grp.G is not None:
        from flexmb.dynamics.bodies.modal_residual import force_points

        Ef, Wf = force_points(te)
        q1 = grp.node_q(st)
        qf = Ef[None, :, 0, None] * q1[:, None] + np.einsum("mj,bjd->bmd", Ef[:, 1:], Q)
        fnl, Ktnl = elastic_force(qf, 0.0 * grp.K, grp.G, grp.H)
        fel = fel + np.einsum("im,bmd->bid", Wf, fnl)
        Cq = h * np.einsum("im,mj,bmkl->bijkl", Wf, Ef[:, 1:], Ktnl)  # (n, p_i, p_j, nm, nm)
        bq, iq, jq = np.broadcast_arrays(grp.bodies[:, None, None], np.arange(p)[None, :, None],
                                         np.arange(p)[None, None, :])
        trip.add(lay.body(bq, iq, grp.BPI + 6, nm), lay.body(bq, jq, grp.BQ, nm), Cq)
    fq = gk - fel - np.einsum("bmn,bpn->bpm", grp.C, qd)
    Jl = np.zeros((n, p, S, S))
    if grp.Kg is not None:
        Om = np.einsum("bpji,bpj->bpi", R, om)
        s, ds = spin_products(Om)
        Ks = np.einsum("bpc,bcmn->bpmn", s, grp.Kg)
        Kq = np.einsum("bcmn,bpn->bpmc", grp.Kg, Q)
        KgQ = np.einsum("bpmc,bpcd->bpmd", Kq, ds)  # d(Ks q)/dOmega (n,p,nm,3)
        fq -= np.einsum("bpmn,bpn->bpm", Ks, Q)
        Jl[..., BPI + 6:BPI + N, BQ:BQ + nm] += h * Ks
        Jl[..., BPI + 6:BPI + N, BW + 3:BW + 6] += h * KgQ @ Rt
        Jl[..., BPI + 6:BPI + N, BTH:BTH + 3] += h * KgQ @ Rt @ rot.skew(om) @ T

    # ---- rows
    r[..., BX:BX + 3] = D0[None, :, None] * x1[:, None] + np.einsum("ij,bjd->bid", D, X) - h * v
    r[..., BTH:BTH + 3] = np.einsum("ij,bjd->bid", D, TH) - h * np.einsum("bide,bie->bid", Ti, om)
    r[..., BQ:BQ + nm] = D0[None, :, None] * q1[:, None] + np.einsum("ij,bjd->bid", D, Q) - h * qd
    rp = D0[None, :, None] * pi1[:, None] + np.einsum("ij,bjd->bid", D, PI)
    rp[..., 3:6] += h * rot.cross(v, PI[..., :3])
    rp[..., 6:] -= h * fq
    if np.any(gravity):
        m = grp.mass[:, None, None]
        Sq = grp.S0[:, None] + np.einsum("bdk,bpk->bpd", grp.S1, Q)
        RS = np.einsum("bpde,bpe->bpd", R, Sq)
        rp[..., :3] -= h * m * gravity
        rp[..., 3:6] -= h * rot.cross(RS, np.broadcast_to(gravity, RS.shape))
        rp[..., 6:] -= h * np.einsum("bdk,bped,e->bpk", grp.S1, R, gravity)
        Sg = rot.skew(np.asarray(gravity, float))
        Jl[..., BPI + 3:BPI + 6, BTH:BTH + 3] += -h * Sg @ rot.skew(RS) @ T
        Jl[..., BPI + 3:BPI + 6, BQ:BQ + nm] += h * Sg @ R @ grp.S1[:, None]
        Jl[..., BPI + 6:BPI + N, BTH:BTH + 3] += -h * np.swapaxes(grp.S1[:, None], -1, -2) @ Rt @ Sg @ T
    r[..., BPI:BPI + N] = rp
    P = np.einsum("bpij,bpj->bpi", Rb, Pb)
    r[..., BW:BW + N] = P - PI

    # ---- local Jacobian blocks
    Jl[..., BX:BX + 3, BW:BW + 3] = -h * I3
    Jl[..., BTH:BTH + 3, BTH:BTH + 3] = -h * rot.d_tangent_inv(TH, om)
    Jl[..., BTH:BTH + 3, BW + 3:BW + 6] = -h * Ti
    Jl[..., BQ:BQ + nm, BW + 6:BW + N] = -h * np.eye(nm)
    Jl[..., BPI + 3:BPI + 6, BPI:BPI + 3] += h * rot.skew(v)
    Jl[..., BPI + 3:BPI + 6, BW:BW + 3] += -h * rot.skew(PI[..., :3])
    # dWb/dpsi (n,p,N,3)
    dWb = np.zeros((n, p, N, 3))
    dWb[..., :3, :] = Rt @ rot.skew(v)
    dWb[..., 3:6, :] = Rt @ rot.skew(om)
    At = np.swapaxes(A, -1, -2)  # (n,p,nm,N) = dgk/dWb
    Jl[..., BPI + 6:BPI + N, BW:BW + N] += -h * At @ Rbt
    Jl[..., BPI + 6:BPI + N, BW + 6:BW + N] += h * grp.C[:, None]
    Jl[..., BPI + 6:BPI + N, BTH:BTH + 3] += -h * At @ dWb @ T
    Jl[..., BPI + 6:BPI + N, BQ:BQ + nm] += -h * dgk + h * Kt
    # constitutive law
    Jl[..., BW:BW + N, BW:BW + N] = Rb @ M @ Rbt
    Jl[..., BW:BW + N, BQ:BQ + nm] = Rb @ A
    dP = Rb @ M @ dWb
    dP[..., :3, :] -= rot.skew(P[..., :3])
    dP[..., 3:6, :] -= rot.skew(P[..., 3:6])
    Jl[..., BW:BW + N, BTH:BTH + 3] = dP @ T
    Jl[..., BW:BW + N, BPI:BPI + N] = -np.eye(N)
    if grp.Ka is not None:
        acceleration_preloads(grp, ek, kin, r, trip, gravity, Jl)

    bi, ip = np.meshgrid(grp.bodies, np.arange(p), indexing="ij")
    loc = lay.body(bi, ip, 0, S)
    trip.add(loc, loc, Jl)
    # couplings between internal points
    b = grp.bodies[:, None, None]
    bb, ii, jj = np.broadcast_arrays(b, np.arange(p)[None, :, None], np.arange(p)[None, None, :])
    Dij = np.broadcast_to(D[None], (n, p, p))
    for slot, k in ((BX, 3), (BTH, 3), (BQ, nm), (BPI, N)):
        if k:
            trip.add(lay.body(bb, ii, slot, k), lay.body(bb, jj, slot, k), Dij[..., None, None] * np.eye(k))



def frame_acceleration(grp, ek, kin, gravity):
    """Frame accelerations at the internal points, body axes: ``s = (a_O - g, alpha)`` (n, p, 6).

    The derivative of the element's frame-velocity polynomial, the same differentiation as for the
    positions: ``h (v', omega')_i = D_i0 w1 + sum_j D_ij w_j``, with the node velocity ``w1`` the
    projected one of the marching driver (``st.extra[NODE_VELOCITY]``: it satisfies the velocity
    constraints; the velocity from the raw node momenta ``Rb Mb(q1)^-1 Rb^T p1`` does not exactly,
    and its difference from the internal velocities over h made a spurious zig-zag acceleration:
    0.9 rad/s^2 on the constant-spin X5 strip, shifting its frequency by 4.5e-4), else the raw one.
    Also returns the world-axes ``(v' - g, omega')`` for the Jacobian.
    """
    st, h = ek.st, ek.h
    D0, D = ek.te.D[:, 0], ek.te.D[:, 1:]
    w_node = st.extra.get(NODE_VELOCITY)
    if w_node is not None:  # the projected node velocity (consistent with the constraints)
        w1 = w_node[grp.vel_cols][:, :6]
    else:  # raw node momenta: may violate the velocity constraints by O(h^k)
        w1 = grp.velocities(st, st.pi[grp.vel_cols])[:, :6]
    acc = (D0[None, :, None] * w1[:, None] + np.einsum("ij,bjd->bid", D, kin.W[..., :6])) / h
    acc[..., :3] -= np.asarray(gravity, float)
    s = np.concatenate([np.einsum("bpji,bpj->bpi", kin.R, acc[..., :3]),
                        np.einsum("bpji,bpj->bpi", kin.R, acc[..., 3:])], axis=-1)
    return s, acc


def acceleration_preloads(grp, ek, kin, r, trip, gravity, Jl) -> None:
    """Preload stiffness of the frame accelerations, ``K_a = sum_c s_c Ka[c]`` with
    ``s = (a_O - g, alpha)`` in body axes (:func:`frame_acceleration`), added to the modal rows
    (``+ h K_a q``) with its Jacobian: the local blocks into ``Jl``, the couplings between internal
    points (through ``D``) into ``trip``.
    """
    lay, te, h, p = ek.lay, ek.te, ek.h, ek.te.p
    nm, N = grp.nm, grp.N
    BTH, BQ, BPI, BW = grp.BTH, grp.BQ, grp.BPI, grp.BW
    R, T, Q = kin.R, kin.T, kin.Q
    Rt = np.swapaxes(R, -1, -2)
    s, acc = frame_acceleration(grp, ek, kin, gravity)
    Ks = np.einsum("bpc,bcmn->bpmn", s, grp.Ka)
    rows = slice(BPI + 6, BPI + N)
    r[..., rows] += h * np.einsum("bpmn,bpn->bpm", Ks, Q)
    Jl[..., rows, BQ:BQ + nm] += h * Ks
    C = h * np.einsum("bcmn,bpn->bpmc", grp.Ka, Q)  # d(h K_a q)/ds (n,p,nm,6)
    # s = blockdiag(R^T, R^T) acc: rotation of the point itself
    Jl[..., rows, BTH:BTH + 3] += (C[..., :3] @ Rt @ rot.skew(acc[..., :3]) + C[..., 3:] @ Rt @ rot.skew(acc[..., 3:])) @ T
    # acc_i = (... + sum_j D_ij w_j) / h: couplings to every internal point's frame velocity
    CB = np.concatenate([C[..., :3] @ Rt, C[..., 3:] @ Rt], axis=-1)  # (n,p,nm,6)
    D = te.D[:, 1:]
    blk = np.einsum("bimc,ij->bijmc", CB, D / h)
    b = grp.bodies[:, None, None]
    bb, ii, jj = np.broadcast_arrays(b, np.arange(p)[None, :, None], np.arange(p)[None, None, :])
    trip.add(lay.body(bb, ii, BPI + 6, nm), lay.body(bb, jj, BW, 6), blk)
