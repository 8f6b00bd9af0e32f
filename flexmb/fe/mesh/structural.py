"""The structural (non-solid) part of an FEMesh: validation, and the per-cell data of its shells and
beams (section, material and per-element overrides resolved into arrays for the element kernels).

``FEMesh.shells`` (``"triangle"``, ``"quad"``) and ``FEMesh.beams`` (``"line"``) hold cells like
``FEMesh.cells``; their section comes from ``FEMesh.sections`` (element set -> :class:`ShellSection`
or :class:`BeamSection`; the key ``"*"`` applies to every cell of the section's kind that no named
set covers), their material from ``FEMesh.materials`` by the same rule as solid cells. Per-element
values of the file override the section's (``FEMesh.element_data``, NaN where not given):

- ``element_data["quad" | "triangle"]["offset"]`` (m,): mid-surface offset (Nastran ZOFFS);
- ``element_data["line"]["orientation"]`` (m, 3): approximate local y axis (Nastran CBAR v);
- ``element_data["line"]["offset_a"]``, ``["offset_b"]`` (m, 3): global offset vectors of the
  beam ends from its nodes (Nastran WA, WB).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.fe.elements.beam import BEAM_TYPES
from flexmb.fe.elements.shell import SHELL_TYPES
from flexmb.fe.mesh.sections import BeamSection, PointMasses, ShellSection, Springs
from flexmb.fe.mesh.unassembled import Unassembled

__all__ = ["BEAM_TYPES", "SHELL_TYPES", "beam_cell_data", "check_structural", "renumbered", "rows_by_section",
           "shell_cell_data", "solid_part", "structural_mass"]

_ELEMENT_DATA = {"triangle": {"offset": ()}, "quad": {"offset": ()},
                 "line": {"orientation": (3,), "offset_a": (3,), "offset_b": (3,)}}


def check_structural(n_nodes: int, shells, beams, sections, element_data, point_masses, springs):
    """Validated copies of the structural fields of an FEMesh (ModelError naming the field)."""
    out = []
    for name, blocks, allowed in (("shells", shells, SHELL_TYPES), ("beams", beams, BEAM_TYPES)):
        if not isinstance(blocks, Mapping):
            raise ModelError(f"FEMesh: `{name}` must be a dict {{cell type: (n, k) node indices}}.")
        norm = {}
        for t, c in blocks.items():
            if t not in allowed:
                raise ModelError(f"FEMesh.{name}: cell type {t!r} is not assembled; use {sorted(allowed)}.")
            c = np.array(c, dtype=np.int64).reshape(-1, allowed[t])
            if c.size and (c.min() < 0 or c.max() >= n_nodes):
                raise ModelError(f"FEMesh.{name}[{t!r}] references node index {int(c.max())} but there are "
                                 f"{n_nodes} nodes.")
            if len(c):
                c.flags.writeable = False
                norm[t] = c
        out.append(norm)
    secs = dict(sections)
    for key, sec in secs.items():
        if not isinstance(sec, (ShellSection, BeamSection)):
            raise ModelError(f"FEMesh.sections[{key!r}] is a {type(sec).__name__}; give a ShellSection or BeamSection.")
    out.append(secs)
    data = {}
    for t, fields in dict(element_data).items():
        if t not in _ELEMENT_DATA:
            raise ModelError(f"FEMesh.element_data: unknown cell type {t!r}; known: {sorted(_ELEMENT_DATA)}.")
        m = len((out[0] if t in SHELL_TYPES else out[1]).get(t, ()))
        data[t] = {}
        for f, v in fields.items():
            if f not in _ELEMENT_DATA[t]:
                raise ModelError(f"FEMesh.element_data[{t!r}]: unknown field {f!r}; known: {sorted(_ELEMENT_DATA[t])}.")
            a = np.asarray(v, dtype=float).reshape((m,) + _ELEMENT_DATA[t][f])
            data[t][f] = a
    out.append(data)
    for name, value, cls in (("point_masses", point_masses, PointMasses), ("springs", springs, Springs)):
        if value is not None and not isinstance(value, cls):
            raise ModelError(f"FEMesh: `{name}` must be a {cls.__name__} or None.")
        if value is not None and len(value):
            nodes = value.nodes
            if nodes.max() >= n_nodes:
                raise ModelError(f"FEMesh.{name}: node index {int(nodes.max())} but there are {n_nodes} nodes.")
        out.append(value if value is not None and len(value) else None)
    return tuple(out)


def rows_by_section(mesh, blocks: dict, kind: type, what: str) -> dict[str, list]:
    """For every type of ``blocks``: a list (per row) of the section of ``kind`` that applies
    (ModelError naming the cells without one)."""
    out = {}
    for t, conn in blocks.items():
        rows = [None] * len(conn)
        default = mesh.sections.get("*")
        if isinstance(default, kind):
            rows = [default] * len(conn)
        for name, sec in mesh.sections.items():
            if name == "*":
                continue
            if name not in mesh.element_sets:
                raise ModelError(f"sections: element set {name!r} does not exist in {mesh.source or 'the mesh'}; "
                                 f"known sets: {sorted(mesh.element_sets) or 'none'}.")
            sel = mesh.element_sets[name].get(t)
            if sel is None or not sel.size:
                continue
            if not isinstance(sec, kind):
                raise ModelError(f"sections[{name!r}] is a {type(sec).__name__} but the set holds {t} {what} cells; "
                                 f"give a {kind.__name__}.")
            for r in sel:
                rows[r] = sec
        missing = [r for r, s in enumerate(rows) if s is None]
        if missing:
            ids = mesh.cell_ids[t][missing]
            raise ModelError(
                f"{len(missing)} {what} cell(s) ({t}) of {mesh.source or 'the mesh'} have no section (element ids "
                f"{', '.join(str(int(i)) for i in ids[:10])}{', ...' if len(ids) > 10 else ''}). Give one with "
                f"sections={{element set: {kind.__name__}(...)}} (read_mesh / FEMesh.with_sections; '*' = every "
                f"{what} cell)."
            )
        out[t] = rows
    return out


def _override(base: NDArray[np.float64], mesh, t: str, name: str) -> NDArray[np.float64]:
    given = mesh.element_data.get(t, {}).get(name)
    if given is None:
        return base
    keep = np.isnan(given) if given.ndim == 1 else np.isnan(given).any(axis=-1)
    return np.where(keep if given.ndim == 1 else keep[:, None], base, given)


def shell_cell_data(mesh, materials=None) -> dict[str, dict[str, NDArray[np.float64]]]:
    """Per-cell arrays (m,) of every shell type: E, nu, rho (Pa, -, kg/m^3), t, z0 (m), k, nsm."""
    mats = mesh.structural_materials(materials)
    secs = rows_by_section(mesh, mesh.shells, ShellSection, "shell")
    out = {}
    for t, rows in secs.items():
        arr = np.array([(s.thickness, s.offset, s.shear_factor, s.nsm) for s in rows]).reshape(-1, 4)
        out[t] = dict(E=mats[t][:, 0], nu=mats[t][:, 1], rho=mats[t][:, 2], t=arr[:, 0],
                      z0=_override(arr[:, 1], mesh, t, "offset"), k=arr[:, 2], nsm=arr[:, 3])
    return out


def beam_cell_data(mesh, materials=None) -> dict[str, NDArray[np.float64]]:
    """Per-cell arrays of the beams (m cells): E, nu, rho, A, Iy, Iz, J, ky, kz, nsm, polar (m,), fibres
    (m, 16, 2) (extreme fibres, local y, z from the centroid: :meth:`BeamSection.fibres`),
    orientation (m, 3) (NaN: none given, the section is rotationally symmetric), centroid (m, 2)
    (local y, z), offset_a, offset_b (m, 3) (global)."""
    if "line" not in mesh.beams:
        return {}
    mats = mesh.structural_materials(materials)["line"]
    rows = rows_by_section(mesh, mesh.beams, BeamSection, "beam")["line"]
    m = len(rows)
    shear = np.array([s.shear_factors(nu) for s, nu in zip(rows, mats[:, 1])]).reshape(m, 2)
    orient = np.array([s.orientation if s.orientation is not None else (np.nan,) * 3 for s in rows]).reshape(m, 3)
    orient = _override(orient, mesh, "line", "orientation")
    data = dict(
        E=mats[:, 0], nu=mats[:, 1], rho=mats[:, 2],
        A=np.array([s.area for s in rows]), Iy=np.array([s.iy for s in rows]), Iz=np.array([s.iz for s in rows]),
        J=np.array([s.j for s in rows]), ky=shear[:, 0], kz=shear[:, 1], nsm=np.array([s.nsm for s in rows]),
        polar=np.array([s.polar if s.polar is not None else s.iy + s.iz for s in rows]),
        fibres=np.array([s.fibres() for s in rows]).reshape(m, 16, 2),
        orientation=orient, centroid=np.array([s.centroid for s in rows]).reshape(m, 2),
        offset_a=np.nan_to_num(_override(np.zeros((m, 3)), mesh, "line", "offset_a")),
        offset_b=np.nan_to_num(_override(np.zeros((m, 3)), mesh, "line", "offset_b")),
    )
    symmetric = np.isclose(data["Iy"], data["Iz"], rtol=1e-12) & np.all(data["centroid"] == 0.0, axis=1)
    bad = np.isnan(orient).any(axis=1) & ~symmetric
    if bad.any():
        ids = mesh.cell_ids["line"][bad]
        raise ModelError(
            f"{int(bad.sum())} beam cell(s) of {mesh.source or 'the mesh'} have an unsymmetric section (Iy != Iz or an "
            f"offset centroid) and no orientation (element ids {', '.join(str(int(i)) for i in ids[:10])}). Give "
            "BeamSection(..., orientation=(x, y, z)), the approximate direction of the local y axis."
        )
    return data


def structural_mass(mesh, materials=None) -> float:
    """Total mass (kg) of the shells (rho t + nsm per area), beams ((rho A + nsm) per length) and
    point masses of ``mesh``."""
    from flexmb.fe.elements.beam import beam_frames
    from flexmb.fe.elements.shell import areas

    total = 0.0
    if mesh.shells:
        for t, d in shell_cell_data(mesh, materials).items():
            total += float(((d["rho"] * d["t"] + d["nsm"]) * areas(t, mesh.points[mesh.shells[t]])).sum())
    if mesh.beams:
        d = beam_cell_data(mesh, materials)
        length = beam_frames(mesh.points[mesh.beams["line"]], d)[1]
        total += float(((d["rho"] * d["A"] + d["nsm"]) * length).sum())
    if mesh.point_masses is not None:
        total += mesh.point_masses.total_mass
    return total


def renumbered(mesh, new_index: NDArray[np.int64]) -> dict:
    """The structural fields of ``mesh`` with node ``a`` renumbered ``new_index[a]`` (for
    ``FEMesh.compacted``)."""
    pm, sp = mesh.point_masses, mesh.springs
    if pm is not None:
        pm = PointMasses(new_index[pm.nodes], pm.matrix, pm.ids)
    if sp is not None:
        sp = Springs(np.where(sp.nodes >= 0, new_index[np.maximum(sp.nodes, 0)], -1), sp.coef, sp.stiffness, sp.ids)
    return dict(shells={t: new_index[c] for t, c in mesh.shells.items()},
                beams={t: new_index[c] for t, c in mesh.beams.items()}, point_masses=pm, springs=sp)


def solid_part(mesh) -> dict:
    """The fields that make ``mesh`` its solid part (``FEMesh.solid_only``): shells, beams, point
    masses and springs moved to ``unassembled``, sets and materials of the solid cells kept."""
    moved = [Unassembled(t, "shell", len(c), mesh.cell_ids[t]) for t, c in mesh.shells.items()]
    moved += [Unassembled(t, "beam", len(c), mesh.cell_ids[t]) for t, c in mesh.beams.items()]
    if mesh.point_masses is not None:
        moved.append(Unassembled("point mass", "point mass", len(mesh.point_masses), mesh.point_masses.ids))
    if mesh.springs is not None:
        moved.append(Unassembled("spring", "spring", len(mesh.springs), mesh.springs.ids))
    keep = set(mesh.cells)
    sets = {k: {t: r for t, r in v.items() if t in keep} for k, v in mesh.element_sets.items()}
    return dict(shells={}, beams={}, sections={}, element_data={}, point_masses=None, springs=None,
                element_sets=sets, cell_ids={t: i for t, i in mesh.cell_ids.items() if t in keep},
                unassembled=(*mesh.unassembled, *moved),
                materials={k: m for k, m in mesh.materials.items()
                           if k == "*" or any(r.size for r in sets.get(k, {}).values())})
