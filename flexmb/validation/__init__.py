"""Validation harness: discover benchmark cases, run them, judge their metrics, write tables and reports.

A case is a Python file ``flexmb/validation/cases/case_*.py`` that defines, at module level::

    CASE = dict(id="R1", title="IFToMM A01 simple pendulum",
                source="full citation of the reference values", slow=False)

    def run(ctx):
        # ctx.out_dir: pathlib.Path for PNG figures, or None; ctx.fast: bool; ctx.logger
        return [dict(name="P(0.5 s) x", value=x, reference=-0.391049, tolerance=1e-3, kind="abs")]

``run`` returns :class:`Metric` objects or dicts with the same fields. How a metric passes:

====== ===========================================================================
kind   passes when
====== ===========================================================================
rel    ``|value - reference| <= tolerance * |reference|``
abs    ``|value - reference| <= tolerance``
max    ``value <= tolerance`` (``reference`` is for information and may be None)
min    ``value >= tolerance`` (``reference`` is for information and may be None)
bool   ``value`` is truthy
====== ===========================================================================

A NaN value fails. A case that raises, or returns no metrics, fails with the error in its result;
the run goes on with the next case.

Modules: :mod:`~flexmb.validation.metrics` (:class:`Metric` and its kinds),
:mod:`~flexmb.validation.registry` (discovering, loading and running cases),
:mod:`~flexmb.validation.report` (tables, JSON, report, README table); every public name is
re-exported here. The shipped cases are in ``flexmb/validation/cases``.
"""
from __future__ import annotations

from flexmb.validation.metrics import KINDS, Metric
from flexmb.validation.registry import (
    ENV_CASES_DIR,
    CaseContext,
    CaseResult,
    CaseSpec,
    default_cases_dir,
    discover_cases,
    run_case,
    run_cases,
)
from flexmb.validation.report import (
    MARKER_END,
    MARKER_START,
    format_table,
    markdown_table,
    readme_paths,
    results_to_json,
    update_readme,
    write_json,
    write_report,
)

__all__ = [
    "KINDS", "Metric", "CaseSpec", "CaseContext", "CaseResult", "default_cases_dir", "discover_cases",
    "run_case", "run_cases", "results_to_json", "write_json", "format_table", "markdown_table", "write_report",
    "update_readme", "readme_paths", "MARKER_START", "MARKER_END", "ENV_CASES_DIR",
]
