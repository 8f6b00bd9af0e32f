"""Mesh checks: connectivity, inverted and degenerate cells, unused nodes, and the plausibility note
(size, mass, first frequency, unit-system hint)."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.elements.solid import ELEMENTS, get_element, isoparametric_map
from flexmb.fe.mesh.femesh import FEMesh, format_ids
from flexmb.fe.mesh.unassembled import describe

logger = logging.getLogger(__name__)


def _require_mesh(mesh, where: str) -> None:
    """A ModelError for anything but an FEMesh (a path gets the call that reads it)."""
    if isinstance(mesh, FEMesh):
        return
    hint = f"read it first: flexmb.read_mesh({str(mesh)!r})" if isinstance(mesh, (str, Path)) else \
        "give one from flexmb.read_mesh(path) or flexmb.structured_box(...)"
    raise ModelError(f"{where}: mesh={mesh!r} ({type(mesh).__name__}) is not an FEMesh; {hint}.")


def connected_components(mesh: FEMesh) -> tuple[int, NDArray[np.int64]]:
    """Connected components of the elements (solid, shell and beam cells, two-node springs) through
    shared nodes.

    Returns
    -------
    n_components : int
        Number of components among the used nodes.
    labels : ndarray, shape (n_nodes,)
        Component label of each node; -1 for unused nodes.
    """
    from scipy.sparse.csgraph import connected_components as cc

    n = mesh.n_nodes
    rows, cols = [], []
    for conn in (*mesh.cells.values(), *mesh.shells.values(), *mesh.beams.values()):
        # a chain through each cell's nodes connects them all
        rows.append(conn[:, :-1].ravel())
        cols.append(conn[:, 1:].ravel())
    if mesh.springs is not None:  # a spring between two nodes connects them
        pair = mesh.springs.nodes[mesh.springs.nodes[:, 1] >= 0]
        rows.append(pair[:, 0])
        cols.append(pair[:, 1])
    if not rows:
        return 0, np.full(n, -1)
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    g = sp.coo_array((np.ones(r.size), (r, c)), shape=(n, n)).tocsr()
    _, labels = cc(g, directed=False)
    used = mesh.used_nodes()
    lab = np.full(n, -1)
    _, lab_used = np.unique(labels[used], return_inverse=True)
    lab[used] = lab_used.ravel()
    return int(lab_used.max() + 1) if used.size else 0, lab


def _degenerate_structural(mesh: FEMesh) -> list[str]:
    """Shell cells with a non-positive area Jacobian, beams of zero length."""
    from flexmb.fe.elements.shell import area_jacobians

    out = []
    for t, conn in mesh.shells.items():
        coords = mesh.points[conn]
        size = np.ptp(coords, axis=1).max(axis=1)
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~(area_jacobians(t, coords).min(axis=1) > 1e-8 * size**2))
        if bad.size:
            out.append(f"{bad.size} degenerate or folded {t} shell element(s) (zero or negative area; ids "
                       f"{format_ids(mesh.cell_ids[t][bad])})")
    for t, conn in mesh.beams.items():
        length = np.linalg.norm(mesh.points[conn[:, 1]] - mesh.points[conn[:, 0]], axis=1)
        bad = np.flatnonzero(~(length > 0))
        if bad.size:
            out.append(f"{bad.size} beam element(s) of zero length (ids {format_ids(mesh.cell_ids[t][bad])})")
    return out


def check_mesh(mesh: FEMesh, *, rel_tol: float = 1e-8, solid_required: bool = False) -> list[str]:
    """Check a mesh; raise on fatal problems, return warnings.

    Fatal (``MeshImportError``): unsupported solid cell types, non-finite (NaN, inf) coordinates of
    nodes used by solid cells, inverted cells (negative Jacobian determinant at a quadrature point)
    or degenerate cells (|det J| < ``rel_tol`` * h^3 relative to the cell size h, zero volume), node
    sets naming missing nodes, and, with ``solid_required`` (the modes path:
    :func:`~flexmb.fe.reduction.body_data.build_flexible_body`, ``flexmb modes``), a mesh without solid cells
    (surface-only). The message names the node or element ids (at most 10, plus the count) and the fix.

    Warnings (returned strings, also logged): several disconnected parts (each adds six rigid-body
    modes), nodes that no solid cell uses, no solid cells at all, elements of the file that are not
    assembled (``mesh.unassembled``: shells, beams, point masses, ...).

    Returns
    -------
    list of str
    """
    _require_mesh(mesh, "check_mesh")
    name = Path(mesh.source).name if mesh.source else "mesh"
    warnings: list[str] = []
    unsupported = sorted(t for t in mesh.cells if t not in ELEMENTS)
    if unsupported:
        raise MeshImportError(
            f"{name}: unsupported cell type(s) {', '.join(unsupported)}; supported: {', '.join(sorted(ELEMENTS))}."
        )
    for set_name, idx in mesh.node_sets.items():
        bad = idx[(idx < 0) | (idx >= mesh.n_nodes)]
        if bad.size:
            raise MeshImportError(
                f"{name}: node set {set_name!r} names {bad.size} missing node(s) (indices {format_ids(bad)}); "
                f"the mesh has {mesh.n_nodes} nodes."
            )
    for set_name, by_type in mesh.element_sets.items():
        for t, rows in by_type.items():
            n_t = len({**mesh.shells, **mesh.beams, **mesh.cells}.get(t, ()))
            if rows.size and (rows.min() < 0 or rows.max() >= n_t):
                raise MeshImportError(f"{name}: element set {set_name!r} names {t} rows beyond the {n_t} cells.")
    if not mesh.cells and (solid_required or not (mesh.shells or mesh.beams)):
        msg = (f"{name}: no solid cells (only surface/line cells or none): nothing to assemble. A flexible body "
               "needs a volume mesh: mesh the volume (Gmsh: 3D mesh, with the volume in a physical group); shells "
               "and beams are assembled when their element sets have sections (read_mesh(..., sections=...)).")
        if solid_required:
            raise MeshImportError(msg)
        warnings.append(msg)
    used = mesh.used_nodes()
    nonfinite = used[~np.isfinite(mesh.points[used]).all(axis=1)]
    if nonfinite.size:
        raise MeshImportError(
            f"{name}: {nonfinite.size} node(s) used by solid cells have non-finite coordinates (ids "
            f"{format_ids(mesh.node_ids[nonfinite])}, first {mesh.points[nonfinite[0]].tolist()}); "
            "fix the coordinates (they come from the file or the code that built the mesh)."
        )
    bad_msgs = []
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        coords = mesh.points[conn]
        det_j, _ = isoparametric_map(elem, coords, elem.stiffness_rule.points)
        h = np.ptp(coords, axis=1).max(axis=1)  # cell size (m)
        scale = np.maximum(h, np.finfo(float).tiny) ** 3 / elem.ref_volume
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = det_j.min(axis=1) / scale
        inverted = np.flatnonzero(rel < 0.0)
        degenerate = np.flatnonzero(~(rel >= rel_tol) & ~(rel < 0.0))  # NaN: all nodes coincide
        if inverted.size:
            bad_msgs.append(
                f"{inverted.size} inverted {t} element(s) (negative Jacobian determinant; ids "
                f"{format_ids(mesh.cell_ids[t][inverted])})"
            )
        if degenerate.size:
            bad_msgs.append(
                f"{degenerate.size} degenerate {t} element(s) (zero volume; ids "
                f"{format_ids(mesh.cell_ids[t][degenerate])})"
            )
    bad_msgs += _degenerate_structural(mesh)
    if bad_msgs:
        raise MeshImportError(
            f"{name}: " + "; ".join(bad_msgs) + ". Fix the node ordering or re-mesh "
            "(Gmsh: Mesh.Optimize / Mesh.OptimizeNetgen; check the orientation of the source geometry)."
        )
    n_unused = mesh.n_nodes - mesh.used_nodes().size
    if n_unused and (mesh.cells or mesh.has_structural):
        unused = np.setdiff1d(np.arange(mesh.n_nodes), mesh.used_nodes())
        warnings.append(
            f"{name}: {n_unused} node(s) used by no element (ids {format_ids(mesh.node_ids[unused])}); "
            "they carry no stiffness or mass (drop them with read_mesh(..., drop_unused_nodes=True))."
        )
    structural = [e for e in mesh.unassembled if e.structural]
    if structural:
        warnings.append(
            f"{name}: the file holds elements that flexmb does not assemble: {describe(structural)}; the solid "
            "model misses their stiffness and mass (build_flexible_body and `flexmb modes` refuse it unless "
            "allow_unassembled=True / --allow-unassembled)."
        )
    n_comp, _ = connected_components(mesh)
    if n_comp > 1:
        warnings.append(
            f"{name}: {n_comp} disconnected parts: a free-free analysis has {6 * n_comp} rigid-body modes "
            f"instead of 6 ({6 * (n_comp - 1)} extra). Merge coincident nodes or connect the parts."
        )
    for w in warnings:
        logger.warning(w)
    return warnings


#: plausibility rule: material constants that look SI (Pa, kg/m^3) ...
SI_LIKE_E, SI_LIKE_RHO = 1e8, 100.0
#: ... on a mesh whose largest extent exceeds this many length units suggest a mesh in mm
MM_SIZE = 10.0
#: material constants that look mm-t-s (MPa, t/mm^3) on a mesh smaller than MM_T_S_SIZE units suggest m
MMTS_RHO, MMTS_SIZE = 1e-3, 1.0


#: bar wave speeds sqrt(E / rho) of solids (m/s): soft rubbers and foams (~30) to beryllium and
#: diamond (~13000-18000); a material outside this range has E and rho in different unit systems
#: (E = 210 with rho = 7.85: GPa with g/cm^3 in a mesh in m gives a bar 1000 times too slow)
WAVE_SPEED_SOLIDS = (20.0, 2.5e4)
#: unit-system label (as ``FEMesh.units`` / ``Model(units=)``, lower case) -> (length in m, time in s)
_LENGTH_TIME = {"si": (1.0, 1.0), "m-kg-s": (1.0, 1.0), "ft-slug-s": (0.3048, 1.0), "ft-lbf-s": (0.3048, 1.0),
                "in-lbf-s": (0.0254, 1.0), "mm-t-s": (1e-3, 1.0), "mm-kg-ms": (1e-3, 1e-3), "mm-kg-s": (1e-3, 1.0),
                "cm-g-s": (1e-2, 1.0)}


def wave_speed_warning(name: str, materials: dict, units: str | None) -> str | None:
    """A WARNING text when a material's bar wave speed ``sqrt(E / rho)`` is far outside that of
    solids (:data:`WAVE_SPEED_SOLIDS`, converted to the unit system ``units``; None: SI assumed; a
    label flexmb does not know: no check), else None.

    Parameters
    ----------
    name : str
        File or mesh name for the message.
    materials : dict of str to dict
        ``FEMesh.summary()["materials"]``: set -> {name, E, nu, rho}.
    units : str or None
        The mesh's unit-system label.
    """
    key = (units or "SI").strip().lower()
    if key not in _LENGTH_TIME:
        return None
    length, time = _LENGTH_TIME[key]
    unit = "m/s" if key in ("si", "m-kg-s") else f"length/time of {units}"
    lo, hi = (v * time / length for v in WAVE_SPEED_SOLIDS)
    for m in materials.values():
        c = float(np.sqrt(m["E"] / m["rho"]))
        if lo <= c <= hi:
            continue
        side = "far below" if c < lo else "far above"
        label = f"units {units!r}" if units else "SI (the mesh declares no units)"
        return (
            f"{name}: material {m['name']!r} (E = {m['E']:.4g}, rho = {m['rho']:.4g}) has a bar wave speed sqrt(E/rho) "
            f"= {c:.3g} {unit}, {side} that of solids ({lo:.3g} .. {hi:.3g} {unit} in {label}): E and rho look like "
            "they are in different unit systems (E = 210 with rho = 7.85 is GPa with g/cm^3; the frequencies are "
            "then about 1000 times too low). Give E and rho in one system (SI: steel E = 210e9 Pa, rho = 7850 "
            "kg/m^3), or declare the mesh's units (read_mesh(..., units=...)); ignore this for a material that "
            "really is that soft or stiff."
        )
    return None


def plausibility(mesh: FEMesh, materials=None, *, f1: float | None = None) -> dict:
    """A plausibility note: size, mass, first frequency, and a unit-system hint.

    Rule (a WARNING, not an error: the numbers may be right): every material with ``E >= 1e8`` and
    ``rho >= 100`` (values that only SI, Pa and kg/m^3, gives a structural solid) on a mesh whose
    largest bounding-box extent exceeds 10 length units suggests a mesh in mm with an SI material:
    then the mass is 1e9 times and the frequencies are 1000 times off (too heavy, too low). The
    converse, ``rho < 1e-3`` (t/mm^3-like) on a mesh under 1 length unit, suggests a mesh in m with
    an mm-t-s material (frequencies 1000 times too high). Independently of the mesh, a material whose
    bar wave speed ``sqrt(E / rho)`` is far outside that of solids in the mesh's unit system
    (:func:`wave_speed_warning`) has E and rho in different systems (E = 210 with rho = 7.85 for steel:
    a 1 m bar at 1.9 Hz).

    Parameters
    ----------
    mesh : FEMesh
    materials : Material or dict, optional
        Override ``mesh.materials`` (as :meth:`FEMesh.cell_materials`).
    f1 : float, optional
        First elastic (or fixed-interface) frequency (Hz), when known.

    Returns
    -------
    dict
        ``size`` (largest extent, length unit), ``extent`` (3,), ``mass`` (None without materials),
        ``f1``, ``warning`` (str or None) and ``note`` (one line, also logged at INFO).
    """
    _require_mesh(mesh, "plausibility")
    name = Path(mesh.source).name if mesh.source else "mesh"
    lo, hi = mesh.bounding_box()
    extent = hi - lo
    size = float(extent.max())
    summary = mesh.summary(materials)
    mass = summary["mass"]
    mats = list(summary["materials"].values())
    warning = None
    if mats and all(m["E"] >= SI_LIKE_E and m["rho"] >= SI_LIKE_RHO for m in mats) and size > MM_SIZE:
        warning = (
            f"{name}: the mesh is {size:.4g} length units across with SI-like material constants (E = "
            f"{mats[0]['E']:.3g}, rho = {mats[0]['rho']:.4g}): if the mesh is in mm, the mass is 1e9 times too "
            "large and the frequencies 1000 times too low. Scale the mesh to m (points * 1e-3) or give E in "
            "MPa and rho in t/mm^3; ignore this if the part really is that large in m."
        )
    elif mats and all(m["rho"] < MMTS_RHO for m in mats) and size < MMTS_SIZE:
        warning = (
            f"{name}: the mesh is {size:.4g} length units across with a density of {mats[0]['rho']:.3g} (t/mm^3-"
            "like): if the mesh is in m with an mm-t-s material, the frequencies are 1000 times too high. Use "
            "one unit system (SI: E in Pa, rho in kg/m^3)."
        )
    wave = wave_speed_warning(name, summary["materials"], mesh.units)
    if wave:
        warning = wave if warning is None else f"{warning} {wave}"
    parts = [f"size {extent[0]:.4g} x {extent[1]:.4g} x {extent[2]:.4g}"]
    parts.append(f"mass {mass:.4g}" if mass is not None else "mass unknown (no material)")
    if f1 is not None:
        parts.append(f"f1 {f1:.4g} Hz")
    note = f"{name}: " + ", ".join(parts) + (f" (units: {mesh.units})" if mesh.units else "")
    logger.info("plausibility: %s", note)
    if warning:
        logger.warning(warning)
    return dict(size=size, extent=extent.tolist(), mass=mass, f1=f1, warning=warning, note=note)
