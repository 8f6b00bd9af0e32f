"""3-D Timoshenko beam: rigid-body exactness with offsets, no shear locking (exact tip deflection
for any slenderness), simply supported Timoshenko frequencies (exact frequency equation), rigid
mass properties, geometric stiffness (closed-form Hermite matrix, Euler buckling), eccentric
(offset) beams, section shapes (Cowper's shear factors) and input errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla

from flexmb.errors import ModelError
from flexmb.fe.elements.dofs import DofMap
from flexmb.fe.elements import beam
from flexmb.fe.elements.assembly import (
    assemble_geometric_stiffness,
    assemble_mass,
    assemble_stiffness,
    element_stresses,
)
from flexmb.fe.mesh import BeamSection, FEMesh, Material, structured_line

STEEL = Material(210e9, 0.3, 7850.0, "steel")
G = STEEL.E / (2 * (1 + STEEL.nu))


def props(c=1, *, ky=5 / 6, kz=5 / 6, orient=(0.0, 0.0, 1.0), a=0.01, iy=2e-6, iz=1e-6, j=1.5e-6,
          offset_a=(0, 0, 0), offset_b=(0, 0, 0), centroid=(0, 0)):
    o = np.ones(c)
    return dict(E=STEEL.E * o, nu=STEEL.nu * o, rho=STEEL.rho * o, A=a * o, Iy=iy * o, Iz=iz * o, J=j * o,
                ky=ky * o, kz=kz * o, nsm=0 * o, polar=(iy + iz) * o, orientation=np.tile(orient, (c, 1)),
                centroid=np.tile(centroid, (c, 1)).astype(float), offset_a=np.tile(offset_a, (c, 1)).astype(float),
                offset_b=np.tile(offset_b, (c, 1)).astype(float))


def rigid_modes(points: np.ndarray) -> np.ndarray:
    """(6 n, 6) rigid motions of 6-DOF nodes: translations, then rotations about the origin."""
    return DofMap(np.full(len(points), 6)).rigid_body_modes(points)


@pytest.mark.parametrize("offsets", [False, True])
def test_free_element_rigid_modes(offsets):
    x = np.array([[0.1, 0.2, 0.3], [0.5, 0.6, 1.1]])
    kw = dict(offset_a=(0.01, -0.02, 0.03), offset_b=(0.0, 0.02, -0.01), centroid=(0.005, -0.01)) if offsets else {}
    p = props(orient=(1.0, 0.0, 0.0), **kw)
    k = beam.beam_stiffness(x[None], p)[0]
    m = beam.beam_mass(x[None], p)[0]
    r = rigid_modes(x)
    assert np.abs(k @ r).max() < 1e-11 * np.abs(k).max()
    ev = np.linalg.eigvalsh(k)
    assert np.sum(np.abs(ev) < 1e-10 * ev.max()) == 6
    assert np.linalg.eigvalsh(m).min() > 0
    assert np.abs(k - k.T).max() < 1e-13 * np.abs(k).max()


@pytest.mark.parametrize("phi_scale", [0.0, 1.0, 30.0])
def test_interpolation_energy_equals_the_exact_stiffness(phi_scale):
    """The interdependent interpolation that the mass and geometric stiffness use gives, integrated
    numerically, the closed-form Timoshenko stiffness (so all three matrices share one field)."""
    L = np.array([0.7])
    ei, kga = 2.0e5, 1.0e6 / max(phi_scale, 1e-300) if phi_scale else np.inf
    phi = np.array([12 * ei / (kga * L[0] ** 2)]) if phi_scale else np.zeros(1)
    v, dv, th, wl = beam._plane(L, phi)
    xq = 0.5 * (1 + beam._XI) * L[0]
    # theta' and gamma = v' - theta from the coefficients (exact polynomials at the points)
    dth = np.gradient(th[0], xq, axis=0, edge_order=2)  # quadratic theta: exact differences
    gamma = dv[0] - th[0]
    k_num = ei * np.einsum("q,qi,qj->ij", wl[0], dth, dth)
    if phi_scale:
        k_num += kga * np.einsum("q,qi,qj->ij", wl[0], gamma, gamma)
    else:
        assert np.abs(gamma).max() < 1e-12
    k_exact = beam._bending_stiffness(np.array([ei]), L, phi)[0]
    assert np.abs(k_num - k_exact).max() < 1e-9 * np.abs(k_exact).max()
    assert v.shape == (1, 4, 4)


@pytest.mark.parametrize("slender", [5.0, 1000.0])
def test_cantilever_tip_deflection_is_exact_without_locking(slender):
    """One element and ten: tip deflection P L^3 / (3 E I) + P L / (k G A) to round-off, at L/h = 5
    and 1000 (an element that locks would be far too stiff at 1000)."""
    h = 0.02
    L = slender * h
    sec = BeamSection.rectangle(0.03, h, orientation=(0, 1, 0))
    ky, kz = sec.shear_factors(STEEL.nu)
    for n in (1, 10):
        mesh = structured_line((0, 0, 0), (L, 0, 0), n, sec, material=STEEL)
        k = assemble_stiffness(mesh).toarray()
        free = np.arange(6, mesh.n_dofs)
        f = np.zeros(mesh.n_dofs)
        f[6 * n + 2] = 100.0  # tip force along z (local z: bending about y, Iy)
        u = np.zeros(mesh.n_dofs)
        u[free] = np.linalg.solve(k[np.ix_(free, free)], f[free])
        exact = 100.0 * L**3 / (3 * STEEL.E * sec.iy) + 100.0 * L / (kz * G * sec.area)
        assert u[6 * n + 2] == pytest.approx(exact, rel=1e-9)
        assert u[6 * n + 4] == pytest.approx(-100.0 * L**2 / (2 * STEEL.E * sec.iy), rel=1e-9)


def test_simply_supported_timoshenko_frequencies():
    """A thick simply supported beam (L/h = 5): the first three bending frequencies against the exact
    Timoshenko frequency equation (shear and rotary inertia), det [[kGA k^2 - rho A w^2, -kGA k],
    [-kGA k, EI k^2 + kGA - rho I w^2]] = 0, k = n pi / L."""
    L, b, h = 1.0, 0.1, 0.2
    sec = BeamSection.rectangle(b, h, orientation=(0, 1, 0))
    _, kz = sec.shear_factors(STEEL.nu)
    n_el = 40
    mesh = structured_line((0, 0, 0), (L, 0, 0), n_el, sec, material=STEEL)
    k = assemble_stiffness(mesh).toarray()
    m = assemble_mass(mesh).toarray()
    # x-z plane only: w and theta_y; w = 0 at both ends (pinned)
    keep = [6 * a + d for a in range(n_el + 1) for d in (2, 4) if not (d == 2 and a in (0, n_el))]
    w2 = sla.eigh(k[np.ix_(keep, keep)], m[np.ix_(keep, keep)], eigvals_only=True)[:3]
    exact = []
    for mode in (1, 2, 3):
        kn = mode * math.pi / L
        kga, ei, ra, ri = kz * G * sec.area, STEEL.E * sec.iy, STEEL.rho * sec.area, STEEL.rho * sec.iy
        # (kga kn^2 - ra w)(ei kn^2 + kga - ri w) - kga^2 kn^2 = 0, quadratic in w = omega^2
        qa, qb = ra * ri, -(ra * (ei * kn**2 + kga) + ri * kga * kn**2)
        qc = kga * kn**2 * (ei * kn**2 + kga) - kga**2 * kn**2
        exact.append((-qb - math.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa))
    assert np.allclose(np.sqrt(w2), np.sqrt(exact), rtol=2e-3)  # discretization: 2e-5, 3e-4, 1e-3
    # and the shear effect is large here: Euler-Bernoulli's first frequency is 4 % higher
    eb = (math.pi / L) ** 2 * math.sqrt(STEEL.E * sec.iy / (STEEL.rho * sec.area))
    assert eb / math.sqrt(exact[0]) > 1.03


def test_rigid_body_mass_properties():
    L = 2.0
    sec = BeamSection.rectangle(0.04, 0.02, orientation=(0, 0, 1), nsm=0.5)
    mesh = structured_line((0, 0, 0), (L, 0, 0), 3, sec, material=STEEL)
    r = rigid_modes(mesh.points)
    mr = r.T @ (assemble_mass(mesh) @ r)
    mu = STEEL.rho * sec.area + 0.5
    assert mr[0, 0] == pytest.approx(mu * L, rel=1e-13)
    assert mr[1, 5] == pytest.approx(mu * L**2 / 2, rel=1e-12)  # first moment
    # about global z (= local y: orientation (0, 0, 1)) through the end: int mu x^2 + rho Iy L
    assert mr[5, 5] == pytest.approx(mu * L**3 / 3 + STEEL.rho * sec.iy * L, rel=1e-12)
    assert mr[4, 4] == pytest.approx(mu * L**3 / 3 + STEEL.rho * sec.iz * L, rel=1e-12)
    assert mr[3, 3] == pytest.approx(STEEL.rho * (sec.iy + sec.iz) * L, rel=1e-12)


def test_geometric_stiffness_matches_the_hermite_matrix_and_buckling():
    """phi = 0: N/(30 L) [[36, 3L, -36, 3L], [3L, 4L^2, -3L, -L^2], ...] (Przemieniecki 1968); a
    cantilever under compression buckles at pi^2 E I / (4 L^2)."""
    L = 0.8
    x = np.array([[[0, 0, 0], [L, 0, 0]]], float)
    p = props(ky=np.inf, kz=np.inf, orient=(0, 1, 0))
    stress = np.zeros((1, 1, 6))
    stress[0, 0, 0] = 1.0 / p["A"][0]  # N = 1
    kg = beam.beam_geometric(x, p, stress)[0]
    ref = np.array([[36, 3 * L, -36, 3 * L], [3 * L, 4 * L * L, -3 * L, -L * L],
                    [-36, -3 * L, 36, -3 * L], [3 * L, -L * L, -3 * L, 4 * L * L]]) / (30 * L)
    assert np.abs(kg[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])] - ref).max() < 1e-13
    sec = BeamSection.circle(0.01)
    n = 20
    mesh = structured_line((0, 0, 0), (1.0, 0, 0), n, sec, material=STEEL)
    u = np.zeros(mesh.n_dofs)
    u[0::6] = -1e-4 * mesh.points[:, 0]  # a uniform axial shortening: compression
    s = element_stresses(mesh, u)
    kgm = assemble_geometric_stiffness(mesh, s).toarray()
    force = -STEEL.E * sec.area * 1e-4
    k = assemble_stiffness(mesh).toarray()
    free = np.arange(6, mesh.n_dofs)
    mu = sla.eigh(-kgm[np.ix_(free, free)], k[np.ix_(free, free)], eigvals_only=True)[-1]  # 1 / load factor
    assert -force / mu == pytest.approx(math.pi**2 * STEEL.E * sec.iy / 4, rel=2e-3)


def test_eccentric_beam_under_axial_node_load():
    """A cantilever whose centroid lies e above its node line, loaded axially at the tip node: the
    moment P e bends it, tip rotation P e L / (E I) and deflection P e L^2 / (2 E I)."""
    L, e, force = 1.0, 0.05, 1000.0
    sec = BeamSection(0.01, 2e-6, 2e-6, 3e-6, orientation=(0, 1, 0), centroid=(0.0, e))
    mesh = structured_line((0, 0, 0), (L, 0, 0), 4, sec, material=STEEL)
    k = assemble_stiffness(mesh).toarray()
    f = np.zeros(mesh.n_dofs)
    f[6 * 4] = force
    free = np.arange(6, mesh.n_dofs)
    u = np.zeros(mesh.n_dofs)
    u[free] = np.linalg.solve(k[np.ix_(free, free)], f[free])
    theta = force * e * L / (STEEL.E * 2e-6)
    assert abs(u[6 * 4 + 4]) == pytest.approx(theta, rel=1e-9)
    assert abs(u[6 * 4 + 2]) == pytest.approx(theta * L / 2, rel=1e-9)


def test_section_shapes():
    r = BeamSection.rectangle(0.2, 0.1)
    assert (r.area, r.iy, r.iz) == pytest.approx((0.02, 0.2 * 0.1**3 / 12, 0.2**3 * 0.1 / 12))
    assert r.j == pytest.approx(0.2 * 0.1**3 * 0.229, rel=0.01)  # Roark: a/b = 2 -> beta = 0.229
    assert r.shear_factors(0.3)[0] == pytest.approx(10 * 1.3 / 15.3)  # Cowper 1966
    c = BeamSection.circle(0.05)
    assert c.j == pytest.approx(math.pi * 0.05**4 / 2) and c.shear_factors(0.3)[0] == pytest.approx(7.8 / 8.8)
    p = BeamSection.pipe(0.05, 0.005)
    assert p.area == pytest.approx(math.pi * (0.05**2 - 0.045**2))
    # thin pipe: Cowper tends to 2 (1 + nu) / (4 + 3 nu)
    thin = BeamSection.pipe(1.0, 1e-4)
    assert thin.shear_factors(0.3)[0] == pytest.approx(2.6 / 4.9, rel=1e-3)
    b = BeamSection.box(0.1, 0.2, 0.01, 0.01, 0.01, 0.01)
    assert b.area == pytest.approx(0.1 * 0.2 - 0.08 * 0.18)
    assert b.iy == pytest.approx((0.1 * 0.2**3 - 0.08 * 0.18**3) / 12)
    assert b.j == pytest.approx(4 * (0.09 * 0.19) ** 2 / (2 * 0.09 / 0.01 + 2 * 0.19 / 0.01))
    i = BeamSection.i_section(0.1, 0.2, 0.1, 0.1, 0.01, 0.01, 0.006)
    assert i.centroid == pytest.approx((0.0, 0.0))  # symmetric, origin at mid-height
    assert i.iy == pytest.approx((0.1 * 0.2**3 - 0.094 * 0.18**3) / 12)


def test_bad_beams_are_refused():
    unsym = BeamSection(0.01, 2e-6, 1e-6, 1e-6)  # no orientation
    mesh = structured_line((0, 0, 0), (1, 0, 0), 2, unsym, material=STEEL)
    with pytest.raises(ModelError, match="orientation"):
        assemble_stiffness(mesh)
    along = BeamSection(0.01, 2e-6, 1e-6, 1e-6, orientation=(1, 0, 0))
    with pytest.raises(ModelError, match="along their axis"):
        assemble_stiffness(structured_line((0, 0, 0), (1, 0, 0), 2, along, material=STEEL))
    with pytest.raises(ModelError, match="no section"):
        assemble_stiffness(FEMesh(points=[[0, 0, 0], [1, 0, 0]], cells={}, beams={"line": [[0, 1]]},
                                  materials={"*": STEEL}))
