"""Gmsh ``.msh``, VTK ``.vtu``/``.vtk`` and MED ``.med`` parsers through meshio; each returns a
:class:`~flexmb.fe.mesh.RawMesh`. Registered by extension in :mod:`flexmb.fe.mesh.readers`, which also
turns a RawMesh into an :class:`~flexmb.fe.mesh.FEMesh`. ``read_meshio`` also serves
:mod:`flexmb.fe.mesh.nastran`.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError
from flexmb.fe.mesh import integrity
from flexmb.fe.elements.solid import ELEMENTS
from flexmb.fe.mesh.femesh import Material, is_solid_cell
from flexmb.fe.mesh.raw import RawMesh

logger = logging.getLogger(__name__)


def read_meshio(path: Path, file_format: str):
    """Call one meshio format reader directly (``meshio.read`` prints and calls ``sys.exit`` when a
    file of a given format cannot be read). What meshio prints (its warnings go to stderr) is
    logged at WARNING instead: the library never prints."""
    import contextlib
    import importlib
    import io

    module = importlib.import_module(f"meshio.{file_format}")
    out = io.StringIO()
    try:
        with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
            return module.read(str(path))
    finally:
        for line in out.getvalue().splitlines():
            if line.strip():
                logger.warning("%s: meshio: %s", path.name, line.strip())


def _read_gmsh(path: Path) -> RawMesh:
    """Gmsh .msh v2/v4: physical groups become sets (by name; unnamed ones as 'physical_<tag>')."""
    integrity.check_gmsh(path)
    m = read_meshio(path, "gmsh")
    blocks = [(cb.type, np.asarray(cb.data, dtype=np.int64), np.arange(len(cb.data)) + 0) for cb in m.cells]
    # element ids: running number over all blocks, 1-based (meshio does not keep Gmsh's tags)
    start = 1
    for b, (t, conn, _) in enumerate(blocks):
        blocks[b] = (t, conn, np.arange(start, start + len(conn)))
        start += len(conn)
    block_sets: dict[str, list[tuple[int, NDArray[np.int64]]]] = {}
    named = {}  # (tag, dim) -> name
    for name, data in (m.field_data or {}).items():
        arr = np.asarray(data).ravel()
        if arr.size >= 2:
            named[(int(arr[0]), int(arr[1]))] = name
    # meshio's v4 reader fills cell_sets (handles entities in several physical groups)
    for name, per_block in (m.cell_sets or {}).items():
        if name.startswith("gmsh:") or name not in (m.field_data or {}):
            continue
        block_sets[name] = [(b, np.asarray(r)) for b, r in enumerate(per_block) if r is not None and len(r)]
    phys = m.cell_data.get("gmsh:physical")
    if phys is not None:
        for b, tags in enumerate(phys):
            t = blocks[b][0]
            dim = 3 if is_solid_cell(t) else (2 if t.startswith(("triangle", "quad", "polygon")) else (1 if t.startswith("line") else 0))
            tags = np.asarray(tags).ravel()
            for tag in np.unique(tags[tags != 0]):  # 0: in no physical group
                name = named.get((int(tag), dim), f"physical_{int(tag)}")
                if name in (m.cell_sets or {}) and name in block_sets:
                    continue  # already complete from cell_sets
                block_sets.setdefault(name, []).append((b, np.flatnonzero(tags == tag)))
    return RawMesh(
        points=np.asarray(m.points, dtype=float),
        node_ids=np.arange(1, len(m.points) + 1),
        blocks=blocks,
        block_sets=block_sets,
        dedupe=True,
    )


_SET_PREFIX_NODE = "node_set:"
_SET_PREFIX_ELEM = "element_set:"


def _read_vtk_like(path: Path) -> RawMesh:
    """VTU/VTK: node sets from point-data masks ``node_set:NAME``, element sets from cell-data masks
    ``element_set:NAME`` (the convention flexmb's own writers use); original ids from point data
    ``node_id`` / cell data ``element_id`` when present."""
    vtu = path.suffix.lower() == ".vtu"
    if vtu:
        integrity.check_vtu_xml(path)
    m = read_meshio(path, "vtu" if vtu else "vtk")
    if vtu:
        integrity.check_vtu_counts(path, len(m.points), sum(len(cb.data) for cb in m.cells))
    node_ids = np.asarray(m.point_data.get("node_id", np.arange(1, len(m.points) + 1)), dtype=np.int64)
    blocks = []
    start = 1
    eids = m.cell_data.get("element_id")
    for b, cb in enumerate(m.cells):
        ids = np.asarray(eids[b], dtype=np.int64) if eids is not None else np.arange(start, start + len(cb.data))
        blocks.append((cb.type, np.asarray(cb.data, dtype=np.int64), ids))
        start += len(cb.data)
    node_sets = {
        k[len(_SET_PREFIX_NODE):]: np.flatnonzero(np.asarray(v).ravel())
        for k, v in m.point_data.items()
        if k.startswith(_SET_PREFIX_NODE)
    }
    block_sets = {
        k[len(_SET_PREFIX_ELEM):]: [(b, np.flatnonzero(np.asarray(d).ravel())) for b, d in enumerate(v)]
        for k, v in m.cell_data.items()
        if k.startswith(_SET_PREFIX_ELEM)
    }
    materials = _vtk_materials(m, block_sets)
    return RawMesh(np.asarray(m.points, float), node_ids, blocks, node_sets, block_sets, materials)


def _vtk_materials(m, block_sets: dict) -> dict[str, Material]:
    """Materials of the cell data ``material:E``, ``material:nu``, ``material:rho`` (flexmb's writer):
    one element set ``material_<k>`` per distinct (E, nu, rho); NaN rows have none."""
    fields = [m.cell_data.get(f"material:{f}") for f in ("E", "nu", "rho")]
    if any(f is None for f in fields):
        return {}
    rows = [np.column_stack([np.asarray(f[b], dtype=float).ravel() for f in fields]) for b in range(len(m.cells))]
    every = np.vstack(rows) if rows else np.zeros((0, 3))
    every = every[~np.isnan(every).any(axis=1)]
    materials = {}
    for k, triple in enumerate(np.unique(every, axis=0), start=1):
        name = f"material_{k}"
        block_sets[name] = [(b, np.flatnonzero(np.all(r == triple, axis=1))) for b, r in enumerate(rows)]
        materials[name] = Material(*triple, name=name)
    return materials


#: MED numbers the corners of solid cells with the opposite orientation to VTK (Salome SMESH
#: "nodal connectivity of elements"); meshio does not convert. Corner permutations (self-inverse):
_MED_CORNERS = {
    "tetra": [0, 2, 1, 3],
    "pyramid": [0, 3, 2, 1, 4],
    "hexahedron": [0, 3, 2, 1, 4, 7, 6, 5],
    "wedge": [0, 2, 1, 3, 5, 4],
}


def _med_to_vtk(cell_type: str, conn: NDArray[np.int64]) -> NDArray[np.int64]:
    """Reorder MED connectivity to VTK; mid-edge nodes follow their edges (same edge pattern)."""
    base = {"tetra10": "tetra", "hexahedron20": "hexahedron"}.get(cell_type, cell_type)
    if base not in _MED_CORNERS:
        return conn
    p = _MED_CORNERS[base]
    perm = list(p)
    if cell_type != base:
        edges = [frozenset(e) for e in ELEMENTS[cell_type].edges]
        n_corner = len(p)
        perm += [n_corner + edges.index(frozenset((p[i], p[j]))) for i, j in ELEMENTS[cell_type].edges]
    return conn[:, perm]


def _read_med(path: Path) -> RawMesh:
    """MED (Salome/Code_Aster): families become sets (needs h5py); node order converted to VTK."""
    try:
        import h5py  # noqa: F401
    except ImportError as exc:
        raise MeshImportError(
            f"{path.name}: reading MED files needs h5py; install it with `pip install h5py`."
        ) from exc
    m = read_meshio(path, "med")
    blocks = []
    start = 1
    for cb in m.cells:
        conn = _med_to_vtk(cb.type, np.asarray(cb.data, dtype=np.int64))
        blocks.append((cb.type, conn, np.arange(start, start + len(cb.data))))
        start += len(cb.data)
    node_sets: dict[str, NDArray[np.int64]] = {}
    ptags = m.point_data.get("point_tags")
    for tag, names in (getattr(m, "point_tags", None) or {}).items():
        if ptags is None:
            break
        for name in names:
            node_sets[name] = np.union1d(node_sets.get(name, []), np.flatnonzero(ptags == tag)).astype(np.int64)
    block_sets: dict[str, list] = {}
    ctags = m.cell_data.get("cell_tags")
    for tag, names in (getattr(m, "cell_tags", None) or {}).items():
        if ctags is None:
            break
        for name in names:
            for b, tags in enumerate(ctags):
                rows = np.flatnonzero(np.asarray(tags) == tag)
                if rows.size:
                    block_sets.setdefault(name, []).append((b, rows))
    return RawMesh(np.asarray(m.points, float), np.arange(1, len(m.points) + 1), blocks, node_sets, block_sets)
