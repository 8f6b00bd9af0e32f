"""Mesh writers: Abaqus .inp, Gmsh .msh and .vtu round trips of tiny canonical meshes (every solid
type, shells, beams, point masses, springs) give back the same nodes, cells, sets, materials and,
assembled, the same stiffness and mass; what a format cannot carry is refused with the fix."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.errors import ModelError
from flexmb.fe.elements.assembly import assemble_mass, assemble_stiffness
from flexmb.fe.mesh import (
    BeamSection,
    FEMesh,
    Material,
    PointMasses,
    ShellSection,
    read_mesh,
    structured_box,
    structured_line,
    structured_plate,
    write_mesh,
)

STEEL = Material(210e9, 0.3, 7850.0, "steel")
ALU = Material(70e9, 0.33, 2700.0, "alu")


def two_materials(cell_type: str) -> FEMesh:
    box = structured_box((1.0, 0.5, 0.4), (2, 1, 1), cell_type)
    n = len(box.cells[cell_type])
    left = {cell_type: np.arange(n // 2)}
    return FEMesh(points=box.points, cells=box.cells, node_sets=box.node_sets,
                  element_sets={"all": box.element_sets["all"], "left": left},
                  materials={"*": STEEL, "left": ALU}, units="SI")


def same_matrices(a: FEMesh, b: FEMesh, materials=None) -> None:
    ka, kb = assemble_stiffness(a), assemble_stiffness(b, materials)
    ma, mb = assemble_mass(a), assemble_mass(b, materials)
    assert abs(ka - kb).max() <= 1e-12 * abs(ka).max()
    assert abs(ma - mb).max() <= 1e-12 * abs(ma).max()


@pytest.mark.parametrize("cell_type", ["tetra", "tetra10", "hexahedron", "hexahedron20", "wedge", "pyramid"])
@pytest.mark.parametrize("ext", [".inp", ".msh", ".vtu"])
def test_solid_round_trip(tmp_path, cell_type, ext):
    mesh = two_materials(cell_type)
    path = write_mesh(mesh, tmp_path / f"box{ext}")
    back = read_mesh(path)
    assert np.array_equal(back.points, mesh.points)
    assert np.array_equal(back.cells[cell_type], mesh.cells[cell_type])
    for name, idx in mesh.node_sets.items():
        assert np.array_equal(back.node_sets[name], idx), name
    assert np.array_equal(back.element_sets["left"][cell_type], mesh.element_sets["left"][cell_type])
    if ext == ".msh":  # no materials in Gmsh files: given on reading, by the same rule
        same_matrices(mesh, back, {"*": STEEL, "left": ALU})
    else:
        same_matrices(mesh, back)


def shell_beam_model() -> FEMesh:
    plate = structured_plate((0.4, 0.2), (2, 1), "quad", thickness=0.01)
    tri = structured_plate((0.4, 0.2), (2, 1), "triangle", thickness=0.01, origin=(0.0, 0.2, 0.0))
    n = plate.n_nodes
    pts = np.vstack([plate.points, tri.points])
    beam = np.array([[0, 2], [2, 4]])  # along the plate's edge y = 0
    return FEMesh(points=pts, cells={}, shells={"quad": plate.shells["quad"], "triangle": tri.shells["triangle"] + n},
                  beams={"line": beam},
                  element_sets={"skin": {"quad": np.arange(2)}, "tris": {"triangle": np.arange(4)},
                                "rib": {"line": np.arange(2)}},
                  sections={"skin": ShellSection(0.01, offset=0.002), "tris": ShellSection(0.005),
                            "rib": BeamSection.pipe(0.02, 0.003)},
                  materials={"*": STEEL, "tris": ALU})


def test_shells_and_beams_round_trip(tmp_path):
    mesh = shell_beam_model()
    for ext in (".inp", ".msh", ".vtu"):
        path = write_mesh(mesh, tmp_path / f"sb{ext}")
        if ext == ".inp":
            back = read_mesh(path)
        else:  # sections (and for .msh the materials) are the user's input for these formats
            back = read_mesh(path, sections=mesh.sections, materials=None if ext == ".vtu" else mesh.materials)
        assert {t: c.tolist() for t, c in back.shells.items()} == {t: c.tolist() for t, c in mesh.shells.items()}
        assert back.beams["line"].tolist() == mesh.beams["line"].tolist()
        same_matrices(mesh, back)
        assert back.unassembled == ()


def test_point_masses_and_springs_round_trip_through_abaqus(tmp_path):
    from flexmb.fe.mesh import Springs

    line = structured_line((0, 0, 0), (1, 0, 0), 2, BeamSection.circle(0.01), material=STEEL)
    coef = np.zeros((3, 2, 6))
    coef[0, 0, 1] = 1.0  # SPRING1 on uy of node 0
    coef[1, 0, 0], coef[1, 1, 2] = 1.0, -1.0  # SPRING2: ux of node 0 against uz of node 2
    coef[2, 0, 0], coef[2, 1, 0] = 1.0, -1.0  # SPRINGA along the axis between nodes 1 and 2
    mesh = FEMesh(points=line.points, cells={}, beams=line.beams, element_sets=line.element_sets,
                  sections=line.sections, materials=line.materials,
                  point_masses=PointMasses.from_values([2, 1], [3.0, 1.0], inertia=np.diag([0.1, 0.2, 0.3])[None]),
                  springs=Springs([[0, -1], [0, 2], [1, 2]], coef, [1e3, 2e3, 3e3], [1, 2, 3]))
    back = read_mesh(write_mesh(mesh, tmp_path / "lumped.inp"))
    same_matrices(mesh, back)


def test_what_a_format_cannot_carry_is_refused(tmp_path):
    line = structured_line((0, 0, 0), (1, 0, 0), 2, BeamSection.circle(0.01), material=STEEL)
    offset_mass = FEMesh(points=line.points, cells={}, beams=line.beams, sections=line.sections,
                         materials=line.materials, point_masses=PointMasses.from_values([2], 1.0, offset=[[0, 0.1, 0]]))
    with pytest.raises(ModelError, match="offset"):
        write_mesh(offset_mass, tmp_path / "m.inp")
    with pytest.raises(ModelError, match="point masses or springs; write .inp"):
        write_mesh(offset_mass, tmp_path / "m.msh")
    with pytest.raises(ModelError, match="unknown extension"):
        write_mesh(line, tmp_path / "m.stl")
