"""The node-velocity projection and output recording (issue 6 C; flexmb/dynamics/node/projection.py) give
the results of the previous code path, kept below verbatim: the constraint matrix ``G`` assembled
with Python comprehensions, ``G M^-1 G^T`` as a SciPy product and a fresh ``splu`` at every node.

On a pendulum (point-like bob, 1e-9 kg m^2: the case the projection exists for), a spherical chain,
the redundant four-bar (dropped equations), a driven universal-joint arm and a pendulum on a
deforming flexible interface, every recorded node is recomputed with the previous code: node
velocities, kinetic energies, joint relative velocities, the reaction records and the node
reactions agree to 1e-12 relative (round-off: the factorization is now a Cholesky instead of
SuperLU with COLAMD and partial pivoting), except where the pendulum's conditioning bounds the
round-off of both paths (``MU_REL``, explained there).  Also: the three factorization backends
agree, the projection is the least kinetic-energy change, and singular rows fall back as before.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import flexmb as fm
from flexmb import rotations as rot
from flexmb.dynamics.node.constraints import node_velocities, project_node
from flexmb.dynamics.elements.joints import drive_targets
from flexmb.dynamics.node.reactions import RECORD_WIDTH, node_reactions


# ------------------------------------------------------------------------------ previous code path
def old_velocity_constraint_matrix(cm, st, sel=None):
    """``G`` and its labels for the kept equations of the selection ``sel`` (None: the model's full set)."""
    n = cm.nj
    xa, Ra = cm.att_a.node_pose(cm, st)
    xb, Rb = cm.att_b.node_pose(cm, st)
    RAt = np.swapaxes(Ra, 1, 2)
    d = xb - xa
    Cb = np.zeros((n, 7, 6))
    Ca = np.zeros((n, 7, 6))
    Cb[:, :3, :3] = RAt
    Cb[:, 3:6, 3:] = RAt
    Ca[:, :3, :3] = -RAt
    Ca[:, :3, 3:] = RAt @ rot.skew(d)
    Ca[:, 3:6, 3:] = -RAt
    ncross = rot.cross(Ra[:, :, 0], Rb[:, :, 1])
    Cb[:, 6, 3:] = ncross
    Ca[:, 6, 3:] = -ncross
    cons, univ = (cm.jnt_constrained, cm.jnt_universal) if sel is None else (sel.constrained, sel.universal)
    mask = np.concatenate([cons, univ[:, None]], axis=1)
    jj, cc = np.nonzero(mask)
    row_of = -np.ones((n, 7), dtype=np.int64)
    row_of[jj, cc] = np.arange(jj.size)
    rows, cols, vals = [], [], []
    for att, C in ((cm.att_b, Cb), (cm.att_a, Ca)):
        for m, vcols, B in att.node_velocity_map(cm, st):
            blk = C[m] @ B
            r = np.broadcast_to(row_of[m][:, :, None], blk.shape)
            c = np.broadcast_to(vcols[:, None, :], blk.shape)
            ok = r >= 0
            rows.append(r[ok])
            cols.append(c[ok])
            vals.append(blk[ok])
    G = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(jj.size, cm.nv))
    labels = [(int(j), int(c) if c < 6 else "cross") for j, c in zip(jj, cc)]
    return G, labels


def old_inverse_mass(cm, st):
    rows, cols, vals = [], [], []
    for grp in cm.groups:
        Mi = grp.inverse_mass_blocks(st)
        vc = grp.vel_cols
        rows.append(np.broadcast_to(vc[:, :, None], Mi.shape).reshape(-1))
        cols.append(np.broadcast_to(vc[:, None, :], Mi.shape).reshape(-1))
        vals.append(Mi.reshape(-1))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(cm.nv, cm.nv))


def old_node_velocity(cm, st, sel=None):
    """(w, mu, labels) as computed before (``st.lam`` is zero at every recorded node: gauge reset)."""
    assert not np.any(st.lam)
    w = node_velocities(cm, st, st.pi)
    G, labels = old_velocity_constraint_matrix(cm, st, sel)
    _, rate = drive_targets(cm, np.array([st.t]))
    jl = np.array([j for j, _ in labels])
    cl = np.array([c if isinstance(c, int) else 0 for _, c in labels])
    target = np.where([isinstance(c, int) for _, c in labels], rate[jl, cl, 0], 0.0)
    Mi = old_inverse_mass(cm, st)
    A = (G @ Mi @ G.T).tocsc()
    mu = spla.splu(A).solve(G @ w - target)
    return w - Mi @ (G.T @ mu), mu, labels


def old_record(cm, st, w, mu, labels):
    """Recorder.node's joint part and reactions.node_record as before: (vrel (nj, 6), record)."""
    xa, Ra = cm.att_a.node_pose(cm, st)
    xb, Rb = cm.att_b.node_pose(cm, st)
    nus = []
    for att in (cm.att_a, cm.att_b):
        nu = np.zeros((cm.nj, 6))
        for m, cols, B in att.node_velocity_map(cm, st):
            nu[m] = np.einsum("ndc,nc->nd", B, w[cols])
        nus.append(nu)
    na, nb_ = nus
    RaT = np.swapaxes(Ra, 1, 2)
    sdot = np.einsum("jde,je->jd", RaT, nb_[:, :3] - na[:, :3] - rot.cross(na[:, 3:], xb - xa))
    wr = np.einsum("jde,je->jd", RaT, nb_[:, 3:] - na[:, 3:])
    qdot = np.concatenate([sdot, wr], axis=1)
    jl = np.array([j for j, _ in labels], dtype=np.int64)
    comp = np.array([c if isinstance(c, int) else 6 for _, c in labels], dtype=np.int64)
    loc = np.zeros((cm.nj, 7))
    loc[jl, comp] = mu
    out = np.zeros((cm.nj, RECORD_WIDTH))
    if st.lam_end is not None:
        out[:, 0:6] = st.lam_end
    out[:, 6:9] = -np.einsum("jde,je->jd", Ra, loc[:, :3])
    out[:, 9:12] = -np.einsum("jde,je->jd", Ra, loc[:, 3:6]) - loc[:, 6:7] * rot.cross(Ra[:, :, 0], Rb[:, :, 1])
    out[:, 12:15] = xb
    out[:, 15:24] = Ra.reshape(cm.nj, 9)
    q = np.concatenate([st.s, st.acc], axis=1)
    out[:, 24:30] = -(cm.jnt_k * (q - cm.jnt_ref) + cm.jnt_c * qdot)
    out[:, 30:33] = st.Rr[:, :, 1]
    return qdot, out


# ------------------------------------------------------------------------------ models
def _pendulum():
    from flexmb.validation.cases.case_r1 import pendulum_model

    return pendulum_model(), 1.0, 0.05, 2


def _chain(n=6):
    L, m = 0.3, 0.3
    bodies = [fm.RigidBody(f"bar{k + 1}", mass=m, inertia=(1e-6 * m * L * L, m * L * L / 12, m * L * L / 12),
                           position=((k + 0.5) * L, 0.0, 0.0)) for k in range(n)]
    joints = [fm.Spherical(f"P{k + 1}", "ground" if k == 0 else f"bar{k}", f"bar{k + 1}", point=(k * L, 0.0, 0.0))
              for k in range(n)]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))]), 0.3, 0.01, 1


def _fourbar():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "fourbar.py"
    spec = importlib.util.spec_from_file_location("fourbar_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build_model(), 0.3, 0.01, 3


def _universal_arm():
    """Two bars on a universal joint (cross row) driven about z at the ground revolute (drive rates
    in the right-hand side)."""
    b1 = fm.RigidBody("b1", mass=1.0, inertia=(0.01, 0.05, 0.05), position=(0.25, 0.0, 0.0))
    b2 = fm.RigidBody("b2", mass=0.5, inertia=(0.005, 0.02, 0.02), position=(0.75, 0.0, 0.0), angular_velocity=(0.0, 0.3, 0.0))
    joints = [fm.Revolute("r", "ground", "b1", point=(0, 0, 0), axis=(0, 0, 1), angle=lambda t: 0.5 * t * t),
              fm.Universal("u", "b1", "b2", point=(0.5, 0, 0), axis=(0, 0, 1), axis2=(0, 1, 0))]
    return fm.Model([b1, b2], joints, [fm.Gravity((0, -9.81, 0))]), 0.2, 0.01, 2


@lru_cache(maxsize=None)
def _beam():
    from flexmb.fe.reduction.body_data import build_flexible_body
    from flexmb.fe.mesh import Material
    from flexmb.fe.mesh.structured import structured_box

    mesh = structured_box((1.0, 0.05, 0.05), (6, 1, 1), "hexahedron20", origin=(0.0, -0.025, -0.025),
                          material=Material(E=7e8, nu=0.3, rho=3000.0))
    return build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=3, method="free-free")


def _flexible_pendulum():
    b = fm.FlexibleBody("F", _beam(), stiffening="none", damping=0.0, modes=[0, 1], q0=[1e-3, 5e-4])
    pin = fm.Revolute("pin", "ground", ("F", "xmin"), axis=(0, 0, 1))
    return fm.Model([b], [pin], [fm.Gravity((0, -9.81, 0))]), 0.1, 0.01, 2


MODELS = {"pendulum": _pendulum, "chain": _chain, "fourbar": _fourbar, "universal": _universal_arm,
          "flexible_pendulum": _flexible_pendulum}


def _close(a, b, what, rel=1e-12):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(np.abs(b).max(initial=0.0), 1e-300)
    assert np.abs(a - b).max(initial=0.0) <= rel * scale, (what, np.abs(a - b).max() / scale)


#: relative tolerance of what depends on the projection multipliers ``mu``.  The pendulum's bob (1 kg, 1e-9
#: kg m^2) makes ``G M^-1 G^T`` ill-conditioned (cond 4e9, also after diagonal scaling): ``mu`` is
#: determined only to about eps x cond = 4e-7 relative, and the old and the new factorization each
#: differ by ~1e-8 from a scaled reference solve (measured); the node reactions then differ by 2.6e-9.
MU_REL = {"pendulum": 1e-16 * 4e9}


def _recorded_run(model, t_end, h, p):
    """A fixed-step run stepped here: its Solution, its recorder, its constraint selection and a copy of
    every recorded node (each step records its end node; no halved steps in these runs)."""
    from flexmb.dynamics.simulate import Run, SimulationOptions
    from flexmb.fe.spd_solve import blas_threads

    def copy(st):
        out = st.copy()
        out.lam_end = None if st.lam_end is None else st.lam_end.copy()
        return out

    with blas_threads(1):
        run = Run.start(model, t_end, h, p, 0.0, SimulationOptions())
        states = [copy(run.st)]
        while not run.done():
            run.step()
            states.append(copy(run.st))
        return run.solution(), run.rec, run.selection, states


@pytest.mark.parametrize("name", list(MODELS))
def test_recorded_nodes_equal_the_previous_code_path(name):
    model, t_end, h, p = MODELS[name]()
    sol, rec, sel, states = _recorded_run(model, t_end, h, p)
    cm = rec.cm
    assert len(states) == sol.t.size and len(rec.imp_t) == sol.t.size  # no halved steps in these runs
    if name == "fourbar":
        assert len(sol.meta["redundant_constraints"]) == 3
    ke, vel, om, vrel, imp, w2max = [], [], [], [], [], 0.0
    for st in states:
        w, mu, labels = old_node_velocity(cm, st, sel)
        qdot, record = old_record(cm, st, w, mu, labels)
        ke.append(sum(g.kinetic_energy(st, w[g.vel_cols]) for g in cm.groups))
        out = [g.frame_output(st, w[g.vel_cols]) for g in cm.groups]
        vel.append(np.concatenate([o[2] for o in out]))
        om.append(np.concatenate([o[3] for o in out]))
        vrel.append(qdot)
        imp.append(record)
        # the new projection satisfies the velocity constraints to round-off of the unprojected velocities
        nv = project_node(cm, st, sel=sel)
        G, _ = old_velocity_constraint_matrix(cm, st, sel)
        w2max = max(w2max, np.abs(nv.w2).max())
        assert np.abs(G @ nv.w - G @ w).max() <= 1e-14 * np.abs(G).max() * max(np.abs(nv.w2).max(), 1.0)
    # velocities: w = w2 - M^-1 G^T mu is known to round-off of w2 (the pendulum's bob removes a 2e7 rad/s
    # excess, 1/J times the O(h^2) momentum defect of the end values, to leave 4 rad/s)
    vabs = 1e-12 * max(np.abs(sol.body_velocity).max(), np.abs(sol.body_angular_velocity).max()) + 1e-14 * w2max
    assert np.abs(sol.body_velocity - np.array(vel)).max() <= vabs
    assert np.abs(sol.body_angular_velocity - np.array(om)).max() <= vabs
    rel = MU_REL.get(name, 1e-12)
    _close(sol.kinetic_energy, ke, "kinetic energy")
    _close(sol.joint_rel_velocity, vrel, "joint relative velocities", rel)
    _close(np.array(rec.imp), imp, "reaction records", rel)
    fn, mn = node_reactions(cm, np.array(rec.imp_t), np.array(imp),
                            np.array(rec.imp_el).reshape(-1, cm.nj, 6 * p - 3), np.array(rec.imp_out) > 0.5, rec.te, sel)
    _close(sol.joint_force, fn, "node reaction forces", rel)
    _close(sol.joint_moment, mn, "node reaction moments", rel)


def _chain_state(n, t_end=0.02, h=0.01):
    """Compiled chain and its end state after a short fall (generic velocities)."""
    from flexmb.dynamics.simulate import Run, SimulationOptions

    model = _chain(n)[0]
    run = Run.start(model, t_end, h, 1, 0.0, SimulationOptions())
    while not run.done():
        run.step()
    return run.cm, run.st


@pytest.mark.parametrize("backend", ["dense", "superlu", "cholmod"])
def test_factorization_backends_agree(backend):
    """Dense LAPACK Cholesky, SuperLU on the cached minimum-degree ordering and CHOLMOD give the same
    projection (the previous code path's) on a 30-link chain (90 rows: above the dense limit); the
    backend is the node projector's option (:func:`flexmb.dynamics.node.projection.node_projector`)."""
    from flexmb.dynamics.node import projection

    if backend == "cholmod" and projection._cholmod() is None:
        pytest.skip("scikit-sparse not installed")
    cm, st = _chain_state(30)
    projection.node_projector(cm, backend=backend)
    nv = project_node(cm, st)
    assert projection.node_projector(cm).factor.backend == backend
    w, mu, _ = old_node_velocity(cm, st)
    assert np.abs(nv.w2 - nv.w).max() > 1e-6 * np.abs(nv.w).max()  # a real correction
    assert np.abs(nv.w - w).max() <= 1e-12 * np.abs(w).max()
    assert np.abs(nv.mu - mu).max() <= 1e-12 * np.abs(mu).max()


def test_projection_is_the_least_kinetic_energy_change_onto_the_constraints():
    """``w`` satisfies ``G w = target`` and ``w - w2`` is M-orthogonal to every admissible velocity
    (the null space of G): ``(w - w2)^T M z = 0`` for ``G z = 0``; the projection impulse handed to
    the bodies as momenta gives the same velocities (``multiplier_momenta(dlam) = -G^T mu``)."""
    import scipy.linalg as sla

    from flexmb.dynamics.node.constraints import multiplier_momenta, node_momenta
    from flexmb.dynamics.node.reactions import projection_impulse

    model = _universal_arm()[0]
    from flexmb.dynamics.simulate import Run, SimulationOptions

    run = Run.start(model, 0.05, 0.01, 2, 0.0, SimulationOptions())
    while not run.done():
        run.step()
    cm, st = run.cm, run.st
    nv = project_node(cm, st)
    G, labels = old_velocity_constraint_matrix(cm, st)
    _, rate = drive_targets(cm, np.array([st.t]))
    target = np.array([rate[j, c, 0] if isinstance(c, int) else 0.0 for j, c in labels])
    assert abs(target[labels.index((0, 5))] - st.t) < 1e-12  # the drive's rate, angle t^2 / 2
    assert np.abs(G @ nv.w - target).max() < 1e-12
    Z = sla.null_space(G.toarray())
    dp = node_momenta(cm, st, nv.w - nv.w2)
    assert np.abs(Z.T @ dp).max() < 1e-12 * np.abs(dp).max()
    dlam = projection_impulse(cm, st, nv.mu, nv.labels)
    w_imp = node_velocities(cm, st, nv.p + multiplier_momenta(cm, st, dlam))
    assert np.abs(w_imp - nv.w).max() < 1e-12 * np.abs(nv.w).max()


@pytest.mark.parametrize("backend", ["dense", "superlu", "cholmod"])
def test_singular_rows_fall_back_as_before(backend):
    """Dependent rows (a singular ``G M^-1 G^T``): every backend takes the least-norm solve (the dense
    Cholesky declines a semi-definite matrix, a zero eigenvalue, tests/test_singular_passage.py; CHOLMOD's
    and SuperLU's pivots are checked against SINGULAR_PIVOT the same way; before, the sparse backends gave
    no projection at the nodes, or an LU solve with ~1e16 along the null space); a regular matrix is
    solved."""
    from flexmb.dynamics.node import projection

    if backend == "cholmod" and projection._cholmod() is None:
        pytest.skip("scikit-sparse not installed")
    n = 3
    rows, cols = np.divmod(np.arange(n * n), n)
    f = projection._SpdFactor(n, rows, cols, backend)
    assert f.backend == backend

    def data(A):  # values in the factor's storage
        return np.bincount(f.slot, A[rows, cols], minlength=f.size)

    singular = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    b = np.array([1.0, 1.0, 4.0])
    assert np.allclose(f.solve(data(singular), b), [0.5, 0.5, 2.0], atol=1e-10)
    x = f.solve(data(singular), b, singular="lsqr")
    assert np.allclose(x, [0.5, 0.5, 2.0], atol=1e-10)  # minimum-norm least squares
    regular = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.0], [0.5, 0.0, 2.0]])
    assert np.allclose(f.solve(data(regular), b), np.linalg.solve(regular, b), rtol=1e-14)


@pytest.mark.parametrize("backend", ["cholmod", "superlu"])
def test_sparse_backends_take_the_least_norm_solution_of_a_singular_matrix(backend):
    """Above DENSE_ROWS rows, a singular G M^-1 G^T (a dependent row: a self-stress) gets the dense
    backend's least-norm solution (nothing along the null space), not an LU solve that puts ~1e16 there:
    CHOLMOD's and SuperLU's pivots are checked against SINGULAR_PIVOT like the dense Cholesky's."""
    import flexmb.dynamics.node.projection as P

    if backend == "cholmod" and P._cholmod() is None:
        pytest.skip("scikit-sparse not installed")
    rng = np.random.default_rng(3)
    n = P.DENSE_ROWS + 60
    G = np.eye(n, 3 * n) + (rng.random((n, 3 * n)) < 0.03) * rng.standard_normal((n, 3 * n))
    G[-1] = G[0] + G[1]  # a self-stress: e_{n-1} - e_0 - e_1
    A = G @ G.T
    rows, cols = np.nonzero(A)
    f = P._SpdFactor(n, rows, cols, backend)
    assert f.backend == backend
    data = np.zeros(f.size)
    np.add.at(data, f.slot, A[rows, cols])
    b = A @ rng.standard_normal(n)  # consistent
    x = f.solve(data, b)
    assert np.abs(A @ x - b).max() < 1e-10 * np.abs(b).max()
    np.testing.assert_allclose(x, P._least_norm(A, b), rtol=0, atol=1e-10 * np.abs(x).max())


def test_an_unknown_projection_backend_is_refused_by_name():
    """The node projector's backend option names the value and the choices (no silent fallback)."""
    from flexmb.dynamics.node import projection

    cm, _ = _chain_state(2)
    with pytest.raises(ValueError, match=r"backend='lu'.*auto, dense, cholmod, superlu"):
        projection.node_projector(cm, backend="lu")
    assert projection.node_projector(cm, backend="superlu").factor.backend in ("dense", "superlu")
    assert projection.node_projector(cm).backend == "superlu"  # kept for the model's later projections
