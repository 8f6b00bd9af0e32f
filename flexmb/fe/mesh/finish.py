"""A reader's :class:`~flexmb.fe.mesh.raw.RawMesh` -> :class:`~flexmb.fe.mesh.FEMesh`: blocks merged by
type into solid cells, shells and beams; sets turned into row indices and node sets; sections,
per-element data, point masses and springs carried over; what is not assembled recorded.

Which lower-dimensional cells are shells, beams or point masses: for formats that type their
elements (Abaqus, Nastran) the reader says (blocks ``"shell:quad"``, ``"beam:line"``, ...). For
Gmsh, VTK and MED a ``"quad"``/``"triangle"`` cell is a shell, a ``"line"`` a beam and a ``"vertex"``
a point mass when an element set (physical group) holding it has a section of that kind
(:class:`ShellSection`, :class:`BeamSection`, :class:`PointMass`, given to ``read_mesh(sections=...)``);
the others carry sets (boundary faces, edges, nodes) or are recorded as not assembled when they lie
off the assembled elements (:func:`flexmb.fe.mesh.unassembled.off_solid`).
"""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError
from flexmb.fe.elements.solid import ELEMENTS, isoparametric_map
from flexmb.fe.mesh import unassembled as unassembled_mod
from flexmb.fe.mesh.femesh import FEMesh, as_index_array, format_ids, is_solid_cell
from flexmb.fe.mesh.raw import RawMesh
from flexmb.fe.mesh.sections import BeamSection, PointMass, PointMasses, ShellSection
from flexmb.fe.mesh.structural import BEAM_TYPES, SHELL_TYPES
from flexmb.fe.mesh.unassembled import Unassembled

__all__ = ["finish"]

#: the warnings of reading a mesh keep the readers' logger name (the CLI and users filter on it)
logger = logging.getLogger("flexmb.fe.mesh.readers")

_UNTYPED_KIND = {**{t: ShellSection for t in SHELL_TYPES}, **{t: BeamSection for t in BEAM_TYPES}, "vertex": PointMass}


def _check_points(raw: RawMesh, path: Path) -> None:
    n_nodes = len(raw.points)
    if n_nodes == 0:
        raise MeshImportError(f"{path.name}: the file defines no nodes. Re-export the mesh (with its nodes).")
    pts = np.asarray(raw.points, dtype=float)
    bad = np.flatnonzero(~np.isfinite(pts).all(axis=1))
    if bad.size:
        raise MeshImportError(
            f"{path.name}: {bad.size} node(s) have non-finite coordinates (ids {format_ids(raw.node_ids[bad])}, "
            f"first: {pts[bad[0]].tolist()}). Fix the coordinates in the file or re-export the mesh."
        )
    unsupported = sorted({t for t, _, _ in raw.blocks if is_solid_cell(t) and t not in ELEMENTS})
    if unsupported:
        raise MeshImportError(
            f"{path.name}: unsupported solid cell type(s) {', '.join(unsupported)}; supported: "
            f"{', '.join(sorted(ELEMENTS))}. Re-mesh with one of these (e.g. Gmsh "
            "Mesh.SecondOrderIncomplete=1 gives hexahedron20 instead of hexahedron27)."
        )
    for t, conn, _ in raw.blocks:
        if conn.size and (conn.min() < 0 or conn.max() >= n_nodes):
            raise MeshImportError(f"{path.name}: {t} cells reference nodes that are not defined.")


def _destinations(raw: RawMesh, sections: dict, path: Path) -> dict[int, tuple[str, str, NDArray[np.bool_]]]:
    """Block -> (group "cells" | "shells" | "beams" | "masses", type, rows taken (bool mask))."""
    out = {}
    typed = raw.unassembled is not None
    for b, (t, conn, _) in enumerate(raw.blocks):
        if is_solid_cell(t):
            out[b] = ("cells", t, np.ones(len(conn), bool))
        elif t.startswith("shell:"):
            out[b] = ("shells", t[6:], np.ones(len(conn), bool))
        elif t.startswith("beam:"):
            out[b] = ("beams", t[5:], np.ones(len(conn), bool))
        elif not typed and t in _UNTYPED_KIND:
            take = np.zeros(len(conn), bool)
            for name, members in raw.block_sets.items():
                if isinstance(sections.get(name), _UNTYPED_KIND[t]):
                    for bb, rows in members:
                        if bb == b:
                            take[as_index_array(rows)] = True
            if isinstance(sections.get("*"), _UNTYPED_KIND[t]) and t != "vertex":
                take[:] = True
            if take.any():
                group = "masses" if t == "vertex" else "shells" if t in SHELL_TYPES else "beams"
                out[b] = (group, t, take)
    return out


def finish(raw: RawMesh, path: Path, units: str | None, sections: dict | None = None) -> FEMesh:
    """RawMesh -> FEMesh (see the module docstring); ``sections`` (element set -> section) are the
    user's, added to (and overriding) the file's."""
    _check_points(raw, path)
    all_sections = {**raw.sections, **(sections or {})}
    dest = _destinations(raw, all_sections, path)
    # merged rows per (group, type); new_row[b] maps a block's rows to them (-1: not taken)
    merged: dict[tuple[str, str], dict[str, list]] = {}
    new_row: dict[int, NDArray[np.int64]] = {}
    for b, (group, t, take) in dest.items():
        _, conn, cid = raw.blocks[b]
        slot = merged.setdefault((group, t), {"conn": [], "ids": [], "data": [], "n": 0})
        nr = np.full(len(conn), -1, dtype=np.int64)
        nr[take] = slot["n"] + np.arange(int(take.sum()))
        new_row[b] = nr
        slot["conn"].append(conn[take])
        slot["ids"].append(cid[take])
        slot["data"].append({k: v[take] for k, v in raw.block_data.get(b, {}).items()})
        slot["n"] += int(take.sum())
    blocks_of = {g: {t: np.concatenate(v["conn"]) for (gg, t), v in merged.items() if gg == g}
                 for g in ("cells", "shells", "beams", "masses")}
    ids_of = {(g, t): np.concatenate(v["ids"]) for (g, t), v in merged.items()}
    if "wedge" in blocks_of["cells"]:
        blocks_of["cells"]["wedge"] = _oriented_wedges(raw.points, blocks_of["cells"]["wedge"], path)

    element_sets: dict[str, dict[str, list[NDArray[np.int64]]]] = {}
    node_sets = {k: as_index_array(v) for k, v in raw.node_sets.items()}
    derived: dict[str, list[NDArray[np.int64]]] = {}
    mass_rows: dict[str, list[NDArray[np.int64]]] = {}
    for name, members in raw.block_sets.items():
        for b, rows in members:
            rows = as_index_array(rows)
            if not rows.size:
                continue
            derived.setdefault(name, []).append(raw.blocks[b][1][rows].ravel())
            if b in dest:
                group, t, _ = dest[b]
                r = new_row[b][rows]
                r = r[r >= 0]
                if group == "masses":
                    mass_rows.setdefault(name, []).append(r)
                elif r.size:
                    element_sets.setdefault(name, {}).setdefault(t, []).append(r)
    el_sets = {k: {t: np.unique(np.concatenate(r)) for t, r in v.items()} for k, v in element_sets.items()}
    for name, parts in derived.items():
        if name not in node_sets:  # an explicit node set of the same name wins
            node_sets[name] = np.unique(np.concatenate(parts))
    cells_ids = {t: ids_of[("cells", t)] for t in blocks_of["cells"]}
    shell_ids = {t: ids_of[("shells", t)] for t in blocks_of["shells"]}
    if raw.dedupe:
        blocks_of["cells"], cells_ids, el_sets = _drop_duplicate_cells(blocks_of["cells"], cells_ids, el_sets, path)
        blocks_of["shells"], shell_ids, el_sets = _drop_duplicate_cells(blocks_of["shells"], shell_ids, el_sets, path)
    for name, idx in node_sets.items():
        if idx.size and (idx.min() < 0 or idx.max() >= len(raw.points)):
            raise MeshImportError(f"{path.name}: node set {name!r} names nodes that are not defined.")
    element_data = _element_data(merged)
    point_masses = _merge_masses(raw.point_masses, mass_rows, all_sections, blocks_of["masses"], dest, raw, path)
    assembled = {**blocks_of["cells"], **blocks_of["shells"], **blocks_of["beams"]}
    unassembled = _unassembled(raw, dest, new_row, assembled)
    if unassembled:
        logger.warning("%s: elements that flexmb does not assemble (dropped from the model): %s", path.name,
                       unassembled_mod.describe(unassembled))
    for kind, mapping in (("a material", raw.materials), ("a section", sections or {})):
        for name in mapping:
            if name != "*" and name not in el_sets and name not in mass_rows:
                raise MeshImportError(
                    f"{path.name}: {kind} is assigned to element set {name!r}, which has no solid, shell or beam "
                    f"elements; known element sets: {sorted(el_sets) or 'none'}."
                )
    kept_sections = {k: s for k, s in all_sections.items()
                     if isinstance(s, (ShellSection, BeamSection)) and (k == "*" or k in el_sets)}
    return FEMesh(
        points=raw.points, cells=blocks_of["cells"], cell_ids={**cells_ids, **shell_ids, **{
            t: ids_of[("beams", t)] for t in blocks_of["beams"]}},
        node_ids=raw.node_ids, node_sets=node_sets, element_sets=el_sets, materials=raw.materials,
        units=units if units is not None else raw.units, source=str(path), checksum=_sha256(path),
        unassembled=unassembled, shells=blocks_of["shells"], beams=blocks_of["beams"], sections=kept_sections,
        element_data=element_data, point_masses=point_masses, springs=raw.springs,
    )


def _element_data(merged: dict) -> dict:
    """Per-row data of the shell and beam blocks, concatenated per type (NaN where a block has none)."""
    out = {}
    for (group, t), slot in merged.items():
        if group not in ("shells", "beams"):
            continue
        fields = sorted({f for d in slot["data"] for f in d})
        if not fields:
            continue
        out[t] = {}
        for f in fields:
            parts = []
            for d, conn in zip(slot["data"], slot["conn"]):
                shape = next(v.shape[1:] for dd in slot["data"] for k, v in dd.items() if k == f)
                parts.append(d.get(f, np.full((len(conn),) + shape, np.nan)))
            out[t][f] = np.concatenate(parts)
    return out


def _merge_masses(file_masses, mass_rows, sections, vertex_blocks, dest, raw, path) -> PointMasses | None:
    """The file's point masses plus those of vertex cells in sets with a PointMass section."""
    parts = [] if file_masses is None else [file_masses]
    conn = vertex_blocks.get("vertex")
    for name, rows in mass_rows.items():
        sec = sections.get(name)
        if not isinstance(sec, PointMass) or conn is None:
            continue
        r = np.unique(np.concatenate(rows))
        inertia = None if sec.inertia is None else np.asarray(sec.inertia)[None]
        parts.append(PointMasses.from_values(conn[r, 0], sec.mass, inertia, ids=np.arange(1, r.size + 1)))
    if not parts:
        return None
    return PointMasses(np.concatenate([p.nodes for p in parts]), np.concatenate([p.matrix for p in parts]),
                       np.concatenate([p.ids for p in parts]))


def _unassembled(raw: RawMesh, dest, new_row, assembled) -> tuple[Unassembled, ...]:
    """The reader's own record (formats with element types), or the lower-dimensional cells that
    are no face, edge or node of the assembled elements (formats without: Gmsh, VTK, MED)."""
    if raw.unassembled is not None:
        return unassembled_mod.merge(raw.unassembled)
    entries = []
    for b, (t, conn, cid) in enumerate(raw.blocks):
        if is_solid_cell(t) or not len(conn):
            continue
        rest = np.ones(len(conn), bool) if b not in dest else new_row[b] < 0
        if not rest.any():
            continue
        off = np.zeros(len(conn), bool)
        off[rest] = unassembled_mod.off_solid(assembled, t, conn[rest])
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
        for by_type in el_sets.values():
            if t in by_type:
                by_type[t] = np.unique(row_of[by_type[t]])
    return cells, ids, el_sets


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
