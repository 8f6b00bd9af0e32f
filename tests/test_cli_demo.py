"""`flexmb demo`: the flexible slider-crank (mesh -> modes -> simulation -> plot -> ParaView) and the
15-link chain, run short here (the full demo is the slow test at the end)."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import flexmb as fm
from flexmb.cli import main


def test_slider_crank_demo_writes_everything_and_reads_the_first_maximum_from_the_dense_output(
        tmp_path, capsys, monkeypatch):
    """One short run of the default demo (p = 3, h = 1e-3): every file written and named, the units, the
    ParaView times; and the first maximum.  At h = 1e-3 the nodes are 0.125 rad of crank apart: the node
    values put the first maximum at 0.00956 (0.749 rad), 2 % low; the demo reads it from the order-4 dense
    output between the nodes, 0.009722 at 0.697 rad, the value of h = 2e-4 (0.009721, benchmarks/README.md
    "make demo").

    The demo reduces the rod's mesh afresh (``cache=False``: it shows mesh -> modes), ~4.5 s of CPU; here
    the same body comes from the catalog's cache (the same build, keyed by the mesh's hash, the arguments
    and flexmb.fe's sources; built and cached once per machine, as for test_catalog_flex's ``rod``, where
    the build and the cache are tested)."""
    from flexmb.catalog import flexible as cf

    build = cf.slider_crank_rod_data
    calls = []

    def cached(*args, **kwargs):
        calls.append(kwargs.pop("cache", True))
        return build(*args, **kwargs, cache=True)

    monkeypatch.setattr(cf, "slider_crank_rod_data", cached)
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--t-end", "0.02", "--every", "4"]) == 0
    text = capsys.readouterr().out
    for name in ("slider_crank.npz", "x3_rod.npz", "midpoint_deflection.png", "paraview/slider_crank.pvd",
                 "rod_modes/modes.pvd"):
        assert (out / name).is_file(), name
        assert str(out / name) in text, name  # printed where it went
    assert re.search(r"mesh .*x3_rod_hex20\.inp : 1533 nodes, 288 hexahedron20; mass 0\.075566 kg", text)
    assert "[rad]" in text and "[m]" in text and "[Pa]" in text  # units
    sol = fm.Solution.load(out / "slider_crank.npz")
    assert sol.t[-1] == pytest.approx(0.02) and sol.meta["h"] == 1e-3 and sol.meta["time_element"] == 3
    times = [float(d.get("timestep")) for d in ET.parse(out / "paraview" / "slider_crank.pvd").getroot().iter("DataSet")]
    expect = sol.t[[0, 4, 8, 12, 16, 20]]
    # one rod file and one rigid-bodies file per written time, ending at the last time
    assert times == pytest.approx(np.repeat(expect, 2).tolist(), abs=0)
    m = re.search(r"first maximum ([\d.]+) at crank angle ([\d.]+) rad", text)
    assert m and float(m.group(1)) == pytest.approx(0.009721, abs=1e-5) and float(m.group(2)) == pytest.approx(0.698, abs=0.01)
    assert "accuracy of the default step" in text  # stated for the defaults (only: run() sets args.defaults)
    assert calls == [False]  # the demo itself asks for a fresh reduction


def test_chain_demo_is_still_there(tmp_path, capsys):
    assert main(["demo", "chain", "--out", str(tmp_path), "--t-end", "0.02"]) == 0
    text = capsys.readouterr().out
    assert "15-link chain" in text and (tmp_path / "chain15.npz").is_file() and (tmp_path / "energy.png").is_file()


@pytest.mark.parametrize("args, message", [
    (["--every", "0"], "flexmb demo: error: --every=0 must be >= 1"),
    (["chain", "--h", "-1"], "flexmb demo: error: --h=-1.0 must be > 0 [s]"),
])
def test_bad_demo_options_are_one_line(args, message, tmp_path, capsys):
    assert main(["demo", *args, "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.splitlines() == [message]
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_full_demo_reproduces_the_x3_first_maximum(tmp_path, capsys):
    """The default demo (3 crank revolutions): the first maximum of the rod mid-point deflection / L
    is the X3 value of stiffening='full' with the bending + axial rod (0.00972, case_x3's docstring;
    Meijaard 0.00976)."""
    assert main(["demo", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    m = re.search(r"first maximum ([\d.]+) at crank angle ([\d.]+) rad", text)
    assert m and float(m.group(1)) == pytest.approx(0.00972, abs=5e-5) and 0.55 < float(m.group(2)) < 0.7
