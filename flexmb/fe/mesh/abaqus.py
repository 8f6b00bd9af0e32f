"""Abaqus ``.inp`` reader (flat input): *NODE, *ELEMENT, *NSET, *ELSET, *MATERIAL (*ELASTIC,
*DENSITY), *SOLID SECTION, *INCLUDE, and the shells, beams, masses and springs of
:mod:`flexmb.fe.mesh.abaqus_sections` (*SHELL SECTION, *BEAM SECTION, *BEAM GENERAL SECTION, *MASS,
*ROTARY INERTIA, *SPRING). Elements of other types (quadratic shells and beams, membranes, trusses,
connectors, dashpots, ...) and constraint keywords (*TIE, *MPC, *COUPLING, ...) are recorded as not
assembled (:mod:`flexmb.fe.mesh.unassembled`); their element sets still give node sets."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError
from flexmb.fe.mesh import integrity
from flexmb.fe.elements.solid import ELEMENTS
from flexmb.fe.mesh.abaqus_sections import SECTION_KEYWORDS, STRUCTURAL_TYPES, material_from, resolve
from flexmb.fe.mesh.femesh import Material, format_ids
from flexmb.fe.mesh.raw import RawMesh
from flexmb.fe.mesh.unassembled import ABAQUS_CONSTRAINTS, Unassembled, abaqus_kind

logger = logging.getLogger(__name__)

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
    **{t: "line" for t in ("T3D2", "B31", "B31H", "B33", "B33H", "T2D2", "SPRING2", "SPRINGA")},
    **{t: "vertex" for t in ("MASS", "ROTARYI", "SPRING1")},
    **{t: "line3" for t in ("T3D3", "B32", "B32H")},
}
_MESHIO_NODES = {
    "tetra": 4, "tetra10": 10, "hexahedron": 8, "hexahedron20": 20, "hexahedron27": 27, "wedge": 6,
    "wedge15": 15, "pyramid": 5, "triangle": 3, "triangle6": 6, "quad": 4, "quad8": 8, "line": 2, "line3": 3,
    "vertex": 1,
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
    integrity.check_last_line(path)
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


def _element_records(
    data: list[tuple[str, int, str]], etype: str, k: int, where: tuple[str, int]
) -> NDArray[np.int64]:
    """Element records of one *ELEMENT block, shape (n, 1 + k): id and k node ids per record.

    A record holds exactly ``1 + k`` integers on one or more lines (Abaqus continues long records
    on the next line) and ends at a line end; a record cut by the end of the block is refused.
    """
    records: list[list[int]] = []
    current: list[int] = []
    start = where[1]
    for fname, no, s in data:
        try:
            values = [int(v) for v in s.split(",") if v.strip()]
        except ValueError as exc:
            raise MeshImportError(
                f"{fname}, line {no}: *ELEMENT, TYPE={etype}: cannot read integers from {s[:60]!r} ({exc})."
            ) from exc
        if not current:
            start = no
        current += values
        if len(current) > k + 1:
            raise MeshImportError(
                f"{fname}, line {start}: *ELEMENT, TYPE={etype}: the element record runs to {len(current)} numbers "
                f"by line {no}, expected {k + 1} (id + {k} nodes) ending at a line end. The element lines are "
                "malformed (a line cut or joined?)."
            )
        if len(current) == k + 1:
            records.append(current)
            current = []
    if current:
        fname, no, _ = data[-1]
        raise MeshImportError(
            f"{fname}, line {no}: *ELEMENT, TYPE={etype}: the last element record (from line {start}) has "
            f"{len(current)} of {k + 1} numbers (id + {k} nodes): the file is truncated inside it."
        )
    return np.array(records, dtype=np.int64).reshape(-1, k + 1)


def _check_end(blocks_kw, node_chunks, elem_blocks) -> None:
    """Refuse an input that visibly ends inside its mesh data (Abaqus has no end marker or counts):
    a last list line ending with a comma, the file ending in *NODE data with no element after it,
    or in *ELEMENT data with nodes that no element uses (a cut element list)."""
    if not blocks_kw:
        return
    (fname, no, head), data = blocks_kw[-1]
    keyword = _inp_params(head)[0]
    last = data[-1] if data else (fname, no, head)
    if keyword in ("NODE", "ELEMENT", "NSET", "ELSET") and data and last[2].endswith(","):
        raise MeshImportError(
            f"{last[0]}, line {last[1]}: the file ends with a *{keyword} data line ending with a comma: the list "
            "continues on a line that is missing. The file is truncated: re-export it."
        )
    if keyword == "NODE" and not elem_blocks:
        raise MeshImportError(
            f"{last[0]}, line {last[1]}: the file ends in its *NODE data and defines no elements: it is truncated "
            "(or holds no mesh). Re-export it with the elements."
        )
    if keyword == "ELEMENT" and elem_blocks:
        node_ids = np.concatenate([c[:, 0] for c in node_chunks]).astype(np.int64)
        used = np.unique(np.concatenate([b[2].ravel() for b in elem_blocks]))
        unused = np.setdiff1d(node_ids, used)
        if unused.size:
            raise MeshImportError(
                f"{last[0]}, line {last[1]}: the file ends in *ELEMENT data and {unused.size} node(s) (ids "
                f"{format_ids(unused)}) are used by no element: the element list looks cut. Re-export the file; "
                "if it is complete, remove the unused nodes or end it with the sets that use them."
            )


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
    struct_defs: list = []  # shell, beam, mass and spring keywords, resolved on the element sets
    current_material: str | None = None
    n_parts = 0
    record: list[Unassembled] = []  # what the file holds that is not assembled
    skipped_ids: list[int] = []  # ids of recorded elements kept in no block (records of mixed widths)
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
                # not assembled (a mass, spring, connector, ...): recorded, and kept as a block for its
                # sets when its records have one width (one record per line: these types are short)
                rows = _inp_numbers(data, kind=int)
                widths = {len(r) for r in rows}
                record.append(Unassembled(etype, abaqus_kind(etype), len(rows), [r[0] for r in rows if r]))
                if len(widths) == 1 and min(widths) >= 2:
                    arr = np.array(rows, dtype=np.int64)
                    elem_blocks.append((f"abaqus:{etype}", arr[:, 0], arr[:, 1:], params.get("ELSET"), where))
                else:
                    skipped_ids += [r[0] for r in rows if r]
                continue
            ctype = ABAQUS_TYPES[etype]
            k = _MESHIO_NODES[ctype]
            arr = _element_records(data, etype, k, (fname, no))
            elem_blocks.append((STRUCTURAL_TYPES.get(etype, ctype), arr[:, 0], arr[:, 1:], params.get("ELSET"), where))
            if ctype not in ELEMENTS and etype not in STRUCTURAL_TYPES:
                record.append(Unassembled(etype, abaqus_kind(etype), len(arr), arr[:, 0]))
        elif keyword in ABAQUS_CONSTRAINTS:
            record.append(Unassembled(f"*{keyword}", ABAQUS_CONSTRAINTS[keyword], 1))
            current_material = None
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
        elif keyword in SECTION_KEYWORDS:
            struct_defs.append((keyword, params, data, where))
            current_material = None
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
        end = lines[-1][1] if lines else 0
        raise MeshImportError(
            f"{path.name}, line {end} (end of input): no *NODE data found; expected *NODE and *ELEMENT blocks. "
            "The file is truncated or not an Abaqus input file."
        )
    _check_end(blocks_kw, node_chunks, elem_blocks)
    nodes = np.vstack(node_chunks)
    node_ids = nodes[:, 0].astype(np.int64)
    order = np.argsort(node_ids, kind="stable")
    sorted_ids = node_ids[order]
    if np.any(np.diff(sorted_ids) == 0):
        dup = sorted_ids[1:][np.diff(sorted_ids) == 0]
        raise MeshImportError(f"{path.name}: node id(s) defined twice: {format_ids(dup)}.")

    def node_index(ids: NDArray[np.int64], what: str) -> NDArray[np.int64]:
        pos = np.searchsorted(sorted_ids, ids)
        pos = np.clip(pos, 0, len(sorted_ids) - 1)
        bad = sorted_ids[pos] != ids
        if np.any(bad):
            raise MeshImportError(f"{path.name}: {what} names undefined node id(s) {format_ids(np.asarray(ids)[bad])}.")
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
        raise MeshImportError(f"{path.name}: element id(s) defined twice: {format_ids(e_sorted[1:][np.diff(e_sorted) == 0])}.")

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
                ids = ids[~np.isin(ids, skipped_ids)]  # recorded as unassembled, in no block
                pos = np.clip(np.searchsorted(e_sorted, ids), 0, max(len(e_sorted) - 1, 0))
                bad = (e_sorted[pos] != ids) if len(e_sorted) else np.ones(ids.size, bool)
                if np.any(bad):
                    raise MeshImportError(
                        f"{fname}, line {no}: *ELSET {name!r} names undefined element id(s) {format_ids(ids[bad])}."
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
        set_name = upper_elsets.get(elset.upper())
        if set_name is None:
            raise MeshImportError(f"{fname}, line {no}: *SOLID SECTION refers to unknown element set {elset!r}.")
        materials[set_name] = material_from(materials_raw, mat_name, (fname, no), "SOLID SECTION")
    extra = resolve(path, struct_defs, blocks, block_sets, upper_elsets, materials_raw, nodes[:, 1:4])
    materials.update(extra["materials"])
    return RawMesh(nodes[:, 1:4].copy(), node_ids, blocks, node_sets, block_sets, materials, unassembled=record,
                   sections=extra["sections"], point_masses=extra["point_masses"], springs=extra["springs"])
