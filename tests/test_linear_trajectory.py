"""Frozen-time linearization at a point of a trajectory (issue 19 B): ``fm.linearize(sol, t=...)``.

A swinging pendulum (closed forms: the redundant-coordinate stiffness is the rod tension's lever
``m g l cos(theta) + m l^2 theta'^2``, the independent-coordinate one, with the constraint basis
carried along the motion, ``m g l cos(theta)``; the latter against finite differences of simulate), a
rotor spun by a drive on an elastically supported housing (the inertial-frame whirl frequencies of a
gyroscopic disk), and bad input."""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.linear.trajectory import OperatingPoint, operating_point
from flexmb.validation.cases.case_l5 import driven_on_a_housing

G = 9.81
M_BOB, L_ROD, J_BOB = 1.0, 1.0, 0.05


@lru_cache(maxsize=None)
def swinging_pendulum():
    """A bob (mass 1 kg, 0.05 kg m^2 about its centre) on a rod of 1 m, released at rest 1 rad from the
    vertical; simulate 1 s at h = 2 ms (p = 2)."""
    th0 = 1.0
    bob = fm.RigidBody("bob", mass=M_BOB, inertia=np.full(3, J_BOB), position=(L_ROD * np.sin(th0), -L_ROD * np.cos(th0), 0.0),
                       orientation={"rotvec": (0.0, 0.0, th0)})
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    model = fm.Model([bob], [pin], [fm.Gravity((0.0, -G, 0.0))])
    return fm.simulate(model, 1.0, 0.002, p=2)


def angle_and_rate(sol, t):
    at = sol.at([t])
    x = at.body_position[0, 0]
    return np.arctan2(x[0], -x[1]), at.body_angular_velocity[0, 0, 2]


@pytest.mark.parametrize("t", [0.3, 0.501, 1.0])
def test_swinging_pendulum_stiffness_closed_forms(t):
    """At a node (0.3 s), between nodes (0.501 s) and at the end of the run (one-sided differences):
    ``Z^T K Z / Z^T M Z`` is the lever of the rod tension, (m g l cos th + m l^2 th'^2) / I, to 1e-8
    (the analytic Jacobian at the state); ``Kr / Mr`` with the basis carried along the motion is
    m g l cos th / I, the derivative of I th'' = -m g l sin th, to 2e-4 (three- or four-point
    differences of the basis over one step); ``Cr`` is zero to the same order."""
    sol = swinging_pendulum()
    lin = fm.linearize(sol, t=t)
    assert lin.ndof == 1
    th, thd = angle_and_rate(sol, t)
    I = J_BOB + M_BOB * L_ROD**2
    Z = lin.Z
    frozen = (Z.T @ lin.K @ Z / (Z.T @ lin.M @ Z)).item()
    string = (M_BOB * G * L_ROD * np.cos(th) + M_BOB * L_ROD**2 * thd**2) / I
    assert abs(frozen / string - 1) < 1e-8
    ref = M_BOB * G * L_ROD * np.cos(th) / I
    assert string / ref - 1 > 0.05  # swinging: the two stiffnesses differ by 10 % or more
    assert abs((lin.Kr / lin.Mr).item() / ref - 1) < 2e-4
    assert abs((lin.Cr / lin.Mr).item()) < 2e-4 * np.sqrt(ref)


def test_swinging_pendulum_stiffness_against_simulate():
    """Finite differences of simulate: from the operating point at t = 0.4 s (its model continues the
    motion) and from the same state with the bob turned by eps = 1e-4 rad about the pivot, the
    difference of the angles over 20 ms grows as eps (1 - (Kr / Mr) s^2 / 2 + O(s^3)) (cubic fit, 1e-3)."""
    sol = swinging_pendulum()
    t = 0.4
    point = operating_point(sol, t)
    assert isinstance(point, OperatingPoint)
    lin = fm.linearize(point)
    eps, T, h = 1e-4, 0.02, 2.5e-4
    bob = point.model.bodies[0]
    c, s = np.cos(eps), np.sin(eps)
    turn = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    turned = replace(bob, position=turn @ np.asarray(bob.position), orientation=turn @ np.asarray(bob.orientation),
                     velocity=turn @ np.asarray(bob.velocity))
    runs = [fm.simulate(m, t + T, h, p=3, t0=t) for m in (point.model, replace(point.model, bodies=[turned]))]
    ang = [np.unwrap(np.arctan2(r.body("bob").position[:, 0], -r.body("bob").position[:, 1])) for r in runs]
    d = ang[1] - ang[0]
    tau = runs[0].t - t
    c3, c2, c1, c0 = np.polyfit(tau, d, 3)  # (c3: the stiffness changes along the swing)
    assert abs(c0 / eps - 1) < 1e-6
    assert abs(-2 * c2 / eps / (lin.Kr / lin.Mr).item() - 1) < 1e-3


def test_rotor_spun_by_a_drive_whirl_frequencies_in_the_fixed_frame():
    """A disk (Jp > Jt) driven at 40 rad/s by a revolute on a housing held by isotropic lateral springs
    at z = +-a (case L5): the frozen-time linearization at t = 0.1 s of the simulated motion gives the
    inertial whirls of the gyroscopic rotor, lateral sqrt(2 k / m) (twice) and tilt w_F,B = +-g +
    sqrt(g^2 + k_t / J_t), g = Jp W / 2 J_t (m, J_t: disk and housing), to 1e-9 (for an axisymmetric
    disk the frozen equations are the exact, time-invariant ones), besides four zero modes (axial
    translation, yaw of the assembly)."""
    sol, ref = driven_on_a_housing(40.0)
    res = fm.eigen(fm.linearize(sol, t=0.1))
    w = np.sort(res.frequency[res.kind == "stable"] * 2 * np.pi)
    assert np.allclose(w, np.sort(ref["forward"] + ref["backward"]), rtol=1e-9)
    assert np.sum(res.kind == "zero") == 4


def test_linearize_at_a_point_bad_input(tmp_path):
    sol = swinging_pendulum()
    with pytest.raises(ModelError, match=r"t=1\.5 is outside the solution's time span \[0, 1\]"):
        fm.linearize(sol, t=1.5)
    with pytest.raises(ModelError, match="needs the time of the point"):
        fm.linearize(sol)
    with pytest.raises(ModelError, match="not a time"):
        fm.linearize(sol, t="later")
    eq = fm.equilibrium(sol.model)
    with pytest.raises(ModelError, match="is for a Solution"):
        fm.linearize(eq, t=0.2)
    # the keyword of the first releases still works, and names a double or a missing state
    assert np.allclose(fm.linearize(eq=eq).K.toarray(), fm.linearize(eq).K.toarray())
    with pytest.raises(ModelError, match="not both"):
        fm.linearize(eq, eq=eq)
    with pytest.raises(ModelError, match="no state given"):
        fm.linearize()
    loaded = fm.Solution.load(sol.save(tmp_path / "swing"))
    with pytest.raises(ModelError, match="attach it first"):
        fm.linearize(loaded, t=0.2)



def test_point_of_a_run_at_rest_in_equilibrium_is_the_equilibrium_linearization():
    """A flexible bar (3 modes) on a sprung hinge with a welded tip, simulated from its equilibrium (it
    stays at rest): the linearization at t = 0.02 s of the run (modal coordinates and rates, accumulated
    joint rotations and reactions taken from the solution) has the equilibrium's frequencies (1e-9)."""
    from test_linear import flexible_pendulum

    eq = fm.equilibrium(flexible_pendulum())
    ref = fm.eigen(fm.linearize(eq))
    sol = fm.simulate(eq.model, 0.05, 0.01, p=2)
    res = fm.eigen(fm.linearize(sol, t=0.02))
    assert res.frequency.size == ref.frequency.size and ref.frequency[0] > 0.1
    assert np.allclose(res.frequency, ref.frequency, rtol=1e-9)
