"""Symmetric projection of the node momenta onto the velocity constraints (issue 8 section 3).

The time elements impose the joints' constraints at position level (interior Lobatto points and the
end node); the node momenta ``p = pi`` (after the gauge reset, ``lambda = 0``) then satisfy the
velocity constraints ``G M^-1 p = target`` only approximately, and their constraint-normal part is
a parasitic mode of the element: the end value weighs the start value by ``e0 = (-1)^p``, so that
part is carried unchanged from node to node at even ``p`` (it accumulates the element's residue
and leaks into the motion as the constraint normal turns: secular energy growth) and reflected at
odd ``p`` (bounded, but weakly forced at p = 3).  Projecting the node momenta onto the velocity
constraints at the end of every element removes the mode but breaks the time symmetry of the
element (a linear energy drift at every order, docs/energy-drift.md).

The symmetric projection (Hairer, Lubich & Wanner, *Geometric Numerical Integration*, 2nd ed.,
section V.4.3) applies the *same* constraint impulse ``nu`` at both ends of the element::

    p1' = p1 + e0 G1^T nu                       (start node, before the element)
    (x2, p2~) = element(x1, p1')                (collocation-consistent transport, unchanged)
    p2  = p2~ + G2^T nu,   G2 M2^-1 p2 = target(t2)

``G^T nu`` is the wrench of the row multipliers ``nu`` (one per constrained component, frame A)
on B and its opposite on A, handed to the bodies as generalized momenta with the node's levers
(:mod:`flexmb.dynamics.node.projection`, the map of the gauge reset).  Time reversal maps the step
onto itself with the same ``nu`` (for either sign ``s`` of the start impulse, ``s = e0`` makes the
start impulse arrive at the end with the sign of the end impulse, so that ``nu`` controls the end
constraint with gain ``2 G M^-1 G^T``), so the element stays symmetric and the node momenta stay
on the velocity constraints: the parasitic mode is gone.

``nu`` is found by an outer iteration around the element's Newton (no new unknowns in the element
system): Broyden's method on the projector's multipliers at the end node,
``mu(nu) = (G2 M2^-1 G2^T)^-1 (G2 M2^-1 p2 - target)``, started from the transported chord Jacobian
``I + (G2 M2^-1 G2^T)^-1 G2 M2^-1 G1^T`` (the start impulse's constraint-normal part is carried to the
end unchanged in inertial components while the constraint rows turn over the element; ``2 I`` when
they do not).  Each outer iteration re-solves the element from its last solution (warm start: two
Newton iterations).  The impulses are joint impulses for the reactions (:meth:`SymmetricProjection._book_impulse`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.layout import JLAM
from flexmb.dynamics.node.projection import (apply_blocks, generalized, inverse_mass_blocks, joint_wrench, node_frames,
                                        node_projector)

log = logging.getLogger(__name__)

__all__ = ["symmetric_projection", "SymmetricProjection"]


def symmetric_projection(te) -> bool:
    """Whether the time element projects its node momenta symmetrically (``transport="symmetric"``)."""
    return getattr(te, "transport", "node") == "symmetric"


def constraint_impulse(cm, st, loc: NDArray, sel=None) -> NDArray:
    """``G^T nu (nv,)``: row multipliers ``loc (nj, 7)`` (:class:`~flexmb.dynamics.node.projection.NodeProjector`
    rows of the selection ``sel``, frame A) as generalized momenta of the bodies at node ``st``."""
    fr = node_frames(cm, st, sel)
    return generalized(cm, fr, joint_wrench(fr, loc))


def end_violation(cm, st, p: NDArray, sel=None):
    """``(mu (n,), loc (nj, 7))``: the projector's multipliers ``(G M^-1 G^T)^-1 (G M^-1 p - target)`` of the
    momenta ``p (nv,)`` at node ``st`` for the rows of the selection ``sel`` (None, None when the rows are
    singular)."""
    proj = node_projector(cm, sel)
    Mi = inverse_mass_blocks(cm, st)
    _, mu, loc = proj.project(cm, st, apply_blocks(cm, Mi, p), node_frames(cm, st, sel), Mi=Mi)
    return mu, loc


#: number of past elements whose ``nu`` predict the next one (polynomial extrapolation; linear: on the
#: pendulum at T/24 ``nu`` changes sign twice per swing, and a quadratic one saved nothing)
PREDICTOR_POINTS = 2
#: up to this many rows the first outer step uses the transported chord (:meth:`SymmetricProjection._chord_inverse`,
#: one projection per row), above it the chord ``2 I``
CHORD_ROWS = 30
#: weights of the extrapolation to the next equally spaced point from the last m values (oldest first)
_EXTRAPOLATION = {1: (1.0,), 2: (-1.0, 2.0), 3: (1.0, -3.0, 3.0), 4: (-1.0, 4.0, -6.0, 4.0)}


@dataclass
class SymmetricProjection:
    """State of the symmetric projection of one run: the last element's impulse ``nu`` (the predictor
    of the next), and counters (outer iterations per element)."""

    cm: object
    te: object
    #: ``(h, nu)`` of the last two elements (the predictor of the next)
    hist: list = field(default_factory=list)
    #: largest number of outer iterations per element
    max_outer: int = 30
    outer: list = field(default_factory=list)
    #: the run's constraint selection for the element in progress (set by :meth:`step`)
    sel: object = None

    def step(self, run, st, h: float, advance, solve):
        """One element from ``st`` with the symmetric projection: the
        :class:`~flexmb.dynamics.step.outcome.ElementOutcome` of the step from the start nodes with the
        impulse, ``advance(start)`` (:func:`flexmb.dynamics.step.advance.advance`: predictor, halvings) the
        first time, then ``solve(start, U0)`` (the solve stage,
        :func:`flexmb.dynamics.step.advance.solve_element`, and the root checks) from the last solution.

        Outer iteration on the row multipliers ``nu (n,)``: Broyden's method (inverse update, in the
        rows scaled by Newton's multiplier scales) on ``mu(nu) = 0``, started from the transported
        chord Jacobian (:meth:`_chord_inverse`; ``2 I`` above :data:`CHORD_ROWS` rows) and from ``nu``
        extrapolated linearly from the last two elements.  Pendulum, T/24, outer iterations (element
        solves) per element: p = 1 / 2 / 3: 4.4 / 3.8 / 3.75 (with the chord ``2 I``: 4.9 / 4.7 / 4.6)."""
        cm, te = self.cm, self.te
        self.sel = run.selection
        proj = node_projector(cm, self.sel)
        if cm.nj == 0 or proj.n == 0:
            return advance(st)
        e0 = float(te.end[0])
        sc = self._row_scales(run)[proj.jj, proj.cc]
        nu = self._predict(proj.n, h)
        H = 0.5 * np.eye(proj.n)  # inverse Jacobian of mu(nu) in scaled rows
        U = out = None
        R = dx = None
        tol = run.options.newton.tol
        for k in range(self.max_outer):
            start = st.copy()
            start.pi = st.pi + e0 * constraint_impulse(cm, st, self._loc(nu), self.sel)
            out = self._solve(start, U, advance, solve)
            end, U = out.end, out.U
            if len(out.pieces) > 1:  # the element was halved: its pieces are not projected
                log.info("symmetric projection: the element at t=%.6g was halved; its pieces' node momenta "
                         "are not projected", st.t)
                self.hist.clear()
                return out
            mu = end_violation(cm, end, end.pi + constraint_impulse(cm, end, self._loc(nu), self.sel), self.sel)[0]
            if mu is None:  # singular rows at the end node: keep the element as solved
                log.info("symmetric projection: singular velocity constraints at t=%.6g; not projected", end.t)
                self.hist.clear()
                return out
            Rn = mu / sc
            if R is None and proj.n <= CHORD_ROWS:
                H = self._chord_inverse(st, end, sc)
            if R is not None:  # Broyden's good update of the inverse Jacobian
                dR = Rn - R
                Hd = H @ dR
                den = dx @ Hd
                if abs(den) > 1e-300:
                    H += np.outer(dx - Hd, dx @ H) / den
            R = Rn
            err = np.max(np.abs(R))
            if err <= tol:
                break
            dx = -(H @ R)
            nu = nu + dx * sc
        else:
            log.info("symmetric projection: outer iteration at t=%.6g stopped at %.3g after %d iterations",
                     st.t, err, self.max_outer)
        self.outer.append(k + 1)
        end = out.end
        # the end momenta with the impulse the element was solved with (remaining violation below tol)
        loc = self._loc(nu)
        end.pi = end.pi + constraint_impulse(cm, end, loc)
        self._book_impulse(st, out.pieces[0].start, end, e0, loc)
        self.hist = (self.hist + [(h, nu)])[-PREDICTOR_POINTS:]
        return out

    def _book_impulse(self, st, start, end, e0: float, loc: NDArray) -> None:
        """The projection's impulses as joint impulses for the reactions (:mod:`flexmb.dynamics.node.reactions`):
        ``J = joint_wrench(loc)`` (force; moment about B's origin) at the start node (``e0 J(t1)``) and at the
        end node (``J(t2)``) are added to the element's ``lam_end`` (moment about ``x_B(t2)``), so that the
        cumulative impulse matches the node momenta, and the start one, which the bodies carry through
        the element, is kept on the element's start node as ``start_impulse = (e0 J(t1), x_B(t2))`` for
        the element record (:meth:`flexmb.dynamics.io.recorder.Recorder.internal`).  Measured on the
        pendulum (T/24 -> T/48, largest error of the pin force against 3 m g cos(theta)): p = 2
        4.4e-2 -> 2.9e-3 N (order 3.9; without the impulses 0.16 -> 0.054 N), p = 3 2.8e-3 -> 1.6e-4 N."""
        f1, f2 = node_frames(self.cm, st, self.sel), node_frames(self.cm, end, self.sel)
        j1, j2 = joint_wrench(f1, loc), joint_wrench(f2, loc)
        first = e0 * np.concatenate([j1[:, :3], j1[:, 3:] + np.cross(f1.xb - f2.xb, j1[:, :3])], axis=1)
        if end.lam_end is not None:
            end.lam_end = end.lam_end + first + j2
        start.start_impulse = (first, f2.xb.copy())

    def state(self) -> dict:
        """Checkpoint arrays: the predictor history (so that a resumed run is bit-identical)."""
        return {f"ckpt/projection/{k}": np.concatenate([[hh], nu]) for k, (hh, nu) in enumerate(self.hist)}

    def restore(self, ex) -> None:
        """The predictor history from checkpoint arrays ``ex`` (:meth:`state`)."""
        rows = [np.asarray(ex[f"ckpt/projection/{k}"], dtype=float) for k in range(PREDICTOR_POINTS)
                if f"ckpt/projection/{k}" in ex]
        self.hist = [(float(r[0]), r[1:].copy()) for r in rows]

    def _chord_inverse(self, st, end, sc: NDArray) -> NDArray:
        """Inverse of the chord Jacobian ``I + (G2 M2^-1 G2^T)^-1 G2 M2^-1 G1^T`` of ``mu(nu)`` in scaled rows:
        the start impulse reaches the end unchanged in inertial components (weight ``e0`` twice), seen by
        the end node's constraint rows (``2 I`` when the rows do not turn over the element)."""
        cm = self.cm
        n = sc.size
        mu0 = end_violation(cm, end, np.zeros(cm.nv), self.sel)[0]
        Jc = np.eye(n)
        for k in range(n):
            nu = np.zeros(n)
            nu[k] = sc[k]
            Jc[:, k] += (end_violation(cm, end, constraint_impulse(cm, st, self._loc(nu), self.sel), self.sel)[0] - mu0) / sc
        return np.linalg.inv(Jc)

    def _predict(self, n: int, h: float) -> NDArray:
        """``nu`` of the next element: linear extrapolation of the last two of the same length."""
        hist = [v for hh, v in self.hist if abs(hh - h) <= 1e-12 * h and v.size == n]
        if not hist:
            return np.zeros(n)
        w = _EXTRAPOLATION[len(hist)]
        return sum(wk * v for wk, v in zip(w, hist))

    def _loc(self, nu: NDArray) -> NDArray:
        """The rows' multipliers ``nu (n,)`` as ``(nj, 7)``."""
        proj = node_projector(self.cm, self.sel)
        loc = np.zeros((self.cm.nj, 7))
        loc[proj.jj, proj.cc] = nu
        return loc

    @staticmethod
    def _solve(start, U, advance, solve):
        """The element from ``start``: from its last solution ``U`` through the solve stage ``solve`` (warm
        Newton, then the root checks) or, first or when that fails or is refused, through ``advance``
        (predictor, halvings)."""
        if U is not None:
            out = solve(start, U)
            if out.accepted:
                return out
            log.info("symmetric projection: warm Newton failed at t=%.6g (%s); full solve", start.t, out.reason[1])
        return advance(start)

    def _row_scales(self, run) -> NDArray:
        """``(nj, 7)`` magnitudes of the row multipliers (the joints' multiplier scales of Newton)."""
        js = run.system.lay.joint_view(np.asarray(run.scale))[:, 0, JLAM:JLAM + 6]  # (nj, 6)
        return np.concatenate([js, js[:, 3:4]], axis=1)
