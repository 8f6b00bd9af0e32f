"""Fast rotations: a body turning by more than ~1 rad per time element on a joint.

The joint's rotation equation ``axial((Rr1 exp phi)^T R_A^T R_B) = 0`` is a sine of the mismatch
between the joint's relative rotation ``phi`` and its bodies': Newton overshoots from mismatches
beyond ~1.17 rad and the equation also holds at a half-turn mismatch and at ``phi`` off by 2 pi.
Before the cold predictor set ``phi`` consistently with the bodies' predicted rotations (it left it at
zero), a rotor at 150 rad/s on a sprung revolute at p = 3, h = 8e-3 (1.2 rad per element) converged
on those roots (8.7 rad of angle error, 950 J of spurious energy) and the heavy top at h = 0.01
failed at 0.52 s after 101 halvings.  Now both run in 2-3 Newton iterations per element, and roots
off the motion are refused (``dynamics.root_checks``).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
import flexmb.dynamics.march.marching as marching
from step_stages import simulate_with
from flexmb.dynamics.layout import JPHI
from flexmb.validation.cases import case_r7 as r7

SPIN = 150.0  # rad/s
J_AXIAL = 0.5  # kg m^2
K_SPRING = 100.0  # N m / rad


def sprung_rotor() -> fm.Model:
    rotor = fm.RigidBody("rotor", mass=1.0, inertia=(0.3, 0.3, J_AXIAL), angular_velocity=(0, 0, SPIN))
    pin = fm.Revolute("pin", "ground", "rotor", point=(0, 0, 0), axis=(0, 0, 1), stiffness=K_SPRING)
    return fm.Model([rotor], [pin], [])


def rotor_angle_error(sol: fm.Solution) -> float:
    wn = np.sqrt(K_SPRING / J_AXIAL)
    return float(np.abs(sol.joint_rel_rotation[:, 0, 2] - SPIN / wn * np.sin(wn * sol.t)).max())


@pytest.mark.parametrize("h", [0.008, 0.015])
def test_sprung_rotor_at_large_turns_per_element(h):
    """1.2 and 2.25 rad per element: the exact angle (SPIN / wn) sin(wn t) to 1e-6 rad, the energy to
    1e-9 of its 5,600 J, at most 2 Newton iterations per element after the first."""
    sol = fm.simulate(sprung_rotor(), 0.5, h, p=3, show_progress=False)
    assert rotor_angle_error(sol) < 1e-6
    E = sol.kinetic_energy + sol.potential_energy
    assert np.ptp(E) < 1e-9 * E[0]
    assert sol.stats["iterations"][1:].max() <= 2


def test_roots_off_the_motion_are_refused():
    """With the former cold predictor (``phi`` = 0 while the bodies turn by 1.2 rad) Newton reaches the
    rotation equation's half-turn root; the end-node check refuses it and the halved step resolves
    the motion.  Without the check (FLIP_CHECK off) the run completes 8.7 rad wrong: this test fails."""
    predict = marching.predict

    def phi_zero_when_cold(cm, lay, te, st, h, w, prev):
        U = predict(cm, lay, te, st, h, w, prev)
        if prev is None or abs(prev.h - h) > 1e-12 * h:
            lay.joint_view(U)[..., JPHI:JPHI + 3] = 0.0
        return U

    sol = simulate_with(sprung_rotor(), 0.5, 0.008, 3, predict=phi_zero_when_cold)
    assert rotor_angle_error(sol) < 1e-6


def test_heavy_top_at_one_and_a_half_rad_per_element():
    """The heavy top of Bruls & Cardona (2010), validation case R7 (15 kg, spin 150 rad/s, spherical
    joint at the pivot).  p = 3 at h = 0.01 (1.5 rad of spin per element) and 0.005: the centre of mass within 1e-4 /
    1e-6 m of the reference over 1 s, nodal order >= 5 (2p = 6), no halving, pivot exact."""
    ref = r7.reference(1.0)  # Euler's equations of the same top (validation case R7)
    X = np.array(r7.X_COM)
    err = {}
    for h in (0.01, 0.005):
        sol = fm.simulate(r7.top_model(), 1.0, h, p=3, show_progress=False)
        com = np.einsum("tij,j->ti", sol.body_rotation[:, 0], X)
        com_ref = np.array([ref.sol(t)[:9].reshape(3, 3) @ X for t in sol.t])
        err[h] = np.abs(com - com_ref).max()
        assert np.abs(sol.body_position[:, 0]).max() < 1e-12
        assert sol.stats["iterations"].mean() < 3.5 and len(sol.t) == round(1.0 / h) + 1
    assert err[0.01] < 1e-4 and err[0.005] < 1e-6
    assert np.log2(err[0.01] / err[0.005]) >= 5.0


def carrier_with_rotor(spin_carrier: float, spin_rotor: float) -> fm.Model:
    """A carrier on a revolute about z, a rotor on it at (0.5, 0, 0) on a revolute about x; no gravity."""
    carrier = fm.RigidBody("carrier", mass=5.0, inertia=(0.2, 0.5, 0.6), angular_velocity=(0, 0, spin_carrier))
    rotor = fm.RigidBody("rotor", mass=1.0, inertia=(0.02, 0.01, 0.01), position=(0.5, 0, 0),
                         velocity=(0, 0.5 * spin_carrier, 0), angular_velocity=(spin_rotor, 0, spin_carrier))
    joints = [fm.Revolute("c", "ground", "carrier", point=(0, 0, 0), axis=(0, 0, 1)),
              fm.Revolute("r", "carrier", "rotor", point=(0.5, 0, 0), axis=(1, 0, 0))]
    return fm.Model([carrier, rotor], joints, [])


def test_failed_extrapolation_retried_from_the_constant_velocity_guess(caplog):
    """Rotor at 150 rad/s on a carrier at 50 rad/s, p = 3, h = 0.01 (1.5 rad per element): Newton from
    the extrapolated guess fails in 16 of 50 elements (each was halved); retried from the constant-
    velocity guess it converges in all.  The axisymmetric rotor keeps its spin relative to the
    carrier (Euler: J_x w_x' = (J_y - J_z) w_y w_z = 0), so its angle is 150 t; energy is conserved."""
    with caplog.at_level("INFO", logger="flexmb"):
        sol = fm.simulate(carrier_with_rotor(50.0, 150.0), 0.5, 0.01, p=3, show_progress=False)
    assert not [r for r in caplog.records if "halving the step" in r.getMessage()]
    assert [r for r in caplog.records if "constant-velocity guess" in r.getMessage()]
    assert abs(sol.joint_rel_rotation[-1, 1, 2] - 75.0) < 5e-3  # 2.5e-3: the order-6 error at 1.5 rad/element
    E = sol.kinetic_energy
    assert np.ptp(E) < 1e-4 * E[0]
