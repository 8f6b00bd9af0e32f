"""Issue 8 section 1, FE bullets: a given material overrides the file's (element sets included),
and the modes path (build_flexible_body, flexmb modes) checks the mesh, refuses Craig-Bampton bodies
of disconnected meshes, never returns fewer modes silently, and gives a plausibility note."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import meshio
import numpy as np
import pytest

from flexmb.cli import main
from flexmb.errors import ModelError
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.mesh.checks import plausibility
from flexmb.fe.mesh import FEMesh, Material, read_mesh, structured_box

MESHES = Path(__file__).resolve().parents[1] / "flexmb" / "data" / "meshes"
DATA = Path(__file__).resolve().parent / "data"
STEEL = Material(210e9, 0.3, 7850.0, "steel")
ALU = Material(70e9, 0.3, 2700.0, "alu")  # same nu as steel: frequencies scale by sqrt(E / rho)
V_F4 = 0.5 * 0.05 * 0.05  # m^3, the F4 beam


# ---------------------------------------------------------------- material override


@pytest.mark.parametrize("name", ["beam_f4.inp", "beam_f4.bdf"])
def test_given_material_overrides_element_set_material_of_the_file(name):
    from_file = read_mesh(MESHES / name)
    assert set(from_file.materials) == {"SOLID" if name.endswith(".inp") else "PID1"}  # set-assigned steel
    assert from_file.summary()["mass"] == pytest.approx(7850.0 * V_F4, rel=1e-12)
    mesh = read_mesh(MESHES / name, materials=ALU)
    assert mesh.materials == {"*": ALU}
    assert mesh.summary()["mass"] == pytest.approx(2700.0 * V_F4, rel=1e-12)
    fields = mesh.cell_materials()["hexahedron20"]
    assert np.all(fields == (70e9, 0.3, 2700.0))


def test_override_rule_whole_mesh_then_named_sets():
    mesh = read_mesh(DATA / "two_materials.inp")  # LEFT: Alu, RIGHT: steel
    assert mesh.cell_materials()["hexahedron"][:, 2].tolist() == [2700.0, 7850.0]
    assert read_mesh(DATA / "two_materials.inp", materials=STEEL).cell_materials()["hexahedron"][:, 2].tolist() == [7850.0, 7850.0]
    one_set = read_mesh(DATA / "two_materials.inp", materials={"right": ALU})  # only that set changes
    assert one_set.cell_materials()["hexahedron"][:, 0].tolist() == [70e9, 70e9]
    both = read_mesh(DATA / "two_materials.inp", materials={"*": ALU, "LEFT": STEEL})  # named set wins over "*"
    assert both.cell_materials()["hexahedron"][:, 2].tolist() == [7850.0, 2700.0]
    assert mesh.with_material(ALU).materials == {"*": ALU}


def test_cli_material_overrides_file_material(capsys):
    assert main(["info", str(MESHES / "beam_f4.inp"), "--material", "70e9", "0.3", "2700", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mass"] == pytest.approx(2700.0 * V_F4, rel=1e-12)

    def first_freq(args):
        assert main(["modes", str(MESHES / "beam_f4.bdf"), "-n", "1", *args]) == 0
        rows = [ln.split() for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("1 ")]
        return float(rows[0][1])

    f_steel = first_freq([])
    f_alu = first_freq(["--material", "70e9", "0.3", "2700"])
    assert f_alu / f_steel == pytest.approx(np.sqrt((70e9 / 2700.0) / (210e9 / 7850.0)), rel=1e-5)


# ---------------------------------------------------------------- modes path


def _two_pieces() -> FEMesh:
    a = structured_box((1.0, 0.2, 0.2), (4, 1, 1))
    b = a.translated([2.0, 0.0, 0.0])  # a gap of 1 m: two pieces
    n = a.n_nodes
    return FEMesh(
        points=np.vstack([a.points, b.points]),
        cells={"hexahedron": np.vstack([a.cells["hexahedron"], b.cells["hexahedron"] + n])},
        node_sets={"root": a.node_sets["xmin"], "tip": b.node_sets["xmax"] + n},
        materials={"*": STEEL},
    )


def test_craig_bampton_of_two_piece_mesh_is_refused():
    with pytest.raises(ModelError, match=r"has 2 disconnected pieces \(20, 20 nodes\).*keeps 6 zero-frequency modes.*Merge"):
        build_flexible_body(_two_pieces(), interfaces=["root", "tip"], n_modes=2)


def test_free_free_with_fewer_modes_than_asked_warns_and_records(caplog):
    one_hex = structured_box((1.0, 1.0, 1.0), (1, 1, 1), material=STEEL)  # 24 DOFs: at most 16 computed
    with caplog.at_level(logging.WARNING, logger="flexmb.fe.reduction.body_data"):
        body = build_flexible_body(one_hex, n_modes=50, geometric=False, preloads=False, stresses=False)
    assert body.n_modes == 16
    assert body.settings["n_modes_requested"] == 50 and body.settings["n_modes_returned"] == 16
    assert "50 free-free modes asked, 16 returned" in caplog.text


def test_plausibility_note_and_mm_with_si_material_warning(caplog):
    beam_m = structured_box((1.0, 0.05, 0.05), (10, 1, 1), "hexahedron20", material=STEEL)
    beam_mm = FEMesh(points=beam_m.points * 1000.0, cells=beam_m.cells, materials={"*": STEEL})
    ok = plausibility(beam_m, f1=40.0)
    assert ok["warning"] is None and ok["size"] == pytest.approx(1.0)
    assert ok["mass"] == pytest.approx(7850.0 * 1.0 * 0.05 * 0.05, rel=1e-12)
    assert "size 1 x 0.05 x 0.05, mass 19.63, f1 40 Hz" in ok["note"]
    kw = dict(n_modes=1, geometric=False, preloads=False, stresses=False)
    body_m = build_flexible_body(beam_m, **kw)
    with caplog.at_level(logging.WARNING, logger="flexmb.fe.mesh.checks"):
        body_mm = build_flexible_body(beam_mm, **kw)
    assert body_mm.frequencies[0] / body_m.frequencies[0] == pytest.approx(1e-3, rel=1e-6)  # 1000x low
    assert body_mm.mass / body_m.mass == pytest.approx(1e9, rel=1e-9)
    assert "1000 times too low" in caplog.text and "Scale the mesh to m" in caplog.text
    note = body_mm.settings["plausibility"]
    assert note["size"] == pytest.approx(1000.0) and "1000 times too low" in note["warning"]
    assert body_m.settings["plausibility"]["warning"] is None


def test_cli_modes_prints_plausibility_and_unit_warning(tmp_path, capsys):
    beam = read_mesh(MESHES / "beam_f4.vtu")
    path = tmp_path / "beam_mm.vtu"
    meshio.write(path, meshio.Mesh(beam.points * 1000.0, list(beam.cells.items())))
    assert main(["modes", str(path), "--material", "210e9", "0.3", "7850", "-n", "2"]) == 0
    out = capsys.readouterr().out
    assert "plausibility: beam_mm.vtu: size 500 x 50 x 50, mass 9.812e+09, f1 1.028 Hz" in out
    assert "WARNING: beam_mm.vtu: the mesh is 500 length units across with SI-like material" in out
    assert main(["info", str(path), "--material", "210e9", "0.3", "7850"]) == 0
    assert "1000 times too low" in capsys.readouterr().out


def test_material_in_mixed_units_warns_with_the_wave_speed(caplog):
    """E = 210 (GPa) with rho = 7.85 (g/cm^3) on a steel bar in m: sqrt(E/rho) = 5.17 m/s against
    5172 m/s, so every frequency is 1000 times too low (a 1 m bar's first bending ~1.9 Hz here):
    a WARNING naming the material, the wave speed and the fix; the same bar in consistent SI or
    in a declared mm-t-s system is quiet."""
    kw = dict(n_modes=1, geometric=False, preloads=False, stresses=False)
    geo = dict(lengths=(1.0, 0.05, 0.05), divisions=(10, 1, 1), cell_type="hexahedron20")
    mixed = structured_box(**geo, material=Material(210.0, 0.3, 7.85, "steel?"))
    with caplog.at_level(logging.WARNING, logger="flexmb.fe.mesh.checks"):
        body = build_flexible_body(mixed, interfaces=["xmin"], **kw)
    assert body.frequencies[0] == pytest.approx(build_flexible_body(
        structured_box(**geo, material=STEEL), interfaces=["xmin"], **kw).frequencies[0] * 1e-3, rel=1e-6)
    msg = body.settings["plausibility"]["warning"]
    assert msg is not None and msg in caplog.text
    for part in ("'steel?'", "sqrt(E/rho) = 5.17 m/s", "far below that of solids", "E = 210e9 Pa", "units="):
        assert part in msg, msg
    assert plausibility(structured_box(**geo, material=STEEL))["warning"] is None
    # mm-t-s (mesh in mm, E in MPa, rho in t/mm^3): quiet when declared, flagged when taken for SI
    mmts = Material(210e3, 0.3, 7.85e-9, "steel mm-t-s")
    beam_mm = structured_box((1000.0, 50.0, 50.0), (10, 1, 1), "hexahedron20", material=mmts)
    assert plausibility(FEMesh(points=beam_mm.points, cells=beam_mm.cells, materials={"*": mmts},
                               units="mm-t-s"))["warning"] is None
    unlabelled = plausibility(FEMesh(points=beam_mm.points, cells=beam_mm.cells, materials={"*": mmts}))["warning"]
    assert "far above" in unlabelled and "SI (the mesh declares no units)" in unlabelled
