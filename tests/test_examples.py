"""Examples are tests: run every ``examples/*.py`` ``main()`` with short settings and pin one
physical number of each against an independent value."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"_flexmb_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_tested_and_listed():
    scripts = sorted(p.stem for p in EXAMPLES.glob("*.py"))
    assert scripts == ["bipendulum", "bricard", "chain15", "flexible_slider_crank", "fourbar", "linear_analysis",
                       "nfourbar", "pendulum", "struck_chain", "sweep_pendulum", "sweep_slider_crank"], "add a test here for a new example"
    readme = (EXAMPLES / "README.md").read_text()
    assert all(f"`{s}.py`" in readme for s in scripts)


def test_pendulum_position_at_1s_matches_iftomm():
    """IFToMM A01: P(1 s) x = 0.986292 m (exact 0.98629175); p = 3, h = 1/16 s is good to ~1e-7."""
    r = load("pendulum").main(t_end=1.0)
    assert r["x_end"] == pytest.approx(0.986292, abs=1e-5)
    assert r["y_end"] == pytest.approx(-0.165011, abs=1e-5)
    assert r["energy_error"] < 1e-5


def test_sweep_pendulum_periods_match_exact():
    """T(L) = 4 K(1/2) sqrt(L/g) for every rod length; serial path here (tests/test_sweep.py runs it on a cluster)."""
    pytest.importorskip("pandas")
    r = load("sweep_pendulum").main(lengths=(0.5, 2.0), scheduler="sync")
    assert r["n_ok"] == 2 and r["max_period_error"] < 1e-7
    assert r["table"]["period"].tolist() == pytest.approx([1.6743171, 3.3486342], abs=1e-6)


def test_bipendulum_settles_at_relative_equilibrium(tmp_path):
    """Example 1.2: bar 2 droops to beta* = 0.970703 rad (stationary point of the effective
    potential, independent 1-DOF computation in validation/case_r3.py); with c = 0.2 lbf ft s
    (zeta = 0.52) the residual oscillation after 3 s is ~1e-4 rad."""
    r = load("bipendulum").main("1.2", t_end=3.0, h=1.0 / 16.0, damping=0.2, plot=tmp_path / "z.png")
    assert r["droop_angle"] == pytest.approx(0.970703, abs=5e-4)
    assert r["equilibrium_angle"] == pytest.approx(0.9707028630, abs=1e-9)
    assert (tmp_path / "z.png").stat().st_size > 0


def test_bipendulum_example_1_1_conserves_vertical_angular_momentum():
    r = load("bipendulum").main("1.1", t_end=0.5, h=1.0 / 32.0)
    assert r["hz_error"] < 1e-5
    assert r["energy_error"] < 1e-4


def test_chain15_links_fall_freely_at_first():
    """Example 2.1: released from equilibrium arches, the links fall on z0 - g t^2/2: bar 13 (the
    lowest bar of the third arch, z0 = -(sin 60 + sin 40.89) ft) is at -2.96851 ft after 0.3 s
    within 0.005 ft (its neighbours pull it by 0.04 % of the drop)."""
    r = load("chain15").main(t_end=0.3, h=0.02)
    to = math.radians(60.0)
    ti = math.atan(0.5 * math.tan(to))
    z_free = -(math.sin(to) + math.sin(ti)) - 0.5 * 32.174 * 0.3 ** 2
    assert r["z_bar13"] == pytest.approx(z_free, abs=5e-3)
    assert r["max_out_of_plane"] < 1e-12


def test_fourbar_redundancy_and_motion():
    """Four revolutes in 3-D: 3 dependent equations dropped, refusal with redundant='error', and
    the crank angle at 0.5 s equal to the planar DAE reference (-160.081060 deg, solve_ivp
    DOP853 at rtol 1e-12 in validation/case_r6.py) within 1e-3 deg."""
    r = load("fourbar").main(t_end=0.5)
    assert r["n_redundant"] == 3
    assert r["refused"]
    assert r["crank_angle_deg"] == pytest.approx(-160.081060, abs=1e-3)


def test_flexible_slider_crank_linear_rod_first_maximum(tmp_path):
    """X3 with the linear modal rod over 1 rad of crank: first maximum of the mid-point deflection
    0.0110 L (the published linear modal value) at about 0.72 rad; the plot and the ParaView files are written."""
    r = load("flexible_slider_crank").main(stiffening="none", angle=1.0, plot=tmp_path / "c.png", paraview=tmp_path / "pv")
    assert r["first_max"] == pytest.approx(0.0110, rel=0.03)
    assert 0.6 < r["first_max_angle"] < 0.85
    assert (tmp_path / "c.png").stat().st_size > 0 and r["pvd"].is_file()


def test_sweep_slider_crank_deflection_grows_with_omega_squared():
    """Serial sweep of the linear rod at 90 and 124.8 rad/s: the first maximum grows at least as
    Omega^2 (quasi-static inertial load) and less than Omega^3.5 (measured exponent 2.8 with the
    dynamic amplification)."""
    pytest.importorskip("pandas")
    r = load("sweep_slider_crank").main(omegas=(90.0, 124.8), stiffening="none", scheduler="sync")
    assert r["n_ok"] == 2
    assert r["table"]["first_max"].tolist() == pytest.approx([0.004475, 0.011059], rel=2e-3)
    assert 2.0 < r["growth"] < 3.5


def test_nfourbar_follows_the_exact_motion_through_flat_positions(tmp_path):
    """IFToMM A02, N = 2: the exact crank angle is a pendulum equation (validation case I2); in 2 s
    the cranks pass the horizontal twice; p = 3, h = 0.05 s: B0 error 9.7e-8 m, energy 3.0e-6 J."""
    r = load("nfourbar").main(n=2, t_end=2.0, h=0.05, plot=tmp_path / "b0.png")
    assert r["dependent_equations"] == 6
    assert r["b0_error"] < 5e-7
    assert r["energy_error"] < 1e-5
    assert (tmp_path / "b0.png").stat().st_size > 0


def test_bricard_drops_one_equation_and_swings_to_pi():
    """IFToMM A04: one dependent equation; from rest, hinge 1 reaches pi at t = 2.5 s (the 1-DOF
    reference of validation case I4: V(pi) = V(0) by symmetry); energy to ~1e-9 J at h = 0.05 s."""
    r = load("bricard").main(t_end=2.6, h=0.05, plot=None)
    assert len(r["dropped"]) == 1
    assert r["max_hinge1_angle"] == pytest.approx(math.pi, abs=1e-3)
    assert r["energy_error"] < 1e-7


def test_linear_analysis_frequencies():
    """The flexible bar's swing frequency is within 0.5 % of the rigid compound pendulum's (its bending
    lowers it slightly), and so is the static gain of a hinge motor torque to the tip's displacement
    (state_space; measured 0.44 %); the strip's lambda_1 at gamma = 6 within 0.5 % of Wright et al.'s 7.3604."""
    out = load("linear_analysis").main(speeds=6, plot=False)
    assert abs(out["f1"] / out["f_rigid"] - 1) < 5e-3 and out["f2"] > 10 * out["f1"]
    assert abs(out["dc_tip"] / out["dc_rigid"] - 1) < 1e-2
    assert abs(out["lambda6"] / 7.3604 - 1) < 5e-3


def test_struck_chain_rebound_matches_the_apparent_mass():
    """The ball's rebound off the hanging chain: P = (1 + e) v / (1/m_b + K) with K from the chain's
    reduced mass matrix at the struck height (examples/struck_chain.py); the energy balance holds."""
    r = load("struck_chain").main(t_end=0.1)
    assert r["impulse"] == pytest.approx(r["impulse_closed_form"], rel=1e-10)
    assert r["ball_velocity_after"] == pytest.approx(r["ball_velocity_closed_form"], rel=1e-10)
    assert r["energy_balance"] < 1e-6
