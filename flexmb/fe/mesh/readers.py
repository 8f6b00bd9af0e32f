"""Reading a mesh file: the reader registry (:data:`READERS`, :func:`register_reader`),
:func:`read_mesh`, and the common step that turns a reader's :class:`~flexmb.fe.mesh.RawMesh` into
an :class:`~flexmb.fe.mesh.FEMesh`.

Units: flexmb is unit-agnostic; a mesh and its materials must use one consistent system (SI: m, kg,
s, N, Pa is what the shipped meshes use). ``FEMesh.units`` is a label only (from the ``units``
argument of :func:`read_mesh`); nothing is converted.

Readers are registered by file extension. Each reader returns a :class:`~flexmb.fe.mesh.RawMesh`
(all cell blocks, lower-dimensional ones included, with their sets); :func:`read_mesh` turns it
into an :class:`~flexmb.fe.mesh.FEMesh` that keeps only solid cells, derives node sets from
every element set (solid, surface, line or point cells), and records in ``FEMesh.unassembled`` (and
logs at WARNING) every element it does not assemble (:mod:`flexmb.fe.mesh.unassembled`). The built-in parsers live in
:mod:`flexmb.fe.mesh.meshio_formats` (Gmsh, VTK, MED), :mod:`flexmb.fe.mesh.abaqus` and
:mod:`flexmb.fe.mesh.nastran`; this module imports them, they import only the types of
:mod:`flexmb.fe.mesh`.
"""
from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.mesh import abaqus, meshio_formats, nastran
from flexmb.fe.mesh import unassembled as unassembled_mod
from flexmb.fe.elements.solid import ELEMENTS, isoparametric_map
from flexmb.fe.mesh.femesh import FEMesh, Material, RawMesh, _as_index_array, _format_ids, _is_solid
from flexmb.fe.mesh.femesh import _materials_dict  # one rule for materials= (femesh's, shared by the readers)
from flexmb.fe.mesh.unassembled import Unassembled

__all__ = ["READERS", "read_mesh", "register_reader"]

logger = logging.getLogger(__name__)


def _finish(raw: RawMesh, path: Path, units: str | None) -> FEMesh:
    """RawMesh -> FEMesh: merge solid blocks by type, sets to row indices, node sets from sets."""
    n_nodes = len(raw.points)
    if n_nodes == 0:
        raise MeshImportError(f"{path.name}: the file defines no nodes. Re-export the mesh (with its nodes).")
    pts = np.asarray(raw.points, dtype=float)
    bad = np.flatnonzero(~np.isfinite(pts).all(axis=1))
    if bad.size:
        raise MeshImportError(
            f"{path.name}: {bad.size} node(s) have non-finite coordinates (ids {_format_ids(raw.node_ids[bad])}, "
            f"first: {pts[bad[0]].tolist()}). Fix the coordinates in the file or re-export the mesh."
        )
    unsupported = sorted({t for t, _, _ in raw.blocks if _is_solid(t) and t not in ELEMENTS})
    if unsupported:
        raise MeshImportError(
            f"{path.name}: unsupported solid cell type(s) {', '.join(unsupported)}; supported: "
            f"{', '.join(sorted(ELEMENTS))}. Re-mesh with one of these (e.g. Gmsh "
            "Mesh.SecondOrderIncomplete=1 gives hexahedron20 instead of hexahedron27)."
        )
    for t, conn, _ in raw.blocks:
        if conn.size and (conn.min() < 0 or conn.max() >= n_nodes):
            raise MeshImportError(f"{path.name}: {t} cells reference nodes that are not defined.")
    # row offset of each solid block inside the merged per-type arrays
    offsets: dict[int, tuple[str, int]] = {}
    cells: dict[str, list[NDArray[np.int64]]] = {}
    ids: dict[str, list[NDArray[np.int64]]] = {}
    counts: dict[str, int] = {}
    for b, (t, conn, cid) in enumerate(raw.blocks):
        if not _is_solid(t):
            continue
        offsets[b] = (t, counts.get(t, 0))
        cells.setdefault(t, []).append(conn)
        ids.setdefault(t, []).append(cid)
        counts[t] = counts.get(t, 0) + len(conn)
    cells_m = {t: np.concatenate(v) for t, v in cells.items()}
    if "wedge" in cells_m:
        cells_m["wedge"] = _oriented_wedges(raw.points, cells_m["wedge"], path)
    ids_m = {t: np.concatenate(v) for t, v in ids.items()}

    element_sets: dict[str, dict[str, list[NDArray[np.int64]]]] = {}
    node_sets = {k: _as_index_array(v) for k, v in raw.node_sets.items()}
    derived: dict[str, list[NDArray[np.int64]]] = {}
    for name, members in raw.block_sets.items():
        for b, rows in members:
            rows = _as_index_array(rows)
            if not rows.size:
                continue
            t, conn, _ = raw.blocks[b]
            derived.setdefault(name, []).append(conn[rows].ravel())
            if b in offsets:
                tt, off = offsets[b]
                element_sets.setdefault(name, {}).setdefault(tt, []).append(rows + off)
    el_sets = {k: {t: np.unique(np.concatenate(r)) for t, r in v.items()} for k, v in element_sets.items()}
    for name, parts in derived.items():
        if name not in node_sets:  # an explicit node set of the same name wins
            node_sets[name] = np.unique(np.concatenate(parts))

    if raw.dedupe:
        cells_m, ids_m, el_sets = _drop_duplicate_cells(cells_m, ids_m, el_sets, path)

    for name, idx in node_sets.items():
        if idx.size and (idx.min() < 0 or idx.max() >= n_nodes):
            raise MeshImportError(f"{path.name}: node set {name!r} names nodes that are not defined.")
    unassembled = _unassembled(raw, cells_m)
    if unassembled:
        logger.warning(
            "%s: elements that flexmb does not assemble (dropped from the solid model): %s", path.name,
            unassembled_mod.describe(unassembled),
        )
    for name in raw.materials:
        if name != "*" and name not in el_sets:
            raise MeshImportError(
                f"{path.name}: a material is assigned to element set {name!r}, which has no solid "
                f"elements; known element sets: {sorted(el_sets) or 'none'}."
            )
    return FEMesh(
        points=raw.points,
        cells=cells_m,
        cell_ids=ids_m,
        node_ids=raw.node_ids,
        node_sets=node_sets,
        element_sets=el_sets,
        materials=raw.materials,
        units=units if units is not None else raw.units,
        source=str(path),
        checksum=_sha256(path),
        unassembled=unassembled,
    )


def _unassembled(raw: RawMesh, solid_cells: dict[str, NDArray[np.int64]]) -> tuple[Unassembled, ...]:
    """The reader's own record (formats with element types), or the lower-dimensional cells that
    are no face, edge or node of the solid cells (formats without: Gmsh, VTK, MED)."""
    if raw.unassembled is not None:
        return unassembled_mod.merge(e for e in raw.unassembled if e.kind not in unassembled_mod.ASSEMBLED_KINDS)
    entries = []
    for t, conn, cid in raw.blocks:
        if _is_solid(t) or not len(conn):
            continue
        off = unassembled_mod.off_solid(solid_cells, t, conn)
        if off.any():
            entries.append(Unassembled(t, unassembled_mod.off_solid_kind(t), int(off.sum()), cid[off]))
    return unassembled_mod.merge(entries)


def _oriented_wedges(points: NDArray[np.float64], conn: NDArray[np.int64], path: Path) -> NDArray[np.int64]:
    """Wedges come in two orientations (Gmsh/Abaqus/Nastran: triangle 0-1-2 counter-clockwise seen
    from 3-4-5; VTK's documentation: the opposite). Flip those with a negative centroid Jacobian."""
    elem = ELEMENTS["wedge"]
    det, _ = isoparametric_map(elem, points[conn], np.array([[1 / 3, 1 / 3, 0.0]]))
    flip = det[:, 0] < 0
    if np.any(flip):
        logger.info("%s: %d wedge cells in the opposite (VTK) orientation reordered", path.name, int(flip.sum()))
        conn = conn.copy()
        conn[flip] = conn[flip][:, [0, 2, 1, 3, 5, 4]]
    return conn


def _drop_duplicate_cells(cells, ids, el_sets, path):
    """Gmsh v2 writes an element once per physical group: keep one copy, merge set membership."""
    for t, conn in list(cells.items()):
        key = np.sort(conn, axis=1)
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        if first.size == len(conn):
            continue
        logger.info("%s: %d duplicate %s cells merged", path.name, len(conn) - first.size, t)
        keep = np.sort(first)
        new_row = np.full(len(conn), -1)
        new_row[keep] = np.arange(keep.size)
        row_of = new_row[first[inverse]]  # every old row -> the kept copy's new row
        cells[t], ids[t] = conn[keep], ids[t][keep]
        for name, by_type in el_sets.items():
            if t in by_type:
                by_type[t] = np.unique(row_of[by_type[t]])
    return cells, ids, el_sets


ReaderFn = Callable[[Path], RawMesh]

#: file extension (lower case, with dot) -> reader
READERS: dict[str, ReaderFn] = {}


def register_reader(extensions: list[str] | tuple[str, ...], reader: ReaderFn) -> None:
    """Register ``reader(path) -> RawMesh`` for the given file extensions (e.g. [".msh"])."""
    for ext in extensions:
        READERS[ext.lower()] = reader


def read_mesh(
    path: str | Path,
    *,
    materials: Material | Mapping[str, Material] | None = None,
    units: str | None = None,
    drop_unused_nodes: bool = False,
) -> FEMesh:
    """Read a solid FE mesh.

    Parameters
    ----------
    path : str or Path
        Gmsh ``.msh`` (v2, v4), Abaqus ``.inp``, Nastran ``.bdf``/``.nas``/``.fem``, ``.vtu``/``.vtk``
        or MED ``.med`` (needs h5py).
    materials : Material or dict of str to Material, optional
        Override the materials found in the file: a single Material (or the key ``"*"``) replaces
        every material of the file, those assigned to element sets included, so it applies to the
        whole mesh; a named element set replaces that set's material (see
        :meth:`FEMesh.with_material`).
    units : str, optional
        Label of the unit system of the file (e.g. "SI"); stored, not converted.
    drop_unused_nodes : bool
        Remove the nodes that no solid cell uses (default: keep them; :func:`check_mesh` warns).

    Returns
    -------
    FEMesh
        Solid cells only. Elements of the file that flexmb does not assemble (shells, beams, point
        masses, springs, connectors, rigid elements, constraints; lower-dimensional Gmsh/VTK/MED
        cells that are no face, edge or node of the solid) are named with their counts in
        ``FEMesh.unassembled`` and in a WARNING of this module's log.

    Raises
    ------
    MeshImportError
        File missing, unknown extension, truncated or malformed content, unsupported solid cell
        types, or sets naming missing nodes. The message names the file and the problem.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ModelError(f"read_mesh: path={path!r} ({type(path).__name__}) is not a file path; give the mesh file's "
                         "path as a string or pathlib.Path.")
    if materials is not None:
        _materials_dict(materials, "read_mesh")
    if units is not None and not isinstance(units, str):
        raise ModelError(f"read_mesh: units={units!r} must be a unit-system label such as 'SI' or 'mm-t-s' (or None).")
    if not isinstance(drop_unused_nodes, (bool, np.bool_)):
        raise ModelError(f"read_mesh: drop_unused_nodes={drop_unused_nodes!r} must be True or False.")
    path = Path(path)
    if not path.is_file():
        raise MeshImportError(f"mesh file {str(path)!r} does not exist (or is not a file).")
    ext = path.suffix.lower()
    if ext not in READERS:
        raise MeshImportError(
            f"{path.name}: unknown mesh format {ext!r}; supported extensions: {', '.join(sorted(READERS))}."
        )
    try:
        raw = READERS[ext](path)
    except MeshImportError:
        raise
    except (ModelError, KeyError) as exc:  # e.g. a material with E <= 0 or an unknown set in the file
        raise MeshImportError(f"{path.name}: {exc}") from exc
    except Exception as exc:  # malformed input surfaces as anything inside meshio/numpy: wrap it
        raise MeshImportError(
            f"{path.name}: cannot read as {ext} ({type(exc).__name__}{': ' if str(exc) else ''}{exc}). "
            "The file may be truncated "
            "or malformed; re-export it from the mesher."
        ) from exc
    try:
        mesh = _finish(raw, path, units)
    except MeshImportError:
        raise
    except ModelError as exc:  # inconsistent content found while building the FEMesh
        raise MeshImportError(f"{path.name}: {exc}") from exc
    if materials is not None:
        mesh = mesh.with_materials(materials)
    if drop_unused_nodes:
        mesh = mesh.compacted()
    return mesh


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


register_reader([".msh"], meshio_formats._read_gmsh)
register_reader([".inp"], abaqus._read_abaqus)
register_reader([".bdf", ".nas", ".fem", ".dat"], nastran._read_nastran)
register_reader([".vtu", ".vtk"], meshio_formats._read_vtk_like)
register_reader([".med"], meshio_formats._read_med)
