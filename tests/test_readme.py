"""The README's claims match behaviour: the complete example prints what its comment says, the demo is
the flexible slider-crank (the 15-link chain stays as `flexmb demo chain`), and the validation count matches `flexmb validate --list`."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_complete_example_prints_the_commented_value(tmp_path, monkeypatch):
    section = README.split("## A complete example", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    comment = re.search(r'print\(sol\.body\("bob"\)\.position\[-1\]\)\s+# \[([^\]]*)\]', code).group(1)
    expected = np.array(comment.split(), float)
    monkeypatch.chdir(tmp_path)  # the example writes pendulum.npz, pendulum_csv/, pendulum_energy.png
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = np.array(out.getvalue().splitlines()[0].strip("[]").split(), float)
    np.testing.assert_allclose(printed, expected, rtol=0, atol=5e-9)  # the comment shows every printed digit
    exact = np.array(re.search(r"exact: ([-\d.]+), ([-\d.]+), 0", code).groups(), float)
    assert np.abs(printed[:2] - exact).max() < 5e-6  # and the method is that close to the exact solution
    assert (tmp_path / "pendulum.npz").is_file() and (tmp_path / "pendulum_csv" / "energy.csv").is_file()


def test_demo_is_the_flexible_slider_crank_and_the_chain_stays():
    from flexmb.catalog.rigid import chain15_model

    assert "15-link chain" in README and len(chain15_model().bodies) == 15
    assert "flexible slider-crank" in README.split("make test", 1)[0]  # the quick start's demo
    import flexmb.cli.demo as demo

    assert "15-link chain" in demo.__doc__ and "flexible slider-crank" in demo.__doc__
    assert sorted(demo.DEFAULTS) == ["chain", "slider-crank"]


def test_validation_count_matches_validate_list():
    from flexmb import validation

    n = len(validation.discover_cases(validation.default_cases_dir()))
    assert f"`flexmb validate --list` lists {n}\ncases" in README
