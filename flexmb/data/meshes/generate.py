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

from flexmb.fe.mesh import read_mesh  # noqa: E402

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


ORIGIN = {
    "beam_hex20.msh": "beam_meshes",
    "beam_hex8.msh": "beam_meshes",
    "beam_tet10.msh": "beam_meshes",
    "plate_fv12_hex20.msh": "plate_fv12",
    "conrod_tet10.msh": "conrod",
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
        "Small meshes for tests, examples and validation cases (F1-F4). All are generated by\n"
        "`python meshes/generate.py` (Gmsh Python package, extra `flexmb[meshgen]`; other formats written\n"
        "with meshio and the script's own Abaqus/Nastran writers). Units: SI (m, kg, s, N, Pa); materials\n"
        "are stored only in the .inp and .bdf files (steel: E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3);\n"
        "for the others pass them to `read_mesh(..., materials=Material(...))` or `flexmb info --material`.\n"
        "Checksums change if Gmsh's meshing changes; `flexmb info FILE` prints a file's checksum.\n\n"
        "| file | element type (count) | nodes | units | origin | content | sha256 |\n"
        "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )
    (HERE / "README.md").write_text(text)


def main() -> None:
    files = beam_meshes() + plate_fv12() + conrod() + format_equivalence()
    _gmsh().finalize()
    write_readme(files)
    total = sum((HERE / f).stat().st_size for f in files)
    for f in files:
        print(f"{f:24s} {(HERE / f).stat().st_size / 1024:8.1f} KiB")
    print(f"total {total / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
