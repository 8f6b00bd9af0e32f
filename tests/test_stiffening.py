"""Modal geometric stiffening data: quartic strain energy H, residual inertial preload stiffness.

References: the total-Lagrangian St. Venant-Kirchhoff strain energy of the FE field computed by
quadrature (written here, independent of the library); the Southwell coefficient K1 = 1.193 of the
first flapwise mode of a uniform rotating cantilever (omega^2 = omega_0^2 + K1 Omega^2; R. V.
Southwell, F. Gough, ARC R&M 766, 1921; e.g. Bhat, J. Sound Vib. 105 (1986) 199) and the X5 table
(Wright et al. 1982) in flexmb/validation/cases/case_x5.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from flexmb.errors import ModelError
from flexmb.fe import assembly as fe
from flexmb.fe import reduction as red
from flexmb.fe.elements import get_element, isoparametric_map
from flexmb.fe.mesh import Material
from flexmb.fe.modes import ModalBasis
from flexmb.validation.cases import case_x5 as x5
from flexmb.validation.cases.case_f1 import structured_box

STEEL = Material(210e9, 0.3, 7850.0, "steel")
SOUTHWELL_K1 = 1.193  # first flapwise mode of a uniform cantilever spun about its root


def svk_energy(mesh, u):
    """Total-Lagrangian St. Venant-Kirchhoff strain energy of nodal displacements u (3n,) (J).

    E = (F^T F - I) / 2 with F = I + grad u at the element stiffness quadrature points,
    W = lambda/2 tr(E)^2 + mu E:E.
    """
    un = np.asarray(u, float).reshape(-1, 3)
    fields = mesh.cell_materials()
    total = 0.0
    for t, conn in mesh.cells.items():
        rule = get_element(t).stiffness_rule
        det, g = isoparametric_map(t, mesh.points[conn], rule.points)
        F = np.eye(3) + np.einsum("cka,cqkb->cqab", un[conn], g)
        E = 0.5 * (np.einsum("cqka,cqkb->cqab", F, F) - np.eye(3))
        e, nu = fields[t][:, 0], fields[t][:, 1]
        lam, mu = e * nu / ((1 + nu) * (1 - 2 * nu)), e / (2 * (1 + nu))
        w = 0.5 * lam[:, None] * np.trace(E, axis1=2, axis2=3) ** 2 + mu[:, None] * np.einsum("cqab,cqab->cq", E, E)
        total += float(np.sum(w * det * rule.weights))
    return total


@pytest.fixture(scope="module")
def beam():
    mesh = structured_box((1.0, 0.1, 0.05), (10, 2, 1), "hexahedron20", material=STEEL)
    return mesh, fe.assemble_stiffness(mesh), fe.assemble_mass(mesh)


@pytest.fixture(scope="module")
def cb_data(beam):
    mesh, K, M = beam
    cb = red.craig_bampton(K, M, mesh, ["root", "tip"], 4)
    P = cb.shapes
    return cb, P.T @ (K @ P), red.modal_geometric_stiffness(mesh, P), red.modal_quartic_stiffness(mesh, P)


# ---------------------------------------------------------------------------- quartic term
def test_quartic_stiffness_symmetries(cb_data):
    cb, _, _, H = cb_data
    nm = cb.n_modes
    assert H.shape == (nm, nm, nm, nm)
    assert np.array_equal(H, H.transpose(1, 0, 2, 3)) and np.array_equal(H, H.transpose(0, 1, 3, 2))
    assert np.allclose(H, H.transpose(2, 3, 0, 1), rtol=0, atol=1e-13 * np.abs(H).max())
    # positive semi-definite as a (pair, pair) quadratic form: int E_nl : C : E_nl >= 0
    iu, ju = np.triu_indices(nm)
    ev = np.linalg.eigvalsh(H[iu, ju][:, iu, ju])
    assert ev.min() > -1e-12 * ev.max()


@pytest.mark.parametrize("amplitude", [1e-3, 1e-2, 1e-1, 1.0, 10.0])
def test_modal_energy_equals_fe_green_lagrange_energy(beam, cb_data, amplitude):
    """K, G, H reproduce the SVK energy of the FE field Phi q to round-off, small to huge q."""
    mesh, _, _ = beam
    cb, Kr, G, H = cb_data
    rng = np.random.default_rng(int(1000 * amplitude) + 7)
    for _ in range(3):
        q = amplitude * rng.standard_normal(cb.n_modes)
        ref = svk_energy(mesh, cb.shapes @ q)
        assert red.modal_strain_energy(q, Kr, G, H) == pytest.approx(ref, rel=1e-10)
    # without H it is not the FE energy once the deflection is large
    q = rng.standard_normal(cb.n_modes)
    assert abs(red.modal_strain_energy(q, Kr, G) / svk_energy(mesh, cb.shapes @ q) - 1.0) > 1e-2


def test_modal_force_and_tangent_match_finite_differences(beam, cb_data):
    mesh, _, _ = beam
    cb, Kr, G, H = cb_data
    q = 0.3 * np.random.default_rng(3).standard_normal(cb.n_modes)  # tip deflections ~ 0.1 m
    f = red.modal_elastic_force(q, Kr, G, H)
    h = 1e-4
    E = np.eye(cb.n_modes)
    f_fd = np.array([(svk_energy(mesh, cb.shapes @ (q + h * e)) - svk_energy(mesh, cb.shapes @ (q - h * e))) / (2 * h)
                     for e in E])
    assert np.abs(f - f_fd).max() < 1e-6 * np.abs(f).max()
    T = red.modal_tangent_stiffness(q, Kr, G, H)
    T_fd = np.array([(red.modal_elastic_force(q + h * e, Kr, G, H) - red.modal_elastic_force(q - h * e, Kr, G, H))
                     / (2 * h) for e in E]).T
    assert np.abs(T - T.T).max() < 1e-12 * np.abs(T).max()
    assert np.abs(T - T_fd).max() < 1e-7 * np.abs(T).max()
    # without H the force is that of the cubic energy only
    f3 = red.modal_elastic_force(q, Kr, G)
    assert np.abs(f - f3).max() > 1e-3 * np.abs(f).max()


def test_quartic_term_bounds_the_energy_below(beam):
    """Axial + bending shapes of a cantilever: the cubic energy goes negative, K+G+H stays >= 0."""
    mesh, K, _ = beam
    ifs = ["root", "tip"]
    _, u_ax = red.frame_static_response(K, mesh, ifs, {"tip": [1.0, 0, 0, 0, 0, 0]})
    _, u_b = red.frame_static_response(K, mesh, ifs, {"tip": [0, 0, 1.0, 0, 0, 0]})
    tip = mesh.node_sets["tip"]
    P = np.stack([u_ax / u_ax.reshape(-1, 3)[tip, 0].mean(), u_b / u_b.reshape(-1, 3)[tip, 2].mean()], axis=1)
    Kr = P.T @ (K @ P)  # q = (tip axial, tip transverse displacement) in m
    G = red.modal_geometric_stiffness(mesh, P)
    H = red.modal_quartic_stiffness(mesh, P)
    s = np.logspace(-3, 1, 41)
    ang = np.linspace(0.0, 2 * np.pi, 73)
    cubic = np.array([[red.modal_strain_energy(si * np.array([np.cos(a), np.sin(a)]), Kr, G) for a in ang] for si in s])
    full = np.array([[red.modal_strain_energy(si * np.array([np.cos(a), np.sin(a)]), Kr, G, H) for a in ang] for si in s])
    assert cubic.min() < -1e3 * Kr[0, 0] * 1e-6  # unbounded below: large negative energies
    assert full.min() > 0.0
    # the full energy is the FE energy at the worst cubic point (a large rotation of the tip)
    i, j = np.unravel_index(np.argmin(cubic), cubic.shape)
    qw = s[i] * np.array([np.cos(ang[j]), np.sin(ang[j])])
    assert full[i, j] == pytest.approx(svk_energy(mesh, P @ qw), rel=1e-10)
    # quartic growth at large amplitude
    assert full[-1].min() / full[-11].min() > 0.5 * 10 ** 4


# ---------------------------------------------------------------------------- residual preload stiffness
def test_stiffness_projection_rejects_rigid_shapes(beam):
    mesh, K, _ = beam
    with pytest.raises(ModelError, match="strain-free"):
        red.stiffness_projection(K, red.rigid_body_modes(mesh.points), np.zeros((1, K.shape[0])))


def test_residual_preload_stiffness_vanishes_when_the_basis_holds_the_static_response(beam):
    mesh, K, M = beam
    cb = red.craig_bampton(K, M, mesh, ["root"], 4)
    F = red.inertial_load_vectors(M, mesh.points)
    c = red.PRELOAD_NAMES.index("wz*wz")
    u_s = red.static_preload_displacements(K, M, mesh, cb, F[c : c + 1])[0]
    aug = ModalBasis(kind=cb.kind, shapes=np.column_stack([cb.shapes, u_s / np.abs(u_s).max()]),
                     omega2=np.r_[cb.omega2, 0.0], rigid_modes=cb.rigid_modes, interfaces=cb.interfaces,
                     reference=cb.reference)
    st = red.preload_stiffening(K, M, mesh, aug)
    assert st.full.shape == st.residual.shape == (12, 5, 5) and st.coordinates.shape == (12, 5)
    assert np.abs(st.residual[c]).max() < 1e-8 * np.abs(st.full[c]).max()
    assert st.residual_fraction[c] < 1e-12
    # a uniform axial acceleration stresses the beam unlike the spin stretch: its residual stays
    a = red.PRELOAD_NAMES.index("a_x")
    assert st.residual_fraction[a] > 1e-2 and np.abs(st.residual[a]).max() > 0.1 * np.abs(st.full[a]).max()
    # identity: residual = full - sum_k a_k G[k]
    G = red.modal_geometric_stiffness(mesh, aug.shapes)
    for k in range(12):
        assert np.abs(st.full[k] - np.tensordot(st.coordinates[k], G, 1) - st.residual[k]).max() \
            <= 1e-9 * max(np.abs(st.full[k]).max(), 1e-300)
    assert np.allclose(st.full, red.preload_geometric_stiffness(K, M, mesh, aug), rtol=1e-12, atol=0)


def test_residual_preload_free_free_is_stiffness_orthogonal(beam):
    mesh, K, M = beam
    ff = red.free_free_modes(K, M, 5, points=mesh.points)
    F = red.inertial_load_vectors(M, mesh.points)
    st = red.load_stiffening(K, M, mesh, ff, F)
    U = red.static_preload_displacements(K, M, mesh, ff, F)
    Ures = U - st.coordinates @ ff.shapes.T
    scale = np.abs(ff.shapes.T @ (K @ U.T)).max()
    assert np.abs(ff.shapes.T @ (K @ Ures.T)).max() < 1e-9 * scale
    # uniform acceleration of a free body: unstressed (inertia relief), nothing to add
    assert np.all(st.residual_fraction[9:] == 0.0)
    assert np.abs(st.full[9:]).max() < 1e-9 * np.abs(st.full[:9]).max()
    assert np.abs(st.residual[9:]).max() < 1e-9 * np.abs(st.full[:9]).max()
    G = red.modal_geometric_stiffness(mesh, ff.shapes)
    for k in range(9):
        assert np.abs(st.full[k] - np.tensordot(st.coordinates[k], G, 1) - st.residual[k]).max() \
            <= 1e-9 * np.abs(st.full[k]).max()


@pytest.fixture(scope="module")
def spinning_cantilever():
    """case_x5's beam: hex20 (50, 2, 1), CB 20 modes clamped at the root, spin about z."""
    L, b, h = x5.LENGTHS
    mesh = structured_box(x5.LENGTHS, (50, 2, 1), "hexahedron20", material=x5.ALUMINIUM)
    K, M = fe.assemble_stiffness(mesh), fe.assemble_mass(mesh)
    cb = red.craig_bampton(K, M, mesh, ["root"], 20)
    EI = x5.ALUMINIUM.E * b * h ** 3 / 12.0
    T = math.sqrt(x5.ALUMINIUM.rho * b * h * L ** 4 / EI)
    spin = red.PRELOAD_NAMES.index("wz*wz")
    F = red.inertial_load_vectors(M, mesh.points)[spin : spin + 1]
    return mesh, K, M, cb, F, T


def test_southwell_coefficient_from_residual_stiffness_of_a_bending_basis(spinning_cantilever):
    """Bending modes only: the centrifugal stretch is not in the basis, the residual carries it all."""
    mesh, K, M, cb, F, T = spinning_cantilever
    P = cb.nodal_shapes()
    frac = (P ** 2).sum(axis=0) / (P ** 2).sum(axis=(0, 1))  # (3, nm): share of u_x, u_y, u_z
    bend = np.flatnonzero(frac[0] < 0.2)
    assert bend.size == cb.n_modes - 1  # the one axial mode (1274 Hz) is dropped
    sub = ModalBasis(kind=cb.kind, shapes=cb.shapes[:, bend], omega2=cb.omega2[bend], rigid_modes=cb.rigid_modes,
                     interfaces=cb.interfaces, reference=cb.reference)
    st = red.load_stiffening(K, M, mesh, sub, F)
    flap = np.flatnonzero(frac[2][bend] > 0.5)
    i1 = flap[0]
    # flapwise modes: the residual is the full centrifugal stiffness (bending shapes carry no stretch;
    # the lagwise static deflection of this off-axis beam, which the basis does carry, only couples
    # flap with torsion)
    d_res, d_full = np.diag(st.residual[0])[flap], np.diag(st.full[0])[flap]
    assert np.abs(d_res - d_full).max() < 1e-6 * np.abs(d_full).max()
    assert st.residual_fraction[0] > 0.4  # the stretch energy is not in the basis
    # omega^2 = omega_0^2 + K1 Omega^2 with mass-normalized shapes: K1 = Kg_res[1, 1]
    assert st.residual[0][i1, i1] == pytest.approx(SOUTHWELL_K1, rel=5e-3)
    lam = x5.flapwise_lambda(sub, st.residual[0], x5.GAMMA, T)
    assert np.allclose(lam, x5.LAMBDA_REF, rtol=5e-3)


def test_full_basis_needs_the_cubic_term_not_the_full_preload(spinning_cantilever):
    """With the axial mode in the basis the residual is small; Kg_res + a.G restores the table."""
    mesh, K, M, cb, F, T = spinning_cantilever
    st = red.load_stiffening(K, M, mesh, cb, F)
    assert st.residual_fraction[0] < 1e-3
    G = red.modal_geometric_stiffness(mesh, cb.shapes)
    Kg = st.residual[0] + np.tensordot(st.coordinates[0], G, 1)
    assert np.abs(Kg - st.full[0]).max() < 1e-9 * np.abs(st.full[0]).max()
    assert np.allclose(x5.flapwise_lambda(cb, Kg, x5.GAMMA, T), x5.LAMBDA_REF, rtol=5e-3)
    # the residual alone misses the stiffening the modal stretch carries
    assert x5.flapwise_lambda(cb, st.residual[0], [10.0], T)[0] < 0.8 * x5.LAMBDA_REF[5]
