"""A node's values (projection, frames, energies, body-type outputs) are computed once per node and
shared by the energy audit's acceptance check and the record (:meth:`flexmb.dynamics.io.recorder.Recorder.
node_values`), also for modal bodies with acceleration preloads, whose start node carries the node
velocity the marching driver stores for them after the node was recorded (``modal_residual.state_extras``:
that velocity is derived, not state, so it is not part of the caches' key).  Before, every element of such
a model computed the start node's values a second time (the 8-mode flexible pendulum, ``"full"``: 2.0 node
projections per element instead of 1.0)."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.io import recorder
from flexmb.dynamics.node import stage_modal
from test_flexible_dynamics import beam


@pytest.mark.parametrize("stiffening", ["none", "preload", "full"])
def test_node_values_once_per_node(monkeypatch, stiffening):
    data = beam("craig-bampton", n_modes=3)
    body = fm.FlexibleBody("bar", data, stiffening=stiffening)
    model = fm.Model([body], [fm.Revolute("pin", "ground", ("bar", "xmin"), axis=(0, 0, 1))],
                     [fm.Gravity((0.0, -9.81, 0.0))])
    calls = []
    project = recorder.project_node

    def counted(*args, **kw):  # instrumentation only: the same projection, counted
        calls.append(1)
        return project(*args, **kw)

    monkeypatch.setattr(recorder, "project_node", counted)
    staged = stage_modal.ModalPlan.node_values

    def counted_stage(*args, **kw):  # the compiled node stage's projection (None: the general path's)
        out = staged(*args, **kw)
        calls.extend([1] if out is not None else [])
        return out

    monkeypatch.setattr(stage_modal.ModalPlan, "node_values", counted_stage)
    sol = fm.simulate(model, 0.2, 0.02, p=2, show_progress=False)
    nodes = sol.t.size
    assert np.all(sol.stats["retries"] == 0)
    assert len(calls) == nodes, (len(calls), nodes)  # the initial node and one per element
