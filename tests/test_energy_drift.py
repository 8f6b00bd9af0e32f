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
    assert any("energy of this conservative model changed by" in r.getMessage() for r in caplog.records)


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


@pytest.mark.parametrize("p", [1, 3])
def test_pendulum_24_steps_per_period_energy_has_no_trend(p):
    """30 periods (720 elements, ~5 s each): the largest energy error of the last tenth of the run
    is within 1.3 x that of the first tenth (measured p = 1: 2.21e-3 / 2.21e-3 J, flat to 3 digits;
    p = 3: 4.8e-7 / 5.5e-7 J, a slow residual gain, see the 10,000-period test), and small: below
    1e-2 m g L (p = 1) and 1e-5 m g L (p = 3).  The end-node transport (main before issue 8 §3) fails both: p = 1 0.56 / 21 J,
    p = 3 6.9e-6 / 5.3e-5 J."""
    first, last = _no_trend(p, 30)
    assert last <= 1.3 * first, (first, last)
    assert last < {1: 1e-2, 3: 1e-5}[p] * 9.81, (first, last)


@pytest.mark.slow  # ~30 s; known defect, tracked by strict xfail
@pytest.mark.xfail(strict=True, reason="issue 8 §3: slow secular energy gain at p = 2 (the node momenta's "
                   "constraint-normal part is carried with weight e0 = +1; fix pending)")
def test_pendulum_24_steps_per_period_energy_has_no_trend_p2():
    first, last = _no_trend(2, 30, transport="node")
    assert last <= 1.3 * first


def test_default_transport_still_drifts_and_even_p_refuses_the_consistent_one():
    """The default time element keeps the end-node transport (smaller error constant, cheaper): at
    p = 1 and 24 steps per period its energy error grows (0.56 J in the first tenth of 30 periods,
    21 J in the last), which is why long conservative runs should opt in; even p refuse the opt-in."""
    first, last = _no_trend(1, 30, transport="node")
    assert last > 5.0 * first, (first, last)
    with pytest.raises(ValueError, match="odd p only"):
        fm.TimeElement.of_order(2, transport="consistent")


_P3_RESIDUAL = ("issue 8 §3: p = 3 with the point mass (J = 1e-9 m L^2) keeps a slow linear gain, 4.4e-9 J per "
                "period (5.5e-7 -> 1.9e-6 J over 300 periods) with a growing alternating constraint-normal node "
                "momentum; 3.1e-9 J per period with J = 1e-6 or Newton tol 1e-12, none with J = 1e-3 or at T/48")


@pytest.mark.slow  # 240,000 elements: ~30 min (measured: 2.21e-3 J in every tenth, 1920 s)
def test_pendulum_10000_periods_energy_bounded():
    first, last = _no_trend(1, 10_000)
    assert last <= 2.0 * first + 1e-12


@pytest.mark.slow  # 300 periods (7,200 elements) are enough to see the residual gains; 10,000 would cost ~40 min each
@pytest.mark.parametrize("p, transport", [
    pytest.param(2, "node", marks=pytest.mark.xfail(strict=True, reason="issue 8 §3 (p = 2: fix pending)")),
    pytest.param(3, "consistent", marks=pytest.mark.xfail(strict=True, reason=_P3_RESIDUAL))])
def test_pendulum_300_periods_energy_bounded(p, transport):
    first, last = _no_trend(p, 300, transport)
    assert last <= 2.0 * first + 1e-12
