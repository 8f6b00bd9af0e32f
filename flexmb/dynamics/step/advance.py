"""One time element of length ``h`` from a start node, stage by stage (:func:`advance`):

1. predict      :func:`predict_element` (:mod:`flexmb.dynamics.march.marching`, ``predict``, and
                :mod:`flexmb.dynamics.march.rotation_predictor`): the initial guess ``U0``.
2. solve        :func:`flexmb.dynamics.variants.singular_node.solve`: Newton on the internal unknowns
                (:meth:`flexmb.dynamics.solve.evaluation.ElementSystem.newton`), after the singular-node
                variant's start-node check (a start node on a singular configuration of the loops).
3. end values   :func:`flexmb.dynamics.march.marching.end_values`: the end node, the next element's start.
4. end check    :func:`flexmb.dynamics.variants.singular_node.check_end`: an end node on a singular
                configuration may replace the solve (its end values again, through this module's stage 3).
5. root checks  :func:`flexmb.dynamics.variants.root_checks.refusal`: a root that does not resolve the
                motion is refused like a Newton failure (an explicit
                :class:`~flexmb.dynamics.step.outcome.Refusal` in the outcome).

A warm element of a rigid model runs stages 1-3 in one compiled call of the same kernels where the run's
``Stages.element`` offers it (:mod:`flexmb.dynamics.step.compiled_element`), then stage 4 as here.
Stages 2-4 are :func:`solve_element` (what the symmetric projection re-runs from its own start nodes);
:func:`advance` adds 1 and 5, and the halving: a failure retries from the constant-velocity guess, then
halves the step (up to ``SimulationOptions.max_halvings`` times) and raises
:class:`~flexmb.errors.ConvergenceError` beyond.  The node projection and the record follow in
:meth:`flexmb.dynamics.simulate.Run.commit`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.bodies.modal_residual import NODE_VELOCITY
from flexmb.dynamics.march import marching  # end_values looked up at call time (benchmark profilers time it)
from flexmb.dynamics.march.marching import predict
from flexmb.dynamics.march.rotation_predictor import predict_rotations
from flexmb.dynamics.node.constraints import node_velocity
from flexmb.dynamics.step.outcome import ElementOutcome, ElementPiece
from flexmb.dynamics.system import ElementStart
from flexmb.dynamics.variants import singular_node
from flexmb.dynamics.variants.root_checks import refusal
from flexmb.errors import ConvergenceError

log = logging.getLogger(__name__)

__all__ = ["Stages", "advance", "predict_element", "solve_element"]


def _newton(system, st: ElementStart, h: float, U0: NDArray, scale: NDArray, factor, newton_options):
    """The element's Newton (:meth:`flexmb.dynamics.solve.evaluation.ElementSystem.newton`)."""
    return system.newton(st, h, U0, scale, factor, newton_options)


@dataclass(frozen=True)
class Stages:
    """The replaceable parts of the step that a run calls, a documented contract for tests and
    instrumentation (not public API): a run takes them from ``Run.start(..., stages=Stages(...))``
    (default: these), so that a test steers or observes the solver without patching module globals.

    * ``predict(cm, lay, te, st, h, w, prev) -> U0``: the guess of the element's unknowns
      (:func:`flexmb.dynamics.march.marching.predict`);
    * ``rotations(cm, lay, te, h, w, prev, U0) -> U0``: the rotation increments on that guess
      (:func:`flexmb.dynamics.march.rotation_predictor.predict_rotations`);
    * ``newton(system, st, h, U0, scale, factor, newton_options) -> NewtonResult``: the element's Newton
      (:meth:`~flexmb.dynamics.solve.evaluation.ElementSystem.newton`; a wrapper may force a failure by
      returning the result with ``converged=False``);
    * ``refusal(system, U0, out) -> Refusal | None``: the root checks
      (:func:`flexmb.dynamics.variants.root_checks.refusal`);
    * ``element(system, st, h, w, prev, scale, factor, options) -> (U0, ElementOutcome) | None``: stages 1-4
      of an element after ``prev`` in one call where the run's backend offers it (a run of the default
      stages: :func:`flexmb.dynamics.step.compiled_element.element_stage`, the same kernels in one compiled
      call), None when it declines; None (the default): the stages one by one."""

    predict: Callable = predict
    rotations: Callable = predict_rotations
    newton: Callable = _newton
    refusal: Callable = refusal
    element: Callable | None = None


#: the stages of a run that was not given others
STAGES = Stages()


def predict_element(system, st: ElementStart, h: float, w: NDArray, prev: ElementPiece | None,
                    stages: Stages = STAGES) -> NDArray:
    """Stage 1: the initial guess ``U0 (lay.size,)`` of the element from ``st`` of length ``h`` [s]: the
    previous element ``prev`` extrapolated (same length) or the constant-velocity guess from the node
    velocities ``w (nv,)``, then the rotation increments from the extrapolated angular velocity."""
    cm, lay, te = system.cm, system.lay, system.te
    return stages.rotations(cm, lay, te, h, w, prev, stages.predict(cm, lay, te, st, h, w, prev))


def solve_element(system, st: ElementStart, h: float, U0: NDArray, scale: NDArray, factor, options,
                  stages: Stages = STAGES) -> ElementOutcome:
    """Stages 2-4 of the element from ``st`` of length ``h`` [s] from the predictor ``U0 (lay.size,)``
    (Newton's scales ``scale``, the run's ``factor`` and
    :class:`~flexmb.dynamics.simulate.SimulationOptions`): solve, end values, end-node check; an
    :class:`~flexmb.dynamics.step.outcome.ElementOutcome` of one piece, its ``end`` None when Newton did not
    converge."""
    cm, lay, te = system.cm, system.lay, system.te

    def end_values(U):  # stage 3
        return marching.end_values(cm, lay, te, st, h, U)

    piece = singular_node.solve(system, st, h, U0, scale, factor, options, stages.newton)  # stage 2
    end = end_values(piece.U) if piece.result.converged else None  # stage 3
    return singular_node.check_end(system, piece, end, U0, scale, options, end_values)  # stage 4


def advance(system, st: ElementStart, h: float, w: NDArray, prev: ElementPiece | None, scale: NDArray, factor,
            options, stages: Stages = STAGES, depth: int = 0) -> ElementOutcome:
    """Advance one element of length ``h`` [s] from ``st`` (node velocities ``w (nv,)``, previous element
    ``prev``, Newton's scales ``scale (lay.size,)``, the run's ``factor``,
    :class:`~flexmb.dynamics.simulate.SimulationOptions` and :class:`Stages`), splitting it in halves when
    Newton fails."""
    cm = system.cm
    for g in cm.groups:  # modal frame accelerations start from the projected node velocity
        if getattr(g, "Ka", None) is not None:
            st.extra[NODE_VELOCITY] = w
            break
    # the extrapolation of the previous element first; when Newton fails from it, the constant-velocity
    # guess before halving the step (large turns per element: the extrapolated polynomials of quantities
    # that rotate by ~1 rad per element can start Newton outside its basin where the cold guess does not)
    for guess in ((prev, None) if prev is not None else (None,)):
        if guess is None and prev is not None:
            log.info("Newton failed at t=%.6g (h=%.3g: %s) from the extrapolated guess; retrying from the "
                     "constant-velocity guess", st.t, h, out.reason[1])
        one = stages.element(system, st, h, w, guess, scale, factor, options) \
            if stages.element is not None and guess is not None else None
        if one is not None:  # stages 1-4 in one compiled call (a plain warm element of a rigid model)
            U0, out = one
        else:
            U0 = predict_element(system, st, h, w, guess, stages)  # stage 1
            # a diverging trial iterate may overflow: that is detected (non-finite residual) and handled
            # by halving the step, so numpy's floating-point warnings are not shown
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                out = solve_element(system, st, h, U0, scale, factor, options, stages)  # stages 2-4
        if not out.converged:
            continue
        out.refusal = stages.refusal(system, U0, out)  # stage 5: a turn beyond half a revolution, a flipped joint,
        # an energy jump
        if out.refusal is None:
            out.halvings = depth
            return out
    worst, message = out.reason
    if depth >= options.max_halvings:
        for t_h, h_h, msg in system.halvings[-options.max_halvings:]:
            log.warning("Newton failed at t=%.6g (h=%.3g: %s); the step was halved", t_h, h_h, msg)
        where = system.describe(worst)
        r = out.last.result
        raise ConvergenceError(
            f"Newton did not converge in the time element t = {st.t:.6g} .. {st.t + h:.6g} s "
            f"({message}; {r.iterations} iterations, contraction rate {r.rate:.3g}, scaled correction "
            f"{r.error:.3g}) after {depth} step halvings; largest correction: {where}. "
            f"Try a smaller step h, check the model for a singular configuration or a mechanism that locks, "
            f"or loosen SimulationOptions(newton=NewtonOptions(tol=...)).",
            time=st.t, report={"where": where, "message": message, "history": r.history},
        )
    log.info("Newton failed at t=%.6g (h=%.3g: %s); halving the step", st.t, h, message)
    system.halvings.append((st.t, h, message))
    first = advance(system, st, h / 2, w, None, scale, factor, options, stages, depth + 1)
    w_mid = node_velocity(cm, first.end, sel=system.lay.selection)
    second = advance(system, first.end, h / 2, w_mid, first.last, scale, factor, options, stages, depth + 1)
    return ElementOutcome(second.end, first.pieces + second.pieces, max(first.halvings, second.halvings))
