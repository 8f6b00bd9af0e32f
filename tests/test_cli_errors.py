"""The command line speaks in one line: bad input exits 2 with the library's message, a failed run
exits 1, --version answers, and --help imports neither numpy nor the package's engine."""
from __future__ import annotations

import subprocess
import sys

import pytest

from flexmb.cli import main


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "flexmb", *args], capture_output=True, text=True)


@pytest.mark.parametrize("args, message", [
    (["demo", "--h", "0"], "flexmb demo: error: --h=0.0 must be > 0 [s]"),
    (["demo", "--t-end", "nan"], "flexmb demo: error: --t-end=nan is not finite; give a finite number [s]"),
    (["demo", "--t-end", "-1"], "flexmb demo: error: --t-end=-1.0 must be > 0 [s]"),
])
def test_bad_demo_values_give_one_line_and_exit_2(args, message, tmp_path):
    out = run_cli(*args, "--out", str(tmp_path))
    assert out.returncode == 2
    assert out.stderr.splitlines() == [message] and out.stdout == ""
    assert not any(tmp_path.iterdir())  # nothing written before the check


def test_library_errors_in_subcommands_end_as_one_line(monkeypatch, capsys):
    import flexmb.cli.demo as demo
    from flexmb.errors import ConvergenceError, ModelError

    def fail(exc):
        def run(args):
            raise exc
        return run

    monkeypatch.setattr(demo, "run", fail(ModelError("Revolute 'pin': stiffness=-1 must be >= 0")))
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == "flexmb demo: error: Revolute 'pin': stiffness=-1 must be >= 0\n"
    monkeypatch.setattr(demo, "run", fail(ConvergenceError("Newton did not converge at t = 0.5 s")))
    assert main(["demo"]) == 1
    assert capsys.readouterr().err == "flexmb demo: error: Newton did not converge at t = 0.5 s\n"


def test_version():
    import flexmb

    out = run_cli("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"flexmb {flexmb.__version__}"


def test_help_imports_neither_numpy_nor_the_engine():
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "flexmb", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "validate" in out.stdout and "--version" in out.stdout
    modules = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    heavy = {m for m in modules if m.split(".")[0] in ("numpy", "scipy", "meshio", "matplotlib")
             or m.startswith(("flexmb.model", "flexmb.dynamics", "flexmb.fe", "flexmb.cli.demo"))}
    assert "flexmb.cli" in modules and not heavy, sorted(heavy)[:5]


def test_subcommand_help_still_lists_its_arguments():
    out = run_cli("demo", "--help")
    assert out.returncode == 0 and "--t-end" in out.stdout and "--out" in out.stdout


def test_lazy_package_attributes():
    import flexmb as fm

    for name in fm.__all__:
        assert getattr(fm, name) is not None
    from flexmb import Model, Solution, simulate  # noqa: F401

    assert "simulate" in dir(fm)
    with pytest.raises(AttributeError, match="module 'flexmb' has no attribute 'Modle'"):
        fm.Modle  # noqa: B018
