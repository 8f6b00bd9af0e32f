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
(static condensation). Stresses are then ``D (B u_e + G alpha)``. The internal modes carry no mass.

Geometric nonlinearity (docs/theory.md, 11.1): the element's Green strain is that of the enhanced
field ``u + P alpha``, the internal modes being element unknowns minimized at every configuration
(``alpha = -S u_e + beta``, ``beta`` of second order). Its geometric stiffness, the derivative of
the condensed tangent with respect to the prestress, is then ``T^T K_sigma(ext) T`` with
``T = [I; -S]`` and ``K_sigma(ext)`` the geometric stiffness over the nodal and internal functions
(:func:`geometric_condensation`); the modal cubic and quartic data differentiate the same energy
(:class:`InternalModes`, used by :func:`flexmb.fe.reduction.stiffening.pair_quadrature`).

Shapes: c cells, q quadrature points, k nodes, m incompatible modes; DOFs of an element node-major
(``3 a + i``), of its internal modes mode-major (``3 m + i``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flexmb.fe.elements.solid import Element, isoparametric_map

__all__ = ["InternalModes", "condensation", "enhanced_gradients", "geometric_condensation", "internal_modes", "iso_matrix"]


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
    modes = internal_modes(elem, coords, g, det_j, weights, lam, mu)
    return modes.correction, modes.recovery


@dataclass(frozen=True, eq=False)
class InternalModes:
    """The condensed incompatible modes of a chunk of c cells (k nodes, m modes, q stiffness points).

    Attributes
    ----------
    gradients : ndarray, shape (c, q, m, 3)
        dP_m/dx at the stiffness points (Taylor's correction), 1/m.
    recovery : ndarray, shape (c, 3 m, 3 k)
        ``S``: ``alpha = -S u_e`` (mode-major rows ``3 m + i``, node-major columns ``3 a + j``).
    stiffness : ndarray, shape (c, 3 m, 3 m)
        ``K_aa`` (N/m per unit alpha^2), symmetric positive definite.
    correction : ndarray, shape (c, 3 k, 3 k)
        ``K_ua K_aa^-1 K_au``.
    """

    gradients: NDArray[np.float64]
    recovery: NDArray[np.float64]
    stiffness: NDArray[np.float64]
    correction: NDArray[np.float64]

    def amplitudes(self, ue: NDArray[np.float64]) -> NDArray[np.float64]:
        """``alpha = -S u_e`` of element displacements ``ue`` (c, k, 3, f) -> (c, m, 3, f)."""
        c, k, _, f = ue.shape
        return -np.matmul(self.recovery, ue.reshape(c, 3 * k, f)).reshape(c, -1, 3, f)

    def field_gradients(self, ue: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        """Gradients ``d u_a / d x_b`` of the enhanced fields of ``ue`` (c, k, 3, f): (c, q, 3, 3, f)."""
        h = np.einsum("ckaf,cqkb->cqabf", ue, g, optimize=True)
        return h + np.einsum("cmaf,cqmb->cqabf", self.amplitudes(ue), self.gradients, optimize=True)

    def loads(self, t: NDArray[np.float64], g: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Work-conjugate loads of a first Piola-like field ``t`` (c, q, 3, 3, f) (weights included):
        the nodal load of the enhanced field, ``b_u - S^T b_alpha`` (c, k, 3, f) with
        ``b_u[a, i] = sum_q t[i, b] dN_a/dx_b``, and the internal one ``b_alpha`` (c, m, 3, f),
        ``b_alpha[m, i] = sum_q t[i, b] dP_m/dx_b``: the derivatives of ``sum_q t : grad w`` with
        respect to the nodal values of ``w`` (its internal modes following ``-S``) and to ``beta``."""
        c, k = g.shape[0], g.shape[2]
        bu = np.einsum("cqibf,cqkb->ckif", t, g, optimize=True)
        ba = np.einsum("cqibf,cqmb->cmif", t, self.gradients, optimize=True)
        f = t.shape[-1]
        bu = bu - np.matmul(self.recovery.transpose(0, 2, 1), ba.reshape(c, -1, f)).reshape(c, k, 3, f)
        return bu, ba


def internal_modes(
    elem: type[Element], coords: NDArray[np.float64], g: NDArray[np.float64], det_j: NDArray[np.float64],
    weights: NDArray[np.float64], lam: NDArray[np.float64], mu: NDArray[np.float64],
) -> InternalModes:
    """:class:`InternalModes` of a chunk of cells (parameters as :func:`condensation`)."""
    gp = enhanced_gradients(elem, coords, elem.stiffness_rule.points, det_j)
    wd = det_j * weights
    k_ua = iso_matrix(g, gp, wd, lam, mu)  # (c, 3k, 3m)
    k_aa = iso_matrix(gp, gp, wd, lam, mu)  # (c, 3m, 3m)
    recovery = np.linalg.solve(k_aa, k_ua.transpose(0, 2, 1))
    return InternalModes(gp, recovery, 0.5 * (k_aa + k_aa.transpose(0, 2, 1)), np.matmul(k_ua, recovery))


def geometric_condensation(ks: NDArray[np.float64], recovery: NDArray[np.float64]) -> NDArray[np.float64]:
    """Geometric stiffness of the enhanced field: ``T^T (ks kron I3) T`` with ``T = [I; -S]``.

    Parameters
    ----------
    ks : ndarray, shape (c, k + m, k + m)
        ``int grad f_a . sigma grad f_b dV`` over the nodal shape functions then the internal modes (N/m).
    recovery : ndarray, shape (c, 3 m, 3 k)
        ``S`` of :class:`InternalModes`.

    Returns
    -------
    ndarray, shape (c, k, 3, k, 3)
        ``[e, a, i, b, j]``: the first-order change of the condensed tangent stiffness under the
        prestress (N/m); not isotropic in (i, j).
    """
    c, m3, k3 = recovery.shape
    k, m = k3 // 3, m3 // 3
    uu, ua, aa = ks[:, :k, :k], ks[:, :k, k:], ks[:, k:, k:]
    s = recovery.reshape(c, m, 3, k3)
    out = np.zeros((c, k3, k3))
    for comp in range(3):  # the component-comp rows of S: (c, m, 3k)
        sl = s[:, :, comp, :]
        out += np.matmul(sl.transpose(0, 2, 1), np.matmul(aa, sl))
        cross = np.matmul(ua, sl)  # (c, k, 3k)
        out[:, comp::3, :] -= cross
        out[:, :, comp::3] -= cross.transpose(0, 2, 1)
        out[:, comp::3, comp::3] += uu
    return out.reshape(c, k, 3, k, 3)
