"""Flat shells MITC4 / MITC3: free-element eigenvalues, rigid-body exactness (also warped), membrane
and bending patch tests on distorted meshes, the geometric stiffness as the second derivative of
the prestress's work (finite differences) and plate buckling, rigid-body mass properties with an
offset, surface stresses, and the free square plate against NAFEMS FV12."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from flexmb.fe import reduction as red
from flexmb.fe.elements.dofs import DofMap
from flexmb.fe.elements import shell
from flexmb.fe.elements.assembly import (
    assemble_geometric_stiffness,
    assemble_mass,
    assemble_stiffness,
    element_stresses,
    shell_surface_stresses,
)
from flexmb.fe.mesh import FEMesh, Material, ShellSection, structured_plate

STEEL = Material(210e9, 0.3, 7850.0, "steel")
ROT = np.linalg.qr(np.random.default_rng(5).normal(size=(3, 3)))[0]  # a general orientation


def props(c: int, t: float = 0.01, z0: float = 0.0) -> shell.ShellProps:
    o = np.ones(c)
    return shell.ShellProps(STEEL.E * o, STEEL.nu * o, STEEL.rho * o, t * o, z0 * o, 5 / 6 * o, 0 * o)


def rigid_modes(points: np.ndarray) -> np.ndarray:
    """(6 n, 6) rigid motions of 6-DOF nodes: translations, then rotations about the origin."""
    return DofMap(np.full(len(points), 6)).rigid_body_modes(points)


ELEMENTS = {
    "quad": np.array([[0, 0, 0], [1.2, 0.1, 0], [1.0, 0.9, 0.0], [-0.1, 1.1, 0]]),
    "warped quad": np.array([[0, 0, 0.05], [1.2, 0.1, -0.05], [1.0, 0.9, 0.05], [-0.1, 1.1, -0.05]]),
    "triangle": np.array([[0, 0, 0], [1.2, 0.1, 0], [0.3, 0.9, 0.0]]),
}


@pytest.mark.parametrize("name", sorted(ELEMENTS))
@pytest.mark.parametrize("z0", [0.0, 0.004])
def test_free_element_has_six_rigid_modes_and_no_spurious_one(name, z0):
    x = ELEMENTS[name] @ ROT.T
    kind = "triangle" if name == "triangle" else "quad"
    k = shell.shell_stiffness(kind, x[None], props(1, z0=z0))[0]
    m = shell.shell_mass(kind, x[None], props(1, z0=z0))[0]
    assert np.abs(k - k.T).max() < 1e-14 * np.abs(k).max()
    r = rigid_modes(x)
    assert np.abs(k @ r).max() < 1e-12 * np.abs(k).max()
    ev = np.linalg.eigvalsh(k)
    assert np.sum(np.abs(ev) < 1e-10 * ev.max()) == 6
    # the smallest elastic eigenvalue is the drilling penalty's order, not round-off (no spurious mode)
    assert ev[6] > 1e-7 * ev.max()
    assert np.linalg.eigvalsh(m).min() > 0.0


def distorted_plate(kind: str, n: int = 4, amp: float = 0.2):
    mesh = structured_plate((2.0, 1.0), (n, n), kind, thickness=0.02, material=STEEL)
    pts = mesh.points.copy()
    edge = np.zeros(len(pts), bool)
    for s in ("xmin", "xmax", "ymin", "ymax"):
        edge[mesh.node_sets[s]] = True
    rng = np.random.default_rng(3)
    pts[~edge, :2] += amp * (1.0 / n) * rng.uniform(-1, 1, ((~edge).sum(), 2))
    pts = pts @ ROT.T
    return FEMesh(points=pts, cells={}, shells=mesh.shells, sections=mesh.sections, materials=mesh.materials), edge


def solve_interior(mesh, exact, boundary):
    k = assemble_stiffness(mesh).tocsc()
    fixed = np.repeat(boundary, 6)
    u = exact.copy()
    u[~fixed] = spla.spsolve(k[~fixed][:, ~fixed], -(k[~fixed][:, fixed] @ u[fixed]))
    return u


@pytest.mark.parametrize("kind", ["quad", "triangle"])
def test_membrane_patch_test(kind):
    """In-plane linear displacements (with theta_z = the in-plane rotation) are reproduced exactly;
    the stress is constant (plane stress)."""
    mesh, edge = distorted_plate(kind)
    xl = mesh.points @ ROT  # local plane coordinates (z = 0)
    a = np.array([[1.0, 0.4], [-0.7, 0.5]]) * 1e-3  # du_i / dx_j in the plane
    u_loc = np.zeros((mesh.n_nodes, 6))
    u_loc[:, :2] = xl[:, :2] @ a.T
    u_loc[:, 5] = 0.5 * (a[1, 0] - a[0, 1])
    exact = np.hstack([u_loc[:, :3] @ ROT.T, u_loc[:, 3:] @ ROT.T]).ravel()
    u = solve_interior(mesh, exact, edge)
    assert np.abs(u - exact).max() < 1e-10 * np.abs(exact).max()
    eps = np.array([a[0, 0], a[1, 1], a[0, 1] + a[1, 0]])
    f = STEEL.E / (1 - STEEL.nu**2)
    s_loc = f * np.array([eps[0] + STEEL.nu * eps[1], eps[1] + STEEL.nu * eps[0], 0.5 * (1 - STEEL.nu) * eps[2]])
    tensor = np.array([[s_loc[0], s_loc[2], 0], [s_loc[2], s_loc[1], 0], [0, 0, 0]])
    g = ROT @ tensor @ ROT.T
    voigt = np.array([g[0, 0], g[1, 1], g[2, 2], g[1, 2], g[0, 2], g[0, 1]])
    s = element_stresses(mesh, u)[kind]
    assert np.abs(s - voigt).max() < 1e-7 * np.abs(voigt).max()
    surf = shell_surface_stresses(mesh, u)[kind]  # no bending: top = bottom = mid
    assert np.abs(surf - voigt[None, None, None]).max() < 1e-7 * np.abs(voigt).max()


@pytest.mark.parametrize("kind", ["quad", "triangle"])
def test_bending_patch_test(kind):
    """Constant curvature w = (a x^2 + b y^2 + 2 c x y) / 2 with Kirchhoff rotations
    (theta_y = -w_x, theta_x = w_y): interior nodes exact (the tied shear strains vanish), surface
    stresses +-E t/2 kappa / (1 - nu^2) ..."""
    mesh, edge = distorted_plate(kind)
    xl = mesh.points @ ROT
    x, y = xl[:, 0], xl[:, 1]
    a, b, c = 2e-3, -1e-3, 0.7e-3
    u_loc = np.zeros((mesh.n_nodes, 6))
    u_loc[:, 2] = 0.5 * (a * x * x + b * y * y + 2 * c * x * y)
    u_loc[:, 3] = b * y + c * x  # w_y
    u_loc[:, 4] = -(a * x + c * y)  # -w_x
    exact = np.hstack([u_loc[:, :3] @ ROT.T, u_loc[:, 3:] @ ROT.T]).ravel()
    u = solve_interior(mesh, exact, edge)
    assert np.abs(u - exact).max() < 1e-9 * np.abs(exact).max()
    kap = np.array([-a, -b, -2 * c])  # theta_y,x ; -theta_x,y ; theta_y,y - theta_x,x
    f = STEEL.E / (1 - STEEL.nu**2)
    q = f * np.array([[1, STEEL.nu, 0], [STEEL.nu, 1, 0], [0, 0, 0.5 * (1 - STEEL.nu)]])
    top = q @ kap * 0.01  # z = t/2 = 0.01
    surf = shell_surface_stresses(mesh, u)[kind]
    loc = np.einsum("ia,cpsab,jb->cpsij", ROT.T, _tensor(surf), ROT.T)
    assert np.abs(loc[:, :, 1, 0, 0] - top[0]).max() < 1e-6 * np.abs(top).max()
    assert np.abs(loc[:, :, 0, 1, 1] + top[1]).max() < 1e-6 * np.abs(top).max()
    assert np.abs(loc[:, :, 1, 0, 1] - top[2]).max() < 1e-6 * np.abs(top).max()
    assert np.abs(element_stresses(mesh, u)[kind]).max() < 1e-6 * np.abs(top).max()  # no membrane stress


def _tensor(v):
    out = np.empty(v.shape[:-1] + (3, 3))
    for k, (i, j) in enumerate(((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))):
        out[..., i, j] = out[..., j, i] = v[..., k]
    return out


def _prestress_work(kind, x, n_loc, d):
    """int N : (grad u^T grad u) / 2 dA over one flat element, computed independently: bilinear /
    linear interpolation of the three displacement components in the element plane."""
    e1 = x[1] - x[0]
    e1 /= np.linalg.norm(e1)
    nrm = np.cross(x[1] - x[0], x[2] - x[0])
    nrm /= np.linalg.norm(nrm)
    e2 = np.cross(nrm, e1)
    xy = np.column_stack([(x - x[0]) @ e1, (x - x[0]) @ e2])
    u = d.reshape(-1, 6)[:, :3]
    if kind == "triangle":
        pts, w = np.array([[1 / 3, 1 / 3]]), np.array([0.5])
        grads = lambda p: np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]])  # noqa: E731
    else:
        g = 1 / math.sqrt(3)
        pts, w = np.array([[-g, -g], [g, -g], [g, g], [-g, g]]), np.ones(4)
        s = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], float)
        grads = lambda p: 0.25 * np.column_stack([s[:, 0] * (1 + s[:, 1] * p[1]), s[:, 1] * (1 + s[:, 0] * p[0])])  # noqa: E731
    total = 0.0
    for p, wt in zip(pts, w):
        gr = grads(p)
        jac = gr.T @ xy
        dn = gr @ np.linalg.inv(jac).T
        h = u.T @ dn  # (3, 2): du_i/dx_l
        total += wt * np.linalg.det(jac) * 0.5 * np.einsum("il,lm,im->", h, n_loc, h)
    return total


@pytest.mark.parametrize("kind", ["quad", "triangle"])
def test_geometric_stiffness_is_the_second_derivative_of_the_prestress_work(kind):
    x = (ELEMENTS[kind] @ ROT.T)
    t = 0.01
    n_loc = np.array([[3.0e5, -1.2e5], [-1.2e5, 2.0e5]])  # membrane forces N/m in the element plane
    frame = shell.frames(x[None])[0][0]  # rows e1, e2, n
    sig_loc = np.zeros((3, 3))
    sig_loc[:2, :2] = n_loc / t
    g = frame.T @ sig_loc @ frame
    voigt = np.array([g[0, 0], g[1, 1], g[2, 2], g[1, 2], g[0, 2], g[0, 1]])
    stress = np.broadcast_to(voigt, (1, shell.n_points(kind), 6))
    kg = shell.shell_geometric(kind, x[None], props(1, t=t), stress)[0]
    # N in the test's own in-plane frame (e1 along the first edge)
    e1 = (x[1] - x[0]) / np.linalg.norm(x[1] - x[0])
    e2 = np.cross(frame[2], e1)
    n_test = np.array([[e1 @ g @ e1, e1 @ g @ e2], [e2 @ g @ e1, e2 @ g @ e2]]) * t
    nd = 6 * len(x)
    h = 1e-4
    fd = np.zeros((nd, nd))
    eye = np.eye(nd)
    for i in range(nd):
        for j in range(nd):
            f = lambda d: _prestress_work(kind, x, n_test, d)  # noqa: E731
            fd[i, j] = (f(h * (eye[i] + eye[j])) - f(h * (eye[i] - eye[j])) - f(h * (eye[j] - eye[i]))
                        + f(-h * (eye[i] + eye[j]))) / (4 * h * h)
    assert np.abs(kg - fd).max() < 1e-6 * np.abs(kg).max()


@pytest.mark.parametrize("kind, n, tol", [("quad", 12, 0.01), ("triangle", 12, 0.03)])
def test_simply_supported_plate_buckling(kind, n, tol):
    """Square plate a = 1 m, t = 0.01 m, simply supported (w = 0 on the edges), uniform compression
    sigma_xx: N_cr = 4 pi^2 D / a^2 (Timoshenko and Gere, Theory of Elastic Stability, 1961, 9.2)."""
    mesh = structured_plate((1.0, 1.0), (n, n), kind, thickness=0.01, material=STEEL)
    k = assemble_stiffness(mesh)
    stress = {kind: np.zeros((len(mesh.shells[kind]), shell.n_points(kind), 6))}
    stress[kind][..., 0] = -1.0  # 1 Pa compression
    kg = assemble_geometric_stiffness(mesh, stress)
    edge = np.unique(np.concatenate([mesh.node_sets[s] for s in ("xmin", "xmax", "ymin", "ymax")]))
    dofs = mesh.dof_map
    fixed = np.concatenate([dofs.translations(edge)[:, 2], dofs.translations()[:, :2].ravel(),
                            dofs.rotations(np.arange(mesh.n_nodes))[:, 2]])  # w on the edges; in-plane and drilling
    free = np.setdiff1d(np.arange(mesh.n_dofs), fixed)
    kf = k[free][:, free].toarray()
    gf = -kg[free][:, free].toarray()
    lam = sla.eigh(kf, gf + 1e-12 * np.eye(len(free)) * np.abs(gf).max(), eigvals_only=True, subset_by_index=[0, 0])[0]
    d = STEEL.E * 0.01**3 / (12 * (1 - STEEL.nu**2))
    n_cr = 4 * math.pi**2 * d / 1.0
    assert lam * 0.01 == pytest.approx(n_cr, rel=tol)


def test_rigid_body_mass_properties_with_offset():
    """6 x 6 rigid-body mass of a 2 x 1 plate whose mid-surface is offset by z0: mass, first moment
    rho t z0 A, inertia about x with (t^2/12 + z0^2) (a 3-D slab); about z the drilling inertia adds
    rho (t^3/12 + t z0^2) A (the
    drilling rotation carries the rotary inertia of the other two, documented)."""
    t, z0 = 0.02, 0.005
    mesh = structured_plate((2.0, 1.0), (4, 2), "quad", thickness=t, material=STEEL)
    mesh = mesh.with_sections({"*": ShellSection(t, offset=z0)})
    r = rigid_modes(mesh.points)
    mr = r.T @ (assemble_mass(mesh) @ r)
    rho, a = STEEL.rho, 2.0
    m = rho * t * a
    assert mr[0, 0] == pytest.approx(m, rel=1e-13)
    assert mr[0, 4] == pytest.approx(rho * t * z0 * a, rel=1e-12)  # x-translation with rotation about y
    iyy = rho * t * (2.0 / 3.0) + rho * (t**3 / 12 + t * z0**2) * a  # int y^2 dA = 2 * 1/3
    assert mr[3, 3] == pytest.approx(iyy, rel=1e-12)
    izz = rho * t * (8.0 / 3.0 + 2.0 / 3.0) + rho * (t**3 / 12 + t * z0**2) * a
    assert mr[5, 5] == pytest.approx(izz, rel=1e-12)


@pytest.mark.parametrize("kind, n, tol", [("quad", 16, 0.01), ("triangle", 16, 0.04)])
def test_fv12_free_plate(kind, n, tol):
    """NAFEMS FV12 (10 m square, t = 0.05 m, free): the first eight elastic frequencies, 1.622, 2.360,
    2.922, 4.190, 4.190, 7.356, 7.356, 7.668 Hz (the free-free solver finds the six rigid modes)."""
    mesh = structured_plate((10.0, 10.0), (n, n), kind, thickness=0.05, material=Material(200e9, 0.3, 8000.0))
    basis = red.free_free_modes(assemble_stiffness(mesh), assemble_mass(mesh), 8)
    ref = np.array([1.622, 2.360, 2.922, 4.190, 4.190, 7.356, 7.356, 7.668])
    assert basis.rigid_modes.shape[1] == 6
    assert np.all(np.abs(basis.frequencies[:3] / ref[:3] - 1) < tol), basis.frequencies / ref
    assert np.all(np.abs(basis.frequencies / ref - 1) < 3 * tol), basis.frequencies / ref


def test_thin_triangles_do_not_lock():
    """The stabilized MITC3 gives the same plate frequencies at t/L = 1/200 and 1/2000 (a locking
    element stiffens as t -> 0)."""
    f = []
    for t in (0.05, 0.005):
        mesh = structured_plate((10.0, 10.0), (12, 12), "triangle", thickness=t, material=Material(200e9, 0.3, 8000.0))
        fr = red.free_free_modes(assemble_stiffness(mesh), assemble_mass(mesh), 8).frequencies
        f.append(fr / t)  # bending frequencies scale with t
    assert np.abs(f[1] / f[0] - 1).max() < 0.01
