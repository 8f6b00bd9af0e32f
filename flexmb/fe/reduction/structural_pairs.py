"""Pair quadrature of the shells and beams: their part of the quartic strain energy, of the pair loads
of the relaxation and of the cubic term, over the index pairs of a modal basis.

Shells and beams carry the membrane Green strain of their mid-surface or axis
(:func:`flexmb.fe.elements.shell.shell_green_operators`, :func:`flexmb.fe.elements.beam.beam_green_operators`):
at each stiffness point ``p`` a generalized strain ``E(d) = lin d + 1/2 E_nl(d, d)`` with
``E_nl(a, b)_s = (grad a)^T W[s] (grad b)`` and the section matrix ``D`` (weight included). For the
shapes ``phi_i`` the element energy of ``u = Phi q`` is then exactly the modal quartic polynomial of
:mod:`flexmb.fe.reduction.stiffening` with::

    G[k, i, j]    += sum_p N_k . E_nl(i, j),              N_k = D lin phi_k
    H[i, j, k, l] += sum_p E_nl(i, j)^T D E_nl(k, l)
    b_ij . v      += sum_p [N(v) . E_nl(i, j) + N_i . E_nl(v, phi_j) + N_j . E_nl(v, phi_i)]

(``G`` as :func:`flexmb.fe.reduction.stiffening.modal_geometric_stiffness` gets it from the geometric
stiffness: the same number, checked in tests/test_structural_quartic.py). See docs/theory.md, 11.7.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["structural_green_blocks", "structural_pair_quadrature", "structural_strain_energy"]

#: entries of the per-chunk temporaries (c * p * rows * pairs) of :func:`structural_pair_quadrature`
CHUNK_ENTRIES = 3_000_000

_BEAM_SELECTOR = np.eye(4)[None]


def structural_green_blocks(mesh, materials=None, cells_per_chunk: int = 20_000):
    """Yield ``(dofs (c, 6k), lin (c, p, s, 6k), grad (c, p, m, 6k), D (c, p, s, s), W (s, m, m))`` for
    chunks of the shells and beams of ``mesh`` (global DOFs of ``mesh.dof_map``; see the module)."""
    from flexmb.fe.elements import beam, shell
    from flexmb.fe.mesh.structural import beam_cell_data, shell_cell_data

    dmap = mesh.dof_map
    if mesh.shells:
        sdata = shell_cell_data(mesh, materials)
        for t, conn in mesh.shells.items():
            for s0 in range(0, len(conn), cells_per_chunk):
                sl = slice(s0, min(s0 + cells_per_chunk, len(conn)))
                props = shell.ShellProps(*(sdata[t][k][sl] for k in ("E", "nu", "rho", "t", "z0", "k", "nsm")))
                lin, grad, D = shell.shell_green_operators(t, mesh.points[conn[sl]], props)
                yield dmap.element_dofs(conn[sl], 6), lin, grad, D, shell.GREEN_SELECTORS
    if mesh.beams:
        bdata = beam_cell_data(mesh, materials)
        conn = mesh.beams["line"]
        for s0 in range(0, len(conn), cells_per_chunk):
            sl = slice(s0, min(s0 + cells_per_chunk, len(conn)))
            lin, grad, D = beam.beam_green_operators(mesh.points[conn[sl]], {k: v[sl] for k, v in bdata.items()})
            yield dmap.element_dofs(conn[sl], 6), lin, grad, D, _BEAM_SELECTOR


def structural_pair_quadrature(mesh, shapes, materials=None, *, loads: bool = False):
    """The shells' and beams' part of :func:`flexmb.fe.reduction.stiffening.pair_quadrature`.

    Parameters
    ----------
    mesh : FEMesh
        With shells or beams (``mesh.dof_map`` has rotations).
    shapes : array_like, shape (n_dofs, nm)
    loads : bool
        Also the pair loads.

    Returns
    -------
    Hp : ndarray, shape (P, P)
        Quartic pair matrix (pairs ``i <= j`` in ``np.triu_indices(nm)`` order).
    Bm, Bk : ndarray, shape (P, n_dofs), or None
        Membrane (``N(v) . E_nl(i, j)``) and geometric (``N_i . E_nl(v, phi_j) + N_j . E_nl(v, phi_i)``)
        pair loads (N per unit q^2).
    Gp : ndarray, shape (nm, P)
        Cubic coefficients ``G[k, p(i, j)] = sum N_k . E_nl(i, j)`` (energy per unit q^3).
    """
    P = np.asarray(shapes, dtype=float)
    nm = P.shape[1]
    n_dofs = mesh.dof_map.n_dofs
    iu, ju = np.triu_indices(nm)
    npair = iu.size
    Hp = np.zeros((npair, npair))
    Gp = np.zeros((nm, npair))
    Bn = np.zeros((2, n_dofs, npair)) if loads else None
    for dofs, lin, grad, D, W in structural_green_blocks(mesh, materials):
        c, p, s, nd = lin.shape
        m = grad.shape[2]
        step = max(1, CHUNK_ENTRIES // max(1, p * (s * m + 3 * m + 2 * s) * npair + p * m * nm))
        for a0 in range(0, c, step):  # sub-chunks bounding the pair temporaries
            sl = slice(a0, min(a0 + step, c))
            Pe = P[dofs[sl]]  # (c, nd, nm)
            g = np.einsum("cpmd,cdn->cpmn", grad[sl], Pe, optimize=True)
            Wg = np.einsum("smn,cpnj->cpsmj", W, g)[..., ju]  # (c, p, s, m, P)
            E = np.einsum("cpmP,cpsmP->cpsP", g[..., iu], Wg, optimize=True)
            Nk = np.einsum("cpst,cptd,cdn->cpsn", D[sl], lin[sl], Pe, optimize=True)
            Gp += np.einsum("cpsk,cpsP->kP", Nk, E, optimize=True)
            L = np.linalg.cholesky(D[sl])  # D = L L^T: rows L^T E
            A = np.einsum("cpts,cptP->cpsP", L, E).reshape(-1, npair)
            Hp += A.T @ A
            if not loads:
                continue
            cc = dofs[sl].size
            scatter = sp.csr_matrix((np.ones(cc), (dofs[sl].ravel(), np.arange(cc))), shape=(n_dofs, cc))
            bm = np.einsum("cpsd,cpst,cptP->cdP", lin[sl], D[sl], E, optimize=True)
            X = np.einsum("smn,cpsP,cpnP->cpmP", W, Nk[..., iu], g[..., ju], optimize=True)
            X += np.einsum("smn,cpsP,cpnP->cpmP", W, Nk[..., ju], g[..., iu], optimize=True)
            bk = np.einsum("cpmd,cpmP->cdP", grad[sl], X, optimize=True)
            Bn[0] += scatter @ bm.reshape(cc, npair)
            Bn[1] += scatter @ bk.reshape(cc, npair)
    Hp = 0.5 * (Hp + Hp.T)
    if Bn is None:
        return Hp, None, None, Gp
    return Hp, np.ascontiguousarray(Bn[0].T), np.ascontiguousarray(Bn[1].T), Gp


def structural_strain_energy(mesh, u, materials=None) -> float:
    """Nonlinear strain energy of the shells and beams for the nodal displacement ``u`` (n_dofs,), J:
    their membrane Green-strain terms ``sum_p [1/2 N(u) . E_nl(u, u) + 1/8 E_nl^T D E_nl]`` beyond the
    linear energy ``1/2 u^T K u`` (which the caller adds with the assembled K)."""
    u = np.asarray(u, dtype=float)
    out = 0.0
    for dofs, lin, grad, D, W in structural_green_blocks(mesh, materials):
        ue = u[dofs]
        g = np.einsum("cpmd,cd->cpm", grad, ue)
        E = np.einsum("cpm,smn,cpn->cps", g, W, g)
        N = np.einsum("cpst,cptd,cd->cps", D, lin, ue)
        out += float(0.5 * np.sum(N * E) + 0.125 * np.einsum("cps,cpst,cpt->", E, D, E))
    return out
