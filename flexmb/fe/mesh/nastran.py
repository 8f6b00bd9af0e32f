"""Nastran bulk-data reader (``.bdf``/``.nas``/``.fem``/``.dat``): GRID and solid elements through
meshio, MAT1 and PSOLID parsed here, shells, beams, masses and springs by
:mod:`flexmb.fe.mesh.nastran_structural`; every other element card (rods, dampers, rigid elements,
MPCs, ...) recorded as not assembled (:mod:`flexmb.fe.mesh.unassembled`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.mesh import integrity
from flexmb.fe.mesh.femesh import Material, is_solid_cell
from flexmb.fe.mesh.raw import RawMesh
from flexmb.fe.mesh.unassembled import NASTRAN_KINDS, Unassembled, nastran_kind
from flexmb.fe.mesh.meshio_formats import read_meshio
from flexmb.fe.mesh.nastran_cards import bulk_cards, nastran_float
from flexmb.fe.mesh.nastran_structural import ELEMENT_CARDS, STRUCTURAL_CARDS, read_structural


def _element_cards(path: Path) -> list[Unassembled]:
    """Every element card of the bulk data that flexmb does not assemble (rods, dampers, CONM1, CMASS,
    rigid elements, MPCs, quadratic shells, ...), counted by card name with element ids."""
    counts: dict[str, int] = {}
    ids: dict[str, list[int]] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.strip().upper().startswith("BEGIN BULK")), 0)
    for line in lines[start:]:
        text = line.rstrip("\n")
        free = "," in text[:9]
        head = (text.split(",")[0] if free else text[:8]).strip().upper()
        name = head.rstrip("*")
        kind = nastran_kind(name)
        if kind is None or kind == "solid" or name in ELEMENT_CARDS:
            continue
        field = text.split(",")[1] if free and text.count(",") else (text[8:24] if head.endswith("*") else text[8:16])
        counts[name] = counts.get(name, 0) + 1
        if field.strip().isdigit():  # an id we cannot read: counted without it
            ids.setdefault(name, []).append(int(field))
    return [Unassembled(name, NASTRAN_KINDS[name], n, ids.get(name, [])) for name, n in counts.items()]


#: cards meshio reads here (nodes and solids); the other cards are parsed by flexmb
_MESHIO_CARDS = ("GRID", "CTETRA", "CHEXA", "CPENTA", "CPYRA", "CPYRAM", "CTETRA_", "CHEXA_", "CPENTA_", "CPYRA_")


def _read_solids(path: Path):
    """GRID and solid cards through meshio, from a copy of the deck without the other cards (meshio
    cannot read shells with offsets, springs on components, ...)."""
    import tempfile

    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    keep = [c for c in bulk_cards(path, _MESHIO_CARDS)]
    body = [line for c in keep for line in lines[c.line - 1 : c.last]]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        copy.write_text("BEGIN BULK\n" + "".join(body) + "ENDDATA\n")
        return read_meshio(copy, "nastran")


def _read_nastran(path: Path) -> RawMesh:
    """Nastran bulk data: GRID and CTETRA/CHEXA/CPENTA/CPYRA via meshio; MAT1, PSOLID and the
    structural cards (:mod:`flexmb.fe.mesh.nastran_structural`) parsed here.

    Every property id becomes an element set ``PID<n>`` (its cells) carrying the MAT1 material of
    its PSOLID, PSHELL, PBAR, PBEAM or PBARL card and, for shells and beams, its section.
    """
    integrity.check_nastran(path)
    m = _read_solids(path)
    blocks = []
    refs = m.cell_data.get("nastran:ref")
    block_sets: dict[str, list[tuple[int, NDArray[np.int64]]]] = {}
    for b, cb in enumerate(m.cells):
        if not is_solid_cell(cb.type):
            continue  # shells, beams, springs: read from their cards below
        blocks.append((cb.type, np.asarray(cb.data, dtype=np.int64), np.asarray(m.cells_id[b], dtype=np.int64)))
        if refs is not None:
            r = np.asarray(refs[b]).ravel()
            for pid in np.unique(r):
                block_sets.setdefault(f"PID{int(pid)}", []).append((len(blocks) - 1, np.flatnonzero(r == pid)))
    cards = bulk_cards(path, ("MAT1", "PSOLID") + STRUCTURAL_CARDS)
    mats: dict[int, Material] = {}
    psolid: dict[int, int] = {}
    for c in cards:
        if c.name not in ("MAT1", "PSOLID"):
            continue
        try:
            if c.name == "MAT1":
                mid = int(c.get(0))
                e, g, nu, rho = (nastran_float(c.get(k)) for k in (1, 2, 3, 4))
                if np.isnan(e) and not np.isnan(g) and not np.isnan(nu):
                    e = 2.0 * g * (1.0 + nu)
                if np.isnan(nu) and not np.isnan(g) and not np.isnan(e):
                    nu = e / (2.0 * g) - 1.0
                if np.isnan(rho):
                    raise MeshImportError(f"{path.name}, line {c.line}: MAT1 {mid} has no density RHO (field 6); add it.")
                mats[mid] = Material(e, nu, rho, name=f"MAT1 {mid}")
            else:
                psolid[int(c.get(0))] = int(c.get(1))
        except (ValueError, IndexError) as exc:
            raise MeshImportError(f"{path.name}, line {c.line}: cannot read {c.name} card: {list(c.fields[:6])} "
                                  f"({exc}).") from exc
        except ModelError as exc:
            raise MeshImportError(f"{path.name}, line {c.line}: {exc}") from exc
    materials: dict[str, Material] = {}
    for pid, mid in psolid.items():
        name = f"PID{pid}"
        if name not in block_sets:
            continue
        if mid not in mats:
            raise MeshImportError(f"{path.name}: PSOLID {pid} uses material {mid}, which no MAT1 card defines.")
        materials[name] = mats[mid]
    node_index = {int(g): i for i, g in enumerate(np.asarray(m.points_id, dtype=np.int64))}
    points = np.asarray(m.points, float)
    extra = read_structural(path, [c for c in cards if c.name in STRUCTURAL_CARDS], node_index, points, mats, materials)
    block_data = {}
    for (kind, conn, ids), data, in zip(extra["blocks"], extra["block_data"]):
        block_data[len(blocks)] = data
        blocks.append((kind, conn, ids))
    first = len(blocks) - len(extra["blocks"])
    for name, members in extra["block_sets"].items():
        block_sets.setdefault(name, []).extend((first + b, rows) for b, rows in members)
    return RawMesh(
        points, np.asarray(m.points_id, dtype=np.int64), blocks, {}, block_sets, materials,
        unassembled=_element_cards(path), sections=extra["sections"], block_data=block_data,
        point_masses=extra["point_masses"], springs=extra["springs"],
    )
