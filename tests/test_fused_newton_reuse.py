"""The compiled Newton loop with the factorization reused across an element's iterations
(``NewtonOptions.reuse="element"``, and ``"auto"`` from ``reuse_min_unknowns`` on;
flexmb/dynamics/solve/fused_newton.py) against the Python loop of ``newton_solve``.

Both loops run on the same element (the same start, predictor and scales, the run's backend), one
after the other, through the run's documented ``Stages.newton`` contract: every element the compiled
loop answers must come out of the Python loop bit for bit (the iterate, the iteration, evaluation and
factorization counts, the increments).  The chains are chosen so that the reuse does its work: most
elements converge with one factorization, and some drop a reused matrix that stopped contracting (a
fresh Jacobian at the same iterate, a second factorization).  A rigid chain of spherical joints and a
chain of modal bars on revolutes; the joints must hold.  Before the compiled loop covered the reuse,
it declined every such element (``newton_calls["compiled"] == 0``)."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.simulate import Run
from flexmb.dynamics.solve.newton import NewtonOptions, newton_solve
from flexmb.dynamics.step.advance import Stages
from test_flexible_dynamics import beam
from test_fused_newton import _chain, _joints_hold


def _flexible_chain(k: int):
    """``k`` Craig-Bampton bars (1 m, 3 shapes each) in a row on revolutes about z, the first pinned to
    the ground, falling under gravity: the model of benchmarks/flexible_chain.py on a coarse mesh."""
    data = beam("craig-bampton", n_modes=1, E=7e8)
    bodies = [fm.FlexibleBody(f"bar{i}", data, position=(i - 1.0, 0.0, 0.0), stiffening="none")
              for i in range(1, k + 1)]
    joints = [fm.Revolute("J1", "ground", ("bar1", "xmin"), axis=(0, 0, 1))]
    joints += [fm.Revolute(f"J{i}", (f"bar{i - 1}", "xmax"), (f"bar{i}", "xmin"), axis=(0, 0, 1))
               for i in range(2, k + 1)]
    return fm.Model(bodies, joints, [fm.Gravity((0.0, -9.81, 0.0))])


def _both_loops(model, t_end, h, p, newton: NewtonOptions):
    """Run ``model``; at every element the compiled loop answers, run the Python loop on the same
    element and compare.  Returns the solution, the element system's ``newton_calls`` and, per compared
    element, ``(iterations, factorizations, Jacobian evaluations)``."""
    seen = []

    def both(system, st, h, U0, scale, factor, options):
        before = system.newton_calls["compiled"]
        r = system.newton(st, h, U0, scale, factor, options)
        if system.newton_calls["compiled"] == before:
            return r  # the general loop ran (first element, or declined): nothing to compare
        g = newton_solve(lambda U: system.evaluate(U, st, h), U0, scale, factor, options,
                         residual=lambda U: system.residual(U, st, h))
        assert g.converged and g.message == r.message
        assert np.array_equal(g.U, r.U)
        assert (g.iterations, g.n_factor, g.n_jacobian, g.n_residual) == \
            (r.iterations, r.n_factor, r.n_jacobian, r.n_residual)
        assert g.history == r.history and g.error == r.error and g.worst == r.worst and g.rate == r.rate
        seen.append((r.iterations, r.n_factor, r.n_jacobian))
        return r

    opts = fm.SimulationOptions(newton=newton)
    run = Run.start(model, t_end, h, p, 0.0, opts, stages=Stages(newton=both))
    return run.go(show_progress=False), dict(run.system.newton_calls), np.array(seen)


@pytest.mark.parametrize("newton", [NewtonOptions(reuse="element"), NewtonOptions(reuse_min_unknowns=100)],
                         ids=["element", "auto"])
def test_rigid_chain_reuse_compiled_equals_python(newton):
    """Chain of 8 bars on spherical joints, p = 2, h = 5 ms (384 unknowns; ``"auto"`` resolves to
    ``"element"`` above ``reuse_min_unknowns = 100``)."""
    sol, calls, seen = _both_loops(_chain(8), 0.2, 5e-3, 2, newton)
    assert calls["compiled"] >= 35 and len(seen) == calls["compiled"]
    assert (seen[:, 1] < seen[:, 0]).mean() > 0.5  # the factorization reused in most elements
    _joints_hold(sol, [f"J{k}" for k in range(1, 9)])


@pytest.mark.parametrize("rate", [0.5, 0.1])
def test_flexible_chain_reuse_compiled_equals_python(rate):
    """Three modal bars (3 shapes each) on revolutes, p = 2, h = 1/64 s, 0.5 s.  The reused matrix
    contracts by 0.1 .. 0.2 per iteration here: with ``reuse_rate = 0.1`` some elements drop it (a fresh
    Jacobian at the same iterate, two factorizations), with the default 0.5 none does."""
    sol, calls, seen = _both_loops(_flexible_chain(3), 0.5, 1 / 64, 2, NewtonOptions(reuse="element", reuse_rate=rate))
    assert calls["compiled"] >= 25 and len(seen) == calls["compiled"]
    assert (seen[:, 1] < seen[:, 0]).mean() > 0.5
    assert (seen[:, 1] >= 2).any() == (rate < 0.5) and np.array_equal(seen[:, 1], seen[:, 2])
    _joints_hold(sol, ["J1", "J2", "J3"])
