"""Nastran bulk-data reader (``.bdf``/``.nas``/``.fem``/``.dat``): GRID and solid elements through
meshio, MAT1 and PSOLID parsed here; every other element card (shells, beams, masses, springs, rigid
elements, MPCs) recorded as not assembled (:mod:`flexmb.fe.mesh.unassembled`)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.mesh import integrity
from flexmb.fe.mesh.femesh import Material, RawMesh
from flexmb.fe.mesh.unassembled import NASTRAN_KINDS, Unassembled, nastran_kind
from flexmb.fe.mesh.meshio_formats import _read_meshio


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


def _element_cards(path: Path) -> list[Unassembled]:
    """Every element card of the bulk data that is no solid (shells, beams, masses, springs, rigid
    elements, MPCs, ...), counted by card name with element ids: meshio reads shells and beams
    without their card names and skips the other cards."""
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
        if kind is None or kind == "solid":
            continue
        field = text.split(",")[1] if free and text.count(",") else (text[8:24] if head.endswith("*") else text[8:16])
        counts[name] = counts.get(name, 0) + 1
        if field.strip().isdigit():  # an id we cannot read: counted without it
            ids.setdefault(name, []).append(int(field))
    return [Unassembled(name, NASTRAN_KINDS[name], n, ids.get(name, [])) for name, n in counts.items()]


def _read_nastran(path: Path) -> RawMesh:
    """Nastran bulk data: GRID and CTETRA/CHEXA/CPENTA/CPYRA via meshio; MAT1 and PSOLID parsed here.

    Every property id becomes an element set ``PID<n>`` (its solid cells) carrying the MAT1
    material of that PSOLID.
    """
    integrity.check_nastran(path)
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
        np.asarray(m.points, float), np.asarray(m.points_id, dtype=np.int64), blocks, {}, block_sets, materials,
        unassembled=_element_cards(path),
    )
