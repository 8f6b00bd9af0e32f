"""`flexmb info`: text and JSON summaries, materials from file or --material, errors as exit codes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flexmb.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def test_info_json_with_material_from_file(capsys):
    assert main(["info", str(DATA / "two_materials.inp"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_nodes"] == 13 and out["cells"] == {"hexahedron": 2}
    assert out["node_sets"]["TIP"] == 4 and out["element_sets"]["BOTH"] == 2
    assert out["volume"] == pytest.approx(2.0)
    assert out["mass"] == pytest.approx(2700.0 + 7850.0)  # two materials, one unit cube each
    assert out["bounding_box"] == {"lo": [0.0, 0.0, 0.0], "hi": [2.0, 1.0, 1.0]}
    assert len(out["warnings"]) == 1 and "ids 99" in out["warnings"][0]


def test_info_text_with_command_line_material(capsys):
    assert main(["info", str(ROOT / "meshes" / "beam_hex20.msh"), "--material", "210e9", "0.3", "7850", "--units", "SI"]) == 0
    out = capsys.readouterr().out
    assert "hexahedron20: 160" in out
    assert "root (" in out and "tip (" in out
    assert "units        SI" in out
    mass = 7850.0 * 1.0 * 0.05 * 0.05
    assert f"mass         {mass:.6g}" in out
    assert "checks       ok" in out


def test_info_without_material_reports_unknown_mass(capsys):
    assert main(["info", str(ROOT / "meshes" / "beam_f4.vtu")]) == 0
    out = capsys.readouterr().out
    assert "mass         unknown" in out and "--material" in out


@pytest.mark.parametrize(
    "args, message",
    [
        ([str(DATA / "truncated_beam.bdf")], "truncated_beam.bdf, line 300 (end of file): expected an ENDDATA card"),
        (["nope.msh"], "does not exist"),
        ([str(DATA / "two_materials.inp"), "--material", "-1", "0.3", "1"], "`E` = -1.0 must be > 0"),
    ],
)
def test_info_errors_exit_1_with_message(capsys, args, message):
    assert main(["info", *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("flexmb info: ") and message in err
