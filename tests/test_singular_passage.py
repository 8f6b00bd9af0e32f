"""Newton through the singular positions of closed loops (issue 8, section 2).

A parallelogram four-bar (cranks 0.5 m, coupler and ground 1 m, 1 kg bars) in the horizontal plane,
gravity out of the plane, cranks at 6 rad/s: with no in-plane load the kinetic energy is constant and,
the coupler translating, so is the crank rate: the exact motion is ``theta(t) = theta0 + 6 t``.  Twice a
turn the cranks are aligned with the coupler and the ground (change points): the in-plane constraint
Jacobian loses a rank (a self-stress along the line), and the Newton matrix of the elements around
that instant has singular values down to 5e-13 (scaled).  Plain Newton then reaches a residual of
round-off (backward error 2e-17) while round-off moves the undetermined multipliers by 1e-5 (scaled)
at every iteration, so the increment test never passed and the step was halved in vain
(p = 2, h = 0.0025 failed at t = 0.26 s).  Newton now accepts an iterate whose residual is at
round-off once the increments stop contracting, and falls back to damped least squares
(:mod:`flexmb.dynamics.rank_deficient`) when it fails outright.

A row of such parallelograms (cranks side by side, couplers between neighbouring crank tips) passes
all its change points at once.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.newton import NewtonOptions, newton_solve
from flexmb.dynamics.linsolve import linear_solver

OMEGA = 6.0  # crank rate [rad/s]
A_CRANK = 0.5  # crank length [m]
B_GROUND = 1.0  # coupler and ground length [m]


def _bar(name, p, q, vp, vq, m=1.0):
    L = np.linalg.norm(q - p)
    ex = (q - p) / L
    ez = np.array([0, 0, 1.0])
    return fm.RigidBody(name, mass=m, inertia=(1e-3, m * L * L / 12, m * L * L / 12), position=(p + q) / 2,
                        orientation=np.column_stack([ex, np.cross(ez, ex), ez]), velocity=(vp + vq) / 2,
                        angular_velocity=np.cross(ex, vq - vp) / L)


def parallelogram_row(theta0_deg: float, n: int = 1) -> fm.Model:
    """``n`` parallelograms side by side in the plane z = 0: cranks ``c0..cn`` pivoted on the ground at
    ``(k b, 0, 0)``, at ``theta0_deg`` and turning at ``OMEGA`` about z; coupler ``pk`` joins the tips
    of cranks ``k-1`` and ``k``.  Gravity along -z.  ``n = 1`` is the four-bar of
    tests/test_redundancy_reselect.py."""
    th = np.radians(theta0_deg)
    e = A_CRANK * np.array([np.cos(th), np.sin(th), 0.0])
    z = np.array([0, 0, 1.0])
    v_tip = OMEGA * np.cross(z, e)
    z0 = np.zeros(3)
    bodies, joints = [], []
    for k in range(n + 1):
        base = np.array([k * B_GROUND, 0.0, 0.0])
        bodies.append(_bar(f"c{k}", base, base + e, z0, v_tip))
        joints.append(fm.Revolute(f"O{k}", "ground", f"c{k}", point=base, axis=z))
    for k in range(1, n + 1):
        p, q = (k - 1) * np.array([B_GROUND, 0, 0]) + e, k * np.array([B_GROUND, 0, 0]) + e
        bodies.append(_bar(f"p{k}", p, q, v_tip, v_tip))
        joints.append(fm.Revolute(f"A{k}", f"c{k - 1}", f"p{k}", point=p, axis=z))
        joints.append(fm.Revolute(f"B{k}", f"p{k}", f"c{k}", point=q, axis=z))
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


def exact_positions(t: np.ndarray, theta0_deg: float, n: int = 1) -> np.ndarray:
    """Centres of mass (nt, nb, 3) of :func:`parallelogram_row` on the exact motion theta0 + OMEGA t."""
    th = np.radians(theta0_deg) + OMEGA * np.asarray(t)
    e = A_CRANK * np.stack([np.cos(th), np.sin(th), 0 * th], axis=1)
    gx = np.array([B_GROUND, 0.0, 0.0])
    cranks = [k * gx + e / 2 for k in range(n + 1)]
    couplers = [(k - 0.5) * gx + e for k in range(1, n + 1)]
    return np.stack(cranks + couplers, axis=1)


def change_times(theta0_deg: float, t_end: float) -> np.ndarray:
    """Times in [0, t_end] where the cranks are aligned with the ground (theta = 0 mod pi)."""
    th0 = np.radians(theta0_deg)
    k = np.arange(np.ceil(th0 / np.pi), np.floor((th0 + OMEGA * t_end) / np.pi) + 1)
    return (k * np.pi - th0) / OMEGA
