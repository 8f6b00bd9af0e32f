"""The time step's contracts (issue 17 B): a solved element is a named ElementOutcome, the run moves
on its last piece, and the compiled model takes no attribute from outside (its caches live in one
named ModelCache)."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.dynamics.simulate import Run, SimulationOptions
from flexmb.dynamics.step.outcome import ElementOutcome, ElementPiece
from flexmb.dynamics.system import ModelCache, compile_model
from flexmb.validation.cases.case_r1 import exact_positions, pendulum_model


def test_element_outcome_is_named_and_drives_the_run():
    """One pendulum element (p = 2, h = 0.05 s): the outcome's end node lies on the exact motion to the
    nodal order (h^4: measured 1.0e-7 m), its single piece starts at the run's node, and commit moves
    the run there with that piece as the predictor's previous element."""
    h = 0.05
    run = Run.start(pendulum_model(), 1.0, h, 2, 0.0, SimulationOptions())
    st0 = run.st
    out = run.solve_element(run.st, h, run.w, run.prev)
    assert isinstance(out, ElementOutcome) and out.halvings == 0
    assert len(out.pieces) == 1 and isinstance(out.last, ElementPiece)
    assert out.last.start is st0 and out.last.h == h and out.last.result.converged
    assert np.array_equal(out.U, out.last.U)
    assert out.end.t == pytest.approx(h, abs=1e-15)
    assert np.abs(out.end.x[0, :2] - exact_positions(np.array([h]))[0]).max() < 1e-6
    run.commit(out, h)
    assert run.st is out.end and run.prev is out.last and run.n_el == 1


def test_compiled_model_takes_no_attribute_from_outside():
    """Caches are named slots of ``cm.cache``; a module that set its own private attribute on the
    compiled model (``cm._speed_columns = ...``, as eight modules did) now fails loudly."""
    cm = compile_model(pendulum_model())
    assert isinstance(cm.cache, ModelCache)
    with pytest.raises(AttributeError):
        cm._speed_columns = None
    with pytest.raises(AttributeError):
        cm.anything_new = 1
