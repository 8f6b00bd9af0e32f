"""Flat shell elements with 6 DOF per node: MITC4 quadrilateral and MITC3 triangle.

Each element is a flat facet in its own frame (``e1``, ``e2`` in the plane, ``n`` the normal; a
warped quadrilateral is projected on its mean plane and joined to its nodes by rigid links, so
rigid-body motions stay exact). In that frame it superposes

- membrane: bilinear (quad) with two incompatible modes ``1 - xi^2``, ``1 - eta^2`` per in-plane
  component (Taylor's centroid-Jacobian correction: the patch test holds), condensed per element;
  linear (triangle, constant strain);
- bending and transverse shear (Reissner-Mindlin): rotations interpolated like the displacements,
  transverse shear strains of the MITC family (Bathe and Dvorkin 1985 for the quadrilateral: the
  covariant shear strains tied at the mid-sides; Lee and Bathe 2004 for the triangle: constant
  tangential shear along each edge), free of shear locking;
- drilling: a penalty ``gamma (theta_z - omega)^2`` tying the drilling rotation to the in-plane
  rotation ``omega = (dv/dx - du/dy) / 2`` (Hughes and Brezzi 1989), ``gamma = DRILLING * G t``,
  integrated at the stiffness points so that no spurious zero-energy mode remains.

The section is a homogeneous isotropic layer of thickness ``t`` whose mid-surface lies at ``z0``
along ``n`` from the nodes' surface (an offset). With ``Q`` the plane-stress matrix,
``N = t Q eps + z0 t Q kappa``, ``M = z0 t Q eps + (t^3/12 + z0^2 t) Q kappa``, ``Q_s = k G t gamma``.

Local DOFs per node: ``(u, v, w, theta_x, theta_y, theta_z)`` along ``(e1, e2, n)``; the rotation
vector rotates the normal by ``beta = (theta_y, -theta_x)``: ``u(z) = u + z theta_y``,
``v(z) = v - z theta_x``. Curvatures ``kappa = (theta_y,x, -theta_x,y, theta_y,y - theta_x,x)``.

All functions work on c cells at once: ``coords`` (c, k, 3), property arrays (c,), element
matrices (c, 6k, 6k) in global DOFs, node-major ``(ux, uy, uz, rx, ry, rz)`` per node.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flexmb.rotations.so3 import skew

__all__ = ["DRILLING", "SHELL_TYPES", "ShellProps", "area_jacobians", "areas", "n_points", "shell_geometric",
           "shell_green_operators", "shell_mass", "shell_stiffness", "shell_stresses"]

#: shear stabilization of the triangle, alpha of Lyly, Stenberg and Vihinen (1993)
STABILIZATION = 0.1

#: drilling penalty as a fraction of the membrane shear stiffness G t (per unit area and rad^2)
DRILLING = 1e-3

_G = 1.0 / np.sqrt(3.0)
_QUAD_NODES = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
_QUAD_POINTS = np.array([[-_G, -_G], [_G, -_G], [_G, _G], [-_G, _G]])
_QUAD_WEIGHTS = np.ones(4)
_TRI_POINTS = np.array([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3]])
_TRI_WEIGHTS = np.full(3, 1 / 6)

#: meshio cell type -> number of nodes (the shells flexmb assembles)
SHELL_TYPES = {"triangle": 3, "quad": 4}


@dataclass(frozen=True, eq=False)
class ShellProps:
    """Per-cell section and material data of c shell cells (arrays of shape (c,)): Young's modulus
    ``E`` (Pa), ``nu``, density ``rho`` (kg/m^3), thickness ``t`` (m), mid-surface offset ``z0`` (m),
    transverse shear factor ``k``, non-structural mass ``nsm`` (kg/m^2)."""

    E: NDArray[np.float64]
    nu: NDArray[np.float64]
    rho: NDArray[np.float64]
    t: NDArray[np.float64]
    z0: NDArray[np.float64]
    k: NDArray[np.float64]
    nsm: NDArray[np.float64]

    def take(self, sl) -> ShellProps:
        return ShellProps(*(getattr(self, f)[sl] for f in ("E", "nu", "rho", "t", "z0", "k", "nsm")))


# ============================================================================================
# reference interpolation
# ============================================================================================


def _shape(kind: str, xi: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Shape functions (p, k) and reference gradients (p, k, 2) at points xi (p, 2)."""
    xi = np.atleast_2d(xi)
    if kind == "quad":
        f = 1.0 + xi[:, None, :] * _QUAD_NODES[None]  # (p, 4, 2)
        n = 0.25 * f[:, :, 0] * f[:, :, 1]
        g = np.empty(f.shape)
        g[:, :, 0] = 0.25 * _QUAD_NODES[:, 0] * f[:, :, 1]
        g[:, :, 1] = 0.25 * _QUAD_NODES[:, 1] * f[:, :, 0]
        return n, g
    n = np.column_stack([1.0 - xi[:, 0] - xi[:, 1], xi[:, 0], xi[:, 1]])
    g = np.broadcast_to(np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]]), (len(xi), 3, 2)).copy()
    return n, g


def _rule(kind: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    return (_QUAD_POINTS, _QUAD_WEIGHTS) if kind == "quad" else (_TRI_POINTS, _TRI_WEIGHTS)


def n_points(kind: str) -> int:
    """Number of stiffness (and stress) points of a shell type."""
    return len(_rule(kind)[1])


def area_jacobians(kind: str, coords: NDArray[np.float64]) -> NDArray[np.float64]:
    """det J (c, p) of the flat facets at the stiffness points (m^2 per reference area); <= 0 for a
    degenerate or non-convex cell. ``area_jacobians(...) @ weights`` are the areas."""
    _, xl, _ = frames(coords)
    _, g_ref = _shape(kind, _rule(kind)[0])
    return _jacobian(g_ref, xl)[1]


def areas(kind: str, coords: NDArray[np.float64]) -> NDArray[np.float64]:
    """Areas (c,) of the projected flat facets (m^2)."""
    return area_jacobians(kind, coords) @ _rule(kind)[1]


# ============================================================================================
# frame, rigid links, transformation
# ============================================================================================


def frames(coords: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Element frames of c flat facets.

    Returns
    -------
    rot : ndarray, shape (c, 3, 3)
        Rows e1, e2, n (local components = rot @ global).
    xl : ndarray, shape (c, k, 2)
        In-plane local coordinates of the projected nodes (m), origin at the node centroid.
    h : ndarray, shape (c, k)
        Distance of each node from the mean plane along n (m): zero for a flat facet.
    """
    c, k, _ = coords.shape
    if k == 4:
        g1 = 0.5 * (coords[:, 1] + coords[:, 2] - coords[:, 0] - coords[:, 3])
        g2 = 0.5 * (coords[:, 2] + coords[:, 3] - coords[:, 0] - coords[:, 1])
    else:
        g1 = coords[:, 1] - coords[:, 0]
        g2 = coords[:, 2] - coords[:, 0]
    n = np.cross(g1, g2)
    nn = np.linalg.norm(n, axis=1)
    n = n / np.where(nn > 0, nn, 1.0)[:, None]
    e1 = g1 - np.einsum("ci,ci->c", g1, n)[:, None] * n
    e1 = e1 / np.maximum(np.linalg.norm(e1, axis=1), 1e-300)[:, None]
    e2 = np.cross(n, e1)
    rot = np.stack([e1, e2, n], axis=1)
    rel = coords - coords.mean(axis=1, keepdims=True)
    loc = np.einsum("cij,ckj->cki", rot, rel)
    return rot, loc[:, :, :2].copy(), loc[:, :, 2].copy()


def transformation(rot: NDArray[np.float64], h: NDArray[np.float64]) -> NDArray[np.float64]:
    """Global node DOFs -> local DOFs of the flat facet, (c, 6k, 6k).

    ``d_local = blockdiag(rot, rot) [[I, h skew(n)], [0, I]] d_node``: the rigid link from a node to
    its projection on the mean plane (``x_flat = x - h n``, so ``u_flat = u + theta x (-h n)``).
    """
    c, k = h.shape
    link = np.zeros((c, k, 6, 6))
    link[:, :, :3, :3] = np.eye(3)
    link[:, :, 3:, 3:] = np.eye(3)
    link[:, :, :3, 3:] = h[:, :, None, None] * skew(rot[:, 2])[:, None]
    r6 = np.zeros((c, 6, 6))
    r6[:, :3, :3] = rot
    r6[:, 3:, 3:] = rot
    blocks = np.matmul(r6[:, None], link)  # (c, k, 6, 6)
    out = np.zeros((c, 6 * k, 6 * k))
    for a in range(k):
        out[:, 6 * a : 6 * a + 6, 6 * a : 6 * a + 6] = blocks[:, a]
    return out


# ============================================================================================
# strain operators in the local frame
# ============================================================================================


def _jacobian(g_ref: NDArray[np.float64], xl: NDArray[np.float64]):
    """J (c, p, 2, 2) with J[i, j] = dx_j/dxi_i, its determinant (c, p) and inverse."""
    jac = np.einsum("pki,ckj->cpij", g_ref, xl)
    det = jac[..., 0, 0] * jac[..., 1, 1] - jac[..., 0, 1] * jac[..., 1, 0]
    inv = np.empty_like(jac)
    safe = np.where(det != 0.0, det, 1.0)
    inv[..., 0, 0] = jac[..., 1, 1] / safe
    inv[..., 1, 1] = jac[..., 0, 0] / safe
    inv[..., 0, 1] = -jac[..., 0, 1] / safe
    inv[..., 1, 0] = -jac[..., 1, 0] / safe
    return jac, det, inv


def _operators(kind: str, xl: NDArray[np.float64], xi: NDArray[np.float64]):
    """Local strain operators at points xi of c facets.

    Returns det (c, p); membrane Bm (c, p, 3, 6k); curvature Bb (c, p, 3, 6k); transverse shear
    Bs (c, p, 2, 6k) (MITC); drilling Bd (c, p, 6k); incompatible membrane Gm (c, p, 3, 4) (quad;
    internal DOFs (a_u1, a_u2, a_v1, a_v2)) or None; shape values (p, k); gradients (c, p, k, 2).
    """
    n, g_ref = _shape(kind, xi)
    jac, det, inv = _jacobian(g_ref, xl)
    dndx = np.einsum("pki,cpji->cpkj", g_ref, inv)  # dN/dx_j = dN/dxi_i (J^-1)[j, i]
    c, p = det.shape
    k = n.shape[1]
    bm = np.zeros((c, p, 3, 6 * k))
    bb = np.zeros((c, p, 3, 6 * k))
    bd = np.zeros((c, p, 6 * k))
    for a in range(k):
        gx, gy = dndx[:, :, a, 0], dndx[:, :, a, 1]
        bm[:, :, 0, 6 * a], bm[:, :, 1, 6 * a + 1] = gx, gy
        bm[:, :, 2, 6 * a], bm[:, :, 2, 6 * a + 1] = gy, gx
        bb[:, :, 0, 6 * a + 4], bb[:, :, 1, 6 * a + 3] = gx, -gy
        bb[:, :, 2, 6 * a + 4], bb[:, :, 2, 6 * a + 3] = gy, -gx
        bd[:, :, 6 * a + 5] = n[:, a]
        bd[:, :, 6 * a + 1] = -0.5 * gx
        bd[:, :, 6 * a] = 0.5 * gy
    bs = _mitc_shear(kind, xl, xi, inv)
    gm = None
    if kind == "quad":
        _, g0_ref = _shape(kind, np.zeros((1, 2)))
        _, det0, inv0 = _jacobian(g0_ref, xl)  # (c, 1)
        ratio = np.divide(det0, det, out=np.zeros_like(det), where=det != 0.0)  # (c, p)
        dp_ref = np.zeros((p, 2, 2))
        dp_ref[:, 0, 0] = -2.0 * xi[:, 0]
        dp_ref[:, 1, 1] = -2.0 * xi[:, 1]
        dpdx = np.einsum("pmi,cji->cpmj", dp_ref, inv0[:, 0]) * ratio[:, :, None, None]
        gm = np.zeros((c, p, 3, 4))
        for m in range(2):
            gm[:, :, 0, m] = dpdx[:, :, m, 0]  # u modes: eps_xx, gamma_xy
            gm[:, :, 2, m] = dpdx[:, :, m, 1]
            gm[:, :, 1, 2 + m] = dpdx[:, :, m, 1]  # v modes: eps_yy, gamma_xy
            gm[:, :, 2, 2 + m] = dpdx[:, :, m, 0]
    return det, bm, bb, bs, bd, gm, n, dndx


def _covariant_shear(kind: str, xl: NDArray[np.float64], pt: NDArray[np.float64]) -> NDArray[np.float64]:
    """Covariant transverse shear rows (c, 2, 6k) at one reference point: e_i = dw/dxi_i + dx/dxi_i . beta,
    beta = (theta_y, -theta_x)."""
    n, g_ref = _shape(kind, pt[None])
    k = n.shape[1]
    dx = np.einsum("ki,ckj->cij", g_ref[0], xl)  # (c, 2, 2): dx_j/dxi_i
    c = xl.shape[0]
    out = np.zeros((c, 2, 6 * k))
    for a in range(k):
        out[:, :, 6 * a + 2] = g_ref[0, a]
        out[:, :, 6 * a + 4] = dx[:, :, 0] * n[0, a]
        out[:, :, 6 * a + 3] = -dx[:, :, 1] * n[0, a]
    return out


def _mitc_shear(kind: str, xl: NDArray[np.float64], xi: NDArray[np.float64], inv: NDArray[np.float64]):
    """Cartesian transverse shear rows (c, p, 2, 6k) of the MITC interpolation at points xi."""
    if kind == "quad":
        ea = _covariant_shear(kind, xl, np.array([0.0, 1.0]))[:, 0]  # e_xi at A (0, 1)
        ec = _covariant_shear(kind, xl, np.array([0.0, -1.0]))[:, 0]  # e_xi at C (0, -1)
        ed = _covariant_shear(kind, xl, np.array([1.0, 0.0]))[:, 1]  # e_eta at D (1, 0)
        eb = _covariant_shear(kind, xl, np.array([-1.0, 0.0]))[:, 1]  # e_eta at B (-1, 0)
        x, y = xi[:, 0], xi[:, 1]
        e_xi = 0.5 * ((1 + y)[None, :, None] * ea[:, None] + (1 - y)[None, :, None] * ec[:, None])
        e_eta = 0.5 * ((1 + x)[None, :, None] * ed[:, None] + (1 - x)[None, :, None] * eb[:, None])
    else:
        e1 = _covariant_shear(kind, xl, np.array([0.5, 0.0]))[:, 0]  # e_rt at (1/2, 0)
        e2 = _covariant_shear(kind, xl, np.array([0.0, 0.5]))[:, 1]  # e_st at (0, 1/2)
        e3 = _covariant_shear(kind, xl, np.array([0.5, 0.5]))  # both at (1/2, 1/2)
        cc = e3[:, 1] - e3[:, 0] - e2 + e1
        r, s = xi[:, 0], xi[:, 1]
        e_xi = e1[:, None] + s[None, :, None] * cc[:, None]
        e_eta = e2[:, None] - r[None, :, None] * cc[:, None]
    cov = np.stack([e_xi, e_eta], axis=2)  # (c, p, 2, 6k)
    return np.einsum("cpij,cpjd->cpid", inv, cov)


# ============================================================================================
# element matrices
# ============================================================================================


def _plane_stress(e, nu):
    q = np.zeros(e.shape + (3, 3))
    f = e / (1.0 - nu * nu)
    q[..., 0, 0] = q[..., 1, 1] = f
    q[..., 0, 1] = q[..., 1, 0] = f * nu
    q[..., 2, 2] = f * 0.5 * (1.0 - nu)
    return q


def _local_stiffness(kind: str, xl: NDArray[np.float64], props: ShellProps):
    """Local stiffness (c, 6k, 6k) with the internal membrane modes condensed, and the recovery
    operator S (c, 4, 6k) (internal modes = -S d_local) or None."""
    xi, w = _rule(kind)
    det, bm, bb, bs, bd, gm, _, _ = _operators(kind, xl, xi)
    q = _plane_stress(props.E, props.nu)  # (c, 3, 3)
    t, z0 = props.t, props.z0
    a_m = t[:, None, None] * q
    b_c = (z0 * t)[:, None, None] * q
    d_b = (t**3 / 12.0 + z0 * z0 * t)[:, None, None] * q
    g = props.E / (2.0 * (1.0 + props.nu))
    wd = det * w  # (c, p)
    gen = np.concatenate([bm, bb], axis=2)  # (c, p, 6, 6k)
    sec = np.zeros(a_m.shape[:1] + (6, 6))
    sec[:, :3, :3], sec[:, :3, 3:], sec[:, 3:, :3], sec[:, 3:, 3:] = a_m, b_c, b_c, d_b
    sg = np.einsum("cij,cpjd->cpid", sec, gen) * wd[:, :, None, None]
    kmat = np.einsum("cpie,cpid->ced", gen, sg)
    shear = props.k * g * t
    if kind == "triangle":  # Lyly-Stenberg-Vihinen stabilization: t^2 / (t^2 + alpha h^2)
        h2 = np.max([((xl[:, a] - xl[:, (a + 1) % 3]) ** 2).sum(axis=1) for a in range(3)], axis=0)
        shear = shear * t * t / (t * t + STABILIZATION * h2)
    kmat += np.einsum("cpie,cpid->ced", bs, bs * shear[:, None, None, None] * wd[:, :, None, None])
    kmat += np.einsum("cpe,cpd->ced", bd, bd * (DRILLING * g * t)[:, None, None] * wd[:, :, None])
    if gm is None:
        return kmat, None
    # internal membrane modes: [N; M] of G alpha is [A; B] G alpha
    sa = np.concatenate([np.einsum("cij,cpjm->cpim", a_m, gm), np.einsum("cij,cpjm->cpim", b_c, gm)], axis=2)
    k_da = np.einsum("cpie,cpim->cem", gen, sa * wd[:, :, None, None])
    k_aa = np.einsum("cpim,cpin->cmn", gm, np.einsum("cij,cpjm->cpim", a_m, gm) * wd[:, :, None, None])
    rec = np.linalg.solve(k_aa, k_da.transpose(0, 2, 1))  # (c, 4, 6k)
    return kmat - np.matmul(k_da, rec), rec


def _to_global(mat: NDArray[np.float64], tr: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.matmul(tr.transpose(0, 2, 1), np.matmul(mat, tr))


def shell_stiffness(kind: str, coords: NDArray[np.float64], props: ShellProps) -> NDArray[np.float64]:
    """Stiffness matrices (c, 6k, 6k) in global DOFs (N/m, N, N m / rad)."""
    rot, xl, h = frames(coords)
    kl, _ = _local_stiffness(kind, xl, props)
    return _to_global(kl, transformation(rot, h))


def shell_mass(kind: str, coords: NDArray[np.float64], props: ShellProps) -> NDArray[np.float64]:
    """Consistent mass matrices (c, 6k, 6k) in global DOFs (kg, kg m, kg m^2).

    Through the thickness: ``I0 = rho t + nsm``, ``I1 = rho t z0``, ``I2 = rho (t^3/12 + t z0^2)``;
    kinetic energy density ``I0 |u|^2 + 2 I1 (u theta_y - v theta_x) + I2 (theta_x^2 + theta_y^2)``
    (halved), with ``I2`` also on the drilling rotation (so that M is definite).
    """
    rot, xl, h = frames(coords)
    xi, w = _rule(kind)
    n, g_ref = _shape(kind, xi)
    _, det, _ = _jacobian(g_ref, xl)
    nn = np.einsum("cp,pa,pb->cab", det * w, n, n)  # (c, k, k) int N_a N_b dA
    i0 = props.rho * props.t + props.nsm
    i1 = props.rho * props.t * props.z0
    i2 = props.rho * (props.t**3 / 12.0 + props.t * props.z0**2)
    dens = np.zeros((len(i0), 6, 6))
    for d in range(3):
        dens[:, d, d] = i0
    for d in range(3, 6):
        dens[:, d, d] = i2
    dens[:, 0, 4] = dens[:, 4, 0] = i1
    dens[:, 1, 3] = dens[:, 3, 1] = -i1
    k = n.shape[1]
    ml = np.einsum("cab,cij->caibj", nn, dens).reshape(len(i0), 6 * k, 6 * k)
    return _to_global(ml, transformation(rot, h))


def _in_plane_local(rot: NDArray[np.float64], stress: NDArray[np.float64]) -> NDArray[np.float64]:
    """Global Voigt stresses (c, p, 6) -> in-plane local tensor components (c, p, 2, 2)."""
    s = np.empty(stress.shape[:-1] + (3, 3))
    for v, (i, j) in enumerate(((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))):
        s[..., i, j] = s[..., j, i] = stress[..., v]
    loc = np.einsum("cia,cpab,cjb->cpij", rot, s, rot)
    return loc[..., :2, :2]


def shell_geometric(kind: str, coords: NDArray[np.float64], props: ShellProps,
                    stress: NDArray[np.float64]) -> NDArray[np.float64]:
    """Geometric stiffness (c, 6k, 6k) of the membrane force ``N = t sigma`` (in-plane part of the
    mid-surface stress ``stress`` (c, p, 6), global Voigt, at the stiffness points):
    ``K_sigma[a i, b j] = delta_ij int dN_a/dx_l N_lm dN_b/dx_m dA`` on the three translations, the
    second variation of ``int N : (grad u^T grad u) / 2 dA``."""
    rot, xl, h = frames(coords)
    xi, w = _rule(kind)
    _, g_ref = _shape(kind, xi)
    _, det, inv = _jacobian(g_ref, xl)
    dndx = np.einsum("pki,cpji->cpkj", g_ref, inv)
    nl = _in_plane_local(rot, stress) * (props.t[:, None, None, None] * (det * w)[:, :, None, None])
    s = np.einsum("cpal,cplm,cpbm->cab", dndx, nl, dndx)  # (c, k, k)
    c, k, _ = s.shape
    kg = np.zeros((c, k, 6, k, 6))
    for d in range(3):
        kg[:, :, d, :, d] = s
    return _to_global(kg.reshape(c, 6 * k, 6 * k), transformation(rot, h))


def shell_stresses(kind: str, coords: NDArray[np.float64], props: ShellProps, d: NDArray[np.float64], *,
                   at_nodes: bool = False):
    """Stresses at the stiffness points (``at_nodes``: at the element's nodes, p = k) of a displacement
    ``d`` (c, 6k) in global DOFs.

    Returns
    -------
    mid, bottom, top : ndarray, shape (c, p, 6)
        Global Voigt stresses [xx, yy, zz, yz, xz, xy] (Pa): the in-plane stress at the mid-surface
        (``N / t``; the one the geometric stiffness uses) and at the bottom (``z0 - t/2``) and top
        (``z0 + t/2``) surfaces along ``n``. Transverse shear is not included (zero at the
        surfaces; its mean ``Q / t`` is small in thin shells).
    """
    rot, xl, h = frames(coords)
    xi = (_QUAD_NODES if kind == "quad" else np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])) if at_nodes \
        else _rule(kind)[0]
    det, bm, bb, _, _, gm, _, _ = _operators(kind, xl, xi)
    dl = np.einsum("cij,cj->ci", transformation(rot, h), d)
    eps = np.einsum("cpid,cd->cpi", bm, dl)
    if gm is not None:
        _, rec = _local_stiffness(kind, xl, props)
        alpha = -np.einsum("cmd,cd->cm", rec, dl)
        eps += np.einsum("cpim,cm->cpi", gm, alpha)
    kap = np.einsum("cpid,cd->cpi", bb, dl)
    q = _plane_stress(props.E, props.nu)
    out = []
    for z in (props.z0, props.z0 - 0.5 * props.t, props.z0 + 0.5 * props.t):
        s = np.einsum("cij,cpj->cpi", q, eps + z[:, None, None] * kap)  # local xx, yy, xy
        loc = np.zeros(s.shape[:2] + (3, 3))
        loc[..., 0, 0], loc[..., 1, 1] = s[..., 0], s[..., 1]
        loc[..., 0, 1] = loc[..., 1, 0] = s[..., 2]
        glob = np.einsum("cai,cpab,cbj->cpij", rot, loc, rot)
        out.append(np.stack([glob[..., i, j] for i, j in ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))], axis=-1))
    return tuple(out)


#: selectors of the membrane Green strain from the translation gradients ``g = (u_x, u_y)`` (6,):
#: Voigt ``E_nl(a, b)_s = g_a^T W[s] g_b`` (xx, yy, engineering xy)
GREEN_SELECTORS = np.zeros((3, 6, 6))
GREEN_SELECTORS[0, :3, :3] = np.eye(3)
GREEN_SELECTORS[1, 3:, 3:] = np.eye(3)
GREEN_SELECTORS[2, :3, 3:] = GREEN_SELECTORS[2, 3:, :3] = np.eye(3)


def shell_green_operators(kind: str, coords: NDArray[np.float64], props: ShellProps):
    """Operators of the membrane Green strain of c facets at their stiffness points (global DOFs).

    The nonlinear strain energy of the element is its linear energy plus the membrane terms of the
    mid-surface Green strain ``E = e + 1/2 E_nl``, constant through the thickness::

        U(d) = 1/2 d^T K d + sum_p [1/2 N(d) . E_nl(d, d) + 1/8 E_nl(d, d)^T D E_nl(d, d)]
        N(d) = D lin d = t Q (eps + z0 kappa),      E_nl(a, b)_s = (grad a)^T W[s] (grad b)

    (``eps`` with the internal membrane modes condensed as in the linear element; Voigt xx, yy,
    engineering xy). ``N . E_nl`` is the work the geometric stiffness :func:`shell_geometric`
    differentiates (``b^T K_sigma(N(d)) a = N(d) . E_nl(a, b)``); the quartic term integrates
    ``Q`` through the thickness (``int dz = t``, the offset does not enter). Transverse shear,
    bending and drilling stay linear.

    Returns
    -------
    lin : ndarray, shape (c, p, 3, 6k)
        Generalized membrane strain ``eps + z0 kappa`` (1) per unit DOF.
    grad : ndarray, shape (c, p, 6, 6k)
        In-plane gradients of the facet's translations, rows ``(u, v, w),x`` then ``(u, v, w),y``
        (local components; E_nl is invariant under their rotation).
    D : ndarray, shape (c, p, 3, 3)
        ``t Q`` times the quadrature weight ``det J w`` (N m: energy per unit strain^2).
    """
    rot, xl, h = frames(coords)
    xi, w = _rule(kind)
    det, bm, bb, _, _, gm, _, dndx = _operators(kind, xl, xi)
    lin = bm + props.z0[:, None, None, None] * bb
    if gm is not None:
        _, rec = _local_stiffness(kind, xl, props)
        lin = lin - np.einsum("cpim,cmd->cpid", gm, rec)
    c, p, _, nd = bm.shape
    grad = np.zeros((c, p, 6, nd))
    for a in range(nd // 6):
        for d in range(3):
            grad[:, :, d, 6 * a + d] = dndx[:, :, a, 0]
            grad[:, :, 3 + d, 6 * a + d] = dndx[:, :, a, 1]
    tr = transformation(rot, h)
    D = _plane_stress(props.E, props.nu)[:, None] * (props.t[:, None] * det * w)[:, :, None, None]
    return np.einsum("cpid,cde->cpie", lin, tr), np.einsum("cpid,cde->cpie", grad, tr), D
