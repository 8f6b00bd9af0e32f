"""The fused evaluator's glue for the modal flexible bodies: the modal group's rows and, for the
attachment entries on modal bodies, interface poses, velocities and the multipliers' generalized
forces (glue only, like :mod:`.fused_kernels`: every value comes from the modal body's own kernels,
:func:`flexmb.dynamics.bodies.modal_kernels.modal_kinematics`, ``modal_residual`` and
:mod:`flexmb.dynamics.bodies.modal_attach`: ``attach_pose``, ``attach_velocity``, ``wrench_map``).

A *modal part* of an attachment side is a tuple ``(sel, loc, c, A, Pt, Pr)``: ``sel (m,)`` the side's
entries on modal bodies (increasing), ``loc (m,)`` their bodies (positions in the modal group), ``c
(m, 3)`` the interface point and ``A (m, 3, 3)`` the frame (body axes), ``Pt``, ``Pr (m, 3, nm)`` the
interface's modal maps (:meth:`flexmb.dynamics.bodies.modal.FlexibleBodies.attach_data`).  The ground
and rigid entries of the side are :mod:`.fused_kernels`' side tuple.

``mod``, the modal group's start values and data (:class:`flexmb.dynamics.solve.fused.FusedEvaluator`):
``(x1 (n,3), R1 (n,3,3), q1 (n,nm), pi1 (n,N), w1 (n,6), mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, K,
C, cs, cu, cV, ql, qA, Ef, Wf, Kg, Ka, bs (n,))`` (``bs`` the bodies' first unknown); ``mkin`` its
kinematics at the evaluation, :func:`modal_body`.
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.bodies import modal_attach as ma
from flexmb.dynamics.bodies import modal_kernels as mk
from flexmb.dynamics.kernels import dot6, frozen, jit_kernel  # (jit_kernel: the kernels' compilation, cache, no fastmath)
from flexmb.dynamics.solve.fused_kernels import place_poses


@jit_kernel
def modal_body(E, D, h, g, mod, Um, rm, valsm, jac):
    """The modal group's kinematics and rows (``rm (n, p, slots)``; Jacobian values into ``valsm``):
    returns ``mkin = (Xc, R, T, Qc, UX, UR, UT, UQ, Um, bs)`` (Gauss points; constraint points;
    the unknowns and the bodies' first unknown)."""
    (x1, R1, q1, pi1, w1, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, K, C, cs, cu, cV, ql, qA, Ef, Wf, Kg, Ka,
     bs) = mod
    n, p, nm = Um.shape[0], Um.shape[1], q1.shape[1]
    if n == 0:  # (no modal body: one empty array per dimension)
        e3, e4 = np.empty((0, p, 3)), np.empty((0, p, 3, 3))
        eq = np.empty((0, p, nm))
        return e3, e4, e4, eq, e3, e4, e4, eq, Um, bs
    R, T, UR, UT = np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3))
    UX, Xc = np.empty((n, p, 3)), np.empty((n, p, 3))
    UQ, Qc = np.empty((n, p, nm)), np.empty((n, p, nm))
    if n:
        mk.modal_kinematics(E, x1, R1, q1, Um, nm, R, T, UX, UR, UT, UQ, Xc, Qc)
        mk.modal_residual(D, h, x1, pi1, q1, Um, R, T, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, K, C, cs, cu, cV,
                          ql, qA, Ef, Wf, Kg, Ka, w1, g, rm, valsm, jac)
    return Xc, R, T, Qc, UX, UR, UT, UQ, Um, bs


@jit_kernel
def part_pose(part, X, R, T, Q, E, cons, x, Rs):
    """Poses of a modal part's entries at ``p`` points into the side's ``x (n, p, 3)``, ``Rs (n, p, 3,
    3)``; returns their Jacobian ``J (m, p, 6, c)`` on the body's ``(x, theta, q)`` (``c = 6 + nm`` at
    the Gauss points, ``(6 + nm) p`` at the constraint points: ``cons``).  ``X``, ``R``, ``T``, ``Q``:
    the group's frame and modal coordinates at those points."""
    sel, loc, c, A, Pt, Pr = part
    m, p, nm = sel.size, X.shape[1], Q.shape[2]
    nc = 6 + nm
    xs, Rm = np.empty((m, p, 3)), np.empty((m, p, 3, 3))
    J = np.empty((m, p, 6, nc * p if cons else nc))
    if m:
        ma.attach_pose(X, R, T, Q, loc, c, A, Pt, Pr, E, cons, xs, Rm, J)
    place_poses(sel, xs, Rm, x, Rs)
    return J


@jit_kernel
def part_velocity(part, mkin, nu):
    """Velocities of a modal part's entries into the side's ``nu (n, p, 6)``; returns their Jacobian
    ``J (m, p, 6, N + 3 + nm)`` on the body's ``(w, theta, q)``."""
    sel, loc, c, A, Pt, Pr = part
    R, T, Qc, Um = mkin[1], mkin[2], mkin[3], mkin[8]
    m, p, nm = sel.size, Um.shape[1], Qc.shape[2]
    bw = 12 + 2 * nm  # the first slot of w (FlexibleBodies.BW)
    nus = np.empty((m, p, 6))
    J = np.empty((m, p, 6, 6 + nm + 3 + nm))
    if m:
        ma.attach_velocity(Um, bw, R, T, Qc, loc, c, Pt, Pr, nus, J)
    for q in range(m):
        for k in range(p):
            for a in range(6):
                nu[sel[q], k, a] = nus[q, k, a]
    return J


@jit_kernel
def part_scatter(res, part, mkin, h, W, fac):
    """``fac B^T W`` of the multipliers' wrenches ``W (n, p, 6)`` at a modal part's entries onto the
    constitutive rows (``w``) and the modal momentum rows (``pi_q``: the
    multiplier-map rate) of their bodies (``scatter_wrench``'s order); returns ``B^T (m, p, N + nm, 6)``
    and the body's own Jacobian blocks ``d (m, p, N + nm, 3 + nm)`` on ``(theta, q)`` and ``dv (m, p, N +
    nm, N + 3 + nm)`` on ``(w, theta, q)`` (:func:`flexmb.dynamics.bodies.modal_attach.wrench_map`)."""
    sel, loc, c, A, Pt, Pr = part
    R, T, Qc, Um, bs = mkin[1], mkin[2], mkin[3], mkin[8], mkin[9]
    m, p, nm = sel.size, W.shape[1], Qc.shape[2]
    N = 6 + nm
    bpi, bw, slots = 6 + nm, 6 + nm + N, 6 + nm + 2 * N  # FlexibleBodies.BPI, BW, slots
    nr = N + nm
    Wm = np.empty((m, p, 6))
    for q in range(m):
        for k in range(p):
            for a in range(6):
                Wm[q, k, a] = W[sel[q], k, a]
    BT, d, dv = np.empty((m, p, nr, 6)), np.empty((m, p, nr, 3 + nm)), np.empty((m, p, nr, N + 3 + nm))
    if m:
        # (a typed bool: a literal True would specialize wrench_map for it)
        ma.wrench_map(Um, bw, h, R, T, Qc, loc, c, Pt, Pr, Wm, m > 0, BT, d, dv)
    for q in range(m):
        for k in range(p):
            base = bs[loc[q]] + k * slots
            for a in range(nr):
                row = base + (bw + a if a < N else bpi + 6 + a - N)
                res[row] += fac * dot6(BT[q, k, a], Wm[q, k])
    return BT, d, dv


@jit_kernel
def positions_in(sel, js):
    """Positions in ``sel`` (increasing) of its entries that are in ``js``."""
    keep = np.zeros(sel.size, np.bool_)
    for z in range(sel.size):
        for j in js:
            if sel[z] == j:
                keep[z] = True
    return np.nonzero(keep)[0].astype(np.int64)


_I0 = frozen(np.zeros(0, np.int64))
_C1, _C2, _C3, _C4, _C5 = (frozen(np.zeros((0,) * k)) for k in range(1, 6))


@jit_kernel
def no_modal(p):
    """``(mod, mp)`` of a model without modal bodies: empty arrays of the kernels' types, one per
    dimension (``FusedEvaluator._empty_modal`` builds the same in Python): the start values writable, the
    constants read-only like a modal group's (module constants: numba types them read-only;
    :func:`flexmb.dynamics.kernels.frozen`), so that both share one specialization."""
    z2, z3 = np.zeros((0, 0)), np.zeros((0, 0, 0))
    i0, c1, c2, c3, c4, c5 = _I0, _C1, _C2, _C3, _C4, _C5
    part = (i0, i0, c2, c3, c3, c3)
    mod = (z2, z3, z2, z2, z2, c1, c2, c3, c3, c4, c5, c3, c4, c3, c3, c3, c2, c3, c4, c2, c4, c2, c2, c4, c4, i0)
    pair = np.zeros(0, np.int64)  # (pairs are writable: fused._pairs)
    return mod, (part, part, (pair, pair), (pair, pair), (pair, pair))
