"""The FE/modal validation cases (F1-F9, X5, X7, X8) run through the harness and pass."""
from __future__ import annotations

import pytest

from flexmb import validation


@pytest.fixture(scope="module")
def specs():
    return validation.discover_cases()


def _check(specs, case_id, fast):
    result = validation.run_case(specs[case_id], fast=fast)
    assert result.error is None, result.traceback
    failed = [(m.name, m.value, m.reference, m.tolerance) for m in result.metrics if not m.passed]
    assert result.metrics and not failed, failed


@pytest.mark.parametrize("case_id", ["F2", "F3", "F4", "F5", "F6", "F8", "F9", "X5"])
def test_case_fast(specs, case_id):
    _check(specs, case_id, fast=True)


def test_f1_fast(specs):
    _check(specs, "F1", fast=True)


@pytest.mark.slow
@pytest.mark.parametrize("case_id", ["F1", "F2", "F3", "F4", "F7", "X5", "X7", "X8"])
def test_case_full(specs, case_id):
    _check(specs, case_id, fast=False)


def test_f1_hex20_beam_quick():
    """F1's beam at one mesh level (the full case runs three levels of three element types)."""
    import sys
    from pathlib import Path

    import numpy as np
    from flexmb.validation.cases import case_f1
    mesh = case_f1.structured_box(case_f1.LENGTHS, (20, 4, 2), "hexahedron20", material=case_f1.STEEL)
    f = case_f1.beam_frequencies(mesh)
    eb, delta = case_f1.euler_bernoulli(), case_f1.timoshenko_delta()
    for bc in ("cantilever", "free"):
        assert np.all(np.abs(f[bc] / eb[bc] - 1.0) <= 0.01 + delta[bc]), (bc, f[bc] / eb[bc] - 1.0)
