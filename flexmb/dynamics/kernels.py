"""Compiled kernels (numba) for the hot per-type batches of one time-element evaluation.

Each kernel loops over the bodies (or joints) of one type and the internal points of the time
element and computes the residual rows and the Jacobian values of that batch in one call, so the
cost of an evaluation no longer carries hundreds of small NumPy calls per element type.  The
sparsity structure (which value goes to which row and column) is fixed per model and built once in
NumPy next to each kernel's caller (e.g. :meth:`flexmb.dynamics.bodies.rigid.RigidBodies.residual`);
only values are computed here.

The rotation helpers reproduce :mod:`flexmb.rotations` point by point (power series in
``x = |theta|^2`` below ``x = 4``, closed forms above, the same tables), so the kernels agree with
the NumPy functions to round-off (``tests/test_kernels.py``).

Compilation: ``nopython``, ``fastmath`` off, ``cache=True`` (compiled once per machine and
signature, then loaded from the on-disk cache: a second process pays no compilation).  When
numba cannot write a cache next to this module (read-only install) it uses ``NUMBA_CACHE_DIR``
or the user cache directory; when no cache location is usable the kernels compile in memory
once per process and a note is logged.
"""
from __future__ import annotations

import logging

import numpy as np
from numba import njit

from flexmb import rotations as _rot
from flexmb.numba_cache import refresh as _refresh_cache

log = logging.getLogger(__name__)
_refresh_cache()  # stale cached kernels of changed callees removed first (flexmb/numba_cache.py)

_SER = _rot._SERIES
S_ALPHA = np.ascontiguousarray(_SER["alpha"])
S_BETA = np.ascontiguousarray(_SER["beta"])
S_GAMMA = np.ascontiguousarray(_SER["gamma"])
S_DELTA = np.ascontiguousarray(_SER["delta"])
S_DELTA_X = np.ascontiguousarray(_SER["delta_x"])
X_SERIES = float(_rot._X_SERIES)


def _jit(fn):
    """``njit(cache=True)``; without a usable cache location, ``njit`` with a logged note."""
    try:
        return njit(cache=True, fastmath=False, nogil=True)(fn)
    except RuntimeError as exc:  # numba: "cannot cache function ...: no locator available"
        log.info("numba cannot cache %s (%s); set NUMBA_CACHE_DIR to a writable directory to avoid "
                 "compiling it in every process", fn.__name__, exc)
        return njit(cache=False, fastmath=False, nogil=True)(fn)


# ============================================================================ rotation helpers
@_jit
def _horner(c, x):
    out = c[c.size - 1]
    for k in range(c.size - 2, -1, -1):
        out = out * x + c[k]
    return out


@_jit
def coeffs_exp_tangent(x):
    """``alpha = sin a / a``, ``beta = (1 - cos a)/a^2``, ``gamma = (a - sin a)/a^3`` at ``x = a^2``."""
    if x < X_SERIES:
        return _horner(S_ALPHA, x), _horner(S_BETA, x), _horner(S_GAMMA, x)
    a = np.sqrt(x)
    alpha = np.sin(a) / a
    sh = np.sin(0.5 * a) / a
    beta = 2.0 * sh * sh
    return alpha, beta, (1.0 - alpha) / x


@_jit
def coeffs_delta(x):
    """``delta = (1 - (a/2) cot(a/2)) / a^2`` and ``d delta / dx`` at ``x = a^2``."""
    if x < X_SERIES:
        return _horner(S_DELTA, x), _horner(S_DELTA_X, x)
    a = np.sqrt(x)
    sh = np.sin(0.5 * a)
    kappa = 0.5 * a * np.cos(0.5 * a) / sh
    delta = (1.0 - kappa) / x
    kappa_x = kappa / (2.0 * x) - 1.0 / (8.0 * sh * sh)
    return delta, -(kappa_x + delta) / x


@_jit
def quadratic(c0, c1, c2, t, out):
    """``out = c0 I + c1 skew(t) + c2 t t^T`` (3x3)."""
    for a in range(3):
        for b in range(3):
            out[a, b] = c2 * t[a] * t[b]
        out[a, a] += c0
    out[0, 1] -= c1 * t[2]
    out[0, 2] += c1 * t[1]
    out[1, 0] += c1 * t[2]
    out[1, 2] -= c1 * t[0]
    out[2, 0] -= c1 * t[1]
    out[2, 1] += c1 * t[0]


@_jit
def exp_tangent(t, R, T):
    """``R = exp(t)``, ``T = tangent(t)`` (3x3 each)."""
    x = t[0] * t[0] + t[1] * t[1] + t[2] * t[2]
    alpha, beta, gamma = coeffs_exp_tangent(x)
    quadratic(1.0 - beta * x, alpha, beta, t, R)
    quadratic(alpha, beta, gamma, t, T)


@_jit
def tangent_inv_and_d(t, v, Ti, dTi):
    """``Ti = T(t)^-1`` and ``dTi = d(T(t)^-1 v)/dt`` (3x3 each), as :func:`flexmb.rotations.d_tangent_inv`."""
    x = t[0] * t[0] + t[1] * t[1] + t[2] * t[2]
    delta, delta_x = coeffs_delta(x)
    quadratic(1.0 - delta * x, -0.5, delta, t, Ti)
    tv = t[0] * v[0] + t[1] * v[1] + t[2] * v[2]
    txv0 = t[1] * v[2] - t[2] * v[1]
    txv1 = t[2] * v[0] - t[0] * v[2]
    txv2 = t[0] * v[1] - t[1] * v[0]
    ttv0 = t[1] * txv2 - t[2] * txv1
    ttv1 = t[2] * txv0 - t[0] * txv2
    ttv2 = t[0] * txv1 - t[1] * txv0
    ttv = (ttv0, ttv1, ttv2)
    # -c1 skew(v) with c1 = -1/2; c2 (tv I + t v^T - 2 v t^T); 2 c2_x ttv t^T (c1_x = 0)
    for a in range(3):
        for b in range(3):
            dTi[a, b] = delta * (t[a] * v[b] - 2.0 * v[a] * t[b]) + 2.0 * (delta_x * ttv[a]) * t[b]
        dTi[a, a] += delta * tv
    dTi[0, 1] += -0.5 * v[2]
    dTi[0, 2] += 0.5 * v[1]
    dTi[1, 0] += 0.5 * v[2]
    dTi[1, 2] += -0.5 * v[0]
    dTi[2, 0] += -0.5 * v[1]
    dTi[2, 1] += 0.5 * v[0]


# ============================================================================ rigid bodies
@_jit
def rigid_kinematics(E, x1, R1, Ug, bx, bth, R, T, UX, UR, UT):
    """Kinematics of a rigid group at the Gauss points and at the constraint points.

    ``E (p, p+1)`` constraint-point matrix of the time element, ``x1 (n,3)``, ``R1 (n,3,3)`` start
    values, ``Ug (n,p,slots)`` the group's unknowns (``x`` at slot ``bx``, ``theta`` at ``bth``); out: ``R = exp(theta_i) R1``, ``T = T(theta_i)``
    at the Gauss points, ``UX``, ``UR``, ``UT`` the same of the polynomials at the constraint points
    (shapes (n,p,3) and (n,p,3,3)).
    """
    n, p = Ug.shape[0], Ug.shape[1]
    Rt = np.empty((3, 3))
    th = np.empty(3)
    for b in range(n):
        for i in range(p):
            exp_tangent(Ug[b, i, bth:bth + 3], Rt, T[b, i])
            for c in range(3):
                for d in range(3):
                    R[b, i, c, d] = Rt[c, 0] * R1[b, 0, d] + Rt[c, 1] * R1[b, 1, d] + Rt[c, 2] * R1[b, 2, d]
            for d in range(3):
                s = E[i, 0] * x1[b, d]
                u = 0.0
                for j in range(p):
                    s += E[i, j + 1] * Ug[b, j, bx + d]
                    u += E[i, j + 1] * Ug[b, j, bth + d]
                UX[b, i, d] = s
                th[d] = u
            exp_tangent(th, Rt, UT[b, i])
            for c in range(3):
                for d in range(3):
                    UR[b, i, c, d] = Rt[c, 0] * R1[b, 0, d] + Rt[c, 1] * R1[b, 1, d] + Rt[c, 2] * R1[b, 2, d]


#: Jacobian entries of one rigid body at one internal point, after the 12 p couplings of the time
#: element (``D``): (row slot, column slot) of the 66 local entries, in the kernel's order.
def _rigid_local_entries():
    rows, cols = [], []

    def block(r0, c0, nr, nc, diag=False):
        for a in range(nr):
            for c in range(nc):
                if diag and a != c:
                    continue
                rows.append(r0 + a)
                cols.append(c0 + c)

    block(0, 12, 3, 3, diag=True)     # x / v: -h
    block(3, 3, 3, 3)                 # theta / theta: -h d(T^-1 om)/dtheta
    block(3, 15, 3, 3)                # theta / om: -h T^-1
    block(9, 6, 3, 3)                 # pi_m / pi_f: h skew(v)
    block(9, 12, 3, 3)                # pi_m / v: -h skew(pi_f)
    block(12, 12, 3, 3, diag=True)    # w_v / v: m
    block(15, 15, 3, 3)               # w_om / om: J
    block(15, 3, 3, 3)                # w_om / theta: (J skew(om) - skew(J om)) T
    block(12, 6, 6, 6, diag=True)     # w / pi: -1
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


RIGID_LOCAL_ROWS, RIGID_LOCAL_COLS = _rigid_local_entries()
RIGID_N_LOCAL = RIGID_LOCAL_ROWS.size  # 66


def rigid_jacobian_indices(body_start, p: int, slots: int = 18, sl=(0, 3, 6, 12)):
    """Rows and columns ``(n, p, 12 p + 66)`` of the values written by :func:`rigid_residual` for
    bodies whose blocks start at ``body_start (n,)`` with ``slots`` unknowns per point, ``x``,
    ``theta``, ``pi``, ``w`` at the first slots ``sl``."""
    body_start = np.asarray(body_start, dtype=np.int64)
    bx, bth, bpi, bw = sl
    # standard slot (x 0-2, theta 3-5, pi 6-11, w 12-17) -> the body type's slot
    smap = np.concatenate([bx + np.arange(3), bth + np.arange(3), bpi + np.arange(6), bw + np.arange(6)])
    i = np.arange(p)
    # couplings: for j, then slots x(3), theta(3), pi(6): (i, s) <- (j, s)
    s12 = smap[:12]
    rows_d = np.broadcast_to(i[:, None, None] * slots + s12[None, None, :], (p, p, 12)).reshape(p, 12 * p)
    cols_d = np.broadcast_to(i[None, :, None] * slots + s12[None, None, :], (p, p, 12)).reshape(p, 12 * p)
    rows_l = i[:, None] * slots + smap[RIGID_LOCAL_ROWS][None, :]
    cols_l = i[:, None] * slots + smap[RIGID_LOCAL_COLS][None, :]
    rows = np.concatenate([rows_d, rows_l], axis=1)
    cols = np.concatenate([cols_d, cols_l], axis=1)
    return body_start[:, None, None] + rows[None], body_start[:, None, None] + cols[None]


@_jit
def rigid_residual(D, h, x1, pi1, Ug, R, T, mass, J0, g, sl, r, vals, jac):
    """Rows ``r (n,p,18)`` of a rigid group and, if ``jac``, the Jacobian values
    ``vals (n, p, 12 p + 66)`` in the order of :func:`rigid_jacobian_indices` (see
    :mod:`flexmb.dynamics.bodies.rigid` for the equations).

    ``D (p, p+1)`` derivative matrix, ``h`` [s], ``x1 (n,3)``, ``pi1 (n,6)`` start values, ``Ug
    (n,p,18)`` unknowns, ``R``, ``T (n,p,3,3)`` rotations and tangent operators at the Gauss points, ``mass (n,)``, ``J0
    (n,3,3)`` inertia in body axes, ``g (3,)`` gravity, ``sl = (BX, BTH, BPI, BW)`` the first slots
    of ``x``, ``theta``, ``pi``, ``w`` (rows use the same slots).
    """
    n, p = Ug.shape[0], Ug.shape[1]
    bx, bth, bpi, bw = sl[0], sl[1], sl[2], sl[3]
    Ti = np.empty((3, 3))
    dTi = np.empty((3, 3))
    Jm = np.empty((3, 3))
    RJ = np.empty((3, 3))
    Jw = np.empty(3)
    Mm = np.empty((3, 3))
    for b in range(n):
        m = mass[b]
        for i in range(p):
            u = Ug[b, i]
            # ---- kinematics of x, momentum balance: D couplings
            for d in range(3):
                sx = D[i, 0] * x1[b, d]
                st = 0.0
                for j in range(p):
                    sx += D[i, j + 1] * Ug[b, j, bx + d]
                    st += D[i, j + 1] * Ug[b, j, bth + d]
                r[b, i, bx + d] = sx - h * u[bw + d]
                r[b, i, bth + d] = st
            for d in range(6):
                sp = D[i, 0] * pi1[b, d]
                for j in range(p):
                    sp += D[i, j + 1] * Ug[b, j, bpi + d]
                r[b, i, bpi + d] = sp
            v0, v1, v2 = u[bw], u[bw + 1], u[bw + 2]
            o0, o1, o2 = u[bw + 3], u[bw + 4], u[bw + 5]
            f0, f1, f2 = u[bpi], u[bpi + 1], u[bpi + 2]
            # gyroscopic term h (0, v x pi_f) and gravity
            r[b, i, bpi + 3] += h * (v1 * f2 - v2 * f1)
            r[b, i, bpi + 4] += h * (v2 * f0 - v0 * f2)
            r[b, i, bpi + 5] += h * (v0 * f1 - v1 * f0)
            for d in range(3):
                r[b, i, bpi + d] -= h * m * g[d]
            # incremental rotation: -h T^-1(theta) omega
            tangent_inv_and_d(u[bth:bth + 3], u[bw + 3:bw + 6], Ti, dTi)
            for d in range(3):
                r[b, i, bth + d] -= h * (Ti[d, 0] * o0 + Ti[d, 1] * o1 + Ti[d, 2] * o2)
            # constitutive law: (m v, J om) - pi, J = R J0 R^T
            for c in range(3):
                for d in range(3):
                    RJ[c, d] = R[b, i, c, 0] * J0[b, 0, d] + R[b, i, c, 1] * J0[b, 1, d] + R[b, i, c, 2] * J0[b, 2, d]
            for c in range(3):
                for d in range(3):
                    Jm[c, d] = RJ[c, 0] * R[b, i, d, 0] + RJ[c, 1] * R[b, i, d, 1] + RJ[c, 2] * R[b, i, d, 2]
            for d in range(3):
                Jw[d] = Jm[d, 0] * o0 + Jm[d, 1] * o1 + Jm[d, 2] * o2
                r[b, i, bw + d] = m * u[bw + d] - u[bpi + d]
                r[b, i, bw + 3 + d] = Jw[d] - u[bpi + 3 + d]
            if not jac:
                continue
            # ---- Jacobian values (order of rigid_jacobian_indices)
            out = vals[b, i]
            k = 0
            for j in range(p):
                for s in range(12):
                    out[k] = D[i, j + 1]
                    k += 1
            for d in range(3):
                out[k] = -h
                k += 1
            for a in range(3):
                for c in range(3):
                    out[k] = -h * dTi[a, c]
                    k += 1
            for a in range(3):
                for c in range(3):
                    out[k] = -h * Ti[a, c]
                    k += 1
            # h skew(v)
            sv = ((0.0, -v2, v1), (v2, 0.0, -v0), (-v1, v0, 0.0))
            for a in range(3):
                for c in range(3):
                    out[k] = h * sv[a][c]
                    k += 1
            sf = ((0.0, -f2, f1), (f2, 0.0, -f0), (-f1, f0, 0.0))
            for a in range(3):
                for c in range(3):
                    out[k] = -h * sf[a][c]
                    k += 1
            for d in range(3):
                out[k] = m
                k += 1
            for a in range(3):
                for c in range(3):
                    out[k] = Jm[a, c]
                    k += 1
            # (J skew(om) - skew(J om)) T(theta)
            so = ((0.0, -o2, o1), (o2, 0.0, -o0), (-o1, o0, 0.0))
            sj = ((0.0, -Jw[2], Jw[1]), (Jw[2], 0.0, -Jw[0]), (-Jw[1], Jw[0], 0.0))
            for a in range(3):
                for c in range(3):
                    Mm[a, c] = Jm[a, 0] * so[0][c] + Jm[a, 1] * so[1][c] + Jm[a, 2] * so[2][c] - sj[a][c]
            Tm = T[b, i]
            for a in range(3):
                for c in range(3):
                    out[k] = Mm[a, 0] * Tm[0, c] + Mm[a, 1] * Tm[1, c] + Mm[a, 2] * Tm[2, c]
                    k += 1
            for d in range(6):
                out[k] = -1.0
                k += 1


# ============================================================================ joints
@_jit
def joint_rows(E, D, h, s1, lam1, Rr, Jv, xa, Ra, xb, Rb, Rag, nua, nub, sl, r, Rrt, dphi, dA, dB, dpsi, jac):
    """Joint rows common to every joint type, batched over joints and points (the equations are
    listed in :mod:`flexmb.dynamics.elements.joints`): relative position and rotation at the constraint
    points, multiplier definition and attachment velocities at the Gauss points.

    In: ``E``, ``D (p, p+1)``, ``h``; start values ``s1 (nj,3)``, ``lam1 (nj,6)``, ``Rr (nj,3,3)``;
    the joints' unknowns ``Jv (nj,p,30)``; attachment frames at the constraint points ``xa``, ``xb
    (nj,p,3)``, ``Ra``, ``Rb (nj,p,3,3)``; frame A at the Gauss points ``Rag``; attachment
    velocities ``nua``, ``nub (nj,p,6)``; ``sl = (JS, JPHI, JLAM, JQ, JNA, JNB)`` first slots.
    Out: rows ``r (nj,p,30)`` (all but the constitutive law), ``Rrt = Rr exp(u_phi)``, and if
    ``jac``: ``dphi = d(r_phi)/d(u_phi)``, ``dA``, ``dB = d(r_s, r_phi)/d(dx, psi)`` of sides A
    and B, ``dpsi = d(r_lam)/d(psi_A)`` (the other Jacobian blocks are simple functions of the
    unknowns and stay with the caller).
    """
    nj, p = Jv.shape[0], Jv.shape[1]
    js, jphi, jlam, jq, jna, jnb = sl[0], sl[1], sl[2], sl[3], sl[4], sl[5]
    ex = np.empty((3, 3))
    T = np.empty((3, 3))
    M = np.empty((3, 3))
    Em = np.empty((3, 3))
    DL = np.empty((3, 3))
    up = np.empty(3)
    us = np.empty(3)
    d = np.empty(3)
    for j in range(nj):
        for k in range(p):
            # polynomials of s and phi at the constraint point k
            for c in range(3):
                a = E[k, 0] * s1[j, c]
                b = 0.0
                for q in range(p):
                    a += E[k, q + 1] * Jv[j, q, js + c]
                    b += E[k, q + 1] * Jv[j, q, jphi + c]
                us[c] = a
                up[c] = b
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


# ============================================================================ rigid attachments
@_jit
def _rc(R, c, r):
    for a in range(3):
        r[a] = R[a, 0] * c[0] + R[a, 1] * c[1] + R[a, 2] * c[2]


@_jit
def rigid_attach_pose(X, R, T, local, c, A, E, cons, x, Ra, J):
    """Attachment frames of rigid bodies: ``x = X + R c``, ``Ra = R A`` at ``p`` points and the
    Jacobian of ``(dx, psi)`` with respect to the body's ``(x, theta)``.

    ``X (n,p,3)``, ``R``, ``T (n,p,3,3)`` of the group at the points, ``local (m,)`` body of each
    attachment, ``c (m,3)`` point from the centre of mass, ``A (m,3,3)`` frame (body axes).  Gauss
    points (``cons`` False): ``J (m,p,6,6)`` on the same point's unknowns; constraint points:
    ``J (m,p,6,6p)``, the block weighted by ``E[k, 1+j]`` for internal point ``j``.
    """
    m, p = local.size, X.shape[1]
    r = np.empty(3)
    for q in range(m):
        b = local[q]
        for k in range(p):
            _rc(R[b, k], c[q], r)
            for a in range(3):
                x[q, k, a] = X[b, k, a] + r[a]
                for e in range(3):
                    Ra[q, k, a, e] = R[b, k, a, 0] * A[q, 0, e] + R[b, k, a, 1] * A[q, 1, e] + R[b, k, a, 2] * A[q, 2, e]
            # blk = [[I, -skew(r) T], [0, T]]; -skew(r) T column e = -(r x T[:, e])
            nj = p if cons else 1
            for j in range(nj):
                w = E[k, j + 1] if cons else 1.0
                o = 6 * j
                for a in range(3):
                    for e in range(3):
                        J[q, k, a, o + e] = w if a == e else 0.0
                        J[q, k, 3 + a, o + e] = 0.0
                        J[q, k, 3 + a, o + 3 + e] = w * T[b, k, a, e]
                for e in range(3):
                    t0, t1, t2 = T[b, k, 0, e], T[b, k, 1, e], T[b, k, 2, e]
                    J[q, k, 0, o + 3 + e] = -w * (r[1] * t2 - r[2] * t1)
                    J[q, k, 1, o + 3 + e] = -w * (r[2] * t0 - r[0] * t2)
                    J[q, k, 2, o + 3 + e] = -w * (r[0] * t1 - r[1] * t0)


@_jit
def rigid_attach_velocity(U, bw, R, T, local, c, nu, J):
    """Attachment velocities ``nu = (v + omega x r, omega) (m,p,6)`` of rigid bodies (``r = R c``)
    and ``J (m,p,6,9)`` with respect to ``(w(6), theta(3))`` of the same point: ``[[I, -skew(r),
    -skew(om) skew(r) T], [0, I, 0]]``.  ``U (n,p,slots)`` the group's unknowns, ``w`` at slot ``bw``."""
    m, p = local.size, U.shape[1]
    r = np.empty(3)
    S = np.empty((3, 3))
    for q in range(m):
        b = local[q]
        for k in range(p):
            _rc(R[b, k], c[q], r)
            v0, v1, v2 = U[b, k, bw], U[b, k, bw + 1], U[b, k, bw + 2]
            o0, o1, o2 = U[b, k, bw + 3], U[b, k, bw + 4], U[b, k, bw + 5]
            nu[q, k, 0] = v0 + (o1 * r[2] - o2 * r[1])
            nu[q, k, 1] = v1 + (o2 * r[0] - o0 * r[2])
            nu[q, k, 2] = v2 + (o0 * r[1] - o1 * r[0])
            nu[q, k, 3] = o0
            nu[q, k, 4] = o1
            nu[q, k, 5] = o2
            for a in range(6):
                for e in range(9):
                    J[q, k, a, e] = 0.0
            for a in range(3):
                J[q, k, a, a] = 1.0
                J[q, k, 3 + a, 3 + a] = 1.0
            J[q, k, 0, 4] = r[2]
            J[q, k, 0, 5] = -r[1]
            J[q, k, 1, 3] = -r[2]
            J[q, k, 1, 5] = r[0]
            J[q, k, 2, 3] = r[1]
            J[q, k, 2, 4] = -r[0]
            # S = skew(om) skew(r) = r om^T - (om . r) I
            orr = o0 * r[0] + o1 * r[1] + o2 * r[2]
            om = (o0, o1, o2)
            for a in range(3):
                for e in range(3):
                    S[a, e] = r[a] * om[e]
                S[a, a] -= orr
            for a in range(3):
                for e in range(3):
                    J[q, k, a, 6 + e] = -(S[a, 0] * T[b, k, 0, e] + S[a, 1] * T[b, k, 1, e] + S[a, 2] * T[b, k, 2, e])


@_jit
def rigid_wrench_map(R, T, local, c, wrench, out, BT, own):
    """Generalized force of wrenches ``(f, m about the attachment) (m,p,6)`` on rigid bodies:
    ``out = B^T w = (f, m + r x f)`` (m,p,6), ``BT (m,p,6,6)`` and the lever arm's own term
    ``own = d(B^T w)/d theta (m,p,6,3)`` (``[0; skew(f) skew(r) T]``); ``own`` of size 0: skipped."""
    m, p = local.size, R.shape[1]
    r = np.empty(3)
    S = np.empty((3, 3))
    do_own = own.shape[0] > 0
    for q in range(m):
        b = local[q]
        for k in range(p):
            _rc(R[b, k], c[q], r)
            f0, f1, f2 = wrench[q, k, 0], wrench[q, k, 1], wrench[q, k, 2]
            out[q, k, 0] = f0
            out[q, k, 1] = f1
            out[q, k, 2] = f2
            out[q, k, 3] = wrench[q, k, 3] + (r[1] * f2 - r[2] * f1)
            out[q, k, 4] = wrench[q, k, 4] + (r[2] * f0 - r[0] * f2)
            out[q, k, 5] = wrench[q, k, 5] + (r[0] * f1 - r[1] * f0)
            if BT.shape[0] > 0:
                for a in range(6):
                    for e in range(6):
                        BT[q, k, a, e] = 1.0 if a == e else 0.0
                BT[q, k, 3, 1] = -r[2]
                BT[q, k, 3, 2] = r[1]
                BT[q, k, 4, 0] = r[2]
                BT[q, k, 4, 2] = -r[0]
                BT[q, k, 5, 0] = -r[1]
                BT[q, k, 5, 1] = r[0]
            if do_own:
                # skew(f) skew(r) = r f^T - (f . r) I
                fr = f0 * r[0] + f1 * r[1] + f2 * r[2]
                fv = (f0, f1, f2)
                for a in range(3):
                    for e in range(3):
                        S[a, e] = r[a] * fv[e]
                    S[a, a] -= fr
                for a in range(3):
                    for e in range(3):
                        own[q, k, a, e] = 0.0
                        own[q, k, 3 + a, e] = S[a, 0] * T[b, k, 0, e] + S[a, 1] * T[b, k, 1, e] + S[a, 2] * T[b, k, 2, e]
