"""The package imports, exposes its error hierarchy, and its CLI answers --help."""
import subprocess
import sys

import flexmb


def test_error_hierarchy():
    assert issubclass(flexmb.ModelError, flexmb.FlexmbError)
    assert issubclass(flexmb.ModelError, ValueError)
    assert issubclass(flexmb.ConvergenceError, RuntimeError)


def test_cli_help():
    out = subprocess.run([sys.executable, "-m", "flexmb", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "validate" in out.stdout
