"""Modal stresses (stress per unit modal coordinate) of solids, shells and beams, and the von Mises stress.

Everything stored is linear in the modal coordinates ``eta`` (a stress of a motion is
``einsum("k,k...->...", eta, S)``); the von Mises stress and the maxima over fibres and surfaces are
taken at output time (:func:`nodal_von_mises`):

* solids: nodal stresses averaged over the solid cells at each node (``modal_stresses``);
* shells: the bottom and top surface stresses (``z0 -+ t/2``), evaluated at each shell's nodes and
  averaged over the shells at a node: two *stress points* per shell node;
* beams: the section forces at both ends of each element (``modal_beam_forces``: N, Vy, Vz, T, My,
  Mz in its local axes) and the axial stress ``N/A + My z/Iy - Mz y/Iz`` at the section's extreme
  fibres (:meth:`flexmb.fe.mesh.BeamSection.fibres`), 16 stress points per element end, stored as the
  uniaxial tensor ``sigma x x^T`` (global Voigt), whose von Mises stress is ``|sigma|``.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["POINT_KINDS", "modal_stresses", "nodal_von_mises", "structural_modal_stresses", "von_mises",
           "write_mode_vtus"]

#: codes of ``FlexibleBodyData.stress_point_kinds``
POINT_KINDS = {0: "shell bottom", 1: "shell top", 2: "beam fibre"}


def _fe():
    from flexmb.fe.elements import assembly as fe_assembly  # local import: keeps the reduction modules free of the mesh module

    return fe_assembly


def modal_stresses(mesh, shapes: ArrayLike, materials=None) -> NDArray[np.float64]:
    """Stresses of the solid cells per unit modal coordinate at the mesh nodes.

    Evaluated at each element's nodes and averaged over the solid cells sharing a node
    (:func:`flexmb.fe.elements.assembly.nodal_stresses`); zero at nodes without solid cells (shells
    and beams: :func:`structural_modal_stresses`).

    Parameters
    ----------
    mesh : FEMesh
    shapes : array_like, shape (n_dofs, nm)
        On ``mesh.dof_map``.

    Returns
    -------
    S : ndarray, shape (nm, n_nodes, 6)
        Stress (Pa per unit eta), Voigt [xx, yy, zz, yz, xz, xy]; the stress of a motion is
        ``einsum("k,knv->nv", eta, S)``.
    """
    fe = _fe()
    P = np.asarray(shapes, dtype=float)
    s = fe.nodal_stresses(mesh, P, materials)  # (n, 6, nm)
    return np.ascontiguousarray(s.transpose(2, 0, 1))


def structural_modal_stresses(mesh, shapes: ArrayLike, materials=None):
    """Stress points of the shells and beams and the beams' section forces per unit modal coordinate.

    Parameters
    ----------
    mesh : FEMesh
    shapes : array_like, shape (n_dofs, nm)

    Returns
    -------
    point_stresses : ndarray, shape (nm, n_sp, 6)
        Global Voigt stress (Pa per unit eta) at each stress point (module docstring).
    point_nodes : ndarray of int, shape (n_sp,)
        Node of each stress point.
    point_kinds : ndarray of int8, shape (n_sp,)
        :data:`POINT_KINDS` code of each point.
    beam_forces : ndarray, shape (nm, n_beams, 2, 6) or None
        Section forces (N, Vy, Vz, T, My, Mz; N and N m per unit eta) at the ends a, b of each beam
        (``mesh.beams["line"]`` order), internal-force convention of
        :func:`flexmb.fe.elements.beam.beam_section_forces`.
    """
    from flexmb.fe.elements import beam, shell
    from flexmb.fe.elements.mixed import CHUNK_CELLS
    from flexmb.fe.mesh.structural import beam_cell_data, shell_cell_data

    P = np.asarray(shapes, dtype=float)
    nm = P.shape[1]
    dmap = mesh.dof_map
    n = mesh.n_nodes
    stresses, nodes, kinds = [], [], []
    if mesh.shells:
        acc = np.zeros((2, n, 6, nm))
        count = np.zeros(n)
        sdata = shell_cell_data(mesh, materials)
        for t, conn in mesh.shells.items():
            count += np.bincount(conn.ravel(), minlength=n)
            for s0 in range(0, len(conn), CHUNK_CELLS):
                sl = slice(s0, min(s0 + CHUNK_CELLS, len(conn)))
                props = shell.ShellProps(*(sdata[t][k][sl] for k in ("E", "nu", "rho", "t", "z0", "k", "nsm")))
                de = P[dmap.element_dofs(conn[sl], 6)]  # (c, 6k, nm)
                idx = conn[sl].ravel()
                for m in range(nm):  # loop over modes: each a vectorized pass over the cells
                    _, bot, top = shell.shell_stresses(t, mesh.points[conn[sl]], props, de[:, :, m], at_nodes=True)
                    for side, val in enumerate((bot, top)):
                        np.add.at(acc[side, :, :, m], idx, val.reshape(-1, 6))
        on = np.flatnonzero(count > 0)
        for side in range(2):
            stresses.append((acc[side, on] / count[on, None, None]).transpose(2, 0, 1))
            nodes.append(on)
            kinds.append(np.full(on.size, side, dtype=np.int8))
    beam_forces = None
    if mesh.beams:
        conn = mesh.beams["line"]
        bdata = beam_cell_data(mesh, materials)
        coords = mesh.points[conn]
        forces = beam.beam_section_forces(coords, bdata, P[dmap.element_dofs(conn, 6)])  # (c, 2, 6, nm)
        fib = beam.beam_fibre_stresses(bdata, forces)  # (c, 2, f, nm)
        x = beam.beam_frames(coords, bdata)[0][:, 0]  # (c, 3) beam axes
        voigt = np.stack([x[:, 0] ** 2, x[:, 1] ** 2, x[:, 2] ** 2, x[:, 1] * x[:, 2], x[:, 0] * x[:, 2],
                          x[:, 0] * x[:, 1]], axis=1)  # (c, 6): x x^T
        nf = fib.shape[2]
        tensor = fib[:, :, :, None, :] * voigt[:, None, None, :, None]  # (c, 2, f, 6, nm)
        stresses.append(tensor.reshape(-1, 6, nm).transpose(2, 0, 1))
        nodes.append(np.repeat(conn, nf, axis=1).ravel())
        kinds.append(np.full(conn.size * nf, 2, dtype=np.int8))
        beam_forces = np.ascontiguousarray(forces.transpose(3, 0, 1, 2))
    if not stresses:
        return np.zeros((nm, 0, 6)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8), None
    return (np.ascontiguousarray(np.concatenate(stresses, axis=1)), np.concatenate(nodes).astype(np.int64),
            np.concatenate(kinds), beam_forces)


def von_mises(stress: ArrayLike) -> NDArray[np.float64]:
    """Von Mises equivalent stress of Voigt stresses [xx, yy, zz, yz, xz, xy] (..., 6) -> (...)."""
    s = np.asarray(stress, dtype=float)
    d = (s[..., 0] - s[..., 1]) ** 2 + (s[..., 1] - s[..., 2]) ** 2 + (s[..., 2] - s[..., 0]) ** 2
    return np.sqrt(0.5 * d + 3.0 * (s[..., 3] ** 2 + s[..., 4] ** 2 + s[..., 5] ** 2))


def nodal_von_mises(data, eta: NDArray[np.float64], nodes=None) -> NDArray[np.float64] | None:
    """Von Mises stress (Pa) of a FlexibleBodyData at modal coordinates ``eta`` (nm,) -> (n,) or
    (nt, nm) -> (nt, n), at ``nodes`` (default every node): at each node the largest of its solid
    nodal stress, its shells' bottom and top surfaces and its beams' extreme fibres (module
    docstring). None when the data has no stresses."""
    S = data.modal_stresses
    Sp = getattr(data, "modal_point_stresses", None)
    if S is None and Sp is None:
        return None
    q = np.atleast_2d(np.asarray(eta, dtype=float))
    idx = np.arange(data.n_nodes) if nodes is None else np.asarray(nodes, dtype=np.int64).reshape(-1)
    out = np.zeros((q.shape[0], idx.size)) if S is None else von_mises(np.einsum("tk,knv->tnv", q, S[:, idx]))
    if Sp is not None and Sp.shape[1]:
        where = np.full(data.n_nodes, -1, dtype=np.int64)
        where[idx] = np.arange(idx.size)
        pos = where[np.asarray(data.stress_point_nodes)]
        sel = np.flatnonzero(pos >= 0)
        vals = von_mises(np.einsum("tk,knv->tnv", q, Sp[:, sel]))
        np.maximum.at(out, (slice(None), pos[sel]), vals)
    return out[0] if np.ndim(eta) == 1 else out


def write_mode_vtus(data, directory, stem: str = "mode"):
    """:meth:`flexmb.fe.reduction.body_data.FlexibleBodyData.to_vtu`: one VTU per mode (point data
    ``displacement`` and, with stresses, ``von_mises`` per unit modal coordinate) and a ``.pvd``."""
    from pathlib import Path

    import meshio  # visualization only

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    cells = [(t, c) for t, c in data.cells.items()]
    entries = []
    for k in range(data.n_modes):  # loop over modes
        point_data = {"displacement": data.mode_shapes[:, :, k]}
        vm = nodal_von_mises(data, np.eye(data.n_modes)[k])
        if vm is not None:
            point_data["von_mises"] = vm
        fname = f"{stem}_{k + 1:03d}.vtu"
        meshio.write(directory / fname, meshio.Mesh(data.points, cells, point_data=point_data), binary=True)
        entries.append((float(data.frequencies[k]), fname))
    lines = ['<?xml version="1.0"?>', '<VTKFile type="Collection" version="0.1">', "  <Collection>"]
    lines += [f'    <DataSet timestep="{f:.9g}" part="0" file="{fn}"/>' for f, fn in entries]
    lines += ["  </Collection>", "</VTKFile>", ""]
    pvd = directory / f"{stem}s.pvd"
    pvd.write_text("\n".join(lines))
    return pvd
