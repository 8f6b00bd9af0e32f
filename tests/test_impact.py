"""Impulses, contacts and the impact solve at frozen positions (issue 21, stage 1): the validation
cases C1-C5, C7 (closed forms; C7: Coulomb friction) and bad input named with the element, the value and the fix."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb import validation
from flexmb.errors import ModelError

CASES = ["C1", "C2", "C3", "C4", "C5", "C7"]


@pytest.fixture(scope="module")
def specs():
    return validation.discover_cases()


@pytest.mark.parametrize("case_id", CASES)
def test_impact_case(specs, case_id):
    result = validation.run_case(specs[case_id], fast=True)
    assert result.error is None, f"{case_id} raised {result.error}\n{result.traceback}"
    failed = [f"{m.name} = {m.value!r} (reference {m.reference!r}, {m.kind} {m.tolerance!r})"
              for m in result.metrics if not m.passed]
    assert result.metrics and not failed, f"{case_id} failed metrics: {failed}"


def ball(y=0.1, v=-1.0):
    return fm.RigidBody("ball", mass=0.5, inertia=np.full(3, 2e-3), position=(0, y, 0), velocity=(0, v, 0))


def floor(**kw):
    args = dict(kind="sphere-plane", normal=(0, 1, 0), radius=0.1)
    args.update(kw)
    return fm.Contact("floor", "ground", "ball", **args)


@pytest.mark.parametrize("kw, words", [
    (dict(restitution=-0.1), ["restitution=-0.1", "[0, 1]"]),
    (dict(restitution=1.5), ["restitution=1.5", "[0, 1]"]),
    (dict(radius=0.0), ["radius=0.0", "> 0"]),
    (dict(radius=-0.2), ["radius=-0.2", "> 0"]),
    (dict(normal=(0, 0, 0)), ["normal", "zero"]),
    (dict(kind="box-plane"), ["kind='box-plane'", "sphere-plane"]),
    (dict(friction=-0.2), ["friction=-0.2", ">= 0", "friction=0.3"]),
    (dict(friction=float("nan")), ["friction=nan", "not finite"]),
    (dict(friction="0.3"), ["friction='0.3'", "plain number"]),
])
def test_bad_contact_is_named(kw, words):
    with pytest.raises(ModelError) as exc:
        floor(**kw)
    msg = str(exc.value)
    assert "Contact 'floor'" in msg and all(w in msg for w in words), msg


def test_unknown_body_and_interface_are_named():
    with pytest.raises(ModelError, match=r"Contact 'floor': body_b='bal' is not a body of the model"):
        fm.Model([ball()], contacts=[fm.Contact("floor", "ground", "bal", radius=0.1, normal=(0, 1, 0))])
    with pytest.raises(ModelError, match=r"Impulse: body='nobody' is not a body"):
        fm.Model([ball()], impulses=[fm.Impulse("nobody", (1, 0, 0))])
    with pytest.raises(ModelError, match=r"has no interfaces"):
        fm.Model([ball()], impulses=[fm.Impulse(("ball", "tip"), (1, 0, 0))])
    with pytest.raises(ModelError, match=r"duplicate contact name 'floor'"):
        fm.Model([ball()], contacts=[floor(), floor()])


def test_interpenetration_is_refused_at_the_start():
    model = fm.Model([ball(y=0.05)], contacts=[floor()])
    with pytest.raises(ModelError, match=r"Contact 'floor'.*interpenetrate.*gap -0.05 m.*move 'ball' by at least 0.05"):
        fm.impact(model)


def test_separating_or_open_contacts_do_not_act():
    # touching but separating, and approaching but open: no impulse, velocities unchanged
    for y, v in ((0.1, 1.0), (0.3, -1.0)):
        r = fm.impact(fm.Model([ball(y, v)], contacts=[floor()]))
        assert r.contact_impulse == {} and r.velocity_after["ball"][1] == v


def test_ball_on_floor_newton_law():
    for e in (0.0, 0.3, 1.0):
        r = fm.impact(fm.Model([ball()], contacts=[floor(restitution=e)]))
        assert r.velocity_after["ball"][1] == pytest.approx(e * 1.0, abs=1e-14)
        assert r.contact_impulse["floor"] == pytest.approx(0.5 * (1 + e), rel=1e-14)
        assert r.energy_lost == pytest.approx(0.25 * (1 - e * e), rel=1e-12, abs=1e-15)


def test_simultaneous_contacts_one_lcp():
    """A bar landing flat on two stops at once (e = 0): both contacts in one LCP, both impulses equal
    and the bar at rest; tilted landing speed on one side only leaves the other contact open."""
    bar = fm.RigidBody("bar", mass=2.0, inertia=(1e-3, 0.2, 0.2), position=(0, 0, 0), velocity=(0, -1.0, 0))
    stops = [fm.Contact(f"s{k}", "ground", "bar", kind="point-plane", point_a=(x, 0, 0), normal=(0, 1, 0),
                        point_b=(x, 0, 0)) for k, x in enumerate((-0.5, 0.5))]
    r = fm.impact(fm.Model([bar], contacts=stops))
    assert r.contact_impulse["s0"] == pytest.approx(1.0, rel=1e-13)
    assert r.contact_impulse["s1"] == pytest.approx(1.0, rel=1e-13)
    assert np.abs(r.velocity_after["bar"]).max() < 1e-13 and np.abs(r.angular_velocity_after["bar"]).max() < 1e-13
    # spinning fast: the right end rises (v = -1 + 8 x 0.5 = 3 m/s) and keeps rising after the left end's
    # plastic impact (3 - 0.75 x 5 / 1.75 > 0): only the left stop acts
    def spinning(om):
        bar = fm.RigidBody("bar", mass=2.0, inertia=(1e-3, 0.2, 0.2), position=(0, 0, 0), velocity=(0, -1.0, 0),
                           angular_velocity=(0, 0, om))
        return fm.impact(fm.Model([bar], contacts=stops))
    r = spinning(8.0)
    assert r.contact_impulse.get("s1", 0.0) == 0.0 and r.contact_impulse["s0"] == pytest.approx(5.0 / 1.75, rel=1e-13)
    assert r.point_velocity("bar", (0.5, 0, 0))[1] > 0 and abs(r.point_velocity("bar", (-0.5, 0, 0))[1]) < 1e-13
    # slower: after the left end's impact the right end would sink (1 - 0.75 x 3 / 1.75 < 0): the plastic LCP
    # of both stops, D = [[1.75, -0.75], [-0.75, 1.75]] 1/kg, v- = (-3, 1) m/s: P = (1.8, 0.2) N s, the bar stops
    r = spinning(4.0)
    assert r.contact_impulse["s0"] == pytest.approx(1.8, rel=1e-12)
    assert r.contact_impulse["s1"] == pytest.approx(0.2, rel=1e-11)
    assert np.abs(r.velocity_after["bar"]).max() < 1e-13 and np.abs(r.angular_velocity_after["bar"]).max() < 1e-12
