"""Time marching of rigid-only models, compiled: the end values of an element with the gauge reset
of the multipliers, and the warm predictor (the formulas of :func:`flexmb.dynamics.march.marching.end_values`,
:func:`flexmb.dynamics.march.marching.predict` and :meth:`~flexmb.dynamics.bodies.rigid.RigidBodies.predict_warm`;
tests: ``tests/test_rigid_node.py``).  The model-constant arrays are those of
:class:`flexmb.dynamics.rigid.node.RigidNode`."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import _jit, exp_tangent as _exp_tangent
from flexmb.dynamics.layout import JLAM, JPHI, JS
from flexmb.dynamics.rigid.node import generalized, node_frames

_JSL = np.array([JS, JPHI, JLAM], dtype=np.int64)


def end_node(rn, cm, lay, te, st, h: float, U: NDArray, near: float, far: float, reset: bool = False):
    """The element's end node (:func:`end_values` kernel; the polar iteration's thresholds
    ``near``, ``far`` of :func:`flexmb.dynamics.march.marching._orthonormalize`), with ``reset`` after the
    gauge reset of the multipliers (:func:`gauge_reset`; the node's joint frames are kept on it),
    or None when a rotation is too far from orthonormal for it (general path: SVD).  One compiled
    call (:func:`_end_node`); a rigid-only model has one body-type group."""
    (grp,) = cm.groups
    (ba, ca, Aa, ga), (bb, cb, Ab, gb) = rn.side
    ok, x, R, pi, s, Rr, lam, acc, xa, Ra, ra, xb, Rb, rb = _end_node(
        te.end, grp.bodies, rn.voff, np.ascontiguousarray(lay.group_view(U, grp.bodies, grp.slots)), grp._slot_starts,
        st.x, st.R, st.pi, np.ascontiguousarray(lay.joint_view(U)), _JSL, st.s, st.Rr, st.lam, st.acc, near, far,
        reset, ba, ca, Aa, ga, bb, cb, Ab, gb)
    if not ok:
        return None
    # (an ElementStart like st, all its fields given: dynamics.system is not imported here, it imports the
    # projection)
    new = type(st)(t=st.t + h, x=x, R=R, pi=pi, s=s, Rr=Rr, lam=np.zeros_like(lam) if reset else lam, acc=acc,
                   lam_end=lam, extra=dict(st.extra))
    if reset:
        from flexmb.dynamics.node.projection import keep_rigid_frames

        keep_rigid_frames(cm, new, rn, xa, Ra, xb, Rb, ra, rb)
    return new


@_jit
def _end_node(end, bodies, voff, Ug, sl, x1, R1, pi1, Jv, jsl, s1, Rr1, lam1, acc1, near, far, reset,
              ba, ca, Aa, ga, bb, cb, Ab, gb):  # pragma: no cover - compiled
    """:func:`end_values` on copies of the start values, then (``reset``) :func:`gauge_reset`:
    ``(ok, x, R, pi, s, Rr, lam, acc, xa, Ra, ra, xb, Rb, rb)`` (the frames empty without ``reset``;
    ``ok`` False: a rotation needs the SVD)."""
    nj = Jv.shape[0]
    x, R, pi = x1.copy(), R1.copy(), pi1.copy()
    s, Rr, lam, acc = np.empty((nj, 3)), np.empty((nj, 3, 3)), np.empty((nj, 6)), np.empty((nj, 3))
    ok = end_values(end, bodies, voff, Ug, sl, x1, R1, pi1, Jv, jsl, s1, Rr1, lam1, acc1, x, R, pi, s, Rr, lam, acc,
                    near, far)
    m = nj if (ok and reset) else 0
    xa, Ra, ra, xb, Rb, rb = (np.empty((m, 3)), np.empty((m, 3, 3)), np.empty((m, 3)), np.empty((m, 3)),
                              np.empty((m, 3, 3)), np.empty((m, 3)))
    if m:  # gauge reset (pi, lambda) -> (pi + Lambda, 0) with the new node's joint frames
        pi_end = pi
        pi = np.empty_like(pi_end)
        gauge_reset(x, R, ba, ca, Aa, ga, bb, cb, Ab, gb, lam, voff, pi_end, pi, xa, Ra, ra, xb, Rb, rb)
    return ok, x, R, pi, s, Rr, lam, acc, xa, Ra, ra, xb, Rb, rb


# ============================================================================ end values
@_jit
def _polar(X, near, far):
    """Newton-Schulz polar iteration ``X <- X + X (I - X^T X) / 2`` in place (as
    :func:`flexmb.dynamics.march.marching._orthonormalize`, up to 8 steps); False when ``X`` is farther
    than ``far`` from orthonormal, not finite, or not converged (the caller then takes the SVD)."""
    E = np.empty((3, 3))
    Y = np.empty((3, 3))
    for _ in range(8):
        e = 0.0
        for a in range(3):
            for b in range(3):
                s = X[0, a] * X[0, b] + X[1, a] * X[1, b] + X[2, a] * X[2, b]
                v = (1.0 if a == b else 0.0) - s
                E[a, b] = v
                if not abs(v) <= e:  # NaN-safe maximum
                    e = abs(v)
        if not e <= far:
            return False
        for a in range(3):
            for b in range(3):
                Y[a, b] = X[a, b] + 0.5 * (X[a, 0] * E[0, b] + X[a, 1] * E[1, b] + X[a, 2] * E[2, b])
        for a in range(3):
            for b in range(3):
                X[a, b] = Y[a, b]
        if e <= near:
            return True
    return False


@_jit
def end_values(end, bodies, voff, Ug, sl, x1, R1, pi1, Jv, jsl, s1, Rr1, lam1, acc1,
               x, R, pi, s, Rr, lam, acc, near, far):
    """End values of a rigid-only model (:func:`flexmb.dynamics.march.marching.end_values` before the gauge
    reset): ``y2 = end[0] y1 + end[1:] @ Y`` for the bodies' ``x``, ``pi`` and the joints' ``s``,
    ``lam``; rotations ``R = exp(theta_2) R1``, ``Rr = Rr1 exp(phi_2)`` re-orthonormalized,
    ``acc = acc1 + phi_2``.  ``x``, ``R``, ``pi`` hold the start values on entry (bodies not in
    ``bodies`` keep them).  Returns False when a rotation needs the SVD (the caller then takes the
    general path)."""
    p = Ug.shape[1]
    e0 = end[0]
    BX, BTH, BPI = sl[0], sl[1], sl[2]
    th = np.empty(3)
    Q = np.empty((3, 3))
    T = np.empty((3, 3))
    X = np.empty((3, 3))
    ok = True
    for k in range(bodies.size):
        b = bodies[k]
        o = voff[b]
        for d in range(3):
            v = 0.0
            t = 0.0
            for j in range(p):
                v += end[1 + j] * Ug[k, j, BX + d]
                t += end[1 + j] * Ug[k, j, BTH + d]
            x[b, d] = e0 * x1[b, d] + v
            th[d] = t
        for d in range(6):
            v = 0.0
            for j in range(p):
                v += end[1 + j] * Ug[k, j, BPI + d]
            pi[o + d] = e0 * pi1[o + d] + v
        _exp_tangent(th, Q, T)
        for a in range(3):
            for c in range(3):
                X[a, c] = Q[a, 0] * R1[b, 0, c] + Q[a, 1] * R1[b, 1, c] + Q[a, 2] * R1[b, 2, c]
        ok = _polar(X, near, far) and ok
        for a in range(3):
            for c in range(3):
                R[b, a, c] = X[a, c]
    JS, JPHI, JLAM = jsl[0], jsl[1], jsl[2]
    for i in range(Jv.shape[0]):
        for d in range(3):
            v = 0.0
            t = 0.0
            for j in range(p):
                v += end[1 + j] * Jv[i, j, JS + d]
                t += end[1 + j] * Jv[i, j, JPHI + d]
            s[i, d] = e0 * s1[i, d] + v
            th[d] = t
            acc[i, d] = acc1[i, d] + t
        for d in range(6):
            v = 0.0
            for j in range(p):
                v += end[1 + j] * Jv[i, j, JLAM + d]
            lam[i, d] = e0 * lam1[i, d] + v
        _exp_tangent(th, Q, T)
        for a in range(3):
            for c in range(3):
                X[a, c] = Rr1[i, a, 0] * Q[0, c] + Rr1[i, a, 1] * Q[1, c] + Rr1[i, a, 2] * Q[2, c]
        ok = _polar(X, near, far) and ok
        for a in range(3):
            for c in range(3):
                Rr[i, a, c] = X[a, c]
    return ok


# ============================================================================ predictor
@_jit
def _ext(P, y1, Y, k, q, d):
    """``P[q, 0] y1 + sum_j P[q, 1 + j] Y[k, j, d]`` (the sum as ``np.einsum`` forms it)."""
    v = 0.0
    for j in range(Y.shape[1]):
        v += P[q, 1 + j] * Y[k, j, d]
    return P[q, 0] * y1 + v


@_jit
def _dot_end(end, Y, k, d):
    v = 0.0
    for j in range(Y.shape[1]):
        v += end[1 + j] * Y[k, j, d]
    return v


@_jit
def predict_warm(Pe, Pi, end, bodies, voff, Up, Ug, bsl, xprev, piprev, pinow, Jp, Jv, jsl, sprev, lamprev, lamnow):
    """:func:`flexmb.dynamics.march.marching.predict` after an element of the same length, for rigid
    bodies (``Up``, ``Ug (n, p, 18)``) and the joints (``Jp``, ``Jv (nj, p, 30)``): the previous
    polynomials extrapolated (``Pe``: degree p through the start value, ``Pi``: degree p - 1 through
    the internal values), momenta and multipliers shifted by the gauge reset, rotation increments
    re-based on the new start."""
    BX, BTH, BPI = bsl[0], bsl[1], bsl[2]
    for k in range(bodies.size):
        o = voff[bodies[k]]
        _extrapolate_rows(Pe, Pi, end, Up, k, Ug, BX, xprev[bodies[k]], BTH, BPI, piprev[o:o + 6], pinow[o:o + 6])
    JS, JPHI, JLAM = jsl[0], jsl[1], jsl[2]
    for i in range(Jp.shape[0]):
        _extrapolate_rows(Pe, Pi, end, Jp, i, Jv, JS, sprev[i], JPHI, JLAM, lamprev[i], lamnow[i])


@_jit
def _extrapolate_rows(Pe, Pi, end, Yp, k, Y, pos, pos1, rot, mom, mom1, mom_now):
    """Row ``k`` of :func:`predict_warm`, the same for a body and a joint: every slot of ``Yp (n, p,
    slots)`` extrapolated by ``Pi``; then a position at ``pos`` (start value ``pos1 (3,)``) and a rotation
    increment at ``rot`` (re-based on the new start) by ``Pe``, and momenta / multipliers at ``mom``
    (start ``mom1 (6,)``) by ``Pe`` shifted by the gauge reset to ``mom_now (6,)``."""
    p = Yp.shape[1]
    for q in range(p):
        for d in range(Yp.shape[2]):
            v = 0.0
            for j in range(p):
                v += Pi[q, j] * Yp[k, j, d]
            Y[k, q, d] = v
        for d in range(3):
            Y[k, q, pos + d] = _ext(Pe, pos1[d], Yp, k, q, pos + d)
            Y[k, q, rot + d] = _ext(Pe, 0.0, Yp, k, q, rot + d) - _dot_end(end, Yp, k, rot + d)
        for d in range(6):
            mend = end[0] * mom1[d] + _dot_end(end, Yp, k, mom + d)
            Y[k, q, mom + d] = _ext(Pe, mom1[d], Yp, k, q, mom + d) + (mom_now[d] - mend)


@_jit
def gauge_reset(x, R, body_a, c_a, A_a, gp_a, body_b, c_b, A_b, gp_b, lam, voff, pi_end, pi, xa, Ra, ra, xb, Rb, rb):
    """The joint frames at the node (:func:`node_frames`, both sides) and ``pi = pi_end + Lambda``,
    ``Lambda`` the multipliers ``lam (nj, 6)`` as generalized momenta (:func:`generalized`)."""
    node_frames(x, R, body_a, c_a, A_a, gp_a, xa, Ra, ra)
    node_frames(x, R, body_b, c_b, A_b, gp_b, xb, Rb, rb)
    Lam = np.zeros(pi.size)
    generalized(lam, xa, xb, ra, rb, body_a, body_b, voff, Lam)
    for k in range(pi.size):
        pi[k] = pi_end[k] + Lam[k]
