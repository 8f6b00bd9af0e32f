"""User functions (loads and drives) speak the user's language: a user's exception is not swallowed
but named with the element, f(t) vs f(t, state) is decided once from the required parameters, and
a wrong shape or NaN names the element, the time and the value."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flexmb as fm
from flexmb.model.checks import UserFunction, required_positional
from flexmb.errors import ModelError


def free_body():
    return fm.RigidBody("bob", mass=2.0, inertia=np.full(3, 1e-2))


def pendulum(forces=(), **pin_kw):
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1), **pin_kw)
    return fm.Model([bob], [pin], list(forces))


def test_type_error_inside_a_force_function_is_named_not_swallowed():
    def push(t):
        return np.array([1.0, 0.0, 0.0]) * len(t)  # TypeError: len() of a float

    model = fm.Model([free_body()], [], [fm.PointForce("bob", push, name="push")])
    with pytest.raises(ModelError, match=r"PointForce 'push' on 'bob': the force function 'push' raised TypeError: "
                                         r"object of type 'float' has no len\(\) \(called as f\(t\) at t = 0 s\); fix") as info:
        fm.simulate(model, 0.1, 0.01)
    assert isinstance(info.value.__cause__, TypeError)  # the user's traceback is kept


def test_type_error_inside_a_state_callback_is_named():
    def drag(t, state):
        return -state.velocity * "0.1"

    model = fm.Model([free_body()], [], [fm.PointForce("bob", drag)])
    with pytest.raises(ModelError, match=r"PointForce on 'bob': the force function 'drag' raised .*\(called as f\(t, state\)"):
        fm.simulate(model, 0.1, 0.01)


def test_a_default_argument_does_not_make_a_state_callback():
    f = lambda t, k=3.0: (0.0, -k, 0.0)  # noqa: E731
    assert required_positional(f) == 1
    pf = fm.PointForce("bob", f)
    assert isinstance(pf.force, UserFunction) and not pf.force.takes_state
    assert fm.PointForce("bob", lambda t, s, k=1: (0, 0, 0)).force.takes_state
    assert not fm.PointTorque("bob", lambda *args: (0, 0, 0)).torque.takes_state
    # physics: a constant force k on a free mass m: y = -k t^2 / (2 m), exact for the midpoint rule
    sol = fm.simulate(fm.Model([free_body()], [], [pf]), t_end=0.5, h=0.05)
    np.testing.assert_allclose(sol.body("bob").position[:, 1], -3.0 * sol.t**2 / (2 * 2.0), rtol=0, atol=1e-13)


def test_three_required_arguments_are_refused_at_build():
    with pytest.raises(ModelError, match=r"PointForce on 'bob': force function '<lambda>' takes 3 required arguments; "
                                         r"give f\(t\) .* or f\(t, state\)"):
        fm.PointForce("bob", lambda t, state, extra: (0, 0, 0))


@pytest.mark.parametrize("f, match", [
    (lambda t: (1.0, 2.0), r"returned \(1.0, 2.0\) \(shape \(2,\)\) at t = 0 s; it must return a 3-vector of numbers \[N\]"),
    (lambda t: "up", r"returned 'up' \(type str\) at t = 0 s; it must return a 3-vector"),
    (lambda t: (0.0, math.nan if t > 0.031 else 0.0, 0.0), r"returned \[0.0, nan, 0.0\] at t = 0.035 s; it must return finite values \[N\]"),
    (lambda t, state: state.velocity * np.nan, r"returned \[nan, nan, nan\] at t = 0 s; it must return finite values"),
])
def test_wrong_shape_or_nan_names_the_force_the_time_and_the_value(f, match):
    model = pendulum([fm.PointForce("bob", f, name="F1")])
    with pytest.raises(ModelError, match=r"PointForce 'F1' on 'bob': the force function '<lambda>' " + match):
        fm.simulate(model, 0.1, 0.01)


def test_torque_function_errors_are_named():
    model = pendulum([fm.PointTorque("bob", lambda t: [1.0], name="motor")])
    with pytest.raises(ModelError, match=r"PointTorque 'motor' on 'bob': the torque function .* must return a 3-vector of numbers \[N m\]"):
        fm.simulate(model, 0.1, 0.01)


def test_drive_returning_nan_at_t0_or_raising_is_named_before_the_run():
    with pytest.raises(ModelError, match=r"Revolute 'pin': the angle drive '<lambda>' returned nan at t = 0 s; "
                                         r"it must return finite values \[rad\]"):
        fm.simulate(pendulum(angle=lambda t: np.sqrt(t - 1.0)), 0.1, 0.01)
    with pytest.raises(ModelError, match=r"Revolute 'pin': the angle drive 'f' raised KeyError: 'x' \(called at t = 0 s\)"):
        def f(t):
            return {}["x"]

        fm.simulate(pendulum(angle=f), 0.1, 0.01)
    with pytest.raises(ModelError, match=r"Revolute 'pin': angle='fast' is neither a number nor a function of time"):
        pendulum(angle="fast")


def test_scalar_only_drive_is_evaluated_time_by_time():
    # math.sin refuses arrays; the drive is evaluated point by point and prescribes the angle exactly
    sol = fm.simulate(pendulum(angle=lambda t: 0.5 * math.sin(t)), 0.2, 0.01)
    np.testing.assert_allclose(sol.joint("pin").rel_rotation[:, 2], 0.5 * np.sin(sol.t), rtol=0, atol=1e-12)
