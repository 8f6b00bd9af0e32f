"""FE meshes: the values only (:class:`FEMesh`, :class:`Material`; :class:`~flexmb.fe.mesh.raw.RawMesh`,
what a reader returns, is in :mod:`flexmb.fe.mesh.raw`).

Reading files is :mod:`flexmb.fe.mesh.readers` (:func:`~flexmb.fe.mesh.readers.read_mesh`, the reader
registry); the format parsers are :mod:`flexmb.fe.mesh.meshio_formats` (Gmsh, VTK, MED through meshio),
:mod:`flexmb.fe.mesh.abaqus` and :mod:`flexmb.fe.mesh.nastran`; the checks :mod:`flexmb.fe.mesh.checks`;
structured box meshes :mod:`flexmb.fe.mesh.structured`. Those modules import this one, never the
reverse, so there is no import cycle; the package :mod:`flexmb.fe.mesh` re-exports their public names.

Units: flexmb is unit-agnostic; a mesh and its materials must use one consistent system (SI: m, kg,
s, N, Pa is what the shipped meshes use). ``FEMesh.units`` is a label only; nothing is converted.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.elements.dofs import DofMap
from flexmb.fe.elements.solid import ELEMENTS, get_element, isoparametric_map
from flexmb.fe.mesh import structural
from flexmb.fe.mesh.sections import BeamSection, PointMasses, ShellSection, Springs
from flexmb.fe.mesh.unassembled import Unassembled

__all__ = ["FEMesh", "Material", "SOLID_FORMULATIONS", "SOLID_PREFIXES"]

logger = logging.getLogger(__name__)

#: solid cell types with a choice of formulation: type -> names, the default first
SOLID_FORMULATIONS: dict[str, tuple[str, ...]] = {
    "hexahedron": ("incompatible", "plain"),
    "wedge": ("incompatible", "plain"),
}

#: meshio cell-type name prefixes of three-dimensional (solid) cells
SOLID_PREFIXES = ("tetra", "hexahedron", "wedge", "pyramid", "polyhedron")


def is_solid_cell(cell_type: str) -> bool:
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
        if not isinstance(self.name, str):
            raise ModelError(f"Material: name={self.name!r} must be a string (a label for messages), e.g. 'steel'.")
        for attr in ("E", "nu", "rho"):
            value = getattr(self, attr)
            if not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value):
                raise ModelError(f"Material {self.name!r}: `{attr}` = {value!r} is not a finite number; give a plain "
                                 "number in the mesh's unit system (SI: E in Pa, rho in kg/m^3).")
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


def _materials_dict(materials: Material | Mapping[str, Material], where: str) -> dict[str, Material]:
    """A Material or a mapping of element-set name -> Material as a dict ("*" = the whole mesh)."""
    if isinstance(materials, Material):
        return {"*": materials}
    if isinstance(materials, Mapping) and all(isinstance(k, str) for k in materials):
        return dict(materials)
    raise ModelError(
        f"{where}: materials={materials!r} ({type(materials).__name__}) is not a material; give "
        "Material(E, nu, rho) for the whole mesh or a dict {element set name: Material} ('*' = whole mesh)."
    )


def as_index_array(idx: ArrayLike) -> NDArray[np.int64]:
    return np.asarray(idx, dtype=np.int64).reshape(-1)


def _point(name: str, value: ArrayLike, where: str) -> NDArray[np.float64]:
    """``value`` as a finite (3,) vector, else a ModelError naming ``where`` and ``name``."""
    try:
        a = None if isinstance(value, (str, bytes)) else np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"FEMesh.{where}: {name}={value!r} must be three finite numbers (x, y, z); give e.g. (0, 0, 1).")
    return a


def _length(name: str, value: float, where: str) -> float:
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value < 0:
        raise ModelError(f"FEMesh.{where}: {name}={value!r} must be a finite length >= 0 (mesh units).")
    return float(value)


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
    unassembled : tuple of Unassembled
        What the file held that flexmb does not assemble (shells, beams, point masses, springs,
        connectors, rigid elements, constraints), by type with counts and ids
        (:mod:`flexmb.fe.mesh.unassembled`); empty for a complete solid model.
        :func:`~flexmb.fe.reduction.body_data.build_flexible_body` refuses a mesh with structural
        entries unless ``allow_unassembled=True``.
    formulations : dict of str to str
        Element formulation per solid cell type where it differs from the default
        (:data:`SOLID_FORMULATIONS`): ``{"hexahedron": "plain"}`` assembles fully integrated trilinear
        hexahedra without incompatible modes (they lock in bending); see :meth:`with_formulation`.
    shells : dict of str to ndarray, shape (n, 3 or 4)
        Shell cells, ``"triangle"`` (MITC3) and ``"quad"`` (MITC4), 0-based nodes; ids in
        ``cell_ids``, rows in ``element_sets`` like solid cells.
    beams : dict of str to ndarray, shape (n, 2)
        Beam cells, ``"line"`` (2-node Timoshenko).
    sections : dict of str to ShellSection or BeamSection
        Element set -> section of its shell or beam cells (``"*"``: every cell of that kind not in
        a named set); see :mod:`flexmb.fe.mesh.structural`.
    element_data : dict of str to dict of str to ndarray
        Per-element overrides of section values (NaN: not given), :mod:`flexmb.fe.mesh.structural`.
    point_masses : PointMasses or None
        Lumped masses and rotary inertias at nodes.
    springs : Springs or None
        Linear springs between nodes or to ground.

    Degrees of freedom: :attr:`dof_map`. Node-major ``[ux0, uy0, uz0, ux1, ...]`` (3 per node) for a
    model of solid cells (and translational masses and springs); nodes of shells and beams carry
    three rotations after their translations (:mod:`flexmb.fe.elements.dofs`).
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
    unassembled: tuple[Unassembled, ...] = ()
    formulations: dict[str, str] = field(default_factory=dict)
    shells: dict[str, NDArray[np.int64]] = field(default_factory=dict)
    beams: dict[str, NDArray[np.int64]] = field(default_factory=dict)
    sections: dict[str, ShellSection | BeamSection] = field(default_factory=dict)
    element_data: dict[str, dict[str, NDArray[np.float64]]] = field(default_factory=dict)
    point_masses: PointMasses | None = None
    springs: Springs | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.cells, Mapping):
            raise ModelError(f"FEMesh: `cells` must be a dict {{meshio cell type: (n_cells, k) node indices}}, got "
                             f"{type(self.cells).__name__}.")
        try:
            np.asarray(self.points, dtype=float)
            for c in self.cells.values():
                np.asarray(c, dtype=np.int64)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"FEMesh: `points` must be numbers of shape (n_nodes, 3) and `cells` integer node indices "
                             f"({exc}).") from None
        entries = tuple(self.unassembled)
        if not all(isinstance(e, Unassembled) for e in entries):
            raise ModelError("FEMesh: `unassembled` must hold flexmb.fe.mesh.unassembled.Unassembled entries.")
        object.__setattr__(self, "unassembled", entries)
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
        checked = structural.check_structural(len(pts), self.shells, self.beams, self.sections, self.element_data,
                                              self.point_masses, self.springs)
        for name, value in zip(("shells", "beams", "sections", "element_data", "point_masses", "springs"), checked):
            object.__setattr__(self, name, value)
        ids = {t: np.asarray(self.cell_ids.get(t, np.arange(1, len(c) + 1)), dtype=np.int64)
               for t, c in {**cells, **self.shells, **self.beams}.items()}
        object.__setattr__(self, "cell_ids", ids)
        nid = np.arange(1, len(pts) + 1) if self.node_ids is None else np.asarray(self.node_ids, dtype=np.int64)
        object.__setattr__(self, "node_ids", nid)
        object.__setattr__(self, "node_sets", {k: as_index_array(v) for k, v in self.node_sets.items()})
        object.__setattr__(
            self,
            "element_sets",
            {k: {t: as_index_array(r) for t, r in v.items()} for k, v in self.element_sets.items()},
        )
        object.__setattr__(self, "materials", dict(self.materials))
        forms = dict(self.formulations)
        for t, name in forms.items():
            allowed = SOLID_FORMULATIONS.get(t)
            if allowed is None or name not in allowed:
                raise ModelError(
                    f"FEMesh: formulations[{t!r}] = {name!r} is not available; choose from "
                    + "; ".join(f"{k}: {', '.join(v)}" for k, v in SOLID_FORMULATIONS.items()) + "."
                )
        object.__setattr__(self, "formulations", forms)

    # ---------------------------------------------------------------- sizes
    @property
    def n_nodes(self) -> int:
        return int(self.points.shape[0])

    @property
    def n_dofs(self) -> int:
        """Number of DOFs: 3 * n_nodes for a model without rotations, else ``dof_map.n_dofs``."""
        return self.dof_map.n_dofs

    @cached_property
    def dof_map(self) -> DofMap:
        """The DOF map: 6 DOFs at the nodes of shells and beams, 3 elsewhere."""
        rot = [c.ravel() for c in (*self.shells.values(), *self.beams.values())]
        return DofMap.with_rotations(self.n_nodes, np.concatenate(rot) if rot else np.zeros(0, dtype=np.int64))

    @property
    def has_structural(self) -> bool:
        """Whether the mesh holds shells, beams, point masses or springs (not only solid cells)."""
        return bool(self.shells or self.beams or self.point_masses is not None or self.springs is not None)

    @property
    def n_cells(self) -> int:
        return int(sum(len(c) for c in self.cells.values()))

    # ---------------------------------------------------------------- node queries (vectorized)
    def nodes_in_box(self, lo: ArrayLike, hi: ArrayLike) -> NDArray[np.int64]:
        """Indices of the nodes with lo <= x <= hi component-wise (lo, hi: shape (3,), m)."""
        lo_, hi_ = _point("lo", lo, "nodes_in_box"), _point("hi", hi, "nodes_in_box")
        return np.flatnonzero(np.all((self.points >= lo_) & (self.points <= hi_), axis=1))

    def nodes_on_plane(self, point: ArrayLike, normal: ArrayLike, tol: float = 1e-9) -> NDArray[np.int64]:
        """Indices of the nodes within distance ``tol`` (m) of the plane through ``point`` with ``normal``."""
        n = _point("normal", normal, "nodes_on_plane")
        if not np.linalg.norm(n) > 0:
            raise ModelError("FEMesh.nodes_on_plane: normal=(0, 0, 0) has no direction; give the plane's normal vector.")
        n = n / np.linalg.norm(n)
        d = (self.points - _point("point", point, "nodes_on_plane")) @ n
        tol = _length("tol", tol, "nodes_on_plane")
        return np.flatnonzero(np.abs(d) <= tol)

    def nodes_within(self, center: ArrayLike, radius: float) -> NDArray[np.int64]:
        """Indices of the nodes within ``radius`` (m) of ``center`` (3,)."""
        d2 = ((self.points - _point("center", center, "nodes_within")) ** 2).sum(axis=1)
        radius = _length("radius", radius, "nodes_within")
        return np.flatnonzero(d2 <= radius * radius)

    def used_nodes(self) -> NDArray[np.int64]:
        """Sorted indices of the nodes used by at least one element (solid, shell, beam, point mass
        or spring)."""
        parts = [c.ravel() for c in (*self.cells.values(), *self.shells.values(), *self.beams.values())]
        if self.point_masses is not None:
            parts.append(self.point_masses.nodes)
        if self.springs is not None:
            parts.append(self.springs.nodes[self.springs.nodes >= 0])
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(parts))

    def formulation(self, cell_type: str) -> str:
        """Formulation used for ``cell_type``: the mesh's choice or the default (first of
        :data:`SOLID_FORMULATIONS`; "standard" for types with one formulation)."""
        return self.formulations.get(cell_type, SOLID_FORMULATIONS.get(cell_type, ("standard",))[0])

    # ---------------------------------------------------------------- transformations
    def with_formulation(self, cell_type: str, name: str) -> FEMesh:
        """A new mesh that assembles ``cell_type`` with formulation ``name``.

        ``"hexahedron"`` and ``"wedge"``: ``"incompatible"`` (the default: incompatible modes condensed
        per element, locking-free in bending, :mod:`flexmb.fe.elements.incompatible`) or ``"plain"``
        (the fully integrated compatible element, which locks in bending: a one-layer hex8 plate is
        about three times too stiff).
        """
        return replace(self, formulations={**self.formulations, cell_type: name})

    def with_node_set(self, name: str, idx: ArrayLike) -> FEMesh:
        """A new mesh with node set ``name`` = ``idx`` (0-based node indices) added or replaced."""
        if not isinstance(name, str) or not name:
            raise ModelError(f"with_node_set: name={name!r} must be a non-empty string.")
        a = None if isinstance(idx, (str, bytes)) else np.asarray(idx)
        if a is None or (a.size and a.dtype.kind not in "iu"):
            raise ModelError(f"node set {name!r}: idx={idx!r} must be 0-based integer node indices (e.g. "
                             "mesh.nodes_within(center, radius)).")
        idx_ = np.unique(as_index_array(a))
        if idx_.size and (idx_[0] < 0 or idx_[-1] >= self.n_nodes):
            raise ModelError(
                f"node set {name!r}: index {int(idx_[-1] if idx_[-1] >= self.n_nodes else idx_[0])} "
                f"is outside 0..{self.n_nodes - 1}; pass 0-based node indices (see FEMesh.node_ids for ids)."
            )
        return replace(self, node_sets={**self.node_sets, name: idx_})

    def with_material(self, material: Material, element_set: str = "*") -> FEMesh:
        """A new mesh with ``material`` assigned to ``element_set`` ("*" = whole mesh).

        Override rule (also for :func:`read_mesh` ``materials=``, ``build_flexible_body(materials=)``
        and ``flexmb info/modes --material``): ``"*"`` replaces *every* material the mesh has,
        including those a file assigns to element sets (Abaqus ``*SOLID SECTION``, Nastran
        ``PSOLID``), so the whole mesh gets ``material``; a named set replaces that set's material
        only and takes precedence over ``"*"``.
        """
        return self.with_materials({element_set: material})

    def with_materials(self, materials: Material | Mapping[str, Material]) -> FEMesh:
        """A new mesh with ``materials`` (a Material for the whole mesh, or set name -> Material)
        overriding the mesh's own by the rule of :meth:`with_material`: a ``"*"`` entry first
        replaces all existing materials, then named sets are assigned."""
        given = _materials_dict(materials, "with_materials")
        for name, material in given.items():
            if not isinstance(material, Material):
                raise ModelError(
                    f"materials[{name!r}]: expected a Material, got {type(material).__name__} "
                    "(use Material(E, nu, rho))."
                )
            if name != "*" and name not in self.element_sets:
                raise ModelError(
                    f"with_material: element set {name!r} does not exist; known sets: "
                    f"{sorted(self.element_sets) or 'none'} (use '*' for the whole mesh)."
                )
        base = {} if "*" in given else dict(self.materials)
        if "*" in given:
            base["*"] = given["*"]
        base.update({k: v for k, v in given.items() if k != "*"})
        return replace(self, materials=base)

    def translated(self, d: ArrayLike) -> FEMesh:
        """A new mesh with all points moved by ``d`` (3,) (m)."""
        return replace(self, points=self.points + _point("d", d, "translated"))

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
            **structural.renumbered(self, new_index),
        )

    def with_sections(self, sections: Mapping[str, ShellSection | BeamSection]) -> FEMesh:
        """A new mesh with ``sections`` (element set -> ShellSection or BeamSection, ``"*"`` for every
        shell or beam cell not in a named set) added to or replacing the mesh's own."""
        if not isinstance(sections, Mapping):
            raise ModelError(f"with_sections: sections={sections!r} must be a dict {{element set: section}}.")
        for name in sections:
            if name != "*" and name not in self.element_sets:
                raise ModelError(f"with_sections: element set {name!r} does not exist; known sets: "
                                 f"{sorted(self.element_sets) or 'none'} (use '*' for every shell or beam cell).")
        return replace(self, sections={**self.sections, **sections})

    def solid_only(self) -> FEMesh:
        """A new mesh of the solid cells alone: its shells, beams, point masses and springs are moved
        to :attr:`unassembled` (named with their counts), as :func:`read_mesh` did before flexmb
        assembled them. For bodies that must be built from the solid part of a mixed model."""
        return replace(self, **structural.solid_part(self))

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
        return self.element_materials(materials, blocks=self.cells, what="solid")

    def structural_materials(
        self, materials: Material | Mapping[str, Material] | None = None
    ) -> dict[str, NDArray[np.float64]]:
        """Material constants (E, nu, rho) of every shell and beam cell, by the rule of
        :meth:`cell_materials`: dict of cell type ("triangle", "quad", "line") to (n, 3)."""
        return self.element_materials(materials, blocks={**self.shells, **self.beams}, what="shell or beam")

    def element_materials(self, materials: Material | Mapping[str, Material] | None = None, *, blocks=None,
                          what: str = "solid, shell or beam", missing: str = "raise") -> dict[str, NDArray[np.float64]]:
        """(E, nu, rho) per cell of ``blocks`` (default: every solid, shell and beam type), by the rule
        of :meth:`cell_materials`; ``missing="nan"`` leaves NaN rows for cells without a material
        instead of raising."""
        if blocks is None:
            blocks = {**self.cells, **self.shells, **self.beams}
        mats = dict(self.materials) if materials is None else _materials_dict(materials, "materials")
        for name, mat in mats.items():
            if not isinstance(mat, Material):
                raise ModelError(f"materials[{name!r}] is a {type(mat).__name__}, expected a Material.")
            if name != "*" and name not in self.element_sets:
                raise ModelError(
                    f"materials: element set {name!r} does not exist in {self.source or 'the mesh'}; "
                    f"known sets: {sorted(self.element_sets) or 'none'} (use '*' for the whole mesh)."
                )
        out: dict[str, NDArray[np.float64]] = {}
        for t, conn in blocks.items():
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
        if missing == "nan":
            return out
        lacking = {t: np.flatnonzero(np.isnan(v[:, 0])) for t, v in out.items()}
        lacking = {t: r for t, r in lacking.items() if r.size}
        if lacking:
            n_missing = sum(r.size for r in lacking.values())
            sets = sorted(
                name
                for name, rows_by_type in self.element_sets.items()
                if any(np.intersect1d(rows_by_type.get(t, []), r).size for t, r in lacking.items())
            )
            ids = np.concatenate([self.cell_ids[t][r] for t, r in lacking.items()])
            where = f"element set(s) {', '.join(map(repr, sets))}" if sets else "no element set"
            raise ModelError(
                f"{n_missing} {what} element(s) of {self.source or 'the mesh'} have no material "
                f"({where}; element ids {format_ids(ids)}). Assign one with "
                "mesh.with_material(Material(E, nu, rho), element_set=...) or pass `materials=`."
            )
        return out

    # ---------------------------------------------------------------- summary
    def summary(self, materials: Material | Mapping[str, Material] | None = None) -> dict:
        """Plain-dict description (JSON-serializable) used by ``flexmb info``.

        Keys: source, checksum, units, n_nodes, n_dofs, n_unused_nodes, cells (type -> count),
        shells, beams (type -> count), point_masses, springs (counts),
        unassembled (list of {type, kind, count}: what the file held that is not assembled),
        node_sets (name -> size), element_sets (name -> size), bounding_box {lo, hi} (m),
        volume (m^3, solid cells), materials (set -> {E, nu, rho, name}), and mass (kg: solids,
        shells, beams, point masses) when every element has a material and section (else None).
        """
        lo, hi = self.bounding_box()
        vols = self.cell_volumes()
        mass = None
        mats = self.materials if materials is None else _materials_dict(materials, "summary")
        try:
            fields = self.cell_materials(mats) if mats and (self.cells or self.shells or self.beams) else None
            if fields is not None:
                mass = float(sum((vols[t] * fields[t][:, 2]).sum() for t in vols))
                mass += structural.structural_mass(self, mats)
        except ModelError:
            mass = None
        return {
            "source": self.source,
            "checksum": self.checksum,
            "units": self.units,
            "n_nodes": self.n_nodes,
            "n_dofs": self.n_dofs,
            "n_unused_nodes": int(self.n_nodes - self.used_nodes().size),
            "cells": {t: int(len(c)) for t, c in self.cells.items()},
            "shells": {t: int(len(c)) for t, c in self.shells.items()},
            "beams": {t: int(len(c)) for t, c in self.beams.items()},
            "point_masses": len(self.point_masses) if self.point_masses is not None else 0,
            "springs": len(self.springs) if self.springs is not None else 0,
            "unassembled": [e.as_dict() for e in self.unassembled],
            "node_sets": {k: int(v.size) for k, v in self.node_sets.items()},
            "element_sets": {k: int(sum(r.size for r in v.values())) for k, v in self.element_sets.items()},
            "bounding_box": {"lo": lo.tolist(), "hi": hi.tolist()},
            "volume": float(sum(v.sum() for v in vols.values())),
            "materials": {
                k: {"name": m.name, "E": m.E, "nu": m.nu, "rho": m.rho} for k, m in mats.items()
            },
            "mass": mass,
        }


def format_ids(ids: ArrayLike, limit: int = 10) -> str:
    ids = np.asarray(ids).ravel()
    shown = ", ".join(str(int(i)) for i in ids[:limit])
    return shown + (f", ... ({ids.size} in total)" if ids.size > limit else "")
