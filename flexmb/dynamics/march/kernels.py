"""Time marching, compiled: the end values of a row of unknowns, the re-orthonormalization of the end
rotations and the warm predictor's extrapolation (bodies of any type with a floating frame, and the
joints).  The one implementation, called by :mod:`flexmb.dynamics.march.marching` and by the body types
(:func:`flexmb.dynamics.bodies.rigid.frame_end_values`,
:meth:`flexmb.dynamics.bodies.rigid.RigidBodies.predict_warm`)."""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import exp_tangent, jit_kernel, scratch  # (jit_kernel: the kernels' compilation)
from flexmb.dynamics.time_elements import lagrange_matrices, once_per_time_element  # the time element's own basis


#: the warm predictor extrapolates the previous element to a new one up to this many times as long (the
#: step control's largest growth, :data:`flexmb.dynamics.variants.step_control.GROW_MAX`); longer ones start
#: from the constant-velocity guess
WARM_RATIO_MAX = 2.5


def length_ratio(h_prev: float, h: float) -> float | None:
    """The new element's length ``h`` over the previous one's ``h_prev`` [s] for the warm predictor: exactly
    1.0 for the same length (to 1e-12), None beyond :data:`WARM_RATIO_MAX` (the cold guess).  Why any
    other ratio: the last element of a run shortened to land on ``t_end``, the halves of a halved step and
    every step of a step-controlled run change the length; the constant-velocity guess there has an
    error ``O(h^2)`` against the extrapolation's ``O(h^(p+1))``, and on X3 (p = 2, h = 2e-3, ``"full"``) the
    last element (0.6 h) diverged from it twice and was halved."""
    if abs(h_prev - h) <= 1e-12 * h:
        return 1.0
    ratio = h / h_prev
    return ratio if 0.0 < ratio <= WARM_RATIO_MAX else None


def warm_ratio(prev, h: float) -> float | None:
    """:func:`length_ratio` of the element ``prev`` (an :class:`~flexmb.dynamics.step.outcome.ElementPiece`,
    None after a jump or at the start) and the new element of length ``h`` [s]: None where the warm predictor
    does not extrapolate ``prev`` (the cold guess)."""
    return None if prev is None else length_ratio(prev.h, h)


@once_per_time_element  # they depend on c and the ratio only
def extrapolation_matrices(te, ratio: float = 1.0):
    """Lagrange extrapolation from the previous element to the new internal points ``1 + ratio c_k`` (in
    units of the previous element's length; ``ratio``: the new element's length over the previous one's):
    ``Pe (p, p+1)`` on the nodes ``{0, c}`` (degree p), ``Pi (p, p)`` on the nodes ``c`` (degree p-1)."""
    Pe, _ = lagrange_matrices(np.concatenate([[0.0], te.c]), 1.0 + ratio * te.c)
    Pi, _ = lagrange_matrices(te.c, 1.0 + ratio * te.c)
    return np.ascontiguousarray(Pe), np.ascontiguousarray(Pi)


@jit_kernel
def polar(X, near, far, ok):
    """Orthogonal polar factors of ``X (k, 3, 3)`` in place by the Newton-Schulz iteration
    ``X <- X + X (I - X^T X) / 2`` (quadratic convergence, up to 8 steps): ``ok[i]`` False where
    ``X[i]`` is farther than ``far`` from orthonormal (``max |I - X^T X|``), not finite or not converged
    to ``near`` (those are left as they were: the caller takes the SVD).  Returns whether all are ok."""
    E = scratch((3, 3))
    Y = scratch((3, 3))
    every = True
    for i in range(X.shape[0]):
        good = False
        for a in range(3):
            for b in range(3):
                Y[a, b] = X[i, a, b]
        for _ in range(8):
            e = 0.0
            for a in range(3):
                for b in range(3):
                    s = Y[0, a] * Y[0, b] + Y[1, a] * Y[1, b] + Y[2, a] * Y[2, b]
                    v = (1.0 if a == b else 0.0) - s
                    E[a, b] = v
                    if not abs(v) <= e:  # NaN-safe maximum
                        e = abs(v)
            if not e <= far:
                break
            for a in range(3):
                r0, r1, r2 = Y[a, 0], Y[a, 1], Y[a, 2]
                for b in range(3):
                    X[i, a, b] = Y[a, b] + 0.5 * (r0 * E[0, b] + r1 * E[1, b] + r2 * E[2, b])
            for a in range(3):
                for b in range(3):
                    Y[a, b] = X[i, a, b]
            if e <= near:
                good = True
                break
        ok[i] = good
        every = every and good
    return every


@jit_kernel
def end_values(end, Y, pos, y1p, mom, y1m, rot, R1, left, yp, ym, R, inc):
    """End values ``y2 = end[0] y1 + end[1:] @ Y`` of ``n`` rows of unknowns (bodies of one group, or the
    joints) from the internal values ``Y (n, p, slots)``: the slots ``pos (a,)`` (positions; start values
    ``y1p (n, a)``) into ``yp (n, a)``, the slots ``mom (b,)`` (momenta, multipliers; ``y1m (n, b)``) into
    ``ym (n, b)``, and the rotation increment at ``rot .. rot + 3`` (its start value zero) into ``inc
    (n, 3)`` and applied to the start rotation ``R1 (n, 3, 3)``: ``R = exp(inc) R1`` (``left``: a body's
    spatial increment) or ``R1 exp(inc)`` (a joint's relative rotation); not re-orthonormalized
    (:func:`polar`)."""
    p = Y.shape[1]
    e0 = end[0]
    Q = scratch((3, 3))
    T = scratch((3, 3))
    for k in range(Y.shape[0]):
        for a in range(pos.size):
            v = 0.0
            for j in range(p):
                v += end[1 + j] * Y[k, j, pos[a]]
            yp[k, a] = e0 * y1p[k, a] + v
        for a in range(mom.size):
            v = 0.0
            for j in range(p):
                v += end[1 + j] * Y[k, j, mom[a]]
            ym[k, a] = e0 * y1m[k, a] + v
        for d in range(3):
            t = 0.0
            for j in range(p):
                t += end[1 + j] * Y[k, j, rot + d]
            inc[k, d] = t
        exp_tangent(inc[k], Q, T)
        for a in range(3):
            for c in range(3):
                if left:
                    R[k, a, c] = Q[a, 0] * R1[k, 0, c] + Q[a, 1] * R1[k, 1, c] + Q[a, 2] * R1[k, 2, c]
                else:
                    R[k, a, c] = R1[k, a, 0] * Q[0, c] + R1[k, a, 1] * Q[1, c] + R1[k, a, 2] * Q[2, c]


@jit_kernel
def _ext(P, y1, Y, k, q, d):
    """``P[q, 0] y1 + sum_j P[q, 1 + j] Y[k, j, d]`` (the sum as ``np.einsum`` forms it)."""
    v = 0.0
    for j in range(Y.shape[1]):
        v += P[q, 1 + j] * Y[k, j, d]
    return P[q, 0] * y1 + v


@jit_kernel
def _dot_end(end, Y, k, d):
    v = 0.0
    for j in range(Y.shape[1]):
        v += end[1 + j] * Y[k, j, d]
    return v


@jit_kernel
def extrapolate(Pe, Pi, end, Yp, Y, pos, pos1, rot, mom, mom1, mom_now):
    """The warm predictor of ``n`` rows of unknowns (bodies of one group, or the joints): every slot of
    the previous element's ``Yp (n, p, slots)`` extrapolated to the new internal points by ``Pi``
    (degree ``p - 1``), into ``Y``; then the slots ``pos (a,)`` (start values ``pos1 (n, a)``: positions,
    modal coordinates) by ``Pe`` (degree ``p`` through the start value), the rotation increment at
    ``rot .. rot + 3`` (``rot < 0``: none) by ``Pe`` re-based on the new start, and the momenta /
    multipliers ``mom (b,)`` (start ``mom1 (n, b)``) by ``Pe`` shifted by the gauge reset to their new
    start ``mom_now (n, b)``."""
    p = Yp.shape[1]
    for k in range(Yp.shape[0]):
        for q in range(p):
            for d in range(Yp.shape[2]):
                v = 0.0
                for j in range(p):
                    v += Pi[q, j] * Yp[k, j, d]
                Y[k, q, d] = v
            for a in range(pos.size):
                Y[k, q, pos[a]] = _ext(Pe, pos1[k, a], Yp, k, q, pos[a])
            if rot >= 0:
                for d in range(3):
                    Y[k, q, rot + d] = _ext(Pe, 0.0, Yp, k, q, rot + d) - _dot_end(end, Yp, k, rot + d)
            for a in range(mom.size):
                mend = end[0] * mom1[k, a] + _dot_end(end, Yp, k, mom[a])
                Y[k, q, mom[a]] = _ext(Pe, mom1[k, a], Yp, k, q, mom[a]) + (mom_now[k, a] - mend)
