"""Joint elements: relative kinematics, multipliers and constitutive laws, batched over joints.

A joint connects attachment frame A (on body a) to frame B (on body b).  Its unknowns at each
internal point are the relative coordinates ``q = (s, phi)``, the multipliers ``lambda`` (at the
origin of B, inertial components), the reaction ``Qbar`` (frame A) and the attachment-point
velocities ``nu_a``, ``nu_b``.  Rows, for joint ``j`` and internal point ``i`` (``k`` indexes the
constraint points ``tau_c``)::

    Rrel_s   = R_A(tau_k)^T (x_B - x_A)(tau_k) - u_s(tau_k)                 position level
    Rrel_phi = axial( (Rr1 exp(u_phi(tau_k)))^T R_A^T R_B (tau_k) )          position level
    Rlam     = D_i0 lam1 + sum_j D_ij Lam_j - h [R_A Qbar_i - S(v_B,i) Lam_i] multiplier definition
    Rc       = u_c(tau_k) - target_c(t_k)              constrained component c (held or driven)
             = Qbar_c,i + k (q_c,i - q_ref) + c qdot_c,i   free component c (ideal: k = c = 0)
    Rnu_a    = nu_a,i - (v_a + omega_a x r_a, omega_a)_i
    Rnu_b    = nu_b,i - (v_b + omega_b x r_b, omega_b)_i

with ``S(v) lam = (0, v x lam_f)``.  The bodies receive the multipliers transported to their
centres of mass (``+lambda`` on b, ``-lambda`` on a), which is the only way joints act on bodies.
"""
from __future__ import annotations

import numpy as np

from flexmb import rotations as rot
from flexmb.dynamics.kinematics import Kin
from flexmb.dynamics.layout import BPI, BTH, BW, BX, JLAM, JNA, JNB, JPHI, JQ, JS, JOINT_SLOTS, Layout, Triplets
from flexmb.dynamics.system import CompiledModel, ElementStart

I3 = np.eye(3)
EY = np.array([0.0, 1.0, 0.0])
EX = np.array([1.0, 0.0, 0.0])


def _bd(A):
    """blockdiag(A, A) for A (...,3,3)."""
    out = np.zeros(A.shape[:-2] + (6, 6))
    out[..., :3, :3] = A
    out[..., 3:, 3:] = A
    return out


def drive_targets(cm: CompiledModel, t: np.ndarray):
    """``(nj,6,len(t))`` drive values and rates; zeros where not driven."""
    f = np.zeros((cm.nj, 6, t.size))
    df = np.zeros((cm.nj, 6, t.size))
    for (j, c, fn, dfn) in cm.jnt_drives:
        f[j, c] = np.broadcast_to(np.asarray(fn(t), dtype=float), t.shape)
        df[j, c] = np.broadcast_to(np.asarray(dfn(t), dtype=float), t.shape)
    return f, df


def joint_residual(cm: CompiledModel, lay: Layout, kin: Kin, st: ElementStart, res: np.ndarray, trip: Triplets) -> None:
    nb, nj, p, h, te = cm.nb, cm.nj, kin.te.p, kin.h, kin.te
    if nj == 0:
        return
    r = res[lay.joint_off:].reshape(nj, p, JOINT_SLOTS)
    rb_view = res[: lay.joint_off].reshape(nb, p, -1)
    ja, jb = cm.jnt_a, cm.jnt_b
    ga = ja < nb  # side a is a body
    gb = jb < nb
    jn = np.arange(nj)
    J2, I2 = np.meshgrid(jn, np.arange(p), indexing="ij")  # (nj,p)
    # expansion over (joint, k, j') for polynomial couplings
    J3 = np.broadcast_to(jn[:, None, None], (nj, p, p))
    K3 = np.broadcast_to(np.arange(p)[None, :, None], (nj, p, p))
    P3 = np.broadcast_to(np.arange(p)[None, None, :], (nj, p, p))
    Ecoef = np.broadcast_to(te.E[None, :, 1:], (nj, p, p))
    Dcoef = np.broadcast_to(te.D[None, :, 1:], (nj, p, p))

    # ------------------------------------------------------------------ relative kinematics
    URa, URb = kin.UR[ja], kin.UR[jb]
    RA = URa @ cm.jnt_Aa[:, None]
    RB = URb @ cm.jnt_Ab[:, None]
    ra = np.einsum("jkde,je->jkd", URa, cm.jnt_ca)
    rbv = np.einsum("jkde,je->jkd", URb, cm.jnt_cb)
    d = (kin.UX[jb] + rbv) - (kin.UX[ja] + ra)
    RAt = np.swapaxes(RA, -1, -2)
    r[..., JS:JS + 3] = np.einsum("jkde,jke->jkd", RAt, d) - kin.US
    expU = rot.exp(kin.UPHI)
    Rrt = st.Rr[:, None] @ expU
    Mrel = np.swapaxes(Rrt, -1, -2) @ RAt
    Emat = Mrel @ RB
    r[..., JPHI:JPHI + 3] = rot.axial(Emat)
    DL = rot.d_axial_left(Emat)

    # Jacobian: / joint s and phi at all internal points
    trip.add(lay.joint(J3, K3, JS, 3), lay.joint(J3, P3, JS, 3), -Ecoef[..., None, None] * I3)
    dphi = DL @ (-np.swapaxes(rot.tangent(kin.UPHI), -1, -2))  # (nj,p,3,3)
    trip.add(lay.joint(J3, K3, JPHI, 3), lay.joint(J3, P3, JPHI, 3), Ecoef[..., None, None] * dphi[:, :, None])
    # / body a (x, theta) and body b
    UTa, UTb = kin.UT[ja], kin.UT[jb]
    blocks_a = (
        (JS, BX, -RAt),
        (JS, BTH, RAt @ rot.skew(d + ra) @ UTa),
        (JPHI, BTH, DL @ (-Mrel) @ UTa),
    )
    blocks_b = (
        (JS, BX, RAt),
        (JS, BTH, -RAt @ rot.skew(rbv) @ UTb),
        (JPHI, BTH, DL @ Mrel @ UTb),
    )
    for blocks, mask, bidx in ((blocks_a, ga, ja), (blocks_b, gb, jb)):
        if not mask.any():
            continue
        Jm, Km, Pm = J3[mask], K3[mask], P3[mask]
        Bm = np.broadcast_to(bidx[:, None, None], (nj, p, p))[mask]
        Em = Ecoef[mask]
        for rslot, cslot, val in blocks:
            trip.add(lay.joint(Jm, Km, rslot, 3), lay.body(Bm, Pm, cslot, 3), Em[..., None, None] * val[mask][:, :, None])

    # ------------------------------------------------------------------ multipliers
    Ra_g = kin.R[ja] @ cm.jnt_Aa[:, None]  # frame A at Gauss points (nj,p,3,3)
    Qin = np.concatenate([np.einsum("jide,jie->jid", Ra_g, kin.Q[..., :3]),
                          np.einsum("jide,jie->jid", Ra_g, kin.Q[..., 3:])], axis=-1)
    vQ = kin.NB[..., :3]
    Lf = kin.LAM[..., :3]
    S_lam = np.concatenate([np.zeros_like(vQ), rot.cross(vQ, Lf)], axis=-1)
    r[..., JLAM:JLAM + 6] = (te.D[None, :, 0, None] * st.lam[:, None] + np.einsum("ij,njd->nid", te.D[:, 1:], kin.LAM)
                             - h * (Qin - S_lam))
    trip.add(lay.joint(J3, K3, JLAM, 6), lay.joint(J3, P3, JLAM, 6), Dcoef[..., None, None] * np.eye(6))
    trip.add(lay.joint(J2, I2, JLAM + 3, 3), lay.joint(J2, I2, JLAM, 3), h * rot.skew(vQ))
    trip.add(lay.joint(J2, I2, JLAM, 6), lay.joint(J2, I2, JQ, 6), -h * _bd(Ra_g))
    trip.add(lay.joint(J2, I2, JLAM + 3, 3), lay.joint(J2, I2, JNB, 3), -h * rot.skew(Lf))
    if ga.any():
        Ta = kin.T[ja]
        val = np.concatenate([h * rot.skew(Qin[..., :3]) @ Ta, h * rot.skew(Qin[..., 3:]) @ Ta], axis=-2)
        trip.add(lay.joint(J2[ga], I2[ga], JLAM, 6), lay.body(np.broadcast_to(ja[:, None], (nj, p))[ga], I2[ga], BTH, 3), val[ga])

    # ------------------------------------------------------------------ attachment velocities
    for slot, side, c_loc, mask in ((JNA, ja, cm.jnt_ca, ga), (JNB, jb, cm.jnt_cb, gb)):
        Wv = kin.W[side]
        rr = np.einsum("jide,je->jid", kin.R[side], c_loc)
        nu_body = np.concatenate([Wv[..., :3] + rot.cross(Wv[..., 3:], rr), Wv[..., 3:]], axis=-1)
        nu = kin.NA if slot == JNA else kin.NB
        r[..., slot:slot + 6] = nu - nu_body
        trip.add_diag(lay.joint(J2, I2, slot, 6), lay.joint(J2, I2, slot, 6), 1.0)
        if mask.any():
            Bm = np.broadcast_to(side[:, None], (nj, p))[mask]
            Jm, Im = J2[mask], I2[mask]
            trip.add_diag(lay.joint(Jm, Im, slot, 3), lay.body(Bm, Im, BW, 3), -1.0)
            trip.add(lay.joint(Jm, Im, slot, 3), lay.body(Bm, Im, BW + 3, 3), rot.skew(rr[mask]))
            trip.add_diag(lay.joint(Jm, Im, slot + 3, 3), lay.body(Bm, Im, BW + 3, 3), -1.0)
            trip.add(lay.joint(Jm, Im, slot, 3), lay.body(Bm, Im, BTH, 3),
                     rot.skew(Wv[mask][..., 3:]) @ rot.skew(rr[mask]) @ kin.T[side][mask])

    # ------------------------------------------------------------------ constitutive laws
    cons = cm.jnt_constrained
    uq = np.concatenate([kin.US, kin.UPHI], axis=-1)  # (nj,p,6) at constraint points
    tgt, _ = drive_targets(cm, kin.t_cons)
    acc6 = np.concatenate([np.zeros((nj, 3)), st.acc], axis=1)  # accumulated part of q
    uq_total = uq + acc6[:, None, :]
    rc_cons = uq_total - np.swapaxes(tgt, 1, 2)
    # free laws at Gauss points
    q_g = np.concatenate([kin.S, kin.PHI], axis=-1) + acc6[:, None, :]
    # relative velocities in frame A from nu (Gauss points)
    xa_g = kin.X[ja] + np.einsum("jide,je->jid", kin.R[ja], cm.jnt_ca)
    xb_g = kin.X[jb] + np.einsum("jide,je->jid", kin.R[jb], cm.jnt_cb)
    dg = xb_g - xa_g
    urel = kin.NB[..., :3] - kin.NA[..., :3] - rot.cross(kin.NA[..., 3:], dg)
    Rat_g = np.swapaxes(Ra_g, -1, -2)
    sdot = np.einsum("jide,jie->jid", Rat_g, urel)
    wrel = np.einsum("jide,jie->jid", Rat_g, kin.NB[..., 3:] - kin.NA[..., 3:])
    qdot = np.concatenate([sdot, wrel], axis=-1)
    kk = cm.jnt_k[:, None, :]
    cc = cm.jnt_c[:, None, :]
    rc_free = kin.Q + kk * (q_g - cm.jnt_ref[:, None, :]) + cc * qdot
    consb = np.broadcast_to(cons[:, None, :], (nj, p, 6))
    rc = np.where(consb, rc_cons, rc_free)

    # universal joints: cross condition on comp 5, moment along y_B free on comp 4
    univ = cm.jnt_universal
    if univ.any():
        u = np.where(univ)[0]
        Rr_c = Rrt[u]
        rc[u, :, 5] = Rr_c[..., 0, 1]
        Rr_g = st.Rr[u][:, None] @ rot.exp(kin.PHI[u])
        yB = Rr_g @ EY
        rc[u, :, 4] = np.einsum("jid,jid->ji", kin.Q[u][..., 3:], yB)
    r[..., JQ:JQ + 6] = rc

    # Jacobian of the constitutive rows
    jc, cc_idx = np.nonzero(cons & ~univ[:, None])
    if jc.size:
        # constrained: u_c(tau_k) depends on q_c at all internal points through E
        Jc = np.broadcast_to(jc[:, None, None], (jc.size, p, p))
        Kc = np.broadcast_to(np.arange(p)[None, :, None], Jc.shape)
        Pc = np.broadcast_to(np.arange(p)[None, None, :], Jc.shape)
        rows = (lay.joint(Jc, Kc, JQ, 1)[..., 0] + cc_idx[:, None, None])[..., None]
        cols = (lay.joint(Jc, Pc, JS, 1)[..., 0] + cc_idx[:, None, None])[..., None]
        trip.add(rows, cols, np.broadcast_to(te.E[None, :, 1:], Jc.shape)[..., None, None])
    # universal constrained comps 0..2 and comp 5
    if univ.any():
        ju = np.where(univ)[0]
        for c in range(3):
            Jc = np.broadcast_to(ju[:, None, None], (ju.size, p, p))
            Kc = np.broadcast_to(np.arange(p)[None, :, None], Jc.shape)
            Pc = np.broadcast_to(np.arange(p)[None, None, :], Jc.shape)
            rows = (lay.joint(Jc, Kc, JQ + c, 1))
            cols = (lay.joint(Jc, Pc, JS + c, 1))
            trip.add(rows, cols, np.broadcast_to(te.E[None, :, 1:], Jc.shape)[..., None, None])
        # comp 5: g = ex . Rr ey, dg/dphi = -(Rr^T ex)^T skew(ey) T(phi)^T
        Rr_c = Rrt[ju]
        gphi = -np.einsum("jkd,de,jkef->jkf", np.swapaxes(Rr_c, -1, -2) @ EX, rot.skew(EY),
                          np.swapaxes(rot.tangent(kin.UPHI[ju]), -1, -2))
        Jc = np.broadcast_to(ju[:, None, None], (ju.size, p, p))
        Kc = np.broadcast_to(np.arange(p)[None, :, None], Jc.shape)
        Pc = np.broadcast_to(np.arange(p)[None, None, :], Jc.shape)
        trip.add(lay.joint(Jc, Kc, JQ + 5, 1), lay.joint(Jc, Pc, JPHI, 3),
                 te.E[None, :, 1:, None, None] * gphi[:, :, None, None, :])
        # comp 4: Qm . (Rr_i ey): / Qm and / phi_i
        Rr_g = st.Rr[ju][:, None] @ rot.exp(kin.PHI[ju])
        Ju, Iu = J2[ju], I2[ju]
        trip.add(lay.joint(Ju, Iu, JQ + 4, 1), lay.joint(Ju, Iu, JQ + 3, 3), (Rr_g @ EY)[..., None, :])
        qm = kin.Q[ju][..., 3:]
        dphi4 = -np.einsum("jid,jide,ef,jifg->jig", qm, Rr_g, rot.skew(EY),
                           np.swapaxes(rot.tangent(kin.PHI[ju]), -1, -2))
        trip.add(lay.joint(Ju, Iu, JQ + 4, 1), lay.joint(Ju, Iu, JPHI, 3), dphi4[..., None, :])
        # comp 3: plain free (Q_3 = 0)
        trip.add_diag(lay.joint(Ju, Iu, JQ + 3, 1), lay.joint(Ju, Iu, JQ + 3, 1), 1.0)
    # free components (non-universal): Qbar_c + k q_c + c qdot_c
    jf, cf = np.nonzero(~cons & ~univ[:, None])
    if jf.size:
        Jf = np.broadcast_to(jf[:, None], (jf.size, p))
        If = np.broadcast_to(np.arange(p)[None, :], Jf.shape)
        row = lay.joint(Jf, If, JQ, 1)[..., 0] + cf[:, None]
        trip.add_diag(row, lay.joint(Jf, If, JQ, 1)[..., 0] + cf[:, None], 1.0)
        trip.add_diag(row, lay.joint(Jf, If, JS, 1)[..., 0] + cf[:, None], cm.jnt_k[jf, cf][:, None])
        damp = cm.jnt_c[jf, cf] != 0
        if damp.any():
            _damping_jacobian(cm, lay, kin, trip, jf[damp], cf[damp], row[damp], Ra_g, Rat_g, urel, dg, p)


def _damping_jacobian(cm, lay, kin, trip, jf, cf, row, Ra_g, Rat_g, urel, dg, p):
    """Jacobian of ``c * qdot_c`` for damped free components (qdot from nu, frame A)."""
    nb = cm.nb
    cval = cm.jnt_c[jf, cf]
    Jf = np.broadcast_to(jf[:, None], (jf.size, p))
    If = np.broadcast_to(np.arange(p)[None, :], Jf.shape)
    ja, jb = cm.jnt_a[jf], cm.jnt_b[jf]
    rot_c = cf >= 3
    ccomp = np.where(rot_c, cf - 3, cf)
    RtA = Rat_g[jf]  # (n,p,3,3)
    e_row = RtA[np.arange(jf.size)[:, None], If, ccomp[:, None]]  # (n,p,3) row of R_A^T
    scale = cval[:, None, None]
    # rotational: wrel = R_A^T (om_b - om_a) ; translational: sdot = R_A^T (v_b - v_a - om_a x d)
    row_ = row[..., None]
    trip.add(row_, lay.joint(Jf, If, JNB + 3 * 0, 3), np.where(rot_c[:, None, None], 0.0, scale * e_row)[..., None, :])
    trip.add(row_, lay.joint(Jf, If, JNA, 3), np.where(rot_c[:, None, None], 0.0, -scale * e_row)[..., None, :])
    trip.add(row_, lay.joint(Jf, If, JNB + 3, 3), np.where(rot_c[:, None, None], scale * e_row, 0.0)[..., None, :])
    om_a = kin.NA[jf][..., 3:]
    d_jf = dg[jf]
    # d/d om_a of -(om_a x d) = skew(d)
    val_oma = np.where(rot_c[:, None, None], -scale * e_row, scale * np.einsum("nid,nide->nie", e_row, rot.skew(d_jf)))
    trip.add(row_, lay.joint(Jf, If, JNA + 3, 3), val_oma[..., None, :])
    # dependence on frame A orientation: delta(R_A^T u) = R_A^T skew(u) eps_a
    ga = ja < nb
    if ga.any():
        u_vec = np.where(rot_c[:, None, None], kin.NB[jf][..., 3:] - kin.NA[jf][..., 3:], urel[jf])
        val = scale * np.einsum("nid,nide->nie", e_row, rot.skew(u_vec))
        val = np.einsum("nie,nief->nif", val, kin.T[ja])
        Ba = np.broadcast_to(ja[:, None], Jf.shape)
        trip.add(row_[ga], lay.body(Ba[ga], If[ga], BTH, 3), val[ga][..., None, :])
    # translational: dependence through d = x_B - x_A : d(-om_a x d)/dd = -skew(om_a)
    tr = ~rot_c
    if tr.any():
        dd = -scale * np.einsum("nid,nide->nie", e_row, rot.skew(om_a))  # d sdot_c / d d
        for side, c_loc, sign in ((cm.jnt_b[jf], cm.jnt_cb[jf], 1.0), (cm.jnt_a[jf], cm.jnt_ca[jf], -1.0)):
            m = tr & (side < nb)
            if not m.any():
                continue
            Bs = np.broadcast_to(side[:, None], Jf.shape)
            rr = np.einsum("nide,ne->nid", kin.R[side], c_loc)
            trip.add(row_[m], lay.body(Bs[m], If[m], BX, 3), (sign * dd)[m][..., None, :])
            vth = sign * np.einsum("nie,nief,nifg->nig", dd, -rot.skew(rr), kin.T[side])
            trip.add(row_[m], lay.body(Bs[m], If[m], BTH, 3), vth[m][..., None, :])


def multiplier_to_bodies(cm: CompiledModel, lay: Layout, kin: Kin, res: np.ndarray, trip: Triplets) -> None:
    """Add the joints' multipliers, transported to the centres of mass, to the bodies' rows Rw."""
    nb, nj, p = cm.nb, cm.nj, kin.te.p
    if nj == 0 or nb == 0:
        return
    rbody = res[: lay.joint_off].reshape(nb, p, -1)
    ja, jb = cm.jnt_a, cm.jnt_b
    J2, I2 = np.meshgrid(np.arange(nj), np.arange(p), indexing="ij")
    L = kin.LAM
    Lf = L[..., :3]
    rb = np.einsum("jide,je->jid", kin.R[jb], cm.jnt_cb)
    xQb = kin.X[jb] + rb
    # side b: -(Lf, Lm + rb x Lf)
    gb = jb < nb
    if gb.any():
        contrib = -np.concatenate([Lf, L[..., 3:] + rot.cross(rb, Lf)], axis=-1)
        np.add.at(rbody[..., 12:18], jb[gb], contrib[gb])
        Bb = np.broadcast_to(jb[:, None], (nj, p))[gb]
        blk = np.zeros((nj, p, 6, 6))
        blk[..., :3, :3] = -I3
        blk[..., 3:, 3:] = -I3
        blk[..., 3:, :3] = -rot.skew(rb)
        trip.add(lay.body(Bb, I2[gb], BW, 6), lay.joint(J2[gb], I2[gb], JLAM, 6), blk[gb])
        trip.add(lay.body(Bb, I2[gb], BW + 3, 3), lay.body(Bb, I2[gb], BTH, 3),
                 (-rot.skew(Lf) @ rot.skew(rb) @ kin.T[jb])[gb])
    ga = ja < nb
    if ga.any():
        lever = xQb - kin.X[ja]
        contrib = np.concatenate([Lf, L[..., 3:] + rot.cross(lever, Lf)], axis=-1)
        np.add.at(rbody[..., 12:18], ja[ga], contrib[ga])
        Ba = np.broadcast_to(ja[:, None], (nj, p))[ga]
        blk = np.zeros((nj, p, 6, 6))
        blk[..., :3, :3] = I3
        blk[..., 3:, 3:] = I3
        blk[..., 3:, :3] = rot.skew(lever)
        trip.add(lay.body(Ba, I2[ga], BW, 6), lay.joint(J2[ga], I2[ga], JLAM, 6), blk[ga])
        sL = rot.skew(Lf)
        trip.add(lay.body(Ba, I2[ga], BW + 3, 3), lay.body(Ba, I2[ga], BX, 3), sL[ga])
        m = ga & gb
        if m.any():
            Bb = np.broadcast_to(jb[:, None], (nj, p))[m]
            Ba_m = np.broadcast_to(ja[:, None], (nj, p))[m]
            trip.add(lay.body(Ba_m, I2[m], BW + 3, 3), lay.body(Bb, I2[m], BX, 3), -sL[m])
            trip.add(lay.body(Ba_m, I2[m], BW + 3, 3), lay.body(Bb, I2[m], BTH, 3), (sL @ rot.skew(rb) @ kin.T[jb])[m])


def joint_multipliers_at_nodes(cm: CompiledModel, x, R, lam) -> np.ndarray:
    """Multipliers transported to the bodies' centres of mass at a time node: ``(nb, 6)``."""
    nb = cm.nb
    out = np.zeros((nb, 6))
    if cm.nj == 0:
        return out
    from flexmb.dynamics.system import with_ground

    xg = with_ground(x, 0.0)
    Rg = with_ground(R, np.eye(3))
    ja, jb = cm.jnt_a, cm.jnt_b
    Lf = lam[:, :3]
    rb = np.einsum("jde,je->jd", Rg[jb], cm.jnt_cb)
    xQb = xg[jb] + rb
    cb = -np.concatenate([Lf, lam[:, 3:] + rot.cross(rb, Lf)], axis=1)
    ca = np.concatenate([Lf, lam[:, 3:] + rot.cross(xQb - xg[ja], Lf)], axis=1)
    gb, ga = jb < nb, ja < nb
    # Rw = M w - pi - Lambda; the rows above add -Lambda, i.e. Lambda_b = +(...), Lambda_a = -(...)
    np.add.at(out, jb[gb], -cb[gb])
    np.add.at(out, ja[ga], -ca[ga])
    return out
