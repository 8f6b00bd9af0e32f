"""Assembly of the structural elements of a mesh (shells, beams, point masses, springs) over its DOF
map, and the embedding of the solid part (3 DOFs per node) into it.

Element matrices are computed per type for chunks of cells at once (:mod:`.shell`, :mod:`.beam`,
:mod:`.point`) and scattered with one sparse conversion per matrix (duplicates summed); no loop
runs over single elements.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.fe.elements import beam, shell
from flexmb.fe.elements.point import point_mass_matrices, spring_matrices
from flexmb.fe.mesh.structural import beam_cell_data, shell_cell_data

__all__ = ["element_blocks", "embed_solid", "structural_matrix", "structural_stresses"]

logger = logging.getLogger(__name__)

#: cells per chunk of the shell and beam kernels (bounds the temporary (c, p, 6, 24) arrays)
CHUNK_CELLS = 20_000


def _chunks(n: int):
    for s in range(0, n, CHUNK_CELLS):
        yield slice(s, min(s + CHUNK_CELLS, n))


def _shell_props(data: dict, sl: slice) -> shell.ShellProps:
    return shell.ShellProps(*(data[k][sl] for k in ("E", "nu", "rho", "t", "z0", "k", "nsm")))


def _beam_props(data: dict, sl: slice) -> dict:
    return {k: v[sl] for k, v in data.items()}


def _check_beams(mesh, data: dict) -> None:
    bad = beam.degenerate(mesh.points[mesh.beams["line"]], data)
    if bad.any():
        ids = mesh.cell_ids["line"][bad]
        raise ModelError(
            f"{int(bad.sum())} beam cell(s) of {mesh.source or 'the mesh'} have zero length or an orientation vector "
            f"along their axis (element ids {', '.join(str(int(i)) for i in ids[:10])}); fix the nodes or give "
            "another orientation (BeamSection(orientation=...), Nastran CBAR X1-X3)."
        )


def _check_shells(mesh, t: str, coords: NDArray[np.float64], sl: slice) -> None:
    bad = (shell.area_jacobians(t, coords) <= 0.0).any(axis=1)
    if bad.any():
        ids = mesh.cell_ids[t][sl][bad]
        raise ModelError(
            f"{int(bad.sum())} {t} shell cell(s) of {mesh.source or 'the mesh'} are degenerate or not convex (zero or "
            f"negative area at a quadrature point; element ids {', '.join(str(int(i)) for i in ids[:10])})."
        )


def structural_matrix(mesh, which: str, materials=None,
                      stresses: Mapping[str, NDArray[np.float64]] | None = None) -> sp.csr_array:
    """Stiffness ("K"), mass ("M") or geometric stiffness ("Kg") of the shells, beams, point
    masses (M) and springs (K) of ``mesh``, shape (n_dofs, n_dofs) over ``mesh.dof_map``.

    ``stresses`` (for "Kg"): per shell/beam type, (n_cells, n_points, 6) global Voigt stresses, as
    :func:`structural_stresses` returns (mid-surface stress of shells, axial stress of beams).
    """
    dmap = mesh.dof_map
    n = dmap.n_dofs
    rows, cols, vals = [], [], []

    def add(dofs: NDArray[np.int64], mats: NDArray[np.float64]) -> None:
        k = dofs.shape[1]
        r = np.broadcast_to(dofs[:, :, None], (len(dofs), k, k))
        c = np.broadcast_to(dofs[:, None, :], (len(dofs), k, k))
        keep = (r >= 0) & (c >= 0) & (mats != 0.0)
        rows.append(r[keep])
        cols.append(c[keep])
        vals.append(mats[keep])

    for _, dofs, mats in element_blocks(mesh, which, materials, stresses):
        add(dofs, mats)
    if which == "M" and mesh.point_masses is not None:
        dofs, mats, dropped = point_mass_matrices(mesh.point_masses, dmap)
        if dropped.any():
            logger.warning(
                "%s: %d point mass(es) at nodes without rotational DOFs (only solid cells there, e.g. element ids %s): "
                "their rotary inertia and offset are dropped, the mass acts at the node",
                mesh.source or "mesh", int(dropped.sum()), mesh.point_masses.ids[dropped][:5].tolist())
        add(dofs, mats)
    if which == "K" and mesh.springs is not None:
        add(*spring_matrices(mesh.springs, dmap))
    if not rows:
        return sp.csr_array((n, n))
    coo = sp.coo_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    out = sp.csr_array(coo.tocsr())
    out.sum_duplicates()
    return out


def element_blocks(mesh, which: str, materials=None, stresses: Mapping[str, NDArray[np.float64]] | None = None):
    """The element matrices of the shells and beams of ``mesh`` by chunks of cells: yields
    ``(conn (c, k), dofs (c, 6 k), mats (c, 6 k, 6 k))`` (global DOFs of ``mesh.dof_map``) for
    ``which`` = "K", "M" or "Kg" (see :func:`structural_matrix`)."""
    dmap = mesh.dof_map
    if mesh.shells:
        sdata = shell_cell_data(mesh, materials)
        for t, conn in mesh.shells.items():
            for sl in _chunks(len(conn)):
                coords = mesh.points[conn[sl]]
                props = _shell_props(sdata[t], sl)
                if which == "K":
                    _check_shells(mesh, t, coords, sl)
                    mats = shell.shell_stiffness(t, coords, props)
                elif which == "M":
                    mats = shell.shell_mass(t, coords, props)
                else:
                    mats = shell.shell_geometric(t, coords, props, _stress_block(stresses, t, len(conn),
                                                                                  shell.n_points(t))[sl])
                yield conn[sl], dmap.element_dofs(conn[sl], 6), mats
    if mesh.beams:
        bdata = beam_cell_data(mesh, materials)
        conn = mesh.beams["line"]
        if which == "K":
            _check_beams(mesh, bdata)
        for sl in _chunks(len(conn)):
            coords = mesh.points[conn[sl]]
            props = _beam_props(bdata, sl)
            if which == "K":
                mats = beam.beam_stiffness(coords, props)
            elif which == "M":
                mats = beam.beam_mass(coords, props)
            else:
                mats = beam.beam_geometric(coords, props, _stress_block(stresses, "line", len(conn), 1)[sl])
            yield conn[sl], dmap.element_dofs(conn[sl], 6), mats


def _stress_block(stresses, t: str, n_cells: int, n_pts: int) -> NDArray[np.float64]:
    if stresses is None or t not in stresses:
        raise ModelError(f"assemble_geometric_stiffness: `stresses` has no entry for cell type {t!r}.")
    s = np.asarray(stresses[t], dtype=float)
    if s.shape != (n_cells, n_pts, 6):
        raise ModelError(f"assemble_geometric_stiffness: stresses[{t!r}] has shape {s.shape}, expected "
                         f"{(n_cells, n_pts, 6)} (cells, points, Voigt); use element_stresses().")
    return s


def structural_stresses(mesh, u: NDArray[np.float64], materials=None, *, surfaces: bool = False) -> dict:
    """Stresses of the shells and beams for a displacement ``u`` (n_dofs,).

    Returns dict of cell type to ndarray: shells (n, p, 6) mid-surface in-plane stress (or, with
    ``surfaces``, (n, p, 2, 6): bottom and top), beams (n, 1, 6) axial stress; global Voigt (Pa).
    """
    dmap = mesh.dof_map
    out = {}
    if mesh.shells:
        sdata = shell_cell_data(mesh, materials)
        for t, conn in mesh.shells.items():
            res = np.empty((len(conn), shell.n_points(t)) + ((2, 6) if surfaces else (6,)))
            for sl in _chunks(len(conn)):
                mid, bot, top = shell.shell_stresses(t, mesh.points[conn[sl]], _shell_props(sdata[t], sl),
                                                     u[dmap.element_dofs(conn[sl], 6)])
                res[sl] = np.stack([bot, top], axis=2) if surfaces else mid
            out[t] = res
    if mesh.beams and not surfaces:
        bdata = beam_cell_data(mesh, materials)
        conn = mesh.beams["line"]
        out["line"] = beam.beam_stresses(mesh.points[conn], bdata, u[dmap.element_dofs(conn, 6)])
    return out


def embed_solid(mesh, a3: sp.csr_array) -> sp.csr_array:
    """A (3 n_nodes, 3 n_nodes) matrix on the translations -> (n_dofs, n_dofs) over ``mesh.dof_map``
    (the identity map for a model without rotations)."""
    dmap = mesh.dof_map
    if not dmap.has_rotations:
        return a3
    idx = dmap.translations().ravel()
    coo = sp.coo_array(a3)
    n = dmap.n_dofs
    return sp.csr_array(sp.coo_array((coo.data, (idx[coo.row], idx[coo.col])), shape=(n, n)).tocsr())
