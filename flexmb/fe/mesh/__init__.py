"""FE model input: the mesh values (:mod:`.femesh`: :class:`FEMesh`, :class:`Material`,
:class:`RawMesh`; :mod:`.unassembled`: what a file holds that is not assembled), reading files (:mod:`.readers`, the reader registry, with the format parsers
:mod:`.meshio_formats` for Gmsh, VTK and MED, :mod:`.abaqus`, :mod:`.nastran`, and :mod:`.integrity`
for files cut short), exported matrices (:mod:`.matrices`), mesh checks (:mod:`.checks`) and
structured meshes (:mod:`.structured`: boxes, plates, lines), writing meshes (:mod:`.writers`).

The value types are imported here; the names of the modules that build on them (``read_mesh``,
``check_mesh``, ``structured_box``, ...) load on first access (PEP 562, :data:`_REEXPORTS`), so that
``import flexmb.fe.mesh`` stays light and ``from flexmb.fe.mesh import read_mesh`` keeps working.
"""
from __future__ import annotations

from flexmb.fe.mesh.femesh import SOLID_PREFIXES, FEMesh, Material
from flexmb.fe.mesh.raw import RawMesh
from flexmb.fe.mesh.sections import BeamSection, PointMass, PointMasses, ShellSection, Springs
from flexmb.fe.mesh.unassembled import Unassembled
from flexmb.reexport import lazy_attributes

__all__ = ["BeamSection", "FEMesh", "Material", "PointMass", "PointMasses", "RawMesh", "SOLID_PREFIXES", "ShellSection",
           "Springs", "Unassembled"]

#: name -> module that defines it (loaded on first access; those modules import :mod:`.femesh`)
_REEXPORTS: dict[str, str] = {
    "READERS": "flexmb.fe.mesh.readers",
    "read_mesh": "flexmb.fe.mesh.readers",
    "register_reader": "flexmb.fe.mesh.readers",
    "check_mesh": "flexmb.fe.mesh.checks",
    "connected_components": "flexmb.fe.mesh.checks",
    "plausibility": "flexmb.fe.mesh.checks",
    "quadratic_from_linear": "flexmb.fe.mesh.structured",
    "structured_box": "flexmb.fe.mesh.structured",
    "structured_line": "flexmb.fe.mesh.structured",
    "structured_plate": "flexmb.fe.mesh.structured",
    "ABAQUS_TYPES": "flexmb.fe.mesh.abaqus",
    "write_mesh": "flexmb.fe.mesh.writers",
    "_med_to_vtk": "flexmb.fe.mesh.meshio_formats",
}

__getattr__, __dir__ = lazy_attributes(__name__, _REEXPORTS, globals())
