"""One-off costs of a run's start (issue 17 D, X3's 8-element run to its first maximum, ~40 ms against
Exudyn's 24 ms): what a start looked for again at every run is looked for once."""
from __future__ import annotations

import importlib.abc
import sys

from flexmb.fe import spd_solve


class _Lookups(importlib.abc.MetaPathFinder):
    """Counts the import system's searches for ``threadpoolctl`` (finds nothing itself)."""

    def __init__(self):
        self.n = 0

    def find_spec(self, name, path=None, target=None):
        if name == "threadpoolctl":
            self.n += 1
        return None


def test_blas_threads_looks_for_threadpoolctl_once():
    with spd_solve.blas_threads(1):  # the first call looks
        pass
    finder = _Lookups()
    sys.meta_path.insert(0, finder)
    try:
        for _ in range(3):
            with spd_solve.blas_threads(1):
                pass
    finally:
        sys.meta_path.remove(finder)
    # before: a failed optional import searched the path at every call (0.2-0.5 ms, twice per simulate)
    assert finder.n == 0 or "threadpoolctl" in sys.modules


def test_initial_configuration_and_levers_once_per_compiled_model(monkeypatch):
    """A run's start asked the bodies for their initial configuration three times (compile_model,
    Run.__init__, initial_state) and computed the lever lengths twice: now once per compiled model, the same
    values, the caller's arrays its own."""
    import numpy as np

    from flexmb.dynamics.bodies.modal import FlexibleBodies
    from flexmb.dynamics.bodies.rigid import RigidBodies
    from flexmb.dynamics.simulate import Run, SimulationOptions
    from flexmb.dynamics.solve import scales
    from flexmb.validation.cases import case_x3

    model = case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, "none", case_x3.rod_data())
    calls = {"initial": 0, "levers": 0}
    for cls in (RigidBodies, FlexibleBodies):
        orig = cls.initial

        def counted(self, m, _orig=orig):
            calls["initial"] += 1
            return _orig(self, m)

        monkeypatch.setattr(cls, "initial", counted)
    orig_levers = scales._body_lengths

    def levers(cm):
        calls["levers"] += 1
        return orig_levers(cm)

    monkeypatch.setattr(scales, "_body_lengths", levers)
    run = Run.start(model, 0.01, 1e-3, 2, 0.0, SimulationOptions())
    assert calls == {"initial": 2, "levers": 1}  # once per body type, once
    from flexmb.dynamics.system import initial_configuration

    a, b = initial_configuration(run.cm), initial_configuration(run.cm)
    assert calls["initial"] == 2
    for u, v in zip(a, b):
        assert u is not v and u.flags.writeable and np.array_equal(u, v)
    assert np.array_equal(run.lever, orig_levers(run.cm)) and not run.lever.flags.writeable
