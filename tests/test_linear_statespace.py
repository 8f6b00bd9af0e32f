"""State-space inputs and outputs (issue 19 B): force elements and joint actuators as inputs, body
points and joint reactions as outputs; closed forms (a pendulum's pivot reaction), a simulate run
(finite differences of the nonlinear motion), and bad names."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError

G = 9.81


def hanging_pendulum(m=1.0, L=1.0, Jc=0.05):
    bob = fm.RigidBody("bob", mass=m, inertia=np.full(3, Jc), position=(0.0, -L, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    push = fm.PointForce("bob", (0.0, 0.0, 0.0), name="push")
    return fm.Model([bob], [pin], [fm.Gravity((0.0, -G, 0.0)), push])


def frequency_response(ss, w):
    A, B, C, D = ss
    return np.array([C @ np.linalg.solve(1j * x * np.eye(A.shape[0]) - A, B) + D for x in w])


def test_pendulum_pivot_reaction_transfer_function():
    """A pendulum hanging at rest, a motor torque tau about its pin ("pin:mz", an actuator on the free
    component) and a horizontal force on the bob ("push:x", a named PointForce): theta = tau / (I s^2 + m
    g L), the pivot's horizontal reaction on the bob F_x = m L theta'' = m L s^2 theta (with the
    feedthrough D = m L / I of a torque), no vertical change to first order, no moment about the free
    axis; the bob's displacement and velocity L theta, s L theta; the force on the bob acts as a
    generalized force L F on theta (same response as "bob:x") - all to 1e-10."""
    m, L, Jc = 1.0, 1.0, 0.05
    lin = fm.linearize(fm.equilibrium(hanging_pendulum(m, L, Jc)))
    ss = lin.state_space(["pin:mz", "push:x", "bob:x"],
                         ["pin:fx", "pin:fy", "pin:mz", ("bob", (0, 0, 0), "x"), ("bob", (0, 0, 0), "vx"),
                          ("bob", (0.0, 0.3, 0.0), "x")])
    import scipy.signal as signal  # here, not at collection: ~1 s of CPU in every pytest process

    signal.StateSpace(*ss)  # scipy takes it
    I = Jc + m * L**2
    assert abs(ss[3][0, 0] - m * L / I) < 1e-12  # D: a torque accelerates the bob at once
    w = np.array([0.5, 2.0, 7.0])
    H = frequency_response(ss, w)
    s = 1j * w
    th = 1.0 / (I * s**2 + m * G * L)
    assert np.allclose(H[:, 0, 0], m * L * s**2 * th, rtol=1e-10)
    assert np.abs(H[:, 1:3, :]).max() < 1e-12
    assert np.allclose(H[:, 3, 0], L * th, rtol=1e-10)
    assert np.allclose(H[:, 4, 0], s * L * th, rtol=1e-10)
    assert np.allclose(H[:, 5, 0], (L - 0.3) * th, rtol=1e-10)  # a point 0.3 m above the bob's centre
    assert np.allclose(H[:, :, 1], H[:, :, 2], rtol=1e-10, atol=1e-14)
    assert np.allclose(H[:, 3, 1], L * L * th, rtol=1e-10)


def double_pendulum(push=(0.0, 0.0, 0.0)):
    b1 = fm.RigidBody("b1", mass=1.0, inertia=(0.01, 0.01, 0.02), position=(0, -1.0, 0))
    b2 = fm.RigidBody("b2", mass=0.5, inertia=(0.01, 0.01, 0.015), position=(0, -1.7, 0))
    joints = [fm.Revolute("p1", "ground", "b1", point=(0, 0, 0), axis=(0, 0, 1), stiffness=4.0),
              fm.Revolute("p2", "b1", "b2", point=(0, -1.0, 0), axis=(0, 0, 1), damping=0.2)]
    return fm.Model([b1, b2], joints, [fm.Gravity((0, -G, 0)),
                                       fm.PointForce("b2", push, point=(0.1, -0.2, 0.0), frame="body", name="push")])


def test_double_pendulum_response_against_simulate():
    """Finite differences of simulate: a double pendulum (sprung root hinge, damped elbow) at rest is
    pushed by a body-frame force of 0.5 mN (step) at an off-centre point of the lower link; over 2 s the
    point's horizontal displacement and velocity, the root hinge's horizontal reaction and the lower
    link's angle move as the linear model's step response (scipy.signal.lsim) to 1e-4 of their range
    (measured 8e-6 and below: the neglected terms are O(eps^2); the point's vertical displacement is
    itself second order at this state, and is not compared)."""
    eps = 5e-4
    r = np.array([0.1, -0.2, 0.0])
    eq = fm.equilibrium(double_pendulum())
    lin = fm.linearize(eq)
    ss = lin.state_space(["push:x"], [("b2", tuple(r), "x"), ("b2", tuple(r), "vx"), "p1:fx", "b2:theta_z"])
    sol = fm.simulate(double_pendulum(push=(eps, 0.0, 0.0)), 2.0, 0.005, p=3)
    import scipy.signal as signal

    _, y, _ = signal.lsim(ss, np.full(sol.t.size, eps), sol.t)
    b2 = sol.body("b2")
    R0 = np.asarray(eq.model.bodies[1].orientation)
    x0 = np.asarray(eq.model.bodies[1].position) + R0 @ r
    xs = b2.position + np.einsum("nij,j->ni", b2.rotation, r)
    vs = b2.velocity + np.cross(b2.angular_velocity, np.einsum("nij,j->ni", b2.rotation, r))
    th = np.unwrap(np.arctan2(b2.rotation[:, 1, 0], b2.rotation[:, 0, 0]))
    got = np.column_stack([xs[:, 0] - x0[0], vs[:, 0], sol.joint("p1").force[:, 0] - eq.joint_force("p1")[0], th - th[0]])
    for k in range(4):
        span = np.ptp(y[:, k])
        assert span > 0
        assert np.abs(got[:, k] - y[:, k]).max() < 1e-4 * span, k


def test_state_space_bad_names():
    lin = fm.linearize(fm.equilibrium(hanging_pendulum()))
    with pytest.raises(ModelError, match="unknown input 'shove:x'.*push"):
        lin.state_space(["shove:x"], ["bob:x"])
    with pytest.raises(ModelError, match="component fx of joint 'pin' is held"):
        lin.state_space(["pin:fx"], ["bob:x"])
    with pytest.raises(ModelError, match="unknown output 'pin:torque'"):
        lin.state_space(["pin:mz"], ["pin:torque"])
    with pytest.raises(ModelError, match="unknown body 'bab'"):
        lin.state_space(["pin:mz"], [("bab", (0, 0, 0), "x")])
    with pytest.raises(ModelError, match="quantity 'ax'"):
        lin.state_space(["pin:mz"], [("bob", (0, 0, 0), "ax")])
    with pytest.raises(ModelError, match="lists of names"):
        lin.state_space("pin:mz", ["bob:x"])


def test_static_gain_of_a_load_on_a_flexible_interface_against_equilibria():
    """Finite differences of the nonlinear equilibrium: a flexible bar (3 Craig-Bampton modes) on a sprung
    hinge with a welded tip mass, under gravity, and a named point force on its tip interface
    ("load", inertial y; read off the element residual through the interface's modal map): the static
    gain -C A^-1 B + D of the welded tip's displacement, the bar's first modal coordinate and the hinge's
    reaction force (fy: -1 N/N, fx: 0) equals the central difference of equilibria at load +-1e-4 N (1e-5)."""
    from test_linear import bar_data

    def model(P):
        bar = fm.FlexibleBody("bar", bar_data())
        pin = fm.Revolute("pin", "ground", ("bar", "xmin"), axis=(0, 0, 1), stiffness=30.0)
        tip = fm.RigidBody("tip", mass=0.3, inertia=np.full(3, 1e-3), position=(1.0, 0.0, 0.0))
        return fm.Model([bar, tip], [pin, fm.Fixed("weld", ("bar", "xmax"), "tip")],
                        [fm.Gravity((0, -G, 0.3)), fm.PointForce(("bar", "xmax"), (0.0, P, 0.0), name="load")])

    eq = fm.equilibrium(model(0.0))
    A, B, C, D = fm.linearize(eq).state_space(["load:y"], [("tip", (0, 0, 0), "y"), "bar:q1", "pin:fx", "pin:fy"])
    gain = (D - C @ np.linalg.solve(A, B))[:, 0]
    eps = 1e-4
    ends = []
    for P in (eps, -eps):
        e = fm.equilibrium(model(P), stability=False)
        b = e.model.bodies
        ends.append(np.r_[b[1].position[1], b[0].q0[0], e.joint_force("pin")[:2]])
    fd = (ends[0] - ends[1]) / (2 * eps)
    assert np.abs(fd[[0, 1, 3]]).min() > 1e-4 and abs(fd[3] + 1.0) < 1e-9  # the hinge carries the load
    assert np.allclose(gain, fd, rtol=1e-5, atol=1e-9)
