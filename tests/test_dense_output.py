"""Results at requested times (issue 8 section 4): ``simulate(t_eval=)`` and ``Solution.at`` give
the motion between the nodes at order min(2p, 4), not by linear interpolation."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb import rotations as rot
from flexmb.validation.cases.case_r1 import exact_positions


def _pendulum():
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-9), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    return fm.Model([bob], [pin], [fm.Gravity((0.0, -9.81, 0.0))])


T_EVAL = np.linspace(0.013, 0.987, 41)  # between the nodes of every step used below


def _err(sol):
    return np.abs(sol.body_position[:, 0, :2] - exact_positions(sol.t)).max()


@pytest.mark.parametrize("p, order", [(1, 2), (2, 4), (3, 4)])
def test_dense_output_converges_at_the_nodal_order_up_to_four(p, order):
    errs, lin = [], []
    for h in (0.1, 0.05, 0.025):
        sol = fm.simulate(_pendulum(), 1.0, h, p=p)
        errs.append(_err(sol.at(T_EVAL)))
        x = np.interp(T_EVAL, sol.t, sol.body_position[:, 0, 0])
        y = np.interp(T_EVAL, sol.t, sol.body_position[:, 0, 1])
        lin.append(np.abs(np.stack([x, y], 1) - exact_positions(T_EVAL)).max())
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert rates.min() > order - 0.4, (errs, rates)
    if order > 2:  # linear interpolation would cap the order at 2 and be far worse here
        assert errs[-1] < 1e-2 * lin[-1]


def test_t_eval_in_simulate_equals_solution_at_and_nodes_are_exact():
    full = fm.simulate(_pendulum(), 0.5, 0.05, p=2)
    times = np.array([0.0, 0.05, 0.123, 0.25, 0.5])
    sampled = fm.simulate(_pendulum(), 0.5, 0.05, p=2, t_eval=times)
    np.testing.assert_array_equal(sampled.t, times)
    np.testing.assert_allclose(sampled.body_position, full.at(times).body_position, rtol=0, atol=0)
    for k, t in enumerate(times):
        i = int(np.argmin(np.abs(full.t - t)))
        if abs(full.t[i] - t) < 1e-12:  # a requested node is the node's own value
            np.testing.assert_array_equal(sampled.body_position[k], full.body_position[i])
    assert sampled.meta["t_eval"]["n"] == times.size
    assert sampled.t_internal.size == full.t_internal.size  # internal-point arrays are kept


def test_rotation_interpolation_is_exact_for_a_steady_spin():
    """A free body spinning about a fixed principal axis: R(t) = exp(omega t) R0, which the Hermite
    rotation interpolation reproduces to round-off between the nodes."""
    R0 = rot.exp(np.array([0.3, -0.2, 0.5]))
    w = R0 @ np.array([0.0, 0.0, 7.0])
    body = fm.RigidBody("s", 2.0, (0.2, 0.2, 0.3), orientation=R0, angular_velocity=w)
    sol = fm.simulate(fm.Model([body]), 0.5, 0.05, p=2)
    times = np.linspace(0.01, 0.49, 17)
    R = sol.at(times).body_rotation[:, 0]
    exact = rot.exp(times[:, None] * w) @ R0
    node_err = np.abs(sol.body_rotation[:, 0] - rot.exp(sol.t[:, None] * w) @ R0).max()
    assert np.abs(R - exact).max() < 10 * node_err + 1e-12


def test_dense_output_with_error_controlled_steps():
    sol = fm.simulate(_pendulum(), 1.0, 0.05, p=2, rtol=0.0, atol=1e-6, t_eval=T_EVAL)
    assert _err(sol) < 1e-5


@pytest.mark.parametrize("times, match", [([0.2, 0.1], "increasing"), ([0.1, 2.0], "outside"),
                                          ([float("nan")], "non-finite"), ([], "empty")])
def test_bad_t_eval_is_refused(times, match):
    sol = fm.simulate(_pendulum(), 0.2, 0.05, p=1)
    with pytest.raises(fm.ModelError, match=match):
        sol.at(times)
