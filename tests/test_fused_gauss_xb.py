"""B's origins at the Gauss points (the element moments of the node reactions) from the fused evaluator's
compiled kernel, with modal bodies too (before: the general evaluator's attachments, 0.1-0.2 ms per X3
element): bit for bit the general evaluator's, rigid and modal sides."""
import numpy as np
import pytest

from flexmb.dynamics.simulate import Run, SimulationOptions
from flexmb.dynamics.solve.evaluation import make_layout
from flexmb.dynamics.solve.fused import FusedEvaluator
from flexmb.validation.cases import case_x3


@pytest.mark.parametrize("stiffening", ["none", "full"])
def test_modal_gauss_origins_equal_the_general_ones(stiffening, monkeypatch):
    model = case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, stiffening, case_x3.rod_data())
    run = Run.start(model, 0.01, 1e-3, 2, 0.0, SimulationOptions())
    assert isinstance(run.system.evaluator, FusedEvaluator) and run.system.evaluator.nbm == 1
    for _ in range(2):
        run.step()
    piece = run.solve_element(run.st, 1e-3, run.w, run.prev).pieces[0]
    lay = make_layout(run.cm, 2, run.selection)
    general = run.system.general.gauss_xb(run.system, piece.start, piece.h, piece.U, lay)

    def no_general(*a, **k):
        raise AssertionError("the general evaluator's attachments were asked")

    monkeypatch.setattr(run.system.general, "gauss_xb", no_general)
    fused = run.system.gauss_xb(piece.start, piece.h, piece.U, lay)
    assert fused.shape == (run.cm.nj, 2, 3)
    assert np.array_equal(fused, general)
    # the joints with B on the modal rod and on rigid bodies are both among them
    kinds = {run.cm.groups[run.cm.group_of[b]].kind for b in run.cm.jnt_b if b < run.cm.nb}
    assert kinds == {"rigid", "flexible"}
