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


# ------------------------------------------------------------------------------------- Newton alone
def _linear(A, b):
    import scipy.sparse as sp

    def evaluate(U):
        return A @ U - b, sp.csc_matrix(A)
    return evaluate


def test_roundoff_bouncing_on_a_nearly_singular_matrix_is_converged_in_the_residual():
    """``A = Q diag(1, 1, 1e-14) Q^T``, consistent right-hand side: round-off moves the solution along
    the near-null vector by ~eps / 1e-14 ~ 1e-2 at every Newton step, so the increment test cannot
    pass (plain Newton, ``residual_tol = 0`` and no least squares, fails).  The residual is at round-off
    after the first step: the stall is detected, and the damped least squares from the predictor give
    the well-determined components exactly and leave the near-null one where the predictor had it
    (least-norm change); without least squares the stalled iterate itself is accepted."""
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    A = Q @ np.diag([1.0, 1.0, 1e-14]) @ Q.T
    U_true = np.array([0.3, -0.7, 0.2])
    ev = _linear(A, A @ U_true)
    U0, scale = np.zeros(3), np.ones(3)
    plain = newton_solve(ev, U0, scale, linear_solver("superlu"),
                         NewtonOptions(residual_tol=0.0, least_squares=False))
    assert not plain.converged
    r = newton_solve(ev, U0, scale, linear_solver("superlu"), NewtonOptions())
    assert r.converged and r.message.startswith("converged in least squares") and r.residual < 1e-12
    well = Q[:, :2]  # the determined directions
    assert np.abs(well.T @ (r.U - U_true)).max() < 1e-12
    assert abs(Q[:, 2] @ (r.U - U0)) < 1e-6  # the null component was 0.2 away: left at the predictor's
    alone = newton_solve(ev, U0, scale, linear_solver("superlu"), NewtonOptions(least_squares=False))
    assert alone.converged and alone.message.startswith("converged in the residual") and alone.residual < 1e-14
    assert np.abs(well.T @ (alone.U - U_true)).max() < 1e-13


def test_exactly_singular_consistent_system_takes_the_least_norm_correction():
    """Rank 2 of 3, right-hand side in the range: the LU fails ("exactly singular"), the damped least
    squares from the predictor converges to a solution (residual < 1e-12) whose change from the
    predictor has no component along the null vector in the scaled metric (least norm: the
    dependent direction keeps the predictor's value)."""
    rng = np.random.default_rng(5)
    Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    A = Q @ np.diag([2.0, 0.5, 0.0]) @ Q.T
    A[np.abs(A) < 1e-15] = 0.0
    U0 = np.array([0.1, 0.2, -0.1])
    b = A @ np.array([1.0, -1.0, 0.5])
    r = newton_solve(_linear(A, b), U0, np.ones(3), linear_solver("superlu"), NewtonOptions())
    assert r.converged, r.message
    assert np.abs(A @ r.U - b).max() < 1e-12
    s0 = 1.0 + np.abs(U0)  # the metric of the least-squares solve: scale + |U0|
    null = Q[:, 2]  # A null = 0; in the scaled unknowns y = (U - U0) / s0 the null vector is null / s0
    assert abs((null / s0) @ ((r.U - U0) / s0)) < 1e-9
    assert abs(null @ (r.U - U0)) > 1e-3  # not the same as least norm in the unscaled metric


def test_inconsistent_singular_system_still_fails():
    """Rank 2 of 3 and a right-hand side with a component 1e-3 (of O(1) terms) on the left null
    vector: no solution; the least-squares stationary point is refused (residual 1e-3 > dependent_tol)
    and Newton reports the failure."""
    rng = np.random.default_rng(5)
    Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    A = Q @ np.diag([2.0, 0.5, 0.0]) @ Q.T
    b = A @ np.ones(3) + 1e-3 * Q[:, 2]
    r = newton_solve(_linear(A, b), np.zeros(3), np.ones(3), linear_solver("superlu"), NewtonOptions())
    assert not r.converged and "least squares" in r.message
