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
