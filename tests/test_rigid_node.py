"""The compiled node work of rigid-only models (flexmb/dynamics/rigid/node.py) gives the general path's
results to round-off: frames, multiplier momenta, joint rates, ``G M^-1 G^T`` and the projected
velocities at a node, and whole runs (positions to 1e-12 relative).  The general path stays in use
for models with another body type (here: a flexible body) and is what ``ENABLED = False`` runs.

The projection against an independent reference (the code path before issue 6) is
``tests/test_node_projection.py``, which runs through the compiled path for its rigid models.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.node import projection as P
from flexmb.dynamics.rigid import march as rigid_march, node as rigid_node
from flexmb.dynamics.simulate import Run, SimulationOptions


def _chain(n=4, ground_on_b=False):
    """A spherical chain with the ground as side A of the first joint (or side B, reversed), a
    universal joint and a revolute in the middle (cross row, several rows per body)."""
    L, m = 0.3, 0.3
    bodies = [fm.RigidBody(f"bar{k + 1}", mass=m, inertia=(1e-3 * m * L * L, m * L * L / 12, m * L * L / 12),
                           position=((k + 0.5) * L, 0.0, 0.0), angular_velocity=(0.1 * k, 0.2, 0.0))
              for k in range(n)]
    first = fm.Spherical("P1", "bar1", "ground", point=(0, 0, 0)) if ground_on_b else \
        fm.Spherical("P1", "ground", "bar1", point=(0, 0, 0))
    joints = [first, fm.Universal("U2", "bar1", "bar2", point=(L, 0, 0), axis=(0, 0, 1), axis2=(0, 1, 0)),
              fm.Revolute("R3", "bar2", "bar3", point=(2 * L, 0, 0), axis=(0, 1, 0))]
    joints += [fm.Spherical(f"P{k + 1}", f"bar{k}", f"bar{k + 1}", point=(k * L, 0, 0)) for k in range(3, n)]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


def _run(model, t_end, h, p, enabled, monkeypatch):
    monkeypatch.setattr(rigid_node, "ENABLED", enabled)
    return fm.simulate(model, t_end, h, p=p)


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("ground_on_b", [False, True])
@pytest.mark.parametrize("p", [1, 2])
def test_runs_equal_the_general_path(ground_on_b, p, monkeypatch):
    model = _chain(ground_on_b=ground_on_b)
    gen = _run(model, 0.1, 0.01, p, False, monkeypatch)
    fast = _run(model, 0.1, 0.01, p, True, monkeypatch)
    assert _rel(fast.body_position, gen.body_position) <= 1e-12
    assert _rel(fast.body_rotation, gen.body_rotation) <= 1e-12
    # output velocities and reactions: through the projection (cond(G M^-1 G^T) ~ 1e3 here)
    for what in ("body_velocity", "body_angular_velocity", "joint_rel_velocity", "joint_force", "joint_moment",
                 "kinetic_energy", "potential_energy"):
        assert _rel(getattr(fast, what), getattr(gen, what)) <= 1e-11, what


def test_node_pieces_equal_the_general_path():
    model = _chain(5)
    run = Run.start(model, 1.0, 0.01, 2, 0.0, SimulationOptions())
    for _ in range(3):
        run.step()
    cm, st = run.cm, run.st
    cm.__dict__.pop("_rigid_node", None)
    rn = rigid_node.rigid_node(cm)
    assert rn is not None
    fr = P.NodeFrames(cm, st)
    assert fr.rigid is rn
    xa, Ra = cm.att_a.node_pose(cm, st)
    xb, Rb = cm.att_b.node_pose(cm, st)
    for a, b in ((fr.xa, xa), (fr.Ra, Ra), (fr.xb, xb), (fr.Rb, Rb)):
        assert _rel(a, b) <= 1e-15
    rng = np.random.default_rng(3)
    lam = rng.standard_normal((cm.nj, 6))
    w = rng.standard_normal(cm.nv)
    # the general formulas on the same frames (the velocity maps are built on request)
    fr.rigid = None
    gen_lam = P.generalized(cm, fr, lam)
    gen_rates = P.joint_rates(fr, P.attachment_velocities(fr.map_a, w, cm.nj),
                              P.attachment_velocities(fr.map_b, w, cm.nj))
    proj = P.node_projector(cm)
    Mi = P.inverse_mass_blocks(cm, st)
    gen_A = proj.matrix_values(cm, st, fr, Mi).reshape(proj.n, proj.n)
    gen_w, gen_mu, _ = proj.project(cm, st, P.apply_blocks(cm, Mi, w), fr, Mi=Mi)
    fr.rigid = rn
    Ji = rn.inverse_mass(st)
    assert _rel(rn.generalized(fr, lam), gen_lam) <= 1e-15
    assert _rel(rn.rates(fr, w), gen_rates) <= 1e-15
    assert _rel(rn.gram(fr, Ji, proj.jj, proj.cc), gen_A) <= 1e-14
    fast_w, _, fast_mu, _ = proj.project_rigid(cm, st, w, fr)
    assert _rel(fast_mu, gen_mu) <= 1e-12 and _rel(fast_w, gen_w) <= 1e-13
    # the compiled Cholesky declining (here: every pivot "too small"): the factor's solve, same result
    fb_w, _, fb_mu, fb_loc = proj.project_rigid(cm, st, w, fr, tol=2.0)
    assert _rel(fb_mu, gen_mu) <= 1e-12 and _rel(fb_w, gen_w) <= 1e-13
    assert np.array_equal(fb_loc[proj.jj, proj.cc], fb_mu)


def test_other_body_types_keep_the_general_path():
    from flexmb.fe.reduction.body_data import build_flexible_body
    from flexmb.fe.mesh import Material
    from flexmb.fe.mesh.structured import structured_box
    from flexmb.dynamics.system import compile_model

    mesh = structured_box((1.0, 0.05, 0.05), (4, 1, 1), "hexahedron20", origin=(0.0, -0.025, -0.025),
                          material=Material(E=7e8, nu=0.3, rho=3000.0))
    data = build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=2, method="free-free")
    b = fm.FlexibleBody("F", data, stiffening="none", damping=0.0)
    model = fm.Model([b], [fm.Revolute("pin", "ground", ("F", "xmin"), axis=(0, 0, 1))], [])
    assert rigid_node.rigid_node(compile_model(model)) is None
    assert rigid_node.rigid_node(compile_model(_chain())) is not None


def test_end_values_equal_the_general_path(monkeypatch):
    from flexmb.dynamics.march import marching

    model = _chain(5)
    run = Run.start(model, 1.0, 0.01, 2, 0.0, SimulationOptions())
    run.step()
    cm, lay, te, st = run.cm, run.system.lay, run.te, run.st
    U = marching.predict(cm, lay, te, st, 0.01, run.w, run.prev)
    U = U + 1e-3 * np.random.default_rng(5).standard_normal(U.size)  # multipliers and all: a generic point
    fast = marching.end_values(cm, lay, te, st, 0.01, U)
    monkeypatch.setattr(rigid_node, "ENABLED", False)
    gen = marching.end_values(cm, lay, te, st, 0.01, U)
    for k in ("x", "R", "pi", "s", "Rr", "lam", "acc", "lam_end"):
        assert _rel(getattr(fast, k), getattr(gen, k)) <= 1e-14 if np.any(getattr(gen, k)) else \
            not np.any(getattr(fast, k)), k
    assert fast.t == gen.t
    # a rotation far from orthonormal: the kernel declines, the general path takes the SVD
    monkeypatch.setattr(rigid_node, "ENABLED", True)
    st_bad = st.copy()
    st_bad.R = st.R * 1.7
    assert rigid_march.end_node(rigid_node.rigid_node(cm), cm, lay, te, st_bad, 0.01, U, marching._POLAR_NEAR,
                                marching._POLAR_FAR) is None
    R = marching.end_values(cm, lay, te, st_bad, 0.01, U).R
    assert np.abs(np.swapaxes(R, 1, 2) @ R - np.eye(3)).max() <= 1e-14


def test_cholesky_solve_declines_singular_matrices():
    rng = np.random.default_rng(7)
    B = rng.standard_normal((6, 6))
    A = B @ B.T + 0.1 * np.eye(6)
    b = rng.standard_normal(6)
    x = np.empty(6)
    assert rigid_node.cholesky_solve(A, b, P.SINGULAR_PIVOT, x)
    assert np.abs(x - np.linalg.solve(A, b)).max() <= 1e-12 * np.abs(x).max()
    G = rng.standard_normal((6, 4))
    assert not rigid_node.cholesky_solve(G @ G.T, b, P.SINGULAR_PIVOT, x)  # rank 4: the general path decides
    C = np.array([[1.0, 1.0 - 1e-14], [1.0 - 1e-14, 1.0]])  # second pivot^2 2e-14 of its diagonal
    assert not rigid_node.cholesky_solve(C, b[:2], P.SINGULAR_PIVOT, np.empty(2))
    assert P._numerically_singular(C, np.linalg.cholesky(C))  # the general path's criterion agrees
