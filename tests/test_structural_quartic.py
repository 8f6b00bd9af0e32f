"""Quartic ("full") stiffening of shells and beams (issue 20, stage 3): the membrane Green strain of the
shells' mid-surface and of the beams' axis in the cubic and quartic modal strain energy.

Checked against an element energy written here independently (Hermite slopes of a straight
Euler-Bernoulli beam, bilinear gradients of a rectangular plate, the library's linear K and stresses),
its finite differences, the geometric stiffness (the cubic term two ways), and the closed form of a
beam and a plate strip with immovable clamped ends (the von Karman string stiffening
``H = E A / L (int phi'^2 dx)^2`` of the first bending mode)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from flexmb.fe import reduction as red
from flexmb.fe.elements.assembly import assemble_mass, assemble_stiffness, element_stresses
from flexmb.fe.mesh import BeamSection, Material, structured_line, structured_plate
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.reduction.condensation import quartic_condensation
from flexmb.fe.reduction.structural_pairs import structural_pair_quadrature, structural_strain_energy

STEEL = Material(2.1e11, 0.3, 7850.0, "steel")
ALU0 = Material(7e10, 0.0, 2700.0, "aluminium, nu = 0")
RADIUS = 0.01
#: a round bar without shear deformation (Hermite cubic deflection)
BAR = BeamSection.circle(RADIUS, shear=(math.inf, math.inf))


def _hermite_slopes(h: float, xi: np.ndarray) -> np.ndarray:
    """d/dx of the Hermite functions (v_a, v'_a, v_b, v'_b) on an element of length h at xi in [0, 1], (q, 4)."""
    return np.stack([(-6 * xi + 6 * xi ** 2) / h, 1 - 4 * xi + 3 * xi ** 2, (6 * xi - 6 * xi ** 2) / h,
                     -2 * xi + 3 * xi ** 2], axis=1)


def beam_green_energy(mesh, u: np.ndarray, mat: Material, A: float, Ip: float) -> float:
    """Membrane Green terms of straight Euler-Bernoulli beams along x (written here, not the library's):
    ``sum_gauss w [1/2 N E_nl + 1/8 E A E_nl^2]``, ``E_nl = u'^2 + v'^2 + w'^2 + (Ip/A) theta_x'^2``,
    ``N = E A u'``; ``v`` Hermite on (v, theta_z), ``w`` on (w, -theta_y)."""
    xg, wg = np.polynomial.legendre.leggauss(4)
    xi, w = 0.5 * (1 + xg), 0.5 * wg
    total = 0.0
    off = mesh.dof_map.offset
    for a, b in mesh.beams["line"]:  # a test oracle: a loop is fine here
        h = mesh.points[b, 0] - mesh.points[a, 0]
        da, db = u[off[a]:off[a] + 6], u[off[b]:off[b] + 6]
        s = _hermite_slopes(h, xi)
        du = (db[0] - da[0]) / h
        dv = s @ np.array([da[1], da[5], db[1], db[5]])
        dw = s @ np.array([da[2], -da[4], db[2], -db[4]])
        dt = (db[3] - da[3]) / h
        e_nl = du ** 2 + dv ** 2 + dw ** 2 + Ip / A * dt ** 2
        ea = mat.E * A
        total += float(np.sum(w * h * (0.5 * ea * du * e_nl + 0.125 * ea * e_nl ** 2)))
    return total


def plate_green_energy(mesh, u: np.ndarray, mat: Material, t: float) -> float:
    """Membrane Green terms of rectangular quads in the plane z = const (written here): at the 2 x 2
    Gauss points ``1/2 t sigma_mid . E_nl + 1/8 t E_nl^T Q E_nl`` (Voigt, engineering shear), the
    gradients of the bilinear translations, ``sigma_mid`` the library's mid-surface stress."""
    conn = mesh.shells["quad"]
    sig = element_stresses(mesh, u)["quad"]  # (c, 4, 6) at the MITC4 stiffness points
    g = 1 / math.sqrt(3)
    pts = [(-g, -g), (g, -g), (g, g), (-g, g)]
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]])
    f = mat.E / (1 - mat.nu ** 2)
    Q = f * np.array([[1, mat.nu, 0], [mat.nu, 1, 0], [0, 0, (1 - mat.nu) / 2]])
    un = np.stack([u[mesh.dof_map.translations(c)] for c in conn])  # (c, 4, 3)
    total = 0.0
    for e, c in enumerate(conn):  # a test oracle
        x = mesh.points[c, :2]
        lx, ly = x[:, 0].max() - x[:, 0].min(), x[:, 1].max() - x[:, 1].min()
        for p, (s1, s2) in enumerate(pts):
            dn_dx = corners[:, 0] * (1 + corners[:, 1] * s2) / 4 * 2 / lx
            dn_dy = corners[:, 1] * (1 + corners[:, 0] * s1) / 4 * 2 / ly
            gx, gy = dn_dx @ un[e], dn_dy @ un[e]
            E = np.array([gx @ gx, gy @ gy, 2 * gx @ gy])
            s = sig[e, p]
            total += lx * ly / 4 * (0.5 * t * (s[0] * E[0] + s[1] * E[1] + s[5] * E[2]) + 0.125 * t * E @ Q @ E)
    return total


def _bar(n: int = 12):
    mesh = structured_line((0, 0, 0), (1.0, 0, 0), n, BAR, material=STEEL)
    A, Ip = math.pi * RADIUS ** 2, math.pi * RADIUS ** 4 / 2
    return mesh, lambda u: beam_green_energy(mesh, u, STEEL, A, Ip)


def _plate():
    mesh = structured_plate((1.0, 0.4), (5, 2), thickness=0.02, material=STEEL)
    return mesh, lambda u: plate_green_energy(mesh, u, STEEL, 0.02)


@pytest.mark.parametrize("case", [_bar, _plate])
def test_element_green_energy_is_the_independent_one(case):
    """The library's nonlinear membrane energy of shells and beams equals the one written here, at
    random displacements (all six DOFs) small to large."""
    mesh, oracle = case()
    rng = np.random.default_rng(4)
    for amp in (1e-4, 1e-2, 0.3):
        u = amp * rng.standard_normal(mesh.n_dofs)
        assert structural_strain_energy(mesh, u) == pytest.approx(oracle(u), rel=1e-11)


@pytest.mark.parametrize("case", [_bar, _plate])
def test_modal_cubic_and_quartic_terms_are_the_element_energy(case):
    """K, G, H (raw) of free-free modes reproduce the element energy of the field Phi q to round-off
    (q from small to huge), the cubic term is the geometric stiffness's (computed two ways), and the
    modal force and tangent are the finite differences of the element energy."""
    mesh, oracle = case()
    K, M = assemble_stiffness(mesh), assemble_mass(mesh)
    basis = red.free_free_modes(K, M, 5, points=mesh.points, dof_map=mesh.dof_map)
    P = basis.shapes
    nm = P.shape[1]
    Kr = P.T @ (K @ P)
    G = red.modal_geometric_stiffness(mesh, P)
    H = red.modal_quartic_stiffness(mesh, P)
    _, _, _, Gp = structural_pair_quadrature(mesh, P)
    iu, ju = np.triu_indices(nm)
    assert np.abs(G[:, iu, ju] - Gp).max() < 1e-12 * np.abs(G).max()
    assert np.abs(G).max() > 0 and np.abs(H).max() > 0

    def energy(q):
        u = P @ q
        return 0.5 * u @ (K @ u) + oracle(u)

    rng = np.random.default_rng(5)
    for amp in (1e-3, 1e-1, 10.0):
        q = amp * rng.standard_normal(nm)
        assert red.modal_strain_energy(q, Kr, G, H) == pytest.approx(energy(q), rel=1e-10)
    q = rng.standard_normal(nm) * np.abs(np.diag(Kr)) ** -0.25
    h = 1e-5 * np.abs(q).max()
    E = np.eye(nm)
    f_fd = np.array([(energy(q + h * e) - energy(q - h * e)) / (2 * h) for e in E])
    f = red.modal_elastic_force(q, Kr, G, H)
    assert np.abs(f - f_fd).max() < 1e-6 * np.abs(f).max()
    assert np.abs(f - red.modal_elastic_force(q, Kr, G)).max() > 1e-3 * np.abs(f).max()  # H matters here


def test_pair_loads_are_the_mixed_derivative_of_the_element_energy():
    """b_ij . v: the part of the element energy of Phi q + s v linear in s and quadratic in q (warped
    quadrilaterals and triangles: the facets' rigid links are in)."""
    for cell in ("quad", "triangle"):
        mesh = structured_plate((1.0, 0.5), (4, 2), cell, thickness=0.02, material=STEEL)
        pts = mesh.points.copy()
        pts[7, 2] += 0.03
        mesh = dataclasses.replace(mesh, points=pts)
        K, M = assemble_stiffness(mesh), assemble_mass(mesh)
        P = red.free_free_modes(K, M, 4, points=mesh.points, dof_map=mesh.dof_map).shapes
        nm = P.shape[1]
        iu, ju = np.triu_indices(nm)
        _, Bm, Bk, _ = structural_pair_quadrature(mesh, P, loads=True)
        rng = np.random.default_rng(1)
        v = 1e-3 * rng.standard_normal(mesh.n_dofs)
        q = rng.standard_normal(nm)

        def slope(qq, h=1e-6):  # d/ds of the energy of Phi qq + s v at s = 0
            e = lambda u: 0.5 * u @ (K @ u) + structural_strain_energy(mesh, u)
            return (e(P @ qq + h * v) - e(P @ qq - h * v)) / (2 * h)

        t = 0.1
        second = (slope(t * q) + slope(-t * q) - 2 * slope(0 * q)) / (2 * t * t)
        w = np.where(iu == ju, 0.5, 1.0) * q[iu] * q[ju]
        assert w @ ((Bm + Bk) @ v) == pytest.approx(second, rel=1e-7)


def clamped_clamped_stretch(E_area: float, mass_per_length: float, length: float) -> float:
    """``E A / L (int phi'^2 dx)^2`` of the first clamped-clamped bending mode, mass-normalized
    (``int m phi^2 dx = 1``): the quartic coefficient of a beam whose ends do not move axially."""
    bl = brentq(lambda x: math.cos(x) * math.cosh(x) - 1.0, 4.0, 5.0)
    b = bl / length
    sig = (math.cosh(bl) - math.cos(bl)) / (math.sinh(bl) - math.sin(bl))
    phi = lambda x: math.cosh(b * x) - math.cos(b * x) - sig * (math.sinh(b * x) - math.sin(b * x))
    dphi = lambda x: b * (math.sinh(b * x) + math.sin(b * x) - sig * (math.cosh(b * x) - math.cos(b * x)))
    norm = mass_per_length * quad(lambda x: phi(x) ** 2, 0, length, limit=200)[0]
    slope2 = quad(lambda x: dphi(x) ** 2, 0, length, limit=200)[0] / norm
    return E_area / length * slope2 ** 2


@pytest.mark.parametrize("kind, n, tol", [("beam", 40, 5e-3), ("beam", 80, 5e-4), ("shell strip", 40, 1e-3)])
def test_relaxed_quartic_of_a_beam_with_immovable_ends_is_the_string_stiffening(kind, n, tol):
    """Beams and a shell strip (n x 2 MITC4, nu = 0) clamped at both ends: the relaxed quartic
    coefficient of the first bending mode (the axial displacement free in between, the ends held) is
    the uniform-stretch value E A / L (int phi'^2)^2 (closed form with the analytic mode); the raw one
    (axial displacement held at zero everywhere) is E A int phi'^4 dx, 1.47 x larger. Measured: beam
    +1.5 %, +0.33 %, +0.039 % at 20, 40, 80 elements (its axial strain is constant per element, the
    stretch of the deflection is not), shell strip -0.008 % (incompatible membrane modes)."""
    L = 1.0
    if kind == "beam":
        mesh = structured_line((0, 0, 0), (L, 0, 0), n, BAR, material=STEEL)
        EA, m = STEEL.E * math.pi * RADIUS ** 2, STEEL.rho * math.pi * RADIUS ** 2
        ends, axis = np.concatenate([mesh.node_sets["start"], mesh.node_sets["end"]]), 1
    else:
        b, t = 0.05, 0.004
        mesh = structured_plate((L, b), (n, 2), thickness=t, material=ALU0)
        EA, m = ALU0.E * b * t, ALU0.rho * b * t
        ends, axis = np.concatenate([mesh.node_sets["xmin"], mesh.node_sets["xmax"]]), 2
    K, M = assemble_stiffness(mesh), assemble_mass(mesh)
    basis = red.clamped_modes(K, M, ends, 1, dof_map=mesh.dof_map)
    shape = np.abs(basis.nodal_shapes()[:, :, 0]).max(axis=0)
    assert shape[axis] > 1e6 * np.delete(shape, axis).max()  # bending along `axis`
    qc = quartic_condensation(K, M, mesh, basis)
    ref = clamped_clamped_stretch(EA, m, L)
    assert qc.relaxed[0, 0, 0, 0] == pytest.approx(ref, rel=tol)
    assert qc.raw[0, 0, 0, 0] == pytest.approx(1.47 * ref, rel=0.01)
