"""Assembly: rigid-body modes, mass moments, patch tests, definiteness, stress stiffening, loads."""
from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse.linalg as sla

import flexmb.fe.elements.solid_kernels as sk
from flexmb.errors import ModelError
from flexmb.fe.elements.assembly import (
    assemble_geometric_stiffness,
    assemble_mass,
    assemble_scalar_mass,
    assemble_stiffness,
    body_force_vector,
    element_stresses,
    nodal_stress_operator,
    nodal_stresses,
    quadrature_jacobians,
)
from flexmb.fe.elements.solid import ELEMENTS
from flexmb.fe.mesh import FEMesh, Material, quadratic_from_linear, structured_box

TYPES = sorted(ELEMENTS)
STEEL = Material(210e9, 0.3, 7850.0, "steel")
LENGTHS = (2.0, 1.0, 0.5)


def distorted_box(cell_type: str, divisions=(2, 2, 2), amplitude=0.15, seed=0) -> tuple[FEMesh, np.ndarray]:
    """Box mesh with randomly moved vertices (straight edges); also returns the boundary-node mask."""
    base = cell_type.rstrip("0123456789") if cell_type in ("tetra10", "hexahedron20") else cell_type
    m = structured_box(LENGTHS, divisions, base, material=STEEL)
    pts = m.points.copy()
    h = min(l / d for l, d in zip(LENGTHS, divisions))
    rng = np.random.default_rng(seed)
    pts += amplitude * h * rng.uniform(-1, 1, pts.shape)
    conn = m.cells[base]
    if base != cell_type:
        pts, conn = quadratic_from_linear(pts, conn, base)
    mesh = FEMesh(points=pts, cells={cell_type: conn}, materials={"*": STEEL})
    # boundary nodes: those of faces of the undistorted box
    ref = structured_box(LENGTHS, divisions, base)
    ref_pts = ref.points if base == cell_type else quadratic_from_linear(ref.points, ref.cells[base], base)[0]
    on_face = np.any(np.isclose(ref_pts, 0.0) | np.isclose(ref_pts, LENGTHS), axis=1)
    return mesh, on_face


def rigid_modes(points: np.ndarray) -> np.ndarray:
    n = len(points)
    modes = []
    for d in range(3):
        u = np.zeros((n, 3))
        u[:, d] = 1.0
        modes.append(u.ravel())
    for axis in np.eye(3):
        modes.append(np.cross(axis, points).ravel())
    return np.array(modes).T  # (3n, 6)


@pytest.mark.parametrize("cell_type", TYPES)
def test_rigid_body_motions_are_stress_free(cell_type):
    mesh, _ = distorted_box(cell_type)
    k = assemble_stiffness(mesh)
    r = rigid_modes(mesh.points)
    assert np.abs(k @ r).max() < 1e-12 * np.abs(k).max() * np.abs(r).max()


@pytest.mark.parametrize("cell_type", TYPES)
def test_mass_and_moments_of_a_box(cell_type):
    mesh = structured_box(LENGTHS, (3, 2, 2), cell_type, material=STEEL)
    ms = assemble_scalar_mass(mesh)
    lx, ly, lz = LENGTHS
    vol = lx * ly * lz
    rho = STEEL.rho
    one = np.ones(mesh.n_nodes)
    x, y, z = mesh.points.T
    assert ms.sum() == pytest.approx(rho * vol, rel=1e-13)
    assert mesh.volume() == pytest.approx(vol, rel=1e-13)
    assert x @ ms @ one == pytest.approx(rho * vol * lx / 2, rel=1e-13)
    assert x @ ms @ x == pytest.approx(rho * vol * lx**2 / 3, rel=1e-13)
    assert x @ ms @ y == pytest.approx(rho * vol * lx * ly / 4, rel=1e-13)
    assert z @ ms @ z == pytest.approx(rho * vol * lz**2 / 3, rel=1e-13)
    m = assemble_mass(mesh)
    # M = kron(Ms, I3): the translational mass in each direction is the total mass
    for d in range(3):
        e = np.zeros((mesh.n_nodes, 3))
        e[:, d] = 1.0
        assert e.ravel() @ m @ e.ravel() == pytest.approx(rho * vol, rel=1e-13)


@pytest.mark.parametrize("cell_type", TYPES)
def test_constant_strain_patch_test_on_distorted_mesh(cell_type):
    mesh, boundary = distorted_box(cell_type)
    k = assemble_stiffness(mesh).tocsc()
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 3)) * 1e-3
    b = rng.normal(size=3) * 1e-3
    exact = (mesh.points @ a.T + b).ravel()
    fixed = np.repeat(boundary, 3)
    free = ~fixed
    assert free.sum() > 0
    u = exact.copy()
    u[free] = sla.spsolve(k[free][:, free], -(k[free][:, fixed] @ exact[fixed]))
    assert np.abs(u - exact).max() < 1e-10 * np.abs(exact).max()
    # the exact constant stress at every quadrature point
    eps = 0.5 * (a + a.T)
    lam, mu = STEEL.lame
    sig = lam * np.trace(eps) * np.eye(3) + 2 * mu * eps
    voigt = np.array([sig[0, 0], sig[1, 1], sig[2, 2], sig[1, 2], sig[0, 2], sig[0, 1]])
    s = element_stresses(mesh, u)[cell_type]
    assert s.shape == (len(mesh.cells[cell_type]), ELEMENTS[cell_type].stiffness_rule.n_points, 6)
    assert np.abs(s - voigt).max() < 1e-8 * np.abs(voigt).max()
    # nodal stresses (direct evaluation at nodes, averaged) are exact too
    sn = nodal_stresses(mesh, u)
    assert np.abs(sn - voigt).max() < 1e-8 * np.abs(voigt).max()


@pytest.mark.parametrize("cell_type", TYPES)
def test_symmetry_definiteness_and_six_zero_modes(cell_type):
    mesh, _ = distorted_box(cell_type, divisions=(2, 1, 1))
    k = assemble_stiffness(mesh).toarray()
    m = assemble_mass(mesh).toarray()
    assert np.abs(k - k.T).max() < 1e-13 * np.abs(k).max()
    assert np.abs(m - m.T).max() < 1e-15 * np.abs(m).max()
    ev_k = np.linalg.eigvalsh(k)
    tol = 1e-9 * ev_k.max()
    assert ev_k.min() > -tol
    assert np.sum(ev_k < tol) == 6
    assert np.linalg.eigvalsh(m).min() > 0.0


def test_two_disconnected_parts_have_twelve_zero_modes():
    a = structured_box((1, 1, 1), (1, 1, 1), "hexahedron")
    pts = np.vstack([a.points, a.points + [2.0, 0, 0]])
    cells = {"hexahedron": np.vstack([a.cells["hexahedron"], a.cells["hexahedron"] + 8])}
    mesh = FEMesh(points=pts, cells=cells, materials={"*": STEEL})
    ev = np.linalg.eigvalsh(assemble_stiffness(mesh).toarray())
    assert np.sum(ev < 1e-9 * ev.max()) == 12


def test_stiffness_of_single_tet4_against_hand_value():
    """Unit right tetrahedron, nu = 0: K[0,0] (ux0, ux0) = E/(2) * V * (2*1 + 1 + 1)/... by hand."""
    mat = Material(1.0, 0.0, 1.0)
    mesh = FEMesh(points=np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]), cells={"tetra": [[0, 1, 2, 3]]})
    k = assemble_stiffness(mesh, mat).toarray()
    # grad N0 = (-1,-1,-1), V = 1/6, lam = 0, mu = 1/2:
    # K[0x,0x] = V (mu |gradN0|^2 + mu gx gx) = (1/6)(1.5 + 0.5) = 1/3
    assert k[0, 0] == pytest.approx(1.0 / 3.0)
    # K[0x,1x]: gradN1 = (1,0,0): V (mu (-1) + mu (-1)(1)) = -1/6
    assert k[0, 3] == pytest.approx(-1.0 / 6.0)
    # K[0x,1y] = V (lam gx0 gy1 + mu gy0 gx1) = (1/6)(0.5 * (-1)(1)) = -1/12
    assert k[0, 4] == pytest.approx(-1.0 / 12.0)


def test_geometric_stiffness_uniaxial_hand_values():
    """Unit cube hex8 under sigma_xx = s: K_sigma[a,b] = s int dNa/dx dNb/dx dV (times I3). The plain
    (trilinear) element: with incompatible modes the field is the enhanced one (test_fe_incompatible.py)."""
    s = 3.0e6
    mesh = structured_box((1, 1, 1), (1, 1, 1), "hexahedron", material=STEEL).with_formulation("hexahedron", "plain")
    n_qp = ELEMENTS["hexahedron"].stiffness_rule.n_points
    stress = {"hexahedron": np.zeros((1, n_qp, 6))}
    stress["hexahedron"][..., 0] = s
    kg = assemble_geometric_stiffness(mesh, stress).toarray()
    corners = mesh.points[mesh.cells["hexahedron"][0]]
    i0 = mesh.cells["hexahedron"][0][0]  # node at (0,0,0)

    def node_at(p):
        return mesh.cells["hexahedron"][0][np.flatnonzero(np.all(np.isclose(corners, p), axis=1))[0]]

    # 1-D factors: int N'aN'b dx = +-1, int NaNb dy = 1/3 (same) or 1/6 (other)
    assert kg[3 * i0, 3 * i0] == pytest.approx(s / 9)
    assert kg[3 * i0, 3 * node_at([1, 0, 0])] == pytest.approx(-s / 9)
    assert kg[3 * i0, 3 * node_at([0, 1, 0])] == pytest.approx(s / 18)
    assert kg[3 * i0, 3 * node_at([1, 1, 1])] == pytest.approx(-s / 36)
    assert kg[3 * i0, 3 * i0 + 1] == 0.0  # no coupling between displacement directions


@pytest.mark.parametrize("cell_type", TYPES)
def test_geometric_stiffness_energy_of_a_rotation_field(cell_type):
    """u = (0, x, 0) under sigma_xx = s: u^T K_sigma u = s * V (exact for every element type)."""
    mesh, _ = distorted_box(cell_type)
    # stresses of a uniaxial displacement field give sigma_xx = E eps with nu = 0
    mat = Material(2.0e11, 0.0, 1.0)
    eps = 1.0e-3
    u0 = np.zeros((mesh.n_nodes, 3))
    u0[:, 0] = eps * mesh.points[:, 0]
    stresses = element_stresses(mesh, u0, mat)
    assert np.allclose(stresses[cell_type][..., 0], mat.E * eps)
    kg = assemble_geometric_stiffness(mesh, stresses)
    u = np.zeros((mesh.n_nodes, 3))
    u[:, 1] = mesh.points[:, 0]
    assert u.ravel() @ kg @ u.ravel() == pytest.approx(mat.E * eps * mesh.volume(), rel=1e-11)
    assert np.abs(kg - kg.T).max() < 1e-12 * np.abs(kg).max()


def test_body_force_is_consistent_with_total_weight():
    mesh = structured_box(LENGTHS, (3, 2, 2), "hexahedron20", material=STEEL)
    g = np.array([0.0, 0.0, -9.81])
    f = body_force_vector(mesh, g).reshape(-1, 3)
    weight = STEEL.rho * np.prod(LENGTHS) * g
    assert np.allclose(f.sum(axis=0), weight, rtol=1e-13)
    # moment about the origin equals weight x centre of mass
    moment = np.cross(mesh.points, f).sum(axis=0)
    assert np.allclose(moment, np.cross(np.array(LENGTHS) / 2, weight), rtol=1e-12)
    # a per-node field (centrifugal-like, a = x e_x) gives rho int x dV in x
    a = np.zeros((mesh.n_nodes, 3))
    a[:, 0] = mesh.points[:, 0]
    fx = body_force_vector(mesh, a).reshape(-1, 3)[:, 0].sum()
    assert fx == pytest.approx(STEEL.rho * np.prod(LENGTHS) * LENGTHS[0] / 2, rel=1e-13)
    with pytest.raises(ModelError, match="accel"):
        body_force_vector(mesh, np.zeros(4))


@pytest.mark.parametrize("cell_type", ["tetra10", "hexahedron20", "pyramid"])
def test_nodal_stress_operator_forms_agree(cell_type):
    mesh, _ = distorted_box(cell_type, divisions=(2, 1, 1))
    rng = np.random.default_rng(4)
    u = rng.normal(size=(mesh.n_dofs, 2)) * 1e-4
    op = nodal_stress_operator(mesh)
    assert op.shape == (6 * mesh.n_nodes, mesh.n_dofs)
    direct = nodal_stresses(mesh, u)
    assert np.allclose((op @ u).reshape(mesh.n_nodes, 6, 2), direct, rtol=1e-12, atol=1e-6)
    local = nodal_stress_operator(mesh, form="local")[cell_type]
    conn = mesh.cells[cell_type]
    k = conn.shape[1]
    dofs = (3 * conn[:, :, None] + np.arange(3)).reshape(len(conn), 3 * k)
    s_local = np.einsum("cpvj,cj->cpv", local, u[:, 0][dofs])
    # averaging the local values at each node reproduces the sparse operator
    acc = np.zeros((mesh.n_nodes, 6))
    np.add.at(acc, conn.ravel(), s_local.reshape(-1, 6))
    count = np.bincount(conn.ravel(), minlength=mesh.n_nodes)[:, None]
    assert np.allclose(acc / count, direct[..., 0], rtol=1e-12, atol=1e-6)


def test_chunked_assembly_equals_single_chunk(monkeypatch):
    mesh, _ = distorted_box("hexahedron20", divisions=(3, 2, 2))
    k1 = assemble_stiffness(mesh)
    m1 = assemble_mass(mesh)
    monkeypatch.setattr(sk, "CHUNK_ENTRIES", 400 * 2)  # two cells per chunk
    sk.PATTERNS.clear()
    k2 = assemble_stiffness(mesh)
    m2 = assemble_mass(mesh)
    assert abs(k1 - k2).max() < 1e-14 * abs(k1).max()
    assert abs(m1 - m2).max() < 1e-14 * abs(m1).max()


def test_materials_per_element_set():
    mesh = structured_box((2, 1, 1), (2, 1, 1), "hexahedron")
    left = {"hexahedron": np.array([0])}
    right = {"hexahedron": np.array([1])}
    mesh = FEMesh(points=mesh.points, cells=mesh.cells, element_sets={"left": left, "right": right})
    light, heavy = Material(1e9, 0.3, 1000.0), Material(1e9, 0.3, 3000.0)
    ms = assemble_scalar_mass(mesh, {"left": light, "right": heavy})
    assert ms.sum() == pytest.approx(4000.0)
    with pytest.raises(ModelError, match="'right'"):
        assemble_stiffness(mesh, {"left": light})
    with pytest.raises(ModelError, match="does not exist"):
        assemble_stiffness(mesh, {"middle": light})


def test_quadrature_jacobians_and_input_checks():
    mesh = structured_box((2, 4, 6), (1, 1, 1), "hexahedron", material=STEEL)
    det = quadrature_jacobians(mesh)["hexahedron"]
    assert det.shape == (1, 8) and np.allclose(det, 6.0)
    with pytest.raises(ModelError, match="shape"):
        element_stresses(mesh, np.zeros(5))
    with pytest.raises(ModelError, match="element_stresses"):
        assemble_geometric_stiffness(mesh, {"hexahedron": np.zeros((1, 3, 6))})


def test_assembly_speed_tet10():
    """~60k DOF tet10 in well under the few-seconds target (vectorized, no per-element Python)."""
    mesh = structured_box((1.0, 0.1, 0.1), (40, 4, 4), "tetra10", material=STEEL)
    sk.PATTERNS.clear()
    t0 = time.perf_counter()
    k = assemble_stiffness(mesh)
    elapsed = time.perf_counter() - t0
    assert k.shape == (mesh.n_dofs, mesh.n_dofs)
    assert elapsed < 10.0, f"stiffness assembly of {mesh.n_dofs} DOF took {elapsed:.2f} s"


def test_mass_is_kron_of_scalar_mass_with_only_diagonal_blocks_stored():
    import scipy.sparse as sp

    mesh, _ = distorted_box("tetra10", divisions=(2, 1, 1))
    ms = assemble_scalar_mass(mesh)
    m = assemble_mass(mesh)
    ref = sp.kron(ms, sp.eye_array(3), format="csr")
    assert m.nnz == 3 * ms.nnz
    assert abs(m - ref).max() == 0.0
    assert m.has_sorted_indices or sp.csr_array(m).has_sorted_indices
