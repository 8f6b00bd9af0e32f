"""Reading a mesh file: the reader registry (:data:`READERS`, :func:`register_reader`),
:func:`read_mesh`, and the common step that turns a reader's :class:`~flexmb.fe.mesh.RawMesh` into
an :class:`~flexmb.fe.mesh.FEMesh`.

Units: flexmb is unit-agnostic; a mesh and its materials must use one consistent system (SI: m, kg,
s, N, Pa is what the shipped meshes use). ``FEMesh.units`` is a label only (from the ``units``
argument of :func:`read_mesh`); nothing is converted.

Readers are registered by file extension. Each reader returns a :class:`~flexmb.fe.mesh.RawMesh`
(all cell blocks, lower-dimensional ones included, with their sets); :func:`read_mesh` turns it
into an :class:`~flexmb.fe.mesh.FEMesh` (:mod:`flexmb.fe.mesh.finish`) of solid cells, shells,
beams, point masses and springs, derives node sets from every element set (solid, surface, line or
point cells), and records in ``FEMesh.unassembled`` (and logs at WARNING) every element it does not
assemble (:mod:`flexmb.fe.mesh.unassembled`). The built-in parsers live in
:mod:`flexmb.fe.mesh.meshio_formats` (Gmsh, VTK, MED), :mod:`flexmb.fe.mesh.abaqus` and
:mod:`flexmb.fe.mesh.nastran`; this module imports them, they import only the types of
:mod:`flexmb.fe.mesh`.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.mesh import abaqus, meshio_formats, nastran
from flexmb.fe.mesh.femesh import FEMesh, Material
from flexmb.fe.mesh.finish import finish
from flexmb.fe.mesh.sections import BeamSection, PointMass, ShellSection
from flexmb.fe.mesh.raw import RawMesh
from flexmb.fe.mesh.femesh import _materials_dict  # one rule for materials= (femesh's, shared by the readers)

__all__ = ["READERS", "read_mesh", "register_reader"]


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
    sections: Mapping[str, ShellSection | BeamSection | PointMass] | None = None,
) -> FEMesh:
    """Read an FE mesh: solid cells, shells, beams, point masses and springs.

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
        Remove the nodes that no element uses (default: keep them; :func:`check_mesh` warns).
    sections : dict of str to ShellSection, BeamSection or PointMass, optional
        Element set (physical group) -> section, added to and overriding the file's (Abaqus
        ``*SHELL SECTION``/``*BEAM SECTION``, Nastran PSHELL/PBAR/PBEAM). In Gmsh, VTK and MED files
        this is what makes the surface (line, point) cells of a set shells (beams, point masses);
        ``"*"`` gives every surface (line) cell that section.

    Returns
    -------
    FEMesh
        Solid cells, shells (``mesh.shells``), beams (``mesh.beams``), point masses and springs.
        Abaqus: C3D4/6/8/10/20 (and their H, I, R variants), S3/S3R/STRI3, S4/S4R/S4R5, B31/B31H/
        B33/B33H, MASS, ROTARYI, SPRING1/SPRING2/SPRINGA; Nastran: CTETRA/CPENTA/CHEXA/CPYRA,
        CQUAD4/CQUADR/CTRIA3/CTRIAR, CBAR/CBEAM, CONM2, CELAS1/CELAS2, CBUSH (details in
        :mod:`flexmb.fe.mesh.abaqus`, :mod:`flexmb.fe.mesh.nastran_structural`). Elements of the
        file that flexmb does not assemble (quadratic shells and beams, trusses, membranes, rods,
        dashpots, connectors, rigid elements, constraints; lower-dimensional Gmsh/VTK/MED cells
        without a section that are no face, edge or node of the assembled elements) are named with
        their counts in ``FEMesh.unassembled`` and in a WARNING of the log.

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
    if sections is not None and not (isinstance(sections, Mapping) and all(
            isinstance(k, str) and isinstance(v, (ShellSection, BeamSection, PointMass)) for k, v in sections.items())):
        raise ModelError(f"read_mesh: sections={sections!r} must be a dict {{element set: ShellSection, BeamSection "
                         "or PointMass}}.")
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
        mesh = finish(raw, path, units, None if sections is None else dict(sections))
    except MeshImportError:
        raise
    except ModelError as exc:  # inconsistent content found while building the FEMesh
        raise MeshImportError(f"{path.name}: {exc}") from exc
    if materials is not None:
        mesh = mesh.with_materials(materials)
    if drop_unused_nodes:
        mesh = mesh.compacted()
    return mesh


register_reader([".msh"], meshio_formats._read_gmsh)
register_reader([".inp"], abaqus._read_abaqus)
register_reader([".bdf", ".nas", ".fem", ".dat"], nastran._read_nastran)
register_reader([".vtu", ".vtk"], meshio_formats._read_vtk_like)
register_reader([".med"], meshio_formats._read_med)
