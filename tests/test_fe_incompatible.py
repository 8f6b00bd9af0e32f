"""Locking-free linear solids: hex8 and wedge6 with incompatible modes (the default formulation).

Exactness in pure bending (the 3-D Saint-Venant solution is quadratic), the patch test on distorted
meshes, the bending frequencies of a one-layer plate and of a 4-element-deep beam against thin-plate
and Euler-Bernoulli theory, and the plain formulation kept selectable (it locks)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse.linalg as sla

from flexmb.errors import ModelError
from flexmb.fe import reduction as red
from flexmb.fe.elements.assembly import (
    assemble_geometric_stiffness,
    assemble_mass,
    assemble_stiffness,
    element_stresses,
    nodal_stresses,
)
from flexmb.fe.elements.solid import get_element
from flexmb.fe.mesh import FEMesh, Material, structured_box

STEEL = Material(210e9, 0.3, 7850.0, "steel")
KAPPA = 1e-3  # curvature of the pure-bending field (1/m)


def pure_bending(points: np.ndarray) -> np.ndarray:
    """Exact 3-D pure bending about y (sigma_xx = E kappa z, all other stresses zero), (n, 3)."""
    x, y, z = points.T
    nu = STEEL.nu
    return np.column_stack([KAPPA * x * z, -nu * KAPPA * y * z, -0.5 * KAPPA * (x * x + nu * (z * z - y * y))])


def solve_with_boundary(mesh: FEMesh, exact: np.ndarray, boundary: np.ndarray) -> np.ndarray:
    """Interior displacements of ``mesh`` with ``exact`` prescribed on the boundary nodes."""
    k = assemble_stiffness(mesh).tocsc()
    fixed = np.repeat(boundary, 3)
    u = exact.ravel().copy()
    u[~fixed] = sla.spsolve(k[~fixed][:, ~fixed], -(k[~fixed][:, fixed] @ u[fixed]))
    return u


def boundary_of(mesh: FEMesh, lengths) -> np.ndarray:
    p = mesh.points
    return np.any(np.isclose(p, 0.0) | np.isclose(p, lengths), axis=1)


@pytest.mark.parametrize("cell_type", ["hexahedron", "wedge"])
def test_pure_bending_is_exact_on_parallelepipeds(cell_type):
    """The exact bending field is in equilibrium with the end-face loads alone (zero residual at
    every other node, end force and moment of the linear stress), its stresses are exact at the
    nodes, and under those end loads the plain element is far too stiff. Wedges bend along their
    prism axis (z) with nu = 0: the anticlastic terms of nu > 0 are quadratic in the plane of the
    triangles, which a linear triangle cannot represent."""
    if cell_type == "hexahedron":
        lengths, divisions, axis, depth = (6.0, 1.0, 1.0), (4, 2, 2), 0, 2
        exact = pure_bending(structured_box(lengths, divisions, cell_type).points)
    else:
        lengths, divisions, axis, depth = (1.0, 1.0, 6.0), (2, 2, 4), 2, 0
        x, y, z = structured_box(lengths, divisions, cell_type).points.T
        exact = np.column_stack([-0.5 * KAPPA * z * z, 0.0 * y, KAPPA * x * z])
    material = STEEL if cell_type == "hexahedron" else Material(STEEL.E, 0.0, STEEL.rho)
    mesh = structured_box(lengths, divisions, cell_type, material=material)
    p = mesh.points
    r = (assemble_stiffness(mesh) @ exact.ravel()).reshape(-1, 3)
    start, end = np.isclose(p[:, axis], 0.0), np.isclose(p[:, axis], lengths[axis])
    scale = STEEL.E * KAPPA * np.prod(lengths)
    assert np.abs(r[~(start | end)]).max() < 1e-9 * scale
    width = np.prod(lengths) / lengths[axis] / lengths[depth]
    h = lengths[depth]
    assert r[end, axis].sum() == pytest.approx(STEEL.E * KAPPA * width * h**2 / 2, rel=1e-12)
    assert r[end, axis] @ p[end, depth] == pytest.approx(STEEL.E * KAPPA * width * h**3 / 3, rel=1e-12)
    sn = nodal_stresses(mesh, exact.ravel())
    expected = np.zeros((len(p), 6))
    expected[:, axis] = STEEL.E * KAPPA * p[:, depth]
    assert np.abs(sn - expected).max() < 1e-8 * STEEL.E * KAPPA * h
    # the same end loads on the plain element, the start face held at the exact values: locked
    plain = mesh.with_formulation(cell_type, "plain")
    k = assemble_stiffness(plain).tocsc()
    fixed = np.repeat(start, 3)
    u = exact.ravel().copy()
    f = np.where(np.repeat(end, 3), r.ravel(), 0.0)
    u[~fixed] = sla.spsolve(k[~fixed][:, ~fixed], f[~fixed] - k[~fixed][:, fixed] @ u[fixed])
    tip = np.flatnonzero(end)
    bend = 2 if cell_type == "hexahedron" else 0  # the deflection component
    ratio = u.reshape(-1, 3)[tip, bend].mean() / exact[tip, bend].mean()
    assert 0.05 < ratio < 0.6, ratio


@pytest.mark.parametrize("cell_type", ["hexahedron", "wedge"])
def test_patch_test_internal_modes_stay_zero(cell_type):
    """A linear field on a distorted mesh: exact displacements and constant stress (Taylor's
    correction makes the internal modes orthogonal to constant strains)."""
    mesh = structured_box((2.0, 1.0, 0.5), (2, 2, 2), cell_type, material=STEEL)
    rng = np.random.default_rng(7)
    pts = mesh.points + 0.15 * 0.25 * rng.uniform(-1, 1, mesh.points.shape)
    boundary = boundary_of(mesh, (2.0, 1.0, 0.5))
    mesh = FEMesh(points=pts, cells=mesh.cells, materials={"*": STEEL})
    a = rng.normal(size=(3, 3)) * 1e-3
    exact = pts @ a.T
    u = solve_with_boundary(mesh, exact, boundary)
    assert np.abs(u - exact.ravel()).max() < 1e-10 * np.abs(exact).max()
    eps = 0.5 * (a + a.T)
    lam, mu = STEEL.lame
    sig = lam * np.trace(eps) * np.eye(3) + 2 * mu * eps
    voigt = np.array([sig[0, 0], sig[1, 1], sig[2, 2], sig[1, 2], sig[0, 2], sig[0, 1]])
    s = element_stresses(mesh, u)[cell_type]
    assert np.abs(s - voigt).max() < 1e-8 * np.abs(voigt).max()


def _z_bending(mesh, shapes, n):
    from flexmb.validation.cases.case_f1 import bending_modes_z

    return bending_modes_z(mesh, shapes, n)


def test_four_element_deep_slender_beam_within_three_percent():
    """L/h = 40, 4 hex8 through the depth, 40 along: free-free z-bending f1..f3 against
    Euler-Bernoulli (minus the Timoshenko correction, 0.2-1.3 %)."""
    L, b, h = 1.0, 0.05, 0.025
    mesh = structured_box((L, b, h), (40, 2, 4), "hexahedron", material=STEEL)
    basis = red.free_free_modes(assemble_stiffness(mesh), assemble_mass(mesh), 12, points=mesh.points)
    f = basis.frequencies[_z_bending(mesh, basis.shapes, 3)]
    c = math.sqrt(STEEL.E * h**2 / 12.0 / STEEL.rho) / L**2 / (2 * math.pi)
    eb = np.array([4.730041, 7.853205, 10.995608]) ** 2 * c
    assert np.all(np.abs(f / eb - 1.0) < 0.03), f / eb
    # the plain hex8 on the same mesh is far off
    plain = mesh.with_formulation("hexahedron", "plain")
    fp = red.free_free_modes(assemble_stiffness(plain), assemble_mass(plain), 4, points=plain.points).frequencies
    assert fp[0] / eb[0] > 1.15


def test_one_layer_plate_fv12_within_three_percent():
    """NAFEMS FV12 free square plate (10 m, t = 0.05 m) with ONE layer of 16 x 16 hex8: the first
    three elastic frequencies within 3 % of 1.622, 2.360, 2.922 Hz (plain hex8: 5-9 times too high
    for modes 2, 3)."""
    mesh = structured_box((10.0, 10.0, 0.05), (16, 16, 1), "hexahedron", material=Material(200e9, 0.3, 8000.0))
    f = red.free_free_modes(assemble_stiffness(mesh), assemble_mass(mesh), 6, points=mesh.points).frequencies
    ref = np.array([1.622, 2.360, 2.922])
    assert np.all(np.abs(f[:3] / ref - 1.0) < 0.03), f[:3] / ref
    plain = mesh.with_formulation("hexahedron", "plain")
    fp = red.free_free_modes(assemble_stiffness(plain), assemble_mass(plain), 3, points=plain.points).frequencies
    assert fp[1] / ref[1] > 3.0


def test_mass_does_not_depend_on_the_formulation():
    mesh = structured_box((1.0, 0.4, 0.2), (3, 2, 1), "hexahedron", material=STEEL)
    plain = mesh.with_formulation("hexahedron", "plain")
    assert abs(assemble_mass(mesh) - assemble_mass(plain)).max() == 0.0
    # the stiffness differs (softer in bending) but keeps the six rigid-body modes
    ev = np.linalg.eigvalsh(assemble_stiffness(mesh).toarray())
    assert np.sum(ev < 1e-9 * ev.max()) == 6 and ev.min() > -1e-9 * ev.max()


@pytest.mark.parametrize("cell_type", ["hexahedron", "wedge"])
def test_geometric_stiffness_is_that_of_the_enhanced_field(cell_type):
    """K_sigma of the incompatible formulation is the geometric stiffness of the enhanced field (the
    internal modes following their condensation): under a constant prestress sigma its energy of the
    exact pure-bending field, which the enhanced field reproduces on parallelepipeds, is
    int grad u_a . sigma grad u_a dV of the exact (quadratic) field, to round-off; the plain element's
    (chord slopes) is not (-1.0 % and +3.0 % here, the value K_sigma had before it took the enhanced
    field). Linear fields (no internal modes, patch test) give both the same energy."""
    rng = np.random.default_rng(2)
    if cell_type == "hexahedron":
        lengths, divisions, material = (6.0, 1.0, 1.0), (4, 2, 2), STEEL
    else:  # bending along the prism axis (z), nu = 0 (see test_pure_bending_is_exact_on_parallelepipeds)
        lengths, divisions, material = (1.0, 1.0, 6.0), (2, 2, 4), Material(STEEL.E, 0.0, STEEL.rho)
    mesh = structured_box(lengths, divisions, cell_type, material=material)
    plain = mesh.with_formulation(cell_type, "plain")
    sig = rng.normal(size=6) * 1e6  # constant prestress, Voigt
    q = get_element(cell_type).stiffness_rule.n_points
    stress = {cell_type: np.broadcast_to(sig, (len(mesh.cells[cell_type]), q, 6)).copy()}
    kg, kg_plain = assemble_geometric_stiffness(mesh, stress), assemble_geometric_stiffness(plain, stress)
    assert np.abs(kg - kg.T).max() < 1e-12 * np.abs(kg).max()
    x, y, z = mesh.points.T
    nu = material.nu
    if cell_type == "hexahedron":
        u = np.column_stack([KAPPA * x * z, -nu * KAPPA * y * z, -0.5 * KAPPA * (x * x + nu * (z * z - y * y))])
        grad = lambda x, y, z: KAPPA * np.array([[z, 0 * x, x], [0 * x, -nu * z, -nu * y], [-x, nu * y, -nu * z]])  # noqa: E731
    else:
        u = np.column_stack([-0.5 * KAPPA * z * z, 0.0 * y, KAPPA * x * z])
        grad = lambda x, y, z: KAPPA * np.array([[0 * x, 0 * x, -z], [0 * x, 0 * x, 0 * x], [z, 0 * x, x]])  # noqa: E731
    # exact int grad u_a . sigma grad u_a dV over the box: quadratic integrand, 3-point Gauss per direction
    s3 = np.array([[sig[0], sig[5], sig[4]], [sig[5], sig[1], sig[3]], [sig[4], sig[3], sig[2]]])
    gx, gw = np.polynomial.legendre.leggauss(3)
    ref = 0.0
    for xa, wa in zip(gx, gw):
        for yb, wb in zip(gx, gw):
            for zc, wc in zip(gx, gw):
                pt = 0.5 * (np.array([xa, yb, zc]) + 1.0) * lengths
                h = grad(*pt)
                ref += wa * wb * wc * np.prod(lengths) / 8.0 * np.einsum("ab,bc,ac->", h, s3, h)
    e = u.ravel() @ (kg @ u.ravel())
    assert e == pytest.approx(ref, rel=1e-11)
    assert abs(u.ravel() @ (kg_plain @ u.ravel()) / ref - 1.0) > 5e-3  # chord slopes: -1.0 % (hex8), +3.0 % (wedge)
    lin = (mesh.points @ rng.normal(size=(3, 3))).ravel()
    assert lin @ (kg @ lin) == pytest.approx(lin @ (kg_plain @ lin), rel=1e-11)


def test_unknown_formulation_is_refused():
    mesh = structured_box((1.0, 1.0, 1.0), (1, 1, 1), "hexahedron")
    with pytest.raises(ModelError, match="incompatible, plain"):
        mesh.with_formulation("hexahedron", "reduced")
    with pytest.raises(ModelError, match="not available"):
        mesh.with_formulation("tetra", "incompatible")


@pytest.mark.parametrize("cell_type", ["hexahedron", "wedge"])
@pytest.mark.parametrize("formulation", ["incompatible", "plain"])
def test_element_wise_stiffness_is_the_assembled_one(cell_type, formulation):
    """The element-wise reduced stiffness (:mod:`flexmb.fe.elements.deformation`, summed on each
    element's deformation) uses the same element matrices as the assembly, condensed modes included:
    ``K v`` agrees to round-off, so ``reduced_stiffness`` takes the element path (it fell back to
    ``X^T K X`` when the element sum ignored the incompatible modes: relative difference ~0.1)."""
    from flexmb.fe.elements.deformation import SAME_MODEL_TOL, stiffness_energy, stiffness_product

    mesh = structured_box((1.0, 0.3, 0.1), (4, 2, 1), cell_type, material=STEEL).with_formulation(cell_type, formulation)
    rng = np.random.default_rng(3)
    mesh = FEMesh(points=mesh.points + 0.01 * rng.standard_normal(mesh.points.shape), cells=mesh.cells,
                  materials=mesh.materials).with_formulation(cell_type, formulation)  # distorted
    K = assemble_stiffness(mesh)
    V = rng.standard_normal((K.shape[0], 3))
    KV = K @ V
    assert np.linalg.norm(stiffness_product(mesh, V) - KV) < SAME_MODEL_TOL * np.linalg.norm(KV)
    E = V.T @ KV
    assert np.allclose(stiffness_energy(mesh, V), 0.5 * (E + E.T), rtol=1e-11, atol=1e-11 * abs(E).max())
