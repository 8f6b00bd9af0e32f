"""Long runs of conservative models: energy drift monitoring and the acceptance runs of issue 8 §3.

Rule (``flexmb.dynamics.energy.energy_drift_report``): a model is conservative when it has
gravity, undamped spring-dampers and joint springs only (no damping, drives, point forces or
torques).  For such a model ``Solution.meta`` holds ``energy_drift = max |E - E0| / E_scale``,
``E_scale = max(max KE, max PE - min PE)``, and ``energy_trend`` (largest ``|E - E0|`` over the
last 10 % of the nodes minus that over the first 10 %, over ``E_scale``); a WARNING is logged
when ``energy_drift > 5 %``.

The acceptance runs (pendulum at 24 steps per period with p = 1, 2, 3: energy error without
trend).  The cause of the secular gain was the transport of the multipliers onto the bodies (end-node
levers at the gauge reset against Gauss-point levers in the constitutive law, docs/energy-drift.md);
odd p can use the collocation-consistent transport (opt-in:
``p=fm.TimeElement.of_order(p, transport="consistent")``, docs/theory.md section 3), which keeps the energy
error flat: the 30-period runs below fail on the end-node transport (p = 1: 0.56 J in the first tenth,
21 J in the last; p = 3: 6.9e-6 J, 5.3e-5 J).  Even p keeps the end-node transport (the consistent one
accumulates the constraint-normal node momentum, e0 = +1): p = 2 stays a strict xfail.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.energy import ENERGY_DRIFT_WARN, energy_drift_report
from flexmb.dynamics.system import compile_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from pendulum import build_model  # noqa: E402
from fd_jacobian import fd_check  # noqa: E402
from test_jacobian import JOINTS, _bodies  # noqa: E402

PERIOD = 2.3678419476  # A01 pendulum period [s]
H24 = PERIOD / 24


def test_drift_rule_on_synthetic_energies(caplog):
    cm = compile_model(build_model())
    t = np.linspace(0.0, 10.0, 101)
    ke = 5.0 + 5.0 * np.cos(t)
    pe = -ke + 10.0
    bounded = energy_drift_report(cm, t, ke, pe + 0.01 * np.sin(3 * t))
    assert bounded["energy_scale"] == pytest.approx(10.0, rel=1e-3)
    assert bounded["energy_drift"] == pytest.approx(1e-3, rel=2e-2)
    assert abs(bounded["energy_trend"]) < 1e-3
    with caplog.at_level(logging.WARNING, logger="flexmb.dynamics.simulate"):
        growing = energy_drift_report(cm, t, ke, pe + 0.1 * t)
    scale = max(ke.max(), np.ptp(pe + 0.1 * t))  # the potential now spans more than the kinetic energy
    assert growing["energy_scale"] == pytest.approx(scale, rel=1e-12)
    assert growing["energy_drift"] == pytest.approx(1.0 / scale, rel=1e-9)
    assert growing["energy_trend"] == pytest.approx((1.0 - 0.09) / scale, rel=1e-9)
    assert any("energy of this conservative model changed by" in r.getMessage() and "transport='symmetric'"
               in r.getMessage() for r in caplog.records)  # a growing error names the remedy


def test_non_conservative_models_have_no_drift_entry():
    b = fm.RigidBody("b", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(-1.0, 0.0, 0.0))
    j = fm.Revolute("pin", "ground", "b", point=(0, 0, 0), axis=(0, 0, 1), damping=0.5)
    sol = fm.simulate(fm.Model([b], [j], [fm.Gravity((0, -9.81, 0))]), 0.5, 0.05, show_progress=False)
    assert "energy_drift" not in sol.meta


def test_resolved_pendulum_reports_small_drift_without_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="flexmb.dynamics.simulate"):
        sol = fm.simulate(build_model(), 3.0, 1.0 / 16.0, p=3, show_progress=False)
    assert sol.meta["energy_drift"] < 1e-5
    assert not [r for r in caplog.records if "energy" in r.getMessage()]


def test_coarse_p1_pendulum_drift_is_reported(caplog):
    """Today's p = 1 scheme gains energy at 24 steps per period; the monitor must say so."""
    with caplog.at_level(logging.WARNING, logger="flexmb.dynamics.simulate"):
        sol = fm.simulate(build_model(), 25.0, 0.1, p=1, show_progress=False)
    assert sol.meta["energy_trend"] > 0.0
    if sol.meta["energy_drift"] > ENERGY_DRIFT_WARN:
        assert any("conservative model" in r.getMessage() for r in caplog.records)


def _no_trend(p: int, periods: float, transport: str = "consistent"):
    te = fm.TimeElement.of_order(p, transport=transport)
    sol = fm.simulate(build_model(), periods * PERIOD, H24, p=te, show_progress=False)
    E = sol.total_energy
    err = np.abs(E - E[0])
    n10 = err.size // 10
    first, last = err[:n10].max(), err[-n10:].max()
    return first, last


@pytest.mark.parametrize("p, transport", [(1, "consistent"), (3, "consistent"), (2, "symmetric"),
                                          pytest.param(3, "symmetric", marks=pytest.mark.slow)])  # p=3 sym: ~25 s
def test_pendulum_24_steps_per_period_energy_has_no_trend(p, transport):
    """30 periods (720 elements): the largest energy error of the last tenth of the run against that of
    the first tenth, and its size.  Measured (J): consistent p = 1 2.21e-3 / 2.21e-3 (flat to 3 digits),
    p = 3 4.8e-7 / 5.5e-7 (a slow residual gain, hence 1.3 x); symmetric p = 2 2.79e-4 / 2.80e-4, p = 3
    2.78e-7 / 2.78e-7 (flat to 3 digits: 1.05 x, which the consistent p = 3 (1.16 x) and the node
    transport fail).  The node transport: p = 1 0.56 / 21 J, p = 2 1.34e-3 / 6.47e-3 J, p = 3 6.9e-6 / 5.3e-5 J."""
    first, last = _no_trend(p, 30, transport)
    assert last <= (1.05 if transport == "symmetric" else 1.3) * first, (first, last)
    assert last < {1: 1e-2, 2: 1e-4, 3: 1e-7}[p] * 9.81, (first, last)


def test_node_transport_still_drifts_and_even_p_refuses_the_consistent_one():
    """The default time element keeps the end-node transport (smaller error constant, cheaper): at
    24 steps per period its energy error grows (30 periods, first / last tenth: p = 1 0.56 / 21 J,
    p = 2 1.34e-3 / 6.47e-3 J), which is why long conservative runs should opt in; even p refuse the
    consistent transport (its constraint-normal node momentum accumulates) and take the symmetric one."""
    first, last = _no_trend(1, 30, transport="node")
    assert last > 5.0 * first, (first, last)
    first, last = _no_trend(2, 30, transport="node")
    assert last > 3.0 * first, (first, last)
    with pytest.raises(ValueError, match="odd p only"):
        fm.TimeElement.of_order(2, transport="consistent")


def _radial_node_momentum(p: int, transport: str, periods: float = 2.0) -> float:
    sol = fm.simulate(build_model(), periods * PERIOD, H24, p=fm.TimeElement.of_order(p, transport=transport),
                      show_progress=False)
    x = sol.body("bob").position
    mom = sol.extra["body_momentum"][:, 0, :3]  # the scheme's node momenta (state, not projected)
    return float(np.abs(np.einsum("nd,nd->n", mom, x / np.linalg.norm(x, axis=1)[:, None])).max())


@pytest.mark.parametrize("p", [1, 2, 3])
def test_symmetric_projection_keeps_the_node_momenta_on_the_velocity_constraints(p):
    """The parasitic mode is the node momentum along the rod (the pin's constraint normal); the symmetric
    projection keeps it at the outer iteration's tolerance (measured 1e-11 .. 2e-11 kg m/s over 2
    periods), where the consistent / node transports carry 0.066 (p = 1), 0.13 (p = 2, node) and 6.6e-4
    (p = 3) kg m/s (the bob's momentum is ~4.4 kg m/s at the bottom)."""
    assert _radial_node_momentum(p, "symmetric") < 1e-9
    other = {1: "consistent", 2: "node", 3: "consistent"}[p]
    assert _radial_node_momentum(p, other) > {1: 0.03, 2: 0.05, 3: 3e-4}[p]


def _elliptic_pendulum(t: float) -> np.ndarray:
    """Exact position of the A01 pendulum (m = L = 1, g = 9.81, released horizontally at (-1, 0)):
    ``sin(theta/2) = k sn(K - w0 t, k)``, ``k = sin(pi/4)``, theta from the downward vertical, with the
    bob's inertia J = 1e-9 m L^2 (``w0^2 = g / (L (1 + J / (m L^2)))``, a 2e-9 m shift at 1 s)."""
    from scipy.special import ellipj, ellipk

    k2 = 0.5
    sn = ellipj(ellipk(k2) - np.sqrt(9.81 / (1.0 + 1e-9)) * t, k2)[0]
    th = 2.0 * np.arcsin(np.sqrt(k2) * sn)
    return np.array([-np.sin(th), -np.cos(th)])


@pytest.mark.parametrize("p", [1, 2, 3])
def test_symmetric_projection_keeps_the_nodal_order(p):
    """The projection impulses are of the element's own error, so the positions keep the nodal order 2p
    (pendulum at t = 1 s against the elliptic-function solution; measured in docs/energy-drift.md)."""
    hs = {1: [0.02, 0.01, 0.005], 2: [0.05, 0.025, 0.0125], 3: [0.1, 0.05, 0.025]}[p]
    te = fm.TimeElement.of_order(p, transport="symmetric")
    err = [np.linalg.norm(fm.simulate(build_model(), 1.0, h, p=te, show_progress=False).body("bob").position[-1, :2]
                          - _elliptic_pendulum(1.0)) for h in hs]
    order = np.polyfit(np.log(hs), np.log(err), 1)[0]
    assert order == pytest.approx(2 * p, abs=0.15), (err, order)


@pytest.mark.parametrize("kind", sorted(JOINTS))
def test_joint_jacobian_symmetric_p2(kind):
    """The symmetric element evaluates the consistent transport, here at even p (its transport moment
    couples the two Gauss points): analytic Jacobian = central differences for every joint type
    (p = 1, 3: tests/test_jacobian.py)."""
    a, b = _bodies()
    model = fm.Model([a, b], [fm.Spherical("ground_pin", "ground", "A", point=(-0.3, 0.0, 0.0)), JOINTS[kind]()],
                     [fm.Gravity((0, 0, -9.81))])
    err, where = fd_check(model, fm.TimeElement.of_order(2, transport="symmetric"))
    assert err < 1e-6, where


@pytest.mark.parametrize("transport, p", [("symmetric", 2), ("consistent", 1)])
def test_resume_keeps_the_transport_and_is_bit_identical(tmp_path, transport, p):
    """A checkpoint stores the time element's transport (before: a consistent run resumed with the node
    transport) and the symmetric projection's predictor, so the resumed run is bit-identical."""
    model = build_model(1e-3)
    te = fm.TimeElement.of_order(p, transport=transport)
    full = fm.simulate(model, 1.0, 0.05, p=te, show_progress=False)
    ck = tmp_path / "run.npz"
    part = fm.simulate(model, 1.0, 0.05, p=te, checkpoint=ck, on_step=lambda t, s: t >= 0.5 - 1e-12,
                       show_progress=False)
    assert not part.meta["complete"]
    rest = fm.resume(ck)
    for name in ("t", "body_position", "body_velocity", "joint_force", "kinetic_energy"):
        assert np.array_equal(getattr(full, name), getattr(rest, name)), name


@pytest.mark.slow  # 240,000 elements each: ~30 min (p = 1 consistent, 1920 s), ~1 h or more (symmetric, ~4 solves each)
@pytest.mark.parametrize("p, transport", [(1, "consistent"), (2, "symmetric"), (3, "symmetric")])
def test_pendulum_10000_periods_energy_bounded(p, transport):
    """Issue 8 section 3 acceptance.  Measured: p = 1 consistent 2.21e-3 J in every tenth of 10,000 periods;
    p = 2 symmetric passed over 10,000 periods (2026-11-26, 33 min); p = 3 symmetric 2.784e-7 .. 2.773e-7 J over
    3,000 periods, and its 10,000-period run failed on a 7e-8 s sliver element at the very end (node times
    summed from h), fixed by simulate.SLIVER; re-run: passed (2026-11-26, 45 min on the loaded machine)."""
    first, last = _no_trend(p, 10_000, transport)
    assert last <= 1.05 * first + 1e-12


_P3_RESIDUAL = ("issue 8 §3: p = 3 consistent with the point mass (J = 1e-9 m L^2) keeps a slow linear gain, 4.4e-9 J "
                "per period (5.5e-7 -> 1.9e-6 J over 300 periods) with a growing alternating constraint-normal node "
                "momentum, which the symmetric transport removes")


@pytest.mark.slow  # 300 periods (7,200 elements) are enough to see the residual gains
@pytest.mark.parametrize("p, transport", [
    (2, "symmetric"), (3, "symmetric"),
    pytest.param(3, "consistent", marks=pytest.mark.xfail(strict=True, reason=_P3_RESIDUAL))])
def test_pendulum_300_periods_energy_bounded(p, transport):
    first, last = _no_trend(p, 300, transport)
    assert last <= 1.05 * first + 1e-12, (first, last)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_a_welded_body_at_rest_does_not_warn_on_round_off(p, caplog):
    """A body welded to the ground under gravity exchanges no energy; its total energy moves by round-off
    (4e-16 .. 7e-15 J, measured), which used to read as a 60-100 % change of a scale of the same size.
    Judged against the model's energy (F L ~ m g L) and |E|, it is 1e-8 of the scale at most."""
    b = fm.RigidBody("b", 1.3, (0.1, 0.2, 0.3), position=(1.3, -0.7, 0.4), orientation={"rotvec": (0.3, 0.5, 0.7)})
    weld = fm.Fixed("weld", "ground", "b", point=(0.37, 0.11, -0.2))
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        sol = fm.simulate(fm.Model([b], [weld], [fm.Gravity((0, -9.81, 0))]), 1.0, 0.1, p=p)
    assert not caplog.records
    assert sol.meta["energy_drift"] < 1e-6 and sol.meta["energy_balance"] < 1e-6
    assert sol.meta["energy_scale"] > 1e-9  # m g L x 1e-8, not the round-off itself


def test_the_round_off_floor_keeps_small_motions_sensitive():
    """A pendulum swinging by 1 degree exchanges 1.5e-4 m g L, far above the floor: its drift is still
    measured against what it exchanges (a coarse step still warns, test_coarse_p1_pendulum_drift_is_reported)."""
    cm = compile_model(build_model())
    t = np.linspace(0.0, 1.0, 11)
    ke = 1.5e-3 * np.sin(t) ** 2
    report = energy_drift_report(cm, t, ke, -ke + 1e-4 * t, e_model=9.81)
    assert report["energy_scale"] == pytest.approx(max(ke.max(), np.ptp(-ke + 1e-4 * t)), rel=1e-12)
