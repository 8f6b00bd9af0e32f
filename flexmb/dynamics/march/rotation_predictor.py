"""The predictor of the bodies' rotation increments from the angular velocity (task BIGN, issue 6 C).

Why: Newton's second increment on the N-link chain (p = 1, h = 1e-3) was ~3e-5 (scaled) whatever
the predictor's error in the other unknowns, which kept 3.5-3.75 iterations per element at
N >= 1000.  Starting Newton from the converged solution with only one kind of unknown set back to
its predicted value (N = 20, element 10) locates it: velocities, momenta, multipliers, reactions and
attachment velocities (predictor errors up to 2.5e-2 scaled) leave 1e-15 after one Newton step
(the equations are nearly linear in them); the rotation increments ``theta`` (predictor error 2.1e-5
rad) leave 7.8e-6: the joint reactions depend on the rotations through ``R = exp(theta) R1`` with a
large curvature (the remainder ``F(U0 + t d) - F(U0) - t J d`` scales as ``t^2``: the Jacobian is
exact, it is the nonlinearity).  The extrapolation of ``theta`` from the previous element (degree
``p`` in time, rebased on the new start) has an error ``O(h^(p+1))`` of the angular acceleration.

What: the rotation kinematics of an element are ``sum_j D_ij Theta_j = h T(Theta_i)^-1 omega_i``
(``Theta_0 = 0`` at the start).  The angular velocity is extrapolated instead, by the polynomial of
degree ``p`` through the node's angular velocity (``w``, the node velocity the run already has,
at ``s = 0``) and the previous element's internal values (at ``s = c_j - 1``), and ``Theta`` solves
the kinematics with ``T^-1 ~ I`` (``Theta = h D^-1 omega``; the ``T^-1`` term is of third order:
``theta x omega / 2`` with ``theta`` nearly parallel to ``omega``).  This uses the node velocity at
the element's start, which the previous element does not know: an error ``O(h^(p+2))``.

Measured (one session, 2-core machine): mean Newton iterations per element N = 1000 chain, p = 1,
h = 1e-3, 30 steps 3.53 -> 2.97; 15-link chain p = 3, h = 5e-3 3.39 -> 2.95, h = 1e-2 5.59 -> 5.01;
positions within 3e-13 m of the former path (Newton tolerance 1e-10 of the scales).

Guard: in violent phases (case R5, the 15-link chain driven at both ends at 20 rad/s, p = 1,
h = 2.5e-3, past the bifurcation at ~0.2 s) the node velocity and the extrapolated angular velocity
do not follow the motion, and the unguarded predictor made Newton fail more often (89 halved
elements in 0.5 s against 60) and moved the run onto another branch (mirror error 1.3e-6 of the
span against 7e-9, above the case's 1e-6).  Where the two predictions of a body differ by more than
``GUARD`` (0.3) x the former increment and by more than ``GUARD_ABS`` (1e-4 rad: bodies that start
from rest, whose increments are small, e.g. the far end of the N = 1000 chain in its first 30 steps),
the former is kept: R5 58 halvings, mirror error 2.3e-9, the same branch as without this predictor
(bar 8 flung up 30.517); the N = 1000 chain keeps 2.97 iterations per element (3.17 with the relative
test alone).

Used for every body type that keeps ``theta (3)`` at slot ``BTH`` and ``omega`` at ``BW + 3 ..
BW + 6`` of its unknowns, with ``omega`` at columns 3..6 of its node velocities (the rigid body and
the modal body, both ``R = exp(theta) R1``; :mod:`flexmb.dynamics.bodies`); others are left as
predicted.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import jit_kernel, scratch
from flexmb.dynamics.march.kernels import warm_ratio
from flexmb.dynamics.time_elements import TimeElement, lagrange_matrices, once_per_time_element


@once_per_time_element
def _rotation_matrices(te: TimeElement, ratio: float = 1.0):
    """``P (p, p + 1)``: values at the new internal points ``c`` of the polynomial through ``s = 0``
    and ``s = (c - 1) / ratio`` (the previous element's internal points, in units of the new element's
    length; ``ratio``: the new length over the previous one); ``Dinv (p, p)``: ``D[:, 1:]^-1``."""
    P, _ = lagrange_matrices(np.concatenate([[0.0], (te.c - 1.0) / ratio]), te.c)
    return P, np.linalg.inv(te.D[:, 1:])


def predict_rotations(cm, lay, te: TimeElement, h: float, w: NDArray, prev, U: NDArray) -> NDArray:
    """Replace the predicted rotation increments in ``U`` (``(lay.size,)``, modified in place and
    returned) by ``h D^-1 omega_ext`` (module docstring), after an element ``prev``
    (:class:`~flexmb.dynamics.step.outcome.ElementPiece`) that the warm predictor extrapolates
    (:func:`flexmb.dynamics.march.kernels.length_ratio`); ``w`` the node velocities at the element's start."""
    ratio = warm_ratio(prev, h)
    if ratio is None:
        return U
    U_prev = prev.U
    P, Dinv = _rotation_matrices(te, ratio)
    for grp in cm.groups:
        bth, bw = getattr(grp, "BTH", None), getattr(grp, "BW", None)
        if bth is None or bw is None or len(grp.bodies) == 0:
            continue
        om0 = w[grp.vel_cols[:, 3:6]]  # (n, 3) node angular velocity (a new contiguous array)
        _predict_theta(P, Dinv, float(h), om0, lay.group_view(U_prev, grp.bodies, grp.slots),
                       lay.group_view(U, grp.bodies, grp.slots), bth, bw, GUARD, GUARD_ABS)
    return U


@jit_kernel
def _predict_theta(P, Dinv, h, om0, gp, g, bth, bw, guard, guard_abs):  # pragma: no cover - compiled
    """``g[b, :, bth:bth + 3] = h D^-1 omega_ext`` for the bodies ``b`` the guard accepts (module
    docstring): ``omega_ext (p, 3) = P[:, 0] om0[b] + P[:, 1:] gp[b, :, bw + 3:bw + 6]``; the sums
    in the order of ``np.einsum("kj,bjd->bkd", ...)`` (sequential), so that the result is the NumPy
    formulation's bit for bit (``tests/test_lean.py``)."""
    n, p = g.shape[0], g.shape[1]
    om = np.empty((p, 3))
    th = np.empty((p, 3))
    for b in range(n):
        for k in range(p):
            for d in range(3):
                v = 0.0
                for j in range(p):
                    v += P[k, 1 + j] * gp[b, j, bw + 3 + d]
                om[k, d] = P[k, 0] * om0[b, d] + v
        for k in range(p):
            for d in range(3):
                v = 0.0
                for j in range(p):
                    v += Dinv[k, j] * om[j, d]
                th[k, d] = h * v
        # guard: where the two predictions differ by more than GUARD x the extrapolated increment the
        # motion changes faster than either extrapolation follows; the former one is kept there
        dmax = 0.0
        omax = 0.0
        for k in range(p):
            for d in range(3):
                e = abs(th[k, d] - g[b, k, bth + d])
                if e > dmax or e != e:
                    dmax = e
                a = abs(g[b, k, bth + d])
                if a > omax or a != a:
                    omax = a
        if dmax <= guard * omax or dmax <= guard_abs:
            for k in range(p):
                for d in range(3):
                    g[b, k, bth + d] = th[k, d]


#: relative difference of the two rotation predictions above which the former is kept (module docstring)
GUARD = 0.3
#: ... and by more than this many radians (a body starting from rest)
GUARD_ABS = 1e-4


@jit_kernel
def moved(U, U0, idx):  # pragma: no cover - compiled
    """``max |U[idx] - U0[idx]|`` (0 for none; NaN propagated, as ``.max()``): how far the unknowns
    ``idx`` moved from the predictor (``root_checks.flipped_joint``)."""
    m = 0.0
    for k in range(idx.size):
        a = abs(U[idx[k]] - U0[idx[k]])
        if a > m or a != a:
            m = a
            if a != a:
                break
    return m


@jit_kernel
def largest_turn(end, g, bth):  # pragma: no cover - compiled
    """``(angle, body, point)`` of the largest rotation increment ``|theta|`` of the bodies ``g (n,
    p, slots)`` (slot ``bth``) at the element's internal points (``point < p``) and its end
    (``point = p``: ``sum_j end[1 + j] theta_j``), the first in (body, point) order, NaN propagated:
    what ``np.linalg.norm`` of the stacked increments and ``np.argmax`` give, one pass
    (``root_checks.largest_turn``, bodies and joints); ``(-1.0, -1, -1)`` without any."""
    n, p = g.shape[0], g.shape[1]
    best = -1.0
    bb = -1
    bk = -1
    t = scratch(3)
    for b in range(n):
        for k in range(p + 1):
            for d in range(3):
                if k < p:
                    t[d] = g[b, k, bth + d]
                else:
                    v = 0.0
                    for j in range(p):
                        v += end[1 + j] * g[b, j, bth + d]
                    t[d] = v
            a = np.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
            if bb < 0 or a > best or (a != a and best == best):
                best, bb, bk = a, b, k
            if best != best:
                return best, bb, bk
    return best, bb, bk
