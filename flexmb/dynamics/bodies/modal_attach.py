"""Compiled kernels (numba) of the attachments of modal flexible bodies: interface poses, velocities,
the wrench map ``B^T`` and the multiplier-map rate, batched over attachments and points (the
contract of :mod:`flexmb.dynamics.elements.attachments`; the equations are in :class:`.modal.FlexibleBodies`).

An attachment ``q`` sits on body ``local[q]`` at the interface point ``c (3)`` with the modal maps
``Pt``, ``Pr (3, nm)`` (translation, small rotation per unit modal coordinate; zero for a point of
the undeformed body).  At a point with frame rotation ``R``, tangent operator ``T`` and modal
coordinates ``q``::

    r = R (c + Pt q),   psi = Pr q,   R Pt,   R Gamma = R T(psi) Pr

Rotation helpers: ``T(psi)`` and its first and second derivatives with the coefficient functions of
:mod:`flexmb.rotations` (series below ``|psi|^2 = 4``, closed forms above; the second derivative by
series, exact to rounding for ``|psi| < 4``, far beyond elastic interface rotations).
"""
from __future__ import annotations

import numpy as np

from flexmb import rotations as _rot
from flexmb.dynamics.bodies.modal_laws import cross3 as _x
from flexmb.dynamics.bodies.rigid_kernels import lever_map
# the compiled rotation helpers and their series tables, shared with the rigid kernels
from flexmb.dynamics.kernels import S_BETA, S_GAMMA, X_SERIES, _horner, exp_tangent, jit_kernel, scratch, scratch_zeros
from flexmb.numba_cache import refresh as _refresh_cache

_refresh_cache()

S_BETA_X = np.ascontiguousarray(_rot.SERIES["beta_x"])
S_GAMMA_X = np.ascontiguousarray(_rot.SERIES["gamma_x"])


def _second_series(c):
    """Ascending coefficients of the second x-derivative of ``sum_k c_k x^k``."""
    k = np.arange(c.size)
    return np.ascontiguousarray((c * k * (k - 1))[2:])


_NT2 = 18  # terms of the series of the second derivatives (exact to rounding for x < 16)
_CB = np.array([(-1.0) ** k / np.prod(np.arange(1.0, 2 * k + 3)) for k in range(_NT2 + 2)])
_CG = np.array([(-1.0) ** k / np.prod(np.arange(1.0, 2 * k + 4)) for k in range(_NT2 + 2)])
S_BETA_1 = np.ascontiguousarray(_CB[1:] * np.arange(1, _CB.size))
S_GAMMA_1 = np.ascontiguousarray(_CG[1:] * np.arange(1, _CG.size))
S_BETA_2 = _second_series(_CB)
S_GAMMA_2 = _second_series(_CG)
S_GAMMA_0 = np.ascontiguousarray(_CG)


# ============================================================================ rotation helpers
@jit_kernel
def tangent_coeffs(x):
    """``beta, gamma, beta_x, gamma_x`` at ``x = |psi|^2``."""
    if x < X_SERIES:
        return _horner(S_BETA, x), _horner(S_GAMMA, x), _horner(S_BETA_X, x), _horner(S_GAMMA_X, x)
    a = np.sqrt(x)
    alpha = np.sin(a) / a
    sh = np.sin(0.5 * a) / a
    beta = 2.0 * sh * sh
    gamma = (1.0 - alpha) / x
    return beta, gamma, (alpha - 2.0 * beta) / (2.0 * x), (beta - 3.0 * gamma) / (2.0 * x)


@jit_kernel
def d_quadratic(t, v, c1, c2, c1x, c2x, out):
    """``out = d(M(t) v)/dt`` of ``M = I + c1(x) skew(t) + c2(x) skew(t)^2`` (``flexmb.rotations._d_quadratic``)."""
    tv = t[0] * v[0] + t[1] * v[1] + t[2] * v[2]
    a0 = t[1] * v[2] - t[2] * v[1]
    a1 = t[2] * v[0] - t[0] * v[2]
    a2 = t[0] * v[1] - t[1] * v[0]
    b0 = t[1] * a2 - t[2] * a1
    b1 = t[2] * a0 - t[0] * a2
    b2 = t[0] * a1 - t[1] * a0
    w0 = 2.0 * (c1x * a0 + c2x * b0)
    w1 = 2.0 * (c1x * a1 + c2x * b1)
    w2 = 2.0 * (c1x * a2 + c2x * b2)
    for i in range(3):
        wi = w0 if i == 0 else (w1 if i == 1 else w2)
        for j in range(3):
            out[i, j] = c2 * (t[i] * v[j] - 2.0 * v[i] * t[j]) + wi * t[j]
        out[i, i] += c2 * tv
    out[0, 1] += c1 * v[2]
    out[0, 2] -= c1 * v[1]
    out[1, 0] -= c1 * v[2]
    out[1, 2] += c1 * v[0]
    out[2, 0] += c1 * v[1]
    out[2, 1] -= c1 * v[0]


@jit_kernel
def tangent_T_second(psi, u, a, out):
    """``out[:, j] = d/dpsi_j [ d(T(psi)^T u)/dpsi . a ]`` (3x3), the NumPy reference being
    ``tests/modal_reference_matrices.tangent_T_second``: ``T^T u = u - beta psi x u + gamma psi x (psi x u)``."""
    x = psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2]
    b1 = _horner(S_BETA_1, x)
    b2 = _horner(S_BETA_2, x)
    g0 = _horner(S_GAMMA_0, x)
    g1 = _horner(S_GAMMA_1, x)
    g2 = _horner(S_GAMMA_2, x)
    pu = scratch(3)
    ppu = scratch(3)
    au = scratch(3)
    bu = scratch(3)
    bpu = scratch(3)
    pbu = scratch(3)
    apu = scratch(3)
    pau = scratch(3)
    abu = scratch(3)
    bau = scratch(3)
    b = scratch_zeros(3)
    _cr(psi, u, pu)
    _cr(psi, pu, ppu)
    _cr(a, u, au)
    pa = psi[0] * a[0] + psi[1] * a[1] + psi[2] * a[2]
    _cr(a, pu, apu)
    _cr(psi, au, pau)
    for j in range(3):
        b[0] = 0.0
        b[1] = 0.0
        b[2] = 0.0
        b[j] = 1.0
        pb = psi[j]
        ab = a[j]
        _cr(b, u, bu)
        _cr(b, pu, bpu)
        _cr(psi, bu, pbu)
        _cr(a, bu, abu)
        _cr(b, au, bau)
        for i in range(3):
            out[i, j] = (-4.0 * b2 * pa * pb * pu[i] - 2.0 * b1 * ab * pu[i] - 2.0 * b1 * pa * bu[i]
                         - 2.0 * b1 * pb * au[i]
                         + 4.0 * g2 * pa * pb * ppu[i] + 2.0 * g1 * ab * ppu[i]
                         + 2.0 * g1 * pa * (bpu[i] + pbu[i]) + 2.0 * g1 * pb * (apu[i] + pau[i])
                         + g0 * (abu[i] + bau[i]))


@jit_kernel
def _cr(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@jit_kernel
def _geometry(Rm, Qv, c, Pt, Pr, r, psi, Tp, RPt, RGam, Ex):
    """``r``, ``psi``, ``Tp = T(psi)``, ``R Pt``, ``R Gamma`` of one attachment at one point (and
    ``Ex = exp(psi)``)."""
    nm = Qv.size
    ut0 = c[0]
    ut1 = c[1]
    ut2 = c[2]
    p0 = 0.0
    p1 = 0.0
    p2 = 0.0
    for k in range(nm):
        qk = Qv[k]
        ut0 += Pt[0, k] * qk
        ut1 += Pt[1, k] * qk
        ut2 += Pt[2, k] * qk
        p0 += Pr[0, k] * qk
        p1 += Pr[1, k] * qk
        p2 += Pr[2, k] * qk
    for a in range(3):
        r[a] = Rm[a, 0] * ut0 + Rm[a, 1] * ut1 + Rm[a, 2] * ut2
    psi[0] = p0
    psi[1] = p1
    psi[2] = p2
    exp_tangent(psi, Ex, Tp)
    RT = scratch((3, 3))
    for a in range(3):
        for e in range(3):
            RT[a, e] = Rm[a, 0] * Tp[0, e] + Rm[a, 1] * Tp[1, e] + Rm[a, 2] * Tp[2, e]
    for k in range(nm):
        for a in range(3):
            RPt[a, k] = Rm[a, 0] * Pt[0, k] + Rm[a, 1] * Pt[1, k] + Rm[a, 2] * Pt[2, k]
            RGam[a, k] = RT[a, 0] * Pr[0, k] + RT[a, 1] * Pr[1, k] + RT[a, 2] * Pr[2, k]


@jit_kernel
def _velocity_map(r, RPt, RGam, B):
    """``B (6, c)``, ``c >= N``: zero, then the velocity map ``nu = B w`` of an attachment in the first
    ``N`` columns, ``[[I, -skew(r), R Pt], [0, I, R Gamma]]``."""
    nm = RPt.shape[1]
    lever_map(r, B)  # the frame's columns: a rigid body's attachment map
    for a in range(6):
        for e in range(6, B.shape[1]):
            B[a, e] = 0.0
    for k in range(nm):
        for a in range(3):
            B[a, 6 + k] = RPt[a, k]
            B[3 + a, 6 + k] = RGam[a, k]


# ============================================================================ pose and velocity
@jit_kernel
def attach_pose(X, R, T, Q, local, c, A, Pt, Pr, E, cons, x, Ra, J):
    """Attachment frames ``x = X + r``, ``Ra = R exp(psi) A`` at ``p`` points and the Jacobian of
    ``(dx, psi_att)`` on the body's ``(x, theta, q)`` (``nc = 6 + nm`` columns): at the Gauss points
    (``cons`` False) ``J (m,p,6,nc)`` on the same point; at the constraint points ``J (m,p,6,p nc)``,
    the block weighted by ``E[k, 1+j]`` for internal point ``j``.  ``X (n,p,3)``, ``R``, ``T
    (n,p,3,3)``, ``Q (n,p,nm)`` at the points."""
    m, p = local.size, X.shape[1]
    nm = Q.shape[2]
    nc = 6 + nm
    r = scratch(3)
    psi = scratch(3)
    Tp = scratch((3, 3))
    Ex = scratch((3, 3))
    RE = scratch((3, 3))
    RPt = np.empty((3, nm))
    RGam = np.empty((3, nm))
    for q in range(m):
        b = local[q]
        for k in range(p):
            Rm = R[b, k]
            Tm = T[b, k]
            _geometry(Rm, Q[b, k], c[q], Pt[q], Pr[q], r, psi, Tp, RPt, RGam, Ex)
            for a in range(3):
                x[q, k, a] = X[b, k, a] + r[a]
                for e in range(3):
                    RE[a, e] = Rm[a, 0] * Ex[0, e] + Rm[a, 1] * Ex[1, e] + Rm[a, 2] * Ex[2, e]
            for a in range(3):
                for e in range(3):
                    Ra[q, k, a, e] = RE[a, 0] * A[q, 0, e] + RE[a, 1] * A[q, 1, e] + RE[a, 2] * A[q, 2, e]
            nj = p if cons else 1
            for j in range(nj):
                w = E[k, j + 1] if cons else 1.0
                o = nc * j
                for a in range(3):
                    for e in range(3):
                        J[q, k, a, o + e] = w if a == e else 0.0
                        J[q, k, 3 + a, o + e] = 0.0
                        J[q, k, 3 + a, o + 3 + e] = w * Tm[a, e]
                for e in range(3):  # -skew(r) T: column e = -(r x T[:, e])
                    t0, t1, t2 = Tm[0, e], Tm[1, e], Tm[2, e]
                    J[q, k, 0, o + 3 + e] = -w * (r[1] * t2 - r[2] * t1)
                    J[q, k, 1, o + 3 + e] = -w * (r[2] * t0 - r[0] * t2)
                    J[q, k, 2, o + 3 + e] = -w * (r[0] * t1 - r[1] * t0)
                for kk in range(nm):
                    for a in range(3):
                        J[q, k, a, o + 6 + kk] = w * RPt[a, kk]
                        J[q, k, 3 + a, o + 6 + kk] = w * RGam[a, kk]


@jit_kernel
def _velocity(Rm, Tm, W, Qv, c, Pt, Pr, nu, Jv, r, psi, Tp, RPt, RGam, Ex, dT, avec):
    """``nu = (v + om x r + R Pt qdot, om + R Gamma qdot)`` and ``Jv (6, N+3+nm)`` on ``(w, theta, q)``."""
    nm = Qv.size
    N = 6 + nm
    _geometry(Rm, Qv, c, Pt, Pr, r, psi, Tp, RPt, RGam, Ex)
    o0, o1, o2 = W[3], W[4], W[5]
    ut0 = 0.0
    ut1 = 0.0
    ut2 = 0.0
    ur0 = 0.0
    ur1 = 0.0
    ur2 = 0.0
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    for k in range(nm):
        qd = W[6 + k]
        ut0 += RPt[0, k] * qd
        ut1 += RPt[1, k] * qd
        ut2 += RPt[2, k] * qd
        ur0 += RGam[0, k] * qd
        ur1 += RGam[1, k] * qd
        ur2 += RGam[2, k] * qd
        a0 += Pr[0, k] * qd
        a1 += Pr[1, k] * qd
        a2 += Pr[2, k] * qd
    nu[0] = W[0] + (o1 * r[2] - o2 * r[1]) + ut0
    nu[1] = W[1] + (o2 * r[0] - o0 * r[2]) + ut1
    nu[2] = W[2] + (o0 * r[1] - o1 * r[0]) + ut2
    nu[3] = o0 + ur0
    nu[4] = o1 + ur1
    nu[5] = o2 + ur2
    _velocity_map(r, RPt, RGam, Jv)
    # theta columns: -(skew(om) skew(r) + skew(u_t)) T and -skew(u_r) T; column e of X T: X T[:, e]
    orr = o0 * r[0] + o1 * r[1] + o2 * r[2]
    for e in range(3):
        t0, t1, t2 = Tm[0, e], Tm[1, e], Tm[2, e]
        # skew(om) skew(r) t = r (om . t) - t (om . r)
        ot = o0 * t0 + o1 * t1 + o2 * t2
        s0 = r[0] * ot - t0 * orr + (ut1 * t2 - ut2 * t1)
        s1 = r[1] * ot - t1 * orr + (ut2 * t0 - ut0 * t2)
        s2 = r[2] * ot - t2 * orr + (ut0 * t1 - ut1 * t0)
        Jv[0, N + e] = -s0
        Jv[1, N + e] = -s1
        Jv[2, N + e] = -s2
        Jv[3, N + e] = -(ur1 * t2 - ur2 * t1)
        Jv[4, N + e] = -(ur2 * t0 - ur0 * t2)
        Jv[5, N + e] = -(ur0 * t1 - ur1 * t0)
    # q columns: skew(om) R Pt and R dT(psi, a) Pr
    avec[0] = a0
    avec[1] = a1
    avec[2] = a2
    beta, gamma, beta_x, gamma_x = tangent_coeffs(psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2])
    d_quadratic(psi, avec, beta, gamma, beta_x, gamma_x, dT)
    RdT = scratch((3, 3))
    for a in range(3):
        for e in range(3):
            RdT[a, e] = Rm[a, 0] * dT[0, e] + Rm[a, 1] * dT[1, e] + Rm[a, 2] * dT[2, e]
    for k in range(nm):
        x0, x1, x2 = RPt[0, k], RPt[1, k], RPt[2, k]
        Jv[0, N + 3 + k] = o1 * x2 - o2 * x1
        Jv[1, N + 3 + k] = o2 * x0 - o0 * x2
        Jv[2, N + 3 + k] = o0 * x1 - o1 * x0
        for a in range(3):
            Jv[3 + a, N + 3 + k] = RdT[a, 0] * Pr[0, k] + RdT[a, 1] * Pr[1, k] + RdT[a, 2] * Pr[2, k]


@jit_kernel
def attach_velocity(U, bw, R, T, Q, local, c, Pt, Pr, nu, J):
    """Attachment velocities ``nu (m,p,6)`` at the Gauss points and ``J (m,p,6,N+3+nm)`` on the
    body's ``(w (N), theta (3), q (nm))`` of the same point.  ``U (n,p,slots)``, ``w`` at slot ``bw``."""
    m, p = local.size, U.shape[1]
    nm = Q.shape[2]
    r = scratch(3)
    psi = scratch(3)
    Tp = scratch((3, 3))
    Ex = scratch((3, 3))
    dT = scratch((3, 3))
    av = scratch(3)
    RPt = np.empty((3, nm))
    RGam = np.empty((3, nm))
    for q in range(m):
        b = local[q]
        for k in range(p):
            _velocity(R[b, k], T[b, k], U[b, k, bw:bw + 6 + nm], Q[b, k], c[q], Pt[q], Pr[q], nu[q, k], J[q, k],
                      r, psi, Tp, RPt, RGam, Ex, dT, av)


# ============================================================================ wrench map
@jit_kernel
def wrench_map(U, bw, h, R, T, Q, local, c, Pt, Pr, wrench, rate, BT, d, dv):
    """Generalized force of wrenches ``(f, m about the attachment) (m,p,6)`` at the Gauss points:
    ``BT (m,p,nr,6)`` with ``B^T = [[I, 0], [skew(r), I], [(R Pt)^T, (R Gamma)^T]]`` on the ``N`` rows of
    the body, the body's own Jacobian ``d (m,p,nr,3+nm)`` on ``(theta, q)``; with ``rate`` (a
    multiplier wrench) the ``nm`` further rows of the modal momentum balance get ``h c_q = h Cw w``
    (:meth:`.modal.FlexibleBodies.wrench_map`), ``BT`` their ``h Cw`` and ``dv (m,p,nr,N+3+nm)``
    the Jacobian of ``h c_q`` with ``w`` fixed on ``(w, theta, q)`` (``nr = N + nm``; else ``nr = N``
    and ``dv`` unused)."""
    m, p = local.size, U.shape[1]
    nm = Q.shape[2]
    N = 6 + nm
    r = scratch(3)
    psi = scratch(3)
    Tp = scratch((3, 3))
    Ex = scratch((3, 3))
    dT = scratch((3, 3))
    dTu = scratch((3, 3))
    Ma = scratch((3, 3))
    M2 = scratch((3, 3))
    av = scratch(3)
    uvec = scratch(3)
    ej = scratch_zeros(3)
    tmp = scratch(3)
    RPt = np.empty((3, nm))
    RGam = np.empty((3, nm))
    nu = scratch(6)
    Jv = np.empty((6, N + 3 + nm))
    Bm = np.empty((6, N))
    Z1 = np.empty((nm, 3))
    Z3 = np.empty((nm, 3))
    G3 = scratch((3, 3))     # T(psi)^T R^T
    dz = np.empty((3, N + 3 + nm))
    Xm = scratch((3, 3))
    for q in range(m):
        b = local[q]
        for k in range(p):
            Rm = R[b, k]
            Tm = T[b, k]
            W = U[b, k, bw:bw + N]
            if rate:
                _velocity(Rm, Tm, W, Q[b, k], c[q], Pt[q], Pr[q], nu, Jv, r, psi, Tp, RPt, RGam, Ex, dT, av)
            else:
                _geometry(Rm, Q[b, k], c[q], Pt[q], Pr[q], r, psi, Tp, RPt, RGam, Ex)
            f0, f1, f2 = wrench[q, k, 0], wrench[q, k, 1], wrench[q, k, 2]
            m0, m1, m2 = wrench[q, k, 3], wrench[q, k, 4], wrench[q, k, 5]
            bt = BT[q, k]
            _velocity_map(r, RPt, RGam, Bm)  # B^T: the transpose of the velocity map
            for a in range(N):
                for e in range(6):
                    bt[a, e] = Bm[e, a]
            # ---- own Jacobian d(B^T w)/d(theta, q), w fixed
            dd = d[q, k]
            for a in range(dd.shape[0]):
                for e in range(3 + nm):
                    dd[a, e] = 0.0
            # rows 3:6, theta: skew(f) skew(r) T = (r f^T - (f . r) I) T
            fr = f0 * r[0] + f1 * r[1] + f2 * r[2]
            for a in range(3):
                for e in range(3):
                    Xm[a, e] = r[a] * (f0 if e == 0 else (f1 if e == 1 else f2))
                Xm[a, a] -= fr
            for a in range(3):
                for e in range(3):
                    dd[3 + a, e] = Xm[a, 0] * Tm[0, e] + Xm[a, 1] * Tm[1, e] + Xm[a, 2] * Tm[2, e]
            # rows 3:6, q: -skew(f) R Pt
            for kk in range(nm):
                x0, x1, x2 = RPt[0, kk], RPt[1, kk], RPt[2, kk]
                dd[3, 3 + kk] = -(f1 * x2 - f2 * x1)
                dd[4, 3 + kk] = -(f2 * x0 - f0 * x2)
                dd[5, 3 + kk] = -(f0 * x1 - f1 * x0)
            # rows 6:, theta: ((R Pt)^T skew(f) + (R Gamma)^T skew(m)) T; row kk = ((R Pt)_kk x f + (R Gam)_kk x m)^T T
            for kk in range(nm):
                y0 = (RPt[1, kk] * f2 - RPt[2, kk] * f1) + (RGam[1, kk] * m2 - RGam[2, kk] * m1)
                y1 = (RPt[2, kk] * f0 - RPt[0, kk] * f2) + (RGam[2, kk] * m0 - RGam[0, kk] * m2)
                y2 = (RPt[0, kk] * f1 - RPt[1, kk] * f0) + (RGam[0, kk] * m1 - RGam[1, kk] * m0)
                for e in range(3):
                    dd[6 + kk, e] = y0 * Tm[0, e] + y1 * Tm[1, e] + y2 * Tm[2, e]
            # rows 6:, q: Pr^T dTu Pr, dTu = d(T(psi)^T u)/dpsi, u = R^T m
            for a in range(3):
                uvec[a] = Rm[0, a] * m0 + Rm[1, a] * m1 + Rm[2, a] * m2
            beta, gamma, beta_x, gamma_x = tangent_coeffs(psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2])
            d_quadratic(psi, uvec, -beta, gamma, -beta_x, gamma_x, dTu)
            _pr_form(Pr[q], dTu, dd, np.int64(6), np.int64(3), 1.0)
            if not rate:
                continue
            # ---- multiplier-map rate: h c_q = h Cw w on rows N .. N + nm
            # Ma[:, j] = d(T^T e_j)/dpsi . a
            for j in range(3):
                ej[0] = 0.0
                ej[1] = 0.0
                ej[2] = 0.0
                ej[j] = 1.0
                d_quadratic(psi, ej, -beta, gamma, -beta_x, gamma_x, M2)
                for i in range(3):
                    Ma[i, j] = M2[i, 0] * av[0] + M2[i, 1] * av[1] + M2[i, 2] * av[2]
            for a in range(3):
                for e in range(3):
                    G3[a, e] = Tp[0, a] * Rm[e, 0] + Tp[1, a] * Rm[e, 1] + Tp[2, a] * Rm[e, 2]
            nv0, nv1, nv2 = nu[0], nu[1], nu[2]
            o0, o1, o2 = W[3], W[4], W[5]
            # Cw[:, :3] = Pr^T G3 skew(nu_v) + Pt^T R^T skew(om); Cw[:, 3:] = Pr^T G3 skew(om) - Pr^T Ma R^T
            # per mode: z1 = G3^T Pr_kk (so Pr_kk^T G3 X = z1^T X), z2 = R Pt_kk, z3 = R Ma^T Pr_kk
            for kk in range(nm):
                p0, p1, p2 = Pr[q, 0, kk], Pr[q, 1, kk], Pr[q, 2, kk]
                ma0 = Ma[0, 0] * p0 + Ma[1, 0] * p1 + Ma[2, 0] * p2
                ma1 = Ma[0, 1] * p0 + Ma[1, 1] * p1 + Ma[2, 1] * p2
                ma2 = Ma[0, 2] * p0 + Ma[1, 2] * p1 + Ma[2, 2] * p2
                for a in range(3):
                    Z1[kk, a] = G3[0, a] * p0 + G3[1, a] * p1 + G3[2, a] * p2
                    Z3[kk, a] = Rm[a, 0] * ma0 + Rm[a, 1] * ma1 + Rm[a, 2] * ma2
            for kk in range(nm):
                z10, z11, z12 = Z1[kk, 0], Z1[kk, 1], Z1[kk, 2]
                z20, z21, z22 = RPt[0, kk], RPt[1, kk], RPt[2, kk]
                z30, z31, z32 = Z3[kk, 0], Z3[kk, 1], Z3[kk, 2]
                # z^T skew(w) = (z x w)^T
                c0, c1, c2 = _x(z10, z11, z12, nv0, nv1, nv2)
                e0, e1, e2 = _x(z20, z21, z22, o0, o1, o2)
                row = bt[N + kk]
                row[0] = h * (c0 + e0)
                row[1] = h * (c1 + e1)
                row[2] = h * (c2 + e2)
                c0, c1, c2 = _x(z10, z11, z12, o0, o1, o2)
                row[3] = h * (c0 - z30)
                row[4] = h * (c1 - z31)
                row[5] = h * (c2 - z32)
            # Jacobian of c_q with w fixed, columns [w (N), theta (3), q (nm)]
            zv0, zv1, zv2 = _x(nv0, nv1, nv2, f0, f1, f2)
            zo0, zo1, zo2 = _x(o0, o1, o2, m0, m1, m2)
            z0, z1, z2 = zv0 + zo0, zv1 + zo1, zv2 + zo2
            y0, y1, y2 = _x(o0, o1, o2, f0, f1, f2)
            # dz = -skew(wf) Jv[:3, :]; dz[:, 3:6] -= skew(wm)
            for e in range(N + 3 + nm):
                j0, j1, j2 = Jv[0, e], Jv[1, e], Jv[2, e]
                dz[0, e] = -(f1 * j2 - f2 * j1)
                dz[1, e] = -(f2 * j0 - f0 * j2)
                dz[2, e] = -(f0 * j1 - f1 * j0)
            dz[0, 4] += m2
            dz[0, 5] -= m1
            dz[1, 3] -= m2
            dz[1, 5] += m0
            dz[2, 3] += m1
            dz[2, 4] -= m0
            # theta part: (Pr^T G3 skew(z) + Pt^T R^T skew(y) - Pr^T Ma R^T skew(wm)) T
            # q part: Pr^T (d(T^T R^T z)/dpsi - tangent_T_second(psi, u, a)) Pr
            for a in range(3):
                tmp[a] = Rm[0, a] * z0 + Rm[1, a] * z1 + Rm[2, a] * z2
            d_quadratic(psi, tmp, -beta, gamma, -beta_x, gamma_x, dT)
            tangent_T_second(psi, uvec, av, M2)
            for a in range(3):
                for e in range(3):
                    dT[a, e] -= M2[a, e]
            dvv = dv[q, k]
            for a in range(dvv.shape[0]):
                for e in range(N + 3 + nm):
                    dvv[a, e] = 0.0
            for kk in range(nm):
                z10, z11, z12 = Z1[kk, 0], Z1[kk, 1], Z1[kk, 2]
                z20, z21, z22 = RPt[0, kk], RPt[1, kk], RPt[2, kk]
                z30, z31, z32 = Z3[kk, 0], Z3[kk, 1], Z3[kk, 2]
                row = dvv[N + kk]
                for e in range(N + 3 + nm):
                    row[e] = h * (z10 * dz[0, e] + z11 * dz[1, e] + z12 * dz[2, e])
                # theta
                a0, a1, a2 = _x(z10, z11, z12, z0, z1, z2)
                b0, b1, b2 = _x(z20, z21, z22, y0, y1, y2)
                c0, c1, c2 = _x(z30, z31, z32, m0, m1, m2)
                s0, s1, s2 = a0 + b0 - c0, a1 + b1 - c1, a2 + b2 - c2
                for e in range(3):
                    row[N + e] += h * (s0 * Tm[0, e] + s1 * Tm[1, e] + s2 * Tm[2, e])
                # omega columns: Pt^T R^T (-skew(wf)): row = -(R Pt_kk x wf)^T
                x0, x1, x2 = _x(z20, z21, z22, f0, f1, f2)
                row[3] -= h * x0
                row[4] -= h * x1
                row[5] -= h * x2
            # q part and the qdot columns: Pr^T (dT - T2) Pr on q, -Pr^T dTu Pr on qdot
            _pr_form(Pr[q], dT, dvv, N, N + 3, h)
            _pr_form(Pr[q], dTu, dvv, N, np.int64(6), -h)


@jit_kernel
def _pr_form(Pr, Mx, out, r0, c0, fac):
    """``out[r0 + i, c0 + j] += fac (Pr^T Mx Pr)[i, j]``."""
    nm = Pr.shape[1]
    MP = np.empty((3, nm))
    for a in range(3):
        for j in range(nm):
            MP[a, j] = Mx[a, 0] * Pr[0, j] + Mx[a, 1] * Pr[1, j] + Mx[a, 2] * Pr[2, j]
    for i in range(nm):
        for j in range(nm):
            out[r0 + i, c0 + j] += fac * (Pr[0, i] * MP[0, j] + Pr[1, i] * MP[1, j] + Pr[2, i] * MP[2, j])


# ============================================================================ node level
@jit_kernel
def node_attach(x, R, q, local, bodies, c, A, Pt, Pr, xo, Ro, B):
    """At a time node: attachment positions ``xo (m,3)``, frames ``Ro (m,3,3)`` and the velocity maps
    ``B (m,6,N)`` (``nu = B w``) from the bodies' ``x (nb,3)``, ``R (nb,3,3)`` (model indices
    ``bodies[local]``) and the group's modal coordinates ``q (n,nm)`` (``B`` of size 0: skipped)."""
    m = local.size
    nm = q.shape[1]
    r = scratch(3)
    psi = scratch(3)
    Tp = scratch((3, 3))
    Ex = scratch((3, 3))
    RE = scratch((3, 3))
    RPt = np.empty((3, nm))
    RGam = np.empty((3, nm))
    want_b = B.shape[0] > 0
    for k in range(m):
        lb = local[k]
        bb = bodies[lb]
        Rm = R[bb]
        _geometry(Rm, q[lb], c[k], Pt[k], Pr[k], r, psi, Tp, RPt, RGam, Ex)
        for a in range(3):
            xo[k, a] = x[bb, a] + r[a]
            for e in range(3):
                RE[a, e] = Rm[a, 0] * Ex[0, e] + Rm[a, 1] * Ex[1, e] + Rm[a, 2] * Ex[2, e]
        for a in range(3):
            for e in range(3):
                Ro[k, a, e] = RE[a, 0] * A[k, 0, e] + RE[a, 1] * A[k, 1, e] + RE[a, 2] * A[k, 2, e]
        if not want_b:
            continue
        _velocity_map(r, RPt, RGam, B[k])


@jit_kernel
def node_interfaces(x, R, q, w, local, bodies, c, A, Pt, Pr, xo, Ro, nu):
    """At a time node: the attachments' positions ``xo (m,3)`` and frames ``Ro (m,3,3)``
    (:func:`node_attach`) and their velocities ``nu (m,6) = B w[local]`` for the group's velocities
    ``w (n,N)`` (the modal bodies' interface outputs)."""
    m, N = local.size, w.shape[1]
    B = np.empty((m, 6, N))
    node_attach(x, R, q, local, bodies, c, A, Pt, Pr, xo, Ro, B)
    for k in range(m):
        lb = local[k]
        for d in range(6):
            s = 0.0
            for e in range(N):
                s += B[k, d, e] * w[lb, e]
            nu[k, d] = s
