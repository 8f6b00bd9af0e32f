"""Resting contacts as constraint rows of the time element (issue 21, persistent contact;
flexmb/dynamics/impact/resting.py): the gap held at zero inside the elements whatever h, the normal
reaction against the closed form, lift-off where the reaction would pull (closed-form time), impacts
on a resting contact, bit-identical resume across rest and lift-off."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.validation.cases.case_c6 import A, G, M, R, T_LIFT, W, ball_model, table_displacement, table_model

# the table (case C6): y = A sin(W t) with a ball resting on it: the contact force is
# N = M (g + y'') = M (g - A W^2 sin(W t)), which reaches zero (lift-off) at sin(W t*) = g / (A W^2); then
# the ball flies freely from the table's position and velocity at t*
_table = table_displacement


@pytest.mark.parametrize("h", [0.01, 1.0])
def test_a_ball_at_rest_keeps_its_gap_zero_inside_the_elements(h):
    """The bouncing ball of C6 comes to rest (the same 42 impacts at both h) and from then on sits on the
    floor with the gap zero to round-off at the nodes and between them (Solution.at: the cubic Hermite of
    the nodes, which follows the element's motion), its row's reaction the weight M g, no sink
    (meta['resting_sink'] 0; the node hold of main sank g h^2 / 2 = 4.9 m at h = 1 s), energy conserved."""
    sol = fm.simulate(ball_model(), 10.0, h)
    assert sol.meta["impacts"] == 42 and sol.meta["resting_contacts"] == ["floor"]
    assert sol.meta["resting_sink"] == 0.0
    changes = sol.extra["events/resting"]
    assert changes.shape == (1, 3) and changes[0, 1:].tolist() == [0.0, 1.0]  # floor, on
    t_rest = changes[0, 0]
    assert t_rest == pytest.approx(sol.events[-1]["t"], abs=1e-12)
    y = sol.body("ball").position[:, 1]
    after = sol.t >= t_rest
    assert np.abs(y[after] - R).max() <= 1e-14
    # inside the elements: from the first node after the rest node (the rest node holds the velocity
    # before the plastic impact, whose Hermite would dip by v h / 4 in the element after it)
    t1 = sol.t[np.nonzero(after)[0][1]]
    inside = np.linspace(t1, 10.0, 97)
    assert np.abs(sol.at(inside).body("ball").position[:, 1] - R).max() <= 1e-14
    N = sol.joint("contact:floor").force[sol.t >= t1]  # (the rest node's reaction is the impact's node)
    assert np.abs(N[:, 2] - M * G).max() <= 1e-12 * M * G and np.abs(N[:, :2]).max() <= 1e-12
    assert sol.meta["energy_balance"] < 1e-12


@pytest.mark.parametrize("h", [0.05, 1.0])
def test_a_ball_slides_down_a_frictionless_slope_on_its_row(h):
    """A ball set on a frictionless slope (angle 0.3 rad, the normal not along an axis) rests from the
    start and slides down: distance g sin(a) t^2 / 2, normal force M g cos(a), the gap zero, all to
    round-off at h = 0.05 and 1 s (the time element integrates the constant acceleration exactly); on
    main it rested by the node hold only, its gap at the nodes down to -g cos(a) h^2 / 2."""
    a = 0.3
    n, d = np.array([-np.sin(a), np.cos(a), 0.0]), np.array([np.cos(a), np.sin(a), 0.0])
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=R * n)
    slope = fm.Contact("slope", "ground", "ball", kind="sphere-plane", normal=n, radius=R)
    sol = fm.simulate(fm.Model([ball], forces=[fm.Gravity((0, -G, 0))], contacts=[slope]), 2.0, h)
    assert sol.extra["events/resting"].tolist() == [[0.0, 0.0, 1.0]]
    x = sol.body("ball").position
    assert np.abs(x @ n - R).max() <= 1e-15
    assert np.abs(x @ d + G * np.sin(a) * sol.t ** 2 / 2).max() <= 1e-14
    assert np.abs(sol.joint("contact:slope").force[1:, 2] - M * G * np.cos(a)).max() <= 1e-14
    assert sol.meta["energy_balance"] < 1e-14


def test_a_ball_rests_on_a_turning_table():
    """The plane on a body that turns (a table driven about the vertical at 3 rad/s), a frictionless ball
    resting on it off the axis: no tangential force, so the ball stays where it is while the plane turns
    under it (to round-off), pressing with M g (frame A turns with the table), at h = 0.05 and 0.5 s."""
    table = fm.RigidBody("table", mass=5.0, inertia=(0.5, 1.0, 0.5), position=(0, 0, 0))
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(0.3, R, 0.0))
    spin = fm.Revolute("spin", "ground", "table", point=(0, 0, 0), axis=(0, 1, 0), angle=lambda t: 3.0 * t)
    top = fm.Contact("top", "table", "ball", kind="sphere-plane", normal=(0, 1, 0), radius=R)
    model = fm.Model([table, ball], [spin], [fm.Gravity((0, -G, 0))], contacts=[top])
    for h in (0.05, 0.5):
        sol = fm.simulate(model, 3.0, h, p=2)
        assert sol.extra["events/resting"].tolist() == [[0.0, 0.0, 1.0]] and sol.meta["lift_offs"] == 0
        assert np.abs(sol.body("ball").position - [0.3, R, 0.0]).max() <= 1e-15
        assert np.abs(sol.joint("contact:top").force[1:, 2] - M * G).max() <= 1e-12


@pytest.mark.parametrize("mu", [1.0, 0.05])
def test_a_ball_rolls_or_slides_down_a_rough_slope(mu):
    """Rough slope (angle a = 0.3): the row holds the normal inside the elements, Coulomb acts at the nodes
    (the cone mu times the row's normal impulse over the element, M g cos(a) h).  mu = 1 >= 2/7 tan(a): it
    sticks at every node, the velocity after each node's impulse gains exactly 5/7 g sin(a) h per element
    (the angular momentum about the contact point); mu = 0.05 < 2/7 tan(a): it slides, gaining
    g (sin a - mu cos a) h per element.  The recorded node velocity is the one before the node's impulse
    (one frictionless element, g sin(a) h, on top): both to round-off, the gap 0, the energy balanced
    with the friction's loss as work."""
    a, h = 0.3, 0.01
    n, d = np.array([-np.sin(a), np.cos(a), 0.0]), np.array([np.cos(a), np.sin(a), 0.0])
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=R * n)
    slope = fm.Contact("slope", "ground", "ball", kind="sphere-plane", normal=n, radius=R, friction=mu)
    sol = fm.simulate(fm.Model([ball], forces=[fm.Gravity((0, -G, 0))], contacts=[slope]), 0.5, h)
    down = -(sol.body("ball").velocity @ d)
    gain = 5 / 7 * G * np.sin(a) if mu == 1.0 else G * (np.sin(a) - mu * np.cos(a))
    k = np.arange(1, sol.t.size)
    assert np.abs(down[1:] - (gain * (k - 1) * h + G * np.sin(a) * h)).max() <= 1e-14
    assert np.abs(sol.body("ball").position @ n - R).max() <= 1e-15
    assert sol.meta["energy_balance"] < 1e-14


def test_the_node_hold_is_still_there_as_an_option():
    """resting="node": the hold at the nodes (the ball sinks by up to g h^2 / 2 within an element); a
    wrong value is refused, naming it."""
    sol = fm.simulate(ball_model(h0=0.0), 1.0, 0.1, options=fm.SimulationOptions(resting="node"))
    assert sol.meta["resting_sink"] == pytest.approx(G * 0.1 ** 2 / 2, rel=0.05)
    assert sol.joint_names == ()  # no rows compiled
    with pytest.raises(fm.ModelError, match="resting='glue'"):
        fm.simulate(ball_model(), 1.0, 0.1, options=fm.SimulationOptions(resting="glue"))
    # a joint already named as the contact's row: refused, naming both
    base = ball_model()
    ring = fm.RigidBody("ring", mass=0.1, inertia=(1e-3, 1e-3, 1e-3), position=(0, 1.1, 0))
    pin = fm.Spherical("contact:floor", "ball", "ring", point=(0, 1.1, 0))
    model = fm.Model([*base.bodies, ring], [pin], base.forces, contacts=base.contacts)
    with pytest.raises(fm.ModelError, match="Contact 'floor': its resting row is the joint 'contact:floor'"):
        fm.simulate(model, 0.1, 0.01)


def test_a_ball_on_a_table_lifts_off_when_the_table_falls_faster_than_g():
    """Table y = A sin(W t), A W^2 = 20 m/s^2 > g: the ball rests while N = M (g - A W^2 sin W t) > 0
    (the row's reaction against it, to 1e-6 of M g at h = 2.5 ms, p = 2: order 4), lifts off at
    T_LIFT = asin(g / (A W^2)) / W = 25.633 ms (located from the Gauss points' polynomial: to 2e-5 s
    at h = 2.5 ms, 1e-7 s at 1.25 ms), then flies freely from the table's state at T_LIFT (closed form
    to 1e-7 m).  The gap stays 0 to round-off while it rests."""
    for h, t_tol in ((0.0025, 5e-5), (0.00125, 1e-6)):
        sol = fm.simulate(table_model(), 0.04, h, p=2)
        changes = sol.extra["events/resting"]
        assert changes[:, 2].tolist() == [1.0, 0.0] and changes[0, 0] == 0.0
        assert sol.meta["impacts"] == 0 and sol.meta["lift_offs"] == 1
        assert abs(changes[1, 0] - T_LIFT) <= t_tol
        t, y = sol.t, sol.body("ball").position[:, 1]
        rest = t <= changes[1, 0] + 1e-12
        assert np.abs(y[rest] - _table(t[rest]) - R).max() <= 1e-15
        N = sol.joint("contact:top").force[rest, 2]
        assert np.abs(N - M * (G - A * W ** 2 * np.sin(W * t[rest])))[:-1].max() <= 1e-5 * M * G
        # (the lift-off node's recovered reaction mixes the elements on both sides of the switch: not checked)
        y_lift, v_lift = _table(T_LIFT) + R, A * W * np.cos(W * T_LIFT)
        free = y_lift + v_lift * (t[-1] - T_LIFT) - G / 2 * (t[-1] - T_LIFT) ** 2
        assert y[-1] == pytest.approx(free, abs=1e-7)
        # open: no reaction (from the second node on: the first one's recovery reaches back to the lift-off)
        assert np.all(sol.joint("contact:top").force[~rest][1:] == 0.0)


def test_lift_off_at_p1_is_found_at_the_next_node():
    """p = 1: the midpoint rule's element reactions oscillate by a constant about the reaction after the
    row is switched on, so the reaction at the element's start node (the mean of two elements) decides:
    the lift-off is found at the first node after T_LIFT, never before it."""
    for h in (0.005, 0.00125):
        sol = fm.simulate(table_model(), 0.04, h, p=1)
        changes = sol.extra["events/resting"]
        assert changes[:, 2].tolist() == [1.0, 0.0]
        assert 0.0 <= changes[1, 0] - T_LIFT <= h * (1 + 1e-9)


def test_an_impulse_lifts_a_resting_ball_or_is_taken_by_the_floor():
    """An upward impulse P on a ball resting on the floor: the row is not a bilateral joint in the
    impact (the resting contact takes part as a plastic unilateral contact): the ball leaves at P / M
    (lift-off recorded at the impulse), lands 2 P / (M g) later.  A downward one: the floor takes it
    plastically (impulse P, loss P^2 / (2 M)), the ball stays, its row holds again."""
    def model(P):
        ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(0, R, 0))
        floor = fm.Contact("floor", "ground", "ball", kind="sphere-plane", normal=(0, 1, 0), radius=R, restitution=0.5)
        kick = fm.Impulse("ball", impulse=(0, P, 0), time=0.3, name="kick")
        return fm.Model([ball], forces=[fm.Gravity((0, -G, 0))], contacts=[floor], impulses=[kick])

    up = fm.simulate(model(1.0), 1.0, 0.01)
    assert up.extra["events/resting"].tolist() == [[0.0, 0.0, 1.0], [0.3, 0.0, 0.0]]
    land = up.events[1]
    assert land["contact"] == "floor" and land["t"] == pytest.approx(0.3 + 2 * 1.0 / (M * G), abs=1e-12)
    assert land["v_minus"] == pytest.approx(-1.0 / M, rel=1e-12)
    down = fm.simulate(model(-1.0), 1.0, 0.01)
    assert down.extra["events/resting"].tolist() == [[0.0, 0.0, 1.0]]
    hit = down.events[0]
    assert hit["normal_impulse"] == pytest.approx(1.0, rel=1e-12)
    assert hit["energy_lost"] == pytest.approx(1.0 ** 2 / (2 * M), rel=1e-12)
    assert np.abs(down.body("ball").position[:, 1] - R).max() <= 1e-14


@pytest.mark.parametrize("t_stop", [0.01, 0.03])  # resting, after the lift-off
def test_resume_across_rest_and_lift_off_is_bit_identical(tmp_path, t_stop):
    model = table_model()
    full = fm.simulate(model, 0.04, 0.0025, p=2)
    ck = tmp_path / "table.ckpt"
    fm.simulate(model, 0.04, 0.0025, p=2, checkpoint=ck, checkpoint_every=1e-9,
                on_step=lambda t, s: t >= t_stop - 1e-12)
    rest = fm.resume(ck)
    for name in ("t", "body_position", "body_velocity", "joint_force", "kinetic_energy", "potential_energy"):
        assert np.array_equal(getattr(full, name), getattr(rest, name)), name
    for k, v in full.extra.items():
        assert np.array_equal(v, rest.extra[k]), k
    assert full.meta["energy_balance"] == rest.meta["energy_balance"]


def _mechanism_with_balls(z_drop: float):
    """The parallelogram four-bar of tests/test_redundancy_reselect.py (3 redundant equations; from 150 deg
    its choice is re-selected once, at t = 0.16..0.17 s) with two balls beside it on the floor z = 0 (gravity
    -z): one resting from the start, one dropped from ``z_drop`` (radius R, mass M, restitution 0.5)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_redundancy_reselect import parallelogram

    mech = parallelogram(150.0)
    inertia = np.full(3, 0.4 * M * R ** 2)
    balls = [fm.RigidBody("sits", mass=M, inertia=inertia, position=(3.0, 0, R)),
             fm.RigidBody("drops", mass=M, inertia=inertia, position=(3.0, 1.0, z_drop))]
    contacts = [fm.Contact(b.name, "ground", b.name, kind="sphere-plane", normal=(0, 0, 1), radius=R, restitution=0.5)
                for b in balls]
    return fm.Model(list(mech.bodies) + balls, mech.joints, mech.forces, contacts=contacts)


def test_a_reselection_of_redundant_loop_equations_leaves_the_contact_rows_alone():
    """The redundancy monitor never takes a contact row for a loop equation: the re-selection of the
    parallelogram's dropped equations at t = 0.16 s keeps the resting ball's row on (its gap zero to
    round-off, its reaction M g) and the flying ball's row off (free fall z0 - g t^2 / 2 to round-off
    through the re-selection, landing at sqrt(2 (z0 - R) / g) = 0.30 s); the choices recorded name no
    contact row, and the mechanism's reactions stay those of a good choice (< 40 N m, as without the
    balls)."""
    z0 = 0.55
    sol = fm.simulate(_mechanism_with_balls(z0), 0.35, 0.01, p=2)
    (event,) = sol.meta["redundancy_reselections"]
    assert 0.1 < event["t"] < 0.3
    names = [n for n, _ in sol.meta["redundant_constraints"] + event["dropped"] + event["before"]]
    assert len(names) == 9 and not any(n.startswith("contact:") for n in names)
    sits = sol.body("sits").position[:, 2]
    assert np.abs(sits - R).max() <= 1e-14
    # (the first node's reaction is the rest node's)
    assert np.abs(sol.joint("contact:sits").force[1:, 2] - M * 9.81).max() <= 1e-10 * M * 9.81
    t_land = np.sqrt(2 * (z0 - R) / 9.81)
    assert sol.events[0]["contact"] == "drops" and sol.events[0]["t"] == pytest.approx(t_land, abs=1e-9)
    flight = sol.t <= t_land
    assert sol.t[flight][-1] > event["t"]
    drop = sol.body("drops").position[flight, 2]
    assert np.abs(drop - (z0 - 9.81 * sol.t[flight] ** 2 / 2)).max() <= 1e-12
    mech = [i for i, n in enumerate(sol.joint_names) if not n.startswith("contact:")]
    assert np.linalg.norm(sol.joint_moment[:, mech], axis=2).max() < 40.0


def test_contact_rows_are_switched_equations_outside_the_loops():
    """A pendulum whose bob rests on the floor: the bob's contact row closes the graph ground - revolute -
    bob - row - ground, yet it is no loop joint (the redundancy analysis never sees it); its gap equation
    is in the model's full set as a switched equation, dropped by the run's selection while the contact
    is open (at the start)."""
    from flexmb.dynamics.node.redundancy import loop_joints
    from flexmb.dynamics.node.selection import Selection
    from flexmb.dynamics.system import compile_model
    from flexmb.dynamics.simulate import Run, SimulationOptions

    bob = fm.RigidBody("bob", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(1.0, R, 0))
    pivot = fm.Revolute("pivot", "ground", "bob", point=(0, R, 0), axis=(0, 0, 1))
    floor = fm.Contact("floor", "ground", "bob", kind="sphere-plane", normal=(0, 1, 0), radius=R)
    model = fm.Model([bob], [pivot], [fm.Gravity((0, -G, 0))], contacts=[floor])
    cm = compile_model(model, contact_rows=True)
    assert [j.name for j in cm.model.joints] == ["pivot", "contact:floor"]
    assert cm.jnt_constrained[1].tolist() == [False, False, True, False, False, False]
    assert Selection.full(cm).switched == ((1, 2),) and loop_joints(cm).size == 0
    run = Run.start(model, 0.1, 0.01, 1, 0.0, SimulationOptions())
    assert run.selection.dropped == ((1, 2),) and run.selection.redundant == () and run.selection.switched_off == ((1, 2),)


@pytest.fixture(scope="module")
def bar_data():
    """A free-free aluminium bar 1 x 0.04 x 0.04 m (8 hex8), 2 modes, its mesh's node sets."""
    mesh = fm.structured_box((1.0, 0.04, 0.04), (8, 1, 1), "hexahedron", origin=(0, -0.02, -0.02),
                             material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    return fm.build_flexible_body(mesh, n_modes=2)


def test_a_ball_rests_on_its_row_beside_a_contact_at_node_sets(bar_data):
    """The rows are per contact, the event monitor's state per contact point: a contact at the 18 nodes
    of a flexible bar's bottom face (listed first, 18 points, no row: node sets keep the node hold) and a
    ball resting on the floor (point 18, its row): the ball's row holds (gap 0, reaction M g), the switch
    names its point, the bar falls freely (z0 - g t^2 / 2 at its centre: it never reaches the floor)."""
    bar = fm.FlexibleBody("bar", bar_data, position=(0, 0, 5.0))
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(3.0, 0, R))
    contacts = [fm.Contact("under", "ground", "bar", kind="point-plane", nodes="zmin"),
                fm.Contact("floor", "ground", "ball", kind="sphere-plane", normal=(0, 0, 1), radius=R)]
    sol = fm.simulate(fm.Model([bar, ball], forces=[fm.Gravity((0, 0, -G))], contacts=contacts), 0.3, 0.01)
    assert sol.meta["contact_names"][18] == "floor" and sol.extra["events/resting"].tolist() == [[0.0, 18.0, 1.0]]
    assert np.abs(sol.body("ball").position[:, 2] - R).max() <= 1e-14
    assert np.abs(sol.joint("contact:floor").force[1:, 2] - M * G).max() <= 1e-10 * M * G
    assert np.abs(sol.body("bar").position[:, 2] - (5.0 - G * sol.t ** 2 / 2)).max() <= 1e-10
    assert sol.meta["resting_contacts"] == ["floor"] and not sol.events


def test_a_bar_on_its_nodes_and_a_ball_on_its_row_both_rest(bar_data):
    """Both holds in one run, at the same nodes: a flexible bar dropped flat from 10 mm onto its bottom
    face's 18 nodes (listed first) and a ball dropped from 50 mm onto the floor (point 18), both plastic.
    The ball lands at sqrt(2 z0 / g) and rests on its row (the only row compiled): the switch names point
    18, its gap stays zero to round-off, the row's reaction is M g; the bar rests on the hold at its nodes
    and sinks by g h^2 / 2 within an element (meta['resting_sink']); the energy balanced."""
    bar = fm.FlexibleBody("bar", bar_data, position=(0, 0, 0.03))
    z0, h = 0.05, 0.01
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(3.0, 0, R + z0))
    contacts = [fm.Contact("bed", "ground", "bar", kind="point-plane", normal=(0, 0, 1), nodes="zmin", restitution=0.0),
                fm.Contact("floor", "ground", "ball", kind="sphere-plane", normal=(0, 0, 1), radius=R, restitution=0.0)]
    sol = fm.simulate(fm.Model([bar, ball], forces=[fm.Gravity((0, 0, -G))], contacts=contacts), 0.3, h)
    assert sol.joint_names == ("contact:floor",)
    assert sol.meta["contact_nodes"][18] == -1 and min(sol.meta["contact_nodes"][:18]) >= 0
    t_land = np.sqrt(2 * z0 / G)
    changes = sol.extra["events/resting"]
    assert changes.shape == (1, 3) and changes[0, 1:].tolist() == [18.0, 1.0]
    assert changes[0, 0] == pytest.approx(t_land, abs=1e-12)
    assert sol.meta["resting_contacts"] == ["bed", "floor"] and sol.meta["lift_offs"] == 0
    after = sol.t >= t_land
    assert np.abs(sol.body("ball").position[after, 2] - R).max() <= 1e-15
    t1 = sol.t[np.nonzero(after)[0][1]]  # (the rest node's reaction is the impact's node)
    assert np.abs(sol.joint("contact:floor").force[sol.t >= t1, 2] - M * G).max() <= 1e-12 * M * G
    assert sol.meta["resting_sink"] == pytest.approx(G * h ** 2 / 2, rel=0.05)
    assert sol.meta["energy_balance"] < 1e-12


def test_a_plane_contact_on_a_flexible_body_frame_keeps_the_node_hold(bar_data):
    """A point-plane contact whose side b is the plain frame of a flexible body with modes (legal for a
    contact, not for a joint: check_site) gets no row (a ContactRow there was refused as a joint on a
    flexible body) and is held at the nodes: the bar dropped flat from 10 mm (e = 0) lands at
    sqrt(2 z / g), then sinks by g h^2 / 2 within each element."""
    bar = fm.FlexibleBody("bar", bar_data, position=(0, 0, 0.01))
    pad = fm.Contact("pad", "ground", "bar", kind="point-plane", normal=(0, 0, 1), restitution=0.0)
    h = 0.01
    sol = fm.simulate(fm.Model([bar], forces=[fm.Gravity((0, 0, -G))], contacts=[pad]), 0.1, h)
    assert sol.joint_names == () and sol.extra["events/resting"].shape == (0, 3)
    assert sol.events[0]["t"] == pytest.approx(np.sqrt(2 * 0.01 / G), abs=1e-12)
    assert sol.meta["resting_contacts"] == ["pad"]
    assert sol.meta["resting_sink"] == pytest.approx(G * h ** 2 / 2, rel=0.05)
