"""What a mesh file holds that flexmb does not assemble: the record (:class:`Unassembled`), the
classification of element types by format, and the refusal to build a body from a partial model
(and, for the paths that still assume 3 DOFs per node, from shells, beams, point masses and springs).

A reader names every element of its file that is not a supported solid cell, by the file's own
type name and a *kind* ("shell", "beam", "point mass", "spring", "connector", "rigid element",
"constraint", ...), with its count and element ids; :func:`flexmb.fe.mesh.read_mesh` stores the
entries in ``FEMesh.unassembled`` and logs them, ``flexmb info`` lists them, and
:func:`flexmb.fe.reduction.body_data.build_flexible_body` refuses such a mesh unless
``allow_unassembled=True``.

Formats that type their elements (Abaqus, Nastran) are classified by the type name. Gmsh, VTK and
MED cells have no element meaning beyond their shape: a surface, line or point cell that is a face,
an edge or a node of the solid cells only carries a set (a physical group of the boundary) and is
not recorded; one that is not (a surface meshed off the solid, a line that is no solid edge) is
recorded as a possible shell, beam or point mass.

The readers record only the element types they do not assemble: flexmb assembles some types of the
kinds in :data:`ASSEMBLED_KINDS` (S4R and CQUAD4 shells, B31 and CBAR beams, MASS and CONM2 point
masses, SPRING1 and CELAS springs) but not all (an S8R is recorded as a "shell" all the same).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError

__all__ = ["ASSEMBLED_KINDS", "Unassembled", "abaqus_kind", "describe", "nastran_kind", "off_solid",
           "refuse_rotational", "require_assembled"]

#: kinds of element of which flexmb assembles the common types into stiffness and mass (solid cells
#: of :data:`flexmb.fe.elements.solid.ELEMENTS`, the shells, beams, point masses and springs of
#: :mod:`flexmb.fe.elements`); the types a reader does not assemble are recorded whatever their kind
ASSEMBLED_KINDS = frozenset({"solid", "shell", "beam", "point mass", "spring"})

#: kinds that carry neither stiffness nor mass (named, never a reason to refuse a body)
NON_STRUCTURAL_KINDS = frozenset({"plot element"})

#: Abaqus element-type prefixes -> kind (the longest matching prefix wins)
_ABAQUS_PREFIXES: tuple[tuple[str, str], ...] = (
    ("C3D", "solid"), ("SFM3D", "surface element"), ("SPRING", "spring"), ("DASHPOT", "dashpot"),
    ("CONN", "connector"), ("MASS", "point mass"), ("ROTARYI", "point mass"), ("HEATCAP", "point mass"),
    ("STRI", "shell"), ("SC", "shell"), ("S", "shell"), ("M3D", "membrane"), ("R3D", "rigid element"),
    ("R2D", "rigid element"), ("RAX", "rigid element"), ("RB3D", "rigid element"), ("RB2D", "rigid element"),
    ("B2", "beam"), ("B3", "beam"), ("PIPE", "beam"), ("ELBOW", "beam"), ("FRAME", "beam"),
    ("T2D", "truss"), ("T3D", "truss"), ("CPEG", "plane solid"), ("CPE", "plane solid"),
    ("CPS", "plane solid"), ("CGAX", "axisymmetric solid"), ("CAX", "axisymmetric solid"),
    ("COH", "cohesive"), ("GK", "gasket"), ("DC", "heat transfer"), ("AC", "acoustic"),
    ("ITS", "interaction element"), ("JOINT", "connector"), ("GAP", "gap"),
)

#: Abaqus keywords that tie or add to the model outside the elements (counted per keyword block)
ABAQUS_CONSTRAINTS: dict[str, str] = {
    "TIE": "constraint", "MPC": "constraint", "EQUATION": "constraint", "RIGID BODY": "constraint",
    "COUPLING": "constraint", "KINEMATIC COUPLING": "constraint", "DISTRIBUTING COUPLING": "constraint",
    "SHELL TO SOLID COUPLING": "constraint", "EMBEDDED ELEMENT": "constraint",
    "NONSTRUCTURAL MASS": "added mass",
}

#: Nastran bulk-data cards of elements and rigid elements -> kind
NASTRAN_KINDS: dict[str, str] = {
    **dict.fromkeys(("CTETRA", "CHEXA", "CPENTA", "CPYRA", "CPYRAM"), "solid"),
    **dict.fromkeys(("CQUAD4", "CQUAD8", "CQUADR", "CQUAD", "CTRIA3", "CTRIA6", "CTRIAR", "CSHEAR"), "shell"),
    **dict.fromkeys(("CTRIAX", "CTRIAX6", "CQUADX", "CTRAX3", "CTRAX6", "CQUADX4", "CQUADX8"), "axisymmetric solid"),
    **dict.fromkeys(("CBAR", "CBEAM", "CBEAM3", "CBEND"), "beam"),
    **dict.fromkeys(("CROD", "CONROD", "CTUBE"), "rod"),
    **dict.fromkeys(("CELAS1", "CELAS2", "CELAS3", "CELAS4", "CBUSH", "CBUSH1D", "CBUSH2D"), "spring"),
    **dict.fromkeys(("CDAMP1", "CDAMP2", "CDAMP3", "CDAMP4", "CDAMP5", "CVISC"), "damper"),
    **dict.fromkeys(("CONM1", "CONM2", "CMASS1", "CMASS2", "CMASS3", "CMASS4"), "point mass"),
    **dict.fromkeys(("CFAST", "CWELD", "CSEAM"), "connector"),
    "CGAP": "gap",
    **dict.fromkeys(("RBE1", "RBE2", "RBE2A", "RBE3", "RBAR", "RBAR1", "RROD", "RSPLINE", "RTRPLT", "RTRPLT1"),
                    "rigid element"),
    "MPC": "constraint",
    "PLOTEL": "plot element",
}

#: corner faces of the solid base types (VTK corner order; quadratic types share their corners)
_FACES: dict[str, tuple[tuple[int, ...], ...]] = {
    "tetra": ((0, 1, 2), (0, 1, 3), (1, 2, 3), (0, 2, 3)),
    "hexahedron": ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)),
    "wedge": ((0, 1, 2), (3, 4, 5), (0, 1, 4, 3), (1, 2, 5, 4), (2, 0, 3, 5)),
    "pyramid": ((0, 1, 2, 3), (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)),
    "quad": ((0, 1, 2, 3),),  # an assembled shell is its own face
    "triangle": ((0, 1, 2),),
}
#: edges of the assembled shell and beam cells (a boundary line of a shell carries a set)
_EDGES = {"quad": ((0, 1), (1, 2), (2, 3), (3, 0)), "triangle": ((0, 1), (1, 2), (2, 0)), "line": ((0, 1),)}
#: corners of a lower-dimensional meshio cell type: how many leading nodes are its corners
_CORNERS = {"vertex": 1, "line": 2, "line3": 2, "line4": 2, "triangle": 3, "triangle6": 3, "triangle7": 3,
            "quad": 4, "quad8": 4, "quad9": 4}
#: kind recorded for a lower-dimensional cell that is no face, edge or node of the solid cells
_OFF_SOLID_KIND = {0: "point mass?", 1: "beam?", 2: "shell?"}


@dataclass(frozen=True, eq=False)
class Unassembled:
    """Elements of one type that a mesh file holds and flexmb does not assemble.

    Attributes
    ----------
    type : str
        The file's name of the type: ``"S4R"`` (Abaqus), ``"CONM2"`` (Nastran), ``"*TIE"`` (an
        Abaqus constraint keyword), or the meshio cell type for Gmsh/VTK/MED (``"quad8"``).
    kind : str
        What it is: "shell", "membrane", "beam", "truss", "rod", "point mass", "spring", "dashpot",
        "damper", "connector", "rigid element", "constraint", ..., "unknown".
    count : int
        Number of elements (of keyword blocks for constraints).
    ids : ndarray of int, shape (count,) or (0,)
        Element ids in the file (empty for constraints).
    """

    type: str
    kind: str
    count: int
    ids: Any = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", int(self.count))
        object.__setattr__(self, "ids", np.asarray(self.ids, dtype=np.int64).reshape(-1))

    @property
    def structural(self) -> bool:
        """Whether these elements carry stiffness or mass (a body without them is a partial model)."""
        return self.kind not in NON_STRUCTURAL_KINDS

    def describe(self) -> str:
        """One phrase, e.g. ``"12 S4R (shell, ids 201, 202, ...)"``."""
        ids = ""
        if self.ids.size:
            shown = ", ".join(str(int(i)) for i in self.ids[:5])
            ids = f", ids {shown}{', ...' if self.ids.size > 5 else ''}"
        return f"{self.count} {self.type} ({self.kind}{ids})"

    def as_dict(self) -> dict:
        """JSON-serializable summary: type, kind, count."""
        return {"type": self.type, "kind": self.kind, "count": self.count}


def abaqus_kind(etype: str) -> str:
    """Kind of an Abaqus element type (``"S4R"`` -> ``"shell"``); ``"unknown"`` if not recognised."""
    etype = etype.upper()
    best = ("", "unknown")
    for prefix, kind in _ABAQUS_PREFIXES:
        if etype.startswith(prefix) and len(prefix) > len(best[0]):
            best = (prefix, kind)
    return best[1]


def nastran_kind(card: str) -> str | None:
    """Kind of a Nastran bulk card naming an element (``"CQUAD4"`` -> ``"shell"``); None if the card
    is no element (GRID, MAT1, PSOLID, ...)."""
    return NASTRAN_KINDS.get(card.upper())


def _rows_in(rows: NDArray[np.int64], table: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Which rows of ``rows (p, k)`` occur in ``table (m, k)`` (rows compared as sorted sets)."""
    if not len(rows):
        return np.zeros(0, dtype=bool)
    if not len(table):
        return np.zeros(len(rows), dtype=bool)
    both = np.vstack([np.sort(table, axis=1), np.sort(rows, axis=1)])
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return np.isin(inverse[len(table):], inverse[: len(table)])


def off_solid(solid_cells: Mapping[str, NDArray[np.int64]], cell_type: str, conn: ArrayLike) -> NDArray[np.bool_]:
    """Which lower-dimensional cells are not a face, edge or node of the assembled cells.

    Parameters
    ----------
    solid_cells : dict of str to ndarray, shape (m, k)
        Assembled cells by meshio type (0-based node indices, VTK order): solid cells, and shells
        ("quad", "triangle") and beams ("line"), whose faces, edges and nodes also carry sets.
    cell_type : str
        meshio type of the cells tested (``"quad8"``, ``"line"``, ``"vertex"``, ...).
    conn : ndarray, shape (p, k)

    Returns
    -------
    ndarray of bool, shape (p,)
        True for a cell that the solid cells do not contain: a surface meshed apart from the solid
        (a shell?), a line that is no solid edge (a beam?), a point on no solid node (a point mass?).
        Cell types without a corner rule count as contained when all their nodes are solid nodes.
    """
    from flexmb.fe.elements.solid import ELEMENTS

    conn = np.asarray(conn, dtype=np.int64).reshape(len(conn), -1)
    used = np.unique(np.concatenate([c.ravel() for c in solid_cells.values()])) if solid_cells else np.zeros(0, np.int64)
    n_corner = _CORNERS.get(cell_type)
    if n_corner is None or n_corner == 1:
        return ~np.isin(conn, used).all(axis=1)
    corners = conn[:, :n_corner]
    tables = []
    for t, cells in solid_cells.items():
        base = t.rstrip("0123456789")
        if n_corner == 2:
            edges = ELEMENTS[base].edges if base in ELEMENTS else _EDGES.get(t, ())
            tables += [cells[:, list(e)] for e in edges]
        else:
            tables += [cells[:, list(f)] for f in _FACES.get(base, ()) if len(f) == n_corner]
    table = np.vstack(tables) if tables else np.zeros((0, n_corner), dtype=np.int64)
    return ~_rows_in(corners, table)


def off_solid_kind(cell_type: str) -> str:
    """Kind recorded for lower-dimensional cells of ``cell_type`` off the solid."""
    dim = 0 if cell_type == "vertex" else 1 if cell_type.startswith("line") else 2
    return _OFF_SOLID_KIND[dim]


def describe(entries: Iterable[Unassembled]) -> str:
    """The entries as one phrase: ``"12 S4R (shell, ids ...), 1 MASS (point mass, ids 900)"``."""
    return ", ".join(e.describe() for e in entries)


def require_assembled(mesh, owner: str, allow: bool, *, option: str = "allow_unassembled=True",
                      rotational: bool = False) -> None:
    """ModelError when ``mesh`` (an FEMesh) comes from a file holding structural elements flexmb does
    not assemble, unless ``allow``; the message names the types, counts and ``option``.

    Also (whatever ``allow``), with ``rotational=False``, when the mesh holds shells, beams, point
    masses or springs: for a path that still assumes 3 DOFs per node and the scalar mass;
    ``mesh.solid_only()`` gives the solid part, which ``option`` then lets through. The paths that
    reduce mixed models (:func:`flexmb.fe.reduction.body_data.build_flexible_body`, ``flexmb modes``)
    pass ``rotational=True``."""
    if not rotational:
        refuse_rotational(mesh, owner, "flexmb.build_flexible_body (in Python) reduces the whole model; for the solid "
                          f"cells alone use mesh.solid_only() with {option}" + (" (in Python)." if option.startswith("--") else "."))
    entries = [e for e in getattr(mesh, "unassembled", ()) if e.structural]
    if not entries or allow:
        return
    src = getattr(mesh, "source", None) or "the mesh"
    raise ModelError(
        f"{owner + ': ' if owner else ''}{src} holds elements that flexmb does not assemble: {describe(entries)}. A body built from "
        f"the solid cells alone misses their stiffness and mass (a partial model). Remove them from the model, "
        f"model them as separate bodies or force elements, or pass {option} to build from the solid cells only."
    )


def refuse_rotational(mesh, owner: str, fix: str) -> None:
    """ModelError when ``mesh`` holds shells, beams, point masses or springs and ``owner`` (a path that
    still assumes 3 DOFs per node and the scalar mass, e.g. ``flexmb modes``) does not support them.
    The message names the element kinds with their counts, then ``fix``."""
    parts = [(len(c), f"{t} shell") for t, c in getattr(mesh, "shells", {}).items()]
    parts += [(len(c), "beam") for c in getattr(mesh, "beams", {}).values()]
    for name in ("point_masses", "springs"):
        value = getattr(mesh, name, None)
        if value is not None:
            parts.append((len(value), name.replace("_", " ")))
    if parts:
        src = getattr(mesh, "source", None) or "the mesh"
        raise ModelError(
            f"{owner + ': ' if owner else ''}{src} holds {', '.join(f'{n} {what}' for n, what in parts)} element(s): "
            f"{owner or 'this command'} does not support them yet (rotational DOFs, full mass matrix). {fix}"
        )


def merge(entries: Iterable[Unassembled]) -> tuple[Unassembled, ...]:
    """Entries of the same type and kind summed (counts added, ids concatenated), in first-seen order."""
    out: dict[tuple[str, str], list[Unassembled]] = {}
    for e in entries:
        out.setdefault((e.type, e.kind), []).append(e)
    return tuple(
        Unassembled(t, k, sum(e.count for e in group), np.concatenate([e.ids for e in group]))
        for (t, k), group in out.items()
    )
