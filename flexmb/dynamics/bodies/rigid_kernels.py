"""The rigid body's laws, compiled: its equations in modified momenta (rows and Jacobian values), its
attachments (frames, velocities and the wrench map at the points of a time element and at a node), its
node-level physics (inverse mass, kinetic energy, gravity potential, body-frame output) and the end values
of a floating frame.  The one implementation, called by :class:`flexmb.dynamics.bodies.rigid.RigidBodies`
(the body-type contract), by the fused evaluator (:mod:`flexmb.dynamics.solve.fused`) and by the node-level
work; the equations are listed in :mod:`flexmb.dynamics.bodies.rigid`.

Rotations: the helpers of :mod:`flexmb.dynamics.kernels` (the same series and closed forms as
:mod:`flexmb.rotations`, to round-off: ``tests/test_kernels.py``).
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import exp_tangent, jit_kernel, scratch, tangent_inv_and_d  # (jit_kernel: the kernels' compilation)


# ============================================================================ equations
@jit_kernel
def rigid_kinematics(E, x1, R1, Ug, bx, bth, R, T, UX, UR, UT):
    """Kinematics of a rigid group at the Gauss points and at the constraint points.

    ``E (p, p+1)`` constraint-point matrix of the time element, ``x1 (n,3)``, ``R1 (n,3,3)`` start
    values, ``Ug (n,p,slots)`` the group's unknowns (``x`` at slot ``bx``, ``theta`` at ``bth``); out: ``R = exp(theta_i) R1``, ``T = T(theta_i)``
    at the Gauss points, ``UX``, ``UR``, ``UT`` the same of the polynomials at the constraint points
    (shapes (n,p,3) and (n,p,3,3)).
    """
    n, p = Ug.shape[0], Ug.shape[1]
    Rt = scratch((3, 3))
    th = scratch(3)
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


@jit_kernel
def frame_couplings(D, h, x1, Ug, b, i, bx, bth, bw, r):
    """The time element's couplings of a body frame at Gauss point ``i`` (rigid and modal bodies alike):
    ``r_x = D_i0 x1 + sum_j D_ij x_j - h w_i`` and ``r_theta = sum_j D_ij theta_j`` (slots ``bx``,
    ``bth``, ``bw`` of ``Ug (n,p,.)`` and ``r``; ``D (p, p+1)``, ``h`` [s], ``x1 (n,3)`` start positions)."""
    p = Ug.shape[1]
    for d in range(3):
        sx = D[i, 0] * x1[b, d]
        st = 0.0
        for j in range(p):
            sx += D[i, j + 1] * Ug[b, j, bx + d]
            st += D[i, j + 1] * Ug[b, j, bth + d]
        r[b, i, bx + d] = sx - h * Ug[b, i, bw + d]
        r[b, i, bth + d] = st


@jit_kernel
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
    Ti = scratch((3, 3))
    dTi = scratch((3, 3))
    Jm = scratch((3, 3))
    RJ = scratch((3, 3))
    Jw = scratch(3)
    Mm = scratch((3, 3))
    for b in range(n):
        m = mass[b]
        for i in range(p):
            u = Ug[b, i]
            # ---- kinematics of x, momentum balance: D couplings
            frame_couplings(D, h, x1, Ug, b, i, bx, bth, bw, r)
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


# ============================================================================ rigid attachments
@jit_kernel
def lever_map(r, B):
    """``B = [[I, -skew(r)], [0, I]]`` (6 x 6): the velocity map ``nu = B (v, omega)`` of a rigid body's
    attachment at ``r = R c`` from its centre of mass; ``B^T`` maps a wrench (force; moment about the
    attachment) to the generalized force ``(f, m + r x f)``."""
    for a in range(6):
        for e in range(6):
            B[a, e] = 1.0 if a == e else 0.0
    B[0, 4] = r[2]
    B[0, 5] = -r[1]
    B[1, 3] = -r[2]
    B[1, 5] = r[0]
    B[2, 3] = r[1]
    B[2, 4] = -r[0]


@jit_kernel
def skew_skew_T(a, r, T, sgn, out):
    """``out = sgn skew(a) skew(r) T`` (3 x 3), ``skew(a) skew(r) = r a^T - (a . r) I``: the derivative of
    ``a x r`` (``r = R c`` turning with the body, ``T`` its tangent operator) with respect to theta."""
    ar = a[0] * r[0] + a[1] * r[1] + a[2] * r[2]
    for i in range(3):
        for e in range(3):
            s = 0.0
            for c in range(3):
                s += (r[i] * a[c] - (ar if i == c else 0.0)) * T[c, e]
            out[i, e] = sgn * s


@jit_kernel
def _rc(R, c, r):
    for a in range(3):
        r[a] = R[a, 0] * c[0] + R[a, 1] * c[1] + R[a, 2] * c[2]


@jit_kernel
def rigid_attach_pose(X, R, T, local, c, A, E, cons, x, Ra, J):
    """Attachment frames of rigid bodies: ``x = X + R c``, ``Ra = R A`` at ``p`` points and the
    Jacobian of ``(dx, psi)`` with respect to the body's ``(x, theta)``.

    ``X (n,p,3)``, ``R``, ``T (n,p,3,3)`` of the group at the points, ``local (m,)`` body of each
    attachment, ``c (m,3)`` point from the centre of mass, ``A (m,3,3)`` frame (body axes).  Gauss
    points (``cons`` False): ``J (m,p,6,6)`` on the same point's unknowns; constraint points:
    ``J (m,p,6,6p)``, the block weighted by ``E[k, 1+j]`` for internal point ``j``.
    """
    m, p = local.size, X.shape[1]
    r = scratch(3)
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


@jit_kernel
def rigid_attach_velocity(U, bw, R, T, local, c, nu, J):
    """Attachment velocities ``nu = (v + omega x r, omega) (m,p,6)`` of rigid bodies (``r = R c``)
    and ``J (m,p,6,9)`` with respect to ``(w(6), theta(3))`` of the same point: ``[[I, -skew(r),
    -skew(om) skew(r) T], [0, I, 0]]``.  ``U (n,p,slots)`` the group's unknowns, ``w`` at slot ``bw``."""
    m, p = local.size, U.shape[1]
    r = scratch(3)
    S = scratch((3, 3))
    Bm = scratch((6, 6))
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
            lever_map(r, Bm)
            for a in range(6):
                for e in range(6):
                    J[q, k, a, e] = Bm[a, e]
            skew_skew_T(nu[q, k, 3:6], r, T[b, k], -1.0, S)
            for a in range(3):
                for e in range(3):
                    J[q, k, a, 6 + e] = S[a, e]
                    J[q, k, 3 + a, 6 + e] = 0.0


@jit_kernel
def rigid_wrench_map(R, T, local, c, wrench, out, BT, own):
    """Generalized force of wrenches ``(f, m about the attachment) (m,p,6)`` on rigid bodies:
    ``out = B^T w = (f, m + r x f)`` (m,p,6), ``BT (m,p,6,6)`` and the lever arm's own term
    ``own = d(B^T w)/d theta (m,p,6,3)`` (``[0; skew(f) skew(r) T]``); ``own`` of size 0: skipped."""
    m, p = local.size, R.shape[1]
    r = scratch(3)
    S = scratch((3, 3))
    Bm = scratch((6, 6))
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
                lever_map(r, Bm)
                for a in range(6):
                    for e in range(6):
                        BT[q, k, a, e] = Bm[e, a]
            if do_own:
                skew_skew_T(wrench[q, k, 0:3], r, T[b, k], 1.0, S)
                for a in range(3):
                    for e in range(3):
                        own[q, k, a, e] = 0.0
                        own[q, k, 3 + a, e] = S[a, e]


# ============================================================================ at a time node
@jit_kernel
def rigid_node_attach(x, R, bodies, local, c, A, xs, Rs, B):
    """Attachment frames at a node: ``xs = x_b + R_b c``, ``Rs = R_b A`` and the velocity map ``B =
    [[I, -skew(R_b c)], [0, I]]`` (``nu = B w``, ``w = (v of G, omega)``) of the attachments ``local``
    (``(m,)`` positions in the group; ``bodies`` the group's model indices, ``x``, ``R`` the node's
    ``(nb, 3)``, ``(nb, 3, 3)``; ``c (m, 3)`` from the centre of mass, ``A (m, 3, 3)``, body axes)."""
    for j in range(local.size):
        b = bodies[local[j]]
        r = scratch(3)
        for d in range(3):
            r[d] = R[b, d, 0] * c[j, 0] + R[b, d, 1] * c[j, 1] + R[b, d, 2] * c[j, 2]
            xs[j, d] = x[b, d] + r[d]
            for e in range(3):
                Rs[j, d, e] = R[b, d, 0] * A[j, 0, e] + R[b, d, 1] * A[j, 1, e] + R[b, d, 2] * A[j, 2, e]
        lever_map(r, B[j])


@jit_kernel
def rigid_inverse_mass(R, bodies, J0inv, mass, out):
    """Inverse mass blocks ``out (n, 6, 6) = diag(I / m, R J0^-1 R^T)`` at a node."""
    for k in range(bodies.size):
        b = bodies[k]
        for a in range(6):
            for e in range(6):
                out[k, a, e] = 0.0
        for d in range(3):
            out[k, d, d] = 1.0 / mass[k]
            t0 = R[b, d, 0] * J0inv[k, 0, 0] + R[b, d, 1] * J0inv[k, 1, 0] + R[b, d, 2] * J0inv[k, 2, 0]
            t1 = R[b, d, 0] * J0inv[k, 0, 1] + R[b, d, 1] * J0inv[k, 1, 1] + R[b, d, 2] * J0inv[k, 2, 1]
            t2 = R[b, d, 0] * J0inv[k, 0, 2] + R[b, d, 1] * J0inv[k, 1, 2] + R[b, d, 2] * J0inv[k, 2, 2]
            for e in range(3):
                out[k, 3 + d, 3 + e] = t0 * R[b, e, 0] + t1 * R[b, e, 1] + t2 * R[b, e, 2]


@jit_kernel
def rigid_momenta(R, bodies, J0, mass, w, out):
    """Momenta ``out = M w (n, 6)`` at a node, ``M = diag(m I, R J0 R^T)``, for velocities ``w (n, 6)``."""
    for k in range(bodies.size):
        b = bodies[k]
        for d in range(3):
            out[k, d] = mass[k] * w[k, d]
        # R J0 R^T omega
        u0 = R[b, 0, 0] * w[k, 3] + R[b, 1, 0] * w[k, 4] + R[b, 2, 0] * w[k, 5]
        u1 = R[b, 0, 1] * w[k, 3] + R[b, 1, 1] * w[k, 4] + R[b, 2, 1] * w[k, 5]
        u2 = R[b, 0, 2] * w[k, 3] + R[b, 1, 2] * w[k, 4] + R[b, 2, 2] * w[k, 5]
        v0 = J0[k, 0, 0] * u0 + J0[k, 0, 1] * u1 + J0[k, 0, 2] * u2
        v1 = J0[k, 1, 0] * u0 + J0[k, 1, 1] * u1 + J0[k, 1, 2] * u2
        v2 = J0[k, 2, 0] * u0 + J0[k, 2, 1] * u1 + J0[k, 2, 2] * u2
        for d in range(3):
            out[k, 3 + d] = R[b, d, 0] * v0 + R[b, d, 1] * v1 + R[b, d, 2] * v2


@jit_kernel
def rigid_node_output(x, R, bodies, w, com, mass, J0, pos, rotm, vel, om):
    """Body frame origins, rotations, origin velocities and angular velocities at a node (``(n, ...)``)
    for the velocities ``w (n, 6)`` of the centres of mass, and the kinetic energy ``w . M w / 2`` with
    ``M = diag(m I, R J0 R^T)``."""
    ke = 0.0
    rc = scratch(3)
    for k in range(bodies.size):
        b = bodies[k]
        w0, w1, w2 = w[k, 3], w[k, 4], w[k, 5]
        for d in range(3):
            rc[d] = R[b, d, 0] * com[k, 0] + R[b, d, 1] * com[k, 1] + R[b, d, 2] * com[k, 2]
            for e in range(3):
                rotm[k, d, e] = R[b, d, e]
            om[k, d] = w[k, 3 + d]
        for d in range(3):
            pos[k, d] = x[b, d] - rc[d]
        vel[k, 0] = w[k, 0] - (w1 * rc[2] - w2 * rc[1])
        vel[k, 1] = w[k, 1] - (w2 * rc[0] - w0 * rc[2])
        vel[k, 2] = w[k, 2] - (w0 * rc[1] - w1 * rc[0])
        # R^T omega, then J0 (R^T omega) . (R^T omega)
        u0 = R[b, 0, 0] * w0 + R[b, 1, 0] * w1 + R[b, 2, 0] * w2
        u1 = R[b, 0, 1] * w0 + R[b, 1, 1] * w1 + R[b, 2, 1] * w2
        u2 = R[b, 0, 2] * w0 + R[b, 1, 2] * w1 + R[b, 2, 2] * w2
        rot = (u0 * (J0[k, 0, 0] * u0 + J0[k, 0, 1] * u1 + J0[k, 0, 2] * u2)
               + u1 * (J0[k, 1, 0] * u0 + J0[k, 1, 1] * u1 + J0[k, 1, 2] * u2)
               + u2 * (J0[k, 2, 0] * u0 + J0[k, 2, 1] * u1 + J0[k, 2, 2] * u2))
        ke += mass[k] * (w[k, 0] * w[k, 0] + w[k, 1] * w[k, 1] + w[k, 2] * w[k, 2]) + rot
    return 0.5 * ke


@jit_kernel
def rigid_gravity_potential(x, bodies, mass, g):
    """Gravity potential ``-sum m x . g`` of the bodies (centres of mass ``x[bodies]``) [J]."""
    pe = 0.0
    for k in range(bodies.size):
        b = bodies[k]
        pe -= mass[k] * (x[b, 0] * g[0] + x[b, 1] * g[1] + x[b, 2] * g[2])
    return pe
