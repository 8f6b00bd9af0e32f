"""Coulomb friction at impacts and resting contacts (issue 21): the circular cone in 3-D, several rough
contacts together, friction never adding energy for e = 0, the Newton + Coulomb energy guard, the events
record, and a sliding sphere rolling in the march (closed forms; C7 has the planar ones)."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.impact.friction import coulomb_impulses, coulomb_violation
from flexmb.errors import ConvergenceError

M, R = 0.5, 0.1
I = 0.4 * M * R * R  # a solid sphere


def sphere(v, om=(0.0, 0.0, 0.0), y=R):
    return fm.RigidBody("ball", mass=M, inertia=np.full(3, I), position=(0, y, 0), velocity=v, angular_velocity=om)


def rough_floor(mu, e=0.0):
    return fm.Contact("floor", "ground", "ball", normal=(0, 1, 0), radius=R, restitution=e, friction=mu)


def slip_of(v, om):
    """The contact point's velocity ``v + om x (-R e_y)`` (the tangential part)."""
    c = np.asarray(v, float) + np.cross(om, (0, -R, 0))
    return c[[0, 2]]


@pytest.mark.parametrize("mu", [0.05, 2.0])
def test_oblique_slip_in_3d_follows_the_circular_cone(mu):
    """Slip along both tangents (x and z) and spin about two axes: sliding, the tangential impulse is
    ``mu P_n`` exactly opposite to the slip (a pyramid would bend it to a facet); sticking, the slip after
    is zero.  Sphere: the slip changes by ``P_t (1/m + R^2/I)`` along the impulse, so it keeps its
    direction (closed form)."""
    v, om, e = (1.0, -2.0, 0.7), (3.0, 0.0, -2.0), 0.4
    r = fm.impact(fm.Model([sphere(v, om)], contacts=[rough_floor(mu, e)]))
    o = r.outcome
    Pn = M * (1 + e) * 2.0
    s = slip_of(v, om)
    k = 1 / M + R * R / I
    Pt = -s / k if np.linalg.norm(s) / k <= mu * Pn else -mu * Pn * s / np.linalg.norm(s)
    vec = o.friction_impulse[0]
    assert np.array_equal(r.friction_impulse["floor"], vec)
    assert o.P[0] == pytest.approx(Pn, rel=1e-14)
    assert np.abs(vec[[0, 2]] - Pt).max() < 1e-13 and abs(vec[1]) < 1e-15
    assert np.abs(M * (r.velocity_after["ball"] - v) - np.array([Pt[0], Pn, Pt[1]])).max() < 1e-13
    slip = slip_of(r.velocity_after["ball"], r.angular_velocity_after["ball"])
    assert np.abs(slip - (s + k * Pt)).max() < 1e-13
    assert (np.abs(slip).max() < 1e-13) == (mu == 2.0)
    assert o.energy_lost > 0 and abs(o.energy_residual) < 1e-15 * o.T_minus


def test_two_rough_contacts_together():
    """A bar landing flat on two rough stops at once (e = 0, horizontal velocity u): the normal impulses
    ``m v / 2`` each; sliding (mu v < u): each stop ``mu P_n`` against the slip, ``u+ = u - mu v``;
    sticking (mu v >= u): the bar stops (the tangential rows are dependent: only their sum is defined)."""
    m, u, v = 2.0, 1.0, 1.0
    stops = lambda mu: [fm.Contact(f"s{k}", "ground", "bar", kind="point-plane", point_a=(x, 0, 0), normal=(0, 1, 0),
                                   point_b=(x, 0, 0), friction=mu) for k, x in enumerate((-0.5, 0.5))]
    bar = fm.RigidBody("bar", mass=m, inertia=(1e-3, 0.2, 0.2), velocity=(u, -v, 0))
    for mu in (0.3, 1.5):
        r = fm.impact(fm.Model([bar], contacts=stops(mu)))
        o = r.outcome
        assert o.P == pytest.approx([m * v / 2] * 2, rel=1e-12)
        assert r.velocity_after["bar"][0] == pytest.approx(max(u - mu * v, 0.0), abs=1e-12)
        assert o.friction_impulse[:, 0].sum() == pytest.approx(-m * min(mu * v, u), rel=1e-12)
        assert np.abs(o.friction_impulse[:, 0]).max() <= mu * o.P.max() * (1 + 1e-12)
        assert np.abs(r.angular_velocity_after["bar"]).max() < 1e-12
        assert o.energy_lost > 0 and abs(o.energy_residual) < 1e-14 * o.T_minus


def rod(theta, u, v, om, mu, e):
    L, m = 1.2, 2.0
    J = m * L * L / 12
    body = fm.RigidBody("rod", mass=m, inertia=(1e-4, J, J), position=(0.0, 0.5 * L * np.sin(theta), 0.0),
                        orientation={"axis": (0, 0, 1), "angle": theta}, velocity=(u, -v, 0.0),
                        angular_velocity=(0.0, 0.0, om))
    return fm.Model([body], contacts=[fm.Contact("floor", "ground", "rod", kind="point-plane", normal=(0, 1, 0),
                                                 point_b=(-0.5 * L, 0, 0), restitution=e, friction=mu)])


def test_plastic_rough_impacts_never_create_energy():
    """e = 0: the loss is ``-P . v+ + P^T D P / 2 >= 0`` (``P_n v_n+ = 0``, ``P_t . v_t+ <= 0``) for any
    rod (angle, slip, spin, mu; slip reversals included); Coulomb's law holds after."""
    rng = np.random.default_rng(21)
    for _ in range(40):
        theta, u, om, mu = rng.uniform(0.1, 1.4), rng.uniform(-3, 3), rng.uniform(-5, 5), rng.uniform(0.05, 2.0)
        o = fm.impact(rod(theta, u, 3.0, om, mu, 0.0)).outcome
        assert o.energy_lost >= -1e-14 * o.T_minus
        assert abs(o.energy_residual) < 1e-13 * o.T_minus
        assert abs(o.v_plus[0]) < 1e-12 and abs(o.P_t[0, 0]) <= mu * o.P[0] * (1 + 1e-12)
        if abs(o.P_t[0, 0]) < mu * o.P[0] * (1 - 1e-9):
            assert abs(o.vt_plus[0, 0]) < 1e-12  # sticking
        else:
            assert o.P_t[0, 0] * o.vt_plus[0, 0] <= 1e-14  # sliding against the slip


def test_newton_with_coulomb_creating_energy_raises():
    """e = 1, 45 degrees, mu = 0.6: sticking, the tangential-normal coupling makes Newton's kinematic law
    create 5.862679 J (planar closed form: sticking, P = -W^-1 (2 c_n, c_t) = (10.312, 3.530) N s); the solve refuses it, naming the contact and the fix; the
    same impact with e = 0 is dissipative."""
    with pytest.raises(ConvergenceError, match=r"create 5\.86268 J.*'floor'.*restitution 1.*lower the restitution"):
        fm.impact(rod(np.radians(45.0), 1.2, 3.0, 5.0, 0.6, 1.0))
    assert fm.impact(rod(np.radians(45.0), 1.2, 3.0, 5.0, 0.6, 0.0)).energy_lost > 0


def test_frictionless_contacts_keep_the_normal_solve():
    """friction=0 gives exactly the frictionless results (the NNLS path), and no tangential impulse."""
    r = fm.impact(fm.Model([sphere((1.0, -2.0, 0.0), (0, 0, 5.0))], contacts=[rough_floor(0.0, 0.5)]))
    o = r.outcome
    assert o.P[0] == pytest.approx(M * 1.5 * 2.0, rel=1e-15) and not o.P_t.any() and not o.friction_impulse.any()
    assert r.velocity_after["ball"][0] == 1.0 and r.angular_velocity_after["ball"][2] == 5.0


@pytest.mark.parametrize("resting, lag", [("constraint", 1.0), ("node", 0.5)])
def test_sliding_sphere_rolls_in_the_march(resting, lag):
    """A sphere set down sliding (u0, no spin) on a rough floor (resting contact with Coulomb friction at
    every node): friction ``mu m g`` decelerates it until it rolls at ``5/7 u0`` (``omega = -u / R``)
    after ``t* = 2 u0 / (7 mu g)``; the angular momentum about the contact point makes the final state
    exact.  The deceleration is first order in h: a node records the velocity before its friction
    impulse.  With the constraint row (default) the cone is ``mu`` times the row's normal impulse over the
    element, ``m g h``: from the second node on the recorded velocities lag the closed form by exactly
    ``mu g h`` and the gap stays 0.  With the node hold (resting="node") the velocities lag by
    ``mu g h / 2``: the first hold also pushed out the first element's penetration ``g h^2 / 2`` (``P_n =
    1.5 m g h``, then ``m g h`` per element) with its friction ``1.5 mu m g h``."""
    g, mu, u0, h = 9.81, 0.3, 2.0, 0.01
    model = fm.Model([sphere((u0, 0, 0))], forces=[fm.Gravity((0, -g, 0))], contacts=[rough_floor(mu)])
    sol = fm.simulate(model, 0.5, h, options=fm.SimulationOptions(resting=resting))
    b = sol.body("ball")
    u, om = b.velocity[:, 0], b.angular_velocity[:, 2]
    t_star = 2 * u0 / (7 * mu * g)
    late = sol.t > t_star + 2 * h
    assert np.abs(u[late] - 5 / 7 * u0).max() < 1e-12 and np.abs(om[late] + 5 / 7 * u0 / R).max() < 1e-11
    early = (sol.t > 1.5 * h) & (sol.t < t_star - 2 * h)
    assert np.abs(u[early] - (u0 - mu * g * sol.t[early]) - lag * mu * g * h).max() < 1e-12
    assert "floor" in sol.meta["resting_contacts"] and sol.meta["energy_balance"] < 1e-12
    if resting == "constraint":
        assert np.abs(b.position[:, 1] - R).max() <= 1e-15 and sol.meta["resting_sink"] == 0.0


def test_oblique_bounce_with_backspin_in_the_march():
    """Dropped from H with backspin onto a rough floor (e = 0.5): the first impact, located in the march,
    has Newton's ``P_n = m (1 + e) sqrt(2 g H)`` and the sliding ``|P_t| = mu P_n`` (events record), the
    ball leaves with ``u+ = u0 - mu P_n / m``."""
    g, H, u0, spin, mu, e = 9.81, 0.2, 1.0, 40.0, 0.1, 0.5
    model = fm.Model([sphere((u0, 0, 0), (0, 0, spin), y=R + H)], forces=[fm.Gravity((0, -g, 0))],
                     contacts=[rough_floor(mu, e)])
    sol = fm.simulate(model, 0.25, 0.01)
    ev = sol.events[0]
    Pn = M * (1 + e) * np.sqrt(2 * g * H)
    assert ev["t"] == pytest.approx(np.sqrt(2 * H / g), abs=1e-12)
    assert ev["normal_impulse"] == pytest.approx(Pn, rel=1e-10)
    assert ev["tangential_impulse"] == pytest.approx(mu * Pn, rel=1e-10)
    assert sol.body("ball").velocity[-1, 0] == pytest.approx(u0 - mu * Pn / M, rel=1e-10)


def test_a_separating_rough_contact_may_slip():
    """Two decoupled rough contacts (W = 1): the first approaches and sticks (``P = -b``, inside the cone),
    the second separates while slipping: no impulse, and its slip breaks no law (a resting contact lifting
    off while sliding, held together with others at a node)."""
    W = np.eye(6)
    b = np.array([-1.0, 0.5, 0.0, 1.0, 0.3, -0.2])
    blocks, mu = [slice(0, 3), slice(3, 6)], np.array([1.0, 1.0])
    P = coulomb_impulses(W, b, blocks, mu)
    assert np.array_equal(P, [1.0, -0.5, 0.0, 0.0, 0.0, 0.0])
    assert coulomb_violation(W, b, P, blocks, mu) is None
    assert coulomb_violation(W, b, P + np.r_[0, 0, 0, 0.1, 0, 0], blocks, mu) is not None  # an impulse on the separating one: caught
