"""The fused evaluator's joints: rows and Jacobian values of every joint of a rigid-only model, and the
multipliers onto the bodies, in one compiled call (glue only, like :mod:`.fused_kernels`: the values come
from :mod:`flexmb.dynamics.elements.joint_law` and the rigid attachment kernels; the blocks are written
in the order of :func:`flexmb.dynamics.elements.joints.joint_residual`)."""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.elements import joint_law
from flexmb.dynamics.kernels import jit_kernel, put, put_chain  # (jit_kernel: the kernels' compilation, cache, no fastmath)
from flexmb.dynamics.solve.fused_kernels import put_scatter, side_pose, side_scatter, side_velocity
from flexmb.dynamics.solve.fused_modal import part_pose, part_scatter, part_velocity, positions_in


@jit_kernel
def joints(h, p, te_t, X, R, T, UX, UR, UT, Ug, bsl, bs, slots, sa, sb, mp, mkin, jt, Jv, sl, r, res, jac, buf, o):
    """Every joint row into ``r (nj, p, 30)``, the multipliers (and the consistent transport moments)
    onto the bodies' constitutive rows of ``res``, and (``jac``) the Jacobian values into ``buf`` from
    offset ``o``; returns the next offset.

    ``te_t = (E, D, A, Dh)`` (``A = D[:, 1:]^-1``), ``X``, ``R``, ``T`` the rigid group's positions,
    rotations and tangent operators at the Gauss points, ``UX``, ``UR``, ``UT`` at the constraint
    points, ``Ug`` its unknowns (first slots ``bsl``; ``bs`` the bodies' first unknown), ``sa``, ``sb``
    the sides' ground and rigid entries (:mod:`.fused_kernels`), ``mp = (ma, mb, ab_rm, ab_mr, ab_mm)``
    their modal parts (:mod:`.fused_modal`) and the entries on bodies of both sides per pair of body
    types (A rigid and B modal, ...: positions in A's and in B's part), ``mkin`` the modal group's
    kinematics (:func:`.fused_modal.modal_body`), ``jt`` the joints' start values and laws
    (:class:`flexmb.dynamics.solve.fused.FusedEvaluator`), ``Jv (nj, p, 30)`` their unknowns, ``sl`` the
    first slots ``(JS, JPHI, JLAM, JQ, JNA, JNB)``."""
    E, D, Ainv, Dh = te_t
    (s1, lam1, Rr, acc, tgt, kk, cd, ref, kind, jh, mh, jf, mf, kf, jd, md, dpa, dpb, ju, ab_a, ab_b,
     consistent) = jt
    nj = Jv.shape[0]
    BX, BW = bsl[0], bsl[3]
    JS, JPHI, JLAM, JQ, JNA, JNB = sl[0], sl[1], sl[2], sl[3], sl[4], sl[5]
    ma, mb, ab_rm, ab_mr, ab_mm = mp
    mXc, mR, mT, mQc, mUX, mUR, mUT, mUQ = mkin[0], mkin[1], mkin[2], mkin[3], mkin[4], mkin[5], mkin[6], mkin[7]
    on_ma, on_mb = ma[0].size > 0, mb[0].size > 0
    z = np.empty((0, p, 6, 6))  # (the blocks of an empty modal part)
    xca, Rca, Jca = side_pose(sa, UX, UR, UT, E, np.bool_(True), nj, p)
    Jcam = part_pose(ma, mUX, mUR, mUT, mUQ, E, np.bool_(True), xca, Rca) if on_ma else z
    xcb, Rcb, Jcb = side_pose(sb, UX, UR, UT, E, np.bool_(True), nj, p)
    Jcbm = part_pose(mb, mUX, mUR, mUT, mUQ, E, np.bool_(True), xcb, Rcb) if on_mb else z
    xga, Rga, Jga = side_pose(sa, X, R, T, E, np.bool_(False), nj, p)
    Jgam = part_pose(ma, mXc, mR, mT, mQc, E, np.bool_(False), xga, Rga) if on_ma else z
    xgb, _Rgb, Jgb = side_pose(sb, X, R, T, E, np.bool_(False), nj, p)
    Jgbm = part_pose(mb, mXc, mR, mT, mQc, E, np.bool_(False), xgb, _Rgb) if on_mb else z
    nua, Jna = side_velocity(sa, Ug, BW, R, T, nj, p)
    Jnam = part_velocity(ma, mkin, nua) if on_ma else z
    nub, Jnb = side_velocity(sb, Ug, BW, R, T, nj, p)
    Jnbm = part_velocity(mb, mkin, nub) if on_mb else z
    Rrt, US, UPHI = np.empty((nj, p, 3, 3)), np.empty((nj, p, 3)), np.empty((nj, p, 3))
    q = nj if jac else 0
    dphi, dA, dB, dpsi = np.empty((q, p, 3, 3)), np.empty((q, p, 6, 6)), np.empty((q, p, 6, 6)), np.empty((q, p, 6, 6))
    joint_law.joint_rows(E, D, h, s1, lam1, Rr, Jv, xca, Rca, xcb, Rcb, Rga, nua, nub, sl, r, Rrt, US, UPHI,
                         dphi, dA, dB, dpsi, jac)
    qd = nj if (jac and jd.size) else 0
    law_nu, law_dA, law_dB = np.zeros((qd, p, 6, 12)), np.zeros((qd, p, 6, 6)), np.zeros((qd, p, 6, 6))
    uni = np.empty((nj if (jac and ju.size) else 0, p, 9))
    joint_law.law_rows(Jv, sl, US, UPHI, Rrt, Rr, acc, tgt, xga, Rga, xgb, kk, cd, ref, kind, r, jac,
                       law_nu, law_dA, law_dB, uni)
    # the multipliers onto the bodies: +lambda on b, the side-A wrench on a
    L = Jv[:, :, JLAM:JLAM + 6].copy()
    wa = np.empty((nj, p, 6))
    dW_lam, dW_xb = np.empty((q, p, 6, 6)), np.empty((q, p, 6, 6))
    joint_law.side_a_wrench(L, xga, xgb, wa, dW_lam, dW_xb, jac)
    BTb, ownb = side_scatter(res, sb, R, T, L, bs, slots, BW, -1.0)
    BTbm, dbm, dvbm = part_scatter(res, mb, mkin, h, L, -1.0) if on_mb else (z, z, z)
    BTa, owna = side_scatter(res, sa, R, T, wa, bs, slots, BW, -1.0)
    BTam, dam, dvam = part_scatter(res, ma, mkin, h, wa, -1.0) if on_ma else (z, z, z)
    sel_a, sel_b, msel_a, msel_b = sa[0], sb[0], ma[0], mb[0]
    all_a, all_b = np.arange(sel_a.size), np.arange(sel_b.size)
    mall_a, mall_b = np.arange(msel_a.size), np.arange(msel_b.size)
    if jac:
        # 1. relative kinematics / s, / phi (all internal points), / the poses at the constraint points
        for j in range(nj):
            for k in range(p):
                for c in range(p):
                    for a in range(3):
                        for b in range(3):
                            buf[o] = -E[k, c + 1] if a == b else 0.0
                            o += 1
        for j in range(nj):
            for k in range(p):
                for c in range(p):
                    for a in range(3):
                        for b in range(3):
                            buf[o] = E[k, c + 1] * dphi[j, k, a, b]
                            o += 1
        o = put_chain(buf, o, dA, sel_a, all_a, Jca, 1.0)
        o = put_chain(buf, o, dA, msel_a, mall_a, Jcam, 1.0)
        o = put_chain(buf, o, dB, sel_b, all_b, Jcb, 1.0)
        o = put_chain(buf, o, dB, msel_b, mall_b, Jcbm, 1.0)
        # 2. multiplier definition
        for j in range(nj):
            for k in range(p):
                for c in range(p):
                    for a in range(6):
                        for b in range(6):
                            buf[o] = D[k, c + 1] if a == b else 0.0
                            o += 1
        sNB, sL, bdR = np.empty((nj, p, 3, 3)), np.empty((nj, p, 3, 3)), np.empty((nj, p, 6, 6))
        joint_law.multiplier_blocks(h, Jv, sl, Rga, sNB, bdR, sL)
        o = put(buf, o, sNB, 1.0)
        o = put(buf, o, bdR, 1.0)
        o = put(buf, o, sL, 1.0)
        o = put_chain(buf, o, dpsi, sel_a, all_a, Jga, 1.0)
        o = put_chain(buf, o, dpsi, msel_a, mall_a, Jgam, 1.0)
        # 3. attachment velocities: identity and -J
        for c in range(nj * p * 6):
            buf[o + c] = 1.0
        o += nj * p * 6
        o = put(buf, o, Jna, -1.0)
        o = put(buf, o, Jnam, -1.0)
        for c in range(nj * p * 6):
            buf[o + c] = 1.0
        o += nj * p * 6
        o = put(buf, o, Jnb, -1.0)
        o = put(buf, o, Jnbm, -1.0)
        # 4. law rows
        for z in range(jh.size):
            for k in range(p):
                for c in range(p):
                    buf[o] = E[k, c + 1]
                    o += 1
        for c in range(jf.size * p):
            buf[o + c] = 1.0
        o += jf.size * p
        for z in range(jf.size):
            for k in range(p):
                buf[o] = kf[z]
                o += 1
        if jd.size:
            for z in range(jd.size):
                for k in range(p):
                    for e in range(12):
                        buf[o] = law_nu[jd[z], k, md[z], e]
                        o += 1
            mdpa, mdpb = positions_in(msel_a, jd), positions_in(msel_b, jd)
            if dpa.size:
                o = put_chain(buf, o, law_dA, sel_a[dpa], dpa, Jga, 1.0)
            if mdpa.size:
                o = put_chain(buf, o, law_dA, msel_a[mdpa], mdpa, Jgam, 1.0)
            if dpb.size:
                o = put_chain(buf, o, law_dB, sel_b[dpb], dpb, Jgb, 1.0)
            if mdpb.size:
                o = put_chain(buf, o, law_dB, msel_b[mdpb], mdpb, Jgbm, 1.0)
        for z in range(ju.size):
            for k in range(p):
                for c in range(p):
                    for e in range(3):
                        buf[o] = E[k, c + 1] * uni[ju[z], k, e]
                        o += 1
        for z in range(ju.size):
            for k in range(p):
                for e in range(3):
                    buf[o] = uni[ju[z], k, 3 + e]
                    o += 1
        for z in range(ju.size):
            for k in range(p):
                for e in range(3):
                    buf[o] = uni[ju[z], k, 6 + e]
                    o += 1
        # 5. the multipliers onto the bodies
        none = np.empty((0, p, 6, 6))
        if sel_b.size:
            if sb[6]:
                o = put(buf, o, ownb, -1.0)
            o = put(buf, o, BTb, -1.0)
        if msel_b.size:  # a modal body's own blocks: / (theta, q), / (w, theta, q) (the map's rate)
            o = put(buf, o, dbm, -1.0)
            o = put(buf, o, dvbm, -1.0)
            o = put(buf, o, BTbm, -1.0)
        if sel_a.size:
            if sa[6]:
                o = put(buf, o, owna, -1.0)
            o = put_scatter(buf, o, -1.0, BTa, all_a, dW_lam, sel_a, 1.0, none, all_a)
            if ab_a.size:
                o = put_scatter(buf, o, -1.0, BTa, ab_a, dW_xb, sel_a[ab_a], 1.0, Jgb, ab_b)
            if ab_rm[0].size:
                o = put_scatter(buf, o, -1.0, BTa, ab_rm[0], dW_xb, sel_a[ab_rm[0]], 1.0, Jgbm, ab_rm[1])
            o = put_scatter(buf, o, -1.0, BTa, all_a, dW_xb, sel_a, -1.0, Jga, all_a)
        if msel_a.size:
            o = put(buf, o, dam, -1.0)
            o = put(buf, o, dvam, -1.0)
            o = put_scatter(buf, o, -1.0, BTam, mall_a, dW_lam, msel_a, 1.0, none, mall_a)
            if ab_mr[0].size:
                o = put_scatter(buf, o, -1.0, BTam, ab_mr[0], dW_xb, msel_a[ab_mr[0]], 1.0, Jgb, ab_mr[1])
            if ab_mm[0].size:
                o = put_scatter(buf, o, -1.0, BTam, ab_mm[0], dW_xb, msel_a[ab_mm[0]], 1.0, Jgbm, ab_mm[1])
            o = put_scatter(buf, o, -1.0, BTam, mall_a, dW_xb, msel_a, -1.0, Jgam, mall_a)
    if consistent:
        o = _transport(h, p, Ainv, Dh, sb, 1.0, all_b, all_b, X, Ug, BW, BX, bs, slots, Jv, JLAM, JNB, xgb, Jgb,
                       res, jac, buf, o)
        o = _transport(h, p, Ainv, Dh, sa, -1.0, ab_a, ab_b, X, Ug, BW, BX, bs, slots, Jv, JLAM, JNB, xgb, Jgb,
                       res, jac, buf, o)
    return o


@jit_kernel
def _transport(h, p, Ainv, Dh, side, sign, on_b, b_pos, X, Ug, BW, BX, bs, slots, Jv, JLAM, JNB, xgb, Jgb,
               res, jac, buf, o):
    """The consistent transport moment of one side (``joints._transport_moment``): ``-mu`` on the moment
    rows of the constitutive law of the side's bodies, and the blocks / lambda_f, / v_B, / the body's
    v, / the body's x, then / the pose of B (``on_b``, ``b_pos``: the side's entries on a body of B,
    their positions in this side's and in B's list)."""
    sel, loc = side[0], side[1]
    m = sel.size
    if m == 0:
        return o
    f, r, rd = np.empty((m, p, 3)), np.empty((m, p, 3)), np.empty((m, p, 3))
    for z in range(m):
        j, b = sel[z], loc[z]
        for i in range(p):
            for a in range(3):
                f[z, i, a] = sign * Jv[j, i, JLAM + a]
                r[z, i, a] = xgb[j, i, a] - X[b, i, a]
                rd[z, i, a] = Jv[j, i, JNB + a] - Ug[b, i, BW + a]
    mu, Df = np.empty((m, p, 3)), np.empty((m, p, 3))
    sh = (m, p, p, 3, 3) if jac else (0, 0, 0, 3, 3)
    d_f, d_r, d_rd = np.empty(sh), np.empty(sh), np.empty(sh)
    joint_law.transport_moment(Ainv, Dh, h, f, r, rd, mu, Df, d_f, d_r, d_rd, jac)
    for z in range(m):
        for i in range(p):
            row = bs[loc[z]] + i * slots + BW + 3
            for a in range(3):
                res[row + a] += -mu[z, i, a]
    if not jac:
        return o
    o = put(buf, o, d_f, -sign)
    o = put(buf, o, d_rd, -1.0)
    o = put(buf, o, d_rd, 1.0)
    o = put(buf, o, d_r, 1.0)
    nc = Jgb.shape[3]
    for z in range(on_b.size):
        q, q2 = on_b[z], b_pos[z]
        for j in range(p):
            for k in range(p):
                for a in range(3):
                    for e in range(nc):
                        s = 0.0
                        for b in range(3):
                            s += -d_r[q, j, k, a, b] * Jgb[q2, k, b, e]
                        buf[o] = s
                        o += 1
    return o
