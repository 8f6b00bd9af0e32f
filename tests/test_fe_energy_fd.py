"""Finite-difference checks of the shell and beam element matrices against energies coded here
independently of the elements (issue 20, acceptance: "FD checks of the new element stiffness, mass
and geometric stiffness").

* Shell (MITC4 / MITC3) consistent mass = Hessian of the kinetic energy of the 3-D velocity field
  ``v + omega x (z n)`` integrated through the thickness ``[z0 - t/2, z0 + t/2]`` (offset ``z0``)
  plus the non-structural mass, and the drilling inertia the element adds (``I2 omega_n^2``, for
  definiteness); quadrature of the reference is exact (Gauss 3x3 on the bilinear map, edge midpoints
  on the triangle).
* Beam consistent mass and geometric stiffness = Hessians of the kinetic energy and of the axial
  force's work on the axis' Green strain, with the published interdependent Timoshenko shape
  functions (Friedman and Kosmatka 1993, Comput. Struct. 47(3), eq. 15-16) written out here, in a
  general orientation with end offsets and a centroid offset (rigid links ``u + theta x e``).

The Hessians are central second differences of the quadratic energies (exact up to round-off).
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.fe.elements import beam, shell

RHO, E, NU = 7850.0, 210e9, 0.3
ROT = np.linalg.qr(np.random.default_rng(11).normal(size=(3, 3)))[0]


def fd_hessian(energy, n: int, h: float = 1e-3) -> np.ndarray:
    eye = np.eye(n)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            a, b = h * eye[i], h * eye[j]
            out[i, j] = out[j, i] = (energy(a + b) - energy(a - b) - energy(b - a) + energy(-a - b)) / (4 * h * h)
    return out


# ------------------------------------------------------------------------------------------ shell

SHELLS = {
    "quad": np.array([[0, 0, 0], [1.2, 0.1, 0], [1.0, 0.9, 0.0], [-0.1, 1.1, 0]]),
    "triangle": np.array([[0, 0, 0], [1.2, 0.1, 0], [0.3, 0.9, 0.0]]),
}


def shell_kinetic_energy(kind, x, t, z0, nsm):
    """The function ``d -> 0.5 int_A int_z rho |v + omega x z n|^2 dz dA + 0.5 int_A nsm |v|^2 + I2
    (omega . n)^2 dA`` of the nodal DOFs ``d (6k,)``."""
    k = len(x)
    n = np.cross(x[1] - x[0], x[2] - x[0])
    n /= np.linalg.norm(n)
    e1 = (x[1] - x[0]) / np.linalg.norm(x[1] - x[0])
    e2 = np.cross(n, e1)
    xy = np.column_stack([x @ e1, x @ e2])
    if kind == "quad":
        g, w = np.polynomial.legendre.leggauss(3)
        pts = [(a, b, wa * wb) for a, wa in zip(g, w) for b, wb in zip(g, w)]
        s = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], float)

        def shape(a, b):
            nn = 0.25 * (1 + s[:, 0] * a) * (1 + s[:, 1] * b)
            dn = 0.25 * np.column_stack([s[:, 0] * (1 + s[:, 1] * b), s[:, 1] * (1 + s[:, 0] * a)])
            return nn, abs(np.linalg.det(dn.T @ xy))
    else:
        area = 0.5 * abs(np.linalg.det(np.column_stack([xy[1] - xy[0], xy[2] - xy[0]])))
        pts = [(0.5, 0.5, 1 / 3), (0.0, 0.5, 1 / 3), (0.5, 0.0, 1 / 3)]

        def shape(a, b):
            return np.array([1 - a - b, a, b]), area
    zg, zw = np.polynomial.legendre.leggauss(3)
    zs, zws = z0 + 0.5 * t * zg, 0.5 * t * zw
    i2 = RHO * (t**3 / 12 + t * z0**2)
    shapes = np.array([shape(a, b)[0] for a, b, _ in pts])  # (q, k)
    weights = np.array([wt * shape(a, b)[1] for a, b, wt in pts])  # (q,)

    def energy(d):
        dn = d.reshape(k, 6)
        v, om = shapes @ dn[:, :3], shapes @ dn[:, 3:]  # (q, 3)
        vz = v[:, None, :] + zs[None, :, None] * np.cross(om, n)[:, None, :]  # (q, z, 3)
        dens = RHO * np.einsum("qzi,qzi,z->q", vz, vz, zws) + nsm * np.sum(v * v, axis=1) + i2 * (om @ n) ** 2
        return 0.5 * weights @ dens

    return energy


@pytest.mark.parametrize("kind", ["quad", "triangle"])
def test_shell_mass_is_the_hessian_of_the_kinetic_energy(kind):
    x = SHELLS[kind] @ ROT.T
    t, z0, nsm = 0.02, 0.006, 3.0
    o = np.ones(1)
    props = shell.ShellProps(E * o, NU * o, RHO * o, t * o, z0 * o, 5 / 6 * o, nsm * o)
    m = shell.shell_mass(kind, x[None], props)[0]
    ref = fd_hessian(shell_kinetic_energy(kind, x, t, z0, nsm), 6 * len(x))
    assert np.abs(m - ref).max() < 1e-8 * np.abs(m).max()


# ------------------------------------------------------------------------------------------- beam


def fk_shapes(xi, L, phi):
    """Friedman-Kosmatka interdependent shape functions of one bending plane at xi = x / L:
    deflection ``(N1..N4)``, its slope ``d/dx``, and the section rotation ``(Nt1..Nt4)``, for the
    DOFs (v_a, theta_a, v_b, theta_b)."""
    f = 1.0 / (1.0 + phi)
    nv = f * np.array([2 * xi**3 - 3 * xi**2 - phi * xi + 1 + phi,
                       L * (xi**3 - (2 + phi / 2) * xi**2 + (1 + phi / 2) * xi),
                       -(2 * xi**3 - 3 * xi**2 - phi * xi),
                       L * (xi**3 - (1 - phi / 2) * xi**2 - phi / 2 * xi)])
    dv = f * np.array([6 * xi**2 - 6 * xi - phi,
                       L * (3 * xi**2 - (4 + phi) * xi + 1 + phi / 2),
                       -(6 * xi**2 - 6 * xi - phi),
                       L * (3 * xi**2 - (2 - phi) * xi - phi / 2)]) / L
    nt = f * np.array([6 / L * (xi**2 - xi), 3 * xi**2 - (4 + phi) * xi + 1 + phi,
                       -6 / L * (xi**2 - xi), 3 * xi**2 - (2 - phi) * xi])
    return nv, dv, nt


BEAM = dict(A=3e-3, Iy=5e-6, Iz=3e-6, J=2e-6, ky=0.7, kz=0.8, nsm=2.5)
NODES = np.array([[0.1, -0.2, 0.3], [0.5, 0.1, 0.2]])  # a short beam: phi ~ 0.2 .. 0.5
ORIENT = np.array([0.3, 1.0, -0.4])
OFF_A, OFF_B, CENTROID = np.array([0.0, 0.01, 0.02]), np.array([0.01, -0.02, 0.0]), np.array([0.004, -0.003])


def beam_props():
    o = np.ones(1)
    p = {k: v * o for k, v in BEAM.items()}
    p.update(E=E * o, nu=NU * o, rho=RHO * o, polar=(BEAM["Iy"] + BEAM["Iz"]) * o, orientation=ORIENT[None],
             centroid=CENTROID[None], offset_a=OFF_A[None], offset_b=OFF_B[None])
    return p


def beam_fields(d):
    """Local axis, length, and the fields (u, v, w, tx, ty, tz, u', v', w', tx') at Gauss points."""
    xa, xb = NODES[0] + OFF_A, NODES[1] + OFF_B
    ex = (xb - xa) / np.linalg.norm(xb - xa)
    ey = ORIENT - (ORIENT @ ex) * ex
    ey /= np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    R = np.array([ex, ey, ez])
    L = np.linalg.norm(xb - xa)
    ends = []
    for node, off in ((0, OFF_A), (1, OFF_B)):
        e = off + CENTROID[0] * ey + CENTROID[1] * ez
        u, th = d[6 * node : 6 * node + 3], d[6 * node + 3 : 6 * node + 6]
        ends.append((R @ (u + np.cross(th, e)), R @ th))
    (ua, ta), (ub, tb) = ends
    G = E / (2 * (1 + NU))
    phi_y = 12 * E * BEAM["Iz"] / (BEAM["ky"] * G * BEAM["A"] * L**2)
    phi_z = 12 * E * BEAM["Iy"] / (BEAM["kz"] * G * BEAM["A"] * L**2)
    g, w = np.polynomial.legendre.leggauss(8)
    xi, wl = 0.5 * (g + 1), 0.5 * w * L
    nv, dv, nt = fk_shapes(xi, L, phi_y)
    dof_y = np.array([ua[1], ta[2], ub[1], tb[2]])  # x-y plane: (v, theta_z)
    v, vp, tz = dof_y @ nv, dof_y @ dv, dof_y @ nt
    nv, dv, nt = fk_shapes(xi, L, phi_z)
    dof_z = np.array([ua[2], -ta[1], ub[2], -tb[1]])  # x-z plane: (w, psi = -theta_y)
    wz, wp, ty = dof_z @ nv, dof_z @ dv, -(dof_z @ nt)
    lin = lambda a, b: (1 - xi) * a + xi * b  # noqa: E731
    u, tx = lin(ua[0], ub[0]), lin(ta[0], tb[0])
    return wl, L, (u, v, wz, tx, ty, tz, (ub[0] - ua[0]) / L, vp, wp, (tb[0] - ta[0]) / L)


def beam_kinetic_energy(d):
    wl, _, (u, v, w, tx, ty, tz, *_rest) = beam_fields(d)
    mu = RHO * BEAM["A"] + BEAM["nsm"]
    dens = mu * (u**2 + v**2 + w**2) + RHO * (BEAM["Iz"] * tz**2 + BEAM["Iy"] * ty**2 + (BEAM["Iy"] + BEAM["Iz"]) * tx**2)
    return 0.5 * wl @ dens


def beam_prestress_work(force, d):
    wl, _, (*_rest, up, vp, wp, txp) = beam_fields(d)
    polar = BEAM["Iy"] + BEAM["Iz"]
    return 0.5 * force * (wl @ (up**2 + vp**2 + wp**2 + polar / BEAM["A"] * txp**2))


def test_beam_mass_is_the_hessian_of_the_kinetic_energy():
    p = beam_props()
    m = beam.beam_mass(NODES[None], p)[0]
    ref = fd_hessian(beam_kinetic_energy, 12)
    _, L, _ = beam_fields(np.zeros(12))
    G = E / (2 * (1 + NU))
    assert 12 * E * BEAM["Iz"] / (BEAM["ky"] * G * BEAM["A"] * L**2) > 0.1  # shear deformation matters
    assert np.abs(m - ref).max() < 1e-8 * np.abs(m).max()


def test_beam_geometric_stiffness_is_the_hessian_of_the_prestress_work():
    p = beam_props()
    force = -2.5e4  # N, compression
    xa, xb = NODES[0] + OFF_A, NODES[1] + OFF_B
    ex = (xb - xa) / np.linalg.norm(xb - xa)
    sig = force / BEAM["A"] * np.outer(ex, ex)
    stress = np.array([[[sig[0, 0], sig[1, 1], sig[2, 2], sig[1, 2], sig[0, 2], sig[0, 1]]]])
    kg = beam.beam_geometric(NODES[None], p, stress)[0]
    ref = fd_hessian(lambda d: beam_prestress_work(force, d), 12)
    assert np.abs(kg - ref).max() < 1e-7 * np.abs(kg).max()
