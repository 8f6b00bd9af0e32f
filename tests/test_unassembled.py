"""Elements a mesh file holds that flexmb does not assemble (quadratic shells, connectors, rigid
elements, constraints, ...) are named with their counts: in read_mesh's log, in
``FEMesh.unassembled``, in ``flexmb info``; a flexible body is not built from such a partial model
unless ``allow_unassembled=True`` (``flexmb modes --allow-unassembled``). Shells, beams, point
masses and springs are assembled (and a body of them waits for stage 2 of issue 20)."""
from __future__ import annotations

import json
import logging

import meshio
import numpy as np
import pytest

from flexmb.cli import main
from flexmb.errors import ModelError
from flexmb.fe.mesh import Material, read_mesh, structured_box
from flexmb.fe.reduction.body_data import build_flexible_body
from pathlib import Path

MESHES = Path(__file__).resolve().parents[1] / "meshes"
BLOCK = structured_box((2.0, 1.0, 1.0), (2, 1, 1), "hexahedron")
#: the block's nodes on the edge x = 2, z = 1 (1-based ids), where the flange is welded on
EDGE = [i + 1 for i, p in enumerate(BLOCK.points) if p[0] == 2.0 and p[2] == 1.0]
N = BLOCK.n_nodes  # flange nodes: N + 1 = (3, 0, 1), N + 2 = (3, 1, 1)


def abaqus_deck(tmp_path, assembled: bool = True):
    """A C3D8 block with (``assembled``) an S4R shell flange, a point mass and a spring, and always
    an S8R quadratic shell, two connectors (one to ground: records of two widths) and a *TIE."""
    lines = ["*HEADING", "block with a shell flange", "*NODE"]
    lines += [f"{i}, {p[0]}, {p[1]}, {p[2]}" for i, p in enumerate(BLOCK.points, start=1)]
    lines += [f"{N + 1}, 3., 0., 1.", f"{N + 2}, 3., 1., 1."] + [f"{N + 3 + k}, 3.5, {0.5 * k}, 1." for k in range(3)]
    lines += ["*ELEMENT, TYPE=C3D8, ELSET=BLOCK"]
    lines += [f"{e}, " + ", ".join(map(str, c)) for e, c in enumerate(BLOCK.cells["hexahedron"] + 1, start=1)]
    if assembled:
        lines += ["*ELEMENT, TYPE=S4R, ELSET=FLANGE", f"101, {EDGE[0]}, {N + 1}, {N + 2}, {EDGE[1]}",
                  f"102, {EDGE[0]}, {N + 1}, {N + 2}, {EDGE[1]}",
                  "*ELEMENT, TYPE=MASS, ELSET=PM", f"201, {N + 1}",
                  "*ELEMENT, TYPE=SPRINGA, ELSET=SPR", f"301, {N + 1}, {N + 2}"]
    lines += ["*ELEMENT, TYPE=S8R, ELSET=QUAD8",
              f"151, {N + 1}, {N + 3}, {N + 5}, {N + 2}, {N + 3}, {N + 4}, {N + 5}, {N + 4}",
              "*ELEMENT, TYPE=CONN3D2, ELSET=CONN", f"401, {N + 1}, {N + 2}", f"402, {N + 2}",
              "*ELSET, ELSET=EVERYTHING", "1, 2, 151, 401, 402" + (", 101, 201, 301" if assembled else ""),
              "*MATERIAL, NAME=STEEL", "*ELASTIC", "210e9, 0.3", "*DENSITY", "7850.",
              "*SOLID SECTION, ELSET=BLOCK, MATERIAL=STEEL", ","]
    if assembled:
        lines += ["*SHELL SECTION, ELSET=FLANGE, MATERIAL=STEEL", "0.01", "*MASS, ELSET=PM", "2.0",
                  "*SPRING, ELSET=SPR", "", "1.e5"]
    lines += ["*TIE, NAME=T1", "A, B"]
    path = tmp_path / ("flange.inp" if assembled else "partial.inp")
    path.write_text("\n".join(lines) + "\n")
    return path


def nastran_deck(tmp_path):
    grid = [f"GRID,{i},,{p[0]},{p[1]},{p[2]}" for i, p in enumerate(BLOCK.points, start=1)]
    grid += [f"GRID,{N + 1},,3.,0.,1.", f"GRID,{N + 2},,3.,1.,1."]
    conn = BLOCK.cells["hexahedron"] + 1
    hexa = [f"CHEXA,{e + 1},10,{','.join(map(str, conn[e][:6]))},+\n+,{conn[e][6]},{conn[e][7]}" for e in range(2)]
    text = "\n".join(["SOL 103", "CEND", "BEGIN BULK", *grid, *hexa,
                      f"CQUAD4,101,20,{EDGE[0]},{N + 1},{N + 2},{EDGE[1]}",
                      f"CBAR,111,30,{N + 1},{N + 2},0.,0.,1.",
                      f"CONM2   201     {N + 1:<8d}        2.0",
                      f"RBE2,301,{N + 2},123456,{EDGE[1]}", "CELAS2,401,1.e5,1,1", "CELAS2,402,1.e5,2,1",
                      f"CROD,451,40,{N + 1},{N + 2}", f"PLOTEL,501,{N + 1},{N + 2}",
                      "PSOLID,10,1", "PSHELL,20,1,0.01,1", "PBAR,30,1,1.e-4,1.e-9,1.e-9,2.e-9",
                      "MAT1,1,210e9,,0.3,7850.", "ENDDATA", ""])
    path = tmp_path / "flange.bdf"
    path.write_text(text)
    return path


def vtu_file(tmp_path):
    """Block + a boundary face, a solid edge, a solid node (sets only) + an off-solid quad, line, point."""
    pts = np.vstack([BLOCK.points, [[3.0, 0, 1], [3.0, 1, 1], [4.0, 4.0, 4.0]]])
    hexc = BLOCK.cells["hexahedron"]
    e0, e1 = EDGE[0] - 1, EDGE[1] - 1
    cells = [("hexahedron", hexc), ("quad", np.array([hexc[0][[4, 5, 6, 7]], [e0, N, N + 1, e1]])),
             ("line", np.array([hexc[0][[0, 4]], [N, N + 1]])), ("vertex", np.array([[0], [N + 2]]))]
    path = tmp_path / "flange.vtu"
    meshio.write(path, meshio.Mesh(pts, cells))
    return path


def test_abaqus_names_every_element_type_it_does_not_assemble(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="flexmb.fe.mesh.readers"):
        mesh = read_mesh(abaqus_deck(tmp_path))
    assert list(mesh.cells) == ["hexahedron"] and len(mesh.cells["hexahedron"]) == 2
    assert len(mesh.shells["quad"]) == 2 and len(mesh.point_masses) == 1 and len(mesh.springs) == 1
    got = {e.type: (e.kind, e.count, e.ids.tolist()) for e in mesh.unassembled}
    assert got == {"S8R": ("shell", 1, [151]), "CONN3D2": ("connector", 2, [401, 402]), "*TIE": ("constraint", 1, [])}
    assert "1 S8R (shell" in caplog.text and "2 CONN3D2 (connector" in caplog.text and "*TIE" in caplog.text
    # element sets of recorded elements still give node sets, and a set naming them reads
    assert mesh.node_ids[mesh.node_sets["QUAD8"]].tolist() == [N + 1, N + 2, N + 3, N + 4, N + 5]
    assert mesh.element_sets["EVERYTHING"]["hexahedron"].tolist() == [0, 1]
    assert mesh.element_sets["EVERYTHING"]["quad"].tolist() == [0]
    assert mesh.summary()["unassembled"][0] == {"type": "S8R", "kind": "shell", "count": 1}


def test_nastran_names_every_element_card_it_does_not_assemble(tmp_path):
    mesh = read_mesh(nastran_deck(tmp_path))
    assert list(mesh.cells) == ["hexahedron"] and list(mesh.shells) == ["quad"] and list(mesh.beams) == ["line"]
    assert len(mesh.point_masses) == 1 and len(mesh.springs) == 2
    got = {e.type: (e.kind, e.count, e.ids.tolist(), e.structural) for e in mesh.unassembled}
    assert got == {"RBE2": ("rigid element", 1, [301], True), "CROD": ("rod", 1, [451], True),
                   "PLOTEL": ("plot element", 1, [501], False)}


def test_meshio_formats_record_only_cells_off_the_solid(tmp_path):
    mesh = read_mesh(vtu_file(tmp_path))
    got = {e.type: (e.kind, e.count) for e in mesh.unassembled}
    # the boundary face, the solid edge and the solid node carry sets; the others are not the solid's
    assert got == {"quad": ("shell?", 1), "line": ("beam?", 1), "vertex": ("point mass?", 1)}
    for name in ("beam_f4_v22.msh", "beam_f4_v41.msh", "conrod_tet10.msh", "beam_f4.inp", "beam_f4.bdf"):
        assert read_mesh(MESHES / name).unassembled == ()  # boundary groups only


def test_a_body_is_not_built_from_a_partial_model_unless_asked(tmp_path):
    steel = Material(210e9, 0.3, 7850.0)
    mesh = read_mesh(abaqus_deck(tmp_path, assembled=False), materials=steel)
    with pytest.raises(ModelError) as info:
        build_flexible_body(mesh, n_modes=2, geometric=False, preloads=False, stresses=False)
    msg = str(info.value)
    for part in ("1 S8R (shell", "2 CONN3D2 (connector", "1 *TIE", "allow_unassembled=True", "stiffness and mass"):
        assert part in msg, msg
    body = build_flexible_body(mesh, n_modes=2, geometric=False, preloads=False, stresses=False,
                               allow_unassembled=True)
    assert body.mass == pytest.approx(2 * 7850.0)  # the block alone
    assert {e["type"] for e in body.settings["unassembled"]} == {"S8R", "CONN3D2", "*TIE"}
    # a model with assembled shells, masses and springs: reduced whole (stage 2), its solid part on request
    full = read_mesh(abaqus_deck(tmp_path))
    whole = build_flexible_body(full, n_modes=2, geometric=False, preloads=False, stresses=False,
                                allow_unassembled=True)
    assert whole.mass == pytest.approx(full.summary()["mass"], rel=1e-12) and whole.mass > 2 * 7850.0
    body = build_flexible_body(full.solid_only(), n_modes=2, geometric=False, preloads=False, stresses=False,
                               allow_unassembled=True)
    assert body.mass == pytest.approx(2 * 7850.0)
    # only non-structural entries: built without the option
    plot_only = tmp_path / "plot.bdf"
    text = nastran_deck(tmp_path).read_text()
    keep = [ln for ln in text.splitlines() if not ln.startswith(("CQUAD4", "CBAR", "CONM2", "RBE2", "CELAS2", "CROD"))]
    plot_only.write_text("\n".join(keep) + "\n")
    assert build_flexible_body(read_mesh(plot_only), n_modes=2, geometric=False, preloads=False,
                               stresses=False).mass == pytest.approx(2 * 7850.0)


def test_info_lists_and_modes_refuses_the_unassembled_elements(tmp_path, capsys):
    path = abaqus_deck(tmp_path, assembled=False)
    assert main(["info", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"type": "CONN3D2", "kind": "connector", "count": 2} in out["unassembled"]
    assert any("1 S8R (shell" in w for w in out["warnings"])
    assert main(["info", str(path)]) == 0
    assert "unassembled  S8R (shell): 1, CONN3D2 (connector): 2" in capsys.readouterr().out
    assert main(["modes", str(path), "-n", "2"]) == 1
    err = capsys.readouterr().err
    assert "1 S8R (shell" in err and "--allow-unassembled" in err
    assert main(["modes", str(path), "-n", "2", "--allow-unassembled"]) == 0
    assert "mode" in capsys.readouterr().out
