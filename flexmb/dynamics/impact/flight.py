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
    it exactly), so the element lands on the impact without a location.  Vectorized over the contacts."""
    g, v, a = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (g, v, a))
    ok = np.isfinite(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = v * v - 2.0 * a * g
        quad = ok & (a != 0.0) & (disc >= 0.0)
        q = -(v + np.copysign(np.sqrt(np.maximum(disc, 0.0)), v))  # the two roots without cancellation
        lin = ok & (a == 0.0) & (v != 0.0)
        roots = np.stack([np.where(lin, -g / v, np.inf),
                          np.where(quad & (q != 0.0), q / a, np.inf),
                          np.where(quad & (q != 0.0), 2.0 * g / q, np.inf),
                          np.where(quad & (q == 0.0), 0.0, np.inf)])
        going_in = np.where(np.isfinite(roots), v + np.where(ok, a, 0.0) * roots, 0.0) < 0.0
    valid = (roots > 0.0) & (roots < h) & going_in
    return float(np.min(np.where(valid, roots, h), initial=h))


def hermite(g0: float, v0: float, g1: float, v1: float, h: float) -> NDArray:
    """Coefficients ``(c3, c2, c1, c0)`` of the gap's cubic Hermite interpolant in ``s`` in [0, 1]
    (``t = s h``): gaps ``g0, g1`` and rates ``v0, v1`` at the element's ends."""
    return np.array([2 * g0 + h * v0 - 2 * g1 + h * v1, -3 * g0 - 2 * h * v0 + 3 * g1 - h * v1, h * v0, g0])


def _real_roots(c: NDArray, tol_imag: float) -> NDArray:
    """``(k, d)``: the real roots of the polynomials ``c (k, d + 1)`` (highest power first, as
    ``np.roots``: eigenvalues of the companion matrices, batched), NaN where a root is complex (imaginary
    part above ``tol_imag``) or missing (a zero leading coefficient lowers the degree)."""
    k, d = c.shape[0], c.shape[1] - 1
    out = np.full((k, d), np.nan)
    full = c[:, 0] != 0.0
    if full.any():
        A = np.zeros((int(full.sum()), d, d))
        A[:, 0, :] = -c[full, 1:] / c[full, :1]
        A[:, np.arange(1, d), np.arange(d - 1)] = 1.0
        r = np.linalg.eigvals(A)
        out[full] = np.where(np.abs(r.imag) <= tol_imag, r.real, np.nan)
    for i in np.nonzero(~full)[0]:  # an exactly lower degree (rare): np.roots strips it
        r = np.roots(c[i])
        out[i, :r.size] = np.where(np.abs(r.imag) <= tol_imag, r.real, np.nan)
    return out


def first_crossing(g0, v0, g1, v1, h: float, tol: float) -> NDArray:
    """Per contact, the first time in ``(0, h)`` at which the Hermite interpolant of the gap goes in
    (falls through zero) and then reaches below ``-tol`` before the element's end; ``inf`` where it
    does not.  Catches an element ending beyond the surface (``g1 < -tol``) as well as a contact that
    dips in and out inside the element (``g1 > -tol``: a flight much shorter than the element).

    Vectorized over the contacts (one call for every node of a node set): the cubics whose Bezier
    control points ``g0, g0 + h v0 / 3, g1 - h v1 / 3, g1`` all lie above ``-tol`` cannot reach below it
    (convex hull) and are skipped; the others' roots come from batched companion matrices."""
    g0, v0, g1, v1 = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (g0, v0, g1, v1))
    out = np.full(g0.shape, np.inf)
    low = np.minimum(np.minimum(g0, g1), np.minimum(g0 + h * v0 / 3.0, g1 - h * v1 / 3.0)) < -tol
    idx = np.nonzero(low)[0]
    if not idx.size:
        return out
    c = np.stack([2 * g0 + h * v0 - 2 * g1 + h * v1, -3 * g0 - 2 * h * v0 + 3 * g1 - h * v1, h * v0, g0], axis=1)[idx]
    dc = c[:, :3] * np.array([3.0, 2.0, 1.0])
    r = _real_roots(c, 1e-9)
    slope = dc[:, :1] * r * r + dc[:, 1:2] * r + dc[:, 2:3]
    s_in = np.min(np.where((r > 0.0) & (r < 1.0) & (slope < 0.0), r, np.inf), axis=1)
    # the deepest point after the crossing: the cubic's end or its interior minimum
    rd = _real_roots(dc, 1e-12)
    inside = (rd > s_in[:, None]) & (rd < 1.0)
    val = lambda s: ((c[:, :1] * s + c[:, 1:2]) * s + c[:, 2:3]) * s + c[:, 3:4]  # noqa: E731
    deepest = np.minimum(val(np.ones((idx.size, 1)))[:, 0], np.min(np.where(inside, val(np.nan_to_num(rd)), np.inf), axis=1))
    hit = np.isfinite(s_in) & (deepest < -tol)
    out[idx[hit]] = s_in[hit] * h
    return out
