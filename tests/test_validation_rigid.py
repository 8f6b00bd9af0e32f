"""The method and rigid-multibody validation cases (validation/case_m*.py, case_r*.py) pass.

The default run executes every case in fast mode (``ctx.fast``: shorter spans, same metrics; for
the slow case R4 this is its 0.7 s metric subset); the full runs, including the slow cases, are
marked ``slow`` (``pytest -m slow``, ``make validate``).
"""
from __future__ import annotations

import pytest

from flexmb import validation

FAST = ["M1", "M2", "M3", "R1", "R2", "R3", "R4", "R5", "R6", "R7", "I2", "I3", "I4", "I5"]
ALL = FAST + ["R1-2000"]


@pytest.fixture(scope="module")
def specs():
    return validation.discover_cases()


def check(specs, case_id: str, fast: bool) -> None:
    assert case_id in specs, f"validation case {case_id} not found; cases: {list(specs)}"
    result = validation.run_case(specs[case_id], fast=fast)
    assert result.error is None, f"{case_id} raised {result.error}\n{result.traceback}"
    failed = [f"{m.name} = {m.value!r} (reference {m.reference!r}, {m.kind} {m.tolerance!r})"
              for m in result.metrics if not m.passed]
    assert result.metrics and not failed, f"{case_id} failed metrics: {failed}"


def test_case_ids_and_slow_flags(specs):
    for case_id in ALL:
        assert case_id in specs
        assert specs[case_id].source and specs[case_id].title
    assert {c for c in ALL if specs[c].slow} == {"R1-2000", "R4", "I2"}


@pytest.mark.parametrize("case_id", FAST)
def test_case_fast(specs, case_id):
    check(specs, case_id, fast=True)


@pytest.mark.slow
@pytest.mark.parametrize("case_id", ALL)
def test_case_full(specs, case_id):
    check(specs, case_id, fast=False)
