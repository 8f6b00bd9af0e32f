"""The defining checks of the method (FORMULATION.md section 2): midpoint equivalence for p = 1,
declared = fitted nodal order, constraints at position level at the nodes without drift,
conservation of momentum and energy, large rotations."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from flexmb.model import Gravity, Model, PointForce, Revolute, RigidBody, Spherical
from flexmb.dynamics.simulate import simulate
from types import SimpleNamespace

from flexmb.dynamics.system import compile_model
from flexmb import rotations as rot


def duffing_model(x0=0.8, v0=0.3):
    body = RigidBody("m", mass=2.0, inertia=(1.0, 1.0, 1.0), position=(x0, 0.0, 0.0), velocity=(v0, 0.0, 0.0))
    spring = PointForce("m", lambda t, s: (-5.0 * s.position[0] - 3.0 * s.position[0] ** 3, 0.0, 0.0))
    return Model([body], [], [spring])


def test_p1_reproduces_implicit_midpoint_to_machine_precision():
    """M1: a Duffing oscillator m x'' = -k x - k3 x^3 (unconstrained, nonlinear)."""
    h, n = 0.05, 40
    sol = simulate(duffing_model(), n * h, h, p=1)
    m, k, k3 = 2.0, 5.0, 3.0
    y = np.array([0.8, 2.0 * 0.3])  # x, momentum
    ref = [y]
    for _ in range(n):
        f = lambda z: np.array([z[1] / m, -k * z[0] - k3 * z[0] ** 3])
        y2 = fsolve(lambda y2: y2 - y - h * f(0.5 * (y + y2)), y + h * f(y), xtol=1e-15)
        y = y2
        ref.append(y)
    ref = np.array(ref)
    assert np.abs(sol.body_position[:, 0, 0] - ref[:, 0]).max() < 1e-13
    assert np.abs(sol.body_velocity[:, 0, 0] - ref[:, 1] / m).max() < 1e-12


def _pendulum_reference(J):
    g, m, L = 9.81, 1.0, 1.0
    Ip = m * L * L + J
    s = solve_ivp(lambda t, y: [y[1], m * g * L / Ip * np.cos(y[0])], [0, 1], [0, 0], rtol=1e-13, atol=1e-13)
    th = s.y[0, -1]
    return np.array([-L * np.cos(th), -L * np.sin(th)])


@pytest.mark.parametrize("p", [1, 2, 3])
def test_fitted_nodal_order_equals_declared(p, pendulum):
    """M2: positions of the pendulum at t = 1 s converge with the declared order 2p."""
    from flexmb.dynamics.time_elements import TIME_ELEMENTS

    ref = _pendulum_reference(1e-3)
    hs = {1: [0.02, 0.01, 0.005], 2: [0.05, 0.025, 0.0125], 3: [0.1, 0.05, 0.025]}[p]
    err = [np.linalg.norm(simulate(pendulum, 1.0, h, p=p).body_position[-1, 0, :2] - ref) for h in hs]
    order = np.polyfit(np.log(hs), np.log(err), 1)[0]
    assert order == pytest.approx(TIME_ELEMENTS[p].order, abs=0.15), f"errors {err}, fitted order {order:.3f}"


def chain_model(n=4, gravity=True, spin=0.0):
    bodies, joints = [], []
    L, m = 0.5, 0.4
    I = (m * 1e-4, m * L * L / 12, m * L * L / 12)
    for i in range(n):
        bodies.append(RigidBody(f"bar{i}", mass=m, inertia=I, position=(L * (i + 0.5), 0.0, 0.0),
                                velocity=(0.0, spin * L * (i + 0.5), 0.0), angular_velocity=(0.0, 0.0, spin)))
        joints.append(Spherical(f"j{i}", "ground" if i == 0 else f"bar{i - 1}", f"bar{i}", point=(L * i, 0.0, 0.0)))
    return Model(bodies, joints, [Gravity((0, 0, -9.81))] if gravity else [])


def constraint_violation(model, sol):
    cm = compile_model(model)
    worst = 0.0
    for k in range(sol.t.size):
        R = sol.body_rotation[k]
        com = np.array([b.com for b in model.bodies])
        node = SimpleNamespace(x=sol.body_position[k] + np.einsum("nij,nj->ni", R, com), R=R)
        xa, _ = cm.att_a.node_pose(cm, node)
        xb, _ = cm.att_b.node_pose(cm, node)
        worst = max(worst, np.abs(xb - xa).max())
    return worst


def test_constraints_hold_at_nodes_without_drift():
    """Position-level constraints at every node to Newton tolerance over a long whipping run, and
    an energy error that is bounded and second order (halving h divides it by about 4)."""
    model = chain_model(4)
    sol = simulate(model, 3.0, 0.005, p=1)
    assert constraint_violation(model, sol) < 1e-10
    drift = np.abs(sol.total_energy - sol.total_energy[0]).max()
    # the midpoint rule's energy error scales with (h omega)^2 relative to the kinetic energy
    h_omega = 0.005 * np.abs(sol.body_angular_velocity).max()
    assert drift < h_omega**2 * sol.kinetic_energy.max()
    sol2 = simulate(model, 3.0, 0.0025, p=1)
    drift2 = np.abs(sol2.total_energy - sol2.total_energy[0]).max()
    assert constraint_violation(model, sol2) < 1e-10
    assert 3.0 < drift / drift2 < 5.5


@pytest.mark.parametrize("p", [1, 2])
def test_free_chain_conserves_momentum(p):
    """Linear and angular momentum of a free (no gravity, no ground) jointed system are conserved
    to Newton tolerance: the momentum balance is integrated directly."""
    L, m = 0.5, 0.4
    I = (m * 1e-3, m * L * L / 12, m * L * L / 12)
    bodies = [RigidBody(f"b{i}", mass=m, inertia=I, position=(L * (i + 0.5), 0.0, 0.0),
                        velocity=(0.1 * i, 0.3 - 0.2 * i, 0.05 * i * i), angular_velocity=(0.2, -0.1 * i, 0.3))
              for i in range(3)]
    joints = [Spherical("j1", "b0", "b1", point=(L, 0, 0)), Revolute("j2", "b1", "b2", point=(2 * L, 0, 0), axis=(0, 1, 1))]
    model = Model(bodies, joints, [])
    sol = simulate(model, 2.0, 0.02, p=p)
    mass = np.array([b.mass for b in model.bodies])
    J0 = np.array([b.inertia for b in model.bodies])
    P = np.einsum("b,tbd->td", mass, sol.body_velocity)
    xc = sol.body_position
    Hs = []
    for k in range(sol.t.size):
        R = sol.body_rotation[k]
        J = R @ J0 @ np.swapaxes(R, 1, 2)
        Hs.append(np.sum(np.cross(xc[k], mass[:, None] * sol.body_velocity[k]) + np.einsum("bij,bj->bi", J, sol.body_angular_velocity[k]), axis=0))
    Hs = np.array(Hs)
    assert np.abs(P - P[0]).max() < 1e-9 * max(1.0, np.abs(P).max())
    assert np.abs(Hs - Hs[0]).max() < 1e-9 * max(1.0, np.abs(Hs).max())


def test_free_tumbling_body_conserves_momentum_and_energy_over_many_turns():
    """M3-like: asymmetric free body spinning about a skew axis, many full turns."""
    om = np.array([0.3, 4.0, 0.5])  # near the unstable intermediate axis: tumbling
    body = RigidBody("b", mass=2.0, inertia=(1.0, 2.0, 3.0), angular_velocity=om, velocity=(0.1, 0.0, 0.0))
    sol = simulate(Model([body]), 20.0, 0.01, p=1)
    J0 = np.diag([1.0, 2.0, 3.0])
    Rt, om_t = sol.body_rotation[:, 0], sol.body_angular_velocity[:, 0]
    H = np.einsum("tij,jk,tlk,tl->ti", Rt, J0, Rt, om_t)
    assert np.abs(H - H[0]).max() < 1e-10 * np.linalg.norm(H[0])
    # angle swept: many turns
    assert np.abs(sol.body_angular_velocity).max() * 20.0 > 10 * 2 * np.pi
    # midpoint rule on the free rigid body: energy bounded, no drift
    E = sol.kinetic_energy
    assert np.abs(E - E[0]).max() < 1e-2 * E[0]
    # rotations stay orthonormal
    RtR = np.einsum("tji,tjk->tik", Rt, Rt)
    assert np.abs(RtR - np.eye(3)).max() < 1e-12


def test_planarity_preserved_in_3d():
    """A chain released in the x-z plane stays in it (Borri et al. ran planar cases in 3-D)."""
    sol = simulate(chain_model(5), 1.0, 0.01, p=1)
    assert np.abs(sol.body_position[:, :, 1]).max() < 1e-12
    assert np.abs(sol.body_angular_velocity[:, :, [0, 2]]).max() < 1e-10


def test_p1_conserves_energy_exactly_on_a_linear_system():
    """The midpoint rule conserves quadratic invariants: a mass on a linear spring (motion along
    the spring axis, so the force is linear in the position) keeps its energy to round-off."""
    body = RigidBody("m", mass=2.0, inertia=(1.0, 1.0, 1.0), position=(1.3, 0.0, 0.0), velocity=(0.7, 0.0, 0.0))
    from flexmb.model import SpringDamper

    spring = SpringDamper("k", "ground", "m", point_a=(0.0, 0.0, 0.0), stiffness=50.0, free_length=1.0)
    sol = simulate(Model([body], [], [spring]), 5.0, 0.05, p=1)
    E = sol.total_energy
    assert np.ptp(sol.body_position[:, 0, 0]) > 0.2  # it oscillates
    assert np.abs(E - E[0]).max() < 1e-12 * E[0]
