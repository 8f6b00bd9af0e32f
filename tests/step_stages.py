"""Runs with replaced step stages (:class:`flexmb.dynamics.step.advance.Stages`, the documented contract
through which tests steer or observe the solver instead of patching module globals)."""
from __future__ import annotations

from flexmb.dynamics.simulate import Run, SimulationOptions
from flexmb.dynamics.step.advance import STAGES, Stages


def simulate_with(model, t_end: float, h: float, p: int = 1, options: SimulationOptions | None = None, **stages):
    """A fixed-step run like :func:`flexmb.simulate` whose step uses the given stages (``predict=``,
    ``rotations=``, ``newton=``, ``refusal=``; the others the run's own); its Solution."""
    run = Run.start(model, t_end, h, p, 0.0, options or SimulationOptions(), Stages(**stages))
    return run.go(show_progress=False)


__all__ = ["STAGES", "Stages", "simulate_with"]
