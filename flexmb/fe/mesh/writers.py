"""Writing an FEMesh in the formats flexmb reads: Abaqus ``.inp``, Gmsh ``.msh`` (2.2, ASCII) and VTK
``.vtu``, for round trips and for meshes built in code (``structured_box``, ``structured_plate``).

What each format carries:

- ``.inp``: everything flexmb reads from Abaqus: nodes with their ids, solid cells (C3D4, C3D10,
  C3D8I (C3D8 for the "plain" hexahedron formulation), C3D20, C3D6, C3D5), shells (S4, S3) and
  beams (B31) with their sections (*SHELL SECTION with OFFSET, *BEAM SECTION of the shape or
  *BEAM GENERAL SECTION), point masses (MASS, ROTARYI), springs (SPRING1, SPRING2, SPRINGA), node
  and element sets, materials. Each combination of material and section gets its own element set
  ``_PROP<k>``. Refused (ModelError naming the fix): what Abaqus input cannot say the same way
  (point masses with an offset, springs on a combination of DOFs, beam offsets or non-structural
  mass, per-element shell offsets).
- ``.msh``: nodes, solid, shell and beam cells, element sets as physical groups (a cell in several
  sets is written once per set; the reader merges the copies) and node sets as groups of vertex
  cells. Materials and sections are not part of the format: pass them to ``read_mesh``.
- ``.vtu``: nodes and cells with their ids, node and element sets as 0/1 masks (``node_set:NAME``,
  ``element_set:NAME``) and the material of every cell (``material:E``, ``material:nu``,
  ``material:rho``), which :func:`~flexmb.fe.mesh.read_mesh` reads back. Sections are not written.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from flexmb.errors import ModelError
from flexmb.fe.mesh.femesh import FEMesh
from flexmb.fe.mesh.sections import BeamSection, ShellSection
from flexmb.fe.mesh.structural import rows_by_section

__all__ = ["write_mesh"]

logger = logging.getLogger(__name__)

_ABAQUS_SOLID = {"tetra": "C3D4", "tetra10": "C3D10", "hexahedron": "C3D8I", "hexahedron20": "C3D20",
                 "wedge": "C3D6", "pyramid": "C3D5"}
_ABAQUS_STRUCT = {"quad": "S4", "triangle": "S3", "line": "B31"}
_SHAPES = {"rect": "RECT", "circ": "CIRC", "pipe": "PIPE", "box": "BOX", "i": "I"}


def write_mesh(mesh: FEMesh, path: str | Path) -> Path:
    """Write ``mesh`` to ``path`` (format from the extension: .inp, .msh, .vtu); returns the path."""
    if not isinstance(mesh, FEMesh):
        raise ModelError(f"write_mesh: mesh={mesh!r} is not an FEMesh.")
    path = Path(path)
    writer = {".inp": _write_abaqus, ".msh": _write_gmsh, ".vtu": _write_vtu}.get(path.suffix.lower())
    if writer is None:
        raise ModelError(f"write_mesh: {path.name}: unknown extension {path.suffix!r}; use .inp, .msh or .vtu.")
    writer(mesh, path)
    return path


# ============================================================================================
# Abaqus
# ============================================================================================


def _element_ids(mesh: FEMesh) -> dict[str, np.ndarray]:
    """Element ids per type, unique over all types (renumbered 1.. if the mesh's ids collide)."""
    blocks = {**mesh.cells, **mesh.shells, **mesh.beams}
    ids = {t: mesh.cell_ids[t] for t in blocks}
    every = np.concatenate(list(ids.values())) if ids else np.zeros(0, np.int64)
    if every.size and (np.unique(every).size == every.size) and every.min() > 0:
        return ids
    out, start = {}, 1
    for t, c in blocks.items():
        out[t] = np.arange(start, start + len(c))
        start += len(c)
    return out


def _lines(values, per_line: int = 16) -> str:
    vals = [str(v) for v in values]
    return ",\n".join(", ".join(vals[i : i + per_line]) for i in range(0, len(vals), per_line)) + "\n"


def _fmt(x: float) -> str:
    return repr(float(x))


def _props(mesh: FEMesh):
    """Groups of cells sharing material and section: list of (type, rows, material, section, extra)."""
    mats = mesh.element_materials()
    secs = {}
    if mesh.shells:
        secs.update(rows_by_section(mesh, mesh.shells, ShellSection, "shell"))
    if mesh.beams:
        secs.update(rows_by_section(mesh, mesh.beams, BeamSection, "beam"))
    groups: dict[tuple, list] = {}
    for t, vals in mats.items():
        data = mesh.element_data.get(t, {})
        for r in range(len(vals)):
            extra = tuple(tuple(np.atleast_1d(v[r]).tolist()) for _, v in sorted(data.items()))
            key = (t, tuple(vals[r]), id(secs[t][r]) if t in secs else None, extra)
            groups.setdefault(key, []).append(r)
    return [(k[0], np.array(rows), mats[k[0]][rows[0]], secs[k[0]][rows[0]] if k[0] in secs else None,
             {f: v[rows[0]] for f, v in mesh.element_data.get(k[0], {}).items()}) for k, rows in groups.items()]


def _write_abaqus(mesh: FEMesh, path: Path) -> None:
    eids = _element_ids(mesh)
    nid = mesh.node_ids
    out = ["*HEADING", f"written by flexmb.fe.mesh.write_mesh, units: {mesh.units or 'of the mesh'}", "*NODE"]
    out += [f"{i}, {_fmt(p[0])}, {_fmt(p[1])}, {_fmt(p[2])}" for i, p in zip(nid, mesh.points)]
    text = ["\n".join(out) + "\n"]
    for t, conn in {**mesh.cells, **mesh.shells, **mesh.beams}.items():
        etype = _ABAQUS_SOLID.get(t) or _ABAQUS_STRUCT[t]
        if t == "hexahedron" and mesh.formulation(t) == "plain":
            etype = "C3D8"
        text.append(f"*ELEMENT, TYPE={etype}\n")
        rows = np.column_stack([eids[t], nid[conn]])
        text.append("".join(_lines(r, 16) for r in rows))
    next_id = 1 + max([int(v.max()) for v in eids.values()] + [0])
    lumped, next_id = _abaqus_lumped(mesh, next_id)
    text += lumped
    for name, idx in mesh.node_sets.items():
        if idx.size:
            text.append(f"*NSET, NSET={name}\n" + _lines(nid[idx]))
    for name, by_type in mesh.element_sets.items():
        members = np.concatenate([eids[t][r] for t, r in by_type.items() if t in eids and r.size] or [np.zeros(0, int)])
        if members.size:
            text.append(f"*ELSET, ELSET={name}\n" + _lines(members))
    materials: dict[tuple, str] = {}
    for k, (t, rows, mat, sec, extra) in enumerate(_props(mesh)):
        key = tuple(float(v) for v in mat)
        if key not in materials:
            materials[key] = f"MAT{len(materials) + 1}"
        text.append(f"*ELSET, ELSET=_PROP{k + 1}\n" + _lines(eids[t][rows]))
        text.append(_abaqus_section(f"_PROP{k + 1}", t, materials[key], sec, extra))
    for (e, nu, rho), name in materials.items():
        text.append(f"*MATERIAL, NAME={name}\n*ELASTIC\n{_fmt(e)}, {_fmt(nu)}\n*DENSITY\n{_fmt(rho)}\n")
    path.write_text("".join(text))


def _abaqus_section(elset: str, t: str, mat: str, sec, extra: dict) -> str:
    if t in _ABAQUS_SOLID:
        return f"*SOLID SECTION, ELSET={elset}, MATERIAL={mat}\n,\n"
    if t in ("quad", "triangle"):
        z0 = extra.get("offset", np.nan)
        z0 = sec.offset if np.isnan(z0) else float(z0)
        if sec.nsm or abs(sec.shear_factor - 5.0 / 6.0) > 1e-12:
            raise ModelError(f"write_mesh: shell section {sec.name!r} has a non-structural mass or a shear factor "
                             "other than 5/6, which *SHELL SECTION cannot carry.")
        return (f"*SHELL SECTION, ELSET={elset}, MATERIAL={mat}, OFFSET={_fmt(-z0 / sec.thickness)}\n"
                f"{_fmt(sec.thickness)}, 5\n")
    orient = extra.get("orientation", np.full(3, np.nan))
    n1 = sec.orientation if np.isnan(orient).any() else tuple(orient)
    if n1 is None:
        n1 = (0.0, 0.0, -1.0)  # Abaqus' default; allowed for symmetric sections only (checked when assembled)
    offsets = [extra.get(k, np.zeros(3)) for k in ("offset_a", "offset_b")]
    if sec.nsm or any(np.nan_to_num(o).any() for o in offsets) or (sec.shape not in _SHAPES and any(sec.centroid)):
        raise ModelError(f"write_mesh: beam section {sec.name!r} has a non-structural mass or offsets, which "
                         "*BEAM SECTION cannot carry; write the mesh to .vtu or keep it in Python.")
    if sec.shape in _SHAPES and sec.shear is None:
        dims = ", ".join(_fmt(v) for v in sec.dims)
        return (f"*BEAM SECTION, ELSET={elset}, MATERIAL={mat}, SECTION={_SHAPES[sec.shape]}\n{dims}\n"
                f"{', '.join(_fmt(v) for v in n1)}\n")
    raise ModelError(f"write_mesh: beam section {sec.name!r} is a general section (or has explicit shear factors); "
                     "Abaqus input needs its material inline (*BEAM GENERAL SECTION), not written by flexmb: give the "
                     "section by its shape (BeamSection.rectangle, ...).")


def _abaqus_lumped(mesh: FEMesh, next_id: int) -> tuple[list[str], int]:
    """MASS/ROTARYI and SPRING1/SPRING2/SPRINGA elements with their properties."""
    text = []
    nid = mesh.node_ids
    pm = mesh.point_masses
    if pm is not None:
        m = pm.matrix
        if np.abs(m[:, :3, 3:]).max(initial=0.0) > 0:
            raise ModelError("write_mesh: point masses with an offset cannot be written to Abaqus input (*MASS has "
                             "none); put a node at the mass's centre.")
        for k in range(len(pm)):
            text.append(f"*ELEMENT, TYPE=MASS, ELSET=_MASS{k + 1}\n{next_id}, {nid[pm.nodes[k]]}\n"
                        f"*MASS, ELSET=_MASS{k + 1}\n{_fmt(m[k, 0, 0])}\n")
            next_id += 1
            j = m[k, 3:, 3:]
            if np.abs(j).max() > 0:
                vals = [j[0, 0], j[1, 1], j[2, 2], j[0, 1], j[0, 2], j[1, 2]]
                text.append(f"*ELEMENT, TYPE=ROTARYI, ELSET=_ROTI{k + 1}\n{next_id}, {nid[pm.nodes[k]]}\n"
                            f"*ROTARY INERTIA, ELSET=_ROTI{k + 1}\n{', '.join(_fmt(v) for v in vals)}\n")
                next_id += 1
    sp = mesh.springs
    if sp is not None:
        for k in range(len(sp)):
            a, b = sp.nodes[k]
            ca, cb = sp.coef[k]
            ua, ub = np.flatnonzero(ca), np.flatnonzero(cb)
            name = f"_SPR{k + 1}"
            if b < 0 and ua.size == 1 and ca[ua[0]] in (1.0, -1.0):
                text.append(f"*ELEMENT, TYPE=SPRING1, ELSET={name}\n{next_id}, {nid[a]}\n"
                            f"*SPRING, ELSET={name}\n{ua[0] + 1}\n{_fmt(sp.stiffness[k])}\n")
            elif b >= 0 and ua.size == ub.size == 1 and abs(ca[ua[0]]) == abs(cb[ub[0]]) == 1.0 \
                    and ca[ua[0]] == -cb[ub[0]]:
                text.append(f"*ELEMENT, TYPE=SPRING2, ELSET={name}\n{next_id}, {nid[a]}, {nid[b]}\n"
                            f"*SPRING, ELSET={name}\n{ua[0] + 1}, {ub[0] + 1}\n{_fmt(sp.stiffness[k])}\n")
            elif b >= 0 and _is_axial(mesh.points[a] - mesh.points[b], ca, cb):
                text.append(f"*ELEMENT, TYPE=SPRINGA, ELSET={name}\n{next_id}, {nid[a]}, {nid[b]}\n"
                            f"*SPRING, ELSET={name}\n\n{_fmt(sp.stiffness[k])}\n")
            else:
                raise ModelError(f"write_mesh: spring {int(sp.ids[k])} acts on a combination of DOFs that SPRING1, "
                                 "SPRING2 or SPRINGA cannot express (e.g. a CBUSH in rotated axes).")
            next_id += 1
    return text, next_id


def _is_axial(d, ca, cb) -> bool:
    n = np.linalg.norm(d)
    if not n > 0:
        return False
    d = d / n
    return bool(np.allclose(ca[:3], d) and np.allclose(cb[:3], -d) and not ca[3:].any() and not cb[3:].any())


# ============================================================================================
# Gmsh and VTU (through meshio)
# ============================================================================================


def _no_lumped(mesh: FEMesh, fmt: str) -> None:
    if mesh.point_masses is not None or mesh.springs is not None:
        raise ModelError(f"write_mesh: {fmt} files cannot carry point masses or springs; write .inp.")


def _write_gmsh(mesh: FEMesh, path: Path) -> None:
    import meshio

    _no_lumped(mesh, "Gmsh")
    blocks = {**mesh.cells, **mesh.shells, **mesh.beams}
    dims = {t: 3 for t in mesh.cells} | {t: 2 for t in mesh.shells} | {t: 1 for t in mesh.beams}
    tags = {name: k + 1 for k, name in enumerate([*mesh.element_sets, *mesh.node_sets])}
    cells, phys = [], []
    for t, conn in blocks.items():
        member = np.zeros(len(conn), bool)
        for name, by_type in mesh.element_sets.items():
            rows = by_type.get(t)
            if rows is not None and rows.size:
                cells.append((t, conn[rows]))
                phys.append(np.full(rows.size, tags[name]))
                member[rows] = True
        if (~member).any():
            cells.append((t, conn[~member]))
            phys.append(np.zeros(int((~member).sum()), dtype=int))
    for name, idx in mesh.node_sets.items():
        if idx.size:
            cells.append(("vertex", idx[:, None]))
            phys.append(np.full(idx.size, tags[name]))
    field_data = {name: np.array([tags[name], dims.get(next(iter(mesh.element_sets[name]), ""), 3)])
                  for name in mesh.element_sets}
    field_data.update({name: np.array([tags[name], 0]) for name in mesh.node_sets})
    m = meshio.Mesh(mesh.points, cells, cell_data={"gmsh:physical": phys, "gmsh:geometrical": phys},
                    field_data=field_data)
    meshio.gmsh.write(str(path), m, fmt_version="2.2", binary=False)
    logger.info("%s: materials and sections are not part of the Gmsh format; pass them to read_mesh", path.name)


def _write_vtu(mesh: FEMesh, path: Path) -> None:
    import meshio

    _no_lumped(mesh, "VTU")
    blocks = {**mesh.cells, **mesh.shells, **mesh.beams}
    cells = list(blocks.items())
    point_data = {"node_id": mesh.node_ids.astype(np.int64)}
    for name, idx in mesh.node_sets.items():
        mask = np.zeros(mesh.n_nodes, dtype=np.uint8)
        mask[idx] = 1
        point_data[f"node_set:{name}"] = mask
    cell_data = {"element_id": [mesh.cell_ids[t].astype(np.int64) for t, _ in cells]}
    for name, by_type in mesh.element_sets.items():
        masks = []
        for t, conn in cells:
            mask = np.zeros(len(conn), dtype=np.uint8)
            mask[by_type.get(t, np.zeros(0, int))] = 1
            masks.append(mask)
        cell_data[f"element_set:{name}"] = masks
    if mesh.materials:
        mats = mesh.element_materials(missing="nan")
        for k, field in enumerate(("E", "nu", "rho")):
            cell_data[f"material:{field}"] = [mats[t][:, k] for t, _ in cells]
    meshio.vtu.write(str(path), meshio.Mesh(mesh.points, cells, point_data=point_data, cell_data=cell_data))
