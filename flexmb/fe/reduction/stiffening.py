"""Geometric nonlinearity of a modal body: the cubic and quartic strain-energy terms of the reduced field.

For a displacement field ``u = sum_i phi_i q_i`` (shapes ``phi_i``, modal coordinates ``q``) the
Green-Lagrange strain is, with ``H_i = grad phi_i`` (``(H_i)_ab = d phi_i,a / d x0_b``)::

    E(q) = sum_i q_i eps_i + 1/2 sum_ij q_i q_j E_nl(i, j),
    eps_i = sym(H_i),   E_nl(i, j) = sym(H_i^T H_j) = (H_i^T H_j + H_j^T H_i) / 2

and the St. Venant-Kirchhoff strain energy ``U = int 1/2 E : C : E dV`` is exactly the quartic
polynomial ::

    U(q) = 1/2 q^T K q + 1/2 sum_kij G[k,i,j] q_k q_i q_j + 1/8 sum_ijkl H[i,j,k,l] q_i q_j q_k q_l

    K[i, j]       = int eps_i : C : eps_j dV                  (modal stiffness, Phi^T K Phi)
    G[k, i, j]    = int sigma_k : E_nl(i, j) dV = phi_i^T K_sigma(sigma_k) phi_j,  sigma_k = C : eps_k
    H[i, j, k, l] = int E_nl(i, j) : C : E_nl(k, l) dV

All three integrals use the element stiffness quadrature rule, so the identity holds to round-off
for the FE field (the FE total-Lagrangian SVK energy of the nodal displacement ``Phi q`` with that
rule; for hex8 and wedge6 with incompatible modes, of the enhanced field with the internal modes at
their linear condensation, docs/theory.md 11.1). ``G`` is symmetric in (i, j); ``H`` in (i, j), in (k, l) and under (i, j) <-> (k, l). Units:
U in J; each coefficient is energy per unit q^2, q^3, q^4 (for mass-normalized shapes q is in
kg^1/2 m and K = diag(omega2) in 1/s^2). See docs/theory.md, "Modal geometric stiffening data".

Without the quartic term the energy is unbounded below (the cubic term changes sign with q); with it
``U >= 0`` for every q since ``C`` is positive definite.

This ``H`` is the energy of ``Phi q`` with every other FE displacement held at zero; for a basis
without the axial/static shapes it locks the membrane energy. :mod:`flexmb.fe.reduction.condensation`
relaxes it over the complement of the basis with the pair loads of :func:`pair_quadrature` (the
default of ``build_flexible_body``).
"""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import ArrayLike, NDArray


__all__ = [
    "expand_pairs",
    "modal_elastic_force",
    "modal_geometric_stiffness",
    "modal_quartic_stiffness",
    "modal_strain_energy",
    "modal_tangent_stiffness",
    "pair_quadrature",
    "rigid_face_pair_displacements",
]

logger = logging.getLogger(__name__)


def _fe():
    from flexmb.fe.elements import assembly as fe_assembly  # local import: assembly needs the mesh module, reduction does not

    return fe_assembly


def modal_geometric_stiffness(mesh, shapes: ArrayLike, materials=None) -> NDArray[np.float64]:
    """Projected geometric stiffness of each mode's own stress state (the cubic energy term).

    ``G[k, i, j] = phi_i^T K_sigma(sigma(phi_k)) phi_j = int sigma_k : E_nl(i, j) dV``, with
    ``sigma(phi_k)`` the linear-elastic stress of shape k (per unit modal coordinate) and
    ``K_sigma`` the FE geometric stiffness (:func:`flexmb.fe.elements.assembly.assemble_geometric_stiffness`).

    The elastic energy of ``u = Phi q`` gains the cubic term ``U3 = 1/2 G[k,i,j] q_k q_i q_j`` (the
    quartic term is :func:`modal_quartic_stiffness`; see the module docstring), so

    * cubic part of the generalized elastic force: ``1/2 G[m,i,j] q_i q_j + G[k,m,j] q_k q_j``;
    * cubic part of the tangent stiffness: ``sum_k q_k (G[k] + G[:, :, k] + G[:, :, k]^T)``, where
      ``sum_k q_k G[k]`` is the stress stiffening by the current elastic stress.

    Parameters
    ----------
    mesh : FEMesh
    shapes : array_like, shape (n_dofs, nm)
        On ``mesh.dof_map``: shells contribute the geometric stiffness of their membrane force,
        beams that of their axial force (:func:`flexmb.fe.elements.assembly.assemble_geometric_stiffness`).

    Returns
    -------
    G : ndarray, shape (nm, nm, nm)
        Energy per unit q^3, symmetric in the last two indices.
    """
    fe = _fe()
    P = np.asarray(shapes, dtype=float)
    nm = P.shape[1]
    G = np.empty((nm, nm, nm))
    for k in range(nm):  # loop over modes: each is one vectorized stress + assembly pass
        Ks = fe.assemble_geometric_stiffness(mesh, fe.element_stresses(mesh, P[:, k], materials), materials)
        g = P.T @ (Ks @ P)
        G[k] = 0.5 * (g + g.T)
    return G


def modal_quartic_stiffness(mesh, shapes: ArrayLike, materials=None) -> NDArray[np.float64]:
    """Quartic strain-energy coefficients ``H[i,j,k,l] = int E_nl(i,j) : C : E_nl(k,l) dV``.

    ``E_nl(i, j) = sym(H_i^T H_j)`` with ``H_i = grad phi_i``; the energy term is
    ``U4 = 1/8 H[i,j,k,l] q_i q_j q_k q_l`` (module docstring). Computed with the element stiffness
    quadrature rule, vectorized over cells and quadrature points: for the ``P = nm (nm + 1) / 2``
    index pairs i <= j, each quadrature point contributes seven rows (``sqrt(lambda w) tr E`` and
    ``sqrt(2 mu w)`` times the Voigt components, shear ones times sqrt(2)) to a matrix ``A``, and
    the pair matrix is ``A^T A`` (one BLAS product per chunk of cells), expanded to the four
    indices at the end.

    Cost: about ``7 n_qp P^2`` flops (``n_qp`` quadrature points of the mesh), linear in the mesh
    size; measured 1.4 s for nm = 30 (P = 465) on the shipped connecting rod (tet10, 6,704 points,
    2 shared cores), i.e. ~0.2 ms per point; memory ``P^2 + nm^4`` doubles plus the chunk
    (:data:`flexmb.fe.reduction.solid_pairs.QUARTIC_CHUNK_ENTRIES`).

    Parameters
    ----------
    mesh : FEMesh
    shapes : array_like, shape (n_dofs, nm)
        Shapes on ``mesh.dof_map`` (node-major; ``3 n_nodes`` rows for solids): shells and beams add
        the quartic energy of their membrane Green strain (:mod:`flexmb.fe.reduction.structural_pairs`).
    materials : optional
        Overrides ``mesh.materials`` (see :func:`flexmb.fe.elements.assembly.assemble_stiffness`).

    Returns
    -------
    H : ndarray, shape (nm, nm, nm, nm)
        Energy per unit q^4; ``H[i,j,k,l] = H[j,i,k,l] = H[i,j,l,k] = H[k,l,i,j]``; positive
        semi-definite as a (pair, pair) matrix.
    """
    Hp, _, _ = pair_quadrature(mesh, shapes, materials, loads=False)
    return expand_pairs(Hp, np.asarray(shapes).shape[1])


def expand_pairs(Hp: NDArray[np.float64], nm: int) -> NDArray[np.float64]:
    """Expand a (pair, pair) matrix over the pairs ``i <= j`` (``np.triu_indices(nm)`` order) to
    the four-index array ``H[i, j, k, l] = Hp[p(i, j), p(k, l)]``, shape (nm, nm, nm, nm)."""
    iu, ju = np.triu_indices(nm)
    idx = np.empty((nm, nm), dtype=np.int64)
    idx[iu, ju] = np.arange(iu.size)
    idx[ju, iu] = np.arange(iu.size)
    return Hp[idx[:, :, None, None], idx[None, None, :, :]]


def pair_quadrature(mesh, shapes: ArrayLike, materials=None, *, loads: bool = False, internal: bool = False):
    """Quadrature pass over the index pairs ``i <= j`` of the shapes: quartic pair matrix and pair loads.

    Returns ``(Hp, Bm, Bk)``, and ``(Hp, Bm, Bk, Ci)`` with ``internal``:

    * ``Hp`` (P, P), ``P = nm (nm + 1) / 2`` pairs in ``np.triu_indices(nm)`` order:
      ``Hp[p(i,j), p(k,l)] = int E_nl(i,j) : C : E_nl(k,l) dV`` (:func:`modal_quartic_stiffness`
      expands it), symmetric positive semi-definite.
    * ``Bm``, ``Bk`` (P, n_dofs) when ``loads`` (else None): the membrane and geometric-stiffness
      parts, ``b_ij = Bm[p] + Bk[p]``, of the FE vectors ``b_ij`` of the part of the
      SVK energy of ``u = Phi q + v`` that is quadratic in q and linear in v,
      ``U(Phi q + v) = U(Phi q) + q^T Phi^T K v + 1/2 sum_ij q_i q_j b_ij . v + O(q^3 v, q v^2)``::

          b_ij . v = int [ eps(v) : C : E_nl(i,j) + sigma_i : E_nl(v, phi_j) + sigma_j : E_nl(v, phi_i) ] dV
                   = g_ij . v + v^T (K_sigma(sigma_i) phi_j + K_sigma(sigma_j) phi_i)

      (``g_ij = int B^T C E_nl(i,j) dV``, the membrane part; the second, geometric-stiffness part is
      of relative order (thickness / length)^2 in a slender beam). Node-major, N per unit q^2.
      ``Bm[p(i,j)] = g_ij``, ``Bk[p(i,j)] = K_sigma(sigma_i) phi_j + K_sigma(sigma_j) phi_i``.
    * ``Ci`` (3, P, P) or None: the second-order relaxation of the incompatible modes of hex8/wedge6
      cells, ``[bm_a . K_aa^-1 bm_a, bk_a . K_aa^-1 bm_a, bk_a . K_aa^-1 bk_a]`` summed over the cells
      (:mod:`flexmb.fe.reduction.solid_pairs`): with the pair loads ``bm_a + w bk_a`` on the internal modes
      the relaxed quartic term loses ``Ci[0] + w (Ci[1] + Ci[1]^T) + w^2 Ci[2]``. None without such cells.

    Fields, gradients and strains of the cells with incompatible modes are those of their enhanced
    field (docs/theory.md 11.1), so that ``K``, ``G`` (:func:`modal_geometric_stiffness`), ``H`` and the
    pair loads are derivatives of one energy.

    Vectorized over cells and quadrature points in chunks; the pair loads are scattered to the nodes
    with one sparse product per chunk. Shapes and loads are on ``mesh.dof_map``: the solid cells use
    the translations (:func:`flexmb.fe.reduction.solid_pairs.solid_pair_quadrature`), shells and beams
    add their membrane Green strain (:func:`flexmb.fe.reduction.structural_pairs.structural_pair_quadrature`).
    """
    from flexmb.fe.reduction.solid_pairs import solid_pair_quadrature

    P_all = np.asarray(shapes, dtype=float)
    dmap = getattr(mesh, "dof_map", None)
    structural = dmap is not None and dmap.has_rotations
    P = P_all[dmap.translations().ravel()] if structural else P_all
    Hp, Bm, Bk, Ci = solid_pair_quadrature(mesh, P, materials, loads=loads)
    if structural:
        from flexmb.fe.reduction.structural_pairs import structural_pair_quadrature

        Hs, Bms, Bks, _ = structural_pair_quadrature(mesh, P_all, materials, loads=loads)
        Hp = Hp + Hs
        if loads:
            tr = dmap.translations().ravel()
            Bms[:, tr] += Bm
            Bks[:, tr] += Bk
            Bm, Bk = Bms, Bks
    return (Hp, Bm, Bk, Ci) if internal else (Hp, Bm, Bk)


def rigid_face_pair_displacements(points: ArrayLike, basis) -> NDArray[np.float64] | None:
    """Second-order displacements of the rigid interface faces that rotate with the modal coordinates.

    A rigid (RBE2-like) interface couples its nodes to the frame by the *linearized* rigid motion
    ``t + theta x r`` (``r`` = node minus frame point), and the shapes carry only that. The frame itself
    turns by ``exp(Phi_r q)`` in the dynamics, so its nodes are at ``t + exp(theta) r``: beyond the
    linear part, the face moves by ``1/2 theta x (theta x r) = 1/2 sum_ij q_i q_j s_ij`` with ::

        s_ij(r) = 1/2 [theta_i (theta_j . r) + theta_j (theta_i . r)] - (theta_i . theta_j) r

    (``theta_i`` the face rotation of shape i, rows 3:6 of the interface's ``modal_map``). Without it
    the relaxation (:mod:`flexmb.fe.reduction.condensation`) holds the face to its linearized rotation, whose
    Green strain is not zero (``E = theta^2 / 2`` in the face plane for a rotation about a face axis):
    that strain locks in the elements next to the face, measured 98 % of the relaxed quartic energy of
    the X3 rod's first shape, and does not converge with refinement along the length (it is a
    boundary layer of thickness ~ the section size).

    Only for a basis whose complement keeps the rigid couplings (a reference interface: the static
    solves of :func:`flexmb.fe.reduction.preloads.static_preload_displacements`); the reference face does not
    turn (zero ``modal_map``). None when no rigid face turns.

    Parameters
    ----------
    points : array_like, shape (n_nodes, 3)
        Node coordinates (m).
    basis : ModalBasis

    Returns
    -------
    S : ndarray, shape (P, 3 n_nodes) or None
        ``s_ij`` over the pairs ``i <= j`` (``np.triu_indices(nm)`` order), node-major, m per unit q^2;
        zero outside the rigid faces.
    """
    if getattr(basis, "reference", None) is None:
        return None
    x = np.asarray(points, dtype=float)
    nm = basis.n_modes
    iu, ju = np.triu_indices(nm)
    S = None
    for f in basis.interfaces:
        if f.kind != "rigid" or f.is_reference:
            continue
        th = np.asarray(f.modal_map, dtype=float)[3:6]  # (3, nm) rad per unit q
        if not np.any(th):
            continue
        if S is None:
            S = np.zeros((iu.size, x.shape[0], 3))
        r = x[f.nodes] - f.position  # (m, 3)
        tr = r @ th  # (m, nm): theta_i . r
        ti, tj = th[:, iu], th[:, ju]  # (3, P)
        S[:, f.nodes, :] += (0.5 * (ti.T[:, None, :] * tr[:, ju].T[:, :, None] + tj.T[:, None, :] * tr[:, iu].T[:, :, None])
                             - np.einsum("ap,ap->p", ti, tj)[:, None, None] * r[None, :, :])
    return None if S is None else S.reshape(iu.size, 3 * x.shape[0])


def modal_strain_energy(q: ArrayLike, K: ArrayLike, G: ArrayLike | None = None,
                        H: ArrayLike | None = None) -> float:
    """Strain energy ``1/2 q^T K q + 1/2 G[k,i,j] q_k q_i q_j + 1/8 H[i,j,k,l] q_i q_j q_k q_l``.

    Parameters
    ----------
    q : array_like, shape (nm,)
        Modal coordinates.
    K : array_like, shape (nm, nm)
        Modal stiffness (``diag(omega2)`` for mass-normalized modes).
    G : array_like, shape (nm, nm, nm), optional
        :func:`modal_geometric_stiffness` (cubic term; omitted if None).
    H : array_like, shape (nm, nm, nm, nm), optional
        :func:`modal_quartic_stiffness` (quartic term; omitted if None).

    Returns
    -------
    float
        Energy (J for SI data).
    """
    q = np.asarray(q, dtype=float)
    u = 0.5 * q @ (np.asarray(K) @ q)
    if G is not None:
        u += 0.5 * q @ (np.tensordot(np.asarray(G), q, axes=([2], [0])) @ q)
    if H is not None:
        h2 = np.tensordot(np.tensordot(np.asarray(H), q, axes=([3], [0])), q, axes=([2], [0]))  # (nm, nm)
        u += 0.125 * q @ (h2 @ q)
    return float(u)


def modal_elastic_force(q: ArrayLike, K: ArrayLike, G: ArrayLike | None = None,
                        H: ArrayLike | None = None) -> NDArray[np.float64]:
    """Generalized elastic force ``dU/dq`` of :func:`modal_strain_energy`, shape (nm,).

    ``f_m = K[m,j] q_j + 1/2 G[m,i,j] q_i q_j + G[k,m,j] q_k q_j + 1/2 H[m,j,k,l] q_j q_k q_l``.
    """
    q = np.asarray(q, dtype=float)
    f = np.asarray(K) @ q
    if G is not None:
        G = np.asarray(G)
        Gq = np.tensordot(G, q, axes=([2], [0]))  # Gq[k, i] = G[k,i,j] q_j
        f = f + 0.5 * Gq @ q + q @ Gq
    if H is not None:
        h2 = np.tensordot(np.tensordot(np.asarray(H), q, axes=([3], [0])), q, axes=([2], [0]))
        f = f + 0.5 * h2 @ q
    return f


def modal_tangent_stiffness(q: ArrayLike, K: ArrayLike, G: ArrayLike | None = None,
                            H: ArrayLike | None = None) -> NDArray[np.float64]:
    """Tangent stiffness ``d^2 U / dq dq`` of :func:`modal_strain_energy`, shape (nm, nm), symmetric.

    ``T = K + sum_j q_j (G[j] + G[:, :, j] + G[:, :, j]^T)
    + 1/2 H[m,n,k,l] q_k q_l + H[m,j,n,l] q_j q_l``.
    """
    q = np.asarray(q, dtype=float)
    T = np.array(K, dtype=float)
    if G is not None:
        G = np.asarray(G)
        a = np.tensordot(q, G, axes=([0], [0]))  # sum_j q_j G[j]
        b = np.tensordot(G, q, axes=([2], [0]))  # [m, n] = G[m, n, j] q_j
        T = T + a + b + b.T
    if H is not None:
        H = np.asarray(H)
        T = T + 0.5 * np.tensordot(np.tensordot(H, q, axes=([3], [0])), q, axes=([2], [0]))
        T = T + np.tensordot(np.tensordot(H, q, axes=([1], [0])), q, axes=([2], [0]))  # [m, n] = H[m,j,n,l] q_j q_l
    return T
