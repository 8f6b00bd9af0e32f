"""Reading shells, beams, point masses and springs: Abaqus (*SHELL SECTION, *BEAM SECTION of the
common shapes, *BEAM GENERAL SECTION, *MASS, *ROTARY INERTIA, *SPRING), Nastran (PSHELL, PBAR,
PBEAM, PBARL, CONM2, CELAS1/2, CBUSH; small, large and free field) and Gmsh (physical groups with
sections given to read_mesh). The same mixed model from the three formats gives the same K and M."""
from __future__ import annotations

import math

import meshio
import numpy as np
import pytest

from flexmb.errors import MeshImportError
from flexmb.fe.elements.assembly import assemble_mass, assemble_stiffness
from flexmb.fe.mesh import (
    BeamSection,
    FEMesh,
    Material,
    PointMass,
    PointMasses,
    ShellSection,
    Springs,
    read_mesh,
    structured_box,
    write_mesh,
)

STEEL = Material(210e9, 0.3, 7850.0, "steel")


def mixed_model() -> FEMesh:
    """A 0.2 m hex8 cube, a 0.3 x 0.2 shell flange embedded one element deep at z = 0.1 (offset
    -t/2), a RECT beam stiffener under its free edge, a tip mass with rotary inertia, a spring."""
    block = structured_box((0.2, 0.2, 0.2), (2, 2, 2), "hexahedron")
    gx, gy = np.linspace(0.1, 0.4, 4), np.linspace(0.0, 0.2, 3)
    grid = np.array([[x, y, 0.1] for x in gx for y in gy])
    ids, new = [], []
    for p in grid:
        hit = np.flatnonzero(np.all(np.isclose(block.points, p), axis=1))
        ids.append(int(hit[0]) if hit.size else len(block.points) + len(new))
        if not hit.size:
            new.append(p)
    pts = np.vstack([block.points, new])
    ids = np.array(ids).reshape(4, 3)
    quads = np.array([[ids[i, j], ids[i + 1, j], ids[i + 1, j + 1], ids[i, j + 1]] for i in range(3) for j in range(2)])
    beam = np.array([[ids[i, 2], ids[i + 1, 2]] for i in range(3)])
    coef = np.zeros((1, 2, 6))
    coef[0, 0, 2] = 1.0
    return FEMesh(
        points=pts, cells=block.cells, shells={"quad": quads}, beams={"line": beam},
        element_sets={"BLOCK": {"hexahedron": np.arange(8)}, "FLANGE": {"quad": np.arange(6)},
                      "STIFF": {"line": np.arange(3)}},
        sections={"FLANGE": ShellSection(0.01, offset=-0.005),
                  "STIFF": BeamSection.rectangle(0.01, 0.03, orientation=(0.0, 1.0, 0.0))},
        materials={"*": STEEL},
        point_masses=PointMasses.from_values([ids[3, 1]], 1.5, inertia=np.diag([1e-3, 2e-3, 3e-3])[None]),
        springs=Springs([[ids[3, 0], -1]], coef, [2e5], [1]),
    )


def nastran_of(mesh: FEMesh, path) -> None:
    """The mixed model as a Nastran deck (free field; PSHELL ZOFFS on the CQUAD4s, PBAR with
    K1 = K2 = Cowper's factor, CBAR orientation vectors, CONM2, CELAS2)."""
    lines = ["SOL 103", "CEND", "BEGIN BULK"]
    lines += [f"GRID,{i + 1},,{float(p[0])!r},{float(p[1])!r},{float(p[2])!r}" for i, p in enumerate(mesh.points)]
    for e, c in enumerate(mesh.cells["hexahedron"] + 1):
        lines.append(f"CHEXA,{e + 1},10,{','.join(map(str, c[:6]))},+\n+,{c[6]},{c[7]}")
    for e, c in enumerate(mesh.shells["quad"] + 1):
        lines.append(f"CQUAD4,{100 + e},20,{','.join(map(str, c))},,-0.005")
    sec = mesh.sections["STIFF"]
    for e, c in enumerate(mesh.beams["line"] + 1):
        lines.append(f"CBAR,{200 + e},30,{c[0]},{c[1]},0.,1.,0.")
    k1, k2 = sec.shear_factors(STEEL.nu)
    pm = mesh.point_masses
    j = pm.matrix[0, 3:, 3:].tolist()
    lines += [f"CONM2,300,{pm.nodes[0] + 1},,{float(pm.matrix[0, 0, 0])!r},,,,,+",
              f"+,{j[0][0]!r},0.,{j[1][1]!r},0.,0.,{j[2][2]!r}"]
    lines += [f"CELAS2,400,{float(mesh.springs.stiffness[0])!r},{mesh.springs.nodes[0, 0] + 1},3"]
    # PBAR: I1 = Iz (plane 1, x-y), I2 = Iy; K1 for shear along y, K2 along z
    lines += ["PSOLID,10,1", "PSHELL,20,1,0.01,1", f"PBAR,30,1,{sec.area!r},{sec.iz!r},{sec.iy!r},{sec.j!r},,,+",
              "+,,,,,,,,,+", f"+,{k1!r},{k2!r}", "MAT1,1,210e9,,0.3,7850.", "ENDDATA", ""]
    path.write_text("\n".join(lines))


def matrices(mesh):
    return assemble_stiffness(mesh), assemble_mass(mesh)


def test_the_same_mixed_model_from_inp_bdf_msh(tmp_path):
    ref = mixed_model()
    k0, m0 = matrices(ref)
    write_mesh(ref, tmp_path / "m.inp")
    inp = read_mesh(tmp_path / "m.inp")
    nastran_of(ref, tmp_path / "m.bdf")
    bdf = read_mesh(tmp_path / "m.bdf")
    gm = FEMesh(points=ref.points, cells=ref.cells, shells=ref.shells, beams=ref.beams,  # Gmsh has no masses
                element_sets=ref.element_sets, sections=ref.sections, materials=ref.materials)
    write_mesh(gm, tmp_path / "m.msh")
    msh = read_mesh(tmp_path / "m.msh", materials=STEEL, sections=ref.sections)
    for name, mesh in (("inp", inp), ("bdf", bdf)):
        k, m = matrices(mesh)
        assert abs(k - k0).max() < 1e-9 * abs(k0).max(), name
        assert abs(m - m0).max() < 1e-9 * abs(m0).max(), name
        assert mesh.unassembled == ()
    k, m = matrices(msh)
    kg, mg = matrices(gm)
    assert abs(k - kg).max() < 1e-9 * abs(kg).max() and abs(m - mg).max() < 1e-9 * abs(mg).max()
    assert msh.unassembled == ()


def test_abaqus_section_shapes_and_lumped_elements(tmp_path):
    deck = """*NODE
1, 0., 0., 0.
2, 1., 0., 0.
3, 2., 0., 0.
4, 2., 1., 0.
*ELEMENT, TYPE=B31, ELSET=RECT
1, 1, 2
*ELEMENT, TYPE=B33, ELSET=GEN
2, 2, 3
*ELEMENT, TYPE=S3, ELSET=SKIN
3, 2, 3, 4
*ELEMENT, TYPE=ROTARYI, ELSET=RI
4, 3
*ELEMENT, TYPE=SPRING2, ELSET=S2
5, 1, 4
*MATERIAL, NAME=STEEL
*ELASTIC
210e9, 0.3
*DENSITY
7850.
*BEAM SECTION, ELSET=RECT, MATERIAL=STEEL, SECTION=I
0.05, 0.1, 0.08, 0.06, 0.01, 0.008, 0.005
0., 0., 1.
*BEAM GENERAL SECTION, ELSET=GEN, SECTION=GENERAL, DENSITY=2700.
1.e-4, 2.e-9, 0., 3.e-9, 4.e-9
0., 1., 0.
70e9, 26.e9
*SHELL SECTION, ELSET=SKIN, MATERIAL=STEEL, OFFSET=0.25
0.004, 5
*ROTARY INERTIA, ELSET=RI
1., 2., 3., 0.1, 0.2, 0.3
*SPRING, ELSET=S2
2, 3
5.e3
"""
    path = tmp_path / "shapes.inp"
    path.write_text(deck)
    mesh = read_mesh(path)
    i_sec, gen, skin = mesh.sections["RECT"], mesh.sections["GEN"], mesh.sections["SKIN"]
    ref = BeamSection.i_section(0.05, 0.1, 0.08, 0.06, 0.01, 0.008, 0.005)
    assert (i_sec.area, i_sec.iy, i_sec.iz, *i_sec.centroid) == pytest.approx((ref.area, ref.iy, ref.iz, *ref.centroid))
    assert i_sec.orientation == (0.0, 0.0, 1.0)
    assert (gen.area, gen.iy, gen.iz, gen.j) == (1e-4, 2e-9, 3e-9, 4e-9)
    mats = mesh.structural_materials()
    assert mats["line"][1].tolist() == pytest.approx([70e9, 70e9 / 52e9 - 1.0, 2700.0])
    assert skin.offset == pytest.approx(-0.001)  # the reference surface 0.25 t above the mid-surface
    j = mesh.point_masses.matrix[0, 3:, 3:]
    assert np.allclose(j, [[1, 0.1, 0.2], [0.1, 2, 0.3], [0.2, 0.3, 3]])
    sp = mesh.springs
    assert sp.coef[0, 0, 1] == 1.0 and sp.coef[0, 1, 2] == -1.0 and sp.stiffness[0] == 5e3
    k = assemble_stiffness(mesh)
    d = mesh.dof_map
    assert k[d.translations([0])[0, 1], d.translations([3])[0, 2]] == pytest.approx(-5e3)


@pytest.mark.parametrize("change, message", [
    ("*SHELL SECTION, ELSET=SKIN, MATERIAL=STEEL", "have no \\*SHELL SECTION"),
    ("*BEAM SECTION, ELSET=RECT, MATERIAL=STEEL, SECTION=HEX\n1., 2.", "SECTION=HEX is not supported"),
    ("*BEAM SECTION, ELSET=RECT, MATERIAL=WOOD, SECTION=CIRC\n0.01", "material 'WOOD'"),
])
def test_abaqus_errors_name_the_fix(tmp_path, change, message):
    base = ("*NODE\n1, 0., 0., 0.\n2, 1., 0., 0.\n3, 1., 1., 0.\n*ELEMENT, TYPE=B31, ELSET=RECT\n1, 1, 2\n"
            "*ELEMENT, TYPE=S3, ELSET=SKIN\n2, 1, 2, 3\n*MATERIAL, NAME=STEEL\n*ELASTIC\n210e9, 0.3\n*DENSITY\n7850.\n"
            "*BEAM SECTION, ELSET=RECT, MATERIAL=STEEL, SECTION=CIRC\n0.01\n*SHELL SECTION, ELSET=SKIN, MATERIAL=STEEL\n"
            "0.01\n")
    if change.startswith("*SHELL"):
        base = base.replace("*SHELL SECTION, ELSET=SKIN, MATERIAL=STEEL\n0.01\n", "")
    else:
        base = base.replace("*BEAM SECTION, ELSET=RECT, MATERIAL=STEEL, SECTION=CIRC\n0.01\n", change + "\n")
    path = tmp_path / "bad.inp"
    path.write_text(base)
    with pytest.raises(MeshImportError, match=message):
        read_mesh(path)


def test_nastran_cards_small_large_free_field(tmp_path):
    """PBEAM, PBARL ROD, CBAR offsets, CONM2 offset (CID 0 and -1), CELAS1/PELAS, CBUSH with CID 0
    and in element axes, written in the three field formats."""
    deck = """BEGIN BULK
GRID    1               0.0     0.0     0.0
GRID*   2                               1.0             0.0
*       0.0
GRID,3,,2.,0.,0.
GRID,4,,2.,0.,0.
CBAR    10      1       1       2       0.0     0.0     1.0
                        0.0     0.1     0.0     0.0     0.1     0.0
CBEAM,11,2,2,3,0.,1.,0.
PBEAM,1,7,2.e-3,4.e-7,3.e-7,0.,5.e-7,0.5
PBARL,2,7,,ROD
,0.02
MAT1,7,200e9,,0.3,7800.
CONM2,20,3,0,4.0,0.0,0.1,0.0,,+
+,0.1,0.,0.2,0.,0.,0.3
CONM2,21,1,-1,2.0,0.0,0.0,0.5
CELAS1,30,40,3,3,4,3
PELAS,40,1.e6
CBUSH,31,42,3,4,,,,0
PBUSH,41,K,1.e5,2.e5,3.e5,10.,20.,30.
PBUSH,42,K,1.e5,2.e5,3.e5
CBUSH,32,41,1,2,0.,1.,0.
ENDDATA
"""
    path = tmp_path / "cards.bdf"
    path.write_text(deck)
    mesh = read_mesh(path)
    assert mesh.beams["line"].tolist() == [[0, 1], [1, 2]]
    ed = mesh.element_data["line"]
    assert ed["offset_a"].tolist() == [[0.0, 0.1, 0.0], [0.0, 0.0, 0.0]]
    pb = mesh.sections["PID1"]
    assert (pb.area, pb.iy, pb.iz, pb.j, pb.nsm, pb.shear) == (2e-3, 3e-7, 4e-7, 5e-7, 0.5, (1.0, 1.0))
    rod = mesh.sections["PID2"]
    assert rod.area == pytest.approx(math.pi * 0.02**2)
    pm = mesh.point_masses
    assert pm.matrix[0, 0, 4] == pytest.approx(0.0) and pm.matrix[0, 0, 5] == pytest.approx(-4.0 * 0.1)
    # CID = -1: the CG at (0, 0, 0.5), 0.5 above grid 1: a rotation about x moves it along -y
    assert pm.matrix[1, 1, 3] == pytest.approx(-2.0 * 0.5)
    sp = mesh.springs
    assert len(sp) == 1 + 3 + 6
    assert sp.stiffness[0] == 1e6 and sp.coef[0, 0, 2] == 1.0 and sp.coef[0, 1, 2] == -1.0
    # the CBUSH between grids 1 and 2 along x, y from v: its y spring at mid-span has a moment arm
    y_spring = np.flatnonzero((sp.ids == 32) & (sp.stiffness == 2e5))[0]
    assert sp.coef[y_spring, 0, :3].tolist() == [0.0, 1.0, 0.0]
    assert sp.coef[y_spring, 0, 3:].tolist() == pytest.approx([0.0, 0.0, 0.5])  # (0.5, 0, 0) x e_y
    # rigid motions stay free (the CBUSH at mid-span between grids 1 and 2 turns with them)
    k = assemble_stiffness(mesh)
    r = mesh.dof_map.rigid_body_modes(mesh.points)
    assert np.abs(k @ r).max() < 1e-6 * abs(k).max()


@pytest.mark.parametrize("card, message", [
    ("CQUAD4,1,5,1,2,3,4", "is no PSHELL"),
    ("CBAR,1,6,1,2,0.,0.,1.\n,1", "pin flags"),
    ("CONM2,1,1,5,1.0", "CID = 5"),
    ("PSHELL,5,7,0.01,8\nCQUAD4,1,5,1,2,3,4", "one isotropic material"),
])
def test_nastran_errors_name_the_card(tmp_path, card, message):
    grid = "\n".join(f"GRID,{i + 1},,{x},{y},0." for i, (x, y) in enumerate([(0, 0), (1, 0), (1, 1), (0, 1)]))
    path = tmp_path / "bad.bdf"
    path.write_text(f"BEGIN BULK\n{grid}\n{card}\nPBAR,6,7,1.e-4,1.e-8,1.e-8,1.e-8\nMAT1,7,200e9,,0.3,7800.\n"
                    "MAT1,8,100e9,,0.3,7800.\nENDDATA\n")
    with pytest.raises(MeshImportError, match=message):
        read_mesh(path)


def test_gmsh_groups_become_shells_beams_and_masses_with_sections(tmp_path):
    """Gmsh cells have no element type: quads of the group "skin" are shells, lines of "rib" beams and
    the vertex of "tip" a point mass because read_mesh gets sections for them; the boundary line
    group "edge" (a shell edge) only carries a set, the line group "stray" is recorded."""
    pts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 2, 2], [3, 2, 2]], float)
    cells = [("quad", np.array([[0, 1, 2, 3]])), ("line", np.array([[1, 2], [0, 1], [4, 5]])),
             ("vertex", np.array([[2]]))]
    phys = [np.array([1]), np.array([2, 3, 5]), np.array([4])]
    field = {"skin": np.array([1, 2]), "rib": np.array([2, 1]), "edge": np.array([3, 1]), "tip": np.array([4, 0]),
             "stray": np.array([5, 1])}
    m = meshio.Mesh(pts, cells, cell_data={"gmsh:physical": phys, "gmsh:geometrical": phys}, field_data=field)
    path = tmp_path / "groups.msh"
    meshio.gmsh.write(str(path), m, fmt_version="2.2", binary=False)
    mesh = read_mesh(path, materials=STEEL, sections={"skin": ShellSection(0.002), "rib": BeamSection.circle(0.01),
                                                      "tip": PointMass(0.5)})
    assert mesh.shells["quad"].tolist() == [[0, 1, 2, 3]]
    assert mesh.beams["line"].tolist() == [[1, 2]]
    assert mesh.point_masses.nodes.tolist() == [2] and mesh.point_masses.total_mass == 0.5
    assert mesh.node_sets["edge"].tolist() == [0, 1]
    assert [(e.type, e.kind, e.count) for e in mesh.unassembled] == [("line", "beam?", 1)]
    with pytest.raises(MeshImportError, match="which has no solid, shell or beam"):
        read_mesh(path, materials=STEEL, sections={"nowhere": ShellSection(0.002)})
