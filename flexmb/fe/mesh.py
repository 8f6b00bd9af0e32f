"""Solid FE meshes: the FEMesh and Material values, mesh readers (Gmsh, Abaqus, Nastran, VTK, MED)
and mesh checks.

Units: flexmb is unit-agnostic; a mesh and its materials must use one consistent system (SI: m, kg,
s, N, Pa is what the shipped meshes use). ``FEMesh.units`` is a label only (from the ``units``
argument of :func:`read_mesh`); nothing is converted.

Readers are registered in :data:`READERS` by file extension (:func:`register_reader`). Each reader
returns a :class:`RawMesh` (all cell blocks, lower-dimensional ones included, with their sets);
:func:`read_mesh` turns it into an :class:`FEMesh` that keeps only solid cells, and derives node
sets from every element set (solid, surface, line or point cells).
"""
from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.elements import ELEMENTS, get_element, isoparametric_map

__all__ = [
    "FEMesh",
    "Material",
    "RawMesh",
    "READERS",
    "SOLID_PREFIXES",
    "check_mesh",
    "read_mesh",
    "register_reader",
]

logger = logging.getLogger(__name__)

#: meshio cell-type name prefixes of three-dimensional (solid) cells
SOLID_PREFIXES = ("tetra", "hexahedron", "wedge", "pyramid", "polyhedron")


def _is_solid(cell_type: str) -> bool:
    return cell_type.startswith(SOLID_PREFIXES)


# ============================================================================================
# values
# ============================================================================================


@dataclass(frozen=True)
class Material:
    """Isotropic linear-elastic material.

    Attributes
    ----------
    E : float
        Young's modulus (Pa), > 0.
    nu : float
        Poisson's ratio, -1 < nu < 0.5.
    rho : float
        Density (kg/m^3), > 0.
    name : str
        Label used in messages and summaries.
    """

    E: float
    nu: float
    rho: float
    name: str = "material"

    def __post_init__(self) -> None:
        for attr in ("E", "nu", "rho"):
            value = getattr(self, attr)
            if not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value):
                raise ModelError(f"Material {self.name!r}: `{attr}` = {value!r} is not a finite number.")
            object.__setattr__(self, attr, float(value))
        if not self.E > 0.0:
            raise ModelError(
                f"Material {self.name!r}: Young's modulus `E` = {self.E!r} must be > 0 "
                "(in the mesh's unit system, e.g. Pa for SI)."
            )
        if not -1.0 < self.nu < 0.5:
            raise ModelError(
                f"Material {self.name!r}: Poisson's ratio `nu` = {self.nu!r} must satisfy -1 < nu < 0.5 "
                "(nu = 0.5, incompressible, needs a mixed formulation; use e.g. 0.499)."
            )
        if not self.rho > 0.0:
            raise ModelError(
                f"Material {self.name!r}: density `rho` = {self.rho!r} must be > 0 "
                "(in the mesh's unit system, e.g. kg/m^3 for SI)."
            )

    @property
    def lame(self) -> tuple[float, float]:
        """Lamé parameters (lambda, mu) (Pa)."""
        lam = self.E * self.nu / ((1.0 + self.nu) * (1.0 - 2.0 * self.nu))
        mu = self.E / (2.0 * (1.0 + self.nu))
        return lam, mu


def _as_index_array(idx: ArrayLike) -> NDArray[np.int64]:
    return np.asarray(idx, dtype=np.int64).reshape(-1)


@dataclass(frozen=True, eq=False)
class FEMesh:
    """A solid finite-element mesh with node/element sets and materials.

    Attributes
    ----------
    points : ndarray, shape (n_nodes, 3)
        Node coordinates (length unit of the file, m for SI).
    cells : dict of str to ndarray, shape (n_cells, k)
        Solid cells by meshio cell-type name, 0-based node indices in meshio/VTK order.
    cell_ids : dict of str to ndarray, shape (n_cells,)
        Original element ids (for messages).
    node_ids : ndarray, shape (n_nodes,)
        Original node ids.
    node_sets : dict of str to ndarray
        0-based node indices of each named node set.
    element_sets : dict of str to dict of str to ndarray
        Set name -> {cell type -> row indices into ``cells[type]``}.
    materials : dict of str to Material
        Element-set name -> material; the key ``"*"`` applies to the whole mesh (named sets
        override it).
    units : str or None
        Label of the unit system (not used for any conversion).
    source : str or None
        File the mesh was read from.
    checksum : str or None
        sha256 of that file.

    Degrees of freedom are node-major: ``[ux0, uy0, uz0, ux1, ...]``.
    """

    points: NDArray[np.float64]
    cells: dict[str, NDArray[np.int64]]
    cell_ids: dict[str, NDArray[np.int64]] = field(default_factory=dict)
    node_ids: NDArray[np.int64] | None = None
    node_sets: dict[str, NDArray[np.int64]] = field(default_factory=dict)
    element_sets: dict[str, dict[str, NDArray[np.int64]]] = field(default_factory=dict)
    materials: dict[str, Material] = field(default_factory=dict)
    units: str | None = None
    source: str | None = None
    checksum: str | None = None

    def __post_init__(self) -> None:
        pts = np.asarray(self.points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3):
            raise ModelError(f"FEMesh: `points` must have shape (n_nodes, 3), got {pts.shape}.")
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        object.__setattr__(self, "points", pts)
        cells = {t: np.array(c, dtype=np.int64).reshape(len(c), -1) for t, c in self.cells.items() if len(c)}
        for t, c in cells.items():
            if t in ELEMENTS and c.shape[1] != ELEMENTS[t].n_nodes:
                raise ModelError(f"FEMesh: cells[{t!r}] has {c.shape[1]} nodes per cell, expected {ELEMENTS[t].n_nodes}.")
            if c.size and (c.min() < 0 or c.max() >= len(pts)):
                raise ModelError(
                    f"FEMesh: cells[{t!r}] reference node index {int(c.max())} but there are {len(pts)} nodes."
                )
        for c in cells.values():
            c.flags.writeable = False  # assembly caches the sparsity pattern per mesh object
        object.__setattr__(self, "cells", cells)
        ids = {t: np.asarray(self.cell_ids.get(t, np.arange(1, len(c) + 1)), dtype=np.int64) for t, c in cells.items()}
        object.__setattr__(self, "cell_ids", ids)
        nid = np.arange(1, len(pts) + 1) if self.node_ids is None else np.asarray(self.node_ids, dtype=np.int64)
        object.__setattr__(self, "node_ids", nid)
        object.__setattr__(self, "node_sets", {k: _as_index_array(v) for k, v in self.node_sets.items()})
        object.__setattr__(
            self,
            "element_sets",
            {k: {t: _as_index_array(r) for t, r in v.items()} for k, v in self.element_sets.items()},
        )
        object.__setattr__(self, "materials", dict(self.materials))

    # ---------------------------------------------------------------- sizes
    @property
    def n_nodes(self) -> int:
        return int(self.points.shape[0])

    @property
    def n_dofs(self) -> int:
        """Number of displacement DOFs, 3 * n_nodes."""
        return 3 * self.n_nodes

    @property
    def n_cells(self) -> int:
        return int(sum(len(c) for c in self.cells.values()))

    # ---------------------------------------------------------------- node queries (vectorized)
    def nodes_in_box(self, lo: ArrayLike, hi: ArrayLike) -> NDArray[np.int64]:
        """Indices of the nodes with lo <= x <= hi component-wise (lo, hi: shape (3,), m)."""
        lo_, hi_ = np.asarray(lo, float), np.asarray(hi, float)
        return np.flatnonzero(np.all((self.points >= lo_) & (self.points <= hi_), axis=1))

    def nodes_on_plane(self, point: ArrayLike, normal: ArrayLike, tol: float = 1e-9) -> NDArray[np.int64]:
        """Indices of the nodes within distance ``tol`` (m) of the plane through ``point`` with ``normal``."""
        n = np.asarray(normal, float)
        n = n / np.linalg.norm(n)
        d = (self.points - np.asarray(point, float)) @ n
        return np.flatnonzero(np.abs(d) <= tol)

    def nodes_within(self, center: ArrayLike, radius: float) -> NDArray[np.int64]:
        """Indices of the nodes within ``radius`` (m) of ``center`` (3,)."""
        d2 = ((self.points - np.asarray(center, float)) ** 2).sum(axis=1)
        return np.flatnonzero(d2 <= radius * radius)

    def used_nodes(self) -> NDArray[np.int64]:
        """Sorted indices of the nodes used by at least one solid cell."""
        if not self.cells:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate([c.ravel() for c in self.cells.values()]))

    # ---------------------------------------------------------------- transformations
    def with_node_set(self, name: str, idx: ArrayLike) -> FEMesh:
        """A new mesh with node set ``name`` = ``idx`` (0-based node indices) added or replaced."""
        idx_ = np.unique(_as_index_array(idx))
        if idx_.size and (idx_[0] < 0 or idx_[-1] >= self.n_nodes):
            raise ModelError(
                f"node set {name!r}: index {int(idx_[-1] if idx_[-1] >= self.n_nodes else idx_[0])} "
                f"is outside 0..{self.n_nodes - 1}; pass 0-based node indices (see FEMesh.node_ids for ids)."
            )
        return replace(self, node_sets={**self.node_sets, name: idx_})

    def with_material(self, material: Material, element_set: str = "*") -> FEMesh:
        """A new mesh with ``material`` assigned to ``element_set`` ("*" = whole mesh)."""
        if not isinstance(material, Material):
            raise ModelError(f"with_material: expected a Material, got {type(material).__name__}.")
        if element_set != "*" and element_set not in self.element_sets:
            raise ModelError(
                f"with_material: element set {element_set!r} does not exist; known sets: "
                f"{sorted(self.element_sets) or 'none'} (use '*' for the whole mesh)."
            )
        return replace(self, materials={**self.materials, element_set: material})

    def translated(self, d: ArrayLike) -> FEMesh:
        """A new mesh with all points moved by ``d`` (3,) (m)."""
        return replace(self, points=self.points + np.asarray(d, float))

    def compacted(self) -> FEMesh:
        """A new mesh without the nodes that no solid cell uses (node sets keep their used nodes)."""
        used = self.used_nodes()
        if used.size == self.n_nodes:
            return self
        new_index = np.full(self.n_nodes, -1, dtype=np.int64)
        new_index[used] = np.arange(used.size)
        node_sets = {k: new_index[v][new_index[v] >= 0] for k, v in self.node_sets.items()}
        return replace(
            self,
            points=self.points[used],
            node_ids=self.node_ids[used],
            cells={t: new_index[c] for t, c in self.cells.items()},
            node_sets=node_sets,
        )

    # ---------------------------------------------------------------- geometry
    def bounding_box(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(lo, hi), each shape (3,) (m), over the nodes used by solid cells (all nodes if none)."""
        used = self.used_nodes()
        pts = self.points[used] if used.size else self.points
        if not len(pts):
            return np.zeros(3), np.zeros(3)
        return pts.min(axis=0), pts.max(axis=0)

    def cell_volumes(self) -> dict[str, NDArray[np.float64]]:
        """Volume of each solid cell by type (m^3), with the element's mass quadrature rule."""
        out = {}
        for t, conn in self.cells.items():
            elem = get_element(t)
            det_j, _ = isoparametric_map(elem, self.points[conn], elem.mass_rule.points)
            out[t] = det_j @ elem.mass_rule.weights
        return out

    def volume(self) -> float:
        """Total volume of the solid cells (m^3)."""
        return float(sum(v.sum() for v in self.cell_volumes().values()))

    # ---------------------------------------------------------------- materials
    def cell_materials(
        self, materials: Material | Mapping[str, Material] | None = None
    ) -> dict[str, NDArray[np.float64]]:
        """Material constants of every solid cell.

        Parameters
        ----------
        materials : Material, dict of str to Material, or None
            Overrides ``self.materials``: a single Material for the whole mesh, or element-set name
            -> Material ("*" = whole mesh). None uses ``self.materials``.

        Returns
        -------
        dict of str to ndarray, shape (n_cells, 3)
            Per cell type, columns (E, nu, rho).

        Raises
        ------
        ModelError
            If a cell has no material; names the element sets (or element ids) concerned.
        """
        if materials is None:
            mats = dict(self.materials)
        elif isinstance(materials, Material):
            mats = {"*": materials}
        else:
            mats = dict(materials)
        for name, mat in mats.items():
            if not isinstance(mat, Material):
                raise ModelError(f"materials[{name!r}] is a {type(mat).__name__}, expected a Material.")
            if name != "*" and name not in self.element_sets:
                raise ModelError(
                    f"materials: element set {name!r} does not exist in {self.source or 'the mesh'}; "
                    f"known sets: {sorted(self.element_sets) or 'none'} (use '*' for the whole mesh)."
                )
        out: dict[str, NDArray[np.float64]] = {}
        for t, conn in self.cells.items():
            vals = np.full((len(conn), 3), np.nan)
            if "*" in mats:
                m = mats["*"]
                vals[:] = (m.E, m.nu, m.rho)
            for name, m in mats.items():
                if name == "*":
                    continue
                rows = self.element_sets[name].get(t)
                if rows is not None and rows.size:
                    vals[rows] = (m.E, m.nu, m.rho)
            out[t] = vals
        missing = {t: np.flatnonzero(np.isnan(v[:, 0])) for t, v in out.items()}
        missing = {t: r for t, r in missing.items() if r.size}
        if missing:
            n_missing = sum(r.size for r in missing.values())
            sets = sorted(
                name
                for name, rows_by_type in self.element_sets.items()
                if any(np.intersect1d(rows_by_type.get(t, []), r).size for t, r in missing.items())
            )
            ids = np.concatenate([self.cell_ids[t][r] for t, r in missing.items()])
            where = f"element set(s) {', '.join(map(repr, sets))}" if sets else "no element set"
            raise ModelError(
                f"{n_missing} solid element(s) of {self.source or 'the mesh'} have no material "
                f"({where}; element ids {_format_ids(ids)}). Assign one with "
                "mesh.with_material(Material(E, nu, rho), element_set=...) or pass `materials=`."
            )
        return out

    # ---------------------------------------------------------------- summary
    def summary(self, materials: Material | Mapping[str, Material] | None = None) -> dict:
        """Plain-dict description (JSON-serializable) used by ``flexmb info``.

        Keys: source, checksum, units, n_nodes, n_dofs, n_unused_nodes, cells (type -> count),
        node_sets (name -> size), element_sets (name -> size), bounding_box {lo, hi} (m),
        volume (m^3), materials (set -> {E, nu, rho, name}), and mass (kg) when every cell has a
        material (else None).
        """
        lo, hi = self.bounding_box()
        vols = self.cell_volumes()
        mass = None
        mats = self.materials if materials is None else (
            {"*": materials} if isinstance(materials, Material) else dict(materials)
        )
        try:
            fields = self.cell_materials(mats) if mats and self.cells else None
        except ModelError:
            fields = None
        if fields is not None:
            mass = float(sum((vols[t] * fields[t][:, 2]).sum() for t in vols))
        return {
            "source": self.source,
            "checksum": self.checksum,
            "units": self.units,
            "n_nodes": self.n_nodes,
            "n_dofs": self.n_dofs,
            "n_unused_nodes": int(self.n_nodes - self.used_nodes().size),
            "cells": {t: int(len(c)) for t, c in self.cells.items()},
            "node_sets": {k: int(v.size) for k, v in self.node_sets.items()},
            "element_sets": {k: int(sum(r.size for r in v.values())) for k, v in self.element_sets.items()},
            "bounding_box": {"lo": lo.tolist(), "hi": hi.tolist()},
            "volume": float(sum(v.sum() for v in vols.values())),
            "materials": {
                k: {"name": m.name, "E": m.E, "nu": m.nu, "rho": m.rho} for k, m in mats.items()
            },
            "mass": mass,
        }


def _format_ids(ids: ArrayLike, limit: int = 10) -> str:
    ids = np.asarray(ids).ravel()
    shown = ", ".join(str(int(i)) for i in ids[:limit])
    return shown + (f", ... ({ids.size} in total)" if ids.size > limit else "")


# ============================================================================================
# readers
# ============================================================================================


@dataclass
class RawMesh:
    """What a reader returns: every cell block as read, with sets (internal, mutable while built).

    Attributes
    ----------
    points : ndarray, shape (n_nodes, 3)
    node_ids : ndarray, shape (n_nodes,)
    blocks : list of (cell_type, conn (m, k) 0-based, ids (m,))
    node_sets : dict of str to ndarray (0-based node indices)
    block_sets : dict of str to list of (block index, row indices)
    materials : dict of str to Material (element-set name -> material)
    units : str or None
    """

    points: NDArray[np.float64]
    node_ids: NDArray[np.int64]
    blocks: list[tuple[str, NDArray[np.int64], NDArray[np.int64]]]
    node_sets: dict[str, NDArray[np.int64]] = field(default_factory=dict)
    block_sets: dict[str, list[tuple[int, NDArray[np.int64]]]] = field(default_factory=dict)
    materials: dict[str, Material] = field(default_factory=dict)
    units: str | None = None
    dedupe: bool = False


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
        Added to (and overriding) the materials found in the file: a single Material for the whole
        mesh, or element-set name -> Material ("*" = whole mesh).
    units : str, optional
        Label of the unit system of the file (e.g. "SI"); stored, not converted.
    drop_unused_nodes : bool
        Remove the nodes that no solid cell uses (default: keep them; :func:`check_mesh` warns).

    Returns
    -------
    FEMesh

    Raises
    ------
    MeshImportError
        File missing, unknown extension, truncated or malformed content, unsupported solid cell
        types, or sets naming missing nodes. The message names the file and the problem.
    """
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
    mesh = _finish(raw, path, units)
    if materials is not None:
        extra = {"*": materials} if isinstance(materials, Material) else dict(materials)
        for name, m in extra.items():
            mesh = mesh.with_material(m, name)
    if drop_unused_nodes:
        mesh = mesh.compacted()
    return mesh


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _finish(raw: RawMesh, path: Path, units: str | None) -> FEMesh:
    """RawMesh -> FEMesh: merge solid blocks by type, sets to row indices, node sets from sets."""
    n_nodes = len(raw.points)
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
    )


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


# -------------------------------------------------------------------------------- meshio formats


def _read_meshio(path: Path, file_format: str):
    """Call one meshio format reader directly (``meshio.read`` prints and calls ``sys.exit`` when a
    file of a given format cannot be read)."""
    import importlib

    module = importlib.import_module(f"meshio.{file_format}")
    return module.read(str(path))


def _read_gmsh(path: Path) -> RawMesh:
    """Gmsh .msh v2/v4: physical groups become sets (by name; unnamed ones as 'physical_<tag>')."""
    m = _read_meshio(path, "gmsh")
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
            dim = 3 if _is_solid(t) else (2 if t.startswith(("triangle", "quad", "polygon")) else (1 if t.startswith("line") else 0))
            tags = np.asarray(tags).ravel()
            for tag in np.unique(tags):
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
    m = _read_meshio(path, "vtu" if path.suffix.lower() == ".vtu" else "vtk")
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
    return RawMesh(np.asarray(m.points, float), node_ids, blocks, node_sets, block_sets)


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
    m = _read_meshio(path, "med")
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


# -------------------------------------------------------------------------------- Abaqus .inp

#: Abaqus element type -> meshio cell type (solid, shell/surface and line elements)
ABAQUS_TYPES: dict[str, str] = {
    **{t: "tetra" for t in ("C3D4", "C3D4H")},
    **{t: "tetra10" for t in ("C3D10", "C3D10H", "C3D10I", "C3D10M", "C3D10MH", "C3D10HS")},
    **{t: "hexahedron" for t in ("C3D8", "C3D8H", "C3D8I", "C3D8IH", "C3D8R", "C3D8RH")},
    **{t: "hexahedron20" for t in ("C3D20", "C3D20H", "C3D20R", "C3D20RH")},
    **{t: "hexahedron27" for t in ("C3D27", "C3D27H", "C3D27R", "C3D27RH")},
    **{t: "wedge" for t in ("C3D6", "C3D6H")},
    **{t: "wedge15" for t in ("C3D15", "C3D15H")},
    **{t: "pyramid" for t in ("C3D5", "C3D5H")},
    **{t: "triangle" for t in ("S3", "S3R", "S3RS", "STRI3", "CPS3", "CPE3", "R3D3", "M3D3", "SFM3D3")},
    **{t: "triangle6" for t in ("STRI65", "CPS6", "CPE6", "M3D6", "SFM3D6")},
    **{t: "quad" for t in ("S4", "S4R", "S4RS", "S4R5", "CPS4", "CPS4R", "CPE4", "R3D4", "M3D4", "M3D4R", "SFM3D4", "SFM3D4R")},
    **{t: "quad8" for t in ("S8R", "S8R5", "CPS8", "CPS8R", "M3D8", "M3D8R", "SFM3D8", "SFM3D8R")},
    **{t: "line" for t in ("T3D2", "B31", "B31H", "T2D2")},
    **{t: "line3" for t in ("T3D3", "B32", "B32H")},
}
_MESHIO_NODES = {
    "tetra": 4, "tetra10": 10, "hexahedron": 8, "hexahedron20": 20, "hexahedron27": 27, "wedge": 6,
    "wedge15": 15, "pyramid": 5, "triangle": 3, "triangle6": 6, "quad": 4, "quad8": 8, "line": 2, "line3": 3,
}


def _inp_params(line: str) -> tuple[str, dict[str, str | None]]:
    parts = [p.strip() for p in line.lstrip("*").split(",")]
    keyword = " ".join(parts[0].upper().split())
    params: dict[str, str | None] = {}
    for p in parts[1:]:
        if not p:
            continue
        key, eq, value = p.partition("=")
        params[key.strip().upper()] = value.strip().strip('"') if eq else None
    return keyword, params


def _inp_lines(path: Path, depth: int = 0) -> list[tuple[str, int, str]]:
    """(file name, line number, text) of the non-comment lines, *INCLUDE files inlined."""
    if depth > 10:
        raise MeshImportError(f"{path.name}: *INCLUDE nested more than 10 levels deep.")
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, start=1):
            s = line.strip()
            if not s or s.startswith("**"):
                continue
            if s.startswith("*") and _inp_params(s)[0] == "INCLUDE":
                inc = _inp_params(s)[1].get("INPUT")
                if not inc:
                    raise MeshImportError(f"{path.name}, line {no}: *INCLUDE without INPUT=.")
                inc_path = (path.parent / inc) if not Path(inc).is_absolute() else Path(inc)
                if not inc_path.is_file():
                    raise MeshImportError(f"{path.name}, line {no}: included file {inc!r} not found.")
                out += _inp_lines(inc_path, depth + 1)
                continue
            out.append((path.name, no, s))
    return out


def _inp_numbers(rows: list[tuple[str, int, str]], kind=float) -> list[list]:
    out = []
    for fname, no, s in rows:
        try:
            out.append([kind(v) for v in s.rstrip(",").split(",") if v.strip()])
        except ValueError as exc:
            raise MeshImportError(f"{fname}, line {no}: cannot read numbers from {s[:60]!r} ({exc}).") from exc
    return out


def _read_abaqus(path: Path) -> RawMesh:
    """Abaqus .inp (flat input): *NODE, *ELEMENT, *NSET, *ELSET (lists, set names, GENERATE),
    *MATERIAL with *ELASTIC (isotropic) and *DENSITY, *SOLID SECTION, *INCLUDE."""
    lines = _inp_lines(path)
    # split into keyword blocks
    blocks_kw: list[tuple[tuple[str, int, str], list[tuple[str, int, str]]]] = []
    for item in lines:
        if item[2].startswith("*"):
            blocks_kw.append((item, []))
        elif blocks_kw:
            blocks_kw[-1][1].append(item)
    node_chunks: list[NDArray[np.float64]] = []
    elem_blocks: list[tuple[str, NDArray[np.int64], NDArray[np.int64], str | None, tuple[str, int]]] = []
    nset_defs: list[tuple[str, dict, list, tuple[str, int]]] = []
    elset_defs: list[tuple[str, dict, list, tuple[str, int]]] = []
    materials_raw: dict[str, dict[str, object]] = {}
    sections: list[tuple[str, str, tuple[str, int]]] = []
    current_material: str | None = None
    n_parts = 0
    for (fname, no, head), data in blocks_kw:
        keyword, params = _inp_params(head)
        where = (fname, no)
        if keyword == "NODE":
            nums = _inp_numbers(data)
            if nums:
                width = max(len(r) for r in nums)
                if width not in (3, 4) or any(len(r) != width for r in nums):
                    raise MeshImportError(f"{fname}, line {no}: *NODE data must be 'id, x, y[, z]' on every line.")
                arr = np.array(nums, dtype=float)
                if width == 3:
                    arr = np.column_stack([arr, np.zeros(len(arr))])
                node_chunks.append(arr)
                if params.get("NSET"):
                    nset_defs.append((params["NSET"], {}, [["ids"] + list(arr[:, 0].astype(int))], where))
        elif keyword == "ELEMENT":
            etype = (params.get("TYPE") or "").upper()
            if not etype:
                raise MeshImportError(f"{fname}, line {no}: *ELEMENT without TYPE=.")
            if etype not in ABAQUS_TYPES:
                if etype.startswith("C3D"):
                    raise MeshImportError(
                        f"{fname}, line {no}: unsupported solid element type {etype}; supported: "
                        + ", ".join(sorted(t for t, m in ABAQUS_TYPES.items() if m in ELEMENTS))
                        + "."
                    )
                logger.info("%s, line %d: element type %s ignored (not a solid or surface type)", fname, no, etype)
                continue
            ctype = ABAQUS_TYPES[etype]
            k = _MESHIO_NODES[ctype]
            flat: list[int] = []
            for r in _inp_numbers(data, int):
                flat += r
            if len(flat) % (k + 1):
                raise MeshImportError(
                    f"{fname}, line {no}: *ELEMENT, TYPE={etype} data has {len(flat)} numbers, not a multiple of "
                    f"{k + 1} (id + {k} nodes): the file is truncated or the element lines are malformed."
                )
            arr = np.array(flat, dtype=np.int64).reshape(-1, k + 1)
            elem_blocks.append((ctype, arr[:, 0], arr[:, 1:], params.get("ELSET"), where))
        elif keyword in ("NSET", "ELSET"):
            name = params.get(keyword)
            if not name:
                raise MeshImportError(f"{fname}, line {no}: *{keyword} without {keyword}=.")
            items = []
            for _, lno, s in data:
                toks = [t.strip() for t in s.rstrip(",").split(",") if t.strip()]
                if "GENERATE" in params:
                    try:
                        a, b, *c = (int(t) for t in toks)
                    except ValueError as exc:
                        raise MeshImportError(f"{fname}, line {lno}: GENERATE expects 'first, last[, step]'.") from exc
                    items.append(["ids"] + list(range(a, b + 1, c[0] if c else 1)))
                else:
                    ids = [t for t in toks if t.lstrip("-").isdigit()]
                    names = [t for t in toks if not t.lstrip("-").isdigit()]
                    items.append(["ids"] + [int(t) for t in ids])
                    items.append(["names"] + names)
            (nset_defs if keyword == "NSET" else elset_defs).append((name, params, items, where))
        elif keyword == "MATERIAL":
            current_material = params.get("NAME")
            if not current_material:
                raise MeshImportError(f"{fname}, line {no}: *MATERIAL without NAME=.")
            materials_raw[current_material.upper()] = {"name": current_material}
        elif keyword in ("ELASTIC", "DENSITY"):
            if current_material is None:
                raise MeshImportError(f"{fname}, line {no}: *{keyword} outside a *MATERIAL block.")
            if keyword == "ELASTIC" and (params.get("TYPE") or "ISOTROPIC").upper() != "ISOTROPIC":
                raise MeshImportError(
                    f"{fname}, line {no}: *ELASTIC, TYPE={params['TYPE']} in material {current_material!r}: only "
                    "isotropic elasticity is supported."
                )
            nums = _inp_numbers(data[:1])
            need = 2 if keyword == "ELASTIC" else 1
            if not nums or len(nums[0]) < need:
                raise MeshImportError(f"{fname}, line {no}: *{keyword} needs {need} value(s) on its data line.")
            if len(data) > 1:
                logger.info("%s, line %d: temperature-dependent *%s: first line used", fname, no, keyword)
            materials_raw[current_material.upper()][keyword] = nums[0][:need]
        elif keyword == "SOLID SECTION":
            if not params.get("ELSET") or not params.get("MATERIAL"):
                raise MeshImportError(f"{fname}, line {no}: *SOLID SECTION needs ELSET= and MATERIAL=.")
            sections.append((params["ELSET"], params["MATERIAL"], where))
        elif keyword == "PART":
            n_parts += 1
            if n_parts > 1:
                raise MeshImportError(
                    f"{fname}, line {no}: several *PART definitions; only flat inputs are supported "
                    "(export the assembly as a flattened input file)."
                )
        elif keyword not in ("HEADING", "END PART", "ASSEMBLY", "END ASSEMBLY", "INSTANCE", "END INSTANCE"):
            current_material = current_material if keyword in ("EXPANSION", "DAMPING", "PLASTIC") else None

    if not node_chunks:
        raise MeshImportError(f"{path.name}: no *NODE data found; is this an Abaqus input file?")
    nodes = np.vstack(node_chunks)
    node_ids = nodes[:, 0].astype(np.int64)
    order = np.argsort(node_ids, kind="stable")
    sorted_ids = node_ids[order]
    if np.any(np.diff(sorted_ids) == 0):
        dup = sorted_ids[1:][np.diff(sorted_ids) == 0]
        raise MeshImportError(f"{path.name}: node id(s) defined twice: {_format_ids(dup)}.")

    def node_index(ids: NDArray[np.int64], what: str) -> NDArray[np.int64]:
        pos = np.searchsorted(sorted_ids, ids)
        pos = np.clip(pos, 0, len(sorted_ids) - 1)
        bad = sorted_ids[pos] != ids
        if np.any(bad):
            raise MeshImportError(f"{path.name}: {what} names undefined node id(s) {_format_ids(np.asarray(ids)[bad])}.")
        return order[pos]

    blocks = []
    for ctype, eids, conn_ids, _, (fname, no) in elem_blocks:
        blocks.append((ctype, node_index(conn_ids.ravel(), f"*ELEMENT at {fname} line {no}").reshape(conn_ids.shape), eids))
    # element id -> (block, row)
    if blocks:
        all_eids = np.concatenate([b[2] for b in blocks])
        all_block = np.concatenate([np.full(len(b[2]), i) for i, b in enumerate(blocks)])
        all_row = np.concatenate([np.arange(len(b[2])) for b in blocks])
    else:
        all_eids = all_block = all_row = np.zeros(0, dtype=np.int64)
    e_order = np.argsort(all_eids, kind="stable")
    e_sorted = all_eids[e_order]
    if np.any(np.diff(e_sorted) == 0):
        raise MeshImportError(f"{path.name}: element id(s) defined twice: {_format_ids(e_sorted[1:][np.diff(e_sorted) == 0])}.")

    upper_elsets: dict[str, str] = {}
    block_sets: dict[str, list[tuple[int, NDArray[np.int64]]]] = {}
    for i, (_, _, _, elset, _) in enumerate(elem_blocks):
        if elset:
            name = upper_elsets.setdefault(elset.upper(), elset)
            block_sets.setdefault(name, []).append((i, np.arange(len(blocks[i][2]))))
    for name, _, items, (fname, no) in elset_defs:
        name = upper_elsets.setdefault(name.upper(), name)
        members = block_sets.setdefault(name, [])
        for item in items:
            if item[0] == "ids" and len(item) > 1:
                ids = np.asarray(item[1:], dtype=np.int64)
                pos = np.clip(np.searchsorted(e_sorted, ids), 0, max(len(e_sorted) - 1, 0))
                bad = (e_sorted[pos] != ids) if len(e_sorted) else np.ones(ids.size, bool)
                if np.any(bad):
                    raise MeshImportError(
                        f"{fname}, line {no}: *ELSET {name!r} names undefined element id(s) {_format_ids(ids[bad])}."
                    )
                idx = e_order[pos]
                for b in np.unique(all_block[idx]):
                    members.append((int(b), all_row[idx[all_block[idx] == b]]))
            elif item[0] == "names":
                for ref in item[1:]:
                    key = upper_elsets.get(ref.upper())
                    if key is None or key not in block_sets:
                        raise MeshImportError(f"{fname}, line {no}: *ELSET {name!r} refers to unknown set {ref!r}.")
                    members.extend(block_sets[key])
    node_sets: dict[str, NDArray[np.int64]] = {}
    upper_nsets: dict[str, str] = {}
    for name, _, items, (fname, no) in nset_defs:
        name = upper_nsets.setdefault(name.upper(), name)
        parts = [node_sets.get(name, np.zeros(0, dtype=np.int64))]
        for item in items:
            if item[0] == "ids" and len(item) > 1:
                parts.append(node_index(np.asarray(item[1:], dtype=np.int64), f"*NSET {name!r} ({fname} line {no})"))
            elif item[0] == "names":
                for ref in item[1:]:
                    key = upper_nsets.get(ref.upper())
                    if key is None:
                        raise MeshImportError(f"{fname}, line {no}: *NSET {name!r} refers to unknown set {ref!r}.")
                    parts.append(node_sets[key])
        node_sets[name] = np.unique(np.concatenate(parts)).astype(np.int64)

    materials: dict[str, Material] = {}
    for elset, mat_name, (fname, no) in sections:
        raw_mat = materials_raw.get(mat_name.upper())
        if raw_mat is None:
            raise MeshImportError(
                f"{fname}, line {no}: *SOLID SECTION uses material {mat_name!r}, which no *MATERIAL defines "
                f"(defined: {sorted(m['name'] for m in materials_raw.values()) or 'none'})."
            )
        missing = [kw for kw in ("ELASTIC", "DENSITY") if kw not in raw_mat]
        if missing:
            raise MeshImportError(
                f"{fname}, line {no}: material {raw_mat['name']!r} has no *{' or *'.join(missing)}; add it to the input "
                "(flexmb needs E, nu and rho)."
            )
        set_name = upper_elsets.get(elset.upper())
        if set_name is None:
            raise MeshImportError(f"{fname}, line {no}: *SOLID SECTION refers to unknown element set {elset!r}.")
        e, nu = raw_mat["ELASTIC"]  # type: ignore[misc]
        (rho,) = raw_mat["DENSITY"]  # type: ignore[misc]
        try:
            materials[set_name] = Material(e, nu, rho, name=str(raw_mat["name"]))
        except ModelError as exc:
            raise MeshImportError(f"{fname}, line {no}: {exc}") from exc
    return RawMesh(nodes[:, 1:4].copy(), node_ids, blocks, node_sets, block_sets, materials)


# -------------------------------------------------------------------------------- Nastran .bdf


def _nastran_float(s: str) -> float:
    s = s.strip()
    if not s:
        return float("nan")
    try:
        return float(s)
    except ValueError:
        # Nastran exponent shorthand: 2.1+11, 7.8-9
        m = re.fullmatch(r"([+-]?[0-9.]+)([+-][0-9]+)", s)
        if m is None:
            raise
        return float(f"{m.group(1)}e{m.group(2)}")


def _nastran_cards(path: Path, names: tuple[str, ...]) -> list[tuple[str, int, list[str]]]:
    """First fields of the named bulk cards (free, small- or large-field format).

    Returns (card, line number, fields after the card name); large-field cards include the fields
    of their first continuation line.
    """
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    for i, line in enumerate(lines):
        head = line[:8].split(",")[0].strip().upper()
        name = head.rstrip("*")
        if name not in names:
            continue
        text = line.rstrip("\n")
        if "," in text:
            fields = [t.strip() for t in text.split(",")[1:]]
        elif head.endswith("*"):
            body = text[8:72]
            fields = [body[j : j + 16].strip() for j in range(0, len(body), 16)]
            if i + 1 < len(lines) and lines[i + 1][:1] in ("*", "+"):
                body2 = lines[i + 1].rstrip("\n")[8:72]
                fields += [body2[j : j + 16].strip() for j in range(0, len(body2), 16)]
        else:
            body = text[8:72]
            fields = [body[j : j + 8].strip() for j in range(0, len(body), 8)]
        out.append((name, i + 1, fields))
    return out


def _read_nastran(path: Path) -> RawMesh:
    """Nastran bulk data: GRID and CTETRA/CHEXA/CPENTA/CPYRA via meshio; MAT1 and PSOLID parsed here.

    Every property id becomes an element set ``PID<n>`` (its solid cells) carrying the MAT1
    material of that PSOLID.
    """
    m = _read_meshio(path, "nastran")
    blocks = []
    refs = m.cell_data.get("nastran:ref")
    for b, cb in enumerate(m.cells):
        blocks.append((cb.type, np.asarray(cb.data, dtype=np.int64), np.asarray(m.cells_id[b], dtype=np.int64)))
    block_sets: dict[str, list[tuple[int, NDArray[np.int64]]]] = {}
    if refs is not None:
        for b, r in enumerate(refs):
            r = np.asarray(r).ravel()
            for pid in np.unique(r):
                block_sets.setdefault(f"PID{int(pid)}", []).append((b, np.flatnonzero(r == pid)))
    mats: dict[int, Material] = {}
    psolid: dict[int, int] = {}
    for card, no, fields in _nastran_cards(path, ("MAT1", "PSOLID")):
        f = fields + [""] * 6
        try:
            if card == "MAT1":
                mid = int(f[0])
                e, g, nu, rho = (_nastran_float(v) for v in f[1:5])
                if np.isnan(e) and not np.isnan(g) and not np.isnan(nu):
                    e = 2.0 * g * (1.0 + nu)
                if np.isnan(nu) and not np.isnan(g) and not np.isnan(e):
                    nu = e / (2.0 * g) - 1.0
                if np.isnan(rho):
                    raise MeshImportError(f"{path.name}, line {no}: MAT1 {mid} has no density RHO (field 6); add it.")
                mats[mid] = Material(e, nu, rho, name=f"MAT1 {mid}")
            else:
                psolid[int(f[0])] = int(f[1])
        except (ValueError, IndexError) as exc:
            raise MeshImportError(f"{path.name}, line {no}: cannot read {card} card: {fields[:6]} ({exc}).") from exc
        except ModelError as exc:
            raise MeshImportError(f"{path.name}, line {no}: {exc}") from exc
    materials: dict[str, Material] = {}
    for pid, mid in psolid.items():
        name = f"PID{pid}"
        if name not in block_sets:
            continue
        if mid not in mats:
            raise MeshImportError(f"{path.name}: PSOLID {pid} uses material {mid}, which no MAT1 card defines.")
        materials[name] = mats[mid]
    return RawMesh(
        np.asarray(m.points, float), np.asarray(m.points_id, dtype=np.int64), blocks, {}, block_sets, materials
    )


register_reader([".msh"], _read_gmsh)
register_reader([".inp"], _read_abaqus)
register_reader([".bdf", ".nas", ".fem", ".dat"], _read_nastran)
register_reader([".vtu", ".vtk"], _read_vtk_like)
register_reader([".med"], _read_med)


# ============================================================================================
# checks
# ============================================================================================


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


# ============================================================================================
# structured meshes (tests, examples, benchmarks)
# ============================================================================================

# splits of the unit hexahedron (VTK corner order) into positively oriented sub-cells
# two 5-tetrahedra splits with all face diagonals flipped, used in a checkerboard so faces match
_HEX_TO_TETS_EVEN = np.array([[1, 3, 4, 6], [0, 1, 3, 4], [2, 3, 1, 6], [5, 4, 6, 1], [7, 6, 4, 3]])
_HEX_TO_TETS_ODD = np.array([[0, 2, 5, 7], [1, 0, 2, 5], [3, 0, 2, 7], [4, 0, 5, 7], [6, 2, 5, 7]])
_HEX_TO_WEDGES = np.array([[0, 1, 3, 4, 5, 7], [1, 2, 3, 5, 6, 7]])
_HEX_FACES = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]])


def quadratic_from_linear(
    points: NDArray[np.float64], conn: NDArray[np.int64], cell_type: str
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Add straight mid-edge nodes: tetra -> tetra10, hexahedron -> hexahedron20.

    Returns
    -------
    points : ndarray, shape (n_nodes + n_edges, 3)
    conn : ndarray, shape (n_cells, 10 or 20)
    """
    target = {"tetra": "tetra10", "hexahedron": "hexahedron20"}[cell_type]
    edges = np.array(ELEMENTS[target].edges)
    pairs = np.sort(conn[:, edges], axis=2).reshape(-1, 2)  # (n*E, 2)
    uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
    mid = 0.5 * (points[uniq[:, 0]] + points[uniq[:, 1]])
    new_conn = np.hstack([conn, len(points) + inverse.reshape(len(conn), -1)])
    return np.vstack([points, mid]), new_conn


def structured_box(
    lengths: ArrayLike = (1.0, 1.0, 1.0),
    divisions: ArrayLike = (1, 1, 1),
    cell_type: str = "hexahedron",
    *,
    origin: ArrayLike = (0.0, 0.0, 0.0),
    material: Material | None = None,
) -> FEMesh:
    """A structured mesh of the box origin + [0, Lx] x [0, Ly] x [0, Lz].

    Each of the nx*ny*nz hexahedra is kept (``hexahedron``, ``hexahedron20``) or split into five
    tetrahedra (``tetra``, ``tetra10``), two wedges (``wedge``) or six pyramids around its centre
    (``pyramid``). Quadratic types get straight mid-edge nodes. Node sets: ``xmin``, ``xmax``,
    ``ymin``, ``ymax``, ``zmin``, ``zmax`` (the six faces). Element set ``all``.
    """
    lx, ly, lz = (float(v) for v in lengths)
    nx, ny, nz = (int(v) for v in divisions)
    if min(nx, ny, nz) < 1 or min(lx, ly, lz) <= 0:
        raise ModelError(f"structured_box: lengths {lengths} must be > 0 and divisions {divisions} >= 1.")
    x, y, z = np.meshgrid(np.linspace(0, lx, nx + 1), np.linspace(0, ly, ny + 1), np.linspace(0, lz, nz + 1), indexing="ij")
    points = np.column_stack([x.ravel(), y.ravel(), z.ravel()]) + np.asarray(origin, float)
    nid = np.arange(points.shape[0]).reshape(nx + 1, ny + 1, nz + 1)
    i, j, k = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"))
    hexes = np.column_stack(
        [nid[i, j, k], nid[i + 1, j, k], nid[i + 1, j + 1, k], nid[i, j + 1, k],
         nid[i, j, k + 1], nid[i + 1, j, k + 1], nid[i + 1, j + 1, k + 1], nid[i, j + 1, k + 1]]
    )
    if cell_type in ("hexahedron", "hexahedron20"):
        conn = hexes
    elif cell_type in ("tetra", "tetra10"):
        # alternate the 5-tet split in a checkerboard so that faces of neighbours match
        even = ((i + j + k) % 2 == 0)[:, None, None]
        conn = np.where(even, hexes[:, _HEX_TO_TETS_EVEN], hexes[:, _HEX_TO_TETS_ODD]).reshape(-1, 4)
        d = points[conn[:, 1:]] - points[conn[:, :1]]
        flip = np.einsum("ni,ni->n", np.cross(d[:, 0], d[:, 1]), d[:, 2]) < 0
        conn[flip] = conn[flip][:, [0, 2, 1, 3]]
    elif cell_type == "wedge":
        conn = hexes[:, _HEX_TO_WEDGES].reshape(-1, 6)
    elif cell_type == "pyramid":
        centers = points[hexes].mean(axis=1)
        cid = points.shape[0] + np.arange(len(hexes))
        points = np.vstack([points, centers])
        faces = hexes[:, _HEX_FACES[:, ::-1]]  # (n, 6, 4), right-hand normal towards the centre
        conn = np.concatenate([faces, np.broadcast_to(cid[:, None, None], (len(hexes), 6, 1))], axis=2).reshape(-1, 5)
    else:
        raise ModelError(f"structured_box: cell_type {cell_type!r} not supported; use one of {sorted(ELEMENTS)}.")
    if cell_type in ("tetra10", "hexahedron20"):
        points, conn = quadratic_from_linear(points, conn, cell_type.rstrip("0123456789"))
    lo = np.asarray(origin, float)
    hi = lo + (lx, ly, lz)
    tol = 1e-9 * max(lx, ly, lz)
    node_sets = {}
    for axis, name in enumerate("xyz"):
        node_sets[f"{name}min"] = np.flatnonzero(np.abs(points[:, axis] - lo[axis]) <= tol)
        node_sets[f"{name}max"] = np.flatnonzero(np.abs(points[:, axis] - hi[axis]) <= tol)
    return FEMesh(
        points=points,
        cells={cell_type: conn},
        node_sets=node_sets,
        element_sets={"all": {cell_type: np.arange(len(conn))}},
        materials={"*": material} if material is not None else {},
        units="SI",
    )
