"""What a mesh reader returns (:class:`RawMesh`): every cell block of the file with its sets, the
materials, sections and lumped elements the file defines; :func:`flexmb.fe.mesh.readers.read_mesh`
turns it into an :class:`~flexmb.fe.mesh.FEMesh`."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from flexmb.fe.mesh.femesh import Material
from flexmb.fe.mesh.sections import PointMasses, Springs
from flexmb.fe.mesh.unassembled import Unassembled

__all__ = ["RawMesh"]


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
    dedupe : bool
        Merge duplicate solid cells (Gmsh v2 writes an element once per physical group).
    unassembled : list of Unassembled or None
        What the file holds that is not assembled, by the reader that knows the file's element
        types (Abaqus, Nastran); None: decided from the geometry of the lower-dimensional blocks
        (Gmsh, VTK, MED: :func:`flexmb.fe.mesh.unassembled.off_solid`).
    sections : dict of str to ShellSection or BeamSection
        Element set -> section, from the file (``*SHELL SECTION``, ``*BEAM SECTION``, PSHELL, PBAR).
    block_data : dict of int to dict of str to ndarray
        Per-row values of a block (Nastran ZOFFS, CBAR orientation and offsets): the fields of
        ``FEMesh.element_data``.
    point_masses, springs : PointMasses, Springs or None
        Lumped elements of the file (0-based node indices).

    Blocks of the shells and beams a typed format assembles are named ``"shell:quad"``,
    ``"shell:triangle"``, ``"beam:line"``; plain ``"quad"``, ``"triangle"``, ``"line"`` and
    ``"vertex"`` blocks (Gmsh, VTK, MED) become shells, beams and point masses where their element
    sets have a section of that kind (``read_mesh(..., sections=...)``).
    """

    points: NDArray[np.float64]
    node_ids: NDArray[np.int64]
    blocks: list[tuple[str, NDArray[np.int64], NDArray[np.int64]]]
    node_sets: dict[str, NDArray[np.int64]] = field(default_factory=dict)
    block_sets: dict[str, list[tuple[int, NDArray[np.int64]]]] = field(default_factory=dict)
    materials: dict[str, Material] = field(default_factory=dict)
    units: str | None = None
    dedupe: bool = False
    unassembled: list[Unassembled] | None = None
    sections: dict = field(default_factory=dict)
    block_data: dict[int, dict[str, NDArray[np.float64]]] = field(default_factory=dict)
    point_masses: PointMasses | None = None
    springs: Springs | None = None
