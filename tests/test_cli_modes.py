"""`flexmb modes`: frequency table, VTU output, flexible-body file, clear errors."""
from __future__ import annotations

from pathlib import Path

import pytest

from flexmb.cli import main
from flexmb.fe.reduction.body_data import FlexibleBodyData

MESHES = Path(__file__).resolve().parents[1] / "meshes"
BEAM = MESHES / "beam_f4_v41.msh"
STEEL = ["--material", "210e9", "0.3", "7850"]


def test_fixed_base_modes_table_and_vtu(tmp_path, capsys):
    rc = main(["modes", str(BEAM), *STEEL, "--fix", "root", "-n", "3", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "fixed-base modes" in out and "frequency [Hz]" in out
    assert len([line for line in out.splitlines() if line.strip()[:1].isdigit()]) == 3
    assert (tmp_path / "modes.pvd").exists() and len(list(tmp_path.glob("mode_*.vtu"))) == 3


def test_free_free_table_counts_rigid_modes(capsys):
    assert main(["modes", str(BEAM), *STEEL, "-n", "4"]) == 0
    out = capsys.readouterr().out
    assert "free-free" in out and "6 zero-frequency modes" in out


def test_interfaces_write_flexible_body(tmp_path, capsys):
    rc = main(["modes", str(BEAM), *STEEL, "--interface", "root", "tip", "-n", "2", "--kind", "average",
               "--no-geometric", "--out", str(tmp_path)])
    assert rc == 0
    assert "Craig-Bampton" in capsys.readouterr().out
    body = FlexibleBodyData.load(tmp_path / "beam_f4_v41.flexbody.npz")
    assert body.n_modes == 6 + 2 and body.reference == "root" and body.interface("tip").kind == "average"


@pytest.mark.parametrize("args, message", [
    (["--fix", "nope"], "node set 'nope'"),
    (["--fix", "root", "--interface", "tip"], "either --fix"),
    (["-n", "0"], "at least one mode"),
])
def test_errors_name_the_problem(args, message, capsys):
    assert main(["modes", str(BEAM), *STEEL, *args]) == 2
    assert message in capsys.readouterr().err


def test_missing_material_is_reported(capsys):
    assert main(["modes", str(BEAM), "-n", "2"]) == 1
    assert "material" in capsys.readouterr().err


# ----------------------------------------------------------------- mixed decks (issue 20, stage 3)


def _mixed_deck(tmp_path, extra: str = "") -> Path:
    """The block with a shell flange of test_fe_mixed and a point mass with rotary inertia at a
    flange corner, written as Abaqus input (``extra`` appended: elements flexmb does not assemble)."""
    import dataclasses

    import numpy as np

    from flexmb.fe.mesh import PointMasses, write_mesh
    from test_fe_mixed_reduction import flange_with_mass

    mesh = flange_with_mass()
    pm = PointMasses.from_values([int(mesh.point_masses.nodes[0])], 0.5, inertia=np.diag([1e-3, 2e-3, 3e-3])[None])
    path = tmp_path / "flange.inp"
    write_mesh(dataclasses.replace(mesh, point_masses=pm), path)
    if extra:
        path.write_text(path.read_text() + extra)
    return path


def test_mixed_deck_free_free_and_fixed_base_modes_are_those_of_the_model(tmp_path, capsys):
    """A deck of hexahedra, MITC4 shells and a point mass: the table names the element types with
    their counts, the modes are the FE model's (the DOF map's rigid motions with rotations for the
    free-free count; the full mass), and the VTU files carry the shells with their von Mises stress."""
    import meshio
    import numpy as np
    import scipy.linalg as sla

    from flexmb.fe.elements.assembly import assemble_mass, assemble_stiffness
    from flexmb.fe.mesh.readers import read_mesh

    deck = _mixed_deck(tmp_path)
    assert main(["modes", str(deck), "-n", "3"]) == 0
    out = capsys.readouterr().out
    assert "6 zero-frequency modes" in out and "DOFs (12 nodes with rotations)" in out
    for row in (r"hexahedron\s+8\s+solid", r"quad\s+6\s+MITC4 shell", r"point masses\s+\d+\s+point mass"):
        assert __import__("re").search(row, out), row
    mesh = read_mesh(deck, drop_unused_nodes=True)
    K, M = assemble_stiffness(mesh).toarray(), assemble_mass(mesh).toarray()
    f = np.sqrt(np.maximum(sla.eigh(K, M, eigvals_only=True)[6:9], 0)) / (2 * np.pi)
    table = [float(line.split()[1]) for line in out.splitlines() if line.strip()[:1].isdigit()][-3:]
    assert np.allclose(table, f, rtol=1e-5)
    assert main(["modes", str(deck), "--fix", "root", "-n", "2", "--out", str(tmp_path / "vtu")]) == 0
    assert "rotations too" in capsys.readouterr().out
    vtu = meshio.read(tmp_path / "vtu" / "mode_001.vtu")
    assert set(vtu.cells_dict) == {"hexahedron", "quad"}
    assert (vtu.point_data["von_mises"][np.unique(mesh.shells["quad"])] > 0).all()


def test_mixed_deck_craig_bampton_interfaces_with_rotations(tmp_path, capsys):
    """--interface on a mixed deck: the summary says which interface ties its nodes' rotations
    (rigid) and which does not (average); the body file holds the shells' stress points."""
    deck = _mixed_deck(tmp_path)
    rc = main(["modes", str(deck), "--interface", "root", "edge", "-n", "2", "--no-geometric",
               "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0 and "edge (rigid, 6 node(s), rotations of 6 node(s) tied to the frame)" in out
    body = FlexibleBodyData.load(tmp_path / "flange.flexbody.npz")
    assert body.interface("edge").kind == "rigid" and body.modal_point_stresses.shape[1] > 0
    assert main(["modes", str(deck), "--interface", "root", "edge", "--kind", "average", "-n", "2",
                 "--no-geometric"]) == 0
    assert "translations only (6 node(s) keep free rotations)" in capsys.readouterr().out


def test_mixed_deck_with_unassembled_elements_names_them_with_counts(tmp_path, capsys):
    """Elements flexmb does not assemble (two quadratic B32 beams) are named with their count: an
    error without --allow-unassembled, a table row 'NOT assembled' with it."""
    extra = "*Element, type=B32\n9001, 1, 2, 3\n9002, 3, 4, 5\n"
    deck = _mixed_deck(tmp_path, extra)
    assert main(["modes", str(deck), "-n", "2"]) == 1
    err = capsys.readouterr().err
    assert "2 B32 (beam" in err and "--allow-unassembled" in err
    assert main(["modes", str(deck), "-n", "2", "--allow-unassembled"]) == 0
    assert __import__("re").search(r"B32\s+2\s+beam, NOT assembled", capsys.readouterr().out)


def test_beam_deck_with_a_tip_mass_meets_the_frequency_equation(tmp_path, capsys):
    """A cantilever of 40 beams (round bar, L/r = 100) with a tip mass of its own mass, written as Abaqus
    input (CIRC section, MASS) and clamped with --fix: the first frequency is the root of the
    mass-loaded Euler-Bernoulli cantilever equation (Blevins table 8-8) within 5e-4 (the bar's shear
    deformation and rotary inertia lower it by O((r/L)^2))."""
    import math

    from flexmb.fe.mesh import write_mesh
    from test_fe_mixed_reduction import LENGTH, RADIUS, tip_mass_frequency
    from test_fe_mixed import STEEL as S

    from flexmb.fe.mesh import BeamSection, PointMasses, structured_line

    mb = S.rho * math.pi * RADIUS ** 2 * LENGTH
    mesh = structured_line((0, 0, 0), (LENGTH, 0, 0), 40, BeamSection.circle(RADIUS), material=S)
    import dataclasses

    mesh = dataclasses.replace(mesh, point_masses=PointMasses.from_values([40], mb))
    write_mesh(mesh, tmp_path / "bar.inp")
    assert main(["modes", str(tmp_path / "bar.inp"), "--fix", "start", "-n", "1"]) == 0
    out = capsys.readouterr().out
    assert __import__("re").search(r"line\s+40\s+Timoshenko beam", out)
    f1 = float([line for line in out.splitlines() if line.strip()[:1].isdigit()][-1].split()[1])
    EI = S.E * math.pi * RADIUS ** 4 / 4
    w1 = tip_mass_frequency(1.0) ** 2 * math.sqrt(EI / (S.rho * math.pi * RADIUS ** 2 * LENGTH ** 4))
    assert 2 * math.pi * f1 / w1 == pytest.approx(1.0, abs=5e-4)
