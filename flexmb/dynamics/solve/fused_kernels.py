"""The fused evaluator's compiled orchestration: a whole time element in one numba call (used per
evaluation by :class:`flexmb.dynamics.solve.fused.FusedEvaluator` and inside the compiled
Newton loop of :mod:`flexmb.dynamics.solve.fused_newton`).

No physics lives here.  Every value comes from the one implementation of its law:

* the rigid bodies' kinematics, rows and Jacobian (:func:`flexmb.dynamics.kernels.rigid_kinematics`,
  :func:`~flexmb.dynamics.kernels.rigid_residual`) and their attachments (``rigid_attach_pose``,
  ``rigid_attach_velocity``, ``rigid_wrench_map``); the modal bodies' (:mod:`.fused_modal`);
* the joint laws (:mod:`flexmb.dynamics.elements.joint_law`: ``joint_rows``, ``law_rows``,
  ``multiplier_blocks``, ``side_a_wrench``, ``transport_moment``);
* the force laws (:mod:`flexmb.dynamics.elements.force_law`: ``body_frame_load``, ``spring_damper``).

What this module adds is the glue the general evaluator does in Python: ground entries, the chain rule
through the attachments' Jacobian blocks (``d(row)/d(pose) @ d(pose)/dU``), the generalized forces
``fac B^T w`` on the body rows, and the Jacobian values written one block after the other into the
values array of the fixed pattern, **in the order of the general evaluator's blocks** (bodies:
:meth:`~flexmb.dynamics.bodies.rigid.RigidBodies.residual`; force elements:
:func:`flexmb.dynamics.elements.forces.force_residual`; joints:
:func:`flexmb.dynamics.elements.joints.joint_residual`, items 1-5, and the transport moments of
``joints._transport_moment``).  The pattern is the one the general evaluator records at its first
evaluation; :class:`~flexmb.dynamics.solve.fused.FusedEvaluator` checks the count of values once.

An attachment *side* is a tuple ``(sel, loc, c, A, gx, gR, lever)``: ``sel (m,)`` the entries on bodies
(increasing), ``loc (m,)`` their bodies (positions in the rigid group), ``c (m, 3)`` the point from the
centre of mass and ``A (m, 3, 3)`` the frame (body axes), ``gx (n, 3)``, ``gR (n, 3, 3)`` the poses of
the ground entries, ``lever`` whether any ``c`` is nonzero.
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.bodies import rigid_kernels as K
from flexmb.dynamics.elements import force_law
from flexmb.dynamics.kernels import dot6, frozen, jit_kernel, put  # (jit_kernel: the kernels' compilation, cache, no fastmath)


# ============================================================================ value writers
#: a one-entry side's constants (:func:`forces`' loads): numba types module arrays read-only
_ONE_ENTRY = frozen(np.zeros(1, np.int64))
_NO_GROUND_X = frozen(np.zeros((1, 3)))
_NO_GROUND_R = frozen(np.zeros((1, 3, 3)))


@jit_kernel
def put_scatter(buf, o, fac, BT, q1s, dW, js, sgn, J, q2s):
    """``((fac BT[q1]) @ (sgn dW[j])) @ J[q2]`` for every entry ``z`` (``q1 = q1s[z]``, ``j = js[z]``,
    ``q2 = q2s[z]``) and point: a wrench's dependence on unknowns through a pose or velocity; without
    ``J`` (size 0) the product ``(fac BT[q1]) @ (sgn dW[j])`` itself (a term on given columns).
    ``BT (m, p, r, 6)``: ``r = 6`` for a rigid body, ``N + nm`` for a modal one."""
    p, nr = BT.shape[1], BT.shape[2]
    M = np.empty((nr, 6))
    chain = J.shape[0] > 0
    for z in range(q1s.size):
        q1, j = q1s[z], js[z]
        q2 = q2s[z] if chain else 0
        for k in range(p):
            for a in range(nr):
                for e in range(6):
                    s = 0.0
                    for b in range(6):
                        s += (fac * BT[q1, k, a, b]) * (sgn * dW[j, k, b, e])
                    M[a, e] = s
            if not chain:
                for a in range(nr):
                    for e in range(6):
                        buf[o] = M[a, e]
                        o += 1
                continue
            nc = J.shape[3]
            for a in range(nr):
                for e in range(nc):
                    s = 0.0
                    for b in range(6):
                        s += M[a, b] * J[q2, k, b, e]
                    buf[o] = s
                    o += 1
    return o


# ============================================================================ attachments of one side
@jit_kernel
def side_pose(side, X, R, T, E, cons, n, p):
    """Poses of a side's ``n`` entries at ``p`` points (ground entries from ``gx``, ``gR``):
    ``x (n, p, 3)``, ``Rs (n, p, 3, 3)`` and the Jacobian of the body entries ``J (m, p, 6, c)`` (``c = 6``
    at the Gauss points, ``6 p`` at the constraint points: ``cons``)."""
    sel, loc, c, A, gx, gR = side[0], side[1], side[2], side[3], side[4], side[5]
    m = sel.size
    xs = np.empty((m, p, 3))
    Rm = np.empty((m, p, 3, 3))
    J = np.empty((m, p, 6, 6 * p if cons else 6))
    if m:
        K.rigid_attach_pose(X, R, T, loc, c, A, E, cons, xs, Rm, J)
    x = np.empty((n, p, 3))
    Rs = np.empty((n, p, 3, 3))
    for j in range(n):
        for k in range(p):
            for a in range(3):
                x[j, k, a] = gx[j, a]
                for e in range(3):
                    Rs[j, k, a, e] = gR[j, a, e]
    place_poses(sel, xs, Rm, x, Rs)
    return x, Rs, J


@jit_kernel
def place_poses(sel, xs, Rm, x, Rs):
    """``x[sel] = xs``, ``Rs[sel] = Rm``: the poses ``(m, p, ...)`` of some entries of a side into its
    ``(n, p, ...)`` arrays."""
    for q in range(sel.size):
        for k in range(xs.shape[1]):
            for a in range(3):
                x[sel[q], k, a] = xs[q, k, a]
                for e in range(3):
                    Rs[sel[q], k, a, e] = Rm[q, k, a, e]


@jit_kernel
def side_velocity(side, Ug, bw, R, T, n, p):
    """Velocities ``nu (n, p, 6)`` of a side's entries (zero on the ground) and the Jacobian of the body
    entries ``J (m, p, 6, 9)``."""
    sel, loc, c = side[0], side[1], side[2]
    m = sel.size
    nus = np.empty((m, p, 6))
    J = np.empty((m, p, 6, 9))
    if m:
        K.rigid_attach_velocity(Ug, bw, R, T, loc, c, nus, J)
    nu = np.zeros((n, p, 6))
    for q in range(m):
        for k in range(p):
            for a in range(6):
                nu[sel[q], k, a] = nus[q, k, a]
    return nu, J


@jit_kernel
def side_scatter(res, side, R, T, W, bs, slots, slot, fac):
    """``fac B^T W`` of the wrenches ``W (n, p, 6)`` at a side's body entries onto the rows ``slot ..
    slot + 6`` of their bodies (``bs`` the bodies' first unknown, ``slots`` per point); returns ``B^T
    (m, p, 6, 6)`` and the lever arm's own term ``(m, p, 6, 3)`` (size 0 without a lever)."""
    sel, loc, c, lever = side[0], side[1], side[2], side[6]
    m, p = sel.size, W.shape[1]
    Wm = np.empty((m, p, 6))
    for q in range(m):
        for k in range(p):
            for a in range(6):
                Wm[q, k, a] = W[sel[q], k, a]
    BT = np.empty((m, p, 6, 6))
    own = np.empty((m, p, 6, 3) if lever else (0, 0, 6, 3))
    K.rigid_wrench_map(R, T, loc, c, Wm, np.empty((m, p, 6)), BT, own)
    for q in range(m):
        for k in range(p):
            row = bs[loc[q]] + k * slots + slot
            for a in range(6):
                res[row + a] += fac * dot6(BT[q, k, a], Wm[q, k])
    return BT, own


# ============================================================================ force elements
@jit_kernel
def forces(h, p, X, R, T, Ug, bw, bpi, bs, slots, E, loads, springs, res, jac, buf, o):
    """The force elements (:func:`flexmb.dynamics.elements.forces.force_residual`, same block order):
    ``loads = (loc, c, A, lever, k0, body_frame, vals (nl, p, 3))`` point forces and torques
    (constant or functions of time: their values at the Gauss points), ``springs = (side_a, side_b,
    k, c, L0, pairs)`` with ``pairs = (ab_a, ab_b)`` the entries that are on bodies of both sides (their
    positions in ``sel_a`` and in ``sel_b``, increasing).  Returns the next value offset."""
    fac = -h
    loc, c, A, lever, k0, body, vals = loads
    nl = loc.size
    for ld in range(nl):
        # (a side tuple of the types of the model's: read-only constants, flexmb.dynamics.kernels.frozen)
        side = (_ONE_ENTRY, loc[ld:ld + 1], c[ld:ld + 1], A[ld:ld + 1], _NO_GROUND_X, _NO_GROUND_R, lever[ld])
        W = np.zeros((1, p, 6))
        dW = np.empty((1, p, 6, 6) if body[ld] else (0, 0, 6, 6))
        Jg = np.empty((0, p, 6, 6))
        if body[ld]:
            _x, Rs, Jg = side_pose(side, X, R, T, E, np.bool_(False), np.int64(1), p)
            force_law.body_frame_load(Rs, vals[ld], k0[ld], W, dW, jac)
        else:
            for i in range(p):
                for a in range(3):
                    W[0, i, k0[ld] + a] = vals[ld, i, a]
        BT, own = side_scatter(res, side, R, T, W, bs, slots, bpi, fac)
        if jac:
            if lever[ld]:
                o = put(buf, o, own, fac)
            if body[ld]:
                one = np.zeros(1, np.int64)
                o = put_scatter(buf, o, fac, BT, one, dW, one, 1.0, Jg, one)
    sa, sb, kk, cc, L0, pairs = springs
    ns = kk.size
    if ns == 0:
        return o
    xa, _Ra, Ja = side_pose(sa, X, R, T, E, np.bool_(False), ns, p)
    xb, _Rb, Jb = side_pose(sb, X, R, T, E, np.bool_(False), ns, p)
    nua, Jva = side_velocity(sa, Ug, bw, R, T, ns, p)
    nub, Jvb = side_velocity(sb, Ug, bw, R, T, ns, p)
    d = np.empty((ns, p, 3))
    vrel = np.empty((ns, p, 3))
    for q in range(ns):
        for i in range(p):
            for a in range(3):
                d[q, i, a] = xb[q, i, a] - xa[q, i, a]
                vrel[q, i, a] = nub[q, i, a] - nua[q, i, a]
    Fb = np.empty((ns, p, 3))
    shape = (ns, p, 6, 6) if jac else (0, 0, 6, 6)
    dx, dv = np.empty(shape), np.empty(shape)
    force_law.spring_damper(d, vrel, kk, cc, L0, Fb, dx, dv, jac)
    Wb = np.zeros((ns, p, 6))
    Wa = np.zeros((ns, p, 6))
    for q in range(ns):
        for i in range(p):
            for a in range(3):
                Wb[q, i, a] = Fb[q, i, a]
                Wa[q, i, a] = -Fb[q, i, a]
    ab_a, ab_b = pairs  # the entries on bodies of both sides: their positions in sel_a, in sel_b
    BT, own = side_scatter(res, sb, R, T, Wb, bs, slots, bpi, fac)
    if jac:
        if sb[6]:
            o = put(buf, o, own, fac)
        allb = np.arange(sb[0].size)
        o = _spring_terms(buf, o, fac, BT, sb[0], allb, allb, ab_b, ab_a, 1.0, dx, dv, Jb, Ja, Jvb, Jva)
    BT, own = side_scatter(res, sa, R, T, Wa, bs, slots, bpi, fac)
    if jac:
        if sa[6]:
            o = put(buf, o, own, fac)
        alla = np.arange(sa[0].size)
        o = _spring_terms(buf, o, fac, BT, sa[0], ab_a, ab_b, alla, alla, -1.0, dx, dv, Jb, Ja, Jvb, Jva)
    return o


@jit_kernel
def _spring_terms(buf, o, fac, BT, sel, on_b, b_pos, on_a, a_pos, sgn, dx, dv, Jb, Ja, Jvb, Jva):
    """The four chained terms of one side's scatter of the spring-dampers: / the pose of B (``sgn dx``),
    of A (``-sgn dx``), / the velocity of B (``sgn dv``), of A (``-sgn dv``); ``on_b``/``b_pos``: the
    scattered side's entries that are on a body of B (positions in this side's and in B's list), the
    same for A."""
    for pos, other, dW, s, J in ((on_b, b_pos, dx, sgn, Jb), (on_a, a_pos, dx, -sgn, Ja),
                                 (on_b, b_pos, dv, sgn, Jvb), (on_a, a_pos, dv, -sgn, Jva)):
        if pos.size:
            o = put_scatter(buf, o, fac, BT, pos, dW, sel[pos], s, J, other)
    return o
