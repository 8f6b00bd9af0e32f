"""Mesh checks: connectivity, inverted and degenerate cells, unused nodes, and the plausibility note
(size, mass, first frequency, unit-system hint)."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.errors import MeshImportError
from flexmb.fe.elements import ELEMENTS, get_element, isoparametric_map
from flexmb.fe.mesh import FEMesh, _format_ids

logger = logging.getLogger(__name__)


def connected_components(mesh: FEMesh) -> tuple[int, NDArray[np.int64]]:
    """Connected components of the solid cells (through shared nodes).

    Returns
    -------
    n_components : int
        Number of components among the used nodes.
    labels : ndarray, shape (n_nodes,)
        Component label of each node; -1 for unused nodes.
    """
    from scipy.sparse.csgraph import connected_components as cc

    n = mesh.n_nodes
    rows, cols = [], []
    for conn in mesh.cells.values():
        # a chain through each cell's nodes connects them all
        rows.append(conn[:, :-1].ravel())
        cols.append(conn[:, 1:].ravel())
    if not rows:
        return 0, np.full(n, -1)
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    g = sp.coo_array((np.ones(r.size), (r, c)), shape=(n, n)).tocsr()
    _, labels = cc(g, directed=False)
    used = mesh.used_nodes()
    lab = np.full(n, -1)
    _, lab_used = np.unique(labels[used], return_inverse=True)
    lab[used] = lab_used.ravel()
    return int(lab_used.max() + 1) if used.size else 0, lab


def check_mesh(mesh: FEMesh, *, rel_tol: float = 1e-8) -> list[str]:
    """Check a mesh; raise on fatal problems, return warnings.

    Fatal (``MeshImportError``): unsupported solid cell types, inverted cells (negative Jacobian
    determinant at a quadrature point) or degenerate cells (|det J| < ``rel_tol`` * h^3 relative to
    the cell size h), and node sets naming missing nodes. The message names the element ids (at
    most 10, plus the count).

    Warnings (returned strings, also logged): several disconnected parts (each adds six rigid-body
    modes), nodes that no solid cell uses, no solid cells at all.

    Returns
    -------
    list of str
    """
    name = Path(mesh.source).name if mesh.source else "mesh"
    warnings: list[str] = []
    unsupported = sorted(t for t in mesh.cells if t not in ELEMENTS)
    if unsupported:
        raise MeshImportError(
            f"{name}: unsupported cell type(s) {', '.join(unsupported)}; supported: {', '.join(sorted(ELEMENTS))}."
        )
    for set_name, idx in mesh.node_sets.items():
        bad = idx[(idx < 0) | (idx >= mesh.n_nodes)]
        if bad.size:
            raise MeshImportError(
                f"{name}: node set {set_name!r} names {bad.size} missing node(s) (indices {_format_ids(bad)}); "
                f"the mesh has {mesh.n_nodes} nodes."
            )
    for set_name, by_type in mesh.element_sets.items():
        for t, rows in by_type.items():
            n_t = len(mesh.cells.get(t, ()))
            if rows.size and (rows.min() < 0 or rows.max() >= n_t):
                raise MeshImportError(f"{name}: element set {set_name!r} names {t} rows beyond the {n_t} cells.")
    if not mesh.cells:
        warnings.append(f"{name}: no solid cells (only surface/line cells or none): nothing to assemble.")
    bad_msgs = []
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        coords = mesh.points[conn]
        det_j, _ = isoparametric_map(elem, coords, elem.stiffness_rule.points)
        h = np.ptp(coords, axis=1).max(axis=1)  # cell size (m)
        scale = np.maximum(h, np.finfo(float).tiny) ** 3 / elem.ref_volume
        rel = det_j.min(axis=1) / scale
        inverted = np.flatnonzero(rel < 0.0)
        degenerate = np.flatnonzero((rel >= 0.0) & (rel < rel_tol))
        if inverted.size:
            bad_msgs.append(
                f"{inverted.size} inverted {t} element(s) (negative Jacobian determinant; ids "
                f"{_format_ids(mesh.cell_ids[t][inverted])})"
            )
        if degenerate.size:
            bad_msgs.append(
                f"{degenerate.size} degenerate {t} element(s) (zero volume; ids "
                f"{_format_ids(mesh.cell_ids[t][degenerate])})"
            )
    if bad_msgs:
        raise MeshImportError(
            f"{name}: " + "; ".join(bad_msgs) + ". Fix the node ordering or re-mesh "
            "(Gmsh: Mesh.Optimize / Mesh.OptimizeNetgen; check the orientation of the source geometry)."
        )
    n_unused = mesh.n_nodes - mesh.used_nodes().size
    if n_unused and mesh.cells:
        unused = np.setdiff1d(np.arange(mesh.n_nodes), mesh.used_nodes())
        warnings.append(
            f"{name}: {n_unused} node(s) used by no solid element (ids {_format_ids(mesh.node_ids[unused])}); "
            "they carry no stiffness or mass (drop them with read_mesh(..., drop_unused_nodes=True))."
        )
    n_comp, _ = connected_components(mesh)
    if n_comp > 1:
        warnings.append(
            f"{name}: {n_comp} disconnected parts: a free-free analysis has {6 * n_comp} rigid-body modes "
            f"instead of 6 ({6 * (n_comp - 1)} extra). Merge coincident nodes or connect the parts."
        )
    for w in warnings:
        logger.warning(w)
    return warnings
