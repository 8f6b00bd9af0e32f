"""Incompatible modes of the linear solids (hex8, wedge6), condensed per element.

An element with incompatible modes interpolates the displacement as
``u = sum_a N_a u_a + sum_m P_m alpha_m`` with internal vectors alpha_m (3 components each) that no
neighbour shares (Wilson, Taylor, Doherty and Ghaboussi 1973). Their gradients follow Taylor,
Beresford and Wilson (1976): ``dP_m/dx (xi) = (det J0 / det J(xi)) dP_m/dxi J0^-1`` with J0 the
Jacobian at the reference centroid, so that ``int dP_m/dx dV = 0`` for any element shape and the
element passes the patch test (a linear displacement field of a distorted mesh is reproduced
exactly, the internal modes stay zero).

Per element, with the isotropic elasticity blocks of :func:`iso_matrix`,
``K_e = K_uu - K_ua K_aa^-1 K_au`` and, for a given ``u_e``, ``alpha = -S u_e`` with
``S = K_aa^-1 K_au``: the internal modes take the values that minimize the element's strain energy
(static condensation). Stresses are then ``D (B u_e + G alpha)``. The mass matrix and the geometric
stiffness use the compatible field only (the internal modes carry no mass and are not interpolated
into the geometric stiffness), as in Abaqus C3D8I.

Shapes: c cells, q quadrature points, k nodes, m incompatible modes; DOFs of an element node-major
(``3 a + i``), of its internal modes mode-major (``3 m + i``).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.fe.elements.solid import Element, isoparametric_map

__all__ = ["condensation", "enhanced_gradients", "iso_matrix"]


def enhanced_gradients(
    elem: type[Element], coords: NDArray[np.float64], xi: NDArray[np.float64], det_j: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Physical gradients of the incompatible modes with Taylor's correction.

    Parameters
    ----------
    elem : Element subclass with ``incompatible_modes > 0``
    coords : ndarray, shape (c, k, 3)
        Node coordinates (m).
    xi : ndarray, shape (q, 3)
        Reference points.
    det_j : ndarray, shape (c, q)
        det J at those points (from :func:`~flexmb.fe.elements.solid.isoparametric_map`).

    Returns
    -------
    ndarray, shape (c, q, m, 3)
        dP_m/dx_j (1/m); zero where det J is zero.
    """
    det0, dndx0 = isoparametric_map(elem, coords, elem.center[None, :])
    # J0^-1 from the centroid gradients: dN/dx = dN/dxi J^-1 -> J^-1 = pinv(dN/dxi) dN/dx (exact)
    dndxi0 = elem.grad(elem.center[None, :])[0]  # (k, 3)
    jinv0 = np.linalg.pinv(dndxi0) @ dndx0[:, 0]  # (c, 3, 3)
    dpdxi = elem.incompatible_grad(np.asarray(xi, dtype=float))  # (q, m, 3)
    g = np.einsum("qmi,cij->cqmj", dpdxi, jinv0)
    ratio = np.divide(det0, det_j, out=np.zeros_like(det_j), where=det_j != 0.0)  # (c, q)
    return g * ratio[:, :, None, None]


def iso_matrix(
    ga: NDArray[np.float64], gb: NDArray[np.float64], wd: NDArray[np.float64],
    lam: NDArray[np.float64], mu: NDArray[np.float64],
) -> NDArray[np.float64]:
    """int B_a^T D B_b dV of an isotropic solid for two sets of scalar interpolation gradients.

    Parameters
    ----------
    ga, gb : ndarray, shape (c, q, ka, 3) and (c, q, kb, 3)
        Gradients (1/m) of the scalar functions whose three components are the DOFs.
    wd : ndarray, shape (c, q)
        Quadrature weight times det J (m^3).
    lam, mu : ndarray, shape (c,)
        Lame parameters (Pa).

    Returns
    -------
    ndarray, shape (c, 3 ka, 3 kb)
        Rows ``3 a + i``, columns ``3 b + j``:
        ``lam P[a,i,b,j] + mu P[a,j,b,i] + mu delta_ij sum_d P[a,d,b,d]``,
        ``P[a,i,b,j] = int dA_a/dx_i dB_b/dx_j dV``.
    """
    c, q, ka, _ = ga.shape
    kb = gb.shape[2]
    a = (ga * wd[:, :, None, None]).reshape(c, q, 3 * ka)
    p = np.matmul(a.transpose(0, 2, 1), gb.reshape(c, q, 3 * kb)).reshape(c, ka, 3, kb, 3)
    lam_ = lam[:, None, None, None, None]
    mu_ = mu[:, None, None, None, None]
    out = lam_ * p + mu_ * p.transpose(0, 1, 4, 3, 2)  # [c, a, i, b, j]: lam P[a,i,b,j] + mu P[a,j,b,i]
    trace = p[:, :, 0, :, 0] + p[:, :, 1, :, 1] + p[:, :, 2, :, 2]  # (c, ka, kb)
    for i in range(3):
        out[:, :, i, :, i] += mu[:, None, None] * trace
    return out.reshape(c, 3 * ka, 3 * kb)


def condensation(
    elem: type[Element], coords: NDArray[np.float64], g: NDArray[np.float64], det_j: NDArray[np.float64],
    weights: NDArray[np.float64], lam: NDArray[np.float64], mu: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Stiffness correction and recovery operator of the condensed incompatible modes.

    Parameters
    ----------
    elem : Element subclass with ``incompatible_modes > 0``
    coords : ndarray, shape (c, k, 3)
    g : ndarray, shape (c, q, k, 3)
        Compatible shape-function gradients at the stiffness points (1/m).
    det_j : ndarray, shape (c, q)
    weights : ndarray, shape (q,)
        The stiffness rule's weights.
    lam, mu : ndarray, shape (c,)

    Returns
    -------
    correction : ndarray, shape (c, 3 k, 3 k)
        ``K_ua K_aa^-1 K_au`` (N/m): subtract it from the compatible element stiffness.
    recovery : ndarray, shape (c, 3 m, 3 k)
        ``S = K_aa^-1 K_au``: the internal modes of a displacement ``u_e`` are ``-S u_e`` (m/m).
    """
    gp = enhanced_gradients(elem, coords, elem.stiffness_rule.points, det_j)
    wd = det_j * weights
    k_ua = iso_matrix(g, gp, wd, lam, mu)  # (c, 3k, 3m)
    k_aa = iso_matrix(gp, gp, wd, lam, mu)  # (c, 3m, 3m)
    recovery = np.linalg.solve(k_aa, k_ua.transpose(0, 2, 1))
    return np.matmul(k_ua, recovery), recovery
