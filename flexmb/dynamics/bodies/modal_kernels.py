"""Compiled rows and analytic Jacobian (numba) of the modal flexible bodies over one time element,
batched over the bodies of a group and the internal points (the equations are listed in
:mod:`.modal`; the mass matrix and the elastic terms are the laws of :mod:`.modal_laws`).

The Jacobian values are written per body and point in the order of :func:`jacobian_entries`; the
rows and columns are built once per model by :func:`jacobian_indices`.  Compilation as in
:mod:`flexmb.dynamics.kernels` (``cache=True``, no fastmath).
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.bodies.modal_laws import cross3 as _cross, elastic_nonlinear, mass_world
from flexmb.dynamics.bodies.rigid_kernels import frame_couplings, rigid_kinematics
from flexmb.dynamics.kernels import jit_kernel, scratch, scratch_zeros, tangent_inv_and_d
from flexmb.numba_cache import refresh as _refresh_cache

_refresh_cache()


# ============================================================================ kinematics
@jit_kernel
def modal_kinematics(E, x1, R1, q1, Ug, nm, R, T, UX, UR, UT, UQ, Xc, Qc):
    """Kinematics of a modal group: the frame's (:func:`flexmb.dynamics.bodies.rigid_kernels.rigid_kinematics`:
    ``R``, ``T`` at the Gauss points, ``UX``, ``UR``, ``UT`` at the constraint points), the modal
    coordinates' polynomial at the constraint points ``UQ (n,p,nm)`` and contiguous copies of the
    frame positions ``Xc (n,p,3)`` and modal coordinates ``Qc (n,p,nm)`` at the Gauss points."""
    n, p = Ug.shape[0], Ug.shape[1]
    rigid_kinematics(E, x1, R1, Ug, np.int64(0), np.int64(3), R, T, UX, UR, UT)
    for b in range(n):
        for i in range(p):
            for d in range(3):
                Xc[b, i, d] = Ug[b, i, d]
            for k in range(nm):
                Qc[b, i, k] = Ug[b, i, 6 + k]
                s = E[i, 0] * q1[b, k]
                for j in range(p):
                    s += E[i, j + 1] * Ug[b, j, 6 + k]
                UQ[b, i, k] = s


# ============================================================================ Jacobian layout
def jacobian_entries(nm: int, p: int, ka: bool, nl: bool = False):
    """Row and column slots ``(rows, cols)`` (each ``(p, E)``, relative to the body's block, internal
    point ``i`` major) of the values :func:`modal_residual` writes for one body at point ``i``:
    the couplings of the time element (``D``) first, then the local blocks, then (``nl``) the
    couplings of the nonlinear elastic force through its quadrature along the element, then
    (``ka``) the couplings of the acceleration preloads."""
    N = 6 + nm
    S = 18 + 3 * nm
    BX, BTH, BQ, BPI, BW = 0, 3, 6, 6 + nm, 6 + nm + N
    rs, cs = [], []

    def block(r0, nr, c0, nc, diag=False):
        r = np.arange(nr)[:, None] + r0
        c = np.arange(nc)[None, :] + c0
        if diag:
            rs.append(np.arange(nr) + r0)
            cs.append(np.arange(nr) + c0)
        else:
            r, c = np.broadcast_arrays(r, c)
            rs.append(r.ravel())
            cs.append(c.ravel())

    coup = np.concatenate([BX + np.arange(3), BTH + np.arange(3), BQ + np.arange(nm), BPI + np.arange(N)])
    block(BX, 3, BW, 3, diag=True)          # x / v: -h
    block(BTH, 3, BTH, 3)                   # theta / theta: -h d(T^-1 om)/dtheta
    block(BTH, 3, BW + 3, 3)                # theta / om: -h T^-1
    block(BQ, nm, BW + 6, nm, diag=True)    # q / qdot: -h
    block(BPI + 3, 3, BPI, 3)               # pi_om / pi_v: h skew(v)
    block(BPI + 3, 3, BW, 3)                # pi_om / v: -h skew(pi_v)
    block(BPI + 3, 3, BTH, 3)               # pi_om / theta: gravity
    block(BPI + 3, 3, BQ, nm)               # pi_om / q: gravity
    block(BPI + 6, nm, BW, N)               # pi_q / w
    block(BPI + 6, nm, BTH, 3)              # pi_q / theta
    block(BPI + 6, nm, BQ, nm)              # pi_q / q
    block(BW, N, BW, N)                     # w / w: Rb M Rb^T
    block(BW, N, BQ, nm)                    # w / q: Rb dM/dq Wb
    block(BW, N, BTH, 3)                    # w / theta
    block(BW, N, BPI, N, diag=True)         # w / pi: -1
    lr, lc = np.concatenate(rs), np.concatenate(cs)
    rows, cols = [], []
    for i in range(p):
        r_i, c_i = [], []
        for j in range(p):  # couplings between internal points: (i, s) <- (j, s)
            r_i.append(i * S + coup)
            c_i.append(j * S + coup)
        r_i.append(i * S + lr)
        c_i.append(i * S + lc)
        if nl:  # pi_q at i / q at j
            for j in range(p):
                r = (i * S + BPI + 6 + np.arange(nm))[:, None]
                c = (j * S + BQ + np.arange(nm))[None, :]
                r, c = np.broadcast_arrays(r, c)
                r_i.append(r.ravel())
                c_i.append(c.ravel())
        if ka:  # pi_q at i / (v, omega) at j
            for j in range(p):
                r = (i * S + BPI + 6 + np.arange(nm))[:, None]
                c = (j * S + BW + np.arange(6))[None, :]
                r, c = np.broadcast_arrays(r, c)
                r_i.append(r.ravel())
                c_i.append(c.ravel())
        rows.append(np.concatenate(r_i))
        cols.append(np.concatenate(c_i))
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def jacobian_indices(body_start, nm: int, p: int, ka: bool, nl: bool):
    """Global rows and columns ``(n, p, E)`` of the values of :func:`modal_residual` for bodies whose
    blocks start at ``body_start (n,)``."""
    rows, cols = jacobian_entries(nm, p, ka, nl)
    bs = np.asarray(body_start, dtype=np.int64)[:, None, None]
    return bs + rows[None], bs + cols[None]


def n_entries(nm: int, p: int, ka: bool, nl: bool) -> int:
    N = 6 + nm
    local = 3 + 9 + 9 + nm + 9 + 9 + 9 + 3 * nm + nm * N + 3 * nm + nm * nm + N * N + N * nm + 3 * N + N
    return p * (6 + nm + N) + local + (p * nm * nm if nl else 0) + (p * 6 * nm if ka else 0)


# ============================================================================ rows and Jacobian
@jit_kernel
def modal_residual(D, h, x1, pi1, q1, Ug, R, T, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, K, C,
                   cs, cu, cV, ql, qA, Ef, Wf, Kg, Ka, w1, g, r, vals, jac):
    """Rows ``r (n,p,slots)`` of a modal group and, if ``jac``, the Jacobian values ``vals (n,p,E)``
    in the order of :func:`jacobian_entries`.

    ``D (p,p+1)``, ``h``; start values ``x1 (n,3)``, ``pi1 (n,N)``, ``q1 (n,nm)``; unknowns ``Ug
    (n,p,18+3nm)``; ``R``, ``T (n,p,3,3)`` at the Gauss points; mass data, ``K``, ``C (n,nm,nm)``,
    the strain-energy factors (:mod:`.modal_laws`); the force points of the nonlinear elastic
    force, ``Ef (M,p+1)`` (modal coordinates there: ``Ef[m,0] q1 + sum_j Ef[m,1+j] Q_j``) and its
    weights ``Wf (p,M)`` at each Gauss point (:func:`flexmb.dynamics.bodies.modal_residual.force_points`);
    unit preload stiffness ``Kg (n,6,nm,nm)`` of the
    spin products and ``Ka (n,6,nm,nm)`` of the frame accelerations ``(a_O - g, alpha)`` (size 0:
    absent); node velocities ``w1 (n,6)`` (frame part, for ``Ka``); gravity ``g (3,)``.
    """
    n, p = Ug.shape[0], Ug.shape[1]
    nm = q1.shape[1]
    N = 6 + nm
    BX, BTH, BQ, BPI, BW = 0, 3, 6, 6 + nm, 6 + nm + N
    fsl = np.array((BX, BTH))  # run-time slots: literal arguments would compile frame_couplings once more
    has_kg = Kg.shape[0] > 0
    has_ka = Ka.shape[0] > 0
    nl = cs.shape[1] + ql.shape[1] > 0
    M = Ef.shape[0]
    qf = np.empty(nm)
    fn = np.empty((M, nm))
    Ktn = np.empty((M, nm, nm))
    KtE = np.empty((p, nm, nm))
    Ti = scratch((3, 3))
    dTi = scratch((3, 3))
    Mw = np.empty((N, N))
    Y = np.empty((nm, 3, 3))
    Psi = np.empty((3, nm))
    RS1 = np.empty((3, nm))
    RAv = np.empty((3, nm))
    RAo = np.empty((3, nm))
    Aq = np.empty((nm, nm))
    gk = np.empty(nm)
    fel = np.empty(nm)
    Ks = np.empty((nm, nm))
    KgQ = np.zeros((nm, 3))
    Cq = np.zeros((nm, 6))
    Kqc = np.empty(nm)
    work = np.empty(nm)
    Lth = np.empty((nm, 3))
    dP = np.empty((N, 3))
    P = np.empty(N)
    Qv = np.empty(nm)
    sp = scratch_zeros(6)
    ds = scratch_zeros((6, 3))
    sa = scratch_zeros(6)
    acc = scratch_zeros(6)
    for b in range(n):
        m = mass[b]
        if nl:  # the nonlinear elastic force at the force points along the element
            for mm in range(M):
                for k in range(nm):
                    t = Ef[mm, 0] * q1[b, k]
                    for j in range(p):
                        t += Ef[mm, j + 1] * Ug[b, j, BQ + k]
                    qf[k] = t
                    fn[mm, k] = 0.0
                if jac:
                    for k in range(nm):
                        for l in range(nm):
                            Ktn[mm, k, l] = 0.0
                elastic_nonlinear(b, qf, cs, cu, cV, ql, qA, fn[mm], Ktn[mm], jac, work)
        for i in range(p):
            u = Ug[b, i]
            Rm = R[b, i]
            # ---- couplings of the time element
            frame_couplings(D, h, x1, Ug, b, i, fsl[0], fsl[1], BW, r)
            for k in range(nm):
                sq = D[i, 0] * q1[b, k]
                for j in range(p):
                    sq += D[i, j + 1] * Ug[b, j, BQ + k]
                r[b, i, BQ + k] = sq - h * u[BW + 6 + k]
                Qv[k] = u[BQ + k]
            for c in range(N):
                s = D[i, 0] * pi1[b, c]
                for j in range(p):
                    s += D[i, j + 1] * Ug[b, j, BPI + c]
                r[b, i, BPI + c] = s
            v0, v1, v2 = u[BW], u[BW + 1], u[BW + 2]
            o0, o1, o2 = u[BW + 3], u[BW + 4], u[BW + 5]
            tangent_inv_and_d(u[BTH:BTH + 3], u[BW + 3:BW + 6], Ti, dTi)
            for d in range(3):
                r[b, i, BTH + d] -= h * (Ti[d, 0] * o0 + Ti[d, 1] * o1 + Ti[d, 2] * o2)
            # ---- mass matrix, momenta
            RS0, RS1_, RS2 = mass_world(b, Rm, Qv, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, Mw, Y, Psi, RS1)
            for a in range(N):
                s = 0.0
                for c in range(N):
                    s += Mw[a, c] * u[BW + c]
                P[a] = s
                r[b, i, BW + a] = s - u[BPI + a]
            # body-axes velocities
            V0 = Rm[0, 0] * v0 + Rm[1, 0] * v1 + Rm[2, 0] * v2
            V1 = Rm[0, 1] * v0 + Rm[1, 1] * v1 + Rm[2, 1] * v2
            V2 = Rm[0, 2] * v0 + Rm[1, 2] * v1 + Rm[2, 2] * v2
            W0 = Rm[0, 0] * o0 + Rm[1, 0] * o1 + Rm[2, 0] * o2
            W1 = Rm[0, 1] * o0 + Rm[1, 1] * o1 + Rm[2, 1] * o2
            W2 = Rm[0, 2] * o0 + Rm[1, 2] * o1 + Rm[2, 2] * o2
            # ---- A = dMb/dq Wb (body axes: Av, Ao, Aq), rotated: RAv = R Av, RAo = R Ao; g_k = Wb . A_k / 2
            for k in range(nm):
                s1x, s1y, s1z = S1[b, 0, k], S1[b, 1, k], S1[b, 2, k]
                av0, av1, av2 = _cross(W0, W1, W2, s1x, s1y, s1z)
                ao0, ao1, ao2 = _cross(s1x, s1y, s1z, V0, V1, V2)
                # (J1[k] + 2 Y_k) Om + dpsi[k] qdot
                for a in range(3):
                    t = 0.0
                    for c in range(3):
                        t += (J1[b, k, a, c] + 2.0 * Y[k, a, c]) * (W0 if c == 0 else (W1 if c == 1 else W2))
                    for j in range(nm):
                        t += dpsi[b, k, a, j] * u[BW + 6 + j]
                    if a == 0:
                        ao0 += t
                    elif a == 1:
                        ao1 += t
                    else:
                        ao2 += t
                gsum = V0 * av0 + V1 * av1 + V2 * av2 + W0 * ao0 + W1 * ao1 + W2 * ao2
                for j in range(nm):
                    aq = dpsi[b, k, 0, j] * W0 + dpsi[b, k, 1, j] * W1 + dpsi[b, k, 2, j] * W2
                    Aq[j, k] = aq
                    gsum += u[BW + 6 + j] * aq
                gk[k] = 0.5 * gsum
                for a in range(3):
                    RAv[a, k] = Rm[a, 0] * av0 + Rm[a, 1] * av1 + Rm[a, 2] * av2
                    RAo[a, k] = Rm[a, 0] * ao0 + Rm[a, 1] * ao1 + Rm[a, 2] * ao2
            # ---- elastic force: linear part at the point, nonlinear part integrated along the element
            for k in range(nm):
                t = 0.0
                for l in range(nm):
                    t += K[b, k, l] * Qv[l]
                if nl:
                    for mm in range(M):
                        t += Wf[i, mm] * fn[mm, k]
                fel[k] = t
            # ---- preloads: spin products (Kg) and frame accelerations (Ka)
            if has_kg or has_ka:
                for c in range(nm):
                    for l in range(nm):
                        Ks[c, l] = 0.0
            if has_kg:
                sp[0] = W0 * W0
                sp[1] = W1 * W1
                sp[2] = W2 * W2
                sp[3] = W0 * W1
                sp[4] = W1 * W2
                sp[5] = W0 * W2
                ds[0, 0] = 2.0 * W0
                ds[1, 1] = 2.0 * W1
                ds[2, 2] = 2.0 * W2
                ds[3, 0] = W1
                ds[3, 1] = W0
                ds[4, 1] = W2
                ds[4, 2] = W1
                ds[5, 0] = W2
                ds[5, 2] = W0
                for mm in range(nm):
                    KgQ[mm, 0] = 0.0
                    KgQ[mm, 1] = 0.0
                    KgQ[mm, 2] = 0.0
                for c in range(6):
                    for mm in range(nm):
                        t = 0.0
                        for l in range(nm):
                            kv = Kg[b, c, mm, l]
                            Ks[mm, l] += sp[c] * kv
                            t += kv * Qv[l]
                        Kqc[mm] = t
                    for mm in range(nm):
                        for e in range(3):
                            KgQ[mm, e] += Kqc[mm] * ds[c, e]
            if has_ka:
                for c in range(6):
                    t = D[i, 0] * w1[b, c]
                    for j in range(p):
                        t += D[i, j + 1] * Ug[b, j, BW + c]
                    acc[c] = t / h
                acc[0] -= g[0]
                acc[1] -= g[1]
                acc[2] -= g[2]
                for e in range(3):
                    sa[e] = Rm[0, e] * acc[0] + Rm[1, e] * acc[1] + Rm[2, e] * acc[2]
                    sa[3 + e] = Rm[0, e] * acc[3] + Rm[1, e] * acc[4] + Rm[2, e] * acc[5]
                for c in range(6):
                    for mm in range(nm):
                        t = 0.0
                        for l in range(nm):
                            kv = Ka[b, c, mm, l]
                            Ks[mm, l] += sa[c] * kv
                            t += kv * Qv[l]
                        Cq[mm, c] = h * t
            # ---- momentum balance
            r[b, i, BPI + 3] += h * (v1 * u[BPI + 2] - v2 * u[BPI + 1])
            r[b, i, BPI + 4] += h * (v2 * u[BPI] - v0 * u[BPI + 2])
            r[b, i, BPI + 5] += h * (v0 * u[BPI + 1] - v1 * u[BPI])
            g0, g1, g2 = g[0], g[1], g[2]
            r[b, i, BPI] -= h * m * g0
            r[b, i, BPI + 1] -= h * m * g1
            r[b, i, BPI + 2] -= h * m * g2
            c0, c1, c2 = _cross(RS0, RS1_, RS2, g0, g1, g2)
            r[b, i, BPI + 3] -= h * c0
            r[b, i, BPI + 4] -= h * c1
            r[b, i, BPI + 5] -= h * c2
            for k in range(nm):
                t = gk[k] - fel[k]
                for l in range(nm):
                    t -= C[b, k, l] * u[BW + 6 + l]
                    if has_kg or has_ka:
                        t -= Ks[k, l] * Qv[l]
                t += RS1[0, k] * g0 + RS1[1, k] * g1 + RS1[2, k] * g2
                r[b, i, BPI + 6 + k] -= h * t
            if not jac:
                continue
            # ---- Jacobian values (order of jacobian_entries)
            out = vals[b, i]
            e = 0
            for j in range(p):
                for s in range(6 + nm + N):
                    out[e] = D[i, j + 1]
                    e += 1
            for d in range(3):                                  # x / v
                out[e] = -h
                e += 1
            for a in range(3):                                  # theta / theta
                for c in range(3):
                    out[e] = -h * dTi[a, c]
                    e += 1
            for a in range(3):                                  # theta / om
                for c in range(3):
                    out[e] = -h * Ti[a, c]
                    e += 1
            for k in range(nm):                                 # q / qdot
                out[e] = -h
                e += 1
            # pi_om / pi_v: h skew(v)
            out[e + 0] = 0.0
            out[e + 1] = -h * v2
            out[e + 2] = h * v1
            out[e + 3] = h * v2
            out[e + 4] = 0.0
            out[e + 5] = -h * v0
            out[e + 6] = -h * v1
            out[e + 7] = h * v0
            out[e + 8] = 0.0
            e += 9
            # pi_om / v: -h skew(pi_v)
            f0, f1, f2 = u[BPI], u[BPI + 1], u[BPI + 2]
            out[e + 0] = 0.0
            out[e + 1] = h * f2
            out[e + 2] = -h * f1
            out[e + 3] = -h * f2
            out[e + 4] = 0.0
            out[e + 5] = h * f0
            out[e + 6] = h * f1
            out[e + 7] = -h * f0
            out[e + 8] = 0.0
            e += 9
            # pi_om / theta: -h skew(g) skew(RS) T ; column c: -h g x (RS x T[:, c])
            Tm = T[b, i]
            for c in range(3):
                t0, t1, t2 = _cross(RS0, RS1_, RS2, Tm[0, c], Tm[1, c], Tm[2, c])
                y0, y1, y2 = _cross(g0, g1, g2, t0, t1, t2)
                out[e + c] = -h * y0
                out[e + 3 + c] = -h * y1
                out[e + 6 + c] = -h * y2
            e += 9
            # pi_om / q: h skew(g) R S1 ; column k: h g x (R S1)_k
            for k in range(nm):
                y0, y1, y2 = _cross(g0, g1, g2, RS1[0, k], RS1[1, k], RS1[2, k])
                out[e + k] = h * y0
                out[e + nm + k] = h * y1
                out[e + 2 * nm + k] = h * y2
            e += 3 * nm
            # pi_q / w: -h (Rb A)^T + h C (qdot) + h KgQ R^T (om)
            for k in range(nm):
                for a in range(3):
                    out[e + a] = -h * RAv[a, k]
                    t = -h * RAo[a, k]
                    if has_kg:
                        t += h * (KgQ[k, 0] * Rm[a, 0] + KgQ[k, 1] * Rm[a, 1] + KgQ[k, 2] * Rm[a, 2])
                    out[e + 3 + a] = t
                for j in range(nm):
                    out[e + 6 + j] = -h * Aq[j, k] + h * C[b, k, j]
                e += N
            # pi_q / theta: rows (X_k) x w: -h (R Av_k) x v - h (R Ao_k) x om + h (R KgQ_k) x om
            #              - h (R S1_k) x g + (R Cv_k) x acc_v + (R Co_k) x acc_o, times T
            for k in range(nm):
                l0, l1, l2 = _cross(RAv[0, k], RAv[1, k], RAv[2, k], v0, v1, v2)
                y0, y1, y2 = _cross(RAo[0, k], RAo[1, k], RAo[2, k], o0, o1, o2)
                z0, z1, z2 = _cross(RS1[0, k], RS1[1, k], RS1[2, k], g0, g1, g2)
                a0 = -h * (l0 + y0 + z0)
                a1 = -h * (l1 + y1 + z1)
                a2 = -h * (l2 + y2 + z2)
                if has_kg:
                    k0 = Rm[0, 0] * KgQ[k, 0] + Rm[0, 1] * KgQ[k, 1] + Rm[0, 2] * KgQ[k, 2]
                    k1 = Rm[1, 0] * KgQ[k, 0] + Rm[1, 1] * KgQ[k, 1] + Rm[1, 2] * KgQ[k, 2]
                    k2 = Rm[2, 0] * KgQ[k, 0] + Rm[2, 1] * KgQ[k, 1] + Rm[2, 2] * KgQ[k, 2]
                    y0, y1, y2 = _cross(k0, k1, k2, o0, o1, o2)
                    a0 += h * y0
                    a1 += h * y1
                    a2 += h * y2
                if has_ka:
                    for half in range(2):
                        cc0 = Rm[0, 0] * Cq[k, 3 * half] + Rm[0, 1] * Cq[k, 3 * half + 1] + Rm[0, 2] * Cq[k, 3 * half + 2]
                        cc1 = Rm[1, 0] * Cq[k, 3 * half] + Rm[1, 1] * Cq[k, 3 * half + 1] + Rm[1, 2] * Cq[k, 3 * half + 2]
                        cc2 = Rm[2, 0] * Cq[k, 3 * half] + Rm[2, 1] * Cq[k, 3 * half + 1] + Rm[2, 2] * Cq[k, 3 * half + 2]
                        y0, y1, y2 = _cross(cc0, cc1, cc2, acc[3 * half], acc[3 * half + 1], acc[3 * half + 2])
                        a0 += y0
                        a1 += y1
                        a2 += y2
                Lth[k, 0] = a0
                Lth[k, 1] = a1
                Lth[k, 2] = a2
            for k in range(nm):
                for c in range(3):
                    out[e + c] = Lth[k, 0] * Tm[0, c] + Lth[k, 1] * Tm[1, c] + Lth[k, 2] * Tm[2, c]
                e += 3
            # pi_q / q: -h dg + h Kt + h Ks; dg[k,l] = Om^T J2[k,l] Om
            for k in range(nm):
                for l in range(nm):
                    dg = 0.0
                    for a in range(3):
                        wa = W0 if a == 0 else (W1 if a == 1 else W2)
                        dg += wa * (J2[b, k, l, a, 0] * W0 + J2[b, k, l, a, 1] * W1 + J2[b, k, l, a, 2] * W2)
                    t = -h * dg + h * K[b, k, l]
                    if has_kg or has_ka:
                        t += h * Ks[k, l]
                    out[e + l] = t
                e += nm
            # w / w: Mw
            for a in range(N):
                for c in range(N):
                    out[e + c] = Mw[a, c]
                e += N
            # w / q: Rb A
            for a in range(3):
                for k in range(nm):
                    out[e + k] = RAv[a, k]
                e += nm
            for a in range(3):
                for k in range(nm):
                    out[e + k] = RAo[a, k]
                e += nm
            for j in range(nm):
                for k in range(nm):
                    out[e + k] = Aq[j, k]
                e += nm
            # w / theta: (Mw[:, :3] skew(v) + Mw[:, 3:6] skew(om) - [skew(P_v); skew(P_o); 0]) T
            for a in range(N):
                x0, x1_, x2 = _cross(Mw[a, 0], Mw[a, 1], Mw[a, 2], v0, v1, v2)
                y0, y1, y2 = _cross(Mw[a, 3], Mw[a, 4], Mw[a, 5], o0, o1, o2)
                dP[a, 0] = x0 + y0
                dP[a, 1] = x1_ + y1
                dP[a, 2] = x2 + y2
            for half in range(2):
                o = 3 * half
                p0, p1, p2 = P[o], P[o + 1], P[o + 2]
                dP[o + 0, 1] += p2
                dP[o + 0, 2] -= p1
                dP[o + 1, 0] -= p2
                dP[o + 1, 2] += p0
                dP[o + 2, 0] += p1
                dP[o + 2, 1] -= p0
            for a in range(N):
                for c in range(3):
                    out[e + c] = dP[a, 0] * Tm[0, c] + dP[a, 1] * Tm[1, c] + dP[a, 2] * Tm[2, c]
                e += 3
            for a in range(N):                                  # w / pi
                out[e] = -1.0
                e += 1
            if nl:  # pi_q at i / q at j: h sum_m Wf[i,m] Ktn[m] Ef[m,1+j]
                for j in range(p):
                    for k in range(nm):
                        for l in range(nm):
                            t = 0.0
                            for mm in range(M):
                                t += Wf[i, mm] * Ef[mm, j + 1] * Ktn[mm, k, l]
                            out[e + l] = h * t
                        e += nm
            if has_ka:  # pi_q at i / (v, omega) at j: [Cv R^T, Co R^T] D_ij / h
                for j in range(p):
                    dj = D[i, j + 1] / h
                    for k in range(nm):
                        for half in range(2):
                            for c in range(3):
                                t = (Cq[k, 3 * half] * Rm[c, 0] + Cq[k, 3 * half + 1] * Rm[c, 1]
                                     + Cq[k, 3 * half + 2] * Rm[c, 2])
                                out[e + 3 * half + c] = t * dj
                        e += 6
