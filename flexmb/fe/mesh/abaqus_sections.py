"""Abaqus shell, beam, mass and spring properties: ``*SHELL SECTION``, ``*SHELL GENERAL SECTION``,
``*BEAM SECTION`` (SECTION = RECT, CIRC, PIPE, BOX, I), ``*BEAM GENERAL SECTION`` (GENERAL or those
shapes, material inline), ``*MASS``, ``*ROTARY INERTIA`` and ``*SPRING``, resolved on the element sets
of an input read by :mod:`flexmb.fe.mesh.abaqus`.

Conventions (Abaqus Analysis User's Guide, "Beam cross-section library", "Shell section behavior"):
shell OFFSET = SPOS, SNEG, MIDSURFACE or a fraction f of the thickness (the reference surface lies
``f t`` above the mid-surface, so the mid-surface offset is ``-f t``); beam n1 (the local 1 axis =
flexmb's local y) from the section's second data line, default (0, 0, -1); I11 = Iy, I22 = Iz. Beam
shapes follow :class:`~flexmb.fe.mesh.sections.BeamSection`'s constructors. ``*ROTARY INERTIA``
I11, I22, I33, I12, I13, I23 about the node in the global axes. ``*SPRING`` for SPRING1 (DOF i to
ground), SPRING2 (DOF i of the first node, DOF j of the second) and SPRINGA (along the line of its
nodes); linear only, without ORIENTATION.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.mesh.femesh import Material
from flexmb.fe.mesh.sections import BeamSection, PointMasses, ShellSection, Springs

__all__ = ["SECTION_KEYWORDS", "STRUCTURAL_TYPES", "resolve"]

#: Abaqus element types flexmb assembles besides solids -> RawMesh block type
STRUCTURAL_TYPES: dict[str, str] = {
    **dict.fromkeys(("S3", "S3R", "STRI3"), "shell:triangle"),
    **dict.fromkeys(("S4", "S4R", "S4R5"), "shell:quad"),
    **dict.fromkeys(("B31", "B31H", "B33", "B33H"), "beam:line"),
    **{t: f"abaqus:{t}" for t in ("MASS", "ROTARYI", "SPRING1", "SPRING2", "SPRINGA")},
}
#: keywords this module resolves
SECTION_KEYWORDS = ("SHELL SECTION", "SHELL GENERAL SECTION", "BEAM SECTION", "BEAM GENERAL SECTION", "MASS",
                    "ROTARY INERTIA", "SPRING")


def _numbers(fname, no, s) -> list[float]:
    try:
        return [float(v) for v in s.rstrip(",").split(",") if v.strip()]
    except ValueError as exc:
        raise MeshImportError(f"{fname}, line {no}: cannot read numbers from {s[:60]!r} ({exc}).") from exc


def material_from(materials_raw: dict, name: str, where: tuple[str, int], keyword: str) -> Material:
    """The Material of ``*MATERIAL, NAME=name`` (``*ELASTIC``, ``*DENSITY``)."""
    fname, no = where
    raw = materials_raw.get(name.upper())
    if raw is None:
        raise MeshImportError(
            f"{fname}, line {no}: *{keyword} uses material {name!r}, which no *MATERIAL defines "
            f"(defined: {sorted(m['name'] for m in materials_raw.values()) or 'none'})."
        )
    missing = [kw for kw in ("ELASTIC", "DENSITY") if kw not in raw]
    if missing:
        raise MeshImportError(
            f"{fname}, line {no}: material {raw['name']!r} has no *{' or *'.join(missing)}; add it to the input "
            "(flexmb needs E, nu and rho)."
        )
    e, nu = raw["ELASTIC"]
    (rho,) = raw["DENSITY"]
    try:
        return Material(e, nu, rho, name=str(raw["name"]))
    except ModelError as exc:
        raise MeshImportError(f"{fname}, line {no}: {exc}") from exc


def _shape(kind: str, dims: list[float], where, **kw) -> BeamSection:
    fname, no = where
    need = {"RECT": 2, "CIRC": 1, "PIPE": 2, "BOX": 6, "I": 7}
    if kind not in need:
        raise MeshImportError(f"{fname}, line {no}: beam SECTION={kind} is not supported; use RECT, CIRC, PIPE, "
                              "BOX, I or GENERAL.")
    if len(dims) < need[kind]:
        raise MeshImportError(f"{fname}, line {no}: SECTION={kind} needs {need[kind]} dimensions, got {dims}.")
    d = dims[: need[kind]]
    make = {"RECT": BeamSection.rectangle, "CIRC": BeamSection.circle, "PIPE": BeamSection.pipe,
            "BOX": BeamSection.box, "I": BeamSection.i_section}[kind]
    return make(*d, **kw)


def _beam(keyword, params, data, where, materials_raw) -> tuple[BeamSection, Material]:
    fname, no = where
    kind = (params.get("SECTION") or ("GENERAL" if keyword == "BEAM GENERAL SECTION" else "")).upper()
    rows = [_numbers(f, n, s) for f, n, s in data]
    if not rows:
        raise MeshImportError(f"{fname}, line {no}: *{keyword} without data lines.")
    n1 = rows[1][:3] if len(rows) > 1 and len(rows[1]) >= 3 else [0.0, 0.0, -1.0]
    name = params.get("ELSET") or "beam"
    try:
        if kind == "GENERAL":
            vals = rows[0] + [0.0] * 5
            area, i11, i12, i22, j = vals[:5]
            if i12 != 0.0:
                raise MeshImportError(f"{fname}, line {no}: I12 != 0 (axes not principal) is not supported; give the "
                                      "principal values and n1 along a principal axis.")
            section = BeamSection(area, i11, i22, j, orientation=tuple(n1), name=name)
        else:
            section = _shape(kind, rows[0], where, orientation=tuple(n1), name=name)
    except ModelError as exc:
        raise MeshImportError(f"{fname}, line {no}: {exc}") from exc
    if keyword == "BEAM SECTION":
        if not params.get("MATERIAL"):
            raise MeshImportError(f"{fname}, line {no}: *BEAM SECTION needs MATERIAL=.")
        return section, material_from(materials_raw, params["MATERIAL"], where, keyword)
    if len(rows) < 3 or len(rows[2]) < 2 or not params.get("DENSITY"):
        raise MeshImportError(f"{fname}, line {no}: *BEAM GENERAL SECTION needs its third data line 'E, G' and "
                              "DENSITY= (flexmb needs E, nu and rho).")
    e, g = rows[2][:2]
    try:
        return section, Material(e, e / (2.0 * g) - 1.0, float(params["DENSITY"]), name=f"{name} (general section)")
    except (ModelError, ValueError) as exc:
        raise MeshImportError(f"{fname}, line {no}: {exc}") from exc


def _shell(keyword, params, data, where, materials_raw) -> tuple[ShellSection, Material]:
    fname, no = where
    if not params.get("MATERIAL"):
        raise MeshImportError(f"{fname}, line {no}: *{keyword} needs MATERIAL= (a section given by its stiffness "
                              "matrix is not supported).")
    rows = [_numbers(f, n, s) for f, n, s in data]
    if not rows or not rows[0]:
        raise MeshImportError(f"{fname}, line {no}: *{keyword} needs the thickness on its data line.")
    t = rows[0][0]
    off = (params.get("OFFSET") or "0").upper()
    frac = {"SPOS": 0.5, "SNEG": -0.5, "MIDSURFACE": 0.0}.get(off)
    try:
        frac = float(off) if frac is None else frac
        section = ShellSection(t, offset=-frac * t, name=params.get("ELSET") or "shell")
    except (ModelError, ValueError) as exc:
        raise MeshImportError(f"{fname}, line {no}: *{keyword}: {exc}") from exc
    return section, material_from(materials_raw, params["MATERIAL"], where, keyword)


def resolve(path, defs, blocks, block_sets, set_key, materials_raw, points: NDArray[np.float64]) -> dict:
    """Sections, materials, point masses and springs of the structural keywords ``defs`` (list of
    (keyword, params, data lines, (file, line))) on the element sets ``block_sets``.

    Returns a dict with ``sections`` and ``materials`` (set name -> value), ``point_masses`` and
    ``springs``. Raises MeshImportError for a structural element without its section or property.
    """
    sections, materials = {}, {}
    masses = {"mass": [], "inertia": []}
    spring_rows = []
    covered = {b: np.zeros(len(blk[2]), bool) for b, blk in enumerate(blocks)}
    for keyword, params, data, where in defs:
        fname, no = where
        elset = params.get("ELSET")
        if not elset:
            raise MeshImportError(f"{fname}, line {no}: *{keyword} without ELSET=.")
        name = set_key.get(elset.upper())
        if name is None or name not in block_sets:
            raise MeshImportError(f"{fname}, line {no}: *{keyword} refers to unknown element set {elset!r}.")
        members = block_sets[name]
        for b, rows in members:
            covered[b][rows] = True
        if keyword in ("SHELL SECTION", "SHELL GENERAL SECTION"):
            sections[name], materials[name] = _shell(keyword, params, data, where, materials_raw)
        elif keyword in ("BEAM SECTION", "BEAM GENERAL SECTION"):
            sections[name], materials[name] = _beam(keyword, params, data, where, materials_raw)
        elif keyword == "MASS":
            vals = _numbers(*data[0]) if data else []
            if not vals:
                raise MeshImportError(f"{fname}, line {no}: *MASS needs the mass on its data line.")
            for b, rows in members:
                if blocks[b][0] == "abaqus:MASS":
                    masses["mass"] += [(int(blocks[b][1][r, 0]), vals[0], int(blocks[b][2][r])) for r in rows]
        elif keyword == "ROTARY INERTIA":
            if params.get("ORIENTATION"):
                raise MeshImportError(f"{fname}, line {no}: *ROTARY INERTIA with ORIENTATION is not supported.")
            v = (_numbers(*data[0]) if data else []) + [0.0] * 6
            j = np.array([[v[0], v[3], v[4]], [v[3], v[1], v[5]], [v[4], v[5], v[2]]])
            for b, rows in members:
                if blocks[b][0] == "abaqus:ROTARYI":
                    masses["inertia"] += [(int(blocks[b][1][r, 0]), j, int(blocks[b][2][r])) for r in rows]
        else:  # SPRING
            if params.get("ORIENTATION") or "NONLINEAR" in params:
                raise MeshImportError(f"{fname}, line {no}: *SPRING with ORIENTATION or NONLINEAR is not supported.")
            if len(data) < 2 and not any(blocks[b][0] == "abaqus:SPRINGA" for b, _ in members):
                raise MeshImportError(f"{fname}, line {no}: *SPRING needs a line of DOFs and a line with the stiffness.")
            dofs = [int(v) for v in _numbers(*data[0])] if len(data) > 1 else []
            k = _numbers(*data[-1])[0]
            for b, rows in members:
                t, conn, ids = blocks[b]
                for r in rows:
                    spring_rows.append(_spring(t, conn[r], dofs, k, int(ids[r]), points, where))
    _require_covered(path, blocks, covered)
    return dict(sections=sections, materials=materials, point_masses=_point_masses(masses),
                springs=_springs(spring_rows))


def _require_covered(path, blocks, covered) -> None:
    need = {"shell": "*SHELL SECTION", "beam:": "*BEAM SECTION", "abaqus:MASS": "*MASS",
            "abaqus:ROTARYI": "*ROTARY INERTIA", "abaqus:SPRING": "*SPRING"}
    for b, (t, _, ids) in enumerate(blocks):
        kw = next((v for k, v in need.items() if t.startswith(k)), None)
        if kw is not None and not covered[b].all():
            bad = ids[~covered[b]]
            raise MeshImportError(
                f"{path.name}: {bad.size} element(s) of type {t.split(':')[-1]} have no {kw} (element ids "
                f"{', '.join(str(int(i)) for i in bad[:10])}); add one for their element set."
            )


def _spring(t, nodes, dofs, k, eid, points, where):
    fname, no = where
    row = np.zeros((2, 6))
    if t == "abaqus:SPRINGA":
        d = points[nodes[0]] - points[nodes[1]]
        if not np.linalg.norm(d) > 0:
            raise MeshImportError(f"{fname}, line {no}: SPRINGA {eid} has coincident nodes (no axis).")
        d = d / np.linalg.norm(d)
        row[0, :3], row[1, :3] = d, -d
        return [int(nodes[0]), int(nodes[1])], row, k, eid
    need = 1 if t == "abaqus:SPRING1" else 2
    if len(dofs) < need or not all(1 <= v <= 6 for v in dofs[:need]):
        raise MeshImportError(f"{fname}, line {no}: *SPRING for {t.split(':')[1]} needs {need} DOF number(s) in 1..6.")
    row[0, dofs[0] - 1] = 1.0
    if need == 1:
        return [int(nodes[0]), -1], row, k, eid
    row[1, dofs[1] - 1] = -1.0
    return [int(nodes[0]), int(nodes[1])], row, k, eid


def _point_masses(masses) -> PointMasses | None:
    parts = []
    if masses["mass"]:
        n, m, ids = zip(*masses["mass"])
        parts.append(PointMasses.from_values(n, m, ids=ids))
    if masses["inertia"]:
        n, j, ids = zip(*masses["inertia"])
        parts.append(PointMasses.from_values(n, 0.0, np.array(j), ids=ids))
    if not parts:
        return None
    return PointMasses(np.concatenate([p.nodes for p in parts]), np.concatenate([p.matrix for p in parts]),
                       np.concatenate([p.ids for p in parts]))


def _springs(rows) -> Springs | None:
    if not rows:
        return None
    nodes, coef, k, ids = zip(*rows)
    return Springs(np.array(nodes), np.array(coef), np.array(k), np.array(ids))
