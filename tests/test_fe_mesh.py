"""Mesh values, readers (Gmsh v2/v4, Abaqus, Nastran, VTU) and mesh checks."""
from __future__ import annotations

from pathlib import Path

import meshio
import numpy as np
import pytest

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.elements.assembly import assemble_mass, assemble_stiffness
from flexmb.fe.mesh import FEMesh, Material, check_mesh, read_mesh, structured_box

ROOT = Path(__file__).resolve().parents[1]
MESHES = ROOT / "meshes"
DATA = Path(__file__).resolve().parent / "data"
STEEL = Material(210e9, 0.3, 7850.0, "steel")
F4_FILES = ["beam_f4_v41.msh", "beam_f4_v22.msh", "beam_f4.inp", "beam_f4.bdf", "beam_f4.vtu"]


# ------------------------------------------------------------------ Material and FEMesh values


def test_material_validation_names_value_and_fix():
    with pytest.raises(ModelError, match=r"`E` = -1.0 must be > 0"):
        Material(-1.0, 0.3, 1000.0)
    with pytest.raises(ModelError, match=r"`nu` = 0.5 must satisfy -1 < nu < 0.5.*0.499"):
        Material(1e9, 0.5, 1000.0)
    with pytest.raises(ModelError, match=r"`rho` = 0.0 must be > 0"):
        Material(1e9, 0.3, 0.0)
    lam, mu = Material(1.0, 0.25, 1.0).lame
    assert lam == pytest.approx(0.4) and mu == pytest.approx(0.4)


def test_node_queries_and_transformations():
    mesh = structured_box((1.0, 1.0, 1.0), (2, 2, 2), "hexahedron")
    assert mesh.n_nodes == 27 and mesh.n_dofs == 81
    assert mesh.nodes_on_plane([0, 0, 0], [1, 0, 0]).size == 9
    assert np.array_equal(mesh.nodes_on_plane([0, 0, 0], [2, 0, 0]), mesh.node_sets["xmin"])
    assert mesh.nodes_in_box([0.4, 0.4, 0.4], [0.6, 0.6, 0.6]).size == 1
    assert mesh.nodes_within([0, 0, 0], 0.51).size == 4  # corner + 3 edge neighbours
    m2 = mesh.with_node_set("centre", mesh.nodes_within([0.5, 0.5, 0.5], 1e-6))
    assert m2.node_sets["centre"].size == 1 and "centre" not in mesh.node_sets  # immutable
    with pytest.raises(ModelError, match="outside 0..26"):
        mesh.with_node_set("bad", [27])
    m3 = mesh.with_material(STEEL)
    assert m3.materials == {"*": STEEL} and mesh.materials == {}
    with pytest.raises(ModelError, match="does not exist"):
        mesh.with_material(STEEL, "nope")
    lo, hi = mesh.translated([1.0, 0, 0]).bounding_box()
    assert np.allclose(lo, [1, 0, 0]) and np.allclose(hi, [2, 1, 1])
    assert mesh.volume() == pytest.approx(1.0)


def test_compacted_drops_unused_nodes_and_renumbers_sets():
    base = structured_box((1, 1, 1), (1, 1, 1), "hexahedron")
    pts = np.vstack([[9.0, 9, 9], base.points])  # unused node first
    mesh = FEMesh(points=pts, cells={"hexahedron": base.cells["hexahedron"] + 1}, node_sets={"a": [0, 1, 2]})
    c = mesh.compacted()
    assert c.n_nodes == 8
    assert np.array_equal(c.node_sets["a"], [0, 1])
    assert np.array_equal(c.node_ids, np.arange(2, 10))
    assert np.allclose(c.points[c.cells["hexahedron"]], base.points[base.cells["hexahedron"]])


# ------------------------------------------------------------------ readers


@pytest.mark.parametrize("name", F4_FILES)
def test_f4_beam_reads_identically_from_every_format(name):
    ref = read_mesh(MESHES / "beam_f4_v41.msh")
    mesh = read_mesh(MESHES / name)
    assert mesh.n_nodes == ref.n_nodes == 321
    assert list(mesh.cells) == ["hexahedron20"] and len(mesh.cells["hexahedron20"]) == 40
    assert np.allclose(mesh.points, ref.points, atol=1e-12)
    assert np.array_equal(mesh.cells["hexahedron20"], ref.cells["hexahedron20"])
    assert mesh.checksum and len(mesh.checksum) == 64
    if name.endswith((".msh", ".inp", ".vtu")):  # Nastran has no node sets
        for s in ("root", "tip"):
            assert np.array_equal(mesh.node_sets[s], ref.node_sets[s])
            assert np.allclose(mesh.points[mesh.node_sets[s], 0], 0.0 if s == "root" else 0.5)
    if name.endswith((".inp", ".bdf")):  # materials from the file
        (mat,) = mesh.materials.values()
        assert (mat.E, mat.nu, mat.rho) == (210e9, 0.3, 7850.0)
    mesh = mesh if mesh.materials else mesh.with_material(STEEL)
    k = assemble_stiffness(mesh)
    kr = assemble_stiffness(ref.with_material(STEEL))
    assert abs(k - kr).max() <= 1e-12 * abs(kr).max()


@pytest.mark.parametrize("name", ["beam_hex20.msh", "beam_hex8.msh", "beam_tet10.msh", "plate_fv12_hex20.msh", "conrod_tet10.msh"])
def test_shipped_meshes_are_valid_and_ordered_like_vtk(name):
    """No inverted cells (orientation) and, for quadratic cells, every mid-edge node halfway along
    its edge in VTK order (the shipped meshes have straight edges except the conrod's bores)."""
    from flexmb.fe.elements.solid import ELEMENTS

    mesh = read_mesh(MESHES / name, materials=STEEL)
    assert check_mesh(mesh) == []
    for t, conn in mesh.cells.items():
        elem = ELEMENTS[t]
        if elem.degree == 2:
            n_corner = elem.n_nodes - len(elem.edges)
            x = mesh.points[conn]
            mid = 0.5 * (x[:, [i for i, _ in elem.edges]] + x[:, [j for _, j in elem.edges]])
            err = np.linalg.norm(x[:, n_corner:] - mid, axis=2).max(axis=1)
            size = np.ptp(x, axis=1).max(axis=1)
            if name.startswith("conrod"):
                # curved cylinder walls: mid-edge nodes sit on the arc, a small sagitta off the chord;
                # a wrong node order would put them half a cell away
                assert np.all(err < 0.1 * size)
            else:
                assert np.all(err < 1e-9 * size)
    for s in ("root", "tip"):
        if name.startswith("beam"):
            x = mesh.points[mesh.node_sets[s], 0]
            assert np.allclose(x, 0.0 if s == "root" else 1.0)
            assert mesh.node_sets[s].size == mesh.nodes_on_plane([x[0], 0, 0], [1, 0, 0], 1e-9).size


def test_conrod_bore_sets_lie_on_the_bores():
    mesh = read_mesh(MESHES / "conrod_tet10.msh")
    for name, centre, radius in (("bore_big", 0.0, 0.025), ("bore_small", 0.15, 0.012)):
        p = mesh.points[mesh.node_sets[name]]
        r = np.hypot(p[:, 0] - centre, p[:, 1])
        assert p.shape[0] > 20 and np.allclose(r, radius, rtol=2e-3)


def test_abaqus_sets_materials_include_and_generate():
    mesh = read_mesh(DATA / "two_materials.inp")
    assert mesh.node_ids[mesh.node_sets["TIP"]].tolist() == [9, 10, 11, 12]
    assert mesh.node_ids[mesh.node_sets["ENDS"]].tolist() == [1, 4, 5, 8, 9, 10, 11, 12]
    assert mesh.cell_ids["hexahedron"][mesh.element_sets["right"]["hexahedron"]].tolist() == [102]
    assert mesh.element_sets["BOTH"]["hexahedron"].tolist() == [0, 1]
    assert mesh.materials["LEFT"].name == "Alu" and mesh.materials["right"].E == 210e9
    # the continuation line of element 102 was joined: it is a unit cube at x = 1..2
    assert mesh.volume() == pytest.approx(2.0)
    m = assemble_mass(mesh)
    assert m.sum() / 3 == pytest.approx(2700.0 + 7850.0)
    assert mesh.summary()["mass"] == pytest.approx(10550.0)
    w = check_mesh(mesh)
    assert len(w) == 1 and "ids 99" in w[0]
    assert read_mesh(DATA / "two_materials.inp", drop_unused_nodes=True).n_nodes == 12


def test_abaqus_errors_name_file_line_and_problem(tmp_path):
    with pytest.raises(MeshImportError, match=r"bad_element_count.inp, line 13: .*TYPE=C3D8.*8 of 9 numbers.*truncated"):
        read_mesh(DATA / "bad_element_count.inp")
    text = (DATA / "two_materials.inp").read_text()
    (tmp_path / "two_materials_nodes.inp").write_text((DATA / "two_materials_nodes.inp").read_text())
    cases = {
        "undefined_elset.inp": (text.replace("*ELSET, ELSET=LEFT\n101", "*ELSET, ELSET=LEFT\n101, 777"), "undefined element id.*777"),
        "missing_material.inp": (text.replace("MATERIAL=steel", "MATERIAL=TITANIUM"), "TITANIUM"),
        "bad_nu.inp": (text.replace("210e9, 0.3", "210e9, 0.7"), r"`nu` = 0.7"),
        "no_density.inp": (text.replace("*DENSITY\n2700.\n", ""), r"'Alu' has no \*DENSITY"),
        "c3d27.inp": (text.replace("TYPE=C3D8", "TYPE=C3D27X"), "unsupported solid element type C3D27X"),
        "missing_node.inp": (text.replace("*NSET, NSET=ROOT\n1, 4,", "*NSET, NSET=ROOT\n1, 404,"), "undefined node id.*404"),
    }
    for fname, (content, pattern) in cases.items():
        (tmp_path / fname).write_text(content)
        with pytest.raises(MeshImportError, match=pattern):
            read_mesh(tmp_path / fname)


def test_nastran_free_and_fixed_fields_mat1_psolid(tmp_path):
    """Two CHEXA with two PSOLID/MAT1; fixed small field, free field and Nastran exponents."""
    grid = []
    pts = structured_box((2, 1, 1), (2, 1, 1), "hexahedron")
    for i, p in enumerate(pts.points, start=1):
        grid.append(f"GRID,{i},,{p[0]},{p[1]},{p[2]}")
    conn = pts.cells["hexahedron"] + 1
    elems = [f"CHEXA,{e + 1},{10 + e},{','.join(map(str, conn[e][:6]))},+\n+,{conn[e][6]},{conn[e][7]}" for e in range(2)]
    text = "\n".join(
        ["$ test", "BEGIN BULK", *grid, *elems,
         "PSOLID  10      1",
         "PSOLID,11,2",
         "MAT1    1       7.0+10          0.33    2700.",
         "MAT1,2,,8.0769+10,0.3,7850.",
         "ENDDATA", ""]
    )
    path = tmp_path / "two.bdf"
    path.write_text(text)
    mesh = read_mesh(path)
    assert sorted(mesh.element_sets) == ["PID10", "PID11"]
    assert mesh.materials["PID10"].E == pytest.approx(7e10) and mesh.materials["PID10"].rho == 2700.0
    assert mesh.materials["PID11"].E == pytest.approx(2 * 8.0769e10 * 1.3)  # from G and nu
    assert mesh.summary()["mass"] == pytest.approx(2700.0 + 7850.0)
    path.write_text(text.replace("PSOLID,11,2", "PSOLID,11,3"))
    with pytest.raises(MeshImportError, match="PSOLID 11 uses material 3"):
        read_mesh(path)


def test_gmsh_lower_dimensional_groups_become_node_sets_only():
    mesh = read_mesh(MESHES / "beam_f4_v22.msh")
    assert set(mesh.node_sets) == {"beam", "root", "tip"}
    assert set(mesh.element_sets) == {"beam"}  # surfaces define nodes, not solid elements
    assert list(mesh.cells) == ["hexahedron20"]  # quad8 faces are not part of the solid model


@pytest.mark.parametrize(
    "name, pattern",
    [
        ("truncated_beam_v41.msh", r"truncated_beam_v41.msh, line 564 \(end of file\): section \$Nodes opened at line 40 is not closed"),
        ("truncated_beam.bdf", r"truncated_beam.bdf, line 300 \(end of file\): expected an ENDDATA card"),
        ("truncated_beam.vtu", r"truncated_beam.vtu, line 380, column 7: the XML is not well formed"),
    ],
)
def test_truncated_files_raise_mesh_import_error(name, pattern, capsys):
    with pytest.raises(MeshImportError, match=pattern) as info:
        read_mesh(DATA / name)
    assert "truncated" in str(info.value)  # says what happened
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""  # the library never prints


def test_unknown_extension_and_missing_file(tmp_path):
    with pytest.raises(MeshImportError, match="does not exist"):
        read_mesh(tmp_path / "nope.msh")
    (tmp_path / "a.xyz").write_text("1 2 3\n")
    with pytest.raises(MeshImportError, match=r"unknown mesh format '.xyz'.*\.inp"):
        read_mesh(tmp_path / "a.xyz")


def test_unsupported_solid_cell_type_in_file(tmp_path):
    pts = np.array(np.meshgrid([0, 0.5, 1], [0, 0.5, 1], [0, 0.5, 1], indexing="ij")).reshape(3, -1).T
    meshio.write(tmp_path / "h27.vtu", meshio.Mesh(pts, [("hexahedron27", np.arange(27)[None])]))
    with pytest.raises(MeshImportError, match=r"unsupported solid cell type\(s\) hexahedron27; supported: .*tetra10"):
        read_mesh(tmp_path / "h27.vtu")


# ------------------------------------------------------------------ checks


def _box_with(cells_fn):
    mesh = structured_box((3.0, 1.0, 1.0), (3, 1, 1), "hexahedron", material=STEEL)
    pts, conn = cells_fn(mesh.points.copy(), mesh.cells["hexahedron"].copy())
    return FEMesh(points=pts, cells={"hexahedron": conn}, cell_ids={"hexahedron": [11, 12, 13]}, materials={"*": STEEL})


def test_check_names_inverted_elements():
    def invert(pts, conn):
        conn[1] = conn[1][[4, 5, 6, 7, 0, 1, 2, 3]]  # top and bottom swapped: mirror image
        return pts, conn

    with pytest.raises(MeshImportError, match=r"1 inverted hexahedron element\(s\).*ids 12\)"):
        check_mesh(_box_with(invert))


def test_check_names_degenerate_elements():
    def flatten(pts, conn):
        top = conn[2][4:]
        pts[top, 2] = 0.0  # element 13 squashed to zero height (its neighbour 12 becomes distorted)
        return pts, conn

    with pytest.raises(MeshImportError, match=r"degenerate hexahedron.*ids 13\)"):
        check_mesh(_box_with(flatten))


def test_check_lists_at_most_ten_ids():
    mesh = structured_box((12.0, 1.0, 1.0), (12, 1, 1), "hexahedron")
    conn = mesh.cells["hexahedron"][:, [4, 5, 6, 7, 0, 1, 2, 3]]
    with pytest.raises(MeshImportError, match=r"12 inverted .*ids 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, \.\.\. \(12 in total\)"):
        check_mesh(FEMesh(points=mesh.points, cells={"hexahedron": conn}))


def test_check_warns_disconnected_parts_and_unused_nodes():
    a = structured_box((1, 1, 1), (1, 1, 1), "tetra")
    pts = np.vstack([a.points, a.points + [5.0, 0, 0], [[9.0, 9.0, 9.0]]])
    mesh = FEMesh(points=pts, cells={"tetra": np.vstack([a.cells["tetra"], a.cells["tetra"] + 8])})
    w = check_mesh(mesh)
    assert any("2 disconnected parts" in s and "12 rigid-body modes" in s for s in w)
    assert any("1 node(s) used by no element (ids 17)" in s for s in w)


def test_check_rejects_sets_naming_missing_nodes():
    mesh = structured_box((1, 1, 1), (1, 1, 1), "hexahedron")
    bad = FEMesh(points=mesh.points, cells=mesh.cells, node_sets={"clamp": [0, 1, 42]})
    with pytest.raises(MeshImportError, match=r"node set 'clamp' names 1 missing node\(s\) \(indices 42\)"):
        check_mesh(bad)


def test_assembly_without_material_names_the_set():
    mesh = read_mesh(MESHES / "beam_f4_v41.msh")
    with pytest.raises(ModelError, match=r"40 solid element\(s\).*element set\(s\) 'beam'.*with_material"):
        assemble_stiffness(mesh)


def test_readme_lists_every_shipped_mesh_with_its_checksum():
    import hashlib
    import re

    text = (MESHES / "README.md").read_text()
    rows = dict(re.findall(r"^\| (\S+) \|.*\| `([0-9a-f]{64})` \|$", text, flags=re.M))
    files = sorted(p.name for p in MESHES.iterdir() if p.suffix in (".msh", ".inp", ".bdf", ".vtu"))
    assert sorted(rows) == files
    for name in files:
        assert hashlib.sha256((MESHES / name).read_bytes()).hexdigest() == rows[name], f"{name}: rerun meshes/generate.py"
    assert sum((MESHES / f).stat().st_size for f in files) < 5e6


@pytest.mark.parametrize("cell_type", ["tetra", "tetra10", "hexahedron", "hexahedron20", "pyramid", "wedge"])
def test_med_files_use_salome_orientation(tmp_path, cell_type):
    """A MED file in Salome's node order (opposite orientation to VTK) reads as valid VTK cells,
    with families as sets."""
    pytest.importorskip("h5py")
    from flexmb.fe.mesh import _med_to_vtk

    ref = structured_box((2, 1, 1), (2, 1, 1), cell_type, material=STEEL)
    conn = ref.cells[cell_type]
    med_conn = _med_to_vtk(cell_type, conn)  # the permutation is its own inverse
    assert not np.array_equal(med_conn, conn)
    assert np.array_equal(_med_to_vtk(cell_type, med_conn), conn)
    pt = np.zeros(ref.n_nodes, dtype=int)
    pt[ref.node_sets["xmin"]] = -1
    ct = np.zeros(len(conn), dtype=int)
    ct[:2] = 1
    m = meshio.Mesh(ref.points, [(cell_type, med_conn)], point_data={"point_tags": pt}, cell_data={"cell_tags": [ct]})
    m.point_tags = {-1: ["root"]}
    m.cell_tags = {1: ["first"]}
    meshio.write(tmp_path / "box.med", m)
    mesh = read_mesh(tmp_path / "box.med", materials=STEEL)
    assert np.array_equal(mesh.cells[cell_type], conn)
    assert check_mesh(mesh) == []
    assert mesh.volume() == pytest.approx(2.0)
    assert np.array_equal(mesh.node_sets["root"], ref.node_sets["xmin"])
    assert mesh.element_sets["first"][cell_type].tolist() == [0, 1]


def test_wedges_in_vtk_orientation_are_reoriented(tmp_path):
    ref = structured_box((2, 1, 1), (2, 1, 1), "wedge")
    flipped = ref.cells["wedge"][:, [0, 2, 1, 3, 5, 4]]
    flipped[::2] = ref.cells["wedge"][::2]  # mixed orientations
    meshio.write(tmp_path / "w.vtu", meshio.Mesh(ref.points, [("wedge", flipped)]))
    mesh = read_mesh(tmp_path / "w.vtu", materials=STEEL)
    assert check_mesh(mesh) == []
    assert mesh.volume() == pytest.approx(2.0)
