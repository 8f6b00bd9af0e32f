"""The gap of a contact along one time element, from the element's end values: the flight prediction
(where a contact under a constant normal acceleration closes) and the cubic Hermite interpolant of the
gap (where it crosses zero going in, whether it dips below the tolerance inside the element).

Shapes: arrays over the contacts ``(k,)``; gaps [m], normal velocities (gap rates) [m/s], normal
accelerations [m/s^2], lengths [s].  A crossing is *going in*: the gap falls through zero
(``dg/dt < 0`` there); a contact leaving the surface (``g = 0``, ``dg/dt > 0``) is not a crossing.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def predict(g: NDArray, v: NDArray, a: NDArray, h: float) -> float:
    """The first time in ``(0, h)`` at which a gap ``g + v t + a t^2 / 2`` falls through zero (``a`` the
    contact's normal acceleration over the last element, NaN where unknown: no prediction); ``h`` when
    none does.  Exact for a rigid body's free flight under constant loads (the time element integrates
    it exactly), so the element lands on the impact without a location."""
    best = h
    for g0, v0, a0 in zip(np.atleast_1d(g), np.atleast_1d(v), np.atleast_1d(a)):
        if not np.isfinite(a0):
            continue
        if a0 == 0.0:
            roots = (-g0 / v0,) if v0 else ()
        else:
            disc = v0 * v0 - 2.0 * a0 * g0
            if disc < 0.0:
                continue
            q = -(v0 + np.copysign(np.sqrt(disc), v0))  # the two roots without cancellation
            roots = (q / a0, 2.0 * g0 / q) if q else (0.0,)
        for t in roots:
            if 0.0 < t < best and v0 + a0 * t < 0.0:  # going in
                best = t
    return float(best)


def hermite(g0: float, v0: float, g1: float, v1: float, h: float) -> NDArray:
    """Coefficients ``(c3, c2, c1, c0)`` of the gap's cubic Hermite interpolant in ``s`` in [0, 1]
    (``t = s h``): gaps ``g0, g1`` and rates ``v0, v1`` at the element's ends."""
    return np.array([2 * g0 + h * v0 - 2 * g1 + h * v1, -3 * g0 - 2 * h * v0 + 3 * g1 - h * v1, h * v0, g0])


def first_crossing(g0, v0, g1, v1, h: float, tol: float) -> NDArray:
    """Per contact, the first time in ``(0, h)`` at which the Hermite interpolant of the gap goes in
    (falls through zero) and then reaches below ``-tol`` before the element's end; ``inf`` where it
    does not.  Catches an element ending beyond the surface (``g1 < -tol``) as well as a contact that
    dips in and out inside the element (``g1 > -tol``: a flight much shorter than the element)."""
    g0, v0, g1, v1 = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (g0, v0, g1, v1))
    out = np.full(g0.shape, np.inf)
    for k in range(g0.size):
        c = hermite(g0[k], v0[k], g1[k], v1[k], h)
        dc = np.polyder(c)
        roots = np.roots(c) if abs(c[0]) > 0 else np.roots(c[1:])
        s_in = sorted(float(r.real) for r in roots if abs(r.imag) <= 1e-9 and 0.0 < r.real < 1.0
                      and np.polyval(dc, r.real) < 0)
        if not s_in:
            continue
        # the deepest point after the crossing: the cubic's end or its interior minimum
        cand = [1.0] + [float(r.real) for r in np.roots(dc) if abs(r.imag) <= 1e-12 and s_in[0] < r.real < 1.0]
        if min(np.polyval(c, s) for s in cand) < -tol:
            out[k] = s_in[0] * h
    return out
