"""Validation harness: discovery, metric kinds, failing and raising cases, JSON, report, README table, CLI."""
from __future__ import annotations

import argparse
import json
import math

from pathlib import Path

import pytest

from flexmb import validation
from flexmb.cli import validate as cli_validate
from flexmb.validation import MARKER_END, MARKER_START, Metric

PASSING = '''
CASE = dict(id="T1", title="passing case", source="Textbook, eq. (1)", slow=False)

def run(ctx):
    if ctx.out_dir is not None:
        from matplotlib.figure import Figure
        ax = Figure().subplots()
        ax.plot([0, 1], [0, 1])
        ax.figure.savefig(ctx.out_dir / "line.png")
    return [
        dict(name="period [s]", value=2.36785, reference=2.3678419476, tolerance=1e-4, kind="rel"),
        dict(name="x(10 s) [m]", value=-0.2750875, reference=-0.275087, tolerance=1e-3, kind="abs"),
        dict(name="ran", value=True, kind="bool"),
        dict(name="fast flag", value=float(ctx.fast), reference=None, tolerance=0.0, kind="min"),
    ]
'''

FAILING = '''
from flexmb.validation import Metric
CASE = dict(id="T2", title="failing case", source="Paper | with a pipe", slow=True)

def run(ctx):
    return [Metric("energy drift [J]", 1e-3, None, 1e-6, "max"),
            Metric("ok", 1.0, 1.0, 0.0, "abs")]
'''

RAISING = '''
CASE = dict(id="T10", title="raising case", source="nowhere")

def run(ctx):
    raise RuntimeError("solver exploded at t = 0.3 s")
'''


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A fake repository root with validation/ holding three cases and two READMEs with markers."""
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the CLI sets it by default; keep the change local to the test
    cases = tmp_path / "validation"
    cases.mkdir()
    (cases / "case_pass.py").write_text(PASSING)
    (cases / "case_fail.py").write_text(FAILING)
    (cases / "case_raise.py").write_text(RAISING)
    (cases / "helper.py").write_text("raise RuntimeError('helpers are not cases')\n")
    readme = f"# Project\n\nintro\n\n{MARKER_START}\nold table\n{MARKER_END}\n\ntrailer\n"
    (tmp_path / "README.md").write_text(readme)
    (cases / "README.md").write_text(readme.replace("\n", "\r\n"))
    return tmp_path


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    cli_validate.add_arguments(parser)
    return cli_validate.run(parser.parse_args(list(argv)))


@pytest.mark.parametrize(
    "metric, passed",
    [
        (Metric("a", 1.05, 1.0, 0.1, "rel"), True),
        (Metric("a", 1.2, 1.0, 0.1, "rel"), False),
        (Metric("a", -1.05, -1.0, 0.1, "rel"), True),
        (Metric("a", 0.0, 0.0, 0.1, "rel"), True),
        (Metric("a", 1.0005, 1.0, 1e-3, "abs"), True),
        (Metric("a", 1.1, 1.0, 1e-3, "abs"), False),
        (Metric("a", 1e-7, None, 1e-6, "max"), True),
        (Metric("a", 1e-5, 0.0, 1e-6, "max"), False),
        (Metric("a", 3.0, None, 2.0, "min"), True),
        (Metric("a", 1.0, None, 2.0, "min"), False),
        (Metric("a", True, kind="bool"), True),
        (Metric("a", 0, kind="bool"), False),
        (Metric("a", math.nan, 1.0, 1.0, "abs"), False),
        (Metric("a", math.nan, None, 1.0, "max"), False),
        (Metric("a", math.nan, None, 1.0, "min"), False),
        (Metric("a", math.nan, kind="bool"), False),
        (Metric("a", None, None, 1.0, "max"), False),
    ],
)
def test_metric_kinds(metric, passed):
    assert metric.passed is passed


def test_metric_input_errors():
    with pytest.raises(ValueError, match="kind"):
        Metric("a", 1.0, 1.0, 0.1, "relative")
    with pytest.raises(ValueError, match="reference"):
        Metric("a", 1.0, None, 0.1, "rel")
    with pytest.raises(ValueError, match="tolerance"):
        Metric("a", 1.0, 1.0, None, "abs")
    with pytest.raises(ValueError, match="scalars"):
        Metric("a", [1.0, 2.0], 1.0, 0.1, "abs")


def test_discover_and_run(repo):
    specs = validation.discover_cases(repo / "validation")
    assert list(specs) == ["T1", "T2", "T10"]  # natural order; helper.py is not a case
    assert specs["T2"].slow and not specs["T1"].slow
    results = validation.run_cases(cases_dir=repo / "validation", fast=True)
    by_id = {r.id: r for r in results}
    assert by_id["T1"].passed and all(m.passed for m in by_id["T1"].metrics)
    assert by_id["T1"].metrics[-1].value == 1.0  # ctx.fast reached the case
    assert not by_id["T2"].passed and [m.passed for m in by_id["T2"].metrics] == [False, True]
    assert not by_id["T10"].passed
    assert by_id["T10"].error == "RuntimeError: solver exploded at t = 0.3 s"
    assert "Traceback" in by_id["T10"].traceback
    with pytest.raises(ValueError, match=r"unknown validation case id.*T1"):
        validation.run_cases(["X9"], cases_dir=repo / "validation")


def test_env_var_selects_cases_dir(repo, monkeypatch):
    monkeypatch.setenv("FLEXMB_VALIDATION_DIR", str(repo / "validation"))
    assert validation.default_cases_dir() == repo / "validation"
    assert "T1" in validation.discover_cases()


def test_broken_and_duplicate_cases(repo):
    (repo / "validation" / "case_broken.py").write_text("CASE = dict(id='B1', title='t', source='s')\nimport nonexistent_mod\n")
    specs = validation.discover_cases(repo / "validation")
    assert specs["broken"].load_error.startswith("ModuleNotFoundError")
    [result] = validation.run_cases(["broken"], cases_dir=repo / "validation")
    assert not result.passed and "nonexistent_mod" in result.error
    (repo / "validation" / "case_dup.py").write_text(PASSING)
    with pytest.raises(ValueError, match="T1.*both"):
        validation.discover_cases(repo / "validation")


def test_cli_exit_codes_json_and_report(repo, tmp_path, capsys):
    cases = str(repo / "validation")
    assert cli("T1", "--cases-dir", cases) == 0
    out = capsys.readouterr().out
    assert "period [s]" in out and "2.36784" in out and "rel 0.0001" in out and "pass" in out

    json_path, report = tmp_path / "out" / "v.json", tmp_path / "report"
    assert cli("--cases-dir", cases, "--json", str(json_path), "--report", str(report)) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "failed: T2, T10" in out

    doc = json.loads(json_path.read_text())
    assert [c["id"] for c in doc["cases"]] == ["T1", "T2", "T10"]
    for case in doc["cases"]:
        assert {"id", "passed", "metrics"} <= set(case)
        for m in case["metrics"]:
            assert {"name", "value", "reference", "tolerance", "passed"} <= set(m)
    t1, t2, t10 = doc["cases"]
    assert t1["passed"] is True and t1["metrics"][0] == {
        "name": "period [s]", "value": 2.36785, "reference": 2.3678419476, "tolerance": 1e-4, "kind": "rel", "passed": True,
    }
    assert t2["passed"] is False and t2["metrics"][0]["reference"] is None
    assert t10["passed"] is False and t10["metrics"] == [] and "solver exploded" in t10["error"]

    text = (report / "report.md").read_text()
    assert "| case | quantity | obtained | reference | tolerance | pass |" in text
    assert "![T1 line](T1/line.png)" in text and (report / "T1" / "line.png").is_file()
    assert "Textbook, eq. (1)" in text and "Source: Paper | with a pipe" in text
    assert "RuntimeError: solver exploded" in text and "Traceback" in text


def test_cli_update_readme(repo, capsys):
    cases = repo / "validation"
    (repo / "OTHER.md").write_text("untouched")
    assert cli("T1", "--cases-dir", str(cases), "--update-readme") == 0
    for path in (repo / "README.md", cases / "README.md"):
        text = path.read_bytes().decode()
        nl = "\r\n" if path.parent == cases else "\n"
        before, rest = text.split(MARKER_START)
        block, after = rest.split(MARKER_END)
        assert before == f"# Project{nl}{nl}intro{nl}{nl}"
        assert after == f"{nl}{nl}trailer{nl}"
        assert "old table" not in block and "| T1 | period [s] |" in block and "Last run 20" in block
        assert nl == "\n" or "\r\r" not in text and text.count("\n") == text.count("\r\n")
    # running again replaces the block instead of growing it
    assert cli("T1", "--cases-dir", str(cases), "--update-readme") == 0
    assert (repo / "README.md").read_text().count("| T1 | period [s] |") == 1


def test_update_readme_without_markers_leaves_file(repo, caplog):
    path = repo / "README.md"
    path.write_text("no markers here\n")
    results = validation.run_cases(["T1"], cases_dir=repo / "validation")
    assert validation.update_readme(results, path) is False
    assert path.read_text() == "no markers here\n"
    assert "markers" in caplog.text or "validation-table" in caplog.text


def test_cli_list_and_unknown_id(repo, capsys):
    cases = str(repo / "validation")
    assert cli("--list", "--cases-dir", cases) == 0
    out = capsys.readouterr().out
    assert "T1" in out and "passing case" in out and "Textbook, eq. (1)" in out and "[slow]" in out
    assert cli("T1", "NOPE", "--cases-dir", cases) == 2
    err = capsys.readouterr().err
    assert "NOPE" in err and "T1, T2, T10" in err
    assert cli("--cases-dir", str(repo / "missing")) == 2


def test_registered_in_main_cli(repo, capsys):
    from flexmb.cli import main

    assert main(["validate", "--list", "--cases-dir", str(repo / "validation")]) == 0
    assert "T10" in capsys.readouterr().out


def test_repository_readme_has_markers():
    root = Path(__file__).resolve().parents[1]
    text = (root / "validation" / "README.md").read_text()
    assert text.index(MARKER_START) < text.index(MARKER_END)
    assert "def run(ctx)" in text


def test_nan_and_empty_results_fail_and_json_stays_strict(tmp_path):
    (tmp_path / "case_nan.py").write_text(
        "CASE = dict(id='N1', title='nan', source='s')\n"
        "def run(ctx):\n    return [dict(name='x', value=float('nan'), reference=1.0, tolerance=0.1, kind='abs')]\n"
    )
    (tmp_path / "case_empty.py").write_text("CASE = dict(id='E1', title='empty', source='s')\ndef run(ctx):\n    return []\n")
    results = {r.id: r for r in validation.run_cases(cases_dir=tmp_path)}
    assert not results["N1"].passed and results["N1"].error is None
    assert not results["E1"].passed and "no metrics" in results["E1"].error
    doc = json.loads(validation.write_json(list(results.values()), tmp_path / "v.json").read_text())
    nan_case = next(c for c in doc["cases"] if c["id"] == "N1")
    assert nan_case["metrics"][0]["value"] is None and nan_case["metrics"][0]["passed"] is False
    assert "nan" in validation.format_table(list(results.values()))
