"""Compiled laws (numba) of the modal flexible bodies, shared by the element equations
(:mod:`.modal_kernels`) and the node level (:class:`.modal.FlexibleBodies`): the configuration-dependent
mass matrix and the elastic terms, one implementation each.

Mass data of a group of ``n`` bodies with ``nm`` modes (padded with inert modes), the polynomial
``Mb(q)`` of :mod:`.modal_matrices` stored by blocks, so that every product costs O(nm^2)::

    mass (n,)  S0 (n,3)  S1 (n,3,nm)  J0 (n,3,3)  J1 (n,nm,3,3)  J2 (n,nm,nm,3,3)
    psi0 (n,3,nm)  dpsi (n,nm,3,nm)  Mq (n,nm,nm)

    S(q) = S0 + S1 q,  J(q) = J0 + q_k J1[k] + q_k q_l J2[k,l],  Psi(q) = psi0 + q_k dpsi[k]

Elastic terms (:func:`elastic`): ``K (n,nm,nm)`` and the factors of the cubic and quartic strain
energy (:mod:`flexmb.fe.reduction.energy_factors`)::

    U = 1/2 q^T K q + 1/2 sum_r cs_r (cu_r . q)(q^T cV_r q) + 1/8 sum_r ql_r (q^T qA_r q)^2

``cs (n,R3)``, ``cu (n,R3,nm)``, ``cV (n,R3,nm,nm)``, ``ql (n,R4)``, ``qA (n,R4,nm,nm)`` (zero
weights pad the ranks): O((R3 + R4) nm^2) for the force and the tangent.  Compilation as in
:mod:`flexmb.dynamics.kernels` (``cache=True``, no fastmath).
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import jit_kernel, scratch
from flexmb.numba_cache import refresh as _refresh_cache

_refresh_cache()


# ============================================================================ small helpers
@jit_kernel
def cross3(a0, a1, a2, b0, b1, b2):
    """``a x b`` of two vectors given by components (a tuple of 3)."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0



# ============================================================================ mass matrix
@jit_kernel
def mass_world(b, Rm, Q, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, Mw, Y, Psi, RS1):
    """World-axes mass matrix ``Mw = Rb Mb(q) Rb^T (N, N)`` of body ``b`` at rotation ``Rm`` and modal
    coordinates ``Q (nm,)``.  Scratch (filled on return): ``Y (nm,3,3) = sum_l q_l J2[k,l]``,
    ``Psi (3,nm) = Psi(q)``, ``RS1 (3,nm) = R S1``.  Returns ``RS = R S(q)`` (3 floats)."""
    nm = Q.size
    # S(q), J(q), Psi(q)
    s0 = S0[b, 0]
    s1 = S0[b, 1]
    s2 = S0[b, 2]
    for k in range(nm):
        s0 += S1[b, 0, k] * Q[k]
        s1 += S1[b, 1, k] * Q[k]
        s2 += S1[b, 2, k] * Q[k]
    Jq = scratch((3, 3))
    for a in range(3):
        for c in range(3):
            Jq[a, c] = J0[b, a, c]
    for k in range(nm):
        for a in range(3):
            for c in range(3):
                acc = 0.0
                for l in range(nm):
                    acc += Q[l] * J2[b, k, l, a, c]
                Y[k, a, c] = acc
        qk = Q[k]
        for a in range(3):
            for c in range(3):
                Jq[a, c] += qk * (J1[b, k, a, c] + Y[k, a, c])
    for a in range(3):
        for j in range(nm):
            acc = psi0[b, a, j]
            for k in range(nm):
                acc += Q[k] * dpsi[b, k, a, j]
            Psi[a, j] = acc
    # rotated blocks
    RS0 = Rm[0, 0] * s0 + Rm[0, 1] * s1 + Rm[0, 2] * s2
    RS1_ = Rm[1, 0] * s0 + Rm[1, 1] * s1 + Rm[1, 2] * s2
    RS2 = Rm[2, 0] * s0 + Rm[2, 1] * s1 + Rm[2, 2] * s2
    m = mass[b]
    for a in range(3):
        for c in range(3):
            Mw[a, c] = m if a == c else 0.0
    Mw[0, 3] = 0.0
    Mw[0, 4] = RS2
    Mw[0, 5] = -RS1_
    Mw[1, 3] = -RS2
    Mw[1, 4] = 0.0
    Mw[1, 5] = RS0
    Mw[2, 3] = RS1_
    Mw[2, 4] = -RS0
    Mw[2, 5] = 0.0
    for a in range(3):
        for c in range(3):
            Mw[3 + a, c] = -Mw[a, 3 + c]
    RJ = scratch((3, 3))
    for a in range(3):
        for c in range(3):
            RJ[a, c] = Rm[a, 0] * Jq[0, c] + Rm[a, 1] * Jq[1, c] + Rm[a, 2] * Jq[2, c]
    for a in range(3):
        for c in range(3):
            Mw[3 + a, 3 + c] = RJ[a, 0] * Rm[c, 0] + RJ[a, 1] * Rm[c, 1] + RJ[a, 2] * Rm[c, 2]
    for j in range(nm):
        for a in range(3):
            rs = Rm[a, 0] * S1[b, 0, j] + Rm[a, 1] * S1[b, 1, j] + Rm[a, 2] * S1[b, 2, j]
            rp = Rm[a, 0] * Psi[0, j] + Rm[a, 1] * Psi[1, j] + Rm[a, 2] * Psi[2, j]
            RS1[a, j] = rs
            Mw[a, 6 + j] = rs
            Mw[6 + j, a] = rs
            Mw[3 + a, 6 + j] = rp
            Mw[6 + j, 3 + a] = rp
        for l in range(nm):
            Mw[6 + j, 6 + l] = Mq[b, j, l]
    return RS0, RS1_, RS2


@jit_kernel
def mass_blocks(R, q, body, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, out):
    """``out (k, N, N)``: world-axes mass matrices of bodies ``body (k,)`` (group positions) at
    rotations ``R (k,3,3)`` and modal coordinates ``q (k,nm)`` (a time node; outputs: the same body at
    many times, ``R = I`` for the body-axes matrix ``Mb(q)``)."""
    k, nm = q.shape[0], q.shape[1]
    Y = np.empty((nm, 3, 3))
    Psi = np.empty((3, nm))
    RS1 = np.empty((3, nm))
    for i in range(k):
        mass_world(body[i], R[i], q[i], mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, out[i], Y, Psi, RS1)


@jit_kernel
def inverse_mass_blocks(R, q, body, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, out):
    """``out (k, N, N)``: inverses of the world-axes mass matrices of :func:`mass_blocks` (LAPACK's LU
    inverse, ``np.linalg.inv``, per body: the node-velocity projection's ``M^-1``)."""
    mass_blocks(R, q, body, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, out)
    for i in range(out.shape[0]):
        out[i] = np.linalg.inv(out[i])


@jit_kernel
def kinetic_energies(R, q, body, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, w, out):
    """``out (k,)``: kinetic energy ``w . Mw(q) w / 2`` [J] of bodies ``body (k,)`` (group positions) at
    rotations ``R (k,3,3)``, modal coordinates ``q (k,nm)`` and world-axes velocities ``w (k, N)``
    (frame ``(v, omega)`` and modal rates) at a time node."""
    k, N = w.shape[0], w.shape[1]
    M = np.empty((k, N, N))
    mass_blocks(R, q, body, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, M)
    for i in range(k):
        s = 0.0
        for a in range(N):
            t = 0.0
            for c in range(N):
                t += M[i, a, c] * w[i, c]
            s += w[i, a] * t
        out[i] = 0.5 * s


@jit_kernel
def gravity_potential(x, R, q, bodies, mass, S0, S1, g):
    """Potential of gravity ``g (3,)`` [J] of a group at a time node: ``-sum_b (m_b x_b + R_b S_b(q_b)) . g``
    with ``S(q) = S0 + S1 q`` (the first mass moment about the frame origin, body axes); ``x (nb,3)``,
    ``R (nb,3,3)`` of the model's bodies, ``bodies (n,)`` the group's, ``q (n,nm)`` its modal coordinates."""
    V = 0.0
    for i in range(bodies.size):
        b = bodies[i]
        s0, s1, s2 = S0[i, 0], S0[i, 1], S0[i, 2]
        for k in range(q.shape[1]):
            s0 += S1[i, 0, k] * q[i, k]
            s1 += S1[i, 1, k] * q[i, k]
            s2 += S1[i, 2, k] * q[i, k]
        V -= mass[i] * (x[b, 0] * g[0] + x[b, 1] * g[1] + x[b, 2] * g[2])
        for a in range(3):
            V -= (R[b, a, 0] * s0 + R[b, a, 1] * s1 + R[b, a, 2] * s2) * g[a]
    return V


# ============================================================================ elastic terms
@jit_kernel
def quadratic_form(A, Q, AQ):
    """``Q . A Q`` (returned) and ``AQ (nm,) = A Q`` for ``A (nm,nm)``, ``Q (nm,)``: the linear, cubic
    and quartic strain-energy terms of :func:`elastic` share it."""
    s = 0.0
    for m in range(Q.size):
        acc = 0.0
        for l in range(Q.size):
            acc += A[m, l] * Q[l]
        AQ[m] = acc
        s += Q[m] * acc
    return s


@jit_kernel
def elastic(b, Q, K, cs, cu, cV, ql, qA, f, Kt, tangent, work):
    """Strain energy of body ``b`` at ``Q (nm,)`` (returned), its gradient ``f (nm,)`` and, if
    ``tangent``, its Hessian ``Kt (nm,nm)``; ``work (nm,)`` scratch.  See the module docstring."""
    nm = Q.size
    U = 0.5 * quadratic_form(K[b], Q, f)
    if tangent:
        for m in range(nm):
            for l in range(nm):
                Kt[m, l] = K[b, m, l]
    return U + elastic_nonlinear(b, Q, cs, cu, cV, ql, qA, f, Kt, tangent, work)


@jit_kernel
def elastic_nonlinear(b, Q, cs, cu, cV, ql, qA, f, Kt, tangent, work):
    """The cubic and quartic part of :func:`elastic`: its energy (returned), gradient and Hessian
    *added* to ``f`` and (if ``tangent``) ``Kt``."""
    nm = Q.size
    U = 0.0
    for r in range(cs.shape[1]):
        sig = cs[b, r]
        if sig == 0.0:
            continue
        a = 0.0
        for m in range(nm):
            a += cu[b, r, m] * Q[m]
        s = quadratic_form(cV[b, r], Q, work)
        U += 0.5 * sig * a * s
        for m in range(nm):
            f[m] += 0.5 * sig * (cu[b, r, m] * s + 2.0 * a * work[m])
        if tangent:
            for m in range(nm):
                um = cu[b, r, m]
                wm = work[m]
                for l in range(nm):
                    Kt[m, l] += sig * (um * work[l] + wm * cu[b, r, l] + a * cV[b, r, m, l])
    for r in range(ql.shape[1]):
        lam = ql[b, r]
        if lam == 0.0:
            continue
        s = quadratic_form(qA[b, r], Q, work)
        U += 0.125 * lam * s * s
        for m in range(nm):
            f[m] += 0.5 * lam * s * work[m]
        if tangent:
            hs = 0.5 * lam * s
            for m in range(nm):
                wm = lam * work[m]
                for l in range(nm):
                    Kt[m, l] += wm * work[l] + hs * qA[b, r, m, l]
    return U


@jit_kernel
def strain_energies(q, body, K, cs, cu, cV, ql, qA, out):
    """``out (k,)``: strain energy of bodies ``body (k,)`` (group positions) at ``q (k, nm)``."""
    k, nm = q.shape[0], q.shape[1]
    f = np.empty(nm)
    work = np.empty(nm)
    Kt = np.empty((0, 0))
    for i in range(k):
        out[i] = elastic(body[i], q[i], K, cs, cu, cV, ql, qA, f, Kt, np.bool_(False), work)


@jit_kernel
def elastic_batch(q, K, cs, cu, cV, ql, qA, U, f, Kt):
    """Energy ``U (n,k)``, force ``f (n,k,nm)`` and tangent ``Kt (n,k,nm,nm)`` at ``q (n,k,nm)``
    (the law of :func:`elastic` over a batch: tests and outputs)."""
    n, kk, nm = q.shape[0], q.shape[1], q.shape[2]
    work = np.empty(nm)
    for b in range(n):
        for i in range(kk):
            U[b, i] = elastic(b, q[b, i], K, cs, cu, cV, ql, qA, f[b, i], Kt[b, i], np.bool_(True), work)
