"""Inertia invariants of a modal body in its floating frame (exact for the consistent mass)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

__all__ = ["InertiaInvariants", "inertia_invariants", "inertia_invariants_of_dofs"]


@dataclass(frozen=True, eq=False)
class InertiaInvariants:
    """Inertia invariants of a modal body in its floating frame (exact for the consistent mass).

    With ``x = x0 + sum_k phi_k eta_k`` and ``int rho a b^T dV = A^T Ms B`` for nodal fields
    interpolated by the element shape functions (``M = kron(Ms, I3)``):

    Attributes
    ----------
    mass : float
        ``int rho dV`` (kg).
    first_moment : ndarray, shape (3,)
        ``int rho x0 dV`` (kg m).
    second_moment : ndarray, shape (3, 3)
        ``int rho x0 x0^T dV`` (kg m^2).
    modal_first_moment : ndarray, shape (nm, 3)
        ``[k] = int rho phi_k dV`` (kg m per unit eta).
    modal_cross_moment : ndarray, shape (nm, 3, 3)
        ``[k, a, b] = int rho x0_a phi_k,b dV``.
    modal_second_moment : ndarray, shape (nm, nm, 3, 3)
        ``[k, l, a, b] = int rho phi_k,a phi_l,b dV``.
    modal_mass : ndarray, shape (nm, nm)
        ``int rho phi_k . phi_l dV`` (identity for mass-normalized shapes).
    modal_stiffness : ndarray, shape (nm, nm)
        ``phi^T K phi`` (diag(omega^2) for orthonormalized shapes).
    """

    mass: float
    first_moment: NDArray[np.float64]
    second_moment: NDArray[np.float64]
    modal_first_moment: NDArray[np.float64]
    modal_cross_moment: NDArray[np.float64]
    modal_second_moment: NDArray[np.float64]
    modal_mass: NDArray[np.float64]
    modal_stiffness: NDArray[np.float64]

    @property
    def center_of_mass(self) -> NDArray[np.float64]:
        """Undeformed centre of mass (m), shape (3,)."""
        return self.first_moment / self.mass

    @property
    def inertia_tensor(self) -> NDArray[np.float64]:
        """Undeformed inertia tensor about the frame origin (kg m^2): ``tr(S) I - S``."""
        return _inertia_from_second(self.second_moment)

    @property
    def inertia_tensor_com(self) -> NDArray[np.float64]:
        """Undeformed inertia tensor about the centre of mass (kg m^2)."""
        c = self.center_of_mass
        return self.inertia_tensor - self.mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))

    @property
    def modal_angular_participation(self) -> NDArray[np.float64]:
        """``int rho x0 x phi_k dV`` (nm, 3) (kg m^2 per unit eta): rotational participation factors."""
        C = self.modal_cross_moment
        return np.stack([C[:, 1, 2] - C[:, 2, 1], C[:, 2, 0] - C[:, 0, 2], C[:, 0, 1] - C[:, 1, 0]], axis=1)

    @property
    def inertia_tensor_first_order(self) -> NDArray[np.float64]:
        """``dJ/deta_k`` (nm, 3, 3): ``tr(C_k + C_k^T) I - (C_k + C_k^T)``."""
        S1 = self.modal_cross_moment + self.modal_cross_moment.transpose(0, 2, 1)
        return _inertia_from_second(S1)

    @property
    def inertia_tensor_second_order(self) -> NDArray[np.float64]:
        """``J2`` (nm, nm, 3, 3), symmetric in (k, l), with ``J(eta) = J0 + J1_k eta_k + J2_kl eta_k eta_l``."""
        D = self.modal_second_moment
        Ds = 0.5 * (D + D.transpose(1, 0, 3, 2))
        return _inertia_from_second(Ds)

    def first_moment_at(self, eta: ArrayLike) -> NDArray[np.float64]:
        """``int rho x dV`` of the deformed body (3,) for modal coordinates ``eta`` (nm,)."""
        return self.first_moment + np.asarray(eta, float) @ self.modal_first_moment

    def inertia_tensor_at(self, eta: ArrayLike) -> NDArray[np.float64]:
        """Exact inertia tensor about the frame origin of the deformed body (3, 3)."""
        e = np.asarray(eta, float)
        return (self.inertia_tensor + np.einsum("k,kab->ab", e, self.inertia_tensor_first_order)
                + np.einsum("k,l,klab->ab", e, e, self.inertia_tensor_second_order))


def _inertia_from_second(S: NDArray[np.float64]) -> NDArray[np.float64]:
    tr = np.trace(S, axis1=-2, axis2=-1)
    return tr[..., None, None] * np.eye(3) - S


def inertia_invariants(Ms, points: ArrayLike, shapes: ArrayLike, K=None) -> InertiaInvariants:
    """Compute the inertia invariants from the scalar consistent mass matrix.

    Parameters
    ----------
    Ms : sparse matrix, shape (n_nodes, n_nodes)
        Scalar consistent mass (kg), ``M = kron(Ms, I3)``.
    points : array_like, shape (n_nodes, 3)
        Undeformed positions x0 in the body frame (m).
    shapes : array_like, shape (3 n_nodes, nm) or (n_nodes, 3, nm)
        Shape functions (node-major).
    K : sparse matrix, shape (3 n_nodes, 3 n_nodes), optional
        Stiffness, for ``modal_stiffness`` (zeros if not given).

    Returns
    -------
    InertiaInvariants
    """
    Ms = sp.csr_matrix(Ms)
    x0 = np.asarray(points, dtype=float)
    n = x0.shape[0]
    P = np.asarray(shapes, dtype=float).reshape(n, 3, -1)
    nm = P.shape[2]
    m_nodal = np.asarray(Ms @ np.ones(n)).ravel()
    MsX = np.asarray(Ms @ x0)
    MsP = np.asarray(Ms @ P.reshape(n, 3 * nm)).reshape(n, 3, nm)
    D = np.einsum("nak,nbl->klab", P, MsP)
    D = 0.5 * (D + D.transpose(1, 0, 3, 2))  # exact symmetry of int rho phi_k phi_l^T
    mm = np.einsum("klaa->kl", D)
    if K is not None:
        Pf = P.reshape(3 * n, nm)
        ks = Pf.T @ (sp.csr_matrix(K) @ Pf)
        ks = 0.5 * (ks + ks.T)
    else:
        ks = np.zeros((nm, nm))
    S2 = x0.T @ MsX
    return InertiaInvariants(
        mass=float(m_nodal.sum()),
        first_moment=x0.T @ m_nodal,
        second_moment=0.5 * (S2 + S2.T),
        modal_first_moment=np.einsum("n,nak->ka", m_nodal, P),
        modal_cross_moment=np.einsum("na,nbk->kab", MsX, P),
        modal_second_moment=D,
        modal_mass=mm,
        modal_stiffness=ks,
    )


def inertia_invariants_of_dofs(M, dof_map, points: ArrayLike, shapes: ArrayLike, K=None) -> InertiaInvariants:
    """The inertia invariants of a model with rotational DOFs, from its full consistent mass.

    Every invariant is a bilinear form ``a^T M b`` of DOF fields (shells' and beams' rotary
    inertia, their offsets and point masses with offsets and rotary inertia included): with ``T_k``
    the unit translations, ``W_k = e_k x x`` the unit rotations about the origin (sections turning
    with them) and ``L_ab`` the affine field ``u = e_b x_a`` (sections turned by its infinitesimal
    rotation ``(e_a x e_b) / 2``, :meth:`~flexmb.fe.elements.dofs.DofMap.linear_fields`)::

        mass I = T^T M T,   e_k . (e_l x S0) = T_k^T M W_l,   J0 = W^T M W  (so S = tr(J0)/2 I - J0)
        int rho phi_k = T^T M phi_k,   C[k, a, b] = L_ab^T M phi_k,   modal_mass = Phi^T M Phi

    Exact for every term linear in the modes whose field is rigid (``S1`` and the rotational
    participation ``int rho x0 x phi``, the antisymmetric part of ``C``). The symmetric part of ``C``
    (a pure strain does not turn the sections) and the second moment ``D[k, l, a, b]`` (component
    products of the modes, from the translational block of M averaged over the three directions,
    ``D`` exact for solids and shells' translations) leave out the sections' rotary inertia in the
    terms of first and second order in eta of the inertia tensor: a relative error of order
    (thickness / length)^2 in those terms.

    Parameters
    ----------
    M : sparse matrix, shape (n_dofs, n_dofs)
        Consistent mass on ``dof_map`` (:func:`flexmb.fe.elements.assembly.assemble_mass`).
    dof_map : DofMap
    points : array_like, shape (n_nodes, 3)
        Undeformed positions (m).
    shapes : array_like, shape (n_dofs, nm)
    K : sparse matrix, shape (n_dofs, n_dofs), optional

    Returns
    -------
    InertiaInvariants
    """
    M = sp.csr_matrix(M)
    x0 = np.asarray(points, dtype=float)
    P = np.asarray(shapes, dtype=float).reshape(dof_map.n_dofs, -1)
    nm = P.shape[1]
    R = dof_map.rigid_body_modes(x0)  # (n_dofs, 6): T then W
    MR = np.asarray(M @ R)
    G = R.T @ MR
    G = 0.5 * (G + G.T)
    mass = float(np.trace(G[:3, :3]) / 3.0)
    A = G[:3, 3:]  # A[k, l] = e_k . (e_l x S0)
    S0 = 0.5 * np.array([A[1, 2] - A[2, 1], A[2, 0] - A[0, 2], A[0, 1] - A[1, 0]])
    J0 = G[3:, 3:]
    S2 = 0.5 * np.trace(J0) * np.eye(3) - J0
    E = np.zeros((9, 3, 3))
    for a in range(3):
        for b in range(3):
            E[3 * a + b, b, a] = 1.0  # u = e_b x_a: gradient du_b/dx_a = 1
    L = dof_map.linear_fields(x0, E)  # (n_dofs, 9)
    ML = np.asarray(M @ L)
    C = (P.T @ ML).reshape(nm, 3, 3)
    tr = dof_map.translations()
    Mt = sum(M[tr[:, c]][:, tr[:, c]] for c in range(3)) / 3.0  # scalar translational mass (n, n)
    Pn = P[tr]  # (n, 3, nm)
    MtP = np.asarray(Mt @ Pn.reshape(len(x0), 3 * nm)).reshape(len(x0), 3, nm)
    D = np.einsum("nak,nbl->klab", Pn, MtP)
    D = 0.5 * (D + D.transpose(1, 0, 3, 2))
    mm = P.T @ np.asarray(M @ P)
    mm = 0.5 * (mm + mm.T)
    if K is not None:
        ks = P.T @ (sp.csr_matrix(K) @ P)
        ks = 0.5 * (ks + ks.T)
    else:
        ks = np.zeros((nm, nm))
    return InertiaInvariants(
        mass=mass, first_moment=S0, second_moment=0.5 * (S2 + S2.T),
        modal_first_moment=P.T @ MR[:, :3], modal_cross_moment=C, modal_second_moment=D,
        modal_mass=mm, modal_stiffness=ks,
    )
