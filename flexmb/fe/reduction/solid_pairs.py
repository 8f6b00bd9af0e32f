"""Pair quadrature of the solid cells: their part of the quartic strain energy, of the pair loads of the
relaxation and, for hex8/wedge6 with incompatible modes, of the relaxation of the internal modes.

For shapes ``phi_i`` with displacement gradients ``H_i`` at the stiffness points (of the enhanced field
``N u + P alpha``, ``alpha = -S u_e``, for cells with incompatible modes: docs/theory.md 11.1), the
St. Venant-Kirchhoff energy of ``u = Phi q`` has the quartic coefficients
``Hp[p(i,j), p(k,l)] = int E_nl(i,j) : C : E_nl(k,l) dV``, ``E_nl(i,j) = sym(H_i^T H_j)``, and the part
quadratic in q and linear in a further field ``w`` is ``1/2 sum_ij q_i q_j`` times ::

    b_ij . w = int [ C : E_nl(i,j) ] : grad w + [ H_j sigma_i + H_i sigma_j ] : grad w  dV
             (membrane part Bm)                (geometric part Bk)

With incompatible modes, ``grad w`` is that of the enhanced field of ``w``: ``w``'s nodal values with
their internal modes ``-S w_e`` (the nodal loads ``b_u - S^T b_alpha``), plus a second-order change
``beta`` of the internal modes themselves, element by element, whose loads ``b_alpha`` and stiffness
``K_aa`` (decoupled from the nodal field at second order, since ``K_ua - S^T K_aa = 0``) give the
relaxation ``-b_alpha . K_aa^-1 b_alpha`` of the quartic term, summed over the cells (``internal``).
See :func:`flexmb.fe.reduction.stiffening.pair_quadrature`.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["solid_pair_quadrature"]

#: rows x pair-columns of the quadrature-point matrix handled per chunk (bounds the temporaries to
#: roughly 3 x QUARTIC_CHUNK_ENTRIES x 8 bytes)
QUARTIC_CHUNK_ENTRIES = 4_000_000

_VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))


def solid_pair_quadrature(mesh, P: NDArray[np.float64], materials=None, *, loads: bool = False):
    """Quartic pair matrix, pair loads and internal-mode relaxation of the solid cells.

    Parameters
    ----------
    mesh : FEMesh
    P : ndarray, shape (3 n_nodes, nm)
        The shapes' nodal translations, node-major (m per unit q).
    materials : optional
        Overrides ``mesh.materials``.
    loads : bool
        Compute the pair loads and the internal-mode relaxation too.

    Returns
    -------
    Hp : ndarray, shape (npair, npair)
        ``npair = nm (nm + 1) / 2`` pairs ``i <= j`` in ``np.triu_indices(nm)`` order; symmetric.
    Bm, Bk : ndarray, shape (npair, 3 n_nodes) or None
        Membrane and geometric parts of the nodal pair loads (N per unit q^2).
    internal : ndarray, shape (3, npair, npair) or None
        ``[bm_a . K_aa^-1 bm_a, bk_a . K_aa^-1 bm_a, bk_a . K_aa^-1 bk_a]`` summed over the cells with
        incompatible modes (first index the rows' part), J per unit q^4; None without such cells or loads.
    """
    from flexmb.fe.elements.incompatible import internal_modes
    from flexmb.fe.elements.solid import get_element, isoparametric_map
    from flexmb.fe.elements.solid_kernels import enhanced, lame

    n_nodes = mesh.n_nodes
    nm = P.shape[1]
    Pn = P.reshape(n_nodes, 3, nm)
    iu, ju = np.triu_indices(nm)
    npair = iu.size
    fields = mesh.cell_materials(materials)
    Hp = np.zeros((npair, npair))
    Bn = np.zeros((2, n_nodes, 3 * npair)) if loads else None
    internal = None
    eye = np.eye(3)
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        rule = elem.stiffness_rule
        k_nodes = conn.shape[1]
        lam_all, mu_all = lame(fields[t])
        has_modes = enhanced(mesh, t)
        if has_modes and loads and internal is None:
            internal = np.zeros((3, npair, npair))
        per_cell = rule.n_points * (7 * npair + ((9 * nm * nm + 36 * npair) if loads else 0)) \
            + ((3 * k_nodes + (6 * 3 * elem.incompatible_modes if has_modes else 0)) * npair if loads else 0)
        step = max(1, QUARTIC_CHUNK_ENTRIES // per_cell)
        for s0 in range(0, len(conn), step):  # chunks of cells
            sl = slice(s0, min(s0 + step, len(conn)))
            det_j, g = isoparametric_map(t, mesh.points[conn[sl]], rule.points)  # (c, q), (c, q, k, 3)
            c, q = det_j.shape
            ue = Pn[conn[sl]]  # (c, k, 3, nm)
            modes = None
            if has_modes:
                modes = internal_modes(elem, mesh.points[conn[sl]], g, det_j, rule.weights, lam_all[sl], mu_all[sl])
                Hm = modes.field_gradients(ue, g)  # (c, q, 3, 3, nm): d phi_m,a / d x_b of the enhanced field
            else:
                Hm = np.einsum("ckam,cqkb->cqabm", ue, g, optimize=True)
            Hm = Hm.reshape(c * q, 3, 3, nm)
            # F[r, b, d, m, n] = sum_a Hm[a, b, m] Hm[a, d, n]  (H_m^T H_n)_bd
            Ab = Hm.transpose(0, 2, 3, 1).reshape(c * q, 3 * nm, 3)  # (r, (b, m), a)
            F = np.matmul(Ab, Ab.transpose(0, 2, 1)).reshape(c * q, 3, nm, 3, nm)
            w = (det_j * rule.weights).reshape(-1)
            lam = np.repeat(lam_all[sl], q)
            mu = np.repeat(mu_all[sl], q)
            A = np.empty((7, c * q, npair))
            comps = []
            for b, d in _VOIGT:  # E_nl(m, n)_bd for the pairs m <= n
                comps.append(0.5 * (F[:, b, iu, d, ju] + F[:, d, iu, b, ju]))
            tr = comps[0] + comps[1] + comps[2]
            A[0] = np.sqrt(np.maximum(lam * w, 0.0))[:, None] * tr
            s_n = np.sqrt(np.maximum(2.0 * mu * w, 0.0))[:, None]
            for v in range(3):
                A[1 + v] = s_n * comps[v]
            for v in range(3, 6):
                A[1 + v] = (np.sqrt(2.0) * s_n) * comps[v]
            A2 = A.reshape(7 * c * q, npair)
            Hp += A2.T @ A2
            if not loads:
                continue
            # T_ij = C : E_nl(i,j) (membrane) and H_j sigma_i + H_i sigma_j (geometric)  (r, 3, 3, P), index [comp, b]
            T = np.empty((2, c * q, 3, 3, npair))
            for v, (b, d) in enumerate(_VOIGT):
                T[0, :, b, d] = 2.0 * mu[:, None] * comps[v]
                T[0, :, d, b] = T[0, :, b, d]
            T[0] += (lam[:, None] * tr)[:, None, None, :] * eye[None, :, :, None]
            eps = 0.5 * (Hm + Hm.transpose(0, 2, 1, 3))  # (r, 3, 3, nm)
            sig = 2.0 * mu[:, None, None, None] * eps
            sig += (lam[:, None] * np.trace(eps, axis1=1, axis2=2))[:, None, None, :] * eye[None, :, :, None]
            X = np.einsum("rcdj,rdbi->rcbij", Hm, sig, optimize=True)  # X[..., i, j] = (H_j sigma_i)[c, b]
            T[1] = X[..., iu, ju] + X[..., ju, iu]
            T *= w[None, :, None, None, None]
            T = T.reshape(2, c, q, 3, 3, npair)
            scatter = sp.csr_matrix((np.ones(c * k_nodes), (conn[sl].ravel(), np.arange(c * k_nodes))),
                                    shape=(n_nodes, c * k_nodes))
            parts = []
            for part in range(2):
                if modes is None:  # nodal vector: b_ij[a, comp] = sum_qp dN_a/dx_b T_ij[comp, b]
                    contrib = np.einsum("xqkb,xqcbp->xkcp", g, T[part], optimize=True)
                else:
                    contrib, ba = modes.loads(T[part], g)
                    parts.append(ba.reshape(c, -1, npair))
                Bn[part] += scatter @ contrib.reshape(c * k_nodes, 3 * npair)
            if modes is not None:  # -b_alpha . K_aa^-1 b_alpha per cell, through the Cholesky factor
                chol = np.linalg.cholesky(modes.stiffness)
                ym, yk = (np.linalg.solve(chol, b).reshape(-1, npair) for b in parts)
                internal[0] += ym.T @ ym
                internal[1] += yk.T @ ym
                internal[2] += yk.T @ yk
    Hp = 0.5 * (Hp + Hp.T)
    if Bn is None:
        return Hp, None, None, None
    Bm, Bk = (Bn[part].reshape(n_nodes, 3, npair).transpose(2, 0, 1).reshape(npair, 3 * n_nodes) for part in range(2))
    if internal is not None:
        internal[0] = 0.5 * (internal[0] + internal[0].T)
        internal[2] = 0.5 * (internal[2] + internal[2].T)
    return Hp, Bm, Bk, internal
