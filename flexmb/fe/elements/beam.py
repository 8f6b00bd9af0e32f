"""Two-node 3-D Timoshenko beam with 6 DOF per node, free of shear locking.

The element interpolates each bending plane with the exact homogeneous solution of Timoshenko's
equations (the "interdependent interpolation" of Friedman and Kosmatka 1993): with
``phi = 12 E I / (k G A L^2)`` the deflection is cubic, the rotation quadratic and the shear strain
constant,

    v(x) = a0 + a1 x + a2 x^2 + a3 x^3,   theta(x) = a1 + 2 a2 x + 3 a3 (x^2 + phi L^2 / 6),

so that the stiffness is exact for end loads at any slenderness (no shear locking; ``phi = 0``,
``k = inf``, is the Euler-Bernoulli Hermite beam), and the consistent mass (translational and rotary
inertia) and the geometric stiffness use the same interpolation. Axial displacement and twist are
linear.

Local axes: ``x`` from end a to end b (after the offsets), ``y`` the part of the orientation vector
normal to ``x``, ``z = x × y``. Local DOFs per node ``(u, v, w, theta_x, theta_y, theta_z)``; in the
x-y plane ``theta_z = v' - gamma_y``, in the x-z plane ``theta_y = -(w' - gamma_z)``. Offsets are
rigid links: ``u_end = u_node + theta × e``.

All functions work on c cells: ``coords`` (c, 2, 3) node coordinates, properties as arrays (c,) in a
dict (see :func:`flexmb.fe.mesh.structural.beam_cell_data`), element matrices (c, 12, 12) in global
DOFs ``(ux, uy, uz, rx, ry, rz)`` per node.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.rotations.so3 import skew

__all__ = ["BEAM_TYPES", "beam_end_forces", "beam_fibre_stresses", "beam_frames", "beam_geometric",
           "beam_green_operators", "beam_mass", "beam_section_forces", "beam_stiffness", "beam_stresses"]

#: meshio cell type of the beams flexmb assembles -> nodes per cell
BEAM_TYPES = {"line": 2}

_XI, _W = np.polynomial.legendre.leggauss(4)  # exact for the degree-6 mass integrand
_PLANE_XY = [1, 5, 7, 11]  # v_a, theta_z a, v_b, theta_z b
_PLANE_XZ = [2, 4, 8, 10]  # w_a, theta_y a, w_b, theta_y b
_FLIP = np.array([1.0, -1.0, 1.0, -1.0])  # (w, theta_y) -> (w, psi = -theta_y): the x-y form


def beam_frames(coords: NDArray[np.float64], p: dict) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                                   NDArray[np.float64], NDArray[np.float64]]:
    """Local frames, lengths and end offsets of c beams.

    Returns
    -------
    rot : ndarray, shape (c, 3, 3)
        Rows x, y, z (local components = rot @ global).
    length : ndarray, shape (c,)
        L (m) between the offset ends.
    ea, eb : ndarray, shape (c, 3)
        Global offsets of the element ends from the nodes (node offsets plus the section centroid).
    """
    xa = coords[:, 0] + p["offset_a"]
    xb = coords[:, 1] + p["offset_b"]
    d = xb - xa
    length = np.linalg.norm(d, axis=1)
    ex = d / np.where(length > 0, length, 1.0)[:, None]
    v = p["orientation"].copy()
    auto = np.isnan(v).any(axis=1)
    if auto.any():  # symmetric section: the global axis most normal to the beam
        v[auto] = np.eye(3)[np.argmin(np.abs(ex[auto]), axis=1)]
    ey = v - np.einsum("ci,ci->c", v, ex)[:, None] * ex
    ny = np.linalg.norm(ey, axis=1)
    ey = ey / np.where(ny > 0, ny, 1.0)[:, None]
    ez = np.cross(ex, ey)
    rot = np.stack([ex, ey, ez], axis=1)
    shift = p["centroid"][:, 0, None] * ey + p["centroid"][:, 1, None] * ez
    return rot, length, p["offset_a"] + shift, p["offset_b"] + shift


def degenerate(coords: NDArray[np.float64], p: dict) -> NDArray[np.bool_]:
    """(c,) beams of zero length or with an orientation vector parallel to their axis."""
    xa, xb = coords[:, 0] + p["offset_a"], coords[:, 1] + p["offset_b"]
    d = xb - xa
    length = np.linalg.norm(d, axis=1)
    v = p["orientation"]
    given = ~np.isnan(v).any(axis=1)
    cross = np.linalg.norm(np.cross(d, np.nan_to_num(v)), axis=1)
    scale = np.maximum(length * np.linalg.norm(np.nan_to_num(v), axis=1), 1e-300)
    return (length <= 1e-12 * np.abs(coords).max(initial=1.0)) | (given & (cross <= 1e-8 * scale))


def _transformation(rot, ea, eb) -> NDArray[np.float64]:
    """Global node DOFs -> local end DOFs, (c, 12, 12)."""
    c = rot.shape[0]
    out = np.zeros((c, 12, 12))
    for n, e in enumerate((ea, eb)):
        link = np.zeros((c, 6, 6))
        link[:, :3, :3] = np.eye(3)
        link[:, 3:, 3:] = np.eye(3)
        link[:, :3, 3:] = -skew(e)
        r6 = np.zeros((c, 6, 6))
        r6[:, :3, :3] = rot
        r6[:, 3:, 3:] = rot
        out[:, 6 * n : 6 * n + 6, 6 * n : 6 * n + 6] = np.matmul(r6, link)
    return out


def _plane(length, phi):
    """Coefficient maps of one bending plane: v = [1, x, x^2, x^3] C d, d = (v_a, th_a, v_b, th_b).

    Returns C (c, 4, 4) and the values at the 4 Gauss points: deflection, slope v', rotation theta,
    each (c, 4 points, 4 dofs), and the points' weights times L/2 (c, 4)."""
    c = len(length)
    L = length
    a = np.zeros((c, 4, 4))  # rows: dofs, columns: coefficients
    a[:, 0, 0] = 1.0
    a[:, 1, 1] = 1.0
    a[:, 1, 3] = 0.5 * phi * L * L
    a[:, 2] = np.stack([np.ones(c), L, L * L, L**3], axis=1)
    a[:, 3] = np.stack([np.zeros(c), np.ones(c), 2 * L, 3 * L * L + 0.5 * phi * L * L], axis=1)
    coef = np.linalg.inv(a)
    x = 0.5 * (1.0 + _XI)[None, :] * L[:, None]  # (c, 4)
    one, zero = np.ones_like(x), np.zeros_like(x)
    mono = np.stack([one, x, x * x, x**3], axis=2)
    dmono = np.stack([zero, one, 2 * x, 3 * x * x], axis=2)
    rmono = np.stack([zero, one, 2 * x, 3 * x * x + 0.5 * (phi * L * L)[:, None]], axis=2)
    wl = 0.5 * _W[None, :] * L[:, None]
    return (np.matmul(mono, coef), np.matmul(dmono, coef), np.matmul(rmono, coef), wl)


def _phis(p, length):
    g = p["E"] / (2.0 * (1.0 + p["nu"]))
    with np.errstate(divide="ignore"):
        phi_y = np.where(np.isinf(p["ky"]), 0.0, 12.0 * p["E"] * p["Iz"] / (p["ky"] * g * p["A"] * length**2))
        phi_z = np.where(np.isinf(p["kz"]), 0.0, 12.0 * p["E"] * p["Iy"] / (p["kz"] * g * p["A"] * length**2))
    return g, phi_y, phi_z


def _bending_stiffness(ei, length, phi) -> NDArray[np.float64]:
    """Exact Timoshenko stiffness (c, 4, 4) of the x-y plane on (v_a, theta_a, v_b, theta_b)."""
    L = length
    f = (ei / (L**3 * (1.0 + phi)))[:, None, None]
    k = np.empty((len(L), 4, 4))
    k[:, 0] = np.stack([12 * np.ones_like(L), 6 * L, -12 * np.ones_like(L), 6 * L], axis=1)
    k[:, 1] = np.stack([6 * L, (4 + phi) * L * L, -6 * L, (2 - phi) * L * L], axis=1)
    k[:, 2] = -k[:, 0]
    k[:, 3] = np.stack([6 * L, (2 - phi) * L * L, -6 * L, (4 + phi) * L * L], axis=1)
    return f * k


def _place(out, mat4, idx, flip=None):
    if flip is not None:
        mat4 = mat4 * flip[None, :, None] * flip[None, None, :]
    out[:, np.ix_(idx, idx)[0], np.ix_(idx, idx)[1]] += mat4


def _axial(out, value, i, j):
    out[:, i, i] += value
    out[:, j, j] += value
    out[:, i, j] -= value
    out[:, j, i] -= value


def _to_global(local, rot, ea, eb):
    t = _transformation(rot, ea, eb)
    return np.matmul(t.transpose(0, 2, 1), np.matmul(local, t))


def local_stiffness(length, p) -> NDArray[np.float64]:
    """Local stiffness (c, 12, 12): axial EA/L, torsion GJ/L, two exact Timoshenko bending planes."""
    g, phi_y, phi_z = _phis(p, length)
    out = np.zeros((len(length), 12, 12))
    _axial(out, p["E"] * p["A"] / length, 0, 6)
    _axial(out, g * p["J"] / length, 3, 9)
    _place(out, _bending_stiffness(p["E"] * p["Iz"], length, phi_y), _PLANE_XY)
    _place(out, _bending_stiffness(p["E"] * p["Iy"], length, phi_z), _PLANE_XZ, _FLIP)
    return out


def beam_stiffness(coords: NDArray[np.float64], p: dict) -> NDArray[np.float64]:
    """Stiffness matrices (c, 12, 12), global DOFs (N/m, N, N m/rad)."""
    rot, length, ea, eb = beam_frames(coords, p)
    return _to_global(local_stiffness(length, p), rot, ea, eb)


def beam_mass(coords: NDArray[np.float64], p: dict) -> NDArray[np.float64]:
    """Consistent mass matrices (c, 12, 12), global DOFs: ``int (rho A + nsm) |u|^2 + rho Iz
    theta_z^2 + rho Iy theta_y^2 + rho Ip theta_x^2 dx`` (halved) with the element's interpolation."""
    rot, length, ea, eb = beam_frames(coords, p)
    _, phi_y, phi_z = _phis(p, length)
    c = len(length)
    m_lin = (p["rho"] * p["A"] + p["nsm"]) * length
    out = np.zeros((c, 12, 12))
    lin = np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
    for dof, dens in ((0, m_lin), (3, p["rho"] * p["polar"] * length)):
        out[:, np.ix_([dof, dof + 6], [dof, dof + 6])[0], np.ix_([dof, dof + 6], [dof, dof + 6])[1]] += \
            dens[:, None, None] * lin
    for idx, phi, inertia, flip in ((_PLANE_XY, phi_y, p["Iz"], None), (_PLANE_XZ, phi_z, p["Iy"], _FLIP)):
        v, _, th, wl = _plane(length, phi)
        mass = np.einsum("cq,cqi,cqj->cij", wl * (p["rho"] * p["A"] + p["nsm"])[:, None], v, v)
        mass += np.einsum("cq,cqi,cqj->cij", wl * (p["rho"] * inertia)[:, None], th, th)
        _place(out, mass, idx, flip)
    return _to_global(out, rot, ea, eb)


def beam_geometric(coords: NDArray[np.float64], p: dict, stress: NDArray[np.float64]) -> NDArray[np.float64]:
    """Geometric stiffness (c, 12, 12) of the axial force ``N = A x^T sigma x`` (``stress`` (c, 1, 6),
    global Voigt): ``N int (u'^2 + v'^2 + w'^2 + (Ip / A) theta_x'^2) dx`` (halved), the second
    variation of the axial force's work on the Green strain of the axis (with Wagner's twist term)."""
    rot, length, ea, eb = beam_frames(coords, p)
    _, phi_y, phi_z = _phis(p, length)
    s = np.asarray(stress, dtype=float).reshape(len(length), -1, 6).mean(axis=1)
    x = rot[:, 0]
    sxx = (x[:, 0] ** 2 * s[:, 0] + x[:, 1] ** 2 * s[:, 1] + x[:, 2] ** 2 * s[:, 2]
           + 2 * (x[:, 1] * x[:, 2] * s[:, 3] + x[:, 0] * x[:, 2] * s[:, 4] + x[:, 0] * x[:, 1] * s[:, 5]))
    force = p["A"] * sxx
    out = np.zeros((len(length), 12, 12))
    _axial(out, force / length, 0, 6)
    _axial(out, force * p["polar"] / p["A"] / length, 3, 9)
    for idx, phi, flip in ((_PLANE_XY, phi_y, None), (_PLANE_XZ, phi_z, _FLIP)):
        _, dv, _, wl = _plane(length, phi)
        _place(out, np.einsum("cq,cqi,cqj->cij", wl * force[:, None], dv, dv), idx, flip)
    return _to_global(out, rot, ea, eb)


def beam_stresses(coords: NDArray[np.float64], p: dict, d: NDArray[np.float64]) -> NDArray[np.float64]:
    """Axial stress of the beam axis ``E (u_b - u_a) / L`` as a global Voigt tensor ``sigma x x^T``,
    shape (c, 1, 6) (Pa): the stress the geometric stiffness uses."""
    rot, length, ea, eb = beam_frames(coords, p)
    dl = np.einsum("cij,cj->ci", _transformation(rot, ea, eb), d)
    sig = p["E"] * (dl[:, 6] - dl[:, 0]) / length
    x = rot[:, 0]
    voigt = np.stack([x[:, 0] ** 2, x[:, 1] ** 2, x[:, 2] ** 2, x[:, 1] * x[:, 2], x[:, 0] * x[:, 2], x[:, 0] * x[:, 1]],
                     axis=1)
    return (sig[:, None] * voigt)[:, None, :]


def beam_end_forces(coords: NDArray[np.float64], p: dict, d: NDArray[np.float64]) -> NDArray[np.float64]:
    """Local end forces ``K_local d_local`` (c, 2, 6, ...): (N, Vy, Vz, T, My, Mz) acting on the element
    at ends a and b (N, N m) for ``d`` (c, 12) or (c, 12, m); the section forces are ``-f_a`` at a and
    ``f_b`` at b (:func:`beam_section_forces`)."""
    rot, length, ea, eb = beam_frames(coords, p)
    dl = np.einsum("cij,cj...->ci...", _transformation(rot, ea, eb), d)
    f = np.einsum("cij,cj...->ci...", local_stiffness(length, p), dl)
    return f.reshape((len(length), 2, 6) + f.shape[2:])


def beam_section_forces(coords: NDArray[np.float64], p: dict, d: NDArray[np.float64]) -> NDArray[np.float64]:
    """Section forces at the two ends, (c, 2, 6, ...): axial force N, shear forces Vy, Vz, torque T,
    bending moments My, Mz (N, N m) in the local axes, internal-force convention (the part at larger x
    acts on the part at smaller x): ``-f_a`` at a, ``f_b`` at b. The fibre stress at the local point
    (y, z) of the section is ``N / A + My z / Iy - Mz y / Iz`` (:func:`beam_fibre_stresses`)."""
    f = beam_end_forces(coords, p, d)
    f[:, 0] *= -1.0
    return f


def beam_fibre_stresses(p: dict, forces: NDArray[np.float64]) -> NDArray[np.float64]:
    """Axial stress (Pa) at the section's extreme fibres ``p["fibres"]`` (c, f, 2) of both ends from
    :func:`beam_section_forces` (c, 2, 6, ...): ``N / A + My z / Iy - Mz y / Iz``, shape (c, 2, f, ...).
    Shear from the shear forces and the torque is not included."""
    c, nf = p["fibres"].shape[:2]
    fo = forces.reshape(c, 2, 6, -1)
    wy = (p["fibres"][..., 1] / p["Iy"][:, None])[:, None, :, None]  # z / Iy, (c, 1, f, 1)
    wz = (p["fibres"][..., 0] / p["Iz"][:, None])[:, None, :, None]  # y / Iz
    out = (fo[:, :, 0] / p["A"][:, None, None])[:, :, None] + wy * fo[:, :, None, 4] - wz * fo[:, :, None, 5]
    return out.reshape((c, 2, nf) + forces.shape[3:])


def beam_green_operators(coords: NDArray[np.float64], p: dict):
    """Operators of the axial Green strain of c beams at the 4 Gauss points (global DOFs).

    The nonlinear axial strain of the axis (mean over the section) is
    ``e = u' + 1/2 (u'^2 + v'^2 + w'^2 + (Ip / A) theta_x'^2)`` (local components; ``v'``, ``w'``
    the slopes of the element's Timoshenko deflection, the twist term Wagner's), and the element's
    nonlinear strain energy its linear energy plus ::

        sum_p [1/2 N(d) E_nl(d, d) + 1/8 E A E_nl(d, d)^2] w_p,   N = E A u',   E_nl(a, b) = (grad a)^T (grad b)

    ``N E_nl`` is the work :func:`beam_geometric` differentiates. Bending stays linear: the
    curvature's own nonlinearity (the elastica's ``EI/2 int w'^2 w''^2``, relative order ``w'^2``)
    is not in it.

    Returns
    -------
    lin : ndarray, shape (c, 4, 1, 12)
        Axial strain ``u'`` per unit DOF.
    grad : ndarray, shape (c, 4, 4, 12)
        ``(u', v', w', sqrt(Ip / A) theta_x')`` per unit DOF.
    D : ndarray, shape (c, 4, 1, 1)
        ``E A`` times the Gauss weight (N m).
    """
    rot, length, ea, eb = beam_frames(coords, p)
    _, phi_y, phi_z = _phis(p, length)
    c = len(length)
    loc = np.zeros((c, 4, 4, 12))
    ax = np.zeros((c, 12))
    ax[:, 0], ax[:, 6] = -1.0 / length, 1.0 / length
    loc[:, :, 0] = ax[:, None]
    _, dv, _, wl = _plane(length, phi_y)
    loc[:, :, 1][..., _PLANE_XY] = dv
    _, dw, _, _ = _plane(length, phi_z)
    loc[:, :, 2][..., _PLANE_XZ] = dw * _FLIP
    tw = np.sqrt(p["polar"] / p["A"]) / length
    loc[:, :, 3, 3], loc[:, :, 3, 9] = -tw[:, None], tw[:, None]
    t = _transformation(rot, ea, eb)
    grad = np.einsum("cpid,cde->cpie", loc, t)
    D = (p["E"] * p["A"])[:, None, None, None] * wl[:, :, None, None]
    return grad[:, :, :1].copy(), grad, D
