"""Events in the march (issue 21, stage 2): impacts located and solved during ``simulate``, prescribed
impulses at their times, resting contacts, outputs, and bit-identical resume across events."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb import validation
from flexmb.validation.cases.case_c6 import ball_model


def test_case_c6():
    result = validation.run_case(validation.discover_cases()["C6"], fast=True)
    assert result.error is None, f"C6 raised {result.error}\n{result.traceback}"
    failed = [f"{m.name} = {m.value!r}" for m in result.metrics if not m.passed]
    assert result.metrics and not failed, failed


def test_pendulum_hits_a_wall():
    """A point-mass pendulum released horizontally hits a wall at the bottom (e = 0.6): one degree of
    freedom, so omega+ = -e omega-; omega- from the energy at the contact angle (sin phi = r / L); the pin's
    impulse is the one that keeps the bob on its circle; the energy balance holds with the impact's loss."""
    g, L, r, e, m = 9.81, 1.0, 0.05, 0.6, 1.0
    bob = fm.RigidBody("bob", mass=m, inertia=np.full(3, 1e-9), position=(-L, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    wall = fm.Contact("wall", "ground", "bob", kind="sphere-plane", normal=(-1, 0, 0), radius=r, restitution=e)
    sol = fm.simulate(fm.Model([bob], [pin], [fm.Gravity((0, -g, 0))], contacts=[wall]), 0.8, 0.01, p=2)
    ev = sol.events
    assert len(ev) == 1 and ev[0]["contact"] == "wall"
    phi = np.arcsin(r / L)
    v = np.sqrt(2 * g * L * np.cos(phi))
    assert -ev[0]["v_minus"] == pytest.approx(v * np.cos(phi), rel=1e-6)  # normal speed = v cos(phi)
    assert ev[0]["v_plus"] == pytest.approx(-e * ev[0]["v_minus"], rel=1e-12)
    assert ev[0]["energy_lost"] == pytest.approx(0.5 * m * v ** 2 * (1 - e ** 2), rel=1e-6)
    f, _ = ev[0]["joint_impulse"]["pin"]
    assert np.linalg.norm(f) > 0
    assert sol.meta["energy_balance"] < 1e-6
    # after the impact the bob swings back: x < -r at the end
    assert sol.body("bob").position[-1, 0] < -r


def test_prescribed_impulse_lands_on_its_time():
    ball = fm.RigidBody("ball", mass=2.0, inertia=np.full(3, 1e-2), position=(0, 0, 0))
    imp = fm.Impulse("ball", (3.0, 0, 0), time=0.305, name="kick")
    sol = fm.simulate(fm.Model([ball], impulses=[imp]), 0.5, 0.01)
    assert np.any(np.abs(sol.t - 0.305) < 1e-12)  # an element ends at the impulse
    assert sol.body("ball").velocity[-1, 0] == pytest.approx(1.5, rel=1e-12)
    assert sol.body("ball").position[-1, 0] == pytest.approx(1.5 * (0.5 - 0.305), rel=1e-10)
    assert sol.events[0]["t"] == pytest.approx(0.305, abs=1e-12) and sol.events[0]["contact"] is None
    assert sol.meta["energy_balance"] < 1e-12  # the impulse's work 1/2 m v^2 counted


def test_impulse_just_after_a_node_stretches_the_element():
    """An impulse 5e-7 s after the node at 0.31 s (h = 0.01 s) stretches that element instead of leaving a
    sliver of 5e-7 s (on which Newton stalls)."""
    ball = fm.RigidBody("ball", mass=2.0, inertia=np.full(3, 1e-2), position=(0, 0, 0))
    sol = fm.simulate(fm.Model([ball], impulses=[fm.Impulse("ball", (3.0, 0, 0), time=0.3100005)]), 0.5, 0.01)
    assert sol.stats["h"].min() > 0.0099
    assert sol.events[0]["t"] == pytest.approx(0.3100005, abs=1e-12)
    assert sol.body("ball").position[-1, 0] == pytest.approx(1.5 * (0.5 - 0.3100005), rel=1e-10)


def test_ball_resting_from_the_start_stays_on_the_floor():
    model = ball_model(h0=0.0)
    sol = fm.simulate(model, 0.5, 0.01)
    y = sol.body("ball").position[:, 1]
    assert np.all(y > 0.1 - 9.81 * 0.01 ** 2 / 2 * 1.000001) and np.all(y < 0.1 + 1e-12)
    assert sol.meta["impacts"] == 0 and sol.meta["resting_contacts"] == ["floor"]


def test_events_survive_save_and_load(tmp_path):
    sol = fm.simulate(ball_model(), 1.5, 0.01)
    path = sol.save(tmp_path / "ball.npz")
    back = fm.Solution.load(path)
    assert [e["t"] for e in back.events] == [e["t"] for e in sol.events] and len(sol.events) == 2
    from flexmb.results.events import plot_events
    import matplotlib
    matplotlib.use("Agg")
    plot_events(back, path=tmp_path / "events.png")
    assert (tmp_path / "events.png").stat().st_size > 0


@pytest.fixture(scope="module")
def ball_full():
    """The bouncing ball's whole run (4.5 s, 450 elements), shared by the resume tests (a Solution: read
    only)."""
    return fm.simulate(ball_model(), 4.5, 0.01)


# before the first impact, between, at rest.  The run that is stopped writes its checkpoint after every
# element up to the first stop times (writes through an impact do not disturb the run: its recorded part is
# in the resumed solution); a stopped run also writes one at the stop, the state resumed, which is all the
# stop at rest needs (405 writes of a growing record were 3/4 of this test's cost)
@pytest.mark.parametrize("t_stop, every", [(0.4515, 1e-9), (1.0, 1e-9), (4.05, 1e9)])
def test_resume_across_events_is_bit_identical(tmp_path, ball_full, t_stop, every):
    model, full = ball_model(), ball_full
    ck = tmp_path / "ball.ckpt"
    fm.simulate(model, 4.5, 0.01, checkpoint=ck, checkpoint_every=every,
                on_step=lambda t, s: t >= t_stop - 1e-12)
    rest = fm.resume(ck)
    for name in ("t", "body_position", "body_velocity", "kinetic_energy", "potential_energy"):
        assert np.array_equal(getattr(full, name), getattr(rest, name)), name
    for k, v in full.extra.items():
        assert np.array_equal(v, rest.extra[k]), k
    assert full.meta["energy_balance"] == rest.meta["energy_balance"]


def test_error_controlled_steps_are_refused_with_contacts():
    with pytest.raises(fm.ModelError, match="fixed steps"):
        fm.simulate(ball_model(), 1.0, 0.01, rtol=1e-6)


def test_interpenetration_refused_when_the_run_starts():
    with pytest.raises(fm.ModelError, match=r"Contact 'floor'.*interpenetrate"):
        fm.simulate(ball_model(h0=-0.01), 1.0, 0.01)


@pytest.mark.parametrize("p", [1, 2])
def test_free_flight_is_exact_over_long_elements(p):
    """A rigid body under constant loads: the time element integrates the parabola exactly (the nodes to
    round-off, whatever h), which lets an element span a whole flight between impacts."""
    g, v = 9.81, np.array([0.3, 2.0, -0.7])
    ball = fm.RigidBody("ball", mass=0.5, inertia=np.full(3, 2e-3), position=(0, 1.1, 0), velocity=tuple(v))
    sol = fm.simulate(fm.Model([ball], forces=[fm.Gravity((0, -g, 0))]), 2.0, 0.5, p=p)
    t = sol.t[:, None]
    exact = np.array([0, 1.1, 0]) + v * t + np.array([0, -g / 2, 0]) * t ** 2
    assert np.abs(sol.body("ball").position - exact).max() < 1e-13
    assert np.abs(sol.body("ball").velocity - (v + np.array([0, -g, 0]) * t)).max() < 1e-13


def test_rest_rule_does_not_depend_on_h():
    """The contact rests at the first rebound whose apex v^2 / (2 g) is below the gap tolerance: the
    impacts until rest (closed form: the first k with v0 e^k < sqrt(2 g tol)) and their times are the same
    for h = 0.05 s and h = 0.5 s (longer than the first flight); the last impact is within the remaining
    series 2 v_rest / (g (1 - e)) of its sum; at most two element solves per impact (a flight is one
    element landing on the predicted impact)."""
    g, H, e = 9.81, 1.0, 0.5
    runs = [fm.simulate(ball_model(e=e), 3.0, h) for h in (0.05, 0.5)]
    v0, t0 = np.sqrt(2 * g * H), np.sqrt(2 * H / g)
    v_rest = np.sqrt(2 * g * runs[0].meta["gap_tol"])
    n = int(np.argmax(v0 * e ** np.arange(1, 100) < v_rest) + 1)
    T_inf = t0 + 2 * v0 * e / (g * (1 - e))
    times = [np.array([ev["t"] for ev in sol.events]) for sol in runs]
    assert [len(t) for t in times] == [n, n]
    assert np.abs(times[0] - times[1]).max() < 1e-9
    assert 0.0 <= T_inf - times[1][-1] <= 2 * v_rest / (g * (1 - e))
    flights = runs[1].stats["h"][runs[1].t[1:] <= times[1][-1] + 1e-12]
    assert (len(flights) + runs[1].meta["event_solves"]) / n <= 2.0
    assert all(sol.meta["resting_contacts"] == ["floor"] for sol in runs)


@pytest.mark.parametrize("p", [1, 2])
def test_an_impact_inside_an_element_is_found(p):
    """A ball thrown up at 2 m/s under a ceiling touches it and falls back below it within the first
    element (h = 0.5 s, no flight prediction yet): the gap is positive at both ends of the element, the
    dip is found from the gap's Hermite cubic and located; impact at 2 t - g t^2 / 2 = 0.1 m."""
    g, e, r = 9.81, 0.5, 0.05
    ball = fm.RigidBody("ball", mass=0.5, inertia=np.full(3, 1e-3), position=(0, 0, 0), velocity=(0, 2.0, 0))
    ceiling = fm.Contact("ceiling", "ground", "ball", kind="sphere-plane", point_a=(0, 0.15, 0), normal=(0, -1, 0),
                         radius=r, restitution=e)
    sol = fm.simulate(fm.Model([ball], forces=[fm.Gravity((0, -g, 0))], contacts=[ceiling]), 0.5, 0.5, p=p)
    t_hit = (2 - np.sqrt(4 - 2 * g * 0.1)) / g
    ev = sol.events
    assert len(ev) == 1 and ev[0]["t"] == pytest.approx(t_hit, abs=1e-10)
    assert ev[0]["v_minus"] == pytest.approx(-(2 - g * t_hit), rel=1e-9)
    assert ev[0]["v_plus"] == pytest.approx(e * (2 - g * t_hit), rel=1e-9)
    t_end = 0.5 - t_hit
    assert sol.body("ball").velocity[-1, 1] == pytest.approx(-e * (2 - g * t_hit) - g * t_end, rel=1e-9)


def test_short_landing_under_a_varying_normal_acceleration_leaves_no_sliver():
    """A pendulum against a wall: the normal acceleration varies along the swing, so the predicted landing
    falls short; the element is re-solved beyond and located (no sliver element of 1e-7 s after it), at
    most four extra element solves per impact (the short landing, the re-solve
    beyond, one or two location steps); the first impact's normal speed against the energy closed
    form v cos(phi), sin(phi) = r / L (p = 2, h = 0.1 s)."""
    g, L, r = 9.81, 1.0, 0.05
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-9), position=(-L, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    wall = fm.Contact("wall", "ground", "bob", kind="sphere-plane", normal=(-1, 0, 0), radius=r, restitution=0.6)
    sol = fm.simulate(fm.Model([bob], [pin], [fm.Gravity((0, -g, 0))], contacts=[wall]), 3.0, 0.1, p=2)
    phi = np.arcsin(r / L)
    assert len(sol.events) == 3
    assert -sol.events[0]["v_minus"] == pytest.approx(np.sqrt(2 * g * L * np.cos(phi)) * np.cos(phi), rel=1e-4)
    assert np.diff(sol.t).min() > 1e-3 * 0.1
    assert sol.meta["event_solves"] / len(sol.events) <= 4.0


NODE_HOLD = fm.SimulationOptions(resting="node")


def test_a_resting_contact_sinking_at_long_steps_is_a_warning(caplog):
    """A resting contact held at the nodes only (resting="node"; the default holds it as a constraint row,
    tests/test_resting.py): within an element the ball falls by g h^2 / 2 into the floor.  At h = 0.5 s that is 1.2 m at a node (the model is 1 m): meta['resting_sink'] records it
    (to 5 %: the node's penetration is g h^2 / 2 minus the hold's rebound) and a WARNING says the
    positions are not to be trusted; at h = 0.01 s (0.5 mm, below 1e-3 of the size) no warning."""
    import logging

    g = 9.81
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        long = fm.simulate(ball_model(e=0.5), 3.0, 0.5, options=NODE_HOLD)
    assert long.meta["resting_contacts"] == ["floor"]
    assert long.meta["resting_sink"] == pytest.approx(g * 0.5 ** 2 / 2, rel=0.05)
    assert any("resting contact sank" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        short = fm.simulate(ball_model(e=0.5), 3.0, 0.01, options=NODE_HOLD)
    assert short.meta["resting_sink"] <= g * 0.01 ** 2 / 2 * 1.05
    assert not any("resting contact sank" in r.getMessage() for r in caplog.records)
