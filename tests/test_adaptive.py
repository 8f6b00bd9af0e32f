"""Error-controlled steps (issue 8 section 4): the requested tolerance bounds the error against
the exact solution, steps adapt (rejected steps retried smaller), and the counts are reported."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.validation.cases.case_r1 import exact_positions


def _pendulum():
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-9), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    return fm.Model([bob], [pin], [fm.Gravity((0.0, -9.81, 0.0))])


@pytest.mark.parametrize("p, atol", [(1, 1e-3), (2, 1e-5), (3, 1e-7)])
def test_tolerance_bounds_the_error_against_the_exact_pendulum(p, atol):
    sol = fm.simulate(_pendulum(), 3.0, 0.05, p=p, rtol=0.0, atol=atol)
    err = np.abs(sol.body_position[:, 0, :2] - exact_positions(sol.t)).max()
    # the tolerance is shared among the steps, the estimates add up to at most atol over the run
    # (measured 0.54 / 0.30 / 0.26 atol for p = 1 / 2 / 3; flexmb.dynamics.variants.step_control)
    assert err <= atol, err
    assert err >= 1e-3 * atol  # the steps are not needlessly small either
    assert sol.meta["accepted_steps"] > 0 and sol.meta["rejected_steps"] >= 0
    h = sol.stats["h"]
    assert h.max() > 1.5 * h.min()  # the step adapts to the motion
    assert sol.t[-1] == pytest.approx(3.0)


def test_tighter_tolerance_takes_more_steps_and_is_more_accurate():
    a = fm.simulate(_pendulum(), 2.0, 0.05, p=2, rtol=0.0, atol=1e-4)
    b = fm.simulate(_pendulum(), 2.0, 0.05, p=2, rtol=0.0, atol=1e-6)
    ea = np.abs(a.body_position[:, 0, :2] - exact_positions(a.t)).max()
    eb = np.abs(b.body_position[:, 0, :2] - exact_positions(b.t)).max()
    assert b.t.size > a.t.size and eb < ea


@pytest.mark.parametrize("kw", [dict(rtol=-1.0), dict(rtol=float("nan")), dict(rtol=0.0), dict(atol=0.0)])
def test_bad_tolerances_are_refused(kw):
    with pytest.raises(fm.ModelError, match="tol"):
        fm.simulate(_pendulum(), 0.1, 0.01, **kw)
