"""Stress recovery on an FEMesh: stresses at the quadrature points of every element (the input of
the geometric stiffness), at the top and bottom surfaces of shells, and averaged at the nodes of
solid cells (for modal stresses). Voigt order ``[xx, yy, zz, yz, xz, xy]``, Pa in SI."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.elements import mixed
from flexmb.fe.elements.incompatible import condensation, enhanced_gradients
from flexmb.fe.elements.solid import get_element
from flexmb.fe.elements.solid_kernels import (
    VOIGT, Materials, chunks, enhanced, geometry, internal_modes, lame, stress_operator,
)
from flexmb.fe.mesh.femesh import FEMesh

__all__ = ["element_stresses", "nodal_stress_operator", "nodal_stresses", "shell_surface_stresses"]



def _displacements(mesh: FEMesh, u: ArrayLike) -> NDArray[np.float64]:
    """Nodal translations (n_nodes, 3) of a DOF vector (n_dofs,) (or of (n_nodes, 3) translations
    for a model without rotations)."""
    u = np.asarray(u, dtype=float)
    dmap = mesh.dof_map
    if u.shape == (dmap.n_dofs,):
        return u[dmap.translations()] if dmap.has_rotations else u.reshape(mesh.n_nodes, 3)
    if u.shape == (mesh.n_nodes, 3) and not dmap.has_rotations:
        return u
    raise ModelError(
        f"displacement `u` has shape {u.shape}; expected ({mesh.n_dofs},) (DOFs of mesh.dof_map)"
        + ("" if dmap.has_rotations else f" or ({mesh.n_nodes}, 3)") + "."
    )


def element_stresses(mesh: FEMesh, u: ArrayLike, materials: Materials = None) -> dict[str, NDArray[np.float64]]:
    """Cauchy stresses of a displacement field at the stiffness quadrature points.

    Parameters
    ----------
    mesh : FEMesh
    u : ndarray, shape (3 n_nodes,) or (n_nodes, 3)
        Displacements (m), node-major.
    materials : optional, see :func:`assemble_stiffness`

    Returns
    -------
    dict of str to ndarray, shape (n_cells, n_qp, 6)
        Stress (Pa), Voigt order [xx, yy, zz, yz, xz, xy], at ``ELEMENTS[type].stiffness_rule``
        points; shells (``"triangle"``, ``"quad"``): the in-plane stress of the mid-surface at their
        stress points (:func:`shell_surface_stresses` gives top and bottom); beams (``"line"``): the
        axial stress of the axis, one point. The input of :func:`assemble_geometric_stiffness`.
    """
    fields = mesh.cell_materials(materials)
    un = _displacements(mesh, u)
    out = {}
    if mesh.shells or mesh.beams:
        out.update(mixed.structural_stresses(mesh, np.asarray(u, dtype=float), materials))
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        lam, mu = lame(fields[t])
        res = np.empty((len(conn), elem.stiffness_rule.n_points, 6))
        has_modes = enhanced(mesh, t)
        for sl in chunks(len(conn), elem.n_nodes, 9 if has_modes else 1):
            det_j, g = geometry(mesh, t, sl, elem.stiffness_rule.points)
            h = np.einsum("cai,cqaj->cqij", un[conn[sl]], g)  # displacement gradient
            if has_modes:
                alpha = internal_modes(mesh, t, sl, g, det_j, lam[sl], mu[sl], un[conn[sl]])
                gp = enhanced_gradients(elem, mesh.points[conn[sl]], elem.stiffness_rule.points, det_j)
                h = h + np.einsum("cmi,cqmj->cqij", alpha, gp)
            eps = 0.5 * (h + h.transpose(0, 1, 3, 2))
            tr = np.trace(eps, axis1=2, axis2=3)
            for v, (i, j) in enumerate(VOIGT):
                res[sl, :, v] = 2.0 * mu[sl, None] * eps[:, :, i, j] + (lam[sl, None] * tr if i == j else 0.0)
        out[t] = res
    return out


def _local_stress_operators(mesh: FEMesh, t: str, fields, sl: slice | None = None) -> NDArray[np.float64]:
    """(c, k_pts, 6, k, 3) operators from element displacements to stresses at the element nodes."""
    elem = get_element(t)
    conn = mesh.cells[t]
    sl = slice(0, len(conn)) if sl is None else sl
    det_n, g = geometry(mesh, t, sl, elem.ref_nodes)  # (c, p, k, 3)
    lam, mu = lame(fields[t][sl])
    op = stress_operator(g, lam, mu)
    if enhanced(mesh, t):  # sigma = D (B u + G alpha), alpha = -S u
        coords = mesh.points[conn[sl]]
        det_q, g_q = geometry(mesh, t, sl, elem.stiffness_rule.points)
        _, rec = condensation(elem, coords, g_q, det_q, elem.stiffness_rule.weights, lam, mu)
        op_a = stress_operator(enhanced_gradients(elem, coords, elem.ref_nodes, det_n), lam, mu)
        c, p, _, m, _ = op_a.shape
        corr = np.matmul(op_a.reshape(c, p * 6, 3 * m), rec)  # (c, p*6, 3k)
        op = op - corr.reshape(op.shape)
    return op


def shell_surface_stresses(mesh: FEMesh, u: ArrayLike, materials: Materials = None) -> dict[str, NDArray[np.float64]]:
    """Stresses at the bottom and top surfaces of the shells for a displacement ``u`` (n_dofs,).

    Returns
    -------
    dict of str to ndarray, shape (n_cells, n_points, 2, 6)
        Per shell type ("triangle", "quad"): global Voigt stresses (Pa) at the stress points of
        each cell, index 2 = (bottom, top) surface along the element normal (``z0 -+ t/2``).
    """
    u = np.asarray(u, dtype=float)
    if u.shape != (mesh.n_dofs,):
        raise ModelError(f"shell_surface_stresses: `u` has shape {u.shape}, expected ({mesh.n_dofs},) (mesh.dof_map).")
    return mixed.structural_stresses(mesh, u, materials, surfaces=True) if mesh.shells else {}


def _solid_dofs_only(mesh: FEMesh, owner: str) -> None:
    if mesh.dof_map.has_rotations:
        raise ModelError(
            f"{owner}: averaged nodal stresses are defined for solid cells only and {mesh.source or 'the mesh'} has "
            "shells or beams; use element_stresses / shell_surface_stresses (the modal stresses of mixed models "
            "come with their modal reduction)."
        )


def nodal_stress_operator(mesh: FEMesh, materials: Materials = None, *, form: str = "sparse"):
    """Operator from displacements to stresses at the nodes (for modal stress recovery).

    Stresses are evaluated directly at each element's nodes (shape-function gradients at the
    reference node coordinates; no extrapolation), then, for ``form="sparse"``, averaged with equal
    weights over the elements that share a node. Averages across material interfaces smear the
    (physically discontinuous) stress there.

    Parameters
    ----------
    mesh : FEMesh
    materials : optional, see :func:`assemble_stiffness`
    form : {"sparse", "local"}
        "sparse": one averaged matrix; "local": per-element operators (memory ~ 18 k^2 floats per
        cell: prefer :func:`nodal_stresses` for large meshes).

    Returns
    -------
    scipy.sparse.csr_array, shape (6 n_nodes, 3 n_nodes)
        For "sparse": rows ``6a + v`` (node a, Voigt component v), columns the node-major DOFs;
        rows of nodes without solid cells are zero.
    dict of str to ndarray, shape (n_cells, k, 6, 3 k)
        For "local": ``sigma_nodes[c] = op[c] @ u[dofs of cell c]`` with the cell's DOFs node-major.
    """
    _solid_dofs_only(mesh, "nodal_stress_operator")
    fields = mesh.cell_materials(materials)
    if form == "local":
        return {
            t: _local_stress_operators(mesh, t, fields).reshape(len(c), c.shape[1], 6, 3 * c.shape[1])
            for t, c in mesh.cells.items()
        }
    if form != "sparse":
        raise ModelError(f"nodal_stress_operator: `form` = {form!r}; use 'sparse' or 'local'.")
    count = _node_cell_count(mesh)
    inv = np.divide(1.0, count, out=np.zeros_like(count), where=count > 0)
    rows_all, cols_all, data_all = [], [], []
    for t, conn in mesh.cells.items():
        k = conn.shape[1]
        for sl in chunks(len(conn), 3 * k):
            op = _local_stress_operators(mesh, t, fields, sl)  # (c, p, 6, k, 3)
            cc = conn[sl]
            rows = (6 * cc[:, :, None, None, None] + np.arange(6)[None, None, :, None, None])
            cols = (3 * cc[:, None, None, :, None] + np.arange(3)[None, None, None, None, :])
            rows, cols = np.broadcast_arrays(rows, cols)
            rows_all.append(rows.ravel())
            cols_all.append(cols.ravel())
            data_all.append((op * inv[cc][:, :, None, None, None]).ravel())
    n = mesh.n_nodes
    if not rows_all:
        return sp.csr_array((6 * n, 3 * n))
    return sp.csr_array(
        sp.coo_array(
            (np.concatenate(data_all), (np.concatenate(rows_all), np.concatenate(cols_all))), shape=(6 * n, 3 * n)
        ).tocsr()
    )


def _node_cell_count(mesh: FEMesh) -> NDArray[np.float64]:
    count = np.zeros(mesh.n_nodes)
    for conn in mesh.cells.values():
        count += np.bincount(conn.ravel(), minlength=mesh.n_nodes)
    return count


def nodal_stresses(mesh: FEMesh, u: ArrayLike, materials: Materials = None) -> NDArray[np.float64]:
    """Averaged nodal stresses of one or several displacement fields (memory-light).

    Same values as ``nodal_stress_operator(mesh) @ u``, without forming the operator.

    Parameters
    ----------
    u : ndarray, shape (n_dofs,) or (n_dofs, m)
        Displacements (m) on ``mesh.dof_map``, e.g. m mode shapes; for a model with shells or beams
        the solid cells' stresses from the translations (nodes without solid cells get zero: their
        stresses are :func:`shell_surface_stresses` and the beams' section forces).

    Returns
    -------
    ndarray, shape (n_nodes, 6) or (n_nodes, 6, m)
        Stress (Pa), Voigt order [xx, yy, zz, yz, xz, xy].
    """
    fields = mesh.cell_materials(materials)
    u = np.asarray(u, dtype=float)
    single = u.ndim == 1
    if u.shape[0] != mesh.n_dofs:
        raise ModelError(f"nodal_stresses: `u` has {u.shape[0]} rows, expected {mesh.n_dofs} (mesh.dof_map).")
    if mesh.dof_map.has_rotations:
        u = u[mesh.dof_map.translations().ravel()]
    um = u.reshape(mesh.n_nodes, 3, -1)
    m = um.shape[2]
    out = np.zeros((mesh.n_nodes * 6, m))
    for t, conn in mesh.cells.items():
        k = conn.shape[1]
        for sl in chunks(len(conn), 3 * k):
            op = _local_stress_operators(mesh, t, fields, sl)  # (c, p, 6, k, 3)
            s = np.einsum("cpvai,caim->cpvm", op, um[conn[sl]])
            rows = (6 * conn[sl][:, :, None] + np.arange(6)).ravel()
            for j in range(m):
                out[:, j] += np.bincount(rows, weights=s[..., j].ravel(), minlength=6 * mesh.n_nodes)
    count = _node_cell_count(mesh)
    inv = np.divide(1.0, count, out=np.zeros_like(count), where=count > 0)
    out = out.reshape(mesh.n_nodes, 6, m) * inv[:, None, None]
    return out[..., 0] if single else out

