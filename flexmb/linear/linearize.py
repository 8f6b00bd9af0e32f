"""The linearized equations of motion at an equilibrium or at a point of a trajectory: :func:`linearize`.

The forms (:mod:`flexmb.linear.forms`): the descriptor pencil ``E y' = A y`` over the p = 1 element's
unknowns, the second-order form ``M z'' + C z' + K z = W mu``, ``G z = 0`` in the bodies' coordinates
and in independent coordinates ``z = Z xi``; at a point of a trajectory :mod:`flexmb.linear.trajectory`.
"""
from __future__ import annotations

import numpy as np

from flexmb.errors import ModelError
from flexmb.linear.forms import Linearization, coordinate_names, pencil, rotating_frame, second_order
from flexmb.linear.statics import Equilibrium, scales, static_system

__all__ = ["linearize", "Linearization", "EQUILIBRIUM_TOL"]

#: largest scaled static residual accepted as an equilibrium
EQUILIBRIUM_TOL = 1e-6


def linearize(state=None, t: float | None = None, *, check: bool = True, eq=None) -> Linearization:
    """The linearized equations of motion at the equilibrium ``state`` (from
    :func:`flexmb.linear.equilibrium.equilibrium`), or at the time ``t`` of a :class:`~flexmb.Solution`
    (frozen-time linearization along a trajectory, :mod:`flexmb.linear.trajectory`; also an
    :class:`~flexmb.linear.trajectory.OperatingPoint` from ``operating_point(sol, t)``).

    Raises :class:`~flexmb.errors.ModelError` when ``state`` is an Equilibrium that is not one (its
    static residual, recomputed, exceeds ``EQUILIBRIUM_TOL`` in the scales of :func:`equilibrium`;
    ``check=False`` skips the test), when ``t`` is outside the Solution or given with an Equilibrium."""
    from flexmb.linear.trajectory import OperatingPoint, linearize_point, operating_point
    from flexmb.results.solution import Solution

    if eq is not None:  # the keyword of the first releases: linearize(eq=...)
        if state is not None:
            raise ModelError("linearize: give the state once, positionally (linearize(eq)) or as eq=, not both")
        state = eq
    if state is None:
        raise ModelError("linearize: no state given; linearize(fm.equilibrium(model)) or linearize(sol, t=...)")

    if isinstance(state, Solution):
        if t is None:
            raise ModelError(f"linearize: a Solution needs the time of the point, t=... within "
                             f"[{state.t[0]:.6g}, {state.t[-1]:.6g}] s")
        return linearize_point(operating_point(state, t))
    if t is not None:
        raise ModelError(f"linearize: t={t!r} is for a Solution (the time of a point of a trajectory); an "
                         f"{type(state).__name__} carries its own time: linearize(eq)")
    if isinstance(state, OperatingPoint):
        return linearize_point(state)
    eq = state
    if not isinstance(eq, Equilibrium):
        raise ModelError(f"linearize: state={type(eq).__name__} is not an Equilibrium nor a Solution; compute one "
                         f"with fm.equilibrium(model, t), or give a Solution and t=")
    pen, st, Q = eq.pencil, eq.start, eq.reactions
    ev = getattr(eq, "evaluation", None)
    if ev is not None and not np.array_equal(ev[0][pen.ix.q], np.asarray(Q, float).ravel()):
        ev = eq.evaluation = None  # the reactions were changed after the solve
    if check and ev is None:  # (an evaluation kept by equilibrium() is that of its converged residual)
        F, _, _ = static_system(pen, st, Q, getattr(eq, "spin", None))
        _, fs = scales(pen, st, F.size, getattr(eq, "spin", None))
        res = float(np.max(np.abs(F) / fs, initial=0.0))
        if res > EQUILIBRIUM_TOL:
            raise ModelError(f"linearize: the state is not an equilibrium (largest scaled static residual "
                             f"{res:.3e} > {EQUILIBRIUM_TOL:.0e}); linearize about fm.equilibrium(model, t), or "
                             f"at a point of a simulation: fm.linearize(solution, t=...)")
    if getattr(eq, "linearization", None) is not None and ev is not None:
        return eq.linearization
    spin = getattr(eq, "spin", None)
    E, A, (U, r0, r1, J0, J1, KB) = pencil(pen, st, Q, spin, ev)
    M, C, K, G, W = second_order(pen, E, A, J0)
    if spin is not None:
        C, K = rotating_frame(pen, spin, A, M, C, K, second_order.Ez, U[pen.ix.w])
    elif second_order.Ez.nnz and abs(second_order.Ez).max() > 1e-9 * abs(M).max():
        raise AssertionError("linearize: the momenta depend on the configuration at rest")
    eq.linearization = Linearization(E=E, A=A, M=M, C=C, K=K, G=G, W=W, coordinates=coordinate_names(pen.cm),
                                     equilibrium=eq, J0=J0, velocities=U[pen.ix.w].copy(),
                                     reactions=second_order.reactions)
    return eq.linearization
