"""Energy bookkeeping of spring-loaded conservative models (issue 8, section 2, last bullet).

``Solution.potential_energy`` includes gravity, spring-dampers and the joint springs (revolute
torsional springs, prismatic springs).  A conservative model must then conserve
``total_energy`` to the scheme's accuracy: exactly (round-off) for p = 1 on a linear system
(the implicit midpoint rule conserves quadratic invariants), to the nodal order otherwise.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm


def _torsion(k=40.0, J=0.15, w0=3.0):
    """Rotor with its centre of mass on a revolute axis, torsional spring k: a linear oscillator."""
    b = fm.RigidBody("rotor", mass=2.0, inertia=(0.1, 0.1, J), angular_velocity=(0, 0, w0))
    j = fm.Revolute("r", "ground", "rotor", point=(0, 0, 0), axis=(0, 0, 1), stiffness=k)
    return fm.Model([b], [j], [fm.Gravity((0, 0, -9.81))])


def _slider(k=50.0, m=2.0, v0=1.0):
    """Mass on a vertical prismatic spring under gravity (linear)."""
    b = fm.RigidBody("slider", mass=m, inertia=(0.1, 0.1, 0.15), velocity=(0, 0, v0))
    j = fm.Prismatic("s", "ground", "slider", point=(0, 0, 0), axis=(0, 0, 1), stiffness=k)
    return fm.Model([b], [j], [fm.Gravity((0, 0, -9.81))])


def _spring_pendulum():
    """Nonlinear: a body on a spherical joint, pulled sideways by a spring-damper without damping."""
    b = fm.RigidBody("bob", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.0, -1.0, 0.0))
    j = fm.Spherical("pin", "ground", "bob", point=(0, 0, 0))
    s = fm.SpringDamper("k", "ground", "bob", point_a=(1.0, -1.0, 0.0), point_b=(0.0, 0.0, 0.0),
                        stiffness=30.0, free_length=0.5)
    return fm.Model([b], [j], [fm.Gravity((0, -9.81, 0)), s])


def test_revolute_torsional_spring_energy_is_stored_and_exact_for_p1():
    k, J, w0 = 40.0, 0.15, 3.0
    sol = fm.simulate(_torsion(k, J, w0), 2.0, 0.02, p=1, show_progress=False)
    E0 = 0.5 * J * w0 ** 2
    assert sol.total_energy[0] == pytest.approx(E0, rel=1e-12)
    # the spring holds all the energy at the turning points
    assert sol.potential_energy.max() == pytest.approx(E0, rel=1e-3)
    assert np.abs(sol.total_energy - E0).max() < 1e-10 * E0
    # the implicit midpoint rule on a linear oscillator: exact amplitude w0/W, W = sqrt(k/J), and
    # the discrete frequency (2/h) arctan(W h/2) at the nodes
    W = np.sqrt(k / J)
    Wd = 2.0 / 0.02 * np.arctan(W * 0.02 / 2.0)
    ang = sol.joint("r").rel_rotation[:, 2]
    assert np.abs(ang - w0 / W * np.sin(Wd * sol.t)).max() < 1e-9 * w0 / W


def test_prismatic_spring_energy_is_stored_and_exact_for_p1():
    sol = fm.simulate(_slider(), 2.0, 0.02, p=1, show_progress=False)
    E = sol.total_energy
    assert np.ptp(sol.potential_energy) > 0.5  # spring and gravity exchange energy with motion
    assert np.abs(E - E[0]).max() < 1e-11 * max(abs(E[0]), 1.0)


@pytest.mark.parametrize("p, tol", [(1, 2e-3), (2, 1e-6)])
def test_spring_damper_energy_conserved_to_scheme_accuracy(p, tol):
    sol = fm.simulate(_spring_pendulum(), 2.0, 0.01, p=p, show_progress=False)
    E = sol.total_energy
    assert np.ptp(sol.potential_energy) > 0.5
    assert np.abs(E - E[0]).max() < tol * np.ptp(sol.potential_energy)


def test_joint_spring_energy_would_be_missed_without_it():
    """The spring term is not negligible: kinetic energy alone varies by the full E0."""
    sol = fm.simulate(_torsion(), 1.0, 0.02, p=2, show_progress=False)
    assert np.ptp(sol.kinetic_energy) > 0.9 * sol.total_energy[0]
    assert np.ptp(sol.total_energy) < 1e-8 * sol.total_energy[0]
