"""Vectorized assembly of linear-elastic FE matrices and loads on an FEMesh: solid cells here, shells,
beams, point masses and springs through :mod:`.mixed`.

Everything is computed per cell type for all cells at once (loops run only over cell types and
chunks of cells, never over single elements) and scattered with one sparse conversion.

DOF order (the layout of every displacement vector and matrix here): ``mesh.dof_map``
(:mod:`.dofs`). For a model of solid cells: node-major ``[ux0, uy0, uz0, ux1, uy1, uz1, ...]``,
length ``3 * n_nodes``, node ``a`` owns DOFs ``3a, 3a+1, 3a+2``. Nodes of shells and beams carry
``(ux, uy, uz, rx, ry, rz)``. Stress (Voigt) order: ``[xx, yy, zz, yz, xz, xy]``.

Units: whatever consistent system the mesh and materials use; for SI, K in N/m, M in kg, stresses
in Pa, forces in N.

The solid kernels (node-pair pattern, chunks, geometry) are in :mod:`.solid_kernels`; the stress
recovery in :mod:`.stresses` (re-exported here).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.elements import mixed
from flexmb.fe.elements.incompatible import condensation, geometric_condensation, internal_modes
from flexmb.fe.elements.solid import get_element
from flexmb.fe.elements.solid_kernels import (
    Materials, Pattern, chunks, enhanced, geometry, lame, pattern, voigt_to_tensor,
)
from flexmb.fe.elements.stresses import element_stresses as element_stresses
from flexmb.fe.elements.stresses import nodal_stress_operator as nodal_stress_operator
from flexmb.fe.elements.stresses import nodal_stresses as nodal_stresses
from flexmb.fe.elements.stresses import shell_surface_stresses as shell_surface_stresses
from flexmb.fe.mesh.femesh import FEMesh
from flexmb.fe.spd_solve import blas_threads

__all__ = [
    "assemble_geometric_stiffness",
    "assemble_mass",
    "assemble_scalar_mass",
    "assemble_stiffness",
    "body_force_vector",
    "element_stiffness",
    "element_stresses",
    "nodal_stress_operator",
    "nodal_stresses",
    "quadrature_jacobians",
    "shell_surface_stresses",
]

# ============================================================================================
# matrices
# ============================================================================================


def assemble_stiffness(mesh: FEMesh, materials: Materials = None) -> sp.csr_array:
    """Linear-elastic stiffness matrix.

    K = sum_e int_e B^T D B dV with each element's stiffness quadrature rule (solids; hex8 and
    wedge6 with condensed incompatible modes unless ``mesh.formulations`` says "plain"), plus the
    shells, beams and springs of the mesh (:mod:`.mixed`).

    Parameters
    ----------
    mesh : FEMesh
    materials : Material or dict of str to Material, optional
        Overrides ``mesh.materials`` (see :meth:`FEMesh.cell_materials`).

    Returns
    -------
    K : scipy.sparse.csr_array, shape (n_dofs, n_dofs)
        Symmetric positive semi-definite (N/m in SI); six zero eigenvalues per connected part
        without springs to ground. ``n_dofs = 3 n_nodes`` for solid-only models.
    """
    k3 = _solid_stiffness(mesh, materials)
    if not mesh.has_structural:
        return k3
    return sp.csr_array(mixed.embed_solid(mesh, k3) + mixed.structural_matrix(mesh, "K", materials))


def _solid_stiffness(mesh: FEMesh, materials: Materials) -> sp.csr_array:
    pat = pattern(mesh)
    acc = np.zeros((pat.nnz, 3, 3))
    with blas_threads(1):  # batches of small products (1.5 s -> 1.0 s on a 19^3 hex8 cube, load 4.6)
        for t, sl, ke in element_stiffness(mesh, materials):
            k = ke.shape[1]
            slots = pat.slot[t][sl.start * k * k : sl.stop * k * k]
            for i in range(3):
                for j in range(3):
                    acc[:, i, j] += np.bincount(slots, weights=ke[:, :, i, :, j].ravel(), minlength=pat.nnz)
    return pat.blocks(acc)


def element_stiffness(mesh: FEMesh, materials: Materials = None, chunk_entries: int | None = None):
    """The stiffness matrices of the solid cells, by type and chunk: yields ``(t, sl, Ke)`` with ``sl``
    the slice of the cells of type ``t`` and ``Ke (c, k, 3, k, 3)`` (N/m) their element matrices,
    ``Ke[e, a, i, b, j]`` coupling DOF ``i`` of node ``a`` to DOF ``j`` of node ``b``: hex8 and
    wedge6 with their incompatible modes condensed (:func:`.solid_kernels.enhanced`), so that the
    sum of the ``Ke`` is the solid part of :func:`assemble_stiffness` exactly. At most
    ``chunk_entries`` node pairs (``c k^2``) per chunk (default :data:`.solid_kernels.CHUNK_ENTRIES`)."""
    fields = mesh.cell_materials(materials)
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        rule = elem.stiffness_rule
        lam_all, mu_all = lame(fields[t])
        k = elem.n_nodes
        has_modes = enhanced(mesh, t)
        for sl in chunks(len(conn), k, 9 if has_modes else 1, chunk_entries):
            det_j, g = geometry(mesh, t, sl, rule.points)  # (c, q), (c, q, k, 3)
            c, q = det_j.shape
            wd = det_j * rule.weights
            a = (g * wd[:, :, None, None]).reshape(c, q, 3 * k)
            p = np.matmul(a.transpose(0, 2, 1), g.reshape(c, q, 3 * k)).reshape(c, k, 3, k, 3)
            # P[c, a, i, b, j] = int dNa/dx_i dNb/dx_j dV; block (a, b) of the element matrix:
            # K_ij = lam P[a, i, b, j] + mu P[a, j, b, i] + mu delta_ij sum_d P[a, d, b, d]
            lam = lam_all[sl, None, None, None, None]
            mu = mu_all[sl, None, None, None, None]
            ke = lam * p + mu * p.transpose(0, 1, 4, 3, 2)
            s_ab = mu[..., 0, 0] * (p[:, :, 0, :, 0] + p[:, :, 1, :, 1] + p[:, :, 2, :, 2])
            for i in range(3):
                ke[:, :, i, :, i] += s_ab
            if has_modes:  # incompatible modes condensed: K_uu - K_ua K_aa^-1 K_au
                corr, _ = condensation(elem, mesh.points[conn[sl]], g, det_j, rule.weights, lam_all[sl], mu_all[sl])
                ke -= corr.reshape(c, k, 3, k, 3)
            yield t, sl, ke


def _scalar_mass_values(mesh: FEMesh, materials: Materials) -> tuple[Pattern, NDArray[np.float64]]:
    fields = mesh.cell_materials(materials)
    pat = pattern(mesh)
    acc = np.zeros(pat.nnz)
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        rule = elem.mass_rule
        k = elem.n_nodes
        n_shape = elem.shape(rule.points)  # (q, k)
        nn = (n_shape[:, :, None] * n_shape[:, None, :]).reshape(len(rule.weights), k * k)
        for sl in chunks(len(conn), k):
            det_j, _ = geometry(mesh, t, sl, rule.points)
            wd = det_j * rule.weights * fields[t][sl, 2:3]
            me = wd @ nn  # (c, k*k)
            s0 = sl.start * k * k
            acc += np.bincount(pat.slot[t][s0 : s0 + me.size], weights=me.ravel(), minlength=pat.nnz)
    return pat, acc


def assemble_scalar_mass(mesh: FEMesh, materials: Materials = None) -> sp.csr_array:
    """Scalar consistent mass matrix Ms_ab = int rho N_a N_b dV (plus point masses on the diagonal).

    Defined for models whose mass is the same in the three directions and has no rotational part:
    solid cells and point masses without rotary inertia or offset (at nodes without rotations).

    Returns
    -------
    Ms : scipy.sparse.csr_array, shape (n_nodes, n_nodes)
        Symmetric positive (semi-)definite (kg); ``Ms.sum()`` is the total mass, and
        ``x^T Ms 1`` / ``x^T Ms x`` give first / second mass moments of the interpolated geometry.
        The vector mass matrix is ``kron(Ms, I3)``.

    Raises
    ------
    ModelError
        For a model with shells or beams (rotational DOFs): use :func:`assemble_mass`.
    """
    if mesh.dof_map.has_rotations:
        raise ModelError(
            f"assemble_scalar_mass: {mesh.source or 'the mesh'} has shells or beams (rotational DOFs), whose mass is "
            "no scalar matrix times I3; use assemble_mass (the full consistent mass on mesh.dof_map)."
        )
    pat, acc = _scalar_mass_values(mesh, materials)
    ms = pat.scalar(acc)
    if mesh.point_masses is not None:
        pm = mesh.point_masses
        ms = sp.csr_array(ms + sp.csr_array((pm.matrix[:, 0, 0], (pm.nodes, pm.nodes)), shape=ms.shape))
    return ms


def assemble_mass(mesh: FEMesh, materials: Materials = None) -> sp.csr_array:
    """Consistent mass matrix: ``kron(Ms, I3)`` of the solid cells (see :func:`assemble_scalar_mass`)
    plus the shells, beams (translational and rotary inertia) and point masses (:mod:`.mixed`).

    Returns
    -------
    M : scipy.sparse.csr_array, shape (n_dofs, n_dofs)
        Symmetric positive definite on the used DOFs (kg, kg m, kg m^2).
    """
    pat, acc = _scalar_mass_values(mesh, materials)
    m3 = pat.isotropic(acc)
    if not mesh.has_structural:
        return m3
    return sp.csr_array(mixed.embed_solid(mesh, m3) + mixed.structural_matrix(mesh, "M", materials))


def assemble_geometric_stiffness(
    mesh: FEMesh, stresses: Mapping[str, NDArray[np.float64]], materials: Materials = None
) -> sp.csr_array:
    """Geometric (stress-stiffening) matrix of a given stress state.

    K_sigma = sum_e int_e G^T S G dV, S = blockdiag(sigma, sigma, sigma), i.e.
    K_sigma[3a+i, 3b+j] = delta_ij int dN_a/dx_k sigma_kl dN_b/dx_l dV; for hex8 and wedge6 with
    incompatible modes the same form over the enhanced field (nodal functions and internal modes,
    the modes following their condensation ``alpha = -S u_e``): ``T^T K_sigma(ext) T``, the
    first-order change of the condensed tangent stiffness under the prestress (docs/theory.md 11.1).

    Shells: the same form over the mid-surface with the membrane force ``N = t sigma`` (in-plane
    part of their stress); beams: the axial force ``N = A sigma_xx`` on the axis (with Wagner's
    twist term); see :mod:`.shell`, :mod:`.beam`. Springs and point masses have none.

    Parameters
    ----------
    mesh : FEMesh
    stresses : dict of str to ndarray, shape (n_cells, n_qp, 6)
        Cauchy stress (Pa) in Voigt order [xx, yy, zz, yz, xz, xy] at the stiffness quadrature
        points of each cell type (shells: their stress points, beams: one point), as returned by
        :func:`element_stresses`.
    materials : optional
        Overrides ``mesh.materials`` (see :func:`assemble_stiffness`): the condensation of the
        incompatible modes depends on them; pass those the stresses were computed with.

    Returns
    -------
    K_sigma : scipy.sparse.csr_array, shape (n_dofs, n_dofs)
        Symmetric (N/m in SI); linear in ``stresses``.
    """
    k3 = _solid_geometric_stiffness(mesh, stresses, materials)
    if not (mesh.shells or mesh.beams):
        return mixed.embed_solid(mesh, k3)
    return sp.csr_array(mixed.embed_solid(mesh, k3) + mixed.structural_matrix(mesh, "Kg", stresses=stresses))


def _solid_geometric_stiffness(mesh: FEMesh, stresses: Mapping[str, NDArray[np.float64]],
                               materials: Materials = None) -> sp.csr_array:
    """K_sigma of the solid cells: isotropic 3x3 blocks, unless a cell type has incompatible modes,
    whose enhanced field gives full blocks (:func:`.incompatible.geometric_condensation`)."""
    pat = pattern(mesh)
    blocks = any(enhanced(mesh, t) for t in mesh.cells)
    acc = np.zeros((pat.nnz, 3, 3) if blocks else pat.nnz)
    fields = mesh.cell_materials(materials) if blocks else None
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        rule = elem.stiffness_rule
        k = elem.n_nodes
        if t not in stresses:
            raise ModelError(f"assemble_geometric_stiffness: `stresses` has no entry for cell type {t!r}.")
        s_all = np.asarray(stresses[t], dtype=float)
        if s_all.shape != (len(conn), rule.n_points, 6):
            raise ModelError(
                f"assemble_geometric_stiffness: stresses[{t!r}] has shape {s_all.shape}, expected "
                f"{(len(conn), rule.n_points, 6)} (cells, quadrature points, Voigt); use element_stresses()."
            )
        has_modes = enhanced(mesh, t)
        for sl in chunks(len(conn), k, 9 if has_modes else 1):
            det_j, g = geometry(mesh, t, sl, rule.points)
            modes = None
            if has_modes:  # the internal modes' gradients join the nodal ones, then T^T (.) T
                lam, mu = lame(fields[t][sl])
                modes = internal_modes(elem, mesh.points[conn[sl]], g, det_j, rule.weights, lam, mu)
                g = np.concatenate([g, modes.gradients], axis=2)
            c, q, kk, _ = g.shape
            s = voigt_to_tensor(s_all[sl]) * (det_j * rule.weights)[:, :, None, None]
            gs = np.einsum("cqad,cqde->cqae", g, s)  # (c, q, kk, 3)
            a = gs.transpose(0, 2, 1, 3).reshape(c, kk, 3 * q)
            b = g.transpose(0, 2, 1, 3).reshape(c, kk, 3 * q)
            ke = np.matmul(a, b.transpose(0, 2, 1))  # (c, kk, kk)
            slots = pat.slot[t][sl.start * k * k : sl.stop * k * k]
            if modes is not None:
                kb = geometric_condensation(ke, modes.recovery)
                for i in range(3):
                    for j in range(3):
                        acc[:, i, j] += np.bincount(slots, weights=kb[:, :, i, :, j].ravel(), minlength=pat.nnz)
            elif blocks:
                add = np.bincount(slots, weights=ke.ravel(), minlength=pat.nnz)
                for i in range(3):
                    acc[:, i, i] += add
            else:
                acc += np.bincount(slots, weights=ke.ravel(), minlength=pat.nnz)
    return pat.blocks(acc) if blocks else pat.isotropic(acc)


# ============================================================================================
# loads and geometry
# ============================================================================================


def body_force_vector(mesh: FEMesh, accel: ArrayLike, materials: Materials = None) -> NDArray[np.float64]:
    """Consistent nodal load of a body-force density rho * accel.

    f_a = int N_a rho b dV with b interpolated from nodal values, i.e. ``f = M @ b`` with ``b`` the
    acceleration on the translations (zero on rotations): shells, beams and point masses included.

    Parameters
    ----------
    accel : ndarray, shape (3,) or (n_nodes, 3)
        Acceleration field (m/s^2), e.g. gravity (0, 0, -9.81): uniform or per node.

    Returns
    -------
    f : ndarray, shape (n_dofs,)
        Forces (N) on mesh.dof_map (moments about the nodes on rotations, N m); the sum of the x
        translations is the total body force in x.
    """
    a = np.asarray(accel, dtype=float)
    if a.shape == (3,):
        a = np.tile(a, (mesh.n_nodes, 1))
    elif a.shape != (mesh.n_nodes, 3):
        raise ModelError(f"body_force_vector: `accel` has shape {a.shape}; expected (3,) or ({mesh.n_nodes}, 3).")
    if not mesh.has_structural:
        ms = assemble_scalar_mass(mesh, materials)
        return (ms @ a).ravel()
    b = np.zeros(mesh.n_dofs)
    b[mesh.dof_map.translations()] = a
    return assemble_mass(mesh, materials) @ b


def quadrature_jacobians(mesh: FEMesh) -> dict[str, NDArray[np.float64]]:
    """Jacobian determinants at the stiffness quadrature points.

    Returns
    -------
    dict of str to ndarray, shape (n_cells, n_qp)
        det(dx/dxi) per cell type (m^3 per unit reference volume); <= 0 for inverted/degenerate cells.
    """
    out = {}
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        det = np.empty((len(conn), elem.stiffness_rule.n_points))
        for sl in chunks(len(conn), elem.n_nodes):
            det[sl], _ = geometry(mesh, t, sl, elem.stiffness_rule.points)
        out[t] = det
    return out
