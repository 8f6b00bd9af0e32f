"""Generate the small meshes shipped in meshes/ and their README table.

Run from the repository root (needs the ``gmsh`` Python package, extra ``flexmb[meshgen]``)::

    python meshes/generate.py

Every mesh is in SI units (m; materials in Pa and kg/m^3). Each function below writes one family of
files and returns their names; ``main`` runs them all and rewrites ``meshes/README.md`` with the
element types, node counts and sha256 checksums.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import meshio
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from flexmb.fe.mesh.readers import read_mesh  # noqa: E402

STEEL = {"E": 210e9, "nu": 0.3, "rho": 7850.0, "name": "steel"}
FV12 = {"E": 200e9, "nu": 0.3, "rho": 8000.0, "name": "fv12"}


def _gmsh():
    import gmsh

    if not gmsh.isInitialized():
        gmsh.initialize(["-noenv"], readConfigFiles=False)
    gmsh.option.setNumber("General.Terminal", 0)
    gmsh.option.setNumber("General.NumThreads", 1)
    gmsh.option.setNumber("Mesh.RandomSeed", 1)
    return gmsh


def _box_faces(gmsh, lo, hi, eps=1e-6):
    return [t for _, t in gmsh.model.getEntitiesInBoundingBox(*(np.asarray(lo) - eps), *(np.asarray(hi) + eps), 2)]


def _beam_model(gmsh, name, length, width, height, divisions, hexes: bool, size: float | None = None):
    gmsh.clear()
    gmsh.model.add(name)
    vol = gmsh.model.occ.addBox(0, 0, 0, length, width, height)
    gmsh.model.occ.synchronize()
    if hexes:
        nx, ny, nz = divisions
        for _, c in gmsh.model.getEntities(1):
            xmin, ymin, zmin, xmax, ymax, zmax = gmsh.model.getBoundingBox(1, c)
            axis = int(np.argmax([xmax - xmin, ymax - ymin, zmax - zmin]))
            n = (nx, ny, nz)[axis]
            gmsh.model.mesh.setTransfiniteCurve(c, n + 1)
        for _, s in gmsh.model.getEntities(2):
            gmsh.model.mesh.setTransfiniteSurface(s)
            gmsh.model.mesh.setRecombine(2, s)
        gmsh.model.mesh.setTransfiniteVolume(vol)
    else:
        gmsh.option.setNumber("Mesh.MeshSizeMin", size)
        gmsh.option.setNumber("Mesh.MeshSizeMax", size)
    gmsh.model.addPhysicalGroup(3, [vol], name="beam")
    gmsh.model.addPhysicalGroup(2, _box_faces(gmsh, (0, 0, 0), (0, width, height)), name="root")
    gmsh.model.addPhysicalGroup(2, _box_faces(gmsh, (length, 0, 0), (length, width, height)), name="tip")


def _mesh(gmsh, order: int):
    gmsh.option.setNumber("Mesh.SecondOrderIncomplete", 1)  # hexahedron20, not 27
    gmsh.model.mesh.generate(3)
    if order == 2:
        gmsh.model.mesh.setOrder(2)


def _write_msh(gmsh, path: Path, version: float = 4.1):
    gmsh.option.setNumber("Mesh.MshFileVersion", version)
    gmsh.option.setNumber("Mesh.Binary", 0)
    gmsh.write(str(path))


def beam_meshes() -> list[str]:
    """Slender steel cantilever, L = 1 m, 0.05 m x 0.05 m section (L/h = 20): hex20, hex8, tet10.

    Physical groups: volume ``beam``; surfaces ``root`` (x = 0) and ``tip`` (x = L).
    """
    gmsh = _gmsh()
    out = []
    for name, hexes, divisions, order, size in [
        ("beam_hex20", True, (40, 2, 2), 2, None),
        ("beam_hex8", True, (80, 4, 4), 1, None),
        ("beam_tet10", False, None, 2, 0.025),
    ]:
        _beam_model(gmsh, name, 1.0, 0.05, 0.05, divisions, hexes, size)
        _mesh(gmsh, order)
        _write_msh(gmsh, HERE / f"{name}.msh")
        out.append(f"{name}.msh")
    return out


def plate_fv12() -> list[str]:
    """NAFEMS FV12 free thin square plate, 10 m x 10 m x 0.05 m, one layer of 20 x 20 hex20."""
    gmsh = _gmsh()
    _beam_model(gmsh, "plate_fv12", 10.0, 10.0, 0.05, (20, 20, 1), True)
    _mesh(gmsh, 2)
    _write_msh(gmsh, HERE / "plate_fv12_hex20.msh")
    return ["plate_fv12_hex20.msh"]


def conrod() -> list[str]:
    """Connecting rod (steel), tet10: big end (bore radius 25 mm) at x = 0, small end (bore radius
    12 mm) at x = 0.15 m, thickness 20 mm, I-less straight web 16 mm x 12 mm.

    Physical groups: volume ``conrod``; surfaces ``bore_big`` and ``bore_small`` (the bore walls).
    """
    gmsh = _gmsh()
    gmsh.clear()
    gmsh.model.add("conrod")
    occ = gmsh.model.occ
    t = 0.02
    big = occ.addCylinder(0, 0, 0, 0, 0, t, 0.042)
    small = occ.addCylinder(0.15, 0, 0, 0, 0, t, 0.022)
    web = occ.addBox(0.03, -0.008, 0.004, 0.105, 0.016, 0.012)
    body, _ = occ.fuse([(3, big)], [(3, small), (3, web)])
    bore_b = occ.addCylinder(0, 0, -0.01, 0, 0, t + 0.02, 0.025)
    bore_s = occ.addCylinder(0.15, 0, -0.01, 0, 0, t + 0.02, 0.012)
    part, _ = occ.cut(body, [(3, bore_b), (3, bore_s)])
    occ.synchronize()
    vols = [tag for _, tag in part]
    gmsh.model.addPhysicalGroup(3, vols, name="conrod")
    eps = 1e-6

    def bore_faces(cx, r):
        faces = _box_faces(gmsh, (cx - r, -r, 0), (cx + r, r, t), eps)
        keep = []
        for f in faces:
            xmin, ymin, zmin, xmax, ymax, zmax = gmsh.model.getBoundingBox(2, f)
            if zmax - zmin > t - 1e-6:  # cylindrical wall, not an end face
                keep.append(f)
        return keep

    gmsh.model.addPhysicalGroup(2, bore_faces(0.0, 0.025), name="bore_big")
    gmsh.model.addPhysicalGroup(2, bore_faces(0.15, 0.012), name="bore_small")
    gmsh.option.setNumber("Mesh.MeshSizeMin", 0.004)
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.008)
    _mesh(gmsh, 2)
    _write_msh(gmsh, HERE / "conrod_tet10.msh")
    return ["conrod_tet10.msh"]


def _write_inp(mesh, path: Path, material: dict) -> None:
    """Abaqus input with *NODE, *ELEMENT, *NSET, *ELSET, *MATERIAL and *SOLID SECTION."""
    abaqus = {"tetra": "C3D4", "tetra10": "C3D10", "hexahedron": "C3D8", "hexahedron20": "C3D20",
              "wedge": "C3D6", "pyramid": "C3D5"}
    with open(path, "w") as f:
        f.write("*HEADING\nflexmb meshes/generate.py, SI units (m, kg, s, N, Pa)\n*NODE\n")
        for i, p in zip(mesh.node_ids, mesh.points):
            f.write(f"{i}, {p[0]:.16e}, {p[1]:.16e}, {p[2]:.16e}\n")
        for t, conn in mesh.cells.items():
            f.write(f"*ELEMENT, TYPE={abaqus[t]}, ELSET=SOLID\n")
            for eid, row in zip(mesh.cell_ids[t], mesh.node_ids[conn]):
                vals = [str(eid)] + [str(v) for v in row]
                # at most 16 entries per line; continuation lines end with a comma
                lines = [", ".join(vals[i : i + 16]) for i in range(0, len(vals), 16)]
                f.write(",\n".join(lines) + "\n")
        for name, idx in mesh.node_sets.items():
            f.write(f"*NSET, NSET={name}\n")
            ids = [str(v) for v in mesh.node_ids[idx]]
            f.write(",\n".join(", ".join(ids[i : i + 16]) for i in range(0, len(ids), 16)) + "\n")
        f.write(f"*MATERIAL, NAME={material['name'].upper()}\n*ELASTIC\n{material['E']:.6e}, {material['nu']}\n")
        f.write(f"*DENSITY\n{material['rho']}\n")
        f.write(f"*SOLID SECTION, ELSET=SOLID, MATERIAL={material['name'].upper()}\n,\n")


def _to_meshio(mesh, with_sets: bool) -> meshio.Mesh:
    cells = [(t, c) for t, c in mesh.cells.items()]
    point_data = {}
    cell_data = {}
    if with_sets:
        for name, idx in mesh.node_sets.items():
            mask = np.zeros(mesh.n_nodes, dtype=np.uint8)
            mask[idx] = 1
            point_data[f"node_set:{name}"] = mask
        point_data["node_id"] = mesh.node_ids.astype(np.int64)
        cell_data["element_id"] = [mesh.cell_ids[t].astype(np.int64) for t, _ in cells]
    return meshio.Mesh(mesh.points, cells, point_data=point_data, cell_data=cell_data)


def _write_bdf(mesh, path: Path, material: dict) -> None:
    m = _to_meshio(mesh, with_sets=False)
    m.cell_data["nastran:ref"] = [np.ones(len(c), dtype=int) for c in mesh.cells.values()]
    meshio.write(path, m, file_format="nastran")
    text = path.read_text().replace("ENDDATA", "").rstrip("\n")
    g = material["E"] / (2 * (1 + material["nu"]))
    cards = (
        f"\nPSOLID,1,1\nMAT1,1,{material['E']:.6e},{g:.6e},{material['nu']},{material['rho']}\nENDDATA\n"
    )
    path.write_text(text + cards)


def format_equivalence() -> list[str]:
    """F4: one small steel hex20 beam (0.5 m x 0.05 m x 0.05 m, 10 x 2 x 2) in every format."""
    gmsh = _gmsh()
    _beam_model(gmsh, "beam_f4", 0.5, 0.05, 0.05, (10, 2, 2), True)
    _mesh(gmsh, 2)
    _write_msh(gmsh, HERE / "beam_f4_v41.msh", 4.1)
    _write_msh(gmsh, HERE / "beam_f4_v22.msh", 2.2)
    mesh = read_mesh(HERE / "beam_f4_v41.msh")
    _write_inp(mesh, HERE / "beam_f4.inp", STEEL)
    _write_bdf(mesh, HERE / "beam_f4.bdf", STEEL)
    meshio.write(HERE / "beam_f4.vtu", _to_meshio(mesh, with_sets=True), binary=False)
    return ["beam_f4_v41.msh", "beam_f4_v22.msh", "beam_f4.inp", "beam_f4.bdf", "beam_f4.vtu"]


# ---------------------------------------------------------------- validation meshes X1-X4 (no Gmsh)
#: X1 spin-up beam (Kane, Ryan and Banerjee 1987): L = 10 m, A = 4e-4 m^2, I = 2e-7 m^4 in the plane
#: of rotation -> rectangle h x b with h = sqrt(12 I / A) (in plane, along y), b = A / h (along z)
X1 = {"E": 7.0e10, "nu": 0.3, "rho": 3000.0, "name": "x1_beam", "length": 10.0,
      "height": (12 * 2e-7 / 4e-4) ** 0.5, "thickness": 4e-4 / (12 * 2e-7 / 4e-4) ** 0.5, "divisions": (80, 2, 1)}
#: X2 Kim-Haug beam (Meijaard case A): L = 8 m, 0.03676 m (in plane, y) x 0.001986 m (z)
X2 = {"E": 6.895e10, "nu": 0.3, "rho": 2766.67, "name": "x2_beam", "length": 8.0,
      "height": 0.03676, "thickness": 0.001986, "divisions": (80, 2, 1)}
#: X3/X4 slider-crank connecting rod (Chu and Pan; Meijaard): L = 0.3048 m, circular d = 6.35 mm
ROD = {"E": 2.06843e11, "nu": 0.3, "rho": 7834.56, "name": "x3_rod", "length": 0.3048,
       "diameter": 0.00635, "divisions": 24, "core": 2, "rings": 1, "core_fraction": 0.5}

# hexahedron20 corners in lattice steps (s, t, x) and its 12 edges (VTK / flexmb order)
_H20_CORNERS = np.array([[0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [0, 0, 2], [2, 0, 2], [2, 2, 2], [0, 2, 2]])
_H20_EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)]
_H20_OFFSETS = np.vstack([_H20_CORNERS, [(_H20_CORNERS[i] + _H20_CORNERS[j]) // 2 for i, j in _H20_EDGES]])


def _extruded_hex20(length: float, nx: int, patches) -> tuple[np.ndarray, np.ndarray]:
    """Hexahedron20 mesh of a prism x in [0, length] over a cross-section made of mapped patches.

    Each patch is ``(F, ns, nt)``: ``F(s, t) -> (y, z)`` maps the unit square, ns x nt quadrilaterals,
    orientation preserving. Every node, mid-edge nodes included, is placed by the mapping, so curved
    boundaries are followed exactly at the nodes. Coincident nodes of neighbouring patches are merged.

    Returns
    -------
    points : ndarray, shape (n, 3); conn : ndarray, shape (n_cells, 20)
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    all_pts, all_conn, offset = [], [], 0
    xs = np.linspace(0.0, length, 2 * nx + 1)
    for F, ns, nt in patches:
        s, t = np.meshgrid(np.linspace(0, 1, 2 * ns + 1), np.linspace(0, 1, 2 * nt + 1), indexing="ij")
        y, z = F(s, t)
        shape = (2 * ns + 1, 2 * nt + 1, 2 * nx + 1)
        pts = np.column_stack([np.broadcast_to(xs, shape).ravel(),
                               np.broadcast_to(y[:, :, None], shape).ravel(),
                               np.broadcast_to(z[:, :, None], shape).ravel()])
        i, j, k = (a.ravel() for a in np.meshgrid(np.arange(ns), np.arange(nt), np.arange(nx), indexing="ij"))
        lat = np.stack([2 * i, 2 * j, 2 * k], axis=1)[:, None, :] + _H20_OFFSETS[None]  # (n, 20, 3)
        conn = np.ravel_multi_index((lat[..., 0], lat[..., 1], lat[..., 2]), shape)
        all_pts.append(pts)
        all_conn.append(conn + offset)
        offset += len(pts)
    pts = np.vstack(all_pts)
    conn = np.vstack(all_conn)
    used = np.unique(conn)
    tol = 1e-9 * max(length, np.ptp(pts[:, 1]), np.ptp(pts[:, 2]))
    pairs = cKDTree(pts[used]).query_pairs(tol, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(used), len(used)))
    _, label = connected_components(graph, directed=False)
    # one representative per group, numbered in order of first appearance
    _, first = np.unique(label, return_index=True)  # first member of each group
    order = np.argsort(first)
    new_of_group = np.empty_like(order)
    new_of_group[order] = np.arange(len(order))
    old_to_new = np.full(len(pts), -1)
    old_to_new[used] = new_of_group[label]
    points = pts[used][first[order]]
    conn = old_to_new[conn]
    # orientation check: corner-Jacobian determinant at the centre must be positive
    c = points[conn[:, :8]]
    d = np.einsum("nij,nij->n", np.cross(c[:, 1] - c[:, 0], c[:, 3] - c[:, 0])[:, None, :], (c[:, 4] - c[:, 0])[:, None, :])
    if np.any(d <= 0):
        raise RuntimeError(f"{np.count_nonzero(d <= 0)} hexahedra are inverted: a patch map is orientation-reversing")
    return points, conn


def _x_mesh(points, conn, length: float, material: dict, set_name: str, ends: tuple[str, str]):
    from flexmb.fe.mesh.femesh import FEMesh, Material

    tol = 1e-9 * length
    sets = {ends[0]: np.flatnonzero(np.abs(points[:, 0]) <= tol),
            ends[1]: np.flatnonzero(np.abs(points[:, 0] - length) <= tol),
            "mid": np.flatnonzero(np.abs(points[:, 0] - 0.5 * length) <= tol),
            "mid_axis": np.flatnonzero(np.linalg.norm(points - [0.5 * length, 0.0, 0.0], axis=1) <= tol)}
    if sets["mid_axis"].size != 1:
        raise RuntimeError("no node on the axis at mid-span: use even divisions across y and along x")
    mat = Material(E=material["E"], nu=material["nu"], rho=material["rho"])
    return FEMesh(points=points, cells={"hexahedron20": conn}, node_sets=sets,
                  element_sets={set_name: {"hexahedron20": np.arange(len(conn))}}, materials={"*": mat}, units="SI")


def x_beam_mesh(spec: dict):
    """Hexahedron20 mesh (FEMesh) of a rectangular beam: x in [0, L] along the axis, y in [-h/2, h/2]
    (in the plane of rotation, the strong bending direction), z in [-b/2, b/2] (the spin axis
    direction). Node sets ``root`` (x = 0), ``tip`` (x = L), ``mid`` (x = L/2), ``mid_axis`` (the node at
    (L/2, 0, 0)); element set ``beam``."""
    L, h, b = spec["length"], spec["height"], spec["thickness"]
    nx, ny, nz = spec["divisions"]

    def rect(s, t):
        return -0.5 * h + h * s, -0.5 * b + b * t

    points, conn = _extruded_hex20(L, nx, [(rect, ny, nz)])
    return _x_mesh(points, conn, L, spec, "beam", ("root", "tip"))


def x_rod_mesh(spec: dict = ROD):
    """Hexahedron20 mesh (FEMesh) of a round rod, O-grid section: a core square of half-side
    ``core_fraction * r`` (core x core quads) and four mapped patches (core x rings quads each) out to
    the circle of radius r = d/2; nodes on the surface lie on the circle exactly. x in [0, L] along
    the axis, section centred on the axis. Node sets ``big_end`` (x = 0), ``small_end`` (x = L),
    ``mid`` (x = L/2), ``mid_axis`` (the node at (L/2, 0, 0)); element set ``rod``."""
    L, r = spec["length"], 0.5 * spec["diameter"]
    n, m, a = spec["core"], spec["rings"], spec["core_fraction"] * 0.5 * spec["diameter"]

    def core(s, t):
        return a * (2 * s - 1), a * (2 * t - 1)

    def side(k):
        c, sn = np.cos(k * np.pi / 2), np.sin(k * np.pi / 2)

        def F(s, t):  # s clockwise along the side (orientation preserving with t outward)
            u = 1.0 - s
            sy, sz = a, a * (2 * u - 1)  # square edge x = a before rotation
            th = (u - 0.5) * np.pi / 2
            cy, cz = r * np.cos(th), r * np.sin(th)
            py, pz = (1 - t) * sy + t * cy, (1 - t) * sz + t * cz
            return c * py - sn * pz, sn * py + c * pz

        return F

    patches = [(core, n, n)] + [(side(k), n, m) for k in range(4)]
    points, conn = _extruded_hex20(L, spec["divisions"], patches)
    return _x_mesh(points, conn, L, spec, "rod", ("big_end", "small_end"))


def validation_meshes() -> list[str]:
    """X1-X4 meshes (Abaqus .inp with material, node sets and element set); numpy only, no Gmsh."""
    out = []
    for spec, fname, mesh in [(X1, "x1_beam_hex20.inp", x_beam_mesh(X1)), (X2, "x2_beam_hex20.inp", x_beam_mesh(X2)),
                              (ROD, "x3_rod_hex20.inp", x_rod_mesh(ROD))]:
        ids = np.arange(1, mesh.n_nodes + 1)
        mesh = type(mesh)(points=mesh.points, cells=mesh.cells, node_ids=ids,
                          cell_ids={"hexahedron20": np.arange(1, len(mesh.cells["hexahedron20"]) + 1)},
                          node_sets=mesh.node_sets, element_sets=mesh.element_sets, materials=mesh.materials,
                          units="SI")
        _write_inp(mesh, HERE / fname, spec)
        out.append(fname)
    return out


ORIGIN = {
    "beam_hex20.msh": "beam_meshes",
    "beam_hex8.msh": "beam_meshes",
    "beam_tet10.msh": "beam_meshes",
    "plate_fv12_hex20.msh": "plate_fv12",
    "conrod_tet10.msh": "conrod",
    "x1_beam_hex20.inp": "validation_meshes",
    "x2_beam_hex20.inp": "validation_meshes",
    "x3_rod_hex20.inp": "validation_meshes",
}

DESCRIPTION = {
    "beam_hex20.msh": "cantilever 1 x 0.05 x 0.05 m (steel), sets beam/root/tip",
    "beam_hex8.msh": "cantilever 1 x 0.05 x 0.05 m (steel), sets beam/root/tip",
    "beam_tet10.msh": "cantilever 1 x 0.05 x 0.05 m (steel), sets beam/root/tip",
    "plate_fv12_hex20.msh": "NAFEMS FV12 plate 10 x 10 x 0.05 m (E 200 GPa, nu 0.3, rho 8000)",
    "conrod_tet10.msh": "connecting rod (steel), sets conrod/bore_big/bore_small",
    "beam_f4_v41.msh": "F4 beam 0.5 x 0.05 x 0.05 m, Gmsh 4.1, sets beam/root/tip",
    "beam_f4_v22.msh": "F4 beam, Gmsh 2.2, sets beam/root/tip",
    "beam_f4.inp": "F4 beam, Abaqus, steel *MATERIAL + *SOLID SECTION, NSETs root/tip",
    "beam_f4.bdf": "F4 beam, Nastran, steel MAT1 + PSOLID 1",
    "beam_f4.vtu": "F4 beam, VTU, node_set:root/tip point-data masks",
    "x1_beam_hex20.inp": "X1 spin-up beam 10 x 0.07746 (y) x 0.005164 (z) m, 80 x 2 x 1, A 4e-4, I_z 2e-7, "
                         "E 7e10, nu 0.3, rho 3000; sets root/tip/mid/mid_axis",
    "x2_beam_hex20.inp": "X2 Kim-Haug beam 8 x 0.03676 (y) x 0.001986 (z) m, 80 x 2 x 1, E 6.895e10, nu 0.3, "
                         "rho 2766.67; sets root/tip/mid/mid_axis",
    "x3_rod_hex20.inp": "X3/X4 slider-crank rod 0.3048 m, round d 6.35 mm (O-grid, 12 quads/section, 8 on the "
                        "circle, area -0.078 %), 24 along x, E 2.06843e11, nu 0.3, rho 7834.56; sets big_end/small_end/mid/mid_axis",
}


def write_readme(files: list[str]) -> None:
    rows = []
    for name in files:
        path = HERE / name
        mesh = read_mesh(path)
        types = ", ".join(f"{t} ({len(c)})" for t, c in mesh.cells.items())
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        origin = f"generate.py::{ORIGIN.get(name, 'format_equivalence')}"
        rows.append(f"| {name} | {types} | {mesh.n_nodes} | SI | {origin} | {DESCRIPTION[name]} | `{sha}` |")
    text = (
        "# Shipped meshes\n\n"
        "Small meshes for tests, examples and validation cases (F1-F4, X1-X4). All are generated by\n"
        "`python flexmb/data/meshes/generate.py` (Gmsh Python package, extra `flexmb[meshgen]`; other formats\n"
        "written with meshio and the script's own Abaqus/Nastran writers; `generate.py x` writes only the\n"
        "X1-X4 meshes, with numpy alone). Units: SI (m, kg, s, N, Pa); materials are stored only in the\n"
        ".inp and .bdf files (F4 steel: E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3; the X meshes carry their\n"
        "case's material); for the others pass them to `read_mesh(..., materials=Material(...))` or\n"
        "`flexmb info --material`. Checksums change if Gmsh's meshing changes; `flexmb info FILE` prints a\n"
        "file's checksum.\n\n"
        "The X meshes (`validation_meshes`) are structured hexahedron20 prisms along x from 0 to L with the\n"
        "section centred on the axis and symmetric about y = 0 and z = 0 (y: the plane of the motion, z:\n"
        "the spin or pin axis); every node, mid-edge ones included, is placed by the section map, so the\n"
        "rod's surface nodes lie on its circle. `flexmb.catalog.flexible` builds the X1-X4 bodies from them.\n\n"
        "| file | element type (count) | nodes | units | origin | content | sha256 |\n"
        "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )
    (HERE / "README.md").write_text(text)


def main() -> None:
    if sys.argv[1:] == ["x"]:  # only the X1-X4 meshes (numpy, no Gmsh)
        files = validation_meshes()
    else:
        files = beam_meshes() + plate_fv12() + conrod() + format_equivalence()
        _gmsh().finalize()
        files += validation_meshes()
    write_readme([f for f in DESCRIPTION if (HERE / f).exists()])
    total = sum((HERE / f).stat().st_size for f in files)
    for f in files:
        print(f"{f:24s} {(HERE / f).stat().st_size / 1024:8.1f} KiB")
    print(f"total {total / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
