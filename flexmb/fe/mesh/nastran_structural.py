"""Nastran shells, beams, masses and springs: CQUAD4/CQUADR/CTRIA3/CTRIAR with PSHELL, CBAR/CBEAM
with PBAR/PBEAM/PBARL (ROD, TUBE), CONM2, CELAS1/PELAS, CELAS2, CBUSH/PBUSH, read into the parts of
a :class:`~flexmb.fe.mesh.raw.RawMesh`.

Conventions: every property id becomes the element set ``PID<n>`` with the section of its property
card and the MAT1 material it names. Shells: PSHELL T, NSM, TS/T (shear factor), MID1 = MID2 (one
isotropic material for membrane and bending); CQUAD4/CTRIA3 ZOFFS as the element's mid-surface
offset. Beams: local y from the orientation vector (X1-X3, or G0 - GA) in the basic system
(Nastran's plane 1 is x-y: I1 = Iz, I2 = Iy); PBAR K1/K2 blank = no shear flexibility (Nastran's
default), PBEAM K1/K2 default 1.0; offsets WA/WB in the basic system (OFFT = GGG). Masses: CONM2 with
CID 0 (offset) or -1 (centre of gravity in the basic system). Springs: CELAS1/2 on one component of
one or two grid points; CBUSH with the stiffness K1-K6 of PBUSH in the basic axes (CID 0) or the
element axes (CID blank: x from GA to GB, y from the orientation vector).

Anything else these cards may carry that flexmb does not model is refused with the card, its line
and the fix: coordinate systems other than the basic one, pin flags, tapered PBEAMs, composite
or multi-material PSHELLs, other PBARL shapes, spring or bush offsets.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.mesh.nastran_cards import Card, nastran_float, nastran_int
from flexmb.fe.mesh.sections import BeamSection, PointMasses, ShellSection, Springs

__all__ = ["STRUCTURAL_CARDS", "read_structural"]

#: cards this module reads (element cards are assembled, the others are their properties)
STRUCTURAL_CARDS = ("CQUAD4", "CQUADR", "CTRIA3", "CTRIAR", "PSHELL", "CBAR", "CBEAM", "PBAR", "PBEAM", "PBARL",
                    "CONM2", "CELAS1", "CELAS2", "PELAS", "CBUSH", "PBUSH")
#: element cards among them
ELEMENT_CARDS = ("CQUAD4", "CQUADR", "CTRIA3", "CTRIAR", "CBAR", "CBEAM", "CONM2", "CELAS1", "CELAS2", "CBUSH")


def _fail(path, card: Card, what: str):
    raise MeshImportError(f"{path.name}, line {card.line}: {card.name} {card.get(0)}: {what}")


def _f(path, card: Card, i: int, default=float("nan")) -> float:
    try:
        return nastran_float(card.get(i), default)
    except ValueError:
        _fail(path, card, f"field {i + 2} {card.get(i)!r} is not a number.")


def _i(path, card: Card, i: int, default=None):
    try:
        return nastran_int(card.get(i), default)
    except ValueError:
        _fail(path, card, f"field {i + 2} {card.get(i)!r} is not an integer.")


def _orientation(path, card: Card, node_xyz, ga: int, start: int) -> NDArray[np.float64]:
    """The orientation vector of CBAR/CBEAM/CBUSH: X1-X3 (fields start..start+2) or G0 - GA."""
    x1 = card.get(start)
    if x1 and "." not in x1 and x1.lstrip("+-").isdigit() and not card.get(start + 1):
        g0 = int(x1)
        if g0 not in node_xyz:
            _fail(path, card, f"orientation grid G0 = {g0} is not defined.")
        return node_xyz[g0] - node_xyz[ga]
    if not x1:
        return np.full(3, np.nan)
    return np.array([_f(path, card, start + k, 0.0) for k in range(3)])


def read_structural(path, cards: list[Card], node_index: dict[int, int], points: NDArray[np.float64],
                    mats: dict, materials_out: dict) -> dict:
    """Structural blocks, sets, sections, per-element data, point masses and springs of the deck.

    Returns a dict with keys ``blocks`` (list of (type, conn, ids)), ``block_data`` (list of per-row
    field dicts, aligned with blocks), ``block_sets`` (set -> list of (block position, rows)),
    ``sections``, ``point_masses``, ``springs``; adds the materials of the used property ids to
    ``materials_out`` (set name -> Material).
    """
    by = {}
    for c in cards:
        by.setdefault(c.name, []).append(c)
    node_xyz = {gid: points[i] for gid, i in node_index.items()}

    def nodes(card: Card, idx: list[int]) -> list[int]:
        out = []
        for i in idx:
            gid = _i(path, card, i)
            if gid not in node_index:
                _fail(path, card, f"grid point {gid} is not defined.")
            out.append(node_index[gid])
        return out

    def material(card: Card, mid: int):
        if mid not in mats:
            _fail(path, card, f"material {mid} is not defined by a MAT1 card.")
        return mats[mid]

    sections: dict = {}
    used_pids: dict[int, object] = {}
    pshell = {_i(path, c, 0): c for c in by.get("PSHELL", [])}
    beam_props = {_i(path, c, 0): c for c in by.get("PBAR", []) + by.get("PBEAM", []) + by.get("PBARL", [])}
    blocks, block_data, block_sets = [], [], {}

    def add_block(kind: str, rows: list, pids: list[int], data: dict) -> None:
        if not rows:
            return
        conn = np.array([r[1] for r in rows], dtype=np.int64)
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        b = len(blocks)
        blocks.append((kind, conn, ids))
        block_data.append({k: np.asarray(v, dtype=float) for k, v in data.items()})
        pids_a = np.asarray(pids)
        for pid in np.unique(pids_a):
            block_sets.setdefault(f"PID{int(pid)}", []).append((b, np.flatnonzero(pids_a == pid)))

    # ---------------------------------------------------------------- shells
    for kind, names, k in (("shell:quad", ("CQUAD4", "CQUADR"), 4), ("shell:triangle", ("CTRIA3", "CTRIAR"), 3)):
        rows, pids, offs = [], [], []
        for c in (c for n in names for c in by.get(n, [])):
            pid = _i(path, c, 1, _i(path, c, 0))
            if pid not in pshell:
                _fail(path, c, f"property {pid} is no PSHELL (composites, PCOMP, are not supported).")
            zoffs = _f(path, c, 2 + k + 1, 0.0)
            if any(c.fields[8:]):
                _fail(path, c, "TFLAG and corner thicknesses T1-Tn are not supported; give the thickness on the PSHELL.")
            rows.append((_i(path, c, 0), nodes(c, list(range(2, 2 + k)))))
            pids.append(pid)
            offs.append(zoffs)
            used_pids[pid] = "shell"
        add_block(kind, rows, pids, {"offset": offs})
    for pid in {p for p, kind in used_pids.items() if kind == "shell"}:
        c = pshell[pid]
        mid1, mid2 = _i(path, c, 1), _i(path, c, 3)
        if mid2 is None or (mid2 != mid1) or (_i(path, c, 5) not in (None, mid1)) or _f(path, c, 4, 1.0) != 1.0:
            _fail(path, c, "flexmb needs one isotropic material for membrane, bending and shear (MID2 = MID1, "
                           "MID3 blank or MID1, 12I/T^3 = 1).")
        ts = _f(path, c, 6, 5.0 / 6.0)  # blank: 5/6 (Nastran documents .833333)
        try:
            sections[f"PID{pid}"] = ShellSection(_f(path, c, 2), shear_factor=ts if ts > 0 else 5.0 / 6.0,
                                                 nsm=_f(path, c, 7, 0.0), name=f"PSHELL {pid}")
        except ModelError as exc:
            _fail(path, c, str(exc))
        materials_out[f"PID{pid}"] = material(c, mid1)
    # ---------------------------------------------------------------- beams
    rows, pids, orient, wa, wb = [], [], [], [], []
    for c in by.get("CBAR", []) + by.get("CBEAM", []):
        pid = _i(path, c, 1, _i(path, c, 0))
        if pid not in beam_props:
            _fail(path, c, f"property {pid} is not a PBAR, PBEAM or PBARL card.")
        ga = _i(path, c, 2)
        n = nodes(c, [2, 3])
        offt = c.get(7).upper()
        if offt not in ("", "GGG") and c.name == "CBAR":
            _fail(path, c, f"OFFT = {offt}: only offsets in the basic system (GGG) are supported.")
        if c.get(8) or c.get(9):
            _fail(path, c, "pin flags PA/PB (released DOFs) are not supported.")
        rows.append((_i(path, c, 0), n))
        pids.append(pid)
        orient.append(_orientation(path, c, node_xyz, ga, 4))
        wa.append([_f(path, c, 10 + k, 0.0) for k in range(3)])
        wb.append([_f(path, c, 13 + k, 0.0) for k in range(3)])
        used_pids[pid] = "beam"
    add_block("beam:line", rows, pids, {"orientation": np.array(orient).reshape(-1, 3),
                                        "offset_a": np.array(wa).reshape(-1, 3), "offset_b": np.array(wb).reshape(-1, 3)})
    for pid in {p for p, kind in used_pids.items() if kind == "beam"}:
        c = beam_props[pid]
        sections[f"PID{pid}"] = _beam_section(path, c)
        materials_out[f"PID{pid}"] = material(c, _i(path, c, 1))
    return dict(blocks=blocks, block_data=block_data, block_sets=block_sets, sections=sections,
                point_masses=_masses(path, by, node_index, points),
                springs=_springs(path, by, node_index, node_xyz))


def _beam_section(path, c: Card) -> BeamSection:
    name = f"{c.name} {c.get(0)}"
    try:
        if c.name == "PBARL":
            shape = c.get(3).upper()
            dims = [_f(path, c, 8 + k) for k in range(2)]
            if shape == "ROD":
                return BeamSection.circle(dims[0], name=name)
            if shape == "TUBE":
                return BeamSection.pipe(dims[0], dims[0] - dims[1], name=name)
            _fail(path, c, f"PBARL TYPE={shape} is not supported (ROD, TUBE); give the properties on a PBAR.")
        if c.name == "PBAR":
            a, i1, i2, j = (_f(path, c, k, 0.0) for k in (2, 3, 4, 5))
            nsm = _f(path, c, 6, 0.0)
            k1, k2, i12 = _f(path, c, 16, np.inf), _f(path, c, 17, np.inf), _f(path, c, 18, 0.0)
        else:
            a, i1, i2, i12, j, nsm = (_f(path, c, k, 0.0) for k in (2, 3, 4, 5, 6, 7))
            k1, k2 = _pbeam_tail(path, c, (a, i1, i2, i12, j))
        if i12 != 0.0:
            _fail(path, c, "I12 != 0 (axes not principal) is not supported; give principal values and orient the "
                           "beam along its principal axes.")
        return BeamSection(a, i2, i1, j, shear=(k1 if k1 > 0 else np.inf, k2 if k2 > 0 else np.inf), nsm=nsm,
                           name=name)
    except ModelError as exc:
        _fail(path, c, str(exc))


def _pbeam_tail(path, c: Card, end_a) -> tuple[float, float]:
    """K1, K2 of a PBEAM; a tapered beam (stations with other A, I1, I2, I12, J) is refused."""
    pos = 16
    while c.get(pos).upper() in ("YES", "YESA", "NO"):
        station = [_f(path, c, pos + k, np.nan) for k in (2, 3, 4, 5, 6)]
        given = [(s, e) for s, e in zip(station, end_a) if not np.isnan(s)]
        if any(abs(s - e) > 1e-9 * max(abs(e), 1e-300) for s, e in given):
            _fail(path, c, "tapered PBEAM (stations with other section properties) is not supported.")
        pos += 16 if c.get(pos).upper() == "YES" else 8  # YES: a line of stress points follows
    return _f(path, c, pos, 1.0), _f(path, c, pos + 1, 1.0)


def _masses(path, by: dict, node_index, points) -> PointMasses | None:
    cards = by.get("CONM2", [])
    if not cards:
        return None
    nodes, mass, inertia, offset, ids = [], [], [], [], []
    for c in cards:
        gid, cid = _i(path, c, 1), _i(path, c, 2, 0)
        if gid not in node_index:
            _fail(path, c, f"grid point {gid} is not defined.")
        x = np.array([_f(path, c, 4 + k, 0.0) for k in range(3)])
        if cid == -1:
            x = x - points[node_index[gid]]
        elif cid != 0:
            _fail(path, c, f"CID = {cid}: only the basic system (0) or -1 is supported.")
        i11, i21, i22, i31, i32, i33 = (_f(path, c, 8 + k, 0.0) for k in range(6))
        nodes.append(node_index[gid])
        mass.append(_f(path, c, 3, 0.0))
        # Nastran's I21, I31, I32 are the negatives of the products of inertia: the tensor is [[I11, -I21, ..]]
        inertia.append([[i11, -i21, -i31], [-i21, i22, -i32], [-i31, -i32, i33]])
        offset.append(x)
        ids.append(_i(path, c, 0))
    return PointMasses.from_values(nodes, mass, np.array(inertia), np.array(offset), ids)


def _springs(path, by: dict, node_index, node_xyz) -> Springs | None:
    pelas = {}
    for c in by.get("PELAS", []):
        for base in (0, 4):
            if c.get(base):
                pelas[_i(path, c, base)] = _f(path, c, base + 1)
    pbush = {}
    for c in by.get("PBUSH", []):
        k = c.fields[2:8] if c.get(1).upper() == "K" else ()
        if c.get(1).upper() != "K":
            _fail(path, c, "only the stiffness line ('K', K1-K6) is supported.")
        pbush[_i(path, c, 0)] = [nastran_float(v, 0.0) for v in k]
    nodes, coef, stiff, ids = [], [], [], []

    def scalar(c: Card, k: float, g1: int, c1: int, g2: int | None, c2: int | None) -> None:
        row = np.zeros((2, 6))
        ends = [-1, -1]
        for e, (g, comp) in enumerate(((g1, c1), (g2, c2))):
            if g is None or g == 0:
                continue
            if g not in node_index:
                _fail(path, c, f"grid point {g} is not defined.")
            if comp is None or not 1 <= comp <= 6:
                _fail(path, c, f"component {comp} must be 1-6 (scalar points are not supported).")
            ends[e] = node_index[g]
            row[e, comp - 1] = 1.0 if e == 0 else -1.0
        if ends[0] < 0:
            ends, row = [ends[1], -1], -row[::-1]
        nodes.append(ends)
        coef.append(row)
        stiff.append(k)
        ids.append(_i(path, c, 0))

    for c in by.get("CELAS1", []):
        pid = _i(path, c, 1, _i(path, c, 0))
        if pid not in pelas:
            _fail(path, c, f"property {pid} is not a PELAS card.")
        scalar(c, pelas[pid], _i(path, c, 2), _i(path, c, 3, 0), _i(path, c, 4), _i(path, c, 5))
    for c in by.get("CELAS2", []):
        scalar(c, _f(path, c, 1), _i(path, c, 2), _i(path, c, 3, 0), _i(path, c, 4), _i(path, c, 5))
    for c in by.get("CBUSH", []):
        pid = _i(path, c, 1, _i(path, c, 0))
        if pid not in pbush:
            _fail(path, c, f"property {pid} is not a PBUSH card.")
        ga, gb, cid = _i(path, c, 2), _i(path, c, 3), _i(path, c, 7)
        if _i(path, c, 9, -1) != -1 or any(c.get(i) for i in range(10, 13)):
            _fail(path, c, "spring offsets OCID/S1-S3 are not supported.")
        s_loc = _f(path, c, 8, 0.5)
        if ga not in node_index or (gb is not None and gb not in node_index):
            _fail(path, c, "GA or GB is not a defined grid point.")
        if cid == 0:
            axes = np.eye(3)
        elif cid is None:
            if gb is None or np.allclose(node_xyz[ga], node_xyz[gb]):
                _fail(path, c, "coincident or grounded CBUSH needs CID (0: basic axes).")
            x = node_xyz[gb] - node_xyz[ga]
            x /= np.linalg.norm(x)
            v = _orientation(path, c, node_xyz, ga, 4)
            y = v - (v @ x) * x
            if np.isnan(y).any() or np.linalg.norm(y) == 0:
                _fail(path, c, "the orientation vector is missing or along GA-GB.")
            y /= np.linalg.norm(y)
            axes = np.array([x, y, np.cross(x, y)])
        else:
            _fail(path, c, f"CID = {cid}: only the basic system (0) or the element axes (blank) are supported.")
        xa = node_xyz[ga]
        xb = node_xyz[gb] if gb is not None else xa
        p_loc = xa + s_loc * (xb - xa)  # the spring's location, joined to GA and GB by rigid links
        for d, k in enumerate(pbush[pid]):
            if k == 0.0:
                continue
            row = np.zeros((2, 6))
            e = axes[d % 3]
            if d < 3:
                row[0, :3], row[0, 3:] = e, np.cross(p_loc - xa, e)
                row[1, :3], row[1, 3:] = -e, -np.cross(p_loc - xb, e)
            else:
                row[0, 3:], row[1, 3:] = e, -e
            nodes.append([node_index[ga], node_index[gb] if gb is not None else -1])
            coef.append(row)
            stiff.append(k)
            ids.append(_i(path, c, 0))
    if not nodes:
        return None
    return Springs(np.array(nodes), np.array(coef), np.array(stiff), np.array(ids))
