"""Modal reduction: orthonormality, rigid-body modes, Craig-Bampton exactness, invariants, geometric stiffness."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from flexmb.fe.elements import assembly as fe
from flexmb.fe import reduction as red
from flexmb.errors import ModelError
from flexmb.fe.mesh import FEMesh, Material
from flexmb.fe.reduction import Interface
from flexmb.fe.spd_solve import _openblas_handles, blas_threads, cholmod_available, factorize_spd
from flexmb.validation.cases.case_f1 import structured_box  # noqa: E402

STEEL = Material(210e9, 0.3, 7850.0, "steel")


@pytest.fixture(scope="module")
def beam():
    """Slender hex20 beam 1 x 0.1 x 0.05 m along x with node sets root/tip, and its K, M, Ms."""
    mesh = structured_box((1.0, 0.1, 0.05), (10, 2, 1), "hexahedron20", material=STEEL)
    Ms = fe.assemble_scalar_mass(mesh)
    return mesh, fe.assemble_stiffness(mesh), sp.csr_matrix(sp.kron(Ms, sp.eye(3))), Ms


def _orthonormal(basis, K, M, tol=1e-9):
    P = basis.shapes
    assert np.abs(P.T @ (M @ P) - np.eye(basis.n_modes)).max() < tol
    Kr = P.T @ (K @ P)
    assert np.abs(Kr - np.diag(basis.omega2)).max() < tol * basis.omega2.max()
    assert np.all(np.diff(basis.omega2) >= -1e-9 * basis.omega2.max())


# ---------------------------------------------------------------------------- SPD factorization
@pytest.mark.parametrize("backend", ["splu"] + (["cholmod"] if cholmod_available() else []))
def test_spd_factor_solves(beam, backend):
    _, K, M, _ = beam
    A = K + 1e3 * M
    f = factorize_spd(A, backend=backend)
    b = np.random.default_rng(0).standard_normal((A.shape[0], 2))
    x = f.solve(b)
    assert f.backend == backend
    assert np.abs(A @ x - b).max() < 1e-12 * abs(A).max() * np.abs(x).max() * A.shape[0] ** 0.5


def test_spd_factor_rejects_singular(beam):
    _, K, _, _ = beam
    with pytest.raises(ModelError, match="rigid-body motion"):
        factorize_spd(K, what="K")


def test_blas_threads_limits_and_restores():
    handles = _openblas_handles()
    saved = [get() for get, _ in handles]
    for _, set_ in handles:  # a count to restore (the tests run with OPENBLAS_NUM_THREADS=1: conftest)
        set_(2)
    try:
        before = [get() for get, _ in handles]
        assert all(n == 2 for n in before)
        with blas_threads(1):
            assert all(get() == 1 for get, _ in handles)
        assert [get() for get, _ in handles] == before
    finally:
        for (_, set_), n in zip(handles, saved):
            set_(n)


# ---------------------------------------------------------------------------- free-free
def test_free_free_orthonormal_with_six_rigid_modes(beam):
    mesh, K, M, _ = beam
    b = red.free_free_modes(K, M, 8, points=mesh.points)
    _orthonormal(b, K, M)
    assert b.kind == "free-free" and b.rigid_modes.shape[1] == 6 and b.n_extra_zero_modes == 0
    R = b.rigid_modes
    assert np.abs(R.T @ (M @ R) - np.eye(6)).max() < 1e-9  # M-orthonormal rigid modes
    assert np.abs(K @ R).max() < 1e-6 * abs(K).max() * np.abs(R).max()  # strain-free
    assert np.abs(R.T @ (M @ b.shapes)).max() < 1e-9  # elastic modes are mean-axis modes
    zero = np.abs(b.settings["zero_eigenvalues"])
    assert zero.max() < 1e-6 * b.omega2[0]  # the six rigid-body modes at ~0 Hz
    assert b.frequencies[0] > 100.0


def test_free_free_reports_disconnected_parts(beam, caplog):
    mesh, _, _, _ = beam
    two = structured_box((0.3, 0.05, 0.05), (3, 1, 1), "hexahedron", material=STEEL)
    pts = np.vstack([two.points, two.points + [1.0, 0.0, 0.0]])
    conn = two.cells["hexahedron"]
    m2 = FEMesh(points=pts, cells={"hexahedron": np.vstack([conn, conn + len(two.points)])}, materials={"*": STEEL})
    K, M = fe.assemble_stiffness(m2), fe.assemble_mass(m2)
    b = red.free_free_modes(K, M, 3, points=m2.points)
    assert b.n_extra_zero_modes == 6 and b.rigid_modes.shape[1] == 12
    assert "disconnected" in caplog.text
    assert b.frequencies[0] > 1.0
    _orthonormal(b, K, M)


def test_free_free_refuses_constrained_stiffness(beam):
    mesh, K, M, _ = beam
    Kc = K + sp.diags(np.full(K.shape[0], 1e-3 * K.diagonal().mean()))
    with pytest.raises(ModelError, match="constrained"):
        red.free_free_modes(Kc, M, 4, points=mesh.points)


# ---------------------------------------------------------------------------- Craig-Bampton
def test_single_rigid_reference_equals_clamped_modes(beam):
    mesh, K, M, _ = beam
    clamped = red.clamped_modes(K, M, mesh.node_sets["root"], 5)
    cb = red.craig_bampton(K, M, mesh, ["root"], 5)
    assert np.allclose(cb.frequencies, clamped.frequencies, rtol=1e-9)


@pytest.mark.parametrize("kind", ["rigid", "average"])
def test_craig_bampton_orthonormal_and_reference_frame(beam, kind):
    mesh, K, M, _ = beam
    cb = red.craig_bampton(K, M, mesh, ["root", "tip"], 6, interface_kind=kind)
    _orthonormal(cb, K, M)
    assert cb.n_modes == 6 + 6 and cb.reference == "root" and cb.rigid_modes.shape[1] == 0
    root, tip = cb.interface("root"), cb.interface("tip")
    assert root.is_reference and np.all(root.modal_map == 0.0)
    assert tip.modal_map.shape == (6, cb.n_modes) and np.linalg.matrix_rank(tip.modal_map) == 6
    assert np.allclose(root.position, [0.0, 0.05, 0.025]) and np.allclose(tip.position, [1.0, 0.05, 0.025])
    # the reference frame does not move relative to the body: its least-squares motion is zero
    A = red.averaging_operator(mesh.points[root.nodes], root.position)
    assert np.abs(A @ cb.nodal_shapes()[root.nodes].reshape(-1, cb.n_modes)).max() < 1e-9


@pytest.mark.parametrize("kind", ["rigid", "average"])
def test_craig_bampton_frames_reproduce_full_static_deflection(beam, kind):
    """Loads at the interface frames: the reduced model gives the full-FE frame motion exactly."""
    mesh, K, M, _ = beam
    ifs = [Interface("root", kind=kind), Interface("tip", kind=kind, position=(1.0, 0.05, 0.0))]
    cb = red.craig_bampton(K, M, mesh, ifs, 4)
    F = np.array([1e3, -2e3, 5e3, 40.0, -70.0, 25.0])  # N, N m about the frame point
    full, _ = red.frame_static_response(K, mesh, ifs, {"tip": F})
    tip = cb.interface("tip")
    eta = (tip.modal_map.T @ F) / cb.omega2
    assert np.allclose(tip.modal_map @ eta, full["tip"], rtol=1e-8, atol=1e-8 * np.abs(full["tip"]).max())
    assert np.allclose(full["root"], 0.0, atol=1e-12)


def test_attachment_modes_make_node_loads_exact(beam):
    mesh, K, M, _ = beam
    node = int(np.argmin(np.linalg.norm(mesh.points - [0.5, 0.05, 0.05], axis=1)))
    cb = red.craig_bampton(K, M, mesh, ["root", "tip"], 2, static_modes=[node])
    assert cb.settings["n_attachment_modes"] == 3
    f = np.zeros(mesh.n_dofs)
    f[3 * node + 2] = -1e4
    _, u = red.frame_static_response(K, mesh, ["root", "tip"], {}, node_loads=f)
    eta = (cb.shapes.T @ f) / cb.omega2
    assert np.allclose(cb.shapes @ eta, u, atol=1e-8 * np.abs(u).max())


def test_craig_bampton_free_floating_mean_axes(beam):
    mesh, K, M, Ms = beam
    cb = red.craig_bampton(K, M, mesh, ["root", "tip"], 4, reference=None)
    _orthonormal(cb, K, M)
    assert cb.reference is None and cb.rigid_modes.shape[1] == 6 and cb.n_modes == 12 + 4 - 6
    inv = red.inertia_invariants(Ms, mesh.points, cb.shapes)
    scale = np.sqrt(inv.mass)
    assert np.abs(inv.modal_first_moment).max() < 1e-9 * scale  # int rho phi = 0
    assert np.abs(inv.modal_angular_participation).max() < 1e-9 * scale  # int rho x0 x phi = 0
    ff = red.free_free_modes(K, M, 2, points=mesh.points)
    assert abs(cb.frequencies[0] / ff.frequencies[0] - 1.0) < 0.01  # CB approximates the free body


def test_interface_errors(beam):
    mesh, K, M, _ = beam
    with pytest.raises(ModelError, match="not in the mesh"):
        red.craig_bampton(K, M, mesh, ["nope"], 2)
    with pytest.raises(ModelError, match="overlap"):
        red.craig_bampton(K, M, mesh, ["root", Interface("x0b", nodes="x0")], 2)
    line = mesh.node_sets["root"][:1]
    with pytest.raises(ModelError, match="collinear"):
        red.craig_bampton(K, M, mesh, [Interface("pt", nodes=line)], 2)
    with pytest.raises(ModelError, match="reference"):
        red.craig_bampton(K, M, mesh, ["root"], 2, reference="tip")


def test_averaging_operator_reproduces_rigid_motion():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((12, 3))
    p = np.array([0.3, -0.2, 0.1])
    q = rng.standard_normal(6)
    u = q[:3] + np.cross(q[3:], x - p)
    A = red.averaging_operator(x, p, rng.uniform(0.5, 2.0, 12))
    assert np.allclose(A @ u.ravel(), q)


# ---------------------------------------------------------------------------- inertia invariants
def test_invariants_of_a_box_match_analytic_values():
    a, b, c = 0.4, 0.2, 0.1
    origin = np.array([0.3, -0.1, 0.2])
    mesh = structured_box((a, b, c), (4, 2, 2), "hexahedron", material=STEEL, origin=origin)
    Ms = fe.assemble_scalar_mass(mesh)
    K = fe.assemble_stiffness(mesh)
    M = sp.csr_matrix(sp.kron(Ms, sp.eye(3)))
    basis = red.free_free_modes(K, M, 5, points=mesh.points)
    inv = red.inertia_invariants(Ms, mesh.points, basis.shapes, K)
    m = STEEL.rho * a * b * c
    center = origin + np.array([a, b, c]) / 2
    Jc = m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    assert inv.mass == pytest.approx(m, rel=1e-12)
    assert np.allclose(inv.center_of_mass, center, rtol=1e-12)
    assert np.allclose(inv.inertia_tensor_com, Jc, rtol=1e-10, atol=1e-12 * Jc.max())
    d = center
    assert np.allclose(inv.inertia_tensor, Jc + m * (d @ d * np.eye(3) - np.outer(d, d)), rtol=1e-10)
    assert np.allclose(inv.modal_mass, np.eye(5), atol=1e-10)
    assert np.allclose(inv.modal_stiffness, np.diag(basis.omega2), rtol=1e-9, atol=1e-9 * basis.omega2.max())
    # exact dependence on eta: compare with the second moment of the displaced nodes
    eta = np.array([0.02, -0.01, 0.03, 0.0, 0.01])
    x = mesh.points + basis.nodal_shapes() @ eta
    S = x.T @ (Ms @ x)
    J = np.trace(S) * np.eye(3) - S
    assert np.allclose(inv.inertia_tensor_at(eta), J, rtol=1e-12, atol=1e-12 * np.abs(J).max())
    assert np.allclose(inv.first_moment_at(eta), x.T @ (Ms @ np.ones(mesh.n_nodes)), atol=1e-12 * m)


# ---------------------------------------------------------------------------- geometric stiffness
def test_modal_geometric_stiffness_gives_the_cubic_energy(beam):
    mesh, K, M, _ = beam
    cb = red.craig_bampton(K, M, mesh, ["root"], 4)
    G = red.modal_geometric_stiffness(mesh, cb.shapes)
    assert G.shape == (4, 4, 4) and np.allclose(G, G.transpose(0, 2, 1))
    eta = np.array([1e-3, -2e-3, 5e-4, 1e-3])
    u = cb.shapes @ eta
    Ks = fe.assemble_geometric_stiffness(mesh, fe.element_stresses(mesh, u))
    assert 0.5 * np.einsum("kij,k,i,j->", G, eta, eta, eta) == pytest.approx(0.5 * u @ (Ks @ u), rel=1e-10)


def test_axial_acceleration_preload_matches_bar_solution(beam):
    """Unit a_x: d'Alembert load -rho along x on a bar clamped at x = 0: tip u_x = -rho L^2 / (2 E)."""
    mesh, K, M, _ = beam
    cb = red.craig_bampton(K, M, mesh, ["root"], 3)
    F = red.inertial_load_vectors(M, mesh.points)
    U = red.static_preload_displacements(K, M, mesh, cb, F[[red.PRELOAD_NAMES.index("a_x")]])
    tip = mesh.node_sets["tip"]
    assert U[0].reshape(-1, 3)[tip, 0].mean() == pytest.approx(-STEEL.rho / (2 * STEEL.E), rel=0.01)


def test_preloads_stiffen_and_free_free_uses_inertia_relief(beam):
    mesh, K, M, _ = beam
    cb = red.craig_bampton(K, M, mesh, ["root"], 6)
    Kg = red.preload_geometric_stiffness(K, M, mesh, cb)
    assert Kg.shape == (12, 6, 6) and np.allclose(Kg, Kg.transpose(0, 2, 1))
    # spin about z stretches the beam (along x): its bending modes stiffen
    assert np.linalg.eigvalsh(Kg[red.PRELOAD_NAMES.index("wz*wz")]).min() > -1e-9 * np.abs(Kg).max()
    assert np.trace(Kg[red.PRELOAD_NAMES.index("wz*wz")]) > 0
    ff = red.free_free_modes(K, M, 4, points=mesh.points)
    F = red.inertial_load_vectors(M, mesh.points)
    U = red.static_preload_displacements(K, M, mesh, ff, F)
    R = red.rigid_body_modes(mesh.points)
    assert np.abs(R.T @ (M @ U.T)).max() < 1e-8 * np.abs(U).max() * M.sum()  # mean axes
    # uniform acceleration of a free body: inertia relief leaves it unstressed
    assert np.abs(U[9:]).max() < 1e-10 * np.abs(U[:9]).max()


# ---------------------------------------------------------------------------- stresses and damping
def test_modal_stresses_and_von_mises(beam):
    mesh, K, M, _ = beam
    cb = red.craig_bampton(K, M, mesh, ["root"], 3)
    S = red.modal_stresses(mesh, cb.shapes)
    assert S.shape == (3, mesh.n_nodes, 6)
    assert np.allclose(S[1], fe.nodal_stresses(mesh, cb.shapes[:, 1]), rtol=1e-12, atol=1e-12 * np.abs(S).max())
    assert red.von_mises(np.array([5.0, 0, 0, 0, 0, 0])) == pytest.approx(5.0)
    assert red.von_mises(np.array([0, 0, 0, 0, 0, 2.0])) == pytest.approx(2.0 * np.sqrt(3.0))
    assert red.von_mises(np.ones((4, 2, 6)) * [1, 1, 1, 0, 0, 0]).shape == (4, 2)


def test_modal_damping():
    w2 = np.array([4.0, 100.0])
    assert np.allclose(red.modal_damping(w2, ratio=0.05), np.diag([0.2, 1.0]))
    assert np.allclose(red.modal_damping(w2, ratio=[0.0, 0.1]), np.diag([0.0, 2.0]))
    assert np.allclose(red.modal_damping(w2, rayleigh=(0.5, 0.01)), np.diag([0.54, 1.5]))
    assert np.all(red.modal_damping(w2) == 0.0)
    with pytest.raises(ModelError):
        red.modal_damping(w2, ratio=0.1, rayleigh=(1.0, 0.0))
    with pytest.raises(ModelError):
        red.modal_damping(w2, ratio=[0.1, 0.2, 0.3])
