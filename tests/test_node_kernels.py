"""The compiled node and marching work, for every body type (flexmb/dynamics/node/kernels.py,
flexmb/dynamics/march/kernels.py, flexmb/dynamics/bodies/rigid_kernels.py): the projection's matrix is
``G M^-1 G^T`` of the assembled constraint matrix, the projected velocities satisfy the constraints
and are the least kinetic-energy change (KKT conditions), the multipliers' momenta are ``G^T``-consistent,
the end values follow the time element's end row, and a Cholesky that meets a singular matrix declines.
The projection against the code path before issue 6: tests/test_node_projection.py."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.march import marching
from flexmb.dynamics.node import kernels as nk
from flexmb.dynamics.node import projection as P
from flexmb.dynamics.node.constraints import velocity_constraint_matrix
from flexmb.dynamics.simulate import Run, SimulationOptions


def _chain(n=4, ground_on_b=False):
    """A spherical chain with the ground as side A of the first joint (or side B, reversed), a
    universal joint and a revolute in the middle (cross row, several rows per body)."""
    L, m = 0.3, 0.3
    bodies = [fm.RigidBody(f"bar{k + 1}", mass=m, inertia=(1e-3 * m * L * L, m * L * L / 12, m * L * L / 12),
                           position=((k + 0.5) * L, 0.0, 0.0), angular_velocity=(0.1 * k, 0.2, 0.0),
                           com=(0.01 * k, 0.0, 0.0))
              for k in range(n)]
    first = fm.Spherical("P1", "bar1", "ground", point=(0, 0, 0)) if ground_on_b else \
        fm.Spherical("P1", "ground", "bar1", point=(0, 0, 0))
    joints = [first, fm.Universal("U2", "bar1", "bar2", point=(L, 0, 0), axis=(0, 0, 1), axis2=(0, 1, 0)),
              fm.Revolute("R3", "bar2", "bar3", point=(2 * L, 0, 0), axis=(0, 1, 0))]
    joints += [fm.Spherical(f"P{k + 1}", f"bar{k}", f"bar{k + 1}", point=(k * L, 0, 0)) for k in range(3, n)]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


def _node(model, steps=3):
    run = Run.start(model, 1.0, 0.01, 2, 0.0, SimulationOptions())
    for _ in range(steps):
        run.step()
    return run


def _dense_inverse_mass(cm, st):
    Mi = np.zeros((cm.nv, cm.nv))
    for grp in cm.groups:
        blocks = grp.inverse_mass_blocks(st)
        for k in range(grp.n):
            c = grp.vel_cols[k]
            Mi[np.ix_(c, c)] = blocks[k]
    return Mi


@pytest.mark.parametrize("ground_on_b", [False, True])
def test_projection_is_the_least_kinetic_energy_change(ground_on_b):
    """At a node of a moving chain: ``matrix_values`` is ``G M^-1 G^T`` of the assembled ``G``, the
    multipliers' momenta are ``G^T mu`` (``generalized`` of ``joint_wrench``), and the projected
    velocities satisfy ``G w = 0`` with ``w - w2 = -M^-1 G^T mu`` (the KKT conditions of the least
    kinetic-energy change)."""
    run = _node(_chain(5, ground_on_b))
    cm, st = run.cm, run.st
    fr = P.node_frames(cm, st)
    G, labels = velocity_constraint_matrix(cm, st)
    G = G.toarray()
    Mi = _dense_inverse_mass(cm, st)
    proj = P.node_projector(cm)
    assert proj.labels == labels
    A = proj.factor.dense(proj.matrix_values(cm, st, fr, P.inverse_mass_blocks(cm, st)))
    assert np.abs(A - G @ Mi @ G.T).max() <= 1e-13 * np.abs(A).max()
    rng = np.random.default_rng(3)
    mu = rng.standard_normal(proj.n)
    loc = np.zeros((cm.nj, 7))
    loc[proj.jj, proj.cc] = mu
    assert np.abs(P.generalized(cm, fr, P.joint_wrench(fr, loc)) - G.T @ mu).max() <= 1e-13 * np.abs(G.T @ mu).max()
    p = rng.standard_normal(cm.nv)
    w, w2, mu, loc = proj.project_momenta(cm, st, p, fr)
    assert np.abs(w2 - Mi @ p).max() <= 1e-12 * np.abs(w2).max()
    assert np.abs(G @ w).max() <= 1e-12 * np.abs(G @ w2).max()
    assert np.abs((w - w2) + Mi @ G.T @ mu).max() <= 1e-12 * np.abs(w - w2).max()
    # the compiled Cholesky declining (every pivot "too small"): the factor's solve, the same result
    fb_w, _, fb_mu, fb_loc = proj.project_momenta(cm, st, p, fr, tol=2.0)
    assert np.abs(fb_mu - mu).max() <= 1e-10 * np.abs(mu).max() and np.abs(fb_w - w).max() <= 1e-12 * np.abs(w).max()
    assert np.array_equal(fb_loc[proj.jj, proj.cc], fb_mu)


def test_end_values_follow_the_end_row():
    """End values of bodies and joints: ``y2 = e0 y1 + e . Y`` for positions, momenta, relative positions
    and multipliers; rotations ``exp(theta_2) R1``, ``Rr1 exp(phi_2)`` (orthonormal); the gauge reset
    hands the end multipliers to the bodies (``pi + Lambda``, ``lambda = 0``)."""
    from flexmb import rotations as rot

    run = _node(_chain(4), 1)
    cm, lay, te, st = run.cm, run.system.lay, run.te, run.st
    U = marching.predict(cm, lay, te, st, 0.01, run.w, run.prev)
    U = U + 1e-3 * np.random.default_rng(5).standard_normal(U.size)
    new = marching.end_values(cm, lay, te, st, 0.01, U)
    grp = cm.groups[0]
    Ug = lay.group_view(U, grp.bodies, grp.slots)
    Jv = lay.joint_view(U)
    e0, e = te.end[0], te.end[1:]
    end = lambda y1, Y: e0 * y1 + np.einsum("j,bjd->bd", e, Y)  # noqa: E731
    assert np.abs(new.x - end(st.x, Ug[..., 0:3])).max() <= 1e-15
    assert np.abs(new.R - rot.exp(np.einsum("j,bjd->bd", e, Ug[..., 3:6])) @ st.R).max() <= 1e-14
    assert np.abs(new.s - end(st.s, Jv[..., 0:3])).max() <= 1e-15
    phi = np.einsum("j,bjd->bd", e, Jv[..., 3:6])
    assert np.abs(new.Rr - st.Rr @ rot.exp(phi)).max() <= 1e-14 and np.abs(new.acc - (st.acc + phi)).max() <= 1e-15
    lam = end(st.lam, Jv[..., 6:12])
    assert np.abs(new.lam_end - lam).max() <= 1e-15 and not new.lam.any()
    pi = end(st.pi.reshape(cm.nb, 6), Ug[..., 6:12]).reshape(-1)
    G, _ = velocity_constraint_matrix(cm, new)
    assert np.abs(new.pi - pi - P.generalized(cm, P.node_frames(cm, new), lam)).max() <= 1e-15 * max(1.0, np.abs(pi).max())
    for R in (new.R, new.Rr):
        assert np.abs(np.swapaxes(R, 1, 2) @ R - np.eye(3)).max() <= 1e-15


def test_far_rotations_go_to_the_svd():
    """A rotation far from orthonormal: the compiled polar iteration declines, the SVD takes it."""
    R = np.stack([np.eye(3), 1.7 * np.eye(3), np.full((3, 3), np.nan)])
    X = marching._orthonormalize(R)
    assert np.array_equal(X[0], np.eye(3)) and np.allclose(X[1], np.eye(3), atol=1e-15)
    assert np.isnan(X[2]).all()


def test_cholesky_solve_declines_singular_matrices():
    rng = np.random.default_rng(7)
    B = rng.standard_normal((6, 6))
    A = B @ B.T + 0.1 * np.eye(6)
    b = rng.standard_normal(6)
    x = np.empty(6)
    assert nk.cholesky_solve(A, b, P.SINGULAR_PIVOT, x)
    assert np.abs(x - np.linalg.solve(A, b)).max() <= 1e-12 * np.abs(x).max()
    G = rng.standard_normal((6, 4))
    assert not nk.cholesky_solve(G @ G.T, b, P.SINGULAR_PIVOT, x)  # rank 4: the caller decides
    C = np.array([[1.0, 1.0 - 1e-14], [1.0 - 1e-14, 1.0]])  # second pivot^2 2e-14 of its diagonal
    assert not nk.cholesky_solve(C, b[:2], P.SINGULAR_PIVOT, np.empty(2))
    assert P._numerically_singular(C, np.linalg.cholesky(C))  # the factor's criterion agrees
