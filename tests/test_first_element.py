"""The first time element of a run takes the compiled Newton loop too (issue 17 D, X3 in Exudyn's time).

Before, the first element of a pattern ran the general Newton loop (its first evaluation records the
Jacobian pattern, its first factorization the pivots the compiled loop refactors along): 11 of the 44 ms
of X3's run to its first maximum.  Now the fused evaluator records the pattern and factors the
predictor's Jacobian first (:meth:`flexmb.dynamics.solve.fused.FusedEvaluator.newton`), and the compiled
loop solves the element from the same predictor.  The loop is the general one's iteration compiled, so
the run is the same bit for bit as one whose first element the general loop solves (a ``Stages.newton``
that sends it there).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.simulate import Run
from flexmb.dynamics.solve.newton import newton_solve
from flexmb.dynamics.step.advance import Stages
from flexmb.validation.cases import case_x3

from test_fused_newton import _chain, _iftomm_pendulum


def _general_first(system, st, h, U0, scale, factor, options):
    """The element's Newton as before: the general loop while the pattern is not built."""
    if system.pattern is None:
        system.newton_calls["general"] += 1
        return newton_solve(lambda U: system.evaluate(U, st, h), U0, scale, factor, options,
                            residual=lambda U: system.residual(U, st, h))
    return system.newton(st, h, U0, scale, factor, options)


def _x3(stiffening):
    return case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, stiffening, case_x3.rod_data())


@pytest.mark.parametrize("make, t_end, h, p", [
    (lambda: _x3("none"), 0.9 / case_x3.OMEGA_X3, 1e-3, 2),   # X3 linear to past its first maximum: 8 elements
    (lambda: _x3("full"), 0.3 / case_x3.OMEGA_X3, 1e-3, 3),
    (lambda: _chain(5), 0.1, 5e-3, 2),
    # from rest: the second increment contracts by less than stall_rate; the general loop iterates on where
    # the backward error is above round-off, and so does the compiled loop (before: it handed the element over)
    (_iftomm_pendulum, 0.25, 1 / 32, 2),
])
def test_first_element_takes_the_compiled_loop(make, t_end, h, p):
    runs = []
    for stages in (None, Stages(newton=_general_first)):
        run = Run.start(make(), t_end, h, p, 0.0, fm.SimulationOptions(), stages)
        runs.append((run.go(show_progress=False), dict(run.system.newton_calls)))
    (sol, seen), (ref, seen_ref) = runs
    assert seen_ref["general"] >= 1  # the reference's first element: the general loop
    assert seen["compiled"] == seen_ref["compiled"] + 1 and seen["general"] == seen_ref["general"] - 1
    assert np.array_equal(sol.stats["iterations"], ref.stats["iterations"])
    for name in ("body_position", "body_rotation", "body_velocity", "joint_force", "joint_moment"):
        assert np.array_equal(getattr(sol, name), getattr(ref, name)), name  # bit for bit
