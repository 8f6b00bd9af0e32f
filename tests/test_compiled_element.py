"""The compiled element of a rigid model (flexmb/dynamics/step/compiled_element.py): chosen when a run of the
default stages starts, it returns the predictor, the iterate and the end node of the stages one by one bit
for bit (every joint type, drives, springs, dampers, loads: test_fused's models; the IFToMM pendulum; a
chain at p = 1, 2, 3), answers for every plain warm element, and leaves the rest to the stages one by one."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.simulate import Run
from flexmb.dynamics.step.advance import STAGES, Stages
from flexmb.dynamics.step.compiled_element import RigidElement
from test_fused import MODELS
from test_fused_newton import _chain, _iftomm_pendulum


class _Counted:
    """The run's compiled element, counting its calls and its answers."""

    def __init__(self, element):
        self.element, self.calls, self.answers = element, 0, 0

    def __call__(self, *args):
        self.calls += 1
        out = self.element(*args)
        self.answers += out is not None
        return out


def _both(model, t_end, h, p):
    """The solution with the run's default stages (its compiled element counted) and with the stages one
    by one (``Stages()``), and the counter."""
    run = Run.start(model, t_end, h, p, 0.0, fm.SimulationOptions())
    assert isinstance(run.stages.element, RigidElement)
    counted = _Counted(run.stages.element)
    run.stages = replace(run.stages, element=counted)
    fast = run.go(show_progress=False)
    one = Run.start(model, t_end, h, p, 0.0, fm.SimulationOptions(), stages=Stages())
    assert one.stages.element is None
    return fast, one.go(show_progress=False), counted


def _same(a, b):
    for name in ("body_position", "body_rotation", "body_velocity", "body_angular_velocity", "t_internal"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for j in a.joint_names:
        for q in ("force", "moment", "rel_position"):
            assert np.array_equal(getattr(a.joint(j), q), getattr(b.joint(j), q)), (j, q)
    for k in ("iterations", "factorizations", "residual"):
        assert np.array_equal(a.stats[k], b.stats[k]), k


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_bit_for_bit(name):
    """Every joint type, drives, springs and dampers, point loads, the ground on either side: the same
    bits as the stages one by one, the compiled element answering for most warm elements."""
    fast, one, counted = _both(MODELS[name](), 0.2, 0.01, 2)
    _same(fast, one)
    assert counted.calls == len(fast.stats["iterations"]) - 1  # every element after the first
    assert counted.answers >= 15, (counted.calls, counted.answers)


@pytest.mark.parametrize("n, p, h", [(10, 1, 1e-3), (3, 3, 5e-3), (5, 2, 5e-3)])
def test_chains_bit_for_bit(n, p, h):
    fast, one, counted = _both(_chain(n), 40 * h, h, p)
    _same(fast, one)
    assert counted.answers >= 30


def test_pendulum_bit_for_bit():
    """IFToMM A01 over 10 s, p = 2, h = 1/32 (the performance target's run): the compiled element answers
    for all but the first elements (its few pivots failing the kept-pivot test are re-pivoted and solved by
    the compiled loop again: one element of the general loop in the run, the first)."""
    fast, one, counted = _both(_iftomm_pendulum(), 10.0, 1 / 32, 2)
    _same(fast, one)
    assert counted.answers >= 310, counted.answers


def test_not_chosen_where_it_does_not_apply():
    """A run given its own stages, the consistent transport of the multipliers (no compiled node stage for
    its end values), a modal body and a body without joints keep the stages one by one."""
    from flexmb.fe.mesh.structured import structured_box
    from flexmb.fe.reduction.body_data import build_flexible_body

    opts = fm.SimulationOptions()
    assert Run.start(_chain(3), 0.05, 0.01, 2, 0.0, opts, stages=STAGES).stages.element is None
    consistent = fm.TimeElement.of_order(3, transport="consistent")
    assert Run.start(_chain(3), 0.05, 0.01, consistent, 0.0, opts).stages.element is None
    assert isinstance(Run.start(_chain(3), 0.05, 0.01, 3, 0.0, opts).stages.element, RigidElement)
    mesh = structured_box((1.0, 0.02, 0.02), (4, 1, 1), "hexahedron", origin=(0, -0.01, -0.01),
                          material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    data = build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=2, geometric=False, preloads=False,
                               stresses=False)
    bar = fm.FlexibleBody("bar", data, stiffening="none")
    modal = fm.Model([bar], [fm.Revolute("pin", "ground", ("bar", "xmin"), axis=(0, 0, 1))],
                     [fm.Gravity((0, -9.81, 0))])
    assert Run.start(modal, 0.05, 0.01, 2, 0.0, opts).stages.element is None
    free = fm.Model([fm.RigidBody("b", mass=1.0, inertia=(1, 1, 1))], [], [fm.Gravity((0, -9.81, 0))])
    assert Run.start(free, 0.05, 0.01, 2, 0.0, opts).stages.element is None
