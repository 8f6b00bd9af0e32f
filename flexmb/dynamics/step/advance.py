"""One time element of length ``h`` from a start node, stage by stage (:func:`advance`):

1. predict      :func:`predict_element` (:mod:`flexmb.dynamics.march.marching`, ``predict``, and
                :mod:`flexmb.dynamics.march.rotation_predictor`): the initial guess ``U0``.
2. solve        :func:`flexmb.dynamics.variants.singular_node.solve_element`: Newton on the internal
                unknowns (:meth:`flexmb.dynamics.solve.evaluation.ElementSystem.newton`), wrapped by the
                singular-node variant (a start or end node on a singular configuration of the loops).
3. end values   :func:`flexmb.dynamics.march.marching.end_values`, inside the solve's
                :class:`~flexmb.dynamics.step.outcome.ElementOutcome` (the singular-node variant judges
                the end node, so it computes it once and hands it on).
4. root checks  :mod:`flexmb.dynamics.variants.root_checks`: a root that does not resolve the motion is
                refused like a Newton failure.

A failure retries from the constant-velocity guess, then halves the step (up to
``SimulationOptions.max_halvings`` times) and raises :class:`~flexmb.errors.ConvergenceError` beyond.  The
node projection and the record follow in :meth:`flexmb.dynamics.simulate.Run.commit`.
"""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.bodies.modal_residual import NODE_VELOCITY
from flexmb.dynamics.march.marching import predict
from flexmb.dynamics.march.rotation_predictor import predict_rotations
from flexmb.dynamics.node.constraints import node_velocity
from flexmb.dynamics.step.outcome import ElementOutcome, ElementPiece
from flexmb.dynamics.system import ElementStart
from flexmb.dynamics.variants.root_checks import largest_turn, refused_root
from flexmb.dynamics.variants.singular_node import solve_element
from flexmb.errors import ConvergenceError

log = logging.getLogger(__name__)

__all__ = ["advance", "predict_element"]


def predict_element(system, st: ElementStart, h: float, w: NDArray, prev: ElementPiece | None) -> NDArray:
    """Stage 1: the initial guess ``U0 (lay.size,)`` of the element from ``st`` of length ``h`` [s]: the
    previous element ``prev`` extrapolated (same length) or the constant-velocity guess from the node
    velocities ``w (nv,)``, then the rotation increments from the extrapolated angular velocity."""
    cm, lay, te = system.cm, system.lay, system.te
    return predict_rotations(cm, lay, te, h, w, prev, predict(cm, lay, te, st, h, w, prev))


def advance(system, st: ElementStart, h: float, w: NDArray, prev: ElementPiece | None, scale: NDArray, factor,
            options, depth: int = 0) -> ElementOutcome:
    """Advance one element of length ``h`` [s] from ``st`` (node velocities ``w (nv,)``, previous element
    ``prev``, Newton's scales ``scale (lay.size,)``, the run's ``factor`` and
    :class:`~flexmb.dynamics.simulate.SimulationOptions`), splitting it in halves when Newton fails."""
    cm, lay, te = system.cm, system.lay, system.te
    if any(getattr(g, "Ka", None) is not None for g in cm.groups):  # modal frame accelerations start
        # from the projected node velocity
        st.extra[NODE_VELOCITY] = w
    # the extrapolation of the previous element first; when Newton fails from it, the constant-velocity
    # guess before halving the step (large turns per element: the extrapolated polynomials of quantities
    # that rotate by ~1 rad per element can start Newton outside its basin where the cold guess does not)
    for guess in ((prev, None) if prev is not None else (None,)):
        if guess is None and prev is not None:
            log.info("Newton failed at t=%.6g (h=%.3g: %s) from the extrapolated guess; retrying from the "
                     "constant-velocity guess", st.t, h, r.message)
        U0 = predict_element(system, st, h, w, guess)
        # a diverging trial iterate may overflow: that is detected (non-finite residual) and handled
        # by halving the step, so numpy's floating-point warnings are not shown
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = solve_element(system, st, h, U0, scale, factor, options)  # solve and end values
        r = out.last.result
        if not r.converged:
            continue
        turn = largest_turn(cm, lay, te, r.U)
        if turn is not None:
            r.converged, r.worst = False, turn[1]
            r.message = (f"converged, but {turn[2]} turns by {turn[0]:.3g} rad within the "
                         f"element, more than half a revolution: the step cannot resolve that motion")
            continue
        bad = refused_root(system, U0, r, st, h, out.end)  # a flipped joint, an energy jump
        if bad is None:
            out.halvings = depth
            return out
        r.converged, (r.worst, r.message) = False, bad
    if depth >= options.max_halvings:
        for t_h, h_h, msg in system.halvings[-options.max_halvings:]:
            log.warning("Newton failed at t=%.6g (h=%.3g: %s); the step was halved", t_h, h_h, msg)
        where = system.describe(r.worst)
        raise ConvergenceError(
            f"Newton did not converge in the time element t = {st.t:.6g} .. {st.t + h:.6g} s "
            f"({r.message}; {r.iterations} iterations, contraction rate {r.rate:.3g}, scaled correction "
            f"{r.error:.3g}) after {depth} step halvings; largest correction: {where}. "
            f"Try a smaller step h, check the model for a singular configuration or a mechanism that locks, "
            f"or loosen SimulationOptions(newton=NewtonOptions(tol=...)).",
            time=st.t, report={"where": where, "message": r.message, "history": r.history},
        )
    log.info("Newton failed at t=%.6g (h=%.3g: %s); halving the step", st.t, h, r.message)
    system.halvings.append((st.t, h, r.message))
    first = advance(system, st, h / 2, w, None, scale, factor, options, depth + 1)
    w_mid = node_velocity(cm, first.end)
    second = advance(system, first.end, h / 2, w_mid, first.last, scale, factor, options, depth + 1)
    return ElementOutcome(second.end, first.pieces + second.pieces, max(first.halvings, second.halvings))
