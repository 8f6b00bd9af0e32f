"""Coulomb friction at an impact: Newton's law on the normal, Coulomb's cone on the tangential impulse.

The contacts' rows stacked (per contact: its normal row, then its two tangential rows when ``mu > 0``),
the velocities after the impact are ``y = W P + b`` with the Delassus matrix ``W (r, r)`` of all rows
and ``b`` the free velocities shifted by Newton's target (normal rows: ``v_n0 + e v_n- (+ bias)``;
tangential rows: the slip ``v_t0``).  Per contact (normal impulse ``P_n``, tangential ``P_t (2,)``):

* Newton: ``P_n >= 0``, ``y_n >= 0``, ``P_n y_n = 0``;
* Coulomb on the circular cone: ``|P_t| <= mu P_n``; sticking ``y_t = 0`` when ``|P_t| < mu P_n``,
  sliding ``P_t = -mu P_n y_t / |y_t|`` otherwise.

This is the *algebraic* impact law (the post-impact slip decides the friction direction; Brach,
*Mechanical Impact Dynamics*, 1991; Glocker's Newton-Coulomb law).  It agrees with Routh's incremental
analysis (Stronge) when the slip neither stops nor reverses during the impact, which holds for the
sphere and for the rod cases C7 checks.

How it is solved: block Gauss-Seidel over the contacts, each contact's 3 x 3 problem solved exactly
(the other contacts' impulses frozen): separation (``b_n >= 0``: ``P = 0``), else sticking (``W P =
-b``, accepted inside the cone), else sliding, whose direction ``s = (cos a, sin a)`` in the tangent
plane is the root of ``s x y_t(a) = 0`` with ``s . y_t(a) > 0`` (``P_n = -b_n / (W_nn - mu W_nt s)``,
``y_t = b_t + P_n (W_tn - mu W_tt s)``), bracketed on a 64-point ring around the direction of the free
slip (which and its opposite fall mid-interval: the planar roots) and refined by Brent's method to round-off.  One contact is one exact pass (the closed forms
of C7 to round-off); several contacts iterate to ``|dP| <= 1e-14 |P|``.  We solve the exact circular
cone rather than a pyramid LCP: the pyramid makes friction anisotropic (a slip along a pyramid
diagonal feels ``sqrt(2) mu``), and Lemke's method would be a second solver beside the NNLS of the
frictionless case; the exact small problem is a few lines per contact.  Gauss-Seidel is not
guaranteed to converge for strongly coupled contacts with large ``mu`` (the Coulomb problem may have
several solutions or none): it then raises, naming the contacts, never returns an unchecked impulse.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as sopt
from numpy.typing import NDArray

#: Gauss-Seidel sweeps over the contacts
MAX_SWEEPS = 500
#: points of the ring that brackets the slip direction
RING = 64


class FrictionFailure(Exception):
    """The Coulomb problem of contact ``k`` (block index) has no solution the method can find; ``why``."""

    def __init__(self, k: int, why: str):
        super().__init__(why)
        self.k, self.why = k, why


def contact_block(W: NDArray, b: NDArray, mu: float) -> NDArray:
    """The impulse ``(1,)`` or ``(3,)`` of one contact (normal first) with Delassus block ``W`` and free
    velocities ``b`` (module doc); ``mu`` its friction coefficient (ignored for a 1-row block)."""
    n = b.size
    if b[0] >= 0.0:
        return np.zeros(n)  # separating: the free velocity meets Newton's law
    if n == 1:
        return np.array([-b[0] / W[0, 0]])
    P = np.linalg.lstsq(W, -b, rcond=1e-13)[0]
    if P[0] > 0.0 and np.hypot(P[1], P[2]) <= mu * P[0] and np.allclose(W @ P, -b, rtol=0, atol=1e-12 * np.abs(b).max()):
        return P  # sticking
    return _sliding(W, b, mu)


def _sliding(W: NDArray, b: NDArray, mu: float) -> NDArray:
    """The sliding impulse ``(3,)`` (module doc), the root nearest the free slip's direction."""
    Wnt, Wtn, Wtt = W[0, 1:], W[1:, 0], W[1:, 1:]

    def parts(a: float):
        s = np.array([np.cos(a), np.sin(a)])
        den = W[0, 0] - mu * Wnt @ s
        Pn = -b[0] / den if den > 0 else np.inf
        return s, Pn, b[1:] + Pn * (Wtn - mu * Wtt @ s) if np.isfinite(Pn) else np.full(2, np.nan)

    def f(a: float) -> float:
        s, _, yt = parts(a)
        return float(s[0] * yt[1] - s[1] * yt[0])

    a0 = float(np.arctan2(b[2], b[1])) if np.any(b[1:]) else 0.0
    ring = a0 + np.pi / RING + np.linspace(-np.pi, np.pi, RING + 1)  # a0 and a0 + pi mid-interval: bracketed
    fv = np.array([f(a) for a in ring])
    best = None
    for i in range(RING):
        lo, hi = ring[i], ring[i + 1]
        if not (np.isfinite(fv[i]) and np.isfinite(fv[i + 1])) or fv[i] * fv[i + 1] > 0:
            continue
        a = lo if fv[i] == 0 else hi if fv[i + 1] == 0 else sopt.brentq(f, lo, hi, xtol=1e-15, rtol=1e-15)
        s, Pn, yt = parts(a)
        if Pn > 0 and s @ yt >= 0 and (best is None or abs(a - a0) < abs(best - a0)):
            best = a
    if best is None:
        raise FrictionFailure(-1, f"neither sticking nor sliding meets Coulomb's law (mu = {mu:.6g}; the tangential-"
                                  f"normal coupling W_nt = {Wnt.tolist()} makes the normal impulse non-positive "
                                  f"for every slip direction)")
    s, Pn, _ = parts(best)
    return np.r_[Pn, -mu * Pn * s]


def coulomb_impulses(W: NDArray, b: NDArray, blocks: list, mu: NDArray) -> NDArray:
    """The stacked impulses ``P (r,)`` (module doc) for the Delassus matrix ``W (r, r)``, free velocities
    ``b (r,)``, ``blocks`` (per contact the slice of its rows: 1 or 3) and ``mu (k,)``."""
    P = np.zeros(b.size)
    for sweep in range(MAX_SWEEPS):
        old = P.copy()
        for k, sl in enumerate(blocks):
            bk = b[sl] + W[sl] @ P - W[sl, sl] @ P[sl]
            try:
                P[sl] = contact_block(W[sl, sl], bk, mu[k])
            except FrictionFailure as err:
                raise FrictionFailure(k, err.why) from None
        if len(blocks) == 1 or np.abs(P - old).max() <= 1e-14 * max(float(np.abs(P).max()), 1e-300):
            return P
    k = int(np.argmax([np.abs(P[sl] - old[sl]).max() for sl in blocks]))
    raise FrictionFailure(k, f"the contacts' impulses did not settle after {MAX_SWEEPS} Gauss-Seidel sweeps "
                             f"(change {np.abs(P - old).max():.3g} N s); strongly coupled contacts with large friction "
                             f"may have several Coulomb solutions or none")


def coulomb_violation(W: NDArray, b: NDArray, P: NDArray, blocks: list, mu: NDArray) -> tuple[int, str] | None:
    """The first contact whose impulse breaks Newton's or Coulomb's law (module doc) beyond round-off,
    ``(k, what)``, or None."""
    y = W @ P + b
    scale = max(float(np.abs(b).max()), 1e-300)
    tol = 1e-9 * scale
    Ptol = 1e-9 * max(float(np.abs(P).max()), 1e-300)
    for k, sl in enumerate(blocks):
        p, v = P[sl], y[sl]
        if p[0] < -Ptol or v[0] < -tol or abs(p[0] * v[0]) > tol * max(abs(p[0]), 1e-300):
            return k, f"normal impulse {p[0]:.6g} N s with normal velocity after {v[0]:.6g} m/s (Newton's law)"
        if p.size == 1 or p[0] <= Ptol:
            continue  # frictionless, or separating (no impulse: any slip)
        pt, vt = np.hypot(p[1], p[2]), np.hypot(v[1], v[2])
        if pt > mu[k] * p[0] + Ptol:
            return k, f"tangential impulse {pt:.6g} N s outside the cone mu P_n = {mu[k] * p[0]:.6g} N s"
        if vt > tol and (pt < mu[k] * p[0] - Ptol or np.hypot(*(p[1:] / max(pt, 1e-300) + v[1:] / vt)) > 1e-7):
            return k, (f"slip {vt:.6g} m/s after the impact with tangential impulse {pt:.6g} N s not opposite to it "
                       f"at the cone's edge (mu P_n = {mu[k] * p[0]:.6g} N s)")
    return None
