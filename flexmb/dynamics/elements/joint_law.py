"""The joint laws, compiled: the one implementation of every joint's residual rows and Jacobian values.

Every evaluation path calls these kernels: the general element evaluator
(:func:`flexmb.dynamics.elements.joints.joint_residual`, any body types: the attachment poses,
velocities and their Jacobian blocks arrive through the body-type contract as arrays), the fused
evaluator (:mod:`flexmb.dynamics.solve.fused`), and the node-level work (the
relative rates, the wrench of the rate multipliers, the multipliers as body momenta:
:mod:`flexmb.dynamics.node.projection`).  A joint law never knows the body type on either side.

Element rows of joint ``j`` at internal point ``i`` (``k`` indexes the constraint points ``tau_k``;
:mod:`flexmb.dynamics.elements.joints` lists them with their meaning)::

    Rrel_s   = R_A^T (x_B - x_A)(tau_k) - u_s(tau_k)
    Rrel_phi = axial( (Rr1 exp(u_phi(tau_k)))^T R_A^T R_B (tau_k) )
    Rlam     = D_i0 lam1 + sum_j D_ij Lam_j - h [R_A Qbar_i - S(v_B,i) Lam_i]
    Rnu_a    = nu_a,i - nu_a(body a);  Rnu_b likewise
    Rlaw_m   = u_m(tau_i) + acc_m - target_m(t_i)                     held (constrained, driven) m
             = Qbar_m,i + k_m (q_m,i + acc_m - ref_m) + c_m qdot_m,i   free m (spring, damper, ideal)
             = Qbar_m,i . (Rr1 exp(phi_i) e_y)                         universal, m = 4 (moment along y_B)
             = (Rr1 exp(u_phi(tau_i)))[0, 1]                           universal, m = 5 (the cross, x_A . y_B)

Component kinds (:func:`component_kinds`): :data:`HELD`, :data:`FREE`, :data:`UNIV_MOMENT`,
:data:`UNIV_CROSS`.  Compilation: :func:`flexmb.dynamics.kernels.jit_kernel` (``nopython``, no fastmath,
on-disk cache).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import exp_tangent, jit_kernel, scratch, scratch_zeros  # (jit_kernel: the kernels' compilation)

#: component kinds of the joint law rows
HELD, FREE, UNIV_MOMENT, UNIV_CROSS = 0, 1, 2, 3


def component_kinds(cons: NDArray, univ: NDArray) -> NDArray:
    """``(nj, 6)`` kinds of the law rows from the constrained mask ``cons (nj, 6)`` and the universal
    joints ``univ (nj,)``: held where constrained, free elsewhere, and on a universal joint the moment
    row (component 4) and the cross condition (component 5)."""
    kind = np.where(cons, HELD, FREE).astype(np.int64)
    kind[univ, 4] = UNIV_MOMENT
    kind[univ, 5] = UNIV_CROSS
    return kind


# ============================================================================ element rows
@jit_kernel
def joint_rows(E, D, h, s1, lam1, Rr, Jv, xa, Ra, xb, Rb, Rag, nua, nub, sl, r, Rrt, US, UPHI,
               dphi, dA, dB, dpsi, jac):
    """Joint rows common to every joint type, batched over joints and points: relative position and
    rotation at the constraint points, multiplier definition and attachment velocities at the Gauss
    points (module docstring).

    In: ``E``, ``D (p, p+1)``, ``h``; start values ``s1 (nj,3)``, ``lam1 (nj,6)``, ``Rr (nj,3,3)``;
    the joints' unknowns ``Jv (nj,p,30)``; attachment frames at the constraint points ``xa``, ``xb
    (nj,p,3)``, ``Ra``, ``Rb (nj,p,3,3)``; frame A at the Gauss points ``Rag``; attachment
    velocities ``nua``, ``nub (nj,p,6)``; ``sl = (JS, JPHI, JLAM, JQ, JNA, JNB)`` first slots.
    Out: rows ``r (nj,p,30)`` (all but the law rows), ``Rrt = Rr exp(u_phi)``, the relative
    coordinates' polynomials at the constraint points ``US``, ``UPHI (nj,p,3)``, and if ``jac``:
    ``dphi = d(r_phi)/d(u_phi)``, ``dA``, ``dB = d(r_s, r_phi)/d(dx, psi)`` of sides A and B,
    ``dpsi = d(r_lam)/d(psi_A)`` (the other blocks are constants or :func:`multiplier_blocks`).
    """
    nj, p = Jv.shape[0], Jv.shape[1]
    js, jphi, jlam, jq, jna, jnb = sl[0], sl[1], sl[2], sl[3], sl[4], sl[5]
    ex = scratch((3, 3))
    T = scratch((3, 3))
    M = scratch((3, 3))
    Em = scratch((3, 3))
    DL = scratch((3, 3))
    up = scratch(3)
    us = scratch(3)
    d = scratch(3)
    for j in range(nj):
        for k in range(p):
            # polynomials of s and phi at the constraint point k
            for c in range(3):
                a = E[k, 0] * s1[j, c]
                a2 = 0.0
                b = 0.0
                for q in range(p):
                    a += E[k, q + 1] * Jv[j, q, js + c]
                    a2 += E[k, q + 1] * Jv[j, q, js + c]
                    b += E[k, q + 1] * Jv[j, q, jphi + c]
                us[c] = a
                up[c] = b
                # (the law rows' polynomial summed from its internal values, as np.einsum does; the
                # relative position's from the start value: the same value up to round-off)
                US[j, k, c] = E[k, 0] * s1[j, c] + a2
                UPHI[j, k, c] = b
                d[c] = xb[j, k, c] - xa[j, k, c]
            # r_s = R_A^T (x_B - x_A) - u_s
            for c in range(3):
                r[j, k, js + c] = Ra[j, k, 0, c] * d[0] + Ra[j, k, 1, c] * d[1] + Ra[j, k, 2, c] * d[2] - us[c]
            exp_tangent(up, ex, T)
            for a in range(3):
                for b in range(3):
                    Rrt[j, k, a, b] = Rr[j, a, 0] * ex[0, b] + Rr[j, a, 1] * ex[1, b] + Rr[j, a, 2] * ex[2, b]
            # M = Rrt^T R_A^T, E = M R_B
            for a in range(3):
                for b in range(3):
                    M[a, b] = (Rrt[j, k, 0, a] * Ra[j, k, b, 0] + Rrt[j, k, 1, a] * Ra[j, k, b, 1]
                               + Rrt[j, k, 2, a] * Ra[j, k, b, 2])
            for a in range(3):
                for b in range(3):
                    Em[a, b] = M[a, 0] * Rb[j, k, 0, b] + M[a, 1] * Rb[j, k, 1, b] + M[a, 2] * Rb[j, k, 2, b]
            r[j, k, jphi] = 0.5 * (Em[2, 1] - Em[1, 2])
            r[j, k, jphi + 1] = 0.5 * (Em[0, 2] - Em[2, 0])
            r[j, k, jphi + 2] = 0.5 * (Em[1, 0] - Em[0, 1])
            if jac:
                tr = Em[0, 0] + Em[1, 1] + Em[2, 2]
                for a in range(3):
                    for b in range(3):
                        DL[a, b] = -0.5 * Em[a, b]
                    DL[a, a] += 0.5 * tr
                for a in range(3):
                    for b in range(3):
                        # DL (-T^T)
                        dphi[j, k, a, b] = -(DL[a, 0] * T[b, 0] + DL[a, 1] * T[b, 1] + DL[a, 2] * T[b, 2])
                        dml = DL[a, 0] * M[0, b] + DL[a, 1] * M[1, b] + DL[a, 2] * M[2, b]
                        dA[j, k, a, b] = -Ra[j, k, b, a]
                        dA[j, k, a, 3 + b] = 0.0
                        dA[j, k, 3 + a, b] = 0.0
                        dA[j, k, 3 + a, 3 + b] = -dml
                        dB[j, k, a, b] = Ra[j, k, b, a]
                        dB[j, k, a, 3 + b] = 0.0
                        dB[j, k, 3 + a, b] = 0.0
                        dB[j, k, 3 + a, 3 + b] = dml
                # R_A^T skew(d): column b of skew(d) is d x e_b
                for a in range(3):
                    ra0, ra1, ra2 = Ra[j, k, 0, a], Ra[j, k, 1, a], Ra[j, k, 2, a]
                    dA[j, k, a, 3] = ra1 * d[2] - ra2 * d[1]
                    dA[j, k, a, 4] = ra2 * d[0] - ra0 * d[2]
                    dA[j, k, a, 5] = ra0 * d[1] - ra1 * d[0]
        for i in range(p):
            u = Jv[j, i]
            # multiplier definition: D lam - h (R_A Qbar - (0, v_B x lam_f))
            for c in range(6):
                a = D[i, 0] * lam1[j, c]
                for q in range(p):
                    a += D[i, q + 1] * Jv[j, q, jlam + c]
                qin = Rag[j, i, c % 3, 0] * u[jq + 3 * (c // 3)] + Rag[j, i, c % 3, 1] * u[jq + 3 * (c // 3) + 1] \
                    + Rag[j, i, c % 3, 2] * u[jq + 3 * (c // 3) + 2]
                r[j, i, jlam + c] = a - h * qin
                up[c % 3] = qin
                if jac and c == 2:
                    for a2 in range(6):
                        for b2 in range(6):
                            dpsi[j, i, a2, b2] = 0.0
                    dpsi[j, i, 0, 4] = -h * up[2]
                    dpsi[j, i, 0, 5] = h * up[1]
                    dpsi[j, i, 1, 3] = h * up[2]
                    dpsi[j, i, 1, 5] = -h * up[0]
                    dpsi[j, i, 2, 3] = -h * up[1]
                    dpsi[j, i, 2, 4] = h * up[0]
                if jac and c == 5:
                    dpsi[j, i, 3, 4] = -h * up[2]
                    dpsi[j, i, 3, 5] = h * up[1]
                    dpsi[j, i, 4, 3] = h * up[2]
                    dpsi[j, i, 4, 5] = -h * up[0]
                    dpsi[j, i, 5, 3] = -h * up[1]
                    dpsi[j, i, 5, 4] = h * up[0]
            v0, v1, v2 = u[jnb], u[jnb + 1], u[jnb + 2]
            l0, l1, l2 = u[jlam], u[jlam + 1], u[jlam + 2]
            r[j, i, jlam + 3] += h * (v1 * l2 - v2 * l1)
            r[j, i, jlam + 4] += h * (v2 * l0 - v0 * l2)
            r[j, i, jlam + 5] += h * (v0 * l1 - v1 * l0)
            for c in range(6):
                r[j, i, jna + c] = u[jna + c] - nua[j, i, c]
                r[j, i, jnb + c] = u[jnb + c] - nub[j, i, c]


@jit_kernel
def multiplier_blocks(h, Jv, sl, GaR, sNB, bdR, sL):
    """Jacobian values of the multiplier definition at the Gauss points (``(nj, p, ...)``):
    ``sNB = h skew(v_B)`` (/ lam_f, rows 3:), ``bdR = -h blockdiag(R_A, R_A)`` (/ Qbar),
    ``sL = -h skew(lam_f)`` (/ v_B, rows 3:).  ``Jv (nj, p, 30)`` the joints' unknowns, ``sl`` the
    first slots ``(JS, JPHI, JLAM, JQ, JNA, JNB)``, ``GaR (nj, p, 3, 3)`` frames A."""
    nj, p = Jv.shape[0], Jv.shape[1]
    JLAM, JNB = sl[2], sl[5]
    for j in range(nj):
        for i in range(p):
            v0, v1, v2 = Jv[j, i, JNB], Jv[j, i, JNB + 1], Jv[j, i, JNB + 2]
            l0, l1, l2 = Jv[j, i, JLAM], Jv[j, i, JLAM + 1], Jv[j, i, JLAM + 2]
            sNB[j, i, 0, 0] = 0.0
            sNB[j, i, 0, 1] = h * -v2
            sNB[j, i, 0, 2] = h * v1
            sNB[j, i, 1, 0] = h * v2
            sNB[j, i, 1, 1] = 0.0
            sNB[j, i, 1, 2] = h * -v0
            sNB[j, i, 2, 0] = h * -v1
            sNB[j, i, 2, 1] = h * v0
            sNB[j, i, 2, 2] = 0.0
            sL[j, i, 0, 0] = 0.0
            sL[j, i, 0, 1] = -h * -l2
            sL[j, i, 0, 2] = -h * l1
            sL[j, i, 1, 0] = -h * l2
            sL[j, i, 1, 1] = 0.0
            sL[j, i, 1, 2] = -h * -l0
            sL[j, i, 2, 0] = -h * -l1
            sL[j, i, 2, 1] = -h * l0
            sL[j, i, 2, 2] = 0.0
            for a in range(6):
                for b in range(6):
                    bdR[j, i, a, b] = 0.0
            for a in range(3):
                for b in range(3):
                    v = -h * GaR[j, i, a, b]
                    bdR[j, i, a, b] = v
                    bdR[j, i, 3 + a, 3 + b] = v


# ============================================================================ the constitutive laws
@jit_kernel
def law_rows(Jv, sl, US, UPHI, Rrt, Rr, acc, tgt, Gax, GaR, Gbx, k, c, ref, kind, r, jac,
             law_nu, law_dA, law_dB, uni):
    """The law rows ``r[j, i, JQ + m]`` of every joint (module docstring, one row per component kind)
    and, if ``jac``, their Jacobian values that are not constants:

    * ``law_nu (nj, p, 6, 12)``: d/d(nu_a, nu_b) of the damper ``c_m qdot_m`` of free components,
      ``qdot = (R_A^T (v_B - v_A - omega_A x (x_B - x_A)), R_A^T (omega_B - omega_A))`` (Gauss points);
    * ``law_dA``, ``law_dB (nj, p, 6, 6)``: d/d(dx, psi) of the attachment poses A, B (Gauss points)
      of the same (frame A turns, ``x_B - x_A`` moves);
    * ``uni (nj, p, 9)``: universal joints, ``d(cross)/d(u_phi(tau_i))`` (0:3), ``d(moment)/d(Qbar_m,i)``
      (3:6) and ``d(moment)/d(phi_i)`` (6:9).

    Rows of a kind without damping leave ``law_nu``, ``law_dA``, ``law_dB`` zero.  ``Jv (nj, p, 30)``
    the unknowns, ``sl`` the first slots, ``US``, ``UPHI``, ``Rrt`` of :func:`joint_rows`, ``Rr``,
    ``acc (nj, 3)`` start values, ``tgt (nj, 6, p)`` drive targets at the constraint points, ``Gax``,
    ``GaR``, ``Gbx`` attachment poses at the Gauss points, ``k``, ``c``, ``ref (nj, 6)``, ``kind
    (nj, 6)`` (:func:`component_kinds`)."""
    nj, p = Jv.shape[0], Jv.shape[1]
    JS, JPHI, JQ, JNA, JNB = sl[0], sl[1], sl[3], sl[4], sl[5]
    acc6 = scratch_zeros(6)
    uq = scratch_zeros(6)
    qg = scratch_zeros(6)
    u = scratch_zeros(3)
    w = scratch_zeros(3)
    qd = scratch_zeros(6)
    dg = scratch_zeros(3)
    ex = scratch((3, 3))
    Tg = scratch((3, 3))
    Tc = scratch((3, 3))
    Rg = scratch((3, 3))
    for j in range(nj):
        for d in range(3):
            acc6[d] = 0.0
            acc6[3 + d] = acc[j, d]
        damped = False
        univ = False
        for m in range(6):
            if kind[j, m] == FREE and c[j, m] != 0.0:
                damped = True
            if kind[j, m] == UNIV_MOMENT or kind[j, m] == UNIV_CROSS:
                univ = True
        for i in range(p):
            for d in range(3):
                uq[d] = US[j, i, d]
                uq[3 + d] = UPHI[j, i, d]
                qg[d] = Jv[j, i, JS + d] + acc6[d]
                qg[3 + d] = Jv[j, i, JPHI + d] + acc6[3 + d]
                dg[d] = Gbx[j, i, d] - Gax[j, i, d]
            wa0, wa1, wa2 = Jv[j, i, JNA + 3], Jv[j, i, JNA + 4], Jv[j, i, JNA + 5]
            cr0 = wa1 * dg[2] - wa2 * dg[1]
            cr1 = wa2 * dg[0] - wa0 * dg[2]
            cr2 = wa0 * dg[1] - wa1 * dg[0]
            u[0] = Jv[j, i, JNB] - Jv[j, i, JNA] - cr0
            u[1] = Jv[j, i, JNB + 1] - Jv[j, i, JNA + 1] - cr1
            u[2] = Jv[j, i, JNB + 2] - Jv[j, i, JNA + 2] - cr2
            for d in range(3):
                w[d] = Jv[j, i, JNB + 3 + d] - Jv[j, i, JNA + 3 + d]
            for d in range(3):
                qd[d] = GaR[j, i, 0, d] * u[0] + GaR[j, i, 1, d] * u[1] + GaR[j, i, 2, d] * u[2]
                qd[3 + d] = GaR[j, i, 0, d] * w[0] + GaR[j, i, 1, d] * w[1] + GaR[j, i, 2, d] * w[2]
            if univ:  # Rr1 exp(phi_i) and T(phi_i) at the Gauss point
                exp_tangent(Jv[j, i, JPHI:JPHI + 3], ex, Tg)
                for a in range(3):
                    for b in range(3):
                        Rg[a, b] = Rr[j, a, 0] * ex[0, b] + Rr[j, a, 1] * ex[1, b] + Rr[j, a, 2] * ex[2, b]
            for m in range(6):
                km = kind[j, m]
                if km == HELD:
                    r[j, i, JQ + m] = uq[m] + acc6[m] - tgt[j, m, i]
                elif km == FREE:
                    r[j, i, JQ + m] = (Jv[j, i, JQ + m] + k[j, m] * (qg[m] - ref[j, m])) + c[j, m] * qd[m]
                elif km == UNIV_MOMENT:
                    r[j, i, JQ + m] = (Jv[j, i, JQ + 3] * Rg[0, 1] + Jv[j, i, JQ + 4] * Rg[1, 1]
                                       + Jv[j, i, JQ + 5] * Rg[2, 1])
                else:
                    r[j, i, JQ + m] = Rrt[j, i, 0, 1]
            if not jac:
                continue
            if damped:
                for m in range(6):
                    for e in range(12):
                        law_nu[j, i, m, e] = 0.0
                    for e in range(6):
                        law_dA[j, i, m, e] = 0.0
                        law_dB[j, i, m, e] = 0.0
                    if kind[j, m] != FREE or c[j, m] == 0.0:
                        continue
                    cm = c[j, m]
                    n = m % 3
                    e0, e1, e2 = GaR[j, i, 0, n], GaR[j, i, 1, n], GaR[j, i, 2, n]  # row n of R_A^T
                    if m < 3:
                        # sdot = R_A^T (v_B - v_A - omega_A x d): / v_A, / omega_A, / v_B
                        law_nu[j, i, m, 0] = -cm * e0
                        law_nu[j, i, m, 1] = -cm * e1
                        law_nu[j, i, m, 2] = -cm * e2
                        # e^T skew(d): (e x d)
                        law_nu[j, i, m, 3] = cm * (e1 * dg[2] - e2 * dg[1])
                        law_nu[j, i, m, 4] = cm * (e2 * dg[0] - e0 * dg[2])
                        law_nu[j, i, m, 5] = cm * (e0 * dg[1] - e1 * dg[0])
                        law_nu[j, i, m, 6] = cm * e0
                        law_nu[j, i, m, 7] = cm * e1
                        law_nu[j, i, m, 8] = cm * e2
                        uv0, uv1, uv2 = u[0], u[1], u[2]
                        # / x_A: c e^T skew(omega_A) (d = x_B - x_A; the opposite / x_B)
                        t0 = cm * (e1 * wa2 - e2 * wa1)
                        t1 = cm * (e2 * wa0 - e0 * wa2)
                        t2 = cm * (e0 * wa1 - e1 * wa0)
                        law_dA[j, i, m, 0] = t0
                        law_dA[j, i, m, 1] = t1
                        law_dA[j, i, m, 2] = t2
                        law_dB[j, i, m, 0] = -t0
                        law_dB[j, i, m, 1] = -t1
                        law_dB[j, i, m, 2] = -t2
                    else:
                        # wrel = R_A^T (omega_B - omega_A): / omega_A, / omega_B
                        law_nu[j, i, m, 3] = -cm * e0
                        law_nu[j, i, m, 4] = -cm * e1
                        law_nu[j, i, m, 5] = -cm * e2
                        law_nu[j, i, m, 9] = cm * e0
                        law_nu[j, i, m, 10] = cm * e1
                        law_nu[j, i, m, 11] = cm * e2
                        uv0, uv1, uv2 = w[0], w[1], w[2]
                    # frame A turns: c e^T skew(u) / psi_A
                    law_dA[j, i, m, 3] = cm * (e1 * uv2 - e2 * uv1)
                    law_dA[j, i, m, 4] = cm * (e2 * uv0 - e0 * uv2)
                    law_dA[j, i, m, 5] = cm * (e0 * uv1 - e1 * uv0)
            if univ:
                # cross: g = (Rr1 exp(u_phi))[0, 1]; dg/du_phi = a2 T[:, 0] - a0 T[:, 2], a = Rrt^T e_x
                exp_tangent(UPHI[j, i], ex, Tc)
                a0, a2 = Rrt[j, i, 0, 0], Rrt[j, i, 0, 2]
                for f in range(3):
                    uni[j, i, f] = a2 * Tc[f, 0] - a0 * Tc[f, 2]
                # moment: Qm . (Rg e_y); / Qm: Rg e_y; / phi_i: c2 T[:, 0] - c0 T[:, 2], c = Rg^T Qm
                q0, q1, q2 = Jv[j, i, JQ + 3], Jv[j, i, JQ + 4], Jv[j, i, JQ + 5]
                c0 = q0 * Rg[0, 0] + q1 * Rg[1, 0] + q2 * Rg[2, 0]
                c2 = q0 * Rg[0, 2] + q1 * Rg[1, 2] + q2 * Rg[2, 2]
                for f in range(3):
                    uni[j, i, 3 + f] = Rg[f, 1]
                    uni[j, i, 6 + f] = c2 * Tg[f, 0] - c0 * Tg[f, 2]


# ============================================================================ multipliers onto the bodies
@jit_kernel
def side_a_wrench(L, Gax, Gbx, wa, dW_lam, dW_xb, jac):
    """The multipliers' wrench on side A, ``wa = -(lam_f, lam_m + (x_B - x_A) x lam_f)``
    (``(nj, p, 6)``), and (``jac``) its derivatives ``dW_lam (nj, p, 6, 6)`` with respect to the
    multipliers and ``dW_xb (nj, p, 6, 6)`` with respect to ``(dx, psi)`` of B (that of A is
    ``-dW_xb``).  ``L (nj, p, 6)`` multipliers, ``Gax``, ``Gbx (nj, p, 3)`` attachment points.
    The same law at a time node (``p = 1``): :func:`flexmb.dynamics.node.kernels.generalized`."""
    nj, p = L.shape[0], L.shape[1]
    for j in range(nj):
        for i in range(p):
            d0 = Gbx[j, i, 0] - Gax[j, i, 0]
            d1 = Gbx[j, i, 1] - Gax[j, i, 1]
            d2 = Gbx[j, i, 2] - Gax[j, i, 2]
            l0, l1, l2 = L[j, i, 0], L[j, i, 1], L[j, i, 2]
            wa[j, i, 0] = -l0
            wa[j, i, 1] = -l1
            wa[j, i, 2] = -l2
            wa[j, i, 3] = -(L[j, i, 3] + (d1 * l2 - d2 * l1))
            wa[j, i, 4] = -(L[j, i, 4] + (d2 * l0 - d0 * l2))
            wa[j, i, 5] = -(L[j, i, 5] + (d0 * l1 - d1 * l0))
            if not jac:
                continue
            for a in range(6):
                for b in range(6):
                    dW_lam[j, i, a, b] = 0.0
                    dW_xb[j, i, a, b] = 0.0
            for a in range(6):
                dW_lam[j, i, a, a] = -1.0
            # -skew(dg) in rows 3:, columns :3
            dW_lam[j, i, 3, 1] = d2
            dW_lam[j, i, 3, 2] = -d1
            dW_lam[j, i, 4, 0] = -d2
            dW_lam[j, i, 4, 2] = d0
            dW_lam[j, i, 5, 0] = d1
            dW_lam[j, i, 5, 1] = -d0
            # skew(lam_f) in rows 3:, columns :3
            dW_xb[j, i, 3, 1] = -l2
            dW_xb[j, i, 3, 2] = l1
            dW_xb[j, i, 4, 0] = l2
            dW_xb[j, i, 4, 2] = -l0
            dW_xb[j, i, 5, 0] = -l1
            dW_xb[j, i, 5, 1] = l0


@jit_kernel
def transport_moment(A, Dh, h, f, r, rd, mu, Df, d_f, d_r, d_rd, jac):
    """Collocation-consistent transport moment (issue 8 section 3; the equation is
    :func:`flexmb.dynamics.elements.joints.onto_bodies`'s): for forces ``f``, levers ``r`` and their
    rates ``rd`` at the Gauss points (each ``(m, p, 3)``)::

        mu_j = sum_i A_ji [ r_i x Df_i - sum_k D_ik (r_k x f_k) + h rd_i x f_i ],   Df_i = sum_k D_ik f_k

    with ``Dh = D[:, 1:]`` and ``A = Dh^-1`` (``(p, p)``).  Out: ``mu``, ``Df (m, p, 3)`` and (``jac``)
    ``d_f``, ``d_r``, ``d_rd (m, p, p, 3, 3)`` = ``d mu_j / d (f_k, r_k, rd_k)``::

        d_f  = sum_i A_ji D_ik skew(r_i) - delta_jk skew(r_k) + h A_jk skew(rd_k)
        d_r  = -A_jk skew(Df_k) + delta_jk skew(f_k),     d_rd = -h A_jk skew(f_k)
    """
    m, p = f.shape[0], f.shape[1]
    rhs = np.empty((p, 3))
    for q in range(m):
        for i in range(p):
            for d in range(3):
                s = 0.0
                for k in range(p):
                    s += Dh[i, k] * f[q, k, d]
                Df[q, i, d] = s
        for i in range(p):
            r0, r1, r2 = r[q, i, 0], r[q, i, 1], r[q, i, 2]
            a0 = r1 * Df[q, i, 2] - r2 * Df[q, i, 1]
            a1 = r2 * Df[q, i, 0] - r0 * Df[q, i, 2]
            a2 = r0 * Df[q, i, 1] - r1 * Df[q, i, 0]
            b0 = 0.0
            b1 = 0.0
            b2 = 0.0
            for k in range(p):
                s0, s1, s2 = r[q, k, 0], r[q, k, 1], r[q, k, 2]
                f0, f1, f2 = f[q, k, 0], f[q, k, 1], f[q, k, 2]
                b0 += Dh[i, k] * (s1 * f2 - s2 * f1)
                b1 += Dh[i, k] * (s2 * f0 - s0 * f2)
                b2 += Dh[i, k] * (s0 * f1 - s1 * f0)
            v0, v1, v2 = rd[q, i, 0], rd[q, i, 1], rd[q, i, 2]
            f0, f1, f2 = f[q, i, 0], f[q, i, 1], f[q, i, 2]
            rhs[i, 0] = a0 - b0 + h * (v1 * f2 - v2 * f1)
            rhs[i, 1] = a1 - b1 + h * (v2 * f0 - v0 * f2)
            rhs[i, 2] = a2 - b2 + h * (v0 * f1 - v1 * f0)
        for j in range(p):
            for d in range(3):
                s = 0.0
                for i in range(p):
                    s += A[j, i] * rhs[i, d]
                mu[q, j, d] = s
        if not jac:
            continue
        for j in range(p):
            for k in range(p):
                # Cr = sum_i A_ji D_ik r_i
                c0 = 0.0
                c1 = 0.0
                c2 = 0.0
                for i in range(p):
                    w = A[j, i] * Dh[i, k]
                    c0 += w * r[q, i, 0]
                    c1 += w * r[q, i, 1]
                    c2 += w * r[q, i, 2]
                dl = 1.0 if j == k else 0.0
                hA = h * A[j, k]
                x0 = c0 - dl * r[q, k, 0] + hA * rd[q, k, 0]
                x1 = c1 - dl * r[q, k, 1] + hA * rd[q, k, 1]
                x2 = c2 - dl * r[q, k, 2] + hA * rd[q, k, 2]
                _skew_into(x0, x1, x2, d_f[q, j, k])
                y0 = -A[j, k] * Df[q, k, 0] + dl * f[q, k, 0]
                y1 = -A[j, k] * Df[q, k, 1] + dl * f[q, k, 1]
                y2 = -A[j, k] * Df[q, k, 2] + dl * f[q, k, 2]
                _skew_into(y0, y1, y2, d_r[q, j, k])
                _skew_into(-hA * f[q, k, 0], -hA * f[q, k, 1], -hA * f[q, k, 2], d_rd[q, j, k])


@jit_kernel
def _skew_into(a0, a1, a2, S):
    """``S = skew(a)`` (3 x 3)."""
    S[0, 0] = 0.0
    S[0, 1] = -a2
    S[0, 2] = a1
    S[1, 0] = a2
    S[1, 1] = 0.0
    S[1, 2] = -a0
    S[2, 0] = -a1
    S[2, 1] = a0
    S[2, 2] = 0.0


# ============================================================================ the joints at a time node
@jit_kernel
def node_rates(nua, nub, xa, Ra, xb, Rb, universal, out):
    """Rates ``out (nj, 7)`` of the joints' relative coordinates for attachment velocities ``nua``,
    ``nub (nj, 6)`` at a node: ``R_A^T (v_B - v_A - omega_A x (x_B - x_A))``, ``R_A^T (omega_B -
    omega_A)`` and the universal joint's ``(x_A x y_B) . (omega_B - omega_A)`` (0 unless ``universal``)."""
    for j in range(out.shape[0]):
        d0, d1, d2 = xb[j, 0] - xa[j, 0], xb[j, 1] - xa[j, 1], xb[j, 2] - xa[j, 2]
        u0 = nub[j, 0] - nua[j, 0] - (nua[j, 4] * d2 - nua[j, 5] * d1)
        u1 = nub[j, 1] - nua[j, 1] - (nua[j, 5] * d0 - nua[j, 3] * d2)
        u2 = nub[j, 2] - nua[j, 2] - (nua[j, 3] * d1 - nua[j, 4] * d0)
        g0, g1, g2 = nub[j, 3] - nua[j, 3], nub[j, 4] - nua[j, 4], nub[j, 5] - nua[j, 5]
        for d in range(3):
            out[j, d] = Ra[j, 0, d] * u0 + Ra[j, 1, d] * u1 + Ra[j, 2, d] * u2
            out[j, 3 + d] = Ra[j, 0, d] * g0 + Ra[j, 1, d] * g1 + Ra[j, 2, d] * g2
        if universal:
            n0, n1, n2 = _ncross(Ra, Rb, j)
            out[j, 6] = n0 * g0 + n1 * g1 + n2 * g2
        else:
            out[j, 6] = 0.0


@jit_kernel
def _ncross(Ra, Rb, j):
    """``x_A x y_B`` of joint ``j`` (the axis of a universal joint's cross condition)."""
    return (Ra[j, 1, 0] * Rb[j, 2, 1] - Ra[j, 2, 0] * Rb[j, 1, 1],
            Ra[j, 2, 0] * Rb[j, 0, 1] - Ra[j, 0, 0] * Rb[j, 2, 1],
            Ra[j, 0, 0] * Rb[j, 1, 1] - Ra[j, 1, 0] * Rb[j, 0, 1])


@jit_kernel
def node_rate_rows(xa, Ra, xb, Rb, universal, Cb, Ca):
    """:func:`node_rates` as ``out = Cb nu_b + Ca nu_a``: the blocks ``Cb``, ``Ca (nj, 7, 6)``."""
    for j in range(Ca.shape[0]):
        for a in range(7):
            for e in range(6):
                Cb[j, a, e] = 0.0
                Ca[j, a, e] = 0.0
        d0, d1, d2 = xb[j, 0] - xa[j, 0], xb[j, 1] - xa[j, 1], xb[j, 2] - xa[j, 2]
        for a in range(3):
            r0, r1, r2 = Ra[j, 0, a], Ra[j, 1, a], Ra[j, 2, a]  # row a of R_A^T
            for e in range(3):
                Cb[j, a, e] = Ra[j, e, a]
                Cb[j, 3 + a, 3 + e] = Ra[j, e, a]
                Ca[j, a, e] = -Ra[j, e, a]
                Ca[j, 3 + a, 3 + e] = -Ra[j, e, a]
            # R_A^T skew(d): (row a) x d
            Ca[j, a, 3] = r1 * d2 - r2 * d1
            Ca[j, a, 4] = r2 * d0 - r0 * d2
            Ca[j, a, 5] = r0 * d1 - r1 * d0
        if universal:
            n0, n1, n2 = _ncross(Ra, Rb, j)
            Cb[j, 6, 3], Cb[j, 6, 4], Cb[j, 6, 5] = n0, n1, n2
            Ca[j, 6, 3], Ca[j, 6, 4], Ca[j, 6, 5] = -n0, -n1, -n2


@jit_kernel
def node_rate_wrench(Ra, Rb, universal, loc, out):
    """The transpose of :func:`node_rates` on B's side: multipliers ``loc (nj, 7)`` of the rate rows as
    the wrench on B ``out (nj, 6)`` (force; moment at B's origin; inertial): ``(R_A loc_f, R_A loc_m +
    loc_6 (x_A x y_B))``.  A receives the opposite wrench transported to its origin
    (:func:`side_a_wrench`)."""
    for j in range(loc.shape[0]):
        n0, n1, n2 = _ncross(Ra, Rb, j) if universal else (0.0, 0.0, 0.0)
        nc = (n0, n1, n2)
        for d in range(3):
            out[j, d] = Ra[j, d, 0] * loc[j, 0] + Ra[j, d, 1] * loc[j, 1] + Ra[j, d, 2] * loc[j, 2]
            out[j, 3 + d] = (Ra[j, d, 0] * loc[j, 3] + Ra[j, d, 1] * loc[j, 4] + Ra[j, d, 2] * loc[j, 5]) \
                + loc[j, 6] * nc[d]
